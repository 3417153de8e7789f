//! Long-running operations. An answer saying the work goes on — a 202 naming a status
//! monitor (`Operation-Location`, `Azure-AsyncOperation`, else `Location`), or for a tool
//! marked long-running a 200 or 201 naming one — starts a [`Pending`] operation. It is
//! polled through the tool's own exchange (credentials, origins, caps) honouring
//! `Retry-After`, until the monitor says it ended; then its final result is read where the
//! operation says (`final-state-via`, else the method's usual place, else the monitor's
//! `resourceLocation`, else the monitor's answer itself).
//!
//! Those URLs come from the upstream's answers, so they are followed only within the API's
//! own origin and the origins the operator listed (`credential_origins`, and without
//! credentials or forwarded headers `follow_redirects`); any other is refused before
//! anything is sent there, and the call's result names the refused origin.
//!
//! [`follow`] waits within the tool's time limit; [`poll`] looks once, for an operation
//! resumed later (the status tool, `tasks/get`). Neither keeps anything between calls: a
//! [`Pending`] is all there is to an operation, so whoever holds it (sealed, by the client)
//! can resume it on any replica.

use std::time::{Duration, Instant};

use serde_json::Value;
use url::Url;

use super::context::CallContext;
use super::exchange::{Exchange, Exchanged, Failure, Outgoing, Received};
use super::request::HttpRequest;
use super::settings::UpstreamSettings;
use crate::catalog::Tool;
use crate::spec::{FinalState, Method};

/// An operation the upstream goes on with: what it takes to look at it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The status monitor.
    pub monitor: Url,
    /// Where the final result is read once the monitor says the operation succeeded;
    /// `None`: the monitor's `resourceLocation`, else its own answer.
    pub result: Option<Url>,
    /// What the monitor said last (`accepted` before it was first asked).
    pub status: String,
    /// How long the upstream asked to wait before it is asked again, in milliseconds.
    pub wait_ms: u64,
}

/// What a look at an operation found.
pub enum Polled {
    /// Still going.
    Running(Pending),
    /// Its final answer (or why there is none): mapped like any answer.
    Finished(Result<Box<Received>, Failure>),
    /// The monitor says it failed (or was cancelled): its answer and the status it gave.
    Failed(Box<Received>, String),
}

/// The longest wait between two polls, whatever `Retry-After` asks.
const MAX_POLL_WAIT: Duration = Duration::from_secs(30);

/// The wait between two polls when the upstream does not say.
const DEFAULT_POLL_WAIT: Duration = Duration::from_secs(1);

/// Status values that mean an operation is still going (compared lowercase, without `_`,
/// `-` or spaces): Azure's `provisioningState`/`status`, and the common ones.
const RUNNING: &[&str] = &[
    "running",
    "inprogress",
    "notstarted",
    "pending",
    "queued",
    "accepted",
    "started",
    "processing",
    "creating",
    "updating",
    "deleting",
    "waiting",
];

/// Status values that mean an operation ended without succeeding (compared as [`RUNNING`]).
const FAILED: &[&str] = &[
    "failed",
    "failure",
    "canceled",
    "cancelled",
    "error",
    "aborted",
    "faulted",
];

impl Pending {
    /// The operation `received` (the first answer to `request_url`) starts for `tool`, if it
    /// starts one: a 202 naming its monitor, or a marked tool's 200 or 201 naming one.
    pub fn start(tool: &Tool, request_url: &str, received: &Received) -> Option<Pending> {
        let monitor = received.operation.clone()?;
        let marked = tool.route.long_running;
        let follows =
            received.status == 202 || (marked.is_some() && matches!(received.status, 200 | 201));
        if !follows {
            return None;
        }
        let original = || Url::parse(request_url).ok();
        let location = || {
            received
                .result_location
                .clone()
                .filter(|location| *location != monitor)
        };
        let result = match marked {
            // An operation nobody marked: the monitor's own answer (or `resourceLocation`).
            None | Some(FinalState::StatusMonitor) => None,
            Some(FinalState::OriginalUri) => original(),
            Some(FinalState::Location) => received.result_location.clone(),
            Some(FinalState::Default) => match tool.route.method {
                Method::Put | Method::Patch => original(),
                Method::Post => location(),
                _ => None,
            },
        };
        Some(Pending {
            monitor,
            result,
            status: "accepted".to_string(),
            wait_ms: wait(received.retry_after.as_deref()).as_millis() as u64,
        })
    }

    /// How long to wait before asking again.
    pub fn wait(&self) -> Duration {
        Duration::from_millis(self.wait_ms).min(MAX_POLL_WAIT)
    }
}

/// The wait `Retry-After` asks for (seconds; a date is not honoured), within bounds.
fn wait(retry_after: Option<&str>) -> Duration {
    retry_after
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_POLL_WAIT, |s| {
            Duration::from_secs_f64(s.min(3600.0))
        })
        .min(MAX_POLL_WAIT)
}

/// The tool, its API's settings and the call's context, which every poll is made with.
pub type Call<'a> = (&'a Tool, &'a UpstreamSettings, &'a CallContext);

/// Waits for `pending` to end until `deadline`: polls after each wait the upstream asks,
/// telling each status to `call`'s context (for progress notifications). Still running
/// when the next wait would pass the deadline: [`Polled::Running`].
pub async fn follow(
    exchange: &dyn Exchange,
    call: Call<'_>,
    mut pending: Pending,
    deadline: Instant,
    totals: &mut Exchanged,
) -> Polled {
    loop {
        let wait = pending.wait();
        if Instant::now() + wait >= deadline {
            return Polled::Running(pending);
        }
        tokio::time::sleep(wait).await;
        match poll(exchange, call, pending, deadline, totals).await {
            Polled::Running(next) => {
                if let Some(status) = &call.2.operation_status {
                    status.send_replace(next.status.clone());
                }
                pending = next;
            }
            ended => return ended,
        }
    }
}

/// Looks at `pending` once (and, when it ended well, reads its result): what it found.
pub async fn poll(
    exchange: &dyn Exchange,
    call: Call<'_>,
    pending: Pending,
    deadline: Instant,
    totals: &mut Exchanged,
) -> Polled {
    let received = match get(exchange, call, &pending.monitor, deadline, totals).await {
        Ok(received) => received,
        Err(failure) => return Polled::Finished(Err(failure)),
    };
    if received.status == 202 {
        return Polled::Running(Pending {
            monitor: received.operation.clone().unwrap_or(pending.monitor),
            result: pending.result,
            status: pending.status,
            wait_ms: wait(received.retry_after.as_deref()).as_millis() as u64,
        });
    }
    // Anything but a 200 (a 404 for a forgotten operation, a 500) is the answer as it is.
    let state = (received.status == 200)
        .then(|| serde_json::from_slice::<Value>(&received.body).ok())
        .flatten();
    let status = state.as_ref().and_then(|body| {
        body.get("status")
            .or_else(|| body.pointer("/properties/provisioningState"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    if let Some(status) = status {
        let plain: String = status
            .chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .collect::<String>()
            .to_ascii_lowercase();
        if RUNNING.contains(&plain.as_str()) {
            return Polled::Running(Pending {
                monitor: pending.monitor,
                result: pending.result,
                status,
                wait_ms: wait(received.retry_after.as_deref()).as_millis() as u64,
            });
        }
        if FAILED.contains(&plain.as_str()) {
            return Polled::Failed(received, status);
        }
    }
    let resource = pending.result.clone().or_else(|| {
        state
            .as_ref()
            .and_then(|body| body.get("resourceLocation"))
            .and_then(Value::as_str)
            .and_then(|location| pending.monitor.join(location).ok())
    });
    match resource {
        Some(resource) if resource != pending.monitor => {
            Polled::Finished(get(exchange, call, &resource, deadline, totals).await.map(
                |mut final_answer| {
                    // The result is what was asked for, not a new operation.
                    final_answer.operation = None;
                    final_answer
                },
            ))
        }
        _ => Polled::Finished(Ok(received)),
    }
}

/// Where a URL the upstream named for an operation may be asked: on the tool's own origin
/// or one of `credential_origins`, with the call's credentials and forwarded headers
/// (`Ok(true)`); on an origin of `follow_redirects`, without them (`Ok(false)`); anywhere
/// else not at all, the error saying which origin was refused. The upstream's answer
/// decides where a monitor is; only the operator decides where restmcp goes (a private
/// address included: only the API's own, or one the operator listed).
fn followable(tool: &Tool, settings: &UpstreamSettings, url: &Url) -> Result<bool, String> {
    let origin = url.origin().ascii_serialization();
    let own = tool
        .route
        .base_url
        .as_ref()
        .and_then(|base| base.parsed().ok())
        .map(|base| base.origin().ascii_serialization());
    if own.as_deref() == Some(origin.as_str()) || settings.credential_origins.contains(&origin) {
        return Ok(true);
    }
    if settings.follow_redirects.contains(&origin) {
        return Ok(false);
    }
    let api = &tool.route.api;
    Err(format!(
        "named {origin} as where the operation's status or result is read, which is not the \
         API's origin ({}); restmcp follows an operation only there and to the origins of \
         apis.{api}.follow_redirects and apis.{api}.credential_origins, so nothing was sent to \
         {origin}.",
        own.as_deref().unwrap_or("none")
    ))
}

/// A GET of `url` through the tool's exchange, within `deadline`, counted in `totals`: only
/// where [`followable`] allows, with credentials only where it says.
async fn get(
    exchange: &dyn Exchange,
    (tool, settings, context): Call<'_>,
    url: &Url,
    deadline: Instant,
    totals: &mut Exchanged,
) -> Result<Box<Received>, Failure> {
    let credentials = followable(tool, settings, url).map_err(Failure::Refused)?;
    let request = HttpRequest {
        method: Method::Get,
        url: url.to_string(),
        headers: vec![("Accept".into(), "application/json".into())],
        body: None,
        parsed: Some(url.clone()),
    };
    let remaining = deadline.saturating_duration_since(Instant::now());
    let answered = exchange
        .exchange(Outgoing {
            tool,
            request,
            settings,
            timeout: remaining,
            context,
            bare: !credentials,
        })
        .await;
    totals.attempts += answered.attempts;
    totals.bytes_sent += answered.bytes_sent;
    answered.answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_bounded_and_defaults_to_a_second() {
        assert_eq!(wait(None), DEFAULT_POLL_WAIT);
        assert_eq!(wait(Some("2")), Duration::from_secs(2));
        assert_eq!(wait(Some("0.5")), Duration::from_millis(500));
        assert_eq!(wait(Some("86400")), MAX_POLL_WAIT);
        assert_eq!(wait(Some("-3")), DEFAULT_POLL_WAIT);
        assert_eq!(
            wait(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            DEFAULT_POLL_WAIT
        );
    }
}
