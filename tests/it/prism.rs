//! Defects the Prism suite found (tests/world/run-prism.sh: every tool of the shipped and
//! shared descriptions called against Stoplight Prism, which validates each request against
//! the description), each pinned here against restmcp's own echo upstream or catalog, so
//! `cargo test` keeps them fixed without Prism.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use restmcp::catalog::{self, ApiInput};
use restmcp::config::ToolSettings;
use restmcp::spec::{self, SpecSource};
use restmcp::upstream::{CallContext, UpstreamSettings};
use serde_json::{Map, Value, json};

use crate::dispatch::dispatcher_for;
use crate::upstream;

fn spec_file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("api.yaml");
    std::fs::write(&path, text).expect("spec written");
    path
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().expect("object").clone()
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
    let arguments = restmcp::mock::generate::example(&schema).expect("arguments");
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
