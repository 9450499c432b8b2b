//! What several kinds of working write alike: the decimals of a number a whole step shares
//! (√d_k, a softmax row's Σ), and a token or a position in words.

use super::Labels;
use super::landing::EXTRA_OPERAND_DECIMALS;
use super::number::format_magnitude;
use crate::matrices::{Axis, MatrixName};

/// Decimals a number one step shares (√d_k, a row's Σ) may be given beyond the lesson's for
/// its cells to write it alike. A cell whose result lies a hair from a rounding boundary can
/// need six more; it alone then writes the shared number longer, rather than every cell.
const SHARED_EXTRA_DECIMALS: usize = 2;

/// The most cells a step's working looks over to write every cell alike.
pub(super) const WHOLE_STEP_CELLS: usize = 1024;

/// The decimals to write a number the cells of a step share with (√d_k, a softmax row's Σ):
/// of the lesson's and up to `SHARED_EXTRA_DECIMALS` more, the fewest with which the most cells
/// land, each cell's own operand taking the decimals it needs. `lands(cell, shared, own)` says
/// whether cell `cell`'s arithmetic lands with the shared number at `shared` decimals and its
/// own operand at `own`.
pub(super) fn shared_digits(
    decimals: usize,
    cells: usize,
    lands: impl Fn(usize, usize, usize) -> bool,
) -> usize {
    let landing = |shared: usize| {
        (0..cells)
            .filter(|&cell| {
                (decimals..=decimals + EXTRA_OPERAND_DECIMALS).any(|own| lands(cell, shared, own))
            })
            .count()
    };
    let mut best = (decimals, landing(decimals));
    for shared in decimals + 1..=decimals + SHARED_EXTRA_DECIMALS {
        if best.1 == cells {
            break;
        }
        let count = landing(shared);
        if count > best.1 {
            best = (shared, count);
        }
    }
    best.0
}

/// The decimals a cell writes its own operand and the number its step shares: the shared
/// number's `shared` and the fewest of its own that land; failing that, more of both.
pub(super) fn own_and_shared_digits(
    decimals: usize,
    shared: usize,
    lands: impl Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    (decimals..=decimals + EXTRA_OPERAND_DECIMALS)
        .find(|&own| lands(shared, own))
        .map(|own| (own, shared))
        .or_else(|| {
            (shared..=decimals + EXTRA_OPERAND_DECIMALS)
                .find(|&d| lands(d, d))
                .map(|d| (d, d))
        })
}

/// The digits of a cell's own operand and of the number its step shares, and its result as
/// written: `≈` and the most digits when none land.
pub(super) fn digits_written(
    found: Option<(usize, usize)>,
    decimals: usize,
    result: &str,
) -> ((usize, usize), String) {
    match found {
        Some(digits) => (digits, result.to_string()),
        None => {
            let most = decimals + EXTRA_OPERAND_DECIMALS;
            ((most, most), format!("≈ {result}"))
        }
    }
}

/// The decimals to write x with in `exp(x)` for its exponential, worked out, to be `numerator`
/// as written (at `d` decimals): the lesson's at least, more where e^x rounded differs.
pub(super) fn exponent_digits(
    x_at: impl Fn(usize) -> f64,
    decimals: usize,
    numerator: &str,
    d: usize,
) -> usize {
    (decimals..=decimals + EXTRA_OPERAND_DECIMALS)
        .find(|&e| format_magnitude(x_at(e).exp(), d) == numerator)
        .unwrap_or(decimals + EXTRA_OPERAND_DECIMALS)
}

/// "“sat”, token 3 of 6": a token by its label and its 1-based position.
pub(crate) fn token_words(labels: &dyn Labels, token: usize) -> String {
    format!(
        "“{}”, token {} of {}",
        labels.token_label(token),
        token + 1,
        labels.seq_len()
    )
}

/// "position p = 3", or in cross-attention, for a row of the source's, "source position p = 3".
pub(super) fn position_words(labels: &dyn Labels, matrix: MatrixName, position: usize) -> String {
    if is_source_row(labels, matrix) {
        format!("source position p = {position}")
    } else {
        format!("position p = {position}")
    }
}

/// ", in the source" for a row of cross-attention's source, whose positions count from its own
/// first token: empty otherwise.
pub(super) fn counted_from(labels: &dyn Labels, matrix: MatrixName) -> &'static str {
    if is_source_row(labels, matrix) {
        ", from the source's first token"
    } else {
        ""
    }
}

/// Whether a matrix's rows are cross-attention's source tokens.
fn is_source_row(labels: &dyn Labels, matrix: MatrixName) -> bool {
    labels.cross() && matrix.entry().rows == Axis::Keys
}
