//! Prometheus metrics, kept in atomics and rendered in the text exposition format
//! (version 0.0.4) when `/metrics` is scraped.
//!
//! Label sets are bounded: tools and APIs come from the catalog, MCP methods from a fixed
//! list (anything else is `other`), protocol versions likewise. Per-tool series exist only
//! for tools that were called. Histograms are per API, not per tool, so a client calling
//! every one of GitHub's 1,223 tools cannot blow up the scrape.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustc_hash::FxHashMap;

use super::feed::CallFeed;
pub use super::feed::CallRecord;

/// How a tool call ended, as counted.
pub const OUTCOMES: [&str; 10] = [
    "ok",
    "tool_error",
    "upstream_4xx",
    "upstream_5xx",
    "timeout",
    "unreachable",
    "rate_limited",
    "cancelled",
    "unconfirmed",
    "replayed",
];

/// JSON-RPC methods counted by name; others are counted as `other`.
const METHODS: [&str; 21] = [
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "subscriptions/listen",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "roots/list",
    "(response)",
];

const VERSIONS: [&str; 6] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    "none",
];

/// Upper bounds of the latency buckets, in seconds.
pub const BUCKETS: [f64; 15] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Callers counted one by one in `restmcp_caller_tool_calls_total`; the calls of
/// callers beyond them count under `caller="other"`, so a scrape stays bounded.
pub const MAX_CALLER_SERIES: usize = 100;

/// Every metric restmcp exports. Cheap to update from many tasks at once.
#[derive(Default)]
pub struct Metrics {
    calls: RwLock<FxHashMap<String, Arc<ToolCounters>>>,
    apis: RwLock<FxHashMap<String, Arc<ApiStats>>>,
    requests: Mutex<FxHashMap<(&'static str, &'static str), u64>>,
    refused: Mutex<BTreeMap<&'static str, u64>>,
    calls_in_flight: AtomicI64,
    open_streams: AtomicI64,
    reloads: AtomicU64,
    reload_failures: AtomicU64,
    tools: AtomicU64,
    /// Calls per caller pseudonym, for the first [`MAX_CALLER_SERIES`] callers.
    callers: Mutex<FxHashMap<String, u64>>,
    other_callers: AtomicU64,
    /// The calls as they happen, for the console.
    feed: CallFeed,
    /// The last reload, for the console.
    last_reload: Mutex<Option<LastReload>>,
}

struct ToolCounters {
    api: String,
    outcomes: [AtomicU64; OUTCOMES.len()],
    /// Call durations, observed only once a console page has watched ([`CallFeed`]): not
    /// scraped (per-API histograms are, see the module documentation), read by the console.
    duration: Histogram,
}

/// How the last reload went.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LastReload {
    /// When it ended (RFC 3339).
    pub at: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Why it failed; `None` when it succeeded.
    pub error: Option<String>,
    /// Tools served after it: the new ones, or the ones kept when it failed.
    pub tools: usize,
}

/// One tool's counters as the console reads them ([`Metrics::tool_stats`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolStats {
    pub api: String,
    /// Calls of every outcome.
    pub calls: u64,
    /// Calls whose outcome was not `ok`.
    pub errors: u64,
    /// Durations per bucket of [`BUCKETS`] (not cumulative), then `+Inf`; observed only
    /// since a console page first watched.
    pub counts: Vec<u64>,
}

#[derive(Default)]
struct ApiStats {
    call: Histogram,
    upstream: Histogram,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
}

#[derive(Default)]
struct Histogram {
    /// Per bucket (not cumulative), plus one for `+Inf`.
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, duration: Duration) {
        let seconds = duration.as_secs_f64();
        let index = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        self.counts[index].fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add(duration.as_micros() as u64, Ordering::Relaxed);
    }
}

/// Decrements a gauge when dropped.
pub struct GaugeGuard {
    metrics: Arc<Metrics>,
    which: Gauge,
}

#[derive(Clone, Copy)]
enum Gauge {
    CallsInFlight,
    OpenStreams,
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.metrics
            .gauge(self.which)
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics::default())
    }

    fn gauge(&self, which: Gauge) -> &AtomicI64 {
        match which {
            Gauge::CallsInFlight => &self.calls_in_flight,
            Gauge::OpenStreams => &self.open_streams,
        }
    }

    fn track(self: &Arc<Self>, which: Gauge) -> GaugeGuard {
        self.gauge(which).fetch_add(1, Ordering::Relaxed);
        GaugeGuard {
            metrics: self.clone(),
            which,
        }
    }

    /// Counts a tool call in flight until the guard is dropped.
    pub fn call_started(self: &Arc<Self>) -> GaugeGuard {
        self.track(Gauge::CallsInFlight)
    }

    /// Counts an open server-to-client stream (SSE) until the guard is dropped.
    pub fn stream_opened(self: &Arc<Self>) -> GaugeGuard {
        self.track(Gauge::OpenStreams)
    }

    pub fn record_call(&self, call: &CallRecord<'_>) {
        let outcome = OUTCOMES
            .iter()
            .position(|o| *o == call.outcome)
            .unwrap_or(1);
        let counters = self.tool_counters(call.api, call.tool);
        counters.outcomes[outcome].fetch_add(1, Ordering::Relaxed);
        if self.feed.is_watched() {
            counters.duration.observe(call.duration);
            self.feed.publish(call);
        }
        let api = self.api_stats(call.api);
        api.call.observe(call.duration);
        if let Some(upstream) = call.upstream {
            api.upstream.observe(upstream);
        }
        api.bytes_sent.fetch_add(call.bytes_sent, Ordering::Relaxed);
        api.bytes_received
            .fetch_add(call.bytes_received, Ordering::Relaxed);
        if let Some(caller) = call.caller {
            let mut callers = lock(&self.callers);
            let room = callers.len() < MAX_CALLER_SERIES;
            match callers.get_mut(caller) {
                Some(count) => *count += 1,
                None if room => {
                    callers.insert(caller.to_string(), 1);
                }
                None => {
                    self.other_callers.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    fn tool_counters(&self, api: &str, tool: &str) -> Arc<ToolCounters> {
        if let Some(found) = read(&self.calls).get(tool).filter(|c| c.api == api) {
            return found.clone();
        }
        let mut calls = write(&self.calls);
        let entry = calls.entry(tool.to_string()).or_insert_with(|| {
            Arc::new(ToolCounters {
                api: api.to_string(),
                outcomes: Default::default(),
                duration: Histogram::default(),
            })
        });
        // A reload may have moved the tool name to another API.
        if entry.api != api {
            *entry = Arc::new(ToolCounters {
                api: api.to_string(),
                outcomes: Default::default(),
                duration: Histogram::default(),
            });
        }
        entry.clone()
    }

    fn api_stats(&self, api: &str) -> Arc<ApiStats> {
        if let Some(found) = read(&self.apis).get(api) {
            return found.clone();
        }
        write(&self.apis)
            .entry(api.to_string())
            .or_default()
            .clone()
    }

    /// Counts one JSON-RPC message received over HTTP.
    pub fn record_request(&self, method: &str, version: Option<&str>) {
        let method = METHODS
            .iter()
            .find(|m| **m == method)
            .copied()
            .unwrap_or("other");
        let version = match version {
            None => "none",
            Some(v) => VERSIONS
                .iter()
                .find(|k| **k == v)
                .copied()
                .unwrap_or("other"),
        };
        *lock(&self.requests).entry((method, version)).or_default() += 1;
    }

    /// Counts an HTTP request refused before it reached MCP (`unauthorized`, `forbidden_host`,
    /// `forbidden_origin`, `too_large`, `malformed`, `too_many_in_flight`, `not_ready`).
    pub fn record_refusal(&self, reason: &'static str) {
        *lock(&self.refused).entry(reason).or_default() += 1;
    }

    /// Counts a reload, and keeps how it went for the console: `error` when it failed,
    /// `tools` served after it.
    pub fn record_reload(&self, error: Option<&str>, tools: usize) {
        let counter = match error {
            None => &self.reloads,
            Some(_) => &self.reload_failures,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(super::clock::rfc3339)
            .unwrap_or_default();
        *lock(&self.last_reload) = Some(LastReload {
            at,
            ok: error.is_none(),
            error: error.map(str::to_string),
            tools,
        });
    }

    /// How the last reload went; `None` before the first.
    pub fn last_reload(&self) -> Option<LastReload> {
        lock(&self.last_reload).clone()
    }

    /// The calls as they happen (the console).
    pub fn feed(&self) -> &CallFeed {
        &self.feed
    }

    /// Every called tool's counters, by tool name (the console's charts).
    pub fn tool_stats(&self) -> BTreeMap<String, ToolStats> {
        read(&self.calls)
            .iter()
            .map(|(tool, counters)| {
                let outcomes: Vec<u64> = counters
                    .outcomes
                    .iter()
                    .map(|n| n.load(Ordering::Relaxed))
                    .collect();
                let calls = outcomes.iter().sum();
                let stats = ToolStats {
                    api: counters.api.clone(),
                    calls,
                    errors: calls - outcomes[0],
                    counts: counters
                        .duration
                        .counts
                        .iter()
                        .map(|n| n.load(Ordering::Relaxed))
                        .collect(),
                };
                (tool.clone(), stats)
            })
            .collect()
    }

    pub fn set_tools(&self, tools: usize) {
        self.tools.store(tools as u64, Ordering::Relaxed);
    }

    /// The calls in flight now.
    pub fn calls_in_flight(&self) -> i64 {
        self.calls_in_flight.load(Ordering::Relaxed)
    }

    /// The text exposition format. `sessions` is the number of open MCP sessions (HTTP).
    pub fn render(&self, sessions: Option<usize>) -> String {
        let mut out = String::with_capacity(4096);
        self.render_tools(&mut out);
        self.render_callers(&mut out);
        self.render_apis(&mut out);
        self.render_requests(&mut out);
        self.render_gauges(&mut out, sessions);
        out
    }

    /// The build, the tool count and the calls per tool and outcome.
    fn render_tools(&self, out: &mut String) {
        family(
            out,
            "restmcp_build_info",
            "gauge",
            "Always 1; the version label says which restmcp this is.",
        );
        let _ = writeln!(
            out,
            "restmcp_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        );
        family(
            out,
            "restmcp_tools",
            "gauge",
            "Tools in the tool set being served.",
        );
        let _ = writeln!(out, "restmcp_tools {}", self.tools.load(Ordering::Relaxed));

        family(
            out,
            "restmcp_tool_calls_total",
            "counter",
            "Tool calls by tool, API and outcome.",
        );
        let calls = read(&self.calls);
        let mut tools: Vec<(&String, &Arc<ToolCounters>)> = calls.iter().collect();
        tools.sort_by(|a, b| a.0.cmp(b.0));
        for (tool, counters) in tools {
            for (index, outcome) in OUTCOMES.iter().enumerate() {
                let n = counters.outcomes[index].load(Ordering::Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "restmcp_tool_calls_total{{api=\"{}\",tool=\"{}\",outcome=\"{outcome}\"}} {n}",
                        escape(&counters.api),
                        escape(tool)
                    );
                }
            }
        }
        drop(calls);
    }

    /// Calls per caller pseudonym (the first [`MAX_CALLER_SERIES`], then `other`).
    fn render_callers(&self, out: &mut String) {
        let callers = lock(&self.callers);
        if !callers.is_empty() {
            family(
                out,
                "restmcp_caller_tool_calls_total",
                "counter",
                "Tool calls by caller (its pseudonym: a keyed hash of an OAuth caller's issuer and subject, or of a static token); callers past the first 100 count as \"other\".",
            );
            let mut sorted: Vec<(&String, &u64)> = callers.iter().collect();
            sorted.sort();
            for (caller, n) in sorted {
                let _ = writeln!(
                    out,
                    "restmcp_caller_tool_calls_total{{caller=\"{}\"}} {n}",
                    escape(caller)
                );
            }
            let other = self.other_callers.load(Ordering::Relaxed);
            if other > 0 {
                let _ = writeln!(
                    out,
                    "restmcp_caller_tool_calls_total{{caller=\"other\"}} {other}"
                );
            }
        }
        drop(callers);
    }

    /// Per API: the call and upstream duration histograms, and the bytes sent and received.
    fn render_apis(&self, out: &mut String) {
        let apis = read(&self.apis);
        let mut apis: Vec<(&String, &Arc<ApiStats>)> = apis.iter().collect();
        apis.sort_by(|a, b| a.0.cmp(b.0));
        for (name, help, pick) in [
            (
                "restmcp_tool_call_duration_seconds",
                "Whole tool calls: validation, upstream exchange and result mapping.",
                (|s: &ApiStats| &s.call) as fn(&ApiStats) -> &Histogram,
            ),
            (
                "restmcp_upstream_request_duration_seconds",
                "The upstream part of tool calls, retries included.",
                |s: &ApiStats| &s.upstream,
            ),
        ] {
            family(out, name, "histogram", help);
            for (api, stats) in &apis {
                histogram(out, name, api, pick(stats));
            }
        }
        for (name, help, pick) in [
            (
                "restmcp_upstream_sent_bytes_total",
                "Request body bytes sent to upstream APIs.",
                (|s: &ApiStats| &s.bytes_sent) as fn(&ApiStats) -> &AtomicU64,
            ),
            (
                "restmcp_upstream_received_bytes_total",
                "Response body bytes received from upstream APIs.",
                |s: &ApiStats| &s.bytes_received,
            ),
        ] {
            family(out, name, "counter", help);
            for (api, stats) in &apis {
                let _ = writeln!(
                    out,
                    "{name}{{api=\"{}\"}} {}",
                    escape(api),
                    pick(stats).load(Ordering::Relaxed)
                );
            }
        }
    }

    /// JSON-RPC messages by method and revision, and the HTTP requests refused by reason.
    fn render_requests(&self, out: &mut String) {
        family(
            out,
            "restmcp_mcp_requests_total",
            "counter",
            "JSON-RPC messages received over HTTP, by method and protocol version.",
        );
        let mut requests: Vec<((&str, &str), u64)> =
            lock(&self.requests).iter().map(|(k, v)| (*k, *v)).collect();
        requests.sort();
        for ((method, version), n) in requests {
            let _ = writeln!(
                out,
                "restmcp_mcp_requests_total{{method=\"{method}\",protocol_version=\"{version}\"}} {n}"
            );
        }
        family(
            out,
            "restmcp_http_refused_total",
            "counter",
            "HTTP requests refused before they reached MCP, by reason.",
        );
        for (reason, n) in lock(&self.refused).iter() {
            let _ = writeln!(out, "restmcp_http_refused_total{{reason=\"{reason}\"}} {n}");
        }
    }

    /// Calls in flight, open streams, reloads, and the sessions when the transport has them.
    fn render_gauges(&self, out: &mut String, sessions: Option<usize>) {
        for (name, kind, help, value) in [
            (
                "restmcp_tool_calls_in_flight",
                "gauge",
                "Tool calls being served now.",
                self.calls_in_flight.load(Ordering::Relaxed).max(0) as u64,
            ),
            (
                "restmcp_open_streams",
                "gauge",
                "Open server-to-client SSE streams.",
                self.open_streams.load(Ordering::Relaxed).max(0) as u64,
            ),
            (
                "restmcp_reloads_total",
                "counter",
                "Reloads that replaced the tool set or its settings.",
                self.reloads.load(Ordering::Relaxed),
            ),
            (
                "restmcp_reload_failures_total",
                "counter",
                "Reloads that failed (the previous tool set stayed in service).",
                self.reload_failures.load(Ordering::Relaxed),
            ),
        ] {
            family(out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
        if let Some(sessions) = sessions {
            family(
                out,
                "restmcp_sessions",
                "gauge",
                "Open MCP sessions (Mcp-Session-Id).",
            );
            let _ = writeln!(out, "restmcp_sessions {sessions}");
        }
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn histogram(out: &mut String, name: &str, api: &str, histogram: &Histogram) {
    let api = escape(api);
    let mut cumulative = 0;
    for (index, bound) in BUCKETS.iter().enumerate() {
        cumulative += histogram.counts[index].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "{name}_bucket{{api=\"{api}\",le=\"{bound}\"}} {cumulative}"
        );
    }
    cumulative += histogram.counts[BUCKETS.len()].load(Ordering::Relaxed);
    let _ = writeln!(
        out,
        "{name}_bucket{{api=\"{api}\",le=\"+Inf\"}} {cumulative}"
    );
    let sum = histogram.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
    let _ = writeln!(out, "{name}_sum{{api=\"{api}\"}} {sum}");
    let _ = writeln!(out, "{name}_count{{api=\"{api}\"}} {cumulative}");
}

/// Label values escape `\`, `"` and newlines.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample<'a>(text: &'a str, series: &str) -> Option<&'a str> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
    }

    #[test]
    fn calls_are_counted_by_tool_and_outcome_and_timed_per_api() {
        let metrics = Metrics::new();
        for outcome in ["ok", "ok", "upstream_5xx"] {
            metrics.record_call(&CallRecord {
                api: "pets",
                tool: "getPet",
                outcome,
                duration: Duration::from_millis(3),
                upstream: Some(Duration::from_millis(2)),
                bytes_sent: 10,
                bytes_received: 100,
                caller: None,
                status: None,
                attempts: 1,
                arguments: None,
            });
        }
        let text = metrics.render(Some(2));
        assert_eq!(
            sample(
                &text,
                r#"restmcp_tool_calls_total{api="pets",tool="getPet",outcome="ok"}"#
            ),
            Some("2")
        );
        assert_eq!(
            sample(
                &text,
                r#"restmcp_tool_calls_total{api="pets",tool="getPet",outcome="upstream_5xx"}"#
            ),
            Some("1")
        );
        assert_eq!(
            sample(
                &text,
                r#"restmcp_tool_call_duration_seconds_bucket{api="pets",le="0.0025"}"#
            ),
            Some("0")
        );
        assert_eq!(
            sample(
                &text,
                r#"restmcp_tool_call_duration_seconds_bucket{api="pets",le="0.005"}"#
            ),
            Some("3")
        );
        assert_eq!(
            sample(
                &text,
                r#"restmcp_tool_call_duration_seconds_count{api="pets"}"#
            ),
            Some("3")
        );
        assert_eq!(
            sample(
                &text,
                r#"restmcp_upstream_received_bytes_total{api="pets"}"#
            ),
            Some("300")
        );
        assert_eq!(sample(&text, "restmcp_sessions"), Some("2"));
    }

    #[test]
    fn unknown_methods_and_versions_do_not_make_new_series() {
        let metrics = Metrics::new();
        metrics.record_request("tools/call", Some("2025-06-18"));
        metrics.record_request("evil/\"method\"", Some("1999-01-01"));
        metrics.record_request("made/up", None);
        let text = metrics.render(None);
        assert!(text.contains(
            r#"restmcp_mcp_requests_total{method="tools/call",protocol_version="2025-06-18"} 1"#
        ));
        assert!(
            text.contains(
                r#"restmcp_mcp_requests_total{method="other",protocol_version="other"} 1"#
            )
        );
        assert!(
            text.contains(
                r#"restmcp_mcp_requests_total{method="other",protocol_version="none"} 1"#
            )
        );
        assert!(!text.contains("evil"));
    }

    #[test]
    fn label_values_are_escaped_and_gauges_follow_guards() {
        let metrics = Metrics::new();
        metrics.record_call(&CallRecord {
            api: "a\"b",
            tool: "t\\1\n",
            outcome: "timeout",
            duration: Duration::from_secs(60),
            upstream: None,
            bytes_sent: 0,
            bytes_received: 0,
            caller: None,
            status: None,
            attempts: 1,
            arguments: None,
        });
        let guard = metrics.call_started();
        let stream = metrics.stream_opened();
        let text = metrics.render(None);
        assert!(
            text.contains(
                r#"restmcp_tool_calls_total{api="a\"b",tool="t\\1\n",outcome="timeout"} 1"#
            )
        );
        assert!(
            text.contains(r#"restmcp_tool_call_duration_seconds_bucket{api="a\"b",le="+Inf"} 1"#)
        );
        assert!(text.contains("restmcp_tool_calls_in_flight 1"));
        assert!(text.contains("restmcp_open_streams 1"));
        drop((guard, stream));
        let text = metrics.render(None);
        assert!(text.contains("restmcp_tool_calls_in_flight 0"));
        assert!(text.contains("restmcp_open_streams 0"));
        assert!(!text.contains("restmcp_sessions"));
    }

    #[test]
    fn durations_per_tool_are_kept_only_once_a_console_page_watched() {
        let metrics = Metrics::new();
        let call = CallRecord {
            api: "petstore",
            tool: "getPetById",
            outcome: "ok",
            duration: Duration::from_millis(3),
            upstream: None,
            bytes_sent: 0,
            bytes_received: 10,
            caller: None,
            status: Some(200),
            attempts: 1,
            arguments: None,
        };
        metrics.record_call(&call);
        let observed =
            |metrics: &Metrics| -> u64 { metrics.tool_stats()["getPetById"].counts.iter().sum() };
        assert_eq!(metrics.tool_stats()["getPetById"].calls, 1);
        assert_eq!(observed(&metrics), 0, "nobody watched: no duration kept");
        let watch = metrics.feed().watch(None).expect("a page");
        metrics.record_call(&call);
        metrics.record_call(&CallRecord {
            outcome: "upstream_5xx",
            ..call
        });
        let stats = &metrics.tool_stats()["getPetById"];
        assert_eq!((stats.calls, stats.errors), (3, 1));
        assert_eq!(observed(&metrics), 2);
        assert_eq!(stats.counts.len(), BUCKETS.len() + 1);
        assert_eq!(watch.recent.len(), 0);
        // Per-tool durations are the console's: a scrape stays per API.
        assert!(!metrics.render(None).contains("tool=\"getPetById\",le="));
    }

    #[test]
    fn the_last_reload_is_kept_with_its_error() {
        let metrics = Metrics::new();
        assert!(metrics.last_reload().is_none());
        metrics.record_reload(None, 19);
        let ok = metrics.last_reload().expect("a reload");
        assert!(ok.ok && ok.error.is_none() && ok.tools == 19);
        metrics.record_reload(Some("petstore.yaml: /paths: expected a map"), 19);
        let failed = metrics.last_reload().expect("a reload");
        assert!(!failed.ok);
        assert_eq!(
            failed.error.as_deref(),
            Some("petstore.yaml: /paths: expected a map")
        );
        assert!(
            metrics
                .render(None)
                .contains("restmcp_reload_failures_total 1")
        );
    }

    #[test]
    fn calls_count_per_oauth_caller_for_the_first_hundred_then_as_other() {
        let metrics = Metrics::new();
        fn call(caller: Option<&str>) -> CallRecord<'_> {
            CallRecord {
                api: "a",
                tool: "t",
                outcome: "ok",
                duration: Duration::from_millis(1),
                upstream: None,
                bytes_sent: 0,
                bytes_received: 0,
                caller,
                status: None,
                attempts: 1,
                arguments: None,
            }
        }
        metrics.record_call(&call(None));
        assert!(
            !metrics
                .render(None)
                .contains("restmcp_caller_tool_calls_total")
        );
        let names: Vec<String> = (0..=MAX_CALLER_SERIES)
            .map(|i| format!("sub:{i:016x}"))
            .collect();
        for name in &names {
            metrics.record_call(&call(Some(name)));
        }
        metrics.record_call(&call(Some(&names[0])));
        metrics.record_call(&call(Some(&names[MAX_CALLER_SERIES])));
        let text = metrics.render(None);
        assert!(
            text.contains(r#"restmcp_caller_tool_calls_total{caller="sub:0000000000000000"} 2"#)
        );
        assert!(text.contains(r#"restmcp_caller_tool_calls_total{caller="other"} 2"#));
        let series = text
            .lines()
            .filter(|line| line.starts_with("restmcp_caller_tool_calls_total{"))
            .count();
        assert_eq!(series, MAX_CALLER_SERIES + 1, "bounded");
    }
}
