//! Bad MCP input, against the real binary over Streamable HTTP and stdio:
//! malformed JSON, wrong JSON-RPC versions and id types, huge messages, unknown methods,
//! params of the wrong shape, calls before initialization, batches where the protocol
//! revision has none, and a flood of notifications. Each gets the JSON-RPC error code or
//! HTTP status the specifications give (JSON-RPC 2.0 "Error object"; MCP basic/index and
//! transports), and another client is served throughout.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::overlays::project;
use crate::reload::Binary;

const LIMIT: usize = 65536;

fn config() -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\nmax_request_bytes = {LIMIT}\n\
         [apis.petstore]\nspec = \"specs/petstore.yaml\"\nmock = true\n"
    )
}

type Client = rmcp::service::RunningService<RoleClient, ()>;

/// A well-behaved client: an SDK session that must be answered as usual, quickly.
async fn healthy(url: &str) -> Client {
    restmcp::http_client::install_crypto_provider();
    ().serve(StreamableHttpClientTransport::from_uri(url.to_string()))
        .await
        .expect("initialize")
}

async fn still_served(client: &Client, after: &str) {
    let started = Instant::now();
    let mut params = CallToolRequestParams::new("getPetById");
    params.arguments = json!({"petId": 1}).as_object().cloned();
    let result = client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("after {after}: the other client's call failed: {e}"));
    assert_ne!(result.is_error, Some(true), "after {after}: {result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "after {after}: {:?}",
        started.elapsed()
    );
}

pub(crate) async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, Option<Value>) {
    restmcp::http_client::install_crypto_provider();
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let message = serde_json::from_str(&text).ok().or_else(|| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
    });
    (status, message)
}

/// Initializes a session with a raw POST; returns its id.
pub(crate) async fn open_session(url: &str, version: &str) -> String {
    restmcp::http_client::install_crypto_provider();
    let response = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .expect("initialize");
    assert_eq!(response.status(), 200);
    response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_string()
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bad-input", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// Checks a refused message: the HTTP status, and the JSON-RPC error's code and id.
fn refused(what: &str, answer: (u16, Option<Value>), status: u16, code: i64, id: Value) {
    let (got, message) = answer;
    assert_eq!(got, status, "{what}: {message:?}");
    let message = message.unwrap_or_else(|| panic!("{what}: a JSON-RPC error body"));
    assert_eq!(message["jsonrpc"], "2.0", "{what}: {message}");
    assert_eq!(message["error"]["code"], code, "{what}: {message}");
    assert_eq!(message["id"], id, "{what}: {message}");
    assert!(message.get("result").is_none(), "{what}: {message}");
}

#[tokio::test]
async fn malformed_messages_over_http_get_their_errors_and_others_are_served() {
    let dir = project(&config(), &[]);
    let binary = Binary::start(dir.path()).await;
    let url = binary.url.clone();
    let other = healthy(&url).await;

    let session = open_session(&url, "2025-11-25").await;
    let in_session = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let (status, _) = post(
        &url,
        &in_session,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, 202);

    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(LIMIT)
    );
    // (what, body, HTTP status, JSON-RPC code, id in the answer)
    let cases: Vec<(&str, Vec<u8>, u16, i64, Value)> = vec![
        ("malformed JSON", b"{\"jsonrpc\":\"2.0\",".to_vec(), 400, -32700, Value::Null),
        ("an empty body", Vec::new(), 400, -32700, Value::Null),
        ("a bare number", b"42".to_vec(), 400, -32600, Value::Null),
        (
            "JSON-RPC 1.0",
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_vec(),
            400,
            -32600,
            json!(1),
        ),
        (
            "no jsonrpc member",
            br#"{"id":"a","method":"ping"}"#.to_vec(),
            400,
            -32600,
            json!("a"),
        ),
        (
            "a fractional id",
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "a null id",
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "an object id",
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#.to_vec(),
            400,
            -32600,
            Value::Null,
        ),
        (
            "a method that is not a string",
            br#"{"jsonrpc":"2.0","id":2,"method":7}"#.to_vec(),
            400,
            -32600,
            json!(2),
        ),
        (
            "an unknown method",
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/destroy"}"#.to_vec(),
            200,
            -32601,
            json!(3),
        ),
        (
            "params that are a string",
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"getPetById"}"#.to_vec(),
            200,
            -32602,
            json!(4),
        ),
        (
            "params that are an array",
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}"#.to_vec(),
            200,
            -32602,
            json!(5),
        ),
        (
            "a numeric cursor",
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":20}}"#.to_vec(),
            200,
            -32602,
            json!(6),
        ),
        (
            "a tool name that is a number",
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#.to_vec(),
            200,
            -32602,
            json!(7),
        ),
        (
            "arguments that are an array",
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"getPetById","arguments":[1]}}"#.to_vec(),
            200,
            -32602,
            json!(8),
        ),
        (
            "a batch after 2025-03-26",
            br#"[{"jsonrpc":"2.0","id":10,"method":"ping"}]"#.to_vec(),
            400,
            -32600,
            Value::Null,
        ),
    ];
    for (what, body, status, code, id) in cases {
        let answer = post(&url, &in_session, body).await;
        refused(what, answer, status, code, id);
        still_served(&other, what).await;
    }
    let (status, _) = post(&url, &in_session, huge.into_bytes()).await;
    assert_eq!(status, 413, "a message over server.max_request_bytes");
    still_served(&other, "a huge message").await;

    // The same for a stateless 2026-07-28 request.
    let stateless = |method: &'static str| {
        [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ]
    };
    let answer = post(&url, &stateless("tools/list"), b"{\"jsonrpc\":".to_vec()).await;
    refused(
        "malformed JSON, stateless",
        answer,
        400,
        -32700,
        Value::Null,
    );
    let body =
        json!({"jsonrpc": "2.0", "id": 1.25, "method": "tools/list", "params": {"_meta": meta()}});
    let answer = post(
        &url,
        &stateless("tools/list"),
        body.to_string().into_bytes(),
    )
    .await;
    refused(
        "a fractional id, stateless",
        answer,
        400,
        -32600,
        Value::Null,
    );
    let body = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "getPetById", "arguments": "petId=1", "_meta": meta()}});
    let answer = post(
        &url,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "getPetById"),
        ],
        body.to_string().into_bytes(),
    )
    .await;
    refused(
        "string arguments, stateless",
        answer,
        200,
        -32602,
        json!(11),
    );
    still_served(&other, "the stateless cases").await;

    // Before initialization: no session, or one the server never issued.
    let list = br#"{"jsonrpc":"2.0","id":12,"method":"tools/list"}"#.to_vec();
    let (status, _) = post(
        &url,
        &[("MCP-Protocol-Version", "2025-11-25")],
        list.clone(),
    )
    .await;
    assert_eq!(status, 400, "a request without a session");
    let (status, _) = post(
        &url,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", "not-issued"),
        ],
        list,
    )
    .await;
    assert_eq!(status, 404, "a session the server never issued");
    still_served(&other, "requests before initialization").await;
    let _ = other.cancel().await;
}

#[tokio::test]
async fn a_batch_for_2025_03_26_answers_each_member_even_the_bad_ones() {
    let dir = project(&config(), &[]);
    let binary = Binary::start(dir.path()).await;
    let session = open_session(&binary.url, "2025-03-26").await;
    let headers = [
        ("MCP-Protocol-Version", "2025-03-26"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    post(
        &binary.url,
        &headers,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
    )
    .await;
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"1.0","id":2,"method":"ping"},
        {"jsonrpc":"2.0","id":true,"method":"ping"},
        {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":1}}]"#;
    let (status, answer) = post(&binary.url, &headers, batch.to_vec()).await;
    assert_eq!(status, 200);
    let answers = answer.expect("a JSON array");
    let answers = answers.as_array().expect("an array");
    let by_id = |id: Value| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("an answer with id {id}: {answers:?}"))
    };
    assert_eq!(by_id(json!(1))["result"], json!({}));
    assert_eq!(by_id(json!(2))["error"]["code"], -32600);
    assert_eq!(by_id(json!(3))["error"]["code"], -32602);
    assert_eq!(by_id(Value::Null)["error"]["code"], -32600);
    assert_eq!(answers.len(), 4, "{answers:?}");
    let (status, answer) = post(&binary.url, &headers, b"[{\"jsonrpc\"".to_vec()).await;
    assert_eq!(status, 400);
    assert_eq!(answer.expect("error")["error"]["code"], -32700);
}

#[tokio::test]
async fn a_flood_of_notifications_is_absorbed_while_another_client_is_served() {
    let dir = project(&config(), &[]);
    let binary = Binary::start(dir.path()).await;
    let other = healthy(&binary.url).await;
    let flood = {
        let url = binary.url.clone();
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut accepted = 0usize;
            let notifications = [
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 12345, "reason": "never sent"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": "t", "progress": 1}}),
                json!({"jsonrpc": "2.0", "method": "notifications/made-up"}),
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 1, "_meta": meta()}}),
            ];
            let sends = (0..2000).map(|i| {
                let request = client
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "notifications/cancelled")
                    .body(notifications[i % notifications.len()].to_string());
                async move { request.send().await.map(|r| r.status().as_u16()) }
            });
            let mut pending = futures_util::stream::iter(sends).buffer_unordered(32);
            use futures_util::StreamExt as _;
            let mut statuses = std::collections::BTreeMap::new();
            while let Some(status) = pending.next().await {
                let status = status.expect("the server answers every notification");
                *statuses.entry(status).or_insert(0usize) += 1;
                if status < 300 {
                    accepted += 1;
                }
            }
            (accepted, statuses)
        })
    };
    let mut calls = 0;
    while !flood.is_finished() {
        still_served(&other, "notifications in flight").await;
        calls += 1;
    }
    let (accepted, statuses) = flood.await.expect("flood");
    assert!(calls > 0);
    // Every notification is answered: 202 for the cancellations (of requests that do not
    // exist), 400 for the others, whose method does not match their Mcp-Method header.
    assert_eq!(
        statuses,
        std::collections::BTreeMap::from([(202, 1000), (400, 1000)]),
    );
    assert_eq!(accepted, 1000);
    still_served(&other, "the flood").await;
    let _ = other.cancel().await;
}

pub(crate) type StdoutLines = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

/// `restmcp stdio` in `dir`, with its stdin and its stdout read by lines.
pub(crate) fn spawn_stdio(
    dir: &std::path::Path,
) -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    StdoutLines,
) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .arg("stdio")
        .current_dir(dir)
        .env_remove("RESTMCP_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn restmcp stdio");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, stdin, stdout)
}

/// The next `count` lines of stdout, each a JSON message, each within 10 s.
pub(crate) async fn read_answers(stdout: &mut StdoutLines, count: usize) -> Vec<Value> {
    let mut answers = Vec::new();
    while answers.len() < count {
        let line = tokio::time::timeout(Duration::from_secs(10), stdout.next_line())
            .await
            .expect("an answer for each line within 10 s")
            .expect("read")
            .expect("a line before stdout closes");
        answers.push(serde_json::from_str::<Value>(&line).expect("every stdout line is JSON"));
    }
    answers
}

#[tokio::test]
async fn bad_lines_on_stdio_get_their_errors_and_the_session_goes_on() {
    let dir = project(&config(), &[]);
    let (mut child, mut stdin, mut stdout) = spawn_stdio(dir.path());
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":90,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(LIMIT * 3)
    );
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        r#"{"jsonrpc":"2.0","#.to_string(),
        "[]".to_string(),
        r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":[2],"method":"ping"}"#.to_string(),
        r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#.to_string(),
        huge,
        r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method"}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":{}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"getPetById","arguments":{"petId":1}}}"#.to_string(),
    ];
    for line in &lines {
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
    }
    stdin.flush().await.expect("flush");
    let answers = read_answers(&mut stdout, 10).await;
    let codes = |id: Value| -> Vec<i64> {
        answers
            .iter()
            .filter(|a| a["id"] == id)
            .filter_map(|a| a["error"]["code"].as_i64())
            .collect()
    };
    // Without an id: the parse error, the empty batch, the id that is an array, the batch
    // after 2025-03-26 and the huge line.
    let mut anonymous = codes(Value::Null);
    anonymous.sort();
    assert_eq!(
        anonymous,
        vec![-32700, -32600, -32600, -32600, -32600],
        "{answers:?}"
    );
    assert!(
        answers.iter().all(|a| a.get("id").is_some()),
        "every answer has an id member: {answers:?}"
    );
    assert_eq!(codes(json!(2)), vec![-32600]);
    assert_eq!(codes(json!(4)), vec![-32601]);
    assert_eq!(codes(json!(5)), vec![-32602]);
    let call = answers
        .iter()
        .find(|a| a["id"] == 6)
        .expect("the call after all that is answered");
    assert_ne!(call["result"]["isError"], true, "{call}");
    assert!(call["result"]["content"].is_array(), "{call}");
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 1 && a["result"].is_object())
    );
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exits when stdin closes")
        .expect("status");
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_2025_03_26_client_may_batch_over_stdio_and_each_member_is_answered() {
    let dir = project(&config(), &[]);
    let (_child, mut stdin, mut stdout) = spawn_stdio(dir.path());
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3.5,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/list"}]"#,
    ];
    for line in lines {
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
    }
    stdin.flush().await.expect("flush");
    let answers = read_answers(&mut stdout, 4).await;
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned();
    assert_eq!(by_id(json!(2)).expect("ping")["result"], json!({}));
    assert!(by_id(json!(4)).expect("list")["result"]["tools"].is_array());
    assert_eq!(
        by_id(Value::Null).expect("the bad member")["error"]["code"],
        -32600
    );
}
