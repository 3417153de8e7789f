//! Hoisting on small schemas: what moves, what never does, names, sizes, and that
//! validation and the client dialects see the same schema.

use serde_json::{Value, json};

use super::{Hoisted, Scope, hoist};
use crate::config::Dialect;
use crate::schema::dialect::adapt_input;

/// A user object big enough to be worth a definition.
fn user() -> Value {
    json!({
        "type": "object",
        "properties": {
            "login": {"type": "string", "description": "The account name"},
            "id": {"type": "integer", "minimum": 1},
            "email": {"type": ["string", "null"], "format": "email"}
        },
        "required": ["login", "id"],
        "additionalProperties": false
    })
}

fn hoisted(mut schema: Value) -> (Value, Hoisted) {
    let sizes = hoist(&mut schema, Scope::InsideProperties);
    (schema, sizes)
}

fn len(schema: &Value) -> usize {
    serde_json::to_string(schema).map_or(0, |text| text.len())
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::new(schema).expect("a valid schema")
}

#[test]
fn a_subtree_repeated_in_one_tool_becomes_one_definition() {
    let schema = json!({
        "type": "object",
        "properties": {"commit": {"type": "object", "properties": {
            "author": user(), "committer": user(), "reviewers": {"type": "array", "items": user()}
        }}},
        "additionalProperties": false
    });
    let before = len(&schema);
    let (after, sizes) = hoisted(schema);
    let commit = &after["properties"]["commit"]["properties"];
    assert_eq!(commit["author"], json!({"$ref": "#/$defs/author"}));
    assert_eq!(commit["committer"], json!({"$ref": "#/$defs/author"}));
    assert_eq!(
        commit["reviewers"]["items"],
        json!({"$ref": "#/$defs/author"})
    );
    assert_eq!(after["$defs"]["author"], user());
    assert_eq!(sizes.bytes_before, before);
    assert_eq!(sizes.bytes_after, len(&after));
    assert!(sizes.bytes_after < sizes.bytes_before);
}

#[test]
fn validation_is_unchanged() {
    let schema = json!({
        "type": "object",
        "properties": {"body": {"type": "object", "properties": {
            "owner": user(), "members": {"type": "array", "items": user()},
            "lead": {"anyOf": [user(), {"type": "null"}]}
        }, "unevaluatedProperties": false}},
        "required": ["body"],
        "additionalProperties": false
    });
    let original = validator(&schema);
    let (after, sizes) = hoisted(schema);
    assert!(sizes.saved() > 0);
    let published = validator(&after);
    let good = json!({"body": {"owner": {"login": "a", "id": 1}, "members": [{"login": "b", "id": 2, "email": null}], "lead": null}});
    let cases = [
        good.clone(),
        json!({"body": {"owner": {"login": "a", "id": 0}}}),
        json!({"body": {"members": [{"login": "b"}]}}),
        json!({"body": {"lead": {"login": "c", "id": 3, "extra": true}}}),
        json!({"body": {"owner": {"login": "a", "id": 1}, "other": 1}}),
        json!({"body": {"lead": {"login": "c", "id": 3, "email": 5}}}),
    ];
    for case in &cases {
        assert_eq!(
            original.is_valid(case),
            published.is_valid(case),
            "{case} in {after}"
        );
    }
    assert!(published.is_valid(&good));
    assert!(!published.is_valid(&cases[3]));
}

#[test]
fn small_repeats_stay_inline() {
    // 32 bytes twice: two `$ref`s and a definition would take more.
    let schema = json!({"type": "object", "properties": {"body": {"properties": {
        "first": {"type": "string", "maxLength": 10},
        "second": {"type": "string", "maxLength": 10}
    }}}});
    let (after, sizes) = hoisted(schema.clone());
    assert_eq!(after, schema);
    assert_eq!(sizes.bytes_before, sizes.bytes_after);
}

#[test]
fn values_that_are_not_schemas_are_never_hoisted() {
    let value = json!({"login": "octocat", "id": 583231, "email": "octo@example.com"});
    let schema = json!({"type": "object", "properties": {"body": {"type": "object", "properties": {
        "a": {"type": "object", "default": value, "examples": [value]},
        "b": {"type": "object", "default": value, "const": value},
        "c": {"enum": [value, value]}
    }}}});
    let (after, _) = hoisted(schema.clone());
    assert_eq!(after, schema);
}

#[test]
fn arguments_keep_their_keywords_in_place_and_what_is_inside_them_moves() {
    let argument = json!({"type": "object", "description": "who", "properties": {"user": user()}});
    let schema = json!({"type": "object", "properties": {"first": argument, "second": argument}});
    let (after, _) = hoisted(schema);
    for name in ["first", "second"] {
        assert_eq!(after["properties"][name]["description"], "who");
        assert_eq!(
            after["properties"][name]["properties"]["user"],
            json!({"$ref": "#/$defs/user"})
        );
    }
}

#[test]
fn everywhere_the_root_properties_move_too() {
    let schema = json!({"type": "object", "properties": {"owner": user(), "assignee": user()}});
    let mut everywhere = schema.clone();
    hoist(&mut everywhere, Scope::Everywhere);
    assert_eq!(
        everywhere["properties"]["assignee"],
        json!({"$ref": "#/$defs/owner"})
    );
    let (inside, sizes) = hoisted(schema.clone());
    assert_eq!(inside, schema);
    assert_eq!(sizes.saved(), 0);
}

#[test]
fn subtrees_with_an_identity_or_a_scope_of_their_own_stay() {
    for keyword in ["$id", "$anchor", "$dynamicAnchor"] {
        let mut marked = user();
        marked["properties"]["login"][keyword] = json!("thing");
        let schema = json!({"type": "object", "properties": {"body": {"type": "object", "properties": {
            "a": marked, "b": marked, "c": marked
        }}}});
        let (after, _) = hoisted(schema.clone());
        assert_eq!(after, schema, "{keyword}");
    }
    let mut scoped = user();
    scoped["$defs"] = json!({"x": {"type": "string"}});
    let schema = json!({"type": "object", "properties": {"body": {"properties": {"a": scoped, "b": scoped}}}});
    let (after, _) = hoisted(schema.clone());
    assert_eq!(after, schema);
}

#[test]
fn a_schema_with_a_ref_into_its_own_properties_is_left_alone() {
    let schema = json!({"type": "object", "properties": {"body": {"properties": {
        "a": user(), "b": user(), "c": {"$ref": "#/properties/body/properties/a"}
    }}}});
    let (after, sizes) = hoisted(schema.clone());
    assert_eq!(after, schema);
    assert_eq!(sizes.saved(), 0);
}

#[test]
fn names_never_clash_with_existing_definitions_and_refs_to_them_still_hold() {
    let node = json!({"type": "object", "properties": {"next": {"$ref": "#/$defs/owner"}, "label": {"type": "string"}}});
    let schema = json!({
        "type": "object",
        "properties": {"body": {"properties": {"owner": user(), "admin": user(), "node": {"$ref": "#/$defs/owner"}}}},
        "$defs": {"owner": node}
    });
    let (after, _) = hoisted(schema);
    assert_eq!(after["$defs"]["owner"], node);
    assert_eq!(after["$defs"]["owner_2"], user());
    assert_eq!(
        after["properties"]["body"]["properties"]["admin"],
        json!({"$ref": "#/$defs/owner_2"})
    );
}

#[test]
fn a_copy_of_an_existing_definition_refers_to_it() {
    let schema = json!({
        "type": "object",
        "properties": {"body": {"properties": {"a": user(), "b": {"$ref": "#/$defs/User"}}}},
        "$defs": {"User": user()}
    });
    let (after, sizes) = hoisted(schema);
    assert_eq!(
        after["properties"]["body"]["properties"]["a"],
        json!({"$ref": "#/$defs/User"})
    );
    assert_eq!(after["$defs"].as_object().map(|d| d.len()), Some(1));
    assert_eq!(sizes.bytes_after, len(&after));
}

#[test]
fn the_largest_repeat_goes_first_and_takes_its_nested_repeats_along() {
    let team = json!({"type": "object", "title": "Team", "properties": {
        "lead": user(), "deputy": user(), "name": {"type": "string", "maxLength": 100}
    }});
    let schema = json!({"type": "object", "properties": {"body": {"properties": {
        "home": team, "away": team, "referee": user()
    }}}});
    let (after, sizes) = hoisted(schema.clone());
    let body = &after["properties"]["body"]["properties"];
    assert_eq!(body["home"], json!({"$ref": "#/$defs/Team"}));
    assert_eq!(body["away"], json!({"$ref": "#/$defs/Team"}));
    // The user is left twice in Team and once beside it: a definition of its own.
    assert_eq!(
        after["$defs"]["Team"]["properties"]["lead"],
        json!({"$ref": "#/$defs/lead"})
    );
    assert_eq!(body["referee"], json!({"$ref": "#/$defs/lead"}));
    assert_eq!(sizes.bytes_after, len(&after));
    // Same input, same text.
    let (again, _) = hoisted(schema);
    assert_eq!(
        serde_json::to_string(&after).ok(),
        serde_json::to_string(&again).ok()
    );
}

#[test]
fn unnamed_repeats_are_shared_n_and_items_are_named_after_their_array() {
    let schema = json!({"type": "object", "properties": {"body": {"properties": {
        "tags": {"type": "array", "items": user()},
        "either": {"anyOf": [user(), {"type": "string"}]}
    }}}});
    let (after, _) = hoisted(schema);
    assert_eq!(
        after["properties"]["body"]["properties"]["tags"]["items"],
        json!({"$ref": "#/$defs/tags_item"})
    );
    let schema =
        json!({"type": "object", "properties": {"body": {"anyOf": [user(), {"allOf": [user()]}]}}});
    let (after, _) = hoisted(schema);
    assert_eq!(
        after["properties"]["body"]["anyOf"][0],
        json!({"$ref": "#/$defs/shared1"})
    );
}

#[test]
fn the_client_dialects_read_a_hoisted_schema_as_the_inline_one() {
    let schema = json!({"type": "object", "properties": {"body": {"type": "object", "properties": {
        "owner": user(), "members": {"type": "array", "items": user()}
    }, "required": ["owner"]}}, "required": ["body"], "additionalProperties": false});
    let (after, sizes) = hoisted(schema.clone());
    assert!(sizes.saved() > 0);
    let gemini = adapt_input(Dialect::Gemini, &after);
    assert_eq!(gemini.schema, adapt_input(Dialect::Gemini, &schema).schema);
    assert!(!gemini.schema.to_string().contains("$ref"));
    let strict = adapt_input(Dialect::OpenaiStrict, &after);
    assert!(
        crate::schema::dialect::violations(Dialect::OpenaiStrict, &strict.schema).is_empty(),
        "{}",
        strict.schema
    );
    let strict_validator = validator(&strict.schema);
    let member = json!({"login": "a", "id": 1, "email": null});
    assert!(strict_validator.is_valid(&json!({"body": {"owner": member, "members": [member]}})));
    assert!(
        !strict_validator
            .is_valid(&json!({"body": {"owner": {"login": "a"}, "members": [member]}}))
    );
}

#[test]
fn subtrees_alike_at_both_ends_are_told_apart_by_their_middle() {
    // Same length, the same 32 bytes at each end, one character apart in the middle: two
    // copies of each are hoisted into two definitions, not one.
    let long = |middle: &str| {
        json!({"type": "object", "description": format!("aaaaaaaaaaaaaaaaaaaa{middle}aaaaaaaaaaaaaaaaaaaaaaaa"),
               "additionalProperties": false})
    };
    let (first, second) = (long("x"), long("y"));
    let schema = json!({
        "type": "object",
        "properties": {"wrap": {"type": "object", "properties": {
            "a": first, "b": first, "c": second, "d": second
        }}}
    });
    let (after, sizes) = hoisted(schema);
    let wrapped = &after["properties"]["wrap"]["properties"];
    let (a, c) = (&wrapped["a"]["$ref"], &wrapped["c"]["$ref"]);
    assert!(a.is_string() && c.is_string(), "{after}");
    assert_ne!(a, c, "{after}");
    assert_eq!(wrapped["b"]["$ref"], *a);
    assert_eq!(wrapped["d"]["$ref"], *c);
    assert_eq!(after["$defs"].as_object().map(|d| d.len()), Some(2));
    assert_eq!(sizes.bytes_after, len(&after));
}
