//! Each key's reader, as the table of keys (`lesson::schema`) names it, and the draft of the
//! lesson they fill in. The parser walks the keys in the table's reading order
//! (`schema::READING_ORDER`): each key's entry names the keys its reader checks against
//! (`after`), and a reader reads its key's value and checks it against what those keys left
//! in the draft (the tokens count a matrix's rows, the mask decides whether generation can
//! be), so a new key is its table entry and its reader here.

use super::{Diagnostic, Entries, Reader};
use crate::lesson::limits::{MAX_SOURCE_CHARS, MAX_SUMMARY_CHARS};
use crate::lesson::text::TITLE_ROOM;
use crate::lesson::{
    Biases, Expected, InputMatrix, Inputs, Lesson, Mask, Narration, NormInputs, Parts,
    PositionInputs, RopePairing, shape_of,
};
use crate::ops::Rope;
use crate::pipeline::{Heads, Plan, Step};

/// How a key of the table is read.
pub(crate) enum Read {
    /// By its own reader, once every key its value is checked against (`after`) is read. The
    /// tables (`[narration]`, `[expected]`) are read after every other key: they speak of the
    /// lesson's plan, which every key may change.
    Own {
        read: ReadKey,
        after: &'static [&'static str],
    },
    /// By the reader of the key named, with the matrices whose shapes it must agree with.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the name is for the test that every key is read")
    )]
    With(&'static str),
}

/// A key's reader: reads its value from the file's keys, says its problems, and fills in its
/// part of the draft.
pub(crate) type ReadKey = fn(&mut Reader<'_>, &mut Entries<'_, '_>, &mut Draft);

/// The lesson as read so far: each reader fills in its key's part, `None` where the key could
/// not be read (and said so).
#[derive(Default)]
pub(crate) struct Draft {
    /// Lesson keys found inside `[narration]` or `[expected]`, read as lesson keys.
    misplaced: Vec<String>,
    format: Option<u32>,
    title: Option<String>,
    source: Option<String>,
    summary: Option<String>,
    tokens: Option<Vec<String>>,
    token_ids: Option<Option<Vec<u64>>>,
    source_tokens: Option<Vec<String>>,
    cross: bool,
    heads: Option<Heads>,
    inputs: Option<Inputs>,
    query_width: Option<super::inputs::QueryWidth>,
    w_o: Option<InputMatrix>,
    grad_output: Option<InputMatrix>,
    source_embeddings: Option<InputMatrix>,
    /// The matrices agree with one another and with the heads, so the lesson has a plan.
    fits: bool,
    grad_output_fits: bool,
    positions: Option<PositionInputs>,
    rope_pairing: Option<RopePairing>,
    rope_theta: Option<f64>,
    scale: bool,
    mask: Option<Mask>,
    decode: Option<bool>,
    norm: Option<Option<NormInputs>>,
    biases: Option<Biases>,
    tile: Option<usize>,
    decimals: usize,
    focus: Option<Option<usize>>,
    /// Made once, when the first reader that needs it asks (`Draft::plan`).
    plan: Option<Option<Plan>>,
    narration: Narration,
    expected: Option<Expected>,
}

impl Draft {
    pub(super) fn with_misplaced(misplaced: Vec<String>) -> Draft {
        Draft {
            misplaced,
            ..Draft::default()
        }
    }

    fn token_count(&self) -> Option<usize> {
        self.tokens.as_ref().map(Vec::len)
    }

    fn source_len(&self) -> Option<usize> {
        self.source_tokens.as_ref().map(Vec::len)
    }

    /// The lesson's plan, when its inputs, heads and positions could be read: narration for a
    /// step it lacks is never shown, and a figure of a matrix it does not make cannot be
    /// checked. What no lesson can be (`Shape::refusal`) is said here when no reader has said
    /// it in its own words.
    fn plan(&mut self, reader: &mut Reader<'_>, entries: &Entries<'_, '_>) -> Option<&Plan> {
        if self.plan.is_none() {
            let shape = match (&self.inputs, &self.positions, self.heads) {
                (Some(inputs), Some(positions), Some(heads)) if self.fits => {
                    Some(shape_of(&Parts {
                        inputs,
                        positions,
                        rope: Rope {
                            pairing: self.rope_pairing.unwrap_or_default(),
                            theta: self.rope_theta.unwrap_or(crate::lesson::DEFAULT_ROPE_THETA),
                        },
                        scale: self.scale,
                        masked: !matches!(self.mask, Some(Mask::None)),
                        heads,
                        w_o: self.w_o.is_some(),
                        cross: self.cross,
                        decode: self.decode.unwrap_or(false),
                        norm: self.norm.clone().flatten().map(|norm| norm.kind),
                        biases: self.biases.clone().unwrap_or_default().given(),
                        backward: self.grad_output.is_some(),
                    }))
                }
                _ => None,
            };
            let refused = shape.and_then(|shape| shape.refusal());
            if let Some(refusal) = refused
                && !reader.diagnostics.iter().any(Diagnostic::is_error)
            {
                let span = entries.get(refusal.key).map_or(0..0, |(span, _)| span);
                reader.error(Diagnostic::error(span, refusal.why).help(refusal.help));
            }
            self.plan = Some(shape.filter(|_| refused.is_none()).map(Plan::new));
        }
        self.plan.as_ref().and_then(Option::as_ref)
    }

    /// The lesson, when every key could be read.
    pub(super) fn lesson(self) -> Option<Lesson> {
        if !self.grad_output_fits {
            return None;
        }
        Some(Lesson {
            title: self.title?,
            source: self.source.unwrap_or_default(),
            summary: self.summary.unwrap_or_default(),
            tokens: self.tokens?,
            token_ids: self.token_ids?,
            source_tokens: if self.cross {
                self.source_tokens?
            } else {
                Vec::new()
            },
            inputs: self.inputs?,
            source_embeddings: self.source_embeddings,
            scale: self.scale,
            mask: self.mask?,
            decode: self.decode?,
            norm: self.norm?,
            biases: self.biases?,
            tile: self.tile?,
            positions: self.positions?,
            rope_pairing: self.rope_pairing?,
            rope_theta: self.rope_theta?,
            format: self.format?,
            heads: self.heads?,
            w_o: self.w_o,
            grad_output: self.grad_output,
            focus: self.focus?,
            decimals: self.decimals,
            narration: self.narration,
            expected: self.expected?,
        })
    }
}

pub(crate) fn read_format(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.format = reader.format(entries.get("format"));
    // Said once, as a key of format 2, not again as a source without its tokens.
    if let Some((span, _)) = entries.get("source_embeddings")
        && !reader.of_its_format("source_embeddings", span, draft.format)
    {
        entries
            .list
            .retain(|(name, ..)| *name != "source_embeddings");
    }
}

pub(crate) fn read_title(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.title = reader.text_field(entries.get("title"), "title", Some(TITLE_ROOM), None, true);
}

pub(crate) fn read_source(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.source = reader.text_field(
        entries.get("source"),
        "source",
        None,
        Some(MAX_SOURCE_CHARS),
        false,
    );
}

pub(crate) fn read_summary(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.summary = reader.text_field(
        entries.get("summary"),
        "summary",
        None,
        Some(MAX_SUMMARY_CHARS),
        false,
    );
}

pub(crate) fn read_tokens(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.tokens = reader.tokens(entries.get("tokens"));
}

pub(crate) fn read_token_ids(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.token_ids = reader.token_ids(entries.get("token_ids"), draft.format, draft.token_count());
}

pub(crate) fn read_source_tokens(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    let entry = entries.get("source_tokens");
    draft.source_tokens = reader.source_tokens(entry.clone());
    draft.cross = entry.is_some();
    if let Some((span, _)) = entry {
        reader.of_its_format("source_tokens", span, draft.format);
    }
}

/// `heads` and `kv_heads` together: G must divide H.
pub(crate) fn read_heads(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.heads = reader.heads(entries, draft.format);
}

/// Every input matrix together (`embeddings`, the weights, or `q`, `k`, `v`; `w_o`, the
/// source's embeddings and `grad_output`): their shapes must agree with one another, the
/// tokens and the heads.
pub(crate) fn read_inputs(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    let (read, query_width) = reader.inputs(
        entries,
        draft.token_count(),
        (draft.cross, draft.source_len()),
        draft.heads,
    );
    draft.query_width = query_width;
    if let Some(read) = read {
        draft.inputs = Some(read.inputs);
        draft.w_o = read.w_o;
        draft.grad_output = read.grad_output;
        draft.source_embeddings = read.source_embeddings;
    }
    let heads = draft.heads;
    draft.grad_output_fits = reader.grad_output_fits(
        entries.get("grad_output"),
        draft.format,
        draft.grad_output.as_ref(),
        (draft.w_o.as_ref(), draft.inputs.as_ref(), heads),
    );
    // The keys' tokens: the source's in cross-attention.
    let key_len = if draft.cross {
        draft.source_len()
    } else {
        draft.token_count()
    };
    let w_o_needed = heads.is_none_or(|heads| {
        let d_v = draft
            .inputs
            .as_ref()
            .map(|inputs| inputs.all_groups_d_v() / heads.kv);
        reader.w_o_needed(entries, heads, d_v)
    });
    let heads_fit = match (heads, draft.token_count(), key_len, &draft.inputs) {
        (Some(heads), Some(tokens), Some(keys), Some(inputs)) => {
            reader.heads_fit(entries, heads, (tokens, keys), inputs, draft.w_o.as_ref())
        }
        _ => true,
    };
    draft.fits = w_o_needed && heads_fit;
}

pub(crate) fn read_positions(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    let query_heads = draft
        .heads
        .map(|heads| heads.query)
        .or_else(|| Reader::query_heads_written(entries));
    draft.positions = reader.positions(
        entries.get("positions"),
        draft.format,
        draft.token_count(),
        (draft.inputs.as_ref(), draft.query_width),
        query_heads,
        draft.cross,
    );
}

pub(crate) fn read_rope_pairing(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.rope_pairing = reader.rope_pairing(
        entries.get("rope_pairing"),
        draft.format,
        draft.positions.as_ref(),
    );
}

pub(crate) fn read_rope_theta(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.rope_theta = reader.rope_theta(
        entries.get("rope_theta"),
        draft.format,
        draft.positions.as_ref(),
    );
}

pub(crate) fn read_scale(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.scale = reader
        .boolean(entries.get("scale"), "scale")
        .unwrap_or(true);
}

pub(crate) fn read_mask(reader: &mut Reader<'_>, entries: &mut Entries<'_, '_>, draft: &mut Draft) {
    draft.mask = reader.mask(
        entries.get("mask"),
        draft.token_count(),
        (draft.cross, draft.source_len()),
    );
}

pub(crate) fn read_decode(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.decode = reader.decode(
        entries.get("decode"),
        draft.format,
        draft.mask.as_ref(),
        draft.cross,
    );
}

/// `norm` with `norm_gain`, `norm_bias` and `norm_epsilon` (format 2): no norm when absent.
pub(crate) fn read_norm(reader: &mut Reader<'_>, entries: &mut Entries<'_, '_>, draft: &mut Draft) {
    draft.norm = reader.norm(entries, draft.format, draft.inputs.as_ref());
}

/// `b_q`, `b_k`, `b_v` and `b_o` together (format 2): none when absent.
pub(crate) fn read_biases(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.biases = reader.biases(
        entries,
        draft.format,
        (draft.inputs.as_ref(), draft.heads, draft.w_o.as_ref()),
    );
}

pub(crate) fn read_tile(reader: &mut Reader<'_>, entries: &mut Entries<'_, '_>, draft: &mut Draft) {
    draft.tile = reader.tile(entries.get("tile"), draft.format);
}

pub(crate) fn read_decimals(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.decimals = reader.decimals(entries.get("decimals"));
}

pub(crate) fn read_focus(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.focus = reader.focus(
        entries.get("focus"),
        draft.tokens.as_deref(),
        draft.source_tokens.as_deref(),
    );
}

pub(crate) fn read_narration(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    let steps = draft.plan(reader, entries).map(Step::all_in);
    draft.narration = reader.narration(
        entries.get("narration"),
        &draft.mask,
        &draft.misplaced,
        steps.as_deref(),
    );
}

pub(crate) fn read_expected(
    reader: &mut Reader<'_>,
    entries: &mut Entries<'_, '_>,
    draft: &mut Draft,
) {
    draft.plan(reader, entries);
    let plan = draft.plan.as_ref().and_then(Option::as_ref);
    draft.expected = reader.expected(
        entries.get("expected"),
        &draft.misplaced,
        &super::expected::Lengths {
            tokens: draft.tokens.as_deref(),
            source_tokens: if draft.cross {
                draft.source_tokens.as_deref()
            } else {
                draft.tokens.as_deref()
            },
            cross: draft.cross,
            inputs: draft.inputs.as_ref(),
            heads: draft.heads,
            w_o: draft.w_o.as_ref(),
            scale: draft.scale,
            plan,
        },
    );
}
