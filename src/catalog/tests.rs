use serde_json::{Value, json};
use url::Url;

use super::*;
use crate::config::ToolSettings;
use crate::spec::{self, DocumentSet, Style};

fn build_one(spec: Value) -> (Catalog, Report) {
    build_with(spec, ToolSettings::default())
}

fn build_with(spec: Value, settings: ToolSettings) -> (Catalog, Report) {
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let input = ApiInput::new("t", Some(&docs));
    build(&[input], &settings).expect("catalog builds")
}

fn openapi(paths: Value) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://api.example.test/v1/"}],
        "paths": paths,
    })
}

fn only(catalog: &Catalog) -> &Tool {
    assert_eq!(catalog.len(), 1, "expected one tool");
    &catalog.tools()[0]
}

#[test]
fn body_property_keeps_its_name_and_the_colliding_parameter_is_renamed() {
    let (catalog, report) = build_one(openapi(json!({
        "/items/{id}": {"put": {
            "operationId": "updateItem",
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "name", "in": "query", "schema": {"type": "string"}}
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["name"],
                "properties": {"id": {"type": "string"}, "name": {"type": "string"}}
            }}}}
        }}
    })));
    let tool = only(&catalog);
    let input = tool.input_schema.to_value();
    let props = input["properties"].as_object().expect("properties");
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(names, ["id__path", "name__query", "id", "name"]);
    assert_eq!(props["id"], json!({"type": "string"}));
    assert_eq!(props["id__path"], json!({"type": "integer"}));
    assert_eq!(
        tool.input_schema.to_value()["required"],
        json!(["id__path", "name"])
    );

    let args = &tool.route.arguments;
    let path = args.get("id__path").expect("binding");
    assert_eq!(
        (path.location, path.wire_name.as_str()),
        (Location::Path, "id")
    );
    let field = args.get("id").expect("binding");
    assert_eq!(
        (field.location, field.wire_name.as_str()),
        (Location::BodyField, "id")
    );
    assert_eq!(
        args.by_wire(Location::Query, "name")
            .map(|b| b.argument.as_str()),
        Some("name__query")
    );
    let notes = &report.apis[0].operations[0].notes;
    assert!(
        notes.iter().any(|n| n.contains("\"id__path\"")),
        "{notes:?}"
    );
}

#[test]
fn argument_map_is_exact_and_reversible() {
    let (catalog, _) = build_one(openapi(json!({
        "/a/{x}": {"post": {
            "parameters": [
                {"name": "x", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "x", "in": "query", "schema": {"type": "string"}},
                {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                {"name": "session", "in": "cookie", "schema": {"type": "string"}}
            ],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"x": {"type": "boolean"}}}}}}
        }}
    })));
    let tool = only(&catalog);
    let input = tool.input_schema.to_value();
    let props = input["properties"].as_object().expect("properties");
    let bindings = &tool.route.arguments.bindings;
    assert_eq!(props.len(), bindings.len(), "one binding per argument");
    for binding in bindings {
        assert!(props.contains_key(&binding.argument), "{binding:?}");
        assert_eq!(
            tool.route
                .arguments
                .by_wire(binding.location, &binding.wire_name),
            Some(binding),
            "reverse lookup"
        );
    }
    let mut wires: Vec<(Location, &str)> = bindings
        .iter()
        .map(|b| (b.location, b.wire_name.as_str()))
        .collect();
    wires.sort();
    wires.dedup();
    assert_eq!(
        wires.len(),
        bindings.len(),
        "no two bindings share a wire slot"
    );
}

#[test]
fn non_object_bodies_become_one_body_argument() {
    let (catalog, _) = build_one(openapi(json!({
        "/tags": {"post": {
            "operationId": "setTags",
            "requestBody": {"required": true, "description": "Tags to set", "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}
        }},
        "/note": {"put": {
            "operationId": "putNote",
            "requestBody": {"content": {"text/plain": {}}}
        }}
    })));
    let tags = catalog.get("setTags").expect("tool");
    assert_eq!(
        tags.input_schema.to_value()["properties"]["body"],
        json!({"type": "array", "items": {"type": "string"}, "description": "Tags to set"})
    );
    assert_eq!(tags.input_schema.to_value()["required"], json!(["body"]));
    let body = tags.route.body.as_ref().expect("body plan");
    assert!(!body.flattened);
    assert_eq!(
        tags.route.arguments.get("body").map(|b| b.location),
        Some(Location::Body)
    );

    let note = catalog.get("putNote").expect("tool");
    assert_eq!(
        note.input_schema.to_value()["properties"]["body"],
        json!({
            "type": "string",
            "contentMediaType": "text/plain",
            "description": "The request body as text, sent as it is as text/plain."
        })
    );
    assert!(
        note.input_schema.to_value().get("required").is_none(),
        "optional body"
    );
    assert_eq!(
        note.route.body.as_ref().map(|b| b.media_type.as_str()),
        Some("text/plain")
    );
}

#[test]
fn object_body_with_open_additional_properties_is_not_flattened() {
    let (catalog, _) = build_one(openapi(json!({
        "/labels": {"put": {
            "requestBody": {"content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": {"type": "string"}
            }}}}
        }}
    })));
    let tool = only(&catalog);
    assert_eq!(
        tool.input_schema.to_value()["properties"]["body"],
        json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
}

#[test]
fn all_of_object_bodies_are_merged_into_arguments() {
    let (catalog, _) = build_one(json!({
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "paths": {"/pets": {"post": {
            "operationId": "addPet",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "allOf": [
                    {"$ref": "#/components/schemas/NewPet"},
                    {"type": "object", "required": ["tag"], "properties": {"tag": {"type": "string"}}}
                ]
            }}}}
        }}},
        "components": {"schemas": {"NewPet": {
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}
        }}}
    }));
    let tool = only(&catalog);
    assert_eq!(
        tool.input_schema.to_value(),
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
            "required": ["name", "tag"],
            "additionalProperties": false
        })
    );
}

#[test]
fn json_is_preferred_over_form_and_multipart_and_alternatives_are_noted() {
    let (catalog, report) = build_one(openapi(json!({
        "/up": {"post": {
            "operationId": "up",
            "requestBody": {"content": {
                "application/xml": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "multipart/form-data": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
            }}
        }}
    })));
    let tool = only(&catalog);
    assert_eq!(
        tool.route.body.as_ref().map(|b| b.media_type.as_str()),
        Some("application/x-www-form-urlencoded")
    );
    let notes = &report.apis[0].operations[0].notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("also accepted: application/xml, multipart/form-data")),
        "{notes:?}"
    );
}

#[test]
fn form_encoding_styles_reach_the_argument_map() {
    let (catalog, _) = build_one(openapi(json!({
        "/charges": {"post": {
            "operationId": "createCharge",
            "requestBody": {"content": {"application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": {
                    "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                    "expand": {"type": "array", "items": {"type": "string"}}
                }},
                "encoding": {"metadata": {"style": "deepObject", "explode": true}, "expand": {"explode": true}}
            }}}
        }}
    })));
    let tool = only(&catalog);
    let metadata = tool.route.arguments.get("metadata").expect("binding");
    assert_eq!(
        (metadata.style, metadata.explode),
        (Style::DeepObject, true)
    );
    let expand = tool.route.arguments.get("expand").expect("binding");
    assert_eq!((expand.style, expand.explode), (Style::Form, true));
}

#[test]
fn reserved_headers_are_ignored_and_unusual_names_are_made_valid() {
    let (catalog, report) = build_one(openapi(json!({
        "/calls": {"get": {
            "operationId": "listCalls",
            "parameters": [
                {"name": "Accept", "in": "header", "schema": {"type": "string"}},
                {"name": "authorization", "in": "header", "schema": {"type": "string"}},
                {"name": "StartTime<", "in": "query", "schema": {"type": "string"}},
                {"name": "StartTime>", "in": "query", "schema": {"type": "string"}},
                {"name": "expand[]", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}}
            ]
        }}
    })));
    let tool = only(&catalog);
    let input = tool.input_schema.to_value();
    let names: Vec<&str> = input["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["StartTime_lt", "StartTime_gt", "expand"]);
    assert_eq!(
        tool.route
            .arguments
            .get("StartTime_gt")
            .map(|b| b.wire_name.as_str()),
        Some("StartTime>")
    );
    let notes = &report.apis[0].operations[0].notes;
    assert_eq!(
        notes.iter().filter(|n| n.contains("ignored")).count(),
        2,
        "{notes:?}"
    );
}

#[test]
fn path_template_and_parameters_are_reconciled() {
    let (catalog, report) = build_one(openapi(json!({
        "/orgs/{org}/repos": {"get": {
            "operationId": "listRepos",
            "parameters": [{"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}}]
        }}
    })));
    let tool = only(&catalog);
    assert_eq!(
        tool.input_schema.to_value()["properties"],
        json!({"org": {"type": "string"}})
    );
    assert_eq!(tool.input_schema.to_value()["required"], json!(["org"]));
    let notes = &report.apis[0].operations[0].notes;
    assert!(notes.iter().any(|n| n.contains("{org}")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("\"owner\"")), "{notes:?}");
}

#[test]
fn operation_level_parameters_override_path_level_ones() {
    let (catalog, _) = build_one(openapi(json!({
        "/items": {
            "parameters": [
                {"name": "limit", "in": "query", "description": "path level", "schema": {"type": "integer"}},
                {"name": "trace", "in": "header", "schema": {"type": "string"}}
            ],
            "get": {"operationId": "list", "parameters": [
                {"name": "limit", "in": "query", "required": true, "description": "operation level", "schema": {"type": "integer", "maximum": 100}}
            ]}
        }
    })));
    let tool = only(&catalog);
    assert_eq!(
        tool.input_schema.to_value()["properties"]["limit"],
        json!({"type": "integer", "maximum": 100, "description": "operation level"})
    );
    assert_eq!(tool.input_schema.to_value()["required"], json!(["limit"]));
    assert!(
        tool.input_schema.to_value()["properties"]
            .get("trace")
            .is_some()
    );
}

#[test]
fn annotations_follow_the_http_method() {
    let (catalog, _) = build_one(openapi(json!({
        "/r": {
            "get": {"operationId": "g"}, "head": {"operationId": "h"}, "options": {"operationId": "o"},
            "post": {"operationId": "p"}, "put": {"operationId": "u"},
            "patch": {"operationId": "a"}, "delete": {"operationId": "d"}
        }
    })));
    let hints = |name: &str| {
        let a = catalog.get(name).expect("tool").annotations;
        (
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        )
    };
    assert_eq!(hints("g"), (true, false, true, true));
    assert_eq!(hints("h"), (true, false, true, true));
    assert_eq!(hints("o"), (true, false, true, true));
    assert_eq!(hints("p"), (false, false, false, true));
    assert_eq!(hints("u"), (false, true, true, true));
    assert_eq!(hints("a"), (false, true, false, true));
    assert_eq!(hints("d"), (false, true, true, true));
    let wire = catalog.get("g").expect("tool").to_mcp();
    assert_eq!(
        wire["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
}

#[test]
fn descriptions_combine_summary_and_description_and_are_never_empty() {
    let long = "word ".repeat(400);
    let (catalog, _) = build_with(
        openapi(json!({
            "/a": {"get": {"operationId": "both", "summary": "  List things ", "description": "Lists\nall things."}},
            "/b": {"get": {"operationId": "none"}},
            "/c": {"get": {"operationId": "old", "summary": "Old way", "deprecated": true}},
            "/d": {"get": {"operationId": "long", "description": long}}
        })),
        ToolSettings {
            max_description_length: 100,
            ..ToolSettings::default()
        },
    );
    let both = catalog.get("both").expect("tool");
    assert_eq!(both.title.as_deref(), Some("List things"));
    assert_eq!(both.description, "List things\n\nLists\nall things.");
    assert_eq!(catalog.get("none").expect("tool").description, "GET /b");
    assert_eq!(catalog.get("none").expect("tool").title, None);
    assert_eq!(
        catalog.get("old").expect("tool").description,
        "[DEPRECATED] Old way"
    );
    let cut = &catalog.get("long").expect("tool").description;
    assert!(cut.chars().count() <= 100, "{}", cut.len());
    assert!(cut.ends_with("word…"), "cut at a word boundary: {cut:?}");
}

#[test]
fn output_schema_comes_from_the_first_2xx_json_response_and_is_wrapped_when_not_an_object() {
    let (catalog, _) = build_one(openapi(json!({
        "/list": {"get": {"operationId": "list", "responses": {
            "404": {"description": "no", "content": {"application/json": {"schema": {"type": "object"}}}},
            "default": {"description": "err", "content": {"application/json": {"schema": {"type": "object"}}}},
            "201": {"description": "also", "content": {"application/json": {"schema": {"type": "object", "properties": {"late": {"type": "string"}}}}}},
            "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"type": "integer"}}}}}
        }}},
        "/one": {"get": {"operationId": "one", "responses": {
            "200": {"description": "ok", "content": {"application/vnd.api+json": {"schema": {
                "type": "object", "required": ["id"], "additionalProperties": false,
                "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "nullable": true}}
            }}}}
        }}},
        "/text": {"get": {"operationId": "text", "responses": {
            "200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}}
        }}}
    })));
    let list = catalog.get("list").expect("tool");
    assert_eq!(
        list.output_schema.as_ref().map(SchemaText::to_value),
        Some(
            json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "integer"}}}})
        )
    );
    assert!(list.route.output.as_ref().is_some_and(|o| o.wrapped));
    let one = catalog.get("one").expect("tool");
    assert_eq!(
        one.output_schema.as_ref().map(SchemaText::to_value),
        Some(
            json!({"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": ["string", "null"]}}})
        )
    );
    assert!(one.route.output.as_ref().is_some_and(|o| !o.wrapped));
    assert_eq!(catalog.get("text").expect("tool").output_schema, None);
}

#[test]
fn large_output_schemas_are_relaxed_to_fit_the_budget() {
    let mut properties = serde_json::Map::new();
    for i in 0..40 {
        properties.insert(
            format!("field{i}"),
            json!({"type": "object", "description": "x".repeat(50), "properties": {"inner": {"type": "object", "properties": {"leaf": {"type": "string", "description": "y".repeat(50)}}}}}),
        );
    }
    let spec = openapi(json!({"/big": {"get": {"operationId": "big", "responses": {
        "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": properties}}}}
    }}}}));
    let (catalog, report) = build_with(
        spec.clone(),
        ToolSettings {
            max_output_schema_bytes: 4096,
            ..ToolSettings::default()
        },
    );
    let out = catalog
        .get("big")
        .expect("tool")
        .output_schema
        .as_ref()
        .map(SchemaText::to_value)
        .expect("output");
    let size = serde_json::to_string(&out).expect("json").len();
    assert!(size <= 4096, "{size}");
    assert_eq!(
        out["properties"].as_object().map(|p| p.len()),
        Some(40),
        "top level kept"
    );
    let notes = &report.apis[0].operations[0].notes;
    assert!(
        notes.iter().any(|n| n.contains("relaxed below depth")),
        "{notes:?}"
    );

    let (unlimited, _) = build_with(
        spec,
        ToolSettings {
            max_output_schema_bytes: 0,
            ..ToolSettings::default()
        },
    );
    let full = unlimited
        .get("big")
        .expect("tool")
        .output_schema
        .as_ref()
        .map(SchemaText::to_value)
        .expect("output");
    // The 40 equal fields are one definition now (hoisted), read through their `$ref`.
    assert_eq!(
        full["properties"]["field7"],
        json!({"$ref": "#/$defs/field0"})
    );
    assert_eq!(
        full["$defs"]["field0"]["properties"]["inner"]["properties"]["leaf"]["type"],
        "string"
    );
}

/// A body whose `address` argument holds a deep, shared structure (a person with a
/// manager who is a person…), as Microsoft Graph's entities do.
fn deep_body_spec() -> Value {
    let mut spec = openapi(json!({"/people/{id}": {"patch": {
        "operationId": "updatePerson",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "required": ["name"],
            "properties": {
                "name": {"type": "string", "description": "Full name."},
                "address": {"$ref": "#/components/schemas/Address"},
                "manager": {"$ref": "#/components/schemas/Person"}
            }
        }}}},
        "responses": {"204": {"description": "updated"}}
    }}}));
    let mut person = serde_json::Map::new();
    for i in 0..12 {
        person.insert(
            format!("attribute{i}"),
            json!({"type": "string", "description": format!("Attribute {i}: {}", "words ".repeat(20))}),
        );
    }
    person.insert(
        "address".into(),
        json!({"$ref": "#/components/schemas/Address"}),
    );
    person.insert(
        "manager".into(),
        json!({"$ref": "#/components/schemas/Person"}),
    );
    spec["components"] = json!({"schemas": {
        "Person": {"type": "object", "description": "A person.", "properties": person},
        "Address": {"type": "object", "description": "A postal address.",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "minLength": 2},
                "geo": {"type": "object", "required": ["lat"], "properties": {
                    "lat": {"type": "number", "minimum": -90, "maximum": 90},
                    "lon": {"type": "number"}
                }}
            }}
    }});
    spec
}

/// The validator of argument `name`'s full schema, kept because the tool was relaxed.
fn full_argument_validator(tool: &crate::catalog::Tool, name: &str) -> jsonschema::Validator {
    let full = tool.route.full_input.as_ref().expect("full input kept");
    let index = tool
        .route
        .arguments
        .bindings
        .iter()
        .position(|b| b.argument == name)
        .expect("binding");
    let schema = full
        .argument_schema(index)
        .unwrap_or_else(|| panic!("full schema of {name}"));
    jsonschema::draft202012::new(&schema).expect("compiles")
}

#[test]
fn an_input_schema_over_its_budget_is_relaxed_and_kept_in_full_for_checking() {
    let budget = 1500;
    let (catalog, report) = build_with(
        deep_body_spec(),
        ToolSettings {
            max_input_schema_bytes: budget,
            ..ToolSettings::default()
        },
    );
    let tool = catalog.get("updatePerson").expect("tool");
    let published = tool.input_schema.to_value();
    assert!(
        tool.input_schema.as_str().len() <= budget,
        "{} bytes: {published}",
        tool.input_schema.as_str().len()
    );
    // Every argument is still there, with its type; what was cut says so.
    let properties = published["properties"].as_object().expect("properties");
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(names, ["id", "name", "address", "manager"]);
    assert_eq!(published["required"], json!(["id", "name"]));
    assert_eq!(properties["name"]["type"], "string");
    let text = tool.input_schema.as_str();
    assert!(
        text.contains("nested fields not listed")
            && text.contains("checked against the full schema"),
        "{text}"
    );
    // The full schemas of what was cut are kept for the dispatcher, and the report says
    // what happened.
    let relaxed = report.apis[0].operations[0]
        .relaxed_input
        .as_ref()
        .expect("relaxation reported");
    assert!(relaxed.full_bytes > budget && relaxed.published_bytes <= budget);
    assert!(
        relaxed.arguments.contains(&"manager".to_string()),
        "{relaxed:?}"
    );
    let validator = full_argument_validator(tool, "manager");
    assert!(validator.is_valid(&json!({"manager": {"address": {"city": "Paris"}}})));
    assert!(!validator.is_valid(&json!({"manager": {"address": {"city": "P"}}})));
    assert!(report.render().contains("inputSchema relaxed below depth"));

    // Unlimited: the same tool, nothing relaxed, nothing kept on the side.
    let (unlimited, report) = build_with(
        deep_body_spec(),
        ToolSettings {
            max_input_schema_bytes: 0,
            ..ToolSettings::default()
        },
    );
    let tool = unlimited.get("updatePerson").expect("tool");
    assert!(tool.input_schema.as_str().len() > budget);
    assert!(tool.route.full_input.is_none());
    assert!(report.apis[0].operations[0].relaxed_input.is_none());
}

/// A body made of components, as Microsoft Graph writes its entities (`allOf: [entity,
/// {…}]`), is flattened into arguments; when it is relaxed, its full schema has the same
/// arguments, so the deep ones are still checked in full, and the full inputSchema the
/// selftest generates from resolves every reference.
#[test]
fn a_relaxed_body_made_of_components_keeps_its_arguments_checked_in_full() {
    let mut spec = deep_body_spec();
    spec["paths"]["/people/{id}"]["patch"]["requestBody"]["content"]["application/json"]["schema"] =
        json!({"$ref": "#/components/schemas/PersonUpdate"});
    spec["components"]["schemas"]["Entity"] =
        json!({"type": "object", "properties": {"etag": {"type": "string"}}});
    spec["components"]["schemas"]["PersonUpdate"] = json!({"allOf": [
        {"$ref": "#/components/schemas/Entity"},
        {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/components/schemas/Address"},
            "manager": {"$ref": "#/components/schemas/Person"}
        }}
    ]});
    let budget = 1500;
    let (catalog, report) = build_with(
        spec,
        ToolSettings {
            max_input_schema_bytes: budget,
            ..ToolSettings::default()
        },
    );
    let tool = catalog.get("updatePerson").expect("tool");
    let published = tool.input_schema.to_value();
    let names: Vec<&str> = published["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["id", "etag", "name", "address", "manager"]);
    let relaxed = report.apis[0].operations[0]
        .relaxed_input
        .as_ref()
        .expect("relaxed");
    assert!(
        relaxed.arguments.contains(&"manager".to_string()),
        "{relaxed:?}"
    );
    let validator = full_argument_validator(tool, "manager");
    let deep =
        |city: &str| json!({"manager": {"manager": {"manager": {"address": {"city": city}}}}});
    assert!(validator.is_valid(&deep("Paris")));
    assert!(!validator.is_valid(&deep("P")));
    // The schema the selftest generates arguments from: the published one with the full
    // arguments; every `$ref` in it resolves, and what it generates is accepted.
    let whole = tool.full_input_schema();
    let validator = jsonschema::draft202012::new(&whole).expect("full inputSchema compiles");
    let arguments = crate::schema::example::example(&whole).expect("arguments");
    assert!(validator.is_valid(&arguments), "{arguments}");
    let published_validator = jsonschema::draft202012::new(&published).expect("compiles");
    assert!(published_validator.is_valid(&arguments), "{arguments}");
}

/// The full schemas of relaxed tools share their definitions: a component reached by
/// several tools is converted once and its text held once.
#[test]
fn relaxed_tools_share_the_definitions_of_their_full_schemas() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deep-entities.json"),
    )
    .expect("fixture");
    let spec: Value = serde_json::from_str(&text).expect("JSON");
    let (catalog, _) = build_with(spec, ToolSettings::default());
    let full = |name: &str| {
        catalog
            .get(name)
            .expect("tool")
            .route
            .full_input
            .clone()
            .expect("relaxed")
    };
    let (user, group) = (full("updateUser"), full("createGroup"));
    let def = |full: &FullInput, name: &str| {
        full.defs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("{name} in {:?}", full.defs))
    };
    for name in ["components.schemas.user", "components.schemas.address"] {
        let (a, b) = (def(&user, name), def(&group, name));
        assert_eq!(a, b);
        assert!(
            std::ptr::eq(a.as_str(), b.as_str()),
            "{name}: one text for both tools"
        );
    }
    // Definitions refer to each other by their shared names.
    assert!(
        def(&user, "components.schemas.user")
            .as_str()
            .contains("#/$defs/components.schemas.group")
    );
}

#[test]
fn an_input_schema_within_its_budget_is_published_unchanged() {
    let (limited, _) = build_with(
        deep_body_spec(),
        ToolSettings {
            max_input_schema_bytes: 1 << 20,
            ..ToolSettings::default()
        },
    );
    let (unlimited, _) = build_with(
        deep_body_spec(),
        ToolSettings {
            max_input_schema_bytes: 0,
            ..ToolSettings::default()
        },
    );
    let tool = limited.get("updatePerson").expect("tool");
    assert_eq!(
        tool.input_schema,
        unlimited.get("updatePerson").expect("tool").input_schema
    );
    assert!(tool.route.full_input.is_none());
}

#[test]
fn swagger2_form_data_with_a_file_becomes_a_multipart_body() {
    let (catalog, _) = build_one(json!({
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": "files.example.test",
        "basePath": "/api/",
        "schemes": ["http", "https"],
        "paths": {"/upload": {"post": {
            "operationId": "upload",
            "consumes": ["application/x-www-form-urlencoded"],
            "parameters": [
                {"name": "file", "in": "formData", "type": "file", "required": true, "description": "The file"},
                {"name": "tags", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
                {"name": "ids", "in": "query", "type": "array", "items": {"type": "integer"}, "collectionFormat": "pipes"}
            ]
        }}}
    }));
    let tool = only(&catalog);
    assert_eq!(
        tool.route.base_url.as_deref(),
        Some("https://files.example.test/api")
    );
    let body = tool.route.body.as_ref().expect("body");
    assert_eq!(body.media_type, "multipart/form-data");
    assert!(body.flattened);
    let input = tool.input_schema.to_value();
    assert_eq!(
        input["properties"]["file"],
        json!({
            "type": "string",
            "description": "File content, base64-encoded or as a data: URI (data:<type>;base64,<data>); sent as a file part. File name: \"file_filename\" (default file.bin, or the extension of the data: URI's type).\n\nThe file",
            "format": "binary",
            "contentEncoding": "base64"
        })
    );
    assert_eq!(
        input["properties"]["file_filename"],
        json!({
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "description": "Optional file name for \"file\" (default file.bin); only the last path segment is used."
        })
    );
    assert_eq!(input["required"], json!(["file"]));
    let names: Vec<&str> = input["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["ids", "file", "file_filename", "tags"]);
    let filename = tool.route.arguments.get("file_filename").expect("binding");
    assert_eq!(
        (filename.location, filename.wire_name.as_str()),
        (Location::FileName, "file")
    );
    assert_eq!(
        body.files.get("file"),
        Some(&FilePart {
            content: FileContent::Base64,
            media_types: None,
            many: false
        })
    );
    assert!(!body.files.contains_key("tags"));
    let tags = tool.route.arguments.get("tags").expect("binding");
    assert_eq!(
        (tags.location, tags.style, tags.explode),
        (Location::BodyField, Style::Form, true)
    );
    let ids = tool.route.arguments.get("ids").expect("binding");
    assert_eq!(
        (ids.location, ids.style, ids.explode),
        (Location::Query, Style::PipeDelimited, false)
    );
    assert_eq!(
        tool.input_schema.to_value()["properties"]["ids"],
        json!({"type": "array", "items": {"type": "integer"}})
    );
}

#[test]
fn swagger2_body_parameter_uses_consumes_and_definitions() {
    let (catalog, _) = build_one(json!({
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "consumes": ["application/xml", "application/json"],
        "produces": ["application/json"],
        "paths": {"/pets": {"post": {
            "operationId": "addPet",
            "parameters": [{"name": "pet", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}}],
            "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}}
        }}},
        "definitions": {"Pet": {"type": "object", "required": ["name"], "properties": {
            "id": {"type": "integer", "readOnly": true}, "name": {"type": "string"}, "tag": {"type": "string", "x-nullable": true}
        }}}
    }));
    let tool = only(&catalog);
    assert_eq!(
        tool.route.body.as_ref().map(|b| b.media_type.as_str()),
        Some("application/json")
    );
    assert_eq!(
        tool.input_schema.to_value(),
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "tag": {"type": ["string", "null"]}},
            "required": ["name"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        tool.output_schema.as_ref().map(SchemaText::to_value),
        Some(json!({"type": "object", "properties": {
            "id": {"type": "integer", "readOnly": true}, "name": {"type": "string"}, "tag": {"type": ["string", "null"]}
        }}))
    );
    // No host: the base URL cannot be known from a local file.
    assert_eq!(tool.route.base_url, None);
}

#[test]
fn server_urls_use_variable_defaults_and_the_most_specific_level() {
    let (catalog, _) = build_one(json!({
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://{region}.example.test/{version}", "variables": {
            "region": {"default": "eu"}, "version": {"default": "v2", "enum": ["v1", "v2"]}
        }}],
        "paths": {
            "/a": {"get": {"operationId": "doc"}},
            "/b": {"servers": [{"url": "https://path.example.test/"}], "get": {"operationId": "path"},
                   "post": {"operationId": "op", "servers": [{"url": "https://op.example.test"}]}}
        }
    }));
    let base = |name: &str| catalog.get(name).expect("tool").route.base_url.clone();
    assert_eq!(base("doc").as_deref(), Some("https://eu.example.test/v2"));
    assert_eq!(base("path").as_deref(), Some("https://path.example.test"));
    assert_eq!(base("op").as_deref(), Some("https://op.example.test"));
}

#[test]
fn an_operation_with_a_broken_ref_is_skipped_with_both_ends_named() {
    let (catalog, report) = build_one(openapi(json!({
        "/ok": {"get": {"operationId": "fine"}},
        "/bad": {"post": {"operationId": "broken", "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Missing"}
        }}}}}
    })));
    assert_eq!(catalog.len(), 1);
    assert_eq!(report.skipped(), 1);
    let skipped = report.apis[0]
        .operations
        .iter()
        .find(|o| o.is_skipped())
        .expect("skipped");
    assert_eq!(skipped.operation, "POST /bad");
    let OperationOutcome::Skipped { reason } = &skipped.outcome else {
        unreachable!()
    };
    assert!(
        reason.contains("$ref \"#/components/schemas/Missing\""),
        "{reason}"
    );
    assert!(
        reason.contains("api.json#/components/schemas/Missing"),
        "{reason}"
    );
    assert!(reason.contains("/paths/~1bad/post/requestBody"), "{reason}");
}

#[test]
fn tool_names_are_unique_across_apis_or_the_build_says_which_clash() {
    let spec = openapi(json!({"/a": {"get": {"operationId": "same"}}}));
    let docs_a = DocumentSet::single(
        Url::parse("file:///a.json").expect("url"),
        "a.json".into(),
        spec.clone(),
    );
    let docs_b = DocumentSet::single(
        Url::parse("file:///b.json").expect("url"),
        "b.json".into(),
        spec,
    );
    let api = |name, docs, prefix| ApiInput {
        prefix,
        ..ApiInput::new(name, Some(docs))
    };
    let error = build(
        &[api("a", &docs_a, ""), api("b", &docs_b, "")],
        &ToolSettings::default(),
    )
    .expect_err("clash");
    assert_eq!(
        error.to_string(),
        "tool name \"same\" is produced by both API \"a\" GET /a and API \"b\" GET /a; rename one (overlay `name`) or give one of the APIs a `prefix`"
    );
    let (catalog, _) = build(
        &[api("a", &docs_a, ""), api("b", &docs_b, "b_")],
        &ToolSettings::default(),
    )
    .expect("prefix resolves it");
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["same", "b_same"]);
}

#[test]
fn tools_list_json_is_the_exact_wire_form() {
    let (catalog, report) = build_one(openapi(json!({
        "/a": {"get": {"operationId": "a", "summary": "A"}}
    })));
    let parsed: Value = serde_json::from_str(catalog.list_json()).expect("json");
    assert_eq!(
        parsed,
        json!({"tools": [{
            "name": "a",
            "title": "A",
            "description": "A",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true}
        }]})
    );
    assert_eq!(report.list_bytes, catalog.list_json().len());
}

#[test]
fn routes_carry_the_effective_security_and_the_catalog_the_schemes() {
    let mut spec = openapi(json!({
        "/a": {
            "get": {"operationId": "inherits"},
            "post": {"operationId": "open", "security": []},
            "put": {"operationId": "ghost", "security": [{"ghost": []}, {}]}
        }
    }));
    spec["security"] = json!([{"key": []}]);
    spec["components"] = json!({"securitySchemes": {
        "key": {"type": "apiKey", "in": "header", "name": "X-Key"}
    }});
    let (catalog, report) = build_one(spec);
    let security = |name: &str| {
        serde_json::to_value(&catalog.get(name).expect("tool").route)
            .expect("json")
            .get("security")
            .cloned()
    };
    assert_eq!(security("inherits"), Some(json!([{"key": []}])));
    // No requirement: nothing serialized, so routes without security read as before.
    assert_eq!(security("open"), None);
    assert_eq!(security("ghost"), Some(json!([{"ghost": []}, {}])));
    assert_eq!(
        catalog.security_schemes("t").expect("api").get("key"),
        Some(&spec::SecurityScheme::ApiKey {
            name: "X-Key".into(),
            location: spec::ApiKeyLocation::Header
        })
    );
    assert!(catalog.security_schemes("other").is_none());
    let ghost = report.apis[0]
        .operations
        .iter()
        .find(|op| op.operation == "PUT /a")
        .expect("reported");
    assert_eq!(
        ghost.notes,
        ["security requirement names scheme \"ghost\", which the description does not declare"]
    );
}

fn multipart_tool(version: &str, properties: Value, encoding: Value) -> (Catalog, Report) {
    build_one(json!({
        "openapi": version,
        "info": {"title": "T", "version": "1"},
        "servers": [{"url": "https://api.example.test"}],
        "paths": {"/upload": {"post": {
            "operationId": "upload",
            "requestBody": {"content": {"multipart/form-data": {
                "schema": {"type": "object", "properties": properties},
                "encoding": encoding
            }}}
        }}}
    }))
}

#[test]
fn multipart_file_properties_are_found_and_say_how_to_give_them() {
    let (catalog, _) = multipart_tool(
        "3.1.0",
        json!({
            "png": {"type": "string", "contentMediaType": "image/png", "contentEncoding": "base64"},
            "csv": {"type": "string", "contentMediaType": "text/csv"},
            "blob": {"type": "string", "contentMediaType": "application/octet-stream"},
            "pdf": {"type": "string"},
            "plain": {"type": "string"},
            "meta": {"type": "string"},
            "photos": {"type": "array", "items": {"type": "string", "format": "binary"}},
            "count": {"type": "integer", "contentMediaType": "text/plain"}
        }),
        json!({
            "pdf": {"contentType": "application/pdf"},
            "plain": {"contentType": "text/plain"},
            "meta": {"contentType": "application/json"}
        }),
    );
    let tool = only(&catalog);
    let files = &tool.route.body.as_ref().expect("body").files;
    let file = |content, media_types: Option<&str>, many| FilePart {
        content,
        media_types: media_types.map(str::to_string),
        many,
    };
    assert_eq!(
        files
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect::<Vec<_>>(),
        vec![
            (
                "blob",
                file(FileContent::Base64, Some("application/octet-stream"), false)
            ),
            ("csv", file(FileContent::Text, Some("text/csv"), false)),
            (
                "pdf",
                file(FileContent::Base64, Some("application/pdf"), false)
            ),
            ("photos", file(FileContent::Base64, None, true)),
            ("png", file(FileContent::Base64, Some("image/png"), false)),
        ]
    );
    let input = tool.input_schema.to_value();
    let props = &input["properties"];
    // Bytes are given as base64 whatever the spec said: the schema says so.
    assert_eq!(props["blob"]["contentEncoding"], "base64");
    assert_eq!(props["pdf"]["contentEncoding"], "base64");
    assert_eq!(props["pdf"]["contentMediaType"], "application/pdf");
    // Text stays text.
    assert_eq!(props["csv"].get("contentEncoding"), None);
    assert!(
        props["csv"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("File content as text (text/csv), sent as it is")),
        "{}",
        props["csv"]
    );
    // Arrays of files take an array of names.
    assert_eq!(props["photos_filename"]["type"], "array");
    assert_eq!(props["photos_filename"]["items"]["maxLength"], 255);
    // Plain text, JSON and non-strings are not files, and get no name argument.
    for name in ["plain", "meta", "count"] {
        assert!(props.get(format!("{name}_filename")).is_none(), "{name}");
        assert!(props[name].get("contentEncoding").is_none(), "{name}");
    }
    assert!(
        props["png_filename"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("default png.png"))
    );
}

#[test]
fn a_file_name_argument_never_takes_a_real_property_name() {
    let (catalog, _) = multipart_tool(
        "3.0.3",
        json!({
            "file": {"type": "string", "format": "byte"},
            "file_filename": {"type": "string"}
        }),
        json!({}),
    );
    let tool = only(&catalog);
    let real = tool.route.arguments.get("file_filename").expect("binding");
    assert_eq!(
        (real.location, real.wire_name.as_str()),
        (Location::BodyField, "file_filename")
    );
    let added = tool
        .route
        .arguments
        .get("file_filename__filename")
        .expect("binding");
    assert_eq!(
        (added.location, added.wire_name.as_str()),
        (Location::FileName, "file")
    );
    // `format: byte` is a file too, given as base64.
    assert_eq!(
        tool.input_schema.to_value()["properties"]["file"]["contentEncoding"],
        "base64"
    );
    assert_eq!(tool.route.arguments.renamed().count(), 0);
}

#[test]
fn swagger2_accept_content_type_and_authorization_headers_are_arguments() {
    let (catalog, report) = build_one(json!({
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": "api.example.test",
        "paths": {"/reports": {"get": {
            "operationId": "getReport",
            "parameters": [
                {"name": "Authorization", "in": "header", "type": "string", "required": true},
                {"name": "Accept", "in": "header", "type": "string", "enum": ["application/json", "text/csv"]},
                {"name": "Content-Type", "in": "header", "type": "string"}
            ]
        }}}
    }));
    let tool = only(&catalog);
    let input = tool.input_schema.to_value();
    let names: Vec<&str> = input["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["Authorization", "Accept", "Content-Type"]);
    assert_eq!(input["required"], json!(["Authorization"]));
    for name in names {
        let binding = tool.route.arguments.get(name).expect("binding");
        assert_eq!(
            (binding.location, binding.wire_name.as_str()),
            (Location::Header, name)
        );
    }
    let notes = &report.apis[0].operations[0].notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("\"Authorization\" is an argument")
                && n.contains("credentials configured for the API replace")),
        "{notes:?}"
    );
}

#[test]
fn bodies_in_other_media_types_are_one_string_argument() {
    let (catalog, report) = build_one(json!({
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": "api.example.test",
        "paths": {
            "/pets": {"post": {
                "operationId": "addPet",
                "consumes": ["application/xml"],
                "parameters": [{"name": "pet", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}}]
            }},
            "/both": {"post": {
                "operationId": "both",
                "consumes": ["text/xml", "application/json"],
                "parameters": [{"name": "pet", "in": "body", "schema": {"$ref": "#/definitions/Pet"}}]
            }},
            "/photo": {"put": {
                "operationId": "putPhoto",
                "consumes": ["image/png"],
                "parameters": [{"name": "photo", "in": "body", "schema": {"type": "string"}}]
            }}
        },
        "definitions": {"Pet": {"type": "object", "xml": {"name": "pet"}, "properties": {"name": {"type": "string"}}}}
    }));
    let add = catalog.get("addPet").expect("tool");
    let input = add.input_schema.to_value();
    assert_eq!(
        input,
        json!({
            "type": "object",
            "properties": {"body": {
                "type": "string",
                "contentMediaType": "application/xml",
                "description": "The request body: a complete XML document (root element <pet>), sent as it is as application/xml."
            }},
            "required": ["body"],
            "additionalProperties": false
        })
    );
    let binding = add.route.arguments.get("body").expect("binding");
    assert_eq!((binding.location, binding.binary), (Location::Body, false));
    assert!(!add.route.body.as_ref().expect("body").flattened);
    let notes = &report.apis[0]
        .operations
        .iter()
        .find(|o| o.operation.contains("/pets"))
        .expect("report")
        .notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("whole document as a string")),
        "{notes:?}"
    );

    // JSON is still preferred when it is offered.
    let both = catalog.get("both").expect("tool");
    assert_eq!(
        both.route.body.as_ref().map(|b| b.media_type.as_str()),
        Some("application/json")
    );
    assert!(both.route.arguments.get("name").is_some());

    // Bytes are base64, sent raw.
    let photo = catalog.get("putPhoto").expect("tool");
    assert_eq!(
        photo.input_schema.to_value()["properties"]["body"]["contentEncoding"],
        "base64"
    );
    assert_eq!(
        photo.input_schema.to_value()["properties"]["body"]["contentMediaType"],
        "image/png"
    );
    assert!(photo.route.arguments.get("body").expect("binding").binary);
}

#[test]
fn a_body_that_cannot_be_sent_faithfully_is_left_out_and_check_says_so() {
    let (catalog, report) = build_one(openapi(json!({
        "/blob": {"post": {
            "operationId": "badType",
            "requestBody": {"content": {"not a media type": {"schema": {"type": "string"}}}}
        }},
        "/parts": {"post": {
            "operationId": "stringParts",
            "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "string"}}}}
        }}
    })));
    for name in ["badType", "stringParts"] {
        let tool = catalog.get(name).expect("tool");
        assert!(tool.route.body.is_none(), "{name}");
        assert!(tool.route.arguments.get("body").is_none(), "{name}");
    }
    let notes: Vec<&String> = report.apis[0]
        .operations
        .iter()
        .flat_map(|o| &o.notes)
        .filter(|n| n.starts_with("request body left out of the tool"))
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
}

#[test]
fn a_path_suffix_names_the_tool_but_is_not_requested() {
    let (catalog, report) = build_one(openapi(json!({
        "/tags/{resourceArn}#tagKeys": {"delete": {
            "parameters": [
                {"name": "resourceArn", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "tagKeys", "in": "query", "required": true, "schema": {"type": "array", "items": {"type": "string"}}}
            ],
            "responses": {"204": {"description": "gone"}}
        }}
    })));
    let tool = only(&catalog);
    assert_eq!(tool.name, "delete_tags_resourceArn_tagKeys");
    assert_eq!(tool.route.path, "/tags/{resourceArn}");
    assert_eq!(tool.origin.operation, "DELETE /tags/{resourceArn}#tagKeys");
    assert_eq!(
        tool.input_schema.to_value()["required"],
        json!(["resourceArn", "tagKeys"])
    );
    let notes = &report.apis[0].operations[0].notes;
    assert!(
        notes.iter().any(|n| n.contains("\"#tagKeys\"")
            && n.contains("requests go to /tags/{resourceArn}")
            && n.contains("only names the operation")),
        "{notes:?}"
    );
}

#[test]
fn path_suffix_pairs_fill_declared_parameters_or_are_fixed_query_parameters() {
    let action = |name: &str| json!({"name": "Action", "in": "query", "required": true, "schema": {"type": "string", "enum": [name]}});
    let (catalog, report) = build_one(openapi(json!({
        "/#Action=DescribeLoadBalancers&Version=2015-12-01": {"get": {
            "operationId": "Declared",
            "parameters": [
                action("DescribeLoadBalancers"),
                {"name": "Version", "in": "query", "required": true, "schema": {"type": "string"}},
                {"name": "PageSize", "in": "query", "schema": {"type": "integer"}}
            ],
            "responses": {"200": {"description": "ok"}}
        }},
        "/#Action=DescribeRegions&Version=2016-11-15&Limit=5": {"get": {
            "operationId": "Undeclared",
            "parameters": [
                {"name": "Limit", "in": "query", "schema": {"type": "integer"}},
                {"name": "Version", "in": "header", "schema": {"type": "string"}}
            ],
            "responses": {"200": {"description": "ok"}}
        }},
        "/#Action=Other": {"get": {
            "operationId": "Contradicted",
            "parameters": [action("Something")],
            "responses": {"200": {"description": "ok"}}
        }}
    })));

    let declared = catalog.get("Declared").expect("tool");
    assert_eq!(declared.route.path, "/");
    let input = declared.input_schema.to_value();
    assert_eq!(input.get("required"), None, "{input}");
    assert_eq!(
        input["properties"]["Action"]["default"],
        "DescribeLoadBalancers"
    );
    assert_eq!(input["properties"]["Version"]["default"], "2015-12-01");
    let args = &declared.route.arguments;
    let bound = |name: &str| args.get(name).expect("binding");
    assert_eq!(
        bound("Action").default,
        Some(json!("DescribeLoadBalancers"))
    );
    assert_eq!(bound("Version").default, Some(json!("2015-12-01")));
    // What the operation requires does not change: the value is always sent.
    assert!(bound("Action").required && bound("Version").fixed.is_none());

    let undeclared = catalog.get("Undeclared").expect("tool");
    let input = undeclared.input_schema.to_value();
    let names: Vec<&str> = input["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["Limit", "Version"]);
    let fixed: Vec<(&str, &str, Value)> = undeclared
        .route
        .arguments
        .bindings
        .iter()
        .filter_map(|b| {
            b.fixed
                .as_ref()
                .map(|f| (b.argument.as_str(), b.wire_name.as_str(), f.value()))
        })
        .collect();
    // Fixed pairs come first; `Limit` is a declared query parameter (its default is 5);
    // `Version` names the declared header, which it fills: no query
    // parameter of that name is sent besides.
    assert_eq!(fixed, [("Action", "Action", json!("DescribeRegions"))]);
    assert_eq!(input["properties"]["Limit"]["default"], 5);
    assert_eq!(input["properties"]["Version"]["default"], "2016-11-15");

    // A suffix value the declared enum refuses is not filled in; the parameter stays
    // required, and `check` says why.
    let contradicted = catalog.get("Contradicted").expect("tool");
    assert_eq!(
        contradicted.input_schema.to_value()["required"],
        json!(["Action"])
    );
    let notes: Vec<&String> = report.apis[0]
        .operations
        .iter()
        .flat_map(|o| &o.notes)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("Action=Other") && n.contains("does not allow")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains(
            "Action=DescribeRegions is sent as a fixed query parameter; Version=2016-11-15 is the default of header parameter \"Version\"; Limit=5 is the default of query parameter \"Limit\""
        )),
        "{notes:?}"
    );
}

#[test]
fn a_required_parameter_with_one_possible_value_is_filled_in() {
    let (catalog, _) = build_one(openapi(json!({
        "/things/{kind}": {"get": {
            "operationId": "listThings",
            "parameters": [
                {"name": "kind", "in": "path", "required": true, "schema": {"type": "string", "enum": ["widget"]}},
                {"name": "v", "in": "query", "required": true, "schema": {"const": 2}},
                {"name": "mode", "in": "query", "required": true, "schema": {"type": "string", "enum": ["a", "b"]}},
                {"name": "optional", "in": "query", "schema": {"type": "string", "enum": ["only"]}},
                {"name": "nullable", "in": "query", "required": true, "schema": {"type": "string", "enum": ["x"], "nullable": true}}
            ],
            "responses": {"200": {"description": "ok"}}
        }}
    })));
    let tool = only(&catalog);
    let input = tool.input_schema.to_value();
    assert_eq!(input["required"], json!(["mode", "nullable"]));
    assert_eq!(input["properties"]["kind"]["default"], "widget");
    assert_eq!(input["properties"]["v"]["default"], 2);
    let default = |name: &str| {
        tool.route
            .arguments
            .get(name)
            .expect("binding")
            .default
            .clone()
    };
    assert_eq!(default("kind"), Some(json!("widget")));
    assert_eq!(default("v"), Some(json!(2)));
    assert_eq!(default("mode"), None);
    assert_eq!(default("optional"), None);
    assert_eq!(default("nullable"), None);
}

#[test]
fn markup_only_summaries_and_descriptions_fall_back_to_method_and_path() {
    let icon = "&nbsp; <i class=\"fa fa-lg fa-unlock-alt\"></i>";
    let (catalog, _) = build_one(openapi(json!({
        "/user/top": {"get": {
            "operationId": "top",
            "summary": icon,
            "description": "<p></p>",
            "responses": {"200": {"description": "ok"}}
        }},
        "/user/tests": {"get": {
            "operationId": "tests",
            "summary": format!("List user private tests{icon}"),
            "parameters": [
                {"name": "skip", "in": "query", "description": icon, "schema": {"type": "string"}},
                {"name": "limit", "in": "query", "description": "<b>At most</b> this many", "schema": {"type": "integer"}}
            ],
            "responses": {"200": {"description": "ok"}}
        }},
        "/user/old": {"get": {
            "operationId": "old",
            "deprecated": true,
            "summary": icon,
            "description": "Old &amp; <i>slow</i>",
            "responses": {"200": {"description": "ok"}}
        }},
        "/user/gone": {"get": {
            "operationId": "gone",
            "deprecated": true,
            "summary": icon,
            "responses": {"200": {"description": "ok"}}
        }}
    })));
    let top = catalog.get("top").expect("tool");
    assert_eq!(top.title, None);
    assert_eq!(top.description, "GET /user/top");

    let tests = catalog.get("tests").expect("tool");
    assert_eq!(tests.title.as_deref(), Some("List user private tests"));
    assert_eq!(tests.description, "List user private tests");
    let input = tests.input_schema.to_value();
    assert_eq!(input["properties"]["skip"], json!({"type": "string"}));
    assert_eq!(
        input["properties"]["limit"]["description"],
        "At most this many"
    );

    let old = catalog.get("old").expect("tool");
    assert_eq!(old.title, None);
    assert_eq!(old.description, "[DEPRECATED] Old & slow");
    assert_eq!(
        catalog.get("gone").expect("tool").description,
        "[DEPRECATED] GET /user/gone"
    );
}

// ---- content negotiation ----

fn accept_of(catalog: &Catalog, name: &str) -> String {
    catalog.get(name).expect("tool").route.accept.clone()
}

#[test]
fn accept_comes_from_the_2xx_and_default_responses_json_first() {
    let json_schema = json!({"schema": {"type": "object"}});
    let (catalog, _) = build_one(openapi(json!({
        "/pets/{id}": {"get": {
            "operationId": "getPet",
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {
                "200": {"description": "ok", "content": {
                    "application/xml": json_schema, "application/json": json_schema
                }},
                "404": {"description": "missing", "content": {"text/html": {}}},
                "default": {"description": "error", "content": {"application/problem+json": {}}}
            }
        }},
        "/report": {"get": {
            "operationId": "report",
            "responses": {"200": {"description": "ok", "content": {"text/csv": {}, "application/pdf": {}}}}
        }},
        "/ping": {"get": {
            "operationId": "ping",
            "responses": {"204": {"description": "no body"}}
        }}
    })));
    assert_eq!(
        accept_of(&catalog, "getPet"),
        "application/json, application/problem+json, application/xml;q=0.5"
    );
    assert_eq!(accept_of(&catalog, "report"), "text/csv, application/pdf");
    assert_eq!(accept_of(&catalog, "ping"), "*/*");
}

#[test]
fn swagger_2_produces_counts_operation_first_then_global() {
    let (catalog, _) = build_one(json!({
        "swagger": "2.0",
        "info": {"title": "T", "version": "1"},
        "host": "api.example.test",
        "produces": ["application/xml", "application/json"],
        "paths": {
            "/pets": {"get": {
                "operationId": "listPets",
                "responses": {"200": {"description": "ok", "schema": {"type": "array", "items": {"type": "string"}}}}
            }},
            "/pets/{id}": {"delete": {
                "operationId": "deletePet",
                "parameters": [{"name": "id", "in": "path", "required": true, "type": "string"}],
                "responses": {"204": {"description": "gone"}}
            }},
            "/pets/{id}/photo": {"get": {
                "operationId": "photo",
                "produces": ["image/png"],
                "parameters": [{"name": "id", "in": "path", "required": true, "type": "string"}],
                "responses": {"200": {"description": "ok", "schema": {"type": "file"}}}
            }}
        }
    }));
    assert_eq!(
        accept_of(&catalog, "listPets"),
        "application/json, application/xml;q=0.5"
    );
    // No response schema: `produces` still says what the operation answers in.
    assert_eq!(
        accept_of(&catalog, "deletePet"),
        "application/json, application/xml;q=0.5"
    );
    assert_eq!(accept_of(&catalog, "photo"), "image/png");
}

#[test]
fn accept_from_config_overlay_and_x_mcp() {
    let spec = openapi(json!({
        "/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok",
            "content": {"application/json": {}}}}}},
        "/b": {"get": {"operationId": "b", "x-mcp": {"accept": "text/plain"},
            "responses": {"200": {"description": "ok"}}}},
        "/c": {"get": {"operationId": "c", "responses": {"200": {"description": "ok"}}}}
    }));
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let overlay = patch::parse_file(
        "o.yaml",
        b"tools:\n  c: {accept: application/vnd.github+json}\n",
    )
    .expect("overlay");
    let overlays = [("o.yaml".to_string(), overlay)];
    // Without the config's accept: the spec, x-mcp, the overlay.
    let input = ApiInput {
        overlays: &overlays,
        ..ApiInput::new("t", Some(&docs))
    };
    let (catalog, _) = build(&[input], &ToolSettings::default()).expect("builds");
    assert_eq!(accept_of(&catalog, "a"), "application/json");
    assert_eq!(accept_of(&catalog, "b"), "text/plain");
    assert_eq!(accept_of(&catalog, "c"), "application/vnd.github+json");
    // The config's accept beats the spec and its x-mcp, not the operator's overlay.
    let input = ApiInput {
        overlays: &overlays,
        accept: Some("application/hal+json"),
        ..ApiInput::new("t", Some(&docs))
    };
    let (catalog, _) = build(&[input], &ToolSettings::default()).expect("builds");
    assert_eq!(accept_of(&catalog, "a"), "application/hal+json");
    assert_eq!(accept_of(&catalog, "b"), "application/hal+json");
    assert_eq!(accept_of(&catalog, "c"), "application/vnd.github+json");
    let c = catalog.get("c").expect("c");
    assert!(
        c.provenance
            .iter()
            .any(|(what, from)| what == "accept" && from.contains("o.yaml#/tools/c/accept")),
        "{:?}",
        c.provenance
    );
}

#[test]
fn an_accept_that_is_not_a_header_value_is_refused() {
    let spec = openapi(json!({
        "/a": {"get": {"operationId": "a", "x-mcp": {"accept": "text/plain\r\nX-Evil: 1"},
            "responses": {"200": {"description": "ok"}}}}
    }));
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let error =
        build(&[ApiInput::new("t", Some(&docs))], &ToolSettings::default()).expect_err("refused");
    assert!(error.to_string().contains("x-mcp/accept"), "{error}");
}

#[test]
fn confirmation_follows_the_api_policy_the_overlay_and_never_a_spec_waiver() {
    use crate::config::{ConfirmKind, ConfirmPolicy};
    let ok = || json!({"200": {"description": "ok"}});
    let spec = openapi(json!({
        "/pets": {
            "get": {"operationId": "listPets", "responses": ok()},
            "post": {"operationId": "addPet", "responses": ok()}
        },
        "/pets/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "delete": {"operationId": "deletePet", "responses": ok()},
            "put": {"operationId": "replacePet", "responses": ok(),
                "x-mcp": {"confirm": false, "annotations": {"destructiveHint": false}}},
            "patch": {"operationId": "patchPet", "responses": ok(),
                "x-mcp": {"annotations": {"destructiveHint": false, "readOnlyHint": true}}}
        },
        "/audit": {"get": {"operationId": "readAudit", "responses": ok(),
            "x-mcp": {"confirm": true}}}
    }));
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let overlay = patch::parse_file(
        "o.yaml",
        b"tools:\n  deletePet: {confirm: false}\n  listPets: {confirm: true}\n",
    )
    .expect("overlay");
    let overlays = [("o.yaml".to_string(), overlay)];
    let asked = |policy: Option<&ConfirmPolicy>, overlays: &[(String, patch::OverlayFile)]| {
        let input = ApiInput {
            overlays,
            confirm: policy,
            ..ApiInput::new("t", Some(&docs))
        };
        let (catalog, _) = build(&[input], &ToolSettings::default()).expect("builds");
        let mut names: Vec<String> = catalog
            .tools()
            .iter()
            .filter(|t| t.route.needs_confirmation())
            .map(|t| t.name.clone())
            .collect();
        names.sort();
        names
    };
    let destructive = ConfirmPolicy::Kind(ConfirmKind::Destructive);
    // The spec's x-mcp relaxing a PUT's or PATCH's hints, or saying confirm: false, waives
    // nothing; its confirm: true is honoured.
    assert_eq!(
        asked(Some(&destructive), &[]),
        ["deletePet", "patchPet", "readAudit", "replacePet"]
    );
    assert_eq!(
        asked(Some(&ConfirmPolicy::Kind(ConfirmKind::Writes)), &[]),
        ["addPet", "deletePet", "patchPet", "readAudit", "replacePet"]
    );
    assert_eq!(asked(None, &[]), ["readAudit"]);
    assert_eq!(
        asked(Some(&ConfirmPolicy::Tools(vec!["addPet".into()])), &[]),
        ["addPet", "readAudit"]
    );
    // The operator's overlay wins both ways.
    assert_eq!(
        asked(Some(&destructive), &overlays),
        ["listPets", "patchPet", "readAudit", "replacePet"]
    );
    // A listed name that is no tool is an error that says what was meant.
    let input = ApiInput {
        confirm: Some(&ConfirmPolicy::Tools(vec!["deletePets".into()])),
        ..ApiInput::new("t", Some(&docs))
    };
    let error = build(&[input], &ToolSettings::default()).expect_err("unknown tool");
    assert_eq!(
        error.to_string(),
        "apis.t.confirm: no tool is named \"deletePets\" (did you mean \"deletePet\"?)"
    );
}

#[test]
fn idempotency_keys_come_from_a_declared_header_or_the_configured_one() {
    let ok = || json!({"200": {"description": "ok"}});
    let header = |name: &str| json!({"name": name, "in": "header", "schema": {"type": "string"}});
    let spec = openapi(json!({
        "/refunds": {"post": {"operationId": "createRefund", "responses": ok(),
            "parameters": [header("idempotency-key")]}},
        "/charges": {
            "post": {"operationId": "createCharge", "responses": ok()},
            "get": {"operationId": "listCharges", "responses": ok()}
        },
        "/charges/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "patch": {"operationId": "patchCharge", "responses": ok()},
            "put": {"operationId": "putCharge", "responses": ok()},
            "delete": {"operationId": "deleteCharge", "responses": ok()}
        }
    }));
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let plans = |configured: Option<&str>| {
        let input = ApiInput {
            idempotency_header: configured,
            ..ApiInput::new("t", Some(&docs))
        };
        let (catalog, _) = build(&[input], &ToolSettings::default()).expect("builds");
        let mut plans: Vec<(String, String, String, bool)> = catalog
            .tools()
            .iter()
            .filter_map(|t| {
                let plan = t.route.idempotency.as_ref()?;
                let listed = t.input_schema.to_value()["properties"]
                    .get(&plan.argument)
                    .is_some();
                Some((
                    t.name.clone(),
                    plan.header.clone(),
                    plan.argument.clone(),
                    listed,
                ))
            })
            .collect();
        plans.sort();
        plans
    };
    // Declared: used as it is, with nothing configured.
    assert_eq!(
        plans(None),
        [(
            "createRefund".to_string(),
            "idempotency-key".to_string(),
            "idempotency-key".to_string(),
            true
        )]
    );
    // Configured: POST and PATCH gain the argument; idempotent methods are left alone.
    let configured = plans(Some("Idempotency-Key"));
    let names: Vec<&str> = configured.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(names, ["createCharge", "createRefund", "patchCharge"]);
    assert!(configured.iter().all(|p| p.3), "{configured:?}");
    assert_eq!(configured[0].2, "idempotency_key");
    assert_eq!(configured[0].1, "Idempotency-Key");
}

#[test]
fn long_running_operations_are_marked_by_the_spec_a_documented_202_or_config() {
    let ok = || json!({"200": {"description": "ok"}});
    let spec = openapi(json!({
        "/vms/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "put": {"operationId": "putVm", "responses": ok(),
                "x-ms-long-running-operation": true,
                "x-ms-long-running-operation-options": {"final-state-via": "azure-async-operation"}},
            "delete": {"operationId": "deleteVm", "responses": ok(),
                "x-ms-long-running-operation": true},
            "patch": {"operationId": "patchVm", "responses": ok(),
                "x-ms-long-running-operation": true,
                "x-ms-long-running-operation-options": {"final-state-via": "somewhere"}},
            "get": {"operationId": "getVm", "responses": ok()}
        },
        "/reports": {"post": {"operationId": "startReport",
            "responses": {"202": {"description": "accepted"}}}},
        "/exports": {"post": {"operationId": "startExport", "responses": ok()}}
    }));
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let configured = ["startExport".to_string()];
    let input = ApiInput {
        long_running: &configured,
        ..ApiInput::new("t", Some(&docs))
    };
    let (catalog, report) = build(&[input], &ToolSettings::default()).expect("builds");
    let marked = |name: &str| catalog.get(name).expect(name).route.long_running;
    use crate::spec::FinalState;
    assert_eq!(marked("putVm"), Some(FinalState::StatusMonitor));
    assert_eq!(marked("deleteVm"), Some(FinalState::Default));
    // An unknown final-state-via is read as the default, and said.
    assert_eq!(marked("patchVm"), Some(FinalState::Default));
    let said = serde_json::to_string(&report).expect("report");
    assert!(
        said.contains("final-state-via") && said.contains("somewhere"),
        "{said}"
    );
    assert_eq!(marked("startReport"), Some(FinalState::Default));
    assert_eq!(marked("startExport"), Some(FinalState::Default));
    assert_eq!(marked("getVm"), None);

    // A configured name that is no tool is an error with a suggestion.
    let wrong = ["startExprt".to_string()];
    let input = ApiInput {
        long_running: &wrong,
        ..ApiInput::new("t", Some(&docs))
    };
    let Err(error) = build(&[input], &ToolSettings::default()) else {
        panic!("an unknown tool name is refused");
    };
    let error = error.to_string();
    assert!(
        error.contains("apis.t.long_running") && error.contains("startExport"),
        "{error}"
    );
}

/// `discovery = "auto"` (the default) lists an API whole while its tools fit
/// `tools.auto_budget_tokens`, serves it in `search` mode once they do not (pinned tools
/// still listed), and records the count and the budget that decided; an explicit mode is
/// served as configured.
#[test]
fn auto_discovery_lists_what_fits_the_budget_and_searches_the_rest() {
    let paths: serde_json::Map<String, Value> = (0..40)
        .map(|i| {
            let op = json!({"get": {
                "operationId": format!("getThing{i}"),
                "description": "Reads one thing of a kind, with every field it has.",
                "parameters": [{"name": "id", "in": "query", "required": true,
                    "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }});
            (format!("/things{i}"), op)
        })
        .collect();
    let spec = openapi(Value::Object(paths));
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        spec,
    );
    let pinned = ["getThing3".to_string()];
    let catalog_with = |discovery: DiscoveryMode, budget: usize| {
        let input = ApiInput {
            discovery,
            pinned: &pinned,
            ..ApiInput::new("t", Some(&docs))
        };
        let settings = ToolSettings {
            auto_budget_tokens: budget,
            ..ToolSettings::default()
        };
        let (catalog, report) = build(&[input], &settings).expect("catalog builds");
        // The count the mode was chosen by is the one `check` prints, and exact.
        assert_eq!(report.list_bytes, catalog.list_json().len());
        catalog
    };
    let listed = |catalog: &Catalog| {
        catalog
            .tools()
            .iter()
            .filter(|tool| catalog.is_listed(tool))
            .count()
    };

    let fits = catalog_with(
        DiscoveryMode::Auto,
        crate::config::DEFAULT_AUTO_BUDGET_TOKENS,
    );
    let listing = fits.listing("t").expect("listing");
    assert_eq!(listing.discovery, DiscoveryMode::All);
    let choice = listing.chosen.expect("auto chose");
    assert!(choice.tokens > 1000 && choice.tokens < 25_000, "{choice:?}");
    assert_eq!(listed(&fits), 40);
    assert!(
        listing.describe().starts_with("all (auto: ≈ ")
            && listing
                .describe()
                .contains("within tools.auto_budget_tokens (25,000)"),
        "{}",
        listing.describe()
    );

    let over = catalog_with(DiscoveryMode::Auto, choice.tokens - 1);
    let listing = over.listing("t").expect("listing");
    assert_eq!(listing.discovery, DiscoveryMode::Search);
    assert!(
        listing
            .describe()
            .contains(", over tools.auto_budget_tokens")
    );
    assert_eq!(listed(&over), 1, "only the pinned tool is listed");
    assert!(over.is_listed(over.get("getThing3").expect("pinned")));

    // Exactly at the budget still fits; 0 sets no limit.
    let at = catalog_with(DiscoveryMode::Auto, choice.tokens);
    assert_eq!(
        at.listing("t").expect("listing").discovery,
        DiscoveryMode::All
    );
    let unlimited = catalog_with(DiscoveryMode::Auto, 0);
    assert_eq!(listed(&unlimited), 40);

    // An explicit mode wins over the count, either way.
    let all = catalog_with(DiscoveryMode::All, 1);
    assert_eq!(listed(&all), 40);
    assert_eq!(all.listing("t").expect("listing").chosen, None);
    let search = catalog_with(DiscoveryMode::Search, 0);
    assert_eq!(listed(&search), 1);
    assert_eq!(
        search.listing("t").expect("listing").describe(),
        "search (configured)"
    );
}

// Path items read a part at a time
// ---------------------------------------------------------------------------------------

/// A JSON description with more path items than one part holds: refs between path items,
/// path-level parameters, components, an `x-mcp` extension and an `x-` key under `paths`.
fn many_paths() -> Value {
    let mut paths = serde_json::Map::new();
    paths.insert("x-note".into(), json!({"not": "a path item"}));
    for i in 0..150 {
        paths.insert(
            format!("/things{i}/{{id}}"),
            json!({
                "parameters": [{"$ref": "#/components/parameters/Id"}],
                "get": {
                    "operationId": format!("getThing{i}"),
                    "responses": {"200": {"description": "ok", "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Thing"}}}}}
                },
                "put": {
                    "requestBody": {"content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Thing"}}}},
                    "responses": {"204": {"description": "done"}},
                    "x-mcp": {"description": format!("Replace thing {i}")}
                }
            }),
        );
    }
    paths.insert("/alias".into(), json!({"$ref": "#/paths/~1things7~1{id}"}));
    paths.insert("/broken".into(), json!({"$ref": "#/paths/~1nowhere"}));
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Many", "version": "1"},
        "servers": [{"url": "https://api.example.test"}],
        "paths": paths,
        "components": {
            "parameters": {"Id": {"name": "id", "in": "path", "required": true,
                                  "schema": {"type": "integer"}}},
            "schemas": {"Thing": {"type": "object", "properties": {
                "name": {"type": "string"}, "parts": {"type": "array",
                "items": {"$ref": "#/components/schemas/Thing"}}}}}
        }
    })
}

/// Every tool and operation report of `docs`, as text.
fn built_text(docs: &DocumentSet) -> (String, String) {
    let input = ApiInput::new("t", Some(docs));
    let (catalog, report) = build(&[input], &ToolSettings::default()).expect("catalog builds");
    (
        format!("{:?}", catalog.tools()),
        serde_json::to_string(&report).expect("report"),
    )
}

async fn load_json(dir: &std::path::Path, name: &str, spec: &Value) -> DocumentSet {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(spec).expect("json")).expect("write");
    DocumentSet::load(&spec::SpecSource::File(path))
        .await
        .expect("loads")
}

#[tokio::test]
async fn path_items_read_a_part_at_a_time_make_the_tools_the_whole_parse_makes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = many_paths();
    let deferred = load_json(dir.path(), "api.json", &spec).await;
    assert!(
        deferred.root().root["paths"]["/things0/{id}"].is_null(),
        "the path items wait as text"
    );
    let whole = DocumentSet::single(
        deferred.root().url.clone(),
        deferred.root().name.clone(),
        spec,
    );
    let (tools, report) = built_text(&deferred);
    assert_eq!(
        (&tools, &report),
        (&built_text(&whole).0, &built_text(&whole).1)
    );
    assert!(tools.contains("Replace thing 149"), "x-mcp applies");
    assert!(report.contains("getThing149"));
    assert!(report.contains("#/paths/~1broken"), "{report}");
    let api = spec::normalize(&deferred).expect("normalizes");
    assert_eq!(api.operations.len(), 302);
    assert_eq!(api.skipped.len(), 1);
}

#[tokio::test]
async fn a_broken_ref_in_a_deferred_path_item_names_the_file_and_pointer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = many_paths();
    spec["paths"]["/things3/{id}"]["get"]["parameters"] =
        json!([{"$ref": "#/components/parameters/Gone"}]);
    let docs = load_json(dir.path(), "api.json", &spec).await;
    let (_, report) = built_text(&docs);
    let name = &docs.root().name;
    let expected = format!(
        "$ref \\\"#/components/parameters/Gone\\\" at {name}#/paths/~1things3~1{{id}}/get/parameters/0 → {name}#/components/parameters/Gone"
    );
    assert!(report.contains(&expected), "{report}");
}

#[tokio::test]
async fn a_syntax_error_inside_a_path_item_names_the_file_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("api.json");
    let text =
        "{\"openapi\": \"3.0.3\", \"paths\": {\n  \"/a\": {\"get\": {\"responses\": {},}}\n}}";
    std::fs::write(&path, text).expect("write");
    let error = DocumentSet::load(&spec::SpecSource::File(path.clone()))
        .await
        .expect_err("a syntax error");
    let message = error.to_string();
    assert_eq!(
        message,
        format!("{}:2:34: invalid JSON: trailing comma", path.display())
    );
}

#[tokio::test]
async fn a_path_item_naming_another_document_is_read_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pets = json!({
        "get": {"operationId": "listPets", "responses": {"200": {"description": "ok",
            "content": {"application/json": {"schema": {"$ref": "#/Pets"}}}}}},
        "post": {"operationId": "addPet", "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "schemas.json#/Pet"}}}}, "responses": {"201": {"description": "ok"}}}
    });
    std::fs::write(
        dir.path().join("pets.json"),
        serde_json::to_vec(&json!({"item": pets, "Pets": {"type": "array"}})).expect("json"),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("schemas.json"),
        r#"{"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}}"#,
    )
    .expect("write");
    let mut spec = many_paths();
    spec["paths"]["/pets"] = json!({"$ref": "pets.json#/item"});
    spec["paths"]["/owners"] = json!({"get": {"operationId": "listOwners", "responses": {
        "200": {"description": "ok", "content": {"application/json": {
            "schema": {"$ref": "schemas.json#/Pet"}}}}}}});
    let docs = load_json(dir.path(), "api.json", &spec).await;
    assert_eq!(docs.len(), 3, "both other documents are loaded");
    let input = ApiInput::new("t", Some(&docs));
    let (catalog, _) = build(&[input], &ToolSettings::default()).expect("catalog builds");
    let tool = |name: &str| {
        catalog
            .tools()
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    assert!(tool("listPets").output_schema.is_some());
    let input = tool("addPet").input_schema.as_str();
    assert!(input.contains("\"name\""), "{input}");
    assert!(tool("listOwners").output_schema.is_some());
}
