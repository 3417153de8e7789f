//! The validated [`Config`]: every check a configuration passes after it is read (ranges,
//! names, URLs and origins, credentials, forwarded headers), each error naming the key.

use super::headers::UNFORWARDABLE;
use super::reload::MAX_RELOAD_TIMEOUT_SECONDS;
use super::syntax::is_http_url;
use super::{
    ApiConfig, Config, ConfigError, HTTP_METHODS, MIN_MESSAGE_BYTES, check_accept, is_token,
    parse_origin,
};

impl Config {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
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
        self.validate_resources()?;
        self.validate_workflows()?;
        for (name, api) in &self.apis {
            validate_api(name, api)?;
            validate_api_limits(name, api, n)?;
        }
        Ok(())
    }

    /// The `[loading]` limits and origins.
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

    /// The `[server]` keys beyond `listen` and `page_size`, and `[log]`.
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
        if let Some(oauth) = &server.oauth {
            validate_oauth(oauth)?;
        }
        validate_store(&server.store)?;
        Ok(())
    }
}

/// Builds the error for `key = value`: `problem`.
fn invalid(key: String, value: String, problem: &str) -> ConfigError {
    ConfigError::Invalid {
        key,
        value,
        problem: problem.to_string(),
    }
}

/// A name of an `[apis.NAME]` or `[workflows.NAME]` table: a-z, 0-9, `_` and `-` (an
/// environment variable can address only lower-case keys).
fn is_table_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// One `[apis.NAME]`: its name, what it is built from, its filters, base URL, timeouts,
/// origins and credentials.
fn validate_api(name: &str, api: &ApiConfig) -> Result<(), ConfigError> {
    if !is_table_name(name) {
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
                !HTTP_METHODS
                    .iter()
                    .any(|known| known.eq_ignore_ascii_case(m))
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
    let timeouts = std::iter::once((format!("apis.{name}.timeout_seconds"), api.timeout_seconds))
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
    validate_auth(name, api)
}

/// One `[apis.NAME]`'s limits and shapes: retries, page size, tool name prefix (at most
/// half of `max_name_length`), rate limits, `accept`, `probe_path`.
fn validate_api_limits(
    name: &str,
    api: &ApiConfig,
    max_name_length: usize,
) -> Result<(), ConfigError> {
    let n = max_name_length;
    if api.max_retries > 10 {
        return Err(invalid(
            format!("apis.{name}.max_retries"),
            api.max_retries.to_string(),
            "must be at most 10",
        ));
    }
    if api.max_page_size == Some(0) {
        return Err(invalid(
            format!("apis.{name}.max_page_size"),
            "0".to_string(),
            "must be at least 1 (leave it out for no maximum)",
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
    Ok(())
}

/// `[server.store]`: a `redis://` URL without a password in it, and bounds that make sense.
fn validate_store(store: &super::StoreSettings) -> Result<(), ConfigError> {
    let invalid = |key: &str, value: String, problem: &str| ConfigError::Invalid {
        key: format!("server.store.{key}"),
        value,
        problem: problem.into(),
    };
    if let Some(url) = &store.url {
        let parsed = url::Url::parse(url).map_err(|e| {
            invalid(
                "url",
                String::new(),
                &format!("is not a URL ({e}); write redis://host:port/db"),
            )
        })?;
        if parsed.scheme() != "redis" || parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid(
                "url",
                parsed.scheme().to_string(),
                "must be redis://host:port/db (a Redis or Valkey server)",
            ));
        }
        if parsed.password().is_some() {
            // The value itself is not repeated: it holds a secret.
            return Err(invalid(
                "url",
                String::new(),
                "must not hold a password; name its environment variable in password_env",
            ));
        }
    }
    if store.idempotency_ttl_seconds == 0 {
        return Err(invalid(
            "idempotency_ttl_seconds",
            "0".into(),
            "must be at least 1",
        ));
    }
    if !(store.timeout_seconds.is_finite()
        && store.timeout_seconds > 0.0
        && store.timeout_seconds <= 60.0)
    {
        return Err(invalid(
            "timeout_seconds",
            store.timeout_seconds.to_string(),
            "must be more than 0 and at most 60",
        ));
    }
    if store.max_memory_bytes < 1024 * 1024 {
        return Err(invalid(
            "max_memory_bytes",
            store.max_memory_bytes.to_string(),
            "must be at least 1048576 (1 MiB)",
        ));
    }
    if store.max_bytes_per_caller == 0 || store.max_bytes_per_caller > store.max_memory_bytes {
        return Err(invalid(
            "max_bytes_per_caller",
            store.max_bytes_per_caller.to_string(),
            "must be at least 1 and at most server.store.max_memory_bytes",
        ));
    }
    Ok(())
}

/// JWS algorithm names `server.oauth.algorithms` may list (RFC 7518 and RFC 8037); `none`
/// is not among them.
const JWS_ALGORITHMS: [&str; 12] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA", "HS256",
    "HS384", "HS512",
];

/// `[server.oauth]`: the resource and issuers are absolute URLs (HTTPS, or HTTP on a
/// loopback host), scopes are scope tokens (RFC 6749, section 3.3), algorithms are known
/// and HMAC ones come with their secret.
fn validate_oauth(oauth: &super::OAuthSettings) -> Result<(), ConfigError> {
    let invalid = |key: &str, value: &str, problem: &str| ConfigError::Invalid {
        key: format!("server.oauth.{key}"),
        value: value.to_string(),
        problem: problem.to_string(),
    };
    if let Err(problem) = check_oauth_url(&oauth.resource) {
        return Err(invalid("resource", &oauth.resource, &problem));
    }
    if oauth.issuers.is_empty() {
        return Err(ConfigError::Key {
            key: "server.oauth.issuers".into(),
            problem: "names no authorization server: list at least one issuer URL".into(),
        });
    }
    for (i, issuer) in oauth.issuers.iter().enumerate() {
        if let Err(problem) = check_oauth_url(issuer) {
            return Err(invalid(&format!("issuers[{i}]"), issuer, &problem));
        }
        if url::Url::parse(issuer).is_ok_and(|u| u.query().is_some()) {
            return Err(invalid(
                &format!("issuers[{i}]"),
                issuer,
                "an issuer identifier has no query (RFC 8414, section 2)",
            ));
        }
    }
    for (i, scope) in oauth.scopes.iter().enumerate() {
        let valid = !scope.is_empty()
            && scope
                .bytes()
                .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b));
        if !valid {
            return Err(invalid(
                &format!("scopes[{i}]"),
                scope,
                "must be one scope token (printable ASCII without spaces, quotes or backslashes)",
            ));
        }
    }
    if oauth.algorithms.is_empty() {
        return Err(ConfigError::Key {
            key: "server.oauth.algorithms".into(),
            problem: "accepts no algorithm: leave it out for the default list".into(),
        });
    }
    for (i, alg) in oauth.algorithms.iter().enumerate() {
        if !JWS_ALGORITHMS.contains(&alg.as_str()) {
            return Err(invalid(
                &format!("algorithms[{i}]"),
                alg,
                &format!("must be one of {}", JWS_ALGORITHMS.join(", ")),
            ));
        }
        if alg.starts_with("HS") && oauth.hmac_secret_env.is_none() {
            return Err(invalid(
                &format!("algorithms[{i}]"),
                alg,
                "an HMAC algorithm needs hmac_secret_env (the secret shared with the issuer)",
            ));
        }
    }
    let env_name = |key: &str, name: &str| {
        if name.is_empty() || name.contains('=') {
            Err(invalid(
                key,
                name,
                "must be the name of an environment variable",
            ))
        } else {
            Ok(())
        }
    };
    if let Some(name) = &oauth.hmac_secret_env {
        env_name("hmac_secret_env", name)?;
    }
    let rate = &oauth.introspection_rate_limit;
    if !(rate.per_second.is_finite() && rate.per_second > 0.0) {
        return Err(invalid(
            "introspection_rate_limit.per_second",
            &rate.per_second.to_string(),
            "must be a number of introspections per second above 0",
        ));
    }
    if oauth.introspection_cache_seconds > 3600 {
        return Err(invalid(
            "introspection_cache_seconds",
            &oauth.introspection_cache_seconds.to_string(),
            "must be at most 3600 (a revoked token would be accepted that long)",
        ));
    }
    if let Some(introspection) = &oauth.introspection {
        env_name(
            "introspection.client_secret_env",
            &introspection.client_secret_env,
        )?;
        if introspection.client_id.is_empty() {
            return Err(invalid(
                "introspection.client_id",
                "",
                "must name restmcp's client at the authorization server",
            ));
        }
        if let Some(url) = &introspection.url
            && let Err(problem) = check_oauth_url(url)
        {
            return Err(invalid("introspection.url", url, &problem));
        }
    }
    Ok(())
}

/// An absolute URL without a fragment, over HTTPS, or HTTP to a loopback host (OAuth 2.1,
/// section 1.5: tokens and metadata travel only over TLS, except on the local machine).
fn check_oauth_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|e| format!("is not an absolute URL: {e}"))?;
    if url.fragment().is_some() {
        return Err("must not have a fragment".into());
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err("must name a host".into()),
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err("must use https (http only on a loopback host)".into()),
        _ => Err("must be an https URL".into()),
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
    if let Some(header) = &api.idempotency_header
        && !is_token(header)
    {
        return Err(ConfigError::Key {
            key: format!("apis.{api_name}.idempotency_header"),
            problem: format!("\"{header}\" is not a valid header name"),
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

impl Config {
    /// `[resources]`: a poll interval between 1 s and a day, caps of at least one.
    fn validate_resources(&self) -> Result<(), ConfigError> {
        let resources = &self.resources;
        if !(1..=super::surface::MAX_POLL_SECONDS).contains(&resources.poll_seconds) {
            return Err(ConfigError::Invalid {
                key: "resources.poll_seconds".into(),
                value: resources.poll_seconds.to_string(),
                problem: "must be between 1 and 86400 (one day)".into(),
            });
        }
        if resources.max_subscriptions == 0 || resources.max_subscriptions_per_session == 0 {
            return Err(ConfigError::Key {
                key: "resources".into(),
                problem: "max_subscriptions and max_subscriptions_per_session must be at least 1 \
                          (a session subscribes to nothing unless it asks)"
                    .into(),
            });
        }
        Ok(())
    }
}

impl Config {
    /// `[workflows.NAME]`: a name like an API's, `max_steps` and `timeout_seconds` within
    /// their ranges. Whether its sources name APIs is checked when the document loads (an
    /// API may come from `specs_dir`).
    fn validate_workflows(&self) -> Result<(), ConfigError> {
        for (name, workflows) in &self.workflows {
            let invalid = |key: &str, value: String, problem: &str| ConfigError::Invalid {
                key: format!("workflows.{name}{key}"),
                value,
                problem: problem.to_string(),
            };
            if !is_table_name(name) {
                return Err(invalid(
                    "",
                    name.clone(),
                    "a workflows name is lowercase letters, digits, '_' and '-'",
                ));
            }
            if !(1..=super::MAX_MAX_STEPS).contains(&workflows.max_steps) {
                return Err(invalid(
                    ".max_steps",
                    workflows.max_steps.to_string(),
                    "must be between 1 and 1000",
                ));
            }
            if !(1..=86_400).contains(&workflows.timeout_seconds) {
                return Err(invalid(
                    ".timeout_seconds",
                    workflows.timeout_seconds.to_string(),
                    "must be between 1 and 86400 (one day)",
                ));
            }
            let bad_prefix = workflows
                .prefix
                .bytes()
                .any(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'));
            if bad_prefix {
                return Err(invalid(
                    ".prefix",
                    workflows.prefix.clone(),
                    "a tool name prefix is letters, digits, '_', '-' and '.'",
                ));
            }
        }
        Ok(())
    }
}
