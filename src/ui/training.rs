//! The training screen: the run's progress, its loss as a curve, each head's score as a bar
//! chart over the steps (layer 0's previous-token heads, layer 1's induction heads), all on one
//! time axis from step 0 to the last, and the scrubber over the snapshots, whose chosen head
//! Enter opens as a lesson.
//!
//! Every chart starts in the same column (after a gutter of labels and numbers) and maps a step
//! to the same column, so the scrubber's ◆ marks the same moment in each.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui::widgets::canvas::{Canvas, Line as CanvasLine};

use crate::app::{Curve, HeadOf, TrainScreen};
use crate::lesson::text::{columns, printable_path};
use crate::train::{INDUCTION_LAYER, PREVIOUS_TOKEN_LAYER};

use super::text::{fit, pad_left};
use super::theme::Theme;

/// Columns of labels and numbers left of the charts.
const GUTTER: u16 = 16;

/// Rows every screen has besides the charts: the title, the progress, a heading per layer,
/// the scrubber, what Enter opens, and the status line.
const FIXED_ROWS: u16 = 7;

/// The most rows a head's chart takes: the loss curve takes the rest.
const MOST_HEAD_ROWS: u16 = 3;

/// Rows the loss curve keeps before the heads' charts grow past one row.
const LOSS_ROWS: u16 = 12;

pub(crate) fn render(screen: &TrainScreen, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let heads = screen.config().model.heads as u16;
    let charts = area.height.saturating_sub(FIXED_ROWS);
    let head_rows =
        (charts.saturating_sub(LOSS_ROWS) / (2 * heads).max(1)).clamp(1, MOST_HEAD_ROWS);
    let loss_rows = charts.saturating_sub(2 * heads * head_rows);
    let plot = Plot::new(screen, area);
    let row = |y: u16| Rect::new(area.x, y, area.width, 1);

    title(screen, theme, row(area.y), buf);
    progress(screen, theme, row(area.y + 1), buf);
    let mut y = area.y + 2;
    loss(
        screen,
        &plot,
        theme,
        Rect::new(area.x, y, area.width, loss_rows),
        buf,
    );
    y += loss_rows;
    for (layer, heading) in [
        (
            PREVIOUS_TOKEN_LAYER,
            " layer 0 · previous-token score: attention from each token to the one before it",
        ),
        (
            INDUCTION_LAYER,
            " layer 1 · induction score: attention to the token after the earlier copy",
        ),
    ] {
        let width = usize::from(area.width);
        buf.set_stringn(area.x, y, fit(heading, width), width, theme.title());
        y += 1;
        for head in 0..usize::from(heads) {
            head_chart(
                screen,
                HeadOf { layer, head },
                &plot,
                theme,
                Rect::new(area.x, y, area.width, head_rows),
                buf,
            );
            y += head_rows;
        }
    }
    scrubber(screen, &plot, theme, row(y), buf);
    opens(screen, row(y + 1), buf);
}

/// Where the charts are: the columns after the gutter, step 0 at the first and the run's last
/// step at the last. Each column covers the steps of its share of the run: several steps a
/// column in a long run, one step over several columns in a run shorter than the chart is wide,
/// so that the charts and the scrubber always span the same width for the same steps.
struct Plot {
    x: u16,
    width: u16,
    /// The run's steps in all.
    steps: usize,
    /// The column of the scrubbed snapshot, when there is one.
    marked: Option<u16>,
}

impl Plot {
    fn new(screen: &TrainScreen, area: Rect) -> Plot {
        let width = area.width.saturating_sub(GUTTER + 1).max(1);
        let mut plot = Plot {
            x: area.x + GUTTER,
            width,
            steps: screen.steps().max(1),
            marked: None,
        };
        plot.marked = screen.scrubbed().map(|snapshot| plot.column(snapshot.step));
        plot
    }

    /// Whether each column has a step of its own (else a step covers several columns).
    fn steps_fill_the_width(&self) -> bool {
        self.steps >= usize::from(self.width)
    }

    /// The steps of column `column`, as indices (step 1 is 0): at least one.
    fn steps_of(&self, column: u16) -> std::ops::Range<usize> {
        let (width, column) = (usize::from(self.width), usize::from(column));
        if self.steps_fill_the_width() {
            // The steps whose index × width ÷ steps rounds down to the column.
            (column * self.steps).div_ceil(width)..((column + 1) * self.steps).div_ceil(width)
        } else {
            let step = column * self.steps / width;
            step..step + 1
        }
    }

    /// The column where step `step` ends (step 0, the weights before any update, shares the
    /// first): the last column of those it covers.
    fn column(&self, step: usize) -> u16 {
        let width = usize::from(self.width);
        let index = step.clamp(1, self.steps) - 1;
        if self.steps_fill_the_width() {
            (index * width / self.steps) as u16
        } else if step == 0 {
            0
        } else {
            // The last column whose step is this one.
            ((index + 1) * width).div_ceil(self.steps) as u16 - 1
        }
    }

    /// The columns with a step done: up to the one where the last step done ends.
    fn done(&self, steps_done: usize) -> u16 {
        if steps_done == 0 {
            0
        } else {
            self.column(steps_done) + 1
        }
    }

    /// The last step whose column is `column` (a run that fills the width).
    fn last_step_in(&self, column: u16) -> usize {
        ((usize::from(column) + 1) * self.steps - 1) / usize::from(self.width) + 1
    }

    /// The mean of `curve` over the steps of each column, up to the last column with a step
    /// done. A point of a long run's curve (the mean of several steps) may fall across two
    /// columns: each takes it for as many of its steps as are in the column. A short run's
    /// step spreads over the columns it covers, each showing its value.
    fn means(&self, curve: &Curve) -> Vec<f64> {
        if !self.steps_fill_the_width() {
            // Fewer steps than columns: the curve keeps every step, one point each.
            let values: Vec<f64> = curve.points().map(|(_, _, mean)| mean).collect();
            return (0..self.width)
                .map(|column| self.steps_of(column).start)
                .map_while(|index| values.get(index).copied())
                .collect();
        }
        let mut sums = vec![(0.0_f64, 0_usize); usize::from(self.width)];
        for (first, last, mean) in curve.points() {
            let mut step = first;
            while step <= last {
                let column = self.column(step);
                let end = last.min(self.last_step_in(column).max(step));
                let steps = end + 1 - step;
                sums[usize::from(column)].0 += mean * steps as f64;
                sums[usize::from(column)].1 += steps;
                step = end + 1;
            }
        }
        sums.into_iter()
            .take_while(|(_, count)| *count > 0)
            .map(|(sum, count)| sum / count as f64)
            .collect()
    }

    /// The loss curve's points: the mean of each column's steps at the middle of the columns
    /// that show them (a step drawn over several columns is one point, not a flat run).
    fn points(&self, curve: &Curve) -> Vec<(f64, f64)> {
        let means = self.means(curve);
        let mut points: Vec<(std::ops::Range<usize>, u16, u16, f64)> = Vec::new();
        for (column, mean) in (0..self.width).zip(means) {
            let steps = self.steps_of(column);
            match points.last_mut() {
                Some((last, _, end, _)) if *last == steps => *end = column + 1,
                _ => points.push((steps, column, column + 1, mean)),
            }
        }
        points
            .into_iter()
            .map(|(_, start, end, mean)| ((f64::from(start) + f64::from(end)) / 2.0, mean))
            .collect()
    }
}

fn title(screen: &TrainScreen, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let config = screen.config();
    let about = format!(
        "seed {} · {} heads a layer · {} symbols ",
        config.seed, config.model.heads, config.model.vocabulary
    );
    let width = usize::from(area.width);
    let name = fit(
        " Watch an induction head form",
        width.saturating_sub(columns(&about) + 1),
    );
    let pad = width.saturating_sub(columns(&name) + columns(&about));
    Line::from(vec![
        Span::styled(name, theme.title()),
        Span::raw(" ".repeat(pad)),
        Span::styled(about, theme.muted()),
    ])
    .render(area, buf);
}

/// "step 1250 of 3000 ███░░░ 42 % · about 6 s left"; or paused; or done, and where the model
/// is.
fn progress(screen: &TrainScreen, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let (done, steps) = (screen.steps_done(), screen.steps());
    let left = format!(" step {done} of {steps} ");
    let right = if screen.finished {
        let written = match (&screen.written, screen.output()) {
            (Some(Ok(folder)), _) => format!(" · the model is in {}", printable_path(folder)),
            (Some(Err(_)), _) => " · the model was not written".to_string(),
            (None, Some(_)) => " · writing the model…".to_string(),
            (None, None) => String::new(),
        };
        format!(" done in {}{written}", duration(screen.seconds))
    } else if screen.paused {
        match screen.paused_at {
            Some(_) => " paused · Space goes on".to_string(),
            None => " pausing after this step…".to_string(),
        }
    } else {
        let percent = (done * 100).checked_div(steps).unwrap_or(0);
        match screen.seconds_left() {
            Some(left) => format!(" {percent} % · about {} left", duration(left)),
            None => format!(" {percent} % · starting…"),
        }
    };
    let width = usize::from(area.width);
    let bar = width.saturating_sub(columns(&left) + columns(&right));
    if bar < 8 {
        buf.set_stringn(
            area.x,
            area.y,
            fit(&format!("{left}{right}"), width),
            width,
            theme.title(),
        );
        return;
    }
    let filled = (done * bar).checked_div(steps).unwrap_or(0).min(bar);
    Line::from(vec![
        Span::styled(left, theme.title()),
        Span::styled("█".repeat(filled), theme.bar()),
        Span::styled("░".repeat(bar - filled), theme.muted()),
        Span::styled(right, theme.title()),
    ])
    .render(area, buf);
}

/// Seconds as a learner reads a wait: "8 s", "1 min 05 s".
fn duration(seconds: f64) -> String {
    let whole = seconds.max(0.0).round() as u64;
    if whole < 60 {
        format!("{whole} s")
    } else {
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// The loss curve: each column the mean loss of its steps, in Braille, with the scrubbed
/// snapshot's moment as a faint vertical line. The gutter names it and gives its value there.
fn loss(screen: &TrainScreen, plot: &Plot, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let means = plot.means(screen.losses());
    // From just below the lowest mean to just above the highest, in tenths, so that the fall
    // of the phase change fills the chart's height; the axis says where it starts.
    let highest = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lowest = means.iter().copied().fold(f64::INFINITY, f64::min);
    let (bottom, top) = if means.is_empty() {
        (0.0, 1.0)
    } else {
        let bottom = ((lowest * 10.0).floor() / 10.0 - 0.1).max(0.0);
        (bottom, ((highest * 10.0).ceil() / 10.0).max(bottom + 0.1))
    };
    let shown = screen
        .loss_at(screen.shown_step())
        .map_or("—".to_string(), |loss| format!("{loss:.2}"));
    let gutter = [
        (" loss".to_string(), theme.title()),
        (format!(" {shown}"), theme.title()),
    ];
    for (offset, (text, style)) in gutter.iter().enumerate().take(usize::from(area.height)) {
        buf.set_stringn(area.x, area.y + offset as u16, text, 10, *style);
    }
    // The axis, right against the chart, with the loss at its top and bottom.
    let axis = area.x + GUTTER - 1;
    for offset in 0..area.height {
        buf.set_string(axis, area.y + offset, "│", theme.muted());
    }
    let label = |text: String| pad_left(&text, 5);
    buf.set_string(axis - 5, area.y, label(format!("{top:.1}")), theme.muted());
    if area.height > 1 {
        buf.set_string(
            axis - 5,
            area.bottom() - 1,
            label(format!("{bottom:.1}")),
            theme.muted(),
        );
    }
    let chart = Rect::new(plot.x, area.y, plot.width, area.height);
    let points = plot.points(screen.losses());
    let marked = plot.marked.map(|column| f64::from(column) + 0.5);
    // The curve in the terminal's own color (made bold below), the marker's line faint.
    let (curve, faint) = (Color::Reset, theme.muted().fg.unwrap_or(Color::Reset));
    Canvas::default()
        .marker(Marker::Braille)
        .x_bounds([0.0, f64::from(plot.width)])
        .y_bounds([bottom, top])
        .paint(|ctx| {
            if let Some(x) = marked {
                ctx.draw(&CanvasLine::new(x, bottom, x, top, faint));
                ctx.layer();
            }
            match points.as_slice() {
                [only] => ctx.draw(&CanvasLine::new(only.0, only.1, only.0, only.1, curve)),
                points => {
                    for pair in points.windows(2) {
                        ctx.draw(&CanvasLine::new(
                            pair[0].0, pair[0].1, pair[1].0, pair[1].1, curve,
                        ));
                    }
                }
            }
        })
        .render(chart, buf);
    // Bold, as the lab draws its raw curve: readable on any background and without color.
    for x in chart.left()..chart.right() {
        for y in chart.top()..chart.bottom() {
            if Some(x - plot.x) != plot.marked {
                buf[(x, y)].set_style(theme.title());
            }
        }
    }
    if let Some(column) = plot.marked {
        for y in chart.top()..chart.bottom() {
            buf[(plot.x + column, y)].set_style(theme.muted());
        }
    }
}

/// One head's score over the steps, as columns of bars from 0 (empty) to 1 (full), at least a
/// sliver once a step is in the column so that what is done shows; the gutter names the head
/// and gives its score at the scrubbed moment. The chosen head's name is highlighted.
fn head_chart(
    screen: &TrainScreen,
    head: HeadOf,
    plot: &Plot,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    const BLOCKS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
    let chosen = screen.chosen == head;
    let score = screen
        .score_at(head, screen.shown_step())
        .map_or("—".to_string(), |score| format!("{score:.2}"));
    let name = format!("{} head {}", if chosen { "▸" } else { " " }, head.head);
    let style = if chosen {
        theme.cursor()
    } else {
        theme.title()
    };
    buf.set_string(area.x + 1, area.y, &name, style);
    buf.set_string(
        area.x + GUTTER - 6,
        area.y,
        pad_left(&score, 5),
        theme.title(),
    );
    let rows = area.height;
    let means = screen
        .scores(head)
        .map(|scores| plot.means(scores))
        .unwrap_or_default();
    for (column, mean) in means.iter().enumerate() {
        let eighths = ((mean.clamp(0.0, 1.0) * f64::from(rows) * 8.0).round() as u16).max(1);
        for level in 0..rows {
            let filled = eighths.saturating_sub(level * 8).min(8);
            let y = area.y + rows - 1 - level;
            buf.set_string(
                plot.x + column as u16,
                y,
                BLOCKS[usize::from(filled)],
                theme.bar(),
            );
        }
    }
    if let Some(column) = plot.marked {
        for y in area.top()..area.bottom() {
            buf[(plot.x + column, y)].set_style(theme.cursor());
        }
    }
}

/// The time axis under the charts: the steps done heavy, the rest light, ◆ at the scrubbed
/// snapshot; the gutter says its step.
fn scrubber(screen: &TrainScreen, plot: &Plot, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let Some(snapshot) = screen.scrubbed() else {
        buf.set_string(area.x, area.y, " no snapshot yet", theme.muted());
        return;
    };
    buf.set_string(
        area.x,
        area.y,
        format!(" ◆ step {}", snapshot.step),
        theme.title(),
    );
    let done = plot.done(screen.steps_done());
    for column in 0..plot.width {
        let (glyph, style) = if column < done {
            ("━", theme.title())
        } else {
            ("─", theme.muted())
        };
        buf.set_string(plot.x + column, area.y, glyph, style);
    }
    if let Some(column) = plot.marked {
        buf.set_string(plot.x + column, area.y, "◆", theme.cursor());
    }
}

/// What Enter opens: the chosen head at the scrubbed snapshot, on the text.
fn opens(screen: &TrainScreen, area: Rect, buf: &mut Buffer) {
    let Some(snapshot) = screen.scrubbed() else {
        return;
    };
    let newest = if screen.follows_newest() {
        " (the newest)"
    } else {
        ""
    };
    let line = format!(
        " Enter: layer {} head {} at step {}{newest} on {}",
        screen.chosen.layer,
        screen.chosen.head,
        snapshot.step,
        crate::lesson::text::printable(&screen.text)
    );
    let width = usize::from(area.width);
    buf.set_stringn(area.x, area.y, fit(&line, width), width, Style::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The charts' columns 63 wide (an 80-column terminal) over a run of `steps`.
    fn plot(steps: usize) -> Plot {
        Plot {
            x: 0,
            width: 63,
            steps,
            marked: None,
        }
    }

    #[test]
    fn each_columns_mean_is_of_its_own_steps() {
        let mut curve = Curve::new();
        for step in 1..=3000 {
            curve.push(step as f32);
        }
        let plot = plot(3000);
        let means = plot.means(&curve);
        assert_eq!(means.len(), 63);
        let mut first = 1;
        for (column, mean) in means.iter().enumerate() {
            let last = plot.last_step_in(column as u16);
            assert_eq!(*mean, (first + last) as f64 / 2.0, "column {column}");
            first = last + 1;
        }
        assert_eq!(first, 3001);
    }

    #[test]
    fn a_long_runs_point_across_two_columns_counts_in_each_for_its_steps_there() {
        // 200,000 steps: points of 64 steps. Column 0 ends at step 3,175, in the point of
        // steps 3,137 to 3,200, the only steps whose number is not 0.
        let plot = plot(200_000);
        assert_eq!((plot.last_step_in(0), plot.last_step_in(1)), (3175, 6350));
        let mut curve = Curve::new();
        for step in 1..=200_000 {
            curve.push(if (3137..=3200).contains(&step) {
                1.0
            } else {
                0.0
            });
        }
        assert_eq!(curve.span(), 64);
        let means = plot.means(&curve);
        assert_eq!(means[0], 39.0 / 3175.0);
        assert_eq!(means[1], 25.0 / 3175.0);
        assert!(means[2..].iter().all(|mean| *mean == 0.0));
    }
}
