//! Swagger 2.0 into the normalized model, translated faithfully:
//! `host`/`basePath`/`schemes` become a base URL, `in: body` and `in: formData` (including
//! `type: file`) become a request body in a media type taken from `consumes`,
//! `collectionFormat` becomes style/explode, and schemas under `definitions` are reached
//! through ordinary `$ref` resolution. Header parameters named `Accept`, `Content-Type` or
//! `Authorization` stay parameters: the rule that ignores them is OpenAPI 3.x's.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::document::DocumentSet;
use super::media::{self, MediaKind};
use super::model::{
    Api, Encoding, ParamLocation, Parameter, RequestBody, Response, SchemaRef, SpecVersion, Style,
};
use super::paths::{self, OperationParts, RawOperation, RawParameter, Translate};
use super::{flag, security, text, values};

/// The API but its operations (still empty), and how its operations are translated.
pub(super) fn reading(docs: &DocumentSet) -> (Api<'static>, Box<dyn Translate>) {
    let root = &docs.root().root;
    let head = Api {
        version: SpecVersion::Swagger2,
        title: root
            .pointer("/info/title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        operations: Vec::new(),
        skipped: Vec::new(),
        security_schemes: security::schemes_v2(docs),
    };
    let dialect = Dialect {
        base_url: base_url(docs, root),
        consumes: strings(root.get("consumes")),
        produces: strings(root.get("produces")),
    };
    (head, Box::new(dialect))
}

/// Swagger 2.0 operations, with the document's base URL, `consumes` and `produces`.
struct Dialect {
    base_url: Option<String>,
    consumes: Vec<String>,
    produces: Vec<String>,
}

impl Translate for Dialect {
    fn translate<'p>(
        &self,
        docs: &'p DocumentSet,
        raw: &RawOperation<'p>,
    ) -> Result<OperationParts<'p>, String> {
        translate(docs, raw, &self.base_url, &self.consumes, &self.produces)
    }
}

/// Swagger 2.0 §"Swagger Object": scheme from `schemes` (https preferred), else the one the
/// document was fetched with; `host` likewise defaults to the document's; `basePath` to `/`.
fn base_url(docs: &DocumentSet, root: &Value) -> Option<String> {
    let doc_url = &docs.root().url;
    let served_over_http = matches!(doc_url.scheme(), "http" | "https");
    let schemes = strings(root.get("schemes"));
    let scheme = if schemes.iter().any(|s| s == "https") {
        "https".to_string()
    } else if let Some(first) = schemes.first() {
        first.clone()
    } else if served_over_http {
        doc_url.scheme().to_string()
    } else {
        "https".to_string()
    };
    let base_path = root.get("basePath").and_then(Value::as_str).unwrap_or("/");
    let host = match root.get("host").and_then(Value::as_str) {
        Some(host) => host.to_string(),
        None if served_over_http => {
            doc_url[url::Position::BeforeHost..url::Position::AfterPort].to_string()
        }
        None => return Some(base_path.trim_end_matches('/').to_string()).filter(|s| !s.is_empty()),
    };
    Some(format!(
        "{scheme}://{host}{}",
        base_path.trim_end_matches('/')
    ))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn translate<'a>(
    docs: &'a DocumentSet,
    raw: &RawOperation<'a>,
    base_url: &Option<String>,
    global_consumes: &[String],
    global_produces: &[String],
) -> Result<OperationParts<'a>, String> {
    let consumes = match raw.value.get("consumes") {
        Some(list) => strings(Some(list)),
        None => global_consumes.to_vec(),
    };
    let produces = match raw.value.get("produces") {
        Some(list) => strings(Some(list)),
        None => global_produces.to_vec(),
    };
    let mut notes = Vec::new();
    let mut parameters = Vec::new();
    let mut body_param = None;
    let mut form_params = Vec::new();
    for param in &raw.parameters {
        let name = param
            .value
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("{}: parameter has no \"name\"", param.pointer))?;
        match param.value.get("in").and_then(Value::as_str) {
            Some("body") => body_param = Some(param),
            Some("formData") => form_params.push(param),
            Some(location) => {
                let location = ParamLocation::parse(location)
                    .filter(|l| *l != ParamLocation::Cookie)
                    .ok_or_else(|| {
                        format!(
                            "{}: parameter \"{name}\" has \"in\": {} (expected path, query, header, body or formData)",
                            param.pointer,
                            docs.shown(param.doc, &Value::String(location.to_string()))
                        )
                    })?;
                // Swagger 2.0 has no rule setting `Accept`, `Content-Type` or
                // `Authorization` aside (that is OpenAPI 3.x): they are real arguments.
                if location == ParamLocation::Header && name.eq_ignore_ascii_case("authorization") {
                    notes.push(format!(
                        "header parameter \"{name}\" is an argument (Swagger 2.0); credentials configured for the API replace its value"
                    ));
                }
                parameters.push(simple_parameter(param, name, location));
            }
            None => {
                return Err(format!(
                    "{}: parameter \"{name}\" has no \"in\"",
                    param.pointer
                ));
            }
        }
    }
    let request_body = if let Some(param) = body_param {
        Some(body(param, &consumes))
    } else if !form_params.is_empty() {
        Some(form_body(&form_params, &consumes))
    } else {
        None
    };
    Ok(OperationParts {
        parameters,
        request_body,
        responses: responses(docs, raw, &produces, &mut notes),
        produces,
        servers: base_url.iter().cloned().collect(),
        notes,
    })
}

/// `collectionFormat` → (style, explode) for a location (Swagger 2.0 §"Parameter Object").
fn collection_style(param: &Value, location: ParamLocation) -> (Style, bool) {
    match param.get("collectionFormat").and_then(Value::as_str) {
        Some("multi") => (Style::Form, true),
        Some("ssv") => (Style::SpaceDelimited, false),
        Some("tsv") => (Style::TabDelimited, false),
        Some("pipes") => (Style::PipeDelimited, false),
        _ => (Style::default_for(location), false),
    }
}

/// The schema a non-body parameter describes inline: everything but the parameter's own
/// fields. `type: file` becomes binary string content.
fn inline_schema(param: &Value, keep_description: bool) -> Value {
    let Some(map) = param.as_object() else {
        return json!({});
    };
    let mut schema = Map::new();
    for (key, value) in map {
        let parameter_field = matches!(
            key.as_str(),
            "name" | "in" | "required" | "collectionFormat" | "allowEmptyValue"
        ) || (key == "description" && !keep_description);
        if parameter_field {
            continue;
        }
        if key == "items" {
            schema.insert(key.clone(), inline_schema(value, true));
        } else {
            schema.insert(key.clone(), value.clone());
        }
    }
    if schema.get("type").and_then(Value::as_str) == Some("file") {
        schema.insert("type".into(), json!("string"));
        schema.insert("format".into(), json!("binary"));
    }
    Value::Object(schema)
}

fn simple_parameter<'a>(
    param: &RawParameter<'a>,
    name: &str,
    location: ParamLocation,
) -> Parameter<'a> {
    let (style, explode) = collection_style(param.value, location);
    Parameter {
        name: name.to_string(),
        location,
        required: location == ParamLocation::Path || flag(param.value, "required").unwrap_or(false),
        description: text(param.value, "description"),
        deprecated: false,
        style,
        explode,
        allow_reserved: false,
        schema: SchemaRef {
            doc: param.doc,
            schema: Cow::Owned(inline_schema(param.value, false)),
            pointer: param.pointer.clone(),
        },
        content_type: None,
        // Swagger 2.0 has no Example objects: a `$ref` in an example can only dangle.
        example: param
            .value
            .get("x-example")
            .filter(|example| !values::holds_ref(example))
            .cloned(),
    }
}

fn body<'a>(param: &RawParameter<'a>, consumes: &[String]) -> RequestBody<'a> {
    let chosen = media::choose(consumes.iter().map(String::as_str));
    let media_type = chosen
        .map(|i| consumes[i].clone())
        .unwrap_or_else(|| "application/json".to_string());
    RequestBody {
        required: flag(param.value, "required").unwrap_or(false),
        description: text(param.value, "description"),
        media_type,
        schema: param.value.get("schema").map(|schema| SchemaRef {
            doc: param.doc,
            schema: Cow::Borrowed(schema),
            pointer: format!("{}/schema", param.pointer),
        }),
        encoding: BTreeMap::new(),
        alternatives: consumes
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != chosen)
            .map(|(_, mt)| mt.clone())
            .collect(),
    }
}

/// `in: formData` parameters become the properties of one form body. Files force
/// `multipart/form-data`; otherwise `consumes` decides, defaulting to url-encoded.
fn form_body<'a>(params: &[&RawParameter<'a>], consumes: &[String]) -> RequestBody<'a> {
    let has_file = params
        .iter()
        .any(|p| p.value.get("type").and_then(Value::as_str) == Some("file"));
    let multipart_declared = consumes
        .iter()
        .any(|mt| media::classify(mt) == MediaKind::Multipart);
    let form_declared = consumes
        .iter()
        .any(|mt| media::classify(mt) == MediaKind::FormUrlEncoded);
    let media_type = if has_file || (multipart_declared && !form_declared) {
        "multipart/form-data"
    } else {
        "application/x-www-form-urlencoded"
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut encoding = BTreeMap::new();
    for param in params {
        let Some(name) = param.value.get("name").and_then(Value::as_str) else {
            continue;
        };
        properties.insert(name.to_string(), inline_schema(param.value, true));
        if flag(param.value, "required").unwrap_or(false) {
            required.push(json!(name));
        }
        if param.value.get("collectionFormat").is_some() {
            let (style, explode) = collection_style(param.value, ParamLocation::Query);
            encoding.insert(
                name.to_string(),
                Encoding {
                    content_type: None,
                    style,
                    explode,
                    allow_reserved: false,
                },
            );
        }
    }
    let any_required = !required.is_empty();
    let mut schema = json!({"type": "object", "properties": properties});
    if any_required {
        schema["required"] = Value::Array(required);
    }
    RequestBody {
        required: any_required,
        description: None,
        media_type: media_type.to_string(),
        schema: Some(SchemaRef {
            doc: params[0].doc,
            schema: Cow::Owned(schema),
            pointer: params[0].pointer.clone(),
        }),
        encoding,
        alternatives: Vec::new(),
    }
}

/// A response's `schema` is JSON when `produces` lists a JSON type or lists nothing (the
/// overwhelmingly common meaning of an unstated `produces`).
fn responses<'a>(
    docs: &'a DocumentSet,
    raw: &RawOperation<'a>,
    produces: &[String],
    notes: &mut Vec<String>,
) -> Vec<Response<'a>> {
    let json_type = if produces.is_empty() {
        Some("application/json".to_string())
    } else {
        produces.iter().find(|mt| media::is_json(mt)).cloned()
    };
    paths::responses(docs, raw, notes, |status, pointer, doc, response| {
        let schema = response.get("schema");
        let json = match (schema, &json_type) {
            (Some(schema), Some(mt)) => Some((
                mt.clone(),
                Some(SchemaRef {
                    doc,
                    schema: Cow::Borrowed(schema),
                    pointer: format!("{pointer}/schema"),
                }),
            )),
            _ => None,
        };
        Response {
            status: status.to_string(),
            description: text(response, "description"),
            media_types: if schema.is_some() {
                produces.to_vec()
            } else {
                Vec::new()
            },
            example: json_type.as_ref().and_then(|mt| {
                response
                    .get("examples")
                    .and_then(|examples| examples.get(mt))
                    .cloned()
            }),
            json,
        }
    })
}
