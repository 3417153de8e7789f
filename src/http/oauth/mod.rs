//! restmcp as an OAuth 2.1 resource server, as the MCP Authorization specification asks
//! (revisions 2025-06-18 onwards): the Protected Resource Metadata document (RFC 9728) that
//! tells clients which authorization servers to get a token from, the `WWW-Authenticate`
//! challenges of RFC 6750 that point to it (401 `invalid_token`, 403 `insufficient_scope`
//! with the scope to ask for), and the check of every presented access token:
//!
//! * a JWT (RFC 9068 or any signed JWT) is verified against its issuer's published keys
//!   ([`issuer`]), with an algorithm allowlist (never `none`, HMAC only with an operator's
//!   secret), `iss` among the configured issuers, `aud` naming this server (RFC 8707), and
//!   `exp`/`nbf` within the configured clock skew;
//! * any other token is introspected (RFC 7662) when introspection is configured.
//!
//! Verdicts are cached per token until it expires ([`cache`]); a JWT's verdict is dropped
//! when its issuer's keys are fetched anew. A token that passes becomes a
//! [`crate::identity::Caller`]. Problems are told in terms of the token's claims,
//! never its value, and no secret reaches a log line.

pub mod cache;
pub mod issuer;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::OAuthSettings;
use crate::identity::{Caller, Pseudonyms};
use crate::rate::Keyed;
use crate::secret::Secret;
use cache::{TokenCache, Verdict};
use issuer::{Issuer, KeySet, fetch_json};

/// The path of the Protected Resource Metadata document (RFC 9728, section 3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How long a refused introspection answer is remembered.
const INVALID_VERDICT_TTL: Duration = Duration::from_secs(10);
/// How long a valid token without `exp` is trusted before it is checked again.
const NO_EXPIRY_TTL: Duration = Duration::from_secs(60);

/// `[server.oauth]` cannot be used as configured.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("server.oauth.{key}: environment variable {name} is not set or empty")]
    MissingEnv { key: &'static str, name: String },
    #[error("server.oauth: {0}")]
    Client(String),
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The token is not good for this server (401 `invalid_token`); the text says why
    /// without repeating the token.
    Invalid(String),
    /// The token could not be checked now: the authorization server's keys or its
    /// introspection endpoint cannot be reached (503).
    Unavailable(String),
    /// The client asked about too many unknown tokens lately: nothing was asked, it may
    /// try again after this long (429).
    Throttled(Duration),
}

struct Introspection {
    /// The whole `Authorization` value restmcp authenticates with (`client_secret_basic`).
    client_auth: Secret,
    url: Option<String>,
}

/// The configured resource server.
pub struct ResourceServer {
    resource: String,
    /// The audiences accepted: the resource as configured, with and without a final `/`.
    audiences: Vec<String>,
    metadata_url: String,
    resource_path: String,
    scopes: Vec<String>,
    algorithms: Vec<Algorithm>,
    hmac: Option<DecodingKey>,
    skew: u64,
    issuers: Vec<Issuer>,
    introspection: Option<Introspection>,
    resource_name: Option<String>,
    cache: TokenCache,
    client: reqwest::Client,
    /// Names each caller (see [`Pseudonyms`]).
    pseudonyms: Arc<Pseudonyms>,
    /// Introspections of tokens without a verdict, per client
    /// (`introspection_rate_limit`).
    introspections: Keyed,
    /// How long an introspected token's verdict is trusted (`introspection_cache_seconds`).
    introspection_ttl: Duration,
}

/// Clients whose introspection buckets are kept (see [`Keyed`]).
const MAX_INTROSPECTING_CLIENTS: usize = 10_000;

/// The claims read from a verified JWT (the rest are not needed).
#[derive(Deserialize)]
struct Claims {
    iss: Option<String>,
    sub: Option<String>,
    exp: Option<u64>,
    scope: Option<Value>,
    scp: Option<Value>,
    client_id: Option<String>,
    azp: Option<String>,
}

impl ResourceServer {
    /// Reads the secrets `settings` names through `env`; callers are named by `pseudonyms`.
    pub fn new(
        settings: &OAuthSettings,
        env: impl Fn(&str) -> Option<String>,
        pseudonyms: Arc<Pseudonyms>,
    ) -> Result<ResourceServer, OAuthError> {
        let secret = |key: &'static str, name: &str| match env(name) {
            Some(value) if !value.trim().is_empty() => Ok(Secret::new(value.trim())),
            _ => Err(OAuthError::MissingEnv {
                key,
                name: name.to_string(),
            }),
        };
        let hmac = match &settings.hmac_secret_env {
            Some(name) => Some(DecodingKey::from_secret(
                secret("hmac_secret_env", name)?.expose().as_bytes(),
            )),
            None => None,
        };
        let introspection = match &settings.introspection {
            Some(i) => Some(Introspection {
                client_auth: Secret::new(crate::http_client::basic_client_auth(
                    &i.client_id,
                    secret("introspection.client_secret_env", &i.client_secret_env)?.expose(),
                )),
                url: i.url.clone(),
            }),
            None => None,
        };
        let resource_url = url::Url::parse(&settings.resource)
            .map_err(|e| OAuthError::Client(format!("resource: {e}")))?;
        let resource_path = resource_url.path().trim_end_matches('/').to_string();
        let metadata_url = format!(
            "{}{METADATA_PATH}{resource_path}",
            resource_url.origin().ascii_serialization()
        );
        let trimmed = settings.resource.trim_end_matches('/').to_string();
        let algorithms = settings
            .algorithms
            .iter()
            .filter_map(|name| name.parse::<Algorithm>().ok())
            .filter(|alg| !is_hmac(*alg) || hmac.is_some())
            .collect();
        crate::http_client::install_crypto_provider();
        // Its own client: no redirects (an issuer's endpoints are where its metadata says).
        let client = reqwest::Client::builder()
            .user_agent(crate::http_client::USER_AGENT)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| OAuthError::Client(format!("cannot start the HTTP client: {e}")))?;
        Ok(ResourceServer {
            resource: settings.resource.clone(),
            audiences: vec![trimmed.clone(), format!("{trimmed}/")],
            metadata_url,
            resource_path,
            scopes: settings.scopes.clone(),
            algorithms,
            hmac,
            skew: settings.clock_skew_seconds,
            issuers: settings
                .issuers
                .iter()
                .map(|id| {
                    Issuer::new(
                        id.clone(),
                        Duration::from_secs(settings.jwks_refresh_seconds),
                    )
                })
                .collect(),
            introspection,
            resource_name: settings.resource_name.clone(),
            cache: TokenCache::new(cache::MAX_ENTRIES),
            client,
            pseudonyms,
            introspections: Keyed::new(
                settings.introspection_rate_limit.per_second,
                settings.introspection_rate_limit.burst(),
                MAX_INTROSPECTING_CLIENTS,
            ),
            introspection_ttl: Duration::from_secs(settings.introspection_cache_seconds),
        })
    }

    /// The scopes every token must carry.
    pub fn required_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The Protected Resource Metadata document (RFC 9728, section 2). `scopes_supported`
    /// lists the configured scopes, then `tool_scopes` (those the tools' operations ask
    /// for), so a client that registers or asks for scopes from it can reach every tool.
    pub fn metadata_document(&self, tool_scopes: &[String]) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.issuers.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
        });
        let mut scopes = self.scopes.clone();
        for scope in tool_scopes {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        if !scopes.is_empty() {
            document["scopes_supported"] = json!(scopes);
        }
        if let Some(name) = &self.resource_name {
            document["resource_name"] = json!(name);
        }
        document
    }

    /// The paths the metadata document is served at: the path-suffixed form for this
    /// resource (RFC 9728, section 3.1), which clients try first, and the bare one.
    pub fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![format!("{METADATA_PATH}{}", self.resource_path)];
        if !self.resource_path.is_empty() {
            paths.push(METADATA_PATH.to_string());
        }
        paths
    }

    /// The `WWW-Authenticate` value of a refusal: where the metadata is and which scopes
    /// to ask for, with `error` and its description when a token was presented (RFC 6750,
    /// section 3; RFC 9728, section 5.1).
    pub fn challenge(&self, error: Option<(&str, &str)>, scopes: &[&str]) -> String {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !scopes.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        if let Some((code, description)) = error {
            let description: String = description
                .chars()
                .map(|c| match c {
                    '"' | '\\' => '\'',
                    c if c.is_ascii_graphic() || c == ' ' => c,
                    _ => '?',
                })
                .collect();
            value.push_str(&format!(
                ", error=\"{code}\", error_description=\"{description}\""
            ));
        }
        value
    }

    /// Fetches every issuer's metadata and keys, so the first client does not wait and a
    /// misconfigured issuer shows in the log at start.
    pub async fn warm(&self) {
        for issuer in &self.issuers {
            // A failure is logged where it happens; tokens of that issuer get 503 until
            // it answers.
            let _ = issuer.keys(&self.client).await;
        }
    }

    /// Checks `token`, presented by `client` (its address: an unauthenticated client is
    /// no one else yet): the caller it identifies, or why not. A token that is not a JWT
    /// and has no verdict yet costs an introspection, at most `introspection_rate_limit`
    /// of them per client; a verdict is kept (an active one at most
    /// `introspection_cache_seconds`, a refusal 10 s).
    pub async fn authenticate(&self, token: &str, client: &str) -> Result<Arc<Caller>, Rejection> {
        let now = Instant::now();
        let key = cache::digest(token);
        // A token once found active whose verdict is due for a re-check: asked about
        // again, without being charged to its client's ration of unknown tokens.
        let mut vouched = false;
        match self.cache.get(&key, now) {
            Some(Verdict::Valid {
                caller,
                recheck_at: Some(at),
                ..
            }) => {
                if at > now {
                    return Ok(caller);
                }
                vouched = true;
            }
            Some(Verdict::Valid { caller, keys, .. }) if self.keys_still(caller.issuer(), keys) => {
                return Ok(caller);
            }
            Some(Verdict::Invalid(reason)) => return Err(Rejection::Invalid(reason)),
            _ => {}
        }
        if token.split('.').count() == 3 {
            let (caller, keys) = self.verify_jwt(token).await?;
            return Ok(self.remember(key, caller, keys, now));
        }
        let Some(introspection) = &self.introspection else {
            return Err(Rejection::Invalid(
                "the token is not a JWT, and no introspection endpoint is configured".into(),
            ));
        };
        if !vouched && let Err(wait) = self.introspections.take(client, now) {
            return Err(Rejection::Throttled(wait));
        }
        match self.introspect(introspection, token).await {
            Ok(caller) => {
                let recheck = now + self.introspection_ttl;
                Ok(self.remember_until(key, caller, 0, now, Some(recheck)))
            }
            Err(Rejection::Invalid(reason)) => {
                self.cache.put(
                    key,
                    Verdict::Invalid(reason.clone()),
                    now + INVALID_VERDICT_TTL,
                    now,
                );
                Err(Rejection::Invalid(reason))
            }
            Err(unavailable) => Err(unavailable),
        }
    }

    /// Caches `caller` as the verdict on the token with digest `key` until it expires
    /// (a minute without `exp`).
    fn remember(&self, key: [u8; 32], caller: Caller, keys: u64, now: Instant) -> Arc<Caller> {
        self.remember_until(key, caller, keys, now, None)
    }

    /// [`ResourceServer::remember`], trusted only until `recheck_at` (an introspected
    /// token, asked about again then).
    fn remember_until(
        &self,
        key: [u8; 32],
        caller: Caller,
        keys: u64,
        now: Instant,
        recheck_at: Option<Instant>,
    ) -> Arc<Caller> {
        let caller = Arc::new(caller);
        let until = now + remaining(caller.expires_at).unwrap_or(NO_EXPIRY_TTL);
        // The re-check cannot come after the token's own end.
        let recheck_at = recheck_at.map(|at| at.min(until));
        let verdict = Verdict::Valid {
            caller: caller.clone(),
            keys,
            recheck_at,
        };
        self.cache.put(key, verdict, until, now);
        caller
    }

    /// Whether a cached verdict made under key-set generation `keys` still holds: 0 (no
    /// key set: introspected or HMAC) always does.
    fn keys_still(&self, issuer: &str, keys: u64) -> bool {
        keys == 0
            || self
                .issuer(issuer)
                .and_then(Issuer::generation)
                .is_some_and(|current| current == keys)
    }

    fn issuer(&self, id: &str) -> Option<&Issuer> {
        let id = id.trim_end_matches('/');
        self.issuers
            .iter()
            .find(|issuer| issuer.id.trim_end_matches('/') == id)
    }

    /// Verifies a JWT; returns the caller and the key-set generation it was checked under.
    async fn verify_jwt(&self, token: &str) -> Result<(Caller, u64), Rejection> {
        let invalid = |reason: &str| Rejection::Invalid(reason.to_string());
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            invalid("the token's header is malformed or names an unknown algorithm")
        })?;
        if !self.algorithms.contains(&header.alg) {
            return Err(Rejection::Invalid(format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        }
        let claimed =
            unverified_issuer(token).ok_or_else(|| invalid("the token names no issuer"))?;
        let issuer = self
            .issuer(&claimed)
            .ok_or_else(|| invalid("the token's issuer is not an accepted authorization server"))?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.skew;
        validation.validate_nbf = true;
        validation.set_audience(&self.audiences);
        validation.set_issuer(&[claimed.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        if is_hmac(header.alg) {
            let key = self
                .hmac
                .as_ref()
                .ok_or_else(|| invalid("HMAC-signed tokens are not accepted"))?;
            let claims = decode(token, key, &validation)?;
            return Ok((self.caller(claims, &issuer.id, token)?, 0));
        }
        let keys = issuer
            .keys(&self.client)
            .await
            .map_err(Rejection::Unavailable)?;
        let (result, generation) = match verify_with(&keys, token, &header, &validation) {
            Some(result) => (result, keys.generation),
            None => {
                // A key not among those held: the issuer may have rotated its keys.
                let fresh = issuer
                    .refresh_keys(&self.client, Some(keys.generation))
                    .await
                    .map_err(Rejection::Unavailable)?;
                let result =
                    verify_with(&fresh, token, &header, &validation).unwrap_or_else(|| {
                        Err(invalid(
                            "the token is signed with a key its issuer does not publish",
                        ))
                    });
                (result, fresh.generation)
            }
        };
        let claims = result?;
        Ok((self.caller(claims, &issuer.id, token)?, generation))
    }

    fn caller(&self, claims: Claims, issuer: &str, token: &str) -> Result<Caller, Rejection> {
        let client_id = claims.client_id.or(claims.azp);
        let subject = claims
            .sub
            .or_else(|| client_id.clone())
            .ok_or_else(|| Rejection::Invalid("the token names no subject".into()))?;
        let issuer = claims.iss.unwrap_or_else(|| issuer.to_string());
        let mut caller = Caller::new(issuer, subject, Secret::new(token), &self.pseudonyms);
        caller.client_id = client_id;
        caller.scopes = scopes_of(claims.scope.as_ref().or(claims.scp.as_ref()));
        caller.expires_at = claims.exp.map(|exp| UNIX_EPOCH + Duration::from_secs(exp));
        Ok(caller)
    }

    /// Where introspection is asked: `server.oauth.introspection.url`, else the first
    /// issuer's metadata's `introspection_endpoint`.
    async fn introspection_endpoint(
        &self,
        introspection: &Introspection,
    ) -> Result<String, Rejection> {
        Ok(match &introspection.url {
            Some(url) => url.clone(),
            None => {
                let first = self
                    .issuers
                    .first()
                    .ok_or_else(|| Rejection::Unavailable("no issuer is configured".into()))?;
                let metadata = first
                    .metadata(&self.client)
                    .await
                    .map_err(Rejection::Unavailable)?;
                metadata
                    .get("introspection_endpoint")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        Rejection::Unavailable(format!(
                            "the metadata of {} names no introspection_endpoint",
                            first.id
                        ))
                    })?
            }
        })
    }

    /// RFC 7662: asks the authorization server about an opaque token.
    async fn introspect(
        &self,
        introspection: &Introspection,
        token: &str,
    ) -> Result<Caller, Rejection> {
        let endpoint = self.introspection_endpoint(introspection).await?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let request = self
            .client
            .post(&endpoint)
            .header(
                reqwest::header::AUTHORIZATION,
                introspection.client_auth.expose(),
            )
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        let answer = fetch_json(request).await.map_err(|problem| {
            tracing::warn!("server.oauth: introspection failed: {problem}");
            Rejection::Unavailable(format!("token introspection failed: {problem}"))
        })?;
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(Rejection::Invalid(
                "the authorization server says the token is not active".into(),
            ));
        }
        let audience_ok = match answer.get("aud") {
            Some(Value::String(aud)) => self.audiences.contains(aud),
            Some(Value::Array(auds)) => auds
                .iter()
                .filter_map(Value::as_str)
                .any(|aud| self.audiences.iter().any(|a| a == aud)),
            _ => false,
        };
        if !audience_ok {
            return Err(Rejection::Invalid(
                "the token was not issued for this resource (aud)".into(),
            ));
        }
        let issuer = match answer.get("iss").and_then(Value::as_str) {
            Some(iss) => self
                .issuer(iss)
                .map(|issuer| issuer.id.clone())
                .ok_or_else(|| {
                    Rejection::Invalid(
                        "the token's issuer is not an accepted authorization server".into(),
                    )
                })?,
            None => self
                .issuers
                .first()
                .map(|i| i.id.clone())
                .unwrap_or_default(),
        };
        let exp = answer.get("exp").and_then(Value::as_u64);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if exp.is_some_and(|exp| exp.saturating_add(self.skew) < now) {
            return Err(Rejection::Invalid("the token has expired".into()));
        }
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_string);
        let claims = Claims {
            iss: Some(issuer.clone()),
            sub: text("sub"),
            exp,
            scope: answer.get("scope").cloned(),
            scp: None,
            client_id: text("client_id"),
            azp: None,
        };
        self.caller(claims, &issuer, token)
    }
}

/// Verifies `token` with the keys of `set` that fit its header: `None` when no key does
/// (unknown `kid`), else the claims or why the token is refused.
fn verify_with(
    set: &KeySet,
    token: &str,
    header: &jsonwebtoken::Header,
    validation: &Validation,
) -> Option<Result<Claims, Rejection>> {
    let mut candidates = set
        .keys
        .iter()
        .filter(|key| header.kid.is_none() || key.kid == header.kid)
        .filter(|key| key.alg.is_none_or(|alg| alg == header.alg))
        .peekable();
    candidates.peek()?;
    let mut last = None;
    for key in candidates {
        match decode(token, &key.key, validation) {
            Ok(claims) => return Some(Ok(claims)),
            Err(rejection) => last = Some(rejection),
        }
    }
    last.map(Err)
}

fn decode(token: &str, key: &DecodingKey, validation: &Validation) -> Result<Claims, Rejection> {
    use jsonwebtoken::errors::ErrorKind;
    jsonwebtoken::decode::<Claims>(token, key, validation)
        .map(|data| data.claims)
        .map_err(|e| {
            Rejection::Invalid(
                match e.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired",
                    ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
                    ErrorKind::InvalidAudience => {
                        "the token was not issued for this resource (aud)"
                    }
                    ErrorKind::InvalidIssuer => "the token's issuer does not match",
                    ErrorKind::MissingRequiredClaim(_) => {
                        "the token lacks a required claim (exp, iss or aud)"
                    }
                    ErrorKind::InvalidSignature => "the token's signature does not verify",
                    ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit its key",
                    _ => "the token is malformed",
                }
                .to_string(),
            )
        })
}

fn is_hmac(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// The `iss` a JWT claims, read before its signature is checked, only to choose whose
/// keys check it.
fn unverified_issuer(token: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("iss")?.as_str().map(str::to_string)
}

/// `scope` as a space-separated string (RFC 8693, RFC 9068) or an array (`scp` of some
/// providers).
fn scopes_of(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(text)) => text.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// How long until `expires_at`; `None` without one.
fn remaining(expires_at: Option<SystemTime>) -> Option<Duration> {
    let expires_at = expires_at?;
    Some(
        expires_at
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests;
