//! Hostile text in lessons and file names: nothing that acts on a terminal (C0 and C1
//! controls, bidi controls, zero-width and other invisible characters) reaches the output of
//! `check`, `show`, `freeze` or the tutor's screen, and no label is larger than it looks.

use crate::common;

use std::path::{Path, PathBuf};

use attn_tutor::lesson::text::is_hidden;
use common::{attn_tutor, screen};
use tempfile::TempDir;

/// Characters the issue found passing through, and their well-known cousins.
const HIDDEN: &[char] = &[
    '\u{1b}', '\u{7}', '\u{9b}', '\u{85}', '\u{90}', '\u{9c}', '\u{9d}', '\u{9e}', '\u{9f}',
    '\u{200b}', '\u{200e}', '\u{200f}', '\u{61c}', '\u{202e}', '\u{2066}',
];

/// Output with its line breaks allowed; anything else hidden is a leak.
fn leaks(output: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(output)
        .chars()
        .filter(|&ch| ch != '\n' && is_hidden(ch))
        .collect()
}

fn assert_clean(what: &str, output: &[u8]) {
    let leaked = leaks(output);
    assert!(
        leaked.is_empty(),
        "{what} leaked {leaked:?}:\n{}",
        String::from_utf8_lossy(output)
    );
}

const SMALL_LESSON: &str = "format = 1\ntitle = \"Tiny\"\ntokens = [\"a\", \"b\"]\n\
    q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n";

/// A valid lesson under a file name that tries to retitle the window, paint the screen red and
/// reverse the text after it.
fn hostile_file_name(dir: &TempDir) -> PathBuf {
    let path = dir
        .path()
        .join("x\u{1b}]2;PWNED\u{7}\u{1b}[41mRED\u{202e}RLO.toml");
    std::fs::write(&path, SMALL_LESSON).unwrap();
    path
}

fn name_of(path: &Path) -> &str {
    path.file_name().unwrap().to_str().unwrap()
}

#[test]
fn check_prints_a_hostile_file_name_visibly() {
    let dir = TempDir::new().unwrap();
    let path = hostile_file_name(&dir);
    let output = attn_tutor(&dir)
        .args(["check", name_of(&path)])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_clean("check's report", &output.stdout);
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("x\\u{001b}]2;PWNED\\u{0007}"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn show_prints_a_hostile_file_name_visibly() {
    let dir = TempDir::new().unwrap();
    let path = hostile_file_name(&dir);
    for format in ["text", "markdown", "json"] {
        let output = attn_tutor(&dir)
            .args(["show", name_of(&path), "--format", format])
            .output()
            .unwrap();
        assert!(output.status.success(), "{format}: {output:?}");
        assert_clean(&format!("show --format {format}"), &output.stdout);
        assert_clean(&format!("show --format {format} (stderr)"), &output.stderr);
    }
}

#[test]
fn an_invalid_lesson_under_a_hostile_file_name_is_reported_visibly() {
    let dir = TempDir::new().unwrap();
    let path = hostile_file_name(&dir);
    std::fs::write(&path, SMALL_LESSON.replace("tokens", "tokns")).unwrap();
    let output = attn_tutor(&dir)
        .args(["check", name_of(&path)])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_clean("check's diagnostics", &output.stderr);
}

/// A comment holding `hidden` on the line that has an error, so diagnostics quote it.
fn lesson_with_hidden_comment(hidden: char, valid: bool) -> String {
    let tokens = if valid { "tokens" } else { "tokns" };
    SMALL_LESSON.replace(
        "tokens = [\"a\", \"b\"]",
        &format!("{tokens} = [\"a\", \"b\"] # a {hidden} comment"),
    )
}

#[test]
fn diagnostics_quote_lines_without_their_hidden_characters() {
    let dir = TempDir::new().unwrap();
    for &hidden in HIDDEN {
        let path = dir.path().join("lesson.toml");
        std::fs::write(&path, lesson_with_hidden_comment(hidden, false)).unwrap();
        for command in [
            &["check", "lesson.toml"][..],
            &["show", "lesson.toml"],
            &["freeze", "lesson.toml", "-o", "-"],
        ] {
            let output = attn_tutor(&dir).args(command).output().unwrap();
            assert_eq!(output.status.code(), Some(2), "{command:?} {hidden:?}");
            assert_clean(&format!("{command:?} with {hidden:?}"), &output.stderr);
            let shown = format!("\\u{{{:04x}}}", hidden as u32);
            assert!(
                String::from_utf8_lossy(&output.stderr).contains(&shown),
                "{command:?} should show {shown}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

#[test]
fn freeze_to_the_terminal_writes_comments_visibly() {
    let dir = TempDir::new().unwrap();
    // TOML itself refuses C0 controls in comments; the rest are valid comment text.
    for &hidden in HIDDEN.iter().filter(|&&ch| ch as u32 >= 0x80) {
        std::fs::write(
            dir.path().join("lesson.toml"),
            lesson_with_hidden_comment(hidden, true),
        )
        .unwrap();
        let output = attn_tutor(&dir)
            .args(["freeze", "lesson.toml", "-o", "-"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{hidden:?}: {output:?}");
        assert_clean(&format!("freeze -o - with {hidden:?}"), &output.stdout);
    }
}

#[test]
fn a_label_of_one_letter_and_400000_accents_is_refused_in_a_few_lines() {
    let dir = TempDir::new().unwrap();
    let label = format!("a{}", "\u{301}".repeat(400_000));
    std::fs::write(
        dir.path().join("accents.toml"),
        SMALL_LESSON.replace("\"a\", \"b\"", &format!("\"{label}\", \"b\"")),
    )
    .unwrap();
    let output = attn_tutor(&dir)
        .args(["check", "accents.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(
        errors.contains("token 1 takes 800001 bytes for 1 column; the limit is 64 bytes"),
        "{}",
        &errors[..errors.len().min(2000)]
    );
    assert!(
        output.stderr.len() < 4000,
        "the quoted line is cut: {} bytes",
        output.stderr.len()
    );
}

#[test]
fn a_title_heavy_with_accents_is_refused() {
    let dir = TempDir::new().unwrap();
    let title = format!("T{}", "\u{301}".repeat(1000));
    std::fs::write(
        dir.path().join("title.toml"),
        SMALL_LESSON.replace("Tiny", &title),
    )
    .unwrap();
    let output = attn_tutor(&dir)
        .args(["check", "title.toml"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("`title` takes 2001 bytes for 1 column; the limit is 240 bytes"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_tutor_shows_a_hostile_file_name_visibly() {
    use attn_tutor::app::{App, PickerEntry};
    let dir = TempDir::new().unwrap();
    let path = hostile_file_name(&dir);
    let entry = PickerEntry {
        name: name_of(&path).to_string(),
        lesson: attn_tutor::lesson::load_file(&path),
    };
    let app = App::new(vec![entry], Some(0));
    let shown = screen(&app, 160, 30);
    assert_clean("the tutor's screen", shown.as_bytes());
    assert!(shown.contains("RED\\u{202e}RLO"), "{shown}");
}

#[test]
fn no_hidden_character_reaches_the_screen_even_where_a_screen_forgot_to_escape_it() {
    use attn_tutor::app::{App, Status};
    let mut app = App::new(App::builtin_entries(), Some(0));
    // Text no loader would let through, put straight into the state: the view's last rule
    // must still catch it.
    app.tutor_mut().unwrap().name = "RED\u{202e}RLO\u{200b}".to_string();
    app.status = Some(Status::error("a\u{202e}b\u{200b}c\u{9b}d"));
    let shown = screen(&app, 120, 24);
    assert_clean("the screen", shown.as_bytes());
    assert!(
        shown.contains('\u{fffd}'),
        "a sign that something was there: {shown}"
    );
}

#[test]
fn new_and_freeze_name_a_hostile_output_file_visibly() {
    let dir = TempDir::new().unwrap();
    let name = "y\u{1b}]2;PWNED\u{7}\u{202e}.toml";
    let output = attn_tutor(&dir).args(["new", name]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_clean("new", &output.stdout);
    assert_clean("new (stderr)", &output.stderr);
    // Again: the file exists now, and the refusal names it.
    let output = attn_tutor(&dir).args(["new", name]).output().unwrap();
    assert!(!output.status.success());
    assert_clean("new over an existing file", &output.stderr);
    let output = attn_tutor(&dir)
        .args(["freeze", "cat-sleeps", "-o", name])
        .output()
        .unwrap();
    assert_clean("freeze over an existing file", &output.stdout);
    assert_clean("freeze over an existing file (stderr)", &output.stderr);
}

/// A lesson whose every text tries to become HTML or a link in the Markdown handout: labels
/// that close a code span and open a tag across two of them, a `javascript:` link in the
/// summary, a tag in the title, a reference definition and an HTML block in a narration.
const MARKUP_LESSON: &str = r#"format = 1
title = "<img src=x onerror=alert(1)> ~~gone~~"
source = "[s](javascript:alert(2)) <https://example.invalid>"
summary = "[x](javascript:alert(3)) and ![i](javascript:alert(4))"
tokens = ["`<svg onload='1", "body.id=9+9'>", "c"]
q = [[1, 0], [0, 1], [1, 1]]
k = [[1, 0], [0, 1], [1, 1]]
v = [[1, 2], [3, 4], [5, 6]]
[narration]
scores = """
<script>alert(5)</script>

[r]: javascript:alert(6)
a [r] &lt;svg onload=alert(7)&gt;
- not a list
"""
"#;

/// What a CommonMark renderer (with GitHub's tables and strikethrough) makes of a handout:
/// its HTML, and every raw HTML piece, link or image it found.
fn render_markdown(markdown: &str) -> (String, Vec<String>) {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events: Vec<Event> = Parser::new_ext(markdown, options).collect();
    let live: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            Event::Html(html) | Event::InlineHtml(html) => Some(format!("HTML {html}")),
            Event::Start(Tag::Link { dest_url, .. }) => Some(format!("link to {dest_url}")),
            Event::Start(Tag::Image { dest_url, .. }) => Some(format!("image of {dest_url}")),
            Event::Start(Tag::Strikethrough) => Some("strikethrough".to_string()),
            _ => None,
        })
        .collect();
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    (html, live)
}

#[test]
fn the_markdown_handout_renders_no_lesson_text_as_html_or_a_link() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("markup.toml"), MARKUP_LESSON).unwrap();
    let output = attn_tutor(&dir)
        .args(["show", "markup.toml", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let markdown = String::from_utf8(output.stdout).unwrap();
    let (html, live) = render_markdown(&markdown);
    assert!(live.is_empty(), "live markup {live:?} in:\n{markdown}");
    // The tags in the page are the handout's own; every one of the lesson's is text.
    let tags: std::collections::BTreeSet<&str> = html
        .split('<')
        .skip(1)
        .map(|tag| {
            tag.trim_start_matches('/')
                .split([' ', '>'])
                .next()
                .unwrap_or("")
        })
        .collect();
    let handout_tags = [
        "blockquote",
        "code",
        "em",
        "h1",
        "h2",
        "li",
        "p",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    ];
    for tag in &tags {
        assert!(handout_tags.contains(tag), "<{tag}> in:\n{html}");
    }
    // And the lesson's text is there, as it was written.
    for text in [
        "`&lt;svg onload='1",
        "body.id=9+9'&gt;",
        "&lt;img src=x onerror=alert(1)&gt; ~~gone~~",
        "[x](javascript:alert(3))",
        "&lt;script&gt;alert(5)&lt;/script&gt;",
        "[r]: javascript:alert(6)",
        "&amp;lt;svg onload=alert(7)&amp;gt;",
        "- not a list",
    ] {
        assert!(html.contains(text), "{text} is not in:\n{html}");
    }
}

/// An argument that tries to retitle the window, paint the screen and reverse what follows.
const HOSTILE_ARG: &str = "x\u{1b}]2;PWNED\u{7}\u{9b}31m\u{202e}y";

/// Runs the binary with `args` and insists that neither stream carries a hidden character,
/// and that the hostile argument is shown as visible escapes (`\u{1b}` as `\u{001b}`).
fn assert_args_echoed_visibly(dir: &TempDir, args: &[&str]) {
    let output = attn_tutor(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(!output.status.success(), "{args:?} succeeded: {output:?}");
    assert_clean(&format!("{args:?} (stdout)"), &output.stdout);
    assert_clean(&format!("{args:?} (stderr)"), &output.stderr);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("\\u{001b}]2;PWNED\\u{0007}\\u{009b}31m\\u{202e}y"),
        "{args:?} does not show the argument visibly:\n{said}"
    );
}

#[test]
fn show_cell_and_token_errors_echo_the_argument_visibly() {
    let dir = TempDir::new().unwrap();
    assert_args_echoed_visibly(&dir, &["show", "cat-sleeps", "--cell", HOSTILE_ARG]);
    assert_args_echoed_visibly(
        &dir,
        &[
            "show",
            "cat-sleeps",
            "--step",
            "scores",
            "--cell",
            HOSTILE_ARG,
        ],
    );
    assert_args_echoed_visibly(
        &dir,
        &[
            "show",
            "cat-sleeps",
            "--format",
            "svg",
            "--step",
            "scores",
            "--cell",
            HOSTILE_ARG,
        ],
    );
    // A lesson without generation steps, and one with them.
    assert_args_echoed_visibly(&dir, &["show", "cat-sleeps", "--token", HOSTILE_ARG]);
    assert_args_echoed_visibly(&dir, &["show", "generation", "--token", HOSTILE_ARG]);
}

#[test]
fn command_line_errors_echo_the_argument_visibly() {
    let dir = TempDir::new().unwrap();
    for args in [
        &["serve", "--open", "--listen", HOSTILE_ARG][..],
        &["serve", "--open", "--web", HOSTILE_ARG],
        &["lab", "scaling", "--dims", &format!("1,{HOSTILE_ARG}")],
        &["show", "cat-sleeps", "--step", HOSTILE_ARG],
    ] {
        assert_args_echoed_visibly(&dir, args);
    }
}

#[test]
fn a_password_file_under_a_hostile_name_is_named_visibly() {
    let dir = TempDir::new().unwrap();
    let missing = format!("missing-{HOSTILE_ARG}");
    assert_args_echoed_visibly(
        &dir,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--password-file",
            &missing,
        ],
    );
    // One that is there but empty.
    std::fs::write(dir.path().join(HOSTILE_ARG), "").unwrap();
    assert_args_echoed_visibly(
        &dir,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--password-file",
            HOSTILE_ARG,
        ],
    );
}

#[test]
fn the_banner_names_a_hostile_host_key_path_visibly() {
    use std::io::{BufRead, BufReader};
    let dir = TempDir::new().unwrap();
    let key = dir.path().join(HOSTILE_ARG);
    let mut serve = std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    serve
        .args(["serve", "--open", "--listen", "127.0.0.1:0", "--host-key"])
        .arg(&key)
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut server = common::classroom::KillOnDrop(serve.spawn().unwrap());
    let stdout = server.0.stdout.take().unwrap();
    let (lines, banner) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let key_line = loop {
        let line = banner
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no host key line in:\n{}", String::from_utf8_lossy(&seen)));
        seen.extend_from_slice(&line);
        seen.push(b'\n');
        if line.starts_with(b"host key") {
            break line;
        }
    };
    drop(server);
    assert_clean("the banner", &seen);
    assert!(
        String::from_utf8_lossy(&key_line)
            .contains("\\u{001b}]2;PWNED\\u{0007}\\u{009b}31m\\u{202e}y, new)"),
        "{}",
        String::from_utf8_lossy(&key_line)
    );
}
