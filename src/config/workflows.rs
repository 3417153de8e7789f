//! `[workflows.NAME]`: one Arazzo document whose workflows become tools that run their
//! steps on the server. The document is data from elsewhere (like an API description): it
//! shapes tools, and what it may reach is decided here. Each `sourceDescription` it names is
//! mapped to a configured `[apis.NAME]` (`sources`), so nothing is fetched because the
//! document says so, and every step goes through that API's own settings (base URL,
//! credentials, forwarded headers, limits).
//!
//! ```toml
//! [workflows.shop]
//! file = "workflows/shop.arazzo.yaml"   # relative to this file
//! sources = { petstore = "petstore" }   # sourceDescription name -> [apis.NAME]
//! include = ["buy-pet"]                 # workflowIds published (default: all)
//! prefix = "wf_"                        # tool name = prefix + workflowId
//! max_steps = 50                        # requests per call, retries and nested steps included
//! timeout_seconds = 120                 # the whole run; each step keeps its API's timeout
//! confirm = true                        # ask a human before every run (never less than the steps need)
//! ```

use std::collections::BTreeMap;

use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

/// Requests one workflow call may send by default, retries and nested workflows included.
pub const DEFAULT_MAX_STEPS: u32 = 50;
/// The most `max_steps` may be.
pub const MAX_MAX_STEPS: u32 = 1000;
/// How long one workflow call may run by default, in seconds.
pub const DEFAULT_WORKFLOW_TIMEOUT_SECONDS: u64 = 120;

/// One `[workflows.NAME]` table.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowSettings {
    /// The Arazzo document (YAML or JSON), relative to the configuration file.
    pub file: RelativePathBuf,
    /// Each `sourceDescription` name of the document → the `[apis.NAME]` its steps call.
    /// An OpenAPI source left out is matched by its `url` against the APIs' `spec`.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// The workflowIds published as tools (default: all).
    #[serde(default)]
    pub include: Vec<String>,
    /// WorkflowIds not published (a workflow others call stays callable by them).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Prepended to every workflow's tool name.
    #[serde(default)]
    pub prefix: String,
    /// The most requests one call sends, retries and nested workflows included.
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// The most one call runs, in seconds; each step also keeps its API's timeout.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: u64,
    /// Ask a human before every run, even when no step needs it. `false` cannot waive the
    /// confirmation a step's API or tool asks for.
    #[serde(default)]
    pub confirm: bool,
}

fn default_max_steps() -> u32 {
    DEFAULT_MAX_STEPS
}

fn default_timeout() -> u64 {
    DEFAULT_WORKFLOW_TIMEOUT_SECONDS
}

impl WorkflowSettings {
    /// Whether workflow `id` is published.
    pub fn publishes(&self, id: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|i| i == id))
            && !self.exclude.iter().any(|e| e == id)
    }
}
