//! A JSON value on a flat tape: the representation in which a tool's outputSchema checks
//! an answer ([`super::validate`]). An upstream's answer that is compact JSON as serde_json
//! writes it (most are) is read onto one `Vec` of entries in a single pass
//! ([`Tape::read_compact`]), its strings borrowed from the text, with no map, no hashing and
//! no allocation per string or container. When the caller writes the structured content
//! from the answer's text ([`super::response::Shape::from_text`]), such an answer is never
//! read into a `serde_json::Value` at all. A `Value` (an answer read as a tree, a workflow's
//! outputs) is put on a tape by borrowing its strings ([`Tape::of`]).
//!
//! [`Tape`] implements jsonschema's representation traits (`jsonschema::json::Json`), so one
//! compiled validator serves both.

use std::borrow::Cow;

use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde_json::{Map, Number, Value};

use crate::json::{canonical_string_len, plain_number};

/// One JSON value on a tape. A container is followed by its items, an object's members each
/// as its name (a [`Entry::String`]) then its value.
#[derive(Debug)]
pub enum Entry<'t> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'t, str>),
    /// `end`: the index past the array's last entry; `len`: its items.
    Array {
        end: u32,
        len: u32,
    },
    /// `end`: the index past the object's last entry; `len`: its members.
    Object {
        end: u32,
        len: u32,
    },
}

/// A JSON value as a tape of entries, the value first.
#[derive(Debug)]
pub struct Tape<'t> {
    entries: Vec<Entry<'t>>,
    /// Whether some object names a member twice (a tree keeps one of them; the tape keeps
    /// both).
    repeated_name: bool,
}

/// The tape representation, for `jsonschema::options_for`.
pub struct TapeJson;

impl<'t> Tape<'t> {
    /// `text` on a tape when it is JSON written compact as serde_json writes a value read
    /// from it: no whitespace, in strings only the escapes serde_json writes
    /// ([`canonical_string_len`]: such a string is unescaped into a `String` of its own,
    /// the others are borrowed), numbers that read and write back as
    /// they are ([`plain_number`]), at most [`DEPTH`] containers deep. `None` for any other
    /// text, valid JSON or not (serde_json reads it and says why). A value that names a
    /// member twice is read with both ([`Tape::repeats_a_name`]).
    pub fn read_compact(text: &'t str) -> Option<Tape<'t>> {
        let mut reader = Compact {
            text,
            at: 0,
            depth: 0,
            tape: Tape {
                // A typical answer has about one entry per eight bytes; room for twice that
                // grows the tape rarely.
                entries: Vec::with_capacity(text.len() / 4 + 4),
                repeated_name: false,
            },
            names: Vec::new(),
        };
        reader.value()?;
        (reader.at == text.len()).then_some(reader.tape)
    }

    /// `value` on a tape, its strings borrowed.
    pub fn of(value: &'t Value) -> Tape<'t> {
        let mut tape = Tape {
            entries: Vec::new(),
            repeated_name: false,
        };
        tape.push(value);
        tape
    }

    fn push(&mut self, value: &'t Value) {
        match value {
            Value::Null => self.entries.push(Entry::Null),
            Value::Bool(b) => self.entries.push(Entry::Bool(*b)),
            Value::Number(n) => self.entries.push(Entry::Number(n.clone())),
            Value::String(s) => self.entries.push(Entry::String(Cow::Borrowed(s))),
            Value::Array(items) => {
                let at = self.open();
                items.iter().for_each(|item| self.push(item));
                self.close(at, Container::Array, items.len());
            }
            Value::Object(members) => {
                let at = self.open();
                for (name, value) in members {
                    self.entries.push(Entry::String(Cow::Borrowed(name)));
                    self.push(value);
                }
                self.close(at, Container::Object, members.len());
            }
        }
    }

    fn open(&mut self) -> usize {
        self.entries.push(Entry::Null);
        self.entries.len() - 1
    }

    fn close(&mut self, at: usize, container: Container, len: usize) {
        close(&mut self.entries, at, container, len);
    }

    /// The value at the tape's start.
    pub fn root(&self) -> TapeNode<'_> {
        TapeNode {
            entries: &self.entries,
            at: 0,
        }
    }

    /// Whether some object of the value names a member twice.
    pub fn repeats_a_name(&self) -> bool {
        self.repeated_name
    }

    /// Whether the value is an object.
    pub fn is_object(&self) -> bool {
        matches!(self.entries.first(), Some(Entry::Object { .. }))
    }

    /// The value as a tree (for what needs one: an error's report).
    pub fn to_value(&self) -> Value {
        self.root().tree()
    }
}

/// Which container [`close`] ends.
#[derive(Clone, Copy)]
enum Container {
    Array,
    Object,
}

/// Marks the container opened at `at` (its entry a placeholder) as ending at the tape's
/// end, with `len` items.
fn close(entries: &mut [Entry<'_>], at: usize, container: Container, len: usize) {
    let end = u32::try_from(entries.len()).unwrap_or(u32::MAX);
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    entries[at] = match container {
        Container::Array => Entry::Array { end, len },
        Container::Object => Entry::Object { end, len },
    };
}

/// Containers nested deeper are left to serde_json, whose own limit is 128.
pub const DEPTH: usize = 64;

/// Reads compact JSON onto a tape ([`Tape::read_compact`]): each step `None` at the first
/// byte that is not what serde_json would have written.
struct Compact<'t> {
    text: &'t str,
    at: usize,
    depth: usize,
    tape: Tape<'t>,
    /// The names of the objects being read, innermost last: each name's [`fingerprint`]
    /// and tape index.
    names: Vec<(u64, u32)>,
}

impl<'t> Compact<'t> {
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Steps over `byte`, which must come next.
    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.byte()? == byte).then(|| self.at += 1)
    }

    fn value(&mut self) -> Option<()> {
        let entry = match self.byte()? {
            b'{' => return self.object(),
            b'[' => return self.array(),
            b'"' => Entry::String(self.string()?),
            b't' => self.literal("true", Entry::Bool(true))?,
            b'f' => self.literal("false", Entry::Bool(false))?,
            b'n' => self.literal("null", Entry::Null)?,
            _ => self.number()?,
        };
        self.tape.entries.push(entry);
        Some(())
    }

    fn literal(&mut self, word: &str, entry: Entry<'t>) -> Option<Entry<'t>> {
        self.text[self.at..].starts_with(word).then(|| {
            self.at += word.len();
            entry
        })
    }

    /// A string's contents, borrowed unless it has escapes; the reader past its closing
    /// quote.
    fn string(&mut self) -> Option<Cow<'t, str>> {
        self.expect(b'"')?;
        let (length, escaped) = canonical_string_len(&self.text.as_bytes()[self.at..])?;
        // From quote to quote, both ASCII: on character boundaries.
        let quoted = self.text.get(self.at - 1..self.at + length + 1)?;
        self.at += length + 1;
        if escaped {
            unescaped(quoted)
        } else {
            quoted.get(1..quoted.len() - 1).map(Cow::Borrowed)
        }
    }

    /// A number as serde_json reads it: an integer as a `u64` or `i64` (at most 18 digits),
    /// a decimal fraction as the nearest `f64` (at most 15 significant digits: serde_json
    /// reads those exactly rounded too).
    fn number(&mut self) -> Option<Entry<'t>> {
        let rest = &self.text.as_bytes()[self.at..];
        let length = plain_number(rest)?;
        let digits = &self.text[self.at..self.at + length];
        let unsigned = digits.strip_prefix('-').unwrap_or(digits);
        // JSON has no leading zero ("01"), which `plain_number` does not look at.
        if unsigned.len() > 1 && unsigned.starts_with('0') && unsigned.as_bytes()[1] != b'.' {
            return None;
        }
        let number = if digits.contains('.') {
            Number::from_f64(digits.parse().ok()?)?
        } else if digits.starts_with('-') {
            Number::from(digits.parse::<i64>().ok()?)
        } else {
            Number::from(digits.parse::<u64>().ok()?)
        };
        self.at += length;
        Some(Entry::Number(number))
    }

    fn open(&mut self) -> Option<usize> {
        self.depth += 1;
        if self.depth > DEPTH {
            return None;
        }
        self.at += 1;
        self.tape.entries.push(Entry::Null);
        Some(self.tape.entries.len() - 1)
    }

    /// The items of the container just opened, each read by `item`, up to its `end` (`]` or
    /// `}`); how many.
    fn items(&mut self, end: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<usize> {
        let mut len = 0;
        if self.byte()? != end {
            loop {
                item(self)?;
                len += 1;
                if self.byte()? != b',' {
                    break;
                }
                self.at += 1;
            }
        }
        self.expect(end)?;
        self.depth -= 1;
        Some(len)
    }

    fn array(&mut self) -> Option<()> {
        let at = self.open()?;
        let len = self.items(b']', Self::value)?;
        close(&mut self.tape.entries, at, Container::Array, len);
        Some(())
    }

    fn object(&mut self) -> Option<()> {
        let at = self.open()?;
        let from = self.names.len();
        let len = self.items(b'}', Self::member)?;
        if len > 1 && !self.tape.repeated_name && self.repeats(&self.names[from..]) {
            self.tape.repeated_name = true;
        }
        self.names.truncate(from);
        close(&mut self.tape.entries, at, Container::Object, len);
        Some(())
    }

    /// An object's member: its name, then its value.
    fn member(&mut self) -> Option<()> {
        let name = self.string()?;
        let index = u32::try_from(self.tape.entries.len()).ok()?;
        self.names.push((fingerprint(&name), index));
        self.tape.entries.push(Entry::String(name));
        self.expect(b':')?;
        self.value()
    }

    /// Whether `names` (one object's) repeat one.
    fn repeats(&self, names: &[(u64, u32)]) -> bool {
        let same = |a: &(u64, u32), b: &(u64, u32)| {
            a.0 == b.0
                && match (
                    &self.tape.entries[a.1 as usize],
                    &self.tape.entries[b.1 as usize],
                ) {
                    (Entry::String(a), Entry::String(b)) => a == b,
                    _ => false,
                }
        };
        let pairwise = |group: &[(u64, u32)]| {
            group
                .iter()
                .enumerate()
                .any(|(i, a)| group[i + 1..].iter().any(|b| same(a, b)))
        };
        if names.len() <= 16 {
            return pairwise(names);
        }
        // Sorted by fingerprint, pairwise within each run of one fingerprint.
        let mut sorted = names.to_vec();
        sorted.sort_unstable_by_key(|name| name.0);
        sorted
            .chunk_by(|a, b| a.0 == b.0)
            .any(|run| run.len() > 1 && pairwise(run))
    }
}

/// A string with escapes, quotes included, as serde_json reads it.
#[cold]
fn unescaped(quoted: &str) -> Option<Cow<'_, str>> {
    serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
}

/// A name's length and first bytes: two names of different fingerprints differ.
fn fingerprint(name: &str) -> u64 {
    let mut head = [0u8; 8];
    let bytes = name.as_bytes();
    let n = bytes.len().min(7);
    head[..n].copy_from_slice(&bytes[..n]);
    head[7] = bytes.len() as u8;
    u64::from_le_bytes(head)
}

/// One value on a tape.
#[derive(Clone, Copy)]
pub struct TapeNode<'a> {
    entries: &'a [Entry<'a>],
    at: usize,
}

impl<'a> TapeNode<'a> {
    fn entry(&self) -> &'a Entry<'a> {
        &self.entries[self.at]
    }

    /// The index past this value's last entry: where the next one starts.
    fn next(&self) -> usize {
        match self.entry() {
            Entry::Array { end, .. } | Entry::Object { end, .. } => *end as usize,
            _ => self.at + 1,
        }
    }

    fn at(&self, at: usize) -> TapeNode<'a> {
        TapeNode {
            entries: self.entries,
            at,
        }
    }

    fn len(&self) -> usize {
        match self.entry() {
            Entry::Array { len, .. } | Entry::Object { len, .. } => *len as usize,
            _ => 0,
        }
    }

    /// This value as a tree.
    fn tree(&self) -> Value {
        match self.entry() {
            Entry::Null => Value::Null,
            Entry::Bool(b) => Value::Bool(*b),
            Entry::Number(n) => Value::Number(n.clone()),
            Entry::String(s) => Value::String(s.to_string()),
            Entry::Array { .. } => Value::Array(Items::of(*self).map(|item| item.tree()).collect()),
            Entry::Object { .. } => {
                let mut map = Map::new();
                for (name, value) in Members::of(*self) {
                    map.insert(name.to_owned(), value.tree());
                }
                Value::Object(map)
            }
        }
    }
}

impl Json for TapeJson {
    type Node<'a> = TapeNode<'a>;
    type PreparedKey = String;
    type StringBuffer = Vec<Entry<'static>>;

    // A lookup is a pass over the members: one pass over all of them costs no more.
    const KEYS_PER_LOOKUP: usize = 64;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        buffer: &mut Vec<Entry<'static>>,
        string: &str,
        f: impl FnOnce(TapeNode<'_>) -> T,
    ) -> T {
        buffer.clear();
        buffer.push(Entry::String(Cow::Owned(string.to_owned())));
        f(TapeNode {
            entries: buffer,
            at: 0,
        })
    }
}

impl<'a> Node<'a, TapeJson> for TapeNode<'a> {
    type Object = TapeObject<'a>;
    type Array = TapeArray<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<TapeObject<'a>> {
        matches!(self.entry(), Entry::Object { .. }).then_some(TapeObject(*self))
    }

    fn as_array(&self) -> Option<TapeArray<'a>> {
        matches!(self.entry(), Entry::Array { .. }).then_some(TapeArray(*self))
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self.entry() {
            Entry::String(s) => Some(Cow::Borrowed(s.as_ref())),
            _ => None,
        }
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self.entry() {
            Entry::Number(n) => Some(n),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.entry() {
            Entry::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.entry(), Entry::Null)
    }

    fn json_type(&self) -> JsonType {
        match self.entry() {
            Entry::Null => JsonType::Null,
            Entry::Bool(_) => JsonType::Boolean,
            Entry::Number(_) => JsonType::Number,
            Entry::String(_) => JsonType::String,
            Entry::Array { .. } => JsonType::Array,
            Entry::Object { .. } => JsonType::Object,
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.tree())
    }

    fn identity(&self) -> Option<NodeIdentity> {
        let at = u32::try_from(self.at).ok()?;
        Some(NodeIdentity::tagged(self.entries.as_ptr() as usize, at))
    }
}

/// An object on a tape.
pub struct TapeObject<'a>(TapeNode<'a>);

/// An array on a tape.
pub struct TapeArray<'a>(TapeNode<'a>);

/// An object's members, (name, value) in order.
pub struct Members<'a> {
    container: TapeNode<'a>,
    /// Where the next member's name is.
    at: usize,
    /// Past the object's last entry.
    end: usize,
}

/// An array's items, in order.
pub struct Items<'a> {
    container: TapeNode<'a>,
    /// Where the next item is.
    at: usize,
    /// Past the array's last entry.
    end: usize,
}

impl<'a> Members<'a> {
    fn of(object: TapeNode<'a>) -> Members<'a> {
        Members {
            container: object,
            at: object.at + 1,
            end: object.next(),
        }
    }
}

impl<'a> Items<'a> {
    fn of(array: TapeNode<'a>) -> Items<'a> {
        Items {
            container: array,
            at: array.at + 1,
            end: array.next(),
        }
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, TapeNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let Entry::String(name) = &self.container.entries[self.at] else {
            return None;
        };
        let value = self.container.at(self.at + 1);
        self.at = value.next();
        Some((name.as_ref(), value))
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = TapeNode<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let item = self.container.at(self.at);
        self.at = item.next();
        Some(item)
    }
}

impl<'a> Object<'a, TapeJson> for TapeObject<'a> {
    type Node = TapeNode<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }

    /// The first member named `key`: a tape that names a member twice is not checked (see
    /// [`Tape::repeats_a_name`]).
    fn get(&self, key: &String) -> Option<TapeNode<'a>> {
        Members::of(self.0)
            .find(|(name, _)| *name == key.as_str())
            .map(|(_, value)| value)
    }

    fn members(&self) -> Members<'a> {
        Members::of(self.0)
    }
}

impl<'a> Array<'a, TapeJson> for TapeArray<'a> {
    type Node = TapeNode<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn elements(&self) -> Items<'a> {
        Items::of(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_json_read_onto_a_tape_is_the_value_serde_json_reads() {
        let texts = [
            r#"{"id":42,"name":"Widget","price":9.99,"tags":["blue","small"],"stock":{"berlin":12},"none":null,"ok":true,"no":false}"#,
            r#"[1,-2,123456789012345678,-123456789012345678,0.1,-0.5,0,0.00001,[],{},[[{}]]]"#,
            r#""é ✓ 🦀 plain""#,
            r#"{"":{"a":[{"b":"c"}]}}"#,
            // The escapes serde_json writes, in values and names.
            r#"{"body":"line\none\r\n\"quoted\" \\ tab\t\u0000\u001f é","a\"b":1,"a\\b":2}"#,
            "null",
            "0",
        ];
        for text in texts {
            let tape = Tape::read_compact(text).expect(text);
            let value: Value = serde_json::from_str(text).expect("valid");
            assert_eq!(tape.to_value(), value, "{text}");
            assert_eq!(Tape::of(&value).to_value(), value, "{text}");
        }
    }

    /// Valid JSON that serde_json would write otherwise, and what is not JSON at all: left
    /// to serde_json.
    #[test]
    fn any_other_text_is_not_read() {
        let deep = "[".repeat(DEPTH + 1) + &"]".repeat(DEPTH + 1);
        let texts = [
            // Valid, but not as serde_json writes it.
            r#"{"a": 1}"#,
            " 1",
            "1 ",
            r#""\u00e9""#,
            r#""\/""#,
            r#""\u000a""#,
            r#""\u001F""#,
            "1.0",
            "1e5",
            "1.5E3",
            "12345678901234567890",
            "0.1234567890123456",
            "0.000001",
            "-0",
            &deep,
            // Not JSON.
            "",
            "{",
            "[1,]",
            "[,1]",
            r#"{"a":1,}"#,
            r#"{"a" :1}"#,
            r#"{"a"1}"#,
            r#"{1:2}"#,
            "01",
            "-01.5",
            "00",
            ".5",
            "-",
            "1.",
            "tru",
            "nul",
            "\"a",
            "\"\u{1}\"",
            "\"\t\"",
            "[1]]",
            "{}}",
            "truex",
        ];
        for text in texts {
            assert!(Tape::read_compact(text).is_none(), "{text:?}");
        }
        let nested = "[".repeat(DEPTH) + &"]".repeat(DEPTH);
        assert!(Tape::read_compact(&nested).is_some());
    }

    #[test]
    fn a_repeated_name_is_noticed() {
        let tape = Tape::read_compact(r#"{"a":1,"b":{"c":2,"d":3},"e":[{"f":4}]}"#).expect("reads");
        assert!(!tape.repeats_a_name());
        assert!(tape.is_object());
        fn read(text: &str) -> Tape<'_> {
            Tape::read_compact(text).expect(text)
        }
        for repeated in [
            r#"{"a":1,"a":2}"#.to_owned(),
            r#"[{"x":{"a":1,"b":2,"a":3}}]"#.to_owned(),
            // More names than are compared pairwise.
            format!(
                "{{{},\"n7\":0}}",
                (0..40)
                    .map(|i| format!("\"n{i}\":0"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ] {
            assert!(read(&repeated).repeats_a_name(), "{repeated}");
        }
        // The same name in two objects is no repeat, nor are names that begin alike, few or
        // many.
        assert!(!read(r#"[{"a":1},{"a":2}]"#).repeats_a_name());
        assert!(!read(r#"{"abcdefgX":1,"abcdefgY":2}"#).repeats_a_name());
        let alike = (0..40)
            .map(|i| format!("\"abcdefg{i}\":0"))
            .collect::<Vec<_>>();
        let alike = format!("{{{}}}", alike.join(","));
        assert!(!read(&alike).repeats_a_name());
        let again = alike.replace("abcdefg39", "abcdefg3");
        assert!(read(&again).repeats_a_name());
    }

    #[test]
    fn a_repeated_name_reads_as_its_last_value_as_in_a_tree() {
        let tape = Tape::read_compact(r#"{"a":1,"b":2,"a":3}"#).expect("reads");
        assert_eq!(tape.to_value(), json!({"a": 3, "b": 2}));
        let tape = Tape::read_compact(r#"{"a":1,"b":2}"#).expect("reads");
        let root = tape.root();
        let object = root.as_object().expect("object");
        let b = object.get(&"b".to_owned()).expect("b");
        assert_eq!(b.as_number().and_then(Number::as_u64), Some(2));
        assert!(object.get(&"c".to_owned()).is_none());
    }
}
