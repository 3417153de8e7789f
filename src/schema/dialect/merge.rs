//! `$ref` resolution inside one published schema, and `allOf` merged into one schema.
//!
//! Neither dialect takes `allOf`, so its members (and the schema around them) are merged
//! into a single schema object with the same meaning: properties and `required` united,
//! types and enums intersected, bounds tightened. When the meaning cannot be kept (two
//! different `pattern`s, alternatives in two members, contradicting types) the merge fails
//! with a reason and the caller leaves the value out. Members that are `$ref`s are read
//! through, so the result holds no `allOf`, and no `$ref` at its top.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::json;

/// Depth of `allOf`/`$ref` nesting read through before giving up (a cycle through `allOf`
/// has no finite merge).
const MAX_NESTING: usize = 32;

/// Keywords that describe a value without restricting it: the outermost one wins.
pub(super) const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

pub(super) fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key)
}

/// The root of a published schema, where `#/$defs/...` references resolve.
#[derive(Clone, Copy)]
pub(super) struct Source<'a> {
    defs: Option<&'a Map<String, Value>>,
}

impl<'a> Source<'a> {
    pub(super) fn new(root: &'a Value) -> Source<'a> {
        Source {
            defs: root.get("$defs").and_then(Value::as_object),
        }
    }

    /// The definition a `$ref` names: `#/$defs/<name>` only, as restmcp publishes them.
    pub(super) fn resolve(&self, reference: &str) -> Option<(String, &'a Value)> {
        let name = reference.strip_prefix("#/$defs/")?;
        if name.contains('/') {
            return None;
        }
        let name = crate::json::unescape_token(name).into_owned();
        let target = self.defs?.get(&name)?;
        Some((name, target))
    }
}

/// `map` as one schema without `allOf` and without a `$ref` at its top: a `$ref` is read
/// through (its target's keywords under the referring site's annotations), `allOf` members
/// merged in.
pub(super) fn flatten<'m>(
    source: &Source<'_>,
    map: &'m Map<String, Value>,
) -> Result<Cow<'m, Map<String, Value>>, String> {
    if !map.contains_key("$ref") && !map.contains_key("allOf") {
        // The common case, borrowed: copying would copy the whole subtree.
        return Ok(Cow::Borrowed(map));
    }
    flatten_at(source, map, 0).map(Cow::Owned)
}

fn flatten_at(
    source: &Source<'_>,
    map: &Map<String, Value>,
    nesting: usize,
) -> Result<Map<String, Value>, String> {
    if nesting > MAX_NESTING {
        return Err("refers to itself through allOf or $ref".into());
    }
    if !map.contains_key("$ref") && !map.contains_key("allOf") {
        return Ok(map.clone());
    }
    let mut base: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| *k != "$ref" && *k != "allOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(reference) = map.get("$ref") {
        let target = reference
            .as_str()
            .and_then(|r| source.resolve(r))
            .ok_or_else(|| format!("refers to {reference}, which is not in the schema"))?
            .1;
        let target = member(source, target, nesting + 1)?;
        base = merge(&base, &target)?;
    }
    if let Some(members) = map.get("allOf") {
        let members = members
            .as_array()
            .ok_or("has an allOf that is not a list")?;
        for m in members {
            let m = member(source, m, nesting + 1)?;
            base = merge(&base, &m)?;
        }
    }
    Ok(base)
}

fn member(
    source: &Source<'_>,
    schema: &Value,
    nesting: usize,
) -> Result<Map<String, Value>, String> {
    match schema {
        Value::Object(map) => flatten_at(source, map, nesting),
        Value::Bool(true) => Ok(Map::new()),
        Value::Bool(false) => Err("accepts no value (false)".into()),
        other => Err(format!("has {other} where a schema belongs")),
    }
}

/// Both schemas at once (`allOf: [a, b]`), as one schema. `a`'s annotations win.
pub(super) fn merge(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    // `additionalProperties: true` is what an absent keyword means already.
    let open = |m: &Map<String, Value>| {
        let mut m = m.clone();
        if m.get("additionalProperties") == Some(&Value::Bool(true)) {
            m.remove("additionalProperties");
        }
        m
    };
    let (a, b) = (&open(a), &open(b));
    let mut out = a.clone();
    for (key, theirs) in b {
        let Some(ours) = out.get(key).cloned() else {
            out.insert(key.clone(), theirs.clone());
            continue;
        };
        if &ours == theirs {
            continue;
        }
        let merged = match key.as_str() {
            k if is_annotation(k) => match k {
                "deprecated" | "readOnly" | "writeOnly" => {
                    Value::Bool(ours == Value::Bool(true) || theirs == &Value::Bool(true))
                }
                _ => ours,
            },
            "type" => intersect_types(&ours, theirs)?,
            "properties" => merge_properties(&ours, theirs),
            "required" => union(&ours, theirs),
            "enum" => {
                let theirs = theirs.as_array().cloned().unwrap_or_default();
                let kept: Vec<Value> = ours
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|v| theirs.iter().any(|t| json::equal(t, v)))
                    .cloned()
                    .collect();
                if kept.is_empty() {
                    return Err("its allOf members allow no common enum value".into());
                }
                Value::Array(kept)
            }
            "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties"
            | "minContains" => bound(&ours, theirs, true),
            "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties"
            | "maxContains" => bound(&ours, theirs, false),
            "uniqueItems" => Value::Bool(ours == Value::Bool(true) || theirs == &Value::Bool(true)),
            // Annotations in 2020-12 unless a validator opts in: the first one stays.
            "format" | "contentEncoding" | "contentMediaType" => ours,
            "items" | "not" | "contains" | "propertyNames" => {
                serde_json::json!({ "allOf": [ours, theirs] })
            }
            "additionalProperties" => {
                return Err("its allOf members restrict extra keys differently".into());
            }
            other => return Err(format!("its allOf members disagree on {other}")),
        };
        out.insert(key.clone(), merged);
    }
    if let (Some(x), Some(y)) = (a.get("const"), b.get("const"))
        && !json::equal(x, y)
    {
        return Err("its allOf members require different constants".into());
    }
    if out.contains_key("anyOf") && out.contains_key("oneOf") {
        return Err("has alternatives (anyOf, oneOf) in more than one allOf member".into());
    }
    closed_to(a, b, &mut out)?;
    closed_to(b, a, &mut out)?;
    Ok(out)
}

/// `additionalProperties: false` in one member forbids every property the other member
/// adds: those are removed, and a required one makes the merge fail.
fn closed_to(
    closed: &Map<String, Value>,
    other: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), String> {
    let Some(extra) = closed.get("additionalProperties") else {
        return Ok(());
    };
    let own: Vec<&String> = closed
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    let foreign: Vec<String> = other
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().filter(|k| !own.contains(k)).cloned().collect())
        .unwrap_or_default();
    if foreign.is_empty() {
        return Ok(());
    }
    if extra != &Value::Bool(false) {
        return Err("an allOf member constrains the properties another one adds".into());
    }
    let required: Vec<&str> = out
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(name) = foreign.iter().find(|f| required.contains(&f.as_str())) {
        return Err(format!(
            "one allOf member requires \"{name}\", another forbids extra properties"
        ));
    }
    if let Some(Value::Object(properties)) = out.get_mut("properties") {
        properties.retain(|k, _| !foreign.contains(k));
    }
    Ok(())
}

fn merge_properties(ours: &Value, theirs: &Value) -> Value {
    let mut out = ours.as_object().cloned().unwrap_or_default();
    for (name, schema) in theirs.as_object().into_iter().flatten() {
        match out.get(name) {
            Some(existing) if existing != schema => {
                let both = serde_json::json!({ "allOf": [existing, schema] });
                out.insert(name.clone(), both);
            }
            Some(_) => {}
            None => {
                out.insert(name.clone(), schema.clone());
            }
        }
    }
    Value::Object(out)
}

fn union(ours: &Value, theirs: &Value) -> Value {
    let mut out: Vec<Value> = ours.as_array().cloned().unwrap_or_default();
    for v in theirs.as_array().into_iter().flatten() {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    Value::Array(out)
}

fn bound(ours: &Value, theirs: &Value, lower: bool) -> Value {
    match (ours.as_f64(), theirs.as_f64()) {
        (Some(x), Some(y)) if (y > x) == lower && y != x => theirs.clone(),
        (Some(_), _) => ours.clone(),
        _ => theirs.clone(),
    }
}

fn type_names(value: &Value) -> Vec<String> {
    match value {
        Value::String(t) => vec![t.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    }
}

fn intersect_types(ours: &Value, theirs: &Value) -> Result<Value, String> {
    let a = type_names(ours);
    let b = type_names(theirs);
    let mut out: Vec<String> = Vec::new();
    for t in &a {
        let fits = b.contains(t) || (t == "integer" && b.iter().any(|x| x == "number"));
        if fits && !out.contains(t) {
            out.push(t.clone());
        }
    }
    for t in &b {
        if t == "integer" && a.iter().any(|x| x == "number") && !out.contains(t) {
            out.push(t.clone());
        }
    }
    match out.as_slice() {
        [] => Err(format!(
            "its allOf members want different types ({ours} and {theirs})"
        )),
        [one] => Ok(Value::String(one.clone())),
        _ => Ok(Value::Array(out.into_iter().map(Value::String).collect())),
    }
}
