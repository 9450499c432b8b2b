//! Where everything goes on a lesson screen, for a given terminal size. Drawing and mouse clicks
//! both use it, so what is clicked is what is shown.

use std::collections::HashSet;

use ratatui::layout::Rect;

use crate::app::Tutor;
use crate::attention::{Cell, MatrixName, Step};

use super::matrix::Geometry;
use super::working;

/// The smallest terminal the tutor draws in: a classroom projector's 80 × 24.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

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
}

pub fn tutor_layout(tutor: &Tutor, area: Rect) -> TutorLayout {
    let header = Rect::new(area.x, area.y, area.width, 2);
    let status = Rect::new(area.x, area.bottom().saturating_sub(1), area.width, 1);
    let body_height = area.height.saturating_sub(3);
    // Matrices take the rows they need, the working what it needs, the narration the rest;
    // each keeps a few rows however tall the matrices are.
    let names = tutor.panels();
    let tallest = names
        .iter()
        .filter_map(|name| tutor.attention.matrix(*name))
        .map(|values| values.nrows())
        .max()
        .unwrap_or(1);
    let matrices_height = (tallest as u16 + 2).clamp(5, body_height.saturating_sub(9));
    let working_need = match tutor.step() {
        _ if tutor.practice.is_some() => {
            super::practice::lines(tutor, area.width.saturating_sub(2)).len() as u16 + 1
        }
        // The softmax table has a line per key, its header, the sum and a title.
        Step::Softmax => {
            working::SoftmaxPlan::new(tutor, area.width.saturating_sub(2)).height(tutor)
        }
        _ => working::derivation_lines(tutor, area.width.saturating_sub(2)).len() as u16 + 1,
    };
    let working_height =
        working_need.clamp(4, body_height.saturating_sub(matrices_height + 4).max(4));
    let top = area.y + 2;
    let matrices = Rect::new(area.x, top, area.width, matrices_height);
    let working = Rect::new(area.x, top + matrices_height, area.width, working_height);
    let narration = Rect::new(
        area.x,
        working.bottom(),
        area.width,
        status.y.saturating_sub(working.bottom()),
    );

    let selected = tutor.selected_cell();
    let operands: HashSet<Cell> = selected
        .and_then(|cell| tutor.attention.derive(cell))
        .map(|derivation| derivation.operands().into_iter().collect())
        .unwrap_or_default();
    let widths = share_widths(
        &names
            .iter()
            .map(|name| Geometry::natural_width(tutor, *name))
            .collect::<Vec<_>>(),
        names.iter().position(|name| *name == tutor.focus),
        matrices.width,
    );
    let mut x = matrices.x;
    let panels = names
        .iter()
        .zip(widths)
        .map(|(name, width)| {
            let rect = Rect::new(x, matrices.y, width, matrices.height);
            x += width + GAP;
            Geometry::new(tutor, *name, rect, anchor(tutor, *name, &operands))
        })
        .collect();
    TutorLayout {
        header,
        panels,
        working,
        narration,
        status,
        operands,
    }
}

/// The cell a panel's window must show: the cursor in the focused matrix, else the first operand
/// of the selected cell that lies in this matrix, else the matrix's own cursor.
fn anchor(tutor: &Tutor, matrix: MatrixName, operands: &HashSet<Cell>) -> (usize, usize) {
    if matrix != tutor.focus
        && let Some(first) = operands
            .iter()
            .filter(|cell| cell.matrix == matrix)
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
pub fn hit(layout: &TutorLayout, x: u16, y: u16) -> Option<(MatrixName, usize, Option<usize>)> {
    layout.panels.iter().find_map(|geometry| {
        geometry
            .hit(x, y)
            .map(|(row, col)| (geometry.matrix, row, col))
    })
}

#[cfg(test)]
mod tests {
    use super::share_widths;

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
