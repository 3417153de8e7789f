//! Snapshots pin the exact tools of the Petstore specs, so any change to naming, schemas,
//! annotations or argument maps shows up in review.

use serde_json::{Value, json};

use crate::support::{build, fixture, load_docs};

fn tools_and_routes(relative: &str) -> (Value, Value) {
    let docs = load_docs(&fixture(relative));
    let (catalog, _) = build(&docs);
    let list: Value = serde_json::from_str(catalog.list_json()).expect("json");
    let routes: Vec<Value> = catalog
        .tools()
        .iter()
        .map(|t| json!({"tool": t.name, "route": t.route}))
        .collect();
    (list, Value::Array(routes))
}

#[test]
fn petstore_v3_tools() {
    let (list, routes) = tools_and_routes("petstore-v3.yaml");
    insta::assert_json_snapshot!("petstore_v3_tools", list);
    insta::assert_json_snapshot!("petstore_v3_routes", routes);
}

#[test]
fn petstore_v2_tools() {
    let (list, routes) = tools_and_routes("petstore-v2.json");
    insta::assert_json_snapshot!("petstore_v2_tools", list);
    insta::assert_json_snapshot!("petstore_v2_routes", routes);
}

#[test]
fn petstore_v2_separate_files_tools() {
    let (list, _) = tools_and_routes("petstore-v2-separate/spec/swagger.yaml");
    insta::assert_json_snapshot!("petstore_v2_separate_tools", list);
}

#[test]
fn library_v3_1_tools() {
    let (list, routes) = tools_and_routes("library-3.1.yaml");
    insta::assert_json_snapshot!("library_v3_1_tools", list);
    insta::assert_json_snapshot!("library_v3_1_routes", routes);
}
