//! The two servers a selftest calls, each with the official SDK's client in front: this
//! process serving the configuration over Streamable HTTP on a loopback port
//! ([`HttpLeg`]), and a child `restmcp stdio` started with the same flags ([`StdioLeg`]),
//! whose stderr is kept for error messages.

use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::Tool;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

use super::{Options, SelftestError};
use crate::config::Config;
use crate::load;
use crate::mcp::{ServerState, Snapshot};

/// The child's last words kept for an error message.
const MAX_STDERR_BYTES: usize = 4096;

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

pub(super) type Client = RunningService<RoleClient, ()>;

/// The Streamable HTTP side: this process serving the catalog on a loopback port.
pub(super) struct HttpLeg {
    pub(super) client: Client,
    /// The full inputSchemas of tools whose published one was relaxed (see
    /// [`FullInputs`]).
    pub(super) full_inputs: FullInputs,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// The served catalog, for the inputSchema the arguments of a tool whose published one
/// was relaxed to fit its budget are checked against (arguments generated from the
/// published one would leave out what the relaxed levels require). Each is made when that
/// tool's arguments are generated, and dropped after: as trees, all of Microsoft Graph's
/// 341 at once took about 500 MB.
#[derive(Clone, Default)]
pub(super) struct FullInputs(Arc<crate::catalog::Catalog>);

impl FullInputs {
    pub(super) fn new(catalog: Arc<crate::catalog::Catalog>) -> FullInputs {
        FullInputs(catalog)
    }

    /// The catalog both servers serve.
    pub(super) fn catalog(&self) -> &crate::catalog::Catalog {
        &self.0
    }

    /// The full inputSchema of tool `name`, when its published one was relaxed.
    pub(super) fn get(&self, name: &str) -> Option<serde_json::Value> {
        self.0
            .get(name)
            .filter(|tool| tool.route.full_input.is_some())
            .map(crate::catalog::Tool::full_input_schema)
    }
}

impl HttpLeg {
    pub(super) async fn start(config: &Config) -> Result<HttpLeg, SelftestError> {
        let catalog = Arc::new(load::load(config).await?.catalog);
        let full_inputs = FullInputs::new(catalog.clone());
        let snapshot = Snapshot::from_loaded(catalog, config).map_err(SelftestError::Dispatcher)?;
        let shared = ServerState::with_settings(snapshot, &config.server)
            .map_err(|e| SelftestError::Dispatcher(e.to_string()))?;
        let mut settings = config.server.clone();
        // Only this process's own client reaches the port; Host and Origin rules are for
        // browsers on a real listener, and are not what a selftest tests.
        settings.allowed_hosts.clear();
        settings.allowed_origins.clear();
        settings.cors_origins.clear();
        settings.auth = None;
        settings.oauth = None;
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
            full_inputs,
            shutdown,
            server,
        })
    }

    pub(super) async fn stop(self) {
        let _ = self.client.cancel().await;
        self.shutdown.cancel();
        let _ = self.server.await;
    }
}

/// The stdio side: a child `restmcp stdio --mock` (without `--mock` when live) with the
/// same flags.
pub(super) struct StdioLeg {
    pub(super) client: Client,
    /// The tail of the child's stderr, for error messages.
    stderr: Arc<Mutex<String>>,
}

impl StdioLeg {
    pub(super) async fn start(options: &Options) -> Result<StdioLeg, SelftestError> {
        let command = tokio::process::Command::new(&options.executable).configure(|command| {
            command
                .args(stdio_args(options))
                // Warnings only: the child's stderr is kept for error messages, not shown.
                .env("RUST_LOG", "warn")
                // The child lives for seconds; watching files for it would be wasted work.
                .env("RESTMCP_RELOAD__ENABLED", "false")
                // Listed whole, as this process lists it (see `super::run`).
                .env("RESTMCP_TOOLS__AUTO_BUDGET_TOKENS", "0");
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

    pub(super) fn stderr_text(&self) -> String {
        tail(&self.stderr)
    }

    pub(super) async fn stop(self) {
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
pub(super) fn stdio_args(options: &Options) -> Vec<OsString> {
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
    if let Some(n) = o.max_result_tokens {
        args.extend(["--max-result-tokens".into(), n.to_string().into()]);
    }
    args
}

/// Every tool the server lists; `stderr` says what the server printed, should it fail.
pub(super) async fn list(
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
