//! `[reload]`: hot reload, what is watched and how often, and how long one reload may take.

use serde::{Deserialize, Serialize};

/// Hot reload: what is watched and how often.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReloadSettings {
    /// Watch the config, specs and overlays and swap the tool set when they change.
    pub enabled: bool,
    /// How often files are checked, in milliseconds.
    pub interval_ms: u64,
    /// How often spec URLs are checked (conditional GET), in seconds.
    pub url_interval_seconds: u64,
    /// How long one reload may take, in seconds: a reload still loading after this (a spec
    /// URL that never answers, a file that blocks) is abandoned with an error, the last good
    /// tool set stays served, and the next change or SIGHUP starts a fresh one.
    pub timeout_seconds: u64,
}

/// The longest `reload.timeout_seconds`: one day.
pub(super) const MAX_RELOAD_TIMEOUT_SECONDS: u64 = 24 * 60 * 60;

impl Default for ReloadSettings {
    fn default() -> Self {
        ReloadSettings {
            enabled: true,
            interval_ms: 500,
            url_interval_seconds: 60,
            timeout_seconds: 60,
        }
    }
}
