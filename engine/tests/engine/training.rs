//! Training the attention-only model: its hand-written gradients against finite differences,
//! the same run from the same seed, the repeated sequences it learns from, the induction and
//! previous-token scores on attention patterns built by hand, the settings refused, learning
//! itself, and the model written as `import` reads it and computed again from the file.

use std::path::Path;

use attn_engine::attention::Attention;
use attn_engine::checkpoint::{Architecture, Checkpoint};
use attn_engine::import::{HeadChoice, ImportRequest};
use attn_engine::train::{
    AdamW, Batch, Batches, ConfigError, Model, ModelShape, SaveError, Snapshot, StepRecord,
    TrainConfig, Trainer, evaluate, half_losses, induction_score, induction_scores,
    is_snapshot_step, load, previous_token_score, previous_token_scores, save, symbol,
};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// A model small enough to check every weight's gradient: 5 symbols, d_model 8, 2 heads of 4.
fn small_shape() -> ModelShape {
    ModelShape {
        vocabulary: 5,
        d_model: 8,
        heads: 2,
        context: 8,
    }
}

/// `model` with every number (biases included) drawn from N(0, spread²): GPT-2's 0.02 leaves
/// every attention pattern near uniform, which would not exercise the softmax's gradient.
fn spread<T: attn_engine::train::Real>(mut model: Model<T>, spread: f64, seed: u64) -> Model<T> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let normal = Normal::new(0.0, spread).unwrap();
    for tensor in model.tensors_mut() {
        for value in tensor.values.iter_mut() {
            *value = T::of_f64(normal.sample(&mut rng));
        }
    }
    model
}

#[test]
fn every_weights_gradient_matches_its_finite_difference() {
    let model = spread(Model::<f64>::init(small_shape(), 3), 0.7, 11);
    let batch = Batch::fresh(5, 3, 2, 5);
    let (inputs, targets) = (batch.inputs(), batch.targets());
    let (_, gradients, forward) = model.loss_and_gradients(&inputs, &targets, batch.sequences);
    // The patterns are far from uniform, so the softmax's gradient matters.
    let sharpest = forward.patterns[1]
        .iter()
        .map(|pattern| pattern.max())
        .fold(0.0, f64::max);
    assert!(sharpest > 0.9, "the check's patterns are sharp: {sharpest}");

    // Central differences: their error is O(h²) ≈ 1e-10 from the third derivative, plus the
    // loss's rounding, 1e-16 / 1e-5; 1e-7 is far above both and far below a wrong term.
    let h = 1e-5;
    let loss_at = |model: &Model<f64>| model.forward(&inputs, batch.sequences).loss(&targets);
    let names: Vec<String> = model.tensors().iter().map(|t| t.name.clone()).collect();
    let analytic: Vec<DMatrix<f64>> = gradients
        .tensors()
        .iter()
        .map(|t| t.values.clone())
        .collect();
    let mut checked = 0;
    for (index, (name, analytic)) in names.iter().zip(&analytic).enumerate() {
        for (entry, &ours) in analytic.iter().enumerate() {
            let mut plus = model.clone();
            plus.tensors_mut()[index].values[entry] += h;
            let mut minus = model.clone();
            minus.tensors_mut()[index].values[entry] -= h;
            let numeric = (loss_at(&plus) - loss_at(&minus)) / (2.0 * h);
            assert!(
                (numeric - ours).abs() <= 1e-7 * (1.0 + ours.abs()),
                "{name}[{entry}]: backward gives {ours}, finite differences {numeric}"
            );
            checked += 1;
        }
        // Every tensor takes part: a gradient of 0 everywhere would pass the comparison for a
        // weight the forward pass forgot.
        assert!(
            analytic.amax() > 1e-4,
            "{name}'s gradient is {}",
            analytic.amax()
        );
    }
    assert_eq!(checked, model.parameter_count());
}

#[test]
fn the_f32_gradients_are_the_f64_ones_to_single_precision() {
    let model = spread(Model::<f64>::init(small_shape(), 4), 0.5, 12);
    let batch = Batch::fresh(5, 4, 3, 6);
    let (inputs, targets) = (batch.inputs(), batch.targets());
    let (loss64, grads64, _) = model.loss_and_gradients(&inputs, &targets, 3);
    let (loss32, grads32, _) = model.cast::<f32>().loss_and_gradients(&inputs, &targets, 3);
    assert!((f64::from(loss32) - loss64).abs() < 1e-5);
    for (wide, narrow) in grads64.tensors().iter().zip(grads32.tensors()) {
        let largest = wide.values.amax();
        let gap = (wide.values - narrow.values.map(f64::from)).amax();
        assert!(gap <= 1e-4 * largest.max(1e-3), "{}: {gap}", wide.name);
    }
}

fn tiny_run(seed: u64, steps: usize) -> TrainConfig {
    TrainConfig {
        model: ModelShape {
            vocabulary: 6,
            d_model: 8,
            heads: 2,
            context: 12,
        },
        batch: 4,
        min_length: 2,
        max_length: 6,
        seed,
        steps,
        ..TrainConfig::default()
    }
}

fn run(config: TrainConfig) -> (Vec<StepRecord>, Trainer) {
    let mut trainer = Trainer::new(config).unwrap();
    let mut records = Vec::new();
    while let Some(record) = trainer.step() {
        records.push(record);
    }
    (records, trainer)
}

#[test]
fn a_seed_gives_the_same_run_and_another_seed_another() {
    let (records, trainer) = run(tiny_run(7, 30));
    let (again, trainer_again) = run(tiny_run(7, 30));
    assert_eq!(records, again);
    assert_eq!(trainer.model(), trainer_again.model());
    let (other, _) = run(tiny_run(8, 30));
    assert_ne!(records, other);
    assert_eq!(records.len(), 30);
    assert_eq!(
        records.iter().map(|r| r.step).collect::<Vec<_>>(),
        (1..=30).collect::<Vec<_>>()
    );
}

#[test]
fn the_trainer_stops_after_its_steps_and_offers_a_snapshot_at_0_every_25_and_the_last() {
    let mut trainer = Trainer::new(tiny_run(1, 60)).unwrap();
    // Taken as they are offered: the trainer keeps none.
    let mut snapshots: Vec<Snapshot> = trainer.snapshot().into_iter().collect();
    let mut records = 0;
    while trainer.step().is_some() {
        records += 1;
        assert_eq!(
            trainer.snapshot().is_some(),
            is_snapshot_step(trainer.steps_done(), 60)
        );
        snapshots.extend(trainer.snapshot());
    }
    assert_eq!(records, 60);
    assert!(trainer.is_done());
    assert_eq!(trainer.step(), None, "no step past the run's");
    let steps: Vec<usize> = snapshots.iter().map(|s| s.step).collect();
    assert_eq!(steps, [0, 25, 50, 60]);
    assert_eq!(&snapshots[3].model, trainer.model());
    assert_eq!(snapshots[0].model, Model::init(tiny_run(1, 60).model, 1));
    assert_ne!(snapshots[1].model, snapshots[0].model);
}

#[test]
fn a_snapshot_step_is_0_every_25_and_the_last() {
    let steps: Vec<usize> = (0..=130)
        .filter(|step| is_snapshot_step(*step, 130))
        .collect();
    assert_eq!(steps, [0, 25, 50, 75, 100, 125, 130]);
    assert!(is_snapshot_step(1_000_000, 1_000_000));
    assert!(!is_snapshot_step(999_999, 1_000_000));
}

#[test]
fn a_steps_scores_are_its_snapshots_on_the_same_probe_every_step() {
    let mut trainer = Trainer::new(tiny_run(4, 25)).unwrap();
    let probe = trainer.probe().clone();
    // The middle of lengths 2 to 6, 16 sequences.
    assert_eq!((probe.length, probe.sequences), (4, 16));
    let mut record = None;
    while let Some(next) = trainer.step() {
        record = Some(next);
        assert_eq!(trainer.probe(), &probe);
    }
    let record = record.unwrap();
    let snapshot = trainer.snapshot().unwrap();
    assert_eq!((record.step, snapshot.step), (25, 25));
    let forward = snapshot.model.forward(&probe.inputs(), probe.sequences);
    assert_eq!(record.induction, induction_scores(&forward, 4));
    assert_eq!(record.previous_token, previous_token_scores(&forward));
}

#[test]
fn a_step_record_is_the_json_line_the_issue_names() {
    let record = StepRecord {
        step: 3,
        loss: 2.5,
        induction: vec![0.25, 0.5],
        previous_token: vec![0.75, 1.0],
    };
    assert_eq!(
        serde_json::to_string(&record).unwrap(),
        r#"{"step":3,"loss":2.5,"induction":[0.25,0.5],"previous_token":[0.75,1.0]}"#
    );
}

#[test]
fn every_sequence_is_its_first_half_repeated_and_the_length_changes_between_batches() {
    let mut batches = Batches::new(5, 16, 32, 4, 16);
    let mut lengths = std::collections::BTreeSet::new();
    let mut previous = None;
    let mut changes = 0;
    for _ in 0..200 {
        let batch = batches.next_batch();
        assert!((4..=16).contains(&batch.length));
        assert_eq!(batch.sequences, 32);
        assert_eq!(batch.symbols.len(), 32 * 2 * batch.length);
        assert!(batch.symbols.iter().all(|&symbol| symbol < 16));
        for index in 0..batch.sequences {
            let sequence = batch.sequence(index);
            assert_eq!(sequence[..batch.length], sequence[batch.length..]);
        }
        // The model reads all but the last symbol and predicts each next one.
        let (inputs, targets) = (batch.inputs(), batch.targets());
        assert_eq!(inputs.len(), 32 * batch.tokens());
        assert_eq!(batch.tokens(), 2 * batch.length - 1);
        assert_eq!(inputs[1..batch.tokens()], targets[..batch.tokens() - 1]);
        changes += usize::from(previous.is_some_and(|length| length != batch.length));
        previous = Some(batch.length);
        lengths.insert(batch.length);
    }
    assert_eq!(lengths, (4..=16).collect(), "every length is drawn");
    assert!(
        changes > 150,
        "the length changes from batch to batch: {changes}"
    );
    // The same seed draws the same batches.
    let mut again = Batches::new(5, 16, 32, 4, 16);
    let mut first = Batches::new(5, 16, 32, 4, 16);
    assert_eq!(first.next_batch(), again.next_batch());
    assert_ne!(
        Batches::new(6, 16, 32, 4, 16).next_batch(),
        Batches::new(5, 16, 32, 4, 16).next_batch()
    );
}

/// A causal pattern of `tokens` tokens whose row t puts all its weight on `key(t)`.
fn pattern_on(tokens: usize, key: impl Fn(usize) -> usize) -> DMatrix<f64> {
    DMatrix::from_fn(
        tokens,
        tokens,
        |row, column| {
            if column == key(row) { 1.0 } else { 0.0 }
        },
    )
}

#[test]
fn a_perfect_induction_head_scores_1_and_one_that_attends_to_the_copy_itself_0() {
    let length = 5;
    let tokens = 2 * length - 1;
    // From length + i to i + 1: the token after the earlier copy.
    let induction = pattern_on(tokens, |t| if t >= length { t - length + 1 } else { 0 });
    assert_eq!(induction_score(&induction, length), 1.0);
    // From length + i to i: the earlier copy of the token itself (a duplicate-token head).
    let duplicate = pattern_on(tokens, |t| t.saturating_sub(length));
    assert_eq!(induction_score(&duplicate, length), 0.0);
    // Uniform causal attention: row length + i spreads over length + i + 1 keys.
    let uniform = DMatrix::from_fn(tokens, tokens, |row, column| {
        if column <= row {
            1.0 / (row + 1) as f64
        } else {
            0.0
        }
    });
    let expected = (0..length - 1)
        .map(|i| 1.0 / (length + i + 1) as f64)
        .sum::<f64>()
        / (length - 1) as f64;
    assert!((induction_score(&uniform, length) - expected).abs() < 1e-12);
}

#[test]
fn a_previous_token_head_scores_1_and_a_self_attending_one_0() {
    let previous = pattern_on(7, |t| t.saturating_sub(1));
    assert_eq!(previous_token_score(&previous), 1.0);
    let itself = pattern_on(7, |t| t);
    assert_eq!(previous_token_score(&itself), 0.0);
    // Half its weight on the previous token, in rows 1 to 6.
    let half = DMatrix::from_fn(7, 7, |row, column| match row {
        0 => f64::from(column == 0),
        _ if column == row || column + 1 == row => 0.5,
        _ => 0.0,
    });
    assert_eq!(previous_token_score(&half), 0.5);
}

#[test]
fn the_scores_of_a_batch_are_each_heads_mean_over_its_sequences() {
    let model = spread(Model::<f64>::init(small_shape(), 2), 0.6, 21);
    let batch = Batch::fresh(5, 3, 4, 9);
    let forward = model.forward(&batch.inputs(), 4);
    let induction = induction_scores(&forward, 3);
    let previous = previous_token_scores(&forward);
    assert_eq!((induction.len(), previous.len()), (2, 2));
    for head in 0..2 {
        let by_hand: f64 = (0..4)
            .map(|sequence| induction_score(forward.pattern(1, sequence, head), 3))
            .sum::<f64>()
            / 4.0;
        assert!((induction[head] - by_hand).abs() < 1e-12);
        let by_hand: f64 = (0..4)
            .map(|sequence| previous_token_score(forward.pattern(0, sequence, head)))
            .sum::<f64>()
            / 4.0;
        assert!((previous[head] - by_hand).abs() < 1e-12);
    }
}

#[test]
fn the_halves_losses_split_each_sequence_at_its_length() {
    // Two sequences of half 3 (5 tokens read): positions 0–2 the first half, 3–4 the second.
    let losses = [1.0, 2.0, 3.0, 10.0, 20.0, 4.0, 5.0, 6.0, 30.0, 40.0];
    assert_eq!(half_losses(&losses, 5, 3), (3.5, 25.0));
}

#[test]
fn each_setting_a_run_cannot_take_is_refused_for_its_option() {
    assert_eq!(TrainConfig::default().validate(), Ok(()));
    let refused = |change: fn(&mut TrainConfig)| {
        let mut config = TrainConfig::default();
        change(&mut config);
        let error = config.validate().unwrap_err();
        assert_eq!(
            Trainer::new(config).unwrap_err().to_string(),
            error.to_string(),
            "the trainer refuses it too"
        );
        error
    };
    let steps = refused(|c| c.steps = 0);
    assert_eq!(steps, ConfigError::Steps { steps: 0 });
    assert_eq!(
        steps.to_string(),
        "--steps: 0; give a whole number of steps from 1 to 1000000"
    );
    let wide = refused(|c| c.model.d_model = 128);
    assert!(wide.to_string().starts_with("--d-model: 128;"), "{wide}");
    let words = refused(|c| c.model.vocabulary = 33);
    assert!(words.to_string().contains("33 symbols; give from 2 to 32"));
    let context = refused(|c| c.model.context = 64);
    assert!(context.to_string().starts_with("--context: 64 tokens"));
    let one_head = refused(|c| c.model.heads = 1);
    assert!(one_head.to_string().contains("at least 2"), "{one_head}");
    let uneven = refused(|c| c.model.heads = 3);
    assert!(uneven.to_string().contains("must divide it"), "{uneven}");
    // A sequence and its repeat must fit the context.
    let long = refused(|c| c.max_length = 17);
    assert!(matches!(long, ConfigError::Lengths { .. }));
    let backwards = refused(|c| c.max_length = 1);
    assert!(
        matches!(backwards, ConfigError::Lengths { .. }),
        "{backwards}"
    );
    refused(|c| c.batch = 0);
    refused(|c| c.learning_rate = 0.0);
    refused(|c| c.learning_rate = f64::NAN);
    refused(|c| c.betas = (0.9, 1.0));
    refused(|c| c.weight_decay = -0.1);
}

#[test]
fn the_same_batch_again_and_again_is_learned() {
    // The gradients and AdamW together: on one batch, the loss falls far below ln 6.
    let config = tiny_run(3, 1);
    let mut model = Model::<f32>::init(config.model, 3);
    let mut adam = AdamW::new(&model, 1e-2, config.betas, config.epsilon, 0.01);
    let batch = Batch::fresh(6, 4, 4, 2);
    let (inputs, targets) = (batch.inputs(), batch.targets());
    let first = model.forward(&inputs, 4).loss(&targets);
    assert!((first - 6f32.ln()).abs() < 0.05, "{first}");
    for _ in 0..150 {
        let (_, gradients, _) = model.loss_and_gradients(&inputs, &targets, 4);
        adam.step(&mut model, &gradients);
    }
    let last = model.forward(&inputs, 4).loss(&targets);
    assert!(last < 0.5 * first, "{first} → {last}");
}

#[test]
fn a_short_run_lowers_the_loss_on_fresh_sequences() {
    // Few symbols and short sequences learn in a few hundred steps (the default run's phase
    // change takes over a thousand).
    let config = TrainConfig {
        model: ModelShape {
            vocabulary: 4,
            d_model: 16,
            heads: 2,
            context: 8,
        },
        batch: 16,
        min_length: 2,
        max_length: 4,
        learning_rate: 1e-2,
        steps: 600,
        seed: 2,
        ..TrainConfig::default()
    };
    let before = evaluate(&Model::<f32>::init(config.model, 2), 4, 64, 99);
    let (_, trainer) = run(config);
    let after = evaluate(trainer.model(), 4, 64, 99);
    // Before: every position near ln 4. After: the second half predicted from the first.
    assert!(after.loss < before.loss - 0.2, "{before:?} → {after:?}");
    assert!(after.loss_ratio() < 0.5, "{before:?} → {after:?}");
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_written_model_is_what_import_reads_and_computes_the_same_numbers() {
    let shape = ModelShape::default();
    let model = spread(Model::<f32>::init(shape, 5), 0.4, 31);
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("induction");
    save(&model, &out).unwrap();

    assert_eq!(
        read_json(&out.join("config.json")),
        serde_json::json!({"model_type": "attn-only", "n_layer": 2, "n_head": 2, "n_embd": 32,
            "n_positions": 32, "vocab_size": 16})
    );
    let tokenizer = read_json(&out.join("tokenizer.json"));
    assert_eq!(tokenizer["model"]["type"], "WordLevel");
    assert_eq!(tokenizer["pre_tokenizer"]["type"], "Whitespace");
    let vocab = tokenizer["model"]["vocab"].as_object().unwrap();
    assert_eq!(vocab.len(), 16);
    for id in 0..16 {
        assert_eq!(vocab[&symbol(id)], id);
    }
    assert_eq!(symbol(0), "A");
    assert_eq!(symbol(15), "P");

    let checkpoint = Checkpoint::open(&out).unwrap();
    let config = checkpoint.config();
    assert_eq!(config.architecture, Architecture::AttnOnly);
    assert_eq!(
        (
            config.layers,
            config.heads,
            config.d_model,
            config.vocabulary,
            config.context
        ),
        (2, 2, 32, 16, 32)
    );
    // Every tensor as stored, exactly: f32 widened to f64.
    for tensor in model.tensors() {
        let read = checkpoint.tensor(&tensor.name, &tensor.shape).unwrap();
        let (rows, columns) = match tensor.shape[..] {
            [rows, columns] => (rows, columns),
            _ => (1, tensor.shape[0]),
        };
        assert_eq!(
            read,
            DMatrix::from_row_slice(rows, columns, &tensor.row_major()).map(f64::from)
        );
    }

    // A whole context: a half of 16 symbols and its repeat.
    let ids: Vec<usize> = (0..32).map(|t| (t * 7 + 3) % 16).collect();
    let ours = model.forward(&ids, 1);
    for layer in 0..=2 {
        let stream = checkpoint.residual_stream(&ids, layer).unwrap();
        let gap = (&stream - ours.streams[layer].map(f64::from)).amax();
        assert!(gap < 1e-5 * stream.amax().max(1.0), "layer {layer}: {gap}");
    }
    for layer in 0..2 {
        let request = request_on(&ids, layer, HeadChoice::All);
        let lesson = attn_engine::import::lesson(&checkpoint, &request).unwrap();
        let attention = Attention::compute(&lesson);
        for head in 0..2 {
            let theirs = attention.weights_of(head);
            let gap = (theirs - ours.pattern(layer, 0, head).map(f64::from)).amax();
            assert!(gap < 1e-5, "layer {layer} head {head}: {gap}");
        }
    }
    // The patterns compared are not all alike: a model whose weights were not read would give
    // uniform ones.
    assert!(ours.pattern(1, 0, 0).max() > 0.5);

    // And read back whole, it is the model written, number for number.
    assert_eq!(load(&out).unwrap(), model);
    assert_eq!(load(&out.join("model.safetensors")).unwrap(), model);
}

#[test]
fn a_checkpoint_that_is_not_a_trained_model_is_not_loaded_as_one() {
    let model = Model::<f32>::init(ModelShape::default(), 1);
    let folder = tempfile::tempdir().unwrap();
    save(&model, folder.path()).unwrap();
    let config = folder.path().join("config.json");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("\"n_layer\": 2", "\"n_layer\": 3")).unwrap();
    let error = load(folder.path()).unwrap_err().to_string();
    assert!(
        error.contains("n_layer is 3; the trained models have 2"),
        "{error}"
    );
    std::fs::write(&config, text.replace("\"n_embd\": 32", "\"n_embd\": 16")).unwrap();
    let error = load(folder.path()).unwrap_err().to_string();
    assert!(
        error.contains("wte.weight") && error.contains("[16, 32]"),
        "{error}"
    );
}

#[test]
fn a_folder_that_holds_anything_is_not_written_into() {
    let model = Model::<f32>::init(ModelShape::default(), 1);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("notes.txt"), "mine").unwrap();
    let error = save(&model, folder.path()).unwrap_err();
    assert!(matches!(error, SaveError::NotEmpty { .. }));
    let message = error.to_string();
    assert!(
        message.contains(&folder.path().display().to_string()),
        "{message}"
    );
    assert!(
        message.contains("notes.txt") && message.contains("not empty"),
        "{message}"
    );
    let left: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing written beside it");
    assert_eq!(
        std::fs::read_to_string(folder.path().join("notes.txt")).unwrap(),
        "mine"
    );

    // A file where the folder should be.
    let file = folder.path().join("notes.txt");
    let error = save(&model, &file).unwrap_err();
    assert!(matches!(error, SaveError::NotAFolder(_)), "{error}");
    assert!(error.to_string().contains("not a folder"));

    // An empty folder is written into, and only the three files are left in it.
    let empty = tempfile::tempdir().unwrap();
    save(&model, empty.path()).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(empty.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    // Saving again over it is refused.
    assert!(matches!(
        save(&model, empty.path()),
        Err(SaveError::NotEmpty { .. })
    ));
}

#[test]
fn a_folder_that_cannot_be_made_says_where() {
    let model = Model::<f32>::init(ModelShape::default(), 1);
    let folder = tempfile::tempdir().unwrap();
    // A folder inside a file cannot be made, whoever asks (root included).
    let file = folder.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let inside = file.join("model");
    match save(&model, &inside) {
        Err(error @ SaveError::CannotMake { .. }) => {
            assert_eq!(
                error.to_string(),
                format!(
                    "{}: the folder could not be made: {} is a file, not a folder",
                    inside.display(),
                    file.display()
                )
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The model the repository ships (`models/induction`, made by `attn-tutor train induction
/// --seed 0`), read from its files.
fn shipped_model() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/induction")
}

#[test]
fn the_shipped_model_predicts_the_second_half_on_fresh_sequences_short_and_long() {
    let folder = shipped_model();
    let bytes: u64 = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes <= 1 << 20, "models/induction is {bytes} bytes");
    let model = load(&folder).unwrap();
    assert_eq!(model.shape, ModelShape::default());
    // Fresh sequences from a seed of their own (training drew from seed 0's streams 1 and 2),
    // from a half of 3 symbols (a learner's "A B C A B C") to 15.
    for length in [3, 5, 8, 11, 15] {
        let evaluation = evaluate(&model, length, 256, 7_000 + length as u64);
        assert!(
            evaluation.best_induction() >= 0.5,
            "half {length}: induction scores {:?}",
            evaluation.induction
        );
        assert!(
            evaluation.loss_ratio() <= 0.3,
            "half {length}: the second half's loss is {:.3} of the first's ({evaluation:?})",
            evaluation.loss_ratio()
        );
        // And layer 0 holds the previous-token head the induction head reads.
        assert!(evaluation.best_previous_token() >= 0.5, "{evaluation:?}");
    }
}

/// The tutor's backward pass on a lesson `import` makes of the shipped model is the trainer's:
/// import gives the lesson the gradient of the model's own next-token loss at the layer's
/// output (`grad_output`), and the lesson's backward steps then give, cell for cell, the
/// trainer's gradients of that layer's weights and biases on the same text; the embeddings'
/// and the unembedding's are the trainer's alone (checked against finite differences above).
#[test]
fn the_lessons_backward_pass_of_a_trained_head_gives_the_trainers_gradients() {
    use attn_engine::attention::{MatrixName, gradient_check::check_gradients};
    let folder = shipped_model();
    let checkpoint = Checkpoint::open(&folder).unwrap();
    let model = attn_engine::train::load(&folder).unwrap().cast::<f64>();
    let (d, head_dim) = (model.shape.d_model, model.shape.head_dim());
    // The built-in lesson's sentence: the last token predicts nothing in the lesson, so the
    // trainer sees the others and their next tokens.
    let ids: Vec<usize> = vec![13, 6, 1, 10, 3, 7, 15, 13, 6, 1, 10, 3, 7];
    let (inputs, targets) = (&ids[..ids.len() - 1], &ids[1..]);
    let (_, gradients, _) = model.loss_and_gradients(inputs, targets, 1);
    let close = |ours: &DMatrix<f64>, theirs: DMatrix<f64>, what: &str| {
        assert_eq!(ours.shape(), theirs.shape(), "{what}");
        let gap = (ours - &theirs).amax();
        assert!(
            gap < 1e-12 * theirs.amax().max(1e-3),
            "{what}: off by {gap} (largest {})",
            theirs.amax()
        );
    };
    for layer in 0..2 {
        let trained = &gradients.layers[layer];
        for heads in [HeadChoice::All, HeadChoice::One(1)] {
            let request = request_on(&ids, layer, heads);
            let lesson = attn_engine::import::lesson(&checkpoint, &request).unwrap();
            let attention = Attention::compute(&lesson);
            let chosen: Vec<usize> = match heads {
                HeadChoice::All => vec![0, 1],
                HeadChoice::One(head) => vec![head],
            };
            for (slot, &head) in chosen.iter().enumerate() {
                let what = |name: &str| format!("layer {layer} {heads:?} head {head}: {name}");
                // c_attn's columns: Q's d, then K's, then V's; head h takes its d_head of each.
                for (part, (weight, bias)) in [
                    (MatrixName::DWQ, MatrixName::DBQ),
                    (MatrixName::DWK, MatrixName::DBK),
                    (MatrixName::DWV, MatrixName::DBV),
                ]
                .into_iter()
                .enumerate()
                {
                    let column = part * d + head * head_dim;
                    close(
                        attention.matrix_in(weight, slot).unwrap(),
                        trained.c_attn_weight.columns(column, head_dim).into_owned(),
                        &what(attention.symbol(weight)),
                    );
                    close(
                        attention.matrix_in(bias, slot).unwrap(),
                        trained.c_attn_bias.columns(column, head_dim).into_owned(),
                        &what(attention.symbol(bias)),
                    );
                }
            }
            if heads == HeadChoice::All {
                close(
                    attention.matrix_in(MatrixName::DWO, 0).unwrap(),
                    trained.c_proj_weight.clone(),
                    &format!("layer {layer}: dW_o"),
                );
                close(
                    attention.matrix_in(MatrixName::DBO, 0).unwrap(),
                    trained.c_proj_bias.clone(),
                    &format!("layer {layer}: db_o"),
                );
            }
            // And the lesson's own check, central finite differences of its L, passes.
            let check = check_gradients(&lesson, &attention).expect("a backward pass");
            assert!(check.together.agrees(), "{:?}", check.together);
        }
    }
}

/// What `import` is asked for a trained model, on the symbols `ids`.
fn request_on(ids: &[usize], layer: usize, heads: HeadChoice) -> ImportRequest {
    ImportRequest {
        model: "induction".to_string(),
        text: ids
            .iter()
            .map(|&id| symbol(id))
            .collect::<Vec<_>>()
            .join(" "),
        token_ids: ids.iter().map(|&id| id as u64).collect(),
        labels: ids.iter().map(|&id| symbol(id)).collect(),
        layer,
        heads,
        tokenizer: "tokenizer.json".to_string(),
    }
}
