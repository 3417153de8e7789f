//! Upstream authentication: the credentials each API's security schemes need, applied to
//! the built request, and the redaction that keeps them out of every result.
//!
//! * **Credentials** come from `[apis.NAME.auth.SCHEME]` tables, which name environment
//!   variables; the values are read once, when the [`Authenticator`] is built (a missing
//!   variable is an error naming it), and held as [`Secret`]s.
//! * **Where they may go** is the operator's word, never the spec's: the origin of the API's
//!   configured `base_url` and its `credential_origins`. A request for any other origin gets
//!   no credential and is refused. A `tokenUrl` taken from the spec (which would receive the
//!   client secret) must be https or loopback and on the `base_url`'s site, else the config's
//!   `token_url` is required; an API-key header that a `follow_redirects` origin would receive
//!   needs that origin in `credential_origins`.
//! * **Choosing** ([`Authenticator::apply`]): the operation's requirements are alternatives.
//!   The first alternative whose schemes all have credentials (or whose credentials the
//!   request already carries, e.g. from a forwarded header) is used; an empty alternative
//!   (anonymous access) is used only when no other is satisfiable. Schemes the config adds
//!   itself (with `type`) apply to every operation. When an API has credentials configured
//!   and an operation's requirements cannot be met, the call fails naming the schemes and the
//!   keys to set; an API with no `auth` table at all is called as before, without
//!   credentials, leaving the verdict to the upstream.
//! * **Applying**: API keys (header; query parameter, percent-encoded; cookie, merged into
//!   the Cookie header), `Authorization: Bearer`/`Basic`, and OAuth 2.0 client credentials
//!   (token fetched with HTTP Basic client authentication, RFC 6749 §4.4 and §2.3.1, cached
//!   per scope set, refreshed 30 s before it expires, one fetch shared by concurrent callers,
//!   [`Authenticator::invalidate`]d after a 401). A configured credential replaces whatever
//!   the request held under the same header, parameter or cookie name.
//! * **Redaction** ([`Authenticator::redact`], in `auth::redact`): every configured secret and
//!   every access token issued is replaced by `[REDACTED]` in any text, also in the forms an
//!   upstream could echo it in (base64, hex, percent- and JSON-encoded, any letter case), so an
//!   upstream that echoes the request cannot leak them through a result.
//! * **Forwarding** ([`Authenticator::forward`]): headers of the incoming MCP request named in
//!   the API's `forward_headers` allowlist are passed on, optionally renamed. Nothing else is
//!   forwarded — in particular not the client's own `Authorization` unless the list names it.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;
use url::form_urlencoded;

use super::request::HttpRequest;
use super::{Content, ToolResult};
use crate::catalog::Catalog;
use crate::config::{ApiConfig, AuthConfig, AuthKind, Config, ForwardHeader, is_token};
use crate::http_client;
use crate::spec::{ApiKeyLocation, HttpAuthScheme, SecurityRequirement, SecurityScheme};

mod redact;
#[cfg(test)]
mod tests;

use redact::Redactor;

/// What replaces a secret in any text restmcp returns or logs.
pub const REDACTED: &str = "[REDACTED]";

/// A token is refreshed when it has less than this left to live.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// A credential value. It prints as `[REDACTED]`, so it cannot reach a log or a message by
/// accident; [`Secret::expose`] is the one way to the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// What the incoming MCP request carries that a call may use: its HTTP headers (none over
/// stdio).
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Header names and values as received; names are matched case-insensitively.
    pub headers: Vec<(String, String)>,
    /// The caller's W3C trace context (HTTP `traceparent` header or the request's
    /// `_meta`), continued on the upstream request.
    pub trace: Option<crate::telemetry::trace::TraceContext>,
    /// The client takes any JSON value as structured content (MCP 2026-07-28): a scalar or
    /// array body is given as it is, not as `{"result": …}`, and without an outputSchema
    /// too.
    pub bare_structured: bool,
}

impl CallContext {
    /// The headers of an HTTP request (values that are not visible ASCII are left out).
    pub fn from_headers(headers: &reqwest::header::HeaderMap) -> CallContext {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        CallContext {
            trace: text("traceparent").and_then(|traceparent| {
                crate::telemetry::trace::TraceContext::parse(traceparent, text("tracestate"))
            }),
            headers: headers
                .iter()
                .filter_map(|(name, value)| {
                    Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
                })
                .collect(),
            bare_structured: false,
        }
    }
}

/// The credentials in force for one API and the tokens they use.
pub struct Authenticator {
    apis: HashMap<String, ApiAuth>,
    redactor: Arc<Redactor>,
    client: Option<reqwest::Client>,
}

/// Names only: which APIs have which credentials, never a value.
impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut apis: Vec<(&String, Vec<&String>)> = self
            .apis
            .iter()
            .map(|(name, api)| (name, api.credentials.keys().collect()))
            .collect();
        apis.sort();
        f.debug_struct("Authenticator")
            .field("credentials", &apis)
            .finish_non_exhaustive()
    }
}

impl Default for Authenticator {
    /// No API known: requests are sent as built and nothing is redacted.
    fn default() -> Self {
        Authenticator {
            apis: HashMap::new(),
            redactor: Arc::new(Redactor::default()),
            client: None,
        }
    }
}

struct ApiAuth {
    /// The schemes the description declares.
    declared: BTreeMap<String, SecurityScheme>,
    /// Schemes with credentials, by name (declared ones and the config's own).
    credentials: BTreeMap<String, Credential>,
    /// The config's own schemes, applied to every operation.
    global: Vec<String>,
    forward: Vec<ForwardHeader>,
    /// The only origins credentials are sent to: the configured `base_url`'s and the
    /// `credential_origins` (`https://api.example.com`, as the url crate writes them).
    origins: Vec<String>,
}

enum Credential {
    ApiKey {
        name: String,
        location: ApiKeyLocation,
        value: Secret,
    },
    /// The whole `Authorization` value: `Bearer …` or `Basic …`.
    Authorization(Secret),
    OAuth2(Arc<OAuthClient>),
}

/// The tokens a request was sent with, so a 401 can invalidate exactly those.
#[derive(Debug, Default, Clone)]
pub struct Applied {
    tokens: Vec<(Arc<TokenSlot>, u64)>,
}

impl Applied {
    /// True when an OAuth access token was used (a 401 may then mean it was revoked).
    pub fn uses_oauth(&self) -> bool {
        !self.tokens.is_empty()
    }
}

impl Authenticator {
    /// The credentials of every configured API, for the schemes `catalog` holds. `env` looks
    /// up environment variables (`|name| std::env::var(name).ok()` in production).
    pub fn new(
        catalog: &Catalog,
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Authenticator, String> {
        let mut auth = Authenticator::default();
        let mut redactor = Redactor::default();
        // An API in mock mode is never called, so it needs no credentials.
        for (api_name, api) in config.apis.iter().filter(|(_, api)| !api.mock) {
            let declared = catalog
                .security_schemes(api_name)
                .cloned()
                .unwrap_or_default();
            let api_auth = api_auth(api_name, api, declared, &env, &mut redactor)?;
            auth.apis.insert(api_name.clone(), api_auth);
        }
        // Values an overlay takes from the environment for hidden arguments may be secrets.
        for tool in catalog.tools() {
            for binding in &tool.route.arguments.bindings {
                if let Some(secret) = binding.fixed.as_ref().and_then(|f| f.secret()) {
                    redactor.add(secret);
                    redactor.add(&utf8_percent_encode(secret, QUERY_VALUE).to_string());
                }
            }
        }
        let uses_oauth = auth.apis.values().any(|api| {
            api.credentials
                .values()
                .any(|c| matches!(c, Credential::OAuth2(_)))
        });
        if uses_oauth {
            auth.client = Some(token_client()?);
        }
        auth.redactor = Arc::new(redactor);
        Ok(auth)
    }

    /// Sets the credentials `requirements` call for on `request`. An unsatisfiable
    /// requirement, or a token that cannot be obtained, is an error worded for the model
    /// (names only, never values).
    pub async fn apply(
        &self,
        api: &str,
        requirements: &[SecurityRequirement],
        request: &mut HttpRequest,
    ) -> Result<Applied, String> {
        let mut applied = Applied::default();
        let Some(auth) = self.apis.get(api) else {
            return Ok(applied);
        };
        if !auth.credentials.is_empty() && !origin_allowed(&request.url, &auth.origins) {
            return Err(format!(
                "the request would go to {}, but API \"{api}\"'s credentials are sent only to {} \
                 (apis.{api}.base_url, apis.{api}.credential_origins)",
                origin_of(&request.url),
                auth.origins.join(", ")
            ));
        }
        for name in &auth.global {
            self.apply_one(auth, name, &[], request, &mut applied)
                .await?;
        }
        if requirements.is_empty() {
            return Ok(applied);
        }
        let chosen = requirements
            .iter()
            .find(|alt| !alt.is_empty() && alt.keys().all(|s| auth.satisfies(s, request)));
        let Some(chosen) = chosen else {
            let anonymous = requirements.iter().any(|alt| alt.is_empty());
            if anonymous || !auth.global.is_empty() || auth.credentials.is_empty() {
                return Ok(applied);
            }
            return Err(auth.unsatisfied(api, requirements));
        };
        for (name, scopes) in chosen {
            if auth.credentials.contains_key(name) && !auth.global.contains(name) {
                self.apply_one(auth, name, scopes, request, &mut applied)
                    .await?;
            }
        }
        Ok(applied)
    }

    async fn apply_one(
        &self,
        auth: &ApiAuth,
        name: &str,
        scopes: &[String],
        request: &mut HttpRequest,
        applied: &mut Applied,
    ) -> Result<(), String> {
        match &auth.credentials[name] {
            Credential::ApiKey {
                name,
                location,
                value,
            } => match location {
                ApiKeyLocation::Header => set_header(&mut request.headers, name, value.expose()),
                ApiKeyLocation::Query => set_query(&mut request.url, name, value.expose()),
                ApiKeyLocation::Cookie => set_cookie(&mut request.headers, name, value.expose()),
            },
            Credential::Authorization(value) => {
                set_header(&mut request.headers, "Authorization", value.expose())
            }
            Credential::OAuth2(oauth) => {
                let Some(client) = &self.client else {
                    return Err("no HTTP client for token requests".into());
                };
                let (slot, generation, token) =
                    oauth
                        .token(client, scopes, &self.redactor)
                        .await
                        .map_err(|problem| format!("security scheme \"{name}\": {problem}"))?;
                set_header(
                    &mut request.headers,
                    "Authorization",
                    &format!("Bearer {}", token.expose()),
                );
                applied.tokens.push((slot, generation));
            }
        }
        Ok(())
    }

    /// Applies the credentials and sends `request` through `send` (which hands the request
    /// back with the outcome). When the request carried an OAuth access token and `status`
    /// of the answer is 401 (a token revoked before it expired), the token is invalidated
    /// and the request sent once more with a fresh one. The outer error means no request
    /// was sent (the requirements cannot be met, or no token could be obtained); the inner
    /// result is the last answer or sending failure.
    pub async fn authorized<T, F, Fut>(
        &self,
        api: &str,
        requirements: &[SecurityRequirement],
        mut request: HttpRequest,
        send: F,
        status: impl Fn(&T) -> u16,
    ) -> Result<Result<T, String>, String>
    where
        F: Fn(HttpRequest) -> Fut,
        Fut: Future<Output = (HttpRequest, Result<T, String>)>,
    {
        let applied = self.apply(api, requirements, &mut request).await?;
        let (mut request, answer) = send(request).await;
        match &answer {
            Ok(received) if status(received) == 401 && applied.uses_oauth() => {}
            _ => return Ok(answer),
        }
        self.invalidate(&applied);
        if let Err(problem) = self.apply(api, requirements, &mut request).await {
            return Ok(Err(format!(
                "it answered 401 and a new access token could not be obtained: {problem}"
            )));
        }
        Ok(send(request).await.1)
    }

    /// Drops the access tokens `applied` used, unless a newer one has replaced them
    /// already, so the next [`Authenticator::apply`] fetches a fresh one.
    pub fn invalidate(&self, applied: &Applied) {
        for (slot, generation) in &applied.tokens {
            slot.invalidate(*generation);
        }
    }

    /// Copies the allowlisted headers of the incoming request onto `request`, renamed where
    /// configured, replacing any header of the same name. A value holding CR, LF or another
    /// control character is refused.
    pub fn forward(
        &self,
        api: &str,
        context: &CallContext,
        request: &mut HttpRequest,
    ) -> Result<(), String> {
        let Some(auth) = self.apis.get(api) else {
            return Ok(());
        };
        for rule in &auth.forward {
            let values: Vec<&str> = context
                .headers
                .iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case(rule.from()))
                .map(|(_, value)| value.as_str())
                .collect();
            if values.is_empty() {
                continue;
            }
            if values
                .iter()
                .any(|v| v.chars().any(|c| c.is_control() && c != '\t'))
            {
                return Err(format!(
                    "the incoming header \"{}\" holds a line break or control character and is not forwarded",
                    rule.from()
                ));
            }
            request
                .headers
                .retain(|(name, _)| !name.eq_ignore_ascii_case(rule.to()));
            for value in values {
                request
                    .headers
                    .push((rule.to().to_string(), value.to_string()));
            }
        }
        Ok(())
    }

    /// `text` with every secret replaced by `[REDACTED]`.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// A result with every secret redacted: texts, structured content (strings and keys)
    /// and binary content (decoded, redacted, re-encoded only when a secret occurs in it).
    pub fn redact_result(&self, mut result: ToolResult) -> ToolResult {
        if self.redactor.is_empty() {
            return result;
        }
        for content in &mut result.content {
            match content {
                Content::Text { text } => *text = self.redactor.redact(text),
                Content::Image { data, .. } | Content::Audio { data, .. } => {
                    self.redactor.redact_base64(data)
                }
                Content::Resource { blob, uri, .. } => {
                    self.redactor.redact_base64(blob);
                    *uri = self.redactor.redact(uri);
                }
            }
        }
        if let Some(structured) = &mut result.structured {
            self.redactor.redact_value(structured);
        }
        result
    }
}

impl ApiAuth {
    /// True when scheme `name` has credentials, or the request already carries what the
    /// scheme sends (a forwarded `Authorization`, a key given as an argument).
    fn satisfies(&self, name: &str, request: &HttpRequest) -> bool {
        if self.credentials.contains_key(name) {
            return true;
        }
        match self.declared.get(name).and_then(carrier) {
            Some((ApiKeyLocation::Header, header)) => has_header(&request.headers, header),
            Some((ApiKeyLocation::Query, param)) => has_query(&request.url, param),
            Some((ApiKeyLocation::Cookie, cookie)) => has_cookie(&request.headers, cookie),
            None => false,
        }
    }

    /// The error for requirements none of which can be met: each alternative with what is
    /// missing and the keys that would provide it.
    fn unsatisfied(&self, api: &str, requirements: &[SecurityRequirement]) -> String {
        let alternatives: Vec<String> = requirements
            .iter()
            .map(|alt| {
                alt.keys()
                    .filter(|name| !self.credentials.contains_key(*name))
                    .map(|name| {
                        let key = format!("[apis.{api}.auth.{name}]");
                        match self.declared.get(name) {
                            None => format!("\"{name}\" (the description does not declare it)"),
                            Some(scheme) => match needed_keys(scheme) {
                                Some(keys) => format!(
                                    "\"{name}\" ({}: set {keys} in {key})",
                                    scheme.describe()
                                ),
                                None => format!(
                                    "\"{name}\" ({}, which restmcp cannot use by itself)",
                                    scheme.describe()
                                ),
                            },
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" and ")
            })
            .collect();
        format!(
            "API \"{api}\" requires credentials for this operation that are not configured: {}",
            alternatives.join(", or ")
        )
    }
}

/// Where a declared scheme's credential travels, when restmcp can tell.
fn carrier(scheme: &SecurityScheme) -> Option<(ApiKeyLocation, &str)> {
    match scheme {
        SecurityScheme::ApiKey { name, location } => Some((*location, name)),
        SecurityScheme::Http { .. } | SecurityScheme::OAuth2 { .. } => {
            Some((ApiKeyLocation::Header, "Authorization"))
        }
        SecurityScheme::Unsupported { kind }
            if kind == "oauth2" || kind == "openIdConnect" || kind.starts_with("http ") =>
        {
            Some((ApiKeyLocation::Header, "Authorization"))
        }
        SecurityScheme::Unsupported { .. } => None,
    }
}

fn needed_keys(scheme: &SecurityScheme) -> Option<&'static str> {
    match scheme {
        SecurityScheme::ApiKey { .. } => Some("value_env"),
        SecurityScheme::Http {
            scheme: HttpAuthScheme::Bearer,
            ..
        } => Some("token_env"),
        SecurityScheme::Http {
            scheme: HttpAuthScheme::Basic,
            ..
        } => Some("username_env and password_env"),
        SecurityScheme::OAuth2 { .. } => Some("client_id_env and client_secret_env"),
        SecurityScheme::Unsupported { kind } if kind == "oauth2" => {
            Some("client_id_env, client_secret_env and token_url")
        }
        SecurityScheme::Unsupported { .. } => None,
    }
}

/// Builds one API's credentials from its config and declared schemes.
fn api_auth(
    api_name: &str,
    api: &ApiConfig,
    declared: BTreeMap<String, SecurityScheme>,
    env: &impl Fn(&str) -> Option<String>,
    redactor: &mut Redactor,
) -> Result<ApiAuth, String> {
    let mut credentials = BTreeMap::new();
    let mut global = Vec::new();
    let origins = credential_origins(api_name, api)?;
    for (scheme_name, config) in &api.auth {
        let key = format!("apis.{api_name}.auth.{scheme_name}");
        let kind = config.checked_kind().map_err(|(sub, problem)| {
            if sub.is_empty() {
                format!("{key}: {problem}")
            } else {
                format!("{key}.{sub}: {problem}")
            }
        })?;
        let spec_scheme = declared.get(scheme_name);
        match (spec_scheme, config.kind) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{key}.type: the description declares scheme \"{scheme_name}\" itself; remove `type` (and `in`/`name`), or give the config's own scheme another name"
                ));
            }
            (None, None) => {
                let known: Vec<&str> = declared.keys().map(String::as_str).collect();
                return Err(format!(
                    "{key}: the description declares no security scheme \"{scheme_name}\" (it declares: {}); to add a scheme of the config's own, set `type`",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            (None, Some(_)) => global.push(scheme_name.clone()),
            (Some(_), None) => {}
        }
        let read = |sub: &str, var: &Option<String>| read_env(&key, sub, var, env);
        let credential = match kind {
            AuthKind::Bearer => {
                check_scheme(&key, spec_scheme, kind)?;
                let token = read("token_env", &config.token_env)?;
                check_header_safe(&key, "token_env", config, &token)?;
                redactor.add(&token);
                Credential::Authorization(Secret(format!("Bearer {token}")))
            }
            AuthKind::Basic => {
                check_scheme(&key, spec_scheme, kind)?;
                let username = read("username_env", &config.username_env)?;
                let password =
                    read_env_allow_empty(&key, "password_env", &config.password_env, env)?;
                if username.contains(':') || username.chars().any(char::is_control) {
                    return Err(format!(
                        "{key}.username_env: the user name in ${} holds ':' or a control character, which Basic authentication cannot carry",
                        config.username_env.as_deref().unwrap_or("")
                    ));
                }
                let encoded = STANDARD.encode(format!("{username}:{password}"));
                redactor.add(&password);
                redactor.add(&encoded);
                Credential::Authorization(Secret(format!("Basic {encoded}")))
            }
            AuthKind::ApiKey => {
                let (name, location) = match spec_scheme {
                    Some(SecurityScheme::ApiKey { name, location }) => (name.clone(), *location),
                    Some(other) => return Err(mismatch(&key, other, kind)),
                    None => (
                        config.name.clone().unwrap_or_default(),
                        config.location.unwrap_or(ApiKeyLocation::Header),
                    ),
                };
                if location != ApiKeyLocation::Query && !is_token(&name) {
                    return Err(format!(
                        "{key}: \"{name}\" is not a valid {} name",
                        location.as_str()
                    ));
                }
                if location == ApiKeyLocation::Header {
                    check_redirects_keep_key(&key, api_name, api, &origins, &name)?;
                }
                let value = read("value_env", &config.value_env)?;
                check_header_safe(&key, "value_env", config, &value)?;
                redactor.add(&value);
                redactor.add(&utf8_percent_encode(&value, QUERY_VALUE).to_string());
                redactor.add(&utf8_percent_encode(&value, COOKIE_VALUE).to_string());
                Credential::ApiKey {
                    name,
                    location,
                    value: Secret(value),
                }
            }
            AuthKind::OAuth2 => {
                let spec_token_url = match spec_scheme {
                    Some(SecurityScheme::OAuth2 { token_url, .. }) => Some(token_url.clone()),
                    Some(SecurityScheme::Unsupported { kind }) if kind == "oauth2" => None,
                    Some(other) => return Err(mismatch(&key, other, kind)),
                    None => None,
                };
                let from_spec = config.token_url.is_none();
                let token_url = config.token_url.clone().or(spec_token_url).ok_or_else(|| {
                    format!(
                        "{key}.token_url: the description's oauth2 scheme \"{scheme_name}\" has no client credentials flow; set token_url"
                    )
                })?;
                let Some(parsed) = url::Url::parse(&token_url)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
                else {
                    return Err(format!(
                        "{key}: the token URL \"{token_url}\" is not an absolute http(s) URL; set token_url"
                    ));
                };
                if from_spec {
                    check_spec_token_url(&key, &parsed, api)?;
                    tracing::info!(
                        "API \"{api_name}\": OAuth scheme \"{scheme_name}\" gets its tokens from {token_url}, the spec's tokenUrl ({key}.token_url overrides it)"
                    );
                }
                let client_id = read("client_id_env", &config.client_id_env)?;
                let client_secret = read("client_secret_env", &config.client_secret_env)?;
                // RFC 6749 §2.3.1: both are form-encoded before Basic encoding.
                let basic = STANDARD.encode(format!(
                    "{}:{}",
                    form_urlencoded::byte_serialize(client_id.as_bytes()).collect::<String>(),
                    form_urlencoded::byte_serialize(client_secret.as_bytes()).collect::<String>()
                ));
                redactor.add(&client_secret);
                redactor.add(&basic);
                Credential::OAuth2(Arc::new(OAuthClient {
                    token_url,
                    client_auth: Secret(format!("Basic {basic}")),
                    scopes: config.scopes.clone(),
                    slots: Mutex::new(HashMap::new()),
                }))
            }
        };
        credentials.insert(scheme_name.clone(), credential);
    }
    Ok(ApiAuth {
        declared,
        credentials,
        global,
        forward: api.forward_headers.clone(),
        origins,
    })
}

/// Where an API's credentials may go: its configured `base_url`'s origin and the
/// `credential_origins`. The spec's `servers` never widen it.
fn credential_origins(api_name: &str, api: &ApiConfig) -> Result<Vec<String>, String> {
    let mut origins = Vec::new();
    if let Some(base) = &api.base_url {
        let url = url::Url::parse(base)
            .map_err(|e| format!("apis.{api_name}.base_url: is not a URL ({e})"))?;
        origins.push(url.origin().ascii_serialization());
    } else if !api.auth.is_empty() {
        return Err(format!(
            "apis.{api_name}.base_url: is required when `auth` is set: credentials are sent only to the origin of the configured base URL"
        ));
    }
    for (index, origin) in api.credential_origins.iter().enumerate() {
        let origin = crate::config::parse_origin(origin)
            .map_err(|problem| format!("apis.{api_name}.credential_origins[{index}]: {problem}"))?;
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}

/// True when `url` is on one of `origins` (as [`credential_origins`] writes them).
fn origin_allowed(url: &str, origins: &[String]) -> bool {
    origins.iter().any(|origin| {
        url.starts_with(origin.as_str())
            && matches!(
                url.as_bytes().get(origin.len()),
                None | Some(b'/' | b'?' | b'#')
            )
    })
}

/// The origin of a request URL, for messages.
fn origin_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| "an unparsable URL".into())
}

/// A `tokenUrl` the spec names receives the client secret, so the spec alone may not
/// choose just any: it must use https (or stay on this machine), and be on the API's own
/// site (registrable domain); anywhere else takes the operator's `token_url`.
fn check_spec_token_url(key: &str, token_url: &url::Url, api: &ApiConfig) -> Result<(), String> {
    let loopback = match token_url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if token_url.scheme() != "https" && !loopback {
        return Err(format!(
            "{key}.token_url: the spec's tokenUrl {token_url} is not https, and the client secret would travel in clear text; set token_url to use it anyway"
        ));
    }
    let api_host = api
        .base_url
        .as_deref()
        .and_then(|base| url::Url::parse(base).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    let token_host = token_url.host_str().map(str::to_ascii_lowercase);
    let same_site = match (api_host.as_deref(), token_host.as_deref()) {
        (Some(a), Some(t)) => a == t || matches!((site(a), site(t)), (Some(x), Some(y)) if x == y),
        _ => false,
    };
    if !same_site {
        return Err(format!(
            "{key}.token_url: the spec's tokenUrl {token_url} is on another site than the API's base_url ({}); the client secret goes only where the config says: set token_url",
            api.base_url.as_deref().unwrap_or("none")
        ));
    }
    Ok(())
}

/// The registrable domain of a DNS name (`api.example.co.uk` → `example.co.uk`), from the
/// Public Suffix List; `None` for an IP address or a bare suffix.
fn site(host: &str) -> Option<&str> {
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    psl::domain_str(host)
}

/// reqwest drops `Authorization` and `Cookie` on a redirect to another host, but not an
/// API key header: a `follow_redirects` origin would receive it. That takes the operator's
/// word in `credential_origins`.
fn check_redirects_keep_key(
    key: &str,
    api_name: &str,
    api: &ApiConfig,
    origins: &[String],
    header: &str,
) -> Result<(), String> {
    for origin in &api.follow_redirects {
        let Ok(origin) = crate::config::parse_origin(origin) else {
            continue;
        };
        if !origins.contains(&origin) {
            return Err(format!(
                "{key}: a redirect to {origin} (apis.{api_name}.follow_redirects) would carry the API key header \"{header}\" there; list {origin} in apis.{api_name}.credential_origins to allow it"
            ));
        }
    }
    Ok(())
}

/// A declared http scheme must match the credential kind.
fn check_scheme(
    key: &str,
    declared: Option<&SecurityScheme>,
    kind: AuthKind,
) -> Result<(), String> {
    let expected = match kind {
        AuthKind::Bearer => HttpAuthScheme::Bearer,
        _ => HttpAuthScheme::Basic,
    };
    match declared {
        None => Ok(()),
        Some(SecurityScheme::Http { scheme, .. }) if *scheme == expected => Ok(()),
        Some(other) => Err(mismatch(key, other, kind)),
    }
}

fn mismatch(key: &str, declared: &SecurityScheme, kind: AuthKind) -> String {
    format!(
        "{key}: the description declares this scheme as {}, but the keys given are for {} credentials",
        declared.describe(),
        kind.as_str()
    )
}

fn read_env(
    key: &str,
    sub: &str,
    var: &Option<String>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let value = read_env_allow_empty(key, sub, var, env)?;
    if value.is_empty() {
        return Err(format!(
            "{key}.{sub}: environment variable {} is empty",
            var.as_deref().unwrap_or("")
        ));
    }
    Ok(value)
}

fn read_env_allow_empty(
    key: &str,
    sub: &str,
    var: &Option<String>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let Some(var) = var.as_deref() else {
        return Err(format!("{key}.{sub}: not set"));
    };
    env(var).ok_or_else(|| format!("{key}.{sub}: environment variable {var} is not set"))
}

/// A value sent in a header must not hold line breaks or other control characters (a
/// trailing newline from `$(cat file)` is the usual one).
fn check_header_safe(key: &str, sub: &str, config: &AuthConfig, value: &str) -> Result<(), String> {
    if value.chars().any(char::is_control) {
        let var = match sub {
            "token_env" => config.token_env.as_deref(),
            _ => config.value_env.as_deref(),
        };
        return Err(format!(
            "{key}.{sub}: environment variable {} holds a control character (a trailing newline?)",
            var.unwrap_or("")
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Placing credentials on the request

/// RFC 3986 unreserved characters stay; everything else is percent-encoded.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// RFC 6265 §4.1.1 cookie-octet excludes controls, space, `"`, `,`, `;` and `\`.
const COOKIE_VALUE: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b',').add(b';').add(b'\\');

fn has_header(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
}

fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    headers.push((name.to_string(), value.to_string()));
}

/// The URL split into (before the query, the query without `?`, the fragment with `#`).
fn split_url(url: &str) -> (&str, Option<&str>, &str) {
    let (rest, fragment) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    match rest.split_once('?') {
        Some((base, query)) => (base, Some(query), fragment),
        None => (rest, None, fragment),
    }
}

fn query_key(pair: &str) -> String {
    let key = pair.split('=').next().unwrap_or("");
    form_urlencoded::parse(key.as_bytes())
        .next()
        .map(|(k, _)| k.into_owned())
        .unwrap_or_default()
}

fn has_query(url: &str, name: &str) -> bool {
    let (_, query, _) = split_url(url);
    query.is_some_and(|q| q.split('&').any(|pair| query_key(pair) == name))
}

/// Appends `name=value` to the query, replacing any parameter of that name.
fn set_query(url: &mut String, name: &str, value: &str) {
    let (base, query, fragment) = split_url(url);
    let mut pairs: Vec<String> = query
        .map(|q| {
            q.split('&')
                .filter(|pair| !pair.is_empty() && query_key(pair) != name)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    pairs.push(format!(
        "{}={}",
        utf8_percent_encode(name, QUERY_VALUE),
        utf8_percent_encode(value, QUERY_VALUE)
    ));
    *url = format!("{base}?{}{fragment}", pairs.join("&"));
}

fn cookie_pairs(value: &str) -> impl Iterator<Item = &str> {
    value.split(';').map(str::trim).filter(|c| !c.is_empty())
}

fn has_cookie(headers: &[(String, String)], name: &str) -> bool {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("cookie"))
        .flat_map(|(_, v)| cookie_pairs(v))
        .any(|c| c.split('=').next() == Some(name))
}

/// Merges `name=value` into the Cookie header (one header, RFC 6265 §5.4), replacing any
/// cookie of that name.
fn set_cookie(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    let mut cookies: Vec<String> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("cookie"))
        .flat_map(|(_, v)| cookie_pairs(v))
        .filter(|c| c.split('=').next() != Some(name))
        .map(str::to_string)
        .collect();
    cookies.push(format!(
        "{name}={}",
        utf8_percent_encode(value, COOKIE_VALUE)
    ));
    match headers
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case("cookie"))
    {
        Some(first) => {
            headers[first].1 = cookies.join("; ");
            let mut index = 0;
            headers.retain(|(n, _)| {
                let keep = index <= first || !n.eq_ignore_ascii_case("cookie");
                index += 1;
                keep
            });
        }
        None => headers.push(("Cookie".to_string(), cookies.join("; "))),
    }
}

// ---------------------------------------------------------------------------------------
// OAuth 2.0 client credentials

/// Token requests: no redirects (a redirect would carry the client secret elsewhere), a
/// bounded wait.
fn token_client() -> Result<reqwest::Client, String> {
    http_client::install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(http_client::USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("cannot start the HTTP client for token requests: {e}"))
}

struct OAuthClient {
    token_url: String,
    /// `Basic base64(urlencode(id):urlencode(secret))`.
    client_auth: Secret,
    /// From the config; else each operation's required scopes are requested.
    scopes: Option<Vec<String>>,
    /// One cache slot per requested scope set.
    slots: Mutex<HashMap<String, Arc<TokenSlot>>>,
}

/// One cached token. `fetch` serializes fetching, so concurrent callers that find no valid
/// token wait for the one fetch and then share its result.
#[derive(Debug, Default)]
struct TokenSlot {
    fetch: tokio::sync::Mutex<()>,
    current: Mutex<Option<Token>>,
}

#[derive(Debug, Clone)]
struct Token {
    access: Secret,
    /// None when the server gave no `expires_in`: valid until a 401 says otherwise.
    expires_at: Option<Instant>,
    generation: u64,
}

static GENERATION: AtomicU64 = AtomicU64::new(1);

impl TokenSlot {
    fn valid(&self) -> Option<Token> {
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        current
            .as_ref()
            .filter(|t| {
                t.expires_at
                    .is_none_or(|at| Instant::now() + REFRESH_MARGIN < at)
            })
            .cloned()
    }

    fn invalidate(&self, generation: u64) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.as_ref().is_some_and(|t| t.generation == generation) {
            *current = None;
        }
    }
}

impl OAuthClient {
    /// A valid access token for `required` scopes (or the configured ones), fetching one if
    /// the cache has none.
    async fn token(
        &self,
        client: &reqwest::Client,
        required: &[String],
        redactor: &Redactor,
    ) -> Result<(Arc<TokenSlot>, u64, Secret), String> {
        let mut scopes: Vec<String> = match &self.scopes {
            Some(scopes) => scopes.clone(),
            None => {
                let mut scopes = required.to_vec();
                scopes.sort();
                scopes.dedup();
                scopes
            }
        };
        scopes.retain(|s| !s.is_empty());
        let scope = scopes.join(" ");
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(slots.entry(scope.clone()).or_default())
        };
        if let Some(token) = slot.valid() {
            return Ok((slot, token.generation, token.access));
        }
        let _fetching = slot.fetch.lock().await;
        if let Some(token) = slot.valid() {
            return Ok((Arc::clone(&slot), token.generation, token.access));
        }
        let token = self.fetch(client, &scope).await?;
        redactor.add_issued(token.access.expose());
        let result = (Arc::clone(&slot), token.generation, token.access.clone());
        *slot.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(token);
        Ok(result)
    }

    /// RFC 6749 §4.4.2: `grant_type=client_credentials` (and `scope`), client authenticated
    /// with HTTP Basic.
    async fn fetch(&self, client: &reqwest::Client, scope: &str) -> Result<Token, String> {
        // The serializer is not Send: it must not live across an await.
        let body = {
            let mut form = form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials");
            if !scope.is_empty() {
                form.append_pair("scope", scope);
            }
            form.finish()
        };
        let started = Instant::now();
        let response = client
            .post(&self.token_url)
            .header(reqwest::header::AUTHORIZATION, self.client_auth.expose())
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| {
                format!(
                    "the token endpoint {} could not be reached: {}",
                    self.token_url,
                    http_client::describe_error(&e)
                )
            })?;
        let status = response.status();
        let body = read_capped(response, 64 * 1024)
            .await
            .map_err(|e| format!("reading the token endpoint's answer failed: {e}"))?;
        let json: Option<Value> = serde_json::from_slice(&body).ok();
        if !status.is_success() {
            let detail = json
                .as_ref()
                .and_then(|j| {
                    let error = j.get("error")?.as_str()?;
                    Some(match j.get("error_description").and_then(Value::as_str) {
                        Some(description) => format!("{error}: {description}"),
                        None => error.to_string(),
                    })
                })
                .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
            return Err(format!(
                "the token endpoint {} answered {status}: {detail}",
                self.token_url
            ));
        }
        let Some(json) = json else {
            return Err(format!(
                "the token endpoint {} answered {status} without a JSON body",
                self.token_url
            ));
        };
        let access = json
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                format!(
                    "the token endpoint {} answered without an access_token",
                    self.token_url
                )
            })?;
        if let Some(kind) = json.get("token_type").and_then(Value::as_str)
            && !kind.eq_ignore_ascii_case("bearer")
        {
            return Err(format!(
                "the token endpoint issued a \"{kind}\" token; only Bearer tokens are supported"
            ));
        }
        if access.chars().any(|c| c.is_control() || c == ' ') {
            return Err(
                "the token endpoint issued an access token restmcp cannot send in a header".into(),
            );
        }
        let lifetime = match json.get("expires_in") {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        let expires_at = lifetime
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| started + Duration::from_secs_f64(s.min(1e9)));
        Ok(Token {
            access: Secret(access.to_string()),
            expires_at,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        })
    }
}

async fn read_capped(mut response: reqwest::Response, cap: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| http_client::describe_error(&e))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > cap {
            return Err(format!("the answer is larger than {cap} bytes"));
        }
    }
    Ok(body)
}
