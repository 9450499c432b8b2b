//! The training screen's state (`attn-tutor train induction` in a terminal): what the run has
//! logged so far (each step's loss and each head's score), the snapshots of its weights, the
//! snapshot and head the learner has chosen to open as a lesson, and whether the run is paused.
//!
//! The run itself is not here: it steps on a thread at the edge (`crate::term::training`),
//! whose news comes in as `Action::Training`. Opening a head and writing the model are Effects.

use std::path::PathBuf;
use std::sync::Arc;

use crate::lesson::LoadedLesson;
use crate::train::{
    INDUCTION_LAYER, LAYERS, PREVIOUS_TOKEN_LAYER, SNAPSHOT_EVERY, Snapshot, StepRecord,
    TrainConfig, symbol,
};

use super::action::Effect;
use super::{Status, Tutor};

/// What a training run sends the app.
#[derive(Debug, Clone, PartialEq)]
pub enum TrainingNews {
    /// Steps taken since the last news, and the run's training time so far in seconds (the
    /// time it was paused left out).
    Steps {
        records: Vec<StepRecord>,
        seconds: f64,
    },
    /// The weights after `step` updates.
    Snapshot(Arc<Snapshot>),
    /// The run stopped between steps, as asked, after this many.
    Paused(usize),
    /// The run took its last step.
    Finished,
    /// The trained model written to the run's folder, or why it was not.
    Written(Result<PathBuf, String>),
    /// A head of a snapshot made into a lesson (`Effect::OpenHead`), or why it could not be.
    Opened(Result<OpenedHead, String>),
}

impl TrainingNews {
    /// How a log names it: counts, not numbers.
    pub(crate) fn logged(&self) -> String {
        match self {
            TrainingNews::Steps { records, .. } => format!("Steps({})", records.len()),
            TrainingNews::Snapshot(snapshot) => format!("Snapshot(step {})", snapshot.step),
            TrainingNews::Paused(step) => format!("Paused(step {step})"),
            TrainingNews::Finished => "Finished".to_string(),
            TrainingNews::Written(result) => format!("Written(ok: {})", result.is_ok()),
            TrainingNews::Opened(result) => format!("Opened(ok: {})", result.is_ok()),
        }
    }
}

/// A lesson made from a snapshot's head. Two are the same when their files would be: the same
/// name and text.
#[derive(Debug, Clone)]
pub struct OpenedHead(pub Box<LoadedLesson>);

impl PartialEq for OpenedHead {
    fn eq(&self, other: &OpenedHead) -> bool {
        self.0.name == other.0.name && self.0.text == other.0.text
    }
}

/// One head of the model: its layer (0 or 1) and its number in the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadOf {
    pub layer: usize,
    pub head: usize,
}

impl HeadOf {
    /// What its score measures: layer 0's heads are scored as previous-token heads, layer 1's
    /// as induction heads.
    pub fn score_name(self) -> &'static str {
        if self.layer == PREVIOUS_TOKEN_LAYER {
            "previous-token"
        } else {
            "induction"
        }
    }
}

/// The snapshots `PgUp` and `PgDn` move the scrubber by (250 steps).
pub const SCRUB_FAR: usize = 10;

/// The text a head opened from the run reads, until the learner types another: a half of six
/// symbols and its repeat, so that every token of the second half has an earlier copy.
pub fn default_text() -> String {
    let half: Vec<String> = (0..6).map(symbol).collect();
    format!("{} {}", half.join(" "), half.join(" "))
}

/// The training screen.
#[derive(Debug, Clone)]
pub struct TrainScreen {
    config: TrainConfig,
    /// Where the trained model is written (`-o DIR`), if anywhere.
    output: Option<PathBuf>,
    /// Each step's batch loss, step 1 first.
    losses: Vec<f32>,
    /// `scores[layer][head]`: each step's score of that head (previous-token in layer 0,
    /// induction in layer 1), step 1 first.
    scores: Vec<Vec<Vec<f32>>>,
    snapshots: Vec<Arc<Snapshot>>,
    /// The snapshot the scrubber is on, by its index; `None` follows the newest as they come.
    scrubbed: Option<usize>,
    /// The head the learner has chosen to open.
    pub chosen: HeadOf,
    /// The text a head opens on.
    pub text: String,
    /// A text typed and being tried: it becomes `text` once a head opens on it.
    pub(crate) trying: Option<String>,
    /// Whether the learner asked the run to pause.
    pub paused: bool,
    /// The step the run stopped at when it paused (it finishes the step it is in first).
    pub paused_at: Option<usize>,
    /// Training time so far, in seconds, pauses left out.
    pub seconds: f64,
    pub finished: bool,
    /// The model written to `output`, or why not; `None` until the run is done.
    pub written: Option<Result<PathBuf, String>>,
}

impl TrainScreen {
    /// The screen of a run of `config` about to start, writing its model to `output`.
    pub fn new(config: TrainConfig, output: Option<PathBuf>) -> TrainScreen {
        let heads = config.model.heads;
        TrainScreen {
            config,
            output,
            losses: Vec::new(),
            scores: vec![vec![Vec::new(); heads]; LAYERS],
            snapshots: Vec::new(),
            scrubbed: None,
            chosen: HeadOf {
                layer: INDUCTION_LAYER,
                head: 0,
            },
            text: default_text(),
            trying: None,
            paused: false,
            paused_at: None,
            seconds: 0.0,
            finished: false,
            written: None,
        }
    }

    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    pub fn output(&self) -> Option<&PathBuf> {
        self.output.as_ref()
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> usize {
        self.losses.len()
    }

    /// Steps the run takes in all.
    pub fn steps(&self) -> usize {
        self.config.steps
    }

    /// Whether the run is still to finish (quitting now would stop it).
    pub fn is_running(&self) -> bool {
        !self.finished
    }

    /// Each step's loss, step 1 first.
    pub fn losses(&self) -> &[f32] {
        &self.losses
    }

    /// Each step's score of `head`, step 1 first.
    pub fn scores(&self, head: HeadOf) -> &[f32] {
        self.scores
            .get(head.layer)
            .and_then(|layer| layer.get(head.head))
            .map_or(&[], Vec::as_slice)
    }

    /// Every head, layer 0's first.
    pub fn heads(&self) -> Vec<HeadOf> {
        (0..LAYERS)
            .flat_map(|layer| (0..self.config.model.heads).map(move |head| HeadOf { layer, head }))
            .collect()
    }

    pub fn snapshots(&self) -> &[Arc<Snapshot>] {
        &self.snapshots
    }

    /// The index of the snapshot the scrubber is on (the newest while it follows them).
    pub fn scrubbed_index(&self) -> Option<usize> {
        self.scrubbed
            .or_else(|| self.snapshots.len().checked_sub(1))
    }

    /// The snapshot the scrubber is on.
    pub fn scrubbed(&self) -> Option<&Arc<Snapshot>> {
        self.scrubbed_index()
            .and_then(|index| self.snapshots.get(index))
    }

    /// Whether the scrubber follows the newest snapshot as the run makes them.
    pub fn follows_newest(&self) -> bool {
        self.scrubbed.is_none()
    }

    /// The step whose numbers the screen shows beside the charts: the scrubbed snapshot's,
    /// or the latest step while the scrubber follows the run.
    pub fn shown_step(&self) -> usize {
        match self.scrubbed {
            Some(_) => self.scrubbed().map_or(0, |snapshot| snapshot.step),
            None => self.steps_done(),
        }
    }

    /// The mean loss of the `SNAPSHOT_EVERY` steps up to `step` (fewer at the start): one
    /// batch's loss jumps with its length, so a single step's says little.
    pub fn loss_at(&self, step: usize) -> Option<f64> {
        let end = step.min(self.losses.len());
        let start = end.saturating_sub(SNAPSHOT_EVERY);
        let window = self.losses.get(start..end).filter(|w| !w.is_empty())?;
        Some(window.iter().map(|loss| f64::from(*loss)).sum::<f64>() / window.len() as f64)
    }

    /// `head`'s score after `step` updates (none before the first).
    pub fn score_at(&self, head: HeadOf, step: usize) -> Option<f64> {
        let scores = self.scores(head);
        step.checked_sub(1)
            .and_then(|index| scores.get(index))
            .map(|score| f64::from(*score))
    }

    /// Seconds the rest of the run should take at the pace so far.
    pub fn seconds_left(&self) -> Option<f64> {
        let done = self.steps_done();
        (done > 0 && !self.finished)
            .then(|| self.seconds / done as f64 * self.steps().saturating_sub(done) as f64)
    }

    /// Takes in what the run sent. Returns the Effects it asks for (writing the model once the
    /// run is done) and a message for the learner, if any.
    pub(crate) fn take(&mut self, news: TrainingNews) -> (Vec<Effect>, Option<Status>) {
        match news {
            TrainingNews::Steps { records, seconds } => {
                for record in records {
                    self.losses.push(record.loss as f32);
                    for (layer, scores) in [
                        (PREVIOUS_TOKEN_LAYER, &record.previous_token),
                        (INDUCTION_LAYER, &record.induction),
                    ] {
                        for (head, score) in scores.iter().enumerate() {
                            if let Some(column) = self
                                .scores
                                .get_mut(layer)
                                .and_then(|layer| layer.get_mut(head))
                            {
                                column.push(*score as f32);
                            }
                        }
                    }
                }
                self.seconds = seconds;
                if !self.paused {
                    self.paused_at = None;
                }
            }
            TrainingNews::Snapshot(snapshot) => self.snapshots.push(snapshot),
            TrainingNews::Paused(step) => {
                if self.paused {
                    self.paused_at = Some(step);
                }
            }
            TrainingNews::Finished => {
                self.finished = true;
                self.paused = false;
                self.paused_at = None;
                return match (&self.output, self.snapshots.last()) {
                    (Some(folder), Some(last)) => (
                        vec![Effect::WriteModel {
                            snapshot: Arc::clone(last),
                            folder: folder.clone(),
                        }],
                        None,
                    ),
                    _ => (Vec::new(), None),
                };
            }
            TrainingNews::Written(result) => {
                let status = match &result {
                    Ok(folder) => Status::info(format!(
                        "Training done: the model is written to {}",
                        crate::lesson::text::printable_path(folder)
                    )),
                    Err(why) => Status::error(format!("The model was not written: {why}")),
                };
                self.written = Some(result);
                return (Vec::new(), Some(status));
            }
            // Taken by `open_head`, which changes the screen.
            TrainingNews::Opened(_) => {}
        }
        (Vec::new(), None)
    }

    /// `←` / `→` (`by` 1), `PgUp` / `PgDn` (`by` `SCRUB_FAR`): a snapshot before or after the
    /// one the scrubber is on, stopping at the first; at or past the newest the scrubber
    /// follows the run again. `false` when it was at that end already.
    pub(crate) fn scrub(&mut self, later: bool, by: usize) -> bool {
        let Some(now) = self.scrubbed_index() else {
            return false;
        };
        let newest = self.snapshots.len() - 1;
        match (later, self.scrubbed) {
            (true, None) => false,
            (true, Some(index)) => {
                self.scrubbed = Some(index + by).filter(|next| *next < newest);
                true
            }
            (false, _) if now == 0 => false,
            (false, _) => {
                self.scrubbed = Some(now.saturating_sub(by));
                true
            }
        }
    }

    /// `Home`: the first snapshot (the weights as initialised); `End`: the newest, followed.
    pub(crate) fn scrub_to_end(&mut self, last: bool) {
        self.scrubbed = if last || self.snapshots.len() <= 1 {
            None
        } else {
            Some(0)
        };
    }

    /// `↑` / `↓`: the head above or below the chosen one (layer 0's first). `false` at either
    /// end.
    pub(crate) fn choose(&mut self, down: bool) -> bool {
        let heads = self.heads();
        let now = heads
            .iter()
            .position(|head| *head == self.chosen)
            .unwrap_or(0);
        let next = if down {
            now + 1
        } else {
            match now.checked_sub(1) {
                Some(next) => next,
                None => return false,
            }
        };
        match heads.get(next) {
            Some(head) => {
                self.chosen = *head;
                true
            }
            None => false,
        }
    }

    /// What opening the chosen head at the scrubbed snapshot on `text` asks the edge to do.
    pub(crate) fn open_effect(&self, text: &str) -> Option<Effect> {
        let snapshot = self.scrubbed()?;
        Some(Effect::OpenHead {
            snapshot: Arc::clone(snapshot),
            layer: self.chosen.layer,
            head: self.chosen.head,
            text: text.to_string(),
        })
    }
}

/// The tutor on a head opened from the run, and what the status line says about it.
pub(crate) fn opened_tutor(screen: &TrainScreen, opened: &OpenedHead) -> (Tutor, Status) {
    let tutor = Tutor::new(&opened.0);
    let step = screen.scrubbed().map_or(0, |snapshot| snapshot.step);
    let going_on = if screen.finished {
        ""
    } else if screen.paused {
        " (paused)"
    } else {
        " (still training)"
    };
    // One line at 80 columns, up to the most steps a run takes.
    let status = Status::info(format!(
        "Layer {} head {} as it was at step {step} · q: back to the run{going_on}",
        screen.chosen.layer, screen.chosen.head
    ));
    (tutor, status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{Model, ModelShape};

    fn snapshot(step: usize) -> Arc<Snapshot> {
        Arc::new(Snapshot {
            step,
            model: Model::init(ModelShape::default(), 0),
        })
    }

    fn screen_with(snapshots: usize) -> TrainScreen {
        let mut screen = TrainScreen::new(TrainConfig::default(), None);
        for index in 0..snapshots {
            screen.take(TrainingNews::Snapshot(snapshot(index * SNAPSHOT_EVERY)));
        }
        screen
    }

    #[test]
    fn the_scrubber_follows_the_newest_until_moved_and_again_past_the_newest() {
        let mut screen = screen_with(3);
        assert_eq!(screen.scrubbed_index(), Some(2));
        assert!(!screen.scrub(true, 1), "nothing after the newest");
        assert!(screen.scrub(false, 1));
        assert_eq!(screen.scrubbed_index(), Some(1));
        screen.take(TrainingNews::Snapshot(snapshot(75)));
        assert_eq!(
            screen.scrubbed_index(),
            Some(1),
            "a new snapshot leaves it put"
        );
        assert!(screen.scrub(true, 1));
        assert_eq!(screen.scrubbed_index(), Some(2));
        assert!(screen.scrub(true, 1));
        assert!(screen.follows_newest());
        assert_eq!(screen.scrubbed_index(), Some(3));
        assert!(
            screen.scrub(false, SCRUB_FAR),
            "a long way back stops at the first"
        );
        assert_eq!(screen.scrubbed_index(), Some(0));
        assert!(
            screen.scrub(true, SCRUB_FAR),
            "and a long way on follows the newest"
        );
        assert!(screen.follows_newest());
        screen.scrub_to_end(false);
        assert!(!screen.scrub(false, 1));
        assert_eq!(screen.scrubbed().map(|s| s.step), Some(0));
    }

    #[test]
    fn the_loss_beside_the_chart_is_the_mean_of_the_steps_up_to_it() {
        let mut screen = screen_with(1);
        let records = (1..=30)
            .map(|step| StepRecord {
                step,
                loss: step as f64,
                induction: vec![0.0; 2],
                previous_token: vec![0.0; 2],
            })
            .collect();
        screen.take(TrainingNews::Steps {
            records,
            seconds: 3.0,
        });
        assert_eq!(screen.loss_at(1), Some(1.0));
        assert_eq!(
            screen.loss_at(30),
            Some((6..=30).sum::<usize>() as f64 / 25.0)
        );
        assert_eq!(screen.loss_at(0), None);
        // 30 steps in 3 s: 2,970 more take 297 s.
        assert!((screen.seconds_left().unwrap() - 297.0).abs() < 1e-9);
    }
}
