//! FlashAttention-2's online softmax: the output made one tile of keys at a time, from a
//! running maximum m, a running sum l and an unnormalised accumulator.

use nalgebra::DMatrix;

use super::Operation;
use super::kernels::OnlineSoftmax;
use super::{OnlinePart, OnlineRule, Operand, Operands, Rule, Site, Variant};
use crate::matrices::{Cell, MatrixName};

/// The online softmax after tile i of the keys: one part of each query row's state, from the
/// softmax's input (`scores`) and the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Online {
    pub part: OnlinePart,
    pub scores: MatrixName,
    pub values: MatrixName,
}

impl Operation for Online {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.scores, self.values]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        let (s, v) = (symbol(self.scores), symbol(self.values));
        Some(match self.part {
            OnlinePart::Max => format!("max(m_old, {s}[:, tile])"),
            OnlinePart::Rescale => "e^(m_old − m)".to_string(),
            OnlinePart::Sum => format!("rescale·l_old + Σ e^({s}[:, tile] − m)"),
            OnlinePart::Acc => format!("rescale·acc_old + Σ e^({s}[:, tile] − m)·{v}[tile, :]"),
        })
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let (tile, index) = operands
            .token
            .map_or((1, 0), |(cells, index)| (cells.tile(), index));
        let online = OnlineSoftmax {
            scores: operands.get(self.scores),
            values: operands.get(self.values),
            tile,
        };
        online
            .part_at(index, |state| state.part(self.part))
            .unwrap_or_else(|| DMatrix::zeros(0, 0))
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        online_rule(site, self.part, self.scores, self.values).map(Rule::Online)
    }
}

/// The working of `site`'s cell, a cell of the online softmax's `part` after tile
/// `cell.token`.
fn online_rule(
    site: &Site,
    part: OnlinePart,
    scores: MatrixName,
    values: MatrixName,
) -> Option<OnlineRule> {
    let (cells, cell) = (site.cells, site.cell);
    let (head, row, index) = (cell.head, cell.row, cell.token);
    let (first, last) = cells.tile_keys(index)?.into_inner();
    let at = |matrix: MatrixName, row: usize, col: usize, tile: usize| {
        let cell = Cell::new(matrix, row, col).in_head(head).at_tile(tile);
        cells.value(cell).map(|value| Operand { cell, value })
    };
    // The rescale factor is made from m before the tile, not from the factor before.
    let before = index.checked_sub(1).and_then(|previous| match part {
        OnlinePart::Rescale => at(MatrixName::OnlineMax, row, 0, previous),
        OnlinePart::Max | OnlinePart::Sum | OnlinePart::Acc => {
            at(cell.matrix, row, cell.col, previous)
        }
    });
    let max_before = match index.checked_sub(1) {
        Some(previous) => at(MatrixName::OnlineMax, row, 0, previous)?.value,
        None => f64::NEG_INFINITY,
    };
    let own = |matrix: MatrixName| -> Option<Operand> {
        if part.matrix() == matrix {
            None
        } else {
            at(matrix, row, 0, index)
        }
    };
    Some(OnlineRule {
        part,
        tile: index,
        tiles: cells.tile_count(),
        before,
        max_before,
        max: own(MatrixName::OnlineMax),
        rescale: match part {
            OnlinePart::Sum | OnlinePart::Acc => own(MatrixName::OnlineRescale),
            _ => None,
        },
        scores: (first..=last)
            .map(|key| at(scores, row, key, 0))
            .collect::<Option<_>>()?,
        values: if part == OnlinePart::Acc {
            (first..=last)
                .map(|key| at(values, key, cell.col, 0))
                .collect::<Option<_>>()?
        } else {
            Vec::new()
        },
    })
}
