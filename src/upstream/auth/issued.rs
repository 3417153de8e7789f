//! The access tokens restmcp was issued (client credentials, token exchange), redacted for
//! exactly as long as they may be sent: a token is held while a token cache keeps it and
//! while a request that carries it is under way ([`Hold`]), and forgotten
//! [`RETIRE_AFTER`] after the last holder let it go. Nothing is forgotten because many
//! others were issued since: ten thousand users' exchanged tokens are all redacted.
//!
//! The configured secrets are few and fixed, and one Aho-Corasick automaton finds them
//! ([`super::redact`]); issued tokens come and go by the thousand, and rebuilding an
//! automaton of all their forms at each change would cost as much as the calls. So each
//! form of a held token is indexed by its first [`WINDOW`] bytes (ASCII case folded), and a
//! text is scanned once: at each position its next [`WINDOW`] bytes are looked up, through
//! a bit filter that rejects almost every position for a few instructions, and a candidate
//! is checked against its whole form. Adding or dropping a token touches only its own forms.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::forms::{Form, forms_of};

/// How long a token is still redacted after the last holder let it go: its request's
/// answer is being turned into a result by then.
pub(super) const RETIRE_AFTER: Duration = Duration::from_secs(60);

/// Tokens let go and not yet forgotten, at most: past it the oldest go first.
const MAX_RETIRED: usize = 10_000;

/// The bytes a form is indexed by; every form of a token of at least
/// [`super::forms::MIN_ENCODED_LEN`] bytes is at least this long.
const WINDOW: usize = 8;

/// Bits of the filter (a power of two): 2^18 bits are 32 KiB.
const FILTER_BITS: u32 = 18;

/// The issued tokens and the index of their forms.
#[derive(Default)]
pub(super) struct IssuedTokens {
    state: RwLock<State>,
    /// Tokens let go, with when they may be forgotten.
    retired: Mutex<VecDeque<(Instant, String)>>,
}

#[derive(Default)]
struct State {
    tokens: HashMap<String, Entry>,
    /// Window key → (token id, form index) of every form starting with it.
    index: FxHashMap<u64, Vec<(u64, u32)>>,
    /// One bit per window key's hash: a clear bit means no form starts there.
    filter: Vec<u64>,
    /// Forms by token id.
    forms: FxHashMap<u64, Vec<Form>>,
    /// Tokens too short to index, matched exactly.
    short: Vec<String>,
    next_id: u64,
}

struct Entry {
    id: u64,
    holders: usize,
}

/// Keeps one token redacted while it lives; cloned (in an `Arc`) by whoever may send it.
pub(super) struct Hold {
    tokens: Arc<IssuedTokens>,
    token: String,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.tokens.release(&self.token);
    }
}

impl IssuedTokens {
    /// Redacts `token` until the returned hold (and every clone of its `Arc`) is dropped,
    /// and [`RETIRE_AFTER`] more.
    pub(super) fn hold(self: &Arc<Self>, token: &str) -> Arc<Hold> {
        self.purge(Instant::now());
        {
            let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
            if let Some(entry) = state.tokens.get_mut(token) {
                entry.holders += 1;
            } else {
                state.insert(token);
            }
        }
        Arc::new(Hold {
            tokens: self.clone(),
            token: token.to_string(),
        })
    }

    fn release(&self, token: &str) {
        let unheld = {
            let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
            match state.tokens.get_mut(token) {
                Some(entry) => {
                    entry.holders = entry.holders.saturating_sub(1);
                    entry.holders == 0
                }
                None => false,
            }
        };
        if unheld {
            let mut retired = self.retired.lock().unwrap_or_else(PoisonError::into_inner);
            retired.push_back((Instant::now() + RETIRE_AFTER, token.to_string()));
        }
    }

    /// Forgets the tokens let go long enough ago (or, past [`MAX_RETIRED`], the oldest),
    /// unless someone holds them again.
    pub(super) fn purge(&self, now: Instant) {
        let due: Vec<String> = {
            let mut retired = self.retired.lock().unwrap_or_else(PoisonError::into_inner);
            let mut due = Vec::new();
            while let Some((at, _)) = retired.front() {
                if *at > now && retired.len() <= MAX_RETIRED {
                    break;
                }
                if let Some((_, token)) = retired.pop_front() {
                    due.push(token);
                }
            }
            due
        };
        if due.is_empty() {
            return;
        }
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        for token in due {
            if state
                .tokens
                .get(&token)
                .is_some_and(|entry| entry.holders == 0)
            {
                state.remove(&token);
            }
        }
    }

    /// Tokens redacted now.
    pub(super) fn len(&self) -> usize {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .tokens
            .len()
    }

    /// The spans of `haystack` that hold an issued token in one of its forms.
    pub(super) fn spans(&self, haystack: &[u8], spans: &mut Vec<(usize, usize)>) {
        let state = self.state.read().unwrap_or_else(PoisonError::into_inner);
        if state.tokens.is_empty() {
            return;
        }
        for short in &state.short {
            let needle = short.as_bytes();
            let mut at = 0;
            while let Some(found) = find(&haystack[at..], needle) {
                spans.push((at + found, at + found + needle.len()));
                at += found + 1;
            }
        }
        if haystack.len() < WINDOW || state.index.is_empty() {
            return;
        }
        for start in 0..=haystack.len() - WINDOW {
            let key = window_key(&haystack[start..start + WINDOW]);
            if !state.may_hold(key) {
                continue;
            }
            let Some(candidates) = state.index.get(&key) else {
                continue;
            };
            for &(id, form) in candidates {
                let Some(form) = state.forms.get(&id).and_then(|f| f.get(form as usize)) else {
                    continue;
                };
                let end = start + form.bytes.len();
                if let Some(found) = haystack.get(start..end)
                    && form.matches(found)
                {
                    spans.push((start, end));
                }
            }
        }
    }
}

impl State {
    fn insert(&mut self, token: &str) {
        let id = self.next_id;
        self.next_id += 1;
        self.tokens
            .insert(token.to_string(), Entry { id, holders: 1 });
        let mut forms = forms_of(token);
        forms.sort();
        forms.dedup();
        if forms.iter().any(|form| form.bytes.len() < WINDOW) {
            self.short.push(token.to_string());
            return;
        }
        if self.filter.is_empty() {
            self.filter = vec![0; (1usize << FILTER_BITS) / 64];
        }
        for (index, form) in forms.iter().enumerate() {
            let key = window_key(&form.bytes[..WINDOW]);
            let bit = filter_bit(key);
            self.filter[bit / 64] |= 1 << (bit % 64);
            self.index.entry(key).or_default().push((id, index as u32));
        }
        self.forms.insert(id, forms);
    }

    fn remove(&mut self, token: &str) {
        let Some(entry) = self.tokens.remove(token) else {
            return;
        };
        self.short.retain(|short| short != token);
        let Some(forms) = self.forms.remove(&entry.id) else {
            return;
        };
        for form in &forms {
            let key = window_key(&form.bytes[..WINDOW]);
            if let Some(list) = self.index.get_mut(&key) {
                list.retain(|(id, _)| *id != entry.id);
                if list.is_empty() {
                    self.index.remove(&key);
                }
            }
        }
        // The filter keeps stale bits (a clear bit is what it promises); it is rebuilt
        // when the index empties, so it never fills up for good.
        if self.index.is_empty() {
            self.filter.iter_mut().for_each(|word| *word = 0);
        }
    }

    fn may_hold(&self, key: u64) -> bool {
        let bit = filter_bit(key);
        self.filter
            .get(bit / 64)
            .is_some_and(|word| word & (1 << (bit % 64)) != 0)
    }
}

/// `WINDOW` bytes, ASCII letters folded to lower case, as one number.
fn window_key(bytes: &[u8]) -> u64 {
    let mut key = [0u8; WINDOW];
    for (slot, byte) in key.iter_mut().zip(bytes) {
        *slot = byte.to_ascii_lowercase();
    }
    u64::from_le_bytes(key)
}

fn filter_bit(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FILTER_BITS)) as usize
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(tokens: &IssuedTokens, text: &str) -> Vec<String> {
        let mut spans = Vec::new();
        tokens.spans(text.as_bytes(), &mut spans);
        spans.iter().map(|&(a, b)| text[a..b].to_string()).collect()
    }

    #[test]
    fn ten_thousand_held_tokens_are_all_found_and_others_are_not() {
        let tokens = Arc::new(IssuedTokens::default());
        let holds: Vec<Arc<Hold>> = (0..10_000)
            .map(|n| tokens.hold(&format!("exchanged-token-of-user-{n:05}-a81f")))
            .collect();
        assert_eq!(tokens.len(), 10_000);
        for n in [0, 1, 4_999, 9_999] {
            let token = format!("exchanged-token-of-user-{n:05}-a81f");
            let encoded =
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &token);
            let upper = token.to_ascii_uppercase();
            assert_eq!(redacted(&tokens, &format!("echo: {token}!")), vec![token]);
            // In another letter case, and base64-encoded, too.
            assert_eq!(redacted(&tokens, &upper), vec![upper.clone()]);
            assert!(!redacted(&tokens, &encoded).is_empty());
        }
        assert!(redacted(&tokens, "exchanged-token-of-user-10000-a81f").is_empty());
        assert!(redacted(&tokens, "an ordinary text without any token").is_empty());
        drop(holds);
    }

    #[test]
    fn a_token_is_redacted_while_held_and_a_while_after() {
        let tokens = Arc::new(IssuedTokens::default());
        let hold = tokens.hold("client-credentials-token-77");
        let again = tokens.hold("client-credentials-token-77");
        drop(hold);
        tokens.purge(Instant::now() + RETIRE_AFTER * 2);
        assert_eq!(tokens.len(), 1, "still held by the other");
        drop(again);
        tokens.purge(Instant::now());
        assert_eq!(
            redacted(&tokens, "client-credentials-token-77"),
            ["client-credentials-token-77"],
            "let go just now: still redacted"
        );
        tokens.purge(Instant::now() + RETIRE_AFTER + Duration::from_secs(1));
        assert_eq!(tokens.len(), 0);
        assert!(redacted(&tokens, "client-credentials-token-77").is_empty());
        // Held again before it was forgotten: it stays.
        let first = tokens.hold("rotating-token-1234");
        drop(first);
        let second = tokens.hold("rotating-token-1234");
        tokens.purge(Instant::now() + RETIRE_AFTER * 2);
        assert_eq!(tokens.len(), 1);
        drop(second);
    }

    #[test]
    fn a_short_token_is_matched_exactly() {
        let tokens = Arc::new(IssuedTokens::default());
        let _hold = tokens.hold("abc12");
        assert_eq!(redacted(&tokens, "x abc12 y abc12"), ["abc12", "abc12"]);
        assert!(redacted(&tokens, "ABC12").is_empty());
    }
}
