//! `[expected]`: figures as a source document printed them, for `attn-tutor check` to compare,
//! with the `tolerance` of that comparison and the `slips` no figure can show. Each head's
//! figures are under `[expected.heads.N]`, N counted from 1 as the screen counts heads; a
//! lesson of one head may give them in `[expected]` itself.

use std::ops::Range;

use toml::de::DeValue;

use super::report::{not_a_token, plural, too_long};
use super::values::number_value;
use super::{Entry, Reader, Value};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_SLIP_CHARS, MAX_SLIPS};
use crate::lesson::text::printable;
use crate::lesson::{Expected, ExpectedFigure, ExpectedRow, InputMatrix, Inputs, PrintedNumber};
use crate::pipeline::{Absent, Axis as PipelineAxis, Heads, MatrixName, Plan};

/// The matrices a lesson may give printed figures of for the whole lesson, in a top-level
/// `[expected]`: its inputs whole as the file has them, what is added to the embeddings, W_o,
/// the heads' outputs side by side and the final output (`output`: concat·W_o with W_o), which
/// comes last, after concat, as a document prints it.
fn lesson_figures() -> impl Iterator<Item = MatrixName> {
    let whole = |name: &MatrixName| name.entry().expectable.is_some_and(|figure| figure.whole);
    let final_output = |name: &MatrixName| *name == MatrixName::Output;
    MatrixName::ALL
        .into_iter()
        .filter(move |name| whole(name) && !final_output(name))
        .chain(
            MatrixName::ALL
                .into_iter()
                .filter(move |name| whole(name) && final_output(name)),
        )
}

/// The matrices of one head a lesson may give printed figures of, in `[expected.heads.N]` (or
/// in `[expected]` itself when the lesson has one head). `output` there is the head's output.
fn head_figures() -> impl Iterator<Item = MatrixName> {
    MatrixName::ALL
        .into_iter()
        .filter(|name| name.entry().expectable.is_some_and(|figure| figure.head))
}

fn is_lesson_figure(name: MatrixName) -> bool {
    name.entry().expectable.is_some_and(|figure| figure.whole)
}

fn is_head_figure(name: MatrixName) -> bool {
    name.entry().expectable.is_some_and(|figure| figure.head)
}

/// Keys that are only ever a lesson's own inputs: below an `[expected]` header, without the
/// lesson key at the top, they are the lesson key written in the wrong place.
const INPUT_ONLY: [MatrixName; 6] = [
    MatrixName::Embeddings,
    MatrixName::SourceEmbeddings,
    MatrixName::WQ,
    MatrixName::WK,
    MatrixName::WV,
    MatrixName::WO,
];

/// The keys of the matrices `[expected]` may give figures of, the whole lesson's and a head's
/// (the schema's test holds the docs' table to them).
#[cfg(test)]
pub(crate) fn figure_keys() -> impl Iterator<Item = &'static str> {
    lesson_figures()
        .chain(head_figures())
        .map(|name| name.key())
}

/// Whether `key` is one of `[expected]`'s own keys, rather than a lesson key written below the
/// header by mistake (`q`, `k` and `v` are both: under `[expected]` they are figures; `heads`
/// is both: under `[expected]` it is the table of each head's figures).
pub(super) fn is_expected_key(key: &str) -> bool {
    key == "tolerance"
        || key == "heads"
        || MatrixName::from_key(key)
            .is_some_and(|m| m.entry().expectable.is_some() && !INPUT_ONLY.contains(&m))
}

/// What a figure's shape and meaning depend on: the lesson's parts that could be read.
pub(super) struct Lengths<'a> {
    pub tokens: Option<&'a [String]>,
    /// The keys' tokens: the source's in cross-attention, else `tokens`.
    pub source_tokens: Option<&'a [String]>,
    pub cross: bool,
    pub inputs: Option<&'a Inputs>,
    pub heads: Option<Heads>,
    pub w_o: Option<&'a InputMatrix>,
    pub scale: bool,
    pub plan: Option<&'a Plan>,
}

impl Lengths<'_> {
    /// Whether a figure of `matrix` for the whole lesson is one of the lesson's own inputs,
    /// compared whole as the file has it (all heads' blocks of `w_q`, or the given `q`).
    fn is_input(&self, matrix: MatrixName) -> bool {
        let given = match self.inputs {
            Some(Inputs::Projected { .. }) => {
                matches!(
                    matrix,
                    MatrixName::Embeddings | MatrixName::WQ | MatrixName::WK | MatrixName::WV
                )
            }
            Some(Inputs::Direct { .. }) => {
                matches!(matrix, MatrixName::Q | MatrixName::K | MatrixName::V)
            }
            None => false,
        };
        given || matrix == MatrixName::WO || matrix == MatrixName::SourceEmbeddings
    }

    /// The labels of a matrix's rows along `axis` when they are tokens.
    fn labels(&self, axis: PipelineAxis) -> Option<&[String]> {
        match axis {
            PipelineAxis::Queries => self.tokens,
            PipelineAxis::Keys => self.source_tokens,
            _ => None,
        }
    }

    /// How many rows or columns a figure of `matrix` has along `axis`: one head's d_k or d_v
    /// for a head's figure, the whole width for an input, H·d_v for concat, d_out for the final
    /// output. `None` when the lesson's parts it depends on could not be read.
    fn along(&self, axis: PipelineAxis, matrix: MatrixName, head: Option<usize>) -> Option<usize> {
        let inputs = self.inputs?;
        let heads = self.heads?;
        let whole = head.is_none() && self.is_input(matrix);
        let blocks = if whole { heads.count(matrix.per()) } else { 1 };
        let d_v = inputs.all_groups_d_v() / heads.kv;
        let d_out = self.w_o.map_or(d_v, |w_o| w_o.values.ncols());
        match axis {
            PipelineAxis::Queries | PipelineAxis::Keys => self.labels(axis).map(<[String]>::len),
            // A step of generation's matrices are not figures a lesson prints.
            PipelineAxis::NewToken => Some(1),
            // Nor are the online softmax's one-column states.
            PipelineAxis::Single => Some(1),
            PipelineAxis::DModel => inputs.d_model(),
            PipelineAxis::DK => Some(inputs.all_groups_d_k() / heads.kv * blocks),
            // `output` for the whole lesson is the final output: W_o's width, with W_o.
            PipelineAxis::DV if matrix == MatrixName::Output && head.is_none() => Some(d_out),
            PipelineAxis::DV => Some(d_v * blocks),
            PipelineAxis::HeadsDV => Some(heads.query * d_v),
            PipelineAxis::DOut => Some(d_out),
        }
    }
}

impl Reader<'_> {
    pub(super) fn expected(
        &mut self,
        entry: Entry<'_, '_>,
        misplaced: &[String],
        lengths: &Lengths<'_>,
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
        let mut keys: Vec<&str> = vec!["tolerance", "slips", "heads"];
        keys.extend(lesson_figures().map(|name| name.key()));
        keys.extend(head_figures().map(|name| name.key()));
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
            if name.get_ref() == "heads" {
                match self.head_figures(figure, lengths) {
                    Some(figures) => expected.figures.extend(figures),
                    None => ok = false,
                }
                continue;
            }
            let Some(matrix) =
                MatrixName::from_key(name.get_ref()).filter(|m| m.entry().expectable.is_some())
            else {
                self.unknown_key(name.get_ref(), name.span(), &keys, "not a figure");
                ok = false;
                continue;
            };
            // With several heads, a head's matrix is given under the head it belongs to; with
            // one, where it always was.
            let several = lengths.heads.is_some_and(|heads| heads.query > 1);
            if several && !is_lesson_figure(matrix)
                || several
                    && matches!(matrix, MatrixName::Q | MatrixName::K | MatrixName::V)
                    && !lengths.is_input(matrix)
            {
                ok = false;
                let heads = lengths.heads.map_or(1, |heads| heads.query);
                self.error(
                    Diagnostic::error(
                        name.span(),
                        format!(
                            "`{}` is one head's matrix, and this lesson has {heads} heads",
                            matrix.key()
                        ),
                    )
                    .label("which head's?")
                    .help(format!(
                        "give each head's figure under its number: [expected.heads.1] {} = [...] for the first head, up to [expected.heads.{heads}]",
                        matrix.key()
                    )),
                );
                continue;
            }
            match self.expected_figure(matrix, name.span(), figure, None, lengths) {
                Some(figure) => expected.figures.push(figure),
                None => ok = false,
            }
        }
        // Pipeline order reads better in `check` than the file's (alphabetical) table order:
        // the inputs, each head's figures, then what brings the heads together.
        expected.figures.sort_by_key(figure_order);
        ok.then_some(expected)
    }

    /// `[expected.heads.N]`: head N's figures, N counted from 1 as the screen counts heads.
    fn head_figures(
        &mut self,
        value: &Value<'_>,
        lengths: &Lengths<'_>,
    ) -> Option<Vec<ExpectedFigure>> {
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                "`expected.heads`",
                "a table of heads by number",
                "[expected.heads.1]\nweights = [[0.5, 0.5]]",
            );
            return None;
        };
        let keys: Vec<&str> = head_figures().map(|name| name.key()).collect();
        let count = lengths.heads.map(|heads| heads.query);
        let mut figures = Vec::new();
        let mut ok = true;
        for (number, figures_of_head) in table.iter() {
            let text = number.get_ref().as_ref();
            let head = text
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= 1 && count.is_none_or(|count| *n <= count));
            let Some(head) = head else {
                ok = false;
                let (range, help) = match count {
                    Some(1) => (
                        "this lesson has one head: it is head 1".to_string(),
                        "write [expected.heads.1], or give the figures in [expected] itself"
                            .to_string(),
                    ),
                    Some(count) => (
                        format!("heads are numbered 1 to {count}"),
                        format!(
                            "write [expected.heads.1] for the first head, up to [expected.heads.{count}] for the last"
                        ),
                    ),
                    None => (
                        "heads are numbered from 1".to_string(),
                        "write [expected.heads.1] for the first head".to_string(),
                    ),
                };
                self.error(
                    Diagnostic::error(
                        number.span(),
                        format!(
                            "`expected.heads.{}` names no head: {range}",
                            printable(text)
                        ),
                    )
                    .label("no such head")
                    .help(help),
                );
                continue;
            };
            let DeValue::Table(inner) = figures_of_head.get_ref() else {
                ok = false;
                self.wrong_type(
                    figures_of_head,
                    &format!("`expected.heads.{head}`"),
                    "a table of figures",
                    &format!("[expected.heads.{head}]\nweights = [[0.5, 0.5]]"),
                );
                continue;
            };
            for (name, figure) in inner.iter() {
                let key = name.get_ref().as_ref();
                let matrix = MatrixName::from_key(key);
                match matrix {
                    Some(matrix) if is_head_figure(matrix) => {
                        match self.expected_figure(
                            matrix,
                            name.span(),
                            figure,
                            Some(head - 1),
                            lengths,
                        ) {
                            Some(figure) => figures.push(figure),
                            None => ok = false,
                        }
                    }
                    Some(matrix) if is_lesson_figure(matrix) => {
                        ok = false;
                        self.error(
                            Diagnostic::error(
                                name.span(),
                                format!(
                                    "`{key}` is one matrix for the whole lesson, not one head's"
                                ),
                            )
                            .label("not a head's figure")
                            .help(format!("give it in [expected] itself: {key} = [...]")),
                        );
                    }
                    _ => {
                        ok = false;
                        self.unknown_key(key, name.span(), &keys, "not a head's figure");
                    }
                }
            }
        }
        ok.then_some(figures)
    }

    /// One figure, checked against the lesson's plan: `head` is the 0-based head of a figure
    /// under `[expected.heads.N]`.
    fn expected_figure(
        &mut self,
        matrix: MatrixName,
        name_span: Range<usize>,
        figure: &Value<'_>,
        head: Option<usize>,
        lengths: &Lengths<'_>,
    ) -> Option<ExpectedFigure> {
        // A figure every lesson has (`absent` is `None`) is never refused.
        let absent = matrix.entry().expectable.and_then(|figure| figure.absent);
        if absent == Some(Absent::Unscaled) && !lengths.scale {
            self.error(
                Diagnostic::error(
                    name_span,
                    "this lesson does not scale (scale = false), so there is no `scaled` figure",
                )
                .label("no such figure")
                .help("compare `scores` instead, or set scale = true"),
            );
            return None;
        }
        // A figure of a matrix the lesson does not make (`q_rope` without RoPE).
        if let Some(plan) = lengths.plan
            && let Some(absent) = absent
        {
            // `x` is the matrix that is projected: the embeddings when nothing is added.
            let projected = matrix == MatrixName::X && plan.has(MatrixName::Embeddings);
            let refused = match absent {
                _ if plan.has(matrix) || projected => None,
                Absent::Because { why, help } => Some((why.to_string(), help)),
                Absent::OfSource { help } if !plan.shape.cross => Some((
                    "it has no source: it attends to its own tokens".to_string(),
                    help,
                )),
                Absent::OfPositions { help } | Absent::OfSource { help } => Some((
                    format!(
                        "its positions are {}",
                        plan.shape.positions.key().unwrap_or("a matrix")
                    ),
                    help,
                )),
                // Said above, from `scale = false` itself.
                Absent::Unscaled => None,
            };
            if let Some((why, help)) = refused {
                self.error(
                    Diagnostic::error(
                        name_span,
                        format!("this lesson has no `{}` ({why})", matrix.key()),
                    )
                    .label("no such figure")
                    .help(help),
                );
                return None;
            }
        }
        self.figure(matrix, figure, head, lengths)
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

    /// One printed figure: a full matrix, or a table of rows keyed by token label or position
    /// (rows that are not tokens, like W_o's, by position only). `head` is the 0-based head of
    /// a figure under `[expected.heads.N]`.
    fn figure(
        &mut self,
        matrix: MatrixName,
        value: &Value<'_>,
        head: Option<usize>,
        lengths: &Lengths<'_>,
    ) -> Option<ExpectedFigure> {
        let key = match head {
            Some(head) => format!("heads.{}.{}", head + 1, matrix.key()),
            None => matrix.key().to_string(),
        };
        let entry = matrix.entry();
        let row_count = lengths.along(entry.rows, matrix, head);
        // Rows are named by token label only when they are tokens.
        let labels = lengths.labels(entry.rows);
        let rows_are = match entry.rows {
            PipelineAxis::Keys if lengths.cross => Some("source tokens"),
            axis if axis.is_tokens() => Some("tokens"),
            _ => None,
        };
        let rows = self.figure_rows(&key, value, row_count, labels, rows_are)?;
        let mut seen = vec![false; row_count.unwrap_or(0)];
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
        let width = lengths.along(entry.cols, matrix, head);
        let mut figure = ExpectedFigure {
            matrix,
            head,
            rows: Vec::new(),
        };
        let mut ok = true;
        for (index, row) in rows {
            match self.figure_row(&key, index, row, width) {
                Some(read) => figure.rows.push(read),
                None => ok = false,
            }
        }
        ok.then_some(figure)
    }

    /// The rows a figure gives, with the 0-based row of the matrix each one is: all of them in
    /// order (an array), or some by token label or position (a table). `row_count` is how many
    /// rows the matrix has and `tokens` the labels of its rows when they are tokens.
    fn figure_rows<'v, 'i>(
        &mut self,
        key: &str,
        value: &'v Value<'i>,
        row_count: Option<usize>,
        tokens: Option<&[String]>,
        rows_are: Option<&str>,
    ) -> Option<Vec<(usize, &'v Value<'i>)>> {
        match value.get_ref() {
            DeValue::Array(items) => {
                if let Some(count) = row_count
                    && items.len() != count
                {
                    let (message, like) = if let Some(tokens) = rows_are {
                        (
                            format!(
                                "expected `{key}` has {}, but there are {count} {tokens}",
                                plural(items.len(), "row")
                            ),
                            "cat = [0.1, 0.9]",
                        )
                    } else {
                        (
                            format!(
                                "expected `{key}` has {}, but the matrix has {count}",
                                plural(items.len(), "row")
                            ),
                            "\"2\" = [0.1, 0.9]",
                        )
                    };
                    self.error(
                        Diagnostic::error(value.span(), message)
                            .label(plural(items.len(), "row"))
                            .help(format!("give all {count} rows, or only some as a table: [expected.{key}] with one line per row, like {like}")),
                    );
                    return None;
                }
                Some(items.iter().enumerate().collect())
            }
            DeValue::Table(table) => {
                let count = row_count?;
                let mut rows = Vec::new();
                let mut ok = true;
                for (label, row) in table.iter() {
                    let text = label.get_ref().as_ref();
                    let index = match tokens {
                        Some(tokens) => {
                            let noun = match rows_are {
                                Some("source tokens") => "source token",
                                _ => "token",
                            };
                            self.named_row(key, text, label.span(), (tokens, noun))
                        }
                        None => self.numbered_row(key, text, label.span(), count),
                    };
                    match index {
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

    /// The 0-based row of a matrix whose rows are not tokens (W_o's, a circuit's), named by its
    /// 1-based position.
    fn numbered_row(
        &mut self,
        key: &str,
        text: &str,
        span: Range<usize>,
        count: usize,
    ) -> Option<usize> {
        let position = text
            .parse::<usize>()
            .ok()
            .filter(|p| (1..=count).contains(p));
        if let Some(position) = position {
            return Some(position - 1);
        }
        self.error(
            Diagnostic::error(
                span,
                format!(
                    "expected `{key}` names row \"{}\", which it does not have",
                    printable(text)
                ),
            )
            .label("no such row")
            .help(format!(
                "the rows of `{key}` are not tokens: name them by position from 1 to {count}"
            )),
        );
        None
    }

    /// The 0-based row a figure's row label names: a token label, unless several tokens have
    /// it, or else a 1-based position.
    fn named_row(
        &mut self,
        key: &str,
        text: &str,
        span: Range<usize>,
        (tokens, noun): (&[String], &str),
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
                "expected `{key}` names row \"{}\", which is not a {noun}",
                printable(text)
            ),
            text,
            tokens,
            format!(
                "rows are named by {noun} label or by position from 1 to {}",
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
                        "this row of expected `{key}` has {}, but `{key}` has {}",
                        plural(cells.len(), "number"),
                        plural(width, "column")
                    ),
                )
                .label(plural(cells.len(), "number"))
                .help(format!("give all {} of the row", plural(width, "number"))),
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

/// Where a figure comes in `check`'s report: the lesson's inputs and what is added to them,
/// then each head's figures in pipeline order, then what brings the heads together (W_o,
/// concat and, last, the final output).
fn figure_order(figure: &ExpectedFigure) -> (u8, usize, usize) {
    let matrix = figure.matrix;
    let after_heads = figure.head.is_none()
        && matches!(
            matrix,
            MatrixName::WO | MatrixName::Concat | MatrixName::Output
        );
    if after_heads {
        // The final output after concat, though `Output` comes before it in the table.
        let rank = match matrix {
            MatrixName::Output => MatrixName::ALL.len(),
            _ => matrix.index(),
        };
        return (2, 0, rank);
    }
    let phase = u8::from(figure.head.is_some() || is_head_figure(matrix));
    (phase, figure.head.unwrap_or(0), matrix.index())
}

#[cfg(test)]
mod tests {
    use crate::lesson::parse::parse;
    use crate::lesson::{ExpectedFigure, Lesson};
    use crate::pipeline::MatrixName;

    /// 2 tokens, 2 heads of d_k 2 and d_v 1 (one K/V group each), W_o 2 × 3.
    const TWO_HEADS: &str = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n\
        embeddings = [[1, 0], [0, 1]]\nheads = 2\n\
        w_q = [[1, 0, 1, 0], [0, 1, 0, 1]]\nw_k = [[1, 0, 1, 0], [0, 1, 0, 1]]\n\
        w_v = [[1, 2], [3, 4]]\nw_o = [[1, 0, 1], [0, 1, 1]]\n";

    /// A figure is refused, saying why, when the lesson has not got its matrix; one whose
    /// table entry says every lesson has it is never refused, so every lesson must have it.
    #[test]
    fn a_figure_said_to_be_in_every_lesson_is_in_every_lessons_plan() {
        use crate::pipeline::{Plan, Shape};
        for shape in Shape::every() {
            let plan = Plan::new(shape);
            for name in MatrixName::ALL {
                let Some(figure) = name.entry().expectable else {
                    continue;
                };
                assert!(
                    figure.whole || figure.head,
                    "{name:?} is a figure of neither the lesson nor a head"
                );
                if figure.absent.is_none() {
                    assert!(
                        plan.has(name),
                        "{name:?} is said to be in every lesson, not in {shape:?}"
                    );
                }
            }
        }
    }

    /// The same inputs with one head and no W_o.
    const ONE_HEAD: &str = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n\
        embeddings = [[1, 0], [0, 1]]\n\
        w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n";

    fn lesson(text: &str) -> Lesson {
        let parsed = parse(text);
        let errors: Vec<&str> = parsed.errors().map(|d| d.message.as_str()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        parsed.lesson.expect("a lesson")
    }

    fn errors(text: &str) -> Vec<String> {
        parse(text).errors().map(|d| d.message.clone()).collect()
    }

    fn figures(lesson: &Lesson) -> Vec<(MatrixName, Option<usize>, usize)> {
        lesson
            .expected
            .figures
            .iter()
            .map(|ExpectedFigure { matrix, head, rows }| (*matrix, *head, rows.len()))
            .collect()
    }

    #[test]
    fn a_heads_figures_are_numbered_from_1_and_kept_0_based() {
        let lesson = lesson(&format!(
            "{TWO_HEADS}\n[expected.heads.2]\nweights = [[0.5, 0.5], [0.5, 0.5]]\n\
             [expected.heads.1.scores]\nb = [1, 1]\n"
        ));
        assert_eq!(
            figures(&lesson),
            [
                (MatrixName::Scores, Some(0), 1),
                (MatrixName::Weights, Some(1), 2)
            ]
        );
    }

    #[test]
    fn the_lessons_figures_come_before_and_after_the_heads_in_check_order() {
        let lesson = lesson(&format!(
            "{TWO_HEADS}\n[expected]\noutput = [[1, 2, 3], [4, 5, 6]]\nconcat = [[1, 2], [3, 4]]\n\
             w_q = [[1, 0, 1, 0], [0, 1, 0, 1]]\n\
             [expected.heads.1]\noutput = [[1], [2]]\n"
        ));
        assert_eq!(
            figures(&lesson),
            [
                (MatrixName::WQ, None, 2),
                (MatrixName::Output, Some(0), 2),
                (MatrixName::Concat, None, 2),
                (MatrixName::Output, None, 2),
            ]
        );
    }

    #[test]
    fn the_lessons_output_is_the_final_output_as_wide_as_w_o() {
        let said = errors(&format!(
            "{TWO_HEADS}\n[expected]\noutput = [[1, 2], [3, 4]]\n"
        ));
        assert_eq!(
            said[0],
            "this row of expected `output` has 2 numbers, but `output` has 3 columns"
        );
        // A head's output is d_v wide.
        let said = errors(&format!(
            "{TWO_HEADS}\n[expected.heads.1]\noutput = [[1, 2, 3], [3, 4, 5]]\n"
        ));
        assert_eq!(
            said[0],
            "this row of expected `heads.1.output` has 3 numbers, but `heads.1.output` has 1 column"
        );
    }

    #[test]
    fn an_input_figure_is_the_whole_matrix_of_every_head() {
        let said = errors(&format!(
            "{TWO_HEADS}\n[expected]\nw_q = [[1, 0], [0, 1]]\n"
        ));
        assert_eq!(
            said[0],
            "this row of expected `w_q` has 2 numbers, but `w_q` has 4 columns"
        );
    }

    #[test]
    fn given_q_k_v_are_the_lessons_inputs_but_projected_ones_are_a_heads() {
        let direct = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nheads = 2\n\
            q = [[1, 0, 1, 0], [0, 1, 0, 1]]\nk = [[1, 0, 1, 0], [0, 1, 0, 1]]\n\
            v = [[1, 2], [3, 4]]\nw_o = [[1], [1]]\n";
        let given = lesson(&format!(
            "{direct}\n[expected]\nq = [[1, 0, 1, 0], [0, 1, 0, 1]]\n"
        ));
        assert_eq!(figures(&given), [(MatrixName::Q, None, 2)]);
        assert_eq!(
            errors(&format!("{TWO_HEADS}\n[expected]\nq = [[1, 0], [0, 1]]\n")),
            ["`q` is one head's matrix, and this lesson has 2 heads"]
        );
    }

    #[test]
    fn a_one_head_lesson_gives_its_heads_figures_in_expected_or_under_head_1() {
        let top = lesson(&format!(
            "{ONE_HEAD}\n[expected]\nscores = [[1, 0], [0, 1]]\n"
        ));
        assert_eq!(figures(&top), [(MatrixName::Scores, None, 2)]);
        let under = lesson(&format!(
            "{ONE_HEAD}\n[expected.heads.1]\nscores = [[1, 0], [0, 1]]\n"
        ));
        assert_eq!(figures(&under), [(MatrixName::Scores, Some(0), 2)]);
        assert_eq!(
            errors(&format!(
                "{ONE_HEAD}\n[expected.heads.2]\nscores = [[1, 0], [0, 1]]\n"
            )),
            ["`expected.heads.2` names no head: this lesson has one head: it is head 1"]
        );
    }

    #[test]
    fn w_o_rows_are_named_by_position_not_by_token() {
        let lesson = lesson(&format!("{TWO_HEADS}\n[expected.w_o]\n\"2\" = [0, 1, 1]\n"));
        assert_eq!(lesson.expected.figures[0].rows[0].row, 1);
        assert_eq!(
            errors(&format!("{TWO_HEADS}\n[expected.w_o]\n\"3\" = [0, 1, 1]\n")),
            ["expected `w_o` names row \"3\", which it does not have"]
        );
    }

    #[test]
    fn an_input_written_below_expected_without_the_lesson_key_is_the_misplaced_lesson_key() {
        let text = ONE_HEAD.replace("w_v = [[1, 2], [3, 4]]\n", "")
            + "\n[expected]\nw_v = [[1, 2], [3, 4]]\n";
        assert_eq!(
            errors(&text),
            ["`w_v` is inside the [expected] table because it comes after that header"]
        );
    }
}
