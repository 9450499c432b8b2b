//! The scaling lab on screen: the sweep over d_k, the d_k chosen, and one row of that d_k
//! softmaxed raw and scaled. Keys choose the d_k, halve or double the keys and draw again.
//!
//! A key only changes the settings; the sweep is run when the screen is drawn. A thousand `r`
//! typed faster than the screen is drawn then cost one sweep, not a thousand (in a class, a
//! student's backlog of keys is worked off between frames).

use std::sync::OnceLock;

use crate::lab::scaling::{Settings, Sweep, sample_row, sweep};

/// The most keys in a row on the screen: its row of bars has a column per key, and a sweep of
/// more takes seconds (the command line takes up to `scaling::MAX_KEYS`).
pub const SCREEN_MAX_KEYS: usize = 64;

/// The lab's state.
#[derive(Debug, Clone)]
pub struct LabScreen {
    settings: Settings,
    /// The index in the sweep's d_k of the one whose row is shown.
    pub chosen: usize,
    /// The sweep of `settings`, run when first looked at.
    sweep: OnceLock<Sweep>,
    /// The chosen d_k's first row, made when first looked at: its weights from raw and from
    /// scaled scores.
    row: OnceLock<(Vec<f64>, Vec<f64>)>,
}

/// Two screens are the same when they show the same settings and d_k, run yet or not.
impl PartialEq for LabScreen {
    fn eq(&self, other: &LabScreen) -> bool {
        self.settings == other.settings && self.chosen == other.chosen
    }
}

impl LabScreen {
    /// The default sweep, with d_k = 64 chosen (a head's width in many models).
    pub(crate) fn open() -> LabScreen {
        let settings = Settings::default();
        let chosen = settings.dims.iter().position(|dim| *dim == 64).unwrap_or(0);
        LabScreen::with(settings, chosen)
    }

    fn with(settings: Settings, chosen: usize) -> LabScreen {
        let chosen = chosen.min(settings.dims.len().saturating_sub(1));
        LabScreen {
            settings,
            chosen,
            sweep: OnceLock::new(),
            row: OnceLock::new(),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The sweep of the settings, run the first time it is asked for.
    pub fn sweep(&self) -> &Sweep {
        self.sweep.get_or_init(|| sweep(&self.settings))
    }

    /// The chosen d_k's first row, softmaxed from raw and from scaled scores.
    pub fn row(&self) -> &(Vec<f64>, Vec<f64>) {
        self.row
            .get_or_init(|| sample_row(&self.settings, self.dim()))
    }

    /// The d_k whose row is shown.
    pub fn dim(&self) -> usize {
        self.settings().dims[self.chosen]
    }

    /// The next (or previous) d_k of the sweep; `false` at either end.
    pub(crate) fn choose(&mut self, forwards: bool) -> bool {
        let next = if forwards {
            self.chosen + 1
        } else {
            match self.chosen.checked_sub(1) {
                Some(next) => next,
                None => return false,
            }
        };
        if next >= self.settings().dims.len() {
            return false;
        }
        self.chosen = next;
        self.row = OnceLock::new();
        true
    }

    /// Twice (or half) the keys in a row, from 2 to `SCREEN_MAX_KEYS`; `false` at the limit.
    pub(crate) fn change_keys(&mut self, more: bool) -> bool {
        let keys = self.settings().keys;
        let next = if more { keys * 2 } else { keys / 2 };
        if !(2..=SCREEN_MAX_KEYS).contains(&next) {
            return false;
        }
        self.settings.keys = next;
        *self = LabScreen::with(self.settings.clone(), self.chosen);
        true
    }

    /// The whole sweep drawn again with the next seed.
    pub(crate) fn reseed(&mut self) {
        self.settings.seed = self.settings.seed.wrapping_add(1);
        *self = LabScreen::with(self.settings.clone(), self.chosen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thousand_redraws_run_one_sweep_when_drawn_and_count_every_seed() {
        let mut lab = LabScreen::open();
        for _ in 0..1000 {
            lab.reseed();
            lab.change_keys(true);
            lab.change_keys(false);
            lab.choose(true);
            lab.choose(false);
        }
        assert!(lab.sweep.get().is_none(), "no key ran the sweep");
        assert!(lab.row.get().is_none());
        assert_eq!(lab.settings().seed, 1001);
        let settings = lab.settings().clone();
        assert_eq!(*lab.sweep(), sweep(&settings));
        assert_eq!(*lab.row(), sample_row(&settings, 64));
    }
}
