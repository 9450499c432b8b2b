//! The two header lines: lesson title and step number, then the formula with this step lit.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::Tutor;
use crate::attention::{MatrixName, Step};
use crate::lesson::text::columns;

use super::formula::formula_in;
use super::text::fit;
use super::theme::Theme;

pub(crate) fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let step = tutor.step();
    let position = format!(
        "Step {}/{} · {}{} ",
        tutor.step_index + 1,
        tutor.steps.len(),
        step.title(),
        token_of(tutor) + &head_of(tutor)
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
    if tutor.step_is_per_tile() {
        // The whole recurrence, the output last: a narrow terminal keeps the state's parts.
        let formula = if tutor.choice() == MatrixName::OnlineAcc {
            vec![
                Span::raw(" "),
                lit(true, "acc = rescale·acc_old + Σ e^(s − m)·v"),
                Span::styled("    after the last tile: output = acc / l", theme.muted()),
            ]
        } else {
            vec![
                Span::raw(" "),
                lit(
                    true,
                    "m = max(m_old, s);  rescale = e^(m_old − m);  l = rescale·l_old + \
                     Σ e^(s − m)",
                ),
            ]
        };
        within(formula, area.width).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
        return;
    }
    if step.is_backward() {
        // What is differentiated, its value now (which `g` lowers for a small enough η).
        let loss = tutor.attention.loss().map_or_else(String::new, |loss| {
            crate::attention::number::format_number(loss, tutor.lesson.decimals)
        });
        let formula = vec![
            Span::raw(" "),
            lit(true, &format!("L = Σ output ⊙ grad_output = {loss}")),
            Span::styled("   g: a step of gradient descent", theme.muted()),
        ];
        within(formula, area.width).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
        return;
    }
    if tutor.step_is_per_token() {
        let formula = generation_formula(tutor, theme, area.width);
        within(formula, area.width).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
        return;
    }
    if tutor.heads().query > 1 {
        let formula = with_output_weights(tutor, theme, area.width);
        within(formula, area.width).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
        return;
    }
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
    // One head projected by W_o: the output is the head's, times W_o.
    if plan.has(MatrixName::WO) {
        formula.push(lit(
            matches!(step, Step::OutputProjection | Step::Circuits),
            "·W_o",
        ));
    }
    // Said before the definitions, so that a narrow terminal, which cuts the line's end, keeps it.
    if !plan.has(MatrixName::Scaled) {
        formula.push(Span::styled(" (no scaling)", theme.muted()));
    }
    formula.push(Span::styled("    where ", theme.muted()));
    if plan.has(MatrixName::X) {
        formula.push(lit(step == Step::Positions, "X = E + P; "));
    }
    if plan.has(MatrixName::SourceX) {
        formula.push(lit(step == Step::Positions, "S = E_S + P_S; "));
    }
    let inputs = matches!(step, Step::Embedding | Step::Positions | Step::Projection);
    if plan.shape.cross && plan.has(MatrixName::WQ) {
        // Queries from the target, keys and values from the source.
        formula.push(lit(step == Step::Projection, "Q = "));
        formula.push(lit(inputs, "X"));
        formula.push(lit(step == Step::Projection, "·W_q; K, V = "));
        formula.push(lit(inputs, "S"));
        formula.push(lit(step == Step::Projection, "·W_k, S·W_v"));
    } else if plan.has(MatrixName::WQ) {
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
    within(formula, area.width).render(Rect::new(area.x, area.y + 1, area.width, 1), buf);
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
    let step = tutor.step();
    let plan = &tutor.attention.plan;
    let lit = |on: bool, text: &str| {
        if on {
            Span::styled(text.to_string(), theme.lit())
        } else {
            Span::raw(text.to_string())
        }
    };
    let weights = step == Step::DecodeWeights;
    let rotated = plan.has(MatrixName::QNewRope);
    let mut formula = vec![
        Span::raw(" "),
        lit(step == Step::DecodeOutput, "output_t = "),
        lit(weights, "softmax("),
        lit(
            weights || step == Step::NewToken,
            if rotated { "rot(q_t)" } else { "q_t" },
        ),
        lit(weights || step == Step::KvCache, "·K_cacheᵀ"),
    ];
    if plan.has(MatrixName::DecodeScaled) {
        formula.push(lit(weights, " / √d_k"));
    }
    formula.push(lit(weights, ")"));
    formula.push(lit(
        matches!(step, Step::DecodeOutput | Step::KvCache),
        "·V_cache",
    ));
    if plan.has(MatrixName::DecodeProjected) {
        formula.push(lit(step == Step::DecodeOutput, " …·W_o"));
    }
    // The definition this step is about, after the formula when the line has room for it
    // whole: a definition cut in the middle says less than none.
    let rotated_k = if rotated { "rot(k_t)" } else { "k_t" };
    let definition = match step {
        Step::NewToken if plan.has(MatrixName::XNew) => {
            "q_t, k_t, v_t = x_t·W_q, x_t·W_k, x_t·W_v".to_string()
        }
        Step::NewToken => "q_t, k_t, v_t = row t of Q, K, V".to_string(),
        Step::KvCache => format!("K_cache gains {rotated_k}, V_cache gains v_t"),
        _ => "the caches hold tokens 1 … t".to_string(),
    };
    let used: usize = formula.iter().map(|span| columns(&span.content)).sum();
    if used + columns("    where ") + columns(&definition) <= usize::from(width) {
        formula.push(Span::styled("    where ", theme.muted()));
        formula.push(lit(
            step != Step::DecodeWeights && step != Step::DecodeOutput,
            &definition,
        ));
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
fn with_output_weights(tutor: &Tutor, theme: &Theme, width: u16) -> Vec<Span<'static>> {
    let attention = &tutor.attention;
    let step = tutor.step();
    let head = tutor.head;
    let result = tutor.panels().last().copied().unwrap_or(MatrixName::Output);
    let mut line = vec![Span::raw(" ")];
    if tutor.step_is_per_head() && step != Step::AllHeads {
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
    let heads = tutor.heads().query;
    let last = crate::attention::head_superscript(heads.saturating_sub(1));
    let blocks = if heads == 2 {
        format!("[head⁽¹⁾ | head{last}]")
    } else {
        format!("[head⁽¹⁾ | … | head{last}]")
    };
    let mut clauses = vec![
        (
            step == Step::OutputProjection,
            "output = concat·W_o".to_string(),
        ),
        (step == Step::Concat, format!("concat = {blocks}")),
        (
            step == Step::AllHeads,
            // Keys and values are named by their K/V group, g for head h's (none with one).
            match tutor.heads() {
                heads if heads.kv == 1 => "head⁽ʰ⁾ = softmax(Q⁽ʰ⁾Kᵀ / √d_k)V".to_string(),
                heads if heads.kv < heads.query => {
                    "head⁽ʰ⁾ = softmax(Q⁽ʰ⁾K⁽ᵍ⁾ᵀ / √d_k)V⁽ᵍ⁾".to_string()
                }
                _ => "head⁽ʰ⁾ = softmax(Q⁽ʰ⁾K⁽ʰ⁾ᵀ / √d_k)V⁽ʰ⁾".to_string(),
            },
        ),
    ];
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
