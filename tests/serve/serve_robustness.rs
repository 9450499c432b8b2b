//! The classroom holds up in a real room: absurd window sizes, a crowd of connections that
//! never sign in, a student whose client is killed, and one whose client stops reading do not
//! disturb anyone else.

use crate::common;

use std::net::TcpStream;
use std::time::Instant;

use common::classroom::*;
use common::pty::top_line;

#[test]
fn a_window_of_65535_by_65535_and_one_of_0_by_0_leave_the_server_serving() {
    if !installed(&["ssh"], "a_window_of_65535_by_65535_and_one_of_0_by_0") {
        return;
    }
    let mut server = Server::start(&["--open"]);
    let mut student = server.student("student", &Login::Open);
    wait_for_the_picker(&mut student);

    student.resize(65535, 65535);
    student.resize(0, 0);
    student.resize(80, 24);
    // Back at 80×24 the picker is drawn whole again, and keys still work.
    wait_for_the_picker(&mut student);
    student.press("\r");
    student.wait_for_step("Embedding");

    server.assert_still_serving();
    let mut another = server.student("another", &Login::Open);
    wait_for_the_picker(&mut another);
    assert!(!server.log().contains("panicked"), "{}", server.log());
}

#[test]
fn two_hundred_silent_connections_do_not_keep_a_student_out_and_are_evicted_or_dropped_at_the_deadline()
 {
    if !installed(&["ssh"], "two_hundred_silent_connections") {
        return;
    }
    let mut server = Server::start(&["--open", "--login-seconds", "2"]);
    let started = Instant::now();
    let silent: Vec<TcpStream> = (0..200)
        .map(|_| silent_connection("127.0.0.3", server.port))
        .collect();

    let mut student = server.student_from("127.0.0.2", "student", &Login::Open);
    wait_for_the_picker(&mut student);

    let closed = silent
        .into_iter()
        .filter(|c| closed_by_the_server(c.try_clone().unwrap()))
        .count();
    assert_eq!(closed, 200, "every silent connection is closed");
    let counts = |log: &str| {
        (
            count_events(log, "evicted: the oldest connection of this address"),
            count_events(
                log,
                "dropped: no SSH handshake within the handshake deadline",
            ),
        )
    };
    let log = server.wait_for_log("every silent connection accounted for", |log| {
        counts(log).0 + counts(log).1 >= 200
    });
    let (evicted, dropped) = counts(&log);
    assert_eq!(
        (evicted, dropped),
        (200 - 64, 64),
        "64 places (the default per address): each newcomer evicts the oldest silent one, and \
         the last 64 are dropped at the deadline:\n{log}"
    );
    assert!(
        !log.contains("too many connections from this address"),
        "{log}"
    );
    assert!(started.elapsed().as_secs_f64() >= 2.0);

    // The student who came in meanwhile is still there, and still answered.
    student.press("\r");
    student.wait_for_step("Embedding");
    server.assert_still_serving();
}

#[test]
fn a_student_whose_client_is_killed_leaves_the_others_and_the_count_goes_back() {
    if !installed(&["ssh"], "a_student_whose_client_is_killed") {
        return;
    }
    let (mut server, killed, mut other) = class_of_two(&[]);
    killed.signal("KILL");
    wait_for_status(
        server.presenter(),
        "the count back to one",
        "1 student · 1 following",
    );
    server.presenter().press("\r");
    other.wait_for_step("Embedding");
    server.wait_for_log("the server's count of sessions back at 1", |log| {
        log.lines()
            .any(|line| line.contains("connection closed") && line.contains("sessions=1"))
    });
}

#[test]
fn a_student_whose_client_stops_reading_does_not_hold_up_the_class_and_catches_up() {
    if !installed(&["ssh"], "a_student_whose_client_stops_reading") {
        return;
    }
    let (mut server, mut stopped, mut other) = class_of_two(&[]);
    server.presenter().press("\r");
    stopped.wait_for_step("Embedding");
    stopped.signal("STOP");

    // Hundreds of full repaints the stopped client does not read, while the other follows.
    for _ in 0..300 {
        server.presenter().press("np");
    }
    server.presenter().press("5");
    server.presenter().wait_for_step("Softmax");
    other.wait_for_step("Softmax");

    // Woken up, the stopped student reads what was held for them and ends on the latest
    // screen.
    stopped.signal("CONT");
    let text = stopped.wait_for_step("Softmax");
    assert!(top_line(&text).contains(FIRST_LESSON), "{text}");
}

#[test]
fn a_paste_longer_than_the_input_kept_waiting_leaves_the_keys_after_it_working() {
    if !installed(&["ssh"], "a_paste_longer_than_the_input_kept_waiting") {
        return;
    }
    let mut server = Server::start(&["--open"]);
    let mut student = server.student("student", &Login::Open);
    wait_for_the_picker(&mut student);
    // 200 KiB in one bracketed paste: more than the 64 KiB the server keeps waiting.
    let paste = format!("\x1b[200~{}\x1b[201~", "x".repeat(200 * 1024));
    student.press(&paste);
    student.press("\r");
    student.wait_for_step("Embedding");
    server.assert_still_serving();
}
