//! The catalog: the tools synthesized from every configured API.
//!
//! This stage turns normalized operations into MCP tools: names ([`naming`]), input and
//! output schemas (via [`crate::schema`]), annotations, and for each tool the
//! [`ArgumentMap`] the dispatcher uses to build the upstream request. It also produces the
//! [`Report`] behind `restmcp check`. It knows nothing of transports; the MCP layer serves
//! [`Tool::to_mcp`] as-is.

pub mod arguments;
pub mod naming;
pub mod report;
mod synthesize;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use arguments::{ArgumentMap, Binding, BodyPlan, Location};
pub use naming::NameChange;
pub use report::{ApiReport, OperationReport, Outcome, Report};

use crate::config::ToolSettings;
use crate::schema::RefGraph;
use crate::spec::{self, DocumentSet, Method, SecurityRequirement, SecurityScheme, SpecError};
use synthesize::{Context, Draft};

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
    /// The path template, `/pets/{petId}`.
    pub path: String,
    /// Config override, else the first absolute server URL; no trailing slash.
    pub base_url: Option<String>,
    pub arguments: ArgumentMap,
    pub body: Option<BodyPlan>,
    pub output: Option<OutputPlan>,
    /// The operation's effective security requirements: alternatives, any one of which
    /// suffices (an empty one means anonymous access). Empty when none is required.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRequirement>,
}

/// One MCP tool and where it came from.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
    pub route: Route,
    pub origin: Origin,
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
    pub input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<&'a Value>,
    pub annotations: &'a Annotations,
}

impl Tool {
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
    /// The whole `tools/list` result, serialized once when the catalog is built.
    list_json: Arc<str>,
    /// Each API's declared security schemes, by API name.
    security_schemes: HashMap<String, BTreeMap<String, SecurityScheme>>,
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

    /// The `tools/list` result, `{"tools": […]}`, as compact JSON.
    pub fn list_json(&self) -> &Arc<str> {
        &self.list_json
    }

    fn serialize_list(tools: &[Tool]) -> Arc<str> {
        let list = McpToolList {
            tools: tools.iter().map(Tool::mcp).collect(),
        };
        // Serializing plain data into a String cannot fail.
        serde_json::to_string(&list).unwrap_or_default().into()
    }
}

/// One API's loaded description and its settings.
pub struct ApiInput<'a> {
    pub name: &'a str,
    pub docs: &'a DocumentSet,
    pub base_url: Option<&'a str>,
    pub prefix: &'a str,
}

/// Problems that make a catalog impossible (problems with single operations are reported,
/// not raised).
#[derive(Debug, Clone, thiserror::Error)]
pub enum CatalogError {
    #[error("API \"{api}\": {error}")]
    Spec { api: String, error: SpecError },
    #[error(
        "tool name \"{name}\" is produced by both {first} and {second}; give one of the APIs a `prefix`"
    )]
    DuplicateName {
        name: String,
        first: String,
        second: String,
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
    catalog.list_json = Catalog::serialize_list(&catalog.tools);
    report.list_bytes = catalog.list_json.len();
    Ok((catalog, report))
}

type BuiltApi = (Vec<Tool>, ApiReport, BTreeMap<String, SecurityScheme>);

fn build_api(input: &ApiInput<'_>, settings: &ToolSettings) -> Result<BuiltApi, CatalogError> {
    let api = spec::normalize(input.docs).map_err(|error| CatalogError::Spec {
        api: input.name.to_string(),
        error,
    })?;
    let cx = Context {
        api: input.name,
        version: api.version,
        base_url: input.base_url,
        max_description_length: settings.max_description_length,
        max_output_schema_bytes: settings.max_output_schema_bytes,
    };
    let file = &input.docs.root().name;
    let mut drafts: Vec<(Draft, &spec::Operation<'_>)> = Vec::new();
    let mut operations = Vec::new();
    for (op, result) in api
        .operations
        .iter()
        .zip(synthesize_all(&cx, input.docs, &api.operations))
    {
        match result {
            Ok(draft) => drafts.push((draft, op)),
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
    let requests: Vec<_> = drafts.iter().map(|(d, _)| d.naming.clone()).collect();
    let names = naming::assign(&requests, input.prefix, settings.max_name_length);
    let mut tools = Vec::with_capacity(drafts.len());
    for ((mut draft, op), named) in drafts.into_iter().zip(names) {
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
        operations.push(OperationReport::mapped(
            op.index,
            op.label(),
            format!("{file}#{}", op.pointer),
            named.name.clone(),
            source,
            named.changes,
            &draft,
        ));
        tools.push(Tool {
            name: named.name,
            title: draft.title,
            description: draft.description,
            input_schema: draft.input_schema,
            output_schema: draft.output_schema,
            annotations: draft.annotations,
            route: draft.route,
            origin: Origin {
                api: input.name.to_string(),
                operation_id: op.operation_id.clone(),
                operation: op.label(),
                location: format!("{file}#{}", op.pointer),
                tags: op.tags.clone(),
            },
        });
    }
    operations.sort_by_key(|o| o.index);
    let api_report = ApiReport {
        name: input.name.to_string(),
        source: file.clone(),
        version: api.version,
        title: api.title.clone(),
        operations,
    };
    Ok((tools, api_report, api.security_schemes))
}

/// Synthesizes operations on all available cores, results in operation order. Each
/// thread builds its own `$ref` graph: a tool's result never depends on the graph's state,
/// so the output is the same however the work is split.
fn synthesize_all(
    cx: &Context<'_>,
    docs: &DocumentSet,
    operations: &[spec::Operation<'_>],
) -> Vec<Result<Draft, String>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    let run = |chunk: &[spec::Operation<'_>]| {
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
