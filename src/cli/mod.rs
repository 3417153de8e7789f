//! The command line: `restmcp serve` (the default), `stdio`, `tools`, `check`, `call` and
//! `selftest`.

use std::io::{IsTerminal as _, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use std::sync::Arc;

use crate::config::{Config, Overrides};
use crate::load::{self, Loaded};
use tokio_util::sync::CancellationToken;

use crate::mcp::{self, Shared, Snapshot};
use crate::upstream::{CallContext, Dispatcher};

pub mod editor_schema;
pub mod explain;
pub mod selftest;

#[derive(Debug, Parser)]
#[command(
    name = "restmcp",
    version,
    about = "Serve REST APIs described by OpenAPI as MCP tools"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do; without one, `serve`.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Configuration file.
    #[arg(
        long,
        short,
        global = true,
        env = "RESTMCP_CONFIG",
        default_value = "config.toml"
    )]
    pub config: PathBuf,
    /// Use this spec (file or URL) instead of the APIs in the configuration file.
    #[arg(long, global = true)]
    pub spec: Option<String>,
    /// With --spec: the upstream base URL, overriding the spec's servers.
    #[arg(long, global = true, requires = "spec")]
    pub base_url: Option<String>,
    /// Longest tool name (overrides tools.max_name_length).
    #[arg(long, global = true)]
    pub max_name_length: Option<usize>,
    /// Longest tool description in characters, 0 for no limit.
    #[arg(long, global = true)]
    pub max_description_length: Option<usize>,
    /// Answer every call from the specs themselves (examples, or values generated from the
    /// response schemas) instead of calling the upstream APIs.
    #[arg(long, global = true)]
    pub mock: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over Streamable HTTP at /mcp on `server.listen` (the default command).
    Serve,
    /// Serve MCP over stdin/stdout, for desktop clients that start restmcp themselves.
    Stdio,
    /// Print the tools the configured APIs produce.
    Tools {
        /// Print the exact `tools/list` result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Report, per operation, how it was mapped or why it was skipped; exits non-zero if
    /// any operation could not be mapped.
    Check {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print one tool as clients see it, and where each piece of it came from (spec,
    /// overlay, x-mcp extension, config or default).
    Explain {
        /// The tool name, as `restmcp tools` lists it.
        tool: String,
        /// Print the tool, its route and provenance as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of `config.toml` or of overlay files, for editors and CI.
    Schema {
        /// `config` or `overlay`.
        #[arg(value_parser = ["config", "overlay"])]
        which: String,
    },
    /// Call one tool against its upstream API and print the result as MCP would return it;
    /// exits non-zero when the result is an error.
    Call {
        /// The tool name, as `restmcp tools` lists it.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
    /// Call every tool over Streamable HTTP and stdio with every API mocked, and report
    /// the calls that failed; exits non-zero when any did. For CI, after editing YAML.
    Selftest {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Call the configured upstreams instead of the mock (APIs set to `mock = true`
        /// stay mocked): for a staging server, or a mock server that validates requests
        /// such as Stoplight Prism. WARNING: every operation is called, writes included
        /// (POST, PUT, PATCH, DELETE), once per transport, with generated arguments; never
        /// point it at production data.
        #[arg(long, conflicts_with = "mock")]
        live: bool,
        /// Serve and call over this transport only (`http` or `stdio`); the other one's
        /// outcomes are reported as skipped. Default: both.
        #[arg(long, value_parser = ["http", "stdio"])]
        transport: Option<String>,
        /// Calls in flight at once; lower it for an upstream that answers slowly.
        #[arg(long, default_value_t = selftest::CONCURRENCY as u16,
              value_parser = clap::value_parser!(u16).range(1..=256))]
        concurrency: u16,
    },
}

impl GlobalArgs {
    fn overrides(&self) -> Overrides {
        Overrides {
            spec: self.spec.clone(),
            base_url: self.base_url.clone(),
            max_name_length: self.max_name_length,
            max_description_length: self.max_description_length,
            mock: self.mock,
        }
    }
}

/// Runs the command line; errors become a message on stderr and exit code 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Some(Command::Schema { which }) = &cli.command {
        let schema =
            editor_schema::by_name(which).with_context(|| format!("no schema named {which}"))?;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(schema.as_bytes())?;
        if !schema.ends_with('\n') {
            writeln!(stdout)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Loads the configuration itself (mocked unless --live) and needs a multi-thread runtime.
    if let Some(Command::Selftest {
        json,
        live,
        transport,
        concurrency,
    }) = &cli.command
    {
        let options = selftest::Options {
            config: cli.global.config.clone(),
            overrides: cli.global.overrides(),
            live: *live,
            only: transport.as_deref().and_then(selftest::Transport::from_key),
            concurrency: usize::from(*concurrency),
            executable: std::env::current_exe()
                .context("finding the restmcp executable to start for the stdio test")?,
            progress: std::io::stderr().is_terminal(),
        };
        return selftest(*json, options);
    }
    let config = Config::load(&cli.global.config, &cli.global.overrides())?;
    let command = cli.command.unwrap_or(Command::Serve);
    if matches!(command, Command::Serve | Command::Stdio) {
        return serve(command, config, &cli.global);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let loaded = runtime.block_on(load::load(&config))?;
    let mut stdout = std::io::stdout().lock();
    match command {
        Command::Serve | Command::Stdio | Command::Schema { .. } | Command::Selftest { .. } => {
            unreachable!("handled above")
        }
        Command::Explain { tool, json } => {
            let Some(found) = loaded.catalog.get(&tool) else {
                let names: Vec<&str> = loaded
                    .catalog
                    .tools()
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect();
                let hint = crate::catalog::naming::closest(&tool, &names)
                    .map(|c| format!("; did you mean \"{c}\"?"))
                    .unwrap_or_default();
                anyhow::bail!("no tool named \"{tool}\"{hint} (`restmcp tools` lists them)");
            };
            if json {
                let provenance: serde_json::Map<String, serde_json::Value> = found
                    .provenance
                    .iter()
                    .map(|(what, source)| (what.clone(), serde_json::json!(source)))
                    .collect();
                let explained = serde_json::json!({
                    "tool": found.to_mcp(),
                    "route": found.route,
                    "origin": found.origin,
                    "provenance": provenance,
                });
                serde_json::to_writer_pretty(&mut stdout, &explained)?;
                writeln!(stdout)?;
            } else {
                write!(stdout, "{}", explain::render(found, &config))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Call { tool, args } => {
            let arguments = match serde_json::from_str::<serde_json::Value>(&args) {
                Ok(serde_json::Value::Object(arguments)) => arguments,
                Ok(_) => anyhow::bail!("--args must be a JSON object"),
                Err(e) => anyhow::bail!("--args is not valid JSON: {e}"),
            };
            warn_skipped(&loaded);
            let dispatcher =
                Dispatcher::new(Arc::new(loaded.catalog), &config).map_err(anyhow::Error::msg)?;
            let result =
                runtime.block_on(dispatcher.call(&tool, arguments, &CallContext::default()))?;
            let mut printed = serde_json::json!({
                "content": result.content,
                "isError": result.is_error,
            });
            if let Some(structured) = &result.structured {
                printed["structuredContent"] = structured.clone();
            }
            serde_json::to_writer_pretty(&mut stdout, &printed)?;
            writeln!(stdout)?;
            Ok(if result.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Tools { json } => {
            if json {
                let list: serde_json::Value = serde_json::from_str(loaded.catalog.list_json())?;
                serde_json::to_writer_pretty(&mut stdout, &list)?;
                writeln!(stdout)?;
            } else {
                write!(stdout, "{}", render_tools(&loaded))?;
            }
            warn_skipped(&loaded);
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { json } => {
            let mut loaded = loaded;
            load::report_dialects(&mut loaded, &config);
            if json {
                serde_json::to_writer_pretty(&mut stdout, &loaded.report)?;
                writeln!(stdout)?;
            } else {
                write!(stdout, "{}", loaded.report.render())?;
            }
            Ok(if loaded.report.skipped() > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Runs the server until the client disconnects (stdio) or a shutdown signal (HTTP).
fn serve(command: Command, config: Config, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(&config.log);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime.block_on(async {
        match command {
            Command::Stdio => serve_stdio(config, global).await,
            _ => serve_http(config, global).await,
        }
    });
    // A reload abandoned while a read blocked (a FIFO, a hung network mount) leaves a thread
    // of the blocking pool that may never return; dropping the runtime would wait for it,
    // and the process would never exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    crate::telemetry::writer::flush();
    served
}

async fn serve_stdio(config: Config, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let loaded = load::load(&config).await?;
    warn_skipped(&loaded);
    let summary = ApiSummary::of(&loaded, &config);
    let inputs = loaded.inputs;
    let dispatcher =
        Dispatcher::new(Arc::new(loaded.catalog), &config).map_err(anyhow::Error::msg)?;
    let snapshot = Snapshot::new(dispatcher)
        .with_presentation(crate::mcp::view::Presentation::from_config(&config));
    let shared = Shared::with_settings(snapshot, &config.server);
    let shutdown = CancellationToken::new();
    let mut banner = format!(
        "restmcp {}: MCP over stdio, {}\n",
        env!("CARGO_PKG_VERSION"),
        summary.totals()
    );
    summary.write_apis(&mut banner);
    spawn_reloader(&config, global, &shared, inputs, &shutdown, &mut banner);
    crate::telemetry::writer::flush();
    eprint!("{banner}");
    let served = mcp::stdio::serve(shared, config.server.max_request_bytes)
        .await
        .map_err(anyhow::Error::msg);
    shutdown.cancel();
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Listens first, so `/healthz` answers (and `/readyz` says "loading") while a large or
/// remote spec loads; MCP requests get 503 until the tool set is in place.
async fn serve_http(config: Config, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let listener = tokio::net::TcpListener::bind(&config.server.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.server.listen))?;
    let address = listener.local_addr()?;
    let control = crate::http::Control::new(&config.server)?;
    let empty = Dispatcher::with_settings(Arc::default(), Default::default())
        .map_err(anyhow::Error::msg)?;
    let shared = Shared::with_settings(Snapshot::new(empty), &config.server);
    let app = crate::http::app(shared.clone(), &config.server, &control);
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    let control = Arc::new(control);
    let server = {
        let control = control.clone();
        let shutdown = shutdown.clone();
        let threads = config.server.threads;
        tokio::spawn(crate::http::serve(
            listener, app, control, shutdown, threads,
        ))
    };
    let loaded = tokio::select! {
        loaded = load::load(&config) => loaded,
        _ = shutdown.cancelled() => {
            control.stop.cancel();
            return Ok(ExitCode::SUCCESS);
        }
    };
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            shutdown.cancel();
            control.stop.cancel();
            return Err(error.into());
        }
    };
    warn_skipped(&loaded);
    let summary = ApiSummary::of(&loaded, &config);
    let inputs = loaded.inputs;
    let dispatcher =
        Dispatcher::new(Arc::new(loaded.catalog), &config).map_err(anyhow::Error::msg)?;
    shared.swap(
        Snapshot::new(dispatcher)
            .with_presentation(crate::mcp::view::Presentation::from_config(&config)),
    );
    control.readiness.set_loaded();
    crate::http::health::spawn_probes(
        control.readiness.clone(),
        shared.clone(),
        &config,
        control.stop.clone(),
    );
    let server_settings = &config.server;
    let base = format!("{}://{address}", control.scheme());
    // Scripts read the URL from this first line.
    let mut banner = format!(
        "restmcp {}: MCP over Streamable HTTP at {base}/mcp, {}\n",
        env!("CARGO_PKG_VERSION"),
        summary.totals()
    );
    if server_settings.legacy_sse {
        banner.push_str(&format!("  MCP (legacy HTTP+SSE) {base}/sse\n"));
    }
    banner.push_str(&format!(
        "  health                {base}/healthz  {base}/readyz\n"
    ));
    if server_settings.metrics {
        banner.push_str(&format!("  metrics               {base}/metrics\n"));
    }
    let mode = if server_settings.sessions {
        "sessions for initialize-based clients"
    } else {
        "stateless"
    };
    let auth = match &server_settings.auth {
        Some(_) => "bearer token required",
        None => "none",
    };
    banner.push_str(&format!(
        "  mode                  {mode}; authentication: {auth}\n"
    ));
    summary.write_apis(&mut banner);
    spawn_reloader(&config, global, &shared, inputs, &control.stop, &mut banner);
    if server_settings.auth.is_none() && !address.ip().is_loopback() {
        banner.push_str(&format!(
            "  warning: listening on {address} without [server.auth]: anyone who can reach it can call these tools\n"
        ));
    }
    crate::telemetry::writer::flush();
    eprint!("{banner}");
    let served = server.await.map_err(anyhow::Error::new)?;
    served?;
    crate::telemetry::writer::flush();
    eprintln!("restmcp: stopped");
    Ok(ExitCode::SUCCESS)
}

/// Starts hot reload when it is on, and says so in the banner.
fn spawn_reloader(
    config: &Config,
    global: &GlobalArgs,
    shared: &Arc<Shared>,
    inputs: crate::load::Inputs,
    stop: &CancellationToken,
    banner: &mut String,
) {
    if !config.reload.enabled {
        return;
    }
    let reloader = crate::reload::Reloader {
        config_path: global.config.clone(),
        overrides: global.overrides(),
        shared: shared.clone(),
        config: config.clone(),
    };
    tokio::spawn(reloader.run(inputs, stop.clone()));
    banner.push_str("  reloading on change and SIGHUP\n");
}

/// Tool counts per API, for the start-up banner.
struct ApiSummary {
    apis: Vec<(String, usize, String)>,
    tools: usize,
}

impl ApiSummary {
    fn of(loaded: &Loaded, config: &Config) -> ApiSummary {
        let mut apis = Vec::new();
        for (name, api) in &config.apis {
            let tools: Vec<&crate::catalog::Tool> = loaded
                .catalog
                .tools()
                .iter()
                .filter(|t| &t.route.api == name)
                .collect();
            let mut target = if api.mock {
                "mock".to_string()
            } else {
                tools
                    .iter()
                    .find_map(|t| t.route.base_url.clone())
                    .map(|url| format!("→ {url}"))
                    .unwrap_or_default()
            };
            if api.discovery != crate::config::Discovery::All {
                target.push_str(&format!(" (discovery: {})", api.discovery.as_str()));
            }
            apis.push((name.clone(), tools.len(), target));
        }
        ApiSummary {
            tools: loaded.catalog.len(),
            apis,
        }
    }

    fn totals(&self) -> String {
        format!("{} tools from {} API(s)", self.tools, self.apis.len())
    }

    fn write_apis(&self, out: &mut String) {
        let width = self.apis.iter().map(|(n, ..)| n.len()).max().unwrap_or(0);
        for (name, tools, target) in &self.apis {
            out.push_str(&format!(
                "  API {name:<width$}  {tools:>5} tools  {target}\n"
            ));
        }
    }
}

/// Runs `restmcp selftest`; exit code 1 when any call failed.
fn selftest(json: bool, options: selftest::Options) -> anyhow::Result<ExitCode> {
    if options.live {
        eprintln!(
            "selftest --live: calling every operation of the configured upstreams with \
             generated arguments, writes included, once over {}",
            options
                .only
                .map_or_else(|| "each transport".to_string(), |t| t.to_string())
        );
    }
    // Two servers and two clients at once: a current-thread runtime would serialize them.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let summary = runtime.block_on(selftest::run(&options))?;
    let mut stdout = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut stdout, &summary.to_json())?;
        writeln!(stdout)?;
    } else {
        write!(stdout, "{}", summary.render())?;
    }
    Ok(if summary.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// SIGINT or SIGTERM starts a graceful shutdown.
async fn cancel_on_signal(shutdown: CancellationToken) {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {}
        _ = terminate => {}
    }
    shutdown.cancel();
}

fn render_tools(loaded: &Loaded) -> String {
    let tools = loaded.catalog.tools();
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for tool in tools {
        let summary = tool
            .title
            .clone()
            .unwrap_or_else(|| tool.description.lines().next().unwrap_or("").to_string());
        out.push_str(&format!(
            "{:<width$}  {:<7} {}  {}\n",
            tool.name,
            tool.route.method.as_str(),
            tool.route.path,
            summary
        ));
    }
    out.push_str(&format!(
        "{} tools; tools/list is {} bytes ≈ {} tokens\n",
        tools.len(),
        loaded.report.list_bytes,
        loaded.report.estimated_tokens()
    ));
    out
}

fn warn_skipped(loaded: &Loaded) {
    let skipped = loaded.report.skipped();
    if skipped > 0 {
        eprintln!(
            "warning: {skipped} operation(s) could not be mapped; run `restmcp check` for the reasons"
        );
    }
}
