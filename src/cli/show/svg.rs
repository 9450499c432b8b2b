//! `show --format svg`: the tutor's screen of one step as a picture, for a slide.

use super::Asked;
use super::pictures::Opened;
use crate::lesson::LoadedLesson;
use crate::ui::svg::buffer_svg;

/// `--step`'s screen, else the first step's, with the cursor on `--cell`, which must name a
/// cell of the step's result.
pub(super) fn draw(loaded: &LoadedLesson, asked: &Asked<'_>) -> Result<String, String> {
    let mut opened = Opened::new(loaded, asked)?;
    let step = asked
        .step
        .or(opened.steps.first().copied())
        .ok_or("no step")?;
    let buffer = opened.screen(step, (asked.cell, true))?;
    Ok(buffer_svg(&buffer, &opened.title(step)))
}
