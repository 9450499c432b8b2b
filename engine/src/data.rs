//! Where attn-tutor keeps its own files (the classroom's host key, practice progress): the
//! user's data directory, as the XDG base directory rules place it.

use std::ffi::OsStr;
use std::path::PathBuf;

/// attn-tutor's folder in the user's data directory: `$XDG_DATA_HOME/attn-tutor`, else
/// `~/.local/share/attn-tutor`, else `./attn-tutor` when there is no home at all.
pub fn data_dir() -> PathBuf {
    data_dir_in(
        std::env::var_os("XDG_DATA_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// `data_dir` with the environment passed in, so the rule can be tested without changing the
/// process environment.
pub fn data_dir_in(xdg_data_home: Option<&OsStr>, home: Option<&OsStr>) -> PathBuf {
    let data = xdg_data_home
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|home| PathBuf::from(home).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("attn-tutor")
}
