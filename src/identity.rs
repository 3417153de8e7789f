//! Who a request acts for: the [`Caller`] an OAuth access token identified (issuer,
//! subject, scopes, the token itself as a [`Secret`]). The HTTP guard makes one per
//! request from a validated token; the floors above read it to key per-client limits and to
//! act for the user towards upstreams. A caller is named in logs and metrics only by its
//! [`Caller::pseudonym`], never by subject or token.

use std::time::SystemTime;

use crate::secret::Secret;

/// The person (or machine) behind a validated OAuth access token.
#[derive(Debug, Clone)]
pub struct Caller {
    issuer: String,
    subject: String,
    /// Made once with the caller (a verdict is cached per token), read on every call.
    pseudonym: String,
    /// The OAuth client the token was issued to (`client_id` or `azp`), when it says.
    pub client_id: Option<String>,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// When the token stops being valid (`exp`), when it says.
    pub expires_at: Option<SystemTime>,
    /// The access token as presented, for exchanging it (RFC 8693); never forwarded as is.
    pub token: Secret,
}

impl Caller {
    /// The caller `issuer` (`iss`) issued `token` for, whose subject (`sub`) is `subject`;
    /// no client, scopes or expiry until set.
    pub fn new(issuer: String, subject: String, token: Secret) -> Caller {
        let pseudonym = pseudonym(&issuer, &subject);
        Caller {
            issuer,
            subject,
            pseudonym,
            client_id: None,
            scopes: Vec::new(),
            expires_at: None,
            token,
        }
    }

    /// The authorization server that issued the token (`iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The token's subject (`sub`); for a client-credentials token, usually the client.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `required` the token does not grant.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .filter(|scope| !self.has_scope(scope))
            .map(String::as_str)
            .collect()
    }

    /// A stable name for the caller that reveals neither subject nor token: `sub:` and the
    /// first 16 hex digits of SHA-256 over issuer and subject.
    pub fn pseudonym(&self) -> &str {
        &self.pseudonym
    }
}

fn pseudonym(issuer: &str, subject: &str) -> String {
    let mut input = Vec::with_capacity(issuer.len() + 1 + subject.len());
    input.extend_from_slice(issuer.as_bytes());
    input.push(0);
    input.extend_from_slice(subject.as_bytes());
    let digest = ring::digest::digest(&ring::digest::SHA256, &input);
    let mut name = String::with_capacity(20);
    name.push_str("sub:");
    for byte in &digest.as_ref()[..8] {
        name.push_str(&format!("{byte:02x}"));
    }
    name
}

/// Marks a response refused because the caller's token lacks scopes: the MCP layer, which
/// knows the tool, sets it; the HTTP guard, which knows the resource's metadata URL, turns
/// the response into the RFC 6750 `insufficient_scope` challenge naming `scopes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsufficientScope {
    /// The scopes to ask for to make the refused request.
    pub scopes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(issuer: &str, subject: &str, scopes: &[&str]) -> Caller {
        let mut caller = Caller::new(issuer.into(), subject.into(), Secret::new("the-token"));
        caller.scopes = scopes.iter().map(|s| s.to_string()).collect();
        caller
    }

    #[test]
    fn a_pseudonym_is_stable_per_issuer_and_subject_and_hides_both() {
        let alice = caller("https://as.example", "alice", &[]);
        let name = alice.pseudonym().to_string();
        assert_eq!(
            name,
            caller("https://as.example", "alice", &["x"]).pseudonym()
        );
        assert_ne!(name, caller("https://as.example", "bob", &[]).pseudonym());
        assert_ne!(
            name,
            caller("https://other.example", "alice", &[]).pseudonym()
        );
        // The separator keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(
            caller("ab", "c", &[]).pseudonym(),
            caller("a", "bc", &[]).pseudonym()
        );
        assert!(name.starts_with("sub:") && name.len() == 20, "{name}");
        assert!(!name.contains("alice") && !format!("{alice:?}").contains("the-token"));
    }

    #[test]
    fn missing_lists_the_required_scopes_not_granted() {
        let reader = caller("i", "s", &["pets:read", "mcp:tools"]);
        let required = vec!["mcp:tools".to_string(), "pets:write".to_string()];
        assert_eq!(reader.missing(&required), vec!["pets:write"]);
        assert!(reader.missing(&required[..1]).is_empty());
    }
}
