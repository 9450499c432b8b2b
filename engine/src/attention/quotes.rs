//! Numbers a narration quotes, checked against its lesson like printed figures: a narration
//! written for other numbers (an edited and saved lesson, a copied text) says so in `check`.
//! Only decimals are checked: whole numbers such as the 1 and 0 of an embedding are everywhere.

use nalgebra::{DMatrix, DMatrixView};

use super::{Attention, MatrixName, Step, rope_angle, sinusoid_angle, softmax_rows};
use crate::lesson::Lesson;
use crate::ops;
use crate::pipeline::Op;

/// A decimal a narration quotes that no value of its lesson rounds to.
#[derive(Debug, Clone, PartialEq)]
pub struct UnmatchedQuote {
    pub step: Step,
    pub quoted: String,
}

/// Every decimal quoted in the lesson's own narration that is no value of the lesson rounded
/// to the decimals it is written with.
pub fn unmatched_quotes(lesson: &Lesson, attention: &Attention) -> Vec<UnmatchedQuote> {
    let mut unmatched = Vec::new();
    let mut values: Option<Vec<f64>> = None;
    for step in Step::ALL {
        let Some(text) = lesson.narration.get(step) else {
            continue;
        };
        for quoted in quoted_numbers(text) {
            let values = values.get_or_insert_with(|| quotable(lesson, attention));
            let decimals = quoted
                .split_once('.')
                .map_or(0, |(_, fraction)| fraction.len());
            let Ok(target) = quoted.parse::<f64>() else {
                continue;
            };
            // Within half a unit of the last decimal, with room for binary rounding.
            let half = 0.5 * 10f64.powi(-(decimals as i32)) * (1.0 + 1e-9);
            if !values.iter().any(|value| (value - target).abs() <= half) {
                unmatched.push(UnmatchedQuote { step, quoted });
            }
        }
    }
    unmatched
}

/// The values a narration may quote: every cell of the lesson's matrices and of its printed
/// figures, and what a learner computes on the way (lengths, cosines, exps and their sums, √d_k,
/// the softmax of the raw scores, the output from weights rounded to the lesson's decimals).
pub fn quotable(lesson: &Lesson, attention: &Attention) -> Vec<f64> {
    let mut values = vec![attention.scale_divisor];
    for figure in &lesson.expected.figures {
        for printed in figure.rows.iter().flat_map(|row| &row.values) {
            values.push(printed.value);
        }
    }
    for head in 0..attention.heads().query {
        values.extend(quotable_in_head(lesson, attention, head));
    }
    // What each head contributes to a cell of the output, which its working names.
    if let (Some(concat), Some(w_o), Some(head_output)) = (
        attention.matrix(MatrixName::Concat),
        attention.matrix(MatrixName::WO),
        attention.matrix(MatrixName::Output),
    ) {
        let width = head_output.ncols();
        for row in 0..concat.nrows() {
            for col in 0..w_o.ncols() {
                for head in 0..attention.heads().query {
                    let block = (head * width..(head + 1) * width).filter(|&m| m < w_o.nrows());
                    values.push(block.map(|m| concat[(row, m)] * w_o[(m, col)]).sum());
                }
            }
        }
    }
    values
}

/// The values of one head: every cell of its matrices (and of the lesson's own), and what a
/// learner computes on the way.
fn quotable_in_head(lesson: &Lesson, attention: &Attention, head: usize) -> Vec<f64> {
    let mut values = Vec::new();
    for name in MatrixName::ALL {
        if let Some(matrix) = attention.matrix_at(name, head, 0) {
            values.extend(matrix.iter().copied());
        }
    }
    let empty = DMatrix::zeros(0, 0);
    let matrix = |name: MatrixName| attention.matrix_in(name, head).unwrap_or(&empty);
    values.extend(
        softmax_rows(matrix(MatrixName::Scores))
            .weights
            .iter()
            .copied(),
    );
    if let Some(input) = attention.matrix_in(attention.softmax_input(), head) {
        for r in 0..input.nrows() {
            let exps: Vec<f64> = input.row(r).iter().map(|x| x.exp()).collect();
            values.push(exps.iter().sum());
            values.extend(exps);
        }
    }
    // The vectors that meet in the scores: Q and K, or their rotations with RoPE.
    let (queries, keys) = match attention.plan.origin(MatrixName::Scores) {
        Some(Op::Product(ops::Product { left, right, .. })) => (matrix(left), matrix(right)),
        _ => (matrix(MatrixName::Q), matrix(MatrixName::K)),
    };
    for name in [
        MatrixName::Q,
        MatrixName::K,
        MatrixName::V,
        MatrixName::QRope,
        MatrixName::KRope,
    ] {
        let vectors = matrix(name);
        values.extend((0..vectors.nrows()).map(|r| length(row(vectors, r))));
    }
    for i in 0..queries.nrows() {
        for j in 0..keys.nrows() {
            values.push(cosine(row(queries, i), row(keys, j)));
        }
    }
    // The angles of the positions: p / 10000^(2i/d_model) and p · θ^(−2i/d_k).
    let theta = attention.plan.shape.rope.theta;
    let rope_angle = |p, i, d_k| rope_angle(p, i, d_k, theta);
    for (name, angle) in [
        (
            MatrixName::Positions,
            &sinusoid_angle as &dyn Fn(usize, usize, usize) -> f64,
        ),
        (MatrixName::QRope, &rope_angle),
    ] {
        if let Some(Op::Sinusoid(_) | Op::Rotate(_)) = attention.plan.origin(name) {
            let (rows, cols) = matrix(name).shape();
            for p in 0..rows {
                values.extend((0..cols / 2).map(|i| angle(p, i, cols)));
            }
        }
    }
    let scale = 10f64.powi(lesson.decimals as i32);
    let rounded = attention
        .weights_of(head)
        .map(|w| (w * scale).round() / scale);
    let v = matrix(MatrixName::V);
    if rounded.ncols() == v.nrows() {
        values.extend((&rounded * v).iter().copied());
    }
    values
}

/// The decimal numbers written in a text (those with a point), with their sign; numbers inside
/// a word (x1, word3) or glued to one (1e9) are not quotes of a value.
pub fn quoted_numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'));
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || (chars[i] == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        if chars.get(i).is_some_and(|c| c.is_alphabetic()) {
            continue;
        }
        let negative = start > 0 && (chars[start - 1] == '-' || chars[start - 1] == '−');
        let number: String = chars[start..i].iter().collect();
        if number.contains('.') {
            numbers.push(if negative {
                format!("-{number}")
            } else {
                number
            });
        }
    }
    numbers
}

fn length(row: DMatrixView<f64>) -> f64 {
    row.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn cosine(a: DMatrixView<f64>, b: DMatrixView<f64>) -> f64 {
    let dot: f64 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
    dot / (length(a) * length(b))
}

fn row(matrix: &DMatrix<f64>, r: usize) -> DMatrixView<'_, f64> {
    matrix.view((r, 0), (1, matrix.ncols()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_reader_finds_signed_decimals_and_skips_labels() {
        assert_eq!(
            quoted_numbers("x1 is [1, 0], cat -0.7071 and 2.028 / 3.028; 1e9 or word3 at 1.5."),
            ["-0.7071", "2.028", "3.028", "1.5"]
        );
    }
}
