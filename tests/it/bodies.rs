//! Request bodies and header parameters as real servers read them (tests/world's d3,
//! d4 and d9), against the in-process echo upstream, which shows the exact request:
//!
//! * multipart file properties go out as file parts with a `filename` and a
//!   `Content-Type`, read back by multer (the parser behind axum's `Multipart`);
//! * Swagger 2.0 header parameters named `Authorization`, `Accept` and `Content-Type` are
//!   arguments, sent as given, except that configured credentials replace an
//!   `Authorization` argument, and the argument's value never reaches the logs;
//! * bodies go out in the media type the operation declares: an XML document raw as XML,
//!   bytes decoded from base64, never JSON under another type.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use restmcp::upstream::{CallContext, Dispatcher, ToolResult, UpstreamSettings};
use serde_json::{Map, Value, json};

use crate::dispatch::dispatcher_for;
use crate::support::fixture;
use crate::upstream::{self, PNG, Part, multipart_parts};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().expect("object").clone()
}

/// The echo upstream's account of the request, from a successful result.
fn received(result: &ToolResult) -> Value {
    assert!(!result.is_error, "{}", result.joined_text());
    match &result.structured {
        Some(structured) => structured.clone(),
        None => serde_json::from_str(&result.joined_text()).expect("echo JSON"),
    }
}

fn body_bytes(seen: &Value) -> Vec<u8> {
    STANDARD
        .decode(seen["body_base64"].as_str().expect("body"))
        .expect("base64")
}

/// The parts of the multipart body the echo upstream received.
async fn parts(seen: &Value) -> Vec<Part> {
    let content_type = seen["headers"]["content-type"]
        .as_str()
        .expect("content type");
    assert!(
        content_type.starts_with("multipart/form-data; boundary="),
        "{content_type}"
    );
    multipart_parts(content_type, &body_bytes(seen)).await
}

fn part(name: &str, filename: Option<&str>, content_type: Option<&str>, data: &[u8]) -> Part {
    (
        name.to_string(),
        filename.map(str::to_string),
        content_type.map(str::to_string),
        data.to_vec(),
    )
}

async fn call(dispatcher: &Dispatcher, tool: &str, arguments: Value) -> ToolResult {
    dispatcher
        .call(tool, args(arguments), &CallContext::default())
        .await
        .expect("known tool")
}

async fn dispatcher(fixture_name: &str, upstream: &upstream::Upstream) -> Dispatcher {
    dispatcher_for(
        fixture(fixture_name),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await
}

#[tokio::test]
async fn multipart_file_parts_carry_a_filename_and_content_type_a_real_parser_reads() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("echo-uploads.yaml", &upstream).await;
    let jpeg = b"\xff\xd8\xff\xe0 not really a JPEG";
    let seen = received(
        &call(
            &dispatcher,
            "uploadAvatar",
            json!({
                "user": "ada",
                "file": format!("data:image/jpeg;base64,{}", STANDARD.encode(jpeg)),
                // A path, quotes and a line break: only the last segment survives, and
                // it cannot end the header or start another.
                "file_filename": "../../etc/me \"best\"\r\nX-Injected: 1.jpg",
                "scans": [STANDARD.encode(PNG), STANDARD.encode(b"\x00\x01")],
                "scans_filename": ["page-1.png"],
                "report": "a,b\n1,2\n",
                "meta": {"a": 1}
            }),
        )
        .await,
    );
    assert_eq!(
        parts(&seen).await,
        vec![
            part("user", None, None, b"ada"),
            part(
                "file",
                Some("me %22best%22X-Injected: 1.jpg"),
                Some("image/jpeg"),
                jpeg
            ),
            part(
                "scans",
                Some("page-1.png"),
                Some("application/octet-stream"),
                PNG
            ),
            part(
                "scans",
                Some("scans.bin"),
                Some("application/octet-stream"),
                b"\x00\x01"
            ),
            part(
                "report",
                Some("report.csv"),
                Some("text/csv"),
                b"a,b\n1,2\n"
            ),
            part("meta", None, Some("application/json"), br#"{"a":1}"#),
        ]
    );

    // Without a name or a data: URI, the file is named after the property and the first
    // media type its encoding allows.
    let seen = received(
        &call(
            &dispatcher,
            "uploadAvatar",
            json!({"file": STANDARD.encode(PNG)}),
        )
        .await,
    );
    assert_eq!(
        parts(&seen).await,
        vec![part("file", Some("file.png"), Some("image/png"), PNG)]
    );

    // What the model reads says how to give the file and how to name it.
    let tool = dispatcher.catalog().get("uploadAvatar").expect("tool");
    let input = tool.input_schema.to_value();
    let file = &input["properties"]["file"];
    assert_eq!(file["contentEncoding"], "base64");
    let description = file["description"].as_str().expect("description");
    assert!(
        description
            .starts_with("File content (image/png, image/jpeg), base64-encoded or as a data: URI")
            && description.contains("\"file_filename\"")
            && description.ends_with("The picture"),
        "{description}"
    );
    assert_eq!(input["properties"]["file_filename"]["type"], "string");
    assert!(
        input["properties"]["report"]
            .get("contentEncoding")
            .is_none()
    );
}

#[tokio::test]
async fn openapi_3_1_files_follow_their_content_media_type() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("echo-uploads-3.1.yaml", &upstream).await;
    let tool = dispatcher.catalog().get("uploadDocuments").expect("tool");
    let input = tool.input_schema.to_value();
    // Bytes (FastAPI's `contentMediaType: application/octet-stream`, and
    // `contentEncoding: base64`) are given as base64 and sent decoded; text as it is.
    assert_eq!(input["properties"]["file"]["contentEncoding"], "base64");
    assert_eq!(
        input["properties"]["thumbnail"]["contentEncoding"],
        "base64"
    );
    assert!(
        input["properties"]["notes"]
            .get("contentEncoding")
            .is_none()
    );
    assert!(
        input["properties"]["title"]
            .get("contentEncoding")
            .is_none()
    );
    assert!(input["properties"].get("title_filename").is_none());

    let seen = received(
        &call(
            &dispatcher,
            "uploadDocuments",
            json!({
                "file": STANDARD.encode(b"%PDF-1.7\r\n"),
                "file_filename": "Quarterly report (final).pdf",
                "thumbnail": format!("data:image/png;base64,{}", STANDARD.encode(PNG)),
                "notes": "Plain text, sent as it is: aGVsbG8=",
                "title": "Q3"
            }),
        )
        .await,
    );
    assert_eq!(
        parts(&seen).await,
        vec![
            part(
                "file",
                Some("Quarterly report (final).pdf"),
                Some("application/octet-stream"),
                b"%PDF-1.7\r\n"
            ),
            part("thumbnail", Some("thumbnail.png"), Some("image/png"), PNG),
            part(
                "notes",
                Some("notes.txt"),
                Some("text/plain"),
                b"Plain text, sent as it is: aGVsbG8="
            ),
            part("title", None, None, b"Q3"),
        ]
    );
}

#[tokio::test]
async fn swagger_2_authorization_accept_and_content_type_header_parameters_are_sent() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("echo-swagger2-headers.yaml", &upstream).await;
    let input = dispatcher
        .catalog()
        .get("putReport")
        .expect("tool")
        .input_schema
        .to_value();
    assert_eq!(input["required"], json!(["id", "Authorization"]));
    assert_eq!(
        input["properties"]["Accept"]["enum"],
        json!(["application/json", "text/csv"])
    );

    let seen = received(
        &call(
            &dispatcher,
            "putReport",
            json!({
                "id": "r1",
                "Authorization": "Bearer model-given",
                "Accept": "text/csv",
                "Content-Type": "application/json; charset=utf-8",
                "title": "Q3"
            }),
        )
        .await,
    );
    assert_eq!(seen["headers"]["authorization"], "Bearer model-given");
    assert_eq!(seen["headers"]["accept"], "text/csv");
    assert_eq!(
        seen["headers"]["content-type"],
        "application/json; charset=utf-8"
    );
    assert_eq!(seen["body"], r#"{"title":"Q3"}"#);

    // Without the argument, restmcp's own Content-Type.
    let seen = received(
        &call(
            &dispatcher,
            "putReport",
            json!({"id": "r1", "Authorization": "Basic eDp5", "title": "Q3"}),
        )
        .await,
    );
    assert_eq!(seen["headers"]["content-type"], "application/json");
    assert_eq!(seen["headers"]["authorization"], "Basic eDp5");
}

/// The operator's credentials are trusted over the model's: a configured scheme that sets
/// `Authorization` replaces the argument.
#[tokio::test]
async fn configured_credentials_replace_an_authorization_argument() {
    use restmcp::config::{Config, Overrides};
    use restmcp::upstream::Authenticator;

    let upstream = upstream::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        fixture("echo-swagger2-headers.yaml"),
        dir.path().join("echo.yaml"),
    )
    .expect("copy");
    let config_path = dir.path().join("config.toml");
    std::fs::write(
        &config_path,
        format!(
            "[apis.echo]\nspec = \"echo.yaml\"\nbase_url = \"{}\"\n\n[apis.echo.auth.gateway]\ntype = \"bearer\"\ntoken_env = \"ECHO_TOKEN\"\n",
            upstream.url()
        ),
    )
    .expect("config");
    let config = Config::load(&config_path, &Overrides::default()).expect("config loads");
    let loaded = restmcp::load::load(&config).await.expect("loads");
    let catalog = Arc::new(loaded.catalog);
    let env = |name: &str| (name == "ECHO_TOKEN").then(|| upstream::SECRET_TOKEN.to_string());
    let auth = Authenticator::new(&catalog, &config, env).expect("credentials");
    let dispatcher = Dispatcher::with_settings(catalog, HashMap::new())
        .expect("dispatcher")
        .with_authenticator(auth);
    let seen = received(
        &call(
            &dispatcher,
            "putReport",
            json!({"id": "r1", "Authorization": "Bearer model-given"}),
        )
        .await,
    );
    // The echo carries the configured token, redacted on the way back.
    assert_eq!(seen["headers"]["authorization"], "Bearer [REDACTED]");
    assert!(!seen.to_string().contains("model-given"), "{seen}");
}

/// `restmcp serve` with every log target at trace level (restmcp's, rmcp's, hyper's and
/// reqwest's): an Authorization argument reaches the upstream and appears nowhere in the
/// logs.
#[tokio::test]
async fn an_authorization_argument_never_reaches_the_logs() {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;

    restmcp::http_client::install_crypto_provider();
    let upstream = upstream::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        fixture("echo-swagger2-headers.yaml"),
        dir.path().join("echo.yaml"),
    )
    .expect("copy");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[server]\nlisten = \"127.0.0.1:0\"\n[apis.echo]\nspec = \"echo.yaml\"\nbase_url = \"{}\"\n",
            upstream.url()
        ),
    )
    .expect("config");
    let binary = crate::reload::Binary::start_with(dir.path(), &[("RUST_LOG", "trace")]).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    const TOKEN: &str = "model-token-5f1c9e";
    let result = crate::support::call(
        &client,
        "putReport",
        json!({"id": "r1", "Authorization": format!("Bearer {TOKEN}")}),
    )
    .await;
    let seen = result.structured_content.expect("the echo");
    assert_eq!(seen["headers"]["authorization"], format!("Bearer {TOKEN}"));
    assert!(
        binary
            .wait_for_log("tool call", std::time::Duration::from_secs(10))
            .await,
        "the call line: {}",
        binary.log()
    );
    let _ = client.cancel().await;
    let log = binary.log();
    assert!(log.contains("TRACE"), "trace logging was on:\n{log}");
    assert!(!log.contains(TOKEN), "the token is in the logs:\n{log}");
}

#[tokio::test]
async fn an_xml_only_operation_gets_the_xml_document_it_declares() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("echo-uploads.yaml", &upstream).await;
    let tool = dispatcher.catalog().get("addPetXml").expect("tool");
    let body = &tool.input_schema.to_value()["properties"]["body"];
    assert_eq!(body["type"], "string");
    assert_eq!(body["contentMediaType"], "application/xml");
    assert!(
        body["description"]
            .as_str()
            .is_some_and(|d| d.contains("complete XML document (root element <pet>)")),
        "{body}"
    );
    let document = r#"<?xml version="1.0"?><pet id="7"><name>Rex &amp; co</name></pet>"#;
    let seen = received(&call(&dispatcher, "addPetXml", json!({"body": document})).await);
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["headers"]["content-type"], "application/xml");
    assert_eq!(seen["body"], document);

    // Offered JSON as well, the operation gets JSON, as before.
    let seen = received(&call(&dispatcher, "updatePet", json!({"id": 7, "name": "Rex"})).await);
    assert_eq!(seen["headers"]["content-type"], "application/json");
    assert_eq!(seen["body"], r#"{"id":7,"name":"Rex"}"#);

    // Swagger 2.0 `consumes: [text/xml]` (a SOAP-style call).
    let dispatcher = dispatcher_for(
        fixture("echo-swagger2-headers.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    let envelope = r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>"#;
    let seen = received(&call(&dispatcher, "soapCall", json!({"body": envelope})).await);
    assert_eq!(seen["headers"]["content-type"], "text/xml");
    assert_eq!(seen["body"], envelope);
}

#[tokio::test]
async fn binary_bodies_are_sent_as_the_decoded_bytes() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("echo-uploads.yaml", &upstream).await;
    let bytes = b"\x00\x01\x02\xff raw";

    let seen = received(
        &call(
            &dispatcher,
            "putBlob",
            json!({"body": STANDARD.encode(bytes)}),
        )
        .await,
    );
    assert_eq!(seen["headers"]["content-type"], "application/octet-stream");
    assert_eq!(body_bytes(&seen), bytes);

    let seen = received(
        &call(
            &dispatcher,
            "putPicture",
            json!({"body": format!("data:image/png;base64,{}", STANDARD.encode(PNG))}),
        )
        .await,
    );
    assert_eq!(seen["headers"]["content-type"], "image/png");
    assert_eq!(body_bytes(&seen), PNG);

    // `image/*`: the data: URI names the type; without one, nothing is sent.
    let seen = received(
        &call(
            &dispatcher,
            "putAnyImage",
            json!({"body": format!("data:image/gif;base64,{}", STANDARD.encode(b"GIF89a"))}),
        )
        .await,
    );
    assert_eq!(seen["headers"]["content-type"], "image/gif");
    assert_eq!(body_bytes(&seen), b"GIF89a");
    let before = upstream.counters.all.load(Ordering::SeqCst);
    let refused = call(
        &dispatcher,
        "putAnyImage",
        json!({"body": STANDARD.encode(b"GIF89a")}),
    )
    .await;
    assert!(refused.is_error);
    assert!(
        refused.joined_text().contains("data: URI naming its type"),
        "{}",
        refused.joined_text()
    );
    assert_eq!(upstream.counters.all.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn a_swagger_2_file_parameter_is_a_named_file_part() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("echo-swagger2-headers.yaml", &upstream).await;
    let seen = received(
        &call(
            &dispatcher,
            "uploadPhoto",
            json!({
                "photo": format!("data:image/png;base64,{}", STANDARD.encode(PNG)),
                "caption": "a dot"
            }),
        )
        .await,
    );
    assert_eq!(
        parts(&seen).await,
        vec![
            part("photo", Some("photo.png"), Some("image/png"), PNG),
            part("caption", None, None, b"a dot"),
        ]
    );
}

/// A body, multipart part or form field declared `type: string,
/// format: byte` (or 3.0's `format: base64`) holds base64 text in the payload, which the
/// upstream expects as it is. restmcp used to decode it and send the raw bytes. Now exactly
/// the text the client gave reaches the upstream, and only `format: binary` is decoded.
#[tokio::test]
async fn byte_bodies_parts_and_fields_reach_the_upstream_as_the_base64_text_given() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher("byte-bodies.yaml", &upstream).await;
    let text = STANDARD.encode(PNG);

    let schema = |tool: &str| {
        dispatcher
            .catalog()
            .get(tool)
            .expect("tool")
            .input_schema
            .to_value()["properties"]["body"]
            .clone()
    };
    let encoded = schema("putEncodedBlob");
    assert_eq!(encoded["contentEncoding"], "base64");
    let description = encoded["description"].as_str().expect("description");
    assert!(
        description.contains("the base64 text itself") && description.contains("sent as it is"),
        "{description}"
    );

    for (tool, content_type) in [
        ("putEncodedBlob", "application/octet-stream"),
        ("putEncodedImage", "image/png"),
    ] {
        let seen = received(&call(&dispatcher, tool, json!({"body": text})).await);
        assert_eq!(seen["headers"]["content-type"], content_type, "{tool}");
        assert_eq!(body_bytes(&seen), text.as_bytes(), "{tool}");
    }
    // The control: octets are given as base64 and sent decoded.
    let seen = received(&call(&dispatcher, "putRawBlob", json!({"body": text})).await);
    assert_eq!(body_bytes(&seen), PNG);

    let seen = received(
        &call(
            &dispatcher,
            "upload",
            json!({"file": text, "signature": "c2lnbmVkIGJ5IG1l"}),
        )
        .await,
    );
    let sent = parts(&seen).await;
    assert_eq!(
        sent[0],
        part(
            "file",
            Some("file.bin"),
            Some("application/octet-stream"),
            PNG
        )
    );
    assert_eq!(
        (sent[1].0.as_str(), sent[1].3.as_slice()),
        ("signature", b"c2lnbmVkIGJ5IG1l".as_slice())
    );

    let seen = received(&call(&dispatcher, "submitForm", json!({"data": "aGk+Pz8="})).await);
    assert_eq!(seen["body"], "data=aGk%2BPz8%3D");
}
