//! MCP over Streamable HTTP on axum, at `/mcp`, and the legacy HTTP+SSE transport.
//!
//! Host, Origin, authentication and CORS are checked in front of these routes by
//! [`crate::http`]; what is here is the protocol.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::admission::Admission;
use super::direct::DirectPath;
pub use super::front::SdkFront;
use super::session::SessionTable;
use super::sizes::Transport;
use super::streams::Streams;
use super::{McpServer, ServerState};
use crate::config::ServerSettings;

/// The MCP routes and the session store behind them (for the session gauge). A clone is
/// cheap: both are shared handles.
#[derive(Clone)]
pub struct Endpoint {
    /// `/mcp` (Streamable HTTP), and `/sse` + `/message` (legacy HTTP+SSE) unless switched off.
    pub router: Router,
    /// The service behind `/mcp` in `router`, for a caller that routes `/mcp` itself.
    pub front: SdkFront,
    sessions: Arc<LocalSessionManager>,
}

impl Endpoint {
    /// Open Streamable HTTP sessions.
    pub async fn session_count(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }
}

/// The MCP routes. `stop` ends every session and stream (the last step of a shutdown);
/// `admission` counts and limits requests in flight.
pub fn endpoint(
    shared: Arc<ServerState>,
    settings: &ServerSettings,
    admission: Arc<Admission>,
    stop: CancellationToken,
) -> Endpoint {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(settings.sessions)
        .with_json_response(settings.json_response)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(settings.max_request_bytes)
        .with_cancellation_token(stop.clone())
        // crate::http checks Host and Origin for every MCP route, this one included.
        .disable_allowed_hosts();
    let shared_for_sse = shared.clone();
    let shared_for_direct = shared.clone();
    let shared_for_front = shared.clone();
    let metrics = shared.metrics().clone();
    let mut manager = LocalSessionManager::default();
    // The session table expires idle sessions, counting the calls answered directly, which
    // rmcp's own idle timer never sees (it would close a session that only calls tools).
    manager.session_config.keep_alive = None;
    let sessions = Arc::new(manager);
    let table = settings.sessions.then(|| {
        let table = SessionTable::new(sessions.clone(), settings, metrics.clone());
        table.spawn_expiry(stop.clone());
        table
    });
    let streams = Streams::new(
        settings.max_sse_streams,
        settings.max_streams_per_client,
        metrics.clone(),
    );
    let service = StreamableHttpService::new(
        move || Ok(McpServer::new(shared.clone(), Transport::StreamableHttp)),
        sessions.clone(),
        config,
    );
    // Plain JSON answers are what the direct path gives; with SSE answers the SDK serves all.
    let direct = settings.json_response.then(|| {
        Arc::new(DirectPath::new(
            shared_for_direct,
            sessions.clone(),
            table.clone(),
        ))
    });
    let front = super::front::SdkFront::new(
        service,
        shared_for_front,
        settings,
        admission.clone(),
        direct,
        table,
        streams.clone(),
    );
    let router = Router::new().route_service("/mcp", front.clone());
    let router = if settings.legacy_sse {
        router.merge(super::sse::routes(
            shared_for_sse,
            settings,
            admission,
            streams,
            stop,
        ))
    } else {
        router
    };
    Endpoint {
        router,
        front,
        sessions,
    }
}
