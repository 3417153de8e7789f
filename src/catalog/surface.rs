//! The MCP surface besides tools in words: `restmcp check`'s section of resources,
//! templates and prompts ([`surface`]), the resource lines of an explained tool
//! ([`super::explain`]), and where each completion comes from
//! ([`completions_of_variable`], [`completions_of_argument`]).

use serde_json::Value;

use super::report::{ArgumentEntry, PromptEntry, ResourceEntry, Surface, VariableEntry};
use super::{Catalog, CompleteSource, Location, Prompt, Resource, Tool, Variable};
use crate::config::PromptArgument;

/// Most listed values named in a completion source.
const MAX_NAMED_VALUES: usize = 5;

/// The catalog's resources, templates and prompts, for `restmcp check`.
pub fn surface(catalog: &Catalog) -> Surface {
    Surface {
        resources: catalog
            .resources()
            .map(|(tool, resource)| resource_entry(tool, resource))
            .collect(),
        prompts: catalog.prompts().iter().map(prompt_entry).collect(),
    }
}

fn resource_entry(tool: &Tool, resource: &Resource) -> ResourceEntry {
    ResourceEntry {
        uri: resource.uri.as_str().to_string(),
        template: resource.uri.is_template(),
        name: resource.name.clone(),
        tool: tool.name.clone(),
        mime_type: resource.mime_type.clone(),
        location: resource.location.clone(),
        variables: resource
            .variables
            .iter()
            .map(|variable| VariableEntry {
                name: variable.name.clone(),
                place: place(tool, &variable.name).to_string(),
                completions: completions_of_variable(variable),
            })
            .collect(),
    }
}

fn prompt_entry(prompt: &Prompt) -> PromptEntry {
    PromptEntry {
        name: prompt.name.clone(),
        location: prompt.location.clone(),
        arguments: prompt
            .settings
            .arguments
            .iter()
            .map(|argument| ArgumentEntry {
                name: argument.name.clone(),
                required: argument.required,
                completions: completions_of_argument(argument),
            })
            .collect(),
        messages: prompt
            .settings
            .messages
            .iter()
            .map(|message| {
                if let Some(uri) = &message.resource {
                    format!("resource {uri}")
                } else if let Some(operation) = &message.operation {
                    format!("operation {}", operation.tool)
                } else {
                    "text".to_string()
                }
            })
            .collect(),
    }
}

/// Where the variable `name` of `tool`'s resource goes: `path` or `query`.
pub fn place(tool: &Tool, name: &str) -> &'static str {
    match tool.route.arguments.get(name).map(|b| b.location) {
        Some(Location::Path) => "path",
        _ => "query",
    }
}

/// Where a template variable's completions come from: its configured list tool, else the
/// values its parameter's schema lists (`enum`, else `examples`), else none.
pub fn completions_of_variable(variable: &Variable) -> String {
    match &variable.complete {
        Some(source) => from_tool(source),
        None if !variable.choices.is_empty() => format!(
            "the parameter's enum or examples ({})",
            named(&variable.choices)
        ),
        None => "none".into(),
    }
}

/// Where a prompt argument's completions come from: its list tool, else its `enum`, else
/// none.
pub fn completions_of_argument(argument: &PromptArgument) -> String {
    match &argument.complete {
        Some(source) => from_tool(source),
        None if !argument.choices.is_empty() => format!("enum ({})", named(&argument.choices)),
        None => "none".into(),
    }
}

/// `tool findPetsByStatus at /*/id, with status=available`.
fn from_tool(source: &CompleteSource) -> String {
    let mut said = format!(
        "tool {} at {}",
        source.tool,
        if source.values.is_empty() {
            "its whole result"
        } else {
            &source.values
        }
    );
    if !source.arguments.is_empty() {
        let arguments: Vec<String> = source
            .arguments
            .iter()
            .map(|(name, value)| match value {
                Value::String(text) => format!("{name}={text}"),
                other => format!("{name}={other}"),
            })
            .collect();
        said.push_str(&format!(", with {}", arguments.join(" ")));
    }
    said
}

/// The first few values, `…` when there are more.
fn named(values: &[String]) -> String {
    let mut shown: Vec<&str> = values
        .iter()
        .take(MAX_NAMED_VALUES)
        .map(String::as_str)
        .collect();
    if values.len() > MAX_NAMED_VALUES {
        shown.push("…");
    }
    shown.join(", ")
}
