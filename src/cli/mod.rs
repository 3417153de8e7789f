//! The command line: `restmcp serve` (the default), `stdio`, `init`, `tools`, `check`,
//! `call`, `explain`, `schema` and `selftest`. [`main`] parses the arguments and runs the command;
//! `tools`, `check` and `call` are a few lines each and run here.
//!
//! * [`args`]: the arguments as clap parses them (global flags, one variant per command).
//! * `serve`: `restmcp serve` over Streamable HTTP and `restmcp stdio`, with the start-up
//!   banner and hot reload.
//! * [`init`]: `restmcp init`, a commented `config.toml` for an API description, and what to
//!   paste into a client to start restmcp on it.
//! * [`explain`]: `restmcp explain TOOL`, one tool and where each piece of it came from
//!   (written by [`crate::catalog::explain`], which the console shows too).
//! * [`selftest`](mod@selftest): `restmcp selftest`, every tool called over both transports.
//! * [`editor_schema`]: `restmcp schema`, the JSON Schemas editors use for `config.toml` and
//!   overlay files.

use std::io::{IsTerminal as _, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser as _;

use crate::config::{Config, Overrides};
use crate::load::{self, Loaded};
use crate::upstream::{CallContext, Dispatcher};

pub mod args;
pub mod editor_schema;
pub mod explain;
pub mod init;
pub mod selftest;
mod serve;

use args::{Cli, Command, GlobalArgs};
use serve::serve;

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
    let global = cli.global;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Schema { which } => {
            let schema = editor_schema::by_name(&which)
                .with_context(|| format!("no schema named {which}"))?;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(schema.as_bytes())?;
            if !schema.ends_with('\n') {
                writeln!(stdout)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        // Loads the configuration itself (mocked unless --live) and needs a multi-thread runtime.
        Command::Selftest {
            json,
            live,
            transport,
            concurrency,
        } => {
            let options = selftest::Options {
                config: global.config.clone(),
                overrides: global.overrides(),
                live,
                only: transport.as_deref().and_then(selftest::Transport::from_key),
                concurrency: usize::from(concurrency),
                executable: std::env::current_exe()
                    .context("finding the restmcp executable to start for the stdio test")?,
                progress: std::io::stderr().is_terminal(),
            };
            selftest(json, options)
        }
        // Writes the file at --config rather than reading it.
        Command::Init {
            name,
            force,
            client,
        } => init::run(&global, name, force, client),
        command @ (Command::Serve | Command::Stdio) => {
            let config = Config::load(&global.config, &global.overrides())?;
            serve(command, config, &global)
        }
        Command::Explain { tool, json } => with_loaded(
            &global.config,
            &global.overrides(),
            |loaded, config, _, stdout| {
                explain::print(&loaded, &tool, json, config, stdout)?;
                Ok(ExitCode::SUCCESS)
            },
        ),
        Command::Call { tool, args } => call(&global, &tool, &args),
        Command::Tools {
            json,
            client,
            protocol_version,
        } => tools(&global, json, client.as_deref(), &protocol_version),
        Command::Check { json } => check(&global.config, &global.overrides(), json),
    }
}

/// `restmcp call TOOL --args JSON`: one call, its result printed as `tools/call` carries it;
/// exit code 1 for an error result.
fn call(global: &GlobalArgs, tool: &str, args: &str) -> anyhow::Result<ExitCode> {
    with_loaded(
        &global.config,
        &global.overrides(),
        |loaded, config, runtime, stdout| {
            let arguments = match serde_json::from_str::<serde_json::Value>(args) {
                Ok(serde_json::Value::Object(arguments)) => arguments,
                Ok(_) => anyhow::bail!("--args must be a JSON object"),
                Err(e) => anyhow::bail!("--args is not valid JSON: {e}"),
            };
            warn_skipped(&loaded);
            let dispatcher = Dispatcher::new(Arc::new(loaded.catalog), config)
                .map(crate::mock::plug)
                .map_err(anyhow::Error::msg)?;
            let result =
                runtime.block_on(dispatcher.call(tool, arguments, &CallContext::default()))?;
            let mut printed = serde_json::json!({
                "content": result.content,
                "isError": result.is_error,
            });
            if let Some(structured) = &result.structured {
                printed["structuredContent"] = structured.clone();
            }
            serde_json::to_writer_pretty(&mut *stdout, &printed)?;
            writeln!(stdout)?;
            Ok(if result.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        },
    )
}

/// `restmcp tools`: the tools as a table, or with `--json` the exact `tools/list` a client
/// (`client`, `protocol_version`) gets.
fn tools(
    global: &GlobalArgs,
    json: bool,
    client: Option<&str>,
    protocol_version: &str,
) -> anyhow::Result<ExitCode> {
    with_loaded(
        &global.config,
        &global.overrides(),
        |loaded, config, _, stdout| {
            warn_skipped(&loaded);
            if json {
                let listing = served_listing(loaded, config, client, protocol_version)?;
                let list: serde_json::Value = serde_json::from_slice(&listing)?;
                serde_json::to_writer_pretty(&mut *stdout, &list)?;
                writeln!(stdout)?;
            } else {
                write!(stdout, "{}", render_tools(&loaded))?;
            }
            Ok(ExitCode::SUCCESS)
        },
    )
}

/// `restmcp check` on the configuration at `path` (also what `init` runs on the file it
/// wrote): the report on stdout, exit code 1 when an operation could not be mapped or a
/// workflow `[workflows]` publishes could not be published.
fn check(path: &Path, overrides: &Overrides, json: bool) -> anyhow::Result<ExitCode> {
    with_loaded(path, overrides, |mut loaded, config, _, stdout| {
        load::report_dialects(&mut loaded, config);
        loaded.report.surface = crate::catalog::surface::surface(&loaded.catalog);
        if json {
            serde_json::to_writer_pretty(&mut *stdout, &loaded.report)?;
            writeln!(stdout)?;
        } else {
            write!(stdout, "{}", loaded.report.render())?;
        }
        let unpublished = loaded
            .report
            .workflows
            .iter()
            .any(|w| w.tool.is_none() && !w.excluded);
        let failed = loaded.report.skipped() > 0 || unpublished;
        // The process ends now, and its memory with it: freeing each of Microsoft Graph
        // beta's 22,361 tools first took 0.04 s of a 1.9 s `check`.
        std::mem::forget(loaded);
        Ok(if failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// Runs a command that works on the loaded configuration (`explain`, `call`, `tools`,
/// `check`): loads the one at `path` with `overrides` on a current-thread runtime and hands
/// `command` what was loaded, the configuration, the runtime and stdout.
fn with_loaded(
    path: &Path,
    overrides: &Overrides,
    command: impl FnOnce(
        Loaded,
        &Config,
        &tokio::runtime::Runtime,
        &mut std::io::StdoutLock<'static>,
    ) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    let config = Config::load(path, overrides)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let loaded = runtime.block_on(load::load(&config))?;
    let mut stdout = std::io::stdout().lock();
    command(loaded, &config, &runtime, &mut stdout)
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

/// The `tools/list` result a client named `client` gets on protocol `revision` from a
/// server of this configuration: the MCP layer's own listing of the snapshot `serve` and
/// `stdio` would serve (see [`crate::mcp::Snapshot::tools_list`]), every page gathered.
fn served_listing(
    loaded: Loaded,
    config: &Config,
    client: Option<&str>,
    revision: &str,
) -> anyhow::Result<Vec<u8>> {
    let dispatcher =
        Dispatcher::new(Arc::new(loaded.catalog), config).map_err(anyhow::Error::msg)?;
    let snapshot = crate::mcp::Snapshot::new(dispatcher)
        .with_presentation(crate::mcp::view::Presentation::from_config(config));
    snapshot
        .tools_list(client, revision)
        .map_err(anyhow::Error::msg)
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
