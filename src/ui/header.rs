//! The two header lines: lesson title and step number, then the formula with this step lit.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::Tutor;
use crate::attention::{MatrixName, Step};
use crate::lesson::text::columns;

use super::text::fit;
use super::theme::Theme;

pub fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let step = tutor.step();
    let position = format!(
        "Step {}/{} · {} ",
        tutor.step_index + 1,
        tutor.steps.len(),
        step.title()
    );
    let unsaved = if tutor.has_unsaved_edits() {
        " · edited"
    } else {
        ""
    };
    let room = usize::from(area.width).saturating_sub(columns(&position) + columns(unsaved) + 2);
    let title = fit(&format!(" {} ({})", tutor.lesson.title, tutor.name), room);
    let pad = usize::from(area.width)
        .saturating_sub(columns(&title) + columns(unsaved) + columns(&position));
    Line::from(vec![
        Span::styled(title, theme.title()),
        Span::styled(unsaved, theme.changed()),
        Span::raw(" ".repeat(pad)),
        Span::styled(position, theme.title()),
    ])
    .render(Rect::new(area.x, area.y, area.width, 1), buf);

    let lit = |on: bool, text: &str| {
        if on {
            Span::styled(text.to_string(), theme.lit())
        } else {
            Span::raw(text.to_string())
        }
    };
    let plan = &tutor.attention.plan;
    let rotated = plan.has(MatrixName::QRope);
    let mut formula = vec![
        Span::raw(" "),
        lit(step == Step::Softmax, "softmax("),
        if rotated {
            lit(
                matches!(step, Step::Scores | Step::Rotation),
                "rot(Q)·rot(K)ᵀ",
            )
        } else {
            lit(step == Step::Scores, "QKᵀ")
        },
    ];
    if plan.has(MatrixName::Scaled) {
        formula.push(lit(step == Step::Scaling, " / √d_k"));
    } else {
        formula.push(Span::styled(
            " / √d_k",
            theme.muted().add_modifier(Modifier::CROSSED_OUT),
        ));
    }
    if plan.has(MatrixName::Masked) {
        formula.push(lit(step == Step::Masking, " + mask"));
    }
    formula.push(lit(step == Step::Softmax, ")"));
    formula.push(lit(step == Step::Output, "V"));
    // Said before the definitions, so that a narrow terminal, which cuts the line's end, keeps it.
    if !plan.has(MatrixName::Scaled) {
        formula.push(Span::styled(" (no scaling)", theme.muted()));
    }
    formula.push(Span::styled("    where ", theme.muted()));
    if plan.has(MatrixName::X) {
        formula.push(lit(step == Step::Positions, "X = E + P; "));
    }
    if plan.has(MatrixName::WQ) {
        formula.push(lit(step == Step::Projection, "Q, K, V = "));
        formula.push(lit(
            matches!(step, Step::Embedding | Step::Positions | Step::Projection),
            "X",
        ));
        formula.push(lit(step == Step::Projection, "·W_q, X·W_k, X·W_v"));
    } else {
        formula.push(lit(
            matches!(step, Step::Embedding | Step::Projection),
            "Q, K, V are given",
        ));
    }
    Line::from(formula).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
}
