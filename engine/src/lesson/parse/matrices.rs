//! Reading one matrix as written: an array of equal-length rows of numbers, or a generator table
//! `{ random, seed, shape }`. Which key it is and how its shape relates to others is `inputs`'s.

use nalgebra::DMatrix;
use toml::de::{DeTable, DeValue};

use super::report::{plural, unknown_name};
use super::values::{integer_value, number_value, type_name};
use super::{Reader, Value};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_ABS_VALUE, MAX_DIMENSION};
use crate::lesson::{Generator, InputMatrix, RandomKind};

/// Problems reported per matrix before the rest of that matrix is summarised.
const MAX_PER_MATRIX: usize = 5;

/// What a mask cell may be, and what a large finite fill does next to -inf.
const MASK_HELP: &str = "a mask cell is added to the score: 0 keeps the key, -inf hides it (a \
                         weight of exactly 0), any finite number shifts it. A fill such as -1e9 \
                         hides a key too, its exp underflowing to 0, but not a whole row: a row \
                         whose every key gets it is shifted as a whole, which softmax ignores, so \
                         it is weighted as if unmasked (evenly once the fill swallows the scores, \
                         as finfo.min does), where -inf gives that row weights of 0";

impl Reader<'_> {
    /// A matrix: an array of equal-length rows of numbers, or a generator table. `row_limit`
    /// bounds its rows (a row per token, or per model dimension); columns are bounded by
    /// `MAX_DIMENSION`.
    pub(super) fn matrix(
        &mut self,
        key: &str,
        row_limit: usize,
        value: &Value<'_>,
    ) -> Option<InputMatrix> {
        match value.get_ref() {
            DeValue::Table(table) => Some(InputMatrix::to_draw(
                self.generator(key, row_limit, table, value)?,
            )),
            DeValue::Array(_) => Some(InputMatrix::literal(
                self.literal_matrix(key, row_limit, value, false)?,
            )),
            _ => {
                self.wrong_type(
                    value,
                    &format!("`{key}`"),
                    "a matrix (an array of rows) or a generator",
                    &format!("{key} = [[1, 0], [0, 1]]  or  {key} = {{ random = \"normal\", seed = 1, shape = [2, 2] }}"),
                );
                None
            }
        }
    }

    /// An array of rows. `allow_neg_inf` reads the cells as a mask's biases.
    pub(super) fn literal_matrix(
        &mut self,
        key: &str,
        row_limit: usize,
        value: &Value<'_>,
        allow_neg_inf: bool,
    ) -> Option<DMatrix<f64>> {
        let DeValue::Array(rows) = value.get_ref() else {
            return None;
        };
        self.row_count_fits(key, row_limit, value, rows.len())?;
        let mut problems = 0usize;
        let mut width: Option<(usize, usize)> = None; // (columns, row index that set it)
        let mut values = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            let DeValue::Array(cells) = row.get_ref() else {
                self.matrix_problem(
                    &mut problems,
                    Diagnostic::error(
                        row.span(),
                        format!(
                            "row {} of `{key}` must be an array of numbers, found {}",
                            r + 1,
                            type_name(row.get_ref())
                        ),
                    )
                    .label("expected a row like [1, 0, 2]")
                    .help(format!(
                        "a matrix is an array of rows: {key} = [[1, 0], [0, 1]]"
                    )),
                );
                continue;
            };
            match width {
                None => {
                    self.first_row_fits(key, r, row, cells.len())?;
                    width = Some((cells.len(), r));
                }
                Some((columns, first)) if columns != cells.len() => {
                    self.matrix_problem(
                        &mut problems,
                        Diagnostic::error(
                            row.span(),
                            format!(
                                "row {} of `{key}` has {}, but row {} has {columns}",
                                r + 1,
                                plural(cells.len(), "number"),
                                first + 1
                            ),
                        )
                        .label(plural(cells.len(), "number"))
                        .help("every row of a matrix has the same number of columns"),
                    );
                    continue;
                }
                Some(_) => {}
            }
            for (c, cell) in cells.iter().enumerate() {
                let number = self
                    .matrix_number(key, r, c, cell, allow_neg_inf)
                    .unwrap_or_else(|diagnostic| {
                        self.matrix_problem(&mut problems, diagnostic);
                        0.0
                    });
                values.push(number);
            }
        }
        if problems > MAX_PER_MATRIX {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`{key}` has {} more problems", problems - MAX_PER_MATRIX),
                )
                .label("in this matrix"),
            );
        }
        if problems > 0 {
            return None;
        }
        let (columns, _) = width?;
        Some(DMatrix::from_row_slice(rows.len(), columns, &values))
    }

    /// One more problem in a matrix: reported while there are few, counted after that, so that
    /// a matrix of a thousand bad cells does not drown the rest of the file.
    fn matrix_problem(&mut self, problems: &mut usize, diagnostic: Diagnostic) {
        *problems += 1;
        if *problems <= MAX_PER_MATRIX {
            self.error(diagnostic);
        }
    }

    /// `Some` when a matrix has at least one row and no more than `row_limit`.
    fn row_count_fits(
        &mut self,
        key: &str,
        row_limit: usize,
        value: &Value<'_>,
        rows: usize,
    ) -> Option<()> {
        if rows == 0 {
            self.error(
                Diagnostic::error(value.span(), format!("`{key}` is empty"))
                    .label("no rows")
                    .help("a matrix has at least one row, like [[1, 0]]"),
            );
            return None;
        }
        if rows > row_limit {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`{key}` has {rows} rows; the limit is {row_limit}"),
                )
                .label("too many rows"),
            );
            return None;
        }
        Some(())
    }

    /// `Some` when the first row, which sets the matrix's width, has a width a matrix may have.
    fn first_row_fits(&mut self, key: &str, r: usize, row: &Value<'_>, cells: usize) -> Option<()> {
        if cells == 0 {
            self.error(
                Diagnostic::error(row.span(), format!("row {} of `{key}` is empty", r + 1))
                    .label("no numbers")
                    .help("every row needs at least one number"),
            );
            return None;
        }
        if cells > MAX_DIMENSION {
            self.error(
                Diagnostic::error(
                    row.span(),
                    format!(
                        "row {} of `{key}` has {cells} numbers; the limit is {MAX_DIMENSION}",
                        r + 1
                    ),
                )
                .label("too wide"),
            );
            return None;
        }
        Some(())
    }

    /// One cell of a matrix (or of a printed figure): a finite number within the value limits,
    /// or, with `allow_neg_inf`, a mask's bias.
    pub(super) fn matrix_number(
        &self,
        key: &str,
        row: usize,
        col: usize,
        cell: &Value<'_>,
        allow_neg_inf: bool,
    ) -> Result<f64, Diagnostic> {
        // Written only for a problem: a large lesson has a million cells, nearly all fine.
        let place = || format!("`{key}` row {}, column {}", row + 1, col + 1);
        let number = number_value(cell.get_ref()).map_err(|problem| {
            // "-inf" in quotes is the mistake of a reader of JSON, where infinity has no
            // number syntax; TOML has one.
            let quoted_infinity = matches!(
                cell.get_ref(),
                DeValue::String(text) if matches!(text.trim(), "-inf" | "inf" | "+inf" | "-Infinity" | "Infinity")
            );
            Diagnostic::error(cell.span(), format!("{}: {problem}", place()))
                .label("expected a number")
                .help(if quoted_infinity {
                    "write -inf without quotes: TOML reads -inf as a number, and a string is not one"
                } else if allow_neg_inf {
                    MASK_HELP
                } else {
                    "write a number such as 0.25 or -1"
                })
        })?;
        // A mask cell is an additive bias, as in PyTorch's float masks, Hugging Face's
        // finfo.min fill and ALiBi: -inf hides the key, any finite number shifts its score. It
        // is only added, never multiplied, so no size of bias can overflow what it meets.
        if allow_neg_inf && (number == f64::NEG_INFINITY || number.is_finite()) {
            return Ok(if number == 0.0 { 0.0 } else { number });
        }
        if allow_neg_inf {
            return Err(Diagnostic::error(
                cell.span(),
                format!(
                    "{}: a mask cell must be -inf or a finite number, found {}",
                    place(),
                    self.text_at(cell.span())
                ),
            )
            .label("not -inf or a finite bias")
            .help(MASK_HELP));
        }
        let out_of_range = || {
            Diagnostic::error(
                cell.span(),
                format!("{}: {} is out of range", place(), self.text_at(cell.span())),
            )
            .label(format!("|value| must be at most {MAX_ABS_VALUE:e}"))
            .help("lesson numbers lie between -1e6 and 1e6")
        };
        let written = self.source.get(cell.span()).unwrap_or_default();
        if number.is_infinite() && !written.contains("inf") {
            // 1e400 reads as infinity, but the writer meant a (too) large number.
            return Err(out_of_range());
        }
        if !number.is_finite() {
            let hint = if number == f64::NEG_INFINITY {
                "-inf is only allowed in `mask`; use a finite number here"
            } else {
                "use a finite number"
            };
            return Err(Diagnostic::error(
                cell.span(),
                format!(
                    "{}: {} is not a finite number",
                    place(),
                    self.text_at(cell.span())
                ),
            )
            .label("not finite")
            .help(hint));
        }
        if number.abs() > MAX_ABS_VALUE {
            return Err(out_of_range());
        }
        Ok(number)
    }

    /// `{ random = "normal", seed = 1, shape = [ROWS, COLUMNS] }`.
    fn generator(
        &mut self,
        key: &str,
        row_limit: usize,
        table: &DeTable<'_>,
        value: &Value<'_>,
    ) -> Option<Generator> {
        const KEYS: [&str; 3] = ["random", "seed", "shape"];
        let mut kind = None;
        let mut seed = None;
        let mut shape = None;
        let mut ok = true;
        for (name, field) in table.iter() {
            let read = match name.get_ref().as_ref() {
                "random" => self.random_kind(field).map(|found| kind = Some(found)),
                "seed" => self.seed(field).map(|found| seed = Some(found)),
                "shape" => self
                    .shape(row_limit, field)
                    .map(|found| shape = Some(found)),
                other => {
                    self.unknown_key(other, name.span(), &KEYS, "not a generator key");
                    None
                }
            };
            ok &= read.is_some();
        }
        for (missing, absent) in [
            ("random", kind.is_none()),
            ("seed", seed.is_none()),
            ("shape", shape.is_none()),
        ] {
            if absent && ok {
                self.error(
                    Diagnostic::error(value.span(), format!("the generator of `{key}` has no `{missing}`"))
                        .label(format!("`{missing}` missing"))
                        .help(format!("a generator is written {key} = {{ random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }}")),
                );
                ok = false;
            }
        }
        let (rows, cols) = shape?;
        ok.then_some(Generator {
            kind: kind?,
            seed: seed?,
            rows,
            cols,
        })
    }

    /// A generator's `random`: the name of a distribution.
    fn random_kind(&mut self, value: &Value<'_>) -> Option<RandomKind> {
        let DeValue::String(text) = value.get_ref() else {
            self.wrong_type(value, "`random`", "a string", "random = \"normal\"");
            return None;
        };
        if let Some(found) = RandomKind::from_key(text) {
            return Some(found);
        }
        let kinds: Vec<&str> = RandomKind::ALL.iter().map(|kind| kind.key()).collect();
        self.error(unknown_name(
            value.span(),
            "distribution",
            text,
            &kinds,
            "use \"normal\" (standard normal, like np.random.randn) or \"uniform\" (0 to 1, like np.random.rand)",
        ));
        None
    }

    /// A generator's `seed`: a whole number from 0 to `i64::MAX`.
    fn seed(&mut self, value: &Value<'_>) -> Option<u64> {
        let DeValue::Integer(integer) = value.get_ref() else {
            self.wrong_type(value, "`seed`", "an integer", "seed = 7");
            return None;
        };
        match integer_value(integer) {
            Ok(number) if number >= 0 => Some(number as u64),
            Err(error) if *error.kind() == std::num::IntErrorKind::PosOverflow => {
                self.error(
                    Diagnostic::error(value.span(), "this seed is too large")
                        .label("too large")
                        .help(format!("a seed is a whole number from 0 to {}", i64::MAX)),
                );
                None
            }
            _ => {
                self.error(
                    Diagnostic::error(value.span(), "a seed is a whole number from 0 up")
                        .label("invalid seed")
                        .help("for example: seed = 7"),
                );
                None
            }
        }
    }

    /// A generator's `shape = [ROWS, COLUMNS]`, within the limits.
    fn shape(&mut self, row_limit: usize, value: &Value<'_>) -> Option<(usize, usize)> {
        let dims: Vec<Option<i64>> = match value.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .map(|item| match item.get_ref() {
                    DeValue::Integer(integer) => integer_value(integer).ok(),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        match dims.as_slice() {
            [Some(rows), Some(cols)]
                if (1..=row_limit as i64).contains(rows)
                    && (1..=MAX_DIMENSION as i64).contains(cols) =>
            {
                Some((*rows as usize, *cols as usize))
            }
            _ => {
                self.error(
                    Diagnostic::error(value.span(), "`shape` must be [ROWS, COLUMNS]")
                        .label("expected two whole numbers")
                        .help(format!("for example shape = [3, 4]; rows at most {row_limit}, columns at most {MAX_DIMENSION}")),
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lesson::parse;
    use crate::pipeline::MatrixName;

    #[test]
    fn a_read_lesson_holds_its_generators_numbers_drawn() {
        // Large enough for the numbers to be drawn on every core.
        let text = "format = 2\ntitle = \"Drawn\"\ntokens = [\"a\", \"b\", \"c\"]\n\
                    embeddings = { random = \"normal\", seed = 1, shape = [3, 512] }\n\
                    w_q = { random = \"uniform\", seed = 2, shape = [512, 64] }\n\
                    w_k = { random = \"normal\", seed = 3, shape = [512, 64] }\n\
                    w_v = { random = \"normal\", seed = 4, shape = [512, 2] }\n";
        let parsed = parse(text);
        let why: Vec<_> = parsed.errors().map(|error| error.message.clone()).collect();
        let lesson = parsed.lesson.unwrap_or_else(|| panic!("{why:?}"));
        for name in [
            MatrixName::Embeddings,
            MatrixName::WQ,
            MatrixName::WK,
            MatrixName::WV,
        ] {
            let input = lesson.input(name).expect("an input");
            let generator = input.generator.expect("a generator");
            assert_eq!(*input.values, generator.generate(), "{name:?}");
            assert!(
                input.values.iter().any(|&value| value != 0.0),
                "{name:?} drawn"
            );
        }
    }
}
