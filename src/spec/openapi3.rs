//! OpenAPI 3.0 and 3.1 (and 3.2, read as 3.1) into the normalized model.
//!
//! The two versions differ little at this level; their schema dialects differ more, and
//! that difference is handled where schemas are translated, keyed by [`SpecVersion`].

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::json::Lookup as _;
use serde_json::Value;

use super::document::{DocId, DocumentSet};
use super::media::{self, MediaKind};
use super::model::{
    Api, Encoding, ParamLocation, Parameter, RequestBody, Response, SchemaRef, SpecVersion, Style,
};
use super::paths::{self, OperationParts, RawOperation, RawParameter, Translate, ref_problem};
use super::{flag, security, text, values};
use crate::json::escape_token as escape_segment;

/// The API but its operations (still empty), and how its operations are translated.
pub(super) fn reading(
    docs: &DocumentSet,
    version: SpecVersion,
) -> (Api<'static>, Box<dyn Translate>) {
    let root = &docs.root().root;
    let head = Api {
        version,
        title: root
            .pointer("/info/title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        operations: Vec::new(),
        skipped: Vec::new(),
        security_schemes: security::schemes_v3(docs),
    };
    let dialect = Dialect {
        servers: servers(docs, 0, root.field("servers")),
    };
    (head, Box::new(dialect))
}

/// OpenAPI 3.x operations, with the document's `servers`.
struct Dialect {
    servers: Vec<String>,
}

impl Translate for Dialect {
    fn translate<'p>(
        &self,
        docs: &'p DocumentSet,
        raw: &RawOperation<'p>,
    ) -> Result<OperationParts<'p>, String> {
        translate(docs, raw, &self.servers)
    }
}

fn translate<'a>(
    docs: &'a DocumentSet,
    raw: &RawOperation<'a>,
    document_servers: &[String],
) -> Result<OperationParts<'a>, String> {
    let mut notes = Vec::new();
    let mut parameters = Vec::new();
    for param in &raw.parameters {
        if let Some(param) = parameter(docs, param, &mut notes)? {
            parameters.push(param);
        }
    }
    let request_body = match raw.value.field("requestBody") {
        Some(body) => request_body(docs, raw.doc, &format!("{}/requestBody", raw.pointer), body)?,
        None => None,
    };
    let responses = responses(docs, raw, &mut notes);
    let mut servers = servers(docs, raw.doc, raw.value.field("servers"));
    if servers.is_empty() {
        servers = self::servers(docs, raw.doc, raw.path_item.field("servers"));
    }
    if servers.is_empty() {
        servers = document_servers.to_vec();
    }
    Ok(OperationParts {
        parameters,
        request_body,
        responses,
        produces: Vec::new(),
        servers,
        notes,
    })
}

/// Returns `None` for parameters the specification says to ignore.
fn parameter<'a>(
    docs: &'a DocumentSet,
    raw: &RawParameter<'a>,
    notes: &mut Vec<String>,
) -> Result<Option<Parameter<'a>>, String> {
    let value = raw.value;
    let pointer = &raw.pointer;
    let name = value
        .field("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("{pointer}: parameter has no \"name\""))?;
    let location = value
        .field("in")
        .and_then(Value::as_str)
        .and_then(ParamLocation::parse)
        .ok_or_else(|| {
            format!(
                "{pointer}: parameter \"{name}\" has \"in\": {} (expected path, query, header or cookie)",
                docs.shown(raw.doc, value.field("in").unwrap_or(&Value::Null))
            )
        })?;
    if location == ParamLocation::Header && paths::is_reserved_header(name) {
        notes.push(format!(
            "header parameter \"{name}\" ignored (OpenAPI: Accept, Content-Type and Authorization are set by the client)"
        ));
        return Ok(None);
    }
    let style = match value.field("style").and_then(Value::as_str) {
        Some(s) => Style::parse(s).ok_or_else(|| {
            let shown = docs.shown(raw.doc, &Value::String(s.to_string()));
            format!("{pointer}: unknown style {shown}")
        })?,
        None => Style::default_for(location),
    };
    let (schema, content_type) = match (value.field("schema"), value.field("content")) {
        (Some(schema), _) => (
            SchemaRef {
                doc: raw.doc,
                schema: Cow::Borrowed(schema),
                pointer: format!("{pointer}/schema"),
            },
            None,
        ),
        (None, Some(Value::Object(content)))
            if let Some((media_type, media)) = content.iter().next() =>
        {
            let schema = media
                .field("schema")
                .map(Cow::Borrowed)
                .unwrap_or_else(|| Cow::Owned(Value::Object(Default::default())));
            (
                SchemaRef {
                    doc: raw.doc,
                    schema,
                    pointer: format!("{pointer}/content/{}/schema", escape_segment(media_type)),
                },
                Some(media_type.clone()),
            )
        }
        _ => {
            notes.push(format!(
                "parameter \"{name}\" has neither schema nor content; any value is accepted"
            ));
            (
                SchemaRef {
                    doc: raw.doc,
                    schema: Cow::Owned(Value::Object(Default::default())),
                    pointer: pointer.clone(),
                },
                None,
            )
        }
    };
    Ok(Some(Parameter {
        name: name.to_string(),
        location,
        required: location == ParamLocation::Path || flag(value, "required").unwrap_or(false),
        description: text(value, "description"),
        deprecated: flag(value, "deprecated").unwrap_or(false),
        style,
        explode: flag(value, "explode").unwrap_or(style == Style::Form),
        allow_reserved: flag(value, "allowReserved").unwrap_or(false),
        schema,
        content_type,
        example: example(docs, raw.doc, value, notes),
    }))
}

/// `example`, else the first entry of `examples` whose value can be had (dereferenced, and
/// the references inside it resolved: see [`values`]); a `$ref` that cannot be made data
/// leaves the example out, with a note.
fn example(
    docs: &DocumentSet,
    doc: DocId,
    value: &Value,
    notes: &mut Vec<String>,
) -> Option<Value> {
    let mut candidates: Vec<(DocId, &Value)> = Vec::new();
    if let Some(example) = value.field("example") {
        candidates.push((doc, example));
    } else if let Some(examples) = value.field("examples").and_then(Value::as_object) {
        for entry in examples.values() {
            match docs.deref(doc, entry) {
                Ok((example_doc, example)) => {
                    if let Some(value) = example
                        .field("value")
                        .or_else(|| example.field("dataValue"))
                    {
                        candidates.push((example_doc, value));
                    }
                }
                Err(e) => notes.push(format!(
                    "parameter example left out: {}: {}",
                    e.target, e.problem
                )),
            }
        }
    }
    for (example_doc, candidate) in candidates {
        match values::resolve(docs, example_doc, candidate) {
            Ok(value) => return Some(value.into_owned()),
            Err(problem) => notes.push(format!("parameter example left out: {problem}")),
        }
    }
    None
}

fn request_body<'a>(
    docs: &'a DocumentSet,
    doc: DocId,
    pointer: &str,
    value: &'a Value,
) -> Result<Option<RequestBody<'a>>, String> {
    let (body_doc, body) = docs
        .deref(doc, value)
        .map_err(|e| ref_problem(docs, doc, pointer, value, &e))?;
    let Some(content) = body.field("content").and_then(Value::as_object) else {
        return Ok(None);
    };
    let Some(chosen) = media::choose(content.keys().map(String::as_str)) else {
        return Ok(None);
    };
    let Some((media_type, media_object)) = content.iter().nth(chosen) else {
        return Ok(None);
    };
    let kind = media::classify(media_type);
    let mut encoding = BTreeMap::new();
    if matches!(kind, MediaKind::FormUrlEncoded | MediaKind::Multipart)
        && let Some(map) = media_object.field("encoding").and_then(Value::as_object)
    {
        for (property, enc) in map {
            let style = enc
                .field("style")
                .and_then(Value::as_str)
                .and_then(Style::parse)
                .unwrap_or(Style::Form);
            encoding.insert(
                property.clone(),
                Encoding {
                    content_type: text(enc, "contentType"),
                    style,
                    explode: flag(enc, "explode").unwrap_or(style == Style::Form),
                    allow_reserved: flag(enc, "allowReserved").unwrap_or(false),
                },
            );
        }
    }
    Ok(Some(RequestBody {
        required: flag(body, "required").unwrap_or(false),
        description: text(body, "description"),
        media_type: media_type.clone(),
        schema: media_object.field("schema").map(|schema| SchemaRef {
            doc: body_doc,
            schema: Cow::Borrowed(schema),
            pointer: format!("{pointer}/content/{}/schema", escape_segment(media_type)),
        }),
        encoding,
        alternatives: content
            .keys()
            .enumerate()
            .filter(|(i, _)| *i != chosen)
            .map(|(_, k)| k.clone())
            .collect(),
    }))
}

fn responses<'a>(
    docs: &'a DocumentSet,
    raw: &RawOperation<'a>,
    notes: &mut Vec<String>,
) -> Vec<Response<'a>> {
    paths::responses(docs, raw, notes, |status, pointer, doc, response| {
        let content = response.field("content").and_then(Value::as_object);
        let example = content
            .and_then(|c| c.iter().find(|(mt, _)| media::is_json(mt)))
            .and_then(|(_, media)| {
                media.field("example").cloned().or_else(|| {
                    media
                        .field("examples")
                        .and_then(Value::as_object)
                        .and_then(|examples| examples.values().find_map(|e| e.field("value")))
                        .cloned()
                })
            });
        let json = content.and_then(|c| {
            c.iter()
                .find(|(mt, _)| media::is_json(mt))
                .map(|(mt, media)| {
                    let schema = media.field("schema").map(|schema| SchemaRef {
                        doc,
                        schema: Cow::Borrowed(schema),
                        pointer: format!("{pointer}/content/{}/schema", escape_segment(mt)),
                    });
                    (mt.clone(), schema)
                })
        });
        Response {
            status: status.to_string(),
            description: text(response, "description"),
            media_types: content
                .map(|c| c.keys().cloned().collect())
                .unwrap_or_default(),
            json,
            example,
        }
    })
}

/// `servers` → base URLs with variables replaced by their defaults (OpenAPI 3.1 §4.8.5).
fn servers(docs: &DocumentSet, doc: DocId, value: Option<&Value>) -> Vec<String> {
    let Some(list) = value.and_then(Value::as_array) else {
        return Vec::new();
    };
    let doc_url = &docs.doc(doc).url;
    list.iter()
        .filter_map(|server| {
            let mut url = server.field("url")?.as_str()?.to_string();
            if let Some(vars) = server.field("variables").and_then(Value::as_object) {
                for (name, var) in vars {
                    if let Some(default) = var.field("default").and_then(Value::as_str) {
                        url = url.replace(&format!("{{{name}}}"), default);
                    }
                }
            }
            Some(paths::absolute_base_url(doc_url, &url))
        })
        .collect()
}
