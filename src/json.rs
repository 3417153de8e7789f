//! Small helpers on `serde_json::Value` that every floor needs and that were once written
//! three ways: a value's kind as messages name it, JSON equality with numbers compared by
//! value, the escaping of one JSON-pointer segment (RFC 6901), and a value as compact JSON
//! (its text, its length, a bound on its length), and a member of a small object found
//! without hashing its name. Cross-cutting: any module may use this one, and it uses none
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

/// `value` as compact JSON: what its `Display` writes, but written into a byte buffer
/// rather than through `fmt::Write`, which costs more for every piece written.
pub fn compact(value: &Value) -> String {
    // A `Value` always serializes (its keys are strings) and serde_json writes UTF-8.
    serde_json::to_string(value).unwrap_or_default()
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
