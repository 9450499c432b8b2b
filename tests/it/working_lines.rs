//! Every working line is arithmetic a learner can redo: the operands as written, worked out as
//! written, give the result as written (rounded to the lesson's decimals), or the line says ≈.
//! In practice mode a learner who does exactly the shown arithmetic is then never marked wrong.

use attn_tutor::attention::number::format_fixed;
use attn_tutor::attention::{Attention, Cell, MatrixName, Rule};
use attn_tutor::pipeline::Per;
use attn_tutor::workings::{Dot, Sinusoid};

use crate::common;

use attn_tutor::lesson::{BUILTIN, load_text};
use common::arithmetic;

fn number(text: &str) -> f64 {
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {text:?}"))
}

/// The sum S of a long dot product's rest as written, `N more terms (sum S)` or `N more (sum S)`.
fn rest_sum(term: &str) -> Option<&str> {
    let (_, sum) = term
        .split_once(" more terms (sum ")
        .or_else(|| term.split_once(" more (sum "))?;
    sum.strip_suffix(')')
}

/// `text` with each long dot product's rest, `N more terms (sum S)`, written as the number it
/// adds, `(S)`: the arithmetic a learner redoes.
fn rests_as_sums(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" more") {
        // The count before " more", and the sum after it.
        let count_at = rest[..at]
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |space| space + 1);
        let after = &rest[count_at..];
        match after
            .find(')')
            .map(|end| &after[..=end])
            .filter(|piece| count_at < at && rest_sum(piece).is_some())
        {
            Some(piece) => {
                out.push_str(&rest[..count_at]);
                out.push_str(&format!("({})", rest_sum(piece).unwrap_or_default()));
                rest = &after[piece.len()..];
            }
            None => {
                out.push_str(&rest[..at + " more".len()]);
                rest = &rest[at + " more".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// What the written arithmetic of a side gives, for the rules whose arithmetic is one side.
fn worked(rule: &Rule, sides: &[Vec<String>]) -> Option<f64> {
    match rule {
        // "(a × b)" terms, or with several heads "[(a × b) + (c × d)]", one group per head; a
        // long one's largest terms, then "N more terms (sum S)", then its bias where it has one.
        Rule::Dot(_) => Some(
            sides[1]
                .iter()
                .flat_map(|term| {
                    term.trim_start_matches('[')
                        .trim_end_matches(']')
                        .split(" + ")
                })
                .map(|term| {
                    if let Some(sum) = rest_sum(term) {
                        return number(sum);
                    }
                    let inner = term.trim_start_matches('(').trim_end_matches(')');
                    match inner.split_once(" × ") {
                        Some((a, b)) => number(a) * number(b),
                        None => number(inner),
                    }
                })
                .sum(),
        ),
        Rule::Scale(_) => {
            let (a, b) = sides[2][0].split_once(" / ").unwrap();
            Some(number(a) / number(b))
        }
        Rule::Softmax(_) if !sides[0][0].contains(" - ") => {
            let (a, b) = sides[1][0].split_once(" / ").unwrap();
            Some(number(a) / number(b))
        }
        // "a + (b)"
        Rule::Add(_) => {
            let (a, b) = sides[1][0].split_once(" + ").unwrap();
            Some(number(a) + number(b.trim_start_matches('(').trim_end_matches(')')))
        }
        // "sin(angle)" or "cos(angle)" as written
        Rule::Sinusoid(Sinusoid { cosine, .. }) => {
            let angle = number(
                sides[2][0]
                    .trim_start_matches("sin(")
                    .trim_start_matches("cos(")
                    .trim_end_matches(')'),
            );
            Some(if *cosine { angle.cos() } else { angle.sin() })
        }
        // "(a × c) − (b × s)" or "(a × s) + (b × c)"
        Rule::Rotate(_) => {
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
                    format_fixed(worked, decimals),
                    format_fixed(number(&result), decimals),
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

/// The top-level parts of `text` split at `operator` (not inside brackets).
fn top_level<'a>(text: &'a str, operator: &str) -> Vec<&'a str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ if depth == 0 && text[at..].starts_with(operator) => {
                parts.push(&text[start..at]);
                start = at + operator.len();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Every way `left = right` fails to redo: the right side, a number, is not what the left side's
/// arithmetic gives at the right side's precision; or, side by side, a part of the right is not
/// what the matching part of the left gives (`exp(0.235) / Σ … = 1.264 / 3.924`).
fn misworked(left: &str, right: &str, decimals: usize, found: &mut Vec<String>) {
    let (left, right) = (left.trim(), right.trim());
    if right.starts_with('≈') {
        return;
    }
    if let (Some(worked), Some(written)) = (
        arithmetic::evaluate(left).filter(|v| v.is_finite()),
        right.parse::<f64>().ok().filter(|v| v.is_finite()),
    ) {
        if (worked - written).abs() > arithmetic::half_unit(right, decimals) {
            found.push(format!("{left} = {right} (it gives {worked})"));
        }
        return;
    }
    for operator in [" + ", " − ", " / ", " × "] {
        let (lefts, rights) = (top_level(left, operator), top_level(right, operator));
        if lefts.len() > 1 && lefts.len() == rights.len() {
            for (l, r) in lefts.iter().zip(&rights) {
                misworked(l, r, decimals, found);
            }
            return;
        }
    }
}

/// The longest end of `piece` that is arithmetic, and the longest start of the next piece that is.
fn arithmetic_end(piece: &str) -> Option<&str> {
    std::iter::once(0)
        .chain(
            piece
                .char_indices()
                .filter(|(_, c)| *c == ' ')
                .map(|(at, _)| at + 1),
        )
        .map(|at| &piece[at..])
        .find(|end| arithmetic::evaluate(end).is_some_and(f64::is_finite))
}

fn arithmetic_start(piece: &str) -> Option<&str> {
    let ends = piece
        .char_indices()
        .filter(|(_, c)| *c == ' ' || *c == ',')
        .map(|(at, _)| at)
        .chain(std::iter::once(piece.len()));
    let mut ends: Vec<usize> = ends.collect();
    ends.reverse();
    ends.into_iter()
        .map(|at| &piece[..at])
        .find(|start| arithmetic::evaluate(start).is_some_and(f64::is_finite))
}

/// Every equality in a cell's whole working, notes included, that does not redo; and the
/// "head h contributes X" of an output projection against its bracketed terms.
fn unredone(text: &str, decimals: usize) -> Vec<String> {
    let mut found = Vec::new();
    let text = rests_as_sums(text);
    let pieces: Vec<&str> = text.split(" = ").collect();
    for pair in pieces.windows(2) {
        let (left, right) = (pair[0], pair[1]);
        // The whole sides when both are arithmetic-like, else the arithmetic that meets at "=".
        let right_start = arithmetic_start(right);
        if let Some(start) = right_start {
            match arithmetic_end(left) {
                Some(end) => misworked(end, start, decimals, &mut found),
                None => misworked(left, start, decimals, &mut found),
            }
        } else {
            misworked(left, right, decimals, &mut found);
        }
        if let Some(blocks) = pieces
            .iter()
            .find(|piece| piece.trim_start().starts_with('['))
        {
            let blocks = top_level(blocks.trim(), " + ");
            for (head, block) in blocks.iter().enumerate() {
                let said = format!("head {} contributes ", head + 1);
                if let Some(at) = right.find(&said) {
                    let written = right[at + said.len()..]
                        .split([',', ')'])
                        .next()
                        .unwrap_or("");
                    misworked(block, written, decimals, &mut found);
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Every cell a lesson explains: every matrix of every head, generation step and tile.
fn every_cell(attention: &Attention) -> Vec<Cell> {
    let mut cells = Vec::new();
    let steps = attention.tile_count().max(attention.seq_len());
    for name in MatrixName::ALL {
        for head in 0..attention.heads().query {
            for token in 0..steps {
                if (token > 0 && !name.kept_apart()) || (head > 0 && name.per() == Per::Lesson) {
                    continue;
                }
                let Some(matrix) = attention.matrix_at(name, head, token) else {
                    continue;
                };
                for row in 0..matrix.nrows() {
                    for col in 0..matrix.ncols() {
                        let cell = Cell::new(name, row, col).in_head(head);
                        cells.push(if name.per_tile() {
                            cell.at_tile(token)
                        } else {
                            cell.at_token(token)
                        });
                    }
                }
            }
        }
    }
    cells
}

/// Redoes every equality of every cell's working; returns the equalities that do not redo.
fn redo_every_equality(name: &str, text: &str) -> (usize, Vec<String>) {
    let loaded = load_text(name, None, text.to_string()).unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let decimals = loaded.lesson.decimals;
    let (mut cells, mut wrong) = (0, Vec::new());
    for cell in every_cell(&attention) {
        let Some(derivation) = attention.derive(cell) else {
            continue;
        };
        let working = derivation.explain(&attention, decimals);
        cells += 1;
        for equality in unredone(&working, decimals) {
            wrong.push(format!("{name}: {equality}\n    in {working}"));
        }
    }
    (cells, wrong)
}

#[test]
fn every_equality_a_built_in_lesson_writes_redoes_from_its_shown_numbers() {
    let (mut cells, mut wrong) = (0, Vec::new());
    for builtin in BUILTIN {
        let (explained, found) = redo_every_equality(builtin.name, builtin.text);
        cells += explained;
        wrong.extend(found);
    }
    assert!(cells > 2000, "only {cells} cells explained");
    assert!(
        wrong.is_empty(),
        "{} equalities do not redo:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn every_equality_of_random_lessons_redoes_at_every_precision() {
    let mut wrong = Vec::new();
    for seed in 1..=24u64 {
        let decimals = [1, 2, 3, 5][seed as usize % 4];
        let (tokens, width) = (2 + seed % 4, 2 + seed % 3);
        let labels: Vec<String> = (0..tokens).map(|t| format!("\"t{t}\"")).collect();
        let positions = ["none", "sinusoidal", "rope"][seed as usize % 3];
        let (heads, groups) = [(1, 1), (2, 2), (4, 2)][seed as usize / 3 % 3];
        let d_k = 2;
        let mut text = format!(
            "format = 2\ntitle = \"random {seed}\"\ntokens = [{}]\ndecimals = {decimals}\n\
             embeddings = {{ random = \"normal\", seed = {seed}, shape = [{tokens}, {width}] }}\n\
             w_q = {{ random = \"normal\", seed = {}, shape = [{width}, {}] }}\n\
             w_k = {{ random = \"uniform\", seed = {}, shape = [{width}, {}] }}\n\
             w_v = {{ random = \"normal\", seed = {}, shape = [{width}, {}] }}\nmask = \"causal\"\n\
             positions = \"{positions}\"\ntile = {}\ndecode = {}\n\
             grad_output = {{ random = \"normal\", seed = {}, shape = [{tokens}, 2] }}\n",
            labels.join(", "),
            seed + 100,
            heads * d_k,
            seed + 200,
            groups * d_k,
            seed + 300,
            groups * 2,
            1 + seed % 2,
            seed % 2 == 0,
            seed + 400,
        );
        if heads > 1 {
            text.push_str(&format!(
                "heads = {heads}\nkv_heads = {groups}\n\
                 w_o = {{ random = \"normal\", seed = {}, shape = [{}, 2] }}\n",
                seed + 500,
                heads * 2
            ));
        }
        wrong.extend(redo_every_equality(&format!("random {seed}"), &text).1);
    }
    assert!(
        wrong.is_empty(),
        "{} equalities do not redo:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// A number one step shares (√d_k in scaling, Σ of a softmax row) is written alike in every
/// cell of it, and a result is written as the step's table writes it (0.050, not 0.05).
fn precision_within_steps(name: &str, text: &str) -> Vec<String> {
    let loaded = load_text(name, None, text.to_string()).unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let decimals = loaded.lesson.decimals;
    let mut shared: std::collections::HashMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    let mut wrong = Vec::new();
    for cell in every_cell(&attention) {
        let Some(derivation) = attention.derive(cell) else {
            continue;
        };
        let explanation = derivation.explanation(&attention, decimals);
        let numbers = |side: usize| explanation.sides.get(side).map(|side| side.join(" + "));
        let shared_number = match derivation.rule {
            Rule::Scale(_) => numbers(2).and_then(|side| {
                Some((
                    format!("{:?} {} {}", cell.matrix, cell.head, cell.token),
                    side.split_once(" / ")?.1.to_string(),
                ))
            }),
            Rule::Softmax(_) => numbers(1).and_then(|side| {
                Some((
                    format!(
                        "{:?} {} {} {}",
                        cell.matrix, cell.head, cell.token, cell.row
                    ),
                    side.split_once(" / ")?.1.to_string(),
                ))
            }),
            _ => None,
        };
        if let Some((place, number)) = shared_number {
            shared.entry(place).or_default().insert(number);
        }
        let result = explanation.sides.last().unwrap()[0].trim_start_matches("≈ ");
        let table = format_fixed(derivation.value, decimals);
        if derivation.value.fract() != 0.0
            && derivation.value.is_finite()
            && !matches!(
                derivation.rule,
                Rule::Input(_) | Rule::Online(_) | Rule::Backward(_)
            )
            && result != table
        {
            wrong.push(format!(
                "{name}: {} writes {result} where its table has {table}",
                explanation.name
            ));
        }
    }
    // One way of writing it; a cell whose result lies a hair from a rounding boundary may write
    // it longer (more digits of the same number), the others never differently.
    for (place, numbers) in shared {
        let shortest = numbers.iter().min_by_key(|number| number.len()).unwrap();
        let same_length = numbers.iter().filter(|n| n.len() == shortest.len()).count();
        let value = |number: &str| number.parse::<f64>().unwrap_or(f64::NAN);
        let longer_of_it = numbers.iter().all(|number| {
            (value(number) - value(shortest)).abs() <= arithmetic::half_unit(shortest, 0)
        });
        if same_length > 1 || !longer_of_it {
            wrong.push(format!(
                "{name}: {place} writes its shared number as {numbers:?}"
            ));
        }
    }
    wrong
}

#[test]
fn a_step_writes_a_number_it_shares_alike_in_every_cell_and_results_as_its_table_does() {
    let mut wrong = Vec::new();
    for builtin in BUILTIN {
        wrong.extend(precision_within_steps(builtin.name, builtin.text));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `name = side = … = result`, as `Derivation::explain` joins a working.
fn joined(explanation: &attn_tutor::attention::Explanation) -> String {
    let mut text = explanation.name.clone();
    for side in &explanation.sides {
        text.push_str(" = ");
        text.push_str(&side.join(" + "));
    }
    text
}

/// Every equality of concat · W_o written head by head (the tutor's form for a long sum), and
/// each head's part written alike in the sum of the parts and as its own result.
fn head_parts_unredone(name: &str, text: &str) -> (usize, Vec<String>) {
    let loaded = load_text(name, None, text.to_string()).unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let decimals = loaded.lesson.decimals;
    let (mut cells, mut wrong) = (0, Vec::new());
    for cell in every_cell(&attention) {
        let Some(parts) = attention
            .derive(cell)
            .and_then(|derivation| derivation.head_parts(&attention, decimals))
        else {
            continue;
        };
        cells += 1;
        for explanation in parts.wholes.iter().chain(&parts.heads) {
            let working = joined(explanation);
            for equality in unredone(&working, decimals) {
                wrong.push(format!("{name}: {equality}\n    in {working}"));
            }
        }
        let heads = parts.heads.len();
        let Some(Rule::Dot(Dot { terms, .. })) = attention.derive(cell).map(|d| d.rule) else {
            unreachable!("written head by head, so a dot product");
        };
        let exact: Vec<f64> = terms
            .chunks(terms.len() / heads)
            .map(|block| block.iter().map(|(a, b)| a.value * b.value).sum())
            .collect();
        for (head, explanation) in parts.heads.iter().enumerate() {
            let sum = &parts.wholes[head].sides;
            // Of more than three heads: head h's part, then the other heads' parts as one.
            let at = if sum[2].len() == heads { head } else { 0 };
            let said = sum[2][at].trim_start_matches('(').trim_end_matches(')');
            let own = explanation.sides.last().unwrap()[0].trim_start_matches("≈ ");
            if said != own {
                wrong.push(format!(
                    "{name}: head {} is {said} in the sum, {own} alone",
                    head + 1
                ));
            }
            if sum[2].len() != heads {
                let words = format!("the other {} heads' parts", heads - 1);
                let others = sum[2][1].trim_start_matches('(').trim_end_matches(')');
                let exact_others: f64 = (0..heads)
                    .filter(|&other| other != head)
                    .map(|other| exact[other])
                    .sum();
                let k = others
                    .split_once('.')
                    .map_or(0, |(_, fraction)| fraction.len());
                if sum[1] != [format!("head {}'s part", head + 1), words.clone()]
                    || (others.parse::<f64>().unwrap() - exact_others).abs()
                        > 0.5 * 10f64.powi(-(k as i32)) + 1e-9
                {
                    wrong.push(format!(
                        "{name}: head {}'s sum {:?} = {:?}: the other parts are {exact_others}",
                        head + 1,
                        sum[1],
                        sum[2]
                    ));
                }
            }
        }
    }
    (cells, wrong)
}

#[test]
fn concat_times_w_o_written_head_by_head_redoes_at_every_precision() {
    let (mut cells, mut wrong) = (0, Vec::new());
    for seed in 1..=12u64 {
        let decimals = [1, 2, 3, 5][seed as usize % 4];
        let (heads, groups) = [(2, 2), (4, 2), (8, 8)][seed as usize % 3];
        let (tokens, d_model) = (3 + seed % 4, 8 * heads);
        let labels: Vec<String> = (0..tokens).map(|t| format!("\"t{t}\"")).collect();
        let text = format!(
            "format = 2\ntitle = \"heads {seed}\"\ntokens = [{}]\ndecimals = {decimals}\n\
             heads = {heads}\nkv_heads = {groups}\n\
             embeddings = {{ random = \"normal\", seed = {seed}, shape = [{tokens}, {d_model}] }}\n\
             w_q = {{ random = \"normal\", seed = {}, shape = [{d_model}, {d_model}] }}\n\
             w_k = {{ random = \"normal\", seed = {}, shape = [{d_model}, {}] }}\n\
             w_v = {{ random = \"normal\", seed = {}, shape = [{d_model}, {}] }}\n\
             w_o = {{ random = \"normal\", seed = {}, shape = [{d_model}, {d_model}] }}\n",
            labels.join(", "),
            seed + 100,
            seed + 200,
            8 * groups,
            seed + 300,
            8 * groups,
            seed + 400,
        );
        let (explained, found) = head_parts_unredone(&format!("heads {seed}"), &text);
        cells += explained;
        wrong.extend(found);
    }
    for builtin in BUILTIN {
        let (explained, found) = head_parts_unredone(builtin.name, builtin.text);
        cells += explained;
        wrong.extend(found);
    }
    assert!(cells > 1000, "only {cells} cells written head by head");
    assert!(
        wrong.is_empty(),
        "{} equalities do not redo:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn a_long_dot_products_rest_is_redone_as_the_sum_it_writes() {
    assert_eq!(
        rests_as_sums("x = (1.2 × -0.3) + 31 more terms (sum -0.138) + 0.424 = -0.074"),
        "x = (1.2 × -0.3) + (-0.138) + 0.424 = -0.074"
    );
    assert_eq!(
        rests_as_sums("(2 × 3) + 63 more (sum 1.5) = 7.5; no more words"),
        "(2 × 3) + (1.5) = 7.5; no more words"
    );
    // A wrong line is still found once its rest is a number.
    assert_eq!(
        unredone("y = (2 × 3) + 5 more terms (sum 1) = 8", 3),
        ["(2 × 3) + (1) = 8 (it gives 7)"]
    );
}
