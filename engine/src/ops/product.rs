//! A matrix product, left · right or left · rightᵀ: the projections (X·W_q), the scores
//! (Q·Kᵀ), the output (weights·V), the output projection (concat·W_o) and the circuits.

use nalgebra::{DMatrix, DMatrixView};

use super::Operation;
use super::kernels::product;
use super::{Operand, Operands, Rule, Site, Variant};
use crate::matrices::{Cell, MatrixName};
use crate::workings;

/// left · right, or left · rightᵀ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Product {
    pub left: MatrixName,
    pub right: MatrixName,
    pub transpose_right: bool,
}

impl Operation for Product {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.left, self.right]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!(
            "{}·{}{}",
            symbol(self.left),
            symbol(self.right),
            if self.transpose_right { "ᵀ" } else { "" }
        ))
    }

    fn slips(&self) -> &'static [Variant] {
        if self.transpose_right {
            &[Variant::Swapped, Variant::WrongGroup]
        } else {
            &[
                Variant::RowNotColumn,
                Variant::WrongGroup,
                Variant::TargetNotSource,
            ]
        }
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let (left, right) = (self.left, self.right);
        let get = |name| operands.get(name);
        match (slip, self.transpose_right) {
            // Another group's keys, values or their weights (the right-hand operand).
            (Some(Variant::WrongGroup), true) => {
                operands.view(left) * operands.other_group(right).transpose()
            }
            (Some(Variant::WrongGroup), false) => operands.view(left) * operands.other_group(right),
            // The target's rows, with the positions added the same way, where the source's go.
            (Some(Variant::TargetNotSource), false) => {
                let Some(target) = operands.projected else {
                    return DMatrix::zeros(0, 0);
                };
                if get(target).ncols() == get(right).nrows() {
                    get(target) * get(right)
                } else {
                    DMatrix::zeros(0, 0)
                }
            }
            // Row not column: x · W row c, which fits only a square W.
            (Some(Variant::RowNotColumn), false) if operands.view(right).is_square() => {
                operands.view(left) * operands.view(right).transpose()
            }
            // Query and key swapped: the transposed scores.
            (Some(Variant::Swapped), true) => (get(left) * get(right).transpose()).transpose(),
            (_, true) => operands.view(left) * operands.view(right).transpose(),
            (_, false) => product(
                operands.view(left),
                operands.view(right),
                operands.every_core,
                operands.in_step_order,
            ),
        }
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let Site { cells, cell, .. } = *site;
        let (row, col, head, token) = (cell.row, cell.col, cell.head, cell.token);
        // Both operands looked up once: a 1024-wide dot product has 2048 of them.
        let (left_cell, right_cell) = (
            Cell::new(self.left, row, 0).in_head(head).at_token(token),
            Cell::new(self.right, 0, col).in_head(head).at_token(token),
        );
        let left_matrix = cells.matrix_at(self.left, left_cell.head, token)?;
        let right_matrix = cells.matrix_at(self.right, right_cell.head, token)?;
        let at = |matrix: &DMatrixView<f64>, cell: Cell, row: usize, col: usize| {
            (row < matrix.nrows() && col < matrix.ncols()).then(|| Operand {
                cell: Cell { row, col, ..cell },
                value: matrix[(row, col)],
            })
        };
        let transpose_right = self.transpose_right;
        Some(Rule::Dot(workings::Dot {
            bias: None,
            transpose_right,
            terms: (0..left_matrix.ncols())
                .map(|m| {
                    let right = if transpose_right {
                        at(&right_matrix, right_cell, col, m)?
                    } else {
                        at(&right_matrix, right_cell, m, col)?
                    };
                    Some((at(&left_matrix, left_cell, row, m)?, right))
                })
                .collect::<Option<_>>()?,
        }))
    }
}
