//! The house's shape, checked: stages run one way, no folder holds a circle, and no function
//! grows past a page unless it is listed here with a reason.
//!
//! `src/lib.rs` states the floors in its `text` block; this test reads that block, then every
//! source file (outside unit tests) for the `crate::MODULE` paths it names, and fails on an
//! import from a floor to the same or a higher one, on a top-level module no floor names (a new
//! module must be given its place), on a floor name that is no module, and on two files of one
//! folder that name each other through `super::` (directly, through a re-export of the
//! folder's `mod.rs`, or round a longer loop). It also measures every production function and
//! fails on one over [`LONG`] lines that [`LONG_FUNCTIONS`] does not list, and on a listed one
//! that is no longer that long (the list only shrinks). Paths and functions are read as text:
//! comments, strings and `#[cfg(test)]` items do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A production function longer than this many lines (from its `fn` line to its closing
/// brace) fails [`no_function_grows_past_a_page`] unless [`LONG_FUNCTIONS`] lists it.
const LONG: usize = 120;

/// The production functions over [`LONG`] lines, as `(file under src/, fn name)`, each with
/// why it may stay for now: a "uniform table" (one arm per case, read like a list) may stay;
/// "to split" waits for its split. Remove an entry when its function shrinks; the test fails
/// until you do, so the list only shrinks.
const LONG_FUNCTIONS: &[(&str, &str)] = &[
    // uniform table: one arm per JSON Schema keyword
    ("schema/mod.rs", "emit_content"),
    // uniform table: a keyword validator, one block per keyword
    ("schema/example/check.rs", "check"),
    // uniform table: one match arm per credential scheme kind
    ("upstream/auth/credentials.rs", "api_auth"),
    // uniform table: one rule per strict-mode keyword
    ("schema/dialect/rules.rs", "strict_keywords"),
    // to split: infer the kind, then checks on required keys, env names, the key name, the
    // OAuth URLs, token exchange and scopes
    ("config/auth.rs", "checked_kind"),
    // to split: properties, patternProperties, additionalProperties and required in one pass
    ("schema/dialect/convert.rs", "object"),
    // to split: required, optional, pattern and additional properties of one example object
    ("schema/example/generate.rs", "object"),
    // to split: a list of checks on [server]; listeners, sessions, limits and tokens apart
    ("config/validate.rs", "validate_server"),
];

/// Circles between the files of a folder that exist today, each with how to break it. The
/// list only shrinks: the test fails on a circle it does not list and on one it lists that is
/// gone.
const KNOWN_CIRCLES: &[&str] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The floors of `src/lib.rs`'s `text` block, lowest first: a line starting with a number
/// opens a floor, a line without one continues the floor above it, and a floor's modules are
/// the single words before its description (columns are separated by two spaces or more).
fn floors_in(lib: &str) -> Result<Vec<Vec<String>>, String> {
    let mut floors: Vec<Vec<String>> = Vec::new();
    let mut inside = false;
    for line in lib.lines() {
        let Some(doc) = line.trim_start().strip_prefix("//!") else {
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        if !inside {
            inside = doc.trim() == "```text";
            continue;
        }
        if doc.trim() == "```" {
            return if floors.is_empty() {
                Err("the `text` block in src/lib.rs names no floor".into())
            } else {
                Ok(floors)
            };
        }
        let mut columns = doc.split("  ").map(str::trim).filter(|c| !c.is_empty());
        let mut columns = columns.by_ref().peekable();
        if let Some(number) = columns.peek().and_then(|c| c.parse::<usize>().ok()) {
            if number != floors.len() {
                return Err(format!(
                    "src/lib.rs numbers a floor {number} after floor {}",
                    floors.len().wrapping_sub(1)
                ));
            }
            columns.next();
            floors.push(Vec::new());
        }
        let words: Vec<String> = columns
            .take_while(|c| {
                c.starts_with(|ch: char| ch.is_ascii_lowercase())
                    && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            })
            .map(String::from)
            .collect();
        match floors.last_mut() {
            Some(floor) => floor.extend(words),
            None if words.is_empty() => {}
            None => return Err(format!("src/lib.rs names {words:?} before floor 0")),
        }
    }
    Err("src/lib.rs has no closed ```text block with the floors".into())
}

fn floors() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("src/lib.rs");
    floors_in(&lib).unwrap_or_else(|e| panic!("{e}"))
}

/// Test files and test folders are not part of the layering.
fn is_test_file(relative: &Path) -> bool {
    relative
        .iter()
        .any(|part| part == "tests" || part == "tests.rs")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with every comment and the inside of every string and character literal blanked
/// (newlines kept, so lines and columns stay true); lifetimes and labels stay.
fn masked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}', '"'), or else a lifetime or label.
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'' && j > i + 2)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push('\'');
                    for &inner in &chars[i + 1..end] {
                        blank(&mut out, inner);
                    }
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else if is_ident(c) && (i == 0 || !is_ident(chars[i - 1])) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push_str(&word);
            if matches!(word.as_str(), "r" | "br" | "cr") {
                // A raw string: r"…", r#"…"#, with as many hashes at the end as at the start.
                let hashes = chars[i..].iter().take_while(|&&h| h == '#').count();
                if chars.get(i + hashes) == Some(&'"') {
                    let close: Vec<char> = std::iter::once('"')
                        .chain(std::iter::repeat_n('#', hashes))
                        .collect();
                    out.extend(&chars[i..=i + hashes]);
                    i += hashes + 1;
                    while i < chars.len() && !chars[i..].starts_with(&close) {
                        blank(&mut out, chars[i]);
                        i += 1;
                    }
                    let rest = close.len().min(chars.len() - i);
                    out.extend(&chars[i..i + rest]);
                    i += rest;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where the item starting at byte `from` of masked code ends: just after its `;` or its
/// closing `}`, whichever comes first at the outermost level.
fn item_end(code: &str, from: usize) -> usize {
    let bytes = code.as_bytes();
    let (mut parens, mut braces) = (0usize, 0usize);
    for (at, &b) in bytes.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' => parens += 1,
            b')' | b']' => parens = parens.saturating_sub(1),
            b';' if parens == 0 && braces == 0 => return at + 1,
            b'{' => braces += 1,
            b'}' => {
                braces = braces.saturating_sub(1);
                if braces == 0 && parens == 0 {
                    // `use a::{b};` ends at its `;`, a body at its brace.
                    let after = code[at + 1..].trim_start();
                    return match after.strip_prefix(';') {
                        Some(rest) => code.len() - rest.len(),
                        None => at + 1,
                    };
                }
            }
            _ => {}
        }
    }
    bytes.len()
}

/// The file's production code: comments, literals' insides and every `#[cfg(test)]` item
/// (a test module, a helper) blanked, with lines kept.
fn code(text: &str) -> String {
    let mut code = masked(text);
    let marker = "#[cfg(test)]";
    let mut from = 0;
    while let Some(found) = code[from..].find(marker) {
        let start = from + found;
        let end = item_end(&code, start + marker.len());
        let blanked: String = code[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(start..end, &blanked);
        from = end;
    }
    code
}

fn line_at(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

/// Every name `prefix::NAME` or `prefix::{NAME, …}` introduces (only the first segment of
/// each item of a group, however the group is spread over lines or nested), with its line.
/// A path that `prefix` does not start (`a::super::x`) and `super::super::x` do not count.
fn named_after(code: &str, prefix: &str) -> Vec<(String, usize)> {
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(prefix) {
        let at = from + found;
        from = at + prefix.len();
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| is_ident(c) || c == ':')
        {
            continue;
        }
        let rest = &code[from..];
        let mut heads = Vec::new();
        if rest.starts_with('{') {
            let (mut depth, mut expect_head) = (0usize, true);
            let mut chars = rest.char_indices().peekable();
            while let Some((offset, c)) = chars.next() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => expect_head = true,
                    c if is_ident(c) && expect_head && depth == 1 => {
                        let mut end = offset + c.len_utf8();
                        while let Some(&(o, n)) = chars.peek() {
                            if !is_ident(n) {
                                break;
                            }
                            end = o + n.len_utf8();
                            chars.next();
                        }
                        heads.push((offset, rest[offset..end].to_string()));
                        expect_head = false;
                    }
                    c if c.is_whitespace() => {}
                    _ => expect_head = false,
                }
            }
        } else {
            let head: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            heads.push((0, head));
        }
        for (offset, head) in heads {
            if !head.is_empty() && head != "self" && head != "super" {
                names.push((head, line_at(code, from + offset)));
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
    let floors = floors();
    let floor_of = |module: &str| floors.iter().position(|f| f.iter().any(|m| m == module));
    let root = src();
    let mut files = Vec::new();
    crate::support::rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.strip_prefix(&root).ok())
        .map(top_module)
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let unplaced: Vec<&String> = modules.iter().filter(|m| floor_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules without a floor: {unplaced:?}; give each its floor in the `text` \
         block of src/lib.rs (and a line in its component list)"
    );
    let unknown: Vec<&String> = floors
        .iter()
        .flatten()
        .filter(|m| !modules.contains(*m))
        .collect();
    assert!(
        unknown.is_empty(),
        "the floors in src/lib.rs name modules that do not exist: {unknown:?}"
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

/// One leaf of a `use` tree: its path and the name it binds (`None` for a `*`).
type UseLeaf = (Vec<String>, Option<String>);

/// The leaves of every `use` declaration in masked code (`pub`, `pub(crate)` or private:
/// a child module sees them all through `super::`).
fn use_leaves(code: &str) -> Vec<UseLeaf> {
    let mut leaves = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("use ") {
        let at = from + found;
        from = at + 4;
        if code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let end = code[from..].find(';').map_or(code.len(), |e| from + e);
        let tokens = use_tokens(&code[from..end]);
        let mut pos = 0;
        use_tree(&tokens, &mut pos, Vec::new(), &mut leaves);
        from = end;
    }
    leaves
}

fn use_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_ident(c) {
            let mut word = c.to_string();
            while let Some(&n) = chars.peek().filter(|n| is_ident(**n)) {
                word.push(n);
                chars.next();
            }
            tokens.push(word);
        } else if c == ':' {
            if chars.peek() == Some(&':') {
                chars.next();
            }
        } else if matches!(c, '{' | '}' | ',' | '*') {
            tokens.push(c.to_string());
        }
    }
    tokens
}

/// Reads one tree (`a::b`, `a::{…}`, `a::*`, `a as b`) of a `use`, its path after `prefix`.
fn use_tree(tokens: &[String], pos: &mut usize, mut prefix: Vec<String>, out: &mut Vec<UseLeaf>) {
    while let Some(token) = tokens.get(*pos) {
        *pos += 1;
        match token.as_str() {
            "{" => {
                loop {
                    use_tree(tokens, pos, prefix.clone(), out);
                    match tokens.get(*pos).map(String::as_str) {
                        Some(",") => *pos += 1,
                        Some("}") => {
                            *pos += 1;
                            break;
                        }
                        _ => break,
                    }
                }
                return;
            }
            "*" => {
                out.push((prefix, None));
                return;
            }
            "}" | "," => {
                *pos -= 1;
                break;
            }
            word => {
                prefix.push(word.to_string());
                if tokens.get(*pos).is_some_and(|t| t == "as") {
                    let bound = tokens.get(*pos + 1).cloned();
                    *pos += 2;
                    out.push((prefix, bound));
                    return;
                }
                if !tokens
                    .get(*pos)
                    .is_some_and(|t| t == "{" || t == "*" || is_ident_token(t))
                {
                    let bound = prefix.last().cloned();
                    out.push((prefix, bound));
                    return;
                }
            }
        }
    }
}

fn is_ident_token(token: &str) -> bool {
    token.chars().all(is_ident) && token != "as"
}

/// The items a file declares at any depth (`fn`, `struct`, `enum`, …), for `use x::*`.
fn declared(code: &str) -> BTreeSet<String> {
    let words: Vec<&str> = code
        .split(|c: char| !is_ident(c))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|pair| {
            matches!(
                pair[0],
                "fn" | "struct" | "enum" | "const" | "static" | "type" | "trait" | "mod" | "union"
            )
        })
        .map(|pair| pair[1].to_string())
        .collect()
}

/// A folder's modules by file: `folder/NAME.rs` or `folder/NAME/mod.rs`.
fn child(folder: &Path, name: &str) -> Option<PathBuf> {
    [
        folder.join(format!("{name}.rs")),
        folder.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

/// The file that `super::NAME` reaches from a file of `folder`: the module `NAME` itself, or
/// the module the folder's `mod.rs` (or `folder.rs`) re-exports `NAME` from, or else a module
/// it glob-imports that declares `NAME`. Names the folder's own module file defines, and
/// paths out of the folder, reach no sibling.
fn sibling_named(folder: &Path, name: &str, root: &Path) -> Option<PathBuf> {
    if let Some(file) = child(folder, name) {
        return Some(file);
    }
    if folder == root {
        return None;
    }
    let module_file = [folder.join("mod.rs"), folder.with_extension("rs")]
        .into_iter()
        .find(|p| p.exists())?;
    let leaves = use_leaves(&code(&std::fs::read_to_string(module_file).ok()?));
    let first_child = |path: &[String]| {
        let path = path.strip_prefix(&["self".to_string()]).unwrap_or(path);
        path.first().and_then(|first| child(folder, first))
    };
    leaves
        .iter()
        .filter(|(_, bound)| bound.as_deref() == Some(name))
        .find_map(|(path, _)| first_child(path))
        .or_else(|| {
            leaves
                .iter()
                .filter(|(_, bound)| bound.is_none())
                .filter_map(|(path, _)| first_child(path))
                .find(|file| {
                    std::fs::read_to_string(file)
                        .is_ok_and(|text| declared(&code(&text)).contains(name))
                })
        })
}

#[test]
fn no_folder_holds_a_circle() {
    let root = src();
    let mut files = Vec::new();
    crate::support::rust_files(&root, &mut files);
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
            if let Some(sibling) = sibling_named(folder, &name, &root)
                && &sibling != path
            {
                graph.entry(path.clone()).or_default().insert(sibling);
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
    let new: Vec<&String> = shown
        .iter()
        .filter(|circle| !KNOWN_CIRCLES.contains(&circle.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "files of one folder that name each other:\n{}\nMove what both need into a file of its \
         own (or into the one that needs it), so the names run one way.",
        new.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let broken: Vec<&&str> = KNOWN_CIRCLES
        .iter()
        .filter(|circle| !shown.iter().any(|s| s == *circle))
        .collect();
    assert!(
        broken.is_empty(),
        "KNOWN_CIRCLES in tests/it/layers.rs lists circles that are gone: {broken:?}; remove \
         them from the list (with their comment), so the list only shrinks."
    );
}

/// Every function of masked production code: its name, the line of its `fn` and its length
/// in lines, to the line of its closing brace (a declaration without a body has none).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut line_start = 0;
    for line in code.split_inclusive('\n') {
        if let Some(name) = fn_name(line) {
            let body = line_start + line.find("fn ").unwrap_or(0);
            let end = item_end(code, body);
            let item = code[..end].trim_end_matches(';').trim_end();
            if item.ends_with('}') {
                let first = line_at(code, line_start);
                found.push((name, first, line_at(code, item.len() - 1) - first + 1));
            }
        }
        line_start += line.len();
    }
    found
}

/// The name of the function a line starts, if it does: `[pub[(…)]] [const] [async] [unsafe]
/// [extern "…"] fn NAME`.
fn fn_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.trim_start().strip_prefix('(') {
            Some(inside) => inside.split_once(')')?.1,
            None if after.starts_with(char::is_whitespace) => after,
            None => return None,
        }
        .trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe "] {
        if let Some(after) = rest.strip_prefix(qualifier) {
            rest = after.trim_start();
        }
    }
    if let Some(after) = rest.strip_prefix("extern ") {
        let after = after.trim_start().strip_prefix('"')?;
        rest = after.split_once('"')?.1.trim_start();
    }
    let name: String = rest
        .strip_prefix("fn ")?
        .trim_start()
        .chars()
        .take_while(|&c| is_ident(c))
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn no_function_grows_past_a_page() {
    let root = src();
    let mut files = Vec::new();
    crate::support::rust_files(&root, &mut files);
    let mut long = BTreeMap::new();
    for path in &files {
        let Ok(relative) = path.strip_prefix(&root) else {
            continue;
        };
        if is_test_file(relative) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let file = relative.to_string_lossy().replace('\\', "/");
        for (name, line, length) in functions(&code(&text)) {
            if length > LONG {
                long.insert((file.clone(), name), (line, length));
            }
        }
    }
    let listed = |file: &str, name: &str| LONG_FUNCTIONS.contains(&(file, name));
    let new: Vec<String> = long
        .iter()
        .filter(|((file, name), _)| !listed(file, name))
        .map(|((file, name), (line, length))| {
            format!("  src/{file}:{line} `{name}` is {length} lines")
        })
        .collect();
    assert!(
        new.is_empty(),
        "production functions over {LONG} lines:\n{}\nSplit each into named steps, each a \
         function of its own. Only a uniform table (one arm per case, read like a list) may \
         stay long: add it to LONG_FUNCTIONS in tests/it/layers.rs with a comment saying so.",
        new.join("\n")
    );
    let stale: Vec<String> = LONG_FUNCTIONS
        .iter()
        .filter(|(file, name)| !long.contains_key(&(file.to_string(), name.to_string())))
        .map(|(file, name)| format!("  src/{file} `{name}`"))
        .collect();
    assert!(
        stale.is_empty(),
        "LONG_FUNCTIONS in tests/it/layers.rs lists functions that are no longer over {LONG} \
         lines (or no longer exist):\n{}\nRemove them from the list (with their comment), so \
         the list only shrinks.",
        stale.join("\n")
    );
}

#[test]
fn the_reader_of_paths_sees_groups_and_skips_comments_and_unit_tests() {
    let text = "use crate::{spec::Method, json};\n// crate::mcp in a comment\nfn f() { crate::schema::x(); let s = \"crate::cli\"; }\nuse crate::{\n    store::{Key, Store},\n    rate,\n};\n#[cfg(test)]\nfn helper() { crate::load::load(); }\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\nuse crate::mock;\n";
    let names: Vec<(String, usize)> = named_after(&code(text), "crate::");
    let names: Vec<(&str, usize)> = names.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    assert_eq!(
        names,
        [
            ("spec", 1),
            ("json", 1),
            ("schema", 3),
            ("store", 5),
            ("rate", 6),
            ("mock", 14)
        ]
    );
    let supers: Vec<String> = named_after("use super::super::forms::X; super::a::b();", "super::")
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(supers, ["a"]);
    let mut graph = BTreeMap::new();
    let (a, b, c) = (PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c"));
    graph.insert(a.clone(), BTreeSet::from([b.clone()]));
    graph.insert(b.clone(), BTreeSet::from([c.clone()]));
    graph.insert(c.clone(), BTreeSet::from([a.clone()]));
    assert_eq!(circles(&graph), vec![vec![a, b, c]]);
}

#[test]
fn the_floor_table_is_read_from_its_text_block() {
    let lib = "//! # The floors\n//!\n//! ```text\n//!  0  config   json      helpers any floor may use\n//!     digest                 and more words\n//!  1  telemetry             logs; who calls;\n//!                            keys replicas share\n//!  2  mcp   http             the protocol\n//! ```\n";
    assert_eq!(
        floors_in(lib).unwrap(),
        [
            vec!["config", "json", "digest"],
            vec!["telemetry"],
            vec!["mcp", "http"]
        ]
    );
    assert!(floors_in("//! ```text\n//!  1  config   x\n//! ```\n").is_err());
    assert!(floors_in("//! no table\n").is_err());
    let real = floors();
    assert_eq!(real[0][0], "config", "{real:?}");
    assert_eq!(real.last().unwrap(), &["cli"], "{real:?}");
}

#[test]
fn re_exports_are_read_from_use_trees() {
    let code = code(
        "pub use snapshot::{ServerState, Snapshot as Served};\npub(crate) use tool::{\n    McpTool,\n    nested::{Deep, *},\n};\nuse self::plain::One;\nuse glob::*;\n",
    );
    let leaves: Vec<(String, Option<String>)> = use_leaves(&code)
        .into_iter()
        .map(|(path, bound)| (path.join("::"), bound))
        .collect();
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        leaves,
        [
            ("snapshot::ServerState".to_string(), some("ServerState")),
            ("snapshot::Snapshot".to_string(), some("Served")),
            ("tool::McpTool".to_string(), some("McpTool")),
            ("tool::nested::Deep".to_string(), some("Deep")),
            ("tool::nested".to_string(), None),
            ("self::plain::One".to_string(), some("One")),
            ("glob".to_string(), None),
        ]
    );
    let mcp = src().join("mcp");
    assert_eq!(
        sibling_named(&mcp, "ServerState", &src()),
        Some(mcp.join("snapshot.rs")),
        "super::ServerState from a file of src/mcp reaches snapshot.rs through mcp/mod.rs"
    );
}

#[test]
fn functions_are_measured_from_fn_to_closing_brace_past_strings_and_comments() {
    let text = "pub(crate) async fn a() {\n    let s = \"}}}\";\n    let c = '}';\n    let l: &'static str = r#\"{\"#;\n    // }\n    /* { /* } */ } */\n}\nfn decl(x: [u8; 4]);\nconst fn b<'a>(x: &'a str) -> char {\n    '{'\n}\n#[cfg(test)]\nfn only_in_tests() {\n}\n";
    assert_eq!(
        functions(&code(text)),
        [("a".to_string(), 1, 7), ("b".to_string(), 9, 3)]
    );
    assert_eq!(fn_name("extern \"C\" fn c_abi() {"), Some("c_abi".into()));
    assert_eq!(fn_name("    pub fn x<T>(t: T) {"), Some("x".into()));
    assert_eq!(fn_name("    publicity fn x() {"), None);
    assert_eq!(fn_name("    let f = fn_ptr;"), None);
}

/// `cargo test --test it print_long_functions -- --ignored --nocapture` lists the production
/// functions over 100 lines, the review's watch line below [`LONG`].
#[test]
#[ignore = "a listing, not a check"]
fn print_long_functions() {
    let root = src();
    let mut files = Vec::new();
    crate::support::rust_files(&root, &mut files);
    for path in &files {
        let relative = path.strip_prefix(&root).unwrap();
        if is_test_file(relative) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        for (name, line, length) in functions(&code(&text)) {
            if length > 100 {
                println!("{length:5}  src/{}:{line}  {name}", relative.display());
            }
        }
    }
}
