//! Masks as they appear in tutorials (issue 12, item 11): any finite additive bias or -inf, each
//! explained where it applies, and the JSON's 0-based rows documented (item 12).

use attn_engine::attention::{Attention, Cell, MatrixName, Step};
use attn_engine::lesson::load_text;

fn lesson_with_mask(mask: &str) -> Result<Attention, String> {
    let text = format!(
        "format = 1\ntitle = \"Masks\"\ntokens = [\"a\", \"b\"]\nq = [[1], [2]]\nk = [[1], [0]]\n\
         v = [[1], [3]]\nscale = false\nmask = {mask}\n"
    );
    load_text("masks", None, text)
        .map(|loaded| Attention::compute(&loaded.lesson))
        .map_err(|error| error.render(false))
}

#[test]
fn a_mask_may_hold_finite_biases_as_alibi_and_float_masks_do() {
    let attention = lesson_with_mask("[[0, -1], [-0.5, 0]]").expect("finite biases are accepted");
    let masked = attention.matrix(MatrixName::Masked).unwrap();
    // scores are [[1, 0], [2, 0]]; the biases are added.
    assert_eq!(masked[(0, 1)], -1.0);
    assert_eq!(masked[(1, 0)], 1.5);
    let sum: f64 = attention.weights().row(0).iter().sum();
    assert!((sum - 1.0).abs() < 1e-12);
}

#[test]
fn a_large_negative_bias_leaves_a_tiny_weight_not_zero() {
    // exp(-21) / (exp(1) + exp(-20)): about 2.8e-10, not 0 as -inf would give.
    let attention = lesson_with_mask("[[0, -20], [0, 0]]").unwrap();
    let weight = attention.weights()[(0, 1)];
    assert!(weight > 0.0 && weight < 1e-9, "{weight}");
}

#[test]
fn the_same_bias_on_every_key_of_a_row_changes_nothing() {
    let plain = lesson_with_mask("[[0, 0], [0, 0]]").unwrap();
    let biased = lesson_with_mask("[[-1e6, -1e6], [0, 0]]").unwrap();
    for col in 0..2 {
        assert!((plain.weights()[(0, col)] - biased.weights()[(0, col)]).abs() < 1e-12);
    }
}

#[test]
fn a_mask_cell_that_is_nan_or_plus_infinity_is_refused_with_its_place() {
    for (mask, what) in [
        ("[[0, 0], [inf, 0]]", "row 2, column 1"),
        ("[[0, 0], [0, nan]]", "row 2, column 2"),
    ] {
        let error = lesson_with_mask(mask).expect_err(mask);
        assert!(error.contains(what), "{mask}: {error}");
        assert!(error.contains("-inf or a finite number"), "{mask}: {error}");
        // The help says what a -1e9 fill does next to -inf.
        assert!(
            error.contains("-1e9") && error.contains("weights of 0"),
            "{error}"
        );
    }
}

#[test]
fn any_finite_bias_is_a_mask_cell_as_tutorials_minus_1e9_and_finfo_min_fills_are() {
    // The Annotated Transformer's -1e9 and Hugging Face's finfo.min (f32 and f64).
    for fill in ["-1e9", "-3.4028234663852886e38", "-1.7976931348623157e308"] {
        // Row 1 sees key a only: the fill hides b as -inf does, its exp underflowing to 0.
        let one = lesson_with_mask(&format!("[[0, {fill}], [0, 0]]")).expect(fill);
        let inf = lesson_with_mask("[[0, -inf], [0, 0]]").unwrap();
        assert_eq!(one.weights()[(0, 1)], 0.0, "{fill}");
        assert_eq!(one.weights()[(0, 0)], 1.0, "{fill}");
        assert_eq!(one.weights(), inf.weights(), "{fill}");
        // The fill on every key of row 1 is a shift of the whole row: not hidden, unlike -inf.
        let every = lesson_with_mask(&format!("[[{fill}, {fill}], [0, 0]]")).expect(fill);
        let sum: f64 = every.weights().row(0).iter().sum();
        assert!((sum - 1.0).abs() < 1e-12, "{fill}: {sum}");
        assert_eq!(every.fully_masked_rows().count(), 0, "{fill}");
    }
    // -1e9 keeps the scores [1, 0] to about 1e-7: the row is weighted as if unmasked.
    let plain = lesson_with_mask("[[0, 0], [0, 0]]").unwrap();
    let shifted = lesson_with_mask("[[-1e9, -1e9], [0, 0]]").unwrap();
    assert!((plain.weights()[(0, 0)] - shifted.weights()[(0, 0)]).abs() < 1e-6);
    let said = shifted
        .derive(Cell::new(MatrixName::Masked, 0, 0))
        .unwrap()
        .explain(&shifted, 3);
    assert!(
        said.contains("every score of this row") && said.contains("hides nothing"),
        "{said}"
    );
    // finfo.min swallows the scores: the row is weighted evenly.
    let swallowed =
        lesson_with_mask("[[-3.4028234663852886e38, -3.4028234663852886e38], [0, 0]]").unwrap();
    assert_eq!(swallowed.weights()[(0, 0)], 0.5);
    // Outside a mask the value limit stands.
    let text = "format = 1\ntitle = \"Big\"\ntokens = [\"a\"]\nq = [[-1e9]]\nk = [[1]]\n\
                v = [[1]]\n";
    let Err(error) = load_text("big", None, text.to_string()) else {
        panic!("-1e9 in q is refused");
    };
    let error = error.render(false);
    assert!(error.contains("out of range"), "{error}");
}

#[test]
fn a_huge_bias_is_written_short_on_screen_and_in_a_saved_lesson() {
    let attention = lesson_with_mask("[[0, -3.4028234663852886e38], [0, 0]]").unwrap();
    let cell = Cell::new(MatrixName::Masked, 0, 1);
    let text = attention.derive(cell).unwrap().explain(&attention, 3);
    assert!(text.contains("-3.403e38"), "{text}");
    assert!(!text.contains("0000000000"), "{text}");
    let loaded = load_text(
        "masks",
        None,
        "format = 1\ntitle = \"Masks\"\ntokens = [\"a\", \"b\"]\nq = [[1], [2]]\n\
         k = [[1], [0]]\nv = [[1], [3]]\nmask = [[0, -3.4028234663852886e38], [-1e9, 0]]\n"
            .to_string(),
    )
    .unwrap();
    let written = attn_engine::lesson::lesson_to_toml(&loaded.lesson);
    assert!(!written.contains("0000000000"), "{written}");
    let again = load_text("again", None, written).unwrap();
    assert_eq!(again.lesson.mask, loaded.lesson.mask);
}

#[test]
fn a_hidden_cell_of_an_explicit_mask_does_not_claim_the_key_comes_after_the_query() {
    let attention = lesson_with_mask("[[\"-inf\", 0], [0, 0]]")
        .or_else(|_| lesson_with_mask("[[-inf, 0], [0, 0]]"))
        .unwrap();
    let cell = Cell::new(MatrixName::Masked, 0, 0);
    let text = attention.derive(cell).unwrap().explain(&attention, 3);
    assert!(!text.contains("comes after the query"), "{text}");
    assert!(text.contains("hidden"), "{text}");
}

#[test]
fn a_finite_bias_says_what_it_does_in_the_working() {
    let attention = lesson_with_mask("[[0, -20], [0, 0]]").unwrap();
    let cell = Cell::new(MatrixName::Masked, 0, 1);
    let text = attention.derive(cell).unwrap().explain(&attention, 3);
    assert!(text.contains("bias") && text.contains("not 0"), "{text}");
    assert!(!text.contains("hidden"), "{text}");
    // exp(-1e4) underflows: the working says so rather than promising a weight above 0.
    let attention = lesson_with_mask("[[0, -1e4], [0, 0]]").unwrap();
    let text = attention.derive(cell).unwrap().explain(&attention, 3);
    assert!(text.contains("underflows to 0"), "{text}");
}

#[test]
fn the_masking_step_explains_minus_1e9_and_minus_inf_and_what_pytorch_does() {
    let text = &Step::Masking.default_narrations().join("\n");
    assert!(!text.contains("±1e6"), "{text}");
    for words in [
        "added to every key of a row",
        "finfo.min",
        "-1e9",
        "uniform",
        "1/n",
        "scaled_dot_product_attention",
        "2.5",
        "NaN",
        "ALiBi",
    ] {
        assert!(text.contains(words), "no `{words}` in: {text}");
    }
}

#[test]
fn a_fully_masked_weight_says_what_pytorch_and_a_minus_1e9_fill_would_give() {
    let attention = lesson_with_mask("[[-inf, -inf], [0, 0]]").unwrap();
    let cell = Cell::new(MatrixName::Weights, 0, 0);
    let text = attention.derive(cell).unwrap().explain(&attention, 3);
    for words in ["scaled_dot_product_attention", "NaN", "-1e9", "1/n"] {
        assert!(text.contains(words), "no `{words}` in: {text}");
    }
}

#[test]
fn the_lesson_format_says_json_rows_are_0_based() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/lesson-format.md"
    ))
    .unwrap();
    let line = docs
        .lines()
        .find(|line| line.contains("fully_masked_rows"))
        .expect("docs/lesson-format.md mentions fully_masked_rows");
    assert!(line.contains("0-based"), "{line}");
}
