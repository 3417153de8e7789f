//! The listener, sessions, streams and in-flight limits, and requests with
//! two `Host` headers: each greedy or slow client is closed, refused or bounded, and
//! `/healthz` keeps answering. Everything runs on loopback.

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use restmcp::config::ServerSettings;
use restmcp::http::listener::Connections;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::mcp::start;
use crate::overlays::project;
use crate::reload::Binary;
use crate::upstream;

fn client() -> reqwest::Client {
    restmcp::http_client::install_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

async fn healthz(url: &str) -> u16 {
    client()
        .get(url)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

/// Waits until the server closes `stream` (EOF or reset); the time it took, or `None`
/// when it was still open after `within`.
async fn closed_after(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    let read = async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, read)
        .await
        .ok()
        .map(|()| started.elapsed())
}

/// The whole answer to one raw request on a fresh connection.
async fn raw(addr: std::net::SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// Lets the test process open `wanted` descriptors (soft limit up to the hard one).
fn allow_open_files(wanted: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read or write one rlimit struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[tokio::test]
async fn a_slowloris_client_is_closed_after_the_header_timeout_and_an_idle_one_after_the_idle_timeout()
 {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        header_read_timeout_seconds: 1,
        idle_timeout_seconds: 3,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;

    // Headers a byte at a time, four bytes a second: never complete within the timeout.
    let mut slow = TcpStream::connect(server.addr).await.expect("connect");
    let mut idle = TcpStream::connect(server.addr).await.expect("connect");
    let trickle = tokio::spawn(async move {
        let started = Instant::now();
        for byte in b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa"
        {
            if slow.write_all(&[*byte]).await.is_err() {
                return started.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("the slowloris connection was still open after all its bytes");
    });
    // Meanwhile the server answers others.
    for _ in 0..3 {
        assert_eq!(healthz(&server.at("/healthz")).await, 200);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let cut = trickle.await.expect("joined");
    assert!(
        cut >= Duration::from_millis(900) && cut < Duration::from_secs(5),
        "the slowloris connection was closed after {cut:?}, not after the 1 s header timeout"
    );

    // A connection that sends nothing is not a slow header: it is closed by the idle
    // timeout (3 s), not the header timeout (1 s).
    let closed = closed_after(&mut idle, Duration::from_secs(8))
        .await
        .expect("the idle connection is closed");
    assert!(
        closed >= Duration::from_secs(1),
        "the idle connection lived only {closed:?} more"
    );

    // A keep-alive connection between requests is idle too.
    let mut kept = TcpStream::connect(server.addr).await.expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("write");
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).await.expect("an answer");
    assert_eq!(&first, b"HTTP/1.1 200");
    let closed = closed_after(&mut kept, Duration::from_secs(8))
        .await
        .expect("the kept-alive connection is closed when idle");
    assert!(closed >= Duration::from_secs(2), "closed after {closed:?}");
    assert_eq!(healthz(&server.at("/healthz")).await, 200);
}

#[tokio::test]
async fn a_trickled_body_gets_408_after_the_body_timeout() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        body_read_timeout_seconds: 1,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let mut stream = TcpStream::connect(server.addr).await.expect("connect");
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{",
        )
        .await
        .expect("write");
    let started = Instant::now();
    let (answer, trickler) = {
        let (mut reader, mut writer) = stream.into_split();
        let trickler = tokio::spawn(async move {
            for _ in 0..40 {
                if writer.write_all(b" ").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(6), reader.read_to_end(&mut answer)).await;
        (String::from_utf8_lossy(&answer).into_owned(), trickler)
    };
    trickler.abort();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_read_timeout_seconds"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "answered and closed after {:?}",
        started.elapsed()
    );
    assert_eq!(healthz(&server.at("/healthz")).await, 200);
}

/// Opens `count` connections that never send a byte, and checks that the server holds at
/// most `cap` of them, answers `/healthz` meanwhile, and closes them all when idle.
async fn idle_flood(addr: std::net::SocketAddr, count: usize, connections: Option<&Connections>) {
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        match TcpStream::connect(addr).await {
            Ok(stream) => held.push(stream),
            Err(error) => panic!("connect #{}: {error}", held.len()),
        }
    }
    let started = Instant::now();
    assert_eq!(healthz(&format!("http://{addr}/healthz")).await, 200);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "/healthz took {:?} behind {count} idle connections",
        started.elapsed()
    );
    if let Some(connections) = connections {
        assert!(
            connections.open() <= connections.max(),
            "{} open, cap {}",
            connections.open(),
            connections.max()
        );
    }
    // Every one is closed: past the cap at once, the rest by the idle timeout.
    let all = futures_util::stream::iter(held.iter_mut())
        .map(|stream| closed_after(stream, Duration::from_secs(15)))
        .buffer_unordered(256)
        .collect::<Vec<_>>()
        .await;
    let open = all.iter().filter(|closed| closed.is_none()).count();
    assert_eq!(
        open, 0,
        "{open} of {count} idle connections were never closed"
    );
    if let Some(connections) = connections {
        let deadline = Instant::now() + Duration::from_secs(2);
        while connections.open() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(connections.open(), 0);
    }
}

#[tokio::test]
async fn idle_connections_are_capped_and_closed_while_healthz_answers() {
    allow_open_files(4096);
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        max_connections: 100,
        idle_timeout_seconds: 2,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    assert_eq!(server.connections.max(), 100);
    idle_flood(server.addr, 1_000, Some(&server.connections)).await;
    assert_eq!(healthz(&server.at("/healthz")).await, 200);
}

/// The issue's 10,000 idle connections against the real binary with its default cap
/// (10,000); minutes of descriptors on a small machine, so not in `cargo test`:
/// `cargo test --test it security::limits -- --ignored`.
#[tokio::test]
#[ignore]
async fn ten_thousand_idle_connections_against_the_binary() {
    allow_open_files(30_000);
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\nidle_timeout_seconds = 5\n[apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\n[reload]\nenabled = false\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    let addr: std::net::SocketAddr = binary
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .expect("address");
    idle_flood(addr, 10_000, None).await;
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"}}})
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, String) {
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.body(body.to_string()).send().await.expect("POST");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, session, response.text().await.unwrap_or_default())
}

fn series(scrape: &str, name: &str) -> u64 {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| {
            line.strip_prefix("VmRSS:")?
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// `count` `initialize`s against the real binary with `max_sessions = 100`: the session
/// table stays at the cap, the oldest idle sessions are closed to make room, a session
/// that keeps a stream open survives and still works, and RSS stays flat.
async fn initialize_flood(count: u64) {
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\nmax_sessions = 100\n[apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\n[reload]\nenabled = false\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    let pid = binary.child.id().expect("pid");
    let url = binary.url.clone();
    let base = url.trim_end_matches("/mcp").to_string();
    let client = client();

    // The live session: initialized, with its GET stream open throughout.
    let (status, live, _) = post(&client, &url, None, &initialize(0)).await;
    assert_eq!(status, 200);
    let live = live.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&client, &url, Some(&live), &initialized).await;
    let stream = client
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &live)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .expect("GET stream");
    assert_eq!(stream.status(), 200);

    let flood = |from: u64, to: u64| {
        let client = client.clone();
        let url = url.clone();
        async move {
            futures_util::stream::iter(from..to)
                .map(|id| {
                    let (client, url) = (client.clone(), url.clone());
                    async move { post(&client, &url, None, &initialize(id)).await.0 }
                })
                .buffer_unordered(8)
                .filter(|status| std::future::ready(*status != 200))
                .count()
                .await
        }
    };
    let warm_up = count / 4;
    assert_eq!(flood(1, warm_up).await, 0, "some initializes failed");
    let warm = rss_kb(pid);
    assert_eq!(flood(warm_up, count).await, 0, "some initializes failed");
    let end = rss_kb(pid);

    let scrape = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let sessions = series(&scrape, "restmcp_sessions");
    assert!(
        (1..=100).contains(&sessions),
        "{sessions} sessions open, cap 100"
    );
    assert!(
        series(
            &scrape,
            r#"restmcp_http_refused_total{reason="session_evicted"}"#
        ) >= count - 101,
        "{scrape}"
    );
    // The busy session was never the one evicted.
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    let (status, _, body) = post(&client, &url, Some(&live), &list).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"tools\""), "{body}");
    assert_eq!(healthz(&format!("{base}/healthz")).await, 200);
    assert!(
        end <= warm + warm / 4 + 16 * 1024,
        "RSS grew from {warm} kB after {warm_up} initializes to {end} kB after {count}"
    );
    drop(stream);
}

#[tokio::test]
async fn an_initialize_flood_leaves_the_session_table_bounded() {
    initialize_flood(4_000).await;
}

/// The issue's 100,000 `initialize`s (a few minutes in a debug build):
/// `cargo test --test it security::limits -- --ignored`.
#[tokio::test]
#[ignore]
async fn a_hundred_thousand_initializes_leave_the_session_table_bounded() {
    initialize_flood(100_000).await;
}

fn slow_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "slow", "arguments": {}}})
}

#[tokio::test]
async fn forged_session_ids_do_not_buy_a_fresh_in_flight_budget() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        sessions: false,
        max_in_flight_per_client: 2,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let url = server.at("/mcp");
    let mut slow = Vec::new();
    for id in 1..=2 {
        let url = url.clone();
        slow.push(tokio::spawn(async move {
            let forged = format!("forged-{id}");
            post(&client(), &url, Some(&forged), &slow_call(id)).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _, body) = post(&client(), &url, Some("forged-3"), &slow_call(3)).await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("at most 2"), "{body}");
    for call in slow {
        let (status, _, body) = call.await.expect("joined");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("late"), "{body}");
    }
    // Once they are done, the same sender is served again.
    let (status, _, body) = post(&client(), &url, Some("forged-4"), &slow_call(4)).await;
    assert_eq!(status, 200, "{body}");
}

/// The `data:` of the next event named `name` on an SSE response.
async fn next_event(response: &mut reqwest::Response, buffer: &mut String, name: &str) -> String {
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut event = "message";
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    event = value.trim();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            if event == name && !data.is_empty() {
                return data;
            }
        }
        let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk())
            .await
            .expect("an event within 5 s")
            .expect("readable")
            .expect("open");
        buffer.push_str(&String::from_utf8_lossy(&chunk).replace('\r', ""));
    }
}

#[tokio::test]
async fn the_legacy_message_route_has_the_in_flight_limit_and_streams_are_capped() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        max_in_flight_per_client: 2,
        max_sse_streams: 1,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let client = client();
    let mut events = client
        .get(server.at("/sse"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("GET /sse");
    assert_eq!(events.status(), 200);
    let mut buffer = String::new();
    let endpoint = next_event(&mut events, &mut buffer, "endpoint").await;
    let message_url = server.at(&endpoint);

    // The only stream slot is taken: a second stream gets 503, on either transport.
    let second = client
        .get(server.at("/sse"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("GET /sse");
    assert_eq!(second.status(), 503);
    assert!(
        second
            .text()
            .await
            .unwrap_or_default()
            .contains("max_sse_streams")
    );

    let send = |body: Value| {
        let (client, url) = (client.clone(), message_url.clone());
        async move {
            let response = client
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .expect("POST /message");
            let status = response.status().as_u16();
            (status, response.text().await.unwrap_or_default())
        }
    };
    let mut init = initialize(1);
    init["params"]["protocolVersion"] = json!("2024-11-05");
    assert_eq!(send(init).await.0, 202);
    next_event(&mut events, &mut buffer, "message").await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(initialized).await.0, 202);
    assert_eq!(send(slow_call(2)).await.0, 202);
    // Reusing an id in flight would release its ticket: refused, not a way around the limit.
    let (status, body) = send(slow_call(2)).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("already in flight"), "{body}");
    assert_eq!(send(slow_call(3)).await.0, 202);
    let (status, body) = send(slow_call(4)).await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("at most 2"), "{body}");
    // The answers arrive on the stream, and with them the budget comes back.
    for _ in 0..2 {
        let answer = next_event(&mut events, &mut buffer, "message").await;
        assert!(answer.contains("late"), "{answer}");
    }
    assert_eq!(send(slow_call(5)).await.0, 202);
    assert_eq!(healthz(&server.at("/healthz")).await, 200);
}

#[tokio::test]
async fn two_host_headers_or_a_target_naming_another_host_get_400() {
    // `/mcp` is served without the router unless CORS is configured, and through it then:
    // both ways answer alike.
    let upstream = upstream::start().await;
    let cors = ServerSettings {
        cors_origins: vec!["https://app.example.com".into()],
        ..ServerSettings::default()
    };
    for settings in [ServerSettings::default(), cors] {
        hosts_are_checked(&upstream.url(), settings).await;
    }
}

async fn hosts_are_checked(upstream: &str, settings: ServerSettings) {
    let server = start(upstream, settings).await;
    for path in ["/healthz", "/mcp"] {
        let answer = raw(
            server.addr,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{path}: {answer}");
        assert!(answer.contains("more than one Host header"), "{answer}");
    }
    let answer = raw(
        server.addr,
        "GET http://evil.example/healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("different hosts"), "{answer}");
    // A target naming a host is checked as the host: an MCP request for evil.example is
    // refused even though no Host header says so.
    let answer = raw(
        server.addr,
        "POST http://evil.example/mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    let answer = raw(
        server.addr,
        "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("needs a Host header"), "{answer}");
    let answer = raw(
        server.addr,
        "POST /mcp HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("needs a Host header"), "{answer}");
    let answer = raw(
        server.addr,
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    let answer = raw(
        server.addr,
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn an_idle_session_expires_and_its_client_gets_404() {
    let upstream = upstream::start().await;
    let settings = ServerSettings {
        session_idle_seconds: 2,
        ..ServerSettings::default()
    };
    let server = start(&upstream.url(), settings).await;
    let url = server.at("/mcp");
    let client = client();
    let (status, session, _) = post(&client, &url, None, &initialize(1)).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&client, &url, Some(&session), &initialized).await;
    // Calls answered without rmcp's worker keep the session alive too.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "getItem", "arguments": {"id": "1"}}});
    for _ in 0..4 {
        let (status, _, body) = post(&client, &url, Some(&session), &call).await;
        assert_eq!(status, 200, "{body}");
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    tokio::time::sleep(Duration::from_millis(5_000)).await;
    let (status, _, body) = post(&client, &url, Some(&session), &call).await;
    assert_eq!(status, 404, "the idle session was not closed: {body}");
}

/// The idempotency store's byte budget at full size: one client storing idempotent results
/// as fast as it can (it added 544 MB in 5.7 s before the store had a byte budget) leaves RSS bounded by its
/// share and /healthz answering. Minutes in a debug build:
/// `cargo test --test it security::limits -- --ignored`.
#[tokio::test]
#[ignore]
async fn a_store_flood_leaves_rss_bounded_by_the_callers_share() {
    let upstream = upstream::start().await;
    let config = super::upstreams::store_config(&upstream.url(), "");
    let dir = project(&config, &[]);
    let binary = Binary::start_with(
        dir.path(),
        &[
            ("RESTMCP_TEST_A", "flooding-token-77"),
            ("RESTMCP_TEST_B", "other-token-88"),
        ],
    )
    .await;
    let pid = binary.child.id().expect("pid");
    let url = binary.url.clone();
    let base = url.trim_end_matches("/mcp").to_string();
    let flood = |from: u64, to: u64| {
        let url = url.clone();
        async move {
            futures_util::stream::iter(from..to)
                .map(|n| {
                    let url = url.clone();
                    async move {
                        super::upstreams::keyed_update(&url, "flooding-token-77", &format!("k{n}"))
                            .await
                    }
                })
                .buffer_unordered(8)
                .count()
                .await
        }
    };
    // Past the caller's share (8 MiB, about 160 records) first, then measured.
    flood(0, 400).await;
    let warm = rss_kb(pid);
    flood(400, 4_000).await;
    let end = rss_kb(pid);
    assert_eq!(healthz(&format!("{base}/healthz")).await, 200);
    // 3,600 more records of about 50 kB is 180 MB unbounded; bounded, the share is kept.
    assert!(
        end <= warm + 48 * 1024,
        "RSS grew from {warm} kB to {end} kB while one caller stored 180 MB of results"
    );
}

/// Repeated in-flight request ids and per-client caps at full size, against the real binary
/// with its default bounds: an anonymous client repeats the id of its call in flight ten thousand times (each such
/// request once held an SSE answer open for ever, until every connection was taken), then
/// tries to hold two thousand sessions, each with its GET stream open. Every repeat is
/// refused at once, the client keeps at most its share of sessions and streams, another
/// anonymous client (from another address of this machine) is served, /healthz answers and
/// RSS stays flat. Minutes in a debug build:
/// `cargo test --test it security::limits -- --ignored`.
#[tokio::test]
#[ignore]
async fn repeated_ids_and_a_session_hoarder_leave_the_server_to_everyone() {
    let Some(outward) = super::clients::outward_address() else {
        eprintln!("skipped: this machine has no address but loopback");
        return;
    };
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"0.0.0.0:0\"\nallowed_hosts = []\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\n[reload]\nenabled = false\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    let pid = binary.child.id().expect("pid");
    let port = binary
        .url
        .rsplit(':')
        .next()
        .and_then(|rest| rest.trim_end_matches("/mcp").parse::<u16>().ok())
        .expect("a port");
    // The hoarder comes from 127.0.0.1, the other client from this machine's other address.
    let url = format!("http://127.0.0.1:{port}/mcp");
    let other_url = match outward {
        std::net::IpAddr::V6(v6) => format!("http://[{v6}]:{port}/mcp"),
        v4 => format!("http://{v4}:{port}/mcp"),
    };
    let base = url.trim_end_matches("/mcp").to_string();
    let client = client();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (_, session, _) = post(&client, &url, None, &initialize(0)).await;
    let session = session.expect("a session");
    post(&client, &url, Some(&session), &initialized).await;
    let slow = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let in_flight = {
        let (client, url, session, slow) =
            (client.clone(), url.clone(), session.clone(), slow.clone());
        tokio::spawn(async move { post(&client, &url, Some(&session), &slow).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let warm = rss_kb(pid);
    let refused = futures_util::stream::iter(0..10_000)
        .map(|_| {
            let (client, url, session, slow) =
                (client.clone(), url.clone(), session.clone(), slow.clone());
            async move { post(&client, &url, Some(&session), &slow).await.0 }
        })
        .buffer_unordered(16)
        .filter(|status| std::future::ready(*status == 400))
        .count()
        .await;
    let (status, _, body) = in_flight.await.expect("joined");
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("late"),
        "the first call still got its answer: {body}"
    );
    // Those that came before the call ended (two seconds) were refused at once; the rest
    // reused a free id and were served as new calls.
    assert!(
        refused >= 100,
        "{refused} of 10,000 repeats refused with 400"
    );
    assert_eq!(healthz(&format!("{base}/healthz")).await, 200);

    // Two thousand sessions, each with its GET stream.
    let mut streams = Vec::new();
    let mut sessions = 0;
    for id in 0..2_000 {
        let (status, session, _) = post(&client, &url, None, &initialize(id)).await;
        let Some(session) = session.filter(|_| status == 200) else {
            continue;
        };
        sessions += 1;
        post(&client, &url, Some(&session), &initialized).await;
        let stream = client
            .get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .expect("GET");
        if stream.status() == 200 {
            streams.push(stream);
        }
    }
    assert_eq!(
        sessions, 2_000,
        "each initialize closes one of the hoarder's own"
    );
    let scrape = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    // The streams of the sessions closed to make room ended with them.
    assert!(series(&scrape, "restmcp_sessions") <= 101, "{scrape}");
    assert!(
        series(&scrape, "restmcp_open_streams") <= 100,
        "server.max_streams_per_client = 100: {scrape}"
    );
    // The other client is served, and /healthz answers.
    let (status, other, _) = post(&client, &other_url, None, &initialize(1)).await;
    assert_eq!(status, 200);
    let other = other.expect("a session");
    post(&client, &other_url, Some(&other), &initialized).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, body) = post(&client, &other_url, Some(&other), &list).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(healthz(&format!("{base}/healthz")).await, 200);
    let end = rss_kb(pid);
    assert!(
        end <= warm + 64 * 1024,
        "RSS grew from {warm} kB to {end} kB"
    );
    drop(streams);
}
