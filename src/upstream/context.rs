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
    pub conditional: Option<super::exchange::Validators>,
    /// Told what the call does as it goes, for a client that asked for log messages.
    pub log: Option<CallLog>,
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
        }
    }
}
