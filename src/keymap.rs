//! The key map: one table of every key and mouse gesture the tutor answers to, where each
//! applies, what it does, and how the help overlay and the bottom line name it. Dispatch
//! (`crate::input::action_for`), the help overlay, the key hints and the man page all read this table,
//! so they cannot tell different stories. Adding a key is one entry here.

use std::sync::LazyLock;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::{Action, App, Classroom, Direction, Follow, Overlay, Question};
use crate::pipeline::Step;

/// Where a key applies. The app's state decides which places take the keys, in order (see
/// `places`): the first place with a key that matches decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Every screen, whatever is on top of it.
    Anywhere,
    /// The help overlay.
    Help,
    /// A line being typed on the status line (a number, a token, a file name, an answer).
    Prompt,
    /// A question answered with one key on the status line.
    Question,
    /// The offer to resume at the step where a lesson was left; other keys go to the lesson.
    Resume,
    /// The lesson list.
    Picker,
    /// A lesson's screen in practice, with a hidden cell under the cursor.
    Predicting,
    /// A student's screen while the class's poll is open: a number typed is their answer.
    Polled,
    /// A lesson's screen.
    Lesson,
    /// The scaling lab's screen.
    Lab,
    /// The training screen (`attn-tutor train` in a terminal).
    Training,
}

/// What is pressed, apart from the modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Key(KeyCode),
    /// Any character from the first to the second, both included.
    Chars(char, char),
    /// The digits 1 to 9: the number of a step. The help names them by how many steps there are.
    StepNumber,
    /// Any character at all (typing on a prompt, answering a question).
    AnyChar,
    WheelUp,
    WheelDown,
    /// A left click; what it does depends on where it lands (`Does::ByPosition`).
    Click,
}

/// Which modifiers a key accepts. Shift and Alt are ignored unless said otherwise, since
/// terminals disagree on reporting them; Control makes most keys something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mods {
    Any,
    Control,
    NoControl,
    /// Neither Control nor Shift (an arrow whose Shift form does something else).
    NoControlNoShift,
    Shift,
    /// Neither Control nor Alt: a character typed, not a command.
    Typed,
}

impl Mods {
    fn accept(self, modifiers: KeyModifiers) -> bool {
        let control = modifiers.contains(KeyModifiers::CONTROL);
        let shift = modifiers.contains(KeyModifiers::SHIFT);
        let alt = modifiers.contains(KeyModifiers::ALT);
        match self {
            Mods::Any => true,
            Mods::Control => control,
            Mods::NoControl => !control,
            Mods::NoControlNoShift => !control && !shift,
            Mods::Shift => shift && !control,
            Mods::Typed => !control && !alt,
        }
    }
}

/// What a key does.
#[derive(Debug, Clone, Copy)]
pub enum Does {
    /// This Action, given the character pressed (`'\0'` for a key that is not a character).
    Act(fn(char) -> Action),
    /// Whatever is under the pointer (a click): `super::mouse_action` finds it.
    ByPosition,
}

/// One key of an entry.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub code: Code,
    pub mods: Mods,
    pub does: Does,
    /// Whether the help names it. A key left out does what a key the help names does.
    pub shown: bool,
}

impl Key {
    /// Whether this key event is this key (a mouse gesture never is).
    pub fn matches(&self, key: KeyEvent) -> bool {
        let code = match (self.code, key.code) {
            (Code::Key(want), pressed) => want == pressed,
            (Code::Chars(first, last), KeyCode::Char(ch)) => (first..=last).contains(&ch),
            (Code::StepNumber, KeyCode::Char(ch)) => ('1'..='9').contains(&ch),
            (Code::AnyChar, KeyCode::Char(_)) => true,
            _ => false,
        };
        code && self.mods.accept(key.modifiers)
    }

    /// How the help writes this key: `Ctrl-r`, `Shift-↑`, `PgDn`, `1 … 7`.
    pub fn name(&self, steps: usize) -> String {
        let name = match self.code {
            Code::Key(code) => key_name(code),
            Code::Chars(first, last) => format!("{first} … {last}"),
            Code::StepNumber => format!("1 … {steps}"),
            Code::AnyChar => "any character".to_string(),
            Code::WheelUp | Code::WheelDown => "wheel".to_string(),
            Code::Click => "click".to_string(),
        };
        match self.mods {
            Mods::Control => format!("Ctrl-{name}"),
            Mods::Shift => format!("Shift-{name}"),
            _ => name,
        }
    }
}

fn key_name(code: KeyCode) -> String {
    match code {
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::Char(ch) => ch.to_string(),
        KeyCode::Left => "←".to_string(),
        KeyCode::Down => "↓".to_string(),
        KeyCode::Up => "↑".to_string(),
        KeyCode::Right => "→".to_string(),
        KeyCode::PageDown => "PgDn".to_string(),
        KeyCode::PageUp => "PgUp".to_string(),
        KeyCode::BackTab => "Shift-Tab".to_string(),
        other => other.to_string(),
    }
}

/// One row of the table: keys that belong together, where they apply and how they are told.
#[derive(Debug)]
pub struct Entry {
    pub places: &'static [Place],
    /// The keys in groups, as the help writes them: one space within a group, two between.
    pub keys: &'static [&'static [Key]],
    /// The help's words for these keys, a line each; none: the help overlay has no row for it.
    pub help: &'static [&'static str],
    /// The keys as the bottom line names them (`n/p`, `←↓↑→`): names of its keys, whole or a
    /// character each, between spaces or slashes.
    pub short: &'static str,
}

impl Entry {
    /// The keys as the help's key column writes them.
    pub fn label(&self, steps: usize) -> String {
        self.keys
            .iter()
            .map(|group| {
                group
                    .iter()
                    .filter(|key| key.shown)
                    .map(|key| key.name(steps))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|group| !group.is_empty())
            .collect::<Vec<_>>()
            .join("  ")
    }

    pub fn applies_in(&self, place: Place) -> bool {
        self.places.contains(&place)
    }
}

// Small constructors, so that each entry reads as its keys.
const fn key(code: KeyCode, mods: Mods, does: fn(char) -> Action) -> Key {
    Key {
        code: Code::Key(code),
        mods,
        does: Does::Act(does),
        shown: true,
    }
}

const fn ch(ch: char, mods: Mods, does: fn(char) -> Action) -> Key {
    key(KeyCode::Char(ch), mods, does)
}

const fn code(code: Code, mods: Mods, does: fn(char) -> Action) -> Key {
    Key {
        code,
        mods,
        does: Does::Act(does),
        shown: true,
    }
}

const fn hidden(key: Key) -> Key {
    Key {
        shown: false,
        ..key
    }
}

const CLICK: Key = Key {
    code: Code::Click,
    mods: Mods::Any,
    does: Does::ByPosition,
    shown: true,
};

use Mods::{Any, NoControl};

// On a lesson's screen. Control with any key but r and c does nothing there.
const LESSON: &[Place] = &[Place::Lesson];

pub(crate) static NEXT_PREVIOUS: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('n', NoControl, |_| Action::NextStep)],
        &[ch('p', NoControl, |_| Action::PreviousStep)],
        &[key(KeyCode::Tab, NoControl, |_| Action::NextStep)],
        &[key(KeyCode::PageDown, NoControl, |_| Action::NextStep)],
        &[key(KeyCode::PageUp, NoControl, |_| Action::PreviousStep)],
        // Shift-Tab mirrors Tab; the help leaves it out to keep its key column narrow.
        &[hidden(key(KeyCode::BackTab, NoControl, |_| {
            Action::PreviousStep
        }))],
    ],
    help: &["next step, previous step"],
    short: "n/p",
};

pub(crate) static GO_TO_STEP: Entry = Entry {
    places: LESSON,
    keys: &[&[code(Code::StepNumber, NoControl, |digit| {
        Action::GoToStep(digit.to_digit(10).unwrap_or(1) as usize)
    })]],
    // A lesson of heads has up to 13 steps; one digit reaches the first nine.
    help: &["go to step 1 … 9 (later ones: n, End)"],
    // No bottom line names it: how many steps there are is the header's to say.
    short: "",
};

pub(crate) static FIRST_LAST: Entry = Entry {
    places: LESSON,
    keys: &[
        &[key(KeyCode::Home, NoControl, |_| Action::FirstStep)],
        &[key(KeyCode::End, NoControl, |_| Action::LastStep)],
    ],
    help: &["first step, last step"],
    short: "Home/End",
};

pub(crate) static MOVE: Entry = Entry {
    places: LESSON,
    keys: &[
        &[
            key(KeyCode::Left, NoControl, |_| Action::Move(Direction::Left)),
            // Shift-↓ and Shift-↑ scroll the narration instead.
            key(KeyCode::Down, Mods::NoControlNoShift, |_| {
                Action::Move(Direction::Down)
            }),
            key(KeyCode::Up, Mods::NoControlNoShift, |_| {
                Action::Move(Direction::Up)
            }),
            key(KeyCode::Right, NoControl, |_| {
                Action::Move(Direction::Right)
            }),
        ],
        &[
            ch('h', NoControl, |_| Action::Move(Direction::Left)),
            ch('j', NoControl, |_| Action::Move(Direction::Down)),
            ch('k', NoControl, |_| Action::Move(Direction::Up)),
            ch('l', NoControl, |_| Action::Move(Direction::Right)),
        ],
    ],
    help: &["move the cell cursor (← at column 1: the token)"],
    short: "←↓↑→",
};

pub(crate) static MATRIX: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('[', NoControl, |_| Action::PreviousMatrix)],
        &[ch(']', NoControl, |_| Action::NextMatrix)],
    ],
    help: &["previous, next matrix on the screen"],
    short: "[ ]",
};

/// Only a lesson with several heads names these keys on its bottom line and in its help.
pub(crate) static HEAD: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('<', NoControl, |_| Action::PreviousHead)],
        &[ch('>', NoControl, |_| Action::NextHead)],
    ],
    help: &["previous, next head (a lesson with several)"],
    short: "< >",
};

/// Only a lesson with generation steps names these keys on its bottom line and in its help.
pub(crate) static TOKEN: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('(', NoControl, |_| Action::PreviousToken)],
        &[ch(')', NoControl, |_| Action::NextToken)],
    ],
    help: &["previous, next token (the generation steps)"],
    short: "( )",
};

/// `( )` walk the tiles on the online softmax step, and name them so there; `b` `B` size them.
pub(crate) static TILE: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('b', NoControl, |_| Action::LargerTiles)],
        &[ch('B', NoControl, |_| Action::SmallerTiles)],
    ],
    help: &["online softmax: larger, smaller tiles; ( ) walk"],
    short: "b/B",
};

/// The backward pass: `d` gives a lesson one, `g` takes a step of gradient descent.
pub(crate) static BACKWARD: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('d', NoControl, |_| Action::AddBackward)],
        &[ch('g', NoControl, |_| Action::GradientStep)],
        &[ch('G', NoControl, |_| Action::SetLearningRate)],
    ],
    help: &["backward pass; a gradient step; its size η"],
    short: "d/g/G",
};

pub(crate) static SELECT: Entry = Entry {
    places: LESSON,
    keys: &[&[CLICK]],
    help: &["select a cell or a token"],
    short: "click",
};

pub(crate) static EDIT: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('e', NoControl, |_| Action::Edit)],
        &[key(KeyCode::Enter, NoControl, |_| Action::Edit)],
    ],
    help: &["edit; a computed cell: go to its first operand"],
    short: "e",
};

pub(crate) static UNDO_REDO: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('u', NoControl, |_| Action::Undo)],
        &[ch('r', Mods::Control, |_| Action::Redo)],
    ],
    help: &["undo, redo"],
    short: "u",
};

pub(crate) static RESET_REROLL: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('R', NoControl, |_| Action::Reset)],
        &[ch('r', NoControl, |_| Action::Reroll)],
    ],
    help: &["reset the lesson; re-roll a generated matrix"],
    short: "R",
};

pub(crate) static SAVE: Entry = Entry {
    places: LESSON,
    keys: &[&[ch('w', NoControl, |_| Action::Save)]],
    help: &["save the edited lesson as a new file"],
    short: "w",
};

pub(crate) static SCROLL: Entry = Entry {
    places: LESSON,
    keys: &[
        &[
            key(KeyCode::Up, Mods::Shift, |_| Action::ScrollNarration(-1)),
            key(KeyCode::Down, Mods::Shift, |_| Action::ScrollNarration(1)),
        ],
        &[
            code(Code::WheelUp, Any, |_| Action::ScrollNarration(-1)),
            hidden(code(Code::WheelDown, Any, |_| Action::ScrollNarration(1))),
        ],
    ],
    help: &["scroll the narration"],
    short: "Shift-↑ Shift-↓",
};

pub(crate) static PRACTICE: Entry = Entry {
    places: LESSON,
    keys: &[&[ch('x', NoControl, |_| Action::TogglePractice)]],
    help: &["practice: predict the hidden ?, typing a number"],
    short: "x",
};

pub(crate) static PRACTICE_ROW: Entry = Entry {
    places: LESSON,
    keys: &[&[ch('X', NoControl, |_| Action::TogglePracticeRow)]],
    help: &["practice: only the focus row (X again: all)"],
    short: "X",
};

pub(crate) static HINT: Entry = Entry {
    places: LESSON,
    keys: &[&[ch('t', NoControl, |_| Action::Hint)]],
    help: &["practice: a hint (again: more, then the answer)"],
    short: "t",
};

pub(crate) static FOLLOW: Entry = Entry {
    places: LESSON,
    keys: &[&[ch('f', NoControl, |_| Action::ToggleFollow)]],
    help: &["in a classroom: go free, or follow again"],
    short: "f",
};

pub(crate) static HELP: Entry = Entry {
    places: LESSON,
    keys: &[&[ch('?', NoControl, |_| Action::ToggleHelp)]],
    help: &["this help"],
    short: "?",
};

pub(crate) static BACK: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('q', NoControl, |_| Action::Back)],
        &[key(KeyCode::Esc, NoControl, |_| Action::Back)],
    ],
    help: &["back to the lessons, where q or Esc quits"],
    short: "q",
};

pub(crate) static QUIT: Entry = Entry {
    places: &[Place::Anywhere],
    keys: &[&[ch('c', Mods::Control, |_| Action::Quit)]],
    help: &["quit"],
    short: "Ctrl-c",
};

/// In practice, on a hidden cell, a number typed is the learner's answer (the prompt opens with
/// it). The help tells it with `x`; the bottom line says it.
pub(crate) static PREDICT: Entry = Entry {
    places: &[Place::Predicting],
    keys: &[&[
        code(Code::Chars('0', '9'), NoControl, Action::StartAnswer),
        ch('-', NoControl, Action::StartAnswer),
        ch('.', NoControl, Action::StartAnswer),
    ]],
    help: &[],
    short: "",
};

/// The presenter's keys for a class poll.
pub(crate) static ASK: Entry = Entry {
    places: LESSON,
    keys: &[
        &[ch('a', NoControl, |_| Action::AskClass)],
        &[ch('A', NoControl, |_| Action::AskClassAgain)],
    ],
    help: &["poll: ask the class for this cell; a again reveals; A asks again"],
    short: "a",
};

/// On the lesson list, `a` reveals a poll the presenter asked before leaving its lesson (the
/// bottom line says so); asking is done on a lesson, where the help names it.
pub(crate) static PICK_ASK: Entry = Entry {
    places: PICKER,
    keys: &[&[ch('a', Any, |_| Action::AskClass)]],
    help: &[],
    short: "a",
};

/// While the class's poll is open, a number a student types is their answer (the prompt opens
/// with it), wherever they are. The bottom line says it.
pub(crate) static POLL_ANSWER: Entry = Entry {
    places: &[Place::Polled],
    keys: &[&[
        code(Code::Chars('0', '9'), NoControl, Action::StartPollAnswer),
        ch('-', NoControl, Action::StartPollAnswer),
        ch('.', NoControl, Action::StartPollAnswer),
    ]],
    help: &["a poll open: a number you type (or paste) is your answer"],
    short: "",
};

// In the lesson list, keys take any modifier. Its help line is made of the entries with words
// (`picker_help`); the lesson rows below it name the rest.
const PICKER: &[Place] = &[Place::Picker];

pub(crate) static PICK_MOVE: Entry = Entry {
    places: PICKER,
    keys: &[
        &[
            key(KeyCode::Up, Any, |_| Action::Move(Direction::Up)),
            ch('k', Any, |_| Action::Move(Direction::Up)),
            hidden(code(Code::WheelUp, Any, |_| Action::Move(Direction::Up))),
        ],
        &[
            key(KeyCode::Down, Any, |_| Action::Move(Direction::Down)),
            ch('j', Any, |_| Action::Move(Direction::Down)),
            hidden(code(Code::WheelDown, Any, |_| {
                Action::Move(Direction::Down)
            })),
        ],
    ],
    help: &["choose"],
    short: "↑↓",
};

pub(crate) static PICK_OPEN: Entry = Entry {
    places: PICKER,
    keys: &[
        &[key(KeyCode::Enter, Any, |_| Action::Open)],
        &[key(KeyCode::Right, Any, |_| Action::Open)],
        &[ch('l', Any, |_| Action::Open)],
    ],
    help: &["opens"],
    short: "Enter",
};

pub(crate) static PICK_CLICK: Entry = Entry {
    places: PICKER,
    keys: &[&[CLICK]],
    help: &[],
    short: "click",
};

pub(crate) static PICK_FIRST_LAST: Entry = Entry {
    places: PICKER,
    keys: &[
        &[key(KeyCode::Home, Any, |_| Action::FirstStep)],
        &[key(KeyCode::End, Any, |_| Action::LastStep)],
    ],
    help: &[],
    short: "Home/End",
};

pub(crate) static PICK_QUIT: Entry = Entry {
    places: PICKER,
    keys: &[
        &[ch('q', Any, |_| Action::Back)],
        &[key(KeyCode::Esc, Any, |_| Action::Back)],
    ],
    help: &["quits"],
    short: "q",
};

pub(crate) static PICK_HELP: Entry = Entry {
    places: PICKER,
    keys: &[&[ch('?', Any, |_| Action::ToggleHelp)]],
    help: &[],
    short: "?",
};

pub(crate) static PICK_FOLLOW: Entry = Entry {
    places: PICKER,
    keys: &[&[ch('f', Any, |_| Action::ToggleFollow)]],
    help: &[],
    short: "f",
};

pub(crate) static PICK_LAB: Entry = Entry {
    places: PICKER,
    keys: &[&[ch('L', Any, |_| Action::OpenLab)]],
    help: &["the scaling lab (why √d_k)"],
    short: "L",
};

const LAB: &[Place] = &[Place::Lab];

pub(crate) static LAB_DIM: Entry = Entry {
    places: LAB,
    keys: &[
        &[key(KeyCode::Left, Any, |_| Action::Move(Direction::Left))],
        &[key(KeyCode::Right, Any, |_| Action::Move(Direction::Right))],
        &[ch('h', Any, |_| Action::Move(Direction::Left))],
        &[ch('l', Any, |_| Action::Move(Direction::Right))],
    ],
    help: &["choose d_k"],
    short: "←→",
};

pub(crate) static LAB_KEYS: Entry = Entry {
    places: LAB,
    keys: &[
        &[ch('[', Any, |_| Action::PreviousMatrix)],
        &[ch(']', Any, |_| Action::NextMatrix)],
    ],
    help: &["halve, double the keys in a row"],
    short: "[ ]",
};

pub(crate) static LAB_SEED: Entry = Entry {
    places: LAB,
    keys: &[&[ch('r', Any, |_| Action::Reroll)]],
    help: &["draw again with the next seed"],
    short: "r",
};

pub(crate) static LAB_BACK: Entry = Entry {
    places: LAB,
    keys: &[
        &[ch('q', Any, |_| Action::Back)],
        &[key(KeyCode::Esc, Any, |_| Action::Back)],
    ],
    help: &["back to the lessons"],
    short: "q",
};

pub(crate) static LAB_HELP: Entry = Entry {
    places: LAB,
    keys: &[&[ch('?', Any, |_| Action::ToggleHelp)]],
    help: &["these keys"],
    short: "?",
};

/// The help's rows of a screen of its own (the lab, the training run): each entry's label and
/// words, in the order given.
fn rows_of(entries: &[&'static Entry]) -> Vec<(String, &'static str)> {
    entries
        .iter()
        .flat_map(|entry| {
            let label = entry.label(1);
            entry.help.iter().map(move |words| (label.clone(), *words))
        })
        .collect()
}

/// The help's rows in the scaling lab: its own keys, and Ctrl-c.
static LAB_ROWS: LazyLock<Vec<(String, &'static str)>> =
    LazyLock::new(|| rows_of(&[&LAB_DIM, &LAB_KEYS, &LAB_SEED, &LAB_HELP, &LAB_BACK, &QUIT]));

const TRAINING: &[Place] = &[Place::Training];

pub(crate) static TRAIN_PAUSE: Entry = Entry {
    places: TRAINING,
    keys: &[&[ch(' ', NoControl, |_| Action::TogglePause)]],
    help: &["pause the training, or let it go on"],
    short: "Space",
};

pub(crate) static TRAIN_SCRUB: Entry = Entry {
    places: TRAINING,
    keys: &[
        &[key(KeyCode::Left, NoControl, |_| {
            Action::Move(Direction::Left)
        })],
        &[key(KeyCode::Right, NoControl, |_| {
            Action::Move(Direction::Right)
        })],
        &[ch('h', NoControl, |_| Action::Move(Direction::Left))],
        &[ch('l', NoControl, |_| Action::Move(Direction::Right))],
    ],
    help: &["the snapshot before, after (every 25 steps, fewer in a long run)"],
    short: "←→",
};

pub(crate) static TRAIN_SCRUB_FAR: Entry = Entry {
    places: TRAINING,
    keys: &[
        &[key(KeyCode::PageUp, NoControl, |_| Action::PreviousStep)],
        &[key(KeyCode::PageDown, NoControl, |_| Action::NextStep)],
    ],
    help: &["ten snapshots before, after (250 steps in a short run)"],
    short: "PgUp/PgDn",
};

pub(crate) static TRAIN_SCRUB_ENDS: Entry = Entry {
    places: TRAINING,
    keys: &[
        &[key(KeyCode::Home, NoControl, |_| Action::FirstStep)],
        &[key(KeyCode::End, NoControl, |_| Action::LastStep)],
    ],
    help: &["the first snapshot (step 0), the newest (followed as the run goes on)"],
    short: "Home/End",
};

pub(crate) static TRAIN_HEAD: Entry = Entry {
    places: TRAINING,
    keys: &[
        &[key(KeyCode::Up, NoControl, |_| Action::Move(Direction::Up))],
        &[key(KeyCode::Down, NoControl, |_| {
            Action::Move(Direction::Down)
        })],
        &[ch('k', NoControl, |_| Action::Move(Direction::Up))],
        &[ch('j', NoControl, |_| Action::Move(Direction::Down))],
    ],
    help: &["choose a head (layer 0's, then layer 1's)"],
    short: "↑↓",
};

pub(crate) static TRAIN_OPEN: Entry = Entry {
    places: TRAINING,
    keys: &[
        &[key(KeyCode::Enter, NoControl, |_| Action::Open)],
        &[ch('o', NoControl, |_| Action::Open)],
    ],
    help: &["open the head at the snapshot as a lesson (q there comes back)"],
    short: "Enter",
};

pub(crate) static TRAIN_TEXT: Entry = Entry {
    places: TRAINING,
    keys: &[&[ch('t', NoControl, |_| Action::TypeText)]],
    help: &["type the text the head reads, and open it"],
    short: "t",
};

pub(crate) static TRAIN_HELP: Entry = Entry {
    places: TRAINING,
    keys: &[&[ch('?', NoControl, |_| Action::ToggleHelp)]],
    help: &["these keys"],
    short: "?",
};

pub(crate) static TRAIN_QUIT: Entry = Entry {
    places: TRAINING,
    keys: &[
        &[ch('q', NoControl, |_| Action::Back)],
        &[key(KeyCode::Esc, NoControl, |_| Action::Back)],
    ],
    help: &["quit (asked first while the training goes on: quitting stops it)"],
    short: "q",
};

/// The help's rows on the training screen: its own keys, and Ctrl-c.
static TRAINING_ROWS: LazyLock<Vec<(String, &'static str)>> = LazyLock::new(|| {
    rows_of(&[
        &TRAIN_PAUSE,
        &TRAIN_SCRUB,
        &TRAIN_SCRUB_FAR,
        &TRAIN_SCRUB_ENDS,
        &TRAIN_HEAD,
        &TRAIN_OPEN,
        &TRAIN_TEXT,
        &TRAIN_HELP,
        &TRAIN_QUIT,
        &QUIT,
    ])
});

/// The help's rows for Home End and q once the run is done.
static TRAINING_DONE_ROWS: LazyLock<[(String, &'static str); 2]> = LazyLock::new(|| {
    [
        (
            TRAIN_SCRUB_ENDS.label(1),
            "the first snapshot (step 0), the last (the weights the run ended with)",
        ),
        (TRAIN_QUIT.label(1), "quit (the run is done)"),
    ]
});

/// On the help overlay: its bottom border names the shown keys.
pub(crate) static CLOSE_HELP: Entry = Entry {
    places: &[Place::Help],
    keys: &[
        &[ch('?', Any, |_| Action::ToggleHelp)],
        &[key(KeyCode::Esc, Any, |_| Action::ToggleHelp)],
        &[hidden(ch('q', Any, |_| Action::ToggleHelp))],
        &[hidden(key(KeyCode::Enter, Any, |_| Action::ToggleHelp))],
    ],
    help: &[],
    short: "? or Esc",
};

/// On the help overlay, where its rows do not all fit: the bottom border says so.
pub(crate) static SCROLL_HELP: Entry = Entry {
    places: &[Place::Help],
    keys: &[
        &[
            key(KeyCode::Down, Any, |_| Action::ScrollHelp(1)),
            hidden(ch('j', Any, |_| Action::ScrollHelp(1))),
        ],
        &[
            key(KeyCode::Up, Any, |_| Action::ScrollHelp(-1)),
            hidden(ch('k', Any, |_| Action::ScrollHelp(-1))),
        ],
    ],
    help: &[],
    short: "↓ ↑",
};

// Prompts and questions on the status line.
pub(crate) static SUBMIT: Entry = Entry {
    places: &[Place::Prompt, Place::Question, Place::Resume],
    keys: &[&[key(KeyCode::Enter, Any, |_| Action::Submit)]],
    help: &[],
    short: "Enter",
};

pub(crate) static CANCEL: Entry = Entry {
    places: &[Place::Prompt, Place::Question, Place::Resume],
    keys: &[&[key(KeyCode::Esc, Any, |_| Action::Cancel)]],
    help: &[],
    short: "Esc",
};

pub(crate) static BACKSPACE: Entry = Entry {
    places: &[Place::Prompt],
    keys: &[&[key(KeyCode::Backspace, Any, |_| Action::Backspace)]],
    help: &[],
    short: "Backspace",
};

pub(crate) static CLEAR_INPUT: Entry = Entry {
    places: &[Place::Prompt],
    keys: &[&[ch('u', Mods::Control, |_| Action::ClearInput)]],
    help: &[],
    short: "Ctrl-u",
};

pub(crate) static TYPE: Entry = Entry {
    places: &[Place::Prompt],
    keys: &[&[code(Code::AnyChar, Mods::Typed, Action::Type)]],
    help: &[],
    short: "",
};

pub(crate) static ANSWER: Entry = Entry {
    places: &[Place::Question],
    keys: &[&[code(Code::AnyChar, NoControl, Action::Answer)]],
    help: &[],
    short: "",
};

/// Every entry. The help overlay lists the lesson's entries in this order.
pub static KEY_MAP: &[&Entry] = &[
    &NEXT_PREVIOUS,
    &GO_TO_STEP,
    &FIRST_LAST,
    &MOVE,
    &MATRIX,
    &HEAD,
    &TOKEN,
    &TILE,
    &BACKWARD,
    &SELECT,
    &EDIT,
    &UNDO_REDO,
    &RESET_REROLL,
    &SAVE,
    &SCROLL,
    &PRACTICE,
    &PRACTICE_ROW,
    &HINT,
    &FOLLOW,
    &ASK,
    &HELP,
    &BACK,
    &QUIT,
    &PREDICT,
    &POLL_ANSWER,
    &PICK_MOVE,
    &PICK_OPEN,
    &PICK_CLICK,
    &PICK_FIRST_LAST,
    &PICK_QUIT,
    &PICK_HELP,
    &PICK_FOLLOW,
    &PICK_LAB,
    &PICK_ASK,
    &LAB_DIM,
    &LAB_KEYS,
    &LAB_SEED,
    &LAB_HELP,
    &LAB_BACK,
    &TRAIN_PAUSE,
    &TRAIN_SCRUB,
    &TRAIN_SCRUB_FAR,
    &TRAIN_SCRUB_ENDS,
    &TRAIN_HEAD,
    &TRAIN_OPEN,
    &TRAIN_TEXT,
    &TRAIN_HELP,
    &TRAIN_QUIT,
    &CLOSE_HELP,
    &SCROLL_HELP,
    &SUBMIT,
    &CANCEL,
    &BACKSPACE,
    &CLEAR_INPUT,
    &TYPE,
    &ANSWER,
];

/// The places that take the keys in the app's state, in order: the first with a matching key
/// decides (the resume offer's Enter before the lesson's, a typed digit's answer before `1 … 9`).
pub fn places(app: &App) -> &'static [Place] {
    // On a hidden cell in practice, a number typed is the learner's answer.
    let predicting = app.tutor().is_some_and(|tutor| {
        tutor
            .selected_cell()
            .is_some_and(|cell| tutor.is_hidden(cell))
    });
    if app.overlay == Overlay::None && polled(app) {
        return match (app.tutor().is_some(), app.lab().is_some()) {
            (true, _) => &[Place::Anywhere, Place::Polled, Place::Lesson],
            (false, true) => &[Place::Anywhere, Place::Polled, Place::Lab],
            (false, false) => &[Place::Anywhere, Place::Polled, Place::Picker],
        };
    }
    match (&app.overlay, predicting) {
        (Overlay::Help, _) => &[Place::Anywhere, Place::Help],
        (Overlay::Prompt(_), _) => &[Place::Anywhere, Place::Prompt],
        // The offer to resume is no barrier: Enter takes it, Esc declines it, and any other key
        // does what it does in the lesson (the update declines the offer, then acts on it).
        (Overlay::Question(Question::Resume { .. }), true) => &[
            Place::Anywhere,
            Place::Resume,
            Place::Predicting,
            Place::Lesson,
        ],
        (Overlay::Question(Question::Resume { .. }), false) => {
            &[Place::Anywhere, Place::Resume, Place::Lesson]
        }
        (Overlay::Question(_), _) => &[Place::Anywhere, Place::Question],
        (Overlay::None, _) if app.tutor().is_none() && app.lab().is_some() => {
            &[Place::Anywhere, Place::Lab]
        }
        (Overlay::None, _) if app.training_on_screen().is_some() => {
            &[Place::Anywhere, Place::Training]
        }
        (Overlay::None, _) if app.tutor().is_none() => &[Place::Anywhere, Place::Picker],
        (Overlay::None, true) => &[Place::Anywhere, Place::Predicting, Place::Lesson],
        (Overlay::None, false) => &[Place::Anywhere, Place::Lesson],
    }
}

/// Whether this is a student's app while the class's poll is open.
fn polled(app: &App) -> bool {
    matches!(app.classroom, Some(Classroom::Student { .. }))
        && app.polling.poll.as_ref().is_some_and(|poll| poll.is_open())
}

/// The key of the table that `matches` in the first of `places` that has one.
fn find(places: &[Place], matches: impl Fn(&Key) -> bool) -> Option<Key> {
    places.iter().find_map(|place| {
        KEY_MAP
            .iter()
            .filter(|entry| entry.applies_in(*place))
            .flat_map(|entry| entry.keys.iter().copied().flatten())
            .find(|key| matches(key))
            .copied()
    })
}

/// The Action a key press asks for in the app's state, if any.
pub fn key_action(key: KeyEvent, app: &App) -> Option<Action> {
    let found = find(places(app), |candidate| candidate.matches(key))?;
    let pressed = match key.code {
        KeyCode::Char(ch) => ch,
        _ => '\0',
    };
    match found.does {
        Does::Act(action) => Some(action(pressed)),
        Does::ByPosition => None,
    }
}

/// What a mouse gesture does in the app's state: an Action, `Does::ByPosition`, or nothing.
pub(crate) fn gesture(code: Code, app: &App) -> Option<Does> {
    find(places(app), |candidate| candidate.code == code).map(|key| key.does)
}

/// The help overlay's rows for a lesson's screen: keys and words, a row with no keys going on
/// with the words above it. `steps` is the most steps a lesson has, for `1 … N`.
pub(crate) fn help_rows(steps: usize) -> Vec<(String, &'static str)> {
    let mut rows = Vec::new();
    for entry in KEY_MAP
        .iter()
        .filter(|entry| entry.applies_in(Place::Lesson) || entry.applies_in(Place::Anywhere))
    {
        let mut label = entry.label(steps);
        for words in entry.help {
            rows.push((std::mem::take(&mut label), *words));
        }
    }
    rows
}

/// The help overlay's line for the lesson list: ` In the lesson list: ↑↓ choose, …`.
pub fn picker_help() -> String {
    let told: Vec<String> = KEY_MAP
        .iter()
        .filter(|entry| entry.applies_in(Place::Picker))
        .filter_map(|entry| {
            let words = entry.help.first()?;
            Some(format!("{} {words}", entry.short))
        })
        .collect();
    format!("In the lesson list: {}.", told.join(", "))
}

/// Which key hints the bottom line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Footer {
    Picker,
    /// The scaling lab.
    Lab,
    /// The training screen while the run goes on.
    Training,
    /// The training screen while the run is paused.
    TrainingPaused,
    /// The training screen once the run is done.
    TrainingDone,
    /// The lesson list of a student in a classroom.
    StudentPicker,
    Lesson,
    StudentLesson,
    PresenterLesson,
    Practice,
    /// A student following the presenter, who may go free.
    Following,
    /// A student the presenter keeps following.
    Locked,
    /// A line being typed.
    Prompt,
    /// A student while the class's poll is open.
    Polled,
    /// The presenter while the class's poll is open.
    PresenterPoll,
}

/// One key hint: an entry's short keys and a word or two for what they do here.
#[derive(Debug)]
pub struct Hint {
    pub entry: &'static Entry,
    pub words: &'static str,
}

const fn hint(entry: &'static Entry, words: &'static str) -> Hint {
    Hint { entry, words }
}

/// The key hints of a footer, most needed first (a narrow line leaves out the last ones).
pub fn hints(footer: Footer) -> &'static [Hint] {
    match footer {
        Footer::Picker => {
            static HINTS: &[Hint] = &[
                hint(&PICK_MOVE, "choose"),
                hint(&PICK_OPEN, "open"),
                hint(&PICK_LAB, "√d_k lab"),
                hint(&PICK_HELP, "help"),
                hint(&PICK_QUIT, "quit"),
            ];
            HINTS
        }
        Footer::Lab => {
            static HINTS: &[Hint] = &[
                hint(&LAB_DIM, "d_k"),
                hint(&LAB_KEYS, "keys"),
                hint(&LAB_SEED, "seed"),
                hint(&HELP, "help"),
                hint(&LAB_BACK, "back"),
            ];
            HINTS
        }
        Footer::Training => {
            static HINTS: &[Hint] = &[
                hint(&TRAIN_PAUSE, "pause"),
                hint(&TRAIN_SCRUB, "snapshot"),
                hint(&TRAIN_HEAD, "head"),
                hint(&TRAIN_OPEN, "open"),
                hint(&TRAIN_TEXT, "text"),
                hint(&TRAIN_HELP, "help"),
                hint(&TRAIN_QUIT, "quit"),
            ];
            HINTS
        }
        Footer::TrainingPaused => {
            static HINTS: &[Hint] = &[
                hint(&TRAIN_PAUSE, "go on"),
                hint(&TRAIN_SCRUB, "snapshot"),
                hint(&TRAIN_HEAD, "head"),
                hint(&TRAIN_OPEN, "open"),
                hint(&TRAIN_TEXT, "text"),
                hint(&TRAIN_HELP, "help"),
                hint(&TRAIN_QUIT, "quit"),
            ];
            HINTS
        }
        Footer::TrainingDone => {
            static HINTS: &[Hint] = &[
                hint(&TRAIN_SCRUB, "snapshot"),
                hint(&TRAIN_HEAD, "head"),
                hint(&TRAIN_OPEN, "open"),
                hint(&TRAIN_TEXT, "text"),
                hint(&TRAIN_HELP, "help"),
                hint(&TRAIN_QUIT, "quit"),
            ];
            HINTS
        }
        Footer::StudentPicker => {
            static HINTS: &[Hint] = &[
                hint(&PICK_MOVE, "choose"),
                hint(&PICK_OPEN, "open"),
                hint(&PICK_FOLLOW, "follow"),
                hint(&PICK_HELP, "help"),
                hint(&PICK_QUIT, "quit"),
            ];
            HINTS
        }
        Footer::Lesson => {
            static HINTS: &[Hint] = &[
                hint(&NEXT_PREVIOUS, "step"),
                hint(&MOVE, "cell"),
                hint(&MATRIX, "matrix"),
                hint(&EDIT, "edit"),
                hint(&UNDO_REDO, "undo"),
                hint(&SAVE, "save"),
                hint(&HELP, "help"),
                hint(&BACK, "back"),
            ];
            HINTS
        }
        Footer::StudentLesson => {
            static HINTS: &[Hint] = &[
                hint(&NEXT_PREVIOUS, "step"),
                hint(&MOVE, "cell"),
                hint(&EDIT, "edit"),
                hint(&UNDO_REDO, "undo"),
                hint(&FOLLOW, "follow"),
                hint(&HELP, "help"),
                hint(&BACK, "back"),
            ];
            HINTS
        }
        Footer::PresenterLesson => {
            static HINTS: &[Hint] = &[
                hint(&NEXT_PREVIOUS, "step"),
                hint(&MOVE, "cell"),
                hint(&ASK, "poll"),
                hint(&EDIT, "edit"),
                hint(&HELP, "help"),
                hint(&BACK, "back"),
            ];
            HINTS
        }
        Footer::PresenterPoll => {
            static HINTS: &[Hint] = &[
                hint(&ASK, "reveal the answers"),
                hint(&NEXT_PREVIOUS, "step"),
                hint(&MOVE, "cell"),
                hint(&HELP, "help"),
                hint(&BACK, "back"),
            ];
            HINTS
        }
        Footer::Polled => {
            static HINTS: &[Hint] = &[
                hint(&POLL_ANSWER, "type your answer"),
                hint(&MOVE, "cell"),
                hint(&HELP, "help"),
                hint(&QUIT, "leave"),
            ];
            HINTS
        }
        Footer::Practice => {
            static HINTS: &[Hint] = &[
                hint(&PREDICT, "type a number for ?"),
                hint(&HINT, "hint"),
                hint(&MOVE, "cell"),
                hint(&NEXT_PREVIOUS, "step"),
                hint(&PRACTICE, "stop"),
                hint(&HELP, "help"),
            ];
            HINTS
        }
        Footer::Following => {
            static HINTS: &[Hint] = &[
                hint(&MOVE, "look at a cell"),
                hint(&FOLLOW, "go free"),
                hint(&HELP, "help"),
                hint(&QUIT, "leave"),
            ];
            HINTS
        }
        Footer::Locked => {
            static HINTS: &[Hint] = &[
                hint(&MOVE, "look at a cell"),
                hint(&MATRIX, "matrix"),
                hint(&HELP, "help"),
                hint(&QUIT, "leave"),
            ];
            HINTS
        }
        Footer::Prompt => {
            static HINTS: &[Hint] = &[hint(&SUBMIT, "ok"), hint(&CANCEL, "cancel")];
            HINTS
        }
    }
}

/// The footer for the app's state when nothing is on top of the screen.
pub fn footer(app: &App) -> Footer {
    let on_lesson = app.tutor().is_some();
    if !on_lesson && app.lab().is_some() {
        return Footer::Lab;
    }
    if let Some(run) = app.training_on_screen() {
        return match (run.finished, run.paused) {
            (true, _) => Footer::TrainingDone,
            (false, true) => Footer::TrainingPaused,
            (false, false) => Footer::Training,
        };
    }
    let poll_open = app.polling.poll.as_ref().is_some_and(|poll| poll.is_open());
    match &app.classroom {
        Some(Classroom::Student { .. }) if poll_open => Footer::Polled,
        Some(Classroom::Presenter { .. }) if poll_open => Footer::PresenterPoll,
        _ if app.follow() == Some(Follow::Locked) => Footer::Locked,
        _ if app.is_following() => Footer::Following,
        _ if app.tutor().is_some_and(|tutor| tutor.practice.is_some()) => Footer::Practice,
        Some(Classroom::Student { .. }) if on_lesson => Footer::StudentLesson,
        Some(Classroom::Student { .. }) => Footer::StudentPicker,
        Some(Classroom::Presenter { .. }) if on_lesson => Footer::PresenterLesson,
        _ if on_lesson => Footer::Lesson,
        _ => Footer::Picker,
    }
}

/// The hint for changing heads, named only where a lesson has several.
static HEAD_HINT: Hint = hint(&HEAD, "head");

/// The hint for changing the token, named only on a generation step.
static TOKEN_HINT: Hint = hint(&TOKEN, "token");

/// The hints for walking and sizing the tiles, named only on the online softmax step.
static TILE_HINTS: [Hint; 2] = [hint(&TOKEN, "tile"), hint(&TILE, "size")];

/// Whether the app shows a lesson with generation steps, whose keys change the token.
fn decodes(app: &App) -> bool {
    app.tutor().is_some_and(|tutor| tutor.lesson.decode)
}

/// Whether the app shows a lesson with several heads, whose keys change the head.
fn several_heads(app: &App) -> bool {
    app.tutor().is_some_and(|tutor| tutor.heads().query > 1)
}

/// The hints of the app's footer: those of `footer(app)`, with `< > head` after the cell keys
/// on a lesson with several heads where the learner may change the head.
pub(crate) fn hints_for(app: &App) -> Vec<&'static Hint> {
    let footer = footer(app);
    let mut shown: Vec<&'static Hint> = hints(footer).iter().collect();
    let changes_head = matches!(
        footer,
        Footer::Lesson | Footer::StudentLesson | Footer::PresenterLesson
    );
    let tutor = app.tutor();
    let on_tiles = tutor.is_some_and(|tutor| tutor.step_is_per_tile());
    let on_generation = tutor.is_some_and(|tutor| tutor.step_is_per_token());
    // Right after the cell keys, in this order: the tile's, the token's, the head's.
    let mut extra: Vec<&'static Hint> = Vec::new();
    if changes_head && on_tiles {
        extra.extend(TILE_HINTS.iter());
    }
    if changes_head && on_generation {
        extra.push(&TOKEN_HINT);
    }
    if changes_head && several_heads(app) {
        extra.push(&HEAD_HINT);
    }
    let after = shown
        .iter()
        .position(|hint| std::ptr::eq(hint.entry, &MOVE))
        .map_or(0, |index| index + 1);
    shown.splice(after..after, extra);
    shown
}

/// The app's bottom line of key hints (see `hints_for`).
pub(crate) fn app_hint_line(app: &App) -> String {
    line_of(&hints_for(app))
}

/// The help's rows for the app's screen: the head keys only for a lesson with several heads.
pub fn help_rows_for(app: &App) -> Vec<&'static (String, &'static str)> {
    let (heads, tokens) = (several_heads(app), decodes(app));
    // Going free is a classroom student's key: the presenter and a learner alone have no one
    // to follow.
    if app.tutor().is_none() && app.lab().is_some() {
        return LAB_ROWS.iter().collect();
    }
    if let Some(run) = app.training_on_screen() {
        if !run.finished {
            return TRAINING_ROWS.iter().collect();
        }
        // A run that is done has nothing left to pause, no newest snapshot to follow, and
        // nothing that quitting would stop.
        return TRAINING_ROWS
            .iter()
            .filter(|(_, words)| !TRAIN_PAUSE.help.contains(words))
            .map(|row| {
                if TRAIN_SCRUB_ENDS.help.contains(&row.1) {
                    &TRAINING_DONE_ROWS[0]
                } else if TRAIN_QUIT.help.contains(&row.1) {
                    &TRAINING_DONE_ROWS[1]
                } else {
                    row
                }
            })
            .collect();
    }
    // A lesson opened from a training run goes back to the run, not to a lesson list.
    let from_a_run = app.training().is_some();
    let student = matches!(app.classroom, Some(crate::app::Classroom::Student { .. }));
    let presenter = matches!(app.classroom, Some(crate::app::Classroom::Presenter { .. }));
    // A locked student keeps only the keys that look around the presenter's screen (the
    // classroom's `following_student` lets them through); the rest would only say so.
    let locked = app.follow() == Some(Follow::Locked);
    let looks_around = [&MOVE, &MATRIX, &SELECT, &SCROLL, &HELP, &QUIT];
    KEYS.iter()
        .filter(|(_, words)| !locked || looks_around.iter().any(|entry| entry.help.contains(words)))
        .filter(|(_, words)| heads || !HEAD.help.contains(words))
        .filter(|(_, words)| tokens || !TOKEN.help.contains(words))
        .filter(|(_, words)| student || !FOLLOW.help.contains(words))
        // Asking the class is the presenter's, answering the students'.
        .filter(|(_, words)| presenter || !ASK.help.contains(words))
        .filter(|(_, words)| student || !POLL_ANSWER.help.contains(words))
        // Where nothing may be saved (a classroom session), w shows the lesson to copy.
        .map(|row| {
            if !app.can_save && SAVE.help.contains(&row.1) {
                &*SAVE_ELSEWHERE
            } else if from_a_run && BACK.help.contains(&row.1) {
                &*BACK_TO_THE_RUN
            } else {
                row
            }
        })
        .collect()
}

/// The help's row for `q` in a lesson opened from a training run.
static BACK_TO_THE_RUN: LazyLock<(String, &'static str)> = LazyLock::new(|| {
    (
        BACK.label(1),
        "back to the training run, as it is now (q there quits)",
    )
});

/// The help's row for `w` where saving is off.
static SAVE_ELSEWHERE: LazyLock<(String, &'static str)> = LazyLock::new(|| {
    (
        SAVE.label(1),
        "show the edited lesson as a file to copy (this session cannot save)",
    )
});

/// A footer's hints on one line: ` n/p step · ←↓↑→ cell · ? help`.
pub(crate) fn hint_line(footer: Footer) -> String {
    line_of(&hints(footer).iter().collect::<Vec<_>>())
}

fn line_of(hints: &[&Hint]) -> String {
    let told: Vec<String> = hints
        .iter()
        .map(|hint| match hint.entry.short {
            "" => hint.words.to_string(),
            keys => format!("{keys} {}", hint.words),
        })
        .collect();
    format!(" {}", told.join(" · "))
}

/// The help's rows for a lesson's screen, as the man page and the README test read them:
/// `help_rows` for the most steps a lesson has.
pub const KEYS: HelpRows = HelpRows;

/// `KEYS`: the help rows, made from the key map once, iterated as `(keys, words)` pairs.
#[derive(Debug, Clone, Copy)]
pub struct HelpRows;

/// Step numbers are typed as one digit, so the help names at most `1 … 9`.
static HELP_ROWS: LazyLock<Vec<(String, &'static str)>> =
    LazyLock::new(|| help_rows(Step::ALL.len().min(9)));

impl HelpRows {
    pub fn iter(&self) -> std::slice::Iter<'static, (String, &'static str)> {
        HELP_ROWS.iter()
    }
}

impl IntoIterator for HelpRows {
    type Item = &'static (String, &'static str);
    type IntoIter = std::slice::Iter<'static, (String, &'static str)>;

    fn into_iter(self) -> Self::IntoIter {
        HELP_ROWS.iter()
    }
}
