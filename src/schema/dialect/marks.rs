//! The private markers a conversion leaves in its output for the way back: written by
//! [`super::convert`] (and kept consistent by [`super::limits`] when it drops a property),
//! read by [`super::restore`], removed by [`strip_markers`] before a schema is published.
//! They live apart from all three so that none of them imports another for a name.

use serde_json::Value;

/// On an openai-strict object: the properties that were optional, whose `null` means
/// "absent".
pub(super) const MARK_OPTIONAL: &str = "x-restmcp-optional";
/// On a Gemini enum converted to text: the original values, in the order of `enum`.
pub(super) const MARK_ENUM: &str = "x-restmcp-enum";

/// The adapted schema without the private markers.
pub(super) fn strip_markers(mut schema: Value) -> Value {
    strip(&mut schema);
    schema
}

fn strip(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    map.retain(|k, _| !k.starts_with("x-restmcp-"));
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "$defs", Value::Object(children)) => {
                children.values_mut().for_each(strip)
            }
            ("anyOf", Value::Array(members)) => members.iter_mut().for_each(strip),
            ("items", child) => strip(child),
            _ => {}
        }
    }
}
