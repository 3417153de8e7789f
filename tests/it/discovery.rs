//! Discovery modes for APIs too large to list: GitHub's 1,223 operations behind
//! `search_tools` / `call_tool`, or `list_operations` / `describe_operation` /
//! `call_operation`, served by the real binary to the Rust SDK client.

use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;
use crate::support::call;
use crate::support::shared_spec;
use crate::upstream;

type Client = rmcp::service::RunningService<RoleClient, ()>;

async fn github(mode: &str, upstream: &str, extra: &str) -> Option<(tempfile::TempDir, Binary)> {
    let spec = shared_spec("real/github.json")?;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[reload]\nenabled = false\n\
         [apis.github]\nspec = \"{}\"\nbase_url = \"{upstream}\"\ndiscovery = \"{mode}\"\n{extra}",
        spec.display()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    Some((dir, binary))
}

async fn connect(binary: &Binary) -> Client {
    restmcp::http_client::install_crypto_provider();
    ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize")
}

#[tokio::test]
async fn github_in_search_mode_lists_two_tools_finds_and_calls_the_right_one() {
    let upstream = upstream::start().await;
    let Some((_dir, binary)) = github("search", &upstream.url(), "").await else {
        return;
    };
    let client = connect(&binary).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search_tools", "call_tool"]);
    let listed = serde_json::to_string(&json!({ "tools": tools })).expect("json");
    assert!(
        listed.len() < 5 * 1024,
        "tools/list is {} bytes",
        listed.len()
    );
    assert!(listed.contains("1223 tools of API"), "{listed}");

    let found = call(
        &client,
        "search_tools",
        json!({"query": "create an issue comment"}),
    )
    .await;
    assert_ne!(found.is_error, Some(true));
    let found = found.structured_content.expect("structured");
    let top: Vec<&str> = found["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        top.iter()
            .take(3)
            .any(|name| *name == "issues_create-comment"),
        "top results: {top:?}"
    );
    let definition = found["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "issues_create-comment"))
        .expect("the definition");
    assert!(definition["inputSchema"]["properties"]["issue_number"].is_object());
    assert!(
        definition["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );

    let result = call(
        &client,
        "call_tool",
        json!({"name": "issues_create-comment", "arguments": {
            "owner": "octo-org", "repo": "hello world", "issue_number": 42, "body": "Me too"
        }}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let echoed = result.structured_content.expect("the upstream's echo");
    assert_eq!(echoed["method"], "POST");
    assert_eq!(
        echoed["path"],
        "/repos/octo-org/hello%20world/issues/42/comments"
    );
    let body: Value = serde_json::from_str(echoed["body"].as_str().expect("body")).expect("JSON");
    assert_eq!(body, json!({"body": "Me too"}));

    // The same validation as a listed tool: every violation, nothing sent.
    let before = upstream
        .counters
        .all
        .load(std::sync::atomic::Ordering::SeqCst);
    let invalid = call(
        &client,
        "call_tool",
        json!({"name": "issues_create-comment", "arguments": {"owner": "o"}}),
    )
    .await;
    assert_eq!(invalid.is_error, Some(true));
    let text = invalid.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(
        text.contains("repo") && text.contains("issue_number"),
        "{text}"
    );
    assert_eq!(
        upstream
            .counters
            .all
            .load(std::sync::atomic::Ordering::SeqCst),
        before
    );
    let unknown = call(
        &client,
        "call_tool",
        json!({"name": "issues_create_coment"}),
    )
    .await;
    assert_eq!(unknown.is_error, Some(true));
    // The tool stays callable by its own name.
    let direct = call(
        &client,
        "issues_create-comment",
        json!({"owner": "o", "repo": "r", "issue_number": 1, "body": "x"}),
    )
    .await;
    assert_ne!(direct.is_error, Some(true));
}

#[tokio::test]
async fn github_in_meta_mode_lists_describes_and_calls_operations() {
    let upstream = upstream::start().await;
    let Some((_dir, binary)) = github("meta", &upstream.url(), "pinned = [\"repos_get\"]\n").await
    else {
        return;
    };
    let client = connect(&binary).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "list_operations",
            "describe_operation",
            "call_operation",
            "repos_get"
        ]
    );
    let listed = call(
        &client,
        "list_operations",
        json!({"filter": "issue comment"}),
    )
    .await;
    let listed = listed.structured_content.expect("structured");
    assert!(listed["total"].as_u64().is_some_and(|n| n >= 1), "{listed}");
    let page = call(&client, "list_operations", json!({"limit": 10})).await;
    let page = page.structured_content.expect("structured");
    assert_eq!(page["operations"].as_array().map(Vec::len), Some(10));
    assert_eq!(page["total"], 1223);
    assert_eq!(page["nextOffset"], 10);
    let described = call(&client, "describe_operation", json!({"name": "issues_get"})).await;
    let described = described.structured_content.expect("structured");
    assert_eq!(described["name"], "issues_get");
    assert!(described["inputSchema"]["required"].is_array());
    let result = call(
        &client,
        "call_operation",
        json!({"name": "issues_get", "arguments": {"owner": "a", "repo": "b", "issue_number": 7}}),
    )
    .await;
    let echoed = result.structured_content.expect("echo");
    assert_eq!(echoed["path"], "/repos/a/b/issues/7");
    assert_eq!(echoed["method"], "GET");
}

#[tokio::test]
async fn check_reports_the_tokens_of_each_mode() {
    let Some(spec) = shared_spec("real/github.json") else {
        return;
    };
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(["check", "--spec"])
        .arg(&spec)
        .output()
        .expect("restmcp check");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("tools/list ≈"))
        .expect("a budget line");
    let (counts, served) = line
        .split_once(" (")
        .expect("the mode served, in parentheses");
    let numbers: Vec<usize> = counts
        .split_whitespace()
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect();
    assert_eq!(numbers.len(), 3, "{line}");
    assert!(numbers[0] > 100_000, "all: {line}");
    assert!(
        numbers[1] < 1_000 && numbers[2] < 1_000,
        "search and meta: {line}"
    );
    // No `discovery` key: `auto` chose, and says why.
    assert!(
        served.starts_with("\"auto\" chose \"search\": ≈ ")
            && served.ends_with("over tools.auto_budget_tokens (25,000))"),
        "{line}"
    );
}

async fn connect_as(
    binary: &Binary,
    client: &str,
) -> rmcp::service::RunningService<RoleClient, rmcp::model::ClientConfig> {
    restmcp::http_client::install_crypto_provider();
    rmcp::model::ClientConfig::new(
        Default::default(),
        rmcp::model::Implementation::new(client, "1.0"),
    )
    .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
    .await
    .expect("initialize")
}

#[tokio::test]
async fn each_client_gets_its_dialect_and_name_budget() {
    use restmcp::config::Dialect;
    use restmcp::schema::dialect::violations;
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[reload]\nenabled = false\n\
         [[tools.clients]]\nname = \"gemini*\"\ndialect = \"gemini\"\nmax_name_length = 16\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\ndialect = \"openai-strict\"\nprefix = \"echo_service_\"\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;

    // An unnamed client gets the API's dialect: strict OpenAI schemas, full names.
    let strict = connect_as(&binary, "some-agent").await;
    let tools = strict.list_all_tools().await.expect("tools/list");
    for tool in &tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(
            violations(Dialect::OpenaiStrict, &schema),
            Vec::<String>::new(),
            "{}",
            tool.name
        );
        assert!(tool.output_schema.is_none());
    }
    let strict_names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let get_item = tools
        .iter()
        .find(|t| t.name == "echo_service_getItem")
        .expect("echo_service_getItem");
    let required = get_item.input_schema["required"]
        .as_array()
        .expect("required");
    assert!(
        required.iter().any(|r| r == "limit"),
        "strict: every property required"
    );
    // Strict models send null for what they leave out; the upstream never sees it.
    let result = strict
        .call_tool(
            CallToolRequestParams::new("echo_service_getItem").with_arguments(
                json!({"id": "5", "tags": null, "colors": null, "filter": null, "limit": null,
                       "X-Trace": null, "session": null})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ),
        )
        .await
        .expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let echoed = result.structured_content.expect("echo");
    assert_eq!(echoed["path"], "/echo/items/5");
    assert_eq!(echoed["query"], Value::Null);

    // A Gemini client: its dialect wins over the API's, and names fit its budget.
    let gemini = connect_as(&binary, "Gemini CLI").await;
    let tools = gemini.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.iter().all(|n| n.len() <= 16), "{names:?}");
    for tool in &tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(
            violations(Dialect::Gemini, &schema),
            Vec::<String>::new(),
            "{}",
            tool.name
        );
    }
    // The name the catalog's own shortener gives, as the server does.
    let all: Vec<&str> = strict_names.iter().map(String::as_str).collect();
    let expected = restmcp::catalog::naming::within_budget(&all, 16);
    let position = all
        .iter()
        .position(|n| *n == "echo_service_getItem")
        .expect("getItem");
    let short = expected[position].as_str();
    assert!(names.contains(&short), "{short} in {names:?}");
    assert!(
        short.len() <= 16 && short != "echo_service_getItem",
        "{short}"
    );
    let result = gemini
        .call_tool(
            CallToolRequestParams::new(short.to_string())
                .with_arguments(json!({"id": "7"}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call by the client's name");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.structured_content.expect("echo")["path"],
        "/echo/items/7"
    );
    // The catalog's own name works too.
    let result = gemini
        .call_tool(
            CallToolRequestParams::new("echo_service_getItem")
                .with_arguments(json!({"id": "8"}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call by the catalog's name");
    assert_eq!(
        result.structured_content.expect("echo")["path"],
        "/echo/items/8"
    );
}

#[tokio::test]
async fn a_strict_client_searches_and_calls_with_arguments_as_json_text() {
    use restmcp::config::Dialect;
    use restmcp::schema::dialect::violations;
    let upstream = upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[reload]\nenabled = false\n\
         [[tools.clients]]\nname = \"openai-agent\"\ndialect = \"openai-strict\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\ndiscovery = \"search\"\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    let client = connect_as(&binary, "openai-agent").await;
    let tools = client.list_all_tools().await.expect("tools/list");
    for tool in &tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(
            violations(Dialect::OpenaiStrict, &schema),
            Vec::<String>::new(),
            "{}",
            tool.name
        );
    }
    let call_tool = tools
        .iter()
        .find(|t| t.name == "call_tool")
        .expect("call_tool");
    assert_eq!(
        call_tool.input_schema["properties"]["arguments"]["type"],
        json!(["string", "null"]),
        "strict clients send the arguments as JSON text: {:?}",
        call_tool.input_schema
    );
    let found = client
        .call_tool(
            CallToolRequestParams::new("search_tools").with_arguments(
                json!({"query": "item", "limit": null})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("search");
    let found = found.structured_content.expect("structured");
    let first = &found["tools"][0];
    assert_eq!(
        violations(Dialect::OpenaiStrict, &first["inputSchema"]),
        Vec::<String>::new(),
        "search returns definitions in the client's dialect: {first}"
    );
    let result = client
        .call_tool(
            CallToolRequestParams::new("call_tool").with_arguments(
                json!({"name": "getItem", "arguments": "{\"id\": \"3\", \"limit\": 2}"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("call_tool");
    let echoed = result.structured_content.expect("echo");
    assert_eq!(echoed["path"], "/echo/items/3");
    assert_eq!(echoed["query"], "limit=2");
}

/// With no `discovery` key, `auto` decides per API: GitHub's 1,223 tools (≈ 1.4 million
/// tokens) are served in `search` mode and Petstore's 19 are listed whole, so the whole
/// `tools/list` stays under the default budget of 25,000 tokens; the banner, `check` and
/// `explain` say what was chosen and why, and a GitHub tool is still called through
/// `call_tool`.
#[tokio::test]
async fn with_no_discovery_key_a_huge_api_is_searched_and_a_small_one_listed_whole() {
    let upstream = upstream::start().await;
    let Some(spec) = shared_spec("real/github.json") else {
        return;
    };
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[reload]\nenabled = false\n\
         [apis.github]\nspec = \"{}\"\nbase_url = \"{}\"\n\
         [apis.petstore]\nspec = \"specs/petstore.yaml\"\nbase_url = \"{}\"\n",
        spec.display(),
        upstream.url(),
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    let banner = binary.log();
    assert!(
        banner.contains("discovery: search (auto: ≈ 1,368,")
            && banner.contains("over tools.auto_budget_tokens (25,000)"),
        "{banner}"
    );
    assert!(
        banner.contains("discovery: all (auto: ≈ ")
            && banner.contains("within tools.auto_budget_tokens (25,000)"),
        "{banner}"
    );
    let client = connect(&binary).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(&names[..2], ["search_tools", "call_tool"], "{names:?}");
    assert_eq!(names.len(), 2 + 19, "{names:?}");
    assert!(names.contains(&"getPetById"));
    let listed = serde_json::to_string(&json!({ "tools": tools })).expect("json");
    assert!(
        listed.len() / 4 < 25_000,
        "tools/list ≈ {} tokens",
        listed.len() / 4
    );
    let created = call(
        &client,
        "call_tool",
        json!({"name": "issues_create-comment", "arguments": {
            "owner": "o", "repo": "r", "issue_number": 7, "body": "hi"}}),
    )
    .await;
    assert_ne!(created.is_error, Some(true), "{created:?}");
    let echoed = created.structured_content.expect("the upstream's echo");
    assert_eq!(echoed["path"], "/repos/o/r/issues/7/comments");
    client.cancel().await.ok();

    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("restmcp runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let check = cli(&["check"]);
    assert!(
        check.contains("(\"auto\" chose \"search\": ≈ 1,368,")
            && check.contains("(\"auto\" chose \"all\": ≈ "),
        "{check}"
    );
    let explained = cli(&["explain", "issues_create-comment"]);
    assert!(
        explained.contains("listed       no: found through search_tools")
            && explained.contains("← discovery \"auto\" (default) chose \"search\""),
        "{explained}"
    );
}
