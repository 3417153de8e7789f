//! Telemetry: logs, metrics and trace context.
//!
//! Logs are `tracing` events written to stderr (never stdout, which stdio reserves for the
//! protocol), pretty, compact or JSON as `[log] format` says, filtered by `RUST_LOG` or
//! else `[log] level`; they never hold tool arguments or results (the MCP SDK's message
//! dumps below info are dropped). [`metrics`] holds the Prometheus counters; [`trace`] the
//! W3C trace context passed on to upstream APIs; [`writer`] the stderr writer that batches
//! the call log line; [`call_line`] that line written without `tracing`'s dispatch in the
//! default format; [`fields`] how a line without colours writes its fields; [`clock`] the
//! timestamp each line starts with; [`feed`] the calls as they happen, for the console
//! (nothing is kept until a page watches).

pub mod call_line;
pub mod clock;
pub mod feed;
pub mod fields;
pub mod metrics;
pub mod trace;
pub mod writer;

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

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
        .with_timer(clock::Clock)
        .with_writer(writer::Stderr);
    let quiet_sdk = tracing_subscriber::filter::filter_fn(no_message_dumps);
    let _ = match settings.format {
        LogFormat::Pretty if ansi => builder.with_ansi(true).finish().with(quiet_sdk).try_init(),
        LogFormat::Pretty => {
            let installed = builder
                .with_ansi(false)
                .fmt_fields(fields::PlainFields)
                .finish()
                .with(quiet_sdk)
                .try_init();
            if installed.is_ok() {
                call_line::enable();
            }
            installed
        }
        LogFormat::Compact if ansi => builder
            .compact()
            .with_ansi(true)
            .finish()
            .with(quiet_sdk)
            .try_init(),
        LogFormat::Compact => builder
            .compact()
            .with_ansi(false)
            .fmt_fields(fields::PlainFields)
            .finish()
            .with(quiet_sdk)
            .try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .finish()
            .with(quiet_sdk)
            .try_init(),
    };
    writer::start_flusher();
}

/// The MCP SDK (rmcp) logs whole JSON-RPC messages at debug and trace level: every tool
/// argument (a model's `Authorization` header argument among them) and every result.
/// restmcp's logs never hold arguments or results, so the SDK's events below info are
/// dropped whatever `RUST_LOG` asks for.
fn no_message_dumps(metadata: &tracing::Metadata<'_>) -> bool {
    let target = metadata.target();
    let sdk = target == "rmcp" || target.starts_with("rmcp::");
    !(sdk && *metadata.level() > tracing::Level::INFO)
}
