//! Client schema dialects over every API description in ../shared/specs: each
//! tool's inputSchema, adapted to each dialect, breaks none of the dialect's rules and is
//! still valid JSON Schema that compiles; and for a sample of tools, arguments generated
//! for the adapted schema come back from `restore_arguments` valid for the original one.
//!
//! Each test prints how many tools lose something per dialect (`--nocapture` shows it).

use std::path::{Path, PathBuf};
use std::time::Instant;

use restmcp::catalog::Tool;
use restmcp::config::Dialect;
use restmcp::schema::dialect::{self, Adapted};
use restmcp::schema::example;
use serde_json::Value;

use crate::support::{build, load_docs, shared_spec};

const DIALECTS: [Dialect; 2] = [Dialect::OpenaiStrict, Dialect::Gemini];

/// Keywords a dialect can only put in words (or, for `oneOf`, only loosen into `anyOf`):
/// a restored value may miss them, and restmcp's validation against the original schema
/// reports it to the model. Anything else failing is a bug.
fn only_described(dialect: Dialect, keyword: &str) -> bool {
    let both = [
        "oneOf",
        "uniqueItems",
        "format",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "contains",
    ];
    let more: &[&str] = match dialect {
        Dialect::OpenaiStrict => &["minProperties", "maxProperties"],
        _ => &["exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
    };
    both.contains(&keyword) || more.contains(&keyword)
}

#[derive(Default)]
struct Tally {
    tools: usize,
    losing: [usize; 2],
    notes: [usize; 2],
    round_trips: usize,
    no_value: usize,
}

/// The checks every tool must pass; round trips when `round_trip`.
fn check_tool(tool: &Tool, round_trip: bool, tally: &mut Tally) {
    let input = &tool.input_schema.to_value();
    tally.tools += 1;
    for (i, d) in DIALECTS.into_iter().enumerate() {
        let adapted = dialect::adapt_input(d, input);
        let problems = dialect::violations(d, &adapted.schema);
        assert!(
            problems.is_empty(),
            "{} in {d}: {problems:#?}\n{}",
            tool.name,
            serde_json::to_string_pretty(&adapted.schema).unwrap_or_default()
        );
        if let Err(error) = jsonschema::draft202012::meta::validate(&adapted.schema) {
            panic!(
                "{} in {d}: not valid JSON Schema 2020-12: {error}",
                tool.name
            );
        }
        let validator = jsonschema::draft202012::new(&adapted.schema)
            .unwrap_or_else(|e| panic!("{} in {d}: does not compile: {e}", tool.name));
        if !adapted.dropped.is_empty() {
            tally.losing[i] += 1;
            tally.notes[i] += adapted.dropped.len();
        }
        if round_trip {
            check_round_trip(tool, d, input, &adapted, &validator, tally);
        }
    }
}

fn check_round_trip(
    tool: &Tool,
    d: Dialect,
    original: &Value,
    adapted: &Adapted,
    validator: &jsonschema::Validator,
    tally: &mut Tally,
) {
    let Some(generated) = example::example(&adapted.schema) else {
        tally.no_value += 1;
        return;
    };
    if !validator.is_valid(&generated) {
        // The generator's best effort (an unusual pattern): nothing to prove with it.
        tally.no_value += 1;
        return;
    }
    let mut nulled = generated.clone();
    nulls_where_allowed(validator, &mut nulled);
    let original_validator = jsonschema::draft202012::new(original).expect("original compiles");
    for sent in [generated, nulled] {
        let Value::Object(arguments) = sent.clone() else {
            panic!("{} in {d}: arguments {sent} are not an object", tool.name)
        };
        let restored = Value::Object(dialect::restore_arguments(d, original, arguments));
        for error in original_validator.iter_errors(&restored) {
            let schema_path = error.schema_path().to_string();
            let keyword = schema_path.rsplit('/').next().unwrap_or_default();
            let known_loss = match error.kind() {
                jsonschema::error::ValidationErrorKind::Required { property } => {
                    let name = format!("{}`", property.as_str().unwrap_or_default());
                    adapted
                        .dropped
                        .iter()
                        .any(|n| n.contains(&name) && n.contains("requires it"))
                }
                _ => only_described(d, keyword),
            };
            assert!(
                known_loss,
                "{} in {d}: {sent}\nrestored to {restored}\nfails the original at {schema_path} ({}): {error}",
                tool.name,
                error.instance_path()
            );
        }
        tally.round_trips += 1;
    }
}

/// The top-level arguments whose adapted schema takes null, set to null: the strict
/// "left out" spelling of every optional argument.
fn nulls_where_allowed(validator: &jsonschema::Validator, value: &mut Value) {
    let Value::Object(map) = value else { return };
    let names: Vec<String> = map.keys().cloned().collect();
    for name in names {
        let before = map.insert(name.clone(), Value::Null);
        if !validator.is_valid(&Value::Object(map.clone()))
            && let Some(before) = before
        {
            map.insert(name, before);
        }
    }
}

fn check_document(path: &Path, round_trip_every: usize, tally: &mut Tally) {
    let docs = load_docs(path);
    let (catalog, _) = build(&docs);
    for (i, tool) in catalog.tools().iter().enumerate() {
        check_tool(tool, i % round_trip_every == 0, tally);
    }
}

fn report(name: &str, tally: &Tally, started: Instant) {
    println!(
        "dialects: {name}: {} tools; openai-strict drops something in {} ({} notes), gemini in {} ({} notes); {} round trips ({} tools without a generated value); {:.1}s",
        tally.tools,
        tally.losing[0],
        tally.notes[0],
        tally.losing[1],
        tally.notes[1],
        tally.round_trips,
        tally.no_value,
        started.elapsed().as_secs_f64()
    );
}

/// Every document of the OpenAPI Initiative's examples and the petstore, every tool round
/// tripped.
#[test]
fn small_shared_specs_adapt_and_round_trip() {
    let Some(root) = shared_spec("oai-examples") else {
        return;
    };
    let started = Instant::now();
    let mut documents: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "common" {
                    stack.push(path);
                }
            } else if !path.parent().is_some_and(|p| p.ends_with("spec"))
                || name == "swagger.yaml"
                || name == "swagger.json"
            {
                documents.push(path);
            }
        }
    }
    documents.extend(shared_spec("petstore3.yaml"));
    assert!(documents.len() >= 20, "only {} documents", documents.len());
    let mut tally = Tally::default();
    for document in &documents {
        check_document(document, 1, &mut tally);
    }
    report("oai-examples + petstore3", &tally, started);
}

fn real(file: &str, round_trip_every: usize) {
    let Some(path) = shared_spec(&format!("real/{file}")) else {
        return;
    };
    let started = Instant::now();
    let mut tally = Tally::default();
    check_document(&path, round_trip_every, &mut tally);
    report(file, &tally, started);
}

#[test]
fn github_adapts() {
    real("github.json", 10);
}

#[test]
fn stripe_adapts() {
    real("stripe.json", 10);
}

#[test]
fn kubernetes_adapts() {
    real("kubernetes.json", 10);
}

#[test]
fn twilio_adapts() {
    real("twilio.json", 10);
}

#[test]
fn box_adapts() {
    real("box.json", 10);
}
