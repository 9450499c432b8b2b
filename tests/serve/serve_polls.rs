//! Class polls (`serve --present`): the presenter asks the class for a cell with `a`, hidden on
//! every screen until `a` reveals the truth, the right count, the slips and a histogram; `A` asks
//! again; `--polls FILE` keeps one JSON line per reveal. Students are real ssh clients and a
//! headless Chromium.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::common;

use common::browser::{self, Browser};
use common::classroom::*;
use common::pty::{PATIENCE, PtyChild};

/// The cell every test asks about: the presenter's cursor starts on it at the Softmax step.
const ASKED: &str = "Poll: weights[sleeps, The] = ?";
const REVEALED: &str = "Poll: weights[sleeps, The] = 0.346";
const TRUTH: f64 = 0.346_392_203_164_219_2;

/// Keys the polls file's lines have, and no others (the contract other tools read), sorted.
const KEYS: [&str; 8] = [
    "answers",
    "asked_at",
    "cell",
    "lesson",
    "revealed_at",
    "step",
    "truth",
    "vote",
];

/// Where a class keeps its polls (`--polls FILE`): a file in a folder that goes with the test.
fn polls_file() -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::TempDir::new().unwrap();
    let file = folder.path().join("polls.jsonl");
    (folder, file)
}

/// The presenter opens the first lesson and goes to its Softmax step, where the cursor is on
/// weights[sleeps, The]; the students following get there too.
fn to_the_softmax_step(server: &mut Server, students: &mut [&mut PtyChild]) {
    server.presenter().press("\r");
    server.presenter().wait_for_step("Embedding");
    server.presenter().press("nnnn");
    server.presenter().wait_for_step("Softmax");
    for student in students {
        student.wait_for_step("Softmax");
    }
}

/// Waits for the presenter's panel to count `answered` (like "1 of 2 answered").
#[track_caller]
fn wait_for_the_count(server: &mut Server, answered: &str) -> String {
    let words = format!("Asked the class for weights[sleeps, The] (Softmax): {answered}.");
    server.presenter().wait_for(
        &format!("the presenter's count: {answered}"),
        |text| text.contains(&words),
        PATIENCE,
    )
}

/// Waits for `words` anywhere on `who`'s screen, however its lines wrap them.
#[track_caller]
fn wait_for_words(who: &mut PtyChild, what: &str, words: &str) -> String {
    who.wait_for(
        what,
        |text| {
            let flowing = text.split_whitespace().collect::<Vec<_>>().join(" ");
            flowing.contains(words)
        },
        PATIENCE,
    )
}

/// Whether the screen asks for the cell and hides it: the question's panel, a `?` where
/// weights[sleeps, The] is, and its value nowhere (the narration would give it away too).
fn asks_and_hides(text: &str) -> bool {
    text.contains(ASKED)
        && !text.contains("0.346")
        && text.lines().any(|line| {
            line.split_whitespace()
                .collect::<Vec<_>>()
                .ends_with(&["sleeps", "?", "0.432", "0.222"])
        })
}

/// A histogram row of a revealed poll, by its label: the count of each vote, and whether the
/// row is marked as the truth's. None when no row has that label.
fn histogram_row(text: &str, label: &str) -> Option<(Vec<usize>, bool)> {
    let row = text
        .lines()
        .skip_while(|line| !line.starts_with("── Poll"))
        .skip(1)
        .take_while(|line| !line.starts_with("──"))
        .find(|line| line.split_whitespace().next() == Some(label))?
        .trim_end();
    let truth = row.ends_with("◀ truth");
    let counts = row
        .trim_end_matches("◀ truth")
        .split('│')
        .map(|vote| {
            let count = vote.split_whitespace().last().unwrap_or_default();
            count
                .parse()
                .unwrap_or_else(|_| panic!("a count at the end of {vote:?} in {row:?}"))
        })
        .collect();
    Some((counts, truth))
}

/// The polls file's lines, each parsed, checked against the contract: its keys, the lesson,
/// step, cell and truth asked about, and times in RFC 3339 with the reveal after the asking.
#[track_caller]
fn logged_polls(file: &Path) -> (Vec<String>, Vec<serde_json::Value>) {
    let text = std::fs::read_to_string(file).expect("the polls file is written at the reveal");
    assert!(text.ends_with('\n'), "whole lines only:\n{text}");
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let polls = lines
        .iter()
        .map(|line| {
            let poll: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("a JSON line ({error}): {line}"));
            let mut keys: Vec<&str> = poll
                .as_object()
                .unwrap_or_else(|| panic!("a JSON object: {line}"))
                .keys()
                .map(String::as_str)
                .collect();
            keys.sort_unstable();
            assert_eq!(keys, KEYS, "{line}");
            assert_eq!(poll["lesson"], FIRST_LESSON, "{line}");
            assert_eq!(poll["step"], "Softmax", "{line}");
            assert_eq!(poll["cell"], "weights[sleeps, The]", "{line}");
            let truth = poll["truth"].as_f64().expect("the truth, a number");
            assert!((truth - TRUTH).abs() < 1e-12, "{line}");
            let time = |key: &str| -> SystemTime {
                let written = poll[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("{key}, a string: {line}"));
                humantime::parse_rfc3339(written)
                    .unwrap_or_else(|error| panic!("{key} in RFC 3339 ({error}): {line}"))
            };
            assert!(time("asked_at") <= time("revealed_at"), "{line}");
            poll
        })
        .collect();
    (lines, polls)
}

/// A logged poll's answers, which are numbers.
fn answers(poll: &serde_json::Value) -> Vec<f64> {
    poll["answers"]
        .as_array()
        .unwrap_or_else(|| panic!("answers, a list: {poll}"))
        .iter()
        .map(|answer| {
            answer
                .as_f64()
                .unwrap_or_else(|| panic!("an answer, a number: {poll}"))
        })
        .collect()
}

/// The server's log without each line's time, which could hold any digits.
fn log_without_times(server: &Server) -> String {
    server
        .log()
        .lines()
        .map(|line| line.split_once(' ').map_or(line, |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_class_is_asked_answers_sees_the_truth_and_votes_again() {
    if !installed(
        &["ssh"],
        "the_class_is_asked_answers_sees_the_truth_and_votes_again",
    ) {
        return;
    }
    let (_folder, file) = polls_file();
    let (mut server, mut first, mut second) = class_of_two(&["--polls", file.to_str().unwrap()]);
    to_the_softmax_step(&mut server, &mut [&mut first, &mut second]);

    // Asked: the cell is hidden on every screen, the presenter's too.
    server.presenter().press("a");
    let asking = wait_for_the_count(&mut server, "0 of 2 answered");
    assert!(asks_and_hides(&asking), "{asking}");
    for student in [&mut first, &mut second] {
        student.wait_for("the question, the cell hidden", asks_and_hides, PATIENCE);
        wait_for_status(
            student,
            "the presenter's question",
            "The presenter asks: weights[sleeps, The] = ? Type your number and press Enter",
        );
    }

    // Answered: a digit opens the prompt; the answer may be changed and counts once.
    first.press("0.4");
    first.wait_for(
        "the answer prompt",
        |text| text.contains("Poll: weights[sleeps, The] = 0.4"),
        PATIENCE,
    );
    first.press("321\r");
    wait_for_status(
        &mut first,
        "the answer taken",
        "Your answer 0.4321 is in; you may change it until the reveal",
    );
    wait_for_the_count(&mut server, "1 of 2 answered");
    first.press("0.346\r");
    wait_for_status(
        &mut first,
        "the changed answer taken",
        "Your answer 0.346 is in",
    );

    // Bad input: a non-number is refused with practice mode's words, and the prompt stays.
    second.press("1x\r");
    wait_for_status(
        &mut second,
        "a non-number refused",
        "“1x” is not a number (like 0.25 or -1.5) (fix it, or Esc)",
    );
    second.wait_for(
        "the prompt still open",
        |text| text.contains("Poll: weights[sleeps, The] = 1x"),
        PATIENCE,
    );
    // A paste that would retitle a window and reverse the text: its escapes are dropped, and
    // the bidi control is named on the student's own screen, not sent to their terminal.
    second.press("\x15"); // Ctrl-U
    second.press("\x1b[200~0.3\x1b]0;pwned\x07\u{202e}1\x1b[201~");
    second.wait_for(
        "the paste in the prompt, made printable",
        |text| text.contains("Poll: weights[sleeps, The] = 0.3]0;pwned\\u{202e}1"),
        PATIENCE,
    );
    second.press("\r");
    wait_for_status(
        &mut second,
        "the paste refused",
        "“0.3]0;pwned\\u{202e}1” is not a number",
    );
    second.press("\x15");
    second.press("19.395\r");
    wait_for_status(&mut second, "the slip taken", "Your answer 19.395 is in");
    let counted = wait_for_the_count(&mut server, "2 of 2 answered");
    assert!(
        asks_and_hides(&counted),
        "no answer on the presenter's screen:\n{counted}"
    );
    assert!(
        !counted.contains("pwned") && !counted.contains('\u{202e}'),
        "{counted}"
    );

    // Revealed, on every screen: the truth, the right count, the slip and the histogram.
    server.presenter().press("a");
    wait_for_words(
        server.presenter(),
        "the presenter's reveal",
        "Revealed: weights[sleeps, The] = 0.346 · 1 of 2 right · A asks again after discussion",
    );
    let mut screens = vec![server.presenter().screen_text()];
    for student in [&mut first, &mut second] {
        wait_for_status(
            student,
            "the reveal's words",
            "Revealed: weights[sleeps, The] = 0.346",
        );
        screens.push(student.wait_for("the reveal", |text| text.contains(REVEALED), PATIENCE));
    }
    for screen in &screens {
        assert!(screen.contains(REVEALED), "{screen}");
        assert!(screen.contains("Right: 1 of 2 (within"), "{screen}");
        assert!(
            screen.contains("Slips: exp not divided by the row's sum: 1"),
            "{screen}"
        );
        assert_eq!(
            histogram_row(screen, "0.346"),
            Some((vec![1], true)),
            "{screen}"
        );
        assert_eq!(
            histogram_row(screen, "19.395"),
            Some((vec![1], false)),
            "{screen}"
        );
        assert_eq!(histogram_row(screen, "0.432"), None, "{screen}");
    }

    // Logged: one line, the answers as numbers (the one changed, not the first).
    let (lines, polls) = logged_polls(&file);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(polls[0]["vote"], 1);
    assert_eq!(answers(&polls[0]), [0.346, 19.395]);
    let first_vote = lines[0].clone();

    // The second vote: A asks the same cell again, hidden again.
    server.presenter().press("A");
    wait_for_the_count(&mut server, "0 of 2 answered");
    for student in [&mut first, &mut second] {
        student.wait_for(
            "the second vote's question",
            |text| text.contains("Poll, second vote: weights[sleeps, The] = ?"),
            PATIENCE,
        );
        student.press("0.346\r");
        wait_for_status(student, "the second answer", "Your answer 0.346 is in");
    }
    wait_for_the_count(&mut server, "2 of 2 answered");
    server.presenter().press("a");
    let both = "Right: 1 of 2 at the first vote, 2 of 2 at the second";
    let mut screens = vec![server.presenter().wait_for(
        "the second vote's reveal",
        |text| text.contains(both),
        PATIENCE,
    )];
    for student in [&mut first, &mut second] {
        screens.push(student.wait_for(
            "the second vote's reveal",
            |text| text.contains(both),
            PATIENCE,
        ));
    }
    for screen in &screens {
        assert!(
            screen.contains("Poll, second vote: weights[sleeps, The] = 0.346"),
            "{screen}"
        );
        // The histogram's columns, headed: the first vote, then the second.
        let heading = screen
            .lines()
            .find(|line| line.contains("│ second vote"))
            .unwrap_or_else(|| panic!("the votes' heading:\n{screen}"));
        assert_eq!(
            heading.split_whitespace().collect::<Vec<_>>(),
            ["first", "vote", "│", "second", "vote"],
            "{screen}"
        );
        assert_eq!(
            histogram_row(screen, "0.346"),
            Some((vec![1, 2], true)),
            "{screen}"
        );
        assert_eq!(
            histogram_row(screen, "19.395"),
            Some((vec![1, 0], false)),
            "{screen}"
        );
    }
    let (lines, polls) = logged_polls(&file);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0], first_vote,
        "the first vote's line stays as it was"
    );
    assert_eq!(polls[1]["vote"], 2);
    assert_eq!(answers(&polls[1]), [0.346, 0.346]);

    // The pasted text never reached the file, and no answer the server's log.
    let logged = std::fs::read_to_string(&file).unwrap();
    assert!(!logged.contains("pwned") && !logged.contains('\u{202e}'));
    assert!(!logged.contains("0.4321"), "a changed answer is not kept");
    let log = log_without_times(&server);
    for answer in ["0.4321", "0.346", "19.395", "1x", "pwned", "\u{202e}"] {
        assert!(
            !log.contains(answer),
            "{answer:?} in the server's log:\n{log}"
        );
    }
}

#[test]
fn a_late_student_is_asked_and_one_who_leaves_no_longer_counts() {
    if !installed(
        &["ssh"],
        "a_late_student_is_asked_and_one_who_leaves_no_longer_counts",
    ) {
        return;
    }
    let (_folder, file) = polls_file();
    let mut server = Server::present(&["--polls", file.to_str().unwrap(), "--max-sessions", "2"]);
    let mut stays = server.student("stays", &Login::Open);
    wait_for_the_picker(&mut stays);
    to_the_softmax_step(&mut server, &mut [&mut stays]);

    // A token label has no value: nothing is asked.
    server.presenter().press("h");
    server.presenter().press("a");
    let refused = wait_for_status(
        server.presenter(),
        "the token label refused",
        "A token label has no value to predict: move the cursor onto a cell, then a",
    );
    assert!(!refused.contains("Poll:"), "{refused}");

    server.presenter().press("l");
    server.presenter().press("a");
    wait_for_the_count(&mut server, "0 of 1 answered");

    // A student who joins while the poll is open is asked too, and counted.
    let mut late = server.student("late", &Login::Open);
    late.wait_for("the question on joining", asks_and_hides, PATIENCE);
    wait_for_status(&mut late, "the presenter's question", "The presenter asks");
    wait_for_the_count(&mut server, "0 of 2 answered");

    // Past the class size, a third is refused, and the count is of the two in class.
    let mut third = server.student("third", &Login::Open);
    third.wait_for(
        "the class-full message",
        |text| text.contains("the class is full (2 students at once); ask your teacher"),
        PATIENCE,
    );
    assert!(!third.wait_for_exit().success());
    late.press("0.346\r");
    wait_for_status(
        &mut late,
        "the late answer taken",
        "Your answer 0.346 is in",
    );
    wait_for_the_count(&mut server, "1 of 2 answered");
    stays.press("0.5\r");
    wait_for_status(&mut stays, "the answer taken", "Your answer 0.5 is in");
    wait_for_the_count(&mut server, "2 of 2 answered");

    // A student who leaves mid-poll takes their answer with them.
    late.press("\x03"); // Ctrl-C leaves
    late.wait_for_exit();
    wait_for_the_count(&mut server, "1 of 1 answered");

    // An answer being typed when the reveal comes is too late.
    stays.press("0.3");
    stays.wait_for(
        "the answer prompt",
        |text| text.contains("Poll: weights[sleeps, The] = 0.3"),
        PATIENCE,
    );
    server.presenter().press("a");
    let revealed = server.presenter().wait_for(
        "the reveal",
        |text| text.contains("Right: 0 of 1 (within"),
        PATIENCE,
    );
    assert_eq!(
        histogram_row(&revealed, "0.346"),
        Some((vec![0], true)),
        "{revealed}"
    );
    // The prompt closes at the reveal, and says the answer was not sent.
    stays.wait_for("the reveal", |text| text.contains(REVEALED), PATIENCE);
    wait_for_status(
        &mut stays,
        "the late answer refused",
        "Too late: the answers were locked at the reveal",
    );

    let (lines, polls) = logged_polls(&file);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        answers(&polls[0]),
        [0.5],
        "only the answer of the student still there"
    );
}

#[test]
fn a_student_in_a_browser_and_one_gone_free_are_asked_too() {
    if !installed(
        &["ssh"],
        "a_student_in_a_browser_and_one_gone_free_are_asked_too",
    ) || !browser::installed("a_student_in_a_browser_and_one_gone_free_are_asked_too")
    {
        return;
    }
    let mut server = Server::present(&["--web", "127.0.0.1:0"]);
    let mut free = server.student("free", &Login::Open);
    wait_for_the_picker(&mut free);
    to_the_softmax_step(&mut server, &mut [&mut free]);
    // Free on a step of their own, the student is still asked about the lesson's cell.
    free.press("f");
    wait_for_status(&mut free, "the free badge", "free");
    free.press("p");
    free.wait_for_step("Scaling");

    server.presenter().press("a");
    wait_for_the_count(&mut server, "0 of 1 answered");
    let asked = free.wait_for("the question", |text| text.contains(ASKED), PATIENCE);
    assert!(!asked.contains("0.346"), "{asked}");
    free.press("0.305\r");
    wait_for_status(&mut free, "the answer taken", "Your answer 0.305 is in");

    // The browser comes in while the poll is open: it follows the presenter, and is asked.
    let browser = Browser::start();
    browser.open(&server);
    browser.join("grace", "");
    browser.wait_for_screen("the question in the browser", asks_and_hides);
    wait_for_the_count(&mut server, "1 of 2 answered");
    browser.press("0.346\u{E007}"); // Enter
    browser.wait_for_screen("the answer taken", |screen| {
        screen.contains("Your answer 0.346 is in")
    });
    wait_for_the_count(&mut server, "2 of 2 answered");

    server.presenter().press("a");
    let screen = browser.wait_for_screen("the reveal in the browser", |screen| {
        screen.contains(REVEALED)
    });
    assert!(screen.contains("Right: 1 of 2 (within"), "{screen}");
    assert_eq!(
        histogram_row(&screen, "0.346"),
        Some((vec![1], true)),
        "{screen}"
    );
    assert_eq!(
        histogram_row(&screen, "0.305"),
        Some((vec![1], false)),
        "{screen}"
    );
    wait_for_status(
        &mut free,
        "the reveal's words on a step of one's own",
        "Revealed: weights[sleeps, The] = 0.346",
    );
}
