//! Configuration: `config.toml`, overridden by `RESTMCP_`-prefixed environment variables
//! (nested keys joined with `__`), overridden by command-line flags.
//!
//! ```toml
//! [tools]
//! max_name_length = 64
//! max_description_length = 1024
//! max_output_schema_bytes = 16384
//!
//! [apis.petstore]
//! spec = "specs/petstore.yaml"          # path relative to this file, or an http(s) URL
//! base_url = "http://127.0.0.1:8080/v3" # optional: overrides the spec's servers
//! prefix = "pet_"                       # optional: prepended to every tool name
//! forward_headers = ["X-Tenant"]        # optional: headers of the MCP request passed on
//!
//! [apis.petstore.auth.api_key]          # credentials for the spec's scheme `api_key`
//! value_env = "PETSTORE_API_KEY"        # the NAME of the variable holding the key
//! ```
//!
//! APIs are a table keyed by name, rather than an array, so that one environment variable
//! can address one API: `RESTMCP_APIS__PETSTORE__BASE_URL=http://…`. Unknown keys and wrong
//! types are errors that name the key and where it was set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

pub use crate::schema::dialect::Dialect;
use crate::spec::{ApiKeyLocation, SpecSource};

/// The validated configuration.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub server: ServerSettings,
    #[serde(default)]
    pub tools: ToolSettings,
    #[serde(default)]
    pub apis: BTreeMap<String, ApiConfig>,
    /// A directory whose OpenAPI/Swagger files each become an API (named after the file)
    /// unless an `[apis.NAME]` table already uses them.
    #[serde(default)]
    pub specs_dir: Option<RelativePathBuf>,
    #[serde(default)]
    pub reload: ReloadSettings,
    #[serde(default)]
    pub loading: LoadingSettings,
    #[serde(default)]
    pub log: LogSettings,
}

/// How logs are written (always to stderr).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct LogSettings {
    /// `pretty` (human-readable lines), `json` (one object per line) or `compact`.
    pub format: LogFormat,
    /// A `tracing` filter such as `info` or `restmcp=debug,info`; `RUST_LOG` wins over it.
    /// The default leaves the MCP SDK's per-session lines (`rmcp` at info) out.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::Pretty,
            level: "info,rmcp=warn".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Pretty,
    Json,
    Compact,
}

/// Hot reload: what is watched and how often.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReloadSettings {
    /// Watch the config, specs and overlays and swap the tool set when they change.
    pub enabled: bool,
    /// How often files are checked, in milliseconds.
    pub interval_ms: u64,
    /// How often spec URLs are checked (conditional GET), in seconds.
    pub url_interval_seconds: u64,
    /// How long one reload may take, in seconds: a reload still loading after this (a spec
    /// URL that never answers, a file that blocks) is abandoned with an error, the last good
    /// tool set stays served, and the next change or SIGHUP starts a fresh one.
    pub timeout_seconds: u64,
}

/// The longest `reload.timeout_seconds`: one day.
const MAX_RELOAD_TIMEOUT_SECONDS: u64 = 24 * 60 * 60;

impl Default for ReloadSettings {
    fn default() -> Self {
        ReloadSettings {
            enabled: true,
            interval_ms: 500,
            url_interval_seconds: 60,
            timeout_seconds: 60,
        }
    }
}

/// What a spec and the documents it references may reach, and how much is read (issue #19).
/// The spec the operator names is trusted as a location; what it references is not.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadingSettings {
    /// The largest single document (spec or referenced file/URL), in bytes.
    pub max_document_bytes: u64,
    /// The most bytes all documents of one API may have together.
    pub max_api_bytes: u64,
    /// The most values YAML aliases may add (beyond what the text spells out) across all
    /// documents of one API: bounds a "billion laughs", also one split over files.
    pub max_yaml_alias_values: u64,
    /// Origins (`https://schemas.example.com`) `$ref`s may reach besides the root spec's
    /// own origin.
    pub ref_origins: Vec<String>,
    /// Let `$ref`s reach loopback, link-local, private and unspecified addresses (the root
    /// spec's own origin always may).
    pub allow_private_addresses: bool,
    /// Directories (relative to this file) file `$ref`s may read from besides the root
    /// spec's directory.
    pub ref_dirs: Vec<RelativePathBuf>,
}

impl Default for LoadingSettings {
    fn default() -> Self {
        let policy = crate::spec::LoadPolicy::default();
        LoadingSettings {
            max_document_bytes: policy.max_document_bytes,
            max_api_bytes: policy.max_api_bytes,
            max_yaml_alias_values: policy.max_yaml_alias_values,
            ref_origins: Vec::new(),
            allow_private_addresses: false,
            ref_dirs: Vec::new(),
        }
    }
}

impl LoadingSettings {
    /// The policy spec loading applies (origins normalized, directories resolved).
    pub fn policy(&self) -> crate::spec::LoadPolicy {
        crate::spec::LoadPolicy {
            max_document_bytes: self.max_document_bytes,
            max_api_bytes: self.max_api_bytes,
            max_yaml_alias_values: self.max_yaml_alias_values,
            ref_origins: self
                .ref_origins
                .iter()
                .filter_map(|o| parse_origin(o).ok())
                .collect(),
            allow_private_addresses: self.allow_private_addresses,
            ref_dirs: self
                .ref_dirs
                .iter()
                .map(RelativePathBuf::relative)
                .collect(),
        }
    }
}

/// Operations to keep or drop. Every criterion given must match (an empty one matches
/// anything); lists within a criterion are alternatives.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Filter {
    /// Any of these tags.
    pub tags: Vec<String>,
    /// Any of these operationIds or `METHOD /path` labels.
    pub operations: Vec<String>,
    /// Any of these path globs: `*` stays within a segment, `**` crosses segments.
    pub paths: Vec<String>,
    /// Any of these HTTP methods (case-insensitive).
    pub methods: Vec<String>,
}

/// One filter table or an array of them (an operation matches when any matches).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(from = "OneOrMany")]
pub struct Filters(pub Vec<Filter>);

/// `Many` first: serde would also read `[]` as a `Filter` written positionally, which
/// would turn `include = []` (nothing) into "everything".
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    Many(Vec<Filter>),
    One(Filter),
}

impl From<OneOrMany> for Filters {
    fn from(value: OneOrMany) -> Self {
        match value {
            OneOrMany::One(filter) => Filters(vec![filter]),
            OneOrMany::Many(filters) => Filters(filters),
        }
    }
}

/// The MCP endpoint.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    /// Address `restmcp serve` listens on. Loopback unless told otherwise.
    pub listen: String,
    /// `Host` header values accepted (DNS-rebinding protection); empty accepts any.
    pub allowed_hosts: Vec<String>,
    /// `Origin` header values accepted when present; empty accepts any.
    pub allowed_origins: Vec<String>,
    /// Keep sessions (`Mcp-Session-Id`) for initialize-based clients; off = stateless.
    pub sessions: bool,
    /// Answer POSTs with plain JSON rather than an SSE stream where the protocol allows.
    pub json_response: bool,
    /// Largest request body accepted, in bytes.
    pub max_request_bytes: usize,
    /// Tools per `tools/list` page (a page also stops before 512 KiB).
    pub page_size: usize,
    /// Largest JSON-RPC message sent as one SSE event (legacy `/sse`, and Streamable HTTP
    /// answers that are an SSE stream), in bytes; 0 = no limit. The official Python SDK
    /// refuses an event over 1 MiB and, on the legacy transport, loses the session with it,
    /// so a larger tool result is cut to fit (see `mcp::sizes`).
    pub max_message_bytes: usize,
    /// Largest JSON-RPC message (one line) sent over stdio, in bytes; 0 = no limit. The
    /// official TypeScript SDK closes a stdio connection whose buffer passes 10 MiB.
    pub max_stdio_message_bytes: usize,
    /// Also serve the deprecated HTTP+SSE transport (2024-11-05) at `/sse` and `/message`.
    pub legacy_sse: bool,
    /// Refuse (406) a request whose `Accept` lacks what the transport specification asks for;
    /// off, such a request is served as if it had asked for both JSON and SSE.
    pub require_accept: bool,
    /// Browser origins answered with CORS headers; empty (the default) sends none. These
    /// origins are also accepted by the `Origin` check.
    pub cors_origins: Vec<String>,
    /// Seconds that requests in flight get to finish after SIGTERM or SIGINT.
    pub shutdown_grace_seconds: u64,
    /// MCP requests one client (token, session or address) may have in flight; more are
    /// refused with 429. 0 = no limit.
    pub max_in_flight_per_client: usize,
    /// Serve Prometheus metrics at `/metrics`.
    pub metrics: bool,
    /// Threads that serve HTTP connections, each running calls start to end on its own
    /// single-threaded runtime; 0 serves them on the main runtime with the rest.
    pub threads: usize,
    /// Require a bearer token or API key on the MCP endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<InboundAuth>,
    /// Serve HTTPS with this certificate and key (PEM files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSettings>,
    /// What `/readyz` checks beyond a loaded tool set.
    pub readiness: ReadinessSettings,
    /// Seconds a client gets to send a request's complete headers, counted from its first
    /// byte. 30 is hyper's own default (and what the TLS listener used before): a real
    /// client sends its headers in one packet, a slowloris client holds a connection for
    /// at most this long. nginx's `client_header_timeout` is 60.
    pub header_read_timeout_seconds: u64,
    /// Seconds a client gets to send a whole request body, counted from the end of its
    /// headers; later the request gets 408 and the connection is closed. 60 lets the
    /// largest body (`max_request_bytes`, 4 MiB) arrive at 70 KB/s, while a body trickled a
    /// byte at a time cannot hold a request open for long. nginx's `client_body_timeout`
    /// (60) counts between reads instead, which a trickle defeats.
    pub body_read_timeout_seconds: u64,
    /// Seconds a connection may stay open with no request on it (before its first, or
    /// between keep-alive requests) before it is closed. 75 is nginx's `keepalive_timeout`,
    /// above the 60 s for which nginx and most client pools keep idle connections, so the
    /// client, not the server, is the one to close a pooled connection.
    pub idle_timeout_seconds: u64,
    /// Connections open at once. At the cap, the connection idle the longest is closed to
    /// make room; with none idle, the new one is closed at once. Lowered at start (with a
    /// warning) to what the process's open-file limit leaves room for. An idle connection
    /// costs about 13 KB (measured with 5,000), so 10,000 are about 130 MB at most, and the
    /// idle timeout closes them within 75 s.
    pub max_connections: usize,
    /// Streamable HTTP sessions open at once. At the cap, a new `initialize` closes the
    /// session idle the longest (no request in flight and no open stream); with none idle,
    /// it gets 503. A session costs about 85 KB (measured: 4,000 sessions of a debug build
    /// added 334 MB of RSS), so 1,000 sessions are about 85 MB, which fits the shipped
    /// Kubernetes example's 256 MiB limit beside a spec; since idle sessions make room, a
    /// full table refuses no one until 1,000 clients are busy at once.
    pub max_sessions: usize,
    /// Seconds a session may go without a request (and with no open stream) before it is
    /// closed; its client then gets 404 and starts a new one, as the transport specifies.
    pub session_idle_seconds: u64,
    /// Long-lived event streams open at once: Streamable HTTP GET streams,
    /// `subscriptions/listen` and legacy `/sse` sessions; more get 503. Half of
    /// `max_connections`, so streams (which no idle timeout closes) never hold every
    /// connection.
    pub max_sse_streams: usize,
}

/// Tokens a client must present on the MCP endpoint, as `Authorization: Bearer TOKEN` or in
/// `api_key_header`. Tokens are never written in the config itself.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct InboundAuth {
    /// Names of environment variables that each hold one accepted token.
    pub tokens_env: Vec<String>,
    /// A file with one accepted token per line (`#` starts a comment), e.g. a mounted Secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_file: Option<RelativePathBuf>,
    /// A header that may carry the token instead of `Authorization`, e.g. `X-API-Key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_header: Option<String>,
    /// Require the token for `/metrics` too (health endpoints are always open).
    pub protect_metrics: bool,
}

/// PEM files for HTTPS.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    /// The certificate chain, leaf first.
    pub cert: RelativePathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: RelativePathBuf,
}

/// `/readyz`: optionally also each API's upstream, probed in the background.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReadinessSettings {
    /// Ready only while every API not in mock mode answers its probe (`apis.NAME.probe_path`,
    /// default its base URL) with a status below 500.
    pub probe_upstreams: bool,
    /// Seconds between probes.
    pub interval_seconds: f64,
    /// Seconds a probe may take.
    pub timeout_seconds: f64,
}

impl Default for ReadinessSettings {
    fn default() -> Self {
        ReadinessSettings {
            probe_upstreams: false,
            interval_seconds: 10.0,
            timeout_seconds: 2.0,
        }
    }
}

/// A token bucket: `per_second` calls on average, `burst` at once.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub per_second: f64,
    /// Calls allowed at once after a quiet spell; default `per_second` rounded up (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
}

impl RateLimit {
    pub fn burst(&self) -> u32 {
        self.burst
            .unwrap_or_else(|| self.per_second.ceil().clamp(1.0, u32::MAX as f64) as u32)
            .max(1)
    }
}

/// `server.max_message_bytes`: 1 MiB (the Python SDK's SSE event limit) less 4 KiB for the
/// event's framing (`event:`, `data:`, `id:` lines count towards that limit).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1024 * 1024 - 4 * 1024;

/// `server.max_stdio_message_bytes`: 10 MiB (the TypeScript SDK's stdio read buffer) less
/// 128 KiB, since the buffer may also hold the start of the next message when a line ends.
pub const DEFAULT_MAX_STDIO_MESSAGE_BYTES: usize = 10 * 1024 * 1024 - 128 * 1024;

/// The smallest message budget that is not 0 (no limit): room for a useful truncated result.
pub const MIN_MESSAGE_BYTES: usize = 64 * 1024;

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            listen: "127.0.0.1:8080".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            sessions: true,
            json_response: true,
            max_request_bytes: 4 * 1024 * 1024,
            page_size: 500,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_stdio_message_bytes: DEFAULT_MAX_STDIO_MESSAGE_BYTES,
            legacy_sse: true,
            require_accept: true,
            cors_origins: Vec::new(),
            shutdown_grace_seconds: 30,
            max_in_flight_per_client: 64,
            metrics: true,
            threads: 1,
            auth: None,
            tls: None,
            readiness: ReadinessSettings::default(),
            header_read_timeout_seconds: 30,
            body_read_timeout_seconds: 60,
            idle_timeout_seconds: 75,
            max_connections: 10_000,
            max_sessions: 1_000,
            session_idle_seconds: 1800,
            max_sse_streams: 5_000,
        }
    }
}

/// How tools are named and described.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ToolSettings {
    /// Longest tool name produced (16–128). 64 is what Claude and OpenAI accept.
    pub max_name_length: usize,
    /// Longest tool description in characters; 0 means no limit.
    pub max_description_length: usize,
    /// Size above which an outputSchema is relaxed (deep levels accept anything) until it
    /// fits; 0 means no limit. Input schemas are never cut.
    pub max_output_schema_bytes: usize,
    /// The schema dialect tools are published in, unless an API or a client rule says
    /// otherwise.
    pub dialect: Dialect,
    /// Rules for clients recognized by the `clientInfo.name` they send; the first match wins.
    pub clients: Vec<ClientRule>,
}

/// Settings for the clients whose `clientInfo.name` matches `name`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClientRule {
    /// A case-insensitive glob (`*` matches anything) on `clientInfo.name`, e.g. `"gemini*"`.
    pub name: String,
    /// The dialect these clients get, whatever the API's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
    /// Longest tool name these clients accept, e.g. 64 minus the `mcp__server__` prefix a
    /// client adds; longer names are shortened for them (calls use either name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_name_length: Option<usize>,
}

impl ClientRule {
    /// True when `client` (a `clientInfo.name`) matches this rule's glob.
    pub fn matches(&self, client: &str) -> bool {
        glob_matches(&self.name.to_lowercase(), &client.to_lowercase())
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            max_name_length: 64,
            max_description_length: 1024,
            max_output_schema_bytes: 16 * 1024,
            dialect: Dialect::Full,
            clients: Vec::new(),
        }
    }
}

/// One upstream API.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
    /// A file path (relative to the file that set it) or an http(s) URL. An API without
    /// one has only the hand-written tools of its overlays.
    #[serde(default)]
    pub spec: Option<RelativePathBuf>,
    /// restmcp overlays or OpenAPI Overlay 1.0 documents, applied in order. A file
    /// `NAME.overlay.yaml` (or `.yml`, `.json`) beside a spec `NAME.yaml` is applied first
    /// without being listed.
    #[serde(default)]
    pub overlays: Vec<RelativePathBuf>,
    /// Keep only operations with safe methods (GET, HEAD, OPTIONS, TRACE).
    #[serde(default)]
    pub read_only: bool,
    /// Answer calls from the spec (its examples, or values generated from its schemas)
    /// instead of calling the upstream; requests are built and checked all the same.
    #[serde(default)]
    pub mock: bool,
    /// When given, only operations matching it become tools.
    #[serde(default)]
    pub include: Option<Filters>,
    /// Operations matching it do not become tools.
    #[serde(default)]
    pub exclude: Option<Filters>,
    /// Replaces the spec's `servers` / `host` as the base of every request.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Prepended to every tool name of this API.
    #[serde(default)]
    pub prefix: Option<String>,
    /// Seconds before a call to this API is abandoned (connection, retries and body).
    #[serde(default = "default_timeout_seconds")]
    pub timeout_seconds: f64,
    /// Per-tool overrides of `timeout_seconds`, keyed by tool name.
    #[serde(default)]
    pub tool_timeouts: BTreeMap<String, f64>,
    /// Response bodies are read up to this many bytes; the rest is left out and the
    /// result says how much.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
    /// Retries of an idempotent call after a connection failure, 429 or 503.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// The `Accept` header of every request to this API, replacing the one built from each
    /// operation's documented response media types (an overlay's `accept` still wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// Ask for compressed responses (`Accept-Encoding: gzip, deflate, br`). Off, nothing is
    /// asked for; a compressed answer is decoded either way.
    #[serde(default = "default_compression")]
    pub compression: bool,
    /// Origins (`https://cdn.example.com`) this API's redirects may lead to. Redirects
    /// within the API's own origin are always followed; to any other origin only when
    /// listed here, since the request (and its credentials) would go there.
    #[serde(default)]
    pub follow_redirects: Vec<String>,
    /// Origins besides the `base_url`'s own that may receive this API's credentials (a
    /// redirect target in `follow_redirects` that must get the API key header, say).
    /// Credentials never go where only the spec says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_origins: Vec<String>,
    /// Credentials per security scheme, keyed by the spec's scheme name (or a name of the
    /// config's own, with an explicit `type`).
    #[serde(default)]
    pub auth: BTreeMap<String, AuthConfig>,
    /// Headers of the incoming MCP request passed on to this API (case-insensitive names).
    #[serde(default)]
    pub forward_headers: Vec<ForwardHeader>,
    /// Path (below the base URL) that `server.readiness.probe_upstreams` GETs; default the
    /// base URL itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_path: Option<String>,
    /// Calls per second allowed to each tool of this API; more get an error result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    /// Per-tool overrides of `rate_limit`, keyed by tool name.
    #[serde(default)]
    pub tool_rate_limits: BTreeMap<String, RateLimit>,
    /// How the API's tools reach the model: all listed, or found through search or meta
    /// tools (for APIs too large to list).
    #[serde(default)]
    pub discovery: Discovery,
    /// Tools listed even when `discovery` hides the others.
    #[serde(default)]
    pub pinned: Vec<String>,
    /// Overrides `tools.max_description_length` for this API's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_description_length: Option<usize>,
    /// Longest description of one argument (and of each property inside it); 0 = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parameter_description_length: Option<usize>,
    /// Overrides `tools.dialect` for this API's tools (a client rule's dialect wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
}

/// How an API's tools are offered in `tools/list`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Discovery {
    /// Every tool is listed.
    #[default]
    All,
    /// `search_tools` (ranked keyword search returning full definitions) and `call_tool`.
    Search,
    /// `list_operations`, `describe_operation` and `call_operation`.
    Meta,
}

impl Discovery {
    pub fn as_str(self) -> &'static str {
        match self {
            Discovery::All => "all",
            Discovery::Search => "search",
            Discovery::Meta => "meta",
        }
    }
}

/// The kind of credential an [`AuthConfig`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum AuthKind {
    #[serde(rename = "bearer")]
    Bearer,
    #[serde(rename = "basic")]
    Basic,
    #[serde(rename = "api_key")]
    ApiKey,
    #[serde(rename = "oauth2")]
    OAuth2,
}

impl AuthKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthKind::Bearer => "bearer",
            AuthKind::Basic => "basic",
            AuthKind::ApiKey => "api_key",
            AuthKind::OAuth2 => "oauth2",
        }
    }

    /// The keys a credential of this kind may have (besides `type`).
    fn keys(self) -> &'static [&'static str] {
        match self {
            AuthKind::Bearer => &["token_env"],
            AuthKind::ApiKey => &["value_env", "in", "name"],
            AuthKind::Basic => &["username_env", "password_env"],
            AuthKind::OAuth2 => &["client_id_env", "client_secret_env", "token_url", "scopes"],
        }
    }
}

/// Credentials for one security scheme. Secrets are never written here: the `*_env` keys
/// name the environment variables that hold them, read when the dispatcher starts.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Only for a scheme the spec does not declare (which then applies to every operation).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<AuthKind>,
    /// `api_key` with `type`: where the key goes.
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    pub location: Option<ApiKeyLocation>,
    /// `api_key` with `type`: the header, query parameter or cookie name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// `oauth2`: overrides the spec's `tokenUrl` (required with `type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// `oauth2`: the scopes to request, replacing the operation's required scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

impl AuthConfig {
    /// The keys that are set, in a fixed order, with the kind each one implies.
    fn present_keys(&self) -> Vec<(&'static str, Option<AuthKind>)> {
        let keys = [
            ("in", self.location.is_some(), Some(AuthKind::ApiKey)),
            ("name", self.name.is_some(), Some(AuthKind::ApiKey)),
            (
                "token_env",
                self.token_env.is_some(),
                Some(AuthKind::Bearer),
            ),
            (
                "value_env",
                self.value_env.is_some(),
                Some(AuthKind::ApiKey),
            ),
            (
                "username_env",
                self.username_env.is_some(),
                Some(AuthKind::Basic),
            ),
            (
                "password_env",
                self.password_env.is_some(),
                Some(AuthKind::Basic),
            ),
            (
                "client_id_env",
                self.client_id_env.is_some(),
                Some(AuthKind::OAuth2),
            ),
            (
                "client_secret_env",
                self.client_secret_env.is_some(),
                Some(AuthKind::OAuth2),
            ),
            (
                "token_url",
                self.token_url.is_some(),
                Some(AuthKind::OAuth2),
            ),
            ("scopes", self.scopes.is_some(), Some(AuthKind::OAuth2)),
        ];
        keys.into_iter()
            .filter(|(_, set, _)| *set)
            .map(|(key, _, kind)| (key, kind))
            .collect()
    }

    /// The environment variable names this credential reads, with their keys.
    pub fn env_keys(&self) -> Vec<(&'static str, &str)> {
        [
            ("token_env", &self.token_env),
            ("value_env", &self.value_env),
            ("username_env", &self.username_env),
            ("password_env", &self.password_env),
            ("client_id_env", &self.client_id_env),
            ("client_secret_env", &self.client_secret_env),
        ]
        .into_iter()
        .filter_map(|(key, value)| value.as_deref().map(|v| (key, v)))
        .collect()
    }

    /// Checks the keys against the kind (explicit `type`, else implied by the keys) and
    /// returns the kind. An error names the offending key relative to this table
    /// (`""` for the table itself) and the problem.
    pub fn checked_kind(&self) -> Result<AuthKind, (String, String)> {
        let present = self.present_keys();
        let kind = match self.kind {
            Some(kind) => kind,
            None => {
                if let Some((key, _)) = present.iter().find(|(k, _)| matches!(*k, "in" | "name")) {
                    return Err((
                        key.to_string(),
                        "describes a scheme of the config's own: also set type = \"api_key\""
                            .into(),
                    ));
                }
                match present.first() {
                    Some((_, Some(kind))) => *kind,
                    _ => {
                        return Err((
                            String::new(),
                            "no credentials: set token_env (bearer), value_env (api_key), \
                             username_env and password_env (basic), or client_id_env and \
                             client_secret_env (oauth2)"
                                .into(),
                        ));
                    }
                }
            }
        };
        let implied = if self.kind.is_some() {
            format!("type = \"{}\"", kind.as_str())
        } else {
            format!("{} credential (implied by {})", kind.as_str(), present[0].0)
        };
        for (key, _) in &present {
            if !kind.keys().contains(key) {
                return Err((
                    key.to_string(),
                    format!(
                        "is not a key of a {implied}; it takes {}",
                        kind.keys().join(", ")
                    ),
                ));
            }
        }
        let explicit = self.kind.is_some();
        let required: &[(&str, bool)] = match kind {
            AuthKind::Bearer => &[("token_env", self.token_env.is_some())],
            AuthKind::ApiKey => &[
                ("value_env", self.value_env.is_some()),
                ("in", self.location.is_some() || !explicit),
                ("name", self.name.is_some() || !explicit),
            ],
            AuthKind::Basic => &[
                ("username_env", self.username_env.is_some()),
                ("password_env", self.password_env.is_some()),
            ],
            AuthKind::OAuth2 => &[
                ("client_id_env", self.client_id_env.is_some()),
                ("client_secret_env", self.client_secret_env.is_some()),
                ("token_url", self.token_url.is_some() || !explicit),
            ],
        };
        if let Some((key, _)) = required.iter().find(|(_, set)| !set) {
            return Err((key.to_string(), format!("is required for a {implied}")));
        }
        for (key, var) in self.env_keys() {
            if var.is_empty() || var.contains(['=', '\0']) {
                return Err((
                    key.to_string(),
                    "must name an environment variable (non-empty, no '=')".into(),
                ));
            }
        }
        if let Some(name) = &self.name
            && !is_token(name)
        {
            return Err((
                "name".into(),
                "must be a valid header, parameter or cookie name (letters, digits and !#$%&'*+-.^_`|~)".into(),
            ));
        }
        if let Some(token_url) = &self.token_url
            && !is_http_url(token_url)
        {
            return Err((
                "token_url".into(),
                "must be an absolute http:// or https:// URL".into(),
            ));
        }
        if let Some(scopes) = &self.scopes
            && let Some(bad) = scopes.iter().find(|s| !is_scope_token(s))
        {
            return Err((
                "scopes".into(),
                format!(
                    "\"{bad}\" is not a valid OAuth scope (RFC 6749 §3.3: no spaces, quotes or backslashes)"
                ),
            ));
        }
        Ok(kind)
    }
}

/// One entry of `forward_headers`: a header name, or `{ from, to }` to rename it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged, try_from = "RawForwardHeader")]
pub enum ForwardHeader {
    Same(String),
    Renamed(HeaderRename),
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct HeaderRename {
    pub from: String,
    pub to: String,
}

/// What `forward_headers` entries are read as, so a wrong table gets a precise message.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawForwardHeader {
    Same(String),
    Table(BTreeMap<String, String>),
}

impl TryFrom<RawForwardHeader> for ForwardHeader {
    type Error = String;

    fn try_from(raw: RawForwardHeader) -> Result<Self, String> {
        match raw {
            RawForwardHeader::Same(name) => Ok(ForwardHeader::Same(name)),
            RawForwardHeader::Table(mut table) => {
                let from = table.remove("from");
                let to = table.remove("to");
                match (from, to, table.keys().next()) {
                    (Some(from), Some(to), None) => {
                        Ok(ForwardHeader::Renamed(HeaderRename { from, to }))
                    }
                    (_, _, Some(unknown)) => Err(format!(
                        "unknown key `{unknown}`: an entry is a header name or {{ from = \"…\", to = \"…\" }}"
                    )),
                    _ => Err(
                        "an entry is a header name or { from = \"…\", to = \"…\" } with both keys"
                            .to_string(),
                    ),
                }
            }
        }
    }
}

impl ForwardHeader {
    /// The incoming header's name.
    pub fn from(&self) -> &str {
        match self {
            ForwardHeader::Same(name) => name,
            ForwardHeader::Renamed(rename) => &rename.from,
        }
    }

    /// The name it is sent upstream under.
    pub fn to(&self) -> &str {
        match self {
            ForwardHeader::Same(name) => name,
            ForwardHeader::Renamed(rename) => &rename.to,
        }
    }
}

/// Headers that describe the connection or the message framing, which restmcp's HTTP
/// client owns: forwarding them would corrupt the upstream request.
const UNFORWARDABLE: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
    "expect",
];

/// RFC 9110 `token`: what a header (or cookie) name may hold.
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// RFC 6749 §3.3 `scope-token`.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// An origin as `follow_redirects` and `credential_origins` list it: `scheme://host[:port]`,
/// nothing else; returned in its normal form (`https://api.example.com`).
pub fn parse_origin(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https origin".to_string());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not hold credentials".to_string());
    }
    if url.query().is_some() || url.fragment().is_some() || url.path() != "/" {
        return Err("must be an origin (scheme://host:port), without query or fragment".into());
    }
    Ok(url.origin().ascii_serialization())
}

fn is_http_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

fn default_timeout_seconds() -> f64 {
    30.0
}

fn default_max_response_bytes() -> u64 {
    4 * 1024 * 1024
}

fn default_max_retries() -> u32 {
    2
}

fn default_compression() -> bool {
    true
}

/// Checks an `Accept` header value given by the operator (`apis.NAME.accept`) or an
/// overlay: comma-separated media ranges (`type/subtype`, `type/*` or `*/*`) with optional
/// `;name=value` parameters, visible ASCII, at most 1024 bytes.
pub fn check_accept(value: &str) -> Result<(), String> {
    if value.len() > 1024 {
        return Err("is longer than 1024 bytes".to_string());
    }
    if let Some(c) = value
        .chars()
        .find(|&c| !(c == ' ' || c == '\t' || c.is_ascii_graphic()))
    {
        return Err(format!(
            "holds {c:?}, which an HTTP header value cannot (visible ASCII only)"
        ));
    }
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    for range in value.split(',') {
        let mut parts = range.split(';');
        let essence = parts.next().unwrap_or_default().trim();
        let shaped = essence
            .split_once('/')
            .is_some_and(|(t, s)| token(t) && token(s) && !(t == "*" && s != "*"));
        if !shaped {
            return Err(format!(
                "\"{}\" is not a media range (type/subtype, type/* or */*)",
                range.trim()
            ));
        }
        for parameter in parts {
            let ok = parameter.split_once('=').is_some_and(|(name, value)| {
                let value = value.trim();
                token(name.trim())
                    && (token(value)
                        || (value.len() >= 2 && value.starts_with('"') && value.ends_with('"')))
            });
            if !ok {
                return Err(format!(
                    "\"{}\" is not a media type parameter (name=value)",
                    parameter.trim()
                ));
            }
        }
    }
    Ok(())
}

impl ApiConfig {
    /// Where to load the spec from; `None` for an API of hand-written tools only.
    pub fn source(&self) -> Option<Result<SpecSource, crate::spec::SpecError>> {
        let spec = self.spec.as_ref()?;
        let original = spec.original().to_string_lossy();
        Some(
            if original.starts_with("http://") || original.starts_with("https://") {
                SpecSource::parse(&original)
            } else {
                Ok(SpecSource::File(spec.relative()))
            },
        )
    }

    /// The overlay files to apply, in order: the conventional one beside the spec (when it
    /// exists and is not listed), then those listed.
    pub fn overlay_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.overlays.iter().map(|o| o.relative()).collect();
        if let Some(conventional) = self.conventional_overlay()
            && conventional.is_file()
            && !files.contains(&conventional)
        {
            files.insert(0, conventional);
        }
        files
    }

    /// Candidates for `NAME.overlay.yaml` beside a file spec: the first that exists, else the
    /// `.yaml` one (so a watcher can notice it being created).
    pub fn conventional_overlay(&self) -> Option<PathBuf> {
        let Some(Ok(SpecSource::File(spec))) = self.source() else {
            return None;
        };
        conventional_overlay(&spec)
    }
}

/// `specs/petstore.yaml` → the first existing of `specs/petstore.overlay.{yaml,yml,json}`,
/// else `specs/petstore.overlay.yaml`.
pub fn conventional_overlay(spec: &Path) -> Option<PathBuf> {
    let stem = spec.file_stem()?.to_str()?;
    let dir = spec.parent().unwrap_or(Path::new(""));
    let candidates: Vec<PathBuf> = ["yaml", "yml", "json"]
        .iter()
        .map(|ext| dir.join(format!("{stem}.overlay.{ext}")))
        .collect();
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .or_else(|| candidates.into_iter().next())
}

/// True for file names restmcp reads as overlays rather than specs.
pub fn is_overlay_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        [".overlay.yaml", ".overlay.yml", ".overlay.json"]
            .iter()
            .any(|suffix| n.ends_with(suffix))
    })
}

/// Values given on the command line, which win over file and environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Serve exactly this spec instead of the configured APIs.
    pub spec: Option<String>,
    pub base_url: Option<String>,
    pub max_name_length: Option<usize>,
    pub max_description_length: Option<usize>,
    /// Every API in mock mode (`--mock`).
    pub mock: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: config file not found (pass --config FILE or --spec SPEC)")]
    NotFound { path: PathBuf },
    #[error("invalid configuration: {}", describe_figment(.0))]
    Figment(Box<figment::Error>),
    #[error("invalid configuration: {key} = {value}: {problem}")]
    Invalid {
        key: String,
        value: String,
        problem: String,
    },
    #[error("invalid configuration: {key}: {problem}")]
    Key { key: String, problem: String },
}

impl From<figment::Error> for ConfigError {
    fn from(error: figment::Error) -> Self {
        ConfigError::Figment(Box::new(error))
    }
}

/// Every error in `error`, one per line, each naming the key and the file (or variable) it
/// came from, without quoting the file. A TOML syntax error says where (line and column)
/// but not what the line holds: the file given as the configuration may be a symlink to, or
/// simply be, a file that is not a configuration at all (`/etc/shadow`), and its content
/// must not reach a terminal or a CI log through an error message.
fn describe_figment(error: &figment::Error) -> String {
    let mut lines = Vec::new();
    for mut single in error.clone() {
        if let figment::error::Kind::Message(message) = &single.kind {
            single.kind = figment::error::Kind::Message(without_source_lines(message));
        }
        lines.push(single.to_string());
    }
    lines.join("\n")
}

/// A parser's message without the excerpt it quotes: the TOML parser shows the offending
/// line in a gutter (`  |`, `1 | content`, `  |   ^`) between its position line and its
/// explanation. Lines of the gutter are dropped; the position and the explanation stay.
fn without_source_lines(message: &str) -> String {
    let is_gutter = |line: &str| {
        let rest = line
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit());
        rest.trim_start().starts_with('|')
    };
    message
        .lines()
        .filter(|line| !is_gutter(line) && !line.trim().is_empty())
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The configuration's top-level tables: only `RESTMCP_*` variables under them are
/// configuration. Others (`RESTMCP_CONFIG`, which the CLI reads, or a `RESTMCP_BIN` a CI
/// script sets for itself) are not, and must not make the configuration invalid; a typo
/// inside a table (`RESTMCP_TOOLS__MAX_NAM_LENGTH`) still is an error naming the key.
const CONFIG_TABLES: [&str; 7] = [
    "server",
    "tools",
    "apis",
    "reload",
    "loading",
    "specs_dir",
    "log",
];

impl Config {
    /// Loads `path` (required to exist unless `--spec` replaces the configured APIs), the
    /// environment, and the flags, in increasing precedence.
    pub fn load(path: &Path, overrides: &Overrides) -> Result<Config, ConfigError> {
        let mut figment = Figment::new();
        if overrides.spec.is_none() {
            if !path.is_file() {
                return Err(ConfigError::NotFound {
                    path: path.to_path_buf(),
                });
            }
            figment = figment.merge(Toml::file_exact(path));
        }
        let env = Env::prefixed("RESTMCP_")
            .filter(|key| {
                let top = key.as_str().split("__").next().unwrap_or_default();
                CONFIG_TABLES
                    .iter()
                    .any(|table| top.eq_ignore_ascii_case(table))
            })
            .split("__");
        figment = figment.merge(env);
        if let Some(spec) = &overrides.spec {
            let name = api_name_from_spec(spec);
            let mut api = serde_json::json!({ "spec": spec });
            if let Some(base_url) = &overrides.base_url {
                api["base_url"] = serde_json::json!(base_url);
            }
            figment = figment.merge(Serialized::default(
                "apis",
                serde_json::json!({ name: api }),
            ));
        }
        if let Some(n) = overrides.max_name_length {
            figment = figment.merge(Serialized::default("tools.max_name_length", n));
        }
        if let Some(n) = overrides.max_description_length {
            figment = figment.merge(Serialized::default("tools.max_description_length", n));
        }
        let mut config: Config = figment.extract()?;
        if overrides.spec.is_none()
            && let Some(dir) = &config.specs_dir
        {
            let found = discover(&dir.relative(), &config.apis)?;
            if !found.is_empty() {
                let apis: serde_json::Map<String, serde_json::Value> = found
                    .into_iter()
                    .map(|(name, path)| {
                        (
                            name,
                            serde_json::json!({ "spec": path.display().to_string() }),
                        )
                    })
                    .collect();
                // Merged below the file, so a table for the same name would have won;
                // `discover` already left those out.
                figment = Figment::from(Serialized::defaults(serde_json::json!({ "apis": apis })))
                    .merge(figment);
                config = figment.extract()?;
            }
        }
        if overrides.mock {
            for api in config.apis.values_mut() {
                api.mock = true;
            }
        }
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, value: String, problem: &str| ConfigError::Invalid {
            key,
            value,
            problem: problem.to_string(),
        };
        if self.server.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(invalid(
                "server.listen".into(),
                self.server.listen.clone(),
                "must be an IP address and port, e.g. 127.0.0.1:8080",
            ));
        }
        if self.server.page_size == 0 {
            return Err(invalid(
                "server.page_size".into(),
                "0".into(),
                "must be at least 1",
            ));
        }
        self.validate_server()?;
        let n = self.tools.max_name_length;
        if !(16..=128).contains(&n) {
            return Err(invalid(
                "tools.max_name_length".into(),
                n.to_string(),
                "must be between 16 and 128",
            ));
        }
        for (i, rule) in self.tools.clients.iter().enumerate() {
            if rule.name.trim().is_empty() {
                return Err(invalid(
                    format!("tools.clients[{i}].name"),
                    String::new(),
                    "must be a clientInfo.name or a glob such as \"gemini*\"",
                ));
            }
            if let Some(max) = rule.max_name_length
                && !(16..=128).contains(&max)
            {
                return Err(invalid(
                    format!("tools.clients[{i}].max_name_length"),
                    max.to_string(),
                    "must be between 16 and 128",
                ));
            }
        }
        if self.apis.is_empty() && self.specs_dir.is_none() {
            return Err(invalid(
                "apis".into(),
                "{}".into(),
                "no API configured: add an [apis.NAME] table with a `spec`, or a `specs_dir`",
            ));
        }
        if self.reload.interval_ms < 50 || self.reload.url_interval_seconds == 0 {
            return Err(ConfigError::Key {
                key: "reload".into(),
                problem: "interval_ms must be at least 50 and url_interval_seconds at least 1"
                    .into(),
            });
        }
        self.validate_loading()?;
        if !(1..=MAX_RELOAD_TIMEOUT_SECONDS).contains(&self.reload.timeout_seconds) {
            return Err(invalid(
                "reload.timeout_seconds".into(),
                self.reload.timeout_seconds.to_string(),
                "must be between 1 and 86400 (one day)",
            ));
        }
        for (name, api) in &self.apis {
            let valid_name = !name.is_empty()
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                });
            if !valid_name {
                return Err(invalid(
                    format!("apis.{name}"),
                    String::new(),
                    "API names use a-z, 0-9, _ and - (environment variables can only address lower-case keys)",
                ));
            }
            if api.spec.is_none() && api.overlays.is_empty() {
                return Err(ConfigError::Key {
                    key: format!("apis.{name}"),
                    problem: "needs a `spec`, or `overlays` with hand-written tools".into(),
                });
            }
            if api.spec.is_none() && api.base_url.is_none() {
                return Err(ConfigError::Key {
                    key: format!("apis.{name}.base_url"),
                    problem: "is required for an API without a spec".into(),
                });
            }
            for (key, filters) in [("include", &api.include), ("exclude", &api.exclude)] {
                for filter in filters.iter().flat_map(|f| &f.0) {
                    if let Some(method) = filter.methods.iter().find(|m| {
                        !crate::spec::Method::ALL
                            .iter()
                            .any(|known| known.as_str().eq_ignore_ascii_case(m))
                    }) {
                        return Err(invalid(
                            format!("apis.{name}.{key}.methods"),
                            method.clone(),
                            "is not an HTTP method OpenAPI describes",
                        ));
                    }
                }
            }
            if let Some(base_url) = &api.base_url
                && !is_http_url(base_url)
            {
                return Err(invalid(
                    format!("apis.{name}.base_url"),
                    base_url.clone(),
                    "must be an absolute http:// or https:// URL",
                ));
            }
            let timeouts =
                std::iter::once((format!("apis.{name}.timeout_seconds"), api.timeout_seconds))
                    .chain(
                        api.tool_timeouts
                            .iter()
                            .map(|(tool, t)| (format!("apis.{name}.tool_timeouts.{tool}"), *t)),
                    );
            for (key, seconds) in timeouts {
                if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
                    return Err(invalid(
                        key,
                        seconds.to_string(),
                        "must be between 0 and 3600 seconds",
                    ));
                }
            }
            let origins = [
                ("follow_redirects", &api.follow_redirects),
                ("credential_origins", &api.credential_origins),
            ];
            for (key, list) in origins {
                for (index, origin) in list.iter().enumerate() {
                    if let Err(problem) = parse_origin(origin) {
                        return Err(invalid(
                            format!("apis.{name}.{key}[{index}]"),
                            origin.clone(),
                            &problem,
                        ));
                    }
                }
            }
            if api.max_retries > 10 {
                return Err(invalid(
                    format!("apis.{name}.max_retries"),
                    api.max_retries.to_string(),
                    "must be at most 10",
                ));
            }
            if let Some(prefix) = &api.prefix {
                let ok = prefix
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !ok || prefix.len() > n / 2 {
                    return Err(invalid(
                        format!("apis.{name}.prefix"),
                        prefix.clone(),
                        "must use A-Z, a-z, 0-9, _ and - and be at most half of tools.max_name_length",
                    ));
                }
            }
            validate_auth(name, api)?;
            let limits = api
                .rate_limit
                .iter()
                .map(|l| (format!("apis.{name}.rate_limit"), l));
            let tool_limits = api
                .tool_rate_limits
                .iter()
                .map(|(tool, l)| (format!("apis.{name}.tool_rate_limits.{tool}"), l));
            for (key, limit) in limits.chain(tool_limits) {
                if !(limit.per_second.is_finite() && limit.per_second > 0.0) {
                    return Err(invalid(
                        format!("{key}.per_second"),
                        limit.per_second.to_string(),
                        "must be a number of calls per second above 0",
                    ));
                }
            }
            if let Some(accept) = &api.accept
                && let Err(problem) = check_accept(accept)
            {
                return Err(invalid(
                    format!("apis.{name}.accept"),
                    accept.clone(),
                    &problem,
                ));
            }
            if let Some(path) = &api.probe_path
                && !path.starts_with('/')
            {
                return Err(invalid(
                    format!("apis.{name}.probe_path"),
                    path.clone(),
                    "must start with /",
                ));
            }
        }
        Ok(())
    }

    /// The `[server]` keys beyond `listen` and `page_size`, and `[log]`.
    fn validate_loading(&self) -> Result<(), ConfigError> {
        let loading = &self.loading;
        for (key, value) in [
            ("max_document_bytes", loading.max_document_bytes),
            ("max_api_bytes", loading.max_api_bytes),
        ] {
            if value == 0 {
                return Err(ConfigError::Invalid {
                    key: format!("loading.{key}"),
                    value: "0".into(),
                    problem: "must be at least 1".into(),
                });
            }
        }
        for (index, origin) in loading.ref_origins.iter().enumerate() {
            if let Err(problem) = parse_origin(origin) {
                return Err(ConfigError::Invalid {
                    key: format!("loading.ref_origins[{index}]"),
                    value: origin.clone(),
                    problem,
                });
            }
        }
        Ok(())
    }

    fn validate_server(&self) -> Result<(), ConfigError> {
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log.level) {
            return Err(ConfigError::Invalid {
                key: "log.level".into(),
                value: self.log.level.clone(),
                problem: format!(
                    "is not a log filter such as \"info\" or \"restmcp=debug,info\": {e}"
                ),
            });
        }
        let server = &self.server;
        let readiness = &server.readiness;
        for (key, seconds) in [
            (
                "server.readiness.interval_seconds",
                readiness.interval_seconds,
            ),
            (
                "server.readiness.timeout_seconds",
                readiness.timeout_seconds,
            ),
        ] {
            if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    value: seconds.to_string(),
                    problem: "must be between 0 and 3600 seconds".into(),
                });
            }
        }
        for (key, value) in [
            (
                "server.header_read_timeout_seconds",
                server.header_read_timeout_seconds,
            ),
            (
                "server.body_read_timeout_seconds",
                server.body_read_timeout_seconds,
            ),
            ("server.idle_timeout_seconds", server.idle_timeout_seconds),
            ("server.session_idle_seconds", server.session_idle_seconds),
        ] {
            if !(1..=86_400).contains(&value) {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    value: value.to_string(),
                    problem: "must be between 1 and 86400 seconds".into(),
                });
            }
        }
        for (key, value) in [
            ("server.max_connections", server.max_connections),
            ("server.max_sessions", server.max_sessions),
            ("server.max_sse_streams", server.max_sse_streams),
        ] {
            if value == 0 {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    value: value.to_string(),
                    problem: "must be at least 1".into(),
                });
            }
        }
        for (key, value) in [
            ("server.max_message_bytes", server.max_message_bytes),
            (
                "server.max_stdio_message_bytes",
                server.max_stdio_message_bytes,
            ),
        ] {
            if value != 0 && value < MIN_MESSAGE_BYTES {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    value: value.to_string(),
                    problem: format!("must be 0 (no limit) or at least {MIN_MESSAGE_BYTES} bytes"),
                });
            }
        }
        for (i, origin) in server.cors_origins.iter().enumerate() {
            let valid = origin == "*"
                || url::Url::parse(origin).is_ok_and(|url| {
                    matches!(url.scheme(), "http" | "https")
                        && url.host().is_some()
                        && url.path() == "/"
                        && !origin.ends_with('/')
                });
            if !valid {
                return Err(ConfigError::Invalid {
                    key: format!("server.cors_origins[{i}]"),
                    value: origin.clone(),
                    problem: "must be an origin such as https://app.example.com (scheme, host, optional port; no path) or \"*\"".into(),
                });
            }
        }
        if let Some(auth) = &server.auth {
            if auth.tokens_env.is_empty() && auth.tokens_file.is_none() {
                return Err(ConfigError::Key {
                    key: "server.auth".into(),
                    problem: "names no tokens: set tokens_env (variable names) or tokens_file"
                        .into(),
                });
            }
            if let Some((i, name)) = auth
                .tokens_env
                .iter()
                .enumerate()
                .find(|(_, name)| name.is_empty() || name.contains('='))
            {
                return Err(ConfigError::Invalid {
                    key: format!("server.auth.tokens_env[{i}]"),
                    value: name.clone(),
                    problem: "must be the name of an environment variable".into(),
                });
            }
            if let Some(header) = &auth.api_key_header
                && !is_token(header)
            {
                return Err(ConfigError::Invalid {
                    key: "server.auth.api_key_header".into(),
                    value: header.clone(),
                    problem: "must be an HTTP header name".into(),
                });
            }
        }
        Ok(())
    }
}

/// `auth` tables and `forward_headers` of one API.
fn validate_auth(api_name: &str, api: &ApiConfig) -> Result<(), ConfigError> {
    for (scheme, auth) in &api.auth {
        if let Err((key, problem)) = auth.checked_kind() {
            let mut full = format!("apis.{api_name}.auth.{scheme}");
            if !key.is_empty() {
                full.push('.');
                full.push_str(&key);
            }
            return Err(ConfigError::Key { key: full, problem });
        }
    }
    // The spec's `servers` are data from elsewhere: credentials go only where the operator
    // pointed them. An API in mock mode is never called, so it sends nothing anywhere.
    if !api.auth.is_empty() && api.base_url.is_none() && !api.mock {
        return Err(ConfigError::Key {
            key: format!("apis.{api_name}.base_url"),
            problem: "is required when `auth` is set: credentials are sent only to the origin \
                      of the configured base URL, never to one the spec names"
                .into(),
        });
    }
    let mut targets: Vec<String> = Vec::new();
    for (i, header) in api.forward_headers.iter().enumerate() {
        let key = format!("apis.{api_name}.forward_headers[{i}]");
        for name in [header.from(), header.to()] {
            if !is_token(name) {
                return Err(ConfigError::Key {
                    key,
                    problem: format!("\"{name}\" is not a valid header name"),
                });
            }
        }
        let to = header.to().to_ascii_lowercase();
        if UNFORWARDABLE.contains(&to.as_str()) {
            return Err(ConfigError::Key {
                key,
                problem: format!(
                    "\"{}\" describes the connection, which restmcp's HTTP client sets itself",
                    header.to()
                ),
            });
        }
        if targets.contains(&to) {
            return Err(ConfigError::Key {
                key,
                problem: format!("header \"{}\" is forwarded twice", header.to()),
            });
        }
        targets.push(to);
    }
    Ok(())
}

/// The OpenAPI and Swagger files directly in `dir` that no configured API uses, named after
/// the file. Overlay files (`*.overlay.yaml`) and files that are not API descriptions (shared
/// schema files, say) are left out; a name already configured for another file is an error.
pub fn discover(
    dir: &Path,
    configured: &BTreeMap<String, ApiConfig>,
) -> Result<Vec<(String, PathBuf)>, ConfigError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ConfigError::Key {
        key: "specs_dir".into(),
        problem: format!("cannot read directory {}: {e}", dir.display()),
    })?;
    let used: Vec<PathBuf> = configured
        .values()
        .filter_map(|api| match api.source() {
            Some(Ok(SpecSource::File(path))) => Some(canonical(&path)),
            _ => None,
        })
        .collect();
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml" | "json")
                )
                && !is_overlay_file(p)
        })
        .collect();
    files.sort();
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for path in files {
        if used.contains(&canonical(&path)) || !looks_like_api_description(&path) {
            continue;
        }
        let name = api_name_from_spec(&path.to_string_lossy());
        if configured.contains_key(&name) || found.iter().any(|(n, _)| *n == name) {
            return Err(ConfigError::Key {
                key: format!("apis.{name}"),
                problem: format!(
                    "{} in specs_dir would be API \"{name}\", which is already taken; give it an [apis.NAME] table of its own",
                    path.display()
                ),
            });
        }
        found.push((name, path));
    }
    Ok(found)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A top-level `openapi` or `swagger` key within the first few kilobytes (it comes first
/// in practice; a file of shared schemas has neither).
fn looks_like_api_description(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(8192);
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file.take(8192).read_to_end(&mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    text.lines().any(|line| {
        let line = line.trim_start_matches('\u{feff}');
        line.starts_with("openapi:")
            || line.starts_with("swagger:")
            || line.starts_with("\"openapi\":")
            || line.starts_with("\"swagger\":")
    }) || text.contains("\"openapi\"") && text.trim_start().starts_with('{')
        || text.contains("\"swagger\"") && text.trim_start().starts_with('{')
}

/// `specs/Pet Store.v3.yaml` → `pet_store_v3`.
fn api_name_from_spec(spec: &str) -> String {
    let stem = spec
        .trim_end_matches('/')
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(spec);
    let stem = stem
        .strip_suffix(".yaml")
        .or_else(|| stem.strip_suffix(".yml"))
        .or_else(|| stem.strip_suffix(".json"))
        .unwrap_or(stem);
    let mut name = String::new();
    for c in stem.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let name = name.trim_matches('_').to_string();
    if name.is_empty() { "api".into() } else { name }
}

#[cfg(test)]
mod tests {
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
            error("forward_headers = [\"X-A\", { from = \"X-B\", to = \"host\" }]\n")
                .starts_with("invalid configuration: apis.api.forward_headers[1]: \"host\" describes the connection")
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
}
