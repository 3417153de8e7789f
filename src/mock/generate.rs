//! TEMP
use serde_json::Value;
pub fn example(_schema: &Value) -> Option<Value> {
    Some(serde_json::json!({}))
}
