//! Writing lessons: a whole lesson as TOML, a frozen copy of a file and the `new` template. Files
//! are written through `atomic`.

use std::fmt;

use nalgebra::DMatrix;
use toml::de::{DeTable, DeValue};

use super::text::printable_lines;
use super::{InputMatrix, Lesson, Mask};
use crate::pipeline::{MatrixName, Step};

/// A number as TOML: the shortest text that reads back to the same f64.
fn toml_number(value: f64) -> String {
    if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else if value.abs() >= 1e15 {
        // Only a mask's bias is this large (-1e9 is not; f32::MIN is): `{:e}` round-trips
        // exactly and stays short where `{}` writes every digit.
        format!("{value:e}")
    } else {
        // `{}` never writes an exponent and round-trips exactly; lesson numbers other than a
        // mask's are bounded by 1e6, so the text stays short.
        format!("{value}")
    }
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Counts the bytes written to it and keeps none: how big a file would be, before making it.
#[derive(Default)]
struct ByteCount(usize);

impl fmt::Write for ByteCount {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.0 += text.len();
        Ok(())
    }
}

/// A matrix as TOML, one row per line.
fn write_matrix(out: &mut dyn fmt::Write, matrix: &DMatrix<f64>) -> fmt::Result {
    out.write_str("[\n")?;
    for row in matrix.row_iter() {
        out.write_str("  [")?;
        for (col, value) in row.iter().enumerate() {
            if col > 0 {
                out.write_str(", ")?;
            }
            out.write_str(&toml_number(*value))?;
        }
        out.write_str("],\n")?;
    }
    out.write_str("]")
}

/// Whether a matrix still holds exactly its generator's numbers.
fn is_as_generated(input: &InputMatrix) -> bool {
    input
        .generator
        .is_some_and(|generator| generator.generate() == *input.values)
}

fn write_matrix_input(out: &mut dyn fmt::Write, input: &InputMatrix) -> fmt::Result {
    match input.generator {
        // An edited generated matrix is written out literally: its numbers are no longer the
        // recipe's.
        Some(generator) if is_as_generated(input) => out.write_str(&generator.to_toml()),
        _ => write_matrix(out, &input.values),
    }
}

/// The whole lesson as a lesson file, as the tutor saves an edited lesson.
pub fn lesson_to_toml(lesson: &Lesson) -> String {
    let mut out = String::new();
    let _ = write_lesson(&mut out, lesson);
    out
}

/// How many bytes `lesson_to_toml` would write, without writing them: an edited 1024 × 1024
/// matrix is over 20 MB of text, which a save must refuse before making it.
pub fn lesson_toml_bytes(lesson: &Lesson) -> usize {
    let mut count = ByteCount::default();
    let _ = write_lesson(&mut count, lesson);
    count.0
}

/// The lesson with every generated matrix that was edited set back to its generator's numbers,
/// and the names of those matrices: what a save can keep when the edits make the file too large.
pub fn keep_generators(lesson: &Lesson) -> (Lesson, Vec<MatrixName>) {
    let mut kept = lesson.clone();
    let mut dropped = Vec::new();
    for (name, input) in lesson.inputs() {
        if let Some(generator) = input.generator
            && !is_as_generated(input)
            && let Some(target) = kept.input_mut(name)
        {
            *target = InputMatrix::generated(generator);
            dropped.push(name);
        }
    }
    (kept, dropped)
}

fn write_lesson(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    writeln!(
        out,
        "# Written by attn-tutor. The lesson format is described in docs/lesson-format.md."
    )?;
    for key in &super::schema::KEYS {
        (key.write)(out, lesson)?;
    }
    Ok(())
}

// Each key's writer, as `schema::KEYS` lists them. A key the lesson leaves at its default is
// written only where saying it helps a reader of the file.

pub(super) fn write_format(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    // A tile changed in the tutor (`b`, `B`) is a format 2 key: a format 1 lesson saved with it
    // becomes format 2 (everything of format 1 reads the same there), or it would not load.
    // So are a norm, biases and token ids, which a lesson made in code (an import) may have at
    // format 1.
    let format_2 = lesson.tile != super::limits::DEFAULT_TILE
        || lesson.norm.is_some()
        || lesson.biases.given().any()
        || lesson.token_ids.is_some();
    let format = if format_2 {
        lesson.format.max(2)
    } else {
        lesson.format
    };
    writeln!(out, "format = {format}")
}

pub(super) fn write_title(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    writeln!(out, "title = {}", toml_string(&lesson.title))
}

pub(super) fn write_source(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    writeln!(out, "source = {}", toml_string(&lesson.source))
}

pub(super) fn write_summary(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    writeln!(out, "summary = {}", toml_string(&lesson.summary))
}

pub(super) fn write_tokens(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    let tokens: Vec<String> = lesson.tokens.iter().map(|t| toml_string(t)).collect();
    writeln!(out, "\ntokens = [{}]", tokens.join(", "))
}

pub(super) fn write_token_ids(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    let Some(ids) = &lesson.token_ids else {
        return Ok(());
    };
    let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
    writeln!(out, "token_ids = [{}]", ids.join(", "))
}

pub(super) fn write_source_tokens(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if !lesson.is_cross() {
        return Ok(());
    }
    let source: Vec<String> = lesson
        .source_tokens
        .iter()
        .map(|t| toml_string(t))
        .collect();
    writeln!(out, "source_tokens = [{}]", source.join(", "))
}

/// The lesson's matrix `name`, when it has one.
pub(super) fn write_input(
    out: &mut dyn fmt::Write,
    lesson: &Lesson,
    name: MatrixName,
) -> fmt::Result {
    let Some(input) = lesson.input(name) else {
        return Ok(());
    };
    write!(out, "{} = ", name.key())?;
    write_matrix_input(out, input)?;
    writeln!(out)
}

/// A learned positions matrix as a matrix; the other kinds by name.
pub(super) fn write_positions(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.input(MatrixName::Positions).is_some() {
        return write_input(out, lesson, MatrixName::Positions);
    }
    match lesson.positions.kind().key().filter(|_| lesson.format >= 2) {
        Some(kind) => writeln!(out, "positions = {}", toml_string(kind)),
        None => Ok(()),
    }
}

// RoPE's pairing and base are written only where they are not the default: a lesson that
// does not rotate has neither.

pub(super) fn write_rope_pairing(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.positions == super::PositionInputs::Rope
        && lesson.rope_pairing != super::RopePairing::default()
    {
        writeln!(
            out,
            "rope_pairing = {}",
            toml_string(lesson.rope_pairing.key())
        )?;
    }
    Ok(())
}

pub(super) fn write_rope_theta(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.positions == super::PositionInputs::Rope
        && lesson.rope_theta.to_bits() != super::DEFAULT_ROPE_THETA.to_bits()
    {
        writeln!(out, "rope_theta = {}", toml_number(lesson.rope_theta))?;
    }
    Ok(())
}

// Heads are written only when there are several, or fewer K/V groups than heads: a lesson of
// one head says nothing of heads (and stays a valid format 1 file when it was one).

pub(super) fn write_heads(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.heads.query > 1 {
        writeln!(out, "heads = {}", lesson.heads.query)?;
    }
    Ok(())
}

pub(super) fn write_kv_heads(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.heads.kv != lesson.heads.query {
        writeln!(out, "kv_heads = {}", lesson.heads.kv)?;
    }
    Ok(())
}

pub(super) fn write_scale(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    writeln!(out, "\nscale = {}", lesson.scale)
}

pub(super) fn write_mask(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    match &lesson.mask {
        Mask::None => writeln!(out, "mask = \"none\""),
        Mask::Causal => writeln!(out, "mask = \"causal\""),
        Mask::Matrix(matrix) => {
            out.write_str("mask = ")?;
            write_matrix(out, matrix)?;
            writeln!(out)
        }
    }
}

pub(super) fn write_decode(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.decode {
        writeln!(out, "decode = true")?;
    }
    Ok(())
}

/// `norm = "layer"` or `"rms"`, when the lesson has a norm.
pub(super) fn write_norm(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    match &lesson.norm {
        Some(norm) => writeln!(out, "norm = {}", toml_string(norm.kind.key())),
        None => Ok(()),
    }
}

/// ε, when it is not the default.
pub(super) fn write_norm_epsilon(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    match &lesson.norm {
        Some(norm) if norm.epsilon != super::DEFAULT_NORM_EPSILON => {
            writeln!(out, "norm_epsilon = {}", toml_number(norm.epsilon))
        }
        _ => Ok(()),
    }
}

/// A gain or a bias as a flat array of numbers, when the lesson gives it.
pub(super) fn write_vector(
    out: &mut dyn fmt::Write,
    lesson: &Lesson,
    name: MatrixName,
) -> fmt::Result {
    let Some(input) = lesson.input(name) else {
        return Ok(());
    };
    // The norm's γ of all 1 and β of all 0 are what a lesson without them has.
    let default = match name {
        MatrixName::NormGain => Some(1.0),
        MatrixName::NormBias => Some(0.0),
        _ => None,
    };
    if default.is_some_and(|default| input.values.iter().all(|value| *value == default)) {
        return Ok(());
    }
    write!(out, "{} = [", name.key())?;
    for (index, value) in input.values.iter().enumerate() {
        if index > 0 {
            out.write_str(", ")?;
        }
        out.write_str(&toml_number(*value))?;
    }
    writeln!(out, "]")
}

/// Only a lesson that changed it says its tile (and is written as format 2, above).
pub(super) fn write_tile(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.tile != super::limits::DEFAULT_TILE {
        writeln!(out, "tile = {}", lesson.tile)?;
    }
    Ok(())
}

/// By label when the label is one token's only, else by position.
pub(super) fn write_focus(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    let Some(focus) = lesson.focus else {
        return Ok(());
    };
    let label = &lesson.tokens[focus];
    if lesson.tokens.iter().filter(|t| *t == label).count() == 1 {
        writeln!(out, "focus = {}", toml_string(label))
    } else {
        writeln!(out, "focus = {}", focus + 1)
    }
}

pub(super) fn write_decimals(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    writeln!(out, "decimals = {}", lesson.decimals)
}

pub(super) fn write_narration(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if Step::ALL
        .iter()
        .all(|step| lesson.narration.get(*step).is_none())
    {
        return Ok(());
    }
    writeln!(out, "\n[narration]")?;
    for step in Step::ALL {
        if let Some(text) = lesson.narration.get(step) {
            writeln!(out, "{} = {}", step.key(), toml_string(text))?;
        }
    }
    Ok(())
}

pub(super) fn write_expected(out: &mut dyn fmt::Write, lesson: &Lesson) -> fmt::Result {
    if lesson.expected.tolerance.is_none()
        && lesson.expected.figures.is_empty()
        && lesson.expected.slips.is_empty()
    {
        return Ok(());
    }
    writeln!(out, "\n[expected]")?;
    if let Some(tolerance) = lesson.expected.tolerance {
        writeln!(out, "tolerance = {}", toml_number(tolerance))?;
    }
    if !lesson.expected.slips.is_empty() {
        writeln!(out, "slips = [")?;
        for slip in &lesson.expected.slips {
            writeln!(out, "  {},", toml_string(slip))?;
        }
        writeln!(out, "]")?;
    }
    for figure in &lesson.expected.figures {
        match figure.head {
            Some(head) => writeln!(
                out,
                "\n[expected.heads.{}.{}]",
                head + 1,
                figure.matrix.key()
            )?,
            None => writeln!(out, "\n[expected.{}]", figure.matrix.key())?,
        }
        for row in &figure.rows {
            let printed: Vec<&str> = row.values.iter().map(|n| n.text.as_str()).collect();
            writeln!(out, "\"{}\" = [{}]", row.row + 1, printed.join(", "))?;
        }
    }
    Ok(())
}

/// The lesson file with every generator replaced by the numbers it generates, keeping everything
/// else (comments included) as the author wrote it.
pub fn freeze(text: &str, lesson: &Lesson) -> String {
    let mut frozen = String::new();
    let _ = write_frozen(&mut frozen, text, lesson);
    frozen
}

/// How many bytes `freeze` would write, without writing them: a frozen 1024 × 1024 generator is
/// over 20 MB, more than a lesson file may be.
pub fn frozen_bytes(text: &str, lesson: &Lesson) -> usize {
    let mut count = ByteCount::default();
    let _ = write_frozen(&mut count, text, lesson);
    count.0
}

fn write_frozen(out: &mut dyn fmt::Write, text: &str, lesson: &Lesson) -> fmt::Result {
    let Ok(root) = DeTable::parse(text) else {
        return out.write_str(&printable_lines(text));
    };
    let mut generated: Vec<(std::ops::Range<usize>, &InputMatrix)> = Vec::new();
    for (key, value) in root.get_ref().iter() {
        let Some(name) = MatrixName::from_key(key.get_ref()) else {
            continue;
        };
        if let (DeValue::Table(_), Some(input)) = (value.get_ref(), lesson.input(name)) {
            generated.push((value.span(), input));
        }
    }
    generated.sort_by_key(|(span, _)| span.start);
    let mut written = 0;
    for (span, input) in generated {
        // Comments are copied as the author wrote them, but may hold characters that act on a
        // terminal (`freeze -o -` prints them); a lesson's strings cannot, so this changes only
        // comments.
        out.write_str(&printable_lines(&text[written..span.start]))?;
        write_matrix(out, &input.values)?;
        let generator = input.generator.map(|g| g.to_toml()).unwrap_or_default();
        write!(out, "  # generated by {generator}")?;
        written = span.end;
    }
    out.write_str(&printable_lines(&text[written..]))
}

/// The commented lesson `attn-tutor new` writes: small enough to read in one screen, and valid.
pub fn template(title: &str) -> String {
    TEMPLATE.replace("{TITLE}", &toml_string(title))
}

const TEMPLATE: &str = r#"# An attn-tutor lesson. Check it with:  attn-tutor check THIS_FILE
# Open it in the tutor with:           attn-tutor THIS_FILE
# Every key is described in docs/lesson-format.md.
format = 2
title = {TITLE}
source = "Where the example comes from: a book, a paper, a lecture"
summary = "One or two sentences shown in the lesson picker."

# One label per token (at most 16 columns wide each).
tokens = ["I", "like", "tea"]

# The embeddings X: one row per token (seq_len x d_model, here 3 x 4).
embeddings = [
  [1, 0, 1, 0],
  [0, 2, 0, 2],
  [1, 1, 1, 1],
]

# The projections: W_q and W_k are d_model x d_k, W_v is d_model x d_v (here all 4 x 3).
# Q = X W_q, K = X W_k, V = X W_v.
w_q = [
  [1, 0, 1],
  [1, 0, 0],
  [0, 0, 1],
  [0, 1, 1],
]
w_k = [
  [0, 0, 1],
  [1, 1, 0],
  [0, 1, 0],
  [1, 1, 0],
]
# Any matrix may be generated instead of typed: standard normal numbers from a seed.
w_v = { random = "normal", seed = 7, shape = [4, 3] }

# Word order: "none", "sinusoidal" (sin/cos of the position added to the embeddings),
# "rope" (queries and keys rotated by their position; needs an even d_k), or a 3 x 4 matrix
# of learned positions added to the embeddings.
positions = "none"

# Several heads: heads = H cuts the columns of w_q into H blocks side by side, one per head
# (head 1 takes the first d_k columns); kv_heads = G (dividing H; H by default, 1 for
# multi-query attention) cuts w_k and w_v into G blocks that the heads share, H/G heads each.
# With more than one head, w_o ((H*d_v) x d_out) projects the heads' outputs side by side.
# To try it, remove the # of the next two lines: three heads, each 1 column wide.
# heads = 3
# w_o = { random = "normal", seed = 3, shape = [3, 4] }

scale = true       # divide the scores by sqrt(d_k)
mask = "none"      # or "causal", or a 3 x 3 matrix of biases: 0 keeps, -inf hides
# decode = true    # with mask = "causal": the output made again one token at a time, with a
#                  # K/V cache (four generation steps at the end)
# tile = 2         # keys the online softmax (FlashAttention's) takes at a time
# The backward pass: dL/d(output) for L = sum of output * grad_output, one row per token and
# one column per output column (here d_v = 3). Remove the # to add the backward steps.
# grad_output = { random = "normal", seed = 9, shape = [3, 3] }
focus = "like"     # the row the tutor opens on
decimals = 3       # digits shown after the point

[narration]
# Optional: your own words for each step (embedding, positions, projection, rotation, scores,
# scaling, masking, softmax, all_heads, output, concat, output_projection, circuits,
# online_softmax, with decode new_token, kv_cache, decode_weights, decode_output, and with
# grad_output backward_output, backward_values, backward_softmax, backward_scaling,
# backward_scores, backward_rotation, backward_weights, backward_input). Steps without
# narration get a default text.
scores = "Each query meets every key: the dot product grows with how well they align and with how long they are."

# [expected]
# Figures as your source printed them; `attn-tutor check` compares them with the exact values.
# tolerance = 0.0005
# weights = [[...], [...], [...]]
# With several heads, each head's figures go under its number, counted from 1:
# [expected.heads.1]
# weights = [[...], [...], [...]]
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::{BUILTIN, load_text};

    /// The sizes a save and a freeze check against the limit are the sizes they write.
    #[test]
    fn measured_sizes_are_the_written_sizes() {
        let texts = BUILTIN.iter().map(|lesson| lesson.text.to_string()).chain([
            include_str!("../../../tests/fixtures/generated.toml").to_string(),
            include_str!("../../../tests/fixtures/medium-masked.toml").to_string(),
        ]);
        for text in texts {
            let lesson = load_text("x", None, text.clone()).unwrap().lesson;
            assert_eq!(lesson_toml_bytes(&lesson), lesson_to_toml(&lesson).len());
            assert_eq!(frozen_bytes(&text, &lesson), freeze(&text, &lesson).len());
        }
    }

    #[test]
    fn keeping_generators_names_only_the_edited_generated_matrices() {
        let text = include_str!("../../../tests/fixtures/generated.toml");
        let mut lesson = load_text("x", None, text.to_string()).unwrap().lesson;
        assert_eq!(keep_generators(&lesson).1, vec![]);
        let w_k = lesson.input_mut(MatrixName::WK).unwrap();
        std::sync::Arc::make_mut(&mut w_k.values)[(0, 0)] = 5.0;
        let (kept, dropped) = keep_generators(&lesson);
        assert_eq!(dropped, vec![MatrixName::WK]);
        assert!(is_as_generated(kept.input(MatrixName::WK).unwrap()));
    }
}
