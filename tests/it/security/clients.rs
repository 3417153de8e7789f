//! Hostile clients, against the real binary on loopback: a repeated
//! request id is refused at once and every SSE answer is a counted stream with a deadline;
//! one client cannot hold every session, stream or in-flight slot; and each static token is
//! a caller of its own, whose idempotency records, confirmations, handles and legacy SSE
//! session no other token reaches. Clients are told apart by their tokens (every test
//! client is on 127.0.0.1, one address).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;
use crate::upstream;

const TOKEN_A: &str = "client-a-token-5e0b7f";
const TOKEN_B: &str = "client-b-token-91c2d4";

/// The echo API (with its `slow` tool, two seconds upstream) behind tokens A and B, with
/// `server` lines added to `[server]` and `api` lines to `[apis.echo]`.
fn config(upstream: &str, server: &str, api: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n{server}\n\
         [server.auth]\ntokens_env = [\"RESTMCP_TEST_A\", \"RESTMCP_TEST_B\"]\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n{api}\n\
         [reload]\nenabled = false\n"
    )
}

async fn start(config: &str, files: &[(&str, &str)]) -> (Binary, tempfile::TempDir) {
    let dir = project(config, files);
    let binary = Binary::start_with(
        dir.path(),
        &[("RESTMCP_TEST_A", TOKEN_A), ("RESTMCP_TEST_B", TOKEN_B)],
    )
    .await;
    (binary, dir)
}

fn client() -> reqwest::Client {
    restmcp::http_client::install_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client")
}

/// A POST to `/mcp` as the client of `token`; the response, unread.
async fn send(url: &str, token: &str, session: Option<&str>, body: &Value) -> reqwest::Response {
    let mut request = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {token}"));
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    request.body(body.to_string()).send().await.expect("POST")
}

/// [`send`], read whole: status and the JSON-RPC message (from JSON or the last SSE event).
async fn post(url: &str, token: &str, session: Option<&str>, body: &Value) -> (u16, Value) {
    let response = send(url, token, session, body).await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, message_in(&text))
}

fn message_in(text: &str) -> Value {
    text.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find_map(|data| serde_json::from_str(data).ok())
        .or_else(|| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null)
}

/// An initialized session of the client of `token`; `None` when `initialize` was refused
/// (with its status).
async fn session(url: &str, token: &str) -> Result<String, u16> {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "hostile-test", "version": "1"}}});
    let response = send(url, token, None, &initialize).await;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(status);
    }
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = post(url, token, Some(&id), &initialized).await;
    assert_eq!(status, 202);
    Ok(id)
}

/// The session's GET stream, open (status 200) or refused (its status).
async fn stream(url: &str, token: &str, session: &str) -> Result<reqwest::Response, u16> {
    let response = client()
        .get(url)
        .header("accept", "text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("GET");
    match response.status().as_u16() {
        200 => Ok(response),
        status => Err(status),
    }
}

/// A `tools/call` of the two-second `slow` tool whose answer streams (it asks for progress).
fn slow_streaming(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "slow", "arguments": {}, "_meta": {"progressToken": format!("p{id}")}}})
}

fn slow_plain(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "slow", "arguments": {}}})
}

async fn healthz(url: &str) -> u16 {
    let base = url.trim_end_matches("/mcp");
    client()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

async fn scrape(url: &str) -> String {
    let base = url.trim_end_matches("/mcp");
    client()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

/// The value of the counter `series` (name and labels) in a scrape; 0 when absent.
fn counter(scrape: &str, series: &str) -> u64 {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0)
}

fn refused(scrape: &str, reason: &str) -> u64 {
    counter(
        scrape,
        &format!("restmcp_http_refused_total{{reason=\"{reason}\"}}"),
    )
}

/// A request refused because its id is already in flight in the session: 400, -32600.
fn assert_refused_in_flight(status: u16, message: &Value) {
    assert_eq!(status, 400, "{message}");
    assert_eq!(message["error"]["code"], -32600, "{message}");
    assert!(
        message["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already in flight")),
        "{message}"
    );
}

/// The `tools/call` requests counted for protocol 2025-11-25 in a scrape.
fn calls_counted(scrape: &str) -> u64 {
    counter(
        scrape,
        r#"restmcp_mcp_requests_total{method="tools/call",protocol_version="2025-11-25"}"#,
    )
}

/// A plain `tools/call` (no `_meta`, a JSON answer) in a session is answered without
/// reading the message into a tree: it is counted, and its id is held in flight, as any
/// other request's.
#[tokio::test]
async fn a_plain_call_is_counted_and_its_id_held_in_flight() {
    let upstream = upstream::start().await;
    let (binary, _dir) = start(&config(&upstream.url(), "", ""), &[]).await;
    let url = binary.url.clone();
    let id = session(&url, TOKEN_A).await.expect("a session");
    let before = calls_counted(&scrape(&url).await);

    let first = {
        let (url, id) = (url.clone(), id.clone());
        tokio::spawn(async move { post(&url, TOKEN_A, Some(&id), &slow_plain(7)).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, message) = post(&url, TOKEN_A, Some(&id), &slow_plain(7)).await;
    assert_refused_in_flight(status, &message);
    let (status, answer) = first.await.expect("the first call");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(calls_counted(&scrape(&url).await) - before, 2);
}

#[tokio::test]
async fn a_repeated_request_id_is_refused_at_once_and_the_first_answer_still_ends() {
    let upstream = upstream::start().await;
    let (binary, _dir) = start(&config(&upstream.url(), "", ""), &[]).await;
    let url = binary.url.clone();
    let id = session(&url, TOKEN_A).await.expect("a session");

    // The first request streams its answer (it asked for progress).
    let first = send(&url, TOKEN_A, Some(&id), &slow_streaming(7)).await;
    assert_eq!(first.status(), 200);
    // The same id again, while the first is in flight: refused at once, whatever method.
    let started = Instant::now();
    let again = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
    let (status, message) = post(&url, TOKEN_A, Some(&id), &again).await;
    assert_refused_in_flight(status, &message);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused at once"
    );
    // The first answer arrives and its stream ends (before the fix it never did).
    let text = tokio::time::timeout(Duration::from_secs(10), first.text())
        .await
        .expect("the first answer's stream ends")
        .expect("body");
    let answer = message_in(&text);
    assert_eq!(answer["id"], 7, "{text}");
    assert!(answer.to_string().contains("late"), "{answer}");
    // Once answered, the id may be used again; other ids were never held up.
    let (status, message) = post(&url, TOKEN_A, Some(&id), &again).await;
    assert_eq!(status, 200, "{message}");
    assert!(message["result"]["tools"].is_array(), "{message}");
}

#[tokio::test]
async fn every_sse_answer_is_a_counted_stream_and_healthz_keeps_answering() {
    let upstream = upstream::start().await;
    let server = "max_sse_streams = 3\nmax_streams_per_client = 2";
    let (binary, _dir) = start(&config(&upstream.url(), server, ""), &[]).await;
    let url = binary.url.clone();
    let a = session(&url, TOKEN_A).await.expect("A's session");
    let b = session(&url, TOKEN_B).await.expect("B's session");

    // A holds two SSE answers: its share.
    let mut held = Vec::new();
    for id in 1..=2 {
        let answer = send(&url, TOKEN_A, Some(&a), &slow_streaming(id)).await;
        assert_eq!(answer.status(), 200);
        held.push(answer);
    }
    let response = send(&url, TOKEN_A, Some(&a), &slow_streaming(3)).await;
    assert_eq!(response.status(), 429, "A's third stream");
    // B has its own share, up to the server's cap of three.
    let answer = send(&url, TOKEN_B, Some(&b), &slow_streaming(4)).await;
    assert_eq!(answer.status(), 200);
    held.push(answer);
    let response = send(&url, TOKEN_B, Some(&b), &slow_streaming(5)).await;
    assert_eq!(response.status(), 503, "the server's cap");
    // Plain JSON answers are no streams, and the server answers its probes.
    let (status, message) = post(
        &url,
        TOKEN_B,
        Some(&b),
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 200, "{message}");
    assert_eq!(healthz(&url).await, 200);
    // Each answer ends with its result, and its slot comes back.
    for answer in held {
        let text = answer.text().await.expect("body");
        assert!(text.contains("late"), "{text}");
    }
    let again = send(&url, TOKEN_A, Some(&a), &slow_streaming(7)).await;
    assert_eq!(again.status(), 200);
    assert!(again.text().await.expect("body").contains("late"));
    let scrape = scrape(&url).await;
    assert_eq!(refused(&scrape, "too_many_client_streams"), 1, "{scrape}");
    assert_eq!(refused(&scrape, "too_many_streams"), 1, "{scrape}");
}

#[tokio::test]
async fn one_client_holding_every_session_with_a_stream_gives_one_up_for_another() {
    let upstream = upstream::start().await;
    let (binary, _dir) = start(&config(&upstream.url(), "max_sessions = 4", ""), &[]).await;
    let url = binary.url.clone();
    // A takes the whole table, each session with its GET stream open (busy, not idle).
    let mut sessions = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..4 {
        let id = session(&url, TOKEN_A).await.expect("A's session");
        streams.push(stream(&url, TOKEN_A, &id).await.expect("A's stream"));
        sessions.push(id);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // B still gets a session: the client holding the most gives up the one unused the
    // longest (before the per-client session cap, every initialize got 503).
    let b = session(&url, TOKEN_B).await.expect("B is served");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, _) = post(&url, TOKEN_B, Some(&b), &list).await;
    assert_eq!(status, 200);
    let (status, _) = post(&url, TOKEN_A, Some(&sessions[0]), &list).await;
    assert_eq!(status, 404, "A's oldest session was closed");
    for kept in &sessions[1..] {
        let (status, _) = post(&url, TOKEN_A, Some(kept), &list).await;
        assert_eq!(status, 200, "A's other sessions stay");
    }
    // A's next initialize makes room from A's own sessions, never B's only one.
    session(&url, TOKEN_A).await.expect("A again");
    let (status, _) = post(&url, TOKEN_B, Some(&b), &list).await;
    assert_eq!(status, 200, "B's only session stays");
    assert_eq!(healthz(&url).await, 200);
    drop(streams);
}

#[tokio::test]
async fn a_client_at_its_own_session_cap_closes_its_own_and_is_refused_when_all_are_busy() {
    let upstream = upstream::start().await;
    let server = "max_sessions_per_client = 2";
    let (binary, _dir) = start(&config(&upstream.url(), server, ""), &[]).await;
    let url = binary.url.clone();
    let first = session(&url, TOKEN_A).await.expect("1st");
    let second = session(&url, TOKEN_A).await.expect("2nd");
    // Both busy: A's third initialize has nothing of its own to close.
    let calls: Vec<_> = [&first, &second]
        .into_iter()
        .enumerate()
        .map(|(n, id)| {
            let (url, id) = (url.clone(), id.clone());
            tokio::spawn(async move { post(&url, TOKEN_A, Some(&id), &slow_plain(n as u64)).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(session(&url, TOKEN_A).await.err(), Some(429));
    // Another client is not held to A's share.
    session(&url, TOKEN_B).await.expect("B is served");
    for call in calls {
        let (status, message) = call.await.expect("joined");
        assert_eq!(status, 200, "{message}");
    }
    // Idle again: the third closes A's session unused the longest (the second was used
    // just now).
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    assert_eq!(post(&url, TOKEN_A, Some(&second), &list).await.0, 200);
    session(&url, TOKEN_A).await.expect("3rd");
    assert_eq!(post(&url, TOKEN_A, Some(&first), &list).await.0, 404);
    assert_eq!(post(&url, TOKEN_A, Some(&second), &list).await.0, 200);
    let scrape = scrape(&url).await;
    assert_eq!(refused(&scrape, "too_many_client_sessions"), 1, "{scrape}");
}

#[tokio::test]
async fn the_in_flight_limit_counts_a_client_over_all_its_sessions() {
    let upstream = upstream::start().await;
    let server = "max_in_flight_per_client = 2";
    let (binary, _dir) = start(&config(&upstream.url(), server, ""), &[]).await;
    let url = binary.url.clone();
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(session(&url, TOKEN_A).await.expect("A's session"));
    }
    let mut calls = Vec::new();
    for (n, id) in sessions[..2].iter().enumerate() {
        let (url, id) = (url.clone(), id.clone());
        calls.push(tokio::spawn(async move {
            post(&url, TOKEN_A, Some(&id), &slow_plain(n as u64)).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    // A third session does not buy A a fresh budget.
    let (status, message) = post(&url, TOKEN_A, Some(&sessions[2]), &slow_plain(3)).await;
    assert_eq!(status, 429, "{message}");
    assert!(message.to_string().contains("at most 2"), "{message}");
    // B's budget is its own.
    let b = session(&url, TOKEN_B).await.expect("B");
    let (status, message) = post(&url, TOKEN_B, Some(&b), &slow_plain(4)).await;
    assert_eq!(status, 200, "{message}");
    for call in calls {
        assert_eq!(call.await.expect("joined").0, 200);
    }
}

/// An echo API whose `updateItem` needs confirmation and whose POST tools take idempotency
/// keys, beside a jobs API whose operation outlives its one-second time limit.
fn bound_config(upstream: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\nidentity_key_env = \"RESTMCP_TEST_KEY\"\n\
         [server.auth]\ntokens_env = [\"RESTMCP_TEST_A\", \"RESTMCP_TEST_B\"]\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n\
         idempotency_header = \"Idempotency-Key\"\noverlays = [\"confirm.overlay.yaml\"]\n\
         [apis.jobs]\nspec = \"specs/jobs.yaml\"\nbase_url = \"{upstream}\"\ntimeout_seconds = 1\n\
         [reload]\nenabled = false\n"
    )
}

const JOBS: &str = "openapi: 3.0.3
info: {title: jobs, version: '1'}
paths:
  /_/jobs:
    post:
      operationId: startJob
      responses:
        '202': {description: accepted}
";

const IDENTITY_KEY: &str = "the identity key of this test deployment, 32+";

/// One stateless 2026-07-28 `tools/call` as the client of `token`.
async fn call(url: &str, token: &str, name: &str, params: Value) -> Value {
    let bearer = format!("Bearer {token}");
    crate::support::stateless_call(url, name, params, &[("authorization", &bearer)]).await
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"].to_string()
}

#[tokio::test]
async fn each_static_token_is_a_caller_of_its_own() {
    let upstream = upstream::start().await;
    let dir = project(
        &bound_config(&upstream.url()),
        &[
            (
                "confirm.overlay.yaml",
                "tools:\n  updateItem: {confirm: true}\n",
            ),
            ("specs/jobs.yaml", JOBS),
        ],
    );
    let binary = Binary::start_with(
        dir.path(),
        &[
            ("RESTMCP_TEST_A", TOKEN_A),
            ("RESTMCP_TEST_B", TOKEN_B),
            ("RESTMCP_TEST_KEY", IDENTITY_KEY),
        ],
    )
    .await;
    let url = binary.url.clone();
    let sent = || upstream.counters.all.load(Ordering::SeqCst);

    // Idempotency keys are per caller: B's call with A's key is B's own, sent.
    let charge = json!({"arguments": {"amount": 5, "idempotency_key": "order-1"}});
    let before = sent();
    let first = call(&url, TOKEN_A, "createCharge", charge.clone()).await;
    assert_eq!(first["result"]["isError"], false, "{first}");
    let repeat = call(&url, TOKEN_A, "createCharge", charge.clone()).await;
    assert_eq!(
        repeat["result"]["_meta"]["io.restmcp/idempotentReplay"],
        true
    );
    assert_eq!(
        repeat["result"]["content"], first["result"]["content"],
        "A's repeat is A's stored result"
    );
    assert_eq!(sent(), before + 1);
    let other = call(&url, TOKEN_B, "createCharge", charge).await;
    assert_eq!(other["result"]["isError"], false, "{other}");
    assert_eq!(
        sent(),
        before + 2,
        "B's call is sent, not answered with A's result"
    );

    // A confirmation A was asked is A's to answer: B's answer with A's state is refused.
    let arguments = json!({"id__path": 7, "name": "Rex"});
    let asked = call(&url, TOKEN_A, "updateItem", json!({"arguments": arguments})).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().expect("state");
    let answer = json!({"arguments": arguments, "requestState": state,
                        "inputResponses": {"confirm": {"action": "accept"}}});
    let before = sent();
    let stolen = call(&url, TOKEN_B, "updateItem", answer.clone()).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    assert_eq!(sent(), before, "B's answer sends nothing");
    let done = call(&url, TOKEN_A, "updateItem", answer).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(sent(), before + 1);

    // An operation's handle is A's: B cannot look at it.
    let started = call(&url, TOKEN_A, "startJob", json!({"arguments": {}})).await;
    let said = text_of(&started);
    let start = said.find("handle \\\"").expect("a handle") + "handle \\\"".len();
    let end = said[start..].find("\\\"").expect("end") + start;
    let handle = &said[start..end];
    let looked = call(
        &url,
        TOKEN_B,
        "operation_status",
        json!({"arguments": {"handle": handle}}),
    )
    .await;
    assert_eq!(looked["result"]["isError"], true, "{looked}");
    assert!(
        text_of(&looked).contains("Unknown operation handle"),
        "{looked}"
    );
    let own = call(
        &url,
        TOKEN_A,
        "operation_status",
        json!({"arguments": {"handle": handle}}),
    )
    .await;
    assert_ne!(own["result"]["isError"], true, "{own}");

    // The call log and metrics name each token by its keyed pseudonym, never the token.
    let pseudonyms = restmcp::identity::Pseudonyms::new(IDENTITY_KEY.as_bytes());
    let (a, b) = (pseudonyms.of_token(TOKEN_A), pseudonyms.of_token(TOKEN_B));
    assert!(binary.wait_for_log(&b, Duration::from_secs(5)).await);
    let log = binary.log();
    assert!(log.contains(&a), "{log}");
    assert!(!log.contains(TOKEN_A) && !log.contains(TOKEN_B), "{log}");
    let scrape = client()
        .get(url.replace("/mcp", "/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        scrape.contains(&format!(
            "restmcp_caller_tool_calls_total{{caller=\"{b}\"}}"
        )),
        "{scrape}"
    );
}

#[tokio::test]
async fn a_legacy_sse_session_is_the_token_s_that_opened_it() {
    let upstream = upstream::start().await;
    let (binary, _dir) = start(&config(&upstream.url(), "", ""), &[]).await;
    let base = binary.url.trim_end_matches("/mcp").to_string();
    let events = client()
        .get(format!("{base}/sse"))
        .header("authorization", format!("Bearer {TOKEN_A}"))
        .send()
        .await
        .expect("GET /sse");
    assert_eq!(events.status(), 200);
    let mut events = events.bytes_stream();
    let mut seen = String::new();
    let endpoint = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .expect("the endpoint event")
            .expect("a chunk")
            .expect("bytes");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(line) = seen.lines().find_map(|l| l.strip_prefix("data: /message")) {
            break format!("{base}/message{line}");
        }
    };
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let to = |token: &str| {
        client()
            .post(&endpoint)
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"))
            .body(ping.to_string())
            .send()
    };
    // B knows A's session id, and is told it does not exist.
    assert_eq!(to(TOKEN_B).await.expect("POST").status(), 404);
    assert_eq!(to(TOKEN_A).await.expect("POST").status(), 202);
    let scrape = scrape(&binary.url).await;
    assert_eq!(refused(&scrape, "foreign_session"), 1, "{scrape}");
}

/// Sends `head` on `stream`, then (once the server had time to answer from the head alone)
/// `body`, and reads one answer: its head, and its body by Content-Length.
async fn late_body(stream: &mut tokio::net::TcpStream, head: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(head.as_bytes()).await.expect("head");
    tokio::time::sleep(Duration::from_millis(150)).await;
    stream.write_all(body.as_bytes()).await.expect("body");
    let mut seen = Vec::new();
    let read = async {
        loop {
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await.expect("read");
            if n == 0 {
                return format!("{}<closed>", String::from_utf8_lossy(&seen));
            }
            seen.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&seen).into_owned();
            let Some(end) = text.find("\r\n\r\n") else {
                continue;
            };
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|n| n.trim().to_string())
                })
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return text;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("an answer within 5 s")
}

#[tokio::test]
async fn a_request_refused_before_its_body_arrived_leaves_its_connection_usable() {
    let upstream = upstream::start().await;
    let (binary, _dir) = start(&config(&upstream.url(), "", ""), &[]).await;
    let authority = binary
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut stream = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("connect");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let post = |target: &str, token: Option<&str>| {
        let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
        format!(
            "POST {target} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\r\n",
            body.len()
        )
    };
    // Refused by the guard (no token), then by the legacy SSE endpoint (no such session),
    // each from the head alone, and each on the connection the one before left open.
    let unauthorized = late_body(&mut stream, &post("/mcp", None), &body).await;
    assert!(unauthorized.starts_with("HTTP/1.1 401"), "{unauthorized}");
    let unknown = late_body(
        &mut stream,
        &post("/message?sessionId=none", Some(TOKEN_B)),
        &body,
    )
    .await;
    assert!(
        unknown.starts_with("HTTP/1.1 404"),
        "the connection was kept: {unknown}"
    );
    let health = late_body(
        &mut stream,
        &format!("GET /healthz HTTP/1.1\r\nHost: {authority}\r\n\r\n"),
        "",
    )
    .await;
    assert!(
        health.starts_with("HTTP/1.1 200"),
        "the connection was kept: {health}"
    );
}

/// An address of this machine other than loopback (the one it would reach the network
/// from), when it has one: found with an unconnected UDP socket, nothing is sent.
pub(super) fn outward_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test]
async fn readiness_detail_and_metrics_are_for_the_operator_only() {
    let Some(outward) = outward_address() else {
        eprintln!("skipped: this machine has no address but loopback");
        return;
    };
    // An API whose upstream is down: a port that was free a moment ago.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("addr");
    let config = format!(
        "[server]\nlisten = \"0.0.0.0:0\"\nallowed_hosts = []\n\
         metrics_token_env = \"RESTMCP_TEST_METRICS\"\n\
         [server.readiness]\nprobe_upstreams = true\ninterval_seconds = 0.2\ntimeout_seconds = 1\n\
         [apis.down]\nspec = \"specs/echo.yaml\"\nbase_url = \"http://{closed}\"\n\
         [reload]\nenabled = false\n"
    );
    let dir = project(&config, &[]);
    let binary =
        Binary::start_with(dir.path(), &[("RESTMCP_TEST_METRICS", "metrics-key-3c9a")]).await;
    let port = binary
        .url
        .rsplit(':')
        .next()
        .and_then(|rest| rest.trim_end_matches("/mcp").parse::<u16>().ok())
        .expect("a port");
    let at = |host: std::net::IpAddr, path: &str| match host {
        std::net::IpAddr::V6(v6) => format!("http://[{v6}]:{port}{path}"),
        host => format!("http://{host}:{port}{path}"),
    };
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    let ready = |host, token: Option<&'static str>| {
        let url = at(host, "/readyz");
        async move {
            let mut deadline = 50;
            loop {
                let mut request = client().get(&url);
                if let Some(token) = token {
                    request = request.bearer_auth(token);
                }
                let body: Value = request
                    .send()
                    .await
                    .expect("GET /readyz")
                    .json()
                    .await
                    .expect("JSON");
                if body["status"] != "probing" || deadline == 0 {
                    return body;
                }
                deadline -= 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    // On this machine, the prober sees each API's probe (its upstream and the error).
    let local = ready(loopback, None).await;
    assert_eq!(local["status"], "upstream unreachable", "{local}");
    assert!(local["apis"]["down"]["url"].is_string(), "{local}");
    // From elsewhere, only the verdict and a count: no internal URL, no error text.
    let remote = ready(outward, None).await;
    assert_eq!(remote["status"], "upstream unreachable", "{remote}");
    assert_eq!(remote["unreachable_apis"], 1, "{remote}");
    assert!(
        !remote.to_string().contains(&closed.to_string()),
        "{remote}"
    );
    // With the metrics token, from elsewhere too.
    let trusted = ready(outward, Some("metrics-key-3c9a")).await;
    assert!(trusted["apis"]["down"]["error"].is_string(), "{trusted}");

    // /metrics takes its token, from any address.
    for host in [loopback, outward] {
        let url = at(host, "/metrics");
        let status = client().get(&url).send().await.expect("GET").status();
        assert_eq!(status, 401, "{url}");
        let wrong = client()
            .get(&url)
            .bearer_auth("nope")
            .send()
            .await
            .expect("GET");
        assert_eq!(wrong.status(), 401, "{url}");
        let right = client()
            .get(&url)
            .bearer_auth("metrics-key-3c9a")
            .send()
            .await
            .expect("GET");
        assert_eq!(right.status(), 200, "{url}");
    }
}
