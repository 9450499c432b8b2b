//! `attn-tutor lab`: a lab's sweep as a table, a Markdown table or JSON.

use std::io::{self, Write};

use serde::Serialize;

use super::{Format, status};
use crate::lab::scaling::{Settings, Sweep, sweep};

/// `lab scaling`: refuses settings it cannot sweep, naming the option, else prints the sweep.
pub(crate) fn scaling(
    settings: &Settings,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    if let Some(problem) = settings.problem() {
        let _ = writeln!(err, "error: {problem}");
        return status::INVALID;
    }
    let sweep = sweep(settings);
    let written = match format {
        Format::Text => write_text(out, &sweep),
        Format::Markdown => write_markdown(out, &sweep),
        Format::Json => write_json(out, &sweep),
    };
    // A reader that goes away (`| head`) ends the writing; that is not an error of the lab.
    let _ = written.and_then(|()| out.flush());
    status::OK
}

/// The JSON contract of issue 16, its keys exactly: lists aligned with `dims`. The variance is
/// not among them; a sweep with another than 1 says so in its text and Markdown.
#[derive(Serialize)]
struct ScalingJson<'a> {
    dims: &'a [usize],
    keys: usize,
    samples: usize,
    seed: u64,
    raw_std: Vec<f64>,
    scaled_std: Vec<f64>,
    max_weight_raw: Vec<f64>,
    max_weight_scaled: Vec<f64>,
    entropy_raw: Vec<f64>,
    entropy_scaled: Vec<f64>,
    grad_raw: Vec<f64>,
    grad_scaled: Vec<f64>,
}

fn write_json(out: &mut dyn Write, sweep: &Sweep) -> io::Result<()> {
    let settings = &sweep.settings;
    let each = |figure: fn(&crate::lab::scaling::Point) -> f64| -> Vec<f64> {
        sweep.points.iter().map(figure).collect()
    };
    let json = ScalingJson {
        dims: &settings.dims,
        keys: settings.keys,
        samples: settings.samples,
        seed: settings.seed,
        raw_std: each(|point| point.raw.std),
        scaled_std: each(|point| point.scaled.std),
        max_weight_raw: each(|point| point.raw.max_weight),
        max_weight_scaled: each(|point| point.scaled.max_weight),
        entropy_raw: each(|point| point.raw.entropy),
        entropy_scaled: each(|point| point.scaled.entropy),
        grad_raw: each(|point| point.raw.gradient),
        grad_scaled: each(|point| point.scaled.gradient),
    };
    serde_json::to_writer_pretty(&mut *out, &json).map_err(io::Error::from)?;
    writeln!(out)
}

/// The columns of the tables, raw beside scaled for each figure.
const HEADERS: [&str; 9] = [
    "d_k",
    "std raw",
    "std scaled",
    "max weight raw",
    "max weight scaled",
    "entropy raw",
    "entropy scaled",
    "gradient raw",
    "gradient scaled",
];

/// A row of a table: d_k, then each figure raw and scaled.
fn cells(point: &crate::lab::scaling::Point) -> [String; 9] {
    let (raw, scaled) = (point.raw, point.scaled);
    [
        point.dim.to_string(),
        format!("{:.3}", raw.std),
        format!("{:.3}", scaled.std),
        format!("{:.3}", raw.max_weight),
        format!("{:.3}", scaled.max_weight),
        format!("{:.3}", raw.entropy),
        format!("{:.3}", scaled.entropy),
        format!("{:.4}", raw.gradient),
        format!("{:.4}", scaled.gradient),
    ]
}

/// What the sweep was, and how to read it.
fn preamble(sweep: &Sweep) -> String {
    let settings = &sweep.settings;
    format!(
        "For each d_k, {samples} rows of one query against {keys} keys, every entry drawn from \
         N(0, {variance}) (seed {seed}). std: the spread of all the scores q·k (raw) and q·k / √d_k \
         (scaled). max weight: a row's largest softmax weight (1/{keys} = {even:.4} means an \
         even spread, 1 one key only). entropy: a row's, in bits (log₂ {keys} = {bits:.3} means \
         an even spread, 0 one key only). gradient: the mean of p(1 − p) over a row, how much a \
         weight still moves when its score does. The last three are means over the rows. \
         Scaled, the std is the same at every d_k, but only the std: a row's scaled scores \
         spread in proportion to |q| / √d_k, which varies widely from row to row at small d_k \
         and settles as d_k grows, so the softmax figures of the smallest d_k differ from the \
         rest.",
        samples = settings.samples,
        keys = settings.keys,
        variance = settings.variance,
        seed = settings.seed,
        even = 1.0 / settings.keys as f64,
        bits = (settings.keys as f64).log2(),
    )
}

/// The text table: each figure's raw and scaled columns under one heading, 72 columns wide.
fn write_text(out: &mut dyn Write, sweep: &Sweep) -> io::Result<()> {
    writeln!(out, "Why scores are divided by √d_k\n")?;
    writeln!(out, "{}\n", super::show::wrap(&preamble(sweep), 78))?;
    let headings = format!(
        "{:>5}  {:^15}  {:^15}  {:^15}  {:^15}",
        "", "std", "max weight", "entropy (bits)", "gradient"
    );
    writeln!(out, "{}", headings.trim_end())?;
    writeln!(
        out,
        "{:>5}  {:>7} {:>7}  {:>7} {:>7}  {:>7} {:>7}  {:>7} {:>7}",
        "d_k", "raw", "scaled", "raw", "scaled", "raw", "scaled", "raw", "scaled"
    )?;
    for point in &sweep.points {
        let [dim, rest @ ..] = cells(point);
        writeln!(
            out,
            "{dim:>5}  {:>7} {:>7}  {:>7} {:>7}  {:>7} {:>7}  {:>7} {:>7}",
            rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6], rest[7]
        )?;
    }
    Ok(())
}

fn write_markdown(out: &mut dyn Write, sweep: &Sweep) -> io::Result<()> {
    writeln!(out, "# Why scores are divided by √d_k\n")?;
    writeln!(out, "{}\n", preamble(sweep))?;
    writeln!(out, "| {} |", HEADERS.join(" | "))?;
    writeln!(out, "|{}", "---:|".repeat(HEADERS.len()))?;
    for point in &sweep.points {
        writeln!(out, "| {} |", cells(point).join(" | "))?;
    }
    Ok(())
}
