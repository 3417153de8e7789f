//! What each fuzz target checks, shared by the fuzz targets (`fuzz_targets/`) and by the
//! regression tests (`tests/it/fuzz.rs`), which run every saved input through the same
//! checks. A check fails by panicking; returning means the input was handled.
//!
//! Every check drives restmcp's own code as the server does: no network (mock mode for
//! calls, an in-process router for MCP), so an execution costs microseconds.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use restmcp::catalog::{self, ApiInput, Catalog};
use restmcp::config::{ServerSettings, ToolSettings};
use restmcp::spec::DocumentSet;
use restmcp::spec::parse::parse_document;
use restmcp::upstream::response::{self, HttpResponse, Shape};
use restmcp::upstream::tape::Tape;
use restmcp::upstream::validate::Validators;
use restmcp::upstream::{CallContext, Content, Dispatcher, ToolResult, request};
use serde_json::{Map, Value};

/// The upstream origin every synthesized tool is given; no request is ever sent there.
pub const BASE: &str = "http://127.0.0.1:9/base";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fn document(name: &str, bytes: &[u8]) -> DocumentSet {
    let root = parse_document(name, bytes).expect("a shipped spec parses");
    let url = url::Url::parse(&format!("file:///fuzz/{name}")).expect("url");
    DocumentSet::single(url, name.to_string(), root)
}

/// Specs whose tools cover every parameter location, style and body kind restmcp builds.
fn shipped_specs() -> Vec<DocumentSet> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Both the fuzz crate and the main package have a parent or self with these files.
    let repo = if root.join("specs").is_dir() {
        root.to_path_buf()
    } else {
        root.join("..")
    };
    [
        "tests/fixtures/echo-api.yaml",
        "tests/fixtures/petstore-v2.json",
        "tests/fixtures/library-3.1.yaml",
        "specs/petstore.yaml",
    ]
    .iter()
    .map(|file| {
        let bytes = std::fs::read(repo.join(file)).expect("fixture");
        let name = Path::new(file)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(file);
        document(name, &bytes)
    })
    .collect()
}

/// One catalog of the shipped specs, each API under its own prefix, in mock mode or not.
fn shipped_catalog(mock: bool) -> Catalog {
    let docs = shipped_specs();
    let names = ["echo", "swagger", "library", "petstore"];
    let prefixes = ["e_", "s_", "l_", "p_"];
    let inputs: Vec<ApiInput<'_>> = docs
        .iter()
        .zip(names.iter().zip(prefixes))
        .map(|(docs, (name, prefix))| ApiInput {
            base_url: Some(BASE),
            prefix,
            mock,
            ..ApiInput::new(name, Some(docs))
        })
        .collect();
    let (catalog, _) = catalog::build(&inputs, &ToolSettings::default()).expect("catalog");
    catalog
}

// ---------------------------------------------------------------------------------------
// spec_load

/// Any bytes as a spec: parse (YAML or JSON), resolve references, synthesize tools, compile
/// their schemas and serialize the tool list. Errors are fine; panics, hangs and runaway
/// memory are not.
pub fn spec_load(data: &[u8]) {
    let Ok(root) = parse_document("fuzz.yaml", data) else {
        return;
    };
    let url = url::Url::parse("file:///fuzz/fuzz.yaml").expect("url");
    let docs = DocumentSet::single(url, "fuzz.yaml".to_string(), root);
    let input = ApiInput {
        base_url: Some(BASE),
        ..ApiInput::new("fuzz", Some(&docs))
    };
    let Ok((catalog, report)) = catalog::build(&[input], &ToolSettings::default()) else {
        return;
    };
    let _ = report.render();
    let validators = Validators::new(catalog.len());
    let mut names = std::collections::HashSet::new();
    for (index, tool) in catalog.tools().iter().enumerate() {
        assert!(
            valid_tool_name(&tool.name),
            "invalid tool name {:?}",
            tool.name
        );
        assert!(
            names.insert(tool.name.clone()),
            "duplicate tool name {:?}",
            tool.name
        );
        assert!(
            tool.input_schema.is_object(),
            "inputSchema of {} is not an object",
            tool.name
        );
        if let Some(compiled) = validators.get(index, tool) {
            let _ = compiled.check_arguments(&serde_json::Value::Object(Map::new()));
        }
        let _ = request::build(&tool.route, &Map::new());
    }
    let listed: Value = serde_json::from_str(catalog.list_json()).expect("tools/list is JSON");
    assert!(listed.is_array() || listed.is_object());
}

/// MCP's rule for tool names (2025-11-25, "Tool Names"): 1 to 128 characters of
/// `A-Z a-z 0-9 _ - .`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

// ---------------------------------------------------------------------------------------
// call_arguments

struct Calls {
    dispatcher: Dispatcher,
    plain: Catalog,
}

fn calls() -> &'static Calls {
    static CALLS: OnceLock<Calls> = OnceLock::new();
    CALLS.get_or_init(|| {
        restmcp::http_client::install_crypto_provider();
        let catalog = Arc::new(shipped_catalog(true));
        Calls {
            dispatcher: restmcp::mock::plug(
                Dispatcher::with_settings(catalog, Default::default()).expect("dispatcher"),
            ),
            plain: shipped_catalog(false),
        }
    })
}

/// The first byte picks a tool, the rest is its arguments as JSON. The call goes through
/// the dispatcher in mock mode (validation, defaults, request building, the mock answer,
/// response mapping); the request is also built from the unvalidated arguments, which
/// must never leave the base URL's origin and path or put a line break in a header.
pub fn call_arguments(data: &[u8]) {
    let Some((&pick, json)) = data.split_first() else {
        return;
    };
    let Ok(Value::Object(arguments)) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let calls = calls();
    let tools = calls.plain.tools();
    let tool = &tools[usize::from(pick) % tools.len()];
    if let Ok(built) = request::build(&tool.route, &arguments) {
        stays_on_base(&built.url);
        for (name, value) in &built.headers {
            assert!(
                !name.contains(['\r', '\n']) && !value.contains(['\r', '\n']),
                "line break in header {name:?}: {value:?}"
            );
        }
    }
    let called = runtime()
        .block_on(
            calls
                .dispatcher
                .call(&tool.name, arguments, &CallContext::default()),
        )
        .expect("a listed tool is known");
    well_formed(&called);
}

/// The URL keeps the base URL's scheme, host, port and path prefix, and its path has no
/// dot segments that a server would collapse into a parent.
pub fn stays_on_base(built: &str) {
    let parsed = url::Url::parse(built).unwrap_or_else(|e| panic!("{built:?}: {e}"));
    assert_eq!(parsed.scheme(), "http", "{built}");
    assert_eq!(parsed.host_str(), Some("127.0.0.1"), "{built}");
    assert_eq!(parsed.port(), Some(9), "{built}");
    assert!(parsed.path().starts_with("/base/"), "{built}");
    assert!(
        built.starts_with(&format!("{BASE}/")),
        "the URL text itself starts with the base: {built}"
    );
}

fn well_formed(result: &ToolResult) {
    assert!(!result.content.is_empty() || result.structured.is_some());
    if result.is_error {
        assert!(
            result.structured.is_none(),
            "an error carries no structuredContent"
        );
    }
    serde_json::to_vec(result).expect("a result serializes");
}

// ---------------------------------------------------------------------------------------
// response_mapping

const CONTENT_TYPES: &[Option<&str>] = &[
    Some("application/json"),
    Some("application/json; charset=utf-8"),
    Some("application/problem+json"),
    Some("application/vnd.api+json"),
    Some("text/plain"),
    Some("text/plain; charset=iso-8859-1"),
    Some("text/html"),
    Some("text/csv"),
    Some("application/xml"),
    Some("application/x-ndjson"),
    Some("image/png"),
    Some("image/svg+xml"),
    Some("audio/mpeg"),
    Some("application/octet-stream"),
    Some("application/pdf"),
    Some("multipart/form-data; boundary=x"),
    Some(""),
    Some(";;;"),
    Some("json"),
    Some("application/json; charset=utf-16"),
    Some("APPLICATION/JSON"),
    None,
];

const STATUSES: &[u16] = &[
    200, 201, 202, 204, 206, 299, 301, 304, 400, 401, 404, 409, 422, 429, 500, 503, 999,
];

/// Bytes 0–3 pick the Content-Type, the status, the tool (for its output schema and
/// response fields) and whether the body was cut at the size cap; the rest is the body.
pub fn response_mapping(data: &[u8]) {
    let [kind, status, pick, cut, body @ ..] = data else {
        return;
    };
    let calls = calls();
    let tools = calls.plain.tools();
    let index = usize::from(*pick) % tools.len();
    let tool = &tools[index];
    let validators = validators();
    let compiled = validators.get(index, tool).expect("slot");
    let status = STATUSES[usize::from(*status) % STATUSES.len()];
    let reason = restmcp_reason(status);
    let answer = HttpResponse {
        status,
        reason: &reason,
        content_type: CONTENT_TYPES[usize::from(*kind) % CONTENT_TYPES.len()],
        body,
        omitted: u64::from(*cut % 4) * 1000,
    };
    let shape = Shape {
        output: tool.route.output.as_ref(),
        fields: &tool.route.response_fields,
        // The 2026-07-28 revision, where structured content may be any JSON value.
        bare: *cut & 4 != 0,
        bound: None,
        from_text: false,
    };
    let check = |tape: &Tape<'_>| compiled.check_answer(tape);
    let result = response::to_result("fuzz", &answer, &shape, &check);
    well_formed(&result);
    // For a caller that writes structured content from the text: the same result, its
    // structured content perhaps left in the text.
    let shape = Shape {
        from_text: true,
        ..shape
    };
    let mut left = response::to_result("fuzz", &answer, &shape, &check);
    left.materialize();
    assert_eq!(
        (&left.content, &left.structured, left.is_error),
        (&result.content, &result.structured, result.is_error)
    );
    if !(200..=299).contains(&status) {
        assert!(result.is_error, "status {status} is an error");
    }
    // A result holds the body at most once (base64 for binary), plus a bounded message.
    let size: usize = result
        .content
        .iter()
        .map(|c| match c {
            Content::Text { text } => text.len(),
            Content::Image { data, .. } | Content::Audio { data, .. } => data.len(),
            Content::Resource { blob, .. } => blob.len(),
        })
        .sum();
    assert!(
        size <= body.len() * 4 / 3 * 6 + 8192,
        "{size} bytes of content for {} bytes",
        body.len()
    );
}

fn validators() -> &'static Validators {
    static VALIDATORS: OnceLock<Validators> = OnceLock::new();
    VALIDATORS.get_or_init(|| Validators::new(calls().plain.len()))
}

fn restmcp_reason(status: u16) -> String {
    match status {
        200 => "OK",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "",
    }
    .to_string()
}

// ---------------------------------------------------------------------------------------
// mcp_message

/// The Streamable HTTP endpoint in process, over the shipped specs in mock mode, with one
/// initialized 2025-11-25 session.
pub struct Mcp {
    app: restmcp::http::App,
    session: String,
}

pub fn mcp() -> &'static Mcp {
    static MCP: OnceLock<Mcp> = OnceLock::new();
    MCP.get_or_init(|| {
        restmcp::http_client::install_crypto_provider();
        let catalog = Arc::new(shipped_catalog(true));
        let dispatcher = restmcp::mock::plug(
            Dispatcher::with_settings(catalog, Default::default()).expect("dispatcher"),
        );
        let settings = ServerSettings::default();
        let shared = restmcp::mcp::ServerState::new(restmcp::mcp::Snapshot::new(dispatcher), settings.page_size);
        let control = restmcp::http::Control::new(&settings).expect("control");
        control.readiness.set_loaded();
        let app = restmcp::http::app(shared, &settings, &control);
        // The control's stop token must outlive the app.
        std::mem::forget(control);
        let mut mcp = Mcp { app, session: String::new() };
        let (status, headers, _) = mcp.post(
            &[("MCP-Protocol-Version", "2025-11-25")],
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#.to_vec(),
        );
        assert_eq!(status, 200);
        mcp.session = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("session id")
            .to_string();
        let session = mcp.session.clone();
        let (status, _, _) = mcp.post(
            &[("MCP-Protocol-Version", "2025-11-25"), ("Mcp-Session-Id", &session)],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
        );
        assert_eq!(status, 202);
        mcp
    })
}

impl Mcp {
    /// POSTs `body` to /mcp and reads the whole answer (at most 5 s: a request-bound SSE
    /// stream ends with its response).
    pub fn post(
        &self,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> (u16, axum::http::HeaderMap, Vec<u8>) {
        use tower::ServiceExt as _;
        let mut request = axum::http::Request::post("/mcp")
            .header("Host", "127.0.0.1")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        // A client cannot send a header value with control characters either.
        let Ok(request) = request.body(axum::body::Body::from(body)) else {
            return (0, Default::default(), Vec::new());
        };
        let app = self.app.clone();
        runtime().block_on(async move {
            let response = app.oneshot(request).await.expect("infallible");
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = tokio::time::timeout(
                Duration::from_secs(5),
                axum::body::to_bytes(response.into_body(), 64 << 20),
            )
            .await
            .expect("the answer ends")
            .map(|b| b.to_vec())
            .unwrap_or_default();
            (status, headers, body)
        })
    }

    pub fn delete(&self, session: &str) {
        use tower::ServiceExt as _;
        let Ok(request) = axum::http::Request::delete("/mcp")
            .header("Host", "127.0.0.1")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Mcp-Session-Id", session)
            .body(axum::body::Body::empty())
        else {
            return;
        };
        let app = self.app.clone();
        runtime().block_on(async move {
            let _ = app.oneshot(request).await;
        });
    }
}

/// The first byte picks how the message is sent: with no session (as a first message),
/// in the open session, or as a stateless 2026-07-28 request with the headers a client
/// derives from the message (or with none). The rest is the message. The server must
/// answer every one with a status below 500 (a JSON-RPC error or a result), and a JSON
/// answer must be JSON.
pub fn mcp_message(data: &[u8]) {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let mcp = mcp();
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let method = parsed
        .as_ref()
        .and_then(|v| v.get("method"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let name = parsed
        .as_ref()
        .and_then(|v| v.pointer("/params/name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut headers: Vec<(&str, &str)> = Vec::new();
    match mode % 4 {
        0 => {}
        1 => {
            headers.push(("MCP-Protocol-Version", "2025-11-25"));
            headers.push(("Mcp-Session-Id", &mcp.session));
        }
        2 => {
            headers.push(("MCP-Protocol-Version", "2026-07-28"));
            if let Some(method) = method
                .as_deref()
                .filter(|m| m.is_ascii() && !m.contains(['\r', '\n']))
            {
                headers.push(("Mcp-Method", method));
            }
            if let Some(name) = name
                .as_deref()
                .filter(|n| n.is_ascii() && !n.contains(['\r', '\n']))
            {
                headers.push(("Mcp-Name", name));
            }
        }
        _ => headers.push(("MCP-Protocol-Version", "2026-07-28")),
    }
    let (status, answer_headers, answer) = mcp.post(&headers, body.to_vec());
    if status == 0 {
        return;
    }
    assert!(
        status < 500,
        "status {status}: {}",
        String::from_utf8_lossy(&answer)
    );
    let json = answer_headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json && !answer.is_empty() {
        serde_json::from_slice::<Value>(&answer).expect("a JSON answer is JSON");
    }
    // A session opened by this message is closed again, so sessions do not pile up.
    if let Some(session) = answer_headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        && session != mcp.session
    {
        mcp.delete(session);
    }
}
