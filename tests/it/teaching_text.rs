//! The teaching text is checked like the numbers (issue 12): every narration of the built-in
//! lessons and every default text says what the numbers beside it show, and every number a
//! narration quotes is a value of its lesson.

use attn_tutor::attention::quotes::{quotable, quoted_numbers};
use attn_tutor::attention::{Attention, MatrixName, Step, softmax_rows};
use attn_tutor::lesson::{BUILTIN, LoadedLesson, load_text, template};
use nalgebra::DMatrix;

use crate::common::{fixture, go_to, lesson_app, show};

fn lesson(name: &str) -> LoadedLesson {
    let builtin = BUILTIN
        .iter()
        .find(|builtin| builtin.name == name)
        .unwrap_or_else(|| panic!("no built-in lesson {name}"));
    load_text(builtin.name, None, builtin.text.to_string()).expect("a built-in lesson loads")
}

fn narration(name: &str, step: Step) -> String {
    lesson(name)
        .lesson
        .narration
        .get(step)
        .unwrap_or_else(|| panic!("{name} has no narration for {step:?}"))
        .to_string()
}

/// Every text shown for `step`: each built-in lesson's own narration, and the default.
fn texts_for(step: Step) -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = BUILTIN
        .iter()
        .filter_map(|builtin| {
            let text = lesson(builtin.name).lesson.narration.get(step)?.to_string();
            Some((builtin.name.to_string(), text))
        })
        .collect();
    texts.push((
        "the default text".to_string(),
        step.default_narrations().join("\n"),
    ));
    texts
}

fn fixed(value: f64, decimals: usize) -> String {
    format!("{value:.decimals$}")
}

fn length(row: nalgebra::DMatrixView<f64>) -> f64 {
    row.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn cosine(a: nalgebra::DMatrixView<f64>, b: nalgebra::DMatrixView<f64>) -> f64 {
    let dot: f64 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
    dot / (length(a) * length(b))
}

fn row(matrix: &DMatrix<f64>, r: usize) -> nalgebra::DMatrixView<'_, f64> {
    matrix.view((r, 0), (1, matrix.ncols()))
}

fn argmax(values: nalgebra::DMatrixView<f64>) -> usize {
    (0..values.len())
        .max_by(|a, b| values[*a].total_cmp(&values[*b]))
        .unwrap()
}

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

// --- item 1: a dot product is alignment times lengths -----------------------------------------

#[test]
fn no_scores_text_describes_the_dot_product_as_direction_alone() {
    let direction_words = ["direction", "point", "lines up", "align", "angle", "match"];
    for (whose, text) in texts_for(Step::Scores) {
        for claim in [
            "lines up best",
            "points in the same direction as the key",
            "large when they point the same way",
        ] {
            assert!(!text.contains(claim), "{whose} says `{claim}`: {text}");
        }
        if direction_words.iter().any(|word| text.contains(word)) {
            assert!(
                text.contains("length"),
                "{whose} speaks of direction but not of length: {text}"
            );
        }
    }
}

#[test]
fn cat_sleeps_shows_that_the_longest_key_not_the_best_aligned_wins_the_row_of_sleeps() {
    let loaded = lesson("cat-sleeps");
    let attention = Attention::compute(&loaded.lesson);
    let text = narration("cat-sleeps", Step::Scores);
    let sleeps = 2;
    let scores = row(attention.matrix(MatrixName::Scores).unwrap(), sleeps);
    let cosines: Vec<f64> = (0..3)
        .map(|j| {
            cosine(
                row(attention.matrix(MatrixName::Q).unwrap(), sleeps),
                row(attention.matrix(MatrixName::K).unwrap(), j),
            )
        })
        .collect();
    let lengths: Vec<f64> = (0..3)
        .map(|j| length(row(attention.matrix(MatrixName::K).unwrap(), j)))
        .collect();
    let winner = argmax(scores);
    assert_eq!(attention.tokens[winner], "cat");
    // The claim the narration makes: cat wins on length, though it is the worst aligned.
    assert!(cosines.iter().all(|c| *c >= cosines[winner]));
    assert!(lengths.iter().all(|l| *l <= lengths[winner]));
    for value in cosines.iter().chain(&lengths) {
        let quoted = fixed(*value, 3);
        assert!(text.contains(&quoted), "no {quoted} in: {text}");
    }
    assert_eq!(fixed(cosines[1], 3), "0.919");
}

#[test]
fn numpy_walkthrough_shows_that_word3_wins_the_row_of_word1_on_length() {
    let loaded = lesson("numpy-walkthrough");
    let attention = Attention::compute(&loaded.lesson);
    let text = narration("numpy-walkthrough", Step::Scores);
    let scores = row(attention.matrix(MatrixName::Scores).unwrap(), 0);
    let cosines: Vec<f64> = (0..3)
        .map(|j| {
            cosine(
                row(attention.matrix(MatrixName::Q).unwrap(), 0),
                row(attention.matrix(MatrixName::K).unwrap(), j),
            )
        })
        .collect();
    let lengths: Vec<f64> = (0..3)
        .map(|j| length(row(attention.matrix(MatrixName::K).unwrap(), j)))
        .collect();
    let winner = argmax(scores);
    assert_eq!(winner, 2, "word3 has the largest score of row word1");
    assert!(cosines.iter().all(|c| *c >= cosines[winner]));
    assert!(lengths.iter().all(|l| *l <= lengths[winner]));
    assert!(text.contains(&fixed(scores[winner], 3)), "{text}");
    assert!(text.contains(&fixed(lengths[winner], 3)), "{text}");
    assert!(text.contains(&fixed(cosines[winner], 2)), "{text}");
    assert!(text.contains(&fixed(cosines[0], 3)), "{text}");
    assert!(text.contains(&fixed(cosines[1], 3)), "{text}");
}

// --- item 2: √d_k by the variance argument ----------------------------------------------------

#[test]
fn every_scaling_text_gives_the_variance_argument_not_length() {
    for (whose, text) in texts_for(Step::Scaling) {
        for claim in [
            "longer vectors",
            "length of the vectors",
            "long vectors",
            "grow with the width",
        ] {
            assert!(!text.contains(claim), "{whose} says `{claim}`: {text}");
        }
        assert!(
            text.contains("variance") && text.contains("gradients"),
            "{whose} does not give the variance argument of Vaswani et al.: {text}"
        );
    }
}

// --- item 3: a score of 0 is not zero attention -----------------------------------------------

#[test]
fn identity_2x2_says_a_score_of_0_still_gets_weight() {
    let loaded = lesson("identity-2x2");
    let attention = Attention::compute(&loaded.lesson);
    let text = narration("identity-2x2", Step::Scores);
    assert!(!text.contains("cares only about itself"), "{text}");
    let raw = softmax_rows(attention.matrix(MatrixName::Scores).unwrap()).weights;
    assert!(text.contains(&fixed(raw[(0, 0)], 3)), "{text}");
    assert!(text.contains(&fixed(raw[(0, 1)], 3)), "{text}");
}

// --- item 4: softmax and output texts true for the lesson they are shown in -------------------

#[test]
fn random_qkv_does_not_promise_negative_scores_a_small_weight() {
    let loaded = lesson("random-qkv");
    let attention = Attention::compute(&loaded.lesson);
    let text = narration("random-qkv", Step::Softmax);
    assert!(
        !text.contains("Negative scores still get a small"),
        "{text}"
    );
    let scaled = attention.matrix(MatrixName::Scaled).unwrap();
    // The example it quotes: word2's own scaled score is negative and its weight is as said.
    assert!(scaled[(1, 1)] < 0.0);
    assert!(text.contains(&fixed(scaled[(1, 1)], 3)), "{text}");
    assert!(
        text.contains(&fixed(attention.weights()[(1, 1)], 2)),
        "{text}"
    );
}

#[test]
fn the_default_softmax_and_output_texts_are_true_under_a_mask() {
    let softmax = &Step::Softmax.default_narrations().join("\n");
    assert!(
        !softmax.contains("weights that are positive and sum to 1"),
        "{softmax}"
    );
    assert!(
        softmax.contains("exactly 0") && softmax.contains("all 0"),
        "{softmax}"
    );
    let output = &Step::Output.default_narrations().join("\n");
    assert!(
        !output.contains("weighted average of all the value"),
        "{output}"
    );
    assert!(
        output.contains("weight 0") && output.contains("output of 0"),
        "{output}"
    );
}

#[test]
fn the_softmax_text_says_the_workings_take_exp_of_the_score_itself() {
    // The backward lesson's working is exp(1.4142) = 4.1133: nothing subtracted. The text said
    // "The row maximum is subtracted first".
    let softmax = &Step::Softmax.default_narrations().join("\n");
    assert!(
        softmax.contains("The workings show exp(score) itself; libraries subtract the row maximum"),
        "{softmax}"
    );
    let loaded = lesson("backward");
    let attention = Attention::compute(&loaded.lesson);
    let working = attention
        .derive(attn_tutor::attention::Cell::new(MatrixName::Weights, 0, 0))
        .unwrap()
        .explain(&attention, loaded.lesson.decimals);
    assert!(
        working.contains("exp(1.414214) / Σ exp(scaled[cat, :]) = 4.1133 / 5.1133"),
        "{working}"
    );
}

#[test]
fn the_softmax_aside_writes_a_zero_or_negative_row_maximum_as_a_learner_would() {
    // Row maxima 1.414, 0 and −0.354 after scaling by √2.
    let mut app = lesson_app(
        "maxima",
        r#"title = "Row maxima"
format = 1
tokens = ["a", "b", "c"]
q = [[1, 0], [0, 0], [-1, 0]]
k = [[1, 0], [0.5, 0], [2, 0]]
v = [[1, 0], [0, 1], [1, 1]]
"#,
    );
    go_to(&mut app, "softmax");
    let mut asides = Vec::new();
    for _ in 0..3 {
        let screen = crate::common::screen(&app, 120, 40);
        let aside: String = screen
            .lines()
            .skip_while(|line| !line.contains("Aside:"))
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        asides.push(aside);
        attn_tutor::app::update(
            &mut app,
            attn_tutor::app::Action::Move(attn_tutor::app::Direction::Down),
        );
    }
    assert!(
        asides[0].contains("exp(x − 1.414)") && asides[0].contains("e^−1.414"),
        "{}",
        asides[0]
    );
    assert!(
        asides[1].contains("this row's maximum is 0"),
        "{}",
        asides[1]
    );
    assert!(!asides[1].contains("x − 0"), "{}", asides[1]);
    assert!(
        asides[2].contains("exp(x + 0.354)") && asides[2].contains("e^0.354"),
        "{}",
        asides[2]
    );
    assert!(
        asides.iter().all(|aside| !aside.contains("−-")),
        "{asides:?}"
    );
}

// --- item 5: why cat-sat-mat's document shows [0.4012, 0.4721] --------------------------------

#[test]
fn cat_sat_mat_blames_the_misrounded_weight_with_the_right_sums() {
    let loaded = lesson("cat-sat-mat");
    let attention = Attention::compute(&loaded.lesson);
    let text = narration("cat-sat-mat", Step::Output);
    let cat = 1;
    let decimals = loaded.lesson.decimals;
    let round = |x: f64| (x * 10f64.powi(decimals as i32)).round() / 10f64.powi(decimals as i32);
    let rounded: Vec<f64> = attention
        .weights()
        .row(cat)
        .iter()
        .map(|w| round(*w))
        .collect();
    let sums: Vec<String> = (0..2)
        .map(|c| {
            let sum: f64 = (0..6)
                .map(|j| rounded[j] * attention.matrix(MatrixName::V).unwrap()[(j, c)])
                .sum();
            fixed(sum, decimals)
        })
        .collect();
    assert_eq!(sums, ["0.4011", "0.4719"]);
    assert!(
        text.contains(&format!("[{}, {}]", sums[0], sums[1])),
        "{text}"
    );
    assert!(text.contains("0.2687"), "{text}");
    assert!(
        !text.contains("because it added up weights that were already rounded"),
        "{text}"
    );
    assert!(!readme().contains("because the document summed rounded weights"));
}

#[test]
fn identity_2x2_names_all_four_output_formulas_and_they_hold() {
    let builtin = BUILTIN.iter().find(|b| b.name == "identity-2x2").unwrap();
    for formula in ["3 - 2w", "4 - 2w", "1 + 2w", "2 + 2w"] {
        assert!(builtin.text.contains(formula), "no {formula}");
    }
    let attention = Attention::compute(&lesson("identity-2x2").lesson);
    let (w1, w2) = (attention.weights()[(0, 0)], attention.weights()[(1, 1)]);
    let out = attention.matrix(MatrixName::Output).unwrap();
    for (value, formula) in [
        (out[(0, 0)], 3.0 - 2.0 * w1),
        (out[(0, 1)], 4.0 - 2.0 * w1),
        (out[(1, 0)], 1.0 + 2.0 * w2),
        (out[(1, 1)], 2.0 + 2.0 * w2),
    ] {
        assert!((value - formula).abs() < 1e-12);
    }
}

// --- item 6: smaller slips ---------------------------------------------------------------------

#[test]
fn the_readme_gives_the_exact_weight_of_cat_sat_mat_and_says_which_lessons_are_exact() {
    let readme = readme();
    let attention = Attention::compute(&lesson("cat-sat-mat").lesson);
    let exact = fixed(attention.weights()[(1, 1)], 7);
    assert_eq!(exact, "0.2686495");
    assert!(readme.contains(&exact), "README lacks {exact}");
    assert!(!readme.contains("0.26865 exactly"));
    assert!(
        !readme.contains("Each reproduces the worked example of a well-known explainer exactly")
    );
}

#[test]
fn values_are_blended_not_picked() {
    for (whose, text) in texts_for(Step::Projection) {
        assert!(!text.contains("when it is picked"), "{whose}: {text}");
    }
}

#[test]
fn the_new_template_says_w_v_is_d_model_by_d_v() {
    let text = template("Mine");
    assert!(
        !text.contains("# The projections (d_model x d_k)."),
        "{text}"
    );
    assert!(text.contains("d_model x d_v"), "{text}");
}

// --- every number a narration quotes is a value of its lesson ----------------------------------

#[test]
fn every_number_quoted_in_a_narration_is_a_value_of_its_lesson() {
    let mut checked = 0;
    for builtin in BUILTIN {
        let loaded = lesson(builtin.name);
        let attention = Attention::compute(&loaded.lesson);
        let values = quotable(&loaded.lesson, &attention);
        for step in Step::ALL {
            let Some(text) = loaded.lesson.narration.get(step) else {
                continue;
            };
            for quoted in quoted_numbers(text) {
                let decimals = quoted.split_once('.').map_or(0, |(_, f)| f.len());
                let target: f64 = quoted.parse().unwrap();
                assert!(
                    values
                        .iter()
                        .any(|value| fixed(*value, decimals).parse::<f64>() == Ok(target)),
                    "{} {step:?} quotes {quoted}, which is no value of the lesson rounded to \
                     {decimals} decimals",
                    builtin.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 80, "only {checked} numbers found");
}

// --- issue 29, items 5–8: citations and claims that hold ----------------------------------------

#[test]
fn the_accumulator_divided_once_at_the_end_is_cited_to_flashattention_2() {
    let online = Step::OnlineSoftmax.default_narrations().join("\n");
    assert!(
        online.contains("FlashAttention-2 does it (Dao 2023)"),
        "{online}"
    );
    assert!(
        !online.contains("FlashAttention does it (Dao et al. 2022)"),
        "{online}"
    );
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/lesson-format.md"
    ))
    .unwrap();
    for (whose, text) in [("README", readme()), ("docs", docs)] {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("FlashAttention-2 (Dao 2023)"), "{whose}");
        assert!(
            !flat.contains("FlashAttention (Dao et al. 2022) computes"),
            "{whose}"
        );
        assert!(
            !flat.contains("FlashAttention (Dao et al. 2022) never"),
            "{whose}"
        );
    }
}

#[test]
fn positions_cat_sat_mat_says_the_bag_of_words_holds_without_a_causal_mask() {
    let loaded = lesson("positions-cat-sat-mat");
    assert_eq!(loaded.lesson.mask, attn_tutor::lesson::Mask::None);
    let text = narration("positions-cat-sat-mat", Step::Output);
    assert!(text.contains("bag of words"), "{text}");
    assert!(text.contains("without a causal mask"), "{text}");
}

#[test]
fn two_heads_does_not_say_an_average_can_never_be_told_apart() {
    let text = narration("two-heads", Step::OutputProjection);
    assert!(!text.contains("can no longer be told apart"), "{text}");
    assert!(text.contains("depends on the values"), "{text}");
}

#[test]
fn the_variance_argument_gives_its_assumption_and_vaswanis_own_words() {
    for (whose, text) in texts_for(Step::Scaling) {
        assert!(
            text.contains("independent"),
            "{whose} leaves out independence: {text}"
        );
        assert!(!text.contains("learning stalls"), "{whose}: {text}");
        assert!(!text.contains("learning slows"), "{whose}: {text}");
    }
    let default = Step::Scaling.default_narrations().join("\n");
    assert!(
        default.contains("“into regions where it has extremely small gradients”"),
        "{default}"
    );
    // q·q of normal entries: a sum of d_k squares, χ² with d_k degrees, variance 2·d_k.
    assert!(default.contains("variance 2·d_k"), "{default}");
}

/// What a step says about a lesson's plan or numbers (Q, K and V given, scaling off, a row the
/// mask hides entirely) is worded once: `show` and the tutor say the same sentence.
#[test]
fn show_and_the_tutor_say_a_steps_note_in_the_same_words() {
    for (fixture_name, step, words) in [
        (
            "direct-qkv.toml",
            Step::Projection,
            "gives Q, K and V directly",
        ),
        ("direct-qkv.toml", Step::Scaling, "scale = false"),
        ("medium-masked.toml", Step::Scaling, "scale = false"),
        ("medium-masked.toml", Step::Softmax, "hides every key"),
    ] {
        let path = fixture(fixture_name);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut app = lesson_app(fixture_name, &text);
        go_to(&mut app, step.key());
        let tutor = attn_tutor::ui::narration_text(app.tutor().unwrap());
        let note = tutor
            .lines()
            .find(|line| line.contains(words))
            .unwrap_or_else(|| panic!("the tutor's {step:?} of {fixture_name} says {words:?}"))
            .to_string();
        let shown = show(path.to_str().unwrap(), &["--step", step.key()]);
        assert!(
            shown.contains(&format!("Note: {note}")),
            "show --step {} of {fixture_name} says the tutor's {note:?}:\n{shown}",
            step.key()
        );
    }
}

/// A value of the arithmetic a narration writes out: a number or a row of numbers.
#[derive(Debug, Clone)]
enum Worked {
    Number(f64),
    Row(Vec<f64>),
}

impl Worked {
    fn numbers(&self) -> Vec<f64> {
        match self {
            Worked::Number(value) => vec![*value],
            Worked::Row(values) => values.clone(),
        }
    }
}

/// Applies `op` cell by cell (a number against a row goes with each cell).
fn combine(a: Worked, b: Worked, op: fn(f64, f64) -> f64) -> Option<Worked> {
    Some(match (a, b) {
        (Worked::Number(a), Worked::Number(b)) => Worked::Number(op(a, b)),
        (Worked::Row(a), Worked::Row(b)) if a.len() == b.len() => {
            Worked::Row(a.iter().zip(&b).map(|(x, y)| op(*x, *y)).collect())
        }
        (Worked::Row(a), Worked::Number(b)) => Worked::Row(a.iter().map(|x| op(*x, b)).collect()),
        (Worked::Number(a), Worked::Row(b)) => Worked::Row(b.iter().map(|y| op(a, *y)).collect()),
        _ => return None,
    })
}

/// The narrations' arithmetic, read as written: numbers, rows `[a, b]`, `+`, `−`/`-`, `×`, `/`,
/// `√` and parentheses; `None` for anything else.
struct Arithmetic<'a> {
    text: &'a str,
}

impl Arithmetic<'_> {
    fn skip_spaces(&mut self) {
        self.text = self.text.trim_start();
    }

    fn eat(&mut self, symbols: &[char]) -> Option<char> {
        self.skip_spaces();
        let first = self.text.chars().next()?;
        if symbols.contains(&first) {
            self.text = &self.text[first.len_utf8()..];
            Some(first)
        } else {
            None
        }
    }

    fn sum(&mut self) -> Option<Worked> {
        let mut value = self.product()?;
        while let Some(op) = self.eat(&['+', '−', '-']) {
            let right = self.product()?;
            value = combine(
                value,
                right,
                if op == '+' {
                    |a, b| a + b
                } else {
                    |a, b| a - b
                },
            )?;
        }
        Some(value)
    }

    fn product(&mut self) -> Option<Worked> {
        let mut value = self.unary()?;
        while let Some(op) = self.eat(&['×', '/']) {
            let right = self.unary()?;
            value = combine(
                value,
                right,
                if op == '×' {
                    |a, b| a * b
                } else {
                    |a, b| a / b
                },
            )?;
        }
        Some(value)
    }

    fn unary(&mut self) -> Option<Worked> {
        if self.eat(&['-', '−']).is_some() {
            return combine(Worked::Number(0.0), self.unary()?, |a, b| a - b);
        }
        if self.eat(&['√']).is_some() {
            return combine(Worked::Number(0.0), self.unary()?, |_, b| b.sqrt());
        }
        if self.eat(&['(']).is_some() {
            let value = self.sum()?;
            self.eat(&[')'])?;
            return Some(value);
        }
        if self.eat(&['[']).is_some() {
            let mut row = Vec::new();
            loop {
                match self.sum()? {
                    Worked::Number(value) => row.push(value),
                    Worked::Row(_) => return None,
                }
                if self.eat(&[',']).is_none() {
                    break;
                }
            }
            self.eat(&[']'])?;
            return Some(Worked::Row(row));
        }
        self.skip_spaces();
        let end = self
            .text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(self.text.len());
        let number = self.text[..end].parse().ok()?;
        self.text = &self.text[end..];
        Some(Worked::Number(number))
    }

    /// The whole text as one value.
    fn whole(text: &str) -> Option<Worked> {
        let mut reader = Arithmetic { text };
        let value = reader.sum()?;
        reader.skip_spaces();
        reader.text.is_empty().then_some(value)
    }
}

/// The result written at the start of a side: a number or a row of numbers, each with its
/// decimals.
fn written_result(side: &str) -> Option<Vec<(f64, usize)>> {
    let side = side.trim_start();
    let inner = match side.strip_prefix('[') {
        Some(rest) => &rest[..rest.find(']')?],
        None => side
            .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
            .next()?,
    };
    inner
        .split(',')
        .map(|number| {
            let number = number.trim();
            let decimals = number
                .split_once('.')
                .map_or(0, |(_, fraction)| fraction.len());
            Some((number.parse().ok()?, decimals))
        })
        .collect()
}

/// Every `arithmetic = result` in a text, as (arithmetic, result, what the arithmetic gives):
/// the arithmetic is a whole side between two `=` or a run of only numbers and operators,
/// with at least one operation (a bare number or row is not worked out). `4 x 2` is read as
/// `4 × 2`, as the lessons write it.
fn equalities(text: &str) -> Vec<(String, String, Vec<f64>)> {
    let text = text.replace(" x ", " × ");
    let arithmetic = |c: char| c.is_ascii_digit() || ".,×/+−-()[]√ =".contains(c);
    let mut found = Vec::new();
    for run in text.split(|c: char| !arithmetic(c)) {
        let sides: Vec<&str> = run.split('=').collect();
        for pair in sides.windows(2) {
            let left = pair[0].trim().trim_end_matches(',').trim();
            // A minus sign alone is a negative number, not an operation.
            let operated = left.contains(['×', '/', '+', '−', '√']) || left.contains(" - ");
            if !operated || written_result(pair[1]).is_none() {
                continue;
            }
            let Some(value) = Arithmetic::whole(left) else {
                continue;
            };
            found.push((
                left.to_string(),
                pair[1].trim().to_string(),
                value.numbers(),
            ));
        }
    }
    found
}

/// Every equality a built-in narration writes out redoes at the decimals its result is
/// written with: `0.80443 × 1 + 0.19557 × 3 = 1.39114`, not operands too short to give it.
#[test]
fn every_sum_a_built_in_narration_works_out_redoes_at_its_shown_precision() {
    let mut checked = 0;
    let mut in_backward = 0;
    let mut wrong = Vec::new();
    for builtin in BUILTIN {
        let loaded = lesson(builtin.name);
        for step in Step::ALL {
            let Some(text) = loaded.lesson.narration.get(step) else {
                continue;
            };
            for (left, right, values) in equalities(text) {
                let Some(written) = written_result(&right) else {
                    continue;
                };
                checked += 1;
                in_backward += usize::from(builtin.name == "backward");
                let lands = written.len() == values.len()
                    && written
                        .iter()
                        .zip(&values)
                        .all(|((shown, decimals), value)| {
                            (shown - value).abs()
                                <= 0.5 * 10f64.powi(-(*decimals as i32)) * (1.0 + 1e-9)
                        });
                if !lands {
                    wrong.push(format!(
                        "{} {step:?}: {left} = {right} gives {values:?}",
                        builtin.name
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The reader finds the worked sums it is for: backward's six, and others'.
    assert_eq!(in_backward, 6, "backward's worked sums");
    assert!(checked >= 10, "only {checked} equalities found");
    eprintln!("{checked} equalities checked");
}

#[test]
fn the_narration_arithmetic_reader_redoes_what_is_written() {
    let found =
        equalities("so avg[cat] = 0.8044 × 1 + 0.1956 × 3 = 1.3911 (L itself), and [1, -1] = 1.");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!((found[0].2[0] - 1.3912).abs() < 1e-12);
    let found =
        equalities("W_q has 4 x 2 = 8 columns; dS = [0.5 × (1 − 2), 2 / 4] = [-0.5, 0.5]: √4 = 2");
    let values: Vec<Vec<f64>> = found.iter().map(|(_, _, values)| values.clone()).collect();
    assert_eq!(values, vec![vec![8.0], vec![-0.5, 0.5], vec![2.0]]);
}
