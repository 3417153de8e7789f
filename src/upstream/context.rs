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
        }
    }
}
