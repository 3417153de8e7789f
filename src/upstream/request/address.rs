//! Where the request goes: the base URL, the path with its parameters expanded (RFC 6570
//! styles, dot segments refused), the query, and the assembled URL checked to keep the
//! base's origin and exactly the built path.

use percent_encoding::utf8_percent_encode;
use serde_json::{Map, Value};

use crate::catalog::{Binding, Location, Route};
use crate::spec::Style;

use super::RequestError;
use super::encode::*;

/// The parsed base URL. Only the path after it is ever built from arguments.
pub(super) fn base_url(route: &Route) -> Result<url::Url, RequestError> {
    let Some(base) = route.base_url.as_ref().filter(|u| !u.trim().is_empty()) else {
        return Err(RequestError::NoBaseUrl {
            api: route.api.clone(),
        });
    };
    base.parsed()
        .cloned()
        .map_err(|problem| RequestError::BadBaseUrl {
            api: route.api.clone(),
            url: base.to_string(),
            problem: problem.to_string(),
        })
}

/// The request URL: `base` with the encoded `path` appended and `query` set. Only the path
/// and the query are parsed, so the scheme, host and port are the base's by construction.
pub(super) fn assemble_url(
    mut url: url::Url,
    path: &str,
    query: &str,
) -> Result<url::Url, RequestError> {
    let base_path = url.path().trim_end_matches('/');
    let mut expected_path = String::with_capacity(base_path.len() + path.len());
    expected_path.push_str(base_path);
    expected_path.push_str(path);
    let prefix_len = origin_prefix(&url).len();
    url.set_path(&expected_path);
    url.set_query((!query.is_empty()).then_some(query));
    if url.path() != expected_path {
        let mut intended = format!("{}{expected_path}", &url.as_str()[..prefix_len]);
        if !query.is_empty() {
            intended.push('?');
            intended.push_str(query);
        }
        return Err(RequestError::Url {
            url: intended,
            problem: "would be normalized to a different path".to_string(),
        });
    }
    Ok(url)
}

/// `scheme://userinfo@host:port` of the base URL, as its serialization spells it.
pub(super) fn origin_prefix(base: &url::Url) -> &str {
    let serialized = base.as_str();
    let path_start = serialized.len() - base.path().len();
    &serialized[..path_start]
}

pub(super) fn build_path(
    route: &Route,
    arguments: &Map<String, Value>,
) -> Result<String, RequestError> {
    let mut out = String::with_capacity(route.path.len() + 32);
    let mut rest = route.path.as_str();
    if !rest.starts_with('/') {
        out.push('/');
    }
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            break;
        };
        out.extend(utf8_percent_encode(&rest[..open], PATH_LITERAL));
        let name = &after[..close];
        let binding = route
            .arguments
            .by_wire(Location::Path, name)
            .ok_or_else(|| RequestError::Argument {
                argument: name.to_string(),
                problem: format!(
                    "the path template {} names a parameter the operation does not declare",
                    route.path
                ),
            })?;
        let value = present(arguments, binding)
            .ok_or_else(|| argument_error(binding, "is required: it is part of the URL path"))?;
        let start = out.len();
        if !expand_simple_into(&mut out, binding, value) {
            out.push_str(&expand_path(binding, value));
        }
        let expansion = &out[start..];
        if expansion.is_empty() {
            return Err(argument_error(
                binding,
                "must not be empty: it is a segment of the URL path",
            ));
        }
        if is_dot_segment(expansion) {
            return Err(argument_error(
                binding,
                "cannot be \".\" or \"..\": it is a segment of the URL path",
            ));
        }
        rest = &after[close + 1..];
    }
    out.extend(utf8_percent_encode(rest, PATH_LITERAL));
    // A dot segment has a `.` (`%2e` has a `%`): a path without either has none.
    let dotted = out.bytes().any(|b| b == b'.' || b == b'%');
    if dotted && let Some(segment) = out.split('/').find(|s| is_dot_segment(s)) {
        return Err(RequestError::Url {
            url: out.clone(),
            problem: format!("has the dot segment \"{segment}\" in its path"),
        });
    }
    Ok(out)
}

/// A segment the WHATWG URL parser (which HTTP clients use) treats as `.` or `..`.
pub(super) fn is_dot_segment(segment: &str) -> bool {
    [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
        .iter()
        .any(|dot| segment.eq_ignore_ascii_case(dot))
}

/// Writes a `simple`-style string or integer (an id, the commonest path parameter) to
/// `out` exactly as [`expand_path`] spells it, without its intermediate strings; `false`
/// for any other parameter, which `expand_path` spells.
pub(super) fn expand_simple_into(out: &mut String, binding: &Binding, value: &Value) -> bool {
    if binding.content_type.is_some() || matches!(binding.style, Style::Label | Style::Matrix) {
        return false;
    }
    match value {
        Value::String(text) => out.extend(utf8_percent_encode(text, PATH_VALUE)),
        // Digits and `-` are never encoded in a path value.
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(n), _) => out.push_str(itoa::Buffer::new().format(n)),
            (None, Some(n)) => out.push_str(itoa::Buffer::new().format(n)),
            _ => return false,
        },
        _ => return false,
    }
    true
}

/// One path parameter, per style (simple, label, matrix; any other style reads as simple).
pub(super) fn expand_path(binding: &Binding, value: &Value) -> String {
    if let Some(media_type) = &binding.content_type {
        return encode_path(&content_text(media_type, value));
    }
    let explode = binding.explode;
    let join = |items: Vec<String>, sep: &str| items.join(sep);
    match binding.style {
        Style::Label => match shape(value) {
            Shape::Primitive(v) => format!(".{}", encode_path(&v)),
            Shape::List(items) => {
                let items = items.iter().map(|v| encode_path(v)).collect();
                format!(".{}", join(items, if explode { "." } else { "," }))
            }
            Shape::Pairs(pairs) => {
                if explode {
                    let items = pairs
                        .iter()
                        .map(|(k, v)| format!("{}={}", encode_path(k), encode_path(v)))
                        .collect();
                    format!(".{}", join(items, "."))
                } else {
                    format!(".{}", join(flat_pairs(&pairs, encode_path), ","))
                }
            }
        },
        Style::Matrix => {
            let name = encode_path(&binding.wire_name);
            // RFC 6570 `;` operator: an empty value is the bare name.
            let param = |n: &str, v: &str| {
                if v.is_empty() {
                    format!(";{n}")
                } else {
                    format!(";{n}={v}")
                }
            };
            match shape(value) {
                Shape::Primitive(v) => param(&name, &encode_path(&v)),
                Shape::List(items) if explode && !items.is_empty() => items
                    .iter()
                    .map(|v| param(&name, &encode_path(v)))
                    .collect(),
                Shape::List(items) => {
                    let items: Vec<String> = items.iter().map(|v| encode_path(v)).collect();
                    param(&name, &items.join(","))
                }
                Shape::Pairs(pairs) if explode && !pairs.is_empty() => pairs
                    .iter()
                    .map(|(k, v)| param(&encode_path(k), &encode_path(v)))
                    .collect(),
                Shape::Pairs(pairs) => param(&name, &flat_pairs(&pairs, encode_path).join(",")),
            }
        }
        _ => match shape(value) {
            Shape::Primitive(v) => encode_path(&v),
            Shape::List(items) => {
                let items: Vec<String> = items.iter().map(|v| encode_path(v)).collect();
                items.join(",")
            }
            Shape::Pairs(pairs) if explode => {
                let items: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}={}", encode_path(k), encode_path(v)))
                    .collect();
                items.join(",")
            }
            Shape::Pairs(pairs) => flat_pairs(&pairs, encode_path).join(","),
        },
    }
}

pub(super) fn build_query(
    route: &Route,
    arguments: &Map<String, Value>,
) -> Result<String, RequestError> {
    let mut pairs = Vec::new();
    for binding in &route.arguments.bindings {
        if binding.location != Location::Query {
            continue;
        }
        let Some(value) = present(arguments, binding) else {
            continue;
        };
        let field = Field {
            name: &binding.wire_name,
            style: binding.style,
            explode: binding.explode,
            allow_reserved: binding.allow_reserved,
            content_type: binding.content_type.as_deref(),
            brackets_for_nested: false,
        };
        field.pairs(value, &mut pairs);
    }
    Ok(pairs.join("&"))
}
