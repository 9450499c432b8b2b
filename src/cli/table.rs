//! Matrices as aligned text tables and as Markdown tables, with token labels as headers.

use unicode_width::UnicodeWidthStr;

use crate::attention::number::format_fixed;
use crate::attention::{Attention, MatrixName};

fn labels(
    attention: &Attention,
    name: MatrixName,
    rows: usize,
    cols: usize,
) -> (Vec<String>, Vec<String>) {
    (
        (0..rows).map(|r| attention.row_label(name, r)).collect(),
        (0..cols).map(|c| attention.column_label(name, c)).collect(),
    )
}

/// A matrix as a plain-text table: row labels left, numbers right-aligned.
pub fn text_table(attention: &Attention, name: MatrixName, decimals: usize) -> String {
    let Some(matrix) = attention.matrix(name) else {
        return String::new();
    };
    let (row_labels, col_labels) = labels(attention, name, matrix.nrows(), matrix.ncols());
    let cells: Vec<Vec<String>> = matrix
        .row_iter()
        .map(|row| row.iter().map(|v| format_fixed(*v, decimals)).collect())
        .collect();
    let label_width = row_labels.iter().map(|l| l.width()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..matrix.ncols())
        .map(|c| {
            cells
                .iter()
                .map(|row| row[c].width())
                .chain([col_labels[c].width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    out.push_str(&" ".repeat(label_width));
    for (c, label) in col_labels.iter().enumerate() {
        out.push_str("  ");
        out.push_str(&pad_left(label, widths[c]));
    }
    out.push('\n');
    for (r, row) in cells.iter().enumerate() {
        out.push_str(&pad_right(&row_labels[r], label_width));
        for (c, cell) in row.iter().enumerate() {
            out.push_str("  ");
            out.push_str(&pad_left(cell, widths[c]));
        }
        out.push('\n');
    }
    out
}

/// A matrix as a GitHub-flavoured Markdown table.
pub fn markdown_table(attention: &Attention, name: MatrixName, decimals: usize) -> String {
    let Some(matrix) = attention.matrix(name) else {
        return String::new();
    };
    let (row_labels, col_labels) = labels(attention, name, matrix.nrows(), matrix.ncols());
    let escape = |text: &str| text.replace('\\', "\\\\").replace('|', "\\|");
    let mut out = String::from("| |");
    for label in &col_labels {
        out.push_str(&format!(" {} |", escape(label)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(col_labels.len()));
    out.push('\n');
    for (r, row) in matrix.row_iter().enumerate() {
        out.push_str(&format!("| **{}** |", escape(&row_labels[r])));
        for value in row.iter() {
            out.push_str(&format!(" {} |", format_fixed(*value, decimals)));
        }
        out.push('\n');
    }
    out
}

fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(text.width())))
}

fn pad_right(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(text.width())))
}
