//! Lessons: the TOML file format, its validation into a `Lesson`, the built-in lessons, and
//! writing lessons back to disk.
//!
//! A lesson file is untrusted text. `parse` checks all of it and reports every problem it finds
//! as a rustc-style `Diagnostic`; only a lesson without errors becomes a `Lesson`.

mod atomic;
mod builtin;
pub mod diagnostic;
mod generate;
pub mod limits;
mod load;
mod nesting;
pub mod parse;
pub mod schema;
pub mod text;
mod write;

pub use atomic::{WriteError, write_file, write_new_file};
pub use builtin::{BUILTIN, Builtin, builtin};
pub use diagnostic::{Diagnostic, Severity};
pub use generate::{Generator, RandomKind};
pub use load::{LoadError, LoadedLesson, load, load_file, load_text};
pub use parse::{Parsed, parse};
pub use write::{
    freeze, frozen_bytes, keep_generators, lesson_to_toml, lesson_toml_bytes, template,
};

use std::sync::Arc;

use nalgebra::DMatrix;

use std::collections::BTreeMap;

use crate::ops::Rope;
pub use crate::ops::{DEFAULT_ROPE_THETA, RopePairing};
pub use crate::pipeline::NormKind;
use crate::pipeline::{Biased, Heads, MatrixName, Positions, Shape, Step};

/// Numbers in a lesson's generators from which they are drawn on every core: below it, starting
/// threads costs more than it saves.
const PARALLEL_NUMBERS: usize = 64 * 1024;

/// A validated lesson: every shape fits, every number is finite and in range, every text is safe.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    pub title: String,
    pub source: String,
    pub summary: String,
    pub tokens: Vec<String>,
    /// Cross-attention's source tokens, which the keys and values come from; empty in
    /// self-attention, where the tokens are both the queries and the keys.
    pub source_tokens: Vec<String>,
    /// The tokenizer's id of each token (`token_ids`, format 2), as a lesson made from a
    /// model's checkpoint has them; `None` in a lesson of labels alone.
    pub token_ids: Option<Vec<u64>>,
    pub inputs: Inputs,
    /// S, src_len × d_model: the source's embeddings, which W_k and W_v project in
    /// cross-attention (the projected route; the direct route gives K and V with src_len rows).
    pub source_embeddings: Option<InputMatrix>,
    /// Divide scores by √d_k (the default), or not.
    pub scale: bool,
    pub mask: Mask,
    /// Generation with a K/V cache (`decode = true`): the output made again one token at a
    /// time, each step reusing the keys and values of the steps before.
    pub decode: bool,
    /// The norm each row of X gets before the projections (`norm = "layer"` or `"rms"`,
    /// format 2), with its gain, bias and ε.
    pub norm: Option<NormInputs>,
    /// The biases the projections add (`b_q`, `b_k`, `b_v`, `b_o`, format 2).
    pub biases: Biases,
    /// Keys the online softmax takes at a time (`tile = B`, format 2; 2 by default): FlashAttention's
    /// tile of keys, which the engine's `Attention::online_softmax` is asked for.
    pub tile: usize,
    /// Position information (format 2): none, sinusoidal, learned (a matrix) or RoPE.
    pub positions: PositionInputs,
    /// Which columns RoPE turns together (`rope_pairing`, format 2, RoPE only): 2i with 2i+1,
    /// or i with i + d_k/2 as Llama-family checkpoints do.
    pub rope_pairing: RopePairing,
    /// RoPE's base θ in the angles p · θ^(−2i/d_k) (`rope_theta`, format 2, RoPE only;
    /// `DEFAULT_ROPE_THETA` unless given).
    pub rope_theta: f64,
    /// The file format the lesson is written in: 1, or 2 for positions and heads.
    pub format: u32,
    /// H query heads sharing G key/value groups (`heads`, `kv_heads`; one head by default).
    pub heads: Heads,
    /// W_o, (H·d_v) × d_out: the heads' outputs, side by side, are projected by it. Required
    /// with more than one head.
    pub w_o: Option<InputMatrix>,
    /// dL/d(output) for the backward pass (`grad_output`, format 2): seq_len × d_out. With it
    /// the lesson has the backward steps, for the loss L = Σ output ⊙ grad_output.
    pub grad_output: Option<InputMatrix>,
    /// 0-based row the tutor opens on.
    pub focus: Option<usize>,
    /// Decimals shown.
    pub decimals: usize,
    pub narration: Narration,
    pub expected: Expected,
}

/// Where Q, K and V come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Inputs {
    /// Q = X·W_q, K = X·W_k, V = X·W_v.
    Projected {
        embeddings: InputMatrix,
        w_q: InputMatrix,
        w_k: InputMatrix,
        w_v: InputMatrix,
    },
    /// The lesson gives Q, K and V itself.
    Direct {
        q: InputMatrix,
        k: InputMatrix,
        v: InputMatrix,
    },
}

impl Inputs {
    /// Whether Q, K and V are projected from embeddings (else the lesson gives them).
    pub fn is_projected(&self) -> bool {
        matches!(self, Inputs::Projected { .. })
    }

    /// d_model: the width of the embeddings, when the lesson has them.
    pub(crate) fn d_model(&self) -> Option<usize> {
        match self {
            Inputs::Projected { embeddings, .. } => Some(embeddings.values.ncols()),
            Inputs::Direct { .. } => None,
        }
    }

    /// The width of the keys of all K/V groups side by side: G · d_k.
    pub(crate) fn all_groups_d_k(&self) -> usize {
        match self {
            Inputs::Projected { w_k, .. } => w_k.values.ncols(),
            Inputs::Direct { k, .. } => k.values.ncols(),
        }
    }

    /// The width of the values of all K/V groups side by side: G · d_v.
    pub(crate) fn all_groups_d_v(&self) -> usize {
        match self {
            Inputs::Projected { w_v, .. } => w_v.values.ncols(),
            Inputs::Direct { v, .. } => v.values.ncols(),
        }
    }
}

/// A matrix the lesson gives, with the recipe when its numbers are generated.
///
/// The numbers are shared (`Arc`): the tutor keeps the lesson as loaded, as saved and as edited,
/// and the attention computed from it, and a 1024 × 1024 matrix (8 MB) is held once by all of
/// them until one is edited (`Arc::make_mut` copies it then).
#[derive(Debug, Clone)]
pub struct InputMatrix {
    pub values: Arc<DMatrix<f64>>,
    pub generator: Option<Generator>,
}

impl PartialEq for InputMatrix {
    fn eq(&self, other: &InputMatrix) -> bool {
        // The same numbers shared are equal without comparing a million of them.
        self.generator == other.generator
            && (Arc::ptr_eq(&self.values, &other.values) || self.values == other.values)
    }
}

impl InputMatrix {
    pub fn literal(values: DMatrix<f64>) -> InputMatrix {
        InputMatrix {
            values: Arc::new(values),
            generator: None,
        }
    }

    pub fn generated(generator: Generator) -> InputMatrix {
        InputMatrix {
            values: Arc::new(generator.generate()),
            generator: Some(generator),
        }
    }

    /// A generated matrix whose numbers are not drawn yet: zeros of its shape (never written, so
    /// they cost no memory) until `Lesson::draw_numbers` replaces them. The reader makes these
    /// so that a lesson's generators are drawn together, on every core, and only once the file
    /// has been found valid.
    pub(crate) fn to_draw(generator: Generator) -> InputMatrix {
        InputMatrix {
            values: Arc::new(DMatrix::zeros(generator.rows, generator.cols)),
            generator: Some(generator),
        }
    }
}

/// The norm before the projections: its kind, the gain γ and bias β (1 × d_model each; γ = 1
/// and β = 0 where the lesson gives none), and ε.
#[derive(Debug, Clone, PartialEq)]
pub struct NormInputs {
    pub kind: NormKind,
    pub gain: Option<InputMatrix>,
    /// LayerNorm's only: RMSNorm has no bias.
    pub bias: Option<InputMatrix>,
    /// Added to the variance (or mean of squares) before its square root: 1e-5 by default, as
    /// `nn.LayerNorm` has it.
    pub epsilon: f64,
}

/// ε where a lesson gives none: `nn.LayerNorm`'s default.
pub const DEFAULT_NORM_EPSILON: f64 = 1e-5;

/// The biases the projections add, each 1 × n: b_q H·d_k, b_k G·d_k, b_v G·d_v (every head's or
/// group's block side by side, as the weights' columns are), b_o d_out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Biases {
    pub q: Option<InputMatrix>,
    pub k: Option<InputMatrix>,
    pub v: Option<InputMatrix>,
    pub o: Option<InputMatrix>,
}

impl Biases {
    /// Which projections add a bias.
    pub fn given(&self) -> Biased {
        Biased {
            q: self.q.is_some(),
            k: self.k.is_some(),
            v: self.v.is_some(),
            o: self.o.is_some(),
        }
    }
}

/// How positions enter the lesson, with the learned matrix when it has one.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PositionInputs {
    #[default]
    None,
    Sinusoidal,
    /// seq_len × d_model, added to the embeddings.
    Learned(InputMatrix),
    Rope,
}

impl PositionInputs {
    pub fn kind(&self) -> Positions {
        match self {
            PositionInputs::None => Positions::None,
            PositionInputs::Sinusoidal => Positions::Sinusoidal,
            PositionInputs::Learned(_) => Positions::Learned,
            PositionInputs::Rope => Positions::Rope,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Mask {
    None,
    /// Each token sees itself and the tokens before it.
    Causal,
    /// seq_len × seq_len of 0 (keep) and -inf (hide).
    Matrix(DMatrix<f64>),
}

/// The lesson's own words for each step, by step; a step without falls back to our default text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Narration {
    by_step: BTreeMap<Step, String>,
}

impl Narration {
    pub fn get(&self, step: Step) -> Option<&str> {
        self.by_step.get(&step).map(String::as_str)
    }

    pub(crate) fn set(&mut self, step: Step, text: String) {
        self.by_step.insert(step, text);
    }
}

/// Figures as a source document printed them, for `attn-tutor check`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expected {
    /// Largest deviation accepted; `None` means half a unit of the lesson's last decimal.
    pub tolerance: Option<f64>,
    pub figures: Vec<ExpectedFigure>,
    /// What the document printed wrongly that no figure can show (a garbled formula, a step
    /// that does not give the result printed after it), in the lesson author's words, for
    /// `check` to name.
    pub slips: Vec<String>,
}

/// The printed rows of one matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedFigure {
    pub matrix: MatrixName,
    /// The 0-based head of a figure given under `[expected.heads.N]` (N = head + 1); `None`
    /// for a figure of the whole lesson, or of the one head given in `[expected]` itself.
    /// `output` with no head is the final output (concat·W_o when the lesson has W_o).
    pub head: Option<usize>,
    pub rows: Vec<ExpectedRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedRow {
    /// 0-based row of the matrix.
    pub row: usize,
    pub values: Vec<PrintedNumber>,
}

/// A number as the document printed it: its value and its text, whose decimals tell how it was
/// rounded.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintedNumber {
    pub value: f64,
    pub text: String,
}

impl PrintedNumber {}

impl Lesson {
    pub fn seq_len(&self) -> usize {
        self.tokens.len()
    }

    /// The matrix of this lesson's own numbers named `name`, if it is one.
    pub fn input(&self, name: MatrixName) -> Option<&InputMatrix> {
        match (&self.inputs, name) {
            (Inputs::Projected { embeddings, .. }, MatrixName::Embeddings) => Some(embeddings),
            (Inputs::Projected { w_q, .. }, MatrixName::WQ) => Some(w_q),
            (Inputs::Projected { w_k, .. }, MatrixName::WK) => Some(w_k),
            (Inputs::Projected { w_v, .. }, MatrixName::WV) => Some(w_v),
            (Inputs::Direct { q, .. }, MatrixName::Q) => Some(q),
            (Inputs::Direct { k, .. }, MatrixName::K) => Some(k),
            (Inputs::Direct { v, .. }, MatrixName::V) => Some(v),
            _ => match (&self.positions, name) {
                (PositionInputs::Learned(positions), MatrixName::Positions) => Some(positions),
                _ if name == MatrixName::WO => self.w_o.as_ref(),
                _ if name == MatrixName::DOutput => self.grad_output.as_ref(),
                _ if name == MatrixName::SourceEmbeddings => self.source_embeddings.as_ref(),
                _ => self.vector(name),
            },
        }
    }

    /// A gain or bias vector of the lesson named `name`, if it gives it.
    fn vector(&self, name: MatrixName) -> Option<&InputMatrix> {
        let norm = self.norm.as_ref();
        match name {
            MatrixName::NormGain => norm?.gain.as_ref(),
            MatrixName::NormBias => norm?.bias.as_ref(),
            MatrixName::BQ => self.biases.q.as_ref(),
            MatrixName::BK => self.biases.k.as_ref(),
            MatrixName::BV => self.biases.v.as_ref(),
            MatrixName::BO => self.biases.o.as_ref(),
            _ => None,
        }
    }

    /// Draws the numbers of every generated input, the larger lessons' on every core.
    pub(crate) fn draw_numbers(&mut self) {
        let generated: Vec<(MatrixName, Generator)> = MatrixName::ALL
            .into_iter()
            .filter_map(|name| Some((name, self.input(name)?.generator?)))
            .collect();
        let numbers: usize = generated.iter().map(|(_, g)| g.rows * g.cols).sum();
        let drawn = crate::parallel::each(generated.len(), numbers >= PARALLEL_NUMBERS, |index| {
            generated[index].1.generate()
        });
        for ((name, _), values) in generated.iter().zip(drawn) {
            if let Some(input) = self.input_mut(*name) {
                input.values = Arc::new(values);
            }
        }
    }

    pub fn input_mut(&mut self, name: MatrixName) -> Option<&mut InputMatrix> {
        match (&mut self.inputs, name) {
            (Inputs::Projected { embeddings, .. }, MatrixName::Embeddings) => Some(embeddings),
            (Inputs::Projected { w_q, .. }, MatrixName::WQ) => Some(w_q),
            (Inputs::Projected { w_k, .. }, MatrixName::WK) => Some(w_k),
            (Inputs::Projected { w_v, .. }, MatrixName::WV) => Some(w_v),
            (Inputs::Direct { q, .. }, MatrixName::Q) => Some(q),
            (Inputs::Direct { k, .. }, MatrixName::K) => Some(k),
            (Inputs::Direct { v, .. }, MatrixName::V) => Some(v),
            _ => match (&mut self.positions, name) {
                (PositionInputs::Learned(positions), MatrixName::Positions) => Some(positions),
                _ if name == MatrixName::WO => self.w_o.as_mut(),
                _ if name == MatrixName::DOutput => self.grad_output.as_mut(),
                _ if name == MatrixName::SourceEmbeddings => self.source_embeddings.as_mut(),
                _ => {
                    let norm = self.norm.as_mut();
                    match name {
                        MatrixName::NormGain => norm?.gain.as_mut(),
                        MatrixName::NormBias => norm?.bias.as_mut(),
                        MatrixName::BQ => self.biases.q.as_mut(),
                        MatrixName::BK => self.biases.k.as_mut(),
                        MatrixName::BV => self.biases.v.as_mut(),
                        MatrixName::BO => self.biases.o.as_mut(),
                        _ => None,
                    }
                }
            },
        }
    }

    /// The lesson's input matrices in file order, with their keys.
    pub fn inputs(&self) -> Vec<(MatrixName, &InputMatrix)> {
        let mut inputs = match &self.inputs {
            Inputs::Projected {
                embeddings,
                w_q,
                w_k,
                w_v,
            } => vec![
                (MatrixName::Embeddings, embeddings),
                (MatrixName::WQ, w_q),
                (MatrixName::WK, w_k),
                (MatrixName::WV, w_v),
            ],
            Inputs::Direct { q, k, v } => {
                vec![(MatrixName::Q, q), (MatrixName::K, k), (MatrixName::V, v)]
            }
        };
        if let PositionInputs::Learned(positions) = &self.positions {
            inputs.insert(1, (MatrixName::Positions, positions));
        }
        if let Some(source) = &self.source_embeddings {
            let after_embeddings = inputs
                .iter()
                .position(|(name, _)| *name == MatrixName::Embeddings)
                .map_or(0, |index| index + 1);
            inputs.insert(after_embeddings, (MatrixName::SourceEmbeddings, source));
        }
        // The norm's gain and bias after X, which they normalise; each projection's bias
        // after its weights.
        let after = |inputs: &Vec<(MatrixName, &InputMatrix)>, name: MatrixName| {
            inputs
                .iter()
                .position(|(input, _)| *input == name)
                .map_or(inputs.len(), |index| index + 1)
        };
        for (name, follows) in [
            (MatrixName::NormGain, MatrixName::SourceEmbeddings),
            (MatrixName::NormBias, MatrixName::NormGain),
            (MatrixName::BQ, MatrixName::WQ),
            (MatrixName::BK, MatrixName::WK),
            (MatrixName::BV, MatrixName::WV),
        ] {
            if let Some(vector) = self.vector(name) {
                let follows = if inputs.iter().any(|(input, _)| *input == follows) {
                    follows
                } else {
                    MatrixName::Embeddings
                };
                let index = after(&inputs, follows);
                inputs.insert(index, (name, vector));
            }
        }
        if let Some(w_o) = &self.w_o {
            inputs.push((MatrixName::WO, w_o));
        }
        if let Some(b_o) = &self.biases.o {
            inputs.push((MatrixName::BO, b_o));
        }
        if let Some(grad_output) = &self.grad_output {
            inputs.push((MatrixName::DOutput, grad_output));
        }
        inputs
    }

    /// Gives a lesson without `grad_output` one drawn from N(0, 1) with `seed`, seq_len ×
    /// d_out, for its backward pass; a lesson's own is kept.
    pub fn seed_grad_output(&mut self, seed: u64) {
        if self.grad_output.is_some() {
            return;
        }
        let generator = Generator {
            kind: RandomKind::Normal,
            seed,
            rows: self.seq_len(),
            cols: self.d_out(),
        };
        self.grad_output = Some(InputMatrix {
            values: Arc::new(generator.generate()),
            generator: Some(generator),
        });
    }

    /// The facts that decide this lesson's pipeline.
    pub fn shape(&self) -> Shape {
        // Every field named, so that a new one is a decision here: a fact of the pipeline, or
        // `_`.
        let Lesson {
            // What the lesson says and how it is shown, not what it computes.
            title: _,
            source: _,
            summary: _,
            tokens: _,
            // The tokenizer's ids name the tokens; nothing is computed from them.
            token_ids: _,
            format: _,
            focus: _,
            decimals: _,
            narration: _,
            expected: _,
            // How the online softmax walks the keys: the same matrices for any tile.
            tile: _,
            // Cross-attention is said by the source's tokens (`is_cross`, below); its
            // embeddings are numbers of the same matrices.
            source_tokens: _,
            source_embeddings: _,
            inputs,
            positions,
            rope_pairing,
            rope_theta,
            scale,
            mask,
            heads,
            w_o,
            decode,
            norm,
            biases,
            grad_output,
        } = self;
        shape_of(&Parts {
            inputs,
            positions,
            rope: Rope {
                pairing: *rope_pairing,
                theta: *rope_theta,
            },
            scale: *scale,
            masked: *mask != Mask::None,
            heads: *heads,
            w_o: w_o.is_some(),
            cross: self.is_cross(),
            decode: *decode,
            norm: norm.as_ref().map(|norm| norm.kind),
            biases: biases.given(),
            backward: grad_output.is_some(),
        })
    }

    /// Whether this is cross-attention: keys and values from `source_tokens`.
    pub fn is_cross(&self) -> bool {
        !self.source_tokens.is_empty()
    }

    /// The number of keys: the source's tokens in cross-attention, else the tokens.
    pub fn key_len(&self) -> usize {
        if self.is_cross() {
            self.source_tokens.len()
        } else {
            self.seq_len()
        }
    }

    /// The steps this lesson walks through, in order.
    pub fn steps(&self) -> Vec<Step> {
        Step::all_in(&crate::pipeline::Plan::new(self.shape()))
    }

    /// d_model: the width of the embeddings, when the lesson has them.
    pub fn d_model(&self) -> Option<usize> {
        self.inputs.d_model()
    }

    /// d_k: the width of one head's queries and keys.
    pub fn d_k(&self) -> usize {
        self.inputs.all_groups_d_k() / self.heads.kv.max(1)
    }

    /// d_v: the width of one head's values.
    pub fn d_v(&self) -> usize {
        self.inputs.all_groups_d_v() / self.heads.kv.max(1)
    }

    /// d_out: the width of the output, W_o's columns (d_v without W_o).
    pub fn d_out(&self) -> usize {
        self.w_o
            .as_ref()
            .map_or_else(|| self.d_v(), |w_o| w_o.values.ncols())
    }

    /// "3 tokens × 4 → d_k 4", the shape shown in lists, the picker and `check` ("…, 4 heads in
    /// 2 K/V groups" with several heads).
    pub fn shape_text(&self) -> String {
        let positions = match self.positions {
            PositionInputs::None => "",
            PositionInputs::Sinusoidal => ", sinusoidal positions",
            PositionInputs::Learned(_) => ", learned positions",
            PositionInputs::Rope => match self.rope_pairing {
                RopePairing::Interleaved => ", RoPE",
                RopePairing::Half => ", rotate-half RoPE",
            },
        };
        let norm = match self.norm.as_ref().map(|norm| norm.kind) {
            None => "",
            Some(NormKind::Layer) => ", LayerNorm",
            Some(NormKind::Rms) => ", RMSNorm",
        };
        let positions = format!("{norm}{positions}");
        // d_k is one head's; the heads are said after it.
        let heads = match self.heads {
            Heads { query: 1, .. } => String::new(),
            Heads { query, kv } if kv == query => format!(", {query} heads"),
            Heads { query, kv: 1 } => format!(", {query} heads sharing 1 K/V group"),
            Heads { query, kv } => format!(", {query} heads in {kv} K/V groups"),
        };
        // Cross-attention names the second sequence: "…, attending to 4 source tokens".
        let source = if self.is_cross() {
            match self.key_len() {
                1 => ", attending to 1 source token".to_string(),
                keys => format!(", attending to {keys} source tokens"),
            }
        } else {
            String::new()
        };
        let tokens = match self.seq_len() {
            1 => "1 token".to_string(),
            many => format!("{many} tokens"),
        };
        // The generation steps are said last: they come after the whole pass.
        let mut generation = if self.decode {
            ", generated with a K/V cache"
        } else {
            ""
        }
        .to_string();
        // The backward pass after everything, as its steps come.
        if self.grad_output.is_some() {
            generation.push_str(", with a backward pass");
        }
        match self.d_model() {
            Some(d_model) => format!(
                "{tokens} × {d_model} → d_k {}{source}{heads}{positions}{generation}",
                self.d_k()
            ),
            None => format!(
                "{tokens}, Q/K/V given, d_k {}{source}{heads}{positions}{generation}",
                self.d_k()
            ),
        }
    }

    /// The tolerance `check` uses.
    pub fn tolerance(&self) -> f64 {
        self.expected
            .tolerance
            .unwrap_or_else(|| 0.5 * 10f64.powi(-(self.decimals as i32)))
    }
}

/// What a lesson's pipeline is decided by, as a lesson holds it or as the parser has read it so
/// far: one constructor of `Shape` for both, so a new fact of the shape is wired once.
pub(crate) struct Parts<'a> {
    pub(crate) inputs: &'a Inputs,
    pub(crate) positions: &'a PositionInputs,
    pub(crate) rope: Rope,
    pub(crate) scale: bool,
    pub(crate) masked: bool,
    pub(crate) heads: Heads,
    pub(crate) w_o: bool,
    pub(crate) cross: bool,
    pub(crate) decode: bool,
    pub(crate) norm: Option<NormKind>,
    pub(crate) biases: Biased,
    pub(crate) backward: bool,
}

/// The shape of a lesson made of `parts`.
pub(crate) fn shape_of(parts: &Parts<'_>) -> Shape {
    Shape {
        projected: parts.inputs.is_projected(),
        positions: parts.positions.kind(),
        rope: parts.rope,
        scale: parts.scale,
        mask: parts.masked,
        heads: parts.heads,
        output_weights: parts.w_o,
        circuits: limits::has_circuits(parts.inputs.d_model(), parts.w_o),
        cross: parts.cross,
        decode: parts.decode,
        norm: parts.norm,
        biases: parts.biases,
        backward: parts.backward,
    }
}
