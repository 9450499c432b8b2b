//! The tutor as a state machine: what is on screen, and how each Action changes it.
//!
//! Nothing here touches a terminal or a file. `update` takes one Action and returns the Effects
//! (saving a file) for the caller to carry out, so the same app runs in a local terminal, over an
//! SSH channel and in tests.

mod action;
mod allowance;
mod changed;
mod classroom;
mod history;
pub(crate) use history::number as as_typed;
mod lab;
mod poll;
mod practice;
mod presented;
pub(crate) mod screens;
mod training;
mod tutor;
mod typed;
mod update;

use std::path::PathBuf;

pub use action::{Action, Effect, SaveFailure};
pub use allowance::{Allowance, NoRoom};
pub use changed::ChangedCells;
pub use classroom::{Classroom, Follow};
pub use history::{Change, most_kept_bytes};
pub use lab::{LabScreen, SCREEN_MAX_KEYS};
pub use poll::{
    Bin, LOCKED, Poll, PollEffect, PollOnScreen, PollReply, Polling, Reveal, Tally, histogram,
    tally,
};
pub(crate) use practice::capitalised;
pub use practice::{
    Feedback, Practice, PracticeCount, practice_steps, symbols as practice_symbols,
};
pub use presented::{Audience, Presented};
pub use screens::{panels, rows_are_tokens, steps};
pub use training::{
    Curve, HeadOf, MOST_POINTS, MOST_SNAPSHOTS, OpenedHead, Snapshots, TrainScreen, TrainingNews,
    default_text,
};
pub use tutor::{Cursor, Direction, Tutor};
pub use typed::{cell_value, token_label};
pub use update::update;

use crate::attention::{Cell, MatrixName};
use crate::lesson::{LoadError, LoadedLesson};
use crate::practice::ProgressStore;

/// One line of the lesson picker: a lesson ready to open, or one that failed to load.
#[derive(Debug, Clone)]
pub struct PickerEntry {
    /// Built-in name, or the file's path as given.
    pub name: String,
    pub lesson: Result<LoadedLesson, LoadError>,
}

/// What fills the screen: one of the three at a time, so a tutor and a lab open together
/// cannot be written down.
#[derive(Debug, Clone, Default)]
pub enum Screen {
    /// The list of lessons.
    #[default]
    Picker,
    /// The lesson being taught.
    Tutor(Box<Tutor>),
    /// The scaling lab, opened from the picker.
    Lab(LabScreen),
    /// A training run (`attn-tutor train`), which the app keeps in `App::training` while a
    /// head opened from it is taught.
    Training,
}

// Read through the screen itself where the rest of the app is borrowed at the same time.
impl Screen {
    pub(crate) fn tutor(&self) -> Option<&Tutor> {
        match self {
            Screen::Tutor(tutor) => Some(tutor),
            _ => None,
        }
    }

    pub(crate) fn tutor_mut(&mut self) -> Option<&mut Tutor> {
        match self {
            Screen::Tutor(tutor) => Some(tutor),
            _ => None,
        }
    }

    pub(crate) fn lab(&self) -> Option<&LabScreen> {
        match self {
            Screen::Lab(lab) => Some(lab),
            _ => None,
        }
    }

    pub(crate) fn lab_mut(&mut self) -> Option<&mut LabScreen> {
        match self {
            Screen::Lab(lab) => Some(lab),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct App {
    pub picker: Vec<PickerEntry>,
    /// The highlighted line of the picker.
    pub picked: usize,
    /// What fills the screen under any overlay: the picker, a lesson's tutor or the lab.
    pub screen: Screen,
    pub overlay: Overlay,
    pub status: Option<Status>,
    /// Where to go once a save asked for on the way out has succeeded.
    pub after_save: Option<Leave>,
    pub quit: bool,
    /// The app's place in a classroom led by a presenter, if it is in one.
    pub classroom: Option<Classroom>,
    /// Practice progress per lesson: kept in a file by the local tutor, in memory elsewhere.
    pub progress: ProgressStore,
    /// The progress changed since it was last handed out to be kept.
    pub progress_changed: bool,
    /// Whether a lesson can be saved here: not in a classroom session, where the file would
    /// land on the teacher's machine. Nothing offers `w` where it cannot work.
    pub can_save: bool,
    /// The first help row shown, where the help is taller than the terminal.
    pub help_scroll: u16,
    /// Where the machine's memory is shared (a classroom server's student): asked before a
    /// lesson is opened. `None` for a tutor of one's own.
    pub allowance: Option<std::sync::Arc<dyn Allowance>>,
    /// A classroom's poll: the cell the presenter asked the class for, and how it went.
    pub polling: Polling,
    /// The training run this app watches (`attn-tutor train` in a terminal): on screen with
    /// `Screen::Training`, and kept while a lesson opened from it is on screen instead.
    pub training: Option<Box<TrainScreen>>,
}

/// What `w` says where saving is off.
pub const SAVING_OFF: &str = "Saving is off in a classroom session (the file would land on the \
    teacher's machine). Your edits stay while you are connected; attn-tutor on your own machine \
    can save a lesson";

/// What sits on top of the screen and takes the keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Help,
    Prompt(Prompt),
    Question(Question),
}

/// A line of text being typed on the status line.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub purpose: PromptFor,
    pub input: String,
}

/// Which tokens a row label names: the lesson's (the queries'), or cross-attention's source
/// (the keys').
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokens {
    Target,
    Source,
}

impl Tokens {
    /// The tokens that label the rows of `matrix` in `lesson`, when its rows are tokens.
    pub(crate) fn of_rows(lesson: &crate::lesson::Lesson, matrix: MatrixName) -> Option<Tokens> {
        match matrix.entry().rows {
            crate::pipeline::Axis::Keys if lesson.is_cross() => Some(Tokens::Source),
            axis if axis.is_tokens() => Some(Tokens::Target),
            _ => None,
        }
    }

    /// The labels themselves.
    pub(crate) fn in_lesson(self, lesson: &crate::lesson::Lesson) -> &[String] {
        match self {
            Tokens::Target => &lesson.tokens,
            Tokens::Source => &lesson.source_tokens,
        }
    }

    /// "token", or in cross-attention (`cross`) "target token" or "source token", as a label
    /// is named in a prompt or a message.
    pub(crate) fn noun(self, cross: bool) -> &'static str {
        match (self, cross) {
            (Tokens::Target, false) => "token",
            (Tokens::Target, true) => "target token",
            (Tokens::Source, _) => "source token",
        }
    }

    /// The same at the head of a prompt or a title: "Token", "Target token", "Source token".
    pub(crate) fn title(self, cross: bool) -> &'static str {
        match (self, cross) {
            (Tokens::Target, false) => "Token",
            (Tokens::Target, true) => "Target token",
            (Tokens::Source, _) => "Source token",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptFor {
    Cell(Cell),
    /// The label of a token: the source's in cross-attention when `Tokens::Source`.
    Label(Tokens, usize),
    SavePath,
    /// The learner's prediction of a hidden cell.
    Answer(Cell),
    /// η, the step size of a step of gradient descent (`G`).
    LearningRate,
    /// A student's answer to the class's poll with this number.
    PollAnswer(u64),
    /// The text a head opened from a training run reads.
    HeadText,
}

/// A question answered with one key.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// Leaving a lesson with unsaved edits: save, discard or stay.
    LeaveUnsaved(Leave),
    /// The save file exists: replace it or not.
    Replace { path: PathBuf },
    /// Saved as it is, the lesson would be over the file size limit (edited generated matrices
    /// are written out number by number); saving with these matrices back to their generators
    /// fits.
    TooLarge { keep: Vec<MatrixName> },
    /// `e` on a computed cell: go to the cell it is computed from.
    JumpTo { from: Cell, to: Cell },
    /// Opening a lesson practised before: go back to the step where the learner stopped.
    Resume { step_index: usize },
    /// The presenter quitting ends the class for every student connected, and loses the
    /// unsaved edits of those gone free. The question counts them as they are now (the
    /// presenter's `Audience`), while it is asked.
    EndClass,
    /// A free student following the presenter again puts the presenter's screen in place of
    /// their own, and their unsaved edits with it.
    FollowAgain,
    /// Quitting while a training run is still going stops it, and its model is not written.
    StopTraining,
}

/// Where the learner is going when they leave a lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leave {
    ToPicker,
    Quit,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub is_error: bool,
}

impl Status {
    pub fn info(text: impl Into<String>) -> Status {
        Status {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Status {
        Status {
            text: text.into(),
            is_error: true,
        }
    }
}

impl App {
    /// The lesson being taught, if one is open.
    pub fn tutor(&self) -> Option<&Tutor> {
        self.screen.tutor()
    }

    pub fn tutor_mut(&mut self) -> Option<&mut Tutor> {
        self.screen.tutor_mut()
    }

    /// The scaling lab, if it is open.
    pub fn lab(&self) -> Option<&LabScreen> {
        self.screen.lab()
    }

    /// The training run, if this app watches one (on screen or behind a lesson opened from it).
    pub fn training(&self) -> Option<&TrainScreen> {
        self.training.as_deref()
    }

    /// The training screen, when it is what fills the screen.
    pub fn training_on_screen(&self) -> Option<&TrainScreen> {
        match self.screen {
            Screen::Training => self.training(),
            _ => None,
        }
    }

    /// An app on the training screen of a run about to start: no lesson list, the progress of
    /// practice kept in memory only (each lesson opened from the run is made for the moment).
    pub fn training_app(screen: TrainScreen) -> App {
        let mut app = App::new(Vec::new(), None);
        app.screen = Screen::Training;
        app.training = Some(Box::new(screen));
        app
    }

    /// A new app on the picker, or on lesson `open` of the picker when given.
    pub fn new(picker: Vec<PickerEntry>, open: Option<usize>) -> App {
        let mut app = App {
            picker,
            picked: open.unwrap_or(0),
            screen: Screen::Picker,
            overlay: Overlay::None,
            status: None,
            after_save: None,
            quit: false,
            classroom: None,
            progress: ProgressStore::in_memory(),
            progress_changed: false,
            can_save: true,
            help_scroll: 0,
            allowance: None,
            polling: Polling::default(),
            training: None,
        };
        if open.is_some() {
            update(&mut app, Action::Open);
        }
        app
    }

    /// Turns practice on in the lesson open, if it is not on already.
    pub fn start_practice(&mut self) {
        if let Some(tutor) = self.screen.tutor_mut()
            && tutor.practice.is_none()
        {
            // Start where there is something to predict (not on the given embeddings).
            if !tutor.has_practice_on(tutor.step())
                && let Some(index) = (tutor.step_index..tutor.steps.len())
                    .find(|index| tutor.has_practice_on(tutor.steps[*index]))
            {
                tutor.go_to_step(index);
            }
            self.status = Some(practice::toggle(tutor));
            // An offer to resume at the step practice starts on offers nothing.
            if self.overlay
                == (Overlay::Question(Question::Resume {
                    step_index: tutor.step_index,
                }))
            {
                self.overlay = Overlay::None;
            }
        }
    }

    /// The built-in lessons, as the picker lists them first.
    pub fn builtin_entries() -> Vec<PickerEntry> {
        crate::lesson::BUILTIN
            .iter()
            .map(|builtin| PickerEntry {
                name: builtin.name.to_string(),
                lesson: crate::lesson::load_text(builtin.name, None, builtin.text.to_string()),
            })
            .collect()
    }
}
