//! The checks in front of every MCP route, in order: the tool set is loaded (503), the
//! `Host` is allowed and the `Origin`, when present, too (403: DNS-rebinding and
//! cross-site protection, as the MCP transport specification requires), and the client
//! presents an accepted token when `[server.auth]` or `[server.oauth]` is set.
//!
//! A static token (`[server.auth]`) is compared in constant time and never logged; its
//! client is named by the token's pseudonym (`tok:…`, a keyed hash of the token: see
//! [`Pseudonyms`]), never by its value, and is a caller of its own, as an OAuth caller is.
//! Any other bearer token goes to the OAuth resource server ([`super::oauth`]): a valid one
//! puts its [`Caller`] in the request, named by its pseudonym; otherwise the answer is the
//! challenge the MCP Authorization specification asks for (401 with the metadata URL, 403
//! `insufficient_scope` with the scopes to ask for). Every authenticated request carries
//! its [`Principal`] and the [`ClientId`] its limits count against.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq as _;

use super::health::Readiness;
use super::oauth::{Rejection, ResourceServer};
use crate::config::{InboundAuth, ServerSettings};
use crate::identity::{Caller, InsufficientScope, Principal, Pseudonyms};
use crate::mcp::admission::ClientId;
use crate::secret::Secret;
use crate::telemetry::metrics::Metrics;

/// A token configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("server.auth.tokens_env: environment variable {0} is not set or empty")]
    MissingEnv(String),
    #[error("server.auth.tokens_file: {path}: {problem}")]
    File { path: PathBuf, problem: String },
}

/// The accepted tokens.
pub struct Tokens {
    from_env: Vec<Accepted>,
    file: Option<TokenFile>,
    api_key_header: Option<header::HeaderName>,
}

/// An accepted token and the caller it names.
#[derive(Debug, Clone)]
struct Accepted {
    token: Secret,
    principal: Principal,
}

impl Accepted {
    fn new(token: Secret, pseudonyms: &Pseudonyms) -> Accepted {
        let principal = Principal::new(pseudonyms.of_token(token.expose()));
        Accepted { token, principal }
    }
}

/// Tokens read from a file, re-read (at most once a second) when it changes, so a rotated
/// Secret takes effect without a restart. A file that cannot be read keeps the last tokens.
struct TokenFile {
    path: PathBuf,
    state: Mutex<FileState>,
    pseudonyms: Arc<Pseudonyms>,
}

struct FileState {
    tokens: Vec<Accepted>,
    modified: Option<SystemTime>,
    checked: Instant,
}

impl Tokens {
    /// Reads the tokens `auth` names; `env` looks variables up; each token's caller is
    /// named by `pseudonyms`.
    pub fn load(
        auth: &InboundAuth,
        env: impl Fn(&str) -> Option<String>,
        pseudonyms: Arc<Pseudonyms>,
    ) -> Result<Tokens, AuthError> {
        let from_env = auth
            .tokens_env
            .iter()
            .map(|name| match env(name) {
                Some(value) if !value.trim().is_empty() => {
                    Ok(Accepted::new(Secret::new(value.trim()), &pseudonyms))
                }
                _ => Err(AuthError::MissingEnv(name.clone())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let file = match &auth.tokens_file {
            Some(path) => {
                let path = path.relative();
                let (tokens, modified) = read_token_file(&path, &pseudonyms)?;
                Some(TokenFile {
                    path,
                    state: Mutex::new(FileState {
                        tokens,
                        modified,
                        checked: Instant::now(),
                    }),
                    pseudonyms,
                })
            }
            None => None,
        };
        let api_key_header = auth
            .api_key_header
            .as_deref()
            .and_then(|name| header::HeaderName::from_bytes(name.as_bytes()).ok());
        Ok(Tokens {
            from_env,
            file,
            api_key_header,
        })
    }

    /// The caller a presented token names, or `None`.
    fn identify(&self, headers: &HeaderMap) -> Option<Principal> {
        let presented = presented_token(headers, self.api_key_header.as_ref())?;
        let mut found: Option<&Principal> = None;
        let file_tokens = self
            .file
            .as_ref()
            .map(TokenFile::current)
            .unwrap_or_default();
        // Every token is compared, so the time taken does not say which one matched.
        for accepted in self.from_env.iter().chain(&file_tokens) {
            let equal: bool = accepted
                .token
                .expose()
                .as_bytes()
                .ct_eq(presented.as_bytes())
                .into();
            if equal && found.is_none() {
                found = Some(&accepted.principal);
            }
        }
        found.cloned()
    }
}

impl TokenFile {
    fn current(&self) -> Vec<Accepted> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.checked.elapsed() >= Duration::from_secs(1) {
            state.checked = Instant::now();
            let modified = std::fs::metadata(&self.path)
                .and_then(|m| m.modified())
                .ok();
            if modified != state.modified {
                match read_token_file(&self.path, &self.pseudonyms) {
                    Ok((tokens, modified)) => {
                        tracing::info!(path = %self.path.display(), "token file changed; {} token(s) accepted", tokens.len());
                        state.tokens = tokens;
                        state.modified = modified;
                    }
                    Err(e) => tracing::error!("{e}; keeping the tokens read before"),
                }
            }
        }
        state.tokens.clone()
    }
}

fn read_token_file(
    path: &std::path::Path,
    pseudonyms: &Pseudonyms,
) -> Result<(Vec<Accepted>, Option<SystemTime>), AuthError> {
    let problem = |problem: String| AuthError::File {
        path: path.to_path_buf(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| problem(e.to_string()))?;
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let tokens: Vec<Accepted> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| Accepted::new(Secret::new(line), pseudonyms))
        .collect();
    if tokens.is_empty() {
        return Err(problem(
            "holds no token (one per line; # starts a comment)".into(),
        ));
    }
    Ok((tokens, modified))
}

/// `Authorization: Bearer TOKEN`, else the API-key header.
fn presented_token(
    headers: &HeaderMap,
    api_key_header: Option<&header::HeaderName>,
) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    bearer.or_else(|| {
        let value = headers.get(api_key_header?)?.to_str().ok()?.trim();
        (!value.is_empty()).then(|| value.to_string())
    })
}

/// What the checks need; shared by every request.
pub struct Guard {
    allowed_hosts: Vec<String>,
    /// Exact origins accepted (allowed_origins and cors_origins), lower-cased.
    allowed_origins: Vec<String>,
    any_origin: bool,
    tokens: Option<Arc<Tokens>>,
    oauth: Option<Arc<ResourceServer>>,
    readiness: Arc<Readiness>,
    metrics: Arc<Metrics>,
    /// The token `/metrics` takes (`server.metrics_token_env`).
    metrics_token: Option<Secret>,
    /// `/metrics` takes the static tokens too (`server.auth.protect_metrics`).
    protect_metrics: bool,
}

impl Guard {
    pub fn new(
        settings: &ServerSettings,
        tokens: Option<Arc<Tokens>>,
        oauth: Option<Arc<ResourceServer>>,
        readiness: Arc<Readiness>,
        metrics: Arc<Metrics>,
    ) -> Guard {
        Guard::with_metrics_token(settings, tokens, oauth, readiness, metrics, None)
    }

    /// [`Guard::new`] with the token `/metrics` takes.
    pub fn with_metrics_token(
        settings: &ServerSettings,
        tokens: Option<Arc<Tokens>>,
        oauth: Option<Arc<ResourceServer>>,
        readiness: Arc<Readiness>,
        metrics: Arc<Metrics>,
        metrics_token: Option<Secret>,
    ) -> Guard {
        let origins: Vec<String> = settings
            .allowed_origins
            .iter()
            .chain(&settings.cors_origins)
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
            .collect();
        Guard {
            allowed_hosts: settings
                .allowed_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            any_origin: origins.iter().any(|o| o == "*"),
            allowed_origins: origins,
            tokens,
            oauth,
            readiness,
            metrics,
            metrics_token,
            protect_metrics: settings.auth.as_ref().is_some_and(|a| a.protect_metrics),
        }
    }

    /// How clients authenticate: `oauth`, `token` (static tokens) or `none`.
    pub fn auth_kind(&self) -> &'static str {
        match (&self.oauth, &self.tokens) {
            (Some(_), _) => "oauth",
            (None, Some(_)) => "token",
            (None, None) => "none",
        }
    }

    /// Whether `/metrics` is closed to requests without a token.
    pub fn protects_metrics(&self) -> bool {
        self.metrics_token.is_some() || self.protect_metrics
    }

    /// Whether a request may read what only the operator should: `/metrics` when it is
    /// protected, `/readyz`'s probes. It may when it presents the metrics token or an
    /// accepted static token, or (for `peer` given) when it comes from this machine.
    pub fn may_observe(&self, headers: &HeaderMap, peer: Option<std::net::IpAddr>) -> bool {
        if peer.is_some_and(|ip| ip.is_loopback()) {
            return true;
        }
        if let (Some(token), Some(presented)) = (&self.metrics_token, bearer_token(headers)) {
            let equal: bool = token.expose().as_bytes().ct_eq(presented.as_bytes()).into();
            if equal {
                return true;
            }
        }
        self.tokens
            .as_ref()
            .is_some_and(|tokens| tokens.identify(headers).is_some())
    }

    fn host_allowed(&self, headers: &HeaderMap, uri: &axum::http::Uri) -> bool {
        if self.allowed_hosts.is_empty() {
            return true;
        }
        // A target in absolute form names the host (RFC 9112, section 3.2.2); `one_host`
        // has made sure that a `Host` beside it agrees.
        let host = uri
            .authority()
            .map(|a| a.as_str())
            .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()));
        host.is_some_and(|host| self.is_allowed_host(&host_name(host)))
    }

    fn is_allowed_host(&self, name: &str) -> bool {
        self.allowed_hosts.iter().any(|allowed| allowed == name)
    }

    /// With an explicit list, the Origin must be on it; without one, its host must be an
    /// allowed `Host` (so a page on another site cannot drive a loopback server).
    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self.any_origin {
            return true;
        }
        if !self.allowed_origins.is_empty() {
            return self.allowed_origins.contains(&origin);
        }
        if self.allowed_hosts.is_empty() {
            return true;
        }
        match url::Url::parse(&origin) {
            Ok(url) => url
                .host_str()
                .is_some_and(|host| self.is_allowed_host(&host_name(host))),
            Err(_) => false,
        }
    }

    /// Readiness, `Host` and `Origin`: the checks that need no token.
    fn check(&self, headers: &HeaderMap, uri: &axum::http::Uri) -> Result<(), Refusal> {
        if !self.readiness.is_loaded() {
            self.metrics.record_refusal("not_ready");
            return Err(Refusal::Loading);
        }
        if !self.host_allowed(headers, uri) {
            self.metrics.record_refusal("forbidden_host");
            tracing::warn!("refused a request whose Host is not allowed (possible DNS rebinding)");
            return Err(Refusal::Host);
        }
        if !self.origin_allowed(headers) {
            self.metrics.record_refusal("forbidden_origin");
            tracing::warn!("refused a request whose Origin is not allowed");
            return Err(Refusal::Origin);
        }
        Ok(())
    }

    /// The request's client (and, for an OAuth token, its caller); `Ok(None)` when no
    /// authentication is configured. `peer` is who the request comes from until a token
    /// says otherwise (for the introspection rate).
    async fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: &ClientId,
    ) -> Result<Option<Client>, Refusal> {
        if let Some(tokens) = &self.tokens
            && let Some(principal) = tokens.identify(headers)
        {
            return Ok(Some(Client {
                principal,
                caller: None,
            }));
        }
        let Some(oauth) = &self.oauth else {
            return self.static_only(headers).map(|principal| {
                principal.map(|principal| Client {
                    principal,
                    caller: None,
                })
            });
        };
        let refuse = |reason: &'static str| {
            self.metrics.record_refusal(reason);
        };
        let required: Vec<&str> = oauth.required_scopes().iter().map(String::as_str).collect();
        let Some(token) = bearer_token(headers) else {
            refuse("unauthorized");
            return Err(Refusal::Challenge {
                status: StatusCode::UNAUTHORIZED,
                header: oauth.challenge(None, &required),
                text: "Unauthorized: this server takes OAuth access tokens (see WWW-Authenticate)"
                    .into(),
            });
        };
        match oauth.authenticate(&token, &peer.0).await {
            Ok(caller) => {
                let missing = caller.missing(oauth.required_scopes());
                if !missing.is_empty() {
                    refuse("insufficient_scope");
                    return Err(Refusal::Challenge {
                        status: StatusCode::FORBIDDEN,
                        header: oauth.challenge(
                            Some(("insufficient_scope", "the token lacks a required scope")),
                            &required,
                        ),
                        text: format!("Forbidden: the token lacks the scope {}", missing.join(" ")),
                    });
                }
                Ok(Some(Client {
                    principal: Principal::new(caller.pseudonym()),
                    caller: Some(caller),
                }))
            }
            Err(Rejection::Invalid(reason)) => {
                refuse("unauthorized");
                tracing::info!("refused an access token: {reason}");
                Err(Refusal::Challenge {
                    status: StatusCode::UNAUTHORIZED,
                    header: oauth.challenge(Some(("invalid_token", &reason)), &required),
                    text: format!("Unauthorized: {reason}"),
                })
            }
            Err(Rejection::Unavailable(reason)) => {
                refuse("auth_unavailable");
                tracing::warn!("cannot check an access token now: {reason}");
                Err(Refusal::Unavailable)
            }
            Err(Rejection::Throttled(wait)) => {
                refuse("introspection_throttled");
                tracing::info!(
                    "refused to introspect another unknown token of one client (server.oauth.introspection_rate_limit)"
                );
                Err(Refusal::Throttled(wait))
            }
        }
    }

    /// Static tokens only: `Ok(None)` when none are configured.
    fn static_only(&self, headers: &HeaderMap) -> Result<Option<Principal>, Refusal> {
        let Some(tokens) = &self.tokens else {
            return Ok(None);
        };
        match tokens.identify(headers) {
            Some(client) => Ok(Some(client)),
            None => {
                self.metrics.record_refusal("unauthorized");
                let presented = presented_token(headers, tokens.api_key_header.as_ref()).is_some();
                Err(Refusal::Unauthorized { presented })
            }
        }
    }
}

/// An authenticated client: who it is (for limits, logs and what is kept per caller), and
/// the OAuth caller behind it.
struct Client {
    principal: Principal,
    caller: Option<Arc<Caller>>,
}

/// `Authorization: Bearer TOKEN` (RFC 6750, section 2.1: the only way OAuth tokens are
/// taken; never from the query string).
fn bearer_token(headers: &HeaderMap) -> Option<String> {
    presented_token(headers, None)
}

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    Loading,
    Host,
    Origin,
    Unauthorized {
        presented: bool,
    },
    /// An OAuth refusal: 401 or 403 with its `WWW-Authenticate` challenge.
    Challenge {
        status: StatusCode,
        header: String,
        text: String,
    },
    /// The authorization server cannot be asked about the token now.
    Unavailable,
    /// The client asked about too many unknown tokens lately; retry after this long.
    Throttled(Duration),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Loading => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                "Service Unavailable: loading the tool set",
            )
                .into_response(),
            Refusal::Host => (
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            )
                .into_response(),
            Refusal::Origin => (
                StatusCode::FORBIDDEN,
                "Forbidden: Origin header is not allowed",
            )
                .into_response(),
            Refusal::Unauthorized { presented } => {
                let (challenge, text) = if presented {
                    (
                        r#"Bearer realm="restmcp", error="invalid_token""#,
                        "Unauthorized: the token is not accepted",
                    )
                } else {
                    (
                        r#"Bearer realm="restmcp""#,
                        "Unauthorized: send Authorization: Bearer <token>",
                    )
                };
                (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, challenge)],
                    text,
                )
                    .into_response()
            }
            Refusal::Challenge {
                status,
                header: challenge,
                text,
            } => match header::HeaderValue::from_str(&challenge) {
                Ok(value) => (status, [(header::WWW_AUTHENTICATE, value)], text).into_response(),
                Err(_) => (status, text).into_response(),
            },
            Refusal::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "5")],
                "Service Unavailable: the authorization server cannot be reached to check the token",
            )
                .into_response(),
            Refusal::Throttled(wait) => (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1).to_string())],
                "Too Many Requests: this client presented too many tokens restmcp did not know \
                 lately (server.oauth.introspection_rate_limit); retry later with a valid one",
            )
                .into_response(),
        }
    }
}

/// `host:port`, `[v6]:port` or a bare name → the lower-cased name without brackets.
fn host_name(host: &str) -> String {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !name.ends_with(':') => {
            name
        }
        _ => host,
    };
    name.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// Middleware for the MCP routes: [`admit`] in front of the rest of the stack.
pub async fn mcp(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    admit(&guard, request, |request| next.run(request)).await
}

/// The guard's checks in front of an MCP request, then `serve` with the client (and, when
/// authenticated, the principal and caller) in the request's extensions. A tool the
/// token's scopes do not open comes back from `serve` marked [`InsufficientScope`]: the
/// answer then carries the challenge that says which scopes to ask for.
pub async fn admit<F, Fut>(guard: &Guard, mut request: Request, serve: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    if let Err(refused) = admit_request(guard, &mut request).await {
        return refused;
    }
    let mut response = serve(request).await;
    challenge_scope(guard, &mut response);
    response
}

/// [`admit`]'s checks: the request's origin and credentials, then the client (and, when
/// authenticated, the principal and caller) put in its extensions; the refusal otherwise.
/// The request is changed where it is, not moved: `/mcp`'s direct way calls this and
/// [`challenge_scope`] around the front itself, and a request moved into one more future
/// is one more copy of its 240 bytes.
pub async fn admit_request(guard: &Guard, request: &mut Request) -> Result<(), Response> {
    if let Err(refusal) = guard.check(request.headers(), request.uri()) {
        return Err(refusal.into_response());
    }
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(
            || ClientId("unknown".into()),
            |info| ClientId::of_address(info.0.ip()),
        );
    let client = match guard.authenticate(request.headers(), &peer).await {
        Ok(client) => client,
        Err(refusal) => return Err(refusal.into_response()),
    };
    let extensions = request.extensions_mut();
    if let Some(client) = client {
        extensions.insert(ClientId(client.principal.as_str().to_string()));
        extensions.insert(client.principal);
        if let Some(caller) = client.caller {
            extensions.insert(caller);
        }
    } else {
        // The MCP layer counts the client by its address too: made once.
        extensions.insert(peer);
    }
    Ok(())
}

/// An answer marked [`InsufficientScope`] gets the challenge that names the scopes to ask
/// for (with OAuth configured).
pub fn challenge_scope(guard: &Guard, response: &mut Response) {
    let (Some(oauth), Some(refused)) = (
        &guard.oauth,
        response.extensions().get::<InsufficientScope>(),
    ) else {
        return;
    };
    let mut scopes: Vec<&str> = oauth.required_scopes().iter().map(String::as_str).collect();
    for scope in &refused.scopes {
        if !scopes.contains(&scope.as_str()) {
            scopes.push(scope);
        }
    }
    let challenge = oauth.challenge(
        Some((
            "insufficient_scope",
            "the token lacks a scope this tool needs",
        )),
        &scopes,
    );
    if let Ok(value) = header::HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
}

/// Middleware for every route: a request must name one host. Two `Host` headers get 400,
/// as nginx answers them (they let a check read one and a later layer the other); so does
/// a request whose target names a host (`GET http://host/path`) other than its `Host`, and
/// an HTTP/1.1 request with no host at all (RFC 9112, section 3.2). HTTP/2 is not served
/// (the listener speaks HTTP/1.1 only), so there is no `:authority` beside `Host`; if it
/// were, hyper would put it in the URI, and the same rule would hold it to the `Host`.
pub async fn one_host(request: Request, next: Next) -> Response {
    match host_problem(&request) {
        Some(refused) => refused,
        None => next.run(request).await,
    }
}

/// The 400 answer [`one_host`] gives `request`, when it names no host or more than one.
pub fn host_problem<B>(request: &axum::http::Request<B>) -> Option<Response> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let first = hosts.next();
    let problem = if hosts.next().is_some() {
        "Bad Request: more than one Host header"
    } else {
        match (first, request.uri().authority()) {
            (Some(host), Some(authority))
                if !host
                    .to_str()
                    .is_ok_and(|host| host.eq_ignore_ascii_case(authority.as_str())) =>
            {
                "Bad Request: the Host header and the request target name different hosts"
            }
            (None, None) if request.version() == axum::http::Version::HTTP_11 => {
                "Bad Request: an HTTP/1.1 request needs a Host header"
            }
            _ => return None,
        }
    };
    tracing::debug!("{problem}");
    Some((StatusCode::BAD_REQUEST, problem).into_response())
}

/// Middleware for `/metrics` when it is protected (`server.metrics_token_env`, or
/// `server.auth.protect_metrics`): the metrics token or a static token, else 401, from any
/// address.
pub async fn token_only(
    State(guard): State<Arc<Guard>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    if guard.may_observe(request.headers(), None) {
        return next.run(request).await;
    }
    guard.metrics.record_refusal("unauthorized");
    let presented = bearer_token(request.headers()).is_some();
    Refusal::Unauthorized { presented }.into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const KEY: &[u8] = b"the deployment's identity key, 32+ bytes";

    fn guard(settings: ServerSettings, tokens: Option<Tokens>) -> Guard {
        let readiness = Readiness::new();
        readiness.set_loaded();
        Guard::new(
            &settings,
            tokens.map(Arc::new),
            None,
            readiness,
            Metrics::new(),
        )
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                header::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                HeaderValue::from_str(value).expect("value"),
            );
        }
        map
    }

    fn status(guard: &Guard, pairs: &[(&str, &str)]) -> StatusCode {
        match guard.check(&headers(pairs), &"/mcp".parse().expect("uri")) {
            Ok(_) => StatusCode::OK,
            Err(refusal) => refusal.into_response().status(),
        }
    }

    #[test]
    fn origins_default_to_the_allowed_hosts() {
        let guard = guard(ServerSettings::default(), None);
        let host = ("host", "127.0.0.1:8080");
        assert_eq!(status(&guard, &[host]), StatusCode::OK);
        assert_eq!(
            status(&guard, &[host, ("origin", "http://localhost:5173")]),
            StatusCode::OK
        );
        assert_eq!(
            status(&guard, &[host, ("origin", "http://[::1]:3000")]),
            StatusCode::OK
        );
        assert_eq!(
            status(&guard, &[host, ("origin", "https://evil.example")]),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status(&guard, &[host, ("origin", "null")]),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status(&guard, &[("host", "evil.example:8080")]),
            StatusCode::FORBIDDEN
        );
        assert_eq!(status(&guard, &[("host", "[::1]:8080")]), StatusCode::OK);
        assert_eq!(status(&guard, &[]), StatusCode::FORBIDDEN, "no Host at all");
    }

    #[test]
    fn explicit_origins_and_cors_origins_are_exact() {
        let settings = ServerSettings {
            allowed_origins: vec!["https://app.example.com".into()],
            cors_origins: vec!["http://localhost:5173".into()],
            ..ServerSettings::default()
        };
        let guard = guard(settings, None);
        let host = ("host", "localhost");
        assert_eq!(
            status(&guard, &[host, ("origin", "https://APP.example.com")]),
            StatusCode::OK
        );
        assert_eq!(
            status(&guard, &[host, ("origin", "http://localhost:5173")]),
            StatusCode::OK
        );
        assert_eq!(
            status(&guard, &[host, ("origin", "http://localhost:3000")]),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status(&guard, &[host, ("origin", "https://app.example.com.evil")]),
            StatusCode::FORBIDDEN
        );
    }

    #[test]
    fn tokens_from_env_and_header_names_the_client_not_the_token() {
        let auth = InboundAuth {
            tokens_env: vec!["A".into(), "B".into()],
            api_key_header: Some("X-API-Key".into()),
            ..InboundAuth::default()
        };
        let pseudonyms = Arc::new(Pseudonyms::new(KEY));
        let tokens = Tokens::load(
            &auth,
            |name| Some(format!("secret-{name}")),
            pseudonyms.clone(),
        )
        .expect("tokens");
        let guard = guard(ServerSettings::default(), Some(tokens));
        let host = ("host", "localhost");
        let check = |pairs: &[(&str, &str)]| guard.static_only(&headers(pairs));
        // Each token is a caller of its own, named by a keyed hash of the token.
        let (a, b) = (
            Principal::new(pseudonyms.of_token("secret-A")),
            Principal::new(pseudonyms.of_token("secret-B")),
        );
        assert_ne!(a, b);
        assert!(a.as_str().starts_with("tok:") && !a.as_str().contains("secret"));
        assert_eq!(
            check(&[host, ("authorization", "Bearer secret-B")])
                .ok()
                .flatten(),
            Some(b)
        );
        assert_eq!(
            check(&[host, ("authorization", "bearer  secret-A ")])
                .ok()
                .flatten(),
            Some(a.clone())
        );
        assert_eq!(
            check(&[host, ("x-api-key", "secret-A")]).ok().flatten(),
            Some(a)
        );
        let missing = check(&[host]).expect_err("no token").into_response();
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            missing.headers()[header::WWW_AUTHENTICATE],
            r#"Bearer realm="restmcp""#
        );
        let wrong = check(&[host, ("authorization", "Bearer secret-C")])
            .expect_err("wrong")
            .into_response();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        assert!(
            wrong.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .expect("ascii")
                .contains("invalid_token")
        );
        assert!(check(&[host, ("authorization", "Basic secret-A")]).is_err());
        assert!(check(&[host, ("authorization", "Bearer secret-")]).is_err());
        assert!(check(&[host, ("authorization", "Bearer secret-AB")]).is_err());
    }

    #[test]
    fn a_missing_token_variable_is_an_error_naming_it() {
        let auth = InboundAuth {
            tokens_env: vec!["RESTMCP_TEST_NO_SUCH_TOKEN".into()],
            ..InboundAuth::default()
        };
        let error = Tokens::load(&auth, |_| None, Arc::new(Pseudonyms::random()))
            .err()
            .expect("error");
        assert!(error.to_string().contains("RESTMCP_TEST_NO_SUCH_TOKEN"));
    }

    #[test]
    fn the_token_file_is_reread_when_it_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tokens");
        std::fs::write(&path, "# rotated monthly\nfirst-token\n\n").expect("write");
        let pseudonyms = Arc::new(Pseudonyms::new(KEY));
        let file = TokenFile {
            path: path.clone(),
            state: Mutex::new(FileState {
                tokens: read_token_file(&path, &pseudonyms).expect("read").0,
                modified: None,
                checked: Instant::now() - Duration::from_secs(2),
            }),
            pseudonyms: pseudonyms.clone(),
        };
        let values = |tokens: Vec<Accepted>| -> Vec<String> {
            tokens
                .iter()
                .map(|t| t.token.expose().to_string())
                .collect()
        };
        assert_eq!(values(file.current()), ["first-token"]);
        std::fs::write(&path, "second-token\nthird-token\n").expect("write");
        file.state.lock().expect("lock").checked = Instant::now() - Duration::from_secs(2);
        assert_eq!(values(file.current()), ["second-token", "third-token"]);
        std::fs::write(&path, "# emptied by mistake\n").expect("write");
        file.state.lock().expect("lock").checked = Instant::now() - Duration::from_secs(2);
        assert_eq!(
            values(file.current()),
            ["second-token", "third-token"],
            "a bad file keeps the last tokens"
        );
        let empty = read_token_file(&path, &pseudonyms).expect_err("error");
        assert!(empty.to_string().contains(&path.display().to_string()));
    }

    /// A guard with static tokens and an OAuth resource server that takes HS256 tokens
    /// (no network needed; the key-set paths are tested in `oauth::tests`).
    fn oauth_guard() -> Guard {
        let settings = crate::config::OAuthSettings {
            resource: "https://mcp.example.com/mcp".into(),
            issuers: vec!["https://as.example".into()],
            scopes: vec!["mcp:tools".into()],
            algorithms: vec!["HS256".into()],
            hmac_secret_env: Some("HMAC".into()),
            clock_skew_seconds: 0,
            jwks_refresh_seconds: 60,
            resource_name: None,
            introspection: None,
            introspection_cache_seconds: 30,
            introspection_rate_limit: crate::config::RateLimit {
                per_second: 1.0,
                burst: Some(10),
            },
        };
        let pseudonyms = Arc::new(Pseudonyms::new(KEY));
        let oauth = ResourceServer::new(
            &settings,
            |_| Some("shared-secret".into()),
            pseudonyms.clone(),
        )
        .expect("rs");
        let auth = InboundAuth {
            tokens_env: vec!["MACHINE".into()],
            ..InboundAuth::default()
        };
        let tokens =
            Tokens::load(&auth, |_| Some("machine-token".into()), pseudonyms).expect("tokens");
        let readiness = Readiness::new();
        readiness.set_loaded();
        Guard::new(
            &ServerSettings::default(),
            Some(Arc::new(tokens)),
            Some(Arc::new(oauth)),
            readiness,
            Metrics::new(),
        )
    }

    fn peer() -> ClientId {
        ClientId("address:127.0.0.1".into())
    }

    fn hs256(scope: &str) -> String {
        let exp = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("time")
            .as_secs()
            + 300;
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &serde_json::json!({"iss": "https://as.example", "sub": "alice",
                "aud": "https://mcp.example.com/mcp", "exp": exp, "scope": scope}),
            &jsonwebtoken::EncodingKey::from_secret(b"shared-secret"),
        )
        .expect("sign")
    }

    #[tokio::test]
    async fn oauth_refusals_carry_the_challenge_the_mcp_authorization_spec_asks_for() {
        let guard = oauth_guard();
        let host = ("host", "localhost");
        let refusal = |pairs: Vec<(&str, String)>| {
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let headers = headers(&pairs);
            let guard = &guard;
            async move {
                let response = guard
                    .authenticate(&headers, &peer())
                    .await
                    .err()
                    .expect("refused")
                    .into_response();
                let challenge = response.headers()[header::WWW_AUTHENTICATE]
                    .to_str()
                    .expect("ascii")
                    .to_string();
                (response.status(), challenge)
            }
        };
        let metadata = r#"resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
        let (status, challenge) = refusal(vec![(host.0, host.1.into())]).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge,
            format!(r#"Bearer {metadata}, scope="mcp:tools""#)
        );

        let bad = refusal(vec![("authorization", "Bearer not-a-jwt".into())]).await;
        assert_eq!(bad.0, StatusCode::UNAUTHORIZED);
        assert!(
            bad.1.contains(metadata) && bad.1.contains(r#"error="invalid_token""#),
            "{}",
            bad.1
        );

        let narrow = refusal(vec![(
            "authorization",
            format!("Bearer {}", hs256("pets:read")),
        )])
        .await;
        assert_eq!(narrow.0, StatusCode::FORBIDDEN);
        assert!(
            narrow.1.contains(r#"error="insufficient_scope""#)
                && narrow.1.contains(r#"scope="mcp:tools""#),
            "{}",
            narrow.1
        );

        let token = hs256("mcp:tools pets:read");
        let client = guard
            .authenticate(
                &headers(&[("authorization", &format!("Bearer {token}"))]),
                &peer(),
            )
            .await
            .expect("accepted")
            .expect("a client");
        let caller = client.caller.expect("an OAuth caller");
        assert_eq!(caller.subject(), "alice");
        assert_eq!(client.principal.as_str(), caller.pseudonym());
        assert_eq!(
            caller.pseudonym(),
            Pseudonyms::new(KEY).of_subject("https://as.example", "alice")
        );

        // Machine clients keep their static tokens beside OAuth.
        let machine = guard
            .authenticate(
                &headers(&[("authorization", "Bearer machine-token")]),
                &peer(),
            )
            .await
            .expect("accepted")
            .expect("a client");
        assert_eq!(
            machine.principal.as_str(),
            Pseudonyms::new(KEY).of_token("machine-token")
        );
        assert!(machine.caller.is_none());
        // The token never appears in what the client is told.
        let text = format!(
            "{:?}",
            refusal(vec![("authorization", format!("Bearer {token}x"))]).await
        );
        assert!(!text.contains(&token), "{text}");
    }
}
