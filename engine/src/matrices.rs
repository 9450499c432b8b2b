//! Every matrix of the pipeline in one table: its key, symbol, words, and what its rows and
//! columns are. Labels, shapes, JSON keys and the cursor follow from the entry. It sits below
//! the operations, which name their operands by it, and the plan, which names the operations:
//! it imports nothing of ours. With it, what every layer names of a lesson's blocks and pairs of
//! columns: its heads, and RoPE's pairing and base.

use std::fmt;

/// What the rows or the columns of a matrix stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// The tokens whose queries these are: one row per query.
    Queries,
    /// The tokens whose keys and values these are: one row (or column) per key.
    Keys,
    /// The width of an embedding.
    DModel,
    /// The width of a query and a key.
    DK,
    /// The width of a value.
    DV,
    /// The width of every head's output side by side: H · d_v.
    HeadsDV,
    /// The width of the output after W_O.
    DOut,
    /// The one token being generated: a step of generation's single row, the token at its
    /// position t.
    NewToken,
    /// One number per row, in a column of its own: the online softmax's running maximum m,
    /// running sum l and rescale factor of each query row.
    Single,
}

/// Which normalisation each row of X gets before the projections read it (format 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormKind {
    /// LayerNorm (GPT-2, BERT): (x − mean) / √(var + ε) · γ + β.
    Layer,
    /// RMSNorm (Llama, Mistral): x / √(mean(x²) + ε) · γ, no mean taken off and no β.
    Rms,
}

impl NormKind {
    /// The value of `norm = "…"` in a lesson file.
    pub fn key(self) -> &'static str {
        match self {
            NormKind::Layer => "layer",
            NormKind::Rms => "rms",
        }
    }
}

/// How many of a matrix a lesson has: one, one per query head, or one per K/V group.
///
/// A lesson's input that is cut into heads (`w_q` into each head's W_q) holds the heads side by
/// side, column block h for head (or group) h, as PyTorch lays them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Per {
    /// One for the whole lesson (the embeddings, the mask, W_O, the concatenation).
    Lesson,
    /// One for each query head: head h's queries, scores, weights, output.
    QueryHead,
    /// One for each K/V group, shared by the query heads of the group (grouped-query
    /// attention); with as many groups as heads this is one per head.
    KvGroup,
}

impl Axis {
    /// Whether this axis counts tokens (labelled by the token) rather than dimensions (1, 2, …).
    pub fn is_tokens(self) -> bool {
        matches!(self, Axis::Queries | Axis::Keys | Axis::NewToken)
    }
}

/// The one list of matrices, in table order: it makes `MatrixName`, `MatrixName::ALL` and the
/// table's length, so a matrix named here without its entry in `MATRICES` does not compile
/// (and a test checks the entries' order).
macro_rules! matrix_names {
    ($($name:ident,)*) => {
        /// A matrix of the pipeline, inputs and computed alike.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum MatrixName {
            $($name,)*
        }

        impl MatrixName {
            /// How many matrices there are.
            const COUNT: usize = [$(MatrixName::$name,)*].len();

            /// Every matrix, in table order.
            pub const ALL: [MatrixName; MatrixName::COUNT] = [$(MatrixName::$name,)*];
        }
    };
}

matrix_names! {
    Embeddings,
    Positions,
    X,
    SourceEmbeddings,
    SourcePositions,
    SourceX,
    NormGain,
    NormBias,
    XNorm,
    WQ,
    WK,
    WV,
    BQ,
    BK,
    BV,
    Q,
    K,
    V,
    QRope,
    KRope,
    Scores,
    Scaled,
    Mask,
    Masked,
    Weights,
    Output,
    WO,
    BO,
    Concat,
    Projected,
    WQK,
    WOV,
    XNew,
    QNew,
    KNew,
    VNew,
    QNewRope,
    KNewRope,
    KCache,
    VCache,
    DecodeScores,
    DecodeScaled,
    DecodeWeights,
    DecodeOutput,
    DecodeConcat,
    DecodeProjected,
    OnlineMax,
    OnlineRescale,
    OnlineSum,
    OnlineAcc,
    DOutput,
    DConcat,
    DWO,
    DHeadOutput,
    DWeights,
    DV,
    DSoftmaxInput,
    DScores,
    DQRope,
    DKRope,
    DQ,
    DK,
    DKGroup,
    DVGroup,
    DWQ,
    DWK,
    DWV,
    DBQ,
    DBK,
    DBV,
    DBO,
    DXQ,
    DXK,
    DXV,
    DX,
    DSource,
}

/// The table entry of one matrix.
#[derive(Debug)]
pub struct MatrixEntry {
    pub name: MatrixName,
    /// Its key in a lesson file, in `[expected]` and in JSON.
    pub key: &'static str,
    /// Its symbol in formulas and in cell names (`Q[cat, 1]`).
    pub symbol: &'static str,
    /// What it is, in the learner's words, shown after its formula in a caption.
    pub gloss: Option<&'static str>,
    pub rows: Axis,
    pub cols: Axis,
    /// How one row is named in a dot product (`q_cat · k_sat`), for the matrices whose rows are
    /// vectors a learner knows by a letter; others are written `weights[cat, :]`.
    pub row_vector: Option<&'static str>,
    /// One matrix for the lesson, or one per head or K/V group.
    pub per: Per,
    /// Computed when first looked at, not with the rest: nothing is computed from it, and it
    /// is large (a circuit is d_model × d_model per head: 8 MB and 67 million multiplications
    /// at d_model 1024, where the whole forward pass of 16 heads is a few hundred million).
    pub on_demand: bool,
    /// One for each step of generation (`decode = true`): the matrix as it stands when the
    /// token at position t is generated, kept apart for each t and made when first looked at.
    pub per_token: bool,
    /// One for each tile of keys of the online softmax: the matrix as it stands after tile i,
    /// kept apart for each i and made when first looked at. `Cell.token` holds i.
    pub per_tile: bool,
    /// A gradient of the backward pass (dL/d of a forward matrix), made only when the lesson
    /// gives `grad_output`; `show` writes these under `"backward"`, nowhere else.
    pub backward: bool,
    /// The figures `[expected]` takes of it, for `check` to compare; `None` for a matrix no
    /// figure of a document is compared with.
    pub expectable: Option<Expectable>,
}

/// Which figures of a matrix `[expected]` takes, and why a lesson may have none.
#[derive(Debug, Clone, Copy)]
pub struct Expectable {
    /// Which lessons give it, as the docs' table of keys groups `[expected]`'s keys.
    pub given_by: GivenBy,
    /// The whole lesson's, in a top-level `[expected]` (its inputs whole, W_o, the heads'
    /// outputs side by side, the final output).
    pub whole: bool,
    /// One head's, in `[expected.heads.N]` (or in `[expected]` itself when the lesson has one
    /// head).
    pub head: bool,
    /// Why a lesson that has not got the matrix has none, said when a figure of it is given;
    /// `None` for a matrix every lesson has.
    pub absent: Option<Absent>,
}

/// Which lessons give a figure, for the docs' table of keys (`lesson::schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GivenBy {
    /// A lesson of either format.
    EveryLesson,
    /// A lesson that gives embeddings and weights: its inputs, compared whole.
    Inputs,
    /// A lesson of format 2, whose keys make the matrix.
    Format2,
    /// A cross-attention lesson, from its source.
    Source,
}

/// Why a lesson has not got a matrix whose figure it gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// Why it has not (`it has no mask`), and which lessons have it.
    Because {
        why: &'static str,
        help: &'static str,
    },
    /// Made by some kinds of positions only: the lesson's positions are said.
    OfPositions { help: &'static str },
    /// The source's, made from a cross-attention lesson's source (and its positions): a lesson
    /// without a source is told so, one with a source its positions.
    OfSource { help: &'static str },
    /// The scaled scores, which a lesson with `scale = false` has not got.
    Unscaled,
}

/// The one table. Its order is the order of `MatrixName`, which a test checks.
const MATRICES: [MatrixEntry; MatrixName::COUNT] = [
    MatrixEntry {
        name: MatrixName::Embeddings,
        key: "embeddings",
        symbol: "X",
        gloss: Some("embeddings"),
        rows: Axis::Queries,
        cols: Axis::DModel,
        row_vector: Some("x"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Inputs,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it gives q, k, v directly",
                help: "the figures of a lesson's inputs go with a lesson that has them",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::Positions,
        key: "positions",
        symbol: "P",
        gloss: Some("positions"),
        rows: Axis::Queries,
        cols: Axis::DModel,
        row_vector: Some("p"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: true,
            head: false,
            absent: Some(Absent::OfPositions {
                help: "`positions` goes with sinusoidal or learned positions, `x` with embeddings, `q_rope` and `k_rope` with positions = \"rope\"",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::X,
        key: "x",
        symbol: "X",
        gloss: Some("embeddings + positions"),
        rows: Axis::Queries,
        cols: Axis::DModel,
        row_vector: Some("x"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: true,
            head: false,
            absent: Some(Absent::OfPositions {
                help: "`positions` goes with sinusoidal or learned positions, `x` with embeddings, `q_rope` and `k_rope` with positions = \"rope\"",
            }),
        }),
    },
    // Cross-attention's source, which the keys and values are projected from: S, or with
    // positions S = E_S + P_S, each sequence's positions counted from 0.
    MatrixEntry {
        name: MatrixName::SourceEmbeddings,
        key: "source_embeddings",
        symbol: "S",
        gloss: Some("source embeddings"),
        rows: Axis::Keys,
        cols: Axis::DModel,
        row_vector: Some("s"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Source,
            whole: true,
            head: false,
            absent: Some(Absent::OfSource {
                help: "`source_x` is the source's embeddings plus its positions, in a cross-attention lesson (`source_tokens` and `source_embeddings`) with sinusoidal or learned positions",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::SourcePositions,
        key: "source_positions",
        symbol: "P_S",
        gloss: Some("the source's positions"),
        rows: Axis::Keys,
        cols: Axis::DModel,
        row_vector: Some("p"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::SourceX,
        key: "source_x",
        symbol: "S",
        gloss: Some("source embeddings + positions"),
        rows: Axis::Keys,
        cols: Axis::DModel,
        row_vector: Some("s"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Source,
            whole: true,
            head: false,
            absent: Some(Absent::OfSource {
                help: "`source_x` is the source's embeddings plus its positions, in a cross-attention lesson (`source_tokens` and `source_embeddings`) with sinusoidal or learned positions",
            }),
        }),
    },
    // The norm before the projections (`norm = "layer"` or `"rms"`): one gain γ and (for
    // LayerNorm) one bias β per column, one row each, and X normalised row by row.
    MatrixEntry {
        name: MatrixName::NormGain,
        key: "norm_gain",
        symbol: "γ",
        gloss: Some("the norm's gain"),
        rows: Axis::Single,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::NormBias,
        key: "norm_bias",
        symbol: "β",
        gloss: Some("the norm's bias"),
        rows: Axis::Single,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::XNorm,
        key: "normed",
        symbol: "X̂",
        gloss: Some("X normalised"),
        rows: Axis::Queries,
        cols: Axis::DModel,
        row_vector: Some("x̂"),
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it has no norm",
                help: "`normed` goes with a lesson that has `norm = \"layer\"` or `norm = \"rms\"`",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::WQ,
        key: "w_q",
        symbol: "W_q",
        gloss: Some("query weights"),
        rows: Axis::DModel,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Inputs,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it gives q, k, v directly",
                help: "the figures of a lesson's inputs go with a lesson that has them",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::WK,
        key: "w_k",
        symbol: "W_k",
        gloss: Some("key weights"),
        rows: Axis::DModel,
        cols: Axis::DK,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Inputs,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it gives q, k, v directly",
                help: "the figures of a lesson's inputs go with a lesson that has them",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::WV,
        key: "w_v",
        symbol: "W_v",
        gloss: Some("value weights"),
        rows: Axis::DModel,
        cols: Axis::DV,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Inputs,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it gives q, k, v directly",
                help: "the figures of a lesson's inputs go with a lesson that has them",
            }),
        }),
    },
    // A projection's bias (`b_q`, `b_k`, `b_v`), one row, each head's block of columns its own.
    MatrixEntry {
        name: MatrixName::BQ,
        key: "b_q",
        symbol: "b_q",
        gloss: Some("query bias"),
        rows: Axis::Single,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::BK,
        key: "b_k",
        symbol: "b_k",
        gloss: Some("key bias"),
        rows: Axis::Single,
        cols: Axis::DK,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::BV,
        key: "b_v",
        symbol: "b_v",
        gloss: Some("value bias"),
        rows: Axis::Single,
        cols: Axis::DV,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::Q,
        key: "q",
        symbol: "Q",
        gloss: Some("queries"),
        rows: Axis::Queries,
        cols: Axis::DK,
        row_vector: Some("q"),
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: true,
            head: true,
            absent: None,
        }),
    },
    MatrixEntry {
        name: MatrixName::K,
        key: "k",
        symbol: "K",
        gloss: Some("keys"),
        rows: Axis::Keys,
        cols: Axis::DK,
        row_vector: Some("k"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: true,
            head: true,
            absent: None,
        }),
    },
    MatrixEntry {
        name: MatrixName::V,
        key: "v",
        symbol: "V",
        gloss: Some("values"),
        rows: Axis::Keys,
        cols: Axis::DV,
        row_vector: Some("v"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: true,
            head: true,
            absent: None,
        }),
    },
    MatrixEntry {
        name: MatrixName::QRope,
        key: "q_rope",
        symbol: "Q_rope",
        gloss: Some("queries, rotated"),
        rows: Axis::Queries,
        cols: Axis::DK,
        row_vector: Some("q_rope"),
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: false,
            head: true,
            absent: Some(Absent::OfPositions {
                help: "`positions` goes with sinusoidal or learned positions, `x` with embeddings, `q_rope` and `k_rope` with positions = \"rope\"",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::KRope,
        key: "k_rope",
        symbol: "K_rope",
        gloss: Some("keys, rotated"),
        rows: Axis::Keys,
        cols: Axis::DK,
        row_vector: Some("k_rope"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: false,
            head: true,
            absent: Some(Absent::OfPositions {
                help: "`positions` goes with sinusoidal or learned positions, `x` with embeddings, `q_rope` and `k_rope` with positions = \"rope\"",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::Scores,
        key: "scores",
        symbol: "scores",
        gloss: None,
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: false,
            head: true,
            absent: None,
        }),
    },
    MatrixEntry {
        name: MatrixName::Scaled,
        key: "scaled",
        symbol: "scaled",
        gloss: None,
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: false,
            head: true,
            absent: Some(Absent::Unscaled),
        }),
    },
    MatrixEntry {
        name: MatrixName::Mask,
        key: "mask",
        symbol: "mask",
        gloss: Some("0 keeps, -inf hides"),
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::Masked,
        key: "masked",
        symbol: "masked",
        gloss: None,
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: false,
            head: true,
            absent: Some(Absent::Because {
                why: "it has no mask",
                help: "`masked` goes with a lesson that has a mask",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::Weights,
        key: "weights",
        symbol: "weights",
        gloss: None,
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: false,
            head: true,
            absent: None,
        }),
    },
    MatrixEntry {
        name: MatrixName::Output,
        key: "output",
        symbol: "output",
        gloss: None,
        rows: Axis::Queries,
        cols: Axis::DV,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::EveryLesson,
            whole: true,
            head: true,
            absent: None,
        }),
    },
    MatrixEntry {
        name: MatrixName::WO,
        key: "w_o",
        symbol: "W_o",
        gloss: Some("output weights"),
        rows: Axis::HeadsDV,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it has no `w_o`",
                help: "`w_o` and `concat` go with a lesson that gives w_o",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::BO,
        key: "b_o",
        symbol: "b_o",
        gloss: Some("output bias"),
        rows: Axis::Single,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::Concat,
        key: "concat",
        symbol: "concat",
        gloss: Some("every head's output side by side"),
        rows: Axis::Queries,
        cols: Axis::HeadsDV,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: true,
            head: false,
            absent: Some(Absent::Because {
                why: "it has no `w_o`",
                help: "`w_o` and `concat` go with a lesson that gives w_o",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::Projected,
        key: "projected",
        symbol: "output",
        gloss: None,
        rows: Axis::Queries,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::WQK,
        key: "w_qk",
        symbol: "W_QK",
        gloss: Some("query-key circuit"),
        rows: Axis::DModel,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: true,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: false,
            head: true,
            absent: Some(Absent::Because {
                why: "the circuits need embeddings and `w_o`",
                help: "`w_qk` and `w_ov` go with a lesson that has embeddings, w_q, w_k, w_v and w_o",
            }),
        }),
    },
    MatrixEntry {
        name: MatrixName::WOV,
        key: "w_ov",
        symbol: "W_OV",
        gloss: Some("output-value circuit"),
        rows: Axis::DModel,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: true,
        per_token: false,
        per_tile: false,
        backward: false,
        expectable: Some(Expectable {
            given_by: GivenBy::Format2,
            whole: false,
            head: true,
            absent: Some(Absent::Because {
                why: "the circuits need embeddings and `w_o`",
                help: "`w_qk` and `w_ov` go with a lesson that has embeddings, w_q, w_k, w_v and w_o",
            }),
        }),
    },
    // Generation with a K/V cache: what each step t computes for the one new token, and the
    // caches as they stand after it. Each is made for one t at a time (`per_token`).
    MatrixEntry {
        name: MatrixName::XNew,
        key: "x_t",
        symbol: "x_t",
        gloss: Some("the new token's row"),
        rows: Axis::NewToken,
        cols: Axis::DModel,
        row_vector: Some("x"),
        per: Per::Lesson,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::QNew,
        key: "q_t",
        symbol: "q_t",
        gloss: Some("the new token's query"),
        rows: Axis::NewToken,
        cols: Axis::DK,
        row_vector: Some("q"),
        per: Per::QueryHead,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::KNew,
        key: "k_t",
        symbol: "k_t",
        gloss: Some("the new token's key"),
        rows: Axis::NewToken,
        cols: Axis::DK,
        row_vector: Some("k"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::VNew,
        key: "v_t",
        symbol: "v_t",
        gloss: Some("the new token's value"),
        rows: Axis::NewToken,
        cols: Axis::DV,
        row_vector: Some("v"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::QNewRope,
        key: "q_rope_t",
        symbol: "q_rope_t",
        gloss: Some("the new query, rotated"),
        rows: Axis::NewToken,
        cols: Axis::DK,
        row_vector: Some("q_rope"),
        per: Per::QueryHead,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::KNewRope,
        key: "k_rope_t",
        symbol: "k_rope_t",
        gloss: Some("the new key, rotated"),
        rows: Axis::NewToken,
        cols: Axis::DK,
        row_vector: Some("k_rope"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::KCache,
        key: "k_cache",
        symbol: "K_cache",
        gloss: Some("every key so far"),
        rows: Axis::Keys,
        cols: Axis::DK,
        row_vector: Some("k"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::VCache,
        key: "v_cache",
        symbol: "V_cache",
        gloss: Some("every value so far"),
        rows: Axis::Keys,
        cols: Axis::DV,
        row_vector: Some("v"),
        per: Per::KvGroup,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DecodeScores,
        key: "scores_t",
        symbol: "scores_t",
        gloss: Some("the new token's scores"),
        rows: Axis::NewToken,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DecodeScaled,
        key: "scaled_t",
        symbol: "scaled_t",
        gloss: None,
        rows: Axis::NewToken,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DecodeWeights,
        key: "weights_t",
        symbol: "weights_t",
        gloss: Some("the new token's weights"),
        rows: Axis::NewToken,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DecodeOutput,
        key: "output_t",
        symbol: "output_t",
        gloss: Some("the new token's output"),
        rows: Axis::NewToken,
        cols: Axis::DV,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DecodeConcat,
        key: "concat_t",
        symbol: "concat_t",
        gloss: Some("every head's new output side by side"),
        rows: Axis::NewToken,
        cols: Axis::HeadsDV,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DecodeProjected,
        key: "projected_t",
        symbol: "output_t",
        gloss: None,
        rows: Axis::NewToken,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: true,
        per_tile: false,
        backward: false,
        expectable: None,
    },
    // The online softmax (FlashAttention's): each query row's state after one tile of keys,
    // kept apart for each tile (`per_tile`).
    MatrixEntry {
        name: MatrixName::OnlineMax,
        key: "m",
        symbol: "m",
        gloss: Some("the largest score so far"),
        rows: Axis::Queries,
        cols: Axis::Single,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: true,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::OnlineRescale,
        key: "rescale",
        symbol: "rescale",
        gloss: Some("what l and acc so far are multiplied by"),
        rows: Axis::Queries,
        cols: Axis::Single,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: true,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::OnlineSum,
        key: "l",
        symbol: "l",
        gloss: Some("the sum of exps so far"),
        rows: Axis::Queries,
        cols: Axis::Single,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: true,
        backward: false,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::OnlineAcc,
        key: "acc",
        symbol: "acc",
        gloss: Some("the output so far, not yet divided by l"),
        rows: Axis::Queries,
        cols: Axis::DV,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: true,
        backward: false,
        expectable: None,
    },
    // The backward pass: the gradient of L = Σ output ⊙ grad_output with respect to each
    // matrix, from the output back to the weights and the embeddings.
    MatrixEntry {
        name: MatrixName::DOutput,
        key: "grad_output",
        symbol: "dO",
        gloss: Some("grad_output: dL/d(output), given"),
        rows: Axis::Queries,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DConcat,
        key: "d_concat",
        symbol: "d_concat",
        gloss: Some("dL/d(concat)"),
        rows: Axis::Queries,
        cols: Axis::HeadsDV,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DWO,
        key: "d_w_o",
        symbol: "dW_o",
        gloss: Some("dL/dW_o"),
        rows: Axis::HeadsDV,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DHeadOutput,
        key: "d_head_output",
        symbol: "d_output",
        gloss: Some("this head's columns of d_concat"),
        rows: Axis::Queries,
        cols: Axis::DV,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DWeights,
        key: "d_weights",
        symbol: "d_weights",
        gloss: Some("dL/d(weights)"),
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DV,
        key: "d_v",
        symbol: "dV",
        gloss: Some("dL/dV, this head's share"),
        rows: Axis::Keys,
        cols: Axis::DV,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DSoftmaxInput,
        key: "d_softmax_input",
        symbol: "dS",
        gloss: Some("dL/d(softmax input)"),
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DScores,
        key: "d_scores",
        symbol: "d_scores",
        gloss: Some("dL/d(scores)"),
        rows: Axis::Queries,
        cols: Axis::Keys,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DQRope,
        key: "d_q_rope",
        symbol: "dQ_rope",
        gloss: Some("dL/d(rotated queries)"),
        rows: Axis::Queries,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DKRope,
        key: "d_k_rope",
        symbol: "dK_rope",
        gloss: Some("dL/d(rotated keys), this head's share"),
        rows: Axis::Keys,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DQ,
        key: "d_q",
        symbol: "dQ",
        gloss: Some("dL/dQ"),
        rows: Axis::Queries,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DK,
        key: "d_k",
        symbol: "dK",
        gloss: Some("dL/dK, this head's share"),
        rows: Axis::Keys,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DKGroup,
        key: "d_k_group",
        symbol: "dK_group",
        gloss: Some("dL/dK, the group's heads added"),
        rows: Axis::Keys,
        cols: Axis::DK,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DVGroup,
        key: "d_v_group",
        symbol: "dV_group",
        gloss: Some("dL/dV, the group's heads added"),
        rows: Axis::Keys,
        cols: Axis::DV,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DWQ,
        key: "d_w_q",
        symbol: "dW_q",
        gloss: Some("dL/dW_q"),
        rows: Axis::DModel,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DWK,
        key: "d_w_k",
        symbol: "dW_k",
        gloss: Some("dL/dW_k"),
        rows: Axis::DModel,
        cols: Axis::DK,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DWV,
        key: "d_w_v",
        symbol: "dW_v",
        gloss: Some("dL/dW_v"),
        rows: Axis::DModel,
        cols: Axis::DV,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    // A bias's gradient: its matrix's gradient summed over the tokens, one row.
    MatrixEntry {
        name: MatrixName::DBQ,
        key: "d_b_q",
        symbol: "db_q",
        gloss: Some("dL/db_q"),
        rows: Axis::Single,
        cols: Axis::DK,
        row_vector: None,
        per: Per::QueryHead,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DBK,
        key: "d_b_k",
        symbol: "db_k",
        gloss: Some("dL/db_k"),
        rows: Axis::Single,
        cols: Axis::DK,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DBV,
        key: "d_b_v",
        symbol: "db_v",
        gloss: Some("dL/db_v"),
        rows: Axis::Single,
        cols: Axis::DV,
        row_vector: None,
        per: Per::KvGroup,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DBO,
        key: "d_b_o",
        symbol: "db_o",
        gloss: Some("dL/db_o"),
        rows: Axis::Single,
        cols: Axis::DOut,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DXQ,
        key: "d_x_q",
        symbol: "dX_q",
        gloss: Some("dL/dX through the queries"),
        rows: Axis::Queries,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DXK,
        key: "d_x_k",
        symbol: "dX_k",
        gloss: Some("dL/dX through the keys"),
        rows: Axis::Keys,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DXV,
        key: "d_x_v",
        symbol: "dX_v",
        gloss: Some("dL/dX through the values"),
        rows: Axis::Keys,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DX,
        key: "d_x",
        symbol: "dX",
        gloss: Some("dL/dX, the three paths added"),
        rows: Axis::Queries,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
    MatrixEntry {
        name: MatrixName::DSource,
        key: "d_source",
        symbol: "d_source",
        gloss: Some("dL/dS, the keys' and values' paths added"),
        rows: Axis::Keys,
        cols: Axis::DModel,
        row_vector: None,
        per: Per::Lesson,
        on_demand: false,
        per_token: false,
        per_tile: false,
        backward: true,
        expectable: None,
    },
];

impl MatrixName {
    pub const fn entry(self) -> &'static MatrixEntry {
        &MATRICES[self.index()]
    }

    /// Position in the table, for storing one slot per matrix.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// The key of this matrix in a lesson file and in JSON output.
    pub const fn key(self) -> &'static str {
        self.entry().key
    }

    /// The short symbol used in formulas and derivations.
    pub fn symbol(self) -> &'static str {
        self.entry().symbol
    }

    pub(crate) fn from_key(key: &str) -> Option<MatrixName> {
        MATRICES
            .iter()
            .find(|entry| entry.key == key)
            .map(|entry| entry.name)
    }

    /// Matrices whose columns are keys (tokens) rather than dimensions.
    pub fn is_token_by_token(self) -> bool {
        self.entry().cols == Axis::Keys
    }

    /// One matrix for the lesson, or one per head or group.
    pub const fn per(self) -> Per {
        self.entry().per
    }

    /// Whether a matrix's rows are tokens (so its row labels can be edited).
    pub fn rows_are_tokens(self) -> bool {
        self.entry().rows.is_tokens()
    }

    /// Whether this is one step of generation's matrix, kept apart for each position t.
    pub const fn per_token(self) -> bool {
        self.entry().per_token
    }

    /// Whether this is the online softmax's state after one tile, kept apart for each tile.
    pub const fn per_tile(self) -> bool {
        self.entry().per_tile
    }

    /// Whether this is a gradient of the backward pass.
    pub const fn backward(self) -> bool {
        self.entry().backward
    }

    /// Whether one of this matrix is kept for each token (generation) or each tile (the online
    /// softmax), `Cell.token` saying which.
    pub const fn kept_apart(self) -> bool {
        self.per_token() || self.per_tile()
    }
}

impl fmt::Display for MatrixName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// One cell of one matrix, 0-based. `head` is the query head whose matrix it is (0 for a
/// matrix the whole lesson shares, and in a one-head lesson); a K/V group's matrix is named by
/// a query head of the group, the head on screen. `token` is the position t of the step of
/// generation a `per_token` matrix belongs to, the tile (0-based) a `per_tile` matrix of the
/// online softmax belongs to, and 0 for every other matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell {
    pub matrix: MatrixName,
    pub head: usize,
    pub row: usize,
    pub col: usize,
    pub token: usize,
}

impl Cell {
    /// A cell of a matrix of head 0: every matrix of a one-head lesson.
    pub fn new(matrix: MatrixName, row: usize, col: usize) -> Cell {
        Cell {
            matrix,
            head: 0,
            row,
            col,
            token: 0,
        }
    }

    /// The same place in the matrix of generation step `token`; a matrix that is not one
    /// step's stays at 0, so that one cell has one name whichever step it is seen from.
    pub fn at_token(self, token: usize) -> Cell {
        Cell {
            token: if self.matrix.per_token() {
                token
            } else if self.matrix.per_tile() {
                self.token
            } else {
                0
            },
            ..self
        }
    }

    /// The same place in the online softmax's state after tile `tile`; any other matrix keeps
    /// its own index (`at_token` is the generation steps').
    pub fn at_tile(self, tile: usize) -> Cell {
        Cell {
            token: if self.matrix.per_tile() {
                tile
            } else {
                self.token
            },
            ..self
        }
    }

    /// The same place in head `head`'s matrix; a matrix the lesson shares stays head 0, so that
    /// one cell has one name whichever head's screen it is seen from.
    pub fn in_head(self, head: usize) -> Cell {
        Cell {
            head: match self.matrix.entry().per {
                Per::Lesson => 0,
                Per::QueryHead | Per::KvGroup => head,
            },
            ..self
        }
    }
}

/// The base θ of RoPE's angles p · θ^(−2i/d_k) when a lesson gives none: RoFormer's, and the
/// one Llama 2 and GPT-NeoX checkpoints use.
pub const DEFAULT_ROPE_THETA: f64 = 10_000.0;

/// Which columns of a query or key RoPE turns together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum RopePairing {
    /// Columns 2i and 2i+1, side by side (RoFormer's layout).
    #[default]
    Interleaved,
    /// Column i with column i + d_k/2 (Hugging Face's `rotate_half`): how Llama, Mistral and
    /// Qwen2 checkpoints turn their queries and keys.
    Half,
}

impl RopePairing {
    /// The value of `rope_pairing = "…"` in a lesson file.
    pub const fn key(self) -> &'static str {
        match self {
            RopePairing::Interleaved => "interleaved",
            RopePairing::Half => "half",
        }
    }

    /// The two columns of pair `pair` in a row `d_k` wide, the first of the pair first.
    pub const fn columns(self, pair: usize, d_k: usize) -> (usize, usize) {
        match self {
            RopePairing::Interleaved => (2 * pair, 2 * pair + 1),
            RopePairing::Half => (pair, pair + d_k / 2),
        }
    }

    /// The pair column `col` of a row `d_k` wide belongs to, and whether it is the first of
    /// that pair; `None` for the column an odd d_k leaves without a partner.
    pub const fn pair_of(self, col: usize, d_k: usize) -> Option<(usize, bool)> {
        let (pair, first) = match self {
            RopePairing::Interleaved => (col / 2, col.is_multiple_of(2)),
            RopePairing::Half if col < d_k / 2 => (col, true),
            RopePairing::Half => (col - d_k / 2, false),
        };
        if pair < d_k / 2 {
            Some((pair, first))
        } else {
            None
        }
    }
}

/// How a lesson's RoPE turns its queries and keys: which columns make a pair, and the base θ
/// of the angles p · θ^(−2i/d_k).
#[derive(Debug, Clone, Copy)]
pub struct Rope {
    pub pairing: RopePairing,
    pub theta: f64,
}

impl Default for Rope {
    fn default() -> Rope {
        Rope {
            pairing: RopePairing::Interleaved,
            theta: DEFAULT_ROPE_THETA,
        }
    }
}

// θ compared by its bits, so that the equality a plan (`Eq`) needs holds even for a θ no
// lesson may have (NaN).
impl PartialEq for Rope {
    fn eq(&self, other: &Rope) -> bool {
        self.pairing == other.pairing && self.theta.to_bits() == other.theta.to_bits()
    }
}

impl Eq for Rope {}

/// The heads of a lesson: H query heads sharing G key/value groups, G dividing H.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heads {
    pub query: usize,
    pub kv: usize,
}

impl Heads {
    pub const ONE: Heads = Heads { query: 1, kv: 1 };

    /// The K/V group query head `head` uses: ⌊h / (H/G)⌋, PyTorch's `repeat_interleave` order.
    pub fn group_of(self, head: usize) -> usize {
        head / (self.query / self.kv.max(1)).max(1)
    }

    /// The first query head of a group, the one its matrices are computed for.
    pub fn first_of_group(self, group: usize) -> usize {
        group * (self.query / self.kv.max(1)).max(1)
    }

    /// How many matrices a lesson has of something that comes `per` head, group or lesson.
    pub fn count(self, per: Per) -> usize {
        match per {
            Per::Lesson => 1,
            Per::QueryHead => self.query,
            Per::KvGroup => self.kv,
        }
    }

    /// The query head slot `slot` of a matrix that comes `per` head, group or lesson is
    /// computed for and named by: a group's first head for a K/V group's, head 0 for the
    /// lesson's.
    pub fn head_of_slot(self, per: Per, slot: usize) -> usize {
        match per {
            Per::Lesson => 0,
            Per::QueryHead => slot,
            Per::KvGroup => self.first_of_group(slot),
        }
    }

    /// The query head each slot of a matrix that comes `per` head, group or lesson is
    /// computed for, slot by slot (`head_of_slot`).
    pub fn slot_heads(self, per: Per) -> impl Iterator<Item = usize> {
        (0..self.count(per)).map(move |slot| self.head_of_slot(per, slot))
    }

    /// The slot of head `head`'s matrix among `count(per)`.
    pub fn slot(self, per: Per, head: usize) -> usize {
        match per {
            Per::Lesson => 0,
            Per::QueryHead => head,
            Per::KvGroup => self.group_of(head),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_order_of_the_names() {
        for (index, name) in MatrixName::ALL.into_iter().enumerate() {
            assert_eq!(MATRICES[index].name, name);
            assert_eq!(name.index(), index);
        }
    }

    #[test]
    fn every_key_names_one_matrix() {
        for name in MatrixName::ALL {
            assert_eq!(MatrixName::from_key(name.key()), Some(name));
        }
    }
}
