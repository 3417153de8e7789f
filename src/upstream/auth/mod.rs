//! Upstream authentication: the credentials each API's security schemes need, applied to
//! the built request, and the redaction that keeps them out of every result. The
//! [`Authenticator`] is the narrow API the HTTP exchange and the dispatcher use.
//!
//! * **Credentials** (`credentials`) come from `[apis.NAME.auth.SCHEME]` tables, which
//!   name environment variables; the values are read once, when the [`Authenticator`] is
//!   built (a missing variable is an error naming it), and held as
//!   [`crate::secret::Secret`]s.
//! * **Where they may go** is the operator's word, never the spec's: the origin of the API's
//!   configured `base_url` and its `credential_origins`. A request for any other origin gets
//!   no credential and is refused. A `tokenUrl` taken from the spec (which would receive the
//!   client secret) must be https or loopback and on the `base_url`'s site, else the config's
//!   `token_url` is required; an API-key header that a `follow_redirects` origin would receive
//!   needs that origin in `credential_origins`.
//! * **Choosing** ([`Authenticator::apply`], here): the operation's requirements are
//!   alternatives. The first alternative whose schemes all have credentials (or whose
//!   credentials the request already carries, e.g. from a forwarded header) is used; an
//!   empty alternative (anonymous access) is used only when no other is satisfiable. Schemes
//!   the config adds itself (with `type`) apply to every operation. When an API has
//!   credentials configured and an operation's requirements cannot be met, the call fails
//!   naming the schemes and the keys to set; an API with no `auth` table at all is called as
//!   before, without credentials, leaving the verdict to the upstream.
//! * **Applying** (`placement`): API keys (header; query parameter, percent-encoded;
//!   cookie, merged into the Cookie header), `Authorization: Bearer`/`Basic`, and OAuth 2.0
//!   client credentials (`oauth`: token fetched with HTTP Basic client authentication,
//!   RFC 6749 §4.4 and §2.3.1, cached per scope set, refreshed 30 s before it expires, one
//!   fetch shared by concurrent callers, [`Authenticator::invalidate`]d after a 401). A
//!   configured credential replaces whatever the request held under the same header,
//!   parameter or cookie name.
//! * **Redaction** ([`Authenticator::redact`], in `redact`, and `issued` for access tokens):
//!   every configured secret, and every access token issued for as long as a token cache or
//!   a request holds it, is replaced by `[REDACTED]` in any text, also in the forms an
//!   upstream could echo it in (base64, hex, percent- and JSON-encoded, any letter case), so an
//!   upstream that echoes the request cannot leak them through a result.
//! * **Forwarding** ([`Authenticator::forward`], here): headers of the incoming MCP request
//!   named in the API's `forward_headers` allowlist are passed on, optionally renamed.
//!   Nothing else is forwarded — in particular not the client's own `Authorization` unless
//!   the list names it.
//!
//! Submodules: `credentials` (read and checked at load), `placement` (header, query,
//! cookie), `oauth` (the token client), `redact` (secrets out of results), `forms` (the
//! forms a secret may be echoed in), `issued` (the issued tokens' index, held while they
//! may be sent).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use percent_encoding::utf8_percent_encode;

use super::context::CallContext;
use super::request::HttpRequest;
use super::{Content, ToolResult};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::identity::Caller;
use crate::spec::{ApiKeyLocation, HttpAuthScheme, SecurityRequirement, SecurityScheme};

mod credentials;
mod forms;
mod issued;
mod oauth;
mod placement;
mod redact;
#[cfg(test)]
mod tests;

use credentials::{ApiAuth, Credential, api_auth};
use oauth::{TokenSlot, token_client};
use placement::{
    QUERY_VALUE, has_cookie, has_header, has_query, origin_allowed, origin_of, set_cookie,
    set_header, set_query,
};
use redact::Redactor;

/// The credentials in force for one API and the tokens they use.
pub struct Authenticator {
    apis: HashMap<String, ApiAuth, foldhash::fast::RandomState>,
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
            apis: HashMap::default(),
            redactor: Arc::new(Redactor::default()),
            client: None,
        }
    }
}

/// The tokens a request was sent with, so a 401 can invalidate exactly those; while it
/// lives (the request is under way), they stay redacted.
#[derive(Default, Clone)]
pub struct Applied {
    tokens: Vec<(Arc<TokenSlot>, u64, Option<Arc<issued::Hold>>)>,
}

impl fmt::Debug for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Applied")
            .field("tokens", &self.tokens.len())
            .finish()
    }
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
        caller: Option<&Caller>,
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
            self.apply_one(auth, name, &[], request, caller, &mut applied)
                .await?;
        }
        if requirements.is_empty() {
            return Ok(applied);
        }
        let chosen = requirements.iter().find(|alt| {
            !alt.is_empty()
                && alt
                    .keys()
                    .all(|s| auth.satisfies(s, request, caller.is_some()))
        });
        let Some(chosen) = chosen else {
            let anonymous = requirements.iter().any(|alt| alt.is_empty());
            if anonymous || !auth.global.is_empty() || auth.credentials.is_empty() {
                return Ok(applied);
            }
            return Err(auth.unsatisfied(api, requirements, caller.is_some()));
        };
        for (name, scopes) in chosen {
            if auth.credentials.contains_key(name) && !auth.global.contains(name) {
                self.apply_one(auth, name, scopes, request, caller, &mut applied)
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
        caller: Option<&Caller>,
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
                let (slot, token) = oauth
                    .token(client, scopes, &self.redactor, caller)
                    .await
                    .map_err(|problem| format!("security scheme \"{name}\": {problem}"))?;
                set_header(
                    &mut request.headers,
                    "Authorization",
                    &format!("Bearer {}", token.access.expose()),
                );
                applied.tokens.push((slot, token.generation, token.hold));
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
        caller: Option<&Caller>,
        mut request: HttpRequest,
        send: F,
        status: impl Fn(&T) -> u16,
    ) -> Result<Result<T, String>, String>
    where
        F: Fn(HttpRequest) -> Fut,
        Fut: Future<Output = (HttpRequest, Result<T, String>)>,
    {
        let applied = self.apply(api, requirements, &mut request, caller).await?;
        let (mut request, answer) = send(request).await;
        match &answer {
            Ok(received) if status(received) == 401 && applied.uses_oauth() => {}
            _ => return Ok(answer),
        }
        self.invalidate(&applied);
        if let Err(problem) = self.apply(api, requirements, &mut request, caller).await {
            return Ok(Err(format!(
                "it answered 401 and a new access token could not be obtained: {problem}"
            )));
        }
        Ok(send(request).await.1)
    }

    /// Drops the access tokens `applied` used, unless a newer one has replaced them
    /// already, so the next [`Authenticator::apply`] fetches a fresh one.
    pub fn invalidate(&self, applied: &Applied) {
        for (slot, generation, _) in &applied.tokens {
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

    /// Whether some API forwards the incoming header `name` (`forward_headers`).
    pub fn forwards(&self, name: &str) -> bool {
        self.apis.values().any(|auth| {
            auth.forward
                .iter()
                .any(|rule| rule.from().eq_ignore_ascii_case(name))
        })
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
        // The text and the structured content are redacted each (and may then disagree).
        result.unmark();
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
    /// True when scheme `name` has credentials (that act for the user only when the call
    /// has a user), or the request already carries what the scheme sends (a forwarded
    /// `Authorization`, a key given as an argument).
    fn satisfies(&self, name: &str, request: &HttpRequest, has_caller: bool) -> bool {
        match self.credentials.get(name) {
            Some(Credential::OAuth2(oauth)) if oauth.acts_for_user() => return has_caller,
            Some(_) => return true,
            None => {}
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
    fn unsatisfied(
        &self,
        api: &str,
        requirements: &[SecurityRequirement],
        has_caller: bool,
    ) -> String {
        let for_user = |name: &str| matches!(self.credentials.get(name), Some(Credential::OAuth2(o)) if o.acts_for_user());
        let alternatives: Vec<String> = requirements
            .iter()
            .map(|alt| {
                alt.keys()
                    .filter(|name| !self.credentials.contains_key(*name) || (for_user(name) && !has_caller))
                    .map(|name| {
                        let key = format!("[apis.{api}.auth.{name}]");
                        if for_user(name) {
                            return format!(
                                "\"{name}\" (acts for the signed-in user: the call needs the user's OAuth access token, and carries none)"
                            );
                        }
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
        let missing = if has_caller || !self.credentials.keys().any(|name| for_user(name)) {
            "that are not configured"
        } else {
            "that this call cannot use"
        };
        format!(
            "API \"{api}\" requires credentials for this operation {missing}: {}",
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
