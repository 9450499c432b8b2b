//! `attn-tutor check`: validate lessons and compare their printed figures with the exact values.
//! Exit 0 when all is well, 1 when a figure is outside its tolerance, 2 when a lesson is invalid.
//!
//! The large corpus of malformed lessons is tested elsewhere; here only the exit statuses and
//! how the report reads.

use crate::common;
use common::*;

use predicates::prelude::*;
use tempfile::TempDir;

// --- built-in lessons ------------------------------------------------------------------------

#[test]
fn check_without_arguments_checks_every_built_in_and_exits_0() {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir).arg("check").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    for name in BUILT_INS {
        assert!(
            stdout
                .lines()
                .any(|line| line.split_whitespace().next() == Some(name)),
            "no report for {name} in:\n{stdout}"
        );
    }
    assert!(
        stdout.contains(&format!("all {} lessons pass", BUILT_INS.len())),
        "no summary in:\n{stdout}"
    );
}

#[test]
fn check_without_arguments_fails_no_figure() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .assert()
        .stdout(predicate::str::contains("FAIL").not())
        .stdout(predicate::str::contains("outside tolerance").not());
}

#[test]
fn check_names_the_drifting_printed_weight_of_identity_2x2() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["check", "identity-2x2"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("weights[x1, x1] printed 0.6699"));
}

#[test]
fn check_gives_the_exact_value_and_the_deviation_of_a_drifting_figure() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["check", "identity-2x2"])
        .assert()
        .stdout(predicate::str::contains(
            "drift: weights[x1, x1] printed 0.6699, exact 0.6697615 (0.6698 to 4 decimals), off by 0.000138",
        ));
}

#[test]
fn check_of_a_lesson_without_printed_figures_says_there_is_nothing_to_compare() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["check", "random-qkv"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "valid; no printed figures to compare",
        ));
}

#[test]
fn check_of_one_named_built_in_reports_only_that_lesson() {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .args(["check", "cat-sleeps"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    for name in BUILT_INS.iter().filter(|name| **name != "cat-sleeps") {
        assert!(
            !stdout
                .lines()
                .any(|line| line.split_whitespace().next() == Some(*name)),
            "{name} reported in:\n{stdout}"
        );
    }
}

// --- lesson files ----------------------------------------------------------------------------

#[test]
fn check_exits_0_for_a_lesson_file_whose_figures_match() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("direct-qkv.toml"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains("the lesson passes"));
}

#[test]
fn check_exits_1_when_a_printed_figure_is_outside_tolerance() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("figure-outside-tolerance.toml"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("outside tolerance"));
}

#[test]
fn check_names_the_cell_outside_tolerance_and_its_printed_figure() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("figure-outside-tolerance.toml"))
        .assert()
        .stdout(predicate::str::contains(
            "outside tolerance: weights[x1, x1] printed 0.7500",
        ))
        .stdout(predicate::str::contains("FAIL  weights"));
}

#[test]
fn check_does_not_flag_the_correct_row_of_a_failing_figure() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("figure-outside-tolerance.toml"))
        .assert()
        .stdout(predicate::str::contains("weights[x2, ").not());
}

// --- heads ----------------------------------------------------------------------------------

#[test]
fn check_compares_each_heads_printed_figures_with_that_heads_matrices() {
    // Figures of head 1 and head 2 (different weights), concat and the final output, computed by
    // tests/fixtures/two-heads-reference.py.
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .arg("check")
        .arg(fixture("two-heads-figures.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    for line in [
        "(3 tokens × 4 → d_k 2, 2 heads sharing 1 K/V group)",
        "ok    head 1's weights",
        "ok    head 2's weights",
        "ok    head 2's output",
        "ok    concat",
        "ok    output",
    ] {
        assert!(stdout.contains(line), "no `{line}` in:\n{stdout}");
    }
}

#[test]
fn check_names_the_head_whose_printed_figure_is_off() {
    // Head 1's first row of weights printed as head 2's: right for head 1, wrong for head 2.
    let dir = TempDir::new().unwrap();
    let text = std::fs::read_to_string(fixture("two-heads-figures.toml"))
        .unwrap()
        .replace(
            "the = [0.2840, 0.1400, 0.5760]",
            "the = [0.4856, 0.0287, 0.4856]",
        );
    let path = dir.path().join("off.toml");
    std::fs::write(&path, text).unwrap();
    let output = attn_tutor(&dir).arg("check").arg(&path).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  head 2's weights"), "{stdout}");
    assert!(
        stdout.contains("outside tolerance: weights⁽²⁾[the, the] printed 0.4856"),
        "{stdout}"
    );
    assert!(stdout.contains("ok    head 1's weights"), "{stdout}");
}

#[test]
fn check_of_a_one_head_lesson_with_its_figures_under_head_1_passes() {
    let dir = TempDir::new().unwrap();
    let text = std::fs::read_to_string(fixture("direct-qkv.toml")).unwrap();
    let text = text.replacen("[expected]", "[expected.heads.1]", 1);
    let path = dir.path().join("one-head.toml");
    std::fs::write(&path, text).unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("the lesson passes"))
        // One head is not named.
        .stdout(predicate::str::contains("head 1").not());
}

#[test]
fn check_exits_1_when_a_figure_is_off_even_if_other_lessons_pass() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["check", "cat-sleeps"])
        .arg(fixture("figure-outside-tolerance.toml"))
        .assert()
        .code(1);
}

#[test]
fn check_exits_2_for_a_lesson_with_the_wrong_number_of_embedding_rows() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("invalid-token-count.toml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`embeddings` has 2 rows, but there are 3 tokens",
        ))
        .stderr(predicate::str::contains("invalid-token-count.toml:5:"));
}

#[test]
fn check_exits_2_for_a_file_that_is_not_toml() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("invalid-toml-syntax.toml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unclosed array: this `[` is never closed",
        ));
}

#[test]
fn check_exits_2_for_a_missing_file() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["check", "missing.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read missing.toml"));
}

#[test]
fn check_of_a_valid_and_an_invalid_lesson_exits_2_and_still_reports_the_valid_one() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["check", "cat-sleeps"])
        .arg(fixture("invalid-token-count.toml"))
        .assert()
        .code(2)
        .stdout(predicate::str::contains("cat-sleeps  The cat sleeps"))
        .stdout(predicate::str::contains("ok    weights"))
        .stdout(predicate::str::contains("1 of 2 lessons is invalid"))
        .stderr(predicate::str::contains("invalid-token-count.toml"));
}

#[test]
fn check_exits_2_rather_than_1_when_one_lesson_is_invalid_and_another_has_a_figure_off() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("figure-outside-tolerance.toml"))
        .arg(fixture("invalid-token-count.toml"))
        .assert()
        .code(2);
}

#[test]
fn check_prefers_an_existing_file_over_a_built_in_of_the_same_name() {
    let dir = TempDir::new().unwrap();
    std::fs::copy(
        fixture("figure-outside-tolerance.toml"),
        dir.path().join("cat-sleeps"),
    )
    .unwrap();
    attn_tutor(&dir)
        .args(["check", "cat-sleeps"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "Fixture: a printed figure outside tolerance",
        ));
}

// --- color -----------------------------------------------------------------------------------

#[test]
fn check_diagnostics_have_no_escape_byte_with_the_no_color_flag() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("invalid-token-count.toml"))
        .arg("--no-color")
        .assert()
        .code(2)
        .stderr(predicate::function(|err: &[u8]| !err.contains(&ESC)));
}

#[test]
fn check_diagnostics_have_no_escape_byte_with_no_color_set_in_the_environment() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(fixture("invalid-token-count.toml"))
        .env("NO_COLOR", "1")
        .assert()
        .code(2)
        .stderr(predicate::function(|err: &[u8]| !err.contains(&ESC)));
}

#[test]
fn check_diagnostics_on_a_terminal_are_colored_by_default() {
    let path = fixture("invalid-token-count.toml");
    let Some((code, written)) = run_on_terminal(&["check", path.to_str().unwrap()], None) else {
        eprintln!("skipped: util-linux `script` is not available");
        return;
    };
    assert_eq!(code, 2);
    assert!(
        written.contains(&ESC),
        "no color on a terminal: {}",
        String::from_utf8_lossy(&written)
    );
}

#[test]
fn check_diagnostics_on_a_terminal_have_no_escape_byte_with_the_no_color_flag() {
    let path = fixture("invalid-token-count.toml");
    let Some((code, written)) =
        run_on_terminal(&["check", path.to_str().unwrap(), "--no-color"], None)
    else {
        eprintln!("skipped: util-linux `script` is not available");
        return;
    };
    assert_eq!(code, 2);
    assert!(
        !written.contains(&ESC),
        "{:?}",
        String::from_utf8_lossy(&written)
    );
}

#[test]
fn check_diagnostics_on_a_terminal_have_no_escape_byte_with_no_color_set_in_the_environment() {
    let path = fixture("invalid-token-count.toml");
    let Some((code, written)) = run_on_terminal(&["check", path.to_str().unwrap()], Some("1"))
    else {
        eprintln!("skipped: util-linux `script` is not available");
        return;
    };
    assert_eq!(code, 2);
    assert!(
        !written.contains(&ESC),
        "{:?}",
        String::from_utf8_lossy(&written)
    );
}

#[test]
fn a_figure_printed_to_one_decimal_is_said_in_the_singular() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("one.toml"),
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nq = [[1, 0], [0, 1]]\n\
         k = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n[expected]\nweights = [[0.7, 0.3], [0.3, 0.7]]\n",
    )
    .unwrap();
    attn_tutor(&dir)
        .args(["check", "one.toml"])
        .assert()
        .stdout(predicate::str::contains("(0.7 to 1 decimal)"));
}

// --- the default tolerance accepts every correct rounding (issue 12, item 10) ----------------

/// A one-or-two-token lesson whose output is `exact`, with `printed` as the document's figure.
fn lesson_printing(dir: &TempDir, v: &str, printed: &str, decimals: usize) -> std::path::PathBuf {
    let rows = v.split(';').count();
    let tokens: Vec<String> = (1..=rows).map(|i| format!("\"t{i}\"")).collect();
    let zeros: Vec<&str> = (0..rows).map(|_| "[0]").collect();
    let v_rows: Vec<String> = v.split(';').map(|cell| format!("[{cell}]")).collect();
    let path = dir.path().join("rounding.toml");
    std::fs::write(
        &path,
        format!(
            "format = 1\ntitle = \"Rounding\"\ntokens = [{}]\nq = [{}]\nk = [{}]\nv = [{}]\n\
             decimals = {decimals}\n\n[expected]\noutput = [[{printed}]{}]\n",
            tokens.join(", "),
            zeros.join(", "),
            zeros.join(", "),
            v_rows.join(", "),
            format!(", [{printed}]").repeat(rows - 1),
        ),
    )
    .unwrap();
    path
}

#[test]
fn check_accepts_an_exact_half_rounded_down_to_even() {
    let dir = TempDir::new().unwrap();
    // One token: the output is v itself, exactly 0.625; 0.62 rounds it half to even.
    let lesson = lesson_printing(&dir, "0.625", "0.62", 2);
    let output = attn_tutor(&dir).arg("check").arg(&lesson).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("outside tolerance"), "{stdout}");
    assert!(!stdout.contains("drift"), "{stdout}");
}

#[test]
fn check_accepts_an_exact_half_rounded_up() {
    let dir = TempDir::new().unwrap();
    let lesson = lesson_printing(&dir, "0.625", "0.63", 2);
    let output = attn_tutor(&dir).arg("check").arg(&lesson).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("drift"), "{stdout}");
}

#[test]
fn check_still_fails_a_figure_one_unit_off() {
    let dir = TempDir::new().unwrap();
    let lesson = lesson_printing(&dir, "0.625", "0.61", 2);
    attn_tutor(&dir)
        .arg("check")
        .arg(&lesson)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("outside tolerance"));
}

#[test]
fn check_counts_the_digits_of_a_figure_in_scientific_notation() {
    let dir = TempDir::new().unwrap();
    // 6.3379e-02 is 0.063379 to 6 decimals: exactly the value, so no drift.
    let lesson = lesson_printing(&dir, "0.063379", "6.3379e-02", 3);
    let output = attn_tutor(&dir).arg("check").arg(&lesson).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("drift"), "{stdout}");
    // 6.3378e-02 is a correctly written figure one unit off in its last digit: named as drift.
    let lesson = lesson_printing(&dir, "0.063379", "6.3378e-02", 3);
    let output = attn_tutor(&dir).arg("check").arg(&lesson).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("drift"), "{stdout}");
    assert!(stdout.contains("5 significant digits"), "{stdout}");
}

#[test]
fn check_writes_a_tiny_deviation_in_scientific_notation_not_as_0() {
    let dir = TempDir::new().unwrap();
    // Two tokens with equal scores: output = 0.5 × 0.1 + 0.5 × 0.2 = 0.15000000000000002.
    let lesson = lesson_printing(&dir, "0.1;0.2", "0.15", 2);
    let output = attn_tutor(&dir).arg("check").arg(&lesson).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains("largest deviation 0 "), "{stdout}");
    assert!(stdout.contains("largest deviation 2.8e-17"), "{stdout}");
}

#[test]
fn check_says_decimal_in_the_singular_for_one() {
    let dir = TempDir::new().unwrap();
    let lesson = lesson_printing(&dir, "0.25", "0.4", 1);
    let output = attn_tutor(&dir).arg("check").arg(&lesson).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("to 1 decimal)"), "{stdout}");
    assert!(!stdout.contains("1 decimals"), "{stdout}");
}

// --- the documents' own slips (issue 12, item 13) ---------------------------------------------

#[test]
fn check_names_the_slips_of_every_source_document() {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir).arg("check").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let report = |name: &str| -> String {
        let start = stdout
            .find(&format!("{name}  "))
            .unwrap_or_else(|| panic!("no report for {name}"));
        let rest = &stdout[start..];
        let end = rest[1..].find("\n\n").map_or(rest.len(), |end| end + 1);
        let next = BUILT_INS
            .iter()
            .filter(|other| **other != name)
            .filter_map(|other| rest.find(&format!("\n{other}  ")))
            .min()
            .unwrap_or(end);
        rest[..next.min(end)].to_string()
    };
    for (lesson, slip) in [
        ("cat-sat-mat", "0/√1.4142"),
        ("random-qkv", "softmax(dkQKT)V"),
        ("random-qkv", "Scale: d_k"),
        ("identity-2x2", "Equation 25"),
        ("numpy-walkthrough", "Final Function Output"),
    ] {
        let text = report(lesson);
        assert!(
            text.lines()
                .any(|line| line.trim_start().starts_with("slip") && line.contains(slip)),
            "check does not name `{slip}` for {lesson}:\n{text}"
        );
    }
}

#[test]
fn a_lesson_can_list_its_documents_slips_and_check_prints_them_escaped() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("slips.toml");
    std::fs::write(
        &path,
        "format = 1\ntitle = \"Slips\"\ntokens = [\"a\"]\nq = [[1]]\nk = [[1]]\nv = [[1]]\n\n\
         [expected]\nslips = [\"Figure 2 writes QK for QKᵀ\"]\n",
    )
    .unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("slip  Figure 2 writes QK for QKᵀ"));
    std::fs::write(
        &path,
        "format = 1\ntitle = \"Slips\"\ntokens = [\"a\"]\nq = [[1]]\nk = [[1]]\nv = [[1]]\n\n\
         [expected]\nslips = [1]\n",
    )
    .unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`slips` entry 1"));
}

#[test]
fn check_notes_a_narration_that_quotes_numbers_the_lesson_does_not_have() {
    let dir = TempDir::new().unwrap();
    let lesson = "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nq = [[1, 0], [0, 1]]\n\
                  k = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n[narration]\n\
                  softmax = \"Row a gives a weight of 0.731 to a and 0.555 to b.\"\n";
    std::fs::write(dir.path().join("quotes.toml"), lesson).unwrap();
    attn_tutor(&dir)
        .args(["check", "quotes.toml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "note  narration for softmax quotes 0.555; it is no value of this lesson",
        ))
        .stdout(predicate::str::contains("0.731").not());
}

#[test]
fn no_built_in_narration_quotes_a_number_its_lesson_does_not_have() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("check")
        .assert()
        .stdout(predicate::str::contains("note  narration").not());
}

#[test]
fn the_heads_example_of_the_lesson_format_reference_is_real_check_output() {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .args(["--no-color", "check"])
        .arg(fixture("two-heads-figures.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let reference = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/lesson-format.md"
    ))
    .unwrap();
    let shown = format!(
        "$ attn-tutor check two-heads-figures.toml\n{}\n```",
        stdout.trim_end()
    );
    assert!(
        reference.contains(&shown),
        "docs/lesson-format.md does not show:\n{shown}"
    );
}

// --- every problem at once -------------------------------------------------------------------

/// A 3-head lesson with problems that do not depend on one another: two misspelt keys, a short
/// row of embeddings, kv_heads that does not divide heads, generation without a causal mask,
/// and RoPE on heads of odd d_k. `kv_heads` is written as `kv_head`.
const BROKEN_THREE_HEADS: &str = r#"format = 2
title = "Three heads"
tokens = ["a", "b", "c"]
embedings = [
  [1, 0, 0],
  [0, 1, 0],
  [0, 0],
]
heads = 3
kv_head = 2
decode = true
positions = "rope"
w_q = { random = "normal", seed = 1, shape = [3, 3] }
w_k = { random = "normal", seed = 2, shape = [3, 3] }
w_v = { random = "normal", seed = 3, shape = [3, 3] }
w_o = { random = "normal", seed = 4, shape = [2, 3] }
"#;

/// The errors `check` says about `text`, one line each.
fn errors_of(text: &str) -> Vec<String> {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("broken.toml"), text).unwrap();
    let output = attn_tutor(&dir)
        .args(["check", "broken.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    String::from_utf8(output.stderr)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("error: "))
        .map(str::to_string)
        .collect()
}

fn assert_told(errors: &[String], wanted: &[&str]) {
    for want in wanted {
        assert!(
            errors.iter().any(|error| error.contains(want)),
            "`{want}` is not told in the same run as:\n{}",
            errors.join("\n")
        );
    }
}

#[test]
fn check_tells_independent_problems_in_one_run() {
    let errors = errors_of(BROKEN_THREE_HEADS);
    assert_told(
        &errors,
        &[
            "unknown key `embedings`",
            "unknown key `kv_head`",
            // The misspelt keys' values are read as the keys they were meant to be.
            "row 3 of `embeddings` has 2 numbers, but row 1 has 3",
            "kv_heads = 2 does not divide heads = 3",
            "generation needs `mask = \"causal\"`",
            // RoPE needs only W_q's width and the count of heads.
            "one head's d_k is 1, an odd number",
        ],
    );
    assert!(
        !errors.iter().any(|error| error.contains("missing")),
        "a misspelt key is no missing key:\n{}",
        errors.join("\n")
    );
    // With a kv_heads that divides heads, W_o's rows can be measured: beside a matrix that
    // could not be read, and beside RoPE's odd d_k.
    let errors = errors_of(&BROKEN_THREE_HEADS.replace("kv_head = 2", "kv_heads = 3"));
    assert_told(
        &errors,
        &[
            "row 3 of `embeddings` has 2 numbers, but row 1 has 3",
            "generation needs `mask = \"causal\"`",
            "one head's d_k is 1, an odd number",
            "`w_o` has 2 rows, but the 3 heads' outputs side by side are 3 wide (3 × d_v 1)",
        ],
    );
}

#[test]
fn a_misspelt_key_is_not_read_over_the_key_itself() {
    // Both written: the right one is read, the misspelt one is only said to be unknown.
    let errors = errors_of(
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\ntokns = [\"a\"]\n\
         q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n",
    );
    assert_eq!(
        errors,
        ["error: unknown key `tokns`"],
        "only the misspelling is told"
    );
}
