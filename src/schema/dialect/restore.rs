//! The way back: arguments valid against an adapted schema → the arguments the original
//! schema expects.
//!
//! The adapted schema is walked along the value, with the conversion's markers saying what
//! to undo: [`MARK_OPTIONAL`] (openai-strict: `null` for these properties means absent)
//! and [`MARK_ENUM`] (gemini: enum text → the original value). At an `anyOf` the first
//! alternative the value structurally fits (types, listed and required properties, enum
//! values, recursively) is the one it was written for. Whatever the walk does not
//! recognize is passed through unchanged: the original schema's validation reports it.

use serde_json::{Map, Value};

use super::marks::{MARK_ENUM, MARK_OPTIONAL};
use crate::json;

/// `$ref` hops followed at one position before giving up (an alias cycle).
const MAX_HOPS: usize = 64;
/// Value nesting walked; deeper values pass through unchanged.
const MAX_NESTING: usize = 256;

pub(super) fn restore(marked: &Value, arguments: Map<String, Value>) -> Map<String, Value> {
    match value(marked, marked, Value::Object(arguments), 0) {
        Value::Object(map) => map,
        // Unreachable: an object stays an object.
        _ => Map::new(),
    }
}

fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..MAX_HOPS {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return schema;
        };
        let Some(target) = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
        else {
            return schema;
        };
        schema = target;
    }
    schema
}

fn value(root: &Value, schema: &Value, v: Value, nesting: usize) -> Value {
    if nesting > MAX_NESTING {
        return v;
    }
    let schema = resolve(root, schema);
    if let Some(Value::Array(members)) = schema.get("anyOf") {
        return match members.iter().find(|m| fits(root, m, &v, 0)) {
            Some(member) => value(root, member, v, nesting + 1),
            None => v,
        };
    }
    if let Some(Value::Array(originals)) = schema.get(MARK_ENUM) {
        let texts = schema.get("enum").and_then(Value::as_array);
        if let (Value::String(text), Some(texts)) = (&v, texts)
            && let Some(i) = texts.iter().position(|t| t.as_str() == Some(text))
            && let Some(original) = originals.get(i)
        {
            return original.clone();
        }
        return v;
    }
    match v {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return Value::Object(map);
            };
            let optional: Vec<&str> = schema
                .get(MARK_OPTIONAL)
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            for (name, item) in map {
                if item.is_null() && optional.contains(&name.as_str()) {
                    continue;
                }
                let restored = match properties.get(&name) {
                    Some(sub) => value(root, sub, item, nesting + 1),
                    None => item,
                };
                out.insert(name, restored);
            }
            Value::Object(out)
        }
        Value::Array(items) => match schema.get("items") {
            Some(sub) => Value::Array(
                items
                    .into_iter()
                    .map(|item| value(root, sub, item, nesting + 1))
                    .collect(),
            ),
            None => Value::Array(items),
        },
        other => other,
    }
}

/// Whether `v` has the shape `schema` describes: types, enum values, listed and required
/// properties, items (string and number bounds are not looked at).
fn fits(root: &Value, schema: &Value, v: &Value, nesting: usize) -> bool {
    if nesting > MAX_NESTING {
        return true;
    }
    let schema = resolve(root, schema);
    let Value::Object(map) = schema else {
        return schema != &Value::Bool(false);
    };
    if let Some(Value::Array(members)) = map.get("anyOf") {
        return members.iter().any(|m| fits(root, m, v, nesting + 1));
    }
    if v.is_null() && map.get("nullable") == Some(&Value::Bool(true)) {
        return true;
    }
    if let Some(t) = map.get("type") {
        let ok = match t {
            Value::String(t) => is_type(v, t),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| is_type(v, t)),
            _ => true,
        };
        if !ok {
            return false;
        }
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && !values.iter().any(|e| json::equal(e, v))
    {
        return false;
    }
    if let Some(c) = map.get("const")
        && !json::equal(c, v)
    {
        return false;
    }
    match v {
        Value::Object(object) => {
            let properties = map.get("properties").and_then(Value::as_object);
            if let Some(properties) = properties {
                // Neither dialect lets the model add keys, so an unknown key rules it out.
                if object.keys().any(|k| !properties.contains_key(k)) {
                    return false;
                }
                for (name, item) in object {
                    if !fits(root, &properties[name], item, nesting + 1) {
                        return false;
                    }
                }
            }
            let required = map.get("required").and_then(Value::as_array);
            required
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .all(|name| object.contains_key(name))
        }
        Value::Array(items) => match map.get("items") {
            Some(sub) => items.iter().all(|item| fits(root, sub, item, nesting + 1)),
            None => true,
        },
        _ => true,
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => true,
    }
}
