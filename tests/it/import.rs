//! `attn-tutor import MODEL --text …`: a real model's layer on the learner's sentence, from
//! small synthetic checkpoints written here under each architecture's real names; its numbers
//! against an independent numpy float64 reference; and every bad input refused with exit 2, a
//! message naming the file and the tensor or option, and nothing written.

use crate::common;
use common::checkpoint::{self, Dtype};
use common::*;

use tempfile::TempDir;

/// The words of the synthetic models' tokenizer.json: ids 0, 1, …
const WORDS: [&str; 12] = [
    "<unk>", "<s>", "the", "cat", "sat", "on", "mat", "and", "dog", "ran", "to", "a",
];

/// The checkpoint `model` stored as `dtype` in `dir/name`, with a word-level tokenizer.json of
/// `WORDS`.
fn with_words(
    dir: &TempDir,
    name: &str,
    model: &(String, Vec<checkpoint::Tensor>),
    dtype: Dtype,
) -> std::path::PathBuf {
    let folder = dir.path().join(name);
    checkpoint::write(&folder, model, dtype);
    std::fs::write(
        folder.join("tokenizer.json"),
        checkpoint::word_tokenizer(&WORDS),
    )
    .unwrap();
    folder
}

/// A GPT-2 of 3 layers, width 8, 2 heads, with a word-level tokenizer.json, in `dir/model`.
fn gpt2_model(dir: &TempDir) -> std::path::PathBuf {
    let model = checkpoint::gpt2("transformer.", 3, 8, 2, WORDS.len(), 16);
    with_words(dir, "model", &model, Dtype::F32)
}

/// Runs `import ARGS…` in `dir`, expecting exit 2; returns stderr, after checking that no
/// lesson file was written.
fn refused(dir: &TempDir, args: &[&str]) -> String {
    let output = attn_tutor(dir)
        .arg("import")
        .args(args)
        .args(["-o", "out.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        !dir.path().join("out.toml").exists(),
        "a refused import wrote a file"
    );
    assert!(output.stdout.is_empty(), "{output:?}");
    String::from_utf8(output.stderr).unwrap()
}

fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} not in:\n{message}");
    }
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn a_layer_or_head_past_the_models_is_refused_naming_the_range() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    let message = refused(&dir, &["model", "--text", "the cat", "--layer", "3"]);
    assert_says(&message, &["config.json", "layer 3", "3 layers (0 to 2)"]);
    let message = refused(&dir, &["model", "--text", "the cat", "--head", "2"]);
    assert_says(&message, &["head 2", "2 heads (0 to 1, or all)"]);
    let message = refused(&dir, &["model", "--text", "the cat", "--head", "one"]);
    assert_says(&message, &["--head", "or `all`"]);
}

#[test]
fn a_folder_without_config_json_or_of_an_unknown_model_type_is_refused() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let message = refused(&dir, &["empty", "--text", "the cat"]);
    assert_says(&message, &["config.json", "no such file"]);
    let folder = gpt2_model(&dir);
    std::fs::write(folder.join("config.json"), r#"{"model_type": "bert"}"#).unwrap();
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(
        &message,
        &["bert", "gpt2, llama, mistral, qwen2, attn-only"],
    );
}

#[test]
fn a_truncated_or_corrupt_safetensors_file_is_refused_naming_it() {
    let dir = TempDir::new().unwrap();
    let folder = gpt2_model(&dir);
    let weights = folder.join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() - 100]).unwrap();
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["model.safetensors"]);
    std::fs::write(&weights, b"not a safetensors file at all").unwrap();
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["model.safetensors", "not a safetensors file"]);
}

#[test]
fn a_missing_tensor_or_one_of_the_wrong_shape_or_dtype_is_named() {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("model");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("tokenizer.json"),
        checkpoint::word_tokenizer(&WORDS),
    )
    .unwrap();
    let (config, mut tensors) = checkpoint::gpt2("", 2, 8, 2, WORDS.len(), 16);
    tensors.retain(|tensor| tensor.name != "h.0.attn.c_attn.bias");
    checkpoint::write(&folder, &(config.clone(), tensors), Dtype::F32);
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["model.safetensors", "h.0.attn.c_attn.bias"]);

    let (_, mut tensors) = checkpoint::gpt2("", 2, 8, 2, WORDS.len(), 16);
    for tensor in &mut tensors {
        if tensor.name == "h.0.attn.c_proj.weight" {
            tensor.shape = vec![8, 9];
        }
    }
    checkpoint::write(&folder, &(config.clone(), tensors), Dtype::F32);
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["h.0.attn.c_proj.weight", "[8, 9]", "[8, 8]"]);

    // An I32 tensor where a weight should be.
    let (_, tensors) = checkpoint::gpt2("", 2, 8, 2, WORDS.len(), 16);
    let mut bytes = checkpoint::safetensors(&tensors, Dtype::F32);
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = String::from_utf8(bytes[8..8 + header_len].to_vec()).unwrap();
    // The first tensor layer 0 reads after the embeddings.
    let at = header.find("\"h.0.ln_1.weight\"").unwrap();
    let retyped = format!(
        "{}{}",
        &header[..at],
        header[at..].replacen("\"F32\"", "\"I32\"", 1)
    );
    bytes.splice(8..8 + header_len, retyped.into_bytes());
    std::fs::write(folder.join("model.safetensors"), bytes).unwrap();
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["I32", "F32, F16, BF16"]);
}

#[test]
fn a_text_longer_than_the_context_or_with_no_tokens_is_refused() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    let long = vec!["the"; 17].join(" ");
    let message = refused(&dir, &["model", "--text", &long]);
    assert_says(&message, &["17 tokens", "context", "16"]);
    let message = refused(&dir, &["model", "--text", "   "]);
    assert_says(&message, &["--text", "no tokens"]);
}

#[test]
fn an_unreadable_tokenizer_json_is_refused_naming_it() {
    let dir = TempDir::new().unwrap();
    let folder = gpt2_model(&dir);
    std::fs::write(folder.join("tokenizer.json"), "{ not json").unwrap();
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["tokenizer.json"]);
}

#[test]
fn a_model_without_a_tokenizer_that_is_not_gpt2_is_told_what_to_add() {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("model");
    checkpoint::write(
        &folder,
        &checkpoint::llama("llama", 1, 8, 2, 1, 4, WORDS.len(), 10_000.0),
        Dtype::F32,
    );
    let message = refused(&dir, &["model", "--text", "the cat"]);
    assert_says(&message, &["no tokenizer.json", "GPT-2"]);
}

#[test]
fn import_never_writes_over_an_existing_file() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    std::fs::write(dir.path().join("mine.toml"), "my own lesson").unwrap();
    let output = attn_tutor(&dir)
        .args(["import", "model", "--text", "the cat", "-o", "mine.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine.toml")).unwrap(),
        "my own lesson"
    );
}

/// Imports into `out.toml` in `dir` and returns what `import` printed.
fn imported(dir: &TempDir, args: &[&str]) -> String {
    let output = attn_tutor(dir)
        .arg("import")
        .args(args)
        .args(["-o", "out.toml"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn an_imported_lesson_is_written_checked_and_says_where_it_came_from() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    let said = imported(
        &dir,
        &[
            "model",
            "--text",
            "the cat sat",
            "--layer",
            "1",
            "--head",
            "1",
        ],
    );
    assert!(said.contains("wrote out.toml"), "{said}");
    attn_tutor(&dir)
        .args(["check", "out.toml"])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(dir.path().join("out.toml")).unwrap();
    assert!(
        text.contains("title = \"model layer 1 head 1: the cat sat\""),
        "{text}"
    );
    assert!(text.contains("token_ids = [2, 3, 4]"), "{text}");
    assert!(text.contains("model_type gpt2"), "{text}");
}

#[test]
fn bos_puts_the_models_beginning_of_sequence_token_first() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    imported(&dir, &["model", "--text", "the cat", "--bos"]);
    let text = std::fs::read_to_string(dir.path().join("out.toml")).unwrap();
    // The synthetic GPT-2's config says bos_token_id 0.
    assert!(text.contains("token_ids = [0, 2, 3]"), "{text}");
}

/// Imports `args` into out.toml, writes `show out.toml --format json` and compares it with
/// tests/reference/checkpoint.py's float64 computation of the same checkpoint, tokens, layer
/// and head; panics with the reference's report when a number is off by more than 1e-9
/// relative.
fn assert_matches_numpy(dir: &TempDir, model: &str, text: &str, layer: usize, head: &str) {
    let Some(python) = common::numpy_python() else {
        return;
    };
    imported(
        dir,
        &[
            model,
            "--text",
            text,
            "--layer",
            &layer.to_string(),
            "--head",
            head,
        ],
    );
    let written = std::fs::read_to_string(dir.path().join("out.toml")).unwrap();
    let ids = written
        .lines()
        .find_map(|line| line.strip_prefix("token_ids = ["))
        .and_then(|rest| rest.strip_suffix(']'))
        .expect("the lesson has its token ids")
        .replace(' ', "");
    let json = attn_tutor(dir)
        .args(["show", "out.toml", "--format", "json"])
        .output()
        .unwrap();
    assert!(json.status.success(), "{json:?}");
    std::fs::write(dir.path().join("show.json"), &json.stdout).unwrap();
    let reference =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference/checkpoint.py");
    let output = std::process::Command::new(python)
        .arg(reference)
        .arg(dir.path().join(model))
        .args([
            "--tokens",
            &ids,
            "--layer",
            &layer.to_string(),
            "--head",
            head,
        ])
        .arg("--compare")
        .arg(dir.path().join("show.json"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{model} layer {layer} head {head} on {text:?} disagrees with numpy:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn gpt2s_every_head_past_layer_0_is_numpys_to_1e_9() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    assert_matches_numpy(&dir, "model", "the cat sat on the mat", 2, "all");
}

#[test]
fn gpt2s_one_head_at_layer_0_is_numpys_with_its_positions_added() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    assert_matches_numpy(&dir, "model", "the dog ran to a cat", 0, "1");
}

#[test]
fn a_llama_with_grouped_kv_heads_and_rotate_half_rope_is_numpys() {
    let dir = TempDir::new().unwrap();
    with_words(
        &dir,
        "llama",
        &checkpoint::llama("llama", 2, 16, 4, 2, 4, WORDS.len(), 500_000.0),
        Dtype::BF16,
    );
    assert_matches_numpy(&dir, "llama", "the cat sat on the mat", 1, "all");
    std::fs::remove_file(dir.path().join("out.toml")).unwrap();
    // Query head 3 reads K/V group 1.
    assert_matches_numpy(&dir, "llama", "the cat sat on the mat", 0, "3");
}

#[test]
fn a_qwen2_with_q_k_v_biases_is_numpys() {
    let dir = TempDir::new().unwrap();
    with_words(
        &dir,
        "qwen",
        &checkpoint::llama("qwen2", 2, 16, 4, 1, 4, WORDS.len(), 1_000_000.0),
        Dtype::F16,
    );
    assert_matches_numpy(&dir, "qwen", "a dog and a cat", 1, "all");
}

#[test]
fn an_attention_only_model_has_no_norm_and_is_numpys() {
    let dir = TempDir::new().unwrap();
    with_words(
        &dir,
        "induction",
        &checkpoint::attn_only(2, 8, 2, WORDS.len(), 16),
        Dtype::F32,
    );
    assert_matches_numpy(&dir, "induction", "the cat sat the cat", 1, "all");
    let json = String::from_utf8(
        attn_tutor(&dir)
            .args(["show", "out.toml", "--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        !json.contains("\"normed\""),
        "an attn-only model has no norm"
    );
}

#[test]
fn a_gpt2_without_a_tokenizer_json_uses_gpt2s_own_bpe() {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("gpt2");
    // GPT-2's whole vocabulary, at width 4.
    checkpoint::write(
        &folder,
        &checkpoint::gpt2("", 1, 4, 2, 50257, 8),
        Dtype::F16,
    );
    imported(&dir, &["gpt2", "--text", "The cat sleeps", "--head", "0"]);
    let text = std::fs::read_to_string(dir.path().join("out.toml")).unwrap();
    assert!(text.contains("token_ids = [464, 3797, 44263]"), "{text}");
    assert!(
        text.contains(r#"tokens = ["The", "␣cat", "␣sleeps"]"#),
        "{text}"
    );
}

#[test]
fn a_path_that_is_not_there_is_named_as_typed() {
    let dir = TempDir::new().unwrap();
    let message = refused(&dir, &["no-such-model", "--text", "the cat"]);
    assert_says(&message, &["no-such-model: no such file or folder"]);
    assert!(!message.contains("config.json: no such file"), "{message}");
}

/// `show out.toml ARGS…`'s output, expecting success.
fn show_imported(dir: &TempDir, args: &[&str]) -> String {
    let output = attn_tutor(dir)
        .args(["show", "out.toml"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // The narration is wrapped: one line, to find its sentences.
    String::from_utf8(output.stdout).unwrap().replace('\n', " ")
}

#[test]
fn the_narration_says_what_x_is_and_counts_heads_as_the_tutor_does() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    imported(
        &dir,
        &["model", "--text", "the cat sat on the mat", "--layer", "1"],
    );
    let text = show_imported(&dir, &[]);
    assert!(
        text.contains("after the model's first block (a block: LayerNorm,"),
        "{text}"
    );
    assert!(text.contains("head 1 is the checkpoint's head 0"), "{text}");
    assert!(text.contains(" Head 2: first token "), "{text}");
    std::fs::remove_file(dir.path().join("out.toml")).unwrap();
    imported(&dir, &["model", "--text", "the cat sat", "--head", "1"]);
    let text = show_imported(&dir, &[]);
    assert!(
        text.contains("This is the checkpoint's head 1, counting from 0"),
        "{text}"
    );
}

#[test]
fn an_attention_only_models_narration_has_no_norm_in_it() {
    let dir = TempDir::new().unwrap();
    with_words(
        &dir,
        "model",
        &checkpoint::attn_only(2, 8, 2, WORDS.len(), 16),
        Dtype::F32,
    );
    imported(&dir, &["model", "--text", "the cat sat"]);
    let text = show_imported(&dir, &[]);
    assert!(
        text.contains("this attention-only model: each token's row"),
        "{text}"
    );
    assert!(!text.contains("(after the norm)"), "{text}");
}

#[test]
fn one_head_of_grouped_heads_says_whose_keys_and_values_it_reads() {
    let dir = TempDir::new().unwrap();
    with_words(
        &dir,
        "model",
        &checkpoint::llama("llama", 1, 16, 4, 2, 4, WORDS.len(), 10_000.0),
        Dtype::F32,
    );
    imported(&dir, &["model", "--text", "the cat sat", "--head", "3"]);
    let text = show_imported(&dir, &["--step", "projection"]);
    assert!(
        text.contains("W_k and W_v are K/V group 1's (counting from 0), which query heads 2 to 3"),
        "{text}"
    );
    // The lesson's norm is RMSNorm: asked for the LayerNorm step, show says where its norm is.
    let text = show_imported(&dir, &["--step", "layer_norm"]);
    assert!(text.contains("This lesson's norm is RMSNorm"), "{text}");
}

#[test]
fn the_circuits_of_a_model_with_biases_say_the_circuit_leaves_them_out() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    imported(&dir, &["model", "--text", "the cat sat"]);
    let text = show_imported(&dir, &["--step", "circuits"]);
    assert!(
        text.contains("W_QK leaves out the biases b_q and b_k, which the projections add"),
        "{text}"
    );
    assert!(
        text.contains("W_OV leaves out b_v·W_o and b_o, which every row of the output gets"),
        "{text}"
    );
}

#[test]
fn a_text_of_only_the_bos_token_makes_a_one_token_lesson_titled_without_a_colon() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    imported(&dir, &["model", "--text", "", "--bos"]);
    let text = std::fs::read_to_string(dir.path().join("out.toml")).unwrap();
    assert!(
        text.contains("title = \"model layer 0 all 2 heads\"\n"),
        "{text}"
    );
    let output = attn_tutor(&dir)
        .args(["check", "out.toml"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("(1 token × 8"), "{said}");
}

#[test]
fn every_head_of_a_model_too_wide_for_a_lesson_file_is_refused_with_o_but_one_head_is_written() {
    let dir = TempDir::new().unwrap();
    // Width 512, 8 heads: every head's W_q, W_k, W_v and W_o written out are about 21 MB.
    with_words(
        &dir,
        "wide",
        &checkpoint::gpt2("", 1, 512, 8, WORDS.len(), 8),
        Dtype::F32,
    );
    let message = refused(&dir, &["wide", "--text", "the cat"]);
    assert_says(
        &message,
        &[
            "MB as a file",
            "at most 16 MiB",
            "nothing was written",
            "--head 0 to --head 7",
        ],
    );
    imported(&dir, &["wide", "--text", "the cat", "--head", "7"]);
    attn_tutor(&dir)
        .args(["check", "out.toml"])
        .assert()
        .code(0);
}

#[test]
fn bos_for_a_model_whose_config_names_no_bos_token_is_refused_saying_so() {
    let dir = TempDir::new().unwrap();
    let model = checkpoint::attn_only(1, 8, 2, WORDS.len(), 16);
    with_words(&dir, "model", &model, Dtype::F32);
    let message = refused(&dir, &["model", "--text", "the cat", "--bos"]);
    assert_says(&message, &["config.json", "--bos", "no `bos_token_id`"]);
}

#[test]
fn o_dash_writes_the_lesson_to_standard_output_and_no_file() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    let output = attn_tutor(&dir)
        .args(["import", "model", "--text", "the cat", "-o", "-"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("\nformat = 2\n"), "{text}");
    assert!(text.contains("token_ids = [2, 3]"), "{text}");
    assert!(!dir.path().join("-").exists());
}

#[test]
fn two_tokens_have_a_token_before_and_one_token_is_one_token() {
    let dir = TempDir::new().unwrap();
    gpt2_model(&dir);
    imported(&dir, &["model", "--text", "the cat", "--head", "0"]);
    let text = show_imported(&dir, &[]);
    assert!(text.contains("Here: first token "), "{text}");
    assert!(text.contains(", token before "), "{text}");
    std::fs::remove_file(dir.path().join("out.toml")).unwrap();
    imported(&dir, &["model", "--text", "cat"]);
    let text = show_imported(&dir, &["--format", "markdown"]);
    assert!(text.contains("on 1 token made by"), "{text}");
}

#[test]
fn a_word_a_trained_models_symbols_lack_is_named_with_the_symbols_it_reads() {
    let dir = TempDir::new().unwrap();
    let model = attn_tutor::train::Model::init(attn_tutor::train::ModelShape::default(), 0);
    attn_tutor::train::save(&model, &dir.path().join("trained")).unwrap();
    let said = refused(&dir, &["trained", "--text", "A B z, A B", "--layer", "1"]);
    assert_says(
        &said,
        &[
            "error: --text: \"z\" and \",\" are not words of this model; it reads A B C D E F G H I \
           J K L M N O P, separated by spaces",
        ],
    );
    assert!(!said.contains("[UNK]"), "{said}");
}

/// Each head's weights in `show out.toml --format json`, as the lesson in `dir` gives them.
fn shown_weights(dir: &TempDir) -> Vec<nalgebra::DMatrix<f64>> {
    let output = attn_tutor(dir)
        .args(["show", "out.toml", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    json["heads"]
        .as_array()
        .expect("a lesson of every head lists them")
        .iter()
        .map(|head| {
            let rows: Vec<Vec<f64>> = serde_json::from_value(head["weights"].clone()).unwrap();
            nalgebra::DMatrix::from_fn(rows.len(), rows[0].len(), |r, c| rows[r][c])
        })
        .collect()
}

#[test]
fn the_shipped_induction_models_every_head_is_its_trainers_numbers() {
    use attn_engine::train::{load, symbol};
    let shipped = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/induction");
    let model = load(&shipped).unwrap();
    // The built-in lesson's sentence, and a whole context: a half of 16 symbols and its repeat.
    let whole: Vec<usize> = (0..32).map(|t| (t * 7 + 3) % 16).collect();
    let short: Vec<usize> = [13, 6, 1, 10, 3, 7, 15, 13, 6, 1, 10, 3, 7].to_vec();
    for ids in [short, whole] {
        let text = ids
            .iter()
            .map(|&id| symbol(id))
            .collect::<Vec<_>>()
            .join(" ");
        // The trainer's own forward pass, in the f32 it trains in and in f64.
        let trained = model.forward(&ids, 1);
        let exact = model.cast::<f64>().forward(&ids, 1);
        for layer in 0..2 {
            let dir = TempDir::new().unwrap();
            imported(
                &dir,
                &[
                    shipped.to_str().unwrap(),
                    "--text",
                    &text,
                    "--layer",
                    &layer.to_string(),
                    "--head",
                    "all",
                ],
            );
            let shown = shown_weights(&dir);
            assert_eq!(shown.len(), 2);
            for (head, weights) in shown.iter().enumerate() {
                // The same float64 computation from the same numbers: to rounding.
                let gap = (weights - exact.pattern(layer, 0, head)).amax();
                assert!(gap < 1e-12, "layer {layer} head {head} on {text}: {gap}");
                // And the f32 the model was trained in, to f32's precision.
                let gap = (weights - trained.pattern(layer, 0, head).map(f64::from)).amax();
                assert!(gap < 1e-5, "layer {layer} head {head} on {text}: {gap}");
            }
            // Where numpy is, its reading of the file agrees too (it imports anew).
            std::fs::remove_file(dir.path().join("out.toml")).unwrap();
            assert_matches_numpy(&dir, shipped.to_str().unwrap(), &text, layer, "all");
        }
    }
}

#[test]
fn an_imported_lesson_in_the_lesson_list_is_not_called_built_in() {
    use attn_tutor::app::{App, PickerEntry};
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("my-model");
    let model = attn_tutor::train::Model::init(attn_tutor::train::ModelShape::default(), 0);
    attn_tutor::train::save(&model, &folder).unwrap();
    // `import my-model --text … --layer 1 --head all`, opened in the tutor (no -o), then q.
    let loaded = attn_tutor::import::imported(&attn_tutor::import::ImportArgs {
        model: folder,
        text: "A B C A B C".to_string(),
        layer: 1,
        head: attn_engine::import::HeadChoice::All,
        bos: false,
        output: None,
    })
    .unwrap();
    let mut entries = App::builtin_entries();
    entries.push(PickerEntry {
        name: loaded.name.clone(),
        lesson: Ok(loaded),
    });
    let mut app = App::new(entries, None);
    app.picked = app.picker.len() - 1;
    let shown = common::screen(&app, 80, 24);
    assert!(
        shown.contains("<my-model-layer1-headall, not saved as a file>"),
        "{shown}"
    );
    assert!(!shown.contains("<built-in my-model"), "{shown}");
    // A built-in lesson is still called one.
    app.picked = 0;
    assert!(common::screen(&app, 80, 24).contains("<built-in "));
}
