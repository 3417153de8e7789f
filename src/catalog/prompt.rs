//! Prompts, and the checks that tie the MCP surface besides tools to the tools: a prompt
//! comes from `[prompts.NAME]` in the config, a restmcp overlay's `prompts:`, or a spec's
//! `x-mcp-prompts` (data from elsewhere: its messages and completions may only use its own
//! API's tools). Every `{{argument}}` a message names must be declared, every tool a
//! message or completion calls must exist and only read (prompts and completions never
//! change anything upstream), and no two resources may share a URI.
//!
//! This module owns [`Prompt`] (a checked [`PromptSettings`]), [`gather`] (every source's
//! prompts, checked against the built catalog) and [`placeholders`] / [`fill`] (the
//! `{{name}}` substitution: plain text, nothing is executed).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::build::{ApiInput, CatalogError};
use super::naming::is_valid_tool_name;
use super::{Catalog, CompleteSource};
use crate::config::{PromptMessage, PromptSettings};

/// A spec's prompts: a map at the root of its description.
pub const SPEC_PROMPTS: &str = "x-mcp-prompts";

/// The longest prompt name.
const MAX_PROMPT_NAME: usize = 128;

/// A checked prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prompt {
    pub name: String,
    #[serde(flatten)]
    pub settings: PromptSettings,
    /// Where it was written (`config prompts.triage`, `specs/p.overlay.yaml#/prompts/x`).
    pub location: String,
}

impl Prompt {
    pub fn argument(&self, name: &str) -> Option<&crate::config::PromptArgument> {
        self.settings.arguments.iter().find(|a| a.name == name)
    }
}

/// The `{{name}}` placeholders of `text`, in order.
pub fn placeholders(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let open = rest.find("{{")?;
        let close = rest[open..].find("}}")?;
        let name = rest[open + 2..open + close].trim();
        rest = &rest[open + close + 2..];
        Some(name)
    })
}

/// `text` with each `{{name}}` replaced by `value(name)` (left as written when it has
/// none). One pass: a value holding `{{…}}` is not filled again.
pub fn fill(text: &str, value: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        let whole = &rest[open..open + close + 2];
        match value(whole[2..whole.len() - 2].trim()) {
            Some(v) => out.push_str(&v),
            None => out.push_str(whole),
        }
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    out
}

/// Every prompt of the configuration (`config`), the APIs' overlays and their specs,
/// checked against `catalog`; and the catalog's resources checked too.
pub fn gather(
    config: &BTreeMap<String, PromptSettings>,
    apis: &[ApiInput<'_>],
    catalog: &Catalog,
) -> Result<Vec<Prompt>, CatalogError> {
    check_resources(catalog)?;
    let mut prompts: Vec<Prompt> = Vec::new();
    let mut add = |prompt: Prompt, api: Option<&str>| -> Result<(), CatalogError> {
        check(&prompt, api, catalog)?;
        if let Some(first) = prompts.iter().find(|p| p.name == prompt.name) {
            return Err(surface_error(
                &prompt.location,
                format!(
                    "prompt \"{}\" is also defined at {}",
                    prompt.name, first.location
                ),
            ));
        }
        prompts.push(prompt);
        Ok(())
    };
    for (name, settings) in config {
        let location = format!("config prompts.{name}");
        add(prompt(name, settings, location), None)?;
    }
    for input in apis {
        for (file, overlay) in input.overlays {
            for (name, settings) in &overlay.prompts.0 {
                let location = format!("{file}#/prompts/{}", crate::json::escape_token(name));
                let own_api = overlay.unlisted.then_some(input.name);
                add(prompt(name, settings, location), own_api)?;
            }
        }
        let Some(docs) = input.docs else { continue };
        let root = docs.root();
        let Some(listed) = root.root.get(SPEC_PROMPTS) else {
            continue;
        };
        let location = format!("{}#/{SPEC_PROMPTS}", root.name);
        let Value::Object(listed) = listed else {
            return Err(surface_error(
                &location,
                "must be a map of prompts by name".into(),
            ));
        };
        for (name, value) in listed {
            let location = format!("{location}/{}", crate::json::escape_token(name));
            let settings = PromptSettings::deserialize(value)
                .map_err(|e| surface_error(&location, e.to_string()))?;
            add(prompt(name, &settings, location), Some(input.name))?;
        }
    }
    Ok(prompts)
}

use serde::Deserialize as _;

fn prompt(name: &str, settings: &PromptSettings, location: String) -> Prompt {
    Prompt {
        name: name.to_string(),
        settings: settings.clone(),
        location,
    }
}

fn surface_error(location: &str, problem: String) -> CatalogError {
    CatalogError::Surface {
        location: location.to_string(),
        problem,
    }
}

/// Checks one prompt: its name, its arguments, each message, and the tools it calls
/// (only tools of `api` when it came from that API's spec).
fn check(prompt: &Prompt, api: Option<&str>, catalog: &Catalog) -> Result<(), CatalogError> {
    let at = |path: &str| format!("{}{path}", prompt.location);
    if !is_valid_tool_name(&prompt.name, MAX_PROMPT_NAME) {
        return Err(surface_error(
            &prompt.location,
            format!(
                "\"{}\" is not a valid prompt name: use A-Z, a-z, 0-9, _ and -, at most \
                 {MAX_PROMPT_NAME} characters",
                prompt.name
            ),
        ));
    }
    let arguments = &prompt.settings.arguments;
    for (i, argument) in arguments.iter().enumerate() {
        if arguments[..i].iter().any(|a| a.name == argument.name) {
            return Err(surface_error(
                &at(&format!("/arguments/{i}")),
                format!("argument \"{}\" is declared twice", argument.name),
            ));
        }
        if let Some(source) = &argument.complete {
            check_source(
                source,
                api,
                catalog,
                &at(&format!("/arguments/{i}/complete")),
            )?;
        }
    }
    if prompt.settings.messages.is_empty() {
        return Err(surface_error(
            &at("/messages"),
            "a prompt needs at least one message".into(),
        ));
    }
    let declared = |name: &str| arguments.iter().any(|a| a.name == name);
    for (i, message) in prompt.settings.messages.iter().enumerate() {
        let location = at(&format!("/messages/{i}"));
        for name in message_texts(message).iter().flat_map(|t| placeholders(t)) {
            if !declared(name) {
                return Err(surface_error(
                    &location,
                    format!("{{{{{name}}}}} names no argument of the prompt"),
                ));
            }
        }
        let kinds = [
            message.text.is_some(),
            message.resource.is_some(),
            message.operation.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(surface_error(
                &location,
                "a message has exactly one of `text`, `resource` and `operation`".into(),
            ));
        }
        if let Some(operation) = &message.operation {
            check_tool(
                &operation.tool,
                api,
                catalog,
                &format!("{location}/operation"),
            )?;
        }
    }
    Ok(())
}

/// The texts of a message that may hold `{{argument}}`.
fn message_texts(message: &PromptMessage) -> Vec<&str> {
    let mut texts: Vec<&str> = message.text.iter().map(String::as_str).collect();
    texts.extend(message.resource.as_deref());
    if let Some(operation) = &message.operation {
        texts.extend(operation.arguments.values().filter_map(Value::as_str));
    }
    texts
}

fn check_source(
    source: &CompleteSource,
    api: Option<&str>,
    catalog: &Catalog,
    location: &str,
) -> Result<(), CatalogError> {
    check_tool(&source.tool, api, catalog, location)?;
    if !(source.values.is_empty() || source.values.starts_with('/')) {
        return Err(surface_error(
            &format!("{location}/values"),
            format!(
                "\"{}\" is not a JSON pointer (it starts with '/', and '*' stands for every item)",
                source.values
            ),
        ));
    }
    Ok(())
}

/// A tool a prompt or completion calls: it exists, only reads, and (for a spec's own
/// prompts) belongs to that API.
fn check_tool(
    name: &str,
    api: Option<&str>,
    catalog: &Catalog,
    location: &str,
) -> Result<(), CatalogError> {
    let Some(tool) = catalog.get(name) else {
        return Err(surface_error(
            location,
            format!("no tool is named \"{name}\""),
        ));
    };
    if !tool.route.method.is_safe() {
        return Err(surface_error(
            location,
            format!(
                "tool \"{name}\" is {} {}: prompts and completions only call tools that read",
                tool.route.method, tool.route.path
            ),
        ));
    }
    if let Some(api) = api
        && tool.route.api != api
    {
        return Err(surface_error(
            location,
            format!(
                "tool \"{name}\" belongs to API \"{}\"; a spec's prompts may only use its own \
                 API's tools",
                tool.route.api
            ),
        ));
    }
    Ok(())
}

/// The resources: no two share a URI, and their completion sources call tools that read.
fn check_resources(catalog: &Catalog) -> Result<(), CatalogError> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for tool in catalog.tools() {
        let Some(resource) = &tool.resource else {
            continue;
        };
        let uri = resource.uri.as_str();
        if let Some(first) = seen.insert(uri, &resource.location) {
            return Err(surface_error(
                &resource.location,
                format!("resource URI \"{uri}\" is also declared at {first}"),
            ));
        }
        let own = from_spec(&tool.provenance).then_some(tool.route.api.as_str());
        for variable in &resource.variables {
            if let Some(source) = &variable.complete {
                let location = format!("{}/complete/{}", resource.location, variable.name);
                check_source(source, own, catalog, &location)?;
            }
        }
    }
    Ok(())
}

/// Whether the tool's resource came from data from elsewhere (a spec's `x-mcp`, an
/// unlisted overlay).
fn from_spec(provenance: &[(String, String)]) -> bool {
    provenance.iter().any(|(what, from)| {
        what == "resource"
            && (from.starts_with(super::patch::SPEC_EXTENSION)
                || from.starts_with(super::patch::UNLISTED_OVERLAY))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_once_and_unknown_ones_kept() {
        let text = "Pet {{ id }} of {{owner}}: {{missing}} {{";
        assert_eq!(
            placeholders(text).collect::<Vec<_>>(),
            ["id", "owner", "missing"]
        );
        let filled = fill(text, &|name| match name {
            "id" => Some("{{owner}}".into()),
            "owner" => Some("ann".into()),
            _ => None,
        });
        assert_eq!(filled, "Pet {{owner}} of ann: {{missing}} {{");
    }
}
