//! The HTTP layer in front of rmcp's Streamable HTTP service, for what the transport
//! specification asks and rmcp does differently:
//! - JSON-RPC batches, which only protocol revision 2025-03-26 allows and rmcp rejects: a POST
//!   whose body is an array is split into single requests and their responses gathered into
//!   one JSON array;
//! - plain JSON answers: in session mode rmcp answers every POST with an SSE stream, but a
//!   request that will not stream progress gets its response as `application/json`
//!   (SSE only when the call streams progress);
//! - a session DELETE is answered 200 rather than 202 (the Python SDK expects 200 or 204);
//! - with `server.require_accept` off, a request whose `Accept` lacks JSON or SSE is served
//!   instead of refused with 406;
//! - a body that is not JSON, or not a JSON-RPC 2.0 message as MCP defines one (version
//!   `"2.0"`, an id that is a string or an integer, a method name, object params), is
//!   answered 400 with a JSON-RPC error, -32700 or -32600, carrying the id when it could be
//!   read (rmcp says 415 in plain text); a request whose params are not an object (or whose
//!   `tools/list` cursor is not a string) gets -32602.
//!
//! It is also where each JSON-RPC message is first read, so it counts them for the metrics,
//! takes an [`Admission`] ticket for each request (429 past the client's limit) and keeps
//! it until the response is sent, and counts open SSE streams. It bounds what a client
//! can hold: a body must arrive within `server.body_read_timeout_seconds` (else 408), a
//! long-lived stream needs a slot of [`Streams`] (else 503), and each session's activity
//! and opening goes through the [`SessionTable`] (a new `initialize` at the cap closes the
//! session idle the longest, or gets 503).
//!
//! It marks each request it forwards with the [`Framing`] its answer will have (plain JSON
//! or the SDK's SSE stream), so the handler knows which message budget applies.
//!
//! Everything else passes through untouched.
//!
//! A request goes through small steps, each one function: `route` marks the session
//! active and picks by HTTP method (`end_session` for DELETE, `open_stream` for GET,
//! `post`); `post` reads the body within its bounds and hands a batch to `batch` (which
//! `answer_members` answers one by one) or a single message to `single`, which runs
//! `read_single` (parse and check), `admit` (the ticket), `reserve_session` (room for an
//! `initialize`), `direct_path` (the handshake notes and the direct answers), [`framing`],
//! the SDK, then `as_json` and `opened`. A session's `tools/call` of the plainest shape that
//! the direct path answers goes through `plain_call` instead: the same steps, read from a
//! typed parse of the body rather than a tree of it (about 6,000 instructions less a call).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tower::{Service, ServiceExt as _};

use super::McpServer;
use super::ServerState;
use super::admission::{Admission, ClientId, Ticket};
use super::direct::DirectPath;
use super::jsonrpc::{self, check_message, failure_message};
use super::session::{Activity, Full, Reservation, SessionTable};
use super::sizes::Framing;
use super::streams::Streams;
use crate::json::member;
use crate::telemetry::metrics::Metrics;

/// rmcp's Streamable HTTP service, which the front wraps.
pub(super) type Sdk = StreamableHttpService<McpServer, LocalSessionManager>;

/// Wraps the MCP service (see the module documentation).
#[derive(Clone)]
pub struct SdkFront {
    sdk: Sdk,
    steps: Arc<FrontState>,
}

/// The front's state, what the steps of one request (its methods) read: the settings and
/// the shared bounds.
struct FrontState {
    /// The tool set, for the scope check of an OAuth caller's `tools/call`.
    shared: Arc<ServerState>,
    max_body: usize,
    json_response: bool,
    require_accept: bool,
    admission: Arc<Admission>,
    metrics: Arc<Metrics>,
    /// Answers `tools/call` and `tools/list` without the SDK, when they want plain JSON.
    direct: Option<Arc<DirectPath>>,
    /// The sessions open, with sessions on.
    sessions: Option<Arc<SessionTable>>,
    streams: Arc<Streams>,
    body_timeout: std::time::Duration,
}

impl SdkFront {
    /// The front of `sdk`'s service; `shared` gives the tool set (for the scope check)
    /// and the metrics.
    pub(super) fn new(
        sdk: Sdk,
        shared: Arc<ServerState>,
        settings: &crate::config::ServerSettings,
        admission: Arc<Admission>,
        direct: Option<Arc<DirectPath>>,
        sessions: Option<Arc<SessionTable>>,
        streams: Arc<Streams>,
    ) -> Self {
        let steps = FrontState {
            metrics: shared.metrics().clone(),
            shared,
            max_body: settings.max_request_bytes,
            json_response: settings.json_response,
            require_accept: settings.require_accept,
            admission,
            direct,
            sessions,
            streams,
            body_timeout: std::time::Duration::from_secs(settings.body_read_timeout_seconds),
        };
        SdkFront {
            sdk,
            steps: Arc::new(steps),
        }
    }
}

/// The client a request counts against: the authenticated caller (an OAuth caller's or a
/// static token's pseudonym), else the peer address. A session is not a client: one
/// client's sessions share its budgets.
pub(super) fn client_of<B>(request: &Request<B>) -> ClientId {
    if let Some(client) = request.extensions().get::<ClientId>() {
        return client.clone();
    }
    match request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    {
        Some(info) => ClientId::of_address(info.0.ip()),
        None => ClientId("unknown".into()),
    }
}

/// The method a message is counted under, and the protocol version it speaks.
fn count_message(metrics: &Metrics, message: &Value, header_version: Option<&str>) {
    let method = member(message, "method")
        .and_then(Value::as_str)
        .unwrap_or("(response)");
    let version = header_version
        .or_else(|| {
            jsonrpc::member(
                message,
                &["params", "_meta", "io.modelcontextprotocol/protocolVersion"],
            )
            .and_then(Value::as_str)
        })
        .or_else(|| {
            (method == "initialize")
                .then(|| jsonrpc::member(message, &["params", "protocolVersion"])?.as_str())
                .flatten()
        });
    metrics.record_request(method, version);
}

/// True for a message that is a request whose answer the client waits for (and so holds
/// an admission ticket), as opposed to a notification, a response, or a subscription
/// stream that stays open for the session's life.
fn takes_ticket(message: &Value) -> bool {
    member(message, "id").is_some()
        && member(message, "method")
            .and_then(Value::as_str)
            .is_some_and(|method| method != "subscriptions/listen")
}

/// 429 with a JSON-RPC error: the client has too many requests in flight.
fn too_many(id: Option<&Value>, limit: usize) -> Response<Body> {
    let message = format!(
        "too many requests in flight for this client (at most {limit}); retry when one has finished"
    );
    refusal(StatusCode::TOO_MANY_REQUESTS, "1", id, &message)
}

/// A JSON-RPC error (-32000) answered with `status` and `Retry-After: retry_after` seconds.
fn refusal(
    status: StatusCode,
    retry_after: &'static str,
    id: Option<&Value>,
    message: &str,
) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": {
        "code": -32000,
        "message": message,
    }});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    response
}

fn is_stream(response: &Response<Body>) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"))
}

/// Keeps `guard` alive until the response body has been sent (or dropped) when the body is
/// a stream; a complete body lets it go at once.
fn hold<G: Send + 'static>(response: Response<Body>, guard: G) -> Response<Body> {
    use futures_util::StreamExt as _;
    if !is_stream(&response) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _ = &guard;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// What the transport specification has clients accept: JSON and SSE for a POST, SSE for
/// the GET stream.
fn lenient_accept(request: &mut Request<Body>) {
    let wanted = if request.method() == Method::GET {
        "text/event-stream"
    } else {
        "application/json, text/event-stream"
    };
    let given = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let satisfied = wanted.split(", ").all(|t| given.contains(t));
    if !satisfied {
        request
            .headers_mut()
            .insert(header::ACCEPT, HeaderValue::from_static(wanted));
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

/// The answer to a request refused before it reaches the SDK (boxed: a response is large).
type Refused = Box<Response<Body>>;

/// What a request holds until its answer is sent: its admission ticket, its session's
/// activity (its id in flight there), and the room for the session an `initialize` opens.
struct Held {
    ticket: Option<Ticket>,
    activity: Option<Activity>,
    reservation: Option<Reservation>,
}

/// What [`FrontState::through_sdk`] needs of the message it forwards.
struct Asked<'m> {
    message: Option<&'m Value>,
    method: &'m str,
    plain_json: bool,
    has_session: bool,
}

impl Service<Request<Body>> for SdkFront {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request<Body>) -> BoxFuture {
        let (sdk, steps) = (self.sdk.clone(), self.steps.clone());
        if !steps.require_accept {
            lenient_accept(&mut request);
        }
        let client = client_of(&request);
        crate::alloc::pinned(move || async move { Ok(steps.route(sdk, request, client).await) })
    }
}

/// The header `name` as text, when it is.
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether the request's Content-Type says its body is JSON.
fn says_json(parts: &Parts) -> bool {
    header_text(&parts.headers, header::CONTENT_TYPE.as_str())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// True for a body that is a JSON array: a batch.
fn is_batch(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// The message's method (empty for a response or an unread body).
fn method_of(message: Option<&Value>) -> &str {
    message
        .and_then(|m| member(m, "method"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The id of the answer to wait for: none for a notification, a response, or a
/// subscription, whose answer is the stream itself.
fn answer_id(message: Option<&Value>) -> Option<Value> {
    message
        .filter(|m| {
            member(m, "method")
                .and_then(Value::as_str)
                .is_some_and(|method| method != "subscriptions/listen")
        })
        .and_then(|m| member(m, "id"))
        .cloned()
}

/// How the answer to a single message travels: plain JSON when the client takes it and
/// nothing streams (the same test as the one that reads an SSE answer into JSON);
/// without a session, rmcp itself answers JSON unless a notification goes first.
fn framing(has_id: bool, plain_json: bool, has_session: bool, json_response: bool) -> Framing {
    if has_id && plain_json {
        Framing::Json
    } else if !has_session && json_response {
        Framing::JsonUnlessNotified
    } else {
        Framing::Sse
    }
}

impl FrontState {
    /// Routes a request by its HTTP method, after refusing one that names a session
    /// another client opened: DELETE ends a session, POST carries messages, anything else
    /// (GET) opens a stream.
    async fn route(&self, sdk: Sdk, request: Request<Body>, client: ClientId) -> Response<Body> {
        let session = header_text(request.headers(), "mcp-session-id").map(str::to_string);
        if let (Some(table), Some(session)) = (&self.sessions, &session)
            && table.owned_by_other(session, &client)
        {
            self.metrics.record_refusal("foreign_session");
            tracing::warn!("refused a request naming a session another client opened");
            let mut response = Response::new(Body::from("Not Found: no such session"));
            *response.status_mut() = StatusCode::NOT_FOUND;
            return response;
        }
        match *request.method() {
            Method::DELETE => self.end_session(sdk, request, session.as_deref()).await,
            Method::POST => self.post(sdk, request, client, session).await,
            _ => {
                self.open_stream(sdk, request, &client, session.as_deref())
                    .await
            }
        }
    }

    /// A session's DELETE: forgotten here, ended by the SDK.
    async fn end_session(
        &self,
        sdk: Sdk,
        request: Request<Body>,
        session: Option<&str>,
    ) -> Response<Body> {
        if let (Some(table), Some(session)) = (&self.sessions, session) {
            table.closed(session);
        }
        // The spec names no success status for ending a session; rmcp says 202, and
        // the Python SDK accepts only 200 or 204 (it logs a failure otherwise).
        let mut response = forward(sdk, request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        response
    }

    /// A GET (the session's event stream) or another method the SDK answers: a stream
    /// takes a slot of [`Streams`] and keeps its session active while open.
    async fn open_stream(
        &self,
        sdk: Sdk,
        request: Request<Body>,
        client: &ClientId,
        session: Option<&str>,
    ) -> Response<Body> {
        let slot = if request.method() == Method::GET {
            match self.streams.open(client) {
                Ok(slot) => Some(slot),
                Err(why) => return self.streams.refusal(why),
            }
        } else {
            None
        };
        let activity = match (&self.sessions, session) {
            (Some(table), Some(session)) => table.stream(session),
            _ => None,
        };
        let response = forward(sdk, request).await;
        if is_stream(&response) {
            let open = self.metrics.stream_opened();
            return hold(response, (open, slot, activity));
        }
        response
    }

    /// A POST: its body read within the bounds, then a batch or a single message.
    async fn post(
        &self,
        sdk: Sdk,
        request: Request<Body>,
        client: ClientId,
        session: Option<String>,
    ) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body, self.max_body, self.body_timeout).await {
            Ok(bytes) => bytes,
            Err(refusal) => {
                self.metrics.record_refusal(refusal.reason());
                return refusal.response(self.body_timeout);
            }
        };
        if is_batch(&bytes) {
            return self.batch(sdk, parts, &bytes, client, session).await;
        }
        self.single(sdk, parts, bytes, client, session).await
    }

    /// A single message: read and checked, counted, admitted, answered directly or by
    /// the SDK ([`FrontState::through_sdk`]), and its answer framed as the client asked.
    async fn single(
        &self,
        sdk: Sdk,
        parts: Parts,
        bytes: Bytes,
        client: ClientId,
        session: Option<String>,
    ) -> Response<Body> {
        if let Some(answer) = self
            .plain_call(&parts, &bytes, &client, session.as_deref())
            .await
        {
            return answer;
        }
        let mut message = match self.read_single(&parts, &bytes) {
            Ok(message) => message,
            Err(refused) => return *refused,
        };
        let header_version = header_text(&parts.headers, "mcp-protocol-version");
        let mut ticket: Option<Ticket> = None;
        if let Some(message) = &message {
            count_message(&self.metrics, message, header_version);
            ticket = match self.admit(message, client.clone()) {
                Ok(ticket) => ticket,
                Err(refused) => return *refused,
            };
        }
        let activity = match self.in_session(session.as_deref(), message.as_ref()) {
            Ok(activity) => activity,
            Err(refused) => return *refused,
        };
        let method = method_of(message.as_ref()).to_string();
        if let (true, Some(table), Some(session)) =
            (method == "logging/setLevel", &self.sessions, &session)
        {
            table.logging(session);
        }
        let plain_json = self.plain_json(&parts, message.as_ref(), &method, session.as_deref());
        if method == "tools/call"
            && let Some(refused) = self.scope_refusal(&parts, message.as_ref())
        {
            return refused;
        }
        let reservation = match self
            .reserve_session(session.as_deref(), &method, message.as_ref(), &client)
            .await
        {
            Ok(reservation) => reservation,
            Err(refused) => return *refused,
        };
        if let Some(answer) = self
            .direct_path(
                &parts,
                message.as_mut(),
                &method,
                session.as_deref(),
                plain_json,
            )
            .await
        {
            return hold(answer, (ticket, activity));
        }
        let held = Held {
            ticket,
            activity,
            reservation,
        };
        let asked = Asked {
            message: message.as_ref(),
            method: &method,
            plain_json,
            has_session: session.is_some(),
        };
        self.through_sdk(sdk, parts, bytes, &client, asked, held)
            .await
    }

    /// Whether the answer to a message can be plain JSON: the client takes it, and it
    /// will not stream progress or a question to the user (a session's call that may ask
    /// for confirmation streams: `elicitation/create` travels on the call's SSE stream
    /// before the answer).
    fn plain_json(
        &self,
        parts: &Parts,
        message: Option<&Value>,
        method: &str,
        session: Option<&str>,
    ) -> bool {
        let has_session = session.is_some();
        // A session that asked for log messages hears from its calls as they run.
        let logs = method == "tools/call"
            && matches!((&self.sessions, session), (Some(table), Some(id)) if table.logs(id));
        let streams_progress = message
            .and_then(|m| jsonrpc::member(m, &["params", "_meta"]))
            .and_then(Value::as_object)
            .is_some_and(|meta| {
                crate::json::field(meta, "progressToken").is_some()
                    || crate::json::field(meta, super::request::META_LOG_LEVEL).is_some()
            });
        let asks_user = has_session
            && method == "tools/call"
            && message.is_some_and(|m| self.shared.current().may_ask_user(m));
        self.takes_json(parts) && !streams_progress && !asks_user && !logs
    }

    /// Whether the client takes a plain JSON answer, and restmcp gives one.
    fn takes_json(&self, parts: &Parts) -> bool {
        self.json_response
            && header_text(&parts.headers, header::ACCEPT.as_str())
                .is_some_and(|accept| accept.contains("application/json"))
    }

    /// A session's `tools/call` of the plainest shape ([`super::request::plain_call`]),
    /// answered on the direct path without reading the message into a tree: the tree's
    /// steps for such a message, in its order (counted, admitted, marked in flight, the
    /// scope check, answered). `None`, before any of them, leaves the message to the tree:
    /// another shape, no session, or a call the direct path would not take (one that may
    /// ask its user, a session that hears log messages, a client that wants a stream).
    async fn plain_call(
        &self,
        parts: &Parts,
        bytes: &[u8],
        client: &ClientId,
        session: Option<&str>,
    ) -> Option<Response<Body>> {
        let (Some(direct), Some(table), Some(session)) = (&self.direct, &self.sessions, session)
        else {
            return None;
        };
        if !says_json(parts) || !self.takes_json(parts) || table.logs(session) {
            return None;
        }
        let call = super::request::plain_call(bytes)?;
        if self.shared.current().may_ask(&call.name, &call.arguments) {
            return None;
        }
        let answerer = direct.session_client(&parts.headers, session).await?;
        self.metrics.record_request(
            "tools/call",
            header_text(&parts.headers, "mcp-protocol-version"),
        );
        let id = match &call.id {
            rmcp::model::RequestId::Number(n) => Value::from(*n),
            rmcp::model::RequestId::String(s) => Value::String(s.to_string()),
        };
        let ticket = match self.admission.admit(client.clone()) {
            Some(ticket) => ticket,
            None => {
                self.metrics.record_refusal("too_many_in_flight");
                return Some(too_many(Some(&id), self.admission.limit()));
            }
        };
        let activity = match self.in_flight(Some(session), Some(&id)) {
            Ok(activity) => activity,
            Err(refused) => return Some(*refused),
        };
        if let Some(refused) = self.scope_refusal_of(parts, &call.name) {
            return Some(refused);
        }
        let answer = direct.answer_call(parts, call, answerer).await;
        Some(hold(answer, (Some(ticket), activity)))
    }

    /// Marks a request of `session` in flight (its id one of the session's in flight
    /// until answered); a request whose id is already in flight there is refused at once.
    fn in_session(
        &self,
        session: Option<&str>,
        message: Option<&Value>,
    ) -> Result<Option<Activity>, Refused> {
        // A request's id; a response or a notification has none to collide.
        let id = message
            .filter(|m| member(m, "method").is_some())
            .and_then(|m| member(m, "id"));
        self.in_flight(session, id)
    }

    /// [`FrontState::in_session`] for a request with this `id`.
    fn in_flight(
        &self,
        session: Option<&str>,
        id: Option<&Value>,
    ) -> Result<Option<Activity>, Refused> {
        let (Some(table), Some(session)) = (&self.sessions, session) else {
            return Ok(None);
        };
        table.request(session, id).map_err(|_duplicate| {
            let text = format!(
                "request id {} is already in flight in this session; ids must be unique \
                 among a session's requests in flight",
                id.map(Value::to_string).unwrap_or_default()
            );
            Box::new(rpc_failure(-32600, &text, id.cloned()))
        })
    }

    /// A message the SDK answers: an answer that may be a stream takes a slot of
    /// [`Streams`] first, and ends at the request's deadline; a plain JSON answer is read
    /// out of the SDK's stream, within the same deadline.
    async fn through_sdk(
        &self,
        sdk: Sdk,
        mut parts: Parts,
        bytes: Bytes,
        client: &ClientId,
        asked: Asked<'_>,
        held: Held,
    ) -> Response<Body> {
        let listening = asked.method == "subscriptions/listen";
        let id = answer_id(asked.message);
        let framing = framing(
            id.is_some(),
            asked.plain_json,
            asked.has_session,
            self.json_response,
        );
        // Anything but plain JSON may come back as a stream the client holds. Refused, a
        // request is told so with a JSON-RPC error for its id, which every SDK shows.
        let slot = if listening || (id.is_some() && framing != Framing::Json) {
            match self.streams.open(client) {
                Ok(slot) => Some(slot),
                Err(why) => {
                    let (status, retry, text) = self.streams.explain(why);
                    return refusal(
                        status,
                        retry,
                        asked.message.and_then(|m| member(m, "id")),
                        &text,
                    );
                }
            }
        } else {
            None
        };
        parts.extensions.insert(framing);
        let authenticated = parts.extensions.get::<ClientId>().is_some();
        let response = forward(sdk, Request::from_parts(parts, Body::from(bytes))).await;
        let Held {
            ticket,
            activity,
            reservation,
        } = held;
        if let (Some(table), Some(reservation)) = (&self.sessions, reservation)
            && let Some(opened) = header_text(response.headers(), "mcp-session-id")
        {
            table.opened(opened, reservation, authenticated);
        }
        let tool = asked
            .message
            .and_then(|m| jsonrpc::member(m, &["params", "name"]))
            .and_then(Value::as_str);
        let deadline = self.shared.answer_deadline(asked.method, tool);
        let response = match &id {
            Some(id) if asked.plain_json => as_json(response, id, deadline).await,
            _ => response,
        };
        let response = match (&self.direct, asked.message) {
            (Some(direct), Some(message)) if asked.method == "initialize" => {
                opened(direct, message, response).await
            }
            _ => response,
        };
        if !is_stream(&response) {
            return hold(response, (ticket, activity));
        }
        let open = self.metrics.stream_opened();
        match id {
            // A subscription lasts as long as its session.
            None => hold(response, (open, slot, activity)),
            Some(id) => {
                let ended = self.metrics.clone();
                let response = until(response, deadline, id, move || {
                    ended.record_refusal("answer_deadline");
                });
                hold(response, (open, slot, ticket, activity))
            }
        }
    }

    /// The message of a single POST: parsed and checked when it says it is JSON (a
    /// failure is answered here); else read only to count it, since the SDK refuses it
    /// (415) without a JSON Content-Type.
    fn read_single(&self, parts: &Parts, bytes: &[u8]) -> Result<Option<Value>, Refused> {
        if !says_json(parts) {
            return Ok(serde_json::from_slice::<Value>(bytes).ok());
        }
        let parsed = match serde_json::from_slice::<Value>(bytes) {
            Ok(message) => message,
            Err(e) => {
                self.metrics.record_refusal("malformed");
                return Err(Box::new(rpc_failure(
                    -32700,
                    &format!("Parse error: {e}"),
                    None,
                )));
            }
        };
        if let Err((code, problem, id)) = check_message(&parsed) {
            if code != -32602 {
                self.metrics.record_refusal("malformed");
            }
            return Err(Box::new(rpc_failure(code, &problem, id)));
        }
        Ok(Some(parsed))
    }

    /// The admission ticket a request holds until its answer is sent (none for other
    /// messages); 429 past the client's limit.
    fn admit(&self, message: &Value, client: ClientId) -> Result<Option<Ticket>, Refused> {
        if !takes_ticket(message) {
            return Ok(None);
        }
        match self.admission.admit(client) {
            Some(ticket) => Ok(Some(ticket)),
            None => {
                self.metrics.record_refusal("too_many_in_flight");
                Err(Box::new(too_many(
                    member(message, "id"),
                    self.admission.limit(),
                )))
            }
        }
    }

    /// Room in the session table for the session a new `initialize` opens; 503 when the
    /// table is full and no session is idle.
    async fn reserve_session(
        &self,
        session: Option<&str>,
        method: &str,
        message: Option<&Value>,
        client: &ClientId,
    ) -> Result<Option<Reservation>, Refused> {
        match (&self.sessions, session) {
            (Some(table), None) if method == "initialize" => match table.reserve(client).await {
                Ok(room) => Ok(Some(room)),
                Err(full) => Err(Box::new(too_many_sessions(
                    message.and_then(|m| member(m, "id")),
                    full,
                ))),
            },
            _ => Ok(None),
        }
    }

    /// 403 for an OAuth caller's `tools/call` of a tool its token's scopes do not open,
    /// marked with the scopes to ask for (the guard writes the challenge). A name this
    /// cannot resolve (a client's shortened alias) is left to the call, which refuses it
    /// with an error result.
    fn scope_refusal(&self, parts: &Parts, message: Option<&Value>) -> Option<Response<Body>> {
        let name = jsonrpc::member(message?, &["params", "name"])?.as_str()?;
        self.scope_refusal_of(parts, name)
    }

    /// [`FrontState::scope_refusal`] for a call of tool `name`.
    fn scope_refusal_of(&self, parts: &Parts, name: &str) -> Option<Response<Body>> {
        let user = parts.extensions.get::<Arc<crate::identity::Caller>>()?;
        let snapshot = self.shared.current();
        snapshot.catalog().get(name)?;
        let missing = snapshot.scopes().missing(name, &user.scopes)?;
        self.metrics.record_refusal("insufficient_scope");
        let mut response = Response::new(Body::from(format!(
            "Forbidden: the access token does not grant the scope(s) {} that tool \"{name}\" needs",
            missing.join(" ")
        )));
        *response.status_mut() = StatusCode::FORBIDDEN;
        response
            .extensions_mut()
            .insert(crate::identity::InsufficientScope { scopes: missing });
        Some(response)
    }

    /// What the direct path takes of a single message: the handshake notifications it
    /// notes, and the requests it answers itself when they want plain JSON.
    async fn direct_path(
        &self,
        parts: &Parts,
        message: Option<&mut Value>,
        method: &str,
        session: Option<&str>,
        plain_json: bool,
    ) -> Option<Response<Body>> {
        let (Some(direct), Some(message)) = (&self.direct, message) else {
            return None;
        };
        match (method, session) {
            ("notifications/initialized", Some(session)) => direct.initialized(session),
            ("notifications/cancelled", Some(session)) => direct.cancel(session, message),
            _ if plain_json => return direct.try_answer(parts, message).await,
            _ => {}
        }
        None
    }

    /// A batch (protocol revision 2025-03-26 only): split into single requests for the
    /// SDK, their answers gathered into one JSON array.
    async fn batch(
        &self,
        sdk: Sdk,
        parts: Parts,
        bytes: &[u8],
        client: ClientId,
        session: Option<String>,
    ) -> Response<Body> {
        let header_version = header_text(&parts.headers, "mcp-protocol-version");
        if header_version.is_some_and(|v| v != "2025-03-26") {
            return invalid_request("JSON-RPC batches are not supported after protocol 2025-03-26");
        }
        let messages = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Array(messages)) => messages,
            Ok(_) => return invalid_request("the batch is not a JSON array"),
            Err(e) => {
                self.metrics.record_refusal("malformed");
                return rpc_failure(-32700, &format!("Parse error: {e}"), None);
            }
        };
        if messages.is_empty() {
            return invalid_request("an empty batch is not a valid request");
        }
        for message in &messages {
            count_message(&self.metrics, message, header_version);
        }
        // One ticket for the whole batch.
        let _ticket = if messages.iter().any(takes_ticket) {
            match self.admission.admit(client) {
                Some(ticket) => Some(ticket),
                None => {
                    self.metrics.record_refusal("too_many_in_flight");
                    return too_many(None, self.admission.limit());
                }
            }
        } else {
            None
        };
        if messages
            .iter()
            .any(|m| member(m, "method") == Some(&json!("initialize")))
        {
            return invalid_request("initialize must not be part of a batch");
        }
        // Each member's id is in flight in the session until the whole batch is answered.
        let mut activities = Vec::new();
        for message in &messages {
            match self.in_session(session.as_deref(), Some(message)) {
                Ok(activity) => activities.push(activity),
                Err(refused) => return *refused,
            }
        }
        let deadline = self.shared.answer_deadline("", None);
        match tokio::time::timeout(deadline, answer_members(sdk, &parts, messages)).await {
            Ok(response) => response,
            Err(_elapsed) => {
                self.metrics.record_refusal("answer_deadline");
                rpc_failure(
                    -32603,
                    &format!(
                        "the batch was not answered within {} s, its deadline",
                        deadline.as_secs()
                    ),
                    None,
                )
            }
        }
    }
}

/// Each member of a batch answered on its own (JSON-RPC 2.0, "Batch"), the answers
/// gathered into one JSON array (202 when there are none).
async fn answer_members(sdk: Sdk, parts: &Parts, messages: Vec<Value>) -> Response<Body> {
    let mut responses = Vec::new();
    for message in messages {
        if let Err((code, problem, id)) = check_message(&message) {
            responses.push(failure_message(code, &problem, id));
            continue;
        }
        let mut single = Request::builder()
            .method(Method::POST)
            .uri(parts.uri.clone())
            .body(Body::from(message.to_string()))
            .unwrap_or_default();
        *single.headers_mut() = parts.headers.clone();
        single.headers_mut().remove(header::CONTENT_LENGTH);
        *single.extensions_mut() = parts.extensions.clone();
        // Gathered into one JSON array.
        single.extensions_mut().insert(Framing::Json);
        let response = forward(sdk.clone(), single).await;
        let status = response.status();
        if status == StatusCode::ACCEPTED {
            continue;
        }
        if !status.is_success() {
            return response;
        }
        let Ok(body) = axum::body::to_bytes(response.into_body(), usize::MAX).await else {
            continue;
        };
        responses.extend(messages_in(&body));
    }
    if responses.is_empty() {
        return plain(StatusCode::ACCEPTED, "");
    }
    let mut response = Response::new(Body::from(Value::Array(responses).to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Why a request body was not read.
pub(super) enum BodyRefusal {
    TooLarge,
    TooSlow,
}

impl BodyRefusal {
    pub(super) fn reason(&self) -> &'static str {
        match self {
            BodyRefusal::TooLarge => "too_large",
            BodyRefusal::TooSlow => "body_timeout",
        }
    }

    /// 413, or 408 closing the connection (the rest of the body is not waited for).
    pub(super) fn response(&self, timeout: std::time::Duration) -> Response<Body> {
        match self {
            BodyRefusal::TooLarge => plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large"),
            BodyRefusal::TooSlow => {
                let text = format!(
                    "Request Timeout: the body did not arrive within {} s \
                     (server.body_read_timeout_seconds)",
                    timeout.as_secs()
                );
                let mut response = Response::new(Body::from(text));
                *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                response
            }
        }
    }
}

/// A whole request body, at most `max` bytes, arrived within `timeout`.
pub(super) async fn read_body(
    body: Body,
    max: usize,
    timeout: std::time::Duration,
) -> Result<Bytes, BodyRefusal> {
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(BodyRefusal::TooLarge),
        Err(_elapsed) => Err(BodyRefusal::TooSlow),
    }
}

/// An `initialize` at a session cap with no session to close: 503 at the server's, 429 at
/// the client's own.
fn too_many_sessions(id: Option<&Value>, full: Full) -> Response<Body> {
    match full {
        Full::Table => refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "5",
            id,
            "too many sessions open, each with a request in flight (server.max_sessions); retry later",
        ),
        Full::Client => refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "1",
            id,
            "this client holds as many sessions as it may, each with a request in flight \
             (server.max_sessions_per_client); end one (DELETE) or retry later",
        ),
    }
}

/// Tells `direct` about the session an `initialize` answered with `response` opened.
async fn opened(direct: &DirectPath, request: &Value, response: Response<Body>) -> Response<Body> {
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let Some(session) = session.filter(|_| !is_stream(&response)) else {
        return response;
    };
    let (parts, body) = response.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    direct.opened(&session, request, &body);
    Response::from_parts(parts, Body::from(body))
}

/// The SDK's answer to `request`.
async fn forward(sdk: Sdk, request: Request<Body>) -> Response<Body> {
    match sdk.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// An SSE answer to one request, as the plain JSON response it carries: read until the
/// message with the request's `id` arrives, within `deadline` (else an error for `id`).
/// Other answers are returned as they are.
async fn as_json(response: Response<Body>, id: &Value, deadline: Duration) -> Response<Body> {
    match tokio::time::timeout(deadline, read_answer(response, id)).await {
        Ok(response) => response,
        Err(_elapsed) => json_answer(&deadline_error(id, deadline)),
    }
}

/// The error that ends an answer at its deadline.
fn deadline_error(id: &Value, deadline: Duration) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32603,
        "message": format!(
            "restmcp ended this request's answer at its deadline ({} s): the request did not \
             finish in time",
            deadline.as_secs()
        ),
    }})
}

fn json_answer(message: &Value) -> Response<Body> {
    let mut response = Response::new(Body::from(message.to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An SSE answer that ends at `deadline`: if the stream is still open then, an event
/// carrying an error for request `id` goes out last (and `expired` is told), so the
/// client is answered and the connection freed. Any other answer is returned as it is.
fn until(
    response: Response<Body>,
    deadline: Duration,
    id: Value,
    expired: impl FnOnce() + Send + 'static,
) -> Response<Body> {
    use futures_util::StreamExt as _;
    let (parts, body) = response.into_parts();
    let end = tokio::time::Instant::now() + deadline;
    let events = body.into_data_stream();
    let stream = futures_util::stream::unfold(
        (Some(events), Some((id, expired))),
        move |(events, last)| async move {
            let mut events = events?;
            match tokio::time::timeout_at(end, events.next()).await {
                Ok(Some(chunk)) => Some((chunk, (Some(events), last))),
                Ok(None) => None,
                Err(_elapsed) => {
                    let (id, expired) = last?;
                    expired();
                    tracing::warn!("an SSE answer reached its deadline and was ended");
                    let event = format!("data: {}\n\n", deadline_error(&id, deadline));
                    Some((Ok(Bytes::from(event)), (None, None)))
                }
            }
        },
    );
    Response::from_parts(parts, Body::from_stream(stream))
}

/// [`as_json`] without its deadline.
async fn read_answer(response: Response<Body>, id: &Value) -> Response<Body> {
    use futures_util::StreamExt as _;
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !is_stream || !response.status().is_success() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut buffer: Vec<u8> = Vec::new();
    while let Some(Ok(chunk)) = stream.next().await {
        buffer.extend(chunk.iter().filter(|b| **b != b'\r'));
        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = buffer.drain(..end + 2).collect();
            let answer = messages_in(&event).into_iter().find(|m| {
                member(m, "id") == Some(id)
                    && (member(m, "result").is_some() || member(m, "error").is_some())
            });
            if let Some(answer) = answer {
                parts.headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                parts.headers.remove(header::CONTENT_LENGTH);
                parts.headers.remove(header::CACHE_CONTROL);
                return Response::from_parts(parts, Body::from(answer.to_string()));
            }
        }
    }
    json_answer(&json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32603, "message": "the server ended the response stream without an answer"
    }}))
}

/// The JSON-RPC messages of a response body: plain JSON, or the `data:` lines of SSE.
fn messages_in(body: &[u8]) -> Vec<Value> {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        return vec![value];
    }
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter(|message| member(message, "id").is_some())
        .collect()
}

/// A JSON-RPC error. Input that is not a JSON-RPC message is refused with 400 (Streamable
/// HTTP: input the server cannot accept gets an HTTP error status, and the body may be a
/// JSON-RPC error); a request with bad params was accepted and is answered 200, as the
/// handlers answer their own -32602 errors.
fn rpc_failure(code: i64, message: &str, id: Option<Value>) -> Response<Body> {
    let mut response = Response::new(Body::from(failure_message(code, message, id).to_string()));
    if code != -32602 {
        *response.status_mut() = StatusCode::BAD_REQUEST;
    }
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn invalid_request(message: &str) -> Response<Body> {
    rpc_failure(-32600, message, None)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An SSE answer whose stream never ends (as the SDK's did for a repeated request id).
    fn endless() -> Response<Body> {
        let first = futures_util::stream::once(async {
            Ok::<Bytes, Infallible>(Bytes::from_static(
                b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
            ))
        });
        let body = Body::from_stream(futures_util::StreamExt::chain(
            first,
            futures_util::stream::pending(),
        ));
        let mut response = Response::new(body);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        response
    }

    #[tokio::test]
    async fn an_sse_answer_ends_at_its_deadline_with_an_error_for_its_request() {
        let told = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = told.clone();
        let response = until(endless(), Duration::from_millis(200), json!(7), move || {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let started = std::time::Instant::now();
        let body = tokio::time::timeout(
            Duration::from_secs(5),
            axum::body::to_bytes(response.into_body(), usize::MAX),
        )
        .await
        .expect("the stream ends")
        .expect("body");
        assert!(started.elapsed() >= Duration::from_millis(200));
        let text = String::from_utf8_lossy(&body);
        assert!(text.contains("notifications/progress"), "{text}");
        let last = messages_in(&body);
        assert_eq!(last.len(), 1, "{text}");
        assert_eq!(last[0]["id"], 7);
        assert!(
            last[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("deadline")),
            "{text}"
        );
        assert!(told.load(std::sync::atomic::Ordering::SeqCst));
        // A plain JSON answer that never comes is an error for its id too.
        let answer = as_json(endless(), &json!(8), Duration::from_millis(100)).await;
        let body = axum::body::to_bytes(answer.into_body(), usize::MAX)
            .await
            .expect("body");
        let message: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(message["id"], 8);
        assert!(message["error"].is_object(), "{message}");
    }
}
