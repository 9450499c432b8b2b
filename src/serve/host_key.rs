//! The server's host key: an Ed25519 key made on first start and kept, so that students'
//! `known_hosts` stay valid from one class to the next.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use russh::keys::ssh_key::LineEnding;
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::{HashAlg, PrivateKey};

use super::files;
use crate::lesson::text::printable_path;

/// Where the key lives unless `--host-key` says otherwise: the user's data directory.
pub(crate) fn default_path() -> PathBuf {
    crate::data::data_dir().join("ssh_host_ed25519_key")
}

/// Reads the key at `path`, or makes one there (mode 0600) when there is none.
pub(crate) fn load_or_create(path: &Path) -> anyhow::Result<(PrivateKey, bool)> {
    // A link to nowhere is not "no key": it is read, and its error shown.
    if path.symlink_metadata().is_ok() {
        let text = files::read_text(path, &files::HOST_KEY)?;
        let key = russh::keys::decode_secret_key(&text, None).map_err(|error| {
            anyhow::anyhow!(
                "--host-key {}: {error}; expected {}",
                printable_path(path),
                files::HOST_KEY.holds
            )
        })?;
        return Ok((key, false));
    }
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)
        .map_err(|error| anyhow::anyhow!("no randomness for a host key: {error}"))?;
    let key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    let text = key
        .to_openssh(LineEnding::LF)
        .context("cannot encode the new host key")?;
    if let Some(folder) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create the folder {}", printable_path(folder)))?;
    }
    write_private(path, text.as_bytes())
        .with_context(|| format!("cannot write the host key {}", printable_path(path)))?;
    Ok((key, true))
}

/// A new file readable by its owner only; never replaces an existing one.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// The fingerprint students' ssh shows on first connection: `SHA256:…`.
pub(crate) fn fingerprint(key: &PrivateKey) -> String {
    key.public_key().fingerprint(HashAlg::Sha256).to_string()
}
