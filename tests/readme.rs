//! The README tells the truth about the tutor: its key table lists every key of the help.

use attn_tutor::keymap::KEYS;

#[test]
fn the_readme_key_table_lists_what_every_key_of_the_help_does() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md is readable");
    for (keys, what) in KEYS {
        // A line with no keys continues the description above it.
        if keys.is_empty() {
            continue;
        }
        let first_words: String = what.chars().take(24).collect();
        assert!(
            readme.contains(&first_words),
            "README.md does not describe `{keys}`: {what}"
        );
    }
}
