//! The attention engine: pure math on nalgebra, from a validated lesson to every intermediate
//! matrix, computed by running the lesson's plan (`crate::pipeline::Plan`) one operation at a
//! time.
//!
//! Nothing here knows about terminals or files.

mod agreement;
mod decode;
mod derivation;
pub mod footprint;
pub mod gradient_check;
mod gradient_step;
mod online;
pub mod quotes;
mod redo;

pub use decode::MultiplyAdds;
pub use derivation::{Derivation, token_words};
// What the operations share lives with them, below this engine (`crate::ops`); the names are
// kept here as well, where the program and its tests have always found them.
pub use crate::ops::kernels::{OnlineSoftmax, Tile, TileState, Tiles};
pub use crate::ops::kernels::{RowSoftmax, entropy_bits, shifted_exp, shifted_exps, softmax_rows};
pub use crate::ops::kernels::{rope_angle, rotate_rows, sinusoid_angle, sinusoidal};
pub use crate::ops::kernels::{rotate_rows_as, sinusoidal_as};
pub use crate::ops::{Held, Operand, Rule, Site, Variant};
// A cell's working is written below this engine, kind by kind (`crate::workings`), with the
// numbers as `number` writes them; the names are kept here, where the program finds them.
pub use crate::workings::number;
pub use crate::workings::{Explanation, HeadParts, softmax_is_shifted};

pub use crate::pipeline::{Axis, Cell, Heads, MatrixName, Step, head_superscript};
use crate::pipeline::{HEAD_SUPERSCRIPT_BYTES, push_head_superscript};

use std::sync::{Arc, OnceLock};

use nalgebra::{DMatrix, DMatrixView};

use crate::lesson::{Lesson, Mask};
use crate::ops::{self, Cells, Matrices, Operands, empty};
use crate::pipeline::{Op, Plan};

/// One slot of a step of generation's matrix: one cell per token position, each filled when
/// first looked at.
type TokenSlots = Vec<OnceLock<Arc<DMatrix<f64>>>>;

/// Every matrix of one forward pass of attention, every head, kept so that each cell can
/// explain itself.
#[derive(Debug, Clone)]
pub struct Attention {
    /// Which matrices this lesson has and how each is made.
    pub plan: Plan,
    /// Token labels: the row labels of X, Q, scores, weights and output (and of K and V in
    /// self-attention).
    pub tokens: Vec<String>,
    /// Cross-attention's source tokens, the labels of K's and V's rows and of the scores'
    /// columns; empty in self-attention.
    pub source_tokens: Vec<String>,
    /// The labels rows and columns are shown with: the tokens, with a repeated token told
    /// apart by its position as a subscript (`the₁`, `the₄`).
    labels: Vec<String>,
    /// The same for the keys: `labels` again in self-attention, the source's in cross-attention.
    key_labels: Vec<String>,
    /// The lesson's own matrices are shared with it, not copied: W_q alone may be 8 MB, and a
    /// head's block of it is read in place (`Held`).
    matrices: Matrices,
    /// The matrices computed when first looked at (`MatrixEntry::on_demand`), one cell per
    /// matrix of `matrices`' shape; `matrices` leaves their lists empty.
    on_demand: Vec<Vec<OnceLock<Arc<DMatrix<f64>>>>>,
    /// The steps of generation's matrices (`MatrixEntry::per_token`), one cell per matrix,
    /// slot and token position t, each made when first looked at from the cells of the same t
    /// (the K and V caches are not here: `cache_rows`); and the same for the online
    /// softmax's state after each tile (`MatrixEntry::per_tile`), one cell per tile.
    per_token: Vec<Vec<TokenSlots>>,
    /// Keys per tile of the online softmax (the lesson's `tile`).
    pub tile: usize,
    /// d_model, or every head's query width together when the lesson gives Q itself: what a
    /// learner who divides by √d_model divides by.
    model_width: usize,
    /// Whether the mask is the causal one, so a hidden key is one that comes after its query.
    pub causal: bool,
    /// Each query head's row softmax, with its working (max, exps, sums).
    softmax: Vec<RowSoftmax>,
    /// √d_k, the divisor of the scaling step (d_k of one head).
    pub scale_divisor: f64,
    /// ε of the norm before the projections (its default where the lesson has no norm).
    pub norm_epsilon: f64,
}

impl Attention {
    /// Runs the whole pipeline for a validated lesson, every head.
    pub fn compute(lesson: &Lesson) -> Attention {
        let plan = Plan::new(lesson.shape());
        let heads = plan.shape.heads;
        let mut matrices: Matrices = vec![Vec::new(); MatrixName::ALL.len()];
        let mut on_demand = vec![Vec::new(); MatrixName::ALL.len()];
        let mut per_token = vec![Vec::new(); MatrixName::ALL.len()];
        let mut softmax = Vec::new();
        let scale_divisor = (lesson.d_k() as f64).sqrt();
        let norm_epsilon = lesson
            .norm
            .as_ref()
            .map_or(crate::lesson::DEFAULT_NORM_EPSILON, |norm| norm.epsilon);
        let model_width = lesson.d_model().unwrap_or(heads.query * lesson.d_k());
        // Heads are independent: a large lesson computes them on every core.
        let parallel = lesson.seq_len() * model_width >= PARALLEL_WORK;
        let cache_sources = cache_sources(&plan);
        for &name in plan.order() {
            let origin = plan.origin(name).unwrap_or(Op::Input(ops::Input));
            let count = heads.count(name.per());
            if name.entry().on_demand {
                on_demand[name.index()] = vec![OnceLock::new(); count];
                continue;
            }
            // A K or V cache is read from the whole pass's keys or values (`cache_rows`).
            if matches!(origin, Op::Append(_)) {
                continue;
            }
            if name.kept_apart() {
                // One per token generated, or one per tile of keys.
                let instances = if name.per_tile() {
                    lesson.key_len().div_ceil(lesson.tile.max(1))
                } else {
                    lesson.seq_len()
                };
                per_token[name.index()] = vec![vec![OnceLock::new(); instances]; count];
                continue;
            }
            let slot_value = |slot: usize| -> (Arc<Held>, Option<RowSoftmax>) {
                match origin {
                    Op::Input(_) | Op::Given(_) => (
                        match name {
                            MatrixName::Mask => Held::computed(
                                lesson
                                    .mask
                                    .additive(lesson.seq_len(), lesson.key_len())
                                    .unwrap_or_else(|| DMatrix::zeros(0, 0)),
                            ),
                            _ => lesson.input(name).map_or_else(
                                || Held::computed(DMatrix::zeros(0, 0)),
                                |input| Held::block(&input.values, slot, count),
                            ),
                        },
                        None,
                    ),
                    Op::RowSoftmax(ops::RowSoftmax { of }) => {
                        let rows = softmax_rows(matrices[of.index()][slot].matrix());
                        (Held::shared(Arc::clone(&rows.weights)), Some(rows))
                    }
                    _ => {
                        // Only the sinusoid needs its size: the source's has a row per source token.
                        let rows = match name.entry().rows {
                            Axis::Keys => lesson.key_len(),
                            _ => lesson.seq_len(),
                        };
                        let size = (rows, lesson.d_model().unwrap_or(0));
                        let operands = Operands {
                            matrices: &matrices,
                            heads,
                            head: heads.head_of_slot(name.per(), slot),
                            model_width,
                            scale_divisor,
                            norm_epsilon,
                            size,
                            every_core: parallel && count == 1,
                            in_step_order: cache_sources.contains(&name),
                            token: None,
                            projected: plan.projected_input(),
                        };
                        let value = origin.operation().evaluate(&operands, None);
                        (Held::computed(value), None)
                    }
                }
            };
            let mut slots = Vec::with_capacity(count);
            for (value, rows) in crate::parallel::each(count, parallel, slot_value) {
                slots.push(value);
                softmax.extend(rows);
            }
            matrices[name.index()] = slots;
        }
        Attention {
            plan,
            tokens: lesson.tokens.clone(),
            labels: distinct_labels(&lesson.tokens),
            key_labels: distinct_labels(if lesson.is_cross() {
                &lesson.source_tokens
            } else {
                &lesson.tokens
            }),
            source_tokens: lesson.source_tokens.clone(),
            matrices,
            on_demand,
            per_token,
            model_width,
            causal: matches!(lesson.mask, Mask::Causal),
            softmax,
            scale_divisor,
            norm_epsilon,
            tile: lesson.tile.max(1),
        }
    }

    /// `with_variant` for the matrix of `at` (its head, and its token for a step of
    /// generation's: that step's matrix alone is made anew, in the slot the variant's
    /// matrices hold it in).
    pub(crate) fn with_variant_at(&self, at: Cell, variant: Variant) -> Option<Matrices> {
        let (head, token) = (at.head, at.token);
        let at = at.matrix;
        let origin = self.plan.origin(at)?;
        if !variant.applies_to(origin) {
            return None;
        }
        // Swapping queries and keys transposes the scores, which only fits the mask and the
        // values when there are as many keys as queries: never in cross-attention.
        if variant == Variant::Swapped && (self.plan.shape.cross || at.per_token()) {
            return None;
        }
        // The target's rows for the source's: only where there is a source, and only for the
        // products made from it (K and V).
        let from_source = matches!(
            origin,
            Op::Product(ops::Product {
                left: MatrixName::SourceX | MatrixName::SourceEmbeddings,
                ..
            }) | Op::Affine(ops::Affine {
                product: ops::Product {
                    left: MatrixName::SourceX | MatrixName::SourceEmbeddings,
                    ..
                },
                ..
            })
        );
        if variant == Variant::TargetNotSource && !from_source {
            return None;
        }
        let heads = self.heads();
        let at_slot = heads.slot(at.per(), head);
        let mut matrices = self.matrices.clone();
        let mut redo = vec![at];
        let cache_sources = cache_sources(&self.plan);
        for &name in self.plan.order() {
            let origin = self.plan.origin(name)?;
            if name != at
                && !origin
                    .operands()
                    .iter()
                    .any(|operand| redo.contains(operand))
            {
                continue;
            }
            redo.push(name);
            let count = heads.count(name.per());
            if matrices[name.index()].len() < count {
                // A matrix computed on demand: only the variant's own slot is made here.
                let empty = Held::computed(DMatrix::zeros(0, 0));
                matrices[name.index()].resize(count, empty);
            }
            for slot in 0..count {
                if name == at && slot != at_slot {
                    continue;
                }
                let size = matrices[name.index()][slot].matrix().shape();
                let chosen = (name == at).then_some(variant);
                // A generation step's matrix is made at the checked cell's token, from the
                // variant's matrices where they were made anew, else from this engine's.
                let operands = Operands {
                    matrices: &matrices,
                    heads,
                    head: heads.head_of_slot(name.per(), slot),
                    model_width: self.model_width,
                    scale_divisor: self.scale_divisor,
                    norm_epsilon: self.norm_epsilon,
                    size,
                    every_core: false,
                    in_step_order: cache_sources.contains(&name),
                    token: name.kept_apart().then_some((self as &dyn Cells, token)),
                    projected: self.plan.projected_input(),
                };
                let value = origin.operation().evaluate(&operands, chosen);
                // A slip that has no numbers here (looking ahead from the last token).
                if name == at && value.is_empty() {
                    return None;
                }
                // A slip that changes the matrix's shape (the target's rows for the source's) is
                // looked for in that matrix only: what is made from it would not fit together.
                let reshaped = name == at && size != (0, 0) && value.shape() != size;
                matrices[name.index()][slot] = Held::computed(value);
                if reshaped {
                    return Some(matrices);
                }
            }
        }
        Some(matrices)
    }

    /// The row a backward step's cells are first shown on: `focus`, or where grad_output is 0
    /// on it (the last token of a model's lesson, which predicts nothing) the nearest row
    /// before it with a gradient, since every backward cell on a row without one is 0 and
    /// shows nothing of how the gradient flows.
    pub fn row_with_a_gradient(&self, focus: usize) -> usize {
        let Some(grad) = self.matrix(MatrixName::DOutput) else {
            return focus;
        };
        let has_gradient =
            |row: usize| row < grad.nrows() && grad.row(row).iter().any(|value| *value != 0.0);
        if has_gradient(focus) {
            return focus;
        }
        (0..focus.min(grad.nrows()))
            .rev()
            .find(|&row| has_gradient(row))
            .unwrap_or(focus)
    }

    /// The loss the backward pass differentiates, L = Σ output ⊙ grad_output over every cell
    /// of the final output; `None` without `grad_output`.
    pub fn loss(&self) -> Option<f64> {
        let output = self.matrix(self.plan.final_output())?;
        let grad = self.matrix(MatrixName::DOutput)?;
        (output.shape() == grad.shape()).then(|| output.component_mul(grad).sum())
    }

    /// The query heads and K/V groups of this lesson.
    pub fn heads(&self) -> Heads {
        self.plan.shape.heads
    }

    /// The attention weights of head 0: each row a probability distribution over the keys.
    pub fn weights(&self) -> &DMatrix<f64> {
        self.weights_of(0)
    }

    /// The attention weights of one query head.
    pub fn weights_of(&self, head: usize) -> &DMatrix<f64> {
        self.softmax
            .get(head)
            .map_or(empty(), |rows| &*rows.weights)
    }

    /// How sharp row `row` of head `head`'s weights is: its entropy in bits, and how many keys
    /// it could spread over (those the mask leaves visible; log₂ of that is the most it can
    /// be). `None` for a row with no visible key.
    pub fn row_entropy(&self, head: usize, row: usize) -> Option<(f64, usize)> {
        let weights = self.weights_of(head);
        let input = self.matrix_in(self.softmax_input(), head)?;
        if row >= weights.nrows() || row >= input.nrows() {
            return None;
        }
        let visible = input
            .row(row)
            .iter()
            .filter(|score| **score != f64::NEG_INFINITY)
            .count();
        (visible > 0).then(|| (entropy_bits(weights.row(row).iter().copied()), visible))
    }

    /// A query head's softmax with its working.
    pub fn softmax_of(&self, head: usize) -> Option<&RowSoftmax> {
        self.softmax.get(head)
    }

    /// d_k, the width of one head's queries and keys.
    pub fn d_k(&self) -> usize {
        self.matrix(MatrixName::K).map_or(0, DMatrix::ncols)
    }

    /// The matrix with this name in head 0 (every matrix of a one-head lesson), if this lesson
    /// has it.
    pub fn matrix(&self, name: MatrixName) -> Option<&DMatrix<f64>> {
        self.matrix_in(name, 0)
    }

    /// Head `head`'s matrix with this name: a matrix of its K/V group for keys and values, the
    /// lesson's one for a matrix every head shares. A step of generation's matrix is that of
    /// the first step (see `matrix_at`).
    /// A K or V cache is not a matrix of its own (`matrix_at` gives it, a view of its rows).
    pub fn matrix_in(&self, name: MatrixName, head: usize) -> Option<&DMatrix<f64>> {
        self.whole_at(name, head, 0)
    }

    /// `matrix_in`, for a step of generation's matrix the one of the step that generates the
    /// token at position `token` (for the online softmax's state, the one after tile `token`):
    /// read in place, since the K or V cache after step t is the first t + 1 rows of one of its
    /// group's blocks.
    pub fn matrix_at(
        &self,
        name: MatrixName,
        head: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>> {
        let slot = self.heads().slot(name.per(), head);
        if self.is_cache(name) {
            return self.cache_rows(name, slot, token);
        }
        // A head's block of a lesson's matrix is read in place, not cut out: the explanations
        // of a step read 16 heads' blocks of W_q, W_k and W_v, 24 MB as copies.
        if !name.kept_apart()
            && self.on_demand[name.index()].get(slot).is_none()
            && let Some(held) = self.matrices[name.index()].get(slot)
        {
            return Some(held.view());
        }
        self.whole_at(name, head, token).map(DMatrix::as_view)
    }

    /// `matrix_at` of a matrix held whole; `None` for a K or V cache.
    fn whole_at(&self, name: MatrixName, head: usize, token: usize) -> Option<&DMatrix<f64>> {
        let slot = self.heads().slot(name.per(), head);
        if name.kept_apart() {
            self.plan.origin(name)?;
            return self.token_matrix(name, slot, token);
        }
        if let Some(lazy) = self.on_demand[name.index()].get(slot) {
            return self.made_once(lazy, name, slot, None);
        }
        self.matrices[name.index()]
            .get(slot)
            .map(|held| held.matrix())
    }

    /// How many of head `head`'s step-of-generation matrices `name` are made so far: the steps
    /// (or tiles) whose matrix is made. Each is made when a step first looks at it; opening one
    /// step makes what it needs. A K or V cache is made with the whole pass: every row.
    pub fn made_so_far(&self, name: MatrixName, head: usize) -> usize {
        let slot = self.heads().slot(name.per(), head);
        if self.is_cache(name) {
            return self
                .cache_rows(name, slot, self.seq_len().saturating_sub(1))
                .map_or(0, |cache| cache.nrows());
        }
        self.per_token[name.index()].get(slot).map_or(0, |made| {
            made.iter().filter(|lazy| lazy.get().is_some()).count()
        })
    }

    /// Whether `name` is a K or V cache, read a prefix at a time from the whole pass.
    fn is_cache(&self, name: MatrixName) -> bool {
        matches!(self.plan.origin(name), Some(Op::Append(_)))
    }

    /// Slot `slot`'s cache after step `token`: the first `token + 1` rows of the whole pass's
    /// keys or values of its group (after rotation with RoPE). The whole pass sums those the
    /// way each step sums its own row (`cache_sources`), so row t is the key or value step t
    /// computed, to the bit: the cache is what generation kept, and it costs nothing to open.
    /// A cache of its own made anew per group was 537 million multiply-adds at 256 tokens ×
    /// 16 groups, most of the time of opening the output row at the last token.
    fn cache_rows(
        &self,
        name: MatrixName,
        slot: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>> {
        let Some(Op::Append(ops::Append { of })) = self.plan.origin(name) else {
            return None;
        };
        let whole = self.matrices[whole_pass_of(&self.plan, of)?.index()].get(slot)?;
        (token < whole.view().nrows()).then(|| whole.top_rows(token + 1))
    }

    /// The shape of head `head`'s matrix `name` at step `token`, worked out from the plan for
    /// a step of generation's matrix made from a cache (a cache is t + 1 rows of its new rows'
    /// width, a row of scores one per cached key), so that counting a step's products does
    /// not make every group's cache; any other matrix is looked at.
    pub fn shape_at(&self, name: MatrixName, head: usize, token: usize) -> Option<(usize, usize)> {
        if !name.per_token() {
            // A head's block of W_q is measured in place, not copied out (16 heads' blocks of
            // three 1024-wide weights are 25 MB).
            if let Some(held) = self.matrices[name.index()].get(self.heads().slot(name.per(), head))
            {
                return Some(held.view().shape());
            }
            return self.matrix_at(name, head, token).map(|m| m.shape());
        }
        let shape = |of: MatrixName| self.shape_at(of, head, token);
        match self.plan.origin(name)? {
            Op::Append(ops::Append { of }) => Some((token + 1, shape(of)?.1)),
            Op::Product(ops::Product {
                left,
                right,
                transpose_right,
            })
            | Op::Affine(ops::Affine {
                product:
                    ops::Product {
                        left,
                        right,
                        transpose_right,
                    },
                ..
            }) => {
                let (left, right) = (shape(left)?, shape(right)?);
                Some((left.0, if transpose_right { right.0 } else { right.1 }))
            }
            Op::Scale(ops::Scale { of })
            | Op::RowSoftmax(ops::RowSoftmax { of })
            | Op::Rotate(ops::Rotate { of, .. })
            | Op::Mask(ops::Mask { of, .. }) => shape(of),
            // Every head's block side by side.
            Op::Concat(ops::Concat { of }) => {
                (0..self.heads().query).try_fold((0, 0), |(_, width), head| {
                    let (rows, cols) = self.shape_at(of, head, token)?;
                    Some((rows, width + cols))
                })
            }
            _ => self.matrix_at(name, head, token).map(|m| m.shape()),
        }
    }

    /// Slot `slot` of a step of generation's matrix at position `token` (of the online
    /// softmax's state after tile `token`), made the first time.
    fn token_matrix(&self, name: MatrixName, slot: usize, token: usize) -> Option<&DMatrix<f64>> {
        let lazy = self.per_token[name.index()].get(slot)?.get(token)?;
        // Every head's output row is made here one after another: with the caches read from
        // the whole pass, a head's row is a few hundred thousand multiply-adds, less than
        // starting a thread for it.
        self.made_once(lazy, name, slot, Some(token))
    }

    /// A matrix made when first looked at (a circuit, or a step of generation's at `token`),
    /// kept in `lazy` for the next look.
    fn made_once<'a>(
        &'a self,
        lazy: &'a OnceLock<Arc<DMatrix<f64>>>,
        name: MatrixName,
        slot: usize,
        token: Option<usize>,
    ) -> Option<&'a DMatrix<f64>> {
        let origin = self.plan.origin(name)?;
        let value = lazy.get_or_init(|| {
            let operands = self.operands_for(name, slot, token);
            Arc::new(origin.operation().evaluate(&operands, None))
        });
        Some(value)
    }

    /// The operands of slot `slot` of `name`, a matrix made when first looked at: at
    /// generation step `token` for a step's matrix.
    fn operands_for(&self, name: MatrixName, slot: usize, token: Option<usize>) -> Operands<'_> {
        Operands {
            matrices: &self.matrices,
            heads: self.heads(),
            head: self.heads().head_of_slot(name.per(), slot),
            model_width: self.model_width,
            scale_divisor: self.scale_divisor,
            norm_epsilon: self.norm_epsilon,
            size: (0, 0),
            every_core: false,
            in_step_order: false,
            token: token.map(|token| (self as &dyn Cells, token)),
            projected: self.plan.projected_input(),
        }
    }

    /// How many tokens there are, and so steps of generation.
    pub fn seq_len(&self) -> usize {
        self.tokens.len()
    }

    /// The value of one cell, if the lesson has it.
    pub fn value(&self, cell: Cell) -> Option<f64> {
        let matrix = self.matrix_at(cell.matrix, cell.head, cell.token)?;
        (cell.row < matrix.nrows() && cell.col < matrix.ncols())
            .then(|| matrix[(cell.row, cell.col)])
    }

    /// x_i · W_QK · x_jᵀ / √d_k (without the division when the lesson does not scale) for head `head` (the query-key circuit read between the
    /// projected inputs of query `query` and key `key`): the same number as that head's
    /// scaled score when nothing rotates the queries and keys. `None` without the circuit.
    pub fn circuit_score(&self, head: usize, query: usize, key: usize) -> Option<f64> {
        let circuit = self.matrix_in(MatrixName::WQK, head)?;
        let x = self.matrix(self.plan.projected_input()?)?;
        // The key's row is the source's in cross-attention.
        let source = self.matrix(self.plan.projected_source()?)?;
        if query >= x.nrows() || key >= source.nrows() || circuit.nrows() != x.ncols() {
            return None;
        }
        let through = x.row(query) * circuit;
        let divisor = if self.plan.shape.scale {
            self.scale_divisor
        } else {
            1.0
        };
        Some(through.dot(&source.row(key)) / divisor)
    }

    /// The matrix a printed figure of `name` is compared with (`Plan::figure_source`).
    pub fn figure_source(&self, name: MatrixName) -> MatrixName {
        self.plan.figure_source(name)
    }

    /// Whether this lesson has the matrix.
    pub fn has(&self, name: MatrixName) -> bool {
        self.plan.has(name)
    }

    /// The matrix softmax is taken over: masked, else scaled, else raw scores.
    pub fn softmax_input(&self) -> MatrixName {
        self.plan.softmax_input()
    }

    /// A matrix's symbol in this lesson (`X`, or `E` when positions are added to it).
    pub fn symbol(&self, name: MatrixName) -> &'static str {
        self.plan.symbol(name)
    }

    /// A matrix's symbol with its head, when the lesson has several and the matrix is one
    /// head's: `scores⁽²⁾` is head 2's scores (1-based, as the screen counts heads).
    pub fn symbol_in(&self, name: MatrixName, head: usize) -> String {
        let symbol = self.symbol(name);
        let mut text = String::with_capacity(symbol.len() + HEAD_SUPERSCRIPT_BYTES);
        text.push_str(symbol);
        self.push_head_mark(&mut text, name, head);
        text
    }

    /// The superscript that names a head's matrix (`⁽²⁾`), empty for a matrix the lesson
    /// shares or in a lesson of one head. Keys and values are named by their K/V group, the
    /// point grouped-query attention teaches: query head 3 of 4 in 2 groups reads K⁽²⁾, and
    /// with one group (multi-query) K has no mark.
    pub fn head_mark(&self, name: MatrixName, head: usize) -> String {
        let mut mark = String::new();
        self.push_head_mark(&mut mark, name, head);
        mark
    }

    /// `head_mark` appended to `out`.
    pub(crate) fn push_head_mark(&self, out: &mut String, name: MatrixName, head: usize) {
        let heads = self.heads();
        match name.per() {
            crate::pipeline::Per::Lesson => {}
            _ if heads.query <= 1 => {}
            crate::pipeline::Per::KvGroup if heads.kv <= 1 => {}
            crate::pipeline::Per::KvGroup => push_head_superscript(out, heads.group_of(head)),
            crate::pipeline::Per::QueryHead => push_head_superscript(out, head),
        }
    }

    /// Rows whose every key is masked: their weights and output are zero, never NaN. The mask
    /// is the lesson's, so they are the same rows in every head.
    pub fn fully_masked_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.softmax
            .first()
            .map(|rows| rows.fully_masked.as_slice())
            .unwrap_or_default()
            .iter()
            .enumerate()
            .filter_map(|(row, hidden)| hidden.then_some(row))
    }

    /// The label of a row of a matrix, in the learner's words: a token (the source's for a
    /// key's row in cross-attention), or a 1-based dimension.
    pub fn row_label(&self, name: MatrixName, row: usize) -> String {
        self.row_label_at(name, row, 0)
    }

    /// `row_label` for the matrix of the step of generation at position `token`, whose one
    /// row is that token.
    pub fn row_label_at(&self, name: MatrixName, row: usize, token: usize) -> String {
        let mut label = String::new();
        self.push_row_label_at(&mut label, name, row, token);
        label
    }

    /// `row_label_at` appended to `out`.
    pub(crate) fn push_row_label_at(
        &self,
        out: &mut String,
        name: MatrixName,
        row: usize,
        token: usize,
    ) {
        match name.entry().rows {
            Axis::NewToken => self.push_label(out, Axis::Queries, token),
            rows => self.push_label(out, rows, row),
        }
    }

    /// Column labels: keys (tokens) for the queries × keys matrices, dimensions for the rest.
    pub fn column_label(&self, name: MatrixName, col: usize) -> String {
        match name.entry().cols {
            // The online softmax's m, l and rescale: one number per row, named by the caption
            // above it.
            Axis::Single => String::new(),
            cols => self.label(cols, col),
        }
    }

    /// The label of position `index` along `axis`.
    pub fn label(&self, axis: Axis, index: usize) -> String {
        let mut label = String::new();
        self.push_label(&mut label, axis, index);
        label
    }

    /// `label` appended to `out`: a token, or a dimension counted from 1.
    pub(crate) fn push_label(&self, out: &mut String, axis: Axis, index: usize) {
        let labels = match axis {
            Axis::Queries => &self.labels,
            Axis::Keys => &self.key_labels,
            _ => &[][..],
        };
        match labels.get(index) {
            Some(label) => out.push_str(label),
            None => {
                use std::fmt::Write as _;
                // Writing into a String cannot fail.
                let _ = write!(out, "{}", index + 1);
            }
        }
    }

    /// The keys' tokens: the source's in cross-attention, else the tokens.
    pub fn key_tokens(&self) -> &[String] {
        if self.source_tokens.is_empty() {
            &self.tokens
        } else {
            &self.source_tokens
        }
    }
}

/// The operations read the lesson computed so far through `Cells`: each answer is the engine's
/// own (the methods of the same names).
impl Cells for Attention {
    fn value(&self, cell: Cell) -> Option<f64> {
        Attention::value(self, cell)
    }

    fn matrix_at(
        &self,
        name: MatrixName,
        head: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>> {
        Attention::matrix_at(self, name, head, token)
    }

    fn matrix_in(&self, name: MatrixName, head: usize) -> Option<&DMatrix<f64>> {
        Attention::matrix_in(self, name, head)
    }

    fn softmax_of(&self, head: usize) -> Option<&RowSoftmax> {
        Attention::softmax_of(self, head)
    }

    fn heads(&self) -> Heads {
        Attention::heads(self)
    }

    fn d_k(&self) -> usize {
        Attention::d_k(self)
    }

    fn scale_divisor(&self) -> f64 {
        self.scale_divisor
    }

    fn norm_epsilon(&self) -> f64 {
        self.norm_epsilon
    }

    fn tile(&self) -> usize {
        self.tile
    }

    fn tile_count(&self) -> usize {
        Attention::tile_count(self)
    }

    fn tile_keys(&self, index: usize) -> Option<std::ops::RangeInclusive<usize>> {
        Attention::tile_keys(self, index)
    }

    fn token_matrix(&self, name: MatrixName, slot: usize, token: usize) -> Option<&DMatrix<f64>> {
        Attention::token_matrix(self, name, slot, token)
    }

    fn is_cache(&self, name: MatrixName) -> bool {
        Attention::is_cache(self, name)
    }

    fn cache_rows(
        &self,
        name: MatrixName,
        slot: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>> {
        Attention::cache_rows(self, name, slot, token)
    }
}

/// Rows × width from which a lesson's heads are computed in parallel: below it, starting
/// threads costs more than it saves (a lesson a learner edits cell by cell is far below).
const PARALLEL_WORK: usize = 64 * 1024;

/// The whole pass's matrix whose row t is step t's row `new` (its q, k or v, rotated or not):
/// the same operation on the whole, found in the plan. `None` for a matrix no step's row is a
/// row of.
fn whole_pass_of(plan: &Plan, new: MatrixName) -> Option<MatrixName> {
    let whole = |origin: Op| {
        plan.order()
            .iter()
            .copied()
            .find(|name| !name.per_token() && plan.origin(*name) == Some(origin))
    };
    match plan.origin(new)? {
        Op::TokenRow(ops::TokenRow { of }) if !of.per_token() => Some(of),
        Op::Product(ops::Product {
            left,
            right,
            transpose_right: false,
        }) if !right.per_token() => whole(Op::Product(ops::Product {
            left: whole_pass_of(plan, left)?,
            right,
            transpose_right: false,
        })),
        Op::Affine(ops::Affine {
            product:
                ops::Product {
                    left,
                    right,
                    transpose_right: false,
                },
            bias,
        }) if !right.per_token() => whole(Op::Affine(ops::Affine {
            product: ops::Product {
                left: whole_pass_of(plan, left)?,
                right,
                transpose_right: false,
            },
            bias,
        })),
        Op::Rotate(ops::Rotate { of, rope }) => whole(Op::Rotate(ops::Rotate {
            of: whole_pass_of(plan, of)?,
            rope,
        })),
        _ => None,
    }
}

/// The whole pass's products the K and V caches are read from (`cache_rows`): summed row by
/// row as a step of generation sums its one row (`rows_product`), not by matrixmultiply.
fn cache_sources(plan: &Plan) -> Vec<MatrixName> {
    let mut sources = Vec::new();
    for &name in plan.order() {
        let Some(Op::Append(ops::Append { of })) = plan.origin(name) else {
            continue;
        };
        // The rotated keys are the keys turned row by row: the keys themselves are summed so.
        let mut row = Some(of);
        while let Some(new) = row {
            sources.extend(whole_pass_of(plan, new));
            row = match plan.origin(new) {
                Some(Op::Rotate(ops::Rotate { of, .. })) => Some(of),
                _ => None,
            };
        }
    }
    sources
}

/// The value of one cell among `matrices` (the engine's, or a variant's).
pub(crate) fn value_in(matrices: &Matrices, heads: Heads, cell: Cell) -> Option<f64> {
    let matrix = matrices[cell.matrix.index()]
        .get(heads.slot(cell.matrix.per(), cell.head))?
        .matrix();
    (cell.row < matrix.nrows() && cell.col < matrix.ncols()).then(|| matrix[(cell.row, cell.col)])
}

/// Each token as a label, a repeated one with its 1-based position as a subscript so that
/// `scores[the₁, cat₂]` and `scores[the₄, cat₅]` are told apart.
fn distinct_labels(tokens: &[String]) -> Vec<String> {
    const SUBSCRIPTS: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for token in tokens {
        *counts.entry(token.as_str()).or_default() += 1;
    }
    tokens
        .iter()
        .enumerate()
        .map(|(index, token)| {
            if counts.get(token.as_str()).copied().unwrap_or(0) < 2 {
                return token.clone();
            }
            let position: String = (index + 1)
                .to_string()
                .chars()
                .map(|digit| SUBSCRIPTS[digit.to_digit(10).unwrap_or(0) as usize])
                .collect();
            format!("{token}{position}")
        })
        .collect()
}

impl Mask {
    /// The additive mask as a matrix: 0 where a query may look at a key, -inf where it may not,
    /// and for a written mask whatever biases it holds.
    pub(crate) fn additive(&self, queries: usize, keys: usize) -> Option<DMatrix<f64>> {
        match self {
            Mask::None => None,
            Mask::Causal => Some(DMatrix::from_fn(queries, keys, |row, col| {
                if col > row { f64::NEG_INFINITY } else { 0.0 }
            })),
            Mask::Matrix(matrix) => Some(matrix.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_of_the_engine_shares_the_caches_already_made() {
        // A presenter's engine is copied to every student who follows it: the copies must not
        // each hold the caches again.
        let tokens: Vec<String> = (0..6).map(|token| format!("\"t{token}\"")).collect();
        let text = format!(
            "format = 2\ntitle = \"gen\"\nmask = \"causal\"\ndecode = true\ntokens = [{}]\n\
             embeddings = {{ random = \"normal\", seed = 1, shape = [6, 4] }}\n\
             w_q = {{ random = \"normal\", seed = 2, shape = [4, 4] }}\n\
             w_k = {{ random = \"normal\", seed = 3, shape = [4, 4] }}\n\
             w_v = {{ random = \"normal\", seed = 4, shape = [4, 4] }}\n",
            tokens.join(", ")
        );
        let lesson = crate::lesson::load_text("gen", None, text)
            .expect("a valid lesson")
            .lesson;
        let presenter = Attention::compute(&lesson);
        let made = presenter.matrix_at(MatrixName::KCache, 0, 3).unwrap();
        let copy = presenter.clone();
        let copied = copy.matrix_at(MatrixName::KCache, 0, 3).unwrap();
        assert_eq!(made, copied);
        assert_eq!(
            made.as_ptr(),
            copied.as_ptr(),
            "the copy made its own cache"
        );
    }

    #[test]
    fn explaining_a_step_reads_each_heads_block_of_the_weights_in_place() {
        // The explanations of the projections cut every head's block out of W_q, W_k and W_v:
        // 24 MB of copies at d_model 1024 and 16 heads, held as long as the engine.
        let text = "format = 2\ntitle = \"blocks\"\nheads = 2\ntokens = [\"a\", \"b\", \"c\"]\n\
             embeddings = { random = \"normal\", seed = 1, shape = [3, 8] }\n\
             w_q = { random = \"normal\", seed = 2, shape = [8, 8] }\n\
             w_k = { random = \"normal\", seed = 3, shape = [8, 8] }\n\
             w_v = { random = \"normal\", seed = 4, shape = [8, 8] }\n\
             w_o = { random = \"normal\", seed = 5, shape = [8, 8] }\n";
        let lesson = crate::lesson::load_text("blocks", None, text.to_string())
            .expect("a valid lesson")
            .lesson;
        let attention = Attention::compute(&lesson);
        for name in [MatrixName::Q, MatrixName::K, MatrixName::V] {
            for head in 0..2 {
                let derivation = attention
                    .derive(Cell::new(name, 2, 3).in_head(head))
                    .expect("a cell of the projection");
                assert!(!derivation.explain(&attention, 3).is_empty());
            }
        }
        for weights in [MatrixName::WQ, MatrixName::WK, MatrixName::WV] {
            let whole = &lesson.input(weights).expect("the lesson's weights").values;
            for head in 0..2 {
                assert!(
                    !attention.matrices[weights.index()][head].copied(),
                    "{weights:?}, head {head}: its block was copied out"
                );
                let block = attention.matrix_at(weights, head, 0).unwrap();
                assert_eq!(block, whole.columns(4 * head, 4));
            }
        }
    }
}
