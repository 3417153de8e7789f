//! `[server]`: the MCP endpoint (listen address, Host/Origin checks, sessions, message and
//! connection limits, timeouts), with its inbound `auth`, `tls` and `readiness` tables.

use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

use super::RateLimit;

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
    /// MCP requests one client may have in flight, over all its sessions; more are refused
    /// with 429. A client is its token's caller (an OAuth caller, or a static token), else
    /// its address (an IPv6 address's /64). 0 = no limit.
    pub max_in_flight_per_client: usize,
    /// Serve Prometheus metrics at `/metrics`.
    pub metrics: bool,
    /// An environment variable holding the token `/metrics` requires (as
    /// `Authorization: Bearer`), which also shows `/readyz`'s detail to a prober that is
    /// not on this machine. Unset, `/metrics` is open (unless `auth.protect_metrics`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_token_env: Option<String>,
    /// An environment variable holding the key (at least 32 bytes) under which callers are
    /// named (HMAC-SHA256 pseudonyms of an OAuth caller's issuer and subject, or of a static
    /// token): in logs, metrics, and what restmcp keeps per caller. Replicas must share it.
    /// Unset, a key is derived from `confirm.state_key_env` when that is set, else made at
    /// random at start (pseudonyms then change on restart and differ between replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity_key_env: Option<String>,
    /// Serve the console at `/console`: the operators' page of APIs, tools as clients see
    /// them (with where each piece came from), a form that tries a call, and the calls as
    /// they happen. Behind the same authentication as the MCP endpoint. Unset: on when
    /// `listen` is a loopback address, off otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console: Option<bool>,
    /// The console's live list of calls shows each call's argument values (with every
    /// secret restmcp knows redacted). Off, it shows the tool, caller pseudonym, outcome,
    /// timing and sizes only.
    pub console_arguments: bool,
    /// Threads that serve HTTP connections, each running calls start to end on its own
    /// single-threaded runtime; 0 serves them on the main runtime with the rest.
    pub threads: usize,
    /// Require a bearer token or API key on the MCP endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<InboundAuth>,
    /// Accept OAuth 2.1 access tokens for this server (the MCP Authorization
    /// specification): restmcp is then a resource server of the issuers named here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthSettings>,
    /// Serve HTTPS with this certificate and key (PEM files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSettings>,
    /// How calls that need a human's confirmation (`apis.NAME.confirm`) are asked for.
    pub confirm: ConfirmSettings,
    /// Where short-lived shared state lives (idempotency results, used confirmations):
    /// in-process, or a Redis/Valkey server that replicas share.
    pub store: StoreSettings,
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
    /// Sessions one client (see `max_in_flight_per_client`) may hold at once. At the cap, a
    /// new `initialize` of that client closes its own session that has gone without a
    /// request the longest; with each of them busy, it gets 429. 0 = no per-client cap.
    pub max_sessions_per_client: usize,
    /// Event streams open at once: Streamable HTTP GET streams, `subscriptions/listen`, the
    /// SSE answers of POSTs and legacy `/sse` sessions; more get 503. Half of
    /// `max_connections`, so streams (which no idle timeout closes) never hold every
    /// connection.
    pub max_sse_streams: usize,
    /// Event streams one client may hold open; more get 429. 0 = no per-client cap.
    pub max_streams_per_client: usize,
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

/// `[server.oauth]`: restmcp as an OAuth 2.1 resource server (RFC 9728 metadata, RFC 6750
/// challenges, RFC 8707 audience). JWT access tokens are checked against each issuer's
/// published keys; opaque ones through RFC 7662 introspection.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OAuthSettings {
    /// The canonical URL of this MCP endpoint, e.g. `https://mcp.example.com/mcp`: the
    /// audience every token must name (RFC 8707), and the `resource` of the metadata.
    pub resource: String,
    /// The authorization servers whose tokens are accepted, by issuer identifier. Their
    /// metadata (RFC 8414, else OpenID Connect discovery) gives the keys and endpoints.
    pub issuers: Vec<String>,
    /// Scopes every token must carry; a token without one gets 403 `insufficient_scope`.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// JWS algorithms accepted (never `none`). HMAC ones (`HS256`…) only with
    /// `hmac_secret_env`.
    #[serde(default = "default_algorithms")]
    pub algorithms: Vec<String>,
    /// An environment variable holding the secret shared with the issuer, for HMAC-signed
    /// tokens; unset (the default), HMAC signatures are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hmac_secret_env: Option<String>,
    /// Seconds of clock difference tolerated on `exp` and `nbf`.
    #[serde(default = "default_clock_skew")]
    pub clock_skew_seconds: u64,
    /// Least seconds between two fetches of an issuer's keys when a token names a key
    /// that is not known (a rotation).
    #[serde(default = "default_jwks_refresh")]
    pub jwks_refresh_seconds: u64,
    /// A name for this server that authorization servers may show the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// Check tokens that are not JWTs with the issuer (RFC 7662).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection: Option<IntrospectionSettings>,
    /// Seconds an introspected token's "active" verdict is trusted before the
    /// authorization server is asked again (at most until the token expires): how long a
    /// revoked opaque token may still be accepted.
    #[serde(default = "default_introspection_cache")]
    pub introspection_cache_seconds: u64,
    /// Introspections of tokens restmcp has no verdict on, per client (its address):
    /// past it a request gets 429, and nothing is asked, so a client sending made-up
    /// tokens cannot turn each request into a request to the authorization server.
    #[serde(default = "default_introspection_rate")]
    pub introspection_rate_limit: RateLimit,
}

fn default_introspection_cache() -> u64 {
    30
}

fn default_introspection_rate() -> RateLimit {
    RateLimit {
        per_second: 1.0,
        burst: Some(10),
    }
}

impl OAuthSettings {
    /// The algorithms a resource server sees from common providers: RSA, RSA-PSS, ECDSA
    /// and EdDSA signatures.
    pub fn default_algorithms() -> Vec<String> {
        [
            "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
        ]
        .map(String::from)
        .to_vec()
    }
}

fn default_algorithms() -> Vec<String> {
    OAuthSettings::default_algorithms()
}

fn default_clock_skew() -> u64 {
    60
}

fn default_jwks_refresh() -> u64 {
    60
}

/// `[server.confirm]`: how restmcp asks a human before a call that needs confirmation
/// (`apis.NAME.confirm`, an overlay's `confirm`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ConfirmSettings {
    /// An environment variable holding the key (at least 32 bytes) that signs the
    /// `requestState` of a 2026-07-28 confirmation. Replicas behind a balancer must share
    /// it; unset, each process makes a random one at start (a confirmation then has to
    /// come back to the process that asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_key_env: Option<String>,
    /// Seconds a 2026-07-28 confirmation question stays answerable.
    pub state_ttl_seconds: u64,
    /// What happens to a call that needs confirmation when the client cannot ask its user
    /// (no `elicitation` capability): `refuse` (the default: an error result, nothing is
    /// sent) or `proceed` (the call is sent unconfirmed and the log says so).
    pub without_elicitation: WithoutElicitation,
}

impl Default for ConfirmSettings {
    fn default() -> Self {
        ConfirmSettings {
            state_key_env: None,
            state_ttl_seconds: 300,
            without_elicitation: WithoutElicitation::Refuse,
        }
    }
}

/// `[server.store]`: short-lived state replicas behind a balancer must share (stored
/// idempotent results, redeemed confirmations).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSettings {
    /// `redis://host:port/db` of a Redis or Valkey server; unset, the store is in-process
    /// (enough for one replica). No password in it: see `password_env`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// An environment variable holding the server's password (`AUTH`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// Seconds a call's result is kept under its idempotency key.
    pub idempotency_ttl_seconds: u64,
    /// Seconds one store command may take before the call is refused (fail closed).
    pub timeout_seconds: f64,
    /// Bytes the in-process store may hold of stored results (and other callers' notes);
    /// past it the least recently used go first.
    pub max_memory_bytes: u64,
    /// Bytes one caller's stored results may take of it; past it that caller's least
    /// recently used go first, so one caller cannot push the others' out.
    pub max_bytes_per_caller: u64,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            url: None,
            password_env: None,
            idempotency_ttl_seconds: 86_400,
            timeout_seconds: 2.0,
            max_memory_bytes: 64 * 1024 * 1024,
            max_bytes_per_caller: 8 * 1024 * 1024,
        }
    }
}

/// `server.confirm.without_elicitation`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WithoutElicitation {
    /// Fail closed: an error result, nothing sent.
    #[default]
    Refuse,
    /// Send the call unconfirmed (logged as such).
    Proceed,
}

/// How restmcp authenticates to the introspection endpoint (client_secret_basic).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionSettings {
    /// The client identifier restmcp is registered under at the authorization server.
    pub client_id: String,
    /// The environment variable holding that client's secret.
    pub client_secret_env: String,
    /// The introspection endpoint; by default the one the first issuer's metadata names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
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
            metrics_token_env: None,
            identity_key_env: None,
            console: None,
            console_arguments: false,
            threads: 1,
            auth: None,
            oauth: None,
            tls: None,
            confirm: ConfirmSettings::default(),
            store: StoreSettings::default(),
            readiness: ReadinessSettings::default(),
            header_read_timeout_seconds: 30,
            body_read_timeout_seconds: 60,
            idle_timeout_seconds: 75,
            max_connections: 10_000,
            max_sessions: 1_000,
            session_idle_seconds: 1800,
            max_sessions_per_client: 100,
            max_sse_streams: 5_000,
            max_streams_per_client: 100,
        }
    }
}

impl ServerSettings {
    /// Whether `/console` is served: `console` when set, else whether `listen` is a
    /// loopback address (`127.0.0.0/8`, `::1`, `localhost`).
    pub fn console_enabled(&self) -> bool {
        self.console
            .unwrap_or_else(|| listens_on_loopback(&self.listen))
    }
}

/// Whether the address `listen` names (`host:port`) is this machine only.
fn listens_on_loopback(listen: &str) -> bool {
    if let Ok(address) = listen.parse::<std::net::SocketAddr>() {
        return address.ip().is_loopback();
    }
    let host = listen.rsplit_once(':').map_or(listen, |(host, _)| host);
    host.eq_ignore_ascii_case("localhost")
}

#[cfg(test)]
mod console_tests {
    use super::*;

    #[test]
    fn the_console_is_on_by_default_only_on_loopback() {
        let on = |listen: &str, console: Option<bool>| {
            ServerSettings {
                listen: listen.into(),
                console,
                ..Default::default()
            }
            .console_enabled()
        };
        assert!(on("127.0.0.1:8080", None));
        assert!(on("[::1]:8080", None));
        assert!(on("localhost:8080", None));
        assert!(!on("0.0.0.0:8080", None));
        assert!(!on("[::]:8080", None));
        assert!(!on("10.1.2.3:8080", None));
        assert!(!on("127.0.0.1:8080", Some(false)));
        assert!(on("0.0.0.0:8080", Some(true)));
    }
}
