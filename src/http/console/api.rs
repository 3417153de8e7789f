//! The console's JSON API (`/console/api/*`), read by its page: the overview of the APIs,
//! the tools (searched, and one as a client sees it), a call tried, the counters and the
//! calls as they happen. Each answer is made from the snapshot being served when it is
//! asked, so a reload shows at the next request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::health::Readiness;
use crate::catalog::{Catalog, Tool};
use crate::mcp::ServerState;
use crate::mcp::admission::{Admission, ClientId};
use crate::mcp::console::{self as inspect, TryCall};
use crate::telemetry::metrics::BUCKETS;
use crate::upstream::Severity;
use rmcp::model::ProtocolVersion;

/// Tools one search answers at most.
const MAX_TOOLS: usize = 1000;

/// The revision a tool is shown in when the page names none.
const DEFAULT_REVISION: &str = "2025-11-25";

/// Between keep-alive comments on the call feed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What the console's handlers share.
#[derive(Clone)]
pub struct Console {
    shared: Arc<ServerState>,
    readiness: Arc<Readiness>,
    auth: &'static str,
    /// `server.console_arguments`: the call feed carries argument values.
    show_arguments: bool,
    /// `server.max_request_bytes`: the largest call the page may send.
    max_body: usize,
    /// Requests in flight per client: a tried call takes a ticket like a `tools/call`
    /// (`server.max_in_flight_per_client`), and graceful shutdown waits for it.
    admission: Arc<Admission>,
    /// Cancelled at shutdown: ends the call feeds.
    stop: tokio_util::sync::CancellationToken,
    /// What each API's `tools/list` costs per mode, worked out once per catalog (for
    /// GitHub's it takes a tenth of a second), with the catalog it was made for (held
    /// weakly: a reloaded catalog is not kept alive, and its address is not reused while
    /// this points at it).
    budgets: Arc<Mutex<Option<CachedBudgets>>>,
}

/// Tokens of `tools/list` per API in `all`, `search` and `meta` modes.
type Budgets = Arc<BTreeMap<String, [usize; 3]>>;

/// [`Budgets`] and the catalog they were worked out for.
type CachedBudgets = (Weak<Catalog>, Budgets);

impl Console {
    pub fn new(
        shared: Arc<ServerState>,
        readiness: Arc<Readiness>,
        (auth, max_body, show_arguments): (&'static str, usize, bool),
        (admission, stop): (Arc<Admission>, tokio_util::sync::CancellationToken),
    ) -> Self {
        Console {
            shared,
            readiness,
            auth,
            max_body,
            show_arguments,
            admission,
            stop,
            budgets: Arc::default(),
        }
    }

    /// Tokens of `tools/list` per API in `all`, `search` and `meta` modes.
    fn budgets(&self, catalog: &Arc<Catalog>) -> Budgets {
        let mut cached = self.budgets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((made_for, budgets)) = cached.as_ref()
            && std::ptr::eq(made_for.as_ptr(), Arc::as_ptr(catalog))
        {
            return budgets.clone();
        }
        let tokens = |bytes: usize| bytes.div_ceil(crate::catalog::BYTES_PER_TOKEN);
        let budgets: BTreeMap<String, [usize; 3]> = api_names(catalog)
            .into_iter()
            .map(|api| {
                let budget = crate::discovery::budget(catalog, &api);
                let costs = [
                    tokens(budget.all_bytes),
                    tokens(budget.search_bytes),
                    tokens(budget.meta_bytes),
                ];
                (api, costs)
            })
            .collect();
        let budgets = Arc::new(budgets);
        *cached = Some((Arc::downgrade(catalog), budgets.clone()));
        budgets
    }
}

/// An error answer: `{"error": text}` with `status`.
pub fn refusal(status: StatusCode, text: &str) -> Response {
    (status, Json(json!({ "error": text }))).into_response()
}

/// The APIs of `catalog`, in the order they were configured.
fn api_names(catalog: &Catalog) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for tool in catalog.tools() {
        if names.last() != Some(&tool.route.api) && !names.contains(&tool.route.api) {
            names.push(tool.route.api.clone());
        }
    }
    names
}

/// `GET /console/api/overview`: the APIs, readiness and the last reload.
pub async fn overview(State(console): State<Console>) -> Json<Value> {
    let snapshot = console.shared.current();
    let catalog = snapshot.catalog();
    let budgets = console.budgets(catalog);
    let stats = console.shared.metrics().tool_stats();
    let apis: Vec<Value> = api_names(catalog)
        .iter()
        .map(|api| {
            let tools: Vec<&Tool> = catalog
                .tools()
                .iter()
                .filter(|t| &t.route.api == api)
                .collect();
            let listing = catalog.listing(api);
            let calls: u64 = stats
                .iter()
                .filter(|(_, s)| &s.api == api)
                .map(|(_, s)| s.calls)
                .sum();
            let [all, search, meta] = budgets.get(api).copied().unwrap_or_default();
            // A `[workflows]` table's tools: one API name, the Arazzo file as its title.
            let workflows = tools
                .iter()
                .find_map(|t| t.workflow.as_ref())
                .map(|plan| format!("Arazzo workflows ({})", plan.program.file));
            json!({
                "name": api,
                "title": listing.map(|l| l.title.clone()).or(workflows),
                "tools": tools.len(),
                "listed": tools.iter().filter(|t| catalog.is_listed(t)).count(),
                "discovery": listing.map(|l| l.discovery.as_str()),
                "discovery_reason": listing.map(|l| match &l.chosen {
                    Some(choice) => format!("auto: {}", choice.reason()),
                    None => "configured".to_string(),
                }),
                "tokens": {"all": all, "search": search, "meta": meta},
                "base_url": tools.iter().find_map(|t| t.route.base_url.as_ref().map(|b| b.to_string())),
                "mock": tools.iter().any(|t| t.route.mock.is_some()),
                "calls": calls,
            })
        })
        .collect();
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "ready": console.readiness.is_loaded(),
        "tools": catalog.len(),
        "auth": console.auth,
        "show_arguments": console.show_arguments,
        "reload": console.shared.metrics().last_reload(),
        "apis": apis,
    }))
}

#[derive(Deserialize)]
pub struct ToolQuery {
    #[serde(default)]
    q: String,
    api: Option<String>,
    limit: Option<usize>,
}

/// `GET /console/api/tools?q=&api=&limit=`: the tools whose name, title, description,
/// method or path hold every word of `q`.
pub async fn tools(State(console): State<Console>, Query(query): Query<ToolQuery>) -> Json<Value> {
    let snapshot = console.shared.current();
    let catalog = snapshot.catalog();
    let words: Vec<String> = query.q.split_whitespace().map(str::to_lowercase).collect();
    let api = query.api.filter(|api| !api.is_empty());
    let matching: Vec<&Tool> = catalog
        .tools()
        .iter()
        .filter(|tool| api.as_ref().is_none_or(|api| &tool.route.api == api))
        .filter(|tool| words.is_empty() || matches(tool, &words))
        .collect();
    let limit = query.limit.unwrap_or(200).min(MAX_TOOLS);
    let tools: Vec<Value> = matching
        .iter()
        .take(limit)
        .map(|tool| summary(catalog, tool))
        .collect();
    Json(json!({ "total": matching.len(), "tools": tools }))
}

/// Whether every one of `words` (lowercase) is in `tool`'s name, title, description,
/// method or path.
fn matches(tool: &Tool, words: &[String]) -> bool {
    let text = format!(
        "{} {} {} {} {}",
        tool.name,
        tool.title.as_deref().unwrap_or_default(),
        tool.description,
        tool.route.method.as_str(),
        tool.route.path
    )
    .to_lowercase();
    words.iter().all(|word| text.contains(word.as_str()))
}

/// One line of the tool list.
fn summary(catalog: &Catalog, tool: &Tool) -> Value {
    let tokens = crate::json::compact_len(&tool.mcp()).div_ceil(crate::catalog::BYTES_PER_TOKEN);
    json!({
        "name": tool.name,
        "api": tool.route.api,
        "title": tool.title,
        "summary": tool.description.lines().next().unwrap_or_default(),
        "method": tool.route.method.as_str(),
        "path": tool.route.path,
        "listed": catalog.is_listed(tool),
        "read_only": tool.annotations.read_only_hint,
        "destructive": tool.annotations.destructive_hint,
        "confirm": tool.route.needs_confirmation(),
        "tokens": tokens,
    })
}

/// `GET /console/api/surface`: the resources, templates and prompts served, each with
/// where it was written, the tool it runs and where its completions come from (what
/// `restmcp check` prints).
pub async fn surface(State(console): State<Console>) -> Json<Value> {
    let snapshot = console.shared.current();
    let surface = crate::catalog::surface::surface(snapshot.catalog());
    Json(serde_json::to_value(surface).unwrap_or_default())
}

#[derive(Deserialize)]
pub struct ToolView {
    revision: Option<String>,
    client: Option<String>,
}

/// `GET /console/api/tools/{name}?revision=&client=`: one tool as that client receives
/// it, with its route, policies, scopes, provenance and the `explain` text.
pub async fn tool(
    State(console): State<Console>,
    Path(name): Path<String>,
    Query(view): Query<ToolView>,
) -> Response {
    let revision = view.revision.as_deref().unwrap_or(DEFAULT_REVISION);
    let Some(version) = inspect::revision(revision) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            &format!(
                "unknown protocol revision {revision:?} (one of {})",
                crate::mcp::LISTING_REVISIONS.join(", ")
            ),
        );
    };
    let client = view.client.as_deref().filter(|c| !c.is_empty());
    let snapshot = console.shared.current();
    let catalog = snapshot.catalog();
    let (Some(tool), Some(definition)) = (
        catalog.get(&name),
        console.shared.definition(&name, client, &version),
    ) else {
        let hint = catalog.closest_hint(&name);
        return refusal(
            StatusCode::NOT_FOUND,
            &format!("no tool named \"{name}\"{hint}"),
        );
    };
    let scopes = catalog.required_scopes(tool);
    let text = crate::catalog::explain::render(
        tool,
        snapshot.api_config(&tool.route.api),
        &scopes,
        catalog.listing(&tool.route.api),
    );
    Json(json!({
        "name": tool.name,
        "api": tool.route.api,
        "revision": revision,
        "client": client,
        "dialect": definition.dialect,
        "listed": definition.listed,
        "definition": definition.tool,
        "route": {
            "method": tool.route.method.as_str(),
            "path": tool.route.path,
            "base_url": tool.route.base_url.as_ref().map(|b| b.to_string()),
        },
        "confirm": tool.route.needs_confirmation(),
        "idempotency": tool.route.idempotency,
        "scopes": scopes,
        "provenance": crate::catalog::explain::provenance(tool),
        "explain": text,
    }))
    .into_response()
}

#[derive(Deserialize)]
pub struct CallBody {
    name: String,
    #[serde(default)]
    arguments: serde_json::Map<String, Value>,
    revision: Option<String>,
    client: Option<String>,
    state: Option<String>,
    answer: Option<String>,
}

/// `POST /console/api/call`: a call tried from the page, through the call pipeline.
pub async fn call(State(console): State<Console>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let Some(_ticket) = console.admission.admit(client_of(&parts)) else {
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests in flight for this client (server.max_in_flight_per_client)",
        );
    };
    let body = match axum::body::to_bytes(body, console.max_body).await {
        Ok(bytes) => bytes,
        Err(_) => return refusal(StatusCode::PAYLOAD_TOO_LARGE, "the call is too large"),
    };
    let (body, version) = match read_call(&body) {
        Ok(read) => read,
        Err(refused) => return *refused,
    };
    let snapshot = console.shared.current();
    if snapshot.catalog().get(&body.name).is_none() {
        let hint = snapshot.catalog().closest_hint(&body.name);
        return refusal(
            StatusCode::NOT_FOUND,
            &format!("no tool named \"{}\"{hint}", body.name),
        );
    }
    let mut incoming = snapshot.context_of(&parts.headers);
    incoming.caller = parts
        .extensions
        .get::<Arc<crate::identity::Caller>>()
        .cloned();
    incoming.principal = parts
        .extensions
        .get::<crate::identity::Principal>()
        .cloned();
    let tried = TryCall {
        name: &body.name,
        arguments: body.arguments,
        client: body.client.as_deref().filter(|c| !c.is_empty()),
        version,
        answer: body.state.zip(body.answer),
    };
    match console.shared.try_call(tried, incoming).await {
        Ok(tried) => Json(answer(tried, &|text| snapshot.redact(text))).into_response(),
        Err(error) => refusal(StatusCode::UNPROCESSABLE_ENTITY, &error),
    }
}

/// Who a request is from, for the requests it may have in flight: the guard's caller,
/// else its address.
fn client_of(parts: &axum::http::request::Parts) -> ClientId {
    if let Some(client) = parts.extensions.get::<ClientId>() {
        return client.clone();
    }
    parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(
            || ClientId("unknown".into()),
            |peer| ClientId::of_address(peer.0.ip()),
        )
}

/// The call's body and the protocol revision it names, or the refusal.
fn read_call(bytes: &[u8]) -> Result<(CallBody, ProtocolVersion), Box<Response>> {
    let body: CallBody = serde_json::from_slice(bytes).map_err(|error| {
        Box::new(refusal(
            StatusCode::BAD_REQUEST,
            &format!("the call is not {{\"name\", \"arguments\", …}}: {error}"),
        ))
    })?;
    let revision = body.revision.as_deref().unwrap_or(DEFAULT_REVISION);
    let Some(version) = inspect::revision(revision) else {
        return Err(Box::new(refusal(
            StatusCode::BAD_REQUEST,
            &format!("unknown protocol revision {revision:?}"),
        )));
    };
    Ok((body, version))
}

/// What the page is told of a tried call; the request sent passes `redact`.
fn answer(tried: inspect::Tried, redact: &dyn Fn(&str) -> String) -> Value {
    let request = tried.sent.map(|sent| {
        let sent = sent.redacted(redact);
        json!({
            "method": sent.method,
            "url": sent.url,
            "headers": sent.headers,
            "body": sent.body.map(|(body, length)| {
                let mut text = String::from_utf8_lossy(&body).into_owned();
                if length > body.len() {
                    text.push_str(&format!("… ({length} bytes in all)"));
                }
                text
            }),
            "on_the_wire": sent.on_the_wire,
        })
    });
    let millis = crate::telemetry::clock::millis;
    let answered = tried.answered;
    json!({
        "ask": tried.ask.map(|(message, state)| json!({"message": message, "state": state})),
        "result": tried.result,
        "request": request,
        "log": tried.log.iter().map(|(level, text)| json!({
            "level": severity(*level),
            "text": text,
        })).collect::<Vec<_>>(),
        "status": answered.and_then(|a| a.status),
        "attempts": answered.map(|a| a.attempts),
        "duration_ms": millis(tried.duration),
        "upstream_ms": answered.and_then(|a| a.upstream).map(millis),
    })
}

fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Debug => "debug",
        Severity::Info => "info",
        Severity::Notice => "notice",
        Severity::Warning => "warning",
    }
}

/// `GET /console/api/stats`: the per-tool counters the charts are drawn from.
pub async fn stats(State(console): State<Console>) -> Json<Value> {
    let metrics = console.shared.metrics();
    // Watching the stats counts as watching: durations are observed from now on.
    metrics.feed().mark_watched();
    let at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64);
    Json(json!({
        "at_ms": at_ms,
        "in_flight": metrics.calls_in_flight(),
        "buckets": BUCKETS,
        "tools": metrics.tool_stats(),
    }))
}

/// `GET /console/api/calls`: the recent calls (after the one `Last-Event-ID` names, when
/// a page reconnects), then each new one, as server-sent events.
pub async fn calls(State(console): State<Console>, headers: axum::http::HeaderMap) -> Response {
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let Some(watch) = console.shared.metrics().feed().watch(after) else {
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "too many console pages are watching the calls; close one",
        );
    };
    let crate::telemetry::feed::Watch {
        recent,
        events,
        guard,
    } = watch;
    let first: String = recent.iter().map(frame).collect();
    let state = (Some(first), events, guard, console.stop.clone());
    let stream =
        futures_util::stream::unfold(state, |(first, mut events, guard, stop)| async move {
            if let Some(first) = first {
                return Some((Ok::<_, std::io::Error>(first), (None, events, guard, stop)));
            }
            let next = tokio::select! {
                _ = stop.cancelled() => return None,
                next = tokio::time::timeout(KEEP_ALIVE, events.recv()) => next,
            };
            let next = match next {
                Ok(Ok(event)) => frame(&event),
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(missed))) => {
                    format!("event: missed\ndata: {missed}\n\n")
                }
                Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return None,
                Err(_) => ": keep-alive\n\n".to_string(),
            };
            Some((Ok(next), (None, events, guard, stop)))
        });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// One call as a server-sent event.
fn frame((number, text): &crate::telemetry::feed::Event) -> String {
    format!("id: {number}\nevent: call\ndata: {text}\n\n")
}
