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
        // "(a × b)" terms, or with several heads "[(a × b) + (c × d)]", one group per head.
        Rule::Dot { .. } => Some(
            sides[1]
                .iter()
                .flat_map(|term| {
                    term.trim_start_matches('[')
                        .trim_end_matches(']')
                        .split(" + ")
                })
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
        // "a + (b)"
        Rule::Add { .. } => {
            let (a, b) = sides[1][0].split_once(" + ").unwrap();
            Some(number(a) + number(b.trim_start_matches('(').trim_end_matches(')')))
        }
        // "sin(angle)" or "cos(angle)" as written
        Rule::Sinusoid { cosine, .. } => {
            let angle = number(
                sides[2][0]
                    .trim_start_matches("sin(")
                    .trim_start_matches("cos(")
                    .trim_end_matches(')'),
            );
            Some(if *cosine { angle.cos() } else { angle.sin() })
        }
        // "(a × c) − (b × s)" or "(a × s) + (b × c)"
        Rule::Rotate { .. } => {
            let (sign, (left, right)) = match sides[1][0].split_once(" − ") {
                Some(halves) => (-1.0, halves),
                None => (1.0, sides[1][0].split_once(" + ").unwrap()),
            };
            let product = |text: &str| {
                let inner = text.trim_start_matches('(').trim_end_matches(')');
                let (a, b) = inner.split_once(" × ").unwrap();
                number(a) * number(b)
            };
            Some(product(left) + sign * product(right))
        }
        _ => None,
    }
}

/// Checks every working line of a lesson; returns the lines checked and those marked ≈.
fn check_lines(name: &str, text: &str) -> (usize, usize) {
    let (mut checked, mut approximate) = (0, 0);
    let loaded = load_text(name, None, text.to_string()).unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let decimals = loaded.lesson.decimals;
    for matrix_name in MatrixName::ALL {
        let Some(matrix) = attention.matrix(matrix_name) else {
            continue;
        };
        for row in 0..matrix.nrows() {
            for col in 0..matrix.ncols() {
                let derivation = attention.derive(Cell::new(matrix_name, row, col)).unwrap();
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
                    "{name}: {}",
                    derivation.explain(&attention, decimals)
                );
                checked += 1;
            }
        }
    }
    (checked, approximate)
}

#[test]
fn every_working_line_of_every_built_in_lesson_lands_on_its_result() {
    let (mut checked, mut approximate) = (0, 0);
    for builtin in BUILTIN {
        let (lines, marked) = check_lines(builtin.name, builtin.text);
        checked += lines;
        approximate += marked;
    }
    assert!(checked > 400, "only {checked} lines checked");
    assert_eq!(approximate, 0, "no built-in line needs ≈");
}

#[test]
fn every_working_line_of_random_lessons_lands_on_its_result_or_says_approximately() {
    // Format 2, so that positions and rotations are among the lines.
    let mut checked = 0;
    for seed in 1..=30u64 {
        let (tokens, width, decimals) = (2 + seed % 5, 2 + seed % 7, 1 + seed % 5);
        let labels: Vec<String> = (0..tokens).map(|t| format!("\"t{t}\"")).collect();
        // Positions of every kind, RoPE with an even d_k.
        let positions = ["none", "sinusoidal", "rope"][seed as usize % 3];
        let d_k = if positions == "rope" { 4 } else { 3 };
        let text = format!(
            "format = 2\ntitle = \"random {seed}\"\ntokens = [{}]\ndecimals = {decimals}\n\
             embeddings = {{ random = \"normal\", seed = {seed}, shape = [{tokens}, {width}] }}\n\
             w_q = {{ random = \"normal\", seed = {}, shape = [{width}, {d_k}] }}\n\
             w_k = {{ random = \"uniform\", seed = {}, shape = [{width}, {d_k}] }}\n\
             w_v = {{ random = \"normal\", seed = {}, shape = [{width}, 2] }}\nmask = \"causal\"\n\
             positions = \"{positions}\"\n",
            labels.join(", "),
            seed + 100,
            seed + 200,
            seed + 300
        );
        checked += check_lines(&format!("random {seed}"), &text).0;
    }
    assert!(checked > 1000, "only {checked} lines checked");
}
