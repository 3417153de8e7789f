//! One authorization server as a resource server sees it: its metadata (RFC 8414, else
//! OpenID Connect discovery), found from the issuer identifier, and its signing keys
//! (the JWK Set at `jwks_uri`). Keys are fetched on first need and again when a token
//! names a key not among them (a rotation), at most once per `jwks_refresh_seconds`; a
//! fetch replaces the set, so a key the issuer stopped publishing stops being accepted.
//! Everything fetched is bounded in size and time; the issuer's answers are checked
//! (the metadata must name the same issuer, RFC 8414 section 3.3).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// Largest metadata document or key set read, in bytes.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Least time between two attempts to fetch keys that have never been fetched (the
/// issuer was down at start): short, so a server that comes up is used soon.
const FIRST_FETCH_RETRY: Duration = Duration::from_secs(5);

/// Why keys or metadata could not be had.
pub type FetchError = String;

/// A signing key of the issuer.
pub struct SigningKey {
    pub kid: Option<String>,
    /// The algorithm the JWK pins (`alg`), if any.
    pub alg: Option<Algorithm>,
    pub key: DecodingKey,
}

/// The keys of one fetch, with the generation that tells fetches apart.
pub struct KeySet {
    pub keys: Vec<SigningKey>,
    pub generation: u64,
}

#[derive(Default)]
struct State {
    metadata: Option<Arc<Value>>,
    keys: Option<Arc<KeySet>>,
    last_attempt: Option<Instant>,
}

/// An authorization server whose tokens are accepted.
pub struct Issuer {
    /// The issuer identifier as configured.
    pub id: String,
    refresh: Duration,
    state: RwLock<State>,
    /// One fetch at a time; others wait for its result.
    fetching: tokio::sync::Mutex<()>,
}

static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Issuer {
    pub fn new(id: String, refresh: Duration) -> Issuer {
        Issuer {
            id,
            refresh,
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The generation of the keys held, if any were fetched.
    pub fn generation(&self) -> Option<u64> {
        self.read().keys.as_ref().map(|keys| keys.generation)
    }

    /// The keys as last fetched; fetches them the first time.
    pub async fn keys(&self, client: &reqwest::Client) -> Result<Arc<KeySet>, FetchError> {
        if let Some(keys) = self.read().keys.clone() {
            return Ok(keys);
        }
        self.refresh_keys(client, None).await
    }

    /// Fetches the keys again unless that was done less than `jwks_refresh_seconds` ago
    /// (then the keys held are the answer). `seen` is the generation the caller found
    /// wanting: if another task fetched since, its result is used.
    pub async fn refresh_keys(
        &self,
        client: &reqwest::Client,
        seen: Option<u64>,
    ) -> Result<Arc<KeySet>, FetchError> {
        let _one = self.fetching.lock().await;
        let (held, last) = {
            let state = self.read();
            (state.keys.clone(), state.last_attempt)
        };
        if let Some(held) = &held
            && seen.is_some_and(|seen| seen != held.generation)
        {
            return Ok(held.clone());
        }
        let wait = if held.is_some() {
            self.refresh
        } else {
            FIRST_FETCH_RETRY.min(self.refresh)
        };
        if let Some(last) = last
            && last.elapsed() < wait
        {
            return held
                .ok_or_else(|| format!("the signing keys of {} could not be fetched", self.id));
        }
        self.state
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .last_attempt = Some(Instant::now());
        let fetched = async {
            let metadata = self.metadata(client).await?;
            let jwks_uri = metadata
                .get("jwks_uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the metadata of {} names no jwks_uri", self.id))?;
            let jwks = fetch_json(client.get(jwks_uri)).await?;
            Ok::<_, FetchError>(parse_key_set(&jwks))
        }
        .await;
        match fetched {
            Ok(keys) => {
                let set = Arc::new(KeySet {
                    keys,
                    generation: GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                });
                tracing::info!(
                    issuer = %self.id,
                    keys = set.keys.len(),
                    "fetched the authorization server's signing keys"
                );
                self.state.write().unwrap_or_else(|p| p.into_inner()).keys = Some(set.clone());
                Ok(set)
            }
            Err(problem) => {
                tracing::warn!(issuer = %self.id, "{problem}");
                held.ok_or(problem)
            }
        }
    }

    /// The issuer's metadata, discovered once.
    pub async fn metadata(&self, client: &reqwest::Client) -> Result<Arc<Value>, FetchError> {
        if let Some(metadata) = self.read().metadata.clone() {
            return Ok(metadata);
        }
        let mut problems = Vec::new();
        for url in metadata_urls(&self.id)? {
            match fetch_json(client.get(url.clone())).await {
                Ok(document) => {
                    let named = document.get("issuer").and_then(Value::as_str);
                    if named.map(trim_slash) != Some(trim_slash(&self.id)) {
                        problems.push(format!(
                            "{url} names the issuer {:?}, not {:?}",
                            named.unwrap_or(""),
                            self.id
                        ));
                        continue;
                    }
                    let metadata = Arc::new(document);
                    self.state
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .metadata = Some(metadata.clone());
                    return Ok(metadata);
                }
                Err(problem) => problems.push(problem),
            }
        }
        Err(format!(
            "no authorization server metadata for {}: {}",
            self.id,
            problems.join("; ")
        ))
    }
}

fn trim_slash(text: &str) -> &str {
    text.strip_suffix('/').unwrap_or(text)
}

/// Where the metadata of `issuer` may be, in the order tried: RFC 8414's well-known URI
/// (inserted before the issuer's path), OpenID Connect Discovery's (appended to it), and
/// the OpenID one inserted as RFC 8414 does it. The MCP Authorization specification asks
/// clients to try the same three.
pub fn metadata_urls(issuer: &str) -> Result<Vec<url::Url>, FetchError> {
    let base = url::Url::parse(issuer).map_err(|e| format!("issuer {issuer}: {e}"))?;
    let path = trim_slash(base.path()).to_string();
    let at = |path: String| {
        let mut url = base.clone();
        url.set_path(&path);
        url.set_query(None);
        url
    };
    let mut urls = vec![at(format!("/.well-known/oauth-authorization-server{path}"))];
    urls.push(at(format!("{path}/.well-known/openid-configuration")));
    if !path.is_empty() {
        urls.push(at(format!("/.well-known/openid-configuration{path}")));
    }
    Ok(urls)
}

/// The verification keys of a JWK Set. Keys meant for encryption, of a kind jsonwebtoken
/// does not know, or malformed, are skipped one by one rather than failing the set.
pub fn parse_key_set(jwks: &Value) -> Vec<SigningKey> {
    let Some(keys) = jwks.get("keys").and_then(Value::as_array) else {
        return Vec::new();
    };
    keys.iter()
        .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
        .filter(|jwk| {
            // Symmetric keys are never taken from a key set: an HMAC secret comes only from
            // the operator (`hmac_secret_env`).
            !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_))
                && !matches!(
                    jwk.common.public_key_use,
                    Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
                )
        })
        .filter_map(|jwk| {
            // A key pinned to an algorithm that does not sign (RSA-OAEP…) is skipped.
            let alg = match jwk.common.key_algorithm {
                Some(alg) => Some(alg.to_string().parse::<Algorithm>().ok()?),
                None => None,
            };
            let key = DecodingKey::from_jwk(&jwk).ok()?;
            Some(SigningKey {
                kid: jwk.common.key_id.clone(),
                alg,
                key,
            })
        })
        .collect()
}

/// GETs or POSTs `request` and reads a JSON object from the answer, within
/// [`MAX_DOCUMENT_BYTES`] and [`FETCH_TIMEOUT`]. Problems name the URL, never a credential.
pub async fn fetch_json(request: reqwest::RequestBuilder) -> Result<Value, FetchError> {
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| crate::http_client::describe_error(&e))?;
    let mut shown = response.url().clone();
    shown.set_query(None);
    let status = response.status();
    let body = crate::http_client::read_capped(response, MAX_DOCUMENT_BYTES)
        .await
        .map_err(|problem| format!("{shown}: {problem}"))?;
    if !status.is_success() {
        return Err(format!("{shown} answered {status}"));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("{shown}: the answer is not a JSON object")),
        Err(e) => Err(format!("{shown}: the answer is not JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_connect_put_it() {
        let urls = |issuer| {
            metadata_urls(issuer)
                .expect("urls")
                .iter()
                .map(url::Url::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            urls("https://as.example/tenant/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant",
                "https://as.example/tenant/.well-known/openid-configuration",
                "https://as.example/.well-known/openid-configuration/tenant"
            ]
        );
    }

    #[test]
    fn a_key_set_keeps_the_signature_keys_it_can_use_and_skips_the_rest() {
        let jwks = serde_json::json!({"keys": [
            {"kty": "RSA", "kid": "sig", "alg": "RS256", "use": "sig",
             "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw",
             "e": "AQAB"},
            {"kty": "RSA", "kid": "enc", "use": "enc",
             "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw",
             "e": "AQAB"},
            {"kty": "AKP", "kid": "post-quantum", "alg": "ML-DSA-44", "pub": "abc"},
            {"kty": "oct", "kid": "shared", "alg": "HS256", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "broken", "crv": "P-256"}
        ]});
        let keys = parse_key_set(&jwks);
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].kid.as_deref(), Some("sig"));
        assert_eq!(keys[0].alg, Some(Algorithm::RS256));
        assert!(parse_key_set(&serde_json::json!({"keys": "nope"})).is_empty());
    }
}
