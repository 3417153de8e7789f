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
//! ```
//!
//! APIs are a table keyed by name, rather than an array, so that one environment variable
//! can address one API: `RESTMCP_APIS__PETSTORE__BASE_URL=http://…`. Unknown keys and wrong
//! types are errors that name the key and where it was set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

use crate::spec::SpecSource;

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
}

/// The MCP endpoint.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSettings {
    /// Address `restmcp serve` listens on. Loopback unless told otherwise.
    pub listen: String,
    /// `Host` header values accepted (DNS-rebinding protection); empty accepts any.
    pub allowed_hosts: Vec<String>,
    /// `Origin` header values accepted when present; empty accepts any.
    pub allowed_origins: Vec<String>,
    /// Keep sessions (`Mcp-Session-Id`) for initialize-based clients; off = stateless.
    pub sessions: bool,
    /// Answer POSTs with plain JSON rather than an SSE stream where the protocol allows.
    pub json_response: bool,
    /// Largest request body accepted, in bytes.
    pub max_request_bytes: usize,
    /// Tools per `tools/list` page.
    pub page_size: usize,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            listen: "127.0.0.1:8080".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            sessions: true,
            json_response: true,
            max_request_bytes: 4 * 1024 * 1024,
            page_size: 500,
        }
    }
}

/// How tools are named and described.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ToolSettings {
    /// Longest tool name produced (16–128). 64 is what Claude and OpenAI accept.
    pub max_name_length: usize,
    /// Longest tool description in characters; 0 means no limit.
    pub max_description_length: usize,
    /// Size above which an outputSchema is relaxed (deep levels accept anything) until it
    /// fits; 0 means no limit. Input schemas are never cut.
    pub max_output_schema_bytes: usize,
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            max_name_length: 64,
            max_description_length: 1024,
            max_output_schema_bytes: 16 * 1024,
        }
    }
}

/// One upstream API.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
    /// A file path (relative to the file that set it) or an http(s) URL.
    pub spec: RelativePathBuf,
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
}

fn default_timeout_seconds() -> f64 {
    30.0
}

fn default_max_response_bytes() -> u64 {
    4 * 1024 * 1024
}

fn default_max_retries() -> u32 {
    2
}

impl ApiConfig {
    /// Where to load the spec from.
    pub fn source(&self) -> Result<SpecSource, crate::spec::SpecError> {
        let original = self.spec.original().to_string_lossy();
        if original.starts_with("http://") || original.starts_with("https://") {
            SpecSource::parse(&original)
        } else {
            Ok(SpecSource::File(self.spec.relative()))
        }
    }
}

/// Values given on the command line, which win over file and environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Serve exactly this spec instead of the configured APIs.
    pub spec: Option<String>,
    pub base_url: Option<String>,
    pub max_name_length: Option<usize>,
    pub max_description_length: Option<usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: config file not found (pass --config FILE or --spec SPEC)")]
    NotFound { path: PathBuf },
    #[error("invalid configuration: {0}")]
    Figment(Box<figment::Error>),
    #[error("invalid configuration: {key} = {value}: {problem}")]
    Invalid {
        key: String,
        value: String,
        problem: String,
    },
}

impl From<figment::Error> for ConfigError {
    fn from(error: figment::Error) -> Self {
        ConfigError::Figment(Box::new(error))
    }
}

/// Environment variables read by the CLI itself rather than the config tree.
const CLI_ENV: [&str; 1] = ["config"];

impl Config {
    /// Loads `path` (required to exist unless `--spec` replaces the configured APIs), the
    /// environment, and the flags, in increasing precedence.
    pub fn load(path: &Path, overrides: &Overrides) -> Result<Config, ConfigError> {
        let mut figment = Figment::new();
        if overrides.spec.is_none() {
            if !path.is_file() {
                return Err(ConfigError::NotFound {
                    path: path.to_path_buf(),
                });
            }
            figment = figment.merge(Toml::file_exact(path));
        }
        figment = figment.merge(Env::prefixed("RESTMCP_").split("__").ignore(&CLI_ENV));
        if let Some(spec) = &overrides.spec {
            let name = api_name_from_spec(spec);
            let mut api = serde_json::json!({ "spec": spec });
            if let Some(base_url) = &overrides.base_url {
                api["base_url"] = serde_json::json!(base_url);
            }
            figment = figment.merge(Serialized::default(
                "apis",
                serde_json::json!({ name: api }),
            ));
        }
        if let Some(n) = overrides.max_name_length {
            figment = figment.merge(Serialized::default("tools.max_name_length", n));
        }
        if let Some(n) = overrides.max_description_length {
            figment = figment.merge(Serialized::default("tools.max_description_length", n));
        }
        let config: Config = figment.extract()?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, value: String, problem: &str| ConfigError::Invalid {
            key,
            value,
            problem: problem.to_string(),
        };
        if self.server.listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(invalid(
                "server.listen".into(),
                self.server.listen.clone(),
                "must be an IP address and port, e.g. 127.0.0.1:8080",
            ));
        }
        if self.server.page_size == 0 {
            return Err(invalid(
                "server.page_size".into(),
                "0".into(),
                "must be at least 1",
            ));
        }
        let n = self.tools.max_name_length;
        if !(16..=128).contains(&n) {
            return Err(invalid(
                "tools.max_name_length".into(),
                n.to_string(),
                "must be between 16 and 128",
            ));
        }
        if self.apis.is_empty() {
            return Err(invalid(
                "apis".into(),
                "{}".into(),
                "no API configured: add an [apis.NAME] table with a `spec`",
            ));
        }
        for (name, api) in &self.apis {
            let valid_name = !name.is_empty()
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                });
            if !valid_name {
                return Err(invalid(
                    format!("apis.{name}"),
                    String::new(),
                    "API names use a-z, 0-9, _ and - (environment variables can only address lower-case keys)",
                ));
            }
            if let Some(base_url) = &api.base_url {
                let ok = url::Url::parse(base_url)
                    .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
                if !ok {
                    return Err(invalid(
                        format!("apis.{name}.base_url"),
                        base_url.clone(),
                        "must be an absolute http:// or https:// URL",
                    ));
                }
            }
            let timeouts =
                std::iter::once((format!("apis.{name}.timeout_seconds"), api.timeout_seconds))
                    .chain(
                        api.tool_timeouts
                            .iter()
                            .map(|(tool, t)| (format!("apis.{name}.tool_timeouts.{tool}"), *t)),
                    );
            for (key, seconds) in timeouts {
                if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
                    return Err(invalid(
                        key,
                        seconds.to_string(),
                        "must be between 0 and 3600 seconds",
                    ));
                }
            }
            if api.max_retries > 10 {
                return Err(invalid(
                    format!("apis.{name}.max_retries"),
                    api.max_retries.to_string(),
                    "must be at most 10",
                ));
            }
            if let Some(prefix) = &api.prefix {
                let ok = prefix
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !ok || prefix.len() > n / 2 {
                    return Err(invalid(
                        format!("apis.{name}.prefix"),
                        prefix.clone(),
                        "must use A-Z, a-z, 0-9, _ and - and be at most half of tools.max_name_length",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `specs/Pet Store.v3.yaml` → `pet_store_v3`.
fn api_name_from_spec(spec: &str) -> String {
    let stem = spec
        .trim_end_matches('/')
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(spec);
    let stem = stem
        .strip_suffix(".yaml")
        .or_else(|| stem.strip_suffix(".yml"))
        .or_else(|| stem.strip_suffix(".json"))
        .unwrap_or(stem);
    let mut name = String::new();
    for c in stem.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let name = name.trim_matches('_').to_string();
    if name.is_empty() { "api".into() } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_names_from_spec_paths() {
        assert_eq!(
            api_name_from_spec("specs/Pet Store.v3.yaml"),
            "pet_store_v3"
        );
        assert_eq!(api_name_from_spec("https://x.test/openapi.json"), "openapi");
        assert_eq!(api_name_from_spec("///"), "api");
    }
}
