//! The part of a request body the app did not read: read and thrown away after the answer,
//! or the answer says the connection closes.
//!
//! restmcp answers some requests before reading their bodies: a bad Host or Origin, a
//! missing or refused token, a session that is not the client's, a path or method not
//! served, a body over the limit. When a service drops a request body that has not all
//! arrived, hyper stops reading the connection and closes it once the answer is sent, but
//! the answer's head does not say so. A client that sends its next request on that
//! connection (its pool believes it kept alive) races the close, and that request fails
//! with no answer: httpx's "Server disconnected without sending a response". Whether it
//! happens depends on whether the body arrived before the answer.
//!
//! So [`body_of`] gives the app a [`RequestBody`] that, dropped before its end, leaves the
//! rest in the connection's [`Unread`] slot, and [`settle`] takes it when the answer is
//! ready:
//! - the rest is small (at most [`DRAIN_LIMIT`] bytes, by its Content-Length or as it
//!   comes): it is read and thrown away beside the answer, within [`DRAIN_TIME`], and the
//!   connection stays open, as nginx discards a body it did not need;
//! - it is larger, the client waits for `100 Continue` before sending it, or the answer
//!   already closes: the answer says `Connection: close` (RFC 9112, section 9.6), and the
//!   client opens a new connection for its next request.
//!
//! A request without a body costs nothing here; one whose body the app reads to its end
//! costs a check when the body is dropped and one when the answer is ready.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Bytes, Frame, Incoming, SizeHint};

/// The most of a request body read and thrown away to keep its connection open.
pub const DRAIN_LIMIT: u64 = 256 * 1024;

/// How long the rest of a body may take to arrive before its connection is dropped.
#[cfg(not(test))]
pub const DRAIN_TIME: Duration = Duration::from_secs(5);
#[cfg(test)]
pub const DRAIN_TIME: Duration = Duration::from_millis(500);

/// A connection's request body dropped before its end, until [`settle`] takes it. hyper
/// serves one request of a connection at a time, so one slot is enough.
#[derive(Default)]
pub struct Unread(Mutex<Option<Rest>>);

/// The rest of a body, and whether its client waits for `100 Continue` before sending it.
struct Rest {
    body: Incoming,
    expects_continue: bool,
}

impl Unread {
    fn put(&self, rest: Rest) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(rest);
    }

    fn take(&self) -> Option<Rest> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// `request` as the app takes it: its body, when it has one, a [`RequestBody`] that
/// leaves what it did not read in `unread`.
pub fn body_of(request: hyper::Request<Incoming>, unread: &Arc<Unread>) -> Request<Body> {
    if request.body().is_end_stream() {
        return request.map(Body::new);
    }
    let expects_continue = request.headers().contains_key(header::EXPECT);
    request.map(|body| {
        Body::new(RequestBody {
            inner: Some(body),
            ended: false,
            expects_continue,
            unread: unread.clone(),
        })
    })
}

/// A request body that, dropped before its end, leaves the rest in its connection's slot.
pub struct RequestBody {
    /// `None` only once dropped.
    inner: Option<Incoming>,
    /// The body said it had no more frames.
    ended: bool,
    expects_continue: bool,
    unread: Arc<Unread>,
}

impl hyper::body::Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            self.ended = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.as_ref().is_none_or(Incoming::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Incoming::size_hint)
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        if self.is_end_stream() {
            return;
        }
        if let Some(body) = self.inner.take() {
            self.unread.put(Rest {
                body,
                expects_continue: self.expects_continue,
            });
        }
    }
}

/// `response`, ready to be sent for a request whose body may be in `unread`: the rest
/// read and thrown away beside it when small, or the response saying `Connection: close`.
pub fn settle<B>(unread: &Unread, mut response: Response<B>) -> Response<B> {
    let Some(rest) = unread.take() else {
        return response;
    };
    let closes = response
        .headers()
        .get_all(header::CONNECTION)
        .iter()
        .any(says_close);
    // A Content-Length body's hint is exactly what is left; a chunked one's is at least 0.
    let too_large = rest.body.size_hint().lower() > DRAIN_LIMIT;
    if closes || too_large || rest.expects_continue {
        if !closes {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        // Dropped: hyper closes the connection once the response is sent.
        return response;
    }
    tokio::spawn(drain(rest.body));
    response
}

/// Whether a `Connection` header value lists `close`.
fn says_close(value: &HeaderValue) -> bool {
    value
        .as_bytes()
        .split(|&b| b == b',')
        .any(|token| token.trim_ascii().eq_ignore_ascii_case(b"close"))
}

/// Reads `body` to its end, dropping it (and so closing its connection) past
/// [`DRAIN_LIMIT`] bytes or [`DRAIN_TIME`].
async fn drain(mut body: Incoming) {
    let to_end = async {
        let mut read = 0u64;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return };
            if let Some(data) = frame.data_ref() {
                read += data.len() as u64;
                if read > DRAIN_LIMIT {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, to_end).await;
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::Router;
    use axum::routing::{get, post};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::http::listener::{Connections, serve};

    /// A server with `/refuse`, which answers 404 without reading the body, `/read`, which
    /// reads it, and `/`.
    async fn start() -> (SocketAddr, CancellationToken) {
        let app = Router::new()
            .route("/", get(|| async { "ok" }))
            .route(
                "/refuse",
                post(|| async { (axum::http::StatusCode::NOT_FOUND, "refused") }),
            )
            .route("/read", post(|body: String| async move { body }));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let connections =
            Connections::with_limits(Duration::from_secs(10), Duration::from_secs(10), 16);
        tokio::spawn(serve(listener, app.into(), None, connections, async move {
            stopped.cancelled().await
        }));
        (addr, stop)
    }

    /// One response's head and body (by its Content-Length), or what came before the peer
    /// closed, read from `stream` within two seconds; `None` when the peer closed first.
    async fn response(stream: &mut TcpStream) -> Option<String> {
        let mut seen = Vec::new();
        let read = async {
            loop {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                seen.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&seen).to_string();
                let Some(end) = text.find("\r\n\r\n") else {
                    continue;
                };
                if text.starts_with("HTTP/1.1 100") {
                    return Some(text);
                }
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_string)
                    })
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if seen.len() >= end + 4 + length {
                    return Some(text);
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(2), read)
            .await
            .ok()
            .flatten()
    }

    /// Whether the peer closes `stream` within two seconds (reading past any bytes).
    async fn closes(stream: &mut TcpStream) -> bool {
        let mut sink = Vec::new();
        tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut sink))
            .await
            .is_ok()
    }

    /// Asserts that `stream` takes another request and answers it.
    async fn answers_again(stream: &mut TcpStream) {
        let next = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
        stream.write_all(next).await.expect("next request");
        let answer = response(stream).await;
        assert!(
            answer
                .as_deref()
                .is_some_and(|n| n.starts_with("HTTP/1.1 200") && n.ends_with("ok")),
            "the next request on the connection is answered: {answer:?}"
        );
    }

    /// Sends `head`, then (after the server had time to answer) `body`, and reads the answer.
    async fn late_body(addr: SocketAddr, head: &str, body: &[u8]) -> (TcpStream, String) {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(head.as_bytes()).await.expect("head");
        tokio::time::sleep(Duration::from_millis(150)).await;
        stream.write_all(body).await.expect("body");
        let answer = response(&mut stream).await.expect("an answer");
        (stream, answer)
    }

    #[tokio::test]
    async fn a_refused_body_that_arrives_late_is_read_and_the_connection_answers_again() {
        let (addr, _stop) = start().await;
        let (mut stream, answer) = late_body(
            addr,
            "POST /refuse HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\n\r\n",
            b"hello world",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        assert!(
            !answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
        answers_again(&mut stream).await;
    }

    #[tokio::test]
    async fn a_refused_chunked_body_is_read_to_its_end_too() {
        let (addr, _stop) = start().await;
        let (mut stream, answer) = late_body(
            addr,
            "POST /refuse HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        answers_again(&mut stream).await;
    }

    #[tokio::test]
    async fn a_body_read_by_the_app_leaves_nothing_to_settle() {
        let (addr, _stop) = start().await;
        let (mut stream, answer) = late_body(
            addr,
            "POST /read HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\n\r\n",
            b"hello world",
        )
        .await;
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.ends_with("hello world"),
            "{answer}"
        );
        answers_again(&mut stream).await;
    }

    #[tokio::test]
    async fn a_refused_body_larger_than_the_drain_limit_gets_connection_close() {
        let (addr, _stop) = start().await;
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let head = format!(
            "POST /refuse HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n",
            DRAIN_LIMIT + 1
        );
        stream.write_all(head.as_bytes()).await.expect("head");
        let answer = response(&mut stream).await.expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
        assert!(
            closes(&mut stream).await,
            "the server closes the connection"
        );
    }

    #[tokio::test]
    async fn a_client_waiting_for_100_continue_is_answered_finally_and_told_the_connection_closes()
    {
        let (addr, _stop) = start().await;
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(
                b"POST /refuse HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\n\
                  Expect: 100-continue\r\n\r\n",
            )
            .await
            .expect("head");
        let answer = response(&mut stream).await.expect("an answer");
        assert!(
            answer.starts_with("HTTP/1.1 404"),
            "no 100 Continue first: {answer}"
        );
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn a_body_that_never_arrives_is_given_up_after_the_drain_time() {
        let (addr, _stop) = start().await;
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"POST /refuse HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\n\r\n")
            .await
            .expect("head");
        let answer = response(&mut stream).await.expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        let waited = std::time::Instant::now();
        assert!(
            closes(&mut stream).await,
            "closed once the drain time passed"
        );
        assert!(
            waited.elapsed() >= DRAIN_TIME / 2,
            "not before: {:?}",
            waited.elapsed()
        );
    }

    #[test]
    fn connection_values_that_close() {
        for (value, close) in [
            ("close", true),
            ("Close", true),
            ("keep-alive, close", true),
            ("keep-alive", false),
            ("closed", false),
        ] {
            assert_eq!(
                says_close(&HeaderValue::from_static(value)),
                close,
                "{value}"
            );
        }
    }
}
