//! The online softmax's working, cell by cell: how m, the rescale factor, l and acc after one
//! tile of keys come from the state before the tile and the tile's scores (and values).

use super::hint::side_hints;
use super::landing::{EXTRA_OPERAND_DECIMALS, landing_digits, shown, written};
use super::number::{format_magnitude, format_number, written_alike};
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::{Cell, MatrixName};

/// More keys than this in a tile are named by the first and the last, not one by one.
const NAMED_KEYS: usize = 6;

/// The parts of the online softmax's state after a tile (FlashAttention's m, l and O).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnlinePart {
    /// m = max(m_old, the tile's scores).
    Max,
    /// e^(m_old − m): 1 when the maximum did not rise.
    Rescale,
    /// l = rescale·l_old + Σ e^(s − m) over the tile.
    Sum,
    /// acc = rescale·acc_old + Σ e^(s − m)·v over the tile.
    Acc,
}

impl OnlinePart {
    /// The matrix that holds this part of the state.
    pub(crate) const fn matrix(self) -> MatrixName {
        match self {
            OnlinePart::Max => MatrixName::OnlineMax,
            OnlinePart::Rescale => MatrixName::OnlineRescale,
            OnlinePart::Sum => MatrixName::OnlineSum,
            OnlinePart::Acc => MatrixName::OnlineAcc,
        }
    }
}

/// One cell of the state after a tile, with what it is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlineRule {
    pub part: OnlinePart,
    /// The tile, 0-based, and how many the keys make.
    pub tile: usize,
    pub tiles: usize,
    /// The same cell after the tile before (for the rescale factor, m after the tile before);
    /// `None` at the first tile, before which m is -inf and l and acc are 0.
    pub before: Option<Operand>,
    /// The row's m before the tile (-inf before the first).
    pub max_before: f64,
    /// The row's m after the tile, for the parts made from it.
    pub max: Option<Operand>,
    /// The row's rescale factor at this tile, for l and acc.
    pub rescale: Option<Operand>,
    /// The tile's scores on this row, masked ones (-inf) included.
    pub scores: Vec<Operand>,
    /// For acc: each key's value in this column, aligned with `scores`.
    pub values: Vec<Operand>,
}

impl Working for OnlineRule {
    /// The cells this one is made from; those of the tile before are not on screen.
    fn operands(&self) -> Vec<Cell> {
        self.scores
            .iter()
            .chain(&self.values)
            .chain(self.max.iter())
            .chain(self.rescale.iter())
            .chain(self.before.iter())
            .map(|operand| operand.cell)
            .collect()
    }

    /// Where `e` goes: the tile's first score.
    fn source(&self, _: Cell) -> Option<Cell> {
        self.scores.first().map(|operand| operand.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (sides, note) = self.explanation(
            labels,
            worked.cell,
            worked.value,
            worked.decimals,
            &worked.result,
        );
        Words::worked(sides, note)
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        // Its operands (the state before the tile) are not on screen side by side.
        None
    }

    fn hints(
        &self,
        _: &dyn Labels,
        worked: &Worked,
        explanation: &Explanation,
    ) -> (String, String) {
        // A factor of 1 (m did not rise), or a row still fully masked: the only side is the
        // answer, so the hints point at m before and after the tile instead.
        if explanation.sides.len() >= 2 {
            return side_hints(explanation, None);
        }
        let max = self.max.map_or(worked.value, |max| max.value);
        (
            format!(
                "{}: compare this row's m before the tile (m_old) with m after it",
                explanation.name
            ),
            format!(
                "{}: m_old = {} and m = {}: did this tile raise the maximum?",
                explanation.name,
                format_number(self.max_before, worked.decimals),
                format_number(max, worked.decimals)
            ),
        )
    }
}

impl OnlineRule {
    /// The row's m after the tile: the cell's own value on the Max part.
    fn max_after(&self, value: f64) -> f64 {
        self.max.map_or(value, |max| max.value)
    }

    /// The tile's visible keys: their scores, with the value of each for acc.
    fn visible(&self) -> Vec<(Operand, Option<Operand>)> {
        self.scores
            .iter()
            .enumerate()
            .filter(|(_, score)| score.value != f64::NEG_INFINITY)
            .map(|(index, score)| (*score, self.values.get(index).copied()))
            .collect()
    }

    /// "masked[cat, sat], masked[cat, on]", or for a long tile "masked[cat, the … mat]".
    fn score_names(&self, labels: &dyn Labels) -> String {
        match (self.scores.first(), self.scores.last()) {
            (Some(first), Some(last)) if self.scores.len() > NAMED_KEYS => {
                let name = labels.cell_name(first.cell);
                let last_key = labels.column_label(last.cell.matrix, last.cell.col);
                match name.strip_suffix(']') {
                    Some(open) => format!("{open} … {last_key}]"),
                    None => name,
                }
            }
            _ => self
                .scores
                .iter()
                .map(|score| labels.cell_name(score.cell))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The arithmetic in parts (`Explanation`'s sides and note), with the real numbers.
    fn explanation(
        &self,
        labels: &dyn Labels,
        cell: Cell,
        value: f64,
        decimals: usize,
        result: &str,
    ) -> (Vec<Vec<String>>, Option<String>) {
        let num = |value: f64| format_number(value, decimals);
        let one = |text: String| vec![text];
        let shown = |value: f64, d: usize| -> f64 {
            if value.is_finite() {
                shown(value, d)
            } else {
                value
            }
        };
        // As many decimals as it takes for the arithmetic as written to land on the result.
        let landing = |worked: &dyn Fn(usize) -> f64| {
            written(landing_digits(decimals, result, worked), decimals, result)
        };
        let max = self.max_after(value);
        let masked = self.scores.len() - self.visible().len();
        let masked_note = (masked > 0).then(|| {
            format!(
                "{masked} masked key{} of this tile add{} e^(-inf) = 0",
                if masked == 1 { "" } else { "s" },
                if masked == 1 { "s" } else { "" }
            )
        });
        let row_name = |matrix: MatrixName| {
            labels.cell_name(Cell::new(matrix, cell.row, 0).in_head(cell.head))
        };
        match self.part {
            OnlinePart::Max => {
                let numbers: Vec<String> = if self.scores.len() > NAMED_KEYS {
                    let largest = self
                        .scores
                        .iter()
                        .map(|score| score.value)
                        .fold(f64::NEG_INFINITY, f64::max);
                    vec![format!(
                        "largest of the {}: {}",
                        self.scores.len(),
                        num(largest)
                    )]
                } else {
                    self.scores.iter().map(|score| num(score.value)).collect()
                };
                let sides = vec![
                    one(format!("max(m_old, {})", self.score_names(labels))),
                    one(format!(
                        "max({}, {})",
                        num(self.max_before),
                        numbers.join(", ")
                    )),
                    one(result.to_string()),
                ];
                let note = if value == f64::NEG_INFINITY {
                    "every key so far is masked, so m is still -inf".to_string()
                } else if self.tile == 0 {
                    "the first tile: m starts at -inf, with nothing seen yet, so m is the \
                     tile's largest score"
                        .to_string()
                } else if self.max_before == f64::NEG_INFINITY {
                    "the row's first visible key: every key before this tile is masked, so m \
                     rises from -inf, and l and acc, still 0, have nothing to rescale"
                        .to_string()
                } else if value > self.max_before {
                    format!(
                        "a score of this tile is larger than m_old = {}: the maximum rises, so l \
                         and acc so far are rescaled",
                        num(self.max_before)
                    )
                } else {
                    "no score of this tile is larger than m_old: m stays, and nothing is rescaled"
                        .to_string()
                };
                (sides, Some(note))
            }
            OnlinePart::Rescale => {
                let rose = max > self.max_before;
                if rose && self.max_before == f64::NEG_INFINITY {
                    return (
                        vec![
                            one("e^(m_old − m)".to_string()),
                            one(format!("e^(-inf − {})", num(max))),
                            one(result.to_string()),
                        ],
                        Some(
                            "the maximum rises from -inf at the row's first visible key: \
                             e^(-inf) = 0, and it multiplies the l = 0 and acc = 0 kept so far, \
                             so nothing is lost"
                                .to_string(),
                        ),
                    );
                }
                if !rose {
                    let note = if max == f64::NEG_INFINITY {
                        "every key so far is masked: m is still -inf, l and acc are 0, and \
                         nothing is rescaled"
                            .to_string()
                    } else {
                        format!(
                            "the maximum did not rise: m stays {}, and l and acc so far are kept \
                             as they are, × 1",
                            num(max)
                        )
                    };
                    return (vec![one(result.to_string())], Some(note));
                }
                let worked = |d: usize| (shown(self.max_before, d) - shown(max, d)).exp();
                let (d, result) = landing(&worked);
                let difference = shown(self.max_before, d) - shown(max, d);
                (
                    vec![
                        one("e^(m_old − m)".to_string()),
                        one(format!(
                            "e^({} − {})",
                            format_number(self.max_before, d),
                            format_number(max, d)
                        )),
                        one(format!("e^({})", format_number(difference, d))),
                        one(result),
                    ],
                    Some(format!(
                        "the maximum rose from {} to {}: l and acc so far are sums of \
                         e^(s − {}), and this factor makes them sums of e^(s − {})",
                        num(self.max_before),
                        num(max),
                        num(self.max_before),
                        num(max)
                    )),
                )
            }
            OnlinePart::Sum | OnlinePart::Acc => {
                let acc = self.part == OnlinePart::Acc;
                if max == f64::NEG_INFINITY {
                    let note = if self.tile + 1 == self.tiles {
                        self.last_tile_note(labels, cell, value, decimals)
                    } else {
                        "every key so far is masked: nothing is added".to_string()
                    };
                    return (vec![one(result.to_string())], Some(note));
                }
                let old_symbol = if acc { "acc_old" } else { "l_old" };
                let rescale = self.rescale.map_or(1.0, |rescale| rescale.value);
                let old = self.before.map_or(0.0, |before| before.value);
                let visible = self.visible();
                let carried = self.tile > 0;
                // Two lines of arithmetic must land: the one with the exponentials to work out
                // (`rounded` false), and the one with them (and the carried product) written
                // out at d decimals (`rounded` true).
                let as_written = |value: f64, d: usize| -> f64 {
                    format_magnitude(value, d).parse().unwrap_or(value)
                };
                let worked = |d: usize, rounded: bool| {
                    let carried_term = shown(rescale, d) * shown(old, d);
                    let mut sum = match (carried, rounded) {
                        (false, _) => 0.0,
                        (true, false) => carried_term,
                        (true, true) => shown(carried_term, d),
                    };
                    for (score, v) in &visible {
                        let mut weight = (shown(score.value, d) - shown(max, d)).exp();
                        if rounded {
                            weight = as_written(weight, d);
                        }
                        sum += weight * v.map_or(1.0, |v| shown(v.value, d));
                    }
                    sum
                };
                let (d, result) = written(
                    (decimals..=decimals + EXTRA_OPERAND_DECIMALS).find(|&d| {
                        written_alike(worked(d, false), value, decimals)
                            && written_alike(worked(d, true), value, decimals)
                    }),
                    decimals,
                    result,
                );
                let n = |value: f64| format_number(value, d);
                let m_name = row_name(MatrixName::OnlineMax);
                let mut symbols = Vec::new();
                let mut numbers = Vec::new();
                let mut products = Vec::new();
                if carried {
                    symbols.push(format!(
                        "{} × {old_symbol}",
                        row_name(MatrixName::OnlineRescale)
                    ));
                    numbers.push(format!("{} × {}", n(rescale), n(old)));
                    products.push(n(shown(rescale, d) * shown(old, d)));
                }
                for (score, v) in &visible {
                    let exp = format!("e^({} − {m_name})", labels.cell_name(score.cell));
                    let exp_numbers = format!("e^({} − {})", n(score.value), n(max));
                    let weight = (shown(score.value, d) - shown(max, d)).exp();
                    match v {
                        Some(v) => {
                            symbols.push(format!("{exp} × {}", labels.cell_name(v.cell)));
                            numbers.push(format!("{exp_numbers} × {}", n(v.value)));
                            products.push(format!(
                                "{} × {}",
                                format_magnitude(weight, d),
                                n(v.value)
                            ));
                        }
                        None => {
                            symbols.push(exp);
                            numbers.push(exp_numbers);
                            products.push(format_magnitude(weight, d));
                        }
                    }
                }
                if symbols.is_empty() {
                    symbols.push("0".to_string());
                    numbers.push("0".to_string());
                }
                let mut sides = vec![symbols, numbers];
                if products.len() > 1 || !products.iter().all(|p| *p == result) {
                    sides.push(products);
                }
                sides.push(one(result));
                let mut notes = Vec::new();
                if !carried {
                    notes.push(format!("the first tile: {old_symbol} is 0 before it"));
                }
                notes.extend(masked_note);
                if self.tile + 1 == self.tiles {
                    notes.push(self.last_tile_note(labels, cell, value, decimals));
                }
                (sides, (!notes.is_empty()).then(|| notes.join("; ")))
            }
        }
    }

    /// What the last tile's l or acc is: the Softmax step's denominator, or with l the output.
    fn last_tile_note(
        &self,
        labels: &dyn Labels,
        cell: Cell,
        value: f64,
        decimals: usize,
    ) -> String {
        let num = |value: f64| format_number(value, decimals);
        if self.part == OnlinePart::Sum && value == 0.0 {
            return "the last tile: every key of this row is masked, so l = 0, there is no \
                    acc / l to take, and the output row is 0, as the full softmax gives it"
                .to_string();
        }
        if self.part == OnlinePart::Sum {
            // The Softmax step's working divides by Σ e^s itself: l is that sum over e^m.
            return "the last tile: l is the whole row's Σ e^(s − m), m its maximum: the \
                    Softmax step's denominator Σ e^s divided by e^m"
                .to_string();
        }
        let l = labels
            .value(
                Cell::new(MatrixName::OnlineSum, cell.row, 0)
                    .in_head(cell.head)
                    .at_tile(self.tile),
            )
            .unwrap_or(0.0);
        let output = Cell::new(MatrixName::Output, cell.row, cell.col).in_head(cell.head);
        if l == 0.0 {
            return "the last tile: every key of this row is masked, so l = 0 and acc = 0, there \
                    is no acc / l to take, and the output row is 0, as the full softmax gives it"
                .to_string();
        }
        // acc and l with the decimals the division needs to land on the output as written.
        let quotient = num(value / l);
        let (d, quotient) = written(
            landing_digits(decimals, &quotient, |d| shown(value, d) / shown(l, d)),
            decimals,
            &quotient,
        );
        format!(
            "the last tile: acc / l = {} / {} = {quotient}, and {} = {}",
            format_number(value, d),
            format_number(l, d),
            labels.cell_name(output),
            labels.value(output).map_or_else(|| "?".to_string(), num)
        )
    }
}
