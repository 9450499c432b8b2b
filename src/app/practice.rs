//! Practice mode in the tutor: the cells a step computes stay hidden ("?") until the learner
//! predicts them, asks for hints up to the answer, or answers wrong and is shown the working.
//! The checking, hints and scores themselves are `crate::practice`; this is the state on screen.

use std::collections::HashMap;

use crate::attention::number::format_number;
use crate::attention::{Cell, MatrixName, Rule, Step};
use crate::practice::{Answer, CellAttempt, HintLevel, LessonScore, StepScore, Verdict};
use crate::workings::WRITTEN_WHOLE_UP_TO;

use super::screens;
use super::tutor::Tutor;
use super::{Status, Tokens};
use crate::lesson::text::printable;

/// The learner's practice in the lesson on screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Practice {
    /// Every cell worked on, with how it went.
    attempts: HashMap<Cell, CellAttempt>,
    /// The last answer and its verdict, shown until the cursor moves on.
    pub feedback: Option<Feedback>,
    /// Steps whose every cell is done, with their scores.
    pub done: LessonScore,
    /// A step just finished, for the caller to keep in the learner's progress.
    pub just_finished: Option<(Step, StepScore)>,
    /// Only the lesson's focus row is hidden (`X`): a 6 × 6 step is 36 cells to predict, and
    /// one row of it teaches the same arithmetic.
    pub focus_row_only: bool,
}

/// How the last cell done was done: the learner's answer and its verdict, or the third hint.
/// Shown (with the cell's working) until the next answer or hint, also once the cursor has
/// moved on to the next `?`.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    pub cell: Cell,
    /// The number the learner typed and its verdict; `None` when the third hint showed it.
    pub said: Option<(f64, Verdict)>,
    /// The answer as typed, made printable, to echo with the decimals typed ("0.050", not
    /// "0.05"); empty when the third hint showed the cell.
    pub typed: String,
}

impl Practice {
    pub fn attempt(&self, cell: Cell) -> Option<&CellAttempt> {
        self.attempts.get(&cell)
    }

    pub(crate) fn attempt_mut(&mut self, cell: Cell) -> &mut CellAttempt {
        self.attempts.entry(cell).or_default()
    }

    /// Whether the cell has been answered right, revealed or shown after a wrong answer.
    pub(crate) fn is_done(&self, cell: Cell) -> bool {
        self.attempts
            .get(&cell)
            .is_some_and(|attempt| attempt.outcome().is_some())
    }
}

/// How many steps of a lesson have results to predict: not the first, which shows given
/// numbers (the embeddings, or Q, K and V given directly), nor a step that shows again what an
/// earlier one computed (All heads shows the weights predicted on Softmax). A learner who
/// finishes every step has them all.
pub fn practice_steps(lesson: &crate::lesson::Lesson) -> usize {
    let steps = screens::steps(lesson);
    let plan = crate::pipeline::Plan::new(lesson.shape());
    steps
        .iter()
        .filter(|step| !screens::computed_in(**step, &plan, &steps).is_empty())
        .count()
}

impl Tutor {
    /// The matrices the learner predicts on this step: the ones it computes. The Projection step
    /// of a lesson with embeddings computes Q, K and V, and is done only with all three. Steps
    /// that only show given numbers (the embeddings, Q/K/V given directly) have none.
    pub fn practice_targets(&self) -> Vec<MatrixName> {
        self.practice_targets_on(self.step())
    }

    /// `practice_targets` for any step of the lesson.
    pub fn practice_targets_on(&self, step: Step) -> Vec<MatrixName> {
        screens::computed_on(step, &self.attention, &self.steps)
    }

    /// The target the learner is at: the matrix under the cursor when it is one, else the first
    /// with a `?` left, else the step's first.
    pub(crate) fn practice_target(&self) -> Option<MatrixName> {
        let targets = self.practice_targets();
        if targets.contains(&self.focus) {
            return Some(self.focus);
        }
        self.hidden_cells()
            .first()
            .map(|cell| cell.matrix)
            .or(targets.first().copied())
    }

    /// The row practice hides alone with `X`: the lesson's focus row, as `show` explains it.
    pub fn focus_row(&self) -> usize {
        self.lesson
            .focus
            .unwrap_or(0)
            .min(self.lesson.tokens.len().saturating_sub(1))
    }

    /// Whether a step has anything to predict.
    pub(crate) fn has_practice_on(&self, step: Step) -> bool {
        !self.practice_targets_on(step).is_empty()
    }

    /// Whether a cell is hidden from the learner, waiting for their prediction.
    pub fn is_hidden(&self, cell: Cell) -> bool {
        self.practice.as_ref().is_some_and(|practice| {
            self.practice_targets().contains(&cell.matrix)
                && self.asks(cell)
                && !practice.is_done(self.practice_cell(cell))
        })
    }

    /// Whether practice asks for this cell of a target of the step (done or not): every cell,
    /// or with `X` only the focus row's.
    fn asks(&self, cell: Cell) -> bool {
        // A cache's earlier rows were the new rows of earlier tokens' steps: only the row this
        // step adds is predicted.
        let cache = matches!(cell.matrix, MatrixName::KCache | MatrixName::VCache);
        (!cache || cell.row == cell.token)
            && (!self.practice.as_ref().is_some_and(|p| p.focus_row_only)
                || cell.row == self.focus_row()
                || self.whole_rows_asked(cell.matrix))
    }

    /// Whether `X` leaves every row of `matrix` to predict.
    fn whole_rows_asked(&self, matrix: MatrixName) -> bool {
        // A generation step is one token's already: its one row, and the cache's new row, are
        // what `X` leaves to predict.
        matrix.entry().rows == crate::pipeline::Axis::NewToken
            || matches!(matrix, MatrixName::KCache | MatrixName::VCache)
            // The focus is a target token, and its row of scores needs every key: in
            // cross-attention the source's rows stay hidden whole.
            || Tokens::of_rows(&self.lesson, matrix) == Some(Tokens::Source)
    }

    /// The cell practice keeps an attempt under: a K/V group's cell is the same whichever head
    /// of the group shows it, so it is predicted once, named by the group's first head.
    pub(crate) fn practice_cell(&self, cell: Cell) -> Cell {
        let heads = self.heads();
        let per = cell.matrix.per();
        Cell {
            head: heads.head_of_slot(per, heads.slot(per, cell.head)),
            ..cell
        }
    }

    /// The cells of the step's targets still hidden, target by target in reading order.
    pub fn hidden_cells(&self) -> Vec<Cell> {
        if self.practice.is_none() {
            return Vec::new();
        }
        self.practice_targets()
            .into_iter()
            .filter_map(|target| Some((target, self.values(target)?.shape())))
            .flat_map(|(target, (rows, cols))| {
                (0..rows).flat_map(move |row| (0..cols).map(move |col| self.cell(target, row, col)))
            })
            .filter(|cell| self.is_hidden(*cell))
            .collect()
    }

    /// The hint level shown for a cell so far.
    pub(crate) fn hint_level(&self, cell: Cell) -> Option<HintLevel> {
        self.practice
            .as_ref()
            .and_then(|practice| practice.attempt(self.practice_cell(cell)))
            .and_then(CellAttempt::hint_level)
    }
}

/// `x`: practice on (the step's results hidden) or off (everything shown again).
pub(crate) fn toggle(tutor: &mut Tutor) -> Status {
    if let Some(practice) = tutor.practice.take() {
        let total = practice.done.total();
        return Status::info(if total.cells() == 0 {
            "Practice off: every number is shown again".to_string()
        } else {
            format!("Practice off. This lesson so far: {total}")
        });
    }
    tutor.practice = Some(Practice::default());
    let targets = tutor.practice_targets();
    // On a later target than the step's first, the cursor goes to the first's first hidden
    // cell: the later one's operands (weights_t's scores) would be hidden behind ? too.
    if let Some(first) = tutor.hidden_cells().first().copied()
        && targets.contains(&tutor.focus)
        && first.matrix != tutor.focus
    {
        go_to_cell(tutor, first);
    }
    match tutor.practice_target() {
        Some(target) => {
            tutor.focus_on(target);
            Status::info(format!(
                "Practice: predict each hidden cell of {}. Type your answer · t hint · x stop",
                symbols(tutor, &targets)
            ))
        }
        None => Status::info("Practice: nothing to predict on this step; n goes on · x stops"),
    }
}

/// `X`: while practising, hide only the focus row of each step, or the whole step again.
pub(crate) fn toggle_row(tutor: &mut Tutor) -> Status {
    let row = tutor.focus_row();
    let label = printable(&tutor.lesson.tokens[row]);
    let Some(practice) = tutor.practice.as_mut() else {
        return Status::error("X chooses what practice hides: x starts practice first");
    };
    practice.focus_row_only = !practice.focus_row_only;
    let only = practice.focus_row_only;
    if let Some(first) = tutor.hidden_cells().first().copied() {
        go_to_cell(tutor, first);
    }
    Status::info(if only {
        format!("Practice: only the row of {label} is hidden on each step · X: the whole step")
    } else {
        "Practice: the whole step is hidden again · X: only the focus row".to_string()
    })
}

/// "Q", "Q and K", "Q, K and V", each as the screen names it: in the head on screen
/// (`head⁽²⁾`, `scores⁽²⁾`) when the lesson has several.
pub fn symbols(tutor: &Tutor, matrices: &[MatrixName]) -> String {
    let names: Vec<String> = matrices
        .iter()
        .map(|matrix| tutor.attention.symbol_in(*matrix, tutor.head))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `t`: the next hint for the hidden cell under the cursor; the third is the answer, and the
/// cursor goes on to the next `?` as after an answer.
pub(crate) fn hint(tutor: &mut Tutor) -> Status {
    if tutor.practice.is_none() {
        return Status::info("t gives a hint for a hidden ? in practice: x starts practice");
    }
    let Some(cell) = tutor.selected_cell().filter(|cell| tutor.is_hidden(*cell)) else {
        // On a cell already done, the hint key goes to the next one to do.
        let hidden = tutor.hidden_cells();
        return match (tutor.selected_cell(), hidden.first()) {
            (Some(cell), Some(_)) if tutor.practice_targets().contains(&cell.matrix) => {
                to_next_hidden(tutor, cell);
                Status::info("On to the next ?: t again for a hint")
            }
            (_, Some(first)) => {
                go_to_cell(tutor, *first);
                Status::info("On to the first ?: t again for a hint")
            }
            (_, None) => Status::info(tutor.practice_count().nothing_here()),
        };
    };
    let level = HintLevel::next(tutor.hint_level(cell));
    let name = tutor.attention.cell_name(cell);
    // The second hint of a long dot product writes its largest terms, not all of them.
    let long_sum = tutor.attention.derive(cell).is_some_and(
        |derivation| matches!(&derivation.rule, Rule::Dot(dot) if dot.terms.len() > WRITTEN_WHOLE_UP_TO),
    );
    let kept_as = tutor.practice_cell(cell);
    let Some(practice) = tutor.practice.as_mut() else {
        return Status::info("t gives a hint for a hidden ? in practice: x starts practice");
    };
    practice.feedback = None;
    let revealed = practice.attempt_mut(kept_as).hint(level).is_some();
    if revealed {
        practice.feedback = Some(Feedback {
            cell,
            said: None,
            typed: String::new(),
        });
        to_next_hidden(tutor, cell);
        step_finished(tutor).unwrap_or_else(|| Status::info(format!("{name}: here is the answer")))
    } else {
        Status::info(format!(
            "Hint {} of 3 for {name}; t again for {}",
            level.number(),
            if level == HintLevel::FirstStep && long_sum {
                "the largest terms and the others' sum"
            } else if level == HintLevel::FirstStep {
                "every term"
            } else {
                "the answer"
            }
        ))
    }
}

/// The learner's answer for a hidden cell: right reveals it; wrong shows the working with
/// their number beside the exact one, naming the slip when it is a common one. Either way the
/// cell is done and the cursor goes on to the next `?`; the verdict and the working stay in the
/// practice panel until the next answer or hint.
pub(crate) fn answer(tutor: &mut Tutor, cell: Cell, typed: &str) -> Result<Status, String> {
    let answer = Answer::parse(typed)?;
    let decimals = tutor.lesson.decimals;
    let verdict = crate::practice::check_answer(&tutor.attention, cell, &answer, decimals)
        .ok_or_else(|| "this cell is not part of the lesson".to_string())?;
    let name = tutor.attention.cell_name(cell);
    let kept_as = tutor.practice_cell(cell);
    let Some(practice) = tutor.practice.as_mut() else {
        return Err("practice is off; x starts it".to_string());
    };
    let attempt = practice.attempt_mut(kept_as);
    attempt.answer(&verdict);
    if !verdict.is_right() {
        // The working is shown, so the cell counts as revealed.
        attempt.reveal();
    }
    // The learner's own text: echoed as typed, decimals and all, and never raw.
    let typed = printable(typed.trim());
    practice.feedback = Some(Feedback {
        cell,
        said: Some((answer.value, verdict)),
        typed: typed.clone(),
    });
    let exact = format_number(verdict.exact(), decimals);
    let said = match verdict {
        Verdict::Right {
            to_decimals: Some(typed_decimals),
            ..
        } => format!("Right to {typed_decimals} decimals: {name} = {exact}"),
        Verdict::Right { .. } => format!("Right: {name} = {exact}"),
        Verdict::Wrong { slip, .. } => {
            let why = slip.map_or(String::new(), |slip| format!(" {}", slip.describe()));
            format!("Not quite: {name} = {exact}, you said {typed}.{why}")
        }
    };
    to_next_hidden(tutor, cell);
    Ok(step_finished(tutor).unwrap_or_else(|| Status::info(said)))
}

/// When the last hidden cell on screen is done: the step's score, every target's cells in
/// every head, token and tile together, kept with the lesson's when none is left anywhere;
/// otherwise the part on screen's score, and where the rest is.
fn step_finished(tutor: &mut Tutor) -> Option<Status> {
    if tutor.practice_targets().is_empty() || !tutor.hidden_cells().is_empty() {
        return None;
    }
    let count = tutor.practice_count();
    if let Some(part) = count.part.as_deref().filter(|_| count.elsewhere_left > 0) {
        return Some(Status::info(format!(
            "{} done: {}. {}",
            capitalised(part),
            count.here,
            count.elsewhere_text()
        )));
    }
    let step = tutor.step();
    let score = count.whole;
    let practice = tutor.practice.as_mut()?;
    practice.done.record(step, score);
    practice.just_finished = Some((step, score));
    Some(Status::info(format!(
        "{} done: {score}. n goes on to the next step",
        step.title()
    )))
}

/// "Head 3" from "head 3".
pub(crate) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// A step's practice as it stands. A step with several heads, tokens or tiles shows one at a
/// time (the part on screen), and is done when every one of them is.
#[derive(Debug, Clone, PartialEq)]
pub struct PracticeCount {
    /// The part on screen, "head 3", "token 5", "tile 1", "head 2 at tile 1"; `None` when the
    /// step has only one.
    pub part: Option<String>,
    /// The cells of the part on screen still to predict, and how its done ones ended.
    pub here_left: usize,
    pub here: StepScore,
    /// Every cell of the step still to predict in the other parts, and which parts those are
    /// ("heads 1, 2 and 4", "tokens 1–4 and 6").
    pub elsewhere_left: usize,
    pub elsewhere: String,
    /// The keys that show another part ("< > change head").
    pub keys: &'static str,
    /// How every done cell of the step ended, every part together.
    pub whole: StepScore,
}

impl PracticeCount {
    /// "Heads 1, 2 and 4: 48 to go · < > change head".
    pub fn elsewhere_text(&self) -> String {
        format!(
            "{}: {} to go · {}",
            capitalised(&self.elsewhere),
            self.elsewhere_left,
            self.keys
        )
    }

    /// What `t` says with no `?` left on screen.
    fn nothing_here(&self) -> String {
        match &self.part {
            Some(part) if self.elsewhere_left > 0 => format!(
                "Nothing left to predict in {part}. {}",
                self.elsewhere_text()
            ),
            _ => "Nothing left to predict on this step: n goes on".to_string(),
        }
    }
}

/// One matrix the step computes, for one head (or K/V group) at one token or tile: the cells
/// the step shows at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Part {
    matrix: MatrixName,
    slot: usize,
    index: usize,
}

impl Tutor {
    /// The step's practice: the part on screen and every other head, token and tile of it.
    pub fn practice_count(&self) -> PracticeCount {
        let targets = self.practice_targets();
        let heads = self.heads();
        let by_head = targets.iter().any(|m| heads.count(m.per()) > 1);
        let by_tile = targets.iter().any(|m| m.per_tile()) && self.attention.tile_count() > 1;
        let by_token = targets.iter().any(|m| m.per_token()) && self.attention.seq_len() > 1;
        let indices = |matrix: MatrixName| {
            if matrix.per_tile() {
                self.attention.tile_count()
            } else if matrix.per_token() {
                self.attention.seq_len()
            } else {
                1
            }
        };
        let part_of = |cell: Cell| Part {
            matrix: cell.matrix,
            slot: heads.slot(cell.matrix.per(), cell.head),
            index: if cell.matrix.kept_apart() {
                cell.token
            } else {
                0
            },
        };
        let on_screen: Vec<Part> = targets
            .iter()
            .map(|&matrix| part_of(self.cell(matrix, 0, 0)))
            .collect();
        // How the done cells ended, part by part.
        let mut done: HashMap<Part, (usize, StepScore)> = HashMap::new();
        if let Some(practice) = &self.practice {
            for (cell, attempt) in &practice.attempts {
                let Some(outcome) = attempt.outcome() else {
                    continue;
                };
                if !targets.contains(&cell.matrix) {
                    continue;
                }
                let entry = done.entry(part_of(*cell)).or_default();
                entry.1.add(outcome);
                if self.asks(*cell) {
                    entry.0 += 1;
                }
            }
        }
        let mut count = PracticeCount {
            part: None,
            here_left: 0,
            here: StepScore::default(),
            elsewhere_left: 0,
            elsewhere: String::new(),
            keys: match (by_head, by_tile, by_token) {
                (true, true, _) => "< > change head, ( ) tile",
                (true, _, true) => "< > change head, ( ) token",
                (true, _, _) => "< > change head",
                (_, true, _) => "( ) change tile",
                _ => "( ) change token",
            },
            whole: StepScore::default(),
        };
        // The heads and the tokens or tiles with cells left off screen.
        let mut heads_left = std::collections::BTreeSet::new();
        let mut indices_left = std::collections::BTreeSet::new();
        for &matrix in &targets {
            let per = matrix.per();
            for slot in 0..heads.count(per) {
                let head = heads.head_of_slot(per, slot);
                for index in 0..indices(matrix) {
                    let part = Part {
                        matrix,
                        slot,
                        index,
                    };
                    let (done_asked, score) = done.get(&part).copied().unwrap_or_default();
                    count.whole = count.whole.plus(&score);
                    let left = self.asked_in(part, head).saturating_sub(done_asked);
                    if on_screen.contains(&part) {
                        count.here = count.here.plus(&score);
                        count.here_left += left;
                    } else if left > 0 {
                        count.elsewhere_left += left;
                        let shown_by: Vec<usize> = match per {
                            crate::pipeline::Per::Lesson => (0..heads.query).collect(),
                            crate::pipeline::Per::QueryHead => vec![slot],
                            crate::pipeline::Per::KvGroup => (0..heads.query)
                                .filter(|head| heads.group_of(*head) == slot)
                                .collect(),
                        };
                        heads_left.extend(shown_by);
                        indices_left.insert(index);
                    }
                }
            }
        }
        let index_word = if by_tile { "tile" } else { "token" };
        let here_index = if by_tile { self.tile } else { self.token };
        count.part = match (by_head, by_tile || by_token) {
            (false, false) => None,
            (true, false) => Some(format!("head {}", self.head + 1)),
            (false, true) => Some(format!("{index_word} {}", here_index + 1)),
            (true, true) => Some(format!(
                "head {} at {index_word} {}",
                self.head + 1,
                here_index + 1
            )),
        };
        count.elsewhere = match (by_head, by_tile || by_token) {
            (true, false) => numbered("head", &heads_left),
            (false, true) => numbered(index_word, &indices_left),
            _ => format!("other heads and {index_word}s"),
        };
        count
    }

    /// How many cells practice asks for in `part`, seen from `head`: its shape, a cache's new
    /// row alone, or with `X` the focus row.
    fn asked_in(&self, part: Part, head: usize) -> usize {
        let Some((rows, cols)) = self.attention.shape_at(part.matrix, head, part.index) else {
            return 0;
        };
        let cache = matches!(part.matrix, MatrixName::KCache | MatrixName::VCache);
        let only_focus = self.practice.as_ref().is_some_and(|p| p.focus_row_only)
            && !self.whole_rows_asked(part.matrix);
        let rows = if cache {
            usize::from(part.index < rows)
        } else if only_focus {
            usize::from(self.focus_row() < rows)
        } else {
            rows
        };
        rows * cols
    }
}

/// "heads 1, 2 and 4", "tokens 1–4 and 6", "tile 2": 1-based, runs of three or more as ranges.
fn numbered(word: &str, indices: &std::collections::BTreeSet<usize>) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &index in indices {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == index => *end = index,
            _ => runs.push((index, index)),
        }
    }
    let pieces: Vec<String> = runs
        .iter()
        .flat_map(|&(start, end)| match end - start {
            0 => vec![format!("{}", start + 1)],
            1 => vec![format!("{}", start + 1), format!("{}", end + 1)],
            _ => vec![format!("{}–{}", start + 1, end + 1)],
        })
        .collect();
    let plural = indices.len() > 1;
    let list = match pieces.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("{word}{} {list}", if plural { "s" } else { "" })
}

/// Moves the cursor to the next hidden cell after `after` in its matrix (in reading order), or
/// else to the first hidden cell of the step, target by target: a matrix is finished before the
/// next, so X = E + P is not asked while a cell of P it needs is still hidden. The Projection
/// screen turns to its projection.
pub(crate) fn to_next_hidden(tutor: &mut Tutor, after: Cell) {
    let hidden = tutor.hidden_cells();
    let next = hidden
        .iter()
        .find(|cell| cell.matrix == after.matrix && (cell.row, cell.col) > (after.row, after.col))
        .or(hidden.first())
        .copied();
    if let Some(next) = next {
        go_to_cell(tutor, next);
    }
}

/// Puts the cursor on `cell` of a matrix on this step's screen.
fn go_to_cell(tutor: &mut Tutor, cell: Cell) {
    if tutor.focus != cell.matrix {
        tutor.focus_on(cell.matrix);
    }
    tutor.set_cursor(
        cell.matrix,
        super::tutor::Cursor {
            row: cell.row,
            col: cell.col,
            on_label: false,
        },
    );
}
