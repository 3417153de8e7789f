//! Resources: a GET operation the operator marks `resource: {uri: …}` (in an overlay, a
//! spec's `x-mcp`, or a hand-written tool) is served as an MCP resource as well as a tool.
//! A URI without variables is a resource; one with RFC 6570 variables
//! ([`super::uri_template`]) is a resource template, each variable one of the tool's path
//! or query arguments by name.
//!
//! ```yaml
//! tools:
//!   getPetById:
//!     resource:
//!       uri: petstore://pets/{petId}
//!       complete: {petId: {tool: findPetsByStatus, values: /*/id, arguments: {status: available}}}
//! ```
//!
//! This module owns the patch's format ([`ResourcePatch`]), checking it against the tool
//! (a GET; every variable a path or query argument; no required argument left unbound)
//! and what the catalog keeps ([`Resource`], its [`Variable`]s and their
//! [`CompleteSource`]). Reading one is the MCP layer's: it runs the tool.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Location;
use super::Tool;
use super::patch::{PatchError, PatchSource};
use super::uri_template::UriTemplate;

/// `resource:` of a tool patch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourcePatch {
    /// The resource's URI, or an RFC 6570 template whose variables are argument names.
    pub uri: String,
    /// The resource's name (default: the tool's name).
    pub name: Option<String>,
    pub title: Option<String>,
    /// Default: the tool's description.
    pub description: Option<String>,
    /// Default: the media type the operation documents for its answer.
    pub mime_type: Option<String>,
    /// Where a variable's completions come from, when not from its schema's `enum`.
    #[serde(default)]
    pub complete: BTreeMap<String, CompleteSource>,
}

pub use crate::config::CompleteSource;

/// What JSON type a variable's text becomes, from its argument's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    String,
    Integer,
    Number,
    Boolean,
    /// An array of strings, from a comma-separated text.
    Array,
}

impl ValueKind {
    fn of(schema: &Value) -> ValueKind {
        let kind = schema.get("type").and_then(|t| match t {
            Value::Array(types) => types.iter().find(|t| *t != "null"),
            t => Some(t),
        });
        match kind.and_then(Value::as_str) {
            Some("integer") => ValueKind::Integer,
            Some("number") => ValueKind::Number,
            Some("boolean") => ValueKind::Boolean,
            Some("array") => ValueKind::Array,
            _ => ValueKind::String,
        }
    }

    /// The argument value a variable's `text` gives (the text itself when it is not one of
    /// the kind: validation then says what is wrong).
    pub fn value(self, text: &str) -> Value {
        let parsed = match self {
            ValueKind::String => None,
            ValueKind::Integer => text.parse::<i64>().ok().map(Value::from),
            ValueKind::Number => text.parse::<f64>().ok().map(Value::from),
            ValueKind::Boolean => text.parse::<bool>().ok().map(Value::from),
            ValueKind::Array => Some(Value::Array(
                text.split(',')
                    .map(|s| Value::from(s.to_string()))
                    .collect(),
            )),
        };
        parsed.unwrap_or_else(|| Value::from(text.to_string()))
    }
}

/// One variable of a resource template: the argument it fills.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variable {
    pub name: String,
    pub kind: ValueKind,
    /// Values its schema lists (`enum`, else `examples`), offered as completions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<CompleteSource>,
}

/// A tool served as a resource too.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    #[serde(serialize_with = "template_text")]
    pub uri: UriTemplate,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    /// Where it was declared (`specs/p.overlay.yaml#/tools/getPet/resource`), for errors.
    pub location: String,
}

fn template_text<S: serde::Serializer>(uri: &UriTemplate, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(uri.as_str())
}

impl Resource {
    /// The tool's arguments for the variables' values a URI gave.
    pub fn arguments(&self, values: Vec<(String, String)>) -> Map<String, Value> {
        values
            .into_iter()
            .map(|(name, text)| {
                let kind = self
                    .variables
                    .iter()
                    .find(|v| v.name == name)
                    .map_or(ValueKind::String, |v| v.kind);
                (name, kind.value(&text))
            })
            .collect()
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
}

/// Makes `tool` a resource as `patch` says, or says why it cannot be one.
pub(super) fn apply(
    tool: &mut Tool,
    patch: &ResourcePatch,
    source: &PatchSource,
) -> Result<(), PatchError> {
    let at = |key: &str| source.at(&["resource", key]);
    if !tool.route.method.is_safe() {
        return Err(PatchError::new(
            source.at(&["resource"]),
            format!(
                "only a GET operation can be a resource; this tool is {} {}",
                tool.route.method, tool.route.path
            ),
        ));
    }
    let uri = UriTemplate::parse(&patch.uri).map_err(|e| PatchError::new(at("uri"), e.0))?;
    let input = tool.input_schema.to_value();
    let properties = input.get("properties").and_then(Value::as_object);
    let mut variables = Vec::new();
    for name in uri.variables() {
        let binding = tool.route.arguments.get(name);
        let bound = binding.is_some_and(|b| {
            matches!(b.location, Location::Path | Location::Query) && b.fixed.is_none()
        });
        let schema = properties.and_then(|p| p.get(name));
        let (true, Some(schema)) = (bound, schema) else {
            return Err(PatchError::new(
                at("uri"),
                format!(
                    "variable \"{name}\" is not a path or query argument of tool \"{}\" (it has: {})",
                    tool.name,
                    argument_names(tool).join(", ")
                ),
            ));
        };
        variables.push(Variable {
            name: name.to_string(),
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
        return Err(PatchError::new(
            source.at(&["resource", "complete", unknown]),
            format!("\"{unknown}\" is not a variable of the URI template"),
        ));
    }
    let required = input.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !uri.variables().any(|v| v == name) {
            return Err(PatchError::new(
                at("uri"),
                format!(
                    "required argument \"{name}\" of tool \"{}\" is not a variable of the URI; \
                     a read could not give it (add {{{name}}}, or {{?{name}}} for a query \
                     parameter)",
                    tool.name
                ),
            ));
        }
    }
    tool.resource = Some(std::sync::Arc::new(Resource {
        name: patch.name.clone().unwrap_or_else(|| tool.name.clone()),
        title: patch.title.clone().or_else(|| tool.title.clone()),
        description: patch
            .description
            .clone()
            .unwrap_or_else(|| tool.description.clone()),
        mime_type: patch.mime_type.clone().or_else(|| documented_type(tool)),
        uri,
        variables,
        location: source.at(&["resource"]),
    }));
    tool.note("resource", source.describe(&["resource"]));
    Ok(())
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

/// The values a schema lists: its `enum` (or its items' for an array), else its
/// `examples`, as texts.
pub fn choices(schema: &Value) -> Vec<String> {
    let listed = |schema: &Value, key: &str| {
        schema
            .get(key)
            .and_then(Value::as_array)
            .map(|values| values.iter().filter_map(as_text).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut values = listed(schema, "enum");
    if values.is_empty()
        && let Some(items) = schema.get("items")
    {
        values = listed(items, "enum");
    }
    if values.is_empty() {
        values = listed(schema, "examples");
    }
    values
}

/// A scalar as the text a URI or a completion carries.
pub fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
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
