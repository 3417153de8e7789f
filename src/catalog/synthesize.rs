//! One operation → one tool (everything but its final name, which needs all the others).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::arguments::{ArgumentMap, Binding, BodyPlan, Location};
use super::naming::{ArgumentNames, NameRequest, argument_name};

use super::text::tidy_schema;
use super::{Annotations, MockAnswer, OutputPlan, Route, SchemaText};
use crate::schema::{Direction, Limit, Notes, RefGraph, Session};
use crate::spec::{
    Method, Operation, Parameter, RequestBody, SpecVersion, Style, media, model::is_success,
};

/// A tool before naming.
pub(super) struct Draft {
    pub naming: NameRequest,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: SchemaText,
    pub output_schema: Option<SchemaText>,
    pub annotations: Annotations,
    pub route: Route,
    pub notes: Vec<String>,
    pub schema_notes: Notes,
}

pub(super) struct Context<'a> {
    pub api: &'a str,
    pub version: SpecVersion,
    pub base_url: Option<&'a str>,
    pub max_description_length: usize,
    pub max_output_schema_bytes: usize,
    /// Longest argument description; 0 = no limit.
    pub max_parameter_description_length: usize,
    pub mock: bool,
}

/// A synthesized schema tidied (descriptions trimmed to `max_description`, 0 = no limit)
/// and kept as text: done here, on the synthesizing thread, so that the trees of all the
/// tools never exist at once.
fn finished(mut schema: Value, max_description: usize) -> SchemaText {
    tidy_schema(&mut schema, max_description);
    SchemaText::new(&schema)
}

pub(super) fn synthesize<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
) -> Result<Draft, String> {
    let mut notes = op.notes.clone();
    let (input_schema, arguments, body, mut schema_notes) = input(cx, graph, op, &mut notes)?;
    let mut relaxed_below = Some(MOCK_SCHEMA_DEPTH);
    let (output_schema, output) = match output(cx, graph, op) {
        Ok(Some((schema, plan, output_notes, depth))) => {
            schema_notes.merge(output_notes);
            relaxed_below = depth;
            (Some(schema), Some(plan))
        }
        Ok(None) => (None, None),
        Err(problem) => {
            notes.push(format!("no outputSchema: {problem}"));
            (None, None)
        }
    };
    let base_url = match cx.base_url {
        Some(url) => Some(url.trim_end_matches('/').to_string()),
        None => op.servers.iter().find(|s| s.contains("://")).cloned(),
    }
    .or_else(|| cx.mock.then(|| super::MOCK_BASE_URL.to_string()))
    .map(super::BaseUrl::new);
    let mock = cx
        .mock
        .then(|| Arc::new(mock_answer(cx, graph, op, relaxed_below)));
    if base_url.is_none() {
        notes.push(format!(
            "no absolute server URL (servers: {:?}); set base_url for this API in the config",
            op.servers
        ));
    }
    if let Some(body) = &op.request_body
        && !body.alternatives.is_empty()
    {
        notes.push(format!(
            "request body sent as {}; also accepted: {}",
            body.media_type,
            body.alternatives.join(", ")
        ));
    }
    Ok(Draft {
        naming: NameRequest {
            operation_id: op.operation_id.clone(),
            identity: op.label(),
            method: op.method.key(),
            path: op.path.clone(),
        },
        title: op.summary.as_deref().map(single_line),
        description: description(op, cx.max_description_length),
        input_schema: finished(input_schema, cx.max_parameter_description_length),
        output_schema: output_schema.map(|schema| finished(schema, 0)),
        annotations: annotations(op.method),
        route: Route {
            api: cx.api.to_string(),
            method: op.method,
            path: op.path.clone(),
            base_url,
            arguments,
            body,
            output,
            security: op.security.clone(),
            timeout: None,
            max_response_bytes: None,
            response_fields: Vec::new(),
            mock,
        },
        notes,
        schema_notes,
    })
}

type Input = (Value, ArgumentMap, Option<BodyPlan>, Notes);

fn input<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    notes: &mut Vec<String>,
) -> Result<Input, String> {
    let mut session = Session::new(graph, cx.version, Direction::Input);
    for param in &op.parameters {
        session.analyze(&param.schema)?;
    }
    let body_schema = op.request_body.as_ref().and_then(|b| b.schema.as_ref());
    if let Some(schema) = body_schema {
        session.analyze(schema)?;
    }

    let mut names = ArgumentNames::default();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut bindings = Vec::new();

    // The body claims its names first: its properties are the API's own vocabulary, so on
    // a clash the parameter is the one renamed (`id` and `id__query`).
    let body = op.request_body.as_ref().map(|body| {
        let schema = match &body.schema {
            Some(piece) => session.emit_root(piece),
            None => default_body_schema(&body.media_type),
        };
        (body, schema)
    });
    let mut body_plan = None;
    let mut body_bindings = Vec::new();
    if let Some((body, schema)) = body {
        let flattened = flatten(&schema);
        let flat = flattened.is_some();
        match flattened {
            Some((fields, field_required)) => {
                for (wire, field_schema) in fields {
                    let argument = names.claim(&argument_name(&wire), "body");
                    // The body's own `required` holds even when the body is optional
                    // (`requestBody.required` left out, as in Twilio's and Box's
                    // descriptions): a body sent without those properties is invalid, and
                    // with any of them required the body is never empty.
                    let is_required = field_required.contains(&wire);
                    if is_required {
                        required.push(json!(argument));
                    }
                    let encoding = body.encoding.get(&wire);
                    body_bindings.push(Binding {
                        argument: argument.clone(),
                        location: Location::BodyField,
                        wire_name: wire.clone(),
                        style: encoding.map(|e| e.style).unwrap_or(Style::Form),
                        explode: encoding.map(|e| e.explode).unwrap_or(true),
                        allow_reserved: encoding.is_some_and(|e| e.allow_reserved),
                        content_type: encoding.and_then(|e| e.content_type.clone()),
                        required: is_required,
                        binary: is_binary(&field_schema),
                        fixed: None,
                        default: None,
                    });
                    properties.insert(argument, field_schema);
                }
            }
            None => {
                let argument = names.claim("body", "body");
                let binary = is_binary(&schema);
                properties.insert(argument.clone(), describe_body(schema, body));
                if body.required {
                    required.push(json!(argument));
                }
                body_bindings.push(Binding {
                    argument,
                    location: Location::Body,
                    wire_name: String::new(),
                    style: Style::Form,
                    explode: true,
                    allow_reserved: false,
                    content_type: Some(body.media_type.clone()),
                    required: body.required,
                    binary,
                    fixed: None,
                    default: None,
                });
            }
        }
        body_plan = Some(BodyPlan {
            media_type: body.media_type.clone(),
            required: body.required,
            flattened: flat,
            encoding: body.encoding.clone(),
        });
    }

    let mut params: Vec<&Parameter<'_>> = op.parameters.iter().collect();
    params.sort_by_key(|p| p.location);
    let mut param_properties = Vec::new();
    for param in params {
        let wanted = argument_name(&param.name);
        let argument = names.claim(&wanted, param.location.as_str());
        if argument != wanted {
            notes.push(format!(
                "{} parameter \"{}\" is argument \"{argument}\" (\"{wanted}\" is taken)",
                param.location.as_str(),
                param.name
            ));
        }
        let schema = parameter_schema(&mut session, param);
        if param.required {
            required.push(json!(argument));
        }
        bindings.push(Binding {
            argument: argument.clone(),
            location: param.location.into(),
            wire_name: param.name.clone(),
            style: param.style,
            explode: param.explode,
            allow_reserved: param.allow_reserved,
            content_type: param.content_type.clone(),
            required: param.required,
            binary: is_binary(&schema),
            fixed: None,
            default: None,
        });
        param_properties.push((argument, schema));
    }

    // Parameters first in the schema (path, query, header, cookie), then the body: the
    // order a person reads an HTTP request in.
    let mut ordered = Map::new();
    for (argument, schema) in param_properties {
        ordered.insert(argument, schema);
    }
    ordered.extend(properties);
    bindings.extend(body_bindings);
    let required = order_required(required, &bindings);

    let defs = session.defs();
    let schema_notes = session.into_notes();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(ordered));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    if let Some(defs) = defs {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Ok((
        Value::Object(schema),
        ArgumentMap { bindings },
        body_plan,
        schema_notes,
    ))
}

/// `required` in binding order, so it reads like the properties.
fn order_required(required: Vec<Value>, bindings: &[Binding]) -> Vec<Value> {
    bindings
        .iter()
        .filter(|b| required.iter().any(|r| r.as_str() == Some(&b.argument)))
        .map(|b| json!(b.argument))
        .collect()
}

fn parameter_schema(session: &mut Session<'_, '_>, param: &Parameter<'_>) -> Value {
    let mut schema = match session.emit_root(&param.schema) {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({"not": {}}),
        other => other,
    };
    if let Value::Object(map) = &mut schema {
        if let Some(description) = &param.description {
            map.insert("description".into(), json!(description));
        }
        if param.deprecated {
            map.insert("deprecated".into(), json!(true));
        }
        if let Some(example) = &param.example {
            map.entry("examples")
                .or_insert_with(|| Value::Array(vec![example.clone()]));
        }
    }
    schema
}

/// File content: the client sends base64 (or a `data:` URI) and the upstream gets bytes.
/// An array of files counts too: each item is sent as a file part.
fn is_binary(schema: &Value) -> bool {
    let file = |s: &Value| {
        s.get("format").and_then(Value::as_str) == Some("binary")
            || s.get("contentEncoding").and_then(Value::as_str) == Some("base64")
    };
    file(schema) || schema.get("items").is_some_and(file)
}

/// A body without a schema: JSON may be anything, other media types are text.
fn default_body_schema(media_type: &str) -> Value {
    match media::classify(media_type) {
        media::MediaKind::Json | media::MediaKind::Wildcard => json!({}),
        media::MediaKind::FormUrlEncoded | media::MediaKind::Multipart => {
            json!({"type": "object"})
        }
        media::MediaKind::Other => json!({"type": "string"}),
    }
}

fn describe_body(schema: Value, body: &RequestBody<'_>) -> Value {
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

/// An object body's properties (name, schema) in order, and the names it requires.
type Fields = (Vec<(String, Value)>, Vec<String>);

/// The properties of an object body, when it is a plain object (or an `allOf` of plain
/// objects) whose properties can stand next to the parameters; `None` otherwise.
fn flatten(schema: &Value) -> Option<Fields> {
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

/// The outputSchema, its plan, what translation changed, and the depth below which it was
/// relaxed to fit its budget (`None`: not relaxed).
type Output = (Value, OutputPlan, Notes, Option<usize>);

/// The first 2xx response with a JSON schema becomes the outputSchema; a root that is not
/// an object is wrapped as `{"result": …}`, because MCP requires an object there.
fn output<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
) -> Result<Option<Output>, String> {
    let Some((media_type, piece)) = op.responses.iter().find_map(|r| {
        if !is_success(&r.status) {
            return None;
        }
        let (media_type, schema) = r.json.as_ref()?;
        Some((media_type.clone(), schema.as_ref()?))
    }) else {
        return Ok(None);
    };
    let mut session = Session::new(graph, cx.version, Direction::Output);
    session.analyze(piece)?;
    // Output schemas are lenient, so one too large for its budget is relaxed rather than
    // refused: levels below a cut-off depth accept anything. The deepest cut-off that fits
    // is found by binary search (size only grows with depth).
    let budget = cx.max_output_schema_bytes;
    let mut attempt = |max_depth: Option<usize>| {
        let limit = Limit {
            max_depth: max_depth.unwrap_or(usize::MAX),
            budget,
        };
        session.begin((budget > 0).then_some(limit));
        let root = session.emit_root(piece);
        let defs = session.defs();
        (
            !session.exceeded(),
            (root, defs, session.notes.clone(), max_depth),
        )
    };
    let (fits, mut chosen) = attempt(None);
    if !fits && budget > 0 {
        const CUT_OFFS: [usize; 7] = [8, 6, 4, 3, 2, 1, 0];
        let (mut lo, mut hi) = (0, CUT_OFFS.len());
        let mut best = None;
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (fits, result) = attempt(Some(CUT_OFFS[mid]));
            if fits {
                best = Some(result);
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        chosen = match best {
            Some(result) => result,
            None => attempt(Some(0)).1,
        };
    }
    let (root, defs, mut notes, max_depth) = chosen;
    if let Some(depth) = max_depth {
        notes.invalid.push(format!(
            "outputSchema relaxed below depth {depth} to stay within {budget} bytes"
        ));
    }
    let is_object = root.get("type").and_then(Value::as_str) == Some("object");
    let mut schema = if is_object {
        root
    } else {
        json!({"type": "object", "properties": {"result": root}})
    };
    if let (Some(defs), Value::Object(map)) = (defs, &mut schema) {
        map.insert("$defs".into(), Value::Object(defs));
    }
    Ok(Some((
        schema,
        OutputPlan {
            media_type,
            wrapped: !is_object,
        },
        notes,
        max_depth,
    )))
}

/// Depth below which a mock response schema accepts anything when the tool has no
/// outputSchema to follow (see [`mock_answer`]).
const MOCK_SCHEMA_DEPTH: usize = 8;

/// What the mock upstream answers: the first documented 2xx response (else the first
/// response), with the spec's example, or a value generated from the response schema as
/// the spec states it (strict, unlike the lenient outputSchema).
///
/// The response schema is relaxed below the same depth as the outputSchema (`relaxed_below`),
/// so that generated values have the shape the outputSchema checks, and so that Stripe's
/// fully expanded response schemas (megabytes per operation) are not spelled out.
fn mock_answer<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    relaxed_below: Option<usize>,
) -> MockAnswer {
    // No success documented: `default` describes the usual answer; error responses are not
    // what a mock should give a well-formed request.
    let response = op
        .responses
        .iter()
        .find(|r| is_success(&r.status))
        .or_else(|| {
            op.responses
                .iter()
                .find(|r| r.status.eq_ignore_ascii_case("default"))
        });
    let status = response
        .and_then(|r| r.status.parse::<u16>().ok())
        .filter(|code| (200..300).contains(code))
        .unwrap_or(200);
    let Some(response) = response else {
        return MockAnswer {
            status,
            media_type: None,
            body: Vec::new(),
            source: "empty",
        };
    };
    if let Some((media_type, schema)) = &response.json {
        let strict_schema = schema.as_ref().and_then(|piece| {
            let mut session = Session::new(graph, cx.version, Direction::Response);
            session.analyze(piece).ok()?;
            session.begin(relaxed_below.map(|max_depth| Limit {
                max_depth,
                budget: usize::MAX,
            }));
            let mut root = session.emit_root(piece);
            if let (Some(defs), Value::Object(map)) = (session.defs(), &mut root) {
                map.insert("$defs".into(), Value::Object(defs));
            }
            Some(root)
        });
        let (value, source) = match (strict_schema, &response.example) {
            // The generator returns a valid example as it is, and replaces one the schema
            // refutes (GitHub documents `null` for object responses, for one).
            (Some(mut root), Some(example)) => {
                if let Value::Object(map) = &mut root {
                    map.insert("examples".into(), json!([example]));
                }
                let value = crate::mock::generate::example(&root);
                let source = if value.as_ref() == Some(example) {
                    "example"
                } else {
                    "generated"
                };
                (value, source)
            }
            (Some(root), None) => (crate::mock::generate::example(&root), "generated"),
            (None, Some(example)) => (Some(example.clone()), "example"),
            (None, None) => (None, "generated"),
        };
        let value = value.unwrap_or_else(|| json!({}));
        return MockAnswer {
            status,
            media_type: Some(media_type.clone()),
            body: serde_json::to_vec(&value).unwrap_or_default(),
            source,
        };
    }
    match response.media_types.first() {
        Some(media_type) => {
            let body = if media::classify(media_type) == media::MediaKind::Other
                && !media_type.starts_with("text/")
            {
                Vec::new()
            } else {
                b"example".to_vec()
            };
            MockAnswer {
                status,
                media_type: Some(media_type.clone()),
                body,
                source: "generated",
            }
        }
        None => MockAnswer {
            status,
            media_type: None,
            body: Vec::new(),
            source: "empty",
        },
    }
}

/// MCP tool annotations, every hint explicit. Safe methods only read; DELETE, PUT and PATCH
/// may overwrite or remove; POST is taken to add. Every tool reaches an external API.
fn annotations(method: Method) -> Annotations {
    Annotations {
        read_only_hint: method.is_safe(),
        destructive_hint: matches!(method, Method::Delete | Method::Put | Method::Patch),
        idempotent_hint: method.is_idempotent(),
        open_world_hint: true,
    }
}

fn single_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Summary and description, deprecation marked, cut at a word boundary to the configured
/// length (0 = no limit); never empty.
fn description(op: &Operation<'_>, max_len: usize) -> String {
    let mut text = match (&op.summary, &op.description) {
        (Some(summary), Some(description)) if description.starts_with(summary.as_str()) => {
            description.clone()
        }
        (Some(summary), Some(description)) => format!("{summary}\n\n{description}"),
        (Some(only), None) | (None, Some(only)) => only.clone(),
        (None, None) => op.label(),
    };
    if op.deprecated {
        text = format!("[DEPRECATED] {text}");
    }
    truncate_text(&super::text::clean(&text), max_len)
}

/// Cuts `text` to at most `max` characters at a word boundary, marking the cut with `…`.
pub fn truncate_text(text: &str, max: usize) -> String {
    if max == 0 || text.chars().count() <= max {
        return text.to_string();
    }
    let limit = max.saturating_sub(1);
    let cut: String = text.chars().take(limit).collect();
    let at_word = match cut.rfind(char::is_whitespace) {
        Some(i) if i > limit / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", at_word.trim_end())
}
