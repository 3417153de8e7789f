//! The validator generation checks its candidates with: JSON Schema 2020-12 over the
//! root's `$defs`, in full ([`Mode::Full`]) or only for what construction does not
//! guarantee ([`Mode::Local`]), bounded by [`CHECK_DEPTH`] nested calls and the call's step
//! budget. Written here rather than taken from the `jsonschema` crate for speed (see
//! [`super`]); the tests hold it to `jsonschema`'s verdicts.

use serde_json::{Map, Value};

use super::Generator;
use super::format::format_matches;
use super::number::{count, is_multiple};
use super::pattern::pattern_matches;
use crate::json;

/// Nested validator calls.
const CHECK_DEPTH: usize = 160;

/// How much of a schema the validator checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Everything.
    Full,
    /// Only what generation does not guarantee by construction: the keywords about this
    /// value itself, `oneOf`, `not`, `if`, `contains`, `propertyNames`… — not `$ref`,
    /// `allOf`, `anyOf` (flattened) nor property and item values (built from their schemas).
    Local,
}

impl<'a> Generator<'a> {
    pub(super) fn valid_all(&mut self, value: &Value, conj: &[&'a Value]) -> bool {
        conj.iter().all(|schema| self.valid(value, schema, 0))
    }

    pub(super) fn valid(&mut self, value: &Value, schema: &'a Value, depth: usize) -> bool {
        self.steps += 1;
        if depth > CHECK_DEPTH || self.exhausted() {
            return false;
        }
        match schema {
            Value::Bool(b) => *b,
            Value::Object(map) => self.check(value, map, Mode::Full, depth),
            _ => true,
        }
    }

    pub(super) fn check(
        &mut self,
        value: &Value,
        map: &'a Map<String, Value>,
        mode: Mode,
        depth: usize,
    ) -> bool {
        let full = mode == Mode::Full;
        let next = depth + 1;
        for (keyword, s) in map {
            let ok = match keyword.as_str() {
                "$ref" if full => match s.as_str().and_then(|r| self.resolve(r)) {
                    Some(target) => self.valid(value, target, next),
                    None => true,
                },
                "type" => type_matches(value, s),
                "enum" => s
                    .as_array()
                    .is_none_or(|values| values.iter().any(|v| json::equal(v, value))),
                "const" => json::equal(s, value),
                "multipleOf" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    match (value.as_f64(), s.as_f64()) {
                        (Some(x), Some(limit)) => match keyword.as_str() {
                            "multipleOf" => is_multiple(x, limit),
                            "minimum" => x >= limit,
                            "maximum" => x <= limit,
                            "exclusiveMinimum" => x > limit,
                            _ => x < limit,
                        },
                        _ => true,
                    }
                }
                "minLength" | "maxLength" => match (value.as_str(), count(s)) {
                    (Some(text), Some(n)) => {
                        let len = text.chars().count();
                        if keyword == "minLength" {
                            len >= n
                        } else {
                            len <= n
                        }
                    }
                    _ => true,
                },
                "pattern" => match (value.as_str(), s.as_str()) {
                    (Some(text), Some(pattern)) => pattern_matches(pattern, text).unwrap_or(true),
                    _ => true,
                },
                "format" => match (value.as_str(), s.as_str()) {
                    (Some(text), Some(format)) => format_matches(format, text),
                    _ => true,
                },
                "minItems" | "maxItems" => match (value.as_array(), count(s)) {
                    (Some(items), Some(n)) => {
                        if keyword == "minItems" {
                            items.len() >= n
                        } else {
                            items.len() <= n
                        }
                    }
                    _ => true,
                },
                "uniqueItems" => match value.as_array() {
                    Some(items) if s == &Value::Bool(true) => {
                        // Pairwise: charged to the step budget, so a huge array gives up.
                        let pairs = items.len().saturating_mul(items.len()) / 2;
                        self.steps = self.steps.saturating_add(pairs / 64);
                        !self.exhausted()
                            && items
                                .iter()
                                .enumerate()
                                .all(|(i, a)| items[..i].iter().all(|b| !json::equal(a, b)))
                    }
                    _ => true,
                },
                "prefixItems" if full => match (value.as_array(), s.as_array()) {
                    (Some(items), Some(schemas)) => items
                        .iter()
                        .zip(schemas)
                        .all(|(item, schema)| self.valid(item, schema, next)),
                    _ => true,
                },
                "items" => match value.as_array() {
                    Some(items) => {
                        let start = map
                            .get("prefixItems")
                            .and_then(Value::as_array)
                            .map_or(0, Vec::len);
                        if s == &Value::Bool(false) {
                            items.len() <= start
                        } else if full {
                            items
                                .iter()
                                .skip(start)
                                .all(|item| self.valid(item, s, next))
                        } else {
                            true
                        }
                    }
                    None => true,
                },
                "contains" => match value.as_array() {
                    Some(items) => {
                        let min = map.get("minContains").and_then(count).unwrap_or(1);
                        let max = map.get("maxContains").and_then(count);
                        let mut matched = 0usize;
                        for item in items {
                            if self.valid(item, s, next) {
                                matched += 1;
                            }
                        }
                        matched >= min && max.is_none_or(|max| matched <= max)
                    }
                    None => true,
                },
                "minProperties" | "maxProperties" => match (value.as_object(), count(s)) {
                    (Some(object), Some(n)) => {
                        if keyword == "minProperties" {
                            object.len() >= n
                        } else {
                            object.len() <= n
                        }
                    }
                    _ => true,
                },
                "required" => match (value.as_object(), s.as_array()) {
                    (Some(object), Some(names)) => names
                        .iter()
                        .filter_map(Value::as_str)
                        .all(|name| object.contains_key(name)),
                    _ => true,
                },
                "dependentRequired" => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(dependencies)) => {
                        dependencies.iter().all(|(name, names)| {
                            !object.contains_key(name)
                                || names.as_array().is_none_or(|names| {
                                    names
                                        .iter()
                                        .filter_map(Value::as_str)
                                        .all(|n| object.contains_key(n))
                                })
                        })
                    }
                    _ => true,
                },
                "properties" if full => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(properties)) => properties.iter().all(|(name, schema)| {
                        object.get(name).is_none_or(|v| self.valid(v, schema, next))
                    }),
                    _ => true,
                },
                "patternProperties" if full => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(patterns)) => patterns.iter().all(|(pattern, schema)| {
                        object.iter().all(|(name, v)| {
                            !pattern_matches(pattern, name).unwrap_or(true)
                                || self.valid(v, schema, next)
                        })
                    }),
                    _ => true,
                },
                "additionalProperties" => match value.as_object() {
                    Some(object) if full || s == &Value::Bool(false) => object
                        .iter()
                        .all(|(name, v)| declares(map, name) || self.valid(v, s, next)),
                    _ => true,
                },
                "propertyNames" => match value.as_object() {
                    Some(object) => object
                        .keys()
                        .all(|name| self.valid(&Value::String(name.clone()), s, next)),
                    None => true,
                },
                "dependentSchemas" => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(schemas)) => schemas.iter().all(|(name, schema)| {
                        !object.contains_key(name) || self.valid(value, schema, next)
                    }),
                    _ => true,
                },
                "allOf" if full => s
                    .as_array()
                    .is_none_or(|members| members.iter().all(|m| self.valid(value, m, next))),
                "anyOf" if full => s
                    .as_array()
                    .is_none_or(|members| members.iter().any(|m| self.valid(value, m, next))),
                "oneOf" => match s.as_array() {
                    Some(members) => {
                        let mut matched = 0;
                        for member in members {
                            if self.valid(value, member, next) {
                                matched += 1;
                                if matched > 1 {
                                    break;
                                }
                            }
                        }
                        matched == 1
                    }
                    None => true,
                },
                "not" => !self.valid(value, s, next),
                "if" => {
                    if self.valid(value, s, next) {
                        map.get("then").is_none_or(|t| self.valid(value, t, next))
                    } else {
                        map.get("else").is_none_or(|e| self.valid(value, e, next))
                    }
                }
                "unevaluatedProperties" => match value.as_object() {
                    Some(object) => object.iter().all(|(name, v)| {
                        self.evaluates(map, name, 0)
                            || (s != &Value::Bool(false) && (!full || self.valid(v, s, next)))
                    }),
                    None => true,
                },
                "unevaluatedItems" => match value.as_array() {
                    Some(items) => {
                        let start = self.evaluated_items(map, 0);
                        items.len() <= start
                            || (s != &Value::Bool(false)
                                && (!full
                                    || items
                                        .iter()
                                        .skip(start)
                                        .all(|item| self.valid(item, s, next))))
                    }
                    None => true,
                },
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Whether `map` (or a schema it applies in place) evaluates property `name`: an
    /// approximation of `unevaluatedProperties` that counts every applicator's members.
    fn evaluates(&mut self, map: &'a Map<String, Value>, name: &str, depth: usize) -> bool {
        if depth > 16 || declares(map, name) || map.contains_key("additionalProperties") {
            return true;
        }
        let mut nested: Vec<&'a Value> = Vec::new();
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            nested.push(target);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = map.get(keyword) {
                nested.extend(members);
            }
        }
        for keyword in ["then", "else"] {
            if let Some(schema) = map.get(keyword) {
                nested.push(schema);
            }
        }
        if let Some(Value::Object(schemas)) = map.get("dependentSchemas") {
            nested.extend(schemas.values());
        }
        nested.into_iter().any(|schema| {
            schema
                .as_object()
                .is_some_and(|m| self.evaluates(m, name, depth + 1))
        })
    }

    /// How many leading items `map` evaluates (an approximation for `unevaluatedItems`).
    fn evaluated_items(&mut self, map: &'a Map<String, Value>, depth: usize) -> usize {
        if depth > 16 || map.contains_key("items") {
            return usize::MAX;
        }
        let mut evaluated = map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let mut nested: Vec<&'a Value> = Vec::new();
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            nested.push(target);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = map.get(keyword) {
                nested.extend(members);
            }
        }
        for schema in nested {
            if let Some(m) = schema.as_object() {
                evaluated = evaluated.max(self.evaluated_items(m, depth + 1));
            }
        }
        evaluated
    }
}

/// Whether a part declares property `name` (in `properties` or by a `patternProperties`).
pub(super) fn declares(map: &Map<String, Value>, name: &str) -> bool {
    map.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name))
        || map
            .get("patternProperties")
            .and_then(Value::as_object)
            .is_some_and(|p| {
                p.keys()
                    .any(|pattern| pattern_matches(pattern, name).unwrap_or(true))
            })
}

fn type_matches(value: &Value, types: &Value) -> bool {
    let matches = |name: &str| match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value
                    .as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        "string" => value.is_string(),
        _ => false,
    };
    match types {
        Value::String(name) => matches(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(matches),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::example::Limits;

    /// The built-in validator against `jsonschema`, on schemas and instances where they
    /// could plausibly disagree.
    #[test]
    fn the_validator_agrees_with_jsonschema() {
        let schemas = [
            json!({"type": "integer"}),
            json!({"type": ["string", "null"]}),
            json!({"multipleOf": 0.01}),
            json!({"multipleOf": 0.1}),
            json!({"multipleOf": 3}),
            json!({"minimum": 1, "exclusiveMaximum": 3}),
            json!({"enum": [1, "a", [1], {"a": 1}]}),
            json!({"const": {"a": [1.0, null]}}),
            json!({"uniqueItems": true}),
            json!({"minLength": 2, "maxLength": 3}),
            json!({"pattern": "^[a-z]+\\d?$"}),
            json!({"pattern": "b"}),
            json!({"minItems": 1, "maxItems": 2, "items": {"type": "integer"}}),
            json!({"prefixItems": [{"type": "string"}], "items": false}),
            json!({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}),
            json!({"contains": {"type": "string"}, "minContains": 0}),
            json!({"required": ["a"], "properties": {"a": {"type": "integer"}}}),
            json!({"properties": {"a": {}}, "additionalProperties": false}),
            json!({"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"}}),
            json!({"propertyNames": {"maxLength": 1}}),
            json!({"dependentRequired": {"a": ["b"]}}),
            json!({"dependentSchemas": {"a": {"required": ["c"]}}}),
            json!({"minProperties": 1, "maxProperties": 1}),
            json!({"allOf": [{"type": "number"}, {"minimum": 2}]}),
            json!({"anyOf": [{"type": "string"}, {"minimum": 2}]}),
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
            json!({"not": {"type": "array"}}),
            json!({"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}}}}),
            json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": false}),
            json!({"prefixItems": [{}], "unevaluatedItems": false}),
        ];
        let instances = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(1.0),
            json!(2),
            json!(2.5),
            json!(3),
            json!(0.07),
            json!(0.3),
            json!(-6),
            json!(""),
            json!("a"),
            json!("ab"),
            json!("abc1"),
            json!("abcd"),
            json!([]),
            json!([1]),
            json!([1, 1.0]),
            json!(["a", 1]),
            json!(["a", "b"]),
            json!([[1], [1.0]]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 1.0}),
            json!({"a": [1.0, null]}),
            json!({"a": 1, "b": 2}),
            json!({"a": "x", "c": 1}),
            json!({"x1": 1, "y": "s"}),
            json!({"x1": "s"}),
            json!({"n": {"n": {}}}),
            json!({"n": {"n": 1}}),
        ];
        for schema in &schemas {
            let validator = jsonschema::draft202012::new(schema).expect("compiles");
            for instance in &instances {
                let mut generator = Generator::new(schema, &Limits::default());
                assert_eq!(
                    generator.valid(instance, schema, 0),
                    validator.is_valid(instance),
                    "{instance} against {schema}"
                );
            }
        }
    }
}
