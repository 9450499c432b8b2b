//! `attn-tutor train induction`: trains the tiny attention-only model of `crate::train` and
//! logs each step as one JSON line (`{"step", "loss", "induction", "previous_token"}`), then
//! with `-o DIR` writes the model as `import` reads it. A terminal gets the live screen instead
//! of the lines (`--format json` asks for the lines there too).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::status;
use crate::lesson::text::printable_path;
use crate::train::{TrainConfig, Trainer, prepare_folder, save};

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
    #[arg(long, default_value_t = TrainConfig::default().seed)]
    pub seed: u64,
    /// Steps of AdamW, a batch each (1 to 1000000).
    #[arg(long, default_value_t = TrainConfig::default().steps)]
    pub steps: usize,
    /// Write the trained model into this new (or empty) folder, as `attn-tutor import` reads
    /// it: config.json, model.safetensors and tokenizer.json. Nothing is overwritten.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// `json`: one JSON line per step even in a terminal.
    #[arg(long, value_enum, default_value_t = TrainFormat::Screen)]
    pub format: TrainFormat,
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
    while let Some(record) = trainer.step() {
        let line = serde_json::to_string(&record).unwrap_or_default();
        // A reader that goes away (`| head`) ends the log, not the run: the model is still
        // written.
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
    match &args.output {
        Some(folder) => write_model(&trainer, folder, err),
        None => status::OK,
    }
}

/// Writes the trained model; says where.
pub(crate) fn write_model(trainer: &Trainer, folder: &Path, err: &mut dyn Write) -> u8 {
    match save(trainer.model(), folder) {
        Ok(()) => {
            let _ = writeln!(
                err,
                "wrote the model to {} (attn-tutor import {} --text \"A B C A B C\" --layer 1)",
                printable_path(folder),
                printable_path(folder)
            );
            status::OK
        }
        Err(error) => {
            let _ = writeln!(err, "error: -o: {error}");
            status::INVALID
        }
    }
}
