//! `attn-tutor train induction`: trains the tiny attention-only model of `crate::train` and
//! logs each step as one JSON line (`{"step", "loss", "induction", "previous_token"}`), then
//! with `-o DIR` writes the model as `import` reads it. A terminal gets the live screen instead
//! of the lines (`--format json` asks for the lines there too).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::status;
use crate::app::{App, TrainScreen};
use crate::lesson::text::printable_path;
use crate::term::training::TrainingRun;
use crate::train::{MAX_STEPS, TrainConfig, Trainer, prepare_folder, save};
use crate::ui::Theme;

/// What `train` trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Task {
    /// A 2-layer attention-only model on random sequences repeated twice: layer 0 learns a
    /// previous-token head, layer 1 an induction head.
    Induction,
}

/// How `train` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrainFormat {
    /// The live screen in a terminal; JSON lines when standard output is not one.
    Screen,
    /// One JSON line per step, also in a terminal.
    Json,
}

#[derive(Debug, Args)]
pub struct TrainArgs {
    #[arg(value_enum)]
    pub task: Task,
    /// The seed of the weights' start and of the sequences: the same seed gives the same run
    /// on this machine.
    // A negative number reaches the parser, which says what a seed is (clap would otherwise
    // take `-1` for an option).
    #[arg(long, default_value_t = TrainConfig::default().seed, allow_negative_numbers = true, value_parser = seed)]
    pub seed: u64,
    /// Steps of AdamW, a batch each (1 to 1000000).
    #[arg(long, default_value_t = TrainConfig::default().steps, allow_negative_numbers = true, value_parser = steps)]
    pub steps: usize,
    /// Write the trained model into this new (or empty) folder, as `attn-tutor import` reads
    /// it: config.json, model.safetensors and tokenizer.json. Nothing is overwritten.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// `json`: one JSON line per step even in a terminal.
    #[arg(long, value_enum, default_value_t = TrainFormat::Screen)]
    pub format: TrainFormat,
}

/// `--seed`: what a seed is, whatever was given instead (`-1`, `x`, a number too large).
fn seed(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("the seed is a whole number from 0 to {}", u64::MAX))
}

/// `--steps`: from 1 to `MAX_STEPS`, in every case that is not.
fn steps(text: &str) -> Result<usize, String> {
    text.parse()
        .ok()
        .filter(|steps| (1..=MAX_STEPS).contains(steps))
        .ok_or_else(|| format!("give a whole number of steps from 1 to {MAX_STEPS}"))
}

impl TrainArgs {
    /// The run these options ask for.
    pub fn config(&self) -> TrainConfig {
        TrainConfig {
            seed: self.seed,
            steps: self.steps,
            ..TrainConfig::default()
        }
    }
}

/// A run checked before it starts: its settings, and the folder it will write (made now, so a
/// folder that cannot be written is said before the run rather than after it).
pub(crate) fn ready(args: &TrainArgs) -> Result<Trainer, String> {
    let trainer = Trainer::new(args.config()).map_err(|error| error.to_string())?;
    if let Some(folder) = &args.output {
        prepare_folder(folder).map_err(|error| format!("-o: {error}"))?;
    }
    Ok(trainer)
}

/// Trains, writing a JSON line per step to `out`, then the model to `-o DIR`.
pub(crate) fn json_lines(args: &TrainArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut trainer = match ready(args) {
        Ok(trainer) => trainer,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return status::INVALID;
        }
    };
    // Whether the lines still have a reader.
    let mut read = true;
    while let Some(record) = trainer.step() {
        if !read {
            continue;
        }
        let line = serde_json::to_string(&record).unwrap_or_default();
        if let Err(error) = writeln!(out, "{line}") {
            // A reader that went away (`| head -1`) ends the log. Without -o the lines were
            // all the run was for, so it ends too, quietly, as other tools do on a closed
            // pipe; with -o the run goes on to write its model.
            let closed = error.kind() == std::io::ErrorKind::BrokenPipe;
            if !closed {
                let _ = writeln!(err, "error: cannot write the steps' lines: {error}");
            }
            match (&args.output, closed) {
                (None, true) => return status::OK,
                (None, false) => return status::INVALID,
                (Some(_), _) => read = false,
            }
        }
    }
    let _ = out.flush();
    match &args.output {
        Some(folder) => write_model(&trainer, folder, err),
        None => status::OK,
    }
}

/// Whether `train` draws its live screen: asked for (not `--format json`), on a terminal that
/// can take keys.
pub(crate) fn wants_screen(args: &TrainArgs) -> bool {
    args.format == TrainFormat::Screen
        && std::io::stdout().is_terminal()
        && std::io::stdin().is_terminal()
}

/// Trains with the live screen; once the learner quits, says on `err` what became of the model.
/// Options and the folder are checked before the screen is drawn, so that a mistake is said
/// in the shell, where it stays.
/// With `record`, the screen is recorded as `--record` records the tutor (an asciicast).
pub(crate) fn screen(
    args: &TrainArgs,
    no_color: bool,
    record: Option<&Path>,
    err: &mut dyn Write,
) -> u8 {
    // A folder made for this run is taken away again if the run stops before writing into it.
    let made_folder = args.output.as_ref().filter(|folder| !folder.exists());
    let trainer = match ready(args) {
        Ok(trainer) => trainer,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return status::INVALID;
        }
    };
    // After the options are found good, so that a mistake leaves no recording behind.
    let cast = match record.map(|path| super::tutor::start_recording(path, Some("train induction")))
    {
        Some(Ok(cast)) => Some(cast.shared()),
        Some(Err(problem)) => {
            if let Some(folder) = made_folder {
                let _ = std::fs::remove_dir(folder);
            }
            let _ = writeln!(err, "error: {problem}");
            return status::INVALID;
        }
        None => None,
    };
    let app = App::training_app(TrainScreen::new(
        trainer.config().clone(),
        args.output.clone(),
    ));
    let mut run = TrainingRun::start(trainer);
    // What the run came to, read from the app between keys (the loop keeps the app).
    let mut last = Ending::default();
    let ran = crate::term::local::run_with(
        app,
        Theme::from_env(no_color),
        cast,
        &mut |app, _| {
            let came = run.between_keys(app);
            if let Some(training) = app.training() {
                last = Ending {
                    steps_done: training.steps_done(),
                    steps: training.steps(),
                    written: training.written.clone(),
                };
            }
            came
        },
        &mut crate::term::save_locally,
    );
    run.stop();
    let code = match &last.written {
        Some(Ok(folder)) => said_written(folder, err),
        Some(Err(why)) => {
            let _ = writeln!(err, "error: -o: {why}");
            status::INVALID
        }
        None if last.steps_done < last.steps => {
            if let Some(folder) = made_folder {
                // Only an empty folder goes: remove_dir refuses any other.
                let _ = std::fs::remove_dir(folder);
            }
            let _ = writeln!(
                err,
                "training stopped at step {} of {}{}",
                last.steps_done,
                last.steps,
                if args.output.is_some() {
                    "; no model was written"
                } else {
                    ""
                }
            );
            status::OK
        }
        None => status::OK,
    };
    match ran {
        Ok(None) => code,
        Ok(Some(signal)) => u8::try_from(128 + signal).unwrap_or(status::INVALID),
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            status::INVALID
        }
    }
}

/// What a run on the screen came to.
#[derive(Debug, Default)]
struct Ending {
    steps_done: usize,
    steps: usize,
    written: Option<Result<PathBuf, String>>,
}

/// Says where the model was written, and how to open it.
fn said_written(folder: &Path, err: &mut dyn Write) -> u8 {
    let _ = writeln!(
        err,
        "wrote the model to {} (attn-tutor import {} --text \"A B C A B C\" --layer 1)",
        printable_path(folder),
        printable_path(folder)
    );
    status::OK
}

/// Writes the trained model; says where.
pub(crate) fn write_model(trainer: &Trainer, folder: &Path, err: &mut dyn Write) -> u8 {
    match save(trainer.model(), folder) {
        Ok(()) => said_written(folder, err),
        Err(error) => {
            let _ = writeln!(err, "error: -o: {error}");
            status::INVALID
        }
    }
}
