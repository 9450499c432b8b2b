//! The browser seat in a real browser (headless Chromium): a student opens the page, signs in
//! with the join code, picks a lesson and steps through it; a presenter's step reaches a
//! student who follows in a browser.

use crate::common;

use common::browser::{self, Browser};
use common::classroom::{FIRST_LESSON, PICKER, Server, wait_for_status};
use common::pty::top_line;

const CODE: &str = "sunflower";

/// An open class served to browsers, and a browser signed in to it, on the lesson picker.
fn an_open_class_in_a_browser() -> (Server, Browser) {
    let server = Server::start(&["--open", "--web", "127.0.0.1:0"]);
    let browser = Browser::start();
    browser.open(&server);
    browser.join("ada", "");
    browser.wait_for_screen("the lesson picker", |screen| screen.contains(PICKER));
    (server, browser)
}

/// Presses Enter on the picker and waits for the first lesson's first step.
fn open_the_first_lesson(browser: &Browser) -> String {
    browser.press("\u{E007}"); // Enter
    browser.wait_for_screen("the first lesson's first step", |screen| {
        top_line(screen).contains("· Embedding")
    })
}

/// `attn-tutor serve` with a join code, serving browsers as well as SSH.
fn class_with_a_code() -> Server {
    let dir = tempfile::TempDir::new().unwrap();
    let code = dir.path().join("code");
    std::fs::write(&code, format!("{CODE}\n")).unwrap();
    let server = Server::start(&[
        "--password-file",
        code.to_str().unwrap(),
        "--web",
        "127.0.0.1:0",
    ]);
    // The code file is read at start.
    drop(dir);
    server
}

#[test]
fn a_student_joins_in_a_browser_with_the_join_code_and_steps_through_a_lesson() {
    if !browser::installed("a_student_joins_in_a_browser") {
        return;
    }
    let server = class_with_a_code();
    let browser = Browser::start();
    browser.open(&server);

    browser.join("ada", "sunfl0wer");
    browser.wait_for_message("the wrong code refused", "not the class's join code");
    browser.join("ada", CODE);
    browser.wait_for_screen("the lesson picker", |screen| screen.contains(PICKER));
    let log = server.log();
    assert!(log.contains("sign-in refused: wrong join code"), "{log}");

    let opened = open_the_first_lesson(&browser);
    assert!(
        opened.contains(FIRST_LESSON) || opened.contains("The cat sleeps"),
        "{opened}"
    );
    browser.press("n");
    browser.wait_for_screen("the next step", |screen| {
        top_line(screen).contains("· Projection")
    });
    browser.press("p");
    browser.wait_for_screen("the step before", |screen| {
        top_line(screen).contains("· Embedding")
    });

    // The README's picture of the browser seat is the softmax step, taken again on request.
    browser.press("nnnn");
    browser.wait_for_screen("the softmax step", |screen| {
        top_line(screen).contains("· Softmax")
    });
    let shot = browser.screenshot();
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    if std::env::var_os("ATTN_UPDATE_SCREENSHOT").is_some() {
        std::fs::write("docs/images/browser-seat.png", &shot).unwrap();
    }
    let log = server.log();
    assert!(log.contains("tutor started in a browser"), "{log}");
}

#[test]
fn a_presenters_step_change_reaches_a_student_following_in_a_browser() {
    if !browser::installed("a_presenters_step_change_reaches_a_browser") {
        return;
    }
    let mut server = Server::present(&["--web", "127.0.0.1:0"]);
    let browser = Browser::start();
    // The projected screen names both ways in.
    let page = server.page();
    let on_screen = server.presenter().wait_for(
        "both ways in on the status line",
        // The status line wraps where it will (the host key follows the ways in).
        |text| {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            words.contains("ssh -p ") && words.contains(&format!("or open {page}"))
        },
        common::pty::PATIENCE,
    );
    // On loopback, the presenter is told the room cannot join, and how it would.
    let words = on_screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("Presenting: this machine only"),
        "{on_screen}"
    );
    assert!(words.contains("let the room join"), "{on_screen}");
    browser.open(&server);
    browser.join("grace", "");
    browser.wait_for_screen("the following badge", |screen| screen.contains("following"));
    wait_for_status(server.presenter(), "the student counted", "1 following");

    server.presenter().press("\r");
    server.presenter().wait_for_step("Embedding");
    browser.wait_for_screen("the presenter's lesson", |screen| {
        top_line(screen).contains("· Embedding")
    });
    server.presenter().press("n");
    server.presenter().wait_for_step("Projection");
    browser.wait_for_screen("the presenter's step", |screen| {
        top_line(screen).contains("· Projection")
    });
    // The student's own n does not move a following screen.
    browser.press("n");
    browser.wait_for_screen("why n does nothing", |screen| {
        screen.contains("f goes free")
    });
    assert!(top_line(&browser.screen()).contains("· Projection"));
}

#[test]
fn a_long_paste_keeps_the_browser_seat_open() {
    if !browser::installed("a_long_paste_keeps_the_browser_seat_open") {
        return;
    }
    let (_server, browser) = an_open_class_in_a_browser();
    // More than the server takes in one message (64 KiB).
    browser.paste(&"x".repeat(200 * 1024));
    open_the_first_lesson(&browser);
}

#[test]
fn ctrl_v_pastes_into_the_tutor_as_in_any_page() {
    if !browser::installed("ctrl_v_pastes_into_the_tutor") {
        return;
    }
    let (_server, browser) = an_open_class_in_a_browser();
    open_the_first_lesson(&browser);
    browser.copy_to_clipboard("2.5");
    browser.press("e");
    browser.press_control('v');
    browser.press("\u{E007}"); // Enter
    browser.wait_for_screen("the pasted number in the cell", |screen| {
        screen.contains("is now 2.5")
    });
}

#[test]
fn ctrl_c_on_selected_text_copies_it_and_leaves_the_tutor_running() {
    if !browser::installed("ctrl_c_on_selected_text_copies_it") {
        return;
    }
    let (server, browser) = an_open_class_in_a_browser();
    let copied = browser.select_and_copy();
    assert!(copied.contains("choose a lesson"), "copied {copied:?}");
    // The tutor did not take the Ctrl+C as a key: the session goes on.
    open_the_first_lesson(&browser);
    assert!(
        !server.log().contains("browser seat closed"),
        "{}",
        server.log()
    );
}

#[test]
fn a_small_window_gets_a_smaller_font_and_still_the_whole_tutor() {
    if !browser::installed("a_small_window_gets_a_smaller_font") {
        return;
    }
    let server = Server::start(&["--open", "--web", "127.0.0.1:0"]);
    let browser = Browser::start();
    // About a tablet held upright: 80 columns at the usual font would not fit.
    browser.resize(620, 700);
    browser.open(&server);
    browser.join("ada", "");
    let screen = browser.wait_for_screen("the lesson picker", |screen| screen.contains(PICKER));
    assert!(!screen.contains("Make the terminal at least"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|line| line.contains("choose ↑↓") || line.contains("Enter open")),
        "{screen}"
    );
}

#[test]
fn a_screen_too_small_even_in_the_smallest_type_is_told_what_to_do() {
    if !browser::installed("a_screen_too_small_is_told_what_to_do") {
        return;
    }
    let (_server, browser) = an_open_class_in_a_browser();
    let note = || browser.text_of("#narrow");
    assert_eq!(note(), "", "a large window needs no note");
    // A phone held upright.
    browser.resize(320, 560);
    browser.wait_for(
        "the note",
        |browser| browser.text_of("#narrow"),
        |text| text.contains("turn it sideways"),
    );
    browser.resize(1000, 640);
    browser.wait_for(
        "the note gone",
        |browser| browser.text_of("#narrow"),
        str::is_empty,
    );
}

#[test]
fn the_presenter_sees_the_host_keys_fingerprint_on_the_status_line() {
    let mut server = Server::present(&[]);
    // The banner printed it before the tutor took the screen; the status line says it again.
    let on_screen = server.presenter().wait_for(
        "the host key on the status line",
        |text| {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            words.contains("; host key SHA256:")
        },
        common::pty::PATIENCE,
    );
    let words = on_screen.split_whitespace().collect::<Vec<_>>().join(" ");
    let fingerprint = words
        .split("host key ")
        .nth(1)
        .and_then(|rest| rest.split([';', ' ']).next())
        .unwrap_or_default();
    // SHA256: and 43 characters of base64, whole.
    assert_eq!(fingerprint.len(), "SHA256:".len() + 43, "{on_screen}");
}

#[test]
fn a_phone_held_sideways_is_not_told_to_turn_sideways() {
    if !browser::installed("a_phone_held_sideways_is_not_told_to_turn_sideways") {
        return;
    }
    let server = Server::start(&["--open", "--web", "127.0.0.1:0"]);
    let browser = Browser::start();
    // A phone held sideways, 844 × 390: the whole tutor in a smaller type.
    browser.resize_page(844, 390);
    browser.open(&server);
    browser.join("ada", "");
    let screen = browser.wait_for_screen("the lesson picker", |screen| screen.contains(PICKER));
    assert!(!screen.contains("Make the terminal at least"), "{screen}");
    assert_eq!(browser.text_of("#narrow"), "", "{screen}");
    // A window of 844 × 390 with the browser's bars in it leaves too few rows even in the
    // smallest type: the note says so, and does not say to turn a screen already sideways.
    browser.resize(844, 390);
    let note = browser.wait_for(
        "the note",
        |browser| browser.text_of("#narrow"),
        |text| !text.is_empty(),
    );
    assert!(!note.contains("sideways"), "{note:?}");
    assert!(note.contains("use a larger screen or window"), "{note:?}");
}
