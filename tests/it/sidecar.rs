//! Running as a sidecar: health and readiness, metrics, logs and trace context,
//! inbound authentication, Host/Origin/body checks, limits, CORS and graceful shutdown —
//! all against the real binary on loopback.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;
use crate::support::call;
use crate::upstream::{self, SECRET_TOKEN};

type Client = rmcp::service::RunningService<RoleClient, ()>;

const INBOUND_TOKEN: &str = "inbound-7c1e-token-value";
const FIXED_SECRET: &str = "fixed-hidden-9d2b-value";

fn base(binary: &Binary) -> String {
    binary.url.trim_end_matches("/mcp").to_string()
}

async fn client(binary: &Binary, token: Option<&str>, headers: &[(&str, &str)]) -> Client {
    restmcp::http_client::install_crypto_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(binary.url.clone());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let custom: HashMap<_, _> = headers
        .iter()
        .map(|(name, value)| {
            (
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                axum::http::HeaderValue::from_str(value).expect("value"),
            )
        })
        .collect();
    config = config.custom_headers(custom);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("initialize")
}

async fn get(url: &str) -> (u16, String) {
    restmcp::http_client::install_crypto_provider();
    let response = reqwest::get(url).await.expect("GET");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// The value of one series in a Prometheus scrape (0 when absent).
fn series(scrape: &str, name: &str) -> u64 {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0)
}

/// A raw JSON-RPC POST to a stateless server, as a 2025-06-18 client sends it.
async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, String) {
    restmcp::http_client::install_crypto_provider();
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.body(body.to_string()).send().await.expect("POST");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap_or_default())
}

fn tool_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

fn echo_config(upstream: &str, extra: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n{extra}\n[apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n[reload]\nenabled = false\n"
    )
}

#[tokio::test]
async fn health_is_open_and_readiness_reports_each_upstream() {
    let upstream = upstream::start().await;
    // A second API whose upstream is down: a port that was free a moment ago.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[server.auth]\ntokens_env = [\"RESTMCP_TEST_INBOUND\"]\n\
         [server.readiness]\nprobe_upstreams = true\ninterval_seconds = 0.2\ntimeout_seconds = 1\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\nprobe_path = \"/_/status/204\"\n\
         [apis.down]\nspec = \"specs/echo.yaml\"\nbase_url = \"http://{closed}\"\nprefix = \"down_\"\n\
         [reload]\nenabled = false\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start_with(dir.path(), &[("RESTMCP_TEST_INBOUND", INBOUND_TOKEN)]).await;
    let base = base(&binary);
    // Probes and health endpoints need no token, even with [server.auth].
    assert_eq!(get(&format!("{base}/healthz")).await, (200, "ok".into()));
    let deadline = Instant::now() + Duration::from_secs(5);
    let ready = loop {
        let (status, body) = get(&format!("{base}/readyz")).await;
        let body: Value = serde_json::from_str(&body).expect("JSON");
        // Both probed: each API's first probe ends on its own time.
        let probed = |api: &str| body["apis"][api]["reachable"].is_boolean();
        if (probed("down") && probed("echo")) || Instant::now() > deadline {
            break (status, body);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(ready.0, 503, "{}", ready.1);
    assert_eq!(ready.1["status"], "upstream unreachable");
    assert_eq!(ready.1["apis"]["echo"]["reachable"], true);
    assert_eq!(ready.1["apis"]["echo"]["status"], 204);
    assert!(
        ready.1["apis"]["echo"]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/_/status/204"))
    );
    assert_eq!(ready.1["apis"]["down"]["reachable"], false);
    assert!(ready.1["apis"]["down"]["error"].is_string());
    assert!(ready.1["tools"].as_u64().is_some_and(|n| n > 10));
}

#[tokio::test]
async fn readiness_is_ready_once_loaded_without_probes() {
    let upstream = upstream::start().await;
    let dir = project(&echo_config(&upstream.url(), ""), &[]);
    let binary = Binary::start(dir.path()).await;
    let (status, body) = get(&format!("{}/readyz", base(&binary))).await;
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!((status, body["status"].as_str()), (200, Some("ready")));
    assert!(body.get("apis").is_none(), "no probes configured: {body}");
}

#[tokio::test]
async fn metrics_move_by_exactly_the_calls_made() {
    let upstream = upstream::start().await;
    let dir = project(&echo_config(&upstream.url(), ""), &[]);
    let binary = Binary::start(dir.path()).await;
    let metrics_url = format!("{}/metrics", base(&binary));
    let client = client(&binary, None, &[]).await;
    let (status, before) = get(&metrics_url).await;
    assert_eq!(status, 200);
    for id in ["1", "2", "3"] {
        let result = call(&client, "getItem", json!({"id": id})).await;
        assert_ne!(result.is_error, Some(true));
    }
    let failed = call(&client, "status", json!({"code": 404})).await;
    assert_eq!(failed.is_error, Some(true));
    let invalid = call(&client, "getItem", json!({"id": {"not": "a string"}})).await;
    assert_eq!(invalid.is_error, Some(true));
    let (_, after) = get(&metrics_url).await;
    let moved = |name: &str| series(&after, name) - series(&before, name);
    assert_eq!(
        moved(r#"restmcp_tool_calls_total{api="echo",tool="getItem",outcome="ok"}"#),
        3
    );
    assert_eq!(
        moved(r#"restmcp_tool_calls_total{api="echo",tool="status",outcome="upstream_4xx"}"#),
        1
    );
    assert_eq!(
        moved(r#"restmcp_tool_calls_total{api="echo",tool="getItem",outcome="tool_error"}"#),
        1
    );
    assert_eq!(
        moved(r#"restmcp_tool_call_duration_seconds_count{api="echo"}"#),
        5
    );
    // The invalid call never reached the upstream.
    assert_eq!(
        moved(r#"restmcp_upstream_request_duration_seconds_count{api="echo"}"#),
        4
    );
    let calls: u64 = after
        .lines()
        .filter(|l| l.starts_with(r#"restmcp_mcp_requests_total{method="tools/call""#))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum::<u64>()
        - before
            .lines()
            .filter(|l| l.starts_with(r#"restmcp_mcp_requests_total{method="tools/call""#))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum::<u64>();
    assert_eq!(calls, 5, "{after}");
    assert!(series(&after, "restmcp_sessions") >= 1, "{after}");
    assert_eq!(series(&after, "restmcp_tool_calls_in_flight"), 0);
    assert!(after.contains("# TYPE restmcp_tool_call_duration_seconds histogram"));
}

#[tokio::test]
async fn the_mcp_endpoint_wants_the_token_and_nothing_else_does() {
    let upstream = upstream::start().await;
    let extra =
        "[server.auth]\ntokens_env = [\"RESTMCP_TEST_INBOUND\"]\napi_key_header = \"X-API-Key\"\n";
    let dir = project(&echo_config(&upstream.url(), extra), &[]);
    let binary = Binary::start_with(dir.path(), &[("RESTMCP_TEST_INBOUND", INBOUND_TOKEN)]).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let (status, headers, _) = post(&binary.url, &[], &initialize).await;
    assert_eq!(status, 401);
    assert_eq!(headers["www-authenticate"], r#"Bearer realm="restmcp""#);
    let (status, headers, body) = post(
        &binary.url,
        &[("authorization", "Bearer not-the-token")],
        &initialize,
    )
    .await;
    assert_eq!(status, 401);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .expect("ascii")
            .contains("invalid_token")
    );
    assert!(!body.contains("not-the-token"));
    let bearer = format!("Bearer {INBOUND_TOKEN}");
    let (status, _, _) = post(&binary.url, &[("authorization", &bearer)], &initialize).await;
    assert_eq!(status, 200);
    let (status, _, _) = post(&binary.url, &[("x-api-key", INBOUND_TOKEN)], &initialize).await;
    assert_eq!(status, 200);
    // A real client with the token lists and calls tools.
    let client = client(&binary, Some(INBOUND_TOKEN), &[]).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "getItem"));
    assert_ne!(
        call(&client, "getItem", json!({"id": "7"})).await.is_error,
        Some(true)
    );
    assert_eq!(get(&format!("{}/healthz", base(&binary))).await.0, 200);
    let (status, scrape) = get(&format!("{}/metrics", base(&binary))).await;
    assert_eq!(status, 200, "metrics are open unless protect_metrics");
    assert_eq!(
        series(
            &scrape,
            r#"restmcp_http_refused_total{reason="unauthorized"}"#
        ),
        2
    );
}

#[tokio::test]
async fn foreign_origins_and_hosts_get_403_and_big_bodies_413() {
    let upstream = upstream::start().await;
    let dir = project(
        &echo_config(
            &upstream.url(),
            "max_request_bytes = 2048\nsessions = false\n",
        ),
        &[],
    );
    let binary = Binary::start(dir.path()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, _, body) = post(&binary.url, &[("origin", "https://evil.example")], &list).await;
    assert_eq!(
        (status, body.as_str()),
        (403, "Forbidden: Origin header is not allowed")
    );
    let (status, _, _) = post(&binary.url, &[("origin", "null")], &list).await;
    assert_eq!(status, 403);
    let (status, _, _) = post(&binary.url, &[("host", "evil.example")], &list).await;
    assert_eq!(status, 403);
    // A page served from the same loopback host is fine.
    let (status, _, body) = post(&binary.url, &[("origin", "http://localhost:5173")], &list).await;
    assert_eq!(status, 200, "{body}");
    // The legacy SSE transport has the same rules.
    let (status, _) = {
        restmcp::http_client::install_crypto_provider();
        let response = reqwest::Client::new()
            .get(format!("{}/sse", base(&binary)))
            .header("origin", "https://evil.example")
            .send()
            .await
            .expect("GET /sse");
        (response.status().as_u16(), ())
    };
    assert_eq!(status, 403);
    let big = tool_call(2, "createCharge", json!({"note": "x".repeat(4096)}));
    let (status, _, _) = post(&binary.url, &[], &big).await;
    assert_eq!(status, 413);
    let (_, scrape) = get(&format!("{}/metrics", base(&binary))).await;
    assert_eq!(
        series(
            &scrape,
            r#"restmcp_http_refused_total{reason="forbidden_origin"}"#
        ),
        3
    );
    assert_eq!(
        series(
            &scrape,
            r#"restmcp_http_refused_total{reason="forbidden_host"}"#
        ),
        1
    );
    assert_eq!(
        series(&scrape, r#"restmcp_http_refused_total{reason="too_large"}"#),
        1
    );
}

#[tokio::test]
async fn cors_is_answered_only_when_configured() {
    let upstream = upstream::start().await;
    restmcp::http_client::install_crypto_provider();
    let preflight = |url: String| async move {
        reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, url)
            .header("origin", "https://app.example.com")
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type, mcp-session-id",
            )
            .send()
            .await
            .expect("OPTIONS")
    };
    let extra = "cors_origins = [\"https://app.example.com\"]\n[server.auth]\ntokens_env = [\"RESTMCP_TEST_INBOUND\"]\n";
    let dir = project(&echo_config(&upstream.url(), extra), &[]);
    let binary = Binary::start_with(dir.path(), &[("RESTMCP_TEST_INBOUND", INBOUND_TOKEN)]).await;
    let response = preflight(binary.url.clone()).await;
    assert!(response.status().is_success(), "{}", response.status());
    let headers = response.headers();
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example.com"
    );
    let allowed = headers["access-control-allow-headers"]
        .to_str()
        .expect("ascii")
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization") && allowed.contains("mcp-session-id"));

    let dir = project(&echo_config(&upstream.url(), ""), &[]);
    let plain = Binary::start(dir.path()).await;
    let response = preflight(plain.url.clone()).await;
    assert!(
        response
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn each_client_has_an_in_flight_limit_and_tools_a_rate_limit() {
    let upstream = upstream::start().await;
    let extra = "sessions = false\nmax_in_flight_per_client = 1\n[server.auth]\ntokens_env = [\"RESTMCP_TEST_A\", \"RESTMCP_TEST_B\"]\n";
    let config = echo_config(&upstream.url(), extra)
        + "[apis.echo.tool_rate_limits]\ngetItem = { per_second = 0.02, burst = 2 }\n";
    let dir = project(&config, &[]);
    let binary = Binary::start_with(
        dir.path(),
        &[("RESTMCP_TEST_A", "token-a"), ("RESTMCP_TEST_B", "token-b")],
    )
    .await;
    let url = binary.url.clone();
    let slow = {
        let url = url.clone();
        tokio::spawn(async move {
            post(
                &url,
                &[("authorization", "Bearer token-a")],
                &tool_call(1, "slow", json!({})),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, headers, body) = post(
        &url,
        &[("authorization", "Bearer token-a")],
        &tool_call(2, "getItem", json!({"id": "1"})),
    )
    .await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(headers["retry-after"], "1");
    let error: Value = serde_json::from_str(&body).expect("JSON-RPC error");
    assert_eq!(error["id"], 2);
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 1"))
    );
    // Another client is not held up by the first one's call.
    let (status, _, body) = post(
        &url,
        &[("authorization", "Bearer token-b")],
        &tool_call(3, "getItem", json!({"id": "1"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = slow.await.expect("joined");
    assert_eq!(status, 200);
    assert!(body.contains("late"), "{body}");
    // The rate limit: a burst of two, then an error result saying when to retry.
    for id in 4..=4 {
        let (_, _, body) = post(
            &url,
            &[("authorization", "Bearer token-b")],
            &tool_call(id, "getItem", json!({"id": "1"})),
        )
        .await;
        assert!(!body.contains("rate-limited"), "{body}");
    }
    let (status, _, body) = post(
        &url,
        &[("authorization", "Bearer token-b")],
        &tool_call(5, "getItem", json!({"id": "1"})),
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("rate-limited") && text.contains("Retry in"),
        "{text}"
    );
    let (_, scrape) = get(&format!("{}/metrics", base(&binary))).await;
    assert_eq!(
        series(
            &scrape,
            r#"restmcp_tool_calls_total{api="echo",tool="getItem",outcome="rate_limited"}"#
        ),
        1
    );
    assert_eq!(
        series(
            &scrape,
            r#"restmcp_http_refused_total{reason="too_many_in_flight"}"#
        ),
        1
    );
}

/// The call's line in the default log (pretty, no colours: stderr is not a terminal), which
/// restmcp writes without `tracing`'s dispatch: one line per call, in the subscriber's own
/// form, WARN for an upstream 5xx.
fn call_line<'a>(log: &'a str, level: &str, tool: &str) -> Option<&'a str> {
    let head = format!("  {level} restmcp::call: tool call request_id=");
    log.lines().find(|line| {
        line.split_once(head.as_str()).is_some_and(|(time, rest)| {
            time.len() == 27 && time.ends_with('Z') && rest.contains(&format!(" tool=\"{tool}\""))
        })
    })
}

#[tokio::test]
async fn each_call_logs_one_pretty_line_and_the_filter_still_decides() {
    let upstream = upstream::start().await;
    let dir = project(&echo_config(&upstream.url(), ""), &[]);
    let binary = Binary::start(dir.path()).await;
    let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let first = client(&binary, None, &[("traceparent", incoming)]).await;
    let _ = call(&first, "getItem", json!({"id": "42"})).await;
    let _ = call(&first, "status", json!({"code": 503})).await;
    assert!(
        binary
            .wait_for_log("outcome=\"upstream_5xx\"", Duration::from_secs(5))
            .await,
        "{}",
        binary.log()
    );
    let log = binary.log();
    let ok = call_line(&log, "INFO", "getItem").expect("an INFO line for getItem");
    let (_, fields) = ok.split_once(" request_id=").expect("request_id");
    let (request_id, fields) = fields.split_once(' ').expect("fields");
    assert!(request_id.bytes().all(|b| b.is_ascii_hexdigit()), "{ok}");
    assert!(
        fields.starts_with("tool=\"getItem\" api=\"echo\" outcome=\"ok\" status=200 duration_ms="),
        "{ok}"
    );
    assert!(
        fields.ends_with(" attempts=1 trace_id=\"4bf92f3577b34da6a3ce929d0e0e4736\""),
        "{ok}"
    );
    let failed = call_line(&log, "WARN", "status").expect("a WARN line for the 5xx");
    assert!(
        failed.contains(" outcome=\"upstream_5xx\" status=503 "),
        "{failed}"
    );
    assert_eq!(
        log.matches(" restmcp::call: tool call ").count(),
        2,
        "one line per call:\n{log}"
    );

    // `RUST_LOG` still decides which call lines are written.
    let filtered = Binary::start_with(dir.path(), &[("RUST_LOG", "info,restmcp::call=warn")]).await;
    let second = client(&filtered, None, &[]).await;
    let _ = call(&second, "getItem", json!({"id": "42"})).await;
    let _ = call(&second, "status", json!({"code": 503})).await;
    assert!(
        filtered
            .wait_for_log("outcome=\"upstream_5xx\"", Duration::from_secs(5))
            .await
    );
    let log = filtered.log();
    assert!(call_line(&log, "INFO", "getItem").is_none(), "{log}");
}

#[tokio::test]
async fn trace_context_reaches_the_upstream_and_each_call_logs_one_json_line() {
    let upstream = upstream::start().await;
    let dir = project(
        &echo_config(&upstream.url(), "[log]\nformat = \"json\"\n"),
        &[],
    );
    let binary = Binary::start(dir.path()).await;
    let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let client = client(
        &binary,
        None,
        &[("traceparent", incoming), ("tracestate", "vendor=abc")],
    )
    .await;
    let result = call(&client, "getItem", json!({"id": "42"})).await;
    let seen = &result.structured_content.expect("structured")["headers"];
    let sent = seen["traceparent"].as_str().expect("traceparent upstream");
    assert!(
        sent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
        "{sent}"
    );
    assert!(sent.ends_with("-01"));
    assert_ne!(sent, incoming, "restmcp is a hop: a new parent id");
    assert_eq!(seen["tracestate"], "vendor=abc");
    assert!(
        binary
            .wait_for_log("\"tool\":\"getItem\"", Duration::from_secs(2))
            .await
    );
    let line: Value = binary
        .log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["tool"] == "getItem")
        .expect("a JSON log line for the call");
    assert_eq!(line["message"], "tool call");
    assert_eq!(line["api"], "echo");
    assert_eq!(line["status"], 200);
    assert_eq!(line["outcome"], "ok");
    assert_eq!(line["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert!(line["duration_ms"].as_f64().is_some());
    assert!(line["request_id"].as_str().is_some_and(|id| id.len() == 16));
    assert!(!binary.log().contains("\"42\""), "arguments are not logged");
}

#[tokio::test]
async fn trace_context_in_meta_works_over_stdio() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let upstream = upstream::start().await;
    let dir = project(&echo_config(&upstream.url(), ""), &[]);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .arg("stdio")
        .current_dir(dir.path())
        .env_remove("RESTMCP_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("restmcp stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "getItem", "arguments": {"id": "1"},
            "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}}}),
    ];
    for message in &messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
    }
    let answer = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let value: Value = serde_json::from_str(&line).expect("JSON");
            if value["id"] == 2 {
                return value;
            }
        }
        panic!("stdout closed");
    })
    .await
    .expect("answer within 10 s");
    let sent = answer["result"]["structuredContent"]["headers"]["traceparent"]
        .as_str()
        .expect("traceparent upstream");
    assert!(
        sent.starts_with("00-0af7651916cd43dd8448eb211c80319c-"),
        "{sent}"
    );
    assert!(sent.ends_with("-00"));
}

/// `restmcp stdio` in `dir` with `env` set (`None`: removed), initialized; the answers to
/// `calls` (each a `tools/call` of the echo API's `getItem` with its `id`), in order.
async fn stdio_calls(
    dir: &std::path::Path,
    env: &[(&str, Option<&std::ffi::OsStr>)],
    ids: &[&str],
) -> Vec<Value> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp"));
    command
        .arg("stdio")
        .current_dir(dir)
        .env_remove("RESTMCP_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let mut child = command.spawn().expect("restmcp stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (n, id) in ids.iter().enumerate() {
        messages.push(tool_call(n as u64 + 1, "getItem", json!({"id": id})));
    }
    for message in &messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
    }
    let mut answers = vec![Value::Null; ids.len()];
    tokio::time::timeout(Duration::from_secs(10), async {
        let mut left = ids.len();
        while let Ok(Some(line)) = lines.next_line().await {
            let value: Value = serde_json::from_str(&line).expect("JSON");
            if let Some(n) = value["id"]
                .as_u64()
                .filter(|n| (1..=ids.len() as u64).contains(n))
            {
                answers[n as usize - 1] = value;
                left -= 1;
                if left == 0 {
                    return;
                }
            }
        }
        panic!("stdout closed");
    })
    .await
    .expect("the answers within 10 s");
    answers
}

/// A sidecar behind an egress proxy: `HTTP_PROXY` in restmcp's environment carries the
/// upstream calls. The API's host cannot be resolved (`.invalid`), so the call can only
/// succeed through the proxy, which here is the echo upstream itself: it answers the
/// absolute-form request and shows the `Host` the call was meant for.
#[tokio::test]
async fn the_environments_proxy_carries_upstream_calls() {
    let proxy = upstream::start().await;
    let dir = project(&echo_config("http://echo.invalid:8080", ""), &[]);
    let url = proxy.url();
    let env = [
        ("NO_PROXY", None),
        ("no_proxy", None),
        ("HTTP_PROXY", Some(std::ffi::OsStr::new(&url))),
    ];
    let answers = stdio_calls(dir.path(), &env, &["7"]).await;
    let answer = &answers[0];
    let seen = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    assert_eq!(seen["path"], "/echo/items/7", "{answer}");
    assert_eq!(seen["headers"]["host"], "echo.invalid:8080", "{answer}");
}

/// An HTTPS upstream on 127.0.0.1 with the test certificate (`tests/fixtures/tls`), speaking
/// only the protocol `alpn` names: it answers every request with the echo's shape and the
/// HTTP version it was asked in (header `x-version`).
async fn tls_upstream(alpn: &'static [u8]) -> std::net::SocketAddr {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let tls = crate::support::fixture("tls");
    let certs = CertificateDer::pem_file_iter(tls.join("cert.pem"))
        .expect("cert.pem")
        .collect::<Result<Vec<_>, _>>()
        .expect("certificates");
    let key = PrivateKeyDer::from_pem_file(tls.join("key.pem")).expect("key.pem");
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    config.alpn_protocols = vec![alpn.to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let io = hyper_util::rt::TokioIo::new(stream);
                let service = hyper::service::service_fn(|request: hyper::Request<_>| async move {
                    let body = json!({
                        "method": request.method().as_str(), "path": request.uri().path(),
                        "query": null, "body": "", "body_base64": "",
                        "headers": {"x-version": format!("{:?}", request.version())},
                    });
                    let mut answer = hyper::Response::new(http_body_util::Full::new(
                        hyper::body::Bytes::from(body.to_string()),
                    ));
                    answer.headers_mut().insert(
                        "content-type",
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, std::convert::Infallible>(answer)
                });
                let _ = match alpn {
                    b"h2" => {
                        hyper::server::conn::http2::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(io, service)
                        .await
                    }
                    _ => {
                        hyper::server::conn::http1::Builder::new()
                            .serve_connection(io, service)
                            .await
                    }
                };
            });
        }
    });
    addr
}

/// An HTTPS upstream: its certificate checked against the platform's roots (here the test
/// CA, through `SSL_CERT_FILE`, which the platform's root store on Linux reads), and HTTP/2
/// when the upstream offers it by ALPN, HTTP/1.1 when that is all it speaks.
#[tokio::test]
async fn an_https_upstream_is_called_over_tls_in_the_protocol_it_offers() {
    let ca = crate::support::fixture("tls").join("ca.pem");
    for (alpn, version) in [(&b"h2"[..], "HTTP/2.0"), (&b"http/1.1"[..], "HTTP/1.1")] {
        let addr = tls_upstream(alpn).await;
        let base = format!("https://localhost:{}", addr.port());
        let dir = project(&echo_config(&base, ""), &[]);
        let env = [
            ("SSL_CERT_DIR", None),
            ("SSL_CERT_FILE", Some(ca.as_os_str())),
        ];
        for answer in stdio_calls(dir.path(), &env, &["3", "4"]).await {
            let seen = &answer["result"]["structuredContent"];
            assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
            assert_eq!(seen["headers"]["x-version"], version, "{answer}");
        }
    }
}

/// A machine without CA certificates (a minimal image) still starts: the roots are read at
/// the first HTTPS call, which fails saying why, and the process goes on serving.
#[tokio::test]
async fn without_ca_certificates_an_https_call_says_so() {
    let addr = tls_upstream(b"http/1.1").await;
    let base = format!("https://localhost:{}", addr.port());
    let dir = project(&echo_config(&base, ""), &[]);
    let missing = dir.path().join("no-such-ca.pem");
    let env = [
        ("SSL_CERT_DIR", Some(missing.as_os_str())),
        ("SSL_CERT_FILE", Some(missing.as_os_str())),
    ];
    for answer in stdio_calls(dir.path(), &env, &["1", "2"]).await {
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("");
        assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
        assert!(text.contains("No CA certificates were loaded"), "{text}");
    }
}

#[tokio::test]
async fn graceful_shutdown_lets_a_call_in_flight_finish() {
    let upstream = upstream::start().await;
    let dir = project(&echo_config(&upstream.url(), ""), &[]);
    let mut binary = Binary::start(dir.path()).await;
    let client = client(&binary, None, &[]).await;
    let started = Instant::now();
    let in_flight = tokio::spawn(async move {
        let result = call(&client, "slow", json!({})).await;
        (result, client)
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let pid = binary.child.id().expect("pid");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let (result, _client) = in_flight.await.expect("joined");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.content[0].as_text().map(|t| t.text.as_str()),
        Some("late")
    );
    assert!(started.elapsed() >= Duration::from_secs(2));
    let status = tokio::time::timeout(Duration::from_secs(10), binary.child.wait())
        .await
        .expect("exits after the call")
        .expect("status");
    assert!(status.success(), "{status:?}\n{}", binary.log());
    assert!(
        binary
            .log()
            .contains("waiting up to 30 s for 1 request(s) in flight"),
        "{}",
        binary.log()
    );
    // The process has exited, but its last stderr lines may still be on their way to the
    // thread that collects them.
    assert!(
        binary
            .wait_for_log("restmcp: stopped", Duration::from_secs(5))
            .await,
        "{}",
        binary.log()
    );
}

#[tokio::test]
async fn no_configured_secret_appears_in_logs_metrics_errors_or_tool_lists() {
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[server.auth]\ntokens_env = [\"RESTMCP_TEST_INBOUND\"]\n\
         [log]\nformat = \"json\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\n\
         overlays = [\"specs/echo.overlay.yaml\"]\n\
         [apis.echo.auth.upstream]\ntype = \"bearer\"\ntoken_env = \"RESTMCP_TEST_UPSTREAM\"\n\
         [reload]\nenabled = false\n",
        upstream.url()
    );
    let overlay = "tools:\n  getItem:\n    arguments:\n      X-Trace:\n        value_env: RESTMCP_TEST_FIXED\n";
    let dir = project(&config, &[("specs/echo.overlay.yaml", overlay)]);
    let mut command_env = vec![
        ("RESTMCP_TEST_INBOUND", INBOUND_TOKEN),
        ("RESTMCP_TEST_UPSTREAM", SECRET_TOKEN),
        ("RESTMCP_TEST_FIXED", FIXED_SECRET),
        ("RUST_LOG", "debug"),
    ];
    command_env.sort();
    let binary = Binary::start_with(dir.path(), &command_env).await;
    let client = client(&binary, Some(INBOUND_TOKEN), &[]).await;
    let mut seen = String::new();
    let tools = client.list_all_tools().await.expect("tools/list");
    seen.push_str(&serde_json::to_string(&tools).expect("json"));
    for (tool, arguments) in [
        ("authCheck", json!({})),
        ("echoError", json!({})),
        ("getItem", json!({"id": "1"})),
        ("getItem", json!({"id": 5})),
        ("status", json!({"code": 500})),
    ] {
        let result = call(&client, tool, arguments).await;
        seen.push_str(&serde_json::to_string(&result).expect("json"));
    }
    let auth_check = call(&client, "authCheck", json!({})).await;
    assert_eq!(
        auth_check.structured_content.expect("structured")["authorized"],
        true,
        "the upstream credential was sent"
    );
    let echoed = call(&client, "getItem", json!({"id": "1"})).await;
    let header = echoed.structured_content.expect("structured")["headers"]["x-trace"].clone();
    assert_eq!(
        header, "[REDACTED]",
        "the fixed value was sent, and redacted from the result"
    );
    for header in [format!("Bearer {INBOUND_TOKEN}x"), "Basic xyz".to_string()] {
        let (_, headers, body) = post(
            &binary.url,
            &[("authorization", header.as_str())],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
        seen.push_str(&body);
        seen.push_str(&format!("{headers:?}"));
    }
    let (_, scrape) = get(&format!("{}/metrics", base(&binary))).await;
    seen.push_str(&scrape);
    let (_, ready) = get(&format!("{}/readyz", base(&binary))).await;
    seen.push_str(&ready);
    tokio::time::sleep(Duration::from_millis(200)).await;
    seen.push_str(&binary.log());
    for secret in [INBOUND_TOKEN, SECRET_TOKEN, FIXED_SECRET] {
        assert!(!seen.contains(secret), "{secret} leaked:\n{seen}");
    }
    assert!(binary.log().contains("tool call"), "the log was captured");
}

#[tokio::test]
async fn tls_serves_mcp_over_https_only() {
    let upstream = upstream::start().await;
    let tls = crate::support::fixture("tls");
    let extra = format!(
        "[server.tls]\ncert = \"{}\"\nkey = \"{}\"\n",
        tls.join("cert.pem").display(),
        tls.join("key.pem").display()
    );
    let dir = project(&echo_config(&upstream.url(), &extra), &[]);
    let binary = Binary::start(dir.path()).await;
    assert!(
        binary.url.starts_with("https://127.0.0.1:"),
        "{}",
        binary.url
    );
    restmcp::http_client::install_crypto_provider();
    let ca = reqwest::Certificate::from_pem(&std::fs::read(tls.join("ca.pem")).expect("ca.pem"))
        .expect("CA");
    let https = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .expect("client");
    let health = https
        .get(format!("{}/healthz", base(&binary)))
        .send()
        .await
        .expect("GET /healthz over TLS");
    assert_eq!(health.status(), 200);
    let plain = format!("{}/healthz", base(&binary)).replacen("https://", "http://", 1);
    let served_plain = reqwest::get(&plain)
        .await
        .is_ok_and(|r| r.status().is_success());
    assert!(!served_plain, "plain HTTP is not served");
    let client = ()
        .serve(StreamableHttpClientTransport::with_client(
            https,
            StreamableHttpClientTransportConfig::with_uri(binary.url.clone()),
        ))
        .await
        .expect("initialize over TLS");
    let result = call(&client, "getItem", json!({"id": "9"})).await;
    assert_eq!(
        result.structured_content.expect("structured")["path"],
        "/echo/items/9"
    );
}

#[tokio::test]
async fn a_missing_certificate_stops_the_start_naming_the_file() {
    let dir = project(
        &echo_config(
            "http://127.0.0.1:9",
            "[server.tls]\ncert = \"missing-cert.pem\"\nkey = \"missing-key.pem\"\n",
        ),
        &[],
    );
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .current_dir(dir.path())
        .env_remove("RESTMCP_CONFIG")
        .output()
        .await
        .expect("run restmcp");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing-cert.pem"), "{stderr}");
}

/// A tool's name is text the client chose: the log line that refuses an unknown one records
/// it escaped, so a newline in it cannot write a second, forged line.
#[tokio::test]
async fn an_unknown_tool_name_cannot_forge_a_log_line() {
    let upstream = upstream::start().await;
    let config = echo_config(&upstream.url(), "");
    let dir = project(&config, &[]);
    let binary = Binary::start_with(dir.path(), &[]).await;
    let client = client(&binary, None, &[]).await;
    let forged = "nope\nFORGED restmcp::call: tool call outcome=\"ok\"";
    let refused = client
        .call_tool(rmcp::model::CallToolRequestParams::new(forged.to_string()))
        .await;
    assert!(refused.is_err(), "an unknown tool is a protocol error");
    let _ = call(&client, "getItem", json!({"id": "1"})).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !binary.log().contains("outcome=\"unknown_tool\"") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = binary.log();
    assert!(
        log.contains("outcome=\"unknown_tool\""),
        "the refusal was logged:\n{log}"
    );
    assert!(
        !log.lines().any(|line| line.starts_with("FORGED")),
        "the newline was written raw:\n{log}"
    );
    assert!(
        log.contains(r"nope\nFORGED"),
        "the name is in the line, escaped:\n{log}"
    );
}
