//! `/healthz` and `/readyz`: cheap answers from state kept up to date elsewhere, so a
//! probe is never blocked by tool calls.
//!
//! - `/healthz`: the process is alive and serving HTTP (200 as soon as it listens).
//! - `/readyz`: 200 once the tool set is loaded, unless the server is draining for
//!   shutdown or, with `server.readiness.probe_upstreams`, an upstream API did not answer
//!   its last probe; else 503. The body says why, in JSON; each API's probe (its upstream
//!   URL, status or error) only to a prober on this machine or one that presents the
//!   metrics token or an accepted static token: upstream addresses and error texts are
//!   for the operator, not for whoever reaches the port.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ReadinessSettings};
use crate::mcp::ServerState;

/// What `/readyz` reports.
#[derive(Default)]
pub struct Readiness {
    loaded: AtomicBool,
    draining: AtomicBool,
    /// Only with `probe_upstreams`: the last probe of each API.
    probes: RwLock<BTreeMap<String, Probe>>,
    probing: AtomicBool,
}

/// One API's last probe.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub url: String,
    pub reachable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Seconds since the Unix epoch.
    pub checked_at: u64,
}

impl Readiness {
    pub fn new() -> Arc<Readiness> {
        Arc::new(Readiness::default())
    }

    /// The tool set is in place: MCP requests are served from now on.
    pub fn set_loaded(&self) {
        self.loaded.store(true, Ordering::Release);
    }

    pub fn is_loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// Shutdown has begun: report not ready so the balancer stops sending traffic.
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    fn record(&self, api: &str, probe: Probe) {
        self.probes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(api.to_string(), probe);
    }

    /// Status and JSON body of `/readyz`; `detail`: with each API's probe.
    fn report(&self, tools: usize, detail: bool) -> (StatusCode, serde_json::Value) {
        let probes = self
            .probes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let probing = self.probing.load(Ordering::Acquire);
        let status = if self.draining.load(Ordering::Acquire) {
            "draining"
        } else if !self.is_loaded() {
            "loading"
        } else if probing && probes.values().any(|p| !p.reachable) {
            "upstream unreachable"
        } else if probing && probes.is_empty() {
            // The first round of probes has not finished yet.
            "probing"
        } else {
            "ready"
        };
        let mut body = json!({ "status": status, "tools": tools });
        if probing && detail {
            body["apis"] = json!(probes);
        } else if probing {
            let unreachable = probes.values().filter(|p| !p.reachable).count();
            body["unreachable_apis"] = json!(unreachable);
        }
        let code = if status == "ready" {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        (code, body)
    }
}

/// `GET /healthz`.
pub async fn live() -> &'static str {
    "ok"
}

#[derive(Clone)]
pub struct ReadyState {
    pub readiness: Arc<Readiness>,
    pub shared: Arc<ServerState>,
    /// Whether a request (its headers, its peer's address) may see each API's probe.
    pub may_observe: Arc<MayObserve>,
}

/// See [`ReadyState::may_observe`].
pub type MayObserve =
    dyn Fn(&axum::http::HeaderMap, Option<std::net::IpAddr>) -> bool + Send + Sync;

/// `GET /readyz`.
pub async fn ready(State(state): State<ReadyState>, request: axum::extract::Request) -> Response {
    let tools = state.shared.current().catalog().len();
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    let detail = (state.may_observe)(request.headers(), peer);
    let (code, body) = state.readiness.report(tools, detail);
    (code, Json(body)).into_response()
}

/// Probes every API that is not mocked, every `interval_seconds`, until `stop`: a GET of
/// the base URL plus `probe_path`, reachable when it answers below 500. The APIs and their
/// base URLs are read from the tool set in service at each round, so reloads are followed.
pub fn spawn_probes(
    readiness: Arc<Readiness>,
    shared: Arc<ServerState>,
    config: &Config,
    stop: CancellationToken,
) {
    let settings: ReadinessSettings = config.server.readiness.clone();
    if !settings.probe_upstreams {
        return;
    }
    readiness.probing.store(true, Ordering::Release);
    let paths: HashMap<String, String> = config
        .apis
        .iter()
        .filter_map(|(name, api)| Some((name.clone(), api.probe_path.clone()?)))
        .collect();
    let timeout = Duration::from_secs_f64(settings.timeout_seconds);
    let interval = Duration::from_secs_f64(settings.interval_seconds);
    tokio::spawn(async move {
        crate::http_client::install_crypto_provider();
        let client = match reqwest::Client::builder()
            .user_agent(crate::http_client::USER_AGENT)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
        {
            Ok(client) => client,
            Err(e) => {
                tracing::error!("upstream probes are off: cannot build an HTTP client: {e}");
                return;
            }
        };
        loop {
            let targets = probe_targets(&shared, &paths);
            let mut round = tokio::task::JoinSet::new();
            for (api, url) in targets {
                let client = client.clone();
                round.spawn(async move {
                    let answer = client.get(&url).send().await;
                    (api, url, answer)
                });
            }
            while let Some(Ok((api, url, answer))) = round.join_next().await {
                let checked_at = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or_default();
                let probe = match answer {
                    Ok(response) => Probe {
                        url,
                        reachable: response.status().as_u16() < 500,
                        status: Some(response.status().as_u16()),
                        error: None,
                        checked_at,
                    },
                    Err(e) => Probe {
                        url,
                        reachable: false,
                        status: None,
                        error: Some(crate::http_client::describe_error(&e)),
                        checked_at,
                    },
                };
                if !probe.reachable {
                    tracing::warn!(api = %api, url = %probe.url, status = probe.status, error = probe.error.as_deref(), "upstream probe failed");
                }
                readiness.record(&api, probe);
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    });
}

/// (API, URL) for each API with a tool that calls a real upstream.
fn probe_targets(shared: &ServerState, paths: &HashMap<String, String>) -> Vec<(String, String)> {
    let snapshot = shared.current();
    let mut targets: BTreeMap<String, String> = BTreeMap::new();
    for tool in snapshot.catalog().tools() {
        let route = &tool.route;
        if route.mock.is_some() || targets.contains_key(&route.api) {
            continue;
        }
        let Some(base) = &route.base_url else {
            continue;
        };
        let url = match paths.get(&route.api) {
            Some(path) => format!("{}{path}", base.trim_end_matches('/')),
            None => base.to_string(),
        };
        targets.insert(route.api.clone(), url);
    }
    targets.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_ready_while_loading_or_draining() {
        let readiness = Readiness::new();
        let (code, body) = readiness.report(0, true);
        assert_eq!(
            (code, body["status"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("loading"))
        );
        readiness.set_loaded();
        let (code, body) = readiness.report(19, true);
        assert_eq!(
            (code, body["status"].as_str()),
            (StatusCode::OK, Some("ready"))
        );
        assert_eq!(body["tools"], 19);
        readiness.set_draining();
        let (code, body) = readiness.report(19, true);
        assert_eq!(
            (code, body["status"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("draining"))
        );
    }

    #[test]
    fn with_probes_ready_only_when_every_upstream_answered() {
        let readiness = Readiness::new();
        readiness.set_loaded();
        readiness.probing.store(true, Ordering::Release);
        assert_eq!(readiness.report(1, true).1["status"], "probing");
        let probe = |reachable| Probe {
            url: "http://127.0.0.1:1/".into(),
            reachable,
            status: None,
            error: None,
            checked_at: 0,
        };
        readiness.record("a", probe(true));
        assert_eq!(readiness.report(1, true).0, StatusCode::OK);
        readiness.record("b", probe(false));
        assert_eq!(
            readiness.report(1, true).1["status"],
            "upstream unreachable"
        );
        // Who may not see the probes learns only how many failed: no URL, no error.
        let (code, body) = readiness.report(1, false);
        assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["unreachable_apis"], 1, "{body}");
        assert!(body.get("apis").is_none() && !body.to_string().contains("127.0.0.1:1"));
        readiness.record("b", probe(true));
        assert_eq!(readiness.report(1, true).0, StatusCode::OK);
    }
}
