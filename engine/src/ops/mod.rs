//! The operations that make one matrix from others, one module each. An operation answers
//! every question about itself in one place — its operands, its formula, how it is computed,
//! the slips a learner makes at it, and how one cell of it is made — behind the `Operation`
//! trait, whose methods have no defaults: a new operation that leaves one out does not
//! compile. `Op`, the plan's name for an operation, is made from the one list below.
//!
//! The operations sit below the engine (`crate::attention`): what they share — the slips
//! (`Variant`), the numeric kernels — is here, and they read the lesson computed so far
//! through `Cells`, never the engine itself. They name matrices by `crate::matrices`, and
//! build a cell's working from `crate::workings`, both below them.

mod add;
mod affine;
mod append;
mod column_sum;
mod concat;
mod group_sum;
mod head_block;
mod head_rows;
mod heads_product;
mod held;
mod input;
pub(crate) mod kernels;
mod mask;
mod norm;
mod online;
mod product;
mod rotate;
mod rotate_back;
mod row_softmax;
mod scale;
mod sinusoid;
mod site;
mod softmax_backward;
mod sum3;
mod token_row;
mod transposed_product;
mod variant;

pub(crate) use add::Add;
pub use affine::Affine;
pub(crate) use append::Append;
pub(crate) use column_sum::ColumnSum;
pub use concat::Concat;
pub use group_sum::GroupSum;
pub use head_block::HeadBlock;
pub use head_rows::HeadRows;
pub use heads_product::HeadsProduct;
pub use input::{Given, Input};
pub use mask::Mask;
pub use norm::Norm;
pub use online::Online;
pub use product::Product;
pub use rotate::Rotate;
pub use rotate_back::RotateBack;
pub use row_softmax::RowSoftmax;
pub(crate) use scale::Scale;
pub(crate) use sinusoid::Sinusoid;
pub(crate) use softmax_backward::SoftmaxBackward;
pub(crate) use sum3::Sum3;
pub(crate) use token_row::TokenRow;
pub(crate) use transposed_product::TransposedProduct;

pub use held::Held;
// What a lesson's RoPE is: its pairing and its base θ, which the rotations carry.
pub use crate::matrices::{DEFAULT_ROPE_THETA, Rope, RopePairing};
// A cell's working is built here (`Operation::derive`) and written below (`crate::workings`).
pub(crate) use crate::workings::BackwardRule;
pub use crate::workings::{OnlinePart, OnlineRule, Operand, Rule};
pub use site::Site;
pub(crate) use site::{Cells, Matrices, Operands, empty};
pub use variant::Variant;

use nalgebra::DMatrix;

use crate::matrices::MatrixName;

/// Everything the tutor asks of one operation.
pub(crate) trait Operation {
    /// The matrices this one is computed from, in the order its screen shows them.
    fn operands(&self) -> Vec<MatrixName>;

    /// The right-hand side of `name = …`, each operand written by `symbol`; `None` where no
    /// formula fits a caption (an input, the sinusoid, whose working gives it per cell).
    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String>;

    /// The wrong ways a learner computes it, its own slips nearest first: practice runs each
    /// to tell which one gives a learner's number.
    fn slips(&self) -> &'static [Variant];

    /// The matrix, from operands already computed, the right way or as `slip` does it. An
    /// input is not evaluated (the lesson holds it).
    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64>;

    /// How one cell was made: its operand cells and the arithmetic. `None` when a number it
    /// needs is missing.
    fn derive(&self, site: &Site) -> Option<Rule>;
}

/// The list of operations, made into `Op` and its one dispatch: adding an operation is its
/// module above and one line here.
macro_rules! operations {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Where a matrix comes from in one lesson: one of the operations, with its operands.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Op {
            $($(#[$doc])* $name($name),)*
        }

        impl Op {
            /// The operation itself, which answers every question about it.
            pub(crate) fn operation(&self) -> &dyn Operation {
                match self {
                    $(Op::$name(operation) => operation,)*
                }
            }
        }
    };
}

operations! {
    /// Numbers of the lesson itself (typed, generated, or edited).
    Input,
    /// A matrix that is usually computed but that this lesson gives (Q, K, V without
    /// embeddings).
    Given,
    /// Sinusoidal position encodings: sin or cos of p / 10000^(2i/d_model).
    Sinusoid,
    /// left + right, cell by cell.
    Add,
    /// Each row normalised (LayerNorm or RMSNorm), times the gain γ, plus the bias β.
    Norm,
    /// left · right, or left · rightᵀ.
    Product,
    /// left · right + bias: a projection with its bias added to each row.
    Affine,
    /// Each row at position p turned pairwise by angles p · θ^(−2i/d_k) (RoPE).
    Rotate,
    /// Divided by √d_k.
    Scale,
    /// The mask added: 0 keeps, -inf hides, another number is a bias.
    Mask,
    /// Softmax of each row.
    RowSoftmax,
    /// Every head's matrix side by side, head 1 first.
    Concat,
    /// One head's values weights times that head's rows of W_o.
    HeadRows,
    /// Generation: the row of a matrix for the token being generated.
    TokenRow,
    /// Generation: the cache after step t.
    Append,
    /// The online softmax's state after a tile of keys.
    Online,
    /// leftᵀ · right: a weight's gradient, or one flowing back through a product.
    TransposedProduct,
    /// Head h's block of columns of a matrix of every head side by side.
    HeadBlock,
    /// Softmax backward, row by row.
    SoftmaxBackward,
    /// A K/V group's gradient: the sum of its query heads' matrices.
    GroupSum,
    /// Σ over the heads (or K/V groups) of left_h · right_hᵀ.
    HeadsProduct,
    /// Three matrices added cell by cell: the three paths back to X.
    Sum3,
    /// Each row turned back by −φ: RoPE's gradient.
    RotateBack,
    /// Each column summed over the tokens: a bias's gradient.
    ColumnSum,
}

impl Op {
    /// The matrices this one is computed from.
    pub fn operands(self) -> Vec<MatrixName> {
        self.operation().operands()
    }

    /// Whether the learner's own numbers are here (they can be edited and re-rolled).
    pub fn is_lesson_input(self) -> bool {
        matches!(self, Op::Input(_) | Op::Given(_))
    }

    /// The right-hand side of `name = …`, with each operand written by `symbol`.
    pub fn formula(self, symbol: impl Fn(MatrixName) -> String) -> Option<String> {
        self.operation().formula(&symbol)
    }
}
