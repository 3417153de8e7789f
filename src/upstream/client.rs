//! The upstream HTTP client: the connections to upstreams and the redirects between them.
//! It owns TLS (rustls with the platform's roots, HTTP/2 by ALPN), the environment's
//! proxies and the redirect policy; the keep-alive pool under it is [`super::pool`]. One
//! [`Client::send`] is one logical request: redirects are followed inside it, retries are
//! the caller's ([`super::wire`]).
//!
//! A request goes through hyper's connections directly. It used to go through reqwest,
//! whose own layers (its request builder, its redirect layer parsing the URL on every
//! request and the answer's URL parsed again) cost about 24,000 instructions per call
//! against 13,000 for hyper's client itself (`bench/README.md`). reqwest stays for what
//! it does that hyper's connections do not: a request to an upstream the environment's
//! proxy settings (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`) send through a
//! proxy goes through reqwest with its redirects off, so the redirect policy below holds
//! either way.
//!
//! Redirects (RFC 9110 §15.4), as reqwest followed them: 301 and 302 turn a POST into a GET,
//! 303 anything but HEAD, both without the body and its headers; 307 and 308 send the same
//! request again. A redirect to another host, port or scheme drops `Authorization`,
//! `Cookie`, `Proxy-Authorization` and `WWW-Authenticate`. No `Referer` is sent: the URL
//! redirected from may carry a query credential.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use url::Url;

use super::pool::{Failed, Lease, Pool};
use crate::http_client;

/// Redirects followed at most within one request.
pub const MAX_REDIRECTS: usize = 5;

/// Sends requests to upstreams: pooled, keep-alive, no automatic decompression (restmcp
/// decodes bodies itself, within its limits: [`super::decode`]).
pub struct Client {
    direct: Pool,
    /// When the environment names a proxy: which requests it takes, and the client that
    /// sends them through it.
    proxied: Option<(Matcher, reqwest::Client)>,
    /// Where redirects may lead besides the origin a request started at: from an API's
    /// origin (`https://api.example.com`) to the origins listed for it.
    redirects: HashMap<String, Vec<String>>,
}

/// One request on its way out.
pub struct Outbound {
    pub method: Method,
    pub url: Url,
    /// Every header to send but `Host` and `Content-Length`, which follow from the URL and
    /// the body. `User-Agent` is restmcp's unless set here.
    pub headers: HeaderMap,
    pub body: Option<Bytes>,
    /// Follow the redirects the client allows (at most [`MAX_REDIRECTS`]); else every 3xx
    /// is the answer (a workflow step reads it).
    pub follow_redirects: bool,
}

/// An answer whose status line and headers have arrived; its body is read with
/// [`Answer::chunk`].
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The URL that answered: the request's, or the last one redirected to.
    pub url: Url,
    body: Body,
}

enum Body {
    /// With the connection to return once the body has ended (HTTP/1.1).
    Direct(Incoming, Option<Lease>),
    Proxied(reqwest::Response),
}

impl Answer {
    /// The next piece of the body, `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        match &mut self.body {
            Body::Direct(body, lease) => loop {
                match body.frame().await {
                    None => {
                        if let Some(lease) = lease.take() {
                            lease.release();
                        }
                        return Ok(None);
                    }
                    Some(Err(error)) => return Err(Error::reading(&error)),
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) if !data.is_empty() => return Ok(Some(data)),
                        // Trailers, or an empty frame.
                        _ => {}
                    },
                }
            },
            Body::Proxied(response) => response.chunk().await.map_err(|e| Error::proxied(&e)),
        }
    }

    /// The body's length as `Content-Length` declares it.
    pub fn content_length(&self) -> Option<u64> {
        self.headers
            .get(header::CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// Why a request got no answer, or its body could not be read.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
    closed_before_answer: bool,
    /// One line: what failed and its innermost cause, never the URL (whose query may hold
    /// a key) nor a header's value.
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Connect,
    Request,
    Body,
}

impl Error {
    /// No connection could be made: nothing was sent, so any request may go again.
    pub fn is_connect(&self) -> bool {
        self.kind == Kind::Connect
    }

    /// The request failed, before any answer came, because the connection closed or was
    /// reset under it. That is what a keep-alive connection meets when the upstream closes it
    /// just as it is reused (Node.js servers close idle connections after 5 s, gunicorn after
    /// 2 s, while the pool keeps them for 90 s); seen against Prism. Nothing was answered, so
    /// an idempotent request may go again on a new connection (RFC 9110 §9.2.2).
    pub fn closed_before_answer(&self) -> bool {
        self.closed_before_answer
    }

    pub(super) fn unsendable(problem: String) -> Error {
        Error {
            kind: Kind::Request,
            closed_before_answer: false,
            text: format!("request failed: {problem}"),
        }
    }

    fn unsendable_url(problem: &dyn fmt::Display) -> Error {
        Error::unsendable(format!("the URL is not one HTTP can send: {problem}"))
    }

    fn sending(failed: &Failed) -> Error {
        match failed {
            Failed::Url(problem) => Error::unsendable_url(problem),
            Failed::Connect(error) => Error::of(Kind::Connect, Some(&**error)),
            Failed::Send(error) => Error::of(Kind::Request, Some(error)),
        }
    }

    fn reading(error: &hyper::Error) -> Error {
        Error::of(Kind::Body, Some(error))
    }

    fn of(kind: Kind, source: Option<&(dyn StdError + 'static)>) -> Error {
        let timed_out = chain(source).any(|inner| {
            inner
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        });
        let closed = kind == Kind::Request && !timed_out && chain(source).any(closed_under_it);
        let what = match kind {
            _ if timed_out => "timed out",
            Kind::Connect => "connection failed",
            Kind::Request => "request failed",
            Kind::Body => "reading the body failed",
        };
        Error {
            kind,
            closed_before_answer: closed,
            text: http_client::with_cause(what, source),
        }
    }

    /// An error of the client that sends through a proxy, worded the same way.
    fn proxied(error: &reqwest::Error) -> Error {
        let kind = if error.is_connect() {
            Kind::Connect
        } else if error.is_body() || error.is_decode() {
            Kind::Body
        } else {
            Kind::Request
        };
        let closed = error.is_request()
            && !error.is_timeout()
            && kind == Kind::Request
            && chain(error.source()).any(closed_under_it);
        Error {
            kind,
            closed_before_answer: closed,
            text: http_client::describe_error(error),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for Error {}

/// `source` and every error under it.
fn chain<'a>(
    source: Option<&'a (dyn StdError + 'static)>,
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(source, |&inner| inner.source())
}

/// The connection closed or was reset before the message was complete.
fn closed_under_it(error: &(dyn StdError + 'static)) -> bool {
    if error
        .downcast_ref::<hyper::Error>()
        .is_some_and(hyper::Error::is_incomplete_message)
    {
        return true;
    }
    error.downcast_ref::<std::io::Error>().is_some_and(|io| {
        matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::UnexpectedEof
        )
    })
}

impl Client {
    /// A client whose redirects may lead, besides a request's own origin, from an API's
    /// origin to those `redirects` lists for it. Fails only when TLS cannot start or a proxy
    /// the environment names cannot be used; the system's roots are read at the first HTTPS
    /// call ([`LazyRoots`]).
    pub fn new(redirects: HashMap<String, Vec<String>>) -> Result<Client, String> {
        http_client::install_crypto_provider();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = LazyRoots {
            provider: provider.clone(),
            verifier: OnceLock::new(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot start the upstream HTTP client: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(Duration::from_secs(10)));
        http.set_keepalive(Some(Duration::from_secs(15)));
        http.set_keepalive_interval(Some(Duration::from_secs(15)));
        http.set_keepalive_retries(Some(3));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let direct = Pool::new(connector);
        let proxied = match proxies_named() {
            false => None,
            true => Some((Matcher::from_env(), proxy_client(None)?)),
        };
        Ok(Client {
            direct,
            proxied,
            redirects,
        })
    }

    /// Sends `request`, following the redirects this client's policy allows, and returns
    /// the answer once its headers arrive. A redirect not followed is the answer. `again`
    /// makes the request afresh for each redirect followed: the first one's headers went
    /// out with it, and keeping a copy of them on every call for a rare redirect costs more
    /// (about 1,000 instructions).
    pub async fn send(
        &self,
        request: Outbound,
        again: &(dyn Fn() -> Result<Outbound, Error> + Sync),
    ) -> Result<Answer, Error> {
        let follow = request.follow_redirects;
        let mut hop = request;
        // What the redirects so far changed, applied to each fresh copy.
        let mut method: Option<Method> = None;
        let mut payload_dropped = false;
        let mut credentials_dropped = false;
        let mut start: Option<String> = None;
        let mut followed = 0;
        loop {
            let sent = hop.method.clone();
            let answer = self.send_once(hop).await?;
            let next = follow
                .then(|| self.redirect(&answer, &mut start, followed))
                .flatten();
            let Some(next) = next else {
                return Ok(answer);
            };
            match answer.status {
                StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND if sent == Method::POST => {
                    method = Some(Method::GET);
                    payload_dropped = true;
                }
                StatusCode::SEE_OTHER => {
                    if sent != Method::HEAD {
                        method = Some(Method::GET);
                    }
                    payload_dropped = true;
                }
                _ => {}
            }
            let previous = &answer.url;
            credentials_dropped |= next.host_str() != previous.host_str()
                || next.port_or_known_default() != previous.port_or_known_default()
                || next.scheme() != previous.scheme();
            hop = again()?;
            if let Some(method) = &method {
                hop.method = method.clone();
            }
            if payload_dropped {
                drop_payload(&mut hop.headers, &mut hop.body);
            }
            if credentials_dropped {
                drop_credentials(&mut hop.headers);
            }
            hop.url = next;
            followed += 1;
        }
    }

    /// Where `answer` redirects to, when this client follows it there.
    fn redirect(
        &self,
        answer: &Answer,
        start: &mut Option<String>,
        followed: usize,
    ) -> Option<Url> {
        let allowed = &self.redirects;
        if !matches!(answer.status.as_u16(), 301 | 302 | 303 | 307 | 308)
            || followed >= MAX_REDIRECTS
        {
            return None;
        }
        let location = answer.headers.get(header::LOCATION)?.to_str().ok()?;
        let next = answer.url.join(location.trim()).ok()?;
        if !matches!(next.scheme(), "http" | "https") {
            return None;
        }
        let start = start.get_or_insert_with(|| answer.url.origin().ascii_serialization());
        let origin = next.origin().ascii_serialization();
        let permitted = *start == origin
            || allowed
                .get(start)
                .is_some_and(|list| list.contains(&origin));
        permitted.then_some(next)
    }

    /// One exchange, no redirect followed.
    async fn send_once(&self, request: Outbound) -> Result<Answer, Error> {
        let Outbound {
            method,
            url,
            mut headers,
            body,
            follow_redirects: _,
        } = request;
        if let header::Entry::Vacant(vacant) = headers.entry(header::USER_AGENT) {
            vacant.insert(HeaderValue::from_static(http_client::USER_AGENT));
        }
        if let Some((matcher, client)) = &self.proxied {
            let uri: Uri = url
                .as_str()
                .parse()
                .map_err(|e| Error::unsendable_url(&e))?;
            if matcher.intercept(&uri).is_some() {
                return send_proxied(client, method, url, headers, body).await;
            }
        }
        let mut request = hyper::Request::new(Full::new(body.unwrap_or_default()));
        *request.method_mut() = method;
        *request.headers_mut() = headers;
        let (response, lease) = self
            .direct
            .send(&url, request)
            .await
            .map_err(|e| Error::sending(&e))?;
        let (head, body) = response.into_parts();
        Ok(Answer {
            status: head.status,
            headers: head.headers,
            url,
            body: Body::Direct(body, lease),
        })
    }
}

async fn send_proxied(
    client: &reqwest::Client,
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<Bytes>,
) -> Result<Answer, Error> {
    let mut request = client.request(method, url.clone()).headers(headers);
    if let Some(body) = body {
        request = request.body(body);
    }
    let response = request.send().await.map_err(|e| Error::proxied(&e))?;
    Ok(Answer {
        status: response.status(),
        headers: response.headers().clone(),
        url,
        body: Body::Proxied(response),
    })
}

/// The platform's certificate verifier (`rustls-platform-verifier`, the system's roots),
/// made at the first TLS handshake rather than at start: reading the roots costs about
/// 37 million instructions (10 ms or more) and a few hundred KB, and a machine without any
/// (a minimal image calling only plain-HTTP upstreams) still starts. An HTTPS call there
/// fails, saying that no CA certificates were loaded.
#[derive(Debug)]
struct LazyRoots {
    provider: Arc<rustls::crypto::CryptoProvider>,
    verifier: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl ServerCertVerifier for LazyRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verifier = self
            .verifier
            .get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)?;
        verifier.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    // The handshake's signatures are checked as the platform's verifier checks them: with
    // the provider's algorithms, which need no roots.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A redirect that turns the request into a GET drops its body and the headers that
/// describe it.
fn drop_payload(headers: &mut HeaderMap, body: &mut Option<Bytes>) {
    *body = None;
    for name in [
        header::CONTENT_TYPE,
        header::CONTENT_LENGTH,
        header::CONTENT_ENCODING,
        header::TRANSFER_ENCODING,
    ] {
        headers.remove(name);
    }
}

/// A redirect to another host, port or scheme drops the credentials.
fn drop_credentials(headers: &mut HeaderMap) {
    for name in [
        header::AUTHORIZATION,
        header::COOKIE,
        header::PROXY_AUTHORIZATION,
        header::WWW_AUTHENTICATE,
    ] {
        headers.remove(name);
    }
    headers.remove("cookie2");
}

/// Whether the environment names a proxy for any request (the variables curl and reqwest
/// read; `NO_PROXY` alone sends nothing through one).
fn proxies_named() -> bool {
    [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()))
}

/// The client requests to a proxied upstream go through: reqwest reads the same variables
/// (plain HTTP through the proxy, HTTPS tunnelled with `CONNECT`, credentials from the
/// proxy's URL) and follows no redirect itself.
fn proxy_client(proxy: Option<reqwest::Proxy>) -> Result<reqwest::Client, String> {
    let builder = match proxy {
        Some(proxy) => reqwest::Client::builder().proxy(proxy),
        None => reqwest::Client::builder(),
    };
    builder
        .user_agent(http_client::USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .map_err(|e| format!("cannot start the upstream HTTP client for the proxy: {e}"))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::Router;
    use axum::body::Bytes as AxumBytes;
    use axum::extract::{Request, State};
    use axum::http::StatusCode as AxumStatus;
    use axum::response::{IntoResponse, Response};

    use super::*;

    /// What a test upstream saw: method, path, the headers asked about, body.
    #[derive(Debug, Clone, PartialEq)]
    struct Seen {
        method: String,
        path: String,
        authorization: Option<String>,
        content_type: Option<String>,
        body: String,
    }

    type Log = Arc<Mutex<Vec<Seen>>>;

    /// An upstream on 127.0.0.1 that records every request and answers `/to/<status>/<n>`
    /// with a redirect to `<elsewhere>/to/<status>/<n-1>` (`/done` at 0; a relative
    /// reference without `elsewhere`), anything else with 200.
    async fn upstream(log: Log, elsewhere: Option<String>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let origin = format!("http://{}", listener.local_addr().expect("addr"));
        let app = Router::new()
            .fallback(move |State(log): State<Log>, request: Request| {
                let next = elsewhere.clone().unwrap_or_default();
                async move { answer(log, next, request).await }
            })
            .with_state(log);
        tokio::spawn(async move { axum::serve(listener, app).await });
        origin
    }

    async fn answer(log: Log, next: String, request: Request) -> Response {
        let (head, body) = request.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20)
            .await
            .unwrap_or_else(|_| AxumBytes::new());
        let header = |name: &str| {
            head.headers
                .get(name)
                .map(|v| v.to_str().unwrap_or("?").to_string())
        };
        let path = head.uri.path().to_string();
        log.lock().expect("log").push(Seen {
            method: head.method.to_string(),
            path: path.clone(),
            authorization: header("authorization"),
            content_type: header("content-type"),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if let ["to", status, left] = parts[..]
            && let (Ok(status), Ok(left)) = (status.parse::<u16>(), left.parse::<u32>())
        {
            let location = match left {
                0 => format!("{next}/done"),
                left => format!("{next}/to/{status}/{}", left - 1),
            };
            let status = AxumStatus::from_u16(status).expect("status");
            return (status, [("location", location)]).into_response();
        }
        (AxumStatus::OK, "done").into_response()
    }

    fn request(method: Method, url: &str) -> Outbound {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer s3cret"),
        );
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Outbound {
            method,
            url: Url::parse(url).expect("url"),
            headers,
            body: Some(Bytes::from_static(b"{\"a\":1}")),
            follow_redirects: true,
        }
    }

    impl Client {
        /// Sends what `make` makes, made again for each redirect.
        async fn send_made(&self, make: impl Fn() -> Outbound + Sync) -> Result<Answer, Error> {
            self.send(make(), &|| Ok(make())).await
        }
    }

    fn within(allowed: &[(&str, &str)]) -> Client {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for (from, to) in allowed {
            map.entry(from.to_string())
                .or_default()
                .push(to.to_string());
        }
        Client::new(map).expect("client")
    }

    fn seen(log: &Log) -> Vec<(String, String)> {
        let log = log.lock().expect("log");
        log.iter()
            .map(|s| (s.method.clone(), s.path.clone()))
            .collect()
    }

    async fn body(mut answer: Answer) -> String {
        let mut text = Vec::new();
        while let Some(chunk) = answer.chunk().await.expect("chunk") {
            text.extend_from_slice(&chunk);
        }
        String::from_utf8(text).expect("utf-8")
    }

    #[tokio::test]
    async fn a_303_after_a_post_is_a_get_without_the_body() {
        let log = Log::default();
        let origin = upstream(log.clone(), None).await;
        let client = within(&[]);
        let answer = client
            .send_made(|| request(Method::POST, &format!("{origin}/to/303/0")))
            .await
            .expect("answer");
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.url.as_str(), format!("{origin}/done"));
        assert_eq!(body(answer).await, "done");
        let log = log.lock().expect("log").clone();
        assert_eq!(log.len(), 2);
        assert_eq!((log[1].method.as_str(), log[1].body.as_str()), ("GET", ""));
        assert_eq!(log[1].content_type, None, "the body's headers go with it");
        assert_eq!(
            log[1].authorization.as_deref(),
            Some("Bearer s3cret"),
            "same origin: credentials stay"
        );
    }

    #[tokio::test]
    async fn a_307_and_a_308_send_the_same_request_again() {
        for status in [307, 308] {
            let log = Log::default();
            let origin = upstream(log.clone(), None).await;
            let answer = within(&[])
                .send_made(|| request(Method::PUT, &format!("{origin}/to/{status}/1")))
                .await
                .expect("answer");
            assert_eq!(answer.status, StatusCode::OK);
            let log = log.lock().expect("log").clone();
            assert_eq!(log.len(), 3, "{status}");
            for seen in &log {
                assert_eq!(
                    (seen.method.as_str(), seen.body.as_str()),
                    ("PUT", "{\"a\":1}")
                );
                assert_eq!(seen.content_type.as_deref(), Some("application/json"));
            }
        }
    }

    #[tokio::test]
    async fn a_301_turns_only_a_post_into_a_get() {
        let log = Log::default();
        let origin = upstream(log.clone(), None).await;
        for method in [Method::POST, Method::DELETE] {
            within(&[])
                .send_made(|| request(method.clone(), &format!("{origin}/to/301/0")))
                .await
                .expect("answer");
        }
        let methods: Vec<String> = seen(&log).into_iter().map(|(m, _)| m).collect();
        assert_eq!(methods, ["POST", "GET", "DELETE", "DELETE"]);
    }

    #[tokio::test]
    async fn at_most_five_redirects_are_followed() {
        let log = Log::default();
        let origin = upstream(log.clone(), None).await;
        let client = within(&[]);
        let five = client
            .send_made(|| request(Method::GET, &format!("{origin}/to/302/4")))
            .await
            .expect("answer");
        assert_eq!(five.status, StatusCode::OK, "five redirects are followed");
        log.lock().expect("log").clear();
        let six = client
            .send_made(|| request(Method::GET, &format!("{origin}/to/302/5")))
            .await
            .expect("answer");
        assert_eq!(six.status, StatusCode::FOUND, "the sixth is the answer");
        assert_eq!(six.url.as_str(), format!("{origin}/to/302/0"));
        assert_eq!(log.lock().expect("log").len(), 6);
    }

    #[tokio::test]
    async fn another_origin_is_followed_only_when_listed_and_gets_no_credentials() {
        let (here, there) = (Log::default(), Log::default());
        // `localhost` is another host than `127.0.0.1`, so another origin.
        let target = upstream(there.clone(), None).await;
        let target = target.replace("127.0.0.1", "localhost");
        let origin = upstream(here.clone(), Some(target.clone())).await;
        let refused = within(&[])
            .send_made(|| request(Method::GET, &format!("{origin}/to/302/0")))
            .await
            .expect("answer");
        assert_eq!(
            refused.status,
            StatusCode::FOUND,
            "not listed: not followed"
        );
        assert!(there.lock().expect("log").is_empty(), "nothing went there");
        let followed = within(&[(&origin, &target)])
            .send_made(|| request(Method::GET, &format!("{origin}/to/302/0")))
            .await
            .expect("answer");
        assert_eq!(followed.status, StatusCode::OK);
        assert_eq!(followed.url.as_str(), format!("{target}/done"));
        let there = there.lock().expect("log").clone();
        assert_eq!(there.len(), 1);
        assert_eq!(there[0].authorization, None, "credentials stay at home");
    }

    #[tokio::test]
    async fn what_one_redirect_dropped_stays_dropped_for_the_next() {
        let (here, there) = (Log::default(), Log::default());
        let target = upstream(there.clone(), None).await;
        let target = target.replace("127.0.0.1", "localhost");
        let origin = upstream(here.clone(), Some(target.clone())).await;
        // A POST answered 303 at home and 303 again there, then `/done` there: the second
        // hop stays within the other origin and still carries no credentials.
        let answer = within(&[(&origin, &target)])
            .send_made(|| request(Method::POST, &format!("{origin}/to/303/1")))
            .await
            .expect("answer");
        assert_eq!(answer.url.as_str(), format!("{target}/done"));
        let there = there.lock().expect("log").clone();
        assert_eq!(there.len(), 2);
        for seen in &there {
            assert_eq!(
                (seen.method.as_str(), seen.body.as_str()),
                ("GET", ""),
                "{seen:?}"
            );
            assert_eq!(seen.content_type, None, "{seen:?}");
            assert_eq!(seen.authorization, None, "{seen:?}");
        }
    }

    #[tokio::test]
    async fn a_request_that_follows_no_redirect_gets_the_3xx() {
        let log = Log::default();
        let origin = upstream(log.clone(), None).await;
        let asked = || {
            let mut asked = request(Method::GET, &format!("{origin}/to/303/0"));
            asked.follow_redirects = false;
            asked
        };
        let answer = within(&[]).send_made(asked).await.expect("answer");
        assert_eq!(answer.status, StatusCode::SEE_OTHER);
        assert_eq!(
            answer.headers.get("location").and_then(|v| v.to_str().ok()),
            Some("/done")
        );
        assert_eq!(log.lock().expect("log").len(), 1);
    }

    #[tokio::test]
    async fn a_request_the_proxy_settings_name_goes_through_the_proxy_and_redirects_the_same() {
        // The proxy is the upstream itself: it answers absolute-form requests by their path.
        let log = Log::default();
        let proxy = upstream(log.clone(), None).await;
        let mut client = within(&[]);
        let matcher = Matcher::builder().http(proxy.clone()).build();
        let via = reqwest::Proxy::http(&proxy).expect("proxy");
        client.proxied = Some((matcher, proxy_client(Some(via)).expect("client")));
        let answer = client
            .send_made(|| request(Method::POST, "http://api.invalid/to/303/1"))
            .await
            .expect("answer");
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.url.as_str(), "http://api.invalid/done");
        assert_eq!(body(answer).await, "done");
        assert_eq!(
            seen(&log),
            [
                ("POST", "/to/303/1"),
                ("GET", "/to/303/0"),
                ("GET", "/done")
            ]
            .map(|(m, p)| (m.to_string(), p.to_string())),
            "each hop through the proxy, redirects followed by restmcp"
        );
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_connect_error_without_the_url() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        drop(listener);
        let error = within(&[])
            .send_made(|| {
                request(
                    Method::GET,
                    &format!("http://127.0.0.1:{port}/x?api_key=s3cret"),
                )
            })
            .await
            .err()
            .expect("no answer");
        assert!(error.is_connect());
        assert!(!error.closed_before_answer());
        let text = error.to_string();
        assert!(text.starts_with("connection failed: "), "{text}");
        assert!(
            !text.contains("s3cret") && !text.contains("api_key"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_connection_closed_before_the_answer_says_so() {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            // Reads the request, then closes without a word.
            if let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = [0u8; 1024];
                let _ = stream.read(&mut buffer).await;
            }
        });
        let error = within(&[])
            .send_made(|| request(Method::GET, &format!("http://{addr}/x")))
            .await
            .err()
            .expect("no answer");
        assert!(!error.is_connect());
        assert!(error.closed_before_answer(), "{error}");
        assert!(error.to_string().starts_with("request failed: "), "{error}");
    }

    /// An upstream on 127.0.0.1 that answers `/big` with 4 MiB and anything else with its
    /// caller's port, and counts the connections it accepted.
    async fn counting_upstream() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let accepted = Arc::new(AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let origin = format!("http://{}", listener.local_addr().expect("addr"));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((stream, peer)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                let service = hyper::service::service_fn(move |asked: hyper::Request<Incoming>| {
                    let body = match asked.uri().path() {
                        "/big" => Bytes::from(vec![b'x'; 4 << 20]),
                        _ => Bytes::from(peer.port().to_string()),
                    };
                    async move {
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(body)))
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new().serve_connection(io, service),
                );
            }
        });
        (origin, accepted)
    }

    fn get(url: &str) -> Outbound {
        let mut asked = request(Method::GET, url);
        asked.body = None;
        asked
    }

    #[tokio::test]
    async fn a_connection_whose_answer_was_read_carries_the_next_request() {
        let (origin, accepted) = counting_upstream().await;
        let client = within(&[]);
        let url = Url::parse(&origin).expect("url");
        let mut ports = Vec::new();
        for _ in 0..3 {
            let answer = client
                .send_made(|| get(&format!("{origin}/port")))
                .await
                .expect("answer");
            ports.push(body(answer).await);
            assert_eq!(client.direct.idle(&url), 1, "back in the pool");
        }
        assert!(ports.iter().all(|p| *p == ports[0]), "{ports:?}");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_answer_dropped_before_its_end_closes_its_connection() {
        let (origin, accepted) = counting_upstream().await;
        let client = within(&[]);
        let url = Url::parse(&origin).expect("url");
        let mut big = client
            .send_made(|| get(&format!("{origin}/big")))
            .await
            .expect("answer");
        assert!(big.chunk().await.expect("chunk").is_some());
        drop(big);
        assert_eq!(client.direct.idle(&url), 0, "not returned half read");
        let answer = client
            .send_made(|| get(&format!("{origin}/port")))
            .await
            .expect("answer");
        assert_eq!(answer.status, StatusCode::OK);
        body(answer).await;
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(client.direct.idle(&url), 1);
    }

    #[tokio::test]
    async fn requests_at_once_each_get_a_connection_and_all_come_back() {
        let (origin, accepted) = counting_upstream().await;
        let client = within(&[]);
        let url = Url::parse(&origin).expect("url");
        for round in 0..3 {
            let calls = (0..8).map(|_| async {
                let answer = client
                    .send_made(|| get(&format!("{origin}/port")))
                    .await
                    .expect("answer");
                body(answer).await
            });
            let ports = futures_util::future::join_all(calls).await;
            assert_eq!(ports.len(), 8);
            let made = accepted.load(std::sync::atomic::Ordering::SeqCst);
            assert!((1..=8).contains(&made), "round {round}: {made} connections");
            assert_eq!(
                client.direct.idle(&url),
                made,
                "round {round}: all returned"
            );
        }
    }

    /// A raw upstream on 127.0.0.1 that answers the first request of each connection with
    /// `ok` (keep-alive by default) and then closes it: its address, the connections it
    /// accepted, and each request's head as it arrived.
    async fn one_answer_per_connection() -> (
        std::net::SocketAddr,
        Arc<std::sync::atomic::AtomicUsize>,
        tokio::sync::mpsc::UnboundedReceiver<String>,
    ) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let (heads, seen) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buffer = vec![0u8; 4096];
                let n = stream.read(&mut buffer).await.unwrap_or(0);
                let _ = heads.send(String::from_utf8_lossy(&buffer[..n]).into_owned());
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    .await;
            }
        });
        (addr, accepted, seen)
    }

    #[tokio::test]
    async fn a_connection_the_upstream_closed_while_idle_is_not_used_again() {
        let (addr, accepted, _) = one_answer_per_connection().await;
        let client = within(&[]);
        for _ in 0..2 {
            let answer = client
                .send_made(|| request(Method::POST, &format!("http://{addr}/x")))
                .await
                .expect("a POST is answered, not sent on the closed connection");
            assert_eq!(body(answer).await, "ok");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_http1_request_names_its_path_query_and_host_as_the_url_does() {
        let (addr, _, mut seen) = one_answer_per_connection().await;
        let port = addr.port();
        let client = within(&[]);
        for (url, line, host) in [
            (
                format!("http://127.0.0.1:{port}/a/b%20c?x=1&y=%2F#frag"),
                "GET /a/b%20c?x=1&y=%2F HTTP/1.1\r\n",
                format!("host: 127.0.0.1:{port}\r\n"),
            ),
            (
                format!("http://localhost:{port}"),
                "GET / HTTP/1.1\r\n",
                format!("host: localhost:{port}\r\n"),
            ),
        ] {
            let answer = client.send_made(|| get(&url)).await.expect("answer");
            assert_eq!(body(answer).await, "ok");
            let head = seen.recv().await.expect("head");
            assert!(head.starts_with(line), "{head}");
            assert!(head.to_ascii_lowercase().contains(&host), "{head}");
            assert_eq!(
                head.to_ascii_lowercase().matches("\nhost:").count(),
                1,
                "{head}"
            );
        }
    }
}
