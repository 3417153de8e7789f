//! The catalog: the tools synthesized from every configured API.
//!
//! This stage turns normalized operations into MCP tools: names ([`naming`]), input and
//! output schemas (via [`crate::schema`]), text cleaned of markup, annotations, and for
//! each tool the [`Route`] and [`ArgumentMap`] the dispatcher uses to build the upstream
//! request (a path key's `#` suffix is not requested; its query pairs are). It also produces the
//! [`Report`] behind `restmcp check`. Schemas are kept as compact JSON text
//! ([`SchemaText`]). It knows nothing of transports; the MCP layer lists [`Tool::mcp`]
//! as-is, sharing the schemas' text.

pub mod arguments;
pub mod handwritten;
pub mod naming;
pub mod patch;
pub mod projection;
pub mod report;
mod schema_text;
pub mod select;
mod synthesize;
mod text;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use arguments::{ArgumentMap, Binding, BodyPlan, FileContent, FilePart, Location};
pub use naming::NameChange;
pub use report::{ApiReport, OperationOutcome, OperationReport, Report};
pub use schema_text::SchemaText;

use crate::config::{Discovery, ToolSettings};
use crate::schema::RefGraph;
use crate::spec::{self, DocumentSet, Method, SecurityRequirement, SecurityScheme, SpecError};
use patch::{OverlayFile, PatchError, PatchLimits, PatchSource, ToolPatch};
use select::Candidate;
pub use select::Selection;
pub use synthesize::default_filename;
use synthesize::{Context, Draft};
pub use text::truncate_text;

/// MCP tool annotations (all hints explicit, as clients otherwise assume the worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
}

/// How a successful JSON response becomes `structuredContent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutputPlan {
    pub media_type: String,
    /// The response root is not an object, so it is returned as `{"result": …}`.
    pub wrapped: bool,
}

/// Everything the dispatcher needs to call the upstream for one tool.
#[derive(Debug, Clone, Serialize)]
pub struct Route {
    pub api: String,
    pub method: Method,
    /// The path template requested, `/pets/{petId}`: the operation's path key without a
    /// `#` suffix (which [`Origin::operation`] keeps).
    pub path: String,
    /// Config override, else the first absolute server URL; no trailing slash.
    pub base_url: Option<BaseUrl>,
    pub arguments: ArgumentMap,
    pub body: Option<BodyPlan>,
    pub output: Option<OutputPlan>,
    /// The `Accept` header sent with every request, ready to use: built from the media
    /// types the operation documents for its answers (JSON first), else `apis.NAME.accept`
    /// or an overlay's `accept`. An `Accept` argument or forwarded header replaces it.
    pub accept: String,
    /// The operation's effective security requirements: alternatives, any one of which
    /// suffices (an empty one means anonymous access). Empty when none is required.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
    /// Set by an overlay (replaces the API's timeout) or a spec's `x-mcp` (can only lower it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<ToolLimit<std::time::Duration>>,
    /// Set by an overlay (replaces the API's response size cap) or a spec's `x-mcp` (can
    /// only lower it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<ToolLimit<u64>>,
    /// Set by an overlay: only these fields of a JSON response are returned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub response_fields: Vec<String>,
    /// For an API in mock mode: what the mock upstream answers.
    #[serde(skip)]
    pub mock: Option<Arc<MockAnswer>>,
}

/// A per-tool limit, and how far whoever set it may move the API's own.
///
/// The operator's overlays are trusted and may raise or lower a limit; a spec is data from
/// elsewhere, so what its `x-mcp` asks for can only tighten what the config allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolLimit<T> {
    /// From an overlay: used instead of the API's value.
    Replace(T),
    /// From the spec: used when it is below the API's value.
    AtMost(T),
}

impl<T: Ord + Copy> ToolLimit<T> {
    /// The limit in force when the API's own is `api`.
    pub fn over(self, api: T) -> T {
        match self {
            ToolLimit::Replace(value) => value,
            ToolLimit::AtMost(value) => value.min(api),
        }
    }
}

/// An API's base URL as written, parsed once when its tools are made: every call of the
/// API starts from it, and parsing it (the host through IDNA included) cost more per call
/// than the rest of building the request. Reads as the text it was written as.
#[derive(Debug, Clone)]
pub struct BaseUrl {
    text: String,
    parsed: Result<url::Url, String>,
}

impl BaseUrl {
    pub fn new(text: impl Into<String>) -> BaseUrl {
        let text = text.into();
        let parsed = parse_base_url(&text);
        BaseUrl { text, parsed }
    }

    /// The parsed URL, or why it cannot be the base of a request URL.
    pub fn parsed(&self) -> Result<&url::Url, &str> {
        self.parsed.as_ref().map_err(String::as_str)
    }
}

fn parse_base_url(text: &str) -> Result<url::Url, String> {
    let parsed =
        url::Url::parse(text.trim()).map_err(|e| format!("is not an absolute URL ({e})"))?;
    if parsed.cannot_be_a_base() || parsed.host().is_none() {
        return Err("has no host".to_string());
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("has a query or fragment, which cannot precede a path".to_string());
    }
    Ok(parsed)
}

impl std::ops::Deref for BaseUrl {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for BaseUrl {
    fn eq(&self, other: &BaseUrl) -> bool {
        self.text == other.text
    }
}

impl Serialize for BaseUrl {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

/// The mock upstream's answer to a well-formed request: the documented success status and
/// media type, and the spec's example or a value generated from the response schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockAnswer {
    pub status: u16,
    /// `None` for a response without a body.
    pub media_type: Option<String>,
    pub body: Vec<u8>,
    /// Where the body came from: `example`, `generated` or `empty`, for `explain` and tests.
    pub source: &'static str,
}

/// One MCP tool and where it came from.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: SchemaText,
    pub output_schema: Option<SchemaText>,
    pub annotations: Annotations,
    pub route: Route,
    pub origin: Origin,
    /// Where each piece that is not plain synthesis came from (`name` → `overlay
    /// specs/p.overlay.yaml#/tools/getPet/name`), for `restmcp explain`.
    pub provenance: Vec<(String, String)>,
}

/// Where a tool was defined.
#[derive(Debug, Clone, Serialize)]
pub struct Origin {
    pub api: String,
    pub operation_id: Option<String>,
    /// `GET /pets/{id}`
    pub operation: String,
    /// `file#/paths/~1pets~1{id}/get`
    pub location: String,
    pub tags: Vec<String>,
}

/// The MCP wire form of a tool, borrowing from it (serializing never copies schemas).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    pub description: &'a str,
    pub input_schema: &'a SchemaText,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<&'a SchemaText>,
    pub annotations: &'a Annotations,
}

impl Tool {
    /// Records where `what` came from (a later source replaces an earlier one).
    pub fn note(&mut self, what: &str, source: String) {
        match self.provenance.iter_mut().find(|(w, _)| w == what) {
            Some(entry) => entry.1 = source,
            None => self.provenance.push((what.to_string(), source)),
        }
    }

    /// The tool exactly as a `tools/list` result carries it (newest protocol revision).
    pub fn mcp(&self) -> McpTool<'_> {
        McpTool {
            name: &self.name,
            title: self.title.as_deref(),
            description: &self.description,
            input_schema: &self.input_schema,
            output_schema: self.output_schema.as_ref(),
            annotations: &self.annotations,
        }
    }

    /// [`Tool::mcp`] as a JSON value.
    pub fn to_mcp(&self) -> Value {
        serde_json::to_value(self.mcp()).unwrap_or(Value::Null)
    }
}

#[derive(Serialize)]
struct McpToolList<'a> {
    tools: Vec<McpTool<'a>>,
}

/// The set of tools served at one time.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
    /// The whole `tools/list` result, serialized on first use: serving does not use it
    /// (the MCP layer lists per client), and for GitHub's spec it is 5 MB held through
    /// loading's peak.
    list_json: std::sync::OnceLock<Arc<str>>,
    /// Each API's declared security schemes, by API name.
    security_schemes: HashMap<String, BTreeMap<String, SecurityScheme>>,
    /// How each API's tools are offered, by API name.
    listings: BTreeMap<String, Listing>,
}

impl Catalog {
    pub fn tools(&self) -> &[Tool] {
        &self.tools
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

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The security schemes API `api` declares (empty when it declares none); `None` for an
    /// API not in the catalog.
    pub fn security_schemes(&self, api: &str) -> Option<&BTreeMap<String, SecurityScheme>> {
        self.security_schemes.get(api)
    }

    /// How API `api` offers its tools (`All` for an API not in the catalog).
    pub fn listing(&self, api: &str) -> Option<&Listing> {
        self.listings.get(api)
    }

    /// True when `tool` appears in `tools/list` itself (its API lists every tool, or it is
    /// pinned); else it is reached through the discovery tools.
    pub fn is_listed(&self, tool: &Tool) -> bool {
        self.listings.get(&tool.route.api).is_none_or(|listing| {
            listing.discovery == Discovery::All || listing.pinned.contains(&tool.name)
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

/// Length of `value` as compact JSON, counted without building the text.
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail, and plain data always serializes.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// One API's loaded description and its settings.
pub struct ApiInput<'a> {
    pub name: &'a str,
    /// `None` for an API made only of hand-written tools.
    pub docs: Option<&'a DocumentSet>,
    pub base_url: Option<&'a str>,
    pub prefix: &'a str,
    pub selection: Selection<'a>,
    /// restmcp overlays in the order they apply: (file name, contents).
    pub overlays: &'a [(String, OverlayFile)],
    /// Answer calls from the spec instead of calling the upstream.
    pub mock: bool,
    /// How the tools are offered, and the ones listed whatever the mode.
    pub discovery: Discovery,
    pub pinned: &'a [String],
    /// Overrides `tools.max_description_length`.
    pub max_description_length: Option<usize>,
    /// Longest argument description; 0 or `None` = no limit.
    pub max_parameter_description_length: Option<usize>,
    /// `apis.NAME.accept`: the `Accept` header of every tool of the API, instead of the one
    /// built from the spec (an overlay's `accept` still wins).
    pub accept: Option<&'a str>,
}

impl<'a> ApiInput<'a> {
    /// An API with every setting at its default: all operations, no base URL override,
    /// no prefix, no overlays, listed in full.
    pub fn new(name: &'a str, docs: Option<&'a DocumentSet>) -> ApiInput<'a> {
        ApiInput {
            name,
            docs,
            base_url: None,
            prefix: "",
            selection: Selection::default(),
            overlays: &[],
            mock: false,
            discovery: Discovery::All,
            pinned: &[],
            max_description_length: None,
            max_parameter_description_length: None,
            accept: None,
        }
    }
}

/// How one API's tools are offered (see [`Discovery`]).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub discovery: Discovery,
    pub pinned: std::collections::BTreeSet<String>,
    /// The API's title (from its description), for the meta tools' descriptions.
    pub title: String,
}

/// Problems that make a catalog impossible (problems with single operations are reported,
/// not raised).
#[derive(Debug, Clone, thiserror::Error)]
pub enum CatalogError {
    #[error("API \"{api}\": {error}")]
    Spec { api: String, error: SpecError },
    #[error(
        "tool name \"{name}\" is produced by both {first} and {second}; rename one (overlay `name`) or give one of the APIs a `prefix`"
    )]
    DuplicateName {
        name: String,
        first: String,
        second: String,
    },
    #[error("API \"{api}\": {error}")]
    Patch { api: String, error: PatchError },
    #[error("apis.{api}.pinned: no tool is named \"{name}\"{}", suggestion.as_ref().map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default())]
    UnknownPinned {
        api: String,
        name: String,
        suggestion: Option<String>,
    },
}

/// Synthesizes the tools of every API.
pub fn build(
    apis: &[ApiInput<'_>],
    settings: &ToolSettings,
) -> Result<(Catalog, Report), CatalogError> {
    let mut catalog = Catalog::default();
    let mut report = Report::default();
    let mut owners: HashMap<String, String> = HashMap::new();
    for input in apis {
        let (tools, api_report, schemes) = build_api(input, settings)?;
        catalog
            .security_schemes
            .insert(input.name.to_string(), schemes);
        for pinned in input.pinned {
            if !tools.iter().any(|tool| &tool.name == pinned) {
                let known: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(CatalogError::UnknownPinned {
                    api: input.name.to_string(),
                    name: pinned.clone(),
                    suggestion: naming::closest(pinned, &known).map(str::to_string),
                });
            }
        }
        catalog.listings.insert(
            input.name.to_string(),
            Listing {
                discovery: input.discovery,
                pinned: input.pinned.iter().cloned().collect(),
                title: api_report.title.clone(),
            },
        );
        for tool in tools {
            let owner = format!("API \"{}\" {}", input.name, tool.origin.operation);
            if let Some(first) = owners.get(&tool.name) {
                return Err(CatalogError::DuplicateName {
                    name: tool.name.clone(),
                    first: first.clone(),
                    second: owner,
                });
            }
            owners.insert(tool.name.clone(), owner);
            catalog
                .by_name
                .insert(tool.name.clone(), catalog.tools.len());
            catalog.tools.push(tool);
        }
        report.apis.push(api_report);
    }
    report.list_bytes = json_len(&McpToolList {
        tools: catalog.tools.iter().map(Tool::mcp).collect(),
    });
    Ok((catalog, report))
}

type BuiltApi = (Vec<Tool>, ApiReport, BTreeMap<String, SecurityScheme>);

/// The base URL of an API in mock mode that has none: requests are built as usual and
/// answered in-process, so this host is never contacted.
pub const MOCK_BASE_URL: &str = "http://mock.restmcp.invalid";

/// The patches that apply to one operation, in order: its `x-mcp`, then the overlays.
type Patches<'p> = Vec<(PatchSource, std::borrow::Cow<'p, ToolPatch>)>;

fn build_api(input: &ApiInput<'_>, settings: &ToolSettings) -> Result<BuiltApi, CatalogError> {
    let patch_error = |error: PatchError| CatalogError::Patch {
        api: input.name.to_string(),
        error,
    };
    let mut tools = Vec::new();
    let mut operations = Vec::new();
    let mut report = ApiReport {
        name: input.name.to_string(),
        source: String::new(),
        version: None,
        title: String::new(),
        operations: Vec::new(),
        notes: Vec::new(),
        budget: None,
        dialects: Vec::new(),
    };
    let mut schemes = BTreeMap::new();
    if let Some(docs) = input.docs {
        let api = spec::normalize(docs).map_err(|error| CatalogError::Spec {
            api: input.name.to_string(),
            error,
        })?;
        let file = &docs.root().name;
        let mut patches = patches_by_operation(&api, file, input.overlays).map_err(patch_error)?;
        let cx = Context {
            api: input.name,
            version: api.version,
            base_url: input.base_url,
            max_description_length: input
                .max_description_length
                .unwrap_or(settings.max_description_length),
            max_output_schema_bytes: settings.max_output_schema_bytes,
            max_parameter_description_length: input.max_parameter_description_length.unwrap_or(0),
            mock: input.mock,
        };
        let mut kept: Vec<(&spec::Operation<'_>, Patches<'_>)> = Vec::new();
        for (op, op_patches) in api.operations.iter().zip(patches.iter_mut()) {
            let location = format!("{file}#{}", op.pointer);
            let candidate = Candidate {
                method: op.method,
                path: &op.path,
                operation_id: op.operation_id.as_deref(),
                tags: &op.tags,
            };
            if let Some(reason) = input.selection.exclusion(&candidate) {
                operations.push(OperationReport::left_out(
                    op.index,
                    op.label(),
                    location,
                    OperationOutcome::Excluded { reason },
                ));
                continue;
            }
            let hidden_by = op_patches
                .iter()
                .rev()
                .find_map(|(source, patch)| patch.hidden.map(|h| (h, source)))
                .filter(|(hidden, _)| *hidden)
                .map(|(_, source)| format!("{} {}", source.kind, source.at(&["hidden"])));
            if let Some(by) = hidden_by {
                operations.push(OperationReport::left_out(
                    op.index,
                    op.label(),
                    location,
                    OperationOutcome::Hidden { by },
                ));
                continue;
            }
            kept.push((op, std::mem::take(op_patches)));
        }
        let ops: Vec<&spec::Operation<'_>> = kept.iter().map(|(op, _)| *op).collect();
        let mut drafts: Vec<(Draft, &spec::Operation<'_>, Patches<'_>)> = Vec::new();
        for ((op, op_patches), result) in kept.into_iter().zip(synthesize_all(&cx, docs, &ops)) {
            match result {
                Ok(draft) => drafts.push((draft, op, op_patches)),
                Err(reason) => operations.push(OperationReport::skipped(
                    op.index,
                    op.label(),
                    format!("{file}#{}", op.pointer),
                    reason,
                )),
            }
        }
        for skipped in &api.skipped {
            operations.push(OperationReport::skipped(
                skipped.index,
                skipped.operation.clone(),
                format!("{file}#{}", skipped.pointer),
                skipped.reason.clone(),
            ));
        }
        let requests: Vec<_> = drafts.iter().map(|(d, _, _)| d.naming.clone()).collect();
        let names = naming::assign(&requests, input.prefix, settings.max_name_length);
        let limits = PatchLimits {
            max_name_length: settings.max_name_length,
            config_accept: input.accept.is_some(),
        };
        for ((mut draft, op, op_patches), named) in drafts.into_iter().zip(names) {
            let undeclared: std::collections::BTreeSet<&String> = op
                .security
                .iter()
                .flat_map(|alternative| alternative.keys())
                .filter(|scheme| !api.security_schemes.contains_key(*scheme))
                .collect();
            for scheme in undeclared {
                draft.notes.push(format!(
                    "security requirement names scheme \"{scheme}\", which the description does not declare"
                ));
            }
            let source = op.operation_id.clone().unwrap_or_else(|| op.label());
            let mut tool = Tool {
                name: named.name.clone(),
                title: draft.title.take(),
                description: std::mem::take(&mut draft.description),
                input_schema: draft.input_schema.clone(),
                output_schema: draft.output_schema.clone(),
                annotations: draft.annotations,
                route: draft.route.clone(),
                origin: Origin {
                    api: input.name.to_string(),
                    operation_id: op.operation_id.clone(),
                    operation: op.label(),
                    location: format!("{file}#{}", op.pointer),
                    tags: op.tags.clone(),
                },
                provenance: std::mem::take(&mut draft.provenance),
            };
            if let Some(accept) = input.accept {
                tool.route.accept = accept.trim().to_string();
                tool.note("accept", format!("config apis.{}.accept", input.name));
            }
            for (patch_source, patch) in &op_patches {
                patch::apply(&mut tool, patch, patch_source, &limits).map_err(patch_error)?;
            }
            let changes = if tool.name == named.name {
                named.changes
            } else {
                Vec::new()
            };
            operations.push(OperationReport::mapped(
                op.index,
                op.label(),
                format!("{file}#{}", op.pointer),
                tool.name.clone(),
                source,
                changes,
                &draft,
            ));
            tools.push(tool);
        }
        operations.sort_by_key(|o| o.index);
        report.source = file.clone();
        report.version = Some(api.version);
        report.title = api.title.clone();
        schemes = api.security_schemes;
    }
    let cx = handwritten::ApiContext {
        api: input.name,
        base_url: input.base_url.or(input.mock.then_some(MOCK_BASE_URL)),
        mock: input.mock,
        max_name_length: settings.max_name_length,
        accept: input.accept,
    };
    for (file, overlay) in input.overlays {
        for (name, new_tool) in &overlay.add.0 {
            let source = PatchSource {
                kind: "overlay",
                location: format!("{file}#/add/{}", crate::json::escape_token(name)),
            };
            let tool = handwritten::build(&cx, name, new_tool, &source).map_err(patch_error)?;
            let candidate = Candidate {
                method: tool.route.method,
                path: &tool.route.path,
                operation_id: Some(name),
                tags: &[],
            };
            let index = operations.len();
            if let Some(reason) = input.selection.exclusion(&candidate) {
                operations.push(OperationReport::left_out(
                    index,
                    tool.origin.operation.clone(),
                    source.location,
                    OperationOutcome::Excluded { reason },
                ));
                continue;
            }
            operations.push(OperationReport::hand_written(index, &tool));
            tools.push(tool);
        }
        if report.source.is_empty() {
            report.source = file.clone();
        }
    }
    let mut seen: HashMap<&str, &Tool> = HashMap::new();
    for tool in &tools {
        if let Some(first) = seen.insert(&tool.name, tool) {
            return Err(CatalogError::DuplicateName {
                name: tool.name.clone(),
                first: format!(
                    "API \"{}\" {} ({})",
                    input.name, first.origin.operation, first.origin.location
                ),
                second: format!("{} ({})", tool.origin.operation, tool.origin.location),
            });
        }
    }
    report.operations = operations;
    Ok((tools, report, schemes))
}

/// Matches every overlay entry (and `x-mcp` extension) to its operation; an entry that
/// matches none is an error, since it most likely has a typo.
fn patches_by_operation<'p>(
    api: &spec::Api<'_>,
    file: &str,
    overlays: &'p [(String, OverlayFile)],
) -> Result<Vec<Patches<'p>>, PatchError> {
    let mut patches: Vec<Patches<'p>> = api.operations.iter().map(|_| Vec::new()).collect();
    for (op, op_patches) in api.operations.iter().zip(patches.iter_mut()) {
        if let Some(extension) = &op.x_mcp {
            let location = format!("{file}#{}/x-mcp", op.pointer);
            let patch = patch::parse_extension(extension, &location)?;
            op_patches.push((
                PatchSource {
                    kind: patch::SPEC_EXTENSION,
                    location,
                },
                std::borrow::Cow::Owned(patch),
            ));
        }
    }
    for (overlay_file, overlay) in overlays {
        for (key, patch) in &overlay.tools.0 {
            let location = format!("{overlay_file}#/tools/{}", crate::json::escape_token(key));
            let found = api.operations.iter().position(|op| {
                op.operation_id.as_deref() == Some(key.as_str())
                    || select::same_label(key, &op.label())
            });
            match found {
                Some(i) => patches[i].push((
                    PatchSource {
                        kind: "overlay",
                        location,
                    },
                    std::borrow::Cow::Borrowed(patch),
                )),
                None if api
                    .skipped
                    .iter()
                    .any(|s| select::same_label(key, &s.operation)) => {}
                None => {
                    let known: Vec<String> = api
                        .operations
                        .iter()
                        .map(|op| op.operation_id.clone().unwrap_or_else(|| op.label()))
                        .collect();
                    let known: Vec<&str> = known.iter().map(String::as_str).collect();
                    let hint = naming::closest(key, &known)
                        .map(|c| format!("; did you mean \"{c}\"?"))
                        .unwrap_or_default();
                    return Err(PatchError::new(
                        location,
                        format!("no operation has operationId or label \"{key}\"{hint}"),
                    ));
                }
            }
        }
    }
    Ok(patches)
}

/// Synthesizes operations on all available cores, results in operation order. Each
/// thread builds its own `$ref` graph: a tool's result never depends on the graph's state,
/// so the output is the same however the work is split.
fn synthesize_all(
    cx: &Context<'_>,
    docs: &DocumentSet,
    operations: &[&spec::Operation<'_>],
) -> Vec<Result<Draft, String>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    let run = |chunk: &[&spec::Operation<'_>]| {
        let mut graph = RefGraph::new(docs);
        chunk
            .iter()
            .map(|op| synthesize::synthesize(cx, &mut graph, op))
            .collect::<Vec<_>>()
    };
    if threads <= 1 || operations.len() < 64 {
        return run(operations);
    }
    let chunk_size = operations.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = operations
            .chunks(chunk_size)
            .map(|chunk| scope.spawn(move || run(chunk)))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| match handle.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests;
