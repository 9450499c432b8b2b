//! How one cell was made, kind by kind: a dot product, a sum, a softmax, a state of the online
//! softmax, a gradient. Each kind of working is a type of its own in its own module, and
//! answers every question about itself behind the `Working` trait, whose methods have no
//! defaults — its operand cells, the cell `e` goes to, its words, its arithmetic redone from
//! the numbers as the screen shows them, its hints — so that a new kind that leaves one out
//! does not compile. `Rule`, a cell's working as the engine hands it out, is made from the one
//! list below.
//!
//! The workings sit below the operations (`crate::ops`), which build them (`Operation::derive`),
//! and so below the engine (`crate::attention`) too: they read the lesson's labels (token
//! names, matrix symbols, heads) through `Labels`, which the engine implements, and never
//! import it. What every working is written with — how a number is written, and the decimals
//! that make the arithmetic as written land on the result — is here with them (`number`,
//! `landing`), for the same reason.

mod add;
pub mod backward;
mod copied;
mod dot;
mod fully_masked;
mod hint;
mod input;
pub(crate) mod landing;
mod mask;
mod norm;
pub mod number;
mod online;
mod rotate;
mod scale;
mod sinusoid;
mod softmax;
mod words;

pub use add::Add;
pub use backward::BackwardRule;
pub use copied::{Cached, Concat, TokenRow};
pub use dot::{Dot, HeadParts, WRITTEN_WHOLE_UP_TO};
pub use fully_masked::FullyMasked;
pub use input::Input;
pub use mask::Mask;
pub use norm::Norm;
pub use online::{OnlinePart, OnlineRule};
pub use rotate::Rotate;
pub use scale::Scale;
pub use sinusoid::Sinusoid;
pub use softmax::{Softmax, softmax_is_shifted};
pub(crate) use words::token_words;

use nalgebra::{DMatrix, DMatrixView};

use crate::matrices::{Cell, Heads, MatrixName};

/// One number that went into a cell, and where it sits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Operand {
    pub cell: Cell,
    pub value: f64,
}

/// The lesson's labels and numbers as a working reads them to write itself: the engine
/// (`Attention`) is one.
pub(crate) trait Labels {
    /// `scores[cat, sat]`, `Q[cat, 2]`, `W_q[3, 1]`.
    fn cell_name(&self, cell: Cell) -> String;

    /// A row in a dot product: `q_cat`, or `weights[cat, :]`.
    fn row_name(&self, matrix: MatrixName, head: usize, row: usize, token: usize) -> String;

    /// A row's label, at step of generation `token` for a one-row matrix of it.
    fn row_label_at(&self, matrix: MatrixName, row: usize, token: usize) -> String;

    /// A row's label in the whole pass.
    fn row_label(&self, matrix: MatrixName, row: usize) -> String;

    /// A column's label.
    fn column_label(&self, matrix: MatrixName, col: usize) -> String;

    /// The matrix's symbol, with no head.
    fn symbol(&self, matrix: MatrixName) -> &'static str;

    /// The matrix's symbol as head `head` has it: `K⁽²⁾`.
    fn symbol_in(&self, matrix: MatrixName, head: usize) -> String;

    /// A token of the sequence by its label.
    fn token_label(&self, token: usize) -> String;

    /// How many tokens the sequence has.
    fn seq_len(&self) -> usize;

    /// The query heads and K/V groups.
    fn heads(&self) -> Heads;

    /// Head `head`'s matrix at step of generation (or tile) `token`.
    fn matrix_at(
        &self,
        name: MatrixName,
        head: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>>;

    /// The lesson's one matrix `name` (the first head's).
    fn matrix(&self, name: MatrixName) -> Option<&DMatrix<f64>>;

    /// One cell's value.
    fn value(&self, cell: Cell) -> Option<f64>;

    /// A query head's attention weights.
    fn weights_of(&self, head: usize) -> &DMatrix<f64>;

    /// Whether the mask is the causal one.
    fn causal(&self) -> bool;

    /// Whether this is cross-attention, its keys' rows the source's tokens.
    fn cross(&self) -> bool;
}

/// The cell a working is written for: its place, its value, the lesson's decimals, and the
/// value written with them.
pub(crate) struct Worked {
    pub cell: Cell,
    pub value: f64,
    pub decimals: usize,
    pub result: String,
}

/// A working's words: the sides of its equation, a note, and how the note is set after them.
pub(crate) struct Words {
    pub sides: Vec<Vec<String>>,
    pub note: Option<String>,
    pub note_after: NoteAfter,
    /// The result is the lesson's own number, exactly as the lesson writes it: not written
    /// again with its table's decimals.
    pub lesson_number: bool,
}

impl Words {
    /// Arithmetic worked out: its note in parentheses, its result with its table's decimals.
    pub(crate) fn worked(sides: Vec<Vec<String>>, note: Option<String>) -> Words {
        Words {
            sides,
            note,
            note_after: NoteAfter::Parentheses,
            lesson_number: false,
        }
    }
}

/// How a note follows the working in one line (`Derivation::explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoteAfter {
    /// `… = 1.5 (note)`: an aside on the arithmetic.
    Parentheses,
    /// `… = 1.5, a number of the lesson`: what the number is.
    Comma,
    /// `… = 0: every key is masked …`: why there is no arithmetic.
    Colon,
}

impl NoteAfter {
    /// The note as it follows the working.
    pub(crate) fn set(self, note: &str) -> String {
        match self {
            NoteAfter::Parentheses => format!(" ({note})"),
            NoteAfter::Comma => format!(", {note}"),
            NoteAfter::Colon => format!(": {note}"),
        }
    }
}

/// A derivation in parts: `name = side = side = …`, then an optional note. A side with several
/// pieces is a sum, its pieces joined by " + ", so a screen can wrap it between terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub name: String,
    pub sides: Vec<Vec<String>>,
    pub note: Option<String>,
}

/// Everything the tutor asks of one kind of working.
pub(crate) trait Working {
    /// The cells this one is computed from, for highlighting.
    fn operands(&self) -> Vec<Cell>;

    /// The cell `e` goes to from `cell`, the cell this working makes; `None` for a number
    /// made from nothing on screen.
    fn source(&self, cell: Cell) -> Option<Cell>;

    /// The arithmetic written out with the real numbers and the lesson's labels.
    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words;

    /// The arithmetic worked out from its operands rounded to `decimals`, as the screen shows
    /// them; `None` for a working whose operands the screen does not show side by side.
    fn redone_from_shown(&self, decimals: usize) -> Option<f64>;

    /// The first two hints (a nudge, then all the working but the result), cut from the
    /// working's own `explanation`.
    fn hints(
        &self,
        labels: &dyn Labels,
        worked: &Worked,
        explanation: &Explanation,
    ) -> (String, String);
}

/// A list of kinds of working made into one enum and its dispatch: adding a kind is its
/// module and one line in a list.
macro_rules! workings {
    ($(#[$enum_doc:meta])* $list:ident { $($(#[$doc:meta])* $name:ident($kind:ty),)* }) => {
        $(#[$enum_doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $list {
            $($(#[$doc])* $name($kind),)*
        }

        impl $list {
            /// The kind itself, which answers every question about it.
            fn working(&self) -> &dyn $crate::workings::Working {
                match self {
                    $($list::$name(kind) => kind,)*
                }
            }
        }

        impl $crate::workings::Working for $list {
            fn operands(&self) -> Vec<$crate::matrices::Cell> {
                self.working().operands()
            }

            fn source(&self, cell: $crate::matrices::Cell) -> Option<$crate::matrices::Cell> {
                self.working().source(cell)
            }

            fn words(
                &self,
                labels: &dyn $crate::workings::Labels,
                worked: &$crate::workings::Worked,
            ) -> $crate::workings::Words {
                self.working().words(labels, worked)
            }

            fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
                self.working().redone_from_shown(decimals)
            }

            fn hints(
                &self,
                labels: &dyn $crate::workings::Labels,
                worked: &$crate::workings::Worked,
                explanation: &$crate::workings::Explanation,
            ) -> (String, String) {
                self.working().hints(labels, worked, explanation)
            }
        }
    };
}
pub(crate) use workings;

workings! {
    /// How a cell's value was made.
    Rule {
        /// A number of the lesson itself (typed in the file, generated, or edited).
        Input(Input),
        /// A dot product: Σ left × right, term by term.
        Dot(Dot),
        /// Two cells added (embeddings + positions).
        Add(Add),
        /// One cell of a row normalised: LayerNorm's or RMSNorm's, with its gain and bias.
        Norm(Norm),
        /// A sinusoidal position encoding.
        Sinusoid(Sinusoid),
        /// One cell of a pair rotated by φ (RoPE).
        Rotate(Rotate),
        /// A score divided by √d_k.
        Scale(Scale),
        /// A score plus the mask.
        Mask(Mask),
        /// exp of one score over the sum of the exps of its row.
        Softmax(Softmax),
        /// Every key of the row is masked: the weight is 0 by definition, never NaN.
        FullyMasked(FullyMasked),
        /// A head's number set in its place among every head's.
        Concat(Concat),
        /// A step of generation's row of a matrix of the whole pass.
        TokenRow(TokenRow),
        /// A row of the K/V cache.
        Cached(Cached),
        /// One number of the online softmax's state after a tile.
        Online(OnlineRule),
        /// One gradient of the backward pass.
        Backward(BackwardRule),
    }
}
