//! The documentation stays true and whole. README.md is a short front door and the manual
//! is the mdBook in `docs/` (`docs/src/SUMMARY.md` lists its chapters):
//!
//! - the development chapter (`docs/src/development.md`) walks one call through the code by
//!   file and function name, and a rename or a move that it does not follow fails here;
//! - the configuration reference (`docs/src/configuration.md`) documents every key of the
//!   JSON Schema `restmcp schema config` prints, and no key that schema does not have;
//! - every relative link of README.md, `bench/README.md` and the book reaches a file, and
//!   its `#anchor` a heading of that file (as mdBook makes heading ids);
//! - SUMMARY lists every chapter file, and README stays under 300 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every name `src/` defines: functions, types, traits, modules, constants, and the stems
/// of its files and folders.
fn defined_names(files: &[PathBuf]) -> BTreeSet<String> {
    let item = regex::Regex::new(
        r"\b(?:fn|struct|enum|type|trait|mod|const|static)\s+([A-Za-z_][A-Za-z0-9_]*)",
    )
    .expect("pattern");
    let mut names = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).expect("a source file");
        names.extend(item.captures_iter(&text).map(|c| c[1].to_string()));
        for part in file
            .strip_prefix(root().join("src"))
            .expect("under src")
            .iter()
        {
            let part = part.to_string_lossy();
            names.insert(part.trim_end_matches(".rs").to_string());
        }
    }
    names
}

/// Words in code spans that name no item: protocol methods and values.
const NOT_ITEMS: &[&str] = &[
    "initialize",
    "cancelled",
    "select",
    "Accept",
    "Host",
    "Origin",
    "_meta",
    "from_fn",
    "input_required",
];

#[test]
fn the_development_chapter_names_only_what_exists() {
    let chapter = std::fs::read_to_string(root().join("docs/src/development.md"))
        .expect("docs/src/development.md");
    let mut files = Vec::new();
    crate::support::rust_files(&root().join("src"), &mut files);
    let names = defined_names(&files);
    let relative: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(root())
                .expect("under the root")
                .display()
                .to_string()
        })
        .collect();
    let span = regex::Regex::new(r"`([^`\s]+)`").expect("pattern");
    let identifier = regex::Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("pattern");
    let mut missing = Vec::new();
    let mut checked = 0;
    for capture in span.captures_iter(&chapter) {
        let token = capture[1].trim_end_matches('!');
        let is_path = token.ends_with(".rs") || (token.ends_with('/') && !token.contains(':'));
        let found = if is_path {
            let wanted = token.trim_end_matches('/');
            root().join(wanted).exists()
                || relative.iter().any(|file| {
                    file.ends_with(&format!("/{wanted}")) || file.contains(&format!("/{wanted}/"))
                })
        } else if token.split("::").all(|part| identifier.is_match(part)) {
            if NOT_ITEMS.contains(&token) || token.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            token.split("::").all(|part| names.contains(part))
        } else {
            continue;
        };
        checked += 1;
        if !found {
            missing.push(token.to_string());
        }
    }
    assert!(
        checked > 100,
        "only {checked} names checked: is the chapter there?"
    );
    assert!(
        missing.is_empty(),
        "docs/src/development.md names what src/ does not have (renamed or moved?): {}",
        missing.join(", ")
    );
}

/// The lines of README.md past which it stops being a front door: the rest belongs in the
/// book.
const README_MAX_LINES: usize = 300;

#[test]
fn readme_is_a_front_door() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines, {README_MAX_LINES} or more: move the detail into a chapter of docs/src/"
    );
    for command in [
        "cargo run --release",
        "cargo test",
        "cargo install --locked --path .",
    ] {
        assert!(
            readme.contains(command),
            "README.md no longer shows `{command}`"
        );
    }
}

/// The id mdBook gives a heading (mdbook-html's `id_from_content` over the heading's text):
/// lowercase; alphanumerics, `-` and `_` kept; whitespace becomes `-`; anything else dropped.
fn heading_id(heading: &str) -> String {
    let link = regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("pattern");
    let text = link.replace_all(heading, "$1").replace('`', "");
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c)
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A Markdown file's lines outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchors a Markdown file's headings get, a repeated id numbered `-1`, `-2`… as mdBook
/// does.
fn anchors(text: &str) -> BTreeSet<String> {
    let heading = regex::Regex::new(r"^#{1,6}\s+(.*?)\s*#*\s*$").expect("pattern");
    let mut ids = BTreeSet::new();
    for line in prose_lines(text) {
        let Some(found) = heading.captures(line) else {
            continue;
        };
        let id = heading_id(&found[1]);
        let mut unique = id.clone();
        let mut n = 0;
        while !ids.insert(unique.clone()) {
            n += 1;
            unique = format!("{id}-{n}");
        }
    }
    ids
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out.sort();
}

/// The relative link targets of a Markdown file: inline links outside code, without a
/// scheme.
fn relative_links(text: &str) -> Vec<String> {
    let code = regex::Regex::new(r"`[^`]*`").expect("pattern");
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("pattern");
    let scheme = regex::Regex::new(r"^[A-Za-z][A-Za-z0-9+.-]*:").expect("pattern");
    let mut out = Vec::new();
    for line in prose_lines(text) {
        // A code span as link text keeps its `](target)` after the span is taken out.
        let line = code.replace_all(line, "");
        for found in link.captures_iter(&line) {
            if !scheme.is_match(&found[1]) {
                out.push(found[1].to_string());
            }
        }
    }
    out
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let mut files = vec![root().join("README.md"), root().join("bench/README.md")];
    markdown_files(&root().join("docs/src"), &mut files);
    assert!(
        files.len() > 10,
        "only {} files: is the book there?",
        files.len()
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a Markdown file");
        for target in relative_links(&text) {
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a folder").join(path)
            };
            let shown = format!(
                "{}: {target}",
                file.strip_prefix(root()).expect("under the root").display()
            );
            if !linked.exists() {
                broken.push(format!("{shown} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!("{shown} (no heading with that id)"));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_summary_lists_every_chapter_and_only_chapters() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<String> = relative_links(&summary)
        .into_iter()
        .map(|target| target.split('#').next().unwrap_or_default().to_string())
        .collect();
    let mut files = Vec::new();
    markdown_files(&src, &mut files);
    let chapters: BTreeSet<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(&src)
                .expect("under src")
                .display()
                .to_string()
        })
        .filter(|f| f != "SUMMARY.md")
        .collect();
    let unlisted: Vec<_> = chapters.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&chapters).collect();
    assert!(
        unlisted.is_empty(),
        "chapters SUMMARY.md does not list: {unlisted:?}"
    );
    assert!(
        missing.is_empty(),
        "SUMMARY.md lists files that are not there: {missing:?}"
    );
    let first = relative_links(&summary).into_iter().next();
    assert_eq!(first.as_deref(), Some("getting-started.md"));
}

/// Every key path of the config schema: properties by name, the entries of a map
/// (`additionalProperties`) as `<>`, array items and `anyOf`/`oneOf`/`allOf` variants at the
/// path of what holds them, `$ref`s followed into `$defs`.
fn schema_keys(root: &Value, node: &Value, path: &str, keys: &mut BTreeSet<String>, depth: usize) {
    assert!(
        depth < 24,
        "the config schema nests deeper than expected at {path}"
    );
    let mut node = node;
    while let Some(target) = node.get("$ref").and_then(Value::as_str) {
        node = root
            .pointer(target.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{path}: $ref {target} names nothing"));
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, sub) in properties {
            let key = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            keys.insert(key.clone());
            schema_keys(root, sub, &key, keys, depth + 1);
        }
    }
    if let Some(entry) = node.get("additionalProperties").filter(|v| v.is_object()) {
        let key = format!("{path}.<>");
        let mut resolved = entry;
        while let Some(target) = resolved.get("$ref").and_then(Value::as_str) {
            resolved = root
                .pointer(target.trim_start_matches('#'))
                .expect("a $ref");
        }
        // A map of tables has a row per entry; a map of plain values is described by its own.
        if ["properties", "anyOf", "oneOf"]
            .iter()
            .any(|k| resolved.get(k).is_some())
        {
            keys.insert(key.clone());
        }
        schema_keys(root, entry, &key, keys, depth + 1);
    }
    if let Some(items) = node.get("items") {
        schema_keys(root, items, path, keys, depth + 1);
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        for variant in node
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            schema_keys(root, variant, path, keys, depth + 1);
        }
    }
}

/// The keys the configuration reference documents: the first code span of each table row,
/// a `<name>` part read as any name.
fn documented_keys(chapter: &str) -> BTreeMap<String, String> {
    let first_span = regex::Regex::new(r"^\|\s*`([^`]+)`").expect("pattern");
    let form = regex::Regex::new(r"^[a-z_]+(\.([a-z_]+|<[a-z]+>))*$").expect("pattern");
    let name = regex::Regex::new(r"<[a-z]+>").expect("pattern");
    let mut keys = BTreeMap::new();
    for line in prose_lines(chapter) {
        let Some(found) = first_span.captures(line) else {
            continue;
        };
        let written = &found[1];
        assert!(
            form.is_match(written),
            "docs/src/configuration.md: a row's first code span must be a dotted key path: {written}"
        );
        let key = name.replace_all(written, "<>").to_string();
        if let Some(before) = keys.insert(key, written.to_string()) {
            panic!("docs/src/configuration.md documents {before} twice");
        }
    }
    keys
}

#[test]
fn the_configuration_reference_documents_every_key_of_the_schema_and_no_other() {
    let schema: Value =
        serde_json::from_str(restmcp::cli::editor_schema::CONFIG).expect("the config schema");
    let mut in_schema = BTreeSet::new();
    schema_keys(&schema, &schema, "", &mut in_schema, 0);
    assert!(
        in_schema.len() > 150 && in_schema.contains("apis.<>.auth.<>.token_exchange.audience"),
        "the walk found only {} keys",
        in_schema.len()
    );
    let chapter = std::fs::read_to_string(root().join("docs/src/configuration.md"))
        .expect("docs/src/configuration.md");
    let documented = documented_keys(&chapter);
    let undocumented: Vec<_> = in_schema
        .iter()
        .filter(|key| !documented.contains_key(*key))
        .collect();
    let unknown: Vec<_> = documented
        .iter()
        .filter(|(key, _)| !in_schema.contains(*key))
        .map(|(_, written)| written)
        .collect();
    assert!(
        undocumented.is_empty(),
        "keys of `restmcp schema config` that docs/src/configuration.md does not document (`<>` is any name): {undocumented:?}"
    );
    assert!(
        unknown.is_empty(),
        "docs/src/configuration.md documents keys `restmcp schema config` does not have: {unknown:?}"
    );
}

#[test]
fn heading_ids_are_mdbooks() {
    // mdbook-html's own cases (utils.rs, `it_normalizes_ids`), and a heading with a code span.
    assert_eq!(
        heading_id("`--passes`: add more rustdoc passes"),
        "--passes-add-more-rustdoc-passes"
    );
    assert_eq!(
        heading_id("Method-call 🐙 expressions \u{1f47c}"),
        "method-call--expressions-"
    );
    assert_eq!(heading_id("Über"), "über");
    assert_eq!(
        heading_id("`x-mcp` in the spec, and OpenAPI Overlays"),
        "x-mcp-in-the-spec-and-openapi-overlays"
    );
    assert_eq!(
        anchors("# A\n## B\n```\n# not a heading\n```\n## B\n"),
        BTreeSet::from(["a".to_string(), "b".to_string(), "b-1".to_string()])
    );
}
