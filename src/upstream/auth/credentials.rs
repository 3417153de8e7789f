//! Credentials read at load: each `[apis.NAME.auth.SCHEME]` table checked against the
//! scheme the description declares (or the config's own, with `type`), its environment
//! variables read once (a missing or empty one is an error naming it) and held as
//! [`Secret`]s, every value added to the redactor in the forms an upstream could echo it
//! in; and where the credentials may go (the configured `base_url`'s origin and the
//! `credential_origins`, a spec's `tokenUrl` only on the API's own site).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::utf8_percent_encode;

use super::oauth::OAuthClient;
use super::placement::{COOKIE_VALUE, QUERY_VALUE};
use super::redact::Redactor;
use crate::config::{ApiConfig, AuthConfig, AuthKind, ForwardHeader, is_token};
use crate::secret::Secret;
use crate::spec::{ApiKeyLocation, HttpAuthScheme, SecurityScheme};

pub(super) struct ApiAuth {
    /// The schemes the description declares.
    pub(super) declared: BTreeMap<String, SecurityScheme>,
    /// Schemes with credentials, by name (declared ones and the config's own).
    pub(super) credentials: BTreeMap<String, Credential>,
    /// The config's own schemes, applied to every operation.
    pub(super) global: Vec<String>,
    pub(super) forward: Vec<ForwardHeader>,
    /// The only origins credentials are sent to: the configured `base_url`'s and the
    /// `credential_origins` (`https://api.example.com`, as the url crate writes them).
    pub(super) origins: Vec<String>,
}

pub(super) enum Credential {
    ApiKey {
        name: String,
        location: ApiKeyLocation,
        value: Secret,
    },
    /// The whole `Authorization` value: `Bearer …` or `Basic …`.
    Authorization(Secret),
    OAuth2(Arc<OAuthClient>),
}

/// Builds one API's credentials from its config and declared schemes.
pub(super) fn api_auth(
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
                Credential::Authorization(Secret::new(format!("Bearer {token}")))
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
                Credential::Authorization(Secret::new(format!("Basic {encoded}")))
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
                    value: Secret::new(value),
                }
            }
            AuthKind::OAuth2 => {
                let spec_token_url = match spec_scheme {
                    Some(SecurityScheme::OAuth2 { token_url, .. }) => Some(token_url.clone()),
                    Some(SecurityScheme::Unsupported { kind }) if kind == "oauth2" => None,
                    Some(other) => return Err(mismatch(&key, other, kind)),
                    None => None,
                };
                let exchange = config.token_exchange.as_ref();
                let from_spec = config.token_url.is_none() && exchange.is_none();
                let configured_url = match exchange {
                    Some(exchange) => Some(exchange.token_url.clone()),
                    None => config.token_url.clone(),
                };
                let token_url = configured_url.or(spec_token_url).ok_or_else(|| {
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
                let client_auth = crate::http_client::basic_client_auth(&client_id, &client_secret);
                redactor.add(&client_secret);
                redactor.add(client_auth.trim_start_matches("Basic "));
                Credential::OAuth2(Arc::new(OAuthClient {
                    token_url,
                    client_auth: Secret::new(client_auth),
                    scopes: config.scopes.clone(),
                    exchange: exchange.cloned(),
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

/// A redirect to another host drops `Authorization` and `Cookie` (`upstream::client`), but
/// not an API key header: a `follow_redirects` origin would receive it. That takes the operator's
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
