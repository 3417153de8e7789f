//! TEMPORARY STUB (replaced by the real module).
use serde_json::Value;
pub struct OverlayOutcome {
    pub warnings: Vec<String>,
    pub applied: usize,
}
#[derive(Debug, Clone, thiserror::Error)]
#[error("stub")]
pub struct OverlayError;
pub fn is_openapi_overlay(value: &Value) -> bool {
    value.get("overlay").is_some() && value.get("actions").is_some()
}
pub fn apply(_document: &mut Value, _overlay: &Value) -> Result<OverlayOutcome, OverlayError> {
    Err(OverlayError)
}
