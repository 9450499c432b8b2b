//! `show` and its Markdown handout for a lesson of several heads: a section per head for each
//! step of one head, the shared matrices printed once, and the JSON's derivations as before.

use crate::common;

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
    // Head 3 of 4 in 2 K/V groups reads group 2's keys.
    assert!(text.contains("scores⁽³⁾ = Q⁽³⁾·K⁽²⁾ᵀ"), "{text}");
    assert!(
        text.contains("scores⁽³⁾[The, The] = q⁽³⁾_The · k⁽²⁾_The"),
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

#[test]
fn keys_and_values_are_named_by_their_kv_group_in_text_markdown_and_json() {
    // gqa: 4 query heads, 2 K/V groups; head 3's projection is group 2's keys and values.
    let text = common::show("gqa", &["--step", "projection"]);
    let head3 = &text[text.find("Projection — head 3/4").unwrap()..];
    let head3 = &head3[..head3.find("== Step").unwrap_or(head3.len())];
    assert!(
        head3.contains("K⁽²⁾ = X·W_k⁽²⁾ (keys; K/V group 2, shared by heads 3 and 4)"),
        "{head3}"
    );
    assert!(head3.contains("V⁽²⁾ = X·W_v⁽²⁾"), "{head3}");
    assert!(
        head3.contains("K⁽²⁾[snow, 1] = x_snow · W_k⁽²⁾[:, 1]"),
        "{head3}"
    );
    assert!(
        !head3.contains("K⁽³⁾") && !head3.contains("W_v⁽³⁾"),
        "{head3}"
    );
    assert!(head3.contains("Q⁽³⁾ = X·W_q⁽³⁾"), "{head3}");
    for (whose, out) in [
        ("text", common::show("gqa", &[])),
        ("markdown", common::show("gqa", &["--format", "markdown"])),
        ("json", common::show("gqa", &["--format", "json"])),
    ] {
        for wrong in [
            "·K⁽³⁾",
            "·K⁽⁴⁾",
            "\nK⁽³⁾",
            "\nV⁽⁴⁾",
            "k⁽³⁾_",
            "v⁽⁴⁾_",
            "W_k⁽³⁾",
            "W_v⁽⁴⁾",
        ] {
            assert!(
                !out.contains(wrong),
                "{whose} names a key by its query head: {wrong}"
            );
        }
    }
    // The JSON's keys stay the contract's: heads are still listed one per query head.
    let json: serde_json::Value =
        serde_json::from_str(&common::show("gqa", &["--format", "json"])).unwrap();
    assert_eq!(json["heads"].as_array().unwrap().len(), 4);
    assert!(json["heads"][2]["k"].is_array());
    // Multi-query attention: one group, so K has no mark at all.
    let mqa = show_lesson(
        &common::GQA
            .replace("kv_heads = 2", "kv_heads = 1")
            .replace("shape = [4, 4] }", "shape = [4, 2] }"),
        &["--step", "scores"],
    );
    assert!(mqa.contains("scores⁽³⁾ = Q⁽³⁾·Kᵀ"), "{mqa}");
}
