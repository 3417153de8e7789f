//! Fixtures and the checks every synthesized tool must pass.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use restmcp::catalog::{self, ApiInput, Catalog, Report, Tool};
use restmcp::config::ToolSettings;
use restmcp::spec::{self, DocumentSet, SpecSource};
use serde_json::Value;

pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(relative)
}

/// A file under `../shared/specs`. CI always has it (and a missing one fails there);
/// elsewhere the test is skipped with a notice.
pub fn shared_spec(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/specs")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is missing; CI must have ../shared beside the repo",
            path.display()
        );
    }
    eprintln!("skipped: {} not present", path.display());
    None
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

pub fn load_docs(path: &Path) -> DocumentSet {
    runtime()
        .block_on(spec::load(&SpecSource::File(path.to_path_buf())))
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()))
}

pub fn build(docs: &DocumentSet) -> (Catalog, Report) {
    let input = ApiInput::new("api", Some(docs));
    catalog::build(&[input], &ToolSettings::default()).expect("catalog builds")
}

/// Counts operations the way the OpenAPI specification defines them, independently of
/// restmcp's own walker: every HTTP-method key of every path item under `paths`.
pub fn count_operations(docs: &DocumentSet) -> usize {
    const METHODS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    root_with_paths(docs)
        .get("paths")
        .and_then(Value::as_object)
        .map(|paths| {
            paths
                .values()
                .filter_map(Value::as_object)
                .map(|item| METHODS.iter().filter(|m| item.contains_key(**m)).count())
                .sum()
        })
        .unwrap_or(0)
}

/// The root document with every path item in its place: a JSON description's path items
/// wait as text (a `null` holds each one's place in `root`), parsed here one by one.
pub fn root_with_paths(docs: &DocumentSet) -> Value {
    let root = docs.root();
    let mut whole = root.root.clone();
    if let (Some(Value::Object(paths)), Some(Value::Object(items))) =
        (root.root.get("paths"), whole.get_mut("paths"))
    {
        for (path, item) in paths {
            items.insert(path.clone(), root.path_item(path, item).into_owned());
        }
    }
    whole
}

/// Everything a client relies on: valid unique names, text that says something, and
/// schemas that are valid JSON Schema 2020-12, self-contained (no `$ref` leaves them, not
/// even from inside a value), free of OpenAPI-only keywords, and compilable.
pub fn assert_tools_are_valid(catalog: &Catalog) {
    let mut names = HashSet::new();
    for tool in catalog.tools() {
        assert!(
            !tool.name.is_empty()
                && tool.name.len() <= 64
                && tool
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "invalid tool name {:?}",
            tool.name
        );
        assert!(
            names.insert(tool.name.clone()),
            "duplicate tool name {}",
            tool.name
        );
        assert!(
            !tool.description.trim().is_empty(),
            "{}: empty description",
            tool.name
        );
        assert!(
            tool.title.as_ref().is_none_or(|t| !t.trim().is_empty()),
            "{}: empty title",
            tool.name
        );
        let input = tool.input_schema.to_value();
        assert_eq!(input["type"], "object", "{}: input root", tool.name);
        for key in input["properties"].as_object().expect("properties").keys() {
            assert!(
                key.len() <= 64
                    && key
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)),
                "{}: argument name {key:?}",
                tool.name
            );
        }
        check_schema(tool, "inputSchema", &input);
        if let Some(output) = tool.output_schema.as_ref().map(|s| s.to_value()) {
            assert_eq!(output["type"], "object", "{}: output root", tool.name);
            check_schema(tool, "outputSchema", &output);
        }
    }
}

fn check_schema(tool: &Tool, which: &str, schema: &Value) {
    if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
        panic!(
            "{} {which} is not valid JSON Schema 2020-12: {error}\n{}",
            tool.name,
            serde_json::to_string_pretty(schema).unwrap_or_default()
        );
    }
    if let Err(error) = jsonschema::draft202012::new(schema) {
        panic!("{} {which} does not compile: {error}", tool.name);
    }
    let defs = schema.get("$defs").and_then(Value::as_object);
    walk_schema(schema, &mut |node| {
        if let Some(reference) = node.get("$ref") {
            let name = reference
                .as_str()
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .unwrap_or_else(|| {
                    panic!("{} {which}: $ref {reference} leaves the schema", tool.name)
                });
            assert!(
                defs.is_some_and(|d| d.contains_key(name)),
                "{} {which}: $ref to missing def {name}",
                tool.name
            );
        }
        for key in ["description", "title"] {
            if let Some(text) = node.get(key).and_then(Value::as_str) {
                assert!(
                    !text.trim().is_empty(),
                    "{} {which}: an empty {key}",
                    tool.name
                );
            }
        }
        // Values are data, but a `$ref` in one is still a `$ref` leaving the tool.
        for key in ["default", "const", "enum", "examples"] {
            if let Some(value) = node.get(key) {
                assert!(
                    !holds_ref(value),
                    "{} {which}: a $ref is left in {key}: {value}",
                    tool.name
                );
            }
        }
        for key in node.as_object().into_iter().flat_map(|m| m.keys()) {
            let openapi_only = matches!(
                key.as_str(),
                "nullable" | "discriminator" | "xml" | "example" | "externalDocs" | "x-nullable"
            ) || key.starts_with("x-");
            assert!(
                !openapi_only,
                "{} {which}: OpenAPI keyword {key} left",
                tool.name
            );
        }
        for bound in ["exclusiveMinimum", "exclusiveMaximum"] {
            if let Some(value) = node.get(bound) {
                assert!(value.is_number(), "{} {which}: boolean {bound}", tool.name);
            }
        }
    });
}

/// True when `value` has an object with a `$ref` key anywhere in it.
pub fn holds_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(holds_ref),
        Value::Array(items) => items.iter().any(holds_ref),
        _ => false,
    }
}

/// Visits every schema object in schema positions (not inside `properties` names,
/// `enum` values, `default`s or `examples`).
pub fn walk_schema(schema: &Value, visit: &mut dyn FnMut(&Value)) {
    let Value::Object(map) = schema else { return };
    visit(schema);
    for (key, value) in map {
        match (key.as_str(), value) {
            (
                "properties" | "patternProperties" | "$defs" | "dependentSchemas",
                Value::Object(children),
            ) => children.values().for_each(|c| walk_schema(c, visit)),
            ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(children)) => {
                children.iter().for_each(|c| walk_schema(c, visit))
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "contentSchema",
                child,
            ) => walk_schema(child, visit),
            _ => {}
        }
    }
}

/// Loads a spec and asserts the invariants every API must satisfy; returns the catalog.
pub fn assert_spec_maps_completely(path: &Path) -> Catalog {
    let docs = load_docs(path);
    let operations = count_operations(&docs);
    let (catalog, report) = build(&docs);
    assert_eq!(
        report.skipped(),
        0,
        "{}: {}",
        path.display(),
        report.render()
    );
    assert_eq!(
        catalog.len(),
        operations,
        "{}: one tool per operation",
        path.display()
    );
    assert_tools_are_valid(&catalog);
    catalog
}

/// `tools/call` from a test client, which must answer (a tool error is still an answer).
pub async fn call<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    tool: &str,
    arguments: serde_json::Value,
) -> rmcp::model::CallToolResult {
    client
        .call_tool(
            rmcp::model::CallToolRequestParams::new(tool.to_string())
                .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call")
}

/// One stateless 2026-07-28 `tools/call` of `name` (its `params` besides the name:
/// `arguments`, and `requestState`/`inputResponses` for a confirmation's second round), with
/// `headers` (a token, a forwarded header); the JSON-RPC answer, from JSON or the last SSE
/// event. The client declares the elicitation capability.
pub async fn stateless_call(
    url: &str,
    name: &str,
    params: serde_json::Value,
    headers: &[(&str, &str)],
) -> Value {
    let mut params = params;
    params["name"] = serde_json::json!(name);
    stateless_request(url, "tools/call", params, headers).await
}

/// One stateless 2026-07-28 request of `method`: its JSON-RPC answer (the last SSE event,
/// or the JSON body).
pub async fn stateless_request(
    url: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> Value {
    let text = stateless_text(url, method, params, headers).await;
    text.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find_map(|data| serde_json::from_str(data).ok())
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("not a JSON-RPC answer: {text}"))
}

/// The whole answer (JSON, or every SSE event) to a stateless 2026-07-28 request of
/// `method`: `params` get the revision, `clientInfo` and capabilities (elicitation) added
/// to their `_meta`, and `Mcp-Name` is the name or URI they carry.
pub async fn stateless_text(
    url: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> String {
    restmcp::http_client::install_crypto_provider();
    let mut params = params;
    let mut meta = params["_meta"].as_object().cloned().unwrap_or_default();
    for (key, value) in [
        (
            "io.modelcontextprotocol/protocolVersion",
            serde_json::json!("2026-07-28"),
        ),
        (
            "io.modelcontextprotocol/clientInfo",
            serde_json::json!({"name": "restmcp-tests", "version": "1"}),
        ),
        (
            "io.modelcontextprotocol/clientCapabilities",
            serde_json::json!({"elicitation": {"form": {}}}),
        ),
    ] {
        meta.entry(key).or_insert(value);
    }
    params["_meta"] = Value::Object(meta);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    // Mcp-Name: a tool's or prompt's name, a resource's URI.
    let name = params.get("name").or_else(|| params.get("uri"));
    if let Some(name) = name.and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    for (header, value) in headers {
        request = request.header(*header, *value);
    }
    request
        .body(body.to_string())
        .send()
        .await
        .expect("POST")
        .text()
        .await
        .expect("answer")
}

/// Every `.rs` file below `dir`, sorted, into `out`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
}
