//! `[apis.NAME.auth.SCHEME]`: the credentials for one security scheme, and the rules their
//! keys follow for each kind (bearer, basic, api_key, oauth2). Secrets are never written in
//! the config: the `*_env` keys name the variables that hold them.

use serde::{Deserialize, Serialize};

use super::is_token;
use super::syntax::{is_http_url, is_scope_token};

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
            AuthKind::OAuth2 => &[
                "client_id_env",
                "client_secret_env",
                "token_url",
                "scopes",
                "token_exchange",
            ],
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
    /// `oauth2`: act for the user: exchange the caller's OAuth access token (RFC 8693) for
    /// one meant for this upstream, instead of the client credentials grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_exchange: Option<TokenExchange>,
}

/// `[apis.NAME.auth.SCHEME.token_exchange]`: where and for what the caller's token is
/// exchanged (RFC 8693). The client authenticates with the credential's `client_id_env`
/// and `client_secret_env`, as for client credentials.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TokenExchange {
    /// The authorization server's token endpoint.
    pub token_url: String,
    /// The logical name of the upstream the new token is for (`audience`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// The upstream's URL the new token is for (`resource`, RFC 8707).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The scopes to ask for; by default the operation's required scopes.
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
            (
                "token_exchange",
                self.token_exchange.is_some(),
                Some(AuthKind::OAuth2),
            ),
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
                (
                    "token_url",
                    self.token_url.is_some() || !explicit || self.token_exchange.is_some(),
                ),
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
        if let Some(exchange) = &self.token_exchange {
            if !is_http_url(&exchange.token_url) {
                return Err((
                    "token_exchange.token_url".into(),
                    "must be an absolute http:// or https:// URL".into(),
                ));
            }
            if self.token_url.is_some() {
                return Err((
                    "token_url".into(),
                    "is for the client credentials grant; with token_exchange, its token_url says where tokens are exchanged".into(),
                ));
            }
            if exchange.audience.is_none() && exchange.resource.is_none() {
                return Err((
                    "token_exchange".into(),
                    "names no target: set audience (the upstream's name at the authorization server) or resource (its URL), or both".into(),
                ));
            }
            if let Some(resource) = &exchange.resource
                && !url::Url::parse(resource).is_ok_and(|u| u.has_host() && u.fragment().is_none())
            {
                return Err((
                    "token_exchange.resource".into(),
                    "must be an absolute URL without a fragment (RFC 8707)".into(),
                ));
            }
            if let Some(bad) = exchange
                .scopes
                .iter()
                .flatten()
                .find(|s| !is_scope_token(s))
            {
                return Err((
                    "token_exchange.scopes".into(),
                    format!(
                        "\"{bad}\" is not a valid OAuth scope (RFC 6749 §3.3: no spaces, quotes or backslashes)"
                    ),
                ));
            }
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

/// Where an API key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyLocation {
    Header,
    Query,
    Cookie,
}

impl ApiKeyLocation {
    pub fn parse(text: &str) -> Option<ApiKeyLocation> {
        match text {
            "header" => Some(ApiKeyLocation::Header),
            "query" => Some(ApiKeyLocation::Query),
            "cookie" => Some(ApiKeyLocation::Cookie),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ApiKeyLocation::Header => "header",
            ApiKeyLocation::Query => "query",
            ApiKeyLocation::Cookie => "cookie",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(token_url: &str, audience: Option<&str>, resource: Option<&str>) -> AuthConfig {
        AuthConfig {
            client_id_env: Some("I".into()),
            client_secret_env: Some("S".into()),
            token_exchange: Some(TokenExchange {
                token_url: token_url.into(),
                audience: audience.map(str::to_string),
                resource: resource.map(str::to_string),
                scopes: None,
            }),
            ..AuthConfig::default()
        }
    }

    #[test]
    fn a_token_exchange_is_an_oauth2_credential_with_a_target() {
        let good = exchange("https://as.example/token", Some("orders"), None);
        assert_eq!(good.checked_kind(), Ok(AuthKind::OAuth2));
        let explicit = AuthConfig {
            kind: Some(AuthKind::OAuth2),
            ..exchange(
                "https://as.example/token",
                None,
                Some("https://orders.example/"),
            )
        };
        assert_eq!(
            explicit.checked_kind(),
            Ok(AuthKind::OAuth2),
            "no token_url needed"
        );
        let key = |config: AuthConfig| config.checked_kind().expect_err("refused").0;
        assert_eq!(
            key(exchange("https://as.example/token", None, None)),
            "token_exchange"
        );
        assert_eq!(
            key(exchange("as.example/token", Some("x"), None)),
            "token_exchange.token_url"
        );
        assert_eq!(
            key(exchange(
                "https://as.example/token",
                None,
                Some("https://o.example/#frag")
            )),
            "token_exchange.resource"
        );
        assert_eq!(
            key(AuthConfig {
                token_url: Some("https://as.example/cc".into()),
                ..exchange("https://as.example/token", Some("x"), None)
            }),
            "token_url"
        );
        let mut bad_scope = exchange("https://as.example/token", Some("x"), None);
        if let Some(e) = bad_scope.token_exchange.as_mut() {
            e.scopes = Some(vec!["two words".into()]);
        }
        assert_eq!(key(bad_scope), "token_exchange.scopes");
    }
}
