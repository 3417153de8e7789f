//! The deprecated HTTP+SSE transport (protocol revision 2024-11-05), still spoken by older
//! clients. rmcp removed it in 0.11, so it is written here: `GET /sse` opens a session whose
//! first event (`endpoint`) names the URL to POST to; `POST /message?sessionId=…` answers
//! 202 and the response travels on the session's SSE stream.
//!
//! Each session runs an ordinary rmcp server over an in-memory pipe carrying
//! newline-delimited JSON, exactly as on stdio.
//!
//! The bounds of `/mcp` hold here too: a stream takes a slot of [`Streams`] (503 at
//! `server.max_sse_streams`, 429 at `server.max_streams_per_client`), a POSTed body must
//! arrive within `server.body_read_timeout_seconds` and `server.max_request_bytes`, and each
//! request takes an [`Admission`] ticket for its client (its token's caller, else its
//! address) that is returned when its response goes out on the stream (429 past
//! `server.max_in_flight_per_client`). A session a client opened with a token is that
//! client's: a request from anyone else naming it gets 404, and its calls are bound to that
//! caller (idempotency keys, confirmations, handles).
//!
//! Every message is one SSE event, and the official Python SDK ends the session on an event
//! over 1 MiB: results are cut to `server.max_message_bytes` ([`super::sizes`]), and an
//! answer still larger (a single tool too large for a `tools/list` page) goes out as a
//! JSON-RPC error for its request instead.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use futures_util::stream;
use rmcp::ServiceExt as _;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use tokio_util::sync::CancellationToken;

use super::admission::{Admission, ClientId, Ticket};
use super::jsonrpc;
use super::sizes::{Guarded, Transport, guard_line};
use super::streams::Streams;
use super::{McpServer, ServerState};
use crate::config::ServerSettings;
use crate::identity::Principal;

/// Open sessions: id → the channel feeding the session's server, and the tickets of its
/// requests not answered yet.
#[derive(Default)]
struct Sessions {
    open: Mutex<HashMap<String, Legacy>>,
}

struct Legacy {
    sender: mpsc::Sender<String>,
    pending: Pending,
    /// The client that opened it.
    owner: ClientId,
    /// Opened with a token: only that token's client may use it.
    authenticated: bool,
}

/// Tickets by the JSON text of the request id.
type Pending = Arc<Mutex<HashMap<String, Ticket>>>;

#[derive(Clone)]
struct SseState {
    shared: Arc<ServerState>,
    sessions: Arc<Sessions>,
    admission: Arc<Admission>,
    streams: Arc<Streams>,
    max_body: usize,
    body_timeout: std::time::Duration,
    stop: CancellationToken,
}

/// `GET /sse` and `POST /message`; `stop` ends every stream.
pub fn routes(
    shared: Arc<ServerState>,
    settings: &ServerSettings,
    admission: Arc<Admission>,
    streams: Arc<Streams>,
    stop: CancellationToken,
) -> Router {
    let state = SseState {
        shared,
        sessions: Arc::default(),
        admission,
        streams,
        max_body: settings.max_request_bytes,
        body_timeout: std::time::Duration::from_secs(settings.body_read_timeout_seconds),
        stop,
    };
    Router::new()
        .route("/sse", get(open))
        .route("/message", post(message))
        .with_state(state)
}

fn new_session_id() -> String {
    // Two SipHash outputs under the process's random keys: 128 unpredictable bits.
    let state = std::collections::hash_map::RandomState::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let a = state.hash_one(now);
    let b = std::collections::hash_map::RandomState::new().hash_one((now, a));
    format!("{a:016x}{b:016x}")
}

impl Sessions {
    fn knows(&self, id: &str) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }
}

/// Removes the session when its SSE stream is dropped (the client went away), which closes
/// the pipe and ends the session's server.
struct CloseOnDrop {
    sessions: Arc<Sessions>,
    id: String,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let mut open = self.sessions.open.lock().unwrap_or_else(|p| p.into_inner());
        open.remove(&self.id);
    }
}

/// The legacy transport carries no request context to the tool calls, so an OAuth caller
/// (whose scopes decide its tools and whose token is exchanged towards upstreams) is sent to
/// Streamable HTTP rather than served without those checks. Static tokens work here.
fn oauth_refusal(request: &axum::extract::Request) -> Option<Response> {
    request
        .extensions()
        .get::<std::sync::Arc<crate::identity::Caller>>()?;
    Some(
        (
            StatusCode::FORBIDDEN,
            "Forbidden: OAuth access tokens are served over Streamable HTTP (/mcp), not the legacy HTTP+SSE transport",
        )
            .into_response(),
    )
}

async fn open(State(state): State<SseState>, request: axum::extract::Request) -> Response {
    if let Some(refused) = oauth_refusal(&request) {
        return refused;
    }
    let client = super::front::client_of(&request);
    let principal = request.extensions().get::<Principal>().cloned();
    let slot = match state.streams.open(&client) {
        Ok(slot) => slot,
        Err(why) => return state.streams.refusal(why),
    };
    let id = new_session_id();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(theirs);
    let (our_read, mut our_write) = tokio::io::split(ours);
    let (to_server, mut incoming) = mpsc::channel::<String>(64);
    let pending = Pending::default();
    state
        .sessions
        .open
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(
            id.clone(),
            Legacy {
                sender: to_server,
                pending: pending.clone(),
                owner: client,
                authenticated: principal.is_some(),
            },
        );
    tokio::spawn(async move {
        while let Some(line) = incoming.recv().await {
            if our_write.write_all(line.as_bytes()).await.is_err()
                || our_write.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
    });
    let server =
        McpServer::new(state.shared.clone(), Transport::LegacySse).for_principal(principal);
    let budget = state.shared.limits().budget(Transport::LegacySse, None);
    tokio::spawn(async move {
        if let Ok(running) = server.serve((server_read, server_write)).await {
            let _ = running.waiting().await;
        }
    });
    let endpoint = Event::default()
        .event("endpoint")
        .data(format!("/message?sessionId={id}"));
    let guard = CloseOnDrop {
        sessions: state.sessions.clone(),
        id,
    };
    let lines = BufReader::new(our_read).lines();
    let messages = stream::unfold((lines, guard), move |(mut lines, guard)| {
        let pending = pending.clone();
        async move {
            loop {
                let line = match lines.next_line().await {
                    Ok(Some(line)) => line,
                    _ => return None,
                };
                let line = match budget.map(|budget| guard_line(line.as_bytes(), &budget)) {
                    None | Some(Guarded::Fits) => line,
                    Some(Guarded::Replaced(error)) => String::from_utf8_lossy(&error).into_owned(),
                    Some(Guarded::Dropped) => continue,
                };
                answered(&pending, &line);
                let event = Event::default().event("message").data(line);
                return Some((Ok::<Event, Infallible>(event), (lines, guard)));
            }
        }
    });
    let events = stream::once(async move { Ok::<Event, Infallible>(endpoint) })
        .chain(messages)
        .take_until(state.stop.cancelled_owned());
    let open = state.shared.metrics().stream_opened();
    let events = events.map(move |event| {
        let _ = (&open, &slot);
        event
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

#[derive(serde::Deserialize)]
struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// Returns the ticket of the request a line of the session's output answers.
fn answered(pending: &Pending, line: &str) {
    let mut pending = pending.lock().unwrap_or_else(|p| p.into_inner());
    if pending.is_empty() {
        return;
    }
    let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
        return;
    };
    if message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
        && let Some(id) = message.get("id")
    {
        pending.remove(&id.to_string());
    }
}

async fn message(
    State(state): State<SseState>,
    Query(query): Query<SessionQuery>,
    request: axum::extract::Request,
) -> Response {
    if let Some(refused) = oauth_refusal(&request) {
        return refused;
    }
    let client = super::front::client_of(&request);
    let found = state
        .sessions
        .open
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&query.session_id)
        .filter(|legacy| !legacy.authenticated || legacy.owner == client)
        .map(|legacy| (legacy.sender.clone(), legacy.pending.clone()));
    let Some((sender, pending)) = found else {
        if state.sessions.knows(&query.session_id) {
            state.shared.metrics().record_refusal("foreign_session");
            tracing::warn!("refused a request naming a session another client opened");
        }
        return (StatusCode::NOT_FOUND, "Not Found: no such session").into_response();
    };
    let body = match super::front::read_body(
        request.into_body(),
        state.max_body,
        state.body_timeout,
    )
    .await
    {
        Ok(body) => body,
        Err(refusal) => {
            state.shared.metrics().record_refusal(refusal.reason());
            return refusal.response(state.body_timeout);
        }
    };
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "Bad Request: the body is not JSON").into_response();
    };
    if let (Some(id), Some(_)) = (message.get("id"), message.get("method")) {
        let mut pending = pending.lock().unwrap_or_else(|p| p.into_inner());
        // A second request under an id still in flight would replace (and so release) the
        // first one's ticket: ids must be unique among a client's requests in flight.
        let id = id.to_string();
        if pending.contains_key(&id) {
            return (
                StatusCode::BAD_REQUEST,
                format!("Bad Request: request id {id} is already in flight on this session"),
            )
                .into_response();
        }
        let Some(ticket) = state.admission.admit(client) else {
            state.shared.metrics().record_refusal("too_many_in_flight");
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(axum::http::header::RETRY_AFTER, "1")],
                format!(
                    "Too Many Requests: too many requests in flight for this client (at most {}); \
                     retry when one has finished",
                    state.admission.limit()
                ),
            )
                .into_response();
        };
        pending.insert(id, ticket);
    }
    let method = message
        .get("method")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("(response)");
    let version = (method == "initialize")
        .then(|| jsonrpc::member(&message, &["params", "protocolVersion"])?.as_str())
        .flatten();
    state.shared.metrics().record_request(method, version);
    // One line per message: compact JSON has no newlines.
    match sender.send(message.to_string()).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(_) => (StatusCode::NOT_FOUND, "Not Found: the session has ended").into_response(),
    }
}
