//! Who a request acts for: the [`Caller`] an OAuth access token identified (issuer,
//! subject, scopes, the token itself as a [`Secret`]), and the [`Principal`] every
//! authenticated request carries, an OAuth caller's or a static token's. The HTTP guard
//! makes both per request from a validated token; the floors above read them to key
//! per-client limits, to bind what restmcp keeps per caller (idempotency records,
//! confirmations, operation handles, sessions) and to act for the user towards upstreams.
//!
//! A caller is named in logs and metrics, and keyed, only by its pseudonym, never by
//! subject or token: an HMAC-SHA256 under the deployment's key ([`Pseudonyms`]), so a
//! guessed subject (an e-mail address) cannot be confirmed from a pseudonym without the
//! key, and replicas that share the key name a caller alike.

use std::sync::Arc;
use std::time::SystemTime;

use crate::secret::Secret;

/// Names callers without revealing them: HMAC-SHA256 under a per-deployment key.
pub struct Pseudonyms {
    key: ring::hmac::Key,
}

/// Bytes the key of [`Pseudonyms`] must have at least.
pub const MIN_KEY_BYTES: usize = 32;

impl Pseudonyms {
    /// Pseudonyms under `key` (replicas that share it name a caller alike).
    pub fn new(key: &[u8]) -> Pseudonyms {
        Pseudonyms {
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key),
        }
    }

    /// Pseudonyms under a random key made now: stable for the life of the process only.
    pub fn random() -> Pseudonyms {
        Pseudonyms::new(&crate::digest::random::<32>())
    }

    /// Pseudonyms under a key derived from `secret` for this one purpose (`label`), so a
    /// key that also signs something else is never used as it is.
    pub fn derived(secret: &[u8], label: &str) -> Pseudonyms {
        let parent = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
        let derived = ring::hmac::sign(&parent, label.as_bytes());
        Pseudonyms::new(derived.as_ref())
    }

    /// The pseudonym of the subject `subject` of issuer `issuer`: `sub:` and 16 hex digits.
    pub fn of_subject(&self, issuer: &str, subject: &str) -> String {
        self.name("sub:", &[b"oauth", issuer.as_bytes(), subject.as_bytes()])
    }

    /// The pseudonym of a static token (`[server.auth]`): `tok:` and 16 hex digits.
    pub fn of_token(&self, token: &str) -> String {
        self.name("tok:", &[b"token", token.as_bytes()])
    }

    fn name(&self, prefix: &str, parts: &[&[u8]]) -> String {
        let mut context = ring::hmac::Context::with_key(&self.key);
        for part in parts {
            // Each part with its length: ("ab", "c") and ("a", "bc") differ.
            context.update(&(part.len() as u64).to_be_bytes());
            context.update(part);
        }
        let tag = context.sign();
        let mut name = String::with_capacity(prefix.len() + 16);
        name.push_str(prefix);
        name.push_str(&crate::digest::hex(&tag.as_ref()[..8]));
        name
    }
}

/// Who an authenticated request comes from, by its pseudonym: an OAuth caller's (`sub:…`)
/// or a static token's (`tok:…`). What restmcp keeps per caller is bound to it; a request
/// without authentication has none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(Arc<str>);

impl Principal {
    pub fn new(pseudonym: impl Into<Arc<str>>) -> Principal {
        Principal(pseudonym.into())
    }

    /// The pseudonym.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

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
    /// The caller `issuer` (`iss`) issued `token` for, whose subject (`sub`) is `subject`,
    /// named by `pseudonyms`; no client, scopes or expiry until set.
    pub fn new(issuer: String, subject: String, token: Secret, pseudonyms: &Pseudonyms) -> Caller {
        let pseudonym = pseudonyms.of_subject(&issuer, &subject);
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

    /// A stable name for the caller that reveals neither subject nor token (see
    /// [`Pseudonyms::of_subject`]).
    pub fn pseudonym(&self) -> &str {
        &self.pseudonym
    }
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

    const KEY: &[u8] = b"a deployment's key, 32 bytes or more";

    fn caller(issuer: &str, subject: &str, scopes: &[&str]) -> Caller {
        let mut caller = Caller::new(
            issuer.into(),
            subject.into(),
            Secret::new("the-token"),
            &Pseudonyms::new(KEY),
        );
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
    fn pseudonyms_need_the_key_and_replicas_sharing_it_agree() {
        let ours = Pseudonyms::new(KEY);
        let replica = Pseudonyms::new(KEY);
        let name = ours.of_subject("https://as.example", "alice@example.com");
        assert_eq!(
            name,
            replica.of_subject("https://as.example", "alice@example.com")
        );
        // Without the key, a guessed subject's pseudonym is not the caller's: the
        // unkeyed hash (SHA-256 of issuer and subject) no longer names anyone.
        let guessed = crate::digest::hex(&crate::digest::sha256_parts(&[
            b"oauth",
            b"https://as.example",
            b"alice@example.com",
        ]));
        assert!(!name.ends_with(&guessed[..16]), "{name}");
        assert_ne!(
            name,
            Pseudonyms::random().of_subject("https://as.example", "alice@example.com")
        );
        assert_ne!(
            name,
            Pseudonyms::derived(KEY, "pseudonyms")
                .of_subject("https://as.example", "alice@example.com"),
            "a derived key is another key"
        );
        // A static token has its own, and no token shows in it.
        let token = ours.of_token("s3cr3t-static-token-of-client-a");
        assert!(token.starts_with("tok:") && token.len() == 20, "{token}");
        assert_ne!(token, ours.of_token("s3cr3t-static-token-of-client-b"));
        assert_eq!(token, replica.of_token("s3cr3t-static-token-of-client-a"));
    }

    #[test]
    fn missing_lists_the_required_scopes_not_granted() {
        let reader = caller("i", "s", &["pets:read", "mcp:tools"]);
        let required = vec!["mcp:tools".to_string(), "pets:write".to_string()];
        assert_eq!(reader.missing(&required), vec!["pets:write"]);
        assert!(reader.missing(&required[..1]).is_empty());
    }
}
