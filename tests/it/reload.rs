//! Hot reload end to end: the real binary serving Streamable HTTP, a connected
//! client, and YAML files edited under it.

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::NotificationContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::overlays::project;
use crate::upstream;

#[derive(Clone, Default)]
struct Listening {
    changed: Arc<AtomicUsize>,
}

impl ClientHandler for Listening {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }
}

/// The running binary, its stderr lines as they come, and its MCP URL.
pub struct Binary {
    pub child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<String>>>,
    pub url: String,
}

impl Binary {
    /// `restmcp` (serve) in `dir`, with `env` set.
    pub async fn start_with(dir: &std::path::Path, env: &[(&str, &str)]) -> Binary {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp"));
        command.envs(env.iter().copied());
        Binary::spawn(command, dir).await
    }

    pub async fn start(dir: &std::path::Path) -> Binary {
        Binary::spawn(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp")),
            dir,
        )
        .await
    }

    async fn spawn(mut command: tokio::process::Command, dir: &std::path::Path) -> Binary {
        let chosen_log = command
            .as_std()
            .get_envs()
            .any(|(name, _)| name == "RUST_LOG");
        if !chosen_log {
            command.env("RUST_LOG", "info");
        }
        let mut child = command
            .current_dir(dir)
            .env_remove("RESTMCP_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn restmcp");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let collected = lines.clone();
        tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Some(rest) = line.split("Streamable HTTP at ").nth(1)
                    && let Some(tx) = url_tx.take()
                {
                    let url = rest.split(',').next().unwrap_or_default().to_string();
                    let _ = tx.send(url);
                }
                collected.lock().expect("lock").push(line);
            }
        });
        let url = tokio::time::timeout(Duration::from_secs(20), url_rx)
            .await
            .expect("restmcp starts within 20 s")
            .expect("a start-up banner");
        Binary {
            child,
            stderr: lines,
            url,
        }
    }

    pub fn log(&self) -> String {
        self.stderr.lock().expect("lock").join("\n")
    }

    pub async fn wait_for_log(&self, needle: &str, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.log().contains(needle) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}

const FIRST_OVERLAY: &str = "tools:\n  getItem:\n    name: get_item\n";
const SECOND_OVERLAY: &str = "tools:\n  getItem:\n    name: get_item\nadd:\n  hello:\n    description: Says hello.\n    method: GET\n    path: /echo/hello/{who}\n    arguments:\n      who: {type: string}\n";

#[tokio::test]
async fn editing_yaml_changes_the_tools_of_a_running_server_and_broken_yaml_changes_nothing() {
    restmcp::http_client::install_crypto_provider();
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\n[reload]\ninterval_ms = 100\n",
        upstream.url()
    );
    let dir = project(&config, &[("specs/echo.overlay.yaml", FIRST_OVERLAY)]);
    let mut binary = Binary::start(dir.path()).await;
    let handler = Listening::default();
    let client = handler
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize");
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    let before = names(client.list_all_tools().await.expect("tools/list"));
    assert!(before.contains(&"get_item".to_string()), "{before:?}");
    assert!(!before.contains(&"hello".to_string()));
    // The notification travels on the standalone GET stream; let it open.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let edited = Instant::now();
    std::fs::write(dir.path().join("specs/echo.overlay.yaml"), SECOND_OVERLAY).expect("edit");
    while handler.changed.load(Ordering::SeqCst) == 0 && edited.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        handler.changed.load(Ordering::SeqCst),
        1,
        "notifications/tools/list_changed within 2 s; log:\n{}",
        binary.log()
    );
    let after = names(client.list_all_tools().await.expect("tools/list"));
    assert!(edited.elapsed() < Duration::from_secs(2));
    assert!(after.contains(&"hello".to_string()), "{after:?}");
    let result = client
        .call_tool(
            CallToolRequestParams::new("hello").with_arguments(
                json!({"who": "you"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("tools/call");
    assert_eq!(
        result.structured_content.expect("structured")["path"],
        "/echo/hello/you"
    );
    assert!(
        binary.log().contains("1 added (hello)"),
        "the diff is logged:\n{}",
        binary.log()
    );

    std::fs::write(
        dir.path().join("specs/echo.overlay.yaml"),
        "tools:\n  getItem: [unclosed\n",
    )
    .expect("break");
    assert!(
        binary
            .wait_for_log("failed; still serving the previous", Duration::from_secs(3))
            .await,
        "the failure is logged:\n{}",
        binary.log()
    );
    let log = binary.log();
    assert!(
        log.contains("specs/echo.overlay.yaml:2:"),
        "with file and line:\n{log}"
    );
    let still = names(client.list_all_tools().await.expect("tools/list"));
    assert_eq!(still, after, "the last good tool set is still served");
    assert_eq!(handler.changed.load(Ordering::SeqCst), 1);

    #[cfg(unix)]
    {
        std::fs::write(dir.path().join("specs/echo.overlay.yaml"), SECOND_OVERLAY).expect("fix");
        assert!(
            binary
                .wait_for_log("tools unchanged", Duration::from_secs(3))
                .await,
            "fixing the file reloads the same tools:\n{}",
            binary.log()
        );
        let pid = binary.child.id().expect("pid").to_string();
        let status = std::process::Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        assert!(
            binary
                .wait_for_log("reload (SIGHUP)", Duration::from_secs(3))
                .await,
            "SIGHUP reloads:\n{}",
            binary.log()
        );
    }
    let _ = client.cancel().await;
    let _ = binary.child.kill().await;
}

/// Serves `spec` at `/echo.yaml`, holding every answer until the gate opens; the receiver
/// counts the requests that arrived.
async fn gated_spec(
    spec: String,
) -> (
    String,
    tokio::sync::watch::Sender<bool>,
    tokio::sync::watch::Receiver<usize>,
) {
    let (gate, opened) = tokio::sync::watch::channel(false);
    let (asked, asks) = tokio::sync::watch::channel(0usize);
    let app = axum::Router::new().route(
        "/echo.yaml",
        axum::routing::get(move || {
            let mut opened = opened.clone();
            let asked = asked.clone();
            let spec = spec.clone();
            async move {
                asked.send_modify(|n| *n += 1);
                let _ = opened.wait_for(|open| *open).await;
                spec
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/echo.yaml", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, gate, asks)
}

/// An overlay edited while the server is still loading is reloaded: the watcher's baseline
/// of the files the configuration names is taken before the load, not after it (when the
/// edited file became the baseline and the edit was never served). The spec is a URL that
/// answers only when the test lets it, and the overlays are read before the spec is
/// fetched, so the edit falls between the two.
#[tokio::test]
async fn an_overlay_edited_while_the_server_loads_is_reloaded() {
    restmcp::http_client::install_crypto_provider();
    let upstream = upstream::start().await;
    let spec = std::fs::read_to_string(crate::support::fixture("echo-api.yaml")).expect("spec");
    let (spec_url, gate, mut asks) = gated_spec(spec).await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[loading]\nallow_private_addresses = true\n\
         [apis.echo]\nspec = \"{spec_url}\"\nbase_url = \"{}\"\noverlays = [\"echo.overlay.yaml\"]\n\
         [reload]\ninterval_ms = 100\n",
        upstream.url()
    );
    let dir = project(&config, &[("echo.overlay.yaml", FIRST_OVERLAY)]);
    let start = Binary::start(dir.path());
    let edit = async {
        tokio::time::timeout(Duration::from_secs(20), asks.wait_for(|n| *n >= 1))
            .await
            .expect("the load asks for the spec")
            .expect("the spec server runs");
        std::fs::write(dir.path().join("echo.overlay.yaml"), SECOND_OVERLAY).expect("edit");
        gate.send_replace(true);
    };
    let (binary, ()) = tokio::join!(start, edit);
    let reloaded = binary
        .wait_for_log("1 added (hello)", Duration::from_secs(5))
        .await;
    assert!(
        reloaded,
        "the edit made while loading is reloaded; log:\n{}",
        binary.log()
    );
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(
        tools.iter().any(|t| t.name == "hello"),
        "the edited overlay's tool is served: {:?}",
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
    );
    let _ = client.cancel().await;
}
