//! A gradient summed over heads (or K/V groups), each head's block a dot product of rows:
//! dX_q = Σ_h dQ_h·W_q_hᵀ.

use super::super::hint::side_hints;
use super::super::landing::{landing_digits, written};
use super::super::number::format_number;
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use super::{dot, gradient_first, products};
use crate::matrices::{Cell, Per};

/// Σ over heads (or K/V groups) of left_h[row, :] · right_h[col, :]: one block of terms per
/// head (dX_q = Σ_h dQ_h·W_q_hᵀ).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadsDot {
    pub blocks: Vec<(usize, Vec<(Operand, Operand)>)>,
}

impl Working for HeadsDot {
    fn operands(&self) -> Vec<Cell> {
        self.blocks
            .iter()
            .flat_map(|(_, terms)| terms.iter().flat_map(|(a, b)| [a.cell, b.cell]))
            .collect()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        gradient_first(&self.operands())
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (decimals, result) = (worked.decimals, &worked.result);
        let blocks = &self.blocks;
        let row_of = |cell: Cell| {
            format!(
                "{}[{}, :]",
                labels.symbol_in(cell.matrix, cell.head),
                labels.row_label_at(cell.matrix, cell.row, 0)
            )
        };
        let at = |d: usize| blocks.iter().map(|(_, terms)| dot(terms, d)).sum();
        let (d, result) = written(landing_digits(decimals, result, at), decimals, result);
        let several = blocks.len() > 1;
        let named: Vec<String> = blocks
            .iter()
            .filter_map(|(_, terms)| {
                let (left, right) = terms.first()?;
                Some(format!("{} · {}", row_of(left.cell), row_of(right.cell)))
            })
            .collect();
        // One block's products are the side's own terms; several heads' come one bracket per
        // head.
        let grouped: Vec<String> = if several {
            blocks
                .iter()
                .map(|(_, terms)| format!("[{}]", products(terms, d).join(" + ")))
                .collect()
        } else {
            blocks
                .iter()
                .flat_map(|(_, terms)| products(terms, d))
                .collect()
        };
        let note = several.then(|| {
            blocks
                .iter()
                .map(|(head, terms)| {
                    let sum: f64 = terms.iter().map(|(a, b)| a.value * b.value).sum();
                    let grouped = terms
                        .first()
                        .is_some_and(|(a, _)| a.cell.matrix.per() == Per::KvGroup);
                    let (word, number) = if grouped {
                        ("group", labels.heads().group_of(*head) + 1)
                    } else {
                        ("head", head + 1)
                    };
                    format!("{word} {number} gives {}", format_number(sum, decimals))
                })
                .collect::<Vec<_>>()
                .join(", ")
        });
        Words::worked(vec![named, grouped, vec![result]], note)
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        // The backward pass's workings are checked as the engine writes them.
        None
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}
