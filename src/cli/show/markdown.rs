//! `show --format markdown`: the lesson's steps as a Markdown handout, each matrix a table and
//! each explained cell's working in code.

use std::io::{self, Write};

use super::{Shown, header_line};
use crate::cli::table::{markdown_code, markdown_text, write_markdown_table_in};
use crate::ui::formula::caption_with_group;

pub(super) fn write(out: &mut dyn Write, shown: &Shown<'_>) -> io::Result<()> {
    let Shown {
        loaded,
        attention,
        sections,
        ..
    } = *shown;
    let lesson = &loaded.lesson;
    write!(out, "# {}\n\n", markdown_text(&lesson.title))?;
    if !lesson.source.is_empty() {
        write!(out, "*Source: {}*\n\n", markdown_text(&lesson.source))?;
    }
    if !lesson.summary.is_empty() {
        write!(out, "{}\n\n", markdown_text(&lesson.summary))?;
    }
    writeln!(out, "{}", markdown_text(&header_line(loaded, attention)))?;
    for section in sections {
        write!(out, "\n## {}\n", markdown_text(&section.heading()))?;
        if !section.narration.is_empty() {
            write!(out, "\n{}\n", markdown_text(&section.narration))?;
        }
        if let Some(note) = &section.note {
            write!(out, "\n> {}\n", markdown_text(note))?;
        }
        let head = section.head_index();
        for name in section.matrices.iter().filter(|name| section.shows(**name)) {
            write!(
                out,
                "\n**{}**\n\n",
                markdown_text(&caption_with_group(attention, *name, head))
            )?;
            write_markdown_table_in(
                out,
                attention,
                *name,
                (head, section.token),
                lesson.decimals,
            )?;
        }
        if !section.derivations.is_empty() {
            write!(out, "\nHow each cell is computed:\n\n")?;
            for (_, text) in &section.derivations {
                writeln!(out, "- {}", markdown_code(text))?;
            }
        }
    }
    Ok(())
}
