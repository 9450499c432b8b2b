//! The matrix product as the engine sums it: on every core for a large lesson, and row by row
//! in the order a step of generation sums its one row, so the whole pass's rows and each
//! step's agree to the bit.

use nalgebra::{DMatrix, DMatrixView};

/// The narrowest band of columns worth a core of its own (and far wider than nalgebra's small
/// products, see `product`).
const MIN_BAND: usize = 64;

/// nalgebra's `SMALL_DIM`: a product with a side this short or shorter is not matrixmultiply's.
const NALGEBRA_SMALL: usize = 5;

/// left · right, on every core when `every_core`: each core computes a band of the result's
/// columns (left · a band of right's columns), which gives the same numbers as one product.
/// `in_step_order`: each row summed as `row_product` sums it (`rows_product`), not by
/// matrixmultiply.
pub(crate) fn product(
    left: DMatrixView<'_, f64>,
    right: DMatrixView<'_, f64>,
    every_core: bool,
    in_step_order: bool,
) -> DMatrix<f64> {
    // Operands that do not fit (only a slip's can) give no matrix rather than a panic.
    if left.ncols() != right.nrows() {
        return DMatrix::zeros(0, 0);
    }
    if left.nrows() == 1 {
        return row_product(left, right);
    }
    let multiply = |right: DMatrixView<'_, f64>| {
        if in_step_order {
            rows_product(left, right)
        } else {
            left * right
        }
    };
    let threads = crate::parallel::cores();
    let width = right.ncols().div_ceil(threads.max(1));
    // nalgebra hands a product to matrixmultiply only when every side is longer than 5, and
    // adds a narrower one column by column, which rounds differently: every band, and the
    // whole, must take the same road for the numbers to be the same on any number of cores.
    let banded = every_core
        && threads >= 2
        && width >= MIN_BAND
        && left.nrows() > NALGEBRA_SMALL
        && left.ncols() > NALGEBRA_SMALL;
    if !banded {
        return multiply(right);
    }
    let bands = crate::parallel::each(right.ncols().div_ceil(width), true, |band| {
        let start = band * width;
        multiply(right.columns(start, width.min(right.ncols() - start)))
    });
    let mut result = DMatrix::zeros(left.nrows(), right.ncols());
    for (band, values) in bands.iter().enumerate() {
        result
            .columns_mut(band * width, values.ncols())
            .copy_from(values);
    }
    result
}

/// Columns of a one-row product summed side by side: independent sums, so they overlap.
const ROW_PRODUCT_LANES: usize = 8;

/// row · right for a one-row `row`: the same additions in the same order as nalgebra's own
/// loop, which a one-row product always takes (each column's sum from the first term on, left
/// to right, no fused multiply-add), so the numbers are the same to the bit. nalgebra's loop
/// makes a call per term; this sums several columns at once, about 40 times faster, which a
/// step of generation's projections (each token's row through W_q, W_k, W_v) are made of.
fn row_product(row: DMatrixView<'_, f64>, right: DMatrixView<'_, f64>) -> DMatrix<f64> {
    let (inner, cols) = right.shape();
    let mut result = DMatrix::zeros(1, cols);
    if inner == 0 {
        return result;
    }
    let terms: Vec<f64> = row.iter().copied().collect();
    let mut start = 0;
    while start < cols {
        let lanes = ROW_PRODUCT_LANES.min(cols - start);
        let mut sums = [0.0; ROW_PRODUCT_LANES];
        let columns: Vec<_> = (0..lanes).map(|lane| right.column(start + lane)).collect();
        for (lane, column) in columns.iter().enumerate() {
            sums[lane] = terms[0] * column[0];
        }
        for (k, term) in terms.iter().enumerate().skip(1) {
            for (lane, column) in columns.iter().enumerate() {
                sums[lane] += term * column[k];
            }
        }
        for (lane, sum) in sums.iter().take(lanes).enumerate() {
            result[(0, start + lane)] = *sum;
        }
        start += lanes;
    }
    result
}

/// left · right for many rows, each row's numbers those `row_product` gives it, to the bit:
/// every sum from its first term on, left to right, a product then a sum (never fused). A block
/// of rows and columns is summed at once from copies of its operands laid out term by term, so
/// the sums run side by side, as many to an instruction as the processor takes: with AVX-512,
/// 8 rows by 8 columns (a K cache of 256 rows by a 1024 × 64 W_k some 3 times faster than with
/// the 2 of SSE2, and that about four times faster than row by row). The instructions are chosen
/// when the program runs (`pulp`); Rust never fuses a product and a sum by itself, so every
/// choice gives the same numbers.
fn rows_product(left: DMatrixView<'_, f64>, right: DMatrixView<'_, f64>) -> DMatrix<f64> {
    #[cfg(target_arch = "x86_64")]
    match pulp::Arch::new() {
        pulp::Arch::V4(simd) => {
            return pulp::Simd::vectorize(simd, || rows_product_in::<8, 8>(left, right));
        }
        pulp::Arch::V3(simd) => {
            return pulp::Simd::vectorize(simd, || rows_product_in::<4, 8>(left, right));
        }
        _ => {}
    }
    rows_product_in::<4, 4>(left, right)
}

/// `rows_product` in blocks of `ROWS` rows by `COLUMNS` columns: as many sums as the
/// processor's registers hold side by side (AVX-512's 32 hold 8 × 8, AVX2's 16 hold 4 × 8,
/// SSE2's 16 hold 4 × 4).
#[inline(always)]
fn rows_product_in<const ROWS: usize, const COLUMNS: usize>(
    left: DMatrixView<'_, f64>,
    right: DMatrixView<'_, f64>,
) -> DMatrix<f64> {
    let (rows, inner) = left.shape();
    let cols = right.ncols();
    let mut result = DMatrix::zeros(rows, cols);
    if inner == 0 || inner != right.nrows() {
        return result;
    }
    // Each block of columns laid out term by term: term k's columns together (columns past
    // the last read 0).
    let mut packed_columns = vec![0.0; cols.div_ceil(COLUMNS) * inner * COLUMNS];
    for (block, columns) in packed_columns.chunks_exact_mut(inner * COLUMNS).enumerate() {
        let start = block * COLUMNS;
        for lane in 0..COLUMNS.min(cols - start) {
            for (k, value) in right.column(start + lane).iter().enumerate() {
                columns[k * COLUMNS + lane] = *value;
            }
        }
    }
    // Then each block of rows the same way, one at a time (it stays in the cache while every
    // block of columns is summed with it): a few neighbours down each column of `left`, the
    // way it is stored, copied at once.
    let left_columns: Vec<&[f64]> = (0..inner)
        .map(|k| left.column(k).data.into_slice())
        .collect();
    let mut terms = vec![0.0; inner * ROWS];
    for first in (0..rows).step_by(ROWS) {
        let height = ROWS.min(rows - first);
        if height < ROWS {
            terms.fill(0.0);
        }
        for (term, column) in terms.chunks_exact_mut(ROWS).zip(&left_columns) {
            // A whole block's copy is of a length known here, so no call is made for it.
            match (
                <&mut [f64; ROWS]>::try_from(&mut *term),
                <&[f64; ROWS]>::try_from(column.get(first..first + ROWS).unwrap_or(&[])),
            ) {
                (Ok(term), Ok(values)) => *term = *values,
                _ => term[..height].copy_from_slice(&column[first..first + height]),
            }
        }
        for (block, columns) in packed_columns.chunks_exact(inner * COLUMNS).enumerate() {
            let start = block * COLUMNS;
            let sums = block_sums::<ROWS, COLUMNS>(&terms, columns);
            for (row, sums) in sums.iter().enumerate().take(height) {
                for (lane, sum) in sums.iter().enumerate().take(COLUMNS.min(cols - start)) {
                    result[(first + row, start + lane)] = *sum;
                }
            }
        }
    }
    result
}

/// The sums of a block of rows by a block of columns, each laid out term by term
/// (`rows_product`).
#[inline(always)]
fn block_sums<const ROWS: usize, const COLUMNS: usize>(
    terms: &[f64],
    columns: &[f64],
) -> [[f64; COLUMNS]; ROWS] {
    let mut sums = [[0.0; COLUMNS]; ROWS];
    let mut pairs = terms.chunks_exact(ROWS).zip(columns.chunks_exact(COLUMNS));
    if let Some((row, column)) = pairs.next() {
        for (sums, term) in sums.iter_mut().zip(row) {
            for (sum, value) in sums.iter_mut().zip(column) {
                *sum = term * value;
            }
        }
    }
    for (row, column) in pairs {
        for (sums, term) in sums.iter_mut().zip(row) {
            for (sum, value) in sums.iter_mut().zip(column) {
                *sum += term * value;
            }
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_row_product_gives_nalgebras_numbers_to_the_bit() {
        // Sums that round differently in another order, signed zeros and infinities.
        let value = |i: usize| match i % 13 {
            0 => 0.1,
            1 => -0.0,
            2 => 1e16,
            3 => -1e16,
            4 => 3.3,
            5 => f64::INFINITY,
            _ => ((i * 7919) % 101) as f64 / 7.0 - 7.0 + (i as f64).sqrt() * 1e-9,
        };
        for (inner, cols) in [(1, 1), (3, 2), (40, 9), (1024, 17), (6, 64)] {
            let row = DMatrix::from_fn(1, inner, |_, k| value(k * 3 + 1));
            let right = DMatrix::from_fn(inner, cols, |k, j| value(k * 31 + j * 5));
            let wide = DMatrix::from_fn(inner, cols + 3, |k, j| value(k * 31 + j * 5));
            for right in [right.as_view(), wide.columns(0, cols)] {
                let ours = row_product(row.as_view(), right);
                let theirs = &row * right;
                let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&ours), bits(&theirs), "{inner} × {cols}");
            }
        }
    }

    #[test]
    fn rows_made_together_are_each_rows_own_product_to_the_bit() {
        let value = |i: usize| match i % 11 {
            0 => 0.1,
            1 => -0.0,
            2 => 1e16,
            3 => -1e16,
            4 => f64::NEG_INFINITY,
            _ => ((i * 7919) % 101) as f64 / 7.0 - 7.0 + (i as f64).sqrt() * 1e-9,
        };
        let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        // Blocks that fit, rows and columns left over, one term, no term; the rows read from
        // the middle of a taller matrix, as a cache's are read from X. Every block shape is
        // tried, and the one this processor's instructions are chosen for (`rows_product`).
        let shapes = [
            (8, 64, 8),
            (7, 33, 9),
            (1, 5, 3),
            (13, 1, 6),
            (3, 0, 2),
            (17, 40, 19),
        ];
        for (rows, inner, cols) in shapes {
            let tall = DMatrix::from_fn(rows + 5, inner, |i, k| value(i * 17 + k * 3 + 1));
            let left = tall.rows(2, rows);
            let wide = DMatrix::from_fn(inner, cols + 2, |k, j| value(k * 31 + j * 5));
            let right = wide.columns(1, cols);
            let ways = [
                ("as chosen", rows_product(left, right)),
                ("4 × 4", rows_product_in::<4, 4>(left, right)),
                ("4 × 8", rows_product_in::<4, 8>(left, right)),
                ("8 × 8", rows_product_in::<8, 8>(left, right)),
            ];
            for (way, together) in ways {
                assert_eq!(together.shape(), (rows, cols));
                for row in 0..rows {
                    let alone = row_product(left.rows(row, 1), right);
                    assert_eq!(
                        bits(&together.rows(row, 1).into_owned()),
                        bits(&alone),
                        "{rows} × {inner} × {cols}, row {row}, blocks {way}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_product_on_every_core_gives_the_same_numbers_as_on_one() {
        let left = DMatrix::from_fn(37, 300, |row, col| {
            ((row * 31 + col * 17) % 23) as f64 / 7.0 - 1.5
        });
        // Wide enough for bands on two cores; and narrow enough that bands of 5 columns or
        // fewer would leave matrixmultiply for nalgebra's own loop, which rounds otherwise.
        for columns in [300, 9] {
            let right = DMatrix::from_fn(300, columns, |row, col| {
                ((row * 13 + col * 29) % 19) as f64 / 3.0 - 2.5 + (row as f64).sqrt() / 7.0
            });
            let one = product(left.as_view(), right.as_view(), false, false);
            assert_eq!(
                product(left.as_view(), right.as_view(), true, false),
                one,
                "{columns}"
            );
            assert_eq!(one, &left * &right);
            // Summed as the steps of generation sum their rows, on one core or many.
            let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            let in_order = rows_product(left.as_view(), right.as_view());
            for every_core in [false, true] {
                let made = product(left.as_view(), right.as_view(), every_core, true);
                assert_eq!(bits(&made), bits(&in_order), "{columns}, {every_core}");
            }
        }
    }
}
