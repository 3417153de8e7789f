//! Small helpers on `serde_json::Value` that every floor needs and that were once written
//! three ways: a value's kind as messages name it, JSON equality with numbers compared by
//! value, the escaping of one JSON-pointer segment (RFC 6901), and a value as compact JSON
//! (its text, its length, a bound on its length, or the text it was read from when that is
//! already the same: [`compact_as_read`]), and a member of a small object found without
//! hashing its name. Cross-cutting: any module may use this one, and it uses none
//! of them.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

/// Objects up to this many members are searched by comparing names ([`field`]).
const SCAN_UP_TO: usize = 8;

/// The member `key` of `map`. serde_json's ordered map hashes every name looked up with
/// SipHash, which costs more than comparing a few short names: a small object (a JSON-RPC
/// message, its `params`, a `_meta`) is scanned instead, a larger one looked up.
pub fn field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= SCAN_UP_TO {
        map.iter()
            .find_map(|(name, value)| (name == key).then_some(value))
    } else {
        map.get(key)
    }
}

/// The member `key` of `value`, when it is an object ([`field`]).
pub fn member<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    field(value.as_object()?, key)
}

/// [`field`] and [`member`] as methods, for code that looks up many members: a schema's
/// keywords are read this way while tools are made.
pub trait Lookup {
    /// The member `key`, found as [`field`] finds it.
    fn field(&self, key: &str) -> Option<&Value>;
}

impl Lookup for Value {
    fn field(&self, key: &str) -> Option<&Value> {
        member(self, key)
    }
}

impl Lookup for Map<String, Value> {
    fn field(&self, key: &str) -> Option<&Value> {
        field(self, key)
    }
}

/// `value` as compact JSON: what `serde_json::to_string` writes, written by
/// [`write_compact`].
pub fn compact(value: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    write_compact(&mut out, value);
    // Every piece written is UTF-8: the value's own strings, ASCII punctuation, escapes
    // and digits.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends `value` as compact JSON: the bytes `serde_json::to_writer` writes for it (a
/// proptest over any value, and a test over every description shipped in `tests/`,
/// compare them). serde_json looks
/// every byte of every string up in its escape table and goes through serde's generic
/// serializer for each member; here a string with nothing to escape, nearly every name and
/// text of a schema, is copied whole. Synthesizing Microsoft Graph beta wrote 3.1 G of its
/// 22.1 G instructions through serde_json.
pub fn write_compact(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // serde_json writes numbers with itoa and ryu; a `Number` always serializes.
        Value::Number(number) => {
            let _ = serde_json::to_writer(&mut *out, number);
        }
        Value::String(text) => write_plain_string(out, text),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_plain_string(out, key);
                out.push(b':');
                write_compact(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Appends `text` as a JSON string, quotes included, as serde_json writes it: copied
/// whole when it has nothing to escape ([`needs_escape`]), else written by
/// [`write_string`].
pub fn write_plain_string(out: &mut Vec<u8>, text: &str) {
    if needs_escape(text.as_bytes()) {
        write_string(out, text);
    } else {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

/// True when `bytes` has a byte serde_json escapes in a string: `"`, `\` or a control
/// character. Eight bytes at a time, the last eight again for the rest (copying the rest
/// to a padded word costs a `memcpy` call, more than the test); a text shorter than eight
/// bytes (most names) a byte at a time.
fn needs_escape(bytes: &[u8]) -> bool {
    if bytes.len() < 8 {
        return bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
    }
    let mut chunks = bytes.chunks_exact(8);
    let mut marks = 0;
    for chunk in &mut chunks {
        marks |= escape_marks(chunk);
    }
    if !chunks.remainder().is_empty() {
        marks |= escape_marks(&bytes[bytes.len() - 8..]);
    }
    marks != 0
}

/// For eight bytes, nonzero when one of them is `"`, `\` or below 0x20 (see
/// [`quote_or_backslash_marks`]; a byte below 0x20 is one that subtracting 0x20 borrows
/// from, its high bit not set before).
fn escape_marks(chunk: &[u8]) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut word = [0; 8];
    word.copy_from_slice(&chunk[..8]);
    let word = u64::from_le_bytes(word);
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    control | quote_or_backslash_marks(chunk)
}

/// How many bytes longer `text` is as a JSON string (quotes not counted) than as it is:
/// serde_json escapes `"`, `\` and the control characters, `\b`, `\t`, `\n`, `\f` and
/// `\r` in two bytes and the others as `\u00XX`.
fn escapes(text: &str) -> usize {
    if !needs_escape(text.as_bytes()) {
        return 0;
    }
    text.as_bytes()
        .iter()
        .map(|&b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
            0x00..=0x1F => 5,
            _ => 0,
        })
        .sum()
}

/// The length of `value` as compact JSON (what [`write_compact`] writes), counted without
/// writing it: strings by [`escapes`], numbers written to a counter.
pub fn compact_value_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => compact_len(number),
        Value::String(text) => text.len() + 2 + escapes(text),
        Value::Array(items) => {
            // The brackets and a comma between each two items.
            let punctuation = 2 + items.len().saturating_sub(1);
            punctuation + items.iter().map(compact_value_len).sum::<usize>()
        }
        Value::Object(map) => {
            // The braces, a colon per member and a comma between each two.
            let punctuation = 2 + map.len() + map.len().saturating_sub(1);
            punctuation
                + map
                    .iter()
                    .map(|(key, item)| key.len() + 2 + escapes(key) + compact_value_len(item))
                    .sum::<usize>()
        }
    }
}

/// `text` itself when it is exactly what [`compact`] would write for `parsed`, the value
/// serde_json read from it; `None` when that cannot be told in one pass over the bytes.
/// An API's answer is usually compact already: its text is then the result's text without
/// writing the tree again. Told in one pass: no whitespace outside strings, in strings no
/// control character and only the escapes serde_json writes ([`canonical_string_len`]:
/// `\n`, not `\u000a`; `/`, not `\/`), only numbers that read and
/// write back as they are ([`plain_number`]), and as many members in `parsed` as names in
/// the text (a repeated name keeps one member).
pub fn compact_as_read<'t>(text: &'t [u8], parsed: &Value) -> Option<&'t str> {
    let names = plain_names(text)?;
    (names == members(parsed))
        .then(|| std::str::from_utf8(text).ok())
        .flatten()
}

/// The number of object member names in `text` (valid JSON), or `None` when it has what
/// serde_json would write differently ([`compact_as_read`]).
fn plain_names(text: &[u8]) -> Option<usize> {
    let mut names = 0;
    let mut at = 0;
    while let Some(&byte) = text.get(at) {
        at += match byte {
            b'"' => {
                let inside = text.get(at + 1..)?;
                canonical_string_len(inside)?.0 + 2
            }
            b':' => {
                names += 1;
                1
            }
            b'{' | b'}' | b'[' | b']' | b',' => 1,
            b't' | b'n' => 4,
            b'f' => 5,
            b'-' | b'0'..=b'9' => plain_number(&text[at..])?,
            _ => return None,
        };
    }
    Some(names)
}

/// The length of the number `text` starts with, when serde_json writes it back as it is:
///
/// - an integer of up to 18 digits, not `-0`: always read as an `i64` or `u64`;
/// - a decimal fraction without exponent, of 1 to 15 significant digits, the last one not
///   `0`, and under 10⁻⁴ no more than four zeros after the point (`0.00001`, not `0.000001`):
///   read as the nearest `f64` (its digits and the power of ten are exact in an `f64`, so
///   serde_json's one multiplication or division rounds correctly), which ryu writes back as
///   the shortest decimal that reads as the same `f64`. Fifteen digits always read back, and
///   no shorter decimal does; ryu writes a point and no exponent from 10⁻⁵ to 10¹⁶.
pub(crate) fn plain_number(text: &[u8]) -> Option<usize> {
    let sign = usize::from(text.first() == Some(&b'-'));
    let digits_from = |at: usize| {
        text.get(at..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        })
    };
    let whole = digits_from(sign);
    let point = sign + whole;
    if whole == 0 || matches!(text.get(point), Some(b'e' | b'E')) {
        return None;
    }
    if text.get(point) != Some(&b'.') {
        let negative_zero = sign == 1 && text[sign] == b'0';
        return (whole <= 18 && !negative_zero).then_some(point);
    }
    let fraction = digits_from(point + 1);
    let end = point + 1 + fraction;
    if fraction == 0 || text[end - 1] == b'0' || matches!(text.get(end), Some(b'e' | b'E')) {
        return None;
    }
    let significant = if text[sign] == b'0' {
        let zeros = text[point + 1..end]
            .iter()
            .take_while(|&&b| b == b'0')
            .count();
        if zeros > 4 {
            return None;
        }
        fraction - zeros
    } else {
        whole + fraction
    };
    (significant <= 15).then_some(end)
}

/// The length of a JSON string's contents, `bytes` starting after its opening quote, when
/// serde_json writes it back as it is: up to the closing quote, with no control character,
/// and with an escape only where serde_json writes one ([`canonical_escape_len`]); and
/// whether it has an escape. `None` for any other string (or no closing quote).
#[inline]
pub(crate) fn canonical_string_len(bytes: &[u8]) -> Option<(usize, bool)> {
    let found = first_special(bytes)?;
    if bytes[found] == b'"' {
        return Some((found, false));
    }
    escaped_string_len(bytes, found).map(|len| (len, true))
}

/// [`canonical_string_len`] of contents whose first `\\` or control character is at `found`.
#[cold]
fn escaped_string_len(bytes: &[u8], mut found: usize) -> Option<usize> {
    loop {
        match bytes[found] {
            b'"' => return Some(found),
            b'\\' => {
                let next = found + 1 + canonical_escape_len(&bytes[found + 1..])?;
                found = next + first_special(bytes.get(next..)?)?;
            }
            _ => return None,
        }
    }
}

/// The length of the escape `after` (the bytes after a backslash) starts with, when it is
/// one serde_json writes: `\"` and `\\`, `\b`, `\f`, `\n`, `\r` and `\t`, and `\u00xx` (lowercase)
/// for the other control characters. (It writes no other character escaped: not `/`, not
/// one beyond ASCII.)
fn canonical_escape_len(after: &[u8]) -> Option<usize> {
    let lower_hex = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    match *after.first()? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => {
            let [b'0', b'0', high, low] = *after.get(1..5)? else {
                return None;
            };
            let control = lower_hex(high)? << 4 | lower_hex(low)?;
            (control < 0x20 && !matches!(control, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)).then_some(5)
        }
        _ => None,
    }
}

/// Where the first `"`, `\` or control character of `bytes` is, eight bytes at a time.
#[inline]
fn first_special(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let marks = escape_marks(chunk);
        if marks != 0 {
            // The lowest mark is sure (see `quote_or_backslash_marks`).
            return Some(at + marks.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let rest = chunks.remainder();
    Some(
        at + rest
            .iter()
            .position(|&b| b < 0x20 || b == b'"' || b == b'\\')?,
    )
}

/// For eight bytes, a mark (the high bit) at the first byte that is `"` or `\`, and
/// possibly at bytes after it; zero when there is none.
fn quote_or_backslash_marks(chunk: &[u8]) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `word` that is zero; above a zero byte, a byte may be
    // marked that is not, so only the lowest mark is sure.
    let zero_bytes = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut word = [0; 8];
    word.copy_from_slice(&chunk[..8]);
    let word = u64::from_le_bytes(word);
    zero_bytes(word ^ (ONES * u64::from(b'"'))) | zero_bytes(word ^ (ONES * u64::from(b'\\')))
}

/// Appends `text` as a JSON string, quotes included: the bytes serde_json writes for it.
/// A text without control characters (a JSON answer's text, which is compact JSON, has
/// none) has only `"` and `\` to escape: eight bytes without either are copied at once,
/// and the others are written a byte at a time without a branch, where serde_json looks
/// each byte up in a table and copies each run between two escapes on its own (for the
/// answer of `bench/callgrind.sh`, 4,060 instructions against about 2,500). Any other text
/// is written by serde_json.
pub fn write_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // The least byte, without an early exit, so the scan is a few vector instructions.
    if bytes.iter().fold(u8::MAX, |least, &b| least.min(b)) < 0x20 {
        // Writing to a `Vec` cannot fail, and a `str` always serializes.
        let _ = serde_json::to_writer(&mut *out, text);
        return;
    }
    out.push(b'"');
    let start = out.len();
    // Room for every byte escaped, and for the last sixteen-byte window.
    out.resize(start + 2 * bytes.len() + 16, 0);
    let written = escape_quotes(&mut out[start..], bytes);
    out.truncate(start + written);
    out.push(b'"');
}

/// Writes `bytes` into `into` (at least twice as long, and sixteen more) with `\` before
/// each `"` and `\`; returns the length written.
fn escape_quotes(into: &mut [u8], bytes: &[u8]) -> usize {
    let mut at = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let Some(window) = window16(into, at) else {
            return at;
        };
        if quote_or_backslash_marks(chunk) == 0 {
            window[..8].copy_from_slice(chunk);
            at += 8;
        } else {
            at += escape_into(window, chunk);
        }
    }
    match window16(into, at) {
        Some(window) => at + escape_into(window, chunks.remainder()),
        None => at,
    }
}

/// The sixteen bytes of `into` from `at`, room enough for eight bytes escaped.
fn window16(into: &mut [u8], at: usize) -> Option<&mut [u8; 16]> {
    into.get_mut(at..at + 16)?.try_into().ok()
}

/// Writes at most eight `bytes` escaped into `window`; returns the length written. Each
/// byte goes where a backslash was just written, or after it when the byte needs one.
fn escape_into(window: &mut [u8; 16], bytes: &[u8]) -> usize {
    let mut at = 0;
    for &byte in bytes.iter().take(8) {
        let escaped = usize::from(byte == b'"' || byte == b'\\');
        window[at & 15] = b'\\';
        window[(at + escaped) & 15] = byte;
        at += 1 + escaped;
    }
    at
}

/// The number of object members in `value`, nested ones included.
fn members(value: &Value) -> usize {
    let nested = |value: &Value| match value {
        Value::Object(_) | Value::Array(_) => members(value),
        _ => 0,
    };
    match value {
        Value::Object(map) => map.len() + map.values().map(nested).sum::<usize>(),
        Value::Array(items) => items.iter().map(nested).sum(),
        _ => 0,
    }
}

/// At least the length of `value` as compact JSON, found without serializing it: each
/// string counted as if every byte were escaped as `\u00XX` (six bytes), each number at
/// the longest serde_json writes. Enough to tell that a value surely fits a budget.
pub fn compact_len_bound(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        // i64::MIN is 20 characters; an f64 at most 24 (`-2.2250738585072014e-308`).
        Value::Number(_) => 24,
        Value::String(text) => escaped_bound(text),
        Value::Array(items) => {
            2 + items
                .iter()
                .map(|item| compact_len_bound(item) + 1)
                .sum::<usize>()
        }
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(key, item)| escaped_bound(key) + 1 + compact_len_bound(item) + 1)
                .sum::<usize>()
        }
    }
}

/// At least the length of `text` as a JSON string, quotes included.
pub fn escaped_bound(text: &str) -> usize {
    text.len().saturating_mul(6).saturating_add(2)
}

/// The length of `value` as compact JSON, counted without writing the text anywhere.
pub fn compact_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail, and plain data always serializes.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// A value's type with its article, as sentences name it: `a string`, `an object`, `null`.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value's type as JSON Schema names it, without an article: `string`, `object`.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Orders two numbers by value: exactly for integers, by `f64` otherwise.
pub fn number_cmp(x: &Number, y: &Number) -> Option<Ordering> {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return Some(a.cmp(&b));
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return Some(a.cmp(&b));
    }
    x.as_f64()?.partial_cmp(&y.as_f64()?)
}

/// JSON equality as JSON Schema (`enum`, `const`, `uniqueItems`) and RFC 9535 define it:
/// numbers by value (`1` equals `1.0`), arrays item by item, objects member by member in any
/// order. Iterative, so a deep value cannot exhaust the stack.
pub fn equal(a: &Value, b: &Value) -> bool {
    let mut pending = vec![(a, b)];
    while let Some(pair) = pending.pop() {
        match pair {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if number_cmp(x, y) == Some(Ordering::Equal) => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                pending.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for (key, value) in x {
                    match y.get(key) {
                        Some(other) => pending.push((value, other)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Escapes one JSON-pointer segment (RFC 6901 §3): `~` as `~0`, `/` as `~1`. Borrows when
/// there is nothing to escape.
pub fn escape_token(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// Unescapes one JSON-pointer segment (RFC 6901 §4): `~1` as `/`, then `~0` as `~`, so
/// `~01` reads as `~1`. Borrows when there is nothing to unescape.
pub fn unescape_token(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_byte_to_escape_is_noticed_at_any_place() {
        for length in 1..20 {
            for at in 0..length {
                for byte in 0u8..0x80 {
                    let mut text = vec![b'a'; length];
                    text[at] = byte;
                    let text = String::from_utf8(text).unwrap();
                    let plain = format!("\"{text}\"");
                    let theirs = serde_json::to_string(&text).unwrap();
                    assert_eq!(needs_escape(text.as_bytes()), theirs != plain, "{text:?}");
                    assert_eq!(escapes(&text), theirs.len() - plain.len(), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn descriptions_are_written_compact_as_serde_json_writes_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for dir in ["tests/fixtures", "specs", "tests/world"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let value: Value = match path.extension().and_then(|e| e.to_str()) {
                    Some("json") => serde_json::from_str(&text).expect("fixture parses"),
                    Some("yaml") => match serde_saphyr::from_str(&text) {
                        Ok(value) => value,
                        // A broken fixture or a stream of several documents.
                        Err(_) => continue,
                    },
                    _ => continue,
                };
                let theirs = serde_json::to_string(&value).expect("serializes");
                assert_eq!(compact(&value), theirs, "{}", path.display());
                assert_eq!(
                    compact_value_len(&value),
                    theirs.len(),
                    "{}",
                    path.display()
                );
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} descriptions read");
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let ours = |text: &str| {
            let mut out = b"x".to_vec();
            write_string(&mut out, text);
            String::from_utf8(out).unwrap()
        };
        let theirs = |text: &str| format!("x{}", serde_json::to_string(text).unwrap());
        // Every character below 0x80 alone, and around others.
        for c in (0u8..0x80)
            .map(char::from)
            .chain(['é', '✓', '𝄞', '\u{2028}'])
        {
            for text in [c.to_string(), format!("a{c}\"b\\{c}"), format!("{c}{c}")] {
                assert_eq!(ours(&text), theirs(&text), "{text:?}");
            }
        }
        let answer = r#"{"id":42,"name":"Widget","say":"\"hi\"\n","path":"C:\\x","tags":[]}"#;
        for text in ["", "\"", "\\", "\\\"", answer, &answer.repeat(40)] {
            assert_eq!(ours(text), theirs(text), "{text:?}");
        }
        // Quotes and backslashes at every place of the eight-byte chunks, and none.
        for length in 0..40 {
            for every in 1..10 {
                let text: String = (0..length)
                    .map(|i| match i % every {
                        0 => '"',
                        1 if every > 3 => '\\',
                        _ => 'a',
                    })
                    .collect();
                assert_eq!(ours(&text), theirs(&text), "{text:?}");
                let plain = "b".repeat(length);
                assert_eq!(ours(&plain), theirs(&plain));
            }
        }
    }

    /// What `compact_as_read` says of `text`, checked against `compact`: when it takes the
    /// text, the text is exactly what `compact` writes.
    fn as_read(text: &str) -> Option<&str> {
        let parsed: Value = serde_json::from_str(text).expect(text);
        let taken = compact_as_read(text.as_bytes(), &parsed);
        if let Some(taken) = taken {
            assert_eq!(taken, compact(&parsed), "{text}");
        }
        taken
    }

    #[test]
    fn an_answer_already_compact_is_its_own_text() {
        for text in [
            r#"{"id":7,"name":"Rex","tags":["a","b"],"owner":null,"ok":true,"n":-12}"#,
            r#"[{"a":{"b":[1,2,{"c":false}]}},[],{}]"#,
            r#""café""#,
            "0",
            "-1",
            "123456789012345678",
            "{\"\":\"\",\"emoji\":\"✓ \u{7f}\"}",
            "[true,false,null]",
            r#"{"price":9.99,"rate":-0.25,"tiny":0.00001234,"pi":3.14159265358979}"#,
            // The escapes serde_json writes.
            r#"{"say":"\"hi\"\\\n\t\u0001","a\nb":[]}"#,
        ] {
            assert_eq!(as_read(text), Some(text), "{text}");
        }
    }

    #[test]
    fn an_answer_written_otherwise_is_written_again() {
        for text in [
            // Whitespace between tokens.
            r#"{"a": 1}"#,
            " {}",
            "[1,\n2]",
            // Escapes serde_json writes differently: `\/`, `\u00e9`, `\u000a` (`\n`).
            r#"{"a":"x\/y"}"#,
            r#"{"a":"caf\u00e9"}"#,
            r#"{"a":"two\u000alines"}"#,
            // Numbers serde_json reads as floats, or writes back as another number.
            "1.0",
            "1e3",
            "-2E2",
            "-0",
            "[-0]",
            "1234567890123456789",
            "123456789012345678901234567890",
            "9.90",
            "0.000001",
            "3.141592653589793",
            "-0.0",
            // A repeated name: the value keeps one member.
            r#"{"a":1,"a":2}"#,
            r#"{"x":{"a":1,"b":2,"a":3},"y":4}"#,
        ] {
            assert_eq!(as_read(text), None, "{text}");
        }
    }

    /// A random JSON text: compact or not, with or without what `compact_as_read` refuses.
    fn random_text(seed: &mut u64, depth: u32) -> String {
        fn next(seed: &mut u64, n: u64) -> u64 {
            *seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (*seed >> 33) % n
        }
        const SCALARS: [&str; 21] = [
            "true",
            "false",
            "null",
            "0",
            "-0",
            "7",
            "-42",
            "1.5",
            "2e3",
            "12345678901234567890",
            r#""""#,
            r#""a""#,
            r#""é""#,
            r#""a\"b""#,
            r#""\u0041""#,
            r#""x\/y""#,
            r#""tab\tnew\n""#,
            "9.99",
            "-0.5",
            "0.0001",
            "1.10",
        ];
        let space = |seed: &mut u64| if next(seed, 6) == 0 { " " } else { "" };
        match next(seed, if depth > 3 { 2 } else { 4 }) {
            0 | 1 => SCALARS[next(seed, SCALARS.len() as u64) as usize].to_owned(),
            2 => {
                let items: Vec<String> = (0..next(seed, 4))
                    .map(|_| random_text(seed, depth + 1))
                    .collect();
                let comma = format!(",{}", space(seed));
                format!("[{}]", items.join(&comma))
            }
            _ => {
                let members: Vec<String> = (0..next(seed, 4))
                    .map(|_| {
                        let name = ["a", "b", "c"][next(seed, 3) as usize];
                        let colon = format!(":{}", space(seed));
                        format!("\"{name}\"{colon}{}", random_text(seed, depth + 1))
                    })
                    .collect();
                format!("{{{}}}", members.join(","))
            }
        }
    }

    #[test]
    fn a_string_ends_at_its_quote_and_a_control_or_a_foreign_escape_is_seen_at_any_place() {
        for len in 0..40 {
            for at in 0..=len {
                for (mark, ends) in [(b'"', true), (b'\\', false), (0x1f, false), (0x00, false)] {
                    // Every byte value but the quote, the backslash and the controls, and
                    // each of those after the mark.
                    let mut bytes: Vec<u8> = (0..len)
                        .map(|i| match (i * 37 + 1) as u8 {
                            b'"' | b'\\' | 0..0x20 => 0x80,
                            b => b,
                        })
                        .collect();
                    let expected = (at < len).then(|| {
                        bytes[at] = mark;
                        for (i, other) in (at + 1..len).zip([b'"', b'\\', b'\n'].iter().cycle()) {
                            bytes[i] = *other;
                        }
                        at
                    });
                    let expected = expected.filter(|_| ends);
                    // After a backslash: `\"` (an escape serde_json writes), then `\` and a
                    // raw newline (one it does not).
                    assert_eq!(
                        canonical_string_len(&bytes).map(|(len, _)| len),
                        expected,
                        "{bytes:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_string_keeps_exactly_the_escapes_serde_json_writes() {
        let every_control: String = (0u8..0x20).map(char::from).collect();
        for text in [
            "plain",
            "a \"quoted\" \\ back\u{8}\u{c}\n\r\t",
            every_control.as_str(),
            "é ü \u{7f} /",
            "",
        ] {
            let written = serde_json::to_string(text).expect("a string");
            let inside = &written.as_bytes()[1..];
            let (len, escaped) = canonical_string_len(inside).expect(&written);
            assert_eq!(len, written.len() - 2, "{written}");
            assert_eq!(escaped, written.contains('\\'), "{written}");
        }
        // Valid JSON that serde_json writes otherwise.
        for foreign in [
            r#"\/""#,
            r#"\u00e9""#,
            r#"\u000a""#,
            r#"\u001F""#,
            r#"\u0041""#,
            r#"\ud83d\ude00""#,
            r#"\u0020""#,
        ] {
            assert_eq!(canonical_string_len(foreign.as_bytes()), None, "{foreign}");
        }
        assert_eq!(canonical_string_len(br#"\u001f""#), Some((6, true)));
        assert_eq!(canonical_string_len(br#"\"#), None);
        assert_eq!(canonical_string_len(br#"\u00"#), None);
    }

    #[test]
    fn a_number_taken_as_read_is_written_back_as_it_is() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let (mut taken, mut tried) = (0, 0);
        for _ in 0..200_000 {
            let digit = |d: u64| char::from(b'0' + d as u8);
            let whole: String = match next(3) {
                0 => "0".into(),
                _ => std::iter::once(digit(1 + next(9)))
                    .chain((0..next(19)).map(|_| digit(next(10))))
                    .collect(),
            };
            let zeros = "0".repeat(next(8) as usize);
            let fraction: String = (0..next(19)).map(|_| digit(next(10))).collect();
            let sign = if next(2) == 0 { "-" } else { "" };
            let text = match fraction.is_empty() && zeros.is_empty() {
                true => format!("{sign}{whole}"),
                false => format!("{sign}{whole}.{zeros}{fraction}"),
            };
            if serde_json::from_str::<Value>(&text).is_ok() {
                tried += 1;
                taken += usize::from(as_read(&text).is_some());
            }
        }
        assert!(
            taken > tried / 10,
            "only {taken} of {tried} numbers taken as read"
        );
    }

    #[test]
    fn a_text_taken_as_read_is_always_what_compact_writes() {
        let (mut seed, mut taken) = (1u64, 0);
        for _ in 0..20_000 {
            let text = random_text(&mut seed, 0);
            taken += usize::from(as_read(&text).is_some());
        }
        assert!(taken > 2_000, "only {taken} texts taken as read");
    }

    #[test]
    fn a_member_is_found_in_small_and_large_objects_alike() {
        let mut large = Map::new();
        for i in 0..=SCAN_UP_TO {
            large.insert(format!("k{i}"), json!(i));
        }
        let small = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"});
        for (value, key, expected) in [
            (&small, "id", Some(json!(7))),
            (&small, "method", Some(json!("tools/call"))),
            (&small, "params", None),
            (&small, "", None),
            (&json!([1]), "id", None),
            (&Value::Object(large.clone()), "k0", Some(json!(0))),
            (&Value::Object(large.clone()), "k8", Some(json!(8))),
            (&Value::Object(large), "k9", None),
        ] {
            assert_eq!(member(value, key).cloned(), expected, "{key} in {value}");
        }
    }

    #[test]
    fn numbers_are_equal_by_value_at_any_depth() {
        assert!(equal(&json!(1), &json!(1.0)));
        assert!(equal(
            &json!({"a": [1, {"b": 2.0}]}),
            &json!({"a": [1.0, {"b": 2}]})
        ));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!equal(&json!(u64::MAX), &json!(-1)));
    }

    #[test]
    fn pointer_tokens_escape_tilde_before_slash() {
        assert_eq!(escape_token("a/b~c"), "a~1b~0c");
        assert!(matches!(escape_token("plain"), Cow::Borrowed("plain")));
        assert_eq!(unescape_token("a~1b~0c~01"), "a/b~c~1");
        assert_eq!(unescape_token(&escape_token("~1/~0")), "~1/~0");
        assert_eq!(kind(&json!([])), "an array");
        assert_eq!(type_name(&json!({})), "object");
    }

    #[test]
    fn compact_text_is_what_display_writes() {
        let value = serde_json::json!({
            "b": [1, -2.5, 1e300, null, true],
            "a": "quote \" backslash \\ tab \t é ✓ \u{7f}",
            "nested": {"z": {}, "y": []},
        });
        assert_eq!(compact(&value), value.to_string());
        assert_eq!(compact(&value).len(), compact_len(&value));
        let text = compact(&value);
        assert!(
            text.starts_with(r#"{"b":[1,-2.5,1e+300,null,true],"a":"quote \""#),
            "{text}"
        );
    }

    #[test]
    fn the_bound_is_never_below_the_length() {
        let values = [
            serde_json::json!(null),
            serde_json::json!(-9223372036854775808i64),
            serde_json::json!(18446744073709551615u64),
            serde_json::json!(-2.2250738585072014e-308),
            serde_json::json!(1.7976931348623157e308),
            serde_json::json!("\u{0}\u{1f}\"\\ é ✓ 😀"),
            serde_json::json!({"\u{7}key": [[], {}, [null, true, false, 0.1]], "": ""}),
        ];
        for value in &values {
            assert!(compact_len_bound(value) >= compact_len(value), "{value}");
        }
        let long = Value::String("a".repeat(1000));
        assert!(compact_len_bound(&long) < 7 * compact_len(&long));
    }
}
