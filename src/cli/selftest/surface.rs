//! Resources and prompts in a selftest: every resource read, every template read at a URI
//! made from values its variables can take, every prompt got with its required arguments
//! filled, on each transport, after the tool calls.
//!
//! A variable's value is the first its parameter's schema lists (`enum`, else `examples`),
//! else one generated from the parameter's schema. A prompt argument's is the first of its
//! `enum`, else the first completion the server offers for it (so completions are tried
//! too), else a value made for what the argument fills: a template variable of a resource
//! message, or an argument of an operation message's tool. A read passes when it is in
//! its transport's listing and gives contents; a prompt when it is listed and gives
//! messages.

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::{CompletionContext, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::ServiceError;
use serde_json::{Map, Value, json};

use super::calls::Clients;
use super::reason::truncate;
use super::report::{Kind, SurfaceReport, Verdict};
use super::transports::{Client, Transport};
use crate::catalog::resource::as_text;
use crate::catalog::{Catalog, Prompt, Resource, Tool, Variable};

/// What to ask of each transport for one row.
pub(super) enum Probe {
    /// `resources/read` of this URI.
    Read(String),
    /// `prompts/get` with `given`, and each argument of `ask` completed first (its value
    /// made beforehand, when there is one, if the completion offers none).
    Prompt {
        given: Map<String, Value>,
        ask: Vec<(String, Option<String>)>,
    },
    /// Nothing can be asked (no value for a variable, say): skipped, with why.
    Cannot(String),
}

/// The rows and their probes, from the catalog both servers serve.
pub(super) fn plan(catalog: &Catalog) -> Vec<(SurfaceReport, Probe)> {
    let mut planned = Vec::new();
    for (tool, resource) in catalog.resources() {
        let template = resource.uri.is_template();
        let probe = match template {
            false => Probe::Read(resource.uri.as_str().to_string()),
            true => match expand(tool, resource) {
                Ok(uri) => Probe::Read(uri),
                Err(why) => Probe::Cannot(why),
            },
        };
        let kind = if template {
            Kind::Template
        } else {
            Kind::Resource
        };
        planned.push((row(kind, resource.uri.as_str(), &probe), probe));
    }
    for prompt in catalog.prompts() {
        let probe = prompt_probe(prompt, catalog);
        planned.push((row(Kind::Prompt, &prompt.name, &probe), probe));
    }
    planned
}

fn row(kind: Kind, name: &str, probe: &Probe) -> SurfaceReport {
    let asked = match probe {
        Probe::Read(uri) if kind == Kind::Template => Some(uri.clone()),
        Probe::Prompt { given, ask } if !given.is_empty() || !ask.is_empty() => {
            let mut names: Vec<String> = given
                .iter()
                .map(|(k, v)| format!("{k}={}", as_text(v).unwrap_or_default()))
                .collect();
            names.extend(ask.iter().map(|(k, _)| format!("{k}=(completed)")));
            Some(names.join(" "))
        }
        _ => None,
    };
    let outcome = match probe {
        Probe::Cannot(why) => Verdict::Skipped(why.clone()),
        _ => Verdict::Ok,
    };
    SurfaceReport {
        kind,
        name: name.to_string(),
        asked,
        http: outcome.clone(),
        stdio: outcome,
    }
}

/// The template's URI with a value for every variable, or why one could not be made.
fn expand(tool: &Tool, resource: &Resource) -> Result<String, String> {
    let mut values = HashMap::new();
    for variable in &resource.variables {
        let value = variable_value(tool, variable)
            .ok_or_else(|| format!("no value could be made for {{{}}}", variable.name))?;
        values.insert(variable.name.as_str(), value);
    }
    Ok(resource.uri.expand(&|name| values.get(name).cloned()))
}

/// The first value the variable's schema lists, else one generated from its schema.
fn variable_value(tool: &Tool, variable: &Variable) -> Option<String> {
    if let Some(first) = variable.choices.first() {
        return Some(first.clone());
    }
    argument_value(tool, &variable.name)
}

/// A value of tool argument `name` as text, generated from its schema (an array's items
/// joined by commas).
fn argument_value(tool: &Tool, name: &str) -> Option<String> {
    let input = tool.full_input_schema();
    let schema = input.get("properties")?.get(name)?;
    match crate::schema::example::example(schema)? {
        Value::Array(items) => {
            let texts: Vec<String> = items.iter().filter_map(as_text).collect();
            Some(texts.join(","))
        }
        value => as_text(&value),
    }
}

/// A prompt's required arguments: from their `enum`; those with a completion source are
/// asked of the server, the others made for what they fill.
fn prompt_probe(prompt: &Prompt, catalog: &Catalog) -> Probe {
    let mut given = Map::new();
    let mut ask = Vec::new();
    for argument in prompt.settings.arguments.iter().filter(|a| a.required) {
        let made = argument
            .choices
            .first()
            .cloned()
            .or_else(|| filled_value(prompt, &argument.name, catalog));
        match (&argument.complete, argument.choices.is_empty()) {
            (Some(_), true) => ask.push((argument.name.clone(), made)),
            _ => match made {
                Some(value) => {
                    given.insert(argument.name.clone(), Value::String(value));
                }
                None => {
                    return Probe::Cannot(format!(
                        "no value could be made for argument \"{}\"",
                        argument.name
                    ));
                }
            },
        }
    }
    Probe::Prompt { given, ask }
}

/// Marks an argument in a resource message's URI, to find the variable it fills.
const MARKER: &str = "restmcpselftestmarker";

/// A value for prompt argument `name` made for what it fills in the prompt's messages: a
/// variable of the template a resource message's URI matches, or an argument of an
/// operation message's tool given exactly as `{{name}}`.
fn filled_value(prompt: &Prompt, name: &str, catalog: &Catalog) -> Option<String> {
    let marked = |other: &str| Some(if other == name { MARKER } else { "x" }.to_string());
    for message in &prompt.settings.messages {
        if let Some(uri) = &message.resource {
            let uri = crate::catalog::prompt::fill(uri, &marked);
            for (tool, resource) in catalog.resources() {
                let Some(values) = resource.uri.match_uri(&uri) else {
                    continue;
                };
                let variable = values
                    .iter()
                    .find(|(_, value)| value == MARKER)
                    .and_then(|(variable, _)| resource.variable(variable));
                if let Some(value) = variable.and_then(|v| variable_value(tool, v)) {
                    return Some(value);
                }
            }
        }
        if let Some(operation) = &message.operation {
            let placeholder = format!("{{{{{name}}}}}");
            let fed = operation
                .arguments
                .iter()
                .find(|(_, value)| value.as_str().map(str::trim) == Some(placeholder.as_str()));
            if let (Some((argument, _)), Some(tool)) = (fed, catalog.get(&operation.tool))
                && let Some(value) = argument_value(tool, argument)
            {
                return Some(value);
            }
        }
    }
    None
}

/// What each transport lists, to check every row is there.
struct Listed {
    resources: Result<Vec<String>, String>,
    templates: Result<Vec<String>, String>,
    prompts: Result<Vec<String>, String>,
}

impl Listed {
    async fn of(client: &Client) -> Listed {
        let said = |e: ServiceError| truncate(&e.to_string());
        Listed {
            resources: client
                .list_all_resources()
                .await
                .map(|all| all.into_iter().map(|r| r.uri).collect())
                .map_err(said),
            templates: client
                .list_all_resource_templates()
                .await
                .map(|all| all.into_iter().map(|t| t.uri_template).collect())
                .map_err(said),
            prompts: client
                .list_all_prompts()
                .await
                .map(|all| all.into_iter().map(|p| p.name).collect())
                .map_err(said),
        }
    }

    /// Why the row is not in the listing, if it is not.
    fn missing(&self, report: &SurfaceReport, transport: Transport) -> Option<Verdict> {
        let (listing, method) = match report.kind {
            Kind::Resource => (&self.resources, "resources/list"),
            Kind::Template => (&self.templates, "resources/templates/list"),
            Kind::Prompt => (&self.prompts, "prompts/list"),
        };
        match listing {
            Err(error) => Some(Verdict::Failed(format!(
                "{method} over {transport} failed: {error}"
            ))),
            Ok(names) if !names.contains(&report.name) => {
                Some(Verdict::Failed(format!("not in {method} over {transport}")))
            }
            Ok(_) => None,
        }
    }
}

/// Asks every probe of each transport (one at a time per transport, both transports at
/// once) and records the outcomes.
pub(super) async fn probe_all(
    clients: &Clients<'_>,
    planned: Vec<(SurfaceReport, Probe)>,
    timeout: Duration,
) -> Vec<SurfaceReport> {
    let (mut reports, probes): (Vec<SurfaceReport>, Vec<Probe>) = planned.into_iter().unzip();
    if reports.is_empty() {
        return reports;
    }
    let (http, stdio) = tokio::join!(
        probe_leg(Transport::Http, clients.http, &reports, &probes, timeout),
        probe_leg(Transport::Stdio, clients.stdio, &reports, &probes, timeout)
    );
    for (transport, outcomes) in [(Transport::Http, http), (Transport::Stdio, stdio)] {
        for (row, outcome) in outcomes {
            *reports[row].outcome_mut(transport) = outcome;
        }
    }
    reports
}

/// Each row's outcome over one transport (none when it is not called), its listing
/// checked first.
async fn probe_leg(
    transport: Transport,
    client: Option<&Client>,
    reports: &[SurfaceReport],
    probes: &[Probe],
    timeout: Duration,
) -> Vec<(usize, Verdict)> {
    let Some(client) = client else {
        return Vec::new();
    };
    let listed = Listed::of(client).await;
    let mut outcomes = Vec::new();
    for (row, (report, probe)) in reports.iter().zip(probes).enumerate() {
        if let Some(missing) = listed.missing(report, transport) {
            outcomes.push((row, missing));
            continue;
        }
        let outcome = match probe {
            Probe::Cannot(_) => continue,
            Probe::Read(uri) => read(client, uri, timeout).await,
            Probe::Prompt { given, ask } => {
                get_prompt(client, &report.name, given, ask, timeout).await
            }
        };
        outcomes.push((row, outcome));
    }
    outcomes
}

/// The reason of a request that did not succeed: its error, or no answer in time (`None`).
fn failure(method: &str, error: Option<ServiceError>, timeout: Duration) -> Verdict {
    Verdict::Failed(match error {
        Some(ServiceError::McpError(error)) => truncate(&format!(
            "{method}: JSON-RPC error {}: {}",
            error.code.0, error.message
        )),
        Some(error) => truncate(&format!("{method} failed: {error}")),
        None => format!("{method}: no answer within {} s", timeout.as_secs()),
    })
}

async fn read(client: &Client, uri: &str, timeout: Duration) -> Verdict {
    let request = client.read_resource(ReadResourceRequestParams::new(uri));
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(result)) if result.contents.is_empty() => {
            Verdict::Failed("resources/read gave no contents".into())
        }
        Ok(Ok(_)) => Verdict::Ok,
        Ok(Err(error)) => failure("resources/read", Some(error), timeout),
        Err(_) => failure("resources/read", None, timeout),
    }
}

async fn get_prompt(
    client: &Client,
    name: &str,
    given: &Map<String, Value>,
    ask: &[(String, Option<String>)],
    timeout: Duration,
) -> Verdict {
    let mut arguments = given.clone();
    for (argument, made) in ask {
        let context: HashMap<String, String> = arguments
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), as_text(v)?)))
            .collect();
        let request = client.complete_prompt_argument(
            name,
            argument,
            "",
            Some(CompletionContext::with_arguments(context)),
        );
        let offered = match tokio::time::timeout(timeout, request).await {
            Ok(Ok(completion)) => completion.values.into_iter().next(),
            Ok(Err(error)) => return failure("completion/complete", Some(error), timeout),
            Err(_) => return failure("completion/complete", None, timeout),
        };
        let Some(value) = offered.or_else(|| made.clone()) else {
            return Verdict::Skipped(format!(
                "completion/complete offered no value for argument \"{argument}\", and none \
                 could be made"
            ));
        };
        arguments.insert(argument.clone(), json!(value));
    }
    let request = client.get_prompt(GetPromptRequestParams::new(name).with_arguments(arguments));
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(result)) if result.messages.is_empty() => {
            Verdict::Failed("prompts/get gave no messages".into())
        }
        Ok(Ok(_)) => Verdict::Ok,
        Ok(Err(error)) => failure("prompts/get", Some(error), timeout),
        Err(_) => failure("prompts/get", None, timeout),
    }
}
