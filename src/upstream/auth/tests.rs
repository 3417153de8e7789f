use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use url::Url;

use super::*;
use crate::catalog::{self, ApiInput};
use crate::config::{Overrides, ToolSettings};
use crate::http_client;
use crate::secret::Secret;
use crate::spec::{DocumentSet, Method};

// ---------------------------------------------------------------------------------------
// Fixtures

fn schemes(token_url: &str) -> Value {
    json!({
        "bearer": {"type": "http", "scheme": "bearer"},
        "basic": {"type": "http", "scheme": "basic"},
        "hkey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        "qkey": {"type": "apiKey", "in": "query", "name": "api_key"},
        "ckey": {"type": "apiKey", "in": "cookie", "name": "token"},
        "cc": {"type": "oauth2", "flows": {"clientCredentials": {
            "tokenUrl": token_url, "scopes": {"read": "", "write": ""}
        }}},
        "implicit": {"type": "oauth2", "flows": {"implicit": {
            "authorizationUrl": "https://auth.test/authorize", "scopes": {}
        }}},
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth.test/.well-known"}
    })
}

fn catalog_with(schemes: Value) -> Catalog {
    let spec = json!({
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://api.test/v1"}],
        "components": {"securitySchemes": schemes},
        "paths": {"/a": {"get": {"operationId": "a"}}}
    });
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let input = ApiInput::new("api", Some(&docs));
    catalog::build(&[input], &ToolSettings::default())
        .expect("builds")
        .0
}

/// A validated config with one API, `api`, whose table ends with `api_toml`.
fn config(api_toml: &str) -> Config {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        format!("[apis.api]\nspec = \"api.json\"\nbase_url = \"https://api.test/v1\"\n{api_toml}"),
    )
    .expect("write");
    Config::load(&path, &Overrides::default()).expect("config is valid")
}

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| vars.get(name).cloned()
}

fn authenticator_at(
    token_url: &str,
    api_toml: &str,
    vars: &[(&str, &str)],
) -> Result<Authenticator, String> {
    Authenticator::new(
        &catalog_with(schemes(token_url)),
        &config(api_toml),
        env(vars),
    )
}

fn authenticator(api_toml: &str, vars: &[(&str, &str)]) -> Result<Authenticator, String> {
    authenticator_at("https://auth.api.test/token", api_toml, vars)
}

fn request(url: &str) -> HttpRequest {
    HttpRequest {
        method: Method::Get,
        url: url.to_string(),
        headers: Vec::new(),
        body: None,
        parsed: None,
    }
}

fn requirements(value: Value) -> Vec<SecurityRequirement> {
    serde_json::from_value(value).expect("requirements")
}

fn header<'r>(request: &'r HttpRequest, name: &str) -> Vec<&'r str> {
    request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
        .collect()
}

async fn applied(auth: &Authenticator, reqs: Value, mut request: HttpRequest) -> HttpRequest {
    auth.apply("api", &requirements(reqs), &mut request, None)
        .await
        .expect("applies");
    request
}

// ---------------------------------------------------------------------------------------
// Secret and redaction

#[test]
fn the_authenticator_debug_lists_names_only() {
    let auth = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        &[("T", "tok-abc")],
    )
    .expect("builds");
    let debug = format!("{auth:?}");
    assert!(debug.contains("\"bearer\""), "{debug}");
    assert!(!debug.contains("tok-abc"), "{debug}");
}

#[test]
fn secrets_print_redacted() {
    let secret = Secret::new("hunter2");
    assert_eq!(format!("{secret:?}"), "[REDACTED]");
    assert_eq!(format!("{secret}"), "[REDACTED]");
    assert_eq!(format!("{:?}", Some(&secret)), "Some([REDACTED])");
    assert_eq!(secret.expose(), "hunter2");
}

#[test]
fn redact_replaces_every_secret_and_its_wire_forms() {
    let auth = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"T\"\n\
         [apis.api.auth.basic]\nusername_env = \"U\"\npassword_env = \"P\"\n\
         [apis.api.auth.qkey]\nvalue_env = \"K\"\n",
        &[
            ("T", "tok-abc"),
            ("U", "alice"),
            ("P", "s3cret"),
            ("K", "k y/1"),
        ],
    )
    .expect("builds");
    let text = "Authorization: Bearer tok-abc; basic YWxpY2U6czNjcmV0 pw=s3cret \
                url=?api_key=k%20y%2F1 raw=k y/1 tok-abctok-abc";
    assert_eq!(
        auth.redact(text),
        "Authorization: Bearer [REDACTED]; basic [REDACTED] pw=[REDACTED] \
         url=?api_key=[REDACTED] raw=[REDACTED] [REDACTED][REDACTED]"
    );
    // The user name is an identifier, not a secret.
    assert_eq!(auth.redact("user alice"), "user alice");
    // Multi-byte text around a secret survives intact.
    assert_eq!(auth.redact("é tok-abc ü"), "é [REDACTED] ü");
}

#[test]
fn redact_result_covers_text_structured_content_and_binary() {
    let auth = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        &[("T", "tok-abc")],
    )
    .expect("builds");
    let result = ToolResult {
        content: vec![
            Content::Text {
                text: "{\"authorization\":\"Bearer tok-abc\"}".into(),
            },
            Content::Resource {
                uri: "restmcp://api/response".into(),
                mime_type: "application/octet-stream".into(),
                blob: STANDARD.encode(b"\x00\x01Bearer tok-abc\xff"),
            },
            Content::Image {
                data: STANDARD.encode(b"\x89PNG no secret"),
                mime_type: "image/png".into(),
            },
        ],
        structured: Some(
            json!({"headers": {"authorization": "Bearer tok-abc", "tok-abc": [1, "x tok-abc"]}}),
        ),
        is_error: false,
        // Marked as if the text were the structured content: redaction clears the mark.
        text_is_structured: Some(36),
    };
    let redacted = auth.redact_result(result);
    assert_eq!(redacted.text_is_structured, None);
    assert_eq!(
        redacted.content[0],
        Content::Text {
            text: "{\"authorization\":\"Bearer [REDACTED]\"}".into()
        }
    );
    let Content::Resource { blob, .. } = &redacted.content[1] else {
        panic!("resource");
    };
    assert_eq!(
        STANDARD.decode(blob).expect("base64"),
        b"\x00\x01Bearer [REDACTED]\xff"
    );
    let Content::Image { data, .. } = &redacted.content[2] else {
        panic!("image");
    };
    assert_eq!(data, &STANDARD.encode(b"\x89PNG no secret"));
    assert_eq!(
        redacted.structured,
        Some(
            json!({"headers": {"authorization": "Bearer [REDACTED]", "[REDACTED]": [1, "x [REDACTED]"]}})
        )
    );
}

#[test]
fn nothing_is_redacted_without_secrets() {
    let auth = Authenticator::default();
    assert_eq!(auth.redact("Bearer tok-abc"), "Bearer tok-abc");
    let result = ToolResult::text("anything");
    assert_eq!(auth.redact_result(result.clone()), result);
}

// ---------------------------------------------------------------------------------------
// Applying each scheme

#[tokio::test]
async fn bearer_sets_the_authorization_header_replacing_any_other() {
    let auth = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        &[("T", "tok-abc")],
    )
    .expect("builds");
    let mut req = request("https://api.test/v1/a");
    req.headers
        .push(("authorization".into(), "Bearer from-client".into()));
    let req = applied(&auth, json!([{"bearer": []}]), req).await;
    assert_eq!(
        req.headers,
        [("Authorization".to_string(), "Bearer tok-abc".to_string())]
    );
    assert_eq!(req.url, "https://api.test/v1/a");
}

#[tokio::test]
async fn basic_sets_base64_of_user_and_password() {
    let auth = authenticator(
        "[apis.api.auth.basic]\nusername_env = \"U\"\npassword_env = \"P\"\n",
        &[("U", "alice"), ("P", "s3cret")],
    )
    .expect("builds");
    let req = applied(
        &auth,
        json!([{"basic": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert_eq!(header(&req, "authorization"), ["Basic YWxpY2U6czNjcmV0"]);
}

#[tokio::test]
async fn basic_allows_an_empty_password_but_not_a_colon_in_the_user() {
    let auth = authenticator(
        "[apis.api.auth.basic]\nusername_env = \"U\"\npassword_env = \"P\"\n",
        &[("U", "sk_live"), ("P", "")],
    )
    .expect("builds");
    let req = applied(
        &auth,
        json!([{"basic": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    // base64("sk_live:")
    assert_eq!(header(&req, "authorization"), ["Basic c2tfbGl2ZTo="]);
    let error = authenticator(
        "[apis.api.auth.basic]\nusername_env = \"U\"\npassword_env = \"P\"\n",
        &[("U", "a:b"), ("P", "pw")],
    )
    .expect_err("refused");
    assert!(
        error.contains("apis.api.auth.basic.username_env"),
        "{error}"
    );
    assert!(!error.contains("a:b"), "{error}");
}

#[tokio::test]
async fn api_key_in_a_header() {
    let auth = authenticator(
        "[apis.api.auth.hkey]\nvalue_env = \"K\"\n",
        &[("K", "key-1")],
    )
    .expect("builds");
    let mut req = request("https://api.test/v1/a");
    req.headers
        .push(("x-api-key".into(), "from-arguments".into()));
    req.headers
        .push(("Accept".into(), "application/json".into()));
    let req = applied(&auth, json!([{"hkey": []}]), req).await;
    assert_eq!(
        req.headers,
        [
            ("Accept".to_string(), "application/json".to_string()),
            ("X-API-Key".to_string(), "key-1".to_string())
        ]
    );
}

#[tokio::test]
async fn api_key_in_the_query_is_percent_encoded_and_replaces_an_argument() {
    let auth = authenticator(
        "[apis.api.auth.qkey]\nvalue_env = \"K\"\n",
        &[("K", "a b&c=d/é+")],
    )
    .expect("builds");
    let reqs = json!([{"qkey": []}]);
    let req = applied(&auth, reqs.clone(), request("https://api.test/v1/a")).await;
    assert_eq!(
        req.url,
        "https://api.test/v1/a?api_key=a%20b%26c%3Dd%2F%C3%A9%2B"
    );
    let req = applied(
        &auth,
        reqs.clone(),
        request("https://api.test/v1/a?x=1&api_key=mine&y=%20"),
    )
    .await;
    assert_eq!(
        req.url,
        "https://api.test/v1/a?x=1&y=%20&api_key=a%20b%26c%3Dd%2F%C3%A9%2B"
    );
    assert!(req.headers.is_empty());
}

#[tokio::test]
async fn api_key_in_a_cookie_is_merged_into_the_cookie_header() {
    let auth = authenticator(
        "[apis.api.auth.ckey]\nvalue_env = \"K\"\n",
        &[("K", "v;1 \"x\"")],
    )
    .expect("builds");
    let reqs = json!([{"ckey": []}]);
    let req = applied(&auth, reqs.clone(), request("https://api.test/v1/a")).await;
    assert_eq!(
        req.headers,
        [("Cookie".to_string(), "token=v%3B1%20%22x%22".to_string())]
    );
    let mut existing = request("https://api.test/v1/a");
    existing
        .headers
        .push(("cookie".into(), "session=abc; token=old".into()));
    existing.headers.push(("X-Other".into(), "1".into()));
    let req = applied(&auth, reqs, existing).await;
    assert_eq!(
        req.headers,
        [
            (
                "cookie".to_string(),
                "session=abc; token=v%3B1%20%22x%22".to_string()
            ),
            ("X-Other".to_string(), "1".to_string())
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Choosing among alternatives

#[tokio::test]
async fn the_first_alternative_with_credentials_is_used() {
    let auth = authenticator(
        "[apis.api.auth.hkey]\nvalue_env = \"K\"\n[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        &[("K", "key-1"), ("T", "tok")],
    )
    .expect("builds");
    // `cc` has no credentials, so the next alternative is taken.
    let req = applied(
        &auth,
        json!([{"cc": ["read"]}, {"hkey": []}, {"bearer": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert_eq!(header(&req, "x-api-key"), ["key-1"]);
    assert!(header(&req, "authorization").is_empty());
    // Both schemes of one alternative are applied together.
    let req = applied(
        &auth,
        json!([{"hkey": [], "bearer": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert_eq!(header(&req, "x-api-key"), ["key-1"]);
    assert_eq!(header(&req, "authorization"), ["Bearer tok"]);
}

#[tokio::test]
async fn anonymous_access_is_the_fallback_not_the_preference() {
    let auth = authenticator(
        "[apis.api.auth.hkey]\nvalue_env = \"K\"\n",
        &[("K", "key-1")],
    )
    .expect("builds");
    let req = applied(
        &auth,
        json!([{}, {"hkey": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert_eq!(header(&req, "x-api-key"), ["key-1"]);
    let req = applied(
        &auth,
        json!([{}, {"bearer": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert!(req.headers.is_empty());
    let req = applied(&auth, json!([]), request("https://api.test/v1/a")).await;
    assert!(req.headers.is_empty());
}

#[tokio::test]
async fn unsatisfiable_requirements_name_the_schemes_and_keys_but_no_values() {
    let auth = authenticator(
        "[apis.api.auth.hkey]\nvalue_env = \"K\"\n",
        &[("K", "key-1")],
    )
    .expect("builds");
    let mut req = request("https://api.test/v1/a");
    let error = auth
        .apply(
            "api",
            &requirements(json!([
                {"hkey": [], "basic": []},
                {"cc": ["read"]},
                {"oidc": []},
                {"ghost": []}
            ])),
            &mut req,
            None,
        )
        .await
        .expect_err("unsatisfiable");
    assert_eq!(
        error,
        "API \"api\" requires credentials for this operation that are not configured: \
         \"basic\" (http basic: set username_env and password_env in [apis.api.auth.basic]), \
         or \"cc\" (oauth2 client credentials: set client_id_env and client_secret_env in [apis.api.auth.cc]), \
         or \"oidc\" (openIdConnect, which restmcp cannot use by itself), \
         or \"ghost\" (the description does not declare it)"
    );
    assert!(!error.contains("key-1"));
    assert!(req.headers.is_empty(), "nothing applied on failure");
}

#[tokio::test]
async fn an_api_without_auth_configuration_is_called_as_built() {
    let auth = authenticator("", &[]).expect("builds");
    let req = applied(
        &auth,
        json!([{"bearer": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert!(req.headers.is_empty());
    let unknown = Authenticator::default();
    let mut req = request("https://api.test/v1/a");
    unknown
        .apply(
            "api",
            &requirements(json!([{"bearer": []}])),
            &mut req,
            None,
        )
        .await
        .expect("no verdict without configuration");
}

#[tokio::test]
async fn a_credential_the_request_already_carries_satisfies_its_scheme() {
    // Only the api key is configured; the bearer token came with the request (forwarded).
    let auth = authenticator(
        "[apis.api.auth.hkey]\nvalue_env = \"K\"\n",
        &[("K", "key-1")],
    )
    .expect("builds");
    let mut req = request("https://api.test/v1/a");
    req.headers
        .push(("Authorization".into(), "Bearer user-token".into()));
    let req = applied(&auth, json!([{"bearer": []}]), req).await;
    assert_eq!(
        req.headers,
        [("Authorization".to_string(), "Bearer user-token".to_string())]
    );
    // A query key given as an argument counts for its scheme too.
    let req = applied(
        &auth,
        json!([{"qkey": []}]),
        request("https://api.test/v1/a?api_key=given"),
    )
    .await;
    assert_eq!(req.url, "https://api.test/v1/a?api_key=given");
}

#[tokio::test]
async fn a_scheme_of_the_configs_own_applies_to_every_operation() {
    let auth = authenticator(
        "[apis.api.auth.extra]\ntype = \"api_key\"\nin = \"query\"\nname = \"sig\"\nvalue_env = \"S\"\n\
         [apis.api.auth.gateway]\ntype = \"bearer\"\ntoken_env = \"G\"\n",
        &[("S", "s1"), ("G", "g1")],
    )
    .expect("builds");
    for reqs in [
        json!([]),
        json!([{}]),
        json!([{"bearer": []}]),
        json!([{"cc": []}]),
    ] {
        let req = applied(&auth, reqs.clone(), request("https://api.test/v1/a")).await;
        assert_eq!(req.url, "https://api.test/v1/a?sig=s1", "{reqs}");
        assert_eq!(header(&req, "authorization"), ["Bearer g1"], "{reqs}");
    }
}

// ---------------------------------------------------------------------------------------
// Building: environment and consistency with the description

#[test]
fn a_missing_environment_variable_is_named() {
    let error = authenticator(
        "[apis.api.auth.basic]\nusername_env = \"API_USER\"\npassword_env = \"API_PASSWORD\"\n",
        &[("API_USER", "alice")],
    )
    .expect_err("missing variable");
    assert_eq!(
        error,
        "apis.api.auth.basic.password_env: environment variable API_PASSWORD is not set"
    );
    let error = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"TOKEN\"\n",
        &[("TOKEN", "")],
    )
    .expect_err("empty variable");
    assert_eq!(
        error,
        "apis.api.auth.bearer.token_env: environment variable TOKEN is empty"
    );
    let error = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"TOKEN\"\n",
        &[("TOKEN", "tok-secret\n")],
    )
    .expect_err("newline");
    assert!(error.contains("TOKEN holds a control character"), "{error}");
    assert!(!error.contains("tok-secret"), "{error}");
}

#[test]
fn credentials_must_fit_the_declared_scheme() {
    let error = authenticator("[apis.api.auth.hkey]\ntoken_env = \"T\"\n", &[("T", "t")])
        .expect_err("mismatch");
    assert_eq!(
        error,
        "apis.api.auth.hkey: the description declares this scheme as apiKey in header \"X-API-Key\", but the keys given are for bearer credentials"
    );
    let error = authenticator("[apis.api.auth.basic]\ntoken_env = \"T\"\n", &[("T", "t")])
        .expect_err("mismatch");
    assert!(
        error.contains("declares this scheme as http basic"),
        "{error}"
    );
    let error = authenticator("[apis.api.auth.nope]\ntoken_env = \"T\"\n", &[("T", "t")])
        .expect_err("undeclared");
    assert!(
        error.starts_with("apis.api.auth.nope: the description declares no security scheme \"nope\" (it declares: basic, bearer, cc, ckey, hkey, implicit, oidc, qkey)"),
        "{error}"
    );
    let error = authenticator(
        "[apis.api.auth.bearer]\ntype = \"bearer\"\ntoken_env = \"T\"\n",
        &[("T", "t")],
    )
    .expect_err("type on a declared scheme");
    assert!(error.starts_with("apis.api.auth.bearer.type:"), "{error}");
}

#[test]
fn an_oauth2_scheme_without_client_credentials_needs_a_token_url() {
    let vars = [("ID", "id"), ("SECRET", "secret")];
    let error = authenticator(
        "[apis.api.auth.implicit]\nclient_id_env = \"ID\"\nclient_secret_env = \"SECRET\"\n",
        &vars,
    )
    .expect_err("no token URL");
    assert!(
        error.starts_with("apis.api.auth.implicit.token_url:"),
        "{error}"
    );
    authenticator(
        "[apis.api.auth.implicit]\nclient_id_env = \"ID\"\nclient_secret_env = \"SECRET\"\n\
         token_url = \"https://auth.test/token\"\n",
        &vars,
    )
    .expect("a configured token URL makes it usable");
}

// ---------------------------------------------------------------------------------------
// Header forwarding

fn context(headers: &[(&str, &str)]) -> CallContext {
    CallContext {
        caller: None,
        principal: None,
        operation_status: None,
        conditional: None,
        log: None,
        sent: None,
        workflow_step: false,
        steps_told: None,
        structured_from_text: false,
        trace: None,
        bare_structured: false,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
    }
}

#[test]
fn only_allowlisted_headers_are_forwarded_and_renamed() {
    let auth = authenticator(
        "forward_headers = [\"X-Tenant\", { from = \"X-Upstream-Token\", to = \"Authorization\" }]\n",
        &[],
    )
    .expect("builds");
    let mut req = request("https://api.test/v1/a");
    req.headers
        .push(("x-tenant".into(), "from-arguments".into()));
    auth.forward(
        "api",
        &context(&[
            ("x-tenant", "acme"),
            ("Authorization", "Bearer mcp-client-token"),
            ("X-UPSTREAM-TOKEN", "Bearer upstream-token"),
            ("Cookie", "mcp=1"),
            ("X-Other", "no"),
        ]),
        &mut req,
    )
    .expect("forwards");
    assert_eq!(
        req.headers,
        [
            ("X-Tenant".to_string(), "acme".to_string()),
            (
                "Authorization".to_string(),
                "Bearer upstream-token".to_string()
            )
        ]
    );
}

#[test]
fn the_clients_authorization_is_not_forwarded_by_default() {
    let auth = authenticator("forward_headers = [\"X-Tenant\"]\n", &[]).expect("builds");
    let mut req = request("https://api.test/v1/a");
    auth.forward(
        "api",
        &context(&[("Authorization", "Bearer mcp-client-token")]),
        &mut req,
    )
    .expect("forwards");
    assert!(req.headers.is_empty());
    // Unless the list names it.
    let auth = authenticator("forward_headers = [\"authorization\"]\n", &[]).expect("builds");
    auth.forward(
        "api",
        &context(&[("Authorization", "Bearer mcp-client-token")]),
        &mut req,
    )
    .expect("forwards");
    assert_eq!(
        req.headers,
        [(
            "authorization".to_string(),
            "Bearer mcp-client-token".to_string()
        )]
    );
}

#[test]
fn forwarded_values_with_line_breaks_are_refused() {
    let auth = authenticator("forward_headers = [\"X-Tenant\"]\n", &[]).expect("builds");
    for bad in ["acme\r\nX-Injected: 1", "acme\n", "a\u{0}b"] {
        let mut req = request("https://api.test/v1/a");
        let error = auth
            .forward("api", &context(&[("X-Tenant", bad)]), &mut req)
            .expect_err("refused");
        assert!(error.contains("\"X-Tenant\""), "{error}");
        assert!(req.headers.is_empty());
    }
    let mut req = request("https://api.test/v1/a");
    auth.forward("api", &context(&[("X-Tenant", "a\tb")]), &mut req)
        .expect("a tab is fine");
}

#[test]
fn call_context_reads_an_http_header_map() {
    let mut map = reqwest::header::HeaderMap::new();
    map.insert("x-tenant", "acme".parse().expect("value"));
    let context = CallContext::from_headers(&map);
    assert_eq!(
        context.headers,
        [("x-tenant".to_string(), "acme".to_string())]
    );
}

// ---------------------------------------------------------------------------------------
// OAuth 2.0 client credentials against a local token endpoint

#[derive(Default)]
struct Endpoint {
    hits: AtomicUsize,
    /// `expires_in` of the tokens issued; 0 means none.
    expires_in: AtomicU64,
    delay_ms: AtomicU64,
    reject: AtomicBool,
    /// (Authorization, Content-Type, body) of each token request.
    seen: Mutex<Vec<(String, String, String)>>,
    /// The token the protected resource accepts; others get 401.
    accepted: Mutex<String>,
    resource_hits: AtomicUsize,
}

async fn token(
    State(endpoint): State<Arc<Endpoint>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let n = endpoint.hits.fetch_add(1, Ordering::SeqCst) + 1;
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    endpoint
        .seen
        .lock()
        .expect("lock")
        .push((text("authorization"), text("content-type"), body));
    let delay = endpoint.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    if endpoint.reject.load(Ordering::SeqCst) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client", "error_description": "unknown client"})),
        )
            .into_response();
    }
    let mut answer = json!({"access_token": format!("tok-{n}"), "token_type": "bearer"});
    let expires_in = endpoint.expires_in.load(Ordering::SeqCst);
    if expires_in > 0 {
        answer["expires_in"] = json!(expires_in);
    }
    axum::Json(answer).into_response()
}

async fn resource(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap) -> Response {
    endpoint.resource_hits.fetch_add(1, Ordering::SeqCst);
    let accepted = endpoint.accepted.lock().expect("lock").clone();
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if given == format!("Bearer {accepted}") {
        (StatusCode::OK, format!("echo: {given}")).into_response()
    } else {
        StatusCode::UNAUTHORIZED.into_response()
    }
}

/// Starts the endpoint on 127.0.0.1:0; returns its state and base URL.
async fn start() -> (Arc<Endpoint>, String) {
    let endpoint = Arc::new(Endpoint::default());
    endpoint.expires_in.store(3600, Ordering::SeqCst);
    let app = Router::new()
        .route("/token", post(token))
        .route("/data", get(resource))
        .with_state(Arc::clone(&endpoint));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (endpoint, format!("http://{addr}"))
}

const OAUTH: &str = "[apis.api.auth.cc]\nclient_id_env = \"ID\"\nclient_secret_env = \"SECRET\"\n";
const OAUTH_VARS: [(&str, &str); 2] = [("ID", "my client"), ("SECRET", "s:e/c")];

async fn oauth_authenticator(base: &str, extra: &str) -> Authenticator {
    authenticator_at(
        &format!("{base}/token"),
        // A loopback token endpoint is on another site than api.test: the config names it.
        // The tests' resource is on the same loopback server: the config lets it have the
        // token too.
        &format!("credential_origins = [\"{base}\"]\n{OAUTH}token_url = \"{base}/token\"\n{extra}"),
        &OAUTH_VARS,
    )
    .expect("builds")
}

async fn bearer_for(auth: &Authenticator, reqs: Value) -> String {
    let req = applied(auth, reqs, request("https://api.test/v1/a")).await;
    header(&req, "authorization").join(",")
}

#[tokio::test]
async fn the_token_is_fetched_once_and_then_cached() {
    let (endpoint, base) = start().await;
    let auth = oauth_authenticator(&base, "").await;
    let reqs = json!([{"cc": ["write", "read"]}]);
    assert_eq!(bearer_for(&auth, reqs.clone()).await, "Bearer tok-1");
    assert_eq!(bearer_for(&auth, reqs.clone()).await, "Bearer tok-1");
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 1);
    let seen = endpoint.seen.lock().expect("lock").clone();
    // RFC 6749 §2.3.1: id and secret form-encoded, then Basic: base64("my+client:s%3Ae%2Fc").
    assert_eq!(
        seen,
        [(
            "Basic bXkrY2xpZW50OnMlM0FlJTJGYw==".to_string(),
            "application/x-www-form-urlencoded".to_string(),
            "grant_type=client_credentials&scope=read+write".to_string()
        )]
    );
    // The issued token is redacted from then on; so is the client secret.
    assert_eq!(
        auth.redact("tok-1 and s:e/c and bXkrY2xpZW50OnMlM0FlJTJGYw=="),
        "[REDACTED] and [REDACTED] and [REDACTED]"
    );
}

#[tokio::test]
async fn each_scope_set_has_its_own_token_unless_the_config_fixes_the_scopes() {
    let (endpoint, base) = start().await;
    let auth = oauth_authenticator(&base, "").await;
    assert_eq!(
        bearer_for(&auth, json!([{"cc": ["read"]}])).await,
        "Bearer tok-1"
    );
    assert_eq!(bearer_for(&auth, json!([{"cc": []}])).await, "Bearer tok-2");
    assert_eq!(
        bearer_for(&auth, json!([{"cc": ["read"]}])).await,
        "Bearer tok-1"
    );
    let bodies: Vec<String> = endpoint
        .seen
        .lock()
        .expect("lock")
        .iter()
        .map(|s| s.2.clone())
        .collect();
    assert_eq!(
        bodies,
        [
            "grant_type=client_credentials&scope=read",
            "grant_type=client_credentials"
        ]
    );

    let (endpoint, base) = start().await;
    let auth = oauth_authenticator(&base, "scopes = [\"admin\"]\n").await;
    assert_eq!(
        bearer_for(&auth, json!([{"cc": ["read"]}])).await,
        "Bearer tok-1"
    );
    assert_eq!(
        bearer_for(&auth, json!([{"cc": ["write"]}])).await,
        "Bearer tok-1"
    );
    assert_eq!(
        endpoint.seen.lock().expect("lock")[0].2,
        "grant_type=client_credentials&scope=admin"
    );
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_token_within_30_seconds_of_expiry_is_refreshed() {
    let (endpoint, base) = start().await;
    endpoint.expires_in.store(29, Ordering::SeqCst);
    let auth = oauth_authenticator(&base, "").await;
    let reqs = json!([{"cc": []}]);
    assert_eq!(bearer_for(&auth, reqs.clone()).await, "Bearer tok-1");
    assert_eq!(bearer_for(&auth, reqs.clone()).await, "Bearer tok-2");
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 2);
    // A long-lived one is kept; one without expires_in too.
    endpoint.expires_in.store(45, Ordering::SeqCst);
    assert_eq!(bearer_for(&auth, reqs.clone()).await, "Bearer tok-3");
    assert_eq!(bearer_for(&auth, reqs.clone()).await, "Bearer tok-3");
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn invalidate_forces_a_new_fetch_but_never_drops_a_newer_token() {
    let (endpoint, base) = start().await;
    let auth = oauth_authenticator(&base, "").await;
    let reqs = requirements(json!([{"cc": []}]));
    let mut req = request("https://api.test/v1/a");
    let first = auth
        .apply("api", &reqs, &mut req, None)
        .await
        .expect("applies");
    assert!(first.uses_oauth());
    auth.invalidate(&first);
    let mut req = request("https://api.test/v1/a");
    let second = auth
        .apply("api", &reqs, &mut req, None)
        .await
        .expect("applies");
    assert_eq!(header(&req, "authorization"), ["Bearer tok-2"]);
    // A late invalidation of the first token leaves the second in place.
    auth.invalidate(&first);
    assert_eq!(bearer_for(&auth, json!([{"cc": []}])).await, "Bearer tok-2");
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 2);
    auth.invalidate(&second);
    assert_eq!(bearer_for(&auth, json!([{"cc": []}])).await, "Bearer tok-3");
}

#[tokio::test]
async fn concurrent_callers_share_one_fetch() {
    let (endpoint, base) = start().await;
    endpoint.delay_ms.store(200, Ordering::SeqCst);
    let auth = Arc::new(oauth_authenticator(&base, "").await);
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let auth = Arc::clone(&auth);
            tokio::spawn(async move { bearer_for(&auth, json!([{"cc": []}])).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.expect("joins"), "Bearer tok-1");
    }
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_refused_token_request_is_an_error_naming_the_cause() {
    let (endpoint, base) = start().await;
    endpoint.reject.store(true, Ordering::SeqCst);
    let auth = oauth_authenticator(&base, "").await;
    let mut req = request("https://api.test/v1/a");
    let error = auth
        .apply("api", &requirements(json!([{"cc": []}])), &mut req, None)
        .await
        .expect_err("refused");
    assert!(
        error.starts_with("security scheme \"cc\": the token endpoint http://"),
        "{error}"
    );
    assert!(
        error.ends_with("answered 401 Unauthorized: invalid_client: unknown client"),
        "{error}"
    );
    assert!(!error.contains("s:e/c"), "{error}");
    assert!(req.headers.is_empty());
}

/// Sends a request the way the dispatcher does, returning it with (status, body).
async fn send(request: HttpRequest) -> (HttpRequest, Result<(u16, String), String>) {
    let outcome = send_ref(&request).await;
    (request, outcome)
}

async fn send_ref(request: &HttpRequest) -> Result<(u16, String), String> {
    http_client::install_crypto_provider();
    let client = reqwest::Client::new();
    let mut builder = client.get(&request.url);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let response = builder.send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    Ok((status, response.text().await.map_err(|e| e.to_string())?))
}

#[tokio::test]
async fn a_401_with_an_oauth_token_is_retried_once_with_a_fresh_one() {
    let (endpoint, base) = start().await;
    let auth = oauth_authenticator(&base, "").await;
    let reqs = requirements(json!([{"cc": []}]));
    *endpoint.accepted.lock().expect("lock") = "tok-1".into();
    let answer = auth
        .authorized(
            "api",
            &reqs,
            None,
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(answer, (200, "echo: Bearer tok-1".to_string()));
    // tok-1 is revoked: the cached token gets a 401, a new one is fetched, the call succeeds.
    *endpoint.accepted.lock().expect("lock") = "tok-2".into();
    let answer = auth
        .authorized(
            "api",
            &reqs,
            None,
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(answer.0, 200);
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 2);
    assert_eq!(endpoint.resource_hits.load(Ordering::SeqCst), 3);
    // A resource that refuses every token gets exactly one retry.
    *endpoint.accepted.lock().expect("lock") = "never".into();
    let answer = auth
        .authorized(
            "api",
            &reqs,
            None,
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(answer.0, 401);
    assert_eq!(endpoint.resource_hits.load(Ordering::SeqCst), 5);
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_401_without_an_oauth_token_is_not_retried() {
    let (endpoint, base) = start().await;
    let auth = authenticator(
        &format!("credential_origins = [\"{base}\"]\n[apis.api.auth.bearer]\ntoken_env = \"T\"\n"),
        &[("T", "static")],
    )
    .expect("builds");
    *endpoint.accepted.lock().expect("lock") = "other".into();
    let answer = auth
        .authorized(
            "api",
            &requirements(json!([{"bearer": []}])),
            None,
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(answer.0, 401);
    assert_eq!(endpoint.resource_hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unsatisfiable_call_is_never_sent() {
    let (endpoint, base) = start().await;
    let auth =
        authenticator("[apis.api.auth.hkey]\nvalue_env = \"K\"\n", &[("K", "k")]).expect("builds");
    let outcome = auth
        .authorized(
            "api",
            &requirements(json!([{"bearer": []}])),
            None,
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await;
    assert!(outcome.is_err());
    assert_eq!(endpoint.resource_hits.load(Ordering::SeqCst), 0);
}

#[test]
fn dispatcher_call_futures_are_send() {
    // The MCP server spawns calls on a multi-threaded runtime; a token fetch must not make
    // the call future !Send. Compiling this is the test; the future is never polled.
    fn is_send<T: Send>(_: T) {}
    let dispatcher =
        crate::upstream::Dispatcher::with_settings(Arc::new(Catalog::default()), HashMap::new())
            .expect("dispatcher");
    let context = CallContext::default();
    is_send(dispatcher.call("none", serde_json::Map::new(), &context));
    let auth = Authenticator::default();
    let mut req = request("https://api.test/");
    is_send(auth.apply("api", &[], &mut req, None));
}

// ---------------------------------------------------------------------------------------
// Where credentials may go (docs/src/security.md, "Credentials go only where the operator said")

#[tokio::test]
async fn credentials_are_never_attached_to_a_request_for_another_origin() {
    let auth = authenticator(
        "[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        &[("T", "tok-abc")],
    )
    .expect("builds");
    for url in [
        "https://api.test.attacker.example/v1/a",
        "https://api.test:8443/v1/a",
        "http://api.test/v1/a",
        "https://other.test/v1/a",
    ] {
        let mut req = request(url);
        let error = auth
            .apply(
                "api",
                &requirements(json!([{"bearer": []}])),
                &mut req,
                None,
            )
            .await
            .expect_err(url);
        assert!(
            error.contains("credentials are sent only to https://api.test"),
            "{url}: {error}"
        );
        assert!(header(&req, "authorization").is_empty(), "{url}");
    }
    let req = applied(
        &auth,
        json!([{"bearer": []}]),
        request("https://api.test/v1/a"),
    )
    .await;
    assert_eq!(header(&req, "authorization"), ["Bearer tok-abc"]);
}

#[tokio::test]
async fn credential_origins_let_the_operator_add_an_origin() {
    let auth = authenticator(
        "credential_origins = [\"https://eu.api.test\"]\n[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        &[("T", "tok-abc")],
    )
    .expect("builds");
    let req = applied(
        &auth,
        json!([{"bearer": []}]),
        request("https://eu.api.test/v1/a"),
    )
    .await;
    assert_eq!(header(&req, "authorization"), ["Bearer tok-abc"]);
}

#[test]
fn a_spec_token_url_on_loopback_is_allowed_in_clear_text_only_there() {
    let loopback = authenticator_at(
        "http://127.0.0.1:9/token",
        "[apis.api.auth.cc]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\n",
        &[("I", "i"), ("S", "s")],
    )
    .map(|_| ())
    .expect_err("loopback is another site than api.test");
    assert!(loopback.contains("another site"), "{loopback}");
    assert!(!loopback.contains("not https"), "{loopback}");
    let same_site = authenticator_at(
        "https://login.api.test/token",
        "[apis.api.auth.cc]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\n",
        &[("I", "i"), ("S", "s")],
    );
    assert!(same_site.is_ok());
}

/// A credential that exchanges the caller's token (RFC 8693) at the test endpoint.
async fn exchange_authenticator(base: &str) -> Authenticator {
    authenticator_at(
        &format!("{base}/token"),
        &format!(
            "credential_origins = [\"{base}\"]\n{OAUTH}[apis.api.auth.cc.token_exchange]\n\
             token_url = \"{base}/token\"\naudience = \"orders\"\n\
             resource = \"https://orders.example/\"\nscopes = [\"orders:read\"]\n"
        ),
        &OAUTH_VARS,
    )
    .expect("builds")
}

fn user(subject: &str, token: &str, expires_in: Duration) -> crate::identity::Caller {
    let mut caller = crate::identity::Caller::new(
        "https://as.example".into(),
        subject.into(),
        crate::secret::Secret::new(token),
        &crate::identity::Pseudonyms::new(b"the identity key of these tests, 32+"),
    );
    caller.client_id = Some("mcp-client".into());
    caller.scopes = vec!["mcp:tools".into()];
    caller.expires_at = Some(std::time::SystemTime::now() + expires_in);
    caller
}

async fn bearer_as(
    auth: &Authenticator,
    caller: Option<&crate::identity::Caller>,
) -> Result<String, String> {
    let mut req = request("https://api.test/v1/a");
    auth.apply(
        "api",
        &requirements(json!([{"cc": ["x"]}])),
        &mut req,
        caller,
    )
    .await?;
    Ok(header(&req, "authorization").join(","))
}

#[tokio::test]
async fn the_callers_token_is_exchanged_once_per_user_and_sent_in_its_place() {
    let (endpoint, base) = start().await;
    endpoint.expires_in.store(3600, Ordering::SeqCst);
    let auth = exchange_authenticator(&base).await;
    let alice = user("alice", "alice-mcp-token", Duration::from_secs(600));
    let bob = user("bob", "bob-mcp-token", Duration::from_secs(600));
    assert_eq!(
        bearer_as(&auth, Some(&alice)).await.expect("exchanged"),
        "Bearer tok-1"
    );
    assert_eq!(
        bearer_as(&auth, Some(&alice)).await.expect("cached"),
        "Bearer tok-1"
    );
    assert_eq!(
        bearer_as(&auth, Some(&bob)).await.expect("exchanged"),
        "Bearer tok-2"
    );
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 2);
    let seen = endpoint.seen.lock().expect("lock").clone();
    assert_eq!(
        seen[0].0, "Basic bXkrY2xpZW50OnMlM0FlJTJGYw==",
        "client authentication"
    );
    assert_eq!(
        seen[0].2,
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange\
         &subject_token=alice-mcp-token\
         &subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token\
         &requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token\
         &audience=orders&resource=https%3A%2F%2Forders.example%2F&scope=orders%3Aread"
    );
    assert!(seen[1].2.contains("subject_token=bob-mcp-token"));
    // The exchanged tokens are redacted from results like any issued token.
    assert_eq!(auth.redact("tok-1 tok-2"), "[REDACTED] [REDACTED]");
}

#[tokio::test]
async fn an_exchanged_token_is_not_used_past_the_token_it_was_exchanged_for() {
    let (endpoint, base) = start().await;
    endpoint.expires_in.store(3600, Ordering::SeqCst);
    let auth = exchange_authenticator(&base).await;
    // The caller's token has 20 s left, less than the refresh margin: each call exchanges.
    let short = user("carol", "carol-mcp-token", Duration::from_secs(20));
    assert_eq!(
        bearer_as(&auth, Some(&short)).await.expect("exchanged"),
        "Bearer tok-1"
    );
    assert_eq!(
        bearer_as(&auth, Some(&short)).await.expect("exchanged"),
        "Bearer tok-2"
    );
}

#[tokio::test]
async fn without_a_user_or_with_a_refused_exchange_nothing_is_sent() {
    let (endpoint, base) = start().await;
    let auth = exchange_authenticator(&base).await;
    let error = bearer_as(&auth, None).await.expect_err("no caller");
    assert!(
        error.contains("\"cc\" (acts for the signed-in user") && error.contains("carries none"),
        "{error}"
    );
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 0);
    endpoint.reject.store(true, Ordering::SeqCst);
    let alice = user("alice", "alice-mcp-token", Duration::from_secs(600));
    let error = bearer_as(&auth, Some(&alice)).await.expect_err("refused");
    assert!(
        error.starts_with("security scheme \"cc\": the token exchange at http://")
            && error.ends_with("answered 401 Unauthorized: invalid_client: unknown client"),
        "{error}"
    );
    assert!(
        !error.contains("alice-mcp-token") && !error.contains("s:e/c"),
        "{error}"
    );
}

#[tokio::test]
async fn an_upstream_401_exchanges_the_users_token_once_more() {
    let (endpoint, base) = start().await;
    let auth = exchange_authenticator(&base).await;
    let alice = user("alice", "alice-mcp-token", Duration::from_secs(600));
    *endpoint.accepted.lock().expect("lock") = "tok-2".into();
    let answer = auth
        .authorized(
            "api",
            &requirements(json!([{"cc": []}])),
            Some(&alice),
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(answer, (200, "echo: Bearer tok-2".to_string()));
    assert_eq!(
        endpoint.hits.load(Ordering::SeqCst),
        2,
        "one exchange, then one more"
    );
    // Only once: a second 401 is the answer.
    *endpoint.accepted.lock().expect("lock") = "never".into();
    let answer = auth
        .authorized(
            "api",
            &requirements(json!([{"cc": []}])),
            Some(&alice),
            request(&format!("{base}/data")),
            send,
            |r| r.0,
        )
        .await
        .expect("sent")
        .expect("answered");
    assert_eq!(answer.0, 401);
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn every_exchanged_token_a_cache_holds_is_redacted_however_many_users_came_since() {
    let (endpoint, base) = start().await;
    endpoint.expires_in.store(3600, Ordering::SeqCst);
    let auth = exchange_authenticator(&base).await;
    // More users than the 64 tokens the old window remembered.
    for n in 0..200 {
        let caller = user(
            &format!("user-{n}"),
            &format!("mcp-token-{n}"),
            Duration::from_secs(600),
        );
        bearer_as(&auth, Some(&caller)).await.expect("exchanged");
    }
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 200);
    // The first user's token is still cached, and still sent: still redacted.
    let first = user("user-0", "mcp-token-0", Duration::from_secs(600));
    assert_eq!(
        bearer_as(&auth, Some(&first)).await.expect("cached"),
        "Bearer tok-1"
    );
    assert_eq!(
        auth.redact("echoed: tok-1, tok-100 and tok-200"),
        "echoed: [REDACTED], [REDACTED] and [REDACTED]"
    );
}
