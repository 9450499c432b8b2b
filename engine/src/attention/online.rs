//! A head's online softmax as the engine offers it: the tiles its keys make, and the check of
//! acc / l after the last tile against the head's output (the softmax itself is
//! `crate::ops::OnlineSoftmax`).

use super::agreement::{Agreement, Comparison};
use super::{Attention, MatrixName};
use crate::ops::kernels::OnlineSoftmax;

impl Attention {
    /// How many tiles of the lesson's `tile` keys the keys make: the online softmax step's.
    pub fn tile_count(&self) -> usize {
        self.key_tokens().len().div_ceil(self.tile.max(1))
    }

    /// The keys of tile `index` (0-based, inclusive), or `None` past the last tile.
    pub fn tile_keys(&self, index: usize) -> Option<std::ops::RangeInclusive<usize>> {
        let keys = self.key_tokens().len();
        let first = index
            .checked_mul(self.tile.max(1))
            .filter(|first| *first < keys)?;
        Some(first..=(first + self.tile.max(1) - 1).min(keys - 1))
    }

    /// Query head `head`'s online softmax over tiles of `tile` keys; `None` past the last head.
    pub fn online_softmax(&self, head: usize, tile: usize) -> Option<OnlineSoftmax<'_>> {
        if head >= self.heads().query {
            return None;
        }
        Some(OnlineSoftmax {
            scores: self.matrix_in(self.softmax_input(), head)?,
            values: self.matrix_in(MatrixName::V, head)?,
            tile: tile.max(1),
        })
    }

    /// Query head `head`'s acc / l after the last tile of `tile` keys compared with the head's
    /// output (before W_o); `None` past the last head.
    pub fn online_check(&self, head: usize, tile: usize) -> Option<Agreement> {
        let online = self.online_softmax(head, tile)?;
        let whole = self.matrix_in(MatrixName::Output, head)?;
        let output = online.output();
        if output.shape() != whole.shape() {
            return Some(Agreement::SHAPES_DIFFER);
        }
        let mut comparison = Comparison::default();
        for (mine, theirs) in output.iter().zip(whole.iter()) {
            comparison.pair(*mine, *theirs);
        }
        Some(comparison.agreement())
    }
}
