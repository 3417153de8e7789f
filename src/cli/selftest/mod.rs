//! `restmcp selftest`: every tool of a configuration called over both MCP transports, with
//! every API in mock mode, for a CI job that guards the YAML a user edits; with `--live`,
//! against the configured upstreams instead (a staging server, or a validating mock server
//! such as Stoplight Prism).
//!
//! The configuration is served twice, the way clients will meet it: over Streamable HTTP by
//! this process (on a loopback port of its own) and over stdio by a child `restmcp stdio
//! --mock` (`restmcp stdio` when live), each driven by the official SDK's client. Both
//! `tools/list` results must be the same; then every tool is called on both with arguments
//! generated from its inputSchema ([`crate::schema::example::example`]). The mock upstream
//! checks each request against its operation and answers 400 with the reasons when it does
//! not match, so a tool whose request comes out wrong fails here instead of in front of a
//! model; a live upstream that validates requests (Prism answers 422 with its violations)
//! does the same from outside. A result passes when it is not an error and, where the tool
//! promises an outputSchema, carries a `structuredContent` that validates against it. A
//! failed call's reason names the upstream's status and, for an RFC 9457 problem body, its
//! title and detail or Prism's `validation` list. Then every resource is read, every
//! template read at a URI made from values its variables can take, and every prompt got
//! with its required arguments filled (completions tried on the way), on both transports.
//! An API left to `discovery = "auto"` is listed whole on both servers, however large, so
//! that every tool is called; an explicit `search` or `meta` is tested as configured.
//!
//! One concept per file: `transports` starts the two servers (this process over Streamable
//! HTTP, a child over stdio) and connects the SDK's clients; `plan` compares the two
//! listings and prepares the calls (arguments generated from each inputSchema, outputSchemas
//! compiled); `calls` makes them, a few at a time, and judges each result; `live` is what
//! `--live` changes about a call (how long it may take); `surface` reads every resource and
//! template and gets every prompt afterwards; `reason` cuts an error result down to the
//! line that says what was wrong; `report` holds the outcomes and prints the table and the
//! JSON report.

mod calls;
mod live;
mod plan;
mod reason;
mod report;
mod surface;
mod transports;

use std::path::PathBuf;
use std::time::Instant;

use rmcp::service::ServiceError;

use crate::config::{Config, ConfigError, Overrides};
use crate::load::LoadError;

use calls::{Clients, Pace, call_all};
use live::{CALL_TIMEOUT, call_timeout};
use plan::plan;
use transports::{HttpLeg, StdioLeg, list};

pub use reason::error_reason;
pub use report::{Kind, Summary, SurfaceReport, ToolReport, Totals, Verdict};
pub use transports::Transport;

/// Calls in flight at once, over both transports together, unless `--concurrency` says
/// otherwise. The mock answers in microseconds, so this only needs to keep both servers
/// busy.
pub const CONCURRENCY: usize = 16;

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

/// Runs the selftest; `Err` only when it could not run (the configuration does not load,
/// a server does not start).
pub async fn run(options: &Options) -> Result<Summary, SelftestError> {
    let started = Instant::now();
    let overrides = Overrides {
        mock: !options.live || options.overrides.mock,
        ..options.overrides.clone()
    };
    let mut config = Config::load(&options.config, &overrides)?;
    // Every tool is called: an API left to `discovery = "auto"` is listed whole here, as a
    // small one would be (an explicit `search` or `meta` is tested as configured).
    config.tools.auto_budget_tokens = 0;
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
    let full_inputs = match &http {
        Some(leg) => leg.full_inputs.clone(),
        None => transports::FullInputs::new(std::sync::Arc::new(
            crate::load::load(&config).await?.catalog,
        )),
    };
    let (mut reports, jobs) = plan(http_tools.as_deref(), stdio_tools.as_deref(), &full_inputs);
    let probes = surface::plan(full_inputs.catalog());
    // The listings as the SDK parsed them (trees: for Microsoft Graph, hundreds of MB) are
    // not needed for the calls, nor is the catalog kept for the full inputSchemas.
    drop((http_tools, stdio_tools, full_inputs));
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
    let surface = surface::probe_all(&clients, probes, pace.timeout).await;
    if let Some(stdio) = stdio {
        stdio.stop().await;
    }
    if let Some(http) = http {
        http.stop().await;
    }
    Ok(Summary {
        tools: reports,
        surface,
        call_time,
        elapsed: started.elapsed(),
    })
}

#[cfg(test)]
mod tests;
