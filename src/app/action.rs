//! What the learner asked for (Actions, decoded from keys and clicks) and what the app asks the
//! outside world to do in return (Effects).

use std::path::PathBuf;

use std::sync::Arc;

use crate::attention::MatrixName;

use super::poll::{PollEffect, PollReply};
use super::presented::{Audience, Presented};
use super::training::TrainingNews;
use super::tutor::Direction;
use crate::practice::ProgressStore;
use crate::train::Snapshot;

/// One thing the learner did, already decoded from keys or the mouse. The same Actions come from
/// a local terminal, an SSH channel and the tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    // Moving through a lesson.
    NextStep,
    PreviousStep,
    /// Jump to the step with this 1-based number on screen.
    GoToStep(usize),
    FirstStep,
    LastStep,
    /// Move the cell cursor in the focused matrix (or the selection in the picker).
    Move(Direction),
    NextMatrix,
    PreviousMatrix,
    /// `>`: the next head of a lesson with several (wrapping).
    NextHead,
    /// `<`: the previous head.
    PreviousHead,
    /// `L` in the picker: the scaling lab.
    OpenLab,
    /// `Space` on the training screen: pause the run, or let it go on.
    TogglePause,
    /// `t` on the training screen: type the text a head opened from the run reads.
    TypeText,
    /// What the training run sent (`crate::term::training`), or the outcome of its Effects.
    Training(TrainingNews),
    /// `)`: the generation steps at the next token.
    NextToken,
    /// `(`: at the token before.
    PreviousToken,
    /// `b`: the online softmax's tiles twice as large.
    LargerTiles,
    /// `B`: the online softmax's tiles half as large.
    SmallerTiles,
    /// `d`: give the lesson a backward pass (a `grad_output` drawn with a seed).
    AddBackward,
    /// `g`: one step of gradient descent, W ← W − η·dW.
    GradientStep,
    /// `G`: type η, the step size of `g`.
    SetLearningRate,
    /// A click on a cell (`col: None` is the row's token label).
    Select {
        matrix: MatrixName,
        row: usize,
        col: Option<usize>,
    },
    /// A click on a lesson in the picker.
    Pick(usize),
    ScrollNarration(i16),
    /// Scrolls the help's rows where they do not all fit the terminal.
    ScrollHelp(i16),
    // Changing the lesson.
    Edit,
    Undo,
    Redo,
    Reset,
    Reroll,
    Save,
    // Prompts and questions.
    Type(char),
    Paste(String),
    Backspace,
    ClearInput,
    Submit,
    Cancel,
    /// A one-key answer to a question on the status line (y, n, w, d …).
    Answer(char),
    // The app as a whole.
    Open,
    Back,
    Quit,
    ToggleHelp,
    // Practice.
    /// `x`: hide the step's results for the learner to predict, or show them again.
    TogglePractice,
    /// `X`: practise only the lesson's focus row of a step, or the whole step again.
    TogglePracticeRow,
    /// A hint for the hidden cell under the cursor: the first terms, all of them, the answer.
    Hint,
    /// A digit, minus or point typed on a hidden cell: the answer prompt opens with it.
    StartAnswer(char),
    /// The outcome of an `Effect::SaveProgress`.
    ProgressSaved(Result<(), String>),
    // A classroom.
    /// `f`: a student goes free, or follows the presenter again.
    ToggleFollow,
    /// The presenter's screen changed (sent to every student's app).
    Presenter(Arc<Presented>),
    /// The count of students changed (sent to the presenter's app).
    Audience(Audience),
    /// `a`: the presenter asks the class for the cell under the cursor, or reveals the poll
    /// open.
    AskClass,
    /// `A`: the presenter asks the cell just revealed again (a second vote).
    AskClassAgain,
    /// A digit, minus or point typed while the class's poll is open: a student's answer
    /// prompt opens with it.
    StartPollAnswer(char),
    /// The server's reply to an `Effect::Poll`.
    Poll(PollReply),
    /// The outcome of an `Effect::Save`, reported by whoever carried it out.
    Saved(Result<PathBuf, SaveFailure>),
}

impl Action {
    /// How a log names this action. Never what was typed, pasted or answered: a log may be
    /// read by others (a teacher's, a server's), and a learner's answers and edits are theirs.
    /// A match on every variant, so a new one must decide.
    pub(crate) fn logged(&self) -> String {
        match self {
            Action::Type(_) => "Type".to_string(),
            Action::Paste(text) => format!("Paste({} characters)", text.chars().count()),
            Action::Answer(_) => "Answer".to_string(),
            Action::StartAnswer(_) => "StartAnswer".to_string(),
            Action::StartPollAnswer(_) => "StartPollAnswer".to_string(),
            // A student's answer or the class's answers: never in a log but the polls file.
            Action::Poll(reply) => match reply {
                PollReply::Opened => "Poll(Opened)".to_string(),
                PollReply::Answers { answers, .. } => format!("Poll({} answers)", answers.len()),
                PollReply::Sent(result) => format!("Poll(Sent, ok: {})", result.is_ok()),
            },
            Action::Presenter(_) => "Presenter".to_string(),
            Action::Training(news) => format!("Training({})", news.logged()),
            Action::Saved(Ok(_)) => "Saved".to_string(),
            Action::Saved(Err(_)) => "Saved(failed)".to_string(),
            Action::ProgressSaved(result) => format!("ProgressSaved(ok: {})", result.is_ok()),
            Action::NextStep
            | Action::PreviousStep
            | Action::GoToStep(_)
            | Action::FirstStep
            | Action::LastStep
            | Action::Move(_)
            | Action::NextMatrix
            | Action::PreviousMatrix
            | Action::NextHead
            | Action::PreviousHead
            | Action::NextToken
            | Action::PreviousToken
            | Action::LargerTiles
            | Action::AddBackward
            | Action::GradientStep
            | Action::SetLearningRate
            | Action::SmallerTiles
            | Action::OpenLab
            | Action::TogglePause
            | Action::TypeText
            | Action::Select { .. }
            | Action::Pick(_)
            | Action::ScrollNarration(_)
            | Action::ScrollHelp(_)
            | Action::Edit
            | Action::Undo
            | Action::Redo
            | Action::Reset
            | Action::Reroll
            | Action::Save
            | Action::Backspace
            | Action::ClearInput
            | Action::Submit
            | Action::Cancel
            | Action::Open
            | Action::Back
            | Action::Quit
            | Action::ToggleHelp
            | Action::TogglePractice
            | Action::TogglePracticeRow
            | Action::Hint
            | Action::ToggleFollow
            | Action::AskClass
            | Action::AskClassAgain
            | Action::Audience(_) => format!("{self:?}"),
        }
    }
}

/// Why a save did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveFailure {
    /// The file is there already; the app asks before replacing it.
    Exists(PathBuf),
    /// Saving is not available here (for example, a student's session in a classroom).
    NotAllowed(String),
    Other(String),
}

/// Work the app cannot do itself because it touches the world outside.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Keep the learner's practice progress (where the store keeps it: a file, or memory).
    SaveProgress(ProgressStore),
    /// Write `contents` to `path`: atomically, and over an existing file only when `replace`.
    Save {
        path: PathBuf,
        contents: String,
        replace: bool,
    },
    /// Ask the classroom's server to open a poll, lock one, or take a student's answer.
    Poll(PollEffect),
    /// Make head `head` of layer `layer` of a training run's snapshot into a lesson on `text`,
    /// as `attn-tutor import` would from the snapshot written as a model; the outcome comes
    /// back as `TrainingNews::Opened`.
    OpenHead {
        snapshot: Arc<Snapshot>,
        layer: usize,
        head: usize,
        text: String,
    },
    /// Write a training run's last snapshot into its `-o` folder; the outcome comes back as
    /// `TrainingNews::Written`.
    WriteModel {
        snapshot: Arc<Snapshot>,
        folder: PathBuf,
    },
}
