//! Content negotiation, compressed responses and scalar results (tests/world's d1, d2
//! and d5), against an in-process upstream that negotiates the way real ones do: XML unless
//! JSON is asked for first, gzip/deflate/br bodies whatever was asked, and a
//! decompression bomb.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Request};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use restmcp::upstream::{CallContext, Content, Dispatcher, ToolResult, UpstreamSettings};
use serde_json::{Map, Value, json};

use crate::dispatch::dispatcher_for;
use crate::support::fixture;

const PET_XML: &str = "<Pet><id>1</id><name>Rex</name></Pet>";

/// The bearer token the redaction test configures.
const SECRET: &str = "n3g0t1at3d-s3cr3t-7c1d";

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Value {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map_or(Value::Null, |v| json!(v))
}

/// JSON when the client's first choice is JSON (as a Spring or Petstore server decides),
/// XML otherwise.
async fn pet(headers: HeaderMap) -> Response {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("*/*");
    if accept.trim_start().starts_with("application/json") {
        axum::Json(json!({"id": 1, "name": "Rex"})).into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/xml")], PET_XML).into_response()
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

/// `mib` MiB of zeros, gzipped: one full-flushed DEFLATE segment of 1 MiB of zeros,
/// repeated (a full flush ends byte-aligned and resets the dictionary).
pub fn gzip_zeros(mib: usize) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    let mut compress = flate2::Compress::new(flate2::Compression::default(), false);
    let mut segment = Vec::with_capacity(8 * 1024);
    loop {
        let consumed = compress.total_in() as usize;
        segment.reserve(8 * 1024);
        compress
            .compress_vec(
                &zeros[consumed..],
                &mut segment,
                flate2::FlushCompress::Full,
            )
            .expect("compress");
        if compress.total_in() as usize == zeros.len() && segment.len() < segment.capacity() {
            break;
        }
    }
    let mut last = Vec::with_capacity(64);
    flate2::Compress::new(flate2::Compression::fast(), false)
        .compress_vec(&[], &mut last, flate2::FlushCompress::Finish)
        .expect("final block");
    let mut crc = flate2::Crc::new();
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    for _ in 0..mib {
        out.extend_from_slice(&segment);
        crc.update(&zeros);
    }
    out.extend_from_slice(&last);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&((mib as u32) << 20).to_le_bytes());
    out
}

/// A gigabyte of zeros, gzipped (about 1 MiB), made once.
fn gigabyte_bomb() -> &'static [u8] {
    static BOMB: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BOMB.get_or_init(|| gzip_zeros(1024))
}

/// A JSON body with `Content-Encoding: encoding`.
fn encoded(encoding: &str, body: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_ENCODING, encoding.to_string()),
        ],
        body,
    )
        .into_response()
}

/// The JSON these bodies decode to.
fn pets_json() -> &'static [u8] {
    br#"{"items":[{"id":1,"name":"Rex"},{"id":2,"name":"Fido"}],"total":2}"#
}

/// 200,000 bytes of JSON array, compressing about 40-fold.
fn big_array() -> String {
    let items: Vec<String> = (0..20_000).map(|i| format!("{:>8}", i % 97)).collect();
    format!("[\"{}\"]", items.join("\",\""))
}

async fn compressed(Path(how): Path<String>, headers: HeaderMap) -> Response {
    match how.as_str() {
        "gzip" => encoded("gzip", gzip(pets_json())),
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            let _ = e.write_all(pets_json());
            encoded("deflate", e.finish().unwrap_or_default())
        }
        "raw-deflate" => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            let _ = e.write_all(pets_json());
            encoded("deflate", e.finish().unwrap_or_default())
        }
        "br" => encoded(
            "br",
            std::fs::read(fixture("compression/pets.json.br")).unwrap_or_default(),
        ),
        "compress" => encoded("compress", b"\x1f\x9d\x90".to_vec()),
        "corrupt" => encoded("gzip", b"\x1f\x8b\x08\x00garbage".to_vec()),
        "big" => encoded("gzip", gzip(big_array().as_bytes())),
        "bomb" => encoded("gzip", gigabyte_bomb().to_vec()),
        "bomb-br" => encoded(
            "br",
            std::fs::read(fixture("compression/zeros-1GiB.br")).unwrap_or_default(),
        ),
        "secret" => {
            let auth = header_text(&headers, header::AUTHORIZATION);
            encoded("gzip", gzip(json!({"seen": auth}).to_string().as_bytes()))
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn scalar_value(kind: &str) -> Value {
    match kind {
        "array" => json!([1, "two", {"three": 3}]),
        "string" => json!("sold"),
        "number" => json!(42.5),
        "boolean" => json!(true),
        _ => json!({"kind": kind}),
    }
}

/// Starts the upstream on loopback.
pub async fn start() -> String {
    let app = Router::new()
        .route("/pets/{id}", get(pet))
        .route(
            "/xml-only",
            get(|| async { ([(header::CONTENT_TYPE, "application/xml")], PET_XML) }),
        )
        .route(
            "/headers",
            get(|headers: HeaderMap| async move {
                axum::Json(json!({
                    "accept": header_text(&headers, header::ACCEPT),
                    "accept_encoding": header_text(&headers, header::ACCEPT_ENCODING),
                }))
            }),
        )
        .route("/compressed/{how}", get(compressed))
        .route(
            "/untyped/compressed",
            get(|| async { encoded("gzip", gzip(big_array().as_bytes())) }),
        )
        .route(
            "/scalar/{kind}",
            get(|Path(kind): Path<String>| async move { axum::Json(scalar_value(&kind)) }),
        )
        .route(
            "/untyped/{kind}",
            get(|Path(kind): Path<String>| async move { axum::Json(scalar_value(&kind)) }),
        )
        .fallback(|request: Request| async move {
            (StatusCode::NOT_FOUND, request.uri().path().to_string())
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

pub async fn dispatcher(url: &str, settings: UpstreamSettings) -> Dispatcher {
    dispatcher_for(fixture("negotiation-api.yaml"), url, settings).await
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

async fn call(dispatcher: &Dispatcher, tool: &str, arguments: Value) -> ToolResult {
    dispatcher
        .call(tool, args(arguments), &CallContext::default())
        .await
        .expect("known tool")
}

/// A dispatcher loaded from a real config (so `apis.neg.*` keys apply), with `extra` in the
/// API's table.
async fn configured(url: &str, extra: &str) -> (Dispatcher, tempfile::TempDir) {
    configured_with(url, extra, None).await
}

/// [`configured`] with `overlay` as the spec's conventional overlay file.
async fn configured_with(
    url: &str,
    extra: &str,
    overlay: Option<&str>,
) -> (Dispatcher, tempfile::TempDir) {
    use restmcp::config::{Config, Overrides};
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(fixture("negotiation-api.yaml"), dir.path().join("neg.yaml")).expect("copy");
    if let Some(overlay) = overlay {
        std::fs::write(dir.path().join("neg.overlay.yaml"), overlay).expect("overlay");
    }
    let config_path = dir.path().join("config.toml");
    std::fs::write(
        &config_path,
        format!("[apis.neg]\nspec = \"neg.yaml\"\nbase_url = \"{url}\"\n{extra}"),
    )
    .expect("config");
    let config = Config::load(&config_path, &Overrides::default()).expect("config loads");
    let loaded = restmcp::load::load(&config).await.expect("loads");
    let catalog = Arc::new(loaded.catalog);
    if !extra.contains(".auth.") {
        let dispatcher = Dispatcher::new(catalog, &config).expect("dispatcher");
        return (dispatcher, dir);
    }
    // Credentials from a stand-in environment (the API's other settings at their defaults).
    let env = |name: &str| (name == "NEG_TOKEN").then(|| SECRET.to_string());
    let auth = restmcp::upstream::Authenticator::new(&catalog, &config, env).expect("credentials");
    let dispatcher = Dispatcher::with_settings(catalog, HashMap::new())
        .expect("dispatcher")
        .with_authenticator(auth);
    (dispatcher, dir)
}

// ---- content negotiation ----

#[tokio::test]
async fn an_api_documenting_xml_first_is_asked_for_json_first_and_answers_json() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let tool = dispatcher.catalog().get("getPet").expect("tool");
    assert_eq!(tool.route.accept, "application/json, application/xml;q=0.5");
    let result = call(&dispatcher, "getPet", json!({"id": 1})).await;
    assert_eq!(result, ToolResult::json(json!({"id": 1, "name": "Rex"})));
    let seen = call(&dispatcher, "headers", json!({})).await;
    assert_eq!(
        seen.structured,
        Some(json!({"accept": "application/json", "accept_encoding": "gzip, deflate, br"}))
    );
}

#[tokio::test]
async fn an_answer_that_is_not_the_documented_json_is_an_error_that_keeps_the_body() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let result = call(&dispatcher, "xmlOnly", json!({})).await;
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    assert_eq!(
        result.content,
        vec![
            Content::Text {
                text: "upstream API \"echo\" answered 200 OK with application/xml, not the JSON \
                       the tool's outputSchema describes; the request itself succeeded and the \
                       response follows."
                    .into()
            },
            Content::Text {
                text: PET_XML.into()
            },
        ]
    );
}

#[tokio::test]
async fn the_configured_accept_and_compression_replace_the_defaults() {
    let url = start().await;
    let (dispatcher, _dir) =
        configured(&url, "accept = \"application/xml\"\ncompression = false\n").await;
    let seen = call(&dispatcher, "headers", json!({})).await;
    assert_eq!(
        seen.structured,
        Some(json!({"accept": "application/xml", "accept_encoding": null}))
    );
    // Asked for XML, the pet comes as XML: an error result carrying it.
    let pet = call(&dispatcher, "getPet", json!({"id": 1})).await;
    assert!(pet.is_error);
    assert!(
        pet.joined_text().ends_with(PET_XML),
        "{}",
        pet.joined_text()
    );
    // Not asked for, a compressed answer is still decoded.
    let gz = call(&dispatcher, "compressed", json!({"how": "gzip"})).await;
    assert!(!gz.is_error, "{}", gz.joined_text());
}

#[tokio::test]
async fn a_forwarded_accept_wins_over_the_computed_one() {
    let url = start().await;
    let (dispatcher, _dir) = configured(&url, "forward_headers = [\"Accept\"]\n").await;
    let context = CallContext {
        headers: vec![("accept".into(), "text/plain".into())],
        ..CallContext::default()
    };
    let seen = dispatcher
        .call("headers", Map::new(), &context)
        .await
        .expect("tool");
    assert_eq!(seen.structured.expect("structured")["accept"], "text/plain");
    // Without the header in the incoming request, the computed one.
    let seen = call(&dispatcher, "headers", json!({})).await;
    assert_eq!(
        seen.structured.expect("structured")["accept"],
        "application/json"
    );
}

#[tokio::test]
async fn an_accept_argument_wins_and_an_overlay_sets_one_per_tool() {
    let url = start().await;
    let overlay = "tools:\n  getPet: {accept: application/xml}\n\
                   add:\n  rawHeaders:\n    description: What the upstream received\n    \
                   method: GET\n    path: /headers\n    arguments:\n      \
                   Accept: {in: header, type: string}\n";
    let (dispatcher, _dir) = configured_with(&url, "", Some(overlay)).await;
    let seen = call(&dispatcher, "rawHeaders", json!({"Accept": "text/csv"})).await;
    assert!(!seen.is_error, "{}", seen.joined_text());
    assert_eq!(seen.structured.expect("structured")["accept"], "text/csv");
    // Left out, the hand-written tool's default (no output_schema): */*.
    let seen = call(&dispatcher, "rawHeaders", json!({})).await;
    assert_eq!(seen.structured.expect("structured")["accept"], "*/*");
    // The overlay's accept for getPet: the upstream answers XML.
    let pet = call(&dispatcher, "getPet", json!({"id": 1})).await;
    assert!(pet.is_error);
    assert!(
        pet.joined_text().ends_with(PET_XML),
        "{}",
        pet.joined_text()
    );
}

// ---- compressed responses ----

#[tokio::test]
async fn gzip_deflate_and_br_bodies_are_decoded() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let expected: Value = serde_json::from_slice(pets_json()).expect("json");
    let brotli = std::fs::read(fixture("compression/pets.json.br")).expect("fixture");
    let wire = [
        ("gzip", Some(gzip(pets_json()).len())),
        ("deflate", None),
        ("raw-deflate", None),
        ("br", Some(brotli.len())),
    ];
    for (how, encoded_len) in wire {
        let called = dispatcher
            .call_with_stats(
                "compressed",
                args(json!({"how": how})),
                &CallContext::default(),
            )
            .await
            .expect("tool");
        let result = called.result;
        assert!(!result.is_error, "{how}: {}", result.joined_text());
        assert_eq!(result.structured.as_ref(), Some(&expected), "{how}");
        // The metric counts wire bytes: the encoded body.
        if let Some(len) = encoded_len {
            assert_eq!(called.stats.bytes_received, len as u64, "{how}");
        }
    }
}

#[tokio::test]
async fn the_size_cap_counts_decoded_bytes() {
    let url = start().await;
    let settings = UpstreamSettings {
        max_response_bytes: 1000,
        ..UpstreamSettings::default()
    };
    let dispatcher = dispatcher(&url, settings).await;
    let total = big_array().len();
    // Without an outputSchema: a success, the first 1000 decoded bytes and the marker.
    let called = dispatcher
        .call_with_stats("compressedUntyped", Map::new(), &CallContext::default())
        .await
        .expect("tool");
    let result = called.result;
    assert!(!result.is_error, "{}", result.joined_text());
    let [Content::Text { text: body }, Content::Text { text: marker }] = result.content.as_slice()
    else {
        panic!("{result:?}")
    };
    assert_eq!(body.as_str(), &big_array()[..1000]);
    // 16 times the cap past it are counted, then counting stops: a lower bound.
    let omitted: usize = marker
        .rsplit("shown; ")
        .next()
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{marker}"));
    assert!(
        marker.starts_with("[response truncated: 1000 B of "),
        "{marker}"
    );
    assert!((16_000..total).contains(&omitted), "{marker} (of {total})");
    assert!(called.stats.bytes_received < total as u64 / 4);
    // With an outputSchema: an error saying it is too large, then the same.
    let result = call(&dispatcher, "compressed", json!({"how": "big"})).await;
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    let text = result.joined_text();
    assert!(
        text.starts_with(
            "upstream API \"echo\" answered 200 OK with application/json, but the body ("
        ),
        "{text}"
    );
    assert!(
        text.contains("is larger than the response size cap (1000 B read), so it cannot be the structured data"),
        "{text}"
    );
    assert!(text.contains("narrow the request"), "{text}");
}

#[tokio::test]
async fn a_gigabyte_bomb_costs_nothing_and_says_so() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let kib = gigabyte_bomb().len() / 1024;
    assert!(
        (900..1200).contains(&kib),
        "about a thousandth of a GiB: {kib} KiB"
    );
    for (how, coding) in [("bomb", "gzip"), ("bomb-br", "br")] {
        let started = Instant::now();
        let result = call(&dispatcher, "compressed", json!({"how": how})).await;
        let elapsed = started.elapsed();
        assert!(result.is_error, "{how}");
        assert_eq!(result.structured, None);
        let text = result.joined_text();
        assert!(
            text.starts_with(&format!(
                "upstream API \"echo\" answered GET /compressed/{{how}} with 200 OK, but its \
                 {coding} body inflates more than 200-fold ("
            )),
            "{text}"
        );
        assert!(text.ends_with("as a likely decompression bomb."), "{text}");
        assert!(elapsed < Duration::from_secs(3), "{how}: {elapsed:?}");
    }
}

#[tokio::test]
async fn unknown_and_corrupt_encodings_are_error_results_naming_them() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let unknown = call(&dispatcher, "compressed", json!({"how": "compress"})).await;
    assert_eq!(
        unknown,
        ToolResult::error(
            "upstream API \"echo\" answered GET /compressed/{how} with 200 OK and \
             Content-Encoding \"compress\", which restmcp cannot decode (it asks for gzip, \
             deflate, br); the body was not read."
        )
    );
    let corrupt = call(&dispatcher, "compressed", json!({"how": "corrupt"})).await;
    assert!(corrupt.is_error);
    assert!(
        corrupt.joined_text().starts_with(
            "upstream API \"echo\" answered GET /compressed/{how} with 200 OK, but its gzip \
             body cannot be decoded ("
        ),
        "{}",
        corrupt.joined_text()
    );
}

#[tokio::test]
async fn secrets_in_a_compressed_body_are_redacted() {
    let url = start().await;
    let (dispatcher, _dir) = configured(
        &url,
        "[apis.neg.auth.token]\ntype = \"bearer\"\ntoken_env = \"NEG_TOKEN\"\n",
    )
    .await;
    let result = call(&dispatcher, "compressed", json!({"how": "secret"})).await;
    assert!(!result.is_error, "{}", result.joined_text());
    let everything = serde_json::to_string(&result).expect("json");
    assert!(!everything.contains(SECRET), "{everything}");
    assert_eq!(
        result.structured,
        Some(json!({"seen": "Bearer [REDACTED]"}))
    );
}

// ---- scalar and array results over MCP ----

/// One `tools/call` over /mcp, answered directly (`progress` false) or by the SDK (a
/// progress token sends it there); `revision` 2025-11-25 in `session`, or 2026-07-28
/// stateless. Returns the JSON-RPC result.
async fn call_over_mcp(
    server: &crate::mcp::Server,
    session: &str,
    revision: &str,
    progress: bool,
    tool: &str,
    arguments: Value,
) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments});
    if progress {
        params["_meta"] = json!({"progressToken": "p"});
    }
    let message = if revision == "2026-07-28" {
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(revision);
        params["_meta"]["io.modelcontextprotocol/clientInfo"] =
            json!({"name": "raw-test", "version": "1"});
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        let body = json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": params});
        let headers = [
            ("MCP-Protocol-Version", revision),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ];
        crate::mcp::post_with(&server.url, &headers, body).await.2
    } else {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
        crate::mcp::post(&server.url, Some(session), Some(revision), body)
            .await
            .2
    };
    let message = message.expect("an answer");
    message
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{tool} {revision}: {message}"))
}

/// The text content must be the serialization of exactly the structured value sent.
fn text_and_structured(result: &Value) -> (Value, Option<Value>) {
    assert_eq!(result["isError"], json!(false), "{result}");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "{result}");
    let text = content[0]["text"].as_str().expect("text");
    let parsed: Value = serde_json::from_str(text).expect("the text is JSON");
    (parsed, result.get("structuredContent").cloned())
}

#[tokio::test]
async fn scalar_and_array_results_per_revision_directly_and_through_the_sdk() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let server =
        crate::mcp::start_with(dispatcher, restmcp::config::ServerSettings::default()).await;
    let (session, _) = crate::mcp::initialize(&server.url, "2025-11-25").await;
    for kind in ["array", "string", "number", "boolean"] {
        let value = scalar_value(kind);
        for progress in [false, true] {
            let how = if progress { "SDK" } else { "direct" };
            // With an outputSchema: wrapped up to 2025-11-25, bare on 2026-07-28; the
            // text is the structured value either way.
            let old = call_over_mcp(
                &server,
                &session,
                "2025-11-25",
                progress,
                "scalar",
                json!({"kind": kind}),
            )
            .await;
            let wrapped = json!({"result": value.clone()});
            assert_eq!(
                text_and_structured(&old),
                (wrapped.clone(), Some(wrapped)),
                "{kind} 2025-11-25 {how}"
            );
            let new = call_over_mcp(
                &server,
                &session,
                "2026-07-28",
                progress,
                "scalar",
                json!({"kind": kind}),
            )
            .await;
            assert_eq!(
                text_and_structured(&new),
                (value.clone(), Some(value.clone())),
                "{kind} 2026-07-28 {how}"
            );
            // Without one: only the text up to 2025-11-25, the value itself on 2026-07-28.
            let old = call_over_mcp(
                &server,
                &session,
                "2025-11-25",
                progress,
                "untyped",
                json!({"kind": kind}),
            )
            .await;
            assert_eq!(
                text_and_structured(&old),
                (value.clone(), None),
                "untyped {kind} 2025-11-25 {how}"
            );
            let new = call_over_mcp(
                &server,
                &session,
                "2026-07-28",
                progress,
                "untyped",
                json!({"kind": kind}),
            )
            .await;
            assert_eq!(
                text_and_structured(&new),
                (value.clone(), Some(value.clone())),
                "untyped {kind} 2026-07-28 {how}"
            );
        }
    }
    // An object is structured content on both.
    for revision in ["2025-11-25", "2026-07-28"] {
        let result = call_over_mcp(
            &server,
            &session,
            revision,
            false,
            "untyped",
            json!({"kind": "object"}),
        )
        .await;
        let object = json!({"kind": "object"});
        assert_eq!(
            text_and_structured(&result),
            (object.clone(), Some(object)),
            "{revision}"
        );
    }
}

#[tokio::test]
async fn a_non_json_answer_is_an_error_result_on_every_revision() {
    let url = start().await;
    let dispatcher = dispatcher(&url, UpstreamSettings::default()).await;
    let server =
        crate::mcp::start_with(dispatcher, restmcp::config::ServerSettings::default()).await;
    let (session, _) = crate::mcp::initialize(&server.url, "2025-11-25").await;
    for revision in ["2025-11-25", "2026-07-28"] {
        for progress in [false, true] {
            let result =
                call_over_mcp(&server, &session, revision, progress, "xmlOnly", json!({})).await;
            assert_eq!(result["isError"], json!(true), "{result}");
            assert!(result.get("structuredContent").is_none(), "{result}");
            assert_eq!(result["content"][1]["text"], json!(PET_XML), "{result}");
        }
    }
}
