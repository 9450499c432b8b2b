//! What a training run is: the model's sizes and the run's settings, with the defaults,
//! checked against the limits a lesson of the trained model can show.

use serde::{Deserialize, Serialize};

/// The model's layers: the first finds the previous token, the second copies what followed the
/// earlier copy of the current one (induction), which needs two.
pub const LAYERS: usize = 2;

/// The widest residual stream trained: every head of a layer must still fit a lesson's screen.
pub const MAX_D_MODEL: usize = 64;
/// The most symbols: `symbol` names 32 (A to Z, then a to f).
pub const MAX_VOCABULARY: usize = 32;
/// The most tokens the model reads at once: a sequence and its repeat.
pub const MAX_CONTEXT: usize = 32;
/// The fewest heads a layer has: one head alone would leave nothing to compare it with.
pub const MIN_HEADS: usize = 2;
/// The shortest half a sequence may have: with one symbol repeated there is no token after an
/// earlier copy to attend to.
pub const MIN_LENGTH: usize = 2;
/// The most sequences a batch holds and steps a run takes: far past what a run on a laptop
/// needs, well below what would exhaust its memory.
pub const MAX_BATCH: usize = 4096;
pub const MAX_STEPS: usize = 1_000_000;

/// The sizes of the attention-only model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelShape {
    /// Symbols the model reads and predicts (`vocab_size`).
    pub vocabulary: usize,
    /// The width of the residual stream (`n_embd`).
    pub d_model: usize,
    /// Heads in each layer (`n_head`).
    pub heads: usize,
    /// The most tokens it reads at once, and its learned positions (`n_positions`).
    pub context: usize,
}

impl ModelShape {
    /// The columns of Q, K and V each head takes.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.heads.max(1)
    }
}

/// The model: 16 symbols, d_model 32, 2 heads of 16 columns, 32 positions.
impl Default for ModelShape {
    fn default() -> ModelShape {
        ModelShape {
            vocabulary: 16,
            d_model: 32,
            heads: 2,
            context: 32,
        }
    }
}

/// A whole run: the model, the data and AdamW's settings.
///
/// AdamW decays the weight matrices (the embeddings wte and wpe, c_attn, c_proj and lm_head)
/// and not the biases, as nanoGPT does. Decay keeps a weight that multiplies the stream from
/// growing without need (a larger W_Q or embedding sharpens every pattern for free); a bias
/// multiplies nothing, and pulling it toward 0 would only move the point each score is
/// measured from. (PyTorch's `AdamW(model.parameters())` decays the biases too; at 0.01 × 3e-3
/// a step, either choice moves a bias by under 1 % over a run.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    pub model: ModelShape,
    /// Sequences in each batch.
    pub batch: usize,
    /// The shortest and longest half of a sequence (its symbols before they repeat): each
    /// batch draws one length between them, so no fixed offset does what induction does.
    pub min_length: usize,
    pub max_length: usize,
    pub learning_rate: f64,
    /// AdamW's β₁ and β₂ (PyTorch's defaults).
    pub betas: (f64, f64),
    /// AdamW's ε (PyTorch's default).
    pub epsilon: f64,
    pub weight_decay: f64,
    /// Seeds the initial weights and every batch.
    pub seed: u64,
    pub steps: usize,
}

/// The default run: the reference settings (batch 32, AdamW at 3e-3) for 3,000 steps,
/// past the phase change (the best induction score on the probe passed 0.5 at steps 430 to
/// 710 over seeds 0 to 3), on halves of 2 to 16 symbols.
///
/// The reference run's halves were 4 to 16. From 4, no induction ever looked back fewer than 3
/// tokens, and the models learned not to: on halves of 3 (a learner's "A B C A B C") the
/// second half's loss was 0.40 to 0.69 of the first's over seeds 0 to 3, and with half 11 left
/// out of training, 0.46 and 0.75 on it for two of three seeds. From 2, those were 0.15 to
/// 0.32 on halves of 3, and 0.21 to 0.30 on a half of 11 left out, with the same scores on the
/// lengths trained (0.13 to 0.21 at 10 and 16).
impl Default for TrainConfig {
    fn default() -> TrainConfig {
        let model = ModelShape::default();
        TrainConfig {
            model,
            batch: 32,
            min_length: MIN_LENGTH,
            max_length: model.context / 2,
            learning_rate: 3e-3,
            betas: (0.9, 0.999),
            epsilon: 1e-8,
            weight_decay: 0.01,
            seed: 0,
            steps: 3000,
        }
    }
}

/// A setting a run cannot take, said for the option that sets it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("--steps: {steps}; give a whole number of steps from 1 to {MAX_STEPS}")]
    Steps { steps: usize },
    #[error(
        "--d-model: {d_model}; the residual stream is from 1 to {MAX_D_MODEL} wide, so that every \
         head of a layer fits a lesson"
    )]
    DModel { d_model: usize },
    #[error("--vocabulary: {vocabulary} symbols; give from 2 to {MAX_VOCABULARY}")]
    Vocabulary { vocabulary: usize },
    #[error(
        "--context: {context} tokens; give from {} to {MAX_CONTEXT}: twice the shortest length \
         ({min_length}) must fit",
        2 * .min_length
    )]
    Context { context: usize, min_length: usize },
    #[error(
        "--heads: {heads} heads; a layer has at least {MIN_HEADS}, and they share d_model \
         ({d_model}) equally, so the heads must divide it"
    )]
    Heads { heads: usize, d_model: usize },
    #[error("--batch: {batch} sequences; give from 1 to {MAX_BATCH}")]
    Batch { batch: usize },
    #[error(
        "--lengths: {min_length} to {max_length}; a half is at least {MIN_LENGTH} symbols, the \
         shortest no longer than the longest, and a sequence (twice the longest) fits the \
         context of {context}"
    )]
    Lengths {
        min_length: usize,
        max_length: usize,
        context: usize,
    },
    #[error("--lr: {learning_rate}; the learning rate is a number above 0")]
    LearningRate { learning_rate: f64 },
    #[error(
        "AdamW's betas ({}, {}) and epsilon ({epsilon}): each beta is from 0 up to (not \
         including) 1, epsilon above 0",
        .betas.0,
        .betas.1
    )]
    Adam { betas: (f64, f64), epsilon: f64 },
    #[error("--weight-decay: {weight_decay}; give 0 or a number above it")]
    WeightDecay { weight_decay: f64 },
}

impl TrainConfig {
    /// The first setting a run cannot take, or `Ok` when it can run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let model = &self.model;
        if !(1..=MAX_STEPS).contains(&self.steps) {
            return Err(ConfigError::Steps { steps: self.steps });
        }
        if !(1..=MAX_D_MODEL).contains(&model.d_model) {
            return Err(ConfigError::DModel {
                d_model: model.d_model,
            });
        }
        if !(2..=MAX_VOCABULARY).contains(&model.vocabulary) {
            return Err(ConfigError::Vocabulary {
                vocabulary: model.vocabulary,
            });
        }
        if model.heads < MIN_HEADS || !model.d_model.is_multiple_of(model.heads) {
            return Err(ConfigError::Heads {
                heads: model.heads,
                d_model: model.d_model,
            });
        }
        let shortest = self.min_length.max(MIN_LENGTH);
        if model.context > MAX_CONTEXT || model.context < 2 * shortest {
            return Err(ConfigError::Context {
                context: model.context,
                min_length: shortest,
            });
        }
        if !(1..=MAX_BATCH).contains(&self.batch) {
            return Err(ConfigError::Batch { batch: self.batch });
        }
        if self.min_length < MIN_LENGTH
            || self.min_length > self.max_length
            || 2 * self.max_length > model.context
        {
            return Err(ConfigError::Lengths {
                min_length: self.min_length,
                max_length: self.max_length,
                context: model.context,
            });
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(ConfigError::LearningRate {
                learning_rate: self.learning_rate,
            });
        }
        let (beta1, beta2) = self.betas;
        let beta = |beta: f64| (0.0..1.0).contains(&beta);
        if !(beta(beta1) && beta(beta2) && self.epsilon > 0.0 && self.epsilon.is_finite()) {
            return Err(ConfigError::Adam {
                betas: self.betas,
                epsilon: self.epsilon,
            });
        }
        if !(self.weight_decay >= 0.0 && self.weight_decay.is_finite()) {
            return Err(ConfigError::WeightDecay {
                weight_decay: self.weight_decay,
            });
        }
        Ok(())
    }
}

/// The name of symbol `id`: A to Z, then a to f. One letter each, so that a sequence reads as
/// the letters the lesson shows, and in the order of their ids when sorted.
pub fn symbol(id: usize) -> String {
    const NAMES: &[u8; MAX_VOCABULARY] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef";
    NAMES
        .get(id)
        .map_or_else(|| format!("#{id}"), |&name| char::from(name).to_string())
}
