//! What the training screen keeps of a run, bounded however long the run: its snapshots,
//! thinned evenly once they pass `MOST_SNAPSHOTS`, and each number logged per step (the loss, a
//! head's score) as a curve of at most `MOST_POINTS` points, neighbours merged as it grows. A
//! run of `MAX_STEPS` (1,000,000) holds no more than one of 13,000 steps does.

use std::sync::Arc;

use crate::train::{SNAPSHOT_EVERY, Snapshot};

/// The most snapshots kept. Past it every other one goes and the steps between them double, so
/// that 257 to 512 of them span the run evenly. That is still one or more for each column of
/// the charts on any terminal narrower than 274 columns (the charts are the width less 17), so
/// the scrubber can stop anywhere the charts show, and 26 to 52 presses of `PgUp` cross the run.
/// 512 of the default model's snapshots are 22 MB (42 KB of weights each), where a run of
/// 1,000,000 steps kept 40,001 (1.7 GB, and as much again while the trainer kept its own). The
/// default run (3,000 steps, 121 snapshots) is never thinned.
pub const MOST_SNAPSHOTS: usize = 512;

/// The snapshots the scrubber moves over, oldest first: step 0, every multiple of `every` that
/// came, and the newest (the run's last step, or the latest one between two multiples).
#[derive(Debug, Clone)]
pub struct Snapshots {
    every: usize,
    kept: Vec<Arc<Snapshot>>,
}

impl Default for Snapshots {
    fn default() -> Snapshots {
        Snapshots::new()
    }
}

impl Snapshots {
    /// None yet, one every `SNAPSHOT_EVERY` steps to keep.
    pub fn new() -> Snapshots {
        Snapshots {
            every: SNAPSHOT_EVERY,
            kept: Vec::new(),
        }
    }

    /// Steps between the snapshots kept: `SNAPSHOT_EVERY`, doubled at each thinning.
    pub fn every(&self) -> usize {
        self.every
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&Arc<Snapshot>> {
        self.kept.get(index)
    }

    pub fn last(&self) -> Option<&Arc<Snapshot>> {
        self.kept.last()
    }

    /// The steps of the snapshots kept, oldest first.
    pub fn steps(&self) -> impl Iterator<Item = usize> + '_ {
        self.kept.iter().map(|snapshot| snapshot.step)
    }

    /// Takes in the run's next snapshot (of a later step than any kept). The newest, kept only
    /// for being the newest, goes for it; past `MOST_SNAPSHOTS`, every other one goes.
    pub fn push(&mut self, snapshot: Arc<Snapshot>) {
        if self
            .kept
            .last()
            .is_some_and(|newest| !newest.step.is_multiple_of(self.every))
        {
            self.kept.pop();
        }
        self.kept.push(snapshot);
        if self.kept.len() > MOST_SNAPSHOTS {
            self.every *= 2;
            let (every, newest) = (self.every, self.kept.len() - 1);
            let mut index = 0;
            self.kept.retain(|snapshot| {
                let keep = snapshot.step.is_multiple_of(every) || index == newest;
                index += 1;
                keep
            });
        }
    }

    /// The index of the snapshot of `step`, if it is kept.
    pub fn position(&self, step: usize) -> Option<usize> {
        self.kept
            .binary_search_by_key(&step, |snapshot| snapshot.step)
            .ok()
    }

    /// The index of the snapshot kept nearest `step`, the earlier of two as near.
    pub fn nearest(&self, step: usize) -> Option<usize> {
        match self
            .kept
            .binary_search_by_key(&step, |snapshot| snapshot.step)
        {
            Ok(index) => Some(index),
            Err(0) => (!self.kept.is_empty()).then_some(0),
            Err(after) if after == self.kept.len() => Some(after - 1),
            Err(after) => {
                let before = after - 1;
                let earlier = step - self.kept[before].step;
                let later = self.kept[after].step - step;
                Some(if earlier <= later { before } else { after })
            }
        }
    }
}

/// The most points a curve keeps. Past it neighbouring points merge in pairs, each the mean of
/// twice the steps, so that 2,049 to 4,096 points span the run: several to each column of the
/// charts on any terminal, so that a column's mean is of its own steps but for a point at each
/// edge. The five curves of the default model (the loss and four heads) are 160 KB at most,
/// where a run of 1,000,000 steps kept each step's numbers (20 MB).
pub const MOST_POINTS: usize = 4096;

/// One number a run logs at each step, step 1 first, as the means of `span` steps at a time.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Steps each point is the mean of (the last may have fewer so far): 1 until the points
    /// pass `MOST_POINTS`, then doubled at each merge.
    span: usize,
    /// Each point's sum of its steps' numbers.
    sums: Vec<f64>,
    /// Steps taken in.
    steps: usize,
}

impl Default for Curve {
    fn default() -> Curve {
        Curve::new()
    }
}

impl Curve {
    pub fn new() -> Curve {
        Curve {
            span: 1,
            sums: Vec::new(),
            steps: 0,
        }
    }

    /// Steps taken in so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Steps each point is the mean of.
    pub fn span(&self) -> usize {
        self.span
    }

    /// Takes in the next step's number.
    pub fn push(&mut self, value: f32) {
        if self.steps.is_multiple_of(self.span) {
            if self.sums.len() == MOST_POINTS {
                self.sums = self.sums.chunks(2).map(|pair| pair.iter().sum()).collect();
                self.span *= 2;
            }
            self.sums.push(0.0);
        }
        if let Some(sum) = self.sums.last_mut() {
            *sum += f64::from(value);
        }
        self.steps += 1;
    }

    /// Each point, oldest first: its first and last step, and the mean of its steps' numbers.
    pub fn points(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.sums.iter().enumerate().map(|(index, sum)| {
            let first = index * self.span + 1;
            let last = ((index + 1) * self.span).min(self.steps);
            (first, last, sum / (last + 1 - first) as f64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::tiny;
    use super::*;
    use crate::train::Model;

    /// The snapshot of `step`, of a model too small to cost anything to copy.
    fn snapshot(step: usize, model: &Model<f32>) -> Arc<Snapshot> {
        Arc::new(Snapshot {
            step,
            model: model.clone(),
        })
    }

    /// The snapshots of a run of `steps` as its trainer makes them: step 0, every 25, the last.
    fn run_of(steps: usize) -> Snapshots {
        let model = tiny();
        let mut snapshots = Snapshots::new();
        for step in (0..=steps).filter(|step| step % SNAPSHOT_EVERY == 0 || *step == steps) {
            snapshots.push(snapshot(step, &model));
        }
        snapshots
    }

    #[test]
    fn up_to_the_most_every_snapshot_is_kept() {
        let snapshots = run_of(SNAPSHOT_EVERY * (MOST_SNAPSHOTS - 1));
        assert_eq!(snapshots.len(), MOST_SNAPSHOTS);
        assert_eq!(snapshots.every(), SNAPSHOT_EVERY);
        assert!(
            snapshots
                .steps()
                .eq((0..MOST_SNAPSHOTS).map(|index| index * SNAPSHOT_EVERY))
        );
    }

    #[test]
    fn past_the_most_the_snapshots_thin_evenly_from_step_0_to_the_newest() {
        for steps in [12_800, 12_801, 100_000, 1_000_000, 999_990] {
            let snapshots = run_of(steps);
            let kept: Vec<usize> = snapshots.steps().collect();
            assert!(
                (MOST_SNAPSHOTS / 2..=MOST_SNAPSHOTS).contains(&kept.len()),
                "{steps} steps: {} kept",
                kept.len()
            );
            assert_eq!(kept.first(), Some(&0));
            assert_eq!(kept.last(), Some(&steps), "the newest is kept");
            let every = snapshots.every();
            assert!(every > SNAPSHOT_EVERY);
            // Evenly: each after the first a multiple of `every` past the one before, but for
            // the newest, which may come sooner.
            let before_newest = &kept[..kept.len() - 1];
            for pair in before_newest.windows(2) {
                assert_eq!(pair[1] - pair[0], every, "{steps} steps: {pair:?}");
            }
            assert!(steps - before_newest.last().unwrap() <= every);
        }
    }

    #[test]
    fn a_newest_between_two_kept_goes_when_the_next_comes() {
        let model = tiny();
        let mut snapshots = run_of(SNAPSHOT_EVERY * MOST_SNAPSHOTS);
        assert_eq!(snapshots.every(), 2 * SNAPSHOT_EVERY);
        let newest = snapshots.last().unwrap().step;
        snapshots.push(snapshot(newest + SNAPSHOT_EVERY, &model));
        assert_eq!(snapshots.last().unwrap().step, newest + SNAPSHOT_EVERY);
        let length = snapshots.len();
        snapshots.push(snapshot(newest + 2 * SNAPSHOT_EVERY, &model));
        assert_eq!(snapshots.len(), length, "the one between went");
        assert_eq!(snapshots.position(newest + SNAPSHOT_EVERY), None);
        assert_eq!(
            snapshots.position(newest + 2 * SNAPSHOT_EVERY),
            Some(length - 1)
        );
    }

    #[test]
    fn the_nearest_snapshot_kept_is_the_earlier_of_two_as_near() {
        let model = tiny();
        let mut snapshots = Snapshots::new();
        assert_eq!(snapshots.nearest(10), None);
        for step in [0, 50, 100, 110] {
            snapshots.push(snapshot(step, &model));
        }
        // 110, off the steps of 25, is kept as the newest.
        assert_eq!(snapshots.steps().collect::<Vec<_>>(), [0, 50, 100, 110]);
        for (step, nearest) in [
            (0, 0),
            (24, 0),
            (25, 0),
            (26, 1),
            (75, 1),
            (104, 2),
            (106, 3),
        ] {
            assert_eq!(snapshots.nearest(step), Some(nearest), "step {step}");
        }
        assert_eq!(snapshots.nearest(500), Some(3));
    }

    #[test]
    fn a_curve_keeps_each_step_until_the_most_points_then_means_of_more() {
        let mut curve = Curve::new();
        for step in 1..=MOST_POINTS {
            curve.push(step as f32);
        }
        assert_eq!(curve.span(), 1);
        assert!(
            curve
                .points()
                .eq((1..=MOST_POINTS).map(|step| (step, step, step as f64)))
        );
        // 1,000,000 steps: 3,907 points of 256 steps (the last of 64).
        for step in MOST_POINTS + 1..=1_000_000 {
            curve.push(step as f32);
        }
        assert_eq!((curve.steps(), curve.span()), (1_000_000, 256));
        let points: Vec<(usize, usize, f64)> = curve.points().collect();
        assert_eq!(points.len(), 3907);
        assert!(points.len() <= MOST_POINTS);
        // Each point the mean of its steps' numbers (the step itself here), which run on
        // without a gap to the last.
        for (index, (first, last, mean)) in points.iter().enumerate() {
            assert_eq!(*first, index * 256 + 1);
            assert_eq!(*mean, (first + last) as f64 / 2.0, "{first}..={last}");
        }
        assert_eq!(points.last().map(|point| point.1), Some(1_000_000));
    }
}
