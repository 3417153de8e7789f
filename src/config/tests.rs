use super::specs_dir::api_name_from_spec;
use super::*;

#[test]
fn a_syntax_error_says_where_without_quoting_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "# first\nAPI_KEY=sk_live_Kq2sEcReT\n").expect("write");
    let error = Config::load(&path, &Overrides::default())
        .expect_err("not TOML")
        .to_string();
    assert!(error.contains("line 2, column 9"), "{error}");
    assert!(error.contains("config.toml"), "{error}");
    assert!(!error.contains("Kq2sEcReT"), "{error}");
    assert!(!error.contains("API_KEY"), "{error}");
}

#[test]
fn client_globs_match_case_insensitively() {
    let rule = |name: &str| ClientRule {
        name: name.into(),
        dialect: None,
        max_name_length: None,
    };
    assert!(rule("gemini*").matches("Gemini CLI"));
    assert!(rule("*cursor*").matches("cursor-vscode"));
    assert!(rule("claude-code").matches("Claude-Code"));
    assert!(!rule("claude-code").matches("claude-code-2"));
    assert!(rule("*").matches(""));
    assert!(rule("a*b*c").matches("aXbYc"));
    assert!(!rule("a*b*c").matches("aXcYb"));
    assert!(!rule("ab*ba").matches("aba"));
}

/// Loads a config whose one API, `api` (on `https://api.test`), has `api_toml` appended
/// to its table.
fn load(api_toml: &str) -> Result<Config, String> {
    load_api(&format!("base_url = \"https://api.test\"\n{api_toml}"))
}

/// Loads a config with `server_toml` (top-level tables) and one plain API.
fn server(server_toml: &str) -> Result<Config, String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let toml = format!("{server_toml}[apis.api]\nspec = \"api.json\"\n");
    std::fs::write(&path, toml).expect("write");
    Config::load(&path, &Overrides::default()).map_err(|e| e.to_string())
}

/// Loads a config whose one API, `api`, has `api_toml` appended to its table.
fn load_api(api_toml: &str) -> Result<Config, String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        format!("[apis.api]\nspec = \"api.json\"\n{api_toml}"),
    )
    .expect("write");
    Config::load(&path, &Overrides::default()).map_err(|e| e.to_string())
}

fn error(api_toml: &str) -> String {
    load(api_toml).expect_err("invalid")
}

#[test]
fn credentials_need_a_configured_base_url_unless_the_api_is_mocked() {
    let auth = "[apis.api.auth.bearer]\ntoken_env = \"T\"\n";
    assert_eq!(
        load_api(auth).expect_err("no base_url"),
        "invalid configuration: apis.api.base_url: is required when `auth` is set: credentials are sent only to the \
         origin of the configured base URL, never to one the spec names"
    );
    load_api(&format!("mock = true\n{auth}")).expect("a mock sends nothing");
    assert!(
        load("credential_origins = [\"https://eu.api.test/path\"]\n")
            .expect_err("not an origin")
            .contains("apis.api.credential_origins[0]")
    );
}

#[test]
fn auth_tables_of_every_kind_load() {
    let config = load(
        "forward_headers = [\"X-Tenant\", { from = \"X-Upstream-Token\", to = \"Authorization\" }]\n\
         [apis.api.auth.bearer]\ntoken_env = \"T\"\n\
         [apis.api.auth.key]\nvalue_env = \"K\"\n\
         [apis.api.auth.basic]\nusername_env = \"U\"\npassword_env = \"P\"\n\
         [apis.api.auth.cc]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\nscopes = [\"read\", \"write:all\"]\n\
         [apis.api.auth.own]\ntype = \"api_key\"\nin = \"cookie\"\nname = \"sid\"\nvalue_env = \"C\"\n\
         [apis.api.auth.gw]\ntype = \"oauth2\"\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\ntoken_url = \"https://auth.test/token\"\n",
    )
    .expect("valid");
    let api = &config.apis["api"];
    let kinds: Vec<(&str, AuthKind)> = api
        .auth
        .iter()
        .map(|(name, auth)| (name.as_str(), auth.checked_kind().expect("checked")))
        .collect();
    assert_eq!(
        kinds,
        [
            ("basic", AuthKind::Basic),
            ("bearer", AuthKind::Bearer),
            ("cc", AuthKind::OAuth2),
            ("gw", AuthKind::OAuth2),
            ("key", AuthKind::ApiKey),
            ("own", AuthKind::ApiKey),
        ]
    );
    assert_eq!(api.auth["own"].location, Some(ApiKeyLocation::Cookie));
    assert_eq!(
        api.forward_headers,
        [
            ForwardHeader::Same("X-Tenant".into()),
            ForwardHeader::Renamed(HeaderRename {
                from: "X-Upstream-Token".into(),
                to: "Authorization".into()
            })
        ]
    );
    assert_eq!(api.forward_headers[1].from(), "X-Upstream-Token");
    assert_eq!(api.forward_headers[1].to(), "Authorization");
}

#[test]
fn unknown_auth_keys_are_errors_naming_the_key() {
    let message = error("[apis.api.auth.bearer]\ntoken = \"plain-secret\"\n");
    assert!(
        message.contains("unknown field") && message.contains("token"),
        "{message}"
    );
    assert!(message.contains("apis.api.auth.bearer"), "{message}");
    let message = error("forward_headers = [{ from = \"A\", into = \"B\" }]\n");
    assert!(message.contains("apis.api.forward_headers"), "{message}");
    assert!(message.contains("unknown key `into`"), "{message}");
    let message = error("forward_headers = [{ from = \"A\" }]\n");
    assert!(message.contains("with both keys"), "{message}");
}

#[test]
fn auth_keys_must_match_the_type() {
    assert_eq!(
        error("[apis.api.auth.x]\ntoken_env = \"T\"\nvalue_env = \"V\"\n"),
        "invalid configuration: apis.api.auth.x.value_env: is not a key of a bearer credential (implied by token_env); it takes token_env"
    );
    assert_eq!(
        error(
            "[apis.api.auth.x]\ntype = \"basic\"\nusername_env = \"U\"\npassword_env = \"P\"\nscopes = []\n"
        ),
        "invalid configuration: apis.api.auth.x.scopes: is not a key of a type = \"basic\"; it takes username_env, password_env"
    );
    assert_eq!(
        error("[apis.api.auth.x]\nusername_env = \"U\"\n"),
        "invalid configuration: apis.api.auth.x.password_env: is required for a basic credential (implied by username_env)"
    );
    assert_eq!(
        error("[apis.api.auth.x]\ntype = \"api_key\"\nvalue_env = \"V\"\nname = \"k\"\n"),
        "invalid configuration: apis.api.auth.x.in: is required for a type = \"api_key\""
    );
    assert_eq!(
        error(
            "[apis.api.auth.x]\ntype = \"oauth2\"\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\n"
        ),
        "invalid configuration: apis.api.auth.x.token_url: is required for a type = \"oauth2\""
    );
    assert!(
        error("[apis.api.auth.x]\nin = \"header\"\nvalue_env = \"V\"\n").starts_with(
            "invalid configuration: apis.api.auth.x.in: describes a scheme of the config's own"
        )
    );
    assert!(
        error("[apis.api.auth.x]\n")
            .starts_with("invalid configuration: apis.api.auth.x: no credentials")
    );
    let message = error("[apis.api.auth.x]\ntype = \"digest\"\ntoken_env = \"T\"\n");
    assert!(message.contains("apis.api.auth.x"), "{message}");
}

#[test]
fn auth_values_are_checked() {
    assert!(error("[apis.api.auth.x]\ntoken_env = \"\"\n").starts_with(
        "invalid configuration: apis.api.auth.x.token_env: must name an environment variable"
    ));
    assert!(
        error("[apis.api.auth.x]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\ntoken_url = \"/token\"\n")
            .starts_with("invalid configuration: apis.api.auth.x.token_url: must be an absolute")
    );
    assert!(
        error("[apis.api.auth.x]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\nscopes = [\"a b\"]\n")
            .starts_with("invalid configuration: apis.api.auth.x.scopes:")
    );
    assert!(
        error("[apis.api.auth.x]\ntype = \"api_key\"\nin = \"header\"\nname = \"X Key\"\nvalue_env = \"V\"\n")
            .starts_with("invalid configuration: apis.api.auth.x.name:")
    );
}

#[test]
fn forwarded_headers_are_checked() {
    assert_eq!(
        error("forward_headers = [\"X Tenant\"]\n"),
        "invalid configuration: apis.api.forward_headers[0]: \"X Tenant\" is not a valid header name"
    );
    assert!(
        error("forward_headers = [\"X-A\", { from = \"X-B\", to = \"host\" }]\n").starts_with(
            "invalid configuration: apis.api.forward_headers[1]: \"host\" describes the connection"
        )
    );
    assert_eq!(
        error("forward_headers = [\"X-A\", { from = \"X-B\", to = \"x-a\" }]\n"),
        "invalid configuration: apis.api.forward_headers[1]: header \"x-a\" is forwarded twice"
    );
}

#[test]
fn api_names_from_spec_paths() {
    assert_eq!(
        api_name_from_spec("specs/Pet Store.v3.yaml"),
        "pet_store_v3"
    );
    assert_eq!(api_name_from_spec("https://x.test/openapi.json"), "openapi");
    assert_eq!(api_name_from_spec("///"), "api");
}

#[test]
fn confirm_takes_a_kind_or_tool_names_and_says_what_it_wants() {
    use super::{ConfirmKind, ConfirmPolicy};
    let policy = |toml: &str| load(toml).expect("loads").apis["api"].confirm.clone();
    assert_eq!(
        policy("confirm = \"destructive\"\n"),
        Some(ConfirmPolicy::Kind(ConfirmKind::Destructive))
    );
    assert_eq!(
        policy("confirm = [\"deletePet\"]\n"),
        Some(ConfirmPolicy::Tools(vec!["deletePet".into()]))
    );
    let wrong = error("confirm = \"always\"\n");
    assert!(
        wrong.contains("apis.api.confirm")
            && wrong.contains("\"destructive\", \"writes\", \"none\" or a list of tool names"),
        "{wrong}"
    );
    let config = server("[server.confirm]\nwithout_elicitation = \"proceed\"\n").expect("loads");
    assert_eq!(
        config.server.confirm.without_elicitation,
        super::WithoutElicitation::Proceed
    );
    assert_eq!(config.server.confirm.state_ttl_seconds, 300);
    assert!(
        server("[server.confirm]\nwithout_elicitation = \"ask\"\n")
            .expect_err("unknown")
            .contains("server.confirm.without_elicitation")
    );
}

#[test]
fn the_store_is_a_redis_url_without_a_password() {
    let config = server("[server.store]\nurl = \"redis://cache.internal:6380/2\"\n").expect("ok");
    assert_eq!(config.server.store.idempotency_ttl_seconds, 86_400);
    let leaked = server("[server.store]\nurl = \"redis://:hunter2@cache:6379\"\n")
        .expect_err("a password in the URL");
    assert!(leaked.contains("password_env"), "{leaked}");
    assert!(!leaked.contains("hunter2"), "{leaked}");
    assert!(
        server("[server.store]\nurl = \"memcached://cache:11211\"\n")
            .expect_err("not redis")
            .contains("redis://host:port/db")
    );
    assert!(
        load("idempotency_header = \"Idempotency Key\"\n")
            .expect_err("not a header name")
            .contains("apis.api.idempotency_header")
    );
}
