//! Values a description gives as data (examples, defaults, `enum` and `const` members) that
//! hold `$ref`s anyway.
//!
//! A value is not a schema, so a `$ref` in it is not a reference by the specification's
//! rules; descriptions write them regardless. GitHub's puts `example: {$ref:
//! '#/components/examples/…'}` inside response schemas and nests such references inside
//! its Example objects' values. Published as they are, they would be `$ref`s leaving a
//! tool, which its clients cannot follow. So a `{"$ref": …}` object inside a value is read
//! here as what its writer meant: a reference to an Example object (OpenAPI 3.x §4.8.19)
//! stands for that object's `value` (3.2: `dataValue`). Any other `$ref` (to a schema, to
//! nothing, to a document that was not loaded) cannot become data, and the whole value is
//! refused: its caller leaves it out and says so.
//!
//! Resolution is bounded (nesting depth and the size of what it produces), so references
//! that multiply cost nothing.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::document::{DocId, DocumentSet};

/// Deepest nesting (of JSON and of references together) a resolved value may have.
const MAX_DEPTH: usize = 64;
/// Most JSON nodes one resolved value may hold. Examples are illustrations: one larger
/// than this is left out rather than copied into a tool.
const MAX_NODES: usize = 10_000;

/// `value` with every Example-object reference in it replaced by the example's value;
/// borrowed when it holds no `$ref` at all. The error says which `$ref` could not be made
/// data and why.
pub fn resolve<'v>(
    docs: &DocumentSet,
    doc: DocId,
    value: &'v Value,
) -> Result<Cow<'v, Value>, String> {
    if !holds_ref(value) {
        return Ok(Cow::Borrowed(value));
    }
    let mut nodes = 0;
    resolve_in(docs, doc, value, 0, &mut nodes).map(Cow::Owned)
}

/// True when `value` has an object with a `$ref` key anywhere in it.
pub fn holds_ref(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if map.contains_key("$ref") {
                    return true;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

fn resolve_in(
    docs: &DocumentSet,
    doc: DocId,
    value: &Value,
    depth: usize,
    nodes: &mut usize,
) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "nested more than {MAX_DEPTH} levels deep (a reference cycle?)"
        ));
    }
    *nodes += 1;
    if *nodes > MAX_NODES {
        return Err(format!(
            "more than {MAX_NODES} values once its $refs are resolved"
        ));
    }
    match value {
        Value::Object(map) => match map.get("$ref") {
            Some(reference) => {
                let Some(reference) = reference.as_str() else {
                    let shown = docs.shown(doc, reference);
                    return Err(format!("\"$ref\": {shown} is not a reference"));
                };
                let (target_doc, example) = example_value(docs, doc, reference)?;
                resolve_in(docs, target_doc, example, depth + 1, nodes)
            }
            None => {
                let mut out = Map::new();
                for (key, child) in map {
                    out.insert(key.clone(), resolve_in(docs, doc, child, depth + 1, nodes)?);
                }
                Ok(Value::Object(out))
            }
        },
        Value::Array(items) => items
            .iter()
            .map(|item| resolve_in(docs, doc, item, depth + 1, nodes))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// The value of the Example object `reference` names (following `$ref` chains).
fn example_value<'d>(
    docs: &'d DocumentSet,
    doc: DocId,
    reference: &str,
) -> Result<(DocId, &'d Value), String> {
    let resolved = docs
        .resolve(doc, reference)
        .map_err(|e| format!("$ref \"{reference}\" → {}: {}", e.target, e.problem))?;
    let (target_doc, target) = docs
        .deref(resolved.doc, resolved.value)
        .map_err(|e| format!("$ref \"{reference}\" → {}: {}", e.target, e.problem))?;
    let is_example = target.as_object().is_some_and(|map| {
        map.keys().all(|k| {
            k.starts_with("x-")
                || matches!(
                    k.as_str(),
                    "summary"
                        | "description"
                        | "value"
                        | "dataValue"
                        | "serializedValue"
                        | "externalValue"
                )
        })
    });
    let value = target
        .get("value")
        .or_else(|| target.get("dataValue"))
        .filter(|_| is_example);
    value
        .map(|value| (target_doc, value))
        .ok_or_else(|| format!("$ref \"{reference}\" does not name an Example object with a value"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use url::Url;

    fn set(root: Value) -> DocumentSet {
        DocumentSet::single(
            Url::parse("file:///specs/api.yaml").expect("url"),
            "api.yaml".into(),
            root,
        )
    }

    #[test]
    fn a_value_without_refs_is_borrowed_as_it_is() {
        let docs = set(json!({}));
        let value = json!({"a": [1, {"b": "$ref"}]});
        assert!(matches!(resolve(&docs, 0, &value), Ok(Cow::Borrowed(v)) if *v == value));
    }

    #[test]
    fn example_references_become_their_values_at_any_depth() {
        let docs = set(json!({"components": {"examples": {
            "repo": {"summary": "A repo", "value": {"name": "hello", "owner": {"$ref": "#/components/examples/user"}}},
            "user": {"value": {"login": "octocat"}},
            "alias": {"$ref": "#/components/examples/user"},
            "new": {"dataValue": [1, 2]}
        }}}));
        let value = json!({"$ref": "#/components/examples/repo"});
        assert_eq!(
            resolve(&docs, 0, &value).expect("resolves").into_owned(),
            json!({"name": "hello", "owner": {"login": "octocat"}})
        );
        let nested = json!([{"status": "ok", "who": {"$ref": "#/components/examples/alias"}}]);
        assert_eq!(
            resolve(&docs, 0, &nested).expect("resolves").into_owned(),
            json!([{"status": "ok", "who": {"login": "octocat"}}])
        );
        let data_value = json!({"$ref": "#/components/examples/new"});
        assert_eq!(
            resolve(&docs, 0, &data_value)
                .expect("resolves")
                .into_owned(),
            json!([1, 2])
        );
    }

    #[test]
    fn references_that_cannot_become_data_refuse_the_value() {
        let docs = set(json!({"components": {
            "schemas": {"Pet": {"type": "object", "properties": {"value": {"type": "string"}}}},
            "examples": {"external": {"externalValue": "https://example.test/x.json"}}
        }}));
        for (value, says) in [
            (
                json!({"$ref": "#/components/schemas/Pet"}),
                "Example object",
            ),
            (
                json!({"a": {"$ref": "#/components/examples/missing"}}),
                "missing",
            ),
            (
                json!({"$ref": "#/components/examples/external"}),
                "Example object",
            ),
            (json!({"$ref": "other.yaml#/x"}), "not loaded"),
            (json!({"$ref": 7}), "not a reference"),
        ] {
            let problem = resolve(&docs, 0, &value).expect_err("refused");
            assert!(problem.contains(says), "{value}: {problem}");
        }
    }

    #[test]
    fn cycles_and_multiplying_references_are_bounded() {
        let docs = set(json!({"components": {"examples": {
            "loop": {"value": {"again": {"$ref": "#/components/examples/loop"}}}
        }}}));
        let problem =
            resolve(&docs, 0, &json!({"$ref": "#/components/examples/loop"})).expect_err("cycle");
        assert!(problem.contains("levels deep"), "{problem}");

        // Each level doubles what the one above produces: 2^30 values if resolved.
        let mut examples = Map::new();
        examples.insert("e0".into(), json!({"value": "x"}));
        for i in 1..=30 {
            let below = format!("#/components/examples/e{}", i - 1);
            examples.insert(
                format!("e{i}"),
                json!({"value": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        let docs = set(json!({"components": {"examples": examples}}));
        let problem =
            resolve(&docs, 0, &json!({"$ref": "#/components/examples/e30"})).expect_err("bomb");
        assert!(problem.contains("more than"), "{problem}");
    }
}
