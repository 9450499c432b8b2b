//! What the model learns from: sequences of random symbols repeated twice (A B C … A B C …),
//! drawn by ChaCha from a seed, one half-length per batch.
//!
//! The draws are made in one order on one thread (the length, then each sequence's symbols),
//! so a seed gives the same batches on every run and every machine.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A batch: `sequences` sequences of the same `length` symbols, each followed by its repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Each sequence's 2 × `length` symbols, one sequence after another.
    pub symbols: Vec<usize>,
    pub sequences: usize,
    /// The symbols before the repeat (a sequence's half).
    pub length: usize,
}

impl Batch {
    /// `sequences` fresh sequences of half-length `length` over `vocabulary` symbols, drawn
    /// from `seed` (the scores' and losses' measurements use batches of their own).
    pub fn fresh(vocabulary: usize, length: usize, sequences: usize, seed: u64) -> Batch {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        draw(&mut rng, vocabulary, length, sequences)
    }

    /// A run's probe (the sequences its steps' scores are measured on): drawn from ChaCha
    /// stream 2 of the run's `seed`, apart from its weights' and its batches'.
    pub(crate) fn probe(vocabulary: usize, length: usize, sequences: usize, seed: u64) -> Batch {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(2);
        draw(&mut rng, vocabulary, length, sequences)
    }

    /// The tokens the model reads in each sequence: all but the last symbol.
    pub fn tokens(&self) -> usize {
        2 * self.length - 1
    }

    /// The model's input: each sequence without its last symbol (sequences × tokens ids).
    pub fn inputs(&self) -> Vec<usize> {
        self.sequence_iter()
            .flat_map(|sequence| &sequence[..sequence.len() - 1])
            .copied()
            .collect()
    }

    /// What each input position should predict: the symbol after it.
    pub fn targets(&self) -> Vec<usize> {
        self.sequence_iter()
            .flat_map(|sequence| &sequence[1..])
            .copied()
            .collect()
    }

    /// Sequence `index`'s symbols, its repeat included.
    pub fn sequence(&self, index: usize) -> &[usize] {
        let width = 2 * self.length;
        &self.symbols[index * width..(index + 1) * width]
    }

    fn sequence_iter(&self) -> impl Iterator<Item = &[usize]> {
        self.symbols.chunks_exact(2 * self.length)
    }
}

/// The training batches of a run, in order.
#[derive(Debug, Clone)]
pub struct Batches {
    rng: ChaCha8Rng,
    vocabulary: usize,
    sequences: usize,
    min_length: usize,
    max_length: usize,
}

impl Batches {
    /// Batches of `sequences` sequences over `vocabulary` symbols, each batch's half-length
    /// drawn from `min_length` to `max_length`. The draws use ChaCha stream 1 of `seed`, apart
    /// from the initial weights' stream 0: changing the model's sizes leaves the data as it is.
    pub fn new(
        seed: u64,
        vocabulary: usize,
        sequences: usize,
        min_length: usize,
        max_length: usize,
    ) -> Batches {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(1);
        Batches {
            rng,
            vocabulary,
            sequences,
            min_length,
            max_length,
        }
    }

    /// The next batch.
    pub fn next_batch(&mut self) -> Batch {
        let length = draw_below(&mut self.rng, self.max_length - self.min_length + 1);
        draw(
            &mut self.rng,
            self.vocabulary,
            self.min_length + length,
            self.sequences,
        )
    }
}

/// A whole number below `bound`, drawn from 32 bits: the same draw on every platform, whatever
/// its usize.
fn draw_below(rng: &mut ChaCha8Rng, bound: usize) -> usize {
    let bound = u32::try_from(bound).unwrap_or(u32::MAX);
    rng.random_range(0..bound) as usize
}

fn draw(rng: &mut ChaCha8Rng, vocabulary: usize, length: usize, sequences: usize) -> Batch {
    let mut symbols = Vec::with_capacity(sequences * 2 * length);
    for _ in 0..sequences {
        let start = symbols.len();
        for _ in 0..length {
            symbols.push(draw_below(rng, vocabulary));
        }
        symbols.extend_from_within(start..start + length);
    }
    Batch {
        symbols,
        sequences,
        length,
    }
}
