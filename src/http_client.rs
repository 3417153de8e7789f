//! HTTP client pieces every floor uses: the rustls `ring` provider (aws-lc-rs takes minutes
//! to compile on two cores and buys nothing here), the pooled reqwest client that watches
//! spec URLs, and how a transport error is worded. Upstream calls have their own client
//! (`upstream::client`).

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

/// The shared client for watching spec URLs for changes (hot reload). Connection pooling
/// only pays off when one client is reused. Its redirects stay within the origin asked for
/// (at most 5): a spec server cannot send the watcher to an internal address (spec loading
/// itself checks every address, in `spec::place`). Building it can only fail if the TLS
/// backend cannot start; that is reported, not panicked on.
pub fn shared() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            install_crypto_provider();
            let same_origin = reqwest::redirect::Policy::custom(|attempt| {
                let first = attempt.previous().first().map(url::Url::origin);
                if attempt.previous().len() < 5 && first == Some(attempt.url().origin()) {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            });
            reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .redirect(same_origin)
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(60))
                .build()
                .map_err(|e| format!("cannot start the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The body of `response`, refused once it passes `cap` bytes (an answer from elsewhere is
/// read only within a bound).
pub async fn read_capped(mut response: reqwest::Response, cap: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe_error(&e))? {
        body.extend_from_slice(&chunk);
        if body.len() > cap {
            return Err(format!("the answer is larger than {cap} bytes"));
        }
    }
    Ok(body)
}

/// The `Authorization` value an OAuth client authenticates with (`client_secret_basic`):
/// RFC 6749 §2.3.1 form-encodes id and secret before the Basic encoding.
pub fn basic_client_auth(client_id: &str, client_secret: &str) -> String {
    use base64::Engine as _;
    let form =
        |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let credentials = format!("{}:{}", form(client_id), form(client_secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(credentials)
    )
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
    with_cause(kind, std::error::Error::source(error))
}

/// `what` failed, and the innermost error under `source` says why (`what: cause`).
pub fn with_cause(what: &str, source: Option<&(dyn std::error::Error + 'static)>) -> String {
    match std::iter::successors(source, |&inner| inner.source()).last() {
        Some(cause) => format!("{what}: {cause}"),
        None => what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::Router;
    use axum::http::{StatusCode, header};
    use axum::routing::get;

    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn the_watcher_follows_redirects_only_within_the_origin() {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let elsewhere = serve(Router::new().route(
            "/internal",
            get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { "internal" }
            }),
        ))
        .await;
        let target = format!("{elsewhere}/internal");
        let spec = serve(
            Router::new()
                .route("/spec", get(|| async { "spec" }))
                .route(
                    "/moved",
                    get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/spec")]) }),
                )
                .route(
                    "/away",
                    get(move || {
                        let target = target.clone();
                        async move { (StatusCode::FOUND, [(header::LOCATION, target)]) }
                    }),
                ),
        )
        .await;
        let client = super::shared().expect("client");
        let moved = client
            .get(format!("{spec}/moved"))
            .send()
            .await
            .expect("sent");
        assert_eq!(moved.text().await.expect("body"), "spec");
        let away = client
            .get(format!("{spec}/away"))
            .send()
            .await
            .expect("sent");
        assert_eq!(away.status(), StatusCode::FOUND, "not followed");
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "the other origin got nothing"
        );
    }
}
