//! The scaling lab: why scores are divided by √d_k. For each d_k of a sweep, many rows of one
//! query against `keys` keys, entries drawn from N(0, variance): the spread of the raw and the
//! scaled scores, and what the softmax of a row does with each (its largest weight, its entropy,
//! the size of its gradient). Raw scores spread like √d_k, and their softmax saturates to one
//! key with a vanishing gradient; scaled ones keep a spread of about the variance.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// The sweep's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The query and key widths tried.
    pub dims: Vec<usize>,
    /// Keys in each row (n).
    pub keys: usize,
    /// Rows (one query against `keys` keys) drawn for each d_k.
    pub samples: usize,
    pub seed: u64,
    /// The variance of every query and key entry.
    pub variance: f64,
}

/// The default sweep: d_k = 1, 2, 4, …, 1024; 16 keys; 256 rows each; seed 1; unit variance.
impl Default for Settings {
    fn default() -> Settings {
        Settings {
            dims: (0..=10).map(|power| 1 << power).collect(),
            keys: 16,
            samples: 256,
            seed: 1,
            variance: 1.0,
        }
    }
}

/// The largest d_k a sweep may try, keys in a row and rows per d_k: a sweep stays well under a
/// second.
pub(crate) const MAX_DIM: usize = 4096;
pub(crate) const MAX_KEYS: usize = 1024;
pub(crate) const MAX_SAMPLES: usize = 100_000;
/// How many query and key entries a whole sweep may draw.
pub(crate) const MAX_DRAWN: usize = 50_000_000;

impl Settings {
    /// What is wrong with the settings, said for the option that sets it; `None` when a sweep
    /// can run.
    pub fn problem(&self) -> Option<String> {
        if self.dims.is_empty() {
            return Some("--dims: give at least one d_k, like 1,2,4,8".to_string());
        }
        if let Some(bad) = self.dims.iter().find(|dim| !(1..=MAX_DIM).contains(*dim)) {
            return Some(format!("--dims: {bad} is not a d_k from 1 to {MAX_DIM}"));
        }
        if !(2..=MAX_KEYS).contains(&self.keys) {
            return Some(format!(
                "--keys: {} key{}; a row's softmax needs from 2 to {MAX_KEYS}",
                self.keys,
                if self.keys == 1 { "" } else { "s" }
            ));
        }
        if !(1..=MAX_SAMPLES).contains(&self.samples) {
            return Some(format!(
                "--samples: {} rows; from 1 to {MAX_SAMPLES} per d_k",
                self.samples
            ));
        }
        if !(self.variance.is_finite() && self.variance > 0.0 && self.variance <= 100.0) {
            return Some(format!(
                "--variance: {} is not a variance above 0 and at most 100",
                self.variance
            ));
        }
        let drawn: usize = self
            .dims
            .iter()
            .map(|dim| dim * (self.keys + 1) * self.samples)
            .sum();
        if drawn > MAX_DRAWN {
            return Some(format!(
                "the sweep would draw {drawn} numbers, more than {MAX_DRAWN}: fewer --samples, \
                 --keys or --dims"
            ));
        }
        None
    }
}

/// What a softmax of one row does, averaged over a d_k's rows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RowFigures {
    /// The standard deviation of the scores, over every score of every row.
    pub std: f64,
    /// The mean of each row's largest weight (1/n is even, 1 is one-hot).
    pub max_weight: f64,
    /// The mean of each row's entropy, in bits (log₂ n is even, 0 is one-hot).
    pub entropy: f64,
    /// The mean over rows of the mean of p(1 − p), the diagonal of the softmax's Jacobian: how
    /// much a weight still moves when its score does.
    pub gradient: f64,
}

/// One d_k of the sweep: its raw scores q·k and its scaled ones q·k / √d_k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub dim: usize,
    pub raw: RowFigures,
    pub scaled: RowFigures,
}

/// The whole sweep, one point per d_k, in the order of `Settings::dims`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub settings: Settings,
    pub points: Vec<Point>,
}

/// Runs the sweep, each d_k on its own stream of the seed, so a point's numbers do not depend
/// on which other d_k are swept, nor on the cores.
pub fn sweep(settings: &Settings) -> Sweep {
    let points = crate::parallel::each(settings.dims.len(), settings.dims.len() > 1, |index| {
        point(settings, settings.dims[index])
    });
    Sweep {
        settings: settings.clone(),
        points,
    }
}

/// One d_k: `samples` rows of a query against `keys` keys.
pub fn point(settings: &Settings, dim: usize) -> Point {
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    rng.set_stream(dim as u64);
    let normal = Normal::new(0.0, settings.variance.sqrt()).unwrap_or_else(|_| {
        // `Settings::problem` refuses a variance Normal would not take.
        Normal::new(0.0, 1.0).expect("unit normal")
    });
    let divisor = (dim as f64).sqrt();
    let (mut raw, mut scaled) = (Accumulator::default(), Accumulator::default());
    let mut query = vec![0.0; dim];
    let mut scores = vec![0.0; settings.keys];
    for _ in 0..settings.samples {
        for entry in &mut query {
            *entry = normal.sample(&mut rng);
        }
        for score in &mut scores {
            *score = query
                .iter()
                .map(|entry| entry * normal.sample(&mut rng))
                .sum();
        }
        raw.add_row(&scores);
        for score in &mut scores {
            *score /= divisor;
        }
        scaled.add_row(&scores);
    }
    Point {
        dim,
        raw: raw.figures(),
        scaled: scaled.figures(),
    }
}

/// The first row of d_k's sweep, softmaxed: a query against `keys` keys, its weights from the
/// raw scores and from the scaled ones, as the lab's screen draws them side by side.
pub fn sample_row(settings: &Settings, dim: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    rng.set_stream(dim as u64);
    let normal = Normal::new(0.0, settings.variance.sqrt())
        .unwrap_or_else(|_| Normal::new(0.0, 1.0).expect("unit normal"));
    let query: Vec<f64> = (0..dim).map(|_| normal.sample(&mut rng)).collect();
    let raw: Vec<f64> = (0..settings.keys)
        .map(|_| {
            query
                .iter()
                .map(|entry| entry * normal.sample(&mut rng))
                .sum()
        })
        .collect();
    let scaled: Vec<f64> = raw
        .iter()
        .map(|score| score / (dim as f64).sqrt())
        .collect();
    let softmax = |scores: &[f64]| -> Vec<f64> {
        crate::attention::softmax_rows(&nalgebra::DMatrix::from_row_slice(1, scores.len(), scores))
            .weights
            .iter()
            .copied()
            .collect()
    };
    (softmax(&raw), softmax(&scaled))
}

/// Sums over a d_k's rows, for the means and the standard deviation.
#[derive(Debug, Default)]
struct Accumulator {
    rows: usize,
    scores: usize,
    sum: f64,
    sum_of_squares: f64,
    max_weight: f64,
    entropy: f64,
    gradient: f64,
}

impl Accumulator {
    fn add_row(&mut self, scores: &[f64]) {
        self.rows += 1;
        self.scores += scores.len();
        self.sum += scores.iter().sum::<f64>();
        self.sum_of_squares += scores.iter().map(|score| score * score).sum::<f64>();
        let weights = crate::attention::softmax_rows(&nalgebra::DMatrix::from_row_slice(
            1,
            scores.len(),
            scores,
        ))
        .weights;
        self.max_weight += weights.iter().copied().fold(0.0, f64::max);
        self.entropy += crate::attention::entropy_bits(weights.iter().copied());
        self.gradient += weights
            .iter()
            .map(|weight| weight * (1.0 - weight))
            .sum::<f64>()
            / weights.len() as f64;
    }

    fn figures(&self) -> RowFigures {
        let (rows, scores) = (self.rows.max(1) as f64, self.scores.max(1) as f64);
        let mean = self.sum / scores;
        // The spread of the scores about their mean (which is near 0).
        let variance = (self.sum_of_squares / scores - mean * mean).max(0.0);
        RowFigures {
            std: variance.sqrt(),
            max_weight: self.max_weight / rows,
            entropy: self.entropy / rows,
            gradient: self.gradient / rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_even_row_has_the_most_entropy_and_one_hot_none() {
        let mut even = Accumulator::default();
        even.add_row(&[0.0; 16]);
        let figures = even.figures();
        assert!((figures.entropy - 4.0).abs() < 1e-12);
        assert!((figures.max_weight - 1.0 / 16.0).abs() < 1e-12);
        let mut one_hot = Accumulator::default();
        one_hot.add_row(&[0.0, 1e4, 0.0, 0.0]);
        let figures = one_hot.figures();
        assert_eq!(figures.max_weight, 1.0);
        assert_eq!(figures.entropy, 0.0);
        assert_eq!(figures.gradient, 0.0);
    }
}
