//! Every working line is arithmetic a learner can redo: the operands as written, worked out as
//! written, give the result as written (rounded to the lesson's decimals), or the line says ≈.
//! In practice mode a learner who does exactly the shown arithmetic is then never marked wrong.

use attn_tutor::attention::number::format_number;
use attn_tutor::attention::{Attention, Cell, MatrixName, Rule};
use attn_tutor::lesson::{BUILTIN, load_text};

fn number(text: &str) -> f64 {
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {text:?}"))
}

/// What the written arithmetic of a side gives, for the rules whose arithmetic is one side.
fn worked(rule: &Rule, sides: &[Vec<String>]) -> Option<f64> {
    match rule {
        Rule::Dot { .. } => Some(
            sides[1]
                .iter()
                .map(|product| {
                    let inner = product.trim_start_matches('(').trim_end_matches(')');
                    let (a, b) = inner.split_once(" × ").unwrap();
                    number(a) * number(b)
                })
                .sum(),
        ),
        Rule::Scale { .. } => {
            let (a, b) = sides[2][0].split_once(" / ").unwrap();
            Some(number(a) / number(b))
        }
        Rule::Softmax { .. } if !sides[0][0].contains(" - ") => {
            let (a, b) = sides[1][0].split_once(" / ").unwrap();
            Some(number(a) / number(b))
        }
        _ => None,
    }
}

#[test]
fn every_working_line_of_every_built_in_lesson_lands_on_its_result() {
    let mut checked = 0;
    let mut approximate = 0;
    for builtin in BUILTIN {
        let loaded = load_text(builtin.name, None, builtin.text.to_string()).unwrap();
        let attention = Attention::compute(&loaded.lesson);
        let decimals = loaded.lesson.decimals;
        for name in MatrixName::ALL {
            let Some(matrix) = attention.matrix(name) else {
                continue;
            };
            for row in 0..matrix.nrows() {
                for col in 0..matrix.ncols() {
                    let derivation = attention.derive(Cell::new(name, row, col)).unwrap();
                    let explanation = derivation.explanation(&attention, decimals);
                    let Some(worked) = worked(&derivation.rule, &explanation.sides) else {
                        continue;
                    };
                    let result = explanation.sides.last().unwrap()[0].clone();
                    if result.starts_with('≈') {
                        approximate += 1;
                        continue;
                    }
                    assert_eq!(
                        format_number(worked, decimals),
                        result,
                        "{}: {}",
                        builtin.name,
                        derivation.explain(&attention, decimals)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 400, "only {checked} lines checked");
    assert_eq!(approximate, 0, "no built-in line needs ≈");
}
