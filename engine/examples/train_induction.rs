//! The default induction run, timed, then measured on fresh sequences: `cargo run --release -p
//! attn-engine --example train_induction -- [--seed S] [--steps N] [--every K]`. It prints the
//! logged loss and scores every K steps (500 unless given), the step the best induction score
//! first passes 0.5 on the run's probe, the run's time, and the final model's
//! evaluation on 256 fresh sequences at half lengths 3 (a learner's "A B C A B C"), 10 and 16.

use std::time::Instant;

use attn_engine::train::{TrainConfig, Trainer, evaluate};

fn main() {
    let mut config = TrainConfig::default();
    let mut every = 500;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || -> usize {
            args.next()
                .and_then(|value| value.parse().ok())
                .unwrap_or_else(|| panic!("{arg} takes a whole number"))
        };
        match arg.as_str() {
            "--seed" => config.seed = value() as u64,
            "--steps" => config.steps = value(),
            "--every" => every = value(),
            other => panic!("unknown option {other}; give --seed, --steps or --every"),
        }
    }
    let mut trainer = Trainer::new(config.clone()).unwrap_or_else(|error| panic!("{error}"));
    let started = Instant::now();
    let mut induction_at = None;
    while let Some(record) = trainer.step() {
        if record.step % every == 0 {
            println!("{}", serde_json::to_string(&record).unwrap_or_default());
        }
        // The phase change: the first step whose best layer-1 head scores 0.5 on the probe.
        let best = record.induction.iter().copied().fold(0.0, f64::max);
        if induction_at.is_none() && best >= 0.5 {
            induction_at = Some(record.step);
        }
    }
    println!(
        "seed {}: {} steps in {:.2} s; best induction score on the probe first ≥ 0.5 at step {}",
        config.seed,
        config.steps,
        started.elapsed().as_secs_f64(),
        induction_at.map_or("(never)".to_string(), |step| step.to_string())
    );
    for length in [3, 10, 16] {
        let evaluation = evaluate(trainer.model(), length, 256, 1_000_000 + length as u64);
        println!(
            "  length {length:2}: loss {:.3}, halves {:.3} / {:.3} (ratio {:.3}), induction {:?}, \
             previous token {:?}",
            evaluation.loss,
            evaluation.first_half_loss,
            evaluation.second_half_loss,
            evaluation.loss_ratio(),
            rounded(&evaluation.induction),
            rounded(&evaluation.previous_token),
        );
    }
}

fn rounded(scores: &[f64]) -> Vec<f64> {
    scores
        .iter()
        .map(|score| (score * 1000.0).round() / 1000.0)
        .collect()
}
