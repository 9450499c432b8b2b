//! `attn-tutor check`: validate lessons and compare the figures their documents printed with the
//! exact values, saying where a document's printing drifts.

use std::io::Write;

use super::status;
use crate::attention::gradient_check::{DirectionCheck, GradientCheck, SAFETY, SHRINK};
use crate::attention::number::{format_fixed, format_number};
use crate::attention::{Attention, Cell, Step};
use crate::lesson::text::printable;
use crate::lesson::{
    BUILTIN, ExpectedFigure, Lesson, LoadedLesson, PrintedNumber, load, load_text,
};
use crate::pipeline::Per;
use nalgebra::DMatrix;

/// Drift notes listed per figure before the rest are counted.
const MAX_NOTES: usize = 8;

pub(crate) fn run(specs: &[String], color: bool, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let loaded: Vec<Result<LoadedLesson, _>> = if specs.is_empty() {
        BUILTIN
            .iter()
            .map(|b| load_text(b.name, None, b.text.to_string()))
            .collect()
    } else {
        specs.iter().map(|spec| load(spec)).collect()
    };
    let mut invalid = 0;
    let mut off = 0;
    let mut drifting = 0;
    let mut gradients_off = 0;
    for result in &loaded {
        let lesson = match result {
            Ok(lesson) => lesson,
            Err(error) => {
                invalid += 1;
                let _ = write!(err, "{}", error.render(color));
                continue;
            }
        };
        if !lesson.warnings.is_empty() {
            let _ = write!(
                err,
                "{}",
                crate::lesson::diagnostic::render(
                    &lesson.warnings,
                    &lesson.text,
                    &lesson.display_path(),
                    color
                )
            );
        }
        let report = check_lesson(lesson);
        off += report.figures_off;
        drifting += report.figures_drifting;
        gradients_off += usize::from(report.gradients_off);
        let _ = out.write_all(report.text.as_bytes());
    }
    let total = loaded.len();
    let lessons = |n: usize| if n == 1 { "lesson" } else { "lessons" };
    let figures = |n: usize| {
        if n == 1 {
            "printed figure"
        } else {
            "printed figures"
        }
    };
    let summary = if invalid > 0 {
        let verb = if invalid == 1 { "is" } else { "are" };
        format!("{invalid} of {total} {} {verb} invalid", lessons(total))
    } else if off > 0 || gradients_off > 0 {
        let verb = if off == 1 { "is" } else { "are" };
        let figures_off =
            (off > 0).then(|| format!("{off} {} {verb} outside tolerance", figures(off)));
        let gradients = (gradients_off > 0).then(|| {
            let whose = if total == 1 {
                "the lesson's".to_string()
            } else {
                let whose = if gradients_off == 1 {
                    "lesson's"
                } else {
                    "lessons'"
                };
                format!("{gradients_off} {whose}")
            };
            format!("{whose} gradients disagree with finite differences (above)")
        });
        figures_off
            .into_iter()
            .chain(gradients)
            .collect::<Vec<_>>()
            .join("; ")
    } else if drifting > 0 {
        let verb = if drifting == 1 { "drifts" } else { "drift" };
        let passes = if total == 1 {
            "the lesson passes".to_string()
        } else {
            format!("all {total} lessons pass")
        };
        format!(
            "{passes}; {drifting} {} {verb} from the exact values within tolerance (notes above)",
            figures(drifting)
        )
    } else if total == 1 {
        "the lesson passes".to_string()
    } else {
        format!("all {total} lessons pass")
    };
    let _ = writeln!(out, "\n{summary}");
    if invalid > 0 {
        status::INVALID
    } else if off > 0 || gradients_off > 0 {
        status::FIGURE_OFF
    } else {
        status::OK
    }
}

/// The outcome of one lesson's check.
pub(crate) struct LessonReport {
    pub text: String,
    pub figures_off: usize,
    pub figures_drifting: usize,
    /// The backward pass's gradients disagree with finite differences.
    pub gradients_off: bool,
}

/// Compares every printed figure with the exact value.
pub(crate) fn check_lesson(loaded: &LoadedLesson) -> LessonReport {
    let lesson = &loaded.lesson;
    let attention = Attention::compute(lesson);
    let tolerance = lesson.tolerance();
    let mut text = format!(
        "{}  {}  ({})\n",
        loaded.name,
        lesson.title,
        lesson.shape_text()
    );
    let mut report = LessonReport {
        text: String::new(),
        figures_off: 0,
        figures_drifting: 0,
        gradients_off: false,
    };
    if lesson.expected.figures.is_empty() {
        text.push_str("  valid; no printed figures to compare\n");
    }
    // The names line up; a head's ("head 2's weights") are wider than a key.
    let name_width = lesson
        .expected
        .figures
        .iter()
        .map(|figure| figure_name(&attention, figure).chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    for figure in &lesson.expected.figures {
        let outcome = compare(lesson, &attention, figure, tolerance);
        let verdict = if outcome.within { "ok  " } else { "FAIL" };
        let worst = match outcome.worst {
            Some((cell, deviation)) if deviation > 0.0 => {
                format!(
                    "largest deviation {} at {}",
                    short(deviation),
                    cell_name(&attention, figure, cell)
                )
            }
            _ => "matches exactly".to_string(),
        };
        text.push_str(&format!(
            "  {verdict}  {:<name_width$} {worst} (tolerance {})\n",
            figure_name(&attention, figure),
            short(tolerance)
        ));
        if !outcome.within {
            report.figures_off += 1;
        }
        if !outcome.notes.is_empty() {
            report.figures_drifting += 1;
        }
        for note in outcome.notes.iter().take(MAX_NOTES) {
            text.push_str(&format!("        {note}\n"));
        }
        if outcome.notes.len() > MAX_NOTES {
            text.push_str(&format!(
                "        … and {} more cells\n",
                outcome.notes.len() - MAX_NOTES
            ));
        }
    }
    // The backward pass against finite differences: a lesson's gradients are figures of its
    // own, and a wrong one fails like a wrong printed figure.
    if let Some(gradients) = crate::attention::gradient_check::check_gradients(lesson, &attention) {
        text.push_str(&gradient_lines(&attention, &gradients));
        report.gradients_off = !gradients.agrees();
    }
    // What the document got wrong that no figure shows, in the lesson author's words; the text
    // is untrusted, so anything invisible is written out as an escape.
    for slip in &lesson.expected.slips {
        text.push_str(&format!("  slip  {}\n", printable(slip)));
    }
    // A narration written for other numbers (a saved edit, a copied text) quotes values this
    // lesson does not have: said, not failed, since a text may quote a number of its own.
    let unmatched = crate::attention::quotes::unmatched_quotes(lesson, &attention);
    for step in Step::ALL {
        let quoted: Vec<&str> = unmatched
            .iter()
            .filter(|quote| quote.step == step)
            .map(|quote| quote.quoted.as_str())
            .collect();
        if !quoted.is_empty() {
            let (them, are) = if quoted.len() == 1 {
                ("it", "is no value")
            } else {
                ("they", "are no values")
            };
            text.push_str(&format!(
                "  note  narration for {} quotes {}; {them} {are} of this lesson, as rounded \
                 there (written for other numbers?)\n",
                step.key(),
                quoted.join(", ")
            ));
        }
    }
    report.text = text;
    report
}

/// The gradient check's lines: an `ok` line saying what was compared, or a `FAIL` line per
/// gradient that disagrees, with the numbers, the tolerance and where it comes from.
pub fn gradient_lines(attention: &Attention, gradients: &GradientCheck) -> String {
    let together = &gradients.together;
    if gradients.agrees() {
        return format!(
            "  ok    gradients: {} {} with central finite differences of L along a random \
             direction U through {}: Σ dM ⊙ U = {}, off by {} (tolerance {}; {} forward \
             passes)\n",
            distinct(&together.gradients).join(", "),
            if distinct(&together.gradients).len() == 1 {
                "agrees"
            } else {
                "agree"
            },
            cells_of(attention, together),
            short(together.numeric),
            short(together.difference()),
            short(together.tolerance),
            gradients.passes
        );
    }
    let wrong: Vec<&DirectionCheck> = gradients.each.iter().filter(|d| !d.agrees()).collect();
    let mut text = String::new();
    if wrong.is_empty() {
        // Wrong together, though none is alone: said as measured.
        text.push_str(&failure_line(attention, together));
        text.push_str("        alone, along a direction of its own, each agrees\n");
        return text;
    }
    for direction in &wrong {
        text.push_str(&failure_line(attention, direction));
    }
    let agreeing: Vec<&str> = gradients
        .each
        .iter()
        .filter(|d| d.agrees())
        .flat_map(|d| d.gradients.iter().map(String::as_str))
        .collect();
    if !agreeing.is_empty() {
        text.push_str(&format!(
            "        {} {} with finite differences along {} own random {}\n",
            agreeing.join(", "),
            if agreeing.len() == 1 {
                "agrees"
            } else {
                "agree"
            },
            if agreeing.len() == 1 { "its" } else { "their" },
            if agreeing.len() == 1 {
                "direction"
            } else {
                "directions"
            },
        ));
    }
    text
}

/// "all 16 cells of X, W_q, W_k, W_v", "the one cell of W_q".
fn cells_of(attention: &Attention, direction: &DirectionCheck) -> String {
    let inputs: Vec<&str> = direction
        .inputs
        .iter()
        .map(|input| attention.symbol(*input))
        .collect();
    if direction.cells == 1 {
        format!("the one cell of {}", inputs.join(", "))
    } else {
        format!("all {} cells of {}", direction.cells, inputs.join(", "))
    }
}

/// Each gradient's symbol once: with positions added to the embeddings, X = E + P, E's and P's
/// gradients are both dX.
fn distinct(gradients: &[String]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for gradient in gradients {
        if !seen.contains(&gradient.as_str()) {
            seen.push(gradient);
        }
    }
    seen
}

/// A `FAIL` line: what was compared, both numbers, the difference, the tolerance and its parts.
fn failure_line(attention: &Attention, direction: &DirectionCheck) -> String {
    let gradients = distinct(&direction.gradients).join(", ");
    let (verb, sum) = if distinct(&direction.gradients).len() == 1 {
        ("disagrees", format!("Σ {gradients} ⊙ U"))
    } else {
        ("disagree", "Σ dM ⊙ U over them".to_string())
    };
    format!(
        "  FAIL  gradients: {gradients} {verb} with central finite differences of L. Along a \
         random direction U through {cells}, the backward pass gives {sum} = {backward} and \
         finite differences of L (steps {coarse} and {fine} along U, extrapolated) give \
         {numeric}: they differ by {difference}, over the tolerance {tolerance} ({safety} × the \
         {noise} the two steps' slopes differ by, plus {rounding} for float rounding)\n",
        cells = cells_of(attention, direction),
        backward = significant(direction.backward),
        numeric = significant(direction.numeric),
        coarse = short(direction.step * SHRINK),
        fine = short(direction.step),
        difference = short(direction.difference()),
        tolerance = short(direction.tolerance),
        safety = SAFETY,
        noise = short(direction.noise),
        rounding = short(direction.rounding),
    )
}

struct Comparison {
    within: bool,
    worst: Option<(Cell, f64)>,
    /// One line per cell where the printed figure is not the exact value rounded as printed.
    notes: Vec<String>,
}

/// A figure as the report names it: its key, with its head when the lesson has several
/// ("head 2's weights").
fn figure_name(attention: &Attention, figure: &ExpectedFigure) -> String {
    match figure.head {
        Some(head) if attention.heads().query > 1 => {
            format!("head {}'s {}", head + 1, figure.matrix.key())
        }
        _ => figure.matrix.key().to_string(),
    }
}

/// The matrix a figure is compared with, and the cell that names its (row, col): a head's own
/// matrix for a figure under `[expected.heads.N]`; the lesson's input whole, as the file has
/// it, for a figure of an input (all heads' columns of `w_q`); else the lesson's matrix
/// (`output` the final output).
fn figure_matrix<'a>(
    lesson: &'a Lesson,
    attention: &'a Attention,
    figure: &ExpectedFigure,
) -> Option<(&'a DMatrix<f64>, Cell)> {
    let name = figure.matrix;
    match figure.head {
        Some(head) => {
            // `x` is never a head's; `output` under a head is that head's output.
            let matrix = attention.matrix_in(name, head)?;
            Some((matrix, Cell::new(name, 0, 0).in_head(head)))
        }
        None => match lesson.input(name) {
            Some(input) => Some((&*input.values, Cell::new(name, 0, 0))),
            None => {
                let source = attention.figure_source(name);
                Some((attention.matrix(source)?, Cell::new(source, 0, 0)))
            }
        },
    }
}

/// A cell as the report names it: `weights⁽²⁾[cat, sat]` in head 2's figure, and an input's
/// cell without a head, since its figure is the whole matrix (`W_q[1, 5]`).
fn cell_name(attention: &Attention, figure: &ExpectedFigure, cell: Cell) -> String {
    if figure.head.is_none() && cell.matrix.per() != Per::Lesson {
        format!(
            "{}[{}, {}]",
            attention.symbol(cell.matrix),
            attention.row_label(cell.matrix, cell.row),
            attention.column_label(cell.matrix, cell.col)
        )
    } else {
        attention.cell_name(cell)
    }
}

fn compare(
    lesson: &Lesson,
    attention: &Attention,
    figure: &ExpectedFigure,
    tolerance: f64,
) -> Comparison {
    let mut comparison = Comparison {
        within: true,
        worst: None,
        notes: Vec::new(),
    };
    let Some((matrix, at)) = figure_matrix(lesson, attention, figure) else {
        return comparison;
    };
    for row in &figure.rows {
        for (col, printed) in row.values.iter().enumerate() {
            let cell = Cell {
                row: row.row,
                col,
                ..at
            };
            let Some(&exact) = matrix.get((row.row, col)) else {
                continue;
            };
            let deviation = (exact - printed.value).abs();
            if comparison.worst.is_none_or(|(_, worst)| deviation > worst) {
                comparison.worst = Some((cell, deviation));
            }
            let outside = !within(exact, printed.value, tolerance);
            if outside {
                comparison.within = false;
            }
            // A figure is right when it is a correct rounding of the exact value at the digits
            // it was printed with: at most half a unit of its last digit away (either rounding
            // of an exact tie is right).
            let last = last_digit(printed);
            let agrees = within(exact, printed.value, 0.5 * 10f64.powi(last));
            if outside || !agrees {
                let decimals = (-last).max(0) as usize;
                let rounded = format_fixed(exact, decimals);
                let digits = if printed.text.contains(['e', 'E']) {
                    let significant = significant_digits(&printed.text);
                    format!(
                        "{} to {significant} significant {}",
                        format_scientific(exact, significant),
                        if significant == 1 { "digit" } else { "digits" }
                    )
                } else {
                    format!(
                        "{rounded} to {decimals} {}",
                        if decimals == 1 { "decimal" } else { "decimals" }
                    )
                };
                comparison.notes.push(format!(
                    "{}: {} printed {}, exact {} ({digits}), off by {}",
                    if outside {
                        "outside tolerance"
                    } else {
                        "drift"
                    },
                    cell_name(attention, figure, cell),
                    printed.text,
                    format_number(exact, decimals + 3),
                    short(deviation)
                ));
            }
        }
    }
    comparison
}

/// Whether `printed` is within `tolerance` of `exact`. The difference of two binary numbers is
/// not the difference of the decimals they stand for: |0.62 - 0.625| comes out as
/// 0.0050000000000000044, so a figure exactly half a unit away would fail by 4e-18. A few ulp of
/// the numbers compared are allowed for that; any real slip is far larger.
fn within(exact: f64, printed: f64, tolerance: f64) -> bool {
    let headroom = 8.0 * f64::EPSILON * exact.abs().max(printed.abs()).max(tolerance);
    (exact - printed).abs() <= tolerance + headroom
}

/// The power of ten of a printed figure's last digit: -2 for 0.62, -6 for 6.3379e-02, 0 for 7,
/// 2 for 1.2e3.
fn last_digit(printed: &PrintedNumber) -> i32 {
    let text = printed.text.trim_start_matches(['+', '-']);
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, fraction)| {
        fraction.chars().filter(char::is_ascii_digit).count()
    }) as i32;
    exponent - decimals
}

/// Significant digits of a figure written in scientific notation: 5 for 6.3379e-02.
fn significant_digits(text: &str) -> usize {
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    mantissa
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|digit| *digit == '0')
        .count()
        .max(1)
}

/// `value` in scientific notation with `significant` digits: 0.063379 → "6.3379e-2".
fn format_scientific(value: f64, significant: usize) -> String {
    format!("{value:.*e}", significant.saturating_sub(1))
}

/// A slope to 10 significant digits, enough to show where two that nearly agree part:
/// 1.234567891, 0.0001234567891, and in scientific notation outside 1e-4..1e6.
fn significant(value: f64) -> String {
    let magnitude = if value == 0.0 {
        0
    } else {
        value.abs().log10().floor() as i32
    };
    if value.is_finite() && (-4..6).contains(&magnitude) {
        format!("{value:.*}", (9 - magnitude) as usize)
    } else {
        format!("{value:.9e}")
    }
}

/// A small positive number in few characters: 0.000114, 5.05e-5 → "0.0000505", and below
/// 1e-9 in scientific notation (2.8e-17), where fixed decimals would show 0.
fn short(value: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    if value.abs() < 1e-9 {
        return format!("{value:.1e}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).clamp(0, 12) as usize;
    format_number(value, decimals)
}
