//! The dispatcher against a real HTTP upstream on loopback: the upstream receives exactly
//! the request the description defines, and every outcome is a faithful tool result.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use base64::Engine as _;
use restmcp::catalog::{self, ApiInput};
use restmcp::config::ToolSettings;
use restmcp::spec::{self, SpecSource};
use restmcp::upstream::{
    CallContext, Content, Dispatcher, ToolResult, UnknownTool, UpstreamSettings,
};
use serde_json::{Map, Value, json};

use crate::support::{fixture, shared_spec};
use crate::upstream::{self, PNG, multipart_parts};

pub async fn dispatcher_for(
    spec: PathBuf,
    base_url: &str,
    settings: UpstreamSettings,
) -> Dispatcher {
    let docs = spec::load(&SpecSource::File(spec))
        .await
        .expect("spec loads");
    let input = ApiInput {
        base_url: Some(base_url),
        ..ApiInput::new("echo", Some(&docs))
    };
    let (catalog, report) = catalog::build(&[input], &ToolSettings::default()).expect("builds");
    assert_eq!(report.skipped(), 0, "{}", report.render());
    Dispatcher::with_settings(
        Arc::new(catalog),
        HashMap::from([("echo".to_string(), settings)]),
    )
    .expect("dispatcher")
}

async fn echo_dispatcher(upstream: &upstream::Upstream) -> Dispatcher {
    dispatcher_for(
        fixture("echo-api.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await
}

pub fn args(value: Value) -> Map<String, Value> {
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

#[tokio::test]
async fn path_query_header_and_cookie_parameters_arrive_as_the_description_says() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call(
            "getItem",
            args(json!({
                "id": "a b/c",
                "tags": ["x", "y z"],
                "colors": ["red", "blue"],
                "filter": {"owner": "me", "year": 2024},
                "limit": 5,
                "X-Trace": "t-1",
                "session": "s1"
            })),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    let seen = received(&result);
    assert_eq!(seen["method"], "GET");
    assert_eq!(seen["path"], "/echo/items/a%20b%2Fc");
    assert_eq!(
        seen["query"],
        "tags=x&tags=y%20z&colors=red,blue&filter[owner]=me&filter[year]=2024&limit=5"
    );
    assert_eq!(seen["headers"]["x-trace"], "t-1");
    assert_eq!(seen["headers"]["cookie"], "session=s1");
    assert!(
        seen["headers"]["user-agent"]
            .as_str()
            .is_some_and(|ua| ua.starts_with("restmcp/")),
        "{seen}"
    );
}

#[tokio::test]
async fn a_body_property_and_a_parameter_with_one_name_both_reach_the_upstream() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call(
            "updateItem",
            args(json!({"id__path": 7, "id": "body-id", "name": "n", "labels": ["a"]})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    let seen = received(&result);
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["path"], "/echo/items/7");
    assert_eq!(seen["headers"]["content-type"], "application/json");
    let body: Value =
        serde_json::from_str(seen["body"].as_str().expect("body")).expect("JSON body");
    assert_eq!(body, json!({"id": "body-id", "name": "n", "labels": ["a"]}));
}

#[tokio::test]
async fn a_stripe_style_form_body_uses_bracket_notation() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call(
            "createCharge",
            args(json!({
                "amount": 2000,
                "metadata": {"order": "42"},
                "line_items": [{"price": "price_1", "quantity": 2}],
                "expand": ["customer", "invoice"]
            })),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    let seen = received(&result);
    assert_eq!(
        seen["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        seen["body"],
        "amount=2000&metadata[order]=42&line_items[0][price]=price_1&line_items[0][quantity]=2&expand[0]=customer&expand[1]=invoice"
    );
}

#[tokio::test]
async fn multipart_bodies_carry_files_as_raw_bytes() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let png = base64::engine::general_purpose::STANDARD.encode(PNG);
    let result = dispatcher
        .call(
            "upload",
            args(json!({"note": "hello", "file": format!("data:image/png;base64,{png}")})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    let seen = received(&result);
    let content_type = seen["headers"]["content-type"]
        .as_str()
        .expect("content type");
    assert!(
        content_type.starts_with("multipart/form-data; boundary="),
        "{content_type}"
    );
    let body = base64::engine::general_purpose::STANDARD
        .decode(seen["body_base64"].as_str().expect("body"))
        .expect("base64");
    let parts = multipart_parts(content_type, &body).await;
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(parts[0].0, "note");
    assert_eq!(parts[0].3, b"hello");
    assert_eq!(parts[1].0, "file");
    assert_eq!(parts[1].1.as_deref(), Some("file.png"));
    assert_eq!(parts[1].2.as_deref(), Some("image/png"));
    assert_eq!(parts[1].3, PNG);
}

#[tokio::test]
async fn swagger_2_form_data_and_collection_formats_arrive_faithfully() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(
        fixture("echo-swagger2.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    let photo = base64::engine::general_purpose::STANDARD.encode(b"\x00\x01binary");
    let seen = received(
        &dispatcher
            .call(
                "updatePetWithForm",
                args(json!({"petId": 3, "name": "Rex", "tags": ["a", "b"], "photo": photo})),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(seen["path"], "/echo/pets/3");
    let content_type = seen["headers"]["content-type"]
        .as_str()
        .expect("content type");
    let body = base64::engine::general_purpose::STANDARD
        .decode(seen["body_base64"].as_str().expect("body"))
        .expect("base64");
    let parts: Vec<(String, Vec<u8>)> = multipart_parts(content_type, &body)
        .await
        .into_iter()
        .map(|(name, _, _, bytes)| (name, bytes))
        .collect();
    assert_eq!(
        parts,
        [
            ("name".to_string(), b"Rex".to_vec()),
            ("tags".to_string(), b"a".to_vec()),
            ("tags".to_string(), b"b".to_vec()),
            ("photo".to_string(), b"\x00\x01binary".to_vec()),
        ]
    );

    let seen = received(
        &dispatcher
            .call(
                "findPets",
                args(json!({"status": ["available", "sold"], "ids": [1, 2]})),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(seen["query"], "status=available|sold&ids=1&ids=2");

    let seen = received(
        &dispatcher
            .call(
                "renamePet",
                args(json!({"name": "Max Power"})),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(
        seen["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(seen["body"], "name=Max%20Power");
}

#[tokio::test]
async fn path_arguments_cannot_add_segments_queries_or_change_the_host() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let seen = received(
        &dispatcher
            .call(
                "getFile",
                args(json!({"path": "a/b?x=1#frag"})),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(seen["path"], "/echo/files/a%2Fb%3Fx%3D1%23frag");
    assert_eq!(seen["query"], Value::Null);

    let seen = received(
        &dispatcher
            .call(
                "getFile",
                args(json!({"path": "@evil.example:80"})),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(seen["path"], "/echo/files/%40evil%2Eexample%3A80");

    let before = upstream.counters.all.load(Ordering::SeqCst);
    let result = dispatcher
        .call(
            "getFile",
            args(json!({"path": ".."})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(result.is_error, "{}", result.joined_text());
    assert_eq!(
        upstream.counters.all.load(Ordering::SeqCst),
        before,
        "nothing sent"
    );
}

#[tokio::test]
async fn header_values_with_line_breaks_are_refused_before_sending() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call(
            "getItem",
            args(json!({"id": "1", "X-Trace": "a\r\nX-Injected: 1"})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(result.is_error);
    assert!(
        result.joined_text().contains("X-Trace"),
        "{}",
        result.joined_text()
    );
    assert_eq!(
        upstream.counters.all.load(Ordering::SeqCst),
        0,
        "nothing sent"
    );
}

#[tokio::test]
async fn invalid_arguments_list_every_violation_and_send_nothing() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call(
            "getItem",
            args(json!({"limt": 5, "tags": "not-an-array", "limit": "five"})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    let text = result.joined_text();
    assert!(
        text.starts_with("Invalid arguments for tool \"getItem\"; no request was sent:"),
        "{text}"
    );
    assert!(text.contains("missing required argument \"id\""), "{text}");
    assert!(
        text.contains("unknown argument \"limt\" (did you mean \"limit\"?)"),
        "{text}"
    );
    assert!(text.contains("/tags: "), "{text}");
    assert!(text.contains("/limit: "), "{text}");
    assert_eq!(
        upstream.counters.all.load(Ordering::SeqCst),
        0,
        "nothing sent"
    );
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_not_a_result() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let outcome = dispatcher
        .call("noSuchTool", Map::new(), &CallContext::default())
        .await;
    assert_eq!(outcome, Err(UnknownTool("noSuchTool".into())));
}

#[tokio::test]
async fn a_slow_upstream_hits_the_tool_timeout() {
    let upstream = upstream::start().await;
    let settings = UpstreamSettings {
        tool_timeouts: HashMap::from([("slow".to_string(), Duration::from_millis(300))]),
        ..UpstreamSettings::default()
    };
    let dispatcher = dispatcher_for(fixture("echo-api.yaml"), &upstream.url(), settings).await;
    let started = Instant::now();
    let result = dispatcher
        .call("slow", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert!(result.is_error);
    assert_eq!(
        result.joined_text(),
        "upstream API \"echo\" did not answer GET /_/slow within 0.3 s; the call was abandoned"
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_one_line_error_naming_the_api() {
    let dispatcher = dispatcher_for(
        fixture("echo-api.yaml"),
        "http://127.0.0.1:1",
        UpstreamSettings::default(),
    )
    .await;
    let result = dispatcher
        .call("slow", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" could not be reached for GET /_/slow:"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[tokio::test]
async fn upstream_errors_are_tool_errors_with_status_and_body() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call(
            "status",
            args(json!({"code": 404})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" answered 404 Not Found:"),
        "{text}"
    );
    assert!(text.contains("requested status"), "{text}");
}

#[tokio::test]
async fn bodies_over_the_cap_are_cut_with_a_clear_marker() {
    let upstream = upstream::start().await;
    let settings = UpstreamSettings {
        max_response_bytes: 1000,
        ..UpstreamSettings::default()
    };
    let dispatcher = dispatcher_for(fixture("echo-api.yaml"), &upstream.url(), settings).await;
    let result = dispatcher
        .call("big", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(!result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with(&"x".repeat(1000)),
        "kept the first 1000 bytes"
    );
    assert!(!text.contains(&"x".repeat(1001)), "kept no more");
    assert!(text.contains("99000 bytes omitted"), "{}", &text[1000..]);
}

#[tokio::test]
async fn images_come_back_as_image_content() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call("image", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        [Content::Image {
            data: base64::engine::general_purpose::STANDARD.encode(PNG),
            mime_type: "image/png".into()
        }]
    );
}

#[tokio::test]
async fn idempotent_calls_are_retried_after_503_and_others_are_not() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call("flakyGet", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(!result.is_error, "{}", result.joined_text());
    assert_eq!(upstream.counters.flaky.load(Ordering::SeqCst), 2);

    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call("flakyPost", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    assert!(
        result.joined_text().contains("503"),
        "{}",
        result.joined_text()
    );
    assert_eq!(
        upstream.counters.flaky.load(Ordering::SeqCst),
        1,
        "POST is not retried"
    );
}

#[tokio::test]
async fn results_that_contradict_the_output_schema_are_errors_without_structured_content() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call("wrongShape", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    assert!(
        result.joined_text().contains("outputSchema"),
        "{}",
        result.joined_text()
    );
    assert!(
        result.joined_text().contains("42"),
        "the data is still shown"
    );
}

#[tokio::test]
async fn non_object_json_is_wrapped_as_the_output_schema_says() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call("list", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(!result.is_error, "{}", result.joined_text());
    assert_eq!(result.structured, Some(json!({"result": [1, 2, 3]})));
}

#[tokio::test]
async fn redirects_to_another_origin_are_not_followed() {
    let upstream = upstream::start().await;
    let dispatcher = echo_dispatcher(&upstream).await;
    let result = dispatcher
        .call("redirectAway", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    assert!(
        result.joined_text().contains("302"),
        "{}",
        result.joined_text()
    );
}

/// Dropping the call future (what a transport does when the client cancels) closes the
/// upstream connection: the upstream sees end-of-stream.
#[tokio::test]
async fn a_dropped_call_closes_its_upstream_connection() {
    let (addr, closed_rx) = upstream::start_silent().await;
    let dispatcher = dispatcher_for(
        fixture("echo-api.yaml"),
        &format!("http://{addr}"),
        UpstreamSettings::default(),
    )
    .await;
    let context = CallContext::default();
    let call = dispatcher.call("slow", Map::new(), &context);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err(),
        "still waiting"
    );
    tokio::time::timeout(Duration::from_secs(2), closed_rx)
        .await
        .expect("the upstream saw the connection close")
        .expect("signal");
}

#[tokio::test]
async fn a_stripe_form_body_round_trips_through_the_shared_spec() {
    let Some(path) = shared_spec("real/stripe.json") else {
        return;
    };
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(path, &upstream.url(), UpstreamSettings::default()).await;
    let seen = received(
        &dispatcher
            .call(
                "PostCustomers",
                args(json!({
                    "email": "a@b.test",
                    "metadata": {"plan": "pro"},
                    "expand": ["default_source"]
                })),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["path"], "/v1/customers");
    assert_eq!(
        seen["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );
    let body = seen["body"].as_str().expect("body");
    let mut pairs: Vec<&str> = body.split('&').collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            "email=a%40b.test",
            "expand[0]=default_source",
            "metadata[plan]=pro"
        ]
    );
}

#[tokio::test]
async fn a_github_json_body_round_trips_through_the_shared_spec() {
    let Some(path) = shared_spec("real/github.json") else {
        return;
    };
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(path, &upstream.url(), UpstreamSettings::default()).await;
    let result = dispatcher
        .call(
            "issues_create",
            args(json!({
                "owner": "octo",
                "repo": "hello world",
                "title": "Found a bug",
                "labels": ["bug"]
            })),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    let seen = received(&result);
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["path"], "/repos/octo/hello%20world/issues");
    let body: Value = serde_json::from_str(seen["body"].as_str().expect("body")).expect("JSON");
    assert_eq!(body, json!({"title": "Found a bug", "labels": ["bug"]}));
}

#[tokio::test]
async fn a_tls_failure_is_a_one_line_error_naming_the_api() {
    let upstream = upstream::start().await;
    // The echo upstream speaks plain HTTP: the TLS handshake fails.
    let base_url = format!("https://{}", upstream.addr);
    let dispatcher = dispatcher_for(
        fixture("echo-api.yaml"),
        &base_url,
        UpstreamSettings::default(),
    )
    .await;
    let result = dispatcher
        .call("list", Map::new(), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.starts_with("upstream API \"echo\" could not be reached for GET /_/list:"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
}

/// Credentials come from environment variables named in the config, reach the upstream,
/// and never appear in a result, an error or the tool list, even when the upstream echoes
/// them back.
#[tokio::test]
async fn secrets_reach_the_upstream_and_never_appear_in_any_output() {
    use restmcp::config::{Config, Overrides};
    use restmcp::upstream::Authenticator;

    let upstream = upstream::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(fixture("echo-api.yaml"), dir.path().join("echo.yaml")).expect("copy");
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
    let dispatcher = Dispatcher::with_settings(catalog.clone(), HashMap::new())
        .expect("dispatcher")
        .with_authenticator(auth);
    let context = CallContext::default();

    let checked = dispatcher
        .call("authCheck", Map::new(), &context)
        .await
        .expect("tool");
    assert!(
        !checked.is_error,
        "the upstream got the token: {}",
        checked.joined_text()
    );

    let outputs = [
        dispatcher
            .call("getItem", args(json!({"id": "1"})), &context)
            .await
            .expect("tool"),
        dispatcher
            .call("echoError", Map::new(), &context)
            .await
            .expect("tool"),
    ];
    assert!(!outputs[0].is_error && outputs[1].is_error);
    for result in &outputs {
        let everything = serde_json::to_string(result).expect("json");
        assert!(
            !everything.contains(upstream::SECRET_TOKEN),
            "secret leaked: {everything}"
        );
        assert!(
            everything.contains("[REDACTED]"),
            "the echo was redacted, not dropped: {everything}"
        );
    }
    assert!(!catalog.list_json().contains(upstream::SECRET_TOKEN));
}

/// The part of a path key from `#` on names the operation and is never
/// requested; its `name=value` pairs go out as query parameters, as the declared parameters
/// they match (filled in when the model leaves them out) or as fixed ones.
#[tokio::test]
async fn path_suffixes_are_not_requested_and_their_query_pairs_are_sent() {
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(
        fixture("aws-path-suffixes.yaml"),
        &upstream.url(),
        UpstreamSettings::default(),
    )
    .await;
    let call = |tool: &'static str, arguments: Value| {
        let dispatcher = &dispatcher;
        async move {
            let result = dispatcher
                .call(tool, args(arguments), &CallContext::default())
                .await
                .expect("known tool");
            let seen = received(&result);
            (
                seen["method"].as_str().unwrap_or_default().to_string(),
                seen["path"].as_str().unwrap_or_default().to_string(),
                seen["query"].as_str().map(str::to_string),
            )
        }
    };
    // A bare name: only the path before it is requested.
    assert_eq!(
        call(
            "UntagResource",
            json!({"resourceArn": "arn:aws:s3:::bucket", "tagKeys": ["team", "cost center"]})
        )
        .await,
        (
            "DELETE".to_string(),
            "/tags/arn%3Aaws%3As3%3A%3A%3Abucket".to_string(),
            Some("tagKeys=team&tagKeys=cost%20center".to_string())
        )
    );
    // Declared single-value parameters are filled in when the model leaves them out.
    assert_eq!(
        call("GET_DescribeLoadBalancers", json!({"PageSize": 5})).await,
        (
            "GET".to_string(),
            "/".to_string(),
            Some("PageSize=5&Action=DescribeLoadBalancers&Version=2015-12-01".to_string())
        )
    );
    // `Action` is a plain string parameter here: the suffix's value is its default.
    assert_eq!(
        call("GET_AddTags", json!({"LoadBalancerName": "web"})).await,
        (
            "GET".to_string(),
            "/".to_string(),
            Some("LoadBalancerName=web&Action=AddTags&Version=2012-06-01".to_string())
        )
    );
    // Pairs no parameter declares are sent with every call, first.
    assert_eq!(
        call("DescribeRegions", json!({"RegionName": "eu-west-1"})).await,
        (
            "GET".to_string(),
            "/".to_string(),
            Some("Action=DescribeRegions&Version=2016-11-15&RegionName=eu-west-1".to_string())
        )
    );
    assert_eq!(
        call("post_things_id_archive", json!({"id": 7})).await,
        ("POST".to_string(), "/things/7".to_string(), None)
    );

    // The model may still give a declared value, but only one the description allows, and
    // it cannot pass (or override) a fixed one.
    let refused = dispatcher
        .call(
            "GET_DescribeLoadBalancers",
            args(json!({"Action": "DeleteLoadBalancer"})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(refused.is_error, "{}", refused.joined_text());
    let refused = dispatcher
        .call(
            "DescribeRegions",
            args(json!({"Action": "DeleteVpc"})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    assert!(refused.is_error, "{}", refused.joined_text());
    assert!(
        refused.joined_text().contains("Action"),
        "{}",
        refused.joined_text()
    );
}

/// AWS JSON-protocol descriptions key every operation as
/// `/#X-Amz-Target=Service.Operation` and declare `X-Amz-Target` as a header parameter too.
/// The pair used to become a fixed query parameter as well (`?X-Amz-Target=…` beside the
/// header). A pair that names a declared parameter fills that parameter, wherever it is (a
/// header's name in any letter case), and nothing else.
#[tokio::test]
async fn a_suffix_pair_naming_a_declared_header_fills_that_header_only() {
    let upstream = upstream::start().await;
    let fixture = fixture("aws-json-target.yaml");
    let docs = spec::load(&SpecSource::File(fixture.clone()))
        .await
        .expect("loads");
    let (_, report) = catalog::build(
        &[ApiInput::new("aws", Some(&docs))],
        &ToolSettings::default(),
    )
    .expect("builds");
    let notes = report.apis[0]
        .operations
        .iter()
        .find(|op| {
            op.operation
                .ends_with("#X-Amz-Target=DynamoDB_20120810.ListTables")
        })
        .expect("ListTables")
        .notes
        .join("\n");
    assert!(
        notes.contains(
            "X-Amz-Target=DynamoDB_20120810.ListTables is the default of header parameter \"x-amz-target\""
        ) && !notes.contains("fixed query parameter"),
        "{notes}"
    );
    let dispatcher = dispatcher_for(fixture, &upstream.url(), UpstreamSettings::default()).await;
    let tool = dispatcher.catalog().get("ListTables").expect("tool");
    let schema = tool.input_schema.to_value();
    let target = schema["properties"]
        .as_object()
        .expect("properties")
        .iter()
        .find(|(name, _)| {
            name.eq_ignore_ascii_case("x_amz_target") || name.eq_ignore_ascii_case("x-amz-target")
        })
        .map(|(_, schema)| schema.clone())
        .expect("the header is an argument");
    assert_eq!(target["default"], "DynamoDB_20120810.ListTables");

    let result = dispatcher
        .call(
            "ListTables",
            args(json!({"Limit": 5, "X-Amz-Date": "20260101T000000Z"})),
            &CallContext::default(),
        )
        .await
        .expect("known tool");
    let seen = received(&result);
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["path"], "/");
    assert_eq!(seen["query"], Value::Null, "no query parameter at all");
    assert_eq!(
        seen["headers"]["x-amz-target"],
        "DynamoDB_20120810.ListTables"
    );
    assert_eq!(seen["headers"]["x-amz-date"], "20260101T000000Z");
    assert_eq!(seen["body"], r#"{"Limit":5}"#);
}

/// The same in a real description: Box keys its shared-link operations as
/// `/files/{file_id}#get_shared_link`.
#[tokio::test]
async fn box_shared_link_operations_request_the_path_without_the_suffix() {
    let Some(path) = shared_spec("real/box.json") else {
        return;
    };
    let upstream = upstream::start().await;
    let dispatcher = dispatcher_for(path, &upstream.url(), UpstreamSettings::default()).await;
    let seen = received(
        &dispatcher
            .call(
                "get_files_id_get_shared_link",
                args(json!({"file_id": "12345", "fields": "shared_link"})),
                &CallContext::default(),
            )
            .await
            .expect("known tool"),
    );
    assert_eq!(seen["method"], "GET");
    assert_eq!(seen["path"], "/files/12345");
    assert_eq!(seen["query"], "fields=shared_link");
}

/// Microsoft Graph's shape (tests/fixtures/deep-entities.json): the `updateUser` body
/// expands past the default 16 KiB inputSchema budget, so its published schema is relaxed.
/// What the model sends is still checked against the whole description: a violation deep
/// inside the body is refused with its path, and a valid body arrives as sent.
#[tokio::test]
async fn a_relaxed_tool_still_checks_arguments_against_the_full_schema() {
    let upstream = upstream::start().await;
    let docs = spec::load(&SpecSource::File(fixture("deep-entities.json")))
        .await
        .expect("spec loads");
    let url = upstream.url();
    let input = ApiInput {
        base_url: Some(&url),
        ..ApiInput::new("graph", Some(&docs))
    };
    let settings = ToolSettings::default();
    let (catalog, report) = catalog::build(&[input], &settings).expect("builds");
    let tool = catalog.get("updateUser").expect("tool");
    assert!(tool.input_schema.as_str().len() <= settings.max_input_schema_bytes);
    assert!(
        report.render().contains("inputSchema relaxed below depth"),
        "{}",
        report.render()
    );
    // The groups the user is a member of are published as placeholders: what restmcp
    // checks below them is not in the published schema.
    let published = tool.input_schema.to_value();
    let group = &published["$defs"]["group"];
    assert!(
        group.to_string().contains("nested fields not listed")
            && !group.to_string().contains("location"),
        "{published}"
    );
    let dispatcher = Dispatcher::with_settings(
        Arc::new(catalog),
        HashMap::from([("graph".to_string(), UpstreamSettings::default())]),
    )
    .expect("dispatcher");

    let too_far_north = json!({"user-id": "u1", "body": {
        "displayName": "Ada",
        "memberOf": [
            {"displayName": "Team", "location": {"city": "Paris", "geo": {"latitude": 123}}},
            {"displayName": "Guild", "location": {"city": "X"}}
        ]
    }});
    let result = dispatcher
        .call("updateUser", args(too_far_north), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(
        text.contains(
            "/body/memberOf/0/location/geo/latitude: 123 is greater than the maximum of 90"
        ),
        "{text}"
    );
    assert!(
        text.contains("/body/memberOf/1/location/city"),
        "every violation is listed: {text}"
    );
    assert_eq!(
        upstream.counters.all.load(Ordering::SeqCst),
        0,
        "nothing sent"
    );

    let valid = json!({"user-id": "u1", "body": {
        "displayName": "Ada",
        "manager": {"displayName": "Grace"},
        "memberOf": [{"displayName": "Team", "location": {"city": "Paris", "geo": {"latitude": 48.85}}}]
    }});
    let result = dispatcher
        .call("updateUser", args(valid.clone()), &CallContext::default())
        .await
        .expect("known tool");
    let echoed = received(&result);
    assert_eq!(echoed["method"], "PATCH", "{echoed}");
    assert_eq!(echoed["path"], "/users/u1", "{echoed}");
    let sent: Value =
        serde_json::from_str(echoed["body"].as_str().expect("body text")).expect("JSON body");
    assert_eq!(sent, valid["body"], "{echoed}");
}

/// Validators of small tools are compiled in the background when a catalog is served, so a
/// first call does not pay for it; the plan stays within its byte budget whatever the API.
#[tokio::test]
async fn small_tools_are_compiled_before_their_first_call() {
    let dispatcher = dispatcher_for(
        fixture("echo-api.yaml"),
        "http://127.0.0.1:9",
        UpstreamSettings::default(),
    )
    .await;
    let tools = dispatcher.catalog().tools();
    let plan = restmcp::upstream::validate::warm_plan(tools);
    assert!(!plan.is_empty(), "the echo API's tools are small");
    let name = tools[plan[0]].name.clone();
    assert!(
        !dispatcher.is_compiled(&name),
        "nothing is compiled before warming"
    );
    dispatcher.warm();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !plan
        .iter()
        .all(|&index| dispatcher.is_compiled(&tools[index].name))
    {
        assert!(Instant::now() < deadline, "warming did not finish");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let spent: usize = plan
        .iter()
        .map(|&index| {
            let tool = &tools[index];
            tool.input_schema.as_str().len()
                + tool.output_schema.as_ref().map_or(0, |s| s.as_str().len())
        })
        .sum();
    assert!(spent <= restmcp::upstream::validate::WARM_BUDGET_BYTES);
    assert!(
        tools
            .iter()
            .enumerate()
            .filter(|(index, _)| !plan.contains(index))
            .all(|(_, tool)| {
                tool.input_schema.as_str().len()
                    + tool.output_schema.as_ref().map_or(0, |s| s.as_str().len())
                    > restmcp::upstream::validate::WARM_TOOL_BYTES
            }),
        "only tools over the per-tool limit wait for their first call"
    );
}

/// An object written out twice in one tool is published once, under `$defs`
/// (tests/fixtures/repeated-addresses.yaml): the dispatcher, which checks arguments against
/// the published schema, still refuses a bad value inside it, wherever it is used, and
/// sends a good one as it came.
#[tokio::test]
async fn a_hoisted_schema_checks_arguments_as_the_inline_one_did() {
    let upstream = upstream::start().await;
    let docs = spec::load(&SpecSource::File(fixture("repeated-addresses.yaml")))
        .await
        .expect("spec loads");
    let url = upstream.url();
    let input = ApiInput {
        base_url: Some(&url),
        ..ApiInput::new("shop", Some(&docs))
    };
    let (catalog, report) = catalog::build(&[input], &ToolSettings::default()).expect("builds");
    let rendered = report.render();
    assert!(
        rendered.contains("repeated subtrees hoisted into $defs: inputSchema")
            && rendered.contains("1 tool(s) with repeated subtrees hoisted into $defs"),
        "{rendered}"
    );
    let tool = catalog.get("createOrder").expect("tool");
    let published = tool.input_schema.to_value();
    let customer = &published["properties"]["customer"]["properties"];
    assert_eq!(
        customer["billing"],
        json!({"$ref": "#/$defs/Address"}),
        "{published}"
    );
    assert_eq!(
        customer["shipping"],
        json!({"$ref": "#/$defs/Address"}),
        "{published}"
    );
    assert_eq!(
        published["$defs"]["Address"]["properties"]["zip"]["pattern"],
        "^[0-9]{5}$"
    );
    let output = tool
        .output_schema
        .as_ref()
        .expect("outputSchema")
        .to_value();
    assert_eq!(
        output["properties"]["shipping"],
        json!({"$ref": "#/$defs/Address"}),
        "{output}"
    );
    let dispatcher = Dispatcher::with_settings(
        Arc::new(catalog),
        HashMap::from([("shop".to_string(), UpstreamSettings::default())]),
    )
    .expect("dispatcher");

    let address = json!({"street": "1 Main St", "city": "Springfield", "zip": "12345"});
    let bad = json!({"customer": {"billing": address, "shipping": {"street": "2 Elm St", "city": "Shelbyville", "zip": "ABCDE"}}});
    let result = dispatcher
        .call("createOrder", args(bad), &CallContext::default())
        .await
        .expect("known tool");
    assert!(result.is_error);
    let text = result.joined_text();
    assert!(text.contains("/customer/shipping/zip"), "{text}");
    let extra = json!({"customer": {"billing": {"street": "1 Main St", "city": "S", "zip": "12345", "floor": 3}}});
    let result = dispatcher
        .call("createOrder", args(extra), &CallContext::default())
        .await
        .expect("known tool");
    assert!(
        result.is_error,
        "an unknown member inside the definition is refused"
    );
    assert_eq!(
        upstream.counters.all.load(Ordering::SeqCst),
        0,
        "nothing sent"
    );

    let good = json!({"customer": {"billing": address, "shipping": address}, "note": "ring twice"});
    let result = dispatcher
        .call("createOrder", args(good.clone()), &CallContext::default())
        .await
        .expect("known tool");
    let echoed = received(&result);
    let sent: Value =
        serde_json::from_str(echoed["body"].as_str().expect("body text")).expect("JSON body");
    assert_eq!(sent, good, "{echoed}");
}

#[test]
fn every_call_outcome_has_its_own_metrics_label() {
    for outcome in restmcp::upstream::CallOutcome::ALL {
        assert!(
            restmcp::telemetry::metrics::OUTCOMES.contains(&outcome.as_str()),
            "{} would be counted as another outcome",
            outcome.as_str()
        );
    }
}

/// An operation paged GitHub style: `page` and `per_page` query parameters.
const PAGES: &str = "openapi: 3.0.3
info: {title: pages, version: '1'}
paths:
  /_/pages:
    get:
      operationId: listPages
      parameters:
        - {name: page, in: query, schema: {type: integer}}
        - {name: per_page, in: query, schema: {type: integer}}
      responses:
        '200': {description: items, content: {application/json: {schema: {type: array, items: {type: object}}}}}
";

#[tokio::test]
async fn a_link_rel_next_becomes_the_arguments_of_the_next_page_until_there_is_none() {
    let upstream = upstream::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("pages.yaml");
    std::fs::write(&spec, PAGES).expect("write");
    let dispatcher = dispatcher_for(spec, &upstream.url(), UpstreamSettings::default()).await;
    let mut arguments = json!({"per_page": 2});
    let mut seen = Vec::new();
    for _ in 0..5 {
        let result = dispatcher
            .call(
                "listPages",
                args(arguments.clone()),
                &CallContext::default(),
            )
            .await
            .expect("tool");
        assert!(!result.is_error, "{}", result.joined_text());
        let items = result.structured.clone().expect("structured");
        let items = items.get("result").unwrap_or(&items).clone();
        seen.extend(
            items
                .as_array()
                .expect("a list")
                .iter()
                .map(|i| i["n"].clone()),
        );
        let said = result.joined_text();
        let Some(at) = said.find("with the same arguments and ") else {
            assert!(!said.contains("More results"), "{said}");
            break;
        };
        let next: Value = serde_json::from_str(
            said[at + "with the same arguments and ".len()..].trim_end_matches('.'),
        )
        .expect("the next arguments are JSON");
        // Only what changes, typed as the schema says.
        assert_eq!(next.as_object().map(Map::len), Some(1), "{next}");
        assert!(next["page"].is_u64(), "{next}");
        for (name, value) in next.as_object().expect("object") {
            arguments[name] = value.clone();
        }
    }
    assert_eq!(seen, (1..=6).map(|n| json!(n)).collect::<Vec<_>>());
}
