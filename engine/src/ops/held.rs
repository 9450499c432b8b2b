//! One matrix of a pass as the engine holds it: computed, shared with the lesson, or one head's
//! block of a lesson matrix that is cut out only when something looks at it.

use std::sync::{Arc, OnceLock};

use nalgebra::{DMatrix, DMatrixView};

/// A matrix of the pass. Head h's block of W_q (columns h·d_k … (h+1)·d_k − 1) is read in
/// place by the products that use it; a copy is made only for a screen or a cell that asks
/// for the block itself, so a 16-head lesson does not copy 8 MB of weights to compute.
#[derive(Debug)]
pub struct Held {
    whole: Arc<DMatrix<f64>>,
    /// (block, blocks): which of the whole's equal column blocks this is; `None` for all of it.
    block: Option<(usize, usize)>,
    cut: OnceLock<DMatrix<f64>>,
}

impl Held {
    /// A matrix the engine made.
    pub(crate) fn computed(matrix: DMatrix<f64>) -> Arc<Held> {
        Held::shared(Arc::new(matrix))
    }

    /// A lesson's matrix, all of it, shared with the lesson.
    pub(crate) fn shared(whole: Arc<DMatrix<f64>>) -> Arc<Held> {
        Arc::new(Held {
            whole,
            block: None,
            cut: OnceLock::new(),
        })
    }

    /// Block `block` of `blocks` equal column blocks of a lesson's matrix (head h's columns of
    /// W_q); with one block, the matrix itself.
    pub(crate) fn block(whole: &Arc<DMatrix<f64>>, block: usize, blocks: usize) -> Arc<Held> {
        Arc::new(Held {
            whole: Arc::clone(whole),
            block: (blocks > 1).then_some((block, blocks)),
            cut: OnceLock::new(),
        })
    }

    /// The matrix; a block is copied out of its whole the first time.
    pub(crate) fn matrix(&self) -> &DMatrix<f64> {
        match self.block {
            None => &self.whole,
            Some(_) => self.cut.get_or_init(|| self.view().into_owned()),
        }
    }

    /// Whether a block has been copied out of its whole (`matrix`).
    #[cfg(test)]
    pub(crate) fn copied(&self) -> bool {
        self.cut.get().is_some()
    }

    /// The matrix read in place, for a product.
    pub(crate) fn view(&self) -> DMatrixView<'_, f64> {
        self.top_rows(self.whole.nrows())
    }

    /// Its first `rows` rows read in place (at most all of them): a K or V cache, which is the
    /// first t + 1 rows of the whole pass's keys or values.
    pub(crate) fn top_rows(&self, rows: usize) -> DMatrixView<'_, f64> {
        let (first, width) = match self.block {
            None => (0, self.whole.ncols()),
            Some((block, blocks)) => {
                let width = self.whole.ncols() / blocks;
                (block * width, width)
            }
        };
        self.whole
            .view((0, first), (rows.min(self.whole.nrows()), width))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_its_columns_read_in_place_or_copied() {
        let whole = Arc::new(DMatrix::from_fn(3, 6, |row, col| (10 * row + col) as f64));
        let second = Held::block(&whole, 1, 3);
        let expected = DMatrix::from_fn(3, 2, |row, col| (10 * row + col + 2) as f64);
        assert_eq!(second.view().into_owned(), expected);
        assert_eq!(*second.matrix(), expected);
        assert_eq!(*Held::block(&whole, 0, 1).matrix(), *whole);
        assert_eq!(second.top_rows(2).into_owned(), expected.rows(0, 2));
        assert_eq!(second.top_rows(9).into_owned(), expected);
    }
}
