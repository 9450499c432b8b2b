//! One lesson's pipeline: which matrices it has and the operation that makes each, in the order
//! they are computed. Built from a few facts about the lesson, so lesson, engine and screens
//! agree on it.

use super::{Heads, MatrixName, NormKind, OnlinePart, Op};
use crate::ops;

/// How positions enter the lesson (format 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Positions {
    #[default]
    None,
    /// Sinusoidal encodings added to the embeddings (Vaswani et al. 2017).
    Sinusoidal,
    /// A matrix of the lesson added to the embeddings.
    Learned,
    /// Queries and keys rotated by their position after projection (RoFormer, Su et al. 2021).
    Rope,
}

impl Positions {
    /// The value of `positions = "…"` in a lesson file; a learned matrix has none.
    pub(crate) fn key(self) -> Option<&'static str> {
        match self {
            Positions::None => Some("none"),
            Positions::Sinusoidal => Some("sinusoidal"),
            Positions::Rope => Some("rope"),
            Positions::Learned => None,
        }
    }
}

/// Which projections add a bias the lesson gives (`b_q`, `b_k`, `b_v`, `b_o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Biased {
    pub q: bool,
    pub k: bool,
    pub v: bool,
    pub o: bool,
}

impl Biased {
    /// Whether any projection adds a bias.
    pub fn any(self) -> bool {
        self.q || self.k || self.v || self.o
    }
}

/// The facts about a lesson that decide its pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Q, K, V are projected from embeddings; else the lesson gives them.
    pub projected: bool,
    /// Each row of X is normalised (LayerNorm or RMSNorm) before the projections read it.
    pub norm: Option<NormKind>,
    /// The projections that add a bias.
    pub biases: Biased,
    pub positions: Positions,
    /// With RoPE: which columns are turned together and the angles' base θ (the default
    /// otherwise).
    pub rope: ops::Rope,
    /// Scores are divided by √d_k.
    pub scale: bool,
    /// A mask is added before softmax.
    pub mask: bool,
    /// How many query heads, and how many K/V groups they share (as many as heads unless the
    /// attention is grouped-query).
    pub heads: Heads,
    /// The heads' outputs are concatenated and projected by W_o.
    pub output_weights: bool,
    /// Each head's circuits W_QK and W_OV are taught: the lesson has embeddings, W_o, and a
    /// d_model small enough for a d_model × d_model matrix to be read.
    pub circuits: bool,
    /// Cross-attention: the keys and values come from a source sequence (projected from its
    /// own embeddings when Q is projected), not from the queries' tokens.
    pub cross: bool,
    /// Generation with a K/V cache: after the whole pass, the output is made again one token
    /// at a time, each step reusing the keys and values of the steps before (self-attention
    /// with the causal mask only).
    pub decode: bool,
    /// The backward pass: the lesson gives `grad_output`, and every gradient back to the
    /// weights (and X) is worked out.
    pub backward: bool,
}

/// Why no lesson can have a shape: the lesson key that asks for what the rest excludes, and
/// the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The key the parser points at; empty for a fact no key sets (the circuits).
    pub key: &'static str,
    pub why: &'static str,
    pub help: &'static str,
}

impl Shape {
    /// Why no lesson has this shape; `None` for one a lesson can have. `Shape::every()` is
    /// every shape this allows, and the parser refuses a lesson whose shape it refuses: a new
    /// fact of the shape that excludes others says so here, once, and the tests that walk
    /// every shape (a fact some shape ignores, a pass some shape lacks) say when it must.
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        // Every fact named, so that a new one is a decision here: what it excludes, or `_`.
        let Shape {
            projected,
            positions,
            rope,
            scale: _,
            mask,
            heads,
            output_weights,
            circuits,
            cross,
            decode,
            backward,
            norm,
            biases,
        } = *self;
        if positions != Positions::Rope && rope != ops::Rope::default() {
            let key = if rope.pairing == ops::Rope::default().pairing {
                "rope_theta"
            } else {
                "rope_pairing"
            };
            return Some(Refusal {
                key,
                why: "only RoPE turns pairs of columns by angles of base θ",
                help: "write `positions = \"rope\"`, or remove `rope_pairing` and `rope_theta`",
            });
        }
        let added = matches!(positions, Positions::Sinusoidal | Positions::Learned);
        if added && !projected {
            return Some(Refusal {
                key: "positions",
                why: "added positions need embeddings to be added to",
                help: "give `embeddings`, `w_q`, `w_k`, `w_v` instead of `q`, `k`, `v`, or use `positions = \"rope\"`, which rotates Q and K",
            });
        }
        if cross && positions == Positions::Learned {
            return Some(Refusal {
                key: "positions",
                why: "a learned table is one sequence's: cross-attention has none",
                help: "use `positions = \"sinusoidal\"` or `\"rope\"` with `source_tokens`",
            });
        }
        if decode && (!mask || cross) {
            return Some(Refusal {
                key: "decode",
                why: "generation needs the causal mask, which cross-attention has not",
                help: "write `mask = \"causal\"` in a lesson without `source_tokens`, or remove `decode`",
            });
        }
        if heads.query > 1 && !output_weights {
            return Some(Refusal {
                key: "w_o",
                why: "several heads need W_o to be one output",
                help: "give `w_o` with (heads × d_v) rows",
            });
        }
        if norm.is_some() && !projected {
            return Some(Refusal {
                key: "norm",
                why: "a norm needs embeddings",
                help: "the norm rescales each row of X before W_q, W_k and W_v read it: give `embeddings`, `w_q`, `w_k`, `w_v` instead of `q`, `k`, `v`, or remove `norm`",
            });
        }
        if norm.is_some() && backward {
            return Some(Refusal {
                key: "norm",
                why: "the backward pass through a norm is not supported yet",
                help: "the gradients stop at the norm's output for now: remove `grad_output` for the forward pass with the norm, or remove `norm` (and its `norm_gain`, `norm_bias`) for the backward pass",
            });
        }
        let bias_key = match biases {
            Biased { q: true, .. } => "b_q",
            Biased { k: true, .. } => "b_k",
            Biased { v: true, .. } => "b_v",
            _ => "b_o",
        };
        if (biases.q || biases.k || biases.v) && !projected {
            return Some(Refusal {
                key: bias_key,
                why: "a projection's bias needs the projection",
                help: "b_q, b_k and b_v are added to X·W_q, X·W_k and X·W_v: give `embeddings`, `w_q`, `w_k`, `w_v` instead of `q`, `k`, `v`, or add the biases to the Q, K and V you give",
            });
        }
        if biases.o && !output_weights {
            return Some(Refusal {
                key: "b_o",
                why: "`b_o` is added to concat·W_o, and this lesson has no `w_o`",
                help: "give `w_o` with the heads' outputs' width in rows, or remove `b_o`",
            });
        }
        if circuits && !(projected && output_weights) {
            return Some(Refusal {
                key: "",
                why: "the circuits read the weights and W_o",
                help: "",
            });
        }
        None
    }

    /// Every kind of lesson there is, for checking what holds for all of them: every
    /// combination of the facts that `refusal` allows.
    pub(crate) fn every() -> Vec<Shape> {
        // One bit of `bits` for each yes-or-no fact, named by the pattern below: a new fact
        // without its bit, or a bit without its fact, does not compile.
        const FLAGS: usize = 10;
        let mut shapes = Vec::new();
        for bits in 0..1u32 << FLAGS {
            let [
                projected,
                scale,
                mask,
                output_weights,
                circuits,
                cross,
                decode,
                backward,
                // b_q, b_k and b_v together; a lesson may give any of them, and the test that
                // flips each fact flips each alone.
                input_biases,
                output_bias,
            ]: [bool; FLAGS] = std::array::from_fn(|n| bits & (1 << n) != 0);
            for (positions, rope) in [
                (Positions::None, ops::Rope::default()),
                (Positions::Sinusoidal, ops::Rope::default()),
                (Positions::Learned, ops::Rope::default()),
                (Positions::Rope, ops::Rope::default()),
                (Positions::Rope, HALF_ROPE),
            ] {
                for heads in [
                    Heads::ONE,
                    Heads { query: 2, kv: 2 },
                    Heads { query: 2, kv: 1 },
                ] {
                    for norm in [None, Some(NormKind::Layer), Some(NormKind::Rms)] {
                        shapes.push(Shape {
                            projected,
                            positions,
                            rope,
                            scale,
                            mask,
                            heads,
                            output_weights,
                            circuits,
                            cross,
                            decode,
                            backward,
                            norm,
                            biases: Biased {
                                q: input_biases,
                                k: input_biases,
                                v: input_biases,
                                o: output_bias,
                            },
                        });
                    }
                }
            }
        }
        shapes.retain(|shape| shape.refusal().is_none());
        shapes
    }
}

/// Rotate-half pairing of the default base: what `Shape::every()` has of RoPE besides the
/// default (a base of its own changes the same words and numbers).
const HALF_ROPE: ops::Rope = ops::Rope {
    pairing: ops::RopePairing::Half,
    theta: ops::DEFAULT_ROPE_THETA,
};

/// The matrices of one lesson and where each comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub shape: Shape,
    origins: [Option<Op>; MatrixName::ALL.len()],
    order: Vec<MatrixName>,
    /// The backward pass's gradient of each matrix it differentiates, recorded as the pass is
    /// planned.
    gradients: [Option<MatrixName>; MatrixName::ALL.len()],
}

impl Plan {
    pub fn new(shape: Shape) -> Plan {
        // Every fact named, so that a new one is a decision where the plan is made.
        let Shape {
            projected,
            positions,
            // The rotations carry it.
            rope,
            scale,
            mask,
            // The same matrices for any number of heads: each entry says whether it is one
            // per head (`Per`).
            heads: _,
            output_weights,
            circuits,
            cross,
            decode,
            backward,
            norm,
            biases,
        } = shape;
        let mut plan = Plan {
            shape,
            origins: [None; MatrixName::ALL.len()],
            order: Vec::new(),
            gradients: [None; MatrixName::ALL.len()],
        };
        let (q, k, v) = if projected {
            plan.add(MatrixName::Embeddings, Op::Input(ops::Input));
            let added = match positions {
                Positions::Sinusoidal => Some(Op::Sinusoid(ops::Sinusoid)),
                Positions::Learned => Some(Op::Input(ops::Input)),
                Positions::None | Positions::Rope => None,
            };
            let projected = match added {
                Some(origin) => {
                    plan.add(MatrixName::Positions, origin);
                    plan.add(
                        MatrixName::X,
                        Op::Add(ops::Add {
                            left: MatrixName::Embeddings,
                            right: MatrixName::Positions,
                        }),
                    );
                    MatrixName::X
                }
                None => MatrixName::Embeddings,
            };
            // Cross-attention's keys and values come from the source, which gets the same
            // sinusoid as the target, counted from its own first token.
            let source = if cross {
                plan.add(MatrixName::SourceEmbeddings, Op::Input(ops::Input));
                if positions == Positions::Sinusoidal {
                    plan.add(MatrixName::SourcePositions, Op::Sinusoid(ops::Sinusoid));
                    plan.add(
                        MatrixName::SourceX,
                        Op::Add(ops::Add {
                            left: MatrixName::SourceEmbeddings,
                            right: MatrixName::SourcePositions,
                        }),
                    );
                    MatrixName::SourceX
                } else {
                    MatrixName::SourceEmbeddings
                }
            } else {
                projected
            };
            // Pre-norm (GPT-2, Llama): each row of X normalised before the projections read
            // it. In cross-attention only the queries' side: the source is an encoder's output,
            // which that encoder's own last norm has already normalised.
            let projected = match norm {
                Some(kind) => {
                    plan.add(MatrixName::NormGain, Op::Input(ops::Input));
                    if kind == NormKind::Layer {
                        plan.add(MatrixName::NormBias, Op::Input(ops::Input));
                    }
                    plan.add(
                        MatrixName::XNorm,
                        Op::Norm(ops::Norm {
                            of: projected,
                            kind,
                        }),
                    );
                    MatrixName::XNorm
                }
                None => projected,
            };
            let source = if cross { source } else { projected };
            for (weights, result, from, bias) in [
                (
                    MatrixName::WQ,
                    MatrixName::Q,
                    projected,
                    biases.q.then_some(MatrixName::BQ),
                ),
                (
                    MatrixName::WK,
                    MatrixName::K,
                    source,
                    biases.k.then_some(MatrixName::BK),
                ),
                (
                    MatrixName::WV,
                    MatrixName::V,
                    source,
                    biases.v.then_some(MatrixName::BV),
                ),
            ] {
                plan.add(weights, Op::Input(ops::Input));
                if let Some(bias) = bias {
                    plan.add(bias, Op::Input(ops::Input));
                }
                plan.add(result, projection(from, weights, bias));
            }
            (MatrixName::Q, MatrixName::K, MatrixName::V)
        } else {
            for given in [MatrixName::Q, MatrixName::K, MatrixName::V] {
                plan.add(given, Op::Given(ops::Given));
            }
            (MatrixName::Q, MatrixName::K, MatrixName::V)
        };
        let (q, k) = if positions == Positions::Rope {
            plan.add(MatrixName::QRope, Op::Rotate(ops::Rotate { of: q, rope }));
            plan.add(MatrixName::KRope, Op::Rotate(ops::Rotate { of: k, rope }));
            (MatrixName::QRope, MatrixName::KRope)
        } else {
            (q, k)
        };
        plan.add(
            MatrixName::Scores,
            Op::Product(ops::Product {
                left: q,
                right: k,
                transpose_right: true,
            }),
        );
        let mut last = MatrixName::Scores;
        if scale {
            plan.add(MatrixName::Scaled, Op::Scale(ops::Scale { of: last }));
            last = MatrixName::Scaled;
        }
        if mask {
            plan.add(MatrixName::Mask, Op::Input(ops::Input));
            plan.add(
                MatrixName::Masked,
                Op::Mask(ops::Mask {
                    of: last,
                    mask: MatrixName::Mask,
                }),
            );
            last = MatrixName::Masked;
        }
        plan.add(
            MatrixName::Weights,
            Op::RowSoftmax(ops::RowSoftmax { of: last }),
        );
        plan.add(
            MatrixName::Output,
            Op::Product(ops::Product {
                left: MatrixName::Weights,
                right: v,
                transpose_right: false,
            }),
        );
        if output_weights {
            plan.add(MatrixName::WO, Op::Input(ops::Input));
            let bias = biases.o.then_some(MatrixName::BO);
            if let Some(bias) = bias {
                plan.add(bias, Op::Input(ops::Input));
            }
            plan.add(
                MatrixName::Concat,
                Op::Concat(ops::Concat {
                    of: MatrixName::Output,
                }),
            );
            plan.add(
                MatrixName::Projected,
                projection(MatrixName::Concat, MatrixName::WO, bias),
            );
        }
        // The circuits read the weights and W_o, so a lesson that gives Q, K and V or has no
        // W_o has none.
        if circuits && projected && output_weights {
            plan.add(
                MatrixName::WQK,
                Op::Product(ops::Product {
                    left: MatrixName::WQ,
                    right: MatrixName::WK,
                    transpose_right: true,
                }),
            );
            plan.add(
                MatrixName::WOV,
                Op::HeadRows(ops::HeadRows {
                    left: MatrixName::WV,
                    right: MatrixName::WO,
                }),
            );
        }
        // Every lesson's softmax is worked out again tile by tile, as FlashAttention does it,
        // from the same input and values.
        for part in [
            OnlinePart::Max,
            OnlinePart::Rescale,
            OnlinePart::Sum,
            OnlinePart::Acc,
        ] {
            plan.add(
                part.matrix(),
                Op::Online(ops::Online {
                    part,
                    scores: last,
                    values: v,
                }),
            );
        }
        if decode {
            plan.add_generation();
        }
        if backward {
            plan.add_backward(q, k, v);
        }
        plan
    }

    /// The backward pass of L = Σ output ⊙ grad_output, from the output back: through W_o,
    /// the values and the weights, the softmax, the scaling (the mask passes the gradient
    /// through unchanged, and a hidden key has none), the scores to Q and K (turned back with
    /// RoPE), then the weights and X. `q`, `k` are what the scores were made from (rotated with
    /// RoPE), `v` the values.
    fn add_backward(&mut self, q: MatrixName, k: MatrixName, v: MatrixName) {
        let shape = self.shape;
        self.add(MatrixName::DOutput, Op::Input(ops::Input));
        let head_grad = if shape.output_weights {
            self.add(
                MatrixName::DConcat,
                Op::Product(ops::Product {
                    left: MatrixName::DOutput,
                    right: MatrixName::WO,
                    transpose_right: true,
                }),
            );
            self.add(
                MatrixName::DWO,
                Op::TransposedProduct(ops::TransposedProduct {
                    left: MatrixName::Concat,
                    right: MatrixName::DOutput,
                }),
            );
            self.differentiates(MatrixName::WO, MatrixName::DWO);
            if shape.biases.o {
                self.add(
                    MatrixName::DBO,
                    Op::ColumnSum(ops::ColumnSum {
                        of: MatrixName::DOutput,
                    }),
                );
                self.differentiates(MatrixName::BO, MatrixName::DBO);
            }
            self.add(
                MatrixName::DHeadOutput,
                Op::HeadBlock(ops::HeadBlock {
                    of: MatrixName::DConcat,
                }),
            );
            MatrixName::DHeadOutput
        } else {
            MatrixName::DOutput
        };
        self.add(
            MatrixName::DWeights,
            Op::Product(ops::Product {
                left: head_grad,
                right: v,
                transpose_right: true,
            }),
        );
        self.add(
            MatrixName::DV,
            Op::TransposedProduct(ops::TransposedProduct {
                left: MatrixName::Weights,
                right: head_grad,
            }),
        );
        self.add(
            MatrixName::DSoftmaxInput,
            Op::SoftmaxBackward(ops::SoftmaxBackward {
                weights: MatrixName::Weights,
                grad: MatrixName::DWeights,
            }),
        );
        let d_scores = if shape.scale {
            self.add(
                MatrixName::DScores,
                Op::Scale(ops::Scale {
                    of: MatrixName::DSoftmaxInput,
                }),
            );
            MatrixName::DScores
        } else {
            MatrixName::DSoftmaxInput
        };
        let rope = shape.positions == Positions::Rope;
        let (dq, dk) = if rope {
            (MatrixName::DQRope, MatrixName::DKRope)
        } else {
            (MatrixName::DQ, MatrixName::DK)
        };
        self.add(
            dq,
            Op::Product(ops::Product {
                left: d_scores,
                right: k,
                transpose_right: false,
            }),
        );
        self.add(
            dk,
            Op::TransposedProduct(ops::TransposedProduct {
                left: d_scores,
                right: q,
            }),
        );
        if rope {
            let rope = shape.rope;
            self.add(
                MatrixName::DQ,
                Op::RotateBack(ops::RotateBack { of: dq, rope }),
            );
            self.add(
                MatrixName::DK,
                Op::RotateBack(ops::RotateBack { of: dk, rope }),
            );
        }
        // The heads of a K/V group share its keys and values: their gradients add up.
        let (dk, dv) = if shape.heads.kv < shape.heads.query {
            self.add(
                MatrixName::DKGroup,
                Op::GroupSum(ops::GroupSum { of: MatrixName::DK }),
            );
            self.add(
                MatrixName::DVGroup,
                Op::GroupSum(ops::GroupSum { of: MatrixName::DV }),
            );
            (MatrixName::DKGroup, MatrixName::DVGroup)
        } else {
            (MatrixName::DK, MatrixName::DV)
        };
        self.differentiates(MatrixName::Q, MatrixName::DQ);
        self.differentiates(MatrixName::K, dk);
        self.differentiates(MatrixName::V, dv);
        let (Some(x), Some(source)) = (self.projected_input(), self.projected_source()) else {
            return;
        };
        for (result, from, grad, weights) in [
            (MatrixName::DWQ, x, MatrixName::DQ, MatrixName::WQ),
            (MatrixName::DWK, source, dk, MatrixName::WK),
            (MatrixName::DWV, source, dv, MatrixName::WV),
        ] {
            self.differentiates(weights, result);
            self.add(
                result,
                Op::TransposedProduct(ops::TransposedProduct {
                    left: from,
                    right: grad,
                }),
            );
        }
        // A bias is added to every row, so its gradient is its matrix's, summed over the rows.
        for (result, grad, bias, given) in [
            (
                MatrixName::DBQ,
                MatrixName::DQ,
                MatrixName::BQ,
                shape.biases.q,
            ),
            (MatrixName::DBK, dk, MatrixName::BK, shape.biases.k),
            (MatrixName::DBV, dv, MatrixName::BV, shape.biases.v),
        ] {
            if given {
                self.differentiates(bias, result);
                self.add(result, Op::ColumnSum(ops::ColumnSum { of: grad }));
            }
        }
        for (result, grad, weights) in [
            (MatrixName::DXQ, MatrixName::DQ, MatrixName::WQ),
            (MatrixName::DXK, dk, MatrixName::WK),
            (MatrixName::DXV, dv, MatrixName::WV),
        ] {
            self.add(
                result,
                Op::HeadsProduct(ops::HeadsProduct {
                    left: grad,
                    right: weights,
                }),
            );
        }
        // X reaches the loss through Q, K and V; in cross-attention the source through K and V.
        if shape.cross {
            self.add(
                MatrixName::DSource,
                Op::Add(ops::Add {
                    left: MatrixName::DXK,
                    right: MatrixName::DXV,
                }),
            );
            self.differentiates(x, MatrixName::DXQ);
            self.differentiates(source, MatrixName::DSource);
        } else {
            self.differentiates(x, MatrixName::DX);
            self.add(
                MatrixName::DX,
                Op::Sum3(ops::Sum3 {
                    of: [MatrixName::DXQ, MatrixName::DXK, MatrixName::DXV],
                }),
            );
        }
    }

    /// Generation with a K/V cache, step t: the new token's q, k and v (projected from its
    /// row of X, or the rows of the given Q, K, V), the caches with its key and value added,
    /// its one row of scores and weights over the cache, and its output row. No mask: the
    /// cache holds only the tokens up to t, which is what the causal mask let through.
    fn add_generation(&mut self) {
        let shape = self.shape;
        let (q, k, v) = match self.projected_input() {
            Some(x) => {
                self.add(MatrixName::XNew, Op::TokenRow(ops::TokenRow { of: x }));
                for (result, weights, bias) in [
                    (MatrixName::QNew, MatrixName::WQ, MatrixName::BQ),
                    (MatrixName::KNew, MatrixName::WK, MatrixName::BK),
                    (MatrixName::VNew, MatrixName::WV, MatrixName::BV),
                ] {
                    let bias = self.has(bias).then_some(bias);
                    self.add(result, projection(MatrixName::XNew, weights, bias));
                }
                (MatrixName::QNew, MatrixName::KNew, MatrixName::VNew)
            }
            None => {
                for (result, given) in [
                    (MatrixName::QNew, MatrixName::Q),
                    (MatrixName::KNew, MatrixName::K),
                    (MatrixName::VNew, MatrixName::V),
                ] {
                    self.add(result, Op::TokenRow(ops::TokenRow { of: given }));
                }
                (MatrixName::QNew, MatrixName::KNew, MatrixName::VNew)
            }
        };
        let (q, k) = if shape.positions == Positions::Rope {
            let rope = shape.rope;
            self.add(
                MatrixName::QNewRope,
                Op::Rotate(ops::Rotate { of: q, rope }),
            );
            self.add(
                MatrixName::KNewRope,
                Op::Rotate(ops::Rotate { of: k, rope }),
            );
            (MatrixName::QNewRope, MatrixName::KNewRope)
        } else {
            (q, k)
        };
        self.add(MatrixName::KCache, Op::Append(ops::Append { of: k }));
        self.add(MatrixName::VCache, Op::Append(ops::Append { of: v }));
        self.add(
            MatrixName::DecodeScores,
            Op::Product(ops::Product {
                left: q,
                right: MatrixName::KCache,
                transpose_right: true,
            }),
        );
        let mut last = MatrixName::DecodeScores;
        if shape.scale {
            self.add(MatrixName::DecodeScaled, Op::Scale(ops::Scale { of: last }));
            last = MatrixName::DecodeScaled;
        }
        self.add(
            MatrixName::DecodeWeights,
            Op::RowSoftmax(ops::RowSoftmax { of: last }),
        );
        self.add(
            MatrixName::DecodeOutput,
            Op::Product(ops::Product {
                left: MatrixName::DecodeWeights,
                right: MatrixName::VCache,
                transpose_right: false,
            }),
        );
        if self.has(MatrixName::WO) {
            self.add(
                MatrixName::DecodeConcat,
                Op::Concat(ops::Concat {
                    of: MatrixName::DecodeOutput,
                }),
            );
            let bias = self.has(MatrixName::BO).then_some(MatrixName::BO);
            self.add(
                MatrixName::DecodeProjected,
                projection(MatrixName::DecodeConcat, MatrixName::WO, bias),
            );
        }
    }

    /// The matrix a step of generation's answer is: the new output row after W_o, or the one
    /// head's.
    pub fn final_decode_output(&self) -> MatrixName {
        if self.has(MatrixName::DecodeProjected) {
            MatrixName::DecodeProjected
        } else {
            MatrixName::DecodeOutput
        }
    }

    fn add(&mut self, name: MatrixName, origin: Op) {
        self.origins[name.index()] = Some(origin);
        self.order.push(name);
    }

    /// Records that the backward pass's `gradient` is ∂L/∂`forward`.
    fn differentiates(&mut self, forward: MatrixName, gradient: MatrixName) {
        self.gradients[forward.index()] = Some(gradient);
    }

    /// The backward pass's ∂L/∂`name`, read from the plan: the gradient recorded for it, or
    /// for a matrix added to another (X = E + P), the sum's, which each addend shares.
    /// `None` when the pass does not reach it.
    pub(crate) fn gradient_of(&self, name: MatrixName) -> Option<MatrixName> {
        if let Some(gradient) = self.gradients[name.index()] {
            return Some(gradient);
        }
        self.order.iter().find_map(|&sum| match self.origin(sum)? {
            Op::Add(ops::Add { left, right }) if left == name || right == name => {
                self.gradient_of(sum)
            }
            _ => None,
        })
    }

    /// Where a matrix comes from, or `None` when this lesson does not have it.
    pub fn origin(&self, name: MatrixName) -> Option<Op> {
        self.origins[name.index()]
    }

    pub(crate) fn has(&self, name: MatrixName) -> bool {
        self.origin(name).is_some()
    }

    /// The lesson's matrices in the order they are computed: each after its operands.
    pub(crate) fn order(&self) -> &[MatrixName] {
        &self.order
    }

    /// The matrix that is projected into Q: whatever the plan multiplies by W_q (X, the
    /// embeddings plus positions, or the embeddings themselves). Read from the plan, so an
    /// operation put between the embeddings and the projections is what they read.
    pub fn projected_input(&self) -> Option<MatrixName> {
        self.multiplied_by(MatrixName::Q, MatrixName::WQ)
    }

    /// The matrix projected into K and V: whatever the plan multiplies by W_k (the source,
    /// with its positions, in cross-attention; else the same as `projected_input`).
    pub fn projected_source(&self) -> Option<MatrixName> {
        self.multiplied_by(MatrixName::K, MatrixName::WK)
    }

    /// The left operand of `product` when the plan makes it as that times `weights`.
    fn multiplied_by(&self, product: MatrixName, weights: MatrixName) -> Option<MatrixName> {
        match self.origin(product) {
            Some(
                Op::Product(ops::Product {
                    left,
                    right,
                    transpose_right: false,
                })
                | Op::Affine(ops::Affine {
                    product:
                        ops::Product {
                            left,
                            right,
                            transpose_right: false,
                        },
                    ..
                }),
            ) if right == weights => Some(left),
            _ => None,
        }
    }

    /// The matrix a lesson's answer is: the heads' outputs projected by W_o, or the one head's
    /// output.
    pub fn final_output(&self) -> MatrixName {
        if self.has(MatrixName::Projected) {
            MatrixName::Projected
        } else {
            MatrixName::Output
        }
    }

    /// The matrix a printed figure of `name` is compared with: `x` is the embeddings plus
    /// their positions, so the embeddings themselves when nothing is added to them (and not
    /// whatever the projections read, which a step between may have changed); `output` is
    /// the heads' outputs projected by W_o when the lesson has W_o.
    pub(crate) fn figure_source(&self, name: MatrixName) -> MatrixName {
        let embeddings = match name {
            MatrixName::X => MatrixName::Embeddings,
            MatrixName::SourceX => MatrixName::SourceEmbeddings,
            _ => name,
        };
        match name {
            MatrixName::X | MatrixName::SourceX if !self.has(name) && self.has(embeddings) => {
                embeddings
            }
            MatrixName::Output => self.final_output(),
            _ => name,
        }
    }

    /// The matrix softmax is taken over: masked, else scaled, else the scores.
    pub(crate) fn softmax_input(&self) -> MatrixName {
        match self.origin(MatrixName::Weights) {
            Some(Op::RowSoftmax(ops::RowSoftmax { of })) => of,
            _ => MatrixName::Scores,
        }
    }

    /// A matrix's symbol in this lesson: the embeddings are X, unless positions are added to
    /// them to make X, when they are E; a head's output is `head` (Vaswani et al.'s head_i)
    /// when W_o makes the output from every head's.
    pub fn symbol(&self, name: MatrixName) -> &'static str {
        match name {
            MatrixName::Embeddings if self.has(MatrixName::X) => "E",
            MatrixName::SourceEmbeddings if self.has(MatrixName::SourceX) => "E_S",
            MatrixName::Output if self.has(MatrixName::Projected) => "head",
            MatrixName::DecodeOutput if self.has(MatrixName::DecodeProjected) => "head_t",
            // In cross-attention the keys and values are the source's: their paths back reach
            // the source, not X.
            MatrixName::DXK if self.shape.cross => "d_source_k",
            MatrixName::DXV if self.shape.cross => "d_source_v",
            _ => name.symbol(),
        }
    }

    /// How a row of a matrix is named in a dot product (`q_cat`), if it has such a name.
    pub(crate) fn row_vector(&self, name: MatrixName) -> Option<&'static str> {
        if (name == MatrixName::Embeddings && self.has(MatrixName::X))
            || (name == MatrixName::SourceEmbeddings && self.has(MatrixName::SourceX))
        {
            Some("e")
        } else {
            name.entry().row_vector
        }
    }

    /// `equation` (a symbol, or `symbol = formula`) followed by what the matrix is, in
    /// parentheses, when it has words: the caption of a table of it.
    pub fn captioned(&self, equation: String, name: MatrixName) -> String {
        let origin = self.origin(name).unwrap_or(Op::Input(ops::Input));
        let gloss = name.entry().gloss.map(|gloss| match origin {
            Op::Given(_) => format!("{gloss}, given"),
            _ => gloss.to_string(),
        });
        let gloss = match (name, self.shape.positions) {
            (MatrixName::Positions, Positions::Learned) => Some("learned positions".to_string()),
            (MatrixName::Positions, _) => Some("sinusoidal positions".to_string()),
            // One head has no share to speak of: the gradient is the whole of it.
            (MatrixName::DV | MatrixName::DK | MatrixName::DKRope, _)
                if self.shape.heads.query == 1 =>
            {
                gloss.map(|gloss| gloss.replace(", this head's share", ""))
            }
            (MatrixName::DXK, _) if self.shape.cross => {
                Some("dL/d(source) through the keys".to_string())
            }
            (MatrixName::DXV, _) if self.shape.cross => {
                Some("dL/d(source) through the values".to_string())
            }
            _ => gloss,
        };
        match gloss {
            Some(gloss) => format!("{equation} ({gloss})"),
            None => equation,
        }
    }
}

/// `⁽²⁾` for head index 1: the head counted from 1, in superscript digits.
pub fn head_superscript(head: usize) -> String {
    let mut mark = String::with_capacity(HEAD_SUPERSCRIPT_BYTES);
    push_head_superscript(&mut mark, head);
    mark
}

/// Room for a head's superscript up to head 999 (each superscript digit and parenthesis is
/// 2 or 3 bytes of UTF-8), so writing one seldom grows its string.
pub(crate) const HEAD_SUPERSCRIPT_BYTES: usize = 15;

/// `head_superscript` appended to `out`, digit by digit: every cell's name carries one, so a
/// large lesson's workings write thousands of them.
pub(crate) fn push_head_superscript(out: &mut String, head: usize) {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let number = head + 1;
    let mut place = 1;
    while place <= number / 10 {
        place *= 10;
    }
    out.push('⁽');
    while place > 0 {
        out.push(DIGITS[number / place % 10]);
        place /= 10;
    }
    out.push('⁾');
}

/// `left · weights`, with `bias` added to each row when the lesson gives one.
fn projection(left: MatrixName, weights: MatrixName, bias: Option<MatrixName>) -> Op {
    let product = ops::Product {
        left,
        right: weights,
        transpose_right: false,
    };
    match bias {
        Some(bias) => Op::Affine(ops::Affine { product, bias }),
        None => Op::Product(product),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fact of a shape changes the plan wherever `refusal` allows it: a fact the plan
    /// ignores in some shape (a new step wired for embeddings only, in a lesson that gives Q,
    /// K and V) is a lesson that silently does not do what its file says, so that shape must
    /// be refused, and the parser then refuses it too.
    #[test]
    fn every_fact_of_an_allowed_shape_changes_its_plan() {
        // What a learner meets: the matrices and how each is made, and each step's words
        // (cross-attention with Q, K and V given has the same matrices, from other rows).
        let graph = |shape: Shape| {
            let plan = Plan::new(shape);
            let matrices: Vec<_> = plan
                .order()
                .iter()
                .map(|name| (*name, plan.origin(*name)))
                .collect();
            let words: Vec<_> = crate::pipeline::Step::all_in(&plan)
                .into_iter()
                .map(|step| (step, step.narration(&plan), step.note(&plan)))
                .collect();
            (matrices, words)
        };
        for shape in Shape::every() {
            // Every field named, so that a new one does not compile until it is flipped here.
            let Shape {
                projected,
                positions: _,
                rope,
                scale,
                mask,
                heads: _,
                output_weights,
                circuits,
                cross,
                decode,
                backward,
                norm,
                biases,
            } = shape;
            let mut others = vec![
                Shape {
                    projected: !projected,
                    ..shape
                },
                Shape {
                    scale: !scale,
                    ..shape
                },
                Shape {
                    mask: !mask,
                    ..shape
                },
                Shape {
                    output_weights: !output_weights,
                    ..shape
                },
                Shape {
                    circuits: !circuits,
                    ..shape
                },
                Shape {
                    cross: !cross,
                    ..shape
                },
                Shape {
                    decode: !decode,
                    ..shape
                },
                Shape {
                    backward: !backward,
                    ..shape
                },
                Shape {
                    biases: Biased {
                        q: !biases.q,
                        ..biases
                    },
                    ..shape
                },
                Shape {
                    biases: Biased {
                        k: !biases.k,
                        ..biases
                    },
                    ..shape
                },
                Shape {
                    biases: Biased {
                        v: !biases.v,
                        ..biases
                    },
                    ..shape
                },
                Shape {
                    biases: Biased {
                        o: !biases.o,
                        ..biases
                    },
                    ..shape
                },
            ];
            for other in [None, Some(NormKind::Layer), Some(NormKind::Rms)] {
                if other != norm {
                    others.push(Shape {
                        norm: other,
                        ..shape
                    });
                }
            }
            for positions in [
                Positions::None,
                Positions::Sinusoidal,
                Positions::Learned,
                Positions::Rope,
            ] {
                if positions != shape.positions {
                    others.push(Shape { positions, ..shape });
                }
            }
            for other in [ops::Rope::default(), HALF_ROPE] {
                if other != rope {
                    others.push(Shape {
                        rope: other,
                        ..shape
                    });
                }
            }
            for other in others {
                if other.refusal().is_none() {
                    assert_ne!(graph(shape), graph(other), "{shape:?} and {other:?}");
                }
            }
        }
    }

    /// What `Shape::every()` leaves out, the parser refuses, and the other way round: the
    /// shapes are one list of what a lesson can be.
    #[test]
    fn the_shapes_refused_are_the_ones_left_out() {
        let every = Shape::every();
        assert!(every.iter().all(|shape| shape.refusal().is_none()));
        let refused = Shape {
            projected: false,
            positions: Positions::Sinusoidal,
            ..every[0]
        };
        assert_eq!(
            refused.refusal().map(|refusal| refusal.key),
            Some("positions")
        );
    }

    /// `[expected] x` is E + P as the sources print it: never a matrix some operation makes
    /// from it on the way to the projections.
    #[test]
    fn the_x_figure_is_the_embeddings_with_their_positions_added() {
        for plan in Shape::every().into_iter().map(Plan::new) {
            for (x, embeddings, positions) in [
                (MatrixName::X, MatrixName::Embeddings, MatrixName::Positions),
                (
                    MatrixName::SourceX,
                    MatrixName::SourceEmbeddings,
                    MatrixName::SourcePositions,
                ),
            ] {
                let source = plan.figure_source(x);
                let added = ops::Add {
                    left: embeddings,
                    right: positions,
                };
                match plan.origin(source) {
                    None => assert!(!plan.has(embeddings), "{:?}", plan.shape),
                    Some(Op::Input(_)) => assert_eq!(source, embeddings, "{:?}", plan.shape),
                    Some(Op::Add(add)) => assert_eq!(add, added, "{:?}", plan.shape),
                    other => panic!("{x:?} is read from {other:?} in {:?}", plan.shape),
                }
            }
        }
    }

    /// The projection's words and formula name what the plan multiplies by the weights, so a
    /// step put before the projections is named there too.
    #[test]
    fn the_projection_names_what_the_plan_projects() {
        use crate::pipeline::{Header, Step};
        for plan in Shape::every().into_iter().map(Plan::new) {
            let (Some(x), Some(s)) = (plan.projected_input(), plan.projected_source()) else {
                continue;
            };
            let (x, s) = (plan.symbol(x), plan.symbol(s));
            let words = Step::Projection.narration(&plan);
            let Header::Attention { one_head, .. } = Step::Projection.entry().header else {
                panic!("Projection is a step of attention as a whole");
            };
            let formula: String = one_head(&plan)
                .definitions
                .iter()
                .map(|piece| piece.text.as_ref())
                .collect();
            for said in [words.as_ref(), formula.as_str()] {
                assert!(
                    said.contains(&format!("Q = {x}·W_q"))
                        || said.contains(&format!("Q, K, V = {x}·W_q")),
                    "{said}"
                );
                assert!(said.contains(&format!("{s}·W_k")), "{said}");
                assert!(said.contains(&format!("{s}·W_v")), "{said}");
            }
        }
    }

    #[test]
    fn every_step_and_every_matrix_is_in_some_shape_of_every_shape() {
        // A new step or matrix that `Shape::every()` never makes would leave every test that
        // walks the shapes blind to it (and a new Shape field unwired to the plan shows so).
        let plans: Vec<Plan> = Shape::every().into_iter().map(Plan::new).collect();
        for step in crate::pipeline::Step::ALL {
            assert!(
                plans
                    .iter()
                    .any(|plan| crate::pipeline::Step::all_in(plan).contains(&step)),
                "no shape of Shape::every() shows {step:?}"
            );
        }
        for name in MatrixName::ALL {
            assert!(
                plans.iter().any(|plan| plan.has(name)),
                "no shape of Shape::every() has {name:?}"
            );
        }
    }

    #[test]
    fn the_projections_read_what_the_plan_multiplies_by_their_weights() {
        for shape in Shape::every() {
            let plan = Plan::new(shape);
            if !shape.projected {
                assert_eq!(plan.projected_input(), None, "{shape:?}");
                continue;
            }
            let x = plan.projected_input().unwrap();
            assert!(
                plan.order().iter().position(|name| *name == x)
                    < plan.order().iter().position(|name| *name == MatrixName::Q)
            );
            // Made from the embeddings, whatever steps there are between.
            let mut lineage = vec![x];
            let mut index = 0;
            while let Some(&name) = lineage.get(index) {
                lineage.extend(
                    plan.origin(name)
                        .map(|op| op.operands())
                        .unwrap_or_default(),
                );
                index += 1;
            }
            assert!(
                lineage.contains(&MatrixName::Embeddings),
                "{x:?} is not made from the embeddings in {shape:?}"
            );
        }
        // An operation put between X and the projections (as a normalisation would be) is
        // what they read, with nothing else told.
        let mut plan = Plan::new(Shape::every()[0]);
        let between = MatrixName::Positions;
        for (product, weights) in [
            (MatrixName::Q, MatrixName::WQ),
            (MatrixName::K, MatrixName::WK),
        ] {
            plan.origins[product.index()] = Some(Op::Product(ops::Product {
                left: between,
                right: weights,
                transpose_right: false,
            }));
        }
        assert_eq!(plan.projected_input(), Some(between));
        assert_eq!(plan.projected_source(), Some(between));
    }

    #[test]
    fn each_input_has_the_gradient_its_backward_pass_makes_for_it_read_from_the_plan() {
        for shape in Shape::every() {
            let shape = Shape {
                backward: true,
                decode: false,
                ..shape
            };
            // A shape with no backward pass (yet) is no lesson's.
            if shape.refusal().is_some() {
                continue;
            }
            let plan = Plan::new(shape);
            let grouped = shape.heads.kv < shape.heads.query;
            let expect = |name: MatrixName, gradient: MatrixName| {
                if plan.has(name) {
                    assert_eq!(plan.gradient_of(name), Some(gradient), "{name:?} {shape:?}");
                }
            };
            expect(MatrixName::Q, MatrixName::DQ);
            expect(
                MatrixName::K,
                if grouped {
                    MatrixName::DKGroup
                } else {
                    MatrixName::DK
                },
            );
            expect(
                MatrixName::V,
                if grouped {
                    MatrixName::DVGroup
                } else {
                    MatrixName::DV
                },
            );
            expect(MatrixName::WQ, MatrixName::DWQ);
            expect(MatrixName::WO, MatrixName::DWO);
            // X = E + P: the embeddings and the positions share X's gradient; in
            // cross-attention X reaches the loss through Q alone.
            let x_gradient = if shape.cross {
                MatrixName::DXQ
            } else {
                MatrixName::DX
            };
            expect(MatrixName::Embeddings, x_gradient);
            if shape.positions == Positions::Learned {
                expect(MatrixName::Positions, x_gradient);
            }
            expect(MatrixName::SourceEmbeddings, MatrixName::DSource);
        }
        // Without a backward pass nothing has a gradient.
        let plan = Plan::new(Shape::every()[0]);
        assert_eq!(plan.gradient_of(MatrixName::WQ), None);
    }

    /// A head is counted from 1 in superscript digits, whatever its number of digits.
    #[test]
    fn a_heads_superscript_counts_it_from_one() {
        assert_eq!(head_superscript(0), "⁽¹⁾");
        assert_eq!(head_superscript(8), "⁽⁹⁾");
        assert_eq!(head_superscript(9), "⁽¹⁰⁾");
        assert_eq!(head_superscript(99), "⁽¹⁰⁰⁾");
        assert_eq!(head_superscript(1233), "⁽¹²³⁴⁾");
    }
}
