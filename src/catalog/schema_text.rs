//! A tool's JSON Schema kept as compact JSON text.
//!
//! As `serde_json::Value` trees (every object an `IndexMap`), GitHub's 1,223 tools hold
//! about 35 MB of schemas; as text, about 5 MB. The catalog and every `tools/list` view
//! keep schemas as text: listing copies the text instead of walking trees, views share it
//! instead of cloning it, and loading's peak holds the spec plus text, not spec plus trees.
//! The few readers that need a tree (argument validation, client dialects, mock generation,
//! overlays) parse it once and keep what they derive from it.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON Schema as compact JSON text; cloning shares the text.
#[derive(Clone)]
pub struct SchemaText(Arc<RawValue>);

impl SchemaText {
    /// `schema` as text.
    pub fn new(schema: &Value) -> SchemaText {
        let raw = serde_json::value::to_raw_value(schema)
            .expect("a Value always serializes (its keys are strings)");
        SchemaText(Arc::from(raw))
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The schema as a tree (parsed anew on each call).
    pub fn to_value(&self) -> Value {
        // The text was written by `new` from a `Value`, so it parses back.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The schema as a JSON object; `None` when it is not one (`true`, say).
    pub fn to_object(&self) -> Option<Map<String, Value>> {
        match self.to_value() {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// True when the schema is a JSON object.
    pub fn is_object(&self) -> bool {
        self.as_str().starts_with('{')
    }

    /// Applies `change` to the schema as a tree, and keeps the result as text.
    pub fn edit<T>(&mut self, change: impl FnOnce(&mut Value) -> T) -> T {
        let mut value = self.to_value();
        let out = change(&mut value);
        *self = SchemaText::new(&value);
        out
    }
}

impl std::hash::Hash for SchemaText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

/// Schema texts shared between the tools of one build: asked for a text it already holds,
/// it gives back the one it has, so equal texts are held once. The full `$defs` of
/// Microsoft Graph's relaxed input schemas are 60 MB as copies and 1.1 MB shared. It lives
/// as long as the build, so it holds no more than the catalog does.
#[derive(Default)]
pub struct SharedSchemas(std::sync::Mutex<rustc_hash::FxHashSet<SchemaText>>);

impl SharedSchemas {
    /// `text`, or the equal text held already.
    pub fn intern(&self, text: SchemaText) -> SchemaText {
        let Ok(mut held) = self.0.lock() else {
            return text;
        };
        if let Some(existing) = held.get(&text) {
            return existing.clone();
        }
        held.insert(text.clone());
        text
    }
}

impl From<Value> for SchemaText {
    fn from(schema: Value) -> SchemaText {
        SchemaText::new(&schema)
    }
}

impl Serialize for SchemaText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl PartialEq for SchemaText {
    fn eq(&self, other: &SchemaText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SchemaText {}

impl fmt::Debug for SchemaText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_keeps_property_order_and_serializes_as_the_schema_itself() {
        let schema = json!({"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}});
        let text = SchemaText::new(&schema);
        assert_eq!(
            text.as_str(),
            r#"{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}}}"#
        );
        assert_eq!(text.to_value(), schema);
        #[derive(Serialize)]
        struct Listed<'a> {
            #[serde(rename = "inputSchema")]
            input_schema: &'a SchemaText,
        }
        let listed = Listed {
            input_schema: &text,
        };
        assert_eq!(
            serde_json::to_string(&listed).unwrap(),
            format!(r#"{{"inputSchema":{}}}"#, text.as_str())
        );
        assert_eq!(
            serde_json::to_value(&listed).unwrap()["inputSchema"],
            schema
        );
    }

    #[test]
    fn an_edit_is_kept_and_a_boolean_schema_is_not_an_object() {
        let mut text = SchemaText::new(&json!({"type": "object"}));
        text.edit(|schema| schema["required"] = json!(["id"]));
        assert_eq!(
            text.to_value(),
            json!({"type": "object", "required": ["id"]})
        );
        assert!(text.is_object());
        let boolean = SchemaText::new(&json!(true));
        assert!(!boolean.is_object());
        assert_eq!(boolean.to_object(), None);
    }
}
