//! `show --format json`: the lesson's matrices, every head's, the generation steps, the
//! online softmax's tiles, the backward pass and the explained cells as one JSON document,
//! written as it is made.

use std::io::{self, Write};

use nalgebra::{DMatrix, DMatrixView};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use super::{Section, Shown};
use crate::attention::{Attention, MatrixName, OnlineSoftmax, TileState};
use crate::pipeline::Per;

/// The top-level matrices show's JSON writes for every lesson, `null` when the lesson has not
/// got one (the source's two for cross-attention only), so that a program reading them finds
/// their keys in every document. Any other matrix at the top level is written only when the
/// lesson has it: a new matrix needs no line here.
const IN_EVERY_DOCUMENT: [MatrixName; 16] = [
    MatrixName::Embeddings,
    MatrixName::Positions,
    MatrixName::SourceEmbeddings,
    MatrixName::SourcePositions,
    MatrixName::WQ,
    MatrixName::WK,
    MatrixName::WV,
    MatrixName::Q,
    MatrixName::K,
    MatrixName::V,
    MatrixName::Scores,
    MatrixName::Scaled,
    MatrixName::Mask,
    MatrixName::Masked,
    MatrixName::Weights,
    MatrixName::WO,
];

/// The JSON document, serialized straight onto the writer. Its keys come in the order a
/// `serde_json::Map` sorts them (alphabetical), as the output had when it was built as a
/// `Value`, so the bytes are the same.
pub(super) fn write(out: &mut dyn Write, shown: &Shown<'_>) -> io::Result<()> {
    let Shown {
        loaded,
        attention,
        sections,
        asked,
    } = *shown;
    let compact = asked.compact;
    let lesson = &loaded.lesson;
    // Every section's derivations: with several heads, each head's, told apart by `head`;
    // each made as it is written (a large lesson's are tens of MB of text).
    let derivations = Derivations {
        sections,
        attention,
    };
    let mut fields: Vec<(&str, Field)> = vec![
        ("name", Field::Text(&loaded.name)),
        ("title", Field::Text(&lesson.title)),
        ("tokens", Field::Texts(&lesson.tokens)),
        // Cross-attention's source (null in self-attention, where the tokens are the keys).
        (
            "source_tokens",
            Field::OptionalTexts(lesson.is_cross().then_some(&lesson.source_tokens[..])),
        ),
        ("d_k", Field::Count(attention.d_k())),
        (
            "fully_masked_rows",
            Field::Counts(attention.fully_masked_rows().collect()),
        ),
        ("derivations", Field::Derivations(derivations)),
    ];
    // A tokenizer's ids, only in a lesson that has them (one made from a model's checkpoint).
    if let Some(ids) = &lesson.token_ids {
        fields.push(("token_ids", Field::Ids(ids)));
    }
    // Format 1's keys, each matrix of the lesson at the top level; `x` is the matrix that is
    // projected (the embeddings when nothing is added to them). A lesson's own matrix is given
    // whole, as the file has it (every head's W_q side by side); a matrix that is one head's is
    // given here only when there is one head, and is under `heads` always. `output` is the
    // lesson's answer: the heads' outputs projected by W_o when it has W_o.
    let one_head = attention.heads().query == 1;
    for name in MatrixName::ALL {
        let matrix = match name {
            MatrixName::X | MatrixName::SourceX | MatrixName::QRope | MatrixName::KRope => continue,
            // A generation step's matrices are under `decode`, one object per token, the
            // online softmax's under each head's `online`, one object per tile, and the
            // gradients under `backward`.
            name if name.kept_apart() || name.backward() => continue,
            // The source's own matrices only in cross-attention, where the source is.
            MatrixName::SourceEmbeddings | MatrixName::SourcePositions if !lesson.is_cross() => {
                continue;
            }
            MatrixName::Concat | MatrixName::Projected | MatrixName::WQK | MatrixName::WOV => {
                continue;
            }
            // A matrix added since, which some lessons have, only when the lesson has it.
            name if !IN_EVERY_DOCUMENT.contains(&name) && !attention.has(name) => continue,
            MatrixName::Output => attention.matrix(attention.plan.final_output()),
            _ => match lesson.input(name) {
                Some(input) => Some(&*input.values),
                None if one_head || name.per() == Per::Lesson => attention.matrix(name),
                None => None,
            },
        };
        fields.push((name.key(), Field::Matrix(matrix)));
    }
    // X and the source are what `[expected] x` and `source_x` are compared with: the
    // embeddings with their positions when they are added.
    let projected = attention.matrix(attention.figure_source(MatrixName::X));
    fields.push(("x", Field::Matrix(projected)));
    let source = Some(attention.figure_source(MatrixName::SourceX))
        .filter(|_| lesson.is_cross())
        .and_then(|name| attention.matrix(name));
    fields.push(("source_x", Field::Matrix(source)));
    // Each query head's matrices (a head's keys and values are its K/V group's), and the
    // heads' outputs side by side, which with one head and no W_o is that head's output.
    let heads = (0..attention.heads().query)
        .map(|head| head_fields(attention, head, lesson.tile))
        .collect();
    fields.push(("heads", Field::Heads(heads)));
    fields.push((
        "concat",
        Field::Matrix(
            attention
                .matrix(MatrixName::Concat)
                .or_else(|| attention.matrix(MatrixName::Output)),
        ),
    ));
    // Each step of generation written as it is made.
    fields.push((
        "decode",
        Field::Decode(attention.plan.shape.decode.then_some(attention)),
    ));
    // Present only with a backward pass (`grad_output`, or `--grad-seed`).
    if attention.plan.shape.backward {
        fields.push(("backward", Field::Object(backward_fields(attention))));
    }
    fields.sort_by_key(|(key, _)| *key);
    let document = Document(fields);
    let mut blocks = Blocks::new(out);
    if compact {
        document.serialize(&mut serde_json::Serializer::new(&mut blocks))
    } else {
        document.serialize(&mut serde_json::Serializer::with_formatter(
            &mut blocks,
            Indented::default(),
        ))
    }
    .map_err(io::Error::from)?;
    blocks.write_all(b"\n")?;
    blocks.flush()
}

/// Bytes kept in a block before they are handed on to the output.
const BLOCK: usize = 64 * 1024;

/// The JSON on its way to the output, a block at a time. serde_json writes each number as
/// several small pieces (the separator, the indentation, the digits); each written through
/// `&mut dyn Write` is a call that cannot be inlined, and on a large lesson those calls were a
/// third of the time. Here each piece is a copy into the block.
struct Blocks<'a> {
    block: Vec<u8>,
    out: &'a mut dyn Write,
}

impl<'a> Blocks<'a> {
    fn new(out: &'a mut dyn Write) -> Self {
        Blocks {
            block: Vec::with_capacity(BLOCK),
            out,
        }
    }

    #[cold]
    fn hand_on(&mut self) -> io::Result<()> {
        self.out.write_all(&self.block)?;
        self.block.clear();
        Ok(())
    }
}

impl Write for Blocks<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.block.len() + bytes.len() > BLOCK {
            self.hand_on()?;
            // A piece longer than a block (a long working) goes on as it is.
            if bytes.len() > BLOCK {
                return self.out.write_all(bytes);
            }
        }
        self.block.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.hand_on()?;
        self.out.flush()
    }
}

/// Levels of indentation written as one piece; deeper ones (no document has them) are
/// written a level at a time after those.
const INDENT_LEVELS: usize = 24;

/// ",\n" and the indentation of the deepest level `INDENT_LEVELS`: a new line at depth d is a
/// slice of it.
static NEW_LINE: [u8; 2 + 2 * INDENT_LEVELS] = {
    let mut line = [b' '; 2 + 2 * INDENT_LEVELS];
    line[0] = b',';
    line[1] = b'\n';
    line
};

/// serde_json's `PrettyFormatter` with its two spaces, byte for byte the same, but writing a
/// new line and its indentation as one piece instead of one piece per level (a number in an
/// online-softmax state is six levels deep).
#[derive(Default)]
struct Indented {
    depth: usize,
    /// Whether the array or object just ended held anything (`[]` and `{}` stay on one line).
    has_value: bool,
}

impl Indented {
    /// A new line at the current depth, after a comma unless `first`.
    #[inline]
    fn new_line<W: ?Sized + Write>(&self, writer: &mut W, first: bool) -> io::Result<()> {
        let levels = self.depth.min(INDENT_LEVELS);
        writer.write_all(&NEW_LINE[usize::from(first)..2 + 2 * levels])?;
        for _ in levels..self.depth {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Indented {
    /// An array or object begins: one level deeper, nothing in it yet.
    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    /// It ends: its closing bracket on a line of its own unless it was empty.
    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.new_line(writer, true)?;
        }
        writer.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Indented {
    #[inline]
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    #[inline]
    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    #[inline]
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.new_line(writer, first)
    }

    #[inline]
    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    #[inline]
    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    #[inline]
    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    #[inline]
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.new_line(writer, first)
    }

    #[inline]
    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    #[inline]
    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// One step of generation in the JSON: the new query (rotated with rope: as it meets the
/// cache), the caches after the step, the new weights, and the final output row. With several
/// heads the query and weights are per head and the caches per K/V group.
fn decode_fields(attention: &Attention, token: usize) -> Document<'_> {
    let heads = attention.heads();
    let query = if attention.has(MatrixName::QNewRope) {
        MatrixName::QNewRope
    } else {
        MatrixName::QNew
    };
    let per_head = |name: MatrixName| -> Field<'_> {
        if heads.query == 1 {
            Field::Row(attention.matrix_at(name, 0, token))
        } else {
            Field::List(
                (0..heads.query)
                    .map(|head| Field::Row(attention.matrix_at(name, head, token)))
                    .collect(),
            )
        }
    };
    let per_group = |name: MatrixName| -> Field<'_> {
        if heads.query == 1 {
            Field::View(attention.matrix_at(name, 0, token))
        } else {
            Field::List(
                (0..heads.kv)
                    .map(|group| {
                        Field::View(attention.matrix_at(name, heads.first_of_group(group), token))
                    })
                    .collect(),
            )
        }
    };
    Document(vec![
        ("k_cache", per_group(MatrixName::KCache)),
        (
            "output",
            Field::Row(attention.matrix_at(attention.plan.final_decode_output(), 0, token)),
        ),
        ("q", per_head(query)),
        ("v_cache", per_group(MatrixName::VCache)),
        ("weights", per_head(MatrixName::DecodeWeights)),
    ])
}

/// The backward pass in the JSON: each gradient shaped like what it is the gradient of (d_w_q
/// like w_q, every head's block side by side; d_w_k and d_w_v every K/V group's), a head's
/// own under `heads` (its d_k and d_v are its share, before a group's heads are added; d_q and
/// d_k are with respect to the projections, before any rotation; d_scores to the raw scores
/// Q·Kᵀ). Null where the lesson has no such matrix (d_concat and d_w_o without W_o, the
/// weights' and X's gradients when Q, K, V are given); d_b_q, d_b_k, d_b_v and d_b_o only
/// with their biases.
fn backward_fields(attention: &Attention) -> Document<'_> {
    let heads = attention.heads();
    // Every head's (or group's) block side by side, as the lesson's own matrix is laid out.
    let side_by_side = |name: MatrixName| -> Option<DMatrix<f64>> {
        if name.per() == Per::Lesson {
            return attention.matrix(name).cloned();
        }
        let blocks: Vec<&DMatrix<f64>> = heads
            .slot_heads(name.per())
            .map(|head| attention.matrix_in(name, head))
            .collect::<Option<_>>()?;
        let rows = blocks.first()?.nrows();
        let width: usize = blocks.iter().map(|block| block.ncols()).sum();
        let mut whole = DMatrix::zeros(rows, width);
        let mut start = 0;
        for block in blocks {
            whole.columns_mut(start, block.ncols()).copy_from(block);
            start += block.ncols();
        }
        Some(whole)
    };
    let d_scores = if attention.has(MatrixName::DScores) {
        MatrixName::DScores
    } else {
        MatrixName::DSoftmaxInput
    };
    let head_fields = (0..heads.query)
        .map(|head| {
            Document(vec![
                (
                    "d_k",
                    Field::Matrix(attention.matrix_in(MatrixName::DK, head)),
                ),
                (
                    "d_q",
                    Field::Matrix(attention.matrix_in(MatrixName::DQ, head)),
                ),
                (
                    "d_scores",
                    Field::Matrix(attention.matrix_in(d_scores, head)),
                ),
                (
                    "d_v",
                    Field::Matrix(attention.matrix_in(MatrixName::DV, head)),
                ),
                (
                    "d_weights",
                    Field::Matrix(attention.matrix_in(MatrixName::DWeights, head)),
                ),
            ])
        })
        .collect();
    // X's gradient: the three paths added, or in cross-attention the queries' path alone (the
    // source's is `d_source`).
    let d_x = if attention.plan.shape.cross {
        MatrixName::DXQ
    } else {
        MatrixName::DX
    };
    let mut fields = vec![
        (
            "d_concat",
            Field::Matrix(attention.matrix(MatrixName::DConcat)),
        ),
        (
            "d_output",
            Field::Matrix(attention.matrix(MatrixName::DOutput)),
        ),
        ("d_w_k", Field::Owned(side_by_side(MatrixName::DWK))),
        ("d_w_o", Field::Matrix(attention.matrix(MatrixName::DWO))),
        ("d_w_q", Field::Owned(side_by_side(MatrixName::DWQ))),
        ("d_w_v", Field::Owned(side_by_side(MatrixName::DWV))),
        ("d_x", Field::Matrix(attention.matrix(d_x))),
        ("heads", Field::Heads(head_fields)),
    ];
    // The source's gradient, beside the contract's keys, only where there is a source; a
    // bias's (one row, every head's or group's block side by side, as b_q is laid out) only
    // where the lesson has the bias.
    if attention.plan.shape.cross {
        fields.push((
            "d_source",
            Field::Matrix(attention.matrix(MatrixName::DSource)),
        ));
    }
    for (key, name) in [
        ("d_b_k", MatrixName::DBK),
        ("d_b_o", MatrixName::DBO),
        ("d_b_q", MatrixName::DBQ),
        ("d_b_v", MatrixName::DBV),
    ] {
        if attention.has(name) {
            fields.push((key, Field::Owned(side_by_side(name))));
        }
    }
    fields.sort_by_key(|(key, _)| *key);
    Document(fields)
}

/// The keys of one head in the JSON, in alphabetical order.
const HEAD_MATRICES: [MatrixName; 10] = [
    MatrixName::K,
    MatrixName::KRope,
    MatrixName::Masked,
    MatrixName::Output,
    MatrixName::Q,
    MatrixName::QRope,
    MatrixName::Scaled,
    MatrixName::Scores,
    MatrixName::V,
    MatrixName::Weights,
];

fn head_fields(attention: &Attention, head: usize, tile: usize) -> Document<'_> {
    let mut fields: Vec<(&str, Field)> = HEAD_MATRICES
        .into_iter()
        .map(|name| (name.key(), Field::Matrix(attention.matrix_in(name, head))))
        .collect();
    // The online softmax over the lesson's tile, computed tile by tile as it is written.
    fields.push((
        "online",
        attention
            .online_softmax(head, tile)
            .map_or(Field::Matrix(None), Field::Online),
    ));
    // The circuits are a lesson's with W_o only: one-head lessons of format 1 keep their keys.
    for name in [MatrixName::WOV, MatrixName::WQK] {
        if attention.has(name) {
            fields.push((name.key(), Field::Matrix(attention.matrix_in(name, head))));
        }
    }
    fields.sort_by_key(|(key, _)| *key);
    Document(fields)
}

/// The top-level JSON object, its fields in the order given.
struct Document<'a>(Vec<(&'a str, Field<'a>)>);

enum Field<'a> {
    Text(&'a str),
    Texts(&'a [String]),
    /// Texts, or `null`.
    OptionalTexts(Option<&'a [String]>),
    Count(usize),
    Counts(Vec<usize>),
    /// Whole numbers (a tokenizer's ids).
    Ids(&'a [u64]),
    /// Rows of numbers, `null` for a matrix this lesson does not have.
    Matrix(Option<&'a DMatrix<f64>>),
    Derivations(Derivations<'a>),
    /// One object per head.
    Heads(Vec<Document<'a>>),
    /// Rows of numbers read in place (a cache: its group's first t + 1 rows), or `null`.
    View(Option<DMatrixView<'a, f64>>),
    /// The one row of a one-row matrix, `null` for a matrix this lesson does not have.
    Row(Option<DMatrixView<'a, f64>>),
    /// A list of fields (one per head, or per K/V group).
    List(Vec<Field<'a>>),
    /// Every step of generation, one object each, made as it is written; or `null`.
    Decode(Option<&'a Attention>),
    /// One head's online softmax: `{"steps": [...], "tile": B}`.
    Online(OnlineSoftmax<'a>),
    /// A matrix made for the JSON (every head's block side by side), or `null`.
    Owned(Option<DMatrix<f64>>),
    /// An object of its own (the backward pass).
    Object(Document<'a>),
}

/// The explained cells of every section, as the sections made them.
struct Derivations<'a> {
    sections: &'a [Section],
    attention: &'a Attention,
}

impl Serialize for Derivations<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let several_heads = self.attention.heads().query > 1;
        let explained = self
            .sections
            .iter()
            .flat_map(|section| &section.derivations)
            .filter_map(|(cell, text)| cell.map(|(cell, value)| (cell, value, text)));
        let mut list = serializer.serialize_seq(None)?;
        for (cell, value, text) in explained {
            list.serialize_element(&DerivationJson {
                col: cell.col,
                head: (several_heads && cell.matrix.per() != Per::Lesson).then_some(cell.head),
                matrix: cell.matrix.key(),
                row: cell.row,
                text,
                value,
            })?;
        }
        list.end()
    }
}

/// One explained cell; fields in alphabetical order, as the JSON has them.
#[derive(Serialize)]
struct DerivationJson<'a> {
    col: usize,
    /// The index in `heads` of the head whose matrix the cell is in, for a lesson of several
    /// heads and a matrix that is one head's.
    #[serde(skip_serializing_if = "Option::is_none")]
    head: Option<usize>,
    matrix: &'static str,
    row: usize,
    text: &'a str,
    #[serde(serialize_with = "derivation_value")]
    value: f64,
}

/// A derived cell's value: a number, or `"-inf"` when it is not finite.
fn derivation_value<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.is_finite() {
        serializer.serialize_f64(*value)
    } else {
        serializer.serialize_str("-inf")
    }
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, field) in &self.0 {
            map.serialize_entry(key, field)?;
        }
        map.end()
    }
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Text(text) => serializer.serialize_str(text),
            Field::Texts(texts) => serializer.collect_seq(texts.iter()),
            Field::OptionalTexts(None) => serializer.serialize_unit(),
            Field::OptionalTexts(Some(texts)) => serializer.collect_seq(texts.iter()),
            Field::Count(count) => serializer.serialize_u64(*count as u64),
            Field::Counts(counts) => serializer.collect_seq(counts.iter()),
            Field::Ids(ids) => serializer.collect_seq(ids.iter()),
            Field::Matrix(None) | Field::Owned(None) => serializer.serialize_unit(),
            Field::Owned(Some(matrix)) => Field::Matrix(Some(matrix)).serialize(serializer),
            Field::Object(document) => document.serialize(serializer),
            Field::Matrix(Some(matrix)) => {
                Field::View(Some(matrix.as_view())).serialize(serializer)
            }
            Field::View(None) => serializer.serialize_unit(),
            Field::View(Some(matrix)) => {
                let mut rows = serializer.serialize_seq(Some(matrix.nrows()))?;
                for row in 0..matrix.nrows() {
                    rows.serialize_element(&MatrixRow {
                        matrix: *matrix,
                        row,
                    })?;
                }
                rows.end()
            }
            Field::Derivations(derivations) => derivations.serialize(serializer),
            Field::Heads(heads) => serializer.collect_seq(heads.iter()),
            Field::Row(None) | Field::Decode(None) => serializer.serialize_unit(),
            Field::Row(Some(matrix)) if matrix.nrows() == 0 => serializer.serialize_unit(),
            Field::Row(Some(matrix)) => MatrixRow {
                matrix: *matrix,
                row: 0,
            }
            .serialize(serializer),
            Field::List(fields) => serializer.collect_seq(fields.iter()),
            Field::Decode(Some(attention)) => {
                let tokens = attention.seq_len();
                let mut steps = serializer.serialize_seq(Some(tokens))?;
                for token in 0..tokens {
                    steps.serialize_element(&decode_fields(attention, token))?;
                }
                steps.end()
            }
            Field::Online(online) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("steps", &OnlineSteps(*online))?;
                map.serialize_entry("tile", &online.tile)?;
                map.end()
            }
        }
    }
}

/// The online softmax's state after each tile, each computed as it is written: one tile's
/// state is held at a time, however many tiles a large lesson makes.
struct OnlineSteps<'a>(OnlineSoftmax<'a>);

impl Serialize for OnlineSteps<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut steps = serializer.serialize_seq(Some(self.0.tile_count()))?;
        // Each state written where it is kept, not copied out per tile.
        let mut tiles = self.0.tiles();
        while let Some(tile) = tiles.advance() {
            steps.serialize_element(&OnlineStep(tile))?;
        }
        steps.end()
    }
}

/// One tile's state, keys in alphabetical order: `acc` (one row per query row), `keys`
/// (0-based, inclusive), `l` and `m` (one per query row; m is `"-inf"` while every key seen
/// is masked).
struct OnlineStep<'a>(TileState<'a>);

impl Serialize for OnlineStep<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tile = &self.0;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("acc", &Field::Matrix(Some(tile.acc)))?;
        map.serialize_entry("keys", &[tile.first, tile.last])?;
        map.serialize_entry("l", &Numbers(tile.sum))?;
        map.serialize_entry("m", &Numbers(tile.max))?;
        map.end()
    }
}

/// A list of numbers as JSON, with `"-inf"` and `"inf"` for the infinite, as `MatrixRow`.
struct Numbers<'a>(&'a [f64]);

impl Serialize for Numbers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cells = serializer.serialize_seq(Some(self.0.len()))?;
        for value in self.0 {
            cells.serialize_element(&JsonNumber(*value))?;
        }
        cells.end()
    }
}

/// One number as JSON: itself when finite, else `"-inf"` or `"inf"`.
struct JsonNumber(f64);

impl Serialize for JsonNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if value.is_finite() {
            serializer.serialize_f64(value)
        } else if value < 0.0 {
            serializer.serialize_str("-inf")
        } else {
            serializer.serialize_str("inf")
        }
    }
}

/// One row of a matrix as JSON: numbers, with `"-inf"` and `"inf"` for the infinite.
struct MatrixRow<'a> {
    matrix: DMatrixView<'a, f64>,
    row: usize,
}

impl Serialize for MatrixRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cells = serializer.serialize_seq(Some(self.matrix.ncols()))?;
        for value in self.matrix.row(self.row).iter() {
            cells.serialize_element(&JsonNumber(*value))?;
        }
        cells.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// `value` written as `write_json` writes a document: through `Blocks`, indented or not.
    fn written(value: &Value, compact: bool) -> String {
        let mut out = Vec::new();
        let mut blocks = Blocks::new(&mut out);
        if compact {
            value.serialize(&mut serde_json::Serializer::new(&mut blocks))
        } else {
            value.serialize(&mut serde_json::Serializer::with_formatter(
                &mut blocks,
                Indented::default(),
            ))
        }
        .unwrap();
        blocks.flush().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_json_writer_writes_what_serde_json_writes_across_blocks_and_past_the_indent_levels() {
        // Deeper than the indentation written in one piece, empty arrays and objects, a
        // string longer than a block, and enough numbers to fill many blocks.
        let mut deep = json!([1.5, [], {}, "end"]);
        for level in 0..(INDENT_LEVELS + 6) {
            deep = json!({ "level": level, "inner": deep, "empty": [] });
        }
        let numbers: Vec<f64> = (0..40_000).map(|i| f64::from(i) / 7.0 - 300.0).collect();
        let value = json!({
            "deep": deep,
            "long text": "a ☃ \" \\ \n".repeat(BLOCK / 4),
            "numbers": [numbers.clone(), numbers],
            "nothing": null,
        });
        let pretty = written(&value, false);
        assert!(pretty.len() > 10 * BLOCK);
        // The innermost level's keys: in the document, then in 30 levels.
        let innermost = format!("\n{}\"level\": 0\n", "  ".repeat(INDENT_LEVELS + 7));
        assert!(pretty.contains(&innermost));
        assert_eq!(pretty, serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(
            written(&value, true),
            serde_json::to_string(&value).unwrap()
        );
    }
}
