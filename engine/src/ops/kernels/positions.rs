//! Positions in numbers: the sinusoidal encodings and the rotations of RoPE.

use nalgebra::DMatrix;

use crate::matrices::{Rope, RopePairing};
use crate::ops::Variant;

/// The angle of position `p` in column pair `i` of a sinusoidal encoding d_model wide:
/// p / 10000^(2i/d_model).
pub fn sinusoid_angle(position: usize, pair: usize, d_model: usize) -> f64 {
    position as f64 / 10000f64.powf(2.0 * pair as f64 / d_model as f64)
}

/// PE[p, c] = sin(angle) for even c, cos(angle) for odd c, with i = ⌊c/2⌋ (Vaswani et al. 2017).
pub fn sinusoidal(seq_len: usize, d_model: usize) -> DMatrix<f64> {
    sinusoidal_as(seq_len, d_model, None)
}

/// The sinusoidal encoding made the right way, or as a learner's `slip` makes it.
pub fn sinusoidal_as(seq_len: usize, d_model: usize, slip: Option<Variant>) -> DMatrix<f64> {
    DMatrix::from_fn(seq_len, d_model, |row, col| {
        let (position, pair) = read(slip, row, col);
        let angle = sinusoid_angle(position, pair, d_model);
        let sine = (col % 2 == 0) != (slip == Some(Variant::SinCosSwapped));
        if sine { angle.sin() } else { angle.cos() }
    })
}

/// The angle φ that RoPE turns pair `i` of a row at position `p` by: p · θ^(−2i/d_k).
pub fn rope_angle(position: usize, pair: usize, d_k: usize, theta: f64) -> f64 {
    position as f64 * theta.powf(-2.0 * pair as f64 / d_k as f64)
}

/// Every row at position p (its 0-based index) rotated pairwise (RoFormer, Su et al. 2021):
/// (a, b) → (a cos φ − b sin φ, a sin φ + b cos φ), where a and b are the pair's columns as
/// `rope.pairing` makes them. A lesson's d_k is even; were it odd, the column with no partner
/// would be left as it is.
pub fn rotate_rows(matrix: &DMatrix<f64>, rope: Rope) -> DMatrix<f64> {
    rotate_rows_as(matrix, 0, rope, None)
}

/// The rotation made the right way, or as a learner's `slip` makes it, of rows whose first is
/// at position `first` (a step of generation's one row is at its token's position).
pub fn rotate_rows_as(
    matrix: &DMatrix<f64>,
    first: usize,
    rope: Rope,
    slip: Option<Variant>,
) -> DMatrix<f64> {
    let d_k = matrix.ncols();
    let mut rotated = matrix.clone();
    // Only this slip turns the two cells of a pair by different angles (see `turn`).
    let by_column = slip == Some(Variant::ExponentByColumn) && rope.pairing == RopePairing::Half;
    for row in 0..matrix.nrows() {
        for pair in 0..d_k / 2 {
            let (a_col, b_col) = rope.pairing.columns(pair, d_k);
            let (a, b) = (matrix[(row, a_col)], matrix[(row, b_col)]);
            let (sin, cos) = turn(rope, slip, first + row, (pair, a_col), d_k);
            rotated[(row, a_col)] = a * cos - b * sin;
            let (sin, cos) = if by_column {
                turn(rope, slip, first + row, (pair, b_col), d_k)
            } else {
                (sin, cos)
            };
            rotated[(row, b_col)] = a * sin + b * cos;
        }
    }
    rotated
}

/// sin φ and cos φ for the cell in column `col` of pair `pair` at position `position`, as a
/// `slip` makes them. The column put in the exponent is the cell's own: with pairs side by
/// side that is taken as the pair's first column, 2i, for both (a learner writing c for i);
/// with rotate-half the second of a pair is column i + d_k/2, so its angle differs.
fn turn(
    rope: Rope,
    slip: Option<Variant>,
    position: usize,
    (pair, col): (usize, usize),
    d_k: usize,
) -> (f64, f64) {
    let position = if slip == Some(Variant::PositionsFromOne) {
        position + 1
    } else {
        position
    };
    let exponent = match (slip, rope.pairing) {
        (Some(Variant::ExponentByColumn), RopePairing::Interleaved) => 2 * pair,
        (Some(Variant::ExponentByColumn), RopePairing::Half) => col,
        _ => pair,
    };
    let (mut sin, mut cos) = rope_angle(position, exponent, d_k, rope.theta).sin_cos();
    if slip == Some(Variant::RotatedBackwards) {
        sin = -sin;
    }
    if slip == Some(Variant::SinCosSwapped) {
        (sin, cos) = (cos, sin);
    }
    (sin, cos)
}

/// The position and the pair index that go into the angle of row `row`, column `col`: p = row
/// and i = ⌊col/2⌋, unless a slip counts positions from 1 or puts the column in the exponent.
fn read(slip: Option<Variant>, row: usize, col: usize) -> (usize, usize) {
    let position = if slip == Some(Variant::PositionsFromOne) {
        row + 1
    } else {
        row
    };
    let pair = if slip == Some(Variant::ExponentByColumn) {
        col
    } else {
        col / 2
    };
    (position, pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_position_is_sin_0_and_cos_0() {
        let encoding = sinusoidal(2, 4);
        assert_eq!(
            encoding.row(0).iter().copied().collect::<Vec<_>>(),
            [0.0, 1.0, 0.0, 1.0]
        );
        assert_eq!(encoding[(1, 0)], 1f64.sin());
        assert_eq!(encoding[(1, 3)], 0.01f64.cos());
    }

    #[test]
    fn rotated_dot_products_depend_only_on_the_distance() {
        let q = DMatrix::from_row_slice(1, 4, &[0.3, -1.2, 0.7, 2.0]);
        let k = DMatrix::from_row_slice(1, 4, &[1.1, 0.4, -0.5, 0.9]);
        let at = |row: &DMatrix<f64>, position: usize| {
            let mut rows = DMatrix::zeros(position + 1, 4);
            rows.set_row(position, &row.row(0));
            rotate_rows(&rows, Rope::default())
                .row(position)
                .into_owned()
        };
        let near = at(&q, 2).dot(&at(&k, 5));
        let far = at(&q, 7).dot(&at(&k, 10));
        assert!((near - far).abs() < 1e-12, "{near} vs {far}");
    }
}
