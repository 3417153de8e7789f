//! MCP over Streamable HTTP on axum, at `/mcp`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{McpServer, Shared};
use crate::config::ServerSettings;

/// The router: `/mcp` (Streamable HTTP), `/sse` + `/message` (legacy HTTP+SSE, unless
/// switched off) and `/healthz`.
pub fn app(shared: Arc<Shared>, settings: &ServerSettings, shutdown: CancellationToken) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(settings.sessions)
        .with_json_response(settings.json_response)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(settings.max_request_bytes)
        .with_cancellation_token(shutdown);
    config = if settings.allowed_hosts.is_empty() {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(settings.allowed_hosts.clone())
    };
    if !settings.allowed_origins.is_empty() {
        config = config
            .with_allowed_origins(settings.allowed_origins.clone())
            .enforce_origin_validation();
    }
    let shared_for_sse = shared.clone();
    let service = StreamableHttpService::new(
        move || Ok(McpServer::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = Router::new()
        .route_service("/mcp", super::front::Front::new(service, settings))
        .route("/healthz", axum::routing::get(|| async { "ok" }));
    if settings.legacy_sse {
        router.merge(super::sse::routes(shared_for_sse, settings))
    } else {
        router
    }
}

/// Serves `app` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}
