//! What the console (`crate::http::console`) asks of the MCP layer: one tool as a client of
//! a given protocol revision and `clientInfo.name` lists it, and a call tried from the page,
//! run through the call pipeline every `tools/call` takes ([`ServerState::call`]), with the
//! request it sent, how the upstream answered and what it told its log kept on the side.
//!
//! A tried call is a 2026-07-28 client's call as far as asking goes: a tool that needs
//! confirmation answers with the question and a sealed state first (nothing sent), and the
//! page calls again with the state and the human's answer, which the confirmer checks
//! exactly as it checks a client's.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, ProtocolVersion, ServerResult};
use serde_json::Value;

use super::ServerState;
use super::call::CallRequest;
use super::confirm::{Asker, QUESTION};
use super::listed::Page;
use crate::upstream::{Answered, CallContext, CallLog, Sent, SentRecorder, Severity};

/// Log lines a tried call keeps.
const MAX_LOG_LINES: usize = 100;

/// The protocol revision `revision` names, when it is one restmcp serves.
pub fn revision(revision: &str) -> Option<ProtocolVersion> {
    super::revision::named(revision)
}

/// One tool as a client lists it ([`ServerState::definition`]).
pub struct Definition {
    /// The tool object as `tools/list` carries it for the client (or, for a tool its API
    /// offers through search, as `search_tools` describes it).
    pub tool: Value,
    /// Whether it is in `tools/list` itself.
    pub listed: bool,
    /// The schema dialect the client gets.
    pub dialect: &'static str,
}

/// A call tried from the console.
pub struct TryCall<'a> {
    /// The tool's catalog name.
    pub name: &'a str,
    pub arguments: serde_json::Map<String, Value>,
    pub client: Option<&'a str>,
    pub version: ProtocolVersion,
    /// The second round of a confirmation: the sealed state and the human's answer
    /// (`accept`, `decline`, `cancel`).
    pub answer: Option<(String, String)>,
}

/// What a tried call did.
pub struct Tried {
    /// The result as the client's revision receives it (`result` of the JSON-RPC answer).
    pub result: Value,
    /// The confirmation question to put to the human, when the tool needs it and this was
    /// the first round: its text, and the state to send back with the answer. (A question
    /// for missing arguments, 2026-07-28's, stays in `result` as a client receives it.)
    pub ask: Option<(String, String)>,
    /// The request sent (values as sent: [`Sent::redacted`] before showing it).
    pub sent: Option<Sent>,
    pub answered: Option<Answered>,
    /// What the call told its log, in order.
    pub log: Vec<(Severity, String)>,
    pub duration: Duration,
}

impl ServerState {
    /// Tool `name` (its catalog name) as a client calling itself `client` lists it on
    /// protocol `version`; `None` when there is no such tool.
    pub fn definition(
        &self,
        name: &str,
        client: Option<&str>,
        version: &ProtocolVersion,
    ) -> Option<Definition> {
        let snapshot = self.current();
        let tool = snapshot.catalog().get(name)?;
        let view = snapshot.view(client, Some(version));
        let dialect = snapshot
            .presentation
            .dialect(view.rule, Some(&tool.route.api));
        let listed = view
            .tools
            .iter()
            .find(|listed| view.catalog_name(&listed.name) == name);
        let definition = match listed {
            Some(listed) => {
                let page = Page {
                    tools: std::slice::from_ref(listed),
                    next_cursor: None,
                };
                let list: Value = serde_json::from_slice(&page.to_json(version)).ok()?;
                list.get("tools")?.get(0)?.clone()
            }
            None => view.describe(tool, dialect),
        };
        Some(Definition {
            tool: definition,
            listed: listed.is_some(),
            dialect: dialect.as_str(),
        })
    }

    /// Runs a call tried from the console (see the module documentation) for the caller
    /// `incoming` names. `Err` is the protocol error a client would get (an unknown tool,
    /// a state that does not verify).
    pub async fn try_call(
        &self,
        tried: TryCall<'_>,
        mut incoming: CallContext,
    ) -> Result<Tried, String> {
        let recorder = SentRecorder::default();
        incoming.sent = Some(recorder.clone());
        let log = Arc::new(Mutex::new(Vec::new()));
        let told = log.clone();
        incoming.log = Some(CallLog::new(move |severity, text| {
            let mut lines = told.lock().unwrap_or_else(|p| p.into_inner());
            if lines.len() < MAX_LOG_LINES {
                lines.push((severity, text));
            }
        }));
        let (state, responses) = match tried.answer {
            Some((state, answer)) => {
                let responses = serde_json::from_value(serde_json::json!({
                    QUESTION: {"action": answer}
                }))
                .map_err(|e| format!("the answer is not an elicitation result: {e}"))?;
                (Some(state), Some(responses))
            }
            None => (None, None),
        };
        let request = CallRequest {
            name: tried.name,
            arguments: tried.arguments,
            client: tried.client,
            version: Some(&tried.version),
            incoming,
            budget: None,
            asker: Asker::Rounds {
                responses,
                state,
                can_elicit: true,
            },
            tasks: false,
        };
        let started = Instant::now();
        let response = self
            .call(request, None, None)
            .await
            .map_err(|error| error.message.to_string())?
            .response;
        let duration = started.elapsed();
        let ask = question(&response);
        let result = serde_json::to_value(super::revision::finish(
            ServerResult::from(response),
            &tried.version,
        ))
        .map_err(|e| e.to_string())?;
        let (sent, answered) = recorder.take();
        let log = std::mem::take(&mut *log.lock().unwrap_or_else(|p| p.into_inner()));
        Ok(Tried {
            result,
            ask,
            sent,
            answered,
            log,
            duration,
        })
    }
}

/// The confirmation question of an `input_required` answer and its state.
fn question(response: &CallToolResponse) -> Option<(String, String)> {
    let CallToolResponse::InputRequired(required) = response else {
        return None;
    };
    let requests = serde_json::to_value(required.input_requests.as_ref()?).ok()?;
    // Asking for arguments the model left out is not a confirmation: the page shows that
    // `input_required` result as a client receives it.
    let message = requests
        .get(QUESTION)?
        .pointer("/params/message")?
        .as_str()?
        .to_string();
    Some((message, required.request_state.clone()?))
}
