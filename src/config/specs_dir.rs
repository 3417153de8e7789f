//! `specs_dir`: a directory whose OpenAPI and Swagger files each become an API, named after
//! the file, unless an `[apis.NAME]` table already uses them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ApiConfig, ConfigError, is_overlay_file};

/// The OpenAPI and Swagger files directly in `dir` that no configured API uses, named after
/// the file. Overlay files (`*.overlay.yaml`) and files that are not API descriptions (shared
/// schema files, say) are left out; a name already configured for another file is an error.
pub fn scan(
    dir: &Path,
    configured: &BTreeMap<String, ApiConfig>,
) -> Result<Vec<(String, PathBuf)>, ConfigError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ConfigError::Key {
        key: "specs_dir".into(),
        problem: format!("cannot read directory {}: {e}", dir.display()),
    })?;
    let used: Vec<PathBuf> = configured
        .values()
        .filter_map(|api| api.spec_file().map(|path| canonical(&path)))
        .collect();
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml" | "json")
                )
                && !is_overlay_file(p)
        })
        .collect();
    files.sort();
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for path in files {
        if used.contains(&canonical(&path)) || !looks_like_api_description(&path) {
            continue;
        }
        let name = api_name_from_spec(&path.to_string_lossy());
        if configured.contains_key(&name) || found.iter().any(|(n, _)| *n == name) {
            return Err(ConfigError::Key {
                key: format!("apis.{name}"),
                problem: format!(
                    "{} in specs_dir would be API \"{name}\", which is already taken; give it an [apis.NAME] table of its own",
                    path.display()
                ),
            });
        }
        found.push((name, path));
    }
    Ok(found)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A top-level `openapi` or `swagger` key within the first few kilobytes (it comes first
/// in practice; a file of shared schemas has neither).
fn looks_like_api_description(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(8192);
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file.take(8192).read_to_end(&mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    text.lines().any(|line| {
        let line = line.trim_start_matches('\u{feff}');
        line.starts_with("openapi:")
            || line.starts_with("swagger:")
            || line.starts_with("\"openapi\":")
            || line.starts_with("\"swagger\":")
    }) || text.contains("\"openapi\"") && text.trim_start().starts_with('{')
        || text.contains("\"swagger\"") && text.trim_start().starts_with('{')
}

/// `specs/Pet Store.v3.yaml` → `pet_store_v3`.
pub(super) fn api_name_from_spec(spec: &str) -> String {
    let stem = spec
        .trim_end_matches('/')
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(spec);
    let stem = stem
        .strip_suffix(".yaml")
        .or_else(|| stem.strip_suffix(".yml"))
        .or_else(|| stem.strip_suffix(".json"))
        .unwrap_or(stem);
    let mut name = String::new();
    for c in stem.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let name = name.trim_matches('_').to_string();
    if name.is_empty() { "api".into() } else { name }
}
