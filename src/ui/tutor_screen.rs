//! A step screen: header, the step's matrices side by side, the working, the narration.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::app::Tutor;
use crate::attention::{MatrixName, Step};

use super::layout::TutorLayout;
use super::matrix::MatrixPanel;
use super::text::wrap_words;
use super::theme::Theme;
use super::{header, working};

pub(crate) fn render(tutor: &Tutor, layout: &TutorLayout, theme: &Theme, buf: &mut Buffer) {
    header::render(tutor, theme, layout.header, buf);
    if tutor.step() == Step::AllHeads && tutor.practice.is_none() {
        super::all_heads::render(tutor, theme, layout.working, buf);
        narration(tutor, theme, layout.narration, buf);
        return;
    }
    let heatmap_step = matches!(
        tutor.step(),
        Step::Softmax | Step::Output | Step::DecodeWeights | Step::DecodeOutput
    );
    for geometry in &layout.panels {
        MatrixPanel {
            tutor,
            geometry,
            theme,
            focused: geometry.matrix == tutor.focus,
            operands: &layout.operands,
            heatmap: heatmap_step
                && matches!(
                    geometry.matrix,
                    MatrixName::Weights | MatrixName::DecodeWeights
                ),
        }
        .render(geometry.area, buf);
    }
    if let (Some(area), Some(note)) = (layout.note, matrices_note(tutor)) {
        let width = usize::from(area.width.saturating_sub(2));
        for (offset, line) in note_lines(&note, width)
            .iter()
            .take(usize::from(area.height))
            .enumerate()
        {
            buf.set_stringn(
                area.x + 1,
                area.y + offset as u16,
                super::text::fit(line, width),
                width,
                theme.muted(),
            );
        }
    }
    working::render(tutor, theme, layout.working, buf);
    narration(tutor, theme, layout.narration, buf);
}

/// What the step computes beyond the matrices on screen: a screen with several views (the
/// Projection screen of a lesson with embeddings shows one of Q, K and V at a time) says where
/// the others are.
pub(crate) fn matrices_note(tutor: &Tutor) -> Option<String> {
    let views = tutor.step().views(&tutor.attention.plan);
    let circuit = match tutor.step() {
        Step::Circuits => circuit_line(tutor),
        // What generation's cache holds and saved, and its check against the whole pass.
        Step::KvCache => Some(crate::ui::generation::cache_line(
            &tutor.attention,
            tutor.token,
        )),
        Step::DecodeOutput => Some(crate::ui::generation::check_words(
            &tutor.attention,
            tutor.token,
        )),
        Step::OnlineSoftmax => Some(crate::ui::online::tile_line(
            &tutor.attention,
            tutor.head,
            tutor.tile,
        )),
        _ => None,
    };
    if views.len() < 2 {
        return circuit;
    }
    let choice = tutor.choice();
    let shown = views.iter().position(|view| view.result == choice)?;
    let others: Vec<String> = views
        .iter()
        .filter(|view| view.result != choice)
        .map(|view| {
            let caption = super::matrix::caption(tutor, view.result);
            let formula = caption
                .rsplit_once(" (")
                .map_or(caption.as_str(), |(formula, _)| formula);
            // A long formula would fill the note: its symbol says it (and the online softmax's,
            // whose note is the tile's, always: the header writes the formulas; and beside the
            // Circuits step's sentence, which leaves no room for a formula in the note's lines).
            if crate::lesson::text::columns(formula) > LONGEST_FORMULA_IN_NOTE
                || view.result.per_tile()
                || tutor.step() == Step::Circuits
            {
                tutor.attention.symbol_in(view.result, tutor.head)
            } else {
                formula.to_string()
            }
        })
        .collect();
    // `[` and `]` visit every matrix on the screen in turn, so the note says how many presses
    // reach the nearest of the others from where the cursor is: the first press may stay on
    // this view, or turn to the other view at one of its operands.
    let presses = |forwards: bool, results: &[MatrixName]| {
        let order = crate::app::screens::order(tutor.step(), &tutor.attention);
        let here = order.iter().position(|m| *m == tutor.focus).unwrap_or(0);
        results
            .iter()
            .filter_map(|result| order.iter().position(|m| m == result))
            .map(|there| {
                let ahead = if forwards {
                    (there + order.len() - here) % order.len()
                } else {
                    (here + order.len() - there) % order.len()
                };
                if ahead == 0 { order.len() } else { ahead }
            })
            .min()
            .unwrap_or(1)
    };
    let before: Vec<MatrixName> = views[..shown].iter().map(|view| view.result).collect();
    let after: Vec<MatrixName> = views[shown + 1..].iter().map(|view| view.result).collect();
    let one = others.len() == 1;
    let keys = match (before.is_empty(), after.is_empty()) {
        (true, _) => match (presses(true, &after), one) {
            (1, true) => "] goes on to it".to_string(),
            (1, false) => "] goes on to them".to_string(),
            (n, true) => format!("] reaches it in {n} presses"),
            (n, false) => format!("] reaches the first of them in {n} presses"),
        },
        (false, true) => match (presses(false, &before), one) {
            (1, true) => "[ goes back to it".to_string(),
            (1, false) => "[ goes back to them".to_string(),
            (n, true) => format!("[ reaches it in {n} presses"),
            (n, false) => format!("[ reaches the last of them in {n} presses"),
        },
        (false, false) => match (presses(false, &before), presses(true, &after)) {
            (1, 1) => "[ and ] go to them".to_string(),
            (back, on) => format!(
                "[ reaches the one before in {back} {}, ] the one after in {on} {}",
                if back == 1 { "press" } else { "presses" },
                if on == 1 { "press" } else { "presses" },
            ),
        },
    };
    let them = if one {
        others[0].clone()
    } else {
        let (last, rest) = others.split_last()?;
        format!("{} and {last}", rest.join(", "))
    };
    // The Embedding step's other view (cross-attention's source, or the target) is the
    // lesson's own numbers, not computed.
    let verb = if tutor.step() == Step::Embedding {
        "Also on this step"
    } else {
        "Also computed on this step"
    };
    let also = format!("{verb}: {them} ({keys}).");
    Some(match circuit {
        Some(circuit) => format!("{circuit} {also}"),
        None => also,
    })
}

/// The longest formula the note names another view by; a longer one is named by its symbol.
const LONGEST_FORMULA_IN_NOTE: usize = 40;

/// The note's lines at a width: at most three, the words kept whole.
pub(crate) fn note_lines(note: &str, width: usize) -> Vec<String> {
    let mut lines = wrap_words(note, width);
    // Cut at three lines, the last says so: a note's end (which key reaches the other views)
    // is never left out silently.
    if lines.len() > 3 {
        lines.truncate(3);
        let last = format!("{} …", lines[2]);
        lines[2] = super::text::fit(&last, width);
    }
    lines
}

/// The biases W_QK leaves out (`b_q`, `b_k` or both), in words; `None` without them.
pub(crate) fn query_key_biases(attention: &crate::attention::Attention) -> Option<&'static str> {
    let biases = attention.plan.shape.biases;
    match (biases.q, biases.k) {
        (true, true) => Some("the biases b_q and b_k"),
        (true, false) => Some("the bias b_q"),
        (false, true) => Some("the bias b_k"),
        (false, false) => None,
    }
}

/// What W_OV leaves out of the output when the lesson has b_v or b_o: since each row's
/// weights sum to 1, every output row also gets b_v·W_o, and b_o; `None` without them.
pub(crate) fn value_biases(attention: &crate::attention::Attention) -> Option<&'static str> {
    let biases = attention.plan.shape.biases;
    match (biases.v, biases.o) {
        (true, true) => Some(
            "b_v·W_o and b_o, which every row of the output gets whatever the head attends to \
             (a row's weights sum to 1)",
        ),
        (true, false) => Some(
            "b_v·W_o, which every row of the output gets whatever the head attends to (a \
             row's weights sum to 1)",
        ),
        (false, true) => Some("b_o, which is added to every row of the output"),
        (false, false) => None,
    }
}

/// What the circuit on screen means with the lesson's numbers. Under W_QK: the score of the
/// pair of tokens under the cursor on the Scaling step, read through the circuit
/// (x_i · W_QK · x_jᵀ / √d_k, the engine's `circuit_score`), beside that step's cell; with
/// rope the two differ, and the line says why. Under W_OV: which rows of W_o are the head's.
fn circuit_line(tutor: &Tutor) -> Option<String> {
    let attention = &tutor.attention;
    let head = tutor.head;
    let number = |value: f64| crate::attention::number::format_number(value, tutor.lesson.decimals);
    if tutor.choice() == MatrixName::WOV {
        let width = tutor.values(MatrixName::WV)?.ncols();
        let first = head * width;
        return Some(format!(
            "W_OV{mark} = W_v{group} · W_o{mark}, and W_o{mark} is rows {}–{} of W_o (h{}.1–h{}.{width}): \
             the rows that multiply head {}'s output in concat · W_o.{left}",
            first + 1,
            first + width,
            head + 1,
            head + 1,
            head + 1,
            mark = attention.head_mark(MatrixName::WOV, head),
            left = value_biases(attention)
                .map_or(String::new(), |left| format!(" It leaves out {left}.")),
            // W_v is its K/V group's, which several heads share under grouped-query attention.
            group = attention.head_mark(MatrixName::WV, head),
        ));
    }
    let scaled = if attention.has(MatrixName::Scaled) {
        MatrixName::Scaled
    } else {
        MatrixName::Scores
    };
    let cursor = tutor.cursor(scaled);
    let (query, key) = (cursor.row, cursor.col);
    let through = attention.circuit_score(head, query, key)?;
    let cell = tutor.cell(scaled, query, key);
    let actual = attention.value(cell)?;
    let input = attention.plan.projected_input()?;
    // The key's row is the source's in cross-attention.
    let source = attention.plan.projected_source()?;
    let divided = if scaled == MatrixName::Scaled {
        " / √d_k"
    } else {
        ""
    };
    let read = format!(
        "{} · {} · {}ᵀ{divided} = {}",
        attention.row_name(input, head, query, 0),
        attention.symbol_in(MatrixName::WQK, head),
        attention.row_name(source, head, key, 0),
        number(through),
    );
    let name = attention.cell_name(cell);
    // Rope turns q_m and k_n by their positions: their dot product changes only by m − n, so
    // the circuit, which leaves the rotation out, agrees where the two positions are equal.
    let same_position = query == key;
    Some(if attention.has(MatrixName::QRope) && same_position {
        format!(
            "{read}, and {name} is {}: the same here because the query and the key stand at \
             the same position, where rope's two turns cancel; elsewhere the circuit, which \
             leaves the rotation out, differs.",
            number(actual)
        )
    } else if attention.has(MatrixName::QRope) {
        format!(
            "{read}, but {name} is {}: the circuit leaves out the rotation (rope), which \
             turns Q and K by their positions, so the numbers differ.",
            number(actual)
        )
    } else if let Some(biases) = query_key_biases(attention) {
        format!(
            "{read}, but {name} is {}: the circuit leaves out {biases}, which the projections \
             add to Q and K, so the numbers differ.",
            number(actual)
        )
    } else {
        format!(
            "{read}, and {name} on the {} step is {}: the same score, without computing Q or K.",
            if scaled == MatrixName::Scaled {
                "Scaling"
            } else {
                "Scores"
            },
            number(actual)
        )
    })
}

/// Lesson files shown to copy at the most: a larger one would scroll for ever.
const MOST_FILE_BYTES_SHOWN: usize = 64 * 1024;

/// The edited lesson as the file `w` would save, for a learner who cannot save here.
fn lesson_file_text(tutor: &Tutor) -> String {
    let lesson = tutor.lesson_to_save();
    let bytes = crate::lesson::lesson_toml_bytes(&lesson);
    if bytes > MOST_FILE_BYTES_SHOWN {
        return format!(
            "This lesson would be a file of {bytes} bytes, too large to show here to copy. \
             attn-tutor on your own machine can open the original and save your edits."
        );
    }
    format!(
        "Your lesson as a file: copy it into a .toml file and open it with attn-tutor \
         (a line wider than this window wraps: widen the window, or join it again when you \
         paste). w hides it.\n\n{}",
        crate::lesson::lesson_to_toml(&lesson)
    )
}

/// The step's narration: the lesson's own words, or ours, after any note this lesson needs.
pub fn narration_text(tutor: &Tutor) -> String {
    if tutor.showing_file {
        return lesson_file_text(tutor);
    }
    if tutor.practice.is_some() {
        // The lesson's words often quote the very numbers being predicted.
        return "The lesson's text is put away while you practise: it gives answers away. \
                x stops practice and brings it back."
            .to_string();
    }
    let step = tutor.step();
    let mut text = String::new();
    if tutor.numbers_changed() && tutor.lesson.narration.get(step).is_some() && tutor.presented {
        // A student's screen: the presenter changed it, and a follower has no R.
        text.push_str(
            "(The lesson has been changed from the numbers and words its text below was \
             written for.)\n",
        );
    } else if tutor.numbers_changed() && tutor.lesson.narration.get(step).is_some() {
        text.push_str(
            "(You have changed the lesson: its text below was written for its original \
             numbers and words; R resets them. A saved copy leaves this text out.)\n",
        );
    }
    // What the lesson's plan makes of the step (Q, K and V given, scaling off), then what its
    // numbers do (rows the mask hides entirely): worded as `show` words them.
    if let Some(note) = step.note(&tutor.attention.plan) {
        text.push_str(note);
        text.push('\n');
    }
    if matches!(step, Step::Masking | Step::Softmax | Step::Output)
        && let Some(hidden) = crate::ui::notes::fully_masked(&tutor.attention)
    {
        text.push_str(&hidden);
        text.push('\n');
    }
    let focus = tutor.lesson.focus.unwrap_or(0);
    if tutor.step_is_per_token()
        && tutor.token != focus
        && tutor.lesson.narration.get(step).is_some()
    {
        // The lesson's words for a step of generation are written at its focus token; ( and )
        // show another, whose numbers the words do not quote.
        text.push_str(&format!(
            "(The lesson's text below is written at {}; this screen shows {}.)\n",
            crate::attention::token_words(&tutor.attention, focus),
            crate::attention::token_words(&tutor.attention, tutor.token),
        ));
    }
    match tutor.lesson.narration.get(step) {
        Some(own) => text.push_str(own),
        None => text.push_str(&step.narration(&tutor.attention.plan)),
    }
    text
}

/// The narration's lines at a width. The lesson shown as a file to copy wraps a long comment
/// as comments, each line starting "# ", so that what is pasted is still a lesson file.
/// The narration while the class's poll is open on the lesson.
const POLL_NARRATION: &str =
    "The narration comes back after the reveal: it may give the answer away.";

pub fn narration_lines(tutor: &Tutor, width: usize) -> Vec<String> {
    // A narration may quote the very number the class is asked for.
    if tutor
        .poll
        .as_ref()
        .is_some_and(|shown| shown.poll.is_open())
    {
        return wrap_words(POLL_NARRATION, width);
    }
    let text = narration_text(tutor);
    if !tutor.showing_file {
        return wrap_words(&text, width);
    }
    text.split('\n')
        .flat_map(|line| match line.strip_prefix('#') {
            Some(comment) if crate::lesson::text::columns(line) > width => {
                wrap_words(comment.trim_start(), width.saturating_sub(2).max(1))
                    .into_iter()
                    .map(|part| format!("# {part}"))
                    .collect()
            }
            _ => wrap_words(line, width),
        })
        .collect()
}

fn narration(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.height < 1 {
        return;
    }
    let width = area.width.saturating_sub(2);
    let lines = narration_lines(tutor, usize::from(width));
    if area.height == 1 {
        // Its title alone, where a long working took the rest: it says there is more to read.
        let title = format!(
            "About this step ({} lines; a taller terminal shows them)",
            lines.len()
        );
        working::rule_line(&title, theme, area, buf);
        return;
    }
    let visible = usize::from(area.height - 1);
    let most = lines.len().saturating_sub(visible);
    let scroll = usize::from(tutor.narration_scroll).min(most);
    let title = if most > 0 {
        format!(
            "About this step (lines {}–{} of {}, Shift-↑↓ scrolls)",
            scroll + 1,
            (scroll + visible).min(lines.len()),
            lines.len()
        )
    } else {
        "About this step".to_string()
    };
    working::rule_line(&title, theme, area, buf);
    for (offset, line) in lines.iter().skip(scroll).take(visible).enumerate() {
        buf.set_stringn(
            area.x + 1,
            area.y + 1 + offset as u16,
            line,
            usize::from(width),
            ratatui::style::Style::new(),
        );
    }
}
