//! `[log]`: how logs are written (format and filter); the telemetry module applies it.

use serde::{Deserialize, Serialize};

/// How logs are written (always to stderr).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct LogSettings {
    /// `pretty` (human-readable lines), `json` (one object per line) or `compact`.
    pub format: LogFormat,
    /// A `tracing` filter such as `info` or `restmcp=debug,info`; `RUST_LOG` wins over it.
    /// The default leaves the MCP SDK's per-session lines (`rmcp` at info) out.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::Pretty,
            level: "info,rmcp=warn".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Pretty,
    Json,
    Compact,
}
