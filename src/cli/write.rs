//! `attn-tutor new` and `attn-tutor freeze`: the subcommands that write lesson files.

use std::io::Write;
use std::path::Path;

use super::status;
use crate::lesson::limits::{MAX_FILE_BYTES, MAX_FILE_SIZE};
use crate::lesson::text::{printable, printable_path};
use crate::lesson::{freeze as freeze_text, frozen_bytes, load, parse, template, write_new_file};

pub(crate) fn new(path: &Path, title: &str, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let text = template(title);
    let parsed = parse(&text);
    if let Some(problem) = parsed.errors().next() {
        // Only the title comes from the user; report it rather than write a broken lesson.
        let _ = writeln!(err, "error: the title cannot be used: {}", problem.message);
        return status::INVALID;
    }
    match write_new_file(path, &text) {
        Ok(()) => {
            let _ = writeln!(
                out,
                "wrote {}; check it with: attn-tutor check {}",
                printable_path(path),
                printable_path(path)
            );
            status::OK
        }
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            status::INVALID
        }
    }
}

pub(crate) fn freeze(
    spec: &str,
    output: &Path,
    color: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let loaded = match load(spec) {
        Ok(loaded) => loaded,
        Err(error) => {
            let _ = write!(err, "{}", error.render(color));
            return status::INVALID;
        }
    };
    // Measured before it is made: a frozen 1024 × 1024 generator is over 20 MB of numbers, a
    // file no lesson may be. Then nothing is written, and the lesson as it is stays the copy.
    let bytes = frozen_bytes(&loaded.text, &loaded.lesson);
    if bytes > MAX_FILE_BYTES {
        let _ = writeln!(
            err,
            "error: the frozen copy of {} would be {bytes} bytes, and a lesson file is at most \
             {MAX_FILE_BYTES} bytes ({MAX_FILE_SIZE}); nothing was written\n\
             help: the lesson with its generators already gives the same numbers on every \
             machine; for the numbers themselves, run `attn-tutor show {} --format json`",
            printable(spec),
            printable(spec)
        );
        return status::INVALID;
    }
    let frozen = freeze_text(&loaded.text, &loaded.lesson);
    let reread = parse(&frozen);
    if reread.lesson.as_ref().map(|l| l.inputs()).is_none() {
        let _ = writeln!(
            err,
            "error: the frozen copy of {spec} does not read back; nothing was written (please report this)"
        );
        return status::INVALID;
    }
    if output == Path::new("-") {
        let _ = out.write_all(frozen.as_bytes());
        return status::OK;
    }
    match write_new_file(output, &frozen) {
        Ok(()) => {
            let _ = writeln!(
                out,
                "wrote {} with every generated matrix written out",
                printable_path(output)
            );
            status::OK
        }
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            status::INVALID
        }
    }
}
