//! `show --format svg` and `--format html`: the tutor's own screens, drawn by the same view
//! into a buffer of the asked size and written as pictures, for slides and handouts.

use std::io::Write;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use super::show::{Asked, resolve_cell};
use super::{ShowFormat, status};
use crate::app::{Action, App, PickerEntry, update};
use crate::attention::Step;
use crate::lesson::LoadedLesson;
use crate::ui::svg::{DEFAULT_BACKGROUND, DEFAULT_FOREGROUND, buffer_svg, escaped};
use crate::ui::{Theme, view};

/// The smallest screen the tutor draws its steps on; the largest a picture is made at.
const SMALLEST: (u16, u16) = (80, 24);
const LARGEST: (u16, u16) = (400, 200);

/// "100x30" as columns and rows, within the sizes the tutor draws.
fn size(text: &str) -> Result<(u16, u16), String> {
    let (width, height) = text
        .split_once(['x', 'X', '×'])
        .and_then(|(w, h)| Some((w.trim().parse::<u16>().ok()?, h.trim().parse::<u16>().ok()?)))
        .ok_or_else(|| {
            format!(
                "--size {}: expected columns x rows, like 100x30",
                crate::lesson::text::printable(text)
            )
        })?;
    if width < SMALLEST.0 || height < SMALLEST.1 || width > LARGEST.0 || height > LARGEST.1 {
        return Err(format!(
            "--size {width}x{height}: the tutor is drawn from {}x{} to {}x{}",
            SMALLEST.0, SMALLEST.1, LARGEST.0, LARGEST.1
        ));
    }
    Ok((width, height))
}

/// The screen of `step` as the tutor draws it, with the cursor on `cell` when one is asked. A
/// cell that names no cell of the step's result is an error when `cell_required` (one
/// picture), and leaves the cursor where it is on a page of every step, as `show`'s text does.
fn screen(
    app: &mut App,
    step: Step,
    (cell, cell_required): (Option<&str>, bool),
    (width, height): (u16, u16),
    theme: &Theme,
) -> Result<Buffer, String> {
    let tutor = app.tutor.as_mut().ok_or("the lesson did not open")?;
    let index = tutor
        .steps
        .iter()
        .position(|shown| *shown == step)
        .ok_or_else(|| format!("this lesson has no {} step", step.key()))?;
    tutor.go_to_step(index);
    if let Some(spec) = cell {
        let focus = tutor.focus;
        match resolve_cell(&tutor.attention, focus, spec, tutor.index_of(focus)) {
            Ok(cell) => {
                update(
                    app,
                    Action::Select {
                        matrix: cell.matrix,
                        row: cell.row,
                        col: Some(cell.col),
                    },
                );
            }
            Err(problem) if cell_required => {
                return Err(format!(
                    "--cell {}: {problem} in {} on the {} step",
                    crate::lesson::text::printable(spec),
                    tutor.attention.symbol_in(focus, tutor.head),
                    step.title()
                ));
            }
            Err(_) => {}
        }
    }
    let mut terminal =
        Terminal::new(TestBackend::new(width, height)).map_err(|error| error.to_string())?;
    terminal
        .draw(|frame| view(frame, app, theme))
        .map_err(|error| error.to_string())?;
    // A handout has no keys to press: the bottom line's key hints are left off the picture
    // (its size stays the screen's).
    let mut picture = terminal.backend().buffer().clone();
    if let Some(bottom) = height.checked_sub(1) {
        for x in 0..width {
            picture[(x, bottom)].reset();
        }
    }
    Ok(picture)
}

pub(crate) fn run(
    loaded: &LoadedLesson,
    asked: &Asked<'_>,
    format: ShowFormat,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match pictures(loaded, asked, format) {
        Ok(text) => {
            let _ = out.write_all(text.as_bytes());
            status::OK
        }
        Err(problem) => {
            let _ = writeln!(
                err,
                "error: {}",
                crate::lesson::text::printable_lines(&problem)
            );
            status::INVALID
        }
    }
}

fn pictures(
    loaded: &LoadedLesson,
    asked: &Asked<'_>,
    format: ShowFormat,
) -> Result<String, String> {
    let size = size(asked.size)?;
    // The terminal's colors at their best, or none: a picture is not read in a terminal.
    let theme = if asked.monochrome {
        Theme::monochrome()
    } else {
        Theme::detect(false, Some("truecolor"), None)
    };
    let mut app = App::new(
        vec![PickerEntry {
            name: loaded.name.clone(),
            lesson: Ok(loaded.clone()),
        }],
        Some(0),
    );
    let steps = app
        .tutor
        .as_ref()
        .ok_or("the lesson did not open")?
        .steps
        .clone();
    let title = |step: Step| {
        let number = steps
            .iter()
            .position(|shown| *shown == step)
            .map_or(0, |i| i + 1);
        format!(
            "Step {number}/{} · {} — {}",
            steps.len(),
            step.title(),
            loaded.lesson.title
        )
    };
    match format {
        ShowFormat::Html => {
            let shown = asked.step.map_or_else(|| steps.clone(), |step| vec![step]);
            let mut sections = String::new();
            for step in shown {
                let buffer = screen(&mut app, step, (asked.cell, false), size, &theme)?;
                sections.push_str(&format!(
                    "<section>\n<h2>{}</h2>\n{}</section>\n",
                    escaped(&title(step)),
                    buffer_svg(&buffer, &title(step))
                ));
            }
            Ok(page(loaded, &sections))
        }
        _ => {
            let step = asked.step.or(steps.first().copied()).ok_or("no step")?;
            let buffer = screen(&mut app, step, (asked.cell, true), size, &theme)?;
            Ok(buffer_svg(&buffer, &title(step)))
        }
    }
}

/// A page that needs nothing else: the pictures inline, the style in the head.
fn page(loaded: &LoadedLesson, sections: &str) -> String {
    let lesson = &loaded.lesson;
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>\nbody {{ background: {DEFAULT_BACKGROUND}; color: \
         {DEFAULT_FOREGROUND}; font-family: system-ui, sans-serif; margin: 2em; }}\n\
         section {{ margin: 2em 0; }}\nh2 {{ font-size: 1.1em; }}\n\
         svg {{ max-width: 100%; height: auto; }}\n</style>\n</head>\n<body>\n\
         <h1>{title}</h1>\n<p>{source}</p>\n{sections}</body>\n</html>\n",
        title = escaped(&lesson.title),
        source = escaped(&lesson.source),
    )
}
