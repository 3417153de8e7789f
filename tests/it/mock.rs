//! The built-in mock upstream: answers from examples and from generated values,
//! request checking, determinism, and the shipped config answering out of the box.

use std::sync::Arc;

use restmcp::config::{Config, Overrides};
use restmcp::load;
use restmcp::upstream::{CallContext, Dispatcher, ToolResult};
use serde_json::{Value, json};

use crate::overlays::project;
use crate::support::fixture;

fn mock_project(overlay: Option<&str>) -> tempfile::TempDir {
    let spec = std::fs::read_to_string(fixture("mock-api.yaml")).expect("fixture");
    let mut files = vec![("specs/mock.yaml", spec.as_str())];
    if let Some(overlay) = overlay {
        files.push(("specs/mock.overlay.yaml", overlay));
    }
    project(
        "[apis.mock]\nspec = \"specs/mock.yaml\"\nmock = true\n[reload]\nenabled = false\n",
        &files,
    )
}

async fn dispatcher(dir: &std::path::Path) -> Dispatcher {
    let config = Config::load(&dir.join("config.toml"), &Overrides::default()).expect("config");
    let loaded = load::load(&config).await.expect("loads");
    restmcp::mock::plug(Dispatcher::new(Arc::new(loaded.catalog), &config).expect("dispatcher"))
}

async fn call(dispatcher: &Dispatcher, tool: &str, arguments: Value) -> ToolResult {
    dispatcher
        .call(
            tool,
            arguments.as_object().cloned().unwrap_or_default(),
            &CallContext::default(),
        )
        .await
        .expect("known tool")
}

fn valid(schema: &Value, value: &Value) -> bool {
    jsonschema::validator_for(schema)
        .expect("schema compiles")
        .is_valid(value)
}

/// A dispatcher built over a mock-mode catalog without `mock::plug` says so and sends
/// nothing, instead of trying the mock's placeholder host.
#[tokio::test]
async fn a_mock_tool_without_the_mock_plugged_in_is_refused_by_name() {
    let dir = mock_project(None);
    let config =
        Config::load(&dir.path().join("config.toml"), &Overrides::default()).expect("config");
    let loaded = load::load(&config).await.expect("loads");
    let unplugged = Dispatcher::new(Arc::new(loaded.catalog), &config).expect("dispatcher");
    let result = call(&unplugged, "getWidget", json!({"id": 3, "view": "full"})).await;
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.contains("mock upstream, which is not plugged in") && text.contains("getWidget"),
        "{text}"
    );
    assert!(!text.contains("restmcp.invalid"), "{text}");
}

#[tokio::test]
async fn the_mock_answers_with_the_spec_example_and_its_status() {
    let dir = mock_project(None);
    let dispatcher = dispatcher(dir.path()).await;
    let result = call(&dispatcher, "getWidget", json!({"id": 3, "view": "full"})).await;
    assert!(!result.is_error, "{}", result.joined_text());
    assert_eq!(
        result.structured,
        Some(json!({"id": 7, "name": "sprocket", "color": "red", "tags": ["a", "b"]}))
    );
    let created = call(
        &dispatcher,
        "createWidget",
        json!({"name": "gear", "color": "green"}),
    )
    .await;
    assert!(!created.is_error, "{}", created.joined_text());
    assert_eq!(
        created.structured,
        Some(json!({"id": 1, "name": "made", "color": "green"})),
        "the first of `examples`"
    );
    let deleted = call(&dispatcher, "deleteWidget", json!({"id": 3})).await;
    assert!(!deleted.is_error, "{}", deleted.joined_text());
    assert!(
        deleted.joined_text().contains("204"),
        "{}",
        deleted.joined_text()
    );
}

#[tokio::test]
async fn without_an_example_the_answer_is_generated_valid_and_deterministic() {
    let dir = mock_project(None);
    let first = dispatcher(dir.path()).await;
    let second = dispatcher(dir.path()).await;
    for tool in ["listWidgets", "getTree"] {
        let arguments = if tool == "getTree" {
            json!({"id": "root"})
        } else {
            json!({})
        };
        let a = call(&first, tool, arguments.clone()).await;
        let b = call(&second, tool, arguments).await;
        assert!(!a.is_error, "{tool}: {}", a.joined_text());
        let structured = a.structured.clone().expect("structured");
        assert_eq!(a.structured, b.structured, "{tool}: deterministic");
        let schema = first
            .catalog()
            .get(tool)
            .and_then(|t| t.output_schema.as_ref().map(|s| s.to_value()))
            .expect("outputSchema");
        assert!(valid(&schema, &structured), "{tool}: {structured}");
    }
    let widgets = call(&first, "listWidgets", json!({})).await;
    let items = widgets.structured.expect("structured")["result"].clone();
    let items = items.as_array().expect("an array");
    assert_eq!(items.len(), 1, "arrays get one item");
    let widget = &items[0];
    assert!(["red", "green", "blue"].contains(&widget["color"].as_str().unwrap_or("")));
    assert!(widget["id"].as_i64().is_some_and(|id| id >= 1), "{widget}");
}

#[tokio::test]
async fn a_request_the_operation_does_not_accept_gets_the_mocks_400_with_the_reason() {
    // The overlay makes `view` optional for the model, but the operation still requires it.
    let overlay = "tools:\n  getWidget:\n    arguments:\n      view: {required: false}\n";
    let dir = mock_project(Some(overlay));
    let dispatcher = dispatcher(dir.path()).await;
    let result = call(&dispatcher, "getWidget", json!({"id": 3})).await;
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(text.contains("400"), "{text}");
    assert!(
        text.contains("required query parameter \\\"view\\\" is missing")
            || text.contains("required query parameter \"view\" is missing"),
        "{text}"
    );
}

#[test]
fn the_shipped_config_answers_out_of_the_box() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(["call", "getPetById", "--args", r#"{"petId": 1}"#])
        .current_dir(root)
        .env_remove("RESTMCP_CONFIG")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(result["isError"], json!(false));
    assert!(result["structuredContent"]["name"].is_string(), "{text}");
}

/// The mock's first promise: the README's `cargo run --release` (`restmcp` with no arguments, in
/// the repository) starts a server whose tools answer, schema-valid, to a real MCP client.
#[tokio::test]
async fn the_readme_first_command_serves_tools_that_answer() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    restmcp::http_client::install_crypto_provider();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut binary = crate::reload::Binary::start_with(
        root,
        &[
            ("RESTMCP_SERVER__LISTEN", "127.0.0.1:0"),
            ("RESTMCP_RELOAD__ENABLED", "false"),
        ],
    )
    .await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    // The Petstore's 19 operations and its workflow, buy-available-pet.
    assert_eq!(tools.len(), 20);
    let tool = tools
        .iter()
        .find(|t| t.name == "getPetById")
        .expect("getPetById");
    let output_schema = Value::Object(
        tool.output_schema
            .as_deref()
            .cloned()
            .expect("an outputSchema"),
    );
    let result = client
        .call_tool(
            CallToolRequestParams::new("getPetById")
                .with_arguments(json!({"petId": 1}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let structured = result.structured_content.expect("structuredContent");
    assert!(valid(&output_schema, &structured), "{structured}");
    let _ = client.cancel().await;
    let _ = binary.child.kill().await;
}
