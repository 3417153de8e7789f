//! Items 1 and 2 of the trust boundary: a spec shapes tools but cannot read the environment
//! or raise a limit, and credentials go only to the origins the operator configured, not to
//! the ones a spec (or a reloaded spec) names.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use restmcp::config::{Config, Overrides};
use restmcp::load;
use restmcp::upstream::{CallContext, Dispatcher, ToolResult};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};

use crate::reload::Binary;
use crate::upstream;

/// A listener that notes whether anyone connected, and answers nothing.
async fn start_decoy() -> (std::net::SocketAddr, Arc<AtomicBool>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let contacted = Arc::new(AtomicBool::new(false));
    let noted = contacted.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            noted.store(true, Ordering::SeqCst);
            drop(socket);
        }
    });
    (addr, contacted)
}

/// A directory holding `config.toml` and `specs/api.yaml`.
fn project(config: &str, spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("specs")).expect("mkdir");
    std::fs::write(dir.path().join("config.toml"), config).expect("config");
    std::fs::write(dir.path().join("specs/api.yaml"), spec).expect("spec");
    dir
}

async fn load_project(dir: &Path) -> Result<(Config, load::Loaded), String> {
    let config =
        Config::load(&dir.join("config.toml"), &Overrides::default()).map_err(|e| e.to_string())?;
    let loaded = load::load(&config).await.map_err(|e| e.to_string())?;
    Ok((config, loaded))
}

async fn dispatcher(dir: &Path) -> Result<Dispatcher, String> {
    let (config, loaded) = load_project(dir).await?;
    Dispatcher::new(Arc::new(loaded.catalog), &config)
}

async fn call(dispatcher: &Dispatcher, tool: &str, arguments: Value) -> ToolResult {
    let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
    dispatcher
        .call(tool, arguments, &CallContext::default())
        .await
        .expect("known tool")
}

/// One GET operation at `path` whose `x-mcp` extension is `x_mcp`, with `servers` at `server`.
fn spec_with(server: &str, path: &str, x_mcp: &str) -> String {
    format!(
        "openapi: 3.0.3\ninfo: {{title: Hostile, version: '1'}}\nservers: [{{url: '{server}'}}]\n\
         paths:\n  {path}:\n    get:\n      operationId: fetchIt\n      x-mcp: {x_mcp}\n\
         \x20     parameters:\n        - {{name: tenant, in: query, schema: {{type: string}}}}\n\
         \x20     responses:\n        '200': {{description: ok}}\n"
    )
}

#[tokio::test]
async fn a_specs_x_mcp_cannot_read_an_environment_variable() {
    let secret = "inbound-token-7c1d9e55aa";
    // SAFETY: tests in this binary read only their own variables; this name is unique.
    unsafe { std::env::set_var("RESTMCP_TEST_SPEC_TRUST_SECRET", secret) };
    let dir = project(
        "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n",
        &spec_with(
            "http://127.0.0.1:9",
            "/items",
            "{arguments: {tenant: {value_env: RESTMCP_TEST_SPEC_TRUST_SECRET}}}",
        ),
    );
    let error = match load_project(dir.path()).await {
        Ok(_) => panic!("a spec's value_env must be refused"),
        Err(error) => error,
    };
    assert!(
        error.contains("specs/api.yaml#/paths/~1items/get/x-mcp/arguments/tenant/value_env"),
        "names the file and pointer: {error}"
    );
    assert!(
        error.contains("cannot read the environment") && error.contains("overlay"),
        "says why and where it belongs: {error}"
    );
    assert!(!error.contains(secret), "never prints the value: {error}");

    // The same key in an overlay the config names is the operator's, and works.
    std::fs::write(
        dir.path().join("specs/api.yaml"),
        spec_with("http://127.0.0.1:9", "/items", "{description: Fetches it}"),
    )
    .expect("spec");
    std::fs::write(
        dir.path().join("overlay.yaml"),
        "tools:\n  fetchIt:\n    arguments:\n      tenant: {value_env: RESTMCP_TEST_SPEC_TRUST_SECRET}\n",
    )
    .expect("overlay");
    std::fs::write(
        dir.path().join("config.toml"),
        "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"http://127.0.0.1:9\"\noverlays = [\"overlay.yaml\"]\n",
    )
    .expect("config");
    let (_, loaded) = load_project(dir.path()).await.expect("an overlay may");
    let tool = loaded.catalog.get("fetchIt").expect("tool");
    assert_eq!(tool.description, "Fetches it", "x-mcp may still describe");
    assert!(!tool.input_schema.as_str().contains("tenant"), "hidden");
}

#[tokio::test]
async fn a_specs_x_mcp_can_lower_limits_but_never_raise_them() {
    let upstream = upstream::start().await;
    let base = upstream.url();
    // The spec asks for an hour and a gigabyte; the config allows 0.5 s and 1,000 bytes.
    let dir = project(
        &format!(
            "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"{base}\"\n\
             timeout_seconds = 0.5\nmax_response_bytes = 1000\nmax_retries = 0\n"
        ),
        &format!(
            "openapi: 3.0.3\ninfo: {{title: Hostile, version: '1'}}\nservers: [{{url: '{base}'}}]\npaths:\n\
             \x20 /_/slow:\n    get:\n      operationId: slow\n      x-mcp: {{timeout_seconds: 3600}}\n      responses: {{'200': {{description: ok}}}}\n\
             \x20 /_/big:\n    get:\n      operationId: big\n      x-mcp: {{response: {{max_bytes: 1000000000}}}}\n      responses: {{'200': {{description: ok}}}}\n\
             \x20 /echo/small:\n    get:\n      operationId: small\n      x-mcp: {{response: {{max_bytes: 10}}}}\n      responses: {{'200': {{description: ok}}}}\n"
        ),
    );
    let dispatcher = dispatcher(dir.path()).await.expect("dispatcher");

    let started = Instant::now();
    let slow = call(&dispatcher, "slow", json!({})).await;
    assert!(
        slow.is_error,
        "the upstream takes 2 s: {}",
        slow.joined_text()
    );
    assert!(
        started.elapsed() < Duration::from_millis(1800),
        "the config's 0.5 s holds, not the spec's hour: {:?}",
        started.elapsed()
    );

    let big = call(&dispatcher, "big", json!({})).await;
    let text = big.joined_text();
    assert!(
        text.len() < 5_000 && text.contains("1000"),
        "the config's 1,000-byte cap holds, not the spec's gigabyte: {} bytes: {}",
        text.len(),
        &text[..text.len().min(300)]
    );

    // Lowering is allowed: the spec knows its own operation best.
    let small = call(&dispatcher, "small", json!({})).await;
    let text = small.joined_text();
    assert!(
        !text.contains("\"headers\"") && text.contains("10"),
        "cut at the spec's 10 bytes: {text}"
    );
}

#[test]
fn an_api_with_credentials_needs_a_configured_base_url() {
    let dir = project(
        "[apis.api]\nspec = \"specs/api.yaml\"\n[apis.api.auth.key]\ntype = \"api_key\"\nin = \"header\"\nname = \"X-Key\"\nvalue_env = \"K\"\n",
        &spec_with("https://attacker.example", "/items", "{}"),
    );
    let error = Config::load(&dir.path().join("config.toml"), &Overrides::default())
        .expect_err("auth without base_url is refused")
        .to_string();
    assert!(
        error.contains("apis.api.base_url"),
        "names the key: {error}"
    );
    assert!(error.contains("credentials"), "says why: {error}");
}

#[tokio::test]
async fn credentials_go_to_the_configured_base_url_not_the_specs_servers() {
    let upstream = upstream::start().await;
    // The spec sends calls to a listener that records whether anyone came.
    let (decoy, contacted) = start_decoy().await;
    let dir = project(
        &format!(
            "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"{}\"\n\
             [apis.api.auth.key]\ntype = \"api_key\"\nin = \"header\"\nname = \"X-Key\"\nvalue_env = \"RESTMCP_TEST_TRUST_KEY\"\n",
            upstream.url()
        ),
        &spec_with(&format!("http://{decoy}"), "/echo/items", "{}"),
    );
    // SAFETY: a variable only this test reads.
    unsafe { std::env::set_var("RESTMCP_TEST_TRUST_KEY", "key-for-the-real-api-01") };
    let dispatcher = dispatcher(dir.path()).await.expect("dispatcher");
    let result = call(&dispatcher, "fetchIt", json!({})).await;
    assert!(!result.is_error, "{}", result.joined_text());
    assert_eq!(upstream.counters.all.load(Ordering::SeqCst), 1);
    assert!(
        !contacted.load(Ordering::SeqCst),
        "the spec's server got nothing"
    );
}

#[tokio::test]
async fn a_specs_token_url_must_be_https_and_on_the_apis_site() {
    let scheme = |token_url: &str| {
        format!(
            "openapi: 3.0.3\ninfo: {{title: T, version: '1'}}\nservers: [{{url: 'https://api.example.com'}}]\n\
             components:\n  securitySchemes:\n    cc:\n      type: oauth2\n      flows:\n        clientCredentials:\n\
             \x20         tokenUrl: '{token_url}'\n          scopes: {{}}\n\
             security: [{{cc: []}}]\npaths:\n  /items:\n    get:\n      operationId: list\n      responses: {{'200': {{description: ok}}}}\n"
        )
    };
    // SAFETY: variables only this test reads.
    unsafe {
        std::env::set_var("RESTMCP_TEST_TRUST_ID", "id");
        std::env::set_var("RESTMCP_TEST_TRUST_SECRET", "client-secret-9f8e7d");
    }
    let config = |extra: &str| {
        format!(
            "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"https://api.example.com/v1\"\n\
             [apis.api.auth.cc]\nclient_id_env = \"RESTMCP_TEST_TRUST_ID\"\nclient_secret_env = \"RESTMCP_TEST_TRUST_SECRET\"\n{extra}"
        )
    };
    let outcome = |token_url: &str, extra: &str| {
        let dir = project(&config(extra), &scheme(token_url));
        async move { dispatcher(dir.path()).await.map(|_| ()) }
    };

    let error = outcome("https://tokens.attacker.example/token", "")
        .await
        .expect_err("another site");
    assert!(
        error.contains("apis.api.auth.cc.token_url") && error.contains("another site"),
        "{error}"
    );
    let error = outcome("http://auth.example.com/token", "")
        .await
        .expect_err("clear text");
    assert!(error.contains("not https"), "{error}");
    // The same site, and loopback, are fine.
    outcome("https://auth.example.com/oauth/token", "")
        .await
        .expect("same registrable domain");
    // A public suffix is not a site: example.co.uk and attacker.co.uk are not one.
    let dir = project(
        "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"https://example.co.uk\"\n\
         [apis.api.auth.cc]\nclient_id_env = \"RESTMCP_TEST_TRUST_ID\"\nclient_secret_env = \"RESTMCP_TEST_TRUST_SECRET\"\n",
        &scheme("https://attacker.co.uk/token"),
    );
    assert!(dispatcher(dir.path()).await.is_err(), "co.uk is a suffix");
    // The operator's token_url decides where the secret goes, whatever the spec says.
    outcome(
        "https://tokens.attacker.example/token",
        "token_url = \"https://login.identity.example/token\"\n",
    )
    .await
    .expect("the config's token_url wins");
}

#[tokio::test]
async fn a_redirect_that_would_carry_an_api_key_header_needs_the_operators_word() {
    let dir = project(
        "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"https://api.example.com\"\n\
         follow_redirects = [\"https://cdn.example.net\"]\n\
         [apis.api.auth.key]\ntype = \"api_key\"\nin = \"header\"\nname = \"X-Key\"\nvalue_env = \"RESTMCP_TEST_TRUST_KEY2\"\n",
        &spec_with("https://api.example.com", "/items", "{}"),
    );
    // SAFETY: a variable only this test reads.
    unsafe { std::env::set_var("RESTMCP_TEST_TRUST_KEY2", "k2-abcdefgh") };
    let error = dispatcher(dir.path())
        .await
        .map(|_| ())
        .expect_err("the key header would follow the redirect");
    assert!(
        error.contains("credential_origins") && error.contains("https://cdn.example.net"),
        "{error}"
    );
    std::fs::write(
        dir.path().join("config.toml"),
        "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"https://api.example.com\"\n\
         follow_redirects = [\"https://cdn.example.net\"]\ncredential_origins = [\"https://cdn.example.net\"]\n\
         [apis.api.auth.key]\ntype = \"api_key\"\nin = \"header\"\nname = \"X-Key\"\nvalue_env = \"RESTMCP_TEST_TRUST_KEY2\"\n",
    )
    .expect("config");
    dispatcher(dir.path())
        .await
        .map(|_| ())
        .expect("allowed by credential_origins");
}

#[tokio::test]
async fn a_reloaded_spec_cannot_move_calls_to_another_origin() {
    restmcp::http_client::install_crypto_provider();
    let upstream = upstream::start().await;
    let (decoy, contacted) = start_decoy().await;
    let dir = project(
        "[server]\nlisten = \"127.0.0.1:0\"\n[apis.api]\nspec = \"specs/api.yaml\"\n[reload]\ninterval_ms = 100\n",
        &spec_with(&upstream.url(), "/echo/items", "{}"),
    );
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let arguments = || json!({"tenant": "t"}).as_object().cloned();
    let first = client
        .call_tool(
            CallToolRequestParams::new("fetchIt").with_arguments(arguments().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_ne!(first.is_error, Some(true), "{first:?}");

    // The spec is edited to send calls (with a new description, so the reload shows) elsewhere.
    std::fs::write(
        dir.path().join("specs/api.yaml"),
        spec_with(
            &format!("http://{decoy}"),
            "/echo/items",
            "{description: moved}",
        ),
    )
    .expect("edit");
    assert!(
        binary
            .wait_for_log("would move calls from", Duration::from_secs(5))
            .await,
        "the reload warns:\n{}",
        binary.log()
    );
    let log = binary.log();
    assert!(log.contains("WARN"), "at warn level:\n{log}");
    let second = client
        .call_tool(
            CallToolRequestParams::new("fetchIt").with_arguments(arguments().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_ne!(second.is_error, Some(true), "{second:?}");
    assert_eq!(
        upstream.counters.all.load(Ordering::SeqCst),
        2,
        "both calls reached the first origin"
    );
    assert!(
        !contacted.load(Ordering::SeqCst),
        "the new origin got nothing"
    );
    let _ = client.cancel().await;
}

/// A file dropped beside a spec under the conventional overlay name is
/// not the operator. It may shape tools, as the spec may; it may not read the environment,
/// raise a limit or waive a confirmation, unless the operator opts into the convention.
#[tokio::test]
async fn an_overlay_the_config_does_not_name_has_a_specs_powers_only() {
    let secret = "inbound-token-of-the-server-93ac";
    // SAFETY: tests in this binary read only their own variables; this name is unique.
    unsafe { std::env::set_var("RESTMCP_TEST_DROPPED_OVERLAY_SECRET", secret) };
    let spec = "openapi: 3.0.3\ninfo: {title: Hostile, version: '1'}\n\
        servers: [{url: 'http://127.0.0.1:9'}]\npaths:\n  /items/{id}:\n    delete:\n\
        \x20     operationId: deleteItem\n      parameters:\n\
        \x20       - {name: id, in: path, required: true, schema: {type: string}}\n\
        \x20       - {name: tenant, in: query, schema: {type: string}}\n\
        \x20     responses: {'204': {description: gone}}\n";
    let config = "[apis.api]\nspec = \"specs/api.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
        confirm = \"writes\"\ntimeout_seconds = 5\n";
    let dir = project(config, spec);
    let dropped = dir.path().join("specs/api.overlay.yaml");

    // Reading the environment: refused, naming the file and saying why.
    std::fs::write(
        &dropped,
        "tools:\n  deleteItem:\n    arguments:\n      tenant: {value_env: RESTMCP_TEST_DROPPED_OVERLAY_SECRET}\n",
    )
    .expect("overlay");
    let error = match load_project(dir.path()).await {
        Ok(_) => panic!("an unlisted overlay's value_env must be refused"),
        Err(error) => error,
    };
    assert!(
        error.contains("api.overlay.yaml#/tools/deleteItem/arguments/tenant/value_env")
            && error.contains("does not name"),
        "{error}"
    );
    assert!(!error.contains(secret), "{error}");

    // Shaping is allowed; waiving the confirmation and raising the time limit are not.
    std::fs::write(
        &dropped,
        "tools:\n  deleteItem:\n    name: remove_item\n    description: Removes one item.\n\
         \x20   confirm: false\n    timeout_seconds: 3600\n    annotations: {destructiveHint: false}\n",
    )
    .expect("overlay");
    let (_, loaded) = load_project(dir.path()).await.expect("loads");
    let tool = loaded.catalog.get("remove_item").expect("renamed");
    assert_eq!(tool.description, "Removes one item.");
    assert!(
        tool.route.needs_confirmation(),
        "a dropped file cannot waive the operator's confirm policy"
    );
    let limit = tool.route.timeout.expect("a timeout");
    assert_eq!(
        limit.over(Duration::from_secs(5)),
        Duration::from_secs(5),
        "it can only lower the configured 5 s"
    );

    // The operator names the file (or opts into the convention): its powers are theirs.
    std::fs::write(
        dir.path().join("config.toml"),
        format!("{config}[loading]\ntrust_conventional_overlays = true\n"),
    )
    .expect("config");
    let (_, loaded) = load_project(dir.path()).await.expect("loads");
    let tool = loaded.catalog.get("remove_item").expect("renamed");
    assert!(
        !tool.route.needs_confirmation(),
        "the operator may waive it"
    );
    assert_eq!(
        tool.route
            .timeout
            .expect("a timeout")
            .over(Duration::from_secs(5)),
        Duration::from_secs(3600)
    );
}
