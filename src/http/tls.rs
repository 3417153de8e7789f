//! HTTPS for the listener: the rustls server configuration built from `[server.tls]`.
//!
//! Cryptography is rustls with the `ring` provider only, chosen explicitly here rather than
//! through the process default (see [`crate::http_client`] for why `ring`).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

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

#[cfg(test)]
mod tests {
    use figment::value::magic::RelativePathBuf;

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
