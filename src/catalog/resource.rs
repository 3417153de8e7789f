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
//! This module owns the patch's format ([`ResourcePatch`]) and what the catalog keeps
//! ([`Resource`], its [`Variable`]s and their [`CompleteSource`]); `served.rs` checks a
//! patch against its tool. Reading one is the MCP layer's: it runs the tool.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    pub(super) fn of(schema: &Value) -> ValueKind {
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
    /// The index of the binding it fills in the tool's argument map (an overlay applied
    /// later may rename the argument; the binding stays).
    pub binding: usize,
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
    /// The arguments of this resource's tool (whose argument map holds `bindings`) for
    /// the variables' values a URI gave, under the arguments' current names.
    pub fn arguments(
        &self,
        bindings: &[super::Binding],
        values: Vec<(String, String)>,
    ) -> Map<String, Value> {
        values
            .into_iter()
            .filter_map(|(name, text)| {
                let variable = self.variables.iter().find(|v| v.name == name)?;
                let argument = bindings.get(variable.binding)?.argument.clone();
                Some((argument, variable.kind.value(&text)))
            })
            .collect()
    }

    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
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
