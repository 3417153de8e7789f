//! Walking `paths`: the part of normalization both dialects share, a part of the path items
//! at a time ([`Walk`]; a path item the document deferred is parsed for its part and
//! dropped after it). Path items and parameters are dereferenced, path-level parameters
//! merged with operation-level ones (the operation's win on the same name and location),
//! and each operation handed to the dialect for its parameters, body and responses.

use std::borrow::Cow;

use crate::json::Lookup as _;
use serde_json::{Map, Value};

use super::document::{DocId, DocumentSet, RefError};
use super::model::{
    FinalState, Method, Operation, ParamLocation, Parameter, PathSuffix, RequestBody, Response,
    SchemaRef, SecurityRequirement, Skipped, Style, split_path_key, status_order,
};
use super::{SpecError, flag, security, text};
use crate::json::escape_token as escape_segment;

/// One operation before dialect-specific translation.
pub(super) struct RawOperation<'a> {
    pub method: Method,
    pub path: &'a str,
    pub pointer: String,
    /// Document the operation object lives in.
    pub doc: DocId,
    pub value: &'a Value,
    pub path_item: &'a Value,
    /// Merged and dereferenced parameters, in document order (path level first).
    pub parameters: Vec<RawParameter<'a>>,
}

pub(super) struct RawParameter<'a> {
    pub doc: DocId,
    pub value: &'a Value,
    pub pointer: String,
}

/// What a dialect makes of one operation.
pub(super) struct OperationParts<'a> {
    pub parameters: Vec<Parameter<'a>>,
    pub request_body: Option<RequestBody<'a>>,
    pub responses: Vec<Response<'a>>,
    /// Swagger 2.0 `produces`; empty for OpenAPI 3.x.
    pub produces: Vec<String>,
    pub servers: Vec<String>,
    pub notes: Vec<String>,
}

/// What a dialect makes of one operation ([`Walk::part`] asks it for each).
pub(super) trait Translate {
    fn translate<'p>(
        &self,
        docs: &'p DocumentSet,
        raw: &RawOperation<'p>,
    ) -> Result<OperationParts<'p>, String>;
}

/// Walking the root document's `paths`, a part at a time: the operations are numbered
/// across the parts, in document order.
pub(super) struct Walk<'a> {
    paths: Option<&'a Map<String, Value>>,
    security: Vec<SecurityRequirement>,
    security_notes: Vec<String>,
    /// The index of the next operation.
    next: usize,
}

impl<'a> Walk<'a> {
    /// A walk of `docs`' root `paths`; an error if `paths` is not an object.
    pub fn new(docs: &'a DocumentSet) -> Result<Walk<'a>, SpecError> {
        let root = &docs.root().root;
        let paths = match root.field("paths") {
            None | Some(Value::Null) => None,
            Some(Value::Object(paths)) => Some(paths),
            Some(_) => {
                return Err(SpecError::Invalid {
                    file: docs.root().name.clone(),
                    pointer: "/paths".into(),
                    problem: "\"paths\" must be an object".into(),
                });
            }
        };
        let mut security_notes = Vec::new();
        let security =
            security::requirements(root.field("security"), &mut security_notes).unwrap_or_default();
        Ok(Walk {
            paths,
            security,
            security_notes,
            next: 0,
        })
    }

    /// The entries of `paths` that are path items (not `x-…`), as the root document holds
    /// them: a deferred one is read with [`Document::path_item`](super::document::Document::path_item).
    pub fn items(&self) -> impl Iterator<Item = (&'a str, &'a Value)> + use<'a> {
        self.paths
            .into_iter()
            .flatten()
            .filter(|(path, _)| !path.starts_with("x-"))
            .map(|(path, item)| (path.as_str(), item))
    }

    /// The operations of the path `items` (the next ones of [`Walk::items`], read), each
    /// translated by `dialect`, and those skipped.
    pub fn part<'p>(
        &mut self,
        docs: &'p DocumentSet,
        items: &[(&'p str, &'p Value)],
        dialect: &dyn Translate,
    ) -> (Vec<Operation<'p>>, Vec<Skipped>) {
        let mut operations = Vec::new();
        let mut skipped = Vec::new();
        for &(path, item) in items {
            let item_pointer = format!("/paths/{}", escape_segment(path));
            match docs.deref(0, item) {
                Ok((item_doc, item)) => {
                    let found = (item_doc, path, item_pointer.as_str(), item);
                    self.operations(docs, found, dialect, &mut operations, &mut skipped);
                }
                Err(e) => {
                    skipped.push(Skipped {
                        index: self.next,
                        operation: path.to_string(),
                        pointer: item_pointer.clone(),
                        reason: ref_problem(docs, 0, &item_pointer, item, &e),
                    });
                    self.next += 1;
                }
            }
        }
        (operations, skipped)
    }

    /// The operations of one dereferenced path item.
    fn operations<'p>(
        &mut self,
        docs: &'p DocumentSet,
        (item_doc, path, item_pointer, item): (DocId, &'p str, &str, &'p Value),
        dialect: &dyn Translate,
        operations: &mut Vec<Operation<'p>>,
        skipped: &mut Vec<Skipped>,
    ) {
        let document_security = (self.security.as_slice(), self.security_notes.as_slice());
        let path_parameters = item.field("parameters");
        for method in Method::ALL {
            let Some(value) = item.field(method.key()) else {
                continue;
            };
            let pointer = format!("{item_pointer}/{}", method.key());
            let label = format!("{method} {path}");
            let result = if value.is_object() {
                merge_parameters(
                    docs,
                    item_doc,
                    item_pointer,
                    path_parameters,
                    &pointer,
                    value,
                )
                .and_then(|parameters| {
                    let raw = RawOperation {
                        method,
                        path,
                        pointer: pointer.clone(),
                        doc: item_doc,
                        value,
                        path_item: item,
                        parameters,
                    };
                    dialect
                        .translate(docs, &raw)
                        .map(|parts| assemble(&raw, parts, document_security))
                })
            } else {
                Err("the operation is not an object".to_string())
            };
            let index = self.next;
            self.next += 1;
            match result {
                Ok(mut operation) => {
                    operation.index = index;
                    operations.push(operation);
                }
                Err(reason) => skipped.push(Skipped {
                    index,
                    operation: label,
                    pointer,
                    reason,
                }),
            }
        }
    }
}

/// The document's `security` list and the notes reading it produced.
type DocumentSecurity<'s> = (&'s [SecurityRequirement], &'s [String]);

fn assemble<'a>(
    raw: &RawOperation<'a>,
    mut parts: OperationParts<'a>,
    (document_security, document_notes): DocumentSecurity<'_>,
) -> Operation<'a> {
    reconcile_path_parameters(raw.path, &mut parts);
    let value = raw.value;
    parts.notes.extend(document_notes.iter().cloned());
    // The operation's own list replaces the document's entirely (an empty one removes it).
    let security = security::requirements(value.field("security"), &mut parts.notes)
        .unwrap_or_else(|| document_security.to_vec());
    Operation {
        index: 0,
        method: raw.method,
        path: raw.path.to_string(),
        suffix: PathSuffix::of(raw.path),
        pointer: raw.pointer.clone(),
        operation_id: text(value, "operationId"),
        summary: text(value, "summary").or_else(|| text(raw.path_item, "summary")),
        description: text(value, "description").or_else(|| text(raw.path_item, "description")),
        deprecated: flag(value, "deprecated").unwrap_or(false),
        tags: value
            .field("tags")
            .and_then(Value::as_array)
            .map(|tags| {
                tags.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        parameters: parts.parameters,
        request_body: parts.request_body,
        responses: parts.responses,
        produces: parts.produces,
        servers: parts.servers,
        security,
        x_mcp: value.field("x-mcp").cloned(),
        long_running: long_running(value, &mut parts.notes),
        notes: parts.notes,
    }
}

/// `x-ms-long-running-operation: true` and its `final-state-via`, when the operation is
/// marked so; an unknown `final-state-via` is noted and read as the default.
fn long_running(operation: &Value, notes: &mut Vec<String>) -> Option<FinalState> {
    if flag(operation, "x-ms-long-running-operation") != Some(true) {
        return None;
    }
    let via = operation
        .pointer("/x-ms-long-running-operation-options/final-state-via")
        .and_then(Value::as_str);
    Some(match via {
        None => FinalState::Default,
        Some(via) => FinalState::parse(via).unwrap_or_else(|| {
            notes.push(format!(
                "x-ms-long-running-operation-options.final-state-via \"{via}\" is not one \
                 restmcp knows; the method's usual place is read"
            ));
            FinalState::Default
        }),
    })
}

fn merge_parameters<'a>(
    docs: &'a DocumentSet,
    doc: DocId,
    item_pointer: &str,
    path_level: Option<&'a Value>,
    op_pointer: &str,
    operation: &'a Value,
) -> Result<Vec<RawParameter<'a>>, String> {
    let mut merged: Vec<RawParameter<'a>> = Vec::new();
    let levels = [
        (path_level, item_pointer),
        (operation.field("parameters"), op_pointer),
    ];
    for (list, base) in levels {
        let Some(list) = list else { continue };
        let Some(items) = list.as_array() else {
            return Err(format!("{base}/parameters must be an array"));
        };
        for (i, entry) in items.iter().enumerate() {
            let pointer = format!("{base}/parameters/{i}");
            let (param_doc, value) = docs
                .deref(doc, entry)
                .map_err(|e| ref_problem(docs, doc, &pointer, entry, &e))?;
            let key = (value.field("name"), value.field("in"));
            match merged
                .iter_mut()
                .find(|p| (p.value.field("name"), p.value.field("in")) == key)
            {
                Some(existing) => {
                    *existing = RawParameter {
                        doc: param_doc,
                        value,
                        pointer,
                    }
                }
                None => merged.push(RawParameter {
                    doc: param_doc,
                    value,
                    pointer,
                }),
            }
        }
    }
    Ok(merged)
}

/// "`$ref` "x" at file#/here → file#/there: problem": both ends of a broken reference.
pub(super) fn ref_problem(
    docs: &DocumentSet,
    doc: DocId,
    pointer: &str,
    value: &Value,
    error: &RefError,
) -> String {
    let reference = value.field("$ref").and_then(Value::as_str).unwrap_or("");
    format!(
        "$ref \"{reference}\" at {}#{pointer} → {}: {}",
        docs.doc(doc).name,
        error.target,
        error.problem
    )
}

/// The operation's `responses`, dereferenced and sorted (`200` … `2XX` … `default`);
/// `build` reads one response object in the dialect's terms. A response whose `$ref` does
/// not resolve is left out with a note: the tool still works, only without that response.
pub(super) fn responses<'a>(
    docs: &'a DocumentSet,
    raw: &RawOperation<'a>,
    notes: &mut Vec<String>,
    mut build: impl FnMut(&str, &str, DocId, &'a Value) -> Response<'a>,
) -> Vec<Response<'a>> {
    let Some(map) = raw.value.field("responses").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut responses = Vec::new();
    for (status, value) in map {
        if status.starts_with("x-") {
            continue;
        }
        let pointer = format!("{}/responses/{}", raw.pointer, escape_segment(status));
        match docs.deref(raw.doc, value) {
            Ok((doc, response)) => responses.push(build(status, &pointer, doc, response)),
            Err(e) => notes.push(format!(
                "response {status} ignored: {}",
                ref_problem(docs, raw.doc, &pointer, value, &e)
            )),
        }
    }
    responses.sort_by_key(|r| status_order(&r.status));
    responses
}

/// OpenAPI 3.1 §4.8.12.2: header parameters named Accept, Content-Type or Authorization
/// "SHALL be ignored"; the client sets those from the body, response and security scheme.
pub(super) fn is_reserved_header(name: &str) -> bool {
    ["accept", "content-type", "authorization"]
        .iter()
        .any(|reserved| name.eq_ignore_ascii_case(reserved))
}

/// Makes a server URL absolute where the document's own location allows it
/// (OpenAPI 3.1 §4.8.5: relative URLs are relative to where the document was served),
/// and removes the trailing slash so joining with `/path` never doubles it.
pub(super) fn absolute_base_url(doc_url: &url::Url, server: &str) -> String {
    let served_over_http = matches!(doc_url.scheme(), "http" | "https");
    let absolute = if server.contains("://") {
        server.to_string()
    } else if let Some(rest) = server.strip_prefix("//") {
        let scheme = if served_over_http {
            doc_url.scheme()
        } else {
            "https"
        };
        format!("{scheme}://{rest}")
    } else if served_over_http {
        doc_url
            .join(server)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| server.to_string())
    } else {
        server.to_string()
    };
    absolute.trim_end_matches('/').to_string()
}

/// The `{name}` placeholders of a path template, in order (a `#` suffix holds none).
pub(crate) fn template_names(path: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = split_path_key(path).0;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else { break };
        names.push(&after[..end]);
        rest = &after[end + 1..];
    }
    names
}

/// Makes path parameters and the path template agree: a placeholder without a parameter
/// gets a required string parameter (the request could not be built otherwise), and a path
/// parameter the template does not mention is dropped.
fn reconcile_path_parameters<'a>(path: &str, parts: &mut OperationParts<'a>) {
    let names = template_names(path);
    parts.parameters.retain(|p| {
        let keep = p.location != ParamLocation::Path || names.contains(&p.name.as_str());
        if !keep {
            parts.notes.push(format!(
                "path parameter \"{}\" does not appear in the path template; ignored",
                p.name
            ));
        }
        keep
    });
    for name in names {
        let declared = parts
            .parameters
            .iter()
            .any(|p| p.location == ParamLocation::Path && p.name == name);
        if !declared {
            parts.notes.push(format!(
                "path template names {{{name}}} but no parameter declares it; added as a string"
            ));
            parts.parameters.push(Parameter {
                name: name.to_string(),
                location: ParamLocation::Path,
                required: true,
                description: None,
                deprecated: false,
                style: Style::Simple,
                explode: false,
                allow_reserved: false,
                schema: SchemaRef {
                    doc: 0,
                    schema: Cow::Owned(serde_json::json!({"type": "string"})),
                    pointer: String::new(),
                },
                content_type: None,
                example: None,
            });
        }
    }
}
