//! The operations that make one matrix from others. Each knows its operands and its formula;
//! the engine computes them and explains any cell of them, one rule per operation.

use super::MatrixName;

/// Where a matrix comes from in one lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Numbers of the lesson itself (typed, generated, or edited).
    Input,
    /// A matrix that is usually computed but that this lesson gives (Q, K, V without embeddings).
    Given,
    /// Sinusoidal position encodings: sin or cos of p / 10000^(2i/d_model).
    Sinusoid,
    /// left + right, cell by cell.
    Add { left: MatrixName, right: MatrixName },
    /// left · right, or left · rightᵀ.
    Product {
        left: MatrixName,
        right: MatrixName,
        transpose_right: bool,
    },
    /// Each row at position p turned pairwise by angles p · 10000^(−2i/d_k) (RoPE).
    Rotate { of: MatrixName },
    /// Divided by √d_k.
    Scale { of: MatrixName },
    /// The mask added: 0 keeps, -inf hides, another number is a bias.
    Mask { of: MatrixName, mask: MatrixName },
    /// Softmax of each row.
    RowSoftmax { of: MatrixName },
    /// Every head's matrix side by side, head 1 first: the concatenation of the heads' outputs.
    Concat { of: MatrixName },
    /// One head's values weights times that head's rows of W_o (the output-value circuit,
    /// W_OV = W_v^h · W_o^h): the head's block of W_o's rows, not all of it.
    HeadRows { left: MatrixName, right: MatrixName },
    /// Generation: the row of `of` for the token at position t, the one being generated.
    TokenRow { of: MatrixName },
    /// Generation: the cache after step t, the one-row `of` of every step 0 … t stacked, the
    /// earlier ones kept from their own steps and the last one new.
    Append { of: MatrixName },
    /// The online softmax after tile i of the keys: one part of each query row's state, from
    /// the softmax's input (`scores`) and the values.
    Online {
        part: OnlinePart,
        scores: MatrixName,
        values: MatrixName,
    },
    // The backward pass's own operations.
    /// leftᵀ · right: a weight's gradient (Xᵀ·dQ), or one flowing back through a product
    /// (weightsᵀ·d_output).
    TransposedProduct { left: MatrixName, right: MatrixName },
    /// Head h's block of columns of a matrix of every head side by side (d_concat's).
    HeadBlock { of: MatrixName },
    /// Softmax backward, row by row: weights ⊙ (grad − rowsum(weights ⊙ grad)).
    SoftmaxBackward {
        weights: MatrixName,
        grad: MatrixName,
    },
    /// A K/V group's gradient: the sum of its query heads' matrices.
    GroupSum { of: MatrixName },
    /// Σ over the heads (or K/V groups) of left_h · right_hᵀ: a gradient back to a matrix every
    /// head reads (dQ_h·W_q_hᵀ summed into dX).
    HeadsProduct { left: MatrixName, right: MatrixName },
    /// Three matrices added cell by cell: the three paths back to X.
    Sum3 { of: [MatrixName; 3] },
    /// Each row turned back by −φ, the rotation's inverse (its transpose): RoPE's gradient.
    RotateBack { of: MatrixName },
}

/// The parts of the online softmax's state after a tile (FlashAttention's m, l and O).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlinePart {
    /// m = max(m_old, the tile's scores).
    Max,
    /// e^(m_old − m): 1 when the maximum did not rise.
    Rescale,
    /// l = rescale·l_old + Σ e^(s − m) over the tile.
    Sum,
    /// acc = rescale·acc_old + Σ e^(s − m)·v over the tile.
    Acc,
}

impl Op {
    /// The matrices this one is computed from.
    pub fn operands(self) -> Vec<MatrixName> {
        match self {
            Op::Input | Op::Given | Op::Sinusoid => Vec::new(),
            Op::Add { left, right }
            | Op::Product { left, right, .. }
            | Op::HeadRows { left, right }
            | Op::Mask {
                of: left,
                mask: right,
            }
            | Op::Online {
                scores: left,
                values: right,
                ..
            }
            | Op::TransposedProduct { left, right }
            | Op::HeadsProduct { left, right }
            | Op::SoftmaxBackward {
                weights: left,
                grad: right,
            } => vec![left, right],
            Op::Sum3 { of } => of.to_vec(),
            Op::Rotate { of }
            | Op::Scale { of }
            | Op::RowSoftmax { of }
            | Op::Concat { of }
            | Op::TokenRow { of }
            | Op::Append { of }
            | Op::HeadBlock { of }
            | Op::GroupSum { of }
            | Op::RotateBack { of } => vec![of],
        }
    }

    /// Whether the learner's own numbers are here (they can be edited and re-rolled).
    pub fn is_lesson_input(self) -> bool {
        matches!(self, Op::Input | Op::Given)
    }

    /// The right-hand side of `name = …`, with each operand written by `symbol`.
    pub fn formula(self, symbol: impl Fn(MatrixName) -> String) -> Option<String> {
        Some(match self {
            // The sinusoid's formula is too long for a caption; its working gives it per cell.
            Op::Input | Op::Given | Op::Sinusoid => return None,
            Op::Add { left, right } => format!("{} + {}", symbol(left), symbol(right)),
            Op::Product {
                left,
                right,
                transpose_right,
            } => format!(
                "{}·{}{}",
                symbol(left),
                symbol(right),
                if transpose_right { "ᵀ" } else { "" }
            ),
            Op::Rotate { of } => format!("rotate({})", symbol(of)),
            Op::Scale { of } => format!("{} / √d_k", symbol(of)),
            Op::Mask { of, mask } => format!("{} + {}", symbol(of), symbol(mask)),
            Op::RowSoftmax { .. } => "softmax(rows)".to_string(),
            // Block by block, one per head; `ui::formula` writes it with the lesson's heads.
            Op::Concat { of } => format!("[{} | …]", symbol(of)),
            Op::HeadRows { left, right } => {
                format!("{}·{}[the head's rows]", symbol(left), symbol(right))
            }
            Op::TokenRow { of } => format!("{}[t, :]", symbol(of)),
            Op::Append { of } => format!("[earlier rows; {}]", symbol(of)),
            Op::TransposedProduct { left, right } => {
                format!("{}ᵀ·{}", symbol(left), symbol(right))
            }
            Op::HeadBlock { of } => format!("{}[:, the head's columns]", symbol(of)),
            Op::SoftmaxBackward { weights, grad } => {
                let (p, d) = (symbol(weights), symbol(grad));
                // avg: each row's Σ p·d, the row's average gradient (the working defines it).
                format!("{p} ⊙ ({d} − avg)")
            }
            Op::GroupSum { of } => format!("Σ {} over the group's heads", symbol(of)),
            Op::HeadsProduct { left, right } => {
                format!("Σ_h {}·{}ᵀ", symbol(left), symbol(right))
            }
            Op::Sum3 { of: [a, b, c] } => {
                format!("{} + {} + {}", symbol(a), symbol(b), symbol(c))
            }
            Op::RotateBack { of } => format!("rotate({}, −φ)", symbol(of)),
            Op::Online {
                part,
                scores,
                values,
            } => {
                let (s, v) = (symbol(scores), symbol(values));
                match part {
                    OnlinePart::Max => format!("max(m_old, {s}[:, tile])"),
                    OnlinePart::Rescale => "e^(m_old − m)".to_string(),
                    OnlinePart::Sum => format!("rescale·l_old + Σ e^({s}[:, tile] − m)"),
                    OnlinePart::Acc => {
                        format!("rescale·acc_old + Σ e^({s}[:, tile] − m)·{v}[tile, :]")
                    }
                }
            }
        })
    }
}

impl OnlinePart {
    /// The matrix that holds this part of the state.
    pub const fn matrix(self) -> MatrixName {
        match self {
            OnlinePart::Max => MatrixName::OnlineMax,
            OnlinePart::Rescale => MatrixName::OnlineRescale,
            OnlinePart::Sum => MatrixName::OnlineSum,
            OnlinePart::Acc => MatrixName::OnlineAcc,
        }
    }
}
