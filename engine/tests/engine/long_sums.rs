//! Dot products of a real model's width (64 terms in a score, 768 in a projection, 768 from 12
//! heads in the output projection): the working writes the largest terms, largest first, and
//! the sum of the others, in a line that fits 80 columns after the cell's name, and its
//! arithmetic as written lands on the result as written.

use attn_engine::attention::{Attention, Cell, MatrixName, Rule};
use attn_engine::lesson::load_text;
use attn_engine::practice::{HintLevel, hints};
use attn_engine::workings::number::format_number;

const ONE_HEAD: &str = include_str!("../../../tests/fixtures/big-one-head.toml");
const TWELVE_HEADS: &str = include_str!("../../../tests/fixtures/big-twelve-heads.toml");

fn computed(name: &str, text: &str) -> Attention {
    let loaded = load_text(name, None, text.to_string()).unwrap();
    Attention::compute(&loaded.lesson)
}

fn decimals_of(number: &str) -> usize {
    number
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len())
}

/// `(a × b)` as its two numbers.
fn product(piece: &str) -> (f64, f64) {
    let inner = piece
        .strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a product: {piece}"));
    let (a, b) = inner.split_once(" × ").unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

/// `N more terms (sum S)` (or `N more (sum S)` where the line is short) as N and S as written.
fn rest(piece: &str) -> (usize, String) {
    let (count, sum) = piece
        .split_once(" more terms (sum ")
        .or_else(|| piece.split_once(" more (sum "))
        .unwrap_or_else(|| panic!("not the rest: {piece}"));
    (
        count.parse().unwrap(),
        sum.strip_suffix(')').unwrap().to_string(),
    )
}

/// Checks one long dot product's working; returns how many terms it writes.
fn check_largest_terms(attention: &Attention, cell: Cell, decimals: usize) -> usize {
    let derivation = attention.derive(cell).unwrap();
    let Rule::Dot(dot) = &derivation.rule else {
        panic!("{cell:?} is not a dot product");
    };
    let explanation = derivation.explanation(attention, decimals);
    let products = &explanation.sides[1];
    let (written, last) = products.split_at(products.len() - 1);
    let (others, rest_sum) = rest(&last[0]);
    assert!(!written.is_empty() && written.len() <= 3, "{products:?}");
    assert_eq!(written.len() + others, dot.terms.len(), "{products:?}");
    // The terms written are the largest by |product|, largest first.
    let mut exact: Vec<f64> = dot.terms.iter().map(|(a, b)| a.value * b.value).collect();
    exact.sort_by(|x, y| y.abs().total_cmp(&x.abs()));
    for (piece, largest) in written.iter().zip(&exact) {
        let (a, b) = product(piece);
        let inner = piece.trim_matches(['(', ')']);
        let (left, right) = inner.split_once(" × ").unwrap();
        // Both written with the same decimals, trailing zeros trimmed.
        let operand_decimals = decimals_of(left).max(decimals_of(right));
        let half_unit = 0.5 * 10f64.powi(-(operand_decimals as i32));
        assert!(
            (a * b - largest).abs() <= half_unit * (a.abs() + b.abs() + half_unit) * 1.000001,
            "{piece} is not the next largest term, {largest}"
        );
    }
    // The rest's sum is the other terms' sum, to its decimals.
    let others_exact: f64 = exact[written.len()..].iter().sum();
    assert_eq!(
        format_number(others_exact, decimals_of(&rest_sum)),
        rest_sum,
        "{products:?}"
    );
    // The terms as written and the rest's sum land on the result as written.
    let result = &explanation.sides[2][0];
    let worked: f64 = written
        .iter()
        .map(|piece| {
            let (a, b) = product(piece);
            a * b
        })
        .sum::<f64>()
        + rest_sum.parse::<f64>().unwrap();
    assert_eq!(
        format_number(worked, decimals),
        format_number(result.parse().unwrap(), decimals),
        "{} = {} = {result}",
        explanation.name,
        products.join(" + ")
    );
    // The line of products fits an 80-column screen's working (78 columns between its
    // margins) after the name, as the tutor indents it.
    let indent = explanation.name.chars().count().min(78 / 3) + " = ".len();
    let line = products.join(" + ");
    assert!(
        indent + line.chars().count() <= 78,
        "{} columns: {line}",
        indent + line.chars().count()
    );
    let note = explanation.note.as_deref().unwrap_or_default();
    assert!(
        note.contains(&format!("of the {} terms", dot.terms.len())),
        "the note says how many terms there are: {note}"
    );
    if written.len() > 1 {
        assert!(note.contains("largest first"), "{note}");
    }
    written.len()
}

#[test]
fn a_768_term_projection_writes_its_largest_terms_and_the_others_sum_in_80_columns() {
    let attention = computed("big-one-head", ONE_HEAD);
    let mut written = Vec::new();
    for matrix in [MatrixName::Q, MatrixName::K, MatrixName::V] {
        for (row, col) in [(0, 0), (0, 1), (7, 63), (15, 31)] {
            for decimals in [2, 3, 4] {
                let cell = Cell::new(matrix, row, col);
                written.push(check_largest_terms(&attention, cell, decimals));
            }
        }
    }
    assert!(
        written.contains(&2),
        "some cells write two terms: {written:?}"
    );
}

#[test]
fn a_64_term_score_and_a_16_term_output_write_their_largest_terms() {
    let attention = computed("big-one-head", ONE_HEAD);
    for (row, col) in [(0, 0), (3, 1), (15, 15), (15, 9)] {
        check_largest_terms(&attention, Cell::new(MatrixName::Scores, row, col), 3);
    }
    for (row, col) in [(0, 0), (15, 63), (9, 5)] {
        check_largest_terms(&attention, Cell::new(MatrixName::Output, row, col), 3);
    }
}

#[test]
fn a_score_of_the_twelfth_head_with_a_long_name_still_fits_its_line() {
    // `scores⁽¹²⁾[John₁₀, John₁₀]`: a name of 25 columns leaves no room for a term and
    // "63 more terms (sum s)"; the others' sum is then "63 more (sum s)".
    let attention = computed("big-twelve-heads", TWELVE_HEADS);
    for (row, col) in [(9, 9), (9, 3), (0, 0)] {
        let cell = Cell::new(MatrixName::Scores, row, col).in_head(11);
        check_largest_terms(&attention, cell, 3);
    }
}

#[test]
fn the_hints_of_a_long_sum_say_how_many_products_and_which_is_largest() {
    let attention = computed("big-one-head", ONE_HEAD);
    let cell = Cell::new(MatrixName::Q, 0, 0);
    let hints = hints(&attention, cell, 3).unwrap();
    let first = hints.get(HintLevel::FirstStep);
    assert!(
        first.starts_with("x_When · W_q[:, 1] is a sum of 768 products, the largest "),
        "{first}"
    );
    let explanation = attention.derive(cell).unwrap().explanation(&attention, 3);
    let largest = explanation.sides[1][0].trim_matches(['(', ')']);
    assert!(first.ends_with(largest), "{first} names {largest}");
    let working = hints.get(HintLevel::Working);
    assert!(working.contains("767 more terms (sum ") || working.contains("766 more terms (sum "));
    assert!(!working.contains(&explanation.sides[2][0]), "{working}");
}

#[test]
fn the_output_projection_of_twelve_heads_is_the_heads_parts_each_written_by_its_largest_terms() {
    let attention = computed("big-twelve-heads", TWELVE_HEADS);
    for (row, col) in [(0, 0), (15, 767), (4, 100)] {
        let cell = Cell::new(MatrixName::Projected, row, col);
        let derivation = attention.derive(cell).unwrap();
        let explanation = derivation.explanation(&attention, 3);
        let parts = &explanation.sides[1];
        assert_eq!(parts.len(), 12, "{parts:?}");
        let sum: f64 = parts
            .iter()
            .map(|part| part.trim_matches(['(', ')']).parse::<f64>().unwrap())
            .sum();
        assert_eq!(format_number(sum, 3), explanation.sides[2][0], "{parts:?}");
        let by_head = derivation.head_parts(&attention, 3).unwrap();
        for (head, part) in by_head.heads.iter().enumerate() {
            let (written, last) = part.sides[1].split_at(part.sides[1].len() - 1);
            let (others, rest_sum) = rest(&last[0]);
            assert_eq!(written.len() + others, 64, "head {}: {part:?}", head + 1);
            let worked: f64 = written
                .iter()
                .map(|piece| {
                    let (a, b) = product(piece);
                    a * b
                })
                .sum::<f64>()
                + rest_sum.parse::<f64>().unwrap();
            let said = &part.sides[2][0];
            assert_eq!(&format_number(worked, decimals_of(said)), said, "{part:?}");
            let line = part.sides[1].join(" + ");
            assert!(part.name.len() + 3 + line.chars().count() <= 78, "{line}");
        }
    }
}

#[test]
fn a_768_term_projection_with_a_bias_writes_it_after_the_others_sum_and_lands() {
    // b_q[c] = c / 10 − 3, large enough that leaving it out could not land.
    let biases: Vec<String> = (0..64)
        .map(|c| format!("{}", c as f64 / 10.0 - 3.0))
        .collect();
    let text = format!("{ONE_HEAD}b_q = [{}]\n", biases.join(", "));
    let attention = computed("big-one-head-biased", &text);
    for (row, col) in [(0, 0), (7, 63), (15, 31)] {
        let cell = Cell::new(MatrixName::Q, row, col);
        let derivation = attention.derive(cell).unwrap();
        let explanation = derivation.explanation(&attention, 3);
        let pieces = &explanation.sides[1];
        let bias = format_number(
            col as f64 / 10.0 - 3.0,
            decimals_of(pieces.last().unwrap().trim_matches(['(', ')'])),
        );
        assert_eq!(
            pieces.last().unwrap().trim_matches(['(', ')']),
            bias,
            "the bias is the last term: {pieces:?}"
        );
        let (_, rest_sum) = rest(&pieces[pieces.len() - 2]);
        let worked: f64 = pieces[..pieces.len() - 2]
            .iter()
            .map(|piece| {
                let (a, b) = product(piece);
                a * b
            })
            .sum::<f64>()
            + rest_sum.parse::<f64>().unwrap()
            + bias.parse::<f64>().unwrap();
        let result = &explanation.sides[2][0];
        assert!(!result.starts_with('≈'), "{pieces:?} = {result}");
        assert_eq!(format_number(worked, 3), *result, "{pieces:?}");
        let note = explanation.note.as_deref().unwrap_or_default();
        assert!(note.contains("then the others' sum and the bias"), "{note}");
    }
}

#[test]
fn twelve_heads_output_projection_with_a_bias_is_the_heads_parts_then_the_bias() {
    let biases: Vec<String> = (0..768)
        .map(|c| format!("{}", (c % 7) as f64 - 3.5))
        .collect();
    let text = format!("{TWELVE_HEADS}b_o = [{}]\n", biases.join(", "));
    let attention = computed("big-twelve-heads-biased", &text);
    for (row, col) in [(0, 0), (15, 767)] {
        let cell = Cell::new(MatrixName::Projected, row, col);
        let explanation = attention.derive(cell).unwrap().explanation(&attention, 3);
        let pieces = &explanation.sides[1];
        assert_eq!(pieces.len(), 13, "12 heads' parts and the bias: {pieces:?}");
        let worked: f64 = pieces
            .iter()
            .map(|piece| piece.trim_matches(['(', ')']).parse::<f64>().unwrap())
            .sum();
        let bias = (col % 7) as f64 - 3.5;
        assert_eq!(
            pieces[12].trim_matches(['(', ')']).parse::<f64>().unwrap(),
            bias
        );
        let result = &explanation.sides[2][0];
        assert_eq!(format_number(worked, 3), *result, "{pieces:?}");
        let note = explanation.note.as_deref().unwrap_or_default();
        assert!(note.ends_with(&format!("then b_o[{}]", col + 1)), "{note}");
        // Head by head (the tutor's < and >): one head's part, the others' and the bias.
        let by_head = attention
            .derive(cell)
            .unwrap()
            .head_parts(&attention, 3)
            .expect("an output projection with b_o is read head by head too");
        for whole in &by_head.wholes {
            assert_eq!(whole.sides[1].len(), 3, "{whole:?}");
            assert_eq!(whole.sides[1][2], format!("b_o[{}]", col + 1), "{whole:?}");
            let sum: f64 = whole.sides[2]
                .iter()
                .map(|number| number.trim_matches(['(', ')']).parse::<f64>().unwrap())
                .sum();
            assert_eq!(format_number(sum, 3), whole.sides[3][0], "{whole:?}");
        }
    }
}
