//! HTTPS for the listener: the rustls server configuration built from `[server.tls]`.
//! The accept loop, which hands each connection to its own task for the handshake (bounded
//! by [`HANDSHAKE_TIMEOUT`]) so one slow client cannot stall the others, is
//! [`super::listener`]'s, shared with plain HTTP.
//!
//! Cryptography is rustls with the `ring` provider only, chosen explicitly here rather than
//! through the process default (see [`crate::http_client`] for why `ring`).

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::listener::Connections;
pub use super::listener::HANDSHAKE_TIMEOUT;
use crate::config::TlsSettings;

/// Why the certificate or key cannot be used. Each variant names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: cannot read: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path}: invalid PEM: {source}")]
    Pem { path: PathBuf, source: pem::Error },
    #[error("{path}: no certificate in the file (expected a PEM `CERTIFICATE` block)")]
    NoCertificate { path: PathBuf },
    #[error(
        "{path}: no private key in the file (expected a PEM `PRIVATE KEY`, `RSA PRIVATE KEY` \
         or `EC PRIVATE KEY` block)"
    )]
    NoPrivateKey { path: PathBuf },
    #[error("{key}: the private key does not match the certificate in {cert}")]
    KeyMismatch { cert: PathBuf, key: PathBuf },
    #[error("{cert} with key {key}: {source}")]
    Config {
        cert: PathBuf,
        key: PathBuf,
        source: rustls::Error,
    },
}

/// Reads the PEM certificate chain and private key; errors name the file and the problem.
///
/// Reads the files synchronously: this runs once at startup (or reload), before serving.
pub fn acceptor(settings: &TlsSettings) -> Result<TlsAcceptor, TlsError> {
    let cert_path = settings.cert.relative();
    let key_path = settings.key.relative();
    let certs = read_certificates(&cert_path)?;
    let key = read_private_key(&key_path)?;

    let config_error = |source| TlsError::Config {
        cert: cert_path.clone(),
        key: key_path.clone(),
        source,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(config_error)?
        .with_no_client_auth()
        // rustls checks here that the key's public half is the leaf's, so a mixed-up pair
        // fails at startup instead of on every handshake.
        .with_single_cert(certs, key)
        .map_err(|source| match source {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                TlsError::KeyMismatch {
                    cert: cert_path.clone(),
                    key: key_path.clone(),
                }
            }
            other => config_error(other),
        })?;
    // axum is built with HTTP/1.1 only; advertising h2 would make clients pick a protocol
    // the connection cannot speak.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn read_pem(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsError::Pem {
            path: path.to_path_buf(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_path_buf(),
        });
    }
    Ok(certs)
}

fn read_private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read_pem(path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|source| match source {
        pem::Error::NoItemsFound => TlsError::NoPrivateKey {
            path: path.to_path_buf(),
        },
        source => TlsError::Pem {
            path: path.to_path_buf(),
            source,
        },
    })
}

/// Serves `app` over TLS on `listener` until `shutdown` resolves, with the default
/// connection bounds of [`super::listener`]; then stops accepting, lets every open
/// connection finish its requests, and returns when all connections are closed. Each
/// request carries `axum::extract::ConnectInfo<SocketAddr>` of the peer.
pub async fn serve(
    listener: TcpListener,
    app: impl Into<super::App>,
    acceptor: TlsAcceptor,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let connections = Connections::new(&crate::config::ServerSettings::default());
    super::listener::serve(listener, app.into(), Some(acceptor), connections, shutdown).await
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use axum::Router;
    use axum::extract::ConnectInfo;
    use axum::routing::get;
    use figment::value::magic::RelativePathBuf;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;
    use tokio::sync::{mpsc, oneshot};
    use tokio::task::JoinHandle;

    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls");

    fn fixture(name: &str) -> PathBuf {
        Path::new(FIXTURES).join(name)
    }

    fn settings(cert: &Path, key: &Path) -> TlsSettings {
        TlsSettings {
            cert: RelativePathBuf::from(cert),
            key: RelativePathBuf::from(key),
        }
    }

    /// A client that trusts only the test CA and resolves `localhost` to 127.0.0.1 alone, so
    /// nothing leaves the loopback interface (no proxy either, whatever the environment says).
    fn client(addr: SocketAddr) -> reqwest::Client {
        crate::http_client::install_crypto_provider();
        let ca = std::fs::read(fixture("ca.pem")).expect("read ca.pem");
        reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(&ca).expect("parse ca.pem")])
            .resolve("localhost", addr)
            .no_proxy()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("build the client")
    }

    struct Server {
        addr: SocketAddr,
        stop: Option<oneshot::Sender<()>>,
        task: JoinHandle<io::Result<()>>,
    }

    async fn start(app: Router) -> Server {
        let acceptor = acceptor(&settings(&fixture("cert.pem"), &fixture("key.pem")))
            .expect("the fixtures make an acceptor");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(listener, app, acceptor, async move {
            let _ = stopped.await;
        }));
        Server {
            addr,
            stop: Some(stop),
            task,
        }
    }

    fn url(server: &Server, path: &str) -> String {
        format!("https://localhost:{}{path}", server.addr.port())
    }

    fn peer_app() -> Router {
        Router::new().route(
            "/peer",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() }),
        )
    }

    #[tokio::test]
    async fn serves_https_with_the_peer_address() {
        let server = start(peer_app()).await;
        let response = client(server.addr)
            .get(url(&server, "/peer"))
            .send()
            .await
            .expect("HTTPS request");
        assert_eq!(response.status(), 200);
        let peer: SocketAddr = response
            .text()
            .await
            .expect("body")
            .parse()
            .expect("the handler saw a socket address");
        assert_eq!(peer.ip(), server.addr.ip());
        assert_ne!(
            peer.port(),
            server.addr.port(),
            "the client's port, not ours"
        );
    }

    #[tokio::test]
    async fn plain_http_and_silent_clients_do_not_stall_the_server() {
        let server = start(peer_app()).await;

        // A client that connects and never starts a handshake: its task waits, not the loop.
        let _silent = TcpStream::connect(server.addr).await.expect("connect");

        let mut plain = TcpStream::connect(server.addr).await.expect("connect");
        plain
            .write_all(b"GET /peer HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .expect("write");
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut answer))
            .await
            .expect("the server closes a plain-HTTP connection promptly")
            .ok();
        assert!(
            !answer.starts_with(b"HTTP/"),
            "plain HTTP got an HTTP answer: {:?}",
            String::from_utf8_lossy(&answer)
        );

        let response = client(server.addr)
            .get(url(&server, "/peer"))
            .send()
            .await
            .expect("HTTPS still works");
        assert_eq!(response.status(), 200);
    }

    #[tokio::test]
    async fn shutdown_lets_requests_in_flight_finish() {
        let (entered, mut in_handler) = mpsc::channel::<()>(1);
        let app = peer_app().route(
            "/slow",
            get(move || {
                let entered = entered.clone();
                async move {
                    let _ = entered.send(()).await;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    "done"
                }
            }),
        );
        let mut server = start(app).await;

        // An idle keep-alive connection (its own client, so its pool is not reused below)
        // and a connection stuck before its handshake: neither may hold up shutdown.
        let idle = client(server.addr);
        let warm = idle
            .get(url(&server, "/peer"))
            .send()
            .await
            .expect("warm-up");
        assert_eq!(warm.status(), 200);
        warm.text().await.expect("warm-up body");
        let _silent = TcpStream::connect(server.addr).await.expect("connect");

        let slow_client = client(server.addr);
        let slow_url = url(&server, "/slow");
        let slow = tokio::spawn(async move { slow_client.get(slow_url).send().await });
        in_handler.recv().await.expect("the handler started");

        let stop = server.stop.take().expect("not stopped yet");
        stop.send(()).expect("serve is still running");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !server.task.is_finished(),
            "serve returned with a request in flight"
        );
        let response = slow
            .await
            .expect("request task")
            .expect("the request in flight completes");
        assert_eq!(response.status(), 200);
        assert_eq!(response.text().await.expect("body"), "done");

        let drained = Instant::now();
        tokio::time::timeout(Duration::from_secs(5), &mut server.task)
            .await
            .expect("serve returns once connections close, long before the handshake timeout")
            .expect("serve task")
            .expect("serve");
        assert!(drained.elapsed() < HANDSHAKE_TIMEOUT);

        let refused = TcpStream::connect(server.addr).await;
        assert!(refused.is_err(), "a connection was accepted after shutdown");
    }

    #[test]
    fn acceptor_errors_name_the_file() {
        let cert = fixture("cert.pem");
        let key = fixture("key.pem");
        let missing = fixture("missing.pem");
        let cases = [
            // (certificate, key, the file the message must name, what it must say)
            (missing.as_path(), key.as_path(), &missing, "cannot read"),
            (cert.as_path(), cert.as_path(), &cert, "no private key"),
            (key.as_path(), key.as_path(), &key, "no certificate"),
        ];
        for (cert_file, key_file, culprit, problem) in cases {
            let error = acceptor(&settings(cert_file, key_file))
                .err()
                .expect("the acceptor is refused");
            let message = error.to_string();
            assert!(
                message.contains(&culprit.display().to_string()) && message.contains(problem),
                "{message}"
            );
        }

        let other_key = fixture("other-key.pem");
        let error = acceptor(&settings(&cert, &other_key))
            .err()
            .expect("a key from another pair is refused");
        assert!(matches!(error, TlsError::KeyMismatch { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains(&other_key.display().to_string())
                && message.contains(&cert.display().to_string()),
            "{message}"
        );
    }
}
