//! A tool served as a resource: a [`ResourcePatch`] checked against its tool (a GET; every
//! variable of the URI one of its path or query arguments; no required argument left
//! unbound) into the [`Resource`] the catalog keeps, and the typed arguments a URI's (or a
//! prompt's) texts give a tool.

use serde_json::{Map, Value};

use super::resource::{Resource, ResourcePatch, ValueKind, Variable, choices};
use super::uri_template::UriTemplate;
use super::{Location, Tool};

/// Where a resource patch is at fault (the location `at` gave) and why.
pub(super) type Fault = (String, String);

/// The resource `patch` makes of `tool`, or where and why it cannot be one; `at` gives
/// the location of a key below the patch (`[]` for the patch itself).
pub(super) fn make(
    tool: &Tool,
    patch: &ResourcePatch,
    at: &dyn Fn(&[&str]) -> String,
) -> Result<Resource, Fault> {
    let key = |key: &str| at(&[key]);
    if !tool.route.method.is_safe() {
        return Err((
            at(&[]),
            format!(
                "only a GET operation can be a resource; this tool is {} {}",
                tool.route.method, tool.route.path
            ),
        ));
    }
    let uri = UriTemplate::parse(&patch.uri).map_err(|e| (key("uri"), e.0))?;
    let input = tool.input_schema.to_value();
    let properties = input.get("properties").and_then(Value::as_object);
    let mut variables = Vec::new();
    for name in uri.variables() {
        let binding = binding_of(tool, name);
        let schema =
            binding.and_then(|i| properties?.get(&tool.route.arguments.bindings[i].argument));
        let (Some(binding), Some(schema)) = (binding, schema) else {
            return Err((
                key("uri"),
                format!(
                    "variable \"{name}\" is not a path or query argument of tool \"{}\" (it has: {})",
                    tool.name,
                    argument_names(tool).join(", ")
                ),
            ));
        };
        variables.push(Variable {
            name: name.to_string(),
            binding,
            kind: ValueKind::of(schema),
            choices: choices(schema),
            complete: patch.complete.get(name).cloned(),
        });
    }
    if let Some(unknown) = patch
        .complete
        .keys()
        .find(|k| !uri.variables().any(|v| v == *k))
    {
        return Err((
            at(&["complete", unknown]),
            format!("\"{unknown}\" is not a variable of the URI template"),
        ));
    }
    let required = input.get("required").and_then(Value::as_array);
    let filled = |argument: &str| {
        variables
            .iter()
            .any(|v| tool.route.arguments.bindings[v.binding].argument == argument)
    };
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !filled(name) {
            return Err((
                key("uri"),
                format!(
                    "required argument \"{name}\" of tool \"{}\" is not a variable of the URI; \
                     a read could not give it (add {{{name}}}, or {{?{name}}} for a query \
                     parameter)",
                    tool.name
                ),
            ));
        }
    }
    Ok(Resource {
        name: patch.name.clone().unwrap_or_else(|| tool.name.clone()),
        title: patch.title.clone().or_else(|| tool.title.clone()),
        description: patch
            .description
            .clone()
            .unwrap_or_else(|| tool.description.clone()),
        mime_type: patch.mime_type.clone().or_else(|| documented_type(tool)),
        uri,
        variables,
        location: at(&[]),
    })
}

/// The binding a URI variable fills: the path or query argument of that name, else the
/// path or query parameter of that name (whatever an overlay renamed its argument to).
fn binding_of(tool: &Tool, name: &str) -> Option<usize> {
    let bindings = &tool.route.arguments.bindings;
    let usable = |b: &&super::Binding| {
        matches!(b.location, Location::Path | Location::Query) && b.fixed.is_none()
    };
    let by = |matches: &dyn Fn(&super::Binding) -> bool| {
        bindings.iter().position(|b| usable(&b) && matches(b))
    };
    by(&|b| b.argument == name).or_else(|| by(&|b| b.wire_name == name))
}

/// The media type the operation documents for its answer: JSON's when it has an output
/// schema, else the one type its `Accept` asks for.
fn documented_type(tool: &Tool) -> Option<String> {
    if let Some(output) = &tool.route.output {
        return Some(output.media_type.clone());
    }
    let accept = tool
        .route
        .accept
        .split(',')
        .next()?
        .split(';')
        .next()?
        .trim();
    (!accept.contains('*') && !tool.route.accept.contains(',')).then(|| accept.to_string())
}

fn argument_names(tool: &Tool) -> Vec<String> {
    tool.route
        .arguments
        .bindings
        .iter()
        .filter(|b| matches!(b.location, Location::Path | Location::Query) && b.fixed.is_none())
        .map(|b| b.argument.clone())
        .collect()
}

/// `arguments` with each text given for an argument whose schema wants a number, a
/// boolean or an array read as one (a URI's variables and a prompt's arguments are
/// texts); anything else as it is, for validation to judge.
pub fn typed_arguments(tool: &Tool, arguments: Map<String, Value>) -> Map<String, Value> {
    let input = tool.input_schema.to_value();
    let properties = input.get("properties").and_then(Value::as_object);
    arguments
        .into_iter()
        .map(|(name, value)| {
            let kind = properties
                .and_then(|p| p.get(&name))
                .map_or(ValueKind::String, ValueKind::of);
            let value = match value {
                Value::String(text) if kind != ValueKind::String => kind.value(&text),
                value => value,
            };
            (name, value)
        })
        .collect()
}
