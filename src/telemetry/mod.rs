//! Telemetry: logs, metrics and trace context.
//!
//! Logs are `tracing` events written to stderr (never stdout, which stdio reserves for the
//! protocol), pretty, compact or JSON as `[log] format` says, filtered by `RUST_LOG` or
//! else `[log] level`. [`metrics`] holds the Prometheus counters; [`trace`] the W3C trace
//! context passed on to upstream APIs.

pub mod metrics;
pub mod trace;
pub mod writer;

use crate::config::{LogFormat, LogSettings};

/// Installs the stderr subscriber once; later calls do nothing. Info lines are buffered
/// briefly ([`writer`]); call [`writer::flush`] before exiting.
pub fn init(settings: &LogSettings) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(&settings.level))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer::Stderr);
    let _ = match settings.format {
        LogFormat::Pretty => builder.with_ansi(ansi).try_init(),
        LogFormat::Compact => builder.compact().with_ansi(ansi).try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init(),
    };
    writer::start_flusher();
}
