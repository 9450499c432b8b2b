//! Where everything goes on a lesson screen, for a given terminal size. Drawing and mouse clicks
//! both use it, so what is clicked is what is shown.

use std::collections::HashSet;

use ratatui::layout::Rect;

use crate::app::{Tutor, rows_are_tokens};
use crate::attention::{Cell, MatrixName, Step};

use super::matrix::{Geometry, Shape};
use super::working;

/// Whether the screen's matrices are paged where showing them whole would cut the working
/// short. The steps of W_o show three matrices of every head's width (concat · W_o at 80×24).
/// The online softmax's acc shows four, the scores among them, and its working, the tile's sum
/// added to the rescaled old acc, is what the view is for; the page of the scores shown is the
/// tile's keys.
fn paged_for_working(tutor: &Tutor) -> bool {
    matches!(
        tutor.step(),
        Step::Concat | Step::OutputProjection | Step::Circuits | Step::BackwardOutput
    ) || (tutor.step() == Step::OnlineSoftmax && tutor.focus == MatrixName::OnlineAcc)
}

/// The smallest terminal the tutor draws in: a classroom projector's 80 × 24.
pub(crate) const MIN_WIDTH: u16 = 80;
pub(crate) const MIN_HEIGHT: u16 = 24;

/// Columns between two matrix panels.
const GAP: u16 = 2;

#[derive(Debug, Clone)]
pub struct TutorLayout {
    /// Title and step line, then the formula.
    pub header: Rect,
    pub panels: Vec<Geometry>,
    /// The arithmetic of the selected cell (and the softmax working).
    pub working: Rect,
    pub narration: Rect,
    pub status: Rect,
    /// The cells the selected cell is computed from.
    pub operands: HashSet<Cell>,
    /// A line under the matrices naming what this step has beyond them (K and V on
    /// Projection), if it has a line to say.
    pub note: Option<Rect>,
}

pub fn tutor_layout(tutor: &Tutor, area: Rect) -> TutorLayout {
    let header = Rect::new(area.x, area.y, area.width, 2);
    let status = Rect::new(area.x, area.bottom().saturating_sub(1), area.width, 1);
    let body_height = area.height.saturating_sub(3);
    let top = area.y + 2;
    if tutor.step() == Step::AllHeads && tutor.practice.is_none() {
        // Every head's map in the working's place; the narration below. Four lines are kept
        // for the narration.
        let height = super::all_heads::height(tutor, area.width, body_height.saturating_sub(4));
        let maps = Rect::new(area.x, top, area.width, height);
        return TutorLayout {
            header,
            panels: Vec::new(),
            working: maps,
            narration: Rect::new(
                area.x,
                maps.bottom(),
                area.width,
                status.y.saturating_sub(maps.bottom()),
            ),
            status,
            operands: HashSet::new(),
            note: None,
        };
    }
    let names = tutor.panels();
    let shapes: Vec<Shape> = names.iter().map(|name| Shape::new(tutor, *name)).collect();
    let selected = tutor.selected_cell();
    let operands: HashSet<Cell> = selected
        .and_then(|cell| tutor.attention.derive(cell))
        .map(|derivation| derivation.operands().into_iter().collect())
        .unwrap_or_default();
    // The pages the other panels show: on a row's label, those of the cell the cursor left,
    // so that stepping onto the label (and back) does not page them to their own cursors.
    let anchors: HashSet<Cell> = if selected.is_none() {
        let cursor = tutor.cursor(tutor.focus);
        tutor
            .attention
            .derive(tutor.cell(tutor.focus, cursor.row, cursor.col))
            .map(|derivation| derivation.operands().into_iter().collect())
            .unwrap_or_default()
    } else {
        operands.clone()
    };
    let below_width = area.width.saturating_sub(2);
    let working_below = steady_working_need(tutor, below_width);
    let narration_need =
        super::tutor_screen::narration_lines(tutor, usize::from(below_width)).len() as u16 + 1;

    let note_rows = super::tutor_screen::matrices_note(tutor).map_or(0, |note| {
        super::tutor_screen::note_lines(&note, usize::from(area.width.saturating_sub(2))).len()
            as u16
    });
    let mut note = None;
    // The steps of W_o show three matrices of every head's width: where showing them whole
    // would cut their working short (concat · W_o at 80×24), they are paged instead, so the
    // working, grouped by head, reads whole.
    let paged_for_working = paged_for_working(tutor);
    let (panels, working, matrices_bottom, working_is_below) = match whole_plan(
        tutor,
        &shapes,
        area,
        body_height.saturating_sub(note_rows),
        working_below,
        narration_need,
    )
    .filter(|plan| plan.working_complete || !paged_for_working)
    {
        Some(plan) => {
            let mut y = top;
            let mut panels = Vec::new();
            let mut last_row_end = area.x;
            for group in &plan.groups {
                let height = group_height(&shapes, group);
                let widths = grow_to_captions(&shapes, group, plan.cap, area.width);
                let mut x = area.x;
                for (index, width) in group.iter().zip(widths) {
                    let rect = Rect::new(x, y, width, height);
                    let shape = &shapes[*index];
                    panels.push(Geometry::new(
                        shape,
                        rect,
                        anchor(tutor, shape.matrix, &anchors),
                        plan.cap,
                    ));
                    x += width + GAP;
                }
                last_row_end = x;
                y += height;
            }
            let matrices_end = y;
            if note_rows > 0 {
                note = Some(Rect::new(area.x, y, area.width, note_rows));
                y += note_rows;
            }
            let working = match plan.beside {
                Some(height) => {
                    let last = plan
                        .groups
                        .last()
                        .map_or(0, |group| group_height(&shapes, group));
                    Rect::new(
                        last_row_end,
                        matrices_end - last,
                        area.right().saturating_sub(last_row_end),
                        height.min(last),
                    )
                }
                None => {
                    let room = (top + body_height).saturating_sub(y);
                    // A cell whose working is longer than most's gets it whole, its result in
                    // view, from rows the narration would have had: the narration scrolls, and
                    // keeps its title and two lines.
                    let spare =
                        room.saturating_sub(working_below + narration_need.min(NARRATION_KEPT));
                    let longer = working_need(tutor, below_width)
                        .saturating_sub(working_below)
                        .min(spare);
                    Rect::new(area.x, y, area.width, (working_below + longer).min(room))
                }
            };
            let bottom = if plan.beside.is_some() {
                y
            } else {
                working.bottom()
            };
            (panels, working, bottom, plan.beside.is_none())
        }
        None => {
            let (panels, mut working) = paged(
                tutor,
                &shapes,
                &anchors,
                area,
                body_height.saturating_sub(note_rows),
                // acc's workings grow row by row (a row sums only the keys it may see): paged
                // for them, the matrices give the longest its lines, and stay put as the
                // cursor moves.
                if tutor.focus == MatrixName::OnlineAcc {
                    working_below.max(longest_need(tutor, below_width))
                } else {
                    working_below
                },
            );
            if note_rows > 0 {
                note = Some(Rect::new(area.x, working.y, area.width, note_rows));
                working.y += note_rows;
            }
            let bottom = working.bottom();
            (panels, working, bottom, true)
        }
    };
    // The narration never vanishes: a working below the matrices that would leave it fewer
    // than its title and two lines gives up rows for them (a long working shortens in place,
    // its middle marked "… more lines", and keeps its result).
    // Where whole matrices leave too few rows for both, the narration keeps its title and a
    // line: generation's Masking at 80×24, three 6 × 6 matrices in 16 of 21 rows.
    let mut working = working;
    let mut matrices_bottom = matrices_bottom;
    // Only a working below the matrices gives up rows: beside the last row of matrices, its
    // rows are theirs too, and giving them up drew the narration over the matrices.
    if working_is_below && working.bottom() == matrices_bottom {
        // The working's floor: first its arithmetic whole (all but the key hint), for which
        // the narration gives up its third row: the working is what a learner looks at a cell
        // for, and the narration scrolls. Then its title, a line of numbers and the result
        // (a short working shows the lines that end at its result), with the narration's
        // title and first line: the narration never vanishes.
        let arithmetic = arithmetic_need(tutor, below_width).min(working.height);
        for (kept, floor) in [
            (NARRATION_KEPT, WORKING_KEPT.max(arithmetic)),
            (NARRATION_LEAST, WORKING_LEAST),
        ] {
            let short = narration_need
                .min(kept)
                .saturating_sub(status.y.saturating_sub(matrices_bottom));
            let given = short.min(working.height.saturating_sub(floor));
            working.height -= given;
            matrices_bottom -= given;
        }
    }
    let narration = Rect::new(
        area.x,
        matrices_bottom,
        area.width,
        status.y.saturating_sub(matrices_bottom),
    );
    TutorLayout {
        header,
        panels,
        working,
        narration,
        status,
        operands,
        note,
    }
}

/// Rows the working needs at a width without its key hint ("Press e …", "e goes to …"):
/// its title, its arithmetic and the engine's note on it. Softmax's breakdown of a row claims
/// none: its working sits beside the row's table, and what more it has (the aside on the
/// stable form) gives way to the narration.
fn arithmetic_need(tutor: &Tutor, width: u16) -> u16 {
    if tutor.step() == Step::Softmax && rows_are_tokens(tutor.focus) {
        return 0;
    }
    let need = working_need(tutor, width);
    match tutor.selected_cell() {
        Some(cell) if tutor.practice.is_none() && !tutor.shows_poll_panel() => {
            let hint = working::key_hint_lines(tutor, cell, usize::from(width).max(20)).len();
            need.saturating_sub(hint as u16)
        }
        _ => need,
    }
}

/// Rows the working needs at a width, its title included.
fn working_need(tutor: &Tutor, width: u16) -> u16 {
    let row = tutor.cursor(tutor.focus).row;
    working_need_at(tutor, tutor.selected_cell(), row, width)
}

/// Rows the working needs with `selected` the selected cell on `row`.
fn working_need_at(tutor: &Tutor, selected: Option<Cell>, row: usize, width: u16) -> u16 {
    match tutor.step() {
        _ if tutor.shows_poll_panel() => super::poll::need(tutor, width),
        _ if tutor.practice.is_some() => super::practice::lines(tutor, width).len() as u16 + 1,
        // The softmax table has a line per key, its header, the sum and a title.
        Step::Softmax if rows_are_tokens(tutor.focus) => {
            working::SoftmaxPlan::at(tutor, selected, row, width).height(tutor)
        }
        _ => working::derivation_lines_at(tutor, selected, row, width).len() as u16 + 1,
    }
}

/// The rows the longest working of the focused matrix needs at a width; the cell under the
/// cursor's for a matrix too large to measure every cell of.
fn longest_need(tutor: &Tutor, width: u16) -> u16 {
    let (rows, cols) = tutor
        .values(tutor.focus)
        .map_or((0, 0), |values| (values.nrows(), values.ncols()));
    if rows * cols > STEADY_CELLS {
        return working_need(tutor, width);
    }
    (0..rows)
        .flat_map(|row| (0..cols).map(move |col| (row, col)))
        .map(|(row, col)| {
            working_need_at(tutor, Some(tutor.cell(tutor.focus, row, col)), row, width)
        })
        .max()
        .unwrap_or(0)
}

/// Matrices up to this many cells have the working measured for every cell.
const STEADY_CELLS: usize = 144;

/// ... and only while their workings hold this many operands in all: each is written out and
/// wrapped to be measured (about a microsecond each with its decimals found), so a row of
/// 64-term sums, 16 cells of them, would cost more than the rest of the frame.
const STEADY_OPERANDS: usize = 512;

/// The rows the working needs for most cells of the focused matrix (and its row labels; the
/// larger on a tie), so that the arrangement chosen with it stays put while the cursor moves.
/// A rarer, longer working (a masked cell's note) is shortened in place, its middle marked
/// "… more lines". Larger matrices (or cells with many operands), and practice, measure the
/// cell under the cursor.
fn steady_working_need(tutor: &Tutor, width: u16) -> u16 {
    let (rows, cols) = tutor
        .values(tutor.focus)
        .map_or((0, 0), |values| (values.nrows(), values.ncols()));
    if tutor.practice.is_some()
        || tutor.shows_poll_panel()
        || rows * cols > STEADY_CELLS
        || rows * cols == 0
    {
        return working_need(tutor, width);
    }
    // The cell under the cursor stands for the others: a matrix's cells are made the same way.
    let operands = tutor
        .selected_cell()
        .or_else(|| Some(tutor.cell(tutor.focus, 0, 0)))
        .and_then(|cell| tutor.attention.derive(cell))
        .map_or(1, |derivation| derivation.operands().len().max(1));
    if rows * cols * operands > STEADY_OPERANDS {
        return working_need(tutor, width);
    }
    let screen = SteadyScreen::of(tutor, width);
    if let Some(need) = screen.kept() {
        return need;
    }
    let need = most_cells_need(tutor, rows, cols, width);
    screen.keep(need);
    need
}

/// What a steady working need is measured for: the lesson as computed (its `Attention`, which
/// an edit replaces whole) and where on it the screen is. The cursor is not in it: every cell
/// is measured, wherever the cursor is. Held weakly, the computed lesson's place in memory is
/// not given to another while its need is kept.
struct SteadyScreen {
    attention: std::sync::Weak<crate::attention::Attention>,
    at: SteadyPlace,
}

/// The screen's step and matrix, head, token and tile, and the working's width.
#[derive(PartialEq)]
struct SteadyPlace {
    step: Step,
    focus: MatrixName,
    head: usize,
    token: usize,
    tile: usize,
    width: u16,
}

/// The steady needs measured lately, the newest last, for every tutor in the process: measuring
/// every cell is most of a frame's layout, and a cursor move, or a classmate following the
/// same screen, needs the same figure again.
static STEADY_NEEDS: std::sync::Mutex<Vec<(SteadyScreen, u16)>> = std::sync::Mutex::new(Vec::new());

/// Screens whose steady need is kept: a class's followers at a few terminal widths, and each
/// free student's own screen.
const STEADY_NEEDS_KEPT: usize = 256;

impl SteadyScreen {
    fn of(tutor: &Tutor, width: u16) -> SteadyScreen {
        SteadyScreen {
            attention: std::sync::Arc::downgrade(&tutor.attention),
            at: SteadyPlace {
                step: tutor.step(),
                focus: tutor.focus,
                head: tutor.head,
                token: tutor.token,
                tile: tutor.tile,
                width,
            },
        }
    }

    fn is(&self, other: &SteadyScreen) -> bool {
        self.attention.ptr_eq(&other.attention) && self.at == other.at
    }

    fn kept(&self) -> Option<u16> {
        let kept = STEADY_NEEDS.lock().ok()?;
        kept.iter()
            .rev()
            .find(|(screen, _)| screen.is(self))
            .map(|(_, need)| *need)
    }

    fn keep(self, need: u16) {
        if let Ok(mut kept) = STEADY_NEEDS.lock() {
            // Screens of lessons no longer computed anywhere go first, then the oldest.
            kept.retain(|(screen, _)| screen.attention.strong_count() > 0);
            if kept.len() >= STEADY_NEEDS_KEPT {
                kept.remove(0);
            }
            kept.push((self, need));
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Matrices measured cell by cell on this thread, for the tests to count.
    static SWEEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many matrices this thread has measured cell by cell.
#[cfg(test)]
pub(crate) fn sweeps() -> usize {
    SWEEPS.with(std::cell::Cell::get)
}

/// The steady need of `tutor`'s focused matrix of `rows` × `cols`, measured at every cell.
fn most_cells_need(tutor: &Tutor, rows: usize, cols: usize, width: u16) -> u16 {
    #[cfg(test)]
    SWEEPS.with(|sweeps| sweeps.set(sweeps.get() + 1));
    // A row's token label is measured too, except beside a single column (m, l, the rescale
    // factor), where the labels would be as many as the cells and their two lines would win.
    // Its need may be taken (one line more than most), but the commonest need is the cells':
    // where each row's working has its own length (acc on a later tile of the online softmax,
    // a row summing the keys it may see) the labels' short note was the commonest, and put the
    // working beside the matrices, too narrow for any cell's. On Softmax the working is the
    // row's table, for a label as for its cells, and the labels count with the cells as before
    // (counted apart, a head of generated-gqa stacked its matrices and cut the table to a key).
    let labels = rows_are_tokens(tutor.focus) && cols > 1;
    let labels_apart = !(tutor.step() == Step::Softmax && rows_are_tokens(tutor.focus));
    let mut counts: std::collections::BTreeMap<u16, usize> = std::collections::BTreeMap::new();
    let mut cell_counts: std::collections::BTreeMap<u16, usize> = std::collections::BTreeMap::new();
    for row in 0..rows {
        for col in 0..cols {
            let need = working_need_at(tutor, Some(tutor.cell(tutor.focus, row, col)), row, width);
            *counts.entry(need).or_default() += 1;
            *cell_counts.entry(need).or_default() += 1;
        }
        if labels {
            let need = working_need_at(tutor, None, row, width);
            *counts.entry(need).or_default() += 1;
            if !labels_apart {
                *cell_counts.entry(need).or_default() += 1;
            }
        }
    }
    let most = cell_counts
        .iter()
        .max_by_key(|(need, count)| (**count, **need))
        .map_or(0, |(need, _)| *need);
    // A working one line longer than most (a sum that wraps once more) still gets its room:
    // shortening it would hide its result. Only a much longer one is shortened.
    counts
        .keys()
        .copied()
        .filter(|need| *need <= most + 1)
        .max()
        .unwrap_or(most)
}

/// The rows the narration keeps when a long working takes the rest: its title (which says
/// which lines show, and that Shift-↑↓ scrolls) and two lines.
const NARRATION_KEPT: u16 = 3;

/// The rows a working below the matrices keeps when it gives rows to the narration: its title,
/// its first line, the elision mark and its result.
const WORKING_KEPT: u16 = 4;

/// The fewest rows the narration is left: its title (which says there is more, and how to
/// scroll to it) and a line.
const NARRATION_LEAST: u16 = 2;

/// The fewest rows a working below the matrices is left: its title, a line and its result.
const WORKING_LEAST: u16 = 3;

/// The fewest decimals a matrix is shown with to make it fit whole.
const FEWEST_DECIMALS: usize = 2;

/// The narrowest working put beside the matrices rather than below them.
const WORKING_BESIDE_MIN: u16 = 34;

/// An arrangement that shows every matrix whole: panels in rows (`groups`, left to right and
/// top to bottom, in the step's order), at most `cap` decimals, and the working beside the last
/// row (`Some(its height)`) or below the matrices.
struct WholePlan {
    groups: Vec<Vec<usize>>,
    cap: usize,
    beside: Option<u16>,
    /// Whether the working gets every line it needs.
    working_complete: bool,
}

/// How good a whole arrangement is, best highest: the working complete, the narration's rows
/// (up to what it needs), the decimals shown, the fewest rows of matrices.
type Score = (bool, u16, usize, std::cmp::Reverse<usize>);

fn group_width(shapes: &[Shape], group: &[usize], cap: usize) -> u16 {
    group
        .iter()
        .map(|index| shapes[*index].whole_width(cap))
        .sum::<u16>()
        + GAP * (group.len() as u16).saturating_sub(1)
}

fn group_height(shapes: &[Shape], group: &[usize]) -> u16 {
    group
        .iter()
        .map(|index| shapes[*index].whole_height())
        .max()
        .unwrap_or(0)
}

/// Every way to break `count` panels into consecutive rows, one row first.
fn arrangements(count: usize) -> Vec<Vec<Vec<usize>>> {
    if count == 0 {
        return Vec::new();
    }
    let mut all: Vec<Vec<Vec<usize>>> = (0..1u32 << (count - 1))
        .map(|breaks| {
            let mut groups = vec![vec![0]];
            for index in 1..count {
                if breaks & (1 << (index - 1)) != 0 {
                    groups.push(Vec::new());
                }
                groups.last_mut().expect("a group").push(index);
            }
            groups
        })
        .collect();
    all.sort_by_key(Vec::len);
    all
}

/// Lays out by what fits: of the arrangements (side by side, or stacked in rows) and number
/// formats (the lesson's decimals down to two) that show every matrix whole and leave the
/// narration and the working their fewest rows, the one that leaves the working all its lines,
/// then the narration its lines, then shows the most decimals, then uses the fewest rows.
/// `None` when no arrangement does: the matrices are paged.
fn whole_plan(
    tutor: &Tutor,
    shapes: &[Shape],
    area: Rect,
    body_height: u16,
    working_below: u16,
    narration_need: u16,
) -> Option<WholePlan> {
    // A step has at most three panels; more would make too many arrangements to try.
    if shapes.is_empty() || shapes.len() > 4 {
        return None;
    }
    let most = tutor.lesson.decimals;
    let fewest = FEWEST_DECIMALS.min(most);
    let mut best: Option<(Score, WholePlan)> = None;
    // The working's need at each width tried beside a row: measured once per width.
    let mut needs: Vec<(u16, u16)> = Vec::new();
    let mut need_at = |width: u16| match needs.iter().find(|(known, _)| *known == width) {
        Some((_, need)) => *need,
        None => {
            let need = steady_working_need(tutor, width);
            needs.push((width, need));
            need
        }
    };
    for groups in arrangements(shapes.len()) {
        let height: u16 = groups.iter().map(|group| group_height(shapes, group)).sum();
        if height > body_height {
            continue;
        }
        let rest = body_height - height;
        for cap in (fewest..=most).rev() {
            let widths: Vec<u16> = groups
                .iter()
                .map(|group| group_width(shapes, group, cap))
                .collect();
            if widths.iter().any(|width| *width > area.width) {
                continue;
            }
            // The working beside the last row, where there is room for all of it.
            let last = groups.last().expect("a row");
            let last_height = group_height(shapes, last);
            // The last row as drawn, its captions grown into the room there is.
            let last_width = grow_to_captions(shapes, last, cap, area.width)
                .iter()
                .sum::<u16>()
                + GAP * last.len() as u16;
            let spare = area.width.saturating_sub(last_width);
            let beside = (spare >= WORKING_BESIDE_MIN)
                .then(|| need_at(spare.saturating_sub(2)))
                .filter(|need| *need <= last_height);
            let (working_complete, narration) = match beside {
                Some(_) => (true, rest),
                None => (rest >= working_below, rest.saturating_sub(working_below)),
            };
            // Whole matrices that leave no room for the narration's title and a line (and, below
            // them, the working's title, a line and its result) are paged instead: a 7-token
            // head's scores and scaled scores stacked at 80×24 left the narration no row.
            let least = narration_need.min(NARRATION_LEAST)
                + match beside {
                    Some(_) => 0,
                    None => working_below.min(WORKING_LEAST),
                };
            if rest < least {
                continue;
            }
            let score = (
                working_complete,
                narration.min(narration_need),
                cap,
                std::cmp::Reverse(groups.len()),
            );
            if best.as_ref().is_none_or(|(known, _)| score > *known) {
                best = Some((
                    score,
                    WholePlan {
                        groups: groups.clone(),
                        cap,
                        beside,
                        working_complete,
                    },
                ));
            }
        }
    }
    best.map(|(_, plan)| plan)
}

/// The widths of a row's panels: each its whole width, then what is left shared out so that
/// captions show whole, the shortest need first.
fn grow_to_captions(shapes: &[Shape], group: &[usize], cap: usize, width: u16) -> Vec<u16> {
    let mut widths: Vec<u16> = group
        .iter()
        .map(|index| shapes[*index].whole_width(cap))
        .collect();
    let mut spare = width.saturating_sub(group_width(shapes, group, cap));
    let mut order: Vec<usize> = (0..group.len()).collect();
    order.sort_by_key(|position| {
        shapes[group[*position]].captioned_width(cap)
            - widths[*position].min(shapes[group[*position]].captioned_width(cap))
    });
    // A caption shows whole, as its formula, or as its symbol: room that does not reach the
    // next of those shows nothing more ("▸ m" beside blank columns while the next panel cut its
    // labels), so it is kept for labels.
    for position in &order {
        let shape = &shapes[group[*position]];
        for target in [shape.captioned_width(cap), shape.formula_width(cap)] {
            let want = target.saturating_sub(widths[*position]);
            if want <= spare {
                widths[*position] += want;
                spare -= want;
                break;
            }
        }
    }
    // Then, with room still, column labels whole ("sleeping" over one-digit numbers).
    for position in order {
        let want = shapes[group[position]]
            .labelled_width(cap)
            .saturating_sub(widths[position]);
        let given = want.min(spare);
        widths[position] += given;
        spare -= given;
    }
    widths
}

/// The layout when some matrix cannot show whole: side by side, each panel showing the page
/// of rows and columns around the cell that matters, with the lesson's decimals.
fn paged(
    tutor: &Tutor,
    shapes: &[Shape],
    operands: &HashSet<Cell>,
    area: Rect,
    body_height: u16,
    working_need: u16,
) -> (Vec<Geometry>, Rect) {
    let cap = tutor.lesson.decimals;
    let tallest = shapes
        .iter()
        .map(|shape| shape.total_rows)
        .max()
        .unwrap_or(1);
    let mut matrices_height = (tallest as u16 + 2).clamp(5, body_height.saturating_sub(9));
    // The matrices are paged anyway: on the Softmax step the breakdown of the row gets room for
    // six keys (and its header and sum) before the matrices grow past six rows.
    if tutor.step() == Step::Softmax {
        let table = working_need.min(9);
        matrices_height = matrices_height.min(body_height.saturating_sub(table + 4).max(8));
    }
    // Paged for their working (see `tutor_layout`): the matrices give it up to thirteen lines,
    // so that concat · W_o of four heads shows each head's part and what each contributes.
    if paged_for_working(tutor) {
        let working = working_need.min(13);
        matrices_height = matrices_height.min(body_height.saturating_sub(working + 3).max(6));
    }
    // The narration keeps four rows, or its title and two lines on the steps paged for their
    // working.
    let narration_rows = if paged_for_working(tutor) {
        NARRATION_KEPT
    } else {
        4
    };
    let working_height = working_need.clamp(
        4,
        body_height
            .saturating_sub(matrices_height + narration_rows)
            .max(4),
    );
    let top = area.y + 2;
    let matrices = Rect::new(area.x, top, area.width, matrices_height);
    let working = Rect::new(area.x, top + matrices_height, area.width, working_height);
    let widths = share_widths(
        &shapes
            .iter()
            .map(|shape| shape.captioned_width(cap))
            .collect::<Vec<_>>(),
        shapes.iter().position(|shape| shape.matrix == tutor.focus),
        matrices.width,
    );
    let mut x = matrices.x;
    let panels = shapes
        .iter()
        .zip(widths)
        .map(|(shape, width)| {
            let rect = Rect::new(x, matrices.y, width, matrices.height);
            x += width + GAP;
            Geometry::new(shape, rect, anchor(tutor, shape.matrix, operands), cap)
        })
        .collect();
    (panels, working)
}

/// The cell a panel's window must show: the cursor in the focused matrix, else the first operand
/// of the selected cell that lies in this matrix, else the matrix's own cursor.
fn anchor(tutor: &Tutor, matrix: MatrixName, operands: &HashSet<Cell>) -> (usize, usize) {
    if matrix != tutor.focus
        && let Some(first) = operands
            .iter()
            .filter(|cell| cell.matrix == matrix && cell.head == tutor.cell(matrix, 0, 0).head)
            .min_by_key(|cell| (cell.row, cell.col))
    {
        return (first.row, first.col);
    }
    let cursor = tutor.cursor(matrix);
    (cursor.row, cursor.col)
}

/// The narrowest a panel that is not focused is made: its labels and a couple of columns.
const MIN_PANEL: u16 = 20;

/// Splits the width between panels: each gets what it needs when all fit. Otherwise the focused
/// panel comes first (leaving the others their minimum), then the narrow ones get theirs and the
/// wide ones share the rest equally.
fn share_widths(natural: &[u16], focused: Option<usize>, width: u16) -> Vec<u16> {
    let count = natural.len() as u16;
    if count == 0 {
        return Vec::new();
    }
    let mut remaining = width.saturating_sub(GAP * (count - 1));
    let mut widths = vec![0; natural.len()];
    let mut left = count;
    if let Some(focused) = focused {
        let others: u16 = (0..natural.len())
            .filter(|index| *index != focused)
            .map(|index| natural[index].min(MIN_PANEL))
            .sum();
        widths[focused] = natural[focused].min(remaining.saturating_sub(others));
        remaining -= widths[focused];
        left -= 1;
    }
    let mut order: Vec<usize> = (0..natural.len())
        .filter(|index| Some(*index) != focused)
        .collect();
    order.sort_by_key(|index| natural[*index]);
    for (placed, index) in order.into_iter().enumerate() {
        let share = remaining / (left - placed as u16);
        widths[index] = natural[index].min(share);
        remaining -= widths[index];
    }
    widths
}

/// The matrix cell (or row label) under a click, if any.
pub(crate) fn hit(
    layout: &TutorLayout,
    x: u16,
    y: u16,
) -> Option<(MatrixName, usize, Option<usize>)> {
    layout.panels.iter().find_map(|geometry| {
        geometry
            .hit(x, y)
            .map(|(row, col)| (geometry.matrix, row, col))
    })
}

#[cfg(test)]
mod tests {
    use super::{arrangements, most_cells_need, share_widths, steady_working_need, sweeps};
    use crate::app::{Action, App, Change, Direction, Tutor, update};
    use crate::attention::{MatrixName, Step};

    /// The first built-in lesson, opened on `step`.
    fn tutor_on(step: Step) -> Tutor {
        let mut app = App::new(App::builtin_entries(), None);
        update(&mut app, Action::Submit);
        let mut tutor = app.tutor().cloned().unwrap();
        tutor.go_to_step(tutor.steps.iter().position(|at| *at == step).unwrap());
        tutor
    }

    /// What measuring every cell of the focused matrix gives, with nothing kept.
    fn measured(tutor: &Tutor, width: u16) -> u16 {
        let values = tutor.values(tutor.focus).unwrap();
        most_cells_need(tutor, values.nrows(), values.ncols(), width)
    }

    #[test]
    fn every_cell_is_measured_once_per_screen_not_on_every_cursor_move_nor_for_every_copy() {
        let mut tutor = tutor_on(Step::Scores);
        let before = sweeps();
        let need = steady_working_need(&tutor, 78);
        assert_eq!(
            sweeps(),
            before + 1,
            "the first layout of the screen measures it"
        );
        let mut app = App::new(App::builtin_entries(), None);
        for direction in [
            Direction::Down,
            Direction::Right,
            Direction::Down,
            Direction::Left,
        ] {
            app.screen = crate::app::Screen::Tutor(Box::new(tutor));
            update(&mut app, Action::Move(direction));
            tutor = app.tutor().cloned().unwrap();
            assert_eq!(steady_working_need(&tutor, 78), need);
            // A follower's copy of the presenter's tutor shares the measure too.
            assert_eq!(steady_working_need(&tutor.clone(), 78), need);
        }
        assert_eq!(
            sweeps(),
            before + 1,
            "cursor moves and copies measure nothing again"
        );
        steady_working_need(&tutor, 60);
        assert_eq!(sweeps(), before + 2, "another width is measured on its own");
        assert_eq!(need, measured(&tutor, 78));
    }

    #[test]
    fn an_edit_measures_the_screen_again_with_its_new_numbers() {
        let mut tutor = tutor_on(Step::Scores);
        let width = 78;
        let need = steady_working_need(&tutor, width);
        let before = sweeps();
        // Longer numbers in X make every score's working wrap more.
        let x = tutor
            .lesson
            .input(MatrixName::Embeddings)
            .unwrap()
            .values
            .clone();
        for row in 0..x.nrows() {
            for col in 0..x.ncols() {
                tutor.change(Change::Cell {
                    matrix: MatrixName::Embeddings,
                    row,
                    col,
                    before: x[(row, col)],
                    after: -123456.789,
                });
            }
        }
        let edited = steady_working_need(&tutor, width);
        assert_eq!(sweeps(), before + 1, "the edited lesson is measured again");
        assert_eq!(edited, measured(&tutor, width));
        assert_ne!(
            edited, need,
            "the edit was meant to change the working's height"
        );
    }

    #[test]
    fn panels_can_go_in_one_row_or_be_stacked_in_order() {
        assert_eq!(
            arrangements(3),
            vec![
                vec![vec![0, 1, 2]],
                vec![vec![0], vec![1, 2]],
                vec![vec![0, 1], vec![2]],
                vec![vec![0], vec![1], vec![2]],
            ]
        );
    }

    #[test]
    fn panels_that_fit_keep_their_width_and_wide_ones_share_the_rest() {
        assert_eq!(share_widths(&[20, 30], Some(1), 80), vec![20, 30]);
        assert_eq!(share_widths(&[10, 100, 100], None, 80), vec![10, 33, 33]);
    }

    #[test]
    fn the_focused_panel_gets_its_room_before_the_others() {
        assert_eq!(share_widths(&[52, 30, 52], Some(2), 80), vec![20, 20, 36]);
        assert_eq!(share_widths(&[26, 22, 28], Some(2), 80), vec![26, 22, 28]);
    }
}
