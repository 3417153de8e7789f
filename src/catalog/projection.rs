//! Response field projection: an overlay's `response.fields` (`id`, `owner.login`) as a
//! [`FieldTree`], which keeps only those fields of each JSON result (item by item for an
//! array) and narrows the tool's output schema to match ([`project_output_schema`]).
//! [`super::patch`] applies it to a tool's schema when the tool set is built; the upstream
//! layer projects each response body with it when a call returns.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// Selected field paths as a tree: `["id", "owner.login"]` → `{id: *, owner: {login: *}}`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FieldTree {
    /// `None`: keep the whole value below this field.
    children: BTreeMap<String, Option<FieldTree>>,
}

impl FieldTree {
    pub fn new(fields: &[String]) -> FieldTree {
        let mut tree = FieldTree::default();
        for field in fields {
            let mut node = &mut tree;
            let segments: Vec<&str> = field.split('.').collect();
            for (i, segment) in segments.iter().enumerate() {
                let last = i + 1 == segments.len();
                let entry = node.children.entry(segment.to_string());
                let slot = entry.or_insert_with(|| Some(FieldTree::default()));
                if last {
                    *slot = None;
                    break;
                }
                match slot {
                    Some(child) => node = child,
                    // A shorter path already keeps this whole subtree.
                    None => break,
                }
            }
        }
        tree
    }

    /// Keeps only the selected fields of `value`; arrays are projected item by item.
    pub fn project(&self, value: Value) -> Value {
        match value {
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|v| self.project(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter_map(|(key, value)| match self.children.get(&key)? {
                        None => Some((key, value)),
                        Some(child) => Some((key, child.project(value))),
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    /// The schema of [`FieldTree::project`]'s result. `$ref`s into the tool's `$defs` are
    /// inlined where the projection goes through them.
    fn project_schema(&self, schema: &Value, defs: &Value, depth: usize) -> Value {
        let Value::Object(map) = schema else {
            return schema.clone();
        };
        if depth > 16 {
            return json!({});
        }
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            let name = crate::json::unescape_token(target).into_owned();
            return match defs.get(&name) {
                Some(def) => self.project_schema(def, defs, depth + 1),
                None => schema.clone(),
            };
        }
        let mut out = map.clone();
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(parts)) = map.get(key) {
                out.insert(
                    key.into(),
                    Value::Array(
                        parts
                            .iter()
                            .map(|p| self.project_schema(p, defs, depth + 1))
                            .collect(),
                    ),
                );
            }
        }
        if let Some(items) = map.get("items") {
            out.insert("items".into(), self.project_schema(items, defs, depth + 1));
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            let kept: Map<String, Value> = properties
                .iter()
                .filter_map(|(key, schema)| match self.children.get(key)? {
                    None => Some((key.clone(), schema.clone())),
                    Some(child) => {
                        Some((key.clone(), child.project_schema(schema, defs, depth + 1)))
                    }
                })
                .collect();
            out.insert("properties".into(), Value::Object(kept));
            if let Some(Value::Array(required)) = map.get("required") {
                let required: Vec<Value> = required
                    .iter()
                    .filter(|r| r.as_str().is_some_and(|r| self.children.contains_key(r)))
                    .cloned()
                    .collect();
                if required.is_empty() {
                    out.shift_remove("required");
                } else {
                    out.insert("required".into(), Value::Array(required));
                }
            }
            // Fields outside the selection are gone, so extra properties are no longer
            // a concern of the schema.
            out.shift_remove("additionalProperties");
            out.shift_remove("unevaluatedProperties");
        }
        Value::Object(out)
    }
}

/// Narrows a tool's output schema to what projecting its responses onto `fields` leaves;
/// `wrapped`: the response is the schema's `result` property (see
/// [`super::OutputPlan::wrapped`]). `$defs` nothing refers to any more are dropped.
pub fn project_output_schema(schema: &mut Value, fields: &FieldTree, wrapped: bool) {
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    if wrapped {
        if let Some(inner) = schema.pointer_mut("/properties/result") {
            *inner = fields.project_schema(inner, &defs, 0);
        }
    } else {
        *schema = fields.project_schema(schema, &defs, 0);
    }
    prune_defs(schema);
}

/// Drops `$defs` entries nothing refers to any more.
fn prune_defs(schema: &mut Value) {
    let Some(Value::Object(defs)) = schema.get("$defs").cloned() else {
        return;
    };
    let mut used: Vec<String> = Vec::new();
    let mut pending: Vec<&Value> = vec![schema];
    let mut seen_defs: Vec<String> = Vec::new();
    while let Some(node) = pending.pop() {
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    if key == "$defs" {
                        continue;
                    }
                    if key == "$ref"
                        && let Some(name) = value.as_str().and_then(|r| r.strip_prefix("#/$defs/"))
                    {
                        let name = crate::json::unescape_token(name).into_owned();
                        if !seen_defs.contains(&name) {
                            seen_defs.push(name.clone());
                            if let Some(def) = defs.get(&name) {
                                pending.push(def);
                            }
                            used.push(name);
                        }
                    }
                    pending.push(value);
                }
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    if let Value::Object(map) = schema {
        let kept: Map<String, Value> = defs
            .into_iter()
            .filter(|(name, _)| used.contains(name))
            .collect();
        if kept.is_empty() {
            map.shift_remove("$defs");
        } else {
            map.insert("$defs".into(), Value::Object(kept));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_tree_keeps_selected_fields_of_objects_and_array_items() {
        let tree = FieldTree::new(&["id".into(), "owner.login".into()]);
        let value = json!([
            {"id": 1, "name": "a", "owner": {"login": "x", "id": 9}},
            {"id": 2, "owner": null}
        ]);
        assert_eq!(
            tree.project(value),
            json!([{"id": 1, "owner": {"login": "x"}}, {"id": 2, "owner": null}])
        );
    }

    #[test]
    fn a_shorter_path_keeps_the_whole_subtree() {
        let tree = FieldTree::new(&["owner".into(), "owner.login".into()]);
        let value = json!({"owner": {"login": "x", "id": 9}, "id": 1});
        assert_eq!(
            tree.project(value),
            json!({"owner": {"login": "x", "id": 9}})
        );
    }

    #[test]
    fn schema_projection_follows_refs_and_drops_unused_defs() {
        let tree = FieldTree::new(&["id".into(), "tag.name".into()]);
        let mut schema = json!({
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Pet"}}},
            "$defs": {
                "Pet": {"type": "object", "required": ["id", "name"], "properties": {
                    "id": {"type": "integer"}, "name": {"type": "string"},
                    "tag": {"$ref": "#/$defs/Tag"}}},
                "Tag": {"type": "object", "properties": {"id": {}, "name": {"type": "string"}}}
            }
        });
        let defs = schema["$defs"].clone();
        let inner = schema.pointer_mut("/properties/result").unwrap();
        *inner = tree.project_schema(inner, &defs, 0);
        prune_defs(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"result": {"type": "array", "items": {
                    "type": "object", "required": ["id"], "properties": {
                        "id": {"type": "integer"},
                        "tag": {"type": "object", "properties": {"name": {"type": "string"}}}
                    }}}}
            })
        );
    }
}
