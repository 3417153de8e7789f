//! OpenAPI Overlay documents applied to a JSON document, and the RFC 9535 JSONPath engine
//! that selects their targets.
//!
//! This module owns three things and nothing else:
//!
//! * validating an Overlay document (Overlay Specification 1.0.0, and the 1.1.0 additions)
//!   and reporting every problem with a pointer into the overlay (`#/actions/2/target: …`);
//! * applying its actions, in order, to an OpenAPI document held as a [`Value`];
//! * a self-contained JSONPath (RFC 9535) parser and evaluator that returns the *locations*
//!   of the selected nodes, because `update` and `remove` change the document in place.
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
//! # JSONPath
//!
//! The parser follows the RFC 9535 grammar (§2.1–§2.7) with two deliberate extensions that
//! real overlays, including the Overlay specification's own examples (`@.x-oai-traits`),
//! depend on: a member-name shorthand may contain `-` after its first character
//! (`.x-internal`), and may start with `$` (`..$ref`). Function extensions (§2.4) are
//! `length()`, `count()`, `match()`, `search()` and `value()`; the I-Regexp patterns of
//! `match()`/`search()` (RFC 9485) run on the `regex` crate, translated as RFC 9485 §5.4
//! describes for RE2-style engines (`.` becomes `[^\n\r]`, `match()` anchors both ends).
//! Patterns outside I-Regexp that the crate accepts (`\d`, `(?i)`) are not rejected.
//!
//! Nodes are reported in document order without duplicates (RFC 9535 nodelists may repeat
//! a node and follow selector order), which is what `update` and `remove` need.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::rc::Rc;

use regex::Regex;
use serde_json::{Map, Number, Value};

use crate::json::{equal as json_equal, escape_token, kind, number_cmp, type_name as bare_kind};

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

/// JSON pointers (RFC 6901) of the nodes `path` selects in `document`, in document order
/// and without duplicates. The error reads `invalid JSONPath at character N: problem`.
pub fn select_pointers(document: &Value, path: &str) -> Result<Vec<String>, String> {
    let query = parse_query(path).map_err(|e| e.describe(path))?;
    Ok(select(document, &query)
        .iter()
        .map(|steps| pointer(steps))
        .collect())
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
        parse_query(target_text).map_err(|e| e.into_overlay_error(target_pointer, target_text))?;

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
            let query = parse_query(text)
                .map_err(|e| e.into_overlay_error(format!("{pointer}/copy"), text))?;
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
                kind: bare_kind(node),
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
                bare_kind(node)
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
                        bare_kind(old),
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

/// RFC 6901 pointer of a location; the root is the empty string.
fn pointer(steps: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in steps {
        out.push('/');
        match step {
            Step::Key(key) => out.push_str(&escape_token(key)),
            Step::Index(index) => {
                let _ = write!(out, "{index}");
            }
        }
    }
    out
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

// ---------------------------------------------------------------------------------------
// JSONPath syntax (RFC 9535 §2.1–§2.5)
// ---------------------------------------------------------------------------------------

/// A query: `$` or `@` followed by segments (§2.1.1).
#[derive(Debug)]
struct Query {
    absolute: bool,
    segments: Vec<Segment>,
}

impl Query {
    /// True when the nodelist is in document order and free of duplicates by construction:
    /// no descendant segment, no bracket with several selectors, no backwards slice.
    fn keeps_document_order(&self) -> bool {
        self.segments.iter().all(|segment| {
            !segment.descendant
                && match segment.selectors.as_slice() {
                    [Selector::Slice { step, .. }] => step.is_none_or(|step| step >= 0),
                    [_] => true,
                    _ => false,
                }
        })
    }

    /// §2.3.5.1: a singular query has only child segments of one name or index selector.
    fn is_singular(&self) -> bool {
        self.segments.iter().all(|segment| {
            !segment.descendant
                && matches!(
                    segment.selectors.as_slice(),
                    [Selector::Name(_) | Selector::Index(_)]
                )
        })
    }
}

/// §2.5: a child segment (`.name`, `[…]`) or a descendant segment (`..name`, `..[…]`).
#[derive(Debug)]
struct Segment {
    descendant: bool,
    selectors: Vec<Selector>,
}

/// §2.3 selectors.
#[derive(Debug)]
enum Selector {
    Name(String),
    Wildcard,
    Index(i64),
    Slice {
        start: Option<i64>,
        end: Option<i64>,
        step: Option<i64>,
    },
    Filter(Box<Logical>),
}

/// §2.3.5.1 logical expressions.
#[derive(Debug)]
enum Logical {
    Or(Vec<Logical>),
    And(Vec<Logical>),
    Not(Box<Logical>),
    /// §2.3.5.2.1 existence test.
    Exists(Query),
    /// A function returning LogicalType (`match()`, `search()`).
    Test(Function),
    Compare(Box<Comparable>, CmpOp, Box<Comparable>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// §2.3.5.1 comparable: a literal, a singular query or a ValueType function. While parsing
/// it also holds any query or function, checked when its use is known.
#[derive(Debug)]
enum Comparable {
    Literal(Value),
    Query(Query),
    Function(Function),
}

/// §2.4 function extensions.
#[derive(Debug)]
enum Function {
    /// §2.4.4 `length(ValueType) -> ValueType`.
    Length(Box<Comparable>),
    /// §2.4.5 `count(NodesType) -> ValueType`.
    Count(Query),
    /// §2.4.6 `match()` (`whole`) and §2.4.7 `search()`: `(ValueType, ValueType) ->
    /// LogicalType`.
    Regex {
        whole: bool,
        subject: Box<Comparable>,
        pattern: Pattern,
    },
    /// §2.4.8 `value(NodesType) -> ValueType`.
    Value(Query),
}

impl Function {
    fn name(&self) -> &'static str {
        match self {
            Function::Length(_) => "length",
            Function::Count(_) => "count",
            Function::Regex { whole: true, .. } => "match",
            Function::Regex { whole: false, .. } => "search",
            Function::Value(_) => "value",
        }
    }

    fn returns_logical(&self) -> bool {
        matches!(self, Function::Regex { .. })
    }
}

#[derive(Debug)]
enum Pattern {
    /// A string literal compiled once; `None` when it is not a valid pattern, which makes
    /// the function false for every node (§2.4.6).
    Fixed(Option<Regex>),
    Dynamic(Box<Comparable>),
}

/// A syntax error at a byte offset of the query.
#[derive(Debug)]
struct PathError {
    byte: usize,
    message: String,
}

impl PathError {
    fn position(&self, source: &str) -> usize {
        source.get(..self.byte).map_or(0, |s| s.chars().count()) + 1
    }

    fn describe(&self, source: &str) -> String {
        format!(
            "invalid JSONPath at character {}: {}",
            self.position(source),
            self.message
        )
    }

    fn into_overlay_error(self, pointer: String, source: &str) -> OverlayError {
        OverlayError::InvalidJsonPath {
            pointer,
            position: self.position(source),
            message: self.message,
        }
    }
}

/// Largest magnitude of an index or slice bound: the I-JSON range of §2.1 ("integers MUST be
/// within the range [-(2^53)+1, (2^53)-1]").
const MAX_INT: i64 = (1 << 53) - 1;

/// Deepest nesting of parentheses, filters and function calls accepted.
const MAX_NESTING: usize = 64;

fn parse_query(source: &str) -> Result<Query, PathError> {
    let mut parser = Parser {
        source,
        pos: 0,
        depth: 0,
    };
    if !parser.eat('$') {
        return Err(parser.error_here("a JSONPath query starts with '$'"));
    }
    let segments = parser.segments()?;
    if parser.pos < source.len() {
        let blank_at = parser.pos;
        parser.skip_blank();
        if parser.pos == source.len() {
            return Err(PathError {
                byte: blank_at,
                message: "whitespace is not allowed at the end of a query".into(),
            });
        }
        return Err(parser.expected("'.', '[' or the end of the query"));
    }
    Ok(Query {
        absolute: true,
        segments,
    })
}

/// RFC 9535 §2.1.1 `B`: the blank characters.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// §2.5.1.1 `name-first`, extended with `$` (see the module documentation).
fn is_name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || !c.is_ascii()
}

/// §2.5.1.1 `name-char`, extended with `-` (see the module documentation).
fn is_name_char(c: char) -> bool {
    is_name_first(c) || c.is_ascii_digit() || c == '-'
}

struct Parser<'s> {
    source: &'s str,
    /// Byte offset, always on a character boundary.
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.source.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn skip_blank(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
    }

    fn error_here(&self, message: impl Into<String>) -> PathError {
        PathError {
            byte: self.pos,
            message: message.into(),
        }
    }

    fn expected_message(&self, what: &str) -> String {
        match self.peek() {
            None => format!("expected {what}"),
            Some(c) => format!("expected {what}, found '{c}'"),
        }
    }

    fn expected(&self, what: &str) -> PathError {
        self.error_here(self.expected_message(what))
    }

    fn expect(&mut self, c: char) -> Result<(), PathError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{c}'")))
        }
    }

    fn enter(&mut self) -> Result<(), PathError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            Err(self.error_here(format!("nested deeper than {MAX_NESTING} levels")))
        } else {
            Ok(())
        }
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// §2.1.1 `segments = *(S segment)`. Blanks before something that is not a segment are
    /// left unconsumed, for the caller to read.
    fn segments(&mut self) -> Result<Vec<Segment>, PathError> {
        let mut segments = Vec::new();
        loop {
            let save = self.pos;
            self.skip_blank();
            match self.peek() {
                Some('.') | Some('[') => segments.push(self.segment()?),
                _ => {
                    self.pos = save;
                    return Ok(segments);
                }
            }
        }
    }

    /// §2.5.1.1 child segment and §2.5.2.1 descendant segment.
    fn segment(&mut self) -> Result<Segment, PathError> {
        if self.eat_str("..") {
            let selectors = match self.peek() {
                Some('[') => self.bracketed()?,
                Some('*') => {
                    self.pos += 1;
                    vec![Selector::Wildcard]
                }
                Some(c) if is_name_first(c) => vec![Selector::Name(self.shorthand_name())],
                _ => return Err(self.expected("a member name, '*' or '[' after '..'")),
            };
            return Ok(Segment {
                descendant: true,
                selectors,
            });
        }
        let selectors = if self.eat('.') {
            match self.peek() {
                Some('*') => {
                    self.pos += 1;
                    vec![Selector::Wildcard]
                }
                Some(c) if is_name_first(c) => vec![Selector::Name(self.shorthand_name())],
                _ => return Err(self.expected("a member name or '*' after '.'")),
            }
        } else {
            self.bracketed()?
        };
        Ok(Segment {
            descendant: false,
            selectors,
        })
    }

    fn shorthand_name(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(is_name_char) {
            self.bump();
        }
        self.source.get(start..self.pos).unwrap_or("").to_string()
    }

    /// §2.5.1.1 `bracketed-selection = "[" S selector *(S "," S selector) S "]"`.
    fn bracketed(&mut self) -> Result<Vec<Selector>, PathError> {
        self.expect('[')?;
        let mut selectors = Vec::new();
        loop {
            self.skip_blank();
            selectors.push(self.selector()?);
            self.skip_blank();
            if self.eat(',') {
                continue;
            }
            if self.eat(']') {
                return Ok(selectors);
            }
            return Err(self.expected("']'"));
        }
    }

    /// §2.3 selectors.
    fn selector(&mut self) -> Result<Selector, PathError> {
        match self.peek() {
            Some(quote @ ('\'' | '"')) => {
                self.pos += 1;
                Ok(Selector::Name(self.string_literal(quote)?))
            }
            Some('*') => {
                self.pos += 1;
                Ok(Selector::Wildcard)
            }
            Some('?') => {
                self.pos += 1;
                self.skip_blank();
                self.enter()?;
                let filter = self.logical_or()?;
                self.leave();
                Ok(Selector::Filter(Box::new(filter)))
            }
            Some(c) if c == '-' || c == ':' || c.is_ascii_digit() => self.index_or_slice(),
            _ => Err(self.expected("a selector (a quoted name, '*', an index, a slice or '?')")),
        }
    }

    /// §2.3.3 index selector and §2.3.4 slice selector
    /// (`[start S] ":" S [end S] [":" [S step]]`).
    fn index_or_slice(&mut self) -> Result<Selector, PathError> {
        let start = self.optional_int()?;
        self.skip_blank();
        if !self.eat(':') {
            return match start {
                Some(index) => Ok(Selector::Index(index)),
                None => Err(self.expected("an index")),
            };
        }
        self.skip_blank();
        let end = self.optional_int()?;
        self.skip_blank();
        let step = if self.eat(':') {
            self.skip_blank();
            self.optional_int()?
        } else {
            None
        };
        Ok(Selector::Slice { start, end, step })
    }

    /// §2.3.3.1 `int = "0" / (["-"] DIGIT1 *DIGIT)`, within the I-JSON range.
    fn optional_int(&mut self) -> Result<Option<i64>, PathError> {
        let start = self.pos;
        let negative = self.eat('-');
        let digits_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = self.source.get(digits_start..self.pos).unwrap_or("");
        if digits.is_empty() {
            if negative {
                return Err(self.expected("a digit after '-'"));
            }
            return Ok(None);
        }
        let at_start = |message: &str| PathError {
            byte: start,
            message: message.to_string(),
        };
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(at_start("an integer must not have leading zeros"));
        }
        if negative && digits == "0" {
            return Err(at_start("-0 is not a valid integer here"));
        }
        let magnitude: i64 = match digits.parse() {
            Ok(n) if n <= MAX_INT => n,
            _ => {
                return Err(at_start(
                    "integer out of range (at most 2^53-1 in magnitude)",
                ));
            }
        };
        Ok(Some(if negative { -magnitude } else { magnitude }))
    }

    /// §2.3.1.1 string literals, after the opening quote.
    fn string_literal(&mut self, quote: char) -> Result<String, PathError> {
        let mut out = String::new();
        loop {
            let here = self.pos;
            let Some(c) = self.bump() else {
                return Err(self.error_here(format!("unterminated string, expected {quote}")));
            };
            match c {
                c if c == quote => return Ok(out),
                '\\' => out.push(self.escape(quote)?),
                c if (c as u32) < 0x20 => {
                    return Err(PathError {
                        byte: here,
                        message: "control characters in a string must be escaped".into(),
                    });
                }
                c => out.push(c),
            }
        }
    }

    /// §2.3.1.1 `escapable`, after the backslash.
    fn escape(&mut self, quote: char) -> Result<char, PathError> {
        let here = self.pos;
        let invalid = |pos: usize| PathError {
            byte: pos,
            message: "invalid escape sequence".into(),
        };
        match self.bump() {
            Some('b') => Ok('\u{8}'),
            Some('f') => Ok('\u{c}'),
            Some('n') => Ok('\n'),
            Some('r') => Ok('\r'),
            Some('t') => Ok('\t'),
            Some('/') => Ok('/'),
            Some('\\') => Ok('\\'),
            Some(c) if c == quote => Ok(c),
            Some('u') => {
                let first = self.hex4()?;
                let code = match first {
                    0xD800..=0xDBFF => {
                        if !self.eat_str("\\u") {
                            return Err(self.error_here(
                                "a high surrogate must be followed by a \\u low surrogate",
                            ));
                        }
                        let second = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(self.error_here("expected a low surrogate"));
                        }
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    0xDC00..=0xDFFF => {
                        return Err(PathError {
                            byte: here,
                            message: "a low surrogate cannot stand alone".into(),
                        });
                    }
                    code => code,
                };
                char::from_u32(code).ok_or_else(|| invalid(here))
            }
            _ => Err(invalid(here)),
        }
    }

    fn hex4(&mut self) -> Result<u32, PathError> {
        let mut value = 0u32;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.expected("four hexadecimal digits after \\u"))?;
            self.pos += 1;
            value = value * 16 + digit;
        }
        Ok(value)
    }

    /// §2.3.5.1 `logical-or-expr = logical-and-expr *(S "||" S logical-and-expr)`.
    fn logical_or(&mut self) -> Result<Logical, PathError> {
        self.chain("||", Self::logical_and, Logical::Or)
    }

    /// §2.3.5.1 `logical-and-expr = basic-expr *(S "&&" S basic-expr)`.
    fn logical_and(&mut self) -> Result<Logical, PathError> {
        self.chain("&&", Self::basic, Logical::And)
    }

    /// `item *(S operator S item)`: one item as it is, several joined by `join`.
    fn chain(
        &mut self,
        operator: &str,
        item: fn(&mut Self) -> Result<Logical, PathError>,
        join: fn(Vec<Logical>) -> Logical,
    ) -> Result<Logical, PathError> {
        let mut items = vec![item(self)?];
        loop {
            let save = self.pos;
            self.skip_blank();
            if self.eat_str(operator) {
                self.skip_blank();
                items.push(item(self)?);
            } else {
                self.pos = save;
                break;
            }
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            join(items)
        })
    }

    /// §2.3.5.1 `basic-expr = paren-expr / comparison-expr / test-expr`.
    fn basic(&mut self) -> Result<Logical, PathError> {
        if self.peek() == Some('!') && self.peek_second() != Some('=') {
            self.pos += 1;
            self.skip_blank();
            let negated = if self.peek() == Some('(') {
                self.parenthesized()?
            } else {
                let start = self.pos;
                let operand = self.operand()?;
                let test = self.test(operand, start)?;
                let save = self.pos;
                self.skip_blank();
                if self.comparison_op().is_some() {
                    return Err(PathError {
                        byte: start,
                        message: "'!' cannot negate a comparison without parentheses; \
                                  write !(… == …)"
                            .into(),
                    });
                }
                self.pos = save;
                test
            };
            return Ok(Logical::Not(Box::new(negated)));
        }
        if self.peek() == Some('(') {
            return self.parenthesized();
        }
        let left_start = self.pos;
        let left = self.operand()?;
        let save = self.pos;
        self.skip_blank();
        if let Some(op) = self.comparison_op() {
            self.skip_blank();
            let right_start = self.pos;
            let right = self.operand()?;
            let left = comparable(left, left_start)?;
            let right = comparable(right, right_start)?;
            return Ok(Logical::Compare(Box::new(left), op, Box::new(right)));
        }
        self.pos = save;
        self.test(left, left_start)
    }

    /// §2.3.5.1 `paren-expr`, from its `(`.
    fn parenthesized(&mut self) -> Result<Logical, PathError> {
        self.expect('(')?;
        self.enter()?;
        self.skip_blank();
        let inner = self.logical_or()?;
        self.skip_blank();
        self.expect(')')?;
        self.leave();
        Ok(inner)
    }

    /// §2.3.5.1 `test-expr`: an existence test or a LogicalType function (§2.4.3).
    fn test(&self, operand: Comparable, start: usize) -> Result<Logical, PathError> {
        match operand {
            Comparable::Query(query) => Ok(Logical::Exists(query)),
            Comparable::Function(function) if function.returns_logical() => {
                Ok(Logical::Test(function))
            }
            Comparable::Function(function) => Err(PathError {
                byte: start,
                message: format!(
                    "{}() returns a value, which must be compared (e.g. {}(…) > 0)",
                    function.name(),
                    function.name()
                ),
            }),
            Comparable::Literal(_) => Err(PathError {
                byte: start,
                message: "a literal on its own is not a test; compare it with something".into(),
            }),
        }
    }

    fn comparison_op(&mut self) -> Option<CmpOp> {
        for (text, op) in [
            ("==", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ] {
            if self.eat_str(text) {
                return Some(op);
            }
        }
        None
    }

    /// A query, a literal or a function call; what it may be is checked by the caller.
    fn operand(&mut self) -> Result<Comparable, PathError> {
        match self.peek() {
            Some('@') => {
                self.pos += 1;
                let segments = self.segments()?;
                Ok(Comparable::Query(Query {
                    absolute: false,
                    segments,
                }))
            }
            Some('$') => {
                self.pos += 1;
                let segments = self.segments()?;
                Ok(Comparable::Query(Query {
                    absolute: true,
                    segments,
                }))
            }
            Some(quote @ ('\'' | '"')) => {
                self.pos += 1;
                Ok(Comparable::Literal(Value::String(
                    self.string_literal(quote)?,
                )))
            }
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_lowercase() => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                {
                    self.pos += 1;
                }
                let name = self.source.get(start..self.pos).unwrap_or("");
                if self.peek() == Some('(') {
                    return self.function(name, start).map(Comparable::Function);
                }
                match name {
                    "true" => Ok(Comparable::Literal(Value::Bool(true))),
                    "false" => Ok(Comparable::Literal(Value::Bool(false))),
                    "null" => Ok(Comparable::Literal(Value::Null)),
                    _ => Err(PathError {
                        byte: start,
                        message: format!(
                            "unknown name `{name}` (expected true, false, null or a function call)"
                        ),
                    }),
                }
            }
            _ => Err(self.expected("a query ('@' or '$'), a literal or a function")),
        }
    }

    /// §2.3.5.1 `number = (int / "-0") [ frac ] [ exp ]`.
    fn number(&mut self) -> Result<Comparable, PathError> {
        let start = self.pos;
        self.eat('-');
        let int_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let int = self.source.get(int_start..self.pos).unwrap_or("");
        if int.is_empty() {
            return Err(self.expected("a digit"));
        }
        if int.len() > 1 && int.starts_with('0') {
            return Err(PathError {
                byte: start,
                message: "a number must not have leading zeros".into(),
            });
        }
        if self.eat('.') {
            let frac_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == frac_start {
                return Err(self.expected("a digit after '.'"));
            }
        }
        if self.eat('e') || self.eat('E') {
            if !self.eat('+') {
                self.eat('-');
            }
            let exp_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == exp_start {
                return Err(self.expected("a digit in the exponent"));
            }
        }
        let text = self.source.get(start..self.pos).unwrap_or("");
        match serde_json::from_str::<Number>(text) {
            Ok(number) => Ok(Comparable::Literal(Value::Number(number))),
            Err(_) => Err(PathError {
                byte: start,
                message: format!("number {text} is out of range"),
            }),
        }
    }

    /// §2.4 function expressions, from the `(` after the name; §2.4.3 well-typedness.
    fn function(&mut self, name: &str, start: usize) -> Result<Function, PathError> {
        self.expect('(')?;
        self.enter()?;
        let mut args = Vec::new();
        self.skip_blank();
        if !self.eat(')') {
            loop {
                let arg_start = self.pos;
                args.push((self.operand()?, arg_start));
                self.skip_blank();
                if self.eat(',') {
                    self.skip_blank();
                    continue;
                }
                if self.eat(')') {
                    break;
                }
                return Err(self.expected("',' or ')'"));
            }
        }
        self.leave();
        let given = args.len();
        let arity = |n: usize| -> Result<(), PathError> {
            if given == n {
                Ok(())
            } else {
                Err(PathError {
                    byte: start,
                    message: format!(
                        "{name}() takes {n} argument{}, not {}",
                        if n == 1 { "" } else { "s" },
                        given
                    ),
                })
            }
        };
        let mut args = args.into_iter();
        match name {
            "length" => {
                arity(1)?;
                let (arg, at) = next_arg(&mut args, start)?;
                Ok(Function::Length(Box::new(value_arg(arg, at, name)?)))
            }
            "count" | "value" => {
                arity(1)?;
                let (arg, at) = next_arg(&mut args, start)?;
                let query = nodes_arg(arg, at, name)?;
                Ok(if name == "count" {
                    Function::Count(query)
                } else {
                    Function::Value(query)
                })
            }
            "match" | "search" => {
                arity(2)?;
                let whole = name == "match";
                let (subject, at) = next_arg(&mut args, start)?;
                let subject = value_arg(subject, at, name)?;
                let (pattern, at) = next_arg(&mut args, start)?;
                let pattern = match value_arg(pattern, at, name)? {
                    Comparable::Literal(Value::String(text)) => {
                        Pattern::Fixed(compile_iregexp(&text, whole))
                    }
                    other => Pattern::Dynamic(Box::new(other)),
                };
                Ok(Function::Regex {
                    whole,
                    subject: Box::new(subject),
                    pattern,
                })
            }
            _ => Err(PathError {
                byte: start,
                message: format!(
                    "unsupported function {name}() (supported: length, count, match, search, value)"
                ),
            }),
        }
    }
}

fn next_arg(
    args: &mut impl Iterator<Item = (Comparable, usize)>,
    start: usize,
) -> Result<(Comparable, usize), PathError> {
    args.next().ok_or(PathError {
        byte: start,
        message: "missing argument".into(),
    })
}

/// §2.4.3: a ValueType parameter takes a literal, a singular query or a ValueType function.
fn value_arg(arg: Comparable, at: usize, name: &str) -> Result<Comparable, PathError> {
    match arg {
        Comparable::Query(ref query) if !query.is_singular() => Err(PathError {
            byte: at,
            message: format!(
                "{name}() needs a single value here; this query can select several nodes"
            ),
        }),
        Comparable::Function(ref function) if function.returns_logical() => Err(PathError {
            byte: at,
            message: format!(
                "{name}() needs a value here, but {}() returns a logical result",
                function.name()
            ),
        }),
        arg => Ok(arg),
    }
}

/// §2.4.3: a NodesType parameter takes a query.
fn nodes_arg(arg: Comparable, at: usize, name: &str) -> Result<Query, PathError> {
    match arg {
        Comparable::Query(query) => Ok(query),
        _ => Err(PathError {
            byte: at,
            message: format!("{name}() needs a query ('@…' or '$…') as its argument"),
        }),
    }
}

/// §2.3.5.1: a comparison's sides are literals, singular queries or ValueType functions.
fn comparable(operand: Comparable, at: usize) -> Result<Comparable, PathError> {
    match operand {
        Comparable::Query(ref query) if !query.is_singular() => Err(PathError {
            byte: at,
            message: "a query in a comparison must be singular (only names and indices)".into(),
        }),
        Comparable::Function(ref function) if function.returns_logical() => Err(PathError {
            byte: at,
            message: format!(
                "{}() returns a logical result, which cannot be compared",
                function.name()
            ),
        }),
        operand => Ok(operand),
    }
}

/// RFC 9485 I-Regexp on the `regex` crate: `.` becomes `[^\n\r]` outside classes (§5.4),
/// `&` and `~` are escaped inside classes (the crate gives `&&` and `~~` meanings I-Regexp
/// lacks), and `match()` anchors the whole string. `None` for a pattern that does not
/// compile.
fn compile_iregexp(pattern: &str, whole: bool) -> Option<Regex> {
    let mut translated = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                translated.push('\\');
                translated.push(chars.next()?);
            }
            '[' if !in_class => {
                in_class = true;
                translated.push('[');
            }
            ']' if in_class => {
                in_class = false;
                translated.push(']');
            }
            '.' if !in_class => translated.push_str("[^\\n\\r]"),
            '&' | '~' if in_class => {
                translated.push('\\');
                translated.push(c);
            }
            c => translated.push(c),
        }
    }
    let source = if whole {
        format!("\\A(?:{translated})\\z")
    } else {
        translated
    };
    regex::RegexBuilder::new(&source)
        .size_limit(1 << 20)
        .build()
        .ok()
}

// ---------------------------------------------------------------------------------------
// JSONPath evaluation (RFC 9535 §2.2–§2.7)
// ---------------------------------------------------------------------------------------

/// One step of a normalized path (§2.7), borrowing member names from the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A location as a linked list towards the root, shared between a node and its children.
struct Link<'a> {
    parent: Option<Rc<Link<'a>>>,
    step: Step<'a>,
    /// Position of the step among its parent's children, for document order.
    ordinal: usize,
}

#[derive(Clone)]
struct Node<'a> {
    value: &'a Value,
    /// `None` for the root, and for every node when locations are not tracked.
    location: Option<Rc<Link<'a>>>,
}

/// Locations selected by `query` in `document`, deduplicated, in document order.
fn select<'a>(document: &'a Value, query: &'a Query) -> Vec<Vec<Step<'a>>> {
    let eval = Eval { root: document };
    let nodes = eval.query(query, document, true);
    let unwind = |node: &Node<'a>| {
        let mut steps = Vec::new();
        let mut ordinals = Vec::new();
        let mut link = node.location.as_deref();
        while let Some(current) = link {
            steps.push(current.step);
            ordinals.push(current.ordinal);
            link = current.parent.as_deref();
        }
        steps.reverse();
        ordinals.reverse();
        (ordinals, steps)
    };
    if query.keeps_document_order() {
        return nodes.iter().map(|node| unwind(node).1).collect();
    }
    // Ordinals identify a location as well as its steps do, and sort a parent before its
    // children, array elements by index and members in the order the document holds them;
    // sorted, duplicates are neighbours.
    let mut located: Vec<(Vec<usize>, Vec<Step<'a>>)> = nodes.iter().map(unwind).collect();
    located.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    located.dedup_by(|a, b| a.0 == b.0);
    located.into_iter().map(|(_, steps)| steps).collect()
}

struct Eval<'a> {
    root: &'a Value,
}

impl<'a> Eval<'a> {
    /// §2.1.2: the nodelist a query produces, from `current` for `@` queries.
    fn query(&self, query: &'a Query, current: &'a Value, track: bool) -> Vec<Node<'a>> {
        let start = if query.absolute { self.root } else { current };
        let mut nodes = vec![Node {
            value: start,
            location: None,
        }];
        for segment in &query.segments {
            if nodes.is_empty() {
                break;
            }
            nodes = self.segment(segment, nodes, track);
        }
        nodes
    }

    /// The value of a singular query, without building a nodelist.
    fn singular(&self, query: &'a Query, current: &'a Value) -> Option<&'a Value> {
        let start = if query.absolute { self.root } else { current };
        query.segments.iter().try_fold(start, |node, segment| {
            match (segment.selectors.as_slice(), node) {
                ([Selector::Name(name)], Value::Object(map)) => map.get(name),
                ([Selector::Index(index)], Value::Array(items)) => {
                    normalize_index(*index, items.len()).and_then(|i| items.get(i))
                }
                _ => None,
            }
        })
    }

    /// §2.5.1.2 child segment and §2.5.2.2 descendant segment semantics.
    fn segment(&self, segment: &'a Segment, input: Vec<Node<'a>>, track: bool) -> Vec<Node<'a>> {
        let mut out = Vec::new();
        for node in input {
            if segment.descendant {
                // Pre-order with an explicit stack: a node before its descendants, children
                // in document order, so depth is not bounded by the call stack.
                let mut stack = vec![node];
                while let Some(visited) = stack.pop() {
                    for selector in &segment.selectors {
                        self.selector(selector, &visited, &mut out, track);
                    }
                    let mut children = Vec::new();
                    push_children(&visited, &mut children, track);
                    stack.extend(children.into_iter().rev());
                }
            } else {
                for selector in &segment.selectors {
                    self.selector(selector, &node, &mut out, track);
                }
            }
        }
        out
    }

    /// §2.3 selector semantics.
    fn selector(
        &self,
        selector: &'a Selector,
        node: &Node<'a>,
        out: &mut Vec<Node<'a>>,
        track: bool,
    ) {
        match (selector, node.value) {
            // §2.3.1.2: the member with that name, if the node is an object that has it.
            (Selector::Name(name), Value::Object(map)) => {
                if let Some((key, value)) = map.get_key_value(name) {
                    // The position is only needed to sort, and costs a scan of the keys.
                    let ordinal = if track {
                        map.keys().position(|k| k == key).unwrap_or(usize::MAX)
                    } else {
                        0
                    };
                    out.push(child(node, Step::Key(key), ordinal, value, track));
                }
            }
            // §2.3.2.2: every child of an object or array.
            (Selector::Wildcard, _) => push_children(node, out, track),
            // §2.3.3.2: negative indices count from the end.
            (Selector::Index(index), Value::Array(items)) => {
                if let Some(i) = normalize_index(*index, items.len())
                    && let Some(value) = items.get(i)
                {
                    out.push(child(node, Step::Index(i), i, value, track));
                }
            }
            (Selector::Slice { start, end, step }, Value::Array(items)) => {
                for i in slice_indices(*start, *end, *step, items.len()) {
                    if let Some(value) = items.get(i) {
                        out.push(child(node, Step::Index(i), i, value, track));
                    }
                }
            }
            // §2.3.5.2: the children for which the logical expression is true.
            (Selector::Filter(filter), Value::Object(_) | Value::Array(_)) => {
                let mut children = Vec::new();
                push_children(node, &mut children, track);
                out.extend(
                    children
                        .into_iter()
                        .filter(|candidate| self.logical(filter, candidate.value)),
                );
            }
            _ => {}
        }
    }

    /// §2.3.5.2 filter expressions, with `current` as `@`.
    fn logical(&self, expression: &'a Logical, current: &'a Value) -> bool {
        match expression {
            Logical::Or(items) => items.iter().any(|item| self.logical(item, current)),
            Logical::And(items) => items.iter().all(|item| self.logical(item, current)),
            Logical::Not(inner) => !self.logical(inner, current),
            // §2.3.5.2.1: true when the query selects at least one node, whatever its value.
            Logical::Exists(query) => {
                if query.is_singular() {
                    self.singular(query, current).is_some()
                } else {
                    !self.query(query, current, false).is_empty()
                }
            }
            Logical::Test(function) => self.logical_function(function, current),
            Logical::Compare(left, op, right) => {
                let left = self.comparable(left, current);
                let right = self.comparable(right, current);
                compare(left.as_deref(), *op, right.as_deref())
            }
        }
    }

    /// A comparable's value; `None` is §2.4.1's "Nothing" (an empty nodelist).
    fn comparable(&self, comparable: &'a Comparable, current: &'a Value) -> Option<Cow<'a, Value>> {
        match comparable {
            Comparable::Literal(value) => Some(Cow::Borrowed(value)),
            Comparable::Query(query) => self.singular(query, current).map(Cow::Borrowed),
            Comparable::Function(function) => self.value_function(function, current),
        }
    }

    fn value_function(&self, function: &'a Function, current: &'a Value) -> Option<Cow<'a, Value>> {
        match function {
            // §2.4.4: characters of a string (Unicode scalar values), items of an array,
            // members of an object; Nothing otherwise.
            Function::Length(arg) => {
                let length = match self.comparable(arg, current)?.as_ref() {
                    Value::String(text) => text.chars().count(),
                    Value::Array(items) => items.len(),
                    Value::Object(map) => map.len(),
                    _ => return None,
                };
                Some(Cow::Owned(Value::from(length)))
            }
            // §2.4.5: the number of nodes.
            Function::Count(query) => Some(Cow::Owned(Value::from(
                self.query(query, current, false).len(),
            ))),
            // §2.4.8: the node's value when there is exactly one node, else Nothing.
            Function::Value(query) => match self.query(query, current, false).as_slice() {
                [only] => Some(Cow::Borrowed(only.value)),
                _ => None,
            },
            Function::Regex { .. } => None,
        }
    }

    /// §2.4.6 `match()` and §2.4.7 `search()`: false unless both arguments are strings and
    /// the pattern is valid.
    fn logical_function(&self, function: &'a Function, current: &'a Value) -> bool {
        let Function::Regex {
            whole,
            subject,
            pattern,
        } = function
        else {
            return false;
        };
        let Some(subject) = self.comparable(subject, current) else {
            return false;
        };
        let Value::String(subject) = subject.as_ref() else {
            return false;
        };
        match pattern {
            Pattern::Fixed(Some(regex)) => regex.is_match(subject),
            Pattern::Fixed(None) => false,
            Pattern::Dynamic(pattern) => match self.comparable(pattern, current).as_deref() {
                Some(Value::String(text)) => {
                    compile_iregexp(text, *whole).is_some_and(|regex| regex.is_match(subject))
                }
                _ => false,
            },
        }
    }
}

fn child<'a>(
    parent: &Node<'a>,
    step: Step<'a>,
    ordinal: usize,
    value: &'a Value,
    track: bool,
) -> Node<'a> {
    let location = track.then(|| {
        Rc::new(Link {
            parent: parent.location.clone(),
            step,
            ordinal,
        })
    });
    Node { value, location }
}

fn push_children<'a>(node: &Node<'a>, out: &mut Vec<Node<'a>>, track: bool) {
    match node.value {
        Value::Object(map) => {
            for (ordinal, (key, value)) in map.iter().enumerate() {
                out.push(child(node, Step::Key(key), ordinal, value, track));
            }
        }
        Value::Array(items) => {
            for (index, value) in items.iter().enumerate() {
                out.push(child(node, Step::Index(index), index, value, track));
            }
        }
        _ => {}
    }
}

/// §2.3.3.2: `i` for `i >= 0`, `len + i` for negative `i`; `None` when out of range.
fn normalize_index(index: i64, len: usize) -> Option<usize> {
    let i = if index >= 0 {
        usize::try_from(index).ok()?
    } else {
        len.checked_sub(usize::try_from(index.unsigned_abs()).ok()?)?
    };
    (i < len).then_some(i)
}

/// §2.3.4.2.2 slice semantics (the `Normalize` and `Bounds` functions).
fn slice_indices(
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> Vec<usize> {
    let step = step.unwrap_or(1);
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let normalize = |i: i64| if i >= 0 { i } else { len.saturating_add(i) };
    let mut out = Vec::new();
    if step > 0 {
        let lower = start.map_or(0, normalize).max(0).min(len);
        let upper = end.map_or(len, normalize).max(0).min(len);
        let mut i = lower;
        while i < upper {
            out.extend(usize::try_from(i).ok());
            i = i.saturating_add(step);
        }
    } else if step < 0 {
        let upper = start.map_or(len - 1, normalize).max(-1).min(len - 1);
        let lower = end
            .map_or(len.saturating_neg().saturating_sub(1), normalize)
            .max(-1)
            .min(len - 1);
        let mut i = upper;
        while lower < i {
            out.extend(usize::try_from(i).ok());
            i = i.saturating_add(step);
        }
    }
    out
}

/// §2.3.5.2.2 comparisons; `None` is Nothing.
fn compare(left: Option<&Value>, op: CmpOp, right: Option<&Value>) -> bool {
    let equal = || match (left, right) {
        (None, None) => true,
        (Some(a), Some(b)) => json_equal(a, b),
        _ => false,
    };
    let less = |a: Option<&Value>, b: Option<&Value>| match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            number_cmp(x, y) == Some(std::cmp::Ordering::Less)
        }
        // Strings compare by Unicode scalar values, which is UTF-8 byte order.
        (Some(Value::String(x)), Some(Value::String(y))) => x < y,
        _ => false,
    };
    match op {
        CmpOp::Eq => equal(),
        CmpOp::Ne => !equal(),
        CmpOp::Lt => less(left, right),
        CmpOp::Le => less(left, right) || equal(),
        CmpOp::Gt => less(right, left),
        CmpOp::Ge => less(right, left) || equal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn petstore() -> Value {
        json!({
            "openapi": "3.1.0",
            "info": {"title": "Pets", "version": "1.0.0", "x-default-tag": "pets"},
            "tags": [{"name": "pets"}, {"name": "admin"}],
            "paths": {
                "/pets": {
                    "get": {
                        "operationId": "listPets",
                        "tags": ["pets"],
                        "parameters": [
                            {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
                            {"name": "filter", "in": "query"}
                        ],
                        "responses": {"200": {"description": "OK"}}
                    },
                    "post": {"operationId": "createPet", "x-internal": true, "tags": ["admin"]}
                },
                "/pets/{petId}": {
                    "get": {
                        "operationId": "showPet",
                        "parameters": [{"name": "petId", "in": "path", "required": true}]
                    },
                    "delete": {"operationId": "deletePet", "x-internal": false}
                }
            },
            "components": {"schemas": {"Pet": {"$ref": "#/components/schemas/Base"}}},
            "numbers": [0, 1, 2, 3, 4, 5],
            "odd keys": {"a'b": 1, "a\"b": 2, "~/": 3, "é": 4}
        })
    }

    fn select(path: &str) -> Vec<String> {
        match select_pointers(&petstore(), path) {
            Ok(pointers) => pointers,
            Err(e) => panic!("{path}: {e}"),
        }
    }

    fn select_error(path: &str) -> String {
        match select_pointers(&petstore(), path) {
            Ok(pointers) => panic!("{path} should not parse, selected {pointers:?}"),
            Err(e) => e,
        }
    }

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

    // ---- JSONPath: segments and selectors -----------------------------------------------

    #[test]
    fn root_and_child_names() {
        assert_eq!(select("$"), [""]);
        assert_eq!(select("$.info"), ["/info"]);
        assert_eq!(select("$['info']"), ["/info"]);
        assert_eq!(select("$[\"info\"]"), ["/info"]);
        assert_eq!(select("$.info.title"), ["/info/title"]);
        assert_eq!(select("$ .info [ 'title' ]"), ["/info/title"]);
        assert!(select("$.nope").is_empty());
        assert!(select("$.info.title.deeper").is_empty());
    }

    #[test]
    fn names_with_slashes_braces_and_escapes() {
        assert_eq!(
            select("$.paths['/pets/{petId}'].get"),
            ["/paths/~1pets~1{petId}/get"]
        );
        assert_eq!(
            select("$.paths[\"/pets/{petId}\"].delete.operationId"),
            ["/paths/~1pets~1{petId}/delete/operationId"]
        );
        assert_eq!(select(r#"$['odd keys']['a\'b']"#), ["/odd keys/a'b"]);
        assert_eq!(select(r#"$['odd keys']["a\"b"]"#), ["/odd keys/a\"b"]);
        assert_eq!(select(r#"$['odd keys']["a'b"]"#), ["/odd keys/a'b"]);
        assert_eq!(select(r#"$['odd keys']['~\/']"#), ["/odd keys/~0~1"]);
        assert_eq!(select(r#"$['odd keys']['\u00e9']"#), ["/odd keys/é"]);
        assert_eq!(select("$['odd keys'].é"), ["/odd keys/é"]);
        assert_eq!(select(r#"$["\u0069nfo"]"#), ["/info"]);
    }

    #[test]
    fn dashed_and_dollar_shorthand_names() {
        assert_eq!(
            select("$.paths['/pets'].post.x-internal"),
            ["/paths/~1pets/post/x-internal"]
        );
        assert_eq!(
            select("$.components.schemas.Pet.$ref"),
            ["/components/schemas/Pet/$ref"]
        );
        assert_eq!(select("$..$ref"), ["/components/schemas/Pet/$ref"]);
    }

    #[test]
    fn wildcards() {
        assert_eq!(
            select("$.paths.*"),
            ["/paths/~1pets", "/paths/~1pets~1{petId}"]
        );
        assert_eq!(select("$.paths[*]"), select("$.paths.*"));
        assert_eq!(
            select("$.paths.*.get"),
            ["/paths/~1pets/get", "/paths/~1pets~1{petId}/get"]
        );
        assert_eq!(select("$.tags[*]"), ["/tags/0", "/tags/1"]);
        assert!(select("$.info.title.*").is_empty());
    }

    #[test]
    fn indices() {
        assert_eq!(select("$.tags[0]"), ["/tags/0"]);
        assert_eq!(select("$.tags[1].name"), ["/tags/1/name"]);
        assert_eq!(select("$.tags[-1]"), ["/tags/1"]);
        assert_eq!(select("$.tags[-2]"), ["/tags/0"]);
        assert!(select("$.tags[2]").is_empty());
        assert!(select("$.tags[-3]").is_empty());
        assert!(select("$.info[0]").is_empty());
    }

    #[test]
    fn slices() {
        let numbers = |path: &str| -> Vec<String> {
            select(path)
                .into_iter()
                .map(|p| p.trim_start_matches("/numbers/").to_string())
                .collect()
        };
        assert_eq!(numbers("$.numbers[1:3]"), ["1", "2"]);
        assert_eq!(numbers("$.numbers[::2]"), ["0", "2", "4"]);
        assert_eq!(numbers("$.numbers[:2]"), ["0", "1"]);
        assert_eq!(numbers("$.numbers[4:]"), ["4", "5"]);
        assert_eq!(numbers("$.numbers[-2:]"), ["4", "5"]);
        assert_eq!(numbers("$.numbers[1:100]"), ["1", "2", "3", "4", "5"]);
        assert_eq!(numbers("$.numbers[ 1 : 5 : 2 ]"), ["1", "3"]);
        assert!(numbers("$.numbers[3:1]").is_empty());
        assert!(numbers("$.numbers[::0]").is_empty());
        // Negative steps walk backwards; the result is still reported in document order.
        assert_eq!(numbers("$.numbers[::-2]"), ["1", "3", "5"]);
        assert_eq!(numbers("$.numbers[3:0:-1]"), ["1", "2", "3"]);
        assert_eq!(slice_indices(None, None, Some(-1), 3), [2, 1, 0]);
        assert_eq!(slice_indices(Some(5), Some(1), Some(-2), 6), [5, 3]);
        assert!(slice_indices(None, None, Some(-1), 0).is_empty());
        assert!(select("$.info[0:1]").is_empty());
    }

    #[test]
    fn unions_are_deduplicated_in_document_order() {
        assert_eq!(
            select("$.info['title','version']"),
            ["/info/title", "/info/version"]
        );
        assert_eq!(
            select("$.info['version','title']"),
            ["/info/title", "/info/version"]
        );
        assert_eq!(select("$.tags[1,0,1,-1]"), ["/tags/0", "/tags/1"]);
        assert_eq!(
            select("$.numbers[0, 4:, ::5]"),
            ["/numbers/0", "/numbers/4", "/numbers/5"]
        );
        assert_eq!(select("$.info[\"title\", 'nope']"), ["/info/title"]);
    }

    #[test]
    fn descendants() {
        assert_eq!(
            select("$..operationId"),
            [
                "/paths/~1pets/get/operationId",
                "/paths/~1pets/post/operationId",
                "/paths/~1pets~1{petId}/get/operationId",
                "/paths/~1pets~1{petId}/delete/operationId",
            ]
        );
        assert_eq!(select("$.paths..name").len(), 3);
        assert_eq!(
            select("$..[0]"),
            [
                "/tags/0",
                "/paths/~1pets/get/tags/0",
                "/paths/~1pets/get/parameters/0",
                "/paths/~1pets/post/tags/0",
                "/paths/~1pets~1{petId}/get/parameters/0",
                "/numbers/0",
            ]
        );
        let all = select("$..*");
        assert_eq!(all.first().map(String::as_str), Some("/openapi"));
        assert!(all.contains(&"/paths/~1pets~1{petId}/get/parameters/0/required".to_string()));
        assert!(
            !all.contains(&String::new()),
            "..* excludes the root itself"
        );
        assert_eq!(select("$.info..*"), select("$.info.*"));
        assert_eq!(
            select("$..['title','version']"),
            ["/info/title", "/info/version"]
        );
    }

    // ---- JSONPath: filters ----------------------------------------------------------------

    #[test]
    fn filter_comparisons() {
        assert_eq!(
            select("$.paths.*[?@.x-internal == true]"),
            ["/paths/~1pets/post"]
        );
        assert_eq!(
            select("$.paths.*[?(@.operationId == 'showPet')]"),
            ["/paths/~1pets~1{petId}/get"]
        );
        assert_eq!(select("$.paths.*[?@.operationId != \"listPets\"]").len(), 3);
        assert_eq!(select("$.numbers[?@ < 2]"), ["/numbers/0", "/numbers/1"]);
        assert_eq!(select("$.numbers[?@ <= 1]"), ["/numbers/0", "/numbers/1"]);
        assert_eq!(select("$.numbers[?@ > 4]"), ["/numbers/5"]);
        assert_eq!(select("$.numbers[?@ >= 4.0]"), ["/numbers/4", "/numbers/5"]);
        assert_eq!(select("$.numbers[?@ == 3e0]"), ["/numbers/3"]);
        assert_eq!(select("$.numbers[?@ == -0]"), ["/numbers/0"]);
        assert_eq!(select("$.tags[?@.name > 'b']"), ["/tags/0"]);
        assert!(
            select("$.numbers[?@ < 'a']").is_empty(),
            "mixed types are not ordered"
        );
        // Absent members are Nothing: equal only to another Nothing.
        assert_eq!(
            select("$.paths.*[?@.x-internal == @.x-missing]").len(),
            2,
            "get operations lack both members"
        );
        assert_eq!(select("$.paths.*[?@.x-internal != true]").len(), 3);
        // Structured values compare deeply, numbers by value.
        assert_eq!(
            select("$.paths.*[?@.tags == $.paths['/pets'].post.tags]"),
            ["/paths/~1pets/post"]
        );
        assert_eq!(
            select("$.paths.*[?@.parameters[0] == $.paths['/pets'].get.parameters[0]]"),
            ["/paths/~1pets/get"]
        );
        assert_eq!(
            select_error("$[?@.schema == {}]"),
            "invalid JSONPath at character 16: expected a query ('@' or '$'), a literal or a \
             function, found '{'"
        );
    }

    #[test]
    fn filter_logic_and_existence() {
        assert_eq!(
            select("$.paths.*.get.parameters[?@.name=='filter' && @.in=='query']"),
            ["/paths/~1pets/get/parameters/1"]
        );
        assert_eq!(
            select("$.paths.*.*[?@.operationId == 'createPet' || @.operationId == 'deletePet']")
                .len(),
            0,
            "operations are not arrays or objects of operations"
        );
        assert_eq!(
            select("$.paths.*[?@.operationId == 'createPet' || @.operationId == 'deletePet']"),
            ["/paths/~1pets/post", "/paths/~1pets~1{petId}/delete"]
        );
        assert_eq!(
            select("$.paths.*[?@.x-internal]"),
            ["/paths/~1pets/post", "/paths/~1pets~1{petId}/delete"],
            "existence does not look at the value"
        );
        assert_eq!(
            select("$.paths.*[?!@.x-internal]"),
            ["/paths/~1pets/get", "/paths/~1pets~1{petId}/get"]
        );
        assert_eq!(
            select("$.paths.*[?!(@.x-internal == true) && (@.tags || @.parameters)]"),
            ["/paths/~1pets/get", "/paths/~1pets~1{petId}/get"]
        );
        assert_eq!(
            select("$.paths.*[? @.parameters[?@.required == true] ]"),
            ["/paths/~1pets~1{petId}/get"],
            "a nested filter as an existence test"
        );
        assert_eq!(
            select("$.paths[?@.get && @.delete]"),
            ["/paths/~1pets~1{petId}"]
        );
        assert_eq!(select("$.numbers[?@ == null || @ == false]").len(), 0);
        assert_eq!(select("$.tags[?true == true]").len(), 2);
    }

    #[test]
    fn filter_absolute_queries() {
        assert_eq!(
            select("$.tags[?@.name == $.info.x-default-tag]"),
            ["/tags/0"]
        );
        assert_eq!(
            select("$.paths.*.*[?@ == $.tags[1].name]"),
            Vec::<String>::new(),
            "tags arrays hold strings, not the operation's children"
        );
        assert_eq!(
            select("$.paths.*.*.tags[?@ == $.tags[1].name]"),
            ["/paths/~1pets/post/tags/0"]
        );
        assert_eq!(select("$.tags[?$.info.x-default-tag]").len(), 2);
    }

    #[test]
    fn filter_functions() {
        assert_eq!(
            select("$.paths.*[?length(@.parameters) == 2]"),
            ["/paths/~1pets/get"]
        );
        assert_eq!(select("$.tags[?length(@.name) == 5]"), ["/tags/1"]);
        assert_eq!(select("$['odd keys'][?length(@) == 1]").len(), 0);
        assert_eq!(
            select("$.paths[?count(@.*) == 2]"),
            ["/paths/~1pets", "/paths/~1pets~1{petId}"]
        );
        assert_eq!(
            select("$.paths.*[?count(@..name) >= 2]"),
            ["/paths/~1pets/get"]
        );
        assert_eq!(
            select("$.paths.*[?match(@.operationId, 'list.*')]"),
            ["/paths/~1pets/get"]
        );
        assert!(select("$.paths.*[?match(@.operationId, 'Pet')]").is_empty());
        assert_eq!(select("$.paths.*[?search(@.operationId, 'Pet')]").len(), 4);
        assert_eq!(
            select("$.paths.*[?search(@.operationId, '^(create|delete)')]"),
            ["/paths/~1pets/post", "/paths/~1pets~1{petId}/delete"]
        );
        assert_eq!(
            select("$.paths[?search(@.get.operationId, $.info.x-default-tag)]").len(),
            0,
            "pattern taken from the document: 'pets' is not in 'listPets'"
        );
        assert_eq!(
            select("$.tags[?match(@.name, $.info.x-default-tag)]"),
            ["/tags/0"]
        );
        assert!(
            select("$.tags[?match(@.name, '[')]").is_empty(),
            "invalid pattern"
        );
        assert!(
            select("$.numbers[?match(@, '1')]").is_empty(),
            "non-string subject"
        );
        assert_eq!(
            select("$.paths.*[?value(@..x-internal) == true]"),
            ["/paths/~1pets/post"]
        );
        assert_eq!(
            select("$.paths.*[?!match(@.operationId, '.*Pets?')]").len(),
            0
        );
    }

    #[test]
    fn iregexp_dot_excludes_line_breaks() {
        let document = json!({"items": ["a\nb", "a-b"]});
        assert_eq!(
            select_pointers(&document, "$.items[?match(@, 'a.b')]"),
            Ok(vec!["/items/1".to_string()])
        );
        assert_eq!(
            select_pointers(&document, "$.items[?search(@, '[&-]')]"),
            Ok(vec!["/items/1".to_string()])
        );
    }

    #[test]
    fn jsonpath_syntax_errors_name_the_character() {
        assert_eq!(
            select_error("paths"),
            "invalid JSONPath at character 1: a JSONPath query starts with '$'"
        );
        assert_eq!(
            select_error("$.paths['/pets'"),
            "invalid JSONPath at character 16: expected ']'"
        );
        assert_eq!(
            select_error("$.a[0 x]"),
            "invalid JSONPath at character 7: expected ']', found 'x'"
        );
        assert_eq!(
            select_error("$.a b"),
            "invalid JSONPath at character 5: expected '.', '[' or the end of the query, found 'b'"
        );
        assert_eq!(
            select_error("$.a "),
            "invalid JSONPath at character 4: whitespace is not allowed at the end of a query"
        );
        assert_eq!(
            select_error("$."),
            "invalid JSONPath at character 3: expected a member name or '*' after '.'"
        );
        assert_eq!(
            select_error("$...a"),
            "invalid JSONPath at character 4: expected a member name, '*' or '[' after '..', found '.'"
        );
        assert_eq!(
            select_error("$['a"),
            "invalid JSONPath at character 5: unterminated string, expected '"
        );
        assert_eq!(
            select_error(r"$['\x']"),
            "invalid JSONPath at character 5: invalid escape sequence"
        );
        assert_eq!(
            select_error(r#"$['\"']"#),
            "invalid JSONPath at character 5: invalid escape sequence"
        );
        assert_eq!(
            select_error(r"$['\udc00']"),
            "invalid JSONPath at character 5: a low surrogate cannot stand alone"
        );
        assert_eq!(
            select_error("$[01]"),
            "invalid JSONPath at character 3: an integer must not have leading zeros"
        );
        assert_eq!(
            select_error("$[-0]"),
            "invalid JSONPath at character 3: -0 is not a valid integer here"
        );
        assert_eq!(
            select_error("$[9007199254740992]"),
            "invalid JSONPath at character 3: integer out of range (at most 2^53-1 in magnitude)"
        );
        assert_eq!(
            select_error("$[]"),
            "invalid JSONPath at character 3: expected a selector (a quoted name, '*', an index, a slice or '?'), found ']'"
        );
        assert_eq!(
            select_error("é$"),
            "invalid JSONPath at character 1: a JSONPath query starts with '$'"
        );
        assert_eq!(
            select_error("$['é'"),
            "invalid JSONPath at character 6: expected ']'"
        );
    }

    #[test]
    fn filter_syntax_and_type_errors() {
        assert_eq!(
            select_error("$[?@.a = 1]"),
            "invalid JSONPath at character 8: expected ']', found '='"
        );
        assert_eq!(
            select_error("$[?@.* == 1]"),
            "invalid JSONPath at character 4: a query in a comparison must be singular (only names and indices)"
        );
        assert_eq!(
            select_error("$[?@..a == 1]"),
            "invalid JSONPath at character 4: a query in a comparison must be singular (only names and indices)"
        );
        assert_eq!(
            select_error("$[?'a']"),
            "invalid JSONPath at character 4: a literal on its own is not a test; compare it with something"
        );
        assert_eq!(
            select_error("$[?length(@.a)]"),
            "invalid JSONPath at character 4: length() returns a value, which must be compared (e.g. length(…) > 0)"
        );
        assert_eq!(
            select_error("$[?match(@.a, 'x') == true]"),
            "invalid JSONPath at character 4: match() returns a logical result, which cannot be compared"
        );
        assert_eq!(
            select_error("$[?length(@.*) == 1]"),
            "invalid JSONPath at character 11: length() needs a single value here; this query can select several nodes"
        );
        assert_eq!(
            select_error("$[?count('a') == 1]"),
            "invalid JSONPath at character 10: count() needs a query ('@…' or '$…') as its argument"
        );
        assert_eq!(
            select_error("$[?count(@.a, @.b) == 1]"),
            "invalid JSONPath at character 4: count() takes 1 argument, not 2"
        );
        assert_eq!(
            select_error("$[?foo(@.a)]"),
            "invalid JSONPath at character 4: unsupported function foo() (supported: length, count, match, search, value)"
        );
        assert_eq!(
            select_error("$[?@.a == nul]"),
            "invalid JSONPath at character 11: unknown name `nul` (expected true, false, null or a function call)"
        );
        assert_eq!(
            select_error("$[?!@.a == 1]"),
            "invalid JSONPath at character 5: '!' cannot negate a comparison without parentheses; write !(… == …)"
        );
        assert_eq!(
            select_error("$[?(@.a == 1]"),
            "invalid JSONPath at character 13: expected ')', found ']'"
        );
        assert_eq!(
            select_error("$[?@.a == 01]"),
            "invalid JSONPath at character 11: a number must not have leading zeros"
        );
        assert_eq!(
            select_error("$[?@.a == 1.]"),
            "invalid JSONPath at character 13: expected a digit after '.', found ']'"
        );
        assert_eq!(
            select_error("$[?@.a == 1e999]"),
            "invalid JSONPath at character 11: number 1e999 is out of range"
        );
        let deep = format!("$[?{}@.a{}]", "(".repeat(100), ")".repeat(100));
        assert!(select_error(&deep).contains("nested deeper than 64 levels"));
    }

    #[test]
    fn no_panics_on_odd_input() {
        for path in [
            "",
            "$",
            "$[",
            "$[?",
            "$[?(",
            "$[?@",
            "$[?@.",
            "$[?@ ==",
            "$[?@ == '",
            "$[1:",
            "$[::",
            "$[-",
            "$..",
            "$.*[",
            "$['\\u",
            "$['\\ud800']",
            "$['\\ud800\\u0041']",
            "$[?@ <",
            "$[?!",
            "$[?match(",
            "$[?match(@, ",
            "$[?count()]",
            "$[?value(@.*) == 1]",
            "$[?@ == -]",
            "$[?@ == 1e]",
            "$[?@ == 1e+]",
            "$['\u{1}']",
            "$.\u{80}",
            "$[?(@.a == 1) &&]",
            "$[?||]",
        ] {
            let _ = select_pointers(&petstore(), path);
            let _ = select_pointers(&Value::Null, path);
        }
        assert_eq!(select_pointers(&json!(5), "$"), Ok(vec![String::new()]));
        assert_eq!(select_pointers(&json!(5), "$..*"), Ok(vec![]));
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
