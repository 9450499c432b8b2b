//! What an operation reads: the cell it explains (`Site`) or the operands it is computed from
//! (`Operands`), and through them the lesson computed so far, seen as `Cells` — a few
//! questions, not the whole engine, so that the operations sit below it and a new one needs
//! to know no more than these.

use std::ops::RangeInclusive;
use std::sync::Arc;

use nalgebra::{DMatrix, DMatrixView};

use super::kernels::RowSoftmax;
use super::{Held, Operand};
use crate::matrices::{Cell, Heads, MatrixName, Per};

/// The lesson as computed so far, as an operation reads it (the engine, `Attention`, is one).
pub(crate) trait Cells {
    /// The value of one cell, `None` when the lesson has no such cell.
    fn value(&self, cell: Cell) -> Option<f64>;

    /// Head `head`'s matrix `name` at step of generation `token` (after tile `token` for the
    /// online softmax's state), read in place.
    fn matrix_at(
        &self,
        name: MatrixName,
        head: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>>;

    /// Head `head`'s matrix `name` held whole (a step of generation's is the first step's).
    fn matrix_in(&self, name: MatrixName, head: usize) -> Option<&DMatrix<f64>>;

    /// A query head's softmax with its working (max, exps, sums).
    fn softmax_of(&self, head: usize) -> Option<&RowSoftmax>;

    /// The query heads and K/V groups of this lesson.
    fn heads(&self) -> Heads;

    /// d_k, the width of one head's queries and keys.
    fn d_k(&self) -> usize;

    /// √d_k, what the scaling step divides by.
    fn scale_divisor(&self) -> f64;

    /// ε of the norm before the projections.
    fn norm_epsilon(&self) -> f64;

    /// Keys per tile of the online softmax.
    fn tile(&self) -> usize;

    /// How many tiles the keys make.
    fn tile_count(&self) -> usize;

    /// The keys of tile `index` (0-based, inclusive), or `None` past the last tile.
    fn tile_keys(&self, index: usize) -> Option<RangeInclusive<usize>>;

    /// Slot `slot` of a step of generation's matrix at position `token`, made the first time.
    fn token_matrix(&self, name: MatrixName, slot: usize, token: usize) -> Option<&DMatrix<f64>>;

    /// Whether `name` is a K or V cache, read a prefix at a time from the whole pass.
    fn is_cache(&self, name: MatrixName) -> bool;

    /// Slot `slot`'s cache after step `token`: the first `token + 1` rows of the whole pass's.
    fn cache_rows(
        &self,
        name: MatrixName,
        slot: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>>;
}

/// The matrices of one lesson: one list per entry of the table, holding one matrix for the
/// lesson, or one per query head, or one per K/V group (`Per`); empty for a
/// matrix the lesson does not have.
pub(crate) type Matrices = Vec<Vec<Arc<Held>>>;

/// One cell being explained, and the computed lesson that holds its operands: what an
/// operation's `derive` reads.
pub struct Site<'a> {
    pub(crate) cells: &'a dyn Cells,
    pub(crate) cell: Cell,
    /// The width of the cell's matrix (the sinusoid's d_model, the rotation's d_k).
    pub(crate) width: usize,
}

impl Site<'_> {
    /// `matrix[row, col]` as this cell's head sees it (its group's for keys and values, the
    /// lesson's when every head shares it) at this cell's step of generation.
    pub(crate) fn operand(&self, matrix: MatrixName, row: usize, col: usize) -> Option<Operand> {
        self.operand_of(matrix, self.cell.head, row, col)
    }

    /// `operand` as head `head` sees it.
    pub(crate) fn operand_of(
        &self,
        matrix: MatrixName,
        head: usize,
        row: usize,
        col: usize,
    ) -> Option<Operand> {
        let cell = Cell::new(matrix, row, col)
            .in_head(head)
            .at_token(self.cell.token);
        self.cells.value(cell).map(|value| Operand { cell, value })
    }
}

/// The operands of one head's operation: matrices already computed (the plan computes every
/// operand before the matrices made from it), seen from query head `head`.
pub(crate) struct Operands<'a> {
    pub(crate) matrices: &'a Matrices,
    pub(crate) heads: Heads,
    pub(crate) head: usize,
    /// d_model, or every head's query width together when the lesson gives Q itself: what a
    /// learner who divides by √d_model divides by.
    pub(crate) model_width: usize,
    /// √d_k, what the scaling step divides by.
    pub(crate) scale_divisor: f64,
    /// ε of the norm before the projections.
    pub(crate) norm_epsilon: f64,
    /// The result's (rows, columns), which only the sinusoid needs.
    pub(crate) size: (usize, usize),
    /// Whether a product may take every core: a large lesson's one-of-a-kind product
    /// (concat · W_o), not one head's, which already shares the cores with the other heads.
    pub(crate) every_core: bool,
    /// Whether a product is summed row by row as a step of generation sums its row: the whole
    /// pass's keys and values, which the caches are read from.
    pub(crate) in_step_order: bool,
    /// For a step of generation's matrix: the computed lesson that holds the steps' matrices,
    /// and the position t of the step.
    pub(crate) token: Option<(&'a dyn Cells, usize)>,
    /// What the plan projects into Q: the target's rows, which a slip may take for the
    /// source's.
    pub(crate) projected: Option<MatrixName>,
}

impl Operands<'_> {
    /// The operand's matrix for this head: its group's for keys and values.
    pub(crate) fn get(&self, name: MatrixName) -> &DMatrix<f64> {
        self.of_head(name, self.head)
    }

    pub(crate) fn of_head(&self, name: MatrixName, head: usize) -> &DMatrix<f64> {
        if name.per_token() {
            let token = self.token.map_or(0, |(_, token)| token);
            return self.at_token(name, head, token);
        }
        self.matrices[name.index()]
            .get(self.heads.slot(name.per(), head))
            .map_or(empty(), |held| held.matrix())
    }

    /// A step of generation's matrix at position `token`, for head `head`: a variant's own, made
    /// anew at its token, or the engine's.
    pub(crate) fn at_token(&self, name: MatrixName, head: usize, token: usize) -> &DMatrix<f64> {
        let slot = self.heads.slot(name.per(), head);
        if Some(token) == self.token.map(|(_, at)| at)
            && let Some(made) = self.matrices[name.index()].get(slot)
            && !made.matrix().is_empty()
        {
            return made.matrix();
        }
        self.token
            .and_then(|(cells, _)| {
                cells.token_matrix(name, self.heads.slot(name.per(), head), token)
            })
            .unwrap_or(empty())
    }

    /// The position t of the step of generation this operation is part of.
    pub(crate) fn position(&self) -> usize {
        self.token.map_or(0, |(_, token)| token)
    }

    /// The operand for this head read in place, for a product: a head's block of W_q is not
    /// copied out, and a cache is the first t + 1 rows of one of its group's blocks.
    pub(crate) fn view(&self, name: MatrixName) -> DMatrixView<'_, f64> {
        self.view_of(name, self.head)
    }

    /// `view` of head `head`'s operand.
    pub(crate) fn view_of(&self, name: MatrixName, head: usize) -> DMatrixView<'_, f64> {
        let slot = self.heads.slot(name.per(), head);
        if let Some((cells, token)) = self.token
            && cells.is_cache(name)
        {
            // A variant's own cache, made anew at its token.
            if let Some(made) = self.matrices[name.index()].get(slot)
                && !made.matrix().is_empty()
            {
                return made.view();
            }
            return cells
                .cache_rows(name, slot, token)
                .unwrap_or_else(|| empty().as_view());
        }
        if name.per_token() {
            return self.of_head(name, head).as_view();
        }
        self.matrices[name.index()]
            .get(slot)
            .map_or_else(|| empty().as_view(), |held| held.view())
    }

    /// The operand as another K/V group has it: the next group's, or with one group per head
    /// the next head's; the head's own when there is no other.
    pub(crate) fn other_group(&self, name: MatrixName) -> DMatrixView<'_, f64> {
        let (query, kv) = (self.heads.query, self.heads.kv.max(1));
        match name.per() {
            Per::KvGroup if kv > 1 => {
                let group = (self.heads.group_of(self.head) + 1) % kv;
                self.view_of(name, self.heads.first_of_group(group))
            }
            Per::QueryHead if query > 1 => self.view_of(name, (self.head + 1) % query),
            _ => self.view(name),
        }
    }

    /// Every query head's matrix of `name`, head 1 first.
    pub(crate) fn every_head(&self, name: MatrixName) -> Vec<&DMatrix<f64>> {
        (0..self.heads.query)
            .map(|head| self.of_head(name, head))
            .collect()
    }
}

/// The matrix a lesson does not have, for a getter that returns a matrix either way.
pub(crate) fn empty() -> &'static DMatrix<f64> {
    static EMPTY: std::sync::LazyLock<DMatrix<f64>> =
        std::sync::LazyLock::new(|| DMatrix::zeros(0, 0));
    &EMPTY
}
