//! Training a tiny attention-only transformer to find induction (`attn-tutor train induction`):
//! 2 layers, no norm, no MLP, on sequences of random symbols repeated twice, whose length
//! changes from batch to batch. Layer 0 learns to look at the previous token, and layer 1,
//! reading what layer 0 wrote, to look at the token after the earlier copy of the current
//! one: an induction head, which predicts the second half.
//!
//! `Trainer` takes one step at a time, so that a screen can be drawn between steps, and offers a
//! snapshot of the weights every `SNAPSHOT_EVERY` steps, keeping none itself: whoever shows
//! them keeps what it needs (the training screen a bounded number), and a run whose lines are
//! only written keeps no weights but the current ones. `save` writes a model as `import`
//! reads it, and `load` reads it back. All in f32 on one thread, from ChaCha seeded by the
//! run's seed: the same seed gives the same numbers on a machine, whatever its cores.

mod adamw;
mod backward;
mod config;
mod data;
mod forward;
mod load;
mod model;
mod save;
mod scores;

use serde::{Deserialize, Serialize};

pub use adamw::AdamW;
pub use config::{
    ConfigError, LAYERS, MAX_BATCH, MAX_CONTEXT, MAX_D_MODEL, MAX_STEPS, MAX_VOCABULARY, MIN_HEADS,
    MIN_LENGTH, ModelShape, TrainConfig, symbol,
};
pub use data::{Batch, Batches};
pub use forward::Forward;
pub use load::{load, read};
pub use model::{Layer, Model, Real, Tensor, TensorMut};
pub use save::{
    CONFIG_FILE, SaveError, TOKENIZER_FILE, UNKNOWN_WORD, WEIGHTS_FILE, prepare_folder, save,
};
pub use scores::{
    Evaluation, INDUCTION_LAYER, PREVIOUS_TOKEN_LAYER, evaluate, half_losses, induction_score,
    induction_scores, previous_token_score, previous_token_scores,
};

/// Steps between the snapshots a scrubber moves over.
pub const SNAPSHOT_EVERY: usize = 25;

/// Whether a run of `steps` offers a snapshot after `step` updates: at step 0 (the weights as
/// initialised), every `SNAPSHOT_EVERY` steps, and at its last step.
pub fn is_snapshot_step(step: usize, steps: usize) -> bool {
    step.is_multiple_of(SNAPSHOT_EVERY) || step == steps
}

/// The sequences each step's scores are measured on.
pub const PROBE_SEQUENCES: usize = 16;

/// What one step logs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// 1 for the first update.
    pub step: usize,
    /// The step's batch's mean loss, with the weights it was computed from (before the update),
    /// as training loops log it.
    pub loss: f64,
    /// Each layer-1 head's induction score after the update, on the run's probe: the same
    /// fresh sequences every step, of the middle length, so the scores move only as the
    /// weights do (a batch's own would jump with its length: on a half of 4, a head looking a
    /// fixed 3 tokens back scores as an induction head does).
    pub induction: Vec<f64>,
    /// Each layer-0 head's previous-token score after the update, on the probe.
    pub previous_token: Vec<f64>,
}

/// The weights after `step` updates (0: as initialised).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub step: usize,
    pub model: Model<f32>,
}

/// A run in progress.
#[derive(Debug, Clone)]
pub struct Trainer {
    config: TrainConfig,
    model: Model<f32>,
    optimizer: AdamW<f32>,
    batches: Batches,
    /// The sequences each step's scores are measured on (`StepRecord`).
    probe: Batch,
    steps_done: usize,
}

impl Trainer {
    /// A run of `config`, its model initialised and no step taken; a setting it cannot take is
    /// refused.
    pub fn new(config: TrainConfig) -> Result<Trainer, ConfigError> {
        config.validate()?;
        let model = Model::init(config.model, config.seed);
        let optimizer = AdamW::new(
            &model,
            config.learning_rate,
            config.betas,
            config.epsilon,
            config.weight_decay,
        );
        let batches = Batches::new(
            config.seed,
            config.model.vocabulary,
            config.batch,
            config.min_length,
            config.max_length,
        );
        let probe = Batch::probe(
            config.model.vocabulary,
            (config.min_length + config.max_length) / 2,
            PROBE_SEQUENCES,
            config.seed,
        );
        Ok(Trainer {
            config,
            model,
            optimizer,
            batches,
            probe,
            steps_done: 0,
        })
    }

    /// One step: a batch, its loss and gradients, an AdamW update. `None` once the run's steps
    /// are done.
    pub fn step(&mut self) -> Option<StepRecord> {
        if self.is_done() {
            return None;
        }
        let batch = self.batches.next_batch();
        let (loss, gradients, _) =
            self.model
                .loss_and_gradients(&batch.inputs(), &batch.targets(), batch.sequences);
        self.optimizer.step(&mut self.model, &gradients);
        self.steps_done += 1;
        let probed = self
            .model
            .forward(&self.probe.inputs(), self.probe.sequences);
        Some(StepRecord {
            step: self.steps_done,
            loss: f64::from(loss),
            induction: induction_scores(&probed, self.probe.length),
            previous_token: previous_token_scores(&probed),
        })
    }

    /// The sequences each step's scores are measured on.
    pub fn probe(&self) -> &Batch {
        &self.probe
    }

    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// The weights now.
    pub fn model(&self) -> &Model<f32> {
        &self.model
    }

    pub fn steps_done(&self) -> usize {
        self.steps_done
    }

    pub fn is_done(&self) -> bool {
        self.steps_done >= self.config.steps
    }

    /// A copy of the weights now, when the steps done are a snapshot's (`is_snapshot_step`):
    /// before the first step, after every `SNAPSHOT_EVERY`, and after the last.
    pub fn snapshot(&self) -> Option<Snapshot> {
        is_snapshot_step(self.steps_done, self.config.steps).then(|| Snapshot {
            step: self.steps_done,
            model: self.model.clone(),
        })
    }
}
