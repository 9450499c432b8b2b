//! The cells an edit changed, marked on screen until the next move: one bit per cell, so a
//! re-roll that changes every number of a 1024 × 1024 matrix costs 128 KB, where a set of cells
//! took about 75 MB.

use nalgebra::{Dyn, Matrix, RawStorage};

use crate::attention::{Cell, Heads, MatrixName};
use crate::pipeline::Per;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedCells {
    matrices: Vec<Marks>,
    count: usize,
    /// The lesson's heads: a cell of a K/V group's matrix seen from any head of the group is
    /// the same cell.
    heads: Heads,
}

impl Default for ChangedCells {
    fn default() -> ChangedCells {
        ChangedCells {
            matrices: Vec::new(),
            count: 0,
            heads: Heads::ONE,
        }
    }
}

/// The changed cells of one matrix of one head (or group), row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marks {
    name: MatrixName,
    /// The slot among the lesson's matrices of this name: the head, or the K/V group.
    slot: usize,
    /// A query head the slot's matrix is seen from, for naming its cells.
    head: usize,
    cols: usize,
    bits: Vec<u64>,
}

impl ChangedCells {
    pub(crate) fn clear(&mut self) {
        self.matrices.clear();
        self.count = 0;
    }

    /// The heads of the lesson the cells are marked in.
    pub(crate) fn set_heads(&mut self, heads: Heads) {
        self.heads = heads;
    }

    fn slot(&self, name: MatrixName, head: usize) -> usize {
        match name.per() {
            Per::Lesson => 0,
            per => self.heads.slot(per, head),
        }
    }

    /// How many cells changed.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn contains(&self, cell: &Cell) -> bool {
        let slot = self.slot(cell.matrix, cell.head);
        self.matrices
            .iter()
            .find(|marks| marks.name == cell.matrix && marks.slot == slot)
            .is_some_and(|marks| {
                cell.col < marks.cols && {
                    let index = cell.row * marks.cols + cell.col;
                    marks
                        .bits
                        .get(index / 64)
                        .is_some_and(|word| word & (1 << (index % 64)) != 0)
                }
            })
    }

    /// Every changed cell, matrix by matrix, row by row.
    pub fn iter(&self) -> impl Iterator<Item = Cell> + '_ {
        self.matrices.iter().flat_map(|marks| {
            marks
                .bits
                .iter()
                .enumerate()
                .flat_map(move |(word_index, word)| {
                    (0..64)
                        .filter(move |bit| word & (1 << bit) != 0)
                        .map(move |bit| {
                            let index = word_index * 64 + bit;
                            Cell::new(marks.name, index / marks.cols, index % marks.cols)
                                .in_head(marks.head)
                        })
                })
        })
    }

    /// Marks each cell of `of`'s matrix (its name and head; the row and column are not read)
    /// whose value differs, bit for bit (-inf equals -inf, and any change at all is shown),
    /// between `old` and `new` of the same shape.
    pub(crate) fn mark_differences<S1, S2>(
        &mut self,
        of: Cell,
        old: &Matrix<f64, Dyn, Dyn, S1>,
        new: &Matrix<f64, Dyn, Dyn, S2>,
    ) where
        S1: RawStorage<f64, Dyn, Dyn>,
        S2: RawStorage<f64, Dyn, Dyn>,
    {
        let name = of.matrix;
        let slot = self.slot(name, of.head);
        if old.shape() != new.shape() {
            return;
        }
        let cols = new.ncols();
        let mut bits = vec![0u64; (new.len()).div_ceil(64)];
        let mut count = 0;
        for row in 0..new.nrows() {
            for col in 0..cols {
                if old[(row, col)].to_bits() != new[(row, col)].to_bits() {
                    let index = row * cols + col;
                    bits[index / 64] |= 1 << (index % 64);
                    count += 1;
                }
            }
        }
        if count > 0 {
            self.matrices
                .retain(|marks| marks.name != name || marks.slot != slot);
            self.matrices.push(Marks {
                name,
                slot,
                head: of.head,
                cols,
                bits,
            });
            self.count += count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn marks_exactly_the_cells_that_differ() {
        let old = DMatrix::from_row_slice(2, 3, &[1.0, 2.0, 3.0, 4.0, f64::NEG_INFINITY, 6.0]);
        let mut new = old.clone();
        new[(1, 2)] = 7.0;
        new[(0, 0)] = -1.0;
        let mut changed = ChangedCells::default();
        changed.mark_differences(Cell::new(MatrixName::Q, 0, 0), &old, &new);
        assert_eq!(changed.len(), 2);
        assert!(changed.contains(&Cell::new(MatrixName::Q, 1, 2)));
        assert!(changed.contains(&Cell::new(MatrixName::Q, 0, 0)));
        assert!(
            !changed.contains(&Cell::new(MatrixName::Q, 1, 1)),
            "-inf is -inf"
        );
        assert!(!changed.contains(&Cell::new(MatrixName::K, 1, 2)));
        assert!(!changed.contains(&Cell::new(MatrixName::Q, 0, 7)));
        let listed: Vec<Cell> = changed.iter().collect();
        assert_eq!(
            listed,
            [
                Cell::new(MatrixName::Q, 0, 0),
                Cell::new(MatrixName::Q, 1, 2)
            ]
        );
        changed.clear();
        assert!(changed.is_empty());
    }

    #[test]
    fn a_kv_groups_cell_is_changed_from_every_head_of_the_group_only() {
        let old = DMatrix::from_row_slice(1, 2, &[1.0, 2.0]);
        let new = DMatrix::from_row_slice(1, 2, &[1.0, 3.0]);
        let mut changed = ChangedCells::default();
        // Four query heads in two groups: heads 3 and 4 (indices 2, 3) share group 2.
        changed.set_heads(Heads { query: 4, kv: 2 });
        let k = |head| Cell::new(MatrixName::K, 0, 1).in_head(head);
        changed.mark_differences(k(2), &old, &new);
        assert!(changed.contains(&k(2)) && changed.contains(&k(3)));
        assert!(!changed.contains(&k(0)) && !changed.contains(&k(1)));
        assert_eq!(changed.len(), 1, "one cell of one group's matrix");
        // A query head's matrix is that head's alone.
        changed.mark_differences(Cell::new(MatrixName::Q, 0, 0).in_head(3), &old, &new);
        assert!(changed.contains(&Cell::new(MatrixName::Q, 0, 1).in_head(3)));
        assert!(!changed.contains(&Cell::new(MatrixName::Q, 0, 1).in_head(2)));
    }
}
