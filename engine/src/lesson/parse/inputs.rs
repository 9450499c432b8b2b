//! The input matrices: embeddings with w_q, w_k, w_v, or q, k, v directly, and W_o beside
//! either; in cross-attention also the source's embeddings, whose rows (like K's and V's) run
//! along the source's tokens. Each matrix's axes come from the registry (`crate::pipeline`);
//! which keys go together, the shape named in a "missing" help, the row limit and every shape
//! check follow from them, and so does how a matrix is cut into heads: the registry's `Per`
//! says whether its d_k or d_v columns are H blocks (one per query head) or G blocks (one per
//! K/V group), and W_o's rows, `HeadsDV`, are H blocks of d_v.

use std::ops::Range;

use super::report::plural;
use super::{Entries, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_DIMENSION, MAX_TOKENS};
use crate::lesson::{InputMatrix, Inputs};
use crate::pipeline::{Axis as RegistryAxis, Heads, MatrixName, Per};

/// A length the attention arithmetic names; an input matrix's shape is two of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Axis {
    /// The queries' tokens.
    SeqLen,
    /// The keys' tokens: the same tokens in self-attention, the source's in cross-attention.
    KeyLen,
    DModel,
    DK,
    DV,
    /// W_o's columns: the width of the output, which nothing else has to agree with.
    DOut,
}

impl Axis {
    /// The length a registry axis has in a lesson file.
    const fn of(axis: RegistryAxis) -> Axis {
        match axis {
            // A step of generation's one row is a query token's; no input has such a row.
            RegistryAxis::Queries | RegistryAxis::NewToken => Axis::SeqLen,
            RegistryAxis::Keys => Axis::KeyLen,
            RegistryAxis::DModel => Axis::DModel,
            RegistryAxis::DK => Axis::DK,
            // H blocks of d_v side by side: each block is compared along d_v (`blocks`).
            RegistryAxis::DV | RegistryAxis::HeadsDV => Axis::DV,
            // The online softmax's one column is no input's either: nothing has to agree with it.
            RegistryAxis::DOut | RegistryAxis::Single => Axis::DOut,
        }
    }

    /// The axis's name in a help; the keys are counted by `src_len` in cross-attention.
    fn name(self, cross: bool) -> &'static str {
        match self {
            Axis::SeqLen => "seq_len",
            Axis::KeyLen if cross => "src_len",
            Axis::KeyLen => "seq_len",
            Axis::DModel => "d_model",
            Axis::DK => "d_k",
            Axis::DV => "d_v",
            Axis::DOut => "d_out",
        }
    }

    /// The most rows (or columns) along this axis: one per token, or a model dimension.
    pub(super) fn limit(self) -> usize {
        match self {
            Axis::SeqLen | Axis::KeyLen => MAX_TOKENS,
            _ => MAX_DIMENSION,
        }
    }
}

/// Which inputs a lesson gives: embeddings that weights project, or the projections directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Projected,
    Direct,
    /// Optional beside either route: W_o projects the heads' outputs however Q, K, V came.
    Either,
    /// With the projected route, required in cross-attention (with `source_tokens`) and
    /// refused in self-attention: the source's embeddings.
    Source,
}

/// A matrix a lesson file may give, and the axes its rows and columns run along.
#[derive(Debug)]
struct InputShape {
    name: MatrixName,
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
            name,
            key: entry.key,
            route,
            rows: Axis::of(entry.rows),
            cols: Axis::of(entry.cols),
        }
    }

    /// How many head blocks the matrix's rows or columns are cut into: a d_k or d_v side is one
    /// block per query head or per K/V group (the registry's `Per`), W_o's rows (H·d_v) one per
    /// query head, any other side is whole.
    fn blocks(&self, dimension: Dimension, heads: Heads) -> usize {
        let entry = self.name.entry();
        let axis = match dimension {
            Dimension::Rows => entry.rows,
            Dimension::Columns => entry.cols,
        };
        match axis {
            RegistryAxis::DK | RegistryAxis::DV => heads.count(entry.per),
            RegistryAxis::HeadsDV => heads.query,
            _ => 1,
        }
    }

    /// What one block of this matrix belongs to: "head" or "K/V group" (a group is a head when
    /// there are as many as heads).
    fn block_noun(&self, heads: Heads) -> &'static str {
        match self.name.per() {
            Per::KvGroup if heads.kv < heads.query => "K/V group",
            _ => "head",
        }
    }
}

/// Every input matrix, in the order a lesson file writes them (the order they are read and
/// their shapes checked in; the first along an axis sets its length, so `embeddings` stays
/// first). A new input matrix is one more line here (and its key in `TOP_KEYS`): the check that it is
/// given with the others of its route, the shape its "missing" help names, its row limit and
/// the agreement of its dimensions with the others all follow from its axes. (Building the
/// `Inputs` value from it is `assemble`'s, since `Inputs` names each matrix.)
const INPUT_SHAPES: [InputShape; 10] = [
    InputShape::of(MatrixName::Embeddings, Route::Projected),
    InputShape::of(MatrixName::SourceEmbeddings, Route::Source),
    InputShape::of(MatrixName::WQ, Route::Projected),
    InputShape::of(MatrixName::WK, Route::Projected),
    InputShape::of(MatrixName::WV, Route::Projected),
    InputShape::of(MatrixName::Q, Route::Direct),
    InputShape::of(MatrixName::K, Route::Direct),
    InputShape::of(MatrixName::V, Route::Direct),
    InputShape::of(MatrixName::WO, Route::Either),
    InputShape::of(MatrixName::DOutput, Route::Either),
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
    /// The length this matrix should have: `per_block` for each of its `blocks`.
    expected: usize,
    /// The axis's length in one head block (d_k, d_v), as `set_by` gives it.
    per_block: usize,
    /// How many head blocks this matrix has along the axis, and what each belongs to.
    blocks: usize,
    noun: &'static str,
    /// How many head blocks `set_by` has along the axis, and what each belongs to.
    set_blocks: usize,
    set_noun: &'static str,
}

impl Mismatch<'_> {
    /// Whether heads come into it: either matrix is cut into more than one block.
    fn in_blocks(&self) -> bool {
        self.blocks > 1 || self.set_blocks > 1
    }

    /// Each head block of this matrix is not as wide as each of `set_by`'s: `width` (d_k, d_v)
    /// must agree.
    fn blocks_disagree(&self, width: &str) -> String {
        format!(
            "each of `{}`'s {} has {}, but each of `{}`'s {} has {} ({width} must agree)",
            self.key,
            plural(self.blocks, self.noun),
            self.block_width(),
            self.set_by,
            plural(self.set_blocks, self.set_noun),
            self.per_block
        )
    }

    /// "1 column", "3 columns": one block's width as found.
    fn block_width(&self) -> String {
        plural(self.found / self.blocks.max(1), "column")
    }

    /// When the width found is a whole number of K/V groups that divides the heads, the
    /// mistake may be `kv_heads` rather than the matrix: said as another way out.
    fn other_group_count(&self) -> String {
        let groups = self.found.checked_div(self.per_block).unwrap_or(0);
        let fits = groups > 0
            && self.found.is_multiple_of(self.per_block)
            && groups != self.blocks
            && self.set_blocks.is_multiple_of(groups);
        if fits {
            format!(
                ", or, if it holds {}, set `kv_heads = {groups}`",
                plural(groups, "K/V group")
            )
        } else {
            String::new()
        }
    }
}

/// How one axis is checked: what sets its length, and what a matrix that disagrees is told.
struct AxisRule {
    axis: Axis,
    /// What sets the length: the number of tokens (or of source tokens), or else the first
    /// matrix in `INPUT_SHAPES` (of the lesson's route) that runs along the axis.
    set_by: SetBy,
    message: fn(&Mismatch) -> String,
    help: fn(&Mismatch) -> String,
}

/// What sets an axis's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetBy {
    /// `tokens`: one query per token.
    Tokens,
    /// `source_tokens` in cross-attention, else `tokens`: one key per token.
    KeyTokens,
    /// The first matrix along the axis.
    FirstMatrix,
}

/// "give one row per token, in the order of `tokens`", or per source token.
fn one_per_token(m: &Mismatch) -> String {
    let (noun, key) = if m.set_by == "source tokens" {
        ("source token", "source_tokens")
    } else {
        ("token", "tokens")
    };
    format!(
        "give one {} per {noun}, in the order of `{key}`",
        m.dimension.noun()
    )
}

/// The shape rules, in the order they are checked (so a matrix wrong in two ways is told in
/// this order). d_out has no rule: only W_o runs along it; `every_shared_axis_has_a_rule` fails
/// when a new matrix changes that. Along d_k and d_v the lengths compared are those of one head
/// block (`InputShape::blocks`).
const AXIS_RULES: [AxisRule; 6] = [
    AxisRule {
        axis: Axis::SeqLen,
        set_by: SetBy::Tokens,
        message: |m| {
            format!(
                "`{}` has {}, but there are {} tokens",
                m.key,
                plural(m.found, m.dimension.noun()),
                m.expected
            )
        },
        help: one_per_token,
    },
    AxisRule {
        axis: Axis::KeyLen,
        set_by: SetBy::KeyTokens,
        message: |m| {
            format!(
                "`{}` has {}, but there are {} {}",
                m.key,
                plural(m.found, m.dimension.noun()),
                m.expected,
                m.set_by
            )
        },
        help: one_per_token,
    },
    AxisRule {
        axis: Axis::DModel,
        set_by: SetBy::FirstMatrix,
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
        set_by: SetBy::FirstMatrix,
        message: |m| {
            if m.in_blocks() {
                m.blocks_disagree("d_k")
            } else {
                format!(
                    "`{}` has {} {}s, but `{}` has {}",
                    m.key,
                    m.found,
                    m.dimension.noun(),
                    m.set_by,
                    m.expected
                )
            }
        },
        help: |m| {
            let why = "queries and keys have the same width d_k, so that q · k is defined";
            if m.in_blocks() {
                format!(
                    "{why}: give `{}` {} × {} = {} columns{}",
                    m.key,
                    m.blocks,
                    m.per_block,
                    m.expected,
                    m.other_group_count()
                )
            } else {
                why.to_string()
            }
        },
    },
    AxisRule {
        axis: Axis::DV,
        set_by: SetBy::FirstMatrix,
        message: |m| match m.dimension {
            // W_o's rows: every head's output side by side.
            Dimension::Rows if m.blocks == 1 => format!(
                "`{}` has {}, but the head's output is {} wide (d_v, as `{}` gives it)",
                m.key,
                plural(m.found, "row"),
                m.expected,
                m.set_by
            ),
            Dimension::Rows => format!(
                "`{}` has {}, but the {} heads' outputs side by side are {} wide ({} × d_v {})",
                m.key,
                plural(m.found, "row"),
                m.blocks,
                m.expected,
                m.blocks,
                m.per_block
            ),
            Dimension::Columns => m.blocks_disagree("d_v"),
        },
        help: |m| match m.dimension {
            Dimension::Rows => format!(
                "concat·{key} needs one row of `{key}` per column of concat: give it H·d_v = {} × {} = {} rows",
                m.blocks,
                m.per_block,
                m.expected,
                key = m.key
            ),
            Dimension::Columns => format!(
                "give `{}` {} × {} = {} columns{}",
                m.key,
                m.blocks,
                m.per_block,
                m.expected,
                m.other_group_count()
            ),
        },
    },
    // The output's width: W_o's columns, which grad_output (its gradient) must have too.
    AxisRule {
        axis: Axis::DOut,
        set_by: SetBy::FirstMatrix,
        message: |m| {
            format!(
                "`{}` has {} {}s, but `{}` has {} (d_out, the output's width)",
                m.key,
                m.found,
                m.dimension.noun(),
                m.set_by,
                m.expected
            )
        },
        help: |m| {
            format!(
                "grad_output is dL/d(output): one column per column of the output, {}",
                m.expected
            )
        },
    },
];

/// An input matrix as read, with what it is and where it was written.
struct Given {
    shape: &'static InputShape,
    matrix: InputMatrix,
    value_span: Range<usize>,
}

impl Given {
    fn shape_text(&self) -> String {
        format!(
            "{} × {}",
            self.len(Dimension::Rows),
            self.len(Dimension::Columns)
        )
    }

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
    /// Either embeddings with W_q, W_k, W_v, or Q, K, V directly, and W_o when given, and in
    /// cross-attention the source's embeddings with the projected route; all shapes agreeing.
    /// `tokens` is how many tokens the lesson has, `cross` whether it has `source_tokens` and
    /// `source_tokens` how many (`None` when they could not be read, so that nothing is
    /// measured against them), and `heads` its heads, when they could be read.
    pub(super) fn inputs(
        &mut self,
        entries: &Entries<'_, '_>,
        tokens: Option<usize>,
        (cross, source_tokens): (bool, Option<usize>),
        heads: Option<Heads>,
    ) -> (Option<ReadInputs>, Option<QueryWidth>) {
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
        let Some(route) = self.route(&written, entries) else {
            return (None, None);
        };
        // W_q's (or Q's) columns, which RoPE needs to be even per head, whatever else is wrong.
        let query_width = written.iter().find_map(|(shape, given)| {
            let query = match route {
                Route::Direct => MatrixName::Q,
                _ => MatrixName::WQ,
            };
            (shape.name == query)
                .then_some(given.as_ref())
                .flatten()
                .map(|given| QueryWidth {
                    columns: given.matrix.values.ncols(),
                    projected: route != Route::Direct,
                })
        });
        (
            self.agreeing_inputs(
                entries,
                written,
                route,
                (tokens, cross, source_tokens),
                heads,
            ),
            query_width,
        )
    }

    /// The matrices of `route` as one lesson's inputs, when every one is there, could be read
    /// and agrees with the others; otherwise says what is missing or disagrees.
    fn agreeing_inputs(
        &mut self,
        entries: &Entries<'_, '_>,
        written: Vec<(&'static InputShape, Option<Given>)>,
        route: Route,
        (tokens, cross, source_tokens): (Option<usize>, bool, Option<usize>),
        heads: Option<Heads>,
    ) -> Option<ReadInputs> {
        if !self.source_fits(route, cross, entries) {
            return None;
        }
        let anchor = written
            .first()
            .and_then(|(shape, _)| entries.get(shape.key))
            .map(|(span, _)| span);
        let required = |shape: &&InputShape| {
            shape.route == route
                || (shape.route == Route::Source && route == Route::Projected && cross)
        };
        let missing: Vec<&InputShape> = INPUT_SHAPES
            .iter()
            .filter(required)
            .filter(|shape| written.iter().all(|(given, _)| given.key != shape.key))
            .collect();
        for shape in &missing {
            // The source's embeddings go with the source's tokens: said there.
            let anchor = match shape.route {
                Route::Source => entries.get("source_tokens").map(|(span, _)| span),
                _ => anchor.clone(),
            };
            self.missing_input(shape, anchor, cross);
        }
        if !missing.is_empty() {
            return None;
        }
        // A matrix that could not be read has said why; its shape cannot be compared, but the
        // others are compared among themselves, so that their problems are told at once.
        let unread = written.iter().any(|(_, given)| given.is_none());
        let given: Vec<Given> = written.into_iter().filter_map(|(_, given)| given).collect();
        let keys = if cross { source_tokens } else { tokens };
        if !self.shapes_agree(&given, (tokens, keys, cross), heads) || unread {
            return None;
        }
        assemble(route, given)
    }

    /// `source_embeddings` goes with `source_tokens` and the projected route: said when it is
    /// written without them.
    fn source_fits(&mut self, route: Route, cross: bool, entries: &Entries<'_, '_>) -> bool {
        let Some((span, _)) = entries.get("source_embeddings") else {
            return true;
        };
        let problem = match (cross, route) {
            (false, _) => Diagnostic::error(span, "`source_embeddings` without `source_tokens`")
                .label("the source of cross-attention")
                .help("cross-attention needs the source's tokens too: add `source_tokens = [\"the\", \"cat\"]`, one per row of `source_embeddings`; or remove `source_embeddings` for self-attention"),
            (true, Route::Direct) => Diagnostic::error(span, "`source_embeddings` with q, k, v given")
                .label("nothing projects these")
                .help("when the lesson gives q, k and v, the source's keys and values are `k` and `v` themselves (one row per source token): remove `source_embeddings`, or give embeddings with w_q, w_k, w_v instead of q, k, v"),
            (true, _) => return true,
        };
        self.error(problem);
        false
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
    fn missing_input(&mut self, shape: &InputShape, anchor: Option<Range<usize>>, cross: bool) {
        let key = shape.key;
        let label = if anchor.is_some() {
            format!("`{key}` goes with this")
        } else {
            "no inputs in this lesson".to_string()
        };
        let dimensions = format!("{} × {}", shape.rows.name(cross), shape.cols.name(cross));
        self.error(
            Diagnostic::error(anchor.unwrap_or(0..0), format!("missing `{key}`"))
                .label(label)
                .help(format!("add `{key} = [[...], ...]` ({dimensions}), or a generator like {key} = {{ random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }}")),
        );
    }

    /// Applies `AXIS_RULES`: along each axis, every matrix has the length the tokens or the
    /// first matrix along it set, one head block at a time along d_k and d_v. Reports each one
    /// that does not. Without `heads` (they could not be read) the blocks are unknown, so d_k
    /// and d_v are not compared.
    fn shapes_agree(
        &mut self,
        given: &[Given],
        (tokens, keys, cross): (Option<usize>, Option<usize>, bool),
        heads: Option<Heads>,
    ) -> bool {
        let mut ok = true;
        // A side that its heads cannot share evenly has no width per head to compare.
        let mut uneven = vec![false; given.len()];
        if let Some(heads) = heads {
            for (index, matrix) in given.iter().enumerate() {
                for dimension in [Dimension::Rows, Dimension::Columns] {
                    if !self.blocks_fit(matrix, dimension, heads) {
                        uneven[index] = true;
                        ok = false;
                    }
                }
            }
        }
        for rule in &AXIS_RULES {
            let in_blocks = matches!(rule.axis, Axis::DK | Axis::DV);
            let heads = match heads {
                Some(heads) => heads,
                None if in_blocks => continue,
                None => Heads::ONE,
            };
            let mut along = given
                .iter()
                .zip(&uneven)
                .filter(|(_, uneven)| !**uneven)
                .flat_map(|(matrix, _)| matrix.along(rule.axis));
            // What sets the length: (its name, the length of one block, its blocks, their noun).
            let set = match rule.set_by {
                SetBy::Tokens => tokens.map(|count| ("tokens", count, 1, "head")),
                SetBy::KeyTokens => {
                    let noun = if cross { "source tokens" } else { "tokens" };
                    keys.map(|count| (noun, count, 1, "head"))
                }
                SetBy::FirstMatrix => along.next().map(|(matrix, dimension)| {
                    let blocks = matrix.shape.blocks(dimension, heads);
                    (
                        matrix.shape.key,
                        matrix.len(dimension) / blocks,
                        blocks,
                        matrix.shape.block_noun(heads),
                    )
                }),
            };
            let Some((set_by, per_block, set_blocks, set_noun)) = set else {
                continue;
            };
            for (matrix, dimension) in along {
                let blocks = matrix.shape.blocks(dimension, heads);
                let found = matrix.len(dimension);
                let expected = per_block * blocks;
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
                    per_block,
                    blocks,
                    noun: matrix.shape.block_noun(heads),
                    set_blocks,
                    set_noun,
                };
                self.error(
                    Diagnostic::error(matrix.value_span.clone(), (rule.message)(&mismatch))
                        .label(matrix.shape_text())
                        .help((rule.help)(&mismatch)),
                );
            }
        }
        ok
    }

    /// Whether a side of d_k or d_v blocks (one per head or group) can be cut into them evenly;
    /// says so when it cannot. W_o's rows are compared whole, with H·d_v, by the d_v rule.
    fn blocks_fit(&mut self, matrix: &Given, dimension: Dimension, heads: Heads) -> bool {
        let blocks = matrix.shape.blocks(dimension, heads);
        let found = matrix.len(dimension);
        let axis = match dimension {
            Dimension::Rows => matrix.shape.rows,
            Dimension::Columns => matrix.shape.cols,
        };
        if blocks == 1 || found.is_multiple_of(blocks) || matrix.shape.name == MatrixName::WO {
            return true;
        }
        let noun = matrix.shape.block_noun(heads);
        let count = if noun == "head" { "H" } else { "G" };
        let example = found.div_ceil(blocks) * blocks;
        self.error(
            Diagnostic::error(
                matrix.value_span.clone(),
                format!(
                    "`{}` has {}, which {} cannot share",
                    matrix.shape.key,
                    plural(found, dimension.noun()),
                    plural(blocks, noun)
                ),
            )
            .label(matrix.shape_text())
            .help(format!(
                "each {noun} takes its own block of {} {}s side by side: give {count}·{} {}s, e.g. {example}",
                axis.name(false),
                dimension.noun(),
                axis.name(false),
                dimension.noun()
            )),
        );
        false
    }
}

/// The width of the queries of all heads side by side (W_q's or Q's columns), known once that
/// matrix is read, even when the other inputs are missing or disagree.
#[derive(Debug, Clone, Copy)]
pub(super) struct QueryWidth {
    pub columns: usize,
    /// Whether the queries are projected (W_q) or given (Q): how a help names them.
    pub projected: bool,
}

/// The input matrices as read: Q, K, V's inputs, and beside them W_o and the source's
/// embeddings when the lesson has them.
pub(super) struct ReadInputs {
    pub inputs: Inputs,
    pub w_o: Option<InputMatrix>,
    pub grad_output: Option<InputMatrix>,
    pub source_embeddings: Option<InputMatrix>,
}

/// The lesson's `Inputs` from the matrices of its route, all given and agreeing, and W_o and
/// the source's embeddings.
fn assemble(route: Route, given: Vec<Given>) -> Option<ReadInputs> {
    let mut matrices: Vec<(&str, InputMatrix)> = given
        .into_iter()
        .map(|given| (given.shape.key, given.matrix))
        .collect();
    let mut take = |key: &str| {
        let index = matrices.iter().position(|(given, _)| *given == key)?;
        Some(matrices.swap_remove(index).1)
    };
    let inputs = match route {
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
        Route::Either | Route::Source => return None,
    };
    Some(ReadInputs {
        inputs,
        w_o: take("w_o"),
        grad_output: take("grad_output"),
        source_embeddings: take("source_embeddings"),
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
            let axes = [
                Axis::SeqLen,
                Axis::KeyLen,
                Axis::DModel,
                Axis::DK,
                Axis::DV,
                Axis::DOut,
            ];
            for axis in axes {
                let along: usize = INPUT_SHAPES
                    .iter()
                    .filter(|shape| [route, Route::Either, Route::Source].contains(&shape.route))
                    .map(|shape| usize::from(shape.rows == axis) + usize::from(shape.cols == axis))
                    .sum();
                // The tokens (the source's for the keys) count as one more along each.
                let along = along + usize::from(matches!(axis, Axis::SeqLen | Axis::KeyLen));
                assert!(
                    along < 2 || AXIS_RULES.iter().any(|rule| rule.axis == axis),
                    "{route:?} has {along} lengths along {} and no rule compares them",
                    axis.name(false)
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
        assert!(!reader.shapes_agree(&matrices, (Some(3), Some(3), false), Some(Heads::ONE)));
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
        assert!(reader.shapes_agree(&matrices, (Some(3), Some(3), false), Some(Heads::ONE)));
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
