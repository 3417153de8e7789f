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
//! Lines going out are kept within `server.max_stdio_message_bytes` (the official
//! TypeScript SDK closes the connection past 10 MiB): results are cut to fit
//! ([`super::sizes`]), and an answer still larger goes out as a JSON-RPC error instead.

use std::sync::{Arc, Mutex};

use rmcp::ServiceExt as _;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::jsonrpc::{self, check_message, failure_message, success_bytes};
use super::session::Handshake;
use super::sizes::{Budget, Guarded, Transport, guard_line};
use super::{McpServer, Shared};

/// The session's handshake as the filter sees it pass.
#[derive(Default)]
struct Negotiation {
    /// The client's `initialize` request (one with an id), until the SDK's answer passes by.
    pending: Option<Value>,
    /// What the last answered `initialize` settled.
    settled: Option<Handshake>,
}

/// Serves on stdin/stdout until stdin closes or the client disconnects.
pub async fn serve(shared: Arc<Shared>, max_line: usize) -> Result<(), String> {
    serve_on(shared, tokio::io::stdin(), tokio::io::stdout(), max_line).await
}

/// Serves one client on `input` and `output`.
pub async fn serve_on<R, W>(
    shared: Arc<Shared>,
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
    let filter = Filter {
        shared: shared.clone(),
        handshake,
        answers: lines,
        max_line,
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
    let _ = copier.await;
    let _ = writer.await;
    served
}

/// The reading side: what it needs to answer a line itself.
struct Filter {
    shared: Arc<Shared>,
    handshake: Arc<Mutex<Negotiation>>,
    /// Lines for the client (the writer task's queue).
    answers: mpsc::Sender<Vec<u8>>,
    max_line: usize,
}

impl Filter {
    /// Reads the client's lines, passes well-formed messages to the SDK and answers the rest.
    async fn read_lines<R, S>(self, input: R, mut to_sdk: S)
    where
        R: AsyncRead + Unpin,
        S: AsyncWrite + Unpin,
    {
        let (errors, max_line) = (&self.answers, self.max_line);
        let mut input = BufReader::new(input);
        let mut batches_allowed = false;
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
            let message = match serde_json::from_slice::<Value>(&line) {
                Ok(message) => message,
                Err(e) => {
                    let _ = errors
                        .send(error_line(-32700, &format!("Parse error: {e}"), None))
                        .await;
                    continue;
                }
            };
            // A single message goes on as the client wrote it; batch members are re-written.
            if !message.is_array() {
                if let Err((code, problem, id)) = check_message(&message) {
                    let _ = errors.send(error_line(code, &problem, id)).await;
                    continue;
                }
                match message.get("method").and_then(Value::as_str) {
                    Some("initialize") => {
                        batches_allowed = jsonrpc::member(&message, &["params", "protocolVersion"])
                            == Some(&Value::from("2025-03-26"));
                        let mut handshake =
                            self.handshake.lock().unwrap_or_else(|p| p.into_inner());
                        *handshake = Negotiation {
                            pending: message.get("id").is_some().then(|| message.clone()),
                            settled: None,
                        };
                    }
                    Some("tools/list") => {
                        if let Some(answer) = self.list(&message) {
                            let _ = errors.send(answer).await;
                            continue;
                        }
                    }
                    _ => {}
                }
                let mut line = line;
                line.push(b'\n');
                if to_sdk.write_all(&line).await.is_err() {
                    return;
                }
                continue;
            }
            let members = match message {
                Value::Array(members) if batches_allowed && !members.is_empty() => members,
                Value::Array(members) => {
                    let problem = if members.is_empty() {
                        "Invalid Request: an empty batch"
                    } else {
                        "Invalid Request: JSON-RPC batches are not supported after protocol 2025-03-26"
                    };
                    let _ = errors.send(error_line(-32600, problem, None)).await;
                    continue;
                }
                _ => continue,
            };
            for member in members {
                if let Err((code, problem, id)) = check_message(&member) {
                    let _ = errors.send(error_line(code, &problem, id)).await;
                    continue;
                }
                let mut bytes = serde_json::to_vec(&member).unwrap_or_default();
                bytes.push(b'\n');
                if to_sdk.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        }
        let _ = to_sdk.shutdown().await;
    }

    /// The answer line to a (checked) `tools/list` request, once the handshake is done;
    /// `None` leaves it to the SDK.
    fn list(&self, message: &Value) -> Option<Vec<u8>> {
        let (client, version) = {
            let handshake = self.handshake.lock().unwrap_or_else(|p| p.into_inner());
            let settled = handshake.settled.clone()?;
            (settled.client, settled.version)
        };
        let id = message.get("id")?;
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

/// Records the agreed protocol version if `line` is the SDK's answer to `initialize`.
fn note_initialize_answer(handshake: &Mutex<Negotiation>, line: &[u8]) {
    let mut handshake = handshake.lock().unwrap_or_else(|p| p.into_inner());
    let Some(pending) = &handshake.pending else {
        return;
    };
    let Ok(answer) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    if answer.get("id") != pending.get("id") {
        return;
    }
    handshake.settled = Handshake::settled(pending, &answer);
    handshake.pending = None;
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
                note_initialize_answer(&handshake, &line);
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
