//! Class polls in the app, without a network: the presenter asks the class for a cell, it is
//! hidden on every screen until the reveal, students type a number (practice mode's words for
//! one that is not), and the reveal counts the right answers, names the slips and draws the
//! histogram; a second vote shows both. The server's part is played here by `Class`, which does
//! what `serve` does with the app's poll effects (tests/serve/serve_polls.rs runs the real one).

use crate::common;

use common::{screen, status};

use std::collections::BTreeMap;
use std::sync::Arc;

use attn_tutor::app::{
    Action, App, Audience, Classroom, Direction, Effect, Follow, Overlay, PollEffect, PollReply,
    Presented, Reveal, histogram, update,
};
use attn_tutor::attention::MatrixName;
use attn_tutor::practice::{Answer, SlipKind};

/// A presenter and students, with what `serve` keeps of the poll: the answers by seat.
struct Class {
    presenter: App,
    students: Vec<App>,
    version: u64,
    open: Option<u64>,
    locked: bool,
    answers: BTreeMap<usize, Answer>,
}

impl Class {
    /// A presenter on the first lesson's Softmax step, the cursor on weights[sleeps, The], and
    /// `students` following.
    fn on_softmax(students: usize) -> Class {
        let mut presenter = App::new(App::builtin_entries(), None);
        presenter.classroom = Some(Classroom::Presenter {
            audience: Audience::default(),
            join: "ssh -p 2222 NAME@127.0.0.1".to_string(),
            host_key: None,
        });
        let mut class = Class {
            presenter,
            students: Vec::new(),
            version: 0,
            open: None,
            locked: false,
            answers: BTreeMap::new(),
        };
        class.presenter_does(Action::Open);
        for _ in 0..4 {
            class.presenter_does(Action::NextStep);
        }
        for _ in 0..students {
            class.join(Follow::Following);
        }
        class
    }

    fn join(&mut self, follow: Follow) -> usize {
        let mut student = App::new(App::builtin_entries(), None);
        student.classroom = Some(Classroom::Student {
            follow,
            latest: None,
        });
        update(&mut student, self.shown());
        self.students.push(student);
        self.students.len() - 1
    }

    fn shown(&self) -> Action {
        Action::Presenter(Arc::new(Presented::of(&self.presenter, self.version)))
    }

    /// The presenter's key, the server's part of it, and the new screen to every student.
    fn presenter_does(&mut self, action: Action) {
        let mut effects = update(&mut self.presenter, action);
        while let Some(effect) = effects.pop() {
            let reply = match effect {
                Effect::Poll(PollEffect::Open(poll)) => {
                    self.open = Some(poll.number);
                    self.locked = false;
                    self.answers.clear();
                    PollReply::Opened
                }
                Effect::Poll(PollEffect::Lock(number)) => {
                    self.locked = true;
                    PollReply::Answers {
                        number,
                        answers: self.answers.values().copied().collect(),
                        logged: Ok(()),
                    }
                }
                _ => continue,
            };
            effects.extend(update(&mut self.presenter, Action::Poll(reply)));
        }
        self.version += 1;
        let shown = self.shown();
        for student in &mut self.students {
            update(student, shown.clone());
        }
        self.count();
    }

    /// The presenter's count of answers, as `serve` sends it between keys.
    fn count(&mut self) {
        let audience = Audience {
            connected: self.students.len(),
            following: self.students.len(),
            unsaved: 0,
            answered: if self.locked { 0 } else { self.answers.len() },
        };
        update(&mut self.presenter, Action::Audience(audience));
    }

    /// Student `seat` types `typed` and presses Enter; what the server makes of it.
    fn answer(&mut self, seat: usize, typed: &str) {
        let mut chars = typed.chars();
        let first = chars.next().unwrap();
        let student = &mut self.students[seat];
        update(student, Action::StartPollAnswer(first));
        for ch in chars {
            update(student, Action::Type(ch));
        }
        let effects = update(student, Action::Submit);
        for effect in effects {
            if let Effect::Poll(PollEffect::Send { number, answer }) = effect {
                let taken = if Some(number) == self.open && !self.locked {
                    self.answers.insert(seat, answer);
                    Ok(())
                } else {
                    Err(attn_tutor::app::LOCKED.to_string())
                };
                update(
                    &mut self.students[seat],
                    Action::Poll(PollReply::Sent(taken)),
                );
            }
        }
        self.count();
    }

    fn reveal(&self) -> Arc<Reveal> {
        let poll = self.presenter.polling.poll.as_ref().expect("a poll");
        Arc::clone(poll.reveal.as_ref().expect("revealed"))
    }
}

/// weights[sleeps, The] with the scores left unscaled: the "forgot ÷√d_k" slip's number.
fn unscaled_weight(app: &App) -> f64 {
    let tutor = app.tutor().unwrap();
    let scores = tutor.attention.matrix(MatrixName::Scores).unwrap();
    let row = scores.row(2);
    let sum: f64 = row.iter().map(|score| score.exp()).sum();
    row[0].exp() / sum
}

#[test]
fn the_presenter_asks_for_the_cell_under_the_cursor_and_every_screen_hides_it() {
    let mut class = Class::on_softmax(2);
    class.presenter_does(Action::AskClass);
    let poll = class.presenter.polling.poll.clone().expect("asked");
    assert_eq!(poll.name, "weights[sleeps, The]");
    assert_eq!((poll.vote, poll.step.as_str()), (1, "Softmax"));
    for app in std::iter::once(&class.presenter).chain(&class.students) {
        let text = screen(app, 100, 30);
        assert!(
            text.contains("Poll: weights[sleeps, The] = ?"),
            "the question is on every screen:\n{text}"
        );
        assert!(
            !text.contains("0.346"),
            "the value is on no screen, not even in the narration:\n{text}"
        );
    }
    assert!(
        screen(&class.presenter, 100, 30).contains("0 of 2 answered"),
        "{}",
        screen(&class.presenter, 100, 30)
    );
    assert!(status(&class.students[0]).contains("Type your number"));
}

#[test]
fn a_token_label_or_all_heads_has_no_cell_to_ask_for() {
    let mut class = Class::on_softmax(1);
    class.presenter_does(Action::Move(Direction::Left));
    class.presenter_does(Action::Move(Direction::Left));
    class.presenter_does(Action::AskClass);
    assert!(class.presenter.polling.poll.is_none());
    assert!(
        status(&class.presenter).contains("A token label has no value to predict"),
        "{}",
        status(&class.presenter)
    );
}

#[test]
fn a_student_answers_and_the_presenter_counts_answers_never_seeing_them() {
    let mut class = Class::on_softmax(3);
    class.presenter_does(Action::AskClass);
    class.answer(0, "0.346");
    class.answer(1, "0.2");
    // A changed answer replaces the first: still two answers.
    class.answer(1, "0.35");
    let presenter = screen(&class.presenter, 100, 30);
    assert!(presenter.contains("2 of 3 answered"), "{presenter}");
    assert!(
        !presenter.contains("0.35"),
        "no answer before the reveal:\n{presenter}"
    );
    assert!(
        status(&class.students[1]).contains("Your answer 0.35 is in"),
        "{}",
        status(&class.students[1])
    );
    let mine = screen(&class.students[1], 80, 24);
    assert!(mine.contains("Your answer: 0.35"), "{mine}");
}

#[test]
fn practice_hints_wait_for_the_reveal() {
    // A student gone free on the presenter's step, practising it.
    let mut class = Class::on_softmax(1);
    update(&mut class.students[0], Action::ToggleFollow);
    update(&mut class.students[0], Action::TogglePractice);
    class.presenter_does(Action::AskClass);
    // A hint would write the polled cell's working, and its third the number itself.
    for _ in 0..3 {
        update(&mut class.students[0], Action::Hint);
        let said = status(&class.students[0]);
        assert!(said.contains("Hints wait for the reveal"), "{said}");
    }
    class.presenter_does(Action::AskClass);
    update(&mut class.students[0], Action::Hint);
    let said = status(&class.students[0]);
    assert!(
        said.starts_with("Hint 1 of 3 for weights[sleeps, The]"),
        "{said}"
    );
}

#[test]
fn a_non_number_gets_practice_modes_word_and_nothing_is_sent() {
    let mut class = Class::on_softmax(1);
    class.presenter_does(Action::AskClass);
    class.answer(0, "1x");
    assert!(class.answers.is_empty());
    let student = &class.students[0];
    assert!(
        status(student).contains("“1x” is not a number (like 0.25 or -1.5)"),
        "{}",
        status(student)
    );
    assert!(
        matches!(student.overlay, Overlay::Prompt(_)),
        "the prompt stays open to fix it"
    );
}

#[test]
fn the_reveal_shows_the_truth_the_right_count_the_slips_and_the_histogram() {
    let mut class = Class::on_softmax(4);
    class.presenter_does(Action::AskClass);
    let slip = format!("{:.3}", unscaled_weight(&class.presenter));
    class.answer(0, "0.346");
    class.answer(1, "0.3464");
    class.answer(2, &slip);
    class.answer(3, "0.9");
    class.presenter_does(Action::AskClass);
    let reveal = class.reveal();
    let tally = &reveal.votes[0];
    assert_eq!(tally.right, 2);
    assert_eq!(tally.slips, vec![(SlipKind::ForgotScaling, 1)]);
    for app in std::iter::once(&class.presenter).chain(&class.students) {
        let text = screen(app, 120, 40);
        assert!(
            text.contains("Poll: weights[sleeps, The] = 0.346"),
            "{text}"
        );
        assert!(text.contains("Right: 2 of 4 (within ±0.0005"), "{text}");
        assert!(text.contains("Slips: forgot ÷√d_k: 1"), "{text}");
        let truth = text
            .lines()
            .find(|line| line.contains("◀ truth"))
            .unwrap_or_else(|| panic!("the truth's bar is marked:\n{text}"));
        assert!(truth.contains("0.346") && truth.contains("█ 2"), "{truth}");
        assert!(
            text.contains("exp(2.965) / Σ exp(scaled[sleeps, :])"),
            "the working follows:\n{text}"
        );
    }
    assert!(
        status(&class.students[0]).contains("Revealed: weights[sleeps, The] = 0.346"),
        "{}",
        status(&class.students[0])
    );
}

#[test]
fn an_answer_being_typed_at_the_reveal_is_not_sent_and_its_student_is_told() {
    let mut class = Class::on_softmax(2);
    class.presenter_does(Action::AskClass);
    // The second student is typing when the reveal comes.
    update(&mut class.students[1], Action::StartPollAnswer('0'));
    update(&mut class.students[1], Action::Type('.'));
    class.presenter_does(Action::AskClass);
    assert_eq!(class.students[1].overlay, Overlay::None);
    assert!(
        status(&class.students[1]).contains("Too late: the answers were locked at the reveal"),
        "{}",
        status(&class.students[1])
    );
    assert!(class.answers.is_empty());
    // With the poll revealed, a digit is no answer: it goes to its step, as ever.
    update(&mut class.students[0], Action::StartPollAnswer('3'));
    assert_eq!(class.students[0].overlay, Overlay::None);
}

#[test]
fn a_pasted_number_is_an_answer_cleaned_as_a_prompt_cleans_a_paste() {
    let mut class = Class::on_softmax(1);
    class.presenter_does(Action::AskClass);
    update(
        &mut class.students[0],
        Action::Paste("0.346\u{1b}[2J\u{202e}".to_string()),
    );
    let Overlay::Prompt(prompt) = &class.students[0].overlay else {
        panic!("the paste opens the answer prompt");
    };
    assert!(prompt.input.starts_with("0.346"), "{:?}", prompt.input);
    assert!(!prompt.input.contains('\u{1b}'), "{:?}", prompt.input);
    // Not a number: practice mode's word, with what was typed made visible, and nothing sent.
    let effects = update(&mut class.students[0], Action::Submit);
    assert!(effects.is_empty(), "{effects:?}");
    let said = status(&class.students[0]);
    assert!(said.contains("is not a number"), "{said}");
    assert!(!said.contains('\u{202e}'), "{said:?}");
}

#[test]
fn a_second_vote_shows_both_votes_side_by_side() {
    let mut class = Class::on_softmax(3);
    class.presenter_does(Action::AskClass);
    class.answer(0, "0.346");
    class.answer(1, "0.5");
    class.presenter_does(Action::AskClass);
    class.presenter_does(Action::AskClassAgain);
    let poll = class.presenter.polling.poll.clone().unwrap();
    assert_eq!((poll.vote, poll.name.as_str()), (2, "weights[sleeps, The]"));
    assert!(
        screen(&class.students[2], 80, 24).contains("Poll, second vote: weights[sleeps, The] = ?")
    );
    class.answer(0, "0.346");
    class.answer(1, "0.346");
    class.answer(2, "0.346");
    class.presenter_does(Action::AskClass);
    let reveal = class.reveal();
    assert_eq!(
        reveal
            .votes
            .iter()
            .map(|tally| (tally.vote, tally.right, tally.answers.len()))
            .collect::<Vec<_>>(),
        [(1, 1, 2), (2, 3, 3)]
    );
    let text = screen(&class.students[0], 120, 40);
    assert!(
        text.contains("Right: 1 of 2 at the first vote, 3 of 3 at the second"),
        "{text}"
    );
    assert!(
        text.contains("first vote") && text.contains("│ second vote"),
        "{text}"
    );
    // A third vote is not asked: a asks anew.
    class.presenter_does(Action::AskClassAgain);
    assert!(
        status(&class.presenter).contains("has had its second vote"),
        "{}",
        status(&class.presenter)
    );
}

#[test]
fn a_student_who_joins_while_a_poll_is_open_is_asked_and_a_free_one_too() {
    let mut class = Class::on_softmax(0);
    let free = class.join(Follow::Free);
    class.presenter_does(Action::AskClass);
    let late = class.join(Follow::Following);
    for seat in [free, late] {
        let text = screen(&class.students[seat], 80, 24);
        assert!(text.contains("weights[sleeps, The] = ?"), "{text}");
    }
    // The free student is on the lesson list: the bottom line asks, and a number answers.
    assert!(class.students[free].tutor().is_none());
    class.answer(free, "0.35");
    class.answer(late, "0.346");
    assert_eq!(class.answers.len(), 2);
}

#[test]
fn students_who_answered_differently_see_the_same_reveal() {
    // The reveal is one screen for the whole class, so that the server draws it once.
    let mut class = Class::on_softmax(3);
    class.presenter_does(Action::AskClass);
    class.answer(0, "0.346");
    class.answer(1, "0.9");
    class.presenter_does(Action::AskClass);
    let screens: Vec<String> = class
        .students
        .iter()
        .map(|student| screen(student, 80, 24))
        .collect();
    assert_eq!(screens[0], screens[1]);
    assert_eq!(screens[1], screens[2]);
}

#[test]
fn after_the_reveal_the_next_step_is_as_ever_and_leaving_the_lesson_ends_the_poll() {
    let mut class = Class::on_softmax(1);
    class.presenter_does(Action::AskClass);
    class.presenter_does(Action::AskClass);
    assert!(screen(&class.students[0], 80, 24).contains("Poll: weights[sleeps, The] = 0.346"));
    class.presenter_does(Action::NextStep);
    let text = screen(&class.students[0], 80, 24);
    assert!(!text.contains("Poll"), "{text}");
    assert!(text.contains("About this step"), "{text}");
    // Back on the cell asked about, its reveal is there again; A could still ask again.
    class.presenter_does(Action::PreviousStep);
    assert!(screen(&class.students[0], 80, 24).contains("Poll: weights[sleeps, The] = 0.346"));
    class.presenter_does(Action::Back);
    assert!(class.presenter.polling.poll.is_none());
    assert!(class.students[0].polling.poll.is_none());
}

#[test]
fn the_presenter_may_reveal_from_another_step_and_is_told_where_the_histogram_is() {
    let mut class = Class::on_softmax(2);
    class.presenter_does(Action::AskClass);
    class.answer(0, "0.346");
    class.presenter_does(Action::NextStep);
    class.presenter_does(Action::AskClass);
    assert!(
        status(&class.presenter).contains("the histogram is on Softmax of cat-sleeps"),
        "{}",
        status(&class.presenter)
    );
    assert!(
        class.students[1]
            .polling
            .poll
            .as_ref()
            .is_some_and(|poll| !poll.is_open())
    );
    class.presenter_does(Action::PreviousStep);
    let text = screen(&class.students[1], 80, 24);
    assert!(text.contains("Right: 1 of 1"), "{text}");
}

#[test]
fn the_presenters_numbers_stay_put_while_the_class_answers() {
    let mut class = Class::on_softmax(1);
    class.presenter_does(Action::AskClass);
    for action in [Action::Reroll, Action::AddBackward, Action::Reset] {
        class.presenter_does(action);
        assert!(
            status(&class.presenter).contains("The class is answering about the numbers on screen"),
            "{}",
            status(&class.presenter)
        );
    }
    // Once revealed, an edit ends the poll: its truth was about the numbers before.
    class.presenter_does(Action::AskClass);
    class.presenter_does(Action::AddBackward);
    assert!(class.presenter.polling.poll.is_none());
}

#[test]
fn a_and_a_again_say_what_they_are_for_outside_the_presenters_tutor() {
    let mut alone = App::new(App::builtin_entries(), Some(0));
    update(&mut alone, Action::AskClass);
    assert!(
        status(&alone).contains("serve --present"),
        "{}",
        status(&alone)
    );
    let mut class = Class::on_softmax(1);
    update(&mut class.students[0], Action::AskClass);
    assert!(
        status(&class.students[0]).contains("The presenter asks the class"),
        "{}",
        status(&class.students[0])
    );
    class.presenter_does(Action::AskClassAgain);
    assert!(
        status(&class.presenter).contains("a asks one first"),
        "{}",
        status(&class.presenter)
    );
}

#[test]
fn a_histogram_keeps_far_out_answers_at_its_ends() {
    let mut class = Class::on_softmax(12);
    class.presenter_does(Action::AskClass);
    let typed = [
        "0.30", "0.31", "0.33", "0.346", "0.346", "0.35", "0.36", "0.38", "0.40", "0.42", "1000",
        "-5",
    ];
    for (seat, answer) in typed.iter().enumerate() {
        class.answer(seat, answer);
    }
    class.presenter_does(Action::AskClass);
    let bins = histogram(&class.reveal(), 3, 8);
    assert!(bins.len() <= 8, "{bins:?}");
    // -5 and 1000 each have an end of their own; the ten near the truth share the rest.
    let (first, last) = (bins.first().unwrap(), bins.last().unwrap());
    assert!(
        first.label.starts_with("< 0.") && first.counts == [1],
        "{bins:?}"
    );
    assert!(
        last.label.starts_with("> 0.") && last.counts == [1],
        "{bins:?}"
    );
    assert!(
        bins[1..bins.len() - 1]
            .iter()
            .all(|bin| bin.label.contains(" to ") && bin.label.len() == "0.270 to 0.300".len()),
        "{bins:?}"
    );
    assert_eq!(bins.iter().map(|bin| bin.counts[0]).sum::<usize>(), 12);
    assert_eq!(bins.iter().filter(|bin| bin.truth).count(), 1, "{bins:?}");
}

/// The README's picture of a reveal: twelve students answered weights[sleeps, The] of the first
/// lesson, seven right, three who forgot ÷√d_k and two others; a student's screen at 80×24.
fn a_reveal_as_the_readme_shows_it() -> String {
    let mut class = Class::on_softmax(12);
    class.presenter_does(Action::AskClass);
    let slip = format!("{:.3}", unscaled_weight(&class.presenter));
    let typed = [
        "0.346", "0.346", "0.35", "0.3464", "0.346", "0.346", "0.346", &slip, &slip, &slip, "0.5",
        "0.209",
    ];
    for (seat, answer) in typed.iter().enumerate() {
        class.answer(seat, answer);
    }
    class.presenter_does(Action::AskClass);
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| {
            attn_tutor::ui::view(
                frame,
                &class.students[0],
                &attn_tutor::ui::Theme::monochrome(),
            )
        })
        .unwrap();
    common::buffer_text(terminal.backend().buffer())
}

#[test]
fn the_readme_shows_a_reveal_as_the_tutor_draws_it() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let marker = "seven right, three who forgot ÷√d_k and two others:\n\n```\n";
    let (before, after) = readme
        .split_once(marker)
        .expect("the README's classroom section shows a reveal");
    let (shown, rest) = after.split_once("\n```").unwrap();
    let drawn = a_reveal_as_the_readme_shows_it();
    if std::env::var_os("ATTN_UPDATE_DOCS").is_some() {
        std::fs::write(path, format!("{before}{marker}{drawn}\n```{rest}")).unwrap();
        return;
    }
    assert_eq!(
        shown, drawn,
        "ATTN_UPDATE_DOCS=1 cargo test --test it tui_polls:: draws it anew"
    );
}
