//! Generation with a K/V cache, checked and counted: each step's output row against the whole
//! causal pass's, the numbers the cache holds, and the multiply-adds reusing it saved.

use super::agreement::{Agreement, Comparison};
use super::{Attention, Axis, MatrixName};
use crate::ops;
use crate::pipeline::Op;

/// Multiply-adds of one step of generation, with the cache and without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiplyAdds {
    /// What the step does: the new token's projections, one row of scores and of outputs per
    /// head, and its row through W_o.
    pub with_cache: usize,
    /// What the whole pass over the t tokens so far does (every token's projections, every
    /// head's t × t scores and outputs, every row through W_o): what a model without a cache
    /// recomputes to generate token t.
    pub without_cache: usize,
}

impl MultiplyAdds {
    pub fn saved(self) -> usize {
        self.without_cache.saturating_sub(self.with_cache)
    }
}

impl Attention {
    /// Step `token`'s output row and weights compared with row `token` of the whole pass's;
    /// `None` without generation steps or past the last token.
    pub fn decode_check(&self, token: usize) -> Option<Agreement> {
        if !self.plan.shape.decode || token >= self.seq_len() {
            return None;
        }
        let mut pairs = vec![(
            self.matrix_at(self.plan.final_decode_output(), 0, token)?,
            self.plan.final_output(),
            0,
        )];
        for head in 0..self.heads().query {
            pairs.push((
                self.matrix_at(MatrixName::DecodeWeights, head, token)?,
                MatrixName::Weights,
                head,
            ));
        }
        let mut comparison = Comparison::default();
        for (row, whole, head) in pairs {
            let whole = self.matrix_in(whole, head)?;
            for (col, value) in row.row(0).iter().enumerate() {
                comparison.pair(*value, *whole.get((token, col))?);
            }
            // The whole pass's weights past the cache are the masked keys': exactly 0.
            for col in row.ncols()..whole.ncols() {
                comparison.pair(0.0, whole[(token, col)]);
            }
        }
        Some(comparison.agreement())
    }

    /// The numbers the K and V caches hold after step `token`: every group's keys and values
    /// (counted, not made).
    pub fn cache_numbers(&self, token: usize) -> usize {
        (0..self.heads().kv)
            .map(|group| self.heads().first_of_group(group))
            .map(|head| {
                [MatrixName::KCache, MatrixName::VCache]
                    .into_iter()
                    .filter_map(|name| self.shape_at(name, head, token))
                    .map(|(rows, cols)| rows * cols)
                    .sum::<usize>()
            })
            .sum()
    }

    /// The multiply-adds of step `token`, counted product by product from the plan: the
    /// step's own, and those of the whole pass over its `token + 1` tokens.
    pub fn decode_multiply_adds(&self, token: usize) -> MultiplyAdds {
        let tokens = token + 1;
        let mut counts = MultiplyAdds {
            with_cache: 0,
            without_cache: 0,
        };
        let heads = self.heads();
        for &name in self.plan.order() {
            let Some(
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
                }),
            ) = self.plan.origin(name)
            else {
                continue;
            };
            // The circuits are a lesson's reading aid, and the backward pass is training's:
            // neither is part of the forward pass a model without a cache redoes.
            if matches!(name, MatrixName::WQK | MatrixName::WOV) || name.backward() {
                continue;
            }
            for slot in 0..heads.count(name.per()) {
                let head = heads.head_of_slot(name.per(), slot);
                // Shapes only: counting must not make every group's cache.
                let (Some((rows, inner)), Some(right_shape)) = (
                    self.shape_at(left, head, token),
                    self.shape_at(right, head, token),
                ) else {
                    continue;
                };
                let cols = if transpose_right {
                    right_shape.0
                } else {
                    right_shape.1
                };
                if name.per_token() {
                    counts.with_cache += rows * inner * cols;
                } else {
                    // The whole pass over the tokens so far: every token axis t long.
                    let along = |axis: Axis, length: usize| {
                        if matches!(axis, Axis::Queries | Axis::Keys) {
                            tokens
                        } else {
                            length
                        }
                    };
                    let right_rows = right.entry().rows;
                    counts.without_cache += along(left.entry().rows, rows)
                        * along(left.entry().cols, inner)
                        * if transpose_right {
                            along(right_rows, cols)
                        } else {
                            cols
                        };
                }
            }
        }
        counts
    }
}
