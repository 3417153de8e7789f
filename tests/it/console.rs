//! The console (`/console`) through the real binary, against the in-process echo upstream
//! that counts what reaches it: the page and its headers, the API behind the inbound token,
//! the overview, a tool as a client sees it with its provenance, a call tried (its request
//! shown with the secret redacted), a confirmation accepted and declined (nothing sent on a
//! decline), the live call feed, the refusals of cross-site and non-JSON requests, and the
//! console turned off. tests/console/ drives the same page in headless Chromium.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;

const TOKEN: &str = "console-test-token-0123456789";

/// The value of a hidden argument read from the environment: sent, never shown.
const TENANT_SECRET: &str = "tenant-9f2c41-secret";

fn config(upstream: &str, console: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n{console}\
         [server.auth]\ntokens_env = [\"RESTMCP_TEST_INBOUND\"]\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n\
         overlays = [\"console.overlay.yaml\"]\nconfirm = \"writes\"\n\
         [reload]\nenabled = false\n"
    )
}

const OVERLAY: &str = "tools:\n  updateItem: {arguments: {id: {value_env: ECHO_TENANT_SECRET}}}\n  \
     getItem: {description: \"Reads one item, as the console shows.\"}\n";

fn client() -> reqwest::Client {
    restmcp::http_client::install_crypto_provider();
    reqwest::Client::new()
}

async fn get(url: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = client().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("GET")
}

async fn post(url: &str, body: &Value) -> Value {
    let response = client()
        .post(url)
        .bearer_auth(TOKEN)
        .json(body)
        .send()
        .await
        .expect("POST");
    let status = response.status();
    let answer: Value = response.json().await.expect("JSON");
    assert_eq!(status, 200, "{answer}");
    answer
}

/// The echo upstream and restmcp on it, with the inbound token and `server_extra` in
/// `[server]`; the last is the listener's base URL.
async fn start(
    server_extra: &str,
) -> (crate::upstream::Upstream, tempfile::TempDir, Binary, String) {
    let upstream = crate::upstream::start().await;
    let dir = project(
        &config(&upstream.url(), server_extra),
        &[("console.overlay.yaml", OVERLAY)],
    );
    let env = [
        ("RESTMCP_TEST_INBOUND", TOKEN),
        ("ECHO_TENANT_SECRET", TENANT_SECRET),
    ];
    let binary = Binary::start_with(dir.path(), &env).await;
    let base = binary.url.trim_end_matches("/mcp").to_string();
    (upstream, dir, binary, base)
}

#[tokio::test]
async fn the_console_shows_the_apis_and_tools_and_tries_calls_behind_the_token() {
    let (upstream, _dir, _binary, base) = start("").await;
    let sent = || upstream.counters.all.load(Ordering::SeqCst);

    // The page is open (it holds no data), with a policy that keeps it to its own origin.
    let page = get(&format!("{base}/console"), None).await;
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap_or_default();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert!(
        page.headers()["content-type"]
            .to_str()
            .is_ok_and(|t| t.starts_with("text/html"))
    );

    // The API is behind the MCP endpoint's token.
    let refused = get(&format!("{base}/console/api/overview"), None).await;
    assert_eq!(refused.status(), 401);
    let wrong = get(
        &format!("{base}/console/api/overview"),
        Some("not-the-token"),
    )
    .await;
    assert_eq!(wrong.status(), 401);
    let overview: Value = get(&format!("{base}/console/api/overview"), Some(TOKEN))
        .await
        .json()
        .await
        .expect("overview");
    assert_eq!(overview["auth"], "token");
    assert_eq!(overview["ready"], true);
    let echo = &overview["apis"][0];
    assert_eq!(echo["name"], "echo", "{overview}");
    assert_eq!(echo["discovery"], "all");
    assert!(
        echo["discovery_reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("auto: "))
    );
    assert!(echo["tokens"]["all"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(echo["mock"], false);
    assert_eq!(echo["base_url"], upstream.url());

    // Search, and one tool with the overlay named as the source of its description.
    let found: Value = get(
        &format!("{base}/console/api/tools?q=item%20post"),
        Some(TOKEN),
    )
    .await
    .json()
    .await
    .expect("tools");
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["tools"][0]["name"], "updateItem");
    assert_eq!(found["tools"][0]["confirm"], true);
    let tool: Value = get(
        &format!("{base}/console/api/tools/getItem?revision=2025-03-26"),
        Some(TOKEN),
    )
    .await
    .json()
    .await
    .expect("tool");
    assert_eq!(
        tool["definition"]["description"],
        "Reads one item, as the console shows."
    );
    assert!(
        tool["definition"].get("outputSchema").is_none(),
        "2025-03-26 listings have no outputSchema: {tool}"
    );
    assert!(
        tool["provenance"]["description"]
            .as_str()
            .is_some_and(|s| s.contains("console.overlay.yaml")),
        "{tool}"
    );
    assert!(
        tool["explain"]
            .as_str()
            .is_some_and(|t| t.contains("getItem"))
    );
    let missing = get(&format!("{base}/console/api/tools/getItme"), Some(TOKEN)).await;
    assert_eq!(missing.status(), 404);
    let said: Value = missing.json().await.expect("error");
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("did you mean \"getItem\""))
    );

    // A call tried from the page: the result, the request sent, the status.
    let before = sent();
    let tried = post(
        &format!("{base}/console/api/call"),
        &json!({"name": "getItem", "arguments": {"id": "7", "limit": 3}}),
    )
    .await;
    assert_eq!(sent(), before + 1);
    assert_eq!(tried["result"]["isError"], false, "{tried}");
    assert_eq!(tried["status"], 200);
    let request = &tried["request"];
    assert_eq!(request["method"], "GET");
    assert!(
        request["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/echo/items/7?limit=3")),
        "{request}"
    );
    assert_eq!(request["on_the_wire"], true);
    // The inbound token was not forwarded, and no header value it could be is shown.
    assert!(!tried.to_string().contains(TOKEN), "{tried}");

    // A write that needs confirmation: asked first, nothing sent; declined, nothing sent.
    let arguments = json!({"id__path": 7, "name": "Rex"});
    let asked = post(
        &format!("{base}/console/api/call"),
        &json!({"name": "updateItem", "arguments": arguments}),
    )
    .await;
    assert_eq!(sent(), before + 1, "asking sends nothing");
    let question = asked["ask"]["message"].as_str().expect("a question");
    assert!(
        question.contains("POST ") && question.contains("/echo/items/7"),
        "{question}"
    );
    assert!(!asked.to_string().contains(TENANT_SECRET), "{asked}");
    let state = asked["ask"]["state"].as_str().expect("state");
    let declined = post(
        &format!("{base}/console/api/call"),
        &json!({"name": "updateItem", "arguments": arguments, "state": state, "answer": "decline"}),
    )
    .await;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert_eq!(sent(), before + 1, "a declined call sends nothing");

    // Accepted: sent once, and the hidden argument's value is redacted in what is shown.
    let feed = tokio::spawn(read_feed(base.clone(), "updateItem"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = post(
        &format!("{base}/console/api/call"),
        &json!({"name": "updateItem", "arguments": arguments}),
    )
    .await;
    let state = asked["ask"]["state"].as_str().expect("state");
    let accepted = post(
        &format!("{base}/console/api/call"),
        &json!({"name": "updateItem", "arguments": arguments, "state": state, "answer": "accept"}),
    )
    .await;
    assert_eq!(sent(), before + 2, "{accepted}");
    assert_eq!(accepted["result"]["isError"], false, "{accepted}");
    let body = accepted["request"]["body"].as_str().expect("a body");
    assert!(
        body.contains("Rex") && !body.contains(TENANT_SECRET),
        "{body}"
    );
    assert!(!accepted["request"].to_string().contains(TENANT_SECRET));

    // The call appeared in the live feed, with its caller's pseudonym and no arguments.
    let event = tokio::time::timeout(Duration::from_secs(10), feed)
        .await
        .expect("the feed told the call")
        .expect("feed task");
    assert_eq!(event["outcome"], "ok", "{event}");
    assert_eq!(event["status"], 200);
    assert!(
        event["caller"]
            .as_str()
            .is_some_and(|c| c.starts_with("tok:")),
        "{event}"
    );
    assert!(
        !event.to_string().contains("Rex"),
        "no argument value: {event}"
    );
    // A page that reconnects having seen that call gets only later ones.
    let seen = event["id"].as_u64().expect("an event id");
    let reconnect = tokio::spawn({
        let base = base.clone();
        async move { read_feed_after(&base, "getItem", Some(seen)).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    post(
        &format!("{base}/console/api/call"),
        &json!({"name": "getItem", "arguments": {"id": "8"}}),
    )
    .await;
    let later = tokio::time::timeout(Duration::from_secs(10), reconnect)
        .await
        .expect("the later call")
        .expect("feed task");
    assert!(later["id"].as_u64().is_some_and(|id| id > seen), "{later}");

    // The counters behind the charts: calls per tool, durations since a page watched.
    let stats: Value = get(&format!("{base}/console/api/stats"), Some(TOKEN))
        .await
        .json()
        .await
        .expect("stats");
    let update = &stats["tools"]["updateItem"];
    assert!(update["calls"].as_u64().is_some_and(|n| n >= 2), "{stats}");
    let observed: u64 = update["counts"]
        .as_array()
        .expect("counts")
        .iter()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(
        observed, 1,
        "the accepted call, made while the feed was watched: {stats}"
    );

    // Cross-site and non-JSON requests are refused before anything runs.
    let cross = client()
        .post(format!("{base}/console/api/call"))
        .bearer_auth(TOKEN)
        .header("sec-fetch-site", "cross-site")
        .json(&json!({"name": "getItem", "arguments": {"id": "1"}}))
        .send()
        .await
        .expect("POST");
    assert_eq!(cross.status(), 403);
    let form = client()
        .post(format!("{base}/console/api/call"))
        .bearer_auth(TOKEN)
        .header("content-type", "text/plain")
        .body(r#"{"name": "getItem", "arguments": {"id": "1"}}"#)
        .send()
        .await
        .expect("POST");
    assert_eq!(form.status(), 415);
    assert_eq!(sent(), before + 3, "the refused requests sent nothing");
}

/// Reads the call feed until a call of `tool` arrives, and returns it with its event id.
async fn read_feed(base: String, tool: &'static str) -> Value {
    read_feed_after(&base, tool, None).await
}

/// [`read_feed`] for a page that reconnects having seen call `after`.
async fn read_feed_after(base: &str, tool: &str, after: Option<u64>) -> Value {
    let mut request = client()
        .get(format!("{base}/console/api/calls"))
        .bearer_auth(TOKEN);
    if let Some(after) = after {
        request = request.header("last-event-id", after.to_string());
    }
    let mut response = request.send().await.expect("GET");
    assert_eq!(response.status(), 200);
    let mut text = String::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        text.push_str(&String::from_utf8_lossy(&chunk));
        for block in text.split("\n\n") {
            let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) else {
                continue;
            };
            let id = block.lines().find_map(|l| l.strip_prefix("id: "));
            if let Ok(mut event) = serde_json::from_str::<Value>(data)
                && event["tool"] == tool
            {
                event["id"] = json!(id.and_then(|id| id.parse::<u64>().ok()));
                return event;
            }
        }
    }
    panic!("the feed ended without a call of {tool}: {text}");
}

#[tokio::test]
async fn the_console_can_be_turned_off() {
    let (_upstream, _dir, _binary, base) = start("console = false\n").await;
    // Like any path restmcp does not serve: 401 without the token, 404 with it.
    assert_eq!(get(&format!("{base}/console"), None).await.status(), 401);
    assert_eq!(
        get(&format!("{base}/console"), Some(TOKEN)).await.status(),
        404
    );
    let api = get(&format!("{base}/console/api/overview"), Some(TOKEN)).await;
    assert_eq!(api.status(), 404);
}

#[tokio::test]
async fn the_overview_says_how_the_last_reload_went_and_what_it_kept() {
    let upstream = crate::upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[apis.echo]\nspec = \"specs/echo.yaml\"\n\
         base_url = \"{}\"\n[reload]\ninterval_ms = 100\n",
        upstream.url()
    );
    let dir = project(&config, &[]);
    let binary = Binary::start(dir.path()).await;
    let base = binary.url.trim_end_matches("/mcp").to_string();
    let overview = || async {
        get(&format!("{base}/console/api/overview"), None)
            .await
            .json::<Value>()
            .await
            .expect("overview")
    };
    assert!(
        binary
            .log()
            .contains(&format!("console               {base}/console")),
        "the banner says where the console is: {}",
        binary.log()
    );
    let first = overview().await;
    assert_eq!(first["auth"], "none");
    assert!(first["reload"].is_null(), "no reload yet: {first}");
    let tools = first["tools"].as_u64().expect("tools");

    // Right after the banner: the start waits for the watcher's first look, so this is a
    // change it sees.
    std::fs::write(
        dir.path().join("specs/echo.yaml"),
        "openapi: 3.0.3\npaths: [",
    )
    .expect("break");
    assert!(
        binary
            .wait_for_log("still serving the previous", Duration::from_secs(10))
            .await,
        "{}",
        binary.log()
    );
    let after = overview().await;
    let reload = &after["reload"];
    assert_eq!(reload["ok"], false, "{after}");
    assert!(
        reload["error"]
            .as_str()
            .is_some_and(|e| e.contains("echo.yaml")),
        "{after}"
    );
    assert_eq!(reload["tools"], tools, "the tools kept: {after}");
    assert_eq!(after["tools"], tools);
}

#[tokio::test]
async fn the_console_lists_the_resources_and_prompts_made_of_tools() {
    let upstream = crate::upstream::start().await;
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[apis.echo]\nspec = \"specs/echo.yaml\"\n\
         base_url = \"{}\"\noverlays = [\"resources.overlay.yaml\"]\n\
         [reload]\nenabled = false\n",
        upstream.url()
    );
    let overlay = "tools:\n  getItem:\n    resource: {uri: \"echo://items/{id}\", name: item}\n";
    let dir = project(&config, &[("resources.overlay.yaml", overlay)]);
    let binary = Binary::start(dir.path()).await;
    let base = binary.url.trim_end_matches("/mcp").to_string();
    let surface: Value = get(&format!("{base}/console/api/surface"), None)
        .await
        .json()
        .await
        .expect("surface");
    let resource = &surface["resources"][0];
    assert_eq!(resource["uri"], "echo://items/{id}", "{surface}");
    assert_eq!(resource["template"], true);
    assert_eq!(resource["tool"], "getItem");
    assert_eq!(resource["variables"][0]["place"], "path");
}

#[tokio::test]
async fn with_console_arguments_the_feed_shows_argument_values_redacted() {
    let (_upstream, _dir, _binary, base) = start("console_arguments = true\n").await;
    let overview: Value = get(&format!("{base}/console/api/overview"), Some(TOKEN))
        .await
        .json()
        .await
        .expect("overview");
    assert_eq!(overview["show_arguments"], true);
    let feed = tokio::spawn(read_feed(base.clone(), "getItem"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let secret_shaped = format!("x{TENANT_SECRET}");
    post(
        &format!("{base}/console/api/call"),
        &json!({"name": "getItem", "arguments": {"id": "7", "X-Trace": secret_shaped}}),
    )
    .await;
    let event = tokio::time::timeout(Duration::from_secs(10), feed)
        .await
        .expect("the feed told the call")
        .expect("feed task");
    assert_eq!(event["arguments"]["id"], "7", "{event}");
    // A value restmcp holds as a secret is redacted wherever it appears.
    assert!(!event.to_string().contains(TENANT_SECRET), "{event}");
}
