//! A checkpoint's attention layer on the learner's tokens, as a lesson (`attn-tutor import`): X is the residual stream
//! entering the layer, then the layer's norm, its projections with their biases, RoPE in the
//! checkpoint's pairing, the causal mask, and with every head the concat and W_O. The narration
//! says what the model is and what this head does on this sentence, from the numbers.

use std::fmt::Write as _;

use nalgebra::DMatrix;

use crate::attention::Attention;
use crate::checkpoint::{Architecture, AttentionWeights, Checkpoint, CheckpointError, Norm};
use crate::lesson::limits::{
    MAX_DIMENSION, MAX_HEAD_NUMBERS, MAX_HEADS, MAX_SOURCE_CHARS, MAX_TITLE_COLUMNS, MAX_TOKENS,
    head_numbers,
};
use crate::lesson::text::{fit, printable};
use crate::lesson::{
    Biases, Expected, InputMatrix, Inputs, Lesson, Mask, Narration, NormInputs, NormKind,
    PositionInputs, RopePairing,
};
use crate::matrices::{Heads, MatrixName};
use crate::pipeline::Step;

/// Which heads the lesson shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadChoice {
    /// One head, 0-based as the checkpoint orders them.
    One(usize),
    /// Every head, with their concat and W_O.
    All,
}

/// What the learner asked for.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    /// The model's name as the learner knows it (its folder's name).
    pub model: String,
    /// The text as typed.
    pub text: String,
    pub token_ids: Vec<u64>,
    /// One label per token: the piece of text it stands for.
    pub labels: Vec<String>,
    pub layer: usize,
    pub heads: HeadChoice,
    /// Which tokenizer made the ids, for the source line.
    pub tokenizer: String,
}

/// Decimals an imported lesson shows: a real model's numbers are mostly between −10 and 10.
const DECIMALS: usize = 3;

/// The lesson of `request`: layer `request.layer`'s attention on its tokens in `checkpoint`.
pub fn lesson(checkpoint: &Checkpoint, request: &ImportRequest) -> Result<Lesson, CheckpointError> {
    Imported(checkpoint).lesson(request)
}

/// A checkpoint being made into a lesson.
struct Imported<'a>(&'a Checkpoint);

impl std::ops::Deref for Imported<'_> {
    type Target = Checkpoint;

    fn deref(&self) -> &Checkpoint {
        self.0
    }
}

impl Imported<'_> {
    fn lesson(&self, request: &ImportRequest) -> Result<Lesson, CheckpointError> {
        let config = self.config();
        let ids: Vec<usize> = request
            .token_ids
            .iter()
            .map(|&id| usize::try_from(id).unwrap_or(usize::MAX))
            .collect();
        if let HeadChoice::One(head) = request.heads
            && head >= config.heads
        {
            return Err(CheckpointError::HeadOutOfRange {
                file: self.config_path().to_path_buf(),
                head,
                heads: config.heads,
            });
        }
        self.fits_a_lesson(request)?;
        let weights = self.attention_layer(request.layer)?;
        // At layer 0 of a learned-positions model the lesson adds the positions itself, so the
        // learner sees X = E + P; past it, both are inside the residual stream.
        let learned = matches!(
            config.architecture,
            Architecture::Gpt2 | Architecture::AttnOnly
        );
        let (embeddings, positions) = if request.layer == 0 && learned {
            let positions = self
                .position_embeddings(ids.len())?
                .map(|matrix| PositionInputs::Learned(InputMatrix::literal(matrix)))
                .unwrap_or_default();
            (self.token_embeddings(&ids)?, positions)
        } else if request.layer == 0 {
            (self.token_embeddings(&ids)?, PositionInputs::Rope)
        } else {
            let stream = self.residual_stream(&ids, request.layer)?;
            let positions = if learned {
                PositionInputs::None
            } else {
                PositionInputs::Rope
            };
            (stream, positions)
        };
        let chosen = chosen_heads(
            &weights,
            config.heads,
            config.kv_heads,
            config.head_dim,
            request.heads,
        );
        let literal = |matrix: DMatrix<f64>| InputMatrix::literal(matrix);
        let mut lesson = Lesson {
            title: title(request, config.heads),
            source: source(self.0, request),
            summary: summary(self.0, request),
            tokens: request.labels.clone(),
            source_tokens: Vec::new(),
            inputs: Inputs::Projected {
                embeddings: literal(embeddings),
                w_q: literal(chosen.w_q),
                w_k: literal(chosen.w_k),
                w_v: literal(chosen.w_v),
            },
            source_embeddings: None,
            scale: true,
            mask: Mask::Causal,
            decode: false,
            tile: crate::lesson::limits::DEFAULT_TILE,
            positions,
            format: 2,
            heads: chosen.heads,
            w_o: chosen.w_o.map(literal),
            grad_output: None,
            focus: Some(ids.len() - 1),
            decimals: DECIMALS,
            narration: Narration::default(),
            expected: Expected::default(),
            norm: weights.norm.as_ref().map(|norm| match norm {
                Norm::LayerNorm {
                    gain,
                    bias,
                    epsilon,
                } => NormInputs {
                    kind: NormKind::Layer,
                    gain: Some(literal(gain.clone())),
                    bias: Some(literal(bias.clone())),
                    epsilon: *epsilon,
                },
                Norm::RmsNorm { gain, epsilon } => NormInputs {
                    kind: NormKind::Rms,
                    gain: Some(literal(gain.clone())),
                    bias: None,
                    epsilon: *epsilon,
                },
            }),
            biases: Biases {
                q: chosen.b_q.map(literal),
                k: chosen.b_k.map(literal),
                v: chosen.b_v.map(literal),
                o: chosen.b_o.map(literal),
            },
            rope_pairing: RopePairing::Half,
            rope_theta: config.rope_theta.unwrap_or(10_000.0),
            token_ids: Some(request.token_ids.clone()),
        };
        // A model the tutor can run to its loss (the attention-only models `train` writes)
        // gives its own gradient: the lesson's backward steps are then its training's.
        let loss = match config.architecture {
            Architecture::AttnOnly => next_token_loss(self.0, &ids, request),
            Architecture::Gpt2 | Architecture::Llama => None,
        };
        if let Some(loss) = &loss {
            lesson.grad_output = Some(literal(loss.grad_output.clone()));
        }
        narrate(self.0, request, &mut lesson);
        if let Some(loss) = &loss {
            narrate_backward(request, loss, &mut lesson);
        }
        Ok(lesson)
    }

    /// Refuses what a lesson cannot hold (the limits every lesson file has), before any tensor
    /// is read: more tokens than a lesson has rows, a model wider than its matrices, more heads
    /// than it shows.
    fn fits_a_lesson(&self, request: &ImportRequest) -> Result<(), CheckpointError> {
        let config = self.config();
        let unfit = |why: String| CheckpointError::Inconsistent {
            file: self.config_path().to_path_buf(),
            why,
        };
        let tokens = request.token_ids.len();
        if tokens > MAX_TOKENS {
            return Err(unfit(format!(
                "the text is {tokens} tokens, and a lesson has at most {MAX_TOKENS}; give a \
                 shorter text"
            )));
        }
        if config.d_model > MAX_DIMENSION {
            return Err(unfit(format!(
                "d_model is {}, and a lesson's matrices are at most {MAX_DIMENSION} wide: this \
                 model is too wide to show",
                config.d_model
            )));
        }
        if let HeadChoice::All = request.heads {
            let width = config.heads * config.head_dim;
            if config.heads > MAX_HEADS || width > MAX_DIMENSION {
                return Err(unfit(format!(
                    "its {} heads of {} are {width} columns together, and a lesson has at \
                     most {MAX_HEADS} heads and {MAX_DIMENSION} columns; import one head \
                     (--head 0 to --head {})",
                    config.heads,
                    config.head_dim,
                    config.heads - 1
                )));
            }
            if head_numbers(config.heads, tokens, tokens, None) > MAX_HEAD_NUMBERS {
                return Err(unfit(format!(
                    "{} heads on {tokens} tokens are more numbers than a lesson holds; import \
                     one head, or a shorter text",
                    config.heads
                )));
            }
        }
        Ok(())
    }
}

/// The model's own loss on the text (the mean of −log p(next token)), as the lesson's backward
/// pass needs it: its gradient where the lesson's output is.
struct NextTokenLoss {
    /// How many tokens predict one: all but the last.
    predictions: usize,
    /// dL/d(the lesson's output): for every head, dL/d(the stream leaving the layer), which
    /// the layer's output is added to; for one head, dL/d(its output), the stream's gradient
    /// back through its rows of W_O. The last token's row is 0: it predicts nothing here.
    grad_output: DMatrix<f64>,
}

/// The model's next-token loss on `ids` and its gradient at layer `request.layer`'s output,
/// in f64 through the trainer's own forward and backward passes; `None` for a text of one
/// token (nothing to predict) or a model the trainer does not read (another number of
/// layers), whose lesson keeps the backward pass `d` draws at random.
fn next_token_loss(
    checkpoint: &Checkpoint,
    ids: &[usize],
    request: &ImportRequest,
) -> Option<NextTokenLoss> {
    let predictions = ids.len().checked_sub(1).filter(|&count| count > 0)?;
    let model = crate::train::read(checkpoint).ok()?.cast::<f64>();
    let (inputs, targets) = (&ids[..predictions], &ids[1..]);
    let forward = model.forward(inputs, 1);
    let stream = model
        .stream_gradients(&forward, targets)
        .into_iter()
        .nth(request.layer)?;
    let gradient = match request.heads {
        HeadChoice::All => stream,
        HeadChoice::One(head) => {
            let head_dim = model.shape.head_dim();
            let rows = model.layers[request.layer]
                .c_proj_weight
                .rows(head * head_dim, head_dim);
            stream * rows.transpose()
        }
    };
    let mut grad_output = DMatrix::zeros(ids.len(), gradient.ncols());
    grad_output.rows_mut(0, predictions).copy_from(&gradient);
    Some(NextTokenLoss {
        predictions,
        grad_output,
    })
}

/// The backward steps' words for a lesson whose `grad_output` is the model's own: where it
/// comes from, and what the residual stream adds to X's gradient.
fn narrate_backward(request: &ImportRequest, loss: &NextTokenLoss, lesson: &mut Lesson) {
    let plan = crate::pipeline::Plan::new(lesson.shape());
    let (first, output) = match request.heads {
        HeadChoice::All => (Step::BackwardOutput, "the layer's output"),
        HeadChoice::One(_) => (Step::BackwardValues, "this head's output"),
    };
    let later = if request.layer + 1 < crate::train::LAYERS {
        format!(" and layer {}'s attention", request.layer + 1)
    } else {
        String::new()
    };
    let origin = format!(
        "Here grad_output is not drawn at random: it is the gradient, with respect to \
         {output}, of the model's own loss on this text: the mean of −log p(next token) over \
         the {} tokens that have a next one. It came back from that loss through the \
         unembedding (lm_head){later} and the residual stream, which the tutor does not step \
         through; the last token predicts nothing, so its row is 0. The lesson's L = Σ output \
         ⊙ grad_output has the same gradients for {whose} weights as the model's loss, so \
         while the lesson's numbers are the model's, the gradients below are the ones \
         training on this text alone would take. ",
        loss.predictions,
        whose = match request.heads {
            HeadChoice::All => "this layer's",
            HeadChoice::One(_) => "this head's",
        }
    );
    lesson
        .narration
        .set(first, origin + &first.narration(&plan));
    lesson.narration.set(
        Step::BackwardInput,
        format!(
            "{} In the model X also reaches the loss past the attention, through the residual \
             stream (it is added back to the attention's output), so the model's whole dL/dX \
             is this dX plus {}the gradient of the stream leaving the layer.",
            Step::BackwardInput.narration(&plan),
            match request.heads {
                HeadChoice::All => "",
                HeadChoice::One(_) => "the layer's other heads' parts and ",
            }
        ),
    );
}

/// The weights of the heads asked for, in the lesson's layout.
struct Chosen {
    heads: Heads,
    w_q: DMatrix<f64>,
    w_k: DMatrix<f64>,
    w_v: DMatrix<f64>,
    w_o: Option<DMatrix<f64>>,
    b_q: Option<DMatrix<f64>>,
    b_k: Option<DMatrix<f64>>,
    b_v: Option<DMatrix<f64>>,
    b_o: Option<DMatrix<f64>>,
}

fn chosen_heads(
    weights: &AttentionWeights,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    choice: HeadChoice,
) -> Chosen {
    match choice {
        HeadChoice::All => Chosen {
            heads: Heads {
                query: heads,
                kv: kv_heads,
            },
            w_q: weights.w_q.clone(),
            w_k: weights.w_k.clone(),
            w_v: weights.w_v.clone(),
            w_o: Some(weights.w_o.clone()),
            b_q: weights.b_q.clone(),
            b_k: weights.b_k.clone(),
            b_v: weights.b_v.clone(),
            b_o: weights.b_o.clone(),
        },
        HeadChoice::One(head) => {
            // Query head h reads K/V group ⌊h / (H/G)⌋.
            let group = Heads {
                query: heads,
                kv: kv_heads,
            }
            .group_of(head);
            let columns = |matrix: &DMatrix<f64>, block: usize| {
                matrix.columns(block * head_dim, head_dim).into_owned()
            };
            Chosen {
                heads: Heads::ONE,
                w_q: columns(&weights.w_q, head),
                w_k: columns(&weights.w_k, group),
                w_v: columns(&weights.w_v, group),
                w_o: None,
                b_q: weights.b_q.as_ref().map(|bias| columns(bias, head)),
                b_k: weights.b_k.as_ref().map(|bias| columns(bias, group)),
                b_v: weights.b_v.as_ref().map(|bias| columns(bias, group)),
                b_o: None,
            }
        }
    }
}

/// The model's kind as a learner knows it.
fn family(checkpoint: &Checkpoint) -> &'static str {
    match (
        checkpoint.config().architecture,
        checkpoint.config().model_type.as_str(),
    ) {
        (Architecture::Gpt2, _) => "GPT-2",
        (Architecture::AttnOnly, _) => "attention-only model",
        (Architecture::Llama, "mistral") => "Mistral",
        (Architecture::Llama, "qwen2") => "Qwen2",
        (Architecture::Llama, _) => "Llama",
    }
}

/// "`model` L2 H1: text", cut to the title's 60 columns.
fn title(request: &ImportRequest, heads: usize) -> String {
    let which = match request.heads {
        HeadChoice::One(head) => format!("head {head}"),
        HeadChoice::All => format!("all {heads} heads"),
    };
    let base = format!("{} layer {} {which}", request.model, request.layer);
    let text = one_line(&request.text);
    let whole = if text.is_empty() {
        base
    } else {
        format!("{base}: {text}")
    };
    fit(&whole, MAX_TITLE_COLUMNS)
}

/// The learner's text on one line, safe to show: its spaces and line breaks made single
/// spaces, anything hidden escaped.
fn one_line(text: &str) -> String {
    printable(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn source(checkpoint: &Checkpoint, request: &ImportRequest) -> String {
    let heads = match request.heads {
        HeadChoice::One(head) => format!("head {head}"),
        HeadChoice::All => "every head".to_string(),
    };
    let text = one_line(&request.text);
    let whole = format!(
        "Imported from the {} checkpoint {} (model_type {}): layer {}, {heads}, on “{text}”",
        family(checkpoint),
        request.model,
        checkpoint.config().model_type,
        request.layer,
    );
    let mut cut_to = whole.chars().take(MAX_SOURCE_CHARS).collect::<String>();
    if cut_to.chars().count() < whole.chars().count() {
        cut_to.pop();
        cut_to.push('…');
    }
    cut_to
}

fn summary(checkpoint: &Checkpoint, request: &ImportRequest) -> String {
    let config = checkpoint.config();
    format!(
        "A real {} ({} layers, d_model {}, {} heads of {}) on {} made by {}.",
        family(checkpoint),
        config.layers,
        config.d_model,
        config.heads,
        config.head_dim,
        match request.token_ids.len() {
            1 => "1 token".to_string(),
            tokens => format!("{tokens} tokens"),
        },
        request.tokenizer,
    )
}

/// The narration of an imported lesson: where X comes from, what a cell of a wide row is, and
/// what each head does on this sentence, read from the computed weights.
fn narrate(checkpoint: &Checkpoint, request: &ImportRequest, lesson: &mut Lesson) {
    let config = checkpoint.config();
    let d = config.d_model;
    let embedding = match (config.architecture, request.layer) {
        (Architecture::Gpt2 | Architecture::AttnOnly, 0) => format!(
            "X is what enters layer 0 of this {}: each token's row of the token embedding \
             (wte, {d} numbers per token) plus its position's row of the learned position \
             embedding (wpe). No single number of a row means anything on its own: a row is a \
             direction in a {d}-dimensional space that the layers read with their weights.",
            family(checkpoint)
        ),
        (_, 0) => format!(
            "X is what enters layer 0 of this {}: each token's row of the token embedding \
             (embed_tokens, {d} numbers per token). It carries no position: RoPE adds the \
             positions later, by rotating the queries and keys.",
            family(checkpoint)
        ),
        (architecture, layer) => format!(
            "X is the residual stream entering layer {layer}: the token embeddings{} after the \
             model's {} ({}), computed in float64 from the checkpoint and not stepped through \
             here. Each row has {d} numbers; no single one means anything on its own.",
            if architecture == Architecture::Llama {
                ""
            } else {
                " plus the position embeddings"
            },
            if layer == 1 {
                "first block".to_string()
            } else {
                format!("first {layer} blocks")
            },
            match architecture {
                Architecture::Gpt2 =>
                    "a block: LayerNorm, attention, LayerNorm and MLP, each added back",
                Architecture::Llama =>
                    "a block: RMSNorm, attention, RMSNorm and gated MLP, each added back",
                Architecture::AttnOnly => "a block: attention, added back",
            }
        ),
    };
    lesson.narration.set(Step::Embedding, embedding);
    let head_dim = config.head_dim;
    lesson.narration.set(
        Step::Projection,
        format!(
            "Each cell of Q, K and V is a dot product of {d} numbers: the token's row{} times \
             one column of the weights, plus that column's bias where the model has one.{heads}\
             {group} With {d} terms a working cannot show them all: it shows the largest ones \
             and the sum of the rest.",
            if lesson.norm.is_some() {
                " (after the norm)"
            } else {
                ""
            },
            group = shared_group(config.heads, config.kv_heads, request.heads),
            heads = match request.heads {
                HeadChoice::One(_) => format!(
                    " This head's W_q is {head_dim} of the layer's {} columns.",
                    config.heads * head_dim
                ),
                HeadChoice::All if config.kv_heads < config.heads => format!(
                    " Head by head, {head_dim} columns of W_q make that head's queries, and \
                     {head_dim} columns of W_k and W_v its K/V group's keys and values ({} \
                     groups for {} heads).",
                    config.kv_heads, config.heads
                ),
                HeadChoice::All => format!(
                    " Head by head, {head_dim} columns of W_q, W_k and W_v make that head's \
                     queries, keys and values."
                ),
            },
        ),
    );
    let attention = Attention::compute(lesson);
    let last = lesson.tokens.len() - 1;
    let mut text = format!(
        "What {} does on this sentence, read from its weights: the mean weight a token puts on \
         the first token, on itself and on the token before it (over the tokens that have \
         each; the first token can only look at itself), and where the last token, “{}”, \
         looks most.{}",
        match request.heads {
            HeadChoice::One(_) => "this head",
            HeadChoice::All => "each head",
        },
        lesson.tokens[last],
        match request.heads {
            HeadChoice::One(head) => format!(
                " This is the checkpoint's head {head}, counting from 0 as the checkpoint does."
            ),
            HeadChoice::All => " Heads are counted from 1 here, as the tutor counts them: head \
                                1 is the checkpoint's head 0."
                .to_string(),
        }
    );
    for head in 0..lesson.heads.query {
        let Some(weights) = attention.matrix_in(MatrixName::Weights, head) else {
            continue;
        };
        let name = match request.heads {
            HeadChoice::One(_) => "Here".to_string(),
            HeadChoice::All => format!("Head {}", head + 1),
        };
        let _ = write!(text, " {name}: {}.", pattern(weights, &lesson.tokens));
    }
    if text.chars().count() <= crate::lesson::limits::MAX_NARRATION_CHARS {
        lesson.narration.set(Step::Softmax, text);
    }
}

/// For one head of a model whose heads share K/V groups: whose keys and values it reads.
fn shared_group(heads: usize, kv_heads: usize, choice: HeadChoice) -> String {
    let HeadChoice::One(head) = choice else {
        return String::new();
    };
    if kv_heads >= heads || kv_heads == 0 {
        return String::new();
    }
    let per_group = heads / kv_heads;
    let group = head / per_group;
    format!(
        " W_k and W_v are K/V group {group}'s (counting from 0), which query heads {} to {} \
         share: this model has {kv_heads} K/V groups for its {heads} query heads.",
        group * per_group,
        group * per_group + per_group - 1
    )
}

/// What a head's weights do, in numbers: the mean weight on the first token, on the token
/// itself and on the token before, and where the last token looks most.
fn pattern(weights: &DMatrix<f64>, tokens: &[String]) -> String {
    let n = weights.nrows();
    let mean = |pick: &dyn Fn(usize) -> Option<usize>| {
        let values: Vec<f64> = (0..n)
            .filter_map(|row| pick(row).map(|col| weights[(row, col)]))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    // Row 1's token before is the first token: it counts for both.
    let first = mean(&|row| (row > 0).then_some(0));
    let own = mean(&|row| (row > 0).then_some(row));
    let before = mean(&|row| row.checked_sub(1));
    let mut parts = Vec::new();
    for (what, value) in [
        ("first token", first),
        ("itself", own),
        ("token before", before),
    ] {
        if let Some(value) = value {
            parts.push(format!("{what} {value:.2}"));
        }
    }
    let last = n - 1;
    let (col, weight) =
        (0..=last)
            .map(|col| (col, weights[(last, col)]))
            .fold(
                (0, f64::MIN),
                |best, next| if next.1 > best.1 { next } else { best },
            );
    let looks = format!("→ “{}” (token {}) {weight:.2}", tokens[col], col + 1);
    if parts.is_empty() {
        looks
    } else {
        format!("{}; {looks}", parts.join(", "))
    }
}
