//! `[tools]`: how tools are named, described and published, the per-client rules
//! (`[[tools.clients]]`) matched on `clientInfo.name`, and the schema [`Dialect`] names
//! they choose (what each dialect means is `schema::dialect`'s business).

use serde::{Deserialize, Serialize};

/// The default of `tools.auto_budget_tokens`: 12.5 % of a 200,000-token context window.
/// Claude Code defers MCP tool definitions to its own tool search once they pass 10 % of
/// the context, and clients that send every definition with each request pay for all of
/// them on every turn (VS Code caps a request at 128 tools, Cursor has capped it at 40).
/// Under this budget go about 120 tools the size of Petstore's (≈ 207 tokens each) or 22
/// of GitHub's (≈ 1,117); GitHub's whole description (≈ 1.4 million tokens) is searched.
pub const DEFAULT_AUTO_BUDGET_TOKENS: usize = 25_000;

/// How tools are named and described.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ToolSettings {
    /// Longest tool name produced (16–128). 64 is what Claude and OpenAI accept.
    pub max_name_length: usize,
    /// Longest tool description in characters; 0 means no limit.
    pub max_description_length: usize,
    /// Size above which an outputSchema is relaxed (deep levels accept anything) until it
    /// fits; 0 means no limit.
    pub max_output_schema_bytes: usize,
    /// Size above which an inputSchema is relaxed until it fits: levels below some depth are
    /// published as their type with a description saying what was left out, while the
    /// arguments are still checked against the full schema; 0 means no limit.
    pub max_input_schema_bytes: usize,
    /// Estimated tokens (compact JSON bytes / 4) an API's tools may cost in `tools/list` and
    /// still be listed whole under `discovery = "auto"`; a larger API is served in `search`
    /// mode. 0 means no limit (every `auto` API is listed whole).
    pub auto_budget_tokens: usize,
    /// The schema dialect tools are published in, unless an API or a client rule says
    /// otherwise.
    pub dialect: Dialect,
    /// Rules for clients recognized by the `clientInfo.name` they send; the first match wins.
    pub clients: Vec<ClientRule>,
}

/// Settings for the clients whose `clientInfo.name` matches `name`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClientRule {
    /// A case-insensitive glob (`*` matches anything) on `clientInfo.name`, e.g. `"gemini*"`.
    pub name: String,
    /// The dialect these clients get, whatever the API's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
    /// Longest tool name these clients accept, e.g. 64 minus the `mcp__server__` prefix a
    /// client adds; longer names are shortened for them (calls use either name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_name_length: Option<usize>,
}

impl ClientRule {
    /// True when `client` (a `clientInfo.name`) matches this rule's glob.
    pub fn matches(&self, client: &str) -> bool {
        glob_matches(&self.name.to_lowercase(), &client.to_lowercase())
    }
}

/// `*` matches any run of characters; everything else matches itself.
pub(super) fn glob_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            max_name_length: 64,
            max_description_length: 1024,
            max_output_schema_bytes: 16 * 1024,
            max_input_schema_bytes: 16 * 1024,
            auto_budget_tokens: DEFAULT_AUTO_BUDGET_TOKENS,
            dialect: Dialect::Full,
            clients: Vec::new(),
        }
    }
}

/// The schema subset a client's model API accepts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// JSON Schema 2020-12, as restmcp publishes it.
    #[default]
    Full,
    /// OpenAI function calling with `strict: true` (Structured Outputs).
    OpenaiStrict,
    /// Gemini API function declarations (OpenAPI 3.0 subset `Schema`).
    Gemini,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::Full, Dialect::OpenaiStrict, Dialect::Gemini];

    /// The configuration name (`full`, `openai-strict`, `gemini`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Full => "full",
            Dialect::OpenaiStrict => "openai-strict",
            Dialect::Gemini => "gemini",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
