//! Each row's entropy on the Softmax step: a number for how sharp or flat the row is, against
//! the most the keys it may see allow.

use crate::common;

use attn_tutor::app::{Action, App, update};
use attn_tutor::attention::{Attention, MatrixName, entropy_bits};
use attn_tutor::lesson::builtin;

fn attention(name: &str) -> Attention {
    let text = builtin(name).expect("a built-in lesson").text;
    Attention::compute(&attn_tutor::lesson::parse(text).lesson.expect("valid"))
}

#[test]
fn entropy_is_zero_for_one_key_and_log2_n_for_an_even_row() {
    assert_eq!(entropy_bits([0.0, 1.0, 0.0]), 0.0);
    assert!((entropy_bits([0.25; 4]) - 2.0).abs() < 1e-12);
}

#[test]
fn a_rows_entropy_is_of_its_weights_against_the_keys_the_mask_leaves() {
    let causal = attention("causal-cat-sat-mat");
    // The first token sees itself only: 0 bits of log₂ 1.
    assert_eq!(causal.row_entropy(0, 0), Some((0.0, 1)));
    let weights = causal.weights();
    let (entropy, visible) = causal.row_entropy(0, 2).unwrap();
    assert_eq!(visible, 3);
    let by_hand: f64 = (0..3)
        .map(|key| -weights[(2, key)] * weights[(2, key)].log2())
        .sum();
    assert!((entropy - by_hand).abs() < 1e-12);
}

#[test]
fn the_softmax_step_says_how_sharp_the_row_under_the_cursor_is() {
    let mut app: App = App::new(App::builtin_entries(), None);
    let index = attn_tutor::lesson::BUILTIN
        .iter()
        .position(|lesson| lesson.name == "cat-sat-mat")
        .unwrap();
    update(&mut app, Action::Pick(index));
    update(&mut app, Action::Open);
    common::go_to(&mut app, "softmax");
    let tutor = app.tutor().unwrap();
    let row = tutor.cursor(MatrixName::Weights).row;
    let (entropy, visible) = tutor.attention.row_entropy(0, row).unwrap();
    let screen = common::screen(&app, 120, 40);
    let said = format!(
        "Entropy: {:.2} of log₂ {visible} = {:.2} bits",
        entropy,
        (visible as f64).log2()
    );
    assert!(screen.contains(&said), "{said} not in\n{screen}");
}

#[test]
fn a_row_of_two_keys_has_at_most_1_bit_not_1_bits() {
    let mut app = common::lesson_app("backward", builtin("backward").unwrap().text);
    common::go_to(&mut app, "softmax");
    let screen = common::screen(&app, 120, 40);
    assert!(screen.contains("of log₂ 2 = 1 bit ("), "{screen}");
    assert!(!screen.contains("1 bits"), "{screen}");
}

#[test]
fn the_quotient_and_the_entropy_are_written_as_the_table_beside_them_writes_its_numbers() {
    // generation's Softmax, row mat: the table says Σ 20.0370 and the other rows' entropies have
    // two decimals; the working said "1 / 20.037" and "Entropy: 0.9 of log₂ 6".
    let mut app = common::lesson_app("generation", builtin("generation").unwrap().text);
    common::go_to(&mut app, "softmax");
    let mat = 5;
    let tutor = app.tutor_mut().unwrap();
    let cursor = tutor.cursor(MatrixName::Weights);
    tutor.set_cursor(
        MatrixName::Weights,
        attn_tutor::app::Cursor {
            row: mat,
            col: 0,
            ..cursor
        },
    );
    let screen = common::screen(&app, 120, 40);
    assert!(screen.contains("= 1 / 20.0370 = 0.0499"), "{screen}");
    assert!(screen.contains("Entropy: 0.90 of log₂ 6"), "{screen}");
}
