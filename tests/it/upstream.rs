//! An in-process upstream on 127.0.0.1:0 that echoes exactly what it received, plus
//! routes under `/_/` that misbehave on purpose. No traffic leaves the machine.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use base64::Engine as _;
use serde_json::{Map, Value, json};

/// Counts requests per behaviour, for retry assertions.
#[derive(Default)]
pub struct Counters {
    pub flaky: AtomicUsize,
    /// Status polls of the long-running job (`/_/jobs`).
    pub polls: AtomicUsize,
    pub all: AtomicUsize,
}

pub struct Upstream {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
}

impl Upstream {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// What the echo handler saw, as JSON.
async fn echo(State(counters): State<Arc<Counters>>, request: Request) -> Json<Value> {
    counters.all.fetch_add(1, Ordering::SeqCst);
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 16 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let mut headers = Map::new();
    for (name, value) in &parts.headers {
        headers.insert(
            name.as_str().to_string(),
            json!(String::from_utf8_lossy(value.as_bytes())),
        );
    }
    Json(json!({
        "method": parts.method.as_str(),
        "path": parts.uri.path(),
        "query": parts.uri.query(),
        "headers": headers,
        "body": String::from_utf8_lossy(&bytes),
        "body_base64": base64::engine::general_purpose::STANDARD.encode(&bytes),
    }))
}

async fn status(Path(code): Path<u16>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
    (
        status,
        Json(json!({"error": "requested status", "code": code})),
    )
        .into_response()
}

async fn job_status(State(counters): State<Arc<Counters>>) -> Response {
    let n = counters.polls.fetch_add(1, Ordering::SeqCst);
    if n < 2 {
        (
            [(header::RETRY_AFTER, "1")],
            Json(json!({"status": "Running"})),
        )
            .into_response()
    } else {
        Json(json!({"status": "Succeeded", "resourceLocation": "/_/jobs/7"})).into_response()
    }
}

async fn flaky(State(counters): State<Arc<Counters>>) -> Response {
    let n = counters.flaky.fetch_add(1, Ordering::SeqCst);
    if n == 0 {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "0")],
            "try again",
        )
            .into_response()
    } else {
        Json(json!({"attempt": n + 1})).into_response()
    }
}

/// The bearer token the auth tests configure; it must never appear in any output.
pub const SECRET_TOKEN: &str = "s3cr3t-token-value-0f9a";

/// A 1x1 transparent PNG.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// Starts the upstream; it runs until the test's runtime ends.
pub async fn start() -> Upstream {
    let counters = Arc::new(Counters::default());
    let app = Router::new()
        .route(
            "/_/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                "late"
            }),
        )
        .route("/_/status/{code}", get(status))
        .route("/_/big", get(|| async { "x".repeat(100_000) }))
        .route(
            "/_/image",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], PNG) }),
        )
        .route("/_/flaky", get(flaky).post(flaky))
        // A long-running operation, Azure style: 202 with Operation-Location, a status that
        // runs for two polls (Retry-After: 1), then names the finished resource.
        .route(
            "/_/jobs",
            axum::routing::post(|| async {
                (
                    StatusCode::ACCEPTED,
                    [
                        ("operation-location", "/_/jobs/7/status"),
                        ("retry-after", "0"),
                    ],
                    Json(json!({"status": "NotStarted"})),
                )
            }),
        )
        .route("/_/jobs/7/status", get(job_status))
        .route(
            "/_/jobs/7",
            get(|| async { Json(json!({"id": 7, "report": "done"})) }),
        )
        // Three pages of two items, GitHub style: `Link: <…?page=N&per_page=2>; rel="next"`.
        .route(
            "/_/pages",
            get(|axum::extract::RawQuery(query): axum::extract::RawQuery| async move {
                let query = query.unwrap_or_default();
                let page: u64 = query
                    .split('&')
                    .find_map(|pair| pair.strip_prefix("page="))
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1);
                let items = json!([{"n": page * 2 - 1}, {"n": page * 2}]);
                let mut response = Json(items).into_response();
                if page < 3 {
                    let link = format!(
                        "</_/pages?page={}&per_page=2>; rel=\"next\", </_/pages?page=3&per_page=2>; rel=\"last\"",
                        page + 1
                    );
                    response
                        .headers_mut()
                        .insert(header::LINK, link.parse().expect("header"));
                }
                response
            }),
        )
        // An operation that fails upstream after it was accepted.
        .route(
            "/_/doomed",
            axum::routing::post(|| async {
                (
                    StatusCode::ACCEPTED,
                    [("operation-location", "/_/doomed/status"), ("retry-after", "0")],
                    Json(json!({})),
                )
            }),
        )
        .route(
            "/_/doomed/status",
            get(|| async {
                Json(json!({"status": "Failed", "error": {"code": "QuotaExceeded", "message": "out of quota"}}))
            }),
        )
        // Azure's PUT: 201 naming its monitor (Azure-AsyncOperation); once it says
        // Succeeded, the resource is read at the original URL.
        .route(
            "/_/things/1",
            axum::routing::put(|| async {
                (
                    StatusCode::CREATED,
                    [("azure-asyncoperation", "/_/things/1/op"), ("retry-after", "0")],
                    Json(json!({"id": 1, "provisioningState": "Creating"})),
                )
            })
            .get(|| async { Json(json!({"id": 1, "provisioningState": "Succeeded", "size": "large"})) }),
        )
        .route(
            "/_/things/1/op",
            get(|| async { Json(json!({"status": "Succeeded"})) }),
        )
        .route(
            "/_/wrong-shape",
            get(|| async { Json(json!({"name": 42})) }),
        )
        .route("/_/list", get(|| async { Json(json!([1, 2, 3])) }))
        .route(
            "/_/redirect-away",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "http://127.0.0.2:9/elsewhere")],
                    Body::empty(),
                )
            }),
        )
        .route(
            "/_/auth-check",
            get(|headers: axum::http::HeaderMap| async move {
                let given = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok());
                if given == Some(&format!("Bearer {SECRET_TOKEN}")) {
                    (StatusCode::OK, Json(json!({"authorized": true})))
                } else {
                    (StatusCode::UNAUTHORIZED, Json(json!({"authorized": false})))
                }
            }),
        )
        .route(
            "/_/echo-error",
            get(|headers: axum::http::HeaderMap| async move {
                let seen: Vec<String> = headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())))
                    .collect();
                (StatusCode::BAD_REQUEST, seen.join("\n"))
            }),
        )
        .fallback(echo)
        .with_state(counters.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    Upstream { addr, counters }
}

/// One part of a multipart body: name, filename, content type, bytes.
pub type Part = (String, Option<String>, Option<String>, Vec<u8>);

/// An upstream that accepts one connection, reads the request, never answers, and signals
/// when the client closes the connection: how tests see that a call was really dropped.
pub async fn start_silent() -> (SocketAddr, tokio::sync::oneshot::Receiver<()>) {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut buffer = [0u8; 4096];
        loop {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(_) => continue,
            }
        }
        let _ = closed_tx.send(());
    });
    (addr, closed_rx)
}

/// Parses a multipart/form-data body into its parts with multer, the parser behind axum's
/// `Multipart` (independent of restmcp's own serializer): name, filename, content type,
/// bytes. Panics on a body multer refuses.
pub async fn multipart_parts(content_type: &str, body: &[u8]) -> Vec<Part> {
    let boundary = multer::parse_boundary(content_type).expect("a multipart boundary");
    let chunk: Result<Vec<u8>, std::io::Error> = Ok(body.to_vec());
    let mut multipart = multer::Multipart::new(futures_util::stream::iter([chunk]), boundary);
    let mut parts = Vec::new();
    while let Some(field) = multipart.next_field().await.expect("well-formed multipart") {
        let name = field.name().unwrap_or_default().to_string();
        let filename = field.file_name().map(str::to_string);
        let part_type = field.content_type().map(ToString::to_string);
        let bytes = field.bytes().await.expect("part content");
        parts.push((name, filename, part_type, bytes.to_vec()));
    }
    parts
}
