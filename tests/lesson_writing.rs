//! What a lesson writer meets when a file is wrong: one mistake gives one clear error, not a
//! cascade.

use attn_tutor::lesson::{LoadError, load_text};

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
    for lesson in attn_tutor::lesson::BUILTIN {
        assert!(
            !lesson.text.contains("seed document"),
            "{} cites an internal document number, which freeze copies into teachers' files",
            lesson.name
        );
    }
}
