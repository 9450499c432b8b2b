//! The non-interactive command line: list, show, check, new, freeze, completions and the man page.
//!
//! Each subcommand writes to the given writers and returns its exit code, so tests can run it
//! in-process; `run` wires them to stdout and stderr.

mod check;
pub use check::gradient_lines;
mod lab;
mod list;
mod progress;
mod show;
mod table;
mod train;
mod tutor;
mod write;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::TypedValueParser as _;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::attention::Step;

/// A step-through tutor for the attention mechanism of Transformers.
///
/// Walk through embedding → (positions) → Q, K, V → (rotation) → scores QKᵀ → ÷√d_k → mask →
/// softmax → output, with every number explained. Lessons are TOML files; the built-in lessons
/// (`attn-tutor list`) reproduce well-known worked examples and show what positions, several
/// heads and cross-attention do.
#[derive(Debug, Parser)]
#[command(name = "attn-tutor", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A lesson to open in the tutor: a built-in name (see `list`) or a .toml path.
    pub lesson: Option<String>,
    /// Never use color, as with the NO_COLOR environment variable.
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Also list every *.toml lesson in this folder in the tutor's picker (repeatable).
    #[arg(long, value_name = "DIR")]
    pub lessons: Vec<PathBuf>,
    /// Write the tutor's log to this file (nothing is logged without it).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Record what the tutor (or `train`'s live screen) draws as an asciicast (v2) for
    /// `asciinema play`; never over an existing file.
    #[arg(long, value_name = "FILE.cast")]
    pub record: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the built-in lessons: name, title and shape.
    List,
    /// Print a lesson's matrices step by step, with the arithmetic of a cell written out.
    Show {
        /// A built-in lesson name or the path of a lesson file.
        lesson: String,
        /// Show only this step (`all`: every step, as without --step).
        #[arg(long, value_parser = step_parser())]
        step: Option<StepChoice>,
        /// Explain this cell of each step's result: ROW,COL as token labels or 1-based numbers,
        /// like `cat,sat` or `2,3`. Without it, the focus row is explained.
        #[arg(long, value_name = "ROW,COL")]
        cell: Option<String>,
        /// The generation steps (a lesson with `decode = true`) at this token: a 1-based
        /// position or a token label. Without it, the lesson's focus token.
        #[arg(long, value_name = "T")]
        token: Option<String>,
        /// The backward pass for a lesson without `grad_output`: its gradient drawn from
        /// N(0, 1) with seed S (a lesson's own `grad_output` is kept).
        #[arg(long, value_name = "S")]
        grad_seed: Option<u64>,
        /// The screen's size for `--format svg` and `html`, in columns and rows, from 80x24 to
        /// 400x200 [default: 80x24].
        #[arg(long, value_name = "WxH")]
        size: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
        format: ShowFormat,
        /// With --format json: no spaces or line breaks (the same keys and values, about half
        /// the bytes, written faster).
        #[arg(long)]
        compact: bool,
    },
    /// Validate lessons and compare their printed figures with the exact values.
    ///
    /// Exit status: 0 when all is well, 1 when a figure is outside its tolerance or a lesson's
    /// gradients disagree with finite differences, 2 when a lesson is invalid.
    Check {
        /// Built-in names or lesson files; all built-in lessons when none is given.
        lessons: Vec<String>,
    },
    /// Write a commented template lesson that passes `check`. Never overwrites a file.
    New {
        /// Where to write the new lesson, e.g. my-lesson.toml.
        path: PathBuf,
        /// The lesson's title.
        #[arg(long, default_value = "My attention lesson")]
        title: String,
    },
    /// Write a copy of a lesson with its generated (random) matrices written out as numbers.
    Freeze {
        /// A built-in lesson name or the path of a lesson file.
        lesson: String,
        /// The new file (never overwritten), or - for standard output.
        #[arg(short, long, value_name = "OUT.toml")]
        output: PathBuf,
    },
    /// Open a lesson in the tutor in practice mode: predict each step's results yourself.
    Practice {
        /// A built-in lesson name or the path of a lesson file.
        lesson: String,
    },
    /// Open an attention layer of a real model (GPT-2, Llama, Mistral, Qwen2) on your own
    /// sentence, offline: every number of it explained, from the checkpoint's own weights.
    ///
    /// Exit status 2 when the checkpoint, the text or an option cannot be used (nothing is
    /// written then).
    Import(Box<crate::import::ImportArgs>),
    /// Print the practice kept for each lesson; with --reset, clear it.
    Progress {
        /// Clear the practice kept (of LESSON only, when given).
        #[arg(long)]
        reset: bool,
        /// Only this lesson.
        lesson: Option<String>,
    },
    /// Serve a classroom over SSH (and with --web, in browsers): every student who connects
    /// gets their own tutor.
    ///
    /// Students need nothing but ssh: `ssh -p 2222 NAME@HOST`, or with --web a browser. Choose
    /// who may join with exactly one of --open, --password-file or --authorized-keys.
    Serve(Box<ServeArgs>),
    /// Train a tiny attention-only model and watch an induction head form: a live screen in
    /// a terminal, one JSON line per step otherwise (or with --format json).
    ///
    /// Exit status 2 when an option or the output folder cannot be used (said before training).
    Train(train::TrainArgs),
    /// Run a lab: an experiment swept over settings, printed as a table or JSON.
    Lab {
        #[command(subcommand)]
        lab: LabCommand,
    },
    /// Print a shell completion script, e.g. `attn-tutor completions bash > attn-tutor.bash`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `attn-tutor man > attn-tutor.1`.
    Man,
}

/// `serve`'s options. Exactly one of --open, --password-file and --authorized-keys says who may
/// join.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("access").required(true).args(["open", "password_file", "authorized_keys"])))]
pub struct ServeArgs {
    /// Address and port to listen on; use 0.0.0.0:2222 to let other machines join.
    #[arg(long, default_value = "127.0.0.1:2222", value_name = "ADDR:PORT", value_parser = socket_address)]
    pub listen: std::net::SocketAddr,
    /// Also offer every *.toml lesson of this folder (repeatable).
    #[arg(long, value_name = "DIR")]
    pub lessons: Vec<PathBuf>,
    /// Also serve a browser seat on this address and port: a page with a terminal, for
    /// students without ssh (school laptops, tablets); use 0.0.0.0:8080 to let other machines
    /// join.
    #[arg(long, value_name = "ADDR:PORT", value_parser = socket_address)]
    pub web: Option<std::net::SocketAddr>,
    /// With --web: serve browsers only, no SSH.
    #[arg(long, requires = "web", conflicts_with_all = ["listen", "host_key"])]
    pub no_ssh: bool,
    /// With --web: serve the page over HTTPS with this PEM certificate (chain), so the join
    /// code does not cross the network in the clear.
    #[arg(long, requires_all = ["web", "tls_key"], value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// With --tls-cert: the certificate's PEM private key.
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// The server's Ed25519 host key; made on first start (mode 0600) and reused.
    #[arg(long, value_name = "FILE")]
    pub host_key: Option<PathBuf>,
    /// Let anyone join, with any name and no password.
    #[arg(long)]
    pub open: bool,
    /// Students sign in with the join code on the first line of this file.
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// Students sign in with a key listed in this OpenSSH authorized_keys file.
    #[arg(long, value_name = "FILE")]
    pub authorized_keys: Option<PathBuf>,
    /// The most students connected at once.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_sessions: usize,
    /// The most memory the students' lessons may take together, like 4G or 512M (default:
    /// half of what the machine has available as the server starts). Each lesson a student
    /// opens reserves the most it can come to hold; one that would pass this is not opened,
    /// and the student is told why.
    #[arg(long, value_name = "SIZE", value_parser = memory_size)]
    pub max_memory: Option<u64>,
    /// The most connections at once from one address (a classroom often shares one).
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub per_address: usize,
    /// Seconds a connection has to sign in (1 to 3600).
    #[arg(long, default_value_t = 20, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub login_seconds: u64,
    /// Minutes without a key from a student before their session ends (1 to 10080, a week).
    #[arg(long, default_value_t = 30, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..=10080))]
    pub idle_minutes: u64,
    /// Seconds between checks that a student's client is still there (SSH keepalives, browser
    /// pings); one that answers none of 3 in a row is dropped, and its place freed (1 to 3600).
    #[arg(long, default_value_t = 60, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub keepalive_seconds: u64,
    /// Write the server log to this file instead of standard error (with --present, the
    /// log is kept only when this is given: the terminal shows the tutor).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Run the tutor in this terminal as the presenter: students follow its lesson, step,
    /// cell and edits, and press f to go free.
    #[arg(long)]
    pub present: bool,
    /// With --present: keep students on the presenter's screen (they can still move their
    /// own cursor to look at a cell).
    #[arg(long, requires = "present")]
    pub lock: bool,
    /// With --present: record the presenter's screen as an asciicast (v2); never over an
    /// existing file.
    #[arg(long, requires = "present", value_name = "FILE.cast")]
    pub record: Option<PathBuf>,
    /// With --present: append each poll (a asks the class for a cell) to this file at its
    /// reveal, one JSON line: lesson, step, cell, truth, vote, asked_at, revealed_at and the
    /// answers (anonymous). Earlier lines are never rewritten.
    #[arg(long, requires = "present", value_name = "FILE")]
    pub polls: Option<PathBuf>,
}

/// The labs.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Why scores are divided by √d_k: for each d_k, random queries and keys from N(0,
    /// variance), the spread of raw and scaled scores, and what softmax does with each (its
    /// largest weight, its entropy, its gradient).
    Scaling {
        /// The d_k to try, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "1,2,4,8,16,32,64,128,256,512,1024"
        )]
        dims: Vec<usize>,
        /// Keys in each row (n).
        #[arg(long, default_value_t = 16, value_name = "N")]
        keys: usize,
        /// Rows (a query against n keys) drawn for each d_k.
        #[arg(long, default_value_t = 256, value_name = "N")]
        samples: usize,
        /// The seed of the random numbers: the same seed gives the same figures.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The variance of every query and key entry.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        variance: f64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

/// What `show` writes: the lesson's numbers (as `Format`), or the tutor's screens as pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    Text,
    Markdown,
    Json,
    /// The tutor's screen of one step (`--step`, else the first) as a picture (`--size`,
    /// `--cell`); monochrome with --no-color or NO_COLOR.
    Svg,
    /// A self-contained page of the tutor's screens, one section per step (or `--step`'s).
    Html,
}

/// The steps, as `--step` spells them: their keys in the step table.
/// An address and port to listen on, with what would be right when it is not one.
fn socket_address(text: &str) -> Result<std::net::SocketAddr, String> {
    text.parse().map_err(|_| {
        "expected an IP address and a port, like 0.0.0.0:8080 (every address of this machine) \
         or 127.0.0.1:8080 (this machine only); [::]:8080 for IPv6 too"
            .to_string()
    })
}

/// A size of memory in bytes, from mebibytes (`512M`) or gibibytes (`4G`); from 16M to 1024G.
fn memory_size(text: &str) -> Result<u64, String> {
    const MIB: u64 = 1024 * 1024;
    let wrong = || {
        "expected a size of memory like 4G (gibibytes) or 512M (mebibytes), from 16M to 1024G"
            .to_string()
    };
    let trimmed = text.trim();
    let (number, unit) = match trimmed.char_indices().find(|(_, ch)| !ch.is_ascii_digit()) {
        Some((at, _)) => trimmed.split_at(at),
        None => return Err(wrong()),
    };
    let unit = match unit.to_ascii_uppercase().as_str() {
        "M" | "MB" | "MIB" => MIB,
        "G" | "GB" | "GIB" => 1024 * MIB,
        _ => return Err(wrong()),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|number| number.checked_mul(unit))
        .filter(|bytes| (16 * MIB..=1024 * 1024 * MIB).contains(bytes))
        .ok_or_else(wrong)
}

/// `show --step`: one step, or every step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepChoice {
    One(Step),
    All,
}

fn step_parser() -> impl clap::builder::TypedValueParser<Value = StepChoice> {
    let keys = Step::ALL.map(Step::key).into_iter().chain(["all"]);
    clap::builder::PossibleValuesParser::new(keys)
        .map(|key: String| Step::from_key(&key).map_or(StepChoice::All, StepChoice::One))
}

/// Exit statuses shared by the subcommands.
pub(crate) mod status {
    pub(crate) const OK: u8 = 0;
    /// `check`: a printed figure is outside its tolerance, or a lesson's gradients disagree
    /// with finite differences.
    pub(crate) const FIGURE_OFF: u8 = 1;
    /// An invalid lesson, or bad usage.
    pub(crate) const INVALID: u8 = 2;
}

/// Whether to color what goes to stderr.
fn use_color(cli_no_color: bool) -> bool {
    !cli_no_color
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        && std::io::stderr().is_terminal()
}

/// Whether `--no-color` (anywhere on the command line: it is global) or NO_COLOR asks for no
/// color, whatever the streams are.
fn no_color_asked() -> bool {
    std::env::args_os().any(|arg| arg == "--no-color")
        || std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty())
}

/// `train` without its task: clap names the missing `<TASK>` but not what it may be (it lists
/// the tasks only for a wrong one), so a tip names them.
fn with_the_tasks(mut error: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let task_missing = error.kind() == ErrorKind::MissingRequiredArgument
        && matches!(
            error.get(ContextKind::InvalidArg),
            Some(ContextValue::Strings(missing)) if missing.iter().any(|arg| arg == "<TASK>")
        );
    if task_missing {
        let tasks: Vec<String> = train::Task::value_variants()
            .iter()
            .filter_map(|task| task.to_possible_value())
            .map(|task| format!("attn-tutor train {}", task.get_name()))
            .collect();
        error.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                format!("name the task to train: {}", tasks.join(" or ")).into(),
            ]),
        );
    }
    error
}

/// Parses the command line; `--no-color` and NO_COLOR also silence color in clap's own
/// messages, which are written before our flags are read.
pub fn parse_args() -> Cli {
    let no_color = no_color_asked();
    // An argument with hidden characters (an escape in `--listen`'s value, a bidi control in a
    // step's name) may be quoted in clap's message: that message is then made without clap's
    // own styles, so that every escape in it is the argument's and the one sanitising rule
    // can show it.
    let hostile = std::env::args_os().any(|arg| {
        let arg = arg.to_string_lossy();
        crate::lesson::text::printable(&arg) != arg
    });
    let mut command = Cli::command();
    if no_color || hostile {
        command = command.color(clap::ColorChoice::Never);
    }
    if hostile {
        command = command.styles(clap::builder::Styles::plain());
    }
    let parsed = command
        .try_get_matches()
        .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches))
        .map_err(with_the_tasks);
    match parsed {
        Ok(cli) => cli,
        Err(error) if hostile => {
            let text = crate::lesson::text::printable_lines(&error.render().ansi().to_string());
            if error.use_stderr() {
                eprint!("{text}");
            } else {
                print!("{text}");
            }
            std::process::exit(error.exit_code())
        }
        Err(error) => error.exit(),
    }
}

pub(crate) fn write_or_report(
    out: &mut dyn Write,
    err: &mut dyn Write,
    bytes: &[u8],
    what: &str,
) -> u8 {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => status::OK,
        // A reader that stops early (`| head`) is not an error worth a message.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => status::OK,
        Err(error) => {
            let _ = writeln!(err, "error: cannot write {what}: {error}");
            status::INVALID
        }
    }
}

/// clap_complete's bash script names a hyphenated binary's subcommands one way where it finds
/// them (`attn__tutor__subcmd__show`) and another where it completes them
/// (`attn__subcmd__tutor__subcmd__show`), so nothing after a subcommand completes. Both are
/// made the first.
fn bash_names_fixed(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("attn__subcmd__tutor", "attn__tutor")
        .into_bytes()
}

/// Text for a man page: backslashes doubled, and a leading `.` or `'` kept from reading as a
/// request.
fn roff(text: &str) -> String {
    let text = text.replace('\\', "\\\\");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}

/// One man page for the whole tool: the subcommands are described in it rather than referred
/// to pages of their own, which nothing installs.
fn man_page(out: &mut dyn Write) -> std::io::Result<()> {
    let command = Cli::command();
    let man = clap_mangen::Man::new(command.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    writeln!(out, ".SH COMMANDS")?;
    for sub in command.get_subcommands() {
        let about = sub
            .get_about()
            .map(|about| about.to_string())
            .unwrap_or_default();
        writeln!(
            out,
            ".TP\n\\fB{}\\fR\n{}",
            sub.get_name(),
            about.replace('\\', "\\\\")
        )?;
    }
    writeln!(
        out,
        ".PP\nRun \\fBattn-tutor help COMMAND\\fR for a command's options."
    )?;
    writeln!(out, ".SH KEYS\nIn the tutor, on a lesson's screen:")?;
    let mut keys = crate::keymap::KEYS.iter().peekable();
    while let Some((key, what)) = keys.next() {
        // A description that goes on in the next row (with no key of its own) is one item.
        let mut what = what.to_string();
        while let Some((_, more)) = keys.next_if(|(key, _)| key.is_empty()) {
            what = format!("{what} {more}");
        }
        writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(key), roff(&what))?;
    }
    writeln!(
        out,
        ".SH FILES\n.TP\n\\fB$XDG_DATA_HOME/attn-tutor/progress.toml\\fR\n\
         Practice progress: each lesson's scores and last step \
         (\\fBattn-tutor progress\\fR lists it, \\fB--reset\\fR clears it).\n\
         .TP\n\\fB$XDG_DATA_HOME/attn-tutor/ssh_host_ed25519_key\\fR\n\
         The classroom server's host key, made on first use with mode 0600 \
         (\\fBserve --host-key\\fR names another).\n\
         .PP\nWithout XDG_DATA_HOME the folder is ~/.local/share/attn-tutor."
    )?;
    writeln!(
        out,
        ".SH ENVIRONMENT\n.TP\n\\fBNO_COLOR\\fR\nWhen set and not empty, no colour \
         (as \\fB--no-color\\fR): the tutor draws with bold, reverse and underline only.\n\
         .TP\n\\fBCOLORTERM\\fR, \\fBTERM\\fR\nHow many colours the terminal shows: \
         truecolor or 24bit in COLORTERM for the full heatmap, else 256 or 16 colours from TERM.\n\
         .TP\n\\fBXDG_DATA_HOME\\fR\nWhere attn-tutor keeps its files (see FILES)."
    )?;
    writeln!(
        out,
        ".SH EXIT STATUS\n.TP\n\\fB{}\\fR\nSuccess.\n.TP\n\\fB{}\\fR\n\
         \\fBcheck\\fR: a printed figure is outside its tolerance, or a lesson's gradients \
         disagree with finite differences.\n.TP\n\\fB{}\\fR\n\
         An invalid lesson, a file that cannot be read or written, or bad usage.\n\
         .TP\n\\fB129\\fR\nThe tutor's terminal hung up.",
        status::OK,
        status::FIGURE_OFF,
        status::INVALID
    )?;
    man.render_version_section(out)
}

pub fn run(cli: Cli) -> ExitCode {
    let color = use_color(cli.no_color);
    // `--record` records the tutor; a subcommand other than `practice`, `import` without -o and
    // `train` on its screen draws nothing to record.
    if let (Some(path), Some(command)) = (&cli.record, &cli.command)
        && !matches!(command, Command::Practice { .. })
        && !matches!(command, Command::Import(args) if args.output.is_none())
        && !matches!(command, Command::Train(args) if train::wants_screen(args))
    {
        let path = crate::lesson::text::printable_path(path);
        if matches!(command, Command::Train(_)) {
            eprintln!(
                "error: --record {path} records the live training screen, and `train` draws \
                 none with --format json or when its output is not a terminal"
            );
        } else {
            eprintln!(
                "error: --record {path} records the tutor: use it with no subcommand (or \
                 `practice`, `import` without -o, or `train` on its live screen); a \
                 classroom's presenter is recorded by `serve --present --record FILE`"
            );
        }
        return ExitCode::from(status::INVALID);
    }
    let practice = match &cli.command {
        Some(Command::Practice { lesson }) => Some(lesson.clone()),
        _ => None,
    };
    // `import` without `-o` opens what it made in the tutor.
    let imported = match &cli.command {
        Some(Command::Import(args)) if args.output.is_none() => {
            match crate::import::imported(args) {
                Ok(loaded) => Some(loaded),
                Err(message) => {
                    eprintln!("error: {message}");
                    return ExitCode::from(status::INVALID);
                }
            }
        }
        _ => None,
    };
    if cli.command.is_none() || practice.is_some() || imported.is_some() {
        // The tutor must not run under a held stdout lock: its signal thread restores the
        // terminal through stdout while the main thread may be stuck reading a dead terminal.
        let code = tutor::run(
            match imported {
                Some(loaded) => tutor::Opening::Loaded(Box::new(loaded)),
                None => practice
                    .as_deref()
                    .or(cli.lesson.as_deref())
                    .map_or(tutor::Opening::Picker, tutor::Opening::Named),
            },
            practice.is_some(),
            &cli.lessons,
            (cli.log.as_deref(), cli.record.as_deref()),
            cli.no_color,
            color,
            &mut std::io::stderr(),
        );
        return ExitCode::from(code);
    }
    // The live screen owns the terminal, as the tutor does: no lock held.
    if let Some(Command::Train(args)) = &cli.command
        && train::wants_screen(args)
    {
        return ExitCode::from(train::screen(
            args,
            cli.no_color,
            cli.record.as_deref(),
            &mut std::io::stderr(),
        ));
    }
    if let Some(Command::Serve(args)) = cli.command {
        // The server's threads log to stderr: no lock may be held while it runs.
        let code = tutor::serve(
            *args,
            cli.no_color,
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        );
        return ExitCode::from(code);
    }
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let code = run_command(cli.command, color, &mut stdout, &mut stderr);
    let _ = stdout.flush();
    ExitCode::from(code)
}

/// Runs a command that writes only to `out` and `err` (every one but the tutor and `serve`,
/// which own the terminal), and returns its exit status.
pub fn run_command(
    command: Option<Command>,
    color: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match command {
        Some(Command::List) => list::run(out),
        Some(Command::Progress { reset, lesson }) => {
            progress::run(reset, lesson.as_deref(), out, err)
        }
        // Handled above, with the tutor.
        Some(Command::Practice { .. }) => status::OK,
        Some(Command::Import(args)) => match &args.output {
            Some(path) => crate::import::write(&args, path, out, err),
            // Without -o, `run` opened the tutor.
            None => status::OK,
        },
        Some(Command::Show {
            lesson,
            step,
            cell,
            token,
            grad_seed,
            size,
            format,
            compact,
        }) => {
            if compact && format != ShowFormat::Json {
                let _ = writeln!(
                    err,
                    "error: --compact writes JSON without spaces; it has no meaning for {}\n\
                     help: add --format json, or leave out --compact",
                    match format {
                        ShowFormat::Text => "--format text",
                        ShowFormat::Markdown => "--format markdown",
                        ShowFormat::Svg => "--format svg",
                        ShowFormat::Html => "--format html",
                        ShowFormat::Json => "--format json",
                    }
                );
                return status::INVALID;
            }
            if step == Some(StepChoice::All) && format == ShowFormat::Svg {
                let _ = writeln!(
                    err,
                    "error: --step all with --format svg: a picture is one screen\n\
                     help: give one step (--step softmax), or --format html for a page of every step"
                );
                return status::INVALID;
            }
            if size.is_some() && !matches!(format, ShowFormat::Svg | ShowFormat::Html) {
                let _ = writeln!(
                    err,
                    "error: --size is the size of a picture's screen; text, markdown and json \
                     are as wide as their matrices\n\
                     help: add --format svg or --format html, or leave out --size"
                );
                return status::INVALID;
            }
            let size = size.unwrap_or_else(|| "80x24".to_string());
            let step = match step {
                Some(StepChoice::One(step)) => Some(step),
                Some(StepChoice::All) | None => None,
            };
            show::run(
                &lesson,
                show::Asked {
                    step,
                    cell: cell.as_deref(),
                    token: token.as_deref(),
                    grad_seed,
                    size: &size,
                    monochrome: no_color_asked(),
                    compact,
                },
                format,
                color,
                out,
                err,
            )
        }
        Some(Command::Check { lessons }) => check::run(&lessons, color, out, err),
        Some(Command::New { path, title }) => write::new(&path, &title, out, err),
        Some(Command::Freeze { lesson, output }) => {
            write::freeze(&lesson, &output, color, out, err)
        }
        Some(Command::Train(args)) => train::json_lines(&args, out, err),
        Some(Command::Lab {
            lab:
                LabCommand::Scaling {
                    dims,
                    keys,
                    samples,
                    seed,
                    variance,
                    format,
                },
        }) => lab::scaling(
            &crate::lab::scaling::Settings {
                dims,
                keys,
                samples,
                seed,
                variance,
            },
            format,
            out,
            err,
        ),
        // Handled above, without holding the stdout and stderr locks.
        Some(Command::Serve(_)) => status::OK,
        Some(Command::Completions { shell }) => {
            // clap_complete panics when its writer fails (a closed pipe), so it writes to memory.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "attn-tutor", &mut script);
            if shell == clap_complete::Shell::Bash {
                script = bash_names_fixed(&script);
            }
            write_or_report(out, err, &script, "the completion script")
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            match man_page(&mut page) {
                Ok(()) => write_or_report(out, err, &page, "the man page"),
                Err(error) => {
                    let _ = writeln!(err, "error: cannot write the man page: {error}");
                    status::INVALID
                }
            }
        }
        // Handled above, without the locks.
        None => status::OK,
    }
}

/// `show LESSON --format json [--compact]` from a lesson already loaded: what the command does
/// after reading its command line and the lesson (computing it, making every working, writing
/// the JSON), for the benchmark that sets it beside numpy + orjson, whose clock starts with the
/// inputs read too.
pub fn show_json_of_loaded(
    loaded: &crate::lesson::LoadedLesson,
    compact: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    show::run_loaded(
        loaded,
        show::Asked {
            compact,
            ..show::Asked::default()
        },
        ShowFormat::Json,
        out,
        err,
    )
}
