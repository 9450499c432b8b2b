//! `show` and its Markdown handout for a lesson of several heads: a section per head for each
//! step of one head, the shared matrices printed once, and the JSON's derivations as before.

mod common;

use std::io::Write;

/// The lesson written to a scratch file, and `show` run on it with `args`.
fn show_lesson(text: &str, args: &[&str]) -> String {
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    common::show(file.path().to_str().unwrap(), args)
}

#[test]
fn a_step_of_one_head_has_a_section_per_head() {
    let text = show_lesson(common::GQA, &[]);
    for head in 1..=4 {
        assert!(
            text.contains(&format!("== Step 3/11 · Scores — head {head}/4 ==")),
            "{text}"
        );
    }
    assert!(text.contains("scores⁽³⁾ = Q⁽³⁾·K⁽³⁾ᵀ"), "{text}");
    assert!(
        text.contains("scores⁽³⁾[The, The] = q⁽³⁾_The · k⁽³⁾_The"),
        "{text}"
    );
    // Steps every head shares have one section.
    assert_eq!(text.matches("· Concat").count(), 1, "{text}");
    assert_eq!(text.matches("· Output projection").count(), 1, "{text}");
}

#[test]
fn the_handout_has_a_section_per_head_too() {
    let markdown = show_lesson(common::TWO_HEADS, &["--format", "markdown"]);
    assert!(
        markdown.contains("## Step 5/11 · Softmax — head 2/2"),
        "{markdown}"
    );
    assert!(
        markdown.contains("**weights⁽²⁾ = softmax(rows)**"),
        "{markdown}"
    );
}

#[test]
fn a_matrix_every_head_shares_is_printed_once() {
    let text = show_lesson(common::TWO_HEADS, &["--step", "masking"]);
    let text_all = show_lesson(common::TWO_HEADS, &[]);
    assert!(text.contains("not a step of this lesson"), "{text}");
    // X is printed on the Embedding step only, not again with each head's projection.
    assert_eq!(
        text_all.matches("\nX (embeddings)\n").count(),
        1,
        "{text_all}"
    );
}

#[test]
fn json_derivations_name_every_head_they_come_from() {
    let json: serde_json::Value =
        serde_json::from_str(&common::show("gqa", &["--format", "json"])).unwrap();
    let heads: std::collections::BTreeSet<u64> = json["derivations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|derivation| derivation["head"].as_u64())
        .collect();
    assert_eq!(heads.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
}

#[test]
fn concat_of_one_head_is_captioned_as_the_blocks_it_holds() {
    let text = common::TWO_HEADS
        .replace("heads = 2\n", "")
        .replace(
            "w_q = [\n  [1, 0, 2, 0],\n  [0, 1, 0, 2],\n  [1, 1, 0, 0],\n  [0, 0, 1, 1],\n]",
            "w_q = [[1, 0], [0, 1], [1, 1], [0, 0]]",
        )
        .replace(
            "w_k = [\n  [0, 1, 2, 0],\n  [1, 0, 0, 2],\n  [0, 0, 1, 0],\n  [1, 1, 0, 1],\n]",
            "w_k = [[0, 1], [1, 0], [0, 0], [1, 1]]",
        )
        .replace(
            "w_v = [\n  [1, 0, 0, 1],\n  [0, 1, 1, 0],\n  [1, 1, 0, 0],\n  [0, 0, 1, 1],\n]",
            "w_v = [[1, 0], [0, 1], [1, 1], [0, 0]]",
        )
        .replace(
            "w_o = [\n  [1, 0, 0, 0],\n  [0, 1, 0, 0],\n  [0, 0, 1, 0],\n  [0, 0, 0, 1],\n]",
            "w_o = [[1, 2], [3, 4]]",
        );
    assert!(!text.contains("heads = 2"), "{text}");
    let shown = show_lesson(&text, &["--step", "output_projection"]);
    assert!(
        shown.contains("concat = [head] (every head's output side by side)"),
        "{shown}"
    );
}
