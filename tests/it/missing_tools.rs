//! A test that needs a tool the machine lacks (ssh, script) is skipped on a developer's
//! machine but fails under CI, so a CI run never passes without running it.
//!
//! The environment of a running test cannot be changed safely, so the test runs this file's
//! ignored test again as a child process, with and without `CI` set.

use crate::common;

const INNER: &str = "missing_tools::a_test_meets_a_missing_tool";

fn run_inner(ci: Option<&str>) -> (bool, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args([INNER, "--exact", "--ignored", "--nocapture"]);
    command.env_remove("CI");
    if let Some(ci) = ci {
        command.env("CI", ci);
    }
    let run = command.output().expect("the test binary runs again");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    (run.status.success(), said)
}

#[test]
fn a_missing_tool_skips_a_test_on_a_developers_machine() {
    let (passed, said) = run_inner(None);
    assert!(passed, "{said}");
    assert!(
        said.contains("skipping: `no-such-tool` is not installed"),
        "{said}"
    );
}

#[test]
fn a_missing_tool_fails_a_test_under_ci() {
    let (passed, said) = run_inner(Some("true"));
    assert!(!passed, "{said}");
    assert!(said.contains("under CI this test must run"), "{said}");
}

#[test]
#[ignore = "run by the tests above, with and without CI set"]
fn a_test_meets_a_missing_tool() {
    common::missing_tool("no-such-tool", "no-such-package");
}
