//! The gradient of the mean next-token cross-entropy with respect to every weight, by hand:
//! the attention backward pass the tutor explains (dV = Aᵀ·dO, dA = dO·Vᵀ, the softmax's
//! dS = A ⊙ (dA − rowsum(dA ⊙ A)), dQ = dS·K/√d, dK = dSᵀ·Q/√d), extended through c_proj and
//! c_attn, both layers and the residual stream between them, the unembedding and the
//! embeddings. One thread, in one order: a seed's run gives the same numbers every time.

use nalgebra::DMatrix;

use super::forward::{Forward, softmax_rows};
use super::model::{Model, Real};
use crate::ops::kernels::softmax_backward;

impl<T: Real> Model<T> {
    /// The batch's mean loss and its gradient with respect to every weight (a `Model` of
    /// gradients), with the forward pass it was computed from (its attention patterns give the
    /// step's scores).
    pub fn loss_and_gradients(
        &self,
        inputs: &[usize],
        targets: &[usize],
        sequences: usize,
    ) -> (T, Model<T>, Forward<T>) {
        let forward = self.forward(inputs, sequences);
        let (loss, gradients) = self.backward(&forward, targets);
        (loss, gradients, forward)
    }

    /// The mean loss of `forward` against `targets` and its gradients.
    pub fn backward(&self, forward: &Forward<T>, targets: &[usize]) -> (T, Model<T>) {
        let (loss, gradients, _) = self.backward_with_streams(forward, targets);
        (loss, gradients)
    }

    /// The gradient of the mean loss with respect to the residual stream leaving each layer
    /// (`[l]`: the stream after layer l has added its attention, rows × d_model): what layer
    /// l's output gets back from the loss through everything after it. It is the
    /// `grad_output` of layer l's lesson (`import`), whose backward steps then give this
    /// model's gradients of that layer's weights.
    pub fn stream_gradients(&self, forward: &Forward<T>, targets: &[usize]) -> Vec<DMatrix<T>> {
        self.backward_with_streams(forward, targets).2
    }

    /// `backward`, with `stream_gradients`.
    fn backward_with_streams(
        &self,
        forward: &Forward<T>,
        targets: &[usize],
    ) -> (T, Model<T>, Vec<DMatrix<T>>) {
        let shape = self.shape;
        let (d, heads, head_dim) = (shape.d_model, shape.heads, shape.head_dim());
        let (sequences, tokens) = (forward.sequences, forward.tokens);
        let rows = sequences * tokens;
        let loss = forward.loss(targets);
        let mut gradients = Model::zeros(shape);

        // The loss is the mean over rows of −log softmax(logits)[target]: its gradient on the
        // logits is (softmax − one-hot(target)) / rows.
        let mut d_logits = softmax_rows(&forward.logits);
        for (row, &target) in targets.iter().enumerate() {
            d_logits[(row, target)] -= T::one();
        }
        d_logits /= T::of_f64(rows as f64);
        // logits = x · lm_headᵀ.
        let last = &forward.streams[self.layers.len()];
        gradients.lm_head = d_logits.transpose() * last;
        let mut dx = &d_logits * &self.lm_head;

        let scale = T::of_f64(1.0 / (head_dim as f64).sqrt());
        let mut streams = Vec::with_capacity(self.layers.len());
        for (index, layer) in self.layers.iter().enumerate().rev() {
            // dL/d(the stream leaving this layer), before the layer's own part is added.
            streams.push(dx.clone());
            let x = &forward.streams[index];
            let qkv = &forward.qkv[index];
            // x_next = x + concat · c_proj + bias: dx passes on unchanged (the residual), and
            // into the attention.
            let grads = &mut gradients.layers[index];
            grads.c_proj_weight = forward.concat[index].transpose() * &dx;
            grads.c_proj_bias = column_sums(&dx);
            let d_concat = &dx * layer.c_proj_weight.transpose();
            let mut d_qkv = DMatrix::zeros(rows, 3 * d);
            for sequence in 0..sequences {
                let first = sequence * tokens;
                for head in 0..heads {
                    let column = head * head_dim;
                    let pattern = forward.pattern(index, sequence, head);
                    let q = qkv.view((first, column), (tokens, head_dim));
                    let k = qkv.view((first, d + column), (tokens, head_dim));
                    let v = qkv.view((first, 2 * d + column), (tokens, head_dim));
                    let d_out = d_concat.view((first, column), (tokens, head_dim));
                    // out = A · V.
                    let d_pattern = d_out * v.transpose();
                    let d_v = pattern.transpose() * d_out;
                    // A = softmax(S) by row, through the kernel the tutor's Backward: softmax
                    // step computes with; a masked weight is 0, so its dS is 0 too. Then the
                    // scaling's: S was Q·Kᵀ / √d_head.
                    let mut d_scores = softmax_backward(pattern, &d_pattern);
                    d_scores *= scale;
                    // S = Q · Kᵀ / √d_head (the scale is in d_scores).
                    let d_q = &d_scores * k;
                    let d_k = d_scores.transpose() * q;
                    d_qkv
                        .view_mut((first, column), (tokens, head_dim))
                        .copy_from(&d_q);
                    d_qkv
                        .view_mut((first, d + column), (tokens, head_dim))
                        .copy_from(&d_k);
                    d_qkv
                        .view_mut((first, 2 * d + column), (tokens, head_dim))
                        .copy_from(&d_v);
                }
            }
            // qkv = x · c_attn + bias.
            grads.c_attn_weight = x.transpose() * &d_qkv;
            grads.c_attn_bias = column_sums(&d_qkv);
            dx += &d_qkv * layer.c_attn_weight.transpose();
        }

        // x = wte[token] + wpe[position]: each row's gradient goes to its symbol's and its
        // position's rows, summed a column at a time in row order.
        for column in 0..d {
            for row in 0..rows {
                let grad = dx[(row, column)];
                gradients.wte[(forward.inputs[row], column)] += grad;
                gradients.wpe[(row % tokens, column)] += grad;
            }
        }
        streams.reverse();
        (loss, gradients, streams)
    }
}

/// A 1 × columns row of each column's sum: a bias's gradient, which every row shares.
fn column_sums<T: Real>(m: &DMatrix<T>) -> DMatrix<T> {
    DMatrix::from_iterator(1, m.ncols(), m.column_iter().map(|column| column.sum()))
}
