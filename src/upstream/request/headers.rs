//! Headers and cookies: header parameters as text (control characters, hop-by-hop and
//! framing headers refused), cookie parameters merged into one `Cookie` header, and the
//! computed `Content-Type`, which a header argument may override.

use serde_json::{Map, Value};

use crate::catalog::{Binding, Location, Route};
use crate::config::is_token;
use crate::spec::media::{self, MediaKind};

use super::RequestError;
use super::encode::*;

/// Headers no argument may set: framing, connection management and proxy credentials.
///
/// `config::headers::UNFORWARDABLE`, the headers `forward_headers` may not name, shares the
/// framing and connection part and differs in one name each way: an argument's header name
/// comes from the spec and its value from the model, so it may not carry credentials for a
/// proxy (`proxy-authorization`), while forwarding one is the operator's explicit choice; a
/// client's `expect` describes its own upload to restmcp, so it is not forwarded, while an
/// argument's is sent as given (the client sends the body at once and skips a 1xx answer).
pub(super) const FORBIDDEN_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

pub(super) fn build_headers(
    route: &Route,
    arguments: &Map<String, Value>,
) -> Result<Vec<(String, String)>, RequestError> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut cookies = Vec::new();
    for binding in &route.arguments.bindings {
        match binding.location {
            Location::Header => {
                let Some(value) = present(arguments, binding) else {
                    continue;
                };
                let name = &binding.wire_name;
                if FORBIDDEN_HEADERS
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(name))
                {
                    return Err(argument_error(
                        binding,
                        format!("the header \"{name}\" cannot be set from an argument"),
                    ));
                }
                if !is_token(name) {
                    return Err(argument_error(
                        binding,
                        format!("\"{name}\" is not a valid HTTP header name"),
                    ));
                }
                let value = header_value(binding, value);
                if let Some(c) = value.chars().find(|&c| c.is_control() && c != '\t') {
                    return Err(argument_error(
                        binding,
                        format!(
                            "header values cannot contain control characters (found U+{:04X})",
                            c as u32
                        ),
                    ));
                }
                headers.push((name.clone(), value));
            }
            Location::Cookie => {
                let Some(value) = present(arguments, binding) else {
                    continue;
                };
                let name = &binding.wire_name;
                if !is_token(name) {
                    return Err(argument_error(
                        binding,
                        format!("\"{name}\" is not a valid cookie name"),
                    ));
                }
                cookies.push(format!("{name}={}", cookie_value(binding, value)));
            }
            _ => {}
        }
    }
    if !cookies.is_empty() {
        let cookies = cookies.join("; ");
        match headers
            .iter_mut()
            .find(|(name, _)| name.eq_ignore_ascii_case("cookie"))
        {
            Some((_, existing)) if !existing.is_empty() => {
                existing.push_str("; ");
                existing.push_str(&cookies);
            }
            Some((_, existing)) => *existing = cookies,
            None => headers.push(("Cookie".to_string(), cookies)),
        }
    }
    Ok(headers)
}

/// True when `headers` holds `name` (field names are case-insensitive).
pub fn has_header(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// Adds a header restmcp computes only where no argument set it: a header parameter the
/// description declares (Swagger 2.0 `Accept`, `Content-Type`) is the caller's word.
pub fn set_default_header(headers: &mut Vec<(String, String)>, name: &str, value: String) {
    if !has_header(headers, name) {
        headers.push((name.to_string(), value));
    }
}

/// The body's `Content-Type`, unless a `Content-Type` argument gave one. A multipart
/// type given that way still needs the boundary the body was built with, so it gets it.
pub(super) fn set_body_type(headers: &mut Vec<(String, String)>, computed: String) {
    let given = headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    match given {
        Some((_, value)) => {
            let boundary = computed.split(';').map(str::trim).find(|p| {
                p.get(..9)
                    .is_some_and(|h| h.eq_ignore_ascii_case("boundary="))
            });
            let lacks_boundary = !value.to_ascii_lowercase().contains("boundary=");
            if let Some(boundary) = boundary
                && lacks_boundary
                && media::classify(value) == MediaKind::Multipart
            {
                value.push_str("; ");
                value.push_str(boundary);
            }
        }
        None => headers.push(("Content-Type".to_string(), computed)),
    }
}

/// Style simple: arrays `a,b`; objects `R=100,G=200` exploded, else `R,100,G,200`.
pub(super) fn header_value(binding: &Binding, value: &Value) -> String {
    if let Some(media_type) = &binding.content_type {
        return content_text(media_type, value);
    }
    match shape(value) {
        Shape::Primitive(v) => v,
        Shape::List(items) => items.join(","),
        Shape::Pairs(pairs) if binding.explode => {
            let items: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            items.join(",")
        }
        Shape::Pairs(pairs) => flat_pairs(&pairs, str::to_string).join(","),
    }
}

/// Style form without explode (`a=x,y`), every value percent-encoded: no `;`, `,`, space,
/// `"` or control character appears raw.
pub(super) fn cookie_value(binding: &Binding, value: &Value) -> String {
    if let Some(media_type) = &binding.content_type {
        return encode_component(&content_text(media_type, value));
    }
    match shape(value) {
        Shape::Primitive(v) => encode_component(&v),
        Shape::List(items) => {
            let items: Vec<String> = items.iter().map(|v| encode_component(v)).collect();
            items.join(",")
        }
        Shape::Pairs(pairs) => flat_pairs(&pairs, encode_component).join(","),
    }
}
