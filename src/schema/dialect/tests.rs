//! Each rule of each dialect on a small schema, and round trips through
//! [`super::restore_arguments`] checked with the `jsonschema` crate.

use serde_json::{Value, json};

use super::*;
use crate::schema::example;

fn strict(schema: Value) -> Adapted {
    checked(Dialect::OpenaiStrict, schema)
}

fn gemini(schema: Value) -> Adapted {
    checked(Dialect::Gemini, schema)
}

/// Adapts and asserts the result is acceptable to the dialect and compiles.
fn checked(dialect: Dialect, schema: Value) -> Adapted {
    let adapted = adapt_input(dialect, &schema);
    let problems = violations(dialect, &adapted.schema);
    assert!(
        problems.is_empty(),
        "{dialect}: {problems:#?}\n{:#}",
        adapted.schema
    );
    jsonschema::draft202012::meta::validate(&adapted.schema).expect("valid 2020-12");
    jsonschema::draft202012::new(&adapted.schema).expect("compiles");
    adapted
}

fn valid(schema: &Value, instance: &Value) -> bool {
    jsonschema::draft202012::new(schema)
        .expect("compiles")
        .is_valid(instance)
}

/// `sent` is valid against the adapted schema; restoring it gives `expected`, which is
/// valid against the original.
fn round_trip(dialect: Dialect, original: &Value, sent: Value, expected: Value) {
    let adapted = adapt_input(dialect, original);
    assert!(
        valid(&adapted.schema, &sent),
        "{sent} is not valid against {:#}",
        adapted.schema
    );
    let Value::Object(arguments) = sent else {
        panic!("arguments are an object")
    };
    let restored = Value::Object(restore_arguments(dialect, original, arguments));
    assert_eq!(restored, expected);
    assert!(
        valid(original, &restored),
        "{restored} is not valid against the original"
    );
}

fn mentions(adapted: &Adapted, words: &[&str]) -> bool {
    adapted
        .dropped
        .iter()
        .any(|note| words.iter().all(|w| note.contains(w)))
}

#[test]
fn config_names_are_kebab_case() {
    for dialect in Dialect::ALL {
        let text = serde_json::to_string(&dialect).expect("serializes");
        assert_eq!(text, format!("\"{}\"", dialect.as_str()));
        let back: Dialect = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, dialect);
    }
    assert_eq!(Dialect::OpenaiStrict.to_string(), "openai-strict");
}

#[test]
fn full_is_the_schema_unchanged() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}});
    let adapted = adapt_input(Dialect::Full, &schema);
    assert_eq!(adapted.schema, schema);
    assert!(adapted.dropped.is_empty());
    let arguments = json!({"a": null}).as_object().cloned().unwrap_or_default();
    assert_eq!(
        restore_arguments(Dialect::Full, &schema, arguments.clone()),
        arguments
    );
    assert!(violations(Dialect::Full, &schema).is_empty());
    assert!(!violations(Dialect::Full, &json!({"type": 12})).is_empty());
}

#[test]
fn output_schemas_are_published_in_full_only() {
    assert!(keeps_output_schema(Dialect::Full));
    assert!(!keeps_output_schema(Dialect::OpenaiStrict));
    assert!(!keeps_output_schema(Dialect::Gemini));
}

// ---- openai-strict ----

#[test]
fn strict_lists_every_property_and_makes_optional_ones_nullable() {
    let original = json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "The owner."},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
            "state": {"type": "string", "enum": ["open", "closed"]}
        },
        "required": ["owner"]
    });
    let adapted = strict(original.clone());
    assert_eq!(
        adapted.schema,
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "The owner."},
                "per_page": {"type": ["integer", "null"], "minimum": 1, "maximum": 100},
                "state": {"type": ["string", "null"], "enum": ["open", "closed", null]}
            },
            "required": ["owner", "per_page", "state"],
            "additionalProperties": false
        })
    );
    assert!(adapted.dropped.is_empty(), "{:?}", adapted.dropped);
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"owner": "octo", "per_page": null, "state": null}),
        json!({"owner": "octo"}),
    );
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"owner": "octo", "per_page": 5, "state": "open"}),
        json!({"owner": "octo", "per_page": 5, "state": "open"}),
    );
}

#[test]
fn strict_closes_nested_objects_and_keeps_required_nullable_values() {
    let original = json!({
        "type": "object",
        "properties": {
            "body": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "milestone": {"type": ["integer", "null"]},
                    "labels": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["title", "milestone"]
            }
        },
        "required": ["body"]
    });
    let adapted = strict(original.clone());
    assert_eq!(
        adapted.schema["properties"]["body"],
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "milestone": {"type": ["integer", "null"]},
                "labels": {"type": ["array", "null"], "items": {"type": "string"}}
            },
            "required": ["title", "milestone", "labels"],
            "additionalProperties": false
        })
    );
    // A required nullable value keeps its null; an optional one's null means absent.
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"body": {"title": "t", "milestone": null, "labels": null}}),
        json!({"body": {"title": "t", "milestone": null}}),
    );
}

#[test]
fn strict_notes_that_an_optional_nullable_property_cannot_be_sent_as_null() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {"due_on": {"type": ["string", "null"], "format": "date-time"}}
    }));
    assert_eq!(
        adapted.schema["properties"]["due_on"],
        json!({"type": ["string", "null"], "format": "date-time"})
    );
    assert!(
        mentions(&adapted, &["`due_on`", "explicit null"]),
        "{:?}",
        adapted.dropped
    );
}

#[test]
fn strict_keeps_shared_definitions_and_reads_through_described_references() {
    let original = json!({
        "type": "object",
        "properties": {
            "from": {"$ref": "#/$defs/Point"},
            "to": {"$ref": "#/$defs/Point", "description": "Where to go."}
        },
        "required": ["from", "to"],
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x"]
            }
        }
    });
    let adapted = strict(original.clone());
    let point = json!({
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": ["number", "null"]}},
        "required": ["x", "y"],
        "additionalProperties": false
    });
    assert_eq!(
        adapted.schema["properties"]["from"],
        json!({"$ref": "#/$defs/Point"})
    );
    let mut described = point.clone();
    described["description"] = json!("Where to go.");
    assert_eq!(adapted.schema["properties"]["to"], described);
    assert_eq!(adapted.schema["$defs"]["Point"], point);
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"from": {"x": 1, "y": null}, "to": {"x": 2, "y": 3}}),
        json!({"from": {"x": 1}, "to": {"x": 2, "y": 3}}),
    );
}

#[test]
fn strict_keeps_recursive_definitions_as_references() {
    let original = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "required": ["tree"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                },
                "required": ["name"]
            }
        }
    });
    let adapted = strict(original.clone());
    assert_eq!(
        adapted.schema["$defs"]["Node"]["properties"]["children"],
        json!({"type": ["array", "null"], "items": {"$ref": "#/$defs/Node"}})
    );
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"tree": {"name": "a", "children": [{"name": "b", "children": null}]}}),
        json!({"tree": {"name": "a", "children": [{"name": "b"}]}}),
    );
}

#[test]
fn strict_merges_all_of() {
    let original = json!({
        "type": "object",
        "properties": {
            "pet": {
                "allOf": [
                    {"$ref": "#/$defs/Base"},
                    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}, "required": ["name"]}
                ],
                "description": "A pet."
            }
        },
        "required": ["pet"],
        "$defs": {
            "Base": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
        }
    });
    let adapted = strict(original.clone());
    assert_eq!(
        adapted.schema["properties"]["pet"],
        json!({
            "type": "object",
            "properties": {
                "id": {"type": ["integer", "null"]},
                "name": {"type": "string", "maxLength": 10}
            },
            "required": ["id", "name"],
            "additionalProperties": false,
            "description": "A pet."
        })
    );
    assert!(adapted.dropped.is_empty(), "{:?}", adapted.dropped);
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"pet": {"id": null, "name": "Rex"}}),
        json!({"pet": {"name": "Rex"}}),
    );
}

#[test]
fn strict_drops_an_all_of_that_cannot_be_merged() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {
            "code": {"allOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]},
            "n": {"type": "integer"}
        },
        "required": ["code"]
    }));
    assert_eq!(adapted.schema["required"], json!(["n"]));
    assert!(
        mentions(&adapted, &["`code`", "pattern", "left out", "requires it"]),
        "{:?}",
        adapted.dropped
    );
}

#[test]
fn strict_turns_one_of_into_any_of_and_spreads_siblings_into_alternatives() {
    let original = json!({
        "type": "object",
        "properties": {
            "target": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "slug": {"type": "string"}},
                "oneOf": [{"required": ["id"]}, {"required": ["slug"]}],
                "description": "By id or slug."
            },
            "value": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
        },
        "required": ["target", "value"]
    });
    let adapted = strict(original.clone());
    let target = &adapted.schema["properties"]["target"];
    assert_eq!(target["description"], "By id or slug.");
    assert_eq!(
        target["anyOf"][0],
        json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "slug": {"type": ["string", "null"]}},
            "required": ["id", "slug"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        adapted.schema["properties"]["value"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    round_trip(
        Dialect::OpenaiStrict,
        &original,
        json!({"target": {"id": null, "slug": "x"}, "value": 3}),
        json!({"target": {"slug": "x"}, "value": 3}),
    );
}

#[test]
fn strict_splits_type_unions_into_alternatives() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {"v": {"type": ["string", "integer", "null"], "minLength": 2}},
        "required": ["v"]
    }));
    assert_eq!(
        adapted.schema["properties"]["v"],
        json!({"anyOf": [{"type": "string", "minLength": 2}, {"type": "integer"}, {"type": "null"}]})
    );
}

#[test]
fn strict_leaves_out_maps_and_any_values_with_notes() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "payload": {"description": "Anything."},
            "config": {"type": "object"},
            "tags": {"type": "array", "items": {}},
            "meta": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": true
            },
            "name": {"type": "string"}
        },
        "required": ["labels"]
    }));
    assert_eq!(
        adapted.schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["meta".to_string(), "name".to_string()])
    );
    assert!(mentions(
        &adapted,
        &["`labels` is a map", "left out", "the API requires it"]
    ));
    assert!(mentions(
        &adapted,
        &["`payload` accepts any value", "left out"]
    ));
    assert!(mentions(&adapted, &["`config` is a free-form object"]));
    assert!(mentions(
        &adapted,
        &["`tags` left out: `tags[]` accepts any value"]
    ));
    assert!(mentions(
        &adapted,
        &["`meta`: keys beyond the listed properties"]
    ));
    assert!(!mentions(&adapted, &["`payload`", "requires it"]));
}

#[test]
fn strict_says_in_words_what_it_cannot_express() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {
            "sort": {"type": "string", "default": "created", "description": "Sort key."},
            "homepage": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"},
            "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true},
            "old": {"type": "boolean", "deprecated": true}
        },
        "required": ["sort", "homepage", "when", "ids", "old"]
    }));
    let p = &adapted.schema["properties"];
    assert_eq!(
        p["sort"],
        json!({"type": "string", "description": "Sort key. (default: \"created\")"})
    );
    assert_eq!(
        p["homepage"],
        json!({"type": "string", "description": "format: uri"})
    );
    assert_eq!(p["when"], json!({"type": "string", "format": "date-time"}));
    assert_eq!(p["ids"]["description"], "items must be unique");
    assert_eq!(p["old"]["description"], "deprecated");
    assert!(adapted.dropped.is_empty(), "{:?}", adapted.dropped);
}

#[test]
fn strict_notes_constraints_it_drops() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "not": {"const": 3}},
            "o": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "dependentRequired": {"a": ["b"]}
            }
        },
        "required": ["n", "o"]
    }));
    assert_eq!(
        adapted.schema["properties"]["n"],
        json!({"type": "integer"})
    );
    assert!(mentions(&adapted, &["`n`", "`not`", "not enforced"]));
    assert!(mentions(&adapted, &["`o`", "`dependentRequired`"]));
}

#[test]
fn strict_leaves_out_objects_nested_past_ten_levels() {
    let mut deep =
        json!({"type": "object", "properties": {"leaf": {"type": "string"}}, "required": ["leaf"]});
    for _ in 0..11 {
        deep = json!({
            "type": "object",
            "properties": {"next": deep, "here": {"type": "string"}},
            "required": ["next", "here"]
        });
    }
    let adapted = strict(deep);
    let mut node = &adapted.schema;
    let mut levels = 0;
    while let Some(next) = node["properties"].get("next") {
        node = next;
        levels += 1;
    }
    assert_eq!(levels, 9, "the tenth level is the last object");
    assert!(mentions(
        &adapted,
        &[
            "next.next",
            "deeper than the 10 object levels",
            "requires it"
        ]
    ));
}

#[test]
fn strict_reads_a_definition_through_where_it_would_nest_too_deep() {
    let mut deep = json!({"$ref": "#/$defs/Leaf"});
    for _ in 0..8 {
        deep = json!({"type": "object", "properties": {"next": deep}, "required": ["next"]});
    }
    let schema = json!({
        "type": "object",
        "properties": {"shallow": {"$ref": "#/$defs/Leaf"}, "deep": deep},
        "required": ["shallow", "deep"],
        "$defs": {
            "Leaf": {
                "type": "object",
                "properties": {"x": {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]}},
                "required": ["x"]
            }
        }
    });
    let adapted = strict(schema);
    assert_eq!(
        adapted.schema["properties"]["shallow"],
        json!({"$ref": "#/$defs/Leaf"})
    );
    // At level 10 the definition's own two levels do not fit: it is written out in place,
    // and its inner object is the one left out.
    assert!(
        mentions(&adapted, &["next.x", "deeper than the 10 object levels"]),
        "{:?}",
        adapted.dropped
    );
}

#[test]
fn strict_drops_enums_past_the_schema_limits() {
    let big: Vec<String> = (0..600).map(|i| format!("v{i}")).collect();
    let long: Vec<String> = (0..300).map(|i| format!("{i:0>60}")).collect();
    let adapted = strict(json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "enum": big},
            "b": {"type": "string", "enum": big},
            "c": {"type": "string", "enum": ["x", "y"]},
            "d": {"type": "string", "enum": long}
        },
        "required": ["a", "b", "c", "d"]
    }));
    let p = &adapted.schema["properties"];
    assert!(
        p["d"].get("enum").is_none(),
        "over 15,000 characters past 250 values"
    );
    assert!(
        p["a"].get("enum").is_none() != p["b"].get("enum").is_none(),
        "one of the 600 goes"
    );
    assert_eq!(p["c"]["enum"], json!(["x", "y"]));
    assert!(mentions(&adapted, &["`d`", "15,000 characters"]));
    assert!(mentions(&adapted, &["1,000 enum values"]));
}

#[test]
fn strict_drops_alternatives_at_the_root() {
    let adapted = strict(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"properties": {"b": {"type": "string"}}}]
    }));
    assert!(adapted.schema.get("anyOf").is_none());
    assert!(mentions(
        &adapted,
        &["the arguments", "alternatives", "top level"]
    ));
}

// ---- gemini ----

#[test]
fn gemini_inlines_references_and_uses_nullable() {
    let original = json!({
        "type": "object",
        "properties": {
            "from": {"$ref": "#/$defs/Point"},
            "to": {"$ref": "#/$defs/Point", "description": "Where to go."},
            "note": {"type": ["string", "null"], "maxLength": 20}
        },
        "required": ["from"],
        "$defs": {
            "Point": {
                "type": "object",
                "description": "A point.",
                "properties": {"x": {"type": "number"}, "y": {"type": "number", "exclusiveMinimum": 0}},
                "required": ["x"]
            }
        }
    });
    let adapted = gemini(original.clone());
    assert_eq!(
        adapted.schema,
        json!({
            "type": "object",
            "properties": {
                "from": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number", "description": "greater than 0"}},
                    "required": ["x"],
                    "description": "A point."
                },
                "to": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number", "description": "greater than 0"}},
                    "required": ["x"],
                    "description": "Where to go."
                },
                "note": {"type": "string", "maxLength": 20, "nullable": true}
            },
            "required": ["from"]
        })
    );
    assert!(adapted.dropped.is_empty(), "{:?}", adapted.dropped);
    round_trip(
        Dialect::Gemini,
        &original,
        json!({"from": {"x": 1}, "note": "hi"}),
        json!({"from": {"x": 1}, "note": "hi"}),
    );
}

#[test]
fn gemini_cuts_recursion_with_a_note() {
    let adapted = gemini(json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }
            }
        }
    }));
    let tree = &adapted.schema["properties"]["tree"];
    let second = &tree["properties"]["children"]["items"];
    assert_eq!(second["properties"]["name"], json!({"type": "string"}));
    assert!(second["properties"].get("children").is_none());
    assert!(
        mentions(
            &adapted,
            &[
                "`tree.children[].children`",
                "recursive Node",
                "cut after 2 levels"
            ]
        ),
        "{:?}",
        adapted.dropped
    );
}

#[test]
fn gemini_turns_other_enums_into_text_and_back() {
    let original = json!({
        "type": "object",
        "properties": {
            "size": {"type": "integer", "enum": [1, 2, 3], "default": 2},
            "flag": {"const": true},
            "mode": {"type": ["string", "null"], "enum": ["a", "b", null]}
        },
        "required": ["size", "flag"]
    });
    let adapted = gemini(original.clone());
    let p = &adapted.schema["properties"];
    assert_eq!(
        p["size"],
        json!({"type": "string", "enum": ["1", "2", "3"], "default": "2"})
    );
    assert_eq!(p["flag"], json!({"type": "string", "enum": ["true"]}));
    assert_eq!(
        p["mode"],
        json!({"type": "string", "enum": ["a", "b"], "nullable": true})
    );
    round_trip(
        Dialect::Gemini,
        &original,
        json!({"size": "3", "flag": "true", "mode": "b"}),
        json!({"size": 3, "flag": true, "mode": "b"}),
    );
}

#[test]
fn gemini_drops_what_has_no_form_with_notes() {
    let adapted = gemini(json!({
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "meta": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "empty": {"type": "object", "additionalProperties": false},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
            "n": {"type": "integer"}
        },
        "required": ["labels", "pair"]
    }));
    assert_eq!(
        adapted.schema,
        json!({
            "type": "object",
            "properties": {
                "meta": {"type": "object", "properties": {"a": {"type": "string"}}},
                "n": {"type": "integer"}
            }
        })
    );
    assert!(
        mentions(
            &adapted,
            &[
                "`labels` is a map with free keys (additionalProperties), which has no form in gemini; left out",
                "requires it"
            ]
        ),
        "{:?}",
        adapted.dropped
    );
    assert!(mentions(&adapted, &["`meta`: keys beyond"]));
    // `{}` is all an optional empty object could be: leaving it out loses nothing.
    assert!(!mentions(&adapted, &["`empty`"]));
    assert!(mentions(&adapted, &["`pair` is a tuple", "requires it"]));
}

#[test]
fn gemini_notes_a_required_empty_object() {
    let adapted = gemini(json!({
        "type": "object",
        "properties": {"card": {"type": "object", "properties": {}, "additionalProperties": false}},
        "required": ["card"]
    }));
    assert!(mentions(
        &adapted,
        &["`card` is an empty object", "requires it"]
    ));
}

#[test]
fn merging_ignores_additional_properties_true() {
    // GitHub's checks/update: alternatives that say `additionalProperties: true` next to
    // the body's own properties.
    let adapted = strict(json!({
        "type": "object",
        "properties": {
            "body": {
                "type": "object",
                "properties": {"status": {"type": "string"}, "conclusion": {"type": "string"}},
                "anyOf": [
                    {"properties": {"status": {"enum": ["completed"]}}, "additionalProperties": true, "required": ["conclusion"]},
                    {"properties": {"status": {"enum": ["queued"]}}, "additionalProperties": true}
                ]
            }
        },
        "required": ["body"]
    }));
    assert!(adapted.dropped.is_empty(), "{:?}", adapted.dropped);
    assert_eq!(
        adapted.schema["properties"]["body"]["anyOf"][0]["properties"]["status"],
        json!({"type": ["string", "null"], "enum": ["completed", null]})
    );
}

#[test]
fn gemini_keeps_only_its_formats_and_bounds() {
    let adapted = gemini(json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "at": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "format": "int64", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "ratio": {"type": "number", "format": "decimal", "multipleOf": 0.5},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true}
        }
    }));
    let p = &adapted.schema["properties"];
    assert_eq!(
        p["id"],
        json!({"type": "string", "description": "format: uuid"})
    );
    assert_eq!(p["at"], json!({"type": "string", "format": "date-time"}));
    assert_eq!(
        p["count"],
        json!({"type": "integer", "minimum": 1, "maximum": 9, "format": "int64"})
    );
    assert_eq!(
        p["ratio"],
        json!({"type": "number", "description": "a multiple of 0.5"})
    );
    assert_eq!(
        p["tags"],
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "items must be unique"})
    );
}

#[test]
fn gemini_alternatives_with_null_become_nullable_members() {
    let original = json!({
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "string"}, {"type": "integer", "enum": [1, 2]}, {"type": "null"}]}
        },
        "required": ["v"]
    });
    let adapted = gemini(original.clone());
    assert_eq!(
        adapted.schema["properties"]["v"],
        json!({"anyOf": [
            {"type": "string", "nullable": true},
            {"type": "string", "enum": ["1", "2"], "nullable": true}
        ]})
    );
    // `nullable` is not JSON Schema, so these are checked by restoring alone.
    for (sent, expected) in [
        (json!({"v": null}), json!({"v": null})),
        // The first alternative the text fits is taken: "2" is a string.
        (json!({"v": "2"}), json!({"v": "2"})),
        (json!({"v": "x"}), json!({"v": "x"})),
    ] {
        let arguments = sent.as_object().cloned().unwrap_or_default();
        let restored = Value::Object(restore_arguments(Dialect::Gemini, &original, arguments));
        assert_eq!(restored, expected);
        assert!(valid(&original, &restored));
    }
}

#[test]
fn gemini_root_without_arguments_stays_an_object() {
    let adapted = gemini(json!({"type": "object", "properties": {}}));
    assert_eq!(adapted.schema, json!({"type": "object", "properties": {}}));
}

// ---- whatever the input ----

#[test]
fn odd_inputs_give_an_acceptable_schema_and_notes() {
    let inputs = [
        json!(true),
        json!({"type": "string"}),
        json!({"type": "object", "properties": {"a": true, "b": false, "c": 3}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}, "required": ["a"]}),
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/x"}}}),
        json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}
        }),
        json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}
        }),
        json!({"type": "object", "properties": {"a": {"type": "integer", "enum": ["x"]}}}),
        json!({"type": "object", "properties": {"a": {"anyOf": []}, "b": {"type": "null"}}}),
    ];
    for input in inputs {
        for dialect in [Dialect::OpenaiStrict, Dialect::Gemini] {
            let adapted = checked(dialect, input.clone());
            assert!(
                !adapted.dropped.is_empty(),
                "{dialect}: {input} adapted silently to {}",
                adapted.schema
            );
            let restored = restore_arguments(dialect, &input, Default::default());
            assert!(restored.is_empty());
        }
    }
}

#[test]
fn deep_and_wide_inputs_are_bounded() {
    // Nested far past any limit, inline and through a chain of definitions.
    // Built by hand: `json!` would serialize the nested value recursively.
    let mut inline = json!({"type": "string"});
    for _ in 0..1_000 {
        let mut properties = serde_json::Map::new();
        properties.insert("n".into(), inline);
        let mut object = serde_json::Map::new();
        object.insert("type".into(), json!("object"));
        object.insert("properties".into(), Value::Object(properties));
        inline = Value::Object(object);
    }
    let mut defs = serde_json::Map::new();
    for i in 0..1_000 {
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"n": {"$ref": format!("#/$defs/D{}", i + 1)}, "v": {"type": "string"}}}),
        );
    }
    defs.insert("D1000".into(), json!({"type": "string"}));
    let chain =
        json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    // Every definition used twice by the next: 2^30 paths once inlined.
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = json!({"$ref": format!("#/$defs/W{}", i + 1), "description": "d"});
        defs.insert(
            format!("W{i}"),
            json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    defs.insert(
        "W30".into(),
        json!({"type": "object", "properties": {"x": {"type": "string"}}}),
    );
    let wide =
        json!({"type": "object", "properties": {"w": {"$ref": "#/$defs/W0"}}, "$defs": defs});
    for input in [inline, chain, wide] {
        for dialect in [Dialect::OpenaiStrict, Dialect::Gemini] {
            let started = std::time::Instant::now();
            // Not cloned: a debug build's recursive clone of 1,000 levels overflows.
            let adapted = adapt_input(dialect, &input);
            assert_eq!(violations(dialect, &adapted.schema), Vec::<String>::new());
            assert!(!adapted.dropped.is_empty());
            assert!(
                started.elapsed().as_secs() < 20,
                "{dialect} took {:?}",
                started.elapsed()
            );
        }
    }
}

// ---- violations ----

#[test]
fn strict_violations_name_each_broken_rule() {
    let found = violations(
        Dialect::OpenaiStrict,
        &json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "default": "x"},
                "b": {"type": "object", "properties": {"c": {"type": "string"}}},
                "d": {"$ref": "#/$defs/D", "description": "x"},
                "e": {"type": "array"},
                "f": {"type": "string", "format": "uri"},
                "g": {"type": ["string", "integer"]},
                "h": {"allOf": [{"type": "string"}]}
            },
            "required": ["a"],
            "$defs": {"D": {"type": "string"}}
        }),
    );
    let expect = [
        "keyword `default`",
        "#: required does not list exactly all properties",
        "#: an object without additionalProperties: false",
        "#/properties/b: an object without additionalProperties",
        "$ref with sibling keywords",
        "#/properties/e: an array without an items schema",
        "format \"uri\"",
        "a type list other than",
        "keyword `allOf`",
    ];
    for e in expect {
        assert!(found.iter().any(|f| f.contains(e)), "{e} not in {found:#?}");
    }
    assert!(
        violations(
            Dialect::OpenaiStrict,
            &json!({"anyOf": [{"type": "object"}]})
        )
        .iter()
        .any(|v| v.contains("root is an anyOf"))
    );
}

#[test]
fn gemini_violations_name_each_broken_rule() {
    let found = violations(
        Dialect::Gemini,
        &json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "b": {"type": "object", "additionalProperties": {"type": "string"}},
                "c": {"type": "integer", "enum": [1, 2]},
                "d": {"type": ["string", "null"]},
                "e": {"type": "string", "format": "uuid"},
                "f": {"type": "array"}
            },
            "required": ["a", "zz"],
            "$defs": {"A": {"type": "string"}}
        }),
    );
    let expect = [
        "keyword `$ref`",
        "keyword `$defs`",
        "keyword `additionalProperties`",
        "#/properties/b: an object without properties",
        "#/properties/c: enum other than strings",
        "#/properties/d: type",
        "format \"uuid\"",
        "#/properties/f: an array without items",
        "#: required names a property that is not listed",
    ];
    for e in expect {
        assert!(found.iter().any(|f| f.contains(e)), "{e} not in {found:#?}");
    }
}

#[test]
fn strict_violations_count_nesting_through_references() {
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = json!({"type": "object", "properties": {"n": deep}, "required": ["n"], "additionalProperties": false});
    }
    let schema = json!({
        "type": "object",
        "properties": {"r": {"$ref": "#/$defs/Deep"}},
        "required": ["r"],
        "additionalProperties": false,
        "$defs": {"Deep": deep}
    });
    let found = violations(Dialect::OpenaiStrict, &schema);
    assert!(found.iter().any(|f| f.contains("12 levels")), "{found:#?}");
}

// ---- round trips of generated values ----

/// A schema with a bit of everything the dialects rewrite.
fn kitchen_sink() -> Value {
    json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string", "minLength": 1},
            "size": {"type": "integer", "enum": [1, 2, 3]},
            "note": {"type": ["string", "null"]},
            "target": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "slug": {"type": "string"}},
                "anyOf": [{"required": ["id"]}, {"required": ["slug"]}]
            },
            "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}, "maxItems": 3},
            "pet": {
                "allOf": [{"$ref": "#/$defs/Point"}, {"properties": {"label": {"type": "string", "enum": ["a", "b"]}}}]
            },
            "tree": {"$ref": "#/$defs/Node"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "value": {"anyOf": [{"type": "boolean"}, {"type": "number", "minimum": 0}, {"type": "null"}]}
        },
        "required": ["owner", "target"],
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0}},
                "required": ["x"]
            },
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                },
                "required": ["name"]
            }
        }
    })
}

/// Every property of `value` whose adapted schema accepts null, set to null.
fn nulls_where_allowed(schema: &Value, root: &Value, value: &mut Value) {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or(schema),
        None => schema,
    };
    if let (Value::Object(map), Some(Value::Object(properties))) =
        (&mut *value, schema.get("properties"))
    {
        for (name, item) in map.iter_mut() {
            if let Some(sub) = properties.get(name) {
                if valid_here(root, sub, &Value::Null) {
                    *item = Value::Null;
                } else {
                    nulls_where_allowed(sub, root, item);
                }
            }
        }
    }
}

fn valid_here(root: &Value, schema: &Value, instance: &Value) -> bool {
    let mut probe = schema.clone();
    if let (Value::Object(probe), Some(defs)) = (&mut probe, root.get("$defs")) {
        probe.insert("$defs".into(), defs.clone());
    }
    valid(&probe, instance)
}

#[test]
fn generated_arguments_round_trip_in_every_dialect() {
    let original = kitchen_sink();
    for dialect in [Dialect::OpenaiStrict, Dialect::Gemini] {
        let adapted = checked(dialect, original.clone());
        let generated = example::example(&adapted.schema).expect("a value");
        let mut nulled = generated.clone();
        nulls_where_allowed(&adapted.schema, &adapted.schema, &mut nulled);
        for sent in [generated, nulled] {
            assert!(
                valid(&adapted.schema, &sent),
                "{dialect}: {sent} not valid for the adapted schema"
            );
            let Value::Object(arguments) = sent.clone() else {
                panic!("object")
            };
            let restored = Value::Object(restore_arguments(dialect, &original, arguments));
            let validator = jsonschema::draft202012::new(&original).expect("compiles");
            let errors: Vec<String> = validator
                .iter_errors(&restored)
                .map(|e| format!("{} at {}: {e}", e.schema_path(), e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{dialect}: {sent} restored to {restored}, not valid for the original: {errors:#?}"
            );
        }
    }
}
