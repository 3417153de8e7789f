//! Calls that change the world, through the real binary, against the in-process
//! echo upstream that counts what reaches it. Idempotency keys: a repeat is answered from
//! the store, a keyed POST is retried. Human confirmation: an initialize-based session is asked with
//! `elicitation/create` (rmcp's client, over Streamable HTTP with sessions, so the question
//! travels on the call's SSE stream), a 2026-07-28 client gets `input_required` with a
//! signed `requestState`. tests/confirm/ runs the same against the official Python and
//! TypeScript SDKs with httpbin as the upstream, and the conformance suite's
//! input-required-result-* scenarios run in tests/interop/run-conformance.sh.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;
use crate::support::call;

/// `echo` with confirm = "writes": updateItem (POST) and createCharge need confirmation,
/// but an overlay waives it for createCharge and asks it for getFile (GET).
fn config(upstream: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n\
         overlays = [\"confirm.overlay.yaml\"]\nconfirm = \"writes\"\n\
         [reload]\nenabled = false\n"
    )
}

const OVERLAY: &str = "tools:\n  createCharge: {confirm: false}\n  getFile: {confirm: true}\n  \
     updateItem: {arguments: {id: {value_env: ECHO_TENANT_SECRET}}}\n";

/// The value of a hidden argument read from the environment: sent, never shown.
const TENANT_SECRET: &str = "tenant-9f2c41-secret";

/// A user who answers every question with `action`, remembering what they were shown.
#[derive(Clone)]
struct User {
    action: ElicitationAction,
    shown: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("confirming-user", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.shown.lock().expect("lock").push(message);
        }
        Ok(ElicitResult::new(self.action.clone()))
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content)
        .expect("json")
        .to_string()
}

#[tokio::test]
async fn a_session_asks_its_user_and_sends_only_what_was_accepted() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let dir = project(
        &config(&upstream.url()),
        &[("confirm.overlay.yaml", OVERLAY)],
    );
    let binary = Binary::start_with(dir.path(), &[("ECHO_TENANT_SECRET", TENANT_SECRET)]).await;
    let sent = || upstream.counters.all.load(Ordering::SeqCst);
    let user = |action| User {
        action,
        shown: Arc::default(),
    };

    // Accepted: shown the method, the resolved URL, the body and the API; sent once.
    let accepting = user(ElicitationAction::Accept);
    let client = accepting
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize");
    let before = sent();
    let result = call(&client, "updateItem", json!({"id__path": 1, "name": "Rex"})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(sent(), before + 1, "the accepted call is sent once");
    let shown = accepting.shown.lock().expect("lock").clone();
    assert_eq!(shown.len(), 1, "{shown:?}");
    let question = &shown[0];
    let url = format!("POST {}/echo/items/1", upstream.url());
    assert!(question.contains(&url), "{question}");
    assert!(question.contains("API: echo"), "{question}");
    assert!(question.contains("\"name\":\"Rex\""), "{question}");
    assert!(
        !question.contains(TENANT_SECRET) && question.contains("[REDACTED]"),
        "a hidden value from the environment is never shown: {question}"
    );
    // The overlay waives it for createCharge, and asks it for a GET.
    call(&client, "createCharge", json!({"amount": 5})).await;
    assert_eq!(accepting.shown.lock().expect("lock").len(), 1);
    call(&client, "getFile", json!({"path": "a.txt"})).await;
    assert_eq!(accepting.shown.lock().expect("lock").len(), 2);
    client.cancel().await.expect("close");

    // Declined and cancelled: an error result, nothing sent.
    for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        let client = user(action)
            .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
        let before = sent();
        let result = call(&client, "updateItem", json!({"id__path": 2, "name": "Rex"})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(
            text(&result).contains("nothing was sent"),
            "{}",
            text(&result)
        );
        assert_eq!(sent(), before, "a refused call reaches nobody");
        client.cancel().await.expect("close");
    }

    // A client without elicitation: fail closed.
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let before = sent();
    let result = call(&client, "updateItem", json!({"id__path": 3, "name": "Rex"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("cannot ask its user"),
        "{}",
        text(&result)
    );
    assert_eq!(sent(), before);
    // Reads are not asked about.
    let result = call(&client, "getItem", json!({"id": "4"})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(sent(), before + 1);
    client.cancel().await.expect("close");
}

/// One stateless 2026-07-28 `tools/call`.
async fn stateless(url: &str, name: &str, params: Value) -> Value {
    crate::support::stateless_call(url, name, params, &[]).await
}

#[tokio::test]
async fn a_stateless_confirmation_runs_once_and_its_state_cannot_be_reused_or_moved() {
    let upstream = crate::upstream::start().await;
    let dir = project(
        &config(&upstream.url()),
        &[("confirm.overlay.yaml", OVERLAY)],
    );
    let binary = Binary::start_with(dir.path(), &[("ECHO_TENANT_SECRET", TENANT_SECRET)]).await;
    let sent = || upstream.counters.all.load(Ordering::SeqCst);
    let arguments = json!({"id__path": 7, "name": "Rex"});
    let before = sent();
    let asked = stateless(&binary.url, "updateItem", json!({"arguments": arguments})).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let question = &result["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create");
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("POST ") && m.contains("/echo/items/7")),
        "{question}"
    );
    let state = result["requestState"].as_str().expect("state").to_string();
    assert_eq!(sent(), before, "asking sends nothing");
    // The hidden argument's value from the environment is in the body, not in the question.
    assert!(!asked.to_string().contains(TENANT_SECRET), "{asked}");

    let answer = |arguments: &Value, state: &str| {
        json!({"arguments": arguments, "requestState": state,
               "inputResponses": {"confirm": {"action": "accept"}}})
    };
    // The state for id 7 does not open id 8's call.
    let moved = stateless(
        &binary.url,
        "updateItem",
        answer(&json!({"id__path": 8, "name": "Rex"}), &state),
    )
    .await;
    assert_eq!(moved["error"]["code"], -32602, "{moved}");
    let done = stateless(&binary.url, "updateItem", answer(&arguments, &state)).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(sent(), before + 1);
    let replayed = stateless(&binary.url, "updateItem", answer(&arguments, &state)).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already used")),
        "{replayed}"
    );
    assert_eq!(sent(), before + 1, "a replay sends nothing");
}

/// `echo` with `idempotency_header`: its POST tools take `idempotency_key`.
fn idempotent_config(upstream: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n\
         idempotency_header = \"Idempotency-Key\"\n\
         [reload]\nenabled = false\n"
    )
}

#[tokio::test]
async fn a_repeat_with_the_same_idempotency_key_reaches_the_upstream_once() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let dir = project(&idempotent_config(&upstream.url()), &[]);
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let sent = || upstream.counters.all.load(Ordering::SeqCst);
    let echoed_key = |result: &rmcp::model::CallToolResult| {
        let echo: Value = result
            .structured_content
            .clone()
            .or_else(|| {
                result
                    .content
                    .first()
                    .and_then(|c| c.as_text().and_then(|t| serde_json::from_str(&t.text).ok()))
            })
            .expect("the echo");
        echo["headers"]["idempotency-key"]
            .as_str()
            .expect("a key was sent")
            .to_string()
    };

    // Without a key: a fresh one each call, nothing remembered.
    let before = sent();
    let first = call(&client, "updateItem", json!({"id__path": 1, "name": "a"})).await;
    let second = call(&client, "updateItem", json!({"id__path": 1, "name": "a"})).await;
    assert_eq!(sent(), before + 2);
    assert_ne!(echoed_key(&first), echoed_key(&second));

    // With one: sent once, the repeat answered from the store and marked so.
    let keyed = json!({"id__path": 2, "name": "b", "idempotency_key": "order-7"});
    let before = sent();
    let first = call(&client, "updateItem", keyed.clone()).await;
    assert_eq!(echoed_key(&first), "order-7");
    let repeat = call(&client, "updateItem", keyed.clone()).await;
    assert_eq!(sent(), before + 1, "the repeat is not sent");
    assert_eq!(repeat.content, first.content);
    assert_eq!(
        repeat
            .meta
            .as_ref()
            .and_then(|m| m.0.get("io.restmcp/idempotentReplay")),
        Some(&json!(true))
    );
    // The same key with other arguments: refused, nothing sent.
    let other = call(
        &client,
        "updateItem",
        json!({"id__path": 2, "name": "c", "idempotency_key": "order-7"}),
    )
    .await;
    assert_eq!(other.is_error, Some(true));
    assert!(
        text(&other).contains("with other arguments"),
        "{}",
        text(&other)
    );
    assert_eq!(sent(), before + 1);

    // With a key, a POST is retried after a 503 (flakyPost fails once); it got one here.
    let retried = call(&client, "flakyPost", json!({"idempotency_key": "flaky-1"})).await;
    assert_ne!(retried.is_error, Some(true), "{}", text(&retried));
    assert_eq!(upstream.counters.flaky.load(Ordering::SeqCst), 2);
    client.cancel().await.expect("close");
}

/// A one-operation API whose job is long-running (202 + Operation-Location).
const JOBS: &str = "openapi: 3.0.3\ninfo: {title: jobs, version: '1'}\npaths:\n  /_/jobs:\n    post:\n      operationId: startJob\n      responses:\n        '202': {description: accepted}\n        '200': {description: the report, content: {application/json: {schema: {type: object}}}}\n";

#[tokio::test]
async fn a_long_running_operation_is_followed_to_its_result_with_progress() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let config = |timeout: u32| {
        format!(
            "[server]\nlisten = \"127.0.0.1:0\"\n\
             [apis.jobs]\nspec = \"specs/jobs.yaml\"\nbase_url = \"{}\"\ntimeout_seconds = {timeout}\n\
             [reload]\nenabled = false\n",
            upstream.url()
        )
    };
    let dir = project(&config(20), &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let progress = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    #[derive(Clone)]
    struct Watching(Arc<std::sync::atomic::AtomicUsize>);
    impl ClientHandler for Watching {
        async fn on_progress(
            &self,
            _params: rmcp::model::ProgressNotificationParam,
            _context: rmcp::service::NotificationContext<RoleClient>,
        ) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let client = Watching(progress.clone())
        .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize");
    let result = call(&client, "startJob", json!({})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert!(
        text(&result).contains("done"),
        "the finished resource: {}",
        text(&result)
    );
    assert_eq!(upstream.counters.polls.load(Ordering::SeqCst), 3);
    assert!(
        progress.load(Ordering::SeqCst) >= 1,
        "no progress while polling"
    );
    client.cancel().await.expect("close");

    // Past the tool's time: an error result that says where the status is, and how to wait longer.
    upstream.counters.polls.store(0, Ordering::SeqCst);
    let dir = project(&config(1), &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let result = call(&client, "startJob", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    let said = text(&result);
    assert!(
        said.contains("still Running")
            && said.contains("/_/jobs/7/status")
            && said.contains("tool_timeouts"),
        "{said}"
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_confirmation_covers_every_argument_header_and_cookie_ones_included() {
    let upstream = crate::upstream::start().await;
    let dir = project(
        &config(&upstream.url()),
        &[(
            "confirm.overlay.yaml",
            "tools:\n  getItem: {confirm: true}\n",
        )],
    );
    let binary = Binary::start(dir.path()).await;
    let sent = || upstream.counters.all.load(Ordering::SeqCst);
    let dry = json!({"id": "7", "X-Trace": "dry-run", "session": "s-1"});
    let asked = stateless(&binary.url, "getItem", json!({"arguments": dry})).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    // The user sees every header the arguments set, not only the URL.
    let message = result["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .expect("message");
    assert!(
        message.contains("X-Trace: dry-run") && message.contains("session=s-1"),
        "{message}"
    );
    let state = result["requestState"].as_str().expect("state").to_string();
    let answer = |arguments: &Value| {
        json!({"arguments": arguments, "requestState": state,
               "inputResponses": {"confirm": {"action": "accept"}}})
    };
    let before = sent();
    // What was confirmed was the dry run: another header or cookie value is refused.
    for changed in [
        json!({"id": "7", "X-Trace": "purge-everything", "session": "s-1"}),
        json!({"id": "7", "X-Trace": "dry-run", "session": "admin"}),
        json!({"id": "7", "session": "s-1"}),
    ] {
        let refused = stateless(&binary.url, "getItem", answer(&changed)).await;
        assert_eq!(refused["error"]["code"], -32602, "{changed}: {refused}");
    }
    assert_eq!(sent(), before, "nothing was sent");
    let done = stateless(&binary.url, "getItem", answer(&dry)).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(sent(), before + 1);
    let echoed = done["result"]["structuredContent"]["headers"].clone();
    assert_eq!(echoed["x-trace"], "dry-run", "{echoed}");
}
