//! Per-call hot paths, each on its own: validating arguments, building the upstream
//! request, mapping a JSON response to a tool result, and parsing and serializing the
//! JSON-RPC messages around a call. What one `tools/call` costs restmcp beyond the network
//! is roughly their sum; bench/run.sh measures the whole call.
//!
//! `cargo bench --bench hot_path`. Uses the shipped Petstore spec (`addPet`, a JSON body
//! with nested objects and arrays; `findPetsByStatus`, a query parameter).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use restmcp::catalog::{self, ApiInput};
use restmcp::config::ToolSettings;
use restmcp::spec::{self, SpecSource};
use restmcp::upstream::response::{HttpResponse, Shape};
use restmcp::upstream::tape::Tape;
use restmcp::upstream::validate::Validators;
use restmcp::upstream::{request, response};
use serde_json::{Value, json};

#[global_allocator]
static GLOBAL: restmcp::alloc::MiMalloc = restmcp::alloc::MiMalloc;

fn petstore() -> catalog::Catalog {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/petstore.yaml");
    let docs = runtime
        .block_on(spec::load(&SpecSource::File(path)))
        .expect("loads");
    let mut input = ApiInput::new("petstore", Some(&docs));
    input.base_url = Some("http://127.0.0.1:8080/api/v3");
    let (catalog, _) = catalog::build(&[input], &ToolSettings::default()).expect("builds");
    catalog
}

fn pet() -> Value {
    json!({
        "id": 10, "name": "doggie", "status": "available",
        "category": {"id": 1, "name": "Dogs"},
        "photoUrls": ["https://example.com/a.jpg", "https://example.com/b.jpg"],
        "tags": [{"id": 1, "name": "friendly"}, {"id": 2, "name": "small"}]
    })
}

fn hot_path(c: &mut Criterion) {
    let catalog = petstore();
    let validators = Validators::new(catalog.len());
    let index = catalog.index_of("addPet").expect("addPet");
    let add_pet = &catalog.tools()[index];
    let compiled = validators.get(index, add_pet).expect("compiles");
    // A body object's fields are arguments of their own.
    let object = pet();
    let arguments = match &object {
        Value::Object(map) => map.clone(),
        _ => unreachable!(),
    };
    assert!(compiled.check_arguments(&object).is_empty());

    c.bench_function("validate_arguments/addPet", |b| {
        b.iter(|| compiled.check_arguments(black_box(&object)).len())
    });
    let invalid = json!({"name": 3, "photoUrls": "x", "status": "lost"});
    c.bench_function("validate_arguments/addPet_three_violations", |b| {
        b.iter(|| compiled.check_arguments(black_box(&invalid)).len())
    });

    c.bench_function("build_request/addPet", |b| {
        b.iter(|| request::build(&add_pet.route, black_box(&arguments)).map(|r| r.url.len()))
    });
    let find = catalog.get("findPetsByStatus").expect("findPetsByStatus");
    let query = match json!({"status": "sold"}) {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    c.bench_function("build_request/findPetsByStatus", |b| {
        b.iter(|| request::build(&find.route, black_box(&query)).map(|r| r.url.len()))
    });

    let body = serde_json::to_vec(&pet()).expect("json");
    let answer = HttpResponse {
        status: 200,
        reason: "OK",
        content_type: Some("application/json"),
        body: &body,
        omitted: 0,
    };
    let shape = Shape {
        output: add_pet.route.output.as_ref(),
        fields: &[],
        bare: false,
        bound: None,
        from_text: false,
    };
    let check = |tape: &Tape<'_>| compiled.check_answer(tape);
    c.bench_function("map_response/addPet_json", |b| {
        b.iter(|| response::to_result("petstore", black_box(&answer), &shape, &check).is_error)
    });
    // As for an MCP answer restmcp writes: checked on a tape, left in the text.
    let shape = Shape {
        from_text: true,
        ..shape
    };
    c.bench_function("map_response/addPet_json_from_text", |b| {
        b.iter(|| response::to_result("petstore", black_box(&answer), &shape, &check).is_error)
    });
    // The same with escapes in its strings, as in most real answers' descriptions.
    let mut escaped = pet();
    escaped["name"] = json!("doggie \"Rex\"\nline two\tend");
    escaped["tags"][0]["name"] = json!("friendly\r\n");
    let body = serde_json::to_vec(&escaped).expect("json");
    let answer = HttpResponse {
        body: &body,
        ..answer
    };
    c.bench_function("map_response/addPet_escaped_json_from_text", |b| {
        b.iter(|| response::to_result("petstore", black_box(&answer), &shape, &check).is_error)
    });

    let call = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 42, "method": "tools/call",
        "params": {"name": "addPet", "arguments": pet()}
    }))
    .expect("json");
    c.bench_function("jsonrpc/parse_tools_call_value", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(&call)).map(|v| v.is_object()))
    });
    c.bench_function("jsonrpc/parse_tools_call_typed", |b| {
        b.iter(|| {
            serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(black_box(&call)).is_ok()
        })
    });
    let result = rmcp::model::CallToolResult::structured(pet());
    let message = rmcp::model::JsonRpcResponse {
        jsonrpc: rmcp::model::JsonRpcVersion2_0,
        id: rmcp::model::RequestId::Number(42),
        result: rmcp::model::ServerResult::CallToolResult(result),
    };
    c.bench_function("jsonrpc/serialize_call_result", |b| {
        b.iter(|| serde_json::to_vec(black_box(&message)).map(|v| v.len()))
    });
}

criterion_group!(benches, hot_path);
criterion_main!(benches);
