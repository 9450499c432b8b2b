//! The tutor's own screens for `show --format svg` and `--format html`: the lesson opened as
//! in the tutor and each step drawn by the same view into a buffer of the asked size.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use super::{Asked, resolve_cell};
use crate::app::{Action, App, PickerEntry, update};
use crate::attention::Step;
use crate::lesson::LoadedLesson;
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
    let tutor = app.tutor_mut().ok_or("the lesson did not open")?;
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

/// The lesson opened in the tutor, with the size and colors its pictures are drawn in.
pub(super) struct Opened<'a> {
    loaded: &'a LoadedLesson,
    app: App,
    /// The steps this lesson has, numbered as the tutor numbers them.
    pub(super) steps: Vec<Step>,
    size: (u16, u16),
    theme: Theme,
}

impl<'a> Opened<'a> {
    pub(super) fn new(loaded: &'a LoadedLesson, asked: &Asked<'_>) -> Result<Self, String> {
        let size = size(asked.size)?;
        // The terminal's colors at their best, or none: a picture is not read in a terminal.
        let theme = if asked.monochrome {
            Theme::monochrome()
        } else {
            Theme::detect(false, Some("truecolor"), None)
        };
        let app = App::new(
            vec![PickerEntry {
                name: loaded.name.clone(),
                lesson: Ok(loaded.clone()),
            }],
            Some(0),
        );
        let steps = app.tutor().ok_or("the lesson did not open")?.steps.clone();
        Ok(Opened {
            loaded,
            app,
            steps,
            size,
            theme,
        })
    }

    /// "Step 5/6 · Softmax — the lesson's title".
    pub(super) fn title(&self, step: Step) -> String {
        let number = self
            .steps
            .iter()
            .position(|shown| *shown == step)
            .map_or(0, |i| i + 1);
        format!(
            "Step {number}/{} · {} — {}",
            self.steps.len(),
            step.title(),
            self.loaded.lesson.title
        )
    }

    /// The screen of `step`; see `screen`.
    pub(super) fn screen(
        &mut self,
        step: Step,
        cell: (Option<&str>, bool),
    ) -> Result<Buffer, String> {
        screen(&mut self.app, step, cell, self.size, &self.theme)
    }
}
