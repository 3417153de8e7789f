//! Bytes to `serde_json::Value`: JSON or YAML, told apart by content rather than file name.
//!
//! Errors carry the document's name and the line and column the parser reports, because
//! a user fixing a 10 MB spec needs to know where to look.

use serde_json::Value;

use super::SpecError;

/// The serialization a document was written in, detected from its first meaningful byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// JSON documents start with `{` or `[` once whitespace and a byte-order mark are skipped;
/// everything else is treated as YAML (a superset of JSON, so a mistake here still parses).
pub fn detect_format(bytes: &[u8]) -> Format {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') | Some(b'[') => Format::Json,
        _ => Format::Yaml,
    }
}

/// Parses a document; `name` is what errors call it (a path or URL).
pub fn parse_document(name: &str, bytes: &[u8]) -> Result<Value, SpecError> {
    match detect_format(bytes) {
        Format::Json => parse_json(name, bytes),
        Format::Yaml => parse_yaml(name, bytes),
    }
}

/// Parses a document straight into `T` (for restmcp's own files), with the same errors.
pub fn parse_typed<T: serde::de::DeserializeOwned>(
    name: &str,
    bytes: &[u8],
) -> Result<T, SpecError> {
    match detect_format(bytes) {
        Format::Json => parse_json(name, bytes),
        Format::Yaml => parse_yaml(name, bytes),
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, SpecError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice(bytes).map_err(|e| SpecError::Syntax {
        file: name.to_string(),
        format: "JSON",
        line: e.line() as u64,
        column: e.column() as u64,
        message: strip_json_position(&e.to_string()),
    })
}

/// serde_json appends " at line L column C" to its messages; we print the position ourselves.
fn strip_json_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn parse_yaml<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, SpecError> {
    let text = std::str::from_utf8(bytes).map_err(|e| SpecError::Syntax {
        file: name.to_string(),
        format: "YAML",
        line: 0,
        column: 0,
        message: format!("not valid UTF-8 (byte {})", e.valid_up_to()),
    })?;
    serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        SpecError::Syntax {
            file: name.to_string(),
            format: "YAML",
            line,
            column,
            message: first_line(&e.to_string()),
        }
    })
}

/// A JSON value's type, as messages name it: `a string`, `an object`…
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or(message).trim().to_string()
}

/// Machine-generated specs run to tens of MB; the default budget (a million events) is sized
/// for config files. Depth stays bounded so hostile input cannot exhaust the stack, and
/// booleans are YAML 1.2 (`no` is a string, as OpenAPI authors mean it in enums).
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 200_000_000;
    budget.max_nodes = 100_000_000;
    budget.max_total_scalar_bytes = 1 << 30;
    budget.max_depth = 128;
    budget.max_documents = 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.strict_booleans = true;
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_is_detected_from_content_not_name() {
        assert_eq!(detect_format(b"  \n{\"a\":1}"), Format::Json);
        assert_eq!(detect_format(b"\xEF\xBB\xBF[1]"), Format::Json);
        assert_eq!(detect_format(b"openapi: 3.0.0"), Format::Yaml);
        assert_eq!(detect_format(b""), Format::Yaml);
    }

    #[test]
    fn yaml_uses_strict_booleans_and_string_keys() {
        let v = parse_document(
            "t.yaml",
            b"enum: [yes, no]\nresponses:\n  200: {description: ok}\n",
        )
        .expect("valid yaml");
        assert_eq!(v["enum"], serde_json::json!(["yes", "no"]));
        assert!(v["responses"]["200"].is_object());
    }

    #[test]
    fn json_error_names_file_line_and_column() {
        let err = parse_document("api.json", b"{\n  \"a\": [1,\n}").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("api.json:3:1: invalid JSON:"), "{text}");
    }

    #[test]
    fn yaml_error_names_file_and_line() {
        let err = parse_document("api.yaml", b"openapi: 3.0.0\npaths:\n  /a: [\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("api.yaml:"), "{text}");
        assert!(text.contains("invalid YAML"), "{text}");
    }
}
