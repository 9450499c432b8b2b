//! The app in a classroom, without a network: a student follows the presenter's screen, goes
//! free and rejoins with `f`, a locked class stays on the presenter's step, and the presenter
//! sees how many follow.

use crate::common;

use common::status;

use std::sync::Arc;

use attn_tutor::app::{
    Action, App, Audience, Classroom, Direction, Follow, Overlay, Presented, update,
};
use attn_tutor::attention::Step;
use attn_tutor::lesson::Lesson;

/// The presenter's app, on the lesson picker.
fn presenter() -> App {
    let mut app = App::new(App::builtin_entries(), None);
    app.classroom = Some(Classroom::Presenter {
        audience: Audience::default(),
        join: "ssh -p 2222 NAME@127.0.0.1".to_string(),
        host_key: None,
    });
    app
}

/// A student's app in a class with a presenter.
fn student(follow: Follow) -> App {
    let mut app = App::new(App::builtin_entries(), None);
    app.classroom = Some(Classroom::Student {
        follow,
        latest: None,
    });
    app
}

/// The presenter's screen as it is sent to students.
fn shown(presenter: &App, version: u64) -> Action {
    Action::Presenter(Arc::new(Presented::of(presenter, version)))
}

fn step(app: &App) -> Option<Step> {
    app.tutor().map(|tutor| tutor.step())
}

fn follow(app: &App) -> Follow {
    match &app.classroom {
        Some(Classroom::Student { follow, .. }) => *follow,
        other => panic!("not a student: {other:?}"),
    }
}

/// A presenter on the second step of the first lesson, and a student following.
fn presenter_on_projection(follow: Follow) -> (App, App) {
    let mut teacher = presenter();
    update(&mut teacher, Action::Open);
    update(&mut teacher, Action::NextStep);
    let mut class = student(follow);
    update(&mut class, shown(&teacher, 1));
    (teacher, class)
}

/// The presenter moves to X, one cell right, and types 9 there.
fn edit_an_embedding(teacher: &mut App) {
    for action in [
        Action::PreviousMatrix,
        Action::PreviousMatrix,
        Action::Move(Direction::Right),
        Action::Edit,
        Action::Type('9'),
        Action::Submit,
    ] {
        update(teacher, action);
    }
}

#[test]
fn a_following_student_shows_the_presenters_lesson_and_step() {
    let (_, class) = presenter_on_projection(Follow::Following);
    assert_eq!(step(&class), Some(Step::Projection));
    assert_eq!(class.tutor().unwrap().name, "cat-sleeps");
}

#[test]
fn a_following_student_gets_the_presenters_edits_and_selected_cell() {
    let (mut teacher, mut class) = presenter_on_projection(Follow::Following);
    edit_an_embedding(&mut teacher);
    update(&mut class, shown(&teacher, 2));
    let (theirs, mine) = (teacher.tutor().unwrap(), class.tutor().unwrap());
    assert_eq!(mine.lesson, theirs.lesson);
    assert_eq!(mine.focus, theirs.focus);
    assert_eq!(mine.cursor(mine.focus), theirs.cursor(theirs.focus));
}

#[test]
fn the_presenters_edit_history_stays_with_the_presenter() {
    let (mut teacher, _) = presenter_on_projection(Follow::Following);
    edit_an_embedding(&mut teacher);
    let mut presented = Presented::of(&teacher, 2).tutor.unwrap();
    let mut own = teacher.tutor().cloned().unwrap();
    assert!(own.undo(), "the presenter can undo the edit");
    assert!(!presented.undo(), "students get no history to undo");
}

#[test]
fn a_following_student_cannot_change_the_step_or_edit() {
    let (_, mut class) = presenter_on_projection(Follow::Following);
    let before = class.tutor().unwrap().lesson.clone();
    for action in [
        Action::NextStep,
        Action::GoToStep(1),
        Action::Edit,
        Action::Reset,
        Action::Back,
    ] {
        update(&mut class, action.clone());
        assert_eq!(step(&class), Some(Step::Projection), "after {action:?}");
        assert!(
            status(&class).contains("f goes free"),
            "after {action:?}: {}",
            status(&class)
        );
    }
    assert_eq!(class.overlay, Overlay::None);
    assert_eq!(class.tutor().unwrap().lesson, before);
}

#[test]
fn a_following_student_moves_their_own_cursor() {
    let (teacher, mut class) = presenter_on_projection(Follow::Following);
    update(&mut class, Action::Move(Direction::Up));
    let (theirs, mine) = (teacher.tutor().unwrap(), class.tutor().unwrap());
    assert_ne!(mine.cursor(mine.focus), theirs.cursor(theirs.focus));
}

#[test]
fn going_free_keeps_the_screen_and_ignores_the_presenter() {
    let (mut teacher, mut class) = presenter_on_projection(Follow::Following);
    update(&mut class, Action::ToggleFollow);
    assert_eq!(follow(&class), Follow::Free);
    assert_eq!(step(&class), Some(Step::Projection));
    update(&mut class, Action::NextStep);
    update(&mut teacher, Action::PreviousStep);
    update(&mut class, shown(&teacher, 2));
    assert_eq!(step(&class), Some(Step::Scores));
}

#[test]
fn rejoining_takes_the_presenters_latest_screen() {
    let (mut teacher, mut class) = presenter_on_projection(Follow::Following);
    update(&mut class, Action::ToggleFollow);
    update(&mut class, Action::NextStep);
    update(&mut teacher, Action::LastStep);
    update(&mut class, shown(&teacher, 2));
    update(&mut class, Action::ToggleFollow);
    assert_eq!(follow(&class), Follow::Following);
    assert_eq!(step(&class), Some(Step::OnlineSoftmax));
}

#[test]
fn a_locked_student_cannot_go_free() {
    let (_, mut class) = presenter_on_projection(Follow::Locked);
    update(&mut class, Action::ToggleFollow);
    assert_eq!(follow(&class), Follow::Locked);
    assert!(
        status(&class).contains("keeps the class"),
        "{}",
        status(&class)
    );
    update(&mut class, Action::NextStep);
    assert_eq!(step(&class), Some(Step::Projection));
}

#[test]
fn a_following_student_leaves_without_being_asked_about_the_presenters_edits() {
    let (mut teacher, mut class) = presenter_on_projection(Follow::Following);
    edit_an_embedding(&mut teacher);
    update(&mut class, shown(&teacher, 2));
    update(&mut class, Action::Quit);
    assert!(class.quit);
}

#[test]
fn a_presenter_update_keeps_the_students_help_open_and_their_message() {
    let (teacher, mut class) = presenter_on_projection(Follow::Following);
    update(&mut class, Action::NextStep);
    let message = status(&class);
    update(&mut class, shown(&teacher, 2));
    assert_eq!(status(&class), message);
    update(&mut class, Action::ToggleHelp);
    update(&mut class, shown(&teacher, 3));
    assert_eq!(class.overlay, Overlay::Help);
}

#[test]
fn the_presenter_sees_the_count_of_students() {
    let mut teacher = presenter();
    let audience = Audience {
        connected: 3,
        following: 2,
        unsaved: 1,
        answered: 0,
    };
    update(&mut teacher, Action::Audience(audience));
    assert!(matches!(
        teacher.classroom,
        Some(Classroom::Presenter { audience: shown, .. }) if shown == audience
    ));
}

#[test]
fn f_outside_a_classroom_explains_itself() {
    let mut app = App::new(App::builtin_entries(), Some(0));
    update(&mut app, Action::ToggleFollow);
    assert!(status(&app).contains("classroom"), "{}", status(&app));
}

/// The presenter's app with `connected` students in the class.
fn presenter_with(connected: usize) -> App {
    let mut app = presenter();
    update(
        &mut app,
        Action::Audience(Audience {
            connected,
            following: connected,
            unsaved: 0,
            answered: 0,
        }),
    );
    app
}

#[test]
fn the_presenter_is_asked_before_quitting_ends_the_class_for_connected_students() {
    let mut app = presenter_with(3);
    update(&mut app, Action::Open);
    update(&mut app, Action::Back);
    update(&mut app, Action::Quit);
    assert!(!app.quit, "q q must not end the class unasked");
    assert!(matches!(
        app.overlay,
        Overlay::Question(attn_tutor::app::Question::EndClass)
    ));
    update(&mut app, Action::Answer('n'));
    assert!(!app.quit);
    assert_eq!(app.overlay, Overlay::None);
    update(&mut app, Action::Quit);
    update(&mut app, Action::Answer('y'));
    assert!(app.quit, "y ends the class");
}

#[test]
fn a_presenter_alone_quits_at_once() {
    let mut app = presenter_with(0);
    update(&mut app, Action::Quit);
    assert!(app.quit);
}

#[test]
fn a_second_ctrl_c_ends_the_class_without_a_second_question() {
    let mut app = presenter_with(1);
    update(&mut app, Action::Quit);
    update(&mut app, Action::Quit);
    assert!(app.quit);
}

/// A student session's app, free to edit, where saving is off.
fn student_who_cannot_save() -> App {
    let mut app = student(Follow::Free);
    app.can_save = false;
    update(&mut app, Action::Open);
    app
}

#[test]
fn w_in_a_classroom_session_says_saving_is_off_instead_of_asking_for_a_name() {
    let mut app = student_who_cannot_save();
    update(&mut app, Action::Save);
    assert_eq!(app.overlay, Overlay::None, "no file name is asked for");
    let status = app.status.clone().unwrap();
    assert!(
        status.text.starts_with(attn_tutor::app::SAVING_OFF),
        "{}",
        status.text
    );
}

#[test]
fn w_in_a_classroom_session_shows_the_lesson_as_a_file_to_copy_and_w_again_hides_it() {
    let mut app = student_who_cannot_save();
    update(&mut app, Action::Save);
    let screen = common::screen(&app, 100, 40);
    assert!(screen.contains("Your lesson as a file"), "{screen}");
    assert!(screen.contains("format = 1"), "{screen}");
    assert!(screen.contains("tokens = ["), "{screen}");
    update(&mut app, Action::Save);
    let screen = common::screen(&app, 100, 40);
    assert!(!screen.contains("Your lesson as a file"), "{screen}");
}

#[test]
fn leaving_unsaved_edits_in_a_classroom_session_never_offers_to_save_them() {
    let mut app = student_who_cannot_save();
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    update(&mut app, Action::Type('5'));
    update(&mut app, Action::Submit);
    assert!(app.tutor().unwrap().has_unsaved_edits());
    update(&mut app, Action::Back);
    let screen = common::screen(&app, 100, 24);
    assert!(screen.contains("unsaved edits"), "{screen}");
    assert!(!screen.contains("w save"), "{screen}");
    update(&mut app, Action::Answer('w'));
    assert_eq!(app.overlay, Overlay::None, "w asks for no file name");
    assert!(app.tutor().is_some(), "and the student stays");
}

#[test]
fn a_following_student_follows_the_presenter_onto_the_positions_and_rotation_steps() {
    for (lesson, new_step) in [
        ("positions-cat-sat-mat", Step::Positions),
        ("rope-same-distance", Step::Rotation),
    ] {
        let mut teacher = presenter();
        let index = App::builtin_entries()
            .iter()
            .position(|entry| entry.name == lesson)
            .unwrap();
        for _ in 0..index {
            update(&mut teacher, Action::Move(Direction::Down));
        }
        update(&mut teacher, Action::Open);
        while step(&teacher) != Some(new_step) {
            update(&mut teacher, Action::NextStep);
        }
        // The presenter turns the screen to its second matrix (X, or K_rope).
        update(&mut teacher, Action::NextMatrix);
        let mut class = student(Follow::Following);
        update(&mut class, shown(&teacher, 1));
        let (theirs, mine) = (teacher.tutor().unwrap(), class.tutor().unwrap());
        assert_eq!(mine.name, lesson);
        assert_eq!(mine.step(), new_step);
        assert_eq!(mine.focus, theirs.focus);
        assert_eq!(mine.panels(), theirs.panels());
    }
}

#[test]
fn a_student_gone_free_has_unsaved_edits_only_after_editing() {
    let (_teacher, mut class) = presenter_on_projection(Follow::Following);
    update(&mut class, Action::ToggleFollow);
    let tutor = class.tutor().unwrap();
    assert!(!tutor.has_unsaved_edits(), "free, before any edit");
}

/// A student goes free and types 7 into an embedding (X, one cell right).
fn go_free_and_edit(class: &mut App) {
    update(class, Action::ToggleFollow);
    for action in [
        Action::PreviousMatrix,
        Action::PreviousMatrix,
        Action::Move(Direction::Right),
        Action::Edit,
        Action::Type('7'),
        Action::Submit,
    ] {
        update(class, action);
    }
}

#[test]
fn following_again_asks_before_a_free_students_own_edits_are_replaced() {
    let (teacher, mut class) = presenter_on_projection(Follow::Following);
    go_free_and_edit(&mut class);
    let edited = class.tutor().unwrap().lesson.clone();
    assert_ne!(edited, teacher.tutor().unwrap().lesson, "the edit took");
    update(&mut class, Action::ToggleFollow);
    assert_eq!(follow(&class), Follow::Free, "not before the answer");
    assert_eq!(class.tutor().unwrap().lesson, edited);
    let screen = common::screen(&class, 80, 24);
    let asked = screen.lines().last().unwrap_or_default();
    assert!(
        asked.contains("Follow the presenter again, losing your unsaved edits? y follow"),
        "{screen}"
    );
    // n stays free with the edit, which can still be undone.
    update(&mut class, Action::Answer('n'));
    assert_eq!(follow(&class), Follow::Free);
    assert!(
        status(&class).contains("your edits kept"),
        "{}",
        status(&class)
    );
    assert_eq!(class.tutor().unwrap().lesson, edited);
    assert!(!class.tutor().unwrap().history.is_empty());
    // y follows, the edits given up.
    update(&mut class, Action::ToggleFollow);
    update(&mut class, Action::Answer('y'));
    assert_eq!(follow(&class), Follow::Following);
    assert_eq!(
        class.tutor().unwrap().lesson,
        teacher.tutor().unwrap().lesson
    );
}

#[test]
fn following_again_without_edits_of_ones_own_asks_nothing() {
    let (mut teacher, mut class) = presenter_on_projection(Follow::Following);
    // The presenter's edits came with the screen: they are not the student's to lose.
    edit_an_embedding(&mut teacher);
    update(&mut class, shown(&teacher, 2));
    update(&mut class, Action::ToggleFollow);
    update(&mut class, Action::ToggleFollow);
    assert_eq!(class.overlay, Overlay::None);
    assert_eq!(follow(&class), Follow::Following);
}

#[test]
fn a_follower_is_not_told_they_changed_the_lesson_the_presenter_changed() {
    let (mut teacher, mut class) = presenter_on_projection(Follow::Following);
    edit_an_embedding(&mut teacher);
    update(&mut class, shown(&teacher, 2));
    let tutor = class.tutor().unwrap();
    assert!(
        tutor.lesson.narration.get(tutor.step()).is_some(),
        "the step has the lesson's own words"
    );
    let text = attn_tutor::ui::narration_text(tutor);
    assert!(!text.contains("You have changed"), "{text}");
    assert!(
        text.starts_with("(The lesson has been changed from the numbers"),
        "{text}"
    );
    // The presenter, who made the edit, is told so.
    let own = attn_tutor::ui::narration_text(teacher.tutor().unwrap());
    assert!(own.starts_with("(You have changed the lesson"), "{own}");
}

#[test]
fn the_lesson_shown_to_copy_at_80_columns_wraps_its_comments_as_comments() {
    let mut app = student_who_cannot_save();
    update(&mut app, Action::Save);
    let tutor = app.tutor().unwrap();
    let lines = attn_tutor::ui::narration_lines(tutor, 78);
    // The file starts after the paragraph that says how to copy it.
    let start = lines
        .iter()
        .position(String::is_empty)
        .expect("a blank line before the file")
        + 1;
    let pasted = lines[start..].join("\n");
    assert!(
        lines[start..].iter().any(|line| line.starts_with('#')),
        "the file has comments to wrap:\n{pasted}"
    );
    // The header comment wraps as comments. (A long string value still wraps as it is: the
    // paragraph above the file says to join such a line again.)
    let header: Vec<&String> = lines[start..]
        .iter()
        .take_while(|line| !line.starts_with("format"))
        .collect();
    assert!(
        header.len() > 1,
        "the header comment wraps at 78:\n{pasted}"
    );
    for line in header {
        assert!(
            line.starts_with("# "),
            "{line:?} is not a comment:\n{pasted}"
        );
    }
}

/// Whether two tutors hold the one lesson in memory, not two equal copies.
fn same_lesson(one: &Lesson, other: &Lesson) -> bool {
    std::ptr::eq(one, other)
}

#[test]
fn followers_share_the_presenters_lessons_until_one_goes_free_and_edits() {
    let (mut teacher, mut first) = presenter_on_projection(Follow::Following);
    // Edited, the presenter's lesson is no longer the original nor the saved one.
    edit_an_embedding(&mut teacher);
    let screen = shown(&teacher, 2);
    let mut second = student(Follow::Following);
    update(&mut first, screen.clone());
    update(&mut second, screen);
    let theirs = teacher.tutor().unwrap();
    let presenters = theirs.lesson.clone();
    for class in [&first, &second] {
        let mine = class.tutor().unwrap();
        assert!(same_lesson(&mine.lesson, &theirs.lesson), "the lesson");
        assert!(
            same_lesson(&mine.original, &theirs.original),
            "the original"
        );
        assert!(same_lesson(&mine.saved, &theirs.saved), "the saved one");
    }
    // A student's own edit changes their own copy only.
    go_free_and_edit(&mut first);
    let (mine, others) = (first.tutor().unwrap(), second.tutor().unwrap());
    assert!(!same_lesson(&mine.lesson, &theirs.lesson));
    assert_ne!(mine.lesson, theirs.lesson, "the edit took");
    assert_eq!(
        theirs.lesson, presenters,
        "the presenter's lesson is as it was"
    );
    assert!(same_lesson(&others.lesson, &theirs.lesson));
    assert!(same_lesson(&mine.original, &theirs.original));
}
