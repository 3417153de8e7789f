//! Configuration: `config.toml`, overridden by `RESTMCP_`-prefixed environment variables
//! (nested keys joined with `__`), overridden by command-line flags.
//!
//! ```toml
//! [tools]
//! max_name_length = 64
//! max_description_length = 1024
//! max_output_schema_bytes = 16384
//!
//! [apis.petstore]
//! spec = "specs/petstore.yaml"          # path relative to this file, or an http(s) URL
//! base_url = "http://127.0.0.1:8080/v3" # optional: overrides the spec's servers
//! prefix = "pet_"                       # optional: prepended to every tool name
//! forward_headers = ["X-Tenant"]        # optional: headers of the MCP request passed on
//!
//! [apis.petstore.auth.api_key]          # credentials for the spec's scheme `api_key`
//! value_env = "PETSTORE_API_KEY"        # the NAME of the variable holding the key
//! ```
//!
//! APIs are a table keyed by name, rather than an array, so that one environment variable
//! can address one API: `RESTMCP_APIS__PETSTORE__BASE_URL=http://…`. Unknown keys and wrong
//! types are errors that name the key and where it was set.
//!
//! Settings travel one way: as written (serde structs, layered by figment from file,
//! environment and flags) → the validated [`Config`]. One file per concept:
//!
//! * [`layering`]: the file, `RESTMCP_*` variables and flags ([`Overrides`]) read into a
//!   [`Config`];
//! * [`validate`]: every check that makes it the validated configuration;
//! * [`error`]: [`ConfigError`], naming the key and where it was set;
//! * [`specs_dir`]: a directory of specs turned into APIs ([`specs_dir::scan`]);
//! * the sections: [`server`] (the MCP endpoint), [`tools`] (naming, dialects, client
//!   rules), [`api`] (one upstream API), [`auth`] (its credentials), [`headers`] (its
//!   forwarded headers), [`loading`] (what specs may reach), [`reload`] and [`log`],
//!   [`surface`] (`[resources]` and `[prompts.NAME]`, whose prompt type overlays and
//!   specs share), [`workflows`] (`[workflows.NAME]`, Arazzo documents whose workflows
//!   become tools);
//! * [`syntax`]: the shapes of values settings hold (header names, origins, `Accept`).
//!
//! `config` is the lowest floor: it owns its own types ([`Dialect`], [`ApiKeyLocation`],
//! [`DiscoveryMode`], the [`HTTP_METHODS`] a filter may name, the `[loading]` defaults) and
//! imports nothing else of the crate. Stages above build their own values from it
//! (`spec::LoadPolicy::from_settings`, `spec::SpecSource::of_api`).

use std::collections::BTreeMap;

use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

mod api;
mod auth;
mod error;
mod headers;
mod layering;
mod loading;
mod log;
mod reload;
mod server;
mod specs_dir;
mod surface;
mod syntax;
#[cfg(test)]
mod tests;
mod tools;
mod validate;
mod workflows;

pub use api::{
    ApiConfig, ConfirmKind, ConfirmPolicy, DEFAULT_MAX_RESULT_TOKENS, DiscoveryMode, Filter,
    Filters, HTTP_METHODS, RateLimit, conventional_overlay, is_overlay_file,
};
pub use auth::{ApiKeyLocation, AuthConfig, AuthKind, TokenExchange};
pub use error::ConfigError;
pub use headers::{ForwardHeader, HeaderRename};
pub use layering::Overrides;
pub use loading::{
    DEFAULT_MAX_API_BYTES, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_YAML_ALIAS_VALUES,
    LoadingSettings,
};
pub use log::{LogFormat, LogSettings};
pub use reload::ReloadSettings;
pub use server::{
    ConfirmSettings, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_STDIO_MESSAGE_BYTES, InboundAuth,
    IntrospectionSettings, MIN_MESSAGE_BYTES, OAuthSettings, ReadinessSettings, ServerSettings,
    StoreSettings, TlsSettings, WithoutElicitation,
};
pub use surface::{
    CompleteSource, OperationMessage, PromptArgument, PromptMessage, PromptSettings,
    ResourceSettings, Role,
};
pub(crate) use syntax::is_token;
pub use syntax::{check_accept, parse_origin};
pub use tools::{ClientRule, DEFAULT_AUTO_BUDGET_TOKENS, Dialect, ToolSettings};
pub use workflows::{
    DEFAULT_MAX_STEPS, DEFAULT_WORKFLOW_TIMEOUT_SECONDS, MAX_MAX_STEPS, WorkflowSettings,
};

/// The validated configuration.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub server: ServerSettings,
    #[serde(default)]
    pub tools: ToolSettings,
    #[serde(default)]
    pub apis: BTreeMap<String, ApiConfig>,
    /// A directory whose OpenAPI/Swagger files each become an API (named after the file)
    /// unless an `[apis.NAME]` table already uses them.
    #[serde(default)]
    pub specs_dir: Option<RelativePathBuf>,
    #[serde(default)]
    pub reload: ReloadSettings,
    #[serde(default)]
    pub loading: LoadingSettings,
    #[serde(default)]
    pub log: LogSettings,
    #[serde(default)]
    pub resources: ResourceSettings,
    /// Prompts the operator writes, by name.
    #[serde(default)]
    pub prompts: BTreeMap<String, PromptSettings>,
    /// Arazzo documents whose workflows become tools, by name.
    #[serde(default)]
    pub workflows: BTreeMap<String, WorkflowSettings>,
}
