//! AdamW as PyTorch's `torch.optim.AdamW` computes it: decay the weight by lr·λ, then move it
//! by lr · m̂ / (√v̂ + ε), m and v the running means of the gradient and of its square, m̂ and v̂
//! corrected for starting at 0.

use nalgebra::DMatrix;

use super::model::{Model, Real};

/// AdamW's settings and its running means, one pair for each tensor of the model.
#[derive(Debug, Clone)]
pub struct AdamW<T: Real> {
    pub learning_rate: f64,
    pub betas: (f64, f64),
    pub epsilon: f64,
    pub weight_decay: f64,
    /// Updates made so far.
    steps: u32,
    /// The running mean of each tensor's gradient (m), in `Model::tensors`' order.
    first: Vec<DMatrix<T>>,
    /// The running mean of each tensor's squared gradient (v).
    second: Vec<DMatrix<T>>,
}

impl<T: Real> AdamW<T> {
    /// An optimizer for `model`, its running means 0.
    pub fn new(
        model: &Model<T>,
        learning_rate: f64,
        betas: (f64, f64),
        epsilon: f64,
        weight_decay: f64,
    ) -> AdamW<T> {
        let zeros: Vec<DMatrix<T>> = model
            .tensors()
            .iter()
            .map(|tensor| DMatrix::zeros(tensor.values.nrows(), tensor.values.ncols()))
            .collect();
        AdamW {
            learning_rate,
            betas,
            epsilon,
            weight_decay,
            steps: 0,
            first: zeros.clone(),
            second: zeros,
        }
    }

    /// One update of `model` by `gradients` (of the same shape).
    pub fn step(&mut self, model: &mut Model<T>, gradients: &Model<T>) {
        self.steps = self.steps.saturating_add(1);
        let (beta1, beta2) = self.betas;
        // The corrections for m and v starting at 0, in f64: β₂ᵗ for small t is 1 − tiny.
        let correction1 = 1.0 - beta1.powi(self.steps.min(i32::MAX as u32) as i32);
        let correction2 = 1.0 - beta2.powi(self.steps.min(i32::MAX as u32) as i32);
        let step_size = T::of_f64(self.learning_rate / correction1);
        let root_correction2 = T::of_f64(correction2.sqrt());
        let shrink = T::of_f64(1.0 - self.learning_rate * self.weight_decay);
        let (beta1, beta2) = (T::of_f64(beta1), T::of_f64(beta2));
        let (one, epsilon) = (T::one(), T::of_f64(self.epsilon));
        let grads = gradients.tensors();
        for (((tensor, grad), first), second) in model
            .tensors_mut()
            .into_iter()
            .zip(&grads)
            .zip(&mut self.first)
            .zip(&mut self.second)
        {
            let decays = tensor.decays();
            for (((weight, &g), m), v) in tensor
                .values
                .iter_mut()
                .zip(grad.values.iter())
                .zip(first.iter_mut())
                .zip(second.iter_mut())
            {
                if decays {
                    *weight *= shrink;
                }
                *m = beta1 * *m + (one - beta1) * g;
                *v = beta2 * *v + (one - beta2) * g * g;
                let denominator = v.sqrt() / root_correction2 + epsilon;
                *weight -= step_size * *m / denominator;
            }
        }
    }
}
