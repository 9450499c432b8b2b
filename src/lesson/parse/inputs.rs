//! The input matrices: embeddings with w_q, w_k, w_v, or q, k, v directly. Each matrix's axes
//! come from the registry (`crate::pipeline`); which keys go together, the shape named in a
//! "missing" help, the row limit and every shape check follow from them.

use std::ops::Range;

use super::report::plural;
use super::{Entries, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_DIMENSION, MAX_TOKENS};
use crate::lesson::{InputMatrix, Inputs};
use crate::pipeline::{Axis as RegistryAxis, MatrixName};

/// A length the attention arithmetic names; an input matrix's shape is two of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    SeqLen,
    DModel,
    DK,
    DV,
}

impl Axis {
    /// The length a registry axis has in a lesson file: the queries and the keys of
    /// self-attention are both the tokens.
    const fn of(axis: RegistryAxis) -> Axis {
        match axis {
            RegistryAxis::Queries | RegistryAxis::Keys => Axis::SeqLen,
            RegistryAxis::DModel => Axis::DModel,
            RegistryAxis::DK => Axis::DK,
            RegistryAxis::DV => Axis::DV,
            // Heads are read in issue 14's parser work (W_o's axes); until then, d_v.
            RegistryAxis::HeadsDV | RegistryAxis::DOut => Axis::DV,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Axis::SeqLen => "seq_len",
            Axis::DModel => "d_model",
            Axis::DK => "d_k",
            Axis::DV => "d_v",
        }
    }

    /// The most rows (or columns) along this axis: one per token, or a model dimension.
    pub(super) fn limit(self) -> usize {
        match self {
            Axis::SeqLen => MAX_TOKENS,
            _ => MAX_DIMENSION,
        }
    }
}

/// Which inputs a lesson gives: embeddings that weights project, or the projections directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Projected,
    Direct,
}

/// A matrix a lesson file may give, and the axes its rows and columns run along.
#[derive(Debug)]
struct InputShape {
    key: &'static str,
    route: Route,
    rows: Axis,
    cols: Axis,
}

impl InputShape {
    /// A matrix of the registry as a lesson gives it: its key and axes are the registry's.
    const fn of(name: MatrixName, route: Route) -> InputShape {
        let entry = name.entry();
        InputShape {
            key: entry.key,
            route,
            rows: Axis::of(entry.rows),
            cols: Axis::of(entry.cols),
        }
    }
}

/// Every input matrix, in the order a lesson file writes them (the order they are read and
/// their shapes checked in; the first along an axis sets its length, so `embeddings` stays
/// first). A new input matrix is one more line here (and its key in `TOP_KEYS`): the check that it is
/// given with the others of its route, the shape its "missing" help names, its row limit and
/// the agreement of its dimensions with the others all follow from its axes. (Building the
/// `Inputs` value from it is `assemble`'s, since `Inputs` names each matrix.)
const INPUT_SHAPES: [InputShape; 7] = [
    InputShape::of(MatrixName::Embeddings, Route::Projected),
    InputShape::of(MatrixName::WQ, Route::Projected),
    InputShape::of(MatrixName::WK, Route::Projected),
    InputShape::of(MatrixName::WV, Route::Projected),
    InputShape::of(MatrixName::Q, Route::Direct),
    InputShape::of(MatrixName::K, Route::Direct),
    InputShape::of(MatrixName::V, Route::Direct),
];

/// Which way a dimension of a matrix runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dimension {
    Rows,
    Columns,
}

impl Dimension {
    fn noun(self) -> &'static str {
        match self {
            Dimension::Rows => "row",
            Dimension::Columns => "column",
        }
    }
}

/// A matrix whose length along an axis is not the length the axis already has.
struct Mismatch<'a> {
    key: &'a str,
    dimension: Dimension,
    found: usize,
    /// What set the axis's length: a matrix's key (the tokens have their own words).
    set_by: &'a str,
    expected: usize,
}

/// How one axis is checked: what sets its length, and what a matrix that disagrees is told.
struct AxisRule {
    axis: Axis,
    /// The number of tokens sets the length; otherwise the first matrix in `INPUT_SHAPES`
    /// (of the lesson's route) that runs along the axis sets it.
    set_by_tokens: bool,
    message: fn(&Mismatch) -> String,
    help: fn(&Mismatch) -> String,
}

/// The shape rules, in the order they are checked (so a matrix wrong in two ways is told in
/// this order). d_v has no rule: each route has one matrix along it, nothing to compare;
/// `every_shared_axis_has_a_rule` fails when a new matrix changes that.
const AXIS_RULES: [AxisRule; 3] = [
    AxisRule {
        axis: Axis::SeqLen,
        set_by_tokens: true,
        message: |m| {
            format!(
                "`{}` has {}, but there are {} tokens",
                m.key,
                plural(m.found, m.dimension.noun()),
                m.expected
            )
        },
        help: |m| {
            format!(
                "give one {} per token, in the order of `tokens`",
                m.dimension.noun()
            )
        },
    },
    AxisRule {
        axis: Axis::DModel,
        set_by_tokens: false,
        message: |m| {
            format!(
                "`{}` has {}, but the embeddings have {} columns (d_model)",
                m.key,
                plural(m.found, m.dimension.noun()),
                m.expected
            )
        },
        help: |m| match m.dimension {
            Dimension::Rows => format!(
                "X·{key} needs one row of `{key}` per embedding column: make it {} × something",
                m.expected,
                key = m.key
            ),
            Dimension::Columns => format!(
                "`{}` needs one column per embedding column: make it something × {}",
                m.key, m.expected
            ),
        },
    },
    AxisRule {
        axis: Axis::DK,
        set_by_tokens: false,
        message: |m| {
            format!(
                "`{}` has {} {}s, but `{}` has {}",
                m.key,
                m.found,
                m.dimension.noun(),
                m.set_by,
                m.expected
            )
        },
        help: |_| "queries and keys have the same width d_k, so that q · k is defined".to_string(),
    },
];

/// An input matrix as read, with what it is and where it was written.
struct Given {
    shape: &'static InputShape,
    matrix: InputMatrix,
    value_span: Range<usize>,
}

impl Given {
    fn len(&self, dimension: Dimension) -> usize {
        match dimension {
            Dimension::Rows => self.matrix.values.nrows(),
            Dimension::Columns => self.matrix.values.ncols(),
        }
    }

    /// Its dimensions that run along `axis`: none, one, or both.
    fn along(&self, axis: Axis) -> impl Iterator<Item = (&Given, Dimension)> {
        [
            (self.shape.rows, Dimension::Rows),
            (self.shape.cols, Dimension::Columns),
        ]
        .into_iter()
        .filter(move |(on, _)| *on == axis)
        .map(move |(_, dimension)| (self, dimension))
    }
}

impl Reader<'_> {
    /// Either embeddings with W_q, W_k, W_v, or Q, K, V directly; all shapes agreeing.
    /// `tokens` is how many tokens the lesson has, when they could be read.
    pub(super) fn inputs(
        &mut self,
        entries: &Entries<'_, '_>,
        tokens: Option<usize>,
    ) -> Option<Inputs> {
        // Every matrix written is read, whichever route it belongs to, so that its own
        // problems are reported along with a mix of routes.
        let written: Vec<(&'static InputShape, Option<Given>)> = INPUT_SHAPES
            .iter()
            .filter_map(|shape| {
                let (_, value) = entries.get(shape.key)?;
                let given = self
                    .matrix(shape.key, shape.rows.limit(), value)
                    .map(|matrix| Given {
                        shape,
                        matrix,
                        value_span: value.span(),
                    });
                Some((shape, given))
            })
            .collect();
        let route = self.route(&written, entries)?;
        let anchor = written
            .first()
            .and_then(|(shape, _)| entries.get(shape.key))
            .map(|(span, _)| span);
        let missing: Vec<&InputShape> = INPUT_SHAPES
            .iter()
            .filter(|shape| shape.route == route)
            .filter(|shape| written.iter().all(|(given, _)| given.key != shape.key))
            .collect();
        for shape in &missing {
            self.missing_input(shape, anchor.clone());
        }
        if !missing.is_empty() {
            return None;
        }
        // A matrix that could not be read has said why; its shape cannot be compared.
        let given: Vec<Given> = written
            .into_iter()
            .map(|(_, given)| given)
            .collect::<Option<_>>()?;
        if !self.shapes_agree(&given, tokens) {
            return None;
        }
        assemble(route, given)
    }

    /// The route of the matrices written: `None` (said) when they mix both.
    fn route(
        &mut self,
        written: &[(&InputShape, Option<Given>)],
        entries: &Entries<'_, '_>,
    ) -> Option<Route> {
        let first_of = |route: Route| {
            written
                .iter()
                .map(|(shape, _)| *shape)
                .find(|shape| shape.route == route)
        };
        match (first_of(Route::Projected), first_of(Route::Direct)) {
            (Some(_), Some(direct)) => {
                let (span, _) = entries.get(direct.key)?;
                self.error(
                    Diagnostic::error(span, "a lesson gives either embeddings with w_q, w_k, w_v, or q, k, v directly, not both")
                        .label("q, k, v given here")
                        .help("remove q, k, v to project the embeddings, or remove embeddings and w_q, w_k, w_v"),
                );
                None
            }
            (None, Some(_)) => Some(Route::Direct),
            // Nothing written reads as the usual route, whose matrices are then said missing.
            (_, None) => Some(Route::Projected),
        }
    }

    /// A matrix of the lesson's route that is not there, said next to the first one that is.
    fn missing_input(&mut self, shape: &InputShape, anchor: Option<Range<usize>>) {
        let key = shape.key;
        let label = if anchor.is_some() {
            format!("`{key}` goes with this")
        } else {
            "no inputs in this lesson".to_string()
        };
        let dimensions = format!("{} × {}", shape.rows.name(), shape.cols.name());
        self.error(
            Diagnostic::error(anchor.unwrap_or(0..0), format!("missing `{key}`"))
                .label(label)
                .help(format!("add `{key} = [[...], ...]` ({dimensions}), or a generator like {key} = {{ random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }}")),
        );
    }

    /// Applies `AXIS_RULES`: along each axis, every matrix has the length the tokens or the
    /// first matrix along it set. Reports each one that does not.
    fn shapes_agree(&mut self, given: &[Given], tokens: Option<usize>) -> bool {
        let mut ok = true;
        for rule in &AXIS_RULES {
            let mut along = given.iter().flat_map(|matrix| matrix.along(rule.axis));
            let set = if rule.set_by_tokens {
                tokens.map(|count| ("tokens", count))
            } else {
                along
                    .next()
                    .map(|(matrix, dimension)| (matrix.shape.key, matrix.len(dimension)))
            };
            let Some((set_by, expected)) = set else {
                continue;
            };
            for (matrix, dimension) in along {
                let found = matrix.len(dimension);
                if found == expected {
                    continue;
                }
                ok = false;
                let mismatch = Mismatch {
                    key: matrix.shape.key,
                    dimension,
                    found,
                    set_by,
                    expected,
                };
                self.error(
                    Diagnostic::error(matrix.value_span.clone(), (rule.message)(&mismatch))
                        .label(format!(
                            "{} × {}",
                            matrix.len(Dimension::Rows),
                            matrix.len(Dimension::Columns)
                        ))
                        .help((rule.help)(&mismatch)),
                );
            }
        }
        ok
    }
}

/// The lesson's `Inputs` from the matrices of its route, all given and agreeing.
fn assemble(route: Route, given: Vec<Given>) -> Option<Inputs> {
    let mut matrices: Vec<(&str, InputMatrix)> = given
        .into_iter()
        .map(|given| (given.shape.key, given.matrix))
        .collect();
    let mut take = |key: &str| {
        let index = matrices.iter().position(|(given, _)| *given == key)?;
        Some(matrices.swap_remove(index).1)
    };
    Some(match route {
        Route::Projected => Inputs::Projected {
            embeddings: take("embeddings")?,
            w_q: take("w_q")?,
            w_k: take("w_k")?,
            w_v: take("w_v")?,
        },
        Route::Direct => Inputs::Direct {
            q: take("q")?,
            k: take("k")?,
            v: take("v")?,
        },
    })
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use super::*;
    use crate::lesson::parse::{TOP_KEYS, parse};

    fn given(shape: &'static InputShape, rows: usize, cols: usize) -> Given {
        Given {
            shape,
            matrix: InputMatrix::literal(DMatrix::zeros(rows, cols)),
            value_span: 0..1,
        }
    }

    fn messages(source: &str) -> Vec<String> {
        parse(source)
            .diagnostics
            .into_iter()
            .map(|d| format!("{} | {}", d.message, d.help.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn every_input_matrix_is_a_lesson_key() {
        for shape in &INPUT_SHAPES {
            assert!(
                TOP_KEYS.contains(&shape.key),
                "{} is not in TOP_KEYS",
                shape.key
            );
        }
    }

    #[test]
    fn every_axis_two_matrices_share_has_a_rule() {
        for route in [Route::Projected, Route::Direct] {
            for axis in [Axis::SeqLen, Axis::DModel, Axis::DK, Axis::DV] {
                let along: usize = INPUT_SHAPES
                    .iter()
                    .filter(|shape| shape.route == route)
                    .map(|shape| usize::from(shape.rows == axis) + usize::from(shape.cols == axis))
                    .sum();
                // The tokens count as one more along seq_len.
                let along = along + usize::from(axis == Axis::SeqLen);
                assert!(
                    along < 2 || AXIS_RULES.iter().any(|rule| rule.axis == axis),
                    "{route:?} has {along} lengths along {} and no rule compares them",
                    axis.name()
                );
            }
        }
    }

    #[test]
    fn a_new_matrix_is_checked_along_its_axes_with_no_rule_of_its_own() {
        // A matrix of the registry that is not in INPUT_SHAPES: learned positions.
        static EXTRA: InputShape = InputShape::of(MatrixName::Positions, Route::Projected);
        let mut reader = Reader {
            source: "",
            diagnostics: Vec::new(),
        };
        let matrices = [given(&INPUT_SHAPES[0], 3, 4), given(&EXTRA, 2, 5)];
        assert!(!reader.shapes_agree(&matrices, Some(3)));
        let said: Vec<(&str, &str)> = reader
            .diagnostics
            .iter()
            .map(|d| (d.message.as_str(), d.label.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                ("`positions` has 2 rows, but there are 3 tokens", "2 × 5"),
                (
                    "`positions` has 5 columns, but the embeddings have 4 columns (d_model)",
                    "2 × 5"
                ),
            ]
        );
        let mut reader = Reader {
            source: "",
            diagnostics: Vec::new(),
        };
        let matrices = [given(&INPUT_SHAPES[0], 3, 4), given(&EXTRA, 3, 4)];
        assert!(reader.shapes_agree(&matrices, Some(3)));
        assert!(reader.diagnostics.is_empty());
    }

    #[test]
    fn a_missing_matrix_is_named_with_the_shape_its_axes_give() {
        let said = messages("format = 1\ntitle = \"t\"\ntokens = [\"a\"]\nq = [[1]]\n");
        assert_eq!(
            said,
            [
                "missing `k` | add `k = [[...], ...]` (seq_len × d_k), or a generator like k = { random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }",
                "missing `v` | add `v = [[...], ...]` (seq_len × d_v), or a generator like v = { random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }",
            ]
        );
    }

    #[test]
    fn a_matrix_wrong_along_two_axes_is_told_rows_first() {
        let said = messages(
            "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n\
             q = [[1, 0], [0, 1]]\nk = [[1, 0, 1]]\nv = [[1], [2]]\n",
        );
        assert_eq!(
            said,
            [
                "`k` has 1 row, but there are 2 tokens | give one row per token, in the order of `tokens`",
                "`k` has 3 columns, but `q` has 2 | queries and keys have the same width d_k, so that q · k is defined",
            ]
        );
    }

    #[test]
    fn weights_are_told_the_width_of_the_embeddings() {
        let said = messages(
            "format = 1\ntitle = \"t\"\ntokens = [\"a\"]\nembeddings = [[1, 0]]\n\
             w_q = [[1, 0, 0]]\nw_k = [[1], [0]]\nw_v = [[1], [0]]\n",
        );
        assert_eq!(
            said,
            [
                "`w_q` has 1 row, but the embeddings have 2 columns (d_model) | X·w_q needs one row of `w_q` per embedding column: make it 2 × something",
                "`w_k` has 1 columns, but `w_q` has 3 | queries and keys have the same width d_k, so that q · k is defined",
            ]
        );
    }
}
