//! `attn-tutor show`: loads a lesson, computes it, and hands it to the asked format's writer
//! (text, a Markdown handout, JSON, or the tutor's screens as SVG or HTML).

mod html;
mod json;
mod markdown;
mod pictures;
mod svg;
mod text;

use std::io::{self, BufWriter, Write};

use super::{ShowFormat, status};
use crate::app::screens;
use crate::attention::number::format_number;
use crate::attention::{Attention, Axis, Cell, MatrixName, Step};
use crate::lesson::text::printable;
use crate::lesson::{Lesson, LoadedLesson, Mask, load};
use crate::pipeline::Per;

/// Derivations written out per step when no `--cell` narrows them down.
const MAX_CELLS_PER_STEP: usize = 8;

/// What `show` is asked for beyond the lesson: one step, one cell, one token's generation step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Asked<'a> {
    pub step: Option<Step>,
    pub cell: Option<&'a str>,
    pub token: Option<&'a str>,
    /// `--grad-seed`: a drawn `grad_output` for a lesson without one.
    pub grad_seed: Option<u64>,
    /// `--size WxH` of a picture (`svg`, `html`).
    pub size: &'a str,
    /// A picture without colors (`--no-color`, NO_COLOR): bold, underline, reverse video.
    pub monochrome: bool,
    /// `--compact`: JSON without spaces or line breaks.
    pub compact: bool,
}

pub(crate) fn run(
    spec: &str,
    asked: Asked<'_>,
    format: ShowFormat,
    color: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let mut loaded = match load(spec) {
        Ok(loaded) => loaded,
        Err(error) => {
            let _ = write!(err, "{}", error.render(color));
            return status::INVALID;
        }
    };
    if let Some(seed) = asked.grad_seed {
        if loaded.lesson.grad_output.is_some() {
            let _ = writeln!(
                err,
                "note: {} gives its own grad_output; --grad-seed {seed} is not used",
                crate::lesson::text::printable(&loaded.name)
            );
        }
        loaded.lesson.seed_grad_output(seed);
    }
    run_loaded(&loaded, asked, format, out, err)
}

/// `show` from a lesson already loaded: everything `run` does after reading the lesson, with
/// nothing left out (the lesson computed, each working made, the format written). The
/// benchmarks time this beside numpy + orjson, whose clock also starts with the inputs read.
pub(crate) fn run_loaded(
    loaded: &LoadedLesson,
    asked: Asked<'_>,
    format: ShowFormat,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (only, cell) = (asked.step, asked.cell);
    let write = match writer(format) {
        Writer::Numbers(write) => write,
        Writer::Screens(draw) => {
            return match draw(loaded, &asked) {
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
            };
        }
    };
    let attention = Attention::compute(&loaded.lesson);
    let token = match resolve_token(&attention, loaded.lesson.focus, asked.token) {
        Ok(token) => token,
        Err(message) => {
            let _ = writeln!(err, "error: {}", printable(&message));
            return status::INVALID;
        }
    };
    // Numbered as the tutor numbers them: the steps this lesson has, so "Step 5/6" and the key
    // 5 mean the same step in the tutor, here and in the handout.
    let lesson_steps = crate::app::steps(&loaded.lesson);
    let steps: Vec<Step> = match only {
        Some(step) => vec![step],
        None => lesson_steps.clone(),
    };
    // What each step computes, found in one walk of the steps rather than once a section.
    let computed = crate::app::screens::computed_in_each(&attention.plan, &lesson_steps);
    // A step of one head has a section per head in a lesson of several.
    let heads = attention.heads().query;
    // JSON holds a section's explained cells only: its narration, note and tables are not made
    // for it (the online softmax's note walks every tile again).
    let words = !matches!(format, ShowFormat::Json);
    let sections: Result<Vec<Section>, String> = steps
        .iter()
        .flat_map(|step| {
            // All heads is about every head at once: one section, whose note points to them.
            let per_head = heads > 1
                && *step != Step::AllHeads
                && lesson_steps.contains(step)
                && crate::app::screens::is_per_head(*step, &attention, MatrixName::Output);
            let shown_heads: Vec<Option<usize>> = if per_head {
                (0..heads).map(Some).collect()
            } else {
                vec![None]
            };
            shown_heads.into_iter().map(move |head| (*step, head))
        })
        .map(|(step, head)| {
            let index = lesson_steps.iter().position(|known| *known == step);
            let mut section = Section::build(
                loaded,
                &attention,
                (step, head, token),
                index.map(|index| computed[index].as_slice()),
                cell,
                only.is_none(),
                words,
            )?;
            section.number = index.map(|index| (index + 1, lesson_steps.len()));
            Ok(section)
        })
        .collect();
    let sections = match sections {
        Ok(sections) => sections,
        Err(message) => {
            let _ = writeln!(err, "error: {}", printable(&message));
            return status::INVALID;
        }
    };
    // A cell that names no cell of any step explained nothing: say why rather than print the
    // lesson as if it had been asked for whole.
    if let Some(spec) = cell
        && sections
            .iter()
            .all(|section| section.derivations.is_empty())
    {
        let why = resolve_cell(&attention, MatrixName::Scores, spec, 0)
            .err()
            .map_or(String::new(), |message| format!(": {message}"));
        let _ = writeln!(
            err,
            "error: --cell {} is not a cell of any matrix shown{}",
            printable(spec),
            printable(&why)
        );
        return status::INVALID;
    }
    // Written as it is made: the largest lesson is 125 MB of JSON, never held in memory. A
    // reader that goes away (`| head`) ends the writing; that is not an error of the lesson.
    let mut out = BufWriter::new(out);
    let shown = Shown {
        loaded,
        attention: &attention,
        sections: &sections,
        asked: &asked,
    };
    let _ = write(&mut out, &shown).and_then(|()| out.flush());
    status::OK
}

/// How a format is written: adding a format is an arm here and a file of its own.
enum Writer {
    /// From the lesson's numbers: the sections `run` makes of the steps asked for, each with
    /// its explained cells, written as they are made.
    Numbers(fn(&mut dyn Write, &Shown<'_>) -> io::Result<()>),
    /// From the tutor's screens, drawn from the lesson itself; an error names the step, cell or
    /// size that cannot be drawn.
    Screens(fn(&LoadedLesson, &Asked<'_>) -> Result<String, String>),
}

fn writer(format: ShowFormat) -> Writer {
    match format {
        ShowFormat::Text => Writer::Numbers(text::write),
        ShowFormat::Markdown => Writer::Numbers(markdown::write),
        ShowFormat::Json => Writer::Numbers(json::write),
        ShowFormat::Svg => Writer::Screens(svg::draw),
        ShowFormat::Html => Writer::Screens(html::draw),
    }
}

/// What a writer of the lesson's numbers is given.
#[derive(Clone, Copy)]
struct Shown<'a> {
    loaded: &'a LoadedLesson,
    attention: &'a Attention,
    /// The steps asked for, in order, a section per head where a step is one head's.
    sections: &'a [Section],
    asked: &'a Asked<'a>,
}

/// What one step shows.
struct Section {
    step: Step,
    /// Its number among the steps this lesson has, and how many it has; `None` for a step
    /// asked for with `--step` that this lesson does not have.
    number: Option<(usize, usize)>,
    narration: String,
    /// Why a step has nothing to show, or what is special about it.
    note: Option<String>,
    matrices: Vec<MatrixName>,
    /// Each explained cell with its value, and its working: made once, for the text and the
    /// JSON alike. `None` for a line that explains no cell ("… more cells").
    derivations: Vec<(Option<(Cell, f64)>, String)>,
    /// The head this section shows, and how many the lesson has: a step of one head has a
    /// section per head in a lesson of several.
    head: Option<(usize, usize)>,
    /// The position t a generation step is shown at (0 for the other steps).
    token: usize,
}

/// The token `--token` names, 1-based or by its label (as shown, `the₅`, or as written, the
/// first of that name); without it the lesson's focus, where the tutor opens too.
fn resolve_token(
    attention: &Attention,
    focus: Option<usize>,
    asked: Option<&str>,
) -> Result<usize, String> {
    let count = attention.seq_len();
    let Some(text) = asked else {
        return Ok(focus.unwrap_or(0).min(count.saturating_sub(1)));
    };
    if !attention.plan.shape.decode {
        return Err(format!(
            "--token {text}: this lesson has no generation steps (they come with `decode = true`)"
        ));
    }
    let text = text.trim();
    let shown = (0..count).position(|index| attention.label(Axis::Queries, index) == text);
    shown
        .or_else(|| attention.tokens.iter().position(|token| token == text))
        .or_else(|| {
            text.parse::<usize>()
                .ok()
                .filter(|n| (1..=count).contains(n))
                .map(|n| n - 1)
        })
        .ok_or_else(|| {
            format!("--token {text}: expected a position from 1 to {count} or a token label")
        })
}

/// Why a step has nothing to show, or what is special about it in this lesson; a generation
/// step is said at position `token`.
fn note(
    step: Step,
    attention: &Attention,
    lesson: &Lesson,
    shown: bool,
    token: usize,
) -> Option<String> {
    // What the lesson's plan makes of the step, or why it has not got it: the step's own words.
    let plan = &attention.plan;
    if let Some(said) = if shown {
        step.note(plan)
    } else {
        step.absent(plan)
    } {
        return Some(said.to_string());
    }
    match step {
        Step::Scaling => Some(format!(
            "d_k = {}, so every score is divided by √{} = {}.",
            attention.d_k(),
            attention.d_k(),
            format_number(attention.scale_divisor, lesson.decimals.max(4))
        )),
        Step::Softmax => crate::ui::notes::fully_masked(attention),
        Step::AllHeads => Some(format!(
            "The weights of each of the {} heads are printed in the Softmax section, one part \
             per head; the tutor shows them side by side.",
            attention.heads().query
        )),
        Step::Concat => Some(format!(
            "{} heads × d_v {} = {} columns, head 1's first.",
            attention.heads().query,
            attention.matrix(MatrixName::V).map_or(0, |v| v.ncols()),
            attention
                .matrix(MatrixName::Concat)
                .map_or(0, |c| c.ncols())
        )),
        Step::OutputProjection if attention.heads().query > 1 => Some(
            "Each cell's terms fall into one part per head: what that head contributes.".into(),
        ),
        Step::Circuits if attention.has(MatrixName::QRope) => {
            // The key's row is the source's in cross-attention; without scaling, no division.
            let key = if attention.plan.shape.cross {
                "s_j"
            } else {
                "x_j"
            };
            let (divided, step) = if attention.has(MatrixName::Scaled) {
                (" / √d_k", "Scaling")
            } else {
                ("", "Scores")
            };
            Some(format!(
                "W_QK leaves out the rotation (rope): x_i · W_QK · {key}ᵀ{divided} is the {step} \
                 step's score only where the query and the key stand at the same position."
            ))
        }
        Step::Circuits
            if crate::ui::query_key_biases(attention).is_some()
                || crate::ui::value_biases(attention).is_some() =>
        {
            let step = if attention.has(MatrixName::Scaled) {
                "Scaling"
            } else {
                "Scores"
            };
            let query_key = crate::ui::query_key_biases(attention).map(|biases| {
                format!(
                    "W_QK leaves out {biases}, which the projections add to Q and K: a score \
                     read through it is not the {step} step's."
                )
            });
            let value =
                crate::ui::value_biases(attention).map(|left| format!("W_OV leaves out {left}."));
            Some(
                [query_key, value]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        Step::KvCache => {
            let counts = attention.decode_multiply_adds(token);
            Some(format!(
                "At {}. {}",
                crate::attention::token_words(attention, token),
                crate::ui::generation::cache_words(attention, token, counts)
            ))
        }
        Step::DecodeOutput => Some(format!(
            "At {}. {}",
            crate::attention::token_words(attention, token),
            crate::ui::generation::check_words(attention, token)
        )),
        Step::NewToken | Step::DecodeWeights => Some(format!(
            "At {} (--token picks another).",
            crate::attention::token_words(attention, token)
        )),
        Step::BackwardOutput
        | Step::BackwardValues
        | Step::BackwardSoftmax
        | Step::BackwardScaling
        | Step::BackwardScores
        | Step::BackwardRotation
        | Step::BackwardWeights
        | Step::BackwardInput => backward_note(attention, lesson, step),
        // The tile's words are every head's (the same keys); the check covers every head.
        Step::OnlineSoftmax => {
            let mut line = crate::ui::online::tile_line(attention, 0, token);
            if attention.heads().query > 1
                && let Some(own) = line.find(" Last tile:")
            {
                line.truncate(own);
                line.push(' ');
                line.push_str(&crate::ui::online::check_words(attention, None));
            }
            Some(line)
        }
        Step::Embedding
        | Step::Positions
        | Step::LayerNorm
        | Step::RmsNorm
        | Step::Projection
        | Step::Rotation
        | Step::Scores
        | Step::Masking
        | Step::Output
        | Step::OutputProjection
        | Step::Circuits => None,
    }
}

/// A backward step's note: on the first backward step, the loss being differentiated.
fn backward_note(attention: &Attention, lesson: &Lesson, step: Step) -> Option<String> {
    let first = Step::all_in(&attention.plan)
        .into_iter()
        .find(|step| step.is_backward());
    (first == Some(step)).then(|| {
        attention.loss().map(|loss| {
            format!(
                "The loss L = Σ output ⊙ grad_output = {}.",
                crate::attention::number::format_number(loss, lesson.decimals)
            )
        })
    })?
}

impl Section {
    /// "Step 5/6 · Softmax", or "Masking (not a step of this lesson)".
    fn heading(&self) -> String {
        let head = self.head.map_or(String::new(), |(head, heads)| {
            format!(" — head {}/{heads}", head + 1)
        });
        match self.number {
            Some((number, count)) => {
                format!("Step {number}/{count} · {}{head}", self.step.title())
            }
            None => format!("{} (not a step of this lesson)", self.step.title()),
        }
    }

    /// The head whose matrices this section shows (0 for a step every head shares).
    fn head_index(&self) -> usize {
        self.head.map_or(0, |(head, _)| head)
    }

    /// A table of this section: every matrix of a step shared by the heads, and on a head's
    /// section after the first, only the head's own (the shared ones are printed once).
    fn shows(&self, name: MatrixName) -> bool {
        self.head_index() == 0 || name.per() != Per::Lesson
    }

    /// `lenient`: when every step is shown, a cell that does not fit one step's matrix (a column
    /// of the scores is not a column of the output) is skipped there instead of refused.
    /// Without `words` the section holds its explained cells alone: no narration, note or
    /// tables. `computed` is what the step computes (`screens::computed_in`), `None` for a step
    /// the lesson does not have.
    fn build(
        loaded: &LoadedLesson,
        attention: &Attention,
        (step, head, token): (Step, Option<usize>, usize),
        computed: Option<&[MatrixName]>,
        cell: Option<&str>,
        lenient: bool,
        words: bool,
    ) -> Result<Section, String> {
        let in_head = head.unwrap_or(0);
        // Only a generation step's matrices are one token's; the online softmax is shown after
        // its last tile, where acc / l is the output.
        let token = if step.is_at_a_token(&attention.plan) {
            token
        } else if step.is_at_a_tile(&attention.plan) {
            attention.tile_count().saturating_sub(1)
        } else {
            0
        };
        let lesson = &loaded.lesson;
        let narration = match lesson.narration.get(step) {
            _ if !words => String::new(),
            Some(own) => own.to_string(),
            None => step.narration(&attention.plan).to_string(),
        };
        let shown = computed.is_some();
        let (matrices, derived) = match computed {
            Some(computed) => (
                if words {
                    screens::new_on(step, attention, &lesson.steps())
                } else {
                    Vec::new()
                },
                computed.to_vec(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let note = words
            .then(|| note(step, attention, lesson, shown, token))
            .flatten();
        let mut derivations = Vec::new();
        // What the heads share is explained once, in the first head's section.
        let derived: Vec<MatrixName> = derived
            .into_iter()
            .filter(|name| in_head == 0 || name.per() != Per::Lesson)
            .collect();
        for name in &derived {
            let cells: Vec<Cell> = match cell {
                Some(spec) => match resolve_cell(attention, *name, spec, token) {
                    Ok(found) => vec![found.in_head(in_head).at_token(token).at_tile(token)],
                    // A cell of the scores is not always a cell of Q: skip matrices it does not fit.
                    Err(_) if lenient || derived.len() > 1 => vec![],
                    Err(message) => {
                        return Err(format!("--cell {spec}: {message} in {}", name.symbol()));
                    }
                },
                None => {
                    // The focus is a query token; a key's row (the source's) starts at the first.
                    // A cache's row to explain is the new token's, the one this step adds.
                    // A backward step's on a row with a gradient; a bias's on its one row.
                    let row = match name.entry().rows {
                        Axis::Keys if lesson.is_cross() => 0,
                        Axis::Keys if name.per_token() => token,
                        Axis::NewToken | Axis::Single => 0,
                        _ if name.backward() => {
                            attention.row_with_a_gradient(lesson.focus.unwrap_or(0))
                        }
                        _ => lesson.focus.unwrap_or(0),
                    };
                    let cols = attention
                        .matrix_at(*name, in_head, token)
                        .map_or(0, |m| m.ncols());
                    (0..cols.min(MAX_CELLS_PER_STEP))
                        .map(|col| {
                            Cell::new(*name, row, col)
                                .in_head(in_head)
                                .at_token(token)
                                .at_tile(token)
                        })
                        .collect()
                }
            };
            for cell in cells {
                if let Some(derivation) = attention.derive(cell) {
                    let text = derivation.explain(attention, lesson.decimals);
                    derivations.push((Some((derivation.cell, derivation.value)), text));
                }
            }
            if cell.is_none() {
                let cols = attention
                    .matrix_at(*name, in_head, token)
                    .map_or(0, |m| m.ncols());
                if cols > MAX_CELLS_PER_STEP {
                    derivations.push((
                        None,
                        format!(
                            "… {} more cells in this row; pick one with --cell ROW,COL",
                            cols - MAX_CELLS_PER_STEP
                        ),
                    ));
                }
            }
        }
        // The narration and the note are the step's: said once, in the first head's section.
        let (narration, note) = if in_head == 0 {
            (narration, note)
        } else {
            (String::new(), None)
        };
        Ok(Section {
            step,
            number: None,
            narration,
            note,
            matrices,
            derivations,
            head: head.map(|head| (head, attention.heads().query)),
            token,
        })
    }
}

/// Reads ROW,COL where each part is a token label or a 1-based number. Labels may contain
/// commas, so every comma is tried as the separator.
pub(super) fn resolve_cell(
    attention: &Attention,
    name: MatrixName,
    spec: &str,
    token: usize,
) -> Result<Cell, String> {
    let matrix = attention
        .matrix_at(name, 0, token)
        .ok_or("no such matrix")?;
    let (rows, cols) = matrix.shape();
    // A key's row or column is named by the source's tokens in cross-attention.
    let labels_along = |axis: Axis| -> &[String] {
        match axis {
            Axis::Queries => &attention.tokens,
            Axis::Keys => attention.key_tokens(),
            // A generation step's one row is its token's.
            Axis::NewToken => attention.tokens.get(token..=token).unwrap_or_default(),
            _ => &[],
        }
    };
    let row_of = |text: &str| -> Option<usize> {
        let text = text.trim();
        // A generation step's one row is also named by its token's position in the sentence,
        // as --token names it.
        let new_token = name.entry().rows == Axis::NewToken;
        labels_along(name.entry().rows)
            .iter()
            .position(|token| token == text)
            .or_else(|| {
                text.parse::<usize>().ok().and_then(|n| {
                    if new_token && n == token + 1 {
                        Some(0)
                    } else {
                        (1..=rows).contains(&n).then(|| n - 1)
                    }
                })
            })
    };
    let col_of = |text: &str| -> Option<usize> {
        let text = text.trim();
        let by_label = labels_along(name.entry().cols)
            .iter()
            .position(|token| token == text);
        by_label.or_else(|| {
            text.parse::<usize>()
                .ok()
                .filter(|n| (1..=cols).contains(n))
                .map(|n| n - 1)
        })
    };
    for (comma, _) in spec.match_indices(',') {
        if let (Some(row), Some(col)) = (row_of(&spec[..comma]), col_of(&spec[comma + 1..])) {
            return Ok(Cell::new(name, row, col));
        }
    }
    // What may name a row or a column: in cross-attention, the target's tokens down and the
    // source's across, said with the labels so that a swapped pair is seen at once.
    let cross = !attention.source_tokens.is_empty();
    let some = |tokens: &[String]| -> String {
        const SHOWN: usize = 8;
        let mut named = tokens[..tokens.len().min(SHOWN)].join(", ");
        if tokens.len() > SHOWN {
            named.push_str(", …");
        }
        named
    };
    let or_label = |axis: Axis| -> String {
        match axis {
            Axis::Queries if cross => format!(" (or a target token: {})", some(labels_along(axis))),
            Axis::Keys if cross => {
                format!(" (or a source token: {})", some(labels_along(axis)))
            }
            axis if axis.is_tokens() => " (or a token label)".to_string(),
            _ => String::new(),
        }
    };
    // A step of generation shows one token's row: another token's is another step's, which
    // --token chooses.
    if name.entry().rows == Axis::NewToken && token < attention.seq_len() {
        return Err(format!(
            "another token's row is another step's, which --token chooses; this step has one row, its token's ({}: write its label or {}), and expected ROW,COL has a column from 1 to {cols}{}",
            crate::attention::token_words(attention, token),
            token + 1,
            or_label(name.entry().cols),
        ));
    }
    Err(format!(
        "expected ROW,COL with a row from 1 to {rows}{} and a column from 1 to {cols}{}",
        or_label(name.entry().rows),
        or_label(name.entry().cols),
    ))
}

fn header_line(loaded: &LoadedLesson, attention: &Attention) -> String {
    let lesson = &loaded.lesson;
    let scaling = if lesson.scale {
        format!(
            "scores ÷ √{} = {}",
            attention.d_k(),
            format_number(attention.scale_divisor, 4)
        )
    } else {
        "not scaled".to_string()
    };
    let mask = match lesson.mask {
        Mask::None => "no mask",
        Mask::Causal => "causal mask",
        Mask::Matrix(_) => "mask matrix",
    };
    // Cross-attention's tables are not square: which sequence runs down and which across.
    let layout = if lesson.is_cross() {
        " · rows: the tokens (queries), columns of the scores: the source tokens (keys)"
    } else {
        ""
    };
    format!("{} · {scaling} · {mask}{layout}", lesson.shape_text())
}

/// Greedy word wrap for narration in plain text.
pub(super) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.trim_end().to_string()
}
