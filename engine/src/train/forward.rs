//! The model run forward on a batch, every sequence at once: each linear map is one product
//! over all the batch's tokens (sequences × tokens rows), each head's attention one small
//! product per sequence. Everything the backward pass needs is kept: the stream entering each
//! layer, each layer's Q | K | V, every head's attention pattern and the heads' concat.

use nalgebra::DMatrix;

use super::config::LAYERS;
use super::model::{Model, Real};

/// A forward pass and what its backward pass reads. Rows are the batch's tokens, one sequence
/// after another: row `sequence · tokens + position`.
#[derive(Debug, Clone)]
pub struct Forward<T: Real> {
    pub sequences: usize,
    /// Tokens in each sequence.
    pub tokens: usize,
    /// The token ids read, sequence after sequence.
    pub inputs: Vec<usize>,
    /// `streams[l]`: the residual stream entering layer l (rows × d_model); the last is the
    /// stream after the last layer, which the unembedding reads.
    pub streams: Vec<DMatrix<T>>,
    /// Each layer's x · c_attn + bias (rows × 3·d_model): Q | K | V.
    pub(crate) qkv: Vec<DMatrix<T>>,
    /// `patterns[l][sequence · heads + head]`: that head's attention weights on that sequence
    /// (tokens × tokens, a row for each query, 0 above the diagonal).
    pub patterns: Vec<Vec<DMatrix<T>>>,
    /// Each layer's heads' outputs side by side, before c_proj (rows × d_model).
    pub(crate) concat: Vec<DMatrix<T>>,
    /// rows × vocabulary.
    pub logits: DMatrix<T>,
    heads: usize,
}

impl<T: Real> Forward<T> {
    /// Head `head` of layer `layer` on sequence `sequence`: tokens × tokens.
    pub fn pattern(&self, layer: usize, sequence: usize, head: usize) -> &DMatrix<T> {
        &self.patterns[layer][sequence * self.heads + head]
    }

    /// Each row's cross-entropy: −log of the probability it gives its target.
    pub fn token_losses(&self, targets: &[usize]) -> Vec<T> {
        assert_eq!(
            targets.len(),
            self.logits.nrows(),
            "a target for each token"
        );
        targets
            .iter()
            .enumerate()
            .map(|(row, &target)| {
                let logits = self.logits.row(row);
                let most = logits.max();
                let total = logits
                    .iter()
                    .fold(T::zero(), |sum, &logit| sum + (logit - most).exp());
                total.ln() + most - logits[target]
            })
            .collect()
    }

    /// The mean of `token_losses`: the loss training lowers.
    pub fn loss(&self, targets: &[usize]) -> T {
        let losses = self.token_losses(targets);
        let count = T::of_f64(losses.len() as f64);
        losses.into_iter().fold(T::zero(), |sum, loss| sum + loss) / count
    }
}

impl<T: Real> Model<T> {
    /// The forward pass on `sequences` sequences of equal length, their token ids one sequence
    /// after another in `inputs`. Panics on an id past the vocabulary or a sequence past the
    /// context: a batch is made for its model.
    pub fn forward(&self, inputs: &[usize], sequences: usize) -> Forward<T> {
        let shape = self.shape;
        let (d, heads, head_dim) = (shape.d_model, shape.heads, shape.head_dim());
        assert!(sequences > 0 && inputs.len().is_multiple_of(sequences));
        let tokens = inputs.len() / sequences;
        assert!(tokens <= shape.context, "a sequence fits the context");
        assert!(inputs.iter().all(|&id| id < shape.vocabulary));
        let rows = inputs.len();
        let mut x = DMatrix::from_fn(rows, d, |row, column| {
            self.wte[(inputs[row], column)] + self.wpe[(row % tokens, column)]
        });
        let scale = T::of_f64(1.0 / (head_dim as f64).sqrt());
        let mut streams = Vec::with_capacity(LAYERS + 1);
        let mut all_qkv = Vec::with_capacity(LAYERS);
        let mut all_patterns = Vec::with_capacity(LAYERS);
        let mut all_concat = Vec::with_capacity(LAYERS);
        for layer in &self.layers {
            let mut qkv = &x * &layer.c_attn_weight;
            add_bias(&mut qkv, &layer.c_attn_bias);
            let mut concat = DMatrix::zeros(rows, d);
            let mut patterns = Vec::with_capacity(sequences * heads);
            for sequence in 0..sequences {
                let first = sequence * tokens;
                for head in 0..heads {
                    let column = head * head_dim;
                    let q = qkv.view((first, column), (tokens, head_dim));
                    let k = qkv.view((first, d + column), (tokens, head_dim));
                    let v = qkv.view((first, 2 * d + column), (tokens, head_dim));
                    let mut pattern = q * k.transpose();
                    pattern *= scale;
                    causal_softmax(&mut pattern);
                    concat
                        .view_mut((first, column), (tokens, head_dim))
                        .copy_from(&(&pattern * v));
                    patterns.push(pattern);
                }
            }
            let mut added = &concat * &layer.c_proj_weight;
            add_bias(&mut added, &layer.c_proj_bias);
            streams.push(x.clone());
            x += added;
            all_qkv.push(qkv);
            all_patterns.push(patterns);
            all_concat.push(concat);
        }
        let logits = &x * self.lm_head.transpose();
        streams.push(x);
        Forward {
            sequences,
            tokens,
            inputs: inputs.to_vec(),
            streams,
            qkv: all_qkv,
            patterns: all_patterns,
            concat: all_concat,
            logits,
            heads,
        }
    }
}

/// Adds the 1 × columns row `bias` to every row of `m`, a column at a time (nalgebra keeps a
/// column's numbers together).
pub(crate) fn add_bias<T: Real>(m: &mut DMatrix<T>, bias: &DMatrix<T>) {
    for (mut column, &add) in m.column_iter_mut().zip(bias.iter()) {
        column.add_scalar_mut(add);
    }
}

/// Each row's softmax over the keys at or before its query; the keys after it weigh 0.
fn causal_softmax<T: Real>(scores: &mut DMatrix<T>) {
    for row in 0..scores.nrows() {
        let seen = (row + 1).min(scores.ncols());
        let most = (0..seen)
            .map(|column| scores[(row, column)])
            .fold(scores[(row, 0)], |most, score| most.max(score));
        let mut total = T::zero();
        for column in 0..scores.ncols() {
            let weight = if column < seen {
                (scores[(row, column)] - most).exp()
            } else {
                T::zero()
            };
            scores[(row, column)] = weight;
            total += weight;
        }
        for column in 0..seen {
            scores[(row, column)] /= total;
        }
    }
}

/// Each row's softmax (rows × columns): the probabilities the logits give.
pub(crate) fn softmax_rows<T: Real>(logits: &DMatrix<T>) -> DMatrix<T> {
    let mut out = logits.clone();
    for mut row in out.row_iter_mut() {
        let most = row.max();
        row.apply(|value| *value = (*value - most).exp());
        let total = row.sum();
        row /= total;
    }
    out
}
