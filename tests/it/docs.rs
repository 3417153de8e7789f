//! The developer documentation stays true: `docs/development.md` walks one call through the
//! code by file and function name, and a rename or a move that it does not follow fails
//! here, naming what the chapter mentions that no longer exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
    let chapter =
        std::fs::read_to_string(root().join("docs/development.md")).expect("docs/development.md");
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
        "docs/development.md names what src/ does not have (renamed or moved?): {}",
        missing.join(", ")
    );
}
