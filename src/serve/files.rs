//! Files the teacher names on `serve`'s command line (the join code, the authorized keys, the
//! host key, the TLS certificate and key): only a regular file is read, never more than any real
//! one of its kind could hold, and a private key only when its owner alone may read it. A pipe,
//! a device or a file gone wrong is refused at start-up with the flag, the file and what was
//! expected, rather than hanging the server or filling its memory.

use std::io::Read;
use std::path::Path;

use anyhow::Context;

use crate::lesson::text::printable_path;

/// What a flag's file must be.
pub(crate) struct Expected {
    /// The flag that named the file, as the teacher typed it (`--tls-key`).
    pub flag: &'static str,
    /// What it should hold, for the error (`a PEM private key`).
    pub holds: &'static str,
    /// The most bytes a real one takes, with room to spare.
    pub most: u64,
    /// Whether it is a private key, which others on this machine must not be able to read.
    pub private: bool,
}

/// A join code on one line: a few words.
pub(crate) const PASSWORD_FILE: Expected = Expected {
    flag: "--password-file",
    holds: "the class's join code on its first line",
    most: 64 * 1024,
    private: false,
};

/// A class's keys: a line of about a hundred bytes for each student, and comments.
pub(crate) const AUTHORIZED_KEYS: Expected = Expected {
    flag: "--authorized-keys",
    holds: "an OpenSSH authorized_keys file, one `ssh-ed25519 AAAA… name` line a key",
    most: 4 * 1024 * 1024,
    private: false,
};

/// An OpenSSH private key: a few hundred bytes for Ed25519, a few thousand for RSA.
pub(crate) const HOST_KEY: Expected = Expected {
    flag: "--host-key",
    holds: "an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY-----)",
    most: 64 * 1024,
    private: true,
};

/// A certificate chain: a few certificates of a few kilobytes each.
pub(crate) const TLS_CERT: Expected = Expected {
    flag: "--tls-cert",
    holds: "a PEM file of -----BEGIN CERTIFICATE----- blocks",
    most: 1024 * 1024,
    private: false,
};

/// A PEM private key: a few kilobytes even for RSA 8192.
pub(crate) const TLS_KEY: Expected = Expected {
    flag: "--tls-key",
    holds: "a PEM private key (-----BEGIN PRIVATE KEY-----)",
    most: 64 * 1024,
    private: true,
};

/// The bytes of the file at `path`, if it is what `expected` says.
pub(crate) fn read(path: &Path, expected: &Expected) -> anyhow::Result<Vec<u8>> {
    let named = || format!("{} {}", expected.flag, printable_path(path));
    // Looked at before opening: opening a pipe waits for a writer, which may never come.
    let before = std::fs::metadata(path).with_context(|| format!("{}: cannot read it", named()))?;
    refuse_unless_regular(&before, expected, &named())?;
    let file = std::fs::File::open(path).with_context(|| format!("{}: cannot read it", named()))?;
    let opened = file
        .metadata()
        .with_context(|| format!("{}: cannot read it", named()))?;
    refuse_unless_regular(&opened, expected, &named())?;
    if expected.private {
        refuse_unprotected(&opened, expected.flag, path)?;
    }
    let mut bytes = Vec::new();
    file.take(expected.most + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{}: cannot read it", named()))?;
    // The kernel's own files (/proc, /sys) call themselves regular but say they are empty and
    // then hold text made on reading: nothing a teacher wrote, and never the same twice.
    anyhow::ensure!(
        opened.len() > 0 || bytes.is_empty(),
        "{}: a file the kernel makes as it is read (its size says 0 bytes, yet it holds {}), not \
         one written for this; expected {}",
        named(),
        bytes.len(),
        expected.holds
    );
    anyhow::ensure!(
        bytes.len() as u64 <= expected.most,
        "{}: larger than {} KiB, more than any real one; expected {}",
        named(),
        expected.most / 1024,
        expected.holds
    );
    Ok(bytes)
}

/// As [`read`], as text.
pub(crate) fn read_text(path: &Path, expected: &Expected) -> anyhow::Result<String> {
    String::from_utf8(read(path, expected)?).map_err(|error| {
        anyhow::anyhow!(
            "{} {}: not text (byte {} is not UTF-8); expected {}",
            expected.flag,
            printable_path(path),
            error.utf8_error().valid_up_to() + 1,
            expected.holds
        )
    })
}

fn refuse_unless_regular(
    metadata: &std::fs::Metadata,
    expected: &Expected,
    named: &str,
) -> anyhow::Result<()> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    anyhow::bail!(
        "{named}: not a regular file (it is {}); expected {}",
        describe(&kind),
        expected.holds
    )
}

#[cfg(unix)]
fn describe(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn describe(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// Refuses a private key that the group or others may read or write, as OpenSSH does: anyone
/// who can read it can pretend to be this server to the students.
#[cfg(unix)]
pub(crate) fn refuse_unprotected(
    metadata: &std::fs::Metadata,
    flag: &str,
    path: &Path,
) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = metadata.permissions().mode() & 0o777;
    anyhow::ensure!(
        mode & 0o077 == 0,
        "UNPROTECTED PRIVATE KEY FILE: {flag} {path} has mode {mode:04o}, so others on this \
         machine can read it and pretend to be this server; it must be readable by its owner \
         only\nhelp: chmod 600 {path}",
        path = printable_path(path)
    );
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn refuse_unprotected(
    _metadata: &std::fs::Metadata,
    _flag: &str,
    _path: &Path,
) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_a_folder_and_a_pipe_are_refused_without_reading_them() {
        for (path, kind) in [
            ("/dev/zero", "a character device"),
            ("/dev/urandom", "a character device"),
            ("/", "a folder"),
        ] {
            let error = read(Path::new(path), &TLS_KEY).unwrap_err().to_string();
            assert!(
                error.starts_with(&format!(
                    "--tls-key {path}: not a regular file (it is {kind})"
                )),
                "{error}"
            );
            assert!(error.contains("expected a PEM private key"), "{error}");
        }
    }

    #[test]
    fn a_file_the_kernel_makes_as_it_is_read_is_refused() {
        let error = read(Path::new("/proc/self/status"), &PASSWORD_FILE)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("--password-file /proc/self/status: a file the kernel makes"),
            "{error}"
        );
        // An empty file the teacher made is read as empty, for its own error later.
        let dir = tempfile::TempDir::new().unwrap();
        let empty = dir.path().join("code");
        std::fs::write(&empty, "").unwrap();
        assert!(read(&empty, &PASSWORD_FILE).unwrap().is_empty());
    }

    #[test]
    fn a_file_larger_than_any_real_one_is_refused() {
        let dir = tempfile::TempDir::new().unwrap();
        let big = dir.path().join("code");
        std::fs::write(&big, vec![b'x'; 64 * 1024 + 1]).unwrap();
        let error = read(&big, &PASSWORD_FILE).unwrap_err().to_string();
        assert!(error.contains("larger than 64 KiB"), "{error}");
        std::fs::write(&big, vec![b'x'; 64 * 1024]).unwrap();
        assert_eq!(read(&big, &PASSWORD_FILE).unwrap().len(), 64 * 1024);
    }
}
