//! A tool explained: how clients see it and where each piece came from.
//!
//! A tool is the spec's operation, reshaped by `x-mcp`, overlays and the config. When it
//! does not look as expected, the question is always "which of those did this?"; the
//! catalog records the answer as the tool's provenance and this module sets it next to
//! the defaults that apply where nothing intervened: [`render`] as text (what `restmcp
//! explain` prints and the console shows), [`json`] as data (`restmcp explain --json`).

use std::fmt::Write as _;

use serde_json::Value;

use super::{Binding, Catalog, Listing, Location, MockSource, Tool, ToolLimit};
use crate::config::{ApiConfig, DiscoveryMode};

/// Each piece something other than plain synthesis set, and where it came from.
pub fn provenance(tool: &Tool) -> serde_json::Map<String, Value> {
    tool.provenance
        .iter()
        .map(|(what, source)| (what.clone(), Value::from(source.as_str())))
        .collect()
}

/// The tool as clients list it, its OAuth scopes, route, origin and provenance, whether it
/// is listed and how its API is offered: `restmcp explain --json`.
pub fn json(catalog: &Catalog, tool: &Tool) -> Value {
    serde_json::json!({
        "tool": tool.to_mcp(),
        "scopes": catalog.required_scopes(tool),
        "route": tool.route,
        "origin": tool.origin,
        "provenance": provenance(tool),
        "resource": tool.resource,
        "workflow": tool.workflow.as_ref().map(|plan| super::workflow::explain::json(plan)),
        "listed": catalog.is_listed(tool),
        "discovery": catalog.listing(&tool.route.api).map(|listing| serde_json::json!({
            "mode": listing.discovery.as_str(),
            "auto": listing.chosen.map(|choice| choice.reason()),
        })),
    })
}

/// The human-readable explanation, section by section: the heading, what the model reads,
/// the call's policies, where requests go, the arguments, the resource it is served as
/// and the output.
/// `scopes` are the tool's OAuth scope alternatives ([`crate::catalog::Catalog::required_scopes`]).
/// `listing` is how the tool's API is offered ([`crate::catalog::Catalog::listing`]); `api`
/// its API's configuration, for the defaults that apply.
pub fn render(
    tool: &Tool,
    api: Option<&ApiConfig>,
    scopes: &[Vec<String>],
    listing: Option<&Listing>,
) -> String {
    let mut explanation = Explanation {
        tool,
        api,
        hand_written: source_of(tool, "tool"),
        out: String::new(),
    };
    explanation.heading();
    explanation.listed(listing);
    explanation.text_and_hints(scopes);
    if let Some(plan) = &tool.workflow {
        explanation
            .out
            .push_str(&super::workflow::explain::render(plan));
        explanation.output();
        return explanation.out;
    }
    explanation.policies();
    explanation.requests();
    explanation.arguments();
    explanation.resource();
    explanation.output();
    explanation.out
}

/// Where the tool's `what` came from, when something other than plain synthesis set it.
fn source_of(tool: &Tool, what: &str) -> Option<String> {
    tool.provenance
        .iter()
        .find(|(w, _)| w == what)
        .map(|(_, source)| source.clone())
}

/// One explanation being written: the tool, its API's settings and the text so far.
struct Explanation<'a> {
    tool: &'a Tool,
    api: Option<&'a ApiConfig>,
    /// Where a hand-written tool was written (`None` for a synthesized one).
    hand_written: Option<String>,
    out: String,
}

impl Explanation<'_> {
    /// See [`source_of`].
    fn source_of(&self, what: &str) -> Option<String> {
        source_of(self.tool, what)
    }

    /// The source of a piece nothing changed: the spec's `what`, or the `add` entry.
    fn spec_default(&self, what: &str) -> String {
        match &self.hand_written {
            Some(_) => "as written".to_string(),
            None => format!("spec ({what})"),
        }
    }

    /// One labelled value, and under it where it came from.
    fn line(&mut self, label: &str, value: String, source: String) {
        let _ = writeln!(self.out, "  {label:<12} {value}");
        let _ = writeln!(self.out, "  {:<12}   ← {source}", "");
    }

    /// The tool's name, API and operation; where it is defined.
    fn heading(&mut self) {
        let tool = self.tool;
        let _ = writeln!(
            self.out,
            "{} — API \"{}\", {}",
            tool.name, tool.route.api, tool.origin.operation
        );
        let _ = writeln!(self.out, "  defined at   {}", tool.origin.location);
        if let Some(id) = &tool.origin.operation_id {
            let _ = writeln!(self.out, "  operationId  {id}");
        }
        if let Some(source) = &self.hand_written {
            let _ = writeln!(self.out, "  origin       {source}");
        }
    }

    /// Whether `tools/list` shows the tool or the model finds it through the discovery
    /// tools, and what settled that: `discovery = "auto"` with its count, the configured
    /// mode, or `pinned`.
    fn listed(&mut self, listing: Option<&Listing>) {
        let api = &self.tool.route.api;
        let Some(listing) = listing else {
            return;
        };
        let pinned = listing.pinned.contains(&self.tool.name);
        let value = match listing.discovery {
            DiscoveryMode::All => "yes, with every tool of its API".to_string(),
            _ if pinned => format!(
                "yes, pinned (the API's other tools: discovery \"{}\")",
                listing.discovery.as_str()
            ),
            DiscoveryMode::Search => {
                "no: found through search_tools, called through call_tool (or by name)".into()
            }
            _ => "no: found through list_operations and describe_operation, called through call_operation (or by name)".into(),
        };
        let source = match (
            &listing.chosen,
            pinned && listing.discovery != DiscoveryMode::All,
        ) {
            (_, true) => format!("config apis.{api}.pinned"),
            (Some(choice), false) => format!(
                "discovery \"auto\" (default) chose \"{}\": {}",
                listing.discovery.as_str(),
                choice.reason()
            ),
            (None, false) => format!("config apis.{api}.discovery"),
        };
        self.line("listed", value, source);
    }

    /// What the model reads: name, title, the description's first line, the annotations'
    /// hints, and the OAuth scopes a token needs.
    fn text_and_hints(&mut self, scopes: &[Vec<String>]) {
        let tool = self.tool;
        let name_source =
            self.source_of("name")
                .unwrap_or_else(|| match &tool.origin.operation_id {
                    _ if self.hand_written.is_some() => "the key of the `add` entry".into(),
                    Some(id) => format!("generated from operationId \"{id}\""),
                    None => format!("generated from {}", tool.origin.operation),
                });
        self.line("name", tool.name.clone(), name_source);
        let title_source = self
            .source_of("title")
            .unwrap_or_else(|| self.spec_default("summary"));
        self.line(
            "title",
            tool.title.clone().unwrap_or_else(|| "(none)".into()),
            title_source,
        );
        let first = tool.description.lines().next().unwrap_or("");
        let more = if tool.description.lines().count() > 1 {
            " …"
        } else {
            ""
        };
        let description_source = self
            .source_of("description")
            .unwrap_or_else(|| self.spec_default("summary and description"));
        self.line("description", format!("{first}{more}"), description_source);
        let a = &tool.annotations;
        let hints: Vec<&str> = [
            (a.read_only_hint, "readOnly"),
            (a.destructive_hint, "destructive"),
            (a.idempotent_hint, "idempotent"),
            (a.open_world_hint, "openWorld"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
        let annotations_source = self
            .source_of("annotations")
            .unwrap_or_else(|| format!("default for {}", tool.route.method));
        self.line(
            "annotations",
            if hints.is_empty() {
                "(no hints set)".into()
            } else {
                hints.join(", ")
            },
            annotations_source,
        );
        self.line(
            "scopes",
            if scopes.is_empty() {
                "(none: any OAuth token may call it)".into()
            } else {
                scopes
                    .iter()
                    .map(|alternative| alternative.join(" "))
                    .collect::<Vec<_>>()
                    .join("  or  ")
            },
            "the operation's security (OAuth 2.0 and OpenID Connect schemes); with [server.oauth] a token must grant one alternative".into(),
        );
    }

    /// How a call is run: its timeout, whether a human confirms it, its idempotency key,
    /// and whether it is followed as a long-running operation.
    fn policies(&mut self) {
        let tool = self.tool;
        let (timeout, timeout_source) = self.timeout();
        self.line("timeout", format!("{timeout} s"), timeout_source);
        let confirm_source = self.source_of("confirm").unwrap_or_else(|| {
            match self.api.and_then(|a| a.confirm.as_ref()) {
                Some(_) => format!("config apis.{}.confirm", tool.route.api),
                None => "default (no apis.NAME.confirm)".into(),
            }
        });
        self.line(
            "confirm",
            if tool.route.needs_confirmation() {
                "a human confirms each call before it is sent".into()
            } else {
                "no".into()
            },
            confirm_source,
        );
        if let Some(idempotency) = &tool.route.idempotency {
            let source = self
                .source_of("idempotency_key")
                .unwrap_or_else(|| "spec (the operation's header parameter)".into());
            self.line(
                "idempotency",
                format!(
                    "key sent in {} (argument {}; generated when not given)",
                    idempotency.header, idempotency.argument
                ),
                source,
            );
        }
        if let Some(final_state) = tool.route.long_running {
            let read = match final_state {
                crate::spec::FinalState::Default => "where the method puts it",
                crate::spec::FinalState::OriginalUri => "at the original URL",
                crate::spec::FinalState::Location => "at the first answer's Location",
                crate::spec::FinalState::StatusMonitor => "from the status monitor",
            };
            let source = self.source_of("long_running").unwrap_or_else(|| {
                "spec (x-ms-long-running-operation, or a documented 202 response)".into()
            });
            self.line(
                "long-running",
                format!(
                    "a 200, 201 or 202 naming a status monitor is followed; the result is read {read}"
                ),
                source,
            );
        }
    }

    /// The timeout in seconds and where it was set: the tool's own when it replaces the
    /// API's or lowers it, else the API's for this tool or for all its tools.
    fn timeout(&self) -> (f64, String) {
        let tool = self.tool;
        let (configured, configured_source) = match self.api {
            Some(api) => match api.tool_timeouts.get(&tool.name) {
                Some(t) => (
                    *t,
                    format!("config apis.{}.tool_timeouts.{}", tool.route.api, tool.name),
                ),
                None => (
                    api.timeout_seconds,
                    format!("config apis.{}.timeout_seconds", tool.route.api),
                ),
            },
            None => (30.0, "default".into()),
        };
        match tool.route.timeout {
            Some(ToolLimit::Replace(t)) => (
                t.as_secs_f64(),
                self.source_of("timeout").unwrap_or_default(),
            ),
            Some(ToolLimit::AtMost(t)) if t.as_secs_f64() < configured => (
                t.as_secs_f64(),
                self.source_of("timeout").unwrap_or_default(),
            ),
            _ => (configured, configured_source),
        }
    }

    /// Where requests go and what comes back: the upstream URL, `Accept`, the mock answer,
    /// the fields kept of a response and its size cap.
    fn requests(&mut self) {
        let tool = self.tool;
        let upstream_source = self.upstream_source();
        self.line(
            "upstream",
            format!(
                "{} {}{}{}",
                tool.route.method,
                tool.route.base_url.as_deref().unwrap_or("(no base URL)"),
                tool.route.path,
                fixed_query(tool)
            ),
            upstream_source,
        );
        let accept_source = self
            .source_of("accept")
            .unwrap_or_else(|| match &self.hand_written {
                Some(_) => "default (application/json with an output_schema, else */*)".into(),
                None if tool.route.accept == "*/*" => {
                    "default (the spec documents no response media type)".into()
                }
                None => "spec (the 2xx and default responses' media types, JSON first)".into(),
            });
        self.line("accept", tool.route.accept.clone(), accept_source);
        if let Some(answer) = &tool.route.mock {
            self.line(
                "mock answer",
                format!(
                    "{} {}, {} bytes",
                    answer.status,
                    answer.media_type.as_deref().unwrap_or("(no body)"),
                    answer.body.len()
                ),
                match answer.source {
                    MockSource::Example => "the spec's example".to_string(),
                    MockSource::Generated => "generated from the response schema".to_string(),
                    MockSource::Empty => "no response body documented".to_string(),
                },
            );
        }
        if !tool.route.response_fields.is_empty() {
            let source = self.source_of("response.fields").unwrap_or_default();
            self.line(
                "response",
                format!("only {}", tool.route.response_fields.join(", ")),
                source,
            );
        }
        if let Some(limit) = tool.route.max_response_bytes {
            let cap = limit.over(self.api.map_or(u64::MAX, |api| api.max_response_bytes));
            let source = self.source_of("response.max_bytes").unwrap_or_default();
            self.line("size cap", format!("{cap} bytes"), source);
        }
    }

    /// Where the upstream URL came from; for a synthesized tool whose operation's path key
    /// goes on past the path requested, that its `#` suffix is not requested.
    fn upstream_source(&self) -> String {
        let tool = self.tool;
        let mut source = match self.api.and_then(|a| a.base_url.as_ref()) {
            Some(_) => format!("config apis.{}.base_url", tool.route.api),
            None if self.hand_written.is_some() => "as written".into(),
            None => "spec (servers)".into(),
        };
        if let Some((_, suffix)) = tool.origin.operation.split_once('#')
            && self.hand_written.is_none()
        {
            let _ = write!(source, "; the path suffix \"#{suffix}\" is not requested");
        }
        source
    }

    /// Each argument: where it goes, its type, whether it is required (or hidden with a
    /// fixed value), and where it came from.
    fn arguments(&mut self) {
        let tool = self.tool;
        let _ = writeln!(self.out, "  arguments");
        let input = tool.input_schema.to_value();
        let properties = input.get("properties");
        let required: Vec<&str> = input
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if tool.route.arguments.bindings.is_empty() {
            let _ = writeln!(self.out, "    (none)");
        }
        for binding in &tool.route.arguments.bindings {
            let kind = properties
                .and_then(|p| p.get(&binding.argument))
                .and_then(|s| s.get("type"))
                .map(|t| match t {
                    Value::String(t) => t.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            let state = if binding.fixed.is_some() {
                "hidden, fixed".to_string()
            } else if required.contains(&binding.argument.as_str()) {
                "required".to_string()
            } else {
                "optional".to_string()
            };
            let described: Vec<String> = [place(tool, binding), kind, state]
                .into_iter()
                .filter(|part| !part.is_empty())
                .collect();
            let _ = writeln!(
                self.out,
                "    {:<24} {}",
                binding.argument,
                described.join("  ")
            );
            let source = self.argument_source(binding);
            let _ = writeln!(self.out, "    {:<24}   ← {source}", "");
        }
    }

    /// Where an argument came from, when nothing but synthesis (or the `add` entry) made it.
    fn argument_source(&self, binding: &Binding) -> String {
        self.source_of(&format!("arguments.{}", binding.argument))
            .unwrap_or_else(|| {
                if binding.location == Location::FileName {
                    "restmcp (the part's filename)".into()
                } else if self.hand_written.is_some() {
                    "as written".into()
                } else if binding.location == Location::BodyField
                    || binding.location == Location::Body
                {
                    "spec (request body)".into()
                } else {
                    "spec (parameter)".into()
                }
            })
    }

    /// The resource or template the tool is served as too: its URI, name and media type,
    /// where it was declared, and each variable with where it goes and its completions.
    fn resource(&mut self) {
        let Some(resource) = self.tool.resource.as_deref() else {
            return;
        };
        let kind = if resource.uri.is_template() {
            "template"
        } else {
            "resource"
        };
        let source = self.source_of("resource").unwrap_or_default();
        self.line(
            "resource",
            format!(
                "{} ({kind} \"{}\", {})",
                resource.uri.as_str(),
                resource.name,
                resource
                    .mime_type
                    .as_deref()
                    .unwrap_or("media type of the answer")
            ),
            source,
        );
        for variable in &resource.variables {
            let _ = writeln!(
                self.out,
                "    {:<24} {} argument; completions: {}",
                format!("{{{}}}", variable.name),
                super::surface::place(self.tool, &variable.name),
                super::surface::completions_of_variable(variable)
            );
        }
    }

    /// Whether the tool has an outputSchema.
    fn output(&mut self) {
        let _ = writeln!(
            self.out,
            "  outputSchema {}",
            if self.tool.output_schema.is_some() {
                "yes"
            } else {
                "none"
            }
        );
    }
}

/// Query parameters every call carries (a path suffix's `#Action=…`), as they are sent
/// (`?Action=…`); empty when there are none.
fn fixed_query(tool: &Tool) -> String {
    let fixed_query: Vec<String> = tool
        .route
        .arguments
        .bindings
        .iter()
        .filter(|b| b.location == Location::Query)
        .filter_map(|b| match b.fixed.as_ref().map(|f| f.value()) {
            Some(Value::String(value)) if b.fixed.as_ref().and_then(|f| f.secret()).is_none() => {
                Some(format!("{}={value}", b.wire_name))
            }
            _ => None,
        })
        .collect();
    if fixed_query.is_empty() {
        String::new()
    } else {
        format!("?{}", fixed_query.join("&"))
    }
}

/// Where an argument goes on the wire, with its wire name when that differs.
fn place(tool: &Tool, binding: &Binding) -> String {
    let place = match binding.location {
        Location::Path => "path",
        Location::Query => "query",
        Location::Header => "header",
        Location::Cookie => "cookie",
        Location::BodyField
            if tool
                .route
                .body
                .as_ref()
                .is_some_and(|plan| plan.files.contains_key(&binding.wire_name)) =>
        {
            "file part"
        }
        Location::BodyField => "body field",
        Location::Body => "body",
        Location::FileName => "file name of",
    };
    let wire = if binding.wire_name.is_empty() || binding.wire_name == binding.argument {
        String::new()
    } else {
        format!(" \"{}\"", binding.wire_name)
    };
    format!("{place}{wire}")
}
