//! Generation's K/V cache: the new token's row of K or V under the rows kept from the steps
//! before.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operand, Operands, Rule, Site, Variant};
use crate::matrices::{Cell, MatrixName};
use crate::workings;

/// Generation: the cache after step t, the one-row `of` of every step 0 … t stacked, the
/// earlier ones kept from their own steps and the last one new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Append {
    pub of: MatrixName,
}

impl Operation for Append {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("[earlier rows; {}]", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        // Each row as its own step made it: the cache is what generation kept, not a slice of
        // the whole pass.
        let rows: Vec<&DMatrix<f64>> = (0..=operands.position())
            .map(|token| operands.at_token(self.of, operands.head, token))
            .collect();
        let width = rows.last().map_or(0, |row| row.ncols());
        let mut cache = DMatrix::zeros(rows.len(), width);
        for (index, row) in rows.iter().enumerate() {
            if row.shape() == (1, width) {
                cache.row_mut(index).copy_from(&row.row(0));
            }
        }
        cache
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let cell = site.cell;
        // Row j of the cache is the new row of step j.
        let from = Cell::new(self.of, 0, cell.col)
            .in_head(cell.head)
            .at_token(cell.row);
        Some(Rule::Cached(workings::Cached {
            from: Operand {
                cell: from,
                value: site.cells.value(from)?,
            },
            new: cell.row == cell.token,
        }))
    }
}
