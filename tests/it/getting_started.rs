//! The getting-started chapter (docs/src/getting-started.md), run as a new user would: every
//! command of its ```sh blocks, in order, as written, with `restmcp` on the PATH. Two things
//! are swapped: the host of the Petstore description's URL, for a loopback server that
//! serves that description and answers the calls the chapter makes, and the port
//! `restmcp serve` listens on (0, then the one it reports). A block right after
//! `<!-- test: skip … -->` is not run (the release build of `cargo install`).
//!
//! The path it proves: `init` from a spec URL → `check` passes → `call` → `serve` → a tool
//! called over the stateless 2026-07-28 revision with curl → `init --client` snippets, one
//! of which is then started as a client would start it, over stdio with the rmcp client.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::HeaderMap;
use axum::routing::get;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};

const CHAPTER: &str = "docs/src/getting-started.md";
/// The description's URL as the chapter gives it; its host is what the test replaces.
const PETSTORE_HOST: &str = "https://petstore3.swagger.io";
/// `restmcp serve`'s address as the chapter gives it.
const LISTEN: &str = "127.0.0.1:8080";

/// One ```sh block of the chapter: its commands (continuation lines joined), and whether
/// it is marked not to run.
#[derive(Debug)]
struct Block {
    commands: Vec<String>,
    skipped: bool,
}

fn chapter() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(CHAPTER))
        .expect("the getting-started chapter")
}

/// The ```sh and ```console blocks of `markdown`, in order.
fn shell_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines().peekable();
    let mut previous = "";
    while let Some(line) = lines.next() {
        let fence = line.trim_start();
        if fence == "```sh" || fence == "```console" {
            let skipped = previous.trim_start().starts_with("<!-- test: skip");
            let mut commands = Vec::new();
            let mut current = String::new();
            for body in lines.by_ref() {
                if body.trim_start().starts_with("```") {
                    break;
                }
                let body = body.trim();
                if current.is_empty() && (body.is_empty() || body.starts_with('#')) {
                    continue;
                }
                match body.strip_suffix('\\') {
                    Some(start) => {
                        current.push_str(start);
                        current.push(' ');
                    }
                    None => {
                        current.push_str(body);
                        commands.push(std::mem::take(&mut current));
                    }
                }
            }
            blocks.push(Block { commands, skipped });
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    blocks
}

/// The Petstore description as petstore3.swagger.io serves it at /api/v3/openapi.json:
/// JSON, with the relative server `/api/v3`.
fn petstore_json() -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/petstore.yaml"))
            .expect("specs/petstore.yaml");
    let mut spec: Value = serde_saphyr::from_str(&text).expect("petstore YAML");
    spec["servers"] = json!([{"url": "/api/v3"}]);
    spec.to_string()
}

/// A loopback Petstore: the description, and pet 1. Records the `api_key` header of each
/// call.
async fn petstore() -> (String, Arc<Mutex<Vec<String>>>) {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    let description = petstore_json();
    let app = Router::new()
        .route(
            "/api/v3/openapi.json",
            get(move || {
                let description = description.clone();
                async move { ([("content-type", "application/json")], description) }
            }),
        )
        .route(
            "/api/v3/pet/{id}",
            get(move |headers: HeaderMap| {
                let seen = seen.clone();
                async move {
                    let key = headers
                        .get("api_key")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    seen.lock().expect("lock").push(key);
                    axum::Json(json!({
                        "id": 1, "name": "doggie", "photoUrls": [], "status": "available",
                        "category": {"id": 1, "name": "Dogs"}, "tags": []
                    }))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), keys)
}

/// The directory of the restmcp binary under test, first on a PATH.
fn path_with_restmcp() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_restmcp"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&rest));
    std::env::join_paths(paths)
        .expect("PATH")
        .to_string_lossy()
        .into_owned()
}

/// The shell the chapter's commands run in: `dir`, the PATH, and the variables the
/// chapter exported so far.
struct Shell {
    dir: PathBuf,
    path: String,
    exported: Vec<(String, String)>,
}

impl Shell {
    fn command(&self, line: &str) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(line)
            .current_dir(&self.dir)
            .env("PATH", &self.path)
            .env_remove("RESTMCP_CONFIG")
            .env("RUST_LOG", "warn")
            .envs(self.exported.iter().map(|(k, v)| (k, v)));
        command
    }

    fn run(&mut self, line: &str) -> Output {
        if let Some(assignment) = line.strip_prefix("export ") {
            let (name, value) = assignment.split_once('=').expect("export NAME=VALUE");
            self.exported
                .push((name.to_string(), value.trim_matches('\'').to_string()));
        }
        let output = self.command(line).output().expect("run sh");
        assert!(
            output.status.success(),
            "`{line}` failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Starts `line` (`restmcp serve`) with the listen port swapped for a free one, and
    /// returns the child and the address it reports.
    async fn start_server(&self, line: &str) -> (tokio::process::Child, String) {
        // `exec`: the shell becomes restmcp, so killing the child on drop stops the server
        // (a shell that forks would leave it running, orphaned, after the test).
        let mut command = tokio::process::Command::from(self.command(&format!("exec {line}")));
        let mut child = command
            .env("RESTMCP_SERVER__LISTEN", "127.0.0.1:0")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start restmcp serve");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let address = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(rest) = line.split("Streamable HTTP at http://").nth(1) {
                    return rest.split('/').next().unwrap_or_default().to_string();
                }
            }
            panic!("restmcp serve ended without a banner")
        })
        .await
        .expect("restmcp serve starts within 30 s");
        // Keep reading stderr, so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        (child, address)
    }
}

#[test]
fn the_chapter_marks_only_the_install_block_not_to_run() {
    let blocks = shell_blocks(&chapter());
    let skipped: Vec<&Block> = blocks.iter().filter(|b| b.skipped).collect();
    assert_eq!(skipped.len(), 1, "{blocks:?}");
    assert_eq!(skipped[0].commands, ["cargo install --locked --path ."]);
    assert!(blocks.len() >= 6, "{blocks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_of_the_getting_started_chapter_runs_from_a_spec_url_to_a_client() {
    let (origin, keys) = petstore().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut shell = Shell {
        dir: dir.path().to_path_buf(),
        path: path_with_restmcp(),
        exported: Vec::new(),
    };
    let mut server: Option<(tokio::process::Child, String)> = None;
    let mut ran = Vec::new();
    for block in shell_blocks(&chapter()).iter().filter(|b| !b.skipped) {
        for written in &block.commands {
            let mut line = written.replace(PETSTORE_HOST, &origin);
            if written.starts_with("restmcp serve") {
                server = Some(shell.start_server(&line).await);
                ran.push(written.clone());
                continue;
            }
            if let Some((_, address)) = &server {
                line = line.replace(LISTEN, address);
            }
            let output = tokio::task::block_in_place(|| shell.run(&line));
            check_output(written, &output, &origin, &dir.path().join("config.toml"));
            ran.push(written.clone());
        }
    }
    let ran_one = |prefix: &str| ran.iter().any(|line| line.starts_with(prefix));
    for step in [
        "restmcp init --spec https://petstore3.swagger.io/api/v3/openapi.json",
        "restmcp check",
        "restmcp call getPetById",
        "restmcp serve",
        "curl",
        "restmcp init --client claude-desktop",
    ] {
        assert!(ran_one(step), "the chapter runs `{step}`: {ran:?}");
    }
    let keys = keys.lock().expect("lock").clone();
    assert_eq!(
        keys, ["special-key"; 3],
        "call, curl and the client's call each reached the Petstore with the exported key"
    );
    drop(server);
}

/// What each step of the chapter must have printed.
fn check_output(line: &str, output: &Output, origin: &str, config: &Path) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    if line.starts_with("restmcp init --spec") {
        let written = std::fs::read_to_string(config).expect("init wrote config.toml");
        assert!(
            written.contains(&format!("base_url = \"{origin}/api/v3\"")),
            "the relative server resolved against the spec's URL:\n{written}"
        );
        assert!(
            written.contains("[apis.petstore.auth.api_key]"),
            "{written}"
        );
        assert!(stdout.contains("19 tools"), "{stdout}");
        assert!(
            stdout.contains("mapped"),
            "the check report follows: {stdout}"
        );
    } else if line.starts_with("restmcp call getPetById") {
        let result: Value = serde_json::from_str(&stdout).expect("call prints JSON");
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(result["structuredContent"]["name"], "doggie", "{result}");
    } else if line.starts_with("curl") {
        let answer: Value = serde_json::from_str(&stdout).expect("a JSON-RPC answer");
        assert_eq!(answer["id"], 1, "{answer}");
        assert_eq!(
            answer["result"]["structuredContent"]["name"], "doggie",
            "{answer}"
        );
    } else if line.starts_with("restmcp init --client claude-desktop") {
        check_desktop_snippet(&stdout, config);
    } else if line.starts_with("restmcp init --client claude-code") {
        assert!(
            stdout.starts_with("claude mcp add --transport stdio --env PETSTORE_API_KEY=\"$PETSTORE_API_KEY\" petstore -- /"),
            "{stdout}"
        );
    }
}

/// The Claude Desktop snippet names the binary and the config by absolute path, the
/// variable with a placeholder, and starting what it names works: the client lists the
/// Petstore's tools over stdio.
fn check_desktop_snippet(stdout: &str, config: &Path) {
    let snippet: Value = serde_json::from_str(stdout).expect("the snippet is JSON");
    let server = &snippet["mcpServers"]["petstore"];
    let command = server["command"].as_str().expect("command");
    assert!(Path::new(command).is_absolute(), "{snippet}");
    let config = std::fs::canonicalize(config).expect("config");
    assert_eq!(
        server["args"],
        json!(["stdio", "--config", config.to_string_lossy()]),
        "{snippet}"
    );
    assert_eq!(
        server["env"],
        json!({"PETSTORE_API_KEY": "<value>"}),
        "{snippet}"
    );
    let args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    // What the user pastes: the placeholder replaced by the key the chapter exported.
    let env: Vec<(String, String)> = server["env"]
        .as_object()
        .expect("env")
        .keys()
        .map(|name| (name.clone(), "special-key".to_string()))
        .collect();
    let command = command.to_string();
    tokio::task::block_in_place(|| {
        tokio::runtime::Handle::current().block_on(list_tools_over_stdio(&command, &args, &env))
    });
}

/// Starts the snippet's command as a desktop client does (no shell, from another
/// directory, only the snippet's environment) and lists and calls tools.
async fn list_tools_over_stdio(command: &str, args: &[String], env: &[(String, String)]) {
    let transport = TokioChildProcess::new(tokio::process::Command::new(command).configure(|c| {
        c.args(args)
            .current_dir(std::env::temp_dir())
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)));
    }))
    .expect("spawn the snippet's command");
    let client = ().serve(transport).await.expect("initialize over stdio");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 19);
    let result = client
        .call_tool(
            CallToolRequestParams::new("getPetById")
                .with_arguments(json!({"petId": 1}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_eq!(
        result.structured_content.expect("structured")["name"],
        "doggie"
    );
    let _ = client.cancel().await;
}
