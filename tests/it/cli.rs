//! The real binary: `restmcp tools` and `restmcp check`, configuration layering and the
//! errors a user sees.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::fixture;

fn restmcp(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_restmcp"));
    command.args(args).current_dir(dir);
    for (key, _) in std::env::vars() {
        if key.starts_with("RESTMCP_") {
            command.env_remove(key);
        }
    }
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("restmcp runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn tool_names(output: &Output) -> Vec<String> {
    let list: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(output), stderr(output)));
    list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect()
}

/// A config directory with the Petstore spec beside a config.toml.
fn config_dir(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("specs")).expect("mkdir");
    std::fs::copy(
        fixture("petstore-v3.yaml"),
        dir.path().join("specs/pets.yaml"),
    )
    .expect("copy");
    std::fs::write(dir.path().join("config.toml"), config).expect("write config");
    dir
}

#[test]
fn tools_json_prints_the_tools_list_of_a_spec() {
    let spec = fixture("petstore-v3.yaml");
    let output = restmcp(
        &["tools", "--spec", spec.to_str().expect("utf-8"), "--json"],
        Path::new("."),
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let names = tool_names(&output);
    assert_eq!(names.len(), 19);
    assert_eq!(names[0], "updatePet");
}

#[test]
fn tools_text_lists_name_method_path_and_summary() {
    let spec = fixture("petstore-v3.yaml");
    let output = restmcp(
        &["tools", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.starts_with("getPetById"))
        .expect("line");
    assert!(
        line.contains("GET") && line.contains("/pet/{petId}") && line.contains("Find pet by ID"),
        "{line}"
    );
    assert!(text.contains("19 tools; tools/list is "), "{text}");
}

#[test]
fn config_paths_are_relative_to_the_config_file_not_the_working_directory() {
    let dir = config_dir("[apis.pets]\nspec = \"specs/pets.yaml\"\n");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    let output = restmcp(
        &[
            "tools",
            "--json",
            "--config",
            config.to_str().expect("utf-8"),
        ],
        elsewhere.path(),
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(tool_names(&output).len(), 19);
}

#[test]
fn environment_overrides_the_file_and_flags_override_the_environment() {
    let dir =
        config_dir("[tools]\nmax_name_length = 64\n\n[apis.pets]\nspec = \"specs/pets.yaml\"\n");
    let env = [
        ("RESTMCP_APIS__PETS__PREFIX", "pets_"),
        ("RESTMCP_TOOLS__MAX_NAME_LENGTH", "16"),
    ];
    let output = restmcp(&["tools", "--json"], dir.path(), &env);
    assert!(output.status.success(), "{}", stderr(&output));
    let names = tool_names(&output);
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("pets_") && n.len() <= 16),
        "{names:?}"
    );
    assert!(names.contains(&"pets_updatePet".to_string()), "{names:?}");

    let output = restmcp(
        &["tools", "--json", "--max-name-length", "64"],
        dir.path(),
        &env,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(tool_names(&output).contains(&"pets_createUsersWithListInput".to_string()));
}

#[test]
fn unknown_keys_and_wrong_types_name_the_key_and_the_file() {
    let dir = config_dir("[apis.pets]\nspec = \"specs/pets.yaml\"\nbase_ulr = \"http://x\"\n");
    let output = restmcp(&["tools"], dir.path(), &[]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("base_ulr"), "{message}");
    assert!(message.contains("config.toml"), "{message}");

    let dir = config_dir(
        "[tools]\nmax_name_length = \"long\"\n[apis.pets]\nspec = \"specs/pets.yaml\"\n",
    );
    let message = stderr(&restmcp(&["tools"], dir.path(), &[]));
    assert!(message.contains("tools.max_name_length"), "{message}");
    assert!(message.contains("config.toml"), "{message}");

    let dir = config_dir("[apis.pets]\nspec = \"specs/pets.yaml\"\n");
    let message = stderr(&restmcp(
        &["tools"],
        dir.path(),
        &[("RESTMCP_TOOLS__MAX_NAME_LENGTH", "5")],
    ));
    assert!(
        message.contains("tools.max_name_length = 5: must be between 16 and 128"),
        "{message}"
    );
}

#[test]
fn a_missing_config_file_says_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = restmcp(&["tools"], dir.path(), &[]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(
        message.contains("config.toml: config file not found"),
        "{message}"
    );
    assert!(message.contains("--spec"), "{message}");
}

#[test]
fn check_passes_on_a_clean_spec_and_reports_totals() {
    let spec = fixture("petstore-v3.yaml");
    let output = restmcp(
        &["check", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    );
    assert!(output.status.success(), "{}", stdout(&output));
    let text = stdout(&output);
    assert!(text.contains("19 of 19 operations mapped"), "{text}");
    assert!(
        text.contains("19 operations: 19 mapped, 0 skipped; tools/list is "),
        "{text}"
    );
    assert!(text.contains(" tokens"), "{text}");
    assert!(
        text.contains("OAuth scopes the tools ask for (tools each is needed by): read:pets (7), write:pets (7)"),
        "{text}"
    );
    // explain names a tool's scope alternatives; getPetById also takes an API key.
    let explain = |tool: &str| {
        stdout(&restmcp(
            &["explain", "--spec", spec.to_str().expect("utf-8"), tool],
            Path::new("."),
            &[],
        ))
    };
    assert!(explain("addPet").contains("  scopes       read:pets write:pets\n"));
    assert!(explain("getPetById").contains("  scopes       (none: any OAuth token may call it)"));
}

#[test]
fn check_warns_when_the_clients_own_authorization_header_is_forwarded() {
    let passthrough = config_dir(
        "[apis.pets]\nspec = \"specs/pets.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
         forward_headers = [\"X-Tenant\", { from = \"authorization\", to = \"X-User-Token\" }]\n",
    );
    let output = restmcp(&["check"], passthrough.path(), &[]);
    let text = stdout(&output);
    assert!(
        text.contains("warning: apis.pets.forward_headers passes the MCP client's own Authorization header on (as X-User-Token)")
            && text.contains("token_exchange"),
        "{text}{}",
        stderr(&output)
    );
    // Forwarding another header into Authorization is the operator's design, not passthrough.
    let renamed = config_dir(
        "[apis.pets]\nspec = \"specs/pets.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
         forward_headers = [{ from = \"X-Upstream-Token\", to = \"Authorization\" }]\n",
    );
    let text = stdout(&restmcp(&["check"], renamed.path(), &[]));
    assert!(!text.contains("passthrough"), "{text}");
}

#[test]
fn check_fails_and_explains_each_operation_it_could_not_map() {
    let spec = fixture("broken/missing-ref.yaml");
    let output = restmcp(
        &["check", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("1 of 3 operations mapped"), "{text}");
    assert!(text.contains("SKIPPED  GET /local"), "{text}");
    assert!(text.contains("#/components/parameters/Gone"), "{text}");
    assert!(text.contains("SKIPPED  POST /external"), "{text}");
    assert!(text.contains("absent.yaml"), "{text}");

    let output = restmcp(
        &["check", "--json", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("json");
    let outcomes: Vec<&str> = report["apis"][0]["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .map(|o| o["outcome"].as_str().expect("outcome"))
        .collect();
    assert_eq!(outcomes, ["mapped", "skipped", "skipped"]);
}

#[test]
fn check_reports_renames_and_dropped_keywords() {
    let spec = fixture("library-3.1.yaml");
    let output = restmcp(
        &["check", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    );
    let text = stdout(&output);
    assert!(
        text.contains("renamed from \"GET /categories/{categoryId}\": no operationId"),
        "{text}"
    );
}

/// `check` and `explain` say what a path key's `#` suffix became.
#[test]
fn check_and_explain_show_what_a_path_suffix_became() {
    let spec = fixture("aws-path-suffixes.yaml");
    let spec = spec.to_str().expect("utf-8");
    let base = ["--spec", spec, "--base-url", "https://elb.example.test"];
    let output = restmcp(&[&["check"], &base[..]].concat(), Path::new("."), &[]);
    assert!(output.status.success(), "{}", stdout(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "path suffix \"#tagKeys\" is not part of the request path (requests go to /tags/{resourceArn}): it only names the operation"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "path suffix \"#Action=DescribeRegions&Version=2016-11-15\" is not part of the request path (requests go to /): Action=DescribeRegions is sent as a fixed query parameter"
        ),
        "{text}"
    );

    let output = restmcp(
        &[&["explain", "DescribeRegions"], &base[..]].concat(),
        Path::new("."),
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("GET /#Action=DescribeRegions&Version=2016-11-15"),
        "{text}"
    );
    assert!(
        text.contains(
            "upstream     GET https://elb.example.test/?Action=DescribeRegions&Version=2016-11-15"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "the path suffix \"#Action=DescribeRegions&Version=2016-11-15\" is not requested"
        ),
        "{text}"
    );
    assert!(text.contains("query  hidden, fixed"), "{text}");

    let output = restmcp(
        &[&["explain", "GET_AddTags"], &base[..]].concat(),
        Path::new("."),
        &[],
    );
    let text = stdout(&output);
    assert!(
        text.contains("its default is from the path suffix \"#Action=AddTags\""),
        "{text}"
    );
}

#[test]
fn broken_documents_name_the_file_and_the_position() {
    let spec = fixture("broken/bad-yaml.yaml");
    let output = restmcp(
        &["tools", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    let expected = format!("{}:", spec.display());
    assert!(message.contains(&expected), "{message}");
    assert!(message.contains("invalid YAML"), "{message}");

    let spec = fixture("broken/not-openapi.json");
    let message = stderr(&restmcp(
        &["tools", "--spec", spec.to_str().expect("utf-8")],
        Path::new("."),
        &[],
    ));
    assert!(
        message.contains("not-openapi.json#: neither \"openapi\" nor \"swagger\" is set"),
        "{message}"
    );

    let message = stderr(&restmcp(
        &["tools", "--spec", "no/such/file.yaml"],
        Path::new("."),
        &[],
    ));
    assert!(
        message.contains("no/such/file.yaml: cannot read"),
        "{message}"
    );
}

#[tokio::test]
async fn call_sends_the_request_and_prints_the_mcp_result() {
    let upstream = crate::upstream::start().await;
    let spec = fixture("echo-api.yaml");
    let base_url = upstream.url();
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            restmcp(&args, Path::new("."), &[])
        })
    };
    let common = |tool: &str, arguments: &str| {
        vec![
            "call".to_string(),
            tool.to_string(),
            "--args".to_string(),
            arguments.to_string(),
            "--spec".to_string(),
            spec.display().to_string(),
            "--base-url".to_string(),
            base_url.clone(),
        ]
    };
    let output = run(common("getItem", r#"{"id": "42", "limit": 3}"#))
        .await
        .expect("runs");
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(printed["isError"], false);
    assert_eq!(printed["structuredContent"]["path"], "/echo/items/42");
    assert_eq!(printed["structuredContent"]["query"], "limit=3");
    assert_eq!(printed["content"][0]["type"], "text");

    let output = run(common("getItem", r#"{"limit": "x"}"#))
        .await
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(printed["isError"], true);
    assert!(printed.get("structuredContent").is_none());
    let text = printed["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("missing required argument \"id\""), "{text}");

    let output = run(common("getItem", "[1]")).await.expect("runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("--args must be a JSON object"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn environment_variables_outside_the_config_tables_are_not_configuration() {
    let dir = config_dir("[apis.pets]\nspec = \"specs/pets.yaml\"\n");
    let output = restmcp(
        &["tools", "--json"],
        dir.path(),
        &[("RESTMCP_BIN", "/usr/bin/restmcp")],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let output = restmcp(
        &["tools"],
        dir.path(),
        &[("RESTMCP_TOOLS__MAX_NAM_LENGTH", "20")],
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("max_nam_length"),
        "{}",
        stderr(&output)
    );
}

/// `restmcp tools --json` printed the catalog's tools, not the served
/// `tools/list`, which also holds restmcp's status tool when an API documents a `202` and
/// the discovery tools of an API in search mode (GitHub: 1,223 printed, 1,224 served). It
/// now prints what a client gets: here the whole listing the server serves over Streamable
/// HTTP, gathered page by page (two tools a page), for protocol 2025-11-25 (the default)
/// and for 2026-07-28, and as a client that a `[[tools.clients]]` rule names.
#[tokio::test]
async fn tools_json_prints_the_tools_list_the_server_serves() {
    let jobs = r#"
openapi: 3.0.3
info: {title: Jobs, version: "1"}
paths:
  /jobs:
    post:
      operationId: startJob
      responses:
        "202": {description: Started; follow Operation-Location}
  /jobs/{id}:
    get:
      operationId: getJob
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200": {description: The job, content: {application/json: {schema: {type: object}}}}
"#;
    let config = "[server]\nlisten = \"127.0.0.1:0\"\npage_size = 2\n[reload]\nenabled = false\n\
         [[tools.clients]]\nname = \"gemini*\"\ndialect = \"gemini\"\nmax_name_length = 16\n\
         [apis.jobs]\nspec = \"specs/jobs.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"http://127.0.0.1:9\"\ndiscovery = \"search\"\n";
    let dir = crate::overlays::project(config, &[("specs/jobs.yaml", jobs)]);
    let binary = crate::reload::Binary::start(dir.path()).await;

    for (client, version) in [
        (None, "2025-11-25"),
        (None, "2026-07-28"),
        (Some("gemini-cli"), "2025-11-25"),
    ] {
        let mut args = vec!["tools", "--json", "--protocol-version", version];
        if let Some(client) = client {
            args.extend(["--client", client]);
        }
        let output = restmcp(&args, dir.path(), &[]);
        assert!(output.status.success(), "{}", stderr(&output));
        let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let served = served_listing(&binary.url, client.unwrap_or("raw-test"), version).await;
        assert_eq!(printed, served, "{client:?} {version}");
        let names: Vec<&str> = printed["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"operation_status") && names.contains(&"search_tools"),
            "{names:?}"
        );
    }
}

/// A stateless call does not wait for the client's listing to be made (for Microsoft
/// Graph's 11,422 tools and 2026-07-28 that took 0.4 s on each snapshot's first call): it
/// resolves the name and arguments the catalog's way. Here the calls made before any
/// `tools/list` (a tool, and `search_tools` of an API in search mode) answer exactly as
/// the same calls after the listing has been made.
#[tokio::test]
async fn a_call_before_any_listing_answers_as_after_it() {
    let config = "[server]\nlisten = \"127.0.0.1:0\"\npage_size = 4\n[reload]\nenabled = false\n\
         [apis.pets]\nspec = \"specs/petstore.yaml\"\nmock = true\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"http://127.0.0.1:9\"\ndiscovery = \"search\"\n";
    let dir = crate::overlays::project(config, &[]);
    let binary = crate::reload::Binary::start(dir.path()).await;
    let calls = [
        ("getPetById", serde_json::json!({"petId": 7})),
        ("search_tools", serde_json::json!({"query": "get an item"})),
    ];
    let mut before = Vec::new();
    for (name, arguments) in &calls {
        before.push(stateless_call(&binary.url, name, arguments).await);
    }
    let listed = served_listing(&binary.url, "raw-test", "2026-07-28").await;
    assert!(
        listed["tools"].as_array().is_some_and(|t| t.len() > 2),
        "{listed}"
    );
    for ((name, arguments), before) in calls.iter().zip(before) {
        let answered = before["content"].as_array().is_some_and(|c| !c.is_empty());
        assert!(answered && before["isError"] != true, "{name}: {before}");
        let after = stateless_call(&binary.url, name, arguments).await;
        assert_eq!(before, after, "{name}");
    }
}

/// The result of one stateless (2026-07-28) `tools/call`.
async fn stateless_call(url: &str, name: &str, arguments: &Value) -> Value {
    restmcp::http_client::install_crypto_provider();
    let (status, _, message) = crate::mcp::post_with(
        url,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ],
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": name, "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}}),
    )
    .await;
    assert_eq!(status, 200, "{message:?}");
    let mut message = message.expect("answer");
    assert!(message.get("result").is_some(), "{name}: {message}");
    message["result"].take()
}

/// Every page of `tools/list` served at `url` to a client named `client` on `version`,
/// gathered into one result (without `nextCursor`).
async fn served_listing(url: &str, client: &str, version: &str) -> Value {
    restmcp::http_client::install_crypto_provider();
    let stateless = version == "2026-07-28";
    let session = if stateless {
        None
    } else {
        let (status, headers, _) = crate::mcp::post(
            url,
            None,
            None,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": client, "version": "1"}}}),
        )
        .await;
        assert_eq!(status, 200);
        let session = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("session")
            .to_string();
        crate::mcp::post(
            url,
            Some(&session),
            Some(version),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        Some(session)
    };
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = serde_json::json!({});
        if let Some(cursor) = &cursor {
            params["cursor"] = Value::String(cursor.clone());
        }
        if stateless {
            params["_meta"] = serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            });
        }
        let mut headers = vec![("MCP-Protocol-Version", version)];
        match &session {
            Some(session) => headers.push(("Mcp-Session-Id", session.as_str())),
            None => headers.push(("Mcp-Method", "tools/list")),
        }
        let (status, _, message) = crate::mcp::post_with(
            url,
            &headers,
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params}),
        )
        .await;
        assert_eq!(status, 200, "{message:?}");
        let mut result = message.expect("answer")["result"].take();
        tools.extend(result["tools"].as_array().cloned().expect("tools"));
        pages += 1;
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_string()),
            None => {
                assert!(pages > 1, "the listing was served in pages");
                result["tools"] = Value::Array(tools);
                return result;
            }
        }
    }
}

/// The shipped Petstore serves three resources (two of them templates) and the
/// `pet_report` prompt: `check` lists each with its tool and completions, `explain` a
/// tool's resource with its variables.
#[test]
fn check_and_explain_show_resources_prompts_and_completions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = restmcp(&["check"], root, &[]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", stderr(&output));
    for expected in [
        "\nresources (resources/list) and templates (resources/templates/list)\n",
        "  template petstore://pets/{petId}                  → getPetById (application/json)\n",
        "           {petId} path argument; completions: tool findPetsByStatus at /*/id, with status=available\n",
        "  template petstore://pets{?status}                 → findPetsByStatus (application/json)\n",
        "           {status} query argument; completions: the parameter's enum or examples (available, pending, sold)\n",
        "  resource petstore://store/inventory               → getInventory (application/json)\n",
        "\nprompts (prompts/list)\n",
        "  prompt   pet_report                               config prompts.pet_report\n",
        "           argument petId (required); completions: tool findPetsByStatus at /*/id, with status=available\n",
        "           messages: text; resource petstore://pets/{{petId}}\n",
        " tokens; 1 resource, 2 templates, 1 prompt; 1 of 1 workflows published\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let json: Value = serde_json::from_slice(&restmcp(&["check", "--json"], root, &[]).stdout)
        .expect("check --json");
    let surface = &json["surface"];
    let pet = surface["resources"]
        .as_array()
        .and_then(|all| all.iter().find(|r| r["tool"] == "getPetById"))
        .expect("getPetById's resource");
    assert_eq!(pet["uri"], "petstore://pets/{petId}");
    assert_eq!(pet["template"], true);
    assert_eq!(pet["variables"][0]["place"], "path");
    assert_eq!(surface["prompts"][0]["name"], "pet_report");
    assert_eq!(surface["prompts"][0]["arguments"][0]["required"], true);

    let explain = stdout(&restmcp(&["explain", "getPetById"], root, &[]));
    for expected in [
        "  resource     petstore://pets/{petId} (template \"pet\", application/json)\n",
        "← overlay specs/petstore-resources.overlay.yaml#/tools/getPetById/resource\n",
        "    {petId}                  path argument; completions: tool findPetsByStatus at /*/id, with status=available\n",
    ] {
        assert!(
            explain.contains(expected),
            "missing {expected:?} in:\n{explain}"
        );
    }
    let explain = stdout(&restmcp(&["explain", "addPet"], root, &[]));
    assert!(!explain.contains("resource"), "{explain}");
    let json: Value = serde_json::from_slice(
        &restmcp(&["explain", "--json", "findPetsByStatus"], root, &[]).stdout,
    )
    .expect("explain --json");
    assert_eq!(json["resource"]["uri"], "petstore://pets{?status}");
    assert_eq!(
        json["resource"]["variables"][0]["choices"],
        serde_json::json!(["available", "pending", "sold"])
    );
}
