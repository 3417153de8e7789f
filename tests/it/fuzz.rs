//! The fuzz targets' checks (fuzz/checks.rs) run over their seed inputs and over every
//! input that ever crashed a target (fuzz/regressions/TARGET/), so a fixed crash stays
//! fixed without cargo-fuzz or a nightly compiler. `bash fuzz/run.sh` runs the fuzzers.

use std::path::{Path, PathBuf};

#[path = "../../fuzz/checks.rs"]
mod checks;

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files: Vec<PathBuf> = ["seeds", "regressions"]
        .iter()
        .filter_map(|dir| std::fs::read_dir(root.join(dir).join(target)).ok())
        .flatten()
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

fn run(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no inputs for {target}");
    for file in files {
        let data = std::fs::read(&file).expect("read input");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target} fails on {}", file.display());
    }
}

#[test]
fn spec_load_inputs() {
    run("spec_load", checks::spec_load);
}

#[test]
fn call_arguments_inputs() {
    run("call_arguments", checks::call_arguments);
}

#[test]
fn response_mapping_inputs() {
    run("response_mapping", checks::response_mapping);
}

#[test]
fn mcp_message_inputs() {
    run("mcp_message", checks::mcp_message);
}
