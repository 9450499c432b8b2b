//! The attention-only model's weights, laid out and named as GPT-2 stores them, so that
//! `checkpoint` reads the file the trainer writes as it reads GPT-2's: x = wte[token] +
//! wpe[position]; each layer adds its attention (c_attn: x·W + b split into Q | K | V, heads of
//! d_model / heads columns, causal softmax(Q·Kᵀ/√d_head)·V, concat, c_proj: ·W + b); logits
//! are x · lm_headᵀ. No norm, no MLP.

use nalgebra::{DMatrix, RealField};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::config::{LAYERS, ModelShape};

/// The numbers a model is computed in: f32 to train, f64 to check its gradients against
/// finite differences.
pub trait Real: RealField + Copy {
    fn of_f64(value: f64) -> Self;
    fn as_f64(self) -> f64;
}

impl Real for f32 {
    fn of_f64(value: f64) -> f32 {
        value as f32
    }
    fn as_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    fn of_f64(value: f64) -> f64 {
        value
    }
    fn as_f64(self) -> f64 {
        self
    }
}

/// One layer's attention. Weights are [in, out] as GPT-2's Conv1D stores them, used as x · W;
/// a bias is a 1 × n row, added to each token's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer<T: Real> {
    /// d_model × 3·d_model: Q's columns, then K's, then V's; head h takes columns
    /// h·d_head … (h+1)·d_head − 1 of each.
    pub c_attn_weight: DMatrix<T>,
    /// 1 × 3·d_model.
    pub c_attn_bias: DMatrix<T>,
    /// d_model × d_model: the heads' concat back into the stream (W_O).
    pub c_proj_weight: DMatrix<T>,
    /// 1 × d_model.
    pub c_proj_bias: DMatrix<T>,
}

/// The whole model's weights; its gradients have the same form.
#[derive(Debug, Clone, PartialEq)]
pub struct Model<T: Real> {
    pub shape: ModelShape,
    /// vocabulary × d_model: each symbol's row.
    pub wte: DMatrix<T>,
    /// context × d_model: each position's row.
    pub wpe: DMatrix<T>,
    pub layers: Vec<Layer<T>>,
    /// vocabulary × d_model, its own weights (not wte's): logits = x · lm_headᵀ.
    pub lm_head: DMatrix<T>,
}

/// GPT-2's initial spread of every weight but the embeddings.
const INIT_STD: f64 = 0.02;

/// The embeddings' initial spread: 1, as PyTorch's `nn.Embedding` starts, not GPT-2's 0.02.
/// GPT-2's LayerNorm rescales its tiny embeddings to unit spread before each layer reads them;
/// this model has no norm, and with 0.02 its attention starts uniform and stays there long:
/// over seeds 0 to 3 of the default run, the best induction score on fresh sequences first
/// passed 0.5 at steps 1,500 to 1,900 (3,000 steps: scores 0.59 to 0.72, second half's loss
/// 0.18 to 0.30 of the first's), against 450 to 950 with embeddings of spread 1 (scores 0.66
/// to 0.88, ratios 0.08 to 0.16, and a layer-0 head attending 0.96 to 0.99 to the previous
/// token), which is where the PyTorch reference run put its phase change.
const EMBEDDING_STD: f64 = 1.0;

impl<T: Real> Model<T> {
    /// A model of `shape` initialised as GPT-2 is but for its embeddings (`EMBEDDING_STD`):
    /// wte and wpe from N(0, 1); c_attn and lm_head from N(0, 0.02²); c_proj from N(0, 0.02²)
    /// scaled by 1/√(2·layers) (each layer adds to the stream, and the stream's spread should
    /// not grow with them); biases 0. Drawn from ChaCha stream 0 of `seed`, tensor by tensor in
    /// the order `tensors` lists them, each row by row.
    pub fn init(shape: ModelShape, seed: u64) -> Model<T> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut model = Model::zeros(shape);
        let proj_std = INIT_STD / (2.0 * LAYERS as f64).sqrt();
        for tensor in model.tensors_mut() {
            let name = tensor.name.as_str();
            let std = if name.ends_with(".bias") {
                continue;
            } else if name == "wte.weight" || name == "wpe.weight" {
                EMBEDDING_STD
            } else if name.ends_with("c_proj.weight") {
                proj_std
            } else {
                INIT_STD
            };
            let normal = Normal::new(0.0, std).unwrap_or_else(|_| unreachable!("a finite spread"));
            let (rows, columns) = tensor.values.shape();
            for row in 0..rows {
                for column in 0..columns {
                    tensor.values[(row, column)] = T::of_f64(normal.sample(&mut rng));
                }
            }
        }
        model
    }

    /// A model of `shape` whose every number is 0: the start of a sum of gradients.
    pub fn zeros(shape: ModelShape) -> Model<T> {
        let d = shape.d_model;
        let layer = Layer {
            c_attn_weight: DMatrix::zeros(d, 3 * d),
            c_attn_bias: DMatrix::zeros(1, 3 * d),
            c_proj_weight: DMatrix::zeros(d, d),
            c_proj_bias: DMatrix::zeros(1, d),
        };
        Model {
            shape,
            wte: DMatrix::zeros(shape.vocabulary, d),
            wpe: DMatrix::zeros(shape.context, d),
            layers: vec![layer; LAYERS],
            lm_head: DMatrix::zeros(shape.vocabulary, d),
        }
    }

    /// Every tensor with its GPT-2 name and the shape a checkpoint stores it in (a bias is
    /// [n]), in one fixed order: wte, wpe, each layer's c_attn and c_proj, lm_head.
    pub fn tensors(&self) -> Vec<Tensor<'_, T>> {
        let mut tensors = vec![
            Tensor::matrix("wte.weight", &self.wte),
            Tensor::matrix("wpe.weight", &self.wpe),
        ];
        for (index, layer) in self.layers.iter().enumerate() {
            let name = |rest: &str| format!("h.{index}.attn.{rest}");
            tensors.extend([
                Tensor::matrix(name("c_attn.weight"), &layer.c_attn_weight),
                Tensor::vector(name("c_attn.bias"), &layer.c_attn_bias),
                Tensor::matrix(name("c_proj.weight"), &layer.c_proj_weight),
                Tensor::vector(name("c_proj.bias"), &layer.c_proj_bias),
            ]);
        }
        tensors.push(Tensor::matrix("lm_head.weight", &self.lm_head));
        tensors
    }

    /// `tensors`, writable, in the same order.
    pub fn tensors_mut(&mut self) -> Vec<TensorMut<'_, T>> {
        let mut tensors = vec![
            TensorMut::new("wte.weight", &mut self.wte),
            TensorMut::new("wpe.weight", &mut self.wpe),
        ];
        for (index, layer) in self.layers.iter_mut().enumerate() {
            let name = |rest: &str| format!("h.{index}.attn.{rest}");
            tensors.extend([
                TensorMut::new(name("c_attn.weight"), &mut layer.c_attn_weight),
                TensorMut::new(name("c_attn.bias"), &mut layer.c_attn_bias),
                TensorMut::new(name("c_proj.weight"), &mut layer.c_proj_weight),
                TensorMut::new(name("c_proj.bias"), &mut layer.c_proj_bias),
            ]);
        }
        tensors.push(TensorMut::new("lm_head.weight", &mut self.lm_head));
        tensors
    }

    /// The same model in other numbers (f32 → f64 is exact).
    pub fn cast<U: Real>(&self) -> Model<U> {
        let cast = |matrix: &DMatrix<T>| matrix.map(|value| U::of_f64(value.as_f64()));
        Model {
            shape: self.shape,
            wte: cast(&self.wte),
            wpe: cast(&self.wpe),
            layers: self
                .layers
                .iter()
                .map(|layer| Layer {
                    c_attn_weight: cast(&layer.c_attn_weight),
                    c_attn_bias: cast(&layer.c_attn_bias),
                    c_proj_weight: cast(&layer.c_proj_weight),
                    c_proj_bias: cast(&layer.c_proj_bias),
                })
                .collect(),
            lm_head: cast(&self.lm_head),
        }
    }

    /// How many numbers the model has.
    pub fn parameter_count(&self) -> usize {
        self.tensors()
            .iter()
            .map(|tensor| tensor.values.len())
            .sum()
    }
}

/// One tensor of a model, read.
#[derive(Debug)]
pub struct Tensor<'a, T: Real> {
    /// GPT-2's name, such as `h.1.attn.c_attn.weight`.
    pub name: String,
    /// As a checkpoint stores it: [rows, columns], or [n] for a bias.
    pub shape: Vec<usize>,
    pub values: &'a DMatrix<T>,
}

impl<'a, T: Real> Tensor<'a, T> {
    fn matrix(name: impl Into<String>, values: &'a DMatrix<T>) -> Tensor<'a, T> {
        Tensor {
            name: name.into(),
            shape: vec![values.nrows(), values.ncols()],
            values,
        }
    }

    fn vector(name: impl Into<String>, values: &'a DMatrix<T>) -> Tensor<'a, T> {
        Tensor {
            name: name.into(),
            shape: vec![values.len()],
            values,
        }
    }

    /// The numbers row by row, as a checkpoint stores them.
    pub fn row_major(&self) -> Vec<T> {
        let (rows, columns) = self.values.shape();
        (0..rows)
            .flat_map(|row| (0..columns).map(move |column| self.values[(row, column)]))
            .collect()
    }
}

/// One tensor of a model, to change.
#[derive(Debug)]
pub struct TensorMut<'a, T: Real> {
    pub name: String,
    pub values: &'a mut DMatrix<T>,
}

impl<'a, T: Real> TensorMut<'a, T> {
    fn new(name: impl Into<String>, values: &'a mut DMatrix<T>) -> TensorMut<'a, T> {
        TensorMut {
            name: name.into(),
            values,
        }
    }

    /// Whether AdamW decays it: every weight matrix, no bias (see `TrainConfig`).
    pub fn decays(&self) -> bool {
        !self.name.ends_with(".bias")
    }
}
