//! `--tls-cert` and `--tls-key`: the browser seat over HTTPS and WSS, so the join code does not
//! cross the classroom's network in the clear.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;

use super::super::files;
use crate::lesson::text::printable_path;

/// The server's TLS settings from a PEM certificate chain and its private key.
pub fn config(cert: &Path, key: &Path) -> anyhow::Result<Arc<ServerConfig>> {
    let chain_pem = files::read(cert, &files::TLS_CERT)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&chain_pem)
        .collect::<Result<_, _>>()
        .map_err(|error| {
            anyhow::anyhow!(
                "--tls-cert {}: {error}; expected {}",
                printable_path(cert),
                files::TLS_CERT.holds
            )
        })?;
    anyhow::ensure!(
        !chain.is_empty(),
        "--tls-cert {}: no certificate in it; expected {}",
        printable_path(cert),
        files::TLS_CERT.holds
    );
    let key_pem = files::read(key, &files::TLS_KEY)?;
    let private = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| {
        anyhow::anyhow!(
            "--tls-key {}: {error}; expected {}",
            printable_path(key),
            files::TLS_KEY.holds
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
