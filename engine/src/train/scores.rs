//! What shows the induction circuit forming, measured on repeated sequences (a half of
//! `length` symbols, then the same again):
//!
//! - a layer-1 head's **induction score**: the mean attention from a token of the second half,
//!   at position length + i, to the token after its earlier copy, at i + 1: the head looks up
//!   what came next last time;
//! - a layer-0 head's **previous-token score**: the mean attention from each position t ≥ 1 to
//!   t − 1, which writes into each token what preceded it, so that layer 1's keys can be
//!   matched on it (K-composition);
//! - the loss on the first half (random symbols: about ln(vocabulary) at best) against the
//!   second half's, which induction can predict.

use nalgebra::DMatrix;
use serde::Serialize;

use super::config::LAYERS;
use super::data::Batch;
use super::forward::Forward;
use super::model::{Model, Real};

/// The layer whose heads are scored for induction, and the one scored for the previous token.
pub const INDUCTION_LAYER: usize = LAYERS - 1;
pub const PREVIOUS_TOKEN_LAYER: usize = 0;

/// One sequence's induction score: the mean of `pattern[length + i][i + 1]` for i from 0 to
/// length − 2, the second half's positions the pattern has (its last symbol is only a target).
pub fn induction_score<T: Real>(pattern: &DMatrix<T>, length: usize) -> f64 {
    let scored: Vec<f64> = (0..length.saturating_sub(1))
        .filter(|i| length + i < pattern.nrows())
        .map(|i| pattern[(length + i, i + 1)].as_f64())
        .collect();
    mean(&scored)
}

/// One sequence's previous-token score: the mean of `pattern[t][t − 1]` for every t ≥ 1.
pub fn previous_token_score<T: Real>(pattern: &DMatrix<T>) -> f64 {
    let scored: Vec<f64> = (1..pattern.nrows())
        .map(|t| pattern[(t, t - 1)].as_f64())
        .collect();
    mean(&scored)
}

/// Each layer-1 head's induction score on a forward pass over repeated sequences of half
/// `length`, averaged over its sequences.
pub fn induction_scores<T: Real>(forward: &Forward<T>, length: usize) -> Vec<f64> {
    per_head(forward, INDUCTION_LAYER, |pattern| {
        induction_score(pattern, length)
    })
}

/// Each layer-0 head's previous-token score on a forward pass, averaged over its sequences.
pub fn previous_token_scores<T: Real>(forward: &Forward<T>) -> Vec<f64> {
    per_head(forward, PREVIOUS_TOKEN_LAYER, previous_token_score)
}

fn per_head<T: Real>(
    forward: &Forward<T>,
    layer: usize,
    score: impl Fn(&DMatrix<T>) -> f64,
) -> Vec<f64> {
    let heads = forward.patterns[layer].len() / forward.sequences.max(1);
    (0..heads)
        .map(|head| {
            let scores: Vec<f64> = (0..forward.sequences)
                .map(|sequence| score(forward.pattern(layer, sequence, head)))
                .collect();
            mean(&scores)
        })
        .collect()
}

/// The mean loss of the positions of each half: positions before `length` predict the next
/// random symbol (the last of them the first repeated one, which nothing foretells), positions
/// from `length` on predict a symbol they have seen. (first half, second half).
pub fn half_losses<T: Real>(token_losses: &[T], tokens: usize, length: usize) -> (f64, f64) {
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for (row, loss) in token_losses.iter().enumerate() {
        if row % tokens < length {
            first.push(loss.as_f64());
        } else {
            second.push(loss.as_f64());
        }
    }
    (mean(&first), mean(&second))
}

/// A model measured on fresh repeated sequences of one length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    /// The half-length of the sequences measured.
    pub length: usize,
    pub sequences: usize,
    /// The mean loss over every position.
    pub loss: f64,
    pub first_half_loss: f64,
    pub second_half_loss: f64,
    /// Each layer-1 head's induction score.
    pub induction: Vec<f64>,
    /// Each layer-0 head's previous-token score.
    pub previous_token: Vec<f64>,
}

impl Evaluation {
    /// The second half's loss over the first's: near 1 before induction, small after.
    pub fn loss_ratio(&self) -> f64 {
        self.second_half_loss / self.first_half_loss
    }

    /// The best layer-1 head's induction score.
    pub fn best_induction(&self) -> f64 {
        self.induction.iter().copied().fold(0.0, f64::max)
    }

    /// The best layer-0 head's previous-token score.
    pub fn best_previous_token(&self) -> f64 {
        self.previous_token.iter().copied().fold(0.0, f64::max)
    }
}

/// `model` measured on `sequences` fresh sequences of half `length`, drawn from `seed`.
/// Panics when a sequence (2 × length − 1 tokens read) is past the model's context.
pub fn evaluate<T: Real>(
    model: &Model<T>,
    length: usize,
    sequences: usize,
    seed: u64,
) -> Evaluation {
    let batch = Batch::fresh(model.shape.vocabulary, length, sequences, seed);
    let forward = model.forward(&batch.inputs(), sequences);
    let token_losses = forward.token_losses(&batch.targets());
    let (first_half_loss, second_half_loss) = half_losses(&token_losses, batch.tokens(), length);
    Evaluation {
        length,
        sequences,
        loss: mean(
            &token_losses
                .iter()
                .map(|loss| loss.as_f64())
                .collect::<Vec<_>>(),
        ),
        first_half_loss,
        second_half_loss,
        induction: induction_scores(&forward, length),
        previous_token: previous_token_scores(&forward),
    }
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}
