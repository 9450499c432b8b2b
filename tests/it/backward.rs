//! The backward pass: every gradient the engine works out agrees with central finite
//! differences of the loss L = Σ output ⊙ grad_output, on lessons with heads, grouped queries,
//! masks (a fully masked row among them), RoPE (rotate-half with a base of its own too) and
//! sinusoidal positions, cross-attention and Q, K, V given directly; and a step of gradient
//! descent lowers the loss.

use crate::common;

use attn_tutor::attention::{Attention, Cell, MatrixName};
use attn_tutor::lesson::Lesson;
use std::sync::Arc;

/// SplitMix64: the same numbers on every machine.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // In [-1.5, 1.5), to two decimals, as a lesson writer would type them.
        ((z >> 11) as f64 / (1u64 << 53) as f64 * 300.0).floor() / 100.0 - 1.5
    }

    fn matrix(&mut self, rows: usize, cols: usize) -> String {
        let rows: Vec<String> = (0..rows)
            .map(|_| {
                let cells: Vec<String> = (0..cols).map(|_| format!("{}", self.next())).collect();
                format!("[{}]", cells.join(", "))
            })
            .collect();
        format!("[{}]", rows.join(", "))
    }
}

/// What a lesson of the sweep has.
#[derive(Debug, Clone, Copy)]
struct Kind {
    heads: usize,
    kv: usize,
    w_o: bool,
    positions: &'static str,
    mask: &'static str,
    cross: bool,
    direct: bool,
    scale: bool,
}

fn lesson_text(kind: Kind, seed: u64) -> String {
    let mut draw = Draw(seed);
    // Rotate-half's pairs (i, i + d_k/2) differ from neighbours' only from d_k = 4.
    let d_k = if kind.positions == "rope-half" { 4 } else { 2 };
    let (tokens, source, d_model, d_v, d_out) = (3, 4, 4, 2, 3);
    let keys = if kind.cross { source } else { tokens };
    let mut text = format!(
        "format = 2\ntitle = \"backward {seed}\"\ntokens = [\"a\", \"b\", \"c\"]\nheads = {}\n\
         kv_heads = {}\nscale = {}\n",
        kind.heads, kind.kv, kind.scale
    );
    if kind.cross {
        text.push_str("source_tokens = [\"w\", \"x\", \"y\", \"z\"]\n");
    }
    match kind.positions {
        "none" => {}
        "rope-half" => {
            text.push_str("positions = \"rope\"\nrope_pairing = \"half\"\nrope_theta = 100\n")
        }
        positions => text.push_str(&format!("positions = \"{positions}\"\n")),
    }
    match kind.mask {
        "none" => {}
        "causal" => text.push_str("mask = \"causal\"\n"),
        // Row b sees nothing; row a does not see key 2.
        _ => {
            let rows: Vec<String> = (0..tokens)
                .map(|row| {
                    let cells: Vec<&str> = (0..keys)
                        .map(|key| match (row, key) {
                            (1, _) | (0, 1) => "-inf",
                            _ => "0",
                        })
                        .collect();
                    format!("[{}]", cells.join(", "))
                })
                .collect();
            text.push_str(&format!("mask = [{}]\n", rows.join(", ")));
        }
    }
    if kind.direct {
        text.push_str(&format!("q = {}\n", draw.matrix(tokens, kind.heads * d_k)));
        text.push_str(&format!("k = {}\n", draw.matrix(keys, kind.kv * d_k)));
        text.push_str(&format!("v = {}\n", draw.matrix(keys, kind.kv * d_v)));
    } else {
        text.push_str(&format!("embeddings = {}\n", draw.matrix(tokens, d_model)));
        if kind.cross {
            text.push_str(&format!(
                "source_embeddings = {}\n",
                draw.matrix(source, d_model)
            ));
        }
        text.push_str(&format!(
            "w_q = {}\n",
            draw.matrix(d_model, kind.heads * d_k)
        ));
        text.push_str(&format!("w_k = {}\n", draw.matrix(d_model, kind.kv * d_k)));
        text.push_str(&format!("w_v = {}\n", draw.matrix(d_model, kind.kv * d_v)));
    }
    let out = if kind.w_o {
        text.push_str(&format!("w_o = {}\n", draw.matrix(kind.heads * d_v, d_out)));
        d_out
    } else {
        d_v
    };
    text.push_str(&format!("grad_output = {}\n", draw.matrix(tokens, out)));
    text
}

fn kinds() -> Vec<Kind> {
    let mut kinds = Vec::new();
    let shapes = [
        (1, 1, false),
        (1, 1, true),
        (2, 2, true),
        (4, 2, true),
        (2, 1, true),
    ];
    for (index, (heads, kv, w_o)) in shapes.into_iter().enumerate() {
        for positions in ["none", "sinusoidal", "rope", "rope-half"] {
            for mask in ["none", "causal", "written"] {
                for cross in [false, true] {
                    for direct in [false, true] {
                        // Cross-attention has no causal mask; added positions need embeddings.
                        if (cross && mask == "causal") || (direct && positions == "sinusoidal") {
                            continue;
                        }
                        kinds.push(Kind {
                            heads,
                            kv,
                            w_o,
                            positions,
                            mask,
                            cross,
                            direct,
                            scale: (index + kinds.len()) % 3 != 0,
                        });
                    }
                }
            }
        }
    }
    kinds
}

/// The engine's gradient for cell (row, col) of input `input`: the cell of the head's (or
/// group's) gradient matrix it lands in.
fn engine_gradient(
    attention: &Attention,
    lesson: &Lesson,
    input: MatrixName,
    row: usize,
    col: usize,
) -> f64 {
    let heads = lesson.heads;
    let (d_k, d_v) = (lesson.d_k(), lesson.d_v());
    let grouped = heads.kv < heads.query;
    let cell =
        match input {
            MatrixName::WQ => Cell::new(MatrixName::DWQ, row, col % d_k).in_head(col / d_k),
            MatrixName::WK => {
                Cell::new(MatrixName::DWK, row, col % d_k).in_head(heads.first_of_group(col / d_k))
            }
            MatrixName::WV => {
                Cell::new(MatrixName::DWV, row, col % d_v).in_head(heads.first_of_group(col / d_v))
            }
            MatrixName::WO => Cell::new(MatrixName::DWO, row, col),
            MatrixName::Embeddings if lesson.is_cross() => Cell::new(MatrixName::DXQ, row, col),
            MatrixName::Embeddings => Cell::new(MatrixName::DX, row, col),
            MatrixName::SourceEmbeddings => Cell::new(MatrixName::DSource, row, col),
            MatrixName::Q => Cell::new(MatrixName::DQ, row, col % d_k).in_head(col / d_k),
            MatrixName::K if grouped => Cell::new(MatrixName::DKGroup, row, col % d_k)
                .in_head(heads.first_of_group(col / d_k)),
            MatrixName::K => Cell::new(MatrixName::DK, row, col % d_k).in_head(col / d_k),
            MatrixName::V if grouped => Cell::new(MatrixName::DVGroup, row, col % d_v)
                .in_head(heads.first_of_group(col / d_v)),
            MatrixName::V => Cell::new(MatrixName::DV, row, col % d_v).in_head(col / d_v),
            other => panic!("no gradient for {other:?}"),
        };
    attention
        .value(cell)
        .unwrap_or_else(|| panic!("no value for {cell:?}"))
}

fn loss_with(lesson: &Lesson, input: MatrixName, row: usize, col: usize, delta: f64) -> f64 {
    let mut changed = lesson.clone();
    let matrix = changed.input_mut(input).unwrap();
    Arc::make_mut(&mut matrix.values)[(row, col)] += delta;
    Attention::compute(&changed).loss().unwrap()
}

#[test]
fn every_gradient_agrees_with_central_finite_differences() {
    let (mut checked, mut worst) = (0usize, (0.0f64, String::new()));
    for (index, kind) in kinds().into_iter().enumerate() {
        let text = lesson_text(kind, index as u64 + 1);
        let lesson = common::valid_lesson(&text);
        let attention = Attention::compute(&lesson);
        let inputs: Vec<MatrixName> = lesson.inputs().iter().map(|(name, _)| *name).collect();
        for input in inputs {
            if input == MatrixName::DOutput {
                continue;
            }
            let values = lesson.input(input).unwrap().values.clone();
            for row in 0..values.nrows() {
                for col in 0..values.ncols() {
                    let h = 1e-5;
                    let numeric = (loss_with(&lesson, input, row, col, h)
                        - loss_with(&lesson, input, row, col, -h))
                        / (2.0 * h);
                    let engine = engine_gradient(&attention, &lesson, input, row, col);
                    let error = (engine - numeric).abs() / numeric.abs().max(1.0);
                    if error > worst.0 {
                        worst = (error, format!("{kind:?} {input:?}[{row}, {col}]"));
                    }
                    assert!(
                        error <= 1e-6,
                        "{kind:?} {input:?}[{row}, {col}]: engine {engine}, finite differences \
                         {numeric}\n{text}"
                    );
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} gradients checked, worst relative error {worst:?}");
    assert!(checked > 5000, "only {checked}");
}

#[test]
fn a_step_of_gradient_descent_lowers_the_loss_on_every_built_in_lesson() {
    for builtin in attn_tutor::lesson::BUILTIN {
        let mut lesson =
            attn_tutor::lesson::load_text(builtin.name, None, builtin.text.to_string())
                .unwrap()
                .lesson;
        lesson.seed_grad_output(7);
        let attention = Attention::compute(&lesson);
        let before = attention.loss().unwrap();
        let mut stepped = lesson.clone();
        stepped.gradient_step(
            &attention,
            attn_tutor::lesson::limits::DEFAULT_LEARNING_RATE,
        );
        let after = Attention::compute(&stepped).loss().unwrap();
        assert!(
            after < before,
            "{}: the loss went from {before} to {after}",
            builtin.name
        );
    }
}

#[test]
fn the_json_gradients_are_laid_out_like_the_matrices_they_are_the_gradients_of() {
    // Four heads in two K/V groups, W_o and RoPE: every block in its place.
    let kind = Kind {
        heads: 4,
        kv: 2,
        w_o: true,
        positions: "rope",
        mask: "causal",
        cross: false,
        direct: false,
        scale: true,
    };
    let text = lesson_text(kind, 99);
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("gqa.toml");
    std::fs::write(&path, &text).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&common::show(path.to_str().unwrap(), &["--format", "json"])).unwrap();
    let backward = &json["backward"];
    let lesson = common::valid_lesson(&text);
    for (key, input) in [
        ("d_w_q", MatrixName::WQ),
        ("d_w_k", MatrixName::WK),
        ("d_w_v", MatrixName::WV),
        ("d_w_o", MatrixName::WO),
        ("d_x", MatrixName::Embeddings),
    ] {
        let values = lesson.input(input).unwrap().values.clone();
        let rows = backward[key].as_array().unwrap();
        assert_eq!(rows.len(), values.nrows(), "{key}");
        for (row, cells) in rows.iter().enumerate() {
            let cells = cells.as_array().unwrap();
            assert_eq!(cells.len(), values.ncols(), "{key}");
            for (col, cell) in cells.iter().enumerate() {
                let h = 1e-5;
                let numeric = (loss_with(&lesson, input, row, col, h)
                    - loss_with(&lesson, input, row, col, -h))
                    / (2.0 * h);
                let written = cell.as_f64().unwrap();
                assert!(
                    (written - numeric).abs() <= 1e-6 * numeric.abs().max(1.0),
                    "{key}[{row}][{col}]: {written} against {numeric}"
                );
            }
        }
    }
    assert!(
        backward.get("d_source").is_none(),
        "self-attention has no source"
    );
    assert_eq!(backward["heads"].as_array().unwrap().len(), 4);
    for head in backward["heads"].as_array().unwrap() {
        let mut keys: Vec<&str> = head
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(keys, ["d_k", "d_q", "d_scores", "d_v", "d_weights"]);
    }
    // Without grad_output there is no backward pass, and no key.
    let plain: serde_json::Value =
        serde_json::from_str(&common::show("cat-sleeps", &["--format", "json"])).unwrap();
    assert!(plain.get("backward").is_none());
    let seeded: serde_json::Value = serde_json::from_str(&common::show(
        "cat-sleeps",
        &["--format", "json", "--grad-seed", "3"],
    ))
    .unwrap();
    assert_eq!(seeded["backward"]["d_output"].as_array().unwrap().len(), 3);
}

/// The error messages of a lesson text, in order.
fn errors(text: &str) -> Vec<String> {
    match attn_tutor::lesson::load_text("lesson", None, text.to_string()) {
        Ok(_) => Vec::new(),
        Err(attn_tutor::lesson::LoadError::Invalid { diagnostics, .. }) => diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(|diagnostic| diagnostic.message.clone())
            .collect(),
        Err(other) => vec![other.render(false)],
    }
}

#[test]
fn a_grad_output_of_the_wrong_width_or_in_format_1_is_named_at_its_place() {
    let lesson = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nembeddings = [[1, 0], [0, 1]]\n\
                  w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n";
    assert_eq!(
        errors(&format!("{lesson}grad_output = [[1, 0, 0], [0, 1, 0]]\n")),
        ["`grad_output` has 3 columns, the output 2"]
    );
    assert_eq!(
        errors(&format!(
            "{lesson}w_o = [[1, 0], [0, 1]]\ngrad_output = [[1, 0, 0], [0, 1, 0]]\n"
        )),
        ["`grad_output` has 3 columns, but `w_o` has 2 (d_out, the output's width)"]
    );
    let rows = errors(&format!("{lesson}grad_output = [[1, 0]]\n"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].contains("but there are 2 tokens"), "{rows:?}");
    assert_eq!(
        errors(&format!(
            "{}grad_output = [[1, 0], [0, 1]]\n",
            lesson.replace("format = 2", "format = 1")
        )),
        ["`grad_output` needs `format = 2`"]
    );
    assert!(errors(&format!("{lesson}grad_output = [[1, 0], [0, 1]]\n")).is_empty());
    // A generator draws it, like any input.
    let drawn = common::valid_lesson(&format!(
        "{lesson}grad_output = {{ random = \"normal\", seed = 3, shape = [2, 2] }}\n"
    ));
    assert!(
        drawn
            .grad_output
            .unwrap()
            .values
            .iter()
            .any(|value| *value != 0.0)
    );
}

#[test]
fn a_saved_lesson_keeps_its_grad_output_and_a_drawn_one_is_written_as_format_2() {
    let builtin = attn_tutor::lesson::builtin("backward").unwrap();
    let lesson = attn_tutor::lesson::load_text("backward", None, builtin.text.to_string())
        .unwrap()
        .lesson;
    let saved = attn_tutor::lesson::lesson_to_toml(&lesson);
    let read_back = common::valid_lesson(&saved);
    assert_eq!(
        read_back.grad_output.unwrap().values,
        lesson.grad_output.unwrap().values,
        "{saved}"
    );
    // `d` on a format 1 lesson: the drawn grad_output is saved, in a format 2 file.
    let mut app = common::lesson_app(
        "one",
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nembeddings = [[1, 0], [0, 1]]\n\
         w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n",
    );
    attn_tutor::app::update(&mut app, attn_tutor::app::Action::AddBackward);
    let tutor = app.tutor().unwrap();
    assert!(tutor.steps.iter().any(|step| step.is_backward()));
    let saved = attn_tutor::lesson::lesson_to_toml(&tutor.lesson);
    assert!(saved.contains("format = 2\n"), "{saved}");
    assert!(saved.contains("grad_output"), "{saved}");
    assert!(common::valid_lesson(&saved).grad_output.is_some());
    // u takes the backward pass back, and its steps with it.
    attn_tutor::app::update(&mut app, attn_tutor::app::Action::Undo);
    let tutor = app.tutor().unwrap();
    assert!(!tutor.steps.iter().any(|step| step.is_backward()));
}

#[test]
fn practice_names_the_backward_passs_own_slips() {
    use attn_tutor::practice::{SlipKind, Verdict, check};
    let builtin = attn_tutor::lesson::builtin("backward").unwrap();
    let lesson = attn_tutor::lesson::load_text("backward", None, builtin.text.to_string())
        .unwrap()
        .lesson;
    let attention = Attention::compute(&lesson);
    let value = |matrix, row, col| attention.value(Cell::new(matrix, row, col)).unwrap();
    let slip_of = |cell: Cell, answer: f64| match check(&attention, cell, answer, 4) {
        Some(Verdict::Wrong { slip, .. }) => slip,
        other => panic!("{cell:?} = {answer}: {other:?}"),
    };
    // weights ⊙ d_weights alone, the row's average left out.
    let diagonal = value(MatrixName::Weights, 0, 0) * value(MatrixName::DWeights, 0, 0);
    let slip = slip_of(Cell::new(MatrixName::DSoftmaxInput, 0, 0), diagonal).unwrap();
    assert_eq!(slip.kind, SlipKind::JacobianDiagonal);
    assert!(slip.describe().contains("average"), "{}", slip.describe());
    // dS where d_scores = dS / √d_k belongs.
    let unscaled = value(MatrixName::DSoftmaxInput, 0, 0);
    let slip = slip_of(Cell::new(MatrixName::DScores, 0, 0), unscaled).unwrap();
    assert_eq!(slip.kind, SlipKind::ForgotScaling);
    assert!(slip.describe().contains("gradient"), "{}", slip.describe());
    // dK = d_scores·Q instead of d_scoresᵀ·Q: cat's key, column 2.
    let d_scores = attention.matrix(MatrixName::DScores).unwrap();
    let q = attention.matrix(MatrixName::Q).unwrap();
    let untransposed = (d_scores * q)[(0, 1)];
    assert_ne!(untransposed, value(MatrixName::DK, 0, 1));
    let slip = slip_of(Cell::new(MatrixName::DK, 0, 1), untransposed).unwrap();
    assert_eq!(slip.kind, SlipKind::GradientNotTransposed);
    assert!(slip.describe().contains("transpose"), "{}", slip.describe());
    // A forward slip's words are never given for a gradient: an answer off by a sign is wrong,
    // with no slip of the forward pass named.
    let slip = slip_of(
        Cell::new(MatrixName::DWeights, 0, 1),
        -value(MatrixName::DWeights, 0, 1),
    );
    assert!(
        slip.is_none_or(|slip| matches!(
            slip.kind,
            SlipKind::JacobianDiagonal | SlipKind::GradientNotTransposed | SlipKind::ForgotScaling
        )),
        "{slip:?}"
    );
}

#[test]
fn every_backward_working_line_lands_on_its_cell_as_written() {
    use attn_tutor::attention::number::format_number;
    let (mut worked, mut approximate) = (0, Vec::new());
    for (index, kind) in kinds().into_iter().enumerate().step_by(7) {
        let text = lesson_text(kind, index as u64 + 1);
        let lesson = common::valid_lesson(&text);
        let attention = Attention::compute(&lesson);
        for name in MatrixName::ALL.into_iter().filter(|name| name.backward()) {
            for head in 0..lesson.heads.query {
                let Some(matrix) = attention.matrix_in(name, head) else {
                    continue;
                };
                for row in 0..matrix.nrows() {
                    for col in 0..matrix.ncols() {
                        let cell = Cell::new(name, row, col).in_head(head);
                        let derivation = attention.derive(cell).unwrap();
                        let sides = derivation.explanation(&attention, 4).sides;
                        let result = &sides.last().unwrap()[0];
                        // As the matrix's table writes it: 0.0280, a whole number bare.
                        let exact = attention.value(cell).unwrap();
                        let value =
                            if matches!(derivation.rule, attn_tutor::attention::Rule::Input(_)) {
                                format_number(exact, 4)
                            } else {
                                common::arithmetic::as_written(exact, 4)
                            };
                        // A sum of many rounded terms may land nowhere: it says ≈.
                        if let Some(near) = result.strip_prefix("≈ ") {
                            assert_eq!(near, value);
                            approximate.push(derivation.explain(&attention, 4));
                            continue;
                        }
                        assert_eq!(result, &value);
                        if sides.len() < 3 {
                            continue;
                        }
                        for side in &sides[1..sides.len() - 1] {
                            let joined = side.join(" + ");
                            // "0.3417 / √2": the square root is the next side's number.
                            if joined.contains('√') {
                                continue;
                            }
                            let arithmetic = common::arithmetic::evaluate(&joined)
                                .unwrap_or_else(|| panic!("{cell:?}: cannot read {joined:?}"));
                            assert_eq!(
                                attn_tutor::attention::number::format_fixed(arithmetic, 4),
                                attn_tutor::attention::number::format_fixed(
                                    result.parse().unwrap(),
                                    4
                                ),
                                "{kind:?} {cell:?}: {}",
                                derivation.explain(&attention, 4)
                            );
                        }
                        worked += 1;
                    }
                }
            }
        }
    }
    assert!(worked > 1000, "only {worked}");
    assert!(
        approximate.len() * 100 < worked,
        "{} of {worked} say ≈: {approximate:#?}",
        approximate.len()
    );
}

#[test]
fn a_gradient_step_moves_each_weights_block_by_its_own_heads_gradient() {
    // Four heads in two groups with W_o and RoPE; and Q, K, V given to two heads of one group.
    for (kind, seed) in [
        (
            Kind {
                heads: 4,
                kv: 2,
                w_o: true,
                positions: "rope",
                mask: "written",
                cross: false,
                direct: false,
                scale: true,
            },
            11,
        ),
        (
            Kind {
                heads: 2,
                kv: 1,
                w_o: true,
                positions: "none",
                mask: "causal",
                cross: false,
                direct: true,
                scale: false,
            },
            12,
        ),
    ] {
        let lesson = common::valid_lesson(&lesson_text(kind, seed));
        let attention = Attention::compute(&lesson);
        let eta = 0.1;
        let mut stepped = lesson.clone();
        stepped.gradient_step(&attention, eta);
        let moved: Vec<MatrixName> = if kind.direct {
            vec![MatrixName::Q, MatrixName::K, MatrixName::V, MatrixName::WO]
        } else {
            vec![
                MatrixName::WQ,
                MatrixName::WK,
                MatrixName::WV,
                MatrixName::WO,
            ]
        };
        for input in moved {
            let before = lesson.input(input).unwrap().values.clone();
            let after = stepped.input(input).unwrap().values.clone();
            for row in 0..before.nrows() {
                for col in 0..before.ncols() {
                    let want = before[(row, col)]
                        - eta * engine_gradient(&attention, &lesson, input, row, col);
                    assert!(
                        (after[(row, col)] - want).abs() < 1e-12,
                        "{kind:?} {input:?}[{row}, {col}]: {} against {want}",
                        after[(row, col)]
                    );
                }
            }
        }
        // The embeddings are data, not learned here: they stay.
        if !kind.direct {
            assert_eq!(
                stepped.input(MatrixName::Embeddings).unwrap().values,
                lesson.input(MatrixName::Embeddings).unwrap().values
            );
        }
    }
}

#[test]
fn undo_and_redo_name_the_backward_pass_and_the_gradient_step() {
    use attn_tutor::app::{Action, update};
    let mut app = common::lesson_app(
        "two",
        "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nembeddings = [[1, 0], [0, 1]]\n\
         w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n",
    );
    let status = |app: &attn_tutor::app::App| {
        app.status
            .as_ref()
            .map(|status| status.text.clone())
            .unwrap_or_default()
    };
    update(&mut app, Action::GradientStep);
    assert!(status(&app).contains("d adds one"), "{}", status(&app));
    update(&mut app, Action::AddBackward);
    assert!(
        status(&app).starts_with("Backward pass on"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::GradientStep);
    assert!(status(&app).contains("L = "), "{}", status(&app));
    update(&mut app, Action::Undo);
    assert!(
        status(&app).contains("the step of gradient descent"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::Undo);
    assert!(
        status(&app).contains("the backward pass"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::Redo);
    assert!(
        status(&app).contains("the backward pass"),
        "{}",
        status(&app)
    );
}

#[test]
fn e_on_a_softmax_gradient_goes_to_its_own_d_weights_cell() {
    let builtin = attn_tutor::lesson::builtin("backward").unwrap();
    let lesson = attn_tutor::lesson::load_text("backward", None, builtin.text.to_string())
        .unwrap()
        .lesson;
    let attention = Attention::compute(&lesson);
    let derivation = attention
        .derive(Cell::new(MatrixName::DSoftmaxInput, 0, 1))
        .unwrap();
    assert_eq!(
        derivation.source(),
        Some(Cell::new(MatrixName::DWeights, 0, 1))
    );
}

#[test]
fn in_cross_attention_the_keys_and_values_paths_reach_the_source() {
    let kind = Kind {
        heads: 2,
        kv: 1,
        w_o: true,
        positions: "none",
        mask: "none",
        cross: true,
        direct: false,
        scale: true,
    };
    let lesson = common::valid_lesson(&lesson_text(kind, 21));
    let attention = Attention::compute(&lesson);
    assert_eq!(attention.symbol_in(MatrixName::DXK, 0), "d_source_k");
    let caption = attn_tutor::ui::formula::caption_in(&attention, MatrixName::DXK, 0);
    assert!(caption.contains("source"), "{caption}");
    let steps = attn_tutor::pipeline::Step::BackwardWeights;
    let narration = (steps.entry().narration)(&attention.plan);
    assert!(narration.contains("Sᵀ·dK"), "{narration}");
}

#[test]
fn check_compares_a_lessons_gradients_with_finite_differences() {
    let dir = tempfile::TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args(["check", "backward"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(
            "ok    gradients: dX, dW_q, dW_k, dW_v agree with central finite differences of L \
             along a random direction U through all 16 cells of X, W_q, W_k, W_v: Σ dM ⊙ U = \
             -4.52, off by "
        ),
        "{text}"
    );
    // A lesson without a backward pass has no such line.
    let out = common::attn_tutor(&dir)
        .args(["check", "cat-sleeps"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("gradients:"));
}

#[test]
fn grad_seed_on_a_lesson_with_its_own_grad_output_says_it_is_not_used() {
    let dir = tempfile::TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args(["show", "backward", "--grad-seed", "5", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("gives its own grad_output; --grad-seed 5 is not used")
    );
}

#[test]
fn capital_g_sets_the_step_size_and_nonsense_keeps_the_old_one() {
    use attn_tutor::app::{Action, Overlay, update};
    let mut app = builtin_app("backward");
    let type_in = |app: &mut attn_tutor::app::App, text: &str| {
        update(app, Action::SetLearningRate);
        for ch in text.chars() {
            update(app, Action::Type(ch));
        }
        update(app, Action::Submit);
    };
    type_in(&mut app, "abc");
    assert!(
        matches!(app.overlay, Overlay::Prompt(_)),
        "the prompt stays open"
    );
    let said = app.status.as_ref().unwrap().text.clone();
    assert!(said.contains("η must be a number above 0"), "{said}");
    update(&mut app, Action::Cancel);
    assert_eq!(app.tutor().unwrap().learning_rate, 0.1);
    type_in(&mut app, "0.05");
    assert_eq!(app.tutor().unwrap().learning_rate, 0.05);
    let before = app.tutor().unwrap().attention.loss().unwrap();
    update(&mut app, Action::GradientStep);
    let tutor = app.tutor().unwrap();
    assert!(tutor.attention.loss().unwrap() < before);
    assert!(
        app.status.as_ref().unwrap().text.contains("η = 0.05"),
        "{}",
        app.status.as_ref().unwrap().text
    );
    for refused in ["0", "-1", "11", "inf", "NaN"] {
        type_in(&mut app, refused);
        assert!(matches!(app.overlay, Overlay::Prompt(_)), "{refused}");
        update(&mut app, Action::Cancel);
        assert_eq!(app.tutor().unwrap().learning_rate, 0.05, "{refused}");
    }
    // A tiny η is written as typed when it is undone, not as 300 zeros before its 1.
    type_in(&mut app, "1e-300");
    update(&mut app, Action::Undo);
    let said = app.status.as_ref().unwrap().text.clone();
    assert!(said.starts_with("Undid η = 1e-300 → 0.05"), "{said}");
    update(&mut app, Action::SetLearningRate);
    let prompt = common::screen(&app, 80, 24);
    assert!(prompt.contains("η (now 0.05) = "), "{prompt}");
}

#[test]
fn a_hidden_keys_d_weights_says_no_gradient_passes_through_it() {
    let kind = Kind {
        heads: 1,
        kv: 1,
        w_o: false,
        positions: "none",
        mask: "causal",
        cross: false,
        direct: false,
        scale: true,
    };
    let lesson = common::valid_lesson(&lesson_text(kind, 31));
    let attention = Attention::compute(&lesson);
    // Row a cannot see key b: its weight is 0.
    let hidden = attention
        .derive(Cell::new(MatrixName::DWeights, 0, 1))
        .unwrap()
        .explain(&attention, 4);
    assert!(hidden.contains("hidden by the mask"), "{hidden}");
    assert_eq!(
        attention.value(Cell::new(MatrixName::DSoftmaxInput, 0, 1)),
        Some(0.0)
    );
    let seen = attention
        .derive(Cell::new(MatrixName::DWeights, 1, 0))
        .unwrap()
        .explain(&attention, 4);
    assert!(!seen.contains("hidden"), "{seen}");
}

#[test]
fn below_zero_the_gradient_step_says_this_loss_has_no_lowest_value() {
    use attn_tutor::app::{Action, update};
    let mut app = builtin_app("two-heads");
    update(&mut app, Action::AddBackward);
    update(&mut app, Action::GradientStep);
    let said = app.status.as_ref().unwrap().text.clone();
    let now = app.tutor().unwrap().attention.loss().unwrap();
    assert!(now < 0.0, "two-heads' first step goes below zero: {now}");
    assert!(said.contains("no lowest value"), "{said}");
}

/// A random correct lesson with a backward pass, of any kind the format allows: 1–5 tokens,
/// heads and K/V groups, W_o, every kind of positions, masks (a fully masked row among them),
/// cross-attention, Q, K, V given, decode; its numbers typed to two decimals and scaled by
/// 0.1, 1, 3 or 10, so that some softmaxes are nearly one-hot (where finite differences are
/// hardest).
fn random_lesson_text(seed: u64) -> String {
    let mut draw = Draw(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut pick = |n: usize| -> usize { ((draw.next() + 1.5) / 3.0 * n as f64) as usize % n };
    let tokens = 1 + pick(5);
    let cross = pick(4) == 0;
    let direct = pick(4) == 0;
    let (heads, kv) = [(1, 1), (1, 1), (2, 2), (2, 1), (4, 2), (3, 3)][pick(6)];
    let positions = match pick(4) {
        0 => "none",
        1 if !direct => "sinusoidal",
        2 if !direct && !cross => "learned",
        _ => "rope",
    };
    let d_k = if positions == "rope" {
        2 * (1 + pick(2))
    } else {
        1 + pick(3)
    };
    let d_v = 1 + pick(3);
    let d_model = 1 + pick(6);
    let d_out = 1 + pick(4);
    let w_o = heads > 1 || pick(2) == 0;
    let keys = if cross { 1 + pick(4) } else { tokens };
    let mask = match pick(3) {
        0 => "none",
        1 if !cross => "causal",
        _ => "written",
    };
    let decode = mask == "causal" && pick(2) == 0;
    let scale = [0.1, 1.0, 3.0, 10.0][pick(4)];
    let mut text = format!(
        "format = 2\ntitle = \"random {seed}\"\ntokens = [{}]\nheads = {heads}\nkv_heads = {kv}\n\
         scale = {}\ndecode = {decode}\n",
        (0..tokens)
            .map(|t| format!("\"t{t}\""))
            .collect::<Vec<_>>()
            .join(", "),
        pick(3) != 0,
    );
    if cross {
        text.push_str(&format!(
            "source_tokens = [{}]\n",
            (0..keys)
                .map(|t| format!("\"s{t}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut matrix = |rows: usize, cols: usize| -> String {
        let rows: Vec<String> = (0..rows)
            .map(|_| {
                let cells: Vec<String> = (0..cols)
                    .map(|_| format!("{}", (draw.next() * scale * 100.0).round() / 100.0))
                    .collect();
                format!("[{}]", cells.join(", "))
            })
            .collect();
        format!("[{}]", rows.join(", "))
    };
    match positions {
        "none" => {}
        "learned" => text.push_str(&format!("positions = {}\n", matrix(tokens, d_model))),
        other => text.push_str(&format!("positions = \"{other}\"\n")),
    }
    // Half the lessons of RoPE with two pairs or more pair column i with i + d_k/2, with a
    // base of their own (chosen by the seed: the draws above stay as they were).
    if positions == "rope" && d_k >= 4 && seed % 2 == 1 {
        text.push_str("rope_pairing = \"half\"\nrope_theta = 500000\n");
    }
    match mask {
        "none" => {}
        "causal" => text.push_str("mask = \"causal\"\n"),
        // The last row sees nothing; the first hides its second key.
        _ => {
            let rows: Vec<String> = (0..tokens)
                .map(|row| {
                    let cells: Vec<&str> = (0..keys)
                        .map(|key| {
                            if (row == tokens - 1 && tokens > 1) || (row == 0 && key == 1) {
                                "-inf"
                            } else {
                                "0"
                            }
                        })
                        .collect();
                    format!("[{}]", cells.join(", "))
                })
                .collect();
            text.push_str(&format!("mask = [{}]\n", rows.join(", ")));
        }
    }
    if direct {
        text.push_str(&format!("q = {}\n", matrix(tokens, heads * d_k)));
        text.push_str(&format!("k = {}\n", matrix(keys, kv * d_k)));
        text.push_str(&format!("v = {}\n", matrix(keys, kv * d_v)));
    } else {
        text.push_str(&format!("embeddings = {}\n", matrix(tokens, d_model)));
        if cross {
            text.push_str(&format!("source_embeddings = {}\n", matrix(keys, d_model)));
        }
        text.push_str(&format!("w_q = {}\n", matrix(d_model, heads * d_k)));
        text.push_str(&format!("w_k = {}\n", matrix(d_model, kv * d_k)));
        text.push_str(&format!("w_v = {}\n", matrix(d_model, kv * d_v)));
    }
    let out = if w_o {
        text.push_str(&format!("w_o = {}\n", matrix(heads * d_v, d_out)));
        d_out
    } else {
        d_v
    };
    text.push_str(&format!("grad_output = {}\n", matrix(tokens, out)));
    // A third of the lessons with projections add their biases, and half of those with W_o
    // the output's: drawn last, so that the draws above stay as they were.
    let mut row = |cols: usize| {
        let row = matrix(1, cols);
        row[1..row.len() - 1].to_string()
    };
    if !direct && seed.is_multiple_of(3) {
        text.push_str(&format!("b_q = {}\n", row(heads * d_k)));
        text.push_str(&format!("b_k = {}\n", row(kv * d_k)));
        text.push_str(&format!("b_v = {}\n", row(kv * d_v)));
    }
    if w_o && seed.is_multiple_of(2) {
        text.push_str(&format!("b_o = {}\n", row(d_out)));
    }
    text
}

#[test]
fn the_gradient_check_finds_no_fault_in_100_random_correct_lessons() {
    use attn_tutor::attention::gradient_check::check_gradients;
    let (mut inputs, mut biased) = (0, 0);
    for seed in 0..100 {
        let text = random_lesson_text(seed);
        let lesson = common::valid_lesson(&text);
        let attention = Attention::compute(&lesson);
        let check = check_gradients(&lesson, &attention).expect("a backward pass");
        let together = &check.together;
        assert!(together.agrees(), "seed {seed}: {together:?}\n{text}");
        assert!(check.each.is_empty());
        inputs += together.inputs.len();
        if together.inputs.contains(&MatrixName::BQ) || together.inputs.contains(&MatrixName::BO) {
            biased += 1;
        }
    }
    // Every lesson has at least Q, K and V (or W_q, W_k, W_v and X) to check, and some their
    // biases.
    assert!(inputs >= 300, "{inputs}");
    assert!(biased >= 10, "{biased} lessons with biases");
}

/// A lesson whose softmax is nearly one-hot in places, with values and gradients in the
/// hundreds: the old check (each of the 76 cells nudged by ±1e-5 alone, agreement to 1e-6 of
/// the larger of 1 and the slope) reported FAIL, "largest relative difference 0.00000448 at
/// dW_k⁽²⁾[3, 1]", from the rounding of a loss whose terms reach 10⁵. An 80-digit reference
/// (exact decimal arithmetic, steps of 1e-30) agrees with every gradient of the engine to
/// 1.1e-10 of the larger of 1 and the gradient.
const NEARLY_ONE_HOT: &str = r#"format = 2
title = "nearly one-hot"
tokens = ["t0", "t1", "t2"]
heads = 2
embeddings = [[-4.39, 4.17, 3.17, -2.94], [-0.05, -0.61, 1.82, 3.46], [-4.87, -5.66, 4.03, -0.81]]
w_q = [[0.79, -1.49, -0.16, 0.66], [-0.81, 1.34, 1.20, -1.41], [-1.42, 0.12, 1.32, -0.36], [-0.85, -0.23, -1.41, -0.83]]
w_k = [[-0.19, -0.01, -0.80, -0.81], [-0.84, -0.12, -0.63, -1.44], [1.01, 0.17, 0.43, -0.94], [1.48, 1.08, -1.14, -0.50]]
w_v = [[66.45, 63.36, 130.93, -23.37], [99.01, 51.09, -58.99, 26.27], [114.74, 103.86, 1.59, 26.70], [-139.64, -77.18, 89.22, -25.71]]
w_o = [[-0.98, 0.15, 0.61, 0.52], [-0.38, -0.18, 0.03, 0.84], [0.06, -0.32, -0.03, -1.41], [-1.37, 0.61, 1.45, 0.28]]
grad_output = [[-31.92, -98.90, 0.67, 144.62], [81.16, 11.89, 108.09, -80.35], [4.13, 135.74, 23.34, -12.26]]
"#;

#[test]
fn check_passes_the_correct_gradients_of_a_lesson_with_a_nearly_one_hot_softmax() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("nearly-one-hot.toml");
    std::fs::write(&path, NEARLY_ONE_HOT).unwrap();
    let out = common::attn_tutor(&dir)
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(
            "ok    gradients: dX, dW_q, dW_k, dW_v, dW_o agree with central finite differences"
        ),
        "{text}"
    );
    assert!(text.contains("the lesson passes"), "{text}");
}

/// What the binary prints running `args` (a command, then its options after the lesson) on
/// the lesson `text`, which it must run without fault.
fn ran_on(text: &str, args: &[&str]) -> String {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("lesson.toml");
    std::fs::write(&path, text).unwrap();
    let out = common::attn_tutor(&dir)
        .arg(args[0])
        .arg(&path)
        .args(&args[1..])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{printed}");
    printed
}

#[test]
fn check_names_the_gradient_of_embeddings_and_positions_once() {
    // X = E + P: E's and P's gradients are both dX, which the line says once.
    let text = ran_on(
        "format = 2\ntitle = \"learned\"\ntokens = [\"a\", \"b\"]\n\
         embeddings = [[1, 0], [0, 1]]\npositions = [[0.5, 0], [0, -0.5]]\n\
         w_q = [[1, 0], [0, 1]]\nw_k = [[2, 0], [0, 2]]\nw_v = [[1, 2], [3, 4]]\n\
         grad_output = [[1, 0], [0, 2]]\n",
        &["check"],
    );
    assert!(
        text.contains("ok    gradients: dX, dW_q, dW_k, dW_v agree with")
            && text.contains("cells of E, P, W_q, W_k, W_v"),
        "{text}"
    );
}

#[test]
fn a_backward_step_starts_on_a_row_with_a_gradient_when_the_focus_has_none() {
    // The last token of a model's lesson predicts nothing: its grad_output row is 0, and so
    // is every backward cell on it. The backward steps start on the row before it instead;
    // the forward steps keep the focus.
    let text = "format = 2\ntitle = \"last predicts nothing\"\ntokens = [\"a\", \"b\", \"c\"]\n\
        embeddings = [[1, 0], [0, 1], [1, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[2, 0], [0, 2]]\n\
        w_v = [[1, 2], [3, 4]]\nmask = \"causal\"\nfocus = \"c\"\n\
        grad_output = [[1, 0], [0, 2], [0, 0]]\n";
    let mut app = common::lesson_app("last", text);
    common::go_to(&mut app, "softmax");
    let forward = common::screen(&app, 80, 24);
    assert!(forward.contains("Softmax of row c"), "{forward}");
    common::go_to(&mut app, "backward_values");
    let backward = common::screen(&app, 80, 24);
    assert!(backward.contains("How d_weights[b, "), "{backward}");
}

#[test]
fn show_explains_a_biases_gradient_and_a_backward_row_with_a_gradient() {
    // Two heads with W_o and every bias; the focus, c, has no gradient.
    let text = ran_on(
        "format = 2\ntitle = \"biased\"\ntokens = [\"a\", \"b\", \"c\"]\nheads = 2\n\
         embeddings = [[1, 0], [0, 1], [1, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[2, 0], [0, 2]]\n\
         w_v = [[1, 2], [3, 4]]\nw_o = [[1, 0], [0, 1]]\nb_q = [0.5, -1]\nb_k = [0, 1]\n\
         b_v = [1, 1]\nb_o = [2, -2]\nmask = \"causal\"\nfocus = \"c\"\n\
         grad_output = [[1, 0], [0, 2], [0, 0]]\n",
        &["show", "--step", "backward_output"],
    );
    // db_o = Σ dO: 1 + 0 + 0 and 0 + 2 + 0.
    assert!(
        text.contains("db_o[1] = Σ dO[:, 1] = 1 + 0 + 0 = 1"),
        "{text}"
    );
    assert!(
        text.contains("db_o[2] = Σ dO[:, 2] = 0 + 2 + 0 = 2"),
        "{text}"
    );
    assert!(text.contains("d_concat[b, 1] = "), "{text}");
    assert!(!text.contains("d_concat[c, 1] = "), "{text}");
    assert!(!text.contains("more cells in this row"), "{text}");
}

#[test]
fn a_gradient_step_names_every_matrix_it_moved_the_biases_too() {
    let text = "format = 2\ntitle = \"biased\"\ntokens = [\"a\", \"b\"]\n\
        embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[2, 0], [0, 2]]\n\
        w_v = [[1, 2], [3, 4]]\nw_o = [[1, 0], [0, 1]]\nb_q = [0.5, -1]\nb_v = [1, 1]\n\
        grad_output = [[1, 0], [0, 2]]\n";
    let mut app = common::lesson_app("biased", text);
    attn_tutor::app::update(&mut app, attn_tutor::app::Action::GradientStep);
    let said = common::status(&app);
    assert!(
        said.contains("η = 0.1: W_q, W_k, W_v, W_o, b_q and b_v moved by −η times their gradients"),
        "{said}"
    );
}

#[test]
fn the_embeddings_gradient_speaks_of_positions_only_where_they_were_added() {
    use attn_tutor::pipeline::{Plan, Step};
    let base = "format = 2\ntitle = \"p\"\ntokens = [\"a\", \"b\"]\n\
        embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[2, 0], [0, 2]]\n\
        w_v = [[1, 2], [3, 4]]\ngrad_output = [[1, 0], [0, 2]]\n";
    let said = |extra: &str| {
        let lesson = common::valid_lesson(&format!("{base}{extra}"));
        Step::BackwardInput
            .narration(&Plan::new(lesson.shape()))
            .to_string()
    };
    for extra in ["", "positions = \"rope\"\n"] {
        assert!(
            !said(extra).contains("X = E + P"),
            "{extra}: {}",
            said(extra)
        );
    }
    for extra in [
        "positions = [[0.5, 0], [0, 1]]\n",
        "positions = \"sinusoidal\"\n",
    ] {
        assert!(
            said(extra).contains("X = E + P"),
            "{extra}: {}",
            said(extra)
        );
    }
}

/// `gradients` with `fault` applied to the one of `input`.
fn with_fault(
    gradients: &[(MatrixName, String, nalgebra::DMatrix<f64>)],
    input: MatrixName,
    fault: impl Fn(&mut nalgebra::DMatrix<f64>),
) -> Vec<(MatrixName, String, nalgebra::DMatrix<f64>)> {
    let mut faulty = gradients.to_vec();
    for (name, _, gradient) in &mut faulty {
        if *name == input {
            fault(gradient);
        }
    }
    faulty
}

/// A deliberate slip in a gradient.
type Fault = Box<dyn Fn(&mut nalgebra::DMatrix<f64>)>;

#[test]
fn a_wrong_gradient_is_caught_and_named() {
    use attn_tutor::attention::gradient_check::{
        check_gradients, compare_gradients, directions, engine_gradients,
    };
    let (mut faults_seen, mut caught, mut tiny_caught, mut tiny_seen) = (0, 0, 0, 0);
    for seed in 0..40 {
        let text = random_lesson_text(seed);
        let lesson = common::valid_lesson(&text);
        let attention = Attention::compute(&lesson);
        let correct = check_gradients(&lesson, &attention).unwrap();
        let tolerance = correct.together.tolerance;
        let gradients = engine_gradients(&lesson, &attention);
        let directions = directions(&lesson, &gradients).unwrap();
        for (index, (input, symbol, gradient)) in gradients.iter().enumerate() {
            // The largest cell off by a tenth, one head's block (or the last row) left out,
            // every cell off by 1 part in 10⁵.
            let (rows, cols) = gradient.shape();
            let at = gradient.iamax_full();
            let heads = lesson.heads.query;
            let faults: Vec<(&str, Fault)> = vec![
                ("a cell off by a tenth", Box::new(move |g| g[at] *= 1.1)),
                (
                    "the last head's columns left out",
                    Box::new(move |g| {
                        let width = cols / heads;
                        if width < cols {
                            g.columns_mut(cols - width, width).fill(0.0);
                        } else {
                            g.row_mut(rows - 1).fill(0.0);
                        }
                    }),
                ),
                ("every cell 1e-5 too large", Box::new(|g| *g *= 1.0 + 1e-5)),
            ];
            for (what, fault) in faults {
                let tiny = what.starts_with("every");
                let faulty = with_fault(&gradients, *input, fault);
                if faulty[index].2 == *gradient {
                    // Nothing to find: the row or block was 0 already (hidden by the mask).
                    continue;
                }
                // What the fault changes along the direction the check takes: one at least
                // twice the correct gradients' tolerance must be caught. (A gradient that is 0
                // to rounding, a key hidden from every query, a one-hot softmax, has no such
                // change.)
                let effect = (&faulty[index].2 - gradient).dot(&directions[index]).abs();
                faults_seen += 1;
                tiny_seen += usize::from(tiny);
                if effect < 2.0 * tolerance {
                    continue;
                }
                let check = compare_gradients(&lesson, &faulty).unwrap();
                assert!(
                    !check.agrees(),
                    "seed {seed}, {symbol} with {what}: {:?}\n{text}",
                    check.together
                );
                // Each input alone then: the faulty one disagrees, the others agree.
                assert_eq!(check.each.len(), gradients.len());
                for (other, direction) in check.each.iter().enumerate() {
                    if other == index && effect < 2.0 * direction.tolerance {
                        continue;
                    }
                    assert_eq!(
                        direction.agrees(),
                        other != index,
                        "seed {seed}, {symbol} with {what}: {direction:?}\n{text}"
                    );
                }
                caught += 1;
                tiny_caught += usize::from(tiny);
            }
        }
    }
    // Not vacuous: nearly every fault was large enough to be caught, and was; 1 part in 10⁵ of
    // a whole gradient is caught in most cases too.
    println!("{caught} of {faults_seen} faults caught, {tiny_caught} of {tiny_seen} of 1e-5");
    assert!(caught * 10 >= faults_seen * 8, "{caught} of {faults_seen}");
    assert!(
        tiny_caught * 10 >= tiny_seen * 6,
        "{tiny_caught} of {tiny_seen}"
    );
}

#[test]
fn a_wrong_gradient_fails_check_with_what_was_compared_and_the_tolerance() {
    use attn_tutor::attention::gradient_check::{compare_gradients, engine_gradients};
    let lesson = common::valid_lesson(NEARLY_ONE_HOT);
    let attention = Attention::compute(&lesson);
    let gradients = engine_gradients(&lesson, &attention);
    // W_q's gradient with 1/√d_k left out.
    let faulty = with_fault(&gradients, MatrixName::WQ, |g| *g *= 2f64.sqrt());
    let check = compare_gradients(&lesson, &faulty).unwrap();
    assert!(!check.agrees());
    let text = attn_tutor::cli::gradient_lines(&attention, &check);
    let fail = text.lines().next().unwrap();
    for words in [
        "FAIL  gradients: dW_q disagrees with central finite differences of L.",
        "Along a random direction U through all 16 cells of W_q, the backward pass gives",
        "Σ dW_q ⊙ U = ",
        "and finite differences of L (steps ",
        "extrapolated) give ",
        "over the tolerance ",
        "the two steps' slopes differ by, plus ",
        " for float rounding)",
    ] {
        assert!(fail.contains(words), "{words:?} in {text}");
    }
    assert!(
        text.contains("dX, dW_k, dW_v, dW_o agree with finite differences"),
        "{text}"
    );
    assert_eq!(text.matches("FAIL").count(), 1, "{text}");
}

/// Issue 29's lesson where one step of η = 0.1 overshoots: L is not convex in W_q and W_k.
const OVERSHOOT: &str = r#"
format = 2
title = "One step that raises L"
tokens = ["a", "b", "c"]
embeddings = [[-2, -1], [2, 2], [2, -1]]
w_q = [[-2, -3], [3, 4]]
w_k = [[3, -2], [-2, 2]]
w_v = [[-2, 2], [-1, -2]]
grad_output = [[1, 0], [0, 0], [0, 0]]
"#;

#[test]
fn a_step_that_raises_the_loss_says_so_with_l_before_and_after() {
    use attn_tutor::app::{Action, update};
    let lesson = common::valid_lesson(OVERSHOOT);
    let attention = Attention::compute(&lesson);
    let before = attention.loss().unwrap();
    let mut stepped = lesson.clone();
    stepped.gradient_step(&attention, 0.1);
    let after = Attention::compute(&stepped).loss().unwrap();
    assert_eq!(format!("{before:.3} → {after:.3}"), "-3.839 → -3.107");
    // A small enough step lowers it, as the words say.
    let mut small = lesson.clone();
    small.gradient_step(&attention, 0.001);
    assert!(Attention::compute(&small).loss().unwrap() < before);
    // In the tutor: L before and after, and that it rose.
    let mut app = common::lesson_app("overshoot", OVERSHOOT);
    update(&mut app, Action::GradientStep);
    let said = common::status(&app);
    assert!(said.contains("L = -3.839 → -3.107"), "{said}");
    assert!(said.contains("L rose"), "{said}");
    assert!(!said.contains("no lowest value"), "{said}");
    // Where L falls, nothing says it rose.
    let mut app = common::lesson_app("backward", include_str!("../../lessons/backward.toml"));
    update(&mut app, Action::GradientStep);
    assert!(
        !common::status(&app).contains("rose"),
        "{}",
        common::status(&app)
    );
}

#[test]
fn no_text_promises_that_every_step_lowers_the_loss() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/lesson-format.md"
    ))
    .unwrap();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let narration = include_str!("../../lessons/backward.toml");
    for (whose, text) in [("docs", &docs), ("README", &readme)] {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for claim in ["each step lowers it", "showing L go down", "L going down"] {
            assert!(!flat.contains(claim), "{whose} says `{claim}`");
        }
        assert!(flat.contains("small enough η"), "{whose}");
        assert!(flat.contains("not convex"), "{whose}");
    }
    assert!(!narration.contains("L going down"));
    assert!(narration.contains("only when η is small enough"));
    // The docs' example is the lesson this file checks.
    let flat = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("from −3.839 to −3.107"));
    assert!(flat.contains("w_q = [[-2, -3], [3, 4]]"));
}

/// Under grouped-query attention dX_k is a sum over the K/V groups, and the working of a
/// group's gradient says its mark is the group's, the heads' marks the heads'.
#[test]
fn a_k_v_groups_gradients_are_summed_over_groups_and_told_from_a_heads() {
    let kind = Kind {
        heads: 4,
        kv: 2,
        w_o: true,
        positions: "none",
        mask: "none",
        cross: false,
        direct: false,
        scale: true,
    };
    let lesson = common::valid_lesson(&lesson_text(kind, 5));
    let attention = Attention::compute(&lesson);
    for (name, formula) in [
        (MatrixName::DXK, "dX_k = Σ_g dK_group⁽ᵍ⁾·W_k⁽ᵍ⁾ᵀ"),
        (MatrixName::DXV, "dX_v = Σ_g dV_group⁽ᵍ⁾·W_v⁽ᵍ⁾ᵀ"),
        (MatrixName::DXQ, "dX_q = Σ_h dQ⁽ʰ⁾·W_q⁽ʰ⁾ᵀ"),
    ] {
        let caption = attn_tutor::ui::formula::caption_in(&attention, name, 0);
        assert!(caption.starts_with(formula), "{caption}");
    }
    // Head 3's is group 2's: the sum of heads 3 and 4.
    let seen = attention
        .derive(Cell::new(MatrixName::DKGroup, 1, 0).in_head(2))
        .unwrap()
        .explain(&attention, 4);
    assert!(
        seen.contains("dK_group⁽²⁾[b, 1] = dK⁽³⁾[b, 1] + dK⁽⁴⁾[b, 1]"),
        "{seen}"
    );
    assert!(
        seen.contains(
            "heads 3 and 4 share K/V group 2's keys, so their gradients add: dK_group⁽²⁾ is \
             marked with the group's number, dK⁽ʰ⁾ with the head's"
        ),
        "{seen}"
    );
    // With one group (multi-query) the group has no mark.
    let kind = Kind { kv: 1, ..kind };
    let lesson = common::valid_lesson(&lesson_text(kind, 5));
    let attention = Attention::compute(&lesson);
    let seen = attention
        .derive(Cell::new(MatrixName::DVGroup, 0, 0).in_head(3))
        .unwrap()
        .explain(&attention, 4);
    assert!(
        seen.contains(
            "heads 1–4 share the one K/V group's values, so their gradients add: dV_group has \
             no mark, dV⁽ʰ⁾ is marked with the head's number"
        ),
        "{seen}"
    );
}

/// The status after g and the header write L at the lesson's decimals, trailing zeros kept:
/// `1.2736 → 1.1580`, not `→ 1.158`.
#[test]
fn l_is_written_at_the_lessons_decimals_before_and_after_a_step() {
    use attn_tutor::app::{Action, update};
    let mut app = common::lesson_app("backward", include_str!("../../lessons/backward.toml"));
    common::go_to(&mut app, "backward_values");
    update(&mut app, Action::GradientStep);
    update(&mut app, Action::GradientStep);
    let said = common::status(&app);
    assert!(
        said.contains("L = 1.2736 → 1.1580;") || said.contains("L = 1.2736 → 1.1580 "),
        "{said}"
    );
    let screen = common::screen(&app, 80, 24);
    assert!(
        screen.contains("L = Σ output ⊙ grad_output = 1.1580"),
        "{screen}"
    );
}

/// A negative term of a sum in the working is in parentheses, as `x + (y)` elsewhere: never
/// `+ -0.44498`.
#[test]
fn a_negative_term_of_a_gradients_sum_is_written_in_parentheses() {
    let builtin = attn_tutor::lesson::builtin("backward").unwrap();
    let lesson = attn_tutor::lesson::load_text("backward", None, builtin.text.to_string())
        .unwrap()
        .lesson;
    let attention = Attention::compute(&lesson);
    let seen = attention
        .derive(Cell::new(MatrixName::DX, 0, 0))
        .unwrap()
        .explain(&attention, 4);
    assert!(
        seen.contains("= -0.44498 + (-0.44498) + 0.80443 = "),
        "{seen}"
    );
    assert!(!seen.contains("+ -"), "{seen}");
}

/// The backward lesson's words on a step that overshoots are said of L in general; its own L
/// is linear in W_v and has no lowest value, which the engine shows: steps of every size
/// lower it, and far below where it started.
#[test]
fn the_backward_lesson_says_its_own_l_has_no_lowest_value() {
    let text = include_str!("../../lessons/backward.toml");
    let lesson = common::valid_lesson(text);
    let narration = lesson
        .narration
        .get(attn_tutor::pipeline::Step::BackwardWeights)
        .unwrap()
        .to_string();
    assert!(
        narration.contains(
            "In general a step against the gradient lowers L only when η is small enough"
        ),
        "{narration}"
    );
    assert!(
        narration.contains("This L is linear in W_v, so it has no lowest value"),
        "{narration}"
    );
    let attention = Attention::compute(&lesson);
    let before = attention.loss().unwrap();
    for eta in [0.01, 0.1, 1.0, 10.0] {
        let mut stepped = lesson.clone();
        stepped.gradient_step(&attention, eta);
        let after = Attention::compute(&stepped).loss().unwrap();
        assert!(after < before, "η = {eta}: {before} → {after}");
    }
    let mut far = lesson.clone();
    far.gradient_step(&attention, 1000.0);
    assert!(Attention::compute(&far).loss().unwrap() < -100.0);
}

#[test]
fn capital_g_before_the_backward_pass_says_what_it_is_for_and_opens_no_prompt() {
    use attn_tutor::app::{Action, Overlay, update};
    let mut app = builtin_app("cat-sleeps");
    update(&mut app, Action::SetLearningRate);
    assert!(matches!(app.overlay, Overlay::None), "{:?}", app.overlay);
    let said = app.status.as_ref().unwrap().text.clone();
    assert!(
        said.contains("once the lesson has a backward pass: d adds one"),
        "{said}"
    );
}

#[test]
fn eta_shows_in_the_header_and_u_undoes_its_setting_and_the_step_exactly() {
    use attn_tutor::app::{Action, update};
    let mut app = builtin_app("backward");
    update(&mut app, Action::LastStep);
    let formula = |app: &attn_tutor::app::App| common::screen_line(app, 1);
    assert!(formula(&app).contains("η = 0.1"), "{}", formula(&app));
    update(&mut app, Action::SetLearningRate);
    for ch in "0.5".chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    assert_eq!(app.tutor().unwrap().learning_rate, 0.5);
    assert!(formula(&app).contains("η = 0.5"), "{}", formula(&app));
    // A step with η = 0.5, undone: the weights are the old ones to the bit.
    let before = app.tutor().unwrap().lesson.clone();
    update(&mut app, Action::GradientStep);
    assert_ne!(app.tutor().unwrap().lesson, before);
    update(&mut app, Action::Undo);
    assert_eq!(app.tutor().unwrap().lesson, before);
    assert!(
        common::status(&app).contains("the step of gradient descent"),
        "{}",
        common::status(&app)
    );
    // Then u undoes η's setting, and Ctrl-r sets it again.
    update(&mut app, Action::Undo);
    assert_eq!(app.tutor().unwrap().learning_rate, 0.1);
    assert!(
        common::status(&app).contains("η = 0.5 → 0.1"),
        "{}",
        common::status(&app)
    );
    assert!(formula(&app).contains("η = 0.1"), "{}", formula(&app));
    update(&mut app, Action::Redo);
    assert_eq!(app.tutor().unwrap().learning_rate, 0.5);
    assert!(!app.tutor().unwrap().has_unsaved_edits());
}

#[test]
fn a_tiny_eta_is_written_as_typed_not_as_three_hundred_zeros() {
    use attn_tutor::app::{Action, update};
    let mut app = builtin_app("backward");
    update(&mut app, Action::LastStep);
    update(&mut app, Action::SetLearningRate);
    for ch in "1e-300".chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    let said = common::status(&app);
    assert!(said.starts_with("η = 1e-300: g now moves"), "{said}");
    let formula = common::screen_line(&app, 1);
    assert!(formula.contains("η = 1e-300"), "{formula}");
    update(&mut app, Action::GradientStep);
    let said = common::status(&app);
    assert!(said.contains("η = 1e-300:"), "{said}");
}

/// The tutor opened on a built-in lesson from the picker, as `attn-tutor NAME` opens it.
fn builtin_app(name: &str) -> attn_tutor::app::App {
    let entries = attn_tutor::app::App::builtin_entries();
    let index = entries
        .iter()
        .position(|entry| entry.name == name)
        .unwrap_or_else(|| panic!("no built-in lesson {name}"));
    attn_tutor::app::App::new(entries, Some(index))
}
