//! [`CallContext`]: what one call carries from the MCP request through the whole upstream
//! side, beside its arguments.

use std::sync::Arc;

use crate::identity::Caller;

/// What one call carries besides its arguments, from the MCP request to the upstream and
/// back: the incoming HTTP headers some API forwards, the trace to continue, the result
/// shape the client's revision takes, who the call acts for (`caller`, `principal`), and
/// where it tells the status of an operation it waits for. The MCP layer fills it in per
/// request (`Dispatcher::context_of` keeps only the headers some API forwards); over stdio
/// it has no headers.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Header names and values as received; names are matched case-insensitively.
    pub headers: Vec<(String, String)>,
    /// The caller's W3C trace context (HTTP `traceparent` header or the request's
    /// `_meta`), continued on the upstream request.
    pub trace: Option<crate::telemetry::trace::TraceContext>,
    /// The client takes any JSON value as structured content (MCP 2026-07-28): a scalar or
    /// array body is given as it is, not as `{"result": …}`, and without an outputSchema
    /// too.
    pub bare_structured: bool,
    /// The user the call acts for, when the MCP request carried a validated OAuth access
    /// token (`[server.oauth]`): token exchange towards the upstream needs it.
    pub caller: Option<Arc<Caller>>,
    /// Who the call comes from when its client authenticated (an OAuth caller, or a static
    /// token of `[server.auth]`): what restmcp keeps per caller is bound to it.
    pub principal: Option<crate::identity::Principal>,
    /// Told each status of a long-running operation the call waits for, for the MCP
    /// layer's progress notifications.
    pub operation_status: Option<Arc<tokio::sync::watch::Sender<String>>>,
    /// Ask the upstream whether the answer changed since one with these validators
    /// (`If-None-Match`, `If-Modified-Since`): a resource subscription's polls.
    pub conditional: Option<super::caching::CacheValidators>,
    /// Told what the call does as it goes, for a client that asked for log messages.
    pub log: Option<CallLog>,
    /// Keeps the request the call sends, for the console's "try a call" and a workflow's
    /// steps (`None` on every other call: nothing is copied).
    pub sent: Option<SentRecorder>,
    /// A workflow's step: the exchange neither retries a 429 or 503 nor follows a redirect,
    /// so the step's criteria and actions see every answer (a connection that fails is
    /// still retried).
    pub workflow_step: bool,
    /// Told each step a workflow runs (its number and what it is), for the MCP layer's
    /// progress notifications.
    pub steps_told: Option<Arc<tokio::sync::watch::Sender<(u32, String)>>>,
    /// The caller writes a result's structured content from its first text when marked so
    /// (MCP answers written by restmcp itself): a compact JSON answer is then checked
    /// against the outputSchema on a tape and never read into a tree
    /// ([`super::ToolResult::structured_in_text`]).
    pub structured_from_text: bool,
}

/// Headers whose values the console shows as sent, beside those the arguments set: they
/// carry nothing secret. Any other header restmcp added (credentials, forwarded headers)
/// is shown by name only.
const SHOWN_HEADERS: [&str; 7] = [
    "accept",
    "accept-encoding",
    "content-type",
    "content-length",
    "traceparent",
    "tracestate",
    "user-agent",
];

/// Body bytes a [`SentRecorder`] keeps.
pub const SENT_BODY_KEPT: usize = 4096;

/// Keeps the request a call sent (see [`CallContext::sent`]): the request as built from
/// the arguments, then, when it goes over HTTP, as it went on the wire (credentials,
/// forwarded headers and trace context added; the last attempt's).
#[derive(Clone, Default)]
pub struct SentRecorder(Arc<std::sync::Mutex<Recorded>>);

/// What a [`SentRecorder`] holds.
#[derive(Default)]
struct Recorded {
    sent: Option<Sent>,
    answered: Option<Answered>,
    /// Keep the answer itself ([`SentRecorder::with_answers`]).
    keep_answers: bool,
    response: Option<Response>,
}

/// An answer as a [`SentRecorder::with_answers`] kept it: what a workflow's runtime
/// expressions read (`$statusCode`, `$response.header.X`, `$response.body#/…`).
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    /// Names as sent (compared case-insensitively).
    pub headers: Vec<(String, String)>,
    pub content_type: Option<String>,
    /// The body, decoded (as the tool's result was made from it).
    pub body: Vec<u8>,
}

/// How the upstream (or the mock) answered a call a [`SentRecorder`] followed.
#[derive(Debug, Clone, Copy)]
pub struct Answered {
    pub status: Option<u16>,
    /// From the first send to the body read, retries included.
    pub upstream: Option<std::time::Duration>,
    pub attempts: u32,
}

/// A request as a [`SentRecorder`] kept it: values as sent, so secret until
/// [`Sent::redacted`].
#[derive(Clone)]
pub struct Sent {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The first [`SENT_BODY_KEPT`] bytes of the body, and its whole length.
    pub body: Option<(Vec<u8>, usize)>,
    /// Whether it went over HTTP (else the mock upstream answered it).
    pub on_the_wire: bool,
    /// The lowercase names of the headers the arguments set.
    argument_headers: Vec<String>,
}

impl std::fmt::Debug for SentRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SentRecorder")
    }
}

impl SentRecorder {
    /// A recorder that also keeps each answer's status, headers and body.
    pub fn with_answers() -> SentRecorder {
        let recorder = SentRecorder::default();
        recorder.lock().keep_answers = true;
        recorder
    }

    /// Whether answers are kept.
    pub(super) fn wants_answers(&self) -> bool {
        self.lock().keep_answers
    }

    /// Keeps an answer's headers (the last attempt's).
    pub(super) fn answer_headers(&self, headers: &reqwest::header::HeaderMap) {
        let mut recorded = self.lock();
        let response = recorded.response.get_or_insert_with(Response::default);
        response.headers = headers
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
            })
            .collect();
    }

    /// Keeps an answer's status, media type and decoded body. An exchange that kept no
    /// headers (the mock, another plugged in) gives the ones it knows: `Content-Type`,
    /// `Retry-After`.
    pub(super) fn answer_body(&self, answer: Response, retry_after: Option<&str>) {
        let mut recorded = self.lock();
        let kept_headers = recorded
            .response
            .take()
            .map(|kept| kept.headers)
            .unwrap_or_default();
        let mut response = answer;
        response.headers = kept_headers;
        if response.headers.is_empty() {
            let known = [
                ("content-type", response.content_type.as_deref()),
                ("retry-after", retry_after),
            ];
            for (name, value) in known {
                if let Some(value) = value {
                    response.headers.push((name.to_string(), value.to_string()));
                }
            }
        }
        recorded.response = Some(response);
    }

    /// The answer kept last, if any (with [`SentRecorder::with_answers`]).
    pub fn take_response(&self) -> Option<Response> {
        self.lock().response.take()
    }

    /// Keeps `request` as built from the arguments, before the exchange adds anything.
    pub(super) fn built(&self, request: &super::request::HttpRequest) {
        let argument_headers = request
            .headers
            .iter()
            .map(|(name, _)| name.to_ascii_lowercase())
            .collect();
        self.keep(Sent::of(request, false, argument_headers));
    }

    /// Keeps `request` as it goes on the wire.
    pub(super) fn on_the_wire(&self, request: &super::request::HttpRequest) {
        let argument_headers = self
            .lock()
            .sent
            .as_ref()
            .map(|sent| sent.argument_headers.clone())
            .unwrap_or_default();
        self.keep(Sent::of(request, true, argument_headers));
    }

    /// Keeps how the call was answered.
    pub(super) fn answered(
        &self,
        status: Option<u16>,
        upstream: Option<std::time::Duration>,
        attempts: u32,
    ) {
        self.lock().answered = Some(Answered {
            status,
            upstream,
            attempts,
        });
    }

    /// The request kept last and how it was answered, if it was sent.
    pub fn take(&self) -> (Option<Sent>, Option<Answered>) {
        let mut recorded = self.lock();
        (recorded.sent.take(), recorded.answered.take())
    }

    fn keep(&self, sent: Sent) {
        self.lock().sent = Some(sent);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Sent {
    fn of(
        request: &super::request::HttpRequest,
        on_the_wire: bool,
        argument_headers: Vec<String>,
    ) -> Sent {
        Sent {
            method: request.method.as_str().to_string(),
            url: request.url.clone(),
            headers: request.headers.clone(),
            body: request
                .body
                .as_ref()
                .map(|body| (body[..body.len().min(SENT_BODY_KEPT)].to_vec(), body.len())),
            on_the_wire,
            argument_headers,
        }
    }

    /// The request as it may be shown: `redact` applied to the URL, the shown header
    /// values and the body; the value of every header restmcp added other than
    /// [`SHOWN_HEADERS`] (credentials, forwarded headers) replaced by `[redacted]`.
    pub fn redacted(mut self, redact: &dyn Fn(&str) -> String) -> Sent {
        self.url = redact(&self.url);
        for (name, value) in &mut self.headers {
            let lower = name.to_ascii_lowercase();
            *value = if self.argument_headers.contains(&lower)
                || SHOWN_HEADERS.contains(&lower.as_str())
            {
                redact(value)
            } else {
                "[redacted]".to_string()
            };
        }
        if let Some((body, _)) = &mut self.body {
            *body = redact(&String::from_utf8_lossy(body)).into_bytes();
        }
        self
    }
}

/// How much a log message matters, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Debug,
    Info,
    Notice,
    Warning,
}

/// Where a call tells what it does as it goes (the MCP layer sends it to the client as
/// log messages): the request sent (method and URL, before credentials are added), each
/// retry, the answer's status and timing, notes on how it was mapped. Never a body, a
/// header value or a secret; texts pass the dispatcher's redaction.
#[derive(Clone)]
pub struct CallLog(Arc<dyn Fn(Severity, String) + Send + Sync>);

impl CallLog {
    pub fn new(tell: impl Fn(Severity, String) + Send + Sync + 'static) -> CallLog {
        CallLog(Arc::new(tell))
    }
}

impl std::fmt::Debug for CallLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallLog")
    }
}

impl CallContext {
    /// Tells the call's log `text()` (made only when someone listens).
    pub fn say(&self, severity: Severity, text: impl FnOnce() -> String) {
        if let Some(log) = &self.log {
            (log.0)(severity, text());
        }
    }
}

impl CallContext {
    /// The pseudonym of the caller the call comes from (an OAuth caller's or a static
    /// token's); empty without authentication. What restmcp keeps per caller (idempotency
    /// keys, confirmations, handles, rate limits) is bound to it.
    pub fn pseudonym(&self) -> &str {
        match (&self.principal, &self.caller) {
            (Some(principal), _) => principal.as_str(),
            (None, Some(caller)) => caller.pseudonym(),
            (None, None) => "",
        }
    }

    /// The headers of an HTTP request (values that are not visible ASCII are left out).
    pub fn from_headers(headers: &reqwest::header::HeaderMap) -> CallContext {
        CallContext::from_headers_kept(headers, |_| true)
    }

    /// [`CallContext::from_headers`] keeping only the headers `keep` names (by their
    /// lowercase name): a call copies only what some API forwards.
    pub fn from_headers_kept(
        headers: &reqwest::header::HeaderMap,
        keep: impl Fn(&str) -> bool,
    ) -> CallContext {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        CallContext {
            trace: text("traceparent").and_then(|traceparent| {
                crate::telemetry::trace::TraceContext::parse(traceparent, text("tracestate"))
            }),
            headers: headers
                .iter()
                .filter(|(name, _)| keep(name.as_str()))
                .filter_map(|(name, value)| {
                    Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
                })
                .collect(),
            bare_structured: false,
            caller: None,
            principal: None,
            operation_status: None,
            conditional: None,
            log: None,
            sent: None,
            workflow_step: false,
            steps_told: None,
            structured_from_text: false,
        }
    }
}
