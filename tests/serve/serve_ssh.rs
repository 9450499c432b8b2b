//! End to end: `attn-tutor serve` on 127.0.0.1, and students connecting with the real OpenSSH
//! client (`ssh -tt` in a pseudo-terminal, read back through a vt100 screen).

use crate::common;

use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::thread;
use std::time::Instant;

use common::classroom::*;
use common::pty::{PATIENCE, POLL, top_line};
use tempfile::TempDir;

#[test]
fn a_student_picks_a_lesson_steps_through_it_and_quits_cleanly() {
    if !installed(
        &["ssh"],
        "a_student_picks_a_lesson_steps_through_it_and_quits_cleanly",
    ) {
        return;
    }
    let server = Server::start(&["--open"]);
    let mut student = server.student("student", &Login::Open);

    wait_for_the_picker(&mut student);
    student.press("\r");
    student.wait_for(
        "cat-sleeps at its first step",
        |text| {
            top_line(text).contains(FIRST_LESSON) && top_line(text).contains("Step 1/7 · Embedding")
        },
        PATIENCE,
    );
    student.press("n");
    student.wait_for(
        "the next step",
        |text| top_line(text).contains("Step 2/7 · Projection"),
        PATIENCE,
    );

    student.press("q");
    wait_for_the_picker(&mut student);
    quit_from_the_picker(&mut student);
    assert!(
        server.log().contains("left"),
        "the server logs that the student left:\n{}",
        server.log()
    );
}

#[test]
fn two_students_at_once_each_have_their_own_tutor() {
    if !installed(&["ssh"], "two_students_at_once_each_have_their_own_tutor") {
        return;
    }
    let server = Server::start(&["--open"]);
    let mut alice = server.student("alice", &Login::Open);
    let mut bob = server.student("bob", &Login::Open);
    wait_for_the_picker(&mut alice);
    wait_for_the_picker(&mut bob);

    alice.press("\r");
    alice.wait_for_step("Embedding");
    alice.press("n");
    alice.wait_for_step("Projection");

    // Bob's tutor did not move with Alice's: he is still on the picker, and Enter opens the
    // lesson for him at its first step.
    let bobs = bob.screen_text();
    assert!(
        top_line(&bobs).contains(PICKER),
        "Bob's screen changed with Alice's keys:\n{bobs}"
    );
    bob.press("\r");
    bob.wait_for(
        "Bob's lesson at its first step",
        |text| top_line(text).contains("Step 1/7 · Embedding"),
        PATIENCE,
    );
    let alices = alice.screen_text();
    assert!(
        top_line(&alices).contains("Step 2/7 · Projection"),
        "Alice's screen changed with Bob's keys:\n{alices}"
    );

    // Alice leaving ends only her session: Bob goes on.
    alice.press("q");
    wait_for_the_picker(&mut alice);
    quit_from_the_picker(&mut alice);
    bob.press("n");
    bob.wait_for(
        "Bob's next step after Alice left",
        |text| top_line(text).contains("Step 2/7 · Projection"),
        PATIENCE,
    );
    bob.press("q");
    wait_for_the_picker(&mut bob);
    quit_from_the_picker(&mut bob);
}

#[test]
fn a_session_without_a_terminal_is_told_to_connect_with_ssh_t() {
    if !installed(
        &["ssh"],
        "a_session_without_a_terminal_is_told_to_connect_with_ssh_t",
    ) {
        return;
    }
    let mut server = Server::start(&["--open"]);
    let ssh = finish(server.ssh("student", &Login::Open, &[], &[]));
    assert!(
        ssh.stdout.contains("attn-tutor needs a terminal"),
        "stdout: {:?}\nstderr: {:?}",
        ssh.stdout,
        ssh.stderr
    );
    assert_eq!(ssh.status.code(), Some(1), "stderr: {}", ssh.stderr);
    server.assert_still_serving();
}

#[test]
fn a_student_past_the_class_size_is_told_in_words_that_the_class_is_full() {
    if !installed(&["ssh"], "a_student_past_the_class_size_is_told") {
        return;
    }
    let mut server = Server::start(&["--open", "--max-sessions", "1"]);
    let mut first = server.student("ada", &Login::Open);
    wait_for_the_picker(&mut first);
    let mut second = server.student("grace", &Login::Open);
    second.wait_for(
        "the class-full message",
        |text| text.contains("the class is full (1 student at once); ask your teacher"),
        common::pty::PATIENCE,
    );
    assert!(!second.wait_for_exit().success());
    // The one in class goes on.
    first.press("\r");
    first.wait_for_step("Embedding");
    server.assert_still_serving();
}

#[test]
fn commands_are_refused() {
    if !installed(&["ssh"], "commands_are_refused") {
        return;
    }
    assert_refused(&[], &["ls", "/"], "exec request failed");
}

#[test]
fn the_sftp_subsystem_is_refused() {
    if !installed(&["ssh"], "the_sftp_subsystem_is_refused") {
        return;
    }
    assert_refused(&["-s"], &["sftp"], "subsystem request failed");
}

/// Signing in with `login` is refused ("Permission denied", exit 255, no session) and the
/// server goes on serving.
fn assert_signin_refused(server: &mut Server, login: &Login) {
    let ssh = finish(server.ssh("student", login, &[], &[]));
    assert!(
        ssh.stderr.contains("Permission denied"),
        "stderr: {:?}",
        ssh.stderr
    );
    assert_eq!(ssh.status.code(), Some(255), "stderr: {}", ssh.stderr);
    assert!(
        !ssh.stdout.contains("attn-tutor"),
        "a refused sign-in got a session: {:?}",
        ssh.stdout
    );
    server.assert_still_serving();
}

/// Runs ssh with `options` and `command` against an open server and checks that it is refused
/// with `message`, prints nothing, exits 255, and leaves the server serving.
fn assert_refused(options: &[&str], command: &[&str], message: &str) {
    let mut server = Server::start(&["--open"]);
    let ssh = finish(server.ssh("student", &Login::Open, options, command));
    assert!(ssh.stderr.contains(message), "stderr: {:?}", ssh.stderr);
    assert_eq!(ssh.status.code(), Some(255), "stderr: {}", ssh.stderr);
    assert_eq!(ssh.stdout, "", "the refused request printed something");
    server.assert_still_serving();
}

#[test]
fn port_forwarding_is_refused() {
    if !installed(&["ssh"], "port_forwarding_is_refused") {
        return;
    }
    let mut server = Server::start(&["--open"]);
    let local = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free local port")
        .port();
    let forward = format!("{local}:127.0.0.1:22");
    let mut ssh = server.ssh(
        "student",
        &Login::Open,
        &["-N", "-L", &forward, "-o", "ExitOnForwardFailure=yes"],
        &[],
    );
    ssh.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut ssh = KillOnDrop(ssh.spawn().expect("ssh starts"));

    // ssh listens on the local port once signed in.
    let deadline = Instant::now() + PATIENCE;
    let mut connection = loop {
        match TcpStream::connect(("127.0.0.1", local)) {
            Ok(connection) => break connection,
            Err(error) => {
                if let Some(status) = ssh.0.try_wait().unwrap() {
                    let mut stderr = String::new();
                    let _ = ssh.0.stderr.take().unwrap().read_to_string(&mut stderr);
                    panic!("ssh -L ended ({status}) before forwarding: {stderr}");
                }
                assert!(
                    Instant::now() < deadline,
                    "ssh did not listen on {local} within {PATIENCE:?}: {error}"
                );
                thread::sleep(POLL);
            }
        }
    };
    connection.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut buffer = [0; 64];
    match connection.read(&mut buffer) {
        Ok(0) => {}
        Err(error)
            if matches!(
                error.kind(),
                ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
            ) => {}
        Ok(read) => panic!(
            "the forwarded connection got {:?} instead of being closed",
            String::from_utf8_lossy(&buffer[..read])
        ),
        Err(error) => {
            panic!("the forwarded connection was not closed within {PATIENCE:?}: {error}")
        }
    }

    // ssh reports the refusal before it closes the local connection.
    let _ = ssh.0.kill();
    let _ = ssh.0.wait();
    let mut stderr = String::new();
    ssh.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("administratively prohibited"),
        "ssh's stderr: {stderr:?}\nthe server's log:\n{}",
        server.log()
    );
    server.assert_still_serving();
}

#[test]
fn a_wrong_join_code_is_refused_and_the_right_one_lets_the_student_in() {
    if !installed(
        &["ssh"],
        "a_wrong_join_code_is_refused_and_the_right_one_lets_the_student_in",
    ) {
        return;
    }
    let secrets = TempDir::new().unwrap();
    let code = secrets.path().join("join-code");
    std::fs::write(&code, "sunflower\n").unwrap();
    let mut server = Server::start(&["--password-file", code.to_str().unwrap()]);

    let wrong = Login::Password(askpass(secrets.path(), "wrong", "sunshine"));
    assert_signin_refused(&mut server, &wrong);

    let right = Login::Password(askpass(secrets.path(), "right", "sunflower"));
    let mut student = server.student("student", &right);
    wait_for_the_picker(&mut student);
    quit_from_the_picker(&mut student);
}

#[test]
fn an_unknown_key_is_refused_and_a_listed_one_lets_the_student_in() {
    if !installed(
        &["ssh", "ssh-keygen"],
        "an_unknown_key_is_refused_and_a_listed_one_lets_the_student_in",
    ) {
        return;
    }
    let keys = TempDir::new().unwrap();
    let listed = keys.path().join("listed");
    let stranger = keys.path().join("stranger");
    new_key(&listed);
    new_key(&stranger);
    let authorized = keys.path().join("authorized_keys");
    std::fs::copy(listed.with_extension("pub"), &authorized).unwrap();
    let mut server = Server::start(&["--authorized-keys", authorized.to_str().unwrap()]);

    assert_signin_refused(&mut server, &Login::Key(stranger));

    let mut student = server.student("student", &Login::Key(listed));
    wait_for_the_picker(&mut student);
    quit_from_the_picker(&mut student);
}

#[test]
fn listening_on_every_address_names_this_machines_addresses_to_join_with() {
    use std::io::BufRead;
    let data = tempfile::TempDir::new().unwrap();
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"))
        .args(["serve", "--open", "--listen", "0.0.0.0:0"])
        .env("XDG_DATA_HOME", data.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(server.stdout.take().unwrap());
    let join = stdout
        .lines()
        .map(Result::unwrap)
        .find(|line| line.starts_with("students connect with:"))
        .expect("the banner says how to join");
    let _ = server.kill();
    let _ = server.wait();
    let reachable: Vec<String> = if_addrs::get_if_addrs()
        .unwrap()
        .iter()
        .map(|interface| interface.ip())
        .filter(|ip| ip.is_ipv4() && !ip.is_loopback() && !ip.to_string().starts_with("169.254."))
        .map(|ip| ip.to_string())
        .collect();
    match reachable.first() {
        Some(address) => assert!(join.ends_with(&format!("NAME@{address}")), "{join}"),
        None => assert!(join.ends_with("NAME@THIS-MACHINE"), "{join}"),
    }
}
