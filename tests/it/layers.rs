//! The house's shape, checked: stages run one way and no folder holds a circle.
//!
//! `src/lib.rs` states the floors; this test reads every source file (outside unit tests) for
//! the `crate::MODULE` paths it names and fails on an import from a floor to the same or a
//! higher one, on a top-level module no floor names (a new module must be given its place),
//! and on two files of one folder that name each other through `super::` (directly or round
//! a longer loop). Paths are read as text, as `python3 ../shared/tools/layers.py src` does;
//! comments and `#[cfg(test)]` modules do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, lowest first. A module may name only modules on lower floors, so the first
/// floor names none of the others: `config` owns its own types, and the rest of it are
/// small cross-cutting helpers any floor may use.
const FLOORS: &[&[&str]] = &[
    &[
        "config",
        "json",
        "secret",
        "http_client",
        "digest",
        "rate",
        "parallel",
    ],
    &["telemetry", "identity", "store"],
    &["spec"],
    &["schema"],
    &["catalog"],
    &["upstream"],
    &["mock", "discovery"],
    &["load"],
    &["mcp"],
    &["http", "reload"],
    &["cli"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Test files and test folders are not part of the layering.
fn is_test_file(relative: &Path) -> bool {
    relative
        .iter()
        .any(|part| part == "tests" || part == "tests.rs")
}

/// The file's code without comments and without a trailing `#[cfg(test)] mod … { … }`.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.contains('{'))
        {
            break;
        }
        // A comment line stays as an empty one, so line numbers stay true.
        if !trimmed.starts_with("//") {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Every name `prefix::NAME` or `prefix::{NAME, …}` introduces, with its line number.
fn named_after(code: &str, prefix: &str) -> Vec<(String, usize)> {
    let mut names = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let head: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !head.is_empty() {
                        names.push((head, number + 1));
                    }
                }
            } else {
                let head: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    names.push((head, number + 1));
                }
            }
        }
    }
    names
}

fn top_module(relative: &Path) -> String {
    let first = relative
        .iter()
        .next()
        .and_then(|p| p.to_str())
        .unwrap_or("");
    first.strip_suffix(".rs").unwrap_or(first).to_string()
}

#[test]
fn stages_run_one_way() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.strip_prefix(&root).ok())
        .map(top_module)
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let unplaced: Vec<&String> = modules.iter().filter(|m| floor_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules without a floor in tests/it/layers.rs (and src/lib.rs): {unplaced:?}"
    );
    let mut upward = Vec::new();
    for path in &files {
        let Ok(relative) = path.strip_prefix(&root) else {
            continue;
        };
        let from = top_module(relative);
        if from == "lib" || from == "main" || is_test_file(relative) {
            continue;
        }
        let Some(from_floor) = floor_of(&from) else {
            continue;
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for (to, line) in named_after(&code(&text), "crate::") {
            if to == from || !modules.contains(&to) {
                continue;
            }
            let to_floor = floor_of(&to).unwrap_or(usize::MAX);
            if to_floor >= from_floor {
                upward.push(format!(
                    "src/{}:{line}: {from} (floor {from_floor}) names {to} (floor {to_floor})",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that do not run down the floors:\n{}",
        upward.join("\n")
    );
}

/// The groups of nodes that reach each other (a circle each), found by plain search from
/// every node: a folder holds a few dozen files at most.
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let reach = |start: &PathBuf| {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&PathBuf> = graph.get(start).into_iter().flatten().collect();
        while let Some(node) = stack.pop() {
            if seen.insert(node.clone()) {
                stack.extend(graph.get(node).into_iter().flatten());
            }
        }
        seen
    };
    let reachable: BTreeMap<&PathBuf, BTreeSet<PathBuf>> =
        graph.keys().map(|node| (node, reach(node))).collect();
    let mut groups: Vec<Vec<PathBuf>> = Vec::new();
    let mut placed = BTreeSet::new();
    for (node, from_node) in &reachable {
        if placed.contains(*node) || !from_node.contains(*node) {
            continue;
        }
        let group: Vec<PathBuf> = from_node
            .iter()
            .filter(|other| reachable.get(other).is_some_and(|r| r.contains(*node)))
            .cloned()
            .collect();
        placed.extend(group.iter().cloned());
        groups.push(group);
    }
    groups
}

#[test]
fn no_folder_holds_a_circle() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for path in &files {
        let Ok(relative) = path.strip_prefix(&root) else {
            continue;
        };
        if is_test_file(relative) {
            continue;
        }
        let Some(parent) = path.parent() else {
            continue;
        };
        let folder = if path.file_name().is_some_and(|n| n == "mod.rs") {
            parent.parent().unwrap_or(parent)
        } else {
            parent
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for (name, _) in named_after(&code(&text), "super::") {
            for sibling in [
                folder.join(format!("{name}.rs")),
                folder.join(&name).join("mod.rs"),
            ] {
                if sibling.exists() && &sibling != path {
                    graph.entry(path.clone()).or_default().insert(sibling);
                }
            }
        }
    }
    let found = circles(&graph);
    let shown: Vec<String> = found
        .iter()
        .map(|group| {
            group
                .iter()
                .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
                .collect::<Vec<_>>()
                .join(" ↔ ")
        })
        .collect();
    assert!(
        shown.is_empty(),
        "files of one folder that name each other:\n{}",
        shown.join("\n")
    );
}

#[test]
fn the_reader_of_paths_sees_groups_and_skips_comments_and_unit_tests() {
    let text = "use crate::{spec::Method, json};\n// crate::mcp in a comment\nfn f() { crate::schema::x(); }\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\n";
    let names: Vec<String> = named_after(&code(text), "crate::")
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(names, ["spec", "json", "schema"]);
    let mut graph = BTreeMap::new();
    let (a, b, c) = (PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c"));
    graph.insert(a.clone(), BTreeSet::from([b.clone()]));
    graph.insert(b.clone(), BTreeSet::from([c.clone()]));
    graph.insert(c.clone(), BTreeSet::from([a.clone()]));
    assert_eq!(circles(&graph), vec![vec![a, b, c]]);
}
