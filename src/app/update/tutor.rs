//! The tutor's keys: steps, cursor, heads, tiles and tokens, and which part of the update
//! each of the others goes to.

use super::backward::backward_update;
use super::edit::{NUMBERS_STAY_PUT, begin_edit, changes_numbers, history_update};
use super::leave::leave;
use super::save::ask_where_to_save;
use crate::app::action::{Action, Effect};
use crate::app::practice;
use crate::app::tutor::Direction;
use crate::app::tutor::{Cursor, Tutor};
use crate::app::{App, Leave, Overlay, Prompt, PromptFor, Status};
use crate::lesson::limits::MAX_TILE;

pub(super) fn tutor_update(app: &mut App, action: Action) -> Vec<Effect> {
    let frozen = crate::app::poll::freezes_numbers(app)
        && (changes_numbers(&action)
            || matches!(
                action,
                Action::AddBackward
                    | Action::GradientStep
                    | Action::LargerTiles
                    | Action::SmallerTiles
            ));
    if frozen {
        app.status = Some(Status::info(crate::app::poll::NUMBERS_FROZEN));
        return Vec::new();
    }
    let Some(tutor) = app.screen.tutor_mut() else {
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
            status = Some(Status::info(if app.training.is_some() {
                "This is the last step: p goes back, q returns to the training run"
            } else {
                "This is the last step: p goes back, q returns to the lessons"
            }));
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
        Action::NextToken | Action::PreviousToken | Action::LargerTiles | Action::SmallerTiles => {
            status = tiles_and_tokens(tutor, action)
        }
        Action::AddBackward | Action::GradientStep => status = backward_update(tutor, action),
        Action::Undo | Action::Redo | Action::Reset | Action::Reroll => {
            status = history_update(tutor, action);
        }
        Action::SetLearningRate if tutor.lesson.grad_output.is_none() => {
            status = Some(Status::info(
                "G sets η, the size of g's gradient step, once the lesson has a backward pass: \
                 d adds one",
            ));
        }
        Action::SetLearningRate => {
            app.overlay = Overlay::Prompt(Prompt {
                purpose: PromptFor::LearningRate,
                input: String::new(),
            });
            return Vec::new();
        }
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
        Action::TogglePractice => {
            let mut said = practice::toggle(tutor);
            // The training run's app keeps progress in memory only: a head opened from the
            // run is a lesson made for the moment, which no list offers again.
            if app.training.is_some() {
                said.text
                    .push_str(". Not kept in your progress: this lesson is made from the run");
            }
            status = Some(said);
        }
        Action::TogglePracticeRow => status = Some(practice::toggle_row(tutor)),
        // A hint writes a working, which may give the polled number away (its third is the
        // answer): hints wait for the reveal, as the working does.
        Action::Hint
            if tutor
                .poll
                .as_ref()
                .is_some_and(|shown| shown.poll.is_open()) =>
        {
            status = Some(Status::info(
                "Hints wait for the reveal: the class poll hides this step's working until then",
            ));
        }
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

/// ( ) walk the tiles on the Online softmax step and the tokens on the generation steps; b and
/// B change the size of the tiles.
pub(super) fn tiles_and_tokens(tutor: &mut Tutor, action: Action) -> Option<Status> {
    let mut status = None;
    match action {
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
        _ => {}
    }
    status
}

/// "Tiles of B = 4 keys: 2 tiles (u undoes)", after `b` or `B`.
pub(super) fn tile_size_words(tutor: &crate::app::Tutor) -> String {
    let count = tutor.attention.tile_count();
    format!(
        "Tiles of B = {} key{}: {count} tile{} (u undoes)",
        tutor.attention.tile,
        if tutor.attention.tile == 1 { "" } else { "s" },
        if count == 1 { "" } else { "s" }
    )
}
