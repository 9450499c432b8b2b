//! FlashAttention-2's online softmax (Dao 2023): a head's output made one tile of keys at a
//! time, keeping per query row only a running maximum m, a running sum l and an unnormalised
//! output acc, so the whole row of scores is never held at once.
//!
//! Computed when asked, from the matrices the engine already has (the head's softmax input and
//! V): a lesson that never looks at it pays nothing. The engine's per-head view of it
//! (`crate::attention`'s `online_softmax`) is made from this.

use nalgebra::DMatrix;

use super::shifted_exp;
use crate::ops::OnlinePart;

/// The state of every query row after one tile of keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    /// The first key of the tile (0-based).
    pub first: usize,
    /// The last key of the tile (0-based, inclusive): `first + B - 1`, or the last key.
    pub last: usize,
    /// m before this tile, per query row: -inf before the first tile.
    pub max_before: Vec<f64>,
    /// m: the largest visible score of the row among the keys seen so far; -inf while every
    /// one of them is masked.
    pub max: Vec<f64>,
    /// The factor the old l and acc were multiplied by, per query row: e^(m_before − m) when
    /// this tile raised the maximum, `None` when it did not and nothing was multiplied (which
    /// is also what a row keeps while all its keys so far are masked: m stays -inf, and
    /// e^(−inf − (−inf)) is never formed). When the first visible key raises m from -inf the
    /// factor is e^(−inf) = 0, which multiplies the empty l = 0 and acc = 0.
    pub rescale: Vec<Option<f64>>,
    /// l: Σ e^(s_j − m) over the keys seen so far, per query row; 0 while all are masked.
    pub sum: Vec<f64>,
    /// acc: Σ e^(s_j − m)·v_j over the keys seen so far, one row of d_v per query row.
    pub acc: DMatrix<f64>,
}

impl Tile {
    /// Whether this tile raised query row `row`'s maximum, so its old l and acc were rescaled.
    pub fn rescaled(&self, row: usize) -> bool {
        self.rescale.get(row).is_some_and(Option::is_some)
    }

    /// The keys of the tile (0-based, inclusive).
    pub fn keys(&self) -> std::ops::RangeInclusive<usize> {
        self.first..=self.last
    }
}

/// One head's online softmax over tiles of `tile` keys: the head's softmax input (masked, else
/// scaled, else raw scores) and its values.
#[derive(Debug, Clone, Copy)]
pub struct OnlineSoftmax<'a> {
    /// Queries × keys: the same matrix the ordinary softmax reads.
    pub scores: &'a DMatrix<f64>,
    /// Keys × d_v: the head's values (its K/V group's).
    pub values: &'a DMatrix<f64>,
    /// Keys per tile, at least 1; a tile larger than the keys is one tile.
    pub tile: usize,
}

impl<'a> OnlineSoftmax<'a> {
    /// How many tiles the keys make.
    pub fn tile_count(&self) -> usize {
        self.scores.ncols().div_ceil(self.tile.max(1))
    }

    /// The state after each tile, in order, each computed from the one before: only one
    /// tile's state is held at a time.
    pub fn tiles(&self) -> Tiles<'a> {
        let rows = self.scores.nrows();
        Tiles {
            online: *self,
            next_key: 0,
            max_before: Vec::with_capacity(rows),
            max: vec![f64::NEG_INFINITY; rows],
            rescale: Vec::with_capacity(rows),
            sum: vec![0.0; rows],
            acc: DMatrix::zeros(rows, self.values.ncols()),
        }
    }

    /// The state after tile `index` (0-based), or `None` past the last tile: the tiles
    /// before it walked without copying their states.
    pub fn tile_at(&self, index: usize) -> Option<Tile> {
        self.part_at(index, |state| state.to_tile())
    }

    /// `f` of the state after tile `index`, the tiles before it walked without copying.
    pub(crate) fn part_at<T>(&self, index: usize, f: impl FnOnce(TileState<'_>) -> T) -> Option<T> {
        let mut tiles = self.tiles();
        for _ in 0..index {
            tiles.advance()?;
        }
        tiles.advance().map(f)
    }

    /// acc / l after the last tile: each query row's output. A row whose every key is masked
    /// has l = 0 and acc = 0, and its output is 0, as the ordinary softmax gives it.
    pub fn output(&self) -> DMatrix<f64> {
        let (rows, d_v) = (self.scores.nrows(), self.values.ncols());
        let mut tiles = self.tiles();
        while tiles.advance().is_some() {}
        if tiles.next_key == 0 {
            return DMatrix::zeros(rows, d_v);
        }
        DMatrix::from_fn(rows, d_v, |row, col| {
            if tiles.sum[row] > 0.0 {
                tiles.acc[(row, col)] / tiles.sum[row]
            } else {
                0.0
            }
        })
    }
}

/// The state after one tile read where the walk keeps it (`Tiles::advance`): what a `Tile`
/// holds, without its copies.
#[derive(Debug, Clone, Copy)]
pub struct TileState<'a> {
    pub first: usize,
    pub last: usize,
    pub max_before: &'a [f64],
    pub max: &'a [f64],
    pub rescale: &'a [Option<f64>],
    pub sum: &'a [f64],
    pub acc: &'a DMatrix<f64>,
}

impl TileState<'_> {
    /// One part of the state as a matrix, one row per query row: m, l and the rescale factor
    /// a column each (the factor 1 where nothing was rescaled), acc d_v columns.
    pub(crate) fn part(self, part: OnlinePart) -> DMatrix<f64> {
        let column = |values: &[f64]| DMatrix::from_column_slice(values.len(), 1, values);
        match part {
            OnlinePart::Max => column(self.max),
            OnlinePart::Sum => column(self.sum),
            OnlinePart::Rescale => {
                let factors: Vec<f64> = self.rescale.iter().map(|f| f.unwrap_or(1.0)).collect();
                column(&factors)
            }
            OnlinePart::Acc => self.acc.clone(),
        }
    }

    /// The state as a `Tile` of its own.
    pub(crate) fn to_tile(self) -> Tile {
        Tile {
            first: self.first,
            last: self.last,
            max_before: self.max_before.to_vec(),
            max: self.max.to_vec(),
            rescale: self.rescale.to_vec(),
            sum: self.sum.to_vec(),
            acc: self.acc.clone(),
        }
    }
}

/// The online softmax's tiles, one after another (`OnlineSoftmax::tiles`).
#[derive(Debug, Clone)]
pub struct Tiles<'a> {
    online: OnlineSoftmax<'a>,
    next_key: usize,
    max_before: Vec<f64>,
    max: Vec<f64>,
    rescale: Vec<Option<f64>>,
    sum: Vec<f64>,
    acc: DMatrix<f64>,
}

impl Iterator for Tiles<'_> {
    type Item = Tile;

    fn next(&mut self) -> Option<Tile> {
        self.advance().map(TileState::to_tile)
    }
}

impl Tiles<'_> {
    /// The next tile's state, read in place: one tile after another with nothing copied (a
    /// `Tile` per tile would copy acc, n × d_v numbers, each time).
    pub fn advance(&mut self) -> Option<TileState<'_>> {
        let OnlineSoftmax {
            scores,
            values,
            tile,
        } = self.online;
        let keys = scores.ncols();
        if self.next_key >= keys {
            return None;
        }
        let first = self.next_key;
        let last = (first + tile.max(1) - 1).min(keys - 1);
        self.next_key = last + 1;
        self.max_before.clone_from(&self.max);
        let rescale = &mut self.rescale;
        rescale.clear();
        rescale.resize(scores.nrows(), None);
        for row in 0..scores.nrows() {
            let old = self.max[row];
            // A masked key's -inf never raises the maximum.
            let new = (first..=last).fold(old, |max, key| max.max(scores[(row, key)]));
            if new > old {
                // Only when the maximum rises: old may be -inf (factor 0, on l = 0 and
                // acc = 0), new never is, so e^(−inf − (−inf)) cannot appear.
                let factor = (old - new).exp();
                self.sum[row] *= factor;
                self.acc.row_mut(row).scale_mut(factor);
                self.max[row] = new;
                rescale[row] = Some(factor);
            }
            for key in first..=last {
                // A masked key's e^(−inf) is exactly 0 and adds nothing (`shifted_exp`).
                let weight = shifted_exp(scores[(row, key)], self.max[row]);
                if weight == 0.0 {
                    continue;
                }
                self.sum[row] += weight;
                for col in 0..values.ncols() {
                    self.acc[(row, col)] += weight * values[(key, col)];
                }
            }
        }
        Some(TileState {
            first,
            last,
            max_before: &self.max_before,
            max: &self.max,
            rescale: &self.rescale,
            sum: &self.sum,
            acc: &self.acc,
        })
    }
}
