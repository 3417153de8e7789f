//! The OAuth 2.0 client credentials token client (RFC 6749 §4.4): tokens fetched with HTTP
//! Basic client authentication (§2.3.1), cached per scope set, refreshed
//! [`REFRESH_MARGIN`] before they expire, one fetch shared by concurrent callers, and
//! invalidated after a 401. Every token issued is added to the redactor.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use url::form_urlencoded;

use super::redact::Redactor;
use crate::http_client;
use crate::secret::Secret;

/// A token is refreshed when it has less than this left to live.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// Token requests: no redirects (a redirect would carry the client secret elsewhere), a
/// bounded wait.
pub(super) fn token_client() -> Result<reqwest::Client, String> {
    http_client::install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(http_client::USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("cannot start the HTTP client for token requests: {e}"))
}

pub(super) struct OAuthClient {
    pub(super) token_url: String,
    /// `Basic base64(urlencode(id):urlencode(secret))`.
    pub(super) client_auth: Secret,
    /// From the config; else each operation's required scopes are requested.
    pub(super) scopes: Option<Vec<String>>,
    /// One cache slot per requested scope set.
    pub(super) slots: Mutex<HashMap<String, Arc<TokenSlot>>>,
}

/// One cached token. `fetch` serializes fetching, so concurrent callers that find no valid
/// token wait for the one fetch and then share its result.
#[derive(Debug, Default)]
pub(super) struct TokenSlot {
    pub(super) fetch: tokio::sync::Mutex<()>,
    pub(super) current: Mutex<Option<Token>>,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) access: Secret,
    /// None when the server gave no `expires_in`: valid until a 401 says otherwise.
    pub(super) expires_at: Option<Instant>,
    pub(super) generation: u64,
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

    pub(super) fn invalidate(&self, generation: u64) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.as_ref().is_some_and(|t| t.generation == generation) {
            *current = None;
        }
    }
}

impl OAuthClient {
    /// A valid access token for `required` scopes (or the configured ones), fetching one if
    /// the cache has none.
    pub(super) async fn token(
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
            access: Secret::new(access.to_string()),
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
