//! Accepting connections, plain or TLS, and keeping each within its bounds: a cap on
//! connections open at once (shared by every serving thread), a header-read timeout
//! counted from a request's first byte, and an idle timeout for a connection with no
//! request on it. (The body-read timeout is the MCP routes' own: they read the bodies.)
//!
//! hyper's own `header_read_timeout` starts when hyper begins waiting for a request, so it
//! would also close idle keep-alive connections after the header timeout; here the two are
//! separate, as in nginx (`client_header_timeout`, `keepalive_timeout`). Each connection is
//! served by one task and watched by another, its supervisor, which knows from the bytes
//! read and the requests in service whether it is idle, receiving headers or busy, and
//! closes the connection when the state's deadline passes. A busy connection (a request in
//! service, or a response still being sent, such as an event stream) has no deadline here.
//!
//! The supervisor is not told of each request: reads and requests only store times and
//! counts, and it wakes at the soonest moment a deadline could fall, given what it saw
//! when it last looked (at least once per the shorter of the two timeouts), and looks
//! again. So a call costs no timer and no wake-up beyond the connection's own, and
//! shutdown reaches the serving task through a flag it reads when polled.
//!
//! At the connection cap, the connection idle the longest is closed to make room (as nginx
//! reuses idle keep-alive connections when it runs short); with none idle, the new
//! connection is closed at once. Either way, accepting goes on, so `/healthz` is answered
//! as soon as there is room.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use futures_util::task::AtomicWaker;
use hyper::body::{Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::App;
use super::unread::{self, Unread};
use crate::config::ServerSettings;
use crate::telemetry::metrics::Metrics;

/// How long a client gets to complete the TLS handshake before its connection is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause after an accept error that is not about one connection (e.g. `EMFILE`): retrying
/// at once would spin while the process is out of descriptors.
const ACCEPT_RETRY: Duration = Duration::from_secs(1);

/// How long an accept at the cap waits for an evicted idle connection to give up its slot.
const EVICTION_WAIT: Duration = Duration::from_millis(250);

/// File descriptors kept free of inbound connections: upstream connections, spec files,
/// the listener itself, logs.
const RESERVED_FDS: libc::rlim_t = 256;

/// The bounds on connections, shared by every accept loop of one server.
pub struct Connections {
    header_read: Duration,
    idle: Duration,
    max: usize,
    slots: Arc<Semaphore>,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    epoch: Instant,
    last_warning: AtomicU64,
    metrics: OnceLock<Arc<Metrics>>,
}

/// What the supervisor of one connection reads; written by its reads and its requests.
struct Conn {
    /// Requests in service, counting a response until its body has been sent.
    busy: AtomicUsize,
    /// Milliseconds since the epoch at which the connection last became idle.
    idle_since: AtomicU64,
    /// Milliseconds since the epoch of the first byte read since then; 0 when none.
    first_byte: AtomicU64,
    /// Set to close the connection to make room for a new one.
    evicted: CancellationToken,
}

impl Connections {
    /// The bounds `settings` gives, with `max_connections` lowered to what the process's
    /// open-file limit leaves room for (raising the soft limit first, up to the hard one).
    pub fn new(settings: &ServerSettings) -> Arc<Connections> {
        let max = fit_to_open_file_limit(settings.max_connections);
        Connections::with_limits(
            Duration::from_secs(settings.header_read_timeout_seconds),
            Duration::from_secs(settings.idle_timeout_seconds),
            max,
        )
    }

    /// Explicit bounds, as given.
    pub fn with_limits(header_read: Duration, idle: Duration, max: usize) -> Arc<Connections> {
        Arc::new(Connections {
            header_read,
            idle,
            max: max.max(1),
            slots: Arc::new(Semaphore::new(max.max(1))),
            open: Mutex::default(),
            next_id: AtomicU64::new(1),
            epoch: Instant::now(),
            last_warning: AtomicU64::new(0),
            metrics: OnceLock::new(),
        })
    }

    /// Where refused, evicted and timed-out connections are counted (the first call wins).
    pub fn count_in(&self, metrics: Arc<Metrics>) {
        let _ = self.metrics.set(metrics);
    }

    fn record(&self, reason: &'static str) {
        if let Some(metrics) = self.metrics.get() {
            metrics.record_refusal(reason);
        }
    }

    /// The connection cap in force.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    fn now_ms(&self) -> u64 {
        // Never 0, which `first_byte` uses for "none".
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    /// A slot for a new connection: a free one, else one made by closing the connection
    /// idle the longest; `None` when every connection is busy.
    async fn slot(&self) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Some(permit);
        }
        let victim = {
            let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
            open.values()
                // Idle: no request in service and none arriving (a connection receiving
                // headers is about to be busy; its own header timeout bounds it).
                .filter(|conn| {
                    conn.busy.load(Ordering::Acquire) == 0
                        && conn.first_byte.load(Ordering::Acquire) == 0
                        && !conn.evicted.is_cancelled()
                })
                .min_by_key(|conn| conn.idle_since.load(Ordering::Acquire))
                .cloned()
        };
        if let Some(victim) = victim {
            victim.evicted.cancel();
            self.record("connection_evicted");
            if let Ok(Ok(permit)) =
                tokio::time::timeout(EVICTION_WAIT, self.slots.clone().acquire_owned()).await
            {
                return Some(permit);
            }
        }
        self.record("too_many_connections");
        let now = self.now_ms();
        let last = self.last_warning.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= 10_000
            && self
                .last_warning
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                "server.max_connections ({}) reached with every connection busy; new \
                 connections are closed",
                self.max
            );
        }
        None
    }

    fn register(self: &Arc<Self>) -> (u64, Arc<Conn>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(self.now_ms()),
            first_byte: AtomicU64::new(0),
            evicted: CancellationToken::new(),
        });
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, conn.clone());
        (id, conn)
    }

    fn unregister(&self, id: u64) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    /// Watches `conn`, served by `serving`, until the connection ends, or closes it when
    /// it has overstayed (idle too long, too slow with its headers, or evicted to make
    /// room); asks `stop` to finish gracefully once `shutdown` changes.
    async fn supervise(
        &self,
        conn: &Conn,
        peer: SocketAddr,
        mut serving: JoinHandle<()>,
        shutdown: &mut watch::Receiver<()>,
        stop: &Stop,
    ) {
        let mut stopping = false;
        loop {
            let now = self.now_ms();
            let wait = self.next_look(conn, now).saturating_sub(now);
            tokio::select! {
                _ = &mut serving => return,
                () = conn.evicted.cancelled() => {
                    tracing::debug!(%peer, "closed an idle connection to make room for a new one");
                    break;
                }
                _ = shutdown.changed(), if !stopping => {
                    stopping = true;
                    stop.ask();
                }
                () = tokio::time::sleep(Duration::from_millis(wait)) => {
                    match self.overstayed(conn) {
                        Some("header") => {
                            self.record("header_timeout");
                            tracing::debug!(%peer, "closed a connection whose request headers did not arrive in time");
                            break;
                        }
                        Some(_) => {
                            tracing::debug!(%peer, "closed an idle connection");
                            break;
                        }
                        None => {}
                    }
                }
            }
        }
        serving.abort();
        let _ = serving.await;
    }

    /// The soonest time (in [`Connections::now_ms`]) at which `conn` could overstay, judged
    /// from its state at `now`: its state's deadline, or, since the state may change right
    /// after `now`, `now` plus the shorter timeout, whichever comes first. (A request that
    /// ends after `now` starts an idle time ending after `now + idle`; a first byte read
    /// after `now` a header time ending after `now + header_read`.)
    fn next_look(&self, conn: &Conn, now: u64) -> u64 {
        let header_read = self.header_read.as_millis() as u64;
        let idle = self.idle.as_millis() as u64;
        let any_change = now + header_read.min(idle).max(1);
        let deadline = if conn.busy.load(Ordering::Acquire) > 0 {
            u64::MAX
        } else {
            match conn.first_byte.load(Ordering::Acquire) {
                0 => conn.idle_since.load(Ordering::Acquire) + idle,
                first => first + header_read,
            }
        };
        deadline.min(any_change)
    }

    /// Why `conn` has overstayed now (`"idle"` or `"header"`), if it has.
    fn overstayed(&self, conn: &Conn) -> Option<&'static str> {
        if conn.busy.load(Ordering::Acquire) > 0 {
            return None;
        }
        let now = self.now_ms();
        match conn.first_byte.load(Ordering::Acquire) {
            0 => (now >= conn.idle_since.load(Ordering::Acquire) + self.idle.as_millis() as u64)
                .then_some("idle"),
            first => (now >= first + self.header_read.as_millis() as u64).then_some("header"),
        }
    }
}

/// Asks one connection's serving task to finish its requests and close (hyper's graceful
/// shutdown); its supervisor asks at server shutdown.
#[derive(Default)]
struct Stop {
    asked: AtomicBool,
    waker: AtomicWaker,
}

impl Stop {
    fn ask(&self) {
        self.asked.store(true, Ordering::Release);
        self.waker.wake();
    }
}

/// The open-file limit must leave room for `wanted` connections beside
/// [`RESERVED_FDS`]: raise the soft limit towards the hard one if needed, and failing
/// that, lower the cap (with a warning naming the key).
fn fit_to_open_file_limit(wanted: usize) -> usize {
    let needed = (wanted as libc::rlim_t).saturating_add(RESERVED_FDS);
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return wanted;
    }
    if limit.rlim_cur == libc::RLIM_INFINITY || limit.rlim_cur >= needed {
        return wanted;
    }
    let raised = libc::rlimit {
        rlim_cur: if limit.rlim_max == libc::RLIM_INFINITY {
            needed
        } else {
            needed.min(limit.rlim_max)
        },
        rlim_max: limit.rlim_max,
    };
    // SAFETY: setrlimit reads the `rlimit` it is given.
    let current = if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        raised.rlim_cur
    } else {
        limit.rlim_cur
    };
    if current >= needed {
        return wanted;
    }
    let fits = usize::try_from(current.saturating_sub(RESERVED_FDS).max(16)).unwrap_or(wanted);
    tracing::warn!(
        "server.max_connections is {wanted}, but the open-file limit ({current}) leaves room \
         for {fits}; serving at most {fits} connections (raise `ulimit -n` to allow more)"
    );
    fits
}

/// Serves `app` on `listener` (over TLS when `tls` is given) until `shutdown` resolves;
/// then stops accepting, lets every open connection finish its requests (hyper graceful
/// shutdown), and returns when all connections are closed. Each request carries
/// `axum::extract::ConnectInfo<SocketAddr>` of the peer.
///
/// Accept errors are logged and retried rather than returned, so one bad moment
/// (`EMFILE`) does not take the listener down.
pub async fn serve(
    listener: TcpListener,
    app: App,
    tls: Option<TlsAcceptor>,
    connections: Arc<Connections>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    // Every supervisor holds a receiver: a change asks its connection to finish, and the
    // last one dropped ends the shutdown.
    let (graceful, _) = watch::channel(());
    // A TLS handshake in progress at shutdown should end now, not after HANDSHAKE_TIMEOUT.
    let handshakes = CancellationToken::new();
    let mut shutdown = std::pin::pin!(shutdown);
    while let Some((tcp, peer)) = next_connection(&listener, shutdown.as_mut()).await {
        let Some(slot) = connections.slot().await else {
            drop(tcp);
            continue;
        };
        let service = app.clone();
        // The receiver is taken here, before the spawn, so a shutdown that starts before
        // the supervisor first runs is not missed.
        let shutdown = graceful.subscribe();
        let connection = Connection {
            tcp,
            peer,
            service,
            tls: tls.clone(),
            connections: connections.clone(),
        };
        let handshakes = handshakes.clone();
        tokio::spawn(async move {
            connection.supervise(shutdown, handshakes).await;
            drop(slot);
        });
    }

    // Closing the socket first makes new connections fail fast instead of queueing in the
    // backlog while the open ones drain.
    drop(listener);
    handshakes.cancel();
    let _ = graceful.send(());
    graceful.closed().await;
    Ok(())
}

/// The next connection accepted, or `None` once `shutdown` completes. Accept errors are
/// logged and retried.
async fn next_connection(
    listener: &TcpListener,
    mut shutdown: Pin<&mut impl Future<Output = ()>>,
) -> Option<(TcpStream, SocketAddr)> {
    loop {
        tokio::select! {
            () = &mut shutdown => return None,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => return Some(accepted),
                Err(error) if is_connection_error(&error) => {
                    tracing::debug!(%error, "a connection failed before it was accepted");
                }
                Err(error) => {
                    tracing::error!(%error, "accepting connections failed; retrying in 1 s");
                    tokio::select! {
                        () = &mut shutdown => return None,
                        () = tokio::time::sleep(ACCEPT_RETRY) => {}
                    }
                }
            },
        }
    }
}

/// One accepted connection, with its slot taken and its service made.
struct Connection {
    tcp: TcpStream,
    peer: SocketAddr,
    service: App,
    tls: Option<TlsAcceptor>,
    connections: Arc<Connections>,
}

impl Connection {
    /// Serves the connection in a task of its own and supervises it until it closes;
    /// `shutdown` asks it to finish its requests, `handshakes` ends a TLS handshake.
    async fn supervise(self, mut shutdown: watch::Receiver<()>, handshakes: CancellationToken) {
        let connections = self.connections.clone();
        let peer = self.peer;
        let (id, conn) = connections.register();
        let stop = Arc::new(Stop::default());
        let serving = tokio::spawn(self.serve(conn.clone(), stop.clone(), handshakes));
        connections
            .supervise(&conn, peer, serving, &mut shutdown, &stop)
            .await;
        connections.unregister(id);
    }

    /// Serves the connection until it closes, finishing its requests once `stop` asks.
    async fn serve(self, conn: Arc<Conn>, stop: Arc<Stop>, handshakes: CancellationToken) {
        let Connection {
            tcp,
            peer,
            service,
            tls,
            connections,
        } = self;
        let io = Watched {
            inner: tcp,
            conn: conn.clone(),
            connections: connections.clone(),
        };
        let tracked = Tracked {
            app: service,
            peer: ConnectInfo(peer),
            conn,
            connections,
            unread: Arc::default(),
        };
        let served = match tls {
            None => serve_http(TokioIo::new(io), tracked, &stop).await,
            Some(acceptor) => {
                let Some(stream) = handshake(&acceptor, io, peer, &handshakes).await else {
                    return;
                };
                serve_http(TokioIo::new(stream), tracked, &stop).await
            }
        };
        if let Err(error) = served {
            tracing::debug!(%peer, %error, "connection ended with an error");
        }
    }
}

/// HTTP/1.1 on `io` until the connection closes; once `stop` asks, no new request is read
/// and the connection closes after the one in service.
async fn serve_http<IO>(io: IO, service: Tracked, stop: &Stop) -> hyper::Result<()>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let mut http = std::pin::pin!(builder().serve_connection(io, service));
    let mut asked = false;
    std::future::poll_fn(|cx| {
        if !asked {
            // One atomic exchange a poll when the task's waker is unchanged, where a
            // channel's receiver would lock.
            stop.waker.register(cx.waker());
            if stop.asked.load(Ordering::Acquire) {
                asked = true;
                http.as_mut().graceful_shutdown();
            }
        }
        http.as_mut().poll(cx)
    })
    .await
}

/// The TLS handshake of a connection, within [`HANDSHAKE_TIMEOUT`]; `None` when it failed,
/// timed out or shutdown began.
async fn handshake<IO>(
    acceptor: &TlsAcceptor,
    io: IO,
    peer: SocketAddr,
    handshakes: &CancellationToken,
) -> Option<tokio_rustls::server::TlsStream<IO>>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(io));
    tokio::select! {
        () = handshakes.cancelled() => None,
        handshake = handshake => match handshake {
            Ok(Ok(stream)) => Some(stream),
            Ok(Err(error)) => {
                tracing::debug!(%peer, %error, "TLS handshake failed");
                None
            }
            Err(_elapsed) => {
                tracing::debug!(%peer, "TLS handshake timed out");
                None
            }
        },
    }
}

/// HTTP/1.1 with hyper's own header timeout off: the supervisor keeps the time.
fn builder() -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder.header_read_timeout(None);
    builder
}

/// Errors that concern one connection that went away while queued, not the listener.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// The TCP stream, noting the first byte read while the connection is idle.
struct Watched {
    inner: TcpStream,
    conn: Arc<Conn>,
    connections: Arc<Connections>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before
            && self.conn.busy.load(Ordering::Acquire) == 0
            && self.conn.first_byte.load(Ordering::Acquire) == 0
        {
            let now = self.connections.now_ms();
            self.conn.first_byte.store(now, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The app as a hyper service that gives each request its peer's address, marks the
/// connection busy from a request's headers until its response body has been sent, and
/// settles what the app left of a request body ([`unread`]).
struct Tracked {
    app: App,
    peer: ConnectInfo<SocketAddr>,
    conn: Arc<Conn>,
    connections: Arc<Connections>,
    unread: Arc<Unread>,
}

/// Held while a request is in service; the connection is idle again when the last drops.
struct Busy {
    conn: Arc<Conn>,
    connections: Arc<Connections>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.conn.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.conn
                .idle_since
                .store(self.connections.now_ms(), Ordering::Release);
            self.conn.first_byte.store(0, Ordering::Release);
        }
    }
}

type ServiceFuture =
    Pin<Box<dyn Future<Output = Result<hyper::Response<BusyBody>, Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Tracked {
    type Response = hyper::Response<BusyBody>;
    type Error = Infallible;
    type Future = ServiceFuture;

    fn call(&self, request: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        self.conn.busy.fetch_add(1, Ordering::AcqRel);
        let busy = Busy {
            conn: self.conn.clone(),
            connections: self.connections.clone(),
        };
        let mut request = unread::body_of(request, &self.unread);
        request.extensions_mut().insert(self.peer);
        let response = self.app.answer(request);
        let unread = self.unread.clone();
        Box::pin(async move {
            let response = unread::settle(&unread, response.await?);
            Ok(response.map(|body| BusyBody { inner: body, busy }))
        })
    }
}

/// A response body that keeps its connection busy until it has been sent or dropped.
struct BusyBody {
    inner: Body,
    busy: Busy,
}

impl hyper::body::Body for BusyBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let _ = &self.busy;
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn start(connections: Arc<Connections>) -> (SocketAddr, CancellationToken) {
        let app = Router::new().route("/", get(|| async { "ok" })).route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(2500)).await;
                "late"
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(serve(listener, app.into(), None, connections, async move {
            stopped.cancelled().await
        }));
        (addr, stop)
    }

    /// Reads until the peer closes; true when it closed within `within`.
    async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
        let mut sink = Vec::new();
        tokio::time::timeout(within, stream.read_to_end(&mut sink))
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn at_the_cap_the_longest_idle_connection_makes_room() {
        let connections =
            Connections::with_limits(Duration::from_secs(60), Duration::from_secs(60), 2);
        let (addr, _stop) = start(connections.clone()).await;
        let mut oldest = TcpStream::connect(addr).await.expect("connect");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let _second = TcpStream::connect(addr).await.expect("connect");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(connections.open(), 2);
        let mut third = TcpStream::connect(addr).await.expect("connect");
        third
            .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut answer = String::new();
        third.read_to_string(&mut answer).await.expect("read");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            closed_within(&mut oldest, Duration::from_secs(2)).await,
            "the oldest idle connection was closed"
        );
        assert!(connections.open() <= 2);
    }

    /// Sends `GET path` on `stream` and reads the answer's status line.
    async fn get_on(stream: &mut TcpStream, path: &str) -> String {
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut status = [0u8; 12];
        stream.read_exact(&mut status).await.expect("an answer");
        String::from_utf8_lossy(&status).into_owned()
    }

    #[tokio::test]
    async fn each_deadline_holds_though_the_supervisor_is_never_told_of_a_request() {
        // Idle 1 s, headers 60 s: a kept-alive connection is closed about 1 s after its
        // answer, though the supervisor last looked while the request was in service.
        let connections =
            Connections::with_limits(Duration::from_secs(60), Duration::from_secs(1), 8);
        let (addr, _stop) = start(connections).await;
        let mut kept = TcpStream::connect(addr).await.expect("connect");
        assert_eq!(get_on(&mut kept, "/").await, "HTTP/1.1 200");
        assert!(closed_within(&mut kept, Duration::from_millis(2500)).await);

        // Headers 1 s, idle 60 s: after an answer, headers begun on the same connection
        // and never finished are cut about 1 s after their first byte.
        let connections =
            Connections::with_limits(Duration::from_secs(1), Duration::from_secs(60), 8);
        let (addr, _stop) = start(connections).await;
        let mut slow = TcpStream::connect(addr).await.expect("connect");
        assert_eq!(get_on(&mut slow, "/").await, "HTTP/1.1 200");
        tokio::time::sleep(Duration::from_millis(700)).await;
        slow.write_all(b"GET / HTTP/1.1\r\nHost: loc")
            .await
            .expect("write");
        let begun = Instant::now();
        assert!(closed_within(&mut slow, Duration::from_millis(3000)).await);
        let cut = begun.elapsed();
        assert!(
            cut >= Duration::from_millis(900) && cut < Duration::from_millis(2000),
            "cut {cut:?} after the headers began, not after the 1 s header timeout"
        );

        // A request in service longer than both timeouts keeps its connection open.
        let connections =
            Connections::with_limits(Duration::from_secs(1), Duration::from_secs(1), 8);
        let (addr, _stop) = start(connections).await;
        let mut busy = TcpStream::connect(addr).await.expect("connect");
        assert_eq!(get_on(&mut busy, "/slow").await, "HTTP/1.1 200");
    }
}
