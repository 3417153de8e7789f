//! Tool and argument names: valid, unique, deterministic and readable.
//!
//! Tool names use `[A-Za-z0-9_-]` (what the strictest LLM APIs accept; MCP's SEP-986 also
//! allows `.` and `/`, which several clients still reject) and at most a configurable
//! length, 64 by default. Argument names use `[A-Za-z0-9_.-]{1,64}`, the property-key rule
//! of Anthropic's and OpenAI's tool APIs.
//!
//! Stability matters more than brevity: the same spec always yields the same names, and
//! adding an operation never renames another unless the two collide. A name the spec
//! already spelled validly is never changed; only names restmcp had to alter get a hash
//! suffix on collision, derived from the operation's own method and path.

use std::collections::{BTreeMap, HashSet};

/// Why a tool's name differs from its source (operationId, or method and path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameChange {
    /// No operationId: the name was made from the method and path.
    FromPath,
    /// Characters outside `[A-Za-z0-9_-]` were replaced.
    Sanitized,
    /// Longer than the maximum: shortened at word boundaries.
    Shortened,
    /// Collided with another tool: a hash of the method and path was appended.
    Deduplicated,
}

/// One tool wanting a name.
#[derive(Debug, Clone, Default)]
pub struct NameRequest {
    /// operationId when present.
    pub operation_id: Option<String>,
    /// `GET /pets/{id}`: unique within an API, the basis of the hash.
    pub identity: String,
    pub method: &'static str,
    pub path: String,
}

/// A name decided, and every reason it differs from the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub changes: Vec<NameChange>,
}

/// Names every request; the result is in request order.
pub fn assign(requests: &[NameRequest], prefix: &str, max_len: usize) -> Vec<Named> {
    let mut named = crate::parallel::on_all_cores(requests, |r| candidate(r, prefix, max_len));
    let mut hash_len = 6;
    loop {
        let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, n) in named.iter().enumerate() {
            groups.entry(n.name.as_str()).or_default().push(i);
        }
        let collided: Vec<Vec<usize>> = groups
            .into_values()
            .filter(|members| members.len() > 1)
            .collect();
        if collided.is_empty() || hash_len > MAX_HASH_LEN {
            return named;
        }
        for members in collided {
            let untouched: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&i| named[i].changes.is_empty())
                .collect();
            for i in members {
                // The one name the spec spelled exactly keeps it.
                if untouched.len() == 1 && untouched[0] == i {
                    continue;
                }
                // Only the part after the prefix is shortened: the prefix is what keeps
                // two APIs' tools apart.
                let hash = short_hash(&requests[i].identity, hash_len);
                let base = named[i].name.strip_prefix(prefix).unwrap_or(&named[i].name);
                let room = max_len.saturating_sub(prefix.len() + hash.len() + 1).max(1);
                named[i].name = format!("{prefix}{}_{hash}", shorten(base, room));
                if !named[i].changes.contains(&NameChange::Deduplicated) {
                    named[i].changes.push(NameChange::Deduplicated);
                }
            }
        }
        hash_len += 2;
    }
}

/// Hash suffixes grow by two characters per round of remaining collisions, up to this.
const MAX_HASH_LEN: usize = 12;

fn candidate(request: &NameRequest, prefix: &str, max_len: usize) -> Named {
    let mut changes = Vec::new();
    let from_id = request
        .operation_id
        .as_deref()
        .map(|id| (id, sanitize(id, false)))
        .filter(|(_, name)| !name.is_empty());
    let mut name = match from_id {
        Some((id, name)) => {
            if name != id {
                changes.push(NameChange::Sanitized);
            }
            name
        }
        // No operationId, or one with nothing usable in it.
        None => {
            changes.push(NameChange::FromPath);
            sanitize(&path_name(request.method, &request.path), false)
        }
    };
    let full = format!("{prefix}{name}");
    if full.len() > max_len {
        let room = max_len.saturating_sub(prefix.len()).max(1);
        name = format!("{prefix}{}", shorten(&name, room));
        changes.push(NameChange::Shortened);
    } else {
        name = full;
    }
    Named { name, changes }
}

/// `get /pets/{petId}` → `get_pets_petId`.
fn path_name(method: &str, path: &str) -> String {
    let mut name = method.to_ascii_lowercase();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        name.push('_');
        name.push_str(segment.trim_matches(|c| c == '{' || c == '}'));
    }
    name
}

/// Replaces what a name may not contain. Comparison operators, common in filter
/// parameters (`DateSent>`), become words so that `DateSent<` and `DateSent>` stay distinct.
pub fn sanitize(text: &str, allow_dot: bool) -> String {
    let spelled = text
        .replace(">=", "_gte")
        .replace("<=", "_lte")
        .replace('>', "_gt")
        .replace('<', "_lt");
    let mut out = String::with_capacity(spelled.len());
    for c in spelled.chars() {
        let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-' || (allow_dot && c == '.');
        let c = if keep { c } else { '_' };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    out.trim_matches(|c| c == '_' || c == '-' || c == '.')
        .to_string()
}

/// An argument name: `[A-Za-z0-9_.-]{1,64}`.
pub fn argument_name(wire: &str) -> String {
    let name = sanitize(wire, true);
    let name = if name.is_empty() {
        "arg".to_string()
    } else {
        name
    };
    shorten(&name, 64)
}

const FILLER: [&str; 12] = [
    "for", "to", "the", "a", "an", "of", "by", "with", "in", "on", "from", "and",
];

const ABBREVIATIONS: [(&str, &str); 24] = [
    ("organizations", "orgs"),
    ("organization", "org"),
    ("repositories", "repos"),
    ("repository", "repo"),
    ("authenticated", "authed"),
    ("environments", "envs"),
    ("environment", "env"),
    ("configurations", "configs"),
    ("configuration", "config"),
    ("applications", "apps"),
    ("application", "app"),
    ("installations", "installs"),
    ("installation", "install"),
    ("administrators", "admins"),
    ("administrator", "admin"),
    ("information", "info"),
    ("descriptions", "descs"),
    ("description", "desc"),
    ("identifiers", "ids"),
    ("identifier", "id"),
    ("notifications", "notifs"),
    ("notification", "notif"),
    ("definitions", "defs"),
    ("definition", "def"),
];

/// A word and the separator written before it (none for the first word or a camelCase
/// boundary).
#[derive(Debug, Clone)]
struct Word {
    separator: Option<char>,
    text: String,
}

fn words(name: &str) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut separator = None;
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' || c == '.' {
            if !current.is_empty() {
                words.push(Word {
                    separator,
                    text: std::mem::take(&mut current),
                });
            }
            separator = Some(c);
            continue;
        }
        let camel_boundary = c.is_ascii_uppercase()
            && !current.is_empty()
            && (chars[i - 1].is_ascii_lowercase()
                || chars[i - 1].is_ascii_digit()
                || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                    && chars[i - 1].is_ascii_uppercase());
        if camel_boundary {
            words.push(Word {
                separator,
                text: std::mem::take(&mut current),
            });
            separator = None;
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(Word {
            separator,
            text: current,
        });
    }
    words
}

fn join(words: &[Word]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0
            && let Some(sep) = w.separator
        {
            out.push(sep);
        }
        out.push_str(&w.text);
    }
    out
}

/// Shortens to at most `max` bytes without cutting a word: filler words go first
/// (right to left), then long words are abbreviated, then whole words are dropped from the
/// middle outwards. The ends carry the meaning that tells operations apart: the first
/// words the namespace and verb (`repos_list`), the last ones the object and qualifiers
/// (`…BindingList`, `…for-authenticated-user`). Only a single word longer than `max` is
/// ever cut.
pub fn shorten(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    let mut words = words(name);
    let fits = |w: &[Word]| join(w).len() <= max;
    let mut i = words.len();
    while i > 1 && !fits(&words) {
        i -= 1;
        if i < words.len() - 1 && FILLER.contains(&words[i].text.to_ascii_lowercase().as_str()) {
            let removed = words.remove(i);
            if let Some(next) = words.get_mut(i) {
                next.separator = next.separator.or(removed.separator);
            }
        }
    }
    for i in 0..words.len() {
        if fits(&words) {
            break;
        }
        let lower = words[i].text.to_ascii_lowercase();
        if let Some((_, short)) = ABBREVIATIONS.iter().find(|(long, _)| *long == lower) {
            words[i].text = match_case(&words[i].text, short);
        }
    }
    while words.len() > 2 && !fits(&words) {
        let victim = words.len() / 2;
        let removed = words.remove(victim);
        if let Some(next) = words.get_mut(victim) {
            next.separator = next.separator.or(removed.separator);
        }
    }
    let mut out = join(&words);
    if out.len() > max {
        if words.len() == 2 {
            out = words[0].text.clone();
        }
        if out.len() > max {
            out.truncate(max);
        }
    }
    out.trim_end_matches(['_', '-', '.']).to_string()
}

fn match_case(original: &str, replacement: &str) -> String {
    if original
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
    {
        let mut chars = replacement.chars();
        match chars.next() {
            Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
            None => String::new(),
        }
    } else {
        replacement.to_string()
    }
}

/// FNV-1a of `text`, as `len` lowercase base-32 characters: stable across platforms,
/// releases and Rust versions, which `std`'s hasher does not promise.
pub fn short_hash(text: &str, len: usize) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    (0..len.min(12))
        .map(|i| ALPHABET[((hash >> (i * 5)) & 31) as usize] as char)
        .collect()
}

/// True when `name` is a valid tool name of at most `max_len` bytes.
pub fn is_valid_tool_name(name: &str, max_len: usize) -> bool {
    !name.is_empty()
        && name.len() <= max_len
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// True for names [`argument_name`] could produce: `[A-Za-z0-9_.-]{1,64}`.
pub fn is_valid_argument_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Hands out argument names unique within one tool.
#[derive(Debug, Default)]
pub struct ArgumentNames {
    taken: HashSet<String>,
}

impl ArgumentNames {
    /// Claims `wanted` if free, else the first free of `wanted__{qualifier}`,
    /// `wanted__{qualifier}_2`, …
    pub fn claim(&mut self, wanted: &str, qualifier: &str) -> String {
        if self.taken.insert(wanted.to_string()) {
            return wanted.to_string();
        }
        // Room for `__{qualifier}` and a `_NNN` counter within the 64-character limit.
        let room = 64usize.saturating_sub(qualifier.len() + 6).max(1);
        let base = format!("{}__{qualifier}", shorten(wanted, room));
        let mut name = base.clone();
        let mut n = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }
}

/// The known name closest to `name`: same letters ignoring case and separators, else the
/// smallest edit distance within a third of the length.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let normalize = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let wanted = normalize(name);
    if let Some(same) = known.iter().find(|k| normalize(k) == wanted) {
        return Some(same);
    }
    let limit = (name.chars().count() / 3).max(2);
    known
        .iter()
        .map(|k| (edit_distance(&wanted, &normalize(k)), *k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance (two rows; names are short).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests;

/// Names that fit `max` characters for a client with a tighter limit than the catalog's:
/// each name longer than `max` is [`shorten`]ed, and one that would then clash with
/// another name gets a short hash of its full name, so every result is distinct and the
/// same for the same input. Names that fit are kept.
pub fn within_budget(names: &[&str], max: usize) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> = names
        .iter()
        .filter(|name| name.len() <= max)
        .map(|name| name.to_string())
        .collect();
    names
        .iter()
        .map(|name| {
            if name.len() <= max {
                return name.to_string();
            }
            let short = shorten(name, max);
            if taken.insert(short.clone()) {
                return short;
            }
            let hash = short_hash(name, 6);
            let mut candidate = format!("{}_{hash}", shorten(name, max.saturating_sub(7)));
            let mut n = 2;
            while !taken.insert(candidate.clone()) {
                let suffix = format!("_{hash}{n}");
                candidate = format!(
                    "{}{suffix}",
                    shorten(name, max.saturating_sub(suffix.len()))
                );
                n += 1;
            }
            candidate
        })
        .collect()
}
