//! Arazzo workflows as tools, through the library: the shop fixture's workflows loaded
//! with `[workflows.shop]`, run by the dispatcher against a scripted upstream (an
//! [`Exchange`] that plays status sequences and headers and logs every request), and
//! `restmcp check`'s reasons for the workflows it refuses. The differential suite
//! (tests/arazzo) runs a corpus against Redocly Respect and a FastAPI upstream; the
//! confirmation and the SDK side are in `tests/it/confirm.rs` and that suite.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use restmcp::config::{Config, Overrides};
use restmcp::upstream::exchange::{BoxFuture, Exchange, Exchanged, Outgoing, Received};
use restmcp::upstream::{CallContext, Called, Dispatcher};
use serde_json::{Value, json};

use crate::support::fixture;

/// One scripted answer: status, JSON body (or none), headers.
type Answer = (u16, Option<Value>, Vec<(&'static str, &'static str)>);

/// An upstream that plays, per `METHOD /path` (query left out), its answers in order (the
/// last one repeats), and logs each request as `METHOD /path?query body`.
#[derive(Default)]
struct Scripted {
    rules: Mutex<HashMap<String, VecDeque<Answer>>>,
    log: Mutex<Vec<String>>,
}

impl Scripted {
    fn new(rules: Vec<(&str, Vec<Answer>)>) -> Arc<Scripted> {
        Arc::new(Scripted {
            rules: Mutex::new(
                rules
                    .into_iter()
                    .map(|(key, answers)| (key.to_string(), answers.into()))
                    .collect(),
            ),
            log: Mutex::default(),
        })
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }

    fn answer(&self, key: &str) -> Answer {
        let mut rules = self.rules.lock().expect("rules");
        match rules.get_mut(key) {
            Some(answers) if answers.len() > 1 => answers.pop_front().expect("answer"),
            Some(answers) => answers.front().cloned().expect("answer"),
            None => (404, Some(json!({"message": "no rule"})), Vec::new()),
        }
    }
}

impl Exchange for Scripted {
    fn exchange<'a>(&'a self, outgoing: Outgoing<'a>) -> BoxFuture<'a, Exchanged> {
        Box::pin(async move {
            let request = &outgoing.request;
            let url = url::Url::parse(&request.url).expect("url");
            let body = request
                .body
                .as_ref()
                .map(|b| format!(" {}", String::from_utf8_lossy(b)))
                .unwrap_or_default();
            let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
            let key = request
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("idempotency-key"))
                .map(|(_, value)| format!(" key={value}"))
                .unwrap_or_default();
            self.log.lock().expect("log").push(format!(
                "{} {}{query}{body}{key}",
                request.method,
                url.path()
            ));
            let (status, json, headers) =
                self.answer(&format!("{} {}", request.method, url.path()));
            let body = json.map(|v| v.to_string().into_bytes()).unwrap_or_default();
            let header = |name: &str| {
                headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.to_string())
            };
            Exchanged {
                answer: Ok(Box::new(Received {
                    status,
                    reason: String::new(),
                    content_type: (!body.is_empty()).then(|| "application/json".to_string()),
                    wire: body.len() as u64,
                    body,
                    omitted: 0,
                    undecodable: None,
                    location: None,
                    origin: String::new(),
                    retry_after: header("retry-after"),
                    operation: None,
                    result_location: None,
                    link: None,
                    validators: Default::default(),
                })),
                attempts: 1,
                upstream: None,
                bytes_sent: 0,
            }
        })
    }
}

/// The shop fixture as a project, `[workflows.shop]` on its Arazzo document with
/// `extra` keys, and a dispatcher whose `shop` API goes to `upstream`.
async fn shop(extra: &str, upstream: &Arc<Scripted>) -> (tempfile::TempDir, Dispatcher) {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in [
        "shop.openapi.yaml",
        "shop.arazzo.yaml",
        "broken.arazzo.yaml",
    ] {
        std::fs::copy(fixture(&format!("workflows/{file}")), dir.path().join(file)).expect("copy");
    }
    let config = format!(
        "[apis.shop]\nspec = \"shop.openapi.yaml\"\nidempotency_header = \"Idempotency-Key\"\n\
         [workflows.shop]\nfile = \"shop.arazzo.yaml\"\nprefix = \"wf_\"\n{extra}\n"
    );
    std::fs::write(dir.path().join("config.toml"), config).expect("config");
    let config =
        Config::load(&dir.path().join("config.toml"), &Overrides::default()).expect("config");
    let loaded = restmcp::load::load(&config).await.expect("loads");
    let catalog = Arc::new(loaded.catalog);
    let dispatcher = Dispatcher::new(catalog, &config)
        .expect("dispatcher")
        .with_exchange("shop", upstream.clone());
    (dir, dispatcher)
}

async fn call(dispatcher: &Dispatcher, tool: &str, arguments: Value) -> Called {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    dispatcher
        .call_with_stats(tool, arguments, &CallContext::default())
        .await
        .expect("the tool exists")
}

fn pets() -> Answer {
    (
        200,
        Some(
            json!([{"id": 7, "name": "Rex", "status": "available"}, {"id": 9, "name": "Tom", "status": "sold"}]),
        ),
        Vec::new(),
    )
}

fn placed(id: u64) -> Answer {
    (201, Some(json!({"id": id, "status": "placed"})), Vec::new())
}

#[tokio::test]
async fn a_workflow_runs_its_steps_and_returns_its_outputs() {
    let upstream = Scripted::new(vec![
        ("GET /pets", vec![pets()]),
        ("POST /orders", vec![placed(31)]),
    ]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_buy-pet", json!({"quantity": 2})).await;
    assert!(!called.result.is_error, "{}", called.result.joined_text());
    // `== 'PLACED'` held for "placed": strings compare case-insensitively; the output
    // keeps the value as it came.
    assert_eq!(
        called.result.structured,
        Some(json!({"orderId": 31, "petId": 7, "status": "placed"}))
    );
    let log = upstream.log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0], "GET /pets?status=available");
    let sent = log[1].trim_start_matches("POST /orders ");
    let body: Value =
        serde_json::from_str(sent.split(" key=").next().unwrap_or(sent)).expect("JSON body");
    assert_eq!(body, json!({"petId": 7, "quantity": 2, "note": "for Rex"}));
}

#[tokio::test]
async fn a_failed_step_names_itself_its_criteria_and_what_was_sent() {
    let upstream = Scripted::new(vec![
        ("GET /pets", vec![pets()]),
        (
            "POST /orders",
            vec![(409, Some(json!({"message": "taken"})), Vec::new())],
        ),
    ]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_buy-pet", json!({})).await;
    let text = called.result.joined_text();
    assert!(called.result.is_error, "{text}");
    assert!(text.contains("at step \"place-order\""), "{text}");
    assert!(text.contains("answered 409"), "{text}");
    assert!(text.contains("$statusCode == 201"), "{text}");
    assert!(
        text.contains("1. step find-pets: GET http://shop.invalid/pets?status=available → 200"),
        "{text}"
    );
    assert!(
        text.contains("2. step place-order: POST http://shop.invalid/orders → 409"),
        "{text}"
    );
}

#[tokio::test]
async fn a_retry_action_waits_and_sends_again_within_its_limit() {
    let busy: Answer = (503, None, vec![("Retry-After", "0")]);
    let ok: Answer = (200, Some(json!({"id": 4, "name": "Kit"})), Vec::new());
    let upstream = Scripted::new(vec![("GET /pets/4", vec![busy.clone(), busy.clone(), ok])]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_patient-read", json!({"petId": 4})).await;
    assert!(!called.result.is_error, "{}", called.result.joined_text());
    assert_eq!(
        called.result.structured,
        Some(json!({"name": "Kit", "type": "application/json"}))
    );
    assert_eq!(upstream.log().len(), 3, "two retries: {:?}", upstream.log());

    // Always busy: the first request and two retries (retryLimit 2), then the failure.
    let upstream = Scripted::new(vec![("GET /pets/4", vec![busy])]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_patient-read", json!({"petId": 4})).await;
    let text = called.result.joined_text();
    assert!(called.result.is_error, "{text}");
    assert_eq!(upstream.log().len(), 3, "{:?}", upstream.log());
    assert!(text.contains("retried it 2 times"), "{text}");
}

#[tokio::test]
async fn a_goto_loop_stops_at_max_steps_with_a_clear_result() {
    let upstream = Scripted::new(vec![(
        "GET /pets/1",
        vec![(200, Some(json!({"id": 1})), Vec::new())],
    )]);
    let (_dir, dispatcher) = shop("max_steps = 4", &upstream).await;
    let called = call(&dispatcher, "wf_forever", json!({})).await;
    let text = called.result.joined_text();
    assert!(called.result.is_error, "{text}");
    assert_eq!(upstream.log().len(), 4, "{:?}", upstream.log());
    assert!(text.contains("max_steps of [workflows.shop] (4)"), "{text}");
}

#[tokio::test]
async fn nested_workflows_run_with_their_own_inputs_and_give_their_outputs() {
    let upstream = Scripted::new(vec![
        ("GET /pets", vec![pets()]),
        ("POST /orders", vec![placed(1), placed(2)]),
    ]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_buy-twice", json!({})).await;
    assert!(!called.result.is_error, "{}", called.result.joined_text());
    assert_eq!(
        called.result.structured,
        Some(json!({"first": 1, "second": 2}))
    );
    let log = upstream.log();
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(log[3].contains("\"quantity\":2"), "{log:?}");
}

#[tokio::test]
async fn a_form_body_written_as_text_is_sent_as_form_fields() {
    let upstream = Scripted::new(vec![(
        "POST /token",
        vec![(200, Some(json!({"access_token": "t0k"})), Vec::new())],
    )]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_token", json!({"code": "a b/c"})).await;
    assert!(!called.result.is_error, "{}", called.result.joined_text());
    assert_eq!(called.result.structured, Some(json!({"token": "t0k"})));
    let log = upstream.log();
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(
        log[0].starts_with("POST /token grant_type=authorization_code&code=a%20b%2Fc key="),
        "the text's fields, encoded again: {log:?}"
    );
}

#[tokio::test]
async fn a_bad_argument_is_refused_before_any_request() {
    let upstream = Scripted::new(vec![]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let called = call(&dispatcher, "wf_buy-pet", json!({"quantity": 0, "note": 5})).await;
    let text = called.result.joined_text();
    assert!(called.result.is_error, "{text}");
    assert!(
        text.contains("quantity") && text.contains("note"),
        "every violation: {text}"
    );
    assert!(upstream.log().is_empty());
}

#[tokio::test]
async fn idempotency_keys_are_derived_per_step_and_visit() {
    let upstream = Scripted::new(vec![
        ("GET /pets", vec![pets()]),
        ("POST /orders", vec![placed(5)]),
    ]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let tool = dispatcher
        .catalog()
        .get("wf_buy-pet")
        .expect("tool")
        .clone();
    let schema = tool.input_schema.to_value();
    assert!(
        schema.pointer("/properties/idempotency_key").is_some(),
        "{schema}"
    );
    let keyed = |key: &str| json!({"idempotency_key": key});
    let first = call(&dispatcher, "wf_buy-pet", keyed("k-1")).await;
    let again = call(&dispatcher, "wf_buy-pet", keyed("k-1")).await;
    let other = call(&dispatcher, "wf_buy-pet", keyed("k-2")).await;
    for called in [&first, &again, &other] {
        assert!(!called.result.is_error, "{}", called.result.joined_text());
    }
    // The library sends each run (the MCP layer answers repeats from the store); the key
    // each order carried is the same for the same call key, and another for another.
    let keys: Vec<String> = upstream
        .log()
        .iter()
        .filter(|line| line.starts_with("POST"))
        .map(|line| line.rsplit_once(" key=").expect("a key").1.to_string())
        .collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
    assert_eq!(keys[0], keys[1], "the same call key, the same step key");
    assert_ne!(keys[0], keys[2], "another call key, another step key");
    assert!(
        !keys.iter().any(|k| k.starts_with("k-")),
        "derived, not the caller's: {keys:?}"
    );
}

#[tokio::test]
async fn annotations_come_from_the_steps() {
    let upstream = Scripted::new(vec![]);
    let (_dir, dispatcher) = shop("", &upstream).await;
    let catalog = dispatcher.catalog();
    let read = catalog.get("wf_patient-read").expect("tool");
    assert!(read.annotations.read_only_hint && !read.annotations.destructive_hint);
    let buy = catalog.get("wf_buy-pet").expect("tool");
    assert!(!buy.annotations.read_only_hint && !buy.annotations.destructive_hint);
    let remove = catalog.get("wf_remove-pet").expect("tool");
    assert!(remove.annotations.destructive_hint);
    let output = buy.output_schema.as_ref().expect("outputSchema").to_value();
    assert_eq!(
        output,
        json!({"type": "object", "properties": {
            "orderId": {"type": ["integer", "null"]},
            "petId": {"type": ["integer", "null"]},
            "status": {"type": ["string", "null"]}
        }})
    );
    let input = buy.input_schema.to_value();
    assert_eq!(
        input.pointer("/properties/quantity/minimum"),
        Some(&json!(1)),
        "{input}"
    );
}

#[tokio::test]
async fn check_says_why_each_broken_workflow_is_not_published() {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["shop.openapi.yaml", "broken.arazzo.yaml"] {
        std::fs::copy(fixture(&format!("workflows/{file}")), dir.path().join(file)).expect("copy");
    }
    std::fs::write(
        dir.path().join("config.toml"),
        "[apis.shop]\nspec = \"shop.openapi.yaml\"\n[workflows.broken]\nfile = \"broken.arazzo.yaml\"\n",
    )
    .expect("config");
    let config =
        Config::load(&dir.path().join("config.toml"), &Overrides::default()).expect("config");
    let loaded = restmcp::load::load(&config).await.expect("loads");
    let text = loaded.report.render();
    let published: Vec<&str> = loaded
        .report
        .workflows
        .iter()
        .filter_map(|w| w.tool.as_deref())
        .collect();
    assert_eq!(published, vec!["fine"], "{text}");
    for expected in [
        "has no query parameter \"pet_status\" (it has \"status\")",
        "needs query parameter \"status\", which the step never supplies",
        "names step \"second\", which does not run before this one",
        "xpath criteria are not supported",
        "$inputz.petId",
        "goto stepId \"nowhere\" is not a step of this workflow",
        "operationId \"shop-nothing\" is not a tool",
        "#/workflows/0/steps/0/parameters/0",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
}

/// A workflow on the echo API whose second step (a POST) needs confirmation.
const ECHO_WORKFLOW: &str = r#"arazzo: 1.0.1
info: {title: Echo workflows, version: "1"}
sourceDescriptions:
  - {name: echo, url: ./specs/echo.yaml}
workflows:
  - workflowId: read-then-rename
    inputs: {type: object, properties: {name: {type: string}}}
    steps:
      - stepId: read
        operationId: getItem
        parameters: [{name: id, in: path, value: "7"}]
        successCriteria: [{condition: $statusCode == 200}]
      - stepId: rename
        operationId: updateItem
        parameters: [{name: id, in: path, value: 7}]
        requestBody: {contentType: application/json, payload: {name: $inputs.name}}
        successCriteria: [{condition: $statusCode == 200}]
        outputs: {path: $response.body#/path, method: $response.body#/method}
    outputs:
      path: $steps.rename.outputs.path
      method: $steps.rename.outputs.method
"#;

/// Through the real binary: a 2026-07-28 client is asked once, before the first request,
/// with the plan; a decline sends nothing, an accept runs both steps.
#[tokio::test]
async fn a_workflow_that_reaches_a_confirmed_step_asks_once_before_any_request() {
    use std::sync::atomic::Ordering;

    let upstream = crate::upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\nconfirm = \"writes\"\n\
         [workflows.echo]\nfile = \"echo.arazzo.yaml\"\n[reload]\nenabled = false\n",
        upstream.url()
    );
    let dir = crate::overlays::project(&config, &[("echo.arazzo.yaml", ECHO_WORKFLOW)]);
    let binary = crate::reload::Binary::start(dir.path()).await;
    let sent = || upstream.counters.all.load(Ordering::SeqCst);
    let call = |params: Value| {
        let url = binary.url.clone();
        async move { crate::support::stateless_call(&url, "read-then-rename", params, &[]).await }
    };
    let arguments = json!({"name": "Rex"});
    let asked = call(json!({"arguments": arguments})).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let message = result["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .expect("a question")
        .to_string();
    assert!(message.contains("Allow this workflow to run?"), "{message}");
    assert!(message.contains("1. GET /echo/items/{id}"), "{message}");
    assert!(message.contains("2. POST /echo/items/{id}"), "{message}");
    assert!(
        message.contains("\"name\":\"Rex\""),
        "the arguments: {message}"
    );
    assert_eq!(sent(), 0, "asking sends nothing");
    let state = result["requestState"].as_str().expect("state").to_string();
    let answer = |action: &str| {
        json!({"arguments": arguments, "requestState": state,
               "inputResponses": {"confirm": {"action": action}}})
    };

    let declined = call(answer("decline")).await;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert_eq!(sent(), 0, "a declined workflow sends nothing");

    let asked = call(json!({"arguments": arguments})).await;
    let state = asked["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();
    let accepted = call(json!({"arguments": arguments, "requestState": state,
        "inputResponses": {"confirm": {"action": "accept"}}}))
    .await;
    assert_eq!(accepted["result"]["isError"], false, "{accepted}");
    assert_eq!(
        accepted["result"]["structuredContent"],
        json!({"path": "/echo/items/7", "method": "POST"}),
        "{accepted}"
    );
    assert_eq!(sent(), 2, "both steps, once");
}

/// `pass` documents of the schema tests that the JSON Schema accepts but that cannot run,
/// and what restmcp says of each: a JSONPath criterion that is not RFC 9535 (`$.x != null`
/// compares outside a filter), and an operationPath the schema only knows as a string.
const DEFECTIVE: [(&str, &str); 2] = [
    ("oauth-example.yaml", "invalid JSONPath"),
    (
        "characterization-openapi-invalid-operationPath-string.arazzo.yaml",
        "is not '{$sourceDescriptions.NAME.url}#/paths/…/METHOD'",
    ),
];

/// The OAI Arazzo repository's schema tests (dev branch, tests/schema): every `pass`
/// document reads, or is refused by the name of a feature restmcp does not run (or, for
/// the two in [`DEFECTIVE`], for its defect); every `fail` document has a problem.
#[test]
fn the_arazzo_schema_tests_read_or_are_refused_by_name() {
    use restmcp::spec::arazzo::document;
    let read = |path: &std::path::Path| {
        let bytes = std::fs::read(path).expect("fixture");
        let name = path.display().to_string();
        match restmcp::spec::parse::parse_document(&name, &bytes) {
            Ok(value) => {
                let read = document::read(&value);
                let mut problems: Vec<String> =
                    read.problems.iter().map(|p| p.to_string()).collect();
                for workflow in &read.workflows {
                    if let Err(found) = &workflow.workflow {
                        problems.extend(found.iter().map(|p| p.to_string()));
                    }
                }
                problems
            }
            Err(error) => vec![error.to_string()],
        }
    };
    let mut wrong = Vec::new();
    for kind in ["pass", "fail"] {
        let dir = fixture(&format!("arazzo-schema/{kind}"));
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for file in files {
            let problems = read(&file);
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // A feature restmcp does not run is refused by its name (what follows from it,
            // such as a step left without a target, may be said too).
            let refused_by_name =
                problems.is_empty() || problems.iter().any(|p| p.contains("not supported"));
            let defect = DEFECTIVE
                .iter()
                .find(|(file, _)| *file == name)
                .map(|(_, said)| *said);
            match (kind, defect) {
                ("pass", Some(said)) if !problems.iter().any(|p| p.contains(said)) => wrong.push(
                    format!("pass/{name}: not refused for {said:?}: {problems:?}"),
                ),
                ("pass", None) if !refused_by_name => {
                    wrong.push(format!("pass/{name}: {problems:?}"))
                }
                ("fail", _) if problems.is_empty() => {
                    wrong.push(format!("fail/{name}: read without a problem"))
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Through the real binary with an MCP client: a progress notification as each step
/// starts, and the tool follows edits of its Arazzo document (a broken edit keeps it).
#[tokio::test]
async fn progress_per_step_and_hot_reload_of_the_document() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use rmcp::{ClientHandler, RoleClient, ServiceExt};

    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{}\"\n\
         [workflows.echo]\nfile = \"echo.arazzo.yaml\"\n[reload]\ninterval_ms = 100\n",
        upstream.url()
    );
    let dir = crate::overlays::project(&config, &[("echo.arazzo.yaml", ECHO_WORKFLOW)]);
    let binary = crate::reload::Binary::start(dir.path()).await;
    #[derive(Clone, Default)]
    struct Watching(Arc<Mutex<Vec<String>>>, Arc<AtomicUsize>);
    impl ClientHandler for Watching {
        async fn on_progress(
            &self,
            params: rmcp::model::ProgressNotificationParam,
            _context: rmcp::service::NotificationContext<RoleClient>,
        ) {
            let said = format!("{} {}", params.progress, params.message.unwrap_or_default());
            self.0.lock().expect("lock").push(said);
        }

        async fn on_tool_list_changed(
            &self,
            _context: rmcp::service::NotificationContext<RoleClient>,
        ) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    let watching = Watching::default();
    let client = watching
        .clone()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            binary.url.clone(),
        ))
        .await
        .expect("initialize");
    let result = crate::support::call(&client, "read-then-rename", json!({"name": "Rex"})).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let told = watching.0.lock().expect("lock").clone();
    assert_eq!(
        told,
        vec![
            "1 workflow read-then-rename: step read".to_string(),
            "2 workflow read-then-rename: step rename".to_string()
        ]
    );

    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let renamed = ECHO_WORKFLOW.replace("read-then-rename", "rename-after-reading");
    std::fs::write(dir.path().join("echo.arazzo.yaml"), renamed).expect("edit");
    let edited = std::time::Instant::now();
    while watching.1.load(Ordering::SeqCst) == 0 && edited.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = names(client.list_all_tools().await.expect("tools/list"));
    assert!(
        after.contains(&"rename-after-reading".to_string()),
        "{after:?}\n{}",
        binary.log()
    );
    assert!(
        !after.contains(&"read-then-rename".to_string()),
        "{after:?}"
    );

    std::fs::write(dir.path().join("echo.arazzo.yaml"), "arazzo: [unclosed\n").expect("break");
    assert!(
        binary
            .wait_for_log("failed; still serving the previous", Duration::from_secs(3))
            .await,
        "{}",
        binary.log()
    );
    assert!(
        binary.log().contains("echo.arazzo.yaml"),
        "names the file:\n{}",
        binary.log()
    );
    let still = names(client.list_all_tools().await.expect("tools/list"));
    assert_eq!(still, after, "the last good tools are still served");
    client.cancel().await.expect("close");
}

/// The official pet-coupons example as published (OAI/Arazzo-Specification examples/1.0.0,
/// fc140d2): `check` names both parameters its operations do not have, with their places
/// in the document, and publishes the workflow that has no defect.
#[test]
fn check_names_the_published_pet_coupons_defects() {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["pet-coupons.arazzo.yaml", "pet-coupons.openapi.yaml"] {
        std::fs::copy(
            fixture(&format!("workflows/published/{file}")),
            dir.path().join(file),
        )
        .expect("copy");
    }
    std::fs::write(
        dir.path().join("config.toml"),
        "[apis.pets]\nspec = \"pet-coupons.openapi.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
         [workflows.coupons]\nfile = \"pet-coupons.arazzo.yaml\"\n",
    )
    .expect("config");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(["check", "--config", "config.toml"])
        .current_dir(dir.path())
        .output()
        .expect("restmcp check");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a workflow is not published:\n{text}"
    );
    for expected in [
        "workflow apply-coupon -> NOT PUBLISHED:",
        "#/workflows/0/steps/0/parameters/0: operation GET /pet/findByTags has no query parameter \"pet_tags\" (it has \"tags\")",
        "#/workflows/0/steps/1/parameters/0: operation GET /pet/{petId}/coupons has no path parameter \"pet_id\" (it has \"petId\")",
        "workflow place-order -> tool place-order",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
}
