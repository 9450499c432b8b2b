//! `show --format text`: the lesson's steps as plain text, each matrix a table and each
//! explained cell's working on a line of its own.

use std::io::{self, Write};

use super::{Shown, header_line, wrap};
use crate::cli::table::write_text_table_in;
use crate::ui::formula::caption_with_group;

pub(super) fn write(out: &mut dyn Write, shown: &Shown<'_>) -> io::Result<()> {
    let Shown {
        loaded,
        attention,
        sections,
        ..
    } = *shown;
    let lesson = &loaded.lesson;
    writeln!(out, "{}  ({})", lesson.title, loaded.name)?;
    if !lesson.source.is_empty() {
        writeln!(out, "Source: {}", lesson.source)?;
    }
    writeln!(out, "{}", header_line(loaded, attention))?;
    for section in sections {
        write!(out, "\n== {} ==\n", section.heading())?;
        if !section.narration.is_empty() {
            write!(out, "\n{}\n", wrap(&section.narration, 78))?;
        }
        if let Some(note) = &section.note {
            write!(out, "\nNote: {note}\n")?;
        }
        let head = section.head_index();
        for name in section.matrices.iter().filter(|name| section.shows(**name)) {
            write!(out, "\n{}\n", caption_with_group(attention, *name, head))?;
            write_text_table_in(
                out,
                attention,
                *name,
                (head, section.token),
                lesson.decimals,
            )?;
        }
        if !section.derivations.is_empty() {
            writeln!(out, "\nHow each cell is computed:")?;
            for (_, text) in &section.derivations {
                writeln!(out, "  {text}")?;
            }
        }
    }
    Ok(())
}
