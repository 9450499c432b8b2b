//! `[expected]`: figures as a source document printed them, for `attn-tutor check` to compare,
//! with the `tolerance` of that comparison and the `slips` no figure can show.

use std::ops::Range;

use toml::de::DeValue;

use super::report::{not_a_token, plural, too_long};
use super::values::number_value;
use super::{Entry, Reader, Value};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_SLIP_CHARS, MAX_SLIPS};
use crate::lesson::text::printable;
use crate::lesson::{Expected, ExpectedFigure, ExpectedRow, Inputs, PrintedNumber};
use crate::pipeline::MatrixName;
use crate::pipeline::{Axis as PipelineAxis, Plan};

/// The matrices a lesson may give printed figures of.
const EXPECTED_FIGURES: [MatrixName; 11] = [
    MatrixName::Positions,
    MatrixName::X,
    MatrixName::Q,
    MatrixName::K,
    MatrixName::V,
    MatrixName::QRope,
    MatrixName::KRope,
    MatrixName::Scores,
    MatrixName::Scaled,
    MatrixName::Weights,
    MatrixName::Output,
];

/// Whether `key` is one of `[expected]`'s own keys, rather than a lesson key written below the
/// header by mistake (`q`, `k` and `v` are both: under `[expected]` they are figures).
pub(super) fn is_expected_key(key: &str) -> bool {
    key == "tolerance" || MatrixName::from_key(key).is_some_and(|m| EXPECTED_FIGURES.contains(&m))
}

impl Reader<'_> {
    pub(super) fn expected(
        &mut self,
        entry: Entry<'_, '_>,
        misplaced: &[String],
        tokens: Option<&[String]>,
        inputs: Option<&Inputs>,
        scale: bool,
        plan: Option<&Plan>,
    ) -> Option<Expected> {
        let mut expected = Expected::default();
        let Some((_, value)) = entry else {
            return Some(expected);
        };
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                "`expected`",
                "a table",
                "[expected]\nweights = [[0.5, 0.5]]",
            );
            return None;
        };
        let mut keys: Vec<&str> = vec!["tolerance", "slips"];
        keys.extend(EXPECTED_FIGURES.iter().map(|name| name.key()));
        let mut ok = true;
        for (name, figure) in table.iter() {
            if misplaced.iter().any(|key| key == name.get_ref()) {
                continue;
            }
            if name.get_ref() == "tolerance" {
                match number_value(figure.get_ref()) {
                    Ok(tolerance) if tolerance.is_finite() && tolerance > 0.0 => {
                        expected.tolerance = Some(tolerance)
                    }
                    _ => {
                        ok = false;
                        self.error(
                            Diagnostic::error(
                                figure.span(),
                                "`tolerance` must be a positive number",
                            )
                            .label("invalid tolerance")
                            .help(
                                "for example tolerance = 0.0005 (half a unit of the third decimal)",
                            ),
                        );
                    }
                }
                continue;
            }
            if name.get_ref() == "slips" {
                match self.slips(figure) {
                    Some(slips) => expected.slips = slips,
                    None => ok = false,
                }
                continue;
            }
            let Some(matrix) =
                MatrixName::from_key(name.get_ref()).filter(|m| EXPECTED_FIGURES.contains(m))
            else {
                self.unknown_key(name.get_ref(), name.span(), &keys, "not a figure");
                ok = false;
                continue;
            };
            if matrix == MatrixName::Scaled && !scale {
                ok = false;
                self.error(
                    Diagnostic::error(name.span(), "this lesson does not scale (scale = false), so there is no `scaled` figure")
                        .label("no such figure")
                        .help("compare `scores` instead, or set scale = true"),
                );
                continue;
            }
            // A figure of a matrix the lesson's positions do not make (`q_rope` without RoPE).
            if let Some(plan) = plan {
                // `x` is the matrix that is projected: the embeddings when nothing is added.
                let projected = matrix == MatrixName::X && plan.has(MatrixName::Embeddings);
                if !plan.has(matrix) && matrix != MatrixName::Scaled && !projected {
                    ok = false;
                    let kind = plan.shape.positions.key().unwrap_or("a matrix");
                    self.error(
                        Diagnostic::error(name.span(), format!("this lesson has no `{}` (its positions are {kind})", matrix.key()))
                            .label("no such figure")
                            .help("`positions` goes with sinusoidal or learned positions, `x` with embeddings, `q_rope` and `k_rope` with positions = \"rope\""),
                    );
                    continue;
                }
            }
            match self.figure(matrix, figure, tokens, inputs) {
                Some(figure) => expected.figures.push(figure),
                None => ok = false,
            }
        }
        // Pipeline order reads better in `check` than the file's (alphabetical) table order.
        expected.figures.sort_by_key(|figure| figure.matrix);
        ok.then_some(expected)
    }

    /// `slips = ["…", …]`: the document's mistakes that no printed figure shows, each a line of
    /// text for `check` to print.
    fn slips(&mut self, value: &Value<'_>) -> Option<Vec<String>> {
        let example = "slips = [\"Table 4 writes 0/√1.4142 for 0/1.4142\"]";
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(value, "`slips`", "an array of strings", example);
            return None;
        };
        if items.len() > MAX_SLIPS {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!(
                        "`slips` has {} entries; the limit is {MAX_SLIPS}",
                        items.len()
                    ),
                )
                .label("too many slips")
                .help("name each slip once; several of one kind fit in one entry"),
            );
            return None;
        }
        let mut slips = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let place = format!("`slips` entry {}", i + 1);
            let DeValue::String(text) = item.get_ref() else {
                self.wrong_type(item, &place, "a string", example);
                return None;
            };
            let text = self.clean(text, item.span(), &place, false)?;
            if text.trim().is_empty() {
                self.error(
                    Diagnostic::error(item.span(), format!("{place} is blank"))
                        .label("nothing to name")
                        .help("say what the document printed wrongly, or remove the entry"),
                );
                return None;
            }
            if let Some(diagnostic) = too_long(item.span(), &place, &text, MAX_SLIP_CHARS) {
                self.error(diagnostic);
                return None;
            }
            slips.push(text);
        }
        Some(slips)
    }

    /// One printed figure: a full matrix, or a table of rows keyed by token label or position.
    fn figure(
        &mut self,
        matrix: MatrixName,
        value: &Value<'_>,
        tokens: Option<&[String]>,
        inputs: Option<&Inputs>,
    ) -> Option<ExpectedFigure> {
        let key = matrix.key();
        let seq_len = tokens.map(<[String]>::len);
        let rows = self.figure_rows(key, value, tokens)?;
        let mut seen = vec![false; seq_len.unwrap_or(0)];
        for (index, row) in &rows {
            if let Some(already) = seen.get_mut(*index) {
                if *already {
                    self.error(
                        Diagnostic::error(
                            row.span(),
                            format!("expected `{key}` gives row {} twice", index + 1),
                        )
                        .label("given again here")
                        .help("a row may be named by its label or its position, but only once"),
                    );
                    return None;
                }
                *already = true;
            }
        }
        let width = inputs.and_then(|inputs| figure_width(matrix, inputs, seq_len));
        let mut figure = ExpectedFigure {
            matrix,
            rows: Vec::new(),
        };
        let mut ok = true;
        for (index, row) in rows {
            match self.figure_row(key, index, row, width) {
                Some(read) => figure.rows.push(read),
                None => ok = false,
            }
        }
        ok.then_some(figure)
    }

    /// The rows a figure gives, with the 0-based row of the matrix each one is: all of them in
    /// order (an array), or some by token label or position (a table).
    fn figure_rows<'v, 'i>(
        &mut self,
        key: &str,
        value: &'v Value<'i>,
        tokens: Option<&[String]>,
    ) -> Option<Vec<(usize, &'v Value<'i>)>> {
        match value.get_ref() {
            DeValue::Array(items) => {
                if let Some(seq_len) = tokens.map(<[String]>::len)
                    && items.len() != seq_len
                {
                    self.error(
                        Diagnostic::error(value.span(), format!("expected `{key}` has {}, but there are {seq_len} tokens", plural(items.len(), "row")))
                            .label(plural(items.len(), "row"))
                            .help(format!("give all {seq_len} rows, or only some as a table: [expected.{key}] with one line per row, like cat = [0.1, 0.9]")),
                    );
                    return None;
                }
                Some(items.iter().enumerate().collect())
            }
            DeValue::Table(table) => {
                let tokens = tokens?;
                let mut rows = Vec::new();
                let mut ok = true;
                for (label, row) in table.iter() {
                    match self.named_row(key, label.get_ref().as_ref(), label.span(), tokens) {
                        Some(index) => rows.push((index, row)),
                        None => ok = false,
                    }
                }
                ok.then_some(rows)
            }
            _ => {
                self.wrong_type(
                    value,
                    &format!("expected `{key}`"),
                    "a matrix or a table of rows",
                    &format!("{key} = [[0.5, 0.5], [0.2, 0.8]]"),
                );
                None
            }
        }
    }

    /// The 0-based row a figure's row label names: a token label, unless several tokens have
    /// it, or else a 1-based position.
    fn named_row(
        &mut self,
        key: &str,
        text: &str,
        span: Range<usize>,
        tokens: &[String],
    ) -> Option<usize> {
        let matches = tokens.iter().filter(|token| token.as_str() == text).count();
        if matches > 1 {
            self.error(
                Diagnostic::error(
                    span,
                    format!("\"{}\" names {matches} tokens", printable(text)),
                )
                .label("ambiguous")
                .help("use the token's 1-based position instead, like \"5\" = [...]"),
            );
            return None;
        }
        if matches == 1 {
            return tokens.iter().position(|token| token.as_str() == text);
        }
        let position = text
            .parse::<usize>()
            .ok()
            .filter(|p| (1..=tokens.len()).contains(p));
        if let Some(position) = position {
            return Some(position - 1);
        }
        self.error(not_a_token(
            span,
            format!(
                "expected `{key}` names row \"{}\", which is not a token",
                printable(text)
            ),
            text,
            tokens,
            format!(
                "rows are named by token label or by position from 1 to {}",
                tokens.len()
            ),
        ));
        None
    }

    /// One printed row: its numbers as written, as many as the matrix has columns (`width`,
    /// when the lesson's inputs tell it).
    fn figure_row(
        &mut self,
        key: &str,
        index: usize,
        row: &Value<'_>,
        width: Option<usize>,
    ) -> Option<ExpectedRow> {
        let DeValue::Array(cells) = row.get_ref() else {
            self.wrong_type(
                row,
                &format!("a row of expected `{key}`"),
                "an array of numbers",
                "[0.5, 0.5]",
            );
            return None;
        };
        if let Some(width) = width
            && cells.len() != width
        {
            self.error(
                Diagnostic::error(
                    row.span(),
                    format!(
                        "this row of expected `{key}` has {}, but `{key}` has {width} columns",
                        plural(cells.len(), "number")
                    ),
                )
                .label(plural(cells.len(), "number"))
                .help(format!("give all {width} numbers of the row")),
            );
            return None;
        }
        let mut values = Vec::with_capacity(cells.len());
        let mut ok = true;
        for (c, cell) in cells.iter().enumerate() {
            match self.matrix_number(&format!("expected.{key}"), index, c, cell, false) {
                Ok(number) => values.push(PrintedNumber {
                    value: number,
                    text: self.source.get(cell.span()).unwrap_or_default().to_string(),
                }),
                Err(diagnostic) => {
                    self.error(diagnostic);
                    ok = false;
                }
            }
        }
        ok.then_some(ExpectedRow { row: index, values })
    }
}

/// How many columns a figure of `matrix` has, by the lesson's inputs.
fn figure_width(matrix: MatrixName, inputs: &Inputs, seq_len: Option<usize>) -> Option<usize> {
    let (d_model, d_k, d_v) = (
        inputs.d_model(),
        inputs.all_groups_d_k(),
        inputs.all_groups_d_v(),
    );
    // The width follows from what the matrix's columns are.
    match matrix.entry().cols {
        PipelineAxis::Queries | PipelineAxis::Keys => seq_len,
        PipelineAxis::DModel => d_model,
        PipelineAxis::DK => Some(d_k),
        PipelineAxis::DV => Some(d_v),
        // Heads are read in issue 14's parser work: one head, no W_o, until then.
        PipelineAxis::HeadsDV | PipelineAxis::DOut => Some(d_v),
    }
}
