//! A gradient back to a matrix every head reads: Σ over the heads (or K/V groups) of
//! left_h · right_hᵀ (dX_q = Σ_h dQ_h·W_q_hᵀ).

use nalgebra::DMatrix;

use super::Operation;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Σ over the heads (or K/V groups) of left_h · right_hᵀ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadsProduct {
    pub left: MatrixName,
    pub right: MatrixName,
}

impl Operation for HeadsProduct {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.left, self.right]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        // A K/V group's gradient (dK_group) is summed over the groups, g.
        let over = match self.left.per() {
            crate::matrices::Per::KvGroup => "g",
            _ => "h",
        };
        Some(format!(
            "Σ_{over} {}·{}ᵀ",
            symbol(self.left),
            symbol(self.right)
        ))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        // One term per query head, or per K/V group when the gradient is a group's.
        let mut sum: Option<DMatrix<f64>> = None;
        for head in operands.heads.slot_heads(self.left.per()) {
            let (l, r) = (
                operands.of_head(self.left, head),
                operands.of_head(self.right, head),
            );
            if l.ncols() != r.ncols() {
                return DMatrix::zeros(0, 0);
            }
            let term = l * r.transpose();
            match &mut sum {
                Some(sum) if sum.shape() == term.shape() => *sum += term,
                Some(_) => return DMatrix::zeros(0, 0),
                None => sum = Some(term),
            }
        }
        sum.unwrap_or_else(|| DMatrix::zeros(0, 0))
    }

    /// One block of terms per head: left_h[row, :] · right_h[col, :].
    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col) = (site.cell.row, site.cell.col);
        let cells = site.cells;
        Some(Rule::Backward(BackwardRule::HeadsDot(backward::HeadsDot {
            blocks: cells
                .heads()
                .slot_heads(self.left.per())
                .map(|head| {
                    let width = cells.matrix_in(self.left, head)?.ncols();
                    let terms = (0..width)
                        .map(|m| {
                            Some((
                                site.operand_of(self.left, head, row, m)?,
                                site.operand_of(self.right, head, col, m)?,
                            ))
                        })
                        .collect::<Option<_>>()?;
                    Some((head, terms))
                })
                .collect::<Option<_>>()?,
        })))
    }
}
