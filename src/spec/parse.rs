//! Bytes to `serde_json::Value`: JSON or YAML, told apart by content rather than file name.
//!
//! Errors carry the document's name and the line and column the parser reports, because
//! a user fixing a 10 MB spec needs to know where to look (for a document a spec merely
//! references, only those: the parser's message could quote it). YAML alias expansion is
//! charged to one [`Allowance`] shared by all documents of a load, in values and in bytes:
//! a few aliases of one large scalar cost as much as they expand to.

use serde::Deserialize as _;
use serde_json::Value;

use super::SpecError;

/// The serialization a document was written in, detected from its first meaningful byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// JSON documents start with `{` or `[` once whitespace and a byte-order mark are skipped;
/// everything else is treated as YAML (a superset of JSON, so a mistake here still parses).
pub fn detect_format(bytes: &[u8]) -> Format {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') | Some(b'[') => Format::Json,
        _ => Format::Yaml,
    }
}

/// Parses a document; `name` is what errors call it (a path or URL).
pub fn parse_document(name: &str, bytes: &[u8]) -> Result<Value, SpecError> {
    parse_document_within(name, bytes, &mut Allowance::default())
}

/// What the documents of one load may still cost, shared by all of them: a YAML alias
/// bomb split over many small files is bounded by the sum, not once per file.
#[derive(Debug, Clone)]
pub struct Allowance {
    /// Values that YAML aliases may still add (beyond those the text spells out).
    pub alias_values: u64,
    /// Bytes that YAML aliases may still add (strings and keys, and [`VALUE_BYTES`] a
    /// value), beyond what the text spells out: `loading.max_api_bytes`.
    pub alias_bytes: u64,
    /// Whether syntax errors may quote the parser's message. Off for documents a spec
    /// references: a message can quote what it could not parse, and such a document may
    /// be something that is not a spec at all.
    pub quote: bool,
}

/// The default of `loading.max_yaml_alias_values`.
pub const DEFAULT_ALIAS_VALUES: u64 = crate::config::DEFAULT_MAX_YAML_ALIAS_VALUES;

impl Default for Allowance {
    fn default() -> Self {
        Allowance {
            alias_values: DEFAULT_ALIAS_VALUES,
            alias_bytes: crate::config::DEFAULT_MAX_API_BYTES,
            quote: true,
        }
    }
}

/// Like [`parse_document`], charging YAML alias expansion to `allowance`.
pub fn parse_document_within(
    name: &str,
    bytes: &[u8],
    allowance: &mut Allowance,
) -> Result<Value, SpecError> {
    let result = match detect_format(bytes) {
        Format::Json => parse_json::<Compact>(name, bytes).map(|Compact(value)| value),
        Format::Yaml => parse_yaml_counted(name, bytes, allowance),
    };
    result.map_err(|error| match error {
        SpecError::Syntax {
            file,
            format,
            line,
            column,
            message,
        } if !allowance.quote
            && !message.contains("loading.max_yaml_alias_values")
            && !message.contains("loading.max_api_bytes") =>
        {
            SpecError::Syntax {
                file,
                format,
                line,
                column,
                message: "the parser's message is not shown for a referenced document".into(),
            }
        }
        other => other,
    })
}

/// A `Value` whose arrays and maps are allocated at their final length.
///
/// `Value`'s own deserializer grows each array and map by doubling as entries arrive, so a
/// third of a parsed document is spare room (GitHub's spec: 51 MB parsed, 35 MB exact),
/// held through all of synthesis. Here the entries of every open array and map wait on
/// one shared stack and are moved into an exactly sized one when it closes; shrinking
/// afterwards instead was measured to raise peak RSS, as the freed blocks stayed mapped.
/// Otherwise it builds the same `Value` as `Value::deserialize`.
struct Compact(Value);

impl<'de> serde::Deserialize<'de> for Compact {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut pending = Pending::new(u64::MAX, u64::MAX);
        serde::de::DeserializeSeed::deserialize(CompactSeed(&mut pending), deserializer)
            .map(Compact)
    }
}

/// Entries of the arrays and maps still being read, innermost last, and the count of
/// values (map keys included) and of their bytes built so far, each against a limit.
pub(super) struct Pending {
    items: Vec<Value>,
    entries: Vec<(String, Value)>,
    values: u64,
    limit: u64,
    bytes: u64,
    byte_limit: u64,
}

/// What one value costs besides its text, as the expanded size counts it: about what a
/// `Value` and its slot in an array or map take.
pub const VALUE_BYTES: u64 = 48;

impl Pending {
    pub(super) fn new(limit: u64, byte_limit: u64) -> Pending {
        Pending {
            items: Vec::new(),
            entries: Vec::new(),
            values: 0,
            limit,
            bytes: 0,
            byte_limit,
        }
    }

    fn count<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.values += 1;
        if self.values > self.limit {
            return Err(E::custom(ALIAS_LIMIT_MESSAGE));
        }
        self.charge(VALUE_BYTES)
    }

    /// Counts `bytes` of text (a string or a key).
    fn charge<E: serde::de::Error>(&mut self, bytes: u64) -> Result<(), E> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.byte_limit {
            return Err(E::custom(ALIAS_BYTES_MESSAGE));
        }
        Ok(())
    }
}

const ALIAS_LIMIT_MESSAGE: &str = "YAML aliases expand to more values than \
    loading.max_yaml_alias_values allows for one API's documents together";

const ALIAS_BYTES_MESSAGE: &str = "YAML aliases expand to more bytes than \
    loading.max_api_bytes allows for one API's documents together";

pub(super) struct CompactSeed<'p>(pub(super) &'p mut Pending);

impl<'de> serde::de::DeserializeSeed<'de> for CompactSeed<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.0.count::<D::Error>()?;
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for CompactSeed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_i128<E: serde::de::Error>(self, value: i128) -> Result<Value, E> {
        Value::deserialize(serde::de::value::I128Deserializer::new(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u128<E: serde::de::Error>(self, value: u128) -> Result<Value, E> {
        Value::deserialize(serde::de::value::U128Deserializer::new(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Value, E> {
        self.0.charge::<E>(value.len() as u64)?;
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Value, E> {
        self.0.charge::<E>(value.len() as u64)?;
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, deserializer)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let pending = self.0;
        let start = pending.items.len();
        while let Some(item) = seq.next_element_seed(CompactSeed(&mut *pending))? {
            pending.items.push(item);
        }
        let mut items = Vec::with_capacity(pending.items.len() - start);
        items.extend(pending.items.drain(start..));
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let pending = self.0;
        let start = pending.entries.len();
        while let Some(key) = map.next_key::<String>()? {
            pending.count::<A::Error>()?;
            pending.charge::<A::Error>(key.len() as u64)?;
            let value = map.next_value_seed(CompactSeed(&mut *pending))?;
            pending.entries.push((key, value));
        }
        // A repeated key keeps its first position and takes the last value, as with
        // `Map::insert`.
        Ok(Value::Object(pending.entries.drain(start..).collect()))
    }
}

/// Parses a document straight into `T` (for restmcp's own files), with the same errors.
pub fn parse_typed<T: serde::de::DeserializeOwned>(
    name: &str,
    bytes: &[u8],
) -> Result<T, SpecError> {
    match detect_format(bytes) {
        Format::Json => parse_json(name, bytes),
        Format::Yaml => parse_yaml(name, bytes),
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, SpecError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    serde_json::from_slice(bytes).map_err(|e| SpecError::Syntax {
        file: name.to_string(),
        format: "JSON",
        line: e.line() as u64,
        column: e.column() as u64,
        message: without_quoted_content(&strip_json_position(&e.to_string())),
    })
}

/// A parser's message without the content of the document it may quote: a string value
/// (`string "…"`) becomes `a string`, and a name in backticks stays only when it looks like
/// a name (`unknown field `tols``), else it becomes `…`. The document may be a file that is
/// not what it was named as (an `overlays` entry pointing at `/etc/shadow`), and its content
/// must not reach a terminal or a log through an error; the file, line and column say where.
fn without_quoted_content(message: &str) -> String {
    const STRING: &str = "string \"";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    loop {
        let string_at = rest.find(STRING);
        let tick_at = rest.find('`');
        match (string_at, tick_at) {
            (Some(at), tick) if tick.is_none_or(|tick| at < tick) => {
                out.push_str(&rest[..at]);
                out.push_str("a string");
                // Skip to the closing quote; the value is Debug-escaped (`\"` inside).
                let value = &rest[at + STRING.len()..];
                let mut escaped = false;
                let end = value.char_indices().find(|&(_, c)| {
                    let closing = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    closing
                });
                rest = end.map_or("", |(i, _)| &value[i + 1..]);
            }
            (_, Some(at)) => {
                out.push_str(&rest[..at]);
                let quoted = &rest[at + 1..];
                let Some(end) = quoted.find('`') else {
                    out.push_str("`…`");
                    break;
                };
                if is_name_like(&quoted[..end]) {
                    out.push_str(&rest[at..at + end + 2]);
                } else {
                    out.push_str("`…`");
                }
                rest = &quoted[end + 1..];
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}

/// A key as specs and overlays spell them: short, no spaces, not starting with a digit,
/// without `:` or `=` (which a line of a password or environment file has).
fn is_name_like(text: &str) -> bool {
    text.len() <= 64
        && text.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.$/{}@~".contains(c))
}

/// serde_json appends " at line L column C" to its messages; we print the position ourselves.
fn strip_json_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn yaml_text<'b>(name: &str, bytes: &'b [u8]) -> Result<&'b str, SpecError> {
    std::str::from_utf8(bytes).map_err(|e| SpecError::Syntax {
        file: name.to_string(),
        format: "YAML",
        line: 0,
        column: 0,
        message: format!("not valid UTF-8 (byte {})", e.valid_up_to()),
    })
}

fn yaml_error(name: &str, e: &serde_saphyr::Error) -> SpecError {
    let (line, column) = e
        .location()
        .map(|l| (l.line(), l.column()))
        .unwrap_or((0, 0));
    let text = e.to_string();
    let message = if text.contains(ALIAS_BYTES_MESSAGE) {
        ALIAS_BYTES_MESSAGE.to_string()
    } else if text.contains(ALIAS_LIMIT_MESSAGE) || text.contains("alias replay") {
        ALIAS_LIMIT_MESSAGE.to_string()
    } else {
        first_line(&text)
    };
    SpecError::Syntax {
        file: name.to_string(),
        format: "YAML",
        line,
        column,
        message,
    }
}

fn parse_yaml<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, SpecError> {
    serde_saphyr::from_str_with_options(yaml_text(name, bytes)?, yaml_options(DEFAULT_ALIAS_VALUES))
        .map_err(|e| yaml_error(name, &e))
}

/// A YAML document as a [`Value`], with the values and bytes its aliases add beyond what its
/// text spells out taken from `allowance`: the values, the expanded total less the nodes of
/// the text (counted by a scan that expands nothing); the bytes, the expanded size less the
/// most the text's own nodes can take (its length and [`VALUE_BYTES`] a node). Without both
/// `&` and `*` in the text there can be no alias, and the scan is skipped.
fn parse_yaml_counted(
    name: &str,
    bytes: &[u8],
    allowance: &mut Allowance,
) -> Result<Value, SpecError> {
    let text = yaml_text(name, bytes)?;
    let spelled = (bytes.contains(&b'*') && bytes.contains(&b'&'))
        .then(|| {
            serde_saphyr::budget::check_yaml_budget(
                text,
                yaml_budget(),
                serde_saphyr::budget::EnforcingPolicy::AllContent,
            )
            .ok()
            .map(|report| report.nodes as u64)
        })
        .flatten();
    let limit = spelled.map_or(u64::MAX, |nodes| {
        nodes.saturating_add(allowance.alias_values)
    });
    let spelled_bytes =
        spelled.map(|nodes| (text.len() as u64).saturating_add(nodes.saturating_mul(VALUE_BYTES)));
    let byte_limit =
        spelled_bytes.map_or(u64::MAX, |most| most.saturating_add(allowance.alias_bytes));
    let mut pending = Pending::new(limit, byte_limit);
    let value = serde_saphyr::with_deserializer_from_str_with_options(
        text,
        yaml_options(allowance.alias_values),
        |deserializer| {
            serde::de::DeserializeSeed::deserialize(CompactSeed(&mut pending), deserializer)
        },
    )
    .map_err(|e| yaml_error(name, &e))?;
    if let (Some(nodes), Some(most)) = (spelled, spelled_bytes) {
        allowance.alias_values = allowance
            .alias_values
            .saturating_sub(pending.values.saturating_sub(nodes));
        allowance.alias_bytes = allowance
            .alias_bytes
            .saturating_sub(pending.bytes.saturating_sub(most));
    }
    Ok(value)
}

fn first_line(message: &str) -> String {
    without_quoted_content(message.lines().next().unwrap_or(message).trim())
}

/// Machine-generated specs run to tens of MB; the default budget (a million events) is sized
/// for config files. Depth stays bounded so hostile input cannot exhaust the stack, and
/// booleans are YAML 1.2 (`no` is a string, as OpenAPI authors mean it in enums).
/// Alias replay is bounded by `alias_values` (each replayed value is at most two events,
/// its start and end); the error snippet, which quotes the text, is off.
fn yaml_options(alias_values: u64) -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(yaml_budget());
    options.strict_booleans = true;
    options.with_snippet = false;
    options.alias_limits.max_total_replayed_events =
        usize::try_from(alias_values.saturating_mul(2).saturating_add(2)).unwrap_or(usize::MAX);
    options
}

fn yaml_budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 200_000_000;
    budget.max_nodes = 100_000_000;
    budget.max_total_scalar_bytes = 1 << 30;
    budget.max_depth = 128;
    budget.max_documents = 1;
    budget
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_is_detected_from_content_not_name() {
        assert_eq!(detect_format(b"  \n{\"a\":1}"), Format::Json);
        assert_eq!(detect_format(b"\xEF\xBB\xBF[1]"), Format::Json);
        assert_eq!(detect_format(b"openapi: 3.0.0"), Format::Yaml);
        assert_eq!(detect_format(b""), Format::Yaml);
    }

    #[test]
    fn yaml_uses_strict_booleans_and_string_keys() {
        let v = parse_document(
            "t.yaml",
            b"enum: [yes, no]\nresponses:\n  200: {description: ok}\n",
        )
        .expect("valid yaml");
        assert_eq!(v["enum"], serde_json::json!(["yes", "no"]));
        assert!(v["responses"]["200"].is_object());
    }

    #[test]
    fn compact_parse_equals_value_parse() {
        let text = br#"{"z": 1, "a": [true, null, "s", {"y": 2.5, "b": -3}], "m": {}, "e": [],
            "big": 18446744073709551615, "dup": 1, "k": 0, "dup": 2}"#;
        let value = parse_document("t.json", text).expect("valid json");
        let expected: Value = serde_json::from_slice(text).expect("valid json");
        assert_eq!(value, expected);
        assert_eq!(
            serde_json::to_string(&value).expect("serializes"),
            serde_json::to_string(&expected).expect("serializes")
        );
        let yaml = b"z: 1\na: [true, ~, s, {y: 2.5, b: -3}]\nm: {}\n";
        let value = parse_document("t.yaml", yaml).expect("valid yaml");
        assert_eq!(
            serde_json::to_string(&value).expect("serializes"),
            r#"{"z":1,"a":[true,null,"s",{"y":2.5,"b":-3}],"m":{}}"#
        );
    }

    #[test]
    fn errors_do_not_quote_what_the_document_holds() {
        // A password file given where an overlay or spec was expected.
        let shadow = b"root:$6$Kq2sEcReT$x:19000:0:99999:7:::\n";
        let err =
            parse_typed::<std::collections::BTreeMap<String, u32>>("shadow", shadow).unwrap_err();
        assert!(!err.to_string().contains("Kq2sEcReT"), "{err}");
        let err = parse_typed::<std::collections::BTreeMap<String, u32>>(
            "key.yaml",
            b"sk_live_Kq2sEcReT\n",
        )
        .unwrap_err();
        assert!(!err.to_string().contains("Kq2sEcReT"), "{err}");
        let err = parse_typed::<std::collections::BTreeMap<String, u32>>(
            "key.json",
            b"{\"a\": \"Kq2sEcReT\"}",
        )
        .unwrap_err();
        assert!(!err.to_string().contains("Kq2sEcReT"), "{err}");
        assert!(err.to_string().starts_with("key.json:1:"), "{err}");
        assert_eq!(
            without_quoted_content(
                r#"invalid type: string "a \"b` c", expected `u32` at `tols`, not `PIN 1234`"#
            ),
            "invalid type: a string, expected `u32` at `tols`, not `…`"
        );
        // A name stays quoted: it is what a typo needs.
        assert_eq!(
            without_quoted_content("unknown field `tols`, expected `tools`"),
            "unknown field `tols`, expected `tools`"
        );
        assert_eq!(without_quoted_content("cut `short"), "cut `…`");
    }

    #[test]
    fn json_error_names_file_line_and_column() {
        let err = parse_document("api.json", b"{\n  \"a\": [1,\n}").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("api.json:3:1: invalid JSON:"), "{text}");
    }

    #[test]
    fn yaml_error_names_file_and_line() {
        let err = parse_document("api.yaml", b"openapi: 3.0.0\npaths:\n  /a: [\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("api.yaml:"), "{text}");
        assert!(text.contains("invalid YAML"), "{text}");
    }
}
