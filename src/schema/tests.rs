//! Tests of the OpenAPI → JSON Schema 2020-12 translation.
//!
//! Every translation made through the helpers below is also checked for what restmcp
//! promises of all its schemas: valid against the 2020-12 meta-schema, compilable by a
//! stock validator, free of OpenAPI-only keywords, and with every `$ref` pointing into
//! the root's own `$defs`.

use std::borrow::Cow;
use std::path::Path;

use serde_json::{Map, Value, json};
use url::Url;

use super::*;
use crate::spec::{DocumentSet, SchemaRef, SpecSource, SpecVersion};

const V2: SpecVersion = SpecVersion::Swagger2;
const V30: SpecVersion = SpecVersion::OpenApi30;
const V31: SpecVersion = SpecVersion::OpenApi31;
const IN: Direction = Direction::Input;
const OUT: Direction = Direction::Output;

const PIECE_POINTER: &str = "/paths/~1pets/post/requestBody";

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn document(root: Value) -> DocumentSet {
    DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        root,
    )
}

fn with_schemas(schemas: Value) -> DocumentSet {
    document(json!({"components": {"schemas": schemas}}))
}

fn piece(schema: &Value) -> SchemaRef<'_> {
    SchemaRef {
        doc: 0,
        schema: Cow::Borrowed(schema),
        pointer: PIECE_POINTER.into(),
    }
}

/// The piece found at `pointer` in the root document (as the spec normalizer hands them out).
fn piece_at<'a>(docs: &'a DocumentSet, pointer: &str) -> SchemaRef<'a> {
    SchemaRef {
        doc: 0,
        schema: Cow::Borrowed(
            docs.root()
                .root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("nothing at {pointer}")),
        ),
        pointer: pointer.into(),
    }
}

/// What one session produced.
#[derive(Debug)]
struct Translation {
    roots: Vec<Value>,
    defs: Option<Map<String, Value>>,
    notes: Notes,
}

impl Translation {
    fn root(&self) -> &Value {
        &self.roots[0]
    }

    /// Root `i` with the session's `$defs` attached, as it is published.
    fn full(&self, i: usize) -> Value {
        with_defs(&self.roots[i], &self.defs)
    }

    fn def(&self, name: &str) -> &Value {
        self.defs
            .as_ref()
            .and_then(|defs| defs.get(name))
            .unwrap_or_else(|| panic!("no $defs/{name} in {:?}", self.defs))
    }

    fn def_names(&self) -> Vec<&str> {
        self.defs
            .iter()
            .flat_map(|defs| defs.keys())
            .map(String::as_str)
            .collect()
    }

    fn validator(&self, i: usize) -> jsonschema::Validator {
        jsonschema::draft202012::new(&self.full(i)).expect("compiles")
    }
}

fn with_defs(root: &Value, defs: &Option<Map<String, Value>>) -> Value {
    let mut full = root.clone();
    if let Some(defs) = defs {
        full.as_object_mut()
            .expect("a root with $defs is an object")
            .insert("$defs".into(), Value::Object(defs.clone()));
    }
    full
}

/// Analyzes every piece, emits each, collects the `$defs` once; checks every result.
fn translate_pieces(
    docs: &DocumentSet,
    version: SpecVersion,
    direction: Direction,
    pieces: &[SchemaRef<'_>],
) -> Translation {
    let mut graph = RefGraph::new(docs);
    let mut session = Session::new(&mut graph, version, direction);
    for p in pieces {
        session.analyze(p).expect("analysis succeeds");
    }
    let roots: Vec<Value> = pieces.iter().map(|p| session.emit_root(p)).collect();
    let defs = session.defs();
    let notes = session.into_notes();
    let translation = Translation { roots, defs, notes };
    for i in 0..translation.roots.len() {
        assert_publishable(&translation.full(i));
    }
    translation
}

fn translate(
    docs: &DocumentSet,
    version: SpecVersion,
    direction: Direction,
    schema: &Value,
) -> Translation {
    translate_pieces(docs, version, direction, &[piece(schema)])
}

/// One self-contained schema (no components) in one direction.
fn translate_alone(version: SpecVersion, direction: Direction, schema: Value) -> Translation {
    translate(&document(json!({})), version, direction, &schema)
}

/// Calls `f` on every schema object of `schema` (following schema positions only, so that
/// property names, `default`, `enum` and `examples` data are not mistaken for keywords).
fn for_each_schema<'a>(
    schema: &'a Value,
    at: &str,
    f: &mut dyn FnMut(&str, &'a Map<String, Value>),
) {
    let Value::Object(map) = schema else { return };
    f(at, map);
    for (key, value) in map {
        match (key.as_str(), value) {
            (
                "properties" | "patternProperties" | "dependentSchemas" | "$defs",
                Value::Object(children),
            ) => {
                for (name, child) in children {
                    for_each_schema(child, &format!("{at}/{key}/{name}"), f);
                }
            }
            ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(children)) => {
                for (i, child) in children.iter().enumerate() {
                    for_each_schema(child, &format!("{at}/{key}/{i}"), f);
                }
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "contentSchema",
                child,
            ) => for_each_schema(child, &format!("{at}/{key}"), f),
            _ => {}
        }
    }
}

/// Every `$ref` in a schema, with where it stands.
fn refs(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for_each_schema(schema, "#", &mut |at, map| {
        if let Some(reference) = map.get("$ref") {
            found.push((
                at.to_string(),
                reference.as_str().expect("$ref is a string").to_string(),
            ));
        }
    });
    found
}

/// Every `$ref` of a published schema points to an existing key of its root `$defs`.
fn assert_refs_resolve_locally(full: &Value) {
    let defs = full.get("$defs").and_then(Value::as_object);
    for (at, reference) in refs(full) {
        let name = reference
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("$ref {reference:?} at {at} leaves the schema: {full:#}"));
        assert!(
            defs.is_some_and(|defs| defs.contains_key(name)),
            "$ref {reference:?} at {at} names no $defs entry: {full:#}"
        );
    }
}

/// No value in a published schema (`default`, `const`, `enum` members, `examples`) holds
/// a `$ref`: a client that follows references would find nothing there.
fn assert_no_ref_in_values(full: &Value) {
    for_each_schema(full, "#", &mut |at, map| {
        for key in ["default", "const", "enum", "examples"] {
            if let Some(value) = map.get(key) {
                assert!(
                    !crate::spec::values::holds_ref(value),
                    "a $ref is left in {key} at {at}: {full:#}"
                );
            }
        }
    });
}

/// No keyword that only OpenAPI knows survives.
fn assert_no_openapi_keywords(full: &Value) {
    for_each_schema(full, "#", &mut |at, map| {
        for (key, value) in map {
            assert!(
                !matches!(
                    key.as_str(),
                    "nullable"
                        | "discriminator"
                        | "xml"
                        | "externalDocs"
                        | "example"
                        | "definitions"
                ) && !key.starts_with("x-"),
                "OpenAPI keyword {key:?} left at {at}: {full:#}"
            );
            if matches!(key.as_str(), "exclusiveMinimum" | "exclusiveMaximum") {
                assert!(value.is_number(), "boolean {key} left at {at}: {full:#}");
            }
        }
    });
}

/// What every published schema must satisfy.
fn assert_publishable(full: &Value) {
    if let Err(e) = jsonschema::draft202012::meta::validate(full) {
        panic!(
            "not valid 2020-12: {e} (at {}): {full:#}",
            e.instance_path()
        );
    }
    assert_refs_resolve_locally(full);
    assert_no_ref_in_values(full);
    assert_no_openapi_keywords(full);
    if let Err(e) = jsonschema::draft202012::new(full) {
        panic!("a stock validator refuses it: {e}: {full:#}");
    }
}

// ---------------------------------------------------------------------------------------
// The checking helpers themselves
// ---------------------------------------------------------------------------------------

#[test]
fn helpers_reject_what_must_not_be_published() {
    let outside = json!({"properties": {"a": {"$ref": "#/components/schemas/A"}}});
    let missing = json!({"items": {"$ref": "#/$defs/B"}, "$defs": {"A": {}}});
    let nullable = json!({"anyOf": [{"type": "string", "nullable": true}]});
    let boolean = json!({"minimum": 1, "exclusiveMinimum": true});
    // A value is data, but a `$ref` in it still leaves the schema for a client that follows it.
    let in_value = json!({"default": {"nested": [{"$ref": "elsewhere"}]}});
    let in_enum = json!({"enum": ["a", {"$ref": "#/$defs/A"}], "$defs": {"A": {}}});
    for bad in [outside, missing, nullable, boolean, in_value, in_enum] {
        let caught = std::panic::catch_unwind(|| assert_publishable(&bad));
        assert!(caught.is_err(), "accepted {bad}");
    }
    // Data and names that merely look like keywords are not schema positions.
    assert_publishable(&json!({
        "type": "object",
        "properties": {
            "nullable": {"type": "boolean"},
            "example": {"$ref": "#/$defs/A"},
            "$ref": {"type": "string"}
        },
        "default": {"nullable": true, "x-data": 1},
        "$defs": {"A": {"type": "string"}}
    }));
}

// ---------------------------------------------------------------------------------------
// Nullability
// ---------------------------------------------------------------------------------------

#[test]
fn nullable_30_adds_null_to_type_and_enum() {
    let t = translate_alone(
        V30,
        IN,
        json!({"type": "string", "enum": ["a", "b"], "nullable": true}),
    );
    assert_eq!(
        t.root(),
        &json!({"type": ["string", "null"], "enum": ["a", "b", null]})
    );
    let v = t.validator(0);
    assert!(v.is_valid(&json!(null)));
    assert!(v.is_valid(&json!("a")));
    assert!(!v.is_valid(&json!("c")));
    assert!(t.notes.dropped.is_empty(), "{:?}", t.notes);
}

#[test]
fn nullable_30_does_not_duplicate_null() {
    let t = translate_alone(
        V30,
        IN,
        json!({"type": ["integer", "null"], "enum": [1, null], "nullable": true}),
    );
    assert_eq!(
        t.root(),
        &json!({"type": ["integer", "null"], "enum": [1, null]})
    );
}

#[test]
fn nullable_false_changes_nothing() {
    let t = translate_alone(V30, IN, json!({"type": "string", "nullable": false}));
    assert_eq!(t.root(), &json!({"type": "string"}));
}

#[test]
fn nullable_30_next_to_all_of_becomes_any_of_with_null() {
    let docs = with_schemas(json!({
        "Pet": {"type": "object", "properties": {"name": {"type": "string"}}}
    }));
    let schema = json!({"nullable": true, "allOf": [{"$ref": "#/components/schemas/Pet"}]});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"anyOf": [
            {"allOf": [{"type": "object", "properties": {"name": {"type": "string"}}}]},
            {"type": "null"}
        ]})
    );
    assert!(t.validator(0).is_valid(&json!(null)));
    assert!(!t.validator(0).is_valid(&json!({"name": 1})));
}

#[test]
fn nullable_30_next_to_inlined_ref_extends_the_target_type() {
    let docs = with_schemas(json!({
        "Person": {"type": "object", "properties": {"name": {"type": "string"}}}
    }));
    let schema = json!({
        "type": "object",
        "properties": {"owner": {"$ref": "#/components/schemas/Person", "nullable": true}}
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "properties": {"owner": {
                "type": ["object", "null"],
                "properties": {"name": {"type": "string"}}
            }}
        })
    );
    assert!(t.defs.is_none());
}

#[test]
fn nullable_30_next_to_shared_ref_wraps_the_ref_in_any_of() {
    let docs = with_schemas(json!({
        "Person": {"type": "object", "properties": {"name": {"type": "string"}}}
    }));
    let schema = json!({
        "type": "object",
        "properties": {
            "owner": {"$ref": "#/components/schemas/Person", "nullable": true},
            "vet": {"$ref": "#/components/schemas/Person"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "properties": {
                "owner": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
                "vet": {"$ref": "#/$defs/Person"}
            }
        })
    );
    assert_eq!(
        t.defs,
        Some(
            json!({"Person": {"type": "object", "properties": {"name": {"type": "string"}}}})
                .as_object()
                .cloned()
                .expect("object")
        )
    );
    let v = t.validator(0);
    assert!(v.is_valid(&json!({"owner": null, "vet": {"name": "x"}})));
    assert!(!v.is_valid(&json!({"vet": null})));
}

#[test]
fn nullable_30_next_to_root_ref_makes_the_root_nullable() {
    let docs = with_schemas(json!({
        "Person": {"type": "object", "properties": {"name": {"type": "string"}}}
    }));
    let schema = json!({"$ref": "#/components/schemas/Person", "nullable": true});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": ["object", "null"], "properties": {"name": {"type": "string"}}})
    );
}

#[test]
fn nullable_on_the_target_itself_is_kept_through_the_ref() {
    let docs = with_schemas(json!({
        "Color": {"type": "string", "enum": ["red", "blue"], "nullable": true}
    }));
    let schema =
        json!({"type": "object", "properties": {"c": {"$ref": "#/components/schemas/Color"}}});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"c": {
            "type": ["string", "null"], "enum": ["red", "blue", null]
        }}})
    );
}

#[test]
fn nullable_is_not_a_keyword_in_31_and_type_arrays_are_kept() {
    let t = translate_alone(V31, IN, json!({"type": "string", "nullable": true}));
    assert_eq!(t.root(), &json!({"type": "string"}));
    assert!(!t.validator(0).is_valid(&json!(null)));
    assert!(t.notes.dropped.is_empty(), "{:?}", t.notes);

    let t = translate_alone(
        V31,
        IN,
        json!({"type": ["string", "null"], "enum": ["a", null]}),
    );
    assert_eq!(
        t.root(),
        &json!({"type": ["string", "null"], "enum": ["a", null]})
    );

    // Next to a $ref and next to allOf it is ignored too.
    let docs = with_schemas(json!({"Id": {"type": "integer"}}));
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/components/schemas/Id", "nullable": true},
            "b": {"allOf": [{"type": "integer"}], "nullable": true}
        }
    });
    let t = translate(&docs, V31, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "a": {"type": "integer"},
            "b": {"allOf": [{"type": "integer"}]}
        }})
    );
}

#[test]
fn x_nullable_of_swagger_2_adds_null() {
    let t = translate_alone(
        V2,
        IN,
        json!({"type": "integer", "format": "int32", "x-nullable": true}),
    );
    assert_eq!(
        t.root(),
        &json!({"type": ["integer", "null"], "format": "int32"})
    );
    let docs = document(json!({"definitions": {"Tag": {"type": "object"}}}));
    let schema = json!({"type": "object", "properties": {
        "tag": {"$ref": "#/definitions/Tag", "x-nullable": true}
    }});
    let t = translate(&docs, V2, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"tag": {"type": ["object", "null"]}}})
    );
}

#[test]
fn nullable_in_outputs_keeps_null_but_drops_the_enum() {
    let t = translate_alone(
        V30,
        OUT,
        json!({"type": "string", "enum": ["a"], "nullable": true}),
    );
    assert_eq!(t.root(), &json!({"type": ["string", "null"]}));
}

// ---------------------------------------------------------------------------------------
// Numeric bounds
// ---------------------------------------------------------------------------------------

#[test]
fn boolean_exclusive_bounds_of_30_become_numeric() {
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "number",
            "minimum": 0,
            "exclusiveMinimum": true,
            "maximum": 10,
            "exclusiveMaximum": false
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "number", "exclusiveMinimum": 0, "maximum": 10})
    );
    let v = t.validator(0);
    assert!(!v.is_valid(&json!(0)));
    assert!(v.is_valid(&json!(0.5)));
    assert!(v.is_valid(&json!(10)));

    let t = translate_alone(
        V30,
        IN,
        json!({"type": "integer", "maximum": 5, "exclusiveMaximum": true}),
    );
    assert_eq!(t.root(), &json!({"type": "integer", "exclusiveMaximum": 5}));
    assert!(!t.validator(0).is_valid(&json!(5)));
    assert!(t.validator(0).is_valid(&json!(4)));
}

#[test]
fn boolean_exclusive_flag_without_bound_is_dropped() {
    let t = translate_alone(
        V30,
        IN,
        json!({"type": "number", "exclusiveMinimum": true, "exclusiveMaximum": false}),
    );
    assert_eq!(t.root(), &json!({"type": "number"}));
}

#[test]
fn numeric_exclusive_bounds_of_31_are_kept() {
    let schema = json!({
        "type": "number",
        "minimum": -1,
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 1.5
    });
    let t = translate_alone(V31, IN, schema.clone());
    assert_eq!(t.root(), &schema);
}

// ---------------------------------------------------------------------------------------
// Other OpenAPI-only keywords
// ---------------------------------------------------------------------------------------

#[test]
fn example_becomes_examples() {
    for direction in [IN, OUT] {
        let t = translate_alone(V30, direction, json!({"type": "string", "example": "rex"}));
        assert_eq!(t.root(), &json!({"type": "string", "examples": ["rex"]}));
    }
    // A 2020-12 `examples` array is kept as is.
    let t = translate_alone(V31, IN, json!({"type": "integer", "examples": [1, 2]}));
    assert_eq!(t.root(), &json!({"type": "integer", "examples": [1, 2]}));
    // OpenAPI's map-of-Example-objects form is not valid there and disappears.
    let t = translate_alone(
        V30,
        IN,
        json!({"type": "integer", "examples": {"one": {"value": 1}}}),
    );
    assert_eq!(t.root(), &json!({"type": "integer"}));
}

#[test]
fn annotations_next_to_a_ref_override_the_targets() {
    let docs = with_schemas(json!({
        "Person": {
            "type": "object",
            "description": "Somebody",
            "example": {"name": "a"},
            "properties": {"name": {"type": "string"}}
        }
    }));
    let schema = json!({"type": "object", "properties": {"owner": {
        "$ref": "#/components/schemas/Person",
        "description": "Who owns the pet",
        "example": {"name": "b"},
        "deprecated": true
    }}});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"owner": {
            "type": "object",
            "description": "Who owns the pet",
            "examples": [{"name": "b"}],
            "properties": {"name": {"type": "string"}},
            "deprecated": true
        }}})
    );

    // At the root, too.
    let schema = json!({"$ref": "#/components/schemas/Person", "title": "Owner"});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(t.root()["title"], json!("Owner"));
    assert_eq!(t.root()["description"], json!("Somebody"));
    assert_eq!(t.root()["examples"], json!([{"name": "a"}]));
}

#[test]
fn discriminator_xml_and_external_docs_are_dropped_and_counted() {
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "object",
            "discriminator": {"propertyName": "kind"},
            "xml": {"name": "pet"},
            "externalDocs": {"url": "https://example.com"},
            "properties": {"kind": {"type": "string", "xml": {"attribute": true}}}
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"kind": {"type": "string"}}})
    );
    let expected: BTreeMap<String, usize> = [
        ("discriminator".to_string(), 1),
        ("externalDocs".to_string(), 1),
        ("xml".to_string(), 2),
    ]
    .into();
    assert_eq!(t.notes.dropped, expected);
    assert!(t.notes.invalid.is_empty());
}

#[test]
fn extensions_are_dropped_silently() {
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "object",
            "x-go-type": "Pet",
            "x-nullable": false,
            "properties": {"a": {"type": "string", "x-order": 1}}
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
    assert_eq!(t.notes, Notes::default());
}

#[test]
fn unknown_and_identity_keywords_are_dropped_and_counted() {
    let t = translate_alone(
        V31,
        IN,
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.com/pet",
            "$comment": "silently gone",
            "type": "string",
            "collectionFormat": "csv",
            "$defs": {"Unused": {}}
        }),
    );
    assert_eq!(t.root(), &json!({"type": "string"}));
    let expected: BTreeMap<String, usize> = [
        ("$id".to_string(), 1),
        ("$schema".to_string(), 1),
        ("collectionFormat".to_string(), 1),
    ]
    .into();
    assert_eq!(t.notes.dropped, expected);
}

#[test]
fn invalid_types_are_removed_and_noted() {
    let t = translate_alone(
        V2,
        IN,
        json!({
            "type": "object",
            "properties": {
                "upload": {"type": "file", "description": "The file"},
                "count": {"type": "int"},
                "mixed": {"type": ["integer", "file", "integer"]}
            }
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "upload": {"description": "The file"},
            "count": {},
            "mixed": {"type": "integer"}
        }})
    );
    assert_eq!(
        t.notes.invalid,
        vec![
            "type: \"file\" removed".to_string(),
            "type: \"int\" removed".to_string()
        ]
    );
}

#[test]
fn binary_format_in_inputs_gets_base64_content_encoding() {
    let schema = json!({"type": "string", "format": "binary"});
    let t = translate_alone(V30, IN, schema.clone());
    assert_eq!(
        t.root(),
        &json!({"type": "string", "format": "binary", "contentEncoding": "base64"})
    );
    let t = translate_alone(V30, OUT, schema);
    assert_eq!(t.root(), &json!({"type": "string", "format": "binary"}));
    // An explicit encoding is not overridden.
    let t = translate_alone(
        V31,
        IN,
        json!({"type": "string", "format": "binary", "contentEncoding": "base16"}),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "string", "format": "binary", "contentEncoding": "base16"})
    );
    // Other formats get nothing.
    let t = translate_alone(V30, IN, json!({"type": "string", "format": "byte"}));
    assert_eq!(t.root(), &json!({"type": "string", "format": "byte"}));
}

#[test]
fn invalid_counts_are_removed_and_integral_floats_normalized() {
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "string",
            "minLength": -1,
            "maxLength": 5.0,
            "minItems": 1.5,
            "multipleOf": 0,
            "pattern": 7
        }),
    );
    assert_eq!(t.root(), &json!({"type": "string", "maxLength": 5}));
    assert_eq!(
        t.notes.invalid,
        vec![
            "minLength: -1 removed".to_string(),
            "minItems: 1.5 removed".to_string()
        ]
    );
}

#[test]
fn tuple_items_become_prefix_items() {
    let t = translate_alone(
        V30,
        IN,
        json!({"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})
    );
}

#[test]
fn non_schema_values_become_empty_schemas_and_are_noted() {
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "object",
            "properties": {"a": "string", "b": true},
            "additionalProperties": "no",
            "allOf": []
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"a": {}, "b": true}})
    );
    assert_eq!(
        t.notes.invalid,
        vec![
            "\"string\" is not a schema; replaced by {}".to_string(),
            "additionalProperties: \"no\" removed".to_string()
        ]
    );
}

#[test]

fn malformed_dependent_required_is_removed_and_noted() {
    let docs = document(json!({}));
    let schema = json!({"type": "object", "dependentRequired": {"a": "b"}});
    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V31, IN);
    session.analyze(&piece(&schema)).expect("analyzes");
    let out = session.emit_root(&piece(&schema));
    assert_eq!(out, json!({"type": "object"}));
    assert_eq!(session.notes.invalid.len(), 1, "{:?}", session.notes);
}

// ---------------------------------------------------------------------------------------
// readOnly / writeOnly
// ---------------------------------------------------------------------------------------

fn pet_with_read_only_id() -> Value {
    json!({
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"type": "integer", "readOnly": true},
            "name": {"type": "string"}
        }
    })
}

#[test]
fn read_only_properties_leave_inputs_and_their_required() {
    let t = translate_alone(V30, IN, pet_with_read_only_id());
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}}
        })
    );
    // With nothing left to require, `required` disappears instead of becoming [].
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "integer", "readOnly": true}}
        }),
    );
    assert_eq!(t.root(), &json!({"type": "object", "properties": {}}));
}

#[test]
fn read_only_properties_stay_in_outputs() {
    let t = translate_alone(V30, OUT, pet_with_read_only_id());
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "readOnly": true},
                "name": {"type": "string"}
            }
        })
    );
}

#[test]
fn read_only_flag_on_the_referenced_schema_counts() {
    let docs = with_schemas(json!({
        "Id": {"type": "integer", "readOnly": true},
        "Pet": {
            "type": "object",
            "required": ["id", "name"],
            "properties": {
                "id": {"$ref": "#/components/schemas/Id"},
                "name": {"type": "string"}
            }
        }
    }));
    let schema = json!({"$ref": "#/components/schemas/Pet"});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}}
        })
    );
    // A readOnly written next to the $ref counts as well.
    let docs = with_schemas(json!({"Id": {"type": "integer"}}));
    let schema = json!({
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"$ref": "#/components/schemas/Id", "readOnly": true}}
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(t.root(), &json!({"type": "object", "properties": {}}));
}

#[test]
fn read_only_properties_leave_nested_objects() {
    let t = translate_alone(
        V30,
        IN,
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "x"],
                "properties": {
                    "id": {"type": "string", "readOnly": true},
                    "x": {"type": "string"}
                }
            }
        }),
    );
    assert_eq!(
        t.root(),
        &json!({
            "type": "array",
            "items": {
                "type": "object",
                "required": ["x"],
                "properties": {"x": {"type": "string"}}
            }
        })
    );
}

#[test]

fn read_only_property_required_from_another_all_of_member_is_not_required_in_inputs() {
    let docs = with_schemas(json!({
        "Base": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "readOnly": true},
                "name": {"type": "string"}
            }
        },
        "Pet": {
            "allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"type": "object", "required": ["id", "name"]}
            ]
        }
    }));
    let schema = json!({"$ref": "#/components/schemas/Pet"});
    let t = translate(&docs, V30, IN, &schema);
    // A client cannot send `id` (the server assigns it), so it must not be demanded.
    assert!(
        t.validator(0).is_valid(&json!({"name": "Rex"})),
        "{:#}",
        t.root()
    );
}

#[test]

fn read_only_reached_through_an_all_of_wrapper_leaves_inputs() {
    let docs = with_schemas(json!({"Id": {"type": "integer", "readOnly": true}}));
    let schema = json!({
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"allOf": [{"$ref": "#/components/schemas/Id"}], "description": "Server-assigned"},
            "name": {"type": "string"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}}
        })
    );
}

#[test]

fn read_only_reached_through_an_alias_chain_leaves_inputs() {
    let docs = with_schemas(json!({
        "BaseId": {"type": "integer", "readOnly": true},
        "Id": {"$ref": "#/components/schemas/BaseId"}
    }));
    let schema = json!({
        "type": "object",
        "required": ["id", "name"],
        "properties": {
            "id": {"$ref": "#/components/schemas/Id"},
            "name": {"type": "string"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}}
        })
    );
}

fn user_with_write_only_password() -> Value {
    json!({
        "type": "object",
        "required": ["name", "password"],
        "properties": {
            "name": {"type": "string"},
            "password": {"type": "string", "writeOnly": true, "minLength": 8}
        }
    })
}

#[test]
fn write_only_properties_leave_outputs() {
    let t = translate_alone(V30, OUT, user_with_write_only_password());
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"name": {"type": "string"}}})
    );
}

#[test]
fn write_only_properties_stay_in_inputs() {
    let t = translate_alone(V30, IN, user_with_write_only_password());
    assert_eq!(t.root(), &user_with_write_only_password());
}

#[test]
fn write_only_flag_on_the_referenced_schema_counts() {
    let docs = with_schemas(json!({"Secret": {"type": "string", "writeOnly": true}}));
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "token": {"$ref": "#/components/schemas/Secret"}
        }
    });
    let t = translate(&docs, V30, OUT, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"name": {"type": "string"}}})
    );
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root()["properties"]["token"],
        json!({"type": "string", "writeOnly": true})
    );
}

// ---------------------------------------------------------------------------------------
// Output leniency
// ---------------------------------------------------------------------------------------

fn strict_object() -> Value {
    json!({
        "type": "object",
        "required": ["a"],
        "additionalProperties": false,
        "dependentRequired": {"a": ["n"]},
        "properties": {
            "a": {
                "type": "string",
                "enum": ["x"],
                "pattern": "^x$",
                "minLength": 1,
                "maxLength": 3,
                "format": "email"
            },
            "n": {
                "type": "integer",
                "minimum": 1,
                "maximum": 9,
                "exclusiveMaximum": 8,
                "multipleOf": 3,
                "const": 3
            },
            "l": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "uniqueItems": true,
                "items": {"type": "string"}
            },
            "o": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 2,
                "not": {"required": ["z"]},
                "additionalProperties": {"type": "string"}
            }
        }
    })
}

#[test]
fn outputs_drop_validation_only_keywords() {
    let t = translate_alone(V31, OUT, strict_object());
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "format": "email"},
                "n": {"type": "integer"},
                "l": {"type": "array", "items": {"type": "string"}},
                "o": {"type": "object", "additionalProperties": {"type": "string"}}
            }
        })
    );
    // Data the spec does not quite promise still validates.
    assert!(t.validator(0).is_valid(&json!({
        "a": "much too long",
        "n": 100,
        "l": ["x", "x", "x"],
        "o": {"z": "1", "y": "2", "w": "3"},
        "extra": true
    })));
    // Types still hold.
    assert!(!t.validator(0).is_valid(&json!({"n": "one"})));
}

#[test]
fn inputs_keep_validation_keywords() {
    let t = translate_alone(V31, IN, strict_object());
    assert_eq!(t.root(), &strict_object());
    assert!(!t.validator(0).is_valid(&json!({"a": "x", "extra": 1})));
}

#[test]
fn outputs_drop_additional_properties_true_and_false_but_keep_schemas() {
    let t = translate_alone(
        V30,
        OUT,
        json!({
            "type": "object",
            "properties": {
                "closed": {"type": "object", "additionalProperties": false},
                "open": {"type": "object", "additionalProperties": true},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}}
            }
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "closed": {"type": "object"},
            "open": {"type": "object"},
            "map": {"type": "object", "additionalProperties": {"type": "integer"}}
        }})
    );
}

#[test]
fn outputs_turn_one_of_into_any_of() {
    let schema = json!({
        "oneOf": [{"type": "string"}, {"type": "integer"}],
        "discriminator": {"propertyName": "kind"}
    });
    let t = translate_alone(V30, OUT, schema.clone());
    assert_eq!(
        t.root(),
        &json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    // A number that is also an integer matches both branches: fine for anyOf.
    assert!(
        translate_alone(
            V30,
            OUT,
            json!({"oneOf": [{"type": "number"}, {"type": "integer"}]})
        )
        .validator(0)
        .is_valid(&json!(1))
    );
    // Inputs keep oneOf.
    let t = translate_alone(V30, IN, schema);
    assert_eq!(
        t.root(),
        &json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})
    );
}

#[test]
fn outputs_merge_one_of_into_an_existing_any_of() {
    let t = translate_alone(
        V31,
        OUT,
        json!({
            "oneOf": [{"type": "string"}, {"type": "integer"}],
            "anyOf": [{"type": "boolean"}]
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]})
    );
    let t = translate_alone(
        V31,
        OUT,
        json!({
            "anyOf": [{"type": "boolean"}],
            "oneOf": [{"type": "string"}]
        }),
    );
    assert_eq!(
        t.root(),
        &json!({"anyOf": [{"type": "boolean"}, {"type": "string"}]})
    );
}

// ---------------------------------------------------------------------------------------
// $ref: inlining and $defs
// ---------------------------------------------------------------------------------------

fn address_schemas() -> DocumentSet {
    with_schemas(json!({
        "City": {"type": "string"},
        "Address": {
            "type": "object",
            "properties": {"city": {"$ref": "#/components/schemas/City"}}
        }
    }))
}

#[test]
fn a_ref_used_once_is_inlined() {
    let docs = with_schemas(json!({
        "Tag": {"type": "string"},
        "Pet": {
            "type": "object",
            "properties": {"tag": {"$ref": "#/components/schemas/Tag"}}
        }
    }));
    let schema = json!({"$ref": "#/components/schemas/Pet"});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"tag": {"type": "string"}}})
    );
    assert!(t.defs.is_none());
}

#[test]
fn a_ref_used_twice_in_one_piece_goes_to_defs_once() {
    let docs = address_schemas();
    let schema = json!({
        "type": "object",
        "properties": {
            "home": {"$ref": "#/components/schemas/Address"},
            "work": {"$ref": "#/components/schemas/Address"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "#/$defs/Address"},
                "work": {"$ref": "#/$defs/Address"}
            }
        })
    );
    // City is used once (inside Address's single definition) and stays inlined.
    assert_eq!(
        t.full(0)["$defs"],
        json!({"Address": {"type": "object", "properties": {"city": {"type": "string"}}}})
    );
    assert!(t.validator(0).is_valid(&json!({"home": {"city": "Paris"}})));
    assert!(!t.validator(0).is_valid(&json!({"work": {"city": 75}})));
}

#[test]
fn a_ref_shared_by_two_pieces_goes_to_defs_once() {
    let docs = address_schemas();
    let first = json!({"type": "array", "items": {"$ref": "#/components/schemas/Address"}});
    let second = json!({"type": "object", "properties": {
        "address": {"$ref": "#/components/schemas/Address"}
    }});
    let t = translate_pieces(&docs, V30, IN, &[piece(&first), piece(&second)]);
    assert_eq!(
        t.roots,
        vec![
            json!({"type": "array", "items": {"$ref": "#/$defs/Address"}}),
            json!({"type": "object", "properties": {"address": {"$ref": "#/$defs/Address"}}}),
        ]
    );
    assert_eq!(t.def_names(), vec!["Address"]);

    // In separate sessions each piece uses it once, so each inlines it.
    let alone = translate(&docs, V30, IN, &first);
    assert_eq!(
        alone.root(),
        &json!({"type": "array", "items": {
            "type": "object", "properties": {"city": {"type": "string"}}
        }})
    );
    assert!(alone.defs.is_none());
}

#[test]
fn a_recursive_schema_terminates_through_defs() {
    let docs = with_schemas(json!({
        "Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
            }
        }
    }));
    let node = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
        }
    });
    let schema = json!({"$ref": "#/components/schemas/Node"});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(t.root(), &node);
    assert_eq!(t.full(0)["$defs"], json!({"Node": node}));
    let v = t.validator(0);
    assert!(v.is_valid(&json!({"name": "a", "children": [{"name": "b", "children": [{}]}]})));
    assert!(!v.is_valid(&json!({"children": [{"children": [{"name": 3}]}]})));

    // Used once below the root, the recursive target still goes to $defs.
    let schema =
        json!({"type": "object", "properties": {"tree": {"$ref": "#/components/schemas/Node"}}});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}})
    );
    assert_eq!(t.def_names(), vec!["Node"]);
}

#[test]
fn mutual_recursion_terminates_through_defs() {
    let docs = with_schemas(json!({
        "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}
    }));
    let schema = json!({"$ref": "#/components/schemas/A"});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}})
    );
    assert_eq!(
        t.full(0)["$defs"],
        json!({
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}
        })
    );
    assert!(!t.validator(0).is_valid(&json!({"b": {"a": {"b": 1}}})));
}

#[test]
fn recursion_through_all_of_and_additional_properties_terminates() {
    let docs = with_schemas(json!({
        "Base": {"type": "object", "properties": {"meta": {"$ref": "#/components/schemas/Meta"}}},
        "Meta": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/Item"}},
        "Item": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"required": ["meta"]}]}
    }));
    for direction in [IN, OUT] {
        let schema = json!({"$ref": "#/components/schemas/Item"});
        let t = translate(&docs, V30, direction, &schema);
        assert!(t.defs.is_some(), "{:#}", t.full(0));
    }
}

#[test]
fn an_alias_chain_used_once_is_inlined_with_its_annotations() {
    let docs = with_schemas(json!({
        "Uuid": {"type": "string", "format": "uuid"},
        "Id": {"$ref": "#/components/schemas/Uuid"},
        "PetId": {"$ref": "#/components/schemas/Id", "description": "The pet"}
    }));
    let expected = json!({"type": "string", "format": "uuid", "description": "The pet"});
    let schema =
        json!({"type": "object", "properties": {"id": {"$ref": "#/components/schemas/PetId"}}});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"id": expected}})
    );
    assert!(t.defs.is_none());
    // At the root the whole chain is followed.
    let schema = json!({"$ref": "#/components/schemas/PetId"});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(t.root(), &expected);
}

#[test]

fn a_shared_alias_keeps_its_target_in_defs() {
    let docs = with_schemas(json!({
        "Uuid": {"type": "string", "format": "uuid"},
        "Id": {"$ref": "#/components/schemas/Uuid"}
    }));
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/components/schemas/Id"},
            "b": {"$ref": "#/components/schemas/Id"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "a": {"$ref": "#/$defs/Id"},
            "b": {"$ref": "#/$defs/Id"}
        }})
    );
    assert_ne!(t.def("Id"), &json!({}), "the alias lost its target");
    assert!(
        !t.validator(0).is_valid(&json!({"a": 5})),
        "{:#}",
        t.full(0)
    );
}

#[test]

fn a_recursive_alias_keeps_its_target_in_defs() {
    let docs = with_schemas(json!({
        "Node": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "next": {"$ref": "#/components/schemas/NodeRef"}
            }
        },
        "NodeRef": {"$ref": "#/components/schemas/Node"}
    }));
    let schema = json!({"$ref": "#/components/schemas/Node"});
    let t = translate(&docs, V30, IN, &schema);
    assert!(
        !t.validator(0)
            .is_valid(&json!({"next": {"value": "not an integer"}})),
        "{:#}",
        t.full(0)
    );
}

#[test]
fn siblings_of_a_ref_in_30_other_than_annotations_are_ignored() {
    // OpenAPI 3.0: "properties adjacent to $ref are ignored" (only annotations are applied).
    let docs = with_schemas(json!({
        "Base": {"type": "object", "properties": {"name": {"type": "string"}}}
    }));
    let schema = json!({"type": "object", "properties": {"p": {
        "$ref": "#/components/schemas/Base",
        "type": "string",
        "description": "kept"
    }}});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"p": {
            "type": "object",
            "description": "kept",
            "properties": {"name": {"type": "string"}}
        }}})
    );
}

#[test]

fn siblings_of_a_ref_in_31_still_apply() {
    let docs = with_schemas(json!({
        "Base": {"type": "object", "properties": {"name": {"type": "string"}}}
    }));
    let schema = json!({"type": "object", "properties": {"p": {
        "$ref": "#/components/schemas/Base",
        "required": ["name"],
        "properties": {"extra": {"type": "integer"}}
    }}});
    let t = translate(&docs, V31, IN, &schema);
    let v = t.validator(0);
    assert!(
        v.is_valid(&json!({"p": {"name": "a", "extra": 1}})),
        "{:#}",
        t.full(0)
    );
    assert!(
        !v.is_valid(&json!({"p": {"extra": 1}})),
        "name is required: {:#}",
        t.full(0)
    );
    assert!(
        !v.is_valid(&json!({"p": {"name": "a", "extra": "x"}})),
        "{:#}",
        t.full(0)
    );
}

#[test]
fn a_very_deep_chain_of_single_use_refs_stops_inlining() {
    let mut schemas = Map::new();
    for i in 0..300 {
        schemas.insert(
            format!("A{i}"),
            json!({"type": "object", "properties": {
                "next": {"$ref": format!("#/components/schemas/A{}", i + 1)}
            }}),
        );
    }
    schemas.insert("A300".into(), json!({"type": "string"}));
    let docs = with_schemas(Value::Object(schemas));
    let schema = json!({"$ref": "#/components/schemas/A0"});
    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, IN);
    session.analyze(&piece(&schema)).expect("analyzes");
    let root = session.emit_root(&piece(&schema));
    let defs = session.defs().expect("deep levels go to $defs");
    // The first levels are inlined, the chain still ends in the string.
    assert_eq!(root["properties"]["next"]["type"], json!("object"));
    assert!(!defs.contains_key("A1"));
    assert_eq!(defs.get("A300"), Some(&json!({"type": "string"})));
    assert_refs_resolve_locally(&with_defs(&root, &Some(defs)));
}

#[test]
fn one_graph_serves_several_sessions() {
    let docs = with_schemas(json!({
        "Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
        }},
        "Pet": {"type": "object", "properties": {
            "tree": {"$ref": "#/components/schemas/Node"},
            "tag": {"$ref": "#/components/schemas/Tag"}
        }},
        "Tag": {"type": "string", "pattern": "^[a-z]+$"}
    }));
    let pet = json!({"$ref": "#/components/schemas/Pet"});
    let tag = json!({"type": "array", "items": {"$ref": "#/components/schemas/Tag"}});
    let fresh = |schema: &Value, direction| {
        let t = translate(&docs, V30, direction, schema);
        (t.roots, t.defs)
    };
    let expected = [fresh(&pet, OUT), fresh(&tag, IN), fresh(&pet, IN)];
    // As during synthesis: one graph for every tool, one session per tool and direction.
    let mut graph = RefGraph::new(&docs);
    let mut got = Vec::new();
    for (schema, direction) in [(&pet, OUT), (&tag, IN), (&pet, IN)] {
        let mut session = Session::new(&mut graph, V30, direction);
        session.analyze(&piece(schema)).expect("analyzes");
        let root = session.emit_root(&piece(schema));
        got.push((vec![root], session.defs()));
    }
    assert_eq!(got, expected);
    assert_eq!(
        expected[1].0[0],
        json!({"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}})
    );
}

#[test]
fn def_names_are_unique_when_targets_share_a_last_segment() {
    let docs = document(json!({
        "components": {"schemas": {
            "Error": {"type": "object", "properties": {"code": {"type": "integer"}}}
        }},
        "definitions": {
            "Error": {"type": "object", "properties": {"message": {"type": "string"}}}
        }
    }));
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/components/schemas/Error"},
            "b": {"$ref": "#/components/schemas/Error"},
            "c": {"$ref": "#/definitions/Error"},
            "d": {"$ref": "#/definitions/Error"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "a": {"$ref": "#/$defs/Error"},
            "b": {"$ref": "#/$defs/Error"},
            "c": {"$ref": "#/$defs/Error_2"},
            "d": {"$ref": "#/$defs/Error_2"}
        }})
    );
    assert_eq!(
        t.def("Error"),
        &json!({"type": "object", "properties": {"code": {"type": "integer"}}})
    );
    assert_eq!(
        t.def("Error_2"),
        &json!({"type": "object", "properties": {"message": {"type": "string"}}})
    );
}

#[test]
fn def_names_do_not_collide_with_sanitized_names() {
    let docs = with_schemas(json!({
        "a/b": {"type": "string"},
        "a_b": {"type": "integer"}
    }));
    let schema = json!({
        "type": "object",
        "properties": {
            "p": {"$ref": "#/components/schemas/a~1b"},
            "q": {"$ref": "#/components/schemas/a~1b"},
            "r": {"$ref": "#/components/schemas/a_b"},
            "s": {"$ref": "#/components/schemas/a_b"}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(t.def_names(), vec!["a_b", "a_b_2"]);
    assert_eq!(t.def("a_b"), &json!({"type": "string"}));
    assert_eq!(t.def("a_b_2"), &json!({"type": "integer"}));
}

#[test]
fn pointer_escapes_and_percent_encoding_resolve() {
    let docs = with_schemas(json!({
        "pets/item": {"type": "string"},
        "a~b": {"type": "integer"},
        "My Pet": {"type": "boolean"}
    }));
    // Used once: inlined.
    let schema = json!({"type": "object", "properties": {
        "slash": {"$ref": "#/components/schemas/pets~1item"},
        "tilde": {"$ref": "#/components/schemas/a~0b"},
        "space": {"$ref": "#/components/schemas/My%20Pet"}
    }});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "slash": {"type": "string"},
            "tilde": {"type": "integer"},
            "space": {"type": "boolean"}
        }})
    );
    // Used twice: in $defs under names that need no escaping.
    let schema = json!({"type": "object", "properties": {
        "slash": {"$ref": "#/components/schemas/pets~1item"},
        "slash2": {"$ref": "#/components/schemas/pets~1item"},
        "tilde": {"$ref": "#/components/schemas/a~0b"},
        "tilde2": {"$ref": "#/components/schemas/a~0b"},
        "space": {"$ref": "#/components/schemas/My%20Pet"},
        "space2": {"$ref": "#/components/schemas/My%20Pet"}
    }});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(t.def_names(), vec!["My_Pet", "a_b", "pets_item"]);
    assert_eq!(t.def("pets_item"), &json!({"type": "string"}));
    assert_eq!(t.def("a_b"), &json!({"type": "integer"}));
    assert_eq!(t.def("My_Pet"), &json!({"type": "boolean"}));
}

#[test]
fn two_spellings_of_one_target_are_one_target() {
    let docs = with_schemas(json!({
        "My Pet": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "a/b": {"type": "string"}
    }));
    let schema = json!({"type": "object", "properties": {
        "x": {"$ref": "#/components/schemas/My%20Pet"},
        "y": {"$ref": "#/components/schemas/My Pet"},
        "z": {"$ref": "#/components/schemas/a~1b"},
        "w": {"$ref": "#/components/schemas/a%7E1b"}
    }});
    let t = translate(&docs, V30, IN, &schema);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "x": {"$ref": "#/$defs/My_Pet"},
            "y": {"$ref": "#/$defs/My_Pet"},
            "z": {"$ref": "#/$defs/a_b"},
            "w": {"$ref": "#/$defs/a_b"}
        }})
    );
    assert_eq!(t.def_names(), vec!["My_Pet", "a_b"]);
}

#[test]
fn a_missing_target_fails_analysis_naming_referrer_and_target() {
    let docs = with_schemas(json!({}));
    let schema = json!({"type": "object", "properties": {
        "p": {"$ref": "#/components/schemas/Missing"}
    }});
    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, IN);
    let err = session.analyze(&piece(&schema)).unwrap_err();
    assert_eq!(
        err,
        "$ref \"#/components/schemas/Missing\" in api.json → \
         api.json#/components/schemas/Missing: no \"Missing\" at this location \
         (schema at api.json#/paths/~1pets/post/requestBody)"
    );
}

#[test]
fn a_missing_target_deep_in_the_graph_fails_analysis() {
    let docs = with_schemas(json!({
        "Pet": {"type": "object", "properties": {
            "tag": {"$ref": "#/components/schemas/Tag"}
        }}
    }));
    let schema = json!({"$ref": "#/components/schemas/Pet"});
    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, IN);
    let err = session.analyze(&piece(&schema)).unwrap_err();
    assert!(
        err.contains("$ref \"#/components/schemas/Tag\" in api.json"),
        "{err}"
    );
    assert!(err.contains("api.json#/components/schemas/Tag"), "{err}");
    assert!(
        err.ends_with("(schema at api.json#/paths/~1pets/post/requestBody)"),
        "{err}"
    );
}

#[test]
fn an_unresolvable_ref_met_at_emission_becomes_empty_and_is_noted() {
    // Emission without analysis (a contract violation) still produces a valid schema.
    let docs = with_schemas(json!({}));
    let schema = json!({"type": "object", "properties": {
        "p": {"$ref": "#/components/schemas/Missing"}
    }});
    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, IN);
    let out = session.emit_root(&piece(&schema));
    assert_eq!(out, json!({"type": "object", "properties": {"p": {}}}));
    assert!(session.defs().is_none());
    assert_eq!(
        session.into_notes().invalid,
        vec!["unresolvable $ref \"#/components/schemas/Missing\" replaced by {}".to_string()]
    );
}

// ---------------------------------------------------------------------------------------
// External documents
// ---------------------------------------------------------------------------------------

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

async fn load(dir: &Path, root: &str) -> DocumentSet {
    DocumentSet::load(&SpecSource::File(dir.join(root)))
        .await
        .expect("loads")
}

const BODY: &str = "/paths/~1pets/post/requestBody/content/application~1json/schema";
const RESPONSE: &str = "/paths/~1pets/post/responses/200/content/application~1json/schema";

#[tokio::test]
async fn external_refs_across_yaml_and_json_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "api.yaml",
        r##"
openapi: 3.0.3
paths:
  /pets:
    post:
      requestBody:
        content:
          application/json:
            schema:
              $ref: './schemas/pet.json'
      responses:
        '200':
          content:
            application/json:
              schema:
                $ref: 'common.yaml#/Error'
"##,
    );
    write(
        dir.path(),
        "common.yaml",
        r##"
Tag:
  type: string
  example: dog
Error:
  type: object
  properties:
    message: {type: string}
    detail:
      $ref: '#/Detail'
Detail:
  type: string
  nullable: true
"##,
    );
    write(
        dir.path(),
        "schemas/pet.json",
        r##"{
  "type": "object",
  "required": ["name", "owner"],
  "properties": {
    "name": {"type": "string"},
    "tag": {"$ref": "../common.yaml#/Tag"},
    "owner": {"$ref": "./owner.json"}
  }
}"##,
    );
    write(
        dir.path(),
        "schemas/owner.json",
        r##"{"type": "object", "properties": {
  "id": {"type": "integer", "readOnly": true},
  "name": {"type": "string"}
}}"##,
    );
    let docs = load(dir.path(), "api.yaml").await;
    assert_eq!(docs.len(), 4);

    let t = translate_pieces(&docs, V30, IN, &[piece_at(&docs, BODY)]);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "required": ["name", "owner"],
            "properties": {
                "name": {"type": "string"},
                "tag": {"type": "string", "examples": ["dog"]},
                "owner": {"type": "object", "properties": {"name": {"type": "string"}}}
            }
        })
    );
    assert!(t.defs.is_none());

    let t = translate_pieces(&docs, V30, OUT, &[piece_at(&docs, RESPONSE)]);
    assert_eq!(
        t.root(),
        &json!({
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "detail": {"type": ["string", "null"]}
            }
        })
    );
}

#[tokio::test]
async fn external_and_local_targets_with_one_name_get_distinct_defs() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "api.yaml",
        r##"
openapi: 3.0.3
components:
  schemas:
    Error:
      type: object
      properties:
        code: {type: integer}
paths:
  /pets:
    post:
      responses:
        '200':
          content:
            application/json:
              schema:
                type: object
                properties:
                  first: {$ref: 'common.json#/Error'}
                  second: {$ref: 'common.json#/Error'}
                  local: {$ref: '#/components/schemas/Error'}
                  local2: {$ref: '#/components/schemas/Error'}
"##,
    );
    write(
        dir.path(),
        "common.json",
        r#"{"Error": {"type": "object", "properties": {"message": {"type": "string"}}}}"#,
    );
    let docs = load(dir.path(), "api.yaml").await;
    let t = translate_pieces(&docs, V30, OUT, &[piece_at(&docs, RESPONSE)]);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {
            "first": {"$ref": "#/$defs/Error"},
            "second": {"$ref": "#/$defs/Error"},
            "local": {"$ref": "#/$defs/Error_2"},
            "local2": {"$ref": "#/$defs/Error_2"}
        }})
    );
    assert_eq!(
        t.def("Error"),
        &json!({"type": "object", "properties": {"message": {"type": "string"}}})
    );
    assert_eq!(
        t.def("Error_2"),
        &json!({"type": "object", "properties": {"code": {"type": "integer"}}})
    );
}

#[tokio::test]
async fn recursive_external_refs_terminate() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "api.yaml",
        r##"
openapi: 3.1.0
paths:
  /pets:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: 'tree.yaml#/Tree'}
      responses:
        '200':
          content:
            application/json:
              schema: {$ref: 'a.json#/A'}
"##,
    );
    write(
        dir.path(),
        "tree.yaml",
        r##"
Tree:
  type: object
  properties:
    value: {type: string}
    children:
      type: array
      items: {$ref: '#/Tree'}
"##,
    );
    // Recursion across two files, each referring to the other.
    write(
        dir.path(),
        "a.json",
        r#"{"A": {"type": "object", "properties": {"b": {"$ref": "b.yaml#/B"}}}}"#,
    );
    write(
        dir.path(),
        "b.yaml",
        "B:\n  type: object\n  properties:\n    a: {$ref: 'a.json#/A'}\n",
    );
    let docs = load(dir.path(), "api.yaml").await;

    let tree = json!({
        "type": "object",
        "properties": {
            "value": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }
    });
    let t = translate_pieces(&docs, V31, IN, &[piece_at(&docs, BODY)]);
    assert_eq!(t.root(), &tree);
    assert_eq!(t.full(0)["$defs"], json!({"Tree": tree}));

    let t = translate_pieces(&docs, V31, OUT, &[piece_at(&docs, RESPONSE)]);
    assert_eq!(
        t.root(),
        &json!({"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}})
    );
    assert_eq!(
        t.full(0)["$defs"],
        json!({
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}
        })
    );
}

#[tokio::test]
async fn missing_external_targets_fail_analysis_naming_both_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "api.yaml",
        r##"
openapi: 3.0.3
paths:
  /pets:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: 'nothere.yaml#/X'}
      responses:
        '200':
          content:
            application/json:
              schema: {$ref: 'common.yaml#/Error'}
"##,
    );
    write(
        dir.path(),
        "common.yaml",
        "Error:\n  type: object\n  properties:\n    detail: {$ref: '#/Nope'}\n",
    );
    let docs = load(dir.path(), "api.yaml").await;
    let root_name = docs.root().name.clone();
    let common_name = dir.path().join("common.yaml").display().to_string();

    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, IN);
    let err = session.analyze(&piece_at(&docs, BODY)).unwrap_err();
    assert!(
        err.starts_with(&format!("$ref \"nothere.yaml#/X\" in {root_name} → ")),
        "{err}"
    );
    assert!(err.contains("nothere.yaml#/X"), "{err}");
    assert!(err.contains("document could not be loaded"), "{err}");

    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, OUT);
    let err = session.analyze(&piece_at(&docs, RESPONSE)).unwrap_err();
    assert!(
        err.starts_with(&format!(
            "$ref \"#/Nope\" in {common_name} → {common_name}#/Nope: "
        )),
        "{err}"
    );
    assert!(
        err.ends_with(&format!("(schema at {root_name}#{RESPONSE})")),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------

/// An object `depth` levels deep with `width` properties per level.
fn wide_deep(depth: usize, width: usize) -> Value {
    if depth == 0 {
        return json!({"type": "string", "description": "a leaf"});
    }
    let properties: Map<String, Value> = (0..width)
        .map(|i| (format!("p{i}"), wide_deep(depth - 1, width)))
        .collect();
    json!({"type": "object", "properties": properties})
}

fn emit_with(
    docs: &DocumentSet,
    schema: &Value,
    direction: Direction,
    limit: Option<Limit>,
) -> (Value, bool) {
    let mut graph = RefGraph::new(docs);
    let mut session = Session::new(&mut graph, V30, direction);
    let p = piece(schema);
    session.analyze(&p).expect("analyzes");
    session.begin(limit);
    let root = session.emit_root(&p);
    let defs = session.defs();
    let full = with_defs(&root, &defs);
    assert_publishable(&full);
    (full, session.exceeded())
}

#[test]
fn a_small_budget_is_reported_exceeded() {
    let docs = document(json!({}));
    let schema = wide_deep(4, 5);
    let (_, exceeded) = emit_with(
        &docs,
        &schema,
        OUT,
        Some(Limit {
            max_depth: usize::MAX,
            budget: 200,
        }),
    );
    assert!(exceeded);

    let (full, exceeded) = emit_with(
        &docs,
        &schema,
        OUT,
        Some(Limit {
            max_depth: usize::MAX,
            budget: 10_000_000,
        }),
    );
    assert!(!exceeded);
    assert_eq!(full, schema, "a budget that fits changes nothing");

    let (full, exceeded) = emit_with(&docs, &schema, OUT, None);
    assert!(!exceeded);
    assert_eq!(full, schema);
}

#[test]
fn a_depth_limit_relaxes_deep_levels_to_anything() {
    let docs = document(json!({}));
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "object", "properties": {
            "b": {"type": "object", "properties": {"c": {"type": "string"}}}
        }}
    }});
    let limit = |max_depth| {
        Some(Limit {
            max_depth,
            budget: 1_000_000,
        })
    };
    let (full, exceeded) = emit_with(&docs, &schema, OUT, limit(1));
    assert!(!exceeded);
    assert_eq!(
        full,
        json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {}}}
        }})
    );
    let (full, exceeded) = emit_with(&docs, &schema, OUT, limit(0));
    assert!(!exceeded);
    assert_eq!(full, json!({"type": "object", "properties": {"a": {}}}));
    let (full, _) = emit_with(&docs, &schema, OUT, limit(3));
    assert_eq!(full, schema);
}

#[test]
fn a_depth_limit_applies_inside_defs_and_to_recursion() {
    let docs = with_schemas(json!({
        "Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
            }
        }
    }));
    let schema = json!({"$ref": "#/components/schemas/Node"});
    for max_depth in 0..6 {
        let (full, exceeded) = emit_with(
            &docs,
            &schema,
            OUT,
            Some(Limit {
                max_depth,
                budget: 1_000_000,
            }),
        );
        assert!(!exceeded);
        // Nothing below the cut-off survives, wherever it stands.
        fn depth(value: &Value) -> usize {
            match value {
                Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
                Value::Array(items) => items.iter().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        assert!(depth(&full) <= 2 * max_depth + 4, "{max_depth}: {full:#}");
    }
    let (full, _) = emit_with(
        &docs,
        &schema,
        OUT,
        Some(Limit {
            max_depth: 1,
            budget: 1_000_000,
        }),
    );
    assert_eq!(
        full,
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {}}
        }})
    );
}

#[test]
fn begin_restarts_emission_but_keeps_the_analysis() {
    let docs = address_schemas();
    let schema = json!({
        "type": "object",
        "xml": {"name": "x"},
        "properties": {
            "home": {"$ref": "#/components/schemas/Address"},
            "work": {"$ref": "#/components/schemas/Address"}
        }
    });
    let p = piece(&schema);
    let mut graph = RefGraph::new(&docs);
    let mut session = Session::new(&mut graph, V30, OUT);
    session.analyze(&p).expect("analyzes");

    session.begin(Some(Limit {
        max_depth: usize::MAX,
        budget: 10,
    }));
    let _ = session.emit_root(&p);
    let _ = session.defs();
    assert!(session.exceeded());

    session.begin(None);
    let root = session.emit_root(&p);
    let defs = session.defs();
    assert!(!session.exceeded());
    assert_eq!(
        root,
        json!({"type": "object", "properties": {
            "home": {"$ref": "#/$defs/Address"},
            "work": {"$ref": "#/$defs/Address"}
        }})
    );
    assert_eq!(
        Value::Object(defs.expect("defs")),
        json!({"Address": {"type": "object", "properties": {"city": {"type": "string"}}}})
    );
    // Notes describe the last emission only.
    assert_eq!(session.notes.dropped.get("xml"), Some(&1));
}

// ---------------------------------------------------------------------------------------
// Whole specs: everything published is valid 2020-12
// ---------------------------------------------------------------------------------------

fn petstore() -> Value {
    json!({
        "openapi": "3.0.3",
        "components": {"schemas": {
            "Id": {"type": "integer", "format": "int64", "readOnly": true},
            "Category": {
                "type": "object",
                "xml": {"name": "Category"},
                "properties": {
                    "id": {"$ref": "#/components/schemas/Id"},
                    "name": {"type": "string", "pattern": "^[a-z]+$"},
                    "parent": {"$ref": "#/components/schemas/Category"}
                }
            },
            "Tag": {
                "type": "object",
                "properties": {"name": {"type": "string", "example": "cute"}}
            },
            "Pet": {
                "type": "object",
                "required": ["id", "name", "status"],
                "discriminator": {"propertyName": "kind"},
                "externalDocs": {"url": "https://example.com"},
                "properties": {
                    "id": {"$ref": "#/components/schemas/Id"},
                    "name": {"type": "string", "minLength": 1, "example": "Rex"},
                    "kind": {"type": "string", "enum": ["dog", "cat"]},
                    "category": {"$ref": "#/components/schemas/Category", "nullable": true},
                    "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
                    "alsoTags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
                    "photo": {"type": "string", "format": "binary", "writeOnly": true},
                    "weight": {
                        "type": "number", "minimum": 0, "exclusiveMinimum": true,
                        "maximum": 200, "exclusiveMaximum": false
                    },
                    "status": {"type": "string", "enum": ["available", "sold"], "nullable": true},
                    "owner": {
                        "nullable": true,
                        "allOf": [{"$ref": "#/components/schemas/Owner"}]
                    },
                    "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                    "shape": {
                        "oneOf": [
                            {"$ref": "#/components/schemas/Circle"},
                            {"$ref": "#/components/schemas/Square"}
                        ],
                        "discriminator": {"propertyName": "shape"}
                    }
                },
                "additionalProperties": false
            },
            "Owner": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "pets": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}
                }
            },
            "Circle": {"type": "object", "required": ["r"], "properties": {"r": {"type": "number"}}},
            "Square": {
                "type": "object",
                "required": ["side"],
                "properties": {"side": {"type": "number"}}
            }
        }}
    })
}

#[test]
fn every_translation_of_a_rich_spec_is_publishable() {
    let docs = document(petstore());
    let pet = json!({"$ref": "#/components/schemas/Pet"});
    let list = json!({"type": "array", "items": {"$ref": "#/components/schemas/Pet"}});
    let id = json!({"type": "integer", "x-example": 1});
    for version in [V2, V30, V31] {
        for direction in [IN, OUT] {
            let t = translate_pieces(
                &docs,
                version,
                direction,
                &[piece(&pet), piece(&list), piece(&id)],
            );
            assert!(t.defs.is_some());
            // Pet is recursive (through Owner), so everything refers to one definition.
            assert_eq!(
                t.roots[1],
                json!({"type": "array", "items": {"$ref": "#/$defs/Pet"}})
            );
        }
    }
}

#[test]
fn a_rich_spec_translates_to_the_expected_input_and_output() {
    let docs = document(petstore());
    let pet = json!({"$ref": "#/components/schemas/Pet"});
    let input = translate(&docs, V30, IN, &pet);
    let v = input.validator(0);
    let good = json!({
        "name": "Rex",
        "status": null,
        "kind": "dog",
        "weight": 3.5,
        "photo": "aGVsbG8=",
        "category": null,
        "owner": {"name": "Ann", "pets": []},
        "tags": [{"name": "cute"}],
        "shape": {"r": 1}
    });
    assert!(v.is_valid(&good), "{:#}", input.full(0));
    // The readOnly id is neither accepted as a property of the closed object nor required.
    let mut with_id = good.clone();
    with_id["id"] = json!(7);
    assert!(!v.is_valid(&with_id));
    let mut zero_weight = good.clone();
    zero_weight["weight"] = json!(0);
    assert!(!v.is_valid(&zero_weight));
    assert!(!v.is_valid(&json!({"name": "Rex"})), "status is required");
    assert_eq!(input.root()["required"], json!(["name", "status"]));
    assert_eq!(
        input.root()["properties"]["photo"],
        json!({"type": "string", "format": "binary", "contentEncoding": "base64", "writeOnly": true})
    );
    assert_eq!(
        input.root()["properties"]["category"],
        json!({"anyOf": [{"$ref": "#/$defs/Category"}, {"type": "null"}]})
    );

    let output = translate(&docs, V30, OUT, &pet);
    let v = output.validator(0);
    assert!(v.is_valid(&json!({"id": 1, "unexpected": true, "kind": "fish"})));
    assert!(
        !output.root()["properties"]
            .as_object()
            .expect("properties")
            .contains_key("photo")
    );
    assert!(output.root().get("required").is_none());
    // Id is used by Pet and Category: shared, so defined once.
    assert_eq!(
        output.root()["properties"]["id"],
        json!({"$ref": "#/$defs/Id"})
    );
    assert_eq!(
        output.def("Id"),
        &json!({"type": "integer", "format": "int64", "readOnly": true})
    );
    assert_eq!(
        output.root()["properties"]["shape"],
        json!({"anyOf": [
            {"type": "object", "properties": {"r": {"type": "number"}}},
            {"type": "object", "properties": {"side": {"type": "number"}}}
        ]})
    );
    assert!(output.notes.dropped.contains_key("discriminator"));
    assert!(output.notes.dropped.contains_key("externalDocs"));
    assert!(output.notes.dropped.contains_key("xml"));
}

// ---------------------------------------------------------------------------------------
// Small pieces
// ---------------------------------------------------------------------------------------

#[test]
fn translate_type_keeps_valid_names_once() {
    assert_eq!(
        translate_type(&json!("string"), false),
        Some(json!("string"))
    );
    assert_eq!(
        translate_type(&json!("string"), true),
        Some(json!(["string", "null"]))
    );
    assert_eq!(
        translate_type(&json!(["integer", "string", "integer"]), false),
        Some(json!(["integer", "string"]))
    );
    assert_eq!(translate_type(&json!(["null"]), true), Some(json!("null")));
    assert_eq!(translate_type(&json!("file"), true), None);
    assert_eq!(translate_type(&json!([]), false), None);
    assert_eq!(translate_type(&json!(3), false), None);
}

#[test]
fn make_nullable_extends_type_or_wraps() {
    assert_eq!(
        make_nullable(json!({"type": "string", "enum": ["a"]})),
        json!({"type": ["string", "null"], "enum": ["a", null]})
    );
    assert_eq!(
        make_nullable(json!({"$ref": "#/$defs/A"})),
        json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
    );
    assert_eq!(
        make_nullable(json!(true)),
        json!({"anyOf": [true, {"type": "null"}]})
    );
}

#[test]
fn notes_merge_adds_counts_and_appends_invalid() {
    let mut a = Notes::default();
    a.drop_keyword("xml");
    a.invalid.push("one".into());
    let mut b = Notes::default();
    b.drop_keyword("xml");
    b.drop_keyword("discriminator");
    b.invalid.push("two".into());
    a.merge(b);
    let expected: BTreeMap<String, usize> =
        [("discriminator".to_string(), 1), ("xml".to_string(), 2)].into();
    assert_eq!(a.dropped, expected);
    assert_eq!(a.invalid, vec!["one".to_string(), "two".to_string()]);
}

// ---------------------------------------------------------------------------------------
// `$ref`s written inside values (examples): resolved to the value, or removed and noted
// ---------------------------------------------------------------------------------------

fn with_examples() -> DocumentSet {
    document(json!({"components": {
        "examples": {
            "rules": {"summary": "Rules", "value": {"total_count": 1, "rules": [{"$ref": "#/components/examples/rule"}]}},
            "rule": {"value": {"id": 3, "enabled": true}},
            "external": {"externalValue": "https://example.test/rule.json"}
        },
        "schemas": {"Rule": {"type": "object", "properties": {"id": {"type": "integer"}}}}
    }}))
}

#[test]
fn example_references_become_the_examples_values() {
    let docs = with_examples();
    let schema = json!({
        "type": "object",
        "example": {"$ref": "#/components/examples/rules"},
        "properties": {
            "rules": {"type": "array", "items": {"$ref": "#/components/schemas/Rule"}, "examples": [[{"$ref": "#/components/examples/rule"}], [{"id": 4}]]}
        }
    });
    for direction in [IN, OUT] {
        let t = translate(&docs, V30, direction, &schema);
        assert_eq!(
            t.root()["examples"],
            json!([{"total_count": 1, "rules": [{"id": 3, "enabled": true}]}])
        );
        assert_eq!(
            t.root()["properties"]["rules"]["examples"],
            json!([[{"id": 3, "enabled": true}], [{"id": 4}]])
        );
        assert!(t.notes.invalid.is_empty(), "{:?}", t.notes.invalid);
    }
}

#[test]
fn values_whose_refs_cannot_be_data_are_removed_and_noted() {
    let docs = with_examples();
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "object", "example": {"$ref": "#/components/schemas/Rule"}},
            "b": {"type": "object", "default": {"nested": {"$ref": "#/components/examples/missing"}}},
            "c": {"enum": [{"$ref": "#/components/examples/external"}, "plain"]},
            "d": {"const": {"$ref": "#/components/schemas/Rule"}},
            "e": {"type": "array", "examples": [[{"$ref": "other.json#/x"}], ["kept"]]},
            "f": {"allOf": [{"$ref": "#/components/schemas/Rule"}], "x-sample": {"$ref": "#/nowhere"}},
            "g": {"oneOf": [{"$ref": "#/components/schemas/Rule"}], "discriminator": {"propertyName": "id", "mapping": {"3": "#/components/schemas/Rule"}}}
        }
    });
    let t = translate(&docs, V30, IN, &schema);
    let props = &t.root()["properties"];
    assert_eq!(props["a"], json!({"type": "object"}));
    assert_eq!(props["b"], json!({"type": "object"}));
    assert_eq!(props["c"], json!({}));
    assert_eq!(props["d"], json!({}));
    assert_eq!(props["e"], json!({"type": "array", "examples": [["kept"]]}));
    assert_eq!(props["f"].get("x-sample"), None);
    assert_eq!(props["g"].get("discriminator"), None);
    let invalid = t.notes.invalid.join("\n");
    for says in [
        "example removed: $ref \"#/components/schemas/Rule\" does not name an Example object",
        "default removed: $ref \"#/components/examples/missing\"",
        "enum removed: $ref \"#/components/examples/external\" does not name an Example object",
        "const removed",
        "example removed: $ref \"other.json#/x\"",
    ] {
        assert!(invalid.contains(says), "{says:?} not in:\n{invalid}");
    }
}

#[test]
fn a_ref_sibling_example_is_resolved_in_the_referring_document() {
    // The example written next to a `$ref` belongs to the referring site (3.0 reads the
    // siblings of a `$ref` as annotations of the target).
    let docs = with_examples();
    let schema = json!({"$ref": "#/components/schemas/Rule", "example": {"$ref": "#/components/examples/rule"}});
    let t = translate(&docs, V30, OUT, &schema);
    assert_eq!(t.root()["examples"], json!([{"id": 3, "enabled": true}]));
}
