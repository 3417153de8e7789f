//! `restmcp init --client NAME`: what to paste into an MCP client so that it starts
//! `restmcp stdio` on an existing configuration. The snippet goes to stdout (JSON for the
//! clients configured by a file, the `claude mcp add` command for Claude Code), where it
//! goes to stderr, so `restmcp init --client cursor > .cursor/mcp.json` works.
//!
//! The formats, as the clients document them (checked November 2026):
//! * Claude Desktop, `claude_desktop_config.json`: `{"mcpServers": {NAME: {"command",
//!   "args", "env"}}}`;
//! * Cursor, `.cursor/mcp.json` or `~/.cursor/mcp.json`: the same `mcpServers` shape;
//! * VS Code, `.vscode/mcp.json`: `{"servers": {NAME: {"type": "stdio", "command", "args",
//!   "env"}}}`;
//! * Claude Code: `claude mcp add --transport stdio [--env K=V…] NAME -- COMMAND ARGS…`
//!   (options before the name).
//!
//! Desktop clients start restmcp without the user's shell environment, so every variable
//! the configuration names (`*_env` keys) is put in the snippet, with a placeholder value.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::{Value, json};

use crate::cli::args::ClientKind;
use crate::config::{Config, Overrides};

/// How a client starts restmcp on one configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The server's name in the client: the configuration's only API, else `restmcp`.
    pub name: String,
    /// The restmcp executable, absolute.
    pub command: PathBuf,
    /// The configuration file, absolute.
    pub config: PathBuf,
    /// The environment variables the configuration reads, sorted.
    pub env: Vec<String>,
}

/// The placeholder put where a variable's value goes in a JSON snippet.
pub const PLACEHOLDER: &str = "<value>";

/// Prints the snippet for `kind` to stdout and where it goes to stderr.
pub fn print(kind: ClientKind, config_path: &Path) -> anyhow::Result<ExitCode> {
    let config = Config::load(config_path, &Overrides::default()).with_context(|| {
        format!(
            "init --client needs the configuration the client will start restmcp with; \
             write one with `restmcp init --spec FILE|URL -c {}`",
            config_path.display()
        )
    })?;
    let launch = Launch {
        name: server_name(&config),
        command: std::env::current_exe().context("finding the restmcp executable")?,
        config: std::fs::canonicalize(config_path)
            .with_context(|| format!("finding {}", config_path.display()))?,
        env: env_names(&config)?,
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", snippet(kind, &launch))?;
    eprintln!("{}", where_it_goes(kind, &launch));
    Ok(ExitCode::SUCCESS)
}

/// The configuration's only API name, else `restmcp`.
pub fn server_name(config: &Config) -> String {
    match config.apis.keys().collect::<Vec<_>>().as_slice() {
        [only] => (*only).clone(),
        _ => "restmcp".to_string(),
    }
}

/// Every environment variable the configuration names: the values of its `*_env` keys
/// (strings, or lists of them as `server.auth.tokens_env`), sorted, without repeats.
pub fn env_names(config: &Config) -> anyhow::Result<Vec<String>> {
    let value = serde_json::to_value(config).context("reading the configuration")?;
    let mut names = Vec::new();
    collect_env(&value, &mut names);
    names.sort();
    names.dedup();
    Ok(names)
}

fn collect_env(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if key.ends_with("_env") {
                    match value {
                        Value::String(name) => names.push(name.clone()),
                        Value::Array(items) => {
                            names.extend(items.iter().filter_map(Value::as_str).map(str::to_string))
                        }
                        _ => {}
                    }
                } else {
                    collect_env(value, names);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_env(item, names)),
        _ => {}
    }
}

/// What to paste: JSON for the file-configured clients, a command for Claude Code.
pub fn snippet(kind: ClientKind, launch: &Launch) -> String {
    match kind {
        ClientKind::ClaudeCode => claude_mcp_add(launch),
        ClientKind::ClaudeDesktop | ClientKind::Cursor => {
            pretty(&json!({"mcpServers": {launch.name.clone(): server_entry(launch, false)}}))
        }
        ClientKind::Vscode => {
            pretty(&json!({"servers": {launch.name.clone(): server_entry(launch, true)}}))
        }
    }
}

fn pretty(value: &Value) -> String {
    // Serializing a JSON value cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// One server's entry: command, args, env (and VS Code's `"type": "stdio"`).
fn server_entry(launch: &Launch, typed: bool) -> Value {
    let mut entry = serde_json::Map::new();
    if typed {
        entry.insert("type".into(), json!("stdio"));
    }
    entry.insert("command".into(), json!(launch.command.to_string_lossy()));
    entry.insert("args".into(), json!(args(launch)));
    if !launch.env.is_empty() {
        let env: serde_json::Map<String, Value> = launch
            .env
            .iter()
            .map(|name| (name.clone(), json!(PLACEHOLDER)))
            .collect();
        entry.insert("env".into(), Value::Object(env));
    }
    Value::Object(entry)
}

/// `stdio --config /abs/config.toml`.
fn args(launch: &Launch) -> Vec<String> {
    vec![
        "stdio".to_string(),
        "--config".to_string(),
        launch.config.to_string_lossy().into_owned(),
    ]
}

/// `claude mcp add --transport stdio --env VAR="$VAR" NAME -- /abs/restmcp stdio --config …`:
/// the variables' values come from the shell the command is run in.
fn claude_mcp_add(launch: &Launch) -> String {
    let mut words = vec![
        "claude".to_string(),
        "mcp".into(),
        "add".into(),
        "--transport".into(),
        "stdio".into(),
    ];
    for name in &launch.env {
        words.push("--env".into());
        words.push(format!("{}=\"${name}\"", shell_word(name)));
    }
    words.push(shell_word(&launch.name));
    words.push("--".into());
    words.push(shell_word(&launch.command.to_string_lossy()));
    words.extend(args(launch).iter().map(|arg| shell_word(arg)));
    words.join(" ")
}

/// `text` as one POSIX shell word: as it is when it holds only safe characters, else in
/// single quotes.
pub fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c));
    if safe {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Where the snippet goes, and what to replace in it.
pub fn where_it_goes(kind: ClientKind, launch: &Launch) -> String {
    let place = match kind {
        ClientKind::ClaudeDesktop => {
            "Paste the server under \"mcpServers\" in claude_desktop_config.json (Claude Desktop: \
             Settings > Developer > Edit Config), beside any servers already there, and restart \
             Claude Desktop. The file is\n  macOS:   ~/Library/Application Support/Claude/claude_desktop_config.json\n  \
             Windows: %APPDATA%\\Claude\\claude_desktop_config.json"
        }
        ClientKind::Cursor => {
            "Paste the server under \"mcpServers\" in .cursor/mcp.json in a project (that project \
             only) or ~/.cursor/mcp.json (every project), beside any servers already there."
        }
        ClientKind::Vscode => {
            "Paste the server under \"servers\" in .vscode/mcp.json in the workspace (or in the \
             user configuration: command \"MCP: Open User Configuration\"), beside any servers \
             already there."
        }
        ClientKind::ClaudeCode => {
            "Run the command in a terminal: it adds the server to Claude Code for this project \
             (add --scope user before the name for every project)."
        }
    };
    let mut text = place.to_string();
    if !launch.env.is_empty() {
        let names = launch.env.join(", ");
        text.push_str(&match kind {
            ClientKind::ClaudeCode => format!(
                "\nThe configuration reads {names}: the command copies their values from the shell \
                 it runs in, so set them there first."
            ),
            _ => format!(
                "\nThe client starts restmcp without your shell's environment: replace each \
                 \"{PLACEHOLDER}\" with the value of {names}."
            ),
        });
    }
    text
}
