//! Redaction: the [`Redactor`] that keeps every secret restmcp sends upstream out of what it
//! returns, also when an upstream echoes the secret back encoded: each secret is searched
//! for in every form of [`super::forms`] (base64, hex, percent- and JSON-encoded, any
//! letter case; a secret shorter than [`super::forms::MIN_ENCODED_LEN`] bytes only as it
//! is, since a short secret's variants are short and common and redacting them would
//! mangle ordinary text).
//!
//! # Cost
//!
//! Redaction runs on every result, so it is one pass over the text whatever the number of
//! secrets: for the configured secrets, an Aho-Corasick automaton (ASCII case-insensitive)
//! over the first [`KEY_LEN`] bytes of every form, built once, finds candidate positions,
//! and each candidate is checked against its full form (keying on a bounded prefix keeps
//! the automaton small even for kilobyte-long secrets); the access tokens issued, which
//! come and go, are found through their own index ([`super::issued`]). The spans found are
//! merged and replaced by [`REDACTED`]. Text without a secret is returned without copying.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use aho_corasick::AhoCorasick;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::forms::{Form, forms_of};
use super::issued::{Hold, IssuedTokens};
use crate::secret::REDACTED;

/// Candidates are found by this many leading bytes of a form, then checked in full.
const KEY_LEN: usize = 32;

/// The secrets to keep out of results: configured ones for good, issued access tokens for
/// as long as they may be sent ([`IssuedTokens`]).
#[derive(Default)]
pub(super) struct Redactor {
    fixed: Vec<String>,
    /// Built from `fixed` on first use; reset when it changes.
    matcher: RwLock<Option<Arc<Matcher>>>,
    issued: Arc<IssuedTokens>,
}

impl Redactor {
    pub(super) fn add(&mut self, secret: &str) {
        if !secret.is_empty() && !self.fixed.iter().any(|s| s == secret) {
            self.fixed.push(secret.to_string());
            *self
                .matcher
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// Redacts an issued access token for as long as the returned hold lives (a token
    /// cache's entry, a request carrying it), and a while after.
    pub(super) fn hold(&self, token: &str) -> Arc<Hold> {
        self.issued.hold(token)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.issued.len() == 0
    }

    /// The automaton for the configured secrets, built if it is not yet.
    fn matcher(&self) -> Arc<Matcher> {
        if let Some(matcher) = &*self.matcher.read().unwrap_or_else(PoisonError::into_inner) {
            return matcher.clone();
        }
        let mut slot = self.matcher.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(matcher) = &*slot {
            return matcher.clone();
        }
        let matcher = Arc::new(Matcher::new(self.fixed.iter()));
        *slot = Some(matcher.clone());
        matcher
    }

    /// `text` with every secret, in every form, replaced by [`REDACTED`].
    pub(super) fn redact(&self, text: &str) -> String {
        let matcher = self.matcher();
        match self.redact_bytes(&matcher, text.as_bytes()) {
            None => text.to_string(),
            // Every form is either a whole string (whose ends are character boundaries in
            // any text that contains it, also ignoring ASCII case) or ASCII, so the cuts
            // fall on character boundaries.
            Some(bytes) => String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()),
        }
    }

    /// Every string and object key in `value`, redacted.
    pub(super) fn redact_value(&self, value: &mut Value) {
        let matcher = self.matcher();
        self.redact_value_with(&matcher, value);
    }

    fn redact_value_with(&self, matcher: &Matcher, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Some(bytes) = self.redact_bytes(matcher, s.as_bytes()) {
                    *s = String::from_utf8(bytes)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into());
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|v| self.redact_value_with(matcher, v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.redact_value_with(matcher, &mut v);
                    let key = match self.redact_bytes(matcher, key.as_bytes()) {
                        Some(bytes) => String::from_utf8(bytes)
                            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()),
                        None => key,
                    };
                    map.insert(key, v);
                }
            }
            _ => {}
        }
    }

    /// Base64 `data`, decoded, redacted and re-encoded when a secret occurs in the decoded
    /// bytes (else left as it is); data that is not base64 is redacted as text.
    pub(super) fn redact_base64(&self, data: &mut String) {
        let Ok(bytes) = STANDARD.decode(data.as_bytes()) else {
            *data = self.redact(data);
            return;
        };
        let matcher = self.matcher();
        if let Some(redacted) = self.redact_bytes(&matcher, &bytes) {
            *data = STANDARD.encode(redacted);
        }
    }

    /// `input` with each secret replaced, or `None` when it holds none.
    fn redact_bytes(&self, matcher: &Matcher, input: &[u8]) -> Option<Vec<u8>> {
        let mut spans = Vec::new();
        matcher.spans(input, &mut spans);
        self.issued.spans(input, &mut spans);
        if spans.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(input.len());
        let mut at = 0;
        for (start, end) in merged(spans) {
            out.extend_from_slice(&input[at..start]);
            out.extend_from_slice(REDACTED.as_bytes());
            at = end;
        }
        out.extend_from_slice(&input[at..]);
        Some(out)
    }
}

/// Spans sorted, overlapping ones merged.
fn merged(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start < last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The forms of every configured secret, and the automaton over their leading bytes.
struct Matcher {
    forms: Vec<Form>,
    /// Automaton pattern id → the forms that start with that key.
    keys: Vec<Vec<usize>>,
    /// `None` without secrets, or in the (theoretical) case that building failed, when the
    /// forms are searched one by one.
    automaton: Option<AhoCorasick>,
}

impl Matcher {
    fn new<'a>(secrets: impl Iterator<Item = &'a String>) -> Matcher {
        let mut forms: Vec<Form> = secrets.flat_map(|s| forms_of(s)).collect();
        forms.sort();
        forms.dedup();
        let mut key_ids: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut keys: Vec<Vec<usize>> = Vec::new();
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        for (index, form) in forms.iter().enumerate() {
            let key = form.bytes[..form.bytes.len().min(KEY_LEN)].to_ascii_lowercase();
            let id = *key_ids.entry(key.clone()).or_insert_with(|| {
                patterns.push(key);
                keys.push(Vec::new());
                keys.len() - 1
            });
            keys[id].push(index);
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            match AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&patterns)
            {
                Ok(automaton) => Some(automaton),
                Err(error) => {
                    tracing::warn!("redaction falls back to a slower search: {error}");
                    None
                }
            }
        };
        Matcher {
            forms,
            keys,
            automaton,
        }
    }

    /// Adds the spans of `haystack` that hold a configured secret to `spans`.
    fn spans(&self, haystack: &[u8], spans: &mut Vec<(usize, usize)>) {
        let mut check = |start: usize, form: &Form| {
            let end = start + form.bytes.len();
            if haystack
                .get(start..end)
                .is_some_and(|found| form.matches(found))
            {
                spans.push((start, end));
            }
        };
        match &self.automaton {
            Some(automaton) => {
                for found in automaton.find_overlapping_iter(haystack) {
                    for &index in &self.keys[found.pattern().as_usize()] {
                        check(found.start(), &self.forms[index]);
                    }
                }
            }
            None => {
                for form in &self.forms {
                    for start in 0..haystack.len() {
                        check(start, form);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::forms::{PATH_SEGMENT, UNRESERVED, URI_COMPONENT};
    use super::*;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    use url::form_urlencoded;

    fn redactor(secrets: &[&str]) -> Redactor {
        let mut redactor = Redactor::default();
        for secret in secrets {
            redactor.add(secret);
        }
        redactor
    }

    const KEY: &str = "sk_live-Qx7/Ab+9 z";

    fn percent(set: &'static AsciiSet) -> String {
        utf8_percent_encode(KEY, set).to_string()
    }

    #[test]
    fn every_encoding_of_a_secret_is_redacted() {
        let redactor = redactor(&[KEY]);
        let hex: String = KEY.bytes().map(|b| format!("{b:02x}")).collect();
        let forms = [
            KEY.to_string(),
            KEY.to_uppercase(),
            KEY.to_lowercase(),
            STANDARD.encode(KEY),
            STANDARD_NO_PAD.encode(KEY),
            URL_SAFE.encode(KEY),
            URL_SAFE_NO_PAD.encode(KEY),
            hex.clone(),
            hex.to_uppercase(),
            percent(UNRESERVED),
            percent(UNRESERVED).to_lowercase(),
            percent(PATH_SEGMENT),
            percent(URI_COMPONENT),
            percent(NON_ALPHANUMERIC),
            form_urlencoded::byte_serialize(KEY.as_bytes()).collect(),
        ];
        for form in forms {
            let text = format!("seen: <{form}>!");
            assert_eq!(
                redactor.redact(&text),
                "seen: <[REDACTED]>!",
                "{form} is redacted whole"
            );
        }
    }

    #[test]
    fn a_secret_inside_a_longer_base64_text_is_redacted_at_every_alignment() {
        let redactor = redactor(&[KEY]);
        for prefix in ["", "a", "ab", "Authorization: Bearer "] {
            for engine in [STANDARD, URL_SAFE_NO_PAD] {
                let encoded = engine.encode(format!("{prefix}{KEY} and more"));
                let redacted = redactor.redact(&encoded);
                assert!(
                    redacted.contains(REDACTED),
                    "{prefix:?}: {encoded} -> {redacted}"
                );
                // What is left decodes to no more than a few bits of the secret.
                let left: String = redacted.replace(REDACTED, "");
                assert!(left.len() + 16 <= encoded.len(), "{redacted}");
            }
        }
    }

    #[test]
    fn keys_values_and_binary_are_covered() {
        let redactor = redactor(&[KEY]);
        let mut value = serde_json::json!({
            STANDARD.encode(KEY): [KEY.to_uppercase(), {"x": percent(PATH_SEGMENT)}],
            "plain": "nothing here",
        });
        redactor.redact_value(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                REDACTED: [REDACTED, {"x": REDACTED}],
                "plain": "nothing here",
            })
        );
        let mut blob = STANDARD.encode(format!("\u{0}\u{1}{}", KEY.to_lowercase()));
        redactor.redact_base64(&mut blob);
        assert_eq!(
            STANDARD.decode(&blob).expect("base64"),
            format!("\u{0}\u{1}{REDACTED}").into_bytes()
        );
    }

    #[test]
    fn a_secret_python_quoted_into_a_url_is_redacted() {
        // `/` raw and `+` encoded, upper-cased: what httpbin's `url` showed of a query value.
        let redactor = redactor(&["Sup3r-Secret/Key+value"]);
        assert_eq!(
            redactor.redact("?echo=SUP3R-SECRET/KEY%2BVALUE"),
            format!("?echo={REDACTED}")
        );
    }

    #[test]
    fn a_json_escaped_secret_is_redacted() {
        let secret = "pa\"ss/wo\\rd-1234";
        let redactor = redactor(&[secret]);
        let text = serde_json::to_string(&serde_json::json!({ "echo": secret })).expect("json");
        assert_eq!(
            redactor.redact(&text),
            format!("{{\"echo\":\"{REDACTED}\"}}")
        );
        // As PHP's json_encode writes it, with `/` escaped too.
        let php = r#"{"echo":"pa\"ss\/wo\\rd-1234"}"#;
        assert_eq!(redactor.redact(php), format!("{{\"echo\":\"{REDACTED}\"}}"));
    }

    #[test]
    fn short_secrets_are_redacted_only_exactly() {
        let redactor = redactor(&["Secret1"]);
        assert_eq!(redactor.redact("a Secret1 b"), format!("a {REDACTED} b"));
        // Its case variants and encodings are too likely to be ordinary text.
        let text = format!(
            "SECRET1 secret1 {} {}",
            STANDARD.encode("Secret1"),
            "Secret1"
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        assert_eq!(redactor.redact(&text), text);
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let redactor = redactor(&[KEY, "0123456789abcdef"]);
        let text = "The quick brown fox: c2tfbGl2ZQ== 0123456789 sk_live ABCDEF %20";
        assert_eq!(redactor.redact(text), text);
        let mut value = serde_json::json!({"a": ["b", 1, null]});
        redactor.redact_value(&mut value);
        assert_eq!(value, serde_json::json!({"a": ["b", 1, null]}));
    }

    #[test]
    fn overlapping_and_adjacent_secrets() {
        let redactor = redactor(&["abcdefghij", "hijklmnopq"]);
        // Overlapping occurrences merge into one span: no piece of either survives.
        assert_eq!(redactor.redact("<abcdefghijklmnopq>"), "<[REDACTED]>");
        assert_eq!(
            redactor.redact("abcdefghijabcdefghij"),
            "[REDACTED][REDACTED]"
        );
        // Multi-byte text around a secret survives intact.
        assert_eq!(redactor.redact("é ABCDEFGHIJ ü"), "é [REDACTED] ü");
    }

    #[test]
    fn a_long_token_is_found_past_the_key_prefix_only_when_whole() {
        let token = "t".repeat(10) + &"0123456789".repeat(20);
        let redactor = Redactor::default();
        let _hold = redactor.hold(&token);
        assert_eq!(redactor.redact(&format!("x{token}y")), "x[REDACTED]y");
        // The same first KEY_LEN bytes with another ending is not the token.
        let other = format!("{}different", &token[..KEY_LEN + 5]);
        assert_eq!(redactor.redact(&other), other);
    }

    #[test]
    fn issued_tokens_are_redacted_while_held_however_many_and_beside_the_configured_ones() {
        let mut redactor = redactor(&["configured-secret-value"]);
        redactor.add("another-configured-one");
        assert_eq!(redactor.redact("token-number-0"), "token-number-0");
        let holds: Vec<_> = (0..1_000)
            .map(|n| redactor.hold(&format!("token-number-{n}")))
            .collect();
        assert!(!redactor.is_empty());
        // The first issued is still redacted after a thousand more (the old window kept 64).
        assert_eq!(
            redactor.redact("token-number-0 configured-secret-value token-number-999"),
            "[REDACTED] [REDACTED] [REDACTED]"
        );
        let mut value = serde_json::json!({"token-number-5": ["TOKEN-NUMBER-6"]});
        redactor.redact_value(&mut value);
        assert_eq!(value, serde_json::json!({"[REDACTED]": ["[REDACTED]"]}));
        drop(holds);
    }
}
