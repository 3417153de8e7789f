//! Request bodies of one operation: which form a body takes as arguments (a JSON object
//! flattened into top-level arguments, one `body` argument, raw text or bytes, multipart
//! with file parts), the schemas that describe those arguments, and how a file part is
//! spotted (`format: binary`/`byte`, `contentMediaType`, Swagger 2.0 `type: file`,
//! `encoding.contentType`) and named (`NAME_filename`).

use serde_json::{Map, Value, json};

use crate::catalog::arguments::{FileContent, FilePart};
use crate::schema::RefGraph;
use crate::spec::{Encoding, RequestBody, SchemaRef, media};

/// File content: the client sends base64 (or a `data:` URI) and the upstream gets bytes.
/// That is `format: binary` (raw octets, OpenAPI 3.0 and Swagger 2.0 `type: file`, which
/// becomes it); `format: byte` and a `contentEncoding` say the payload itself holds the
/// encoded text ([`encoded_as`]), which is sent as it is. An array of files counts too:
/// each item is sent as a file part.
pub(super) fn is_binary(schema: &Value) -> bool {
    let file = |s: &Value| s.get("format").and_then(Value::as_str) == Some("binary");
    file(schema) || schema.get("items").is_some_and(file)
}

/// The encoding a string's content is in, in the payload itself: OpenAPI 3.0's `format:
/// byte` (and its File Upload's `format: base64`) is base64 text, sent as the text the
/// client gives, never decoded. `None` for anything else: `format: binary` and a 3.1
/// `contentEncoding` (without `format: byte`) are bytes the client gives as base64 and
/// restmcp sends decoded, as file uploads expect them (FastAPI's, for one: tests/world d3).
pub(super) fn encoded_as(schema: &Value) -> Option<&str> {
    encoding_of(
        schema.get("format").and_then(Value::as_str),
        schema.get("contentEncoding").and_then(Value::as_str),
    )
}

/// [`encoded_as`] of a schema's `format` and `contentEncoding`.
fn encoding_of<'s>(format: Option<&'s str>, content_encoding: Option<&'s str>) -> Option<&'s str> {
    match (format, content_encoding) {
        (Some("byte" | "base64"), encoding) => Some(encoding.unwrap_or("base64")),
        _ => None,
    }
}

/// How a request body becomes arguments.
pub(super) enum BodyForm {
    /// From its schema: flattened into fields where it can be, else the `body` argument.
    Schema,
    /// One string argument sent as the body: the document itself for a text media type
    /// (XML, plain text, CSV…) and for bytes the description declares encoded in the body
    /// (`format: byte`), base64 that restmcp decodes for other bytes. The schema, which
    /// describes the body's content as JSON values, cannot say how to write it in such a
    /// type.
    Raw { binary: bool },
}

/// How the body is given, or `None` (with a note saying why) when restmcp cannot send it
/// in the one media type it was chosen in: the tool then has no body. `declared` is the
/// body's schema with `$ref`s at its root followed.
pub(super) fn body_form(
    body: &RequestBody<'_>,
    declared: Option<&Value>,
    notes: &mut Vec<String>,
) -> Option<BodyForm> {
    let media_type = &body.media_type;
    if !media::is_sendable(media_type) {
        notes.push(format!(
            "request body left out of the tool: its media type \"{media_type}\" cannot be sent as a Content-Type"
        ));
        return None;
    }
    let raw = body.schema.as_ref().map(|piece| piece.schema.as_ref());
    match media::classify(media_type) {
        media::MediaKind::Json | media::MediaKind::Wildcard | media::MediaKind::FormUrlEncoded => {
            Some(BodyForm::Schema)
        }
        media::MediaKind::Multipart => {
            if allows_type(raw.and_then(|s| s.get("type")), "object") {
                Some(BodyForm::Schema)
            } else {
                notes.push(format!(
                    "request body left out of the tool: a {media_type} body is made of the properties of an object, and its schema is not one"
                ));
                None
            }
        }
        media::MediaKind::Other => {
            if !media::is_textual(media_type) {
                let encoded = declared.and_then(encoded_as).is_some();
                return Some(BodyForm::Raw { binary: !encoded });
            }
            // A text body whose schema is one primitive (`text/plain` holding a string or a
            // number) keeps its schema; anything structured is given as the document.
            let primitive = raw.is_some_and(|s| {
                s.get("$ref").is_none()
                    && matches!(
                        s.get("type").and_then(Value::as_str),
                        Some("string" | "number" | "integer" | "boolean")
                    )
            });
            if primitive && !media::is_xml(media_type) {
                return Some(BodyForm::Schema);
            }
            if raw.is_some() {
                notes.push(format!(
                    "request body is {media_type}: the argument \"body\" is the whole document as a string, sent as it is (the body's schema describes it but is not used)"
                ));
            }
            Some(BodyForm::Raw { binary: false })
        }
    }
}

/// The `body` argument of a body sent raw: a string holding the document, or its bytes
/// as base64.
pub(super) fn raw_body_schema(
    body: &RequestBody<'_>,
    binary: bool,
    xml_root: Option<String>,
    declared: Option<&Value>,
) -> Value {
    let media_type = &body.media_type;
    let concrete = (!media::is_range(media_type)).then(|| media::essence(media_type));
    let mut schema = Map::new();
    schema.insert("type".into(), json!("string"));
    let encoded = declared.and_then(encoded_as);
    let how = if let (false, Some(encoding)) = (binary, encoded) {
        schema.insert("contentEncoding".into(), json!(encoding));
        format!(
            "The request body: the {encoding} text itself (the description declares the body's content {encoding}-encoded), sent as it is as {media_type}."
        )
    } else if binary {
        schema.insert("contentEncoding".into(), json!("base64"));
        match &concrete {
            Some(essence) => format!(
                "The request body: the file's bytes ({essence}), base64-encoded or as a data: URI; sent as raw bytes."
            ),
            None => format!(
                "The request body: the file's bytes ({media_type}), as a data: URI naming its type (data:<type>;base64,<data>); sent as raw bytes."
            ),
        }
    } else if media::is_xml(media_type) {
        match xml_root {
            Some(root) => format!(
                "The request body: a complete XML document (root element <{root}>), sent as it is as {media_type}."
            ),
            None => {
                format!("The request body: a complete XML document, sent as it is as {media_type}.")
            }
        }
    } else {
        format!("The request body as text, sent as it is as {media_type}.")
    };
    if let Some(essence) = concrete {
        schema.insert("contentMediaType".into(), json!(essence));
    }
    let text = match &body.description {
        Some(description) => format!("{how}\n\n{description}"),
        None => how,
    };
    schema.insert("description".into(), json!(text));
    Value::Object(schema)
}

/// A body's schema with the `$ref`s at its root followed (the schema itself when one does
/// not resolve): what its own keywords declare.
pub(super) fn followed(graph: &mut RefGraph<'_>, piece: &SchemaRef<'_>) -> Value {
    let mut doc = piece.doc;
    let mut node = piece.schema.as_ref().clone();
    for _ in 0..16 {
        let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Ok(id) = graph.resolve(doc, reference) else {
            break;
        };
        let target = graph.node(id);
        doc = target.doc;
        node = target.value.clone();
    }
    node
}

/// The root element an XML body schema names: its `xml.name`, else the name of the
/// schema it refers to (OpenAPI 3.1 §4.8.26: a root schema's element is named after it),
/// following `$ref`s.
pub(super) fn xml_root(graph: &mut RefGraph<'_>, piece: &SchemaRef<'_>) -> Option<String> {
    let own = |node: &Value| {
        node.pointer("/xml/name")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut name = own(&piece.schema);
    let mut reference = piece
        .schema
        .get("$ref")
        .and_then(Value::as_str)
        .map(|r| (piece.doc, r.to_string()));
    let mut by_reference = None;
    for _ in 0..16 {
        if name.is_some() {
            break;
        }
        let Some((doc, target)) = reference.take() else {
            break;
        };
        by_reference = target
            .rsplit('/')
            .next()
            .map(|last| crate::json::unescape_token(last).into_owned());
        let Ok(id) = graph.resolve(doc, &target) else {
            break;
        };
        let node = graph.node(id);
        name = own(node.value);
        reference = node
            .value
            .get("$ref")
            .and_then(Value::as_str)
            .map(|r| (node.doc, r.to_string()));
    }
    let named = name.or(by_reference);
    // Only an XML name is worth showing (no markup or spaces from a hostile spec).
    named.filter(|name| {
        !name.is_empty()
            && name.len() <= 100
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    })
}

/// A body without a schema: JSON may be anything, forms are objects.
pub(super) fn default_body_schema(media_type: &str) -> Value {
    match media::classify(media_type) {
        media::MediaKind::FormUrlEncoded | media::MediaKind::Multipart => {
            json!({"type": "object"})
        }
        _ => json!({}),
    }
}

pub(super) fn describe_body(schema: Value, body: &RequestBody<'_>) -> Value {
    let mut schema = match schema {
        Value::Bool(true) => json!({}),
        other => other,
    };
    if let (Value::Object(map), Some(description)) = (&mut schema, &body.description) {
        map.entry("description")
            .or_insert_with(|| json!(description));
    }
    schema
}

/// True when a schema's `type` (given) is absent or allows `wanted`.
fn allows_type(declared: Option<&Value>, wanted: &str) -> bool {
    match declared {
        None => true,
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t == wanted),
        Some(_) => false,
    }
}

/// When a multipart property is a file, how it is sent; its schema is updated to say how
/// the model gives the content. A file is a string (or an array of strings) that is
/// binary (`format: binary`/`byte`, a `contentEncoding`), has a `contentMediaType`, or
/// whose encoding object names a `contentType` other than plain text or JSON.
pub(super) fn file_part(schema: &mut Value, encoding: Option<&Encoding>) -> Option<FilePart> {
    let many = schema.get("type").and_then(Value::as_str) == Some("array");
    let item = if many {
        schema.get_mut("items")?
    } else {
        &mut *schema
    };
    let map = item.as_object_mut()?;
    if map.contains_key("$ref") || !allows_type(map.get("type"), "string") {
        return None;
    }
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    let (format, content_encoding, content_media_type) = (
        text("format"),
        text("contentEncoding"),
        text("contentMediaType"),
    );
    let declared_by_encoding = encoding.and_then(|e| e.content_type.clone());
    let listed = |list: &str| -> Vec<String> {
        list.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    if let Some(list) = &declared_by_encoding {
        let types = listed(list);
        // A JSON part is a value, not a file (the request builder sends it as JSON).
        if types.iter().any(|t| media::is_json(t)) {
            return None;
        }
    }
    // Raw octets the client gives as base64; `format: byte` and a `contentEncoding` say
    // the part itself holds the encoded text, sent as the client gives it.
    let raw_bytes = format.as_deref() == Some("binary");
    let encoded = encoding_of(format.as_deref(), content_encoding.as_deref()).map(str::to_string);
    let named_by_encoding = declared_by_encoding.as_deref().is_some_and(|list| {
        listed(list)
            .iter()
            .any(|t| media::essence(t) != "text/plain")
    });
    if !(raw_bytes || encoded.is_some() || content_media_type.is_some() || named_by_encoding) {
        return None;
    }
    let media_types = declared_by_encoding
        .or(content_media_type.clone())
        .filter(|list| !listed(list).is_empty());
    let first_concrete = media_types.as_deref().and_then(|list| {
        listed(list)
            .into_iter()
            .find(|t| !media::is_range(t) && media::is_sendable(t))
    });
    let content = if raw_bytes {
        FileContent::Base64
    } else if encoded.is_some() {
        FileContent::Encoded
    } else if first_concrete.as_deref().is_some_and(media::is_textual) {
        FileContent::Text
    } else {
        FileContent::Base64
    };
    match content {
        FileContent::Base64 => {
            if !matches!(content_encoding.as_deref(), Some("base64" | "base64url")) {
                map.insert("contentEncoding".into(), json!("base64"));
            }
        }
        FileContent::Text => {
            map.remove("contentEncoding");
        }
        FileContent::Encoded => {
            if let Some(encoding) = &encoded {
                map.insert("contentEncoding".into(), json!(encoding));
            }
        }
    }
    if content_media_type.is_none()
        && let Some(single) = &first_concrete
        && media_types
            .as_deref()
            .map(listed)
            .is_some_and(|l| l.len() == 1)
    {
        map.insert("contentMediaType".into(), json!(media::essence(single)));
    }
    Some(FilePart {
        content,
        media_types,
        many,
    })
}

/// The file name a part gets when the model names none: the property's name (`file`
/// when it has no usable characters) with the extension of the part's media type.
pub fn default_filename(wire: &str, media_type: &str) -> String {
    let stem: String = wire
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(64)
        .collect();
    let stem = stem.trim_matches('.');
    let stem = if stem.is_empty() { "file" } else { stem };
    format!("{stem}.{}", media::extension(media_type))
}

/// The media type the default file name is derived from when the description leaves it
/// open, and the text saying so.
fn file_media_type(file: &FilePart) -> (String, bool) {
    let concrete = file.media_types.as_deref().and_then(|list| {
        list.split(',')
            .map(str::trim)
            .find(|t| !t.is_empty() && !media::is_range(t))
            .map(media::essence)
    });
    match (concrete, file.content) {
        (Some(single), _) => (single, false),
        (None, FileContent::Text | FileContent::Encoded) => ("text/plain".to_string(), true),
        (None, FileContent::Base64) => ("application/octet-stream".to_string(), true),
    }
}

/// Puts how to give a file part's content at the head of its description.
pub(super) fn describe_file(
    schema: &mut Value,
    file: &FilePart,
    wire: &str,
    filename_argument: Option<&str>,
) {
    let (media_type, open) = file_media_type(file);
    let default_name = default_filename(wire, &media_type);
    let allowed = match &file.media_types {
        Some(list) => format!(" ({list})"),
        None => String::new(),
    };
    let what = match (file.content, file.many) {
        (FileContent::Base64, false) => format!(
            "File content{allowed}, base64-encoded or as a data: URI (data:<type>;base64,<data>); sent as a file part."
        ),
        (FileContent::Base64, true) => format!(
            "Files{allowed}, each base64-encoded or a data: URI (data:<type>;base64,<data>); each is sent as a file part."
        ),
        (FileContent::Text, false) => {
            format!("File content as text{allowed}, sent as it is as a file part.")
        }
        (FileContent::Text, true) => {
            format!("Files as text{allowed}, each sent as it is as a file part.")
        }
        (FileContent::Encoded, false) => format!(
            "File content{allowed} as encoded text (the description declares the part's content encoded), sent as it is as a file part."
        ),
        (FileContent::Encoded, true) => format!(
            "Files{allowed} as encoded text (the description declares each part's content encoded), each sent as it is as a file part."
        ),
    };
    let default = if open && file.content == FileContent::Base64 {
        format!("{default_name}, or the extension of the data: URI's type")
    } else {
        default_name
    };
    let naming = match filename_argument {
        Some(argument) => format!(" File name: \"{argument}\" (default {default})."),
        None => format!(" File name: {default}."),
    };
    let Value::Object(map) = schema else {
        return;
    };
    let text = match map.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{what}{naming}\n\n{existing}"),
        _ => format!("{what}{naming}"),
    };
    map.insert("description".into(), json!(text));
}

/// The schema of a file part's optional name argument.
pub(super) fn filename_schema(file: &FilePart, argument: &str, wire: &str) -> Value {
    let (media_type, _) = file_media_type(file);
    let default_name = default_filename(wire, &media_type);
    let name = json!({"type": "string", "minLength": 1, "maxLength": 255});
    if file.many {
        json!({
            "type": "array",
            "items": name,
            "description": format!(
                "Optional file names for the files of \"{argument}\", in order (default {default_name}); only the last path segment is used."
            ),
        })
    } else {
        let mut schema = name;
        schema["description"] = json!(format!(
            "Optional file name for \"{argument}\" (default {default_name}); only the last path segment is used."
        ));
        schema
    }
}

/// An object body's properties (name, schema) in order, and the names it requires.
pub(super) type Fields = (Vec<(String, Value)>, Vec<String>);

/// The properties of an object body, when it is a plain object (or an `allOf` of plain
/// objects) whose properties can stand next to the parameters; `None` otherwise.
pub(super) fn flatten(schema: &Value) -> Option<Fields> {
    let map = schema.as_object()?;
    const BLOCKING: [&str; 8] = [
        "$ref",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "patternProperties",
        "unevaluatedProperties",
        "dependentSchemas",
    ];
    if BLOCKING.iter().any(|k| map.contains_key(*k)) {
        return None;
    }
    match map.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(_) => return None,
    }
    match map.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => return None,
    }
    let mut fields: Vec<(String, Value)> = Vec::new();
    let mut required: Vec<String> = Vec::new();
    if let Some(Value::Array(parts)) = map.get("allOf") {
        for part in parts {
            let (part_fields, part_required) = flatten(part)?;
            for (name, schema) in part_fields {
                match fields.iter_mut().find(|(n, _)| *n == name) {
                    // Two parts constrain the same property: both must hold.
                    Some((_, existing)) => {
                        *existing = json!({"allOf": [existing.clone(), schema]});
                    }
                    None => fields.push((name, schema)),
                }
            }
            required.extend(part_required);
        }
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, schema) in props {
            fields.retain(|(n, _)| n != name);
            fields.push((name.clone(), schema.clone()));
        }
    }
    if let Some(Value::Array(names)) = map.get("required") {
        required.extend(names.iter().filter_map(Value::as_str).map(str::to_string));
    }
    if fields.is_empty() {
        return None;
    }
    Some((fields, required))
}
