//! Settings as written: `config.toml`, overridden by `RESTMCP_`-prefixed environment
//! variables (nested keys joined with `__`), overridden by command-line flags ([`Overrides`]),
//! layered with figment and read into a [`Config`], which [`super::validate`] then checks.

use std::path::Path;

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};

use super::specs_dir::{self, api_name_from_spec};
use super::{Config, ConfigError};

/// Values given on the command line, which win over file and environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Serve exactly this spec instead of the configured APIs.
    pub spec: Option<String>,
    pub base_url: Option<String>,
    pub max_name_length: Option<usize>,
    pub max_description_length: Option<usize>,
    /// Every API's result budget (`--max-result-tokens`).
    pub max_result_tokens: Option<u64>,
    /// Every API in mock mode (`--mock`).
    pub mock: bool,
}

/// The configuration's top-level tables: only `RESTMCP_*` variables under them are
/// configuration. Others (`RESTMCP_CONFIG`, which the CLI reads, or a `RESTMCP_BIN` a CI
/// script sets for itself) are not, and must not make the configuration invalid; a typo
/// inside a table (`RESTMCP_TOOLS__MAX_NAM_LENGTH`) still is an error naming the key.
const CONFIG_TABLES: [&str; 7] = [
    "server",
    "tools",
    "apis",
    "reload",
    "loading",
    "specs_dir",
    "log",
];

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
        let env = Env::prefixed("RESTMCP_")
            .filter(|key| {
                let top = key.as_str().split("__").next().unwrap_or_default();
                CONFIG_TABLES
                    .iter()
                    .any(|table| top.eq_ignore_ascii_case(table))
            })
            .split("__");
        figment = figment.merge(env);
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
        let mut config: Config = figment.extract()?;
        if overrides.spec.is_none()
            && let Some(dir) = &config.specs_dir
        {
            let found = specs_dir::scan(&dir.relative(), &config.apis)?;
            if !found.is_empty() {
                let apis: serde_json::Map<String, serde_json::Value> = found
                    .into_iter()
                    .map(|(name, path)| {
                        (
                            name,
                            serde_json::json!({ "spec": path.display().to_string() }),
                        )
                    })
                    .collect();
                // Merged below the file, so a table for the same name would have won;
                // `specs_dir::scan` already left those out.
                figment = Figment::from(Serialized::defaults(serde_json::json!({ "apis": apis })))
                    .merge(figment);
                config = figment.extract()?;
            }
        }
        if overrides.mock {
            for api in config.apis.values_mut() {
                api.mock = true;
            }
        }
        if let Some(tokens) = overrides.max_result_tokens {
            for api in config.apis.values_mut() {
                api.max_result_tokens = tokens;
            }
        }
        config.validate()?;
        Ok(config)
    }
}
