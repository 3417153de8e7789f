//! Hostile upstreams, against the real binary: an upstream that names
//! an operation's monitor on another origin does not make restmcp go there (nor carry the
//! user's credentials there); an upstream that echoes an issued token never gets it into a
//! result; and the idempotency store stays within its byte budget whatever a caller stores.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;

/// What one in-process server saw: each request's path and headers.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(String, HeaderMap)>>>);

impl Seen {
    fn paths(&self) -> Vec<String> {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .map(|(path, _)| path.clone())
            .collect()
    }

    fn headers_of(&self, path: &str) -> Option<HeaderMap> {
        self.0
            .lock()
            .expect("lock")
            .iter()
            .find(|(seen, _)| seen == path)
            .map(|(_, headers)| headers.clone())
    }
}

/// A server on 127.0.0.1:0 answering `app`; its origin.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let origin = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    origin
}

/// A status monitor that says the operation succeeded, recording who asked.
async fn monitor(seen: Seen) -> String {
    let app = Router::new()
        .route(
            "/monitor",
            get(|State(seen): State<Seen>, headers: HeaderMap| async move {
                seen.0
                    .lock()
                    .expect("lock")
                    .push(("/monitor".into(), headers));
                axum::Json(json!({"status": "Succeeded", "done": true}))
            }),
        )
        .with_state(seen);
    serve(app).await
}

/// The API's own origin (known once it listens) and the two other monitors'.
type Places = (Arc<Mutex<String>>, Arc<Vec<String>>);

const JOBS: &str = "openapi: 3.0.3
info: {title: jobs, version: '1'}
paths:
  /start/{where}:
    post:
      operationId: startJob
      parameters:
        - {name: where, in: path, required: true, schema: {type: string, enum: [home, listed, elsewhere]}}
      responses:
        '202': {description: accepted}
        '200': {description: the report, content: {application/json: {schema: {type: object}}}}
";

/// One stateless 2026-07-28 `tools/call`, with the incoming header `X-Tenant`.
async fn call(url: &str, name: &str, arguments: Value) -> Value {
    let params = json!({"arguments": arguments});
    let tenant = [("x-tenant", "tenant-of-the-user-7f3e")];
    crate::support::stateless_call(url, name, params, &tenant).await
}

#[tokio::test]
async fn an_operation_is_followed_only_where_the_operator_allows_and_credentials_stay_home() {
    let (home_seen, listed_seen, elsewhere_seen) =
        (Seen::default(), Seen::default(), Seen::default());
    let listed = monitor(listed_seen.clone()).await;
    let elsewhere = monitor(elsewhere_seen.clone()).await;
    // The API: each start answers 202 naming a monitor, on its own origin or another.
    let origins = Arc::new(Mutex::new(String::new()));
    let app = Router::new()
        .route(
            "/start/{where}",
            post(
                |State((origins, targets)): State<Places>,
                 axum::extract::Path(place): axum::extract::Path<String>| async move {
                    let own = origins.lock().expect("lock").clone();
                    let target = match place.as_str() {
                        "home" => own,
                        "listed" => targets[0].clone(),
                        _ => targets[1].clone(),
                    };
                    (
                        StatusCode::ACCEPTED,
                        [
                            ("operation-location", format!("{target}/monitor")),
                            ("retry-after", "0".to_string()),
                        ],
                    )
                        .into_response()
                },
            ),
        )
        .route(
            "/monitor",
            get(|State(seen): State<Seen>, headers: HeaderMap| async move {
                seen.0
                    .lock()
                    .expect("lock")
                    .push(("/monitor".into(), headers));
                axum::Json(json!({"status": "Succeeded", "done": true}))
            })
            .with_state(home_seen.clone()),
        )
        .with_state((
            origins.clone(),
            Arc::new(vec![listed.clone(), elsewhere.clone()]),
        ));
    let api = serve(app).await;
    *origins.lock().expect("lock") = api.clone();

    let config = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [apis.jobs]\nspec = \"specs/jobs.yaml\"\nbase_url = \"{api}\"\n\
         forward_headers = [\"X-Tenant\"]\nfollow_redirects = [\"{listed}\"]\n\
         [apis.jobs.auth.gateway]\ntype = \"bearer\"\ntoken_env = \"JOBS_TOKEN\"\n\
         [reload]\nenabled = false\n"
    );
    let dir = project(&config, &[("specs/jobs.yaml", JOBS)]);
    let binary = Binary::start_with(dir.path(), &[("JOBS_TOKEN", "jobs-token-b81d4e9a")]).await;

    // On the API's own origin: followed, with the credentials and forwarded headers.
    let home = call(&binary.url, "startJob", json!({"where": "home"})).await;
    assert_eq!(home["result"]["isError"], false, "{home}");
    let asked = home_seen
        .headers_of("/monitor")
        .expect("the monitor was asked");
    assert_eq!(asked["authorization"], "Bearer jobs-token-b81d4e9a");
    assert_eq!(asked["x-tenant"], "tenant-of-the-user-7f3e");

    // On an origin the operator lists in follow_redirects: followed bare.
    let listed_call = call(&binary.url, "startJob", json!({"where": "listed"})).await;
    assert_eq!(listed_call["result"]["isError"], false, "{listed_call}");
    let asked = listed_seen
        .headers_of("/monitor")
        .expect("the monitor was asked");
    assert!(asked.get("authorization").is_none(), "{asked:?}");
    assert!(asked.get("x-tenant").is_none(), "{asked:?}");

    // Anywhere else: not followed at all, and the result names the refused origin.
    let refused = call(&binary.url, "startJob", json!({"where": "elsewhere"})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_string();
    assert!(
        text.contains(&elsewhere) && text.contains("follow_redirects"),
        "{text}"
    );
    assert!(
        elsewhere_seen.paths().is_empty(),
        "nothing reached {elsewhere}"
    );
    assert!(!text.contains("jobs-token-b81d4e9a"), "{text}");
}

/// The echo API whose POST tools take idempotency keys, behind tokens A and B, with the
/// in-process store's budgets of `store`.
pub(super) fn store_config(upstream: &str, store: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\
         [server.auth]\ntokens_env = [\"RESTMCP_TEST_A\", \"RESTMCP_TEST_B\"]\n\
         [server.store]\n{store}\n\
         [apis.echo]\nspec = \"specs/echo.yaml\"\nbase_url = \"{upstream}\"\n\
         idempotency_header = \"Idempotency-Key\"\n\
         [reload]\nenabled = false\n"
    )
}

/// A stateless 2026-07-28 `updateItem` as `token`'s client with idempotency key `key`: its
/// result echoes a 10 kB name (about 50 kB stored).
pub(super) async fn keyed_update(url: &str, token: &str, key: &str) -> Value {
    let arguments = json!({"id__path": 1, "name": "n".repeat(10_000), "idempotency_key": key});
    let bearer = format!("Bearer {token}");
    let headers = [("authorization", bearer.as_str())];
    crate::support::stateless_call(url, "updateItem", json!({"arguments": arguments}), &headers)
        .await
}

#[tokio::test]
async fn a_caller_flooding_the_store_pushes_out_only_its_own_records() {
    use std::sync::atomic::Ordering;
    let upstream = crate::upstream::start().await;
    let store = "max_memory_bytes = 1048576\nmax_bytes_per_caller = 262144";
    let dir = project(&store_config(&upstream.url(), store), &[]);
    let binary = Binary::start_with(
        dir.path(),
        &[
            ("RESTMCP_TEST_A", "token-of-a-4d1c"),
            ("RESTMCP_TEST_B", "token-of-b-9e27"),
        ],
    )
    .await;
    let sent = || upstream.counters.all.load(Ordering::SeqCst);
    let first = keyed_update(&binary.url, "token-of-b-9e27", "b-order-1").await;
    assert_eq!(first["result"]["isError"], false, "{first}");
    let mallory_first = keyed_update(&binary.url, "token-of-a-4d1c", "a-0").await;
    assert_eq!(mallory_first["result"]["isError"], false);
    // A stores a hundred records of about 50 kB: five times its share, and its own go.
    for n in 1..100 {
        keyed_update(&binary.url, "token-of-a-4d1c", &format!("a-{n}")).await;
    }
    let before = sent();
    // B's record is still there: its repeat is answered from the store, nothing sent.
    let repeat = keyed_update(&binary.url, "token-of-b-9e27", "b-order-1").await;
    assert_eq!(
        repeat["result"]["_meta"]["io.restmcp/idempotentReplay"], true,
        "{repeat}"
    );
    assert_eq!(sent(), before);
    // A's latest is kept, its first was pushed out (its repeat goes to the upstream again,
    // with the same key, which the upstream deduplicates).
    let latest = keyed_update(&binary.url, "token-of-a-4d1c", "a-99").await;
    assert_eq!(
        latest["result"]["_meta"]["io.restmcp/idempotentReplay"],
        true
    );
    assert_eq!(sent(), before);
    let evicted = keyed_update(&binary.url, "token-of-a-4d1c", "a-0").await;
    assert_eq!(evicted["result"]["isError"], false, "{evicted}");
    assert!(evicted["result"]["_meta"].is_null(), "{evicted}");
    assert_eq!(sent(), before + 1);
}
