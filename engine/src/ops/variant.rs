//! The wrong ways a learner may compute an operation: each a variant the engine can run in the
//! right way's place, so practice can tell which slip gives a learner's number.

use super::Op;

/// One common slip in one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// x · W row c instead of column c (only a square W fits).
    RowNotColumn,
    /// Query and key swapped: score[j][i] where score[i][j] belongs.
    Swapped,
    /// Scores not divided by √d_k.
    SkipScale,
    /// The mask left out.
    SkipMask,
    /// exp of each score, not divided by the row's sum.
    ExpOnly,
    /// exp of each score minus the row maximum, not divided by the row's sum.
    ShiftedExpOnly,
    /// Softmax down each column (over queries) instead of along the row.
    ColumnSoftmax,
    /// cos in the even columns and sin in the odd ones.
    SinCosSwapped,
    /// Positions counted from 1, not 0.
    PositionsFromOne,
    /// The column c in the exponent where its pair's index i belongs (⌊c/2⌋ for the sinusoid
    /// and RoPE's side-by-side pairs, c mod d_k/2 for rotate-half).
    ExponentByColumn,
    /// Turned by −φ: the sines' signs swapped.
    RotatedBackwards,
    /// Scores divided by √d_model (every head's width together) instead of one head's √d_k.
    ScaleByModelWidth,
    /// Scores divided by √(H·d_k), every head's queries together, instead of one head's √d_k.
    ScaleByAllHeadsWidth,
    /// Every head's weights averaged into one, instead of each head its own softmax.
    AveragedHeads,
    /// Another K/V group's keys or values (or their weights): the next group's, or the next
    /// head's when every head has its own.
    WrongGroup,
    /// The heads' outputs concatenated last head first.
    ConcatReversed,
    /// Cross-attention's keys or values made from the target's rows (X) instead of the
    /// source's (S): self-attention's habit.
    TargetNotSource,
    /// The heads' outputs interleaved column by column (head 1's first column, head 2's first
    /// column, …), as a reshape without the transpose gives.
    ConcatInterleaved,
    /// A step of generation's weights spread over the next token too, which is not in the
    /// cache yet: what the causal mask is there to stop.
    FutureToken,
    /// A step of generation's weights over every token of the sequence, the later ones too: the
    /// whole pass without its mask.
    EveryToken,
    /// The softmax's backward as weights ⊙ d_weights alone: the row's average gradient not
    /// subtracted (the Jacobian's diagonal term only).
    DiagonalOnly,
    /// A gradient's leftᵀ·right as left·right, the transpose forgotten (dK = d_scores·Q where
    /// d_scoresᵀ·Q belongs): only a square left fits.
    NotTransposed,
    /// LayerNorm's variance divided by n − 1 (`torch.var`'s default) where `nn.LayerNorm`
    /// divides by n.
    SampleVariance,
    /// A projection's bias left out: x · W where x · W + b belongs.
    NoBias,
    /// RMSNorm worked out as LayerNorm: the row's mean taken off, and its variance for the
    /// mean of squares.
    MeanTakenOff,
}

impl Variant {
    /// The variants of an operation, its own slips nearest first.
    pub(crate) fn of(op: Op) -> &'static [Variant] {
        op.operation().slips()
    }

    pub(crate) fn applies_to(self, op: Op) -> bool {
        Variant::of(op).contains(&self)
    }
}
