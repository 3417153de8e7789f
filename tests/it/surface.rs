//! The MCP surface besides tools, end to end through the real binary: resources and
//! templates read through their tools, subscriptions polled conditionally, prompts with
//! embedded resources and operation results, completions from enums and list tools, and
//! the 2026-07-28 shapes (cache hints, not found, `input_required` for a prompt). The
//! fixture is tests/fixtures/surface/ (a spec and an overlay); the upstream is a small
//! axum app here whose notes carry an ETag. The official SDKs and a FastAPI upstream prove
//! the same in tests/surface/.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
    Reference, ResourceContents, ResourceUpdatedNotificationParam,
};
use rmcp::service::NotificationContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::reload::Binary;
use crate::support::fixture;

/// A PNG's first bytes: enough for a media type test.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

#[derive(Default)]
struct Shop {
    /// The notes' version: its ETag is `"v{n}"`.
    notes: AtomicUsize,
    reads: AtomicUsize,
    conditional: AtomicUsize,
    not_modified: AtomicUsize,
}

fn items() -> Vec<Value> {
    vec![
        json!({"id": 1, "name": "hammer", "kind": "tool"}),
        json!({"id": 2, "name": "ball", "kind": "toy"}),
        json!({"id": 12, "name": "saw", "kind": "tool"}),
    ]
}

async fn list(Query(query): Query<std::collections::HashMap<String, String>>) -> impl IntoResponse {
    let kind = query.get("kind");
    let listed: Vec<Value> = items()
        .into_iter()
        .filter(|item| kind.is_none_or(|kind| item["kind"] == **kind))
        .collect();
    axum::Json(listed)
}

async fn item(Path(id): Path<u64>) -> axum::response::Response {
    match items().into_iter().find(|item| item["id"] == id) {
        Some(item) => axum::Json(item).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn notes(State(shop): State<Arc<Shop>>, headers: HeaderMap) -> axum::response::Response {
    shop.reads.fetch_add(1, Ordering::SeqCst);
    let etag = format!("\"v{}\"", shop.notes.load(Ordering::SeqCst));
    if let Some(asked) = headers.get(header::IF_NONE_MATCH) {
        shop.conditional.fetch_add(1, Ordering::SeqCst);
        if asked.to_str().ok() == Some(etag.as_str()) {
            shop.not_modified.fetch_add(1, Ordering::SeqCst);
            return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
        }
    }
    let text = format!("notes, version {}", shop.notes.load(Ordering::SeqCst));
    (
        [
            (header::ETAG, etag),
            (header::CACHE_CONTROL, "max-age=30".to_string()),
            (
                header::CONTENT_TYPE,
                "text/plain; charset=utf-8".to_string(),
            ),
        ],
        text,
    )
        .into_response()
}

/// The shop upstream on loopback, and its counters.
async fn shop() -> (String, Arc<Shop>) {
    let shop = Arc::new(Shop::default());
    let app = axum::Router::new()
        .route("/items", axum::routing::get(list))
        .route("/items/{id}", axum::routing::get(item))
        .route(
            "/logo",
            axum::routing::get(|| async { ([(header::CONTENT_TYPE, "image/png")], PNG) }),
        )
        .route("/notes", axum::routing::get(notes))
        .with_state(shop.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), shop)
}

/// A project serving the fixture against `upstream`, with `extra` config.
fn project(upstream: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["api.yaml", "overlay.yaml"] {
        std::fs::copy(fixture(&format!("surface/{file}")), dir.path().join(file)).expect("copy");
    }
    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\n[reload]\nenabled = false\n\n\
         [resources]\npoll_seconds = 1\n\n\
         [apis.shop]\nspec = \"api.yaml\"\nbase_url = \"{upstream}\"\noverlays = [\"overlay.yaml\"]\n{extra}"
    );
    std::fs::write(dir.path().join("config.toml"), config).expect("config");
    dir
}

#[derive(Clone, Default)]
struct Updates(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().expect("lock").push(params.uri);
    }
}

fn text_of(contents: &ResourceContents) -> (&str, Option<&str>) {
    match contents {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => (text.as_str(), mime_type.as_deref()),
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn resources_templates_prompts_and_completions_through_the_rust_sdk() {
    restmcp::http_client::install_crypto_provider();
    let (upstream, _shop) = shop().await;
    let dir = project(&upstream, "");
    let binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let capabilities = client.peer_info().expect("info").capabilities.clone();
    assert!(
        capabilities
            .resources
            .is_some_and(|r| r.subscribe == Some(true))
    );
    assert!(capabilities.prompts.is_some() && capabilities.completions.is_some());

    let resources = client.list_resources(None).await.expect("list");
    let uris: Vec<&str> = resources.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["shop://logo", "shop://notes"]);
    let templates = client
        .list_resource_templates(None)
        .await
        .expect("templates");
    let templates: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    assert_eq!(
        templates,
        ["shop://items{?kind}", "shop://items/{id}{?fields}"]
    );

    let read = |uri: &str| client.read_resource(ReadResourceRequestParams::new(uri));
    let item = read("shop://items/12").await.expect("read item");
    let (text, mime) = text_of(&item.contents[0]);
    assert_eq!(mime, Some("application/json"));
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("JSON")["name"],
        "saw"
    );
    let toys = read("shop://items?kind=toy").await.expect("read list");
    assert!(text_of(&toys.contents[0]).0.contains("ball"));
    let notes = read("shop://notes").await.expect("read notes");
    assert_eq!(
        text_of(&notes.contents[0]),
        ("notes, version 0", Some("text/plain"))
    );
    let logo = read("shop://logo").await.expect("read logo");
    match &logo.contents[0] {
        ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some("image/png"));
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64");
            assert_eq!(bytes, PNG);
        }
        other => panic!("the logo is not a blob: {other:?}"),
    }
    for (uri, code) in [
        ("shop://nothing", -32002),
        ("shop://items/99", -32002),
        ("shop://items/x", -32602),
    ] {
        let error = read(uri).await.expect_err(uri);
        let text = format!("{error:?}");
        assert!(text.contains(&code.to_string()), "{uri}: {text}");
    }

    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("describe_item").with_arguments(
                json!({"id": "2", "tone": "casual"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("prompts/get");
    let messages = serde_json::to_value(&prompt.messages).expect("JSON");
    assert_eq!(
        messages[0]["content"]["text"],
        "Describe item 2 in a casual tone."
    );
    assert_eq!(messages[1]["content"]["type"], "resource");
    assert_eq!(messages[1]["content"]["resource"]["uri"], "shop://items/2");
    assert!(
        messages[1]["content"]["resource"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("ball"))
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"]["type"], "image");
    assert_eq!(messages[2]["content"]["mimeType"], "image/png");
    let missing = client
        .get_prompt(GetPromptRequestParams::new("describe_item"))
        .await
        .expect_err("a required argument is missing");
    assert!(format!("{missing:?}").contains("-32602"), "{missing:?}");
    let wrong = client
        .get_prompt(
            GetPromptRequestParams::new("describe_item").with_arguments(
                json!({"id": "2", "tone": "angry"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect_err("a value its enum does not list");
    assert!(format!("{wrong:?}").contains("formal, casual"), "{wrong:?}");

    let complete = |reference: Reference, name: &str, value: &str, context: Option<Value>| {
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(name, value));
        if let Some(context) = context {
            params.context = serde_json::from_value(json!({ "arguments": context })).ok();
        }
        client.complete(params)
    };
    let tones = complete(Reference::for_prompt("describe_item"), "tone", "f", None)
        .await
        .expect("complete tone");
    assert_eq!(tones.completion.values, ["formal"]);
    let kinds = complete(
        Reference::for_resource("shop://items{?kind}"),
        "kind",
        "",
        None,
    )
    .await
    .expect("complete kind");
    assert_eq!(kinds.completion.values, ["tool", "toy"]);
    let ids = complete(
        Reference::for_resource("shop://items/{id}{?fields}"),
        "id",
        "1",
        Some(json!({"kind": "tool"})),
    )
    .await
    .expect("complete id");
    assert_eq!(
        ids.completion.values,
        ["1", "12"],
        "tools only, starting with 1"
    );
    assert_eq!(ids.completion.total, Some(2));
    let _ = client.cancel().await;
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the initialize-based generations' way
async fn a_subscriber_hears_of_changes_only_and_polls_are_conditional() {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    restmcp::http_client::install_crypto_provider();
    let (upstream, shop) = shop().await;
    let dir = project(&upstream, "");
    let binary = Binary::start(dir.path()).await;
    let updates = Updates::default();
    let client = updates
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize");
    client
        .subscribe(SubscribeRequestParams::new("shop://notes"))
        .await
        .expect("subscribe");
    let unknown = client
        .subscribe(SubscribeRequestParams::new("shop://nothing"))
        .await
        .expect_err("an unknown URI");
    assert!(format!("{unknown:?}").contains("-32002"));
    // Unchanged for a few polls: nothing is told, and the polls ask conditionally.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert!(updates.0.lock().expect("lock").is_empty());
    assert!(shop.conditional.load(Ordering::SeqCst) >= 2);
    assert_eq!(
        shop.not_modified.load(Ordering::SeqCst),
        shop.conditional.load(Ordering::SeqCst)
    );
    shop.notes.fetch_add(1, Ordering::SeqCst);
    let told = async {
        while updates.0.lock().expect("lock").is_empty() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), told)
        .await
        .expect("notifications/resources/updated after the change");
    assert_eq!(*updates.0.lock().expect("lock"), ["shop://notes"]);
    client
        .unsubscribe(UnsubscribeRequestParams::new("shop://notes"))
        .await
        .expect("unsubscribe");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let reads = shop.reads.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(shop.reads.load(Ordering::SeqCst), reads, "polling stopped");
    let _ = client.cancel().await;
}

/// One 2026-07-28 request without a session: its JSON-RPC answer.
async fn stateless(url: &str, method: &str, params: Value, headers: &[(&str, &str)]) -> Value {
    crate::support::stateless_request(url, method, params, headers).await
}

#[tokio::test]
async fn the_2026_07_28_generation_gets_cache_hints_not_found_with_its_uri_and_questions() {
    let (upstream, _shop) = shop().await;
    let dir = project(&upstream, "forward_headers = [\"X-Tenant\"]\n");
    restmcp::http_client::install_crypto_provider();
    let binary = Binary::start(dir.path()).await;
    let url = binary.url.clone();
    let read = stateless(&url, "resources/read", json!({"uri": "shop://notes"}), &[]).await;
    assert_eq!(read["result"]["resultType"], "complete", "{read}");
    assert_eq!(read["result"]["ttlMs"], 30_000, "from max-age=30: {read}");
    assert_eq!(read["result"]["cacheScope"], "public");
    let tenant = stateless(
        &url,
        "resources/read",
        json!({"uri": "shop://notes"}),
        &[("x-tenant", "acme")],
    )
    .await;
    assert_eq!(tenant["result"]["cacheScope"], "private", "{tenant}");
    let missing = stateless(&url, "resources/read", json!({"uri": "shop://nope"}), &[]).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["data"]["uri"], "shop://nope");

    let asked = stateless(&url, "prompts/get", json!({"name": "describe_item"}), &[]).await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let question = &result["inputRequests"]["arguments"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert_eq!(
        question["params"]["requestedSchema"]["required"],
        json!(["id"])
    );
    let state = result["requestState"].as_str().expect("state").to_string();
    let answer = json!({"arguments": {"action": "accept", "content": {"id": "1"}}});
    let done = stateless(
        &url,
        "prompts/get",
        json!({"name": "describe_item", "inputResponses": answer, "requestState": state}),
        &[],
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(
        done["result"]["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Describe item 1 "))
    );
    let tampered = stateless(
        &url,
        "prompts/get",
        json!({"name": "describe_item", "inputResponses": answer, "requestState": format!("x{state}")}),
        &[],
    )
    .await;
    assert_eq!(tampered["error"]["code"], -32602, "{tampered}");
}

#[tokio::test]
async fn a_call_tells_a_client_that_asked_what_it_does_as_it_goes() {
    let (upstream, _shop) = shop().await;
    let dir = project(&upstream, "");
    restmcp::http_client::install_crypto_provider();
    let binary = Binary::start(dir.path()).await;
    let params = json!({"name": "getItem", "arguments": {"id": 1}});
    let quiet = stateless(&binary.url, "tools/call", params.clone(), &[]).await;
    assert_eq!(quiet["result"]["isError"], false);
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/logLevel": "debug"});
    let text = crate::support::stateless_text(&binary.url, "tools/call", params, &[]).await;
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect();
    let logged: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(logged.len() >= 3, "{text}");
    assert!(
        logged[0]["params"]["data"]
            .as_str()
            .is_some_and(|t| t.contains(&format!("GET {upstream}/items/1"))),
        "{text}"
    );
    assert!(logged.iter().any(|m| {
        m["params"]["data"]
            .as_str()
            .is_some_and(|t| t.contains("answered 200"))
    }));
    let answer = messages.last().expect("answer");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["isError"], false);
}

/// What loading the fixture with `overlay` (instead of its own) and `extra` config says.
async fn load_error(overlay: &str, extra: &str) -> String {
    let dir = project("http://127.0.0.1:9", extra);
    std::fs::write(dir.path().join("overlay.yaml"), overlay).expect("overlay");
    let config = restmcp::config::Config::load(
        &dir.path().join("config.toml"),
        &restmcp::config::Overrides::default(),
    )
    .expect("config");
    match restmcp::load::load(&config).await {
        Ok(_) => String::new(),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn resources_and_prompts_that_cannot_be_served_are_refused_naming_where() {
    let cases = [
        (
            "tools: {addItem: {resource: {uri: 'shop://new'}}}",
            "",
            "overlay.yaml#/tools/addItem/resource: only a GET operation can be a resource",
        ),
        (
            "tools: {getItem: {resource: {uri: 'shop://items/{itemId}'}}}",
            "",
            "variable \"itemId\" is not a path or query argument of tool \"getItem\" (it has: id, fields)",
        ),
        (
            "tools: {getItem: {resource: {uri: 'shop://items'}}}",
            "",
            "required argument \"id\" of tool \"getItem\" is not a variable of the URI",
        ),
        (
            "tools: {getItem: {resource: {uri: 'items/{id}'}}}",
            "",
            "#/tools/getItem/resource/uri: \"items/{id}\" is not an absolute URI",
        ),
        (
            "tools: {getLogo: {resource: {uri: 'shop://x'}}, getNotes: {resource: {uri: 'shop://x'}}}",
            "",
            "resource URI \"shop://x\" is also declared at",
        ),
        (
            "prompts: {p: {messages: [{text: 'Hi {{who}}'}]}}",
            "",
            "overlay.yaml#/prompts/p/messages/0: {{who}} names no argument of the prompt",
        ),
        (
            "prompts: {p: {messages: [{operation: {tool: addItem}}]}}",
            "",
            "tool \"addItem\" is POST /items: prompts and completions only call tools that read",
        ),
        (
            "prompts: {p: {messages: [{text: a, resource: 'shop://notes'}]}}",
            "",
            "a message has exactly one of `text`, `resource` and `operation`",
        ),
        (
            "",
            "\n[prompts.p]\nmessages = [{ operation = { tool = \"nothing\" } }]\n",
            "config prompts.p/messages/0/operation: no tool is named \"nothing\"",
        ),
    ];
    for (overlay, extra, expected) in cases {
        let error = load_error(overlay, extra).await;
        assert!(
            error.contains(expected),
            "{overlay}{extra}\n  gave: {error}"
        );
    }
}

/// A client whose user answers every form with `answer` (and accepts confirmations).
#[derive(Clone)]
struct Answering {
    answer: Value,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Answering {
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let request = serde_json::to_value(&request).unwrap_or_default();
        self.asked.lock().expect("lock").push(request);
        let mut result = rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept);
        result.content = Some(self.answer.clone());
        Ok(result)
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("answering-user", "1"),
        )
    }
}

#[tokio::test]
async fn an_argument_the_model_left_out_is_asked_of_the_user() {
    restmcp::http_client::install_crypto_provider();
    let (upstream, _shop) = shop().await;
    let overlay = std::fs::read_to_string(fixture("surface/overlay.yaml")).expect("overlay");
    let dir = project(&upstream, "confirm = [\"listItems\"]\n");
    // `kind` of listItems is the user's to choose on every call.
    let overlay = overlay.replace(
        "  listItems:\n",
        "  listItems:\n    arguments: {kind: {ask: true}}\n",
    );
    std::fs::write(dir.path().join("overlay.yaml"), overlay).expect("overlay");
    let binary = Binary::start(dir.path()).await;

    // A session: elicitation/create with the form, then the call with the answer.
    let answering = Answering {
        answer: json!({"id": 12, "kind": "toy"}),
        asked: Arc::default(),
    };
    let client = answering
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize");
    let result = crate::support::call(&client, "getItem", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        result.structured_content.as_ref().expect("body")["name"],
        "saw"
    );
    let asked = answering.asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 1);
    let form = &asked[0]["requestedSchema"];
    assert_eq!(form["required"], json!(["id"]), "{form}");
    assert_eq!(form["properties"]["id"]["type"], "integer");
    // An `ask` argument with its enum, after which the confirmation: two questions.
    let result = crate::support::call(&client, "listItems", json!({"kind": "tool"})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let listed = result.structured_content.expect("body");
    assert!(
        listed.to_string().contains("ball"),
        "the user chose toys: {listed}"
    );
    let asked = answering.asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 3, "the kind, then the confirmation: {asked:?}");
    let kind = &asked[1]["requestedSchema"]["properties"]["kind"];
    assert_eq!(kind["enum"], json!(["tool", "toy"]));
    assert_eq!(kind["default"], "tool", "the model's value is the default");
    let _ = client.cancel().await;

    // 2026-07-28: the arguments round, then the confirmation round, then the answer.
    let url = binary.url.clone();
    let first =
        crate::support::stateless_call(&url, "listItems", json!({"arguments": {}}), &[]).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert!(result["inputRequests"]["arguments"].is_object(), "{first}");
    let state = result["requestState"].as_str().expect("state");
    let second = crate::support::stateless_call(
        &url,
        "listItems",
        json!({"arguments": {}, "requestState": state,
               "inputResponses": {"arguments": {"action": "accept", "content": {"kind": "toy"}}}}),
        &[],
    )
    .await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert!(result["inputRequests"]["confirm"].is_object(), "{second}");
    let state = result["requestState"].as_str().expect("state");
    let third = crate::support::stateless_call(
        &url,
        "listItems",
        json!({"arguments": {}, "requestState": state,
               "inputResponses": {"confirm": {"action": "accept", "content": {}}}}),
        &[],
    )
    .await;
    assert_eq!(third["result"]["isError"], false, "{third}");
    assert!(
        third["result"]["structuredContent"]
            .to_string()
            .contains("ball"),
        "{third}"
    );
    let declined = crate::support::stateless_call(
        &url,
        "listItems",
        json!({"arguments": {}, "requestState": first["result"]["requestState"],
               "inputResponses": {"arguments": {"action": "decline"}}}),
        &[],
    )
    .await;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
}

/// A client that counts the list changes it hears of.
#[derive(Clone, Default)]
struct ListChanges {
    resources: Arc<AtomicUsize>,
    prompts: Arc<AtomicUsize>,
}

impl ClientHandler for ListChanges {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.resources.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.prompts.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_reload_that_changes_resources_or_prompts_tells_connected_clients() {
    restmcp::http_client::install_crypto_provider();
    let (upstream, _shop) = shop().await;
    let dir = project(&upstream, "");
    let config = std::fs::read_to_string(dir.path().join("config.toml")).expect("config");
    let config = config.replace("[reload]\nenabled = false", "[reload]\ninterval_ms = 100");
    std::fs::write(dir.path().join("config.toml"), config).expect("config");
    let binary = Binary::start(dir.path()).await;
    let heard = ListChanges::default();
    let client = heard
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
        .await
        .expect("initialize");
    let overlay_path = dir.path().join("overlay.yaml");
    let overlay = std::fs::read_to_string(&overlay_path).expect("overlay");
    let wait_for = |count: Arc<AtomicUsize>, at_least: usize| async move {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while count.load(Ordering::SeqCst) < at_least && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        count.load(Ordering::SeqCst)
    };
    // The notes are no longer a resource: the resources changed, the prompts did not.
    std::fs::write(
        &overlay_path,
        overlay.replace(
            "  getNotes:\n    resource: {uri: \"shop://notes\", name: notes, title: Shop notes}\n",
            "",
        ),
    )
    .expect("edit");
    assert_eq!(
        wait_for(heard.resources.clone(), 1).await,
        1,
        "{}",
        binary.log()
    );
    let listed = client.list_resources(None).await.expect("list");
    assert!(listed.resources.iter().all(|r| r.uri != "shop://notes"));
    assert_eq!(heard.prompts.load(Ordering::SeqCst), 0);
    // A prompt's description changes: the prompts changed.
    std::fs::write(
        &overlay_path,
        overlay.replace("Describe one item.", "Describe one item of the shop."),
    )
    .expect("edit");
    assert_eq!(wait_for(heard.prompts.clone(), 1).await, 1);
    let _ = client.cancel().await;
}
