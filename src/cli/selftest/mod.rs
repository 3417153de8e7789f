//! `restmcp selftest`: every tool of a configuration called over both MCP transports, with
//! every API in mock mode, for a CI job that guards the YAML a user edits; with `--live`,
//! against the configured upstreams instead (a staging server, or a validating mock server
//! such as Stoplight Prism).
//!
//! The configuration is served twice, the way clients will meet it: over Streamable HTTP by
//! this process (on a loopback port of its own) and over stdio by a child `restmcp stdio
//! --mock` (`restmcp stdio` when live), each driven by the official SDK's client. Both
//! `tools/list` results must be the same; then every tool is called on both with arguments
//! generated from its inputSchema ([`crate::mock::generate::example`]). The mock upstream
//! checks each request against its operation and answers 400 with the reasons when it does
//! not match, so a tool whose request comes out wrong fails here instead of in front of a
//! model; a live upstream that validates requests (Prism answers 422 with its violations)
//! does the same from outside. A result passes when it is not an error and, where the tool
//! promises an outputSchema, carries a `structuredContent` that validates against it. A
//! failed call's reason names the upstream's status and, for an RFC 9457 problem body, its
//! title and detail or Prism's `validation` list.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::{ConfigureCommandExt as _, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ConfigError, Overrides};
use crate::load::{self, LoadError};
use crate::mcp::{Shared, Snapshot};
use crate::upstream::Dispatcher;

/// Calls in flight at once, over both transports together, unless `--concurrency` says
/// otherwise. The mock answers in microseconds, so this only needs to keep both servers
/// busy.
pub const CONCURRENCY: usize = 16;
/// A call that gets no answer in this long is a failure (a stuck server must not hang CI).
/// Live, the longest upstream timeout of the configuration plus [`CALL_TIMEOUT_MARGIN`] is
/// allowed instead, when that is longer.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
const CALL_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);
/// Longest reason kept for one call (the JSON report carries it whole).
const MAX_REASON_CHARS: usize = 1000;
/// Longest reason shown in a row of the table.
const MAX_TABLE_REASON_CHARS: usize = 200;
/// Most entries of an upstream's list of violations named in a reason.
const MAX_VIOLATIONS: usize = 8;
/// The child's last words kept for an error message.
const MAX_STDERR_BYTES: usize = 4096;

/// What to test.
#[derive(Debug, Clone)]
pub struct Options {
    /// The configuration file (`--config`).
    pub config: PathBuf,
    /// The global flags; `mock` is forced on whatever they say, unless `live`.
    pub overrides: Overrides,
    /// Call the configured upstreams (each API's own `mock` setting applies) instead of
    /// forcing every API into mock mode. Every operation is called, writes included, once
    /// per transport.
    pub live: bool,
    /// Serve and call over this transport only (`--transport`); the other one's outcomes
    /// are all skipped. None: both.
    pub only: Option<Transport>,
    /// Calls in flight at once (`--concurrency`; [`CONCURRENCY`] by default): a live
    /// upstream that answers slowly should not get a queue it cannot serve in time.
    pub concurrency: usize,
    /// The restmcp executable started for the stdio leg (normally this one).
    pub executable: PathBuf,
    /// Show a `selftest: N/M calls` line on stderr while calling (for a terminal).
    pub progress: bool,
}

/// A selftest that could not run at all (as opposed to tools that failed it).
#[derive(Debug, thiserror::Error)]
pub enum SelftestError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{0}")]
    Dispatcher(String),
    #[error("cannot listen on a loopback port: {0}")]
    Listen(std::io::Error),
    #[error("cannot start {program}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    #[error("cannot connect over {transport}: {error}{}", stderr_note(stderr))]
    Connect {
        transport: Transport,
        error: String,
        /// What the stdio child printed before it failed.
        stderr: String,
    },
    #[error("tools/list over {transport} failed: {error}{}", stderr_note(stderr))]
    List {
        transport: Transport,
        error: ServiceError,
        stderr: String,
    },
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("\nthe stdio server said:\n{stderr}")
    }
}

/// The two ways a client reaches restmcp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Http,
    Stdio,
}

impl Transport {
    pub const ALL: [Transport; 2] = [Transport::Http, Transport::Stdio];

    /// The transport named `http` or `stdio` (the `--transport` values).
    pub fn from_key(key: &str) -> Option<Transport> {
        Transport::ALL.into_iter().find(|t| t.key() == key)
    }

    /// The key in the JSON report and the word in the table.
    pub fn key(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Stdio => "stdio",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Http => "Streamable HTTP",
            Transport::Stdio => "stdio",
        })
    }
}

/// What became of one tool on one transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Failed(String),
    Skipped(String),
}

impl Outcome {
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed(_) => "failed",
            Outcome::Skipped(_) => "skipped",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed(reason) | Outcome::Skipped(reason) => Some(reason),
        }
    }

    fn to_json(&self) -> Value {
        json!({"outcome": self.word(), "reason": self.reason()})
    }
}

/// One tool's outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReport {
    pub name: String,
    pub http: Outcome,
    pub stdio: Outcome,
}

impl ToolReport {
    pub fn outcome(&self, transport: Transport) -> &Outcome {
        match transport {
            Transport::Http => &self.http,
            Transport::Stdio => &self.stdio,
        }
    }

    fn outcome_mut(&mut self, transport: Transport) -> &mut Outcome {
        match transport {
            Transport::Http => &mut self.http,
            Transport::Stdio => &mut self.stdio,
        }
    }
}

/// Counts for one transport.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub tools: usize,
    pub ok: usize,
    pub failed: usize,
    pub skipped: usize,
    /// From the first call to the last answer on this transport.
    pub elapsed: Duration,
}

/// The result of a selftest run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// In `tools/list` order (Streamable HTTP's, then any tool only stdio listed).
    pub tools: Vec<ToolReport>,
    /// How long each transport took to answer all its calls.
    pub call_time: HashMap<Transport, Duration>,
    /// The whole run: loading, both servers, listing and calling.
    pub elapsed: Duration,
}

impl Summary {
    pub fn totals(&self, transport: Transport) -> Totals {
        let mut totals = Totals {
            tools: self.tools.len(),
            elapsed: self.call_time.get(&transport).copied().unwrap_or_default(),
            ..Totals::default()
        };
        for tool in &self.tools {
            match tool.outcome(transport) {
                Outcome::Ok => totals.ok += 1,
                Outcome::Failed(_) => totals.failed += 1,
                Outcome::Skipped(_) => totals.skipped += 1,
            }
        }
        totals
    }

    /// True when any tool failed on any transport (the exit code is 1 then).
    pub fn failed(&self) -> bool {
        Transport::ALL.iter().any(|t| self.totals(*t).failed > 0)
    }

    /// The `--json` document.
    pub fn to_json(&self) -> Value {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "http": tool.http.to_json(),
                    "stdio": tool.stdio.to_json(),
                })
            })
            .collect();
        let totals: Map<String, Value> = Transport::ALL
            .iter()
            .map(|transport| {
                let t = self.totals(*transport);
                let counts = json!({
                    "tools": t.tools,
                    "ok": t.ok,
                    "failed": t.failed,
                    "skipped": t.skipped,
                    "elapsed_ms": t.elapsed.as_millis() as u64,
                });
                (transport.key().to_string(), counts)
            })
            .collect();
        json!({
            "tools": tools,
            "totals": totals,
            "elapsed_ms": self.elapsed.as_millis() as u64,
        })
    }

    /// The table: a row for every call that was not ok, then each transport's totals.
    pub fn render(&self) -> String {
        let rows: Vec<[String; 4]> = self
            .tools
            .iter()
            .flat_map(|tool| {
                Transport::ALL.into_iter().filter_map(move |transport| {
                    let outcome = tool.outcome(transport);
                    let reason = outcome.reason()?;
                    Some([
                        tool.name.clone(),
                        transport.key().to_string(),
                        outcome.word().to_string(),
                        cut(reason, MAX_TABLE_REASON_CHARS),
                    ])
                })
            })
            .collect();
        let mut out = String::new();
        if !rows.is_empty() {
            let header = ["tool", "transport", "outcome", "reason"].map(String::from);
            let width = |column: usize| {
                rows.iter()
                    .map(|row| row[column].chars().count())
                    .chain([header[column].len()])
                    .max()
                    .unwrap_or(0)
            };
            let widths = [width(0), width(1), width(2)];
            for row in std::iter::once(&header).chain(&rows) {
                out.push_str(&format!(
                    "{:<w0$}  {:<w1$}  {:<w2$}  {}\n",
                    row[0],
                    row[1],
                    row[2],
                    row[3],
                    w0 = widths[0],
                    w1 = widths[1],
                    w2 = widths[2],
                ));
            }
            out.push('\n');
        }
        for transport in Transport::ALL {
            let t = self.totals(transport);
            out.push_str(&format!(
                "{:<6} {} tools: {} ok, {} failed, {} skipped in {:.2} s\n",
                format!("{}:", transport.key()),
                t.tools,
                t.ok,
                t.failed,
                t.skipped,
                t.elapsed.as_secs_f64()
            ));
        }
        out.push_str(&format!(
            "selftest {} in {:.2} s\n",
            if self.failed() { "failed" } else { "passed" },
            self.elapsed.as_secs_f64()
        ));
        out
    }
}

type Client = RunningService<RoleClient, ()>;

/// Runs the selftest; `Err` only when it could not run (the configuration does not load,
/// a server does not start).
pub async fn run(options: &Options) -> Result<Summary, SelftestError> {
    let started = Instant::now();
    let overrides = Overrides {
        mock: !options.live || options.overrides.mock,
        ..options.overrides.clone()
    };
    let config = Config::load(&options.config, &overrides)?;
    let wanted = |t: Transport| options.only.is_none_or(|only| only == t);
    // The child loads the same specs as this process does: both at once.
    let (http, stdio) = tokio::join!(
        async {
            match wanted(Transport::Http) {
                true => HttpLeg::start(&config).await.map(Some),
                false => Ok(None),
            }
        },
        async {
            match wanted(Transport::Stdio) {
                true => StdioLeg::start(options).await.map(Some),
                false => Ok(None),
            }
        }
    );
    let (http, stdio) = (http?, stdio?);
    let http_tools = match &http {
        Some(leg) => Some(list(&leg.client, Transport::Http, String::new).await?),
        None => None,
    };
    let stdio_tools = match &stdio {
        Some(leg) => Some(list(&leg.client, Transport::Stdio, || leg.stderr_text()).await?),
        None => None,
    };
    let (mut reports, jobs) = plan(http_tools.as_deref(), stdio_tools.as_deref());
    let clients = Clients {
        http: http.as_ref().map(|leg| &leg.client),
        stdio: stdio.as_ref().map(|leg| &leg.client),
    };
    let pace = Pace {
        concurrency: options.concurrency.max(1),
        timeout: if options.live {
            call_timeout(&config)
        } else {
            CALL_TIMEOUT
        },
    };
    let call_time = call_all(&clients, jobs, &mut reports, pace, options.progress).await;
    if let Some(stdio) = stdio {
        stdio.stop().await;
    }
    if let Some(http) = http {
        http.stop().await;
    }
    Ok(Summary {
        tools: reports,
        call_time,
        elapsed: started.elapsed(),
    })
}

/// The Streamable HTTP side: this process serving the catalog on a loopback port.
struct HttpLeg {
    client: Client,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpLeg {
    async fn start(config: &Config) -> Result<HttpLeg, SelftestError> {
        let loaded = load::load(config).await?;
        let dispatcher =
            Dispatcher::new(Arc::new(loaded.catalog), config).map_err(SelftestError::Dispatcher)?;
        let shared = Shared::with_settings(Snapshot::new(dispatcher), &config.server);
        let mut settings = config.server.clone();
        // Only this process's own client reaches the port; Host and Origin rules are for
        // browsers on a real listener, and are not what a selftest tests.
        settings.allowed_hosts.clear();
        settings.allowed_origins.clear();
        settings.cors_origins.clear();
        settings.auth = None;
        settings.max_in_flight_per_client = 0;
        settings.shutdown_grace_seconds = 1;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(SelftestError::Listen)?;
        let address = listener.local_addr().map_err(SelftestError::Listen)?;
        let shutdown = CancellationToken::new();
        let control = crate::http::Control::new(&settings)
            .map_err(|e| SelftestError::Dispatcher(e.to_string()))?;
        control.readiness.set_loaded();
        let app = crate::http::app(shared, &settings, &control);
        let server = tokio::spawn(crate::http::serve(
            listener,
            app,
            Arc::new(control),
            shutdown.clone(),
            settings.threads,
        ));
        // The SDK's client is reqwest on rustls without a default provider.
        crate::http_client::install_crypto_provider();
        let transport = StreamableHttpClientTransport::from_uri(format!("http://{address}/mcp"));
        let client = ().serve(transport).await.map_err(|e| {
            shutdown.cancel();
            SelftestError::Connect {
                transport: Transport::Http,
                error: e.to_string(),
                stderr: String::new(),
            }
        })?;
        Ok(HttpLeg {
            client,
            shutdown,
            server,
        })
    }

    async fn stop(self) {
        let _ = self.client.cancel().await;
        self.shutdown.cancel();
        let _ = self.server.await;
    }
}

/// The stdio side: a child `restmcp stdio --mock` (without `--mock` when live) with the
/// same flags.
struct StdioLeg {
    client: Client,
    /// The tail of the child's stderr, for error messages.
    stderr: Arc<Mutex<String>>,
}

impl StdioLeg {
    async fn start(options: &Options) -> Result<StdioLeg, SelftestError> {
        let command = tokio::process::Command::new(&options.executable).configure(|command| {
            command
                .args(stdio_args(options))
                // Warnings only: the child's stderr is kept for error messages, not shown.
                .env("RUST_LOG", "warn")
                // The child lives for seconds; watching files for it would be wasted work.
                .env("RESTMCP_RELOAD__ENABLED", "false");
        });
        let (transport, child_stderr) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|error| SelftestError::Spawn {
                program: options.executable.display().to_string(),
                error,
            })?;
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(pipe) = child_stderr {
            tokio::spawn(drain(pipe, stderr.clone()));
        }
        match ().serve(transport).await {
            Ok(client) => Ok(StdioLeg { client, stderr }),
            Err(e) => {
                // Give the drain a moment to catch the child's last words (its error).
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(SelftestError::Connect {
                    transport: Transport::Stdio,
                    error: e.to_string(),
                    stderr: tail(&stderr),
                })
            }
        }
    }

    fn stderr_text(&self) -> String {
        tail(&self.stderr)
    }

    async fn stop(self) {
        // Closing stdin ends the child's session; rmcp waits for it to exit (or kills it).
        let _ = self.client.cancel().await;
    }
}

fn tail(buffer: &Mutex<String>) -> String {
    buffer.lock().map(|s| s.clone()).unwrap_or_default()
}

/// Reads the child's stderr to the end (so it never blocks on a full pipe), keeping the
/// last [`MAX_STDERR_BYTES`].
async fn drain(mut pipe: tokio::process::ChildStderr, keep: Arc<Mutex<String>>) {
    let mut chunk = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let Ok(mut kept) = keep.lock() else {
            break;
        };
        kept.push_str(&String::from_utf8_lossy(&chunk[..n]));
        if kept.len() > MAX_STDERR_BYTES {
            let mut cut = kept.len() - MAX_STDERR_BYTES;
            while !kept.is_char_boundary(cut) {
                cut += 1;
            }
            kept.drain(..cut);
        }
    }
}

/// The child's command line: `stdio --mock --config F` (no `--mock` when live) and the
/// global flags the user gave, so both servers build the same tool set.
fn stdio_args(options: &Options) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["stdio".into()];
    if !options.live || options.overrides.mock {
        args.push("--mock".into());
    }
    args.extend(["--config".into(), options.config.clone().into_os_string()]);
    let o = &options.overrides;
    if let Some(spec) = &o.spec {
        args.extend(["--spec".into(), spec.into()]);
    }
    if let Some(base_url) = &o.base_url {
        args.extend(["--base-url".into(), base_url.into()]);
    }
    if let Some(n) = o.max_name_length {
        args.extend(["--max-name-length".into(), n.to_string().into()]);
    }
    if let Some(n) = o.max_description_length {
        args.extend(["--max-description-length".into(), n.to_string().into()]);
    }
    args
}

/// Every tool the server lists; `stderr` says what the server printed, should it fail.
async fn list(
    client: &Client,
    transport: Transport,
    stderr: impl FnOnce() -> String,
) -> Result<Vec<Tool>, SelftestError> {
    client
        .list_all_tools()
        .await
        .map_err(|error| SelftestError::List {
            transport,
            error,
            stderr: stderr(),
        })
}

/// One call to make.
struct Job {
    /// Index into the reports.
    row: usize,
    transport: Transport,
    arguments: Map<String, Value>,
    output: Option<Arc<jsonschema::Validator>>,
}

/// A report row for every tool either transport listed, with the outcomes known without
/// calling (listing differences, no arguments, a broken outputSchema) filled in, and the
/// calls still to make. A transport without a listing (`None`: left out by `--transport`)
/// is skipped for every tool.
fn plan(http: Option<&[Tool]>, stdio: Option<&[Tool]>) -> (Vec<ToolReport>, Vec<Job>) {
    let not_called = |t: Transport| {
        Outcome::Skipped(format!(
            "not called (--transport {})",
            Transport::ALL
                .into_iter()
                .find(|other| *other != t)
                .map_or("", Transport::key)
        ))
    };
    let (http, http_skipped) = (http.unwrap_or_default(), http.is_none());
    let (stdio, stdio_skipped) = (stdio.unwrap_or_default(), stdio.is_none());
    let (http_index, stdio_index) = (by_name(http), by_name(stdio));
    let mut names: Vec<&str> = http.iter().map(|t| t.name.as_ref()).collect();
    names.extend(
        stdio
            .iter()
            .map(|t| t.name.as_ref())
            .filter(|n| !http_index.contains_key(*n)),
    );
    let mut reports = Vec::with_capacity(names.len());
    let mut jobs = Vec::with_capacity(names.len() * 2);
    for (row, name) in names.into_iter().enumerate() {
        let on_http = http_index.get(name).map(|&i| &http[i]);
        let on_stdio = stdio_index.get(name).map(|&i| &stdio[i]);
        let http_output = on_http.map(output_validator);
        // Compiled once when both transports list the same outputSchema.
        let stdio_output = match (on_http, on_stdio, &http_output) {
            (Some(h), Some(s), Some(compiled)) if h.output_schema == s.output_schema => {
                Some(compiled.clone())
            }
            _ => on_stdio.map(output_validator),
        };
        let mut report = ToolReport {
            name: name.to_string(),
            http: Outcome::Ok,
            stdio: Outcome::Ok,
        };
        let legs = [
            (Transport::Http, http_skipped, on_http, None, http_output),
            (
                Transport::Stdio,
                stdio_skipped,
                on_stdio,
                on_http,
                stdio_output,
            ),
        ];
        for (transport, skipped, tool, reference, output) in legs {
            if skipped {
                *report.outcome_mut(transport) = not_called(transport);
                continue;
            }
            match prepare(row, transport, tool, reference, output) {
                Ok(job) => jobs.push(job),
                Err(outcome) => *report.outcome_mut(transport) = outcome,
            }
        }
        reports.push(report);
    }
    (reports, jobs)
}

fn by_name(tools: &[Tool]) -> HashMap<&str, usize> {
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_ref(), i))
        .collect()
}

/// A tool's outputSchema compiled: `Ok(None)` when it has none.
type OutputCheck = Result<Option<Arc<jsonschema::Validator>>, String>;

/// The call of `tool` over `transport` (report row `row`), or its outcome when there is no
/// call to make: not listed, listed unlike `reference` (the Streamable HTTP
/// listing, which this process serves straight from the catalog), an outputSchema that
/// does not compile, or no arguments.
fn prepare(
    row: usize,
    transport: Transport,
    tool: Option<&Tool>,
    reference: Option<&Tool>,
    output: Option<OutputCheck>,
) -> Result<Job, Outcome> {
    let Some(tool) = tool else {
        return Err(Outcome::Failed(format!(
            "not in tools/list over {transport}"
        )));
    };
    if let Some(reference) = reference {
        let differences = differences(reference, tool);
        if !differences.is_empty() {
            return Err(Outcome::Failed(format!(
                "listed differently over {transport} than over {}: {} differ",
                Transport::Http,
                differences.join(", ")
            )));
        }
    }
    let output = output.unwrap_or(Ok(None)).map_err(Outcome::Failed)?;
    Ok(Job {
        row,
        transport,
        arguments: arguments(tool)?,
        output,
    })
}

/// The top-level fields in which two listings of a tool differ (`inputSchema`, …).
fn differences(a: &Tool, b: &Tool) -> Vec<String> {
    let (Ok(Value::Object(a)), Ok(Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return vec!["the tool".into()];
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| a.get(*key) != b.get(*key))
        .cloned()
        .collect()
}

/// The tool's outputSchema, compiled.
fn output_validator(tool: &Tool) -> OutputCheck {
    let Some(schema) = &tool.output_schema else {
        return Ok(None);
    };
    jsonschema::validator_for(&Value::Object(schema.as_ref().clone()))
        .map(|v| Some(Arc::new(v)))
        .map_err(|e| format!("the outputSchema does not compile: {e}"))
}

/// Arguments for the tool from its inputSchema, or the outcome when there are none.
fn arguments(tool: &Tool) -> Result<Map<String, Value>, Outcome> {
    let schema = Value::Object(tool.input_schema.as_ref().clone());
    match crate::mock::generate::example(&schema) {
        Some(Value::Object(arguments)) => Ok(arguments),
        Some(other) => Err(Outcome::Failed(format!(
            "the arguments generated from the inputSchema are not an object: {}",
            truncate(&other.to_string())
        ))),
        None => Err(Outcome::Skipped(
            "no arguments could be generated from the inputSchema".into(),
        )),
    }
}

/// The clients of the transports being called (a job is planned only for those).
struct Clients<'a> {
    http: Option<&'a Client>,
    stdio: Option<&'a Client>,
}

/// How many calls are in flight at once, and how long one may take.
#[derive(Debug, Clone, Copy)]
struct Pace {
    concurrency: usize,
    timeout: Duration,
}

/// A live call's time limit: the longest upstream timeout of the configuration (an API's
/// `timeout_seconds` or one of its `tool_timeouts`) plus a margin for the MCP round trip,
/// and never less than [`CALL_TIMEOUT`]; an upstream error result then arrives before the
/// selftest gives up on the call.
fn call_timeout(config: &Config) -> Duration {
    let longest = config
        .apis
        .values()
        .flat_map(|api| {
            std::iter::once(api.timeout_seconds).chain(api.tool_timeouts.values().copied())
        })
        .filter(|s| s.is_finite() && *s > 0.0)
        .fold(0.0_f64, f64::max);
    let limit = Duration::try_from_secs_f64(longest).unwrap_or(CALL_TIMEOUT) + CALL_TIMEOUT_MARGIN;
    limit.max(CALL_TIMEOUT)
}

/// Makes every call, `pace.concurrency` at a time, and records the outcomes; returns how
/// long each transport took.
async fn call_all(
    clients: &Clients<'_>,
    jobs: Vec<Job>,
    reports: &mut [ToolReport],
    pace: Pace,
    progress: bool,
) -> HashMap<Transport, Duration> {
    let started = Instant::now();
    let mut call_time: HashMap<Transport, Duration> = Transport::ALL
        .iter()
        .map(|t| (*t, Duration::ZERO))
        .collect();
    let mut counter = Progress::new(progress, jobs.len());
    let names: Vec<String> = reports.iter().map(|r| r.name.clone()).collect();
    let mut calls = futures_util::stream::iter(jobs)
        .map(|job| {
            let client = match job.transport {
                Transport::Http => clients.http,
                Transport::Stdio => clients.stdio,
            };
            let name = names[job.row].clone();
            async move {
                let outcome = match client {
                    Some(client) => {
                        call(
                            client,
                            name,
                            job.arguments,
                            job.output.as_deref(),
                            pace.timeout,
                        )
                        .await
                    }
                    None => Outcome::Skipped(format!("not called over {}", job.transport)),
                };
                (job.row, job.transport, outcome)
            }
        })
        .buffer_unordered(pace.concurrency);
    while let Some((row, transport, outcome)) = calls.next().await {
        *reports[row].outcome_mut(transport) = outcome;
        call_time.insert(transport, started.elapsed());
        counter.tick();
    }
    counter.finish();
    call_time
}

async fn call(
    client: &Client,
    name: String,
    arguments: Map<String, Value>,
    output: Option<&jsonschema::Validator>,
    timeout: Duration,
) -> Outcome {
    let request = CallToolRequestParams::new(name).with_arguments(arguments);
    match tokio::time::timeout(timeout, client.call_tool(request)).await {
        Ok(Ok(result)) => judge(&result, output),
        Ok(Err(ServiceError::McpError(error))) => Outcome::Failed(truncate(&format!(
            "JSON-RPC error {}: {}",
            error.code.0, error.message
        ))),
        Ok(Err(error)) => Outcome::Failed(truncate(&format!("the call failed: {error}"))),
        Err(_) => Outcome::Failed(format!("no answer within {} s", timeout.as_secs())),
    }
}

/// Whether a result passes: not an error, and a valid `structuredContent` where the tool
/// has an outputSchema.
fn judge(result: &CallToolResult, output: Option<&jsonschema::Validator>) -> Outcome {
    if result.is_error == Some(true) {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .map(|t| t.text.as_str())
            .collect();
        return Outcome::Failed(error_reason(&text.join("\n")));
    }
    let Some(validator) = output else {
        return Outcome::Ok;
    };
    let Some(structured) = &result.structured_content else {
        return Outcome::Failed("no structuredContent, though the tool has an outputSchema".into());
    };
    match validator.iter_errors(structured).next() {
        None => Outcome::Ok,
        Some(error) => {
            let at = error.instance_path().to_string();
            Outcome::Failed(truncate(&format!(
                "structuredContent{} does not match the outputSchema: {error}",
                if at.is_empty() {
                    String::new()
                } else {
                    format!(" at {at}")
                }
            )))
        }
    }
}

/// One line that says why an error result failed. The mock's 400 carries its reasons in
/// a JSON body (`{"error": …, "problems": […]}`) after a long preamble, so those reasons
/// are taken out; an upstream's RFC 9457 problem body is cut down to what it says was
/// wrong ([`upstream_problem`]); otherwise the first line, with the list it introduces when
/// it ends in `:` (as "Invalid arguments …:" does).
pub fn error_reason(text: &str) -> String {
    if let Some(problems) = mock_problems(text) {
        return truncate(&format!(
            "the mock upstream rejected the request: {}",
            problems.join("; ")
        ));
    }
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return "the result is an error, without text".into();
    };
    if let Some(problem) = upstream_problem(first) {
        return truncate(&problem);
    }
    let mut reason = first.to_string();
    if first.ends_with(':') {
        for line in lines.take_while(|l| l.starts_with('-')) {
            reason.push(' ');
            reason.push_str(line);
        }
    }
    truncate(&reason)
}

/// The `problems` of the mock upstream's 400 body, when `text` is that result.
fn mock_problems(text: &str) -> Option<Vec<String>> {
    let first = text.lines().next()?;
    let body = &first[first.find("{\"error\":\"restmcp mock:")?..];
    let body: Value = serde_json::from_str(body).ok()?;
    let problems: Vec<String> = body
        .get("problems")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    (!problems.is_empty()).then_some(problems)
}

/// `upstream API "a" answered 422 Unprocessable Entity: {…}` whose body is an RFC 9457
/// problem (`application/problem+json`, as Prism answers): the same preamble, then what the
/// body says was wrong. Prism lists each violation of the API description under
/// `validation` (`{"location": ["query", "limit"], "message": "must be integer"}`), which
/// becomes `query.limit: must be integer`; another problem gives its `title` and `detail`.
/// None when the line is not an upstream's answer or its body not such an object.
fn upstream_problem(line: &str) -> Option<String> {
    let rest = line.strip_prefix("upstream API \"")?;
    let (api, rest) = rest.split_once("\" answered ")?;
    let (status, body) = rest.split_once(": ")?;
    let Value::Object(body) = serde_json::from_str::<Value>(body).ok()? else {
        return None;
    };
    let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::trim);
    let mut said: Vec<String> = Vec::new();
    if let Some(Value::Array(violations)) = body.get("validation") {
        said.extend(violations.iter().take(MAX_VIOLATIONS).map(|v| {
            let message = v
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("invalid");
            let location: Vec<String> = v
                .get("location")
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .map(|p| match p {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if location.is_empty() {
                message.to_string()
            } else {
                format!("{}: {message}", location.join("."))
            }
        }));
        if violations.len() > MAX_VIOLATIONS {
            said.push(format!("and {} more", violations.len() - MAX_VIOLATIONS));
        }
    }
    if said.is_empty() {
        said.extend(
            [text("title"), text("detail")]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        );
    }
    if said.is_empty() {
        return None;
    }
    Some(format!(
        "upstream API \"{api}\" answered {status}: {}",
        said.join("; ")
    ))
}

/// At most [`MAX_REASON_CHARS`] characters, on one line.
fn truncate(text: &str) -> String {
    cut(text, MAX_REASON_CHARS)
}

/// At most `max` characters of `text`, on one line, marked `…` when cut.
fn cut(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `selftest: 412/2446 calls` on one updating stderr line, for a terminal only: a CI log
/// would get a line per update.
struct Progress {
    enabled: bool,
    total: usize,
    done: usize,
    shown: Option<Instant>,
}

/// Redraws at most this often.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

impl Progress {
    fn new(enabled: bool, total: usize) -> Progress {
        Progress {
            enabled,
            total,
            done: 0,
            shown: None,
        }
    }

    fn tick(&mut self) {
        self.done += 1;
        let due = self
            .shown
            .is_none_or(|at| at.elapsed() >= PROGRESS_INTERVAL);
        if self.enabled && (due || self.done == self.total) {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\rselftest: {}/{} calls", self.done, self.total);
            let _ = stderr.flush();
            self.shown = Some(Instant::now());
        }
    }

    /// Clears the line, so the report starts on a clean one.
    fn finish(&self) {
        if self.enabled && self.shown.is_some() {
            let width = format!("selftest: {}/{} calls", self.total, self.total).len();
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r{}\r", " ".repeat(width));
            let _ = stderr.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> Summary {
        Summary {
            tools: vec![
                ToolReport {
                    name: "getPetById".into(),
                    http: Outcome::Ok,
                    stdio: Outcome::Ok,
                },
                ToolReport {
                    name: "findPetsByStatus".into(),
                    http: Outcome::Failed(
                        "the mock upstream rejected the request: required query parameter \"status\" is missing".into(),
                    ),
                    stdio: Outcome::Ok,
                },
                ToolReport {
                    name: "uploadFile".into(),
                    http: Outcome::Skipped("no arguments could be generated from the inputSchema".into()),
                    stdio: Outcome::Skipped("no arguments could be generated from the inputSchema".into()),
                },
            ],
            call_time: HashMap::from([
                (Transport::Http, Duration::from_millis(120)),
                (Transport::Stdio, Duration::from_millis(340)),
            ]),
            elapsed: Duration::from_millis(1500),
        }
    }

    #[test]
    fn the_table_lists_only_what_was_not_ok_then_the_totals() {
        assert_eq!(
            summary().render(),
            "\
tool              transport  outcome  reason
findPetsByStatus  http       failed   the mock upstream rejected the request: required query parameter \"status\" is missing
uploadFile        http       skipped  no arguments could be generated from the inputSchema
uploadFile        stdio      skipped  no arguments could be generated from the inputSchema

http:  3 tools: 1 ok, 1 failed, 1 skipped in 0.12 s
stdio: 3 tools: 2 ok, 0 failed, 1 skipped in 0.34 s
selftest failed in 1.50 s
"
        );
    }

    #[test]
    fn a_clean_run_is_only_totals() {
        let mut clean = summary();
        clean.tools.truncate(1);
        assert!(!clean.failed());
        assert_eq!(
            clean.render(),
            "\
http:  1 tools: 1 ok, 0 failed, 0 skipped in 0.12 s
stdio: 1 tools: 1 ok, 0 failed, 0 skipped in 0.34 s
selftest passed in 1.50 s
"
        );
    }

    #[test]
    fn skipped_tools_alone_do_not_fail_the_run() {
        let mut skipped = summary();
        skipped.tools.remove(1);
        assert!(!skipped.failed());
        assert!(summary().failed());
    }

    #[test]
    fn the_json_report_has_every_tool_on_both_transports_and_the_totals() {
        assert_eq!(
            summary().to_json(),
            json!({
                "tools": [
                    {"name": "getPetById",
                     "http": {"outcome": "ok", "reason": null},
                     "stdio": {"outcome": "ok", "reason": null}},
                    {"name": "findPetsByStatus",
                     "http": {"outcome": "failed", "reason": "the mock upstream rejected the request: required query parameter \"status\" is missing"},
                     "stdio": {"outcome": "ok", "reason": null}},
                    {"name": "uploadFile",
                     "http": {"outcome": "skipped", "reason": "no arguments could be generated from the inputSchema"},
                     "stdio": {"outcome": "skipped", "reason": "no arguments could be generated from the inputSchema"}},
                ],
                "totals": {
                    "http": {"tools": 3, "ok": 1, "failed": 1, "skipped": 1, "elapsed_ms": 120},
                    "stdio": {"tools": 3, "ok": 2, "failed": 0, "skipped": 1, "elapsed_ms": 340},
                },
                "elapsed_ms": 1500,
            })
        );
    }

    #[test]
    fn the_mock_upstreams_problems_are_the_reason() {
        let text = "upstream API \"petstore\" answered 400 Bad Request: {\"error\":\"restmcp mock: the request does not match GET /pet/findByStatus\",\"problems\":[\"required query parameter \\\"status\\\" is missing\",\"the request body is required and missing\"]}\nHint: the upstream rejected the request; check the arguments.";
        assert_eq!(
            error_reason(text),
            "the mock upstream rejected the request: required query parameter \"status\" is missing; the request body is required and missing"
        );
    }

    #[test]
    fn other_errors_give_their_first_line_with_the_list_it_introduces() {
        let text = "Invalid arguments for tool \"getPetById\"; no request was sent:\n- \"petId\" is a required property\n- unknown argument \"x\"\n\nHint: something";
        assert_eq!(
            error_reason(text),
            "Invalid arguments for tool \"getPetById\"; no request was sent: - \"petId\" is a required property - unknown argument \"x\""
        );
        assert_eq!(
            error_reason(
                "upstream API \"a\" answered 500 Internal Server Error with an empty body.\nHint: retry later"
            ),
            "upstream API \"a\" answered 500 Internal Server Error with an empty body."
        );
        assert_eq!(error_reason(""), "the result is an error, without text");
    }

    #[test]
    fn long_reasons_are_cut() {
        let reason = error_reason(&"word ".repeat(1000));
        assert_eq!(reason.chars().count(), MAX_REASON_CHARS);
        assert!(reason.ends_with('…'));
        let mut long = summary();
        long.tools[1].http = Outcome::Failed(reason);
        let row = long.render().lines().nth(1).map(str::to_string);
        assert!(
            row.as_deref()
                .is_some_and(|r| r.ends_with("word word…")
                    && r.chars().count() < MAX_TABLE_REASON_CHARS + 40),
            "{row:?}"
        );
    }

    #[test]
    fn prisms_violations_are_the_reason() {
        let text = "upstream API \"petstore\" answered 422 Unprocessable Entity: {\"type\":\"https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY\",\"title\":\"Invalid request\",\"status\":422,\"detail\":\"Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.\",\"validation\":[{\"location\":[\"query\",\"status\"],\"severity\":\"Error\",\"code\":\"enum\",\"message\":\"must be equal to one of the allowed values: available, pending, sold\"},{\"location\":[\"body\"],\"severity\":\"Error\",\"code\":\"required\",\"message\":\"must have required property 'name'\"}]}\nHint: the upstream rejected the request; check the arguments.";
        assert_eq!(
            error_reason(text),
            "upstream API \"petstore\" answered 422 Unprocessable Entity: query.status: must be equal to one of the allowed values: available, pending, sold; body: must have required property 'name'"
        );
        let unauthorized = "upstream API \"a\" answered 401 Unauthorized: {\"type\":\"https://stoplight.io/prism/errors#UNAUTHORIZED\",\"title\":\"Invalid security scheme used\",\"status\":401,\"detail\":\"\"}\nHint: credentials";
        assert_eq!(
            error_reason(unauthorized),
            "upstream API \"a\" answered 401 Unauthorized: Invalid security scheme used"
        );
        let many: Vec<Value> = (0..10)
            .map(|i| json!({"location": ["query", format!("p{i}")], "message": "must be integer"}))
            .collect();
        let body = json!({"title": "Invalid request", "validation": many});
        let reason = error_reason(&format!(
            "upstream API \"a\" answered 422 Unprocessable Entity: {body}"
        ));
        assert!(
            reason.ends_with("query.p7: must be integer; and 2 more"),
            "{reason}"
        );
        // Not a problem body: the first line as it is.
        assert_eq!(
            error_reason("upstream API \"a\" answered 404 Not Found: [1,2]\nHint: x"),
            "upstream API \"a\" answered 404 Not Found: [1,2]"
        );
    }

    fn tool(name: &str, input: Value, output: Option<Value>) -> Tool {
        let mut tool = json!({"name": name, "inputSchema": input});
        if let Some(output) = output {
            tool["outputSchema"] = output;
        }
        serde_json::from_value(tool).expect("a tool")
    }

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).expect("a result")
    }

    #[test]
    fn results_are_judged_by_is_error_and_the_output_schema() {
        let schema = json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}});
        let validator = jsonschema::validator_for(&schema).expect("compiles");
        let text = |t: &str| json!([{"type": "text", "text": t}]);
        let ok = result(json!({"content": text("{}"), "structuredContent": {"id": 1}}));
        assert_eq!(judge(&ok, Some(&validator)), Outcome::Ok);
        assert_eq!(judge(&ok, None), Outcome::Ok);
        let missing = result(json!({"content": text("{}")}));
        assert_eq!(
            judge(&missing, Some(&validator)),
            Outcome::Failed("no structuredContent, though the tool has an outputSchema".into())
        );
        assert_eq!(judge(&missing, None), Outcome::Ok);
        let wrong = result(json!({"content": text("{}"), "structuredContent": {"id": "x"}}));
        let Outcome::Failed(reason) = judge(&wrong, Some(&validator)) else {
            panic!("a wrong structuredContent fails");
        };
        assert!(
            reason.starts_with("structuredContent at /id does not match the outputSchema"),
            "{reason}"
        );
        let error = result(json!({"content": text("boom\nmore"), "isError": true}));
        assert_eq!(judge(&error, None), Outcome::Failed("boom".into()));
    }

    #[test]
    fn the_listings_must_agree_and_each_tool_is_called_on_both() {
        let input = json!({"type": "object"});
        let http = vec![
            tool("same", input.clone(), Some(json!({"type": "object"}))),
            tool("differs", input.clone(), None),
            tool("only_http", input.clone(), None),
        ];
        let stdio = vec![
            tool("same", input.clone(), Some(json!({"type": "object"}))),
            tool(
                "differs",
                json!({"type": "object", "properties": {"a": {}}}),
                None,
            ),
            tool("only_stdio", input, None),
        ];
        let (reports, jobs) = plan(Some(&http), Some(&stdio));
        let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["same", "differs", "only_http", "only_stdio"]);
        assert_eq!(
            reports[1].stdio,
            Outcome::Failed(
                "listed differently over stdio than over Streamable HTTP: inputSchema differ"
                    .into()
            )
        );
        assert_eq!(
            reports[2].stdio,
            Outcome::Failed("not in tools/list over stdio".into())
        );
        assert_eq!(
            reports[3].http,
            Outcome::Failed("not in tools/list over Streamable HTTP".into())
        );
        let calls: Vec<(usize, Transport)> = jobs.iter().map(|j| (j.row, j.transport)).collect();
        assert_eq!(
            calls,
            [
                (0, Transport::Http),
                (0, Transport::Stdio),
                (1, Transport::Http),
                (2, Transport::Http),
                (3, Transport::Stdio),
            ]
        );
        assert!(jobs[0].output.is_some() && jobs[2].output.is_none());
    }

    #[test]
    fn a_transport_left_out_is_skipped_for_every_tool_and_never_called() {
        let tools = vec![
            tool("a", json!({"type": "object"}), None),
            tool("b", json!({"type": "object"}), None),
        ];
        let (reports, jobs) = plan(Some(&tools), None);
        assert_eq!(reports.len(), 2);
        for report in &reports {
            assert_eq!(report.http, Outcome::Ok);
            assert_eq!(
                report.stdio,
                Outcome::Skipped("not called (--transport http)".into())
            );
        }
        assert!(jobs.iter().all(|j| j.transport == Transport::Http) && jobs.len() == 2);
        let (reports, jobs) = plan(None, Some(&tools));
        assert_eq!(
            reports[0].http,
            Outcome::Skipped("not called (--transport stdio)".into())
        );
        assert!(jobs.iter().all(|j| j.transport == Transport::Stdio) && jobs.len() == 2);
        assert_eq!(Transport::from_key("stdio"), Some(Transport::Stdio));
        assert_eq!(Transport::from_key("sse"), None);
    }

    #[test]
    fn a_live_call_may_take_the_longest_upstream_timeout_and_a_margin() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = |toml: &str| {
            let path = dir.path().join("config.toml");
            std::fs::write(&path, toml).expect("written");
            Config::load(&path, &Overrides::default()).expect("loads")
        };
        let slow = config(
            "[apis.a]\nspec = \"a.yaml\"\ntimeout_seconds = 100\ntool_timeouts = { report = 200 }\n\
             [apis.b]\nspec = \"b.yaml\"\n",
        );
        assert_eq!(call_timeout(&slow), Duration::from_secs(210));
        let quick = config("[apis.a]\nspec = \"a.yaml\"\ntimeout_seconds = 2\n");
        assert_eq!(call_timeout(&quick), CALL_TIMEOUT);
    }

    #[test]
    fn the_child_gets_the_global_flags() {
        let options = Options {
            config: "cfg.toml".into(),
            overrides: Overrides {
                spec: Some("api.yaml".into()),
                base_url: Some("http://localhost:1".into()),
                max_name_length: Some(48),
                max_description_length: Some(0),
                mock: false,
            },
            live: false,
            only: None,
            concurrency: CONCURRENCY,
            executable: "restmcp".into(),
            progress: false,
        };
        let live = Options {
            live: true,
            ..options.clone()
        };
        assert_eq!(
            stdio_args(&live)[..4],
            ["stdio", "--config", "cfg.toml", "--spec"].map(OsString::from)
        );
        assert_eq!(
            stdio_args(&options),
            [
                "stdio",
                "--mock",
                "--config",
                "cfg.toml",
                "--spec",
                "api.yaml",
                "--base-url",
                "http://localhost:1",
                "--max-name-length",
                "48",
                "--max-description-length",
                "0"
            ]
            .map(OsString::from)
        );
    }
}
