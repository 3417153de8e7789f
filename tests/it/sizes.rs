//! Message sizes real clients accept. The official Python SDK refuses
//! an SSE event over 1 MiB (on the legacy transport the session ends with it) and the
//! TypeScript SDK closes stdio past 10 MiB: `tools/list` pages end before 512 KiB on every
//! transport and both paths, and a result too large for an SSE event or a stdio line comes
//! back cut to fit, the session going on. Everything runs on loopback.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use restmcp::config::ServerSettings;
use restmcp::mcp::{ServerState, Snapshot};
use restmcp::upstream::UpstreamSettings;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::dispatch::dispatcher_for;
use crate::mcp::{Server, start_with};

/// What the Python SDK accepts in one SSE event (`httpx2`'s `max_event_size`).
const PYTHON_SSE_EVENT: usize = 1024 * 1024;
const PAGE_BYTES: usize = 512 * 1024;
/// `server.max_message_bytes` by default.
const MESSAGE: usize = restmcp::config::DEFAULT_MAX_MESSAGE_BYTES;
/// Tools with a large input schema, and the size of each schema's enum.
const WIDE_TOOLS: usize = 40;
const WIDE_VALUES: usize = 1_300;
/// One tool larger than a page (but smaller than a message).
const HUGE_VALUES: usize = 25_000;
/// Bytes of the large upstream bodies: under `max_response_bytes` (4 MiB), so the upstream
/// cap leaves them whole and only the transport budget can cut them.
const BIG_BODY: usize = 2 * 1024 * 1024;

/// A JSON body of about [`BIG_BODY`] bytes full of characters JSON escapes.
fn big_json() -> Value {
    json_of(BIG_BODY)
}

/// A JSON body of about `bytes` bytes full of characters JSON escapes.
fn json_of(bytes: usize) -> Value {
    let item = json!({"name": "say \"hi\"", "path": "C:\\dir\\file", "note": "tab\there ✓"});
    let count = bytes / item.to_string().len();
    json!({ "items": vec![item; count] })
}

/// A body whose result (its data twice) is over 1 MiB, which restmcp maps quickly.
fn mid_json() -> Value {
    json_of(700 * 1024)
}

fn big_text() -> String {
    "line of text with \"quotes\" and ünïcödé\n".repeat(BIG_BODY / 44)
}

/// The upstream: `/big/json`, `/slow/json` (the same after 1.5 s), `/mid/json`,
/// `/big/text` and `/small`.
async fn upstream() -> String {
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/big/json", get(|| async { axum::Json(big_json()) }))
        .route(
            "/slow/json",
            get(|| async {
                // Longer than restmcp's progress interval (1 s).
                tokio::time::sleep(Duration::from_millis(1500)).await;
                axum::Json(big_json())
            }),
        )
        .route("/big/text", get(|| async { big_text() }))
        .route("/mid/json", get(|| async { axum::Json(mid_json()) }))
        .route("/small", get(|| async { axum::Json(json!({"ok": true})) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// A spec whose `tools/list` is about 1.85 MB: [`WIDE_TOOLS`] tools of about 31 KB, one of
/// about 600 KB (`huge`, larger than a page), and the three calls of [`upstream`].
fn write_spec(dir: &Path) -> PathBuf {
    let values = |count: usize, tag: &str| -> Vec<String> {
        (0..count)
            .map(|i| format!("{tag}-value-number-{i:06}"))
            .collect()
    };
    let mut paths = serde_json::Map::new();
    let mut operation = |path: String, id: &str, values: Vec<String>| {
        let parameters = if values.is_empty() {
            json!([])
        } else {
            json!([{"name": "choice", "in": "query", "schema": {"type": "string", "enum": values}}])
        };
        paths.insert(
            path,
            json!({"get": {"operationId": id, "parameters": parameters, "responses": {"200": {
                "description": "ok",
                "content": {"application/json": {"schema": {"type": "object"}}}
            }}}}),
        );
    };
    for i in 0..WIDE_TOOLS {
        operation(
            format!("/wide/{i}"),
            &format!("wide{i:02}"),
            values(WIDE_VALUES, "w"),
        );
    }
    operation("/huge".into(), "huge", values(HUGE_VALUES, "h"));
    operation("/big/json".into(), "bigJson", Vec::new());
    operation("/slow/json".into(), "slowJson", Vec::new());
    operation("/mid/json".into(), "midJson", Vec::new());
    operation("/small".into(), "small", Vec::new());
    paths.insert(
        "/big/text".into(),
        json!({"get": {"operationId": "bigText", "responses": {"200": {
            "description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}
        }}}}),
    );
    let spec = json!({
        "openapi": "3.0.3",
        "info": {"title": "sizes", "version": "1"},
        "paths": paths,
    });
    let path = dir.join("sizes.json");
    std::fs::write(&path, spec.to_string()).expect("write spec");
    path
}

struct Setup {
    _dir: tempfile::TempDir,
    spec: PathBuf,
    upstream: String,
}

impl Setup {
    async fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = write_spec(dir.path());
        Setup {
            _dir: dir,
            spec,
            upstream: upstream().await,
        }
    }

    async fn shared(&self, settings: &ServerSettings) -> Arc<ServerState> {
        let dispatcher = self.dispatcher().await;
        ServerState::with_settings(Snapshot::new(dispatcher), settings).expect("shared")
    }

    async fn dispatcher(&self) -> restmcp::upstream::Dispatcher {
        dispatcher_for(
            self.spec.clone(),
            &self.upstream,
            // These tests are about the transports' own budgets: no result budget first
            // (tests/it/confirm.rs and tests/results cover that one).
            UpstreamSettings {
                max_result_tokens: 0,
                ..UpstreamSettings::default()
            },
        )
        .await
    }

    async fn server(&self, settings: ServerSettings) -> Server {
        start_with(self.dispatcher().await, settings).await
    }
}

/// One SSE event: its size as the Python SDK counts it (the bytes of its lines, without
/// their newlines and without comments) and its data.
struct SseEvent {
    counted: usize,
    event: String,
    data: String,
}

/// The complete events at the start of `buffer`, removed from it.
fn take_events(buffer: &mut Vec<u8>) -> Vec<SseEvent> {
    let mut events = Vec::new();
    while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
        let block: Vec<u8> = buffer.drain(..end + 2).collect();
        let block = String::from_utf8(block).expect("an event is UTF-8");
        let mut event = SseEvent {
            counted: 0,
            event: "message".into(),
            data: String::new(),
        };
        for line in block
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with(':'))
        {
            event.counted += line.len();
            if let Some(name) = line.strip_prefix("event:") {
                event.event = name.trim().to_string();
            } else if let Some(data) = line.strip_prefix("data:") {
                event.data.push_str(data.strip_prefix(' ').unwrap_or(data));
            }
        }
        if !event.data.is_empty() {
            events.push(event);
        }
    }
    events
}

/// A client of the legacy HTTP+SSE transport, reading raw events.
struct Legacy {
    client: reqwest::Client,
    post_to: String,
    response: reqwest::Response,
    buffer: Vec<u8>,
    next_id: i64,
}

impl Legacy {
    async fn open(server: &Server, version: &str) -> Legacy {
        let client = reqwest::Client::new();
        let response = client
            .get(server.at("/sse"))
            .header("Accept", "text/event-stream")
            .send()
            .await
            .expect("GET /sse");
        assert_eq!(response.status(), 200);
        let mut legacy = Legacy {
            client,
            post_to: String::new(),
            response,
            buffer: Vec::new(),
            next_id: 1,
        };
        let endpoint = legacy.event().await;
        assert_eq!(endpoint.event, "endpoint");
        legacy.post_to = server.at(&endpoint.data);
        let init = legacy
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "sizes", "version": "1"}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        legacy
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        legacy
    }

    async fn event(&mut self) -> SseEvent {
        loop {
            if let Some(event) = take_events(&mut self.buffer).into_iter().next() {
                return event;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk())
                .await
                .expect("an event within 30 s")
                .expect("stream readable")
                .expect("the session's stream is still open");
            self.buffer.extend_from_slice(&chunk);
        }
    }

    async fn send(&self, message: Value) {
        let status = self
            .client
            .post(&self.post_to)
            .header("Content-Type", "application/json")
            .body(message.to_string())
            .send()
            .await
            .expect("POST")
            .status();
        assert_eq!(status, 202);
    }

    /// Sends a request; its answer, after checking the event's size as the Python SDK does.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let event = self.event().await;
        assert!(
            event.counted <= PYTHON_SSE_EVENT,
            "{method}: an event of {} bytes ends a Python SDK session",
            event.counted
        );
        let answer: Value = serde_json::from_str(&event.data).expect("JSON");
        assert_eq!(answer["id"], id, "{method}");
        answer
    }
}

/// A Streamable HTTP session (initialize-based), with raw POSTs.
struct Session {
    url: String,
    id: String,
    version: String,
    next_id: i64,
}

impl Session {
    async fn open(server: &Server, version: &str) -> Session {
        let mut session = Session {
            url: server.url.clone(),
            id: String::new(),
            version: version.to_string(),
            next_id: 2,
        };
        let (headers, answers) = session
            .post(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "sizes", "version": "1"}}}),
            )
            .await;
        assert_eq!(answers[0].1["result"]["protocolVersion"], version);
        session.id = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("session id")
            .to_string();
        session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
    }

    /// A POST; the answer's JSON-RPC messages with the size of each (the event as the Python
    /// SDK counts it for an SSE answer, the body for a JSON one).
    async fn post(&self, message: Value) -> (reqwest::header::HeaderMap, Vec<(usize, Value)>) {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(message.to_string());
        if !self.id.is_empty() {
            request = request
                .header("Mcp-Session-Id", &self.id)
                .header("MCP-Protocol-Version", &self.version);
        }
        let response = request.send().await.expect("POST");
        let headers = response.headers().clone();
        let sse = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let mut body = response.bytes().await.expect("body").to_vec();
        let answers = if sse {
            take_events(&mut body)
                .into_iter()
                .filter_map(|e| Some((e.counted, serde_json::from_str(&e.data).ok()?)))
                .collect()
        } else if body.is_empty() {
            Vec::new()
        } else {
            vec![(body.len(), serde_json::from_slice(&body).expect("JSON"))]
        };
        (headers, answers)
    }

    /// A request; its answer (the last message) and that message's size.
    async fn request(&mut self, method: &str, params: Value) -> (usize, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let (_, mut answers) = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let (size, answer) = answers.pop().expect("an answer");
        assert_eq!(answer["id"], id, "{answer}");
        (size, answer)
    }
}

/// A 2026-07-28 `tools/call` (no session) that asks for progress: whether the answer was an
/// SSE stream, its size (as the Python SDK counts an event) and the answer.
async fn stateless_call_with_progress(server: &Server, name: &str) -> (bool, usize, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "sizes", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "p"
        }
    }});
    let response = reqwest::Client::new()
        .post(&server.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", name)
        .body(body.to_string())
        .send()
        .await
        .expect("POST");
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let mut bytes = response.bytes().await.expect("body").to_vec();
    if !sse {
        let answer = serde_json::from_slice(&bytes).expect("JSON");
        return (false, bytes.len(), answer);
    }
    let event = take_events(&mut bytes)
        .into_iter()
        .rfind(|e| e.data.contains("\"result\""))
        .expect("the answer");
    (
        true,
        event.counted,
        serde_json::from_str(&event.data).expect("JSON"),
    )
}

/// A client of [`restmcp::mcp::stdio::serve_on`], in-process.
struct Stdio {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    next_id: i64,
}

impl Stdio {
    async fn open(shared: Arc<ServerState>, version: &str) -> Stdio {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(theirs);
        tokio::spawn(restmcp::mcp::stdio::serve_on(
            shared,
            server_read,
            server_write,
            4 << 20,
        ));
        let (read, write) = tokio::io::split(ours);
        let mut stdio = Stdio {
            to_server: write,
            from_server: BufReader::new(read),
            next_id: 1,
        };
        let (_, init) = stdio
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "sizes", "version": "1"}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        stdio
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        stdio
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.to_server
            .write_all(line.as_bytes())
            .await
            .expect("write");
    }

    /// A request; its answer line's length (without the newline) and the answer.
    async fn request(&mut self, method: &str, params: Value) -> (usize, Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let mut line = String::new();
            let read = tokio::time::timeout(
                Duration::from_secs(30),
                self.from_server.read_line(&mut line),
            )
            .await
            .expect("an answer within 30 s")
            .expect("readable");
            assert!(read > 0, "the stdio session ended");
            let answer: Value = serde_json::from_str(line.trim_end()).expect("JSON");
            if answer["id"] == id {
                return (line.trim_end().len(), answer);
            }
        }
    }
}

/// Every page of `tools/list` through `request` (which gives each answer's size): the
/// pages' tool names and cursors, checking each message's size (over SSE, as the Python SDK
/// counts an event).
async fn pages<F>(mut request: F) -> (Vec<Vec<String>>, Vec<String>)
where
    F: AsyncFnMut(Value) -> (usize, Value),
{
    let mut names = Vec::new();
    let mut cursors = Vec::new();
    let mut params = json!({});
    for _ in 0..100 {
        let (size, answer) = request(params).await;
        let result = &answer["result"];
        let tools = result["tools"].as_array().expect("tools");
        // Only a tool larger than a page makes a larger page, alone, and it still fits a
        // message.
        assert!(
            size <= PAGE_BYTES || (tools.len() == 1 && size <= MESSAGE),
            "a page of {size} bytes: {}",
            &answer.to_string()[..200]
        );
        names.push(
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                .collect(),
        );
        match result["nextCursor"].as_str() {
            Some(cursor) => {
                cursors.push(cursor.to_string());
                params = json!({ "cursor": cursor });
            }
            None => return (names, cursors),
        }
    }
    panic!("more than 100 pages");
}

/// The pages, checked: every tool once, in order, the huge one alone, more pages than the
/// count alone would make.
fn check_pages(label: &str, pages: &[Vec<String>], expected: &[String]) {
    let all: Vec<String> = pages.concat();
    assert_eq!(all, expected, "{label}: every tool, once, in order");
    assert!(
        pages.len() >= 4,
        "{label}: 1.85 MB of tools take at least 4 pages of 512 KiB, got {}",
        pages.len()
    );
    let huge = pages
        .iter()
        .find(|page| page.contains(&"huge".to_string()))
        .expect("huge listed");
    assert_eq!(
        huge,
        &["huge"],
        "{label}: a tool larger than a page goes alone"
    );
}

#[tokio::test]
async fn tools_list_pages_end_before_512_kib_on_every_transport_and_path() {
    let setup = Setup::new().await;
    // Plain JSON answers: the direct path.
    let direct = setup.server(ServerSettings::default()).await;
    // SSE answers: the SDK's handler.
    let through_sdk = setup
        .server(ServerSettings {
            json_response: false,
            ..ServerSettings::default()
        })
        .await;
    let expected: Vec<String> = {
        let snapshot = direct.shared.current();
        snapshot
            .catalog()
            .tools()
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert_eq!(expected.len(), WIDE_TOOLS + 6);

    let mut json = Session::open(&direct, "2025-11-25").await;
    let (json_pages, cursors) =
        pages(async |params| json.request("tools/list", params).await).await;
    check_pages("Streamable HTTP, JSON", &json_pages, &expected);
    // A cursor names the same page each time it is used.
    let again = json
        .request("tools/list", json!({"cursor": cursors[1]}))
        .await
        .1;
    let names: Vec<&str> = again["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, json_pages[2]);

    let mut sse = Session::open(&through_sdk, "2025-11-25").await;
    let (sse_pages, sse_cursors) =
        pages(async |params| sse.request("tools/list", params).await).await;
    assert_eq!(
        sse_pages, json_pages,
        "the SDK's pages are the direct path's"
    );
    assert_eq!(sse_cursors, cursors);

    let mut legacy = Legacy::open(&direct, "2025-11-25").await;
    let (legacy_pages, legacy_cursors) = pages(async |params| {
        let answer = legacy.request("tools/list", params).await;
        (answer.to_string().len(), answer)
    })
    .await;
    assert_eq!(legacy_pages, json_pages, "legacy SSE pages");
    assert_eq!(legacy_cursors, cursors);

    let mut stdio = Stdio::open(setup.shared(&ServerSettings::default()).await, "2025-11-25").await;
    let (stdio_pages, stdio_cursors) =
        pages(async |params| stdio.request("tools/list", params).await).await;
    assert_eq!(stdio_pages, json_pages, "stdio pages");
    assert_eq!(stdio_cursors, cursors);

    // The count still ends a page first when it is smaller.
    let counted = setup
        .shared(&ServerSettings {
            page_size: 3,
            ..ServerSettings::default()
        })
        .await;
    let mut stdio = Stdio::open(counted, "2025-11-25").await;
    let (counted_pages, _) = pages(async |params| stdio.request("tools/list", params).await).await;
    assert_eq!(counted_pages[0], expected[..3]);
    assert_eq!(counted_pages.concat(), expected);
}

/// The answer's texts.
fn texts(answer: &Value) -> Vec<String> {
    answer["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_string))
        .collect()
}

/// `bigJson` (a tool with an outputSchema) cut to fit: an error whose first text says why,
/// then the data cut, then the marker, and no structured content.
fn check_cut_json(label: &str, answer: &Value, key: &str, budget: usize) {
    let size = answer.to_string().len();
    assert!(size <= budget, "{label}: {size} bytes");
    assert!(
        size > budget - 4096,
        "{label}: most of the room is used ({size})"
    );
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{label}");
    assert!(result.get("structuredContent").is_none(), "{label}");
    let texts = texts(answer);
    assert_eq!(texts.len(), 3, "{label}: note, data, marker");
    assert!(
        texts[0].contains("too large for this transport") && texts[0].contains(key),
        "{label}: {}",
        texts[0]
    );
    assert!(texts[0].contains("Narrow the request"), "{label}");
    assert!(texts[1].starts_with("{\"items\":[{"), "{label}");
    assert!(
        texts[2].starts_with("[result truncated: "),
        "{label}: {}",
        texts[2]
    );
    assert!(texts[2].contains(key), "{label}");
}

/// `bigText` (no outputSchema) cut to fit: still a success, the text cut, then the marker.
fn check_cut_text(label: &str, answer: &Value, budget: usize) {
    let size = answer.to_string().len();
    assert!(size <= budget, "{label}: {size} bytes");
    assert!(
        size > budget - 4096,
        "{label}: most of the room is used ({size})"
    );
    let result = &answer["result"];
    assert_eq!(
        result["isError"],
        false,
        "{label}: {}",
        &result.to_string()[..300]
    );
    let texts = texts(answer);
    assert_eq!(texts.len(), 2, "{label}: data, marker");
    assert!(
        big_text().starts_with(&texts[0]),
        "{label}: a prefix of the body"
    );
    let total = restmcp::upstream::response::human_size(big_text().len() as u64);
    assert!(
        texts[1].starts_with("[result truncated: ")
            && texts[1].contains(&format!("of {total} of text shown")),
        "{label}: {}",
        texts[1]
    );
}

fn call(name: &str) -> Value {
    json!({"name": name, "arguments": {}})
}

#[tokio::test]
async fn a_result_too_large_for_an_sse_event_is_cut_to_fit_and_the_session_goes_on() {
    let setup = Setup::new().await;
    let server = setup.server(ServerSettings::default()).await;

    // Legacy SSE: every answer is an event.
    let mut legacy = Legacy::open(&server, "2025-11-25").await;
    let answer = legacy.request("tools/call", call("bigJson")).await;
    check_cut_json("legacy SSE", &answer, "server.max_message_bytes", MESSAGE);
    let answer = legacy.request("tools/call", call("bigText")).await;
    check_cut_text("legacy SSE", &answer, MESSAGE);
    let answer = legacy.request("tools/call", call("small")).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"ok": true}));

    // Streamable HTTP: a call that streams progress is answered with SSE, and cut.
    let mut session = Session::open(&server, "2025-11-25").await;
    let progress =
        |name: &str| json!({"name": name, "arguments": {}, "_meta": {"progressToken": 1}});
    let (size, answer) = session.request("tools/call", progress("bigJson")).await;
    assert!(size <= PYTHON_SSE_EVENT, "{size}");
    check_cut_json(
        "Streamable HTTP, SSE",
        &answer,
        "server.max_message_bytes",
        MESSAGE,
    );
    let (size, answer) = session.request("tools/call", progress("bigText")).await;
    assert!(size <= PYTHON_SSE_EVENT, "{size}");
    check_cut_text("Streamable HTTP, SSE", &answer, MESSAGE);
    // A plain JSON answer has no such limit: the whole result, structured.
    let (size, answer) = session.request("tools/call", call("bigJson")).await;
    assert!(size > 2 * BIG_BODY, "{size}");
    assert_eq!(answer["result"]["structuredContent"], big_json());
    // Without a session, the SDK answers plain JSON unless a progress notification went
    // first: a quick call comes whole, a slow one (progress after 1 s) as SSE, cut. (On a
    // machine so loaded that the quick call takes a second, it too is SSE, and cut.)
    let (sse, size, answer) = stateless_call_with_progress(&server, "midJson").await;
    if sse {
        assert!(size <= PYTHON_SSE_EVENT, "{size}");
        assert_eq!(answer["result"]["isError"], true);
    } else {
        assert!(size > MESSAGE, "{size}");
        assert_eq!(answer["result"]["structuredContent"], mid_json());
    }
    let (sse, size, answer) = stateless_call_with_progress(&server, "slowJson").await;
    assert!(sse && size <= PYTHON_SSE_EVENT, "{size}");
    check_cut_json(
        "Streamable HTTP, 2026-07-28 with progress",
        &answer,
        "server.max_message_bytes",
        MESSAGE,
    );
    // All SSE answers are cut, whatever the path: the SDK's handler with json_response off.
    let sse_only = setup
        .server(ServerSettings {
            json_response: false,
            ..ServerSettings::default()
        })
        .await;
    let mut session = Session::open(&sse_only, "2025-11-25").await;
    let (size, answer) = session.request("tools/call", call("bigJson")).await;
    assert!(size <= PYTHON_SSE_EVENT, "{size}");
    check_cut_json(
        "Streamable HTTP, SSE only",
        &answer,
        "server.max_message_bytes",
        MESSAGE,
    );
    let (_, answer) = session.request("tools/call", call("small")).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"ok": true}));

    // 2024-11-05 has no structured content: only the text is cut, and nothing is an error.
    let mut old = Legacy::open(&server, "2024-11-05").await;
    let answer = old.request("tools/call", call("bigJson")).await;
    assert_eq!(answer["result"]["isError"], false);
    assert_eq!(texts(&answer).len(), 2, "data, marker");
}

#[tokio::test]
async fn stdio_results_fit_the_stdio_budget() {
    let setup = Setup::new().await;
    // The default (10 MiB less 128 KiB) carries a 3 MB body twice over: nothing is cut.
    let mut stdio = Stdio::open(setup.shared(&ServerSettings::default()).await, "2025-11-25").await;
    let (size, answer) = stdio.request("tools/call", call("bigJson")).await;
    assert!(size > 2 * BIG_BODY && size <= ServerSettings::default().max_stdio_message_bytes);
    assert_eq!(answer["result"]["structuredContent"], big_json());
    // A smaller budget cuts it, naming its key.
    let settings = ServerSettings {
        max_stdio_message_bytes: 1024 * 1024,
        ..ServerSettings::default()
    };
    let mut stdio = Stdio::open(setup.shared(&settings).await, "2025-11-25").await;
    let (size, answer) = stdio.request("tools/call", call("bigJson")).await;
    assert!(size <= 1024 * 1024, "{size}");
    check_cut_json("stdio", &answer, "server.max_stdio_message_bytes", 1 << 20);
    let (size, answer) = stdio.request("tools/call", call("bigText")).await;
    assert!(size <= 1024 * 1024, "{size}");
    check_cut_text("stdio", &answer, 1 << 20);
    // 0: no limit.
    let settings = ServerSettings {
        max_stdio_message_bytes: 0,
        ..ServerSettings::default()
    };
    let mut stdio = Stdio::open(setup.shared(&settings).await, "2025-11-25").await;
    let (_, answer) = stdio.request("tools/call", call("bigJson")).await;
    assert_eq!(answer["result"]["structuredContent"], big_json());
}

#[tokio::test]
async fn an_answer_too_large_for_one_message_is_an_error_and_the_session_goes_on() {
    let setup = Setup::new().await;
    // 64 KiB messages: the huge tool (about 600 KB) cannot go out even alone on its page.
    let settings = ServerSettings {
        max_message_bytes: 64 * 1024,
        ..ServerSettings::default()
    };
    let server = setup.server(settings.clone()).await;
    let before_huge: Vec<String> = {
        let snapshot = server.shared.current();
        let names = snapshot.catalog().tools().iter().map(|t| t.name.clone());
        names.take_while(|name| name != "huge").collect()
    };
    let mut legacy = Legacy::open(&server, "2025-11-25").await;
    let mut params = json!({});
    let mut listed = Vec::new();
    let error = loop {
        let answer = legacy.request("tools/list", params).await;
        assert!(answer.to_string().len() <= 64 * 1024);
        if answer.get("error").is_some() {
            break answer;
        }
        let tools = answer["result"]["tools"].as_array().expect("tools");
        listed.extend(
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_string()),
        );
        params = json!({"cursor": answer["result"]["nextCursor"]});
    };
    assert_eq!(listed, before_huge, "the pages before the huge tool's");
    assert_eq!(error["error"]["code"], -32603);
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("server.max_message_bytes"), "{message}");
    // The session goes on.
    let answer = legacy.request("tools/call", call("small")).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"ok": true}));
    let answer = legacy.request("tools/call", call("bigJson")).await;
    assert!(answer.to_string().len() <= 64 * 1024);
    check_cut_json(
        "legacy SSE, 64 KiB",
        &answer,
        "server.max_message_bytes",
        64 * 1024,
    );
    // stdio likewise, with its own budget.
    let settings = ServerSettings {
        max_stdio_message_bytes: 64 * 1024,
        ..ServerSettings::default()
    };
    let mut stdio = Stdio::open(setup.shared(&settings).await, "2025-11-25").await;
    let mut params = json!({});
    let error = loop {
        let (size, answer) = stdio.request("tools/list", params).await;
        assert!(size <= 64 * 1024);
        if answer.get("error").is_some() {
            break answer;
        }
        params = json!({"cursor": answer["result"]["nextCursor"]});
    };
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("server.max_stdio_message_bytes"),
        "{message}"
    );
    let (_, answer) = stdio.request("tools/call", call("small")).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"ok": true}));
}

/// Over stdio, `tools/call` is answered beside the SDK (`restmcp::mcp::stdio`) once the
/// handshake is done; a client that asked for log messages is answered by the SDK. Both
/// give the same answers, for successes, cut results, tool errors and unknown tools, in
/// every revision with a handshake.
#[tokio::test]
async fn stdio_direct_calls_answer_as_the_sdk_does() {
    let setup = Setup::new().await;
    let settings = ServerSettings {
        max_stdio_message_bytes: 1024 * 1024,
        ..ServerSettings::default()
    };
    let shared = setup.shared(&settings).await;
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut direct = Stdio::open(shared.clone(), version).await;
        let mut sdk = Stdio::open(shared.clone(), version).await;
        // Log messages only at `emergency`: the SDK's path, and no call is reported.
        let (_, set) = sdk
            .request("logging/setLevel", json!({"level": "emergency"}))
            .await;
        assert!(set.get("result").is_some(), "{set}");
        let (_, ping) = direct.request("ping", json!({})).await;
        assert!(ping.get("result").is_some(), "{ping}");
        for params in [
            call("small"),
            call("bigJson"),
            call("bigText"),
            json!({"name": "small", "arguments": {"nope": 1}}),
            json!({"name": "small"}),
            json!({"name": "noSuchTool", "arguments": {}}),
            json!({"name": "small", "arguments": {}, "_meta": {"traceparent":
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}),
        ] {
            let (_, ours) = direct.request("tools/call", params.clone()).await;
            let (_, theirs) = sdk.request("tools/call", params.clone()).await;
            assert_eq!(ours, theirs, "{version}: {params}");
        }
    }
}

/// `notifications/cancelled` for a call answered beside the SDK cancels it, and no answer
/// comes for it, as from the SDK; the session goes on.
#[tokio::test]
async fn a_stdio_direct_call_is_cancelled_by_its_notification() {
    let setup = Setup::new().await;
    let mut stdio = Stdio::open(setup.shared(&ServerSettings::default()).await, "2025-11-25").await;
    let id = stdio.next_id;
    stdio.next_id += 1;
    stdio
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": call("slowJson")}))
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    stdio
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": id, "reason": "changed my mind"}}),
        )
        .await;
    // The next answer is the next request's: the cancelled call's never comes.
    let (_, answer) = stdio.request("tools/call", call("small")).await;
    assert_eq!(answer["result"]["structuredContent"], json!({"ok": true}));
    let mut line = String::new();
    let more = tokio::time::timeout(
        Duration::from_millis(2500),
        stdio.from_server.read_line(&mut line),
    )
    .await;
    assert!(more.is_err(), "no answer for the cancelled call: {line}");
}
