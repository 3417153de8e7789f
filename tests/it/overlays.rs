//! Shaping tools with YAML: restmcp overlays, hand-written tools, OpenAPI
//! Overlay 1.0, `x-mcp`, selection and `specs_dir`, all through the real loading path
//! (config file → `load::load` → dispatcher) against the in-process echo upstream.

use std::path::Path;
use std::sync::Arc;

use restmcp::config::{Config, Overrides};
use restmcp::load::{self, Loaded};
use restmcp::upstream::{CallContext, Dispatcher, ToolResult};
use serde_json::{Map, Value, json};

use crate::support::fixture;
use crate::upstream;

/// A directory with `config.toml` and the given files (paths relative to it).
pub fn project(config: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("specs")).expect("mkdir");
    std::fs::copy(fixture("echo-api.yaml"), dir.path().join("specs/echo.yaml")).expect("copy");
    std::fs::copy(
        fixture("petstore-v3.yaml"),
        dir.path().join("specs/petstore.yaml"),
    )
    .expect("copy");
    std::fs::write(dir.path().join("config.toml"), config).expect("write config");
    for (path, text) in files {
        let path = dir.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }
    dir
}

async fn try_load(dir: &Path) -> Result<(Config, Loaded), String> {
    let config =
        Config::load(&dir.join("config.toml"), &Overrides::default()).map_err(|e| e.to_string())?;
    let loaded = load::load(&config).await.map_err(|e| e.to_string())?;
    Ok((config, loaded))
}

async fn load_dir(dir: &Path) -> (Config, Loaded) {
    try_load(dir).await.unwrap_or_else(|e| panic!("loads: {e}"))
}

fn names(loaded: &Loaded) -> Vec<&str> {
    loaded
        .catalog
        .tools()
        .iter()
        .map(|t| t.name.as_str())
        .collect()
}

async fn call(config: &Config, loaded: Loaded, tool: &str, arguments: Value) -> ToolResult {
    let dispatcher = Dispatcher::new(Arc::new(loaded.catalog), config).expect("dispatcher");
    let arguments: Map<String, Value> = arguments.as_object().cloned().expect("object");
    dispatcher
        .call(tool, arguments, &CallContext::default())
        .await
        .expect("known tool")
}

fn echo_config(base_url: &str, extra: &str) -> String {
    format!(
        "[apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{base_url}\"\n{extra}\n[reload]\nenabled = false\n"
    )
}

/// The conventional overlay named in the config too: the operator's, with every power.
const LISTED: &str = "overlays = [\"specs/echo.overlay.yaml\"]";

const OVERLAY: &str = r#"
tools:
  getItem:
    name: fetch_item
    title: Fetch an item
    append_description: Use it to look one item up.
    arguments:
      id: {name: item_id, description: The item's id}
      X-Trace: {value: fixed-trace}
      limit: {default: 7}
    response:
      fields: [method, path, query, headers.x-trace]
  POST /echo/items/{id}:
    hidden: true
"#;

#[tokio::test]
async fn an_overlay_renames_a_tool_hides_an_argument_with_a_fixed_value_and_narrows_the_response() {
    let upstream = upstream::start().await;
    let dir = project(
        &echo_config(&upstream.url(), ""),
        &[("specs/echo.overlay.yaml", OVERLAY)],
    );
    let (config, loaded) = load_dir(dir.path()).await;
    let names = names(&loaded);
    assert!(names.contains(&"fetch_item"), "{names:?}");
    assert!(!names.contains(&"getItem"), "{names:?}");
    assert!(!names.contains(&"updateItem"), "hidden: {names:?}");

    let tool = loaded.catalog.get("fetch_item").expect("renamed tool");
    assert_eq!(tool.title.as_deref(), Some("Fetch an item"));
    assert!(tool.description.ends_with("Use it to look one item up."));
    let input = tool.input_schema.to_value();
    let properties = input["properties"].as_object().expect("props");
    assert!(properties.contains_key("item_id"));
    assert!(!properties.contains_key("id"));
    assert!(
        !properties.contains_key("X-Trace"),
        "a fixed argument is not shown"
    );
    assert_eq!(properties["limit"]["default"], json!(7));
    assert_eq!(tool.input_schema.to_value()["required"], json!(["item_id"]));
    assert!(tool.output_schema.is_some());
    let report = loaded.report.render();
    assert!(report.contains("hidden"), "{report}");

    let result = call(&config, loaded, "fetch_item", json!({"item_id": "a b"})).await;
    assert!(!result.is_error, "{}", result.joined_text());
    let seen = result.structured.expect("structured");
    assert_eq!(seen["path"], json!("/echo/items/a%20b"));
    assert_eq!(seen["query"], json!("limit=7"), "the default is sent");
    assert_eq!(
        seen["headers"],
        json!({"x-trace": "fixed-trace"}),
        "the fixed value is sent, and only selected fields come back"
    );
    let kept: Vec<&String> = seen.as_object().expect("object").keys().collect();
    assert_eq!(kept, ["method", "path", "query", "headers"]);
}

#[tokio::test]
async fn a_fixed_value_from_the_environment_is_sent_and_never_shown() {
    let upstream = upstream::start().await;
    // SAFETY: set once, by this test only, with a name no other test reads.
    unsafe { std::env::set_var("RESTMCP_TEST_OVERLAY_TENANT", "tenant-s3cret") };
    let overlay = "tools:\n  getItem:\n    arguments:\n      X-Trace: {value_env: RESTMCP_TEST_OVERLAY_TENANT}\n";
    // Reading the environment takes an overlay the config names.
    let dir = project(
        &echo_config(&upstream.url(), LISTED),
        &[("specs/echo.overlay.yaml", overlay)],
    );
    let (config, loaded) = load_dir(dir.path()).await;
    assert!(!loaded.catalog.list_json().contains("tenant-s3cret"));
    let result = call(&config, loaded, "getItem", json!({"id": "1"})).await;
    let text = result.joined_text();
    assert!(!result.is_error, "{text}");
    assert!(
        !text.contains("tenant-s3cret"),
        "the value is redacted from results: {text}"
    );
    assert!(text.contains("x-trace"), "{text}");
}

#[tokio::test]
async fn a_hand_written_tool_calls_the_upstream() {
    let upstream = upstream::start().await;
    let overlay = r#"
add:
  add_note:
    title: Add a note
    description: Adds a note to an item.
    method: POST
    path: /echo/items/{id}/notes
    arguments:
      id: {type: integer, description: The item}
      text: {type: string, required: true}
      urgent: {in: query, type: boolean}
      X-Trace: {in: header, type: string}
"#;
    let config = format!(
        "[apis.notes]\nbase_url = \"{}\"\noverlays = [\"notes.yaml\"]\n[reload]\nenabled = false\n",
        upstream.url()
    );
    let dir = project(&config, &[("notes.yaml", overlay)]);
    let (config, loaded) = load_dir(dir.path()).await;
    assert_eq!(names(&loaded), ["add_note"]);
    let tool = loaded.catalog.get("add_note").expect("tool");
    assert_eq!(
        tool.input_schema.to_value()["required"],
        json!(["id", "text"])
    );
    let bad = call(
        &config,
        load_dir(dir.path()).await.1,
        "add_note",
        json!({"id": "x"}),
    )
    .await;
    assert!(bad.is_error);
    let text = bad.joined_text();
    assert!(
        text.contains("text") && text.contains("id"),
        "every violation: {text}"
    );

    let result = call(
        &config,
        loaded,
        "add_note",
        json!({"id": 5, "text": "hi", "urgent": true, "X-Trace": "t1"}),
    )
    .await;
    let seen = result.structured.expect("structured");
    assert_eq!(seen["method"], json!("POST"));
    assert_eq!(seen["path"], json!("/echo/items/5/notes"));
    assert_eq!(seen["query"], json!("urgent=true"));
    assert_eq!(seen["headers"]["x-trace"], json!("t1"));
    assert_eq!(seen["headers"]["content-type"], json!("application/json"));
    assert_eq!(seen["body"], json!(r#"{"text":"hi"}"#));
}

#[tokio::test]
async fn x_mcp_in_the_spec_names_describes_and_hides_and_an_overlay_wins() {
    let upstream = upstream::start().await;
    let spec = std::fs::read_to_string(fixture("echo-api.yaml"))
        .expect("read")
        .replace(
            "      operationId: getItem\n",
            "      operationId: getItem\n      x-mcp: {name: get_item, description: From the spec's extension, annotations: {openWorldHint: false}}\n",
        )
        .replace(
            "      operationId: getFile\n",
            "      operationId: getFile\n      x-mcp: {hidden: true}\n",
        )
        .replace(
            "      operationId: big\n",
            "      operationId: big\n      x-mcp: {name: big_from_spec}\n",
        );
    let overlay = "tools:\n  big:\n    name: big_from_overlay\n";
    let dir = project(
        &echo_config(&upstream.url(), ""),
        &[("specs/echo.overlay.yaml", overlay)],
    );
    std::fs::write(dir.path().join("specs/echo.yaml"), spec).expect("write");
    let (_, loaded) = load_dir(dir.path()).await;
    let names = names(&loaded);
    assert!(names.contains(&"get_item"), "{names:?}");
    assert!(!names.contains(&"getFile"), "{names:?}");
    assert!(names.contains(&"big_from_overlay"), "{names:?}");
    let tool = loaded.catalog.get("get_item").expect("tool");
    assert_eq!(tool.description, "From the spec's extension");
    assert!(!tool.annotations.open_world_hint);
    let name_source = &tool
        .provenance
        .iter()
        .find(|(what, _)| what == "name")
        .expect("provenance")
        .1;
    assert!(name_source.starts_with("x-mcp "), "{name_source}");
    assert!(name_source.contains("/x-mcp/name"), "{name_source}");
}

#[tokio::test]
async fn tag_filters_and_read_only_select_the_expected_tools() {
    let config = "[apis.petstore]\nspec = \"specs/petstore.yaml\"\nread_only = true\ninclude = { tags = [\"pet\"] }\nexclude = { operations = [\"findPetsByTags\"] }\n[reload]\nenabled = false\n";
    let dir = project(config, &[]);
    let (_, loaded) = load_dir(dir.path()).await;
    assert_eq!(
        names(&loaded),
        ["findPetsByStatus", "getPetById"],
        "safe methods of the pet tag, less the excluded one"
    );
    let report = loaded.report.render();
    assert!(
        report.contains("read_only keeps safe methods only, not POST"),
        "{report}"
    );
    assert!(report.contains("not matched by include"), "{report}");
    assert!(report.contains("matched by exclude"), "{report}");

    let config = "[apis.petstore]\nspec = \"specs/petstore.yaml\"\ninclude = [{ methods = [\"delete\"] }, { paths = [\"/store/**\"], methods = [\"GET\"] }]\n[reload]\nenabled = false\n";
    let dir = project(config, &[]);
    let (_, loaded) = load_dir(dir.path()).await;
    assert_eq!(
        names(&loaded),
        [
            "deletePet",
            "getInventory",
            "getOrderById",
            "deleteOrder",
            "deleteUser"
        ]
    );
}

#[tokio::test]
async fn overlay_mistakes_name_the_file_and_the_entry() {
    let upstream = upstream::start().await;
    let cases = [
        (
            "tools:\n  getItme:\n    name: x\n",
            "specs/echo.overlay.yaml#/tools/getItme: no operation has operationId or label \"getItme\"; did you mean \"getItem\"?",
        ),
        (
            "tools:\n  getItem:\n    arguments:\n      nope: {description: x}\n",
            "specs/echo.overlay.yaml#/tools/getItem/arguments/nope: tool \"getItem\" has no argument \"nope\"",
        ),
        ("tools:\n  getItem:\n    name: big\n", "tool name \"big\""),
        (
            "tools:\n  getItem:\n    arguments:\n      X-Trace: {value_env: RESTMCP_TEST_SURELY_UNSET}\n",
            "X-Trace/value_env: environment variable RESTMCP_TEST_SURELY_UNSET is not set",
        ),
        (
            "tools:\n  getItem:\n    nmae: x\n",
            "specs/echo.overlay.yaml:3:",
        ),
    ];
    for (overlay, expected) in cases {
        let dir = project(
            &echo_config(&upstream.url(), LISTED),
            &[("specs/echo.overlay.yaml", overlay)],
        );
        let error = match try_load(dir.path()).await {
            Ok(_) => panic!("{overlay} loaded"),
            Err(error) => error,
        };
        assert!(error.contains(expected), "{overlay}\n→ {error}");
    }
}

#[tokio::test]
async fn a_spec_dropped_into_specs_dir_becomes_an_api() {
    let config = "specs_dir = \"specs\"\n[apis.petstore]\nspec = \"specs/petstore.yaml\"\nprefix = \"pets_\"\n[reload]\nenabled = false\n";
    let dir = project(
        config,
        &[(
            "specs/common.yaml",
            "components:\n  schemas:\n    X: {type: string}\n",
        )],
    );
    let (config, loaded) = load_dir(dir.path()).await;
    assert_eq!(
        config.apis.keys().collect::<Vec<_>>(),
        ["echo", "petstore"],
        "echo.yaml is discovered; common.yaml is not an API description"
    );
    let names = names(&loaded);
    assert!(names.contains(&"getItem"), "{names:?}");
    assert!(names.contains(&"pets_getPetById"), "{names:?}");
    assert!(
        loaded.inputs.dirs.iter().any(|d| d.ends_with("specs")),
        "the directory is watched for new specs"
    );
}

#[test]
fn explain_says_where_each_piece_of_a_tool_came_from() {
    let dir = project(
        &echo_config("http://127.0.0.1:9", LISTED),
        &[("specs/echo.overlay.yaml", OVERLAY)],
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(["explain", "fetch_item"])
        .current_dir(dir.path())
        .env_remove("RESTMCP_CONFIG")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "fetch_item — API \"echo\", GET /echo/items/{id}",
        "operationId  getItem",
        "← overlay specs/echo.overlay.yaml#/tools/getItem/name",
        "← appended by overlay specs/echo.overlay.yaml#/tools/getItem/append_description",
        "← default for GET",
        "← config apis.echo.base_url",
        "item_id                  path \"id\"  string  required",
        "X-Trace                  header  hidden, fixed",
        "← hidden, value fixed by overlay specs/echo.overlay.yaml#/tools/getItem/arguments/X-Trace/value",
        "← spec (parameter)",
        "accept       application/json\n",
        "← spec (the 2xx and default responses' media types, JSON first)",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(["explain", "fetch_itme"])
        .current_dir(dir.path())
        .env_remove("RESTMCP_CONFIG")
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("did you mean \"fetch_item\"?"), "{error}");
}

#[tokio::test]
async fn an_openapi_overlay_1_0_document_is_applied_to_the_spec() {
    let overlay = r#"
overlay: 1.0.0
info: {title: Trim the echo API, version: "1"}
actions:
  - target: $.paths['/echo/items/{id}'].get
    update:
      summary: Read one item
      x-mcp: {name: read_item}
  - target: $.paths['/_/slow']
    remove: true
  - target: $.paths.*[?@.operationId == 'big']
    update:
      description: A large body.
  - target: $.paths['/nowhere']
    update: {summary: never}
"#;
    let dir = project(
        &echo_config("http://127.0.0.1:9", "overlays = [\"overlays/trim.yaml\"]"),
        &[("overlays/trim.yaml", overlay)],
    );
    let (_, loaded) = load_dir(dir.path()).await;
    let names = names(&loaded);
    assert!(names.contains(&"read_item"), "{names:?}");
    assert!(!names.contains(&"slow"), "{names:?}");
    let tool = loaded.catalog.get("read_item").expect("tool");
    assert_eq!(tool.title.as_deref(), Some("Read one item"));
    let big = loaded.catalog.get("big").expect("big");
    assert!(
        big.description.contains("A large body."),
        "{}",
        big.description
    );

    let broken = "overlay: 1.0.0\ninfo: {title: x, version: \"1\"}\nactions:\n  - target: $.paths[\n    remove: true\n";
    let dir = project(
        &echo_config("http://127.0.0.1:9", "overlays = [\"overlays/trim.yaml\"]"),
        &[("overlays/trim.yaml", broken)],
    );
    let error = match try_load(dir.path()).await {
        Ok(_) => panic!("a broken JSONPath loaded"),
        Err(error) => error,
    };
    assert!(
        error.contains("overlays/trim.yaml#/actions/0/target: invalid JSONPath"),
        "{error}"
    );
}

#[test]
fn restmcp_schema_prints_the_shipped_schemas_without_a_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (which, file) in [
        ("config", "schemas/config.schema.json"),
        ("overlay", "schemas/overlay.schema.json"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
            .args(["schema", which])
            .current_dir(dir.path())
            .env_remove("RESTMCP_CONFIG")
            .output()
            .expect("runs");
        assert!(output.status.success(), "{which}");
        let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let shipped: Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
                .expect("shipped"),
        )
        .expect("JSON");
        assert_eq!(printed, shipped);
    }
}

/// The walkthrough of the book's "Shaping tools with YAML" chapter, as written, on the
/// shipped config and specs.
#[tokio::test]
async fn the_shaping_tools_walkthrough_works_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapter = std::fs::read_to_string(root.join("docs/src/shaping-tools.md"))
        .expect("docs/src/shaping-tools.md");
    let marker = "<!-- walkthrough: specs/petstore.overlay.yaml -->\n```yaml\n";
    let start = chapter.find(marker).expect("walkthrough marker") + marker.len();
    let overlay = &chapter[start..start + chapter[start..].find("```").expect("block end")];

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(root.join("config.toml"), dir.path().join("config.toml")).expect("config");
    std::fs::create_dir(dir.path().join("specs")).expect("mkdir");
    std::fs::copy(
        root.join("specs/petstore.yaml"),
        dir.path().join("specs/petstore.yaml"),
    )
    .expect("spec");
    // The shipped config serves three tools as resources with an overlay of its own.
    std::fs::copy(
        root.join("specs/petstore-resources.overlay.yaml"),
        dir.path().join("specs/petstore-resources.overlay.yaml"),
    )
    .expect("resources overlay");
    // And a workflow of its own.
    std::fs::create_dir(dir.path().join("workflows")).expect("mkdir");
    std::fs::copy(
        root.join("workflows/petstore.arazzo.yaml"),
        dir.path().join("workflows/petstore.arazzo.yaml"),
    )
    .expect("workflow");
    let (_, before) = load_dir(dir.path()).await;
    let before_names = names(&before);
    assert_eq!(before_names.len(), 20);
    assert!(before_names.contains(&"getPetById"));

    std::fs::write(dir.path().join("specs/petstore.overlay.yaml"), overlay).expect("overlay");
    let (_, after) = load_dir(dir.path()).await;
    let after_names = names(&after);
    assert_eq!(after_names.len(), 20, "{after_names:?}");
    for present in ["get_pet", "store_health"] {
        assert!(after_names.contains(&present), "{after_names:?}");
    }
    for absent in ["getPetById", "deletePet"] {
        assert!(!after_names.contains(&absent), "{after_names:?}");
    }
    let tool = after.catalog.get("get_pet").expect("get_pet");
    assert_eq!(tool.input_schema.to_value()["required"], json!(["id"]));
    let diff = restmcp::reload::CatalogDiff::between(&before.catalog, &after.catalog);
    assert!(
        chapter.contains(&format!("): {diff}; now 20 tools")),
        "docs/src/shaping-tools.md shows the log line: {diff}"
    );
}
