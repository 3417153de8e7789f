//! An upstream HTTP response → a [`ToolResult`].
//!
//! The result is read by an LLM, so every outcome is spelled out in text it can act on, and
//! it is checked by MCP clients, so `structuredContent` never contradicts the tool's
//! `outputSchema`. The mapping:
//!
//! * **2xx, JSON media type** (`application/json`, `text/json`, `*/*+json`; parameters and
//!   case ignored), complete body that parses: `structured` is the body, plus one text that
//!   is exactly the structured value, compact. Up to MCP 2025-11-25 structured content is
//!   an object: a scalar or array body is `{"result": …}` when the output plan wraps it,
//!   and is not structured at all without an outputSchema (the text carries it). On
//!   2026-07-28 ([`Shape::bare`]) any JSON value may be structured content: the body is
//!   given as it is, with or without an outputSchema. With an outputSchema the structured
//!   value is checked first (in the published, wrapped form); a mismatch (or a non-object
//!   root the schema does not wrap) gives `is_error` with the explanation and the data as
//!   text, and no structured content.
//! * **2xx, JSON media type, body that does not parse**: `is_error`, saying the upstream sent
//!   invalid JSON, with an excerpt of the body.
//! * **2xx with no body** (204, or an empty body): success with a short text.
//! * **2xx, other media types**: text for textual types (`text/*`, XML, YAML, JavaScript,
//!   form-urlencoded, CSV, …, decoded as UTF-8, lossy), [`Content::Image`] for `image/*`
//!   (except SVG, which is XML text), [`Content::Audio`] for `audio/*`, and an embedded
//!   [`Content::Resource`] for other binary types. A missing or malformed Content-Type, or
//!   one that is neither known textual nor known binary, is sniffed: UTF-8 without control
//!   characters is text, anything else an `application/octet-stream` resource.
//! * **2xx, `multipart/*`** (not `form-data`), complete and well-formed: one content block
//!   per part, each mapped by its own Content-Type as above (`response/mixed.rs`).
//! * **2xx over the size cap** (`omitted > 0`, counted in decoded bytes for a compressed
//!   body): a truncated body cannot be parsed, so JSON is returned as text like any textual
//!   body, followed by a marker text saying how much was left out. A truncated binary body
//!   is not returned at all (a partial image or archive is corrupt, and a client passing a
//!   corrupt image to a model can fail the whole turn): one text says what it was and how
//!   large. Without an outputSchema these are successes: the call succeeded.
//! * **Anything else** (1xx, 3xx, 4xx, 5xx, and nonsense like 0 or 999): `is_error`, no
//!   structured content, one text `upstream API "petstore" answered 404 Not Found: {body}`
//!   with the body shown up to [`ERROR_EXCERPT`] bytes (JSON compacted, binary described as
//!   `<N bytes of image/png>`), then a one-line hint for the common statuses.
//!
//! **2xx answers of a tool with an outputSchema that are not its JSON.** MCP says a tool with
//! an outputSchema must return structured content that conforms to it, and clients (the
//! official SDKs among them) reject a successful result without one. restmcp asks for JSON
//! first (the route's `Accept`), but when the answer is still text, XML, an image, another
//! binary type, or JSON cut by the size cap, there is no structured data to give, and a
//! placeholder would tell a client that prefers `structuredContent` nothing at all. Such a
//! result is `is_error` with no structured content: its first text says what happened
//! (`upstream API "petstore" answered 200 OK with application/xml, not the JSON the tool's
//! outputSchema describes; the request itself succeeded and the response follows`, or, for
//! a truncated body, its size, the cap, and a hint to narrow the request), followed by the
//! body as content exactly as without an outputSchema. The official SDKs skip outputSchema
//! validation for error results, and the flag tells the client to read the content.
//!
//! **An empty 2xx body** (204) is a success all the same: with an outputSchema
//! `structured` is the placeholder `{}`, since restmcp's outputSchemas are lenient (no
//! `required`, the wrapper has no required `result`) and an empty object conforms and
//! claims nothing. The placeholder is still passed to `check_output`; should a schema refuse
//! it, the result becomes `is_error` with a note that the request itself succeeded.
//!
//! **Resource URIs.** Binary bodies are embedded as `restmcp://{api}/response` (the API name
//! percent-encoded). The URI only labels the blob, which is carried in full in the result:
//! restmcp serves no resource under it, and it is the same for every call.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::tape::Tape;
use super::{Content, ToolResult};
use crate::catalog::OutputPlan;
use crate::json;

mod mixed;
#[cfg(test)]
mod tests;

/// The most body bytes an error result quotes (error pages can be large HTML documents; the
/// first few KiB hold what a model can use).
pub const ERROR_EXCERPT: usize = 4096;

/// What came back from the upstream, already read (up to the size cap).
#[derive(Debug, Clone, Copy)]
pub struct HttpResponse<'a> {
    pub status: u16,
    /// The status line's reason, or the canonical one (`Not Found`).
    pub reason: &'a str,
    pub content_type: Option<&'a str>,
    /// The body as read: at most the configured cap.
    pub body: &'a [u8],
    /// Bytes not read because the body was larger than the cap (0 if it was all read).
    pub omitted: u64,
}

/// Maps a response to a tool result. `output` is the tool's output plan (None when the
/// tool has no outputSchema); `check_output` validates a structured result against the
/// published outputSchema and returns every violation as text.
/// How a tool's JSON results are shaped.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape<'a> {
    /// The outputSchema's plan, when the tool has one.
    pub output: Option<&'a OutputPlan>,
    /// Only these fields of a JSON response are kept (an overlay's `response.fields`).
    pub fields: &'a [String],
    /// The client's protocol revision (2026-07-28) takes any JSON value as structured
    /// content: scalar and array bodies are not wrapped.
    pub bare: bool,
    /// The result's budget in bytes of compact JSON and the operation's paging arguments:
    /// a longer list keeps whole items ([`super::paging::bound`]). The dispatcher gives it
    /// only for a body that arrived longer than the budget: one within it is within it as
    /// compact JSON too (give or take a re-spelled number), so most calls pay nothing.
    pub bound: Option<(u64, &'a super::paging::Paging)>,
    /// The caller writes the structured content from the text
    /// ([`super::CallContext::structured_from_text`]): a compact answer, neither projected
    /// nor trimmed, is checked on a [`Tape`] and left in the text
    /// ([`ToolResult::structured_in_text`]).
    pub from_text: bool,
}

/// Checks a structured result against the tool's outputSchema; every violation as text.
pub type CheckOutput<'c> = dyn Fn(&Tape<'_>) -> Result<(), String> + 'c;

pub fn to_result(
    api: &str,
    response: &HttpResponse<'_>,
    shape: &Shape<'_>,
    check_output: &CheckOutput<'_>,
) -> ToolResult {
    let output = shape.output;
    let r = Reading::new(api, response);
    if !(200..=299).contains(&response.status) {
        return failure(&r);
    }
    if r.is_empty() {
        let text = format!(
            "{}: the request succeeded and returned no body.",
            r.status_line()
        );
        return no_body(&r, vec![text_content(text)], output, check_output);
    }
    if r.kind == Kind::Json && !r.truncated() {
        return json_success(&r, shape, check_output);
    }
    if let Some(content) = multipart_content(&r, response.content_type) {
        return match output {
            None => ToolResult {
                content,
                structured: None,
                is_error: false,
                text_is_structured: None,
            },
            Some(_) => not_structured(&r, content),
        };
    }
    let content = match r.kind {
        Kind::Json | Kind::Text => {
            let mut content = vec![text_content(decode(r.body, r.truncated()))];
            if r.truncated() {
                content.push(text_content(r.truncation_marker()));
            }
            content
        }
        _ if r.truncated() => vec![text_content(format!(
            "{}: the request succeeded, but its {} body ({}) is larger than the response \
             size cap ({} read), and a partial {} cannot be returned.",
            r.status_line(),
            r.mime,
            human_size(r.total()),
            human_size(r.body.len() as u64),
            r.mime,
        ))],
        Kind::Image => vec![Content::Image {
            data: STANDARD.encode(r.body),
            mime_type: r.mime.clone(),
        }],
        Kind::Audio => vec![Content::Audio {
            data: STANDARD.encode(r.body),
            mime_type: r.mime.clone(),
        }],
        Kind::Binary => vec![Content::Resource {
            uri: resource_uri(api),
            mime_type: r.mime.clone(),
            blob: STANDARD.encode(r.body),
        }],
    };
    match output {
        None => ToolResult {
            content,
            structured: None,
            is_error: false,
            text_is_structured: None,
        },
        Some(_) => not_structured(&r, content),
    }
}

/// A complete `multipart/*` answer (not `form-data`) as one content block per part, each
/// mapped by its own media type as a whole body would be (a nested multipart part is
/// binary); `None` for any other answer, or a body that is not well-formed multipart.
fn multipart_content(r: &Reading<'_>, content_type: Option<&str>) -> Option<Vec<Content>> {
    if !r.mime.starts_with("multipart/") || r.mime == "multipart/form-data" || r.truncated() {
        return None;
    }
    let parts = mixed::parts(content_type?, r.body)?;
    let content = parts
        .iter()
        .map(|part| {
            let part = Reading::new(
                r.api,
                &HttpResponse {
                    status: r.status,
                    reason: r.reason,
                    content_type: Some(&part.content_type),
                    body: part.body,
                    omitted: 0,
                },
            );
            match part.kind {
                Kind::Json | Kind::Text => text_content(decode(part.body, false)),
                Kind::Image => Content::Image {
                    data: STANDARD.encode(part.body),
                    mime_type: part.mime.clone(),
                },
                Kind::Audio => Content::Audio {
                    data: STANDARD.encode(part.body),
                    mime_type: part.mime.clone(),
                },
                Kind::Binary => Content::Resource {
                    uri: resource_uri(r.api),
                    mime_type: part.mime.clone(),
                    blob: STANDARD.encode(part.body),
                },
            }
        })
        .collect();
    Some(content)
}

/// How a body is returned, from its media type (or from the bytes when there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json,
    Text,
    Image,
    Audio,
    Binary,
}

/// A response with its media type classified.
struct Reading<'r> {
    api: &'r str,
    status: u16,
    reason: &'r str,
    body: &'r [u8],
    omitted: u64,
    kind: Kind,
    /// The media type's essence (`image/png`), lowercase, or the sniffed one.
    mime: String,
}

impl<'r> Reading<'r> {
    fn new(api: &'r str, response: &HttpResponse<'r>) -> Self {
        let truncated = response.omitted > 0;
        let (kind, mime) = match response.content_type.and_then(essence) {
            Some(mime) => {
                let kind = classify(&mime).unwrap_or_else(|| sniff(response.body, truncated));
                (kind, mime)
            }
            None => match sniff(response.body, truncated) {
                Kind::Text => (Kind::Text, "text/plain".to_owned()),
                _ => (Kind::Binary, "application/octet-stream".to_owned()),
            },
        };
        Reading {
            api,
            status: response.status,
            reason: response.reason,
            body: response.body,
            omitted: response.omitted,
            kind,
            mime,
        }
    }

    fn truncated(&self) -> bool {
        self.omitted > 0
    }

    fn total(&self) -> u64 {
        (self.body.len() as u64).saturating_add(self.omitted)
    }

    /// No body at all; for JSON, whitespace only counts as none too.
    fn is_empty(&self) -> bool {
        !self.truncated()
            && (self.body.is_empty()
                || (self.kind == Kind::Json && self.body.iter().all(u8::is_ascii_whitespace)))
    }

    /// `404 Not Found`, or `999` when there is no reason.
    fn status_line(&self) -> String {
        let reason = self.reason.trim();
        if reason.is_empty() {
            self.status.to_string()
        } else {
            format!("{} {reason}", self.status)
        }
    }

    fn truncation_marker(&self) -> String {
        format!(
            "[response truncated: {} of {} shown; {} bytes omitted]",
            human_size(self.body.len() as u64),
            human_size(self.total()),
            self.omitted
        )
    }
}

/// A 2xx answer of a tool with an outputSchema that is not its JSON (see the module
/// documentation): an error result saying so, then `content`.
fn not_structured(r: &Reading<'_>, mut content: Vec<Content>) -> ToolResult {
    let note = if r.truncated() {
        format!(
            "upstream API \"{}\" answered {} with {}, but the body ({}) is larger than the \
             response size cap ({} read), so it cannot be the structured data the tool's \
             outputSchema describes; the request itself succeeded and what was read follows. \
             To get all of it, narrow the request (filters, fewer fields, a smaller page).",
            r.api,
            r.status_line(),
            r.mime,
            human_size(r.total()),
            human_size(r.body.len() as u64),
        )
    } else {
        format!(
            "upstream API \"{}\" answered {} with {}, not the JSON the tool's outputSchema \
             describes; the request itself succeeded and the response follows.",
            r.api,
            r.status_line(),
            r.mime,
        )
    };
    content.insert(0, text_content(note));
    ToolResult {
        content,
        structured: None,
        is_error: true,
        text_is_structured: None,
    }
}

/// A successful result without a body; with an outputSchema, `{}` stands for the data it
/// does not have (see the module documentation).
fn no_body(
    r: &Reading<'_>,
    mut content: Vec<Content>,
    output: Option<&OutputPlan>,
    check_output: &CheckOutput<'_>,
) -> ToolResult {
    if output.is_none() {
        return ToolResult {
            content,
            structured: None,
            is_error: false,
            text_is_structured: None,
        };
    }
    let placeholder = Value::Object(Map::new());
    match check_output(&Tape::of(&placeholder)) {
        Ok(()) => ToolResult {
            content,
            structured: Some(placeholder),
            is_error: false,
            text_is_structured: None,
        },
        Err(violations) => {
            let note = format!(
                "upstream API \"{}\" answered {} and the request succeeded, but with no \
                 body there is no structured content matching the tool's outputSchema ({}).",
                r.api,
                r.status_line(),
                excerpt(&violations).0
            );
            content.insert(0, text_content(note));
            ToolResult {
                content,
                structured: None,
                is_error: true,
                text_is_structured: None,
            }
        }
    }
}

/// A complete 2xx JSON body.
fn json_success(r: &Reading<'_>, shape: &Shape<'_>, check_output: &CheckOutput<'_>) -> ToolResult {
    // Read from a `str` once the whole body is known to be UTF-8, serde_json checks no
    // string on its own (for `bench/callgrind.sh`'s answer, about 800 instructions less).
    let text = std::str::from_utf8(r.body);
    if shape.from_text
        && let Ok(text) = text
        && let Some(result) = left_in_text(text, shape, check_output)
    {
        return result;
    }
    let parsed = match text {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(r.body),
    };
    let body: Value = match parsed {
        Ok(body) => body,
        Err(e) => {
            let decoded = decode(r.body, false);
            let (shown, cut) = excerpt(&decoded);
            let mut text = format!(
                "upstream API \"{}\" answered {} with {}, but the body is not valid JSON \
                 ({e}). The request itself succeeded. Body: {shown}",
                r.api,
                r.status_line(),
                r.mime,
            );
            if cut {
                let _ = write!(text, " … [body truncated; {} bytes in all]", r.total());
            }
            return ToolResult::error(text);
        }
    };
    let mut body = if shape.fields.is_empty() {
        body
    } else {
        crate::catalog::projection::FieldTree::new(shape.fields).project(body)
    };
    let trimmed = shape
        .bound
        .and_then(|(max, paging)| super::paging::bound(&mut body, max, paging));
    // Neither projected nor trimmed, the body is what was read: its own text, when already
    // compact (most APIs answer so), is the result's text without writing the tree again.
    let as_read = (shape.fields.is_empty() && trimmed.is_none())
        .then(|| json::compact_as_read(r.body, &body))
        .flatten();
    let mut result = json_result(r, body, as_read, shape, check_output);
    if let Some(trimmed) = trimmed {
        result.content.push(text_content(trimmed.note.to_string()));
    }
    result
}

/// A compact JSON answer (`text`), neither projected nor trimmed, that is the result's
/// structured content (as the tool's outputSchema or the client's revision says), checked
/// on a [`Tape`] and left in the text: [`json_result`]'s result without a tree. `None` for
/// any other answer, and for one that fails the check (whose result explains it from the
/// tree).
fn left_in_text(
    text: &str,
    shape: &Shape<'_>,
    check_output: &CheckOutput<'_>,
) -> Option<ToolResult> {
    if !shape.fields.is_empty() || shape.bound.is_some() {
        return None;
    }
    let wrapped = shape.output.is_some_and(|plan| plan.wrapped);
    let checked = if wrapped {
        std::borrow::Cow::Owned(format!("{{\"result\":{text}}}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    // Compact as serde_json writes it, every name once: the text is the structured content.
    let tape = Tape::read_compact(&checked)?;
    if tape.repeats_a_name() {
        return None;
    }
    match shape.output {
        // Neither structured nor wrapped: the text alone.
        None if !tape.is_object() && !shape.bare => return Some(ToolResult::text(text)),
        None => {}
        // Checked, or left to the tree, whose result says what fails.
        Some(_) if !tape.is_object() || check_output(&tape).is_err() => return None,
        Some(_) => {}
    }
    let text = if wrapped && !shape.bare {
        checked.into_owned()
    } else {
        text.to_owned()
    };
    Some(ToolResult {
        text_is_structured: Some(text.len()),
        content: vec![text_content(text)],
        structured: None,
        is_error: false,
    })
}

/// A JSON body as the tool's result: structured when the tool's outputSchema (or the
/// client's revision) allows, checked against that schema. `as_read` is the body's compact
/// text, when the upstream's text was already exactly that.
fn json_result(
    r: &Reading<'_>,
    body: Value,
    as_read: Option<&str>,
    shape: &Shape<'_>,
    check_output: &CheckOutput<'_>,
) -> ToolResult {
    let output = shape.output;
    let Some(plan) = output else {
        let text = as_read.map_or_else(|| crate::json::compact(&body), str::to_owned);
        let structured = (body.is_object() || shape.bare).then_some(body);
        return ToolResult {
            text_is_structured: structured.is_some().then_some(text.len()),
            content: vec![text_content(text)],
            structured,
            is_error: false,
        };
    };
    let structured = if plan.wrapped {
        let mut map = Map::new();
        map.insert("result".to_owned(), body);
        Value::Object(map)
    } else {
        body
    };
    let verdict = if structured.is_object() {
        check_output(&Tape::of(&structured))
    } else {
        Err(format!(
            "the response root is {}, not an object",
            json::kind(&structured)
        ))
    };
    match verdict {
        Ok(()) => {
            let structured = match structured {
                Value::Object(mut map) if plan.wrapped && shape.bare => {
                    map.remove("result").unwrap_or(Value::Null)
                }
                other => other,
            };
            let text = match as_read {
                Some(body) if plan.wrapped && !shape.bare => format!("{{\"result\":{body}}}"),
                Some(body) => body.to_owned(),
                None => crate::json::compact(&structured),
            };
            // Each way, the text is `structured` written compact.
            let length = text.len();
            ToolResult {
                content: vec![text_content(text)],
                structured: Some(structured),
                is_error: false,
                text_is_structured: Some(length),
            }
        }
        Err(violations) => {
            let data = if plan.wrapped {
                structured.get("result").map(Value::to_string)
            } else {
                None
            }
            .unwrap_or_else(|| structured.to_string());
            let explanation = format!(
                "upstream API \"{}\" answered {} and the request succeeded, but the response \
                 does not match the tool's outputSchema: {}. The response follows as text.",
                r.api,
                r.status_line(),
                excerpt(&violations).0
            );
            ToolResult {
                content: vec![text_content(explanation), text_content(data)],
                structured: None,
                is_error: true,
                text_is_structured: None,
            }
        }
    }
}

/// Any status outside 2xx.
fn failure(r: &Reading<'_>) -> ToolResult {
    let mut text = format!("upstream API \"{}\" answered {}", r.api, r.status_line());
    if r.body.is_empty() && !r.truncated() {
        text.push_str(" with an empty body.");
    } else {
        let shown = match r.kind {
            Kind::Json if !r.truncated() => match serde_json::from_slice::<Value>(r.body) {
                Ok(value) => value.to_string(),
                Err(_) => decode(r.body, false),
            },
            Kind::Json | Kind::Text => decode(r.body, r.truncated()),
            Kind::Image | Kind::Audio | Kind::Binary => {
                format!("<{} bytes of {}>", r.total(), r.mime)
            }
        };
        let (shown, cut) = excerpt(&shown);
        let _ = write!(text, ": {shown}");
        let binary = matches!(r.kind, Kind::Image | Kind::Audio | Kind::Binary);
        if !binary && (cut || r.truncated()) {
            let _ = write!(
                text,
                " … [error body truncated; {} bytes in all]",
                r.total()
            );
        }
    }
    if let Some(hint) = hint(r.status) {
        text.push('\n');
        text.push_str(hint);
    }
    ToolResult::error(text)
}

/// A line the model can act on, for the statuses that have an obvious next step.
fn hint(status: u16) -> Option<&'static str> {
    Some(match status {
        400 | 422 => {
            "Hint: the upstream rejected the request; check the arguments against the \
             tool's inputSchema and the error above, then retry with corrected arguments."
        }
        401 => {
            "Hint: the upstream did not accept the credentials. Authentication is part of \
             the restmcp server's configuration, not something the tool's arguments can fix; \
             tell the user."
        }
        403 => {
            "Hint: the configured credentials lack permission for this operation. That is a \
             matter of the restmcp server's configuration or the account's rights, not \
             something the tool's arguments can fix; tell the user."
        }
        404 => {
            "Hint: the resource does not exist; check the identifiers in the arguments \
             (list or search for the resource first if unsure)."
        }
        405 => {
            "Hint: the upstream does not allow this operation on this resource; retrying \
             will not help."
        }
        409 => {
            "Hint: the request conflicts with the resource's current state (it may already \
             exist or have changed); fetch the current state before deciding what to do."
        }
        410 => "Hint: the resource existed but is gone for good; retrying will not help.",
        413 => "Hint: the request is too large for the upstream; send less data at once.",
        415 => {
            "Hint: the upstream does not accept this request's body format; retrying will \
             not help."
        }
        429 => "Hint: rate limited by the upstream; wait before retrying.",
        501 => "Hint: the upstream does not implement this operation; retrying will not help.",
        500..=599 => "Hint: the upstream failed; retrying after a short wait may help.",
        300..=399 => {
            "Hint: the upstream answered with a redirect that was not followed; the API's \
             base URL in the restmcp server's configuration may be outdated."
        }
        _ => return None,
    })
}

/// The lowercase essence of a Content-Type (`type/subtype`, parameters dropped), or None
/// when it is not shaped like a media type.
fn essence(content_type: &str) -> Option<String> {
    let essence = content_type.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, subtype) = essence.split_once('/')?;
    // RFC 9110's `tchar`: visible ASCII but the delimiters `"(),/:;<=>?@[\]{}`.
    let token = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| {
            matches!(b, b'!' | b'#'..=b'\'' | b'*' | b'+' | b'-' | b'.' | b'^'..=b'`' | b'|' | b'~')
                || b.is_ascii_alphanumeric()
        })
    };
    (token(kind) && token(subtype)).then_some(essence)
}

/// The kind a media type essence declares, or None for one to sniff.
fn classify(essence: &str) -> Option<Kind> {
    let (kind, subtype) = essence.split_once('/')?;
    if essence == "application/json" || essence == "text/json" || subtype.ends_with("+json") {
        return Some(Kind::Json);
    }
    const TEXTUAL: [&str; 17] = [
        "xml",
        "yaml",
        "x-yaml",
        "javascript",
        "x-javascript",
        "ecmascript",
        "x-www-form-urlencoded",
        "graphql",
        "sql",
        "csv",
        "toml",
        "x-toml",
        "markdown",
        "x-sh",
        "rtf",
        "x-tex",
        "x-httpd-php",
    ];
    let textual_subtype = TEXTUAL.contains(&subtype)
        || subtype.ends_with("+xml")
        || subtype.ends_with("+yaml")
        // ndjson, jsonl, json-seq, x-json, json5: JSON-ish text that is not one JSON value.
        || subtype.contains("json");
    if kind == "text" || (matches!(kind, "application" | "image") && textual_subtype) {
        return Some(Kind::Text);
    }
    const BINARY: [&str; 14] = [
        "octet-stream",
        "pdf",
        "zip",
        "gzip",
        "x-gzip",
        "x-tar",
        "x-7z-compressed",
        "x-bzip2",
        "x-xz",
        "wasm",
        "protobuf",
        "x-protobuf",
        "msgpack",
        "cbor",
    ];
    match kind {
        "image" => Some(Kind::Image),
        "audio" => Some(Kind::Audio),
        "video" | "font" | "model" => Some(Kind::Binary),
        "application" if BINARY.contains(&subtype) => Some(Kind::Binary),
        _ => None,
    }
}

/// Text when the bytes are UTF-8 without control characters (other than whitespace),
/// binary otherwise. A truncated body may end inside a character, which is allowed.
fn sniff(body: &[u8], truncated: bool) -> Kind {
    let body = if truncated {
        &body[..complete_utf8_len(body)]
    } else {
        body
    };
    match std::str::from_utf8(body) {
        Ok(text)
            if !text
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c')) =>
        {
            Kind::Text
        }
        _ => Kind::Binary,
    }
}

/// The length of `body` without a UTF-8 sequence left incomplete at its very end.
fn complete_utf8_len(body: &[u8]) -> usize {
    let tail_start = body.len().saturating_sub(4);
    let lead = (tail_start..body.len())
        .rev()
        .find(|&i| body[i] & 0xC0 != 0x80);
    match lead {
        Some(i) => match std::str::from_utf8(&body[i..]) {
            Err(e) if e.error_len().is_none() => i + e.valid_up_to(),
            _ => body.len(),
        },
        None => body.len(),
    }
}

/// The body as text (invalid UTF-8 replaced); a truncated body loses a character cut in
/// half at its end rather than gaining a replacement character.
fn decode(body: &[u8], truncated: bool) -> String {
    let body = if truncated {
        &body[..complete_utf8_len(body)]
    } else {
        body
    };
    String::from_utf8_lossy(body).into_owned()
}

/// At most [`ERROR_EXCERPT`] bytes of `text`, cut at a character boundary, and whether it
/// was cut.
fn excerpt(text: &str) -> (&str, bool) {
    if text.len() <= ERROR_EXCERPT {
        return (text, false);
    }
    let mut end = ERROR_EXCERPT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

fn text_content(text: impl Into<String>) -> Content {
    Content::Text { text: text.into() }
}

/// Characters kept as-is in the API name part of a resource URI (RFC 3986 unreserved).
const URI_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The URI labelling an embedded binary body; see the module documentation.
fn resource_uri(api: &str) -> String {
    format!("restmcp://{}/response", utf8_percent_encode(api, URI_KEEP))
}

/// `512 B`, `1.5 KiB`, `1.2 MiB`, `3.0 GiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}
