//! `[apis.NAME]`: one upstream API: its spec and overlays, which operations become tools
//! (`include`/`exclude` filters), how calls reach it (base URL, timeouts, retries, rate
//! limits, redirects) and how its tools are offered (`discovery`). Its credentials are
//! [`super::auth`], its forwarded headers [`super::headers`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

use super::{AuthConfig, Dialect, ForwardHeader};

/// One upstream API.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
    /// A file path (relative to the file that set it) or an http(s) URL. An API without
    /// one has only the hand-written tools of its overlays.
    #[serde(default)]
    pub spec: Option<RelativePathBuf>,
    /// restmcp overlays or OpenAPI Overlay 1.0 documents, applied in order, with the
    /// operator's powers. A file `NAME.overlay.yaml` (or `.yml`, `.json`) beside a spec
    /// `NAME.yaml` is applied first without being listed, with a spec's powers only unless
    /// `loading.trust_conventional_overlays` is set.
    #[serde(default)]
    pub overlays: Vec<RelativePathBuf>,
    /// Keep only operations with safe methods (GET, HEAD, OPTIONS, TRACE).
    #[serde(default)]
    pub read_only: bool,
    /// Answer calls from the spec (its examples, or values generated from its schemas)
    /// instead of calling the upstream; requests are built and checked all the same.
    #[serde(default)]
    pub mock: bool,
    /// When given, only operations matching it become tools.
    #[serde(default)]
    pub include: Option<Filters>,
    /// Operations matching it do not become tools.
    #[serde(default)]
    pub exclude: Option<Filters>,
    /// Replaces the spec's `servers` / `host` as the base of every request.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Prepended to every tool name of this API.
    #[serde(default)]
    pub prefix: Option<String>,
    /// Seconds before a call to this API is abandoned (connection, retries and body).
    #[serde(default = "default_timeout_seconds")]
    pub timeout_seconds: f64,
    /// Per-tool overrides of `timeout_seconds`, keyed by tool name.
    #[serde(default)]
    pub tool_timeouts: BTreeMap<String, f64>,
    /// Response bodies are read up to this many bytes; the rest is left out and the
    /// result says how much.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
    /// Retries of an idempotent call after a connection failure, 429 or 503.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// The `Accept` header of every request to this API, replacing the one built from each
    /// operation's documented response media types (an overlay's `accept` still wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// Ask for compressed responses (`Accept-Encoding: gzip, deflate, br`). Off, nothing is
    /// asked for; a compressed answer is decoded either way.
    #[serde(default = "default_compression")]
    pub compression: bool,
    /// Origins (`https://cdn.example.com`) this API's redirects may lead to. Redirects
    /// within the API's own origin are always followed; to any other origin only when
    /// listed here, since the request (and its credentials) would go there.
    #[serde(default)]
    pub follow_redirects: Vec<String>,
    /// Origins besides the `base_url`'s own that may receive this API's credentials (a
    /// redirect target in `follow_redirects` that must get the API key header, say).
    /// Credentials never go where only the spec says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_origins: Vec<String>,
    /// Credentials per security scheme, keyed by the spec's scheme name (or a name of the
    /// config's own, with an explicit `type`).
    #[serde(default)]
    pub auth: BTreeMap<String, AuthConfig>,
    /// Headers of the incoming MCP request passed on to this API (case-insensitive names).
    #[serde(default)]
    pub forward_headers: Vec<ForwardHeader>,
    /// Path (below the base URL) that `server.readiness.probe_upstreams` GETs; default the
    /// base URL itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_path: Option<String>,
    /// Calls per second allowed to each tool of this API; more get an error result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    /// Per-tool overrides of `rate_limit`, keyed by tool name.
    #[serde(default)]
    pub tool_rate_limits: BTreeMap<String, RateLimit>,
    /// How the API's tools reach the model: all listed, or found through search or meta
    /// tools (for APIs too large to list). `auto` (the default) lists the API whole when its
    /// tools fit `tools.auto_budget_tokens`, else serves it in `search` mode.
    #[serde(default)]
    pub discovery: DiscoveryMode,
    /// Tools listed even when `discovery` hides the others.
    #[serde(default)]
    pub pinned: Vec<String>,
    /// Overrides `tools.max_description_length` for this API's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_description_length: Option<usize>,
    /// Longest description of one argument (and of each property inside it); 0 = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parameter_description_length: Option<usize>,
    /// Overrides `tools.dialect` for this API's tools (a client rule's dialect wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
    /// Which tools need a human's confirmation before their request is sent
    /// (`[server.confirm]` says how it is asked); an overlay's `confirm` wins per tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<ConfirmPolicy>,
    /// The header this API reads idempotency keys from (`Idempotency-Key`): POST and PATCH
    /// tools that do not declare it get an optional `idempotency_key` argument sent in it,
    /// and a generated key when the model gives none (an operation that declares a header
    /// named `Idempotency-Key` uses it without this setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_header: Option<String>,
    /// Tools whose operations go on after they answer, besides those the description
    /// marks (`x-ms-long-running-operation`) or that document a 202: a 200 or 201 naming a
    /// status monitor (`Operation-Location`, `Azure-AsyncOperation`) is followed too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub long_running: Vec<String>,
    /// The most a JSON result may hold, in estimated tokens (compact JSON bytes / 3): a
    /// longer list keeps whole items up to it and says how to get the rest. 0 = no limit.
    #[serde(default = "default_max_result_tokens")]
    pub max_result_tokens: u64,
    /// Page-size arguments (`per_page`, `limit`, `page_size`, …) above this are lowered to
    /// it, so one page fits the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_page_size: Option<u64>,
}

/// `apis.NAME.confirm`: the tools of an API whose calls a human confirms first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ConfirmPolicy {
    /// `"destructive"` (tools with `destructiveHint`), `"writes"` (tools without
    /// `readOnlyHint`) or `"none"`.
    Kind(ConfirmKind),
    /// These tools, by name.
    Tools(Vec<String>),
}

/// The named [`ConfirmPolicy`] kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfirmKind {
    Destructive,
    Writes,
    None,
}

impl<'de> Deserialize<'de> for ConfirmPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PolicyVisitor;
        impl<'de> serde::de::Visitor<'de> for PolicyVisitor {
            type Value = ConfirmPolicy;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"destructive\", \"writes\", \"none\" or a list of tool names")
            }
            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
                match value {
                    "destructive" => Ok(ConfirmPolicy::Kind(ConfirmKind::Destructive)),
                    "writes" => Ok(ConfirmPolicy::Kind(ConfirmKind::Writes)),
                    "none" => Ok(ConfirmPolicy::Kind(ConfirmKind::None)),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(ConfirmPolicy::Tools(names))
            }
        }
        deserializer.deserialize_any(PolicyVisitor)
    }
}

impl ConfirmPolicy {
    /// Whether a tool with these hints (and this name) needs confirmation under the policy.
    pub fn covers(&self, name: &str, destructive: bool, read_only: bool) -> bool {
        match self {
            ConfirmPolicy::Kind(ConfirmKind::Destructive) => destructive,
            ConfirmPolicy::Kind(ConfirmKind::Writes) => !read_only,
            ConfirmPolicy::Kind(ConfirmKind::None) => false,
            ConfirmPolicy::Tools(names) => names.iter().any(|n| n == name),
        }
    }
}

/// How an API's tools are offered in `tools/list` (`apis.NAME.discovery`); the `discovery`
/// module serves the search and meta modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DiscoveryMode {
    /// `all` when the API's tools fit `tools.auto_budget_tokens`, else `search`; the
    /// catalog settles it per API when it is built ([`crate::catalog::Listing`]).
    #[default]
    Auto,
    /// Every tool is listed.
    All,
    /// `search_tools` (ranked keyword search returning full definitions) and `call_tool`.
    Search,
    /// `list_operations`, `describe_operation` and `call_operation`.
    Meta,
}

impl DiscoveryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DiscoveryMode::Auto => "auto",
            DiscoveryMode::All => "all",
            DiscoveryMode::Search => "search",
            DiscoveryMode::Meta => "meta",
        }
    }
}

/// Operations to keep or drop. Every criterion given must match (an empty one matches
/// anything); lists within a criterion are alternatives.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Filter {
    /// Any of these tags.
    pub tags: Vec<String>,
    /// Any of these operationIds or `METHOD /path` labels.
    pub operations: Vec<String>,
    /// Any of these path globs: `*` stays within a segment, `**` crosses segments.
    pub paths: Vec<String>,
    /// Any of these HTTP methods (case-insensitive).
    pub methods: Vec<String>,
}

/// The HTTP methods OpenAPI describes operations for, as a filter's `methods` may name
/// them (case-insensitive). Spec loading's own list (`spec::Method::ALL`) is checked
/// against this one by a test.
pub const HTTP_METHODS: [&str; 8] = [
    "GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE",
];

/// One filter table or an array of them (an operation matches when any matches).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(from = "OneOrMany")]
pub struct Filters(pub Vec<Filter>);

/// `Many` first: serde would also read `[]` as a `Filter` written positionally, which
/// would turn `include = []` (nothing) into "everything".
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    Many(Vec<Filter>),
    One(Filter),
}

impl From<OneOrMany> for Filters {
    fn from(value: OneOrMany) -> Self {
        match value {
            OneOrMany::One(filter) => Filters(vec![filter]),
            OneOrMany::Many(filters) => Filters(filters),
        }
    }
}

/// A token bucket: `per_second` calls on average, `burst` at once.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub per_second: f64,
    /// Calls allowed at once after a quiet spell; default `per_second` rounded up (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
}

impl RateLimit {
    pub fn burst(&self) -> u32 {
        self.burst
            .unwrap_or_else(|| self.per_second.ceil().clamp(1.0, u32::MAX as f64) as u32)
            .max(1)
    }
}

fn default_timeout_seconds() -> f64 {
    30.0
}

fn default_max_result_tokens() -> u64 {
    DEFAULT_MAX_RESULT_TOKENS
}

/// `apis.NAME.max_result_tokens` by default: what MCP clients keep of a tool result
/// (Claude Code, for one, refuses results over 25,000 tokens).
pub const DEFAULT_MAX_RESULT_TOKENS: u64 = 25_000;

fn default_max_response_bytes() -> u64 {
    4 * 1024 * 1024
}

fn default_max_retries() -> u32 {
    2
}

fn default_compression() -> bool {
    true
}

impl ApiConfig {
    /// The spec's path when it is a file rather than an http(s) URL; `None` for a URL and
    /// for an API of hand-written tools only. Where to load the spec from is
    /// `spec::SpecSource::of_api`.
    pub fn spec_file(&self) -> Option<PathBuf> {
        let spec = self.spec.as_ref()?;
        let original = spec.original().to_string_lossy();
        if original.starts_with("http://") || original.starts_with("https://") {
            None
        } else {
            Some(spec.relative())
        }
    }

    /// The overlay files to apply, in order, each with whether the config names it: the
    /// conventional one beside the spec (when it exists and is not listed), then those
    /// listed.
    pub fn overlay_files(&self) -> Vec<(PathBuf, bool)> {
        let mut files: Vec<(PathBuf, bool)> =
            self.overlays.iter().map(|o| (o.relative(), true)).collect();
        if let Some(conventional) = self.conventional_overlay()
            && conventional.is_file()
            && !files.iter().any(|(file, _)| *file == conventional)
        {
            files.insert(0, (conventional, false));
        }
        files
    }

    /// Candidates for `NAME.overlay.yaml` beside a file spec: the first that exists, else the
    /// `.yaml` one (so a watcher can notice it being created).
    pub fn conventional_overlay(&self) -> Option<PathBuf> {
        let spec = self.spec_file()?;
        conventional_overlay(&spec)
    }
}

/// `specs/petstore.yaml` → the first existing of `specs/petstore.overlay.{yaml,yml,json}`,
/// else `specs/petstore.overlay.yaml`.
pub fn conventional_overlay(spec: &Path) -> Option<PathBuf> {
    let stem = spec.file_stem()?.to_str()?;
    let dir = spec.parent().unwrap_or(Path::new(""));
    let candidates: Vec<PathBuf> = ["yaml", "yml", "json"]
        .iter()
        .map(|ext| dir.join(format!("{stem}.overlay.{ext}")))
        .collect();
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .or_else(|| candidates.into_iter().next())
}

/// True for file names restmcp reads as overlays rather than specs.
pub fn is_overlay_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        [".overlay.yaml", ".overlay.yml", ".overlay.json"]
            .iter()
            .any(|suffix| n.ends_with(suffix))
    })
}
