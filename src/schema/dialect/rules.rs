//! Each dialect's rules as a checker, written apart from the conversion on purpose: it is
//! what the tests hold [`super::adapt_input`] to. Every rule reads as the documentation
//! (or the API's observed rejection) states it; see the module documentation of
//! [`super`] for the sources. A schema passes when the list is empty.

use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

/// Full: a valid JSON Schema 2020-12.
pub(super) fn full(schema: &Value) -> Vec<String> {
    match jsonschema::draft202012::meta::validate(schema) {
        Ok(()) => Vec::new(),
        Err(error) => vec![format!("not valid JSON Schema 2020-12: {error}")],
    }
}

const STRICT_KEYWORDS: [&str; 23] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
const STRICT_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];
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

/// OpenAI Structured Outputs (function calling with `strict: true`).
pub(super) fn openai_strict(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Value::Object(root) = schema else {
        return vec!["the root is not a schema object".into()];
    };
    if root.get("type") != Some(&Value::String("object".into())) {
        out.push("the root is not `type: object`".into());
    }
    if root.contains_key("anyOf") {
        out.push("the root is an anyOf".into());
    }
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut counts = Counts::default();
    strict_node(schema, "#", true, defs, &mut out, &mut counts);
    if let Some(defs) = defs {
        for (name, def) in defs {
            if alias_cycle(name, defs) {
                out.push(format!(
                    "#/$defs/{name}: a cycle of $refs that names no schema"
                ));
            }
            counts.chars += name.len();
            strict_node(
                def,
                &format!("#/$defs/{name}"),
                false,
                Some(defs),
                &mut out,
                &mut counts,
            );
        }
    }
    if counts.properties > 5_000 {
        out.push(format!(
            "{} object properties (at most 5,000)",
            counts.properties
        ));
    }
    if counts.enum_values > 1_000 {
        out.push(format!(
            "{} enum values (at most 1,000)",
            counts.enum_values
        ));
    }
    if counts.chars > 120_000 {
        out.push(format!(
            "{} characters of names, enum and const values (at most 120,000)",
            counts.chars
        ));
    }
    let depth = object_depth(schema, defs, &mut Vec::new(), &mut 0);
    if depth > 10 {
        out.push(format!("{depth} levels of object nesting (at most 10)"));
    }
    out
}

/// Whether definition `name` is only a `$ref` that leads back to itself.
fn alias_cycle(name: &str, defs: &Map<String, Value>) -> bool {
    let mut seen = vec![name];
    let mut current = name;
    while let Some(next) = defs
        .get(current)
        .and_then(|d| d.get("$ref"))
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        if seen.contains(&next) {
            return true;
        }
        seen.push(next);
        current = next;
    }
    false
}

#[derive(Default)]
struct Counts {
    properties: usize,
    enum_values: usize,
    chars: usize,
    /// Schemas being checked inside one another.
    nesting: usize,
}

/// Schemas nested inside one another that are checked; deeper is a violation of its own.
const MAX_NESTING: usize = 512;

fn strict_node(
    schema: &Value,
    at: &str,
    root: bool,
    defs: Option<&Map<String, Value>>,
    out: &mut Vec<String>,
    counts: &mut Counts,
) {
    if counts.nesting >= MAX_NESTING {
        out.push(format!("{at}: nested past {MAX_NESTING} schemas"));
        return;
    }
    counts.nesting += 1;
    strict_keywords(schema, at, root, defs, out, counts);
    counts.nesting -= 1;
}

fn strict_keywords(
    schema: &Value,
    at: &str,
    root: bool,
    defs: Option<&Map<String, Value>>,
    out: &mut Vec<String>,
    counts: &mut Counts,
) {
    let Value::Object(map) = schema else {
        out.push(format!("{at}: a boolean or non-object schema"));
        return;
    };
    for key in map.keys() {
        if !STRICT_KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{at}: keyword `{key}` is not supported"));
        }
    }
    if map.contains_key("$defs") && !root {
        out.push(format!("{at}: $defs below the root"));
    }
    if let Some(reference) = map.get("$ref") {
        if map.len() > 1 {
            out.push(format!("{at}: $ref with sibling keywords"));
        }
        let target = reference.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
        let known = target.is_some_and(|name| defs.is_some_and(|d| d.contains_key(name)))
            || reference == "#";
        if !known {
            out.push(format!("{at}: $ref {reference} does not name a definition"));
        }
        return;
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            if names.len() != 2 || !names.contains(&"null") || names[0] == names[1] {
                out.push(format!("{at}: a type list other than [T, \"null\"]"));
            }
            names
        }
        Some(other) => {
            out.push(format!("{at}: type {other}"));
            Vec::new()
        }
        None => Vec::new(),
    };
    for t in &types {
        if !STRICT_TYPES.contains(t) {
            out.push(format!("{at}: unknown type {t}"));
        }
    }
    if let Some(members) = map.get("anyOf") {
        if map.contains_key("type") {
            out.push(format!("{at}: anyOf next to type"));
        }
        match members.as_array() {
            Some(members) if !members.is_empty() => {
                for (i, member) in members.iter().enumerate() {
                    strict_node(member, &format!("{at}/anyOf/{i}"), false, defs, out, counts);
                }
            }
            _ => out.push(format!("{at}: anyOf is not a non-empty list")),
        }
    } else if types.is_empty() {
        out.push(format!("{at}: no type"));
    }
    let object = types.contains(&"object");
    let array = types.contains(&"array");
    if map.contains_key("properties") && !object {
        out.push(format!("{at}: properties on a non-object"));
    }
    if map.contains_key("items") && !array {
        out.push(format!("{at}: items on a non-array"));
    }
    if object {
        match map.get("properties") {
            Some(Value::Object(properties)) => {
                counts.properties += properties.len();
                let names: FxHashSet<&str> = properties.keys().map(String::as_str).collect();
                let required: FxHashSet<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if names != required {
                    out.push(format!(
                        "{at}: required does not list exactly all properties"
                    ));
                }
                for (name, child) in properties {
                    counts.chars += name.len();
                    strict_node(
                        child,
                        &format!("{at}/properties/{name}"),
                        false,
                        defs,
                        out,
                        counts,
                    );
                }
            }
            _ => out.push(format!("{at}: an object without properties")),
        }
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(format!(
                "{at}: an object without additionalProperties: false"
            ));
        }
    } else if map.contains_key("additionalProperties") {
        out.push(format!("{at}: additionalProperties on a non-object"));
    }
    if array {
        match map.get("items") {
            Some(items @ Value::Object(_)) => {
                strict_node(items, &format!("{at}/items"), false, defs, out, counts)
            }
            _ => out.push(format!("{at}: an array without an items schema")),
        }
    }
    if let Some(format) = map.get("format") {
        let ok = format.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f));
        if !ok || !types.contains(&"string") {
            out.push(format!("{at}: format {format} is not supported"));
        }
    }
    if let Some(values) = map.get("enum") {
        match values.as_array() {
            Some(values) if !values.is_empty() => {
                counts.enum_values += values.len();
                let chars: usize = values.iter().filter_map(Value::as_str).map(str::len).sum();
                counts.chars += chars;
                if values.len() > 250 && chars > 15_000 {
                    out.push(format!(
                        "{at}: an enum of {} values with {chars} characters (at most 15,000 past 250 values)",
                        values.len()
                    ));
                }
            }
            _ => out.push(format!("{at}: enum is not a non-empty list")),
        }
    }
    if let Some(Value::String(c)) = map.get("const") {
        counts.chars += c.len();
    }
}

/// Object levels along the deepest path, following references; a reference back into the
/// current chain (recursion, which the documentation allows) counts nothing further.
fn object_depth(
    schema: &Value,
    defs: Option<&Map<String, Value>>,
    chain: &mut Vec<String>,
    steps: &mut usize,
) -> usize {
    depth_within(schema, defs, chain, steps, 0)
}

fn depth_within(
    schema: &Value,
    defs: Option<&Map<String, Value>>,
    chain: &mut Vec<String>,
    steps: &mut usize,
    nesting: usize,
) -> usize {
    let Value::Object(map) = schema else { return 0 };
    *steps += 1;
    if *steps > 1_000_000 || nesting > MAX_NESTING {
        return usize::MAX / 2;
    }
    let mut deeper = |child: &Value, chain: &mut Vec<String>| {
        depth_within(child, defs, chain, steps, nesting + 1)
    };
    if let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        if chain.iter().any(|c| c == name) {
            return 0;
        }
        let Some(target) = defs.and_then(|d| d.get(name)) else {
            return 0;
        };
        chain.push(name.to_string());
        let depth = deeper(target, chain);
        chain.pop();
        return depth;
    }
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    let mut inner = 0;
    if let Some(Value::Object(properties)) = map.get("properties") {
        for child in properties.values() {
            inner = inner.max(deeper(child, chain));
        }
    }
    let mut same = 0;
    if let Some(items) = map.get("items") {
        same = same.max(deeper(items, chain));
    }
    if let Some(Value::Array(members)) = map.get("anyOf") {
        for member in members {
            same = same.max(deeper(member, chain));
        }
    }
    (usize::from(is_object) + inner).max(same)
}

const GEMINI_KEYWORDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
const GEMINI_TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "object", "array"];

/// The Gemini API's `Schema` object.
pub(super) fn gemini(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if schema.get("type") != Some(&Value::String("object".into())) {
        out.push("the root is not `type: object`".into());
    }
    gemini_node(schema, "#", true, &mut out, 0);
    out
}

fn gemini_node(schema: &Value, at: &str, root: bool, out: &mut Vec<String>, nesting: usize) {
    if nesting > MAX_NESTING {
        out.push(format!("{at}: nested past {MAX_NESTING} schemas"));
        return;
    }
    let Value::Object(map) = schema else {
        out.push(format!("{at}: a boolean or non-object schema"));
        return;
    };
    for key in map.keys() {
        if !GEMINI_KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{at}: keyword `{key}` is not supported"));
        }
    }
    if map.contains_key("example") && !root {
        out.push(format!("{at}: example below the root"));
    }
    if let Some(nullable) = map.get("nullable")
        && !nullable.is_boolean()
    {
        out.push(format!("{at}: nullable is not a boolean"));
    }
    let t = match map.get("type") {
        Some(Value::String(t)) if GEMINI_TYPES.contains(&t.as_str()) => Some(t.as_str()),
        Some(other) => {
            out.push(format!("{at}: type {other} is not one of {GEMINI_TYPES:?}"));
            None
        }
        None => None,
    };
    match (map.get("anyOf"), t) {
        (Some(_), Some(_)) => out.push(format!("{at}: anyOf next to type")),
        (None, None) => out.push(format!("{at}: no type")),
        _ => {}
    }
    if let Some(members) = map.get("anyOf") {
        match members.as_array() {
            Some(members) if !members.is_empty() => {
                for (i, member) in members.iter().enumerate() {
                    gemini_node(member, &format!("{at}/anyOf/{i}"), false, out, nesting + 1);
                }
            }
            _ => out.push(format!("{at}: anyOf is not a non-empty list")),
        }
    }
    if let Some(values) = map.get("enum") {
        let strings = values
            .as_array()
            .is_some_and(|v| !v.is_empty() && v.iter().all(Value::is_string));
        if !strings || t != Some("string") {
            out.push(format!("{at}: enum other than strings of a string"));
        }
    }
    if let Some(format) = map.get("format") {
        let allowed: &[&str] = match t {
            Some("string") => &["enum", "date-time"],
            Some("number") => &["float", "double"],
            Some("integer") => &["int32", "int64"],
            _ => &[],
        };
        if !format.as_str().is_some_and(|f| allowed.contains(&f)) {
            out.push(format!("{at}: format {format} is not supported here"));
        }
    }
    if map.contains_key("properties") && t != Some("object") {
        out.push(format!("{at}: properties on a non-object"));
    }
    if map.contains_key("items") && t != Some("array") {
        out.push(format!("{at}: items on a non-array"));
    }
    if t == Some("object") {
        let properties = map.get("properties").and_then(Value::as_object);
        if properties.is_none_or(|p| p.is_empty()) && !root {
            out.push(format!("{at}: an object without properties"));
        }
        if let Some(required) = map.get("required") {
            let listed = |name: &Value| {
                name.as_str()
                    .is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)))
            };
            if !required.as_array().is_some_and(|r| r.iter().all(listed)) {
                out.push(format!(
                    "{at}: required names a property that is not listed"
                ));
            }
        }
        for (name, child) in properties.into_iter().flatten() {
            gemini_node(
                child,
                &format!("{at}/properties/{name}"),
                false,
                out,
                nesting + 1,
            );
        }
    }
    if t == Some("array") {
        match map.get("items") {
            Some(items) => gemini_node(items, &format!("{at}/items"), false, out, nesting + 1),
            None => out.push(format!("{at}: an array without items")),
        }
    }
}
