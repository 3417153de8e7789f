//! One MCP tool as the catalog holds it: what `tools/list` shows ([`Tool::mcp`]), its
//! [`Annotations`], where it came from ([`Origin`], provenance) and the [`Route`] the
//! dispatcher follows to call the upstream (base URL, argument map, body, output plan,
//! per-tool limits, and for an API in mock mode the [`MockAnswer`]).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::{ArgumentMap, BodyPlan, SchemaText};
use crate::spec::{Method, SecurityRequirement};

/// MCP tool annotations (all hints explicit, as clients otherwise assume the worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
}

impl Annotations {
    /// The hints `method` gives, every one explicit. Safe methods only read; DELETE, PUT and
    /// PATCH may overwrite or remove; POST is taken to add. Every tool reaches an external
    /// API.
    pub fn of_method(method: Method) -> Annotations {
        Annotations {
            read_only_hint: method.is_safe(),
            destructive_hint: matches!(method, Method::Delete | Method::Put | Method::Patch),
            idempotent_hint: method.is_idempotent(),
            open_world_hint: true,
        }
    }
}

/// Whether a call needs a human's confirmation ([`Route::confirm`]). While the catalog is
/// built, `Policy` stands for "as the API's `confirm` policy says"; a built catalog holds
/// only `Always` and `Never`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confirmation {
    #[default]
    Policy,
    Always,
    Never,
}

impl Confirmation {
    fn is_never(&self) -> bool {
        *self != Confirmation::Always
    }
}

/// How a call of a non-idempotent operation carries its idempotency key: every request
/// sends one in `header` (the `argument`'s value, else a generated one), and a key the
/// model gave makes a repeat of the call answer from the stored result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Idempotency {
    pub header: String,
    pub argument: String,
}

impl Route {
    /// A route to `method path` of `api` with nothing else settled: no base URL, arguments,
    /// body or output plan, `Accept: */*`, no security requirement, no per-tool limits or
    /// response fields, confirmation left to the API's policy, no idempotency key, not
    /// long-running, no mock answer, and the inputSchema published in full.
    pub fn new(api: impl Into<String>, method: Method, path: impl Into<String>) -> Route {
        Route {
            api: api.into(),
            method,
            path: path.into(),
            base_url: None,
            arguments: ArgumentMap::default(),
            body: None,
            output: None,
            accept: "*/*".into(),
            security: Vec::new(),
            timeout: None,
            max_response_bytes: None,
            max_result_tokens: None,
            response_fields: Vec::new(),
            confirm: Confirmation::Policy,
            idempotency: None,
            long_running: None,
            mock: None,
            ask: Vec::new(),
            full_input: None,
        }
    }

    /// Whether a human confirms each call of this tool before its request is sent.
    pub fn needs_confirmation(&self) -> bool {
        self.confirm == Confirmation::Always
    }
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
    /// Set by an overlay (replaces the API's result budget in estimated tokens) or a
    /// spec's `x-mcp` (can only lower it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_result_tokens: Option<ToolLimit<u64>>,
    /// Set by an overlay: only these fields of a JSON response are returned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub response_fields: Vec<String>,
    /// Whether a human confirms each call before its request is sent: set by an overlay
    /// (or a spec's `x-mcp`, which can only ask for it), else by `apis.NAME.confirm`.
    #[serde(skip_serializing_if = "Confirmation::is_never")]
    pub confirm: Confirmation,
    /// The header the upstream reads idempotency keys from, for a non-idempotent operation
    /// that has one (declared by the operation, or `apis.NAME.idempotency_header`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency: Option<Idempotency>,
    /// Set for an operation that may go on after its answer (marked
    /// `x-ms-long-running-operation`, documenting a 202, or named in
    /// `apis.NAME.long_running`): where its final result is read. A 202 naming a status
    /// monitor is followed for any tool; a marked one's 200 or 201 naming one
    /// (`Operation-Location`, `Azure-AsyncOperation`) is too.
    pub long_running: Option<crate::spec::FinalState>,
    /// For an API in mock mode: what the mock upstream answers.
    #[serde(skip)]
    pub mock: Option<Arc<MockAnswer>>,
    /// The arguments (by binding index) the user gives on every call (an overlay's
    /// `ask: true`), asked with a form.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ask: Vec<usize>,
    /// When the published inputSchema was relaxed to fit `tools.max_input_schema_bytes`:
    /// the full schemas of the arguments that lost something, which values are also
    /// checked against.
    #[serde(skip)]
    pub full_input: Option<Arc<FullInput>>,
}

/// The full schemas of a relaxed tool's arguments (see [`Route::full_input`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullInput {
    /// (index into the route's argument bindings, the argument's full schema). By binding,
    /// not by name, so that an overlay renaming the argument does not lose it.
    pub arguments: Vec<(usize, SchemaText)>,
    /// The `$defs` those schemas refer to; a def's text is shared by every tool whose
    /// full schema holds the same one (see [`super::SharedSchemas`]).
    pub defs: Vec<(String, SchemaText)>,
}

impl FullInput {
    /// The full schema of the argument at binding `index`, with its `$defs`, as a tree.
    pub fn argument_schema(&self, index: usize) -> Option<Value> {
        let (_, text) = self.arguments.iter().find(|(i, _)| *i == index)?;
        let mut schema = text.to_value();
        if let Value::Object(map) = &mut schema
            && !self.defs.is_empty()
        {
            map.insert("$defs".into(), self.defs_value());
        }
        Some(schema)
    }

    /// The definitions as a `$defs` object.
    fn defs_value(&self) -> Value {
        Value::Object(
            self.defs
                .iter()
                .map(|(name, def)| (name.clone(), def.to_value()))
                .collect(),
        )
    }
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

/// The base URL of an API in mock mode that has none: requests are built as usual and
/// answered in-process, so this host is never contacted.
pub const MOCK_BASE_URL: &str = "http://mock.restmcp.invalid";

/// The mock upstream's answer to a well-formed request: the documented success status and
/// media type, and the spec's example or a value generated from the response schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockAnswer {
    pub status: u16,
    /// `None` for a response without a body.
    pub media_type: Option<String>,
    pub body: Vec<u8>,
    /// Where the body came from, for `explain` and tests.
    pub source: MockSource,
}

/// Where a [`MockAnswer`]'s body came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockSource {
    /// The spec's response example.
    Example,
    /// Generated from the response schema (or a placeholder for a media type without one).
    Generated,
    /// No response body is documented.
    Empty,
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
    /// Served as a resource (or resource template) too, when the operator said so.
    pub resource: Option<Arc<super::Resource>>,
    /// For an Arazzo workflow's tool: what a call runs (its route then names the
    /// `[workflows]` table as its API and sends nothing itself).
    pub workflow: Option<Arc<super::program::WorkflowPlan>>,
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

    /// The inputSchema arguments are checked against: the published one, with the full
    /// schema of every argument that was relaxed to fit the budget (and the full `$defs`).
    pub fn full_input_schema(&self) -> Value {
        let mut schema = self.input_schema.to_value();
        let Some(full) = &self.route.full_input else {
            return schema;
        };
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for (index, text) in &full.arguments {
                let Some(binding) = self.route.arguments.bindings.get(*index) else {
                    continue;
                };
                if let Some(slot) = properties.get_mut(&binding.argument) {
                    *slot = text.to_value();
                }
            }
        }
        if let Value::Object(map) = &mut schema {
            // The published definitions stay: the arguments that were not relaxed (and
            // their hoisted repeats) refer to them. The full ones are named by their whole
            // pointer (`components.schemas.user`), the published ones by its last part, so
            // one does not overwrite the other.
            let mut defs = match map.shift_remove("$defs") {
                Some(Value::Object(defs)) => defs,
                _ => serde_json::Map::new(),
            };
            if let Value::Object(full_defs) = full.defs_value() {
                defs.extend(full_defs);
            }
            map.insert("$defs".into(), Value::Object(defs));
        }
        schema
    }

    /// [`Tool::mcp`] as a JSON value.
    pub fn to_mcp(&self) -> Value {
        serde_json::to_value(self.mcp()).unwrap_or(Value::Null)
    }
}
