//! MCP over Streamable HTTP and stdio, driven by the official Rust SDK's client and by raw
//! HTTP where the wire itself is the point. Everything runs on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use restmcp::config::ServerSettings;
use restmcp::mcp::{ServerState, Snapshot};
use restmcp::upstream::UpstreamSettings;
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::dispatch::dispatcher_for;
use crate::support::fixture;
use crate::upstream;

/// `restmcp serve`'s router and listener in-process, over the echo API.
pub struct Server {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    pub addr: std::net::SocketAddr,
    pub shared: Arc<ServerState>,
    /// The listener's connection bounds, to count what is open.
    pub connections: Arc<restmcp::http::listener::Connections>,
    _shutdown: tokio_util::sync::DropGuard,
}

impl Server {
    /// The URL of `path` on this server.
    pub fn at(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

pub async fn start(upstream_url: &str, settings: ServerSettings) -> Server {
    let dispatcher = dispatcher_for(
        fixture("echo-api.yaml"),
        upstream_url,
        UpstreamSettings::default(),
    )
    .await;
    start_with(dispatcher, settings).await
}

/// [`start`] serving `dispatcher`'s tools.
pub async fn start_with(
    dispatcher: restmcp::upstream::Dispatcher,
    settings: ServerSettings,
) -> Server {
    restmcp::http_client::install_crypto_provider();
    let shared = ServerState::with_settings(Snapshot::new(dispatcher), &settings).expect("shared");
    let shutdown = CancellationToken::new();
    let control = restmcp::http::Control::new(&settings).expect("control");
    control.readiness.set_loaded();
    let app = restmcp::http::app(shared.clone(), &settings, &control);
    let connections = control.connections.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(restmcp::http::serve(
        listener,
        app,
        Arc::new(control),
        shutdown.clone(),
        settings.threads,
    ));
    Server {
        url: format!("http://{addr}/mcp"),
        addr,
        shared,
        connections,
        _shutdown: shutdown.drop_guard(),
    }
}

/// A 2026-07-28 client: `server/discover`, then stateless requests with per-request `_meta`.
async fn discover_client(server: &Server) -> rmcp::service::RunningService<RoleClient, ()> {
    ().serve_with_lifecycle(
        StreamableHttpClientTransport::from_uri(server.url.clone()),
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("server/discover")
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn catalog_names(server: &Server) -> Vec<String> {
    let snapshot = server.shared.current();
    snapshot
        .catalog()
        .tools()
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counting {
    changed: Arc<AtomicUsize>,
    progress: Arc<AtomicUsize>,
    logged: Arc<std::sync::Mutex<Vec<Value>>>,
}

impl ClientHandler for Counting {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }

    #[allow(deprecated)] // logging exists up to 2025-11-25
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let entry = json!({"level": params.level, "logger": params.logger, "data": params.data});
        self.logged.lock().expect("lock").push(entry);
    }

    async fn on_progress(
        &self,
        _params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.fetch_add(1, Ordering::SeqCst);
    }
}

/// A raw POST to /mcp; the JSON-RPC message from a JSON or SSE answer.
pub async fn post(
    url: &str,
    session: Option<&str>,
    version: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Option<Value>) {
    let mut headers = Vec::new();
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    if let Some(version) = version {
        headers.push(("MCP-Protocol-Version", version));
    }
    post_with(url, &headers, body).await
}

/// [`post`] with any headers, e.g. a 2026-07-28 request's.
pub async fn post_with(
    url: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Option<Value>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let message = text
        .lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .find_map(|data| serde_json::from_str::<Value>(data).ok())
        .or_else(|| serde_json::from_str(&text).ok());
    (status, headers, message)
}

/// Initializes a session with `version`; returns the session id and the result.
pub async fn initialize(url: &str, version: &str) -> (String, Value) {
    let (status, headers, message) = post(
        url,
        None,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}
        }}),
    )
    .await;
    assert_eq!(status, 200);
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("session id")
        .to_string();
    let message = message.expect("initialize result");
    let negotiated = message["result"]["protocolVersion"]
        .as_str()
        .expect("version")
        .to_string();
    let (status, _, body) = post(
        url,
        Some(&session),
        Some(&negotiated),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(
        (status, body),
        (202, None),
        "a notification gets 202 and no body"
    );
    (session, message["result"].clone())
}

#[tokio::test]
async fn the_rust_sdk_client_lists_and_calls_tools_over_streamable_http() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let client = Counting::default()
        .serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
        .await
        .expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("restmcp")
    );

    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(names(&tools), catalog_names(&server));
    assert_eq!(tools[0].name, "getItem");
    assert!(tools[0].output_schema.is_some());

    let result = client
        .call_tool(
            CallToolRequestParams::new("getItem").with_arguments(
                json!({"id": "7", "limit": 2})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(false));
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(structured["path"], "/echo/items/7");
    assert_eq!(structured["query"], "limit=2");

    let result = client
        .call_tool(
            CallToolRequestParams::new("status").with_arguments(
                json!({"code": 404})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(true));
    assert!(result.structured_content.is_none());

    let unknown = client
        .call_tool(CallToolRequestParams::new("noSuchTool"))
        .await
        .expect_err("protocol error");
    assert!(
        unknown.to_string().contains("-32602") || unknown.to_string().contains("unknown tool"),
        "{unknown}"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn tools_list_is_paginated_with_opaque_cursors_in_a_stable_order() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        page_size: 3,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
            .await
            .expect("initialize");
    let first = client.list_tools(None).await.expect("page 1");
    assert_eq!(first.tools.len(), 3);
    let cursor = first.next_cursor.clone().expect("more pages");
    assert!(
        cursor.parse::<usize>().is_err(),
        "opaque, not a bare offset: {cursor}"
    );
    let all = client.list_all_tools().await.expect("all pages");
    let again = client.list_all_tools().await.expect("all pages");
    assert_eq!(names(&all), catalog_names(&server));
    assert_eq!(names(&all), names(&again));
    assert_eq!(names(&all[..3]), names(&first.tools));
    let invalid = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("bogus".into())),
        ))
        .await
        .expect_err("bad cursor");
    assert!(invalid.to_string().contains("cursor"), "{invalid}");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn versions_are_negotiated_and_results_shaped_per_version() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let (_, result) = initialize(&server.url, version).await;
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        assert!(result["capabilities"].get("prompts").is_none());
        assert!(result["capabilities"].get("resources").is_none());
    }
    let (_, result) = initialize(&server.url, "2099-01-01").await;
    assert_eq!(
        result["protocolVersion"], "2025-11-25",
        "unknown → latest supported"
    );

    // 2025-03-26 predates title, outputSchema and structuredContent.
    let (session, _) = initialize(&server.url, "2025-03-26").await;
    let (_, _, list) = post(
        &server.url,
        Some(&session),
        Some("2025-03-26"),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let tool = &list.expect("list")["result"]["tools"][0];
    assert_eq!(tool["name"], "getItem");
    assert!(
        tool.get("outputSchema").is_none() && tool.get("title").is_none(),
        "{tool}"
    );
    assert!(tool.get("annotations").is_some());
    let (_, _, call) = post(&server.url, Some(&session), Some("2025-03-26"),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list", "arguments": {}}})).await;
    let call = call.expect("call");
    assert!(call["result"].get("structuredContent").is_none(), "{call}");
    assert_eq!(call["result"]["content"][0]["type"], "text");

    let (session, _) = initialize(&server.url, "2025-06-18").await;
    let (_, _, call) = post(&server.url, Some(&session), Some("2025-06-18"),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list", "arguments": {}}})).await;
    assert_eq!(
        call.expect("call")["result"]["structuredContent"],
        json!({"result": [1, 2, 3]})
    );
}

#[tokio::test]
async fn undeclared_methods_are_unknown_and_bad_calls_are_protocol_errors() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let (session, _) = initialize(&server.url, "2025-06-18").await;
    for method in [
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "no/such/method",
    ] {
        let (_, _, answer) = post(
            &server.url,
            Some(&session),
            Some("2025-06-18"),
            json!({"jsonrpc": "2.0", "id": 9, "method": method}),
        )
        .await;
        assert_eq!(answer.expect("answer")["error"]["code"], -32601, "{method}");
    }
    let (_, _, answer) = post(
        &server.url,
        Some(&session),
        Some("2025-06-18"),
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "nope"}}),
    )
    .await;
    assert_eq!(answer.expect("answer")["error"]["code"], -32602);
    let (status, _, _) = post(
        &server.url,
        Some("not-a-session"),
        Some("2025-06-18"),
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 404, "unknown session");
}

#[tokio::test]
async fn connected_clients_hear_when_the_tool_set_changes() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let handler = Counting::default();
    let client = handler
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
        .await
        .expect("initialize");
    // The notification travels on the standalone GET stream; give it a moment to open.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let replacement = dispatcher_for(
        fixture("echo-swagger2.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    server.shared.replace(Snapshot::new(replacement)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while handler.changed.load(Ordering::SeqCst) == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(handler.changed.load(Ordering::SeqCst), 1);
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["updatePetWithForm", "findPets", "renamePet"]);
    let _ = client.cancel().await;
}

/// The client gives up on a call: the server drops it, and with it the upstream request.
#[tokio::test]
async fn a_cancelled_call_drops_its_upstream_request() {
    let (addr, closed_rx) = upstream::start_silent().await;
    let server = start(&format!("http://{addr}"), ServerSettings::default()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
            .await
            .expect("initialize");
    let call = client.call_tool(CallToolRequestParams::new("slow"));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), call)
            .await
            .is_err(),
        "still waiting"
    );
    tokio::time::timeout(Duration::from_secs(3), closed_rx)
        .await
        .expect("the upstream connection was closed after the cancellation")
        .expect("signal");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_2026_07_28_client_discovers_and_calls_without_a_session() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let client = discover_client(&server).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(names(&tools), catalog_names(&server));
    // 2026-07-28 allows any JSON value: no {"result": ...} wrapper, in schema or result.
    let list = tools.iter().find(|t| t.name == "list").expect("list tool");
    assert_eq!(
        list.output_schema
            .as_deref()
            .map(|s| Value::Object(s.clone())),
        Some(json!({"type": "array", "items": {"type": "integer"}}))
    );
    let result = client
        .call_tool(CallToolRequestParams::new("list"))
        .await
        .expect("tools/call");
    assert_eq!(result.structured_content, Some(json!([1, 2, 3])));
    let _ = client.cancel().await;
}

#[tokio::test]
async fn the_real_binary_serves_mcp_over_stdio() {
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let upstream = upstream::start().await;
    let spec = fixture("echo-api.yaml");
    let base_url = upstream.url();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp")).configure(|command| {
            command
                .arg("stdio")
                .arg("--spec")
                .arg(&spec)
                .arg("--base-url")
                .arg(&base_url)
                .env("RUST_LOG", "warn");
        }),
    )
    .expect("spawn");
    let client = ().serve(transport).await.expect("initialize over stdio");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 16);
    assert_eq!(tools[0].name, "getItem");
    let result = client
        .call_tool(
            CallToolRequestParams::new("getItem")
                .with_arguments(json!({"id": "s"}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_eq!(
        result.structured_content.expect("structured")["path"],
        "/echo/items/s"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_long_call_reports_progress_to_a_client_that_asked_for_it() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let handler = Counting::default();
    let client = handler
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
        .await
        .expect("initialize");
    // `slow` answers after two seconds; the client attaches a progressToken to every call.
    let result = client
        .call_tool(CallToolRequestParams::new("slow"))
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(false));
    assert!(
        handler.progress.load(Ordering::SeqCst) >= 1,
        "no progress notification"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
#[allow(deprecated)] // logging exists up to 2025-11-25
async fn after_set_level_each_call_is_reported_with_a_log_message() {
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let handler = Counting::default();
    let client = handler
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
        .await
        .expect("initialize");
    client
        .call_tool(CallToolRequestParams::new("list"))
        .await
        .expect("call");
    assert!(
        handler.logged.lock().expect("lock").is_empty(),
        "nothing before setLevel"
    );

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .expect("logging/setLevel");
    client
        .call_tool(CallToolRequestParams::new("list"))
        .await
        .expect("call");
    let failing = CallToolRequestParams::new("status").with_arguments(
        json!({"code": 500})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    client.call_tool(failing).await.expect("call");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logged = handler.logged.lock().expect("lock").clone();
    // Only warnings pass the level: the upstream's 500 as the call went, then the call's
    // summary; nothing of the call that succeeded.
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert!(
        logged
            .iter()
            .all(|m| m["level"] == "warning" && m["logger"] == "restmcp")
    );
    assert!(
        logged[0]["data"]
            .as_str()
            .is_some_and(|text| text.contains("answered 500")),
        "{logged:?}"
    );
    assert_eq!(logged[1]["data"]["tool"], "status");
    assert_eq!(logged[1]["data"]["isError"], true);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn the_endpoint_checks_protocol_version_host_origin_and_session() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        allowed_origins: vec!["http://app.example".into()],
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let (session, _) = initialize(&server.url, "2025-06-18").await;
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"});
    let (status, _, _) = post(
        &server.url,
        Some(&session),
        Some("1999-01-01"),
        ping.clone(),
    )
    .await;
    assert_eq!(status, 400, "unsupported MCP-Protocol-Version");
    let (status, _, answer) = post(&server.url, Some(&session), None, ping.clone()).await;
    assert_eq!(
        (status, answer.expect("pong")["result"].clone()),
        (200, json!({})),
        "missing header accepted"
    );

    let raw = |host: &str, origin: Option<&str>| {
        let mut request = reqwest::Client::new()
            .post(&server.url)
            .header("Host", host)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(ping.to_string());
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        request.send()
    };
    let port = server
        .url
        .split(':')
        .nth(2)
        .and_then(|p| p.split('/').next())
        .expect("port")
        .to_string();
    assert_eq!(
        raw("evil.example", None).await.expect("sent").status(),
        403,
        "foreign Host"
    );
    let local = format!("127.0.0.1:{port}");
    assert_eq!(
        raw(&local, Some("http://evil.example"))
            .await
            .expect("sent")
            .status(),
        403,
        "foreign Origin"
    );

    let deleted = reqwest::Client::new()
        .delete(&server.url)
        .header("Mcp-Session-Id", &session)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(deleted.status(), 200, "session ended");
    let (status, _, _) = post(&server.url, Some(&session), Some("2025-06-18"), ping).await;
    assert_eq!(status, 404, "an ended session is unknown");
}

#[tokio::test]
async fn in_stateless_mode_no_request_depends_on_a_previous_one() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        sessions: false,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let (status, headers, answer) = post(
        &server.url,
        None,
        Some("2025-06-18"),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list", "arguments": {}}}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(headers.get("mcp-session-id").is_none());
    assert_eq!(
        answer.expect("answer")["result"]["structuredContent"],
        json!({"result": [1, 2, 3]})
    );
    let stream = reqwest::Client::new()
        .get(&server.url)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .expect("GET");
    assert_eq!(
        stream.status(),
        405,
        "no notification stream without sessions"
    );
}

/// Reads server-sent events from a streaming response, one `(event, data)` at a time.
struct EventReader {
    response: reqwest::Response,
    buffer: String,
}

impl EventReader {
    async fn next(&mut self) -> (String, String) {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = String::from("message");
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(name) = line.strip_prefix("event:") {
                        event = name.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return (event, data);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(5), self.response.chunk())
                .await
                .expect("an event within 5 s")
                .expect("stream readable")
                .expect("stream still open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

#[tokio::test]
async fn legacy_http_sse_clients_are_served_as_2024_11_05() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let base = server.url.trim_end_matches("/mcp").to_string();
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{base}/sse"))
        .header("Accept", "text/event-stream")
        .send()
        .await
        .expect("GET /sse");
    assert_eq!(response.status(), 200);
    let mut events = EventReader {
        response,
        buffer: String::new(),
    };
    let (event, endpoint) = events.next().await;
    assert_eq!(event, "endpoint");
    assert!(endpoint.starts_with("/message?sessionId="), "{endpoint}");
    let session = endpoint.trim_start_matches("/message?sessionId=");
    assert!(
        session.len() >= 32 && session.bytes().all(|b| b.is_ascii_hexdigit()),
        "{session}"
    );

    let send = |message: Value| {
        client
            .post(format!("{base}{endpoint}"))
            .header("Content-Type", "application/json")
            .body(message.to_string())
            .send()
    };
    let accepted = send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}
    }}))
    .await
    .expect("POST");
    assert_eq!(accepted.status(), 202);
    assert!(accepted.text().await.expect("body").is_empty());
    let (_, data) = events.next().await;
    let initialized: Value = serde_json::from_str(&data).expect("JSON");
    assert_eq!(initialized["id"], 1);
    assert_eq!(initialized["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
            .expect("POST")
            .status(),
        202
    );

    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await
        .expect("POST");
    let (_, data) = events.next().await;
    let list: Value = serde_json::from_str(&data).expect("JSON");
    let tool = &list["result"]["tools"][0];
    assert_eq!(tool["name"], "getItem");
    for absent in ["title", "outputSchema", "annotations"] {
        assert!(
            tool.get(absent).is_none(),
            "{absent} does not exist in 2024-11-05: {tool}"
        );
    }

    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list", "arguments": {}}}))
        .await
        .expect("POST");
    let (_, data) = events.next().await;
    let call: Value = serde_json::from_str(&data).expect("JSON");
    assert_eq!(call["id"], 3);
    assert_eq!(call["result"]["content"][0]["text"], "{\"result\":[1,2,3]}");
    assert!(call["result"].get("structuredContent").is_none());

    let unknown = client
        .post(format!("{base}/message?sessionId=0000"))
        .body("{}")
        .send()
        .await
        .expect("POST");
    assert_eq!(unknown.status(), 404);
    let malformed = client
        .post(format!("{base}{endpoint}"))
        .body("not json")
        .send()
        .await
        .expect("POST");
    assert_eq!(malformed.status(), 400);
    // The client goes away: the session ends with its stream.
    drop(events);
    let mut status = 0;
    for _ in 0..50 {
        let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
        status = send(ping).await.expect("POST").status().as_u16();
        if status == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, 404, "a closed stream ends its session");

    let foreign = client
        .get(format!("{base}/sse"))
        .header("Host", "evil.example")
        .send()
        .await
        .expect("GET");
    assert_eq!(foreign.status(), 403);
}

#[tokio::test]
async fn the_legacy_transport_can_be_switched_off() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        legacy_sse: false,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let base = server.url.trim_end_matches("/mcp").to_string();
    let response = reqwest::Client::new()
        .get(format!("{base}/sse"))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 404);
}

async fn post_raw(url: &str, session: &str, version: Option<&str>, body: Value) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", session)
        .body(body.to_string());
    if let Some(version) = version {
        request = request.header("MCP-Protocol-Version", version);
    }
    let response = request.send().await.expect("POST");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

#[tokio::test]
async fn json_rpc_batches_are_accepted_for_2025_03_26_only() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let (session, _) = initialize(&server.url, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"}
    ]);
    let (status, body) = post_raw(&server.url, &session, None, batch.clone()).await;
    assert_eq!(status, 200, "{body}");
    let answers: Value = serde_json::from_str(&body).expect("a JSON array");
    let answers = answers.as_array().expect("array");
    assert_eq!(
        answers.len(),
        2,
        "one answer per request, none for the notification: {body}"
    );
    assert_eq!(answers[0]["id"], "a");
    assert_eq!(answers[0]["result"], json!({}));
    assert_eq!(answers[1]["id"], "b");
    assert!(
        answers[1]["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );

    let notifications = json!([{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 2}}]);
    let (status, body) = post_raw(&server.url, &session, Some("2025-03-26"), notifications).await;
    assert_eq!((status, body.as_str()), (202, ""));

    let (newer, _) = initialize(&server.url, "2025-06-18").await;
    let (status, body) = post_raw(&server.url, &newer, Some("2025-06-18"), batch).await;
    assert_eq!(status, 400, "{body}");
    let error: Value = serde_json::from_str(&body).expect("JSON-RPC error");
    assert_eq!(error["error"]["code"], -32600);

    let with_initialize =
        json!([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}]);
    let (status, _) = post_raw(&server.url, &session, None, with_initialize).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn session_answers_are_plain_json_unless_the_call_streams_progress() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let (session, _) = initialize(&server.url, "2025-06-18").await;
    let send = |body: Value| {
        reqwest::Client::new()
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", "2025-06-18")
            .body(body.to_string())
            .send()
    };
    let response = send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}))
        .await
        .expect("POST");
    assert_eq!(response.headers()["content-type"], "application/json");
    let answer: Value = response.json().await.expect("JSON");
    assert_eq!(answer["id"], 7);
    assert!(answer["result"]["tools"].is_array());

    let with_progress = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "list", "arguments": {}, "_meta": {"progressToken": "p1"}}});
    let response = send(with_progress).await.expect("POST");
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
}

#[tokio::test]
async fn a_2026_07_28_client_hears_tool_list_changes_through_subscriptions_listen() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let client = discover_client(&server).await;
    let mut subscription = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .expect("subscriptions/listen");
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    let replacement = dispatcher_for(
        fixture("echo-swagger2.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    server.shared.replace(Snapshot::new(replacement)).await;
    // Within moments; the bound only ends the test if it never comes (a whole suite beside
    // a build on two cores once took more than 2 s).
    let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("a notification within 10 s")
        .expect("subscription open")
        .expect("a notification");
    assert!(
        matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ),
        "{notification:?}"
    );
    let _ = client.cancel().await;
}

/// Regression (found by the conformance suite): a `subscriptions/listen` without a
/// progressToken was held back waiting for a final response that a subscription never sends.
#[tokio::test]
async fn a_raw_subscription_is_acknowledged_at_once_even_without_a_progress_token() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let listen = |id: u32, notifications: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "notifications": notifications
        }});
        reqwest::Client::new()
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "subscriptions/listen")
            .body(body.to_string())
            .send()
    };
    for (id, filter, honoured) in [
        (
            1,
            json!({"toolsListChanged": true}),
            json!({"toolsListChanged": true}),
        ),
        (2, json!({"promptsListChanged": true}), json!({})),
    ] {
        let response = tokio::time::timeout(Duration::from_secs(2), listen(id, filter))
            .await
            .expect("headers within 2 s")
            .expect("POST");
        assert_eq!(response.status(), 200);
        let mut events = EventReader {
            response,
            buffer: String::new(),
        };
        let (_, data) = events.next().await;
        let ack: Value = serde_json::from_str(&data).expect("JSON");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(ack["params"]["notifications"], honoured, "{ack}");
    }
}

#[tokio::test]
async fn accept_requirements_are_a_setting_and_mcp_method_mismatches_are_refused() {
    let upstream = upstream::start().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
    }});
    for (require_accept, expected) in [(true, 406), (false, 200)] {
        let settings = ServerSettings {
            require_accept,
            ..ServerSettings::default()
        };
        let server = start(&upstream.url(), settings).await;
        let response = reqwest::Client::new()
            .post(&server.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(ping.to_string())
            .send()
            .await
            .expect("POST");
        assert_eq!(
            response.status(),
            expected,
            "require_accept = {require_accept}"
        );
    }

    // 2026-07-28: the Mcp-Method header must name the body's method (-32020 otherwise).
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let response = reqwest::Client::new()
        .post(&server.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .body(body.to_string())
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.expect("JSON-RPC error");
    assert_eq!(error["error"]["code"], -32020, "{error}");
}

/// A reload while a call runs: the call finishes on the tool set it started with.
#[tokio::test]
async fn a_call_in_flight_finishes_on_the_tool_set_it_started_with() {
    let upstream = upstream::start().await;
    let server = start(&upstream.url(), ServerSettings::default()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url.clone()))
            .await
            .expect("initialize");
    let call = tokio::spawn({
        let peer = client.peer().clone();
        async move { peer.call_tool(CallToolRequestParams::new("slow")).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let replacement = dispatcher_for(
        fixture("echo-swagger2.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    server.shared.replace(Snapshot::new(replacement)).await;
    assert!(!catalog_names(&server).contains(&"slow".to_string()));
    let result = call.await.expect("joined").expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(
        format!("{:?}", result.content).contains("late"),
        "{result:?}"
    );
    let after = client.call_tool(CallToolRequestParams::new("slow")).await;
    assert!(
        format!("{after:?}").contains("unknown tool"),
        "the new tool set has no \"slow\": {after:?}"
    );
    let _ = client.cancel().await;
}

/// `tools/call` and `tools/list` are answered without the SDK's session machinery when
/// they want plain JSON; a request with a progress token still goes through the SDK. Both
/// answers must be the same JSON, for a session and for a 2026-07-28 request, for
/// results, tool errors, protocol errors and list pages.
#[tokio::test]
async fn direct_answers_are_the_answers_the_sdk_gives() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        page_size: 5,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let (session, _) = initialize(&server.url, "2025-11-25").await;
    let meta_2026 = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let requests = [
        (
            "tools/call",
            json!({"name": "getItem", "arguments": {"id": "a/b", "limit": 3}}),
        ),
        (
            "tools/call",
            json!({"name": "getItem", "arguments": {"limit": "x"}}),
        ),
        (
            "tools/call",
            json!({"name": "status", "arguments": {"code": 503}}),
        ),
        ("tools/call", json!({"name": "list"})),
        ("tools/call", json!({"name": "noSuchTool", "arguments": {}})),
        ("tools/list", json!({})),
        ("tools/list", json!({"cursor": "cmVzdG1jcDo1"})),
        ("tools/list", json!({"cursor": "not-a-cursor"})),
    ];
    for (method, params) in requests {
        // Initialize-based, in the session.
        let ask = |progress: bool| {
            let mut params = params.clone();
            if progress {
                params["_meta"] = json!({"progressToken": "p"});
            }
            json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
        };
        let (_, _, direct) =
            post(&server.url, Some(&session), Some("2025-11-25"), ask(false)).await;
        let (_, _, sdk) = post(&server.url, Some(&session), Some("2025-11-25"), ask(true)).await;
        let direct = direct.expect("a direct answer");
        assert_eq!(Some(direct.clone()), sdk, "{method} {params} in a session");
        assert!(
            direct.get("result").is_some() || direct.get("error").is_some(),
            "{direct}"
        );
        // 2026-07-28, no session.
        let ask = |progress: bool| {
            let mut params = params.clone();
            params["_meta"] = meta_2026.clone();
            if progress {
                params["_meta"]["progressToken"] = json!("p");
            }
            json!({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": params})
        };
        let name = params["name"].as_str().unwrap_or_default().to_string();
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if method == "tools/call" {
            headers.push(("Mcp-Name", name.as_str()));
        }
        let (status, _, direct) = post_with(&server.url, &headers, ask(false)).await;
        let (_, _, sdk) = post_with(&server.url, &headers, ask(true)).await;
        assert_eq!(status, 200, "{direct:?}");
        assert_eq!(direct, sdk, "{method} {params} as 2026-07-28");
    }
}

/// A 2025-11-25 `tools/call` of `slow` (which the silent upstream never answers), sent in
/// a task of its own.
fn spawn_slow_call(
    server: &Server,
    session: &str,
    id: u64,
) -> tokio::task::JoinHandle<(u16, reqwest::header::HeaderMap, Option<Value>)> {
    let (url, session) = (server.url.clone(), session.to_string());
    tokio::spawn(async move {
        post(
            &url,
            Some(&session),
            Some("2025-11-25"),
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "slow"}}),
        )
        .await
    })
}

/// A client that closes its connection mid-call (a killed agent, a proxy timeout) ends
/// the call: the upstream request is dropped, and the call is still counted and logged,
/// as cancelled, in a session and stateless alike.
#[tokio::test]
async fn a_call_whose_client_goes_away_is_dropped_and_counted_as_cancelled() {
    let (addr, closed_rx) = upstream::start_silent().await;
    let server = start(&format!("http://{addr}"), ServerSettings::default()).await;
    let (session, _) = initialize(&server.url, "2025-11-25").await;
    let call = spawn_slow_call(&server, &session, 5);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.shared.metrics().calls_in_flight(), 1);
    call.abort();
    tokio::time::timeout(Duration::from_secs(3), closed_rx)
        .await
        .expect("the upstream connection was closed when the client went away")
        .expect("signal");
    let counted = r#"restmcp_tool_calls_total{api="echo",tool="slow",outcome="cancelled"} 1"#;
    for _ in 0..100 {
        if server.shared.metrics().render(None).contains(counted) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let metrics = server.shared.metrics().render(None);
    assert!(metrics.contains(counted), "{metrics}");
    assert_eq!(server.shared.metrics().calls_in_flight(), 0);
}

/// `notifications/cancelled` for a call answered directly cancels it: the POST gets its
/// answer at once and the upstream request is dropped.
#[tokio::test]
async fn a_direct_call_is_cancelled_by_its_notification() {
    let (addr, closed_rx) = upstream::start_silent().await;
    let server = start(&format!("http://{addr}"), ServerSettings::default()).await;
    let (session, _) = initialize(&server.url, "2025-11-25").await;
    let call = spawn_slow_call(&server, &session, 41);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!call.is_finished(), "the silent upstream never answers");
    let (status, _, _) = post(
        &server.url,
        Some(&session),
        Some("2025-11-25"),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 41, "reason": "user gave up"}}),
    )
    .await;
    assert_eq!(status, 202);
    let (status, _, answer) = tokio::time::timeout(Duration::from_secs(3), call)
        .await
        .expect("the cancelled call is answered at once")
        .expect("task");
    assert_eq!(status, 200);
    let answer = answer.expect("a JSON-RPC answer");
    assert_eq!(answer["id"], 41);
    assert_eq!(answer["error"]["message"], "request cancelled", "{answer}");
    tokio::time::timeout(Duration::from_secs(3), closed_rx)
        .await
        .expect("the upstream connection was closed after the cancellation")
        .expect("signal");
}

/// Over stdio, `tools/list` after the handshake (which the stdio filter answers itself) is
/// what Streamable HTTP serves: the same JSON page by page for the same protocol version,
/// the client's rule applied by the name it gave in `initialize`, a 2025-03-26 client's
/// tools without `outputSchema` or `title`, and a bad cursor a -32602 with its id.
#[tokio::test]
async fn stdio_tools_list_pages_are_the_pages_http_serves() {
    use crate::bad_input::{open_session, post, read_answers, spawn_stdio};
    use tokio::io::AsyncWriteExt as _;
    let config = "[server]\nlisten = \"127.0.0.1:0\"\npage_size = 7\n\
                  [[tools.clients]]\nname = \"short*\"\nmax_name_length = 16\n\
                  [apis.petstore]\nspec = \"specs/petstore.yaml\"\nmock = true\n";
    let dir = crate::overlays::project(config, &[]);
    let http = crate::reload::Binary::start(dir.path()).await;

    async fn stdio_pages(dir: &std::path::Path, version: &str, client: &str) -> Vec<Value> {
        let (_child, mut stdin, mut stdout) = spawn_stdio(dir);
        let mut send = async |message: Value| {
            stdin
                .write_all(format!("{message}\n").as_bytes())
                .await
                .expect("write");
            stdin.flush().await.expect("flush");
        };
        send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": client, "version": "1"}}}),
        )
        .await;
        let answer = read_answers(&mut stdout, 1).await.remove(0);
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        let mut pages = Vec::new();
        let mut cursor = Value::Null;
        for id in 1.. {
            let params = if cursor.is_null() {
                json!({})
            } else {
                json!({ "cursor": cursor })
            };
            send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}))
                .await;
            let answer = read_answers(&mut stdout, 1).await.remove(0);
            assert_eq!(answer["id"], id, "{answer}");
            cursor = answer["result"]["nextCursor"].clone();
            pages.push(answer["result"].clone());
            if cursor.is_null() {
                break;
            }
        }
        send(
            json!({"jsonrpc": "2.0", "id": "bad", "method": "tools/list",
                    "params": {"cursor": "not-a-cursor"}}),
        )
        .await;
        let answer = read_answers(&mut stdout, 1).await.remove(0);
        assert_eq!(answer["id"], "bad");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        pages
    }

    let stdio = stdio_pages(dir.path(), "2025-11-25", "raw").await;
    assert_eq!(stdio.len(), 3, "19 tools in pages of 7");
    let session = open_session(&http.url, "2025-11-25").await;
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    for (i, page) in stdio.iter().enumerate() {
        let params = match i {
            0 => json!({}),
            _ => json!({"cursor": stdio[i - 1]["nextCursor"]}),
        };
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": params});
        let (status, answer) = post(&http.url, &headers, body.to_string().into_bytes()).await;
        assert_eq!(status, 200);
        assert_eq!(&answer.expect("an answer")["result"], page, "page {i}");
    }
    let names = |pages: &[Value]| -> Vec<String> {
        pages
            .iter()
            .flat_map(|page| page["tools"].as_array().cloned().unwrap_or_default())
            .map(|tool| tool["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(stdio[0]["tools"][0]["outputSchema"].is_object());
    assert!(names(&stdio).iter().any(|n| n.len() > 16));

    let short = stdio_pages(dir.path(), "2025-11-25", "short-client").await;
    let short_names = names(&short);
    assert_eq!(short_names.len(), 19);
    assert!(short_names.iter().all(|n| n.len() <= 16), "{short_names:?}");

    let old = stdio_pages(dir.path(), "2025-03-26", "raw").await;
    let tools: Vec<Value> = old
        .iter()
        .flat_map(|page| page["tools"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(tools.len(), 19);
    assert!(
        tools
            .iter()
            .all(|t| t.get("outputSchema").is_none() && t.get("title").is_none())
    );
}
