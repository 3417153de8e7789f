//! Building the catalog: each configured API's description normalized, its operations
//! selected, synthesized (in parallel), named, and patched by `x-mcp` and the operator's
//! overlay files; then the overlays' hand-written tools added, and the names checked to be
//! unique across all APIs. [`build()`] returns the [`Catalog`] with its [`Report`].

use std::collections::{BTreeMap, HashMap};

use super::patch::{self, OverlayFile, PatchError, PatchLimits, PatchSource, ToolPatch};
use super::report::{ApiReport, Findings, OperationOutcome, OperationReport, Report};
use super::select::{self, Candidate, Selection};
use super::synthesize::{self, Context, Draft};
use super::{
    Annotations, AutoChoice, Catalog, Confirmation, Listing, MOCK_BASE_URL, Origin, SharedSchemas,
    Tool, handwritten, naming,
};
use crate::config::{ConfirmPolicy, DiscoveryMode, ToolSettings};
use crate::schema::RefGraph;
use crate::spec::{self, DocumentSet, SecurityScheme, SpecError};

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
    pub discovery: DiscoveryMode,
    pub pinned: &'a [String],
    /// Overrides `tools.max_description_length`.
    pub max_description_length: Option<usize>,
    /// Longest argument description; 0 or `None` = no limit.
    pub max_parameter_description_length: Option<usize>,
    /// `apis.NAME.accept`: the `Accept` header of every tool of the API, instead of the one
    /// built from the spec (an overlay's `accept` still wins).
    pub accept: Option<&'a str>,
    /// `apis.NAME.confirm`: which tools a human confirms before their requests are sent
    /// (an overlay's `confirm` wins per tool).
    pub confirm: Option<&'a ConfirmPolicy>,
    /// `apis.NAME.idempotency_header`: POST and PATCH tools get an optional argument sent
    /// in this header.
    pub idempotency_header: Option<&'a str>,
    /// `apis.NAME.long_running`: tools followed as long-running operations.
    pub long_running: &'a [String],
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
            discovery: DiscoveryMode::All,
            pinned: &[],
            max_description_length: None,
            max_parameter_description_length: None,
            accept: None,
            confirm: None,
            idempotency_header: None,
            long_running: &[],
        }
    }
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
    /// A setting that lists tools by name (`pinned`, `confirm`, `long_running`) names one
    /// there is not.
    #[error("apis.{api}.{key}: no tool is named \"{name}\"{}", suggestion.as_ref().map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default())]
    UnknownToolName {
        api: String,
        key: &'static str,
        name: String,
        suggestion: Option<String>,
    },
    /// A prompt or resource that cannot be served as written.
    #[error("{location}: {problem}")]
    Surface { location: String, problem: String },
}

/// Synthesizes the tools of every API.
pub fn build(
    apis: &[ApiInput<'_>],
    settings: &ToolSettings,
) -> Result<(Catalog, Report), CatalogError> {
    let mut catalog = Catalog::default();
    let mut report = Report::default();
    let mut all_bytes = 0;
    for input in apis {
        let (mut tools, api_report, schemes) = build_api(input, settings)?;
        catalog
            .security_schemes
            .insert(input.name.to_string(), schemes);
        if let Some(ConfirmPolicy::Tools(names)) = input.confirm {
            names_tools(input.name, "confirm", names, &tools)?;
        }
        names_tools(input.name, "pinned", input.pinned, &tools)?;
        names_tools(input.name, "long_running", input.long_running, &tools)?;
        for tool in &mut tools {
            if tool.route.long_running.is_none() && input.long_running.contains(&tool.name) {
                tool.route.long_running = Some(crate::spec::FinalState::Default);
                let source = format!("config apis.{}.long_running", input.name);
                tool.note("long_running", source);
            }
        }
        let bytes = listed_bytes(&tools);
        all_bytes += bytes;
        let (discovery, chosen) = match input.discovery {
            DiscoveryMode::Auto => {
                let tokens = bytes.div_ceil(super::savings::BYTES_PER_TOKEN);
                let (mode, choice) = AutoChoice::settle(tokens, settings.auto_budget_tokens);
                (mode, Some(choice))
            }
            configured => (configured, None),
        };
        catalog.listings.insert(
            input.name.to_string(),
            Listing {
                discovery,
                chosen,
                pinned: input.pinned.iter().cloned().collect(),
                title: api_report.title.clone(),
                bytes,
            },
        );
        catalog.tools.reserve(tools.len());
        for tool in tools {
            if let Some(&first) = catalog.by_name.get(&tool.name) {
                let owner =
                    |tool: &Tool| format!("API \"{}\" {}", tool.origin.api, tool.origin.operation);
                return Err(CatalogError::DuplicateName {
                    name: tool.name.clone(),
                    first: owner(&catalog.tools[first]),
                    second: owner(&tool),
                });
            }
            catalog
                .by_name
                .insert(tool.name.clone(), catalog.tools.len());
            catalog.tools.push(tool);
        }
        report.apis.push(api_report);
    }
    // `{"tools":[` and `]}` around the tools, less the separator after the last one.
    report.list_bytes = r#"{"tools":[]}"#.len() + all_bytes.saturating_sub(1);
    Ok((catalog, report))
}

/// The bytes `tools` add to `tools/list`: each one's compact JSON and a separator, as the
/// report's discovery budget counts them.
fn listed_bytes(tools: &[Tool]) -> usize {
    crate::parallel::on_all_cores(tools, |tool| crate::json::compact_len(&tool.mcp()) + 1)
        .into_iter()
        .sum()
}

/// Settles whether a human confirms the tool's calls, when no overlay said: as the API's
/// `confirm` policy says of its hints. Hints a spec's `x-mcp` (or an unlisted overlay)
/// relaxed (a DELETE marked not destructive) do not waive confirmation: the policy then
/// sees the cautious ones the method gave (`synthesized`).
fn resolve_confirmation(tool: &mut Tool, policy: Option<&ConfirmPolicy>, synthesized: Annotations) {
    if tool.route.confirm != Confirmation::Policy {
        return;
    }
    let from_spec = tool.provenance.iter().any(|(what, from)| {
        what == "annotations"
            && (from.starts_with(patch::SPEC_EXTENSION)
                || from.starts_with(patch::UNLISTED_OVERLAY))
    });
    let hints = tool.annotations;
    let (destructive, read_only) = if from_spec {
        (
            hints.destructive_hint || synthesized.destructive_hint,
            hints.read_only_hint && synthesized.read_only_hint,
        )
    } else {
        (hints.destructive_hint, hints.read_only_hint)
    };
    let needed = policy.is_some_and(|policy| policy.covers(&tool.name, destructive, read_only));
    tool.route.confirm = if needed {
        Confirmation::Always
    } else {
        Confirmation::Never
    };
}

/// Checks that every name `key` lists is a tool of the API, suggesting the closest.
fn names_tools(
    api: &str,
    key: &'static str,
    names: &[String],
    tools: &[Tool],
) -> Result<(), CatalogError> {
    for name in names {
        if !tools.iter().any(|tool| &tool.name == name) {
            let known: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return Err(CatalogError::UnknownToolName {
                api: api.to_string(),
                key,
                name: name.clone(),
                suggestion: naming::closest(name, &known).map(str::to_string),
            });
        }
    }
    Ok(())
}

/// The header name an operation may declare for idempotency keys without any setting.
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// The argument restmcp adds for `apis.NAME.idempotency_header`.
const IDEMPOTENCY_ARGUMENT: &str = "idempotency_key";

/// Settles how a non-idempotent tool sends idempotency keys: through the header parameter
/// the operation declares (named `Idempotency-Key`, or `configured`), else, with
/// `configured`, through an optional argument restmcp adds for POST and PATCH.
fn plan_idempotency(tool: &mut Tool, configured: Option<&str>) {
    if tool.route.method.is_idempotent() {
        return;
    }
    let named = |wire: &str| {
        wire.eq_ignore_ascii_case(IDEMPOTENCY_KEY)
            || configured.is_some_and(|header| wire.eq_ignore_ascii_case(header))
    };
    let declared = tool
        .route
        .arguments
        .bindings
        .iter()
        .find(|b| b.location == super::arguments::Location::Header && named(&b.wire_name));
    if let Some(binding) = declared {
        if binding.fixed.is_none() {
            tool.route.idempotency = Some(super::Idempotency {
                header: binding.wire_name.clone(),
                argument: binding.argument.clone(),
            });
        }
        return;
    }
    let Some(header) = configured else {
        return;
    };
    if !matches!(tool.route.method, spec::Method::Post | spec::Method::Patch)
        || tool.route.arguments.get(IDEMPOTENCY_ARGUMENT).is_some()
    {
        return;
    }
    let added = tool.input_schema.edit(|schema| {
        let Some(object) = schema.as_object_mut() else {
            return false;
        };
        let properties = object
            .entry("properties")
            .or_insert_with(|| serde_json::json!({}));
        let Some(properties) = properties.as_object_mut() else {
            return false;
        };
        if properties.contains_key(IDEMPOTENCY_ARGUMENT) {
            return false;
        }
        properties.insert(
            IDEMPOTENCY_ARGUMENT.into(),
            serde_json::json!({
                "type": "string",
                "description": format!(
                    "Sent as {header}. Give the same key when retrying this call: a repeat \
                     with the same arguments returns the first result instead of acting twice."
                ),
            }),
        );
        true
    });
    if !added {
        return;
    }
    tool.route
        .arguments
        .bindings
        .push(super::arguments::Binding::header(
            IDEMPOTENCY_ARGUMENT,
            header,
        ));
    tool.route.idempotency = Some(super::Idempotency {
        header: header.to_string(),
        argument: IDEMPOTENCY_ARGUMENT.into(),
    });
    let source = format!("config apis.{}.idempotency_header", tool.route.api);
    tool.note("idempotency_key", source);
}

type BuiltApi = (Vec<Tool>, ApiReport, BTreeMap<String, SecurityScheme>);

/// The patches that apply to one operation, in order: its `x-mcp`, then the overlays.
type Patches<'p> = Vec<(PatchSource, std::borrow::Cow<'p, ToolPatch>)>;

/// One API's tools (synthesized from its description, patched, then its hand-written ones),
/// its report, and the security schemes it declares.
fn build_api(input: &ApiInput<'_>, settings: &ToolSettings) -> Result<BuiltApi, CatalogError> {
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
        scopes: Default::default(),
    };
    let mut schemes = BTreeMap::new();
    if let Some(docs) = input.docs {
        let api;
        (api, tools) = described_tools(input, settings, docs, &mut operations)?;
        operations.sort_by_key(|o| o.index);
        report.source = docs.root().name.clone();
        report.version = Some(api.version);
        report.title = api.title;
        schemes = api.security_schemes;
    }
    add_hand_written(
        input,
        settings,
        &mut tools,
        &mut operations,
        &mut report.source,
    )
    .map_err(|error| patch_error(input, error))?;
    for tool in &mut tools {
        let own = tool.annotations;
        resolve_confirmation(tool, input.confirm, own);
        plan_idempotency(tool, input.idempotency_header);
    }
    unique_names(input.name, &tools)?;
    report.operations = operations;
    Ok((tools, report, schemes))
}

/// A patch error of the API `input`.
fn patch_error(input: &ApiInput<'_>, error: PatchError) -> CatalogError {
    CatalogError::Patch {
        api: input.name.to_string(),
        error,
    }
}

/// How many path items are read at once: their operations are selected and synthesized,
/// and the parsed path items dropped, before the next ones are read (GitHub's 811 path
/// items, built whole, take about 23 MB).
const PATH_ITEMS_PER_PART: usize = 64;

/// The tools of an API's description: its operations read a part at a time
/// ([`spec::normalize_in_parts`]), selected, synthesized (in parallel), then all named and
/// patched; each operation's fate goes to `operations`. Also the API but its operations.
fn described_tools(
    input: &ApiInput<'_>,
    settings: &ToolSettings,
    docs: &DocumentSet,
    operations: &mut Vec<OperationReport>,
) -> Result<(spec::Api<'static>, Vec<Tool>), CatalogError> {
    let file = &docs.root().name;
    let shared = SharedSchemas::default();
    let mut described = Described {
        input,
        file,
        matcher: PatchMatcher::new(file, input.overlays),
        workers: (0..crate::parallel::threads())
            .map(|_| (RefGraph::new(docs), synthesize::FullDefs::default()))
            .collect(),
        operations,
        drafts: Vec::new(),
    };
    let walked = spec::normalize_in_parts(docs, PATH_ITEMS_PER_PART, |api, ops, skipped| {
        let cx = context(input, settings, api.version, &shared);
        described.part(&cx, ops, skipped)
    });
    let api = match walked {
        Ok(Ok(api)) => api,
        Ok(Err(error)) => return Err(patch_error(input, error)),
        Err(error) => {
            return Err(CatalogError::Spec {
                api: input.name.to_string(),
                error,
            });
        }
    };
    described
        .matcher
        .finish()
        .map_err(|e| patch_error(input, e))?;
    let (operations, mut drafts) = (described.operations, described.drafts);
    let requests: Vec<_> = drafts
        .iter_mut()
        .map(|(d, _, _)| std::mem::take(&mut d.naming))
        .collect();
    let names = naming::assign(&requests, input.prefix, settings.max_name_length);
    let limits = PatchLimits {
        max_name_length: settings.max_name_length,
        config_accept: input.accept.is_some(),
    };
    let mut tools = Vec::with_capacity(drafts.len());
    operations.reserve(drafts.len());
    for (drafted, named) in drafts.into_iter().zip(names) {
        let (tool, operation) = patched_tool(input, &api, file, drafted, named, &limits)?;
        operations.push(operation);
        tools.push(tool);
    }
    Ok((api, tools))
}

/// How synthesis reads the API `input`.
fn context<'a>(
    input: &ApiInput<'a>,
    settings: &ToolSettings,
    version: spec::SpecVersion,
    shared: &'a SharedSchemas,
) -> Context<'a> {
    Context {
        api: input.name,
        version,
        base_url: input.base_url,
        max_description_length: input
            .max_description_length
            .unwrap_or(settings.max_description_length),
        max_output_schema_bytes: settings.max_output_schema_bytes,
        max_input_schema_bytes: settings.max_input_schema_bytes,
        shared,
        max_parameter_description_length: input.max_parameter_description_length.unwrap_or(0),
        mock: input.mock,
    }
}

/// What patching and the report need of a synthesized operation once its path item is
/// gone.
struct Made {
    index: usize,
    label: String,
    pointer: String,
    operation_id: Option<String>,
    tags: Vec<String>,
    /// The schemes its security requirements name.
    schemes: std::collections::BTreeSet<String>,
}

impl Made {
    fn of(op: &spec::Operation<'_>) -> Made {
        Made {
            index: op.index,
            label: op.label(),
            pointer: op.pointer.clone(),
            operation_id: op.operation_id.clone(),
            tags: op.tags.clone(),
            schemes: op
                .security
                .iter()
                .flat_map(|alternative| alternative.keys().cloned())
                .collect(),
        }
    }
}

/// One synthesizing thread's `$ref` graph and full-schema definitions, kept from one part
/// to the next (a tool's result never depends on their state, so the output is the same
/// however the work is split).
type Worker<'d> = (RefGraph<'d>, synthesize::FullDefs);

/// The drafts of an API's operations as its parts are read.
struct Described<'i, 'd, 'p> {
    input: &'i ApiInput<'p>,
    file: &'i str,
    matcher: PatchMatcher<'p>,
    workers: Vec<Worker<'d>>,
    operations: &'i mut Vec<OperationReport>,
    drafts: Vec<(Draft, Made, Patches<'p>)>,
}

impl<'d, 'p> Described<'_, 'd, 'p> {
    /// One part's operations patched, selected and synthesized; those skipped reported.
    fn part(
        &mut self,
        cx: &Context<'d>,
        ops: Vec<spec::Operation<'_>>,
        skipped: Vec<spec::Skipped>,
    ) -> Result<(), PatchError> {
        let mut kept = Vec::new();
        for op in &ops {
            let patches = self.matcher.patches(op)?;
            if let Some(patches) = self.kept(op, patches) {
                kept.push((op, patches));
            }
        }
        let chosen: Vec<&spec::Operation<'_>> = kept.iter().map(|(op, _)| *op).collect();
        let results = crate::parallel::on_all_cores_with(
            &mut self.workers,
            &chosen,
            |(graph, full_defs), op| synthesize::synthesize(cx, graph, full_defs, op),
        );
        for ((op, patches), result) in kept.into_iter().zip(results) {
            match result {
                Ok(draft) => self.drafts.push((draft, Made::of(op), patches)),
                Err(reason) => self.operations.push(OperationReport::skipped(
                    op.index,
                    op.label(),
                    format!("{}#{}", self.file, op.pointer),
                    reason,
                )),
            }
        }
        for skipped in skipped {
            self.matcher.skipped.push(skipped.operation.clone());
            self.operations.push(OperationReport::skipped(
                skipped.index,
                skipped.operation,
                format!("{}#{}", self.file, skipped.pointer),
                skipped.reason,
            ));
        }
        Ok(())
    }

    /// `patches` if the API's selection and the patches keep `op`; else `None`, and `op`
    /// reported (excluded, or hidden by the last patch that says so).
    fn kept(&mut self, op: &spec::Operation<'_>, patches: Patches<'p>) -> Option<Patches<'p>> {
        let location = format!("{}#{}", self.file, op.pointer);
        let candidate = Candidate {
            method: op.method,
            path: &op.path,
            operation_id: op.operation_id.as_deref(),
            tags: &op.tags,
        };
        if let Some(reason) = self.input.selection.exclusion(&candidate) {
            self.operations.push(OperationReport::left_out(
                op.index,
                op.label(),
                location,
                OperationOutcome::Excluded { reason },
            ));
            return None;
        }
        let hidden_by = patches
            .iter()
            .rev()
            .find_map(|(source, patch)| patch.hidden.map(|h| (h, source)))
            .filter(|(hidden, _)| *hidden)
            .map(|(_, source)| format!("{} {}", source.kind, source.at(&["hidden"])));
        if let Some(by) = hidden_by {
            self.operations.push(OperationReport::left_out(
                op.index,
                op.label(),
                location,
                OperationOutcome::Hidden { by },
            ));
            return None;
        }
        Some(patches)
    }
}

/// One synthesized operation's tool, named, with the API's `accept`, the operation's
/// patches and its confirmation settled; and its report.
fn patched_tool(
    input: &ApiInput<'_>,
    api: &spec::Api<'_>,
    file: &str,
    (mut draft, op, op_patches): (Draft, Made, Patches<'_>),
    named: naming::Named,
    limits: &PatchLimits,
) -> Result<(Tool, OperationReport), CatalogError> {
    let undeclared = op
        .schemes
        .iter()
        .filter(|scheme| !api.security_schemes.contains_key(*scheme));
    for scheme in undeclared {
        draft.notes.push(format!(
            "security requirement names scheme \"{scheme}\", which the description does not declare"
        ));
    }
    let source = op.operation_id.clone().unwrap_or_else(|| op.label.clone());
    let mut tool = Tool {
        name: named.name.clone(),
        title: draft.title,
        description: draft.description,
        input_schema: draft.input_schema,
        output_schema: draft.output_schema,
        annotations: draft.annotations,
        // Moved, not copied: its argument bindings and body plan were copied for each
        // tool, and the draft kept only for the parts the report takes from it.
        route: draft.route,
        origin: Origin {
            api: input.name.to_string(),
            operation_id: op.operation_id,
            operation: op.label.clone(),
            location: format!("{file}#{}", op.pointer),
            tags: op.tags,
        },
        provenance: draft.provenance,
        resource: None,
        workflow: None,
    };
    if let Some(accept) = input.accept {
        tool.route.accept = accept.trim().to_string();
        tool.note("accept", format!("config apis.{}.accept", input.name));
    }
    let synthesized = tool.annotations;
    for (patch_source, patch) in &op_patches {
        patch::apply(&mut tool, patch, patch_source, limits).map_err(|e| patch_error(input, e))?;
    }
    resolve_confirmation(&mut tool, input.confirm, synthesized);
    let changes = if tool.name == named.name {
        named.changes
    } else {
        Vec::new()
    };
    let operation = OperationReport::mapped(
        op.index,
        op.label,
        format!("{file}#{}", op.pointer),
        tool.name.clone(),
        source,
        changes,
        Findings {
            notes: draft.notes,
            schema_notes: draft.schema_notes,
            relaxed: draft.relaxed,
            hoisted: draft.hoisted,
        },
    );
    Ok((tool, operation))
}

/// Checks that no two of the API's tools share a name.
fn unique_names(api: &str, tools: &[Tool]) -> Result<(), CatalogError> {
    let mut seen: HashMap<&str, &Tool> = HashMap::new();
    for tool in tools {
        if let Some(first) = seen.insert(&tool.name, tool) {
            return Err(CatalogError::DuplicateName {
                name: tool.name.clone(),
                first: format!(
                    "API \"{}\" {} ({})",
                    api, first.origin.operation, first.origin.location
                ),
                second: format!("{} ({})", tool.origin.operation, tool.origin.location),
            });
        }
    }
    Ok(())
}

/// Adds the tools the API's overlay files write by hand (`add`), file by file after the
/// synthesized ones; the API's selection applies to them as to operations. An API made only
/// of hand-written tools takes its first overlay file as its source (`api_source`).
fn add_hand_written(
    input: &ApiInput<'_>,
    settings: &ToolSettings,
    tools: &mut Vec<Tool>,
    operations: &mut Vec<OperationReport>,
    api_source: &mut String,
) -> Result<(), PatchError> {
    let cx = handwritten::ApiContext {
        api: input.name,
        base_url: input.base_url.or(input.mock.then_some(MOCK_BASE_URL)),
        mock: input.mock,
        max_name_length: settings.max_name_length,
        accept: input.accept,
    };
    for (file, overlay) in input.overlays {
        for (name, new_tool) in &overlay.add.0 {
            let source = PatchSource::of_overlay(
                overlay,
                format!("{file}#/add/{}", crate::json::escape_token(name)),
            );
            let tool = handwritten::build(&cx, name, new_tool, &source)?;
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
        if api_source.is_empty() {
            *api_source = file.clone();
        }
    }
    Ok(())
}

/// Matches overlay entries (and `x-mcp` extensions) to operations as they are read: an
/// overlay entry goes to the first operation whose operationId or label it names. One
/// that names none is an error ([`PatchMatcher::finish`]), since it most likely has a typo.
struct PatchMatcher<'p> {
    file: String,
    overlays: &'p [(String, OverlayFile)],
    /// Per overlay file, the entries matched so far, by index.
    matched: Vec<std::collections::HashSet<usize>>,
    /// Every operation's operationId or label, for hints (kept only if there are overlays).
    known: Vec<String>,
    /// The labels of the operations skipped: an entry naming one is no typo.
    skipped: Vec<String>,
}

impl<'p> PatchMatcher<'p> {
    fn new(file: &str, overlays: &'p [(String, OverlayFile)]) -> PatchMatcher<'p> {
        PatchMatcher {
            file: file.to_string(),
            overlays,
            matched: overlays.iter().map(|_| Default::default()).collect(),
            known: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// The patches of the next operation, `op`: its `x-mcp`, then the overlay entries not
    /// matched yet that name it, file by file.
    fn patches(&mut self, op: &spec::Operation<'_>) -> Result<Patches<'p>, PatchError> {
        let mut patches: Patches<'p> = Vec::new();
        if let Some(extension) = &op.x_mcp {
            let location = format!("{}#{}/x-mcp", self.file, op.pointer);
            let patch = patch::parse_extension(extension, &location)?;
            patches.push((
                PatchSource {
                    kind: patch::SPEC_EXTENSION,
                    location,
                },
                std::borrow::Cow::Owned(patch),
            ));
        }
        let label = op.label();
        for ((overlay_file, overlay), matched) in self.overlays.iter().zip(&mut self.matched) {
            for (entry, (key, patch)) in overlay.tools.0.iter().enumerate() {
                let names_op = op.operation_id.as_deref() == Some(key.as_str())
                    || select::same_label(key, &label);
                if names_op && matched.insert(entry) {
                    let location =
                        format!("{overlay_file}#/tools/{}", crate::json::escape_token(key));
                    patches.push((
                        PatchSource::of_overlay(overlay, location),
                        std::borrow::Cow::Borrowed(patch),
                    ));
                }
            }
        }
        if !self.overlays.is_empty() {
            self.known.push(op.operation_id.clone().unwrap_or(label));
        }
        Ok(patches)
    }

    /// An error for the first overlay entry that named no operation (and no skipped one).
    fn finish(&self) -> Result<(), PatchError> {
        for ((overlay_file, overlay), matched) in self.overlays.iter().zip(&self.matched) {
            for (entry, (key, _)) in overlay.tools.0.iter().enumerate() {
                if matched.contains(&entry)
                    || self.skipped.iter().any(|s| select::same_label(key, s))
                {
                    continue;
                }
                let location = format!("{overlay_file}#/tools/{}", crate::json::escape_token(key));
                let known: Vec<&str> = self.known.iter().map(String::as_str).collect();
                let hint = naming::closest(key, &known)
                    .map(|c| format!("; did you mean \"{c}\"?"))
                    .unwrap_or_default();
                return Err(PatchError::new(
                    location,
                    format!("no operation has operationId or label \"{key}\"{hint}"),
                ));
            }
        }
        Ok(())
    }
}
