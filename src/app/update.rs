//! `update`: how each Action changes the app. The only way the app's state changes.

use std::path::PathBuf;

use crate::attention::{Cell, MatrixName};
use crate::lesson::limits::MAX_FILE_BYTES;
use crate::lesson::{InputMatrix, Mask, keep_generators, lesson_to_toml, lesson_toml_bytes};

use super::action::{Action, Effect, SaveFailure};
use super::classroom::{self, Classroom};
use super::history::{Change, WholeLesson, lesson_place};
use super::practice;
use super::screens;
use super::tutor::Direction;
use super::tutor::{Cursor, Tutor};
use super::typed::{cell_value, token_label};
use super::{App, Leave, Overlay, Prompt, PromptFor, Question, Status, Tokens};
use crate::lesson::limits::MAX_TILE;
use crate::lesson::text::printable_path;

/// Why an edit is refused while practising: the hidden answers would change.
const NUMBERS_STAY_PUT: &str = "Numbers stay put while you practise: x stops practice, then edit";

/// The longest text a prompt takes; more is ignored rather than stored.
const MAX_INPUT_CHARS: usize = 256;

/// Applies one Action. Returns what the caller must do outside the app (save a file, keep the
/// progress) and report back with `Action::Saved` or `Action::ProgressSaved`.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let step_before = app.tutor.as_ref().map(|tutor| tutor.step_index);
    let mut effects = apply(app, action);
    keep_progress(app, step_before);
    if std::mem::take(&mut app.progress_changed) {
        effects.push(Effect::SaveProgress(app.progress.clone()));
    }
    effects
}

fn apply(app: &mut App, action: Action) -> Vec<Effect> {
    if let Action::ProgressSaved(result) = action {
        if let Err(why) = result {
            app.status = Some(Status::error(format!("Progress not kept: {why}")));
        }
        return Vec::new();
    }
    // What others do (a save finishing, the presenter moving) leaves the learner's message.
    if !matches!(
        action,
        Action::Saved(_) | Action::Presenter(_) | Action::Audience(_)
    ) {
        app.status = None;
    }
    let Some(action) = classroom::intercept(app, action) else {
        return Vec::new();
    };
    match app.overlay.clone() {
        Overlay::Help => {
            match action {
                Action::Quit => leave(app, Leave::Quit),
                Action::ToggleHelp | Action::Back | Action::Cancel | Action::Submit => {
                    app.overlay = Overlay::None;
                }
                // Clamped again where it is drawn, to the rows that do not fit.
                Action::ScrollHelp(rows) => {
                    let most = crate::keymap::help_rows_for(app).len() as u16;
                    app.help_scroll = app.help_scroll.saturating_add_signed(rows).min(most);
                }
                _ => {}
            }
            Vec::new()
        }
        Overlay::Prompt(prompt) => prompt_update(app, prompt, action),
        Overlay::Question(question) => question_update(app, question, action),
        Overlay::None if matches!(action, Action::Saved(_)) => saved(app, action),
        Overlay::None if app.tutor.is_some() => tutor_update(app, action),
        Overlay::None if app.lab.is_some() => {
            lab_update(app, action);
            Vec::new()
        }
        Overlay::None => {
            picker_update(app, action);
            Vec::new()
        }
    }
}

fn picker_update(app: &mut App, action: Action) {
    let last = app.picker.len().saturating_sub(1);
    match action {
        Action::Move(Direction::Up) => app.picked = app.picked.saturating_sub(1),
        Action::Move(Direction::Down) => app.picked = (app.picked + 1).min(last),
        Action::FirstStep => app.picked = 0,
        Action::LastStep => app.picked = last,
        // A click picks a lesson; a click on the lesson already picked opens it.
        Action::Pick(index) if index == app.picked => open(app),
        Action::Pick(index) if index <= last => app.picked = index,
        Action::Open | Action::Submit | Action::Edit | Action::Move(Direction::Right) => open(app),
        Action::Back | Action::Quit => go(app, Leave::Quit),
        Action::ToggleHelp => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
        }
        Action::OpenLab => app.lab = Some(super::LabScreen::open()),
        _ => {}
    }
}

/// The scaling lab's keys: ← → the d_k, [ ] the keys in a row, r the seed, q back. The guards
/// make the change; an arm runs only to say why there was none (an end of the sweep).
fn lab_update(app: &mut App, action: Action) {
    let Some(lab) = app.lab.as_mut() else {
        return;
    };
    match action {
        Action::Move(direction @ (Direction::Left | Direction::Right))
            if !lab.choose(direction == Direction::Right) =>
        {
            app.status = Some(Status::info(if direction == Direction::Right {
                "This is the sweep's largest d_k: ← goes back"
            } else {
                "This is the sweep's smallest d_k: → goes on"
            }));
        }
        Action::NextMatrix | Action::PreviousMatrix
            if !lab.change_keys(action == Action::NextMatrix) =>
        {
            app.status = Some(Status::info(format!(
                "A row here has from 2 to {} keys (`attn-tutor lab scaling --keys` takes more)",
                super::SCREEN_MAX_KEYS
            )));
        }
        Action::Reroll => lab.reseed(),
        Action::ToggleHelp => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
        }
        Action::Back => app.lab = None,
        Action::Quit => go(app, Leave::Quit),
        _ => {}
    }
}

fn open(app: &mut App) {
    let Some(entry) = app.picker.get(app.picked) else {
        return;
    };
    match &entry.lesson {
        Ok(loaded) => {
            if let Some(allowance) = &app.allowance
                && let Err(no_room) = allowance.reserve(&loaded.lesson)
            {
                app.status = Some(Status::error(no_room.opening(&entry.name)));
                return;
            }
            let warnings = loaded.warnings.len();
            let tutor = Tutor::new(loaded);
            let stopped_at = app
                .progress
                .lesson(&tutor.name)
                .and_then(|progress| progress.last_step)
                .and_then(|step| tutor.steps.iter().position(|shown| *shown == step))
                .filter(|index| *index > 0);
            app.tutor = Some(tutor);
            if let Some(step_index) = stopped_at {
                app.overlay = Overlay::Question(Question::Resume { step_index });
            }
            if let Some(first) = loaded.warnings.first() {
                let more = if warnings > 1 {
                    format!(" (and {} more; run `attn-tutor check`)", warnings - 1)
                } else {
                    String::new()
                };
                app.status = Some(Status::info(format!("warning: {}{more}", first.message)));
            }
        }
        Err(error) => {
            app.status = Some(Status::error(format!(
                "{} cannot be opened: {}",
                entry.name,
                error.first_line()
            )));
        }
    }
}

/// After any Action: a new step is where the learner now is, and a step just practised to the
/// end goes into their progress.
fn keep_progress(app: &mut App, step_before: Option<usize>) {
    let Some(tutor) = app.tutor.as_mut() else {
        return;
    };
    if step_before.is_some_and(|before| before != tutor.step_index) {
        // Only practice is kept: a lesson merely looked through has nothing to resume.
        if tutor.practice.is_some() {
            app.progress.visit(&tutor.name, tutor.step());
            app.progress_changed = true;
        }
        if let Some(practice) = tutor.practice.as_mut() {
            practice.feedback = None;
        }
        if let Some(target) = tutor.practice_target().filter(|_| tutor.practice.is_some()) {
            tutor.focus_on(target);
        }
    }
    if let Some((step, score)) = tutor
        .practice
        .as_mut()
        .and_then(|practice| practice.just_finished.take())
    {
        app.progress.record(&tutor.name, step, score);
        app.progress_changed = true;
    }
}

/// Keys that change the lesson's numbers would make the hidden answers stale.
fn changes_numbers(action: &Action) -> bool {
    matches!(
        action,
        Action::Undo | Action::Redo | Action::Reset | Action::Reroll
    )
}

fn tutor_update(app: &mut App, action: Action) -> Vec<Effect> {
    let Some(tutor) = app.tutor.as_mut() else {
        return Vec::new();
    };
    if tutor.practice.is_some() && changes_numbers(&action) {
        app.status = Some(Status::info(NUMBERS_STAY_PUT));
        return Vec::new();
    }
    let last = tutor.steps.len() - 1;
    let mut status = None;
    // On All heads, ← → and Enter pick a head and open it.
    let action = match (tutor.step(), action) {
        (crate::attention::Step::AllHeads, Action::Move(Direction::Left)) => Action::PreviousHead,
        (crate::attention::Step::AllHeads, Action::Move(Direction::Right)) => Action::NextHead,
        (crate::attention::Step::AllHeads, Action::Edit | Action::Submit | Action::Open) => {
            if let Some(softmax) = tutor
                .steps
                .iter()
                .position(|step| *step == crate::attention::Step::Softmax)
            {
                tutor.go_to_step(softmax);
            }
            return Vec::new();
        }
        (_, action) => action,
    };
    match action {
        Action::NextStep if tutor.step_index == last => {
            status = Some(Status::info(
                "This is the last step: p goes back, q returns to the lessons",
            ));
        }
        Action::NextStep => tutor.go_to_step(tutor.step_index + 1),
        Action::PreviousStep if tutor.step_index == 0 => {
            status = Some(Status::info("This is the first step: n goes on"));
        }
        Action::PreviousStep => tutor.go_to_step(tutor.step_index - 1),
        Action::GoToStep(number) if (1..=tutor.steps.len()).contains(&number) => {
            tutor.go_to_step(number - 1);
        }
        Action::GoToStep(_) => {
            status = Some(Status::error(format!(
                "This lesson has {} steps: press 1 to {}",
                tutor.steps.len(),
                tutor.steps.len()
            )));
        }
        Action::FirstStep => tutor.go_to_step(0),
        Action::LastStep => tutor.go_to_step(last),
        Action::Move(direction) => tutor.move_cursor(direction),
        Action::NextMatrix => tutor.cycle_focus(true),
        Action::PreviousMatrix => tutor.cycle_focus(false),
        Action::NextHead | Action::PreviousHead if tutor.heads().query < 2 => {
            status = Some(Status::info(
                "This lesson has one head; < and > change the head in a lesson with several",
            ));
        }
        Action::NextHead => tutor.cycle_head(true),
        Action::PreviousHead => tutor.cycle_head(false),
        // On the online softmax step ( ) walk the tiles.
        Action::NextToken if tutor.step_is_per_tile() => {
            if tutor.tile + 1 >= tutor.attention.tile_count() {
                status = Some(Status::info(
                    "This is the last tile: acc / l is the output; ( goes back",
                ));
            } else {
                tutor.set_tile(tutor.tile + 1);
            }
        }
        Action::PreviousToken if tutor.step_is_per_tile() => {
            if tutor.tile == 0 {
                status = Some(Status::info("This is the first tile: ) goes on"));
            } else {
                tutor.set_tile(tutor.tile - 1);
            }
        }
        Action::SetLearningRate => {
            app.overlay = Overlay::Prompt(Prompt {
                purpose: PromptFor::LearningRate,
                input: String::new(),
            });
            return Vec::new();
        }
        Action::AddBackward | Action::GradientStep if tutor.practice.is_some() => {
            status = Some(Status::info(
                "The numbers stay as they are in practice: x leaves practice, then d or g",
            ));
        }
        Action::AddBackward if tutor.lesson.grad_output.is_some() => {
            status = Some(Status::info(
                "This lesson has its backward pass: its steps come last (End goes there); g \
                 takes a step of gradient descent",
            ));
        }
        Action::AddBackward => {
            let mut after = tutor.lesson.clone();
            after.seed_grad_output(BACKWARD_SEED);
            // A saved lesson keeps its grad_output, which format 2 has.
            after.format = after.format.max(2);
            tutor.change(Change::Lesson {
                before: Box::new(tutor.lesson.clone()),
                after: Box::new(after),
                why: WholeLesson::Backward,
            });
            let first = tutor.steps.iter().position(|step| step.is_backward());
            status = Some(Status::info(format!(
                "Backward pass on: grad_output drawn from N(0, 1) with seed {BACKWARD_SEED}; its \
                 {} steps come last{} (u undoes)",
                tutor.steps.iter().filter(|step| step.is_backward()).count(),
                first.map_or_else(String::new, |index| format!(", from step {}", index + 1)),
            )));
        }
        Action::GradientStep if tutor.lesson.grad_output.is_none() => {
            status = Some(Status::info(
                "g takes a step of gradient descent once the lesson has a backward pass: d \
                 adds one",
            ));
        }
        Action::GradientStep => {
            let eta = tutor.learning_rate;
            let before = tutor.attention.loss().unwrap_or(0.0);
            let mut after = tutor.lesson.clone();
            after.gradient_step(&tutor.attention, eta);
            tutor.change(Change::Lesson {
                before: Box::new(tutor.lesson.clone()),
                after: Box::new(after),
                why: WholeLesson::GradientStep,
            });
            let now = tutor.attention.loss().unwrap_or(0.0);
            let num =
                |value: f64| crate::attention::number::format_number(value, tutor.lesson.decimals);
            let moved = if tutor.lesson.inputs.is_projected() {
                "W_q, W_k, W_v"
            } else {
                "Q, K, V"
            };
            let w_o = if tutor.lesson.w_o.is_some() {
                " and W_o"
            } else {
                ""
            };
            // A step against the gradient lowers L only when η is small enough: L is not
            // convex in W_q and W_k, and a step may overshoot.
            let how = if now > before {
                format!(
                    "; L rose: η = {eta} overshoots here, L falls only for a small enough η (G \
                     sets it)"
                )
            } else if now < 0.0 {
                // Below zero, the learner may wonder where it stops: it does not.
                "; this L has no lowest value: small enough steps keep taking it lower".to_string()
            } else {
                String::new()
            };
            status = Some(Status::info(format!(
                "A step of gradient descent, η = {eta}: {moved}{w_o} moved by −η times their \
                 gradients; L = {} → {}{how} (u undoes)",
                num(before),
                num(now)
            )));
        }
        Action::LargerTiles | Action::SmallerTiles if !tutor.step_is_per_tile() => {
            status = Some(Status::info(
                "b and B change the size of the tiles on the Online softmax step",
            ));
        }
        Action::LargerTiles | Action::SmallerTiles if tutor.practice.is_some() => {
            status = Some(Status::info(
                "The tiles keep their size in practice: x leaves practice, then b or B",
            ));
        }
        Action::LargerTiles => {
            let (size, keys) = (tutor.attention.tile, tutor.attention.key_tokens().len());
            if size >= keys || size >= MAX_TILE {
                status = Some(Status::info(format!(
                    "B = {size}: one tile already holds all {keys} keys, as the ordinary softmax \
                     reads them; B makes the tiles smaller"
                )));
            } else {
                tutor.set_tile_size((size * 2).min(MAX_TILE));
                status = Some(Status::info(tile_size_words(tutor)));
            }
        }
        Action::SmallerTiles => {
            let size = tutor.attention.tile;
            if size <= 1 {
                status = Some(Status::info(
                    "B = 1: one key per tile, the smallest; b makes the tiles larger",
                ));
            } else {
                tutor.set_tile_size(size / 2);
                status = Some(Status::info(tile_size_words(tutor)));
            }
        }
        Action::NextToken | Action::PreviousToken if !tutor.lesson.decode => {
            status = Some(Status::info(
                "( and ) change the tile on the Online softmax step, and the token on the \
                 generation steps of a lesson with decode = true",
            ));
        }
        Action::NextToken | Action::PreviousToken if !tutor.step_is_per_token() => {
            status = Some(Status::info(
                "( and ) change the token on the generation steps (the last steps)",
            ));
        }
        Action::NextToken if tutor.token + 1 >= tutor.attention.seq_len() => {
            status = Some(Status::info(
                "This is the last token: the cache holds the whole sequence; ( goes back",
            ));
        }
        Action::NextToken => tutor.set_token(tutor.token + 1),
        Action::PreviousToken if tutor.token == 0 => {
            status = Some(Status::info("This is the first token: ) goes on"));
        }
        Action::PreviousToken => tutor.set_token(tutor.token - 1),
        Action::Select { matrix, row, col } => {
            tutor.focus_on(matrix);
            tutor.set_cursor(
                matrix,
                Cursor {
                    row,
                    col: col.unwrap_or(0),
                    on_label: col.is_none(),
                },
            );
        }
        Action::ScrollNarration(lines) => {
            tutor.narration_scroll = tutor.narration_scroll.saturating_add_signed(lines).min(200);
        }
        Action::Edit | Action::Submit | Action::Open => begin_edit(app),
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
                before: Box::new(tutor.lesson.clone()),
                after: Box::new(tutor.original.clone()),
                why: WholeLesson::Reset,
            });
            status = Some(Status::info(
                "Back to the lesson's own numbers (u undoes the reset)",
            ));
        }
        Action::Reroll => status = Some(reroll(tutor)),
        Action::Save => {
            ask_where_to_save(app);
            return Vec::new();
        }
        Action::Back => leave(app, Leave::ToPicker),
        Action::Quit => leave(app, Leave::Quit),
        Action::ToggleHelp => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
        }
        Action::TogglePractice => status = Some(practice::toggle(tutor)),
        Action::TogglePracticeRow => status = Some(practice::toggle_row(tutor)),
        Action::Hint => status = Some(practice::hint(tutor)),
        Action::StartAnswer(first) => {
            if let Some(cell) = tutor.selected_cell().filter(|cell| tutor.is_hidden(*cell)) {
                app.overlay = Overlay::Prompt(Prompt {
                    purpose: PromptFor::Answer(cell),
                    input: first.to_string(),
                });
            }
        }
        _ => {}
    }
    if status.is_some() {
        app.status = status;
    }
    Vec::new()
}

/// `e` / Enter: a prompt for an input cell or a token label, an offer to jump for a computed cell.
fn begin_edit(app: &mut App) {
    let Some(tutor) = app.tutor.as_ref() else {
        return;
    };
    let cursor = tutor.cursor(tutor.focus);
    let tokens = Tokens::of_rows(&tutor.lesson, tutor.focus);
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
            && matches!(derivation.rule, crate::attention::Rule::Sinusoid { .. }) =>
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

fn prompt_update(app: &mut App, mut prompt: Prompt, action: Action) -> Vec<Effect> {
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

fn submit(app: &mut App, prompt: Prompt) -> Vec<Effect> {
    let Some(tutor) = app.tutor.as_mut() else {
        app.overlay = Overlay::None;
        return Vec::new();
    };
    let outcome = match &prompt.purpose {
        // Right or wrong, the cursor goes on to the next ?; the verdict stays in the panel.
        PromptFor::Answer(cell) => practice::answer(tutor, *cell, &prompt.input).map(|s| s.text),
        PromptFor::Cell(cell) => edit_cell(tutor, *cell, &prompt.input),
        PromptFor::Label(tokens, row) => edit_label(tutor, *tokens, *row, &prompt.input),
        PromptFor::LearningRate => set_learning_rate(tutor, &prompt.input),
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

/// `w`, or saving on the way out: asks for a file name once the lesson is known to fit in a
/// lesson file. An edited generated matrix is written out number by number (a 1024 × 1024 one is
/// over 20 MB), so it may not: then nothing is written, the learner is told how big it would be,
/// and offered what does fit, the generators of the edited matrices.
fn ask_where_to_save(app: &mut App) {
    let Some(tutor) = app.tutor.as_ref() else {
        return;
    };
    if !app.can_save {
        app.after_save = None;
        let showing = app.tutor.as_mut().map(|tutor| {
            tutor.showing_file = !tutor.showing_file;
            tutor.narration_scroll = 0;
            tutor.showing_file
        });
        app.status = Some(Status::info(if showing == Some(true) {
            format!(
                "{}. Your lesson as a file is shown below to copy (Shift-↑↓ scrolls) · w hides it",
                super::SAVING_OFF
            )
        } else {
            super::SAVING_OFF.to_string()
        }));
        return;
    }
    let lesson = tutor.lesson_to_save();
    let bytes = lesson_toml_bytes(&lesson);
    if bytes <= MAX_FILE_BYTES {
        app.overlay = Overlay::Prompt(Prompt {
            purpose: PromptFor::SavePath,
            input: tutor.default_save_name(),
        });
        return;
    }
    let too_large = format!(
        "as a file this lesson would be {} ({bytes} bytes), and a lesson file is at most 1 MiB \
         ({MAX_FILE_BYTES} bytes)",
        size_text(bytes)
    );
    let (kept, keep) = keep_generators(&lesson);
    if !keep.is_empty() && lesson_toml_bytes(&kept) <= MAX_FILE_BYTES {
        app.status = Some(Status::error(format!(
            "Not saved yet: {too_large}; edited generated numbers are written out one by one"
        )));
        app.overlay = Overlay::Question(Question::TooLarge { keep });
    } else {
        app.after_save = None;
        app.status = Some(Status::error(format!(
            "Not saved: {too_large}. Nothing was written; your edits are still here"
        )));
    }
}

/// `21.7 MB`: a file size as a learner reads it.
fn size_text(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

fn save_effect(tutor: &Tutor, path: PathBuf, replace: bool) -> Effect {
    Effect::Save {
        path,
        contents: lesson_to_toml(&tutor.lesson_to_save()),
        replace,
    }
}

/// The largest η `G` takes: a step far past the gradient's reach teaches nothing.
const MAX_LEARNING_RATE: f64 = 10.0;

/// `G`: η for the session's steps of gradient descent, a number above 0 and at most 10.
fn set_learning_rate(tutor: &mut Tutor, typed: &str) -> Result<String, String> {
    let eta: f64 = typed
        .trim()
        .parse()
        .ok()
        .filter(|eta: &f64| eta.is_finite() && *eta > 0.0 && *eta <= MAX_LEARNING_RATE)
        .ok_or_else(|| {
            format!(
                "η must be a number above 0 and at most {MAX_LEARNING_RATE}, like 0.05, not \"{}\"",
                crate::lesson::text::printable(typed.trim())
            )
        })?;
    tutor.learning_rate = eta;
    Ok(format!(
        "η = {eta}: g now moves each weight by −{eta} times its gradient"
    ))
}

fn edit_cell(tutor: &mut Tutor, cell: Cell, typed: &str) -> Result<String, String> {
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
fn file_place(tutor: &Tutor, cell: Cell) -> String {
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
fn exact(value: f64) -> String {
    if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else {
        format!("{value}")
    }
}

fn edit_label(
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

/// `r`: a generated matrix gets a new seed. The next seed is a fixed scramble of the old one, so
/// re-rolls are reproducible and never land on a neighbouring matrix's seed.
fn reroll(tutor: &mut Tutor) -> Status {
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

/// Largest seed a re-roll gives: a teacher reads seeds aloud and types them, so they stay short.
pub(crate) const MAX_REROLLED_SEED: u64 = 999_999;

/// The next seed, from 1 to `MAX_REROLLED_SEED`: an affine map that permutes that range (its
/// multiplier, the prime 2^19 − 1, shares no factor with 999,999), so distinct seeds stay
/// distinct, and it sends the small seeds lessons use far from each other.
fn scramble(seed: u64) -> u64 {
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

fn question_update(app: &mut App, question: Question, action: Action) -> Vec<Effect> {
    let action_again = action.clone();
    let answer = match action {
        Action::Answer(ch) => Some(ch.to_ascii_lowercase()),
        // Enter accepts the offer to jump; it never replaces a file or discards edits.
        Action::Submit | Action::Open | Action::Edit
            if matches!(question, Question::JumpTo { .. }) =>
        {
            Some('y')
        }
        Action::Submit if matches!(question, Question::Resume { .. }) => Some('y'),
        Action::Cancel => Some('n'),
        Action::Back if !matches!(question, Question::Resume { .. }) => Some('n'),
        // The offer to resume is no barrier: any other key is taken as starting here, and acts.
        _ if matches!(question, Question::Resume { .. }) => Some('?'),
        // A second Ctrl-c means it.
        Action::Quit if matches!(question, Question::LeaveUnsaved(_) | Question::EndClass) => {
            app.overlay = Overlay::None;
            app.quit = true;
            return Vec::new();
        }
        Action::Quit => {
            app.overlay = Overlay::None;
            leave(app, Leave::Quit);
            return Vec::new();
        }
        _ => None,
    };
    let Some(answer) = answer else {
        return Vec::new();
    };
    app.overlay = Overlay::None;
    match (question, answer) {
        // Where saving is off the question does not offer it: the key is taken as "stay".
        (Question::LeaveUnsaved(_), 'w' | 's') if !app.can_save => {}
        (Question::LeaveUnsaved(then), 'w' | 's') => {
            app.after_save = Some(then);
            ask_where_to_save(app);
        }
        (Question::EndClass, 'y') => app.quit = true,
        (Question::FollowAgain, 'y') => super::classroom::follow_again(app),
        (Question::FollowAgain, _) => {
            app.status = Some(Status::info(if app.can_save {
                "Still free, your edits kept; w saves them"
            } else {
                "Still free, your edits kept; w shows them as a file to copy"
            }));
        }
        (Question::EndClass, _) => {}
        (Question::LeaveUnsaved(then), 'd' | 'y') => go(app, then),
        (Question::LeaveUnsaved(_), 'n') => {}
        (Question::Replace { path }, 'y') => {
            if let Some(tutor) = &app.tutor {
                app.status = Some(Status::info(format!(
                    "Saving to {}…",
                    printable_path(&path)
                )));
                return vec![save_effect(tutor, path, true)];
            }
        }
        (Question::TooLarge { keep }, 'k') => {
            if let Some(tutor) = app.tutor.as_mut() {
                let (kept, _) = keep_generators(&tutor.lesson);
                tutor.change(Change::Lesson {
                    before: Box::new(tutor.lesson.clone()),
                    after: Box::new(kept),
                    why: WholeLesson::Generators,
                });
            }
            ask_where_to_save(app);
            app.status = Some(Status::info(format!(
                "Your edits to {} are set back to its generator (u brings them back)",
                keep.iter()
                    .map(|name| name.symbol())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        (Question::TooLarge { .. }, 'n') => {
            app.after_save = None;
            app.status = Some(Status::info("Not saved; nothing was written"));
        }
        (Question::Replace { .. }, 'n') => {
            app.after_save = None;
            app.status = Some(Status::info("Not saved; w saves under another name"));
        }
        (Question::JumpTo { to, .. }, 'y') => {
            if let Some(tutor) = app.tutor.as_mut() {
                jump_to(tutor, to);
            }
        }
        (Question::JumpTo { .. }, 'n') => {}
        (Question::Resume { step_index }, 'y') => {
            if let Some(tutor) = app.tutor.as_mut() {
                tutor.go_to_step(step_index);
            }
        }
        (Question::Resume { .. }, 'n') => {}
        // Any other key starts here, and does what it does.
        (Question::Resume { .. }, _) => return apply(app, action_again),
        // Any other key leaves the question open.
        (question, _) => app.overlay = Overlay::Question(question),
    }
    Vec::new()
}

/// Puts the cursor on `cell`, on this screen when it is shown here, else on the nearest earlier
/// step that shows it.
fn jump_to(tutor: &mut Tutor, cell: Cell) {
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

/// Leaving a lesson (or the app) asks first when there are unsaved edits.
fn leave(app: &mut App, then: Leave) {
    let unsaved = app.tutor.as_ref().is_some_and(Tutor::has_unsaved_edits);
    if unsaved {
        app.overlay = Overlay::Question(Question::LeaveUnsaved(then));
    } else {
        go(app, then);
    }
}

fn go(app: &mut App, then: Leave) {
    match then {
        Leave::ToPicker if app.tutor.is_some() => {
            app.tutor = None;
            if let Some(allowance) = &app.allowance {
                allowance.release();
            }
        }
        Leave::ToPicker | Leave::Quit => match students_present(app) {
            // A presenter's quit ends the class for everyone: a stray `q q` must not.
            Some(students) if students > 0 => {
                app.overlay = Overlay::Question(Question::EndClass);
            }
            _ => app.quit = true,
        },
    }
}

/// How many students follow this app's lead, when it is a presenter's.
fn students_present(app: &App) -> Option<usize> {
    match &app.classroom {
        Some(Classroom::Presenter { audience, .. }) => Some(audience.connected),
        _ => None,
    }
}

fn saved(app: &mut App, action: Action) -> Vec<Effect> {
    let Action::Saved(result) = action else {
        return Vec::new();
    };
    match result {
        Ok(path) => {
            if let Some(tutor) = app.tutor.as_mut() {
                tutor.saved = tutor.lesson.clone();
            }
            let left_out = app.tutor.as_ref().is_some_and(|tutor| {
                tutor.numbers_changed() && tutor.original.narration != Default::default()
            });
            app.status = Some(Status::info(if left_out {
                format!(
                    "Saved to {}, with the default narration: the lesson's own was written for its original numbers",
                    printable_path(&path)
                )
            } else {
                format!("Saved to {}", printable_path(&path))
            }));
            if let Some(then) = app.after_save.take() {
                go(app, then);
            }
        }
        Err(SaveFailure::Exists(path)) => {
            app.overlay = Overlay::Question(Question::Replace { path });
        }
        Err(SaveFailure::NotAllowed(why) | SaveFailure::Other(why)) => {
            app.after_save = None;
            app.status = Some(Status::error(format!(
                "Not saved: {why}. Your edits are still here"
            )));
        }
    }
    Vec::new()
}

/// The seed of the `grad_output` that `d` draws: the same for every learner, so a class
/// compares the same gradients.
const BACKWARD_SEED: u64 = 1;

/// "Tiles of B = 4 keys: 2 tiles (u undoes)", after `b` or `B`.
fn tile_size_words(tutor: &super::Tutor) -> String {
    let count = tutor.attention.tile_count();
    format!(
        "Tiles of B = {} key{}: {count} tile{} (u undoes)",
        tutor.attention.tile,
        if tutor.attention.tile == 1 { "" } else { "s" },
        if count == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::scramble;

    #[test]
    fn rerolled_seeds_are_short_valid_and_new() {
        for seed in [
            0,
            1,
            7,
            999_998,
            999_999,
            1_000_000,
            i64::MAX as u64,
            u64::MAX,
        ] {
            let next = scramble(seed);
            assert!(
                (1..=super::MAX_REROLLED_SEED).contains(&next),
                "{seed} → {next}"
            );
            assert_ne!(next, seed);
        }
        let mut seen = std::collections::HashSet::new();
        assert!(
            (1..=5000).all(|seed| seen.insert(scramble(seed))),
            "distinct seeds stay distinct"
        );
    }

    #[test]
    fn rerolled_seeds_do_not_repeat_their_neighbours() {
        let seeds: Vec<u64> = (0..4).map(scramble).collect();
        assert!(seeds.iter().all(|seed| *seed > 3));
        assert_ne!(scramble(1), scramble(2));
    }
}
