//! The OAuth resource server through the real binary: a caller's token scopes
//! decide which tools it sees and may call. Tokens here are HS256 (a secret shared through
//! the environment), so no authorization server is needed; tests/oauth/ runs the same
//! against oidc-provider with JWKS, introspection and token exchange.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::overlays::project;
use crate::reload::Binary;

const SHARED_SECRET: &str = "hs256-shared-secret-for-tests-4f1d";
const STATIC_TOKEN: &str = "machine-token-8a21";
const IDENTITY_KEY: &str = "the identity key of this deployment, 32+ bytes";

fn config() -> String {
    "[server]\nlisten = \"127.0.0.1:0\"\nidentity_key_env = \"RESTMCP_TEST_IDENTITY_KEY\"\n\
     [server.auth]\ntokens_env = [\"RESTMCP_TEST_STATIC\"]\n\
     [server.oauth]\nresource = \"http://127.0.0.1/mcp\"\nissuers = [\"https://as.example\"]\n\
     scopes = [\"mcp:tools\"]\nalgorithms = [\"HS256\"]\nhmac_secret_env = \"RESTMCP_TEST_HMAC\"\n\
     [apis.petstore]\nspec = \"specs/petstore.yaml\"\nmock = true\n\
     tool_rate_limits = { getPetById = { per_second = 0.001, burst = 1 } }\n\
     [reload]\nenabled = false\n"
        .to_string()
}

fn token(subject: &str, scope: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("time")
        .as_secs();
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"iss": "https://as.example", "sub": subject, "aud": "http://127.0.0.1/mcp",
                "exp": now + 600, "scope": scope}),
        &jsonwebtoken::EncodingKey::from_secret(SHARED_SECRET.as_bytes()),
    )
    .expect("sign")
}

/// One JSON-RPC POST; returns status, headers and the parsed body (Null when not JSON).
async fn post(
    url: &str,
    bearer: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    restmcp::http_client::install_crypto_provider();
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", format!("Bearer {bearer}"));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.body(body.to_string()).send().await.expect("POST");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

/// A session opened with `bearer`: its id.
async fn session(url: &str, bearer: &str) -> String {
    let (status, headers, _) = post(
        url,
        bearer,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "oauth-test", "version": "1"}}}),
    )
    .await;
    assert_eq!(status, 200);
    let id = headers["mcp-session-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    let (status, _, _) = post(
        url,
        bearer,
        Some(&id),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    id
}

async fn tool_names(url: &str, bearer: &str) -> Vec<String> {
    let id = session(url, bearer).await;
    let (status, _, body) = post(
        url,
        bearer,
        Some(&id),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mut names: Vec<String> = body["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_tokens_scopes_decide_which_tools_it_lists_and_calls() {
    let dir = project(&config(), &[]);
    let binary = Binary::start_with(
        dir.path(),
        &[
            ("RESTMCP_TEST_HMAC", SHARED_SECRET),
            ("RESTMCP_TEST_STATIC", STATIC_TOKEN),
            ("RESTMCP_TEST_IDENTITY_KEY", IDENTITY_KEY),
        ],
    )
    .await;
    let url = binary.url.clone();
    // The metadata names the configured scope and those the tools ask for.
    restmcp::http_client::install_crypto_provider();
    let metadata: Value =
        reqwest::get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))
            .await
            .expect("GET")
            .json()
            .await
            .expect("JSON");
    assert_eq!(
        metadata["scopes_supported"],
        json!(["mcp:tools", "read:pets", "write:pets"])
    );
    let reader = token("alice", "mcp:tools read:pets");
    let writer = token("bob", "mcp:tools read:pets write:pets");
    let alice = tool_names(&url, &reader).await;
    let bob = tool_names(&url, &writer).await;
    let machine = tool_names(&url, STATIC_TOKEN).await;
    // Petstore's pet operations need petstore_auth [write:pets, read:pets]; getPetById
    // also takes an API key (no scope), the user operations need nothing.
    assert!(!alice.contains(&"addPet".to_string()), "{alice:?}");
    assert!(alice.contains(&"getPetById".to_string()), "{alice:?}");
    assert!(alice.contains(&"createUser".to_string()), "{alice:?}");
    assert!(bob.contains(&"addPet".to_string()), "{bob:?}");
    assert_eq!(
        bob, machine,
        "every scope, or a static token, opens every tool"
    );
    assert!(alice.len() < bob.len());

    // Alice calling a tool her token does not open: 403 with the scopes to ask for.
    let id = session(&url, &reader).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "addPet", "arguments": {"name": "Rex", "photoUrls": []}}});
    let (status, headers, _) = post(&url, &reader, Some(&id), call.clone()).await;
    assert_eq!(status, 403);
    let challenge = headers["www-authenticate"].to_str().expect("ascii");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#)
            && challenge.contains(r#"scope="mcp:tools read:pets write:pets""#)
            && challenge.contains(
                "resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\""
            ),
        "{challenge}"
    );
    // A tool her token opens works; Bob's token opens addPet.
    let get = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "getPetById", "arguments": {"petId": 1}}});
    let (status, _, body) = post(&url, &reader, Some(&id), get).await;
    assert_eq!(status, 200);
    assert_ne!(body["result"]["isError"], json!(true), "{body}");
    let bob_session = session(&url, &writer).await;
    let (status, _, body) = post(&url, &writer, Some(&bob_session), call).await;
    assert_eq!(status, 200);
    assert_ne!(body["result"]["isError"], json!(true), "{body}");

    // The legacy HTTP+SSE transport carries no caller to its calls: OAuth tokens are sent
    // to Streamable HTTP; static tokens still open it.
    let sse = |bearer: String| {
        let url = url.replace("/mcp", "/sse");
        async move {
            reqwest::Client::new()
                .get(url)
                .header("authorization", format!("Bearer {bearer}"))
                .send()
                .await
                .expect("GET /sse")
                .status()
                .as_u16()
        }
    };
    assert_eq!(sse(reader.clone()).await, 403);
    assert_eq!(sse(STATIC_TOKEN.to_string()).await, 200);

    // A session id is not a credential: Bob cannot use the session Alice opened.
    let (status, _, _) = post(
        &url,
        &writer,
        Some(&id),
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 404, "another user's session is unknown to Bob");

    // getPetById allows one call per 1,000 s: per person, so Alice's second call waits
    // while Bob's first goes through.
    let get = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "getPetById", "arguments": {"petId": 1}}});
    let (_, _, body) = post(&url, &reader, Some(&id), get.clone()).await;
    assert!(
        body["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("rate-limited")),
        "{body}"
    );
    let (_, _, body) = post(&url, &writer, Some(&bob_session), get).await;
    assert_ne!(body["result"]["isError"], json!(true), "{body}");

    // The call log names each caller by pseudonym (keyed with the deployment's identity
    // key), never by subject or token.
    let pseudonym = |subject: &str| {
        restmcp::identity::Pseudonyms::new(IDENTITY_KEY.as_bytes())
            .of_subject("https://as.example", subject)
    };
    assert!(
        binary
            .wait_for_log(&pseudonym("bob"), std::time::Duration::from_secs(5))
            .await
    );
    let log = binary.log();
    assert!(log.contains(&pseudonym("alice")), "{log}");
    let scrape = reqwest::get(url.replace("/mcp", "/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("text");
    assert!(
        scrape.contains(r#"restmcp_http_refused_total{reason="insufficient_scope"} 1"#)
            && scrape.contains(r#"restmcp_http_refused_total{reason="foreign_session"} 1"#)
            && scrape.contains(&format!(
                "restmcp_caller_tool_calls_total{{caller=\"{}\"}} 2",
                pseudonym("bob")
            )),
        "{scrape}"
    );
    for secret in [
        "alice",
        "bob",
        reader.as_str(),
        writer.as_str(),
        SHARED_SECRET,
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
        assert!(!scrape.contains(secret), "{secret} in the metrics");
    }
}
