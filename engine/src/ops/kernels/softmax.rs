//! Row softmax, computed stably and with its working kept for the learner.

use std::sync::Arc;

use nalgebra::{DMatrix, RealField};

/// The softmax of each row, with everything needed to explain it.
#[derive(Debug, Clone)]
pub struct RowSoftmax {
    /// The result: each row sums to 1, or is all zero when every key of that row is masked.
    pub weights: Arc<DMatrix<f64>>,
    /// The largest value of each row, subtracted before exp so that exp never overflows.
    /// -inf for a fully masked row.
    pub row_max: Vec<f64>,
    /// Σ exp(x - row max) for each row: the denominators. Each numerator is `shifted_exp` of
    /// its cell, made again when a cell is explained rather than kept for every cell.
    pub shifted_sums: Vec<f64>,
    /// Rows whose every value is -inf (every key masked): weights are zero, not NaN.
    pub fully_masked: Vec<bool>,
}

/// exp(x - row max), a softmax numerator. A hidden key's exp(-inf) is exactly 0 and is not
/// computed; neither is a row whose every key is hidden, where exp(-inf - -inf) would be NaN.
pub fn shifted_exp(value: f64, row_max: f64) -> f64 {
    if value == f64::NEG_INFINITY {
        0.0
    } else {
        (value - row_max).exp()
    }
}

/// Softmax over each row of `input`.
///
/// Subtracting the row maximum changes nothing mathematically (the factor exp(-max) cancels) but
/// keeps exp() in range: exp(1000) overflows to infinity, exp(1000 - 1000) = 1 does not.
pub fn softmax_rows(input: &DMatrix<f64>) -> RowSoftmax {
    let (rows, cols) = input.shape();
    // The matrix is stored column by column, so every pass walks a column and keeps one running
    // figure per row; each row still meets its cells left to right, as a learner adds them.
    let mut row_max = vec![f64::NEG_INFINITY; rows];
    for column in input.column_iter() {
        for (max, &value) in row_max.iter_mut().zip(column.iter()) {
            *max = max.max(value);
        }
    }
    // The numerators are written where the weights go, then divided in place.
    let mut weights = DMatrix::zeros(rows, cols);
    let mut shifted_sums = vec![0.0; rows];
    for (column, mut numerators) in input.column_iter().zip(weights.column_iter_mut()) {
        for row in 0..rows {
            let exp = shifted_exp(column[row], row_max[row]);
            numerators[row] = exp;
            shifted_sums[row] += exp;
        }
    }
    for mut column in weights.column_iter_mut() {
        for (weight, &sum) in column.iter_mut().zip(&shifted_sums) {
            // sum >= 1 when the row has a visible key (its maximum's own term is exp(0) = 1).
            if sum > 0.0 {
                *weight /= sum;
            }
        }
    }
    RowSoftmax {
        weights: Arc::new(weights),
        fully_masked: row_max
            .iter()
            .map(|&max| max == f64::NEG_INFINITY)
            .collect(),
        row_max,
        shifted_sums,
    }
}

/// The entropy of a row of weights in bits, −Σ p log₂ p: 0 when one key takes everything,
/// log₂ n when n keys share it evenly. A weight of 0 (a hidden key, or one that underflowed)
/// adds nothing, as 0 · log 0 is 0.
pub fn entropy_bits(weights: impl IntoIterator<Item = f64>) -> f64 {
    let entropy: f64 = weights
        .into_iter()
        .filter(|weight| *weight > 0.0)
        .map(|weight| -weight * weight.log2())
        .sum();
    // −0 is written "-0" by format!: a one-hot row's entropy is 0.
    entropy.max(0.0)
}

/// exp(x - row max) of every cell: the numerators, as a learner who stops before dividing has them.
pub fn shifted_exps(input: &DMatrix<f64>) -> DMatrix<f64> {
    let row_max = softmax_rows(input).row_max;
    DMatrix::from_fn(input.nrows(), input.ncols(), |row, col| {
        shifted_exp(input[(row, col)], row_max[row])
    })
}

/// The softmax's backward pass, row by row: dS = P ⊙ (dP − rowsum(P ⊙ dP)). A masked key's
/// weight is 0, and so is its gradient; a fully masked row is 0 throughout. In f64 for a
/// lesson, in f32 for the trainer (`crate::train`), which runs this same backward pass for
/// every head of its model.
pub(crate) fn softmax_backward<T: RealField + Copy>(
    weights: &DMatrix<T>,
    grad: &DMatrix<T>,
) -> DMatrix<T> {
    let mut result = DMatrix::zeros(weights.nrows(), weights.ncols());
    for row in 0..weights.nrows() {
        // Left to right, from +0.
        let dot = (0..weights.ncols()).fold(T::zero(), |sum, col| {
            sum + weights[(row, col)] * grad[(row, col)]
        });
        for col in 0..weights.ncols() {
            result[(row, col)] = weights[(row, col)] * (grad[(row, col)] - dot);
        }
    }
    result
}
