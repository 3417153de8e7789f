//! The console at `/console`: a page for the people who run restmcp. It shows the APIs
//! (tools, discovery mode and why, what `tools/list` costs per mode, upstream, readiness,
//! the last reload), the tools as a client of a chosen revision and name receives them with
//! where each piece came from (what `restmcp explain` prints), a form that tries a call
//! through the pipeline every `tools/call` takes (confirmation asked in the page; the
//! request sent shown with its secrets redacted), and the calls as they happen with small
//! charts of rate and latency per tool.
//!
//! What it owns: the routes below and their JSON ([`api`]); the page itself is three
//! files embedded in the binary (`assets/`: no build step, nothing fetched from elsewhere).
//! Everything it shows comes from the floors below: the snapshot being served, the metrics
//! and their call feed ([`crate::telemetry::feed`]), [`crate::mcp::console`] for a tool as
//! a client sees it and for tried calls.
//!
//! Security: served only when [`crate::config::ServerSettings::console_enabled`] (by
//! default on a loopback listener only). The page's files hold no data and are open; every
//! `/console/api/*` route is behind the MCP endpoint's own guard (Host, Origin, the inbound
//! tokens or OAuth), refuses requests a browser marks as cross-site, and its POST takes
//! only `application/json`. The page sends its token as a bearer header (kept in the tab's
//! `sessionStorage`), never as a cookie, so another site cannot ride on it. Answers never
//! carry a secret: credentials and forwarded headers are shown by name, URLs and bodies
//! pass the dispatcher's redaction, and the call feed carries no argument values.
//! A page costs nothing while closed: the feed does no work until a page first watches.

pub mod api;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::guard::{self, Guard};
use super::health::Readiness;
use crate::mcp::ServerState;
use crate::mcp::admission::Admission;

/// The page's files, embedded.
const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// What the page may load and do: its own script and style, calls to its own origin, no
/// frames around it.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The console's routes: the page (open) and its API (behind `guard`).
pub fn routes(
    shared: Arc<ServerState>,
    settings: &crate::config::ServerSettings,
    (guard, readiness): (Arc<Guard>, Arc<Readiness>),
    (admission, stop): (Arc<Admission>, tokio_util::sync::CancellationToken),
) -> Router {
    let limits = (
        guard.auth_kind(),
        settings.max_request_bytes,
        settings.console_arguments,
    );
    let state = api::Console::new(shared, readiness, limits, (admission, stop));
    let api = Router::new()
        .route("/console/api/overview", get(api::overview))
        .route("/console/api/tools", get(api::tools))
        .route("/console/api/tools/{name}", get(api::tool))
        .route("/console/api/surface", get(api::surface))
        .route("/console/api/call", post(api::call))
        .route("/console/api/stats", get(api::stats))
        .route("/console/api/calls", get(api::calls))
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(guard, guard::mcp))
        // Outside the guard: a cross-site request is refused before anything else.
        .layer(axum::middleware::from_fn(same_site));
    let page = Router::new()
        .route("/console", get(|| async { asset(INDEX_HTML, "text/html") }))
        .route(
            "/console/",
            get(|| async { asset(INDEX_HTML, "text/html") }),
        )
        .route(
            "/console/app.js",
            get(|| async { asset(APP_JS, "text/javascript") }),
        )
        .route(
            "/console/app.css",
            get(|| async { asset(APP_CSS, "text/css") }),
        );
    page.merge(api)
        .layer(axum::middleware::from_fn(secure_headers))
}

fn asset(body: &'static str, media_type: &'static str) -> Response {
    let content_type = format!("{media_type}; charset=utf-8");
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache".to_string()),
        ],
        body,
    )
        .into_response()
}

/// The headers every console answer carries: the content security policy, no sniffing,
/// no referrer, no framing.
async fn secure_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// Refuses an API request a browser says comes from another site (`Sec-Fetch-Site`), and
/// a POST that is not JSON (a form another page could submit without asking).
async fn same_site(request: Request, next: Next) -> Response {
    let site = request
        .headers()
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok());
    if site.is_some_and(|site| site != "same-origin" && site != "none") {
        return api::refusal(
            StatusCode::FORBIDDEN,
            "the console's API answers its own page only (Sec-Fetch-Site is not same-origin)",
        );
    }
    if request.method() == axum::http::Method::POST {
        let json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(';')
                    .next()
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
            });
        if !json {
            return api::refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the console's API takes application/json",
            );
        }
    }
    next.run(request).await
}
