//! Row softmax, computed stably and with its working kept for the learner.

use nalgebra::DMatrix;

/// The softmax of each row, with everything needed to explain it.
#[derive(Debug, Clone)]
pub struct RowSoftmax {
    /// The result: each row sums to 1, or is all zero when every key of that row is masked.
    pub weights: DMatrix<f64>,
    /// The largest value of each row, subtracted before exp so that exp never overflows.
    /// -inf for a fully masked row.
    pub row_max: Vec<f64>,
    /// exp(x - row max) for each cell: the numerators.
    pub shifted_exps: DMatrix<f64>,
    /// Σ exp(x - row max) for each row: the denominators.
    pub shifted_sums: Vec<f64>,
    /// Rows whose every value is -inf (every key masked): weights are zero, not NaN.
    pub fully_masked: Vec<bool>,
}

/// Softmax over each row of `input`.
///
/// Subtracting the row maximum changes nothing mathematically (the factor exp(-max) cancels) but
/// keeps exp() in range: exp(1000) overflows to infinity, exp(1000 - 1000) = 1 does not.
pub fn softmax_rows(input: &DMatrix<f64>) -> RowSoftmax {
    let (rows, cols) = input.shape();
    let mut weights = DMatrix::zeros(rows, cols);
    let mut shifted_exps = DMatrix::zeros(rows, cols);
    let mut row_max = Vec::with_capacity(rows);
    let mut shifted_sums = Vec::with_capacity(rows);
    let mut fully_masked = Vec::with_capacity(rows);
    for row in 0..rows {
        let max = input
            .row(row)
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        row_max.push(max);
        if max == f64::NEG_INFINITY {
            // Every key is hidden: there is nothing to attend to. A zero row is the honest answer;
            // exp(-inf - -inf) would be NaN.
            shifted_sums.push(0.0);
            fully_masked.push(true);
            continue;
        }
        let mut sum = 0.0;
        for col in 0..cols {
            let exp = (input[(row, col)] - max).exp();
            shifted_exps[(row, col)] = exp;
            sum += exp;
        }
        // sum >= 1 because the maximum's own term is exp(0) = 1, so the division is always safe.
        for col in 0..cols {
            weights[(row, col)] = shifted_exps[(row, col)] / sum;
        }
        shifted_sums.push(sum);
        fully_masked.push(false);
    }
    RowSoftmax {
        weights,
        row_max,
        shifted_exps,
        shifted_sums,
        fully_masked,
    }
}
