//! A JSON description read without building what synthesis may never ask for, or needs
//! only for a moment: the entries of `components` (but `securitySchemes`, which is read
//! whole) and the root's extensions (`x-…` but `x-mcp…`) and `webhooks` are kept as their
//! text, minified, and parsed when a `$ref` first reaches one ([`Deferred::get`]). GitHub's
//! description holds 969 schemas, of which the `$ref`s of its paths reach 625 (most others
//! serve its `x-webhooks`), and 535 examples: built whole, they took its start-up peak to
//! 85 MB instead of 67 MB.
//!
//! Swagger 2.0's root `definitions`, `parameters` and `responses` are deferred entry by
//! entry as `components` is.
//!
//! The path items of `paths` are kept as text too, each with a `null` in its place in the
//! skeleton's `paths` (so their order stays): normalization parses a few at a time and
//! drops them once their tools are made ([`Deferred::path_item`]), and a `$ref` into one
//! parses it for good. Built whole, GitHub's 811 path items are about 23 MB.
//!
//! What is deferred is checked as the whole parse checks it (syntax as it is read; strings,
//! numbers and nesting then, on every core, before it is minified), so a deferred entry
//! always parses later, to the value the whole parse would have built. An entry that names another document in a `$ref` is built at once:
//! loading follows those references before synthesis starts. Anything unusual (the root
//! not an object, a section not a map, a syntax error anywhere, deep nesting) makes
//! [`parse_document`] give up deferring: it parses the whole document as before, errors
//! included.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::SpecError;
use super::parse::{Allowance, CompactSeed, Format, Pending, detect_format, parse_document_within};

/// The root's keys and `components` sections whose entries may be deferred.
const SECTIONS: [&str; 9] = [
    "schemas",
    "responses",
    "parameters",
    "examples",
    "requestBodies",
    "headers",
    "links",
    "callbacks",
    "pathItems",
];

/// The root's keys whose entries may be deferred (Swagger 2.0's `components`).
const ROOT_SECTIONS: [&str; 3] = ["definitions", "parameters", "responses"];

/// Nesting below a deferred entry up to which it is deferred; deeper, the whole document
/// is parsed as before (serde_json stops at 128 levels, counted from the root).
const MAX_NESTING: usize = 100;

/// The deferred parts of one document, by where they stand.
#[derive(Debug, Default)]
pub struct Deferred {
    /// Keys of the root object.
    top: HashMap<String, Lazy>,
    /// `components` sections, by section and then by name.
    components: HashMap<String, HashMap<String, Lazy>>,
    /// Entries of `paths`, by key; each has a `null` in the skeleton's `paths`.
    paths: HashMap<String, Lazy>,
    /// Entries of the root's [`ROOT_SECTIONS`], by section and then by name.
    sections: HashMap<String, HashMap<String, Lazy>>,
}

/// One deferred value: its minified text until it is first asked for, then the value.
#[derive(Debug)]
struct Lazy {
    text: Mutex<Option<Box<str>>>,
    value: OnceLock<Option<Value>>,
    /// While the document is read: which of the texts read is this value's (see [`parse`]).
    raw: usize,
}

impl Lazy {
    fn new(text: String) -> Lazy {
        Lazy {
            text: Mutex::new(Some(text.into_boxed_str())),
            value: OnceLock::new(),
            raw: 0,
        }
    }

    /// A value whose text is the `raw`th read, not yet checked.
    fn unchecked(raw: usize) -> Lazy {
        Lazy {
            text: Mutex::new(None),
            value: OnceLock::new(),
            raw,
        }
    }

    /// Takes `raw` (this value's text as read, [`accepted`]) minified; whether it names
    /// another document.
    fn keep(&self, raw: &str) -> Option<bool> {
        let text = minified(raw);
        let other = names_another_document(&text);
        *self.text.lock().ok()? = Some(text.into_boxed_str());
        Some(other)
    }

    /// The value, parsed on the first call; its text is dropped then.
    fn get(&self) -> Option<&Value> {
        self.value
            .get_or_init(|| built(&self.text.lock().ok()?.take()?))
            .as_ref()
    }

    /// The value, parsed anew from the text and owned by the caller, or borrowed if a
    /// [`Lazy::get`] has parsed it already.
    fn copy(&self) -> Option<Cow<'_, Value>> {
        if let Some(value) = self.value.get() {
            return value.as_ref().map(Cow::Borrowed);
        }
        let text = self.text.lock().ok()?;
        match text.as_deref() {
            Some(text) => built(text).map(Cow::Owned),
            None => {
                drop(text);
                self.get().map(Cow::Borrowed)
            }
        }
    }
}

/// `text` built as the whole parse builds a value.
fn built(text: &str) -> Option<Value> {
    let mut pending = Pending::new(u64::MAX, u64::MAX);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    CompactSeed(&mut pending)
        .deserialize(&mut deserializer)
        .ok()
}

impl Deferred {
    /// Whether nothing was deferred.
    pub fn is_empty(&self) -> bool {
        self.top.is_empty()
            && self.components.is_empty()
            && self.paths.is_empty()
            && self.sections.is_empty()
    }

    /// The deferred value `name` under the (decoded) pointer segments `parents`, if one is
    /// deferred there: a root key (no parents), an entry of `components/SECTION`, of
    /// `paths` or of a root section (`definitions`). A path item is kept parsed from then on.
    pub fn get(&self, parents: &[String], name: &str) -> Option<&Value> {
        let lazy = match parents {
            [] => self.top.get(name),
            [paths] if paths == "paths" => self.paths.get(name),
            [section] => self.sections.get(section)?.get(name),
            [components, section] if components == "components" => {
                self.components.get(section)?.get(name)
            }
            _ => None,
        }?;
        lazy.get()
    }

    /// The path item deferred under `key` of `paths`, if it is: parsed for the caller,
    /// who drops it when done (or borrowed, when a `$ref` has parsed it for good).
    pub fn path_item(&self, key: &str) -> Option<Cow<'_, Value>> {
        self.paths.get(key)?.copy()
    }

    /// Every deferred value.
    fn all(&self) -> impl Iterator<Item = &Lazy> {
        let sections = self.components.values().chain(self.sections.values());
        self.top
            .values()
            .chain(self.paths.values())
            .chain(sections.flat_map(HashMap::values))
    }
}

/// Like [`parse_document_within`], with what a JSON document's tools may never need kept as
/// text; YAML, and JSON this module gives up on, are parsed whole (with the same errors).
pub fn parse_document(
    name: &str,
    bytes: &[u8],
    allowance: &mut Allowance,
) -> Result<(Value, Deferred), SpecError> {
    if detect_format(bytes) == Format::Json {
        let json = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        if let Some(parsed) = parse(json) {
            return Ok(parsed);
        }
    }
    parse_document_within(name, bytes, allowance).map(|value| (value, Deferred::default()))
}

/// Parses a JSON document (without its byte-order mark) into the root's skeleton and what
/// was deferred, or `None` when the caller should parse it whole (see the module's docs).
///
/// The document is read once, each deferred entry kept as the text it was read as; then
/// every entry is checked on every core (a pass over the whole text again: done as the
/// document was read, it was about half of what GitHub's start spent on one core), and
/// minified on this thread (quick; minified on the other threads, the texts would live in
/// their allocators' pages). An entry that names another document is built at once, and
/// where it stands decides what the skeleton holds; a document with one is read again, an
/// entry at a time, as before (such documents are few and small).
fn parse(bytes: &[u8]) -> Option<(Value, Deferred)> {
    let mut raws = Vec::new();
    let (root, deferred) = read(bytes, Some(&mut raws))?;
    let accepted = crate::parallel::on_all_cores(&raws, |raw| accepted(raw));
    if accepted.contains(&false) {
        return None;
    }
    let mut names_another = false;
    for lazy in deferred.all() {
        names_another |= lazy.keep(raws.get(lazy.raw)?)?;
    }
    match names_another {
        false => Some((root, deferred)),
        true => read(bytes, None),
    }
}

/// Reads the document with what can be deferred deferred: each entry checked, minified and
/// built if it names another document, or, with `raws`, kept as read (its text pushed on
/// `raws`) for [`parse`] to check.
fn read<'de>(bytes: &'de [u8], raws: Option<&mut Vec<&'de str>>) -> Option<(Value, Deferred)> {
    let mut pending = Pending::new(u64::MAX, u64::MAX);
    let mut deferred = Deferred::default();
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let root = Level {
        pending: &mut pending,
        deferred: &mut deferred,
        raws,
        at: At::Root,
    }
    .deserialize(&mut deserializer)
    .ok()?;
    deserializer.end().ok()?;
    Some((root, deferred))
}

/// An object read by [`Level`]: the root, `paths`, `components` or one of its sections,
/// or one of the root's [`ROOT_SECTIONS`].
#[derive(Clone, Copy)]
enum At<'p> {
    Root,
    Paths,
    Components,
    Section(&'p str),
    RootSection(&'p str),
}

/// One object whose entries may be deferred, read at `at`; with `raws`, their texts are
/// kept there as read, unchecked (see [`read`]).
struct Level<'p, 'de> {
    pending: &'p mut Pending,
    deferred: &'p mut Deferred,
    raws: Option<&'p mut Vec<&'de str>>,
    at: At<'p>,
}

impl<'de> DeserializeSeed<'de> for Level<'_, 'de> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// What is done with the value of a key at a [`Level`].
enum Read {
    /// Built now, as the whole parse builds it.
    Build,
    /// `paths`: its path items read as a level of their own.
    Paths,
    /// `components`: its sections read as levels of their own.
    Components,
    /// A section of `components`.
    Section,
    /// One of the root's [`ROOT_SECTIONS`].
    RootSection,
    /// Kept as text.
    Defer,
}

impl Level<'_, '_> {
    fn read(&self, key: &str) -> Read {
        match self.at {
            At::Root if key == "components" => Read::Components,
            At::Root if key == "paths" => Read::Paths,
            At::Root if ROOT_SECTIONS.contains(&key) => Read::RootSection,
            At::Root
                if key == "webhooks" || (key.starts_with("x-") && !key.starts_with("x-mcp")) =>
            {
                Read::Defer
            }
            At::Root => Read::Build,
            At::Components if SECTIONS.contains(&key) => Read::Section,
            At::Components => Read::Build,
            At::Paths | At::Section(_) | At::RootSection(_) => Read::Defer,
        }
    }

    /// The entries deferred at this level (none for `components` itself).
    fn slots(&mut self) -> Option<&mut HashMap<String, Lazy>> {
        match self.at {
            At::Root => Some(&mut self.deferred.top),
            At::Paths => Some(&mut self.deferred.paths),
            At::Components => None,
            At::Section(section) => Some(
                self.deferred
                    .components
                    .entry(section.to_string())
                    .or_default(),
            ),
            At::RootSection(section) => Some(
                self.deferred
                    .sections
                    .entry(section.to_string())
                    .or_default(),
            ),
        }
    }
}

impl<'de> Visitor<'de> for Level<'_, 'de> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let mut object: Map<String, Value> = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match self.read(&key) {
                Read::Build => map.next_value_seed(CompactSeed(&mut *self.pending))?,
                read @ (Read::Paths | Read::Components | Read::Section | Read::RootSection) => {
                    // A repeated `paths`, `components` or section replaces the earlier one
                    // whole.
                    let at = match read {
                        Read::RootSection => {
                            self.deferred.sections.remove(&key);
                            At::RootSection(key.as_str())
                        }
                        Read::Paths => {
                            self.deferred.paths.clear();
                            At::Paths
                        }
                        Read::Components => {
                            self.deferred.components.clear();
                            At::Components
                        }
                        _ => {
                            self.deferred.components.remove(&key);
                            At::Section(key.as_str())
                        }
                    };
                    map.next_value_seed(Level {
                        pending: &mut *self.pending,
                        deferred: &mut *self.deferred,
                        raws: self.raws.as_deref_mut(),
                        at,
                    })?
                }
                Read::Defer => {
                    let raw: &'de RawValue = map.next_value()?;
                    let not_deferred = || serde::de::Error::custom("not deferred");
                    // Kept as read for `parse` to check; else checked now, and built now
                    // if it names another document.
                    let deferred = match self.raws.as_deref_mut() {
                        Some(raws) => {
                            raws.push(raw.get());
                            Ok(Lazy::unchecked(raws.len() - 1))
                        }
                        None => {
                            let text = checked_text(raw.get()).ok_or_else(not_deferred)?;
                            match names_another_document(&text) {
                                false => Ok(Lazy::new(text)),
                                true => Err(text),
                            }
                        }
                    };
                    match deferred {
                        Ok(lazy) => {
                            // A path item keeps its place (and a repeated key its first one).
                            match self.at {
                                At::Paths => {
                                    object.insert(key.clone(), Value::Null);
                                }
                                _ => {
                                    object.shift_remove(&key);
                                }
                            }
                            if let Some(slots) = self.slots() {
                                slots.insert(key, lazy);
                            }
                            continue;
                        }
                        Err(text) => built(&text).ok_or_else(not_deferred)?,
                    }
                }
            };
            if let Some(slots) = self.slots() {
                slots.remove(&key);
            }
            // A repeated key keeps its first position and takes the last value, as the
            // whole parse does.
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// `text` (one JSON value, already checked for syntax) minified, if the whole parse would
/// accept it: every string and number valid, nesting within [`MAX_NESTING`].
fn checked_text(text: &str) -> Option<String> {
    accepted(text).then(|| minified(text))
}

/// Whether the whole parse would accept `text` (one JSON value, already checked for
/// syntax): every string and number valid, nesting within [`MAX_NESTING`].
fn accepted(text: &str) -> bool {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Check(0).deserialize(&mut deserializer).is_ok()
}

/// `text` without the whitespace between its tokens. Copied a run at a time, from one
/// whitespace byte to the next outside strings; a string is skipped to its closing quote
/// with `memchr`. Structural characters and whitespace are ASCII, which no byte of a
/// multi-byte UTF-8 character is, so every cut falls on a character boundary. (A character
/// at a time, this took a quarter of the 0.19 s it takes to read Microsoft Graph beta's
/// 47 MB, which are already minified.)
fn minified(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut at, mut run) = (0, 0);
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => at = string_end(bytes, at + 1),
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.push_str(&text[run..at]);
                at += 1;
                run = at;
            }
            _ => at += 1,
        }
    }
    out.push_str(&text[run..]);
    out
}

/// Where the string whose contents start at `at` ends: just past its closing quote (the
/// end of `bytes` if it has none).
fn string_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        at += found;
        match bytes[at] {
            b'\\' => at += 2,
            _ => return at + 1,
        }
    }
    bytes.len()
}

/// Whether minified `text` may hold a `$ref` to another document: a `$ref` whose value does
/// not start with `#`, or an escape, which could spell `$ref` or its value otherwise.
fn names_another_document(text: &str) -> bool {
    text.contains("\\u")
        || text
            .match_indices("\"$ref\":\"")
            .any(|(at, found)| !text[at + found.len()..].starts_with('#'))
}

/// Visits a value as the whole parse would, building nothing; the number is the nesting.
struct Check(usize);

impl<'de> DeserializeSeed<'de> for Check {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while seq.next_element_seed(Check(inner))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while map.next_key_seed(Check(inner))?.is_some() {
            map.next_value_seed(Check(inner))?;
        }
        Ok(())
    }
}

impl Check {
    fn deeper<E: serde::de::Error>(self) -> Result<usize, E> {
        match self.0 < MAX_NESTING {
            true => Ok(self.0 + 1),
            false => Err(E::custom("nested too deeply to defer")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> Value {
        serde_json::from_str(text).expect("valid json")
    }

    #[test]
    fn deferred_entries_parse_to_what_the_whole_parse_builds() {
        let text = r##"{
            "openapi": "3.1.0",
            "paths": {"/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/ok"}}}}},
            "components": {
                "schemas": {"Pet": {"type": "object", "properties": {"n": {"type": "number", "maximum": 1.5e300}}},
                            "Odd": {"description": "a \" quote, a \\ and a \n line"}},
                "responses": {"ok": {"description": "fine"}},
                "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "k"}}
            },
            "x-webhooks": {"w": [1, 2, {"deep": [true, null]}]},
            "x-mcp-prompts": {}
        }"##;
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        let expected = whole(text);
        assert_eq!(
            root["components"]["securitySchemes"],
            expected["components"]["securitySchemes"]
        );
        assert_eq!(root["components"]["schemas"], serde_json::json!({}));
        assert_eq!(root["x-mcp-prompts"], expected["x-mcp-prompts"]);
        assert!(root.get("x-webhooks").is_none());
        let components = ["components".to_string(), "schemas".to_string()];
        assert_eq!(
            deferred.get(&components, "Pet"),
            Some(&expected["components"]["schemas"]["Pet"])
        );
        assert_eq!(
            deferred.get(&components, "Odd"),
            Some(&expected["components"]["schemas"]["Odd"])
        );
        assert_eq!(deferred.get(&components, "Gone"), None);
        assert_eq!(
            deferred.get(&[], "x-webhooks"),
            Some(&expected["x-webhooks"])
        );
        assert_eq!(deferred.get(&[], "paths"), None);
    }

    #[test]
    fn minified_text_drops_whitespace_between_tokens_only() {
        let text =
            "{ \"a b\" :\t[ 1 ,\r\n \"x \\\" \\\\ y\" ] ,\n \"é ü\": \"日本 語\", \"t\" : true }";
        let out = minified(text);
        assert_eq!(
            out,
            "{\"a b\":[1,\"x \\\" \\\\ y\"],\"é ü\":\"日本 語\",\"t\":true}"
        );
        assert_eq!(whole(&out), whole(text));
        assert_eq!(minified(&out), out, "minified text is left as it is");
        assert_eq!(
            minified(" \"open \\"),
            "\"open \\",
            "an unclosed string ends the text"
        );
    }

    #[test]
    fn what_names_another_document_is_built_at_once() {
        let text = r##"{"components": {"schemas": {
            "Local": {"$ref": "#/components/schemas/Other"},
            "Far": {"items": {"$ref": "other.json#/Pet"}},
            "Escaped": {"$ref": "\u0023/x"}
        }}}"##;
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        let schemas = &root["components"]["schemas"];
        assert!(schemas.get("Local").is_none());
        assert_eq!(schemas["Far"], whole(text)["components"]["schemas"]["Far"]);
        assert!(schemas.get("Escaped").is_some());
        let parents = ["components".to_string(), "schemas".to_string()];
        assert!(deferred.get(&parents, "Local").is_some());
        assert!(deferred.get(&parents, "Far").is_none());
    }

    #[test]
    fn a_repeated_key_takes_its_last_value() {
        let text = r##"{"components": {"schemas": {"A": {"v": 1}, "A": {"$ref": "b.json"}, "B": {"$ref": "b.json"}, "B": {"v": 2}}}}"##;
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        let parents = ["components".to_string(), "schemas".to_string()];
        assert_eq!(
            root["components"]["schemas"]["A"],
            serde_json::json!({"$ref": "b.json"})
        );
        assert!(deferred.get(&parents, "A").is_none());
        assert!(root["components"]["schemas"].get("B").is_none());
        assert_eq!(
            deferred.get(&parents, "B"),
            Some(&serde_json::json!({"v": 2}))
        );
    }

    #[test]
    fn path_items_keep_their_place_and_parse_to_what_the_whole_parse_builds() {
        let text = r##"{"paths": {
            "/b": {"get": {"summary": "first"}},
            "/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/ok"}}}},
            "/far": {"$ref": "other.json#/item"},
            "x-note": [1],
            "/b": {"get": {"summary": "second"}}
        }}"##;
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        let expected = whole(text);
        let keys: Vec<&String> = root["paths"].as_object().expect("paths").keys().collect();
        assert_eq!(keys, ["/b", "/a", "/far", "x-note"]);
        assert!(root["paths"]["/a"].is_null() && root["paths"]["/b"].is_null());
        assert_eq!(root["paths"]["/far"], expected["paths"]["/far"]);
        assert!(deferred.path_item("/far").is_none());
        for key in ["/a", "/b", "x-note"] {
            let item = deferred.path_item(key).expect("deferred");
            assert!(matches!(item, Cow::Owned(_)), "parsed for the caller");
            assert_eq!(*item, expected["paths"][key], "{key}");
        }
        let paths = ["paths".to_string()];
        assert_eq!(deferred.get(&paths, "/a"), Some(&expected["paths"]["/a"]));
        let kept = deferred.path_item("/a").expect("kept");
        assert!(
            matches!(kept, Cow::Borrowed(_)),
            "a $ref parsed it for good"
        );
        assert_eq!(*kept, expected["paths"]["/a"]);
    }

    #[test]
    fn swagger_definitions_parameters_and_responses_are_deferred_by_entry() {
        let text = r##"{"swagger": "2.0",
            "definitions": {"Pet": {"type": "object"}, "Far": {"$ref": "other.json#/Pet"}},
            "parameters": {"limit": {"name": "limit", "in": "query", "type": "integer"}},
            "responses": {"gone": {"description": "gone"}},
            "securityDefinitions": {"key": {"type": "apiKey", "in": "header", "name": "k"}}
        }"##;
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        let expected = whole(text);
        assert_eq!(root["securityDefinitions"], expected["securityDefinitions"]);
        assert_eq!(
            root["definitions"],
            serde_json::json!({"Far": {"$ref": "other.json#/Pet"}})
        );
        assert_eq!(root["parameters"], serde_json::json!({}));
        for (section, name) in [
            ("definitions", "Pet"),
            ("parameters", "limit"),
            ("responses", "gone"),
        ] {
            assert_eq!(
                deferred.get(&[section.to_string()], name),
                Some(&expected[section][name]),
                "{section}/{name}"
            );
        }
        assert_eq!(deferred.get(&["definitions".to_string()], "Far"), None);
    }

    #[test]
    fn the_unusual_is_left_to_the_whole_parse() {
        for text in [
            "[1]",
            r##"{"components": []}"##,
            r##"{"components": {"schemas": 1}}"##,
            r##"{"paths": []}"##,
            r##"{"paths": {"/a": {"get": {"responses": {},}}}}"##,
            r##"{"components": {"schemas": {"A": [1,]}}}"##,
            r##"{"components": {"schemas": {"A": {"n": 1e999}}}}"##,
            r##"{"components": {"schemas": {"A": "\ud800"}}}"##,
            r##"{"a": 1} x"##,
        ] {
            assert!(parse(text.as_bytes()).is_none(), "{text}");
        }
        let deep = format!("{{\"x-deep\": {}{}}}", "[".repeat(120), "]".repeat(120));
        assert!(parse(deep.as_bytes()).is_none());
    }

    /// Enough entries that they are checked on every core: each still parses to what the
    /// whole parse builds, and one the whole parse refuses, or one naming another
    /// document, among them is found as with a few.
    #[test]
    fn many_entries_are_checked_on_every_core_as_one_is() {
        let schema = |i: usize| {
            format!(
                "\"S{i}\": {{ \"type\" : \"object\",\n  \"properties\": {{ \"n{i}\": {{\"maximum\": {i}.5}} }} }}"
            )
        };
        let document = |extra: &str| {
            let schemas: Vec<String> = (0..300).map(schema).collect();
            let items: Vec<String> = (0..300)
                .map(|i| format!("\"/p{i}\": {{\"get\": {{\"summary\": \"item {i}\"}}}}"))
                .collect();
            format!(
                "{{\"paths\": {{ {} }},\n \"components\": {{\"schemas\": {{ {}{extra} }} }} }}",
                items.join(",\n"),
                schemas.join(",\n")
            )
        };
        let text = document("");
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        let expected = whole(&text);
        let parents = ["components".to_string(), "schemas".to_string()];
        for i in [0, 150, 299] {
            let name = format!("S{i}");
            assert_eq!(
                deferred.get(&parents, &name),
                Some(&expected["components"]["schemas"][&name])
            );
            let path = format!("/p{i}");
            assert!(root["paths"][&path].is_null());
            let item = deferred.path_item(&path).expect("deferred");
            assert_eq!(*item, expected["paths"][&path]);
        }
        let text = document(", \"Bad\": {\"n\": 1e999}");
        assert!(
            parse(text.as_bytes()).is_none(),
            "the whole parse refuses it"
        );
        let text = document(", \"Far\": {\"$ref\": \"other.json#/Pet\"}");
        let (root, deferred) = parse(text.as_bytes()).expect("deferred");
        assert_eq!(
            root["components"]["schemas"]["Far"],
            serde_json::json!({"$ref": "other.json#/Pet"}),
            "built at once"
        );
        assert!(deferred.get(&parents, "Far").is_none());
        assert!(deferred.get(&parents, "S7").is_some());
    }
}
