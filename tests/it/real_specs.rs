//! Every shipped fixture and every real-world spec in ../shared/specs maps completely to
//! valid tools (issue #2).

use crate::support::{assert_spec_maps_completely, fixture, shared_spec};

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
    assert_eq!(assert_spec_maps_completely(&path).len(), 1223);
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
