//! One lesson being taught: the lesson as edited, its computed attention, the step on screen,
//! the cell cursors, and the edit history.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::DMatrixView;

use crate::attention::{Attention, Cell, Heads, MatrixName, Step};
use crate::lesson::limits::MAX_SOURCE_CHARS;
use crate::lesson::text::{TITLE_ROOM, printable_path};
use crate::lesson::{Lesson, LoadedLesson, Mask};

use super::Tokens;
use super::changed::ChangedCells;
use super::history::{Change, History};
use super::screens;

/// Which way a key moves the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

/// Where the cursor sits in one matrix: a cell, or the token label heading a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cursor {
    pub row: usize,
    pub col: usize,
    /// On the row's token label rather than on a number.
    pub on_label: bool,
}

#[derive(Debug, Clone)]
pub struct Tutor {
    /// Built-in name or file stem, for the header and the default save name.
    pub name: String,
    /// The file the lesson came from; built-in lessons have none.
    pub path: Option<PathBuf>,
    /// The lesson as loaded: `R` goes back to it.
    pub original: Arc<Lesson>,
    /// The lesson as last saved (or loaded): edits since then are unsaved.
    pub saved: Arc<Lesson>,
    /// The three lessons are shared, as `attention` is, between the copies every follower of
    /// a presenter gets, and with the history: an edit copies the lesson it changes first
    /// (`Arc::make_mut`), and only if another holds it.
    pub lesson: Arc<Lesson>,
    /// Shared between copies: every follower of a presenter gets a copy of the presenter's
    /// tutor at each change. Replaced whole on an edit, never changed in place.
    pub attention: Arc<Attention>,
    pub steps: Vec<Step>,
    /// Position in `steps`.
    pub step_index: usize,
    /// The query head on screen, 0-based: every per-head matrix shown, the cell under the
    /// cursor and its working are this head's. Cursors stay per matrix, shared by the heads,
    /// so that `<` `>` compare the same cell across heads.
    pub head: usize,
    /// The token the generation steps are at, 0-based (position t): their matrices are that
    /// step's, and `(` `)` change it. The cursors stay per matrix, as with the heads.
    pub token: usize,
    /// The tile of keys the online softmax step is after, 0-based: its m, l and acc are the
    /// state after that tile, and `(` `)` change it there.
    pub tile: usize,
    /// The matrix the cursor is in.
    pub focus: MatrixName,
    /// Which view each step with several is turned to (Q, K or V on the Projection screen).
    pub choices: BTreeMap<Step, MatrixName>,
    pub cursors: BTreeMap<MatrixName, Cursor>,
    /// Cells whose value changed with the last edit, marked until the next move.
    pub changed: ChangedCells,
    /// A token label changed with the last edit.
    pub changed_label: Option<(Tokens, usize)>,
    pub history: History,
    /// Lines the narration is scrolled by.
    pub narration_scroll: u16,
    /// η, the step size of `g`'s gradient descent (`G` sets it for the session).
    pub learning_rate: f64,
    /// Practice mode, when the learner predicts the step's results.
    pub practice: Option<super::practice::Practice>,
    /// The class's poll, when it asks about this lesson (set after every update from the
    /// app's): its cell hidden until the reveal, its panel in the working's place.
    pub poll: Option<super::poll::PollOnScreen>,
    /// The edited lesson is shown as a lesson file in the narration's place, to copy: `w`
    /// where saving is off (a classroom session).
    pub showing_file: bool,
    /// A copy of a presenter's tutor, shown to a student: the lesson's changes are the
    /// presenter's (or the presenter's and the student's), not the student's alone.
    pub presented: bool,
}

impl Tutor {
    pub(crate) fn new(loaded: &LoadedLesson) -> Tutor {
        let lesson = Arc::new(loaded.lesson.clone());
        let attention = Attention::compute(&lesson);
        let steps = screens::steps(&lesson);
        let mut tutor = Tutor {
            name: loaded.name.clone(),
            path: loaded.path.clone(),
            original: Arc::clone(&lesson),
            saved: Arc::clone(&lesson),
            lesson,
            attention: attention.into(),
            steps,
            step_index: 0,
            head: 0,
            // Generation opens at the lesson's focus token, as `show` does: the one its
            // narration is written about.
            token: loaded.lesson.focus.unwrap_or(0),
            tile: 0,
            focus: MatrixName::Embeddings,
            choices: BTreeMap::new(),
            cursors: BTreeMap::new(),
            changed: ChangedCells::default(),
            changed_label: None,
            history: History::default(),
            narration_scroll: 0,
            learning_rate: crate::lesson::limits::DEFAULT_LEARNING_RATE,
            showing_file: false,
            presented: false,
            practice: None,
            poll: None,
        };
        tutor.go_to_step(0);
        tutor
    }

    pub fn step(&self) -> Step {
        self.steps[self.step_index]
    }

    /// The matrices on screen now.
    pub fn panels(&self) -> Vec<MatrixName> {
        screens::panels(self.step(), &self.attention, self.choice())
    }

    /// The view this step is turned to: the result it shows.
    pub(crate) fn choice(&self) -> MatrixName {
        let step = self.step();
        self.choices
            .get(&step)
            .copied()
            .unwrap_or_else(|| screens::result(step, &self.attention, MatrixName::Output))
    }

    /// The query heads and K/V groups of the lesson.
    pub(crate) fn heads(&self) -> Heads {
        self.attention.heads()
    }

    /// The matrix with this name as the head on screen sees it (its group's keys and values,
    /// the lesson's shared matrices), if the lesson has it.
    pub(crate) fn values(&self, name: MatrixName) -> Option<DMatrixView<'_, f64>> {
        self.attention
            .matrix_at(name, self.head, self.index_of(name))
    }

    /// Which of a matrix kept apart is on screen: the tile's for the online softmax's state,
    /// the token's for a generation step's (0 for every other matrix).
    pub(crate) fn index_of(&self, name: MatrixName) -> usize {
        if name.per_tile() {
            self.tile
        } else {
            self.token
        }
    }

    /// A cell of `matrix` in the head on screen (and at the token on screen, for a generation
    /// step's matrix).
    pub(crate) fn cell(&self, matrix: MatrixName, row: usize, col: usize) -> Cell {
        self.cell_of_head(matrix, self.head, row, col)
    }

    /// A cell of `matrix` in `head`, at the token and tile on screen: All heads draws every
    /// head's weights at once.
    pub(crate) fn cell_of_head(
        &self,
        matrix: MatrixName,
        head: usize,
        row: usize,
        col: usize,
    ) -> Cell {
        Cell::new(matrix, row, col)
            .in_head(head)
            .at_token(self.token)
            .at_tile(self.tile)
    }

    /// Whether the step on screen is the online softmax's, shown after one tile.
    pub fn step_is_per_tile(&self) -> bool {
        self.step().is_at_a_tile(&self.attention.plan)
    }

    /// Shows the online softmax after tile `tile` (clamped to the lesson's tiles).
    pub fn set_tile(&mut self, tile: usize) {
        self.tile = tile.min(self.attention.tile_count().saturating_sub(1));
        self.clear_marks();
        self.forget_feedback();
    }

    /// Makes the online softmax's tiles `size` keys each (an undoable change of the lesson's
    /// `tile`), staying at the tile that holds the first key of the one on screen (as undo and
    /// redo do: see `recompute`).
    pub(crate) fn set_tile_size(&mut self, size: usize) {
        let before = self.lesson.tile;
        if size == before {
            return;
        }
        self.change(super::history::Change::Tile {
            before,
            after: size,
        });
    }

    /// Whether the step on screen is one of generation's, shown at one token.
    pub fn step_is_per_token(&self) -> bool {
        self.step().is_at_a_token(&self.attention.plan)
    }

    /// Shows the generation steps at token `token` (clamped to the lesson's tokens). The
    /// cursor of a cache stays on the new token's row when it was on the old one.
    pub fn set_token(&mut self, token: usize) {
        let token = token.min(self.attention.seq_len().saturating_sub(1));
        for cache in [MatrixName::KCache, MatrixName::VCache] {
            if let Some(cursor) = self.cursors.get_mut(&cache)
                && cursor.row == self.token
            {
                cursor.row = token;
            }
        }
        self.token = token;
        self.clear_marks();
        self.forget_feedback();
    }

    /// The last answer was another token's, tile's or head's cell: its verdict and working
    /// would read as this one's.
    fn forget_feedback(&mut self) {
        if let Some(practice) = &mut self.practice {
            practice.feedback = None;
        }
    }

    /// Shows head `head` (clamped to the lesson's heads); the cursors stay where they are.
    pub fn set_head(&mut self, head: usize) {
        let head = head.min(self.heads().query.saturating_sub(1));
        if head != self.head {
            self.forget_feedback();
        }
        self.head = head;
        // On concat the cursor goes to the same place in the new head's block, so that the
        // head's output beside concat is still the one the cursor's cell is copied from.
        if self.focus == MatrixName::Concat {
            let mut cursor = self.cursor(MatrixName::Concat);
            let width = self
                .values(MatrixName::Concat)
                .map_or(0, |values| values.ncols())
                / self.heads().query.max(1);
            if width > 0 && !cursor.on_label {
                cursor.col = self.head * width + cursor.col % width;
                self.cursors
                    .insert(MatrixName::Concat, self.clamped(MatrixName::Concat, cursor));
            }
        }
        self.clear_marks();
    }

    /// The next (or previous) head, wrapping around.
    pub(crate) fn cycle_head(&mut self, forwards: bool) {
        let count = self.heads().query.max(1);
        let next = if forwards {
            (self.head + 1) % count
        } else {
            (self.head + count - 1) % count
        };
        self.set_head(next);
    }

    /// Whether the step on screen shows one head's matrices: its result is a head's (or a K/V
    /// group's) and the lesson has several heads.
    pub(crate) fn step_is_per_head(&self) -> bool {
        self.heads().query > 1 && screens::is_per_head(self.step(), &self.attention, self.choice())
    }

    pub fn has_unsaved_edits(&self) -> bool {
        !Arc::ptr_eq(&self.lesson, &self.saved) && self.lesson != self.saved
    }

    /// Shows step `index` with the cursor on its result.
    pub fn go_to_step(&mut self, index: usize) {
        self.step_index = index.min(self.steps.len() - 1);
        self.focus = screens::result(self.step(), &self.attention, self.choice());
        self.narration_scroll = 0;
        // Concat's cursor decides the head shown beside it (see `set_cursor`).
        if self.focus == MatrixName::Concat {
            self.set_cursor(MatrixName::Concat, self.cursor(MatrixName::Concat));
        }
        self.clear_marks();
    }

    /// The cursor of a matrix; a matrix not visited yet starts on the lesson's focus row.
    pub fn cursor(&self, matrix: MatrixName) -> Cursor {
        let start = Cursor {
            // The focus is a query token: a source's rows start at its first token; a
            // cache's at the new token's row.
            row: if matches!(matrix, MatrixName::KCache | MatrixName::VCache) {
                self.token
            } else if Tokens::of_rows(&self.lesson, matrix) == Some(Tokens::Target) {
                let focus = self.lesson.focus.unwrap_or(0);
                if matrix.backward() {
                    self.attention.row_with_a_gradient(focus)
                } else {
                    focus
                }
            } else {
                0
            },
            ..Cursor::default()
        };
        let cursor = self.cursors.get(&matrix).copied().unwrap_or(start);
        self.clamped(matrix, cursor)
    }

    fn clamped(&self, matrix: MatrixName, cursor: Cursor) -> Cursor {
        let (rows, cols) = self.values(matrix).map_or((1, 1), |values| {
            (values.nrows().max(1), values.ncols().max(1))
        });
        Cursor {
            row: cursor.row.min(rows - 1),
            col: cursor.col.min(cols - 1),
            on_label: cursor.on_label && screens::rows_are_tokens(matrix),
        }
    }

    /// The cell under the cursor, or `None` when the cursor is on a token label.
    pub fn selected_cell(&self) -> Option<Cell> {
        let cursor = self.cursor(self.focus);
        (!cursor.on_label).then(|| self.cell(self.focus, cursor.row, cursor.col))
    }

    pub fn set_cursor(&mut self, matrix: MatrixName, cursor: Cursor) {
        let cursor = self.clamped(matrix, cursor);
        self.cursors.insert(matrix, cursor);
        // A column of concat is one head's: the head shown follows it, so that the head's
        // output beside concat is the one the cell is copied from.
        let heads = self.heads().query;
        if matrix == MatrixName::Concat && heads > 1 && !cursor.on_label {
            let width = self
                .values(MatrixName::Concat)
                .map_or(0, |values| values.ncols())
                / heads;
            if let Some(block) = cursor.col.checked_div(width) {
                self.head = block.min(heads - 1);
            }
        }
    }

    pub(crate) fn move_cursor(&mut self, direction: Direction) {
        let mut cursor = self.cursor(self.focus);
        match direction {
            Direction::Up => cursor.row = cursor.row.saturating_sub(1),
            Direction::Down => cursor.row += 1,
            Direction::Left if cursor.col == 0 => cursor.on_label = true,
            Direction::Left => cursor.col -= 1,
            Direction::Right if cursor.on_label => cursor.on_label = false,
            Direction::Right => cursor.col += 1,
        }
        self.set_cursor(self.focus, cursor);
        self.clear_marks();
    }

    /// Moves focus to the next (or previous) matrix on screen, wrapping around.
    pub(crate) fn cycle_focus(&mut self, forwards: bool) {
        let order = screens::order(self.step(), &self.attention);
        let here = order.iter().position(|m| *m == self.focus).unwrap_or(0);
        let next = if forwards {
            (here + 1) % order.len()
        } else {
            (here + order.len() - 1) % order.len()
        };
        let (from, to) = (self.focus, order[next]);
        // Matrices whose rows are the same tokens (rescale and l, masked and mask): the cursor
        // stays on the token the learner was reading, rather than going back to where it last
        // was in the other matrix.
        let same_rows =
            from.rows_are_tokens() && to.rows_are_tokens() && from.entry().rows == to.entry().rows;
        let row = self.cursor(from).row;
        self.focus_on(to);
        if same_rows {
            let cursor = self.cursor(to);
            self.set_cursor(to, Cursor { row, ..cursor });
        }
    }

    /// Puts the cursor in `matrix`, turning the screen to the view that shows it (the
    /// Projection screen to its projection).
    pub fn focus_on(&mut self, matrix: MatrixName) {
        let step = self.step();
        let choice = screens::choice_for(step, &self.attention, matrix, self.choice());
        self.choices.insert(step, choice);
        self.focus = matrix;
        self.clear_marks();
    }

    pub(crate) fn clear_marks(&mut self) {
        self.changed.clear();
        self.changed_label = None;
    }

    /// Whether the learner can type a new value into this matrix.
    pub fn is_editable(&self, matrix: MatrixName) -> bool {
        match matrix {
            MatrixName::Mask => self.lesson.mask != Mask::None,
            _ => self.lesson.input(matrix).is_some(),
        }
    }

    /// Makes a change, records it for undo, and recomputes everything downstream.
    pub(crate) fn change(&mut self, change: Change) {
        self.apply_change(&change, true);
        self.history.record(change);
    }

    /// Takes back the last edit, if there is one.
    pub fn undo(&mut self) -> bool {
        self.undo_edit().is_some()
    }

    /// Takes back the last edit; returns what it was, named ("X[The, 1] = 2 → 1").
    pub(crate) fn undo_edit(&mut self) -> Option<String> {
        let change = self.history.undo().cloned()?;
        self.apply_change(&change, false);
        Some(change.describe(&self.attention, false))
    }

    /// Makes the last edit undone again; returns what it was, named.
    pub(crate) fn redo_edit(&mut self) -> Option<String> {
        let change = self.history.redo().cloned()?;
        self.apply_change(&change, true);
        Some(change.describe(&self.attention, true))
    }

    /// Applies a change from the history, forwards (redo) or backwards (undo): η is the
    /// tutor's, every other change the lesson's, recomputed.
    fn apply_change(&mut self, change: &Change, forwards: bool) {
        if let Change::LearningRate { before, after } = change {
            self.learning_rate = if forwards { *after } else { *before };
            return;
        }
        change.apply(&mut self.lesson, forwards);
        self.recompute();
    }

    /// Recomputes attention and marks every cell whose value changed.
    fn recompute(&mut self) {
        let before =
            std::mem::replace(&mut self.attention, Attention::compute(&self.lesson).into());
        self.changed.clear();
        // Tiles of another size hold other keys: nothing of theirs is compared, and the tile on
        // screen becomes the one that holds the first key of the tile that was.
        let tile_changed = before.tile != self.attention.tile;
        let heads = self.heads();
        self.changed.set_heads(heads);
        // A head count changed by a reset leaves nothing to compare head by head.
        if before.heads() == heads {
            for name in MatrixName::ALL {
                if tile_changed && name.per_tile() {
                    continue;
                }
                for slot in 0..heads.count(name.per()) {
                    let head = heads.head_of_slot(name.per(), slot);
                    // A generation step's matrices are compared at the token on screen; the
                    // marks go when the token changes (`set_token`).
                    let index = self.index_of(name);
                    let (Some(old), Some(new)) = (
                        before.matrix_at(name, head, index),
                        self.attention.matrix_at(name, head, index),
                    ) else {
                        continue;
                    };
                    self.changed
                        .mark_differences(Cell::new(name, 0, 0).in_head(head), &old, &new);
                }
            }
        }
        self.head = self.head.min(heads.query.saturating_sub(1));
        // A backward pass added or taken back (`d`, undo, a reset) adds or removes steps: the
        // step on screen stays, or where it is gone the nearest before it.
        let steps = screens::steps(&self.lesson);
        if steps != self.steps {
            let current = self.step();
            self.steps = steps;
            match self.steps.iter().position(|step| *step == current) {
                Some(index) => self.step_index = index,
                None => {
                    let before = self.steps.iter().filter(|step| **step < current).count();
                    self.go_to_step(before.saturating_sub(1));
                }
            }
        }
        if tile_changed {
            self.tile = self.tile * before.tile.max(1) / self.attention.tile.max(1);
        }
        self.tile = self.tile.min(self.attention.tile_count().saturating_sub(1));
        let changed = |tokens: Tokens, old: &[String], new: &[String]| {
            let row = old.iter().zip(new).position(|(old, new)| old != new)?;
            Some((tokens, row))
        };
        self.changed_label = changed(Tokens::Target, &before.tokens, &self.attention.tokens)
            .or_else(|| {
                changed(
                    Tokens::Source,
                    &before.source_tokens,
                    &self.attention.source_tokens,
                )
            });
    }

    /// Whether the learner changed what the lesson's own words describe: its numbers (the
    /// inputs, the dL/d(output) it came with too), mask, scaling, heads or token labels. Its narration, title
    /// and printed figures were written for the original ones.
    pub fn numbers_changed(&self) -> bool {
        // Every field named, so that a new one is a decision here, not a silent "unchanged".
        let Lesson {
            title: _,
            source: _,
            summary: _,
            format: _,
            focus: _,
            decimals: _,
            narration: _,
            expected: _,
            // How the online softmax walks the keys and whether generation is shown change no
            // number a step's words quote.
            tile: _,
            decode: _,
            // The tokenizer's ids name the tokens; no number is computed from them.
            token_ids: _,
            tokens,
            source_tokens,
            inputs,
            source_embeddings,
            scale,
            norm,
            biases,
            mask,
            positions,
            rope_pairing,
            rope_theta,
            heads,
            w_o,
            grad_output,
        } = &*self.lesson;
        let original = &*self.original;
        // A backward pass added (`d`) changes no number the lesson's words quote: a lesson
        // without dL/d(output) has no backward steps for its narration to speak of. Changing the
        // dL/d(output) a lesson came with does.
        let grad_output_changed =
            original.grad_output.is_some() && *grad_output != original.grad_output;
        *tokens != original.tokens
            || *source_tokens != original.source_tokens
            || *inputs != original.inputs
            || *source_embeddings != original.source_embeddings
            || *scale != original.scale
            || *norm != original.norm
            || *biases != original.biases
            || *mask != original.mask
            || *positions != original.positions
            || *rope_pairing != original.rope_pairing
            || rope_theta.to_bits() != original.rope_theta.to_bits()
            || *heads != original.heads
            || *w_o != original.w_o
            || grad_output_changed
    }

    /// The lesson as it would be saved. Once the numbers differ from the original, what was
    /// written for the original ones cannot come along as it is: the printed figures are
    /// dropped (the saved file must pass `check`), and so is the lesson's own narration, which
    /// quotes the original numbers and words (the default narration of each step, which
    /// quotes none, takes its place). The title and source say the lesson was edited, so the
    /// file and every screen that shows it say so too.
    pub fn lesson_to_save(&self) -> Lesson {
        let mut lesson = Lesson::clone(&self.lesson);
        if self.numbers_changed() {
            lesson.expected = Default::default();
            lesson.narration = Default::default();
            let title = format!("{} (edited)", lesson.title);
            if !lesson.title.ends_with(" (edited)") && TITLE_ROOM.check(&title).is_ok() {
                lesson.title = title;
            }
            lesson.source = edited_source(&self.original.source);
        }
        lesson
    }

    /// `NAME-edited.toml`, beside the lesson file when there is one.
    pub(crate) fn default_save_name(&self) -> String {
        let file = format!("{}-edited.toml", self.name);
        match self.path.as_ref().and_then(|path| path.parent()) {
            Some(dir) if !dir.as_os_str().is_empty() => printable_path(&dir.join(file)),
            _ => file,
        }
    }
}

/// The `source` of a lesson saved with edited numbers: where the original came from, and what
/// was left out, within the format's 200 characters. Where the original leaves no room for the
/// whole note, a shorter one keeps the attribution whole; only a source too long for even that
/// is cut.
fn edited_source(original: &str) -> String {
    const NOTE: &str = "numbers edited in attn-tutor; the narration and printed figures written \
                        for the original numbers were left out";
    const SHORT: &str = "numbers edited in attn-tutor";
    if original.is_empty() {
        return format!("{}{}", NOTE[..1].to_uppercase(), &NOTE[1..]);
    }
    let length = original.chars().count();
    for note in [NOTE, SHORT] {
        if length + ": ".len() + note.chars().count() <= MAX_SOURCE_CHARS {
            return format!("{original}: {note}");
        }
    }
    let room = MAX_SOURCE_CHARS - SHORT.chars().count() - "…: ".chars().count();
    let from: String = original.chars().take(room).collect();
    format!("{from}…: {SHORT}")
}
