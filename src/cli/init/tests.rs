//! Unit tests of `restmcp init --spec`: the names it makes, and files written for small
//! descriptions, loaded back with the configuration loader and checked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::render::{api_name, env_base, toml_string};
use super::{Options, relative_to, write};
use crate::config::{AuthConfig, Config, Overrides};

#[test]
fn the_api_name_is_the_title_without_the_words_that_name_no_api() {
    assert_eq!(
        api_name("Swagger Petstore - OpenAPI 3.0").as_deref(),
        Some("petstore")
    );
    assert_eq!(api_name("GitHub v3 REST API").as_deref(), Some("github"));
    assert_eq!(
        api_name("Box Platform API").as_deref(),
        Some("box_platform")
    );
    assert_eq!(api_name("Twilio - Api").as_deref(), Some("twilio"));
    assert_eq!(
        api_name("GitHub's official OpenAPI spec + Octokit extension").as_deref(),
        Some("github")
    );
    assert_eq!(
        api_name("Ünïcode Café API v1beta").as_deref(),
        Some("n_code_caf")
    );
    assert_eq!(api_name("OpenAPI 3.1"), None);
    assert_eq!(api_name(""), None);
    let long = api_name("The Very Long Name Of An Enterprise Resource Planning Service")
        .unwrap_or_default();
    assert!(long.len() <= 32, "{long}");
    assert!(!long.ends_with('_'), "{long}");
}

#[test]
fn environment_variables_are_named_after_the_api_and_the_scheme() {
    assert_eq!(env_base("petstore", "api_key"), "PETSTORE_API_KEY");
    assert_eq!(env_base("petstore", "petstore_auth"), "PETSTORE_AUTH");
    assert_eq!(env_base("petstore", "petstore"), "PETSTORE");
    assert_eq!(env_base("my-api", "bearerAuth"), "MY_API_BEARER_AUTH");
    assert_eq!(env_base("x", "OAuth2.client"), "X_OAUTH2_CLIENT");
}

#[test]
fn toml_strings_escape_what_toml_requires() {
    assert_eq!(toml_string("a\"b\\c\n\u{7f}"), "\"a\\\"b\\\\c\\n\\u007F\"");
}

#[test]
fn a_spec_path_is_written_relative_to_the_config_directory() {
    assert_eq!(
        relative_to(Path::new("/a/b/specs/x.yaml"), Path::new("/a/b/conf")),
        PathBuf::from("../specs/x.yaml")
    );
    assert_eq!(
        relative_to(Path::new("/a/b/x.yaml"), Path::new("/a/b")),
        PathBuf::from("x.yaml")
    );
    assert_eq!(
        relative_to(Path::new("/elsewhere/x.yaml"), Path::new("/a/b")),
        PathBuf::from("/elsewhere/x.yaml")
    );
}

/// `restmcp init --spec` on `spec` (written into a fresh directory as `api.yaml`), the
/// config going to `conf/config.toml` there: the outcome, the directory and the config's path.
fn init(
    spec: &str,
    adjust: impl FnOnce(&mut Options),
) -> (anyhow::Result<ExitCode>, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec_path = dir.path().join("api.yaml");
    std::fs::write(&spec_path, spec).expect("write spec");
    let config = dir.path().join("conf/config.toml");
    let mut options = Options {
        config: config.clone(),
        spec: spec_path.to_string_lossy().into_owned(),
        name: None,
        base_url: None,
        force: false,
        mock: false,
    };
    adjust(&mut options);
    (write(&options), dir, config)
}

/// The written configuration, as the loader reads it (`apis.NAME` must exist).
fn loaded(config: &Path) -> Config {
    Config::load(config, &Overrides::default()).expect("the written config loads")
}

fn text(config: &Path) -> String {
    std::fs::read_to_string(config).expect("read config")
}

const SERVER_VARIABLES: &str = r#"
openapi: 3.0.3
info: {title: Weather Service API, version: "1"}
servers:
  - url: https://{region}.weather.test/{version}
    variables:
      region: {default: eu, enum: [eu, us]}
      version: {default: v2}
  - url: https://backup.weather.test
paths:
  /forecast:
    get:
      operationId: getForecast
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
"#;

#[test]
fn the_first_server_with_its_variables_defaults_is_the_base_url_and_the_spec_path_is_relative() {
    let (outcome, _dir, config) = init(SERVER_VARIABLES, |_| {});
    assert_eq!(outcome.expect("init"), ExitCode::SUCCESS);
    let written = text(&config);
    assert!(written.contains("[apis.weather_service]\n"), "{written}");
    assert!(written.contains("spec = \"../api.yaml\"\n"), "{written}");
    assert!(
        written.contains(
            "base_url = \"https://eu.weather.test/v2\"   # from the description's servers\n"
        ),
        "{written}"
    );
    assert!(
        !written.lines().any(|line| line.starts_with("mock")),
        "{written}"
    );
    assert!(
        written.contains("# 1 tools. discovery = \"auto\" (the default) lists all 1 (≈ "),
        "{written}"
    );
    assert!(
        written.contains("The description declares no security scheme"),
        "{written}"
    );
    let config = loaded(&config);
    let api = &config.apis["weather_service"];
    assert_eq!(api.base_url.as_deref(), Some("https://eu.weather.test/v2"));
    assert!(!api.mock);
    assert!(api.auth.is_empty());
}

#[test]
fn name_and_base_url_given_on_the_command_line_win() {
    let (outcome, _dir, config) = init(SERVER_VARIABLES, |options| {
        options.name = Some("wx".into());
        options.base_url = Some("http://127.0.0.1:9/api".into());
    });
    assert_eq!(outcome.expect("init"), ExitCode::SUCCESS);
    let config = loaded(&config);
    assert_eq!(
        config.apis["wx"].base_url.as_deref(),
        Some("http://127.0.0.1:9/api")
    );
}

#[test]
fn a_name_the_config_would_refuse_is_refused_before_anything_is_written() {
    let (outcome, _dir, config) = init(SERVER_VARIABLES, |options| {
        options.name = Some("Weather API".into());
    });
    let error = outcome.expect_err("a bad name");
    assert!(
        error.to_string().contains("--name \"Weather API\""),
        "{error}"
    );
    assert!(!config.exists());
}

const SWAGGER2: &str = r#"
swagger: "2.0"
info: {title: Legacy Orders, version: "1"}
host: orders.example.test:8443
basePath: /v1/
schemes: [http, https]
paths:
  /orders/{id}:
    get:
      operationId: getOrder
      parameters: [{name: id, in: path, required: true, type: string}]
      responses: {"200": {description: ok}}
"#;

#[test]
fn swagger_2_host_base_path_and_scheme_make_the_base_url() {
    let (outcome, _dir, config) = init(SWAGGER2, |_| {});
    assert_eq!(outcome.expect("init"), ExitCode::SUCCESS);
    let config = loaded(&config);
    assert_eq!(
        config.apis["legacy_orders"].base_url.as_deref(),
        Some("https://orders.example.test:8443/v1")
    );
}

const NO_SERVER: &str = r#"
openapi: 3.1.0
info: {title: Inventory, version: "1"}
servers: [{url: /api/v1}]
components:
  securitySchemes:
    api_key: {type: apiKey, in: header, name: X-Key}
security: [{api_key: []}]
paths:
  /items:
    get:
      operationId: listItems
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: array, items: {type: string}}, example: [a, b]}}
"#;

#[test]
fn without_a_usable_server_the_base_url_is_a_placeholder_and_the_api_is_mocked() {
    let (outcome, _dir, config) = init(NO_SERVER, |_| {});
    assert_eq!(outcome.expect("init"), ExitCode::SUCCESS);
    let written = text(&config);
    assert!(
        written.contains(
            "# base_url = \"https://…\"   # the description names no absolute server URL"
        ),
        "{written}"
    );
    assert!(
        written.contains("\nmock = true   # until then"),
        "{written}"
    );
    let config = loaded(&config);
    let api = &config.apis["inventory"];
    assert!(api.mock);
    assert_eq!(api.base_url, None);
    assert_eq!(
        api.auth["api_key"].value_env.as_deref(),
        Some("INVENTORY_API_KEY")
    );
}

const EVERY_SCHEME: &str = r#"
openapi: 3.0.3
info: {title: Secured, version: "1"}
servers: [{url: "https://secured.example.test"}]
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: api_key}
    bearerAuth: {type: http, scheme: bearer}
    basic: {type: http, scheme: basic}
    machine:
      type: oauth2
      flows: {clientCredentials: {tokenUrl: "https://secured.example.test/token", scopes: {read: read}}}
    user:
      type: oauth2
      flows: {authorizationCode: {authorizationUrl: "https://secured.example.test/authorize", tokenUrl: "https://secured.example.test/token", scopes: {}}}
    "oidc login": {type: openIdConnect, openIdConnectUrl: "https://secured.example.test/.well-known/openid-configuration"}
    mtls: {type: mutualTLS}
security: [{key: []}, {bearerAuth: []}, {basic: []}, {machine: [read]}, {user: []}, {"oidc login": []}]
paths:
  /things:
    get:
      operationId: listThings
      responses: {"200": {description: ok}}
"#;

#[test]
fn every_scheme_gets_a_table_with_environment_variables_or_says_what_to_do_instead() {
    let (outcome, _dir, config) = init(EVERY_SCHEME, |_| {});
    assert_eq!(outcome.expect("init"), ExitCode::SUCCESS);
    let written = text(&config);
    let config = loaded(&config);
    let auth = &config.apis["secured"].auth;
    let expected = [
        (
            "key",
            AuthConfig {
                value_env: Some("SECURED_KEY".into()),
                ..AuthConfig::default()
            },
        ),
        (
            "bearerAuth",
            AuthConfig {
                token_env: Some("SECURED_BEARER_AUTH_TOKEN".into()),
                ..AuthConfig::default()
            },
        ),
        (
            "basic",
            AuthConfig {
                username_env: Some("SECURED_BASIC_USERNAME".into()),
                password_env: Some("SECURED_BASIC_PASSWORD".into()),
                ..AuthConfig::default()
            },
        ),
        (
            "machine",
            AuthConfig {
                client_id_env: Some("SECURED_MACHINE_CLIENT_ID".into()),
                client_secret_env: Some("SECURED_MACHINE_CLIENT_SECRET".into()),
                ..AuthConfig::default()
            },
        ),
    ];
    assert_eq!(auth.len(), expected.len(), "{auth:?}");
    for (scheme, credential) in expected {
        assert_eq!(auth[scheme], credential, "{scheme}");
    }
    assert!(
        written.contains("# user: oauth2 without a client credentials flow"),
        "{written}"
    );
    assert!(
        written.contains("# [apis.secured.auth.user]\n"),
        "{written}"
    );
    assert!(
        written.contains("# \"oidc login\": OpenID Connect")
            || written.contains("# oidc login: OpenID Connect"),
        "{written}"
    );
    assert!(
        written.contains("# mtls: mutualTLS, which restmcp cannot send."),
        "{written}"
    );
    assert!(
        written.contains("\"Acting for the user\" in docs/src/authentication.md"),
        "{written}"
    );
}

#[test]
fn an_existing_file_is_not_replaced_without_force() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "# mine\n").expect("write");
    let spec = dir.path().join("api.yaml");
    std::fs::write(&spec, SERVER_VARIABLES).expect("write spec");
    let mut options = Options {
        config: config.clone(),
        spec: spec.to_string_lossy().into_owned(),
        name: None,
        base_url: None,
        force: false,
        mock: false,
    };
    let error = write(&options).expect_err("refused");
    let message = error.to_string();
    assert!(message.contains(&config.display().to_string()), "{message}");
    assert!(message.contains("--force"), "{message}");
    assert_eq!(text(&config), "# mine\n");
    options.force = true;
    assert_eq!(write(&options).expect("forced"), ExitCode::SUCCESS);
    assert!(text(&config).contains("[apis.weather_service]"));
}

#[test]
fn a_description_that_does_not_load_writes_nothing() {
    let (outcome, dir, config) = init("openapi: 3.0.3\ninfo: [not, an, object\n", |_| {});
    assert!(outcome.is_err());
    assert!(!config.exists());
    assert!(!dir.path().join("conf").exists(), "not even its directory");
    let (outcome, _dir, config) = init(SERVER_VARIABLES, |options| {
        options.spec = "/nonexistent/openapi.yaml".into();
    });
    let error = format!("{:#}", outcome.expect_err("no such file"));
    assert!(error.contains("/nonexistent/openapi.yaml"), "{error}");
    assert!(!config.exists());
}

#[test]
fn the_shipped_petstore_gets_a_config_that_loads_and_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config.toml");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/petstore.yaml");
    let options = Options {
        config: config.clone(),
        spec: spec.to_string_lossy().into_owned(),
        name: None,
        base_url: None,
        force: false,
        mock: false,
    };
    assert_eq!(write(&options).expect("init"), ExitCode::SUCCESS);
    let written = text(&config);
    assert!(
        written.contains("# 19 tools. discovery = \"auto\" (the default) lists all 19 (≈ "),
        "{written}"
    );
    assert!(
        written.contains("within tools.auto_budget_tokens (25,000))."),
        "{written}"
    );
    let config = loaded(&config);
    let api = &config.apis["petstore"];
    assert_eq!(
        api.base_url.as_deref(),
        Some("http://127.0.0.1:18080/api/v3")
    );
    assert_eq!(
        api.auth["api_key"].value_env.as_deref(),
        Some("PETSTORE_API_KEY")
    );
    assert!(
        !api.auth.contains_key("petstore_auth"),
        "implicit-only oauth2 stays a comment"
    );
}
