//! The scaling lab in the tutor: `L` in the lesson list opens it, ← → choose the d_k whose row
//! is drawn, [ ] halve and double the keys, r draws again, q goes back; its screen at 80×24 and
//! 120×40 (snapshots).

use crate::common;

use common::status;

use attn_tutor::app::{Action, App, update};

fn lab() -> App {
    let mut app = App::new(App::builtin_entries(), None);
    update(&mut app, Action::OpenLab);
    app
}

#[test]
fn the_lesson_list_offers_the_lab_and_opens_it() {
    let app = App::new(App::builtin_entries(), None);
    assert!(common::screen(&app, 120, 40).contains("L √d_k lab"));
    let app = lab();
    let screen = common::screen(&app, 120, 40);
    assert!(
        screen.contains("Why divide by √d_k? (the scaling lab)"),
        "{screen}"
    );
    assert!(
        screen.contains("d_k 64 · 16 keys · 256 rows · seed 1"),
        "{screen}"
    );
    for title in [
        "std of the scores",
        "largest weight",
        "entropy (bits)",
        "gradient",
    ] {
        assert!(screen.contains(title), "{title} in\n{screen}");
    }
}

#[test]
fn arrows_choose_the_d_k_whose_row_is_drawn() {
    let mut app = lab();
    update(&mut app, Action::Move(attn_tutor::app::Direction::Right));
    assert_eq!(app.lab().unwrap().dim(), 128);
    assert!(common::screen(&app, 120, 40).contains("d_k 128 raw: top"));
    for _ in 0..20 {
        update(&mut app, Action::Move(attn_tutor::app::Direction::Left));
    }
    assert_eq!(app.lab().unwrap().dim(), 1);
    assert!(status(&app).contains("smallest d_k"), "{}", status(&app));
}

#[test]
fn brackets_change_the_keys_and_r_the_seed() {
    let mut app = lab();
    let before = app.lab().unwrap().sweep().clone();
    update(&mut app, Action::NextMatrix);
    let screen = app.lab().unwrap();
    assert_eq!(screen.settings().keys, 32);
    assert_eq!(screen.row().0.len(), 32);
    update(&mut app, Action::Reroll);
    assert_eq!(app.lab().unwrap().settings().seed, 2);
    assert_ne!(app.lab().unwrap().sweep().points, before.points);
    for _ in 0..10 {
        update(&mut app, Action::PreviousMatrix);
    }
    assert_eq!(app.lab().unwrap().settings().keys, 2);
    assert!(
        status(&app).contains("from 2 to 64 keys"),
        "{}",
        status(&app)
    );
}

#[test]
fn q_goes_back_to_the_lesson_list() {
    let mut app = lab();
    update(&mut app, Action::Back);
    assert!(app.lab().is_none());
    assert!(!app.quit);
    assert!(common::screen(&app, 80, 24).contains("cat-sleeps"));
}

#[test]
fn the_lab_screen_at_80x24_and_120x40() {
    let app = lab();
    for (width, height) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(
            format!("lab_scaling_{width}x{height}"),
            common::screen(&app, width, height)
        );
    }
}

#[test]
fn the_lab_ends_with_what_its_charts_show_in_a_sentence_whole_at_every_width() {
    let app = lab();
    for width in [80, 100, 120, 160] {
        let screen = common::screen(&app, width, 24);
        let said = screen
            .lines()
            .find(|line| line.contains("softmax") && line.contains("√d_k"))
            .unwrap_or_else(|| panic!("no conclusion at {width} columns:\n{screen}"));
        assert!(
            said.trim_end().ends_with("d_k.") || said.trim_end().ends_with("alive."),
            "cut at {width} columns: {said}"
        );
    }
    assert!(common::screen(&app, 160, 24).contains("gives one key nearly all the weight"));
}

#[test]
fn the_readme_capture_of_the_lab_is_what_the_tutor_draws() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find(" Why divide by √d_k? (the scaling lab)")
        .expect("the README shows the lab's screen");
    let shown = &readme[start..start + readme[start..].find("```").unwrap()];
    let drawn: Vec<String> = common::screen(&lab(), 80, 24)
        .lines()
        .map(|line| line.trim_end().to_string())
        .collect();
    assert_eq!(shown.trim_end(), drawn.join("\n").trim_end());
}

#[test]
fn a_row_of_more_keys_than_fit_draws_the_largest_and_says_so() {
    let mut app = lab();
    update(&mut app, Action::NextMatrix);
    update(&mut app, Action::NextMatrix);
    assert_eq!(app.lab().unwrap().settings().keys, 64);
    let screen = common::screen(&app, 80, 24);
    assert!(screen.contains("38 of 64 keys"), "{screen}");
    // The top of the page stops at 64 keys, where a sweep still takes a blink.
    update(&mut app, Action::NextMatrix);
    assert_eq!(app.lab().unwrap().settings().keys, 64);
}

#[test]
fn question_mark_in_the_lab_shows_the_labs_own_keys_and_closes_again() {
    let mut app = lab();
    let key = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('?'),
        crossterm::event::KeyModifiers::NONE,
    );
    let action = attn_tutor::keymap::key_action(key, &app).expect("? means something in the lab");
    update(&mut app, action);
    let screen = common::screen(&app, 80, 24);
    for words in [
        "choose d_k",
        "halve, double the keys in a row",
        "draw again with the next seed",
        "back to the lessons",
    ] {
        assert!(screen.contains(words), "{words:?} in\n{screen}");
    }
    // The lesson's keys are not the lab's.
    assert!(!screen.contains("next step, previous step"), "{screen}");
    assert!(!screen.contains("In the lesson list"), "{screen}");
    let action = attn_tutor::keymap::key_action(key, &app).expect("? closes the help");
    update(&mut app, action);
    assert_eq!(app.overlay, attn_tutor::app::Overlay::None);
    assert!(app.lab().is_some(), "still in the lab");
}
