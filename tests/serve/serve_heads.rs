//! The classroom over SSH with a lesson of several heads: when the presenter changes the head,
//! a following student's screen changes to it.

use crate::common;

use common::classroom::*;

#[test]
fn a_following_student_sees_the_head_the_presenter_changes_to() {
    if !installed(
        &["ssh"],
        "a_following_student_sees_the_head_the_presenter_changes_to",
    ) {
        return;
    }
    let dir = tempfile::TempDir::new().unwrap();
    std::fs::write(dir.path().join("gqa.toml"), common::GQA).unwrap();
    let folder = dir.path().to_str().unwrap().to_string();
    let (mut server, mut first, _second) = class_of_two(&["--lessons", &folder]);
    // The lesson folder comes after the built-in lessons: End picks it.
    server.presenter().press("\x1b[F");
    server.presenter().press("\r");
    server.presenter().wait_for_step("Embedding");
    server.presenter().press("3");
    server.presenter().wait_for_step("Scores · head 1/4");
    first.wait_for_step("Scores · head 1/4");
    server.presenter().press(">>");
    server
        .presenter()
        .wait_for_step("Scores · head 3/4 · K/V group 2/2");
    first.wait_for_step("Scores · head 3/4 · K/V group 2/2");
}
