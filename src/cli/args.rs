//! The command line as clap parses it, before anything is loaded: the global flags
//! ([`GlobalArgs`], shared by every command) and one [`Command`] variant per subcommand with
//! its own flags. [`GlobalArgs::overrides`] turns the global flags into the
//! [`Overrides`] the configuration layers on top of `config.toml` and the environment;
//! the commands themselves run in [`super`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;

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
    /// The most a JSON result may hold, in estimated tokens, for every API (overrides
    /// apis.NAME.max_result_tokens); 0 for no limit.
    #[arg(long, global = true)]
    pub max_result_tokens: Option<u64>,
    /// Answer every call from the specs themselves (examples, or values generated from the
    /// response schemas) instead of calling the upstream APIs.
    #[arg(long, global = true)]
    pub mock: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented config.toml (at --config) for the API description given with
    /// --spec FILE|URL, then check it; or, with --client, print what to paste into an MCP
    /// client to start restmcp on an existing config.
    Init {
        /// With --spec: the API's name in the config (default: made from the description's
        /// title).
        #[arg(long, conflicts_with = "client")]
        name: Option<String>,
        /// With --spec: replace the file at --config if it exists.
        #[arg(long, conflicts_with = "client")]
        force: bool,
        /// Print the configuration snippet (or command) for this client, for the config at
        /// --config: claude-desktop, claude-code, cursor or vscode.
        #[arg(long, value_enum, value_name = "CLIENT")]
        client: Option<ClientKind>,
    },
    /// Serve MCP over Streamable HTTP at /mcp on `server.listen` (the default command).
    Serve,
    /// Serve MCP over stdin/stdout, for desktop clients that start restmcp themselves.
    Stdio,
    /// Print the tools the configured APIs produce.
    Tools {
        /// Print the exact `tools/list` result a client gets from `restmcp serve` or `stdio`
        /// with this configuration, every page gathered into one `{"tools": [...]}`: the
        /// discovery tools of search and meta modes and the status tool of long-running
        /// operations included, shaped for `--client` and `--protocol-version`.
        #[arg(long)]
        json: bool,
        /// With --json: the client's `clientInfo.name`, as `[[clients]]` rules match it.
        /// Default: a client no rule matches.
        #[arg(long, value_name = "NAME", requires = "json")]
        client: Option<String>,
        /// With --json: the protocol revision the client negotiated (2024-11-05, 2025-03-26,
        /// 2025-06-18, 2025-11-25 or 2026-07-28).
        #[arg(
            long,
            value_name = "REVISION",
            default_value = "2025-11-25",
            requires = "json"
        )]
        protocol_version: String,
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
        #[arg(long, default_value_t = super::selftest::CONCURRENCY as u16,
              value_parser = clap::value_parser!(u16).range(1..=256))]
        concurrency: u16,
    },
}

impl GlobalArgs {
    /// The global flags as the configuration's overrides.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            spec: self.spec.clone(),
            base_url: self.base_url.clone(),
            max_name_length: self.max_name_length,
            max_description_length: self.max_description_length,
            max_result_tokens: self.max_result_tokens,
            mock: self.mock,
        }
    }
}

/// The clients `init --client` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientKind {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
}
