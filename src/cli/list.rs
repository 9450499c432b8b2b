//! `attn-tutor list`: the built-in lessons.

use std::io::Write;

use super::status;
use crate::lesson::{BUILTIN, load_text};

pub(crate) fn run(out: &mut dyn Write) -> u8 {
    let width = BUILTIN
        .iter()
        .map(|lesson| lesson.name.len())
        .max()
        .unwrap_or(0);
    for builtin in BUILTIN {
        let line = match load_text(builtin.name, None, builtin.text.to_string()) {
            Ok(loaded) => format!(
                "{:width$}  {}  ({})",
                builtin.name,
                loaded.lesson.title,
                loaded.lesson.shape_text()
            ),
            // A built-in lesson that does not load is a bug; say so rather than hide it.
            Err(error) => format!("{:width$}  invalid: {}", builtin.name, error.first_line()),
        };
        let _ = writeln!(out, "{line}");
    }
    status::OK
}
