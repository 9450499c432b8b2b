//! The two header lines: lesson title and step number, then the formula with this step lit.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::Tutor;
use crate::attention::MatrixName;
use crate::lesson::text::columns;
use crate::pipeline::header::{self, Look, Shown};
use crate::pipeline::{Header, SeveralHeads};

use super::formula::formula_in;
use super::text::fit;
use super::theme::Theme;

pub(crate) fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let step = tutor.step();
    let unsaved = if tutor.has_unsaved_edits() {
        " · edited"
    } else {
        ""
    };
    // Where the learner is, written shorter ("12/12", "tile 1/2", "group 1/2") when the whole
    // would leave the title fewer than its least columns.
    let whole = format!(
        "Step {}/{} · {}{} ",
        tutor.step_index + 1,
        tutor.steps.len(),
        step.title(),
        token_of(tutor) + &head_of(tutor)
    );
    let room_beside = |position: &str| {
        usize::from(area.width).saturating_sub(columns(position) + columns(unsaved) + 2)
    };
    let position = if room_beside(&whole) >= LEAST_TITLE {
        whole
    } else {
        format!(
            "{}/{} · {}{} ",
            tutor.step_index + 1,
            tutor.steps.len(),
            step.title(),
            (token_of(tutor) + &head_of(tutor))
                .replace(" of ", "/")
                .replace("K/V group", "group")
        )
    };
    let room = room_beside(&position);
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

    let plan = &tutor.attention.plan;
    let formula = match step.entry().header {
        Header::Online => online_formula(tutor, theme),
        Header::Backward => {
            // What is differentiated, its value now (which `g` lowers for a small enough η).
            let loss = tutor.attention.loss().map_or_else(String::new, |loss| {
                crate::attention::number::format_fixed(loss, tutor.lesson.decimals)
            });
            // And η, the size of `g`'s step (`G` sets it), in the longest words that fit.
            let differentiated = format!("L = Σ output ⊙ grad_output = {loss}");
            let eta = crate::app::as_typed(tutor.learning_rate);
            let room = usize::from(area.width).saturating_sub(1 + columns(&differentiated));
            let step = [
                format!("   g: a step of gradient descent, η = {eta}"),
                format!("   g: a gradient step, η = {eta}"),
                format!("   g: η = {eta}"),
            ]
            .into_iter()
            .find(|words| columns(words) <= room)
            .unwrap_or_default();
            vec![
                Span::raw(" "),
                Span::styled(differentiated, theme.lit()),
                Span::styled(step, theme.muted()),
            ]
        }
        Header::Generation(_) => generation_formula(tutor, theme, area.width),
        Header::Attention { several_heads, .. } if tutor.heads().query > 1 => {
            with_output_weights(tutor, several_heads, theme, area.width)
        }
        Header::Attention { .. } => std::iter::once(Span::raw(" "))
            .chain(
                header::one_head(plan, step)
                    .into_iter()
                    .map(|piece| styled(piece, theme)),
            )
            .collect(),
    };
    within(formula, area.width).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
}

/// The fewest columns the lesson's title keeps in the header (a space, a word and "…") before
/// where the learner is is written shorter.
const LEAST_TITLE: usize = 12;

/// A piece of a formula in the look the step on screen gives it.
fn styled((text, look): Shown, theme: &Theme) -> Span<'static> {
    match look {
        Look::Lit => Span::styled(text, theme.lit()),
        Look::Plain => Span::raw(text),
        Look::Muted => Span::styled(text, theme.muted()),
        Look::Skipped => Span::styled(text, theme.muted().add_modifier(Modifier::CROSSED_OUT)),
    }
}

/// The online softmax's whole recurrence, the output last: a narrow terminal keeps the state's
/// parts.
fn online_formula(tutor: &Tutor, theme: &Theme) -> Vec<Span<'static>> {
    if tutor.choice() == MatrixName::OnlineAcc {
        vec![
            Span::raw(" "),
            Span::styled("acc = rescale·acc_old + Σ e^(s − m)·v", theme.lit()),
            Span::styled("    after the last tile: output = acc / l", theme.muted()),
        ]
    } else {
        vec![
            Span::raw(" "),
            Span::styled(
                "m = max(m_old, s);  rescale = e^(m_old − m);  l = rescale·l_old + Σ e^(s − m)",
                theme.lit(),
            ),
        ]
    }
}

/// ` · token 3 of 6` on a generation step: the position t it is at.
pub(crate) fn token_of(tutor: &Tutor) -> String {
    if tutor.step_is_per_tile() {
        return format!(
            " · tile {} of {}",
            tutor.tile + 1,
            tutor.attention.tile_count()
        );
    }
    if !tutor.step_is_per_token() {
        return String::new();
    }
    format!(
        " · token {} of {}",
        tutor.token + 1,
        tutor.attention.seq_len()
    )
}

/// One step of generation's formula, the part of this screen lit:
/// `output_t = softmax(q_t·K_cacheᵀ / √d_k)·V_cache`, and the definition the step is about when
/// it fits.
fn generation_formula(tutor: &Tutor, theme: &Theme, width: u16) -> Vec<Span<'static>> {
    let (formula, definition) = header::generation(&tutor.attention.plan, tutor.step());
    let mut formula: Vec<Span<'static>> = std::iter::once(Span::raw(" "))
        .chain(formula.into_iter().map(|piece| styled(piece, theme)))
        .collect();
    // The definition this step is about, after the formula when the line has room for it
    // whole: a definition cut in the middle says less than none.
    let used: usize = formula.iter().map(|span| columns(&span.content)).sum();
    let defined: usize = definition.iter().map(|(text, _)| columns(text)).sum();
    if !definition.is_empty() && used + columns("    where ") + defined <= usize::from(width) {
        formula.push(Span::styled("    where ", theme.muted()));
        formula.extend(definition.into_iter().map(|piece| styled(piece, theme)));
    }
    formula
}

/// ` · head 2/4` on a step that shows one head of several, with its K/V group under
/// grouped-query attention (` · head 3/4 · K/V group 2/2`); empty otherwise.
pub(crate) fn head_of(tutor: &Tutor) -> String {
    if !tutor.step_is_per_head() {
        return String::new();
    }
    let heads = tutor.heads();
    let mut text = format!(" · head {}/{}", tutor.head + 1, heads.query);
    if heads.kv < heads.query {
        text.push_str(&format!(
            " · K/V group {}/{}",
            heads.group_of(tutor.head) + 1,
            heads.kv
        ));
    }
    text
}

/// The formula line of a lesson of several heads. A step
/// that shows one head writes its result's formula in that head's symbols, then the formulas
/// of what it is computed from (`scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ  where Q⁽²⁾ = X·W_q⁽²⁾, …`); the
/// others write multi-head attention as a whole, their part lit.
fn with_output_weights(
    tutor: &Tutor,
    part: SeveralHeads,
    theme: &Theme,
    width: u16,
) -> Vec<Span<'static>> {
    let attention = &tutor.attention;
    let head = tutor.head;
    let result = tutor.panels().last().copied().unwrap_or(MatrixName::Output);
    let mut line = vec![Span::raw(" ")];
    if matches!(part, SeveralHeads::OneHead) && tutor.step_is_per_head() {
        let Some(formula) = formula_in(attention, tutor.choice(), head) else {
            line.push(Span::styled(attention.symbol_in(result, head), theme.lit()));
            return line;
        };
        line.push(Span::styled(formula, theme.lit()));
        let operands: Vec<String> = attention
            .plan
            .origin(tutor.choice())
            .map(|origin| origin.operands())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|operand| formula_in(attention, operand, head))
            .collect();
        if !operands.is_empty() {
            line.push(Span::styled("    where ", theme.muted()));
            line.push(Span::raw(operands.join(", ")));
        }
        return line;
    }
    let lit = |on: bool, text: String| {
        if on {
            Span::styled(text, theme.lit())
        } else {
            Span::raw(text)
        }
    };
    let mut clauses = header::several_heads(&attention.plan, tutor.step());
    // Too wide for the terminal: the clauses this step does not compute give way, last first,
    // each replaced by "…", so the one lit is whole rather than cut mid-formula.
    let separator = ",  ";
    let wide = |clauses: &[(bool, String)]| {
        1 + clauses.iter().map(|(_, text)| columns(text)).sum::<usize>()
            + columns(separator) * clauses.len().saturating_sub(1)
    };
    for index in (0..clauses.len()).rev() {
        if wide(&clauses) <= usize::from(width) {
            break;
        }
        if !clauses[index].0 {
            clauses[index].1 = "…".to_string();
        }
    }
    for (index, (on, text)) in clauses.into_iter().enumerate() {
        if index > 0 {
            line.push(Span::styled(separator, theme.muted()));
        }
        line.push(lit(on, text));
    }
    line
}

/// A header line cut to `width` with "…" where it goes on: no formula stops mid-symbol unsaid.
fn within(line: Vec<Span<'static>>, width: u16) -> Line<'static> {
    let width = usize::from(width);
    if width == 0
        || line
            .iter()
            .map(|span| columns(&span.content))
            .sum::<usize>()
            <= width
    {
        return Line::from(line);
    }
    let mut room = width - 1;
    let mut kept = Vec::new();
    for span in line {
        let wide = columns(&span.content);
        if wide > room {
            let style = span.style;
            kept.push(Span::styled(fit_plain(&span.content, room), style));
            kept.push(Span::styled("…", style));
            break;
        }
        room -= wide;
        kept.push(span);
    }
    Line::from(kept)
}

/// The first `width` columns of `text`, without an ellipsis.
fn fit_plain(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let wide = columns(ch.encode_utf8(&mut [0; 4]));
        if used + wide > width {
            break;
        }
        used += wide;
        out.push(ch);
    }
    out
}
