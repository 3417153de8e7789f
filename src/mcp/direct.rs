//! Direct answers on Streamable HTTP: `tools/call` and `tools/list`, the requests an agent
//! makes over and over, answered in the connection's own task. Through the SDK each would
//! cross a channel to the session's worker, a spawned handler and back, come out as an SSE
//! stream, and then be read back into JSON by [`super::front`]; answered here, a call is
//! the upstream request plus the work of mapping it.
//!
//! The SDK still owns the protocol around them: `initialize`, notifications, the GET
//! stream, DELETE, and every request not taken here, which it answers as before. A request
//! is taken only when the SDK would have served it the same way:
//! - with `Mcp-Session-Id`: the session is open, has sent `notifications/initialized`,
//!   and `MCP-Protocol-Version` (when present) is the version it negotiated;
//! - without: a 2026-07-28 request whose `MCP-Protocol-Version`, `Mcp-Method` and
//!   `Mcp-Name` headers agree with its body, and whose `_meta` carries the protocol
//!   version, `clientInfo` and `clientCapabilities`;
//! - it wants plain JSON (no `progressToken`), and its id is a string or an integer.
//!
//! The answer is built from the SDK's own types, so it is the JSON the SDK would send.
//! `notifications/cancelled` for a request answered here cancels it, as the SDK would.
//!
//! What a session's handshake settled, and the calls running here, are kept in the one
//! session model ([`super::session`]): the front notes the handshake there, this path
//! reads it.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Response, header};
use rmcp::model::{ProtocolVersion, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ServerState;
use super::call::CallRequest;
use super::confirm::Asker;
use super::jsonrpc;
use super::request::{
    CallMeta, META_CAPABILITIES, META_CLIENT, META_VERSION, ToolCall, answer_bytes, error_bytes,
    request_id,
};
use super::session::{Handshake, SessionTable};
use crate::identity;

const NEWEST: &str = "2026-07-28";

/// The client a request is answered for: its session (none for a 2026-07-28 request
/// without one), name, revision and Tasks declaration.
pub(super) struct Client {
    session: Option<Arc<str>>,
    /// Its `clientInfo.name`.
    name: Option<String>,
    version: ProtocolVersion,
    /// The client declared the Tasks extension at `initialize` (a request may declare it in
    /// its own `_meta` too).
    tasks: bool,
}

/// The direct path (see the module documentation).
pub(super) struct DirectPath {
    shared: Arc<ServerState>,
    /// rmcp's sessions: a session answered here must still be open there.
    sessions: Arc<LocalSessionManager>,
    /// The sessions' handshakes and the calls running here (with sessions on).
    table: Option<Arc<SessionTable>>,
}

fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn json_response(body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The answer to request `id` with a result serialized before.
fn answer_serialized(id: &RequestId, result: &Bytes) -> Response<Body> {
    let id = serde_json::to_vec(id).unwrap_or_default();
    json_response(super::jsonrpc::success_bytes(&id, result))
}

impl DirectPath {
    pub(super) fn new(
        shared: Arc<ServerState>,
        sessions: Arc<LocalSessionManager>,
        table: Option<Arc<SessionTable>>,
    ) -> DirectPath {
        DirectPath {
            shared,
            sessions,
            table,
        }
    }

    /// Notes a session the SDK opened: `request` is the `initialize`, `response` its answer.
    pub(super) fn opened(&self, session: &str, request: &Value, response: &[u8]) {
        let Ok(answer) = serde_json::from_slice::<Value>(response) else {
            return;
        };
        if let (Some(table), Some(handshake)) = (&self.table, Handshake::settled(request, &answer))
        {
            table.settled(session, handshake);
        }
    }

    /// A session's `notifications/initialized`.
    pub(super) fn initialized(&self, session: &str) {
        if let Some(table) = &self.table {
            table.initialized(session);
        }
    }

    /// A session's `notifications/cancelled`: cancels the call when it is running here.
    pub(super) fn cancel(&self, session: &str, notification: &Value) {
        if let Some(table) = &self.table {
            table.running().cancel(session, notification);
        }
    }

    /// The client a request is answered for, when it is one to answer here.
    async fn client(
        &self,
        headers: &HeaderMap,
        message: &Value,
        (method, meta): (&str, &CallMeta),
    ) -> Option<Client> {
        let header_version = text(headers, "mcp-protocol-version");
        if let Some(session) = text(headers, "mcp-session-id") {
            if meta.names_revision || meta.wants_notifications {
                return None;
            }
            return self.session_client(headers, session).await;
        }
        let raw = jsonrpc::member(message, &["params", "_meta"])?.as_object()?;
        let agrees = header_version == Some(NEWEST)
            && raw.get(META_VERSION).and_then(Value::as_str) == Some(NEWEST)
            && text(headers, "mcp-method") == Some(method)
            && raw.get(META_CAPABILITIES).is_some_and(Value::is_object)
            && !meta.wants_notifications;
        let client = raw.get(META_CLIENT)?;
        let name = client.get("name")?.as_str()?;
        client.get("version")?.as_str()?;
        if !agrees {
            return None;
        }
        if method == "tools/call"
            && text(headers, "mcp-name")
                != jsonrpc::member(message, &["params", "name"]).and_then(Value::as_str)
        {
            return None;
        }
        Some(Client {
            session: None,
            name: Some(name.to_string()),
            version: ProtocolVersion::V_2026_07_28,
            tasks: false,
        })
    }

    /// The client of a request in `session`, when its requests are answered here: the
    /// session is open and initialized, does not hear log messages, and the request's
    /// `MCP-Protocol-Version` (when given) is the one it negotiated.
    pub(super) async fn session_client(
        &self,
        headers: &HeaderMap,
        session: &str,
    ) -> Option<Client> {
        let table = self.table.as_ref()?;
        let entry = table.handshake(session)?;
        if !entry.initialized
            || table.logs(session)
            || text(headers, "mcp-protocol-version").is_some_and(|v| v != entry.version.as_str())
        {
            return None;
        }
        let id = {
            let open = self.sessions.sessions.read().await;
            open.get_key_value(session)?.0.clone()
        };
        Some(Client {
            session: Some(id),
            name: entry.client,
            version: entry.version,
            tasks: entry.tasks,
        })
    }

    /// The answer to `message` when it is a request answered here; `None` leaves it to
    /// the SDK.
    pub(super) async fn try_answer(
        &self,
        parts: &Parts,
        message: &mut Value,
    ) -> Option<Response<Body>> {
        if crate::json::member(message, "jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return None;
        }
        let method = match crate::json::member(message, "method").and_then(Value::as_str)? {
            "tools/call" => "tools/call",
            "tools/list" => "tools/list",
            _ => return None,
        };
        let id = request_id(message)?;
        let meta = CallMeta::of(message);
        let client = self
            .client(&parts.headers, message, (method, &meta))
            .await?;
        match method {
            "tools/list" => self.list(
                message,
                id,
                client,
                parts.extensions.get::<Arc<identity::Caller>>().cloned(),
            ),
            _ => Some(self.call(parts, message, (id, meta), client).await),
        }
    }

    fn list(
        &self,
        message: &Value,
        id: RequestId,
        client: Client,
        user: Option<Arc<identity::Caller>>,
    ) -> Option<Response<Body>> {
        let cursor = match jsonrpc::member(message, &["params", "cursor"]) {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.as_str()),
            Some(_) => return None,
        };
        let snapshot = self.shared.current();
        let view = snapshot.listing_view(
            client.name.as_deref(),
            Some(&client.version),
            user.as_deref(),
        );
        match self.shared.list_result(&view, cursor, &client.version) {
            Ok(page) => Some(answer_serialized(&id, &page)),
            Err(e) => Some(json_response(error_bytes(id, e))),
        }
    }

    async fn call(
        &self,
        parts: &Parts,
        message: &mut Value,
        (id, meta): (RequestId, CallMeta),
        client: Client,
    ) -> Response<Body> {
        match ToolCall::take(message, id.clone(), meta) {
            Ok(call) => self.answer_call(parts, call, client).await,
            Err(e) => json_response(error_bytes(id, e)),
        }
    }

    /// The answer to `call`, read from its message, for `client`.
    pub(super) async fn answer_call(
        &self,
        parts: &Parts,
        mut call: ToolCall,
        client: Client,
    ) -> Response<Body> {
        let asker = match client.session {
            // A session's call that may ask its user (a confirmation, an argument) never
            // comes here: the front streams it through the SDK, whose peer can ask.
            Some(_) => Asker::Unable,
            None => match call.rounds() {
                Ok(asker) => asker,
                Err(e) => return json_response(error_bytes(call.id, e)),
            },
        };
        let mut incoming = self.shared.current().dispatcher.context_of(&parts.headers);
        incoming.caller = parts.extensions.get::<Arc<identity::Caller>>().cloned();
        incoming.principal = parts.extensions.get::<identity::Principal>().cloned();
        if let Some(trace) = call.meta.trace.take() {
            incoming.trace = Some(trace);
        }
        // `answer_bytes` writes a structured content left in the text from the text.
        incoming.structured_from_text = true;
        let key = client.session.as_ref().map(|session| {
            (
                session.clone(),
                serde_json::to_string(&call.id).unwrap_or_default(),
            )
        });
        let running = self.table.as_ref().map(|table| table.running());
        // Only a session's call can be cancelled (by its session and id).
        let cancelled = running.and(key.as_ref()).map(|_| CancellationToken::new());
        if let (Some(running), Some((session, id)), Some(cancelled)) = (running, &key, &cancelled) {
            running.started(session.clone(), id.clone(), cancelled.clone());
        }
        let request = CallRequest {
            name: &call.name,
            arguments: std::mem::take(&mut call.arguments),
            client: client.name.as_deref(),
            version: Some(&client.version),
            incoming,
            // A plain JSON answer: no client limits its size.
            budget: None,
            asker,
            tasks: client.tasks || call.meta.declares_tasks,
        };
        let outcome = self.shared.call(request, cancelled.as_ref(), None).await;
        if let (Some(running), Some((session, id))) = (running, key) {
            running.finished(session, id);
        }
        // A cancelled call is answered too: the POST still needs an answer, and "request
        // cancelled" says what happened.
        json_response(answer_bytes(call.id, outcome, &client.version))
    }
}
