//! `attn-tutor show`: a lesson's steps as text, a Markdown handout, or JSON.

use std::io::{self, BufWriter, Write};

use nalgebra::{DMatrix, DMatrixView};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use super::table::{markdown_code, markdown_text, write_markdown_table_in, write_text_table_in};
use super::{ShowFormat, status};
use crate::app::screens;
use crate::attention::number::format_number;
use crate::attention::{Attention, Axis, Cell, MatrixName, OnlineSoftmax, Step, TileState};
use crate::lesson::text::printable;
use crate::lesson::{Lesson, LoadedLesson, Mask, load};
use crate::pipeline::Per;
use crate::ui::formula::caption_with_group;

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
    let (only, cell) = (asked.step, asked.cell);
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
    if matches!(format, ShowFormat::Svg | ShowFormat::Html) {
        return super::screens::run(&loaded, &asked, format, out, err);
    }
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
    // A step of one head has a section per head in a lesson of several.
    let heads = attention.heads().query;
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
            let mut section = Section::build(
                &loaded,
                &attention,
                (step, head, token),
                cell,
                only.is_none(),
            )?;
            section.number = lesson_steps
                .iter()
                .position(|known| *known == step)
                .map(|index| (index + 1, lesson_steps.len()));
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
    let _ = match format {
        ShowFormat::Text => write_text(&mut out, &loaded, &attention, &sections),
        ShowFormat::Markdown => write_markdown(&mut out, &loaded, &attention, &sections),
        ShowFormat::Json => write_json(&mut out, &loaded, &attention, &sections, asked.compact),
        // Drawn by `screens`, above.
        ShowFormat::Svg | ShowFormat::Html => Ok(()),
    }
    .and_then(|()| out.flush());
    status::OK
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
    fn build(
        loaded: &LoadedLesson,
        attention: &Attention,
        (step, head, token): (Step, Option<usize>, usize),
        cell: Option<&str>,
        lenient: bool,
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
            Some(own) => own.to_string(),
            None => step.narration(&attention.plan).to_string(),
        };
        let steps = lesson.steps();
        let shown = steps.contains(&step);
        let (matrices, derived) = if shown {
            (
                screens::new_on(step, attention, &steps),
                screens::computed_on(step, attention, &steps),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let note = note(step, attention, lesson, shown, token);
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
                    let row = match name.entry().rows {
                        Axis::Keys if lesson.is_cross() => 0,
                        Axis::Keys if name.per_token() => token,
                        Axis::NewToken => 0,
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

fn write_text(
    out: &mut dyn Write,
    loaded: &LoadedLesson,
    attention: &Attention,
    sections: &[Section],
) -> io::Result<()> {
    let lesson = &loaded.lesson;
    writeln!(out, "{}  ({})", lesson.title, loaded.name)?;
    if !lesson.source.is_empty() {
        writeln!(out, "Source: {}", lesson.source)?;
    }
    writeln!(out, "{}", header_line(loaded, attention))?;
    for section in sections {
        write!(out, "\n== {} ==\n", section.heading())?;
        if !section.narration.is_empty() {
            write!(out, "\n{}\n", wrap(&section.narration, 78))?;
        }
        if let Some(note) = &section.note {
            write!(out, "\nNote: {note}\n")?;
        }
        let head = section.head_index();
        for name in section.matrices.iter().filter(|name| section.shows(**name)) {
            write!(out, "\n{}\n", caption_with_group(attention, *name, head))?;
            write_text_table_in(
                out,
                attention,
                *name,
                (head, section.token),
                lesson.decimals,
            )?;
        }
        if !section.derivations.is_empty() {
            writeln!(out, "\nHow each cell is computed:")?;
            for (_, text) in &section.derivations {
                writeln!(out, "  {text}")?;
            }
        }
    }
    Ok(())
}

fn write_markdown(
    out: &mut dyn Write,
    loaded: &LoadedLesson,
    attention: &Attention,
    sections: &[Section],
) -> io::Result<()> {
    let lesson = &loaded.lesson;
    write!(out, "# {}\n\n", markdown_text(&lesson.title))?;
    if !lesson.source.is_empty() {
        write!(out, "*Source: {}*\n\n", markdown_text(&lesson.source))?;
    }
    if !lesson.summary.is_empty() {
        write!(out, "{}\n\n", markdown_text(&lesson.summary))?;
    }
    writeln!(out, "{}", markdown_text(&header_line(loaded, attention)))?;
    for section in sections {
        write!(out, "\n## {}\n", markdown_text(&section.heading()))?;
        if !section.narration.is_empty() {
            write!(out, "\n{}\n", markdown_text(&section.narration))?;
        }
        if let Some(note) = &section.note {
            write!(out, "\n> {}\n", markdown_text(note))?;
        }
        let head = section.head_index();
        for name in section.matrices.iter().filter(|name| section.shows(**name)) {
            write!(
                out,
                "\n**{}**\n\n",
                markdown_text(&caption_with_group(attention, *name, head))
            )?;
            write_markdown_table_in(
                out,
                attention,
                *name,
                (head, section.token),
                lesson.decimals,
            )?;
        }
        if !section.derivations.is_empty() {
            write!(out, "\nHow each cell is computed:\n\n")?;
            for (_, text) in &section.derivations {
                writeln!(out, "- {}", markdown_code(text))?;
            }
        }
    }
    Ok(())
}

/// The JSON document, serialized straight onto the writer. Its keys come in the order a
/// `serde_json::Map` sorts them (alphabetical), as the output had when it was built as a
/// `Value`, so the bytes are the same.
fn write_json(
    out: &mut dyn Write,
    loaded: &LoadedLesson,
    attention: &Attention,
    sections: &[Section],
    compact: bool,
) -> io::Result<()> {
    let lesson = &loaded.lesson;
    // Every section's derivations: with several heads, each head's, told apart by `head`;
    // each made as it is written (a large lesson's are tens of MB of text).
    let derivations = Derivations {
        sections,
        attention,
    };
    let mut fields: Vec<(&str, Field)> = vec![
        ("name", Field::Text(&loaded.name)),
        ("title", Field::Text(&lesson.title)),
        ("tokens", Field::Texts(&lesson.tokens)),
        // Cross-attention's source (null in self-attention, where the tokens are the keys).
        (
            "source_tokens",
            Field::OptionalTexts(lesson.is_cross().then_some(&lesson.source_tokens[..])),
        ),
        ("d_k", Field::Count(attention.d_k())),
        (
            "fully_masked_rows",
            Field::Counts(attention.fully_masked_rows().collect()),
        ),
        ("derivations", Field::Derivations(derivations)),
    ];
    // Format 1's keys, each matrix of the lesson at the top level; `x` is the matrix that is
    // projected (the embeddings when nothing is added to them). A lesson's own matrix is given
    // whole, as the file has it (every head's W_q side by side); a matrix that is one head's is
    // given here only when there is one head, and is under `heads` always. `output` is the
    // lesson's answer: the heads' outputs projected by W_o when it has W_o.
    let one_head = attention.heads().query == 1;
    for name in MatrixName::ALL {
        let matrix = match name {
            MatrixName::X | MatrixName::SourceX | MatrixName::QRope | MatrixName::KRope => continue,
            // A generation step's matrices are under `decode`, one object per token, the
            // online softmax's under each head's `online`, one object per tile, and the
            // gradients under `backward`.
            name if name.kept_apart() || name.backward() => continue,
            // The source's own matrices only in cross-attention, where the source is.
            MatrixName::SourceEmbeddings | MatrixName::SourcePositions if !lesson.is_cross() => {
                continue;
            }
            MatrixName::Concat | MatrixName::Projected | MatrixName::WQK | MatrixName::WOV => {
                continue;
            }
            MatrixName::Output => attention.matrix(attention.plan.final_output()),
            _ => match lesson.input(name) {
                Some(input) => Some(&*input.values),
                None if one_head || name.per() == Per::Lesson => attention.matrix(name),
                None => None,
            },
        };
        fields.push((name.key(), Field::Matrix(matrix)));
    }
    let projected = attention
        .plan
        .projected_input()
        .and_then(|name| attention.matrix(name));
    fields.push(("x", Field::Matrix(projected)));
    // The matrix K and V are projected from in cross-attention: the source, with its
    // positions when they are added.
    let source = attention
        .plan
        .projected_source()
        .filter(|_| lesson.is_cross())
        .and_then(|name| attention.matrix(name));
    fields.push(("source_x", Field::Matrix(source)));
    // Each query head's matrices (a head's keys and values are its K/V group's), and the
    // heads' outputs side by side, which with one head and no W_o is that head's output.
    let heads = (0..attention.heads().query)
        .map(|head| head_fields(attention, head, lesson.tile))
        .collect();
    fields.push(("heads", Field::Heads(heads)));
    fields.push((
        "concat",
        Field::Matrix(
            attention
                .matrix(MatrixName::Concat)
                .or_else(|| attention.matrix(MatrixName::Output)),
        ),
    ));
    // Each step of generation written as it is made.
    fields.push((
        "decode",
        Field::Decode(attention.plan.shape.decode.then_some(attention)),
    ));
    // Present only with a backward pass (`grad_output`, or `--grad-seed`).
    if attention.plan.shape.backward {
        fields.push(("backward", Field::Object(backward_fields(attention))));
    }
    fields.sort_by_key(|(key, _)| *key);
    let document = Document(fields);
    let mut blocks = Blocks::new(out);
    if compact {
        document.serialize(&mut serde_json::Serializer::new(&mut blocks))
    } else {
        document.serialize(&mut serde_json::Serializer::with_formatter(
            &mut blocks,
            Indented::default(),
        ))
    }
    .map_err(io::Error::from)?;
    blocks.write_all(b"\n")?;
    blocks.flush()
}

/// Bytes kept in a block before they are handed on to the output.
const BLOCK: usize = 64 * 1024;

/// The JSON on its way to the output, a block at a time. serde_json writes each number as
/// several small pieces (the separator, the indentation, the digits); each written through
/// `&mut dyn Write` is a call that cannot be inlined, and on a large lesson those calls were a
/// third of the time. Here each piece is a copy into the block.
struct Blocks<'a> {
    block: Vec<u8>,
    out: &'a mut dyn Write,
}

impl<'a> Blocks<'a> {
    fn new(out: &'a mut dyn Write) -> Self {
        Blocks {
            block: Vec::with_capacity(BLOCK),
            out,
        }
    }

    #[cold]
    fn hand_on(&mut self) -> io::Result<()> {
        self.out.write_all(&self.block)?;
        self.block.clear();
        Ok(())
    }
}

impl Write for Blocks<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.block.len() + bytes.len() > BLOCK {
            self.hand_on()?;
            // A piece longer than a block (a long working) goes on as it is.
            if bytes.len() > BLOCK {
                return self.out.write_all(bytes);
            }
        }
        self.block.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.hand_on()?;
        self.out.flush()
    }
}

/// Levels of indentation written as one piece; deeper ones (no document has them) are
/// written a level at a time after those.
const INDENT_LEVELS: usize = 24;

/// ",\n" and the indentation of the deepest level `INDENT_LEVELS`: a new line at depth d is a
/// slice of it.
static NEW_LINE: [u8; 2 + 2 * INDENT_LEVELS] = {
    let mut line = [b' '; 2 + 2 * INDENT_LEVELS];
    line[0] = b',';
    line[1] = b'\n';
    line
};

/// serde_json's `PrettyFormatter` with its two spaces, byte for byte the same, but writing a
/// new line and its indentation as one piece instead of one piece per level (a number in an
/// online-softmax state is six levels deep).
#[derive(Default)]
struct Indented {
    depth: usize,
    /// Whether the array or object just ended held anything (`[]` and `{}` stay on one line).
    has_value: bool,
}

impl Indented {
    /// A new line at the current depth, after a comma unless `first`.
    #[inline]
    fn new_line<W: ?Sized + Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        let levels = self.depth.min(INDENT_LEVELS);
        writer.write_all(&NEW_LINE[usize::from(first)..2 + 2 * levels])?;
        for _ in levels..self.depth {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Indented {
    /// An array or object begins: one level deeper, nothing in it yet.
    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    /// It ends: its closing bracket on a line of its own unless it was empty.
    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.new_line(writer, true)?;
        }
        writer.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Indented {
    #[inline]
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    #[inline]
    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    #[inline]
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.new_line(writer, first)
    }

    #[inline]
    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    #[inline]
    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    #[inline]
    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    #[inline]
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.new_line(writer, first)
    }

    #[inline]
    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    #[inline]
    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// One step of generation in the JSON: the new query (rotated with rope: as it meets the
/// cache), the caches after the step, the new weights, and the final output row. With several
/// heads the query and weights are per head and the caches per K/V group.
fn decode_fields(attention: &Attention, token: usize) -> Document<'_> {
    let heads = attention.heads();
    let query = if attention.has(MatrixName::QNewRope) {
        MatrixName::QNewRope
    } else {
        MatrixName::QNew
    };
    let per_head = |name: MatrixName| -> Field<'_> {
        if heads.query == 1 {
            Field::Row(attention.matrix_at(name, 0, token))
        } else {
            Field::List(
                (0..heads.query)
                    .map(|head| Field::Row(attention.matrix_at(name, head, token)))
                    .collect(),
            )
        }
    };
    let per_group = |name: MatrixName| -> Field<'_> {
        if heads.query == 1 {
            Field::View(attention.matrix_at(name, 0, token))
        } else {
            Field::List(
                (0..heads.kv)
                    .map(|group| {
                        Field::View(attention.matrix_at(name, heads.first_of_group(group), token))
                    })
                    .collect(),
            )
        }
    };
    Document(vec![
        ("k_cache", per_group(MatrixName::KCache)),
        (
            "output",
            Field::Row(attention.matrix_at(attention.plan.final_decode_output(), 0, token)),
        ),
        ("q", per_head(query)),
        ("v_cache", per_group(MatrixName::VCache)),
        ("weights", per_head(MatrixName::DecodeWeights)),
    ])
}

/// The backward pass in the JSON: each gradient shaped like what it is the gradient of (d_w_q
/// like w_q, every head's block side by side; d_w_k and d_w_v every K/V group's), a head's
/// own under `heads` (its d_k and d_v are its share, before a group's heads are added; d_q and
/// d_k are with respect to the projections, before any rotation; d_scores to the raw scores
/// Q·Kᵀ). Null where the lesson has no such matrix (d_concat and d_w_o without W_o, the
/// weights' and X's gradients when Q, K, V are given).
fn backward_fields(attention: &Attention) -> Document<'_> {
    let heads = attention.heads();
    // Every head's (or group's) block side by side, as the lesson's own matrix is laid out.
    let side_by_side = |name: MatrixName| -> Option<DMatrix<f64>> {
        if name.per() == Per::Lesson {
            return attention.matrix(name).cloned();
        }
        let blocks: Vec<&DMatrix<f64>> = heads
            .slot_heads(name.per())
            .map(|head| attention.matrix_in(name, head))
            .collect::<Option<_>>()?;
        let rows = blocks.first()?.nrows();
        let width: usize = blocks.iter().map(|block| block.ncols()).sum();
        let mut whole = DMatrix::zeros(rows, width);
        let mut start = 0;
        for block in blocks {
            whole.columns_mut(start, block.ncols()).copy_from(block);
            start += block.ncols();
        }
        Some(whole)
    };
    let d_scores = if attention.has(MatrixName::DScores) {
        MatrixName::DScores
    } else {
        MatrixName::DSoftmaxInput
    };
    let head_fields = (0..heads.query)
        .map(|head| {
            Document(vec![
                (
                    "d_k",
                    Field::Matrix(attention.matrix_in(MatrixName::DK, head)),
                ),
                (
                    "d_q",
                    Field::Matrix(attention.matrix_in(MatrixName::DQ, head)),
                ),
                (
                    "d_scores",
                    Field::Matrix(attention.matrix_in(d_scores, head)),
                ),
                (
                    "d_v",
                    Field::Matrix(attention.matrix_in(MatrixName::DV, head)),
                ),
                (
                    "d_weights",
                    Field::Matrix(attention.matrix_in(MatrixName::DWeights, head)),
                ),
            ])
        })
        .collect();
    // X's gradient: the three paths added, or in cross-attention the queries' path alone (the
    // source's is `d_source`).
    let d_x = if attention.plan.shape.cross {
        MatrixName::DXQ
    } else {
        MatrixName::DX
    };
    let mut fields = vec![
        (
            "d_concat",
            Field::Matrix(attention.matrix(MatrixName::DConcat)),
        ),
        (
            "d_output",
            Field::Matrix(attention.matrix(MatrixName::DOutput)),
        ),
        ("d_w_k", Field::Owned(side_by_side(MatrixName::DWK))),
        ("d_w_o", Field::Matrix(attention.matrix(MatrixName::DWO))),
        ("d_w_q", Field::Owned(side_by_side(MatrixName::DWQ))),
        ("d_w_v", Field::Owned(side_by_side(MatrixName::DWV))),
        ("d_x", Field::Matrix(attention.matrix(d_x))),
        ("heads", Field::Heads(head_fields)),
    ];
    // The source's gradient, beside the contract's keys, only where there is a source.
    if attention.plan.shape.cross {
        fields.push((
            "d_source",
            Field::Matrix(attention.matrix(MatrixName::DSource)),
        ));
        fields.sort_by_key(|(key, _)| *key);
    }
    Document(fields)
}

/// The keys of one head in the JSON, in alphabetical order.
const HEAD_MATRICES: [MatrixName; 10] = [
    MatrixName::K,
    MatrixName::KRope,
    MatrixName::Masked,
    MatrixName::Output,
    MatrixName::Q,
    MatrixName::QRope,
    MatrixName::Scaled,
    MatrixName::Scores,
    MatrixName::V,
    MatrixName::Weights,
];

fn head_fields(attention: &Attention, head: usize, tile: usize) -> Document<'_> {
    let mut fields: Vec<(&str, Field)> = HEAD_MATRICES
        .into_iter()
        .map(|name| (name.key(), Field::Matrix(attention.matrix_in(name, head))))
        .collect();
    // The online softmax over the lesson's tile, computed tile by tile as it is written.
    fields.push((
        "online",
        attention
            .online_softmax(head, tile)
            .map_or(Field::Matrix(None), Field::Online),
    ));
    // The circuits are a lesson's with W_o only: one-head lessons of format 1 keep their keys.
    for name in [MatrixName::WOV, MatrixName::WQK] {
        if attention.has(name) {
            fields.push((name.key(), Field::Matrix(attention.matrix_in(name, head))));
        }
    }
    fields.sort_by_key(|(key, _)| *key);
    Document(fields)
}

/// The top-level JSON object, its fields in the order given.
struct Document<'a>(Vec<(&'a str, Field<'a>)>);

enum Field<'a> {
    Text(&'a str),
    Texts(&'a [String]),
    /// Texts, or `null`.
    OptionalTexts(Option<&'a [String]>),
    Count(usize),
    Counts(Vec<usize>),
    /// Rows of numbers, `null` for a matrix this lesson does not have.
    Matrix(Option<&'a DMatrix<f64>>),
    Derivations(Derivations<'a>),
    /// One object per head.
    Heads(Vec<Document<'a>>),
    /// Rows of numbers read in place (a cache: its group's first t + 1 rows), or `null`.
    View(Option<DMatrixView<'a, f64>>),
    /// The one row of a one-row matrix, `null` for a matrix this lesson does not have.
    Row(Option<DMatrixView<'a, f64>>),
    /// A list of fields (one per head, or per K/V group).
    List(Vec<Field<'a>>),
    /// Every step of generation, one object each, made as it is written; or `null`.
    Decode(Option<&'a Attention>),
    /// One head's online softmax: `{"steps": [...], "tile": B}`.
    Online(OnlineSoftmax<'a>),
    /// A matrix made for the JSON (every head's block side by side), or `null`.
    Owned(Option<DMatrix<f64>>),
    /// An object of its own (the backward pass).
    Object(Document<'a>),
}

/// The explained cells of every section, as the sections made them.
struct Derivations<'a> {
    sections: &'a [Section],
    attention: &'a Attention,
}

impl Serialize for Derivations<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let several_heads = self.attention.heads().query > 1;
        let explained = self
            .sections
            .iter()
            .flat_map(|section| &section.derivations)
            .filter_map(|(cell, text)| cell.map(|(cell, value)| (cell, value, text)));
        let mut list = serializer.serialize_seq(None)?;
        for (cell, value, text) in explained {
            list.serialize_element(&DerivationJson {
                col: cell.col,
                head: (several_heads && cell.matrix.per() != Per::Lesson).then_some(cell.head),
                matrix: cell.matrix.key(),
                row: cell.row,
                text,
                value,
            })?;
        }
        list.end()
    }
}

/// One explained cell; fields in alphabetical order, as the JSON has them.
#[derive(Serialize)]
struct DerivationJson<'a> {
    col: usize,
    /// The index in `heads` of the head whose matrix the cell is in, for a lesson of several
    /// heads and a matrix that is one head's.
    #[serde(skip_serializing_if = "Option::is_none")]
    head: Option<usize>,
    matrix: &'static str,
    row: usize,
    text: &'a str,
    #[serde(serialize_with = "derivation_value")]
    value: f64,
}

/// A derived cell's value: a number, or `"-inf"` when it is not finite.
fn derivation_value<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.is_finite() {
        serializer.serialize_f64(*value)
    } else {
        serializer.serialize_str("-inf")
    }
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, field) in &self.0 {
            map.serialize_entry(key, field)?;
        }
        map.end()
    }
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Text(text) => serializer.serialize_str(text),
            Field::Texts(texts) => serializer.collect_seq(texts.iter()),
            Field::OptionalTexts(None) => serializer.serialize_unit(),
            Field::OptionalTexts(Some(texts)) => serializer.collect_seq(texts.iter()),
            Field::Count(count) => serializer.serialize_u64(*count as u64),
            Field::Counts(counts) => serializer.collect_seq(counts.iter()),
            Field::Matrix(None) | Field::Owned(None) => serializer.serialize_unit(),
            Field::Owned(Some(matrix)) => Field::Matrix(Some(matrix)).serialize(serializer),
            Field::Object(document) => document.serialize(serializer),
            Field::Matrix(Some(matrix)) => {
                Field::View(Some(matrix.as_view())).serialize(serializer)
            }
            Field::View(None) => serializer.serialize_unit(),
            Field::View(Some(matrix)) => {
                let mut rows = serializer.serialize_seq(Some(matrix.nrows()))?;
                for row in 0..matrix.nrows() {
                    rows.serialize_element(&MatrixRow {
                        matrix: *matrix,
                        row,
                    })?;
                }
                rows.end()
            }
            Field::Derivations(derivations) => derivations.serialize(serializer),
            Field::Heads(heads) => serializer.collect_seq(heads.iter()),
            Field::Row(None) | Field::Decode(None) => serializer.serialize_unit(),
            Field::Row(Some(matrix)) if matrix.nrows() == 0 => serializer.serialize_unit(),
            Field::Row(Some(matrix)) => MatrixRow {
                matrix: *matrix,
                row: 0,
            }
            .serialize(serializer),
            Field::List(fields) => serializer.collect_seq(fields.iter()),
            Field::Decode(Some(attention)) => {
                let tokens = attention.seq_len();
                let mut steps = serializer.serialize_seq(Some(tokens))?;
                for token in 0..tokens {
                    steps.serialize_element(&decode_fields(attention, token))?;
                }
                steps.end()
            }
            Field::Online(online) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("steps", &OnlineSteps(*online))?;
                map.serialize_entry("tile", &online.tile)?;
                map.end()
            }
        }
    }
}

/// The online softmax's state after each tile, each computed as it is written: one tile's
/// state is held at a time, however many tiles a large lesson makes.
struct OnlineSteps<'a>(OnlineSoftmax<'a>);

impl Serialize for OnlineSteps<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut steps = serializer.serialize_seq(Some(self.0.tile_count()))?;
        // Each state written where it is kept, not copied out per tile.
        let mut tiles = self.0.tiles();
        while let Some(tile) = tiles.advance() {
            steps.serialize_element(&OnlineStep(tile))?;
        }
        steps.end()
    }
}

/// One tile's state, keys in alphabetical order: `acc` (one row per query row), `keys`
/// (0-based, inclusive), `l` and `m` (one per query row; m is `"-inf"` while every key seen
/// is masked).
struct OnlineStep<'a>(TileState<'a>);

impl Serialize for OnlineStep<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tile = &self.0;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("acc", &Field::Matrix(Some(tile.acc)))?;
        map.serialize_entry("keys", &[tile.first, tile.last])?;
        map.serialize_entry("l", &Numbers(tile.sum))?;
        map.serialize_entry("m", &Numbers(tile.max))?;
        map.end()
    }
}

/// A list of numbers as JSON, with `"-inf"` and `"inf"` for the infinite, as `MatrixRow`.
struct Numbers<'a>(&'a [f64]);

impl Serialize for Numbers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cells = serializer.serialize_seq(Some(self.0.len()))?;
        for value in self.0 {
            cells.serialize_element(&JsonNumber(*value))?;
        }
        cells.end()
    }
}

/// One number as JSON: itself when finite, else `"-inf"` or `"inf"`.
struct JsonNumber(f64);

impl Serialize for JsonNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if value.is_finite() {
            serializer.serialize_f64(value)
        } else if value < 0.0 {
            serializer.serialize_str("-inf")
        } else {
            serializer.serialize_str("inf")
        }
    }
}

/// One row of a matrix as JSON: numbers, with `"-inf"` and `"inf"` for the infinite.
struct MatrixRow<'a> {
    matrix: DMatrixView<'a, f64>,
    row: usize,
}

impl Serialize for MatrixRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cells = serializer.serialize_seq(Some(self.matrix.ncols()))?;
        for value in self.matrix.row(self.row).iter() {
            cells.serialize_element(&JsonNumber(*value))?;
        }
        cells.end()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// `value` written as `write_json` writes a document: through `Blocks`, indented or not.
    fn written(value: &Value, compact: bool) -> String {
        let mut out = Vec::new();
        let mut blocks = Blocks::new(&mut out);
        if compact {
            value.serialize(&mut serde_json::Serializer::new(&mut blocks))
        } else {
            value.serialize(&mut serde_json::Serializer::with_formatter(
                &mut blocks,
                Indented::default(),
            ))
        }
        .unwrap();
        blocks.flush().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_json_writer_writes_what_serde_json_writes_across_blocks_and_past_the_indent_levels() {
        // Deeper than the indentation written in one piece, empty arrays and objects, a
        // string longer than a block, and enough numbers to fill many blocks.
        let mut deep = json!([1.5, [], {}, "end"]);
        for level in 0..(INDENT_LEVELS + 6) {
            deep = json!({ "level": level, "inner": deep, "empty": [] });
        }
        let numbers: Vec<f64> = (0..40_000).map(|i| f64::from(i) / 7.0 - 300.0).collect();
        let value = json!({
            "deep": deep,
            "long text": "a ☃ \" \\ \n".repeat(BLOCK / 4),
            "numbers": [numbers.clone(), numbers],
            "nothing": null,
        });
        let pretty = written(&value, false);
        assert!(pretty.len() > 10 * BLOCK);
        // The innermost level's keys: in the document, then in 30 levels.
        let innermost = format!("\n{}\"level\": 0\n", "  ".repeat(INDENT_LEVELS + 7));
        assert!(pretty.contains(&innermost));
        assert_eq!(pretty, serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(
            written(&value, true),
            serde_json::to_string(&value).unwrap()
        );
    }
}
