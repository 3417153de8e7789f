//! Loader benchmark: a spec file on disk → a ready tool list (parse, `$ref` resolution,
//! normalization, synthesis and the serialized `tools/list`), as at server start-up.
//!
//! `cargo bench --bench loader`. The large specs are read from ../shared/specs and skipped
//! when absent; the shipped Petstore always runs.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use restmcp::catalog::{self, ApiInput};
use restmcp::config::ToolSettings;
use restmcp::spec::{self, SpecSource};

#[global_allocator]
static GLOBAL: restmcp::alloc::MiMalloc = restmcp::alloc::MiMalloc;

fn specs() -> Vec<(&'static str, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut specs = vec![("petstore", root.join("specs/petstore.yaml"))];
    for name in ["github", "stripe", "kubernetes"] {
        let path = root.join(format!("../shared/specs/real/{name}.json"));
        if path.exists() {
            specs.push((name, path));
        } else {
            eprintln!("skipping {name}: {} not found", path.display());
        }
    }
    specs
}

fn load_to_tool_list(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let settings = ToolSettings::default();
    let mut group = c.benchmark_group("load_to_tool_list");
    group.sample_size(10);
    for (name, path) in specs() {
        let source = SpecSource::File(path);
        group.bench_function(name, |b| {
            b.iter(|| {
                let docs = runtime.block_on(spec::load(&source)).expect("loads");
                let input = ApiInput::new(name, Some(&docs));
                let (catalog, _) = catalog::build(&[input], &settings).expect("builds");
                catalog.list_json().len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, load_to_tool_list);
criterion_main!(benches);
