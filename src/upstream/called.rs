//! What a call gives back once it ended: the [`Called`] result for the client with the
//! [`CallStats`] for the operator (how it ended, [`CallOutcome`], and what went over the
//! wire), or [`UnknownTool`] when the name is not a tool at all.

use std::time::Duration;

use super::ToolResult;
use super::operation::Pending;

/// The tool name is not in the catalog: a protocol error, not a tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool \"{0}\"")]
pub struct UnknownTool(pub String);

/// How a call ended, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The upstream answered below 400 (or the mock did).
    Ok,
    /// Refused before sending: bad arguments, a request that cannot be built, missing
    /// credentials.
    ToolError,
    Upstream4xx,
    Upstream5xx,
    Timeout,
    Unreachable,
    RateLimited,
    /// Answered from the result stored under the call's idempotency key; not sent again.
    Replayed,
    /// Not sent: the user declined (or could not be asked for) the confirmation the tool
    /// needs.
    Unconfirmed,
}

impl CallOutcome {
    /// Every outcome, for checks that each has its place in the metrics.
    pub const ALL: [CallOutcome; 9] = [
        CallOutcome::Ok,
        CallOutcome::ToolError,
        CallOutcome::Upstream4xx,
        CallOutcome::Upstream5xx,
        CallOutcome::Timeout,
        CallOutcome::Unreachable,
        CallOutcome::RateLimited,
        CallOutcome::Replayed,
        CallOutcome::Unconfirmed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::ToolError => "tool_error",
            CallOutcome::Upstream4xx => "upstream_4xx",
            CallOutcome::Upstream5xx => "upstream_5xx",
            CallOutcome::Timeout => "timeout",
            CallOutcome::Unreachable => "unreachable",
            CallOutcome::RateLimited => "rate_limited",
            CallOutcome::Unconfirmed => "unconfirmed",
            CallOutcome::Replayed => "replayed",
        }
    }

    pub(super) fn of_status(status: u16) -> CallOutcome {
        match status {
            500.. => CallOutcome::Upstream5xx,
            400.. => CallOutcome::Upstream4xx,
            _ => CallOutcome::Ok,
        }
    }
}

/// What a call did on the wire; never bodies or secrets.
#[derive(Debug, Clone)]
pub struct CallStats {
    pub api: String,
    pub outcome: CallOutcome,
    /// The final upstream (or mock) status.
    pub status: Option<u16>,
    /// Time from the first send to the body read, retries included.
    pub upstream: Option<Duration>,
    pub attempts: u32,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The answer's media type, as sent.
    pub media_type: Option<String>,
    /// What the answer says of caching it.
    pub validators: super::caching::CacheValidators,
}

impl CallStats {
    pub(super) fn new(api: &str, outcome: CallOutcome) -> CallStats {
        CallStats {
            api: api.to_string(),
            outcome,
            status: None,
            upstream: None,
            attempts: 0,
            bytes_sent: 0,
            bytes_received: 0,
            media_type: None,
            validators: Default::default(),
        }
    }
}

/// A finished call: the result for the client and the stats for the operator.
#[derive(Debug, Clone)]
pub struct Called {
    pub result: ToolResult,
    pub stats: CallStats,
    /// A long-running operation the call started that goes on upstream: the result says
    /// so, and this is what it takes to look at it again ([`Dispatcher::resume`](super::Dispatcher::resume)).
    pub operation: Option<Box<Pending>>,
}

impl Called {
    /// A result of API `api` answered without calling it, with this outcome (a replay, or a
    /// refusal made above the dispatcher).
    pub fn unsent(api: &str, result: ToolResult, outcome: CallOutcome) -> Called {
        Called {
            result,
            stats: CallStats::new(api, outcome),
            operation: None,
        }
    }

    /// A call of a tool of API `api` that was not sent because its confirmation was not
    /// given: an error result with `text`.
    pub fn unconfirmed(api: &str, text: String) -> Called {
        Called {
            operation: None,
            result: ToolResult::error(text),
            stats: CallStats::new(api, CallOutcome::Unconfirmed),
        }
    }
}
