//! The call pipeline: one `tools/call`, whichever transport brought it. The client's view
//! turns its names and arguments into the catalog's, discovery tools are answered or
//! unwrapped, the dispatcher calls the upstream (with progress notifications for a client
//! that asked, and cancellation), the call is counted and logged once, and the result is
//! shaped for the client's revision and cut to the transport's message budget.

use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ProgressNotificationParam, ProtocolVersion,
    RequestId,
};
use rmcp::{ErrorData, Peer, RoleServer};

use super::Shared;
use super::confirm::{Asker, Verdict};
use super::sizes::{self, Budget};
use crate::discovery::Action;
use crate::telemetry::metrics::{CallRecord, Metrics};
use crate::telemetry::trace::{self, TraceContext};
use crate::upstream::{
    CallContext, CallOutcome, CallStats, Called, Content, LongRunning, Prepared, ToolResult,
    UnknownTool,
};

/// One `tools/call` as a client made it, whichever transport it came by.
pub(crate) struct CallRequest<'a> {
    /// The tool name as the client knows it (an alias, a discovery tool or the tool).
    pub name: &'a str,
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The client's `clientInfo.name`, which picks its dialect and names.
    pub client: Option<&'a str>,
    pub version: Option<&'a ProtocolVersion>,
    /// Incoming headers and trace context.
    pub incoming: CallContext,
    /// The budget of the answer's message, when the transport limits it: the result is cut
    /// to fit ([`sizes::fit`]).
    pub budget: Option<AnswerBudget>,
    /// How the user can be asked, for a tool that needs confirmation ([`super::confirm`]).
    pub asker: Asker,
    /// The request declared 2026-07-28's Tasks extension: a call that leaves an operation
    /// going upstream becomes a task at once ([`super::operations`]).
    pub tasks: bool,
}

/// The budget of one answer, for [`Shared::call`].
pub(crate) struct AnswerBudget {
    pub budget: Budget,
    /// The request's id, which the answer carries.
    pub id: RequestId,
    /// The budget applies only when a progress notification went out before the answer
    /// ([`Framing::JsonUnlessNotified`](super::sizes::Framing::JsonUnlessNotified)): otherwise the answer is plain JSON.
    pub only_after_progress: bool,
}

/// Where a long call reports how long it has waited, for a client that asked.
pub(crate) struct Progress {
    pub(super) token: rmcp::model::ProgressToken,
    pub(super) peer: Peer<RoleServer>,
}

impl Shared {
    /// Calls a tool for a client: the view of the client's dialect and protocol version
    /// turns its names and arguments into the catalog's, discovery tools are answered or
    /// unwrapped, then the dispatcher calls the upstream. Records the call's metrics and log
    /// line. Returns the result in the client's protocol version and the tool's catalog
    /// name; an unknown tool is a protocol error (-32602). With a budget, the result is cut
    /// to fit it ([`sizes::fit`]).
    pub(crate) async fn call(
        &self,
        mut request: CallRequest<'_>,
        cancelled: &tokio_util::sync::CancellationToken,
        progress: Option<Progress>,
    ) -> Result<(CallToolResponse, String), ErrorData> {
        let Some(answer) = request.budget.take() else {
            let (result, tool, _) = self.call_unbounded(request, cancelled, progress).await?;
            return Ok((result, tool));
        };
        let (name, client, version) = (request.name, request.client, request.version);
        let (result, tool, progressed) = self.call_unbounded(request, cancelled, progress).await?;
        let CallToolResponse::Complete(result) = result else {
            return Ok((result, tool));
        };
        if answer.only_after_progress && !progressed {
            return Ok((result.into(), tool));
        }
        let AnswerBudget { budget, id, .. } = answer;
        // Whether the client's listing promised structured content for this tool (looked up
        // only for a result that does not fit).
        let shows_output_schema = || {
            let view = self.current().view(client, version);
            view.tools
                .iter()
                .find(|listed| listed.name == name)
                .is_some_and(|listed| listed.output_schema.is_some())
        };
        let (result, cut_from) = sizes::fit(result, &budget, &id, shows_output_schema);
        if let Some(bytes) = cut_from {
            tracing::info!(
                tool = %tool,
                bytes,
                limit = budget.bytes,
                "tool result cut to fit one message of the transport ({})",
                budget.key
            );
        }
        Ok((result.into(), tool))
    }

    /// [`Shared::call`] without a budget; also says whether a progress notification went
    /// out.
    async fn call_unbounded(
        &self,
        request: CallRequest<'_>,
        cancelled: &tokio_util::sync::CancellationToken,
        progress: Option<Progress>,
    ) -> Result<(CallToolResponse, String, bool), ErrorData> {
        let snapshot = self.current();
        let started = std::time::Instant::now();
        let metrics = self.metrics();
        let _in_flight = metrics.call_started();
        let CallRequest {
            name,
            mut arguments,
            client,
            version,
            mut incoming,
            budget: _,
            asker,
            tasks,
        } = request;
        // 2026-07-28 allows any JSON value as structured content: the body as the API
        // returned it, and a text that is exactly that value.
        incoming.bare_structured = version == Some(&ProtocolVersion::V_2026_07_28);
        let view = snapshot.view(client, version);
        let mut name = view.catalog_name(name).to_string();
        // A caller is named in the log by its pseudonym, never by subject or token.
        let pseudonym = incoming.pseudonym().to_string();
        let caller = Some(pseudonym.as_str()).filter(|name| !name.is_empty());
        if snapshot.discovery.handles(&name) {
            let catalog = snapshot.catalog().clone();
            // Definitions as this client sees listed tools: its dialect, its names.
            let describe = |tool: &crate::catalog::Tool| {
                let dialect = snapshot
                    .presentation
                    .dialect(view.rule, Some(&tool.route.api));
                view.describe(tool, dialect)
            };
            match snapshot
                .discovery
                .handle(&catalog, &name, &arguments, &describe)
            {
                Action::Answer(result) => {
                    return Ok((to_call_result(result, version).into(), name, false));
                }
                // Dispatched exactly as a call of the tool by its own name.
                Action::Dispatch {
                    tool,
                    arguments: inner,
                } => {
                    name = tool;
                    arguments = inner;
                }
            }
        }
        // restmcp's own status tool, called directly or through `call_tool`.
        if name == snapshot.status_tool && snapshot.catalog().get(&name).is_none() {
            let result = match arguments.get("handle").and_then(serde_json::Value::as_str) {
                None => ToolResult::error(format!(
                    "Tool \"{name}\" needs argument \"handle\": the handle a tool call's result \
                     gave for its operation."
                )),
                Some(handle) => {
                    let scopes = incoming.caller.as_ref().map(|user| &user.scopes);
                    let may_call = |tool: &str| {
                        scopes
                            .is_none_or(|scopes| snapshot.scopes().missing(tool, scopes).is_none())
                    };
                    // Boxed, so that every call's future does not carry this one's size.
                    Box::pin(self.operations.status(
                        &snapshot.dispatcher,
                        handle,
                        (caller.unwrap_or(""), &may_call),
                        &incoming,
                    ))
                    .await
                }
            };
            return Ok((to_call_result(result, version).into(), name, false));
        }
        // With an OAuth caller, a tool its token's scopes do not open is refused (over
        // Streamable HTTP the front answers such a call with 403 before it gets here; this
        // also covers calls through a discovery tool and the SDK's path).
        if let Some(user) = &incoming.caller
            && let Some(missing) = snapshot.scopes().missing(&name, &user.scopes)
        {
            let result = ToolResult::error(format!(
                "The access token does not grant the scope(s) {} that tool \"{name}\" needs; \
                 authorize again asking for them.",
                missing.join(" ")
            ));
            return Ok((to_call_result(result, version).into(), name, false));
        }
        if let Some(tool) = snapshot.catalog().get(&name) {
            let dialect = snapshot
                .presentation
                .dialect(view.rule, Some(&tool.route.api));
            arguments = view.restore(tool, dialect, arguments);
        }
        let request_id = trace::request_id();
        let trace_id = incoming.trace.as_ref().map(TraceContext::trace_id);
        // The status of an operation the call waits for, said in progress notifications.
        let (status_told, status) = tokio::sync::watch::channel(String::new());
        if progress.is_some() {
            incoming.operation_status = Some(std::sync::Arc::new(status_told));
        }
        let long_running = if tasks {
            LongRunning::Return
        } else {
            LongRunning::Wait
        };
        let call = self.prepare_confirm_send(
            &snapshot,
            &name,
            arguments,
            &incoming,
            (asker, long_running),
        );
        tokio::pin!(call);
        let mut ticks = tokio::time::interval_at(
            tokio::time::Instant::now() + PROGRESS_INTERVAL,
            PROGRESS_INTERVAL,
        );
        let mut waited: f64 = 0.0;
        // Recorded as cancelled unless the call ends: by the client's notification, or by
        // this future being dropped when the client closes its connection.
        let mut unfinished = Unfinished {
            metrics,
            api: snapshot.catalog().get(&name).map(|t| t.route.api.as_str()),
            tool: &name,
            started,
            request_id: &request_id,
            trace_id: trace_id.as_deref(),
            why: Some("tool call abandoned: the client went away"),
        };
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                // Dropping `call` here drops the upstream request with it.
                _ = cancelled.cancelled() => {
                    unfinished.why = Some("tool call cancelled by the client");
                    return Err(ErrorData::internal_error("request cancelled", None));
                }
                _ = ticks.tick(), if progress.is_some() => {
                    waited += PROGRESS_INTERVAL.as_secs_f64();
                    if let Some(Progress { token, peer }) = &progress {
                        let message = match status.borrow().as_str() {
                            "" => format!("waiting for the upstream API ({waited:.0} s)"),
                            status => format!("the upstream operation is {status} ({waited:.0} s)"),
                        };
                        let update = ProgressNotificationParam::new(token.clone(), waited)
                            .with_message(message);
                        let _ = peer.notify_progress(update).await;
                    }
                }
            }
        };
        unfinished.why = None;
        drop(unfinished);
        let (called, task) = match outcome {
            // Not a call yet: the client asks its user and calls again.
            Ok(Step::Ask(question)) => return Ok((question.into(), name.clone(), false)),
            Err(Refusal::State(error)) => return Err(error),
            // MCP: an unknown tool is a protocol error with code -32602.
            Err(Refusal::Unknown(unknown)) => {
                tracing::info!(
                    target: crate::telemetry::writer::CALL_TARGET,
                    request_id = %request_id,
                    tool = %name,
                    outcome = "unknown_tool",
                    "tool call for a tool that does not exist"
                );
                return Err(ErrorData::invalid_params(unknown.to_string(), None));
            }
            Ok(Step::Task(called, task)) => (called, Some(task)),
            Ok(Step::Done(called)) => (called, None),
        };
        record_call(
            metrics,
            &name,
            &called.stats,
            started.elapsed(),
            &request_id,
            (trace_id.as_deref(), caller),
        );
        if let Some(task) = task {
            return Ok((CallToolResponse::Task(*task), name.clone(), false));
        }
        let progressed = progress.is_some() && waited > 0.0;
        let replayed = called.stats.outcome == CallOutcome::Replayed;
        let mut result = to_call_result(called.result, version);
        if replayed {
            let mut meta = serde_json::Map::new();
            meta.insert(REPLAY_META.into(), serde_json::Value::Bool(true));
            result.meta = Some(rmcp::model::MetaObject(meta));
        }
        Ok((result.into(), name.clone(), progressed))
    }
}

/// Where a call went, past the checks that precede sending.
enum Step {
    /// Sent (or refused before sending, with a result saying why).
    Done(Called),
    /// Not sent: the client is to ask its user (2026-07-28's `input_required`).
    Ask(rmcp::model::InputRequiredResult),
    /// Sent, and the operation goes on upstream: a task (2026-07-28's Tasks extension).
    Task(Called, Box<rmcp::model::CreateTaskResult>),
}

/// A call that is a protocol error.
enum Refusal {
    Unknown(UnknownTool),
    /// A `requestState` that restmcp did not issue for this call, or that was used.
    State(ErrorData),
}

impl Shared {
    /// Checks and builds the request, asks the user when the tool needs confirmation,
    /// then sends it. An operation left going upstream gets a handle (and with
    /// `LongRunning::Return`, becomes a task).
    async fn prepare_confirm_send(
        &self,
        snapshot: &super::Snapshot,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        incoming: &CallContext,
        (asker, long_running): (Asker, LongRunning),
    ) -> Result<Step, Refusal> {
        let dispatcher = &snapshot.dispatcher;
        let ready = match dispatcher
            .prepare(name, arguments)
            .map_err(Refusal::Unknown)?
        {
            Prepared::Ready(ready) => ready,
            Prepared::Refused(called) => return Ok(Step::Done(called)),
        };
        let caller = incoming.pseudonym();
        // A repeat under the same idempotency key is answered from the stored result, before
        // anyone is asked again.
        let record = (caller, dispatcher.result_budget_bytes(ready.tool()));
        let held =
            match super::idempotency::before(&self.store, &ready, record, self.idempotency_ttl)
                .await
            {
                super::idempotency::Before::Send(held) => held,
                super::idempotency::Before::Answer(called) => return Ok(Step::Done(called)),
            };
        if ready.tool().route.needs_confirmation() {
            let preview = ready.preview();
            let redact = |text: &str| dispatcher.redact(text);
            match self
                .confirmer
                .confirm(&preview, asker, caller, &redact)
                .await
            {
                Verdict::Proceed => {}
                Verdict::Refused(text) => {
                    return Ok(Step::Done(Called::unconfirmed(preview.api, text)));
                }
                Verdict::Ask(question) => return Ok(Step::Ask(question)),
                Verdict::Invalid(error) => return Err(Refusal::State(error)),
            }
        }
        let mut called = dispatcher.send_as(ready, incoming, long_running).await;
        // An operation going on upstream gets its handle (boxed: most calls have none).
        let handed = match called.operation.is_some() {
            true => {
                let status_tool = &snapshot.status_tool;
                Box::pin(
                    self.operations
                        .hand_over(&mut called, name, status_tool, caller),
                )
                .await
            }
            false => None,
        };
        if let Some(held) = held {
            held.answered(&called).await;
        }
        if long_running == LongRunning::Return
            && let (Some(handed), Some(pending)) = (handed, &called.operation)
        {
            let task = self.operations.task(&handed, pending);
            return Ok(Step::Task(called, Box::new(task)));
        }
        Ok(Step::Done(called))
    }
}

/// The `_meta` key of a result answered from the store under its idempotency key.
const REPLAY_META: &str = "io.restmcp/idempotentReplay";

/// How often a long call reports progress to a client that asked for it.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// A call that has not ended yet: if it is dropped so (cancelled, or its client gone), it
/// is still counted and logged, as `cancelled`.
struct Unfinished<'a> {
    metrics: &'a Metrics,
    /// None for a tool the catalog does not have (an unknown tool is not a call).
    api: Option<&'a str>,
    tool: &'a str,
    started: std::time::Instant,
    request_id: &'a str,
    trace_id: Option<&'a str>,
    /// The log message, or None once the call has ended.
    why: Option<&'static str>,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let (Some(why), Some(api)) = (self.why, self.api) else {
            return;
        };
        let duration = self.started.elapsed();
        self.metrics.record_call(&CallRecord {
            api,
            tool: self.tool,
            outcome: "cancelled",
            duration,
            upstream: None,
            bytes_sent: 0,
            bytes_received: 0,
            caller: None,
        });
        tracing::info!(
            target: crate::telemetry::writer::CALL_TARGET,
            request_id = %self.request_id,
            tool = %self.tool,
            outcome = "cancelled",
            duration_ms = duration.as_secs_f64() * 1e3,
            trace_id = self.trace_id,
            "{why}"
        );
    }
}

/// The call's metrics and its one log line (never arguments, bodies or secrets).
fn record_call(
    metrics: &Metrics,
    tool: &str,
    stats: &CallStats,
    elapsed: Duration,
    request_id: &str,
    (trace_id, caller): (Option<&str>, Option<&str>),
) {
    metrics.record_call(&CallRecord {
        api: &stats.api,
        tool,
        outcome: stats.outcome.as_str(),
        duration: elapsed,
        upstream: stats.upstream,
        bytes_sent: stats.bytes_sent,
        bytes_received: stats.bytes_received,
        caller,
    });
    let duration_ms = elapsed.as_secs_f64() * 1e3;
    let upstream_ms = stats.upstream.map(|d| d.as_secs_f64() * 1e3);
    macro_rules! line {
        ($level:ident) => {
            tracing::$level!(
                target: crate::telemetry::writer::CALL_TARGET,
                request_id = %request_id,
                tool = %tool,
                api = %stats.api,
                outcome = stats.outcome.as_str(),
                status = stats.status,
                duration_ms,
                upstream_ms,
                attempts = stats.attempts,
                trace_id,
                caller,
                "tool call"
            )
        };
    }
    match stats.outcome {
        CallOutcome::Upstream5xx | CallOutcome::Timeout | CallOutcome::Unreachable => line!(warn),
        _ => line!(info),
    }
}

/// restmcp's result in the client's protocol version: `structuredContent` exists from
/// 2025-06-18 on.
pub(super) fn to_call_result(
    result: ToolResult,
    version: Option<&ProtocolVersion>,
) -> CallToolResult {
    let content: Vec<ContentBlock> = result.content.into_iter().map(to_block).collect();
    let mut call = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    let structured_supported = !matches!(
        version,
        Some(v) if *v == ProtocolVersion::V_2024_11_05 || *v == ProtocolVersion::V_2025_03_26
    );
    if structured_supported {
        call.structured_content = result.structured;
    }
    call
}

fn to_block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Content::Resource {
            uri,
            mime_type,
            blob,
        } => ContentBlock::resource(rmcp::model::ResourceContents::BlobResourceContents {
            uri,
            mime_type: Some(mime_type),
            blob,
            meta: None,
        }),
    }
}
