//! Encoding sets and value text shared by every part of the request: percent-encoding for
//! paths, components and `allowReserved` values; the text of a JSON value; RFC 6570 value
//! shapes; and [`Field`], one query parameter or form-body property with its style.

use std::fmt::Write as _;

use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use crate::catalog::Binding;
use crate::spec::Style;
use crate::spec::media;

use super::RequestError;

/// Path values: all but `ALPHA / DIGIT / - _ ~`; `.` is encoded too.
pub(super) const PATH_VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'~');
/// Query, cookie and form components: all but RFC 3986 unreserved characters.
pub(super) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// The literal parts of a path template: what may not appear raw in a path, plus `\`
/// (a separator to WHATWG parsers) and the gen-delims that would end the path.
pub(super) const PATH_LITERAL: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|')
    .add(b'[')
    .add(b']');
/// Reserved characters `allowReserved` leaves raw (RFC 3986 reserved minus `& = # +`).
pub(super) const RESERVED_KEPT: &[u8] = b":/?[]@!$'()*,;";

pub(super) fn encode_path(text: &str) -> String {
    utf8_percent_encode(text, PATH_VALUE).to_string()
}

pub(super) fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// A query or form value, honouring `allowReserved`.
pub(super) fn encode_value(text: &str, allow_reserved: bool) -> String {
    if !allow_reserved {
        return encode_component(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || RESERVED_KEPT.contains(&b) {
            out.push(b as char);
        } else if b == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            // An existing percent-encoded triple passes through (RFC 6570 reserved
            // expansion).
            out.push_str(&text[i..i + 3]);
            i += 3;
            continue;
        } else {
            let _ = write!(out, "%{b:02X}");
        }
        i += 1;
    }
    out
}

/// The text of one value: strings raw, numbers as JSON prints them, booleans
/// `true`/`false`, null empty, objects and arrays as compact JSON.
pub(super) fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => compact(other),
    }
}

pub(super) fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A parameter declared with `content`: the value in that media type.
pub(super) fn content_text(media_type: &str, value: &Value) -> String {
    match value {
        Value::String(s) if !media::is_json(media_type) => s.clone(),
        other => compact(other),
    }
}

/// A value as RFC 6570 sees it: a primitive, a list or an associative array. Null members
/// are undefined and dropped; nested values become compact JSON.
pub(super) enum Shape {
    Primitive(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

pub(super) fn shape(value: &Value) -> Shape {
    match value {
        Value::Array(items) => {
            Shape::List(items.iter().filter(|v| !v.is_null()).map(text).collect())
        }
        Value::Object(map) => Shape::Pairs(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), text(v)))
                .collect(),
        ),
        other => Shape::Primitive(text(other)),
    }
}

/// The argument's value, with an explicit null read as absent.
pub(super) fn present<'a>(
    arguments: &'a Map<String, Value>,
    binding: &Binding,
) -> Option<&'a Value> {
    arguments.get(&binding.argument).filter(|v| !v.is_null())
}

pub(super) fn argument_error(binding: &Binding, problem: impl Into<String>) -> RequestError {
    RequestError::Argument {
        argument: binding.argument.clone(),
        problem: problem.into(),
    }
}

/// `[(R, 100), (G, 200)]` → `[R, 100, G, 200]`, each encoded.
pub(super) fn flat_pairs(
    pairs: &[(String, String)],
    encode: impl Fn(&str) -> String,
) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|(k, v)| [encode(k), encode(v)])
        .collect()
}

/// One query parameter or form-body property, with the serialization rules that apply.
pub(super) struct Field<'a> {
    pub(super) name: &'a str,
    pub(super) style: Style,
    pub(super) explode: bool,
    pub(super) allow_reserved: bool,
    pub(super) content_type: Option<&'a str>,
    /// Form bodies: objects and nested values without an explicit encoding use bracket
    /// notation (`a[b]=c`, `a[0][b]=c`) instead of the form style's flattening.
    pub(super) brackets_for_nested: bool,
}

impl Field<'_> {
    fn value(&self, text: &str) -> String {
        encode_value(text, self.allow_reserved)
    }

    /// Appends this field's `name=value` pairs, already encoded.
    pub(super) fn pairs(&self, value: &Value, out: &mut Vec<String>) {
        if value.is_null() {
            return;
        }
        let name = encode_component(self.name);
        if let Some(media_type) = self.content_type {
            let content = content_text(media_type, value);
            out.push(format!("{name}={}", self.value(&content)));
            return;
        }
        if self.style == Style::DeepObject {
            self.deep(name, value, out);
            return;
        }
        if self.brackets_for_nested && needs_brackets(value) {
            self.deep(name, value, out);
            return;
        }
        let separator = match self.style {
            Style::SpaceDelimited => "%20",
            Style::PipeDelimited => "|",
            Style::TabDelimited => "%09",
            _ => ",",
        };
        match shape(value) {
            Shape::Primitive(v) => out.push(format!("{name}={}", self.value(&v))),
            Shape::List(items) if self.explode => {
                out.extend(items.iter().map(|v| format!("{name}={}", self.value(v))));
            }
            Shape::List(items) => {
                let items: Vec<String> = items.iter().map(|v| self.value(v)).collect();
                out.push(format!("{name}={}", items.join(separator)));
            }
            Shape::Pairs(pairs) if self.explode => out.extend(
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}={}", encode_component(k), self.value(v))),
            ),
            Shape::Pairs(pairs) => {
                let items = flat_pairs(&pairs, |t| self.value(t));
                out.push(format!("{name}={}", items.join(separator)));
            }
        }
    }

    /// Bracket notation: `name[key]=v`, `name[0]=v`, recursively; null members omitted.
    fn deep(&self, prefix: String, value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Null => {}
            Value::Object(map) => {
                for (key, member) in map {
                    self.deep(format!("{prefix}[{}]", encode_component(key)), member, out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.deep(format!("{prefix}[{i}]"), item, out);
                }
            }
            scalar => out.push(format!("{prefix}={}", self.value(&text(scalar)))),
        }
    }
}

/// Objects, and arrays holding objects or arrays: what the form style cannot express.
pub(super) fn needs_brackets(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items
            .iter()
            .any(|v| matches!(v, Value::Object(_) | Value::Array(_))),
        _ => false,
    }
}
