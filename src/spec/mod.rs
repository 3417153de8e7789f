//! Spec loading: bytes → documents → one normalized [`Api`].
//!
//! This stage owns everything about reading API descriptions: JSON/YAML parsing
//! ([`parse`]; a JSON root's components and extensions are kept as text until a `$ref`
//! reaches them, its path items until normalization reads them, a few at a time,
//! [`deferred`]), documents and `$ref` resolution across files and URLs
//! ([`document`]), which
//! files and URLs a spec may reach and how much of them is read ([`place`]),
//! media-type preferences ([`media`]), and the translation of OpenAPI 3.x ([`openapi3`])
//! and Swagger 2.0 ([`swagger2`]) into restmcp's own small model ([`model`]), including
//! the `$ref`s descriptions leave inside example and default values ([`values`]). OpenAPI
//! Overlay documents ([`overlay`]) edit a description before it is read, selecting their
//! targets with the RFC 9535 JSONPath engine ([`jsonpath`]). It knows nothing of MCP: the
//! catalog turns this model into tools.
//!
//! Arazzo workflow documents' expressions, templates and criteria live in [`arazzo`].
//!
//! Its files, in the order a description flows through them: [`parse`] (and
//! [`deferred`] on top of it), [`place`],
//! [`document`], [`overlay`] (with [`jsonpath`]), [`openapi3`] or [`swagger2`] (each with
//! `paths` for path items and operations, `security` for security schemes), [`media`],
//! [`values`], and the result, [`model`].

pub mod arazzo;
pub(crate) mod deferred;
pub mod document;
pub mod jsonpath;
pub mod media;
pub mod model;
mod openapi3;
pub mod overlay;
pub mod parse;
mod paths;
pub mod place;
mod security;
mod swagger2;
pub mod values;

pub use document::{DocId, DocumentSet, RefError, Resolved, SpecSource, TargetKey};
pub use model::{
    Api, ApiKeyLocation, Encoding, FinalState, HttpAuthScheme, Method, Operation, ParamLocation,
    Parameter, PathSuffix, RequestBody, Response, SchemaRef, SecurityRequirement, SecurityScheme,
    Skipped, SpecVersion, Style,
};
pub use place::LoadPolicy;

use serde_json::Value;
use std::borrow::Cow;

/// A document that cannot be used at all. Problems confined to one operation are not
/// errors: that operation is reported as skipped and the rest of the API still loads.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SpecError {
    #[error("{file}: cannot read: {message}")]
    Read { file: String, message: String },
    #[error("{file}:{line}:{column}: invalid {format}: {message}")]
    Syntax {
        file: String,
        format: &'static str,
        line: u64,
        column: u64,
        message: String,
    },
    /// An overlay that cannot be applied; `message` starts with the JSON pointer.
    #[error("{file}{message}")]
    Overlay { file: String, message: String },
    #[error("{file}#{pointer}: {problem}")]
    Invalid {
        file: String,
        pointer: String,
        problem: String,
    },
}

/// Loads a description and everything it references.
pub async fn load(source: &SpecSource) -> Result<DocumentSet, SpecError> {
    DocumentSet::load(source).await
}

/// Detects the dialect and normalizes the root document's operations. A path item the
/// document [deferred] stays parsed as long as `docs`; [`normalize_in_parts`] drops each.
pub fn normalize(docs: &DocumentSet) -> Result<Api<'_>, SpecError> {
    let (head, dialect) = reading(docs)?;
    let mut walk = paths::Walk::new(docs)?;
    let root = docs.root();
    let items: Vec<(&str, &Value)> = walk
        .items()
        .map(|(path, item)| (path, root.path_item_kept(path, item)))
        .collect();
    let (operations, skipped) = walk.part(docs, &items, &*dialect);
    Ok(Api {
        operations,
        skipped,
        ..head
    })
}

/// Like [`normalize`], `items` path items at a time: `each` gets the API but its
/// operations, and the operations of the next path items (and those skipped, numbered
/// across the parts), which are dropped when it returns; the API but its operations comes
/// back at the end.
/// The outer error is the description's, the inner one the first of `each`, which stops
/// the walk.
///
/// A description read a path item at a time ([`document::Document::path_item`] parses
/// each from its text) has its next part parsed on a thread of its own while `each` works
/// on this one: parsing took a seventh of Microsoft Graph beta's synthesis, with the other
/// cores idle. At most two parts wait parsed.
pub fn normalize_in_parts<E>(
    docs: &DocumentSet,
    items: usize,
    mut each: impl for<'p> FnMut(&Api<'static>, Vec<Operation<'p>>, Vec<Skipped>) -> Result<(), E>,
) -> Result<Result<Api<'static>, E>, SpecError> {
    let (head, dialect) = reading(docs)?;
    let mut walk = paths::Walk::new(docs)?;
    let root = docs.root();
    let all: Vec<(&str, &Value)> = walk.items().collect();
    let parts = all.chunks(items.max(1));
    let read = |part| read_part(root, part);
    let mut walked = |read: Vec<(&str, Cow<'_, Value>)>| {
        let items: Vec<(&str, &Value)> = read.iter().map(|(path, item)| (*path, &**item)).collect();
        let (operations, skipped) = walk.part(docs, &items, &*dialect);
        each(&head, operations, skipped)
    };
    let outcome = match parts.len() > 1 && crate::parallel::threads() > 1 {
        false => parts.map(read).try_for_each(&mut walked),
        true => std::thread::scope(|scope| {
            let (parsed, next) = std::sync::mpsc::sync_channel(1);
            scope.spawn(move || {
                for part in parts {
                    // The receiver gone: `each` stopped the walk.
                    if parsed.send(read(part)).is_err() {
                        return;
                    }
                }
            });
            next.into_iter().try_for_each(&mut walked)
        }),
    };
    Ok(outcome.map(|()| head))
}

/// The path items of `part`, each parsed if it was left as text.
fn read_part<'a>(
    root: &'a document::Document,
    part: &[(&'a str, &'a Value)],
) -> Vec<(&'a str, Cow<'a, Value>)> {
    part.iter()
        .map(|&(path, item)| (path, root.path_item(path, item)))
        .collect()
}

/// The API but its operations, and its dialect's translation of operations.
fn reading(docs: &DocumentSet) -> Result<(Api<'static>, Box<dyn paths::Translate>), SpecError> {
    let root = &docs.root().root;
    let invalid = |pointer: &str, problem: String| SpecError::Invalid {
        file: docs.root().name.clone(),
        pointer: pointer.to_string(),
        problem,
    };
    if !root.is_object() {
        return Err(invalid(
            "",
            "expected an OpenAPI or Swagger object at the top level".into(),
        ));
    }
    let version = detect_version(root).map_err(|(pointer, problem)| invalid(pointer, problem))?;
    Ok(match version {
        SpecVersion::Swagger2 => swagger2::reading(docs),
        SpecVersion::OpenApi30 | SpecVersion::OpenApi31 => openapi3::reading(docs, version),
    })
}

fn detect_version(root: &Value) -> Result<SpecVersion, (&'static str, String)> {
    if let Some(swagger) = root.get("swagger") {
        return match swagger.as_str() {
            Some("2.0") => Ok(SpecVersion::Swagger2),
            _ => Err((
                "/swagger",
                format!("unsupported Swagger version {swagger} (only \"2.0\" exists)"),
            )),
        };
    }
    match root.get("openapi") {
        Some(Value::String(v)) if v.starts_with("3.0") => Ok(SpecVersion::OpenApi30),
        // 3.2 only adds to 3.1; what restmcp reads of it is read the same way.
        Some(Value::String(v)) if v.starts_with("3.1") || v.starts_with("3.2") => {
            Ok(SpecVersion::OpenApi31)
        }
        Some(other) => Err((
            "/openapi",
            format!("unsupported OpenAPI version {other} (3.0, 3.1 and 3.2 are supported)"),
        )),
        None => Err((
            "",
            "neither \"openapi\" nor \"swagger\" is set: not an OpenAPI description".into(),
        )),
    }
}

/// Trimmed, non-empty text of a string field.
pub(crate) fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

pub(crate) fn flag(value: &Value, key: &str) -> Option<bool> {
    value.get(key).and_then(Value::as_bool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_are_detected() {
        assert_eq!(
            detect_version(&json!({"swagger": "2.0"})),
            Ok(SpecVersion::Swagger2)
        );
        assert_eq!(
            detect_version(&json!({"openapi": "3.0.3"})),
            Ok(SpecVersion::OpenApi30)
        );
        assert_eq!(
            detect_version(&json!({"openapi": "3.1.1"})),
            Ok(SpecVersion::OpenApi31)
        );
        assert!(detect_version(&json!({"openapi": 3.0})).is_err());
        assert!(detect_version(&json!({"info": {}})).is_err());
    }

    #[test]
    fn the_config_names_the_methods_the_model_knows() {
        assert_eq!(
            Method::ALL.map(Method::as_str),
            crate::config::HTTP_METHODS,
            "config::HTTP_METHODS (filter validation) and Method::ALL must list the same methods"
        );
    }

    #[test]
    fn the_default_policy_is_the_default_loading_settings() {
        assert_eq!(
            LoadPolicy::default(),
            LoadPolicy::from_settings(&crate::config::LoadingSettings::default())
        );
    }
}
