//! A call of an Arazzo workflow's tool, past what every call shares ([`super::call`]): a
//! repeat under the same idempotency key is answered from the store (the whole run's
//! result, keyed by caller, tool and key, fingerprinted by the arguments); a workflow
//! that reaches a step needing confirmation (or whose `[workflows]` table asks for it)
//! asks once, before its first request, showing the plan; then the dispatcher runs it
//! ([`crate::upstream::Dispatcher::run_workflow`]).

use serde_json::{Map, Value};

use super::ServerState;
use super::call::{Refusal, Step};
use super::confirm::{Asker, Verdict};
use crate::catalog::Tool;
use crate::catalog::workflow::WorkflowPlan;
use crate::spec::Method;
use crate::upstream::idempotency::{self, Before, Keyed};
use crate::upstream::{CallContext, Called, Preview};

impl ServerState {
    /// Runs workflow tool `tool` for a client.
    pub(super) async fn call_workflow(
        &self,
        snapshot: &super::Snapshot,
        (tool, plan): (&Tool, &WorkflowPlan),
        arguments: Map<String, Value>,
        incoming: &CallContext,
        asker: Asker,
    ) -> Result<Step, Refusal> {
        let dispatcher = &snapshot.dispatcher;
        let caller = incoming.pseudonym();
        let arguments_text = serde_json::to_string(&arguments).unwrap_or_default();
        let given = plan
            .idempotency
            .as_ref()
            .and_then(|name| arguments.get(name))
            .and_then(Value::as_str);
        let held = match given {
            Some(given) => {
                let keyed = Keyed {
                    tool,
                    given,
                    fingerprint: fingerprint(plan, &arguments),
                };
                let record = (caller, dispatcher.result_budget_bytes(tool));
                match idempotency::before_keyed(&self.store, keyed, record, self.idempotency_ttl)
                    .await
                {
                    Before::Send(held) => held,
                    Before::Answer(called) => return Ok(Step::Done(called)),
                }
            }
            None => None,
        };
        if tool.route.needs_confirmation() {
            let plan_text = plan_text(plan);
            let url = format!(
                "workflow {}",
                tool.origin.operation_id.as_deref().unwrap_or("")
            );
            let preview = Preview {
                api: &tool.route.api,
                tool: &tool.name,
                method: Method::Post,
                url: &url,
                headers: Vec::new(),
                body: Some(("application/json", arguments_text.as_bytes())),
                plan: Some(&plan_text),
            };
            let redact = |text: &str| dispatcher.redact(text);
            match self
                .confirmer
                .confirm(&preview, asker, caller, &redact)
                .await
            {
                Verdict::Proceed => {}
                Verdict::Refused(text) => {
                    return Ok(Step::Done(Called::unconfirmed(&tool.route.api, text)));
                }
                Verdict::Ask(question) => return Ok(Step::Ask(question)),
                Verdict::Invalid(error) => return Err(Refusal::State(error)),
            }
        }
        let called = dispatcher
            .run_workflow(tool, plan, arguments, incoming)
            .await;
        if let Some(held) = held {
            held.answered(&called).await;
        }
        Ok(Step::Done(called))
    }
}

/// What a repeat under the same key must match: the workflow and its arguments.
fn fingerprint(plan: &WorkflowPlan, arguments: &Map<String, Value>) -> String {
    let text = serde_json::to_string(arguments).unwrap_or_default();
    let index = plan.index.to_string();
    let parts: [&[u8]; 3] = [
        plan.program.file.as_bytes(),
        index.as_bytes(),
        text.as_bytes(),
    ];
    crate::digest::hex(&crate::digest::sha256_parts(&parts))
}

/// The plan a human confirming a workflow is shown: every request it may send.
fn plan_text(plan: &WorkflowPlan) -> String {
    let mut text = format!(
        "It may send these requests, in this order, at most {} in all:",
        plan.program.max_steps
    );
    for (i, step) in plan.reachable.iter().enumerate() {
        text.push_str(&format!("\n{}. {step}", i + 1));
    }
    text
}
