//! Every shipped fixture and every real-world spec in ../shared/specs maps completely to
//! valid tools.

use serde_json::{Value, json};

use crate::support::{
    assert_spec_maps_completely, build, fixture, load_docs, root_with_paths, shared_spec,
};

#[test]
fn petstore_swagger_2_json() {
    let catalog = assert_spec_maps_completely(&fixture("petstore-v2.json"));
    assert_eq!(catalog.len(), 3);
}

#[test]
fn petstore_swagger_2_yaml_split_over_files_with_relative_refs() {
    let catalog = assert_spec_maps_completely(&fixture("petstore-v2-separate/spec/swagger.yaml"));
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["findPets", "addPet", "find_pet_by_id", "deletePet"]);
    // `tags` and `limit` come from parameters.yaml, the pet from Pet.yaml.
    let find = catalog.get("findPets").expect("tool");
    let input = find.input_schema.to_value();
    assert!(input["properties"]["tags"].is_object());
    assert!(input["properties"]["limit"].is_object());
    let output = find.output_schema.as_ref().expect("output").to_value();
    assert_eq!(output["properties"]["result"]["type"], "array");
}

#[test]
fn petstore_openapi_3_0_yaml() {
    let catalog = assert_spec_maps_completely(&fixture("petstore-v3.yaml"));
    assert_eq!(catalog.len(), 19);
}

#[test]
fn petstore_expanded_openapi_3_0_json() {
    assert_spec_maps_completely(&fixture("petstore-expanded-v3.json"));
}

#[test]
fn library_openapi_3_1_yaml() {
    let catalog = assert_spec_maps_completely(&fixture("library-3.1.yaml"));
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    // Webhooks are not operations restmcp calls; the unnamed GET is named from its path.
    assert_eq!(
        names,
        [
            "listBooks",
            "addBook",
            "get_categories_categoryId",
            "replaceCategory"
        ]
    );
}

#[test]
fn shared_oai_examples_all_versions() {
    let Some(root) = shared_spec("oai-examples") else {
        return;
    };
    let mut checked = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                // The parts of petstore-separate are not documents of their own.
                if name != "common" {
                    stack.push(path);
                }
            } else if path.parent().is_some_and(|p| p.ends_with("spec"))
                && name != "swagger.yaml"
                && name != "swagger.json"
            {
                continue;
            } else {
                assert_spec_maps_completely(&path);
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} example documents found");
}

#[test]
fn shared_petstore3() {
    let Some(path) = shared_spec("petstore3.yaml") else {
        return;
    };
    assert_eq!(assert_spec_maps_completely(&path).len(), 19);
}

#[test]
fn shared_github() {
    let Some(path) = shared_spec("real/github.json") else {
        return;
    };
    let catalog = assert_spec_maps_completely(&path);
    assert_eq!(catalog.len(), 1223);
    // GitHub writes a schema's `example` as a `$ref` to an Example
    // object; the tool carries that example's value (assert_spec_maps_completely checked
    // that no `$ref` is left in any value of any tool).
    let rules = catalog
        .get("repos_get-all-deployment-protection-rules")
        .expect("tool");
    let output = rules.output_schema.as_ref().expect("output").to_value();
    // (GitHub's example value is an array of the object's two halves; it is published as
    // GitHub wrote it: examples are annotations, not checked.)
    let example = &output["examples"][0];
    assert_eq!(example[0], json!({"total_count": 2}), "{example}");
    assert_eq!(
        example[1]["custom_deployment_protection_rules"][0]["app"]["slug"], "a-custom-app",
        "{example}"
    );
}

#[test]
fn shared_stripe() {
    let Some(path) = shared_spec("real/stripe.json") else {
        return;
    };
    assert_eq!(assert_spec_maps_completely(&path).len(), 452);
}

#[test]
fn shared_kubernetes() {
    let Some(path) = shared_spec("real/kubernetes.json") else {
        return;
    };
    assert_eq!(assert_spec_maps_completely(&path).len(), 845);
}

#[test]
fn shared_twilio() {
    let Some(path) = shared_spec("real/twilio.json") else {
        return;
    };
    assert_eq!(assert_spec_maps_completely(&path).len(), 195);
}

#[test]
fn shared_box() {
    let Some(path) = shared_spec("real/box.json") else {
        return;
    };
    assert_eq!(assert_spec_maps_completely(&path).len(), 260);
}

/// Examples, defaults and enum members written as `$ref`s become the
/// Example objects' values or are left out (and `check` says so); no `$ref` leaves a tool.
#[test]
fn refs_in_examples_defaults_and_enums_never_leave_a_tool() {
    let path = fixture("refs-in-values.yaml");
    let catalog = assert_spec_maps_completely(&path);
    let list = catalog.get("listRules").expect("tool");
    let input = list.input_schema.to_value();
    assert_eq!(input["properties"]["owner"]["examples"], json!(["octocat"]));
    assert_eq!(input["properties"]["repo"], json!({"type": "string"}));
    assert_eq!(
        input["properties"]["filter"],
        json!({"type": "object", "examples": [{"enabled": true}]})
    );
    assert_eq!(input["properties"]["kind"], json!({}));
    let output = list.output_schema.as_ref().expect("output").to_value();
    assert_eq!(
        output["examples"],
        json!([{"total_count": 1, "rules": [{"id": 3, "enabled": true}]}])
    );
    let create = catalog.get("createRule").expect("tool");
    assert_eq!(
        create.input_schema.to_value()["properties"]["template"],
        json!({"type": "object", "examples": [{"id": 3, "enabled": true}]})
    );
    let text = |tool: &restmcp::catalog::Tool| {
        format!(
            "{}{}",
            tool.input_schema.to_value(),
            tool.output_schema
                .as_ref()
                .map(|s| s.to_value())
                .unwrap_or(Value::Null)
        )
    };
    for tool in catalog.tools() {
        assert!(
            !text(tool).contains("$ref"),
            "{}: {}",
            tool.name,
            text(tool)
        );
    }
    let (_, report) = build(&load_docs(&path));
    let notes: Vec<&String> = report.apis[0]
        .operations
        .iter()
        .flat_map(|o| &o.notes)
        .collect();
    for says in [
        "parameter example left out: $ref \"#/components/schemas/Rule\"",
        "default removed: $ref \"#/components/examples/missing\"",
        "enum removed",
        "const removed",
    ] {
        assert!(
            notes.iter().any(|n| n.contains(says)),
            "{says:?}: {notes:?}"
        );
    }
}

/// A summary or description made only of markup (BlazeMeter's icon
/// and no-break space) gives no title and the `METHOD /path` description; argument and
/// property descriptions that clean to nothing are left out.
#[test]
fn text_that_cleans_to_nothing_falls_back_or_is_left_out() {
    let catalog = assert_spec_maps_completely(&fixture("markup-only-text.yaml"));
    let sessions = catalog.get("active_sessions").expect("tool");
    assert_eq!(sessions.title, None);
    assert_eq!(sessions.description, "GET /user/active/sessions");

    let tests = catalog.get("retrieveTests").expect("tool");
    assert_eq!(tests.title.as_deref(), Some("List user private tests"));
    assert_eq!(tests.description, "List user private tests");
    let input = tests.input_schema.to_value();
    assert_eq!(input["properties"]["skip"], json!({"type": "string"}));
    assert_eq!(
        input["properties"]["limit"]["description"],
        "At most this many"
    );

    let terminate = catalog.get("panic_terminate").expect("tool");
    assert_eq!(terminate.title, None);
    assert_eq!(
        terminate.description,
        "[DEPRECATED] POST /user/active/terminate"
    );
    assert_eq!(
        terminate.input_schema.to_value()["properties"]["session_ids"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        terminate.output_schema.as_ref().expect("output").to_value()["properties"]["result"],
        json!({"type": "string"})
    );
}

/// On the corpus: every `pattern` (and `patternProperties` name) of
/// every description under `../shared/specs` is published as one restmcp's validator
/// compiles, or left out; and every tool whose published schema holds a pattern compiles
/// its validators, so none is uncallable because of its own schema.
#[test]
fn every_pattern_of_the_shared_specs_compiles_after_restmcps_treatment() {
    let Some(root) = shared_spec("") else {
        return;
    };
    let mut files = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "json" || e == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    let compiles = |pattern: &str| {
        jsonschema::draft202012::new(&json!({"type": "string", "pattern": pattern})).is_ok()
    };
    let mut written = 0;
    for file in &files {
        let docs = load_docs(file);
        let mut patterns = Vec::new();
        collect_patterns(&root_with_paths(&docs), &mut patterns);
        for pattern in patterns {
            written += 1;
            if let Ok(published) = restmcp::schema::ecma::publishable(&pattern) {
                assert!(compiles(&published), "{}: {pattern}", file.display());
            }
        }
        let is_api =
            docs.root().root.get("openapi").is_some() || docs.root().root.get("swagger").is_some();
        if !is_api {
            continue;
        }
        let (catalog, _) = build(&docs);
        let tools = catalog.tools();
        let validators = restmcp::upstream::validate::Validators::new(tools.len());
        for (index, tool) in tools.iter().enumerate() {
            let mut published = Vec::new();
            collect_patterns(&tool.input_schema.to_value(), &mut published);
            if published.is_empty() {
                continue;
            }
            for pattern in &published {
                assert!(
                    compiles(pattern),
                    "{} {}: {pattern}",
                    file.display(),
                    tool.name
                );
            }
            let compiled = validators.get(index, tool).expect("tool");
            let said = compiled.check_arguments(&json!({})).join("\n");
            assert!(!said.contains("cannot be used"), "{}: {said}", tool.name);
        }
    }
    assert!(written > 100, "{written} patterns in the corpus");
}

/// Every string `pattern` value and `patternProperties` name in `value`.
fn collect_patterns(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("pattern", Value::String(pattern)) => out.push(pattern.clone()),
                    ("patternProperties", Value::Object(names)) => {
                        out.extend(names.keys().cloned());
                    }
                    _ => {}
                }
                collect_patterns(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_patterns(item, out)),
        _ => {}
    }
}
