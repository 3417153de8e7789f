//! Properties, checked with proptest over generated inputs:
//! - any arguments valid for a tool build a request that an independent parser (the `url`
//!   crate, a split on the separators, `serde_json`) reads back to the same values in the
//!   same places;
//! - a path argument stays inside its segment, whatever it holds;
//! - synthesized tool names are valid MCP names and unique, whatever the spec calls its
//!   operations;
//! - restmcp's compact JSON writer writes what serde_json writes;
//! - an outputSchema checks a value on a tape (read from its text, or put on it from a
//!   tree) as it checks the tree, with the same violations;
//! - a text read onto a tape is JSON, the value serde_json reads, whatever byte is changed.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use percent_encoding::percent_decode_str;
use proptest::prelude::*;
use restmcp::catalog::{self, ApiInput, Catalog};
use restmcp::config::ToolSettings;
use restmcp::spec::DocumentSet;
use restmcp::upstream::request;
use restmcp::upstream::validate::Validators;
use serde_json::{Map, Value, json};

use crate::support::{assert_tools_are_valid, fixture, load_docs};

const BASE: &str = "http://127.0.0.1:9/base/v1";

fn echo() -> &'static (Catalog, Validators) {
    static ECHO: OnceLock<(Catalog, Validators)> = OnceLock::new();
    ECHO.get_or_init(|| {
        let docs = load_docs(&fixture("echo-api.yaml"));
        let input = ApiInput {
            base_url: Some(BASE),
            ..ApiInput::new("echo", Some(&docs))
        };
        let (catalog, _) = catalog::build(&[input], &ToolSettings::default()).expect("builds");
        let validators = Validators::new(catalog.len());
        (catalog, validators)
    })
}

/// Checks the arguments against the tool's inputSchema, then builds its request.
fn build(tool: &str, arguments: &Map<String, Value>) -> request::HttpRequest {
    try_build(tool, arguments).unwrap_or_else(|e| panic!("valid arguments build: {e}"))
}

fn try_build(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<request::HttpRequest, request::RequestError> {
    let (catalog, validators) = echo();
    let index = catalog.index_of(tool).expect("tool");
    let compiled = validators
        .get(index, &catalog.tools()[index])
        .expect("compiles");
    let violations = compiled.check_arguments(&Value::Object(arguments.clone()));
    assert!(
        violations.is_empty(),
        "generated arguments are valid: {violations:?}"
    );
    request::build(&catalog.tools()[index].route, arguments)
}

/// A path value that is empty or a dot segment: it would name another resource (servers
/// resolve dot segments, and an empty one merges two), so restmcp refuses it, naming the
/// argument, rather than send that request.
fn refused_segment(
    argument: &str,
    value: &str,
    tool: &str,
    arguments: &Map<String, Value>,
) -> bool {
    if !["", ".", ".."].contains(&value) {
        return false;
    }
    let error = try_build(tool, arguments).expect_err("refused").to_string();
    assert!(
        error.starts_with(&format!("argument \"{argument}\": "))
            && error.ends_with("it is a segment of the URL path"),
        "{error}"
    );
    true
}

fn decode(text: &str) -> String {
    percent_decode_str(text)
        .decode_utf8()
        .unwrap_or_else(|e| panic!("{text:?} decodes as UTF-8: {e}"))
        .into_owned()
}

/// The query as name → raw values, split on `&` and the first `=` before any decoding.
fn query_of(url: &url::Url) -> BTreeMap<String, Vec<String>> {
    let mut query: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in url
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        query
            .entry(decode(name))
            .or_default()
            .push(value.to_string());
    }
    query
}

/// Any text at all, weighted towards what breaks URLs.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z0-9 /?#&=%+.,;:@!$'()*\\[\\]~-]{0,12}",
        Just("..".to_string()),
        Just(".".to_string()),
        Just("%2e%2e".to_string()),
        Just("a/../../b".to_string()),
        Just("http://evil.example/".to_string()),
    ]
}

/// A header value: visible ASCII and inner spaces (what HTTP can carry as it is).
fn header_text() -> impl Strategy<Value = String> {
    "[!-~]([ -~]{0,20}[!-~])?"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn get_item_arguments_arrive_where_the_description_puts_them(
        id in text(),
        tags in prop::option::of(prop::collection::vec(text(), 0..4)),
        colors in prop::option::of(prop::collection::vec(text(), 1..4)),
        owner in prop::option::of(text()),
        year in prop::option::of(any::<i32>()),
        limit in prop::option::of(any::<i64>()),
        trace in prop::option::of(header_text()),
        session in prop::option::of(text()),
    ) {
        let mut arguments = Map::new();
        arguments.insert("id".into(), json!(id));
        if let Some(tags) = &tags { arguments.insert("tags".into(), json!(tags)); }
        if let Some(colors) = &colors { arguments.insert("colors".into(), json!(colors)); }
        let mut filter = Map::new();
        if let Some(owner) = &owner { filter.insert("owner".into(), json!(owner)); }
        if let Some(year) = year { filter.insert("year".into(), json!(year)); }
        if !filter.is_empty() { arguments.insert("filter".into(), Value::Object(filter)); }
        if let Some(limit) = limit { arguments.insert("limit".into(), json!(limit)); }
        if let Some(trace) = &trace { arguments.insert("X-Trace".into(), json!(trace)); }
        if let Some(session) = &session { arguments.insert("session".into(), json!(session)); }

        if refused_segment("id", &id, "getItem", &arguments) {
            return Ok(());
        }
        let built = build("getItem", &arguments);
        let url = url::Url::parse(&built.url).expect("an absolute URL");
        prop_assert_eq!(url.origin().ascii_serialization(), "http://127.0.0.1:9");
        // The path: the base, the literal segments, then the id as exactly one segment.
        let segments: Vec<&str> = url.path_segments().expect("segments").collect();
        prop_assert_eq!(&segments[..4], &["base", "v1", "echo", "items"]);
        prop_assert_eq!(segments.len(), 5, "{}", built.url);
        prop_assert_eq!(decode(segments[4]), id);

        let mut query = query_of(&url);
        let tags_sent: Vec<String> = query.remove("tags").unwrap_or_default().iter().map(|v| decode(v)).collect();
        prop_assert_eq!(tags_sent, tags.clone().unwrap_or_default());
        // explode: false: one value, the items joined by a literal comma (a comma inside
        // an item is encoded, so the split is unambiguous).
        let colors_sent: Option<Vec<String>> = query
            .remove("colors")
            .map(|values| values.concat().split(',').map(decode).collect());
        prop_assert_eq!(colors_sent, colors.clone());
        let owner_sent = query.remove("filter[owner]").map(|v| decode(&v.concat()));
        prop_assert_eq!(owner_sent, owner.clone());
        let year_sent = query.remove("filter[year]").map(|v| decode(&v.concat()));
        prop_assert_eq!(year_sent, year.map(|y| y.to_string()));
        let limit_sent = query.remove("limit").map(|v| decode(&v.concat()));
        prop_assert_eq!(limit_sent, limit.map(|l| l.to_string()));
        prop_assert!(query.is_empty(), "nothing else in the query: {:?}", query);

        let header = |name: &str| {
            built.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone())
        };
        prop_assert_eq!(header("X-Trace"), trace.clone());
        let cookie = header("Cookie").map(|c| {
            let (name, value) = c.split_once('=').expect("name=value");
            assert_eq!(name, "session");
            assert!(!value.contains([';', ' ', '"', ',']), "{value}");
            decode(value)
        });
        prop_assert_eq!(cookie, session.clone());
        prop_assert!(built.body.is_none());
    }

    #[test]
    fn update_item_arguments_arrive_in_the_path_and_the_json_body(
        id in any::<i64>(),
        name in any::<String>(),
        labels in prop::option::of(prop::collection::vec(any::<String>(), 0..4)),
    ) {
        let (catalog, _) = echo();
        let tool = catalog.get("updateItem").expect("updateItem");
        // The path id and the body's id share a name; the body's has its own argument.
        let path_id = tool
            .route
            .arguments
            .bindings
            .iter()
            .find(|b| b.location == restmcp::catalog::Location::Path)
            .map(|b| b.argument.clone())
            .expect("a path argument");
        let mut arguments = Map::new();
        arguments.insert(path_id, json!(id));
        arguments.insert("name".into(), json!(name));
        if let Some(labels) = &labels { arguments.insert("labels".into(), json!(labels)); }

        let built = build("updateItem", &arguments);
        let url = url::Url::parse(&built.url).expect("an absolute URL");
        prop_assert_eq!(url.path(), format!("/base/v1/echo/items/{id}"));
        prop_assert!(url.query().is_none());
        let content_type = built
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str());
        prop_assert_eq!(content_type, Some("application/json"));
        let body: Value = serde_json::from_slice(built.body.as_deref().expect("a body")).expect("JSON");
        let mut expected = json!({"name": name});
        if let Some(labels) = &labels { expected["labels"] = json!(labels); }
        prop_assert_eq!(body, expected);
    }

    #[test]
    fn a_file_path_argument_never_leaves_its_segment(path in text()) {
        let mut arguments = Map::new();
        arguments.insert("path".into(), json!(path));
        if refused_segment("path", &path, "getFile", &arguments) {
            return Ok(());
        }
        let built = build("getFile", &arguments);
        let url = url::Url::parse(&built.url).expect("an absolute URL");
        prop_assert_eq!(url.origin().ascii_serialization(), "http://127.0.0.1:9");
        let segments: Vec<&str> = url.path_segments().expect("segments").collect();
        prop_assert_eq!(segments.len(), 5, "{}", built.url);
        prop_assert_eq!(&segments[..4], &["base", "v1", "echo", "files"]);
        prop_assert_ne!(segments[4], "..");
        prop_assert_ne!(segments[4], ".");
        prop_assert_eq!(decode(segments[4]), path);
        prop_assert!(url.query().is_none() && url.fragment().is_none());
    }

    #[test]
    fn tool_names_are_valid_and_unique_whatever_the_operations_are_called(
        operations in prop::collection::vec(
            (
                prop::option::of(prop_oneof![any::<String>(), "[a-zA-Z_ .-]{0,80}", Just("".to_string()), Just("dup".to_string())]),
                "[a-z{}]{1,12}",
                prop::sample::select(vec!["get", "post", "put", "delete", "patch"]),
            ),
            1..12,
        ),
    ) {
        let mut paths = Map::new();
        for (index, (operation_id, path, method)) in operations.iter().enumerate() {
            let path = format!("/p{index}/{}", path.replace(['{', '}'], ""));
            let mut operation = json!({"responses": {"200": {"description": "ok"}}});
            if let Some(id) = operation_id {
                operation["operationId"] = json!(id);
            }
            paths.insert(path, json!({ *method: operation }));
        }
        let spec = json!({
            "openapi": "3.0.3",
            "info": {"title": "names", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9"}],
            "paths": paths,
        });
        let url = url::Url::parse("file:///names.json").expect("url");
        let docs = DocumentSet::single(url, "names.json".into(), spec);
        let (catalog, report) = catalog::build(&[ApiInput::new("names", Some(&docs))], &ToolSettings::default())
            .expect("builds");
        prop_assert_eq!(catalog.len() + report.skipped(), operations.len());
        prop_assert_eq!(report.skipped(), 0, "{}", report.render());
        // Valid (restmcp's rule: 1 to 64 of A-Z a-z 0-9 _ -) and unique, with the rest of
        // what every synthesized tool must be.
        assert_tools_are_valid(&catalog);
    }
}

/// Any JSON value: strings of any characters (control characters, quotes, backslashes,
/// astral planes), integers and floats across their whole range, nested arrays and
/// objects.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[\"\\\\a-z\\u{0}-\\u{1f}\\u{7f}é]{0,24}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::vec((any::<String>(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    /// restmcp's compact writer and its length count agree with serde_json byte for byte:
    /// schema texts, results and every size budget rely on it.
    #[test]
    fn compact_json_is_what_serde_json_writes(value in any_json()) {
        let theirs = serde_json::to_vec(&value).expect("a Value serializes");
        let mut ours = Vec::new();
        restmcp::json::write_compact(&mut ours, &value);
        prop_assert_eq!(&ours, &theirs);
        prop_assert_eq!(restmcp::json::compact_value_len(&value), theirs.len());
        prop_assert_eq!(restmcp::json::compact(&value).into_bytes(), theirs);
    }
}

/// Schemas that use most of JSON Schema's keywords, for the tape's check.
fn output_schemas() -> Vec<Value> {
    vec![
        json!({"type": "object", "required": ["id", "name"], "properties": {
            "id": {"type": "integer", "minimum": 0},
            "name": {"type": "string", "minLength": 1, "maxLength": 8},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "stock": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
        json!({"type": "object", "additionalProperties": false,
            "properties": {"a": {"enum": [1, "x", null, [1, 2]]}, "b": {"const": {"k": [true]}}},
            "minProperties": 1, "maxProperties": 2}),
        json!({"type": "object", "propertyNames": {"pattern": "^[a-c]+$"},
            "patternProperties": {"^a": {"type": ["integer", "null"]}},
            "dependentRequired": {"a": ["b"]}}),
        json!({"type": "object", "properties": {"result": {"type": "array",
            "prefixItems": [{"type": "integer"}], "items": {"type": "string"},
            "contains": {"const": "x"}, "minContains": 1, "maxItems": 4}}}),
        json!({"$defs": {"node": {"type": "object", "properties": {
                "id": {"type": "number", "multipleOf": 0.5},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node", "unevaluatedProperties": {"type": "string"}}),
        json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
            "not": {"required": ["name"], "properties": {"name": {"format": "email"}}},
            "if": {"properties": {"a": {"type": "integer"}}},
            "then": {"properties": {"b": {"exclusiveMaximum": 10}}},
            "else": {"properties": {"b": {"type": "string", "pattern": "^[a-z]*$"}}}}),
    ]
}

/// JSON values shaped like answers to `output_schemas`: few names, small numbers, short
/// strings, escapes among them.
fn answer_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..12).prop_map(Value::from),
        (-3.0f64..12.0).prop_map(|f| Value::from((f * 2.0).round() / 4.0)),
        "[a-cx\"\\\\\n@.é]{0,9}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let name = prop_oneof![
            Just("id"),
            Just("name"),
            Just("tags"),
            Just("stock"),
            Just("a"),
            Just("b"),
            Just("result"),
            Just("ab"),
            Just("z")
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((name, inner), 0..6).prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// Every violation of `instance` as the checks report them: the path and the message.
fn violations<'a, F: jsonschema::json::Json>(
    validator: &'a jsonschema::Validator<F>,
    instance: F::Node<'a>,
) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

proptest! {
    /// A value checked on a tape, read from its text or put on it from its tree, is valid
    /// exactly when the tree is, with the same violations, and reads back as the tree.
    #[test]
    fn an_answer_is_checked_on_a_tape_as_on_its_tree(value in answer_json()) {
        use restmcp::upstream::tape::{Tape, TapeJson};
        static COMPILED: OnceLock<Vec<(jsonschema::Validator, jsonschema::Validator<TapeJson>)>> =
            OnceLock::new();
        let compiled = COMPILED.get_or_init(|| {
            output_schemas()
                .iter()
                .map(|schema| {
                    let tree = jsonschema::draft202012::new(schema).expect("compiles");
                    let tape = jsonschema::options_for::<TapeJson>()
                        .with_draft(jsonschema::Draft::Draft202012)
                        .build(schema)
                        .expect("compiles");
                    (tree, tape)
                })
                .collect()
        });
        let text = value.to_string();
        let put = Tape::of(&value);
        prop_assert_eq!(&put.to_value(), &value);
        // Read from the text exactly when the text is the value as serde_json writes it
        // (what restmcp otherwise tells from the tree).
        let read = Tape::read_compact(&text);
        let as_read = restmcp::json::compact_as_read(text.as_bytes(), &value).is_some();
        prop_assert_eq!(read.is_some(), as_read);
        let Some(read) = read else {
            return Ok(());
        };
        prop_assert_eq!(&read.to_value(), &value);
        for (tree, tape) in compiled {
            let expected = violations(tree, &value);
            prop_assert_eq!(tree.is_valid(&value), expected.is_empty());
            prop_assert_eq!(tape.is_valid(read.root()), expected.is_empty());
            prop_assert_eq!(tape.is_valid(put.root()), expected.is_empty());
            prop_assert_eq!(&violations(tape, read.root()), &expected);
            prop_assert_eq!(&violations(tape, put.root()), &expected);
        }
    }
}

proptest! {
    /// A JSON text with one byte changed, inserted or removed is read onto a tape only when
    /// serde_json reads it too, as the same value, which it writes back as that text.
    #[test]
    fn a_text_read_onto_a_tape_is_json_whatever_byte_is_changed(
        value in answer_json(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"{}[]\":,.-+0159eEtfnrul \\\t\x01\x7f".to_vec()),
        edit in 0..3u8,
    ) {
        let mut text = value.to_string().into_bytes();
        let at = at.index(text.len() + 1);
        match edit {
            0 if at < text.len() => text[at] = byte,
            1 => text.insert(at, byte),
            _ if at < text.len() => {
                text.remove(at);
            }
            _ => text.push(byte),
        }
        // The bytes changed are ASCII, so a character boundary may only be cut by removing
        // a byte of a longer character: not text.
        let Ok(text) = String::from_utf8(text) else {
            return Ok(());
        };
        if let Some(tape) = restmcp::upstream::tape::Tape::read_compact(&text) {
            let read: Value = serde_json::from_str(&text)
                .map_err(|e| TestCaseError::fail(format!("{text:?} is not JSON: {e}")))?;
            prop_assert_eq!(&tape.to_value(), &read, "{:?}", text);
            // And the text is the value as serde_json writes it: restmcp sends it as the
            // structured content as it is.
            if !tape.repeats_a_name() {
                prop_assert_eq!(serde_json::to_string(&read).ok(), Some(text.clone()));
            }
        }
    }
}
