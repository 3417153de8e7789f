//! Runs an Arazzo workflow's tool ([`Dispatcher::run_workflow`]): its steps in order, each
//! a call of an existing tool through the dispatcher's own pipeline (validation, base URL,
//! credentials and their origins, forwarded headers, rate limits, size caps, redaction),
//! with parameters and bodies made from runtime expressions; success criteria decide each
//! step, and `onSuccess`/`onFailure` actions (`goto`, `retry`, `end`) what comes next.
//!
//! Bounds: `max_steps` requests per call (retries and nested workflows included; a `goto`
//! loop stops there), `timeout_seconds` for the whole run, nesting [`MAX_NESTING`] deep,
//! [`MAX_RETRY_LIMIT`] retries per step, and a wait before a retry of at most
//! [`MAX_RETRY_WAIT`] (`Retry-After` wins over `retryAfter`). Inside a workflow the exchange
//! does not retry a 429 or 503 itself: the workflow's actions see every answer.
//!
//! Choices where Arazzo is silent, and why:
//! * A step without `successCriteria` succeeds when the operation answered below 400
//!   (what a tool call counts as success).
//! * Step actions come before the workflow's; the first whose criteria hold is taken.
//!   Workflow actions "can be overridden at the step level but cannot be removed": a
//!   step's own actions do not hide the workflow's when none of them matches.
//! * A step whose parameter or body value does not resolve (an input not given) sends
//!   without it: the tool's own validation says when it was required.
//! * An idempotency key a step sends is derived from the call's `idempotency_key`, the
//!   tool, the workflow, the step and how often the run reached it (a retry keeps it, a
//!   `goto` back gets a new one): a repeated call does not repeat completed writes.
//!
//! * `workflow/scope.rs`: what expressions read (inputs, step outputs, the request and
//!   answer of the running step).
//! * `workflow/ending.rs`: how a run ends, as a result the model can act on.

mod ending;
mod scope;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use self::ending::{Failure, SentLine};
use self::scope::{Exchanged, Finished, Frame, Scope};
use super::{CallContext, CallOutcome, CallStats, Called, Dispatcher, Prepared, SentRecorder};
use crate::catalog::Tool;
use crate::catalog::workflow::{
    ArgumentSlot, BodySlot, MAX_NESTING, MAX_RETRY_LIMIT, Program, StepCall, WorkflowPlan,
};
use crate::spec::arazzo::criterion::Criterion;
use crate::spec::arazzo::document::{Action, ActionKind, In, Step, Workflow};

/// The longest wait before a retry.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

/// A workflow's outcome inside a run.
type Outcome = Result<Map<String, Value>, Failure>;

/// One call of a workflow tool while it runs.
struct Run<'d> {
    dispatcher: &'d Dispatcher,
    program: &'d Program,
    context: &'d CallContext,
    /// The call's idempotency key, from which each step's is derived.
    key: Option<String>,
    tool: &'d str,
    /// Every request sent so far, in order.
    sent: Vec<SentLine>,
    /// Requests sent (or refused before sending) so far: bounded by `max_steps`.
    requests: u32,
    /// Times each (workflow, step) was reached.
    visits: HashMap<(usize, usize), u32>,
    /// Workflows that ended (dependencies, nested ones), by id.
    finished: HashMap<String, Finished>,
    /// Bytes over the wire, for the call's stats.
    bytes: (u64, u64),
    /// The stats of the last step sent.
    last: Option<CallStats>,
    /// The last step's request and answer: what a step that ran a nested workflow reads
    /// as its own (`$statusCode`, `$response.…`), as other executors do.
    last_answer: Option<Exchanged>,
}

impl Dispatcher {
    /// Runs workflow tool `tool` with `arguments` (checked against its inputSchema first)
    /// for the call `context` describes. Steps go through [`Dispatcher::prepare`] and
    /// [`Dispatcher::send_as`] like calls of their tools; the result holds the workflow's
    /// outputs, or says which step failed, why, and what was already sent.
    pub async fn run_workflow(
        &self,
        tool: &Tool,
        plan: &WorkflowPlan,
        arguments: Map<String, Value>,
        context: &CallContext,
    ) -> Called {
        let api = tool.route.api.as_str();
        let mut arguments = arguments;
        if let Err(violations) = self.check_workflow_arguments(tool, &mut arguments) {
            let text = format!(
                "Invalid arguments for tool \"{}\"; no request was sent:\n- {}",
                tool.name,
                violations.join("\n- ")
            );
            return Called::unsent(api, super::ToolResult::error(text), CallOutcome::ToolError);
        }
        let key = plan
            .idempotency
            .as_ref()
            .and_then(|name| arguments.remove(name))
            .and_then(|key| key.as_str().map(str::to_string));
        let program = plan.program.as_ref();
        let mut run = Run {
            dispatcher: self,
            program,
            context,
            key,
            tool: &tool.name,
            sent: Vec::new(),
            requests: 0,
            visits: HashMap::new(),
            finished: HashMap::new(),
            bytes: (0, 0),
            last: None,
            last_answer: None,
        };
        let started = Instant::now();
        let outcome =
            match tokio::time::timeout(program.timeout, run.workflow(plan.index, arguments, 0))
                .await
            {
                Ok(outcome) => outcome,
                Err(_) => Err(Failure::timed_out(program)),
            };
        let mut called = run.conclude(tool, outcome);
        called.stats.upstream = Some(started.elapsed());
        called.result = self.auth.redact_result(called.result);
        called
    }

    /// Checks `arguments` against the workflow tool's inputSchema.
    fn check_workflow_arguments(
        &self,
        tool: &Tool,
        arguments: &mut Map<String, Value>,
    ) -> Result<(), Vec<String>> {
        let Some(index) = self.catalog.index_of(&tool.name) else {
            return Err(vec![format!(
                "tool \"{}\" is not in the catalog",
                tool.name
            )]);
        };
        let Some(compiled) = self.validators.get(index, tool) else {
            return Ok(());
        };
        let violations = compiled.check_argument_map(arguments);
        match violations.is_empty() {
            true => Ok(()),
            false => Err(violations),
        }
    }

    /// Checks a workflow's outputs against the outputSchema its tool lists.
    fn check_workflow_outputs(&self, tool: &Tool, outputs: &Value) -> Result<(), String> {
        let Some(index) = self.catalog.index_of(&tool.name) else {
            return Ok(());
        };
        match self.validators.get(index, tool) {
            Some(compiled) => compiled.check_output(outputs),
            None => Ok(()),
        }
    }
}

impl Run<'_> {
    /// Runs workflow `index` with `inputs`, `depth` workflows deep: its dependencies first,
    /// then its steps; its outputs, or why it failed.
    fn workflow(
        &mut self,
        index: usize,
        inputs: Map<String, Value>,
        depth: usize,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send + '_>> {
        Box::pin(async move {
            let Some(Some(compiled)) = self.program.workflows.get(index) else {
                return Err(Failure::plain(format!(
                    "workflow #{index} of {} cannot run",
                    self.program.file
                )));
            };
            let workflow = &compiled.workflow;
            if depth > MAX_NESTING {
                return Err(Failure::plain(format!(
                    "workflow \"{}\" is nested more than {MAX_NESTING} deep",
                    workflow.id
                )));
            }
            for &dependency in &compiled.depends_on {
                let id = self.id_of(dependency);
                if !self.finished.contains_key(&id) {
                    self.workflow(dependency, inputs.clone(), depth + 1).await?;
                }
            }
            let mut frame = Frame {
                inputs,
                steps: HashMap::new(),
            };
            let outcome = self
                .steps(index, workflow, &compiled.steps, &mut frame, depth)
                .await;
            let outputs = match outcome {
                Ok(()) => self.outputs(workflow, &frame),
                Err(failure) => return Err(failure.within(workflow)),
            };
            self.finished.insert(
                workflow.id.clone(),
                Finished {
                    inputs: frame.inputs,
                    outputs: outputs.clone(),
                },
            );
            Ok(outputs)
        })
    }

    /// What expressions read at this point of the run: `frame`'s workflow, the workflows
    /// that ended, and the step's request and answer when there is one.
    fn scope<'s>(&'s self, frame: &'s Frame, exchanged: Option<&'s Exchanged>) -> Scope<'s> {
        Scope {
            frame,
            finished: &self.finished,
            exchanged,
        }
    }

    fn id_of(&self, index: usize) -> String {
        match self.program.workflows.get(index) {
            Some(Some(compiled)) => compiled.workflow.id.clone(),
            _ => String::new(),
        }
    }

    /// The workflow's outputs; one that does not resolve is left out (a `null` the
    /// upstream answered is kept).
    fn outputs(&self, workflow: &Workflow, frame: &Frame) -> Map<String, Value> {
        let scope = self.scope(frame, None);
        workflow
            .outputs
            .iter()
            .filter_map(|output| Some((output.name.clone(), output.value.render(&scope).ok()?)))
            .collect()
    }

    /// Runs the steps from the first until the last ends, an `end` action, or a failure.
    async fn steps(
        &mut self,
        index: usize,
        workflow: &Workflow,
        calls: &[StepCall],
        frame: &mut Frame,
        depth: usize,
    ) -> Result<(), Failure> {
        let mut at = 0;
        let mut retries = 0;
        while at < workflow.steps.len() {
            let step = &workflow.steps[at];
            let visit = match retries {
                0 => {
                    let count = self.visits.entry((index, at)).or_default();
                    *count += 1;
                    *count
                }
                _ => self.visits.get(&(index, at)).copied().unwrap_or(1),
            };
            self.tell(workflow, step);
            let exchanged = match &calls[at] {
                StepCall::Operation(operation) => {
                    let call = OperationCall {
                        tool: &operation.tool,
                        arguments: &operation.arguments,
                        body: operation.body.as_ref(),
                        idempotency: operation.idempotency.as_deref(),
                        visit,
                    };
                    self.operation(workflow, step, call, frame).await?
                }
                StepCall::Workflow { index, inputs } => {
                    self.nested(*index, inputs, frame, depth).await?
                }
            };
            let passed = self.passed(step, frame, &exchanged);
            let next = self.next(workflow, step, frame, &exchanged, passed, retries)?;
            self.keep_outputs(step, frame, &exchanged);
            match next {
                Next::Step(to) => {
                    at = to;
                    retries = 0;
                }
                Next::Retry(wait) => {
                    retries += 1;
                    tokio::time::sleep(wait).await;
                }
                Next::End => return Ok(()),
                Next::Workflow(target) => {
                    let inputs = frame.inputs.clone();
                    self.workflow(target, inputs, depth + 1).await?;
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Tells a client that asked for progress which step runs now.
    fn tell(&self, workflow: &Workflow, step: &Step) {
        if let Some(told) = &self.context.steps_told {
            let number = self.requests + 1;
            let _ = told.send((
                number,
                format!("workflow {}: step {}", workflow.id, step.id),
            ));
        }
    }

    /// Whether the step's success criteria hold (with none: it answered below 400).
    fn passed(&self, step: &Step, frame: &Frame, exchanged: &Exchanged) -> Result<(), Vec<String>> {
        let scope = self.scope(frame, Some(exchanged));
        if step.success_criteria.is_empty() {
            return match (exchanged.outputs.is_some(), exchanged.status) {
                (true, _) => Ok(()),
                (false, Some(status)) if status < 400 => Ok(()),
                _ => Err(vec!["the operation answered below 400".to_string()]),
            };
        }
        let failed: Vec<String> = step
            .success_criteria
            .iter()
            .filter(|criterion| !criterion.evaluate(&scope))
            .map(Criterion::describe)
            .collect();
        match failed.is_empty() {
            true => Ok(()),
            false => Err(failed),
        }
    }

    /// What follows a step: the first matching action of the step's, then the workflow's;
    /// else the next step after a success, the end of the workflow (failed) after a failure.
    fn next(
        &mut self,
        workflow: &Workflow,
        step: &Step,
        frame: &Frame,
        exchanged: &Exchanged,
        passed: Result<(), Vec<String>>,
        retries: u32,
    ) -> Result<Next, Failure> {
        let scope = self.scope(frame, Some(exchanged));
        let (own, shared) = match &passed {
            Ok(()) => (&step.on_success, &workflow.success_actions),
            Err(_) => (&step.on_failure, &workflow.failure_actions),
        };
        let chosen = own
            .iter()
            .chain(shared.iter())
            .find(|action| action.criteria.iter().all(|c| c.evaluate(&scope)));
        let failure = |failed: Vec<String>, why: String| {
            Failure::at_step(step, exchanged.status, failed, why)
        };
        match (chosen.map(|a| (a, &a.kind)), passed) {
            (None, Ok(())) => Ok(Next::Step(
                workflow.step_index(&step.id).map_or(usize::MAX, |i| i + 1),
            )),
            (None, Err(failed)) => Err(failure(failed, String::new())),
            (Some((_, ActionKind::End)), Ok(())) => Ok(Next::End),
            (Some((action, ActionKind::End)), Err(failed)) => Err(failure(
                failed,
                format!("action \"{}\" ended the workflow", action.name),
            )),
            (Some((action, ActionKind::GotoStep(id))), _) => match workflow.step_index(id) {
                Some(to) => Ok(Next::Step(to)),
                None => Err(failure(
                    Vec::new(),
                    format!("action \"{}\" goes to no step", action.name),
                )),
            },
            (Some((action, ActionKind::GotoWorkflow(id))), _) => match self.program.index_of(id) {
                Some(to) => Ok(Next::Workflow(to)),
                None => Err(failure(
                    Vec::new(),
                    format!("action \"{}\" goes to no workflow", action.name),
                )),
            },
            (Some((action, ActionKind::Retry { after, limit })), Err(failed)) => self
                .retry(action, (*after, *limit), exchanged, retries)
                .map_err(|why| failure(failed, why)),
            // A retry among success actions is refused when the document is read.
            (Some((_, ActionKind::Retry { .. })), Ok(())) => Ok(Next::End),
        }
    }

    /// Another try of the step, after the wait `Retry-After` (else `retryAfter`) asks, or
    /// why not.
    fn retry(
        &self,
        action: &Action,
        (after, limit): (Option<f64>, u32),
        exchanged: &Exchanged,
        retries: u32,
    ) -> Result<Next, String> {
        let limit = limit.min(MAX_RETRY_LIMIT);
        if retries >= limit {
            return Err(format!(
                "action \"{}\" retried it {retries} time{} (retryLimit {limit})",
                action.name,
                if retries == 1 { "" } else { "s" }
            ));
        }
        let asked = exchanged
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("retry-after"))
            .and_then(|(_, value)| value.trim().parse::<f64>().ok())
            .or(after)
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
            .unwrap_or(0.0);
        Ok(Next::Retry(
            Duration::from_secs_f64(asked).min(MAX_RETRY_WAIT),
        ))
    }

    /// Keeps the step's outputs (one that does not resolve is left out).
    fn keep_outputs(&self, step: &Step, frame: &mut Frame, exchanged: &Exchanged) {
        let scope = self.scope(frame, Some(exchanged));
        let outputs: Map<String, Value> = step
            .outputs
            .iter()
            .filter_map(|output| Some((output.name.clone(), output.value.render(&scope).ok()?)))
            .collect();
        frame.steps.insert(step.id.clone(), outputs);
    }

    /// A step that runs workflow `index` with the step's parameters as its inputs.
    async fn nested(
        &mut self,
        index: usize,
        inputs: &[(String, crate::spec::arazzo::template::Template)],
        frame: &Frame,
        depth: usize,
    ) -> Result<Exchanged, Failure> {
        let scope = self.scope(frame, None);
        let given: Map<String, Value> = inputs
            .iter()
            .filter_map(|(name, value)| Some((name.clone(), value.render(&scope).ok()?)))
            .collect();
        let outputs = self.workflow(index, given, depth + 1).await?;
        let mut exchanged = self.last_answer.clone().unwrap_or_default();
        exchanged.outputs = Some(outputs);
        Ok(exchanged)
    }
}

/// What a step sends: its tool's arguments, the values of its path parameters
/// (`$request.path.x`), and headers its operation does not declare.
#[derive(Default)]
struct Built {
    arguments: Map<String, Value>,
    path: Map<String, Value>,
    headers: Vec<(String, String)>,
}

/// `value` as the scalar type `expects` when that loses nothing: a number or boolean as
/// its text for a string, a numeric text as a number, `"true"`/`"false"` as a boolean.
fn coerce(value: Value, expects: Option<&str>) -> Value {
    match (expects, &value) {
        (Some("string"), Value::Number(_) | Value::Bool(_)) => Value::String(value.to_string()),
        (Some("integer"), Value::String(text)) => {
            text.trim().parse::<i64>().map(Value::from).unwrap_or(value)
        }
        (Some("number"), Value::String(text)) => {
            serde_json::from_str::<serde_json::Number>(text.trim())
                .map(Value::Number)
                .unwrap_or(value)
        }
        (Some("boolean"), Value::String(text)) => match text.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => value,
        },
        _ => value,
    }
}

/// What comes after a step.
enum Next {
    Step(usize),
    Retry(Duration),
    End,
    Workflow(usize),
}

/// An operation step about to be sent.
struct OperationCall<'c> {
    tool: &'c str,
    arguments: &'c [ArgumentSlot],
    body: Option<&'c BodySlot>,
    idempotency: Option<&'c str>,
    /// How often the run reached this step.
    visit: u32,
}

impl Run<'_> {
    /// Sends one operation step: its arguments made from expressions, then the tool's own
    /// pipeline; the request and answer as expressions read them.
    async fn operation(
        &mut self,
        workflow: &Workflow,
        step: &Step,
        call: OperationCall<'_>,
        frame: &Frame,
    ) -> Result<Exchanged, Failure> {
        if self.requests >= self.program.max_steps {
            return Err(Failure::at_step(
                step,
                None,
                Vec::new(),
                format!(
                    "the run stopped after {} requests: max_steps of [workflows.{}] ({}) was \
                     reached before this step",
                    self.requests, self.program.set, self.program.max_steps
                ),
            ));
        }
        self.requests += 1;
        let Built {
            arguments,
            path,
            headers,
        } = self.arguments(workflow, step, &call, frame)?;
        let recorder = SentRecorder::with_answers();
        let mut context = self.context.clone();
        context.sent = Some(recorder.clone());
        context.workflow_step = true;
        context.steps_told = None;
        // The workflow reads its steps' results.
        context.structured_from_text = false;
        let ready = match self.dispatcher.prepare(call.tool, arguments) {
            Ok(Prepared::Ready(mut ready)) => {
                for (name, value) in headers {
                    ready.set_header(&name, value);
                }
                ready
            }
            Ok(Prepared::Refused(called)) => {
                return Err(Failure::at_step(
                    step,
                    None,
                    Vec::new(),
                    called.result.joined_text(),
                ));
            }
            Err(unknown) => {
                return Err(Failure::at_step(
                    step,
                    None,
                    Vec::new(),
                    unknown.to_string(),
                ));
            }
        };
        let sending = self
            .dispatcher
            .send_as(ready, &context, super::LongRunning::Wait);
        let called = match step.timeout_ms {
            Some(ms) => match tokio::time::timeout(Duration::from_millis(ms), sending).await {
                Ok(called) => called,
                Err(_) => {
                    return Err(Failure::at_step(
                        step,
                        None,
                        Vec::new(),
                        format!("the step's timeout ({ms} ms) ran out"),
                    ));
                }
            },
            None => sending.await,
        };
        Ok(self.exchanged(step, &called, &recorder, path))
    }

    /// What the step sent and got, for expressions; the request joins the run's list.
    fn exchanged(
        &mut self,
        step: &Step,
        called: &Called,
        recorder: &SentRecorder,
        path: Map<String, Value>,
    ) -> Exchanged {
        let (sent, _) = recorder.take();
        let response = recorder.take_response();
        self.bytes.0 += called.stats.bytes_sent;
        self.bytes.1 += called.stats.bytes_received;
        self.last = Some(called.stats.clone());
        let mut exchanged = Exchanged {
            path,
            status: called.stats.status,
            ..Exchanged::default()
        };
        if let Some(sent) = sent {
            exchanged.url = sent.url.clone();
            exchanged.method = sent.method.clone();
            exchanged.request_body = sent
                .body
                .as_ref()
                .and_then(|(body, _)| scope::body_value(body, None));
            exchanged.request_headers = sent.headers.clone();
            self.sent.push(SentLine {
                step: step.id.clone(),
                method: sent.method,
                url: self.dispatcher.redact(&sent.url),
                status: called.stats.status,
                note: match called.stats.status {
                    Some(_) => String::new(),
                    None => called.result.joined_text(),
                },
            });
        }
        if let Some(response) = response {
            exchanged.body = scope::body_value(&response.body, response.content_type.as_deref());
            exchanged.headers = response.headers;
        }
        self.last_answer = Some(exchanged.clone());
        exchanged
    }

    /// The tool arguments a step sends, and the values of its path parameters.
    fn arguments(
        &self,
        workflow: &Workflow,
        step: &Step,
        call: &OperationCall<'_>,
        frame: &Frame,
    ) -> Result<Built, Failure> {
        let scope = self.scope(frame, None);
        let mut built = Built::default();
        for slot in call.arguments {
            let Ok(value) = slot.value.render(&scope) else {
                continue;
            };
            if value.is_null() {
                continue;
            }
            let value = coerce(value, slot.expects.as_deref());
            if slot.place == In::Path {
                built.path.insert(slot.name.clone(), value.clone());
            }
            match &slot.argument {
                Some(argument) => {
                    built.arguments.insert(argument.clone(), value);
                }
                None => built.headers.push((
                    slot.name.clone(),
                    crate::spec::arazzo::template::text_of(&value),
                )),
            }
        }
        let arguments = &mut built.arguments;
        if let Some(body) = call.body {
            self.body(step, body, &scope, arguments)?;
        }
        if let (Some(argument), Some(key)) = (call.idempotency, &self.key) {
            let visit = call.visit.to_string();
            let parts: [&[u8]; 5] = [
                key.as_bytes(),
                self.tool.as_bytes(),
                workflow.id.as_bytes(),
                step.id.as_bytes(),
                visit.as_bytes(),
            ];
            let derived = crate::digest::hex(&crate::digest::sha256_parts(&parts));
            arguments.insert(
                argument.to_string(),
                Value::String(derived[..32].to_string()),
            );
        }
        Ok(built)
    }

    /// The step's body (payload, then replacements) as the tool's body arguments.
    fn body(
        &self,
        step: &Step,
        slot: &BodySlot,
        scope: &Scope<'_>,
        arguments: &mut Map<String, Value>,
    ) -> Result<(), Failure> {
        let refuse = |why: String| Failure::at_step(step, None, Vec::new(), why);
        let mut payload = match &slot.body.payload {
            Some(template) => scope::render_lenient(template, scope).unwrap_or(Value::Null),
            None => Value::Object(Map::new()),
        };
        for (target, value) in &slot.body.replacements {
            let value = value
                .render(scope)
                .map_err(|unresolved| refuse(format!("replacement {target}: {unresolved}")))?;
            replace(&mut payload, target, value)
                .map_err(|why| refuse(format!("replacement {target}: {why}")))?;
        }
        if let Value::String(text) = &payload {
            payload = written_body(text, &slot.media_type).map_err(refuse)?;
        }
        if let Some(whole) = &slot.whole {
            arguments.insert(whole.clone(), payload);
            return Ok(());
        }
        let Value::Object(fields) = payload else {
            return Err(refuse(format!(
                "the request body is {}, and this operation's body is an object",
                crate::json::type_name(&payload)
            )));
        };
        for (wire, value) in fields {
            match slot.fields.iter().find(|(name, _)| *name == wire) {
                Some((_, argument)) => {
                    arguments.insert(argument.clone(), value);
                }
                None => {
                    return Err(refuse(format!(
                        "the request body has property \"{wire}\", which the operation's body \
                         does not have"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// A body written as text, read as the fields it carries: a form body as its encoded
/// text (`grant_type=code&code=…`), a JSON body as JSON text (with `{$…}` pieces filled).
fn written_body(text: &str, media_type: &str) -> Result<Value, String> {
    let media = media_type.to_ascii_lowercase();
    if media.contains("x-www-form-urlencoded") {
        return Ok(Value::Object(
            url::form_urlencoded::parse(text.trim().as_bytes())
                .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
                .collect(),
        ));
    }
    if media.contains("json") {
        return serde_json::from_str(text).map_err(|error| {
            format!(
                "the request body is text that is not JSON once its {{$…}} pieces are filled \
                 in ({error}), and the operation takes {media_type}"
            )
        });
    }
    Ok(Value::String(text.to_string()))
}

/// Sets the place `target` (a JSON Pointer) names in `document` to `value`; the parent
/// must exist.
fn replace(document: &mut Value, target: &str, value: Value) -> Result<(), String> {
    if target.is_empty() {
        *document = value;
        return Ok(());
    }
    let (parent, last) = target.rsplit_once('/').ok_or("not a JSON Pointer")?;
    let last = crate::json::unescape_token(last);
    match document.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(last.into_owned(), value);
            Ok(())
        }
        Some(Value::Array(items)) => {
            let index = match last.as_ref() {
                "-" => items.len(),
                number => number.parse::<usize>().map_err(|_| "not an array index")?,
            };
            match index {
                i if i < items.len() => items[i] = value,
                i if i == items.len() => items.push(value),
                _ => return Err("the array is shorter".into()),
            }
            Ok(())
        }
        _ => Err("the payload has no such place".into()),
    }
}

impl Run<'_> {
    /// The call's result: the outputs, or the failure told.
    fn conclude(&mut self, tool: &Tool, outcome: Outcome) -> Called {
        let api = tool.route.api.as_str();
        let mut stats = CallStats::new(api, CallOutcome::Ok);
        if let Some(last) = &self.last {
            stats.status = last.status;
            stats.media_type = Some("application/json".into());
        }
        stats.attempts = self.requests;
        stats.bytes_sent = self.bytes.0;
        stats.bytes_received = self.bytes.1;
        let result = match outcome {
            Ok(outputs) => {
                let outputs = Value::Object(outputs);
                match self.dispatcher.check_workflow_outputs(tool, &outputs) {
                    Ok(()) => ending::success(outputs),
                    Err(violations) => {
                        stats.outcome = CallOutcome::ToolError;
                        ending::mismatch(tool, outputs, &violations, &self.sent)
                    }
                }
            }
            Err(failure) => {
                stats.outcome = match self.last.as_ref().map(|s| s.outcome) {
                    Some(CallOutcome::Ok) | None => CallOutcome::ToolError,
                    Some(outcome) => outcome,
                };
                failure.result(&tool.name, &self.sent)
            }
        };
        Called {
            result,
            stats,
            operation: None,
        }
    }
}
