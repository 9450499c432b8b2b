//! `attn-tutor import MODEL --text …`: a real model's attention layer on the learner's own
//! sentence, as a lesson. The checkpoint is read offline (only the tensors the layer needs), the
//! text is tokenized by the model's own tokenizer, and the engine builds the lesson; it then
//! opens in the tutor, or is written to a new lesson file with `-o`.

mod tokenize;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::checkpoint::{Architecture, Checkpoint};
use crate::lesson::limits::{MAX_FILE_BYTES, MAX_FILE_SIZE};
use crate::lesson::text::{printable, printable_path};
use crate::lesson::{LoadedLesson, lesson_to_toml, load_text, write_new_file};
use attn_engine::import::{HeadChoice, ImportRequest};

use tokenize::{Tokens, Vocabulary};

/// `import`'s options, as the command line gives them.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The model: a folder holding config.json and model.safetensors (or a sharded
    /// model.safetensors.index.json), and optionally tokenizer.json; or the path of the
    /// safetensors file with config.json beside it.
    pub model: PathBuf,
    /// The sentence the model reads: its tokens are the lesson's rows.
    #[arg(long)]
    pub text: String,
    /// The layer whose attention is shown, 0-based as the checkpoint numbers its layers.
    #[arg(long, default_value_t = 0, value_name = "L")]
    pub layer: usize,
    /// One head (0-based), or `all` for every head with their concat and W_O.
    #[arg(long, default_value = "all", value_name = "H|all", value_parser = head_choice)]
    pub head: HeadChoice,
    /// Put the model's beginning-of-sequence token first.
    #[arg(long)]
    pub bos: bool,
    /// Write the lesson to this new file (never over an existing one) instead of opening it;
    /// `-` writes it to standard output.
    #[arg(short, long, value_name = "FILE.toml")]
    pub output: Option<PathBuf>,
}

/// `--head`: a number from 0, or `all`.
fn head_choice(text: &str) -> Result<HeadChoice, String> {
    if text == "all" {
        return Ok(HeadChoice::All);
    }
    text.parse().map(HeadChoice::One).map_err(|_| {
        "expected a head's number from 0 (as the checkpoint numbers them), or `all`".to_string()
    })
}

/// The lesson of `args`, read back from its text as `check` reads a file when it fits one (so
/// that what opens is what `-o` writes), or the message saying what is wrong.
pub fn imported(args: &ImportArgs) -> Result<LoadedLesson, String> {
    let checkpoint = Checkpoint::open(&args.model).map_err(|error| error.to_string())?;
    let config = checkpoint.config();
    let folder = checkpoint.folder().to_path_buf();
    let vocabulary = Vocabulary::of(&folder, config.architecture == Architecture::Gpt2)
        .map_err(|error| format!("{}: {}", printable_path(&error.file), error.why))?
        .ok_or_else(|| {
            format!(
                "{}: no tokenizer.json, and only a GPT-2 has a tokenizer built in\n\
                 help: copy the model's tokenizer.json into the folder",
                printable_path(&folder)
            )
        })?;
    let bos = if args.bos {
        Some(checkpoint.bos_token_id().ok_or_else(|| {
            format!(
                "{}: --bos: config.json has no `bos_token_id`",
                printable_path(&folder.join("config.json"))
            )
        })?)
    } else {
        None
    };
    let tokens = Tokens::of(&vocabulary, &args.text, bos.map(|id| id as u64)).map_err(|error| {
        if error.in_text {
            format!("--text: {}", error.why)
        } else {
            format!("{}: {}", printable_path(&error.file), error.why)
        }
    })?;
    if tokens.ids.is_empty() {
        return Err("--text: the text has no tokens; give the model a sentence to read".into());
    }
    let request = ImportRequest {
        model: model_name(&args.model),
        text: args.text.clone(),
        token_ids: tokens.ids,
        labels: tokens.labels,
        layer: args.layer,
        heads: args.head,
        tokenizer: if vocabulary.is_builtin_gpt2() {
            "GPT-2's BPE (built in)".to_string()
        } else {
            "its tokenizer.json".to_string()
        },
    };
    let lesson =
        attn_engine::import::lesson(&checkpoint, &request).map_err(|error| error.to_string())?;
    let text = lesson_to_toml(&lesson);
    // The name keeps the learner's progress: one per model, layer and head, as a file's stem
    // would (`import` without -o has no file).
    let name = match &args.output {
        Some(path) => path.file_stem().map_or_else(
            || "imported".to_string(),
            |stem| printable(&stem.to_string_lossy()),
        ),
        None => format!(
            "{}-layer{}-head{}",
            request.model,
            args.layer,
            match args.head {
                HeadChoice::One(head) => head.to_string(),
                HeadChoice::All => "all".to_string(),
            }
        ),
    };
    if text.len() > MAX_FILE_BYTES {
        // Every head of GPT-2 small is 52 MB written out: the tutor holds it, a file may not.
        if args.output.is_some() {
            return Err(format!(
                "the lesson would be {:.1} MB as a file, and a lesson file is at most \
                 {MAX_FILE_SIZE}; nothing was written\n\
                 help: import one head (--head 0 to --head {}), or open every head in the \
                 tutor (without -o)",
                text.len() as f64 / 1e6,
                checkpoint.config().heads.saturating_sub(1)
            ));
        }
        return Ok(LoadedLesson {
            name,
            path: None,
            text,
            lesson,
            warnings: Vec::new(),
        });
    }
    // Read back as `check` reads a file, so that what opens is what `-o` writes.
    let path = args.output.clone().filter(|path| path != Path::new("-"));
    load_text(&name, path, text).map_err(|error| {
        format!(
            "the lesson made from {} does not read back (please report this):\n{}",
            printable_path(&args.model),
            error.render(false)
        )
    })
}

/// The model's name for the lesson's title: its folder's name (or its file's folder's).
fn model_name(model: &Path) -> String {
    let folder = if model.is_dir() {
        Some(model)
    } else {
        model.parent()
    };
    let name = folder
        .and_then(|folder| std::fs::canonicalize(folder).ok())
        .and_then(|folder| {
            folder
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "model".to_string());
    printable(&name)
}

/// `import … -o FILE`: the lesson written to a new file.
pub(crate) fn write(
    args: &ImportArgs,
    path: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    use crate::cli::status;
    let loaded = match imported(args) {
        Ok(loaded) => loaded,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return status::INVALID;
        }
    };
    // `-o -`: the lesson on standard output, as `freeze -o -` writes it.
    if path == Path::new("-") {
        return crate::cli::write_or_report(out, err, loaded.text.as_bytes(), "the lesson");
    }
    match write_new_file(path, &loaded.text) {
        Ok(()) => {
            let _ = writeln!(
                out,
                "wrote {}: {}; open it with: attn-tutor {}",
                printable_path(path),
                loaded.lesson.title,
                printable_path(path)
            );
            status::OK
        }
        Err(error) => {
            let _ = writeln!(err, "error: {error}; nothing was written");
            status::INVALID
        }
    }
}
