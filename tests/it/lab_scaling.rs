//! The scaling lab (`attn-tutor lab scaling`): its figures follow the laws they are there to
//! show, its JSON keeps the contract, the same seed gives the same figures, and settings it
//! cannot sweep are refused naming the option.

use crate::common;

use std::sync::OnceLock;

use attn_tutor::lab::scaling::{Settings, Sweep, point, sweep};
use tempfile::TempDir;

/// The default sweep, run once for the tests that read it (a sweep's figures depend only on
/// its settings, which a test below checks).
fn default_sweep() -> &'static Sweep {
    static SWEEP: OnceLock<Sweep> = OnceLock::new();
    SWEEP.get_or_init(|| sweep(&Settings::default()))
}

/// What `attn-tutor lab scaling` prints with its defaults, run once for the tests that read it.
fn default_printout() -> &'static str {
    static PRINTED: OnceLock<String> = OnceLock::new();
    PRINTED.get_or_init(|| String::from_utf8(lab(&[]).stdout).unwrap())
}

fn settings(dims: &[usize], samples: usize) -> Settings {
    Settings {
        dims: dims.to_vec(),
        samples,
        ..Settings::default()
    }
}

#[test]
fn raw_scores_spread_like_the_root_of_d_k_and_scaled_ones_like_1() {
    // 600 rows of 16 scores: the spread is known to within about 2 %; 5 % leaves room for
    // the scores of one row sharing their query.
    let sweep = sweep(&settings(&[1, 64, 1024], 600));
    for point in &sweep.points {
        let root = (point.dim as f64).sqrt();
        assert!((point.raw.std / root - 1.0).abs() < 0.05, "{point:?}");
        assert!((point.scaled.std - 1.0).abs() < 0.05, "{point:?}");
    }
}

#[test]
fn the_spread_follows_the_variance() {
    let wide = point(
        &Settings {
            variance: 4.0,
            samples: 2000,
            ..Settings::default()
        },
        64,
    );
    // Each q·k sums 64 products of variance 4 · 4: a spread of 4 · 8 raw, 4 scaled.
    assert!((wide.raw.std / 32.0 - 1.0).abs() < 0.05, "{wide:?}");
    assert!((wide.scaled.std / 4.0 - 1.0).abs() < 0.05, "{wide:?}");
}

#[test]
fn unscaled_softmax_saturates_to_one_key_as_d_k_grows_and_its_gradient_vanishes() {
    let sweep = default_sweep();
    let raw: Vec<f64> = sweep
        .points
        .iter()
        .map(|point| point.raw.max_weight)
        .collect();
    assert!(raw.windows(2).all(|pair| pair[1] > pair[0]), "{raw:?}");
    let last = sweep.points.last().unwrap();
    assert!(last.raw.max_weight > 0.9, "{last:?}");
    assert!(last.raw.entropy < 0.5, "{last:?}");
    assert!(last.raw.gradient < last.scaled.gradient / 5.0, "{last:?}");
    // Scaled, the std is about 1 at every d_k, and from d_k = 4 up the softmax figures
    // settle; d_k = 1 is not among them: its rows' spreads |q| vary most, and its rows are
    // evener on average.
    let first = sweep.points.first().unwrap();
    assert_eq!(first.dim, 1);
    for point in &sweep.points {
        assert!((point.scaled.std - 1.0).abs() < 0.1, "{point:?}");
    }
    let settled: Vec<_> = sweep.points.iter().filter(|point| point.dim >= 4).collect();
    for point in &settled {
        assert!(
            (point.scaled.max_weight - settled[0].scaled.max_weight).abs() < 0.02,
            "{point:?}"
        );
        assert!(
            (point.scaled.entropy - settled[0].scaled.entropy).abs() < 0.05,
            "{point:?}"
        );
        assert!(
            point.scaled.max_weight > first.scaled.max_weight + 0.02,
            "{point:?}"
        );
        assert!(
            point.scaled.entropy < first.scaled.entropy - 0.08,
            "{point:?}"
        );
    }
}

#[test]
fn the_lab_and_the_readme_say_scaling_matches_the_std_and_not_every_figure() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(!readme.contains("looks like d_k = 1"));
    let sweep = default_sweep();
    let first = &sweep.points[0];
    // The figures the README quotes for d_k = 1 are the sweep's.
    for figure in [
        format!("largest weight {:.3}", first.scaled.max_weight),
        format!("entropy {:.3}", first.scaled.entropy),
    ] {
        assert!(readme.contains(&figure), "the README lacks `{figure}`");
    }
    let printed = default_printout();
    let said = printed.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(said.contains("but only the std"), "{printed}");
}

#[test]
fn the_same_seed_gives_the_same_figures_and_another_seed_others() {
    let one = sweep(&settings(&[8, 64], 100));
    assert_eq!(one, sweep(&settings(&[8, 64], 100)));
    // A d_k's figures do not depend on the other d_k of the sweep.
    assert_eq!(one.points[1], sweep(&settings(&[64], 100)).points[0]);
    let other = sweep(&Settings {
        seed: 2,
        ..settings(&[8, 64], 100)
    });
    assert_ne!(one.points, other.points);
}

fn lab(args: &[&str]) -> std::process::Output {
    let dir = TempDir::new().unwrap();
    common::attn_tutor(&dir)
        .args(["lab", "scaling"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_json_has_the_contracts_keys_with_lists_aligned_with_dims() {
    let output = lab(&["--dims", "1,4,16", "--samples", "50", "--format", "json"]);
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "dims",
            "entropy_raw",
            "entropy_scaled",
            "grad_raw",
            "grad_scaled",
            "keys",
            "max_weight_raw",
            "max_weight_scaled",
            "raw_std",
            "samples",
            "scaled_std",
            "seed"
        ]
    );
    assert_eq!(json["dims"], serde_json::json!([1, 4, 16]));
    assert_eq!(
        (json["keys"].as_u64(), json["samples"].as_u64()),
        (Some(16), Some(50))
    );
    for key in ["raw_std", "scaled_std", "entropy_raw", "grad_scaled"] {
        assert_eq!(json[key].as_array().unwrap().len(), 3, "{key}");
    }
    // The binary's figures are the library's.
    let library = sweep(&settings(&[1, 4, 16], 50));
    assert_eq!(json["raw_std"][2].as_f64(), Some(library.points[2].raw.std));
}

#[test]
fn the_text_and_markdown_tables_have_a_row_per_d_k() {
    let text = String::from_utf8(lab(&["--dims", "2,32", "--samples", "20"]).stdout).unwrap();
    assert!(text.contains("Why scores are divided by √d_k"), "{text}");
    assert!(
        text.lines()
            .any(|line| line.trim_start().starts_with("32 ")),
        "{text}"
    );
    assert!(
        text.lines().all(|line| line.chars().count() <= 80),
        "{text}"
    );
    let markdown = String::from_utf8(
        lab(&["--dims", "2,32", "--samples", "20", "--format", "markdown"]).stdout,
    )
    .unwrap();
    assert!(markdown.contains("| d_k | std raw |"), "{markdown}");
    assert!(markdown.contains("| 32 |"), "{markdown}");
}

#[test]
fn settings_it_cannot_sweep_are_refused_naming_the_option() {
    for (args, said) in [
        (&["--keys", "1"][..], "--keys: 1 key;"),
        (&["--dims", "0,2"][..], "--dims: 0 is not a d_k"),
        (
            &["--dims", "8192"][..],
            "--dims: 8192 is not a d_k from 1 to 4096",
        ),
        (&["--samples", "0"][..], "--samples: 0 rows"),
        (
            &["--variance", "-1"][..],
            "--variance: -1 is not a variance",
        ),
        (&["--variance", "NaN"][..], "--variance: NaN"),
        (
            &["--samples", "100000", "--keys", "1024"][..],
            "more than 50000000",
        ),
    ] {
        let output = lab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains(said), "{args:?}: {error}");
    }
}

#[test]
fn the_readme_shows_what_the_lab_prints() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("$ attn-tutor lab scaling\n")
        .expect("the README shows the lab")
        + "$ attn-tutor lab scaling\n".len();
    let shown = &readme[start..start + readme[start..].find("```").unwrap()];
    let printed = default_printout();
    assert_eq!(shown, printed);
}
