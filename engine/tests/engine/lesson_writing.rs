//! What a lesson writer meets when a file is wrong: one mistake gives one clear error, not a
//! cascade.

use attn_engine::lesson::{LoadError, load_text};

/// The error messages `check` would print for this text, in order.
fn errors(text: &str) -> Vec<String> {
    match load_text("lesson", None, text.to_string()) {
        Ok(_) => Vec::new(),
        Err(LoadError::Invalid { diagnostics, .. }) => diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(|diagnostic| diagnostic.message.clone())
            .collect(),
        Err(other) => vec![other.render(false)],
    }
}

const MATRICES: &str = "embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\n\
    w_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n";

#[test]
fn an_unclosed_array_is_one_error_at_its_bracket() {
    let text = format!("format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"\n{MATRICES}");
    let found = errors(&text);
    assert_eq!(
        found,
        ["unclosed array: this `[` is never closed"],
        "{found:#?}"
    );
}

#[test]
fn a_broken_line_is_one_error_not_one_per_token() {
    let text = format!("format = 1\ntitle = \"t\"\ntokens = [a, b]\n{MATRICES}");
    let found = errors(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("invalid TOML"), "{found:#?}");
}

#[test]
fn keys_after_the_narration_header_are_one_error_that_says_why() {
    let text = format!(
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n\n[narration]\n\
         scores = \"Each query meets every key.\"\n\n{MATRICES}"
    );
    let found = errors(&text);
    assert_eq!(
        found,
        [
            "`embeddings` is inside the [narration] table because it comes after that header \
          (and so are `w_q`, `w_k`, `w_v`)"
        ],
        "{found:#?}"
    );
}

#[test]
fn a_misplaced_key_still_gets_its_own_problems_reported() {
    let text = "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n[expected]\ntolerance = 0.1\n\
                q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[1, 2, 3], [3, 4]]\n\
                decimals = 99\n";
    let found = errors(text);
    assert!(
        found[0].starts_with("`decimals` is inside the [expected] table"),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|message| message.contains("decimals") && !message.contains("inside")),
        "decimals = 99 is still out of range: {found:#?}"
    );
}

#[test]
fn built_in_lessons_cite_their_documents_by_what_a_reader_can_find() {
    for lesson in attn_engine::lesson::BUILTIN {
        assert!(
            !lesson.text.contains("seed document"),
            "{} cites an internal document number, which freeze copies into teachers' files",
            lesson.name
        );
    }
}

// --- heads and W_o, written back --------------------------------------------------------------

mod heads {
    use std::sync::Arc;

    use attn_engine::lesson::{freeze, keep_generators, lesson_to_toml, load_text, parse};
    use attn_engine::pipeline::{Heads, MatrixName};

    /// Four query heads in two K/V groups, W_o generated, figures of head 3 and of the lesson.
    const FOUR_HEADS: &str = r#"format = 2
title = "Four heads, two groups"
tokens = ["a", "b"]
embeddings = [[1, 0], [0, 1]]
heads = 4
kv_heads = 2
w_q = { random = "normal", seed = 1, shape = [2, 8] }
w_k = { random = "normal", seed = 2, shape = [2, 4] }
w_v = { random = "normal", seed = 3, shape = [2, 4] }
# W_o: 4 heads × d_v 2 rows, d_out 3
w_o = { random = "normal", seed = 4, shape = [8, 3] }

[expected]
w_k = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]

[expected.heads.3]
weights = [[0.5, 0.5], [0.25, 0.75]]

[expected.w_o]
"8" = [1, 2, 3]
"#;

    fn lesson(text: &str) -> attn_engine::lesson::Lesson {
        load_text("lesson", None, text.to_string())
            .unwrap_or_else(|error| panic!("{}", error.render(false)))
            .lesson
    }

    #[test]
    fn a_saved_lesson_keeps_its_heads_its_groups_and_w_o() {
        let original = lesson(FOUR_HEADS);
        let saved_text = lesson_to_toml(&original);
        assert!(
            saved_text.contains("heads = 4\nkv_heads = 2\n"),
            "{saved_text}"
        );
        assert!(
            saved_text.contains("w_o = { random = \"normal\", seed = 4, shape = [8, 3] }"),
            "{saved_text}"
        );
        let saved = lesson(&saved_text);
        assert_eq!(saved, original, "saved as\n{saved_text}");
        assert_eq!(saved.heads, Heads { query: 4, kv: 2 });
    }

    #[test]
    fn a_saved_lesson_keeps_each_heads_printed_figures_under_that_head() {
        let original = lesson(FOUR_HEADS);
        let saved_text = lesson_to_toml(&original);
        assert!(
            saved_text.contains("[expected.heads.3.weights]"),
            "{saved_text}"
        );
        let saved = lesson(&saved_text);
        let heads: Vec<(MatrixName, Option<usize>)> = saved
            .expected
            .figures
            .iter()
            .map(|figure| (figure.matrix, figure.head))
            .collect();
        assert_eq!(
            heads,
            [
                (MatrixName::WK, None),
                (MatrixName::Weights, Some(2)),
                (MatrixName::WO, None)
            ]
        );
    }

    #[test]
    fn an_edited_w_o_cell_is_saved() {
        let mut edited = lesson(FOUR_HEADS);
        let w_o = edited
            .input_mut(MatrixName::WO)
            .expect("the lesson has W_o");
        Arc::make_mut(&mut w_o.values)[(7, 2)] = 42.5;
        let saved_text = lesson_to_toml(&edited);
        let saved = lesson(&saved_text);
        assert_eq!(saved.w_o.as_ref().unwrap().values[(7, 2)], 42.5);
        assert_eq!(
            saved.w_o.as_ref().unwrap().values,
            edited.w_o.unwrap().values
        );
        // Written out as numbers: its generator no longer makes them.
        assert!(saved.w_o.unwrap().generator.is_none());
    }

    #[test]
    fn keeping_generators_sets_an_edited_w_o_back_to_its_generator() {
        let original = lesson(FOUR_HEADS);
        let mut edited = original.clone();
        let w_o = edited.input_mut(MatrixName::WO).unwrap();
        Arc::make_mut(&mut w_o.values)[(0, 0)] = 9.0;
        let (kept, dropped) = keep_generators(&edited);
        assert_eq!(dropped, [MatrixName::WO]);
        assert_eq!(kept.w_o, original.w_o);
    }

    #[test]
    fn a_frozen_lesson_has_w_o_as_numbers_and_keeps_heads_as_written() {
        let original = lesson(FOUR_HEADS);
        let frozen_text = freeze(FOUR_HEADS, &original);
        assert!(
            frozen_text.contains("heads = 4\nkv_heads = 2\n"),
            "{frozen_text}"
        );
        assert!(
            frozen_text
                .contains("# generated by { random = \"normal\", seed = 4, shape = [8, 3] }"),
            "{frozen_text}"
        );
        let frozen = parse(&frozen_text).lesson.expect("a frozen lesson reads");
        assert_eq!(frozen.heads, original.heads);
        assert_eq!(frozen.w_o.unwrap().values, original.w_o.unwrap().values);
    }

    #[test]
    fn a_lesson_without_heads_is_saved_without_heads() {
        let text = "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n\
                    embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\n\
                    w_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n";
        let saved_text = lesson_to_toml(&lesson(text));
        for key in ["heads", "kv_heads", "w_o"] {
            assert!(
                !saved_text.lines().any(|line| line.starts_with(key)),
                "`{key}` added:\n{saved_text}"
            );
        }
        assert_eq!(lesson(&saved_text), lesson(text));
    }

    #[test]
    fn as_many_groups_as_heads_are_saved_as_heads_alone() {
        let text = FOUR_HEADS
            .replace("kv_heads = 2\n", "")
            .replace("shape = [2, 4] }", "shape = [2, 8] }")
            .replace(
                "[expected]\nw_k = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]\n",
                "",
            );
        let original = lesson(&text);
        assert_eq!(original.heads, Heads { query: 4, kv: 4 });
        let saved_text = lesson_to_toml(&original);
        assert!(!saved_text.contains("kv_heads"), "{saved_text}");
        assert_eq!(lesson(&saved_text), original);
    }
}

// --- a tile changed in the tutor, written back -------------------------------------------------

#[test]
fn a_format_1_lesson_saved_with_a_larger_tile_is_written_as_format_2_and_loads() {
    let text = format!(
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\", \"c\"]\n{}",
        "embeddings = [[1, 0], [0, 1], [1, 1]]\nw_q = [[1, 0], [0, 1]]\n\
         w_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n"
    );
    let mut lesson = load_text("lesson", None, text)
        .unwrap_or_else(|error| panic!("{}", error.render(false)))
        .lesson;
    assert_eq!(lesson.format, 1);
    lesson.tile = 4;
    let saved = attn_engine::lesson::lesson_to_toml(&lesson);
    assert!(saved.contains("format = 2\n"), "{saved}");
    assert!(saved.contains("tile = 4\n"), "{saved}");
    let read_back = load_text("saved", None, saved.clone())
        .unwrap_or_else(|error| panic!("{}\n{saved}", error.render(false)))
        .lesson;
    assert_eq!(read_back.tile, 4);
}

#[test]
fn a_format_1_lesson_saved_with_its_tile_unchanged_stays_format_1() {
    let text = format!("format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n{MATRICES}");
    let lesson = load_text("lesson", None, text)
        .unwrap_or_else(|error| panic!("{}", error.render(false)))
        .lesson;
    let saved = attn_engine::lesson::lesson_to_toml(&lesson);
    assert!(saved.contains("format = 1\n"), "{saved}");
    assert!(!saved.contains("tile"), "{saved}");
}

#[test]
fn every_key_of_format_2_in_a_format_1_lesson_is_refused_saying_why() {
    let base = "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nembeddings = [[1, 0], [0, 1]]\n\
                w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1, 0], [0, 1]]\n";
    // A value of each kind that asks for format 2 (`false` does not: it is format 1's too).
    let value_of = |kind: &str| {
        [
            ("boolean", "true"),
            ("array of integers", "[1, 2]"),
            ("integer", "2"),
            ("number", "1.5"),
            ("`\"half\"`", "\"half\""),
            ("array of strings", "[\"x\"]"),
            ("matrix", "[[1, 0], [0, 1]]"),
            ("array of numbers", "[1, 0]"),
            ("number", "0.5"),
            ("\"layer\"", "\"layer\""),
        ]
        .into_iter()
        .find(|(of_kind, _)| kind.contains(of_kind))
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("no value for a key of format 2 whose value is {kind}"))
    };
    let values: Vec<(&str, &str)> = attn_engine::lesson::schema::KEYS
        .iter()
        .filter(|key| key.since == 2)
        .map(|key| (key.name, value_of(key.value)))
        .collect();
    // Today's nine at least: the filter above finds the table's keys of format 2.
    assert!(values.len() >= 9, "{values:?}");
    for (name, value) in values {
        let text = format!("{base}{name} = {value}\n");
        let why = attn_engine::lesson::schema::key(name)
            .and_then(|key| key.format_1_has_not)
            .unwrap();
        let Err(LoadError::Invalid { diagnostics, .. }) = load_text("lesson", None, text) else {
            panic!("{name} = {value} was taken in a format 1 lesson");
        };
        assert!(
            diagnostics.iter().any(
                |said| said.message == format!("`{name}` needs `format = 2`") && said.label == why
            ),
            "{name}: {diagnostics:?}"
        );
    }
}

/// Each combination of keys no lesson can be (`Shape::refusal`) is refused, with an error that
/// names the key and says why: by the key's own reader in its words, or by the shape's refusal
/// when no reader has words of its own for it.
#[test]
fn a_lesson_no_pipeline_can_be_is_refused_at_the_key_that_asks_for_it() {
    let given = "q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n";
    let cases = [
        (
            format!(
                "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n{given}positions = \"sinusoidal\"\n"
            ),
            "positions",
        ),
        (
            format!(
                "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n{MATRICES}decode = true\n"
            ),
            "decode",
        ),
        (
            format!(
                "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nsource_tokens = [\"c\", \"d\"]\n\
                 source_embeddings = [[1, 0], [0, 1]]\n{MATRICES}mask = \"causal\"\ndecode = true\n"
            ),
            "decode",
        ),
        (
            format!("format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nheads = 2\n{MATRICES}"),
            "w_o",
        ),
    ];
    for (text, key) in cases {
        let found = errors(&text);
        assert!(
            found.iter().any(|error| error.contains(key)
                || error.contains("generation")
                || error.contains("W_o")),
            "{text}\n{found:#?}"
        );
    }
}

// --- RoPE's pairing and base, and the tokens' ids ----------------------------------------------

mod rope_and_ids {
    use attn_engine::lesson::{
        DEFAULT_ROPE_THETA, LoadError, RopePairing, lesson_to_toml, load_text,
    };

    const ROPE: &str = "format = 2\ntitle = \"t\"\ntokens = [\"The\", \"cat\", \"sleeps\"]\n\
        q = [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]\n\
        k = [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]]\n\
        v = [[1], [2], [3]]\n";

    /// Each error as `message | label | help`, with the text the span points at.
    fn problems(text: &str) -> Vec<String> {
        match load_text("lesson", None, text.to_string()) {
            Ok(_) => Vec::new(),
            Err(LoadError::Invalid { diagnostics, .. }) => diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.is_error())
                .map(|diagnostic| {
                    format!(
                        "{} | {} | {} | at `{}`",
                        diagnostic.message,
                        diagnostic.label,
                        diagnostic.help.as_deref().unwrap_or(""),
                        &text[diagnostic.span.clone()]
                    )
                })
                .collect(),
            Err(other) => vec![other.render(false)],
        }
    }

    fn lesson(text: &str) -> attn_engine::lesson::Lesson {
        load_text("lesson", None, text.to_string())
            .unwrap_or_else(|error| panic!("{}", error.render(false)))
            .lesson
    }

    #[test]
    fn rope_pairing_and_rope_theta_are_read_and_default_to_neighbours_and_10000() {
        let plain = lesson(&format!("{ROPE}positions = \"rope\"\n"));
        assert_eq!(plain.rope_pairing, RopePairing::Interleaved);
        assert_eq!(plain.rope_theta, DEFAULT_ROPE_THETA);
        assert_eq!(plain.token_ids, None);
        let half = lesson(&format!(
            "{ROPE}positions = \"rope\"\nrope_pairing = \"half\"\nrope_theta = 500000\n"
        ));
        assert_eq!(half.rope_pairing, RopePairing::Half);
        assert_eq!(half.rope_theta, 500_000.0);
        assert!(
            half.shape_text().ends_with(", rotate-half RoPE"),
            "{}",
            half.shape_text()
        );
        let fractional = lesson(&format!("{ROPE}positions = \"rope\"\nrope_theta = 2.5\n"));
        assert_eq!(fractional.rope_theta, 2.5);
    }

    #[test]
    fn rope_pairing_theta_and_token_ids_are_saved_and_read_back() {
        let text = format!(
            "{ROPE}token_ids = [464, 3797, 44263]\npositions = \"rope\"\n\
             rope_pairing = \"half\"\nrope_theta = 1000000.5\n"
        );
        let original = lesson(&text);
        let saved = lesson_to_toml(&original);
        for line in [
            "token_ids = [464, 3797, 44263]\n",
            "rope_pairing = \"half\"\n",
            "rope_theta = 1000000.5\n",
        ] {
            assert!(saved.contains(line), "{line} in\n{saved}");
        }
        assert_eq!(lesson(&saved), original);
        // The defaults are not written: a lesson without the keys saves as it did.
        let plain = lesson(&format!("{ROPE}positions = \"rope\"\n"));
        let saved = lesson_to_toml(&plain);
        for key in ["rope_pairing", "rope_theta", "token_ids"] {
            assert!(!saved.contains(key), "{key} in\n{saved}");
        }
    }

    #[test]
    fn rope_keys_without_rope_are_refused_saying_why() {
        for (positions, said) in [
            ("", "this lesson has no positions"),
            ("positions = \"none\"\n", "this lesson has no positions"),
        ] {
            for (key, value) in [("rope_pairing", "\"half\""), ("rope_theta", "500000")] {
                let found = problems(&format!("{ROPE}{positions}{key} = {value}\n"));
                assert_eq!(found.len(), 1, "{found:#?}");
                assert!(
                    found[0].starts_with(&format!(
                        "`{key}` needs `positions = \"rope\"` | {said} | only RoPE turns"
                    )) && found[0].ends_with(&format!("at `{key}`")),
                    "{found:#?}"
                );
            }
        }
        let sinusoidal = "format = 2\ntitle = \"t\"\ntokens = [\"a\"]\nembeddings = [[1, 0]]\n\
             w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1], [1]]\n\
             positions = \"sinusoidal\"\nrope_pairing = \"half\"\n";
        let found = problems(sinusoidal);
        assert!(
            found.len() == 1 && found[0].contains("| this lesson's positions are \"sinusoidal\" |"),
            "{found:#?}"
        );
    }

    #[test]
    fn a_pairing_or_base_that_cannot_be_is_named_with_what_would_be_right() {
        let rope = format!("{ROPE}positions = \"rope\"\n");
        let found = problems(&format!("{rope}rope_pairing = \"halves\"\n"));
        assert!(
            found.len() == 1
                && found[0].starts_with("unknown RoPE pairing \"halves\"")
                && found[0].contains("did you mean \"half\"?")
                && found[0].ends_with("at `\"halves\"`"),
            "{found:#?}"
        );
        let found = problems(&format!("{rope}rope_pairing = 2\n"));
        assert!(
            found.len() == 1
                && found[0].starts_with(
                    "`rope_pairing` must be \"interleaved\" or \"half\", found an integer"
                ),
            "{found:#?}"
        );
        for (value, shown) in [
            ("0", "0"),
            ("-10000", "-10000"),
            ("1e13", "1e13"),
            ("nan", "nan"),
            ("inf", "inf"),
            ("1e-7", "1e-7"),
        ] {
            let found = problems(&format!("{rope}rope_theta = {value}\n"));
            assert!(
                found.len() == 1
                    && found[0].starts_with(&format!(
                        "`rope_theta` must be a number from 1e-6 to 1e12, found {shown} |"
                    ))
                    && found[0].contains("10000 by default")
                    && found[0].ends_with(&format!("at `{value}`")),
                "{value}: {found:#?}"
            );
        }
        let found = problems(&format!("{rope}rope_theta = \"10000\"\n"));
        assert!(
            found.len() == 1
                && found[0].starts_with("`rope_theta` must be a number, found a string"),
            "{found:#?}"
        );
    }

    #[test]
    fn token_ids_that_cannot_be_are_named_by_entry_and_count() {
        let cases = [
            (
                "[464, 3797]",
                "`token_ids` has 2 ids, but the lesson has 3 tokens | 2 ids | give one id per token",
                "[464, 3797]",
            ),
            (
                "[464, -1, 44263]",
                "`token_ids` entry 2 must be a whole number ≥ 0 (a tokenizer's id), found -1 |",
                "-1",
            ),
            (
                "[464, 3797.0, 44263]",
                "`token_ids` entry 2 must be a whole number ≥ 0 (a tokenizer's id), found 3797.0, a number with a point: write it without one |",
                "3797.0",
            ),
            (
                "[464, 3797, \"sleeps\"]",
                "`token_ids` entry 3 must be a whole number ≥ 0 (a tokenizer's id), found a string |",
                "\"sleeps\"",
            ),
            (
                "464",
                "`token_ids` must be an array of whole numbers, one per token, found an integer |",
                "464",
            ),
        ];
        for (value, message, at) in cases {
            let found = problems(&format!("{ROPE}token_ids = {value}\n"));
            assert!(
                found.len() == 1
                    && found[0].starts_with(message)
                    && found[0].ends_with(&format!("at `{at}`")),
                "{value}: {found:#?}"
            );
        }
    }
}
