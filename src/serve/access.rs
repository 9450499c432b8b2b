//! Who may join the class: anyone (`--open`), whoever knows the join code
//! (`--password-file`), or the holders of listed keys (`--authorized-keys`).

use std::path::Path;

use russh::MethodKind;
use russh::MethodSet;
use russh::keys::PublicKey;

use super::files;
use crate::lesson::text::printable_path;

#[derive(Debug, Clone)]
pub(crate) enum Access {
    Open,
    Password(String),
    Keys(Vec<PublicKey>),
}

impl Access {
    pub(crate) fn password_file(path: &Path) -> anyhow::Result<Access> {
        let text = files::read_text(path, &files::PASSWORD_FILE)?;
        let code = text.lines().next().unwrap_or("").trim().to_string();
        anyhow::ensure!(
            !code.is_empty(),
            "--password-file {}: its first line is empty; put the class's join code on it",
            printable_path(path)
        );
        // A student types the code: a tab or another control character cannot be typed the
        // same on every keyboard and terminal, so such a line was never meant as one.
        if let Some(column) = code.chars().position(char::is_control) {
            anyhow::bail!(
                "--password-file {}:1:{}: the join code holds a control character; put the \
                 class's join code, letters, digits, spaces and punctuation, on the first line",
                printable_path(path),
                column + 1
            );
        }
        Ok(Access::Password(code))
    }

    /// Reads an OpenSSH `authorized_keys` file: one key per line, comments and options allowed.
    pub(crate) fn authorized_keys(path: &Path) -> anyhow::Result<Access> {
        let text = files::read_text(path, &files::AUTHORIZED_KEYS)?;
        let mut keys = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // Options come first when there are any; the key is the field after its type.
            let fields: Vec<&str> = line.split_whitespace().collect();
            let key = fields
                .windows(2)
                .find(|pair| pair[0].starts_with("ssh-") || pair[0].starts_with("ecdsa-"))
                .and_then(|pair| russh::keys::parse_public_key_base64(pair[1]).ok());
            match key {
                Some(key) => keys.push(key),
                None => anyhow::bail!(
                    "--authorized-keys {}:{}: not a public key line (expected e.g. \
                     `ssh-ed25519 AAAA… name`)",
                    printable_path(path),
                    number + 1
                ),
            }
        }
        anyhow::ensure!(
            !keys.is_empty(),
            "--authorized-keys {}: lists no keys; expected {}",
            printable_path(path),
            files::AUTHORIZED_KEYS.holds
        );
        Ok(Access::Keys(keys))
    }

    /// The authentication methods the server offers.
    pub(crate) fn methods(&self) -> MethodSet {
        let kinds: &[MethodKind] = match self {
            Access::Open => &[
                MethodKind::None,
                MethodKind::PublicKey,
                MethodKind::Password,
            ],
            Access::Password(_) => &[MethodKind::Password],
            Access::Keys(_) => &[MethodKind::PublicKey],
        };
        MethodSet::from(kinds)
    }

    pub(crate) fn allows_anyone(&self) -> bool {
        matches!(self, Access::Open)
    }

    pub(crate) fn allows_password(&self, typed: &str) -> bool {
        match self {
            Access::Open => true,
            Access::Password(code) => same_text(code, typed),
            Access::Keys(_) => false,
        }
    }

    pub(crate) fn allows_key(&self, key: &PublicKey) -> bool {
        match self {
            Access::Open => true,
            Access::Keys(keys) => keys.iter().any(|known| known.key_data() == key.key_data()),
            Access::Password(_) => false,
        }
    }

    /// How the banner describes the choice.
    pub(crate) fn describe(&self) -> String {
        match self {
            Access::Open => "open: any name, no password".to_string(),
            Access::Password(_) => "the join code of the password file".to_string(),
            Access::Keys(keys) => format!("{} authorized key(s)", keys.len()),
        }
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of the code.
fn same_text(expected: &str, typed: &str) -> bool {
    let (a, b) = (expected.as_bytes(), typed.as_bytes());
    let mut difference = a.len() ^ b.len();
    for (index, byte) in a.iter().enumerate() {
        difference |= usize::from(byte ^ b.get(index).copied().unwrap_or(0));
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_code_with_a_control_character_is_refused_naming_its_column() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("code");
        std::fs::write(&file, "Name:\tattn-tutor\n").unwrap();
        let error = Access::password_file(&file).unwrap_err().to_string();
        assert!(
            error.contains("code:1:6: the join code holds a control character"),
            "{error}"
        );
        std::fs::write(&file, "blue sunflower 42\n").unwrap();
        assert!(matches!(
            Access::password_file(&file).unwrap(),
            Access::Password(code) if code == "blue sunflower 42"
        ));
    }

    #[test]
    fn the_join_code_must_match_exactly() {
        let access = Access::Password("sunflower".to_string());
        assert!(access.allows_password("sunflower"));
        assert!(!access.allows_password("sunflowe"));
        assert!(!access.allows_password("sunflowers"));
        assert!(!access.allows_password(""));
    }
}
