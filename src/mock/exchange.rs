//! The mock upstream behind the dispatcher's [`Exchange`] seam: a built request goes to
//! [`respond::answer`] instead of the network, and the answer comes back as if read from
//! the wire (no retries, no credentials, no time spent on the wire). [`plug`] puts it in
//! front of every API whose tools the catalog answers from the spec.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use jsonschema::Validator;

use super::respond;
use crate::catalog::{Catalog, Tool};
use crate::upstream::Dispatcher;
use crate::upstream::exchange::{BoxFuture, Exchange, Exchanged, Failure, Outgoing, Received};

/// A compiled request body schema ([`respond::body_schema`]); `None` when the tool sends
/// no JSON body to check.
type BodySlot = OnceLock<Option<Result<Validator, String>>>;

/// Answers the calls of the tools that carry a [`crate::catalog::MockAnswer`].
pub struct MockUpstream {
    /// Per tool name: its body validator, compiled on first use.
    bodies: HashMap<String, BodySlot>,
}

impl MockUpstream {
    /// The mock upstream for the mock tools of `catalog`.
    pub fn new(catalog: &Catalog) -> MockUpstream {
        MockUpstream {
            bodies: catalog
                .tools()
                .iter()
                .filter(|tool| tool.route.mock.is_some())
                .map(|tool| (tool.name.clone(), OnceLock::new()))
                .collect(),
        }
    }

    fn answer(&self, outgoing: Outgoing<'_>) -> Exchanged {
        let Outgoing { tool, request, .. } = outgoing;
        let Some(answer) = &tool.route.mock else {
            return Exchanged::unsent(Failure::Unreachable(format!(
                "the mock upstream has no answer for {}",
                tool.origin.operation
            )));
        };
        let uncached;
        let body = match self.bodies.get(&tool.name) {
            Some(slot) => slot.get_or_init(|| compile(tool)).as_ref(),
            None => {
                uncached = compile(tool);
                uncached.as_ref()
            }
        };
        let mocked = respond::answer(tool, answer, &request, body);
        let reason = reqwest::StatusCode::from_u16(mocked.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("")
            .to_string();
        // The mock never redirects, so no note compares origins.
        let origin = String::new();
        Exchanged {
            answer: Ok(Box::new(Received {
                status: mocked.status,
                reason,
                content_type: mocked.content_type,
                wire: mocked.body.len() as u64,
                body: mocked.body,
                omitted: 0,
                undecodable: None,
                location: None,
                origin,
                retry_after: None,
                operation: None,
                result_location: None,
                link: None,
                validators: Default::default(),
            })),
            attempts: 0,
            upstream: None,
            bytes_sent: request.body.as_ref().map_or(0, |b| b.len() as u64),
        }
    }
}

impl Exchange for MockUpstream {
    fn exchange<'a>(&'a self, outgoing: Outgoing<'a>) -> BoxFuture<'a, Exchanged> {
        let exchanged = self.answer(outgoing);
        Box::pin(std::future::ready(exchanged))
    }
}

/// The compiled schema the mock checks a JSON request body of `tool` against.
fn compile(tool: &Tool) -> Option<Result<Validator, String>> {
    respond::body_schema(tool)
        .map(|schema| jsonschema::validator_for(&schema).map_err(|e| e.to_string()))
}

/// `dispatcher` with the mock upstream answering every API that has tools in mock mode;
/// the other APIs keep the HTTP client.
pub fn plug(dispatcher: Dispatcher) -> Dispatcher {
    let catalog = Arc::clone(dispatcher.catalog());
    let mut apis: Vec<&str> = catalog
        .tools()
        .iter()
        .filter(|tool| tool.route.mock.is_some())
        .map(|tool| tool.route.api.as_str())
        .collect();
    if apis.is_empty() {
        return dispatcher;
    }
    apis.sort_unstable();
    apis.dedup();
    let mock: Arc<dyn Exchange> = Arc::new(MockUpstream::new(&catalog));
    apis.into_iter().fold(dispatcher, |dispatcher, api| {
        dispatcher.with_exchange(api, Arc::clone(&mock))
    })
}
