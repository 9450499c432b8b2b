//! Every head's output side by side, head 1 first: what W_o multiplies.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// Every head's matrix side by side, head 1 first: the concatenation of the heads' outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Concat {
    pub of: MatrixName,
}

impl Operation for Concat {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    // Block by block, one per head; `ui::formula` writes it with the lesson's heads.
    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("[{} | …]", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[Variant::ConcatReversed, Variant::ConcatInterleaved]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let mut blocks = operands.every_head(self.of);
        if slip == Some(Variant::ConcatReversed) {
            blocks.reverse();
        }
        if slip == Some(Variant::ConcatInterleaved) {
            // Column c of head h lands at c·H + h: dimension-major, not head-major.
            let count = blocks.len();
            let rows = blocks.first().map_or(0, |block| block.nrows());
            let width = blocks.first().map_or(0, |block| block.ncols());
            return DMatrix::from_fn(rows, width * count, |row, col| {
                let block = blocks[col % count];
                if row < block.nrows() && col / count < block.ncols() {
                    block[(row, col / count)]
                } else {
                    0.0
                }
            });
        }
        let rows = blocks.first().map_or(0, |block| block.nrows());
        let widths: usize = blocks.iter().map(|block| block.ncols()).sum();
        let mut concat = DMatrix::zeros(rows, widths);
        let mut start = 0;
        for block in blocks {
            if block.nrows() == rows {
                concat.columns_mut(start, block.ncols()).copy_from(block);
            }
            start += block.ncols();
        }
        concat
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col) = (site.cell.row, site.cell.col);
        let width = site
            .cells
            .matrix_at(self.of, 0, site.cell.token)?
            .ncols()
            .max(1);
        Some(Rule::Concat(workings::Concat {
            from: site.operand_of(self.of, col / width, row, col % width)?,
        }))
    }
}
