//! The README's sample screen is what the tutor draws: cat-sat-mat at 80×24 on Softmax with the
//! cursor on weights[cat, cat], in monochrome.

use crate::common;

use attn_tutor::app::{Action, App, update};
use attn_tutor::attention::MatrixName;
use attn_tutor::lesson::BUILTIN;
use attn_tutor::ui::{Theme, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn drawn() -> String {
    let index = BUILTIN
        .iter()
        .position(|builtin| builtin.name == "cat-sat-mat")
        .expect("cat-sat-mat is built in");
    let mut app = App::new(App::builtin_entries(), Some(index));
    update(&mut app, Action::GoToStep(5));
    update(
        &mut app,
        Action::Select {
            matrix: MatrixName::Weights,
            row: 1,
            col: Some(1),
        },
    );
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("a test terminal");
    terminal
        .draw(|frame| view(frame, &app, &Theme::monochrome()))
        .expect("drawing never fails on a test terminal");
    common::buffer_text(terminal.backend().buffer())
}

#[test]
fn the_readme_sample_screen_is_what_the_tutor_draws() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md is readable");
    let after = readme
        .split_once("on Softmax with the cursor on weights[cat, cat]:\n\n```\n")
        .expect("the README introduces its sample screen")
        .1;
    let sample = after.split_once("\n```").expect("the sample ends").0;
    let drawn = drawn();
    assert!(
        sample == drawn,
        "README.md's sample screen differs from what the tutor draws:\n{drawn}"
    );
}
