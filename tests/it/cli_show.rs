//! `attn-tutor show`: a lesson's steps as text, Markdown or JSON, with cells explained.

use crate::common;
use common::*;

use predicates::prelude::*;
use serde_json::Value;
use tempfile::TempDir;

const CAT_SAT_MAT_TOKENS: [&str; 6] = ["The", "cat", "sat", "on", "the", "mat"];

/// cat-sat-mat's steps, numbered as the tutor numbers them: it has no mask, so no Masking.
const STEP_HEADINGS: [&str; 7] = [
    "Step 1/7 · Embedding",
    "Step 2/7 · Projection",
    "Step 3/7 · Scores",
    "Step 4/7 · Scaling",
    "Step 5/7 · Softmax",
    "Step 6/7 · Output",
    "Step 7/7 · Online softmax",
];

fn show_json(lesson: &str) -> Value {
    serde_json::from_str(&show(lesson, &["--format", "json"])).expect("show --format json parses")
}

/// A JSON matrix as rows of f64; panics on anything that is not a finite number.
fn numbers(matrix: &Value) -> Vec<Vec<f64>> {
    matrix
        .as_array()
        .expect("a matrix is an array of rows")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("a row is an array")
                .iter()
                .map(|cell| {
                    cell.as_f64()
                        .unwrap_or_else(|| panic!("not a number: {cell}"))
                })
                .collect()
        })
        .collect()
}

/// The lines of the text section whose heading contains `heading`, up to the next section.
fn text_section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|line| !(line.starts_with("== ") && line.contains(heading)))
        .skip(1)
        .take_while(|line| !line.starts_with("== Step"))
        .collect()
}

// --- text ------------------------------------------------------------------------------------

#[test]
fn show_text_has_one_section_per_step_in_pipeline_order() {
    let text = show("cat-sat-mat", &[]);
    let headings: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("== Step"))
        .collect();
    let expected: Vec<String> = STEP_HEADINGS
        .iter()
        .map(|heading| format!("== {heading} =="))
        .collect();
    assert_eq!(headings, expected);
}

#[test]
fn show_text_opens_with_the_title_and_the_lesson_name() {
    let text = show("cat-sat-mat", &[]);
    assert_eq!(
        text.lines().next(),
        Some("The cat sat on the mat  (cat-sat-mat)")
    );
}

#[test]
fn show_text_labels_the_rows_and_columns_of_the_scores_with_the_tokens() {
    let text = show("cat-sat-mat", &[]);
    let section = text_section(&text, "Step 3/7 · Scores");
    let header = section
        .iter()
        .position(|line| line.split_whitespace().eq(CAT_SAT_MAT_TOKENS))
        .unwrap_or_else(|| panic!("no column header of tokens in:\n{}", section.join("\n")));
    for (offset, token) in CAT_SAT_MAT_TOKENS.iter().enumerate() {
        let row: Vec<&str> = section[header + 1 + offset].split_whitespace().collect();
        assert_eq!(row.first(), Some(token), "row {offset} of the scores");
        assert_eq!(
            row.len(),
            1 + CAT_SAT_MAT_TOKENS.len(),
            "cells of row {token}"
        );
    }
}

#[test]
fn show_text_labels_the_rows_of_the_embeddings_with_the_tokens_and_the_columns_with_dimensions() {
    let text = show("cat-sat-mat", &["--step", "embedding"]);
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|line| line.split_whitespace().eq(["1", "2"]))
        .unwrap_or_else(|| panic!("no column header 1 2 in:\n{text}"));
    for (offset, token) in CAT_SAT_MAT_TOKENS.iter().enumerate() {
        assert_eq!(
            lines[header + 1 + offset].split_whitespace().next(),
            Some(*token)
        );
    }
}

#[test]
fn show_step_softmax_shows_only_the_softmax_step() {
    let text = show("cat-sat-mat", &["--step", "softmax"]);
    let headings: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("== Step"))
        .collect();
    assert_eq!(headings, ["== Step 5/7 · Softmax =="]);
}

#[test]
fn show_cell_by_token_labels_writes_out_the_dot_product() {
    let text = show("cat-sat-mat", &["--step", "scores", "--cell", "cat,sat"]);
    assert!(
        text.lines()
            .any(|line| line.trim() == "scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1"),
        "no derivation of scores[cat, sat] in:\n{text}"
    );
}

#[test]
fn show_cell_explains_only_the_cell_asked_for() {
    let text = show("cat-sat-mat", &["--step", "scores", "--cell", "cat,sat"]);
    let derivations: Vec<&str> = text
        .lines()
        .filter(|line| line.trim_start().starts_with("scores["))
        .collect();
    assert_eq!(derivations.len(), 1, "derivations: {derivations:?}");
}

#[test]
fn show_cell_by_one_based_numbers_names_the_same_cell_as_the_labels() {
    let text = show("cat-sat-mat", &["--step", "scores", "--cell", "2,3"]);
    assert!(
        text.lines()
            .any(|line| line.trim() == "scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1"),
        "--cell 2,3 did not explain scores[cat, sat]:\n{text}"
    );
}

#[test]
fn show_cell_with_an_unknown_label_exits_2_with_a_message() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args([
            "show",
            "cat-sat-mat",
            "--step",
            "scores",
            "--cell",
            "dog,sat",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("--cell dog,sat"))
        .stderr(predicate::str::contains("expected ROW,COL"));
}

#[test]
fn show_cell_out_of_range_exits_2_with_a_message() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mat", "--step", "scores", "--cell", "7,1"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("a row from 1 to 6"));
}

/// A step of generation shows one token's row: asking it for another token's row says that
/// --token chooses that token's step.
#[test]
fn show_cell_of_another_tokens_row_in_a_generation_step_points_to_token() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args([
            "show",
            "generation",
            "--step",
            "decode_output",
            "--cell",
            "mat,2",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("which --token chooses"))
        .stderr(predicate::str::contains("its token's (“sat”, token 3 of 6"));
}

#[test]
fn show_cell_without_a_comma_exits_2_with_a_message() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mat", "--step", "scores", "--cell", "cat"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected ROW,COL"));
}

#[test]
fn show_cell_without_step_explains_the_cell_in_every_step_it_fits() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mat", "--cell", "cat,sat"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1",
        ))
        .stdout(predicate::str::contains("weights[cat, sat]"));
}

// --- Markdown --------------------------------------------------------------------------------

#[test]
fn show_markdown_has_a_step_heading_per_step() {
    let markdown = show("cat-sat-mat", &["--format", "markdown"]);
    let headings: Vec<&str> = markdown
        .lines()
        .filter(|line| line.starts_with("## Step"))
        .collect();
    let expected: Vec<String> = STEP_HEADINGS
        .iter()
        .map(|heading| format!("## {heading}"))
        .collect();
    assert_eq!(headings, expected);
}

#[test]
fn show_markdown_opens_with_the_title_as_a_level_1_heading() {
    let markdown = show("cat-sat-mat", &["--format", "markdown"]);
    assert_eq!(markdown.lines().next(), Some("# The cat sat on the mat"));
}

#[test]
fn show_markdown_writes_matrices_as_pipe_tables_with_token_headers() {
    let markdown = show("cat-sat-mat", &["--format", "markdown", "--step", "scores"]);
    let lines: Vec<&str> = markdown.lines().collect();
    let header = lines
        .iter()
        .position(|line| *line == "| | The | cat | sat | on | the | mat |")
        .unwrap_or_else(|| panic!("no token header row in:\n{markdown}"));
    assert_eq!(lines[header + 1], "|---|---:|---:|---:|---:|---:|---:|");
    for (offset, token) in CAT_SAT_MAT_TOKENS.iter().enumerate() {
        let row = lines[header + 2 + offset];
        assert!(
            row.starts_with(&format!("| **{token}** |")) && row.ends_with(" |"),
            "row {offset}: {row:?}"
        );
        assert_eq!(row.matches('|').count(), 8, "row {offset}: {row:?}");
    }
}

// --- JSON ------------------------------------------------------------------------------------

#[test]
fn show_json_has_every_field_of_the_pipeline() {
    let json = show_json("cat-sat-mat");
    for key in [
        "title",
        "tokens",
        "d_k",
        "embeddings",
        "w_q",
        "w_k",
        "w_v",
        "q",
        "k",
        "v",
        "scores",
        "scaled",
        "mask",
        "masked",
        "weights",
        "output",
    ] {
        assert!(json.get(key).is_some(), "no key {key:?} in the JSON");
    }
}

#[test]
fn show_json_gives_title_tokens_and_d_k() {
    let json = show_json("cat-sat-mat");
    assert_eq!(json["title"], "The cat sat on the mat");
    assert_eq!(
        json["tokens"],
        serde_json::json!(["The", "cat", "sat", "on", "the", "mat"])
    );
    assert_eq!(json["d_k"], 2);
}

#[test]
fn show_json_writes_the_token_ids_as_whole_numbers_only_when_the_lesson_has_them() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("ids.toml");
    std::fs::write(
        &path,
        "format = 2\ntitle = \"ids\"\ntokens = [\"The\", \"cat\", \"sleeps\"]\n\
         token_ids = [464, 3797, 44263]\nq = [[1, 0], [0, 1], [1, 1]]\n\
         k = [[1, 0], [0, 1], [1, 1]]\nv = [[1], [2], [3]]\n",
    )
    .unwrap();
    let output = attn_tutor(&dir)
        .arg("show")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    // Written as integers, as a tokenizer's ids are (not 464.0).
    assert!(
        text.contains("\"token_ids\": [\n    464,\n    3797,\n    44263\n  ]"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["token_ids"], serde_json::json!([464, 3797, 44263]));
    // A lesson without them has no such key (not null).
    assert!(show_json("cat-sat-mat").get("token_ids").is_none());
}

#[test]
fn show_json_has_null_embeddings_and_weights_when_q_k_v_are_given() {
    let json = show_json("random-qkv");
    for key in ["embeddings", "w_q", "w_k", "w_v"] {
        assert!(
            json[key].is_null(),
            "{key} should be null, is {}",
            json[key]
        );
    }
    for key in ["q", "k", "v"] {
        assert_eq!(numbers(&json[key]).len(), 3, "{key} has a row per token");
    }
}

#[test]
fn show_json_of_a_lesson_file_with_literal_q_k_v_has_null_embeddings_and_gives_q_as_written() {
    let json = show_json(fixture("direct-qkv.toml").to_str().unwrap());
    assert!(json["embeddings"].is_null());
    assert!(json["w_q"].is_null());
    assert_eq!(numbers(&json["q"]), [[1.0, 0.0], [0.0, 1.0]]);
}

#[test]
fn show_json_has_null_mask_and_masked_when_the_lesson_has_no_mask() {
    let json = show_json("cat-sat-mat");
    assert!(json["mask"].is_null());
    assert!(json["masked"].is_null());
}

#[test]
fn show_json_has_null_scaled_when_the_lesson_does_not_scale() {
    let json = show_json(fixture("direct-qkv.toml").to_str().unwrap());
    assert!(json["scaled"].is_null());
}

#[test]
fn show_json_writes_the_masked_cells_of_the_causal_lesson_as_the_string_minus_inf() {
    let json = show_json("causal-cat-sat-mat");
    for key in ["mask", "masked"] {
        let rows = json[key].as_array().unwrap();
        assert_eq!(rows.len(), 6);
        for (row, cells) in rows.iter().enumerate() {
            for (col, cell) in cells.as_array().unwrap().iter().enumerate() {
                if col > row {
                    assert_eq!(cell, "-inf", "{key}[{row}][{col}]");
                } else {
                    assert!(cell.is_f64(), "{key}[{row}][{col}] = {cell}");
                }
            }
        }
    }
}

#[test]
fn show_json_gives_masked_keys_zero_weight_in_the_causal_lesson() {
    let json = show_json("causal-cat-sat-mat");
    let weights = numbers(&json["weights"]);
    for (row, cells) in weights.iter().enumerate() {
        for (col, weight) in cells.iter().enumerate() {
            if col > row {
                assert_eq!(*weight, 0.0, "weights[{row}][{col}]");
            }
        }
    }
}

#[test]
fn show_json_weight_rows_sum_to_1_in_every_built_in_lesson() {
    for lesson in BUILT_INS {
        let json = show_json(lesson);
        // Every head's weights (the top-level `weights` is null when there are several).
        for (head, fields) in json["heads"].as_array().expect("heads").iter().enumerate() {
            for (row, weights) in numbers(&fields["weights"]).iter().enumerate() {
                let sum: f64 = weights.iter().sum();
                assert!(
                    (sum - 1.0).abs() <= 1e-12,
                    "{lesson}: head {head}'s weights row {row} sums to {sum}"
                );
            }
        }
    }
}

#[test]
fn show_json_weights_of_cat_sleeps_match_the_documents_printed_figures() {
    let printed = [
        [0.324, 0.467, 0.209],
        [0.305, 0.515, 0.180],
        [0.346, 0.432, 0.222],
    ];
    let weights = numbers(&show_json("cat-sleeps")["weights"]);
    assert_eq!(weights.len(), printed.len());
    for (row, (exact, printed)) in weights.iter().zip(printed).enumerate() {
        assert_eq!(exact.len(), printed.len());
        for (col, (exact, printed)) in exact.iter().zip(printed).enumerate() {
            assert!(
                (exact - printed).abs() <= 0.0005,
                "weights[{row}][{col}] = {exact}, printed {printed}"
            );
        }
    }
}

#[test]
fn show_json_names_a_lesson_file_by_its_file_stem() {
    let json = show_json(fixture("direct-qkv.toml").to_str().unwrap());
    assert_eq!(json["name"], "direct-qkv");
}

// --- errors ----------------------------------------------------------------------------------

#[test]
fn show_of_an_unknown_name_exits_2_and_suggests_the_closest_built_in() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mt"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("no lesson named `cat-sat-mt`"))
        .stderr(predicate::str::contains("did you mean `cat-sat-mat`?"));
}

#[test]
fn show_of_a_name_like_no_built_in_exits_2_and_lists_the_built_ins() {
    let dir = TempDir::new().unwrap();
    let mut assert = attn_tutor(&dir).args(["show", "zzzzzz"]).assert().code(2);
    for name in BUILT_INS {
        assert = assert.stderr(predicate::str::contains(name));
    }
}

#[test]
fn show_of_a_missing_file_exits_2_and_names_it() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "missing.toml"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("cannot read missing.toml"));
}

#[test]
fn show_of_a_directory_exits_2() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("lessons.toml")).unwrap();
    attn_tutor(&dir)
        .args(["show", "lessons.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a regular file"));
}

#[test]
fn show_of_an_invalid_lesson_exits_2_and_points_at_the_problem() {
    let dir = TempDir::new().unwrap();
    let path = fixture("invalid-token-count.toml");
    attn_tutor(&dir)
        .arg("show")
        .arg(&path)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "`embeddings` has 2 rows, but there are 3 tokens",
        ));
}

#[test]
fn show_with_an_unknown_step_is_a_usage_error_exiting_2() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mat", "--step", "bogus"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bogus"));
}

// --- color -----------------------------------------------------------------------------------

#[test]
fn show_error_has_no_escape_byte_with_the_no_color_flag() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mt", "--no-color"])
        .assert()
        .code(2)
        .stderr(predicate::function(|err: &[u8]| !err.contains(&ESC)));
}

#[test]
fn show_error_has_no_escape_byte_with_no_color_set_in_the_environment() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["show", "cat-sat-mt"])
        .env("NO_COLOR", "1")
        .assert()
        .code(2)
        .stderr(predicate::function(|err: &[u8]| !err.contains(&ESC)));
}

#[test]
fn show_error_on_a_terminal_is_colored_by_default() {
    let Some((code, written)) = run_on_terminal(&["show", "cat-sat-mt"], None) else {
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
fn show_error_on_a_terminal_has_no_escape_byte_with_the_no_color_flag() {
    let Some((code, written)) = run_on_terminal(&["show", "cat-sat-mt", "--no-color"], None) else {
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
fn show_error_on_a_terminal_has_no_escape_byte_with_no_color_set_in_the_environment() {
    let Some((code, written)) = run_on_terminal(&["show", "cat-sat-mt"], Some("1")) else {
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
fn show_usage_error_on_a_terminal_has_no_escape_byte_with_the_no_color_flag() {
    let Some((code, written)) = run_on_terminal(
        &["show", "cat-sat-mat", "--step", "bogus", "--no-color"],
        None,
    ) else {
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
fn show_accepts_no_color_before_the_subcommand() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["--no-color", "show", "cat-sat-mat", "--step", "scores"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("== Step 3/7 · Scores =="));
}

#[test]
fn show_of_a_lesson_that_gives_q_k_v_never_writes_them_as_projections() {
    let dir = TempDir::new().unwrap();
    for format in ["text", "markdown"] {
        let output = attn_tutor(&dir)
            .args([
                "show",
                fixture("direct-qkv.toml").to_str().unwrap(),
                "--format",
                format,
            ])
            .output()
            .unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(!text.contains("X·W"), "{format}:\n{text}");
        assert!(text.contains("Q (queries, given)"), "{format}:\n{text}");
    }
}

#[test]
fn without_scaling_the_mask_is_added_to_the_scores_in_show() {
    let dir = TempDir::new().unwrap();
    let text = attn_tutor(&dir)
        .args(["show", fixture("direct-qkv.toml").to_str().unwrap()])
        .output()
        .unwrap()
        .stdout;
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("masked = scores + mask"), "{text}");
    assert!(!text.contains("masked = scaled + mask"), "{text}");
}

#[test]
fn a_cell_that_is_no_cell_of_the_lesson_is_an_error_even_without_a_step() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args([
            "show",
            fixture("direct-qkv.toml").to_str().unwrap(),
            "--cell",
            "dog,1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--cell dog,1 is not a cell of any matrix shown",
        ));
}

#[test]
fn the_handout_shows_a_lessons_asterisks_as_asterisks() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("stars.toml"),
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nq = [[1, 0], [0, 1]]\n\
         k = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n[narration]\nscores = \"q *times* k, not emphasis\"\n",
    )
    .unwrap();
    attn_tutor(&dir)
        .args(["show", "stars.toml", "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains("q \\*times\\* k, not emphasis"));
}

#[test]
fn show_json_compact_has_no_whitespace_between_values_and_parses_to_the_same_document() {
    // Every value and key alike, on lessons with heads, a mask, generation, cross-attention
    // and a backward pass: only the spaces and line breaks go.
    for lesson in [
        "cat-sleeps",
        "two-heads",
        "generation",
        "translation",
        "backward",
    ] {
        let pretty = show(lesson, &["--format", "json"]);
        let compact = show(lesson, &["--format", "json", "--compact"]);
        let pretty_value: Value = serde_json::from_str(&pretty).unwrap();
        let compact_value: Value = serde_json::from_str(&compact).expect("compact JSON parses");
        assert_eq!(compact_value, pretty_value, "{lesson}");
        // One line, ended by a newline, with no whitespace outside the strings.
        assert_eq!(compact.lines().count(), 1, "{lesson}");
        assert!(compact.ends_with('\n'), "{lesson}");
        assert_eq!(
            whitespace_outside_strings(compact.trim_end()),
            0,
            "{lesson}"
        );
        assert!(compact.len() < pretty.len(), "{lesson}");
    }
}

#[test]
fn show_compact_without_json_exits_2_naming_the_flag_and_the_format() {
    for format in ["text", "markdown"] {
        let dir = TempDir::new().unwrap();
        attn_tutor(&dir)
            .args(["show", "cat-sleeps", "--compact", "--format", format])
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains("--compact"))
            .stderr(predicate::str::contains(format!("--format {format}")))
            .stderr(predicate::str::contains("help: add --format json"));
    }
}

/// How many whitespace characters a JSON text has outside its strings.
fn whitespace_outside_strings(json: &str) -> usize {
    let (mut in_string, mut escaped, mut count) = (false, false, 0);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            (false, _, c) if c.is_whitespace() => count += 1,
            _ => {}
        }
    }
    count
}

// --- norms and biases (format 2) -------------------------------------------------------------

const NORMED: &str = "format = 2\ntitle = \"Normed\"\ntokens = [\"a\", \"b\", \"c\"]\n\
    embeddings = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 3, 1]]\n\
    w_q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]\n\
    w_k = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]\n\
    w_v = [[1, 1, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]\n\
    w_o = [[1, 0], [0, 1], [1, 1]]\nfocus = \"c\"\n";

/// The lesson `NORMED` with `extra` keys, written in `dir`.
fn normed_file(dir: &TempDir, extra: &str) -> String {
    let path = dir.path().join("normed.toml");
    std::fs::write(&path, format!("{NORMED}{extra}")).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn show_json_has_normed_only_when_the_lesson_has_a_norm() {
    let dir = TempDir::new().unwrap();
    let plain = show_json(&normed_file(&dir, ""));
    for key in ["normed", "norm_gain", "norm_bias", "b_q", "b_o"] {
        assert!(plain.get(key).is_none(), "{key} in a lesson without it");
    }
    let layer = show_json(&normed_file(
        &dir,
        "norm = \"layer\"\nnorm_gain = [1, 2, 0.5, 1]\nnorm_bias = [0, 0.1, 0, -1]\n\
         b_q = [0.5, -1, 0.25]\nb_o = [10, -20]\n",
    ));
    // Row c = [1, 1, 3, 1]: mean 1.5, variance 0.75; X̂[c, 3] = 1.5 / √0.75001 · 0.5.
    let normed = numbers(&layer["normed"]);
    assert!(
        (normed[2][2] - 1.5 / 0.75001f64.sqrt() * 0.5).abs() < 1e-12,
        "{normed:?}"
    );
    assert_eq!(numbers(&layer["norm_gain"]), [[1.0, 2.0, 0.5, 1.0]]);
    assert_eq!(numbers(&layer["b_o"]), [[10.0, -20.0]]);
    // Q[c, 1] = X̂[c, 1] + X̂[c, 2] + b_q[1], from the JSON's own X̂.
    let q = numbers(&layer["q"]);
    assert!((q[2][0] - (normed[2][0] + normed[2][1] + 0.5)).abs() < 1e-12);
    let rms = show_json(&normed_file(&dir, "norm = \"rms\"\n"));
    assert!(rms.get("normed").is_some() && rms.get("norm_bias").is_none());
}

#[test]
fn every_format_shows_the_norm_step_by_its_kind_and_the_biases_in_the_workings() {
    let dir = TempDir::new().unwrap();
    let layer = normed_file(
        &dir,
        "norm = \"layer\"\nb_q = [0.5, -1, 0.25]\nb_o = [1, 2]\n",
    );
    let text = show(&layer, &[]);
    assert!(text.contains("== Step 2/10 · LayerNorm =="), "{text}");
    assert!(text.contains("X̂ = LayerNorm(X) (X normalised)"), "{text}");
    // The narration is wrapped: its words are compared as one line.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("Q = X̂·W_q + b_q, K = X̂·W_k, V = X̂·W_v"),
        "{text}"
    );
    assert!(
        text.contains("Q[c, 1] = x̂_c · W_q[:, 1] + b_q[1] = "),
        "{text}"
    );
    let output = text_section(&text, "Output projection").join(" ");
    assert!(output.contains("b_o is added"), "{output}");
    assert!(
        output.contains("output[c, 2] = concat[c, :] · W_o[:, 2] + b_o[2] = "),
        "{output}"
    );
    let section = text_section(&text, "LayerNorm").join("\n");
    assert!(
        section.contains("over the 4 numbers of X[c, :]"),
        "{section}"
    );
    for format in ["markdown", "svg", "html"] {
        let shown = show(&layer, &["--format", format, "--step", "layer_norm"]);
        assert!(shown.contains("LayerNorm"), "{format}: {shown}");
    }
    let rms = normed_file(&dir, "norm = \"rms\"\n");
    let text = show(&rms, &["--step", "rms_norm"]);
    assert!(text.contains("· RMSNorm =="), "{text}");
    assert!(text.contains("√(mean(x²) + ε)"), "{text}");
    assert!(!text.contains("LayerNorm("), "{text}");
}

#[test]
fn check_compares_a_printed_normed_figure() {
    let dir = TempDir::new().unwrap();
    let right = normed_file(
        &dir,
        "norm = \"layer\"\n[expected]\nnormed = [[1.0, -1.0, 1.0, -1.0], [-1.0, 1.0, -1.0, 1.0], \
         [-0.577, -0.577, 1.732, -0.577]]\n",
    );
    attn_tutor(&dir).arg("check").arg(&right).assert().success();
    std::fs::write(
        &right,
        std::fs::read_to_string(&right)
            .unwrap()
            .replace("1.732", "1.5"),
    )
    .unwrap();
    attn_tutor(&dir)
        .arg("check")
        .arg(&right)
        .assert()
        .failure()
        .stdout(predicate::str::contains("normed"));
}
