//! `show --format svg` and `--format html`: the tutor's screens as pictures, exactly what the
//! tutor draws (each cell's text, colors and reverse video), parsed back as XML and compared
//! with the screen drawn into a buffer, and drawn by a browser (headless Chromium) whose pixels
//! are compared with the buffer's colours.

use crate::common;

use attn_tutor::app::{Action, App, update};
use attn_tutor::ui::svg::{DEFAULT_BACKGROUND, DEFAULT_FOREGROUND};
use attn_tutor::ui::{Theme, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use tempfile::TempDir;

const CELL_WIDTH: f64 = 9.0;
const CELL_HEIGHT: f64 = 18.0;

fn show_svg(lesson: &str, args: &[&str]) -> String {
    let mut all = vec!["--format", "svg"];
    all.extend_from_slice(args);
    common::show(lesson, &all)
}

/// The tutor's own screen of `step` in `lesson`, the cursor on (row, col) of the step's result.
fn drawn(lesson: &str, step: &str, cell: Option<(usize, usize)>, theme: &Theme) -> Buffer {
    let entries = App::builtin_entries();
    let index = entries
        .iter()
        .position(|entry| entry.name == lesson)
        .unwrap();
    let mut app = App::new(entries, Some(index));
    common::go_to(&mut app, step);
    if let Some((row, col)) = cell {
        let matrix = app.tutor().unwrap().focus;
        update(
            &mut app,
            Action::Select {
                matrix,
                row,
                col: Some(col),
            },
        );
    }
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|frame| view(frame, &app, theme)).unwrap();
    let mut buffer = terminal.backend().buffer().clone();
    // The picture leaves off the key hints of the bottom line.
    for x in 0..80 {
        buffer[(x, 23)].reset();
    }
    buffer
}

fn css(color: Color) -> Option<String> {
    match color {
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Reset => None,
        // Text on the heatmap's cells: xterm's black and white.
        Color::Black => Some("#000000".to_string()),
        Color::White => Some("#ffffff".to_string()),
        other => panic!("the truecolor theme drew {other:?}"),
    }
}

/// The colour a cell's ground is seen in: its background, or its foreground when reversed.
fn ground(cell: &ratatui::buffer::Cell) -> String {
    if cell.modifier.contains(Modifier::REVERSED) {
        css(cell.fg).unwrap_or_else(|| DEFAULT_FOREGROUND.to_string())
    } else {
        css(cell.bg).unwrap_or_else(|| DEFAULT_BACKGROUND.to_string())
    }
}

/// The fill of the rectangle under cell (x, y) of the picture, the ground where there is none.
fn fill_at(svg: &roxmltree::Document, x: u16, y: u16) -> String {
    let (px, py) = (f64::from(x) * CELL_WIDTH, f64::from(y) * CELL_HEIGHT);
    let number =
        |node: roxmltree::Node, key: &str| node.attribute(key).map_or(0.0, |v| v.parse().unwrap());
    // The last rectangle drawn there is the one seen.
    svg.descendants()
        .rfind(|node| {
            let (x, y, w) = (
                number(*node, "x"),
                number(*node, "y"),
                number(*node, "width"),
            );
            node.has_tag_name("rect")
                && node.attribute("x").is_some()
                && x <= px
                && px < x + w
                && y == py
        })
        .and_then(|node| node.attribute("fill").map(str::to_string))
        .unwrap_or_else(|| DEFAULT_BACKGROUND.to_string())
}

#[test]
fn an_svg_is_the_screen_the_tutor_draws_cell_for_cell() {
    let text = show_svg("cat-sleeps", &["--step", "softmax", "--cell", "2,2"]);
    let svg = roxmltree::Document::parse(&text).expect("the SVG is XML");
    let root = svg.root_element();
    assert_eq!(root.attribute("width"), Some("720"));
    assert_eq!(root.attribute("height"), Some("432"));
    let words: String = svg
        .descendants()
        .filter(|node| node.has_tag_name("text"))
        .filter_map(|node| node.text())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(words.contains("Step 5/7 · Softmax"), "{words}");
    // Every cell's background, reverse video resolved, is the picture's.
    let theme = Theme::detect(false, Some("truecolor"), None);
    let buffer = drawn("cat-sleeps", "softmax", Some((1, 1)), &theme);
    let mut colored = 0;
    for y in 0..24 {
        for x in 0..80 {
            let cell = &buffer[(x, y)];
            let ground = ground(cell);
            if ground != DEFAULT_BACKGROUND {
                colored += 1;
            }
            assert_eq!(
                fill_at(&svg, x, y),
                ground,
                "cell ({x}, {y}) {:?}",
                cell.symbol()
            );
        }
    }
    // The heatmap of the weights and the cursor are there to see.
    assert!(colored > 20, "only {colored} colored cells");
}

#[test]
fn a_browser_draws_the_picture_with_the_tutors_colours_at_its_cells() {
    if !common::browser::installed("a_browser_draws_the_picture") {
        return;
    }
    let text = show_svg("cat-sleeps", &["--step", "softmax", "--cell", "2,2"]);
    let theme = Theme::detect(false, Some("truecolor"), None);
    let buffer = drawn("cat-sleeps", "softmax", Some((1, 1)), &theme);
    // Every blank cell with a ground of its own (heatmap, highlights, the cursor), and some plain
    // ones, at a pixel no glyph covers.
    let mut cells = Vec::new();
    for y in 0..24 {
        for x in 0..80 {
            let cell = &buffer[(x, y)];
            if cell.symbol() != " " {
                continue;
            }
            let ground = ground(cell);
            if ground != DEFAULT_BACKGROUND || (x + y) % 37 == 0 {
                cells.push(((x, y), ground));
            }
        }
    }
    let colored = cells
        .iter()
        .filter(|(_, ground)| ground != DEFAULT_BACKGROUND)
        .count();
    assert!(colored > 10, "only {colored} colored blank cells");
    let pixels: Vec<(u32, u32)> = cells
        .iter()
        .map(|((x, y), _)| {
            (
                (f64::from(*x) * CELL_WIDTH + CELL_WIDTH / 2.0) as u32,
                (f64::from(*y) * CELL_HEIGHT + CELL_HEIGHT / 2.0) as u32,
            )
        })
        .collect();
    let browser = common::browser::Browser::start();
    let drawn = browser.rasterise(&text, &pixels);
    for (((x, y), ground), seen) in cells.iter().zip(&drawn) {
        assert_eq!(seen, ground, "cell ({x}, {y})");
    }
}

#[test]
fn without_color_the_picture_keeps_reverse_video_and_bold_and_no_other_colors() {
    let dir = TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args([
            "--no-color",
            "show",
            "cat-sleeps",
            "--step",
            "softmax",
            "--cell",
            "2,2",
        ])
        .args(["--format", "svg"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let svg = roxmltree::Document::parse(&text).unwrap();
    let fills: std::collections::BTreeSet<&str> = svg
        .descendants()
        .filter_map(|node| node.attribute("fill"))
        .collect();
    assert_eq!(
        fills,
        [DEFAULT_BACKGROUND, DEFAULT_FOREGROUND]
            .into_iter()
            .collect(),
        "{text}"
    );
    // The selected cell is drawn reversed: a light rectangle under it.
    let buffer = drawn("cat-sleeps", "softmax", Some((1, 1)), &Theme::monochrome());
    let reversed = (0..24)
        .flat_map(|y| (0..80).map(move |x| (x, y)))
        .filter(|(x, y)| buffer[(*x, *y)].modifier.contains(Modifier::REVERSED))
        .collect::<Vec<_>>();
    assert!(!reversed.is_empty());
    for (x, y) in reversed {
        assert_eq!(fill_at(&svg, x, y), DEFAULT_FOREGROUND, "({x}, {y})");
    }
    assert!(text.contains("font-weight=\"bold\""));
}

#[test]
fn an_svg_of_a_screen_reads_the_same_as_before() {
    let dir = TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args([
            "--no-color",
            "show",
            "cat-sleeps",
            "--step",
            "scores",
            "--format",
            "svg",
        ])
        .output()
        .unwrap();
    insta::assert_snapshot!(
        "cat-sleeps_scores_80x24_svg",
        String::from_utf8(out.stdout).unwrap()
    );
}

#[test]
fn html_is_one_page_with_a_picture_per_step() {
    let text = common::show(
        "causal-cat-sat-mat",
        &["--format", "html", "--size", "100x30"],
    );
    assert!(text.starts_with("<!DOCTYPE html>"), "{text}");
    let steps = attn_tutor::lesson::builtin("causal-cat-sat-mat")
        .map(|builtin| {
            attn_tutor::lesson::load_text("c", None, builtin.text.to_string())
                .unwrap()
                .lesson
                .steps()
                .len()
        })
        .unwrap();
    assert_eq!(text.matches("<section>").count(), steps);
    assert_eq!(text.matches("<svg ").count(), steps);
    assert!(
        text.contains("width=\"900\" height=\"540\""),
        "100x30 cells"
    );
    // Each picture on its own is XML.
    for picture in text.split("<svg ").skip(1) {
        let svg = format!("<svg {}", picture.split("</svg>").next().unwrap());
        roxmltree::Document::parse(&format!("{svg}</svg>")).expect("each picture parses");
    }
    let one = common::show("cat-sleeps", &["--format", "html", "--step", "output"]);
    assert_eq!(one.matches("<section>").count(), 1);
}

#[test]
fn a_handout_of_every_step_is_step_all_and_a_picture_of_every_step_is_refused() {
    let every = common::show("cat-sleeps", &["--format", "html"]);
    let all = common::show("cat-sleeps", &["--format", "html", "--step", "all"]);
    assert_eq!(all, every);
    assert!(all.matches("<section>").count() > 1);
    let dir = TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args(["show", "cat-sleeps", "--format", "svg", "--step", "all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("a picture is one screen") && said.contains("--format html"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_size_with_a_format_that_has_no_screen_is_refused_not_ignored() {
    let dir = TempDir::new().unwrap();
    for format in ["text", "markdown", "json"] {
        let out = common::attn_tutor(&dir)
            .args(["show", "cat-sleeps", "--format", format, "--size", "100x30"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("--size") && said.contains("--format svg"),
            "{format}: {said}"
        );
    }
}

#[test]
fn a_size_too_small_or_written_wrong_is_refused_with_what_would_be_right() {
    let dir = TempDir::new().unwrap();
    for (size, said) in [
        (
            "60x20",
            "--size 60x20: the tutor is drawn from 80x24 to 400x200",
        ),
        ("wide", "--size wide: expected columns x rows, like 100x30"),
    ] {
        let out = common::attn_tutor(&dir)
            .args(["show", "cat-sleeps", "--format", "svg", "--size", size])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{size}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(said),
            "{size}"
        );
    }
}

#[test]
fn markup_in_a_lessons_text_is_escaped_in_the_picture() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("markup.toml");
    std::fs::write(
        &path,
        "format = 1\ntitle = \"<b>bold</b> & \\\"quoted\\\"\"\ntokens = [\"<i>\", \"a&b\"]\n\
         embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\n\
         w_v = [[1, 2], [3, 4]]\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let svg = show_svg(path, &["--step", "scores"]);
    let parsed = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let words: String = parsed
        .descendants()
        .filter_map(|node| node.text())
        .collect();
    assert!(words.contains("<b>bold</b>"), "{words}");
    assert!(words.contains("a&b"), "{words}");
    let html = common::show(path, &["--format", "html"]);
    assert!(html.contains("<title>&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;</title>"));
}

#[test]
fn the_readmes_picture_is_what_show_draws() {
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/images/cat-sleeps-softmax.svg"
    ))
    .unwrap();
    let drawn = show_svg("cat-sleeps", &["--step", "softmax", "--cell", "2,2"]);
    assert!(
        file == drawn,
        "docs/images/cat-sleeps-softmax.svg is out of date: attn-tutor show cat-sleeps --step \
         softmax --cell 2,2 --format svg > docs/images/cat-sleeps-softmax.svg"
    );
}

#[test]
fn wide_characters_take_two_cells_and_stay_whole_in_the_text() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("wide.toml");
    std::fs::write(
        &path,
        "format = 1\ntitle = \"猫が寝る\"\ntokens = [\"猫\", \"犬が寝る\"]\n\
         embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\n\
         w_v = [[1, 2], [3, 4]]\n",
    )
    .unwrap();
    let text = show_svg(path.to_str().unwrap(), &["--step", "scores"]);
    let svg = roxmltree::Document::parse(&text).unwrap();
    let mut found = false;
    for node in svg.descendants().filter(|node| node.has_tag_name("text")) {
        let content = node.text().unwrap_or_default();
        let cells = attn_tutor::lesson::text::columns(content) as f64;
        let length: f64 = node.attribute("textLength").unwrap().parse().unwrap();
        assert_eq!(length, cells * CELL_WIDTH, "{content:?}");
        found |= content.contains("犬が寝る");
    }
    assert!(found, "the label whole in one text:\n{text}");
}

#[test]
fn characters_xml_refuses_are_replaced_and_the_picture_parses() {
    assert_eq!(
        attn_tutor::ui::svg::escaped("a\u{ffff}b\u{fffe}"),
        "a\u{fffd}b\u{fffd}"
    );
}

#[test]
fn a_page_skips_the_cell_where_a_step_has_no_such_cell_and_a_picture_names_the_step() {
    let page = common::show("cat-sleeps", &["--format", "html", "--cell", "1,2"]);
    assert_eq!(page.matches("<section>").count(), 7);
    let dir = TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args([
            "show",
            "cat-sleeps",
            "--step",
            "online_softmax",
            "--cell",
            "1,3",
        ])
        .args(["--format", "svg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("in m on the Online softmax step"), "{said}");
}

#[test]
fn a_crossed_out_step_of_the_formula_is_crossed_out_in_the_picture() {
    // A lesson that scales has nothing crossed out; one that does not crosses out " / √d_k".
    let text = show_svg("cat-sleeps", &["--step", "scores"]);
    assert!(!text.contains("line-through"));
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("unscaled.toml");
    std::fs::write(
        &path,
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nscale = false\n\
         embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\n\
         w_v = [[1, 2], [3, 4]]\n",
    )
    .unwrap();
    let text = show_svg(path.to_str().unwrap(), &["--step", "scores"]);
    let svg = roxmltree::Document::parse(&text).unwrap();
    let crossed: Vec<&str> = svg
        .descendants()
        .filter(|node| node.attribute("text-decoration") == Some("line-through"))
        .filter_map(|node| node.text())
        .collect();
    assert!(
        crossed.iter().any(|text| text.contains("√d_k")),
        "{crossed:?}"
    );
}

#[test]
fn a_handout_carries_no_key_hints() {
    let svg = show_svg("cat-sleeps", &["--step", "softmax"]);
    let html = common::show("cat-sleeps", &["--format", "html"]);
    for (what, text) in [("svg", &svg), ("html", &html)] {
        for hint in ["n/p step", "? help", "e edit"] {
            assert!(!text.contains(hint), "the {what} handout carries {hint:?}");
        }
    }
    assert!(svg.contains("Step 5/7 · Softmax"), "{svg}");
}
