//! Defects the Prism suite found (tests/world/run-prism.sh: every tool of the shipped and
//! shared descriptions called against Stoplight Prism, which validates each request against
//! the description), each pinned here against restmcp's own echo upstream or catalog, so
//! `cargo test` keeps them fixed without Prism.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use restmcp::catalog::{self, ApiInput};
use restmcp::config::ToolSettings;
use restmcp::spec::{self, SpecSource};
use restmcp::upstream::Dispatcher;
use restmcp::upstream::{CallContext, UpstreamSettings};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::dispatch::{args, dispatcher_for};
use crate::support::fixture;
use crate::upstream;

fn spec_file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("api.yaml");
    std::fs::write(&path, text).expect("spec written");
    path
}

/// Twilio's `CreateCall` (and 32 more Twilio and 57 Box operations): the request body is
/// optional (`requestBody.required` left out) but its schema requires `To` and `From`. The
/// body is flattened into arguments, which used to make `To` and `From` optional too, so a
/// call could send a body without them: Prism answered 422 "Request body must have
/// required property 'To'", as Twilio itself would. The body's own `required` now holds.
#[tokio::test]
async fn an_optional_body_still_requires_what_its_schema_requires() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = spec_file(
        &dir,
        r#"
openapi: 3.0.1
info: {title: Calls, version: "1"}
paths:
  /Calls.json:
    post:
      operationId: CreateCall
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: [To, From]
              properties:
                To: {type: string}
                From: {type: string}
                Timeout: {type: integer}
      responses:
        "201": {description: Created}
"#,
    );
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(spec, &upstream.url(), UpstreamSettings::default()).await;
    let tool = dispatcher.catalog().get("CreateCall").expect("tool");
    assert_eq!(
        tool.input_schema.to_value()["required"],
        json!(["To", "From"])
    );

    let refused = dispatcher
        .call(
            "CreateCall",
            args(json!({"From": "+15550001", "Timeout": 5})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(refused.is_error);
    let text = refused.joined_text();
    assert!(
        text.starts_with("Invalid arguments for tool \"CreateCall\"; no request was sent")
            && text.contains("\"To\""),
        "{text}"
    );
    assert_eq!(upstream.counters.all.load(Ordering::SeqCst), 0);

    let sent = dispatcher
        .call(
            "CreateCall",
            args(json!({"To": "+15550002", "From": "+15550001"})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(!sent.is_error, "{}", sent.joined_text());
    let seen: Value = serde_json::from_str(&sent.joined_text()).expect("echo");
    assert_eq!(seen["body"], "To=%2B15550002&From=%2B15550001");
}

/// GitHub's `orgs/create-artifact-storage-record`: the property `path` has `format: uri`
/// and the example `com/github/bar/libfoo-1.2.3`, which is no URI. The argument generator
/// of `restmcp selftest` took the example as it was, and Prism answered 422 "Request body
/// property path must match format \"uri\"". Examples, defaults and enum values are now
/// used only when they are in the schema's format; every generated argument of the tool
/// validates with format assertion on.
#[tokio::test]
async fn generated_arguments_keep_the_schemas_formats_even_where_its_examples_do_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = spec_file(
        &dir,
        r#"
openapi: 3.0.3
info: {title: Artifacts, version: "1"}
paths:
  /orgs/{org}/artifacts/metadata/storage-record:
    post:
      operationId: orgs/create-artifact-storage-record
      parameters:
        - {name: org, in: path, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, path, created]
              properties:
                name: {type: string, example: libfoo}
                path: {type: string, format: uri, example: com/github/bar/libfoo-1.2.3}
                registry_url: {type: string, format: uri, example: "https://reg.example.com/artifactory/"}
                created: {type: string, format: date-time, default: yesterday}
                contact: {type: string, format: email, enum: [nobody, ops@example.com]}
      responses:
        "200": {description: OK}
"#,
    );
    let docs = spec::load(&SpecSource::File(spec))
        .await
        .expect("spec loads");
    let (catalog, _) = catalog::build(
        &[ApiInput::new("github", Some(&docs))],
        &ToolSettings::default(),
    )
    .expect("builds");
    let tool = catalog
        .get("orgs_create-artifact-storage-record")
        .expect("tool");
    let schema = tool.input_schema.to_value();
    let arguments = restmcp::schema::example::example(&schema).expect("arguments");
    let strict = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("compiles");
    let problems: Vec<String> = strict
        .iter_errors(&arguments)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{arguments}: {problems:?}");
    assert_eq!(arguments["path"], "https://example.com");
    // Examples in the right format are still the first choice.
    assert_eq!(
        arguments["registry_url"],
        "https://reg.example.com/artifactory/"
    );
    assert_eq!(arguments["name"], "libfoo");
    assert_eq!(arguments["contact"], "ops@example.com");
}

/// An upstream on raw TCP whose first connection answers one request with keep-alive and
/// then closes on the next request without answering: the race a pooled connection meets
/// when the server's keep-alive timeout (Node.js: 5 s) ends just as the client reuses it.
/// Every later connection answers normally. Returns the address and the number of requests
/// that arrived (the dropped one included).
async fn closes_its_first_kept_alive_connection() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut stream, _)) = listener.accept().await {
            let counter = counter.clone();
            let close_second = std::mem::take(&mut first);
            tokio::spawn(async move {
                let mut served = 0;
                while read_request(&mut stream).await {
                    counter.fetch_add(1, Ordering::SeqCst);
                    served += 1;
                    if close_second && served == 2 {
                        return; // dropped: closed without a word
                    }
                    let body = format!("{{\"served\":{served}}}");
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

/// The echo fixture's tools against [`closes_its_first_kept_alive_connection`].
async fn echo_tools_on_a_closing_upstream() -> (Dispatcher, Arc<AtomicUsize>) {
    let (addr, seen) = closes_its_first_kept_alive_connection().await;
    let dispatcher = dispatcher_for(
        fixture("echo-api.yaml"),
        &format!("http://{addr}"),
        UpstreamSettings::default(),
    )
    .await;
    (dispatcher, seen)
}

/// Reads one request (head and a Content-Length body); false at the end of the stream.
async fn read_request(stream: &mut TcpStream) -> bool {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return false,
        }
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.is_ok()
}

/// Found against Prism (a Node.js server, 5 s keep-alive): a PUT once failed with
/// "Connection reset by peer" because the pooled connection it was sent on had just been
/// closed by the server. An idempotent call is now sent again at once on a new connection
/// when its connection closes before any answer; a POST is not (it may have been acted on).
#[tokio::test]
async fn a_kept_alive_connection_closed_under_an_idempotent_call_is_retried() {
    let (dispatcher, seen) = echo_tools_on_a_closing_upstream().await;
    let context = CallContext::default();
    let get = |id: u32| dispatcher.call("getItem", args(json!({"id": id.to_string()})), &context);
    let first = get(1).await.expect("known tool");
    assert_eq!(first.structured, Some(json!({"served": 1})));
    // Sent on the kept-alive connection, which closes: sent again on a new one.
    let second = get(2).await.expect("known tool");
    assert!(!second.is_error, "{}", second.joined_text());
    assert_eq!(second.structured, Some(json!({"served": 1})));
    assert_eq!(seen.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_kept_alive_connection_closed_under_a_post_is_an_error_not_a_second_post() {
    let (dispatcher, seen) = echo_tools_on_a_closing_upstream().await;
    let context = CallContext::default();
    let post = || {
        dispatcher.call(
            "updateItem",
            args(json!({"id__path": 7, "id": "body-id", "name": "n"})),
            &context,
        )
    };
    let first = post().await.expect("known tool");
    assert!(!first.is_error, "{}", first.joined_text());
    let second = post().await.expect("known tool");
    assert!(second.is_error);
    let text = second.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" could not be reached for POST /echo/items/{id}:"),
        "{text}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

/// Patterns written for ECMA-262 that restmcp's validator could not
/// compile as written (`[\w-.+]`, a surrogate pair as two `\u` escapes, lone surrogates)
/// were published, and every call of the tool was refused with "the tool's inputSchema
/// cannot be used". The first two are now published rewritten into patterns that mean the
/// same and compile, and are enforced; lone surrogates cannot be (they match one way by code
/// point and another by UTF-16 unit), so that pattern is left out of the schema and of
/// validation with a `check` note, while the rest of that argument's schema still holds.
#[tokio::test]
async fn ecma_patterns_are_translated_or_left_out_and_the_tool_stays_callable() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(
        fixture("ecma-patterns.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    let properties = &dispatcher
        .catalog()
        .get("getAccount")
        .expect("tool")
        .input_schema
        .to_value()["properties"];
    assert_eq!(properties["handle"]["pattern"], r"^[\w\-.+]+$");
    assert_eq!(properties["mood"]["pattern"], "^(?:😀)+$");
    let sent = call(
        &dispatcher,
        "getAccount",
        json!({"handle": "jane.doe-1+x", "mood": "😀😀"}),
    )
    .await;
    assert!(!sent.is_error, "{}", sent.joined_text());
    let seen: Value = serde_json::from_str(&sent.joined_text()).expect("echo");
    assert_eq!(seen["path"], "/accounts/jane%2Edoe-1%2Bx");
    for (arguments, refused) in [
        (
            json!({"handle": "jane doe"}),
            r#"/handle: "jane doe" does not match"#,
        ),
        (
            json!({"handle": "a", "mood": "🙂"}),
            r#"/mood: "🙂" does not match"#,
        ),
    ] {
        let answer = call(&dispatcher, "getAccount", arguments.clone()).await;
        let text = answer.joined_text();
        assert!(
            answer.is_error && text.contains(refused),
            "{arguments}: {text}"
        );
        assert!(!text.contains("cannot be used"), "{text}");
    }

    let lone = fixture("ecma-lone-surrogates.yaml");
    let docs = spec::load(&SpecSource::File(lone.clone()))
        .await
        .expect("loads");
    let (_, report) = catalog::build(
        &[ApiInput::new("api", Some(&docs))],
        &ToolSettings::default(),
    )
    .expect("builds");
    let notes = &report.apis[0].operations[0].notes;
    assert!(
        notes.iter().any(|note| note.starts_with(
            r#"argument "label": pattern "^[\\uD800\\uDBFF-\\uDC00\\uDFFF]*$" left out of the schema and of validation: \uD800 is half of a UTF-16 surrogate pair"#
        )),
        "{notes:#?}"
    );
    let dispatcher = dispatcher_for(lone, &upstream.url(), UpstreamSettings::default()).await;
    let label = dispatcher
        .catalog()
        .get("searchNotes")
        .expect("tool")
        .input_schema
        .to_value()["properties"]["label"]
        .clone();
    assert_eq!(
        (label.get("pattern"), &label["maxLength"]),
        (None, &json!(12))
    );
    let sent = call(&dispatcher, "searchNotes", json!({"label": "anything"})).await;
    assert!(!sent.is_error, "{}", sent.joined_text());
    let refused = call(
        &dispatcher,
        "searchNotes",
        json!({"label": "thirteen char"}),
    )
    .await;
    let text = refused.joined_text();
    assert!(
        refused.is_error
            && text.contains(r#"/label: "thirteen char" is longer than 12 characters"#),
        "{text}"
    );
    assert_eq!(upstream.counters.all.load(Ordering::SeqCst), 2);
}

async fn call(
    dispatcher: &Dispatcher,
    tool: &str,
    arguments: Value,
) -> restmcp::upstream::ToolResult {
    dispatcher
        .call(tool, args(arguments), &CallContext::default())
        .await
        .expect("known tool")
}
