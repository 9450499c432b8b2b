//! `--tls-cert` and `--tls-key`: the browser seat over HTTPS and WSS, so the join code does not
//! cross the classroom's network in the clear.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;

use crate::lesson::text::printable_path;

/// The server's TLS settings from a PEM certificate chain and its private key.
pub fn config(cert: &Path, key: &Path) -> anyhow::Result<Arc<ServerConfig>> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect)
        .map_err(|error| {
            anyhow::anyhow!(
                "--tls-cert {}: {error} (expected a PEM file of -----BEGIN CERTIFICATE----- blocks)",
                printable_path(cert)
            )
        })?;
    anyhow::ensure!(
        !chain.is_empty(),
        "--tls-cert {}: no certificate in it (expected -----BEGIN CERTIFICATE-----)",
        printable_path(cert)
    );
    let private = PrivateKeyDer::from_pem_file(key).map_err(|error| {
        anyhow::anyhow!(
            "--tls-key {}: {error} (expected a PEM private key, -----BEGIN PRIVATE KEY-----)",
            printable_path(key)
        )
    })?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|error| {
            anyhow::anyhow!(
                "--tls-cert {} and --tls-key {} do not go together: {error}",
                printable_path(cert),
                printable_path(key)
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
