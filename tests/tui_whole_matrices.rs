//! Every built-in lesson's every step shows its matrices whole (up to 6 × 6 at 80×24, up to
//! 12 × 12 at 120×40) and keeps every highlighted operand of such a matrix on screen, for
//! every cell the step computes; panels never overlap each other or the working, and stay
//! where they are while the cursor moves.

use attn_tutor::app::{Action, App, Tutor, update};
use attn_tutor::lesson::BUILTIN;
use attn_tutor::ui::layout::{TutorLayout, tutor_layout};
use attn_tutor::ui::{Theme, view};
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

fn overlap(a: Rect, b: Rect) -> bool {
    a.intersects(b) && a.area() > 0 && b.area() > 0
}

/// Checks one drawn step; `limit` is the largest side that must show whole.
fn check(app: &App, tutor: &Tutor, layout: &TutorLayout, size: (u16, u16), limit: usize) {
    let where_ = format!(
        "{} step {} ({}) at {}×{}, selected {:?}",
        tutor.name,
        tutor.step_index + 1,
        tutor.step().key(),
        size.0,
        size.1,
        tutor.selected_cell()
    );
    let lines = screen(app, size.0, size.1);
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

fn every_cell_of_every_step(width: u16, height: u16, limit: usize) {
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let mut app = App::new(App::builtin_entries(), Some(index));
        let steps = app.tutor.as_ref().expect("the lesson opens").steps.len();
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            let tutor = app.tutor.as_ref().expect("still in the lesson");
            let focus = tutor.focus;
            let (rows, cols) = tutor
                .attention
                .matrix(focus)
                .map_or((0, 0), |values| (values.nrows(), values.ncols()));
            assert!(rows > 0, "{} step {number} has no matrix", builtin.name);
            let mut arrangement: Option<Vec<(String, Rect)>> = None;
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
                    let tutor = app.tutor.as_ref().expect("still in the lesson");
                    let layout = tutor_layout(tutor, Rect::new(0, 0, width, height));
                    check(&app, tutor, &layout, (width, height), limit);
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
