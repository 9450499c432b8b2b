//! Fitting text into columns: truncation with an ellipsis, and wrapping a sum between its terms.

use crate::lesson::text::columns;

pub(crate) use crate::lesson::text::fit;

/// `text` cut to `width` columns and padded with spaces on the right to exactly `width`.
pub(crate) fn pad_right(text: &str, width: usize) -> String {
    let text = fit(text, width);
    let pad = width.saturating_sub(columns(&text));
    format!("{text}{}", " ".repeat(pad))
}

/// `text` cut to `width` columns and padded with spaces on the left to exactly `width`.
pub(crate) fn pad_left(text: &str, width: usize) -> String {
    let text = fit(text, width);
    let pad = width.saturating_sub(columns(&text));
    format!("{}{text}", " ".repeat(pad))
}

/// Lays `pieces` out in lines of at most `width` columns, joined by `joiner`, breaking only
/// between pieces (a piece wider than a line gets a line of its own, cut).
pub(crate) fn wrap_pieces(
    first_prefix: &str,
    pieces: &[String],
    joiner: &str,
    width: usize,
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first_prefix.to_string();
    let indent = " ".repeat(columns(first_prefix).min(width / 2));
    let trailing = columns(joiner.trim_end());
    for (index, piece) in pieces.iter().enumerate() {
        let separator = if index == 0 { "" } else { joiner };
        let candidate = format!("{line}{separator}{piece}");
        let room_after = if index + 1 == pieces.len() {
            0
        } else {
            trailing
        };
        if columns(&candidate) + room_after <= width || index == 0 {
            line = candidate;
        } else {
            lines.push(format!("{line}{}", joiner.trim_end()));
            line = format!("{indent}{piece}");
        }
    }
    lines.push(line);
    // A single piece wider than the line (a long formula) wraps at its spaces instead of
    // being cut.
    lines
        .into_iter()
        .flat_map(|line| {
            if columns(&line) <= width {
                vec![line]
            } else {
                let wrapped = wrap_formula(&line, width.saturating_sub(indent.len()).max(8));
                wrapped
                    .into_iter()
                    .enumerate()
                    .map(|(index, part)| {
                        if index == 0 {
                            part
                        } else {
                            format!("{indent}{part}")
                        }
                    })
                    .map(|part| fit(&part, width))
                    .collect()
            }
        })
        .collect()
}

/// A formula wrapped at its spaces, the least nested first: a bracketed group (`[snow, rain]`,
/// a term of `max(…)`) is broken only when a part of it is wider than a line, and never right
/// after its opening bracket.
pub(crate) fn wrap_formula(text: &str, width: usize) -> Vec<String> {
    let deepest = formula_atoms(text, usize::MAX).1;
    let atoms = (0..=deepest)
        .map(|depth| formula_atoms(text, depth).0)
        .find(|atoms| atoms.iter().all(|atom| columns(atom) <= width))
        .unwrap_or_else(|| formula_atoms(text, deepest).0);
    let mut lines = Vec::new();
    let mut line = String::new();
    for atom in atoms {
        if line.is_empty() {
            line = atom.to_string();
        } else if columns(&line) + 1 + columns(atom) <= width {
            line.push(' ');
            line.push_str(atom);
        } else {
            lines.push(std::mem::take(&mut line));
            line = atom.to_string();
        }
    }
    lines.push(line);
    lines.into_iter().map(|line| fit(&line, width)).collect()
}

/// A formula's parts between the spaces it may break at, those inside at most `depth` brackets
/// and not right after an opening one; with the deepest nesting of any space.
fn formula_atoms(text: &str, depth: usize) -> (Vec<&str>, usize) {
    let mut atoms = Vec::new();
    let (mut nesting, mut deepest, mut start) = (0usize, 0usize, 0);
    let mut previous = ' ';
    for (index, ch) in text.char_indices() {
        match ch {
            '(' | '[' | '{' => nesting += 1,
            ')' | ']' | '}' => nesting = nesting.saturating_sub(1),
            ' ' if !matches!(previous, '(' | '[' | '{' | ' ') => {
                deepest = deepest.max(nesting);
                if nesting <= depth {
                    atoms.push(&text[start..index]);
                    start = index + 1;
                }
            }
            _ => {}
        }
        previous = ch;
    }
    atoms.push(&text[start..]);
    (atoms, deepest)
}

/// Plain word wrapping for prose.
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let words: Vec<String> = paragraph.split(' ').map(str::to_string).collect();
        let mut line = String::new();
        for word in words {
            if line.is_empty() {
                line = word;
            } else if columns(&line) + 1 + columns(&word) <= width {
                line.push(' ');
                line.push_str(&word);
            } else {
                lines.push(std::mem::take(&mut line));
                line = word;
            }
        }
        lines.push(line);
    }
    lines.into_iter().map(|line| fit(&line, width)).collect()
}

/// Lays out a status message in at most `max_lines` lines: the last `last_width` columns wide
/// (it shares its row with a badge), the ones above it `width`. Lines break only between words,
/// and they are filled from the end, so what a message ends with (its choices, a command to
/// type) stays together on the bottom row. A message longer than all the lines keeps its
/// beginning and its end and gives up words in the middle, marked "…". A cell's name
/// (`K_cache[the₁, 1]`) is one word: its space inside brackets is not a place to break.
pub(crate) fn wrap_to_end(
    text: &str,
    width: usize,
    last_width: usize,
    max_lines: usize,
) -> Vec<String> {
    let words = words_outside_brackets(text);
    let mut end = words.len();
    // From the bottom line up: each takes the last words that fit.
    let mut lines: Vec<String> = Vec::new();
    while end > 0 && lines.len() < max_lines.max(1) {
        let room = if lines.is_empty() { last_width } else { width };
        let mut start = end;
        while start > 0 {
            let candidate = words[start - 1..end].join(" ");
            if columns(candidate.trim()) > room && start < end {
                break;
            }
            start -= 1;
        }
        lines.push(fit(words[start..end].join(" ").trim(), room));
        end = start;
    }
    if end > 0 {
        // Words are left over: the top line shows the beginning instead, up to a "…".
        let room = if lines.len() == 1 { last_width } else { width };
        let mut top = String::new();
        for word in &words {
            let candidate = format!("{top} {word}");
            if columns(candidate.trim()) + 2 > room {
                break;
            }
            top = candidate;
        }
        let last = lines.len() - 1;
        lines[last] = fit(&format!("{} …", top.trim()), room);
        lines.reverse();
        return lines;
    }
    lines.reverse();
    balance(lines, width)
}

/// Evens out the lines of a message that fits whole: filled from the end, the top line gets
/// only what is left over ("Practice:" alone above a full line). A line's first word moves up
/// while the line above has room for it and the longer of the two gets shorter.
fn balance(mut lines: Vec<String>, width: usize) -> Vec<String> {
    for upper in 0..lines.len().saturating_sub(1) {
        loop {
            let below = words_outside_brackets(&lines[upper + 1]);
            if below.len() < 2 {
                break;
            }
            let raised = format!("{} {}", lines[upper], below[0]);
            let rest = below[1..].join(" ");
            let (raised, rest) = (raised.trim().to_string(), rest.trim().to_string());
            let before = columns(&lines[upper]).max(columns(&lines[upper + 1]));
            if columns(&raised) > width || columns(&raised).max(columns(&rest)) >= before {
                break;
            }
            lines[upper] = raised;
            lines[upper + 1] = rest;
        }
    }
    lines
}

/// `text` split at its spaces, except those inside square brackets.
fn words_outside_brackets(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (index, ch) in text.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => {
                words.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    // A bracket never closed (typed by the learner: `12[3`) joins nothing: the rest breaks at
    // its spaces, so the message's end is not one word too long for any line.
    if depth > 0 {
        words.extend(text[start..].split(' '));
    } else {
        words.push(&text[start..]);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formula_breaks_between_its_terms_not_inside_a_bracket() {
        let text = "m⁽¹⁾[snow] = max(m_old, masked⁽¹⁾[snow, sun], masked⁽¹⁾[snow, rain], \
                    masked⁽¹⁾[snow, wind], masked⁽¹⁾[snow, snow])";
        let lines = wrap_formula(text, 70);
        assert_eq!(
            lines,
            [
                "m⁽¹⁾[snow] = max(m_old, masked⁽¹⁾[snow, sun], masked⁽¹⁾[snow, rain],",
                "masked⁽¹⁾[snow, wind], masked⁽¹⁾[snow, snow])"
            ]
        );
        // A term wider than the line breaks inside, but never right after its "(".
        for line in wrap_formula("f( a, b) + (-0.44498 × 1.5)", 10) {
            assert!(!line.ends_with('('), "{line}");
        }
    }

    #[test]
    fn a_status_message_is_not_broken_inside_a_cells_name() {
        let text =
            "K_cache[the₁, 1] is computed, not typed in. Enter: go to k_t[the₁, 1] · Esc stay";
        for width in 17..40 {
            let lines = wrap_to_end(text, width, width, 8);
            assert_eq!(lines.join(" "), text, "{width}: {lines:?}");
            for line in &lines {
                assert_eq!(
                    line.matches('[').count(),
                    line.matches(']').count(),
                    "{lines:?}"
                );
            }
        }
        // An unclosed bracket (typed by the learner) joins nothing: what follows it still
        // breaks at its spaces.
        assert_eq!(words_outside_brackets("a] b [c d"), ["a]", "b", "[c", "d"]);
    }

    #[test]
    fn long_text_ends_in_an_ellipsis() {
        assert_eq!(fit("softmax", 4), "sof…");
        assert_eq!(fit("cat", 4), "cat");
    }

    #[test]
    fn padding_counts_terminal_columns_not_characters() {
        assert_eq!(pad_right("猫", 4), "猫  ");
        assert_eq!(pad_left("cafe\u{301}", 6), "  cafe\u{301}");
    }

    #[test]
    fn sums_break_between_terms() {
        let pieces: Vec<String> = ["(1 × 2)", "(3 × 4)", "(5 × 6)"].map(String::from).to_vec();
        assert_eq!(
            wrap_pieces("= ", &pieces, " + ", 21),
            vec!["= (1 × 2) + (3 × 4) +", "  (5 × 6)"]
        );
    }

    #[test]
    fn status_messages_fill_from_the_end_and_give_up_their_middle() {
        assert_eq!(
            wrap_to_end("one two three", 20, 20, 2),
            vec!["one two three"]
        );
        assert_eq!(
            wrap_to_end("join with  ssh -p 1 N@h", 20, 14, 2),
            vec!["join with", "ssh -p 1 N@h"]
        );
        assert_eq!(
            wrap_to_end("a b c d e f g h i j", 5, 5, 2),
            vec!["a b …", "h i j"]
        );
    }

    #[test]
    fn a_status_message_that_fits_is_shared_evenly_between_its_lines() {
        // Filled from the end alone, the top line held "Practice:" and the bottom the rest.
        let text = "Practice: the cells marked ? hide their numbers; type yours and Enter";
        let lines = wrap_to_end(text, 40, 40, 2);
        assert_eq!(lines.join(" "), text);
        let (top, bottom) = (columns(&lines[0]), columns(&lines[1]));
        assert!(top.abs_diff(bottom) <= 12, "{lines:?}");
        assert!(lines.iter().all(|line| columns(line) <= 40), "{lines:?}");
    }

    #[test]
    fn prose_wraps_at_spaces() {
        assert_eq!(wrap_words("one two three", 8), vec!["one two", "three"]);
    }
}
