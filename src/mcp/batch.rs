//! In front of rmcp's Streamable HTTP service: JSON-RPC batches, which only protocol
//! revision 2025-03-26 allows (2025-06-18 removed
//! them). rmcp does not accept batches, so a POST whose body is an array is split here into
//! single requests for the Streamable HTTP service, and their responses are gathered into one
//! JSON array. A session DELETE is answered 200 rather than rmcp's 202. Everything else
//! passes through untouched.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use tower::{Service, ServiceExt as _};

/// Splits 2025-03-26 batches for the wrapped MCP service.
#[derive(Clone)]
pub struct Batches<S> {
    inner: S,
    max_body: usize,
}

impl<S> Batches<S> {
    pub fn new(inner: S, max_body: usize) -> Self {
        Batches { inner, max_body }
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl<S, B> Service<Request<Body>> for Batches<S>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> BoxFuture {
        let inner = self.inner.clone();
        let max_body = self.max_body;
        Box::pin(async move {
            if request.method() == Method::DELETE {
                // The spec names no success status for ending a session; rmcp says 202, and
                // the Python SDK accepts only 200 or 204 (it logs a failure otherwise).
                let mut response = forward(inner, request).await;
                if response.status() == StatusCode::ACCEPTED {
                    *response.status_mut() = StatusCode::OK;
                }
                return Ok(response);
            }
            if request.method() != Method::POST {
                return Ok(forward(inner, request).await);
            }
            let (parts, body) = request.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, max_body).await else {
                return Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large"));
            };
            let is_batch = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
            if !is_batch {
                let request = Request::from_parts(parts, Body::from(bytes));
                return Ok(forward(inner, request).await);
            }
            let version = parts
                .headers
                .get("mcp-protocol-version")
                .and_then(|v| v.to_str().ok());
            if version.is_some_and(|v| v != "2025-03-26") {
                return Ok(rpc_error(
                    "JSON-RPC batches are not supported after protocol 2025-03-26",
                ));
            }
            let Ok(Value::Array(messages)) = serde_json::from_slice::<Value>(&bytes) else {
                return Ok(rpc_error("the batch is not a JSON array"));
            };
            if messages.is_empty() {
                return Ok(rpc_error("an empty batch is not a valid request"));
            }
            if messages
                .iter()
                .any(|m| m.get("method") == Some(&json!("initialize")))
            {
                return Ok(rpc_error("initialize must not be part of a batch"));
            }
            let mut responses = Vec::new();
            for message in messages {
                let mut single = Request::builder()
                    .method(Method::POST)
                    .uri(parts.uri.clone())
                    .body(Body::from(message.to_string()))
                    .unwrap_or_default();
                *single.headers_mut() = parts.headers.clone();
                single.headers_mut().remove(header::CONTENT_LENGTH);
                *single.extensions_mut() = parts.extensions.clone();
                let response = forward(inner.clone(), single).await;
                let status = response.status();
                if status == StatusCode::ACCEPTED {
                    continue;
                }
                if !status.is_success() {
                    return Ok(response);
                }
                let Ok(body) = axum::body::to_bytes(response.into_body(), usize::MAX).await else {
                    continue;
                };
                responses.extend(messages_in(&body));
            }
            if responses.is_empty() {
                return Ok(plain(StatusCode::ACCEPTED, ""));
            }
            let mut response = Response::new(Body::from(Value::Array(responses).to_string()));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Ok(response)
        })
    }
}

async fn forward<S, B>(inner: S, request: Request<Body>) -> Response<Body>
where
    S: Service<Request<Body>, Response = Response<B>, Error = Infallible>,
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    match inner.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// The JSON-RPC messages of a response body: plain JSON, or the `data:` lines of SSE.
fn messages_in(body: &[u8]) -> Vec<Value> {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        return vec![value];
    }
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter(|message| message.get("id").is_some())
        .collect()
}

fn rpc_error(message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}
