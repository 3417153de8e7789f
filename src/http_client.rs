//! The process-wide HTTP client: one pooled reqwest client on rustls with the `ring`
//! provider (aws-lc-rs takes minutes to compile on two cores and buys nothing here).

use std::sync::OnceLock;
use std::time::Duration;

/// `User-Agent` sent on every outgoing request.
pub const USER_AGENT: &str = concat!("restmcp/", env!("CARGO_PKG_VERSION"));

/// Installs the `ring` crypto provider once; harmless if something else installed one.
pub fn install_crypto_provider() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The shared client for fetching specs. Connection pooling only pays off when one client
/// is reused, so everything that fetches goes through here. Building it can only fail if
/// the TLS backend cannot start; that is reported, not panicked on.
pub fn shared() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            install_crypto_provider();
            reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(60))
                .build()
                .map_err(|e| format!("cannot start the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A one-line cause for a transport error, without the URL's query string (which may hold
/// a key) and without reqwest's nested debug output.
pub fn describe_error(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else if error.is_body() || error.is_decode() {
        "reading the body failed"
    } else {
        "request failed"
    };
    let mut cause = String::new();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        cause = inner.to_string();
        source = inner.source();
    }
    if cause.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {cause}")
    }
}
