//! Logs: `tracing` to stderr (never stdout, which stdio reserves for the protocol),
//! filtered by `RUST_LOG` (default `info`).

/// Installs the stderr subscriber once; later calls do nothing.
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
