//! The tests' own data: every attn-tutor a test starts keeps its practice progress in a scratch
//! folder of its own, whatever `XDG_DATA_HOME` says, so `cargo test` never reads or writes the
//! user's progress and parallel tests never meet each other's.
//!
//! The environment of a running test cannot be changed safely, so the test runs this file's
//! other (ignored) test again as a child process, with `XDG_DATA_HOME` naming a stand-in for the
//! user's data folder.

use crate::common;

use std::path::{Path, PathBuf};

use common::attn_tutor;
use common::pty::PtyChild;
use portable_pty::CommandBuilder;
use tempfile::TempDir;

const INNER: &str =
    "test_data_isolation::with_xdg_data_home_set_the_tutor_and_the_commands_leave_it_alone";

fn untouched(data: &Path) -> bool {
    !data.join("attn-tutor").exists()
}

#[test]
fn tests_never_write_into_the_data_folder_xdg_data_home_names() {
    let users = TempDir::new().unwrap();
    let run = std::process::Command::new(std::env::current_exe().unwrap())
        .args([INNER, "--exact", "--ignored", "--nocapture"])
        .env("XDG_DATA_HOME", users.path())
        .output()
        .expect("the test binary runs again");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.status.success(), "{said}");
    assert!(
        said.contains("1 passed"),
        "the inner test did not run:\n{said}"
    );
    assert!(untouched(users.path()), "a test wrote into the user's data");
}

#[test]
#[ignore = "run by tests_never_write_into_the_data_folder_xdg_data_home_names, with XDG_DATA_HOME set"]
fn with_xdg_data_home_set_the_tutor_and_the_commands_leave_it_alone() {
    let users = PathBuf::from(
        std::env::var_os("XDG_DATA_HOME").expect("run with XDG_DATA_HOME set, as its caller does"),
    );

    // A tutor in a pseudo-terminal: moving on in practice keeps the step to resume at.
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.args(["practice", "identity-2x2"]);
    command.env("TERM", "xterm-256color");
    let mut tutor = PtyChild::spawn(command);
    tutor.wait_for_step("Projection");
    tutor.press("n");
    tutor.wait_for_step("Scores");
    tutor.press("qq");
    tutor.wait_for_exit();
    assert!(
        untouched(&users),
        "the tutor wrote into {}",
        users.display()
    );

    // A command: clearing the progress writes the progress file.
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["progress", "--reset"])
        .assert()
        .success();
    assert!(
        untouched(&users),
        "the command wrote into {}",
        users.display()
    );
}
