//! OpenAPI Overlay documents applied to a JSON document.
//!
//! This module owns two things and nothing else:
//!
//! * validating an Overlay document (Overlay Specification 1.0.0, and the 1.1.0 additions)
//!   and reporting every problem with a pointer into the overlay (`#/actions/2/target: …`);
//! * applying its actions, in order, to an OpenAPI document held as a [`Value`].
//!
//! Reading files, choosing which document an overlay applies to (`extends`) and reporting
//! warnings are the caller's business.
//!
//! # Overlay semantics followed
//!
//! Sections are cited by number and name as in the published Overlay 1.0.0 text
//! (spec.openapis.org/overlay/v1.0.0); the 1.1.0 text keeps the same sections.
//!
//! * §4.1 Versions: `major.minor` designates the feature set and the patch is ignored, so
//!   `1.0.x` and `1.1.x` are accepted (1.1 adds `copy`, primitive targets and array
//!   concatenation); any other version is an error.
//! * §4.4.1 Overlay Object: `overlay`, `info` and `actions` are required, `actions` holds at
//!   least one action, and actions apply "in sequential order", each to the result of the
//!   previous ones.
//! * §4.4.2 Info Object: `title` and `version` are required strings.
//! * §4.4.3 Action Object: `target` is a JSONPath query; for `update` it must select
//!   objects or arrays (1.1: or primitives, which the update replaces). `update` merges into
//!   each selected object or is appended to each selected array (1.1: an array update is
//!   concatenated). `remove: true` removes each selected node from the object or array
//!   containing it, and then `update` has no impact; like 1.1.0, `remove` accepts primitive
//!   nodes, and the document root, contained in nothing, is an error. A target that selects
//!   nothing changes nothing; this module returns a warning for it so the caller can tell the
//!   user. How an `update` object merges ("recursively merged … new properties are added")
//!   is spelled out in 1.1.0 §4.4.3, which this module follows for both versions: a
//!   property only in the target is kept, one only in the update is inserted, objects merge
//!   recursively, arrays are concatenated, primitives (null included) replace primitives,
//!   and any other pairing is an error.
//!
//! The JSONPath queries of `target` (and 1.1's `copy`) are parsed and evaluated by
//! [`super::jsonpath`], which returns the *locations* of the selected nodes, because
//! `update` and `remove` change the document in place.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::jsonpath::{PathError, Query, Step, parse_query, select};
use crate::json::{escape_token, kind, type_name};

/// What applying an overlay did, besides changing the document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverlayOutcome {
    /// Things worth telling the user that did not stop the overlay: actions whose target
    /// selected nothing, and `update`s ignored because `remove` was set. Each starts with
    /// the pointer of the action in the overlay document.
    pub warnings: Vec<String>,
    /// Actions whose target selected at least one node and that were therefore applied.
    pub applied: usize,
}

/// An overlay that cannot be applied. Every variant displays as
/// `<pointer in the overlay document>: <problem>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverlayError {
    /// A field of the wrong JSON type (§4.4: the fixed fields' types).
    #[error("{pointer}: must be {expected}, not {found}")]
    WrongType {
        pointer: String,
        expected: &'static str,
        found: &'static str,
    },
    /// A required field is absent (§4.4.1, §4.4.2, §4.4.3).
    #[error("{pointer}: required field is missing; {requirement}")]
    Missing {
        pointer: String,
        requirement: &'static str,
    },
    /// `overlay` names a version this module does not apply (§4.1).
    #[error(
        "{pointer}: unsupported overlay version `{version}`; restmcp applies Overlay 1.0.x and 1.1.x"
    )]
    UnsupportedVersion { pointer: String, version: String },
    /// `actions` is an empty array (§4.4.1: "MUST contain at least one value").
    #[error("{pointer}: must contain at least one action")]
    NoActions { pointer: String },
    /// An action with neither `update` nor `remove: true` (nor, in 1.1, `copy`).
    #[error("{pointer}: the action has neither `update` nor `remove: true`{hint}")]
    NoModifier { pointer: String, hint: &'static str },
    /// `target` (or 1.1's `copy`) is not an RFC 9535 JSONPath query. `position` counts
    /// characters from 1.
    #[error("{pointer}: invalid JSONPath at character {position}: {message}")]
    InvalidJsonPath {
        pointer: String,
        position: usize,
        message: String,
    },
    /// An `update` target selected a primitive value (§4.4.3: targets MUST be objects or
    /// arrays in 1.0).
    #[error(
        "{pointer}: selects the {kind} at {location}; `update` needs objects or arrays \
         (to change a primitive, target the object that contains it)"
    )]
    PrimitiveTarget {
        pointer: String,
        location: String,
        kind: &'static str,
    },
    /// An `update` (or copied) value that does not fit the node it is merged into.
    #[error("{pointer}: {problem}")]
    IncompatibleUpdate { pointer: String, problem: String },
    /// A `remove` target selected the document root, which is contained in nothing.
    #[error("{pointer}: selects the document root, which cannot be removed")]
    RemoveRoot { pointer: String },
    /// 1.1 §4.4.3: nodes selected for `update`/`copy` must be all objects, all arrays or all
    /// primitives.
    #[error("{pointer}: selects {first} and {second} together; an update needs one kind of node")]
    MixedTargets {
        pointer: String,
        first: &'static str,
        second: &'static str,
    },
    /// 1.1 `copy` whose query does not select exactly one node.
    #[error("{pointer}: `copy` must select exactly one node, but `{query}` selects {count}")]
    CopySource {
        pointer: String,
        query: String,
        count: usize,
    },
}

/// True when `value` looks like an OpenAPI Overlay document (has a top-level `overlay`
/// string and `actions`).
pub fn is_openapi_overlay(value: &Value) -> bool {
    value.get("overlay").is_some_and(Value::is_string) && value.get("actions").is_some()
}

/// Validates the overlay document and applies its actions to `document` in order.
///
/// The whole overlay (structure and every JSONPath) is checked before the document is
/// touched. Each selected node is checked before it is changed, but an error raised by a
/// later action (or a later node of the same action) leaves the changes made before it in
/// place: discard `document` when this returns an error.
pub fn apply(document: &mut Value, overlay: &Value) -> Result<OverlayOutcome, OverlayError> {
    let parsed = parse_overlay(overlay)?;
    let mut outcome = OverlayOutcome {
        warnings: parsed.warnings,
        applied: 0,
    };
    for action in &parsed.actions {
        if run_action(document, action, parsed.minor, &mut outcome.warnings)? {
            outcome.applied += 1;
        }
    }
    Ok(outcome)
}

// ---------------------------------------------------------------------------------------
// The overlay document
// ---------------------------------------------------------------------------------------

struct ParsedOverlay<'o> {
    /// 0 for 1.0.x, 1 for 1.1.x.
    minor: u32,
    actions: Vec<Action<'o>>,
    warnings: Vec<String>,
}

struct Action<'o> {
    /// `#/actions/N`.
    pointer: String,
    target_text: &'o str,
    target: Query,
    op: Op<'o>,
}

enum Op<'o> {
    Update(&'o Value),
    Remove,
    Copy { text: &'o str, query: Query },
}

fn parse_overlay(overlay: &Value) -> Result<ParsedOverlay<'_>, OverlayError> {
    let Value::Object(root) = overlay else {
        return Err(wrong_type("#", "an object", overlay));
    };

    // §4.1 and §4.4.1 `overlay`.
    let minor = match root.get("overlay") {
        None => {
            return Err(OverlayError::Missing {
                pointer: "#/overlay".into(),
                requirement: "an overlay states its version, e.g. `overlay: 1.0.0`",
            });
        }
        Some(Value::String(version)) => {
            parse_version(version).ok_or_else(|| OverlayError::UnsupportedVersion {
                pointer: "#/overlay".into(),
                version: version.clone(),
            })?
        }
        Some(other) => return Err(wrong_type("#/overlay", "a string", other)),
    };

    // §4.4.1 `info`, §4.4.2 Info Object.
    match root.get("info") {
        None => {
            return Err(OverlayError::Missing {
                pointer: "#/info".into(),
                requirement: "an overlay needs `info` with `title` and `version`",
            });
        }
        Some(Value::Object(info)) => {
            for (field, requirement) in [
                ("title", "`info` needs a `title` string"),
                ("version", "`info` needs a `version` string"),
            ] {
                let pointer = format!("#/info/{field}");
                match info.get(field) {
                    None => {
                        return Err(OverlayError::Missing {
                            pointer,
                            requirement,
                        });
                    }
                    Some(Value::String(_)) => {}
                    Some(other) => return Err(wrong_type(&pointer, "a string", other)),
                }
            }
            if let Some(description) = info.get("description").filter(|d| !d.is_string()) {
                return Err(wrong_type("#/info/description", "a string", description));
            }
        }
        Some(other) => return Err(wrong_type("#/info", "an object", other)),
    }

    // §4.4.1 `extends`: informative for the caller, only its type is checked here.
    if let Some(extends) = root.get("extends").filter(|e| !e.is_string()) {
        return Err(wrong_type("#/extends", "a string", extends));
    }

    // §4.4.1 `actions`.
    let actions = match root.get("actions") {
        None => {
            return Err(OverlayError::Missing {
                pointer: "#/actions".into(),
                requirement: "an overlay needs a list of `actions`",
            });
        }
        Some(Value::Array(actions)) if actions.is_empty() => {
            return Err(OverlayError::NoActions {
                pointer: "#/actions".into(),
            });
        }
        Some(Value::Array(actions)) => actions,
        Some(other) => return Err(wrong_type("#/actions", "an array", other)),
    };

    let mut warnings = Vec::new();
    let parsed = actions
        .iter()
        .enumerate()
        .map(|(index, action)| parse_action(index, action, minor, &mut warnings))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ParsedOverlay {
        minor,
        actions: parsed,
        warnings,
    })
}

/// `1.0`, `1.0.x`, `1.1` and `1.1.x` give the minor version; anything else is unsupported.
fn parse_version(version: &str) -> Option<u32> {
    let mut parts = version.split('.');
    let major = parts.next()?;
    let minor = parts.next()?;
    let patch = parts.next();
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if major != "1" || !numeric(minor) || parts.next().is_some() {
        return None;
    }
    if patch.is_some_and(|p| !numeric(p)) {
        return None;
    }
    match minor {
        "0" => Some(0),
        "1" => Some(1),
        _ => None,
    }
}

/// §4.4.3 Action Object.
fn parse_action<'o>(
    index: usize,
    action: &'o Value,
    minor: u32,
    warnings: &mut Vec<String>,
) -> Result<Action<'o>, OverlayError> {
    let pointer = format!("#/actions/{index}");
    let Value::Object(fields) = action else {
        return Err(wrong_type(&pointer, "an object", action));
    };
    let target_pointer = format!("{pointer}/target");
    let target_text = match fields.get("target") {
        None => {
            return Err(OverlayError::Missing {
                pointer: target_pointer,
                requirement: "every action has a JSONPath `target`",
            });
        }
        Some(Value::String(text)) => text.as_str(),
        Some(other) => return Err(wrong_type(&target_pointer, "a string", other)),
    };
    let target =
        parse_query(target_text).map_err(|e| invalid_path(e, target_pointer, target_text))?;

    if let Some(description) = fields.get("description").filter(|d| !d.is_string()) {
        return Err(wrong_type(
            &format!("{pointer}/description"),
            "a string",
            description,
        ));
    }
    let remove = match fields.get("remove") {
        None => false,
        Some(Value::Bool(remove)) => *remove,
        Some(other) => return Err(wrong_type(&format!("{pointer}/remove"), "a boolean", other)),
    };
    let copy = match fields.get("copy") {
        Some(Value::String(text)) if minor >= 1 => {
            let query =
                parse_query(text).map_err(|e| invalid_path(e, format!("{pointer}/copy"), text))?;
            Some((text.as_str(), query))
        }
        Some(other) if minor >= 1 => {
            return Err(wrong_type(&format!("{pointer}/copy"), "a string", other));
        }
        _ => None,
    };
    let update = fields.get("update");

    // §4.4.3: `update` (and 1.1's `copy`) have no impact when `remove` is true; 1.1 also
    // gives `copy` precedence over `update`.
    let op = if remove {
        if update.is_some() {
            warnings.push(format!(
                "{pointer}: `update` is ignored because `remove` is true"
            ));
        }
        Op::Remove
    } else if let Some((text, query)) = copy {
        if update.is_some() {
            warnings.push(format!(
                "{pointer}: `update` is ignored because `copy` is set"
            ));
        }
        Op::Copy { text, query }
    } else if let Some(update) = update {
        Op::Update(update)
    } else {
        let hint = if fields.contains_key("copy") {
            " (`copy` needs `overlay: 1.1.0`)"
        } else {
            ""
        };
        return Err(OverlayError::NoModifier { pointer, hint });
    };
    Ok(Action {
        pointer,
        target_text,
        target,
        op,
    })
}

fn wrong_type(pointer: &str, expected: &'static str, found: &Value) -> OverlayError {
    OverlayError::WrongType {
        pointer: pointer.to_string(),
        expected,
        found: kind(found),
    }
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

// ---------------------------------------------------------------------------------------
// Applying actions
// ---------------------------------------------------------------------------------------

/// A step of a location the document owns, so the document can be borrowed mutably.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OwnedStep {
    Key(String),
    Index(usize),
}

/// Runs one action; `Ok(false)` when its target selected nothing.
fn run_action(
    document: &mut Value,
    action: &Action<'_>,
    minor: u32,
    warnings: &mut Vec<String>,
) -> Result<bool, OverlayError> {
    let targets = owned_locations(document, &action.target);
    if targets.is_empty() {
        warnings.push(format!(
            "{}/target: `{}` selects nothing; the action changed nothing",
            action.pointer, action.target_text
        ));
        return Ok(false);
    }
    let target_pointer = format!("{}/target", action.pointer);
    match &action.op {
        Op::Remove => {
            if targets.iter().any(Vec::is_empty) {
                return Err(OverlayError::RemoveRoot {
                    pointer: target_pointer,
                });
            }
            // Reverse document order: descendants before their ancestors, and later array
            // elements before earlier ones, so no removal shifts a location still to come.
            for location in targets.iter().rev() {
                remove_at(document, location);
            }
        }
        Op::Update(update) => {
            let update_pointer = format!("{}/update", action.pointer);
            update_all(
                document,
                &targets,
                update,
                minor,
                &target_pointer,
                &update_pointer,
            )?;
        }
        Op::Copy { text, query } => {
            let sources = owned_locations(document, query);
            let copy_pointer = format!("{}/copy", action.pointer);
            let value = match sources.as_slice() {
                [only] => resolve(document, only).cloned(),
                _ => None,
            };
            let Some(value) = value else {
                return Err(OverlayError::CopySource {
                    pointer: copy_pointer,
                    query: (*text).to_string(),
                    count: sources.len(),
                });
            };
            update_all(
                document,
                &targets,
                &value,
                minor,
                &target_pointer,
                &copy_pointer,
            )?;
        }
    }
    Ok(true)
}

fn update_all(
    document: &mut Value,
    targets: &[Vec<OwnedStep>],
    update: &Value,
    minor: u32,
    target_pointer: &str,
    update_pointer: &str,
) -> Result<(), OverlayError> {
    // Kinds are checked for every target before any is changed.
    let mut first_kind: Option<&'static str> = None;
    for location in targets {
        let Some(node) = resolve(document, location) else {
            continue;
        };
        if minor == 0 && !is_container(node) {
            // 1.0 §4.4.3: "The result of the target JSONPath expression MUST be zero or more
            // objects or arrays (not primitive types or null values)."
            return Err(OverlayError::PrimitiveTarget {
                pointer: target_pointer.to_string(),
                location: describe_location(&pointer_owned(location)),
                kind: type_name(node),
            });
        }
        let node_kind = match node {
            Value::Object(_) => "objects",
            Value::Array(_) => "arrays",
            _ => "primitives",
        };
        match first_kind {
            None => first_kind = Some(node_kind),
            // 1.1 §4.4.3: all objects, all arrays or all primitives.
            Some(first) if first != node_kind && minor >= 1 => {
                return Err(OverlayError::MixedTargets {
                    pointer: target_pointer.to_string(),
                    first,
                    second: node_kind,
                });
            }
            Some(_) => {}
        }
    }
    for location in targets {
        let doc_pointer = pointer_owned(location);
        let Some(node) = resolve_mut(document, location) else {
            continue;
        };
        check_update(node, update, minor, &doc_pointer).map_err(|(sub, problem)| {
            OverlayError::IncompatibleUpdate {
                pointer: format!("{update_pointer}{sub}"),
                problem,
            }
        })?;
        apply_update(node, update, minor);
    }
    Ok(())
}

/// Deepest update nesting merged; deeper is refused instead of risking the stack.
const MAX_MERGE_DEPTH: usize = 256;

/// Whether `update` fits `node`: `Err((pointer below the update, problem))` when not.
fn check_update(
    node: &Value,
    update: &Value,
    minor: u32,
    location: &str,
) -> Result<(), (String, String)> {
    match (node, update) {
        (Value::Object(target), Value::Object(update)) => {
            check_merge(target, update, location, &mut String::new(), 0)
        }
        (Value::Object(_), other) => Err((
            String::new(),
            format!(
                "is {}, but the target at {} is an object and only an object merges into it",
                kind(other),
                describe_location(location)
            ),
        )),
        // §4.4.3: into an array, the update is an entry to append (1.1: or an array to
        // concatenate); anything fits.
        (Value::Array(_), _) => Ok(()),
        // 1.1 §4.4.3: a primitive target is replaced by a primitive update.
        (_, other) if minor >= 1 && is_container(other) => Err((
            String::new(),
            format!(
                "is {}, but the target at {} is a {} and only a primitive value replaces it",
                kind(other),
                describe_location(location),
                type_name(node)
            ),
        )),
        _ => Ok(()),
    }
}

/// 1.1 §4.4.3 merge rules, checked without changing anything. `below` is the pointer from
/// the update's root to the object being checked.
fn check_merge(
    target: &Map<String, Value>,
    update: &Map<String, Value>,
    location: &str,
    below: &mut String,
    depth: usize,
) -> Result<(), (String, String)> {
    if depth > MAX_MERGE_DEPTH {
        return Err((
            below.clone(),
            format!("nests deeper than {MAX_MERGE_DEPTH} levels"),
        ));
    }
    for (key, new) in update {
        let Some(old) = target.get(key) else {
            continue;
        };
        let len = below.len();
        below.push('/');
        below.push_str(&escape_token(key));
        match (old, new) {
            (Value::Object(old), Value::Object(new)) => {
                check_merge(old, new, location, below, depth + 1)?;
            }
            (Value::Array(_), Value::Array(_)) => {}
            (old, new) if !is_container(old) && !is_container(new) => {}
            (old, new) => {
                return Err((
                    below.clone(),
                    format!(
                        "{} cannot be merged into the {} at {} (objects merge into objects, \
                         arrays into arrays, primitives replace primitives)",
                        capitalized(kind(new)),
                        type_name(old),
                        describe_location(&format!("{location}{below}"))
                    ),
                ));
            }
        }
        below.truncate(len);
    }
    Ok(())
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Applies an update that [`check_update`] accepted.
fn apply_update(node: &mut Value, update: &Value, minor: u32) {
    match (node, update) {
        (Value::Object(target), Value::Object(update)) => merge(target, update),
        // 1.1 §4.4.3: an array update is concatenated with each selected array.
        (Value::Array(target), Value::Array(items)) if minor >= 1 => {
            target.extend(items.iter().cloned());
        }
        // 1.0 §4.4.3: "the value of this field MUST be an entry to append to the array".
        (Value::Array(target), entry) => target.push(entry.clone()),
        (node, update) if !is_container(node) && !is_container(update) => {
            *node = update.clone();
        }
        _ => {}
    }
}

/// Merges `update` into `target`; the depth was bounded by [`check_merge`].
fn merge(target: &mut Map<String, Value>, update: &Map<String, Value>) {
    for (key, new) in update {
        match target.get_mut(key) {
            None => {
                target.insert(key.clone(), new.clone());
            }
            Some(old) => match (old, new) {
                (Value::Object(old), Value::Object(new)) => merge(old, new),
                (Value::Array(old), Value::Array(new)) => old.extend(new.iter().cloned()),
                (old, new) => *old = new.clone(),
            },
        }
    }
}

/// §4.4.3 `remove`: the node is removed "from the map or array it is contained in".
fn remove_at(document: &mut Value, location: &[OwnedStep]) {
    let Some((last, parent)) = location.split_last() else {
        return;
    };
    match (resolve_mut(document, parent), last) {
        (Some(Value::Object(map)), OwnedStep::Key(key)) => {
            map.shift_remove(key.as_str());
        }
        (Some(Value::Array(items)), OwnedStep::Index(index)) if *index < items.len() => {
            items.remove(*index);
        }
        _ => {}
    }
}

fn resolve<'v>(document: &'v Value, location: &[OwnedStep]) -> Option<&'v Value> {
    location
        .iter()
        .try_fold(document, |node, step| match (node, step) {
            (Value::Object(map), OwnedStep::Key(key)) => map.get(key),
            (Value::Array(items), OwnedStep::Index(index)) => items.get(*index),
            _ => None,
        })
}

fn resolve_mut<'v>(document: &'v mut Value, location: &[OwnedStep]) -> Option<&'v mut Value> {
    location
        .iter()
        .try_fold(document, |node, step| match (node, step) {
            (Value::Object(map), OwnedStep::Key(key)) => map.get_mut(key),
            (Value::Array(items), OwnedStep::Index(index)) => items.get_mut(*index),
            _ => None,
        })
}

fn owned_locations(document: &Value, query: &Query) -> Vec<Vec<OwnedStep>> {
    select(document, query)
        .into_iter()
        .map(|steps| {
            steps
                .into_iter()
                .map(|step| match step {
                    Step::Key(key) => OwnedStep::Key(key.to_string()),
                    Step::Index(index) => OwnedStep::Index(index),
                })
                .collect()
        })
        .collect()
}

fn pointer_owned(steps: &[OwnedStep]) -> String {
    let mut out = String::new();
    for step in steps {
        out.push('/');
        match step {
            OwnedStep::Key(key) => out.push_str(&escape_token(key)),
            OwnedStep::Index(index) => {
                let _ = write!(out, "{index}");
            }
        }
    }
    out
}

fn describe_location(pointer: &str) -> String {
    if pointer.is_empty() {
        "the document root".to_string()
    } else {
        format!("`{pointer}`")
    }
}

/// `#/actions/N/target: invalid JSONPath at character M: …`.
fn invalid_path(error: PathError, pointer: String, source: &str) -> OverlayError {
    OverlayError::InvalidJsonPath {
        pointer,
        position: error.position(source),
        message: error.message().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::jsonpath::select_pointers;
    use crate::spec::jsonpath::tests::petstore;
    use serde_json::json;

    fn overlay(actions: Value) -> Value {
        json!({
            "overlay": "1.0.0",
            "info": {"title": "Test overlay", "version": "1.0.0"},
            "actions": actions
        })
    }

    fn applied(overlay: &Value) -> (Value, OverlayOutcome) {
        let mut document = petstore();
        match apply(&mut document, overlay) {
            Ok(outcome) => (document, outcome),
            Err(e) => panic!("overlay failed: {e}"),
        }
    }

    fn apply_error(overlay: &Value) -> String {
        let mut document = petstore();
        match apply(&mut document, overlay) {
            Ok(outcome) => panic!("overlay should fail, got {outcome:?}"),
            Err(e) => e.to_string(),
        }
    }

    // ---- Overlay: update ------------------------------------------------------------------

    #[test]
    fn update_merges_objects_recursively() {
        let (document, outcome) = applied(&overlay(json!([{
            "target": "$",
            "update": {
                "info": {"title": "Pets (public)", "contact": {"name": "API team"}},
                "paths": {"/pets": {"get": {"summary": "List pets", "x-rate-limit": 100}}},
                "tags": [{"name": "extra"}]
            }
        }])));
        assert_eq!(
            outcome,
            OverlayOutcome {
                warnings: vec![],
                applied: 1
            }
        );
        // Primitives are replaced, new members are added, the rest is kept.
        assert_eq!(
            document["info"],
            json!({"title": "Pets (public)", "version": "1.0.0", "x-default-tag": "pets",
                   "contact": {"name": "API team"}})
        );
        let get = &document["paths"]["/pets"]["get"];
        assert_eq!(get["summary"], "List pets");
        assert_eq!(get["x-rate-limit"], 100);
        assert_eq!(get["operationId"], "listPets");
        assert_eq!(get["parameters"].as_array().map(Vec::len), Some(2));
        // Arrays are concatenated (Overlay 1.1.0 §4.4.3, which spells out 1.0.0's merge).
        assert_eq!(
            document["tags"],
            json!([{"name": "pets"}, {"name": "admin"}, {"name": "extra"}])
        );
        // Member order is kept and new members go last.
        let keys: Vec<&str> = document["info"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys, ["title", "version", "x-default-tag", "contact"]);
    }

    #[test]
    fn update_appends_to_arrays() {
        let (document, _) = applied(&overlay(json!([
            {"target": "$.paths.*.get.parameters", "update": {"name": "newParam", "in": "query"}},
            {"target": "$.tags", "update": [{"name": "nested"}]},
            {"target": "$.numbers", "update": 6}
        ])));
        assert_eq!(
            document["paths"]["/pets"]["get"]["parameters"][2],
            json!({"name": "newParam", "in": "query"})
        );
        assert_eq!(
            document["paths"]["/pets/{petId}"]["get"]["parameters"][1],
            json!({"name": "newParam", "in": "query"})
        );
        // 1.0.0: the update is *an entry* to append, even when it is an array.
        assert_eq!(document["tags"][2], json!([{"name": "nested"}]));
        assert_eq!(document["numbers"], json!([0, 1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn update_with_null_and_primitives_in_place_of_primitives() {
        let (document, _) = applied(&overlay(json!([{
            "target": "$.paths['/pets/{petId}'].get.parameters[0]",
            "update": {"required": false, "description": null}
        }])));
        assert_eq!(
            document["paths"]["/pets/{petId}"]["get"]["parameters"][0],
            json!({"name": "petId", "in": "path", "required": false, "description": null})
        );
    }

    #[test]
    fn actions_apply_in_order_to_the_previous_result() {
        let (document, outcome) = applied(&overlay(json!([
            {"target": "$.paths['/pets']", "remove": true},
            {"target": "$.paths", "update": {"/pets": {"get": {"operationId": "rebuilt"}}}},
            {"target": "$.paths['/pets'].get", "update": {"summary": "after rebuild"}}
        ])));
        assert_eq!(outcome.applied, 3);
        assert_eq!(
            document["paths"]["/pets"],
            json!({"get": {"operationId": "rebuilt", "summary": "after rebuild"}})
        );
        let keys: Vec<&str> = document["paths"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys, ["/pets/{petId}", "/pets"]);
    }

    // ---- Overlay: remove ------------------------------------------------------------------

    #[test]
    fn remove_object_members() {
        let (document, outcome) = applied(&overlay(json!([
            {"target": "$.paths.*[?@.x-internal == true]", "remove": true},
            {"target": "$.components", "remove": true}
        ])));
        assert_eq!(outcome.applied, 2);
        assert!(document["paths"]["/pets"].get("post").is_none());
        assert!(document["paths"]["/pets/{petId}"].get("delete").is_some());
        assert!(document.get("components").is_none());
        let keys: Vec<&str> = document
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            ["openapi", "info", "tags", "paths", "numbers", "odd keys"]
        );
    }

    #[test]
    fn remove_several_array_elements_at_once() {
        let (document, _) = applied(&overlay(json!([
            {"target": "$.numbers[0,2,4]", "remove": true},
            {"target": "$.paths.*.get.parameters[?@.in == 'query']", "remove": true}
        ])));
        assert_eq!(document["numbers"], json!([1, 3, 5]));
        assert_eq!(document["paths"]["/pets"]["get"]["parameters"], json!([]));
        assert_eq!(
            document["paths"]["/pets/{petId}"]["get"]["parameters"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        // Descending and overlapping selections: the slice walks backwards and the
        // descendant query selects an array and its own elements.
        let (document, _) = applied(&overlay(json!([
            {"target": "$.numbers[::-2]", "remove": true},
            {"target": "$.tags..*", "remove": true}
        ])));
        assert_eq!(document["numbers"], json!([0, 2, 4]));
        assert_eq!(document["tags"], json!([]));
    }

    #[test]
    fn remove_primitive_members_and_whole_subtrees_with_their_children() {
        let (document, _) = applied(&overlay(json!([
            {"target": "$..['operationId', 'tags']", "remove": true}
        ])));
        assert!(document.get("tags").is_none());
        assert_eq!(
            document["paths"]["/pets"]["post"],
            json!({"x-internal": true})
        );
        let (document, _) = applied(&overlay(json!([
            {"target": "$.paths..*", "remove": true}
        ])));
        assert_eq!(document["paths"], json!({}));
    }

    #[test]
    fn remove_wins_over_update_with_a_warning() {
        let (document, outcome) = applied(&overlay(json!([
            {"target": "$.tags", "remove": true, "update": {"name": "ignored"}}
        ])));
        assert!(document.get("tags").is_none());
        assert_eq!(
            outcome.warnings,
            ["#/actions/0: `update` is ignored because `remove` is true"]
        );
        // `remove: false` is as good as absent.
        let (document, _) = applied(&overlay(json!([
            {"target": "$.info", "remove": false, "update": {"x-kept": true}}
        ])));
        assert_eq!(document["info"]["x-kept"], true);
    }

    // ---- The Overlay 1.0.0 specification's examples (§4.5) -----------------------------

    #[test]
    fn spec_example_structured_overlay() {
        let mut document = json!({
            "openapi": "3.1.0",
            "info": {"title": "API", "version": "1"},
            "paths": {"/": {"get": {}}, "/pets": {"get": {"operationId": "pets"}}}
        });
        let outcome = apply(
            &mut document,
            &json!({
                "overlay": "1.0.0",
                "info": {"title": "Structured Overlay", "version": "1.0.0"},
                "actions": [{
                    "target": "$",
                    "update": {
                        "info": {"x-overlay-applied": "structured-overlay"},
                        "paths": {
                            "/": {"summary": "The root resource",
                                  "get": {"summary": "Retrieve the root resource", "x-rate-limit": 100}},
                            "/pets": {"get": {"summary": "Retrieve a list of pets", "x-rate-limit": 100}}
                        },
                        "components": null,
                        "tags": null
                    }
                }]
            }),
        );
        assert_eq!(outcome.map(|o| o.applied), Ok(1));
        assert_eq!(document["info"]["x-overlay-applied"], "structured-overlay");
        assert_eq!(document["paths"]["/"]["summary"], "The root resource");
        assert_eq!(document["paths"]["/pets"]["get"]["operationId"], "pets");
        assert_eq!(document["paths"]["/pets"]["get"]["x-rate-limit"], 100);
    }

    #[test]
    fn spec_example_targeted_and_wildcard_overlays() {
        let (document, outcome) = applied(&overlay(json!([
            {"target": "$.paths['/pets'].get", "update": {"description": "This is the new description"}},
            {"target": "$.paths['/pets/{petId}']",
             "update": {"post": {"description": "An updated description of a child object", "x-safe": false}}},
            {"target": "$.paths.*.get", "description": "Add descriptions to all operations",
             "update": {"x-safe": true}},
            {"target": "$.paths.*.get.parameters[?@.name=='filter' && @.in=='query']",
             "update": {"schema": {"$ref": "#/components/schemas/filterSchema"}}},
            {"target": "$.info", "update": {"title": "Pets, overlaid", "x-overlay": 1}}
        ])));
        assert_eq!(
            outcome,
            OverlayOutcome {
                warnings: vec![],
                applied: 5
            }
        );
        let pets = &document["paths"]["/pets"]["get"];
        assert_eq!(pets["description"], "This is the new description");
        assert_eq!(pets["x-safe"], true);
        assert_eq!(
            pets["parameters"][1]["schema"],
            json!({"$ref": "#/components/schemas/filterSchema"})
        );
        assert_eq!(document["paths"]["/pets/{petId}"]["get"]["x-safe"], true);
        assert_eq!(document["paths"]["/pets/{petId}"]["post"]["x-safe"], false);
        assert_eq!(document["info"]["title"], "Pets, overlaid");
        assert_eq!(document["info"]["version"], "1.0.0");
    }

    #[test]
    fn spec_example_traits() {
        let mut document = json!({
            "openapi": "3.1.0",
            "info": {"title": "API with a paged collection", "version": "1.0.0"},
            "paths": {
                "/items": {"get": {"x-oai-traits": ["paged"], "responses": {"200": {"description": "OK"}}}},
                "/other": {"get": {"responses": {"200": {"description": "OK"}}}}
            }
        });
        let outcome = apply(
            &mut document,
            &overlay(json!([{
                "target": "$.paths[?(@.get['x-oai-traits'][?(@ == 'paged')])].get",
                "update": {"parameters": [{"name": "top", "in": "query"}, {"name": "skip", "in": "query"}]}
            }])),
        );
        assert_eq!(outcome.map(|o| o.applied), Ok(1));
        assert_eq!(
            document["paths"]["/items"]["get"]["parameters"],
            json!([{"name": "top", "in": "query"}, {"name": "skip", "in": "query"}])
        );
        assert!(
            document["paths"]["/other"]["get"]
                .get("parameters")
                .is_none()
        );
        // The 1.0.0 text's own form of this target parses too; on this document it selects
        // nothing (`x-oai-traits` is an array, `.paged` a member name).
        assert_eq!(
            select_pointers(&document, "$.paths.*.get[?@.x-oai-traits.paged]"),
            Ok(vec![])
        );
    }

    // ---- Warnings and outcome -------------------------------------------------------------

    #[test]
    fn zero_matches_are_warnings() {
        let (document, outcome) = applied(&overlay(json!([
            {"target": "$.paths['/nope']", "remove": true},
            {"target": "$.info", "update": {"x-seen": true}},
            {"target": "$.paths.*[?@.x-internal == 'yes']", "update": {"x": 1}}
        ])));
        assert_eq!(document["info"]["x-seen"], true);
        assert_eq!(outcome.applied, 1);
        assert_eq!(
            outcome.warnings,
            [
                "#/actions/0/target: `$.paths['/nope']` selects nothing; the action changed nothing",
                "#/actions/2/target: `$.paths.*[?@.x-internal == 'yes']` selects nothing; the action changed nothing",
            ]
        );
    }

    #[test]
    fn detects_overlay_documents() {
        assert!(is_openapi_overlay(&overlay(json!([]))));
        assert!(is_openapi_overlay(
            &json!({"overlay": "1.0.0", "actions": null})
        ));
        assert!(!is_openapi_overlay(&petstore()));
        assert!(!is_openapi_overlay(&json!({"overlay": 1, "actions": []})));
        assert!(!is_openapi_overlay(&json!({"overlay": "1.0.0"})));
        assert!(!is_openapi_overlay(&json!(["overlay", "actions"])));
    }

    // ---- Errors ---------------------------------------------------------------------------

    #[test]
    fn document_level_errors() {
        assert_eq!(
            apply_error(&json!([])),
            "#: must be an object, not an array"
        );
        assert_eq!(
            apply_error(&json!({"info": {"title": "t", "version": "1"}, "actions": []})),
            "#/overlay: required field is missing; an overlay states its version, e.g. `overlay: 1.0.0`"
        );
        assert_eq!(
            apply_error(&json!({"overlay": 1.0, "info": {}, "actions": []})),
            "#/overlay: must be a string, not a number"
        );
        for version in [
            "2.0.0", "1.2.0", "0.1.0", "1", "1.0.0.0", "1.x", "v1.0.0", "",
        ] {
            let mut document = overlay(json!([{"target": "$", "remove": true}]));
            document["overlay"] = json!(version);
            assert_eq!(
                apply_error(&document),
                format!(
                    "#/overlay: unsupported overlay version `{version}`; restmcp applies Overlay 1.0.x and 1.1.x"
                )
            );
        }
        assert_eq!(
            apply_error(&json!({"overlay": "1.0.0", "actions": []})),
            "#/info: required field is missing; an overlay needs `info` with `title` and `version`"
        );
        assert_eq!(
            apply_error(&json!({"overlay": "1.0.0", "info": "x", "actions": []})),
            "#/info: must be an object, not a string"
        );
        assert_eq!(
            apply_error(&json!({"overlay": "1.0.0", "info": {"version": "1"}, "actions": []})),
            "#/info/title: required field is missing; `info` needs a `title` string"
        );
        assert_eq!(
            apply_error(
                &json!({"overlay": "1.0.0", "info": {"title": "t", "version": 1}, "actions": []})
            ),
            "#/info/version: must be a string, not a number"
        );
        assert_eq!(
            apply_error(&json!({"overlay": "1.0.0", "info": {"title": "t", "version": "1"}})),
            "#/actions: required field is missing; an overlay needs a list of `actions`"
        );
        assert_eq!(
            apply_error(&overlay(json!([]))),
            "#/actions: must contain at least one action"
        );
        assert_eq!(
            apply_error(&overlay(json!({"target": "$"}))),
            "#/actions: must be an array, not an object"
        );
        let mut with_extends = overlay(json!([{"target": "$", "update": {}}]));
        with_extends["extends"] = json!(["./openapi.yaml"]);
        assert_eq!(
            apply_error(&with_extends),
            "#/extends: must be a string, not an array"
        );
        with_extends["extends"] = json!("./openapi.yaml");
        assert_eq!(applied(&with_extends).1.applied, 1);
    }

    #[test]
    fn action_level_errors() {
        assert_eq!(
            apply_error(&overlay(json!(["$.info"]))),
            "#/actions/0: must be an object, not a string"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"update": {}}]))),
            "#/actions/0/target: required field is missing; every action has a JSONPath `target`"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"target": ["$"], "update": {}}]))),
            "#/actions/0/target: must be a string, not an array"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"target": "$.info", "remove": "yes"}]))),
            "#/actions/0/remove: must be a boolean, not a string"
        );
        assert_eq!(
            apply_error(&overlay(
                json!([{"target": "$.info", "description": 3, "remove": true}])
            )),
            "#/actions/0/description: must be a string, not a number"
        );
        assert_eq!(
            apply_error(&overlay(json!([
                {"target": "$.info", "update": {}},
                {"target": "$.info", "description": "nothing to do"}
            ]))),
            "#/actions/1: the action has neither `update` nor `remove: true`"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"target": "$.info", "remove": false}]))),
            "#/actions/0: the action has neither `update` nor `remove: true`"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"target": "$.info", "copy": "$.tags"}]))),
            "#/actions/0: the action has neither `update` nor `remove: true` (`copy` needs `overlay: 1.1.0`)"
        );
    }

    #[test]
    fn invalid_targets_are_reported_before_anything_changes() {
        let mut document = petstore();
        let result = apply(
            &mut document,
            &overlay(json!([
                {"target": "$.info", "update": {"x-changed": true}},
                {"target": "$.info", "update": {}},
                {"target": "$.a[0 x]", "update": {}}
            ])),
        );
        assert_eq!(
            result.map_err(|e| e.to_string()),
            Err(
                "#/actions/2/target: invalid JSONPath at character 7: expected ']', found 'x'"
                    .into()
            )
        );
        assert_eq!(document, petstore(), "nothing was applied");
        assert_eq!(
            apply(
                &mut document,
                &overlay(json!([{"target": "$.paths['/x'", "remove": true}]))
            ),
            Err(OverlayError::InvalidJsonPath {
                pointer: "#/actions/0/target".into(),
                position: 13,
                message: "expected ']'".into(),
            })
        );
    }

    #[test]
    fn update_target_and_type_errors() {
        assert_eq!(
            apply_error(&overlay(
                json!([{"target": "$.info.title", "update": "New title"}])
            )),
            "#/actions/0/target: selects the string at `/info/title`; `update` needs objects or \
             arrays (to change a primitive, target the object that contains it)"
        );
        assert_eq!(
            apply_error(&overlay(
                json!([{"target": "$.paths.*.*.x-internal", "update": {}}])
            )),
            "#/actions/0/target: selects the boolean at `/paths/~1pets/post/x-internal`; `update` \
             needs objects or arrays (to change a primitive, target the object that contains it)"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"target": "$.info", "update": ["x"]}]))),
            "#/actions/0/update: is an array, but the target at `/info` is an object and only an \
             object merges into it"
        );
        assert_eq!(
            apply_error(&overlay(json!([{"target": "$", "update": "x"}]))),
            "#/actions/0/update: is a string, but the target at the document root is an object \
             and only an object merges into it"
        );
        assert_eq!(
            apply_error(&overlay(
                json!([{"target": "$", "update": {"info": {"title": {"text": "x"}}}}])
            )),
            "#/actions/0/update/info/title: An object cannot be merged into the string at \
             `/info/title` (objects merge into objects, arrays into arrays, primitives replace \
             primitives)"
        );
        assert_eq!(
            apply_error(&overlay(
                json!([{"target": "$.paths", "update": {"/pets": ["get"]}}])
            )),
            "#/actions/0/update/~1pets: An array cannot be merged into the object at \
             `/paths/~1pets` (objects merge into objects, arrays into arrays, primitives \
             replace primitives)"
        );
        assert_eq!(
            apply_error(&overlay(
                json!([{"target": "$.info", "update": {"version": null, "title": []}}])
            )),
            "#/actions/0/update/title: An array cannot be merged into the string at \
             `/info/title` (objects merge into objects, arrays into arrays, primitives replace \
             primitives)"
        );
    }

    #[test]
    fn a_failing_update_leaves_its_target_untouched() {
        let mut document = petstore();
        let result = apply(
            &mut document,
            &overlay(json!([{"target": "$.info", "update": {"x-new": 1, "title": {"a": 1}}}])),
        );
        assert!(result.is_err());
        assert!(document["info"].get("x-new").is_none());
    }

    #[test]
    fn remove_of_the_root_is_an_error() {
        assert_eq!(
            apply_error(&overlay(json!([{"target": "$", "remove": true}]))),
            "#/actions/0/target: selects the document root, which cannot be removed"
        );
    }

    // ---- Overlay 1.1 additions ------------------------------------------------------------

    fn overlay_1_1(actions: Value) -> Value {
        let mut document = overlay(actions);
        document["overlay"] = json!("1.1.0");
        document
    }

    #[test]
    fn version_1_1_concatenates_arrays_and_replaces_primitives() {
        let (document, _) = applied(&overlay_1_1(json!([
            {"target": "$.numbers", "update": [6, 7]},
            {"target": "$.tags", "update": {"name": "single"}},
            {"target": "$.paths.*.get.operationId", "update": "renamed"}
        ])));
        assert_eq!(document["numbers"], json!([0, 1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(document["tags"][2], json!({"name": "single"}));
        assert_eq!(document["paths"]["/pets"]["get"]["operationId"], "renamed");
        assert_eq!(
            document["paths"]["/pets/{petId}"]["get"]["operationId"],
            "renamed"
        );
        assert_eq!(
            apply_error(&overlay_1_1(
                json!([{"target": "$.info.title", "update": {"a": 1}}])
            )),
            "#/actions/0/update: is an object, but the target at `/info/title` is a string and \
             only a primitive value replaces it"
        );
        let (document, _) = applied(&overlay_1_1(json!([
            {"target": "$.info.*", "update": "x"}
        ])));
        assert_eq!(
            document["info"],
            json!({"title": "x", "version": "x", "x-default-tag": "x"})
        );
        assert_eq!(
            apply_error(&overlay_1_1(
                json!([{"target": "$['info','tags']", "update": {}}])
            )),
            "#/actions/0/target: selects objects and arrays together; an update needs one kind \
             of node"
        );
    }

    #[test]
    fn version_1_1_copy() {
        let (document, outcome) = applied(&overlay_1_1(json!([
            {"target": "$.paths", "update": {"/other-pets": {}}},
            {"target": "$.paths['/other-pets']", "copy": "$.paths['/pets']"},
            {"target": "$.paths['/pets']", "remove": true}
        ])));
        assert_eq!(outcome.applied, 3);
        assert_eq!(
            document["paths"]["/other-pets"],
            petstore()["paths"]["/pets"]
        );
        assert!(document["paths"].get("/pets").is_none());
        assert_eq!(
            apply_error(&overlay_1_1(
                json!([{"target": "$.info", "copy": "$.paths.*"}])
            )),
            "#/actions/0/copy: `copy` must select exactly one node, but `$.paths.*` selects 2"
        );
        assert_eq!(
            apply_error(&overlay_1_1(
                json!([{"target": "$.info", "copy": "$.paths["}])
            )),
            "#/actions/0/copy: invalid JSONPath at character 9: expected a selector (a quoted \
             name, '*', an index, a slice or '?')"
        );
        assert_eq!(
            apply_error(&overlay_1_1(
                json!([{"target": "$.info", "copy": "$.tags"}])
            )),
            "#/actions/0/copy: is an array, but the target at `/info` is an object and only an \
             object merges into it"
        );
        let (_, outcome) = applied(&overlay_1_1(json!([
            {"target": "$.info", "copy": "$.components", "update": {"x": 1}}
        ])));
        assert_eq!(
            outcome.warnings,
            ["#/actions/0: `update` is ignored because `copy` is set"]
        );
    }

    #[test]
    fn versions_accepted() {
        for version in ["1.0.0", "1.0.1", "1.0", "1.1.0", "1.1.7", "1.1"] {
            let mut document = overlay(json!([{"target": "$.info", "update": {}}]));
            document["overlay"] = json!(version);
            assert_eq!(applied(&document).1.applied, 1, "{version}");
        }
    }
}
