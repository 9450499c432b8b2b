//! Numbers a working writes that stand for more than its own arithmetic: the softmax backward's
//! row average, one number for the whole row, and concat · W_o's per-head contributions, which
//! add up to the result as written. Checked over every cell of every built-in lesson and of
//! random ones.

use std::collections::{BTreeMap, BTreeSet};

use attn_engine::attention::{Attention, Cell, MatrixName, Rule};
use attn_engine::lesson::{BUILTIN, load_text};
use attn_engine::pipeline::Per;
use attn_engine::workings::BackwardRule;
use attn_engine::workings::number::format_number;

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

/// Random lessons with a backward pass, of one, two and four heads, at 1 to 5 decimals.
fn random_lessons() -> Vec<(String, String)> {
    (1..=24u64)
        .map(|seed| {
            let decimals = [1, 2, 3, 5][seed as usize % 4];
            let (tokens, width) = (2 + seed % 4, 2 + seed % 3);
            let labels: Vec<String> = (0..tokens).map(|t| format!("\"t{t}\"")).collect();
            let (heads, groups) = [(1, 1), (2, 2), (4, 2)][seed as usize / 3 % 3];
            let mut text = format!(
                "format = 2\ntitle = \"random {seed}\"\ntokens = [{}]\ndecimals = {decimals}\n\
                 embeddings = {{ random = \"normal\", seed = {seed}, shape = [{tokens}, {width}] }}\n\
                 w_q = {{ random = \"normal\", seed = {}, shape = [{width}, {}] }}\n\
                 w_k = {{ random = \"uniform\", seed = {}, shape = [{width}, {}] }}\n\
                 w_v = {{ random = \"normal\", seed = {}, shape = [{width}, {}] }}\n\
                 mask = \"causal\"\n\
                 grad_output = {{ random = \"normal\", seed = {}, shape = [{tokens}, 2] }}\n",
                labels.join(", "),
                seed + 100,
                heads * 2,
                seed + 200,
                groups * 2,
                seed + 300,
                groups * 2,
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
            (format!("random {seed}"), text)
        })
        .chain(
            BUILTIN
                .iter()
                .map(|builtin| (builtin.name.to_string(), builtin.text.to_string())),
        )
        .collect()
}

/// Whether `text` is `value` rounded to as many decimals as `text` has.
fn rounds(value: f64, text: &str) -> bool {
    let decimals = text
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    format_number(value, decimals) == text
}

/// Every way a lesson's dS cells write their row's average wrong: a cell whose average is not
/// the true one rounded, whose note says another, or that writes `− -x`; a row written two
/// ways at the same length (a cell a hair from a rounding boundary may write it longer).
fn averages_written_wrong(name: &str, text: &str) -> (usize, Vec<String>) {
    let loaded = load_text(name, None, text.to_string()).unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let decimals = loaded.lesson.decimals;
    let mut rows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let (mut cells, mut wrong) = (0, Vec::new());
    for cell in every_cell(&attention) {
        let Some(derivation) = attention.derive(cell) else {
            continue;
        };
        let Rule::Backward(BackwardRule::SoftmaxBackward(backward)) = &derivation.rule else {
            continue;
        };
        cells += 1;
        let working = derivation.explain(&attention, decimals);
        let explanation = derivation.explanation(&attention, decimals);
        let average: f64 = backward.row.iter().map(|(p, d)| p.value * d.value).sum();
        let numbers = &explanation.sides[1][0];
        let written = numbers
            .rsplit_once(" − ")
            .map(|(_, subtracted)| subtracted.trim_end_matches(')'))
            .unwrap_or_default();
        let written = written
            .strip_prefix('(')
            .unwrap_or(written)
            .trim_end_matches(')');
        if written.starts_with('-') && !numbers.contains(" − (-") || numbers.contains("− -") {
            wrong.push(format!(
                "{name}: a negative average subtracted bare in {working}"
            ));
        }
        if !rounds(average, written) {
            wrong.push(format!(
                "{name}: the average is {average}, written {written} in {working}"
            ));
        }
        let note = explanation.note.clone().unwrap_or_default();
        let said = note
            .split_once(", k] = ")
            .map(|(_, rest)| rest.split(';').next().unwrap_or(rest))
            .unwrap_or_default();
        if said != written {
            wrong.push(format!(
                "{name}: the note says the average is {said}, the working {written}: {working}"
            ));
        }
        rows.entry(format!(
            "{:?} head {} row {}",
            cell.matrix, cell.head, cell.row
        ))
        .or_default()
        .insert(written.to_string());
    }
    for (row, written) in rows {
        let shortest = written.iter().map(String::len).min().unwrap_or(0);
        if written.iter().filter(|text| text.len() == shortest).count() > 1 {
            wrong.push(format!("{name}: {row} writes its average as {written:?}"));
        }
    }
    (cells, wrong)
}

#[test]
fn every_softmax_backward_cell_of_a_row_writes_the_rows_true_average_alike() {
    let (mut cells, mut wrong) = (0, Vec::new());
    for (name, text) in random_lessons() {
        let (explained, found) = averages_written_wrong(&name, &text);
        cells += explained;
        wrong.extend(found);
    }
    assert!(cells > 300, "only {cells} dS cells explained");
    assert!(
        wrong.is_empty(),
        "{} averages written wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every concat · W_o cell whose per-head contributions, as written, do not add up to its
/// result as written, or are not each head's true part rounded.
fn contributions_written_wrong(name: &str, text: &str) -> (usize, Vec<String>) {
    let loaded = load_text(name, None, text.to_string()).unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let decimals = loaded.lesson.decimals;
    let heads = attention.heads().query;
    let (mut cells, mut wrong) = (0, Vec::new());
    for cell in every_cell(&attention) {
        let Some(derivation) = attention.derive(cell) else {
            continue;
        };
        let Rule::Dot(dot) = &derivation.rule else {
            continue;
        };
        let explanation = derivation.explanation(&attention, decimals);
        let Some(note) = explanation
            .note
            .as_ref()
            .filter(|note| note.contains("contributes"))
        else {
            continue;
        };
        cells += 1;
        let working = derivation.explain(&attention, decimals);
        let result = &explanation.sides.last().unwrap()[0];
        let parts: Vec<f64> = dot
            .terms
            .chunks(dot.terms.len() / heads)
            .map(|block| block.iter().map(|(a, b)| a.value * b.value).sum())
            .collect();
        let said: Vec<&str> = note
            .split(", ")
            .map(|part| part.split_once(" contributes ").unwrap().1)
            .collect();
        for (part, said) in parts.iter().zip(&said) {
            if !rounds(*part, said.trim_start_matches("≈ ")) {
                wrong.push(format!(
                    "{name}: a part is {part}, written {said}: {working}"
                ));
            }
        }
        let sum: f64 = said
            .iter()
            .map(|said| said.trim_start_matches("≈ ").parse::<f64>().unwrap())
            .sum();
        // The result is written as its table writes it (3.0600): compared as a number.
        let written = format_number(result.parse().unwrap_or(f64::NAN), decimals);
        if !result.starts_with('≈') && format_number(sum, decimals) != written {
            wrong.push(format!(
                "{name}: the contributions add up to {}, the result is {result}: {working}",
                format_number(sum, decimals)
            ));
        }
    }
    (cells, wrong)
}

#[test]
fn each_heads_contribution_as_written_adds_up_to_the_output_as_written() {
    let (mut cells, mut wrong) = (0, Vec::new());
    for (name, text) in random_lessons() {
        let (explained, found) = contributions_written_wrong(&name, &text);
        cells += explained;
        wrong.extend(found);
    }
    assert!(
        cells > 100,
        "only {cells} cells say what each head contributes"
    );
    assert!(
        wrong.is_empty(),
        "{} contributions written wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
