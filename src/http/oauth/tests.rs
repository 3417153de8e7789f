//! The resource server against an authorization server on loopback that serves
//! OpenID Connect discovery, a JWK Set that a test can rotate, and RFC 7662 introspection
//! (tests/oauth/ runs the same checks against the real `oidc-provider`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use jsonwebtoken::{EncodingKey, Header, encode};
use serde_json::{Value, json};

use super::*;
use crate::config::{IntrospectionSettings, OAuthSettings};

const RESOURCE: &str = "https://mcp.example.com/mcp";

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/oauth")
        .join(name);
    std::fs::read(path).expect("fixture")
}

fn jwks(key: &str) -> Value {
    serde_json::from_slice(&fixture(&format!("rsa-{key}.jwks.json"))).expect("jwks")
}

#[derive(Default)]
struct AsState {
    issuer: Mutex<String>,
    jwks: Mutex<Value>,
    jwks_fetches: AtomicUsize,
    introspections: AtomicUsize,
    /// Opaque token → introspection answer.
    opaque: Mutex<HashMap<String, Value>>,
}

/// A small authorization server; returns its issuer URL and state.
async fn authorization_server() -> (String, Arc<AsState>) {
    let state = Arc::new(AsState::default());
    *state.jwks.lock().expect("lock") = jwks("a");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let issuer = format!("http://{}", listener.local_addr().expect("addr"));
    *state.issuer.lock().expect("lock") = issuer.clone();
    let app = Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(|State(s): State<Arc<AsState>>| async move {
                let issuer = s.issuer.lock().expect("lock").clone();
                axum::Json(json!({
                    "issuer": issuer,
                    "jwks_uri": format!("{issuer}/jwks"),
                    "introspection_endpoint": format!("{issuer}/introspect"),
                }))
            }),
        )
        .route(
            "/jwks",
            get(|State(s): State<Arc<AsState>>| async move {
                s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
                axum::Json(s.jwks.lock().expect("lock").clone())
            }),
        )
        .route(
            "/introspect",
            post(
                |State(s): State<Arc<AsState>>, headers: HeaderMap, body: String| async move {
                    s.introspections.fetch_add(1, Ordering::SeqCst);
                    // restmcp authenticates as client "rs" with secret "s3cret".
                    let expected = format!(
                        "Basic {}",
                        base64::Engine::encode(
                            &base64::engine::general_purpose::STANDARD,
                            "rs:s3cret"
                        )
                    );
                    if headers.get("authorization").and_then(|v| v.to_str().ok())
                        != Some(expected.as_str())
                    {
                        return (
                            StatusCode::UNAUTHORIZED,
                            axum::Json(json!({"error": "invalid_client"})),
                        );
                    }
                    let token = url::form_urlencoded::parse(body.as_bytes())
                        .find(|(k, _)| k == "token")
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default();
                    let answer = s
                        .opaque
                        .lock()
                        .expect("lock")
                        .get(&token)
                        .cloned()
                        .unwrap_or(json!({"active": false}));
                    (StatusCode::OK, axum::Json(answer))
                },
            ),
        )
        .with_state(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (issuer, state)
}

fn settings(issuer: &str) -> OAuthSettings {
    OAuthSettings {
        resource: RESOURCE.into(),
        issuers: vec![issuer.into()],
        scopes: vec!["mcp:tools".into()],
        algorithms: crate::config::OAuthSettings::default_algorithms(),
        hmac_secret_env: None,
        clock_skew_seconds: 0,
        jwks_refresh_seconds: 0,
        resource_name: None,
        introspection: Some(IntrospectionSettings {
            client_id: "rs".into(),
            client_secret_env: "SECRET".into(),
            url: None,
        }),
        introspection_cache_seconds: 30,
        introspection_rate_limit: crate::config::RateLimit {
            per_second: 1.0,
            burst: Some(10),
        },
    }
}

/// The client every test token comes from.
const CLIENT: &str = "address:127.0.0.1";

fn server(settings: &OAuthSettings) -> ResourceServer {
    ResourceServer::new(
        settings,
        |name| (name == "SECRET").then(|| "s3cret".into()),
        Arc::new(crate::identity::Pseudonyms::random()),
    )
    .expect("resource server")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("time")
        .as_secs()
}

/// A token signed with fixture key `key`, with `claims` over sensible defaults.
fn token(key: &str, issuer: &str, claims: Value) -> String {
    let mut body = json!({
        "iss": issuer, "sub": "alice", "aud": RESOURCE, "scope": "mcp:tools pets:read",
        "exp": now() + 300, "iat": now(), "client_id": "app",
    });
    for (k, v) in claims.as_object().expect("object") {
        if v.is_null() {
            body.as_object_mut().expect("object").remove(k);
        } else {
            body[k] = v.clone();
        }
    }
    let mut header = Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some(format!("key-{key}"));
    header.typ = Some("at+jwt".into());
    let der = fixture(&format!("rsa-{key}.der"));
    encode(&header, &body, &EncodingKey::from_rsa_der(&der)).expect("sign")
}

fn invalid(result: Result<Arc<Caller>, Rejection>) -> String {
    match result {
        Err(Rejection::Invalid(reason)) => reason,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[tokio::test]
async fn a_signed_token_for_this_resource_names_its_caller_and_scopes() {
    let (issuer, state) = authorization_server().await;
    let rs = server(&settings(&issuer));
    let caller = rs
        .authenticate(&token("a", &issuer, json!({})), CLIENT)
        .await
        .expect("valid");
    assert_eq!(caller.subject(), "alice");
    assert_eq!(caller.client_id.as_deref(), Some("app"));
    assert_eq!(caller.scopes, ["mcp:tools", "pets:read"]);
    assert!(caller.pseudonym().starts_with("sub:"));
    // The verdict is cached: the second check fetches nothing and verifies nothing new.
    rs.authenticate(&token("a", &issuer, json!({})), CLIENT)
        .await
        .expect("valid");
    assert_eq!(state.jwks_fetches.load(Ordering::SeqCst), 1);
    // `scp` as an array (some providers) is read too; a trailing slash on the audience is the
    // same resource.
    let caller = rs
        .authenticate(&token(
            "a",
            &issuer,
            json!({"scope": null, "scp": ["mcp:tools"], "aud": [format!("{RESOURCE}/"), "other"]}),
        ), CLIENT)
        .await
        .expect("valid");
    assert_eq!(caller.scopes, ["mcp:tools"]);
}

#[tokio::test]
async fn tokens_for_another_audience_expired_unsigned_or_from_elsewhere_are_refused() {
    let (issuer, _state) = authorization_server().await;
    let rs = server(&settings(&issuer));
    let reason = invalid(
        rs.authenticate(
            &token("a", &issuer, json!({"aud": "https://other.example/mcp"})),
            CLIENT,
        )
        .await,
    );
    assert!(reason.contains("aud"), "{reason}");
    let reason = invalid(
        rs.authenticate(&token("a", &issuer, json!({"exp": now() - 5})), CLIENT)
            .await,
    );
    assert!(reason.contains("expired"), "{reason}");
    let reason = invalid(
        rs.authenticate(&token("a", &issuer, json!({"nbf": now() + 600})), CLIENT)
            .await,
    );
    assert!(reason.contains("not valid yet"), "{reason}");
    let reason = invalid(
        rs.authenticate(&token("a", "https://evil.example", json!({})), CLIENT)
            .await,
    );
    assert!(reason.contains("issuer"), "{reason}");
    let reason = invalid(
        rs.authenticate(&token("a", &issuer, json!({"aud": null})), CLIENT)
            .await,
    );
    assert!(reason.contains("claim"), "{reason}");

    // alg "none": the signature dropped.
    let signed = token("a", &issuer, json!({}));
    let mut parts = signed.split('.');
    let (_, payload) = (parts.next(), parts.next().expect("payload"));
    let none_header = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        br#"{"alg":"none","typ":"JWT"}"#,
    );
    invalid(
        rs.authenticate(&format!("{none_header}.{payload}."), CLIENT)
            .await,
    );
    // HS256 "signed" with the public key (algorithm confusion): HMAC is not configured.
    let mut header = Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some("key-a".into());
    let confused = encode(
        &header,
        &json!({"iss": issuer, "sub": "mallory", "aud": RESOURCE, "exp": now() + 60}),
        &EncodingKey::from_secret(jwks("a").to_string().as_bytes()),
    )
    .expect("sign");
    let reason = invalid(rs.authenticate(&confused, CLIENT).await);
    assert!(reason.contains("HS256"), "{reason}");
    // A payload changed after signing.
    let (head, rest) = signed.split_once('.').expect("jwt");
    let signature = rest.rsplit_once('.').expect("jwt").1;
    let forged_payload = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        json!({"iss": issuer, "sub": "root", "aud": RESOURCE, "exp": now() + 60, "scope": "mcp:tools"})
            .to_string(),
    );
    let reason = invalid(
        rs.authenticate(&format!("{head}.{forged_payload}.{signature}"), CLIENT)
            .await,
    );
    assert!(reason.contains("signature"), "{reason}");
    // Signed by a key the issuer does not publish.
    let reason = invalid(
        rs.authenticate(&token("b", &issuer, json!({})), CLIENT)
            .await,
    );
    assert!(reason.contains("does not publish"), "{reason}");
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_and_the_retired_key_stops_working() {
    let (issuer, state) = authorization_server().await;
    let rs = server(&settings(&issuer));
    let old = token("a", &issuer, json!({}));
    rs.authenticate(&old, CLIENT)
        .await
        .expect("valid before rotation");
    *state.jwks.lock().expect("lock") = jwks("b");
    rs.authenticate(&token("b", &issuer, json!({})), CLIENT)
        .await
        .expect("the new key is fetched on its unknown kid");
    assert_eq!(state.jwks_fetches.load(Ordering::SeqCst), 2);
    let reason = invalid(rs.authenticate(&old, CLIENT).await);
    assert!(reason.contains("does not publish"), "{reason}");
}

#[tokio::test]
async fn unknown_keys_refetch_the_key_set_at_most_once_per_interval() {
    let (issuer, state) = authorization_server().await;
    let rs = server(&OAuthSettings {
        jwks_refresh_seconds: 3600,
        ..settings(&issuer)
    });
    rs.warm().await;
    assert_eq!(state.jwks_fetches.load(Ordering::SeqCst), 1);
    for _ in 0..5 {
        invalid(
            rs.authenticate(&token("b", &issuer, json!({})), CLIENT)
                .await,
        );
    }
    assert_eq!(
        state.jwks_fetches.load(Ordering::SeqCst),
        1,
        "a flood of unknown kids does not become a flood of fetches"
    );
}

#[tokio::test]
async fn opaque_tokens_are_introspected_once_and_checked_for_audience_and_activity() {
    let (issuer, state) = authorization_server().await;
    let rs = server(&settings(&issuer));
    state.opaque.lock().expect("lock").extend([
        (
            "opaque-good".to_string(),
            json!({"active": true, "sub": "bob", "aud": RESOURCE, "scope": "mcp:tools",
                   "iss": issuer, "exp": now() + 300, "client_id": "cli"}),
        ),
        (
            "opaque-elsewhere".to_string(),
            json!({"active": true, "sub": "bob", "aud": "https://other.example", "exp": now() + 300}),
        ),
    ]);
    let caller = rs
        .authenticate("opaque-good", CLIENT)
        .await
        .expect("active");
    assert_eq!(caller.subject(), "bob");
    assert_eq!(caller.scopes, ["mcp:tools"]);
    rs.authenticate("opaque-good", CLIENT)
        .await
        .expect("cached");
    assert_eq!(state.introspections.load(Ordering::SeqCst), 1);
    let reason = invalid(rs.authenticate("opaque-elsewhere", CLIENT).await);
    assert!(reason.contains("aud"), "{reason}");
    let reason = invalid(rs.authenticate("opaque-unknown", CLIENT).await);
    assert!(reason.contains("not active"), "{reason}");
    invalid(rs.authenticate("opaque-unknown", CLIENT).await);
    assert_eq!(
        state.introspections.load(Ordering::SeqCst),
        3,
        "a refused token is remembered briefly"
    );
    // A wrong client secret is the operator's problem, told as unavailable, not as the
    // client's bad token.
    let wrong = ResourceServer::new(
        &settings(&issuer),
        |_| Some("wrong".into()),
        Arc::new(crate::identity::Pseudonyms::random()),
    )
    .expect("rs");
    match wrong.authenticate("opaque-good", CLIENT).await {
        Err(Rejection::Unavailable(problem)) => {
            assert!(
                problem.contains("401") && !problem.contains("wrong"),
                "{problem}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_issuer_makes_tokens_uncheckable_not_invalid() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let issuer = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let rs = server(&settings(&issuer));
    match rs
        .authenticate(&token("a", &issuer, json!({})), CLIENT)
        .await
    {
        Err(Rejection::Unavailable(problem)) => assert!(problem.contains(&issuer), "{problem}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn metadata_and_challenges_point_clients_to_the_authorization_servers() {
    let rs = server(&OAuthSettings {
        resource_name: Some("Pets".into()),
        ..settings("https://as.example")
    });
    assert_eq!(
        rs.metadata_document(&["mcp:tools".into(), "pets:read".into()]),
        json!({
            "resource": RESOURCE,
            "authorization_servers": ["https://as.example"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:tools", "pets:read"],
            "resource_name": "Pets",
        })
    );
    assert_eq!(
        rs.metadata_paths(),
        [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource"
        ]
    );
    assert_eq!(
        rs.challenge(None, &["mcp:tools"]),
        r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#
    );
    assert_eq!(
        rs.challenge(Some(("invalid_token", "bad \"quote\"\n")), &[]),
        r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="bad 'quote'?""#
    );
}

#[tokio::test]
async fn unknown_tokens_cost_each_client_a_bounded_rate_of_introspections() {
    let (issuer, state) = authorization_server().await;
    let mut settings = settings(&issuer);
    settings.introspection_rate_limit = crate::config::RateLimit {
        per_second: 0.01,
        burst: Some(3),
    };
    let rs = server(&settings);
    // A flood of made-up tokens from one address: three introspections, then 429s that ask
    // nothing of the authorization server.
    let mut throttled = 0;
    for n in 0..50 {
        match rs.authenticate(&format!("made-up-{n}"), CLIENT).await {
            Err(Rejection::Invalid(_)) => {}
            Err(Rejection::Throttled(wait)) => {
                assert!(wait > std::time::Duration::from_secs(1), "{wait:?}");
                throttled += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(throttled, 47);
    assert_eq!(state.introspections.load(Ordering::SeqCst), 3);
    // Another address has its own allowance; a known verdict costs nothing.
    state.opaque.lock().expect("lock").insert(
        "opaque-good".to_string(),
        json!({"active": true, "sub": "bob", "aud": RESOURCE, "iss": issuer, "exp": now() + 300}),
    );
    rs.authenticate("opaque-good", "address:192.0.2.9")
        .await
        .expect("another client is served");
    assert_eq!(state.introspections.load(Ordering::SeqCst), 4);
    rs.authenticate("opaque-good", CLIENT)
        .await
        .expect("cached: the throttled client is served from the verdict");
    assert_eq!(state.introspections.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_revoked_opaque_token_is_refused_once_its_verdict_is_older_than_the_cache_time() {
    let (issuer, state) = authorization_server().await;
    let mut settings = settings(&issuer);
    settings.introspection_cache_seconds = 1;
    let rs = server(&settings);
    state.opaque.lock().expect("lock").insert(
        "opaque-good".to_string(),
        json!({"active": true, "sub": "bob", "aud": RESOURCE, "iss": issuer, "exp": now() + 3600}),
    );
    rs.authenticate("opaque-good", CLIENT)
        .await
        .expect("active");
    // Revoked at the authorization server: trusted from the cache for at most a second.
    state
        .opaque
        .lock()
        .expect("lock")
        .insert("opaque-good".to_string(), json!({"active": false}));
    rs.authenticate("opaque-good", CLIENT)
        .await
        .expect("still cached");
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let reason = invalid(rs.authenticate("opaque-good", CLIENT).await);
    assert!(reason.contains("not active"), "{reason}");
    assert_eq!(state.introspections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_token_once_found_active_is_checked_again_outside_its_clients_ration() {
    let (issuer, state) = authorization_server().await;
    let mut settings = settings(&issuer);
    settings.introspection_cache_seconds = 1;
    settings.introspection_rate_limit = crate::config::RateLimit {
        per_second: 0.001,
        burst: Some(2),
    };
    let rs = server(&settings);
    state.opaque.lock().expect("lock").insert(
        "opaque-good".to_string(),
        json!({"active": true, "sub": "bob", "aud": RESOURCE, "iss": issuer, "exp": now() + 3600}),
    );
    rs.authenticate("opaque-good", CLIENT)
        .await
        .expect("active");
    // Someone on the same address spends the ration with made-up tokens.
    invalid(rs.authenticate("made-up-1", CLIENT).await);
    assert!(matches!(
        rs.authenticate("made-up-2", CLIENT).await,
        Err(Rejection::Throttled(_))
    ));
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    // The verdict is due for a re-check: asked again, though the ration is spent.
    rs.authenticate("opaque-good", CLIENT)
        .await
        .expect("re-checked and served");
    assert_eq!(state.introspections.load(Ordering::SeqCst), 3);
}
