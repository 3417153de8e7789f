//! Arguments → the exact HTTP request, as the OpenAPI description defines it.
//!
//! Parameters are serialized per OpenAPI 3.1 §4.8.12.4 ("Style Values") and its style
//! examples table, which follow RFC 6570. Where the 3.1.0 table and RFC 6570 disagree
//! (label style with `explode: false`: the 3.1.0 table prints `.blue.black.brown`, RFC 6570
//! and the corrected table of 3.1.1 print `.blue,black,brown`), RFC 6570 is followed.
//!
//! Encoding rules, chosen so that no argument can change where the request goes:
//!
//! * Path values: everything but `ALPHA / DIGIT / - _ ~` is percent-encoded, `.` included
//!   (`%2E`), so a value never adds a segment, a query or a fragment. Values that would
//!   still form a dot segment (`.`, `..` in any spelling the WHATWG URL parser collapses)
//!   or an empty `simple` segment are refused. The finished URL is parsed again and must
//!   keep the base URL's scheme, host, port and exactly the built path.
//! * Query, cookie and form-body names and values: everything but the RFC 3986 unreserved
//!   characters is percent-encoded, space as `%20` (never `+`, which only form decoders
//!   read as a space; `%20` means a space to every decoder). The delimiters a style adds
//!   (`,` `|` `=` `&` `[` `]`) stay literal.
//! * `allowReserved: true` leaves the reserved characters `:/?[]@!$'()*,;` and existing
//!   percent-encoded triples in values as they are, but still encodes `&`, `=`, `#` and `+`:
//!   those would end the parameter, start another, cut the query short or read as a space.
//! * Header values are sent as text; any control character but HTAB (CR, LF and NUL among
//!   them) is refused, as are the hop-by-hop and framing headers. A `Content-Type` (or
//!   `Accept`) header argument, which Swagger 2.0 descriptions declare, wins over the one
//!   restmcp computes ([`set_default_header`]).
//! * Bodies go out only in the media type the tool was built for: JSON, form-urlencoded,
//!   multipart, or the raw string (text types) or decoded base64 (bytes) of the `body`
//!   argument; a range (`image/*`) takes the type a `data:` URI names within it.
//! * Multipart file properties are file parts (`filename` and `Content-Type`, RFC 7578).
//!   A file name the model gives keeps only its last path segment and loses its control
//!   characters; `"` is escaped as `%22`, so a name can neither end the header nor add one.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use percent_encoding::{
    AsciiSet, CONTROLS, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode,
};
use serde_json::{Map, Value};

use crate::catalog::{Binding, BodyPlan, FileContent, FilePart, Location, Route, default_filename};
use crate::spec::media::{self, MediaKind};
use crate::spec::{Method, Style};

/// An HTTP request ready to send, independent of any HTTP client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: Method,
    /// Absolute URL: base URL + encoded path + query string.
    pub url: String,
    /// Header names as the spec spells them; includes `Cookie` for cookie parameters and
    /// `Content-Type` when there is a body.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// Why a request could not be built from the arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("argument \"{argument}\": {problem}")]
    Argument { argument: String, problem: String },
    #[error("API \"{api}\" has no absolute base URL; set apis.{api}.base_url in the configuration")]
    NoBaseUrl { api: String },
    #[error(
        "API \"{api}\": base URL \"{url}\" {problem}; set apis.{api}.base_url in the configuration"
    )]
    BadBaseUrl {
        api: String,
        url: String,
        problem: String,
    },
    /// Body fields make a JSON object, and the body's media type is not one that can
    /// carry it.
    #[error(
        "the body fields cannot be sent as {media_type}, the only media type the operation accepts"
    )]
    Body { media_type: String },
    /// The assembled URL did not keep the base URL's origin or the built path (a
    /// defence-in-depth check; the encoding rules should make it unreachable).
    #[error("the request URL \"{url}\" {problem}")]
    Url { url: String, problem: String },
}

/// Builds the request for `route` from validated `arguments`.
pub fn build(route: &Route, arguments: &Map<String, Value>) -> Result<HttpRequest, RequestError> {
    let base = base_url(route)?;
    let path = build_path(route, arguments)?;
    let query = build_query(route, arguments)?;
    let mut headers = build_headers(route, arguments)?;
    let body = match &route.body {
        Some(plan) => build_body(route, plan, arguments)?,
        None => None,
    };
    let url = assemble_url(base, &path, &query)?;
    let body = body.map(|(content_type, bytes)| {
        set_body_type(&mut headers, content_type);
        bytes
    });
    Ok(HttpRequest {
        method: route.method,
        url,
        headers,
        body,
    })
}

// ---------------------------------------------------------------------------------------
// Encoding sets and value text

/// Path values: all but `ALPHA / DIGIT / - _ ~`; `.` is encoded too.
const PATH_VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'~');
/// Query, cookie and form components: all but RFC 3986 unreserved characters.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// The literal parts of a path template: what may not appear raw in a path, plus `\`
/// (a separator to WHATWG parsers) and the gen-delims that would end the path.
const PATH_LITERAL: &AsciiSet = &CONTROLS
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
const RESERVED_KEPT: &[u8] = b":/?[]@!$'()*,;";

fn encode_path(text: &str) -> String {
    utf8_percent_encode(text, PATH_VALUE).to_string()
}

fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// A query or form value, honouring `allowReserved`.
fn encode_value(text: &str, allow_reserved: bool) -> String {
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
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => compact(other),
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A parameter declared with `content`: the value in that media type.
fn content_text(media_type: &str, value: &Value) -> String {
    match value {
        Value::String(s) if !media::is_json(media_type) => s.clone(),
        other => compact(other),
    }
}

/// A value as RFC 6570 sees it: a primitive, a list or an associative array. Null members
/// are undefined and dropped; nested values become compact JSON.
enum Shape {
    Primitive(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

fn shape(value: &Value) -> Shape {
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
fn present<'a>(arguments: &'a Map<String, Value>, binding: &Binding) -> Option<&'a Value> {
    arguments.get(&binding.argument).filter(|v| !v.is_null())
}

fn argument_error(binding: &Binding, problem: impl Into<String>) -> RequestError {
    RequestError::Argument {
        argument: binding.argument.clone(),
        problem: problem.into(),
    }
}

// ---------------------------------------------------------------------------------------
// URL: base, path, query

/// The parsed base URL. Only the path after it is ever built from arguments.
fn base_url(route: &Route) -> Result<url::Url, RequestError> {
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
fn assemble_url(mut url: url::Url, path: &str, query: &str) -> Result<String, RequestError> {
    let expected_path = format!("{}{path}", url.path().trim_end_matches('/'));
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
    Ok(url.into())
}

/// `scheme://userinfo@host:port` of the base URL, as its serialization spells it.
fn origin_prefix(base: &url::Url) -> &str {
    let serialized = base.as_str();
    let path_start = serialized.len() - base.path().len();
    &serialized[..path_start]
}

fn build_path(route: &Route, arguments: &Map<String, Value>) -> Result<String, RequestError> {
    let mut out = String::new();
    let mut rest = route.path.as_str();
    if !rest.starts_with('/') {
        out.push('/');
    }
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            break;
        };
        out.push_str(&utf8_percent_encode(&rest[..open], PATH_LITERAL).to_string());
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
        let expansion = expand_path(binding, value);
        if expansion.is_empty() {
            return Err(argument_error(
                binding,
                "must not be empty: it is a segment of the URL path",
            ));
        }
        if is_dot_segment(&expansion) {
            return Err(argument_error(
                binding,
                "cannot be \".\" or \"..\": it is a segment of the URL path",
            ));
        }
        out.push_str(&expansion);
        rest = &after[close + 1..];
    }
    out.push_str(&utf8_percent_encode(rest, PATH_LITERAL).to_string());
    if let Some(segment) = out.split('/').find(|s| is_dot_segment(s)) {
        return Err(RequestError::Url {
            url: out.clone(),
            problem: format!("has the dot segment \"{segment}\" in its path"),
        });
    }
    Ok(out)
}

/// A segment the WHATWG URL parser (which HTTP clients use) treats as `.` or `..`.
fn is_dot_segment(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "." | ".." | "%2e" | "%2e%2e" | ".%2e" | "%2e."
    )
}

/// One path parameter, per style (simple, label, matrix; any other style reads as simple).
fn expand_path(binding: &Binding, value: &Value) -> String {
    if let Some(media_type) = &binding.content_type {
        return encode_path(&content_text(media_type, value));
    }
    let name = encode_path(&binding.wire_name);
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

/// `[(R, 100), (G, 200)]` → `[R, 100, G, 200]`, each encoded.
fn flat_pairs(pairs: &[(String, String)], encode: impl Fn(&str) -> String) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|(k, v)| [encode(k), encode(v)])
        .collect()
}

fn build_query(route: &Route, arguments: &Map<String, Value>) -> Result<String, RequestError> {
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

/// One query parameter or form-body property, with the serialization rules that apply.
struct Field<'a> {
    name: &'a str,
    style: Style,
    explode: bool,
    allow_reserved: bool,
    content_type: Option<&'a str>,
    /// Form bodies: objects and nested values without an explicit encoding use bracket
    /// notation (`a[b]=c`, `a[0][b]=c`) instead of the form style's flattening.
    brackets_for_nested: bool,
}

impl Field<'_> {
    fn value(&self, text: &str) -> String {
        encode_value(text, self.allow_reserved)
    }

    /// Appends this field's `name=value` pairs, already encoded.
    fn pairs(&self, value: &Value, out: &mut Vec<String>) {
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
fn needs_brackets(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items
            .iter()
            .any(|v| matches!(v, Value::Object(_) | Value::Array(_))),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// Headers and cookies

/// Headers no argument may set: framing, connection management and proxy credentials.
const FORBIDDEN_HEADERS: [&str; 10] = [
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

fn build_headers(
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
fn set_body_type(headers: &mut Vec<(String, String)>, computed: String) {
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

/// RFC 9110 `token`: the characters a field or cookie name may hold.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Style simple: arrays `a,b`; objects `R=100,G=200` exploded, else `R,100,G,200`.
fn header_value(binding: &Binding, value: &Value) -> String {
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
fn cookie_value(binding: &Binding, value: &Value) -> String {
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

// ---------------------------------------------------------------------------------------
// Body

/// The body and its `Content-Type`, or None when nothing is sent.
fn build_body(
    route: &Route,
    plan: &BodyPlan,
    arguments: &Map<String, Value>,
) -> Result<Option<(String, Vec<u8>)>, RequestError> {
    let whole = route
        .arguments
        .bindings
        .iter()
        .find(|b| b.location == Location::Body);
    let fields: Vec<(&Binding, &Value)> = route
        .arguments
        .bindings
        .iter()
        .filter(|b| b.location == Location::BodyField)
        .filter_map(|b| arguments.get(&b.argument).map(|v| (b, v)))
        .collect();
    let kind = media::classify(&plan.media_type);

    if let Some(binding) = whole {
        if let Some(value) = present(arguments, binding) {
            return whole_body(binding, plan, kind, value).map(Some);
        }
        if fields.is_empty() {
            if plan.required {
                return Err(argument_error(
                    binding,
                    "is required: it is the request body",
                ));
            }
            return Ok(None);
        }
    }
    if fields.is_empty() && !plan.required {
        return Ok(None);
    }
    match kind {
        MediaKind::Json | MediaKind::Wildcard => {
            let object: Map<String, Value> = fields
                .iter()
                .map(|(b, v)| (b.wire_name.clone(), (*v).clone()))
                .collect();
            let content_type = match kind {
                MediaKind::Json => plan.media_type.clone(),
                _ => "application/json".to_string(),
            };
            Ok(Some((
                content_type,
                compact(&Value::Object(object)).into_bytes(),
            )))
        }
        // Fields make a JSON object, which this media type is not: sending it would send a
        // type the operation does not accept. (Synthesized tools give such bodies as one
        // `body` argument; only a hand-written tool can ask for this.)
        MediaKind::Other => Err(RequestError::Body {
            media_type: plan.media_type.clone(),
        }),
        MediaKind::FormUrlEncoded => {
            let mut pairs = Vec::new();
            for (binding, value) in &fields {
                let has_encoding = plan.encoding.contains_key(&binding.wire_name);
                form_field(binding, has_encoding).pairs(value, &mut pairs);
            }
            Ok(Some((
                plan.media_type.clone(),
                pairs.join("&").into_bytes(),
            )))
        }
        MediaKind::Multipart => {
            let mut parts = Vec::new();
            for (binding, value) in &fields {
                let file = plan.files.get(&binding.wire_name);
                let filenames = file
                    .and_then(|_| {
                        route
                            .arguments
                            .by_wire(Location::FileName, &binding.wire_name)
                    })
                    .and_then(|b| present(arguments, b).map(|v| (b, v)));
                let filenames = match filenames {
                    Some((name_binding, value)) => given_filenames(name_binding, value)?,
                    None => Vec::new(),
                };
                let part = PartSpec {
                    name: &binding.wire_name,
                    file,
                    filenames,
                    content_type: binding.content_type.as_deref(),
                };
                part.parts(value, &mut parts)
                    .map_err(|problem| argument_error(binding, problem))?;
            }
            Ok(Some(multipart(&plan.media_type, &parts)))
        }
    }
}

/// The file names the model gave for a file argument: one string, or one per file.
fn given_filenames(binding: &Binding, value: &Value) -> Result<Vec<Option<String>>, RequestError> {
    let one = |value: &Value| match value {
        Value::Null => Ok(None),
        Value::String(name) => Ok(Some(name.clone())),
        _ => Err(argument_error(binding, "a file name must be a string")),
    };
    match value {
        Value::Array(names) => names.iter().map(one).collect(),
        other => Ok(vec![one(other)?]),
    }
}

fn form_field(binding: &Binding, has_encoding: bool) -> Field<'_> {
    Field {
        name: &binding.wire_name,
        style: binding.style,
        explode: binding.explode,
        allow_reserved: binding.allow_reserved,
        content_type: binding
            .content_type
            .as_deref()
            .filter(|ct| media::is_json(ct)),
        brackets_for_nested: !has_encoding || binding.style == Style::DeepObject,
    }
}

/// The `body` argument: the whole request body.
fn whole_body(
    binding: &Binding,
    plan: &BodyPlan,
    kind: MediaKind,
    value: &Value,
) -> Result<(String, Vec<u8>), RequestError> {
    match kind {
        MediaKind::Json => Ok((plan.media_type.clone(), compact(value).into_bytes())),
        MediaKind::Wildcard if !binding.binary => {
            Ok(("application/json".to_string(), compact(value).into_bytes()))
        }
        MediaKind::FormUrlEncoded => match value {
            Value::Object(map) => {
                let mut pairs = Vec::new();
                for (key, member) in map {
                    let encoding = plan.encoding.get(key);
                    let field = Field {
                        name: key,
                        style: encoding.map_or(Style::Form, |e| e.style),
                        explode: encoding.is_none_or(|e| e.explode),
                        allow_reserved: encoding.is_some_and(|e| e.allow_reserved),
                        content_type: encoding
                            .and_then(|e| e.content_type.as_deref())
                            .filter(|ct| media::is_json(ct)),
                        brackets_for_nested: encoding.is_none_or(|e| e.style == Style::DeepObject),
                    };
                    field.pairs(member, &mut pairs);
                }
                Ok((plan.media_type.clone(), pairs.join("&").into_bytes()))
            }
            // An already-encoded form string is sent as given.
            Value::String(s) => Ok((plan.media_type.clone(), s.clone().into_bytes())),
            _ => Err(argument_error(
                binding,
                "a form-encoded body must be an object of fields",
            )),
        },
        MediaKind::Multipart => {
            let Value::Object(map) = value else {
                return Err(argument_error(
                    binding,
                    "a multipart body must be an object of fields",
                ));
            };
            let mut parts = Vec::new();
            for (key, member) in map {
                let part = PartSpec {
                    name: key,
                    file: plan.files.get(key),
                    filenames: Vec::new(),
                    content_type: plan
                        .encoding
                        .get(key)
                        .and_then(|e| e.content_type.as_deref()),
                };
                part.parts(member, &mut parts).map_err(|problem| {
                    argument_error(binding, format!("field \"{key}\": {problem}"))
                })?;
            }
            Ok(multipart(&plan.media_type, &parts))
        }
        MediaKind::Wildcard | MediaKind::Other => {
            if binding.binary {
                let Value::String(s) = value else {
                    return Err(argument_error(
                        binding,
                        "file content must be a base64 string or a data: URI",
                    ));
                };
                let file = decode_file(s).map_err(|problem| argument_error(binding, problem))?;
                let content_type = body_media_type(&plan.media_type, file.media_type)
                    .map_err(|problem| argument_error(binding, problem))?;
                return Ok((content_type, file.bytes));
            }
            let bytes = match value {
                Value::String(s) => s.clone().into_bytes(),
                other => compact(other).into_bytes(),
            };
            // A text range (`text/*`) is sent as its plain member.
            let content_type = if media::is_range(&plan.media_type) {
                "text/plain".to_string()
            } else {
                plan.media_type.clone()
            };
            Ok((content_type, bytes))
        }
    }
}

/// The `Content-Type` of a binary body: the declared type, or for a range (`image/*`,
/// `*/*`) the type a `data:` URI names within it; never a type outside what the operation
/// accepts.
fn body_media_type(declared: &str, given: Option<String>) -> Result<String, String> {
    if !media::is_range(declared) {
        return Ok(declared.to_string());
    }
    match given {
        Some(given) if media::within(&given, declared) => Ok(given),
        _ if media::within("application/octet-stream", declared) => {
            Ok("application/octet-stream".to_string())
        }
        Some(given) => Err(format!(
            "the data: URI's type \"{given}\" is not a {declared} type the operation accepts"
        )),
        None => Err(format!(
            "the operation accepts {declared}: give the content as a data: URI naming its type (data:<type>;base64,<data>)"
        )),
    }
}

/// Decoded file content.
struct File {
    bytes: Vec<u8>,
    /// From a `data:` URI.
    media_type: Option<String>,
}

/// A base64 string (standard or URL-safe alphabet, padding optional, whitespace ignored)
/// or a `data:[<media type>][;base64],<data>` URI.
fn decode_file(text: &str) -> Result<File, String> {
    let trimmed = text.trim();
    if trimmed.len() >= 5 && trimmed[..5].eq_ignore_ascii_case("data:") {
        let rest = &trimmed[5..];
        let Some((meta, data)) = rest.split_once(',') else {
            return Err("is a data: URI without a \",\" before its data".to_string());
        };
        let (media_type, base64) = match meta.len().checked_sub(7) {
            Some(cut) if meta[cut..].eq_ignore_ascii_case(";base64") => (&meta[..cut], true),
            _ => (meta, false),
        };
        let media_type = media_type.trim();
        if media_type
            .bytes()
            .any(|b| !(0x21..0x7f).contains(&b) || b == b'"')
        {
            return Err(format!(
                "data: URI media type \"{media_type}\" is not valid"
            ));
        }
        let data: Vec<u8> = percent_decode_str(data).collect();
        let bytes = if base64 {
            decode_base64(&data).ok_or("the data: URI's base64 data is not valid base64")?
        } else {
            data
        };
        let media_type = (!media_type.is_empty() && !media_type.starts_with(';'))
            .then(|| media_type.to_string());
        return Ok(File { bytes, media_type });
    }
    let bytes = decode_base64(trimmed.as_bytes()).ok_or(
        "file content must be base64 (or a data:<type>;base64,<data> URI), and this is not valid base64",
    )?;
    Ok(File {
        bytes,
        media_type: None,
    })
}

fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT};
    let compact: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    STANDARD_PAD_INDIFFERENT
        .decode(&compact)
        .or_else(|_| URL_SAFE_PAD_INDIFFERENT.decode(&compact))
        .ok()
}

/// One part of a multipart body.
struct Part {
    name: String,
    filename: Option<String>,
    content_type: Option<String>,
    data: Vec<u8>,
}

/// One multipart property and how its value becomes parts.
struct PartSpec<'a> {
    name: &'a str,
    /// Set when the property is sent as file parts.
    file: Option<&'a FilePart>,
    /// The file names the model gave, by position (one for a single file).
    filenames: Vec<Option<String>>,
    /// The encoding object's `contentType`.
    content_type: Option<&'a str>,
}

impl PartSpec<'_> {
    /// Appends the parts for `value`: file parts for file properties, a JSON part for
    /// objects (and for anything whose encoding says JSON), one part per item for arrays
    /// (the encoding's default content type "is defined based on the inner type"), text
    /// for scalars. Nulls are omitted.
    fn parts(&self, value: &Value, out: &mut Vec<Part>) -> Result<(), String> {
        if let Some(file) = self.file {
            return self.files(file, value, out);
        }
        let declared = self.content_type.and_then(single_media_type);
        match value {
            Value::Null => Ok(()),
            _ if declared.is_some_and(media::is_json) => {
                out.push(self.part(compact(value).into_bytes(), declared.map(str::to_string)));
                Ok(())
            }
            Value::Array(items) => {
                for item in items {
                    if item.is_array() {
                        out.push(self.part(
                            compact(item).into_bytes(),
                            Some("application/json".to_string()),
                        ));
                    } else {
                        self.parts(item, out)?;
                    }
                }
                Ok(())
            }
            Value::Object(_) => {
                out.push(self.part(
                    compact(value).into_bytes(),
                    Some("application/json".to_string()),
                ));
                Ok(())
            }
            scalar => {
                out.push(self.part(text(scalar).into_bytes(), declared.map(str::to_string)));
                Ok(())
            }
        }
    }

    /// The file parts of a file property: one, or one per item of an array.
    fn files(&self, file: &FilePart, value: &Value, out: &mut Vec<Part>) -> Result<(), String> {
        let items: Vec<&Value> = match value {
            Value::Null => return Ok(()),
            Value::Array(items) => items.iter().filter(|v| !v.is_null()).collect(),
            single => vec![single],
        };
        for (index, item) in items.into_iter().enumerate() {
            let Value::String(content) = item else {
                return Err(match file.content {
                    FileContent::Base64 => {
                        "file content must be a base64 string or a data: URI".to_string()
                    }
                    FileContent::Text => "file content must be a string of text".to_string(),
                });
            };
            let (data, given_type) = match file.content {
                FileContent::Base64 => {
                    let decoded = decode_file(content)?;
                    (decoded.bytes, decoded.media_type)
                }
                FileContent::Text => (content.clone().into_bytes(), None),
            };
            let content_type = part_media_type(file, given_type);
            let filename = self
                .filenames
                .get(index)
                .cloned()
                .flatten()
                .and_then(|name| clean_filename(&name))
                .unwrap_or_else(|| default_filename(self.name, &content_type));
            out.push(Part {
                name: self.name.to_string(),
                filename: Some(filename),
                content_type: Some(content_type),
                data,
            });
        }
        Ok(())
    }

    fn part(&self, data: Vec<u8>, content_type: Option<String>) -> Part {
        Part {
            name: self.name.to_string(),
            filename: None,
            content_type,
            data,
        }
    }
}

/// A file part's `Content-Type`: the description's one type; else, where it allows
/// several or a range, the `data:` URI's type when it is one of them; else the first type
/// it names; else `text/plain` for text and `application/octet-stream` for bytes.
fn part_media_type(file: &FilePart, given: Option<String>) -> String {
    let allowed: Vec<&str> = file
        .media_types
        .as_deref()
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|t| media::is_sendable(t))
                .collect()
        })
        .unwrap_or_default();
    if let [single] = allowed.as_slice()
        && !media::is_range(single)
    {
        return single.to_string();
    }
    if let Some(given) = given
        && (allowed.is_empty() || allowed.iter().any(|range| media::within(&given, range)))
    {
        return given;
    }
    if let Some(first) = allowed.iter().find(|t| !media::is_range(t)) {
        return first.to_string();
    }
    match file.content {
        FileContent::Text => "text/plain".to_string(),
        FileContent::Base64 => "application/octet-stream".to_string(),
    }
}

/// A file name the model gave, made safe to send: only its last path segment (after any
/// `/` or `\`), no control characters, at most 255 bytes. `None` when nothing usable is
/// left (empty, `.`, `..`). Quoting for the header happens in [`quote_disposition`].
fn clean_filename(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let mut clean = String::new();
    for c in last.chars().filter(|c| !c.is_control()) {
        if clean.len() + c.len_utf8() > 255 {
            break;
        }
        clean.push(c);
    }
    let clean = clean.trim().to_string();
    (!clean.is_empty() && clean != "." && clean != "..").then_some(clean)
}

/// The first media type of an encoding's `contentType` list, unless it is a wildcard.
fn single_media_type(list: &str) -> Option<&str> {
    let first = list.split(',').next()?.trim();
    (!first.is_empty() && !first.contains('*') && !first.bytes().any(|b| b.is_ascii_control()))
        .then_some(first)
}

/// Assembles a multipart body (RFC 7578, CRLF line endings) and its `Content-Type`.
fn multipart(media_type: &str, parts: &[Part]) -> (String, Vec<u8>) {
    let mut heads = Vec::with_capacity(parts.len());
    for part in parts {
        let mut head = format!(
            "Content-Disposition: form-data; name=\"{}\"",
            quote_disposition(&part.name)
        );
        if let Some(filename) = &part.filename {
            let _ = write!(head, "; filename=\"{}\"", quote_disposition(filename));
        }
        head.push_str("\r\n");
        if let Some(content_type) = &part.content_type {
            let _ = write!(head, "Content-Type: {content_type}\r\n");
        }
        heads.push(head);
    }
    let boundary = loop {
        let candidate = boundary();
        let needle = candidate.as_bytes();
        let clash = parts
            .iter()
            .zip(&heads)
            .any(|(p, h)| contains(&p.data, needle) || h.contains(&candidate));
        if !clash {
            break candidate;
        }
    };
    let mut body = Vec::new();
    for (part, head) in parts.iter().zip(&heads) {
        body.extend_from_slice(format!("--{boundary}\r\n{head}\r\n").as_bytes());
        body.extend_from_slice(&part.data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    let essence = media::essence(media_type);
    let essence = if essence.starts_with("multipart/") {
        essence
    } else {
        "multipart/form-data".to_string()
    };
    (format!("{essence}; boundary={boundary}"), body)
}

/// A `Content-Disposition` quoted-string value, escaped as HTML forms do.
fn quote_disposition(text: &str) -> String {
    text.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// A random-looking boundary: std's randomly keyed hasher over a counter and the time.
fn boundary() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut words = [0u64; 2];
    for (i, word) in words.iter_mut().enumerate() {
        *word = RandomState::new().hash_one((count, nanos, i));
    }
    format!("restmcp-{:016x}{:016x}", words[0], words[1])
}

#[cfg(test)]
mod tests;
