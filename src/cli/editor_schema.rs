//! JSON Schemas (draft 2020-12) of the two files users edit by hand, shipped in `schemas/`
//! so editors can complete and check them: `config.toml` (`#:schema` directive for Taplo /
//! Even Better TOML) and restmcp overlay files (`$schema:` key, or an editor association).
//!
//! This module owns those schema files and hands them out by name (`restmcp schema config`,
//! `restmcp schema overlay`). They describe, and must agree with, the serde types that stay
//! authoritative: [`crate::config::Config`] (with the checks of its `validate`) and
//! [`crate::catalog::patch::OverlayFile`]. The tests below hold both sides to the same
//! documents. Rules a schema cannot state (a prefix at most half of
//! `tools.max_name_length`, a header forwarded twice, an argument named in the path
//! template) are left to the code.

/// The schema of `config.toml`.
pub const CONFIG: &str = include_str!("../../schemas/config.schema.json");

/// The schema of restmcp overlay files (not of OpenAPI Overlay 1.0 documents).
pub const OVERLAY: &str = include_str!("../../schemas/overlay.schema.json");

/// The schema called `name`: `config` or `overlay`.
pub fn by_name(name: &str) -> Option<&'static str> {
    match name {
        "config" => Some(CONFIG),
        "overlay" => Some(OVERLAY),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use figment::providers::Format as _;
    use serde_json::Value;

    use super::*;
    use crate::catalog::handwritten::{self, ApiContext};
    use crate::catalog::patch::{self, PatchSource};
    use crate::config::{Config, Overrides};

    fn schema(text: &str) -> Value {
        serde_json::from_str(text).expect("schema is JSON")
    }

    fn validator(text: &str) -> jsonschema::Validator {
        jsonschema::validator_for(&schema(text)).expect("schema compiles")
    }

    /// The schema's complaints about `instance`, one line each.
    fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
        validator
            .iter_errors(instance)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    #[test]
    fn schemas_are_valid_draft_2020_12_and_compile() {
        for (name, text) in [("config", CONFIG), ("overlay", OVERLAY)] {
            let value = schema(text);
            assert_eq!(
                value["$schema"], "https://json-schema.org/draft/2020-12/schema",
                "{name}"
            );
            if let Err(e) = jsonschema::draft202012::meta::validate(&value) {
                panic!(
                    "{name}: not a valid 2020-12 schema: {e} at {}",
                    e.instance_path()
                );
            }
            validator(text);
            assert_eq!(by_name(name), Some(text));
        }
        assert_eq!(by_name("Config"), None);
    }

    /// The keys serde reads for `T`: the list its unknown-field error gives (every table
    /// type refuses unknown keys).
    fn keys_of<T: serde::de::DeserializeOwned>() -> Vec<String> {
        let Err(error) = serde_json::from_value::<T>(serde_json::json!({"__unknown__": 0})) else {
            panic!("a key no table has was accepted");
        };
        let said = error.to_string();
        let (_, expected) = said
            .split_once("expected")
            .unwrap_or_else(|| panic!("not an unknown-field error: {said}"));
        let mut keys: Vec<String> = expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        keys.sort();
        keys
    }

    /// The properties a schema's object at `pointer` names.
    fn properties(schema: &Value, pointer: &str) -> Vec<String> {
        let mut keys: Vec<String> = schema
            .pointer(pointer)
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("no properties at {pointer}"))
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    /// Every key the code reads is one the schema knows, and the other way round: a key
    /// added to a config or overlay type without its schema entry would have editors flag
    /// a valid file (the schemas refuse unknown keys).
    #[test]
    fn the_schemas_name_exactly_the_keys_the_code_reads() {
        use crate::catalog::patch as p;
        use crate::config as c;
        let config = schema(CONFIG);
        let overlay = schema(OVERLAY);
        let pairs: Vec<(&str, Vec<String>, Vec<String>)> = vec![
            (
                "config",
                keys_of::<Config>(),
                properties(&config, "/properties"),
            ),
            (
                "api",
                keys_of::<c::ApiConfig>(),
                properties(&config, "/$defs/api/properties"),
            ),
            (
                "server",
                keys_of::<c::ServerSettings>(),
                properties(&config, "/$defs/server/properties"),
            ),
            (
                "server.confirm",
                keys_of::<c::ConfirmSettings>(),
                properties(&config, "/$defs/server/properties/confirm/properties"),
            ),
            (
                "server.store",
                keys_of::<c::StoreSettings>(),
                properties(&config, "/$defs/server/properties/store/properties"),
            ),
            (
                "tools",
                keys_of::<c::ToolSettings>(),
                properties(&config, "/$defs/tools/properties"),
            ),
            (
                "reload",
                keys_of::<c::ReloadSettings>(),
                properties(&config, "/$defs/reload/properties"),
            ),
            (
                "loading",
                keys_of::<c::LoadingSettings>(),
                properties(&config, "/$defs/loading/properties"),
            ),
            (
                "auth",
                keys_of::<c::AuthConfig>(),
                properties(&config, "/$defs/auth/properties"),
            ),
            (
                "oauth",
                keys_of::<c::OAuthSettings>(),
                properties(&config, "/$defs/oauth/properties"),
            ),
            (
                "resources",
                keys_of::<c::ResourceSettings>(),
                properties(&config, "/$defs/resources/properties"),
            ),
            (
                "prompt",
                keys_of::<c::PromptSettings>(),
                properties(&config, "/$defs/prompt/properties"),
            ),
            (
                "prompt argument",
                keys_of::<c::PromptArgument>(),
                properties(&config, "/$defs/promptArgument/properties"),
            ),
            (
                "prompt message",
                keys_of::<c::PromptMessage>(),
                properties(&config, "/$defs/promptMessage/properties"),
            ),
            (
                "prompt operation",
                keys_of::<c::OperationMessage>(),
                properties(
                    &config,
                    "/$defs/promptMessage/properties/operation/properties",
                ),
            ),
            (
                "complete source",
                keys_of::<c::CompleteSource>(),
                properties(&config, "/$defs/completeSource/properties"),
            ),
            (
                "overlay",
                keys_of::<p::OverlayFile>(),
                properties(&overlay, "/properties"),
            ),
            (
                "resource",
                keys_of::<crate::catalog::ResourcePatch>(),
                properties(&overlay, "/$defs/resource/properties"),
            ),
            (
                "tool patch",
                keys_of::<p::ToolPatch>(),
                properties(&overlay, "/$defs/toolPatch/properties"),
            ),
            (
                "response",
                keys_of::<p::ResponsePatch>(),
                properties(&overlay, "/$defs/response/properties"),
            ),
            (
                "argument patch",
                keys_of::<p::ArgumentPatch>(),
                properties(&overlay, "/$defs/argumentPatch/properties"),
            ),
            (
                "new tool",
                keys_of::<p::NewTool>(),
                properties(&overlay, "/$defs/newTool/properties"),
            ),
        ];
        let mut wrong = Vec::new();
        for (table, code, schema) in pairs {
            if code != schema {
                wrong.push(format!(
                    "{table}: code reads {code:?}, schema names {schema:?}"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// A prompt has one shape in `config.toml` and in overlays: both schemas define it
    /// alike.
    #[test]
    fn both_schemas_define_prompts_alike() {
        let (config, overlay) = (schema(CONFIG), schema(OVERLAY));
        for definition in [
            "prompt",
            "promptArgument",
            "promptMessage",
            "completeSource",
        ] {
            assert_eq!(
                config["$defs"][definition], overlay["$defs"][definition],
                "{definition}"
            );
        }
    }

    /// Editors show `description` (and `default`) on hover and completion.
    #[test]
    fn every_property_has_a_description() {
        fn walk(node: &Value, at: &str, missing: &mut Vec<String>) {
            match node {
                Value::Object(map) => {
                    for (key, value) in map {
                        match (key.as_str(), value) {
                            ("properties", Value::Object(properties)) => {
                                for (name, property) in properties {
                                    let at = format!("{at}/properties/{name}");
                                    if property.get("description").is_none() {
                                        missing.push(at.clone());
                                    }
                                    walk(property, &at, missing);
                                }
                            }
                            _ => walk(value, &format!("{at}/{key}"), missing),
                        }
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk(item, &format!("{at}/{i}"), missing);
                    }
                }
                _ => {}
            }
        }
        for text in [CONFIG, OVERLAY] {
            let mut missing = Vec::new();
            walk(&schema(text), "", &mut missing);
            // Subschemas that only narrow keys (`if`, `not`, `anyOf` branches) are not
            // where editors look for descriptions.
            missing.retain(|at| {
                !["/if/", "/then/", "/else/", "/not/", "/anyOf/"]
                    .iter()
                    .any(|part| at.contains(part))
            });
            assert!(missing.is_empty(), "no description: {missing:#?}");
        }
    }

    /// The JSON value figment reads from the TOML file at `path`.
    fn toml_value(path: &Path) -> Value {
        figment::Figment::from(figment::providers::Toml::file_exact(path))
            .extract::<Value>()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Writes `toml` as `config.toml` in a fresh directory (with an empty `specs/` for
    /// `specs_dir`) and returns what the schema and [`Config::load`] make of it.
    fn check_config(toml: &str) -> (Vec<String>, Result<Config, String>) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("specs")).expect("specs dir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, toml).expect("write config");
        let by_schema = violations(&validator(CONFIG), &toml_value(&path));
        let by_code = Config::load(&path, &Overrides::default()).map_err(|e| e.to_string());
        (by_schema, by_code)
    }

    #[test]
    fn the_shipped_config_points_at_the_schema_and_validates() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = root.join("config.toml");
        let text = std::fs::read_to_string(&path).expect("config.toml");
        let directive = text.lines().next().unwrap_or_default();
        assert_eq!(directive, "#:schema ./schemas/config.schema.json");
        let target = directive.trim_start_matches("#:schema ");
        assert_eq!(
            std::fs::read_to_string(root.join(target)).expect("schema file"),
            CONFIG
        );
        let value = toml_value(&path);
        assert_eq!(violations(&validator(CONFIG), &value), Vec::<String>::new());
        Config::load(&path, &Overrides::default()).expect("the shipped config loads");
    }

    /// Between them these set every key of the configuration.
    const VALID_CONFIGS: [&str; 5] = [
        r#"#:schema ./schemas/config.schema.json
specs_dir = "specs"

[server]
listen = "0.0.0.0:9000"
allowed_hosts = ["mcp.example.com"]
allowed_origins = ["https://app.example.com"]
sessions = false
json_response = false
max_request_bytes = 1048576
page_size = 1
max_message_bytes = 65536
max_stdio_message_bytes = 0
legacy_sse = false
require_accept = false
cors_origins = ["https://app.example.com", "http://localhost:5173"]
shutdown_grace_seconds = 5
max_in_flight_per_client = 0
metrics = false
threads = 2
console = true
console_arguments = true
header_read_timeout_seconds = 5
body_read_timeout_seconds = 20
idle_timeout_seconds = 120
max_connections = 500
max_sessions = 100
session_idle_seconds = 600
max_sse_streams = 50

[server.auth]
tokens_env = ["RESTMCP_TOKEN", "RESTMCP_TOKEN_NEXT"]
tokens_file = "secrets/tokens"
api_key_header = "X-API-Key"
protect_metrics = true

[server.oauth]
resource = "https://mcp.example.com/mcp"
issuers = ["https://login.example.com/tenant", "http://127.0.0.1:9000"]
scopes = ["mcp:tools"]
algorithms = ["RS256", "ES256", "HS256"]
hmac_secret_env = "RESTMCP_OAUTH_HMAC"
clock_skew_seconds = 30
jwks_refresh_seconds = 120
resource_name = "Example tools"

[server.oauth.introspection]
client_id = "restmcp"
client_secret_env = "RESTMCP_INTROSPECTION_SECRET"
url = "https://login.example.com/tenant/introspect"

[server.tls]
cert = "tls/cert.pem"
key = "tls/key.pem"

[server.readiness]
probe_upstreams = true
interval_seconds = 0.5
timeout_seconds = 3600

[log]
format = "json"
level = "restmcp=debug,info"

[tools]
max_name_length = 16
max_description_length = 0
max_output_schema_bytes = 0
max_input_schema_bytes = 0
auto_budget_tokens = 0
dialect = "openai-strict"
clients = [{ name = "gemini*", dialect = "gemini", max_name_length = 48 }, { name = "claude-code" }]

[reload]
enabled = false
interval_ms = 50
url_interval_seconds = 1
timeout_seconds = 5

[loading]
max_document_bytes = 1048576
max_api_bytes = 4194304
max_yaml_alias_values = 0
ref_origins = ["https://schemas.example.com", "http://127.0.0.1:8081/"]
allow_private_addresses = true
ref_dirs = ["shared-schemas"]

[apis.petstore]
spec = "specs/petstore.yaml"
overlays = ["specs/extra.overlay.yaml"]
read_only = true
include = { tags = ["pet"], methods = ["GET", "post"], paths = ["/pet/**"], operations = ["getPetById", "GET /store/inventory"] }
exclude = [{ operations = ["deletePet"] }, { paths = ["/user/*"], methods = ["delete"] }]
base_url = "https://petstore.example.com/api/v3"
prefix = "pet_"
timeout_seconds = 0.5
tool_timeouts = { findPetsByStatus = 3600, addPet = 12.5 }
max_response_bytes = 0
max_retries = 10
accept = "application/json, application/xml;q=0.5, text/*; charset=\"utf-8\""
compression = false
follow_redirects = ["https://cdn.example.com", "http://127.0.0.1:8081"]
forward_headers = ["X-Tenant", { from = "X-Upstream-Token", to = "Authorization" }]
probe_path = "/health"
discovery = "search"
dialect = "full"
pinned = ["getPetById"]
max_description_length = 200
max_parameter_description_length = 0
rate_limit = { per_second = 0.5 }
tool_rate_limits = { addPet = { per_second = 10, burst = 0 } }
confirm = ["deletePet"]
idempotency_header = "Idempotency-Key"
long_running = ["addPet"]
max_result_tokens = 5000
max_page_size = 50

[resources]
poll_seconds = 86400
max_subscriptions = 1
max_subscriptions_per_session = 1
ttl_seconds = 0

[prompts.pet_report]
title = "Report on a pet"
description = "Write a short report on one pet."
arguments = [
  { name = "petId", title = "Pet", description = "The pet's id", required = true, complete = { tool = "findPetsByStatus", values = "/*/id", arguments = { status = "available" } } },
  { name = "tone", enum = ["short", "long"] },
  { name = "owner", complete = { tool = "listUsers", values = "" } },
]
messages = [
  { text = "Report on pet {{petId}}, {{tone}}." },
  { role = "assistant", resource = "petstore://pets/{{petId}}" },
  { role = "user", operation = { tool = "getPetById", arguments = { petId = "{{petId}}" } } },
  { operation = { tool = "getInventory" } },
]

[prompts.hello-2]
messages = [{ text = "Hello" }]

[apis.petstore.auth.bearer]
token_env = "PETSTORE_TOKEN"

[apis.petstore.auth.api_key]
value_env = "PETSTORE_API_KEY"

[apis.petstore.auth.basic]
username_env = "PETSTORE_USER"
password_env = "PETSTORE_PASSWORD"

[apis.petstore.auth.petstore_auth]
client_id_env = "PETSTORE_CLIENT_ID"
client_secret_env = "PETSTORE_CLIENT_SECRET"
token_url = "https://auth.example.com/oauth/token"
scopes = ["read:pets", "write:pets"]
"#,
        // Schemes of the config's own, with an explicit type.
        r#"[server]
listen = "[::1]:8080"

[tools]
max_name_length = 128

[apis.internal-2]
spec = "https://api.example.com/openapi.json"
base_url = "https://api.example.com"
credential_origins = ["https://eu.api.example.com", "http://127.0.0.1:8081"]
prefix = ""
max_retries = 0

[apis.internal-2.auth.gateway]
type = "api_key"
in = "cookie"
name = "sid"
value_env = "GATEWAY_KEY"

[apis.internal-2.auth.token]
type = "bearer"
token_env = "TOKEN"

[apis.internal-2.auth.login]
type = "basic"
username_env = "U"
password_env = "P"

[apis.internal-2.auth.machine]
type = "oauth2"
client_id_env = "I"
client_secret_env = "S"
token_url = "http://127.0.0.1:9999/token"
scopes = []

[apis.internal-2.auth.user]
type = "oauth2"
client_id_env = "I"
client_secret_env = "S"

[apis.internal-2.auth.user.token_exchange]
token_url = "https://login.example.com/token"
audience = "internal-2"
resource = "https://internal-2.example.com/"
scopes = ["orders:read"]
"#,
        // Hand-written tools only: overlays and a base_url instead of a spec.
        r#"[apis.ping]
overlays = ["ping.overlay.yaml"]
base_url = "http://localhost:8080"
include = []
"#,
        // Nothing but a directory of specs.
        "specs_dir = \"specs\"\n",
        "[apis.a]\nspec = \"a.json\"\n",
    ];

    #[test]
    fn configs_setting_every_key_validate_and_load() {
        for toml in VALID_CONFIGS {
            let (by_schema, by_code) = check_config(toml);
            assert_eq!(by_schema, Vec::<String>::new(), "schema rejects:\n{toml}");
            if let Err(e) = by_code {
                panic!("Config::load rejects: {e}\n{toml}");
            }
        }
    }

    /// Each is one mistake, appended to a valid API table (or replacing the file when it
    /// starts with `!`).
    const INVALID_CONFIGS: &[&str] = &[
        // unknown keys
        "[toolz]\nmax_name_length = 64\n",
        "base_ulr = \"http://x.test\"\n",
        "[apis.api.auth.bearer]\ntoken = \"plain-secret\"\n",
        "include = { tag = [\"pet\"] }\n",
        "forward_headers = [{ from = \"A\", into = \"B\" }]\n",
        "!\"$schema\" = \"./schemas/config.schema.json\"\n[apis.api]\nspec = \"api.json\"\n",
        // wrong types
        "[tools]\nmax_name_length = \"64\"\n",
        "read_only = \"yes\"\n",
        "forward_headers = \"X-Tenant\"\n",
        "overlays = \"a.overlay.yaml\"\n",
        "timeout_seconds = \"30\"\n",
        "[server]\nsessions = 1\n",
        "[reload]\ninterval_ms = 500.5\n",
        "[server]\nmax_request_bytes = -1\n",
        // out of range
        "[tools]\nmax_name_length = 15\n",
        "[tools]\nmax_name_length = 129\n",
        "timeout_seconds = 0\n",
        "timeout_seconds = 3600.5\n",
        "tool_timeouts = { slow = -1 }\n",
        "max_retries = 11\n",
        "[server]\npage_size = 0\n",
        "[reload]\ninterval_ms = 49\n",
        "[reload]\nurl_interval_seconds = 0\n",
        "[loading]\nmax_document_bytes = 0\n",
        "[loading]\nmax_api_bytes = -1\n",
        "[loading]\nref_origins = [\"https://schemas.example.com/path\"]\n",
        "[loading]\nref_origins = [\"file:///etc\"]\n",
        "[loading]\nref_dir = [\"x\"]\n",
        "[reload]\ntimeout_seconds = 0\n",
        "[reload]\ntimeout_seconds = 86401\n",
        // values of the wrong shape
        "[server]\nlisten = \"localhost:8080\"\n",
        "[server]\nlisten = \"127.0.0.1\"\n",
        "[server]\nlisten = \"127.0.0.1:65536\"\n",
        "!specs_dir = \"specs\"\n[apis.Pet]\nspec = \"a.json\"\n",
        "!specs_dir = \"specs\"\n[apis.\"pet store\"]\nspec = \"a.json\"\n",
        "prefix = \"pet prefix\"\n",
        "prefix = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n",
        "base_url = \"ftp://files.example.com\"\n",
        "follow_redirects = [\"ftp://files.example.com\"]\n",
        "follow_redirects = [\"https://user:pw@cdn.example.com\"]\n",
        "base_url = \"/api/v3\"\n",
        "include = { methods = [\"FETCH\"] }\n",
        // API tables that say too little
        "!",
        "!specs_dir = \"specs\"\n[apis.a]\nprefix = \"a_\"\n",
        "!specs_dir = \"specs\"\n[apis.a]\noverlays = [\"a.overlay.yaml\"]\n",
        // credentials
        "[apis.api.auth.x]\n",
        "[apis.api.auth.x]\ntoken_env = \"T\"\nvalue_env = \"V\"\n",
        "[apis.api.auth.x]\nusername_env = \"U\"\n",
        "[apis.api.auth.x]\nin = \"header\"\nvalue_env = \"V\"\n",
        "[apis.api.auth.x]\ntype = \"digest\"\ntoken_env = \"T\"\n",
        "[apis.api.auth.x]\ntype = \"basic\"\nusername_env = \"U\"\npassword_env = \"P\"\nscopes = []\n",
        "[apis.api.auth.x]\ntype = \"api_key\"\nvalue_env = \"V\"\nname = \"k\"\n",
        "[apis.api.auth.x]\ntype = \"api_key\"\nin = \"body\"\nname = \"k\"\nvalue_env = \"V\"\n",
        "[apis.api.auth.x]\ntype = \"api_key\"\nin = \"header\"\nname = \"X Key\"\nvalue_env = \"V\"\n",
        "[apis.api.auth.x]\ntype = \"oauth2\"\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\n",
        "[apis.api.auth.x]\ntoken_env = \"\"\n",
        "[apis.api.auth.x]\ntoken_env = \"A=B\"\n",
        // credentials need the operator's base_url, and go only to origins
        "[apis.api.auth.bearer]\ntoken_env = \"T\"\n",
        "base_url = \"https://api.test\"\ncredential_origins = [\"https://a.test/path\"]\n",
        "[apis.api.auth.x]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\ntoken_url = \"/token\"\n",
        "[apis.api.auth.x]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\nscopes = [\"a b\"]\n",
        // forwarded headers
        "forward_headers = [\"X Tenant\"]\n",
        "forward_headers = [\"Host\"]\n",
        "forward_headers = [{ from = \"X-B\", to = \"content-length\" }]\n",
        "forward_headers = [{ from = \"A\" }]\n",
        "forward_headers = [{ from = \"A\", to = 1 }]\n",
        // the MCP endpoint
        "[server.auth]\n",
        "[server.auth]\ntokens_env = []\n",
        "[server.auth]\ntokens_env = [\"\"]\n",
        "[server.auth]\ntokens = [\"plain-secret\"]\n",
        "[server.auth]\ntokens_env = [\"T\"]\napi_key_header = \"X Key\"\n",
        "[server.tls]\ncert = \"cert.pem\"\n",
        "[server.oauth]\nresource = \"https://mcp.example.com/mcp\"\n",
        "[apis.api.auth.u]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\ntoken_exchange = { token_url = \"https://as.example/token\" }\n",
        "[apis.api.auth.u]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\ntoken_exchange = { token_url = \"as.example\", audience = \"x\" }\n",
        "[apis.api.auth.u]\nclient_id_env = \"I\"\nclient_secret_env = \"S\"\ntoken_url = \"https://as.example/t\"\ntoken_exchange = { token_url = \"https://as.example/token\", audience = \"x\" }\n",
        "[apis.api.auth.u]\nvalue_env = \"V\"\ntoken_exchange = { token_url = \"https://as.example/token\", audience = \"x\" }\n",
        "[server.oauth]\nresource = \"http://mcp.example.com/mcp\"\nissuers = [\"https://as.example\"]\n",
        "[server.oauth]\nresource = \"https://mcp.example.com/mcp\"\nissuers = []\n",
        "[server.oauth]\nresource = \"https://mcp.example.com/mcp\"\nissuers = [\"http://as.example\"]\n",
        "[server.oauth]\nresource = \"https://m.example/mcp\"\nissuers = [\"https://as.example\"]\nalgorithms = [\"none\"]\n",
        "[server.oauth]\nresource = \"https://m.example/mcp\"\nissuers = [\"https://as.example\"]\nscopes = [\"two words\"]\n",
        "[server.oauth]\nresource = \"https://m.example/mcp\"\nissuers = [\"https://as.example\"]\nintrospection = { client_id = \"rs\" }\n",
        "[server]\ncors_origins = [\"https://app.example.com/path\"]\n",
        "[server]\ncors_origins = [\"app.example.com\"]\n",
        "[server]\nshutdown_grace_seconds = -1\n",
        "[server.readiness]\ninterval_seconds = 0\n",
        "[server]\nheader_read_timeout_seconds = 0\n",
        "[server]\nidle_timeout_seconds = 86401\n",
        "[server]\nmax_connections = 0\n",
        "[server]\nmax_sse_streams = -1\n",
        "[server]\nmax_message_bytes = 1000\n",
        "[server]\nmax_stdio_message_bytes = 65535\n",
        "[log]\nformat = \"xml\"\n",
        "rate_limit = { per_second = 0 }\n",
        "rate_limit = { burst = 5 }\n",
        "tool_rate_limits = { addPet = 10 }\n",
        "probe_path = \"health\"\n",
        "accept = \"json\"\n",
        "accept = \"*/json\"\n",
        "accept = \"application/json,\"\n",
        "accept = \"application/json;q\"\n",
        "compression = \"gzip\"\n",
        "discovery = \"some\"\n",
        "[tools]\nauto_budget_tokens = -1\n",
        "dialect = \"openai\"\n",
        "[tools]\nclients = [{ name = \"x\", max_name_length = 8 }]\n",
        "[tools]\nclients = [{ name = \"\" }]\n",
        "[tools]\nclients = [{ dialect = \"gemini\" }]\n",
        "pinned = \"getPetById\"\n",
        "max_parameter_description_length = -1\n",
        "max_page_size = 0\n",
        "max_result_tokens = -1\n",
        "long_running = \"startJob\"\n",
        // [resources]
        "[resources]\npoll = 5\n",
        "[resources]\npoll_seconds = 0\n",
        "[resources]\npoll_seconds = 86401\n",
        "[resources]\npoll_seconds = 1.5\n",
        "[resources]\nmax_subscriptions = 0\n",
        "[resources]\nmax_subscriptions_per_session = 0\n",
        "[resources]\nttl_seconds = -1\n",
        // [prompts.NAME]
        "[prompts.p]\ndescription = \"no messages\"\n",
        "[prompts.p]\nmessages = [{ txt = \"typo\" }]\n",
        "[prompts.p]\nmessages = [{ role = \"system\", text = \"x\" }]\n",
        "[prompts.p]\nmessages = [{ text = \"x\" }]\narguments = [{ name = \"a\", requird = true }]\n",
        "[prompts.p]\nmessages = [{ text = \"x\" }]\narguments = [{ description = \"no name\" }]\n",
        "[prompts.p]\nmessages = [{ text = \"x\" }]\narguments = [{ name = \"a\", enum = \"b\" }]\n",
        "[prompts.p]\nmessages = [{ text = \"{{a}}\" }]\narguments = [{ name = \"a\", complete = { tool = \"t\" } }]\n",
        "[prompts.p]\nmessages = [{ operation = { tool = \"t\", args = {} } }]\n",
        "[prompts.p]\nmessages = [{ operation = { arguments = {} } }]\n",
        "[prompts]\np = \"text\"\n",
    ];

    #[test]
    fn configs_with_a_mistake_are_rejected_by_schema_and_code() {
        for mistake in INVALID_CONFIGS {
            let toml = match mistake.strip_prefix('!') {
                Some(whole) => whole.to_string(),
                None => format!("[apis.api]\nspec = \"api.json\"\n{mistake}"),
            };
            let (by_schema, by_code) = check_config(&toml);
            assert!(!by_schema.is_empty(), "schema accepts:\n{toml}");
            assert!(by_code.is_err(), "Config::load accepts:\n{toml}");
        }
    }

    /// What the schema cannot say: these pass it, and only the code refuses them.
    #[test]
    fn rules_only_the_code_checks() {
        for mistake in [
            // a prefix longer than half of the max_name_length set elsewhere
            "prefix = \"abcdefghi\"\n[tools]\nmax_name_length = 16\n",
            // one target, twice (case-insensitively)
            "forward_headers = [\"X-A\", { from = \"X-B\", to = \"x-a\" }]\n",
            // a log filter that does not parse
            "[log]\nlevel = \"restmcp=loud\"\n",
            // an HMAC algorithm without the secret to check it
            "[server.oauth]\nresource = \"https://m.example/mcp\"\nissuers = [\"https://as.example\"]\nalgorithms = [\"HS256\"]\n",
            // a fragment in the resource
            "[server.oauth]\nresource = \"https://m.example/mcp#x\"\nissuers = [\"https://as.example\"]\n",
        ] {
            let toml = format!("[apis.api]\nspec = \"api.json\"\n{mistake}");
            let (by_schema, by_code) = check_config(&toml);
            assert_eq!(by_schema, Vec::<String>::new(), "{toml}");
            assert!(by_code.is_err(), "{toml}");
        }
    }

    /// What the catalog makes of `prompts` (with no tools to call): the checks a prompt
    /// only meets once the catalog is built.
    fn catalog_accepts_prompts(
        prompts: &std::collections::BTreeMap<String, crate::config::PromptSettings>,
    ) -> Result<(), String> {
        let catalog = crate::catalog::Catalog::default();
        crate::catalog::prompt::gather(prompts, &[], &catalog)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// Prompts the schema refuses and `Config::load` reads: the catalog refuses them.
    #[test]
    fn prompts_the_schema_and_the_catalog_refuse() {
        for mistake in [
            // no message
            "[prompts.p]\nmessages = []\n",
            // a message of two kinds, or of none
            "[prompts.p]\nmessages = [{ text = \"x\", resource = \"a://b\" }]\n",
            "[prompts.p]\nmessages = [{ role = \"user\" }]\n",
            // a name clients cannot use
            "[prompts.\"pet report\"]\nmessages = [{ text = \"x\" }]\n",
            // values that are not a JSON pointer
            "[prompts.p]\nmessages = [{ text = \"{{a}}\" }]\narguments = [{ name = \"a\", complete = { tool = \"t\", values = \"*/id\" } }]\n",
        ] {
            let toml = format!("[apis.api]\nspec = \"api.json\"\n{mistake}");
            let (by_schema, by_code) = check_config(&toml);
            assert!(!by_schema.is_empty(), "schema accepts:\n{toml}");
            let config = by_code.unwrap_or_else(|e| panic!("Config::load rejects: {e}\n{toml}"));
            assert!(
                catalog_accepts_prompts(&config.prompts).is_err(),
                "the catalog accepts:\n{toml}"
            );
        }
    }

    /// Parses an overlay as the code does and builds its hand-written tools.
    fn code_accepts_overlay(yaml: &str) -> Result<(), String> {
        let file =
            patch::parse_file("test.overlay.yaml", yaml.as_bytes()).map_err(|e| e.to_string())?;
        let cx = ApiContext {
            api: "api",
            base_url: Some("http://127.0.0.1:1"),
            mock: false,
            max_name_length: 128,
            accept: None,
        };
        for (name, tool) in &file.add.0 {
            let source = PatchSource {
                kind: "overlay",
                location: format!("test.overlay.yaml#/add/{name}"),
            };
            handwritten::build(&cx, name, tool, &source).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn schema_violations_of_overlay(yaml: &str) -> Vec<String> {
        let value = crate::spec::parse::parse_document("test.overlay.yaml", yaml.as_bytes())
            .expect("YAML parses");
        violations(&validator(OVERLAY), &value)
    }

    /// Between them these set every key of the overlay format.
    const VALID_OVERLAYS: [&str; 5] = [
        "tools:\nadd:\n",
        r#"$schema: ../schemas/overlay.schema.json
tools:
  getPetById:
    name: get_pet
    title: Get a pet
    description: Returns one pet.
    append_description: Ask for the id first.
    hidden: false
    annotations: {readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false}
    timeout_seconds: 0.25
    accept: application/vnd.github+json
    response: {fields: [id, name, owner.login], max_bytes: 1}
    arguments:
      petId: {name: id, description: The pet's id, required: true, default: 1}
      status: {enum: [available, sold], default: available, ask: true}
      tenant: {value_env: PETSTORE_TENANT}
      api_version: {value: {major: 3}}
    resource:
      uri: petstore://pets/{petId}
      name: pet
      title: A pet
      description: One pet of the store.
      mime_type: application/json
      complete:
        petId: {tool: findPetsByStatus, values: /*/id, arguments: {status: available}}
  findPetsByStatus:
    resource: {uri: "petstore://pets{?status}"}
  "DELETE /pet/{petId}": {hidden: true}
  "get /store/inventory":
    arguments: {}
add:
  ping:
    title: Ping
    description: Checks the service is up
    method: GET
    path: /ping
    resource: {uri: "api://ping", name: ping, mime_type: text/plain}
  item:
    description: Reads an item.
    method: GET
    path: /items/{id}
    arguments:
      id: {in: path, type: integer}
      fields: {in: query, type: string}
    resource:
      uri: "api://items/{id}{?fields}"
      complete: {id: {tool: ping, values: ""}}
  set_item:
    description: Replaces an item.
    method: put
    path: /items/{id}
    body_media_type: application/x-www-form-urlencoded
    arguments:
      id: {in: path, type: integer, description: The item's id}
      q: {in: query, type: string, required: true}
      X-Trace.Id: {in: header, type: string, format: uuid}
      session: {in: cookie, type: string}
      body_field: {in: body, type: array, items: {type: string}, minItems: 1}
      nested: {type: object, properties: {a: {type: string}}, additionalProperties: false}
      mode: {enum: [fast, slow], default: fast}
    output_schema: {type: object, properties: {ok: {type: boolean}}}
    annotations: {idempotentHint: true}
    timeout_seconds: 3600
    accept: "application/json, */*;q=0.1"
    response: {fields: [ok], max_bytes: 1024}
prompts:
  pet_report:
    title: Report on a pet
    description: Write a short report on one pet.
    arguments:
      - {name: petId, title: Pet, description: The pet's id, required: true, complete: {tool: findPetsByStatus, values: /*/id, arguments: {status: available}}}
      - {name: tone, enum: [short, long]}
    messages:
      - {text: "Report on pet {{petId}}, {{tone}}."}
      - {role: assistant, resource: "petstore://pets/{{petId}}"}
      - {role: user, operation: {tool: getPetById, arguments: {petId: "{{petId}}"}}}
"#,
        "{}\n",
        "tools: {}\nadd: {}\nprompts: {}\n",
        r#"{"add": {"status": {"description": "Status.", "method": "TRACE", "path": "/", "output_schema": true, "arguments": {}}}}"#,
    ];

    #[test]
    fn overlays_setting_every_key_validate_and_parse() {
        for yaml in VALID_OVERLAYS {
            assert_eq!(
                schema_violations_of_overlay(yaml),
                Vec::<String>::new(),
                "schema rejects:\n{yaml}"
            );
            if let Err(e) = code_accepts_overlay(yaml) {
                panic!("restmcp rejects: {e}\n{yaml}");
            }
        }
    }

    #[test]
    fn overlays_with_a_mistake_are_rejected() {
        // Rejected by the schema and by restmcp (parsing, or building the added tool).
        for yaml in [
            "tools:\n  x:\n    nmae: y\n",
            "tolls: {}\n",
            "tools:\n  x:\n    annotations: {read_only_hint: true}\n",
            "tools:\n  x:\n    response: {field: [id]}\n",
            "tools:\n  x:\n    arguments:\n      a: {descripton: typo}\n",
            "add:\n  x: {method: GET, path: /x, description: X, summary: typo}\n",
            "add:\n  x: {method: GET, description: X}\n",
            "add:\n  x: {method: FETCH, path: /x, description: X}\n",
            "add:\n  x: {method: GET, path: x, description: X}\n",
            "add:\n  x: {method: GET, path: /x, description: \"  \"}\n",
            "add:\n  bad name: {method: GET, path: /x, description: X}\n",
            "add:\n  x:\n    {method: GET, path: /x, description: X, arguments: {q: {in: body2}}}\n",
            "add:\n  x:\n    {method: GET, path: /x, description: X, arguments: {q: {required: yes please}}}\n",
            "add:\n  x:\n    {method: GET, path: /x, description: X, arguments: {\"a b\": {}}}\n",
            "add:\n  x: {method: GET, path: /x, description: X, timeout_seconds: 0}\n",
            "add:\n  x: {method: GET, path: /x, description: X, response: {max_bytes: 0}}\n",
            "add:\n  x: {method: GET, path: /x, description: X, output_schema: 3}\n",
            "add:\n  x: {method: GET, path: /x, description: X, accept: json}\n",
            "add:\n  x: {method: GET, path: /x, description: X, accept: \"a/b\\r\\nX: y\"}\n",
            "add:\n  x: {method: GET, path: /x, description: X, resource: {url: \"a://x\"}}\n",
            "add:\n  x: {method: GET, path: /x, description: X, resource: {uri: \"x\"}}\n",
            "add:\n  x: {method: GET, path: /x, description: X, resource: {uri: \"a://x\", complete: {y: {tool: t}}}}\n",
            "prompts:\n  p: {description: no messages}\n",
            "prompts:\n  p: {messages: [{txt: typo}]}\n",
            "prompts:\n  p: {messages: [{role: system, text: x}]}\n",
            "prompts: [p]\n",
        ] {
            assert!(
                !schema_violations_of_overlay(yaml).is_empty(),
                "schema accepts:\n{yaml}"
            );
            assert!(
                code_accepts_overlay(yaml).is_err(),
                "restmcp accepts:\n{yaml}"
            );
        }
        // Rejected by the schema; restmcp parses them and refuses them when it applies the
        // patch to the spec's tool.
        for yaml in [
            "tools:\n  x:\n    arguments:\n      a: {value: 1, value_env: A}\n",
            "tools:\n  x:\n    arguments:\n      a: {enum: []}\n",
            "tools:\n  x:\n    arguments:\n      a: {value: null}\n",
            "tools:\n  x:\n    name: \"get pet\"\n",
            "tools:\n  x:\n    timeout_seconds: 4000\n",
            "tools:\n  x:\n    response: {fields: [owner..login]}\n",
            "tools:\n  x:\n    accept: \"*/json\"\n",
        ] {
            assert!(
                !schema_violations_of_overlay(yaml).is_empty(),
                "schema accepts:\n{yaml}"
            );
            code_accepts_overlay(yaml).expect("parses");
        }
    }

    /// What the overlay schema cannot say about a resource: these pass it, and restmcp
    /// refuses them when it builds the tool.
    #[test]
    fn resource_rules_only_the_code_checks() {
        for yaml in [
            // only a GET operation can be a resource
            "add:\n  x: {method: POST, path: /x, description: X, resource: {uri: \"a://x\"}}\n",
            // a variable that is no argument of the tool
            "add:\n  x: {method: GET, path: /x, description: X, resource: {uri: \"a://{y}\"}}\n",
            // a required argument the URI cannot give
            "add:\n  x:\n    {method: GET, path: \"/x/{id}\", description: X, arguments: {id: {in: path, type: string}}, resource: {uri: \"a://x\"}}\n",
        ] {
            assert_eq!(
                schema_violations_of_overlay(yaml),
                Vec::<String>::new(),
                "{yaml}"
            );
            assert!(
                code_accepts_overlay(yaml).is_err(),
                "restmcp accepts:\n{yaml}"
            );
        }
    }

    #[test]
    fn an_openapi_overlay_is_not_a_restmcp_overlay() {
        let yaml = "overlay: 1.0.0\ninfo: {title: t, version: '1'}\nactions: []\n";
        assert!(!schema_violations_of_overlay(yaml).is_empty());
    }
}
