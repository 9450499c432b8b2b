//! The scaling lab on screen: the sweep over d_k, the d_k chosen, and one row of that d_k
//! softmaxed raw and scaled. Keys choose the d_k, halve or double the keys and draw again.

use crate::lab::scaling::{Settings, Sweep, sample_row, sweep};

/// The most keys in a row on the screen: its row of bars has a column per key, and a sweep of
/// more takes seconds (the command line takes up to `scaling::MAX_KEYS`).
pub const SCREEN_MAX_KEYS: usize = 64;

/// The lab's state.
#[derive(Debug, Clone, PartialEq)]
pub struct LabScreen {
    pub sweep: Sweep,
    /// The index in the sweep's d_k of the one whose row is shown.
    pub chosen: usize,
    /// That d_k's first row: its weights from raw and from scaled scores.
    pub row: (Vec<f64>, Vec<f64>),
}

impl LabScreen {
    /// The default sweep, with d_k = 64 chosen (a head's width in many models).
    pub fn open() -> LabScreen {
        let settings = Settings::default();
        let chosen = settings.dims.iter().position(|dim| *dim == 64).unwrap_or(0);
        LabScreen::with(settings, chosen)
    }

    fn with(settings: Settings, chosen: usize) -> LabScreen {
        let sweep = sweep(&settings);
        let chosen = chosen.min(settings.dims.len().saturating_sub(1));
        let row = sample_row(&settings, settings.dims[chosen]);
        LabScreen { sweep, chosen, row }
    }

    pub fn settings(&self) -> &Settings {
        &self.sweep.settings
    }

    /// The d_k whose row is shown.
    pub fn dim(&self) -> usize {
        self.settings().dims[self.chosen]
    }

    /// The next (or previous) d_k of the sweep; `false` at either end.
    pub fn choose(&mut self, forwards: bool) -> bool {
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
        self.row = sample_row(self.settings(), self.dim());
        true
    }

    /// Twice (or half) the keys in a row, from 2 to `SCREEN_MAX_KEYS`; `false` at the limit.
    pub fn change_keys(&mut self, more: bool) -> bool {
        let keys = self.settings().keys;
        let next = if more { keys * 2 } else { keys / 2 };
        if !(2..=SCREEN_MAX_KEYS).contains(&next) {
            return false;
        }
        let settings = Settings {
            keys: next,
            ..self.settings().clone()
        };
        *self = LabScreen::with(settings, self.chosen);
        true
    }

    /// The whole sweep drawn again with the next seed.
    pub fn reseed(&mut self) {
        let settings = Settings {
            seed: self.settings().seed.wrapping_add(1),
            ..self.settings().clone()
        };
        *self = LabScreen::with(settings, self.chosen);
    }
}
