//! Exponentials in the softmax working keep their meaning at both ends (issue 12, item 8): huge
//! ones are not written as 300-digit integers whose tail is noise, tiny ones do not round to 0.

use attn_engine::attention::{Attention, Cell, MatrixName};
use attn_engine::lesson::load_text;

/// The softmax working of `weights[1, col]` for a lesson whose first row of scores is `scores`
/// (q = 1 for every token, k = the scores, no scaling).
fn working(scores: &[f64], col: usize, decimals: usize) -> String {
    let n = scores.len();
    let tokens: Vec<String> = (1..=n).map(|i| format!("\"t{i}\"")).collect();
    let q: Vec<&str> = (0..n).map(|_| "[1]").collect();
    let k: Vec<String> = scores.iter().map(|s| format!("[{s}]")).collect();
    let text = format!(
        "format = 1\ntitle = \"Exp\"\ntokens = [{}]\nq = [{}]\nk = [{}]\nv = [{}]\n\
         scale = false\ndecimals = {decimals}\n",
        tokens.join(", "),
        q.join(", "),
        k.join(", "),
        q.join(", "),
    );
    let loaded = load_text("exp", None, text).expect("a valid lesson");
    let attention = Attention::compute(&loaded.lesson);
    attention
        .derive(Cell::new(MatrixName::Weights, 0, col))
        .unwrap()
        .explain(&attention, decimals)
}

/// The longest run of digits in a text.
fn longest_digit_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn exp_700_is_written_in_scientific_notation_not_305_digits() {
    let text = working(&[700.0, 0.0], 0, 3);
    assert!(longest_digit_run(&text) <= 6, "{text}");
    assert!(text.contains("1.014e304"), "{text}");
}

#[test]
fn exp_50_shows_only_meaningful_digits() {
    // e^50 = 5184705528587072464087.45…; a fixed print's digits after the 17th are noise.
    let text = working(&[50.0, 0.0], 0, 3);
    assert!(!text.contains("5184705528587072045056"), "{text}");
    assert!(text.contains("5.185e21"), "{text}");
}

#[test]
fn a_tiny_exponential_beside_huge_ones_is_not_written_0() {
    let text = working(&[100.0, 99.0, -50.0], 2, 3);
    assert!(!text.contains("= 0 /"), "{text}");
    assert!(text.contains("1.929e-22"), "{text}");
    assert!(text.contains("3.677e43"), "{text}");
}

#[test]
fn small_exponentials_keep_their_digits_instead_of_0_over_0() {
    // exp(-9) = 1.234e-4 and the sum 2.148e-4: "0 / 0 = 0.574" said nothing.
    let text = working(&[-9.0, -9.3], 0, 3);
    assert!(!text.contains("0 / 0"), "{text}");
    assert!(text.contains("1.234e-4 / 2.148e-4 = 0.574"), "{text}");
}

#[test]
fn ordinary_exponentials_keep_their_fixed_decimals() {
    let text = working(&[0.5, 0.0], 0, 4);
    assert!(text.contains("1.6487 / 2.6487"), "{text}");
}
