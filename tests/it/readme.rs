//! The README and the lesson-format reference tell the truth: the key table lists every key of
//! the help, the counts of built-in lessons are today's, and every `$ attn-tutor …` block is
//! what the commands print today.
//!
//! How a block is checked: the blocks of one document run in its order, in one scratch folder
//! that holds `tests/fixtures/docs/` (the lessons the documents name, each as the document
//! describes it), with `attn-tutor` on the PATH, NO_COLOR set and standard error merged into
//! standard output, as a reader's terminal shows them. A command's output must be the real
//! output line for line (trailing spaces aside); a block that leaves lines out says so with a
//! line `...`, and then its other lines must appear in the real output in the same order.

use std::path::{Path, PathBuf};

use attn_tutor::keymap::KEYS;
use attn_tutor::lesson::BUILTIN;

fn document(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|error| panic!("{path} is readable: {error}"))
}

#[test]
fn the_readme_key_table_lists_what_every_key_of_the_help_does() {
    let readme = document("README.md");
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

/// A count as the README writes it.
fn in_words(count: usize) -> &'static str {
    const WORDS: [&str; 21] = [
        "no",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    WORDS.get(count).copied().unwrap_or("many")
}

/// The docs' table of keys has a row for each key of the schema, as the schema writes it.
/// The rows are made, not written: with `ATTN_UPDATE_DOCS=1` this test writes them into the
/// docs (the rest of the file as it is) instead of failing, as a snapshot is updated.
#[test]
fn the_docs_table_of_keys_is_the_schemas() {
    const DOCS: &str = "docs/lesson-format.md";
    let docs = document(DOCS);
    let (heading, after) = docs
        .split_once("## All keys at a glance")
        .expect("the docs list every key");
    let lines: Vec<&str> = after.lines().collect();
    let first = lines
        .iter()
        .position(|line| line.starts_with("| Key"))
        .expect("the table of keys has its header")
        + 2;
    let rows = lines[first..]
        .iter()
        .take_while(|line| line.starts_with('|'))
        .count();
    let table = &lines[first..first + rows];
    let schema: Vec<String> = attn_tutor::lesson::schema::KEYS
        .iter()
        .map(|key| key.doc_row())
        .collect();
    if table == schema.as_slice() {
        return;
    }
    if std::env::var_os("ATTN_UPDATE_DOCS").is_some_and(|value| !value.is_empty()) {
        let mut written = format!("{heading}## All keys at a glance");
        for line in lines[..first]
            .iter()
            .map(|line| line.to_string())
            .chain(schema)
            .chain(lines[first + rows..].iter().map(|line| line.to_string()))
        {
            written.push_str(&line);
            written.push('\n');
        }
        if !after.ends_with('\n') {
            written.pop();
        }
        // Written beside and renamed, so that the tests reading the docs meanwhile read the
        // old file or the new one, never half of one.
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DOCS);
        let beside = path.with_extension("md.new");
        std::fs::write(&beside, &written).expect("the docs can be written");
        std::fs::rename(&beside, &path).expect("the docs can be replaced");
        return;
    }
    panic!(
        "docs/lesson-format.md's table of keys is not engine/src/lesson/schema.rs's: run \
         ATTN_UPDATE_DOCS=1 cargo test --test it readme:: to write it, then check the diff.\n\
         in the docs:\n{}\nfrom the schema:\n{}",
        table.join("\n"),
        schema.join("\n")
    );
}

#[test]
fn the_readme_counts_the_built_in_lessons_of_today() {
    let readme = document("README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let built_in = format!("{} are built in", in_words(BUILTIN.len()));
    assert!(
        readme.contains(&built_in),
        "README.md does not say \"{built_in}\""
    );
    let format_2 = BUILTIN
        .iter()
        .filter(|lesson| lesson.text.lines().any(|line| line.trim() == "format = 2"))
        .count();
    let last = format!("the last {} use format 2", in_words(format_2));
    assert!(readme.contains(&last), "README.md does not say \"{last}\"");
    // And they are the last ones of the list.
    assert!(
        BUILTIN[BUILTIN.len() - format_2..]
            .iter()
            .all(|lesson| lesson.text.contains("format = 2")),
        "the format 2 lessons are not the last {format_2} built-ins"
    );
}

/// One `$ command` of a document and the output shown under it.
struct Shown {
    /// Where the command stands: `docs/lesson-format.md:60`.
    place: String,
    command: String,
    output: Vec<String>,
}

/// Every command of the fenced blocks whose first line is `$ attn-tutor …`, in order.
fn commands_of(path: &str) -> Vec<Shown> {
    let text = document(path);
    let lines: Vec<&str> = text.lines().collect();
    let mut shown = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let opens = lines[at].trim_start().starts_with("```");
        at += 1;
        if !opens {
            continue;
        }
        let start = at;
        while at < lines.len() && !lines[at].trim_start().starts_with("```") {
            at += 1;
        }
        let block = &lines[start..at];
        at += 1;
        if !block
            .first()
            .is_some_and(|line| line.starts_with("$ attn-tutor "))
        {
            continue;
        }
        for (index, line) in block.iter().enumerate() {
            let Some(command) = line.strip_prefix("$ ") else {
                continue;
            };
            let output = block[index + 1..]
                .iter()
                .take_while(|line| !line.starts_with("$ "))
                .map(|line| line.trim_end().to_string())
                .collect();
            shown.push(Shown {
                place: format!("{path}:{}", start + index + 1),
                command: command.to_string(),
                output,
            });
        }
    }
    shown
}

/// The scratch folder: every lesson of `tests/fixtures/docs/`.
fn scratch_folder() -> tempfile::TempDir {
    let dir = tempfile::TempDir::new().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docs");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

/// What `command` prints (both streams, as a terminal shows them) in `dir`.
fn run(command: &str, dir: &Path) -> Vec<String> {
    let binary = PathBuf::from(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let output = std::process::Command::new("sh")
        .args(["-c", &format!("{command} 2>&1")])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", dir.join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Whether the shown lines are the real ones: all of them, or, with `...` lines, the others in
/// the same order.
fn agrees(shown: &[String], real: &[String]) -> bool {
    let mut shown: Vec<&String> = shown.iter().collect();
    while shown.last().is_some_and(|line| line.is_empty()) {
        shown.pop();
    }
    if !shown.iter().any(|line| line.trim() == "...") {
        return shown.len() == real.len() && shown.iter().zip(real).all(|(a, b)| *a == b);
    }
    let mut real = real.iter();
    shown
        .iter()
        .filter(|line| line.trim() != "...")
        .all(|line| real.any(|candidate| candidate == *line))
}

fn check_document(path: &str) {
    let dir = scratch_folder();
    let commands = commands_of(path);
    assert!(!commands.is_empty(), "{path} shows no `$ attn-tutor` block");
    let mut wrong = Vec::new();
    for shown in &commands {
        let real = run(&shown.command, dir.path());
        if !agrees(&shown.output, &real) {
            wrong.push(format!(
                "{}: `{}` shows\n{}\nbut prints\n{}\n",
                shown.place,
                shown.command,
                shown.output.join("\n"),
                real.join("\n")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} commands in {path} print something else today:\n\n{}",
        wrong.len(),
        commands.len(),
        wrong.join("\n")
    );
}

#[test]
fn every_command_of_the_readme_prints_what_it_shows() {
    check_document("README.md");
}

#[test]
fn every_command_of_the_lesson_format_reference_prints_what_it_shows() {
    check_document("docs/lesson-format.md");
}

#[test]
fn a_block_that_leaves_lines_out_still_keeps_their_order() {
    let real: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let shown = |lines: &[&str]| {
        lines
            .iter()
            .map(|line| line.to_string())
            .collect::<Vec<_>>()
    };
    assert!(agrees(&shown(&["a", "b", "c"]), &real));
    assert!(
        !agrees(&shown(&["a", "c"]), &real),
        "a line left out unsaid"
    );
    assert!(agrees(&shown(&["a", "...", "c"]), &real));
    assert!(!agrees(&shown(&["c", "...", "a"]), &real), "out of order");
    assert!(
        !agrees(&shown(&["a", "...", "d"]), &real),
        "a line it does not print"
    );
}
