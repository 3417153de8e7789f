//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout and nothing else on stdout
//! (logs go to stderr), for desktop clients that start restmcp as a child process.
//!
//! Each line is checked before the SDK sees it, because the SDK answers a line that is not
//! JSON or not a JSON-RPC message with an error that has no `id` member and drops a batch
//! without a word. Here a bad line gets the JSON-RPC error it should (-32700, -32600, or
//! -32602 for params of the wrong shape, with the id when it could be read), a line longer
//! than `server.max_request_bytes` is refused without being held in memory, and a batch is
//! accepted only from a client that negotiated 2025-03-26 (its members are then answered
//! one line each). Either way the session goes on.
//!
//! Once the handshake has passed through (noted as a [`Handshake`] of the one session
//! model, [`super::session`]), `tools/list` is answered here too, from the same
//! serialized pages as Streamable HTTP, instead of by the SDK, which rebuilds and
//! serializes every tool each time (GitHub's three pages reached a client in 25 ms instead
//! of about 50 ms).
//!
//! `tools/call` is answered here as well once the client has sent
//! `notifications/initialized`, when it wants no progress notifications and has not asked
//! for log messages (`logging/setLevel`): the call runs in a task of its own, as over
//! Streamable HTTP's direct path ([`super::direct`]), instead of crossing the SDK's pipe,
//! its parser, a spawned handler and its serializer and coming back through the pipe. The
//! answer is built from the SDK's own types, and `notifications/cancelled` for it cancels
//! it and drops its answer, as the SDK does. A `tools/call` line of the plainest shape
//! (no `_meta`, nothing but `name` and `arguments`) is read straight into the call
//! ([`super::request::plain_call`]), without a JSON tree of the whole message.
//!
//! Lines going out are kept within `server.max_stdio_message_bytes` (the official
//! TypeScript SDK closes the connection past 10 MiB): results are cut to fit
//! ([`super::sizes`]), and an answer still larger goes out as a JSON-RPC error instead.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::ProtocolVersion;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::call::{AnswerBudget, CallRequest};
use super::jsonrpc::{self, check_message, failure_message, success_bytes};
use super::request::{CallMeta, ToolCall, answer_bytes, plain_call, request_id};
use super::session::{Handshake, Negotiation, Running};
use super::sizes::{Budget, Guarded, Transport, guard_line};
use super::{McpServer, ServerState};
use crate::upstream::CallContext;

/// How long calls still running when input ends get to be answered (the SDK's own drain).
const DRAIN: Duration = Duration::from_secs(5);

/// Serves on stdin/stdout until stdin closes or the client disconnects.
pub async fn serve(shared: Arc<ServerState>, max_line: usize) -> Result<(), String> {
    serve_on(shared, tokio::io::stdin(), tokio::io::stdout(), max_line).await
}

/// Serves one client on `input` and `output`.
pub async fn serve_on<R, W>(
    shared: Arc<ServerState>,
    input: R,
    output: W,
    max_line: usize,
) -> Result<(), String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_sdk, sdk_input) = tokio::io::duplex(64 * 1024);
    let (sdk_output, from_sdk) = tokio::io::duplex(64 * 1024);
    let (lines, outgoing) = mpsc::channel::<Vec<u8>>(64);
    let handshake = Arc::new(Mutex::new(Negotiation::default()));
    let budget = shared.limits().budget(Transport::Stdio, None);
    let writer = tokio::spawn(write_lines(outgoing, output, budget));
    let copier = tokio::spawn(copy_lines(from_sdk, lines.clone(), handshake.clone()));
    let calls = Arc::new(Running::default());
    let filter = Filter {
        shared: shared.clone(),
        handshake,
        answers: lines,
        max_line,
        running: calls.clone(),
        session: Arc::from(""),
        logging: false,
        batches_allowed: false,
    };
    let reader = tokio::spawn(filter.read_lines(input, to_sdk));
    let running = McpServer::new(shared, Transport::Stdio)
        .serve((sdk_input, sdk_output))
        .await
        .map_err(|e| format!("stdio session failed to start: {e}"));
    let served = match running {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("stdio session ended with an error: {e}")),
        Err(e) => Err(e),
    };
    // The SDK's side is closed now: what it wrote is copied out, then the writer ends.
    reader.abort();
    // Calls still running here get what the SDK gives its own when input ends: up to
    // 5 s to be answered; past that they end unanswered.
    let drained = Instant::now() + DRAIN;
    while !calls.is_empty() && Instant::now() < drained {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    calls.cancel_all();
    let _ = copier.await;
    let _ = writer.await;
    served
}

/// The reading side: what it needs to answer a line itself.
struct Filter {
    shared: Arc<ServerState>,
    handshake: Arc<Mutex<Negotiation>>,
    /// Lines for the client (the writer task's queue).
    answers: mpsc::Sender<Vec<u8>>,
    max_line: usize,
    /// The `tools/call` requests answered here and still running (the one table of running
    /// calls, [`super::session::Running`], keyed by `session`).
    running: Arc<Running>,
    /// stdio's one session, as `running` knows it.
    session: Arc<str>,
    /// The client sent `logging/setLevel`: its calls go to the SDK, which reports each
    /// one with `notifications/message`.
    logging: bool,
    /// The client negotiated 2025-03-26, the one revision that allows batches.
    batches_allowed: bool,
}

impl Filter {
    /// Reads the client's lines, passes well-formed messages to the SDK and answers the rest.
    async fn read_lines<R, S>(mut self, input: R, mut to_sdk: S)
    where
        R: AsyncRead + Unpin,
        S: AsyncWrite + Unpin,
    {
        let (errors, max_line) = (self.answers.clone(), self.max_line);
        let mut input = BufReader::new(input);
        loop {
            let line = match read_line(&mut input, max_line).await {
                Line::End => break,
                Line::TooLong(bytes) => {
                    let problem = format!(
                        "Invalid Request: a message of {bytes} bytes is over the limit of \
                     {max_line} (server.max_request_bytes)"
                    );
                    let _ = errors.send(error_line(-32600, &problem, None)).await;
                    continue;
                }
                Line::Message(line) => line,
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            // A plain `tools/call` is read without a tree of the message; one not answered
            // here is read again below, as any other line.
            if let Some(call) = plain_call(&line)
                && self.call_plain(call)
            {
                continue;
            }
            let passed = match serde_json::from_slice::<Value>(&line) {
                Ok(Value::Array(members)) => self.batch(members, &mut to_sdk).await,
                Ok(message) => self.single(message, line, &mut to_sdk).await,
                Err(e) => {
                    let problem = format!("Parse error: {e}");
                    let _ = errors.send(error_line(-32700, &problem, None)).await;
                    Ok(())
                }
            };
            // The SDK's side is closed.
            if passed.is_err() {
                return;
            }
        }
        let _ = to_sdk.shutdown().await;
    }

    /// One message (not a batch): checked, noted when it moves the handshake on, answered
    /// here when it is a `tools/list` or `tools/call` this filter takes, else passed to the
    /// SDK as the client wrote it (`line`). Err: the SDK's side is closed.
    async fn single<S: AsyncWrite + Unpin>(
        &mut self,
        mut message: Value,
        mut line: Vec<u8>,
        to_sdk: &mut S,
    ) -> std::io::Result<()> {
        if let Err((code, problem, id)) = check_message(&message) {
            let _ = self.answers.send(error_line(code, &problem, id)).await;
            return Ok(());
        }
        let method = crate::json::member(&message, "method").and_then(Value::as_str);
        // Answered here, or passed on below.
        if method == Some("tools/call") && self.call(&mut message) {
            return Ok(());
        }
        match crate::json::member(&message, "method").and_then(Value::as_str) {
            Some("initialize") => {
                self.batches_allowed = jsonrpc::member(&message, &["params", "protocolVersion"])
                    == Some(&Value::from("2025-03-26"));
                self.handshake
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .begin(&message);
            }
            Some("tools/list") => {
                if let Some(answer) = self.list(&message) {
                    let _ = self.answers.send(answer).await;
                    return Ok(());
                }
            }
            Some("notifications/initialized") => {
                self.handshake
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .initialized();
            }
            // Cancels a call running here; the SDK is told too (it ignores an id it does
            // not know).
            Some("notifications/cancelled") => self.cancel(&message),
            Some("logging/setLevel") => self.logging = true,
            _ => {}
        }
        line.push(b'\n');
        to_sdk.write_all(&line).await
    }

    /// A batch: refused unless the client negotiated 2025-03-26 (and not empty); its
    /// members are checked and passed to the SDK one line each. Err: the SDK's side is
    /// closed.
    async fn batch<S: AsyncWrite + Unpin>(
        &self,
        members: Vec<Value>,
        to_sdk: &mut S,
    ) -> std::io::Result<()> {
        if !self.batches_allowed || members.is_empty() {
            let problem = if members.is_empty() {
                "Invalid Request: an empty batch"
            } else {
                "Invalid Request: JSON-RPC batches are not supported after protocol 2025-03-26"
            };
            let _ = self.answers.send(error_line(-32600, problem, None)).await;
            return Ok(());
        }
        for member in members {
            if let Err((code, problem, id)) = check_message(&member) {
                let _ = self.answers.send(error_line(code, &problem, id)).await;
                continue;
            }
            let mut bytes = serde_json::to_vec(&member).unwrap_or_default();
            bytes.push(b'\n');
            to_sdk.write_all(&bytes).await?;
        }
        Ok(())
    }

    /// Starts a (checked) `tools/call` request in a task of its own when it is one to
    /// answer here (see the module documentation); false leaves it to the SDK.
    fn call(&self, message: &mut Value) -> bool {
        let Some(handshake) = self.answering_calls() else {
            return false;
        };
        let Some(id) = request_id(message) else {
            return false;
        };
        // A call that may ask its user (a confirmation, an argument) needs the SDK's peer.
        if self.shared.current().may_ask_user(message) {
            return false;
        }
        // Progress goes through the SDK's peer; a request naming its own revision is the
        // SDK's to judge.
        let meta = CallMeta::of(message);
        if meta.wants_notifications || meta.names_revision {
            return false;
        }
        // An id still in use by a call running here (a client error): the SDK judges it,
        // and the running call keeps its answer.
        let key = serde_json::to_string(&id).unwrap_or_default();
        if self.running.is_running(&self.session, &key) {
            return false;
        }
        // Taken, not copied: the line is not passed on now. A call of the wrong shape is
        // left as it was, for the SDK to answer.
        let Ok(call) = ToolCall::take(message, id, meta) else {
            return false;
        };
        self.start(call, key, handshake);
        true
    }

    /// [`Filter::call`] for a call [`plain_call`] read: no `_meta`, so nothing in it sends
    /// the call to the SDK. False: the SDK answers it (the line is read again).
    fn call_plain(&self, call: ToolCall) -> bool {
        let Some(handshake) = self.answering_calls() else {
            return false;
        };
        if self.shared.current().may_ask(&call.name, &call.arguments) {
            return false;
        }
        let key = serde_json::to_string(&call.id).unwrap_or_default();
        if self.running.is_running(&self.session, &key) {
            return false;
        }
        self.start(call, key, handshake);
        true
    }

    /// The settled handshake, while calls are answered here: after
    /// `notifications/initialized`, and unless the client asked for log messages.
    fn answering_calls(&self) -> Option<Handshake> {
        if self.logging {
            return None;
        }
        self.handshake
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .settled()
            .filter(|settled| settled.initialized)
            .cloned()
    }

    /// Runs `call` in a task of its own, noted as running under `key` (its id's JSON).
    fn start(&self, call: ToolCall, key: String, handshake: Handshake) {
        let cancelled = CancellationToken::new();
        self.running
            .started(self.session.clone(), key.clone(), cancelled.clone());
        let call = DirectCall {
            shared: self.shared.clone(),
            answers: self.answers.clone(),
            running: self.running.clone(),
            session: self.session.clone(),
            key,
            tasks: handshake.tasks || call.meta.declares_tasks,
            call,
            client: handshake.client,
            version: handshake.version,
            cancelled,
        };
        // Boxed: the task then holds a pointer, not the whole pipeline's state, which
        // spawning and finishing the task would otherwise copy.
        tokio::spawn(Box::pin(call.run()));
    }

    /// A `notifications/cancelled` for a call running here cancels it.
    fn cancel(&self, message: &Value) {
        self.running.cancel(&self.session, message);
    }

    /// The answer line to a (checked) `tools/list` request, once the handshake is done;
    /// `None` leaves it to the SDK.
    fn list(&self, message: &Value) -> Option<Vec<u8>> {
        let (client, version) = {
            let handshake = self.handshake.lock().unwrap_or_else(|p| p.into_inner());
            let settled = handshake.settled()?;
            (settled.client.clone(), settled.version.clone())
        };
        let id = crate::json::member(message, "id")?;
        let cursor = match jsonrpc::member(message, &["params", "cursor"]) {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.as_str()),
            Some(_) => return None,
        };
        let snapshot = self.shared.current();
        let view = snapshot.view(client.as_deref(), Some(&version));
        let mut line = match self.shared.list_result(&view, cursor, &version) {
            Ok(page) => success_bytes(id.to_string().as_bytes(), &page),
            Err(e) => error_line(i64::from(e.code.0), &e.message, Some(id.clone())),
        };
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        Some(line)
    }
}

/// A `tools/call` answered here.
struct DirectCall {
    shared: Arc<ServerState>,
    answers: mpsc::Sender<Vec<u8>>,
    running: Arc<Running>,
    /// The session's key in `running`.
    session: Arc<str>,
    /// The id's JSON text, the call's key in `running`.
    key: String,
    call: ToolCall,
    client: Option<String>,
    version: ProtocolVersion,
    cancelled: CancellationToken,
    /// The client declared the Tasks extension.
    tasks: bool,
}

impl DirectCall {
    /// Calls the tool and sends the answer line, as the SDK would have; a cancelled call
    /// is not answered (the SDK drops the answer of a cancelled request too).
    async fn run(self) {
        let DirectCall {
            call:
                ToolCall {
                    id,
                    name,
                    arguments,
                    meta,
                    ..
                },
            ..
        } = self;
        let budget = self
            .shared
            .limits()
            .budget(Transport::Stdio, None)
            .map(|budget| AnswerBudget {
                budget,
                id: id.clone(),
                only_after_progress: false,
            });
        let request = CallRequest {
            name: &name,
            arguments,
            client: self.client.as_deref(),
            version: Some(&self.version),
            incoming: CallContext {
                trace: meta.trace,
                // `answer_bytes` writes a structured content left in the text from the text.
                structured_from_text: true,
                ..CallContext::default()
            },
            budget,
            // Calls that may need confirmation are left to the SDK (`call`).
            asker: super::confirm::Asker::Unable,
            tasks: self.tasks,
        };
        let outcome = self.shared.call(request, Some(&self.cancelled), None).await;
        let still_wanted = self.running.finished(self.session, self.key);
        if !still_wanted || self.cancelled.is_cancelled() {
            return;
        }
        let mut line = answer_bytes(id, outcome, &self.version);
        line.push(b'\n');
        let _ = self.answers.send(line).await;
    }
}

enum Line {
    Message(Vec<u8>),
    /// The line was this long; it was read to its end and dropped.
    TooLong(usize),
    End,
}

/// One line without its newline, holding at most `max` bytes of it in memory.
async fn read_line<R: AsyncBufReadExt + Unpin>(input: &mut R, max: usize) -> Line {
    let mut line = Vec::new();
    let mut dropped = 0usize;
    loop {
        let available = match input.fill_buf().await {
            Ok([]) | Err(_) if line.is_empty() && dropped == 0 => return Line::End,
            Ok([]) | Err(_) => break,
            Ok(available) => available,
        };
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        let used = chunk.len() + usize::from(found);
        if dropped == 0 && line.len() + chunk.len() <= max {
            line.extend_from_slice(chunk);
        } else {
            dropped += line.len() + chunk.len();
            line.clear();
        }
        input.consume(used);
        if found {
            break;
        }
    }
    if dropped > 0 {
        Line::TooLong(dropped)
    } else {
        Line::Message(line)
    }
}

fn error_line(code: i64, message: &str, id: Option<Value>) -> Vec<u8> {
    let mut line = failure_message(code, message, id).to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Copies the SDK's output, a line at a time, to the writer; notes the protocol version
/// of the SDK's answer to `initialize` as it passes.
async fn copy_lines<R: AsyncRead + Unpin>(
    from_sdk: R,
    lines: mpsc::Sender<Vec<u8>>,
    handshake: Arc<Mutex<Negotiation>>,
) {
    let mut from_sdk = BufReader::new(from_sdk);
    loop {
        let mut line = Vec::new();
        match from_sdk.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                handshake
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .answered(&line);
                if lines.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes whole lines, from the SDK and from the checks, so they never interleave; a line
/// over `budget` is replaced by an error for its request (or not sent: [`guard_line`]).
async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: mpsc::Receiver<Vec<u8>>,
    mut output: W,
    budget: Option<Budget>,
) {
    while let Some(mut line) = lines.recv().await {
        if let Some(budget) = &budget {
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            match guard_line(text, budget) {
                Guarded::Fits => {}
                Guarded::Replaced(mut error) => {
                    error.push(b'\n');
                    line = error;
                }
                Guarded::Dropped => continue,
            }
        }
        if output.write_all(&line).await.is_err() {
            return;
        }
        // Flush once the queue is drained: a pipelining client gets its lines in batches.
        if lines.is_empty() && output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}
