//! What synthesis did with each operation, for `restmcp check`: mapped or skipped (and
//! why), renamed (from what, why), what was dropped, and the size of the result; and the
//! MCP surface besides tools ([`Surface`]: resources, templates, prompts and where their
//! completions come from), which the command line fills in from the built catalog.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::naming::NameChange;
use super::savings::{BYTES_PER_TOKEN, Hoisting, Relaxation, thousands};
use crate::spec::SpecVersion;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub apis: Vec<ApiReport>,
    /// Size of the whole `tools/list` result in bytes (compact JSON).
    pub list_bytes: usize,
    /// Resources, templates and prompts (empty until the command line fills it in).
    #[serde(skip_serializing_if = "Surface::is_empty")]
    pub surface: Surface,
    /// What became of each Arazzo workflow of `[workflows.NAME]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workflows: Vec<super::workflow::WorkflowReport>,
}

/// The MCP surface besides tools: each resource and template with the tool it reads, each
/// prompt with its arguments and messages, and where each completion comes from.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Surface {
    pub resources: Vec<ResourceEntry>,
    pub prompts: Vec<PromptEntry>,
}

/// One resource (a URI without variables) or resource template.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceEntry {
    pub uri: String,
    pub template: bool,
    pub name: String,
    /// The tool a read runs.
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Where the `resource:` was written.
    pub location: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<VariableEntry>,
}

/// One variable of a template: the argument it fills and its completions.
#[derive(Debug, Clone, Serialize)]
pub struct VariableEntry {
    pub name: String,
    /// `path` or `query`.
    pub place: String,
    /// Where its completions come from (`none` when nowhere).
    pub completions: String,
}

/// One prompt.
#[derive(Debug, Clone, Serialize)]
pub struct PromptEntry {
    pub name: String,
    /// Where it was written (`config prompts.NAME`, an overlay's or a spec's).
    pub location: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<ArgumentEntry>,
    /// Each message's kind and what it names: `text`, `resource URI`, `operation TOOL`.
    pub messages: Vec<String>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Serialize)]
pub struct ArgumentEntry {
    pub name: String,
    pub required: bool,
    /// Where its completions come from (`none` when nowhere).
    pub completions: String,
}

impl Surface {
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.prompts.is_empty()
    }

    /// `1 resource, 2 templates, 1 prompt`; empty when there are none.
    fn counts(&self) -> String {
        let templates = self.resources.iter().filter(|r| r.template).count();
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        [
            (self.resources.len() - templates, "resource"),
            (templates, "template"),
            (self.prompts.len(), "prompt"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, one)| plural(n, one))
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// The section `restmcp check` prints after the APIs: the resources and templates
    /// (each with its tool, each variable with its completions), then the prompts (each
    /// with its arguments and messages).
    fn render(&self, out: &mut String) {
        if !self.resources.is_empty() {
            let _ = writeln!(
                out,
                "resources (resources/list) and templates (resources/templates/list)"
            );
        }
        for resource in &self.resources {
            let kind = if resource.template {
                "template"
            } else {
                "resource"
            };
            let _ = writeln!(
                out,
                "  {kind:<8} {:<40} → {} ({})",
                resource.uri,
                resource.tool,
                resource
                    .mime_type
                    .as_deref()
                    .unwrap_or("media type of the answer")
            );
            for variable in &resource.variables {
                let _ = writeln!(
                    out,
                    "           {{{}}} {} argument; completions: {}",
                    variable.name, variable.place, variable.completions
                );
            }
        }
        if !self.prompts.is_empty() {
            let _ = writeln!(out, "prompts (prompts/list)");
        }
        for prompt in &self.prompts {
            let _ = writeln!(out, "  prompt   {:<40} {}", prompt.name, prompt.location);
            for argument in &prompt.arguments {
                let _ = writeln!(
                    out,
                    "           argument {} ({}); completions: {}",
                    argument.name,
                    if argument.required {
                        "required"
                    } else {
                        "optional"
                    },
                    argument.completions
                );
            }
            let _ = writeln!(out, "           messages: {}", prompt.messages.join("; "));
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ApiReport {
    pub name: String,
    pub source: String,
    /// `None` for an API of hand-written tools only.
    pub version: Option<SpecVersion>,
    pub title: String,
    pub operations: Vec<OperationReport>,
    /// About the API as a whole (an OpenAPI Overlay action that selected nothing, say).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What this API adds to `tools/list` in each discovery mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// What each client schema dialect had to drop or change, tool by tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dialects: Vec<DialectReport>,
    /// Each OAuth scope the API's operations ask for, with the number of tools that ask
    /// for it (in some alternative of their `security`); a token needs it to see those.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, usize>,
}

/// What one schema dialect had to drop from an API's tools.
#[derive(Debug, Clone, Serialize)]
pub struct DialectReport {
    pub dialect: String,
    /// Some client of this API is configured to get it (its details are printed).
    pub configured: bool,
    /// False when it was not converted: not configured, and the API too large for a count
    /// to be worth its time (`load::UNCONFIGURED_DIALECT_TOOLS`).
    pub checked: bool,
    /// Tools that lose something, with what.
    pub tools: Vec<(String, Vec<String>)>,
}

/// The bytes (and estimated tokens) an API adds to `tools/list` in each discovery mode.
#[derive(Debug, Clone, Serialize)]
pub struct Budget {
    /// The mode served (`all`, `search` or `meta`).
    pub discovery: String,
    /// Why, when `discovery = "auto"` chose it ([`super::AutoChoice::reason`]); `None` when
    /// the mode was configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto: Option<String>,
    pub all_bytes: usize,
    pub search_bytes: usize,
    pub meta_bytes: usize,
}

impl Budget {
    fn render(&self) -> String {
        let tokens = |bytes: usize| thousands(bytes.div_ceil(BYTES_PER_TOKEN));
        let served = match &self.auto {
            Some(reason) => format!("\"auto\" chose \"{}\": {reason}", self.discovery),
            None => format!("configured: \"{}\"", self.discovery),
        };
        format!(
            "  tools/list ≈ {} tokens with discovery = \"all\", {} with \"search\", {} with \"meta\" ({served})",
            tokens(self.all_bytes),
            tokens(self.search_bytes),
            tokens(self.meta_bytes),
        )
    }
}

/// What synthesis made of one operation (or an overlay's hand-written tool): a tool, or
/// why there is none. Serialized as the `outcome` of its [`OperationReport`].
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum OperationOutcome {
    Mapped {
        tool: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        renamed: Vec<NameChange>,
        /// The operationId (or `METHOD /path`) the name came from.
        source: String,
    },
    Skipped {
        reason: String,
    },
    /// Left out by the API's `include`, `exclude` or `read_only`.
    Excluded {
        reason: String,
    },
    /// Hidden by an overlay or `x-mcp` (`hidden: true`).
    Hidden {
        by: String,
    },
    /// A tool from an overlay's `add`.
    HandWritten {
        tool: String,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct OperationReport {
    /// Document order.
    #[serde(skip)]
    pub(super) index: usize,
    /// `GET /pets`
    pub operation: String,
    /// `file#/paths/~1pets/get`
    pub location: String,
    #[serde(flatten)]
    pub outcome: OperationOutcome,
    /// Keywords removed from its schemas, with counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_keywords: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Set when the inputSchema was relaxed to fit its budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relaxed_input: Option<Relaxation>,
    /// Set when hoisting repeated subtrees into `$defs` made its schemas smaller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hoisted: Option<Hoisting>,
}

/// What synthesis found about a mapped operation that its report shows.
pub(super) struct Findings {
    pub notes: Vec<String>,
    pub schema_notes: crate::schema::Notes,
    pub relaxed: Option<Relaxation>,
    pub hoisted: Option<Hoisting>,
}

impl OperationReport {
    pub(super) fn skipped(
        index: usize,
        operation: String,
        location: String,
        reason: String,
    ) -> Self {
        OperationReport {
            index,
            operation,
            location,
            outcome: OperationOutcome::Skipped { reason },
            dropped_keywords: Vec::new(),
            notes: Vec::new(),
            relaxed_input: None,
            hoisted: None,
        }
    }

    pub(super) fn left_out(
        index: usize,
        operation: String,
        location: String,
        outcome: OperationOutcome,
    ) -> OperationReport {
        OperationReport {
            index,
            operation,
            location,
            outcome,
            dropped_keywords: Vec::new(),
            notes: Vec::new(),
            relaxed_input: None,
            hoisted: None,
        }
    }

    pub(super) fn hand_written(index: usize, tool: &super::Tool) -> OperationReport {
        OperationReport {
            index,
            operation: tool.origin.operation.clone(),
            location: tool.origin.location.clone(),
            outcome: OperationOutcome::HandWritten {
                tool: tool.name.clone(),
            },
            dropped_keywords: Vec::new(),
            notes: Vec::new(),
            relaxed_input: None,
            hoisted: None,
        }
    }

    pub(super) fn mapped(
        index: usize,
        operation: String,
        location: String,
        tool: String,
        source: String,
        renamed: Vec<NameChange>,
        findings: Findings,
    ) -> Self {
        let Findings {
            mut notes,
            schema_notes,
            relaxed,
            hoisted,
        } = findings;
        notes.extend(schema_notes.invalid);
        OperationReport {
            index,
            operation,
            location,
            outcome: OperationOutcome::Mapped {
                tool,
                renamed,
                source,
            },
            dropped_keywords: schema_notes.dropped.into_iter().collect(),
            notes,
            relaxed_input: relaxed,
            hoisted,
        }
    }

    pub fn is_skipped(&self) -> bool {
        matches!(self.outcome, OperationOutcome::Skipped { .. })
    }

    /// True when the entry became a tool.
    pub fn is_tool(&self) -> bool {
        matches!(
            self.outcome,
            OperationOutcome::Mapped { .. } | OperationOutcome::HandWritten { .. }
        )
    }
}

impl Report {
    pub fn operations(&self) -> usize {
        self.apis.iter().map(|a| a.operations.len()).sum()
    }

    pub fn skipped(&self) -> usize {
        self.apis
            .iter()
            .flat_map(|a| &a.operations)
            .filter(|o| o.is_skipped())
            .count()
    }

    pub fn estimated_tokens(&self) -> usize {
        self.list_bytes.div_ceil(BYTES_PER_TOKEN)
    }

    /// The human-readable form printed by `restmcp check`: each API (its heading, its
    /// dialects, each operation, what relaxing and hoisting saved), then the totals.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for api in &self.apis {
            render_heading(api, &mut out);
            render_dialects(api, &mut out);
            for op in &api.operations {
                render_operation(op, &mut out);
            }
            render_savings(api, &mut out);
        }
        self.surface.render(&mut out);
        render_workflows(&self.workflows, &mut out);
        self.render_totals(&mut out);
        out
    }

    /// The last line: operations by outcome, and the size of `tools/list`.
    fn render_totals(&self, out: &mut String) {
        let count = |f: fn(&OperationOutcome) -> bool| {
            self.apis
                .iter()
                .flat_map(|a| &a.operations)
                .filter(|o| f(&o.outcome))
                .count()
        };
        let mapped = count(|o| matches!(o, OperationOutcome::Mapped { .. }));
        let hand_written = count(|o| matches!(o, OperationOutcome::HandWritten { .. }));
        let excluded = count(|o| matches!(o, OperationOutcome::Excluded { .. }));
        let hidden = count(|o| matches!(o, OperationOutcome::Hidden { .. }));
        let skipped = self.skipped();
        let mut parts = vec![format!("{mapped} mapped")];
        if excluded > 0 {
            parts.push(format!("{excluded} excluded"));
        }
        if hidden > 0 {
            parts.push(format!("{hidden} hidden"));
        }
        parts.push(format!("{skipped} skipped"));
        let hand = if hand_written > 0 {
            format!("; {hand_written} hand-written tools")
        } else {
            String::new()
        };
        let mut surface = match self.surface.counts() {
            counts if counts.is_empty() => counts,
            counts => format!("; {counts}"),
        };
        let published = self.workflows.iter().filter(|w| w.tool.is_some()).count();
        if !self.workflows.is_empty() {
            surface.push_str(&format!(
                "; {published} of {} workflows published",
                self.workflows.len()
            ));
        }
        let _ = writeln!(
            out,
            "\n{} operations: {}{hand}; tools/list is {} bytes ≈ {} tokens{surface}",
            self.operations() - hand_written,
            parts.join(", "),
            self.list_bytes,
            self.estimated_tokens()
        );
    }
}

/// An API's heading: name, source, version, title and how many operations were mapped;
/// then its notes, discovery budget and the OAuth scopes its tools ask for.
fn render_heading(api: &ApiReport, out: &mut String) {
    let mapped = api
        .operations
        .iter()
        .filter(|o| matches!(o.outcome, OperationOutcome::Mapped { .. }))
        .count();
    let hand_written = api
        .operations
        .iter()
        .filter(|o| matches!(o.outcome, OperationOutcome::HandWritten { .. }))
        .count();
    let operations = api.operations.len() - hand_written;
    let extra = if hand_written > 0 {
        format!(", {hand_written} hand-written tools")
    } else {
        String::new()
    };
    let version = api
        .version
        .map(|v| v.to_string())
        .unwrap_or_else(|| "hand-written tools".into());
    let _ = writeln!(
        out,
        "{} — {} ({}, {}): {} of {} operations mapped{}",
        api.name,
        api.source,
        version,
        if api.title.is_empty() {
            "untitled"
        } else {
            &api.title
        },
        mapped,
        operations,
        extra
    );
    for note in &api.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    if let Some(budget) = &api.budget {
        let _ = writeln!(out, "{}", budget.render());
    }
    if !api.scopes.is_empty() {
        let scopes: Vec<String> = api
            .scopes
            .iter()
            .map(|(scope, tools)| format!("{scope} ({tools})"))
            .collect();
        let _ = writeln!(
            out,
            "  OAuth scopes the tools ask for (tools each is needed by): {}",
            scopes.join(", ")
        );
    }
}

/// What each client dialect does to the API's tools: how many lose something, each
/// change for a configured dialect, or that an unconfigured one was not checked.
fn render_dialects(api: &ApiReport, out: &mut String) {
    for dialect in &api.dialects {
        if !dialect.checked {
            let _ = writeln!(
                out,
                "  dialect {}: not configured, not checked for an API of {} tools (configure it to see what its tools lose)",
                dialect.dialect,
                thousands(api.operations.iter().filter(|o| o.is_tool()).count())
            );
            continue;
        }
        let notes: usize = dialect.tools.iter().map(|(_, n)| n.len()).sum();
        let _ = writeln!(
            out,
            "  dialect {}: {} of the API's tools lose something ({notes} changes){}",
            dialect.dialect,
            dialect.tools.len(),
            if dialect.configured || dialect.tools.is_empty() {
                ""
            } else {
                "; not configured, details with --json"
            }
        );
        if dialect.configured {
            for (tool, notes) in &dialect.tools {
                for note in notes {
                    let _ = writeln!(out, "    {tool}: {note}");
                }
            }
        }
    }
}

/// One operation: what became of it, then the keywords its schemas dropped, how its
/// inputSchema was relaxed, what hoisting saved, and its notes.
fn render_operation(op: &OperationReport, out: &mut String) {
    match &op.outcome {
        OperationOutcome::Mapped {
            tool,
            renamed,
            source,
        } => {
            let _ = writeln!(out, "  ok       {:<40} → {tool}", op.operation);
            if !renamed.is_empty() {
                let why: Vec<&str> = renamed.iter().map(describe_change).collect();
                let _ = writeln!(
                    out,
                    "           renamed from \"{source}\": {}",
                    why.join("; ")
                );
            }
        }
        OperationOutcome::Skipped { reason } => {
            let _ = writeln!(out, "  SKIPPED  {:<40} {}", op.operation, op.location);
            let _ = writeln!(out, "           {reason}");
        }
        OperationOutcome::Excluded { reason } => {
            let _ = writeln!(out, "  excluded {:<40} {reason}", op.operation);
        }
        OperationOutcome::Hidden { by } => {
            let _ = writeln!(out, "  hidden   {:<40} by {by}", op.operation);
        }
        OperationOutcome::HandWritten { tool } => {
            let _ = writeln!(
                out,
                "  ok       {:<40} → {tool} (hand-written, {})",
                op.operation, op.location
            );
        }
    }
    if !op.dropped_keywords.is_empty() {
        let list: Vec<String> = op
            .dropped_keywords
            .iter()
            .map(|(k, n)| {
                if *n > 1 {
                    format!("{k} ×{n}")
                } else {
                    k.clone()
                }
            })
            .collect();
        let _ = writeln!(out, "           dropped keywords: {}", list.join(", "));
    }
    if let Some(relaxed) = &op.relaxed_input {
        let _ = writeln!(out, "           {}", relaxed.render());
    }
    if let Some(hoisted) = &op.hoisted {
        let _ = writeln!(out, "           {}", hoisted.render());
    }
    for note in &op.notes {
        let _ = writeln!(out, "           note: {note}");
    }
}

/// What relaxing inputSchemas and hoisting repeated subtrees saved in `tools/list`, for
/// the API's tools together.
fn render_savings(api: &ApiReport, out: &mut String) {
    let relaxed: Vec<&Relaxation> = api
        .operations
        .iter()
        .filter_map(|op| op.relaxed_input.as_ref())
        .collect();
    if !relaxed.is_empty() {
        let saved: usize = relaxed
            .iter()
            .map(|r| r.full_bytes.saturating_sub(r.published_bytes))
            .sum();
        let _ = writeln!(
            out,
            "  {} inputSchema(s) relaxed to fit tools.max_input_schema_bytes: {} bytes (≈ {} tokens) fewer in tools/list; arguments are still checked against the full schemas",
            relaxed.len(),
            thousands(saved),
            thousands(saved.div_ceil(BYTES_PER_TOKEN))
        );
    }
    let hoisted: Vec<&Hoisting> = api
        .operations
        .iter()
        .filter_map(|op| op.hoisted.as_ref())
        .collect();
    if !hoisted.is_empty() {
        let saved: usize = hoisted.iter().map(|h| h.saved()).sum();
        let _ = writeln!(
            out,
            "  {} tool(s) with repeated subtrees hoisted into $defs: {} bytes (≈ {} tokens) fewer in tools/list",
            hoisted.len(),
            thousands(saved),
            thousands(saved.div_ceil(BYTES_PER_TOKEN))
        );
    }
}

fn describe_change(change: &NameChange) -> &'static str {
    match change {
        NameChange::FromPath => "no operationId, named from method and path",
        NameChange::Sanitized => "characters outside [A-Za-z0-9_-] replaced",
        NameChange::Shortened => "shortened to the maximum length",
        NameChange::Deduplicated => "collided with another tool, hash suffix added",
    }
}

/// Each workflow: its tool, or why it is not published; then its warnings.
fn render_workflows(workflows: &[super::workflow::WorkflowReport], out: &mut String) {
    let mut set = None;
    for workflow in workflows {
        if set != Some(&workflow.set) {
            set = Some(&workflow.set);
            let _ = writeln!(out, "\nworkflows.{} ({})", workflow.set, workflow.file);
        }
        match (&workflow.tool, workflow.excluded) {
            (Some(tool), _) => {
                let _ = writeln!(out, "  workflow {} -> tool {tool}", workflow.workflow);
            }
            (None, true) if workflow.problems.is_empty() => {
                let _ = writeln!(out, "  workflow {} -> excluded", workflow.workflow);
            }
            (None, _) => {
                let _ = writeln!(out, "  workflow {} -> NOT PUBLISHED:", workflow.workflow);
                for problem in &workflow.problems {
                    let _ = writeln!(out, "      {}{problem}", workflow.file);
                }
            }
        }
        for warning in &workflow.warnings {
            let _ = writeln!(out, "      warning: {}{warning}", workflow.file);
        }
    }
}
