//! The HTTP face of `restmcp serve`: the MCP routes of [`crate::mcp::streamable`] behind the
//! checks an exposed sidecar endpoint needs ([`guard`]: readiness, Host and Origin,
//! authentication; CORS only when configured), beside `/healthz`, `/readyz` ([`health`]),
//! `/metrics`, the operators' [`console`] (by default on a loopback listener only) and,
//! with `[server.oauth]`, the Protected Resource Metadata of the OAuth resource server
//! ([`oauth`]); and [`serve`], which runs it with graceful shutdown.
//! [`listener`] accepts connections within their caps and timeouts (plain or through
//! [`tls`]) and hands each request to the [`App`]: `/mcp` straight to the guard and the
//! MCP front when no CORS is configured, everything else through the router; what the app
//! left unread of a request body is settled by [`unread`], so that an early refusal does
//! not close a connection its client believes open.
//!
//! Shutdown happens in three steps: stop accepting connections and report not ready; wait
//! until no MCP request is in flight (at most `shutdown_grace_seconds`); then end every
//! session and stream, and return once the connections are closed.

mod app;
pub mod console;
pub mod guard;
pub mod health;
pub mod listener;
pub mod oauth;
pub mod tls;
mod unread;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, Method, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use crate::config::ServerSettings;
use crate::identity::{MIN_KEY_BYTES, Pseudonyms};
use crate::mcp::ServerState;
use crate::mcp::admission::Admission;
use guard::{Guard, Tokens};
use health::{Readiness, ReadyState};
use oauth::ResourceServer;

pub use app::App;

/// The endpoint cannot be set up as configured.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Auth(#[from] guard::AuthError),
    #[error(transparent)]
    OAuth(#[from] oauth::OAuthError),
    #[error("server.tls: {0}")]
    Tls(#[from] tls::TlsError),
    #[error("server.identity_key_env: {0}")]
    IdentityKey(String),
    #[error("server.metrics_token_env: the environment variable {0} is not set or empty")]
    MetricsToken(String),
}

/// State that outlives one router: readiness, requests in flight, the final stop.
pub struct Control {
    pub readiness: Arc<Readiness>,
    pub admission: Arc<Admission>,
    /// The bounds on connections: cap, header and idle timeouts.
    pub connections: Arc<listener::Connections>,
    /// Cancelled as the last step of a shutdown: ends every session and stream.
    pub stop: CancellationToken,
    tokens: Option<Arc<Tokens>>,
    /// The OAuth resource server, with `[server.oauth]`.
    pub oauth: Option<Arc<ResourceServer>>,
    /// The token `/metrics` takes (`server.metrics_token_env`).
    metrics_token: Option<crate::secret::Secret>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    grace: Duration,
}

impl Control {
    /// Reads the inbound tokens `settings` names from the environment (and file), the key
    /// callers are named under, and the TLS certificate and key.
    pub fn new(settings: &ServerSettings) -> Result<Control, HttpError> {
        let env = |name: &str| std::env::var(name).ok();
        let tls = match &settings.tls {
            Some(files) => Some(tls::acceptor(files)?),
            None => None,
        };
        let pseudonyms = Arc::new(pseudonyms(settings, env)?);
        let tokens = match &settings.auth {
            Some(auth) => Some(Arc::new(Tokens::load(auth, env, pseudonyms.clone())?)),
            None => None,
        };
        let oauth = match &settings.oauth {
            Some(oauth) => Some(Arc::new(ResourceServer::new(oauth, env, pseudonyms)?)),
            None => None,
        };
        let metrics_token = match &settings.metrics_token_env {
            Some(name) => match env(name).filter(|token| !token.trim().is_empty()) {
                Some(token) => Some(crate::secret::Secret::new(token.trim())),
                None => return Err(HttpError::MetricsToken(name.clone())),
            },
            None => None,
        };
        Ok(Control {
            readiness: Readiness::new(),
            admission: Admission::new(settings.max_in_flight_per_client),
            connections: listener::Connections::new(settings),
            stop: CancellationToken::new(),
            tokens,
            oauth,
            metrics_token,
            tls,
            grace: Duration::from_secs(settings.shutdown_grace_seconds),
        })
    }

    /// `https` with TLS, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }
}

/// The key callers are named under ([`Pseudonyms`]): `server.identity_key_env`, else one
/// derived from `server.confirm.state_key_env` (replicas share that one already), else one
/// made at random now.
fn pseudonyms(
    settings: &ServerSettings,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Pseudonyms, HttpError> {
    if let Some(name) = &settings.identity_key_env {
        let Some(key) = env(name).filter(|key| !key.is_empty()) else {
            return Err(HttpError::IdentityKey(format!(
                "the environment variable {name} is not set"
            )));
        };
        if key.len() < MIN_KEY_BYTES {
            return Err(HttpError::IdentityKey(format!(
                "the environment variable {name} holds {} bytes; the key needs at least {MIN_KEY_BYTES}",
                key.len()
            )));
        }
        return Ok(Pseudonyms::new(key.as_bytes()));
    }
    if let Some(key) = settings
        .confirm
        .state_key_env
        .as_deref()
        .and_then(&env)
        .filter(|key| key.len() >= MIN_KEY_BYTES)
    {
        return Ok(Pseudonyms::derived(
            key.as_bytes(),
            "restmcp caller pseudonyms",
        ));
    }
    if settings.store.url.is_some() {
        tracing::warn!(
            "callers are named under a key made at random at start (server.identity_key_env and \
             server.confirm.state_key_env are unset): replicas sharing the store name the same \
             caller differently, so idempotency keys of authenticated callers are not shared"
        );
    }
    Ok(Pseudonyms::random())
}

/// The whole router: MCP routes behind the guard, health and metrics beside them.
pub fn app(shared: Arc<ServerState>, settings: &ServerSettings, control: &Control) -> App {
    let metrics = shared.metrics().clone();
    control.connections.count_in(metrics.clone());
    let endpoint = crate::mcp::streamable::endpoint(
        shared.clone(),
        settings,
        control.admission.clone(),
        control.stop.clone(),
    );
    let guard = Arc::new(Guard::with_metrics_token(
        settings,
        control.tokens.clone(),
        control.oauth.clone(),
        control.readiness.clone(),
        metrics.clone(),
        control.metrics_token.clone(),
    ));
    let front = endpoint.front.clone();
    let mut mcp = endpoint
        .router
        .clone()
        .layer(axum::middleware::from_fn_with_state(
            guard.clone(),
            guard::mcp,
        ));
    if !settings.cors_origins.is_empty() {
        // Outermost, so a preflight (which carries no credentials) is answered before the
        // token check.
        mcp = mcp.layer(cors(&settings.cors_origins));
    }
    let mut router = Router::new().merge(mcp);
    if let Some(oauth) = &control.oauth {
        // Open to all (clients read it before they have a token), CORS like the MCP routes;
        // made per request, as a reload may change the scopes the tools ask for.
        let mut metadata = Router::new();
        for path in oauth.metadata_paths() {
            let (oauth, shared) = (oauth.clone(), shared.clone());
            metadata = metadata.route(
                &path,
                get(move || {
                    let document = oauth.metadata_document(&shared.tool_scopes());
                    async move { axum::Json(document) }
                }),
            );
        }
        if !settings.cors_origins.is_empty() {
            metadata = metadata.layer(cors(&settings.cors_origins));
        }
        router = router.merge(metadata);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let warm = oauth.clone();
            runtime.spawn(async move { warm.warm().await });
        }
    }
    if settings.console_enabled() {
        metrics.feed().show_arguments(settings.console_arguments);
        let console = console::routes(
            shared.clone(),
            settings,
            (guard.clone(), control.readiness.clone()),
            (control.admission.clone(), control.stop.clone()),
        );
        router = router.merge(console);
    }
    router = router.route("/healthz", get(health::live)).route(
        "/readyz",
        get(health::ready).with_state(ReadyState {
            readiness: control.readiness.clone(),
            shared,
            may_observe: {
                let guard = guard.clone();
                Arc::new(move |headers, peer| guard.may_observe(headers, peer))
            },
        }),
    );
    if settings.metrics {
        let mut route = get(scrape).with_state(Scrape { metrics, endpoint });
        if guard.protects_metrics() {
            route = route.layer(axum::middleware::from_fn_with_state(
                guard.clone(),
                guard::token_only,
            ));
        }
        router = router.route("/metrics", route);
    }
    // Outermost: a request whose host is ambiguous reaches no route.
    let router = router.layer(axum::middleware::from_fn(guard::one_host));
    if settings.cors_origins.is_empty() {
        // The same checks as the router's, in the same order, without routing.
        App::with_mcp(router, guard, front)
    } else {
        App::routed(router)
    }
}

#[derive(Clone)]
struct Scrape {
    metrics: Arc<crate::telemetry::metrics::Metrics>,
    endpoint: crate::mcp::streamable::Endpoint,
}

async fn scrape(State(scrape): State<Scrape>) -> impl IntoResponse {
    let sessions = scrape.endpoint.session_count().await;
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        scrape.metrics.render(Some(sessions)),
    )
}

fn cors(origins: &[String]) -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok()),
        )
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            header::HeaderName::from_static("mcp-session-id"),
            header::HeaderName::from_static("mcp-protocol-version"),
            header::HeaderName::from_static("mcp-method"),
            header::HeaderName::from_static("mcp-name"),
            header::HeaderName::from_static("last-event-id"),
            header::HeaderName::from_static("traceparent"),
            header::HeaderName::from_static("tracestate"),
        ])
        .expose_headers([
            header::HeaderName::from_static("mcp-session-id"),
            header::WWW_AUTHENTICATE,
        ])
        .max_age(Duration::from_secs(600))
}

/// Serves `app` on `listener` until `shutdown` is cancelled, then shuts down gracefully
/// (see the module documentation).
///
/// Connections are served by `threads` threads, each with a single-threaded runtime
/// accepting from the same socket (0: on the calling runtime). A call then runs start to
/// end on one thread: the inbound connection, the upstream connection its request takes
/// from the pool, and the work between. On the work-stealing runtime the same call
/// crosses threads at each wake-up; measured with bench/run.sh, a single-threaded runtime
/// cost 51 µs of CPU per proxied call where the work-stealing one cost 76 µs (see the
/// commit).
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: App,
    control: Arc<Control>,
    shutdown: CancellationToken,
    threads: usize,
) -> std::io::Result<()> {
    let readiness = control.readiness.clone();
    let draining = shutdown.clone();
    tokio::spawn(async move {
        draining.cancelled().await;
        readiness.set_draining();
    });
    let mut servers = Vec::new();
    if threads == 0 {
        let (done, finished) = tokio::sync::oneshot::channel();
        let stop = shutdown.clone();
        let tls = control.tls.clone();
        let connections = control.connections.clone();
        tokio::spawn(async move {
            let _ = done.send(accept(listener, app, tls, connections, stop).await);
        });
        servers.push(finished);
    } else {
        let listener = listener.into_std()?;
        for index in 0..threads {
            let socket = listener.try_clone()?;
            let (done, finished) = tokio::sync::oneshot::channel();
            let (app, tls, stop) = (app.clone(), control.tls.clone(), shutdown.clone());
            let connections = control.connections.clone();
            std::thread::Builder::new()
                .name(format!("restmcp-http-{index}"))
                .spawn(move || {
                    let served = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .and_then(|runtime| {
                            runtime.block_on(async move {
                                let listener = tokio::net::TcpListener::from_std(socket)?;
                                accept(listener, app, tls, connections, stop).await
                            })
                        });
                    let _ = done.send(served);
                })?;
            servers.push(finished);
        }
    }
    shutdown.cancelled().await;
    finish(&control, servers).await
}

/// A timer of this runtime that fires every second, until `stop` is cancelled. Setting a
/// timer earlier than the time driver's next planned wake wakes the I/O driver, a write
/// to its eventfd, even on a thread that is busy polling and so not waiting at all
/// (tokio-rs/tokio#5207). Every call sets one, its upstream time limit (30 s by default):
/// with nothing earlier pending, each call paid that system call and one more round of
/// `epoll_wait`. With this timer pending, the next wake is never more than a second away,
/// and a call's time limit is not earlier.
async fn keep_the_next_wake_near(stop: CancellationToken) {
    let mut every = tokio::time::interval(Duration::from_secs(1));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = every.tick() => {}
        }
    }
}

/// One accept loop: plain HTTP or TLS, until `stop` is cancelled.
async fn accept(
    listener: tokio::net::TcpListener,
    app: App,
    tls: Option<tokio_rustls::TlsAcceptor>,
    connections: Arc<listener::Connections>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    tokio::spawn(keep_the_next_wake_near(stop.clone()));
    let stop_accepting = async move { stop.cancelled().await };
    listener::serve(listener, app, tls, connections, stop_accepting).await
}

/// Steps two and three of a shutdown, once accepting has stopped.
async fn finish(
    control: &Control,
    servers: Vec<tokio::sync::oneshot::Receiver<std::io::Result<()>>>,
) -> std::io::Result<()> {
    let in_flight = control.admission.in_flight();
    if in_flight > 0 {
        tracing::info!(
            "shutting down: waiting up to {} s for {in_flight} request(s) in flight",
            control.grace.as_secs()
        );
    }
    if !control.admission.wait_idle(control.grace).await {
        tracing::warn!(
            "shutting down: {} request(s) still in flight after {} s are abandoned",
            control.admission.in_flight(),
            control.grace.as_secs()
        );
    }
    control.stop.cancel();
    let all = futures_util::future::join_all(servers);
    match tokio::time::timeout(Duration::from_secs(5), all).await {
        Ok(results) => results
            .into_iter()
            .try_for_each(|result| result.unwrap_or_else(|gone| Err(std::io::Error::other(gone)))),
        Err(_) => {
            tracing::warn!("shutting down: connections still open after 5 s are dropped");
            Ok(())
        }
    }
}
