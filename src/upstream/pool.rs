//! The keep-alive pool under [`super::client::Client`]: connections to upstreams, made with
//! hyper's `client::conn` over the TLS connector and kept by origin.
//!
//! - An HTTP/1.1 connection carries one request at a time. It goes back to its origin's idle
//!   list when its answer's body has been read to the end ([`Lease::release`]); an answer
//!   dropped before that closes its connection, as hyper does with a message half read.
//!   Connections are taken again newest first, so the oldest are the ones that expire.
//! - An HTTP/2 connection (when TLS's ALPN picks `h2`) is shared by every request to its
//!   origin while it is open.
//! - Idle connections are not used after [`IDLE_TIMEOUT`] and at most [`MAX_IDLE`] wait
//!   per origin; at most [`MAX_ORIGINS`] origins are kept (the origins a client reaches are
//!   its APIs' and the redirects the operator allows, so this is a backstop).
//! - A request on a reused connection that closed before the request was written goes
//!   again on another connection: nothing of it reached the upstream.
//!
//! It replaced `hyper_util`'s legacy client, whose pool hashes its key with SipHash byte by
//! byte on each checkout and return, formats `Host` on every request and spawns a task per
//! request to return the connection (bench/README.md, 2026-11-30: "restmcp's own connection
//! pool").

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::{http1, http2};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, Uri};
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use url::{Position, Url};

/// How the pool reaches an upstream: TCP, then TLS for `https` (ALPN offers h2 and
/// http/1.1).
pub(super) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// An idle connection older than this is closed rather than used: upstreams close theirs
/// sooner or later, and a connection silently dropped by a middlebox would hang a call.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// Idle HTTP/1.1 connections kept per origin; more are closed.
pub(super) const MAX_IDLE: usize = 256;

/// Origins the pool keeps connections for; a request to one more is sent on a connection
/// of its own.
pub(super) const MAX_ORIGINS: usize = 1024;

type Sender1 = http1::SendRequest<Full<Bytes>>;
type Sender2 = http2::SendRequest<Full<Bytes>>;

/// The pool of one client.
pub(super) struct Pool {
    shared: Arc<Shared>,
}

struct Shared {
    connector: Connector,
    /// By origin, as `scheme://host[:port]` (the default port left out, as `url` writes it).
    origins: Mutex<HashMap<Arc<str>, Origin, foldhash::fast::RandomState>>,
}

struct Origin {
    home: Home,
    idle: VecDeque<Idle>,
    shared: Option<Sender2>,
}

struct Idle {
    sender: Sender1,
    since: Instant,
}

/// An origin's key in the pool and the `Host` header its HTTP/1.1 requests carry.
#[derive(Clone)]
struct Home {
    key: Arc<str>,
    host: HeaderValue,
}

/// A connection taken for one request; an HTTP/1.1 one with the origin it returns to
/// (none when the pool keeps no more origins).
enum Taken {
    One(Sender1, Option<Home>),
    Shared(Sender2),
}

/// What one connection did with a request.
enum Tried {
    Answered(Response<Incoming>, Option<Lease>),
    /// The connection had closed before the request was tried.
    Closed(Request<Full<Bytes>>),
    /// The connection gave the request back unsent.
    Refused(Request<Full<Bytes>>, hyper::Error),
}

/// An HTTP/1.1 connection whose answer is being read; [`Lease::release`] returns it once
/// the body has ended. Dropped instead, it closes.
pub(super) struct Lease {
    shared: Arc<Shared>,
    origin: Arc<str>,
    sender: Sender1,
}

/// Why no answer came.
#[derive(Debug)]
pub(super) enum Failed {
    /// The URL is not one HTTP can send: nothing was sent.
    Url(String),
    /// No connection could be made (TCP, TLS or the HTTP handshake): nothing was sent.
    Connect(Box<dyn std::error::Error + Send + Sync>),
    /// The connection took the request and failed before its answer's head.
    Send(hyper::Error),
}

impl Failed {
    /// The HTTP handshake failed: nothing was sent.
    fn connecting(error: hyper::Error) -> Failed {
        Failed::Connect(error.into())
    }
}

impl Lease {
    /// Returns the connection to its origin's idle list: its answer has been read whole.
    pub(super) fn release(self) {
        self.shared.put(self.origin, self.sender);
    }
}

impl Pool {
    pub(super) fn new(connector: Connector) -> Pool {
        Pool {
            shared: Arc::new(Shared {
                connector,
                origins: Mutex::new(HashMap::default()),
            }),
        }
    }

    /// Sends `request` to `url` (the request's URI is set here) on a connection to its
    /// origin, and returns the answer once its head arrives, with the connection to return
    /// when its body has been read (HTTP/1.1 only).
    pub(super) async fn send(
        &self,
        url: &Url,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(Response<Incoming>, Option<Lease>), Failed> {
        let origin = origin_of(url);
        loop {
            let (taken, reused) = match self.shared.take(&origin) {
                Some(taken) => (taken, true),
                // Boxed: connecting (TCP, TLS, a handshake) is the rare path, and its
                // future inline would make every call's future several times larger.
                None => {
                    let connecting = self.connect(&origin, absolute(url)?);
                    (Box::pin(connecting).await?, false)
                }
            };
            let shared = matches!(taken, Taken::Shared(_));
            let tried = match taken {
                Taken::One(sender, home) => self.send_on_one(url, request, sender, home).await?,
                Taken::Shared(sender) => send_on_shared(url, request, sender).await?,
            };
            request = match tried {
                Tried::Answered(answer, lease) => return Ok((answer, lease)),
                // A kept connection had closed: nothing went out, the next one is tried.
                Tried::Closed(back) if reused => back,
                // A new connection closed at once: trying again would loop.
                Tried::Closed(_) => {
                    return Err(Failed::Connect(
                        "the connection closed before the request was sent".into(),
                    ));
                }
                Tried::Refused(_, error) if !reused => return Err(Failed::Send(error)),
                // A kept connection that gave the request back is tried no more. A shared
                // one that refuses new streams (after a GOAWAY) may not have closed yet:
                // no longer shared, so the next try makes a new one.
                Tried::Refused(back, _) => {
                    if shared {
                        self.shared.unshare(&origin);
                    }
                    back
                }
            };
        }
    }

    /// `request` on an HTTP/1.1 connection, in origin form with the origin's `Host`.
    async fn send_on_one(
        &self,
        url: &Url,
        mut request: Request<Full<Bytes>>,
        mut sender: Sender1,
        home: Option<Home>,
    ) -> Result<Tried, Failed> {
        if sender.ready().await.is_err() {
            return Ok(Tried::Closed(request));
        }
        let host = match &home {
            Some(home) => Ok(home.host.clone()),
            None => HeaderValue::from_str(host_of(url)),
        };
        let mut added = false;
        if let (header::Entry::Vacant(vacant), Ok(host)) =
            (request.headers_mut().entry(header::HOST), host)
        {
            vacant.insert(host);
            added = true;
        }
        // HTTP/1.1 sends the path and query only: the whole URL is parsed only to connect
        // and for HTTP/2.
        *request.uri_mut() = Uri::try_from(&url[Position::BeforePath..Position::AfterQuery])
            .map_err(|e| Failed::Url(e.to_string()))?;
        match sender.try_send_request(request).await {
            Ok(answer) => {
                let lease = home.map(|home| Lease {
                    shared: self.shared.clone(),
                    origin: home.key,
                    sender,
                });
                Ok(Tried::Answered(answer, lease))
            }
            Err(mut error) => match error.take_message() {
                Some(mut back) => {
                    if added {
                        back.headers_mut().remove(header::HOST);
                    }
                    Ok(Tried::Refused(back, error.into_error()))
                }
                None => Err(Failed::Send(error.into_error())),
            },
        }
    }

    /// A new connection to `origin`, HTTP/2 when TLS negotiated it (and then shared).
    async fn connect(&self, origin: &str, uri: Uri) -> Result<Taken, Failed> {
        let io = tower::ServiceExt::oneshot(self.shared.connector.clone(), uri)
            .await
            .map_err(Failed::Connect)?;
        if io.connected().is_negotiated_h2() {
            let (mut sender, connection) = http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .handshake(io)
                .await
                .map_err(Failed::connecting)?;
            tokio::spawn(connection);
            sender.ready().await.map_err(Failed::connecting)?;
            self.shared.share(origin, sender.clone());
            Ok(Taken::Shared(sender))
        } else {
            let (mut sender, connection) =
                http1::handshake(io).await.map_err(Failed::connecting)?;
            tokio::spawn(connection);
            sender.ready().await.map_err(Failed::connecting)?;
            Ok(Taken::One(sender, self.shared.home(origin)))
        }
    }

    /// Idle HTTP/1.1 connections kept for `url`'s origin (tests).
    #[cfg(test)]
    pub(super) fn idle(&self, url: &Url) -> usize {
        let origins = self.shared.lock();
        origins.get(&*origin_of(url)).map_or(0, |o| o.idle.len())
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Origin, foldhash::fast::RandomState>> {
        self.origins.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A connection to `origin` that can be used again: its shared HTTP/2 one, else its
    /// newest idle HTTP/1.1 one.
    fn take(&self, origin: &str) -> Option<Taken> {
        let mut origins = self.lock();
        let entry = origins.get_mut(origin)?;
        if let Some(shared) = &entry.shared {
            if !shared.is_closed() {
                return Some(Taken::Shared(shared.clone()));
            }
            entry.shared = None;
        }
        let now = Instant::now();
        while let Some(idle) = entry.idle.pop_back() {
            if !idle.sender.is_closed() && now.duration_since(idle.since) < IDLE_TIMEOUT {
                return Some(Taken::One(idle.sender, Some(entry.home.clone())));
            }
        }
        None
    }

    /// Where `origin`'s connections return, its entry made if need be; `None` when the
    /// pool already keeps [`MAX_ORIGINS`] others.
    fn home(&self, origin: &str) -> Option<Home> {
        let mut origins = self.lock();
        if let Some(entry) = origins.get(origin) {
            return Some(entry.home.clone());
        }
        if origins.len() >= MAX_ORIGINS {
            return None;
        }
        let host = origin.split_once("://").map_or(origin, |(_, host)| host);
        let home = Home {
            key: Arc::from(origin),
            host: HeaderValue::from_str(host).ok()?,
        };
        origins.insert(
            home.key.clone(),
            Origin {
                home: home.clone(),
                idle: VecDeque::new(),
                shared: None,
            },
        );
        Some(home)
    }

    /// `sender` becomes the HTTP/2 connection `origin`'s requests share.
    fn share(&self, origin: &str, sender: Sender2) {
        if self.home(origin).is_some()
            && let Some(entry) = self.lock().get_mut(origin)
        {
            entry.shared = Some(sender);
        }
    }

    fn unshare(&self, origin: &str) {
        if let Some(entry) = self.lock().get_mut(origin) {
            entry.shared = None;
        }
    }

    fn put(&self, origin: Arc<str>, sender: Sender1) {
        if sender.is_closed() {
            return;
        }
        let mut origins = self.lock();
        let Some(entry) = origins.get_mut(&origin) else {
            return;
        };
        let now = Instant::now();
        while entry
            .idle
            .front()
            .is_some_and(|idle| now.duration_since(idle.since) >= IDLE_TIMEOUT)
        {
            entry.idle.pop_front();
        }
        if entry.idle.len() < MAX_IDLE {
            entry.idle.push_back(Idle { sender, since: now });
        }
    }
}

/// `request` on the shared HTTP/2 connection, its URI absolute.
async fn send_on_shared(
    url: &Url,
    mut request: Request<Full<Bytes>>,
    mut sender: Sender2,
) -> Result<Tried, Failed> {
    if sender.ready().await.is_err() {
        return Ok(Tried::Closed(request));
    }
    *request.uri_mut() = absolute(url)?;
    match sender.try_send_request(request).await {
        Ok(answer) => Ok(Tried::Answered(answer, None)),
        Err(mut error) => match error.take_message() {
            Some(back) => Ok(Tried::Refused(back, error.into_error())),
            None => Err(Failed::Send(error.into_error())),
        },
    }
}

/// `url` as an absolute URI, without its fragment.
fn absolute(url: &Url) -> Result<Uri, Failed> {
    Uri::try_from(&url[..Position::AfterQuery]).map_err(|e| Failed::Url(e.to_string()))
}

/// `scheme://host[:port]` of `url`, borrowed from it unless it holds a user or password.
fn origin_of(url: &Url) -> Cow<'_, str> {
    if url.username().is_empty() && url.password().is_none() {
        Cow::Borrowed(&url[..Position::BeforePath])
    } else {
        Cow::Owned(format!("{}://{}", url.scheme(), host_of(url)))
    }
}

/// `host[:port]` of `url`, the port only when it is not the scheme's: the `Host` header.
fn host_of(url: &Url) -> &str {
    &url[Position::BeforeHost..Position::BeforePath]
}
