//! Hand-written tools: an overlay's `add` entries, one endpoint each, with no OpenAPI
//! operation behind them. They become ordinary [`Tool`]s, so validation, dispatch and result
//! mapping treat them exactly like synthesized ones.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::arguments::{ArgumentMap, Binding, BodyPlan, Location, object_schema};
use super::naming::{is_valid_argument_name, is_valid_tool_name};
use super::patch::{self, NewArgument, NewTool, PatchError, PatchSource};
use super::{
    Annotations, BaseUrl, MockAnswer, MockSource, Origin, OutputPlan, Route, SchemaText, Tool,
};
use crate::spec::{Method, ParamLocation};

/// What a hand-written tool needs from its API.
pub struct ApiContext<'a> {
    pub api: &'a str,
    pub base_url: Option<&'a str>,
    pub mock: bool,
    pub max_name_length: usize,
    /// The config's `apis.NAME.accept`.
    pub accept: Option<&'a str>,
}

/// Builds tool `name` as written at `source`.
pub fn build(
    cx: &ApiContext<'_>,
    name: &str,
    spec: &NewTool,
    source: &PatchSource,
) -> Result<Tool, PatchError> {
    let method = checked_endpoint(cx, name, spec, source)?;
    let template_names = template_parameters(&spec.path)
        .map_err(|problem| PatchError::new(source.at(&["path"]), problem))?;
    let arguments = declared_arguments(spec, method, &template_names, source)?;
    if let Some(missing) = template_names
        .iter()
        .find(|n| !arguments.bindings.iter().any(|b| b.argument == **n))
    {
        return Err(PatchError::new(
            source.at(&["arguments"]),
            format!("the path names {{{missing}}}, which has no argument"),
        ));
    }
    let has_body = arguments
        .bindings
        .iter()
        .any(|b| b.location == Location::BodyField);
    let body = has_body.then(|| BodyPlan {
        media_type: spec
            .body_media_type
            .clone()
            .unwrap_or_else(|| "application/json".into()),
        required: arguments.body_required,
        flattened: true,
        encoding: Default::default(),
        files: Default::default(),
    });
    let input_schema = object_schema(arguments.properties, arguments.required);
    let (output_schema, output) = output_of(spec, source)?;
    let mut annotations = Annotations::of_method(method);
    if let Some(patch) = &spec.annotations {
        patch.apply_to(&mut annotations);
    }
    let mut tool = Tool {
        name: name.to_string(),
        title: spec.title.clone(),
        description: spec.description.clone(),
        input_schema: Value::Object(input_schema).into(),
        output_schema: output_schema.map(SchemaText::from),
        annotations,
        // The operator wrote the inputSchema; it is published as written (no `full_input`).
        route: Route {
            base_url: cx.base_url.map(|u| BaseUrl::new(u.trim_end_matches('/'))),
            arguments: ArgumentMap {
                bindings: arguments.bindings,
            },
            accept: match (cx.accept, &spec.output_schema) {
                (Some(accept), _) => accept.to_string(),
                (None, Some(_)) => "application/json".to_string(),
                (None, None) => "*/*".to_string(),
            },
            body,
            output,
            mock: cx
                .mock
                .then(|| Arc::new(mock_answer(method, spec.output_schema.as_ref()))),
            ..Route::new(cx.api, method, spec.path.clone())
        },
        origin: Origin {
            api: cx.api.to_string(),
            operation_id: None,
            operation: format!("{method} {}", spec.path),
            location: source.location.clone(),
            tags: Vec::new(),
        },
        provenance: Vec::new(),
        resource: None,
        workflow: None,
    };
    tool.note("tool", format!("hand-written in {}", source.location));
    apply_settings(cx, &mut tool, spec, source)?;
    Ok(tool)
}

/// The tool's method, once its name, method, path and description are checked: a valid
/// tool name, an HTTP method, a path starting with `/`, a description that says something.
fn checked_endpoint(
    cx: &ApiContext<'_>,
    name: &str,
    spec: &NewTool,
    source: &PatchSource,
) -> Result<Method, PatchError> {
    if !is_valid_tool_name(name, cx.max_name_length) {
        return Err(PatchError::new(
            source.location.clone(),
            format!(
                "\"{name}\" is not a valid tool name: use A-Z, a-z, 0-9, _ and -, at most {} characters",
                cx.max_name_length
            ),
        ));
    }
    let method = Method::ALL
        .into_iter()
        .find(|m| m.as_str().eq_ignore_ascii_case(spec.method.trim()))
        .ok_or_else(|| {
            PatchError::new(
                source.at(&["method"]),
                format!("\"{}\" is not an HTTP method", spec.method),
            )
        })?;
    if !spec.path.starts_with('/') {
        return Err(PatchError::new(
            source.at(&["path"]),
            format!("\"{}\" must start with /", spec.path),
        ));
    }
    if spec.description.trim().is_empty() {
        return Err(PatchError::new(
            source.at(&["description"]),
            "a tool needs a description: it is what the model reads to choose it",
        ));
    }
    Ok(method)
}

/// The declared arguments, as input-schema properties and bindings.
struct Arguments {
    properties: Map<String, Value>,
    required: Vec<Value>,
    bindings: Vec<Binding>,
    /// A body field is required, so the body is.
    body_required: bool,
}

/// Each declared argument checked (a valid name, a place that agrees with the path
/// template, a valid JSON Schema) and bound where it goes, sent under its own name.
fn declared_arguments(
    spec: &NewTool,
    method: Method,
    template_names: &[String],
    source: &PatchSource,
) -> Result<Arguments, PatchError> {
    let mut arguments = Arguments {
        properties: Map::new(),
        required: Vec::new(),
        bindings: Vec::new(),
        body_required: false,
    };
    for (argument, declared) in &spec.arguments.0 {
        let at = |key: &str| source.at(&["arguments", argument, key]);
        if !is_valid_argument_name(argument) {
            return Err(PatchError::new(
                source.at(&["arguments", argument]),
                format!(
                    "\"{argument}\" is not a valid argument name: use A-Z, a-z, 0-9, _, . and -, at most 64 characters"
                ),
            ));
        }
        let in_template = template_names.iter().any(|n| n == argument);
        let location = argument_location(declared, method, in_template, at)?;
        if location == Location::Path && !in_template {
            return Err(PatchError::new(
                at("in"),
                format!("the path \"{}\" has no {{{argument}}}", spec.path),
            ));
        }
        if in_template && location != Location::Path {
            return Err(PatchError::new(
                at("in"),
                format!("{{{argument}}} is in the path, so the argument must be `in: path`"),
            ));
        }
        let schema = Value::Object(declared.schema.clone());
        if let Err(e) = jsonschema::validator_for(&schema) {
            return Err(PatchError::new(
                source.at(&["arguments", argument]),
                format!("not a valid JSON Schema: {e}"),
            ));
        }
        let is_required = declared.required || location == Location::Path;
        if is_required {
            arguments.required.push(json!(argument));
            if location == Location::BodyField {
                arguments.body_required = true;
            }
        }
        arguments.bindings.push(Binding {
            required: is_required,
            ..Binding::new(argument.clone(), location, argument.clone())
        });
        arguments.properties.insert(argument.clone(), schema);
    }
    Ok(arguments)
}

/// Where an argument goes: where its `in` says, else in the path when the template names
/// it, else in the query for GET, HEAD, DELETE and OPTIONS and in the body for the rest.
fn argument_location(
    declared: &NewArgument,
    method: Method,
    in_template: bool,
    at: impl Fn(&str) -> String,
) -> Result<Location, PatchError> {
    Ok(match declared.location.as_deref() {
        Some("body") => Location::BodyField,
        Some(other) => ParamLocation::parse(other)
            .map(Location::from)
            .ok_or_else(|| {
                PatchError::new(
                    at("in"),
                    format!("\"{other}\" is not one of path, query, header, cookie, body"),
                )
            })?,
        None if in_template => Location::Path,
        None if matches!(
            method,
            Method::Get | Method::Head | Method::Delete | Method::Options
        ) =>
        {
            Location::Query
        }
        None => Location::BodyField,
    })
}

/// The outputSchema as published (a root that is not an object wrapped as
/// `{"result": …}`, as MCP requires an object) and its plan, when the tool declares a
/// valid one.
fn output_of(
    spec: &NewTool,
    source: &PatchSource,
) -> Result<(Option<Value>, Option<OutputPlan>), PatchError> {
    let Some(schema) = &spec.output_schema else {
        return Ok((None, None));
    };
    if let Err(e) = jsonschema::validator_for(schema) {
        return Err(PatchError::new(
            source.at(&["output_schema"]),
            format!("not a valid JSON Schema: {e}"),
        ));
    }
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    let published = if is_object {
        schema.clone()
    } else {
        json!({"type": "object", "properties": {"result": schema}})
    };
    Ok((
        Some(published),
        Some(OutputPlan {
            media_type: "application/json".into(),
            wrapped: !is_object,
        }),
    ))
}

/// Applies what the entry sets beside its endpoint, as a tool patch would: timeout,
/// `Accept` (noting the config's when it set it), response limits and confirmation.
fn apply_settings(
    cx: &ApiContext<'_>,
    tool: &mut Tool,
    spec: &NewTool,
    source: &PatchSource,
) -> Result<(), PatchError> {
    if let Some(seconds) = spec.timeout_seconds {
        tool.route.timeout =
            Some(source.limit(patch::timeout(seconds, source.at(&["timeout_seconds"]))?));
    }
    if let Some(accept) = &spec.accept {
        tool.route.accept = patch::checked_accept(accept, source)?;
        tool.note("accept", source.describe(&["accept"]));
    } else if cx.accept.is_some() {
        tool.note("accept", format!("config apis.{}.accept", cx.api));
    }
    if let Some(response) = &spec.response {
        patch::apply_response(tool, response, source)?;
    }
    if let Some(confirm) = spec.confirm {
        patch::set_confirmation(tool, confirm, source);
    }
    if let Some(resource) = &spec.resource {
        patch::set_resource(tool, resource, source)?;
    }
    Ok(())
}

/// A hand-written tool's mock answer: a value of its output schema, else an empty JSON
/// object (or no body for DELETE).
fn mock_answer(method: Method, output_schema: Option<&Value>) -> MockAnswer {
    let value = output_schema.and_then(crate::schema::example::example);
    match value {
        Some(value) => MockAnswer {
            status: 200,
            media_type: Some("application/json".into()),
            body: serde_json::to_vec(&value).unwrap_or_default(),
            source: MockSource::Generated,
        },
        None if method == Method::Delete => MockAnswer {
            status: 204,
            media_type: None,
            body: Vec::new(),
            source: MockSource::Empty,
        },
        None => MockAnswer {
            status: 200,
            media_type: Some("application/json".into()),
            body: b"{}".to_vec(),
            source: MockSource::Empty,
        },
    }
}

/// The `{name}`s of a path template, each once.
fn template_parameters(path: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            return Err(format!("\"{path}\" has a {{ without a closing }}"));
        };
        let name = &after[..end];
        if name.is_empty() || name.contains('{') {
            return Err(format!("\"{path}\" has an empty or nested {{}}"));
        }
        if names.iter().any(|n| n == name) {
            return Err(format!("\"{path}\" names {{{name}}} twice"));
        }
        names.push(name.to_string());
        rest = &after[end + 1..];
    }
    if rest.contains('}') {
        return Err(format!("\"{path}\" has a }} without an opening {{"));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(yaml: &str) -> Result<Tool, PatchError> {
        let file = patch::parse_file("t.yaml", yaml.as_bytes()).expect("parses");
        let (name, spec) = &file.add.0[0];
        let source = PatchSource {
            kind: "overlay",
            location: format!("t.yaml#/add/{name}"),
        };
        let cx = ApiContext {
            api: "svc",
            base_url: Some("http://127.0.0.1:9/"),
            mock: false,
            max_name_length: 64,
            accept: None,
        };
        build(&cx, name, spec, &source)
    }

    #[test]
    fn arguments_go_where_declared_or_where_the_method_suggests() {
        let tool = tool(
            "add:\n  note:\n    method: POST\n    path: /items/{id}/notes\n    description: Adds a note\n    arguments:\n      id: {type: integer}\n      text: {type: string, required: true}\n      X-Trace: {in: header, type: string}\n      dry_run: {in: query, type: boolean}\n",
        )
        .expect("builds");
        let located: Vec<(&str, Location)> = tool
            .route
            .arguments
            .bindings
            .iter()
            .map(|b| (b.argument.as_str(), b.location))
            .collect();
        assert_eq!(
            located,
            [
                ("id", Location::Path),
                ("text", Location::BodyField),
                ("X-Trace", Location::Header),
                ("dry_run", Location::Query)
            ]
        );
        assert_eq!(
            tool.input_schema.to_value()["required"],
            json!(["id", "text"])
        );
        assert_eq!(
            tool.input_schema.to_value()["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            tool.route.body.as_ref().map(|b| b.media_type.as_str()),
            Some("application/json")
        );
        assert_eq!(tool.route.base_url.as_deref(), Some("http://127.0.0.1:9"));
        assert!(!tool.annotations.read_only_hint);
    }

    #[test]
    fn mistakes_name_the_entry_at_fault() {
        let error = tool("add:\n  x:\n    method: GET\n    path: /a/{id}\n    description: X\n")
            .unwrap_err();
        assert_eq!(error.location, "t.yaml#/add/x/arguments");
        assert!(error.problem.contains("{id}"), "{error}");
        let error =
            tool("add:\n  x:\n    method: FETCH\n    path: /a\n    description: X\n").unwrap_err();
        assert_eq!(error.location, "t.yaml#/add/x/method");
        let error = tool(
            "add:\n  x:\n    method: GET\n    path: /a\n    description: X\n    arguments:\n      q: {in: query, type: 12}\n",
        )
        .unwrap_err();
        assert_eq!(error.location, "t.yaml#/add/x/arguments/q");
        assert!(error.problem.contains("JSON Schema"), "{error}");
    }

    #[test]
    fn a_non_object_output_schema_is_wrapped() {
        let tool = tool(
            "add:\n  list:\n    method: GET\n    path: /items\n    description: Lists\n    output_schema: {type: array, items: {type: string}}\n",
        )
        .expect("builds");
        assert_eq!(
            tool.output_schema.as_ref().map(SchemaText::to_value),
            Some(
                json!({"type": "object", "properties": {"result": {"type": "array", "items": {"type": "string"}}}})
            )
        );
        assert!(tool.route.output.as_ref().is_some_and(|o| o.wrapped));
    }
}
