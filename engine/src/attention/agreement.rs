//! How closely two computations of the same numbers agree: a step of generation against the
//! whole causal pass, the online softmax against the ordinary one.

/// The largest difference between two computations of the same numbers, and whether they
/// agree: within a billionth of the largest number compared (sums taken in another order round
/// differently; a different computation differs by far more).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    pub largest_difference: f64,
    pub agrees: bool,
}

/// Pairs of numbers compared one by one, for an `Agreement`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Comparison {
    largest_difference: f64,
    largest: f64,
}

impl Comparison {
    /// One number of each computation.
    pub(super) fn pair(&mut self, mine: f64, theirs: f64) {
        self.largest_difference = self.largest_difference.max((mine - theirs).abs());
        self.largest = self.largest.max(mine.abs()).max(theirs.abs());
    }

    pub(super) fn agreement(self) -> Agreement {
        Agreement {
            largest_difference: self.largest_difference,
            agrees: self.largest_difference <= 1e-9 * self.largest.max(1.0),
        }
    }
}

impl Agreement {
    /// Two computations whose numbers do not even have the same shape.
    pub(super) const SHAPES_DIFFER: Agreement = Agreement {
        largest_difference: f64::INFINITY,
        agrees: false,
    };
}
