//! Where a cell comes from: its operand cells and the arithmetic, with the real numbers.
//!
//! This is the heart of the tutor. The UI highlights `Derivation::operands` in their own matrices
//! and prints `Derivation::explain`; the command line prints the same text. Each kind of working
//! answers for itself (`crate::workings`); here the engine asks the operation that makes a
//! cell's matrix for the cell's working, and lends it the lesson's labels (`Labels`).

use nalgebra::{DMatrix, DMatrixView};

use super::number::{format_fixed, format_number};
use super::{Attention, Cell, Heads, MatrixName};
use crate::ops::{Rule, Site};
use crate::workings::{Explanation, HeadParts, Labels, NoteAfter, Worked, Working};

/// A cell, its value, and how it was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    pub cell: Cell,
    pub value: f64,
    pub rule: Rule,
}

impl Attention {
    /// Explains one cell of any matrix of this lesson; `None` when the matrix is absent or the
    /// cell is out of range.
    pub fn derive(&self, cell: Cell) -> Option<Derivation> {
        let cell = cell.in_head(cell.head).at_token(cell.token);
        let token = cell.token;
        let matrix = self.matrix_at(cell.matrix, cell.head, token)?;
        if cell.row >= matrix.nrows() || cell.col >= matrix.ncols() {
            return None;
        }
        let value = matrix[(cell.row, cell.col)];
        let origin = self.plan.origin(cell.matrix)?;
        let site = Site {
            cells: self,
            cell,
            width: matrix.ncols(),
        };
        let rule = origin.operation().derive(&site)?;
        Some(Derivation { cell, value, rule })
    }

    /// How a cell is named to a learner: `scores[cat, sat]`, `Q[cat, 2]`, `W_q[3, 1]`.
    pub fn cell_name(&self, cell: Cell) -> String {
        // Written into one string: every working names its cell and each of its operands.
        let symbol = self.symbol(cell.matrix);
        let mut name = String::with_capacity(symbol.len() + 32);
        name.push_str(symbol);
        self.push_head_mark(&mut name, cell.matrix, cell.head);
        name.push('[');
        let entry = cell.matrix.entry();
        if entry.rows == crate::pipeline::Axis::Single {
            // A vector (a gain, a bias) has one row: `b_q[3]`.
            self.push_label(&mut name, entry.cols, cell.col);
            name.push(']');
            return name;
        }
        self.push_row_label_at(&mut name, cell.matrix, cell.row, cell.token);
        // One number per row (the online softmax's m, l, rescale) has no column: `m[cat]`.
        if entry.cols != crate::pipeline::Axis::Single {
            name.push_str(", ");
            self.push_label(&mut name, entry.cols, cell.col);
        }
        name.push(']');
        name
    }

    /// How one row of a matrix is named in a dot product: `q_cat`, or `weights[cat, :]`; a
    /// head's row carries its head when the lesson has several (`q⁽²⁾_cat`). `token` is the
    /// position of the step of generation a one-row matrix of it is.
    pub fn row_name(&self, matrix: MatrixName, head: usize, row: usize, token: usize) -> String {
        let mut name = String::with_capacity(32);
        match self.plan.row_vector(matrix) {
            Some(vector) => {
                name.push_str(vector);
                self.push_head_mark(&mut name, matrix, head);
                name.push('_');
                self.push_row_label_at(&mut name, matrix, row, token);
            }
            None => {
                name.push_str(self.symbol(matrix));
                self.push_head_mark(&mut name, matrix, head);
                name.push('[');
                self.push_row_label_at(&mut name, matrix, row, token);
                name.push_str(", :]");
            }
        }
        name
    }
}

impl Derivation {
    /// The cells this one is computed from, for highlighting.
    pub fn operands(&self) -> Vec<Cell> {
        self.rule.operands()
    }

    /// The cell `e` goes to from this one: for a step that works cell by cell (scaling,
    /// masking, softmax) the same cell of the matrix before, which the softmax row holds at
    /// `selected`; for a dot product its first term. `None` for a lesson's own number.
    pub fn source(&self) -> Option<Cell> {
        self.rule.source(self.cell)
    }

    /// The arithmetic written out with the real numbers, e.g.
    /// `scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1`.
    pub fn explain(&self, attention: &Attention, decimals: usize) -> String {
        let (explanation, note_after) = self.worded(attention, decimals);
        let mut text = explanation.name.clone();
        for side in &explanation.sides {
            text.push_str(" = ");
            text.push_str(&side.join(" + "));
        }
        if let Some(note) = &explanation.note {
            text.push_str(&note_after.set(note));
        }
        text
    }

    /// The same arithmetic in parts, for a screen that lays it out over several lines.
    pub fn explanation(&self, attention: &Attention, decimals: usize) -> Explanation {
        self.worded(attention, decimals).0
    }

    /// The cell as its working writes it, with what the written result and the note need.
    pub(crate) fn worked(&self, decimals: usize) -> Worked {
        Worked {
            cell: self.cell,
            value: self.value,
            decimals,
            result: format_number(self.value, decimals),
        }
    }

    /// The explanation, and how its note follows the working in one line.
    fn worded(&self, attention: &Attention, decimals: usize) -> (Explanation, NoteAfter) {
        // The operands are written with as many decimals as it takes for the arithmetic as
        // written to give the result as written: a learner who works it out from the screen
        // (in practice mode, say) must land on the answer, not a unit off.
        let worked = self.worked(decimals);
        let name = attention.cell_name(self.cell);
        let words = self.rule.words(attention, &worked);
        let result = worked.result;
        // The result as the step's table writes it, all its decimals (0.050, not 0.05: the
        // same number, read to the same precision); a whole number stays whole, as do the
        // lesson's own numbers, which are exactly as the lesson writes them.
        let mut sides = words.sides;
        // Written only where it may be used: writing it for every cell was 7 % of a small
        // lesson's workings.
        if self.value.fract() != 0.0
            && !words.lesson_number
            && let fixed = format_fixed(self.value, decimals)
            && fixed != result
            && let Some(last) = sides.last_mut().filter(|last| last.len() == 1)
        {
            if last[0] == result {
                last[0] = fixed;
            } else if last[0] == format!("≈ {result}") {
                last[0] = format!("≈ {fixed}");
            }
        }
        let explanation = Explanation {
            name,
            sides,
            note: words.note,
        };
        (explanation, words.note_after)
    }

    /// The first two hints for this cell, cut from its `explanation`.
    pub(crate) fn hints(
        &self,
        attention: &Attention,
        explanation: &Explanation,
        decimals: usize,
    ) -> (String, String) {
        self.rule
            .hints(attention, &self.worked(decimals), explanation)
    }

    /// concat · W_o written head by head, for a sum too long to read whole (64 terms from 8
    /// heads): the cell as the sum of the heads' parts, and each part as its own dot product,
    /// head h's output times its block of W_o's rows. Of more than three heads the sum is
    /// written for each head h as head h's part plus the other heads' parts, so that a learner
    /// reading head h's terms adds two numbers, not eight. `None` for any other working.
    pub fn head_parts(&self, attention: &Attention, decimals: usize) -> Option<HeadParts> {
        let Rule::Dot(dot) = &self.rule else {
            return None;
        };
        dot.head_parts(attention, &self.worked(decimals))
    }
}

/// "“sat”, token 3 of 6": a token by its label and its 1-based position.
pub fn token_words(attention: &Attention, token: usize) -> String {
    crate::workings::token_words(attention, token)
}

/// A working reads the lesson's labels from the engine: each answer is the engine's own (the
/// methods of the same names).
impl Labels for Attention {
    fn cell_name(&self, cell: Cell) -> String {
        Attention::cell_name(self, cell)
    }

    fn row_name(&self, matrix: MatrixName, head: usize, row: usize, token: usize) -> String {
        Attention::row_name(self, matrix, head, row, token)
    }

    fn row_label_at(&self, matrix: MatrixName, row: usize, token: usize) -> String {
        Attention::row_label_at(self, matrix, row, token)
    }

    fn row_label(&self, matrix: MatrixName, row: usize) -> String {
        Attention::row_label(self, matrix, row)
    }

    fn column_label(&self, matrix: MatrixName, col: usize) -> String {
        Attention::column_label(self, matrix, col)
    }

    fn symbol(&self, matrix: MatrixName) -> &'static str {
        Attention::symbol(self, matrix)
    }

    fn symbol_in(&self, matrix: MatrixName, head: usize) -> String {
        Attention::symbol_in(self, matrix, head)
    }

    fn token_label(&self, token: usize) -> String {
        self.label(crate::pipeline::Axis::Queries, token)
    }

    fn seq_len(&self) -> usize {
        Attention::seq_len(self)
    }

    fn heads(&self) -> Heads {
        Attention::heads(self)
    }

    fn matrix_at(
        &self,
        name: MatrixName,
        head: usize,
        token: usize,
    ) -> Option<DMatrixView<'_, f64>> {
        Attention::matrix_at(self, name, head, token)
    }

    fn matrix(&self, name: MatrixName) -> Option<&DMatrix<f64>> {
        Attention::matrix(self, name)
    }

    fn value(&self, cell: Cell) -> Option<f64> {
        Attention::value(self, cell)
    }

    fn weights_of(&self, head: usize) -> &DMatrix<f64> {
        Attention::weights_of(self, head)
    }

    fn causal(&self) -> bool {
        self.causal
    }

    fn cross(&self) -> bool {
        self.plan.shape.cross
    }
}
