//! The names a learner uses: the seven steps, the thirteen matrices, and a cell of one of them.

use std::fmt;

/// One screen of the tutor, in the order attention is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    Embedding,
    Projection,
    Scores,
    Scaling,
    Masking,
    Softmax,
    Output,
}

impl Step {
    /// All steps in order; the one place that decides the step order.
    pub const ALL: [Step; 7] = [
        Step::Embedding,
        Step::Projection,
        Step::Scores,
        Step::Scaling,
        Step::Masking,
        Step::Softmax,
        Step::Output,
    ];

    /// The key used on the command line (`--step`) and in `[narration]`.
    pub fn key(self) -> &'static str {
        match self {
            Step::Embedding => "embedding",
            Step::Projection => "projection",
            Step::Scores => "scores",
            Step::Scaling => "scaling",
            Step::Masking => "masking",
            Step::Softmax => "softmax",
            Step::Output => "output",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Step::Embedding => "Embedding",
            Step::Projection => "Projection",
            Step::Scores => "Scores",
            Step::Scaling => "Scaling",
            Step::Masking => "Masking",
            Step::Softmax => "Softmax",
            Step::Output => "Output",
        }
    }

    /// 1-based position among all seven steps.
    pub fn number(self) -> usize {
        Step::ALL.iter().position(|step| *step == self).unwrap_or(0) + 1
    }

    pub fn from_key(key: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|step| step.key() == key)
    }

    /// The matrix this step produces; the cell cursor sits on it.
    pub fn result(self) -> MatrixName {
        match self {
            Step::Embedding => MatrixName::Embeddings,
            Step::Projection => MatrixName::Q,
            Step::Scores => MatrixName::Scores,
            Step::Scaling => MatrixName::Scaled,
            Step::Masking => MatrixName::Masked,
            Step::Softmax => MatrixName::Weights,
            Step::Output => MatrixName::Output,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// A matrix of the pipeline, inputs and derived alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatrixName {
    Embeddings,
    WQ,
    WK,
    WV,
    Q,
    K,
    V,
    Scores,
    Scaled,
    Mask,
    Masked,
    Weights,
    Output,
}

impl MatrixName {
    pub const ALL: [MatrixName; 13] = [
        MatrixName::Embeddings,
        MatrixName::WQ,
        MatrixName::WK,
        MatrixName::WV,
        MatrixName::Q,
        MatrixName::K,
        MatrixName::V,
        MatrixName::Scores,
        MatrixName::Scaled,
        MatrixName::Mask,
        MatrixName::Masked,
        MatrixName::Weights,
        MatrixName::Output,
    ];

    /// The key of this matrix in a lesson file and in JSON output.
    pub fn key(self) -> &'static str {
        match self {
            MatrixName::Embeddings => "embeddings",
            MatrixName::WQ => "w_q",
            MatrixName::WK => "w_k",
            MatrixName::WV => "w_v",
            MatrixName::Q => "q",
            MatrixName::K => "k",
            MatrixName::V => "v",
            MatrixName::Scores => "scores",
            MatrixName::Scaled => "scaled",
            MatrixName::Mask => "mask",
            MatrixName::Masked => "masked",
            MatrixName::Weights => "weights",
            MatrixName::Output => "output",
        }
    }

    /// The short symbol used in formulas and derivations.
    pub fn symbol(self) -> &'static str {
        match self {
            MatrixName::Embeddings => "X",
            MatrixName::WQ => "W_q",
            MatrixName::WK => "W_k",
            MatrixName::WV => "W_v",
            MatrixName::Q => "Q",
            MatrixName::K => "K",
            MatrixName::V => "V",
            MatrixName::Scores => "scores",
            MatrixName::Scaled => "scaled",
            MatrixName::Mask => "mask",
            MatrixName::Masked => "masked",
            MatrixName::Weights => "weights",
            MatrixName::Output => "output",
        }
    }

    /// A caption for a table of this matrix.
    pub fn caption(self) -> &'static str {
        match self {
            MatrixName::Embeddings => "X (embeddings)",
            MatrixName::WQ => "W_q (query weights)",
            MatrixName::WK => "W_k (key weights)",
            MatrixName::WV => "W_v (value weights)",
            MatrixName::Q => "Q = X·W_q (queries)",
            MatrixName::K => "K = X·W_k (keys)",
            MatrixName::V => "V = X·W_v (values)",
            MatrixName::Scores => "scores = Q·Kᵀ",
            MatrixName::Scaled => "scaled = scores / √d_k",
            MatrixName::Mask => "mask (0 keeps, -inf hides)",
            MatrixName::Masked => "masked = scaled + mask",
            MatrixName::Weights => "weights = softmax(rows)",
            MatrixName::Output => "output = weights·V",
        }
    }

    /// The caption in a given lesson: Q, K and V that the lesson gives are not X·W, and without
    /// scaling the mask is added to the raw scores. The tutor, `show` and the handout use it.
    pub fn caption_in(self, lesson: &crate::lesson::Lesson) -> &'static str {
        let direct = lesson.d_model().is_none();
        match self {
            MatrixName::Q if direct => "Q (queries, given)",
            MatrixName::K if direct => "K (keys, given)",
            MatrixName::V if direct => "V (values, given)",
            MatrixName::Masked if !lesson.scale => "masked = scores + mask",
            _ => self.caption(),
        }
    }

    pub fn from_key(key: &str) -> Option<MatrixName> {
        MatrixName::ALL.into_iter().find(|name| name.key() == key)
    }

    /// Matrices whose columns are keys (tokens) rather than dimensions.
    pub fn is_token_by_token(self) -> bool {
        matches!(
            self,
            MatrixName::Scores
                | MatrixName::Scaled
                | MatrixName::Mask
                | MatrixName::Masked
                | MatrixName::Weights
        )
    }
}

impl fmt::Display for MatrixName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// One cell of one matrix, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell {
    pub matrix: MatrixName,
    pub row: usize,
    pub col: usize,
}

impl Cell {
    pub fn new(matrix: MatrixName, row: usize, col: usize) -> Cell {
        Cell { matrix, row, col }
    }
}
