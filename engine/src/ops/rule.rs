//! How one cell was made, as an operation tells it (`Operation::derive`): its operand cells
//! and the arithmetic, with the real numbers. The words for it are written above, by the
//! engine (`crate::attention`'s derivation), which knows the lesson's labels.

use super::OnlinePart;
use crate::matrices::Cell;

/// One number that went into a cell, and where it sits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Operand {
    pub cell: Cell,
    pub value: f64,
}

/// How a cell's value was made.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// A number of the lesson itself (typed in the file, generated, or edited).
    Input,
    /// A dot product: Σ left × right, term by term; the right operands are a row of their
    /// matrix when it is transposed (`q · k`), else a column (`x · W_q[:, 1]`).
    Dot {
        terms: Vec<(Operand, Operand)>,
        transpose_right: bool,
    },
    /// Two cells added (embeddings + positions).
    Add { left: Operand, right: Operand },
    /// A sinusoidal position encoding: sin (even column c) or cos (odd c) of
    /// p / 10000^(2i/d_model), i = ⌊c/2⌋.
    Sinusoid {
        position: usize,
        pair: usize,
        d_model: usize,
        angle: f64,
        cosine: bool,
    },
    /// One cell of a pair rotated by φ = p · 10000^(−2i/d_k) (RoPE): the first of the pair is
    /// first·cos φ − second·sin φ, the second first·sin φ + second·cos φ.
    Rotate {
        first: Operand,
        second: Operand,
        position: usize,
        pair: usize,
        d_k: usize,
        angle: f64,
        /// This cell is the first (even) one of its pair.
        lower: bool,
    },
    /// A score divided by √d_k.
    Scale {
        score: Operand,
        d_k: usize,
        divisor: f64,
    },
    /// A score plus the mask: 0 keeps it, -inf hides it, another number is a bias that shifts it.
    Mask { score: Operand, mask: Operand },
    /// exp of one score over the sum of the exps of its row.
    Softmax {
        row: Vec<Operand>,
        /// Position of this cell's own score within `row`.
        selected: usize,
        /// The row maximum subtracted before exp (the stable form); the result is the same.
        row_max: f64,
        shifted_exps: Vec<f64>,
        shifted_sum: f64,
    },
    /// Every key of the row is masked: the weight is 0 by definition, never NaN.
    FullyMasked { row: Vec<Operand> },
    /// A head's number set in its place among every head's: concat[i, h·d_v + c] is head h's
    /// output[i, c].
    Concat { from: Operand },
    /// A step of generation's row of a matrix of the whole pass: the new token's row of X (or
    /// of the given Q, K, V).
    TokenRow { from: Operand },
    /// A row of the K/V cache: the new token's key or value (`new`), or an earlier token's,
    /// kept from the step that made it.
    Cached { from: Operand, new: bool },
    /// One number of the online softmax's state after a tile (`crate::attention`'s online_derivation).
    Online(OnlineRule),
    /// One gradient of the backward pass (`crate::attention`'s backward_derivation).
    Backward(BackwardRule),
}

/// One cell of the state after a tile, with what it is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlineRule {
    pub part: OnlinePart,
    /// The tile, 0-based, and how many the keys make.
    pub tile: usize,
    pub tiles: usize,
    /// The same cell after the tile before (for the rescale factor, m after the tile before);
    /// `None` at the first tile, before which m is -inf and l and acc are 0.
    pub before: Option<Operand>,
    /// The row's m before the tile (-inf before the first).
    pub max_before: f64,
    /// The row's m after the tile, for the parts made from it.
    pub max: Option<Operand>,
    /// The row's rescale factor at this tile, for l and acc.
    pub rescale: Option<Operand>,
    /// The tile's scores on this row, masked ones (-inf) included.
    pub scores: Vec<Operand>,
    /// For acc: each key's value in this column, aligned with `scores`.
    pub values: Vec<Operand>,
}

/// One gradient cell, with what it is made from.
#[derive(Debug, Clone, PartialEq)]
pub enum BackwardRule {
    /// leftᵀ · right: column `row` of left dotted with column `col` of right (Xᵀ·dQ).
    ColumnDot { terms: Vec<(Operand, Operand)> },
    /// Σ over heads (or K/V groups) of left_h[row, :] · right_h[col, :]: one block of terms
    /// per head (dX_q = Σ_h dQ_h·W_q_hᵀ).
    HeadsDot {
        blocks: Vec<(usize, Vec<(Operand, Operand)>)>,
    },
    /// dS[i, j] = P[i, j] · (dP[i, j] − Σ_k P[i, k]·dP[i, k]).
    SoftmaxBackward {
        weight: Operand,
        grad: Operand,
        row: Vec<(Operand, Operand)>,
    },
    /// The sum of a group's heads' gradients, or of the three paths back to X.
    Sum { terms: Vec<Operand>, paths: bool },
    /// A head's number taken from its block of every head's gradient (d_concat's).
    Block { from: Operand },
    /// One cell of a pair turned back by −φ: the rotation's transpose.
    RotateBack {
        first: Operand,
        second: Operand,
        position: usize,
        angle: f64,
        /// This cell is the first (even) one of its pair.
        lower: bool,
    },
}
