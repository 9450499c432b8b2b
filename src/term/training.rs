//! A training run at the edge: the trainer steps on a thread of its own, as fast as it can,
//! and sends each step's record and each snapshot over a channel; between keys the tutor's
//! loop drains it into the app (`Action::Training`) and tells the thread whether the learner
//! has paused. The UI's tick never waits for a step, and a step never waits for a frame.
//!
//! Here too are the run's Effects, which `super::save_locally` carries out: a snapshot's head
//! made into a lesson the way `attn-tutor import` makes one (the snapshot written as a model
//! into a temporary folder, then read back), and the trained model written to `-o DIR`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use attn_engine::import::HeadChoice;

use crate::app::{Action, App, OpenedHead, TrainingNews};
use crate::import::{ImportArgs, imported};
use crate::train::{Snapshot, Trainer, save};

/// How long a paused run sleeps before looking at its flags again (a resume wakes it at once).
const PAUSED_NAP: Duration = Duration::from_millis(200);

/// A run on its thread. Dropping it stops the run (at the end of the step it is in).
pub struct TrainingRun {
    news: Receiver<TrainingNews>,
    paused: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TrainingRun {
    /// Starts `trainer` on a thread of its own. Its first news is the snapshot of the weights
    /// as initialised.
    pub fn start(trainer: Trainer) -> TrainingRun {
        let (sender, news) = channel();
        let paused = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (paused, stop) = (Arc::clone(&paused), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("training".to_string())
                .spawn(move || train(trainer, &sender, &paused, &stop))
                .ok()
        };
        TrainingRun {
            news,
            paused,
            stop,
            thread,
        }
    }

    /// Hands the app what the run sent since last time, and the run whether the app wants it
    /// paused. Returns whether anything came (the screen then needs drawing again).
    pub fn between_keys(&mut self, app: &mut App) -> bool {
        let want_paused = app.training().is_some_and(|run| run.paused);
        if self.paused.swap(want_paused, Ordering::SeqCst)
            && !want_paused
            && let Some(thread) = &self.thread
        {
            thread.thread().unpark();
        }
        let mut came = false;
        // The steps since the last tick go in as one Action, in their place among the rest.
        let mut records = Vec::new();
        let mut seconds = 0.0;
        let flush = |app: &mut App, records: &mut Vec<_>, seconds: f64| {
            if !records.is_empty() {
                let records = std::mem::take(records);
                super::dispatch(
                    app,
                    Action::Training(TrainingNews::Steps { records, seconds }),
                    &mut super::save_locally,
                );
            }
        };
        for news in self.news.try_iter() {
            came = true;
            match news {
                TrainingNews::Steps {
                    records: more,
                    seconds: now,
                } => {
                    records.extend(more);
                    seconds = now;
                }
                other => {
                    flush(app, &mut records, seconds);
                    super::dispatch(app, Action::Training(other), &mut super::save_locally);
                }
            }
        }
        flush(app, &mut records, seconds);
        came
    }

    /// Stops the run at the end of the step it is in, and waits for it.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Drop for TrainingRun {
    fn drop(&mut self) {
        self.end();
    }
}

/// The thread's work: steps until the run is done or stopped, napping while paused. Only the
/// time spent stepping counts toward the run's seconds.
fn train(
    mut trainer: Trainer,
    news: &Sender<TrainingNews>,
    paused: &AtomicBool,
    stop: &AtomicBool,
) {
    let mut stepping = Duration::ZERO;
    let mut said_paused = false;
    // The trainer keeps no snapshot: each is sent as it is taken, for the app to keep (or not).
    let send_snapshot = |trainer: &Trainer| match trainer.snapshot() {
        Some(snapshot) => news
            .send(TrainingNews::Snapshot(Arc::new(snapshot)))
            .is_ok(),
        None => true,
    };
    if !send_snapshot(&trainer) {
        return;
    }
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if paused.load(Ordering::SeqCst) {
            if !said_paused
                && news
                    .send(TrainingNews::Paused(trainer.steps_done()))
                    .is_err()
            {
                return;
            }
            said_paused = true;
            std::thread::park_timeout(PAUSED_NAP);
            continue;
        }
        said_paused = false;
        let started = Instant::now();
        let Some(record) = trainer.step() else {
            let _ = news.send(TrainingNews::Finished);
            return;
        };
        stepping += started.elapsed();
        let step = TrainingNews::Steps {
            records: vec![record],
            seconds: stepping.as_secs_f64(),
        };
        if news.send(step).is_err() || !send_snapshot(&trainer) {
            return;
        }
    }
}

/// `Effect::OpenHead`: the head made into a lesson, as news for the app.
pub(crate) fn opened(snapshot: &Snapshot, layer: usize, head: usize, text: &str) -> Action {
    Action::Training(TrainingNews::Opened(
        open_head(snapshot, layer, head, text).map(|loaded| OpenedHead(Box::new(loaded))),
    ))
}

/// `Effect::WriteModel`: the model written, as news for the app.
pub(crate) fn written(snapshot: &Snapshot, folder: &Path) -> Action {
    let written = save(&snapshot.model, folder)
        .map(|()| folder.to_path_buf())
        .map_err(|error| error.to_string());
    match &written {
        Ok(_) => tracing::info!(step = snapshot.step, "wrote the trained model"),
        Err(error) => tracing::warn!(%error, "the trained model was not written"),
    }
    Action::Training(TrainingNews::Written(written))
}

/// The lesson `attn-tutor import DIR --text TEXT --layer L --head H` makes, where DIR is the
/// snapshot written as a model. The folder is named for the snapshot's step, as the lesson's
/// title names its model; it is gone once the lesson is made (the lesson holds its numbers).
///
/// What is wrong with the text is said for the box it was typed in: not as `import` says it,
/// for an option the learner never typed (`--text: …`) and a file in a folder they never saw.
pub fn open_head(
    snapshot: &Snapshot,
    layer: usize,
    head: usize,
    text: &str,
) -> Result<crate::lesson::LoadedLesson, String> {
    let symbols = text.split_whitespace().count();
    let context = snapshot.model.shape.context;
    if symbols > context {
        return Err(format!(
            "{symbols} symbols; the model reads at most {context} at once"
        ));
    }
    let for_the_box = |why: String| match why.strip_prefix("--text: ") {
        Some(why) => why.to_string(),
        None => why,
    };
    let scratch = tempfile::Builder::new()
        .prefix("attn-tutor-snapshot-")
        .tempdir()
        .map_err(|error| format!("no temporary folder to write the snapshot into: {error}"))?;
    let folder = scratch.path().join(snapshot_folder_name(snapshot.step));
    save(&snapshot.model, &folder).map_err(|error| error.to_string())?;
    imported(&ImportArgs {
        model: folder,
        text: text.to_string(),
        layer,
        head: HeadChoice::One(head),
        bos: false,
        output: None,
    })
    .map_err(for_the_box)
}

/// The name of the folder a snapshot is written into, which names the model in the title of a
/// lesson made from it: `induction-step-450`.
pub fn snapshot_folder_name(step: usize) -> String {
    format!("induction-step-{step}")
}
