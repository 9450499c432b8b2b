//! Checking a learner's prediction of one cell: right within the precision shown, or wrong, and
//! then, when the number is what a common mistake gives for that very cell, which mistake.
//!
//! # Precision
//! A number is right when it is at most half a unit of the last shown decimal from the exact
//! value (0.005 at 2 decimals), the boundary included. At exactly half a unit the exact value is
//! a tie that rounds either way (0.125 is 0.13 rounded half up, 0.12 rounded half to even, which
//! is what Rust's own formatting prints), so both readings are right. Neither 0.12 nor 0.125
//! minus 0.005 is exact in binary, so the comparison allows a little floating-point noise on
//! top of the half unit: a billionth of it, plus a few units in the last place of the numbers.
//!
//! A number worked out from the highlighted cells as the screen rounds them is right too
//! (0.8044 × 1 + 0.1956 × 3 = 1.3912 where the exact 0.80443 × 1 + 0.19557 × 3 is 1.3911): the
//! learner did the arithmetic right, and only the screen's rounding moved the last digit.
//!
//! An answer typed to fewer decimals than the lesson shows, but at least two (and two
//! significant digits), is right when it is right to the decimals typed: 0.707 for 1/√2 where
//! the lesson shows 0.7071. The verdict says so ("right to 3 decimals").
//!
//! # Which slip is named
//! Each kind of cell has its list of slips, nearest first: a mistake in this step's own operation
//! before one carried over from an earlier step, and carried ones from the latest step back,
//! because the earlier results are on the screen and the learner most likely slipped in what
//! they are doing now. Within the softmax step, exp without dividing comes before the wrong
//! axis: it is the right computation left unfinished, a narrower target than a different one.
//! The first slip in that order whose value matches (with the same precision as a right
//! answer) is named. A slip is never named when its value is not finite or when it would itself
//! pass as the right answer: then it teaches nothing.
//!
//! Slips carried into the output are only forgetting the scale or the mask: those are slips in
//! the learner's idea of the formula, which they keep from step to step. A swapped query and
//! key, exp without dividing or the wrong axis are slips of hand on their own step; at the
//! output the right weights are on the screen.

use super::answer::Answer;
use crate::attention::{Attention, Cell, MatrixName, Variant, value_in};
use crate::ops;
use crate::pipeline::Op;

/// What the tutor says about one predicted number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Right {
        exact: f64,
        /// Right only to the decimals the learner typed, fewer than the lesson shows ("right
        /// to 3 decimals" where it shows 4); `None` when right at the lesson's precision.
        to_decimals: Option<usize>,
    },
    Wrong {
        exact: f64,
        /// The common mistake the number matches, if one does.
        slip: Option<Slip>,
    },
}

impl Verdict {
    pub fn is_right(&self) -> bool {
        matches!(self, Verdict::Right { .. })
    }

    /// The cell's exact value, to show beside the learner's number.
    pub fn exact(&self) -> f64 {
        match self {
            Verdict::Right { exact, .. } | Verdict::Wrong { exact, .. } => *exact,
        }
    }

    pub fn slip(&self) -> Option<&Slip> {
        match self {
            Verdict::Wrong { slip, .. } => slip.as_ref(),
            Verdict::Right { .. } => None,
        }
    }
}

/// A common mistake recognised in a wrong number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlipKind {
    /// Not dividing the scores by √d_k.
    ForgotScaling,
    /// Leaving out the mask: hidden keys keep their scores.
    ForgotMask,
    /// score[j][i] (query j, key i) instead of score[i][j].
    SwappedQueryKey,
    /// exp of the score (or of the score minus the row maximum) without dividing by the row sum.
    ExpNotNormalised,
    /// Softmax down the column (over queries) instead of along the row (over keys).
    WrongAxis,
    /// output[i][c] as weights row i · V row c instead of V column c (only when V is square).
    VRowNotColumn,
    /// Q[i][c] as X row i · W_q row c instead of W_q column c (only when W_q is square); the
    /// same for K and V.
    WRowNotColumn,
    /// cos where sin belongs (even columns) and sin where cos belongs.
    SinCosSwapped,
    /// Positions counted from 1 where they count from 0.
    PositionsFromOne,
    /// The column c in the exponent where its pair's index i belongs (⌊c/2⌋ for the sinusoid
    /// and RoPE's side-by-side pairs, c mod d_k/2 for rotate-half).
    WrongExponent,
    /// A RoPE pair turned by −φ instead of φ.
    RotatedBackwards,
    /// Scores divided by √d_model instead of one head's √d_k.
    ScaledByModelWidth,
    /// Scores divided by √(H·d_k), every head's width together, instead of one head's √d_k.
    ScaledByAllHeadsWidth,
    /// The heads' weights averaged instead of this head's own softmax.
    AveragedHeads,
    /// Another K/V group's keys or values (or another head's).
    WrongGroup,
    /// The heads' outputs concatenated in the wrong order.
    ConcatOrder,
    /// Cross-attention's keys or values made from the target's rows instead of the source's.
    TargetNotSource,
    /// A step of generation's weights spread over later tokens (the next one, or all of them),
    /// which are not generated yet.
    FutureToken,
    /// The softmax's backward as weights ⊙ d_weights alone, the row's average not subtracted.
    JacobianDiagonal,
    /// A gradient's leftᵀ·right taken without the transpose (dK = d_scores·Q).
    GradientNotTransposed,
    /// LayerNorm's variance divided by n − 1 where it divides by n.
    SampleVariance,
    /// A projection's bias left out (x · W where x · W + b belongs).
    ForgotBias,
    /// RMSNorm worked out as LayerNorm, the row's mean taken off.
    MeanTakenOff,
}

impl SlipKind {
    /// A few words for the slip, as a class poll's reveal counts it ("forgot ÷√d_k: 7"): the
    /// learner's sentence (`Slip::describe`) is for one answer, this names a group of them.
    pub fn short(self) -> &'static str {
        match self {
            SlipKind::ForgotScaling => "forgot ÷√d_k",
            SlipKind::ForgotMask => "forgot the mask",
            SlipKind::SwappedQueryKey => "query and key swapped",
            SlipKind::ExpNotNormalised => "exp not divided by the row's sum",
            SlipKind::WrongAxis => "softmax down the column",
            SlipKind::VRowNotColumn => "a row of V, not a column",
            SlipKind::WRowNotColumn => "a row of W, not a column",
            SlipKind::SinCosSwapped => "sin and cos swapped",
            SlipKind::PositionsFromOne => "positions counted from 1",
            SlipKind::WrongExponent => "the column in the exponent, not the pair",
            SlipKind::RotatedBackwards => "rotated backwards",
            SlipKind::ScaledByModelWidth => "÷√d_model, not ÷√d_k",
            SlipKind::ScaledByAllHeadsWidth => "÷√(H·d_k), not ÷√d_k",
            SlipKind::AveragedHeads => "the heads' weights averaged",
            SlipKind::WrongGroup => "another K/V group",
            SlipKind::ConcatOrder => "heads concatenated out of order",
            SlipKind::TargetNotSource => "K/V from the target, not the source",
            SlipKind::FutureToken => "looked at a later token",
            SlipKind::JacobianDiagonal => "row's average gradient not subtracted",
            SlipKind::GradientNotTransposed => "transpose forgotten",
            SlipKind::SampleVariance => "variance ÷ (n − 1)",
            SlipKind::ForgotBias => "bias left out",
            SlipKind::MeanTakenOff => "RMSNorm with the mean taken off",
        }
    }

    /// The slip a variant of the engine stands for.
    fn of(variant: Variant, origin: Op) -> SlipKind {
        match variant {
            Variant::RowNotColumn => match origin {
                Op::Product(ops::Product {
                    right: MatrixName::V | MatrixName::VCache,
                    ..
                }) => SlipKind::VRowNotColumn,
                _ => SlipKind::WRowNotColumn,
            },
            Variant::Swapped => SlipKind::SwappedQueryKey,
            Variant::SkipScale => SlipKind::ForgotScaling,
            Variant::SkipMask => SlipKind::ForgotMask,
            Variant::ExpOnly | Variant::ShiftedExpOnly => SlipKind::ExpNotNormalised,
            Variant::ColumnSoftmax => SlipKind::WrongAxis,
            Variant::SinCosSwapped => SlipKind::SinCosSwapped,
            Variant::PositionsFromOne => SlipKind::PositionsFromOne,
            Variant::ExponentByColumn => SlipKind::WrongExponent,
            Variant::RotatedBackwards => SlipKind::RotatedBackwards,
            Variant::ScaleByModelWidth => SlipKind::ScaledByModelWidth,
            Variant::ScaleByAllHeadsWidth => SlipKind::ScaledByAllHeadsWidth,
            Variant::AveragedHeads => SlipKind::AveragedHeads,
            Variant::WrongGroup => SlipKind::WrongGroup,
            Variant::ConcatReversed | Variant::ConcatInterleaved => SlipKind::ConcatOrder,
            Variant::TargetNotSource => SlipKind::TargetNotSource,
            Variant::FutureToken | Variant::EveryToken => SlipKind::FutureToken,
            Variant::DiagonalOnly => SlipKind::JacobianDiagonal,
            Variant::NotTransposed => SlipKind::GradientNotTransposed,
            Variant::SampleVariance => SlipKind::SampleVariance,
            Variant::NoBias => SlipKind::ForgotBias,
            Variant::MeanTakenOff => SlipKind::MeanTakenOff,
        }
    }

    /// Whether this slip, made where `source` is computed, is looked for in `target`. Slips in
    /// the learner's idea of the formula (a step left out) are carried to every later matrix;
    /// query and key swapped and the position slips only while the matrix keeps its shape (to
    /// the weights; from the positions to X = E + P): past that the right numbers are on the
    /// screen; the others only on their own step.
    fn carries(self, source: MatrixName, target: MatrixName) -> bool {
        match self {
            // Dividing by √d_model is the learner's idea of the formula, like forgetting to scale.
            SlipKind::ForgotScaling
            | SlipKind::ForgotMask
            | SlipKind::ScaledByModelWidth
            | SlipKind::ScaledByAllHeadsWidth => true,
            SlipKind::SwappedQueryKey
            | SlipKind::SinCosSwapped
            | SlipKind::PositionsFromOne
            | SlipKind::WrongExponent
            | SlipKind::RotatedBackwards => {
                let (from, to) = (source.entry(), target.entry());
                (from.rows, from.cols) == (to.rows, to.cols)
            }
            SlipKind::ExpNotNormalised
            | SlipKind::WrongAxis
            | SlipKind::VRowNotColumn
            | SlipKind::WRowNotColumn
            | SlipKind::AveragedHeads
            | SlipKind::ConcatOrder
            | SlipKind::TargetNotSource
            | SlipKind::GradientNotTransposed => source == target,
            // Which group's keys a head reads is the learner's idea of grouped-query attention:
            // scores made with another group's keys are carried to the weights and to the
            // online softmax's state they make (the output's values are a slip of their own).
            SlipKind::WrongGroup => {
                source == target
                    || (matches!(source, MatrixName::Scores | MatrixName::DecodeScores)
                        && (matches!(
                            target,
                            MatrixName::OnlineMax
                                | MatrixName::OnlineRescale
                                | MatrixName::OnlineSum
                                | MatrixName::OnlineAcc
                        ) || {
                            let (from, to) = (source.entry(), target.entry());
                            (from.rows, from.cols) == (to.rows, to.cols)
                        }))
            }
            // Leaving out the average is the learner's idea of the softmax's gradient: every
            // gradient after it carries it.
            SlipKind::JacobianDiagonal => true,
            // Dividing by n − 1 is the learner's idea of the normalisation, and leaving the
            // bias out their idea of a projection: both are carried on.
            SlipKind::SampleVariance | SlipKind::ForgotBias | SlipKind::MeanTakenOff => true,
            // Looking ahead is the learner's idea of what a new token sees: it is carried into
            // the output row.
            SlipKind::FutureToken => {
                source == target
                    || matches!(
                        target,
                        MatrixName::DecodeOutput
                            | MatrixName::DecodeConcat
                            | MatrixName::DecodeProjected
                    )
            }
        }
    }
}

/// A recognised slip, with the number it gives for this cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slip {
    pub kind: SlipKind,
    /// What the slip gives for the cell: the learner's number, up to the precision shown.
    pub value: f64,
    /// The matrix of the checked cell, which decides how the slip is described.
    pub matrix: MatrixName,
}

impl Slip {
    /// One short sentence for the learner: what their number is, and what to do instead.
    pub fn describe(&self) -> &'static str {
        use MatrixName as M;
        use SlipKind as S;
        match (self.kind, self.matrix) {
            (S::JacobianDiagonal, M::DSoftmaxInput) => {
                "That is weights × d_weights alone: subtract the row's average gradient avg first, dS = weights ⊙ (d_weights − avg)."
            }
            (S::JacobianDiagonal, _) => {
                "That gradient took weights ⊙ d_weights alone for the softmax's: the row's average gradient must be subtracted."
            }
            (S::GradientNotTransposed, M::DK | M::DKRope) => {
                "That is d_scores·Q, the transpose forgotten: dK = d_scoresᵀ·Q, each key's column of d_scores against Q."
            }
            (S::GradientNotTransposed, _) => {
                "That misses the transpose: this gradient is leftᵀ·right, a column of the left matrix against a column of the right."
            }
            (S::ForgotScaling, M::DScores) => {
                "That is dS itself: the scores were divided by √d_k, so their gradient is divided by √d_k too."
            }
            (
                S::ForgotScaling,
                M::DQ
                | M::DK
                | M::DQRope
                | M::DKRope
                | M::DKGroup
                | M::DWQ
                | M::DWK
                | M::DXQ
                | M::DXK
                | M::DX
                | M::DSource,
            ) => "That gradient skipped the scaling's 1/√d_k: d_scores = dS / √d_k comes first.",
            (S::ForgotMask, M::OnlineMax | M::OnlineRescale | M::OnlineSum | M::OnlineAcc) => {
                "That counts a hidden key: its score is -inf, so it adds nothing to m, l or acc."
            }
            (S::ForgotScaling, M::OnlineMax | M::OnlineRescale | M::OnlineSum | M::OnlineAcc) => {
                "That is from the unscaled scores: the tiles read the scores divided by √d_k."
            }
            (S::ForgotScaling, M::Scaled | M::DecodeScaled) => {
                "That is the score before dividing by √d_k: remember to scale."
            }
            (S::ForgotScaling, M::Masked) => {
                "That is the unscaled score: divide by √d_k before adding the mask."
            }
            (
                S::ForgotScaling,
                M::Output
                | M::Concat
                | M::Projected
                | M::DecodeOutput
                | M::DecodeConcat
                | M::DecodeProjected,
            ) => {
                "That output comes from weights of unscaled scores: divide by √d_k before softmax."
            }
            (S::ForgotScaling, _) => {
                "That is the softmax of the unscaled scores: divide by √d_k before softmax."
            }
            (S::ForgotMask, M::Masked) => {
                "That is the score before masking: this key is hidden, so it becomes -inf."
            }
            (S::ForgotMask, M::Output | M::Concat | M::Projected) => {
                "That output gives weight to hidden keys: their weights are 0 after the mask."
            }
            (S::ForgotMask, _) => {
                "That is the softmax without the mask: a hidden key is -inf, so its weight is 0."
            }
            (S::SwappedQueryKey, M::Scores) => {
                "That is the column's query times the row's key: the row gives the query."
            }
            (S::SwappedQueryKey, _) => {
                "That comes from the score with query and key swapped: the row gives the query."
            }
            (S::ExpNotNormalised, _) => {
                "That is the exponential alone: divide it by the sum of the row's exponentials."
            }
            (S::WrongAxis, _) => {
                "That is normalised down the column: softmax runs along the row, over the keys."
            }
            (S::VRowNotColumn, _) => {
                "That multiplies by a row of V: take its column, one number from each token."
            }
            (S::SinCosSwapped, M::Positions) => {
                "That is sin and cos swapped: even columns (counting from 0) take sin, odd ones cos."
            }
            (S::SinCosSwapped, M::QRope | M::KRope | M::QNewRope | M::KNewRope) => {
                "That swaps sin φ and cos φ: the first of a pair is a·cos φ − b·sin φ."
            }
            (S::SinCosSwapped, _) => {
                "That adds positions with sin and cos swapped: even columns (from 0) take sin."
            }
            (S::PositionsFromOne, _) => {
                "That counts positions from 1: the first token is at position p = 0."
            }
            // RoPE's pairs are columns 2i and 2i+1, or i and i + d_k/2 (rotate-half).
            (S::WrongExponent, M::QRope | M::KRope | M::QNewRope | M::KNewRope) => {
                "That puts the column in the exponent: the index i of its pair goes there instead."
            }
            (S::WrongExponent, _) => {
                "That puts the column in the exponent: its pair i = ⌊c/2⌋ goes there instead."
            }
            (S::RotatedBackwards, _) => {
                "That turns the pair by −φ: the first is a·cos φ − b·sin φ, the second a·sin φ + b·cos φ."
            }
            (S::WRowNotColumn, _) => {
                "That multiplies by a row of the weight matrix: take its column instead."
            }
            (S::ScaledByModelWidth, M::Scaled | M::DecodeScaled) => {
                "That divides by √d_model: scale by √d_k, the width of one head's queries."
            }
            (S::ScaledByModelWidth, _) => {
                "That comes from scores divided by √d_model: each head divides by its own √d_k."
            }
            (S::ScaledByAllHeadsWidth, M::Scaled | M::DecodeScaled) => {
                "That divides by √(H·d_k), all heads' width: each head divides by its own √d_k."
            }
            (S::ScaledByAllHeadsWidth, _) => {
                "That comes from scores divided by √(H·d_k): each head divides by its own √d_k."
            }
            (S::AveragedHeads, _) => {
                "That is every head's weights averaged: each head takes its own softmax."
            }
            (S::WrongGroup, M::Scores | M::DecodeScores) => {
                "That uses another group's keys: this head reads its own K/V group's (see the header)."
            }
            (S::WrongGroup, M::Scaled | M::Masked | M::DecodeScaled) => {
                "That is from another group's keys: this head's scores use its own K/V group's keys (see the header)."
            }
            (S::WrongGroup, M::Weights | M::DecodeWeights) => {
                "That is the softmax of scores with another group's keys: this head reads its own K/V group's keys (see the header)."
            }
            (S::WrongGroup, M::OnlineMax | M::OnlineRescale | M::OnlineSum | M::OnlineAcc) => {
                "That is from another group's keys: the tiles read this head's own K/V group's keys (see the header)."
            }
            (S::WrongGroup, M::Output | M::DecodeOutput) => {
                "That uses another group's values: this head reads its own K/V group's (see the header)."
            }
            (S::WrongGroup, _) => {
                "That uses another head's block of the weights: this head has its own columns."
            }
            (S::ConcatOrder, _) => {
                "That puts heads in the wrong place: concat is head 1's columns, then head 2's, …"
            }
            (S::TargetNotSource, M::V) => {
                "That is a target token's row: the values come from the source's rows, S·W_v."
            }
            (S::TargetNotSource, _) => {
                "That is a target token's row: the keys come from the source's rows, S·W_k."
            }
            (S::FutureToken, M::DecodeWeights) => {
                "That gives weight to tokens after this one, not generated yet: softmax over the cached keys only."
            }
            (S::SampleVariance, _) => {
                "That divides the variance by n − 1: LayerNorm divides by n, the row's width."
            }
            (S::MeanTakenOff, _) => {
                "That takes the row's mean off, as LayerNorm does: RMSNorm divides x itself by √(mean(x²) + ε)."
            }
            (S::ForgotBias, _) => {
                "That leaves the bias out: this projection adds its bias's number for the column after the dot product."
            }
            (S::FutureToken, _) => {
                "That output comes from weights that kept a share for tokens after this one: the new token's softmax runs over the cache only."
            }
        }
    }
}

/// Half a unit of the last shown decimal: 0.005 at 2 decimals.
pub fn tolerance(decimals: usize) -> f64 {
    0.5 * 10f64.powi(-(decimals.min(i32::MAX as usize) as i32))
}

/// Whether `answer` reads as `target` at `decimals` decimals (see the module notes on the
/// boundary). Infinities only match themselves, so "-inf" is right for a hidden score; NaN
/// matches nothing.
pub fn is_close(answer: f64, target: f64, decimals: usize) -> bool {
    if answer.is_nan() || target.is_nan() {
        return false;
    }
    if answer.is_infinite() || target.is_infinite() {
        return answer == target;
    }
    let half_unit = tolerance(decimals);
    let noise = half_unit * 1e-9 + 8.0 * f64::EPSILON * answer.abs().max(target.abs());
    (answer - target).abs() <= half_unit + noise
}

/// Checks the learner's `answer` for `cell` at `decimals` decimals; `None` when the lesson has
/// no such cell (as `Attention::derive`).
pub fn check(attention: &Attention, cell: Cell, answer: f64, decimals: usize) -> Option<Verdict> {
    check_answer(attention, cell, &Answer::exactly(answer), decimals)
}

/// `check` for an answer as typed: one typed to fewer decimals than the lesson shows (at least
/// two, see `Answer`) is right when it is right to the decimals typed, as 0.707 is for 1/√2
/// where the lesson shows 0.7071.
pub fn check_answer(
    attention: &Attention,
    cell: Cell,
    typed: &Answer,
    decimals: usize,
) -> Option<Verdict> {
    let derivation = attention.derive(cell)?;
    let exact = derivation.value;
    let answer = typed.value;
    // Worked out from the highlighted cells as the screen rounds them, the last digit may
    // differ from the exact value's: that is the right arithmetic, and counts as right.
    let from_shown = derivation
        .redone_from_shown(decimals)
        .is_some_and(|redone| is_close(answer, redone, decimals));
    if is_close(answer, exact, decimals) || from_shown {
        return Some(Verdict::Right {
            exact,
            to_decimals: None,
        });
    }
    if let Some(typed_decimals) = typed.typed_decimals.filter(|typed| *typed < decimals)
        && is_close(answer, exact, typed_decimals)
    {
        return Some(Verdict::Right {
            exact,
            to_decimals: Some(typed_decimals),
        });
    }
    let slip = slips(attention, cell)
        .into_iter()
        .filter(|(_, value)| value.is_finite() && !is_close(*value, exact, decimals))
        .find(|(_, value)| is_close(answer, *value, decimals))
        .map(|(kind, value)| Slip {
            kind,
            value,
            matrix: cell.matrix,
        });
    Some(Verdict::Wrong { exact, slip })
}

/// What each slip possible for this cell gives, nearest slip first (the order of precedence):
/// the slips of the cell's own operation, then those of the operations before it, latest first,
/// each run by the engine in the right way's place (`Attention::with_variant`).
fn slips(attention: &Attention, cell: Cell) -> Vec<(SlipKind, f64)> {
    let target = cell.matrix;
    let mut slips = Vec::new();
    for source in lineage(attention, target) {
        let Some(origin) = attention.plan.origin(source) else {
            continue;
        };
        for variant in Variant::of(origin) {
            // A gradient is checked for the backward pass's own slips only: a forward slip
            // (swapped query and key, another group) has words for forward matrices, and a
            // gradient made from a forward slip is no mistake anyone makes in the backward pass.
            if target.backward()
                && !(source.backward()
                    && matches!(
                        variant,
                        Variant::DiagonalOnly | Variant::NotTransposed | Variant::SkipScale
                    ))
            {
                continue;
            }
            let kind = SlipKind::of(*variant, origin);
            if !kind.carries(source, target) {
                continue;
            }
            // Past its own step, another group's keys are named only where heads share groups
            // and the header says which group a head reads: with a group per head the words
            // about groups would point at nothing on the screen.
            if kind == SlipKind::WrongGroup
                && source != target
                && attention.heads().kv >= attention.heads().query
            {
                continue;
            }
            let at = Cell {
                matrix: source,
                ..cell
            };
            // At the checked cell's token or tile: the matrices kept apart for each are made
            // anew there, whichever matrix the slip was in.
            let Some(matrices) = attention.with_variant_at(at, *variant) else {
                continue;
            };
            if let Some(value) = value_in(&matrices, attention.heads(), cell) {
                slips.push((kind, value));
            }
        }
    }
    slips
}

/// A matrix and every matrix it is computed from, the matrix first and then the others from
/// the latest computed back.
fn lineage(attention: &Attention, target: MatrixName) -> Vec<MatrixName> {
    let mut lineage = vec![target];
    for &name in attention.plan.order().iter().rev() {
        let feeds = lineage.iter().any(|later| {
            attention
                .plan
                .origin(*later)
                .is_some_and(|origin| origin.operands().contains(&name))
        });
        if feeds && !lineage.contains(&name) {
            lineage.push(name);
        }
    }
    lineage
}
