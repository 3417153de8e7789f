//! The MCP surface besides tools: `[resources]` (how subscriptions poll, what reads may be
//! cached for) and `[prompts.NAME]` (prompts the operator writes). A prompt has the same
//! shape in `config.toml`, in a restmcp overlay's `prompts:` and in a spec's
//! `x-mcp-prompts`, so the type lives here, on the lowest floor.
//!
//! ```toml
//! [prompts.pet_report]
//! description = "Report on one pet"
//! arguments = [{ name = "petId", required = true }]
//! messages = [
//!   { text = "Write a short report on pet {{petId}}." },
//!   { operation = { tool = "getPetById", arguments = { petId = "{{petId}}" } } },
//! ]
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `[resources]`: subscriptions and cache hints.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ResourceSettings {
    /// How often a subscribed resource is read again to see whether it changed, in
    /// seconds (conditionally: `If-None-Match`/`If-Modified-Since` when the upstream gave
    /// validators).
    pub poll_seconds: u64,
    /// Subscriptions held at once, over all sessions.
    pub max_subscriptions: usize,
    /// Subscriptions one session (or one 2026-07-28 listen) may hold.
    pub max_subscriptions_per_session: usize,
    /// How long a client may treat a read as fresh (2026-07-28 `ttlMs`) when the upstream
    /// sends no `Cache-Control: max-age`, in seconds; 0: not at all.
    pub ttl_seconds: u64,
}

/// The longest `resources.poll_seconds`: one day.
pub(super) const MAX_POLL_SECONDS: u64 = 24 * 60 * 60;

impl Default for ResourceSettings {
    fn default() -> Self {
        ResourceSettings {
            poll_seconds: 30,
            max_subscriptions: 1000,
            max_subscriptions_per_session: 20,
            ttl_seconds: 0,
        }
    }
}

/// One prompt.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromptSettings {
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
    pub messages: Vec<PromptMessage>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub required: bool,
    /// The values it may take, offered as completions (and checked).
    #[serde(rename = "enum", default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// Where its completions come from, when not from `enum`.
    pub complete: Option<CompleteSource>,
}

/// Completions read from a tool's answer: `values` is a JSON pointer into its result
/// where `*` stands for every item of an array (or member of an object), as in
/// `/*/login`. `arguments` are the tool's arguments; a text `{{name}}` in them is the
/// value the client already gave the argument (or template variable) `name`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompleteSource {
    pub tool: String,
    pub values: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// Who says a message.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    #[default]
    User,
    Assistant,
}

/// One message of a prompt: exactly one of `text`, `resource` and `operation`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromptMessage {
    #[serde(default)]
    pub role: Role,
    /// Text with `{{argument}}` replaced by the argument's value (nothing is executed).
    pub text: Option<String>,
    /// A resource URI (`{{argument}}` filled in) whose read is embedded.
    pub resource: Option<String>,
    /// A tool whose result is embedded (an `image/*` answer as an image).
    pub operation: Option<OperationMessage>,
}

/// The `operation` of a prompt message.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OperationMessage {
    pub tool: String,
    /// Its arguments; a text holding `{{argument}}` is filled in (a text that is exactly
    /// `{{argument}}` gives the argument's value as the client sent it).
    #[serde(default)]
    pub arguments: Map<String, Value>,
}
