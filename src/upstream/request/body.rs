//! Bodies in the media type the tool was built for: JSON, form-urlencoded, multipart (file
//! parts with a cleaned `filename` and their `Content-Type`, RFC 7578), or the raw string or
//! decoded base64 (`data:` URIs too) of the whole-body argument.

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use crate::catalog::{Binding, BodyPlan, FileContent, FilePart, Location, Route, default_filename};
use crate::spec::Style;
use crate::spec::media::{self, MediaKind};

use super::RequestError;
use super::encode::*;

/// The body and its `Content-Type`, or None when nothing is sent.
pub(super) fn build_body(
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
pub(super) fn given_filenames(
    binding: &Binding,
    value: &Value,
) -> Result<Vec<Option<String>>, RequestError> {
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

pub(super) fn form_field(binding: &Binding, has_encoding: bool) -> Field<'_> {
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
pub(super) fn whole_body(
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
pub(super) fn body_media_type(declared: &str, given: Option<String>) -> Result<String, String> {
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
pub(super) struct File {
    bytes: Vec<u8>,
    /// From a `data:` URI.
    media_type: Option<String>,
}

/// A base64 string (standard or URL-safe alphabet, padding optional, whitespace ignored)
/// or a `data:[<media type>][;base64],<data>` URI.
pub(super) fn decode_file(text: &str) -> Result<File, String> {
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

pub(super) fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
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
pub(super) struct Part {
    name: String,
    filename: Option<String>,
    content_type: Option<String>,
    data: Vec<u8>,
}

/// One multipart property and how its value becomes parts.
pub(super) struct PartSpec<'a> {
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
                    FileContent::Text | FileContent::Encoded => {
                        "file content must be a string of text".to_string()
                    }
                });
            };
            let (data, given_type) = match file.content {
                FileContent::Base64 => {
                    let decoded = decode_file(content)?;
                    (decoded.bytes, decoded.media_type)
                }
                FileContent::Text | FileContent::Encoded => (content.clone().into_bytes(), None),
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
pub(super) fn part_media_type(file: &FilePart, given: Option<String>) -> String {
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
        FileContent::Text | FileContent::Encoded => "text/plain".to_string(),
        FileContent::Base64 => "application/octet-stream".to_string(),
    }
}

/// A file name the model gave, made safe to send: only its last path segment (after any
/// `/` or `\`), no control characters, at most 255 bytes. `None` when nothing usable is
/// left (empty, `.`, `..`). Quoting for the header happens in [`quote_disposition`].
pub(super) fn clean_filename(name: &str) -> Option<String> {
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
pub(super) fn single_media_type(list: &str) -> Option<&str> {
    let first = list.split(',').next()?.trim();
    (!first.is_empty() && !first.contains('*') && !first.bytes().any(|b| b.is_ascii_control()))
        .then_some(first)
}

/// Assembles a multipart body (RFC 7578, CRLF line endings) and its `Content-Type`.
pub(super) fn multipart(media_type: &str, parts: &[Part]) -> (String, Vec<u8>) {
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
pub(super) fn quote_disposition(text: &str) -> String {
    text.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// A random-looking boundary: std's randomly keyed hasher over a counter and the time.
pub(super) fn boundary() -> String {
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
