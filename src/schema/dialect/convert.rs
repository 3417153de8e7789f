//! The rewrite of one input schema into a dialect, schema position by schema position.
//!
//! Each position is first brought to one flat schema ([`super::merge`]: `$ref` read
//! through where needed, `allOf` merged), then written out with the dialect's keywords.
//! A position that has no form in the dialect comes back as [`Gone`], and the nearest
//! place that can lose it — a property, an `anyOf` alternative — is left out and noted;
//! nothing else of the schema changes for it.
//!
//! The output carries private markers ([`super::marks`]: `x-restmcp-*`) that say what
//! [`super::restore`] must undo; [`super::marks::strip_markers`] removes them for
//! publication. Keeping the undo plan inside the one conversion means adapting and
//! restoring can never disagree.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Number, Value, json};

use super::marks::{MARK_ENUM, MARK_OPTIONAL};
use super::merge::{Source, flatten, is_annotation, merge};
use super::{Dialect, GEMINI_RECURSION, limits};
use crate::json;

/// Object nesting openai-strict accepts ("up to 10 levels of nesting").
pub(super) const STRICT_MAX_DEPTH: usize = 10;
/// Schema objects an output may grow to while `$ref`s are read through; past it Gemini
/// leaves further references out and openai-strict keeps them as plain `$ref`s (a DAG of
/// shared definitions can grow exponentially inlined).
const MAX_NODES: usize = 20_000;
/// Schemas nested inside one another that are converted (each costs a few stack frames);
/// deeper ones are left out. The shared real-world specs nest at most 16 once adapted.
const MAX_NESTING: usize = 40;
/// Schema positions visited before a conversion gives up on what is left: bounds the work
/// whatever the input.
const MAX_STEPS: usize = 500_000;
/// Steps spent measuring definition depths before assuming the worst.
const MAX_DEPTH_STEPS: usize = 200_000;

/// String formats each dialect names as supported.
const STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const GEMINI_STRING_FORMATS: [&str; 2] = ["enum", "date-time"];

pub(super) struct Converted {
    /// The adapted schema with its `x-restmcp-*` markers.
    pub schema: Value,
    pub notes: Vec<String>,
}

/// `original` rewritten for `dialect` (not [`Dialect::Full`]).
pub(super) fn convert(dialect: Dialect, original: &Value) -> Converted {
    let mut failed: FxHashMap<String, String> = FxHashMap::default();
    loop {
        let mut converter = Converter::new(dialect, original, failed.clone());
        let mut schema = converter.root(original);
        // A definition that failed after something inside its own cycle already referred
        // to it leaves a dangling reference: convert again, knowing it fails.
        let dangling: Vec<String> = converter
            .referenced
            .iter()
            .filter(|name| !converter.defs.contains_key(*name))
            .cloned()
            .collect();
        if !dangling.is_empty() && dangling.iter().any(|d| !failed.contains_key(d)) {
            for name in dangling {
                let reason = match converter.def_state.get(&name) {
                    Some(DefState::Failed(reason)) => reason.clone(),
                    _ => "has no form".into(),
                };
                failed.insert(name, reason);
            }
            continue;
        }
        let mut notes = converter.notes;
        if dialect == Dialect::OpenaiStrict {
            limits::enforce(&mut schema, &mut notes);
        }
        return Converted { schema, notes };
    }
}

/// A place in the arguments, for notes: `body.items[].name`.
#[derive(Debug, Clone)]
struct Path(String);

impl Path {
    fn root() -> Path {
        Path(String::new())
    }

    fn prop(&self, name: &str) -> Path {
        if self.0.is_empty() {
            Path(name.to_string())
        } else {
            Path(format!("{}.{name}", self.0))
        }
    }

    fn item(&self) -> Path {
        Path(format!("{}[]", self.0))
    }

    fn option(&self, n: usize) -> Path {
        Path(format!("{} (option {n})", self.0))
    }
}

fn show(path: &str) -> String {
    if path.is_empty() {
        "the arguments".into()
    } else {
        format!("`{path}`")
    }
}

/// A position that has no form in the dialect: where, and why (a predicate: "accepts any
/// value").
#[derive(Debug, Clone)]
struct Gone {
    at: String,
    reason: String,
    /// Nothing is lost when it is optional (an object that can only be `{}`).
    trivial: bool,
}

fn gone(at: &Path, reason: impl Into<String>) -> Gone {
    Gone {
        at: at.0.clone(),
        reason: reason.into(),
        trivial: false,
    }
}

#[derive(Debug, Clone)]
enum DefState {
    InProgress,
    Done,
    Failed(String),
}

struct Converter<'a> {
    dialect: Dialect,
    source: Source<'a>,
    notes: Vec<String>,
    steps: usize,
    /// Definitions being read through (inlined) or converted, innermost last.
    stack: Vec<String>,
    // openai-strict: `$defs` kept, converted on first use.
    defs: Map<String, Value>,
    def_state: FxHashMap<String, DefState>,
    /// Definitions a previous attempt found to have no form.
    failed: FxHashMap<String, String>,
    referenced: FxHashSet<String>,
    /// > 0 while a definition body is converted (depth is checked at reference sites).
    in_def: usize,
    depth_memo: FxHashMap<String, usize>,
    depth_steps: usize,
    /// Size of the output so far, in schema objects.
    nodes: usize,
    /// Schemas being converted inside one another.
    nesting: usize,
}

impl<'a> Converter<'a> {
    fn new(dialect: Dialect, root: &'a Value, failed: FxHashMap<String, String>) -> Self {
        Converter {
            dialect,
            source: Source::new(root),
            notes: Vec::new(),
            steps: 0,
            stack: Vec::new(),
            defs: Map::new(),
            def_state: FxHashMap::default(),
            failed,
            referenced: FxHashSet::default(),
            in_def: 0,
            depth_memo: FxHashMap::default(),
            depth_steps: 0,
            nodes: 0,
            nesting: 0,
        }
    }

    fn strict(&self) -> bool {
        self.dialect == Dialect::OpenaiStrict
    }

    /// The arguments object. It is always an object, whatever happens below it.
    fn root(&mut self, original: &Value) -> Value {
        let at = Path::root();
        let mut flat = match original {
            Value::Object(map) => match flatten(&self.source, map) {
                Ok(flat) => flat,
                Err(reason) => {
                    self.notes.push(format!(
                        "the arguments cannot be expressed ({reason}); no argument is offered"
                    ));
                    Cow::Owned(Map::new())
                }
            },
            _ => {
                self.notes
                    .push("the input schema is not a schema object; no argument is offered".into());
                Cow::Owned(Map::new())
            }
        };
        let types = value_types(&flat);
        if !types.is_empty() && !types.contains(&"object") {
            self.notes.push(format!(
                "the input schema is not an object ({}); no argument is offered",
                types.join(", ")
            ));
            flat = Cow::Owned(Map::new());
        }
        for key in ["anyOf", "oneOf"] {
            if flat.contains_key(key) {
                flat.to_mut().remove(key);
                self.notes.push(format!(
                    "the arguments: the alternatives ({key}) at the top level have no form in {}; left out",
                    self.dialect
                ));
            }
        }
        let mut out = match self.typed(&flat, "object", &at, 1, true) {
            Ok(Value::Object(map)) => map,
            Ok(_) => Map::new(),
            Err(g) => {
                self.notes.push(format!(
                    "{} {}; no argument is offered",
                    show(&g.at),
                    g.reason
                ));
                let mut empty = Map::new();
                empty.insert("type".into(), json!("object"));
                empty.insert("properties".into(), json!({}));
                if self.strict() {
                    empty.insert("required".into(), json!([]));
                    empty.insert("additionalProperties".into(), json!(false));
                }
                empty
            }
        };
        if self.strict() && !self.defs.is_empty() {
            out.insert(
                "$defs".into(),
                Value::Object(std::mem::take(&mut self.defs)),
            );
            // Kept for the dangling check in `convert`.
            if let Some(Value::Object(defs)) = out.get("$defs") {
                self.defs = defs.clone();
            }
        }
        Value::Object(out)
    }

    fn tick(&mut self, at: &Path) -> Result<(), Gone> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(gone(at, "is past the size restmcp converts"));
        }
        Ok(())
    }

    /// One schema position.
    fn node(&mut self, schema: &Value, at: &Path, level: usize) -> Result<Value, Gone> {
        self.tick(at)?;
        if self.nesting >= MAX_NESTING {
            return Err(gone(
                at,
                format!("is nested past {MAX_NESTING} schemas, more than restmcp converts"),
            ));
        }
        self.nesting += 1;
        let out = self.node_within(schema, at, level);
        self.nesting -= 1;
        out
    }

    fn node_within(&mut self, schema: &Value, at: &Path, level: usize) -> Result<Value, Gone> {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => {
                return Err(gone(
                    at,
                    format!("accepts any value, which has no form in {}", self.dialect),
                ));
            }
            Value::Bool(false) => return Err(gone(at, "accepts no value")),
            other => return Err(gone(at, format!("has {other} where a schema belongs"))),
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str)
            && map
                .keys()
                .all(|k| k == "$ref" || is_annotation(k) || k.starts_with("x-"))
        {
            return self.reference(map, reference, at, level);
        }
        let flat = flatten(&self.source, map)
            .map_err(|reason| gone(at, format!("cannot be expressed: {reason}")))?;
        self.flat(&flat, at, level)
    }

    fn reference(
        &mut self,
        map: &Map<String, Value>,
        reference: &str,
        at: &Path,
        level: usize,
    ) -> Result<Value, Gone> {
        let Some((mut name, mut target)) = self.source.resolve(reference) else {
            return Err(gone(
                at,
                format!("refers to {reference}, which is not in the schema"),
            ));
        };
        let mut siblings: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| is_annotation(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // An alias (a definition that is only a reference) is followed to what it names,
        // its annotations under the site's.
        let mut seen = vec![name.clone()];
        while let Value::Object(alias) = target
            && let Some(next) = alias.get("$ref").and_then(Value::as_str)
            && alias
                .keys()
                .all(|k| k == "$ref" || is_annotation(k) || k.starts_with("x-"))
        {
            let Some((next_name, next_target)) = self.source.resolve(next) else {
                return Err(gone(
                    at,
                    format!("refers to {next}, which is not in the schema"),
                ));
            };
            if seen.contains(&next_name) {
                return Err(gone(
                    at,
                    "refers only to itself (a $ref cycle), which accepts any value",
                ));
            }
            for (k, v) in alias.iter().filter(|(k, _)| is_annotation(k)) {
                siblings.entry(k.clone()).or_insert_with(|| v.clone());
            }
            seen.push(next_name.clone());
            (name, target) = (next_name, next_target);
        }
        if !self.strict() {
            let repeats = self.stack.iter().filter(|n| **n == name).count();
            if repeats >= GEMINI_RECURSION {
                return Err(gone(
                    at,
                    format!(
                        "repeats the recursive {name}, cut after {GEMINI_RECURSION} levels in gemini"
                    ),
                ));
            }
            if self.nodes > MAX_NODES {
                return Err(gone(
                    at,
                    format!(
                        "would grow the schema past {MAX_NODES} nodes once references are inlined for gemini"
                    ),
                ));
            }
            return self.inline(name, target, &siblings, at, level);
        }
        if let Some(reason) = self.failed.get(&name) {
            return Err(gone(at, reason.clone()));
        }
        if let Some(DefState::Failed(reason)) = self.def_state.get(&name) {
            return Err(gone(at, reason.clone()));
        }
        let too_deep = self.in_def == 0 && level - 1 + self.def_depth(&name) > STRICT_MAX_DEPTH;
        // A `$ref` takes no siblings in strict mode: the target is read through so that the
        // site's own description survives, as OpenAI's SDK does.
        let described = siblings.keys().any(|k| {
            matches!(
                k.as_str(),
                "description" | "title" | "default" | "deprecated"
            )
        });
        if too_deep || described {
            if !self.stack.contains(&name) {
                return self.inline(name, target, &siblings, at, level);
            }
            if too_deep {
                return Err(gone(
                    at,
                    format!(
                        "is nested deeper than the {STRICT_MAX_DEPTH} object levels openai-strict allows"
                    ),
                ));
            }
            // Within its own recursion: a plain reference, the site's description is lost.
        }
        self.define(&name, target, at)?;
        self.referenced.insert(name.clone());
        let escaped = crate::json::escape_token(&name);
        Ok(json!({ "$ref": format!("#/$defs/{escaped}") }))
    }

    /// The target of a reference written out in place, under the site's annotations.
    fn inline(
        &mut self,
        name: String,
        target: &Value,
        siblings: &Map<String, Value>,
        at: &Path,
        level: usize,
    ) -> Result<Value, Gone> {
        let target = match target {
            Value::Object(map) => map,
            other => return self.node(other, at, level),
        };
        let flat = flatten(&self.source, target)
            .map_err(|reason| gone(at, format!("cannot be expressed: {reason}")))?;
        let mut merged = siblings.clone();
        for (k, v) in flat.iter() {
            if !merged.contains_key(k) {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.stack.push(name);
        let out = self.flat(&merged, at, level);
        self.stack.pop();
        out
    }

    /// openai-strict: converts a definition on first use, into `$defs`.
    fn define(&mut self, name: &str, target: &Value, at: &Path) -> Result<(), Gone> {
        match self.def_state.get(name) {
            Some(DefState::InProgress | DefState::Done) => return Ok(()),
            Some(DefState::Failed(reason)) => return Err(gone(at, reason.clone())),
            None => {}
        }
        self.def_state
            .insert(name.to_string(), DefState::InProgress);
        self.in_def += 1;
        self.stack.push(name.to_string());
        let result = self.node(target, at, 1);
        self.stack.pop();
        self.in_def -= 1;
        match result {
            Ok(body) => {
                self.defs.insert(name.to_string(), body);
                self.def_state.insert(name.to_string(), DefState::Done);
                Ok(())
            }
            Err(g) => {
                let reason = if g.at == at.0 {
                    g.reason.clone()
                } else {
                    format!("has {} that {}", show(&g.at), g.reason)
                };
                self.def_state
                    .insert(name.to_string(), DefState::Failed(reason));
                Err(g)
            }
        }
    }

    /// openai-strict: object levels a definition spans (counting its own), following
    /// references; a reference back into the current chain counts nothing, as recursion is
    /// allowed.
    fn def_depth(&mut self, name: &str) -> usize {
        if let Some(depth) = self.depth_memo.get(name) {
            return *depth;
        }
        let Some((_, target)) = self.source.resolve(&format!("#/$defs/{name}")) else {
            return 0;
        };
        let mut stack = vec![name.to_string()];
        let mut cut = false;
        let depth = self.depth_of(target, &mut stack, &mut cut);
        self.depth_memo.insert(name.to_string(), depth);
        depth
    }

    fn depth_of(&mut self, schema: &Value, stack: &mut Vec<String>, cut: &mut bool) -> usize {
        let Value::Object(map) = schema else { return 0 };
        self.depth_steps += 1;
        if self.depth_steps > MAX_DEPTH_STEPS || stack.len() > MAX_NESTING {
            // Assume the worst: the reference is inlined and cut by real levels.
            return STRICT_MAX_DEPTH + 1;
        }
        let mut best = 0;
        if let Some((name, target)) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.source.resolve(r))
        {
            if stack.contains(&name) {
                *cut = true;
            } else if let Some(depth) = self.depth_memo.get(&name) {
                best = *depth;
            } else {
                stack.push(name.clone());
                let mut inner_cut = false;
                let depth = self.depth_of(target, stack, &mut inner_cut);
                stack.pop();
                if inner_cut {
                    *cut = true;
                } else {
                    self.depth_memo.insert(name, depth);
                }
                best = depth;
            }
        }
        let objectish = map.contains_key("properties")
            || match map.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                _ => false,
            };
        let mut nested = 0;
        for key in ["properties", "patternProperties"] {
            if let Some(Value::Object(children)) = map.get(key) {
                for child in children.values() {
                    nested = nested.max(self.depth_of(child, stack, cut));
                }
            }
        }
        if let Some(extra @ Value::Object(_)) = map.get("additionalProperties") {
            nested = nested.max(self.depth_of(extra, stack, cut));
        }
        best = best.max(usize::from(objectish) + nested);
        for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
            if let Some(Value::Array(members)) = map.get(key) {
                for member in members {
                    best = best.max(self.depth_of(member, stack, cut));
                }
            }
        }
        if let Some(items) = map.get("items") {
            best = best.max(self.depth_of(items, stack, cut));
        }
        best
    }

    /// A flat schema (no `allOf`, no `$ref` at its top).
    fn flat(&mut self, m: &Map<String, Value>, at: &Path, level: usize) -> Result<Value, Gone> {
        let alternatives = match (m.get("anyOf"), m.get("oneOf")) {
            (Some(_), Some(_)) => {
                return Err(gone(
                    at,
                    "has both anyOf and oneOf, which cannot be expressed",
                ));
            }
            (Some(list), None) | (None, Some(list)) => Some(list),
            _ => None,
        };
        if let Some(list) = alternatives {
            return self.alternatives(m, list, at, level);
        }
        let mut types = value_types(m);
        if types.is_empty() {
            return Err(gone(
                at,
                format!("accepts any value, which has no form in {}", self.dialect),
            ));
        }
        let nullable = types.contains(&"null");
        types.retain(|t| *t != "null");
        let out = match types.as_slice() {
            [] => return Err(gone(at, "accepts only null")),
            [one] => self.typed(m, one, at, level, false)?,
            many => {
                // One alternative per type, each with the keywords that concern it.
                let (annotations, rest) = split_annotations(m);
                let members: Vec<Value> = many
                    .iter()
                    .map(|t| {
                        let mut member = rest.clone();
                        member.insert("type".into(), json!(t));
                        Value::Object(member)
                    })
                    .collect();
                self.choose(&annotations, &members, at, level)?
            }
        };
        Ok(if nullable { self.nullable(out) } else { out })
    }

    /// `anyOf`/`oneOf` (both become `anyOf`). Keywords next to the alternatives apply to
    /// each of them, so they are merged into every alternative.
    fn alternatives(
        &mut self,
        m: &Map<String, Value>,
        list: &Value,
        at: &Path,
        level: usize,
    ) -> Result<Value, Gone> {
        let Some(list) = list.as_array() else {
            return Err(gone(at, "has alternatives that are not a list"));
        };
        let (annotations, mut siblings) = split_annotations(m);
        siblings.remove("anyOf");
        siblings.remove("oneOf");
        siblings.retain(|k, _| !k.starts_with("x-"));
        if siblings.is_empty() {
            return self.choose(&annotations, list, at, level);
        }
        let mut members = Vec::new();
        for (i, member) in list.iter().enumerate() {
            let flat = match member {
                Value::Object(map) => flatten(&self.source, map),
                Value::Bool(true) => Ok(Cow::Owned(Map::new())),
                _ => Err("accepts no value".to_string()),
            };
            match flat.and_then(|flat| merge(&siblings, flat.as_ref())) {
                Ok(merged) => members.push(Value::Object(merged)),
                Err(reason) => {
                    // A member that contradicts its siblings accepts nothing: no loss.
                    let place = at.option(i + 1);
                    self.notes.push(format!(
                        "{} cannot be expressed ({reason}); left out",
                        show(&place.0)
                    ));
                }
            }
        }
        self.choose(&annotations, &members, at, level)
    }

    /// The converted alternatives as one schema: `anyOf`, or the only one left.
    fn choose(
        &mut self,
        annotations: &Map<String, Value>,
        members: &[Value],
        at: &Path,
        level: usize,
    ) -> Result<Value, Gone> {
        self.nodes += 1;
        let mut out: Vec<Value> = Vec::new();
        let mut null = false;
        for (i, member) in members.iter().enumerate() {
            if is_null_only(member) {
                null = true;
                continue;
            }
            let place = at.option(i + 1);
            match self.node(member, &place, level) {
                Ok(converted) => self.splice(converted, &mut out, &mut null),
                Err(g) => self.left_out(&place, g, false),
            }
        }
        if out.is_empty() {
            return Err(if null {
                gone(at, "accepts only null")
            } else {
                gone(
                    at,
                    format!("has no alternative with a form in {}", self.dialect),
                )
            });
        }
        let mut result = if out.len() == 1 {
            let single = out.pop().unwrap_or(Value::Null);
            self.annotate_single(single, annotations)
        } else {
            let mut map = Map::new();
            map.insert("anyOf".into(), Value::Array(out));
            self.annotations(annotations, &mut map, Vec::new(), None);
            Value::Object(map)
        };
        if null {
            result = self.nullable(result);
        }
        Ok(result)
    }

    /// Nested alternatives join the list; a `null` alternative becomes nullability.
    fn splice(&self, converted: Value, out: &mut Vec<Value>, null: &mut bool) {
        if let Value::Object(map) = &converted
            && let Some(Value::Array(members)) = map.get("anyOf")
            && map.keys().all(|k| k == "anyOf")
        {
            for member in members {
                if is_null_only(member) {
                    *null = true;
                } else {
                    out.push(member.clone());
                }
            }
            return;
        }
        out.push(converted);
    }

    /// The only alternative left takes the annotations of the place.
    fn annotate_single(&mut self, single: Value, annotations: &Map<String, Value>) -> Value {
        let has_text = annotations
            .keys()
            .any(|k| matches!(k.as_str(), "description" | "title"));
        let Value::Object(mut map) = single else {
            return single;
        };
        if map.contains_key("$ref") {
            if !has_text {
                return Value::Object(map);
            }
            // A `$ref` takes no siblings in strict mode; a one-member anyOf carries them.
            let mut wrapper = Map::new();
            wrapper.insert("anyOf".into(), json!([Value::Object(map)]));
            self.annotations(annotations, &mut wrapper, Vec::new(), None);
            return Value::Object(wrapper);
        }
        if has_text {
            map.remove("description");
            map.remove("title");
        }
        let mut outer = Map::new();
        self.annotations(annotations, &mut outer, Vec::new(), map.get(MARK_ENUM));
        for (k, v) in outer {
            map.insert(k, v);
        }
        Value::Object(map)
    }

    /// A flat schema of one type.
    fn typed(
        &mut self,
        m: &Map<String, Value>,
        t: &str,
        at: &Path,
        level: usize,
        root: bool,
    ) -> Result<Value, Gone> {
        self.nodes += 1;
        let mut out = Map::new();
        let mut hints: Vec<String> = Vec::new();
        out.insert("type".into(), json!(t));
        let listed = match (m.get("const"), m.get("enum")) {
            (Some(c), _) => Some(vec![c.clone()]),
            (None, Some(Value::Array(values))) => Some(values.clone()),
            _ => None,
        };
        let mut converted_enum = false;
        if let Some(values) = listed {
            let mut fitting: Vec<Value> = Vec::new();
            for v in values {
                if fits(&v, t) && !fitting.iter().any(|f| json::equal(f, &v)) {
                    fitting.push(v);
                }
            }
            if fitting.is_empty() {
                return Err(gone(at, "allows no value of its type"));
            }
            if self.strict() {
                if m.contains_key("const") {
                    out.insert("const".into(), fitting.swap_remove(0));
                } else {
                    out.insert("enum".into(), Value::Array(fitting));
                }
            } else if t == "string" {
                out.insert("enum".into(), Value::Array(fitting));
            } else {
                // Gemini takes string enums only: the values' JSON text stands in for them.
                let texts: Vec<String> = fitting.iter().map(Value::to_string).collect();
                let distinct: FxHashSet<&String> = texts.iter().collect();
                if distinct.len() != texts.len() {
                    return Err(gone(at, "has enum values that read the same as text"));
                }
                out.insert("type".into(), json!("string"));
                out.insert("enum".into(), json!(texts));
                out.insert(MARK_ENUM.into(), Value::Array(fitting));
                converted_enum = true;
            }
        }
        if !converted_enum {
            match t {
                "object" => self.object(m, at, level, root, &mut out, &mut hints)?,
                "array" => self.array(m, at, level, &mut out, &mut hints)?,
                "string" => self.string(m, &mut out, &mut hints),
                "number" | "integer" => self.number(m, t, &mut out, &mut hints),
                _ => {}
            }
        }
        self.unenforced(m, t, at);
        let annotations: Map<String, Value> = m
            .iter()
            .filter(|(k, _)| is_annotation(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let originals = out.get(MARK_ENUM).cloned();
        self.annotations(&annotations, &mut out, hints, originals.as_ref());
        Ok(Value::Object(out))
    }

    fn object(
        &mut self,
        m: &Map<String, Value>,
        at: &Path,
        level: usize,
        root: bool,
        out: &mut Map<String, Value>,
        hints: &mut Vec<String>,
    ) -> Result<(), Gone> {
        if self.strict() && self.in_def == 0 && level > STRICT_MAX_DEPTH {
            return Err(gone(
                at,
                format!(
                    "is nested deeper than the {STRICT_MAX_DEPTH} object levels openai-strict allows"
                ),
            ));
        }
        let listed = m.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut properties = Map::new();
        let mut optional: Vec<Value> = Vec::new();
        for (name, sub) in listed.into_iter().flatten() {
            let place = at.prop(name);
            let is_required = required.contains(&name.as_str());
            match self.node(sub, &place, level + 1) {
                Ok(mut converted) => {
                    if self.strict() && !is_required {
                        if accepts_null(&converted) {
                            self.notes.push(format!(
                                "{}: null stands for \"left out\" in openai-strict, so an explicit null cannot be sent",
                                show(&place.0)
                            ));
                        }
                        optional.push(json!(name));
                        converted = self.nullable(converted);
                    }
                    properties.insert(name.clone(), converted);
                }
                Err(g) => self.left_out(&place, g, is_required),
            }
        }
        for name in &required {
            if !listed.is_some_and(|l| l.contains_key(*name)) {
                self.notes.push(format!(
                    "{} requires \"{name}\", which has no schema of its own; it cannot be sent in {}",
                    show(&at.0),
                    self.dialect
                ));
            }
        }
        let extra = m.get("additionalProperties");
        let patterns = m
            .get("patternProperties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        let open = matches!(extra, Some(Value::Bool(true) | Value::Object(_))) || patterns;
        let none_listed = listed.is_none_or(|l| l.is_empty());
        if open {
            if none_listed && !root {
                return Err(gone(
                    at,
                    format!(
                        "is a map with free keys (additionalProperties), which has no form in {}",
                        self.dialect
                    ),
                ));
            }
            self.notes.push(format!(
                "{}: keys beyond the listed properties (additionalProperties) have no form in {}; they cannot be sent",
                show(&at.0),
                self.dialect
            ));
        }
        if properties.is_empty() && !root {
            let closed = extra == Some(&Value::Bool(false));
            if !none_listed {
                return Err(gone(
                    at,
                    format!("has no property with a form in {}", self.dialect),
                ));
            }
            if !closed {
                return Err(gone(
                    at,
                    format!(
                        "is a free-form object (no properties listed), which has no form in {}",
                        self.dialect
                    ),
                ));
            }
            if !self.strict() {
                let mut empty = gone(at, "is an empty object, which has no form in gemini");
                empty.trivial = true;
                return Err(empty);
            }
        }
        let names: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
        let kept_required: Vec<Value> = required
            .iter()
            .filter(|r| properties.contains_key(**r))
            .fold(Vec::new(), |mut acc, r| {
                if !acc.contains(&json!(r)) {
                    acc.push(json!(r));
                }
                acc
            });
        out.insert("properties".into(), Value::Object(properties));
        if self.strict() {
            out.insert("required".into(), Value::Array(names));
            out.insert("additionalProperties".into(), json!(false));
            if !optional.is_empty() {
                out.insert(MARK_OPTIONAL.into(), Value::Array(optional));
            }
            if let Some(n) = m.get("minProperties").and_then(Value::as_u64) {
                hints.push(format!("at least {n} properties"));
            }
            if let Some(n) = m.get("maxProperties").and_then(Value::as_u64) {
                hints.push(format!("at most {n} properties"));
            }
        } else {
            if !kept_required.is_empty() {
                out.insert("required".into(), Value::Array(kept_required));
            }
            for key in ["minProperties", "maxProperties"] {
                if let Some(n) = m.get(key).and_then(Value::as_u64) {
                    out.insert(key.into(), json!(n));
                }
            }
        }
        Ok(())
    }

    fn array(
        &mut self,
        m: &Map<String, Value>,
        at: &Path,
        level: usize,
        out: &mut Map<String, Value>,
        hints: &mut Vec<String>,
    ) -> Result<(), Gone> {
        if m.contains_key("prefixItems") {
            return Err(gone(
                at,
                format!(
                    "is a tuple (prefixItems), which has no form in {}",
                    self.dialect
                ),
            ));
        }
        let place = at.item();
        let items = match m.get("items") {
            None | Some(Value::Bool(true)) => {
                return Err(gone(
                    &place,
                    format!("accepts any value, which has no form in {}", self.dialect),
                ));
            }
            Some(items) => items,
        };
        let converted = self.node(items, &place, level)?;
        out.insert("items".into(), converted);
        for key in ["minItems", "maxItems"] {
            if let Some(n) = m.get(key).and_then(Value::as_u64) {
                out.insert(key.into(), json!(n));
            }
        }
        if m.get("uniqueItems") == Some(&Value::Bool(true)) {
            hints.push("items must be unique".into());
        }
        Ok(())
    }

    fn string(
        &mut self,
        m: &Map<String, Value>,
        out: &mut Map<String, Value>,
        hints: &mut Vec<String>,
    ) {
        for key in ["minLength", "maxLength"] {
            if let Some(n) = m.get(key).and_then(Value::as_u64) {
                out.insert(key.into(), json!(n));
            }
        }
        if let Some(pattern) = m.get("pattern").filter(|p| p.is_string()) {
            out.insert("pattern".into(), pattern.clone());
        }
        if let Some(format) = m.get("format").and_then(Value::as_str) {
            let supported = if self.strict() {
                STRICT_FORMATS.contains(&format)
            } else {
                GEMINI_STRING_FORMATS.contains(&format)
            };
            if supported {
                out.insert("format".into(), json!(format));
            } else if format != "binary" || !m.contains_key("contentEncoding") {
                hints.push(format!("format: {format}"));
            }
        }
        if let Some(encoding) = m.get("contentEncoding").and_then(Value::as_str) {
            hints.push(format!("{encoding}-encoded"));
        }
        if let Some(media) = m.get("contentMediaType").and_then(Value::as_str) {
            hints.push(format!("media type {media}"));
        }
    }

    fn number(
        &mut self,
        m: &Map<String, Value>,
        t: &str,
        out: &mut Map<String, Value>,
        hints: &mut Vec<String>,
    ) {
        for key in ["minimum", "maximum"] {
            if let Some(n) = m.get(key).filter(|n| n.is_number()) {
                out.insert(key.into(), n.clone());
            }
        }
        let exclusive = [
            ("exclusiveMinimum", "minimum", "greater than"),
            ("exclusiveMaximum", "maximum", "less than"),
        ];
        for (key, inclusive, words) in exclusive {
            let Some(bound) = m.get(key).and_then(Value::as_f64) else {
                continue;
            };
            if self.strict() {
                out.insert(key.into(), m[key].clone());
            } else if t == "integer" {
                // For integers an exclusive bound is an inclusive one a step further.
                let step = if key == "exclusiveMinimum" {
                    bound.floor() + 1.0
                } else {
                    bound.ceil() - 1.0
                };
                let tighter = match out.get(inclusive).and_then(Value::as_f64) {
                    Some(existing) if key == "exclusiveMinimum" => step.max(existing),
                    Some(existing) => step.min(existing),
                    None => step,
                };
                out.insert(inclusive.into(), number(tighter));
            } else {
                hints.push(format!("{words} {}", m[key]));
            }
        }
        if let Some(step) = m.get("multipleOf").filter(|n| n.is_number()) {
            if self.strict() {
                out.insert("multipleOf".into(), step.clone());
            } else {
                hints.push(format!("a multiple of {step}"));
            }
        }
        if !self.strict()
            && let Some(format) = m.get("format").and_then(Value::as_str)
        {
            let supported = match t {
                "integer" => ["int32", "int64"].contains(&format),
                _ => ["float", "double"].contains(&format),
            };
            if supported {
                out.insert("format".into(), json!(format));
            }
        }
    }

    /// Keywords that restrict values but have no form in either dialect: noted.
    fn unenforced(&mut self, m: &Map<String, Value>, t: &str, at: &Path) {
        for key in m.keys() {
            let concerns = match key.as_str() {
                "not" | "if" | "then" | "else" => true,
                "dependentRequired"
                | "dependentSchemas"
                | "propertyNames"
                | "unevaluatedProperties" => t == "object",
                "contains" | "minContains" | "maxContains" | "unevaluatedItems" => t == "array",
                _ => false,
            };
            if concerns {
                self.notes.push(format!(
                    "{}: `{key}` has no form in {}; not enforced by the model",
                    show(&at.0),
                    self.dialect
                ));
            }
        }
    }

    /// Title, description and what the dialect can only say in words.
    fn annotations(
        &mut self,
        annotations: &Map<String, Value>,
        out: &mut Map<String, Value>,
        mut hints: Vec<String>,
        enum_originals: Option<&Value>,
    ) {
        if let Some(title) = annotations.get("title").filter(|t| t.is_string()) {
            out.insert("title".into(), title.clone());
        }
        if let Some(default) = annotations.get("default") {
            if self.strict() {
                if !default.is_null() {
                    hints.insert(0, format!("default: {}", shorten(&default.to_string())));
                }
            } else {
                match enum_originals.and_then(Value::as_array) {
                    Some(originals) => {
                        if originals.iter().any(|o| json::equal(o, default)) {
                            out.insert("default".into(), json!(default.to_string()));
                        }
                    }
                    None => {
                        out.insert("default".into(), default.clone());
                    }
                }
            }
        }
        if annotations.get("deprecated") == Some(&Value::Bool(true)) {
            hints.push("deprecated".into());
        }
        let text = annotations.get("description").and_then(Value::as_str);
        let description = match (text, hints.is_empty()) {
            (Some(text), true) => Some(text.to_string()),
            (Some(text), false) => Some(format!("{} ({})", text.trim_end(), hints.join("; "))),
            (None, false) => Some(hints.join("; ")),
            (None, true) => None,
        };
        if let Some(description) = description {
            out.insert("description".into(), json!(description));
        }
    }

    /// `schema` or null.
    fn nullable(&self, schema: Value) -> Value {
        if accepts_null(&schema) {
            return schema;
        }
        let Value::Object(mut map) = schema else {
            return schema;
        };
        if self.strict() {
            if let Some(Value::Array(members)) = map.get_mut("anyOf") {
                members.push(json!({"type": "null"}));
                return Value::Object(map);
            }
            if let Some(Value::String(t)) = map.get("type").cloned() {
                map.insert("type".into(), json!([t, "null"]));
                if let Some(c) = map.remove("const") {
                    map.insert("enum".into(), json!([c]));
                }
                if let Some(Value::Array(values)) = map.get_mut("enum") {
                    values.push(Value::Null);
                }
                return Value::Object(map);
            }
            return json!({ "anyOf": [Value::Object(map), {"type": "null"}] });
        }
        if let Some(Value::Array(members)) = map.get_mut("anyOf") {
            for member in members.iter_mut() {
                *member = self.nullable(std::mem::take(member));
            }
        } else {
            map.insert("nullable".into(), json!(true));
        }
        Value::Object(map)
    }

    /// Notes a property or alternative left out because of `g`.
    fn left_out(&mut self, place: &Path, g: Gone, required: bool) {
        if g.trivial && !required {
            return;
        }
        let mut note = if g.at == place.0 {
            format!("{} {}; left out", show(&place.0), g.reason)
        } else {
            format!("{} left out: {} {}", show(&place.0), show(&g.at), g.reason)
        };
        if required {
            note.push_str(&format!(
                " (the API requires it, so the tool cannot be called fully in {})",
                self.dialect
            ));
        }
        self.notes.push(note);
    }
}

/// The types a flat schema allows, `number` absorbing `integer`; inferred from the
/// keywords that concern one type when `type` is absent (being stricter than the
/// original is safe: anything the model sends still fits it).
fn value_types(m: &Map<String, Value>) -> Vec<&'static str> {
    const TYPES: [&str; 7] = [
        "null", "boolean", "object", "array", "number", "integer", "string",
    ];
    let mut out: Vec<&'static str> = Vec::new();
    let mut add = |t: &str| {
        if let Some(known) = TYPES.iter().find(|k| **k == t)
            && !out.contains(known)
        {
            out.push(known);
        }
    };
    match m.get("type") {
        Some(Value::String(t)) => add(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).for_each(&mut add),
        _ => {
            let listed = match (m.get("const"), m.get("enum")) {
                (Some(c), _) => vec![c.clone()],
                (None, Some(Value::Array(values))) => values.clone(),
                _ => Vec::new(),
            };
            if !listed.is_empty() {
                listed.iter().for_each(|v| add(type_of(v)));
            } else {
                let families: [(&str, &[&str]); 4] = [
                    (
                        "object",
                        &[
                            "properties",
                            "required",
                            "additionalProperties",
                            "patternProperties",
                            "minProperties",
                            "maxProperties",
                        ],
                    ),
                    (
                        "array",
                        &[
                            "items",
                            "prefixItems",
                            "minItems",
                            "maxItems",
                            "uniqueItems",
                        ],
                    ),
                    ("string", &["minLength", "maxLength", "pattern"]),
                    (
                        "number",
                        &[
                            "minimum",
                            "maximum",
                            "exclusiveMinimum",
                            "exclusiveMaximum",
                            "multipleOf",
                        ],
                    ),
                ];
                for (t, keys) in families {
                    if keys.iter().any(|k| m.contains_key(*k)) {
                        add(t);
                    }
                }
            }
        }
    }
    if out.contains(&"number") {
        out.retain(|t| *t != "integer");
    }
    out
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `v` is an instance of JSON Schema type `t`.
fn fits(v: &Value, t: &str) -> bool {
    let actual = type_of(v);
    actual == t || (t == "number" && actual == "integer")
}

fn split_annotations(m: &Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    let mut annotations = Map::new();
    let mut rest = Map::new();
    for (k, v) in m {
        if is_annotation(k) {
            annotations.insert(k.clone(), v.clone());
        } else {
            rest.insert(k.clone(), v.clone());
        }
    }
    (annotations, rest)
}

fn is_null_only(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    let null_type = match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.len() == 1 && ts[0] == "null",
        _ => false,
    };
    let null_value =
        map.get("const") == Some(&Value::Null) || map.get("enum") == Some(&json!([null]));
    (null_type || null_value)
        && map
            .keys()
            .all(|k| matches!(k.as_str(), "type" | "const" | "enum") || is_annotation(k))
}

/// Whether the converted `schema` takes `null`.
pub(super) fn accepts_null(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    let typed = match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => false,
    };
    typed
        || map.get("nullable") == Some(&Value::Bool(true))
        || map
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|members| members.iter().any(accepts_null))
}

fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}
