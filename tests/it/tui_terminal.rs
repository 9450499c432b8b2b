//! End to end: the real `attn-tutor` binary in a pseudo-terminal, driven by keystrokes and read
//! back through a vt100 screen.

use crate::common;

use common::pty::{PATIENCE, PtyChild, status_line, top_line};
use portable_pty::CommandBuilder;

/// The row for "sleeps" of the cat-sleeps attention weights, as `show --step softmax` prints it.
const SLEEPS_WEIGHTS: [&str; 3] = ["0.346", "0.432", "0.222"];

/// `attn-tutor ARGS` in an 80×24 pseudo-terminal, in an empty folder.
fn start_tutor(args: &[&str]) -> PtyChild {
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.args(args);
    command.env("TERM", "xterm-256color");
    command.env_remove("NO_COLOR");
    PtyChild::spawn(command)
}

/// Waits for the Softmax step and returns the row of weights for `token` on it.
#[track_caller]
fn wait_for_weights_row(tutor: &mut PtyChild, token: &str) -> Vec<String> {
    tutor.wait_until(
        &format!("the weights of {token} on the Softmax step"),
        PATIENCE,
        |screen| {
            let text = screen.contents();
            if !top_line(&text).contains("· Softmax") {
                return None;
            }
            weights_row(&text, token)
        },
    )
}

/// The row labelled `token` of a weights matrix on the screen: the token followed by three
/// numbers that add up to 1 (a row of softmax weights), wherever the layout put it. The scaled
/// scores beside it and the softmax working below it have rows for the token too, but theirs
/// do not add up to 1.
fn weights_row(text: &str, token: &str) -> Option<Vec<String>> {
    const TOKENS: usize = 3;
    text.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words.iter().enumerate().find_map(|(at, word)| {
            let cells = words.get(at + 1..at + 1 + TOKENS)?;
            let numbers: Vec<f64> = cells
                .iter()
                .map(|cell| cell.parse().ok())
                .collect::<Option<_>>()?;
            let adds_up = (numbers.iter().sum::<f64>() - 1.0).abs() < 0.01;
            (*word == token && adds_up).then(|| cells.iter().map(|cell| cell.to_string()).collect())
        })
    })
}

#[test]
fn a_learner_edits_an_embedding_and_sees_the_softmax_change() {
    let mut tutor = start_tutor(&["cat-sleeps"]);
    tutor.wait_for_step("Embedding");

    tutor.press("5");
    let before = wait_for_weights_row(&mut tutor, "sleeps");
    assert_eq!(before, SLEEPS_WEIGHTS, "{}", tutor.screen_text());

    tutor.press("1");
    tutor.wait_for_step("Embedding");
    tutor.press("e");
    let prompt = tutor.wait_for(
        "the edit prompt",
        |text| status_line(text).contains("Enter ok"),
        PATIENCE,
    );
    assert!(
        status_line(&prompt).starts_with("X["),
        "the prompt edits a cell of the embeddings X: {:?}",
        status_line(&prompt)
    );
    tutor.press("5");
    tutor.wait_for(
        "the 5 typed into the edit prompt",
        |text| status_line(text).contains("= 5"),
        PATIENCE,
    );
    tutor.press("\r");
    let edited = tutor.wait_for(
        "the status line to report the edit",
        |text| status_line(text).contains("is now 5"),
        PATIENCE,
    );
    assert!(
        status_line(&edited).contains("changed"),
        "the status line says what the edit changed: {:?}",
        status_line(&edited)
    );
    assert!(
        top_line(&edited).contains("edited"),
        "the header marks the lesson edited: {:?}",
        top_line(&edited)
    );

    tutor.press("5");
    let after = wait_for_weights_row(&mut tutor, "sleeps");
    assert_ne!(
        after,
        SLEEPS_WEIGHTS,
        "the edit changes the weights of sleeps:\n{}",
        tutor.screen_text()
    );

    tutor.press("q");
    tutor.wait_for(
        "the question about the unsaved edits",
        |text| status_line(text).contains("unsaved edits"),
        PATIENCE,
    );
    tutor.press("d");
    tutor.wait_for(
        "the lesson picker",
        |text| top_line(text).contains("choose a lesson"),
        PATIENCE,
    );
    tutor.press("q");

    tutor.wait_for_the_terminal_restored();
    let status = tutor.wait_for_exit();
    assert!(status.success(), "attn-tutor exited with {status:?}");
    assert_eq!(
        tutor.screen_text().trim(),
        "",
        "nothing is left on the main screen"
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    let mut tutor = start_tutor(&["cat-sleeps"]);
    tutor.wait_for_step("Embedding");
    tutor.press("5");
    tutor.wait_for_step("Softmax");

    let pid = tutor.pid().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("the kill command runs");
    assert!(kill.success(), "kill -TERM {pid}: {kill}");

    tutor.wait_for_the_terminal_restored();
    tutor.wait_for_exit();
}

#[test]
fn a_learner_practises_a_step_and_the_score_is_kept_in_the_progress_file() {
    let data = tempfile::TempDir::new().unwrap();
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.args(["practice", "identity-2x2"]);
    command.env("TERM", "xterm-256color");
    let mut tutor = PtyChild::spawn_with_data(command, Some(data.path()));
    tutor.wait_for_step("Projection");

    // X and W_q are both the identity, so Q is too: Q[x1, 1] = 1 and Q[x1, 2] = 0.
    tutor.press("1\r");
    tutor.wait_for(
        "the right answer taken",
        |text| status_line(text).contains("Right: Q[x1, 1] = 1"),
        PATIENCE,
    );
    tutor.press("5\r");
    let text = tutor.wait_for(
        "the wrong answer explained",
        |text| text.contains("Q[x1, 2]: you said 5; it is 0."),
        PATIENCE,
    );
    assert!(
        text.contains("1/2 first try · 1 revealed · 10 to go in Q, K and V"),
        "{text}"
    );
    // The cursor went on to the next ?, so the next number typed answers it: Q[x2, 1] = 0.
    tutor.press("0\r");
    tutor.wait_for(
        "the answer after a wrong one taken",
        |text| status_line(text).contains("Right: Q[x2, 1] = 0"),
        PATIENCE,
    );

    // The other nine cells, the rest of Q then K and V: three hints reveal each, and the
    // cursor goes on to the next.
    tutor.press(&"t".repeat(27));
    tutor.wait_for(
        "the step's score",
        |text| text.contains("Projection done: 2/12 first try · 10 revealed"),
        PATIENCE,
    );
    tutor.press("q");
    tutor.wait_for(
        "the picker",
        |text| text.contains("choose a lesson"),
        PATIENCE,
    );
    tutor.press("q");
    tutor.wait_for_exit();

    let kept = std::fs::read_to_string(data.path().join("attn-tutor/progress.toml"))
        .expect("the progress file is written");
    let progress: toml::Table = toml::from_str(&kept).expect("the progress file is TOML");
    let projection = &progress["lessons"]["identity-2x2"]["steps"]["projection"];
    assert_eq!(projection["first_try"].as_integer(), Some(2), "{kept}");
    assert_eq!(projection["revealed"].as_integer(), Some(10), "{kept}");
}

#[test]
fn the_log_never_records_what_the_learner_types() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = dir.path().join("tutor.log");
    let mut tutor = start_tutor(&["cat-sleeps", "--log", log.to_str().unwrap()]);
    tutor.wait_for_step("Embedding");
    tutor.press("e");
    tutor.wait_for(
        "the edit prompt",
        |text| status_line(text).contains("Enter ok"),
        PATIENCE,
    );
    tutor.press("\x15"); // Ctrl-u clears the old value, as in a shell.
    tutor.press("73.25");
    tutor.wait_for(
        "the number typed into the edit prompt",
        |text| status_line(text).contains("73.25"),
        PATIENCE,
    );
    tutor.press("\x1b");
    tutor.wait_for(
        "the edit prompt to close",
        |text| !status_line(text).contains("Enter ok"),
        PATIENCE,
    );
    tutor.press("q");
    tutor.wait_for(
        "the lesson picker",
        |text| top_line(text).contains("choose a lesson"),
        PATIENCE,
    );
    tutor.press("q");
    tutor.wait_for_exit();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("action=Edit"),
        "actions are logged:\n{logged}"
    );
    // Typed characters would be logged as Type('7'); timestamps hold digits, so look for those.
    for typed in ["'7'", "'3'", "'.'", "'2'", "'5'"] {
        assert!(!logged.contains(typed), "the log holds {typed}:\n{logged}");
    }
}
