//! Fault injection: a misbehaving upstream on loopback, one misbehaviour per
//! path. Each call ends with the right result within its timeout, a healthy call made
//! while it is in flight is answered as usual, and afterwards no connection to the
//! upstream and no task is left behind (both counted).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use restmcp::upstream::{CallContext, Dispatcher, ToolResult, UpstreamSettings};
use serde_json::{Map, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::dispatch::dispatcher_for;
use crate::support::fixture;

const TIMEOUT: Duration = Duration::from_millis(800);
const CAP: u64 = 1000;

/// The upstream: counts the connections it has open, and what it was asked.
struct Faulty {
    addr: std::net::SocketAddr,
    open: Arc<AtomicUsize>,
    busy_calls: Arc<AtomicUsize>,
}

impl Faulty {
    async fn start(redirect_to: Option<String>) -> Faulty {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let open = Arc::new(AtomicUsize::new(0));
        let busy_calls = Arc::new(AtomicUsize::new(0));
        let (open_, busy_) = (open.clone(), busy_calls.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                open_.fetch_add(1, Ordering::SeqCst);
                let open = open_.clone();
                let busy = busy_.clone();
                let redirect_to = redirect_to.clone();
                tokio::spawn(async move {
                    misbehave(stream, &busy, redirect_to.as_deref()).await;
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Faulty {
            addr,
            open,
            busy_calls,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Reads one request head and answers it the way its path asks for.
async fn misbehave(mut stream: TcpStream, busy: &AtomicUsize, redirect_to: Option<&str>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let target = head.split(' ').nth(1).unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/");
    // The same answers below a base path, for APIs whose base URL has one.
    let path = path.strip_prefix("/api").unwrap_or(path).to_string();
    let json = "Content-Type: application/json\r\nConnection: close";
    match path.as_str() {
        "/ok" => answer(&mut stream, "200 OK", json, b"{\"ok\":true}").await,
        "/hang" => until_closed(&mut stream).await,
        "/stall-body" => {
            let _ = stream
                .write_all(
                    format!("HTTP/1.1 200 OK\r\n{json}\r\nContent-Length: 1000\r\n\r\n{{\"ok\":")
                        .as_bytes(),
                )
                .await;
            until_closed(&mut stream).await;
        }
        "/reset" => {
            let _ = stream
                .write_all(
                    format!("HTTP/1.1 200 OK\r\n{json}\r\nContent-Length: 1000\r\n\r\n{{\"ok\":")
                        .as_bytes(),
                )
                .await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            // Linger 0: closing sends a TCP reset instead of a clean end.
            let _ = stream.set_zero_linger();
        }
        "/invalid-json" => answer(&mut stream, "200 OK", json, b"{\"ok\": tru").await,
        "/wrong-type" => {
            let html = "Content-Type: text/html\r\nConnection: close";
            answer(
                &mut stream,
                "200 OK",
                html,
                b"<html><body>maintenance</body></html>",
            )
            .await;
        }
        "/gzip" => {
            let bomb = std::fs::read(fixture("faults/bomb.json.gz")).expect("bomb");
            let headers = format!("{json}\r\nContent-Encoding: gzip");
            answer(&mut stream, "200 OK", &headers, &bomb).await;
        }
        "/big" => {
            // Chunked, so the size is known only by reading: ten times the cap.
            let _ = stream
                .write_all(
                    format!("HTTP/1.1 200 OK\r\n{json}\r\nTransfer-Encoding: chunked\r\n\r\n")
                        .as_bytes(),
                )
                .await;
            for _ in 0..10 {
                let chunk = "x".repeat(CAP as usize);
                let _ = stream
                    .write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())
                    .await;
            }
            let _ = stream.write_all(b"0\r\n\r\n").await;
            until_closed(&mut stream).await;
        }
        "/redirect" => {
            let target = redirect_to.unwrap_or("http://localhost:1");
            let headers = format!("Location: {target}/ok?token=secret\r\nConnection: close");
            answer(&mut stream, "302 Found", &headers, b"").await;
        }
        "/busy-once" if busy.fetch_add(1, Ordering::SeqCst) == 0 => {
            let headers = format!("{json}\r\nRetry-After: 1");
            answer(
                &mut stream,
                "429 Too Many Requests",
                &headers,
                b"{\"error\":\"slow down\"}",
            )
            .await;
        }
        "/busy-once" => answer(&mut stream, "200 OK", json, b"{\"ok\":true}").await,
        "/busy" => {
            busy.fetch_add(1, Ordering::SeqCst);
            let headers = format!("{json}\r\nRetry-After: 7");
            answer(
                &mut stream,
                "429 Too Many Requests",
                &headers,
                b"{\"error\":\"slow down\"}",
            )
            .await;
        }
        "/busy-long" => {
            busy.fetch_add(1, Ordering::SeqCst);
            let headers = format!("{json}\r\nRetry-After: 30");
            answer(&mut stream, "429 Too Many Requests", &headers, b"{}").await;
        }
        _ => answer(&mut stream, "404 Not Found", json, b"{}").await,
    }
}

async fn answer(stream: &mut TcpStream, status: &str, headers: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\n{headers}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body).await;
    let _ = stream.shutdown().await;
    until_closed(stream).await;
}

/// Waits for the client to close its end (or reset it).
async fn until_closed(stream: &mut TcpStream) {
    let mut sink = [0u8; 1024];
    while let Ok(n) = stream.read(&mut sink).await {
        if n == 0 {
            break;
        }
    }
}

fn settings() -> UpstreamSettings {
    UpstreamSettings {
        timeout: TIMEOUT,
        max_response_bytes: CAP,
        ..UpstreamSettings::default()
    }
}

async fn faults_dispatcher(upstream: &Faulty, settings: UpstreamSettings) -> Dispatcher {
    dispatcher_for(fixture("faults.yaml"), &upstream.url(), settings).await
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits up to 3 s for `done`; false if it never held.
async fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done()
}

/// Calls `tool` while healthy calls run beside it, checks it ends within the timeout
/// (plus scheduling slack), and that it leaves no upstream connection or task behind.
async fn call_with_bystanders(
    dispatcher: &Dispatcher,
    upstream: &Faulty,
    tool: &str,
) -> (ToolResult, Duration) {
    let ok = dispatcher
        .call("ok", Map::new(), &CallContext::default())
        .await
        .expect("known");
    assert!(!ok.is_error, "warm-up: {}", ok.joined_text());
    assert!(eventually(|| upstream.open.load(Ordering::SeqCst) == 0).await);
    let tasks = alive_tasks();

    let started = Instant::now();
    let context = CallContext::default();
    let fault = async {
        let result = dispatcher
            .call(tool, Map::new(), &context)
            .await
            .expect("known");
        (result, started.elapsed())
    };
    let bystanders = async {
        for _ in 0..5 {
            let begun = Instant::now();
            let result = dispatcher
                .call("ok", Map::new(), &CallContext::default())
                .await
                .expect("known");
            assert!(
                !result.is_error,
                "a healthy call failed: {}",
                result.joined_text()
            );
            assert_eq!(result.structured, Some(json!({"ok": true})));
            assert!(
                begun.elapsed() < Duration::from_millis(400),
                "{:?}",
                begun.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let ((result, took), ()) = tokio::join!(fault, bystanders);
    assert!(
        took < TIMEOUT + Duration::from_millis(700),
        "{tool} took {took:?}"
    );
    assert!(
        eventually(|| upstream.open.load(Ordering::SeqCst) == 0).await,
        "{tool}: {} upstream connections left open",
        upstream.open.load(Ordering::SeqCst)
    );
    assert!(
        eventually(|| alive_tasks() <= tasks).await,
        "{tool}: {} tasks alive, {tasks} before",
        alive_tasks()
    );
    (result, took)
}

#[tokio::test]
async fn a_refused_connection_is_an_error_at_once() {
    let upstream = Faulty::start(None).await;
    let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let refused = dispatcher_for(
        fixture("faults.yaml"),
        &format!("http://127.0.0.1:{port}"),
        settings(),
    )
    .await;
    let healthy = faults_dispatcher(&upstream, settings()).await;
    let tasks = alive_tasks();
    let context = CallContext::default();
    let (result, ok) = tokio::join!(
        refused.call("ok", Map::new(), &context),
        healthy.call("ok", Map::new(), &context),
    );
    let (result, ok) = (result.expect("known"), ok.expect("known"));
    assert!(!ok.is_error);
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" could not be reached for GET /ok:"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
    assert!(eventually(|| upstream.open.load(Ordering::SeqCst) == 0).await);
    assert!(eventually(|| alive_tasks() <= tasks).await);
}

/// A call whose upstream stops answering ends at the timeout with an error naming it.
async fn times_out(tool: &str, path: &str) {
    let upstream = Faulty::start(None).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, took) = call_with_bystanders(&dispatcher, &upstream, tool).await;
    assert!(took >= TIMEOUT, "{took:?}");
    assert!(result.is_error);
    assert_eq!(
        result.joined_text(),
        format!(
            "upstream API \"echo\" did not answer GET {path} within 0.8 s; the call was abandoned"
        )
    );
}

#[tokio::test]
async fn an_upstream_that_never_answers_times_out() {
    times_out("hang", "/hang").await;
}

#[tokio::test]
async fn a_body_that_stalls_after_the_headers_times_out() {
    times_out("stallBody", "/stall-body").await;
}

#[tokio::test]
async fn a_connection_reset_mid_body_is_an_error_naming_the_api() {
    let upstream = Faulty::start(None).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, took) = call_with_bystanders(&dispatcher, &upstream, "reset").await;
    assert!(
        took < TIMEOUT,
        "reported at once, not at the timeout: {took:?}"
    );
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" could not be reached for GET /reset:"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[tokio::test]
async fn invalid_json_with_a_200_is_an_error_quoting_the_body() {
    let upstream = Faulty::start(None).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, _) = call_with_bystanders(&dispatcher, &upstream, "invalidJson").await;
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    let text = result.joined_text();
    assert!(
        text.starts_with(
            "upstream API \"echo\" answered 200 OK with application/json, but the body is not valid JSON"
        ),
        "{text}"
    );
    assert!(text.ends_with("Body: {\"ok\": tru"), "{text}");
}

/// HTML where JSON was documented: the call succeeded, so the page is returned as text
/// (a maintenance page is worth reading), with the empty placeholder the outputSchema
/// allows and no claim that it is the documented object.
#[tokio::test]
async fn a_wrong_content_type_is_returned_as_text_not_as_structured_data() {
    let upstream = Faulty::start(None).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, _) = call_with_bystanders(&dispatcher, &upstream, "wrongType").await;
    // The tool has an outputSchema: no structured data is claimed, and the flag says so.
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    assert_eq!(
        result.joined_text(),
        "upstream API \"echo\" answered 200 OK with text/html, not the JSON the tool's \
         outputSchema describes; the request itself succeeded and the response follows.\n\
         <html><body>maintenance</body></html>"
    );
}

#[tokio::test]
async fn a_compressed_body_is_decoded_only_as_far_as_the_cap_needs() {
    let upstream = Faulty::start(None).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    // 20 MiB of JSON in 20 KiB: decoding stops 16 caps past the cap, long before the end.
    let (result, elapsed) = call_with_bystanders(&dispatcher, &upstream, "gzipBomb").await;
    assert!(elapsed < TIMEOUT, "{elapsed:?}");
    assert!(result.is_error, "too large for its outputSchema");
    let text = result.joined_text();
    assert!(
        text.starts_with(
            "upstream API \"echo\" answered 200 OK with application/json, but the body ("
        ),
        "{text}"
    );
    assert!(text.contains("\n[0,0,0,0"), "{text}");
    assert!(text.contains("[response truncated: 1000 B of "), "{text}");
}

#[tokio::test]
async fn a_body_ten_times_the_cap_is_cut_and_counted() {
    let upstream = Faulty::start(None).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, _) = call_with_bystanders(&dispatcher, &upstream, "big").await;
    // Too large to be the structured data the tool's outputSchema describes.
    assert!(result.is_error, "{}", result.joined_text());
    assert_eq!(result.structured, None);
    let text = result.content[1..]
        .iter()
        .map(|c| match c {
            restmcp::upstream::Content::Text { text } => text.as_str(),
            _ => "",
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        result
            .joined_text()
            .contains("the body (9.8 KiB) is larger than the response size cap (1000 B read)"),
        "{}",
        result.joined_text()
    );
    assert!(
        text.starts_with(&"x".repeat(CAP as usize)),
        "{}",
        &text[..80]
    );
    assert!(!text.contains(&"x".repeat(CAP as usize + 1)));
    assert!(
        text.contains("9000 bytes omitted"),
        "{}",
        &text[CAP as usize..]
    );
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed_unless_listed() {
    let elsewhere = Faulty::start(None).await;
    let target = format!("http://localhost:{}", elsewhere.addr.port());
    let upstream = Faulty::start(Some(target.clone())).await;
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, _) = call_with_bystanders(&dispatcher, &upstream, "redirect").await;
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" answered 302 Found"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "It redirects to another origin, {target}, which restmcp does not follow unless \
             apis.echo.follow_redirects lists it."
        )),
        "{text}"
    );
    assert!(
        !text.contains("secret"),
        "the target's query is not repeated: {text}"
    );

    let allowed = UpstreamSettings {
        follow_redirects: vec![restmcp::config::parse_origin(&target).expect("origin")],
        ..settings()
    };
    let dispatcher = faults_dispatcher(&upstream, allowed.clone()).await;
    let (result, _) = call_with_bystanders(&dispatcher, &upstream, "redirect").await;
    assert!(!result.is_error, "{}", result.joined_text());
    assert_eq!(result.structured, Some(json!({"ok": true})));

    // The API's own origin is its base URL's, path or not.
    let below_a_path = dispatcher_for(
        fixture("faults.yaml"),
        &format!("{}/api", upstream.url()),
        allowed,
    )
    .await;
    let result = below_a_path
        .call("redirect", Map::new(), &CallContext::default())
        .await
        .expect("known");
    assert!(!result.is_error, "{}", result.joined_text());
    assert_eq!(result.structured, Some(json!({"ok": true})));
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_when_safe_and_explained_when_not() {
    let upstream = Faulty::start(None).await;
    let patient = UpstreamSettings {
        timeout: Duration::from_secs(3),
        ..settings()
    };
    let dispatcher = faults_dispatcher(&upstream, patient).await;
    let started = Instant::now();
    let result = dispatcher
        .call("busyOnce", Map::new(), &CallContext::default())
        .await
        .expect("known");
    assert!(!result.is_error, "{}", result.joined_text());
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited as asked: {:?}",
        started.elapsed()
    );
    assert_eq!(upstream.busy_calls.load(Ordering::SeqCst), 2);

    // A POST is not retried, and the model is told how long to wait.
    let dispatcher = faults_dispatcher(&upstream, settings()).await;
    let (result, took) = call_with_bystanders(&dispatcher, &upstream, "busy").await;
    assert!(took < TIMEOUT, "{took:?}");
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" answered 429 Too Many Requests:"),
        "{text}"
    );
    assert!(
        text.ends_with("The upstream asked to wait before retrying: Retry-After: 7."),
        "{text}"
    );
    assert_eq!(upstream.busy_calls.load(Ordering::SeqCst), 3, "sent once");

    // A GET asked to wait longer than restmcp waits is not retried early: the error says
    // how long, at once.
    let patient = UpstreamSettings {
        timeout: Duration::from_secs(60),
        ..settings()
    };
    let dispatcher = faults_dispatcher(&upstream, patient).await;
    let started = Instant::now();
    let result = dispatcher
        .call("busyLong", Map::new(), &CallContext::default())
        .await
        .expect("known");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(result.is_error);
    assert!(
        result
            .joined_text()
            .ends_with("The upstream asked to wait before retrying: Retry-After: 30."),
        "{}",
        result.joined_text()
    );
    assert_eq!(upstream.busy_calls.load(Ordering::SeqCst), 4, "sent once");
}
