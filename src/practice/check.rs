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

use nalgebra::DMatrix;

use super::answer::Answer;
use crate::attention::{Attention, Cell, MatrixName, softmax_rows};

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
            (S::ForgotScaling, M::Scaled) => {
                "That is the score before dividing by √d_k: remember to scale."
            }
            (S::ForgotScaling, M::Masked) => {
                "That is the unscaled score: divide by √d_k before adding the mask."
            }
            (S::ForgotScaling, M::Output) => {
                "That output comes from weights of unscaled scores: divide by √d_k before softmax."
            }
            (S::ForgotScaling, _) => {
                "That is the softmax of the unscaled scores: divide by √d_k before softmax."
            }
            (S::ForgotMask, M::Masked) => {
                "That is the score before masking: this key is hidden, so it becomes -inf."
            }
            (S::ForgotMask, M::Output) => {
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
            (S::WRowNotColumn, _) => {
                "That multiplies by a row of the weight matrix: take its column instead."
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
    let exact = attention.derive(cell)?.value;
    let answer = typed.value;
    if is_close(answer, exact, decimals) {
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

/// What each slip possible for this cell gives, nearest slip first (the order of precedence).
fn slips(attention: &Attention, cell: Cell) -> Vec<(SlipKind, f64)> {
    let Cell { matrix, row, col } = cell;
    let scaled = attention.scaled.is_some();
    let masked = attention.mask.is_some();
    let mut slips = Vec::new();
    match matrix {
        MatrixName::Q | MatrixName::K | MatrixName::V => {
            if let Some(value) = projection_row_not_column(attention, cell) {
                slips.push((SlipKind::WRowNotColumn, value));
            }
        }
        MatrixName::Scores => {
            slips.push((SlipKind::SwappedQueryKey, attention.scores[(col, row)]));
        }
        MatrixName::Scaled => {
            slips.push((SlipKind::ForgotScaling, attention.scores[(row, col)]));
            slips.push((
                SlipKind::SwappedQueryKey,
                attention.scores[(col, row)] / attention.scale_divisor,
            ));
        }
        MatrixName::Masked => {
            slips.push((
                SlipKind::ForgotMask,
                Recipe::LESSON.without_mask().row(attention, row)[col],
            ));
            if scaled {
                slips.push((
                    SlipKind::ForgotScaling,
                    Recipe::LESSON.without_scaling().row(attention, row)[col],
                ));
            }
            slips.push((
                SlipKind::SwappedQueryKey,
                Recipe::LESSON.swapped().row(attention, row)[col],
            ));
        }
        MatrixName::Weights => {
            let input = attention
                .matrix(attention.softmax_input())
                .unwrap_or(&attention.scores);
            let own = input[(row, col)];
            slips.push((SlipKind::ExpNotNormalised, own.exp()));
            slips.push((
                SlipKind::ExpNotNormalised,
                (own - attention.softmax.row_max[row]).exp(),
            ));
            let column: Vec<f64> = input.column(col).iter().copied().collect();
            slips.push((SlipKind::WrongAxis, softmax(&column)[row]));
            if masked {
                slips.push((
                    SlipKind::ForgotMask,
                    Recipe::LESSON.without_mask().weights(attention, row)[col],
                ));
            }
            if scaled {
                slips.push((
                    SlipKind::ForgotScaling,
                    Recipe::LESSON.without_scaling().weights(attention, row)[col],
                ));
            }
            slips.push((
                SlipKind::SwappedQueryKey,
                Recipe::LESSON.swapped().weights(attention, row)[col],
            ));
        }
        MatrixName::Output => {
            let v = &attention.v;
            // V row c has as many numbers as a row of weights only when V is square.
            if v.nrows() == v.ncols() {
                let weights = attention.weights().row(row);
                let value = (0..v.nrows()).map(|j| weights[j] * v[(col, j)]).sum();
                slips.push((SlipKind::VRowNotColumn, value));
            }
            if masked {
                let weights = Recipe::LESSON.without_mask().weights(attention, row);
                slips.push((SlipKind::ForgotMask, weighted_sum(&weights, v, col)));
            }
            if scaled {
                let weights = Recipe::LESSON.without_scaling().weights(attention, row);
                slips.push((SlipKind::ForgotScaling, weighted_sum(&weights, v, col)));
            }
        }
        MatrixName::Embeddings
        | MatrixName::WQ
        | MatrixName::WK
        | MatrixName::WV
        | MatrixName::Mask => {}
    }
    slips
}

/// X row i · W row c for a projected cell, when W is square so that the row fits. `None` when
/// the lesson gives Q, K and V directly (nothing to compute, so nothing to slip on).
fn projection_row_not_column(attention: &Attention, cell: Cell) -> Option<f64> {
    let weights = match cell.matrix {
        MatrixName::Q => attention.w_q.as_ref()?,
        MatrixName::K => attention.w_k.as_ref()?,
        _ => attention.w_v.as_ref()?,
    };
    let x = attention.embeddings.as_ref()?;
    if weights.nrows() != weights.ncols() {
        return None;
    }
    Some(
        (0..x.ncols())
            .map(|m| x[(cell.row, m)] * weights[(cell.col, m)])
            .sum(),
    )
}

/// How a learner gets from the raw scores to the softmax input: the lesson's own way, or with
/// one stage left out or done wrong.
#[derive(Debug, Clone, Copy)]
struct Recipe {
    scale: bool,
    mask: bool,
    /// Query and key swapped: score[j][i] where score[i][j] belongs.
    swap: bool,
}

impl Recipe {
    /// Every stage the lesson has; stages it lacks are skipped whatever the recipe says.
    const LESSON: Recipe = Recipe {
        scale: true,
        mask: true,
        swap: false,
    };

    fn without_scaling(self) -> Recipe {
        Recipe {
            scale: false,
            ..self
        }
    }

    fn without_mask(self) -> Recipe {
        Recipe {
            mask: false,
            ..self
        }
    }

    fn swapped(self) -> Recipe {
        Recipe { swap: true, ..self }
    }

    /// Row `row` of the softmax input made this way.
    fn row(self, attention: &Attention, row: usize) -> Vec<f64> {
        (0..attention.scores.ncols())
            .map(|col| {
                let mut value = if self.swap {
                    attention.scores[(col, row)]
                } else {
                    attention.scores[(row, col)]
                };
                if self.scale && attention.scaled.is_some() {
                    value /= attention.scale_divisor;
                }
                if let (true, Some(mask)) = (self.mask, &attention.mask) {
                    value += mask[(row, col)];
                }
                value
            })
            .collect()
    }

    /// Row `row` of the weights made this way.
    fn weights(self, attention: &Attention, row: usize) -> Vec<f64> {
        softmax(&self.row(attention, row))
    }
}

/// The engine's own softmax on one row, so a fully hidden row gives zeros as it does there.
fn softmax(values: &[f64]) -> Vec<f64> {
    let row = DMatrix::from_row_slice(1, values.len(), values);
    softmax_rows(&row).weights.iter().copied().collect()
}

/// Σ_j weights[j] · V[j][col].
fn weighted_sum(weights: &[f64], v: &DMatrix<f64>, col: usize) -> f64 {
    weights
        .iter()
        .enumerate()
        .map(|(j, weight)| weight * v[(j, col)])
        .sum()
}
