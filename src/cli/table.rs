//! Matrices as aligned text tables and as Markdown tables, with token labels as headers,
//! written row by row: a 1024 × 1024 matrix is 12 MB of text, never held in memory at once.

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr;

use crate::attention::number::format_fixed;
use crate::attention::{Attention, MatrixName};

/// Head `head`'s matrix (its group's for keys and values; head 0 with one head) as a
/// plain-text table: row labels left, numbers right-aligned.
pub(crate) fn write_text_table_in(
    out: &mut dyn Write,
    attention: &Attention,
    name: MatrixName,
    (head, token): (usize, usize),
    decimals: usize,
) -> io::Result<()> {
    let Some(matrix) = attention.matrix_at(name, head, token) else {
        return Ok(());
    };
    let label_width = (0..matrix.nrows())
        .map(|r| attention.row_label_at(name, r, token).width())
        .max()
        .unwrap_or(0);
    // A first pass for the column widths, formatting each number and dropping it, so the
    // table needs one number's text at a time instead of all of them.
    let widths: Vec<usize> = (0..matrix.ncols())
        .map(|c| {
            matrix
                .column(c)
                .iter()
                .map(|v| format_fixed(*v, decimals).width())
                .chain([attention.column_label(name, c).width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    write!(out, "{}", " ".repeat(label_width))?;
    for (c, width) in widths.iter().enumerate() {
        write!(
            out,
            "  {}",
            pad_left(&attention.column_label(name, c), *width)
        )?;
    }
    writeln!(out)?;
    for (r, row) in matrix.row_iter().enumerate() {
        write!(
            out,
            "{}",
            pad_right(&attention.row_label_at(name, r, token), label_width)
        )?;
        for (value, width) in row.iter().zip(&widths) {
            write!(
                out,
                "  {}",
                pad_left(&format_fixed(*value, decimals), *width)
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Lesson text as Markdown shows it literally: a lesson is plain text, so `*x*` in a narration
/// or a label is asterisks, not emphasis, and `<svg …>` or `[x](javascript:…)` is those
/// characters, never HTML or a link. Only what CommonMark (and GitHub's tables and
/// strikethrough) would read as markup is escaped, so the handout's source stays readable:
/// `\`, `` ` ``, `*`, `<`, `>`, `[`, `]`, `&`, `~`, `#`, `|` (a table's cell border), `_` where
/// it could open or close emphasis (not inside a word like W_q), and what would open a list or
/// underline a heading at the start of a line.
pub(crate) fn markdown_text(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut line_start = 0;
    for (at, &ch) in chars.iter().enumerate() {
        let before = at.checked_sub(1).map(|i| chars[i]);
        let after = chars.get(at + 1).copied();
        let inside_word =
            before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric);
        // What comes before on its line, without the indentation that CommonMark allows.
        let opens_line = chars[line_start..at].iter().all(|c| *c == ' ');
        let ends_number = before.is_some_and(|b| b.is_ascii_digit())
            && chars[line_start..at]
                .iter()
                .skip_while(|c| **c == ' ')
                .all(char::is_ascii_digit);
        let escape = match ch {
            '\\' | '`' | '*' | '<' | '>' | '[' | ']' | '&' | '~' | '#' | '|' => true,
            '_' => !inside_word,
            '-' | '+' | '=' => opens_line,
            '.' | ')' => ends_number,
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(ch);
        if ch == '\n' {
            line_start = at + 1;
        }
    }
    out
}

/// Text as a Markdown code span that holds it whole: the fence is one backtick longer than
/// the longest run of backticks inside, so no backtick in the text can close it, and a space
/// pads a text that starts or ends with a backtick or a space (CommonMark takes one away from
/// each end). Inside a code span nothing is markup: `<svg …>` stays text.
pub(crate) fn markdown_code(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    let longest = one_line
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one_line.starts_with(['`', ' ']) || one_line.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

/// Head `head`'s matrix as a GitHub-flavoured Markdown table.
pub(crate) fn write_markdown_table_in(
    out: &mut dyn Write,
    attention: &Attention,
    name: MatrixName,
    (head, token): (usize, usize),
    decimals: usize,
) -> io::Result<()> {
    let Some(matrix) = attention.matrix_at(name, head, token) else {
        return Ok(());
    };
    let escape = markdown_text;
    write!(out, "| |")?;
    for c in 0..matrix.ncols() {
        write!(out, " {} |", escape(&attention.column_label(name, c)))?;
    }
    write!(out, "\n|---|")?;
    for _ in 0..matrix.ncols() {
        write!(out, "---:|")?;
    }
    writeln!(out)?;
    for (r, row) in matrix.row_iter().enumerate() {
        write!(
            out,
            "| **{}** |",
            escape(&attention.row_label_at(name, r, token))
        )?;
        for value in row.iter() {
            write!(out, " {} |", format_fixed(*value, decimals))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(text.width())))
}

fn pad_right(text: &str, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(text.width())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_text_shows_lesson_text_literally() {
        assert_eq!(
            markdown_text("*x* and W_q, _y_ | [c]\n# no heading\n- no item\n 12. nor this"),
            "\\*x\\* and W_q, \\_y\\_ \\| \\[c\\]\n\\# no heading\n\\- no item\n 12\\. nor this"
        );
    }

    #[test]
    fn markdown_text_leaves_no_link_or_tag() {
        assert_eq!(
            markdown_text("[x](javascript:alert(1)) <svg onload=1> &lt;"),
            "\\[x\\](javascript:alert(1)) \\<svg onload=1\\> \\&lt;"
        );
    }

    #[test]
    fn a_code_span_outlasts_every_backtick_inside() {
        assert_eq!(markdown_code("a·b"), "`a·b`");
        assert_eq!(markdown_code("`<svg onload='1"), "`` `<svg onload='1 ``");
        assert_eq!(markdown_code("x ``` y ` z"), "````x ``` y ` z````");
    }
}
