//! `show --format html`: a self-contained page of the tutor's screens, one section per step,
//! for a handout.

use super::Asked;
use super::pictures::Opened;
use crate::lesson::LoadedLesson;
use crate::ui::svg::{DEFAULT_BACKGROUND, DEFAULT_FOREGROUND, buffer_svg, escaped};

/// Every step's screen (or `--step`'s), with the cursor on `--cell` where it names a cell of
/// the step's result.
pub(super) fn draw(loaded: &LoadedLesson, asked: &Asked<'_>) -> Result<String, String> {
    let mut opened = Opened::new(loaded, asked)?;
    let shown = asked
        .step
        .map_or_else(|| opened.steps.clone(), |step| vec![step]);
    let mut sections = String::new();
    for step in shown {
        let buffer = opened.screen(step, (asked.cell, false))?;
        let title = opened.title(step);
        sections.push_str(&format!(
            "<section>\n<h2>{}</h2>\n{}</section>\n",
            escaped(&title),
            buffer_svg(&buffer, &title)
        ));
    }
    Ok(page(loaded, &sections))
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
