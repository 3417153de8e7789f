//! The generator held to the `jsonschema` crate: small schemas for each keyword, hostile
//! ones that must terminate, and every tool of the shared real-world specs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, json};

use super::*;

/// The example for `schema`, asserted valid (by `jsonschema`) and deterministic.
fn valid_example(schema: &Value) -> Value {
    let value = example(schema).unwrap_or_else(|| panic!("no value for {schema}"));
    let validator = jsonschema::draft202012::new(schema).expect("schema compiles");
    if let Err(error) = validator.validate(&value) {
        panic!("{value} is not valid against {schema}: {error}");
    }
    assert_eq!(example(schema).as_ref(), Some(&value), "not deterministic");
    value
}

#[test]
fn empty_and_true_schemas_give_a_string_and_false_gives_nothing() {
    assert_eq!(valid_example(&json!({})), json!("example"));
    assert_eq!(valid_example(&json!(true)), json!("example"));
    assert_eq!(example(&json!(false)), None);
    assert_eq!(example(&json!({"not": {}})), None);
}

#[test]
fn scalars_of_each_type() {
    assert_eq!(valid_example(&json!({"type": "string"})), json!("string"));
    assert_eq!(valid_example(&json!({"type": "integer"})), json!(1));
    assert_eq!(valid_example(&json!({"type": "number"})), json!(1));
    assert_eq!(valid_example(&json!({"type": "boolean"})), json!(true));
    assert_eq!(valid_example(&json!({"type": "null"})), json!(null));
    assert_eq!(
        valid_example(&json!({"type": ["null", "integer"]})),
        json!(1)
    );
    assert_eq!(valid_example(&json!({"type": ["null"]})), json!(null));
}

#[test]
fn types_are_inferred_from_keywords() {
    assert_eq!(
        valid_example(&json!({"properties": {"a": {"type": "integer"}}})),
        json!({"a": 1})
    );
    assert_eq!(
        valid_example(&json!({"items": {"type": "boolean"}})),
        json!([true])
    );
    assert_eq!(valid_example(&json!({"minLength": 3})), json!("example"));
    assert_eq!(valid_example(&json!({"pattern": "^[0-9]+$"})), json!("0"));
    assert_eq!(valid_example(&json!({"minimum": 7})), json!(7));
}

#[test]
fn examples_default_const_and_enum_win_when_valid() {
    assert_eq!(
        valid_example(&json!({"type": "string", "examples": ["octocat"], "default": "x"})),
        json!("octocat")
    );
    // An example that contradicts its schema is ignored.
    assert_eq!(
        valid_example(&json!({"type": "integer", "maximum": 5, "examples": [10], "default": 3})),
        json!(3)
    );
    assert_eq!(
        valid_example(&json!({"type": "integer", "minimum": 5, "default": 1})),
        json!(5)
    );
    assert_eq!(valid_example(&json!({"const": "fixed"})), json!("fixed"));
    assert_eq!(
        valid_example(&json!({"type": "string", "enum": ["asc", "desc"]})),
        json!("asc")
    );
    // The first enum value that fits the rest of the schema.
    assert_eq!(
        valid_example(&json!({"enum": ["a", 2, "ccc"], "type": "string", "minLength": 2})),
        json!("ccc")
    );
    assert_eq!(example(&json!({"enum": []})), None);
}

#[test]
fn string_text_comes_from_the_property_name() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "email": {"type": "string"},
            "id": {"type": "string"},
            "html_url": {"type": "string"},
            "owner_id": {"type": "string"},
        },
    });
    assert_eq!(
        valid_example(&schema),
        json!({
            "name": "name",
            "email": "user@example.com",
            "id": "id-1",
            "html_url": "https://example.com",
            "owner_id": "owner_id-1",
        })
    );
}

#[test]
fn string_lengths_are_respected() {
    assert_eq!(
        valid_example(&json!({"type": "string", "minLength": 10})),
        json!("stringstri")
    );
    assert_eq!(
        valid_example(&json!({"type": "string", "maxLength": 3})),
        json!("str")
    );
    assert_eq!(
        valid_example(&json!({"type": "string", "maxLength": 0})),
        json!("")
    );
    assert_eq!(
        example(&json!({"type": "string", "minLength": 5, "maxLength": 4})),
        None
    );
}

#[test]
fn string_formats() {
    let cases = [
        ("date-time", "2024-01-01T00:00:00Z"),
        ("date", "2024-01-01"),
        ("time", "00:00:00Z"),
        ("email", "user@example.com"),
        ("uri", "https://example.com"),
        ("url", "https://example.com"),
        ("uri-reference", "/example"),
        ("hostname", "example.com"),
        ("ipv4", "192.0.2.1"),
        ("ipv6", "2001:db8::1"),
        ("uuid", "00000000-0000-4000-8000-000000000001"),
        ("byte", "ZXhhbXBsZQ=="),
        ("binary", "example"),
        ("password", "password"),
        ("int64", "1"),
        ("duration", "P1D"),
    ];
    for (format, expected) in cases {
        assert_eq!(
            valid_example(&json!({"type": "string", "format": format})),
            json!(expected),
            "{format}"
        );
    }
    assert_eq!(
        valid_example(&json!({"type": "string", "contentEncoding": "base64"})),
        json!("ZXhhbXBsZQ==")
    );
    // Formats are checked the way jsonschema checks them when asked to.
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&json!({"type": "string"}))
        .expect("compiles");
    for (format, _) in cases {
        let schema = json!({"type": "string", "format": format});
        let value = example(&schema).expect("value");
        let strict = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("compiles");
        assert!(strict.is_valid(&value), "{format}: {value}");
        assert!(validator.is_valid(&value));
    }
}

#[test]
fn an_example_or_default_in_the_wrong_format_is_not_used() {
    // GitHub's artifact storage record: a "uri" whose example has no scheme.
    let path =
        json!({"type": "string", "format": "uri", "examples": ["com/github/bar/libfoo-1.2.3"]});
    assert_eq!(valid_example(&path), json!("https://example.com"));
    let when = json!({"type": "string", "format": "date-time", "default": "yesterday"});
    assert_eq!(valid_example(&when), json!("2024-01-01T00:00:00Z"));
    // Right formats are kept, and formats jsonschema does not know accept anything.
    let right =
        json!({"type": "string", "format": "uri", "examples": ["https://reg.example.com/a"]});
    assert_eq!(valid_example(&right), json!("https://reg.example.com/a"));
    let unknown = json!({"type": "string", "format": "sha256-digest", "examples": ["abc"]});
    assert_eq!(valid_example(&unknown), json!("abc"));
}

#[test]
fn patterns() {
    assert_eq!(
        valid_example(&json!({"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"})),
        json!("AAA-00")
    );
    assert_eq!(
        valid_example(&json!({"type": "string", "pattern": "^(asc|desc)$"})),
        json!("asc")
    );
    assert_eq!(
        valid_example(&json!({"type": "string", "pattern": "^[0-9]+$", "minLength": 4})),
        json!("0000")
    );
    // The property name wins when it matches.
    assert_eq!(
        valid_example(&json!({
            "type": "object",
            "properties": {"slug": {"type": "string", "pattern": "^[a-z]+$"}},
            "required": ["slug"],
        })),
        json!({"slug": "slug"})
    );
    for pattern in [
        "^\\+?[1-9]\\d{1,14}$",
        "^[^/]+/[^/]+$",
        "^#?[0-9a-fA-F]{6}$",
        "^v\\d+\\.\\d+\\.\\d+(-[a-z]+)?$",
        "^(?:[a-z]+\\.)*[a-z]+$",
        "^\\p{L}+$",
        "^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$",
        "^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$",
        "^\\S+$",
        "^.{8,}$",
        "(?i)^abc$",
        "^[a-z](?:[a-z0-9_]{0,30}[a-z0-9])?$",
    ] {
        valid_example(&json!({"type": "string", "pattern": pattern}));
    }
    // Unsatisfiable: still a string, the best effort.
    let hopeless = json!({"type": "string", "pattern": "^a$", "minLength": 2});
    assert!(example(&hopeless).is_some_and(|v| v.is_string()));
}

#[test]
fn numbers_respect_bounds_and_multiples() {
    let cases = [
        (json!({"type": "integer", "minimum": 5}), json!(5)),
        (json!({"type": "integer", "exclusiveMinimum": 1}), json!(2)),
        (json!({"type": "integer", "maximum": 0}), json!(0)),
        (json!({"type": "integer", "exclusiveMaximum": 0}), json!(-1)),
        (json!({"type": "integer", "multipleOf": 3}), json!(3)),
        (
            json!({"type": "integer", "minimum": 10, "multipleOf": 4}),
            json!(12),
        ),
        (
            json!({"type": "integer", "multipleOf": 4, "allOf": [{"multipleOf": 6}]}),
            json!(12),
        ),
        (
            json!({"type": "integer", "minimum": 0, "maximum": 100}),
            json!(1),
        ),
        (
            json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
            json!(0.5),
        ),
        (json!({"type": "number", "multipleOf": 0.01}), json!(1)),
        (
            json!({"type": "number", "multipleOf": 0.25, "maximum": 0.5, "exclusiveMinimum": 0}),
            json!(0.25),
        ),
        (json!({"type": "number", "minimum": 1.2}), json!(2)),
        (
            json!({"type": "number", "minimum": 1.2, "maximum": 1.8}),
            json!(1.5),
        ),
    ];
    for (schema, expected) in cases {
        assert_eq!(valid_example(&schema), expected, "{schema}");
    }
    assert_eq!(
        example(&json!({"type": "integer", "minimum": 5, "maximum": 3})),
        None
    );
    assert_eq!(
        example(&json!({"type": "integer", "minimum": 1.2, "maximum": 1.8})),
        None
    );
}

#[test]
fn objects_required_optional_and_bounds() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "string"},
            "c": {"type": "boolean"},
        },
        "required": ["c"],
        "additionalProperties": false,
    });
    assert_eq!(valid_example(&schema), json!({"a": 1, "b": "b", "c": true}));
    // Optional properties stop at max_properties.
    let few = Limits {
        max_properties: 1,
        ..Limits::default()
    };
    assert_eq!(value_for(&schema, &few), Some(json!({"a": 1, "c": true})));
    // maxProperties drops optional ones; minProperties adds made-up ones.
    assert_eq!(
        valid_example(&json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["b"],
            "maxProperties": 1,
        })),
        json!({"b": 1})
    );
    assert_eq!(
        valid_example(&json!({"type": "object", "minProperties": 2})),
        json!({"property1": "example", "property2": "example"})
    );
    assert_eq!(
        valid_example(&json!({
            "type": "object",
            "additionalProperties": {"type": "integer"},
            "minProperties": 1,
        })),
        json!({"property1": 1})
    );
    assert_eq!(
        valid_example(&json!({
            "type": "object",
            "patternProperties": {"^x-[a-z]+$": {"type": "string"}},
            "additionalProperties": false,
            "minProperties": 1,
        })),
        json!({"x-a": "string"})
    );
    valid_example(&json!({
        "type": "object",
        "propertyNames": {"maxLength": 3},
        "properties": {"long_name": {"type": "string"}, "ok": {"type": "string"}},
    }));
    // Required but undeclared: from additionalProperties.
    assert_eq!(
        valid_example(&json!({
            "type": "object",
            "required": ["x"],
            "additionalProperties": {"type": "integer"},
        })),
        json!({"x": 1})
    );
    // A required property that cannot exist.
    assert_eq!(
        example(&json!({"type": "object", "required": ["x"], "additionalProperties": false})),
        None
    );
}

#[test]
fn dependent_required_is_honoured() {
    let schema = json!({
        "type": "object",
        "properties": {"card": {"type": "string"}},
        "dependentRequired": {"card": ["billing_address"]},
    });
    assert_eq!(
        valid_example(&schema),
        json!({"card": "card", "billing_address": "billing_address"})
    );
}

#[test]
fn arrays() {
    assert_eq!(
        valid_example(&json!({"type": "array", "items": {"type": "integer"}})),
        json!([1])
    );
    assert_eq!(
        valid_example(
            &json!({"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": true})
        ),
        json!([1, 2, 3])
    );
    assert_eq!(
        valid_example(
            &json!({"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 2, "uniqueItems": true})
        ),
        json!(["user@example.com", "user2@example.com"])
    );
    assert_eq!(
        valid_example(&json!({"type": "array", "items": {"type": "string"}, "minItems": 3})),
        json!(["string", "string", "string"])
    );
    assert_eq!(
        valid_example(&json!({"type": "array", "maxItems": 0})),
        json!([])
    );
    assert_eq!(
        valid_example(&json!({
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": {"type": "boolean"},
            "minItems": 3,
        })),
        json!(["string", 1, true])
    );
    assert_eq!(
        valid_example(&json!({
            "type": "array",
            "items": {"type": "integer"},
            "contains": {"minimum": 10},
            "minContains": 2,
        })),
        json!([10, 10])
    );
    valid_example(&json!({
        "type": "array",
        "items": {"enum": ["a", "b", "c"]},
        "minItems": 3,
        "uniqueItems": true,
    }));
    valid_example(&json!({
        "type": "array",
        "items": {"type": "boolean"},
        "minItems": 2,
        "uniqueItems": true,
    }));
    assert_eq!(
        example(&json!({"type": "array", "items": {"type": "boolean"}, "minItems": 3, "uniqueItems": true}))
            .map(|v| v.as_array().map(Vec::len)),
        Some(Some(3)),
        "impossible uniqueness still gives the best effort"
    );
    assert_eq!(
        example(&json!({"type": "array", "minItems": 2, "maxItems": 1})),
        None
    );
}

#[test]
fn all_of_merges_its_members() {
    let schema = json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"a": {"minimum": 3}, "b": {"type": "string"}}, "required": ["b"]},
            {"type": ["object", "null"]},
        ]
    });
    assert_eq!(valid_example(&schema), json!({"a": 3, "b": "b"}));
    assert_eq!(
        valid_example(&json!({"allOf": [{"type": "number"}, {"type": "integer", "maximum": -3}]})),
        json!(-3)
    );
    assert_eq!(
        example(&json!({"allOf": [{"type": "string"}, {"type": "integer"}]})),
        None
    );
}

#[test]
fn any_of_takes_the_first_member_that_works() {
    assert_eq!(
        valid_example(&json!({"anyOf": [{"type": "string", "maxLength": 5000}, {"enum": [""]}]})),
        json!("string")
    );
    assert_eq!(
        valid_example(&json!({"anyOf": [{"type": "null"}, {"type": "integer"}]})),
        json!(1),
        "null last"
    );
    assert_eq!(
        valid_example(
            &json!({"anyOf": [{"type": "integer", "minimum": 5, "maximum": 1}, {"type": "boolean"}]})
        ),
        json!(true)
    );
    assert_eq!(
        valid_example(
            &json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})
        ),
        json!({"a": "a"})
    );
}

#[test]
fn one_of_needs_exactly_one_member() {
    // 1 is both an integer and a number: the number member needs 1.5.
    assert_eq!(
        valid_example(&json!({"oneOf": [{"type": "integer"}, {"type": "number"}]})),
        json!(1.5)
    );
    assert_eq!(
        valid_example(
            &json!({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 100}]})
        ),
        json!("string")
    );
    valid_example(&json!({
        "type": "object",
        "properties": {"kind": {"type": "string"}, "size": {"type": "integer"}},
        "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}}, "required": ["kind", "size"]},
        ],
    }));
    valid_example(&json!({
        "oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"], "additionalProperties": false},
        ]
    }));
}

#[test]
fn not_is_avoided() {
    assert_eq!(valid_example(&json!({"not": {"type": "string"}})), json!(1));
    assert_eq!(
        valid_example(&json!({"type": "string", "not": {"enum": ["string"]}})),
        json!("string-2")
    );
    assert_eq!(
        valid_example(&json!({"type": "integer", "not": {"const": 1}})),
        json!(2)
    );
    assert_eq!(
        valid_example(&json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "not": {"required": ["a", "b"]},
        })),
        json!({})
    );
}

#[test]
fn if_then_else_best_effort() {
    let schema = json!({
        "type": "object",
        "properties": {"country": {"type": "string"}, "postal_code": {"type": "string"}},
        "required": ["country", "postal_code"],
        "if": {"properties": {"country": {"const": "country"}}},
        "then": {"properties": {"postal_code": {"pattern": "^[0-9]{5}$"}}},
        "else": {"required": ["postal_code"]},
    });
    assert_eq!(
        valid_example(&schema),
        json!({"country": "country", "postal_code": "00000"})
    );
    valid_example(&json!({
        "if": {"type": "string"},
        "then": {"minLength": 20},
        "else": {"type": "integer"},
    }));
}

#[test]
fn refs_resolve_into_defs_and_any_local_pointer() {
    let schema = json!({
        "type": "object",
        "properties": {
            "pet": {"$ref": "#/$defs/Pet"},
            "tag": {"$ref": "#/$defs/a~1b%20c"},
            "again": {"$ref": "#/properties/pet"},
        },
        "required": ["pet", "tag", "again"],
        "$defs": {
            "Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            "a/b c": {"type": "integer", "minimum": 4},
        },
    });
    assert_eq!(
        valid_example(&schema),
        json!({"pet": {"name": "name"}, "tag": 4, "again": {"name": "name"}})
    );
    // A $ref next to other keywords: both apply.
    assert_eq!(
        valid_example(&json!({
            "$ref": "#/$defs/N",
            "maximum": 2,
            "$defs": {"N": {"type": "integer", "minimum": 2}},
        })),
        json!(2)
    );
}

fn tree() -> Value {
    json!({
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                },
                "required": ["value", "children"],
            }
        }
    })
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn recursion_is_bounded() {
    let value = valid_example(&tree());
    // Arrays get an item down to max_depth (8); the last node's children are empty.
    assert_eq!(depth(&value), 10);
    for max_depth in [0, 1, 2, 3, 20, 1_000] {
        let limits = Limits {
            max_depth,
            ..Limits::default()
        };
        let value = value_for(&tree(), &limits).expect("value");
        let validator = jsonschema::draft202012::new(&tree()).expect("compiles");
        assert!(validator.is_valid(&value), "{max_depth}: {value}");
    }
    assert_eq!(
        value_for(
            &tree(),
            &Limits {
                max_depth: 0,
                max_properties: 16
            }
        ),
        Some(json!({"value": 1, "children": []}))
    );
}

#[test]
fn mutual_recursion_terminates() {
    let schema = json!({
        "$ref": "#/$defs/A",
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}, "n": {"type": "integer"}}, "required": ["b"]},
            "B": {"type": "object", "properties": {"a": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}, "required": ["a"]},
        }
    });
    valid_example(&schema);
    // Every A needs a B that needs an A: no finite value.
    let endless = json!({
        "$ref": "#/$defs/A",
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}, "required": ["b"]},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]},
        }
    });
    assert_eq!(example(&endless), None);
}

#[test]
fn determinism() {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "string", "format": "uuid"}, "minItems": 2, "uniqueItems": true},
            "meta": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 3},
            "choice": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        },
    });
    let first = valid_example(&schema);
    for _ in 0..5 {
        assert_eq!(example(&schema), Some(first.clone()));
    }
    assert_eq!(valid_example(&tree()), valid_example(&tree()));
}

#[test]
fn hostile_schemas_terminate() {
    let started = Instant::now();
    // Exponential alternatives: 2^40 paths, all ending in `false`.
    let mut defs = Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/D{}", i + 1);
        defs.insert(
            format!("D{i}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next}], "type": "object"}),
        );
    }
    defs.insert("D40".into(), json!(false));
    let exponential = json!({"$ref": "#/$defs/D0", "$defs": defs});
    let _ = example(&exponential);
    // Exponential allOf diamonds.
    let mut defs = Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/A{}", i + 1);
        defs.insert(
            format!("A{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("A40".into(), json!({"type": "integer"}));
    // (jsonschema itself takes exponential time on this one: not checked with it.)
    assert_eq!(
        example(&json!({"$ref": "#/$defs/A0", "$defs": defs})),
        Some(json!(1))
    );
    // Cycles of references that consume no value.
    for schema in [
        json!({"$ref": "#"}),
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
        json!({"anyOf": [{"$ref": "#"}, {"type": "integer"}]}),
        json!({"not": {"$ref": "#"}}),
        json!({"oneOf": [{"$ref": "#"}, {"$ref": "#"}]}),
        json!({"$ref": "#/nowhere"}),
        json!({"$ref": 5, "type": 7, "properties": [], "items": 3, "required": {}}),
        json!({"type": "array", "minItems": 1_000_000_000_u64}),
        json!({"type": "string", "minLength": 1_000_000_000_u64}),
        json!({"type": "string", "pattern": "(((((((((a{1000}){1000}){1000}))))))))"}),
        json!({"type": "string", "pattern": "[z-a"}),
        json!({"type": "string", "pattern": "^((((((((()*)*)*)*)*)*)*)*)*$"}),
        json!({"type": "string", "pattern": "^(a|b|(c(d(e(f(g(h(i(j)*)*)*)*)*)*)*)*)+$", "minLength": 5000}),
        json!({"type": "array", "uniqueItems": true, "examples": [(0..5_000).collect::<Vec<u32>>()]}),
        json!({"type": "object", "properties": (0..5_000).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect::<Map<String, Value>>(), "required": (0..5_000).map(|i| format!("p{i}")).collect::<Vec<String>>()}),
        json!({"type": "integer", "minimum": 1e308, "multipleOf": 1e-308}),
        json!({"type": "number", "exclusiveMinimum": 1e308}),
        json!({"type": "object", "minProperties": 500, "propertyNames": {"pattern": "^$"}}),
    ] {
        let _ = example(&schema);
    }
    // Deep nesting of the schema itself.
    let mut deep = json!({"type": "integer"});
    for _ in 0..500 {
        deep = json!({"type": "array", "items": deep, "minItems": 1});
    }
    let _ = example(&deep);
    let mut deep = json!({"type": "integer"});
    for _ in 0..500 {
        deep = json!({"allOf": [deep]});
    }
    let _ = example(&deep);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_stack_stays_small() {
    // Deep required recursion with several `anyOf`s per level, and long `not` chains,
    // in a thread with a small stack.
    let mut defs = Map::new();
    let groups: Vec<Value> = (0..8)
        .map(|_| json!({"anyOf": [{"$ref": "#/$defs/N"}, {"type": "object"}]}))
        .collect();
    defs.insert(
        "N".into(),
        json!({
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/N"}, "not": {"$ref": "#/$defs/Not"}},
            "required": ["next", "not"],
            "allOf": groups,
            "oneOf": [{"$ref": "#/$defs/N"}, {"required": ["x"]}],
        }),
    );
    let mut not = json!({"type": "integer"});
    for _ in 0..300 {
        not = json!({"not": not});
    }
    defs.insert("Not".into(), not);
    let schema = json!({"$ref": "#/$defs/N", "$defs": defs});
    let limits = Limits {
        max_depth: 1_000,
        max_properties: 1_000,
    };
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || value_for(&schema, &limits).map(|v| v.to_string().len()))
        .expect("thread")
        .join()
        .expect("no stack overflow");
}

// ----- real-world specs -----

/// A path under `../shared/specs`; `None` (skip) when absent, a panic under CI.
fn shared_spec(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/specs")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is missing; CI must have ../shared beside the repo",
            path.display()
        );
    }
    eprintln!("skipped: {} not present", path.display());
    None
}

struct Outcome {
    tools: usize,
    elapsed: Duration,
    input_failures: Vec<String>,
    output_failures: Vec<String>,
}

/// Generates an input and an output for every tool of a spec and validates them.
fn generate_for_spec(path: &Path) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let source = crate::spec::SpecSource::File(path.to_path_buf());
    let docs = runtime
        .block_on(crate::spec::load(&source))
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    let input = crate::catalog::ApiInput::new("api", Some(&docs));
    let (catalog, _) = crate::catalog::build(&[input], &crate::config::ToolSettings::default())
        .expect("catalog builds");
    let started = Instant::now();
    let generated: Vec<(Option<Value>, Option<Option<Value>>)> = catalog
        .tools()
        .iter()
        .map(|tool| {
            (
                example(&tool.input_schema.to_value()),
                tool.output_schema.as_ref().map(|s| example(&s.to_value())),
            )
        })
        .collect();
    let elapsed = started.elapsed();
    let mut input_failures = Vec::new();
    let mut output_failures = Vec::new();
    for (tool, (input, output)) in catalog.tools().iter().zip(&generated) {
        if let Some(problem) = problem(&tool.input_schema.to_value(), input.as_ref()) {
            input_failures.push(format!("{}: {problem}", tool.name));
        }
        if let (Some(schema), Some(output)) = (&tool.output_schema, output)
            && let Some(problem) = problem(&schema.to_value(), output.as_ref())
        {
            output_failures.push(format!("{}: {problem}", tool.name));
        }
    }
    Outcome {
        tools: generated.len(),
        elapsed,
        input_failures,
        output_failures,
    }
}

fn problem(schema: &Value, value: Option<&Value>) -> Option<String> {
    let Some(value) = value else {
        return Some("no value".into());
    };
    let validator = match jsonschema::draft202012::new(schema) {
        Ok(validator) => validator,
        Err(e) => return Some(format!("schema does not compile: {e}")),
    };
    validator
        .validate(value)
        .err()
        .map(|e| format!("{e} at {}", e.instance_path()))
}

fn assert_spec(relative: &str) {
    let Some(path) = shared_spec(relative) else {
        return;
    };
    let mut files = Vec::new();
    let mut stack = vec![path];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("readable dir") {
                let entry = entry.expect("entry").path();
                let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
                // The parts of petstore-separate are not documents of their own.
                let part = entry.parent().is_some_and(|p| p.ends_with("spec"))
                    && name != "swagger.yaml"
                    && name != "swagger.json";
                if name != "common" && !part {
                    stack.push(entry);
                }
            }
        } else {
            files.push(path);
        }
    }
    files.sort();
    let mut report = Vec::new();
    let mut failures = 0;
    for file in files {
        let outcome = generate_for_spec(&file);
        eprintln!(
            "{}: {} tools, values generated in {:?}, {} input and {} output failures",
            file.display(),
            outcome.tools,
            outcome.elapsed,
            outcome.input_failures.len(),
            outcome.output_failures.len()
        );
        failures += outcome.input_failures.len() + outcome.output_failures.len();
        for failure in outcome.input_failures.iter().take(10) {
            report.push(format!("{} input {failure}", file.display()));
        }
        for failure in outcome.output_failures.iter().take(10) {
            report.push(format!("{} output {failure}", file.display()));
        }
    }
    assert_eq!(failures, 0, "{failures} failures:\n{}", report.join("\n"));
}

#[test]
fn real_oai_examples() {
    assert_spec("oai-examples");
    assert_spec("petstore3.yaml");
}

#[test]
fn real_github() {
    assert_spec("real/github.json");
}

#[test]
fn real_stripe() {
    assert_spec("real/stripe.json");
}

#[test]
fn real_kubernetes() {
    assert_spec("real/kubernetes.json");
}

#[test]
fn real_twilio() {
    assert_spec("real/twilio.json");
}

#[test]
fn real_box() {
    assert_spec("real/box.json");
}
