//! One step numbering everywhere: the steps this lesson has. The tutor's header, the keys 1…7,
//! `show` in text and Markdown, and `show --step` all call a step by the same number.

use crate::common;
use common::*;

use attn_tutor::app::{Action, App, update};
use attn_tutor::lesson::BUILTIN;

/// "Step 5/6 · Softmax" for each step, as the tutor numbers them after key `number`.
fn tutor_headings(index: usize) -> Vec<(String, String)> {
    let mut app = App::new(App::builtin_entries(), Some(index));
    let count = app.tutor().expect("the lesson opens").steps.len();
    (1..=count)
        .map(|number| {
            update(&mut app, Action::GoToStep(number));
            let tutor = app.tutor().expect("still in the lesson");
            assert_eq!(tutor.step_index + 1, number, "key {number}");
            (
                tutor.step().key().to_string(),
                format!("Step {number}/{count} · {}", tutor.step().title()),
            )
        })
        .collect()
}

#[test]
fn show_and_the_handout_number_the_steps_as_the_tutor_and_its_keys_do() {
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let tutor = tutor_headings(index);
        let want: Vec<&str> = tutor.iter().map(|(_, heading)| heading.as_str()).collect();
        let text = show(builtin.name, &[]);
        // A step of one head has a section per head ("Scores — head 2/4"), each numbered as
        // the tutor numbers the step.
        let mut text_headings: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("== ")?.strip_suffix(" =="))
            .map(|heading| heading.split(" — head ").next().unwrap_or(heading))
            .collect();
        text_headings.dedup();
        assert_eq!(text_headings, want, "{}: show's text", builtin.name);
        let markdown = show(builtin.name, &["--format", "markdown"]);
        let mut markdown_headings: Vec<&str> = markdown
            .lines()
            .filter_map(|line| line.strip_prefix("## "))
            .map(|heading| heading.split(" — head ").next().unwrap_or(heading))
            .collect();
        markdown_headings.dedup();
        assert_eq!(markdown_headings, want, "{}: the handout", builtin.name);
        for (key, heading) in &tutor {
            let one = show(builtin.name, &["--step", key]);
            assert!(
                one.lines().any(|line| {
                    line == format!("== {heading} ==")
                        || line.starts_with(&format!("== {heading} — head 1/"))
                }),
                "{}: show --step {key} does not say {heading:?}:\n{one}",
                builtin.name
            );
        }
    }
}

#[test]
fn a_step_the_lesson_does_not_have_is_shown_without_a_number_that_means_another() {
    // cat-sleeps has no mask: its steps are 1 Embedding … 6 Output, and none is Masking.
    let text = show("cat-sleeps", &["--step", "masking"]);
    let heading = text
        .lines()
        .find(|line| line.starts_with("== "))
        .expect("a heading");
    assert_eq!(heading, "== Masking (not a step of this lesson) ==");
}
