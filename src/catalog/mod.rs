//! The catalog: the tools synthesized from every configured API.
//!
//! This stage turns normalized operations into MCP tools: names ([`naming`]), input and
//! output schemas (via [`crate::schema`]), text cleaned of markup, annotations, and for
//! each tool the [`Route`] and [`ArgumentMap`] the dispatcher uses to build the upstream
//! request (a path key's `#` suffix is not requested; its query pairs are). It also produces the
//! [`Report`] behind `restmcp check`. Schemas are kept as compact JSON text
//! ([`SchemaText`]). It knows nothing of transports: [`Tool::mcp`] is a tool's MCP form for
//! `restmcp tools --json`, discovery and the reload diff, while serving lists each tool
//! through `mcp::listed::ListedTool::from_catalog`, sharing the schemas' text (a test keeps
//! the two equal).
//!
//! This file holds the [`Catalog`], the set of tools served at one time (replaced whole on
//! reload). The rest, one concept a file:
//!
//! - `build`: [`build()`] and its [`ApiInput`]: read every API's operations a few path
//!   items at a time ([`crate::spec::normalize_in_parts`]), select and synthesize them (on
//!   all cores, [`crate::parallel::on_all_cores_with`]), then name and patch them all, add
//!   the hand-written tools, check names are unique ([`CatalogError`]).
//! - [`explain`]: one tool explained, each piece with where it came from (`restmcp explain`,
//!   the console); [`surface`]: the resources, templates and prompts in words.
//! - `tool`: one [`Tool`]: its MCP form, [`Annotations`], [`Origin`] and the [`Route`] the
//!   dispatcher follows ([`BaseUrl`], [`ToolLimit`], [`OutputPlan`], [`MockAnswer`] (the
//!   mock's answer, with [`MOCK_BASE_URL`] for an API in mock mode without one), and
//!   for a tool whose inputSchema was relaxed to fit `tools.max_input_schema_bytes`, the
//!   [`FullInput`] its arguments are also checked against).
//! - [`arguments`]: the [`ArgumentMap`], where each argument goes on the wire.
//! - `synthesize`: one operation → one unnamed tool (schemas within their byte budgets,
//!   their repeated subtrees hoisted into `$defs` where that is smaller, route,
//!   annotations, text), with `synthesize/body.rs` for request bodies and file parts.
//! - [`naming`]: tool and argument names: sanitized, shortened, unique.
//! - `text`: descriptions and titles cleaned of markup and capped ([`truncate_text`]).
//! - `schema_text`: [`SchemaText`], a schema kept as compact JSON text, and
//!   [`SharedSchemas`], which holds equal texts once.
//! - [`select`]: an API's `include`, `exclude` and `read_only` ([`Selection`]).
//! - [`patch`]: tool patches, the operator's overlay files and a spec's `x-mcp`.
//! - [`handwritten`]: the tools an overlay file adds (`add`), with no operation behind them.
//! - [`projection`]: `response.fields`, applied to results and to the output schema.
//! - [`report`]: what became of each operation, for `restmcp check` ([`Report`]).
//! - `savings`: what fitting a tool into its budgets did ([`Relaxation`], [`Hoisting`]),
//!   made by synthesis and rendered by the report.
//! - `tests`: the catalog built from small specs, end to end.

pub mod arguments;
mod build;
pub mod explain;
pub mod handwritten;
pub mod naming;
pub mod patch;
pub mod program;
pub mod projection;
pub mod prompt;
pub mod report;
pub mod resource;
mod savings;
pub(crate) use savings::thousands;
mod schema_text;
pub mod select;
pub mod served;
pub mod surface;
mod synthesize;
mod text;
mod tool;
pub mod uri_template;
pub mod workflow;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;

pub use arguments::{ArgumentMap, Binding, BodyPlan, FileContent, FilePart, Location};
pub use build::{ApiInput, CatalogError, build};

pub use naming::NameChange;
pub use prompt::Prompt;
pub use report::{ApiReport, OperationOutcome, OperationReport, Report};
pub use resource::{CompleteSource, Resource, ResourcePatch, ValueKind, Variable};
pub use savings::{BYTES_PER_TOKEN, Hoisting, Relaxation};
pub use schema_text::{SchemaText, SharedSchemas};
pub use select::Selection;
pub use synthesize::default_filename;
pub use text::truncate_text;
pub use tool::{
    Annotations, BaseUrl, Confirmation, FullInput, Idempotency, MOCK_BASE_URL, McpTool, MockAnswer,
    MockSource, Origin, OutputPlan, Route, Tool, ToolLimit,
};

use crate::config::DiscoveryMode;
use crate::spec::SecurityScheme;

#[derive(Serialize)]
struct McpToolList<'a> {
    tools: Vec<McpTool<'a>>,
}

/// The set of tools served at one time.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize, foldhash::fast::RandomState>,
    /// The whole `tools/list` result, serialized on first use: serving does not use it
    /// (the MCP layer lists per client), and for GitHub's spec it is 5 MB held through
    /// loading's peak.
    list_json: std::sync::OnceLock<Arc<str>>,
    /// Each API's declared security schemes, by API name.
    security_schemes: HashMap<String, BTreeMap<String, SecurityScheme>>,
    /// How each API's tools are offered, by API name.
    listings: BTreeMap<String, Listing>,
    /// The prompts ([`prompt::gather`]).
    prompts: Vec<Prompt>,
}

impl Catalog {
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// Sets the prompts (checked by [`prompt::gather`]).
    pub fn set_prompts(&mut self, prompts: Vec<Prompt>) {
        self.prompts = prompts;
    }

    /// The tools also served as resources or resource templates.
    pub fn resources(&self) -> impl Iterator<Item = (&Tool, &Resource)> {
        self.tools
            .iter()
            .filter_map(|tool| Some((tool, tool.resource.as_deref()?)))
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Position of tool `name` in [`Catalog::tools`].
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Keeps a reload from moving calls to another host: for every API whose base URL comes
    /// from its spec's `servers` (`spec_based(api)`), a tool whose base URL is on an origin
    /// the `previous` tool set did not use for that API gets the previous base URL back
    /// (that tool's own, else the API's first). The spec is data from elsewhere; only the
    /// config (`base_url`) or a restart moves an API. Returns one message per API kept.
    pub fn keep_origins(
        &mut self,
        previous: &Catalog,
        spec_based: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let origin = |base: &BaseUrl| base.parsed().ok().map(|u| u.origin().ascii_serialization());
        // Per API of the previous tool set: its first base URL and every origin it used.
        let mut before: HashMap<&str, (&BaseUrl, BTreeSet<String>)> = HashMap::new();
        for old in &previous.tools {
            if let (Some(base), None) = (&old.route.base_url, &old.route.mock) {
                let entry = before
                    .entry(old.route.api.as_str())
                    .or_insert_with(|| (base, BTreeSet::new()));
                entry.1.extend(origin(base));
            }
        }
        let mut kept: BTreeMap<String, (String, String)> = BTreeMap::new();
        for tool in &mut self.tools {
            let api = tool.route.api.as_str();
            if tool.route.mock.is_some() || !spec_based(api) {
                continue;
            }
            let (Some(new_origin), Some((first_old, origins))) = (
                tool.route.base_url.as_ref().and_then(origin),
                before.get(api),
            ) else {
                continue;
            };
            if origins.contains(&new_origin) {
                continue;
            }
            let restored = previous
                .get(&tool.name)
                .filter(|old| old.route.api == api)
                .and_then(|old| old.route.base_url.clone())
                .unwrap_or_else(|| (*first_old).clone());
            kept.entry(api.to_string())
                .or_insert_with(|| (origin(&restored).unwrap_or_default(), new_origin));
            tool.route.base_url = Some(restored);
        }
        kept.into_iter()
            .map(|(api, (old, new))| {
                format!(
                    "API \"{api}\": the reloaded spec's servers would move calls from {old} to {new}; they still go to {old} (set apis.{api}.base_url, or restart, to move them)"
                )
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Adds the workflow tools ([`workflow::build`]); a name another tool has already is
    /// an error naming both.
    pub fn add_workflows(&mut self, tools: Vec<Tool>) -> Result<(), String> {
        for tool in tools {
            if let Some(&existing) = self.by_name.get(&tool.name) {
                return Err(format!(
                    "workflow \"{}\" of {} would be tool \"{}\", which {} already is; give \
                     its [workflows] table a prefix",
                    tool.origin.operation_id.as_deref().unwrap_or_default(),
                    tool.origin.location,
                    tool.name,
                    self.tools[existing].origin.operation
                ));
            }
            self.by_name.insert(tool.name.clone(), self.tools.len());
            self.tools.push(tool);
        }
        self.list_json = std::sync::OnceLock::new();
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The security schemes API `api` declares (empty when it declares none); `None` for an
    /// API not in the catalog.
    pub fn security_schemes(&self, api: &str) -> Option<&BTreeMap<String, SecurityScheme>> {
        self.security_schemes.get(api)
    }

    /// The OAuth scopes `tool` needs, from its operation's `security`: one list per
    /// alternative, each the scopes listed under its OAuth 2.0 and OpenID Connect schemes
    /// (other schemes need none). Empty when some alternative needs no scope (or there is
    /// no requirement): then any token may call it.
    ///
    /// A workflow's tool needs what every step it may reach needs: each combination of
    /// one alternative per step (at most [`MAX_SCOPE_ALTERNATIVES`]; past that, every
    /// step's first alternative together).
    pub fn required_scopes(&self, tool: &Tool) -> Vec<Vec<String>> {
        if let Some(plan) = &tool.workflow {
            let steps = plan.step_tools().filter_map(|name| self.get(name));
            return combine_scopes(steps.map(|step| self.required_scopes(step)).collect());
        }
        let schemes = self.security_schemes(&tool.route.api);
        let scoped = |name: &str| match schemes.and_then(|schemes| schemes.get(name)) {
            Some(SecurityScheme::OAuth2 { .. }) => true,
            Some(SecurityScheme::Unsupported { kind }) => {
                kind == "oauth2" || kind == "openIdConnect"
            }
            _ => false,
        };
        let alternatives: Vec<Vec<String>> = tool
            .route
            .security
            .iter()
            .map(|alternative| {
                let scopes: BTreeSet<String> = alternative
                    .iter()
                    .filter(|(name, _)| scoped(name))
                    .flat_map(|(_, scopes)| scopes.iter().cloned())
                    .filter(|scope| !scope.is_empty())
                    .collect();
                scopes.into_iter().collect()
            })
            .collect();
        if alternatives.iter().any(Vec::is_empty) {
            return Vec::new();
        }
        alternatives
    }

    /// `; did you mean "NAME"?` naming the tool whose name is closest to `name`, or empty.
    pub fn closest_hint(&self, name: &str) -> String {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        naming::closest(name, &names)
            .map(|c| format!("; did you mean \"{c}\"?"))
            .unwrap_or_default()
    }

    /// How API `api` offers its tools (`All` for an API not in the catalog).
    pub fn listing(&self, api: &str) -> Option<&Listing> {
        self.listings.get(api)
    }

    /// True when `tool` appears in `tools/list` itself (its API lists every tool, or it is
    /// pinned); else it is reached through the discovery tools.
    pub fn is_listed(&self, tool: &Tool) -> bool {
        self.listings.get(&tool.route.api).is_none_or(|listing| {
            listing.discovery == DiscoveryMode::All || listing.pinned.contains(&tool.name)
        })
    }

    /// The `tools/list` result, `{"tools": […]}`, as compact JSON.
    pub fn list_json(&self) -> &Arc<str> {
        self.list_json
            .get_or_init(|| Catalog::serialize_list(&self.tools))
    }

    fn serialize_list(tools: &[Tool]) -> Arc<str> {
        let list = McpToolList {
            tools: tools.iter().map(Tool::mcp).collect(),
        };
        // Serializing plain data into a String cannot fail.
        serde_json::to_string(&list).unwrap_or_default().into()
    }
}

/// The most scope alternatives a workflow's tool is given ([`Catalog::required_scopes`]).
pub const MAX_SCOPE_ALTERNATIVES: usize = 16;

/// Alternatives that meet every one of `needs` (each a list of alternatives, empty when
/// anything may call): one alternative of each, joined.
fn combine_scopes(needs: Vec<Vec<Vec<String>>>) -> Vec<Vec<String>> {
    let needs: Vec<Vec<Vec<String>>> = needs.into_iter().filter(|n| !n.is_empty()).collect();
    if needs.is_empty() {
        return Vec::new();
    }
    let mut combined: Vec<BTreeSet<String>> = vec![BTreeSet::new()];
    for alternatives in &needs {
        let next: Vec<BTreeSet<String>> = combined
            .iter()
            .flat_map(|so_far| {
                alternatives.iter().map(move |alternative| {
                    let mut joined = so_far.clone();
                    joined.extend(alternative.iter().cloned());
                    joined
                })
            })
            .collect();
        if next.len() > MAX_SCOPE_ALTERNATIVES {
            let strict: BTreeSet<String> = needs.iter().flat_map(|a| a[0].clone()).collect();
            return vec![strict.into_iter().collect()];
        }
        combined = next;
    }
    combined.sort();
    combined.dedup();
    combined
        .into_iter()
        .map(|set| set.into_iter().collect())
        .collect()
}

/// How one API's tools are offered (see [`DiscoveryMode`]).
#[derive(Debug, Clone)]
pub struct Listing {
    /// The mode served: `all`, `search` or `meta`, never `auto` (settled when the catalog
    /// is built, see [`Listing::chosen`]).
    pub discovery: DiscoveryMode,
    /// Set when the configuration said `auto`: what the API's tools cost and the budget
    /// that settled [`Listing::discovery`].
    pub chosen: Option<AutoChoice>,
    pub pinned: std::collections::BTreeSet<String>,
    /// The API's title (from its description), for the meta tools' descriptions.
    pub title: String,
    /// What all of its tools add to `tools/list`: each one's compact JSON and a separator.
    pub bytes: usize,
}

/// How `discovery = "auto"` settled an API's mode: its tools cost `tokens` in
/// `tools/list` (estimated, as the report counts them), against `budget`
/// (`tools.auto_budget_tokens`; 0 = no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoChoice {
    pub tokens: usize,
    pub budget: usize,
}

impl AutoChoice {
    /// `all` when the tools fit the budget, else `search`.
    pub fn settle(tokens: usize, budget: usize) -> (DiscoveryMode, AutoChoice) {
        let mode = if budget == 0 || tokens <= budget {
            DiscoveryMode::All
        } else {
            DiscoveryMode::Search
        };
        (mode, AutoChoice { tokens, budget })
    }

    /// Why: "≈ 1,234 tokens, within tools.auto_budget_tokens (25,000)".
    pub fn reason(&self) -> String {
        let tokens = savings::thousands(self.tokens);
        if self.budget == 0 {
            return format!("≈ {tokens} tokens; tools.auto_budget_tokens = 0 sets no limit");
        }
        let relation = if self.tokens <= self.budget {
            "within"
        } else {
            "over"
        };
        format!(
            "≈ {tokens} tokens, {relation} tools.auto_budget_tokens ({})",
            savings::thousands(self.budget)
        )
    }
}

impl Listing {
    /// The mode and why, for banners and reports: `search (auto: ≈ … tokens, over …)`,
    /// or the configured mode as it is.
    pub fn describe(&self) -> String {
        match &self.chosen {
            Some(choice) => format!("{} (auto: {})", self.discovery.as_str(), choice.reason()),
            None => format!("{} (configured)", self.discovery.as_str()),
        }
    }
}

#[cfg(test)]
mod tests;
