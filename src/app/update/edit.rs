//! Editing: the prompt for a cell or a token label, what a typed value becomes, and the
//! lesson's history (undo, redo, reset, reroll).

use super::backward::set_learning_rate;
use super::leave::leave;
use super::save::save_effect;
use crate::app::action::{Action, Effect};
use crate::app::history::{Change, WholeLesson, lesson_place};
use crate::app::practice;
use crate::app::screens;
use crate::app::tutor::{Cursor, Tutor};
use crate::app::typed::{cell_value, token_label};
use crate::app::{App, Leave, Overlay, Prompt, PromptFor, Question, Status, Tokens};
use crate::attention::{Cell, MatrixName};
use crate::lesson::text::printable_path;
use crate::lesson::{InputMatrix, Mask};
use std::path::PathBuf;
use std::sync::Arc;

/// Why an edit is refused while practising: the hidden answers would change.
pub(super) const NUMBERS_STAY_PUT: &str =
    "Numbers stay put while you practise: x stops practice, then edit";

/// The longest text a prompt takes; more is ignored rather than stored.
pub(crate) const MAX_INPUT_CHARS: usize = 256;

/// Keys that change the lesson's numbers would make the hidden answers stale.
pub(super) fn changes_numbers(action: &Action) -> bool {
    matches!(
        action,
        Action::Undo | Action::Redo | Action::Reset | Action::Reroll
    )
}

/// `e` / Enter: a prompt for an input cell or a token label, an offer to jump for a computed cell.
pub(super) fn begin_edit(app: &mut App) {
    let Some(tutor) = app.screen.tutor() else {
        return;
    };
    let cursor = tutor.cursor(tutor.focus);
    let tokens = Tokens::of_rows(&tutor.lesson, tutor.focus);
    if crate::app::poll::freezes_numbers(app) && (cursor.on_label || tutor.is_editable(tutor.focus))
    {
        app.status = Some(Status::info(crate::app::poll::NUMBERS_FROZEN));
        return;
    }
    if let (true, None, Some(tokens)) = (cursor.on_label, &tutor.practice, tokens) {
        app.overlay = Overlay::Prompt(Prompt {
            purpose: PromptFor::Label(tokens, cursor.row),
            input: String::new(),
        });
        return;
    }
    let cell = tutor.cell(tutor.focus, cursor.row, cursor.col);
    if tutor.is_hidden(cell) {
        app.overlay = Overlay::Prompt(Prompt {
            purpose: PromptFor::Answer(cell),
            input: String::new(),
        });
        return;
    }
    if tutor.practice.is_some() && tutor.is_editable(tutor.focus) {
        app.status = Some(Status::info(NUMBERS_STAY_PUT));
        return;
    }
    if tutor.is_editable(tutor.focus) {
        app.overlay = Overlay::Prompt(Prompt {
            purpose: PromptFor::Cell(cell),
            input: String::new(),
        });
        return;
    }
    let Some(derivation) = tutor.attention.derive(cell) else {
        return;
    };
    match derivation.source() {
        Some(to) => app.overlay = Overlay::Question(Question::JumpTo { from: cell, to }),
        // Computed from nothing but its place: a sinusoidal position.
        None if derivation.operands().is_empty()
            && matches!(derivation.rule, crate::attention::Rule::Sinusoid(_)) =>
        {
            app.status = Some(Status::error(format!(
                "{} cannot be edited: it is computed from its position (sin or cos of \
                 p / 10000^(2i/d_model)); a lesson that writes `positions` as a matrix has \
                 positions to edit",
                tutor.attention.cell_name(cell)
            )));
        }
        None => {
            app.status = Some(Status::error(format!(
                "{} cannot be edited",
                tutor.attention.cell_name(cell)
            )));
        }
    }
}

pub(super) fn prompt_update(app: &mut App, mut prompt: Prompt, action: Action) -> Vec<Effect> {
    match action {
        Action::Type(ch) if !ch.is_control() && prompt.input.chars().count() < MAX_INPUT_CHARS => {
            prompt.input.push(ch);
        }
        Action::Paste(text) => {
            let room = MAX_INPUT_CHARS.saturating_sub(prompt.input.chars().count());
            // Pasted text is filtered like typed text: no control characters, one line.
            prompt
                .input
                .extend(text.chars().filter(|ch| !ch.is_control()).take(room));
        }
        Action::Backspace => {
            prompt.input.pop();
        }
        Action::ClearInput => prompt.input.clear(),
        Action::Cancel | Action::Back => {
            app.overlay = Overlay::None;
            if prompt.purpose == PromptFor::SavePath {
                app.after_save = None;
                app.status = Some(Status::info("Not saved"));
            }
            return Vec::new();
        }
        Action::Quit => {
            app.overlay = Overlay::None;
            leave(app, Leave::Quit);
            return Vec::new();
        }
        Action::Submit => return submit(app, prompt),
        _ => {}
    }
    app.overlay = Overlay::Prompt(prompt);
    Vec::new()
}

pub(super) fn submit(app: &mut App, prompt: Prompt) -> Vec<Effect> {
    // A student's answer to the class's poll needs no lesson of their own on screen.
    if let PromptFor::PollAnswer(number) = prompt.purpose {
        return match crate::app::poll::submit(app, number, &prompt.input) {
            Ok(effects) => effects,
            Err(problem) => {
                app.status = Some(Status::error(format!("{problem} (fix it, or Esc)")));
                app.overlay = Overlay::Prompt(prompt);
                Vec::new()
            }
        };
    }
    if prompt.purpose == PromptFor::HeadText {
        return super::training::submit_text(app, &prompt.input);
    }
    let Some(tutor) = app.screen.tutor_mut() else {
        app.overlay = Overlay::None;
        return Vec::new();
    };
    let outcome = match &prompt.purpose {
        // Right or wrong, the cursor goes on to the next ?; the verdict stays in the panel.
        PromptFor::Answer(cell) => practice::answer(tutor, *cell, &prompt.input).map(|s| s.text),
        PromptFor::Cell(cell) => edit_cell(tutor, *cell, &prompt.input),
        PromptFor::Label(tokens, row) => edit_label(tutor, *tokens, *row, &prompt.input),
        PromptFor::LearningRate => set_learning_rate(tutor, &prompt.input),
        // Taken above.
        PromptFor::PollAnswer(_) | PromptFor::HeadText => return Vec::new(),
        PromptFor::SavePath => {
            let typed = prompt.input.trim();
            if typed.is_empty() {
                Err("type a file name to save to, or press Esc".to_string())
            } else {
                let mut path = PathBuf::from(typed);
                // "some/folder/" means a file in that folder, under the usual name.
                if typed.ends_with('/') || typed.ends_with(std::path::MAIN_SEPARATOR) {
                    path = path.join(format!("{}-edited.toml", tutor.name));
                } else if path.extension().is_none() {
                    path.set_extension("toml");
                }
                app.overlay = Overlay::None;
                app.status = Some(Status::info(format!(
                    "Saving to {}…",
                    printable_path(&path)
                )));
                return vec![save_effect(tutor, path, false)];
            }
        }
    };
    match outcome {
        Ok(message) => {
            app.overlay = Overlay::None;
            app.status = Some(Status::info(message));
        }
        Err(problem) => {
            // The prompt stays open with what was typed, so a typo can be fixed.
            let keep = if matches!(prompt.purpose, PromptFor::Answer(_)) {
                "fix it, or Esc"
            } else {
                "old value kept: fix it, or Esc"
            };
            app.status = Some(Status::error(format!("{problem} ({keep})")));
            app.overlay = Overlay::Prompt(prompt);
        }
    }
    Vec::new()
}

pub(super) fn edit_cell(tutor: &mut Tutor, cell: Cell, typed: &str) -> Result<String, String> {
    let name = tutor.attention.cell_name(cell);
    let value = cell_value(cell.matrix, typed).map_err(|problem| format!("{name}: {problem}"))?;
    let before = tutor.attention.value(cell).unwrap_or(0.0);
    if before.to_bits() == value.to_bits() {
        return Ok(format!("{name} is already {}", exact(value)));
    }
    let change = match (&tutor.lesson.mask, cell.matrix) {
        // Generation is the causal mask at work: a mask with another cell would leave the
        // cache and the whole pass disagreeing, and a lesson file that cannot be saved.
        (Mask::Causal, MatrixName::Mask) if tutor.lesson.decode => {
            return Err(format!(
                "{name} stays as it is: this lesson generates its tokens with a K/V cache, which \
                 needs the causal mask"
            ));
        }
        // A causal mask has no cells of its own: editing one turns it into a matrix.
        (Mask::Causal, MatrixName::Mask) => {
            let mut matrix = tutor
                .attention
                .matrix(MatrixName::Mask)
                .cloned()
                .unwrap_or_else(|| nalgebra::DMatrix::zeros(0, 0));
            matrix[(cell.row, cell.col)] = value;
            Change::Mask {
                before: Mask::Causal,
                after: Mask::Matrix(matrix),
            }
        }
        _ => {
            // A head's block of W_q (or of given Q, K, V) is a block of the lesson's matrix.
            let (row, col) = lesson_place(&tutor.attention, cell);
            Change::Cell {
                matrix: cell.matrix,
                row,
                col,
                before,
                after: value,
            }
        }
    };
    let in_file = file_place(tutor, cell);
    tutor.change(change);
    let downstream = tutor.changed.len().saturating_sub(1);
    let shown = exact(value);
    let mut message = format!(
        "{name} is now {shown}; {downstream} computed {} changed (u undoes)",
        if downstream == 1 { "cell" } else { "cells" }
    );
    message.push_str(&in_file);
    if cell.matrix == MatrixName::Mask
        && tutor
            .attention
            .fully_masked_rows()
            .any(|row| row == cell.row)
    {
        message.push_str("; this row now hides every key, so its weights are all 0");
    }
    Ok(message)
}

/// `; it is w_q row 1 column 4 in the file` for a cell of one head's block of a lesson's
/// matrix of several heads, whose place in the file differs from its place on screen.
pub(super) fn file_place(tutor: &Tutor, cell: Cell) -> String {
    let (row, col) = lesson_place(&tutor.attention, cell);
    if col == cell.col {
        return String::new();
    }
    format!(
        "; it is {} row {} column {} in the file",
        cell.matrix.key(),
        row + 1,
        col + 1
    )
}

/// A number as the learner would write it, however small: 1e-7, not "0".
pub(super) fn exact(value: f64) -> String {
    if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else {
        format!("{value}")
    }
}

pub(super) fn edit_label(
    tutor: &mut Tutor,
    tokens: Tokens,
    row: usize,
    typed: &str,
) -> Result<String, String> {
    let noun = tokens.noun(tutor.lesson.is_cross());
    let label = token_label(typed).map_err(|problem| format!("{noun} {}: {problem}", row + 1))?;
    let before = tokens
        .in_lesson(&tutor.lesson)
        .get(row)
        .cloned()
        .ok_or_else(|| format!("there is no {noun} {}", row + 1))?;
    if before == label {
        return Ok(format!("{noun} {} is already {label}", row + 1));
    }
    tutor.change(Change::Label {
        tokens,
        row,
        before: before.clone(),
        after: label.clone(),
    });
    let twin = tokens
        .in_lesson(&tutor.lesson)
        .iter()
        .enumerate()
        .any(|(other, token)| other != row && *token == label);
    let note = if twin {
        format!("; another {noun} has the same label, so rows will look alike")
    } else {
        String::new()
    };
    Ok(format!(
        "{noun} {} is now {label} (was {before}){note}",
        row + 1
    ))
}

/// Largest seed a re-roll gives: a teacher reads seeds aloud and types them, so they stay short.
pub(super) const MAX_REROLLED_SEED: u64 = 999_999;

/// `r`: a generated matrix gets a new seed. The next seed is a fixed scramble of the old one, so
/// re-rolls are reproducible and never land on a neighbouring matrix's seed.
pub(super) fn reroll(tutor: &mut Tutor) -> Status {
    let matrix = tutor.focus;
    let symbol = tutor.attention.symbol(matrix);
    let Some(input) = tutor.lesson.input(matrix) else {
        return Status::error(format!(
            "{symbol} is computed, not generated; r re-rolls a generated input matrix"
        ));
    };
    let Some(generator) = input.generator else {
        return Status::error(format!(
            "{symbol} is typed in the lesson, not generated; only generated matrices re-roll"
        ));
    };
    let seed = scramble(generator.seed);
    let after = InputMatrix::generated(generator.with_seed(seed));
    tutor.change(Change::Matrix {
        matrix,
        before: Box::new(input.clone()),
        after: Box::new(after),
    });
    let blocks = if tutor.heads().count(matrix.per()) > 1 {
        " (every head's block: the file has one generator for the whole matrix)"
    } else {
        ""
    };
    Status::info(format!(
        "{symbol} re-rolled with seed {seed}{blocks} (u undoes)"
    ))
}

/// The next seed, from 1 to `MAX_REROLLED_SEED`: an affine map that permutes that range (its
/// multiplier, the prime 2^19 − 1, shares no factor with 999,999), so distinct seeds stay
/// distinct, and it sends the small seeds lessons use far from each other.
pub(super) fn scramble(seed: u64) -> u64 {
    const MULTIPLIER: u64 = 524_287;
    const SHIFT: u64 = 314_159;
    let next = |seed: u64| (seed % MAX_REROLLED_SEED * MULTIPLIER + SHIFT) % MAX_REROLLED_SEED + 1;
    let mut rerolled = next(seed);
    // A re-roll must change the numbers: step past the one seed the map may fix.
    while rerolled == seed {
        rerolled = next(rerolled);
    }
    rerolled
}

/// Puts the cursor on `cell`, on this screen when it is shown here, else on the nearest earlier
/// step that shows it.
pub(super) fn jump_to(tutor: &mut Tutor, cell: Cell) {
    let shows = |tutor: &Tutor, index: usize| {
        let step = tutor.steps[index];
        screens::order(step, &tutor.attention).contains(&cell.matrix)
    };
    if !shows(tutor, tutor.step_index) {
        let earlier = (0..tutor.step_index)
            .rev()
            .find(|index| shows(tutor, *index));
        let later = (tutor.step_index + 1..tutor.steps.len()).find(|index| shows(tutor, *index));
        if let Some(index) = earlier.or(later) {
            tutor.go_to_step(index);
        }
    }
    tutor.focus_on(cell.matrix);
    // A cell of a head's matrix is shown in its head; one the lesson shares keeps the head.
    if cell.matrix.per() != crate::pipeline::Per::Lesson {
        tutor.set_head(cell.head);
    }
    // A kept row of the cache was made at its own token's step: that step is shown.
    if cell.matrix.per_token() && cell.token != tutor.token {
        tutor.set_token(cell.token);
    }
    tutor.set_cursor(
        cell.matrix,
        Cursor {
            row: cell.row,
            col: cell.col,
            on_label: false,
        },
    );
}

/// u, Ctrl-r, R and r: the lesson's history walked, reset or rerolled, and what became of it.
pub(super) fn history_update(tutor: &mut Tutor, action: Action) -> Option<Status> {
    let mut status = None;
    match action {
        Action::Undo => {
            status = Some(Status::info(tutor.undo_edit().map_or_else(
                || "Nothing to undo".to_string(),
                |edit| format!("Undid {edit} (Ctrl-r redoes it)"),
            )));
        }
        Action::Redo => {
            status = Some(Status::info(tutor.redo_edit().map_or_else(
                || "Nothing to redo".to_string(),
                |edit| format!("Redid {edit} (u undoes it)"),
            )));
        }
        Action::Reset if tutor.lesson == tutor.original => {
            status = Some(Status::info("The lesson already has its own numbers"));
        }
        Action::Reset => {
            tutor.change(Change::Lesson {
                before: Arc::clone(&tutor.lesson),
                after: Arc::clone(&tutor.original),
                why: WholeLesson::Reset,
            });
            status = Some(Status::info(
                "Back to the lesson's own numbers (u undoes the reset)",
            ));
        }
        Action::Reroll => status = Some(reroll(tutor)),
        _ => {}
    }
    status
}
