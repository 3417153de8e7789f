//! `restmcp serve` (Streamable HTTP, the default command) and `restmcp stdio`: load the
//! configuration, put its tools behind the MCP transports, print the start-up banner
//! ([`ApiSummary`] counts the tools per API), start hot reload when it is on, and run until
//! the client disconnects (stdio) or SIGINT/SIGTERM (HTTP).

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use super::args::{Command, GlobalArgs};
use super::warn_skipped;
use crate::config::{Config, DiscoveryMode};
use crate::load::{self, Loaded};
use crate::mcp::{self, ServerState, Snapshot};
use crate::upstream::Dispatcher;

/// Runs the server until the client disconnects (stdio) or a shutdown signal (HTTP).
pub(super) fn serve(
    command: Command,
    config: Config,
    global: &GlobalArgs,
) -> anyhow::Result<ExitCode> {
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

/// The store replicas share (`[server.store]`), connected now: a server that cannot reach
/// it does not start, rather than serve calls it cannot make safe.
async fn open_store(config: &Config) -> anyhow::Result<Arc<crate::store::Store>> {
    let store =
        crate::store::Store::open(&config.server.store, |name| std::env::var(name).ok()).await?;
    if config.server.store.url.is_some() {
        tracing::info!(store = store.describe(), "connected to the shared store");
    }
    Ok(Arc::new(store))
}

async fn serve_stdio(config: Config, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let baseline = watch_baseline(&config, global).await;
    let loaded = load::load(&config).await?;
    warn_skipped(&loaded);
    let summary = ApiSummary::of(&loaded, &config);
    let inputs = loaded.inputs;
    let snapshot =
        Snapshot::from_loaded(Arc::new(loaded.catalog), &config).map_err(anyhow::Error::msg)?;
    let store = open_store(&config).await?;
    let shared = ServerState::with_store(snapshot, &config.server, store)?;
    let shutdown = CancellationToken::new();
    let mut banner = format!(
        "restmcp {}: MCP over stdio, {}\n",
        env!("CARGO_PKG_VERSION"),
        summary.totals()
    );
    summary.write_apis(&mut banner);
    let watched = (inputs, baseline);
    spawn_reloader(&config, global, &shared, watched, &shutdown, &mut banner).await;
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
    let store = open_store(&config).await?;
    let shared = ServerState::with_store(Snapshot::new(empty), &config.server, store)?;
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
    let mut baseline = None;
    let loading = async {
        baseline = watch_baseline(&config, global).await;
        load::load(&config).await
    };
    let loaded = tokio::select! {
        loaded = loading => loaded,
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
    shared.swap(
        Snapshot::from_loaded(Arc::new(loaded.catalog), &config).map_err(anyhow::Error::msg)?,
    );
    control.readiness.set_loaded();
    crate::http::health::spawn_probes(
        control.readiness.clone(),
        shared.clone(),
        &config,
        control.stop.clone(),
    );
    let mut banner = banner(&config.server, &control, address, &summary);
    summary.write_apis(&mut banner);
    let watched = (inputs, baseline);
    spawn_reloader(
        &config,
        global,
        &shared,
        watched,
        &control.stop,
        &mut banner,
    )
    .await;
    if config.server.auth.is_none() && config.server.oauth.is_none() && !address.ip().is_loopback()
    {
        banner.push_str(&format!(
            "  warning: listening on {address} without [server.auth] or [server.oauth]: anyone who can reach it can call these tools\n"
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

/// The start-up banner's first lines: where MCP, health, metrics, the console and OAuth metadata are
/// served, and the mode and authentication (the APIs and reload follow).
fn banner(
    server_settings: &crate::config::ServerSettings,
    control: &crate::http::Control,
    address: std::net::SocketAddr,
    summary: &ApiSummary,
) -> String {
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
    if server_settings.console_enabled() {
        banner.push_str(&format!("  console               {base}/console\n"));
    }
    let mode = if server_settings.sessions {
        "sessions for initialize-based clients"
    } else {
        "stateless"
    };
    let auth = match (&server_settings.auth, &server_settings.oauth) {
        (_, Some(oauth)) => format!(
            "OAuth access tokens for {} ({} issuer(s)){}",
            oauth.resource,
            oauth.issuers.len(),
            if server_settings.auth.is_some() {
                ", or a static bearer token"
            } else {
                ""
            }
        ),
        (Some(_), None) => "bearer token required".to_string(),
        (None, None) => "none".to_string(),
    };
    if let Some(oauth) = &server_settings.oauth {
        let path = url::Url::parse(&oauth.resource)
            .map(|url| url.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        banner.push_str(&format!(
            "  oauth metadata        {base}{}{path}\n",
            crate::http::oauth::METADATA_PATH
        ));
    }
    banner.push_str(&format!(
        "  mode                  {mode}; authentication: {auth}\n"
    ));
    banner
}

/// Longest the start waits for hot reload's first look at the files and URLs it watches.
const WATCH_BASELINE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// When hot reload is on, its look at the files the configuration names, taken before they
/// are loaded (see [`spawn_reloader`]).
async fn watch_baseline(config: &Config, global: &GlobalArgs) -> Option<crate::reload::Baseline> {
    if !config.reload.enabled {
        return None;
    }
    let planned = load::planned_inputs(config);
    let set = crate::reload::watch_set(&global.config, &global.overrides(), &planned);
    let taken = tokio::time::timeout(WATCH_BASELINE_WAIT, crate::reload::Baseline::take(&set));
    match taken.await {
        Ok(baseline) => Some(baseline),
        // A file that does not answer (a hung network mount): loading decides what
        // happens; the watcher looks after the load, as it did before it looked first.
        Err(_) => {
            tracing::warn!(
                "hot reload had not looked at the files it watches {} s after start; it \
                 looks once they are loaded, and an edit made before then may go unnoticed",
                WATCH_BASELINE_WAIT.as_secs()
            );
            None
        }
    }
}

/// Starts hot reload when it is on, and says so in the banner. Returns once the watcher
/// has taken its baselines (at most [`WATCH_BASELINE_WAIT`]), so that an edit made after
/// the banner is always a change it sees. The files the configuration names keep the
/// `baseline` taken before the load: an edit made while they loaded is reloaded at once
/// (taken after the load, the edited file would have been the baseline, and never
/// reloaded). Files found while loading (those a spec's `$ref`s name) get theirs now.
async fn spawn_reloader(
    config: &Config,
    global: &GlobalArgs,
    shared: &Arc<ServerState>,
    (inputs, baseline): (crate::load::Inputs, Option<crate::reload::Baseline>),
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
    // The files' loop and the URLs' loop each report their first baselines.
    let (ready, mut baselines) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(reloader.run(inputs, stop.clone(), Some(ready), baseline));
    let both = async {
        for _ in 0..2 {
            if baselines.recv().await.is_none() {
                return;
            }
        }
    };
    if tokio::time::timeout(WATCH_BASELINE_WAIT, both)
        .await
        .is_err()
    {
        tracing::warn!(
            "hot reload had not looked at every file and URL it watches {} s after start; \
             an edit made before it does may go unnoticed until the next",
            WATCH_BASELINE_WAIT.as_secs()
        );
    }
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
            if let Some(listing) = loaded.catalog.listing(name)
                && (listing.chosen.is_some() || listing.discovery != DiscoveryMode::All)
            {
                target.push_str(&format!("  discovery: {}", listing.describe()));
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
