//! The classroom with a presenter (`serve --present`): students follow the presenter's lesson,
//! step and edits live, go free with `f` and rejoin with it, and `--lock` keeps them together.

use crate::common;

use common::classroom::*;
use common::pty::{PATIENCE, PtyChild, top_line};

/// A class of two on the first lesson's first step, the first student gone free.
fn a_class_on_its_first_step_with_one_student_free() -> (Server, PtyChild, PtyChild) {
    let (mut server, mut free, mut following) = class_of_two(&[]);
    server.presenter().press("\r");
    for student in [&mut free, &mut following] {
        student.wait_for_step("Embedding");
    }
    free.press("f");
    wait_for_status(&mut free, "the free badge", "free");
    (server, free, following)
}

#[test]
fn students_follow_the_presenters_lesson_step_and_edits() {
    if !installed(
        &["ssh"],
        "students_follow_the_presenters_lesson_step_and_edits",
    ) {
        return;
    }
    let (mut server, mut first, mut second) = class_of_two(&[]);
    for student in [&mut first, &mut second] {
        wait_for_status(student, "the student's follow badge", "following");
    }

    server.presenter().press("\r");
    server.presenter().wait_for_step("Embedding");
    for student in [&mut first, &mut second] {
        wait_for_top(student, "the presenter's lesson", FIRST_LESSON);
        student.wait_for_step("Embedding");
    }

    server.presenter().press("n");
    server.presenter().wait_for_step("Projection");
    for student in [&mut first, &mut second] {
        student.wait_for_step("Projection");
    }

    // The presenter edits the first embedding number: the students' header says the lesson
    // is edited, and their X shows the new number.
    server.presenter().press("[[");
    server.presenter().press("e");
    server.presenter().press("7\r");
    wait_for_status(server.presenter(), "the edit made", "is now 7");
    for student in [&mut first, &mut second] {
        let text = wait_for_top(student, "the presenter's edit", "edited");
        assert!(
            text.lines().any(|line| line.contains(" 7 ")),
            "the edited number reaches the student:\n{text}"
        );
    }
}

#[test]
fn a_student_who_goes_free_keeps_their_own_state_and_rejoins_with_f() {
    if !installed(
        &["ssh"],
        "a_student_who_goes_free_keeps_their_own_state_and_rejoins_with_f",
    ) {
        return;
    }
    let (mut server, mut free, mut following) = a_class_on_its_first_step_with_one_student_free();
    wait_for_status(
        server.presenter(),
        "one student fewer following",
        "2 students · 1 following",
    );
    free.press("nn");
    free.wait_for_step("Scores");

    server.presenter().press("n");
    server.presenter().wait_for_step("Projection");
    following.wait_for_step("Projection");
    let own = free.screen_text();
    assert!(
        top_line(&own).contains("· Scores"),
        "the free student stays on their own step:\n{own}"
    );

    free.press("f");
    free.wait_for_step("Projection");
    wait_for_status(&mut free, "the following badge again", "following");
    wait_for_status(
        server.presenter(),
        "both following again",
        "2 students · 2 following",
    );
}

#[test]
fn a_following_student_cannot_change_the_step_but_can_look_at_cells() {
    if !installed(
        &["ssh"],
        "a_following_student_cannot_change_the_step_but_can_look_at_cells",
    ) {
        return;
    }
    let (mut server, mut student, _other) = class_of_two(&[]);
    server.presenter().press("\r");
    student.wait_for_step("Embedding");
    let before = student.screen_text();

    student.press("n");
    wait_for_status(&mut student, "why n does nothing", "f goes free");
    let after = student.screen_text();
    assert!(top_line(&after).contains("· Embedding"), "{after}");

    // The cursor is the student's own to move: the working panel explains another cell.
    student.press("l");
    let moved = student.wait_for(
        "the cursor on the next cell",
        |text| working_heading(text) != working_heading(&before),
        PATIENCE,
    );
    assert!(top_line(&moved).contains("· Embedding"), "{moved}");
}

#[test]
fn a_locked_class_stays_on_the_presenters_screen() {
    if !installed(&["ssh"], "a_locked_class_stays_on_the_presenters_screen") {
        return;
    }
    let (mut server, mut student, _other) = class_of_two(&["--lock"]);
    wait_for_status(&mut student, "the locked badge", "locked");
    server.presenter().press("\r");
    student.wait_for_step("Embedding");

    student.press("f");
    wait_for_status(
        &mut student,
        "why f does nothing",
        "keeps the class on their screen",
    );
    student.press("n");
    wait_for_status(&mut student, "why n does nothing", "presenter's screen");
    let text = student.screen_text();
    assert!(top_line(&text).contains("· Embedding"), "{text}");

    server.presenter().press("n");
    student.wait_for_step("Projection");
}

#[test]
fn the_presenter_is_told_before_ending_the_class_whose_edits_it_would_lose() {
    if !installed(&["ssh"], "the_presenter_is_told_whose_edits_it_would_lose") {
        return;
    }
    let (mut server, mut free, mut following) = a_class_on_its_first_step_with_one_student_free();
    free.press("e5\r");
    wait_for_status(&mut free, "the student's own edit", "is now 5");
    // A follower's screen is the presenter's: only the free student's edit counts.
    following.wait_for(
        "the presenter's unedited screen",
        |text| text.lines().any(|line| line.starts_with("sleeps 1 1 0 1")),
        PATIENCE,
    );
    server.presenter().press("q");
    server
        .presenter()
        .wait_for("the lessons", |text| text.contains(PICKER), PATIENCE);
    server.presenter().press("q");
    server.presenter().wait_for(
        "the question naming the unsaved edits",
        |text| {
            // The question may wrap: its words, in order.
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            words.contains("End the class for 2 students (1 would lose unsaved edits)? y end it")
        },
        PATIENCE,
    );
    // Back to the lesson's own numbers, the student has nothing to lose.
    server.presenter().press("n");
    free.press("R");
    wait_for_status(&mut free, "the reset", "lesson's own numbers");
    server.presenter().press("q");
    server.presenter().wait_for(
        "the question without unsaved edits",
        |text| text.contains("End the class for 2 connected students? y end it"),
        PATIENCE,
    );
}

#[test]
fn when_the_presenter_quits_students_get_their_terminal_back() {
    if !installed(
        &["ssh"],
        "when_the_presenter_quits_students_get_their_terminal_back",
    ) {
        return;
    }
    let (mut server, mut first, mut second) = class_of_two(&[]);
    server.presenter().press("q");
    // Two students are connected: the presenter is asked first.
    server.presenter().wait_for(
        "the question before ending the class",
        |text| text.contains("End the class for 2 connected students?"),
        PATIENCE,
    );
    server.presenter().press("y");
    server.presenter().wait_for_exit();
    for student in [&mut first, &mut second] {
        student.wait_for(
            "the goodbye",
            |text| text.contains("the class has ended"),
            PATIENCE,
        );
        student.wait_for_the_terminal_restored();
        let status = student.wait_for_exit();
        assert!(
            status.success(),
            "ssh exits 0 at the end of class, not {status:?}"
        );
    }
}

/// The heading of the working panel: which cell's arithmetic is shown.
fn working_heading(text: &str) -> String {
    text.lines()
        .find(|line| line.contains("── How"))
        .unwrap_or("")
        .to_string()
}
