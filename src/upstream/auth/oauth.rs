//! The OAuth 2.0 token client: the client credentials grant (RFC 6749 §4.4), or, acting for
//! the user, token exchange (RFC 8693: the caller's validated access token as
//! `subject_token`, the upstream as `audience`/`resource`). Tokens are fetched with HTTP
//! Basic client authentication (§2.3.1), cached per scope set (and per caller, for an
//! exchange: at most [`MAX_EXCHANGED`] callers), refreshed [`REFRESH_MARGIN`] before they
//! expire (an exchanged token also when the caller's token does), one fetch shared by
//! concurrent callers, and invalidated after a 401. Every token issued is redacted from
//! results for as long as a slot keeps it or a request carries it ([`Hold`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use url::form_urlencoded;

use super::issued::Hold;
use super::redact::Redactor;
use crate::config::TokenExchange;
use crate::http_client;
use crate::identity::Caller;
use crate::secret::Secret;

/// A token is refreshed when it has less than this left to live.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// Exchanged tokens kept per credential (one per caller and scope set); at the cap, those
/// no longer valid go first, then the ones that expire soonest.
pub const MAX_EXCHANGED: usize = 10_000;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

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
    /// Set: tokens are the caller's, exchanged (RFC 8693), not the client's own.
    pub(super) exchange: Option<TokenExchange>,
    /// One cache slot per requested scope set (and caller, for an exchange).
    pub(super) slots: Mutex<HashMap<String, Arc<TokenSlot>>>,
}

/// One cached token. `fetch` serializes fetching, so concurrent callers that find no valid
/// token wait for the one fetch and then share its result.
#[derive(Debug, Default)]
pub(super) struct TokenSlot {
    pub(super) fetch: tokio::sync::Mutex<()>,
    pub(super) current: Mutex<Option<Token>>,
}

#[derive(Clone)]
pub(super) struct Token {
    pub(super) access: Secret,
    /// None when the server gave no `expires_in`: valid until a 401 says otherwise.
    pub(super) expires_at: Option<Instant>,
    pub(super) generation: u64,
    /// Keeps the token redacted while this slot's entry (or a request) holds it.
    pub(super) hold: Option<Arc<Hold>>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("expires_at", &self.expires_at)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
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
    /// True when tokens are exchanged for the caller's, so a call needs an OAuth caller.
    pub(super) fn acts_for_user(&self) -> bool {
        self.exchange.is_some()
    }

    /// A valid access token for `required` scopes (or the configured ones), fetching one if
    /// the cache has none. With token exchange, the token is `caller`'s, and there must be
    /// a caller.
    pub(super) async fn token(
        &self,
        client: &reqwest::Client,
        required: &[String],
        redactor: &Redactor,
        caller: Option<&Caller>,
    ) -> Result<(Arc<TokenSlot>, Token), String> {
        let configured = match &self.exchange {
            Some(exchange) => &exchange.scopes,
            None => &self.scopes,
        };
        let mut scopes: Vec<String> = match configured {
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
        let (key, subject) = match (&self.exchange, caller) {
            (None, _) => (scope.clone(), None),
            (Some(_), Some(caller)) => (format!("{} {scope}", caller.pseudonym()), Some(caller)),
            (Some(_), None) => {
                return Err(
                    "it acts for the signed-in user, and this call carries no user's \
                     OAuth access token (connect over HTTP with a token from the authorization \
                     server [server.oauth] names)"
                        .into(),
                );
            }
        };
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            if subject.is_some() && slots.len() >= MAX_EXCHANGED && !slots.contains_key(&key) {
                make_room(&mut slots);
            }
            Arc::clone(slots.entry(key).or_default())
        };
        if let Some(token) = slot.valid() {
            return Ok((slot, token));
        }
        let _fetching = slot.fetch.lock().await;
        if let Some(token) = slot.valid() {
            return Ok((Arc::clone(&slot), token));
        }
        let mut token = self.fetch(client, &scope, subject).await?;
        if let Some(until) = subject.and_then(|caller| caller.expires_at) {
            // An exchanged token is not used past the token it was exchanged for.
            let left = until
                .duration_since(std::time::SystemTime::now())
                .unwrap_or(Duration::ZERO);
            let cap = Instant::now() + left;
            token.expires_at = Some(token.expires_at.map_or(cap, |at| at.min(cap)));
        }
        token.hold = Some(redactor.hold(token.access.expose()));
        let result = (Arc::clone(&slot), token.clone());
        *slot.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(token);
        Ok(result)
    }

    /// The grant's form: RFC 6749 §4.4.2 `client_credentials`, or RFC 8693 §2.1 token
    /// exchange of `subject`'s access token for one for the configured audience/resource.
    fn grant(&self, scope: &str, subject: Option<&Caller>) -> String {
        let mut form = form_urlencoded::Serializer::new(String::new());
        match (&self.exchange, subject) {
            (Some(exchange), Some(caller)) => {
                form.append_pair("grant_type", TOKEN_EXCHANGE);
                form.append_pair("subject_token", caller.token.expose());
                form.append_pair("subject_token_type", ACCESS_TOKEN_TYPE);
                form.append_pair("requested_token_type", ACCESS_TOKEN_TYPE);
                if let Some(audience) = &exchange.audience {
                    form.append_pair("audience", audience);
                }
                if let Some(resource) = &exchange.resource {
                    form.append_pair("resource", resource);
                }
            }
            _ => {
                form.append_pair("grant_type", "client_credentials");
            }
        }
        if !scope.is_empty() {
            form.append_pair("scope", scope);
        }
        form.finish()
    }

    /// Asks the token endpoint, client authenticated with HTTP Basic.
    async fn fetch(
        &self,
        client: &reqwest::Client,
        scope: &str,
        subject: Option<&Caller>,
    ) -> Result<Token, String> {
        let what = if subject.is_some() {
            "the token exchange at"
        } else {
            "the token endpoint"
        };
        let body = self.grant(scope, subject);
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
                    "{what} {} could not be reached: {}",
                    self.token_url,
                    http_client::describe_error(&e)
                )
            })?;
        let status = response.status();
        let body = http_client::read_capped(response, 64 * 1024)
            .await
            .map_err(|e| {
                format!(
                    "reading the answer of {what} {} failed: {e}",
                    self.token_url
                )
            })?;
        let json = self.token_answer(what, status, &body, subject.is_some())?;
        let access = json
            .get("access_token")
            .and_then(Value::as_str)
            .unwrap_or_default();
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
            hold: None,
        })
    }

    /// The token endpoint's answer, when it issued a Bearer access token restmcp can send
    /// (an exchanged one of the access-token type); else what is wrong with it, saying
    /// `what` was asked.
    fn token_answer(
        &self,
        what: &str,
        status: reqwest::StatusCode,
        body: &[u8],
        exchanged: bool,
    ) -> Result<Value, String> {
        let json: Option<Value> = serde_json::from_slice(body).ok();
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
                .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
            return Err(format!(
                "{what} {} answered {status}: {detail}",
                self.token_url
            ));
        }
        let Some(json) = json else {
            return Err(format!(
                "{what} {} answered {status} without a JSON body",
                self.token_url
            ));
        };
        let access = json
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("{what} {} answered without an access_token", self.token_url))?;
        if let Some(kind) = json.get("token_type").and_then(Value::as_str)
            && !kind.eq_ignore_ascii_case("bearer")
            && !(exchanged && kind.eq_ignore_ascii_case("N_A"))
        {
            return Err(format!(
                "{what} {} issued a \"{kind}\" token; only Bearer tokens are supported",
                self.token_url
            ));
        }
        if exchanged
            && let Some(issued) = json.get("issued_token_type").and_then(Value::as_str)
            && issued != ACCESS_TOKEN_TYPE
        {
            return Err(format!(
                "{what} {} issued a token of type {issued}, not an access token",
                self.token_url
            ));
        }
        if access.chars().any(|c| c.is_control() || c == ' ') {
            return Err(format!(
                "{what} {} issued an access token restmcp cannot send in a header",
                self.token_url
            ));
        }
        Ok(json)
    }
}

/// Frees a slot in a full table of exchanged tokens: drops every slot without a valid
/// token (and no fetch under way), and if none was, the one that expires soonest.
fn make_room(slots: &mut HashMap<String, Arc<TokenSlot>>) {
    let before = slots.len();
    slots.retain(|_, slot| slot.valid().is_some() || slot.fetch.try_lock().is_err());
    if slots.len() < before {
        return;
    }
    let soonest = slots
        .iter()
        .filter_map(|(key, slot)| Some((key.clone(), slot.valid()?.expires_at)))
        .min_by_key(|(_, at)| *at)
        .map(|(key, _)| key);
    if let Some(key) = soonest {
        slots.remove(&key);
    }
}
