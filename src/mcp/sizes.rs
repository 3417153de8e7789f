//! Message sizes real clients accept, and how restmcp stays within them.
//!
//! Measured in the official SDKs (`docs/src/serving.md`, "Message sizes real clients accept"):
//! - Python (`mcp` 2.3.0, `httpx2`'s `EventSource`): an SSE event whose lines (`event:`,
//!   `data:`, `id:`, without their newlines) add up to more than 1 MiB raises `SSEError`. On
//!   the legacy HTTP+SSE transport that ends the whole session; on Streamable HTTP it fails
//!   that one request. Plain JSON answers and stdio lines have no limit.
//! - TypeScript (`@modelcontextprotocol/sdk` 1.32.2): stdio closes the connection when its
//!   read buffer passes 10 MiB; its SSE parsers have no limit.
//! - Rust (`rmcp` 3.9 client): 16 MiB per SSE event, plain JSON body and stdio line.
//!
//! So restmcp keeps every message it sends on an SSE-framed transport (legacy `/sse`;
//! Streamable HTTP when the answer is an SSE stream) within `server.max_message_bytes`, and
//! every stdio line within `server.max_stdio_message_bytes`:
//! - `tools/list` pages end before [`PAGE_BYTES`] (or the smaller message budget) as well as
//!   at `server.page_size` tools ([`page_end`]); a single larger tool goes out alone;
//! - a tool result that would not fit is cut to fit ([`fit`]): its structured content is
//!   left out, text is cut at a character boundary and a marker says what is missing, and a
//!   tool whose listing has an `outputSchema` answers `isError` with a first text saying why;
//! - as a last resort, any answer still too large for the legacy SSE or stdio transport is
//!   replaced by a JSON-RPC error for its request ([`guard_line`]), so the session lives.
//!
//! [`Framing`] is how the HTTP front tells the SDK's handler whether its answer will travel
//! as an SSE event or as plain JSON.

use rmcp::model::{CallToolResult, ContentBlock, RequestId};
use serde_json::Value;

use crate::config::ServerSettings;
use crate::json::{compact_len, compact_len_bound, escaped_bound};
use crate::upstream::response::human_size;

/// The most a `tools/list` page may take, serialized as a whole JSON-RPC message: half the
/// smallest client limit (the Python SDK's 1 MiB per SSE event).
pub const PAGE_BYTES: usize = 512 * 1024;

/// Room kept in a page for all but its tools: the JSON-RPC envelope and the request id,
/// `nextCursor`, and what 2026-07-28 adds (`resultType`, caching hints).
const PAGE_RESERVE: usize = 1024;

/// Room kept in a result's budget for the JSON-RPC envelope (beside the request id) and what
/// the SDK adds for the client's revision.
const ANSWER_RESERVE: usize = 256;

/// The transport an [`super::McpServer`] answers on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    /// The legacy HTTP+SSE transport: every message is an SSE event.
    LegacySse,
    /// Streamable HTTP: an answer is an SSE event or plain JSON, as [`Framing`] says.
    StreamableHttp,
}

/// How the HTTP front sends the SDK's answer to a request, put in the request's extensions
/// (the SDK hands the request's parts to the handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Plain `application/json`.
    Json,
    /// The SDK's SSE stream.
    Sse,
    /// Without a session and with `server.json_response`, the SDK answers plain JSON when
    /// the answer is the first message, and an SSE stream when a notification (progress)
    /// went out before it.
    JsonUnlessNotified,
}

/// The size limits of the MCP transports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Bytes per `tools/list` page, envelope included.
    pub page_bytes: usize,
    /// `server.max_message_bytes`, when not 0.
    pub message_bytes: Option<usize>,
    /// `server.max_stdio_message_bytes`, when not 0.
    pub stdio_message_bytes: Option<usize>,
}

impl Limits {
    pub fn from_settings(settings: &ServerSettings) -> Limits {
        let nonzero = |n: usize| (n > 0).then_some(n);
        let message_bytes = nonzero(settings.max_message_bytes);
        let stdio_message_bytes = nonzero(settings.max_stdio_message_bytes);
        // One set of pages serves every transport, so a page fits the smallest budget.
        let page_bytes = [Some(PAGE_BYTES), message_bytes, stdio_message_bytes]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(PAGE_BYTES);
        Limits {
            page_size: settings.page_size.max(1),
            page_bytes,
            message_bytes,
            stdio_message_bytes,
        }
    }

    /// The budget of one answer on `transport` (`framing` on Streamable HTTP; unknown counts
    /// as SSE); `None` when nothing limits it. With [`Framing::JsonUnlessNotified`] it applies
    /// only when a notification went out first.
    pub fn budget(&self, transport: Transport, framing: Option<Framing>) -> Option<Budget> {
        match (transport, framing) {
            (Transport::Stdio, _) => Some(Budget {
                bytes: self.stdio_message_bytes?,
                key: "server.max_stdio_message_bytes",
            }),
            (Transport::StreamableHttp, Some(Framing::Json)) => None,
            (Transport::LegacySse | Transport::StreamableHttp, _) => Some(Budget {
                bytes: self.message_bytes?,
                key: "server.max_message_bytes",
            }),
        }
    }
}

/// The most one message may take on a transport, and the setting that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub bytes: usize,
    pub key: &'static str,
}

/// The end (exclusive) of the `tools/list` page that starts at `start`, given each tool's
/// serialized size: at most `max_count` tools, and no more than fit in `max_bytes` with
/// the page's envelope. The first tool always goes, however large, so every page makes
/// progress. The end depends only on `start`, so a cursor (the start) always names the
/// same page.
pub fn page_end(sizes: &[usize], start: usize, max_count: usize, max_bytes: usize) -> usize {
    let room = max_bytes.saturating_sub(PAGE_RESERVE);
    let mut used = 0usize;
    let mut end = start;
    while let Some(size) = sizes.get(end) {
        if end - start >= max_count {
            break;
        }
        // Every tool after the first is preceded by a comma.
        let size = size + usize::from(end > start);
        if end > start && used + size > room {
            break;
        }
        used += size;
        end += 1;
    }
    end
}

/// Bytes `c` takes inside a JSON string, as serde_json writes it.
fn escaped_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes `text` takes inside a JSON string (quotes not counted).
fn escaped_len(text: &str) -> usize {
    text.chars().map(escaped_char_len).sum()
}

/// The longest prefix of `text` (ending at a character boundary) whose JSON string form
/// takes at most `room` bytes, and the bytes it takes.
fn prefix_within(text: &str, room: usize) -> (&str, usize) {
    let mut used = 0usize;
    for (at, c) in text.char_indices() {
        let next = used + escaped_char_len(c);
        if next > room {
            return (&text[..at], used);
        }
        used = next;
    }
    (text, used)
}

/// The text that opens a result that lost its structured content.
fn note(total: usize, budget: &Budget, cut: bool) -> String {
    let rest = if cut {
        "and the data below is truncated. Narrow the request (filters, fewer fields, a \
         smaller page) to get all of it"
    } else {
        "and the data follows as text. A narrower request (filters, fewer fields, a smaller \
         page) gets it as structured content"
    };
    format!(
        "This result ({}) is too large for this transport, which carries at most {} per \
         message ({}), so it comes without the structured content the tool's outputSchema \
         describes, {rest}.",
        human_size(total as u64),
        human_size(budget.bytes as u64),
        budget.key,
    )
}

/// The text that closes a cut result.
fn marker(shown: usize, total: usize, left_out: usize, budget: &Budget) -> String {
    let mut what = Vec::new();
    if total > 0 {
        what.push(format!(
            "{} of {} of text shown",
            human_size(shown as u64),
            human_size(total as u64)
        ));
    }
    if left_out > 0 {
        let s = if left_out == 1 { "" } else { "s" };
        what.push(format!("{left_out} other content block{s} left out"));
    }
    format!(
        "[result truncated: {}; this transport carries at most {} per message ({})]",
        what.join(", "),
        human_size(budget.bytes as u64),
        budget.key,
    )
}

/// Text blocks this small (with their JSON) that come after the block that is cut are
/// still kept, room permitting: notes such as the upstream size cap's own marker.
const NOTE_BYTES: usize = 1024;

/// The content of a cut result: the blocks that fit in `room` bytes (commas included), the
/// block that does not fit cut to what does (a text) or left out (anything else, which a
/// part of would corrupt), then only the short texts after it ([`NOTE_BYTES`]), for which
/// room is kept. Returns the blocks, the text bytes shown and the blocks left out entirely
/// (other than text).
fn cut_content(content: &[ContentBlock], room: usize) -> (Vec<ContentBlock>, usize, usize) {
    let sizes: Vec<usize> = content.iter().map(|b| compact_len(b) + 1).collect();
    let is_note = |i: usize| content[i].as_text().is_some() && sizes[i] <= NOTE_BYTES;
    let mut room = room;
    let mut kept = Vec::new();
    let mut shown = 0usize;
    let mut left_out = 0usize;
    let mut cut = false;
    for (i, (block, &size)) in content.iter().zip(&sizes).enumerate() {
        let text = block.as_text().map(|t| t.text.as_str());
        let fits = size <= room && (!cut || is_note(i));
        if fits {
            room -= size;
            shown += text.map_or(0, str::len);
            kept.push(block.clone());
            continue;
        }
        if cut {
            left_out += usize::from(text.is_none());
            continue;
        }
        cut = true;
        let Some(text) = text else {
            left_out += 1;
            continue;
        };
        let notes: usize = (i + 1..content.len())
            .filter(|&j| is_note(j))
            .map(|j| sizes[j])
            .sum();
        // The block's own JSON around the string stays; the string is cut.
        let frame = size.saturating_sub(escaped_len(text));
        let (part, used) = prefix_within(text, room.saturating_sub(notes + frame));
        if !part.is_empty() {
            room = room.saturating_sub(frame + used);
            shown += part.len();
            kept.push(ContentBlock::text(part));
        }
    }
    (kept, shown, left_out)
}

/// Whether `result` surely serializes within `limit` bytes, judged without serializing it
/// (most results are far below their budget): only for text blocks and structured
/// content, whose lengths [`compact_len_bound`] bounds; anything else is counted.
/// `structured_length`, when known, is the structured content's exact compact length.
fn surely_within(result: &CallToolResult, limit: usize, structured_length: Option<usize>) -> bool {
    if result.meta.is_some() {
        return false;
    }
    // `{"content":[],"isError":false,"resultType":"complete","structuredContent":}`
    let mut bound = 96;
    for block in &result.content {
        match block.as_text() {
            Some(text) if text.meta.is_none() && text.annotations.is_none() => {
                // `{"type":"text","text":},`
                bound += 24 + escaped_bound(&text.text);
            }
            _ => return false,
        }
        if bound > limit {
            return false;
        }
    }
    bound += match (&result.structured_content, structured_length) {
        (None, _) => 0,
        (Some(_), Some(length)) => length,
        (Some(structured), None) => compact_len_bound(structured),
    };
    bound <= limit
}

/// The length of `result` written compact. A structured content of known compact length
/// (`structured_length`, marked: its tree may be a stand-in, see
/// [`crate::upstream::ToolResult::structured_in_text`]) is counted by that length.
fn compact_total(result: &mut CallToolResult, structured_length: Option<usize>) -> usize {
    let Some(length) = structured_length.filter(|_| result.structured_content.is_some()) else {
        return compact_len(&*result);
    };
    let structured = result.structured_content.take();
    // `,"structuredContent":` and the content.
    let total = compact_len(&*result) + r#","structuredContent":"#.len() + length;
    result.structured_content = structured;
    total
}

/// `result` as it fits in one message of `budget`, for a request whose id is `id`
/// (`shows_output_schema`: whether the client's listing of the tool has an `outputSchema`,
/// asked only when the result does not fit; `structured_length`: the structured content's
/// compact length, when the caller knows it), and the size it had when it did not fit.
///
/// A result that fits is returned as it is. Otherwise its structured content is left out
/// (the text carries the same data, and a structured value cannot be cut); if the text
/// still does not fit, it is cut at a character boundary and closed by a marker saying
/// what is missing. A success of a tool with an `outputSchema` cannot come without its
/// structured content (clients reject it), so it becomes `isError` with a first text
/// saying why. Sizes count JSON escaping: a text of quotes or control characters grows
/// when serialized.
pub fn fit(
    result: CallToolResult,
    budget: &Budget,
    id: &RequestId,
    shows_output_schema: impl FnOnce() -> bool,
    structured_length: Option<usize>,
) -> (CallToolResult, Option<usize>) {
    let limit = budget
        .bytes
        .saturating_sub(ANSWER_RESERVE + compact_len(id));
    if surely_within(&result, limit, structured_length) {
        return (result, None);
    }
    let mut result = result;
    let total = compact_total(&mut result, structured_length);
    if total <= limit {
        return (result, None);
    }
    let content = std::mem::take(&mut result.content);
    let had_structured = result.structured_content.take().is_some();
    let to_error = had_structured && result.is_error != Some(true) && shows_output_schema();
    if to_error {
        result.is_error = Some(true);
    }
    let base = compact_len(&result);
    let block_size = |text: &str| compact_len(&ContentBlock::text(text)) + 1;
    let whole: usize = content.iter().map(|b| compact_len(b) + 1).sum();
    let note_whole = to_error.then(|| note(total, budget, false));
    if base + note_whole.as_deref().map_or(0, block_size) + whole <= limit {
        result.content = note_whole
            .into_iter()
            .map(ContentBlock::text)
            .chain(content)
            .collect();
        return (result, Some(total));
    }
    let note_cut = to_error.then(|| note(total, budget, true));
    let text_total: usize = content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|t| t.text.len())
        .sum();
    // The marker at its longest: every count as large as it can be.
    let marker_room = block_size(&marker(text_total, text_total, content.len(), budget));
    let fixed = base + note_cut.as_deref().map_or(0, block_size) + marker_room;
    let mut slack = 0usize;
    for _ in 0..4 {
        let room = limit.saturating_sub(fixed + slack);
        let (kept, shown, left_out) = cut_content(&content, room);
        result.content = note_cut
            .iter()
            .map(|n| ContentBlock::text(n.as_str()))
            .chain(kept)
            .chain([ContentBlock::text(marker(
                shown, text_total, left_out, budget,
            ))])
            .collect();
        let size = compact_len(&result);
        if size <= limit {
            return (result, Some(total));
        }
        slack += size - limit + 64;
    }
    // Not reached with sizes computed as above; should it ever be, no data at all.
    let left_out = content.iter().filter(|b| b.as_text().is_none()).count();
    result.content = note_cut
        .into_iter()
        .map(ContentBlock::text)
        .chain([ContentBlock::text(marker(0, text_total, left_out, budget))])
        .collect();
    (result, Some(total))
}

/// What to send instead of an outgoing line that is larger than `budget`.
#[derive(Debug, PartialEq, Eq)]
pub enum Guarded {
    /// It fits: send it.
    Fits,
    /// An answer too large: this JSON-RPC error for its request goes instead.
    Replaced(Vec<u8>),
    /// A notification or request of the server's that is too large: not sent.
    Dropped,
}

/// Checks one outgoing JSON-RPC message (`line`, without its newline) against `budget`.
/// The last resort behind [`page_end`] and [`fit`]: a client that refuses an oversized
/// message may end the whole session (the Python SDK on legacy SSE, the TypeScript SDK on
/// stdio), while an error answer ends only that request.
pub fn guard_line(line: &[u8], budget: &Budget) -> Guarded {
    if line.len() <= budget.bytes {
        return Guarded::Fits;
    }
    let id = serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|message| {
            let answer = message.get("method").is_none();
            message.get("id").filter(|_| answer).cloned()
        });
    let Some(id) = id else {
        tracing::warn!(
            bytes = line.len(),
            limit = budget.bytes,
            "a message larger than the transport carries was not sent ({})",
            budget.key
        );
        return Guarded::Dropped;
    };
    tracing::warn!(
        bytes = line.len(),
        limit = budget.bytes,
        "an answer larger than the transport carries was replaced by an error ({})",
        budget.key
    );
    let message = format!(
        "the answer ({}) is larger than this transport carries in one message (at most {}, {})",
        human_size(line.len() as u64),
        human_size(budget.bytes as u64),
        budget.key,
    );
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32603, "message": message},
    });
    Guarded::Replaced(error.to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Budget = Budget {
        bytes: 64 * 1024,
        key: "server.max_message_bytes",
    };

    fn message_size(result: &CallToolResult, id: &RequestId) -> usize {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
        compact_len(&message)
    }

    fn texts(result: &CallToolResult) -> Vec<&str> {
        result
            .content
            .iter()
            .filter_map(|b| b.as_text().map(|t| t.text.as_str()))
            .collect()
    }

    #[test]
    fn escaped_lengths_are_what_serde_json_writes() {
        for text in [
            "plain",
            "quotes \" and \\ backslashes",
            "control \u{0} \u{1f} \n \r \t \u{8} \u{c} \u{7f}",
            "ünïcödé ✓ 𝄞",
        ] {
            assert_eq!(escaped_len(text) + 2, compact_len(text), "{text:?}");
        }
    }

    #[test]
    fn a_result_that_fits_is_untouched() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("{\"a\":1}")]);
        result.structured_content = Some(serde_json::json!({"a": 1}));
        let id = RequestId::Number(1);
        assert_eq!(
            fit(result.clone(), &BUDGET, &id, || true, None),
            (result, None)
        );
    }

    #[test]
    fn a_known_structured_length_is_counted_exactly() {
        // The text's bound and the structured content's bound (six bytes a character
        // each) are over the limit together; the bound and the text's length are not.
        let value = serde_json::json!({"x": "x".repeat(9_000)});
        let text = value.to_string();
        let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
        result.structured_content = Some(value);
        let limit = 70_000;
        let exact = compact_len(&result);
        assert!(exact <= limit);
        assert!(!surely_within(&result, limit, None));
        assert!(surely_within(&result, limit, Some(text.len())));
        for limit in [exact - 1, exact - 200] {
            assert!(!surely_within(&result, limit, Some(text.len())), "{limit}");
        }
    }

    #[test]
    fn structured_content_goes_first_and_a_tool_with_an_output_schema_says_why() {
        // 40 KB of data twice is over 64 KiB; once it fits.
        let data = "x".repeat(40_000);
        let mut result = CallToolResult::success(vec![ContentBlock::text(data.clone())]);
        result.structured_content = Some(Value::String(data.clone()));
        let id = RequestId::Number(7);
        let fitted = fit(result.clone(), &BUDGET, &id, || true, None).0;
        assert!(message_size(&fitted, &id) <= BUDGET.bytes);
        assert_eq!(fitted.structured_content, None);
        assert_eq!(fitted.is_error, Some(true));
        let texts = texts(&fitted);
        assert!(
            texts[0].contains("too large for this transport"),
            "{texts:?}"
        );
        assert!(texts[0].contains("server.max_message_bytes"));
        assert_eq!(texts[1], data, "the data follows whole");
        // Without an outputSchema in the listing, leaving it out is no error.
        let fitted = fit(result, &BUDGET, &id, || false, None).0;
        assert_eq!(fitted.is_error, Some(false));
        assert_eq!(self::texts(&fitted), [data.as_str()]);
    }

    #[test]
    fn text_is_cut_at_a_character_boundary_counting_escapes() {
        let id = RequestId::String("a-long-request-id".into());
        for unit in ["é", "\"", "\u{1}", "𝄞", "ab\\"] {
            let data = unit.repeat(200_000);
            let result = CallToolResult::success(vec![ContentBlock::text(data.clone())]);
            let fitted = fit(result, &BUDGET, &id, || false, None).0;
            let size = message_size(&fitted, &id);
            assert!(size <= BUDGET.bytes, "{unit:?}: {size}");
            // Not much room is wasted either.
            assert!(size > BUDGET.bytes - 1024, "{unit:?}: {size}");
            let texts = texts(&fitted);
            assert!(data.starts_with(texts[0]), "{unit:?}");
            assert!(!texts[0].is_empty());
            let marker = texts.last().copied().unwrap_or_default();
            assert!(marker.starts_with("[result truncated: "), "{marker}");
            assert!(marker.contains(&human_size(data.len() as u64)), "{marker}");
            assert_eq!(fitted.is_error, Some(false));
        }
    }

    #[test]
    fn a_structured_success_too_large_even_as_text_is_an_error_with_a_cut_text() {
        let body = serde_json::json!({"items": vec!["quote\"d"; 20_000]});
        let mut result = CallToolResult::success(vec![ContentBlock::text(body.to_string())]);
        result.structured_content = Some(body.clone());
        let id = RequestId::Number(3);
        let fitted = fit(result, &BUDGET, &id, || true, None).0;
        assert!(message_size(&fitted, &id) <= BUDGET.bytes);
        assert_eq!(fitted.is_error, Some(true));
        assert_eq!(fitted.structured_content, None);
        let texts = texts(&fitted);
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert!(
            texts[0].contains("truncated. Narrow the request"),
            "{}",
            texts[0]
        );
        assert!(body.to_string().starts_with(texts[1]));
        assert!(texts[2].starts_with("[result truncated: "));
    }

    #[test]
    fn short_notes_after_the_cut_text_are_kept() {
        let note = "[response truncated: 4.0 MiB of 6.0 MiB shown; 2097152 bytes omitted]";
        let image = ContentBlock::image("A".repeat(1_000), "image/png");
        let result = CallToolResult::success(vec![
            ContentBlock::text("y".repeat(200_000)),
            image,
            ContentBlock::text(note),
            ContentBlock::text("z".repeat(2_000)),
        ]);
        let id = RequestId::Number(1);
        let fitted = fit(result, &BUDGET, &id, || false, None).0;
        assert!(message_size(&fitted, &id) <= BUDGET.bytes);
        let texts = texts(&fitted);
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert!(texts[0].starts_with('y') && texts[0].len() > 60_000);
        assert_eq!(texts[1], note);
        assert!(
            texts[2].contains("1 other content block left out"),
            "{}",
            texts[2]
        );
    }

    #[test]
    fn binary_content_that_does_not_fit_is_left_out_whole() {
        let image = ContentBlock::image("A".repeat(100_000), "image/png");
        let result = CallToolResult::success(vec![ContentBlock::text("first"), image]);
        let id = RequestId::Number(1);
        let fitted = fit(result, &BUDGET, &id, || false, None).0;
        assert!(message_size(&fitted, &id) <= BUDGET.bytes);
        assert_eq!(fitted.content.len(), 2);
        let texts = texts(&fitted);
        assert_eq!(texts[0], "first");
        assert!(
            texts[1].contains("1 other content block left out"),
            "{}",
            texts[1]
        );
    }

    #[test]
    fn pages_end_by_count_or_bytes_and_never_empty() {
        let sizes = [100, 100, 100, 100];
        assert_eq!(page_end(&sizes, 0, 3, PAGE_BYTES), 3);
        assert_eq!(page_end(&sizes, 3, 3, PAGE_BYTES), 4);
        assert_eq!(page_end(&sizes, 4, 3, PAGE_BYTES), 4);
        // 1024 reserved: 2 tools and a comma fit in 1225, not 3.
        assert_eq!(page_end(&sizes, 0, 10, 1024 + 201), 2);
        assert_eq!(page_end(&sizes, 0, 10, 1024 + 200), 1);
        // A tool larger than the page goes alone.
        assert_eq!(page_end(&[5000, 1], 0, 10, 2048), 1);
        assert_eq!(page_end(&[1, 5000], 0, 10, 2048), 1);
    }

    #[test]
    fn oversized_answers_become_errors_and_other_messages_are_dropped() {
        let budget = Budget {
            bytes: 100,
            key: "server.max_message_bytes",
        };
        let small = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert_eq!(guard_line(small, &budget), Guarded::Fits);
        let big = serde_json::json!({"jsonrpc": "2.0", "id": "x", "result": {"tools": ["a".repeat(200)]}});
        let Guarded::Replaced(error) = guard_line(big.to_string().as_bytes(), &budget) else {
            panic!("replaced");
        };
        let error: Value = serde_json::from_slice(&error).expect("JSON");
        assert_eq!(error["id"], "x");
        assert_eq!(error["error"]["code"], -32603);
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("server.max_message_bytes"))
        );
        let notification =
            serde_json::json!({"jsonrpc": "2.0", "method": "x", "params": {"a": "a".repeat(200)}});
        assert_eq!(
            guard_line(notification.to_string().as_bytes(), &budget),
            Guarded::Dropped
        );
    }

    #[test]
    fn the_page_budget_is_the_smallest_message_budget() {
        let limits = Limits::from_settings(&ServerSettings::default());
        assert_eq!(limits.page_bytes, PAGE_BYTES);
        let small = ServerSettings {
            max_message_bytes: 100_000,
            max_stdio_message_bytes: 0,
            ..ServerSettings::default()
        };
        let limits = Limits::from_settings(&small);
        assert_eq!(limits.page_bytes, 100_000);
        assert_eq!(limits.budget(Transport::Stdio, None), None);
        assert_eq!(
            limits.budget(Transport::StreamableHttp, Some(Framing::Json)),
            None
        );
        assert_eq!(
            limits
                .budget(Transport::StreamableHttp, None)
                .map(|b| b.bytes),
            Some(100_000)
        );
    }
}
