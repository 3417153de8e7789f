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

use super::ServerState;
use super::confirm::{Asker, Verdict};
use super::sizes::{self, Budget};
use crate::discovery::Action;
use crate::telemetry::call_line::{self, CallLine};
use crate::telemetry::clock::millis;
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

/// What [`ServerState::call`] answers: the result in the client's revision and the tool's
/// catalog name.
pub(crate) struct Answered {
    pub response: CallToolResponse,
    pub tool: String,
    /// [`ToolResult::text_is_structured`] of the result, which
    /// [`answer_bytes`](super::request::answer_bytes) uses; `None` once the result is cut
    /// to fit a budget.
    pub text_is_structured: Option<usize>,
}

impl Answered {
    fn of(response: CallToolResponse, tool: String) -> Answered {
        Answered {
            response,
            tool,
            text_is_structured: None,
        }
    }
}

/// The length of `result`'s structured content written compact, when `mark`
/// ([`Answered::text_is_structured`]) says its first text is that content and the text
/// still has the marked length: the one rule by which a mark is trusted.
pub(super) fn marked_length(result: &CallToolResult, mark: Option<usize>) -> Option<usize> {
    result.structured_content.as_ref()?;
    let text = &result.content.first()?.as_text()?.text;
    mark.filter(|&length| length == text.len())
}

/// The budget of one answer, for [`ServerState::call`].
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

impl ServerState {
    /// Calls a tool for a client: the view of the client's dialect and protocol version
    /// turns its names and arguments into the catalog's, discovery tools are answered or
    /// unwrapped, then the dispatcher calls the upstream. Records the call's metrics and log
    /// line. Returns the result in the client's protocol version and the tool's catalog
    /// name; an unknown tool is a protocol error (-32602). With a budget, the result is cut
    /// to fit it ([`sizes::fit`]). `cancelled`: the client's way to cancel the call, `None`
    /// when it has none (a stateless request).
    pub(crate) async fn call(
        &self,
        mut request: CallRequest<'_>,
        cancelled: Option<&tokio_util::sync::CancellationToken>,
        progress: Option<Progress>,
    ) -> Result<Answered, ErrorData> {
        let Some(answer) = request.budget.take() else {
            let (answered, _) = self.call_unbounded(request, cancelled, progress).await?;
            return Ok(answered);
        };
        let (name, client, version) = (request.name, request.client, request.version);
        let (answered, progressed) = self.call_unbounded(request, cancelled, progress).await?;
        let Answered {
            response: CallToolResponse::Complete(result),
            tool,
            text_is_structured,
        } = answered
        else {
            return Ok(answered);
        };
        if answer.only_after_progress && !progressed {
            return Ok(Answered {
                response: result.into(),
                tool,
                text_is_structured,
            });
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
        let structured_length = marked_length(&result, text_is_structured);
        let (result, cut_from) =
            sizes::fit(result, &budget, &id, shows_output_schema, structured_length);
        if let Some(bytes) = cut_from {
            tracing::info!(
                tool,
                bytes,
                limit = budget.bytes,
                "tool result cut to fit one message of the transport ({})",
                budget.key
            );
        }
        Ok(Answered {
            response: result.into(),
            tool,
            text_is_structured: text_is_structured.filter(|_| cut_from.is_none()),
        })
    }

    /// [`ServerState::call`] without a budget; also says whether a progress notification went
    /// out. Three steps: [`ServerState::resolve`] the client's call to a catalog tool,
    /// [`ServerState::run`] it (with progress and cancellation), [`conclude`] with the result.
    async fn call_unbounded(
        &self,
        request: CallRequest<'_>,
        cancelled: Option<&tokio_util::sync::CancellationToken>,
        progress: Option<Progress>,
    ) -> Result<(Answered, bool), ErrorData> {
        let snapshot = self.current();
        let started = std::time::Instant::now();
        let _in_flight = self.metrics().call_started();
        let CallRequest {
            name,
            arguments,
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
        let from_text = incoming.structured_from_text;
        let (name, arguments) = match self
            .resolve(&snapshot, (name, arguments), (client, version), &incoming)
            .await
        {
            Resolved::Tool { name, arguments } => (name, arguments),
            Resolved::Answered(result, name) => {
                let text_is_structured = result.text_is_structured;
                let response = to_call_result(result, version, from_text).into();
                let answered = Answered {
                    response,
                    tool: name,
                    text_is_structured,
                };
                return Ok((answered, false));
            }
        };
        let call = Call {
            name: &name,
            started,
            request_id: trace::request_id(),
            trace_id: incoming.trace.as_ref().map(TraceContext::trace_id),
            // A caller is named in the log by its pseudonym, never by subject or token.
            caller: incoming.pseudonym().to_string(),
            // Copied only for a console that shows them (`server.console_arguments`).
            arguments: self.metrics().feed().wants_arguments().then(|| {
                let text = serde_json::to_string(&arguments).unwrap_or_default();
                snapshot.dispatcher.redact(&text)
            }),
        };
        let long_running = match tasks {
            true => LongRunning::Return,
            false => LongRunning::Wait,
        };
        let (outcome, progressed) = self
            .run_boxed(
                &snapshot,
                &call,
                (arguments, incoming, asker, long_running),
                (cancelled, progress),
            )
            .await?;
        conclude(
            self.metrics(),
            &call,
            outcome,
            (version, from_text),
            progressed,
        )
    }

    /// The catalog tool a client's call names, with its arguments in the catalog's names:
    /// the client's view turns its names back, a discovery tool is answered or unwrapped,
    /// and restmcp's status tool and a tool the caller's scopes do not open are answered
    /// here.
    async fn resolve(
        &self,
        snapshot: &super::Snapshot,
        (name, mut arguments): (&str, Arguments),
        (client, version): (Option<&str>, Option<&ProtocolVersion>),
        incoming: &CallContext,
    ) -> Resolved {
        let view = snapshot.calling_view(client, version);
        let mut name = view.catalog_name(name).to_string();
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
                Action::Answer(result) => return Resolved::Answered(result, name),
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
            // Boxed, so that every call's future does not carry this one's size.
            let result = Box::pin(self.status_tool(snapshot, &arguments, incoming));
            return Resolved::Answered(result.await, name);
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
            return Resolved::Answered(result, name);
        }
        if let Some(tool) = snapshot.catalog().get(&name) {
            let dialect = snapshot
                .presentation
                .dialect(view.rule, Some(&tool.route.api));
            arguments = view.restore(tool, dialect, arguments);
        }
        Resolved::Tool { name, arguments }
    }

    /// restmcp's status tool called with `arguments`: the status (or the result) of the
    /// operation behind the `handle` they give, for this caller and the tools its scopes
    /// open.
    async fn status_tool(
        &self,
        snapshot: &super::Snapshot,
        arguments: &Arguments,
        incoming: &CallContext,
    ) -> ToolResult {
        let Some(handle) = arguments.get("handle").and_then(serde_json::Value::as_str) else {
            return ToolResult::error(format!(
                "Tool \"{}\" needs argument \"handle\": the handle a tool call's result gave for \
                 its operation.",
                snapshot.status_tool
            ));
        };
        let scopes = incoming.caller.as_ref().map(|user| &user.scopes);
        let may_call = |tool: &str| {
            scopes.is_none_or(|scopes| snapshot.scopes().missing(tool, scopes).is_none())
        };
        let caller = incoming.pseudonym();
        self.operations
            .status(&snapshot.dispatcher, handle, (caller, &may_call), incoming)
            .await
    }

    /// [`ServerState::run`], boxed: the future of every layer above would hold it, and each
    /// is moved whole. Boxed in a statement of its own, away from the `.await`: a future
    /// kept in a local of the caller, or built in the statement that awaits it, takes room
    /// in the caller's future even once moved into a box (its storage lives on across the
    /// `.await`), and each layer above grows by it. Built in its box
    /// ([`crate::alloc::pinned`]), not on the stack and copied there.
    fn run_boxed<'a, 'b: 'a>(
        &'a self,
        snapshot: &'a super::Snapshot,
        call: &'a Call<'b>,
        sending: (Arguments, CallContext, Asker, LongRunning),
        running: (
            Option<&'a tokio_util::sync::CancellationToken>,
            Option<Progress>,
        ),
    ) -> futures_util::future::BoxFuture<'a, Ran> {
        crate::alloc::pinned(|| self.run(snapshot, call, sending, running))
    }

    /// Runs a resolved call to its end: sends it ([`ServerState::prepare_confirm_send`]) while
    /// telling a client that asked how long it has waited ([`ServerState::run_telling`]),
    /// and stops when the client cancels. Says whether a progress notification went out. A
    /// call that does not end (cancelled, or dropped when its client goes away) is counted
    /// and logged as cancelled.
    async fn run(
        &self,
        snapshot: &super::Snapshot,
        call: &Call<'_>,
        (arguments, incoming, asker, long_running): (Arguments, CallContext, Asker, LongRunning),
        (cancelled, progress): (
            Option<&tokio_util::sync::CancellationToken>,
            Option<Progress>,
        ),
    ) -> Ran {
        let tool = snapshot.catalog().get(call.name);
        // Recorded as cancelled unless the call ends: by the client's notification, or by
        // this future being dropped when the client closes its connection.
        let mut unfinished = Unfinished {
            metrics: self.metrics(),
            api: tool.map(|t| t.route.api.as_str()),
            call,
            why: Some("tool call abandoned: the client went away"),
        };
        let ran = match progress {
            // Nothing to tell: no channels for a status, no timer; and nothing to wait for
            // but the answer when the call cannot be cancelled.
            None => {
                let sending = || {
                    self.prepare_confirm_send(
                        snapshot,
                        call.name,
                        arguments,
                        &incoming,
                        (asker, long_running),
                    )
                };
                // Made where it is awaited, not in a local moved there: the move copied
                // all 4 KB of it. Not pinned in this future and polled through `&mut`
                // either: measured, that made this future (boxed by `run_boxed`) many
                // times larger.
                match cancelled {
                    None => Some((sending().await, false)),
                    Some(cancelled) => tokio::select! {
                        biased;
                        outcome = sending() => Some((outcome, false)),
                        () = cancelled.cancelled() => None,
                    },
                }
            }
            Some(progress) => {
                let workflow = tool.is_some_and(|tool| tool.workflow.is_some());
                let sending = (arguments, incoming, asker, long_running);
                // Boxed in a statement of its own (see `run_boxed`): a call without progress,
                // nearly every one, does not carry this future's size.
                let telling: futures_util::future::BoxFuture<'_, _> = crate::alloc::pinned(|| {
                    self.run_telling(
                        snapshot,
                        call.name,
                        sending,
                        (cancelled, progress),
                        workflow,
                    )
                });
                telling.await
            }
        };
        match ran {
            Some(ran) => {
                unfinished.why = None;
                Ok(ran)
            }
            None => {
                unfinished.why = Some("tool call cancelled by the client");
                Err(ErrorData::internal_error("request cancelled", None))
            }
        }
    }

    /// Sends a call for a client that asked for progress: tells it every
    /// [`PROGRESS_INTERVAL`] how long it has waited and what the operation it waits for
    /// says, or, for a workflow, each step as it starts. `None` when the client cancels.
    async fn run_telling(
        &self,
        snapshot: &super::Snapshot,
        name: &str,
        (arguments, mut incoming, asker, long_running): (
            Arguments,
            CallContext,
            Asker,
            LongRunning,
        ),
        (cancelled, progress): (Option<&tokio_util::sync::CancellationToken>, Progress),
        workflow: bool,
    ) -> Option<(Result<Step, Refusal>, bool)> {
        // The status of an operation the call waits for, said in progress notifications.
        let (status_told, status) = tokio::sync::watch::channel(String::new());
        incoming.operation_status = Some(std::sync::Arc::new(status_told));
        // The step a workflow runs, said in a notification as each one starts (instead of
        // the seconds waited).
        let (steps_told, mut steps) = tokio::sync::watch::channel((0, String::new()));
        if workflow {
            incoming.steps_told = Some(std::sync::Arc::new(steps_told));
        }
        let sending =
            self.prepare_confirm_send(snapshot, name, arguments, &incoming, (asker, long_running));
        tokio::pin!(sending);
        let mut ticks = tokio::time::interval_at(
            tokio::time::Instant::now() + PROGRESS_INTERVAL,
            PROGRESS_INTERVAL,
        );
        let mut waited: f64 = 0.0;
        let mut steps_open = true;
        let outcome = loop {
            tokio::select! {
                outcome = &mut sending => break outcome,
                // Dropping `sending` here drops the upstream request with it.
                () = cancelled_or_never(cancelled) => return None,
                changed = steps.changed(), if workflow && steps_open => {
                    if changed.is_err() {
                        steps_open = false;
                        continue;
                    }
                    let (number, text) = steps.borrow_and_update().clone();
                    progress.tell_step(number, &text).await;
                    waited = waited.max(f64::MIN_POSITIVE);
                }
                _ = ticks.tick(), if !workflow => {
                    waited += PROGRESS_INTERVAL.as_secs_f64();
                    let status = status.borrow().clone();
                    progress.tell(&status, waited).await;
                }
            }
        };
        Some((outcome, waited > 0.0))
    }
}

impl ServerState {
    /// Runs catalog tool `name` for a request that is not a `tools/call`: a resource
    /// read, a prompt's embedded operation, a completion's list. The caller's scopes
    /// decide, then the tool's whole pipeline runs (validation, credentials, forwarded
    /// headers, limits, redaction, cancellation) and it is counted and logged as a call of
    /// the tool; nobody is asked, and an operation going on upstream is waited for.
    pub(super) async fn run_for_read(
        &self,
        snapshot: &super::Snapshot,
        name: &str,
        arguments: Arguments,
        incoming: CallContext,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> Result<Called, ErrorData> {
        if let Some(user) = &incoming.caller
            && let Some(missing) = snapshot.scopes().missing(name, &user.scopes)
        {
            return Err(ErrorData::invalid_params(
                format!(
                    "the access token does not grant the scope(s) {} this needs; authorize \
                     again asking for them",
                    missing.join(" ")
                ),
                None,
            ));
        }
        let _in_flight = self.metrics().call_started();
        let call = Call {
            name,
            started: std::time::Instant::now(),
            request_id: trace::request_id(),
            trace_id: incoming.trace.as_ref().map(TraceContext::trace_id),
            caller: incoming.pseudonym().to_string(),
            arguments: None,
        };
        // The caller reads the result's structured content: it comes as a tree.
        let mut incoming = incoming;
        incoming.structured_from_text = false;
        let sending = (arguments, incoming, Asker::Unable, LongRunning::Wait);
        let (outcome, _) = self
            .run_boxed(snapshot, &call, sending, (Some(cancelled), None))
            .await?;
        match outcome {
            Ok(Step::Done(called)) => {
                record_call(self.metrics(), &call, &called.stats);
                Ok(called)
            }
            Err(Refusal::Unknown(unknown)) => {
                Err(ErrorData::invalid_params(unknown.to_string(), None))
            }
            Err(Refusal::State(error)) => Err(error),
            // Neither happens without an asker and with operations waited for.
            Ok(Step::Ask(_) | Step::Task(..)) => Err(ErrorData::internal_error(
                "the read would need a question or a task",
                None,
            )),
        }
    }
}

/// Arguments of a tool call, by name.
type Arguments = serde_json::Map<String, serde_json::Value>;

/// What a client's tool call resolves to before anything is sent ([`ServerState::resolve`]).
enum Resolved {
    /// The catalog tool to call, with its arguments in the catalog's names.
    Tool { name: String, arguments: Arguments },
    /// Answered already, under this tool name: a discovery tool's own answer, restmcp's
    /// status tool, a tool the caller's scopes do not open.
    Answered(ToolResult, String),
}

/// One resolved call, as its record and log line name it.
struct Call<'a> {
    /// The tool's catalog name.
    name: &'a str,
    started: std::time::Instant,
    /// The id of the call's log line.
    request_id: String,
    /// The trace the call belongs to, when the client sent trace context.
    trace_id: Option<String>,
    /// The caller's pseudonym (empty: an anonymous caller).
    caller: String,
    /// The arguments as JSON text (redacted), for a console that shows them.
    arguments: Option<String>,
}

impl Call<'_> {
    fn caller(&self) -> Option<&str> {
        Some(self.caller.as_str()).filter(|caller| !caller.is_empty())
    }
}

impl Progress {
    /// Tells the client that step `number` of a workflow starts.
    async fn tell_step(&self, number: u32, text: &str) {
        let update = ProgressNotificationParam::new(self.token.clone(), f64::from(number))
            .with_message(text.to_string());
        let _ = self.peer.notify_progress(update).await;
    }

    /// Tells the client how long the call has waited, and the status of the operation it
    /// waits for when there is one.
    async fn tell(&self, status: &str, waited: f64) {
        let message = match status {
            "" => format!("waiting for the upstream API ({waited:.0} s)"),
            status => format!("the upstream operation is {status} ({waited:.0} s)"),
        };
        let update =
            ProgressNotificationParam::new(self.token.clone(), waited).with_message(message);
        let _ = self.peer.notify_progress(update).await;
    }
}

/// The end of a call that ran: a protocol error, a question for the user, a task, or the
/// result in the client's revision (marked when it was replayed from the store). Records
/// the call's metrics and log line. `from_text`: see [`to_call_result`].
fn conclude(
    metrics: &Metrics,
    call: &Call<'_>,
    outcome: Result<Step, Refusal>,
    (version, from_text): (Option<&ProtocolVersion>, bool),
    progressed: bool,
) -> Result<(Answered, bool), ErrorData> {
    let name = call.name.to_string();
    let (called, task) = match outcome {
        // Not a call yet: the client asks its user and calls again.
        Ok(Step::Ask(question)) => return Ok((Answered::of(question.into(), name), false)),
        Err(Refusal::State(error)) => return Err(error),
        // MCP: an unknown tool is a protocol error with code -32602.
        Err(Refusal::Unknown(unknown)) => {
            tracing::info!(
                target: crate::telemetry::writer::CALL_TARGET,
                request_id = %call.request_id,
                // Text the client chose: recorded as a string, so the log escapes it.
                tool = name.as_str(),
                outcome = "unknown_tool",
                "tool call for a tool that does not exist"
            );
            return Err(ErrorData::invalid_params(unknown.to_string(), None));
        }
        Ok(Step::Task(called, task)) => (called, Some(task)),
        Ok(Step::Done(called)) => (called, None),
    };
    record_call(metrics, call, &called.stats);
    if let Some(task) = task {
        return Ok((Answered::of(CallToolResponse::Task(*task), name), false));
    }
    let replayed = called.stats.outcome == CallOutcome::Replayed;
    let text_is_structured = called.result.text_is_structured;
    let mut result = to_call_result(called.result, version, from_text);
    if replayed {
        let mut meta = serde_json::Map::new();
        meta.insert(REPLAY_META.into(), serde_json::Value::Bool(true));
        result.meta = Some(rmcp::model::MetaObject(meta));
    }
    let answered = Answered {
        response: result.into(),
        tool: name,
        text_is_structured,
    };
    Ok((answered, progressed))
}

/// Where a call went, past the checks that precede sending.
pub(super) enum Step {
    /// Sent (or refused before sending, with a result saying why).
    Done(Called),
    /// Not sent: the client is to ask its user (2026-07-28's `input_required`).
    Ask(rmcp::model::InputRequiredResult),
    /// Sent, and the operation goes on upstream: a task (2026-07-28's Tasks extension).
    Task(Called, Box<rmcp::model::CreateTaskResult>),
}

/// A call that is a protocol error.
pub(super) enum Refusal {
    Unknown(UnknownTool),
    /// A `requestState` that restmcp did not issue for this call, or that was used.
    State(ErrorData),
}

impl ServerState {
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
        let caller = incoming.pseudonym();
        if let Some(tool) = snapshot.catalog().get(name)
            && let Some(plan) = &tool.workflow
        {
            // Boxed in a statement of its own (see `run_boxed`): most calls are not workflows.
            let running: futures_util::future::BoxFuture<'_, _> =
                Box::pin(self.call_workflow(snapshot, (tool, plan), arguments, incoming, asker));
            return running.await;
        }
        let (arguments, asker, asked) = match self
            .ask_for_arguments(snapshot, name, arguments, asker, caller)
            .await
        {
            Ok(ready) => ready,
            Err(step) => return step,
        };
        let ready = match dispatcher
            .prepare(name, arguments)
            .map_err(Refusal::Unknown)?
        {
            Prepared::Ready(ready) => ready,
            Prepared::Refused(called) => return Ok(Step::Done(called)),
        };
        // A repeat under the same idempotency key is answered from the stored result, before
        // anyone is asked again.
        let record = (caller, dispatcher.result_budget_bytes(ready.tool()));
        let held = match crate::upstream::idempotency::before(
            &self.store,
            &ready,
            record,
            self.idempotency_ttl,
        )
        .await
        {
            crate::upstream::idempotency::Before::Send(held) => held,
            crate::upstream::idempotency::Before::Answer(called) => return Ok(Step::Done(called)),
        };
        if ready.tool().route.needs_confirmation() {
            let preview = ready.preview();
            let redact = |text: &str| dispatcher.redact(text);
            // Boxed in a statement of its own (see `run_boxed`): most calls need no human.
            let confirming: futures_util::future::BoxFuture<'_, _> =
                Box::pin(self.confirmer.confirm(&preview, asker, caller, &redact));
            match confirming.await {
                Verdict::Proceed => {}
                Verdict::Refused(text) => {
                    return Ok(Step::Done(Called::unconfirmed(preview.api, text)));
                }
                Verdict::Ask(question) => {
                    // The answers given in an earlier round travel with the question.
                    let question = match asked {
                        Some((asking, tool, model, answers)) => {
                            asking.carry(tool, &model, answers, question)
                        }
                        None => question,
                    };
                    return Ok(Step::Ask(question));
                }
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

/// Ends when `cancelled` is cancelled; never without a token.
async fn cancelled_or_never(cancelled: Option<&tokio_util::sync::CancellationToken>) {
    match cancelled {
        Some(cancelled) => cancelled.cancelled().await,
        None => std::future::pending().await,
    }
}

/// What [`ServerState::run`] ends with: the step, and whether a progress notification
/// went out.
type Ran = Result<(Result<Step, Refusal>, bool), ErrorData>;

/// What asking for arguments left for the confirmation: how to seal, the tool, the
/// model's own arguments and the user's answers.
type AskedFor<'s> = Option<(
    super::ask::Asking<'s>,
    &'s crate::catalog::Tool,
    Arguments,
    Arguments,
)>;

impl ServerState {
    /// Asks the user for the arguments a call of `name` lacks (see [`super::ask`]): the
    /// arguments to build the request from and the asker left for the confirmation, or
    /// where the call ends (a question, a refusal). A call that lacks nothing is not
    /// looked at twice.
    async fn ask_for_arguments<'s>(
        &'s self,
        snapshot: &'s super::Snapshot,
        name: &str,
        arguments: Arguments,
        asker: Asker,
        caller: &'s str,
    ) -> Result<(Arguments, Asker, AskedFor<'s>), Result<Step, Refusal>> {
        let Some(tool) = snapshot
            .catalog()
            .get(name)
            .filter(|tool| super::ask::may_ask(tool, &arguments))
        else {
            return Ok((arguments, asker, None));
        };
        let asking = super::ask::Asking {
            codec: self.confirmer.codec(),
            ttl: self.confirmer.ttl(),
            caller,
        };
        let model = arguments.clone();
        // Boxed in a statement of its own (see `run_boxed`): most calls ask nothing.
        let asked: futures_util::future::BoxFuture<'_, _> =
            Box::pin(asking.ask(tool, arguments, asker));
        match asked.await {
            super::ask::Asked::Ready {
                arguments,
                asker,
                answers,
            } => Ok((arguments, asker, Some((asking, tool, model, answers)))),
            super::ask::Asked::Ask(question) => Err(Ok(Step::Ask(question))),
            super::ask::Asked::Declined(text) => {
                Err(Ok(Step::Done(Called::unconfirmed(&tool.route.api, text))))
            }
            super::ask::Asked::Invalid(error) => Err(Err(Refusal::State(error))),
        }
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
    call: &'a Call<'a>,
    /// The log message, or None once the call has ended.
    why: Option<&'static str>,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let (Some(why), Some(api)) = (self.why, self.api) else {
            return;
        };
        let duration = self.call.started.elapsed();
        self.metrics.record_call(&CallRecord {
            api,
            tool: self.call.name,
            outcome: "cancelled",
            duration,
            upstream: None,
            bytes_sent: 0,
            bytes_received: 0,
            caller: None,
            status: None,
            attempts: 0,
            arguments: self.call.arguments.as_deref(),
        });
        tracing::info!(
            target: crate::telemetry::writer::CALL_TARGET,
            request_id = %self.call.request_id,
            tool = self.call.name,
            outcome = "cancelled",
            duration_ms = millis(duration),
            trace_id = self.call.trace_id.as_deref(),
            "{why}"
        );
    }
}

/// The call's metrics and its one log line (never arguments, bodies or secrets).
fn record_call(metrics: &Metrics, call: &Call<'_>, stats: &CallStats) {
    let (tool, request_id, caller) = (call.name, &call.request_id, call.caller());
    let trace_id = call.trace_id.as_deref();
    let elapsed = call.started.elapsed();
    metrics.record_call(&CallRecord {
        api: &stats.api,
        tool,
        outcome: stats.outcome.as_str(),
        duration: elapsed,
        upstream: stats.upstream,
        bytes_sent: stats.bytes_sent,
        bytes_received: stats.bytes_received,
        caller,
        status: stats.status,
        attempts: stats.attempts,
        arguments: call.arguments.as_deref(),
    });
    call_line::log(&CallLine {
        warn: matches!(
            stats.outcome,
            CallOutcome::Upstream5xx | CallOutcome::Timeout | CallOutcome::Unreachable
        ),
        request_id,
        tool,
        api: &stats.api,
        outcome: stats.outcome.as_str(),
        status: stats.status,
        duration_ms: millis(elapsed),
        upstream_ms: stats.upstream.map(millis),
        attempts: stats.attempts,
        trace_id,
        caller,
    });
}

/// restmcp's result in the client's protocol version: `structuredContent` exists from
/// 2025-06-18 on. `from_text`: the answer is written by
/// [`answer_bytes`](super::request::answer_bytes), which writes a structured content left in
/// the result's text ([`ToolResult::structured_in_text`]) from that text: it stands in as
/// `null`. For any other writer it is read into a tree here.
pub(super) fn to_call_result(
    mut result: ToolResult,
    version: Option<&ProtocolVersion>,
    from_text: bool,
) -> CallToolResult {
    if !from_text {
        result.materialize();
    }
    let in_text = result.structured_in_text();
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
        call.structured_content = match result.structured {
            None if in_text => Some(serde_json::Value::Null),
            structured => structured,
        };
    }
    call
}

pub(super) fn to_block(content: Content) -> ContentBlock {
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

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::marked_length;

    #[test]
    fn a_mark_is_trusted_only_for_a_structured_result_whose_first_text_has_its_length() {
        let text = r#"{"id":1}"#;
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({"id": 1}));
        assert_eq!(marked_length(&result, Some(text.len())), Some(text.len()));
        // Not marked, or a text of another length (a note added since).
        assert_eq!(marked_length(&result, None), None);
        assert_eq!(marked_length(&result, Some(text.len() + 1)), None);
        // No first text, or it is not a text.
        let mut untexted = result.clone();
        untexted.content.clear();
        assert_eq!(marked_length(&untexted, Some(text.len())), None);
        assert_eq!(marked_length(&untexted, None), None);
        let mut imaged = result.clone();
        imaged.content = vec![ContentBlock::image("AAAA", "image/png")];
        assert_eq!(marked_length(&imaged, Some(4)), None);
        // Nothing structured.
        let mut plain = result;
        plain.structured_content = None;
        assert_eq!(marked_length(&plain, Some(text.len())), None);
    }
}
