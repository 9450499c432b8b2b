//! Predict, then see: a poll the presenter puts to a classroom. `a` asks every student for one
//! cell, hidden on every screen (the presenter's too, which the room may be watching) until the
//! reveal; each student types a number, and may change it until then; `a` again reveals the
//! truth, how the room answered and which slips it made; `A` asks the same cell again after
//! discussion, and its reveal shows both votes side by side. The answers themselves are kept
//! by the server (`crate::serve`), which the app asks through `Effect::Poll`; this is what each
//! screen knows of the poll, and how a reveal counts the answers.

use std::collections::HashMap;
use std::sync::Arc;

use crate::attention::number::{format_fixed, format_number};
use crate::attention::{Attention, Cell, Step};
use crate::practice::{Answer, SlipKind, check_answer};

use super::action::Effect;
use super::tutor::Tutor;
use super::{App, Classroom, Overlay, Prompt, PromptFor, Status};

/// A cell put to the class, as every screen knows it: it travels with the presenter's screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Poll {
    /// Counts the class's polls from 1: an answer names the poll it is for, so one sent for a
    /// poll already replaced is refused rather than counted in the next.
    pub number: u64,
    /// 1, or 2 for the same cell asked again after discussion.
    pub vote: u8,
    /// The name of the lesson asked about: its tutors hide the cell.
    pub lesson: String,
    /// The step's name as its header shows it.
    pub step: String,
    pub cell: Cell,
    /// The cell as the prompt names it: `weights[cat, sat]`.
    pub name: String,
    /// The cell's value when it was asked. Students' apps hold it (they run on the server);
    /// no screen shows it before the reveal.
    pub truth: f64,
    /// The lesson's decimals, which the truth and the histogram are written with.
    pub decimals: usize,
    /// The first vote's count, on a second vote: its reveal shows both.
    pub earlier: Option<Arc<Tally>>,
    /// How the room answered, once the presenter has revealed it. Answers are locked then.
    pub reveal: Option<Arc<Reveal>>,
}

impl Poll {
    pub fn is_open(&self) -> bool {
        self.reveal.is_none()
    }
}

/// What the reveal shows every screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Reveal {
    /// The cell's value when the poll was asked.
    pub truth: f64,
    /// The first vote's count and, on a second vote, this vote's after it.
    pub votes: Vec<Arc<Tally>>,
}

/// One vote's answers, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    pub vote: u8,
    /// The numbers, in no particular order: nothing ties one to a student.
    pub answers: Vec<f64>,
    /// Answers right within practice mode's tolerance.
    pub right: usize,
    /// The numbers judged right (also those typed to fewer decimals, right to those): the
    /// histogram marks their bars.
    pub right_values: Vec<f64>,
    /// The common slips practice mode names, with how many answers each explains, most first.
    pub slips: Vec<(SlipKind, usize)>,
}

/// The app's part in the class's polls.
#[derive(Debug, Clone, Default)]
pub struct Polling {
    /// The poll on every screen: open, or revealed until the presenter moves on.
    pub poll: Option<Arc<Poll>>,
    /// Polls asked so far (the presenter's count), which numbers the next.
    asked: u64,
    /// The presenter's: the lesson as it was computed when the cell was asked, which the
    /// answers are checked against at the reveal (the presenter may have moved on or edited).
    asked_of: Option<Arc<Attention>>,
    /// A student's answer to the open poll as typed (made printable), once the server has it.
    pub mine: Option<(u64, String)>,
    /// The presenter's: the lesson on screen at the reveal (none on the lesson list). A
    /// revealed poll ends when the presenter opens another lesson, or leaves this one.
    revealed_in: Option<String>,
}

/// What the app asks of the server for a poll.
#[derive(Debug, Clone, PartialEq)]
pub enum PollEffect {
    /// The presenter asks the class: the server takes answers for this poll from now.
    Open(Arc<Poll>),
    /// The presenter reveals poll `number`: the server locks its answers, appends them to the
    /// polls file if there is one, and hands them over.
    Lock(u64),
    /// A student's answer to poll `number`, replacing any they sent before.
    Send { number: u64, answer: Answer },
}

/// The server's reply to a `PollEffect`.
#[derive(Debug, Clone, PartialEq)]
pub enum PollReply {
    Opened,
    /// The answers locked at the reveal, and whether the polls file took them.
    Answers {
        number: u64,
        answers: Vec<Answer>,
        logged: Result<(), String>,
    },
    /// A student's answer taken, or refused with the reason.
    Sent(Result<(), String>),
}

impl PollEffect {
    /// The reply where no classroom server carries polls (a tutor of one's own, a test): the
    /// app asks only in a class, so this says so rather than pretending.
    pub fn without_a_class(&self) -> PollReply {
        match self {
            PollEffect::Open(_) => PollReply::Opened,
            PollEffect::Lock(number) => PollReply::Answers {
                number: *number,
                answers: Vec::new(),
                logged: Err("no classroom server holds this poll's answers".to_string()),
            },
            PollEffect::Send { .. } => PollReply::Sent(Err(
                "No classroom server takes answers here: polls are asked in `attn-tutor serve \
                 --present`"
                    .to_string(),
            )),
        }
    }
}

/// What the presenter reads on trying to change the lesson's numbers while the class answers.
pub const NUMBERS_FROZEN: &str = "The class is answering about the numbers on screen: a reveals \
    the answers first, then the lesson can change";

/// Whether the presenter's lesson must keep its numbers: a poll about it is open, and the
/// answers will be checked against the numbers the class sees.
pub(crate) fn freezes_numbers(app: &App) -> bool {
    matches!(app.classroom, Some(Classroom::Presenter { .. }))
        && app.polling.poll.as_ref().is_some_and(|poll| {
            poll.is_open() && app.tutor().is_some_and(|tutor| tutor.name == poll.lesson)
        })
}

/// The keys' words, for a tutor that is not the presenter's.
const NOT_PRESENTER: &str =
    "a asks the whole class for a cell: the presenter's key in `attn-tutor serve --present`";

/// `a`: the presenter asks the class for the cell under the cursor, or reveals the poll open.
/// `A` (`again`): the cell just revealed is asked again, for a second vote after discussion.
pub(crate) fn ask(app: &mut App, again: bool) -> Vec<Effect> {
    match &app.classroom {
        Some(Classroom::Presenter { .. }) => {}
        Some(Classroom::Student { .. }) => {
            app.status = Some(Status::info(
                "The presenter asks the class with a; when a poll is open, type your answer",
            ));
            return Vec::new();
        }
        None => {
            app.status = Some(Status::info(NOT_PRESENTER));
            return Vec::new();
        }
    }
    let open = app.polling.poll.as_ref().filter(|poll| poll.is_open());
    if let Some(poll) = open {
        if again {
            app.status = Some(Status::info(format!(
                "The class is still answering {}: a reveals first, then A asks again",
                poll.name
            )));
            return Vec::new();
        }
        return vec![Effect::Poll(PollEffect::Lock(poll.number))];
    }
    let poll = if again {
        match second_vote(app) {
            Ok(poll) => poll,
            Err(why) => {
                app.status = Some(Status::info(why));
                return Vec::new();
            }
        }
    } else {
        match first_vote(app) {
            Ok(poll) => poll,
            Err(why) => {
                app.status = Some(Status::error(why));
                return Vec::new();
            }
        }
    };
    let poll = Arc::new(poll);
    app.polling.asked = poll.number;
    app.polling.poll = Some(Arc::clone(&poll));
    app.status = Some(Status::info(format!(
        "Asked the class{}: {} = ? · a reveals the answers",
        if poll.vote == 2 { " again" } else { "" },
        poll.name
    )));
    vec![Effect::Poll(PollEffect::Open(poll))]
}

/// The poll for the cell under the presenter's cursor, or why there is none.
fn first_vote(app: &mut App) -> Result<Poll, String> {
    let number = app.polling.asked + 1;
    let Some(tutor) = app.screen.tutor() else {
        return Err("a asks the class for a cell of a lesson: open one first".to_string());
    };
    if tutor.step() == Step::AllHeads {
        return Err(
            "a asks for one cell: Enter opens this head's weights, where a asks for one"
                .to_string(),
        );
    }
    let Some(cell) = tutor.selected_cell() else {
        return Err(
            "A token label has no value to predict: move the cursor onto a cell, then a"
                .to_string(),
        );
    };
    let Some(derivation) = tutor.attention.derive(cell) else {
        return Err("This cell has no value to predict: move to another, then a".to_string());
    };
    if derivation.value.is_nan() {
        return Err("This cell has no number to predict (NaN): move to another".to_string());
    }
    let poll = Poll {
        number,
        vote: 1,
        truth: derivation.value,
        lesson: tutor.name.clone(),
        step: tutor.step().title().to_string(),
        cell,
        name: tutor.attention.cell_name(cell),
        decimals: tutor.lesson.decimals,
        earlier: None,
        reveal: None,
    };
    app.polling.asked_of = Some(Arc::clone(&tutor.attention));
    Ok(poll)
}

/// The second vote on the cell just revealed, or why there is none.
fn second_vote(app: &App) -> Result<Poll, String> {
    let Some(poll) = &app.polling.poll else {
        return Err(
            "A asks the cell just revealed again, after discussion: a asks one first".to_string(),
        );
    };
    let Some(reveal) = &poll.reveal else {
        return Err("a reveals the answers first; then A asks again".to_string());
    };
    if poll.vote >= 2 {
        return Err(format!(
            "{} has had its second vote: a asks the class for a cell anew",
            poll.name
        ));
    }
    Ok(Poll {
        number: app.polling.asked + 1,
        vote: 2,
        earlier: reveal.votes.first().cloned(),
        reveal: None,
        ..(**poll).clone()
    })
}

/// The server's reply, in the app that asked.
pub(crate) fn replied(app: &mut App, reply: PollReply) {
    match reply {
        PollReply::Opened => {}
        PollReply::Answers {
            number,
            answers,
            logged,
        } => revealed(app, number, &answers, logged),
        PollReply::Sent(result) => sent(app, result),
    }
}

/// The presenter's reveal: the answers locked by the server, counted against the lesson as it
/// was asked.
fn revealed(app: &mut App, number: u64, answers: &[Answer], logged: Result<(), String>) {
    let Some(poll) = app
        .polling
        .poll
        .clone()
        .filter(|poll| poll.number == number)
    else {
        return;
    };
    let Some(attention) = app.polling.asked_of.clone() else {
        return;
    };
    let truth = poll.truth;
    let tally = Arc::new(tally(
        &attention,
        poll.cell,
        poll.decimals,
        poll.vote,
        answers,
    ));
    let votes = poll
        .earlier
        .iter()
        .cloned()
        .chain(std::iter::once(Arc::clone(&tally)))
        .collect();
    app.polling.poll = Some(Arc::new(Poll {
        reveal: Some(Arc::new(Reveal { truth, votes })),
        ..(*poll).clone()
    }));
    app.polling.revealed_in = app.tutor().map(|tutor| tutor.name.clone());
    // Revealed from elsewhere (another step, the lesson list): where the histogram is.
    let shown_where = if app.tutor().is_some_and(|tutor| shows_poll(tutor, &poll)) {
        String::new()
    } else {
        format!(" · the histogram is on {} of {}", poll.step, poll.lesson)
    };
    let said = format!(
        "Revealed: {} = {} · {} of {} right{shown_where}{}",
        poll.name,
        format_number(truth, poll.decimals),
        tally.right,
        tally.answers.len(),
        if poll.vote == 1 {
            " · A asks again after discussion"
        } else {
            ""
        }
    );
    app.status = Some(match logged {
        Ok(()) => Status::info(said),
        Err(why) => Status::error(format!("{said} · not written to the polls file: {why}")),
    });
}

/// One vote's answers checked as practice mode checks a prediction: right within the lesson's
/// precision (or the precision typed), else the common slip the number matches, if any. The
/// same number typed by many students is checked once.
pub fn tally(
    attention: &Attention,
    cell: Cell,
    decimals: usize,
    vote: u8,
    answers: &[Answer],
) -> Tally {
    let mut checked: HashMap<(u64, Option<usize>), (bool, Option<SlipKind>)> = HashMap::new();
    let mut right = 0;
    let mut right_values = Vec::new();
    let mut slips: Vec<(SlipKind, usize)> = Vec::new();
    for answer in answers {
        let (is_right, slip) = *checked
            .entry((answer.value.to_bits(), answer.typed_decimals))
            .or_insert_with(|| {
                check_answer(attention, cell, answer, decimals).map_or((false, None), |verdict| {
                    (verdict.is_right(), verdict.slip().map(|slip| slip.kind))
                })
            });
        if is_right {
            right += 1;
            right_values.push(answer.value);
        }
        if let Some(kind) = slip {
            match slips.iter_mut().find(|(seen, _)| *seen == kind) {
                Some((_, count)) => *count += 1,
                None => slips.push((kind, 1)),
            }
        }
    }
    // Most first; a tie keeps the order practice mode looks for them in.
    slips.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    Tally {
        vote,
        answers: answers.iter().map(|answer| answer.value).collect(),
        right,
        right_values,
        slips,
    }
}

/// A digit, minus or point typed (or a number pasted) while a poll is open: a student's answer
/// prompt opens with it.
pub(crate) fn start_answer(app: &mut App, typed: &str) {
    let Some(poll) = app.polling.poll.as_ref().filter(|poll| poll.is_open()) else {
        return;
    };
    // As a prompt takes a paste: one line, no control characters, no longer than it allows.
    let input: String = typed
        .chars()
        .filter(|ch| !ch.is_control())
        .take(super::update::MAX_INPUT_CHARS)
        .collect();
    app.overlay = Overlay::Prompt(Prompt {
        purpose: PromptFor::PollAnswer(poll.number),
        input,
    });
}

/// Whether a paste is a student's answer to the class's poll: nothing else is open on top.
pub(crate) fn takes_paste(app: &App) -> bool {
    app.overlay == Overlay::None
        && matches!(app.classroom, Some(Classroom::Student { .. }))
        && app.polling.poll.as_ref().is_some_and(|poll| poll.is_open())
}

/// Enter on a student's answer prompt: the number goes to the server, or the prompt stays open
/// with practice mode's word on what was typed.
pub(crate) fn submit(app: &mut App, number: u64, typed: &str) -> Result<Vec<Effect>, String> {
    let open = app
        .polling
        .poll
        .as_ref()
        .filter(|poll| poll.number == number && poll.is_open());
    if open.is_none() {
        // Closed (the reveal came while the student typed) or replaced: nothing is sent.
        app.overlay = Overlay::None;
        app.status = Some(Status::error(LOCKED));
        return Ok(Vec::new());
    }
    // Parsed as shown: a number reads the same, and what is not one is quoted back visibly.
    let shown = crate::lesson::text::printable(typed.trim());
    let answer = Answer::parse(&shown)?;
    app.overlay = Overlay::None;
    app.polling.mine = Some((number, shown));
    Ok(vec![Effect::Poll(PollEffect::Send { number, answer })])
}

/// What a student reads when their answer comes after the reveal.
pub const LOCKED: &str = "Too late: the answers were locked at the reveal";

/// A student's answer taken or refused by the server.
fn sent(app: &mut App, result: Result<(), String>) {
    match result {
        Ok(()) => {
            if let Some((_, typed)) = &app.polling.mine {
                app.status = Some(Status::info(format!(
                    "Your answer {typed} is in; you may change it until the reveal"
                )));
            }
        }
        Err(why) => {
            app.polling.mine = None;
            app.status = Some(Status::error(why));
        }
    }
}

/// The presenter's screen came with `poll` (a student's app, following or free).
pub(crate) fn presented(app: &mut App, poll: Option<&Arc<Poll>>) {
    let before = app
        .polling
        .poll
        .as_ref()
        .map(|poll| (poll.number, poll.is_open()));
    app.polling.poll = poll.cloned();
    let now = poll.map(|poll| (poll.number, poll.is_open()));
    if before == now {
        return;
    }
    // An answer being typed to a poll now revealed or replaced can no longer be sent.
    let typing = match &app.overlay {
        Overlay::Prompt(Prompt {
            purpose: PromptFor::PollAnswer(number),
            ..
        }) => Some(*number),
        _ => None,
    };
    let cut_off = typing.is_some() && now != typing.map(|number| (number, true));
    if cut_off {
        app.overlay = Overlay::None;
    }
    // A new poll, or the reveal: an answer to the last one is no longer the student's to show.
    // The reveal's words are the same on every screen, so that the class's screens are drawn
    // once, not once per answer.
    app.polling.mine = None;
    match poll {
        Some(poll) if poll.is_open() => {
            app.status = Some(Status::info(format!(
                "The presenter asks: {} = ? Type your number and press Enter",
                poll.name
            )));
        }
        Some(poll) => {
            let reveal = poll.reveal.as_deref();
            let truth = reveal.map_or(String::new(), |reveal| {
                format!(" = {}", format_number(reveal.truth, poll.decimals))
            });
            app.status = Some(if cut_off {
                Status::error(format!("{LOCKED} ({}{truth})", poll.name))
            } else {
                Status::info(format!("Revealed: {}{truth}", poll.name))
            });
        }
        None => {}
    }
}

/// What a tutor shows of the poll: set after every update, from the app's poll, on a tutor of
/// the lesson asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct PollOnScreen {
    pub poll: Arc<Poll>,
    /// A student's answer as typed, while the poll is open.
    pub mine: Option<String>,
    /// The presenter's count while the poll is open: answers in, and students connected.
    pub answered: Option<(usize, usize)>,
}

/// Brings the tutor's view of the poll up to date with the app's, and ends a revealed poll on
/// the presenter's screen once the presenter has moved on from its step.
pub(crate) fn sync(app: &mut App) {
    // The presenter's count of answers, and of students: the class's `Audience`.
    let presenter = match &app.classroom {
        Some(Classroom::Presenter { audience, .. }) => {
            Some((audience.answered, audience.connected))
        }
        _ => None,
    };
    // A revealed poll ends on the presenter's screen (and so on every screen) once the
    // presenter opens another lesson or leaves this one, or changes its numbers: its histogram
    // and truth would then be about numbers no longer shown.
    let over = presenter.is_some()
        && app.polling.poll.as_ref().is_some_and(|poll| {
            let tutor = app.screen.tutor();
            !poll.is_open()
                && (tutor.map(|tutor| &tutor.name) != app.polling.revealed_in.as_ref()
                    || tutor.is_some_and(|tutor| {
                        tutor.name == poll.lesson
                            && app
                                .polling
                                .asked_of
                                .as_ref()
                                .is_some_and(|asked| !Arc::ptr_eq(asked, &tutor.attention))
                    }))
        });
    if over {
        app.polling.poll = None;
    }
    let mine = app.polling.mine.clone();
    let poll = app.polling.poll.clone();
    let Some(tutor) = app.screen.tutor_mut() else {
        return;
    };
    tutor.poll = poll
        .filter(|poll| tutor.name == poll.lesson)
        .map(|poll| PollOnScreen {
            mine: mine
                .filter(|(number, _)| *number == poll.number && poll.is_open())
                .map(|(_, typed)| typed),
            answered: presenter.filter(|_| poll.is_open()),
            poll,
        });
}

/// Whether the tutor is on the lesson and step the poll asked about.
fn shows_poll(tutor: &Tutor, poll: &Poll) -> bool {
    tutor.name == poll.lesson && tutor.step().title() == poll.step
}

impl Tutor {
    /// Whether a class poll hides this cell: the cell asked about, until the reveal.
    pub fn is_polled(&self, cell: Cell) -> bool {
        self.poll.as_ref().is_some_and(|shown| {
            shown.poll.is_open() && self.practice_cell(cell) == self.practice_cell(shown.poll.cell)
        })
    }

    /// The poll panel takes the working's place on the lesson asked about (not on All heads,
    /// which has no working): while the poll is open wherever the cursor is, so the question
    /// stays in sight; after the reveal on the cell asked about, the others showing their own
    /// working.
    pub fn shows_poll_panel(&self) -> bool {
        self.poll.as_ref().is_some_and(|shown| {
            self.step() != Step::AllHeads
                && (shown.poll.is_open()
                    || self.selected_cell().is_some_and(|cell| {
                        self.practice_cell(cell) == self.practice_cell(shown.poll.cell)
                    }))
        })
    }
}

/// Whether the answers `holds` takes (some at least) were all judged right, in every vote.
fn all_right(reveal: &Reveal, holds: &dyn Fn(f64) -> bool) -> bool {
    let mut any = false;
    for tally in &reveal.votes {
        let answers = tally.answers.iter().filter(|value| holds(**value)).count();
        let right = tally
            .right_values
            .iter()
            .filter(|value| holds(**value))
            .count();
        if answers != right {
            return false;
        }
        any |= answers > 0;
    }
    any
}

/// The middle of `values` (the mean of the two middle ones of an even count).
fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let half = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[half]
    } else {
        (sorted[half - 1] + sorted[half]) / 2.0
    })
}

/// One bar of a reveal's histogram: a value (or a range of values), and how many answers of
/// each vote it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    pub label: String,
    pub counts: Vec<usize>,
    /// The truth is in this bin.
    pub truth: bool,
    /// Every answer in this bin was judged right (a bin beside the truth's, of answers typed
    /// to fewer decimals, say).
    pub right: bool,
}

/// The histogram of the votes' answers, in at most `most` bars (at least 3), with the truth
/// marked. When the answers (and the truth) take few values as the lesson writes them, each
/// value is a bar of its own, as a class's answers usually are: the truth and a slip or two.
/// Otherwise the bars split a range around the answers into equal parts, and answers far out
/// (a typo of 1000 among answers near 0.4) are counted at the ends rather than squeezing the
/// rest into one bar.
pub fn histogram(reveal: &Reveal, decimals: usize, most: usize) -> Vec<Bin> {
    let most = most.max(3);
    let votes = reveal.votes.len();
    // As the lesson's tables write numbers: every label with the same decimals.
    let written = |value: f64| format_fixed(value, decimals);
    let mut values: Vec<(f64, String)> = reveal
        .votes
        .iter()
        .flat_map(|tally| tally.answers.iter().map(|value| (*value, written(*value))))
        .collect();
    let truth = (reveal.truth, written(reveal.truth));
    let mut distinct: Vec<(f64, String)> = values
        .iter()
        .cloned()
        .chain(std::iter::once(truth.clone()))
        .collect();
    distinct.sort_by(|a, b| a.0.total_cmp(&b.0));
    distinct.dedup_by(|a, b| a.1 == b.1);
    if distinct.len() <= most {
        return distinct
            .into_iter()
            .map(|(_, label)| Bin {
                right: all_right(reveal, &|value| written(value) == label),
                counts: reveal
                    .votes
                    .iter()
                    .map(|tally| {
                        tally
                            .answers
                            .iter()
                            .filter(|value| written(**value) == label)
                            .count()
                    })
                    .collect(),
                truth: label == truth.1,
                label,
            })
            .collect();
    }
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let finite: Vec<f64> = values
        .iter()
        .map(|(value, _)| *value)
        .filter(|value| value.is_finite())
        .collect();
    // Around the middle answer, as far as the answers near it spread (the median of their
    // distances from it): a few answers far out do not stretch the range, however few answers
    // there are.
    let unit = 10f64.powi(-(decimals.min(12) as i32));
    let (mut low, mut high) = match median(&finite) {
        None => (reveal.truth, reveal.truth),
        Some(middle) => {
            let distances: Vec<f64> = finite.iter().map(|value| (value - middle).abs()).collect();
            let spread = median(&distances).unwrap_or(0.0) * 4.0;
            let reach = spread.max(unit * 4.0);
            let low = finite
                .iter()
                .copied()
                .filter(|v| *v >= middle - reach)
                .fold(middle, f64::min);
            let high = finite
                .iter()
                .copied()
                .filter(|v| *v <= middle + reach)
                .fold(middle, f64::max);
            (low, high)
        }
    };
    if reveal.truth.is_finite() {
        low = low.min(reveal.truth);
        high = high.max(reveal.truth);
    }
    let counts_of = |keep: &dyn Fn(f64) -> bool| -> Vec<usize> {
        reveal
            .votes
            .iter()
            .map(|tally| tally.answers.iter().filter(|value| keep(**value)).count())
            .collect()
    };
    let minus_infinity = counts_of(&|value| value == f64::NEG_INFINITY);
    let below = counts_of(&|value| value.is_finite() && value < low);
    let above = counts_of(&|value| value.is_finite() && value > high);
    let any = |counts: &[usize]| counts.iter().any(|count| *count > 0);
    let ends = usize::from(any(&minus_infinity) || reveal.truth == f64::NEG_INFINITY)
        + usize::from(any(&below))
        + usize::from(any(&above));
    let inner = most.saturating_sub(ends).max(1);
    let width = ((high - low) / inner as f64).max(f64::MIN_POSITIVE);
    let mut bins = Vec::new();
    if any(&minus_infinity) || reveal.truth == f64::NEG_INFINITY {
        bins.push(Bin {
            label: "-inf".to_string(),
            counts: minus_infinity,
            truth: reveal.truth == f64::NEG_INFINITY,
            right: all_right(reveal, &|value| value == f64::NEG_INFINITY),
        });
    }
    if any(&below) {
        bins.push(Bin {
            label: format!("< {}", written(low)),
            counts: below,
            truth: false,
            right: false,
        });
    }
    for index in 0..inner {
        let from = low + width * index as f64;
        let to = if index + 1 == inner {
            high
        } else {
            from + width
        };
        let last = index + 1 == inner;
        let inside = move |value: f64| value >= from && (value < to || (last && value <= to));
        bins.push(Bin {
            label: format!("{} to {}", written(from), written(to)),
            counts: counts_of(&inside),
            truth: inside(reveal.truth),
            right: all_right(reveal, &inside),
        });
    }
    if any(&above) {
        bins.push(Bin {
            label: format!("> {}", written(high)),
            counts: above,
            truth: false,
            right: false,
        });
    }
    debug_assert!(bins.iter().all(|bin| bin.counts.len() == votes));
    bins
}
