//! The training screen's state (`attn-tutor train induction` in a terminal): what the run has
//! logged so far (each step's loss and each head's score, as curves for the charts, and exactly
//! at each snapshot kept and at the latest step, for the numbers beside them), the snapshots of
//! its weights, the snapshot and head the learner has chosen to open as a lesson, and whether
//! the run is paused. However long the run, what is kept is bounded (`kept`).
//!
//! The run itself is not here: it steps on a thread at the edge (`crate::term::training`),
//! whose news comes in as `Action::Training`. Opening a head and writing the model are Effects.

mod kept;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use crate::lesson::LoadedLesson;
use crate::train::{
    INDUCTION_LAYER, LAYERS, PREVIOUS_TOKEN_LAYER, SNAPSHOT_EVERY, Snapshot, StepRecord,
    TrainConfig, is_snapshot_step, symbol,
};

pub use kept::{Curve, MOST_POINTS, MOST_SNAPSHOTS, Snapshots};

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

/// The snapshots `PgUp` and `PgDn` move the scrubber by (250 steps, until a long run's are
/// thinned).
pub const SCRUB_FAR: usize = 10;

/// The text a head opened from the run reads, until the learner types another: a half of six
/// symbols and its repeat, so that every token of the second half has an earlier copy.
pub fn default_text() -> String {
    let half: Vec<String> = (0..6).map(symbol).collect();
    format!("{} {}", half.join(" "), half.join(" "))
}

/// The numbers the screen shows beside the charts at one step.
#[derive(Debug, Clone, PartialEq)]
struct Moment {
    step: usize,
    /// The mean loss of the `SNAPSHOT_EVERY` steps up to it (fewer at the start).
    loss: f64,
    /// `scores[layer][head]` after the step.
    scores: Vec<Vec<f32>>,
}

/// The training screen.
#[derive(Debug, Clone)]
pub struct TrainScreen {
    config: TrainConfig,
    /// Where the trained model is written (`-o DIR`), if anywhere.
    output: Option<PathBuf>,
    /// The batch loss over the steps, step 1 first.
    losses: Curve,
    /// `scores[layer][head]`: that head's score over the steps (previous-token in layer 0,
    /// induction in layer 1), step 1 first.
    scores: Vec<Vec<Curve>>,
    /// The last `SNAPSHOT_EVERY` steps' losses, whose mean is the loss at the latest step.
    recent_losses: VecDeque<f32>,
    /// The numbers at the latest step.
    latest: Option<Moment>,
    /// The numbers at each snapshot kept, and at the steps of snapshots still to come, by step.
    moments: Vec<Moment>,
    snapshots: Snapshots,
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
            losses: Curve::new(),
            scores: vec![vec![Curve::new(); heads]; LAYERS],
            recent_losses: VecDeque::with_capacity(SNAPSHOT_EVERY),
            latest: None,
            moments: Vec::new(),
            snapshots: Snapshots::new(),
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
        self.losses.steps()
    }

    /// Steps the run takes in all.
    pub fn steps(&self) -> usize {
        self.config.steps
    }

    /// Whether the run is still to finish (quitting now would stop it).
    pub fn is_running(&self) -> bool {
        !self.finished
    }

    /// The loss over the steps, step 1 first.
    pub fn losses(&self) -> &Curve {
        &self.losses
    }

    /// `head`'s score over the steps, step 1 first (`None` for a head the model has not).
    pub fn scores(&self, head: HeadOf) -> Option<&Curve> {
        self.scores
            .get(head.layer)
            .and_then(|layer| layer.get(head.head))
    }

    /// Every head, layer 0's first.
    pub fn heads(&self) -> Vec<HeadOf> {
        (0..LAYERS)
            .flat_map(|layer| (0..self.config.model.heads).map(move |head| HeadOf { layer, head }))
            .collect()
    }

    pub fn snapshots(&self) -> &Snapshots {
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

    /// The numbers at `step`: kept for the latest step and each snapshot's.
    fn moment_at(&self, step: usize) -> Option<&Moment> {
        match &self.latest {
            Some(latest) if latest.step == step => Some(latest),
            _ => self
                .moments
                .binary_search_by_key(&step, |moment| moment.step)
                .ok()
                .map(|index| &self.moments[index]),
        }
    }

    /// The mean loss of the `SNAPSHOT_EVERY` steps up to `step` (fewer at the start): one
    /// batch's loss jumps with its length, so a single step's says little. Known at the latest
    /// step and at each snapshot kept (the steps the screen shows numbers for), none before the
    /// first step.
    pub fn loss_at(&self, step: usize) -> Option<f64> {
        self.moment_at(step).map(|moment| moment.loss)
    }

    /// `head`'s score after `step` updates, known where `loss_at` is.
    pub fn score_at(&self, head: HeadOf, step: usize) -> Option<f64> {
        self.moment_at(step)
            .and_then(|moment| moment.scores.get(head.layer)?.get(head.head))
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
                    self.take_step(&record);
                }
                self.seconds = seconds;
                if !self.paused {
                    self.paused_at = None;
                }
            }
            TrainingNews::Snapshot(snapshot) => return (Vec::new(), self.keep(snapshot)),
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

    /// One step's record: into the curves, and its numbers kept while they may be shown (at
    /// the latest step, and at a snapshot's).
    fn take_step(&mut self, record: &StepRecord) {
        let loss = record.loss as f32;
        self.losses.push(loss);
        if self.recent_losses.len() == SNAPSHOT_EVERY {
            self.recent_losses.pop_front();
        }
        self.recent_losses.push_back(loss);
        let mut scores = vec![Vec::new(); LAYERS];
        for (layer, logged) in [
            (PREVIOUS_TOKEN_LAYER, &record.previous_token),
            (INDUCTION_LAYER, &record.induction),
        ] {
            for (head, score) in logged.iter().enumerate() {
                if let Some(curve) = self
                    .scores
                    .get_mut(layer)
                    .and_then(|layer| layer.get_mut(head))
                {
                    curve.push(*score as f32);
                    scores[layer].push(*score as f32);
                }
            }
        }
        let moment = Moment {
            step: record.step,
            loss: self
                .recent_losses
                .iter()
                .map(|loss| f64::from(*loss))
                .sum::<f64>()
                / self.recent_losses.len() as f64,
            scores,
        };
        if is_snapshot_step(record.step, self.config.steps) {
            self.moments.push(moment.clone());
        }
        self.latest = Some(moment);
    }

    /// A snapshot the run sent, kept (`Snapshots::push`, which may thin the rest). The scrubber
    /// stays on the step it was on; if thinning took that snapshot away, it moves to the
    /// nearest kept and says so.
    fn keep(&mut self, snapshot: Arc<Snapshot>) -> Option<Status> {
        let scrubbed = self
            .scrubbed
            .and_then(|index| self.snapshots.get(index))
            .map(|snapshot| snapshot.step);
        self.snapshots.push(snapshot);
        // The numbers of a snapshot gone go with it; those of one still to come wait for it.
        let newest = self.snapshots.last().map_or(0, |snapshot| snapshot.step);
        let snapshots = &self.snapshots;
        self.moments
            .retain(|moment| moment.step > newest || snapshots.position(moment.step).is_some());
        let was = scrubbed?;
        let index = self.snapshots.nearest(was)?;
        self.scrubbed = Some(index);
        let now = self.snapshots.get(index)?.step;
        (now != was).then(|| {
            Status::info(format!(
                "A long run keeps {MOST_SNAPSHOTS} snapshots at most, evenly spread: step {was}'s \
                 was let go, so the scrubber is on step {now}"
            ))
        })
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
        assert_eq!(screen.loss_at(25), Some(13.0));
        assert_eq!(
            screen.loss_at(30),
            Some((6..=30).sum::<usize>() as f64 / 25.0)
        );
        assert_eq!(screen.loss_at(0), None);
        // Between snapshots, only the latest step's numbers are kept.
        assert_eq!(screen.loss_at(1), None);
        // 30 steps in 3 s: 2,970 more take 297 s.
        assert!((screen.seconds_left().unwrap() - 297.0).abs() < 1e-9);
    }

    /// A made-up step's record whose numbers tell its step: the loss is the step, each head's
    /// score its thousandth, plus a quarter for each head before it.
    fn record(step: usize) -> StepRecord {
        let score = |head: usize| step as f64 / 1000.0 + head as f64 / 4.0;
        StepRecord {
            step,
            loss: step as f64,
            previous_token: vec![score(0), score(1)],
            induction: vec![score(2), score(3)],
        }
    }

    /// A model too small to cost anything to copy: the screen does not read the weights.
    pub(super) fn tiny() -> Model<f32> {
        let shape = ModelShape {
            vocabulary: 2,
            d_model: 2,
            heads: 2,
            context: 4,
        };
        Model::init(shape, 0)
    }

    /// A screen of a run of `steps`, its first snapshot taken.
    fn run_of(steps: usize) -> TrainScreen {
        let config = TrainConfig {
            steps,
            ..TrainConfig::default()
        };
        let mut screen = TrainScreen::new(config, None);
        feed(&mut screen, 0, 0);
        screen
    }

    /// Steps `from` to `to` of `screen`'s run (their snapshots only, for step 0), sent as its
    /// thread sends them: each step's record, then its snapshot if it has one. What the screen
    /// said, in order.
    fn feed(screen: &mut TrainScreen, from: usize, to: usize) -> Vec<String> {
        let (model, steps) = (tiny(), screen.steps());
        let mut said = Vec::new();
        for step in from..=to {
            if step > 0 {
                let records = vec![record(step)];
                screen.take(TrainingNews::Steps {
                    records,
                    seconds: 0.0,
                });
            }
            if is_snapshot_step(step, steps) {
                let snapshot = Arc::new(Snapshot {
                    step,
                    model: model.clone(),
                });
                let (_, status) = screen.take(TrainingNews::Snapshot(snapshot));
                said.extend(status.map(|status| status.text));
            }
        }
        said
    }

    fn scrubbed_step(screen: &TrainScreen) -> Option<usize> {
        screen.scrubbed().map(|snapshot| snapshot.step)
    }

    const LAST_HEAD: HeadOf = HeadOf {
        layer: INDUCTION_LAYER,
        head: 1,
    };

    #[test]
    fn past_the_most_snapshots_a_kept_one_under_the_scrubber_stays_under_it() {
        // 512 snapshots (steps 0 to 12,775), all kept; the scrubber on step 100.
        let mut screen = run_of(20_000);
        feed(&mut screen, 1, 12_775);
        assert_eq!(screen.snapshots().len(), MOST_SNAPSHOTS);
        screen.scrub_to_end(false);
        assert!(screen.scrub(true, 4));
        assert_eq!(scrubbed_step(&screen), Some(100));
        // The 513th: every other one goes, 100 stays, four snapshots on no more.
        assert!(
            feed(&mut screen, 12_776, 12_800).is_empty(),
            "nothing to say"
        );
        assert_eq!(screen.snapshots().len(), MOST_SNAPSHOTS / 2 + 1);
        assert_eq!(screen.snapshots().every(), 2 * SNAPSHOT_EVERY);
        assert_eq!(scrubbed_step(&screen), Some(100));
        assert_eq!(screen.scrubbed_index(), Some(2));
        assert_eq!(screen.shown_step(), 100);
        assert_eq!(
            screen.loss_at(100),
            Some(88.0),
            "the mean of steps 76 to 100"
        );
        assert_eq!(screen.score_at(LAST_HEAD, 100), Some(f64::from(0.85_f32)));
        match screen.open_effect("A B A B") {
            Some(Effect::OpenHead { snapshot, .. }) => assert_eq!(snapshot.step, 100),
            other => panic!("{other:?}"),
        }
        // ← and → move over the snapshots kept, 50 steps apart now.
        assert!(screen.scrub(true, 1));
        assert_eq!(scrubbed_step(&screen), Some(150));
        assert!(screen.scrub(false, 2));
        assert_eq!(scrubbed_step(&screen), Some(50));
    }

    #[test]
    fn a_snapshot_thinned_from_under_the_scrubber_moves_it_to_the_nearest_kept_and_says_so() {
        let mut screen = run_of(20_000);
        feed(&mut screen, 1, 12_775);
        screen.scrub_to_end(false);
        assert!(screen.scrub(true, 3));
        assert_eq!(scrubbed_step(&screen), Some(75));
        let said = feed(&mut screen, 12_776, 12_800);
        // 50 and 100 are as near: the earlier.
        assert_eq!(scrubbed_step(&screen), Some(50));
        assert_eq!(
            said,
            [
                "A long run keeps 512 snapshots at most, evenly spread: step 75's was let go, so \
              the scrubber is on step 50"
            ]
        );
        assert_eq!(screen.loss_at(50), Some(38.0), "the mean of steps 26 to 50");
        assert!(!screen.follows_newest());
    }

    #[test]
    fn a_long_run_keeps_a_bounded_screen_with_the_numbers_at_each_snapshot() {
        // 200,000 steps: the snapshots thinned four times, the curves' points of 64 steps.
        let mut screen = run_of(200_000);
        feed(&mut screen, 1, 100_000);
        // The scrubber on the 100th snapshot kept, its step and numbers noted.
        screen.scrub_to_end(false);
        assert!(screen.scrub(true, 100));
        let step = scrubbed_step(&screen).unwrap();
        let numbers = (screen.loss_at(step), screen.score_at(LAST_HEAD, step));
        assert_eq!(numbers.0, Some(step as f64 - 12.0));
        feed(&mut screen, 100_001, 200_000);
        assert_eq!(screen.steps_done(), 200_000);
        // At most 512 snapshots, from step 0 to the last, evenly spread.
        let kept: Vec<usize> = screen.snapshots().steps().collect();
        assert!((MOST_SNAPSHOTS / 2..=MOST_SNAPSHOTS).contains(&kept.len()));
        assert_eq!((kept[0], kept[kept.len() - 1]), (0, 200_000));
        let every = screen.snapshots().every();
        assert_eq!(every, 16 * SNAPSHOT_EVERY);
        assert!(kept.windows(2).all(|pair| pair[1] - pair[0] <= every));
        // The numbers of the snapshots kept and of the latest step, no more.
        assert!(screen.moments.len() < kept.len());
        // The curves: at most 4,096 points each, over all the steps.
        for curve in std::iter::once(screen.losses()).chain(
            screen
                .heads()
                .into_iter()
                .filter_map(|head| screen.scores(head)),
        ) {
            assert!(curve.points().count() <= MOST_POINTS);
            assert_eq!((curve.steps(), curve.span()), (200_000, 64));
        }
        // The scrubber is on the snapshot nearest where it was, with the numbers at its step.
        let now = scrubbed_step(&screen).unwrap();
        assert!(now.abs_diff(step) <= every / 2, "{step} → {now}");
        assert_eq!(screen.loss_at(now), Some(now as f64 - 12.0));
        assert_eq!(
            screen.score_at(LAST_HEAD, now),
            Some(f64::from((now as f64 / 1000.0 + 0.75) as f32))
        );
        if now == step {
            assert_eq!(
                (screen.loss_at(now), screen.score_at(LAST_HEAD, now)),
                numbers
            );
        }
        // The latest step's numbers while the scrubber follows the run.
        screen.scrub_to_end(true);
        assert_eq!(screen.shown_step(), 200_000);
        assert_eq!(screen.loss_at(200_000), Some(200_000.0 - 12.0));
    }
}
