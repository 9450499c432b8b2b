//! The backward pass against finite differences: the loss's slope along a random direction U
//! through every input matrix M whose gradient dM the backward pass works out, measured with
//! central finite differences of loss-only forward passes, against Σ dM ⊙ U from the backward
//! pass; when they disagree, each input alone along its own direction, to name the wrong
//! gradient. `check` runs it on every lesson with a backward pass.
//!
//! A direction instead of one cell at a time: every cell takes part, at the cost of at most 20
//! forward passes whatever the lesson's size (a 128-token lesson of 512 × 512 weights took 800
//! passes with backward steps, and 11.6 s, for 400 sampled cells). A wrong dM is off along
//! almost every direction: the chance that a Gaussian U hides an error e (|e·U| under a
//! tolerance τ) is about 0.8·τ/‖e‖.

use std::sync::Arc;

use nalgebra::DMatrix;

use super::{Attention, MatrixName};
use crate::lesson::{Generator, Lesson, RandomKind};
use crate::pipeline::Per;

/// The first step along a direction, in units of U (whose cells have the spread of M's): each
/// cell of M moves by about a thousandth of its matrix's size.
const FIRST_STEP: f64 = 1e-3;

/// Each next step is this much smaller: the error of a central difference falls as the step
/// squared, 16 times per step, until rounding takes over.
pub const SHRINK: f64 = 4.0;

/// At most this many steps per direction (two forward passes each): down to 1e-3 / 4⁹ ≈ 4e-9,
/// for a lesson whose softmax turns sharply (scores in the hundreds, where a step of 1e-3
/// moves a score by more than 1).
const MAX_STEPS: usize = 10;

/// Two steps whose slopes agree to this fraction of the slope's size are close enough: the
/// check then resolves a gradient to 1 part in 10⁸, far finer than any wrong formula (a
/// missing 1/√d_k, a head left out, a transpose), and more steps would cost passes for nothing.
const RESOLVED: f64 = 1e-8;

/// How many times the estimated error of the finite differences the two slopes may differ by.
/// The estimate is the change between the slopes at the last two steps. While the steps are
/// large enough for rounding not to matter it is about 15 times the error of the finer slope,
/// and the extrapolated slope compared is closer still; once rounding dominates, the change can
/// by chance be smaller than the error, which the rounding allowance below covers.
pub const SAFETY: f64 = 10.0;

/// The rounding allowance, in units of machine epsilon times the sizes involved (Σ|terms| of
/// the loss and Σ|dM ⊙ M| per unit of step, and the backward pass's Σ|dM ⊙ U|). A forward
/// pass's loss is a sum of seq_len × d_out products, each made through sums of up to 1024
/// terms, an exponential and a division, each of which rounds; a strict bound would grow with
/// every sum's length and allow errors far larger than happen. The factor is measured instead:
/// on 2,000 random lessons of the kinds `tests/it/backward.rs` draws (it keeps 100) the slopes
/// differed by at most 1.6 of these units where rounding, not the step, set the difference, and
/// on the 128 × 512 and 256 × 1024 lessons of the README's table by under 0.01; 64 leaves a
/// margin of 40.
const ROUNDING: f64 = 64.0;

/// The seed of the first input's direction; the next inputs take the next seeds, so a check is
/// the same on every run and every machine.
const DIRECTION_SEED: u64 = 0x6772_6164;

/// How the backward pass's gradients compared with finite differences along one direction.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectionCheck {
    /// The inputs nudged together (`w_q`), and their gradients' symbols (`dW_q`).
    pub inputs: Vec<MatrixName>,
    pub gradients: Vec<String>,
    /// The inputs' cells: every one moves along the direction.
    pub cells: usize,
    /// Σ dM ⊙ U over the inputs, from the backward pass.
    pub backward: f64,
    /// The same slope from central finite differences of L, extrapolated from the last two
    /// steps (Richardson).
    pub numeric: f64,
    /// The finer of the two steps, in units of U.
    pub step: f64,
    /// The estimated error of `numeric`: how far the slopes at the last two steps differ.
    pub noise: f64,
    /// The allowance for float rounding in the losses, the nudged cells and the backward pass.
    pub rounding: f64,
    /// The largest difference taken as agreement: `SAFETY` × noise + rounding.
    pub tolerance: f64,
}

impl DirectionCheck {
    pub fn difference(&self) -> f64 {
        (self.backward - self.numeric).abs()
    }

    pub fn agrees(&self) -> bool {
        // A NaN anywhere disagrees.
        self.difference() <= self.tolerance
    }
}

/// How the gradients compared: every input's together along one direction, and when that
/// disagrees each input alone along its own, to name the gradient that is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct GradientCheck {
    pub together: DirectionCheck,
    /// One per input, made only when `together` disagrees.
    pub each: Vec<DirectionCheck>,
    /// Forward passes made.
    pub passes: usize,
}

impl GradientCheck {
    pub fn agrees(&self) -> bool {
        self.together.agrees()
    }
}

/// The gradient matrix of `input`, as the plan's backward pass makes it; for a matrix of every
/// head side by side (W_q), one per head or group (dW_q of each head), which
/// `engine_gradients` lays side by side again.
fn gradient_of(attention: &Attention, input: MatrixName) -> Option<MatrixName> {
    let gradient = attention.plan.gradient_of(input)?;
    attention.has(gradient).then_some(gradient)
}

/// The backward pass's gradient of each input it works one out for, laid out as the input
/// (every head's block side by side, as the lesson file has W_q), with the gradient's symbol.
pub fn engine_gradients(
    lesson: &Lesson,
    attention: &Attention,
) -> Vec<(MatrixName, String, DMatrix<f64>)> {
    let heads = lesson.heads;
    lesson
        .inputs()
        .into_iter()
        .filter_map(|(input, values)| {
            let gradient = gradient_of(attention, input)?;
            let (rows, cols) = values.values.shape();
            let blocks = match gradient.per() {
                Per::Lesson => 1,
                Per::QueryHead => heads.query,
                Per::KvGroup => heads.kv,
            }
            .max(1);
            let width = cols / blocks;
            let mut laid_out = DMatrix::zeros(rows, cols);
            for block in 0..blocks {
                let head = heads.head_of_slot(gradient.per(), block);
                let matrix = attention.matrix_in(gradient, head)?;
                if matrix.shape() != (rows, width) {
                    return None;
                }
                laid_out.columns_mut(block * width, width).copy_from(matrix);
            }
            Some((input, attention.symbol(gradient).to_string(), laid_out))
        })
        .collect()
}

/// Compares the gradients of a lesson with a backward pass with central finite differences;
/// `None` without one. `attention` is the lesson's own engine, whose gradients are checked.
pub fn check_gradients(lesson: &Lesson, attention: &Attention) -> Option<GradientCheck> {
    if !lesson.shape().backward {
        return None;
    }
    attention.loss()?;
    let gradients = engine_gradients(lesson, attention);
    compare_gradients(lesson, &gradients)
}

/// Compares `gradients` (one per input, laid out as the input) with central finite differences
/// of the lesson's loss: what `check_gradients` does with the engine's, open to any other (a
/// test's deliberately wrong one). `None` without a backward pass.
pub fn compare_gradients(
    lesson: &Lesson,
    gradients: &[(MatrixName, String, DMatrix<f64>)],
) -> Option<GradientCheck> {
    let directions = directions(lesson, gradients)?;
    let mut parts = Vec::with_capacity(gradients.len());
    for ((input, symbol, gradient), direction) in gradients.iter().zip(directions) {
        let original = lesson.input(*input)?.values.clone();
        if gradient.shape() != original.shape() {
            return None;
        }
        parts.push(Part {
            input: *input,
            symbol,
            gradient,
            original,
            direction,
        });
    }
    let mut nudger = Nudger {
        forward: lesson.clone(),
        grad_output: lesson.grad_output.as_ref()?.values.clone(),
        passes: 0,
    };
    // The nudged passes are forward only: the loss is Σ output ⊙ grad_output, which needs no
    // gradient. A lesson without grad_output has no backward steps to compute.
    nudger.forward.grad_output = None;
    let all: Vec<&Part> = parts.iter().collect();
    let together = nudger.measure(&all)?;
    let each = if together.agrees() {
        Vec::new()
    } else {
        parts
            .iter()
            .map(|part| nudger.measure(&[part]))
            .collect::<Option<_>>()?
    };
    Some(GradientCheck {
        together,
        each,
        passes: nudger.passes,
    })
}

/// The random direction U of each input that `compare_gradients` nudges it along: Gaussian,
/// scaled by the spread of the input's own numbers (1 for a matrix of zeros), so a step moves
/// every cell by the same part of its matrix's size; drawn from a fixed seed per input, so a
/// check is the same on every run and every machine.
pub fn directions(
    lesson: &Lesson,
    gradients: &[(MatrixName, String, DMatrix<f64>)],
) -> Option<Vec<DMatrix<f64>>> {
    gradients
        .iter()
        .enumerate()
        .map(|(index, (input, _, _))| {
            let values = &lesson.input(*input)?.values;
            let (rows, cols) = values.shape();
            let spread = (values.norm_squared() / (rows * cols).max(1) as f64).sqrt();
            let spread = if spread > 0.0 && spread.is_finite() {
                spread
            } else {
                1.0
            };
            let direction = Generator {
                kind: RandomKind::Normal,
                seed: DIRECTION_SEED + index as u64,
                rows,
                cols,
            }
            .generate();
            Some(direction * spread)
        })
        .collect()
}

/// One input, its gradient and its direction.
struct Part<'a> {
    input: MatrixName,
    symbol: &'a str,
    gradient: &'a DMatrix<f64>,
    original: Arc<DMatrix<f64>>,
    direction: DMatrix<f64>,
}

/// The lesson without its backward pass, whose inputs are nudged along directions.
struct Nudger {
    forward: Lesson,
    grad_output: Arc<DMatrix<f64>>,
    passes: usize,
}

impl Nudger {
    /// L with every part's input at M + t·U. Each nudged matrix is written into the same buffer
    /// every pass: the engine shares it and lets it go when dropped.
    fn loss_at(&mut self, parts: &[&Part], t: f64) -> (f64, f64) {
        self.passes += 1;
        for part in parts {
            if let Some(nudged) = self.forward.input_mut(part.input) {
                let values = Arc::make_mut(&mut nudged.values);
                values.zip_zip_apply(&part.original, &part.direction, |value, m, u| {
                    *value = m + t * u
                });
            }
        }
        loss_only(&self.forward, &self.grad_output)
    }

    /// The slope of L along the parts' directions, measured at shrinking steps until two agree
    /// (or rounding takes over), against the backward pass's Σ dM ⊙ U.
    fn measure(&mut self, parts: &[&Part]) -> Option<DirectionCheck> {
        let backward: f64 = parts.iter().map(|p| p.gradient.dot(&p.direction)).sum();
        // Σ |dM ⊙ U| and Σ |dM ⊙ M|: the sizes of the backward pass's own sum and of the
        // rounding of M + t·U.
        let backward_size: f64 = parts
            .iter()
            .map(|p| {
                p.gradient
                    .zip_fold(&p.direction, 0.0, |sum, g, u| sum + (g * u).abs())
            })
            .sum();
        let nudge_size: f64 = parts
            .iter()
            .map(|p| {
                p.gradient
                    .zip_fold(&p.original, 0.0, |sum, g, m| sum + (g * m).abs())
            })
            .sum();
        let mut step = FIRST_STEP;
        let mut coarse: Option<f64> = None;
        let mut best: Option<DirectionCheck> = None;
        let mut last_noise = f64::INFINITY;
        let mut was_converging = false;
        for _ in 0..MAX_STEPS {
            let ((up, up_size), (down, down_size)) =
                (self.loss_at(parts, step), self.loss_at(parts, -step));
            let fine = (up - down) / (2.0 * step);
            // Rounding: each of the two losses is off by up to ROUNDING·ε·Σ|its terms|, and
            // each nudged cell by half an ulp of M's (ε·|M|, which moves L by up to
            // ε·Σ|dM ⊙ M|); the central difference divides the two errors by 2t. The backward
            // pass's gradient and its Σ dM ⊙ U round too.
            let rounding = f64::EPSILON
                * ROUNDING
                * ((up_size.max(down_size) + nudge_size) / step + backward_size);
            if let Some(coarse) = coarse {
                // Richardson: the error falls as t², so the coarse slope's error is 16 times
                // the fine one's, and (16·fine − coarse)/15 cancels it.
                let ratio = SHRINK * SHRINK;
                let numeric = (ratio * fine - coarse) / (ratio - 1.0);
                let noise = (fine - coarse).abs();
                let candidate = DirectionCheck {
                    inputs: parts.iter().map(|p| p.input).collect(),
                    gradients: parts.iter().map(|p| p.symbol.to_string()).collect(),
                    cells: parts.iter().map(|p| p.original.len()).sum(),
                    backward,
                    numeric,
                    step,
                    noise,
                    rounding,
                    tolerance: SAFETY * noise + rounding,
                };
                let tighter = best
                    .as_ref()
                    .is_none_or(|best| candidate.tolerance < best.tolerance);
                if tighter || candidate.tolerance.is_nan() {
                    best = Some(candidate);
                }
                // Done when the steps agree well enough, when rounding now outweighs what a
                // smaller step would gain, or when shrinking stopped helping after it had begun
                // to (the change fell by 8 or more, near the 16 of a step small enough): with
                // steps still too large for the curve, the change may rise before it falls.
                let size = backward.abs().max(numeric.abs());
                let converging = last_noise.is_finite() && noise * 8.0 <= last_noise;
                if noise <= RESOLVED * size
                    || SAFETY * noise <= rounding
                    || (was_converging && noise >= last_noise)
                {
                    break;
                }
                was_converging = converging;
                last_noise = noise;
            }
            coarse = Some(fine);
            step /= SHRINK;
        }
        // The next direction starts from the lesson's own numbers.
        for part in parts {
            if let Some(nudged) = self.forward.input_mut(part.input) {
                nudged.values = Arc::clone(&part.original);
            }
        }
        best
    }
}

/// The loss L = Σ output ⊙ grad_output of a forward pass of `lesson` (which has no backward
/// pass), and Σ |output ⊙ grad_output|, the size its rounding is measured against.
fn loss_only(lesson: &Lesson, grad_output: &DMatrix<f64>) -> (f64, f64) {
    let attention = Attention::compute(lesson);
    match attention.matrix(attention.plan.final_output()) {
        Some(output) if output.shape() == grad_output.shape() => (
            output.dot(grad_output),
            output.zip_fold(grad_output, 0.0, |sum, o, g| sum + (o * g).abs()),
        ),
        _ => (f64::NAN, f64::NAN),
    }
}
