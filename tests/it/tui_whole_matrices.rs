//! Every built-in lesson's every step shows its matrices whole (up to 6 × 6 at 80×24, up to
//! 12 × 12 at 120×40; the README's exceptions, the steps of W_o of three heads or more at
//! 80×24, in no built-in lesson, and the online softmax's second view, acc, not checked here) and keeps every highlighted operand of such a matrix on screen, for
//! every cell the step computes; panels never overlap each other or the working, and stay
//! where they are while the cursor moves. The narration never vanishes: its title and its first
//! line (two where there is room) show on every step, for every cell, with the scroll hint
//! when it has more, and no matrix is drawn over it; so on every matrix of every view of a
//! built-in step, and on every step of lessons imported from the shipped model, 3 to 12
//! tokens, at 80×24, 100×30 and 120×40.

use attn_tutor::app::{Action, App, Tutor, update};
use attn_tutor::lesson::BUILTIN;
use attn_tutor::ui::layout::{TutorLayout, tutor_layout};
use attn_tutor::ui::{Theme, narration_text, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

/// The screen as text, one line per row.
fn screen(app: &App, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|frame| view(frame, app, &Theme::monochrome()))
        .expect("drawing never fails on a test terminal");
    let buffer = terminal.backend().buffer().clone();
    buffer
        .content
        .chunks(usize::from(width))
        .map(|cells| cells.iter().map(|cell| cell.symbol()).collect::<String>())
        .collect()
}

/// Lines a text takes wrapped at a width, roughly as the narration wraps it: the words of each
/// paragraph kept whole. Only whether it is more than two lines, or more than shown, matters.
fn wrap_count(text: &str, width: usize) -> usize {
    text.lines()
        .map(|paragraph| {
            let mut lines = 1;
            let mut used = 0;
            for word in paragraph.split_whitespace() {
                let length = word.chars().count();
                if used > 0 && used + 1 + length > width {
                    lines += 1;
                    used = length;
                } else {
                    used += length + usize::from(used > 0);
                }
            }
            lines
        })
        .sum()
}

fn overlap(a: Rect, b: Rect) -> bool {
    a.intersects(b) && a.area() > 0 && b.area() > 0
}

/// What of a step's drawing the checks read — captions, the narration's title and lines — is
/// drawn from the layout's places alone (the panels, their pages, the working and the
/// narration), not from the cursor: cells whose layout puts everything in the same places are
/// drawn once and the checks read that drawing.
fn places(layout: &TutorLayout) -> String {
    let panels: Vec<String> = layout
        .panels
        .iter()
        .map(|panel| {
            format!(
                "{:?} {:?} {:?} {:?}",
                panel.matrix, panel.area, panel.rows, panel.cols
            )
        })
        .collect();
    format!(
        "{panels:?} {:?} {:?} {:?} {:?} {:?}",
        layout.header, layout.working, layout.narration, layout.status, layout.note
    )
}

/// The lesson, step, size and cell a check is about, for its message.
fn place(tutor: &Tutor, size: (u16, u16)) -> String {
    format!(
        "{} step {} ({}) at {}×{}, focus {:?}, selected {:?}",
        tutor.name,
        tutor.step_index + 1,
        tutor.step().key(),
        size.0,
        size.1,
        tutor.focus,
        tutor.selected_cell()
    )
}

/// Checks one drawn step; `limit` is the largest side that must show whole. `lines` is the
/// screen as drawn with this layout's places.
fn check(lines: &[String], tutor: &Tutor, layout: &TutorLayout, size: (u16, u16), limit: usize) {
    let where_ = place(tutor, size);
    for panel in &layout.panels {
        if panel.total_rows <= limit && panel.total_cols <= limit {
            assert_eq!(
                (panel.rows.len(), panel.cols.len()),
                (panel.total_rows, panel.total_cols),
                "{where_}: {:?} is cut",
                panel.matrix
            );
            let caption: String = lines[usize::from(panel.area.y)]
                .chars()
                .skip(usize::from(panel.area.x))
                .take(usize::from(panel.area.width))
                .collect();
            assert!(
                !caption.contains(" of "),
                "{where_}: the caption of {:?} says it is cut: {caption:?}",
                panel.matrix
            );
        }
        let screen = Rect::new(0, 0, size.0, size.1);
        assert_eq!(
            panel.area.intersection(screen),
            panel.area,
            "{where_}: {:?} leaves the screen",
            panel.matrix
        );
        for other in &layout.panels {
            if other.matrix != panel.matrix {
                assert!(
                    !overlap(panel.area, other.area),
                    "{where_}: {:?} and {:?} overlap",
                    panel.matrix,
                    other.matrix
                );
            }
        }
        for (what, rect) in [
            ("working", layout.working),
            ("narration", layout.narration),
            ("status", layout.status),
            ("header", layout.header),
        ] {
            assert!(
                !overlap(panel.area, rect),
                "{where_}: {:?} overlaps the {what}",
                panel.matrix
            );
        }
    }
    narration_shown(lines, tutor, layout, size, &where_);
    for operand in &layout.operands {
        let panel = layout
            .panels
            .iter()
            .find(|panel| panel.matrix == operand.matrix)
            .unwrap_or_else(|| panic!("{where_}: operand {operand:?} has no panel"));
        // A matrix larger than the limit may be paged (its caption says which part shows,
        // and the working lists every operand): gqa's concat, 8 columns wide, at 80×24.
        if panel.total_rows > limit || panel.total_cols > limit {
            continue;
        }
        assert!(
            panel.rows.contains(&operand.row) && panel.cols.contains(&operand.col),
            "{where_}: operand {operand:?} is off screen (rows {:?}, cols {:?})",
            panel.rows,
            panel.cols
        );
    }
}

/// The narration never vanishes: its title and its first line at least (two where the
/// working can give the rows; generation's Masking at 80×24 has three 6 × 6 matrices whole
/// in 16 of its 21 rows, and its working keeps four); the title says when Shift-↑↓ scrolls
/// to the rest; no matrix is drawn over it.
fn narration_shown(
    lines: &[String],
    tutor: &Tutor,
    layout: &TutorLayout,
    size: (u16, u16),
    where_: &str,
) {
    let width = usize::from(size.0.saturating_sub(2));
    let text_lines = wrap_count(&narration_text(tutor), width);
    let title_row = usize::from(layout.narration.y);
    assert!(
        title_row < lines.len() && lines[title_row].contains("About this step"),
        "{where_}: no narration title (narration at {:?})",
        layout.narration
    );
    let shown = usize::from(layout.narration.height.saturating_sub(1));
    let wanted = text_lines.min(1);
    let written = lines[title_row + 1..title_row + 1 + shown.min(lines.len() - title_row - 1)]
        .iter()
        .filter(|line| !line.trim().is_empty())
        .count();
    assert!(
        written >= wanted,
        "{where_}: the narration shows {written} of its {text_lines} lines (wanted {wanted})"
    );
    if text_lines > shown {
        assert!(
            lines[title_row].contains("Shift-↑↓ scrolls"),
            "{where_}: the narration is cut without its scroll hint: {:?}",
            lines[title_row]
        );
    }
    for panel in &layout.panels {
        assert!(
            !overlap(panel.area, layout.narration),
            "{where_}: {:?} overlaps the narration",
            panel.matrix
        );
    }
}

fn every_cell_of_every_step(width: u16, height: u16, limit: usize) {
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let mut app = App::new(App::builtin_entries(), Some(index));
        let steps = app.tutor().expect("the lesson opens").steps.len();
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            let tutor = app.tutor().expect("still in the lesson");
            let focus = tutor.focus;
            // A step of generation's matrices at its first token (a K/V cache is a view).
            let (rows, cols) = tutor
                .attention
                .matrix_at(focus, 0, 0)
                .map_or((0, 0), |values| (values.nrows(), values.ncols()));
            assert!(rows > 0, "{} step {number} has no matrix", builtin.name);
            let mut arrangement: Option<Vec<(String, Rect)>> = None;
            let mut drawn: Option<(String, Vec<String>)> = None;
            for row in 0..rows {
                for col in 0..cols {
                    update(
                        &mut app,
                        Action::Select {
                            matrix: focus,
                            row,
                            col: Some(col),
                        },
                    );
                    let tutor = app.tutor().expect("still in the lesson");
                    let layout = tutor_layout(tutor, Rect::new(0, 0, width, height));
                    let places = places(&layout);
                    if drawn.as_ref().is_none_or(|(drawn, _)| *drawn != places) {
                        drawn = Some((places, screen(&app, width, height)));
                    }
                    let lines = &drawn.as_ref().expect("drawn above").1;
                    check(lines, tutor, &layout, (width, height), limit);
                    // Moving the cursor never rearranges the matrices.
                    let areas: Vec<(String, Rect)> = layout
                        .panels
                        .iter()
                        .map(|panel| (format!("{:?}", panel.matrix), panel.area))
                        .collect();
                    match &arrangement {
                        None => arrangement = Some(areas),
                        Some(first) => assert_eq!(
                            first, &areas,
                            "{} step {number} at {width}×{height}: the panels move when the \
                             cursor is on row {row}, column {col}",
                            builtin.name
                        ),
                    }
                }
            }
        }
    }
}

#[test]
fn at_80x24_every_matrix_up_to_6x6_is_whole_and_every_operand_on_screen() {
    every_cell_of_every_step(80, 24, 6);
}

#[test]
fn at_120x40_every_matrix_up_to_12x12_is_whole_and_every_operand_on_screen() {
    every_cell_of_every_step(120, 40, 12);
}

#[test]
fn room_a_long_caption_cannot_use_goes_to_a_neighbours_labels() {
    // At 80×24 the online softmax's m panel took the row's spare columns for a caption too long
    // to show ("▸ m" beside blank columns) while rescale, beside it, cut "sleeps" to "slee…".
    let index = BUILTIN.iter().position(|b| b.name == "cat-sleeps").unwrap();
    let mut app = App::new(App::builtin_entries(), Some(index));
    let tutor = app.tutor().unwrap();
    let step = tutor
        .steps
        .iter()
        .position(|step| step.key() == "online_softmax");
    update(&mut app, Action::GoToStep(step.unwrap() + 1));
    let lines = screen(&app, 80, 24);
    let rows: Vec<&String> = lines
        .iter()
        .filter(|line| line.starts_with("sleeps"))
        .collect();
    assert!(!rows.is_empty(), "{lines:#?}");
    for row in rows {
        assert!(!row.contains("slee…"), "{row}");
        assert_eq!(
            row.matches("sleeps").count(),
            4,
            "every panel's label whole: {row}"
        );
    }
}

/// Checks the narration, and that no matrix is drawn over it, on the screen `app` shows at
/// each size.
fn narration_kept(app: &App, sizes: &[(u16, u16)]) {
    let tutor = app.tutor().expect("a lesson is open");
    for &(width, height) in sizes {
        let layout = tutor_layout(tutor, Rect::new(0, 0, width, height));
        narration_shown(
            &screen(app, width, height),
            tutor,
            &layout,
            (width, height),
            &place(tutor, (width, height)),
        );
    }
}

/// The sizes a lesson is read at: a classroom projector's 80×24, and two larger terminals.
const SIZES: [(u16, u16); 3] = [(80, 24), (100, 30), (120, 40)];

/// The tutor on layer 1 of the shipped induction model (`head` is `all` or a head's number),
/// imported on an induction head's sentence of `tokens` tokens: a run of symbols and the start
/// of its repeat ("A B C D A B C").
fn imported_induction(tokens: usize, head: &str) -> App {
    let shipped = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/induction");
    let half = tokens.div_ceil(2);
    let text: Vec<String> = (0..tokens)
        .map(|token| attn_engine::train::symbol(token % half))
        .collect();
    let text = text.join(" ");
    let dir = tempfile::TempDir::new().unwrap();
    let output = crate::common::attn_tutor(&dir)
        .args(["import", shipped.to_str().unwrap(), "--text", &text])
        .args(["--layer", "1", "--head", head, "-o", "out.toml"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let lesson = std::fs::read_to_string(dir.path().join("out.toml")).unwrap();
    crate::common::lesson_app(&format!("{text} head {head}"), &lesson)
}

#[test]
fn a_lesson_imported_from_the_shipped_model_keeps_its_narration_on_every_step() {
    // Stacked whole, a 7-token head's scores and scaled scores left the narration no row at
    // 80×24 (its working cut to a line); at 120×40 a 9-token head's weights, V and output left
    // it only its title. Matrices that leave too little room page instead.
    for tokens in 3..=12 {
        for head in ["all", "0"] {
            let mut app = imported_induction(tokens, head);
            let steps = app.tutor().expect("the lesson opens").steps.len();
            for number in 1..=steps {
                update(&mut app, Action::GoToStep(number));
                narration_kept(&app, &SIZES);
            }
        }
    }
}

#[test]
fn a_working_beside_the_matrices_never_gives_their_rows_to_the_narration() {
    // At 100×32 a 7-token head's Q, K and scores stacked whole leave two rows, the working
    // beside the scores: it gave up rows for the narration's third, rows the scores still had,
    // and the narration was drawn over their last row.
    let mut app = imported_induction(7, "all");
    update(&mut app, Action::GoToStep(3));
    assert_eq!(app.tutor().unwrap().step().key(), "scores");
    narration_kept(&app, &[(100, 32)]);
}

#[test]
fn every_matrix_of_every_built_in_step_keeps_the_narration() {
    // The online softmax's second view, acc and the four matrices it is made from, stacked
    // whole at 80×24 with the tile's note, left the narration no row with the cursor on the
    // scores (positions-cat-sat-mat, generation), and only its title on V (two-heads).
    for index in 0..BUILTIN.len() {
        let mut app = App::new(App::builtin_entries(), Some(index));
        let steps = app.tutor().expect("the lesson opens").steps.len();
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            // `]` visits every matrix of the step's views in turn, back to the first.
            let first = app.tutor().expect("still in the lesson").focus;
            for _ in 0..12 {
                narration_kept(&app, &SIZES);
                update(&mut app, Action::NextMatrix);
                if app.tutor().expect("still in the lesson").focus == first {
                    break;
                }
            }
        }
    }
}
