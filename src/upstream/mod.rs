//! The upstream side of a tool call: arguments → the exact HTTP request the API's
//! description defines → a [`ToolResult`] an LLM can act on. This module knows nothing of
//! MCP (it returns restmcp's own result type and the MCP layer converts it) and nothing of
//! the mock upstream, which plugs in from above through the [`Exchange`] seam.
//!
//! * [`Dispatcher`] (`dispatch.rs`): one call end to end — validate, rate-limit, build,
//!   hand to the API's exchange within the time limit, map the answer, redact.
//! * [`CallContext`] (`context.rs`): what a call carries besides its arguments (forwarded
//!   headers, trace context, result shape, who it acts for, operation status).
//! * `caching.rs`: [`CacheValidators`], what an answer says of caching it (sent back as
//!   conditions by a resource subscription's polls).
//! * `called.rs`: what a call gives back, [`Called`] (the result and its [`CallStats`]:
//!   [`CallOutcome`], what went over the wire) or [`UnknownTool`].
//! * `rate_limit.rs`: the tools' rate limits, a token bucket per tool and caller.
//! * `idempotency`: a repeat under the same idempotency key answered from the shared
//!   store instead of sent again (protocol-free; the MCP layer calls it before sending).
//! * [`validate`]: arguments against the inputSchema, results against the outputSchema,
//!   compiled once per tool.
//! * [`tape`]: a JSON value read onto a flat tape, the representation results are checked
//!   in (an answer's text need not become a tree).
//! * [`request`]: a tool's argument map → the [`request::HttpRequest`] (pure, no I/O).
//! * [`exchange`]: the [`Exchange`] trait the dispatcher calls and what it gives back.
//! * `wire.rs`: the HTTP exchange — forwarded headers, trace context, credentials,
//!   retries, the size cap.
//! * `client.rs`: the HTTP client under it — TLS, proxies from the environment, and the
//!   redirects followed within the origins the operator allows.
//! * `pool.rs`: the keep-alive connections under the client, by origin.
//! * [`auth`]: credentials and their placement, OAuth tokens, header forwarding, and the
//!   redaction of secrets from results.
//! * [`decode`]: compressed bodies decoded within their limits.
//! * [`response`]: the HTTP response → a result (pure).
//! * [`paging`]: a JSON result over the tool's budget cut to whole list items, with the
//!   paging arguments that fetch the rest.
//! * [`operation`]: long-running operations — a 202 (or a marked tool's 200/201) naming a
//!   status monitor, followed to its result within the time limit or resumed later.
//! * `settings.rs`: [`UpstreamSettings`], how one API is called.
//! * `workflow`: an Arazzo workflow's tool run step by step
//!   ([`Dispatcher::run_workflow`]), each step a call of its tool through this pipeline.

pub mod auth;
mod caching;
mod called;
mod client;
mod context;
pub mod decode;
mod dispatch;
pub mod exchange;
pub(crate) mod idempotency;
pub mod operation;
pub mod paging;
mod pool;
mod rate_limit;
pub mod request;
pub mod response;
mod settings;
pub mod tape;
pub mod validate;
mod wire;
mod workflow;

pub use auth::Authenticator;
pub use caching::CacheValidators;
pub use called::{CallOutcome, CallStats, Called, UnknownTool};
pub use context::{Answered, CallContext, CallLog, Response, Sent, SentRecorder, Severity};
pub use dispatch::{Dispatcher, LongRunning, Prepared, Preview, Ready, Resumed};
pub use exchange::Exchange;
pub use settings::UpstreamSettings;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One piece of a tool result's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    Text {
        text: String,
    },
    /// `data` is base64.
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// `data` is base64.
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource holding binary content; `blob` is base64.
    Resource {
        uri: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
        blob: String,
    },
}

/// The outcome of a tool call, success or failure. A failure is a result with
/// `is_error: true` and a message the model can act on, never a protocol error.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolResult {
    pub content: Vec<Content>,
    /// The JSON body (wrapped as `{"result": …}` when the tool's outputSchema wraps it).
    /// `None` with `text_is_structured` set: the structured content is the first text, not
    /// read into a tree ([`ToolResult::structured_in_text`]).
    pub structured: Option<Value>,
    pub is_error: bool,
    /// `Some(length)` when the first content is a text that is exactly the structured
    /// content written compact, as the response mapping made it, and `length` that text's
    /// length: the answer then writes the text again for the structured content rather than
    /// serializing the tree. Whatever changes the text or the structured content afterwards
    /// must first [`ToolResult::unmark`] it (redaction does); a note added to the text changes
    /// its length, and the mark is not trusted.
    #[serde(skip)]
    pub text_is_structured: Option<usize>,
}

/// A result is stored (idempotency's records, operations' results) with its structured
/// content as a tree, also when it was left in the text.
impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Stored<'a> {
            content: &'a [Content],
            structured: Option<std::borrow::Cow<'a, Value>>,
            is_error: bool,
        }
        let structured = match &self.structured {
            Some(value) => Some(std::borrow::Cow::Borrowed(value)),
            None => self.text_structured().map(std::borrow::Cow::Owned),
        };
        Stored {
            content: &self.content,
            structured,
            is_error: self.is_error,
        }
        .serialize(serializer)
    }
}

impl ToolResult {
    /// A failed call explained in one text.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Content::Text { text: text.into() }],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    }

    /// A successful call with one text.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Content::Text { text: text.into() }],
            structured: None,
            is_error: false,
            text_is_structured: None,
        }
    }

    /// A successful call whose result is `value`: structured, and written compact as its
    /// one text.
    pub fn json(value: Value) -> ToolResult {
        let text = crate::json::compact(&value);
        ToolResult {
            text_is_structured: Some(text.len()),
            content: vec![Content::Text { text }],
            structured: Some(value),
            is_error: false,
        }
    }

    /// Whether the structured content is the first text, not read into a tree: made so
    /// for a caller that writes it from the text ([`CallContext::structured_from_text`]).
    pub fn structured_in_text(&self) -> bool {
        self.structured.is_none() && self.text_is_structured.is_some()
    }

    /// Whether the result has structured content, as a tree or in its text.
    pub fn has_structured(&self) -> bool {
        self.structured.is_some() || self.text_is_structured.is_some()
    }

    /// The structured content left in the first text, read into a tree.
    fn text_structured(&self) -> Option<Value> {
        let length = self
            .text_is_structured
            .filter(|_| self.structured.is_none())?;
        let Some(Content::Text { text }) = self.content.first() else {
            return None;
        };
        // Marked by the mapping, which read it as JSON: it reads again.
        (text.len() == length)
            .then(|| serde_json::from_str(text).ok())
            .flatten()
    }

    /// Reads structured content left in the first text into a tree.
    pub fn materialize(&mut self) {
        if self.structured_in_text() {
            self.structured = self.text_structured();
        }
    }

    /// The result no longer marked as having its structured content in its first text
    /// ([`ToolResult::text_is_structured`]), which then holds it as a tree: before the text
    /// or the structured content changes.
    pub fn unmark(&mut self) {
        self.materialize();
        self.text_is_structured = None;
    }

    /// All text content joined, for logs and tests.
    pub fn joined_text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
