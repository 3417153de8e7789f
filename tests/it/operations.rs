//! Long-running operations past their call, through the real binary
//! against the in-process upstream: the handle and the status tool for a call that ran out
//! of time, 2026-07-28 tasks (`tasks/get`, `tasks/cancel`) for a client that takes them, an
//! operation that fails upstream, and an Azure-style PUT (`x-ms-long-running-operation`,
//! 201 + `Azure-AsyncOperation`, the result read at the original URL). tests/results runs
//! the status tool and tasks against a FastAPI upstream with the official SDKs.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;
use crate::support::call;

/// Jobs (202 + Operation-Location, running for two polls), a job that fails, and an
/// Azure-style PUT marked long-running.
const JOBS: &str = "openapi: 3.0.3
info: {title: jobs, version: '1'}
paths:
  /_/jobs:
    post:
      operationId: startJob
      responses:
        '202': {description: accepted}
        '200': {description: the report, content: {application/json: {schema: {type: object}}}}
  /_/doomed:
    post:
      operationId: startDoomed
      responses:
        '202': {description: accepted}
  /_/things/1:
    put:
      operationId: putThing
      x-ms-long-running-operation: true
      x-ms-long-running-operation-options: {final-state-via: original-uri}
      responses:
        '201': {description: created, content: {application/json: {schema: {type: object}}}}
";

fn config(upstream: &str, timeout: u32) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [apis.jobs]\nspec = \"specs/jobs.yaml\"\nbase_url = \"{upstream}\"\n\
         timeout_seconds = {timeout}\n\
         [reload]\nenabled = false\n"
    )
}

/// The result's texts, joined.
fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The handle a result gives: the quoted string after `handle`.
fn handle_in(said: &str) -> String {
    let start = said.find("handle \"").expect("a handle") + "handle \"".len();
    let end = said[start..].find('"').expect("closing quote") + start;
    said[start..end].to_string()
}

#[tokio::test]
async fn an_operation_past_the_time_limit_is_followed_with_its_handle_and_the_status_tool() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let dir = project(&config(&upstream.url(), 1), &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    let status = tools
        .iter()
        .find(|tool| tool.name == "operation_status")
        .expect("the status tool is listed when a tool is long-running");
    assert_eq!(
        status.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );

    let started = call(&client, "startJob", json!({})).await;
    let said = text(&started);
    assert!(
        said.contains("still Running") && said.contains("operation_status"),
        "{said}"
    );
    let handle = handle_in(&said);
    let polls_then = upstream.counters.polls.load(Ordering::SeqCst);

    // Asked again at once: the upstream asked for a second between polls, so the status
    // comes from the last look, and the upstream is not asked.
    let early = call(&client, "operation_status", json!({"handle": handle})).await;
    assert_ne!(early.is_error, Some(true), "{}", text(&early));
    let structured = early.structured_content.clone().expect("structured status");
    assert_eq!(structured["running"], true, "{structured}");
    assert_eq!(upstream.counters.polls.load(Ordering::SeqCst), polls_then);

    // Followed to the end: the final result is the tool's, read at resourceLocation.
    let mut handle = handle;
    let mut last = None;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let looked = call(&client, "operation_status", json!({"handle": handle})).await;
        match looked.structured_content.as_ref() {
            Some(status) if status.get("running") == Some(&json!(true)) => {
                handle = status["handle"].as_str().expect("handle").to_string();
            }
            _ => {
                last = Some(looked);
                break;
            }
        }
    }
    let last = last.expect("the operation ended within 12 s");
    assert_ne!(last.is_error, Some(true), "{}", text(&last));
    assert!(text(&last).contains("done"), "{}", text(&last));

    // A handle restmcp did not give, or an altered one, is refused without a request.
    let before = upstream.counters.polls.load(Ordering::SeqCst);
    let mut altered = handle.clone();
    altered.insert(altered.len() / 2, 'x');
    for forged in [altered.as_str(), "not-a-handle"] {
        let refused = call(&client, "operation_status", json!({"handle": forged})).await;
        assert_eq!(refused.is_error, Some(true));
        assert!(
            text(&refused).contains("Unknown operation handle"),
            "{}",
            text(&refused)
        );
    }
    assert_eq!(upstream.counters.polls.load(Ordering::SeqCst), before);

    // An operation the upstream says failed is an error result with its reason.
    let failed = call(&client, "startDoomed", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert!(
        text(&failed).contains("\"Failed\"") && text(&failed).contains("out of quota"),
        "{}",
        text(&failed)
    );
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_marked_put_is_followed_from_its_201_and_read_at_its_original_url() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let dir = project(&config(&upstream.url(), 10), &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let put = call(&client, "putThing", json!({})).await;
    assert_ne!(put.is_error, Some(true), "{}", text(&put));
    let body = put.structured_content.clone().expect("structured");
    assert_eq!(body["provisioningState"], "Succeeded", "{body}");
    assert_eq!(body["size"], "large", "{body}");
    client.cancel().await.expect("close");
}

/// One stateless 2026-07-28 request; `tasks`: the request declares the Tasks extension.
async fn rpc(url: &str, method: &str, params: Value, tasks: bool) -> Value {
    let mut params = params;
    let extensions = if tasks {
        json!({"io.modelcontextprotocol/tasks": {}})
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
    });
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
    {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = request
        .body(body.to_string())
        .send()
        .await
        .expect("POST")
        .text()
        .await
        .expect("answer");
    // A JSON answer, or one SSE event carrying it.
    let json = answer
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(&answer);
    serde_json::from_str(json).unwrap_or_else(|_| panic!("not JSON: {answer}"))
}

#[tokio::test]
async fn a_client_that_takes_tasks_gets_one_and_follows_or_cancels_it() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let dir = project(&config(&upstream.url(), 20), &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let url = binary.url.as_str();

    let created = rpc(
        url,
        "tools/call",
        json!({"name": "startJob", "arguments": {}}),
        true,
    )
    .await;
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    assert_eq!(task["status"], "working", "{created}");
    assert!(
        task["ttlMs"].as_u64().is_some_and(|ttl| ttl > 0),
        "{created}"
    );
    assert!(task.get("result").is_none() && task.get("requestState").is_none());
    let id = task["taskId"].as_str().expect("taskId").to_string();
    // Made at once: the upstream's status was not asked yet.
    assert_eq!(upstream.counters.polls.load(Ordering::SeqCst), 0);

    let mut finished = None;
    for _ in 0..30 {
        let got = rpc(url, "tasks/get", json!({"taskId": id}), true).await;
        let state = got["result"].clone();
        assert_eq!(state["taskId"], id.as_str(), "{got}");
        if state["status"] != "working" {
            finished = Some(state);
            break;
        }
        assert!(
            state["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("Running") || m.contains("accepted")),
            "{got}"
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let finished = finished.expect("the task completed within 12 s");
    assert_eq!(finished["status"], "completed", "{finished}");
    assert_eq!(finished["result"]["isError"], false, "{finished}");
    assert!(
        finished["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("done"))
    );

    // Unknown (or altered) task ids are -32602; the methods need the extension (-32021).
    let unknown = rpc(url, "tasks/get", json!({"taskId": "no-such-task"}), true).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let undeclared = rpc(url, "tasks/get", json!({"taskId": id}), false).await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    // Without the extension, the same call waits for its result as before.
    let waited = rpc(
        url,
        "tools/call",
        json!({"name": "startJob", "arguments": {}}),
        false,
    )
    .await;
    assert!(
        waited["result"]
            .get("resultType")
            .is_none_or(|t| t == "complete"),
        "{waited}"
    );
    assert!(
        waited["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("done")),
        "{waited}"
    );

    // Cancelled: acknowledged with an empty result, and the task says so from then on.
    let created = rpc(
        url,
        "tools/call",
        json!({"name": "startJob", "arguments": {}}),
        true,
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_string();
    let ack = rpc(url, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let got = rpc(url, "tasks/get", json!({"taskId": id}), true).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let again = rpc(url, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(
        again["result"],
        json!({"resultType": "complete"}),
        "{again}"
    );
}

#[tokio::test]
async fn a_session_that_did_not_declare_tasks_gets_one_for_a_call_that_declares_them() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let dir = project(&config(&upstream.url(), 20), &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let url = binary.url.as_str();
    let session = crate::bad_input::open_session(url, "2025-11-25").await;
    let send = |body: Value| {
        reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session.as_str())
            .body(body.to_string())
            .send()
    };
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .expect("initialized");
    let call = |id: u32, tasks: bool| {
        let mut params = json!({"name": "startJob", "arguments": {}});
        if tasks {
            params["_meta"] = json!({"io.modelcontextprotocol/clientCapabilities":
                {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let answer = send(call(2, true))
        .await
        .expect("POST")
        .text()
        .await
        .expect("text");
    let data = answer
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(&answer);
    let answered: Value = serde_json::from_str(data).expect("JSON");
    assert_eq!(answered["result"]["resultType"], "task", "{answered}");
    assert_eq!(upstream.counters.polls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn in_search_mode_the_status_tool_is_reached_through_call_tool() {
    restmcp::http_client::install_crypto_provider();
    let upstream = crate::upstream::start().await;
    let config = config(&upstream.url(), 1).replace(
        "timeout_seconds = 1\n",
        "timeout_seconds = 1\ndiscovery = \"search\"\n",
    );
    let dir = project(&config, &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let started = call(&client, "call_tool", json!({"name": "startJob"})).await;
    let handle = handle_in(&text(&started));
    let looked = call(
        &client,
        "call_tool",
        json!({"name": "operation_status", "arguments": {"handle": handle}}),
    )
    .await;
    assert_ne!(looked.is_error, Some(true), "{}", text(&looked));
    let status = looked
        .structured_content
        .clone()
        .expect("structured status");
    assert_eq!(status["running"], true, "{status}");
    client.cancel().await.expect("close");
}
