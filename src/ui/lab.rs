//! The scaling lab's screen: four charts of the sweep over d_k (on a log axis), raw scores
//! against scaled ones, and the chosen d_k's row of weights drawn as bars, raw beside scaled.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, Widget};

use crate::app::LabScreen;
use crate::lab::scaling::{Point, RowFigures};

use super::text::fit;
use super::theme::Theme;

/// One chart: its title, the figure it plots, and its y range (`None`: from the data).
struct Figure {
    title: &'static str,
    value: fn(&RowFigures) -> f64,
}

const FIGURES: [Figure; 4] = [
    Figure {
        title: "std of the scores",
        value: |figures| figures.std,
    },
    Figure {
        title: "largest weight",
        value: |figures| figures.max_weight,
    },
    Figure {
        title: "entropy (bits)",
        value: |figures| figures.entropy,
    },
    Figure {
        title: "gradient p(1−p)",
        value: |figures| figures.gradient,
    },
];

/// Rows of the bars of one row's weights.
const BAR_ROWS: u16 = 3;

pub(crate) fn render(lab: &LabScreen, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let settings = lab.settings();
    let width = usize::from(area.width);
    let about = format!(
        "d_k {} · {} keys · {} rows · seed {} ",
        lab.dim(),
        settings.keys,
        settings.samples,
        settings.seed
    );
    let title = fit(
        " Why divide by √d_k? (the scaling lab)",
        width.saturating_sub(about.chars().count() + 1),
    );
    let pad = width.saturating_sub(title.chars().count() + about.chars().count());
    Line::from(vec![
        Span::styled(title, theme.title()),
        Span::raw(" ".repeat(pad)),
        Span::styled(about, theme.title()),
    ])
    .render(Rect::new(area.x, area.y, area.width, 1), buf);
    Line::from(vec![
        Span::styled(" ⣿ raw: q·k", raw_style(theme)),
        Span::raw("   • scaled: q·k / √d_k"),
        Span::styled(
            format!("   │ d_k {}, its first row's weights below", lab.dim()),
            theme.muted(),
        ),
    ])
    .render(Rect::new(area.x, area.y + 1, area.width, 1), buf);

    // Two rows of two charts above the bars, what they show, and the status line.
    let charts_height = area.height.saturating_sub(2 + BAR_ROWS + 2 + 1 + 1);
    let (half_width, half_height) = (area.width / 2, charts_height / 2);
    for (index, figure) in FIGURES.iter().enumerate() {
        let x = area.x + (index as u16 % 2) * half_width;
        let y = area.y + 2 + (index as u16 / 2) * half_height;
        // A column between the charts, so that one's labels never touch the other's lines.
        let width = half_width.saturating_sub(1);
        // The lower charts take the row an odd height leaves over.
        let height = if index < 2 {
            half_height
        } else {
            charts_height - half_height
        };
        chart(lab, figure, theme, Rect::new(x, y, width, height), buf);
    }
    bars(
        lab,
        theme,
        Rect::new(area.x, area.y + 2 + charts_height, area.width, BAR_ROWS + 2),
        buf,
    );
    let conclusion = CONCLUSIONS
        .into_iter()
        .find(|sentence| sentence.chars().count() < width)
        .unwrap_or("");
    Line::from(Span::styled(format!(" {conclusion}"), theme.title())).render(
        Rect::new(
            area.x,
            area.y + 2 + charts_height + BAR_ROWS + 2,
            area.width,
            1,
        ),
        buf,
    );
}

/// What the charts show, in one line: the longest that fits the screen's width is drawn.
const CONCLUSIONS: [&str; 3] = [
    "Raw, the scores spread as √d_k: softmax gives one key nearly all the weight and its \
     gradient fades. Divided by √d_k, they spread alike at every d_k.",
    "÷ √d_k keeps the scores' spread alike at every d_k: softmax stays soft, its gradient alive.",
    "÷ √d_k: one spread at every d_k, so softmax stays soft and its gradient alive.",
];

/// The raw scores' line and bars: bold in the terminal's own color, readable on a light or a
/// dark background and without color; the scaled ones are plain (and dotted in the charts).
fn raw_style(theme: &Theme) -> Style {
    theme.title()
}

/// One figure over the sweep, raw and scaled, with the chosen d_k marked.
fn chart(lab: &LabScreen, figure: &Figure, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.height < 4 || area.width < 16 {
        return;
    }
    let points = &lab.sweep().points;
    let at = |point: &Point, raw: bool| {
        (
            (point.dim as f64).log2(),
            (figure.value)(if raw { &point.raw } else { &point.scaled }),
        )
    };
    let raw: Vec<(f64, f64)> = points.iter().map(|point| at(point, true)).collect();
    let scaled: Vec<(f64, f64)> = points.iter().map(|point| at(point, false)).collect();
    let top = raw
        .iter()
        .chain(&scaled)
        .map(|(_, value)| *value)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let chosen_x = (lab.dim() as f64).log2();
    let marker = [(chosen_x, 0.0), (chosen_x, top)];
    let (first, last) = (
        points.first().map_or(1, |point| point.dim),
        points.last().map_or(1, |point| point.dim),
    );
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.muted())
            .data(&marker),
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(raw_style(theme))
            .data(&raw),
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(Style::new())
            .data(&scaled),
    ];
    let label = |value: f64| {
        if value >= 10.0 {
            format!("{value:.0}")
        } else {
            format!("{value:.2}")
        }
    };
    // The title above the plot, not on its top row where the lines start.
    Chart::new(datasets)
        .block(Block::new().title(Span::styled(figure.title, theme.title())))
        .x_axis(
            Axis::default()
                .bounds([(first as f64).log2(), (last as f64).log2()])
                .labels([format!("d_k {first}"), last.to_string()]),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(["0".to_string(), label(top)]),
        )
        .legend_position(None)
        .render(area, buf);
}

/// The chosen d_k's first row of weights, each key a column of bars: raw on the left, scaled
/// on the right, the same key in the same column of each. When not every key fits, the keys
/// with the largest raw weights are drawn, and the caption says how many of how many.
fn bars(lab: &LabScreen, theme: &Theme, area: Rect, buf: &mut Buffer) {
    const BLOCKS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
    let (raw, scaled) = lab.row();
    let half = area.width / 2;
    let columns = usize::from(half.saturating_sub(2));
    let mut keys: Vec<usize> = (0..raw.len()).collect();
    if keys.len() > columns {
        keys.sort_by(|a, b| raw[*b].total_cmp(&raw[*a]));
        keys.truncate(columns);
        keys.sort_unstable();
    }
    let shown = if keys.len() < raw.len() {
        format!(", {} of {} keys", keys.len(), raw.len())
    } else {
        String::new()
    };
    for (index, (weights, name, style)) in [
        (raw, "raw", raw_style(theme)),
        (scaled, "scaled", Style::new()),
    ]
    .into_iter()
    .enumerate()
    {
        let x = area.x + index as u16 * half;
        let largest = weights.iter().copied().fold(0.0, f64::max);
        let caption = format!(" d_k {} {name}: top {largest:.2}{shown}", lab.dim());
        let room = usize::from(half);
        buf.set_stringn(x, area.y, fit(&caption, room), room, theme.title());
        for (column, key) in keys.iter().enumerate() {
            // Eighths of a cell, BAR_ROWS cells high: a weight of 1 fills the column.
            let eighths =
                (weights[*key].clamp(0.0, 1.0) * f64::from(BAR_ROWS) * 8.0).round() as u16;
            for level in 0..BAR_ROWS {
                let filled = eighths.saturating_sub(level * 8).min(8);
                let y = area.y + 1 + BAR_ROWS - 1 - level;
                buf.set_string(x + 1 + column as u16, y, BLOCKS[usize::from(filled)], style);
            }
        }
        let axis: String = "─".repeat(keys.len());
        buf.set_stringn(x + 1, area.y + 1 + BAR_ROWS, axis, columns, theme.muted());
    }
}
