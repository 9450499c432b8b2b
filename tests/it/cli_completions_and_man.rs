//! `attn-tutor completions SHELL` and `attn-tutor man`: scripts and the man page on stdout.

use crate::common;
use common::*;

use predicates::prelude::*;
use tempfile::TempDir;

const SUBCOMMANDS: [&str; 7] = [
    "list",
    "show",
    "check",
    "new",
    "freeze",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?} failed: {output:?}");
    assert!(
        output.stderr.is_empty(),
        "{args:?} wrote to stderr: {output:?}"
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn assert_completion_script(shell: &str) {
    let script = stdout_of(&["completions", shell]);
    assert!(!script.trim().is_empty(), "empty {shell} script");
    assert!(
        script.contains("attn-tutor"),
        "the {shell} script does not mention attn-tutor:\n{script}"
    );
}

#[test]
fn completions_bash_prints_a_script_for_attn_tutor() {
    assert_completion_script("bash");
}

#[test]
fn completions_zsh_prints_a_script_for_attn_tutor() {
    assert_completion_script("zsh");
}

#[test]
fn completions_fish_prints_a_script_for_attn_tutor() {
    assert_completion_script("fish");
}

#[test]
fn completions_zsh_script_opens_with_its_compdef_line() {
    let script = stdout_of(&["completions", "zsh"]);
    assert_eq!(script.lines().next(), Some("#compdef attn-tutor"));
}

#[test]
fn completions_bash_script_offers_every_subcommand() {
    let script = stdout_of(&["completions", "bash"]);
    for subcommand in SUBCOMMANDS {
        assert!(
            script.split_whitespace().any(|word| word == subcommand),
            "bash completion does not offer {subcommand}"
        );
    }
}

#[test]
fn completions_for_an_unknown_shell_is_a_usage_error_exiting_2() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("tcsh"));
}

#[test]
fn man_prints_roff() {
    let page = stdout_of(&["man"]);
    assert!(
        page.starts_with(".ie") || page.starts_with(".TH"),
        "not roff:\n{}",
        page.lines().take(3).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn man_page_has_a_title_header_for_attn_tutor_in_section_1() {
    let page = stdout_of(&["man"]);
    assert!(
        page.lines()
            .any(|line| line.starts_with(".TH attn-tutor 1")),
        "no .TH line"
    );
}

#[test]
fn man_page_describes_every_subcommand() {
    let page = stdout_of(&["man"]);
    for subcommand in SUBCOMMANDS {
        assert!(
            page.contains(&format!(r"\fB{subcommand}\fR")),
            "the man page does not describe {subcommand}"
        );
    }
}

#[test]
fn man_page_refers_to_no_page_that_is_not_installed() {
    let page = stdout_of(&["man"]);
    assert!(
        !page.contains(r"attn\-tutor\-list"),
        "refers to attn-tutor-list(1)"
    );
}

/// Runs the binary with stdout connected to a pipe whose reading end is already closed, as in
/// `attn-tutor ... | head -0`: every write fails with a broken pipe.
fn run_into_a_closed_pipe(args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let dir = TempDir::new().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_attn-tutor"))
        .args(args)
        .current_dir(dir.path())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn man_into_a_closed_pipe_exits_without_a_panic() {
    let output = run_into_a_closed_pipe(&["man"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn completions_into_a_closed_pipe_exits_without_a_panic() {
    let output = run_into_a_closed_pipe(&["completions", "bash"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// What bash completes after `words` (the last is the word being completed), with the script
/// loaded into a real bash.
fn bash_completes(words: &[&str]) -> Vec<String> {
    let dir = TempDir::new().unwrap();
    let script = dir.path().join("attn-tutor.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    let quoted: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    let line = format!(
        "source '{}'; COMP_WORDS=(attn-tutor {}); COMP_CWORD={}; \
         _attn__tutor attn-tutor '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len(),
        words.last().unwrap(),
        if words.len() >= 2 {
            words[words.len() - 2]
        } else {
            "attn-tutor"
        },
    );
    let output = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &line])
        .current_dir(dir.path())
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_options_and_values_after_a_subcommand() {
    assert_eq!(bash_completes(&["show", "--st"]), ["--step"]);
    assert_eq!(bash_completes(&["show", "--format", "m"]), ["markdown"]);
    assert!(bash_completes(&["sh"]).contains(&"show".to_string()));
}

#[test]
fn man_page_lists_the_keys_files_environment_and_exit_status() {
    let page = stdout_of(&["man"]);
    for section in [
        ".SH KEYS",
        ".SH FILES",
        ".SH ENVIRONMENT",
        ".SH EXIT STATUS",
    ] {
        assert!(page.contains(section), "no {section}:\n{page}");
    }
    for word in [
        "progress.toml",
        "ssh_host_ed25519_key",
        "NO_COLOR",
        "COLORTERM",
        "XDG_DATA_HOME",
        "re-roll a generated matrix",
        "edit; a computed cell: go to its first operand",
        "online softmax: larger, smaller tiles",
    ] {
        assert!(page.contains(word), "no {word}:\n{page}");
    }
}
