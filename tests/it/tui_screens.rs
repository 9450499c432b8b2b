//! Snapshot tests of what the tutor draws: every step of every built-in lesson at 80×24 and
//! 120×40 (with a mask of the cursor, operand and changed-cell highlighting at 80×24), the picker,
//! help, the edit prompt and its errors, a broken lesson, the too-small screen, the classroom's
//! status line, and a check that the color theme paints the weights as a heatmap.

use crate::common;

use common::buffer_text as text;

use attn_tutor::app::{Action, App, Direction, PickerEntry, update};
use attn_tutor::attention::MatrixName;
use attn_tutor::lesson::{BUILTIN, load_text};
use attn_tutor::term::Painter;
use attn_tutor::term::channel::Outbox;
use attn_tutor::ui::layout::tutor_layout;
use attn_tutor::ui::{Theme, view};
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::{Terminal, TerminalOptions, Viewport};

/// Draws the app once on a fresh terminal of this size.
fn draw(app: &App, theme: &Theme, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|frame| view(frame, app, theme))
        .expect("drawing never fails on a test terminal");
    terminal.backend().buffer().clone()
}

/// Every cell of the buffer, row by row.
fn rows(buffer: &Buffer) -> impl Iterator<Item = &[Cell]> {
    buffer.content.chunks(usize::from(buffer.area.width))
}

/// One char per cell: `#` reversed (the cursor), `_` underlined (operands), `*` italic (changed
/// numbers), `.` anything else.
fn style_mask(buffer: &Buffer) -> String {
    mask(buffer, |cell| {
        let modifier = cell.modifier;
        if modifier.contains(Modifier::REVERSED) {
            '#'
        } else if modifier.contains(Modifier::UNDERLINED) {
            '_'
        } else if modifier.contains(Modifier::ITALIC) {
            '*'
        } else {
            '.'
        }
    })
}

/// One char per cell for a color theme: `@` a 24-bit background (the heatmap and highlights),
/// `+` 24-bit text on the default background, `#` reversed, `.` anything else.
fn color_mask(buffer: &Buffer) -> String {
    mask(buffer, |cell| match (cell.bg, cell.fg) {
        (Color::Rgb(..), _) => '@',
        (_, Color::Rgb(..)) => '+',
        _ if cell.modifier.contains(Modifier::REVERSED) => '#',
        _ => '.',
    })
}

fn mask(buffer: &Buffer, mark: impl Fn(&Cell) -> char) -> String {
    rows(buffer)
        .map(|cells| cells.iter().map(&mark).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text, a separator, then the style mask.
fn text_and_mask(buffer: &Buffer) -> String {
    let separator = "-".repeat(usize::from(buffer.area.width));
    format!("{}\n{separator}\n{}", text(buffer), style_mask(buffer))
}

fn open(lesson: usize) -> App {
    App::new(App::builtin_entries(), Some(lesson))
}

fn lesson_index(name: &str) -> usize {
    BUILTIN
        .iter()
        .position(|builtin| builtin.name == name)
        .expect("a built-in lesson of this name")
}

/// Snapshots every step of every built-in lesson at one size.
fn every_step_at(width: u16, height: u16, with_mask: bool) {
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let mut app = open(index);
        let steps = app.tutor().expect("the lesson opens").steps.len();
        assert!(
            (5..=attn_tutor::attention::Step::ALL.len()).contains(&steps),
            "{} has {steps} steps",
            builtin.name
        );
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            let tutor = app.tutor().expect("still in the lesson");
            assert_eq!(tutor.step_index + 1, number);
            let buffer = draw(&app, &Theme::monochrome(), width, height);
            let name = format!("{}_{width}x{height}_{}", builtin.name, tutor.step().key());
            let shown = if with_mask {
                text_and_mask(&buffer)
            } else {
                text(&buffer)
            };
            insta::assert_snapshot!(name, shown);
        }
    }
}

#[test]
fn a_formula_too_wide_for_80_columns_says_so_with_an_ellipsis_and_keeps_the_lit_clause() {
    let formula = |buffer: &Buffer| text(buffer).lines().nth(1).unwrap_or("").to_string();
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let mut app = open(index);
        let steps = app.tutor().expect("the lesson opens").steps.len();
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            let narrow = formula(&draw(&app, &Theme::monochrome(), 80, 24));
            let whole = formula(&draw(&app, &Theme::monochrome(), 400, 24));
            // Whole, or the definitions after "where" left off whole, or cut with a "…".
            let definitions_left_off = whole
                .strip_prefix(narrow.as_str())
                .is_some_and(|rest| rest.starts_with("    where "));
            assert!(
                narrow == whole || definitions_left_off || narrow.contains('…'),
                "{} step {number}: the formula is cut unsaid at 80 columns:\n{narrow}\n{whole}",
                builtin.name
            );
        }
    }
    // Several heads: on All heads the clause it computes stays whole, the others give way.
    let mut app = open(lesson_index("gqa"));
    let all_heads = app
        .tutor()
        .unwrap()
        .steps
        .iter()
        .position(|step| *step == attn_tutor::attention::Step::AllHeads);
    update(
        &mut app,
        Action::GoToStep(all_heads.expect("gqa has All heads") + 1),
    );
    let narrow = formula(&draw(&app, &Theme::monochrome(), 80, 24));
    assert!(
        narrow.contains("head⁽ʰ⁾ = softmax(Q⁽ʰ⁾K⁽ᵍ⁾ᵀ / √d_k)V⁽ᵍ⁾"),
        "{narrow}"
    );
}

#[test]
fn every_step_of_every_builtin_lesson_at_80x24_with_its_highlighting() {
    every_step_at(80, 24, true);
}

#[test]
fn every_step_of_every_builtin_lesson_at_120x40() {
    every_step_at(120, 40, false);
}

/// Without colour the formula's part for this step is bold: reverse video is the cursor's and
/// underline the operands', and a learner must tell the formula from either.
#[test]
fn without_colour_the_formulas_lit_part_is_bold_and_unlike_the_cursor_and_the_operands() {
    let mut lit_screens = 0;
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let mut app = open(index);
        let steps = app.tutor().expect("the lesson opens").steps.len();
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            let buffer = draw(&app, &Theme::monochrome(), 80, 24);
            let formula = rows(&buffer).nth(1).expect("a formula line");
            for cell in formula {
                assert!(
                    !cell
                        .modifier
                        .intersects(Modifier::REVERSED | Modifier::UNDERLINED),
                    "{} step {number}: the formula's {:?} is {:?}, a mark of the cursor or the \
                     operands",
                    builtin.name,
                    cell.symbol(),
                    cell.modifier
                );
            }
            if formula
                .iter()
                .any(|cell| cell.modifier.contains(Modifier::BOLD) && cell.symbol() != " ")
            {
                lit_screens += 1;
            }
        }
    }
    assert!(
        lit_screens > 50,
        "{lit_screens} screens light their formula"
    );
    // On one screen: the cursor reversed, the operands underlined, the formula's part bold.
    let mut app = open(lesson_index("gqa"));
    common::go_to(&mut app, "scores");
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let marked = |row: &[Cell], mark: Modifier| {
        row.iter()
            .filter(|cell| cell.modifier.contains(mark))
            .map(Cell::symbol)
            .collect::<String>()
    };
    let formula = rows(&buffer).nth(1).expect("a formula line");
    assert_eq!(marked(formula, Modifier::BOLD), "scores⁽¹⁾ = Q⁽¹⁾·K⁽¹⁾ᵀ");
    let below: Vec<&[Cell]> = rows(&buffer).skip(2).collect();
    assert!(
        below
            .iter()
            .any(|row| !marked(row, Modifier::REVERSED).is_empty())
    );
    assert!(
        below
            .iter()
            .any(|row| !marked(row, Modifier::UNDERLINED).is_empty())
    );
}

#[test]
fn the_softmax_step_in_color_paints_the_weights_as_a_heatmap() {
    let mut app = open(lesson_index("cat-sleeps"));
    let tutor = app.tutor().expect("the lesson opens");
    let softmax = tutor
        .steps
        .iter()
        .position(|step| step.key() == "softmax")
        .expect("a softmax step")
        + 1;
    update(&mut app, Action::GoToStep(softmax));
    let theme = Theme::detect(false, Some("truecolor"), None);
    let buffer = draw(&app, &theme, 80, 24);
    let separator = "-".repeat(80);
    insta::assert_snapshot!(
        "cat-sleeps_80x24_softmax_truecolor",
        format!("{}\n{separator}\n{}", text(&buffer), color_mask(&buffer))
    );

    let tutor = app.tutor().expect("still in the lesson");
    let layout = tutor_layout(tutor, Rect::new(0, 0, 80, 24));
    let weights = layout
        .panels
        .iter()
        .find(|panel| panel.matrix == MatrixName::Weights)
        .expect("the softmax step shows the weights");
    // Below the caption and the column headers, right of the token labels.
    let body = Rect::new(
        weights.area.x + weights.label_width + 1,
        weights.area.y + 2,
        weights.area.width.saturating_sub(weights.label_width + 1),
        weights.area.height.saturating_sub(2),
    );
    let digits: Vec<&Cell> = body
        .positions()
        .map(|position| &buffer[position])
        .filter(|cell| cell.symbol().chars().all(|ch| ch.is_ascii_digit()))
        .filter(|cell| !cell.symbol().is_empty())
        .collect();
    assert!(
        !digits.is_empty(),
        "no digits in the weights panel {body:?}"
    );
    // The cursor is reverse video in every theme; every other weight sits on its heat color.
    let heat: Vec<&Cell> = digits
        .into_iter()
        .filter(|cell| !cell.modifier.contains(Modifier::REVERSED))
        .collect();
    assert!(!heat.is_empty(), "only the cursor in the weights panel");
    for cell in heat {
        assert!(
            matches!(cell.bg, Color::Rgb(..)),
            "a weight digit {:?} has no heatmap background: {:?}",
            cell.symbol(),
            cell.bg
        );
    }
}

#[test]
fn the_picker_lists_the_builtin_lessons() {
    let app = App::new(App::builtin_entries(), None);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("picker_80x24", text_and_mask(&buffer));
}

#[test]
fn the_picker_keeps_each_title_readable_and_apart_from_its_shape_in_one_column() {
    let app = App::new(App::builtin_entries(), None);
    for width in [80, 100, 120] {
        let screen = text(&draw(&app, &Theme::monochrome(), width, 40));
        let mut shape_columns = std::collections::BTreeSet::new();
        for entry in &app.picker {
            let lesson = &entry.lesson.as_ref().expect("a built-in loads").lesson;
            let row = screen
                .lines()
                .find(|line| {
                    line.chars()
                        .skip(2)
                        .collect::<String>()
                        .split_whitespace()
                        .next()
                        == Some(entry.name.as_str())
                })
                .unwrap_or_else(|| panic!("no row for {} at {width}:\n{screen}", entry.name));
            let rest: String = row.chars().skip(24).collect();
            let (title, shape) = rest
                .split_once("  ")
                .unwrap_or_else(|| panic!("no two spaces between title and shape: {row:?}"));
            let shown = title.trim_end_matches('…');
            assert!(
                lesson.title.starts_with(shown),
                "{row:?}: {shown:?} is not the title's start"
            );
            let wanted = lesson.title.chars().count().min(29);
            assert!(
                shown.chars().count() >= wanted,
                "at {width} columns the title is cut to {shown:?}: {row:?}"
            );
            let first_clause = lesson.shape_text();
            let first_clause = first_clause.split(", ").next().unwrap_or_default();
            assert!(
                shape.trim_start().starts_with(first_clause),
                "at {width} columns the shape lost its first clause: {row:?}"
            );
            shape_columns.insert(24 + rest.chars().count() - shape.trim_start().chars().count());
        }
        assert_eq!(
            shape_columns.len(),
            1,
            "at {width} columns the shapes start in different columns {shape_columns:?}:\n{screen}"
        );
    }
}

#[test]
fn help_over_the_picker() {
    let mut app = App::new(App::builtin_entries(), None);
    update(&mut app, Action::ToggleHelp);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("picker_help_80x24", text_and_mask(&buffer));
}

#[test]
fn help_over_a_lesson() {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(3));
    update(&mut app, Action::ToggleHelp);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("cat-sleeps_help_80x24", text_and_mask(&buffer));
}

/// The bottom line of a drawn screen.
fn last_line(buffer: &Buffer) -> String {
    text(buffer).lines().last().unwrap_or("").to_string()
}

#[test]
fn in_a_classroom_the_status_line_says_following_free_or_locked() {
    use attn_tutor::app::{Classroom, Follow};
    let mut lines = Vec::new();
    for follow in [Follow::Following, Follow::Free, Follow::Locked] {
        let mut app = open(lesson_index("cat-sleeps"));
        app.classroom = Some(Classroom::Student {
            follow,
            latest: None,
        });
        lines.push(last_line(&draw(&app, &Theme::monochrome(), 80, 24)));
    }
    insta::assert_snapshot!("classroom_student_status_80x24", lines.join("\n"));
}

#[test]
fn the_presenters_status_line_counts_the_students_who_follow() {
    use attn_tutor::app::{Audience, Classroom};
    let mut app = open(lesson_index("cat-sleeps"));
    app.classroom = Some(Classroom::Presenter {
        audience: Audience {
            connected: 12,
            following: 9,
            unsaved: 0,
            answered: 0,
        },
        join: "ssh -p 2222 NAME@127.0.0.1".to_string(),
        host_key: None,
    });
    let on_lesson = last_line(&draw(&app, &Theme::monochrome(), 80, 24));
    update(&mut app, Action::ToggleHelp);
    let help = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("classroom_presenter_status_80x24", on_lesson);
    insta::assert_snapshot!("classroom_presenter_help_80x24", text(&help));
}

#[test]
fn the_presenters_help_names_the_browser_page_on_a_line_of_its_own() {
    use attn_tutor::app::{Audience, Classroom};
    let mut app = open(lesson_index("cat-sleeps"));
    app.classroom = Some(Classroom::Presenter {
        audience: Audience::default(),
        join: "ssh -p 2222 NAME@192.168.1.20\nhttp://192.168.1.20:8080/".to_string(),
        host_key: Some(FINGERPRINT.to_string()),
    });
    update(&mut app, Action::ToggleHelp);
    let help = text(&draw(&app, &Theme::monochrome(), 80, 24));
    let row = |words: &str| {
        help.lines()
            .find(|line| line.contains(words))
            .unwrap_or_else(|| panic!("no {words:?} in the help:\n{help}"))
            .to_string()
    };
    assert!(
        row("Students join with:").contains("ssh -p 2222 NAME@192.168.1.20"),
        "{help}"
    );
    assert!(
        row("or open:").contains("http://192.168.1.20:8080/"),
        "{help}"
    );
    // The banner that printed the host key is under the presenter's tutor: the help shows it
    // whole, for students whose ssh asks them to check it.
    assert!(row("ssh host key:").contains(FINGERPRINT), "{help}");
}

/// A host key's fingerprint as ssh prints it.
const FINGERPRINT: &str = "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s";

#[test]
fn where_nothing_may_be_saved_the_help_says_what_w_does_instead() {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::ToggleHelp);
    let own = text(&draw(&app, &Theme::monochrome(), 80, 40));
    assert!(
        own.contains("save the edited lesson as a new file"),
        "{own}"
    );
    app.can_save = false;
    let in_class = text(&draw(&app, &Theme::monochrome(), 80, 40));
    assert!(
        !in_class.contains("save the edited lesson as a new file"),
        "{in_class}"
    );
    assert!(
        in_class.contains("show the edited lesson as a file to copy"),
        "{in_class}"
    );
}

#[test]
fn only_a_classroom_student_is_told_of_going_free() {
    use attn_tutor::app::{Audience, Classroom, Follow};
    let help_of = |classroom: Option<Classroom>| {
        let mut app = open(lesson_index("cat-sleeps"));
        app.classroom = classroom;
        update(&mut app, Action::ToggleHelp);
        text(&draw(&app, &Theme::monochrome(), 80, 40))
    };
    let student = help_of(Some(Classroom::Student {
        follow: Follow::Free,
        latest: None,
    }));
    assert!(student.contains("go free, or follow again"), "{student}");
    let presenter = help_of(Some(Classroom::Presenter {
        audience: Audience::default(),
        join: "ssh -p 2222 NAME@127.0.0.1".to_string(),
        host_key: None,
    }));
    assert!(!presenter.contains("go free"), "{presenter}");
    let alone = help_of(None);
    assert!(!alone.contains("go free"), "{alone}");
}

/// cat-sleeps on step `number` with practice on.
fn practising(number: usize) -> App {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(number));
    update(&mut app, Action::TogglePractice);
    app
}

/// Types an answer for the selected hidden cell and presses Enter.
fn answer(app: &mut App, typed: &str) {
    let mut chars = typed.chars();
    update(app, Action::StartAnswer(chars.next().unwrap()));
    for ch in chars {
        update(app, Action::Type(ch));
    }
    update(app, Action::Submit);
}

#[test]
fn practice_hides_the_scores_until_they_are_predicted() {
    let app = practising(3);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("practice_before_an_answer_80x24", text_and_mask(&buffer));
}

#[test]
fn a_right_answer_reveals_the_cell_and_the_cursor_moves_on() {
    let mut app = practising(3);
    // scores[sleeps, The] = q_sleeps · k_The = 0.8×0.9 + 1.1×1.2 + 1.4×1.2 + 1.7×1.3 = 5.93.
    answer(&mut app, "5.93");
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!(
        "practice_after_a_right_answer_80x24",
        text_and_mask(&buffer)
    );
}

#[test]
fn a_hint_shows_the_first_term_then_every_term() {
    let mut app = practising(3);
    update(&mut app, Action::Hint);
    update(&mut app, Action::Hint);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("practice_with_two_hints_80x24", text(&buffer));
}

#[test]
fn a_wrong_answer_that_forgot_the_scaling_is_explained() {
    let mut app = practising(4);
    // The raw score 5.93 typed for scaled[sleeps, The] = 5.93 / √4 = 2.965.
    answer(&mut app, "5.93");
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("practice_slip_explained_80x24", text(&buffer));
}

#[test]
fn editing_a_cell_shows_the_prompt_with_what_is_typed() {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(1));
    update(&mut app, Action::Edit);
    for ch in "0.7".chars() {
        update(&mut app, Action::Type(ch));
    }
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("cat-sleeps_edit_prompt_80x24", text_and_mask(&buffer));
}

#[test]
fn an_invalid_number_keeps_the_prompt_open_and_shows_an_error() {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(1));
    update(&mut app, Action::Edit);
    for ch in "abc".chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    assert!(
        matches!(app.overlay, attn_tutor::app::Overlay::Prompt(_)),
        "the prompt stays open: {:?}",
        app.overlay
    );
    assert!(
        app.status.as_ref().is_some_and(|status| status.is_error),
        "an error on the status line: {:?}",
        app.status
    );
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("cat-sleeps_edit_error_80x24", text_and_mask(&buffer));
}

/// Enter on an empty prompt says once that the old value is kept and Esc leaves.
#[test]
fn an_empty_edit_says_nothing_was_typed_and_the_old_value_is_kept_once() {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(1));
    update(&mut app, Action::Edit);
    update(&mut app, Action::Submit);
    let said = app
        .status
        .as_ref()
        .map(|status| status.text.clone())
        .unwrap_or_default();
    assert!(said.contains("nothing typed; type a number"), "{said}");
    assert_eq!(said.matches("old value").count(), 1, "{said}");
    assert_eq!(said.matches("Esc").count(), 1, "{said}");
}

#[test]
fn an_edit_marks_the_numbers_it_changed() {
    // On the Projection step the edited embedding and the queries it feeds share the screen.
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(2));
    update(
        &mut app,
        Action::Select {
            matrix: MatrixName::Embeddings,
            row: 2,
            col: Some(0),
        },
    );
    update(&mut app, Action::Edit);
    for ch in "0.7".chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    let tutor = app.tutor().expect("still in the lesson");
    assert!(
        tutor
            .changed
            .iter()
            .any(|cell| cell.matrix == MatrixName::Q),
        "the queries changed: {:?}",
        tutor.changed
    );
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!(
        "cat-sleeps_80x24_projection_after_an_edit",
        text_and_mask(&buffer)
    );
}

#[test]
fn a_terminal_too_small_says_how_big_it_must_be() {
    let app = open(lesson_index("cat-sleeps"));
    let buffer = draw(&app, &Theme::monochrome(), 60, 20);
    insta::assert_snapshot!("too_small_60x20", text(&buffer));
}

#[test]
fn a_broken_lesson_in_the_picker_shows_its_first_problem() {
    let mut entries = App::builtin_entries();
    entries.push(PickerEntry {
        name: "broken".to_string(),
        lesson: load_text("broken", None, "format = 1\ntitle = 3\n".to_string()),
    });
    let broken = entries.len() - 1;
    assert!(entries[broken].lesson.is_err(), "the lesson does not load");
    let mut app = App::new(entries, None);
    app.picked = broken;
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("picker_broken_lesson_80x24", text_and_mask(&buffer));
}

/// The screen's text at a size, for the checks that look for a phrase.
fn screen_text(app: &App, width: u16, height: u16) -> String {
    text(&draw(app, &Theme::monochrome(), width, height))
}

#[test]
fn the_projection_step_shows_k_and_v_or_says_they_are_there() {
    for lesson in ["cat-sleeps", "numpy-walkthrough", "cat-sat-mat"] {
        let mut app = open(lesson_index(lesson));
        update(&mut app, Action::GoToStep(2));
        for (width, height) in [(80, 24), (120, 40), (200, 60)] {
            let shown = screen_text(&app, width, height);
            for (symbol, formula) in [("K", "K = X·W_k"), ("V", "V = X·W_v")] {
                assert!(
                    shown.contains(formula),
                    "{lesson} Projection at {width}×{height} never mentions {symbol}:\n{shown}"
                );
            }
        }
    }
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(2));
    insta::assert_snapshot!(
        "cat-sleeps_80x24_projection_names_k_and_v",
        screen_text(&app, 80, 24)
    );
}

#[test]
fn a_long_lesson_list_keeps_its_page_full_and_says_which_lesson_of_how_many() {
    let mut entries = App::builtin_entries();
    for copy in 0..3 {
        let mut entry = App::builtin_entries().remove(copy);
        entry.name = format!("{}-copy", entry.name);
        entries.push(entry);
    }
    let total = entries.len();
    assert!(
        total > 11,
        "fewer lessons than an 80×24 page holds: {total}"
    );
    let mut app = App::new(entries, None);
    app.picked = total - 1;
    let shown = screen_text(&app, 80, 24);
    let position = format!("{total} of {total}");
    assert!(shown.contains(&position), "no \"{position}\":\n{shown}");
    let (list, first) = attn_tutor::ui::picker::list_area(&app, Rect::new(0, 0, 80, 24));
    assert_eq!(
        first + usize::from(list.height),
        total,
        "the last page is not full: {first} + {}",
        list.height
    );
    insta::assert_snapshot!("picker_a_long_list_the_last_picked_80x24", shown);
}

#[test]
fn in_16_colors_nearby_weights_get_different_heatmap_shades() {
    let theme = Theme::detect(false, None, Some("xterm"));
    let shades: Vec<Option<Color>> = [0.05, 0.15, 0.25, 0.4, 0.55, 0.7, 0.9]
        .iter()
        .map(|weight| theme.heat(*weight).bg)
        .collect();
    for (index, shade) in shades.iter().enumerate() {
        assert!(shade.is_some(), "no shade for weight {index}");
        assert!(
            !shades[..index].contains(shade),
            "weights share a shade in 16 colors: {shades:?}"
        );
    }
    // Each weight of cat-sat-mat's Softmax as the letter of its shade.
    let mut app = open(lesson_index("cat-sat-mat"));
    update(&mut app, Action::GoToStep(5));
    let buffer = draw(&app, &theme, 80, 24);
    let shaded = mask(&buffer, |cell| match cell.bg {
        Color::Reset => '.',
        Color::Black => 'k',
        Color::Magenta => 'm',
        Color::Blue => 'b',
        Color::Cyan => 'c',
        Color::Green => 'g',
        Color::LightGreen => 'G',
        Color::Yellow => 'y',
        Color::LightYellow => 'Y',
        Color::White => 'w',
        Color::Gray => 'a',
        Color::LightBlue => 'B',
        Color::LightCyan => 'C',
        Color::LightRed => 'R',
        _ => '?',
    });
    insta::assert_snapshot!(
        "cat-sat-mat_80x24_softmax_16_colors",
        format!("{}\n{}\n{shaded}", text(&buffer), "-".repeat(80))
    );
}

/// The last `count` lines of the screen.
fn last_lines(buffer: &Buffer, count: usize) -> Vec<String> {
    let shown = text(buffer);
    let lines: Vec<&str> = shown.lines().collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|line| line.to_string())
        .collect()
}

/// Every word of `message` appears whole among the words of `lines`.
fn assert_words_whole(message: &str, lines: &[String]) {
    let shown: Vec<&str> = lines
        .iter()
        .flat_map(|line| line.split_whitespace())
        .collect();
    for word in message.split_whitespace() {
        assert!(
            shown.contains(&word),
            "{word:?} of {message:?} is not shown whole in:\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn the_presenters_join_line_wraps_whole_words_and_keeps_the_command_on_one_line() {
    use attn_tutor::app::{Audience, Classroom, Status};
    let join = "ssh -p 24568 NAME@127.0.0.1";
    let mut app = App::new(App::builtin_entries(), None);
    app.classroom = Some(Classroom::Presenter {
        audience: Audience::default(),
        join: join.to_string(),
        host_key: None,
    });
    let message = format!("Presenting: students join with  {join}");
    app.status = Some(Status::info(message.clone()));
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let lines = last_lines(&buffer, 2);
    assert_words_whole(&message, &lines);
    assert!(
        lines.iter().any(|line| line.contains(join)),
        "the command is split:\n{}",
        lines.join("\n")
    );
    assert!(
        lines[1].starts_with(" 0 students · 0 following"),
        "the badge starts the bottom line:\n{}",
        lines.join("\n")
    );
    insta::assert_snapshot!("classroom_presenter_join_line_80x24", lines.join("\n"));
}

#[test]
fn a_question_too_long_for_one_line_wraps_and_keeps_its_choices() {
    let mut app = open(lesson_index("cat-sleeps"));
    update(&mut app, Action::GoToStep(5));
    update(
        &mut app,
        Action::Select {
            matrix: MatrixName::Weights,
            row: 2,
            col: Some(2),
        },
    );
    update(&mut app, Action::Edit);
    assert!(
        matches!(app.overlay, attn_tutor::app::Overlay::Question(_)),
        "a question: {:?}",
        app.overlay
    );
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let lines = last_lines(&buffer, 2);
    assert_words_whole(
        "weights[sleeps, sleeps] is computed, not typed in. Enter: go to · Esc stay",
        &lines,
    );
    insta::assert_snapshot!("cat-sleeps_jump_question_80x24", lines.join("\n"));
}

#[test]
fn a_long_message_wraps_whole_words_and_an_overlong_one_keeps_its_end() {
    use attn_tutor::app::Status;
    let mut app = open(lesson_index("cat-sleeps"));
    let message = "Not saved: could not write /home/learner/lessons/attention/my-edited-cat-sleeps-lesson.toml: the folder is read-only. Your edits are still here";
    app.status = Some(Status::error(message));
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let lines = last_lines(&buffer, 3);
    assert_words_whole(message, &lines);

    let overlong = format!(
        "Not saved: {}. Your edits are still here",
        "the reason is long and goes on ".repeat(12).trim_end()
    );
    app.status = Some(Status::error(overlong));
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let lines = last_lines(&buffer, 3);
    assert!(
        lines
            .iter()
            .any(|line| line.trim_start().starts_with("Not saved:")),
        "the start is lost:\n{}",
        lines.join("\n")
    );
    assert!(
        lines[2].trim_end().ends_with("Your edits are still here"),
        "the end is lost:\n{}",
        lines.join("\n")
    );
    assert!(
        lines.iter().any(|line| line.contains('…')),
        "no sign of what was left out"
    );
    for line in &lines {
        for word in line.split_whitespace() {
            assert!(
                "Not saved: the reason is long and goes on. Your edits are still here …"
                    .split_whitespace()
                    .any(|known| known.trim_end_matches('.') == word.trim_end_matches('.')),
                "a word cut: {word:?} in:\n{}",
                lines.join("\n")
            );
        }
    }
    insta::assert_snapshot!("cat-sleeps_overlong_message_80x24", lines.join("\n"));
}

/// A causal lesson of twenty tokens t1 … t20 with random embeddings and weights.
fn twenty_tokens() -> App {
    let tokens: Vec<String> = (1..=20).map(|n| format!("\"t{n}\"")).collect();
    let source = format!(
        "format = 1\ntitle = \"Twenty tokens\"\ntokens = [{}]\n\
         embeddings = {{ random = \"normal\", seed = 1, shape = [20, 4] }}\n\
         w_q = {{ random = \"normal\", seed = 2, shape = [4, 4] }}\n\
         w_k = {{ random = \"normal\", seed = 3, shape = [4, 4] }}\n\
         w_v = {{ random = \"normal\", seed = 4, shape = [4, 4] }}\n\
         mask = \"causal\"\ndecimals = 3\n",
        tokens.join(", ")
    );
    let lesson = load_text("twenty", None, source);
    assert!(lesson.is_ok(), "the lesson loads: {:?}", lesson.err());
    let mut app = App::new(
        vec![PickerEntry {
            name: "twenty".to_string(),
            lesson,
        }],
        Some(0),
    );
    let softmax = app
        .tutor()
        .expect("the lesson opens")
        .steps
        .iter()
        .position(|step| step.key() == "softmax")
        .expect("a softmax step");
    update(&mut app, Action::GoToStep(softmax + 1));
    app
}

#[test]
fn a_long_softmax_breakdown_says_which_keys_it_shows_and_keeps_the_selected_one() {
    let mut app = twenty_tokens();
    // The row of t13, key t9: beyond the first page of keys.
    update(
        &mut app,
        Action::Select {
            matrix: MatrixName::Weights,
            row: 12,
            col: Some(8),
        },
    );
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let shown = text(&buffer);
    let title = shown
        .lines()
        .find(|line| line.contains("Softmax of row t13"))
        .unwrap_or_else(|| panic!("no softmax working:\n{shown}"));
    assert!(
        title.contains("keys ") && title.contains(" of 20"),
        "the title does not say which keys are shown: {title:?}"
    );
    let table: Vec<&str> = shown
        .lines()
        .skip_while(|line| !line.contains("Softmax of row t13"))
        .skip(1)
        .take_while(|line| !line.starts_with("──"))
        .collect();
    assert!(
        table
            .iter()
            .any(|line| line.trim_start().starts_with("t9 ")),
        "the selected key t9 is not in the table:\n{}",
        table.join("\n")
    );
    assert!(
        table.iter().any(|line| line.contains("Σ all 20")),
        "the sum does not say it is over all 20 keys:\n{}",
        table.join("\n")
    );
    insta::assert_snapshot!(
        "twenty_tokens_softmax_row_t13_80x24",
        text_and_mask(&buffer)
    );
}

/// The screens a lesson of several heads adds, and a step of one head shown for head 2, at
/// 80×24 (with the highlighting) and 120×40: `LESSON_WxH_STEPKEY` as for the built-ins.
fn screens_of_heads_at(width: u16, height: u16, with_mask: bool) {
    for (name, lesson) in [
        ("typed-heads", common::TWO_HEADS),
        ("generated-gqa", common::GQA),
    ] {
        let mut app = common::lesson_app(name, lesson);
        let shown = |app: &App| {
            let buffer = draw(app, &Theme::monochrome(), width, height);
            if with_mask {
                text_and_mask(&buffer)
            } else {
                text(&buffer)
            }
        };
        for key in ["all_heads", "concat", "output_projection", "circuits"] {
            common::go_to(&mut app, key);
            insta::assert_snapshot!(format!("{name}_{width}x{height}_{key}"), shown(&app));
        }
        // The circuits' second view, W_OV, for head 2.
        update(&mut app, Action::NextHead);
        let tutor = app.tutor_mut().unwrap();
        tutor.focus_on(MatrixName::WOV);
        insta::assert_snapshot!(
            format!("{name}_{width}x{height}_circuits_w_ov_head2"),
            shown(&app)
        );
        for key in ["scores", "softmax"] {
            common::go_to(&mut app, key);
            insta::assert_snapshot!(format!("{name}_{width}x{height}_{key}_head2"), shown(&app));
        }
    }
}

#[test]
fn the_screens_of_several_heads_at_80x24_with_their_highlighting() {
    screens_of_heads_at(80, 24, true);
}

#[test]
fn the_screens_of_several_heads_at_120x40() {
    screens_of_heads_at(120, 40, false);
}

#[test]
fn all_heads_pages_eight_heads_at_80x24() {
    let mut app = common::lesson_app("eight-heads", &common::many_heads(8, 6));
    common::go_to(&mut app, "all_heads");
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!("eight-heads_80x24_all_heads", text(&buffer));
}

#[test]
fn all_heads_in_color_paints_every_map_as_a_heatmap() {
    let mut app = common::gqa_lesson();
    common::go_to(&mut app, "all_heads");
    let buffer = draw(&app, &Theme::detect(false, Some("truecolor"), None), 80, 24);
    insta::assert_snapshot!("generated-gqa_80x24_all_heads_color", color_mask(&buffer));
}

#[test]
fn cross_attention_shows_the_source_on_the_embedding_step() {
    for (width, height) in [(80, 24), (120, 40)] {
        let mut app = open(lesson_index("translation"));
        update(&mut app, Action::GoToStep(1));
        update(&mut app, Action::NextMatrix);
        let buffer = draw(&app, &Theme::monochrome(), width, height);
        let name = format!("translation_{width}x{height}_embedding_source");
        insta::assert_snapshot!(name, text_and_mask(&buffer));
    }
}

#[test]
fn cross_attention_adds_the_sinusoid_to_the_source_from_its_first_token() {
    let text = r#"
format = 2
title = "Cross with positions"
tokens = ["le", "chat"]
source_tokens = ["the", "black", "cat"]
positions = "sinusoidal"
embeddings = [[1, 0], [0, 1]]
source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]
w_q = [[1, 0], [0, 1]]
w_k = [[2, 0], [0, 1]]
w_v = [[1, 2], [3, 4]]
"#;
    for (width, height) in [(80, 24), (120, 40)] {
        let mut app = common::lesson_app("cross-positions", text);
        update(&mut app, Action::GoToStep(2));
        // The target's view, then the source's.
        for _ in 0..3 {
            update(&mut app, Action::NextMatrix);
        }
        let buffer = draw(&app, &Theme::monochrome(), width, height);
        let name = format!("cross-positions_{width}x{height}_positions_source");
        insta::assert_snapshot!(name, text_and_mask(&buffer));
    }
}

#[test]
fn the_online_softmax_step_in_its_middle_tile_and_on_its_acc_view() {
    let mut app = open(lesson_index("cat-sat-mat"));
    common::go_to(&mut app, "online_softmax");
    update(&mut app, Action::NextToken);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!(
        "cat-sat-mat_80x24_online_softmax_tile_2",
        text_and_mask(&buffer)
    );
    // `]` moves on to the panels of acc, the second view.
    while app.tutor().unwrap().focus != MatrixName::OnlineAcc {
        update(&mut app, Action::NextMatrix);
    }
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    insta::assert_snapshot!(
        "cat-sat-mat_80x24_online_softmax_acc",
        text_and_mask(&buffer)
    );
    insta::assert_snapshot!(
        "cat-sat-mat_120x40_online_softmax_acc",
        screen_text(&app, 120, 40)
    );
}

/// The working's lines on a screen, from its title to the next section's.
fn working_of(shown: &str) -> Vec<String> {
    shown
        .lines()
        .skip_while(|line| !line.starts_with("── How "))
        .skip(1)
        .take_while(|line| !line.starts_with("──"))
        .map(|line| line.trim().to_string())
        .collect()
}

// Issue 29, tried as a new user: on gqa's and generation's later tiles acc's working went
// beside the matrices, 32 columns wide, and every cell's arithmetic was cut ("… 22 more
// lines"): the rows' short labels outnumbered each cell's length of working.
#[test]
fn every_acc_working_of_every_tile_shows_its_arithmetic_to_the_result_at_80x24() {
    for name in ["gqa", "generation"] {
        let mut app = open(lesson_index(name));
        common::go_to(&mut app, "online_softmax");
        while app.tutor().unwrap().focus != MatrixName::OnlineAcc {
            update(&mut app, Action::NextMatrix);
        }
        let tiles = app.tutor().unwrap().attention.tile_count();
        for tile in 0..tiles {
            app.tutor_mut().unwrap().set_tile(tile);
            let (rows, cols) = {
                let tutor = app.tutor().unwrap();
                let acc = tutor.attention.matrix(MatrixName::OnlineAcc).unwrap();
                (acc.nrows(), acc.ncols())
            };
            let mut placed = None;
            for row in 0..rows {
                for col in 0..cols {
                    let cursor = attn_tutor::app::Cursor {
                        row,
                        col,
                        on_label: false,
                    };
                    let tutor = app.tutor_mut().unwrap();
                    tutor.set_cursor(MatrixName::OnlineAcc, cursor);
                    // The panels stay where they are while the cursor moves (a longer working
                    // may take rows from the narration below it).
                    let layout = tutor_layout(app.tutor().unwrap(), Rect::new(0, 0, 80, 24));
                    let areas: Vec<Rect> = layout.panels.iter().map(|panel| panel.area).collect();
                    let placed = placed.get_or_insert_with(|| (areas.clone(), layout.working.y));
                    assert_eq!(
                        (&areas, layout.working.y),
                        (&placed.0, placed.1),
                        "{name} tile {} [{row}, {col}]",
                        tile + 1
                    );
                    // The result as the whole working writes it: its last "= …" line.
                    let whole = working_of(&screen_text(&app, 120, 40));
                    let result = whole
                        .iter()
                        .rev()
                        .find(|line| line.starts_with("= "))
                        .expect("a result");
                    let shown = screen_text(&app, 80, 24);
                    let working = working_of(&shown);
                    let at = working.iter().position(|line| line == result);
                    let elided = working.iter().position(|line| line.contains("more line"));
                    assert!(
                        at.is_some_and(|at| elided.is_none_or(|elided| elided > at)),
                        "{name} tile {} [{row}, {col}]: the arithmetic is cut before {result}\n\
                         {shown}",
                        tile + 1
                    );
                }
            }
        }
        // The last tile, the cursor on the last row: the longest working.
        let buffer = draw(&app, &Theme::monochrome(), 80, 24);
        insta::assert_snapshot!(
            format!("{name}_80x24_online_softmax_acc_last_tile"),
            text_and_mask(&buffer)
        );
    }
}

#[test]
fn a_help_taller_than_the_terminal_scrolls_and_says_which_rows_it_shows() {
    // Two heads and generation: the head's and the token's rows too.
    let mut app = common::lesson_app(
        "decode-two-heads",
        include_str!("../fixtures/decode-two-heads.toml"),
    );
    update(&mut app, Action::ToggleHelp);
    let shown = screen_text(&app, 80, 24);
    assert!(
        shown.contains("? or Esc closes · ↓ ↑ rows 1–20 of 21"),
        "{shown}"
    );
    assert!(!shown.contains("Ctrl-c"), "{shown}");
    for _ in 0..40 {
        update(&mut app, Action::ScrollHelp(1));
    }
    let shown = screen_text(&app, 80, 24);
    assert!(
        shown.contains("Ctrl-c"),
        "the last row comes into view:\n{shown}"
    );
    assert!(
        !shown.contains("n  p  Tab"),
        "the first row went up:\n{shown}"
    );
    // Where every row fits (120×40), nothing scrolls and the border says only how to close.
    let tall = screen_text(&app, 120, 40);
    assert!(
        tall.contains("n  p  Tab") && tall.contains("Ctrl-c"),
        "{tall}"
    );
    assert!(tall.contains("? or Esc closes ─"), "{tall}");
    // Closing and opening again starts at the top.
    update(&mut app, Action::ToggleHelp);
    update(&mut app, Action::ToggleHelp);
    assert!(screen_text(&app, 80, 24).contains("n  p  Tab"));
}

#[test]
fn the_backward_steps_through_w_o_and_rope_at_80x24_and_120x40() {
    for (lesson, step) in [
        ("two-heads", "backward_output"),
        ("rope-same-distance", "backward_rotation"),
    ] {
        let mut app = open(lesson_index(lesson));
        // `d`: a drawn grad_output gives the lesson its backward steps.
        update(&mut app, Action::AddBackward);
        common::go_to(&mut app, step);
        let buffer = draw(&app, &Theme::monochrome(), 80, 24);
        insta::assert_snapshot!(format!("{lesson}_80x24_{step}"), text_and_mask(&buffer));
        insta::assert_snapshot!(
            format!("{lesson}_120x40_{step}"),
            screen_text(&app, 120, 40)
        );
    }
}

/// The rows of the help's box, between its side borders.
fn help_box_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter_map(|line| {
            let start = line.find('│')?;
            let end = line.rfind('│')?;
            (end > start).then(|| line[start + '│'.len_utf8()..end].to_string())
        })
        .collect()
}

#[test]
fn at_80_columns_no_line_of_any_help_runs_into_its_border() {
    use attn_tutor::app::{Audience, Classroom, Follow};
    let mut helps = Vec::new();
    let picker = App::new(App::builtin_entries(), None);
    helps.push(("the picker", picker));
    let classrooms = [
        ("a learner alone", None),
        (
            "a free student",
            Some(Classroom::Student {
                follow: Follow::Free,
                latest: None,
            }),
        ),
        (
            "a locked student",
            Some(Classroom::Student {
                follow: Follow::Locked,
                latest: None,
            }),
        ),
        (
            "the presenter",
            Some(Classroom::Presenter {
                audience: Audience::default(),
                join: "ssh -p 2222 NAME@192.168.1.20\nhttp://192.168.1.20:8080/".to_string(),
                host_key: Some(FINGERPRINT.to_string()),
            }),
        ),
    ];
    for (who, classroom) in classrooms {
        let mut app = open(lesson_index("two-heads"));
        app.classroom = classroom;
        helps.push((who, app));
    }
    for (who, mut app) in helps {
        update(&mut app, Action::ToggleHelp);
        // Tall enough that nothing scrolls: every row is checked.
        let screen = text(&draw(&app, &Theme::monochrome(), 80, 70));
        let rows = help_box_rows(&screen);
        assert!(rows.len() > 5, "{who}: no help box:\n{screen}");
        for row in rows {
            assert!(
                row.ends_with(' '),
                "{who}: a help line is cut at the border: {row:?}\n{screen}"
            );
        }
    }
}

#[test]
fn a_locked_students_help_lists_only_the_keys_that_work_while_locked() {
    use attn_tutor::app::{Classroom, Follow};
    let mut app = open(lesson_index("cat-sleeps"));
    app.classroom = Some(Classroom::Student {
        follow: Follow::Locked,
        latest: None,
    });
    update(&mut app, Action::ToggleHelp);
    let help = text(&draw(&app, &Theme::monochrome(), 80, 60));
    for works in [
        "move the cell cursor",
        "previous, next matrix",
        "scroll the narration",
    ] {
        assert!(help.contains(works), "{works:?} missing:\n{help}");
    }
    for idle in [
        "next step, previous step",
        "edit; a computed cell",
        "practice",
        "go free, or follow again",
    ] {
        assert!(
            !help.contains(idle),
            "{idle:?} does nothing while locked:\n{help}"
        );
    }
}

#[test]
fn the_note_under_the_matrices_is_never_cut_mid_sentence() {
    use attn_tutor::attention::Step;
    for (width, height) in [(80, 24), (120, 40)] {
        for (index, builtin) in BUILTIN.iter().enumerate() {
            let mut app = open(index);
            let steps = app.tutor().expect("the lesson opens").steps.len();
            for number in 1..=steps {
                update(&mut app, Action::GoToStep(number));
                // Each view of the step (Circuits: W_QK, then W_OV).
                let views = if app.tutor().unwrap().step() == Step::Circuits {
                    2
                } else {
                    1
                };
                for _ in 0..views {
                    let tutor = app.tutor().expect("still in the lesson");
                    let layout = tutor_layout(tutor, Rect::new(0, 0, width, height));
                    if let Some(note) = layout.note {
                        let screen = text(&draw(&app, &Theme::monochrome(), width, height));
                        let lines: Vec<&str> = screen.lines().collect();
                        let last = (note.y..note.bottom())
                            .map(|row| lines[usize::from(row)].trim_end())
                            .rfind(|line| !line.is_empty())
                            .unwrap_or_default();
                        assert!(
                            last.ends_with('.') || last.ends_with(").") || last.ends_with(')'),
                            "{} step {number} at {width}×{height}: the note is cut: {last:?}\n{screen}",
                            builtin.name
                        );
                    }
                    update(&mut app, Action::NextMatrix);
                }
            }
        }
    }
}

#[test]
fn an_edit_error_at_80_columns_keeps_its_start_and_its_end() {
    let cases: [(&str, usize, Option<MatrixName>, &str); 6] = [
        ("cat-sleeps", 1, None, "1e9"),
        ("cat-sleeps", 1, None, "abc"),
        ("cat-sleeps", 1, None, "12[3"),
        (
            "cat-sleeps",
            1,
            None,
            "9999999999999999999999999999999999999999",
        ),
        ("causal-cat-sat-mat", 4, Some(MatrixName::Mask), "1e400"),
        (
            "causal-cat-sat-mat",
            4,
            Some(MatrixName::Mask),
            "infinity[x",
        ),
    ];
    for (lesson, step, matrix, typed) in cases {
        let mut app = open(lesson_index(lesson));
        update(&mut app, Action::GoToStep(step));
        if let Some(matrix) = matrix {
            update(
                &mut app,
                Action::Select {
                    matrix,
                    row: 0,
                    col: Some(1),
                },
            );
        }
        update(&mut app, Action::Edit);
        for ch in typed.chars() {
            update(&mut app, Action::Type(ch));
        }
        update(&mut app, Action::Submit);
        let message = app.status.as_ref().expect("an error").text.clone();
        let screen = text(&draw(&app, &Theme::monochrome(), 80, 24));
        let bottom: Vec<&str> = screen.lines().rev().take(4).collect();
        let shown = bottom
            .iter()
            .rev()
            .map(|line| line.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let first: String = message.chars().take(12).collect();
        let last: String = {
            let chars: Vec<char> = message.chars().collect();
            chars[chars.len().saturating_sub(10)..].iter().collect()
        };
        assert!(
            shown.contains(&first) && shown.contains(&last),
            "{lesson} {typed:?}: {message:?} shows as\n{}",
            bottom.iter().rev().copied().collect::<Vec<_>>().join("\n")
        );
    }
}

#[test]
fn labels_and_captions_are_whole_where_the_row_has_room() {
    let cases = [
        ("translation", "scaling", 120, 40, "sleeping", 2),
        ("translation", "scores", 120, 40, "sleeping", 1),
        ("gqa", "online_softmax", 120, 40, "rescale⁽¹⁾", 1),
        ("two-heads", "online_softmax", 120, 40, "rescale⁽¹⁾", 1),
    ];
    for (lesson, step, width, height, words, times) in cases {
        let mut app = open(lesson_index(lesson));
        let steps = app.tutor().unwrap().steps.len();
        let number = (1..=steps)
            .find(|number| {
                update(&mut app, Action::GoToStep(*number));
                app.tutor().unwrap().step().key() == step
            })
            .unwrap_or_else(|| panic!("{lesson} has no {step} step"));
        update(&mut app, Action::GoToStep(number));
        let screen = text(&draw(&app, &Theme::monochrome(), width, height));
        let top: String = screen.lines().take(4).collect::<Vec<_>>().join("\n");
        assert_eq!(
            top.matches(words).count(),
            times,
            "{lesson} {step} at {width}×{height}: {words:?} cut:\n{top}"
        );
    }
}

// --- What a keystroke sends to the terminal ---------------------------------------------------

/// The 64-token lesson of 8 heads (64-dimensional embeddings, W_o 64 × 64) that the repaint
/// bench measures (benches/tutor.rs).
fn heads_lesson_text() -> String {
    let labels: Vec<String> = (1..=64).map(|i| format!("\"t{i}\"")).collect();
    let mut text = format!(
        "format = 2\ntitle = \"64 tokens, 8 heads\"\nheads = 8\ntokens = [{}]\n",
        labels.join(", ")
    );
    for (key, seed) in [
        ("embeddings", 1),
        ("w_q", 2),
        ("w_k", 3),
        ("w_v", 4),
        ("w_o", 5),
    ] {
        text.push_str(&format!(
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [64, 64] }}\n"
        ));
    }
    text
}

fn heads_app() -> App {
    let lesson = load_text("heads", None, heads_lesson_text());
    assert!(lesson.is_ok(), "the generated lesson loads");
    App::new(
        vec![PickerEntry {
            name: "heads".into(),
            lesson,
        }],
        Some(0),
    )
}

/// A terminal of a fixed size, drawn the way the tutor draws, keeping the bytes it is sent.
struct Painted {
    terminal: Terminal<CrosstermBackend<Outbox>>,
    sent: Outbox,
    painter: Painter,
}

impl Painted {
    fn new(width: u16, height: u16) -> Painted {
        let sent = Outbox::default();
        let terminal = Terminal::with_options(
            CrosstermBackend::new(sent.clone()),
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
            },
        )
        .expect("a fixed terminal");
        Painted {
            terminal,
            sent,
            painter: Painter::default(),
        }
    }

    /// The bytes of the next frame of `app`.
    fn frame(&mut self, app: &App, theme: &Theme) -> Vec<u8> {
        self.painter
            .draw(&mut self.terminal, app, theme)
            .expect("drawing into memory never fails");
        self.sent.take()
    }
}

/// The bytes of a full repaint of what `app` shows: its first frame on a fresh terminal.
fn full_repaint(app: &App, theme: &Theme, width: u16, height: u16) -> Vec<u8> {
    Painted::new(width, height).frame(app, theme)
}

/// Every cell a terminal shows: its text, colours and attributes.
fn cells(screen: &vt100::Screen) -> Vec<String> {
    let (rows, columns) = screen.size();
    let mut cells = Vec::new();
    for row in 0..rows.get() {
        for column in 0..columns.get() {
            let cell = screen.cell(row, column).expect("inside the screen");
            // A cell never written and one written with a space look the same.
            let contents = match cell.contents() {
                "" => " ",
                contents => contents,
            };
            cells.push(format!(
                "{row},{column}: {contents:?} {:?} {:?} b{} d{} i{} u{} r{}",
                cell.fgcolor(),
                cell.bgcolor(),
                cell.bold(),
                cell.dim(),
                cell.italic(),
                cell.underline(),
                cell.inverse()
            ));
        }
    }
    cells
}

/// What a fresh terminal shows after these bytes.
fn shown_after(bytes: &[u8], width: u16, height: u16) -> Vec<String> {
    let mut terminal = vt100::Parser::new(
        height.try_into().expect("a terminal has rows"),
        width.try_into().expect("a terminal has columns"),
        0,
    );
    terminal.process(bytes);
    cells(terminal.screen())
}

/// The keys of the repaint bench on each screen: the step change into it, →, then ←, ↓, →, ↑.
fn bench_keys() -> [Action; 5] {
    [
        Action::Move(Direction::Right),
        Action::Move(Direction::Left),
        Action::Move(Direction::Down),
        Action::Move(Direction::Right),
        Action::Move(Direction::Up),
    ]
}

/// The bytes ratatui's own writer sends for the next frame of `app` (the cells that differ,
/// each gap re-addressed, both colours whenever either changes): what the tutor sent before
/// its painter wrote the changes itself.
fn ratatui_frame(
    terminal: &mut Terminal<CrosstermBackend<Outbox>>,
    sent: &Outbox,
    app: &App,
    theme: &Theme,
) -> usize {
    terminal
        .draw(|frame| view(frame, app, theme))
        .expect("drawing into memory never fails");
    sent.take().len()
}

#[test]
fn cursor_moves_send_under_nine_tenths_of_what_ratatuis_writer_sends_and_seven_tenths_in_all() {
    // Issue 29 item 15: the 64-token, 8-head lesson at 120×40, the repaint bench's keys. A
    // highlighted column moving with the cursor was sent a row at a time with its cursor
    // address and both colours; and every gap cost an address.
    let (width, height) = (120, 40);
    let theme = Theme::detect(false, Some("truecolor"), None);
    let mut app = heads_app();
    let mut painted = Painted::new(width, height);
    painted.frame(&app, &theme);
    let sent = Outbox::default();
    let mut plain = Terminal::with_options(
        CrosstermBackend::new(sent.clone()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
        },
    )
    .expect("a fixed terminal");
    ratatui_frame(&mut plain, &sent, &app, &theme);
    let steps = app.tutor().expect("the lesson opens").steps.clone();
    let mut too_dear = Vec::new();
    let (mut all_ours, mut all_ratatuis) = (0, 0);
    for (index, step) in steps.iter().enumerate() {
        if index > 0 {
            update(&mut app, Action::NextStep);
            painted.frame(&app, &theme);
            ratatui_frame(&mut plain, &sent, &app, &theme);
        }
        let (mut ours, mut ratatuis) = (0, 0);
        for key in bench_keys() {
            update(&mut app, key);
            ours += painted.frame(&app, &theme).len();
            ratatuis += ratatui_frame(&mut plain, &sent, &app, &theme);
        }
        if ours * 10 > ratatuis * 9 {
            too_dear.push(format!(
                "{}: {ours} bytes, ratatui's {ratatuis}",
                step.title()
            ));
        }
        all_ours += ours;
        all_ratatuis += ratatuis;
    }
    assert!(
        too_dear.is_empty(),
        "cursor moves over nine tenths of ratatui's bytes:\n{}",
        too_dear.join("\n")
    );
    assert!(
        all_ours * 10 <= all_ratatuis * 7,
        "cursor moves on every screen: {all_ours} bytes, ratatui's {all_ratatuis}"
    );
}

#[test]
fn a_highlighted_column_moving_sideways_sends_its_colour_once() {
    let theme = Theme::detect(false, Some("truecolor"), None);
    let mut app = heads_app();
    let mut terminal = Painted::new(120, 40);
    update(&mut app, Action::NextStep);
    terminal.frame(&app, &theme);
    assert_eq!(app.tutor().unwrap().step().title(), "Projection");
    update(&mut app, Action::Move(Direction::Right));
    let bytes = String::from_utf8(terminal.frame(&app, &theme)).expect("text");
    // The operand amber: the column header of W_q behind, the bars beside its 25 numbers.
    let highlights = bytes.matches("255;214;120").count();
    assert!(
        highlights <= 2,
        "the highlighted column's colour was sent {highlights} times: {bytes:?}"
    );
}

/// The bytes of each of the repaint bench's arrows (←, ↓, →, ↑ after a →) on every step of the
/// 64-token, 8-head lesson, with the step's full repaint: (step, full repaint, arrows' mean).
fn bench_means(width: u16, height: u16) -> Vec<(String, usize, usize)> {
    let theme = Theme::detect(false, Some("truecolor"), None);
    let mut app = heads_app();
    let mut painted = Painted::new(width, height);
    painted.frame(&app, &theme);
    let steps = app.tutor().expect("the lesson opens").steps.clone();
    let mut means = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        if index > 0 {
            update(&mut app, Action::NextStep);
            painted.frame(&app, &theme);
        }
        let full = full_repaint(&app, &theme, width, height).len();
        let mut arrows = 0;
        for (turn, key) in bench_keys().into_iter().enumerate() {
            update(&mut app, key);
            let bytes = painted.frame(&app, &theme).len();
            // The first → only brings the cursor to where the bench starts.
            if turn > 0 {
                arrows += bytes;
            }
        }
        means.push((step.title().to_string(), full, arrows / 4));
    }
    means
}

#[test]
fn a_cursor_move_repaints_at_most_a_tenth_of_the_screen_at_120x40() {
    // Issue 29 item 15, as `cargo bench --bench tutor -- repaint` measures it. A column of
    // operands moving along a row re-styled every digit of two columns (Projection 12.0 %,
    // Output 10.9 %); the softmax notes moved up or down a line with the quotient (10.2 %); on
    // Online softmax the scores paged to their own cursor on the row's label (12.8 %); Output
    // projection rewrote its 64 products, wrapped anew, on every move (24.1 %); written head by
    // head it still rewrote the 8 heads' parts (13.6 %). Now it writes the head's part plus the
    // other heads' parts, a column's header mark covers its label only, and the painter moves
    // down a row with a line feed.
    let mut too_dear = Vec::new();
    for (step, full, mean) in bench_means(120, 40) {
        if mean * 10 > full {
            too_dear.push(format!(
                "{step}: {mean} of {full} bytes ({:.1} %, at most 10 %)",
                100.0 * mean as f64 / full as f64
            ));
        }
    }
    assert!(too_dear.is_empty(), "{}", too_dear.join("\n"));
}

#[test]
fn a_column_of_operands_is_marked_beside_each_number_and_on_its_header() {
    // Projection of the 8-head lesson at 120×40, the cursor on Q⁽¹⁾[t1, 2]: its operands are
    // row t1 of X and column 2 of W_q⁽¹⁾.
    let theme = Theme::detect(false, Some("truecolor"), None);
    let mut app = heads_app();
    update(&mut app, Action::NextStep);
    update(&mut app, Action::Move(Direction::Right));
    let tutor = app.tutor().expect("the lesson opens");
    let layout = tutor_layout(tutor, Rect::new(0, 0, 120, 40));
    let buffer = draw(&app, &theme, 120, 40);
    let w_q = layout
        .panels
        .iter()
        .find(|panel| panel.matrix == MatrixName::WQ)
        .expect("W_q has a panel");
    let amber = Color::Rgb(255, 214, 120);
    let bars: Vec<(u16, u16)> = (w_q.area.y..w_q.area.bottom())
        .flat_map(|y| (w_q.area.x..w_q.area.right()).map(move |x| (x, y)))
        .filter(|&(x, y)| buffer[(x, y)].symbol() == "▐")
        .collect();
    let rows = w_q.rows.len() as u16;
    assert_eq!(
        bars.len(),
        usize::from(rows),
        "a bar on every row shown: {bars:?}"
    );
    for &(x, y) in &bars {
        assert_eq!(buffer[(x, y)].fg, amber);
        // Against a number of the column on its right.
        let number: String = (x + 1..x + 1 + w_q.cell_width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        assert!(number.trim().parse::<f64>().is_ok(), "{number:?}");
    }
    let header: String = (bars[0].0 + 1..bars[0].0 + 1 + w_q.cell_width)
        .map(|x| buffer[(x, w_q.area.y + 1)].symbol().to_string())
        .collect();
    assert_eq!(header.trim(), "2");
    assert_eq!(
        buffer[(bars[0].0 + w_q.cell_width, w_q.area.y + 1)].bg,
        amber
    );
    // The numbers stay plain, and the row of X keeps its highlight on every number.
    assert_eq!(buffer[(bars[0].0 + 1, w_q.area.y + 2)].bg, Color::Reset);
    let x = layout
        .panels
        .iter()
        .find(|panel| matches!(panel.matrix, MatrixName::X | MatrixName::Embeddings))
        .expect("X has a panel");
    let lit = (x.area.x..x.area.right())
        .filter(|&column| buffer[(column, x.area.y + 2)].bg == amber)
        .count();
    assert_eq!(lit, x.cols.len() * usize::from(x.cell_width));
}

#[test]
fn stepping_onto_a_rows_label_keeps_the_pages_of_the_other_panels() {
    // Online softmax of the 8-head lesson at 80×24 and 120×40: the scaled scores' panel shows
    // one column, the tile's first key. On m's row label it paged to the scaled scores' own
    // cursor (left on key 2 on the Scaling step), and back again on →.
    for (width, height) in [(120, 40), (80, 24)] {
        let mut app = heads_app();
        let number = {
            let tutor = app.tutor().expect("the lesson opens");
            tutor
                .steps
                .iter()
                .position(|step| step.title() == "Scaling")
                .expect("a Scaling step")
                + 1
        };
        update(&mut app, Action::GoToStep(number));
        update(&mut app, Action::Move(Direction::Right));
        let online = app.tutor().unwrap().steps.len();
        update(&mut app, Action::GoToStep(online));
        let pages = |app: &App| {
            let tutor = app.tutor().expect("the lesson opens");
            tutor_layout(tutor, Rect::new(0, 0, width, height))
                .panels
                .iter()
                .map(|panel| (panel.matrix, panel.rows.clone(), panel.cols.clone()))
                .collect::<Vec<_>>()
        };
        let on_cell = pages(&app);
        update(&mut app, Action::Move(Direction::Left));
        assert!(
            app.tutor().unwrap().selected_cell().is_none(),
            "on the label"
        );
        assert_eq!(pages(&app), on_cell, "at {width}×{height}");
    }
}

#[test]
fn the_softmax_notes_keep_their_line_along_a_row() {
    // Softmax of the 8-head lesson at 120×40: the quotient of key t2 wraps onto a second line,
    // that of t1 does not; the entropy note below them stays on one line for every key.
    let theme = Theme::detect(false, Some("truecolor"), None);
    let mut app = heads_app();
    let number = app
        .tutor()
        .expect("the lesson opens")
        .steps
        .iter()
        .position(|step| step.title() == "Softmax")
        .expect("a Softmax step")
        + 1;
    update(&mut app, Action::GoToStep(number));
    let mut lines = Vec::new();
    for _ in 0..6 {
        let screen = text(&draw(&app, &theme, 120, 40));
        let line = screen
            .lines()
            .position(|line| line.contains("Entropy:"))
            .expect("the entropy note shows");
        lines.push(line);
        update(&mut app, Action::Move(Direction::Right));
    }
    assert!(lines.iter().all(|line| *line == lines[0]), "{lines:?}");
}

#[test]
fn what_the_painter_sends_leaves_the_terminal_as_a_full_repaint_would() {
    let theme = Theme::detect(false, Some("truecolor"), None);
    let cases: [(App, u16, u16); 3] = [
        (heads_app(), 120, 40),
        (heads_app(), 80, 24),
        (open(lesson_index("cat-sleeps")), 80, 24),
    ];
    for (mut app, width, height) in cases {
        let mut terminal = Painted::new(width, height);
        let mut screen = vt100::Parser::new(
            height.try_into().expect("a terminal has rows"),
            width.try_into().expect("a terminal has columns"),
            0,
        );
        screen.process(&terminal.frame(&app, &theme));
        let steps = app.tutor().expect("the lesson opens").steps.clone();
        for (index, step) in steps.iter().enumerate() {
            if index > 0 {
                update(&mut app, Action::NextStep);
                screen.process(&terminal.frame(&app, &theme));
            }
            let mut keys = bench_keys().to_vec();
            keys.extend([Action::Edit, Action::Type('7'), Action::Submit]);
            for key in keys {
                update(&mut app, key.clone());
                screen.process(&terminal.frame(&app, &theme));
                let expected =
                    shown_after(&full_repaint(&app, &theme, width, height), width, height);
                let wrong: Vec<String> = cells(screen.screen())
                    .iter()
                    .zip(&expected)
                    .filter(|(got, expected)| got != expected)
                    .map(|(got, expected)| format!("shows {got}, a full repaint {expected}"))
                    .take(5)
                    .collect();
                assert!(
                    wrong.is_empty(),
                    "{} at {width}×{height} after {key:?}:\n{}",
                    step.title(),
                    wrong.join("\n")
                );
            }
        }
    }
}

#[test]
fn without_colour_the_painter_sends_no_colour() {
    // NO_COLOR: every step, the bench's keys and an edit, and not one colour code.
    let theme = Theme::detect(true, Some("truecolor"), Some("xterm-256color"));
    let mut app = heads_app();
    let mut terminal = Painted::new(80, 24);
    let mut sent = terminal.frame(&app, &theme);
    let steps = app.tutor().expect("the lesson opens").steps.len();
    for index in 0..steps {
        if index > 0 {
            update(&mut app, Action::NextStep);
            sent.extend(terminal.frame(&app, &theme));
        }
        for key in bench_keys()
            .into_iter()
            .chain([Action::Edit, Action::Type('7'), Action::Submit])
        {
            update(&mut app, key);
            sent.extend(terminal.frame(&app, &theme));
        }
    }
    let sent = String::from_utf8(sent).expect("text");
    let mut attributes = 0;
    for sgr in sent.split("\x1b[").filter_map(|rest| {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
        (rest[end..].starts_with('m')).then(|| &rest[..end])
    }) {
        attributes += 1;
        for param in sgr.split(';') {
            let code: u32 = param.parse().unwrap_or(0);
            assert!(
                !matches!(code, 30..=38 | 40..=48 | 90..=97 | 100..=107),
                "a colour code {code} in ESC[{sgr}m"
            );
        }
    }
    assert!(attributes > 0, "the cursor and highlights are still drawn");
}

#[test]
fn a_long_output_projection_is_written_as_one_heads_part_and_the_others_then_its_terms() {
    // 64 terms from 8 heads do not read as a sum: the working gives the part of the head < and >
    // choose plus the other heads' parts, then that head's part term by term, result and all
    // in view.
    let mut app = heads_app();
    let steps = app.tutor().expect("the lesson opens").steps.clone();
    let at = steps
        .iter()
        .position(|step| *step == attn_tutor::attention::Step::OutputProjection)
        .expect("the lesson has W_o");
    update(&mut app, Action::GoToStep(at + 1));
    for (head, key) in [(1, None), (2, Some(Action::NextHead))] {
        if let Some(key) = key {
            update(&mut app, key);
        }
        let screen = text(&draw(&app, &Theme::monochrome(), 120, 40));
        assert!(
            screen.contains(&format!("= head {head}'s part + the other 7 heads' parts")),
            "{screen}"
        );
        assert!(
            screen.contains(&format!(
                "head {head}'s part = head⁽{}⁾[t1, :] · (rows {}–{} of W_o, column 1)",
                ['¹', '²'][head - 1],
                8 * head - 7,
                8 * head
            )),
            "{screen}"
        );
        assert!(!screen.contains("more lines"), "{screen}");
    }
}

/// The screen's lines joined, each without its ends' spaces: a note wrapped over lines reads
/// as one sentence.
fn joined(buffer: &Buffer) -> String {
    text(buffer)
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_matrix_shown_to_fewer_decimals_than_the_lesson_says_so_in_its_caption() {
    // At 80×24 generation's Masking shows scaled and masked whole at two decimals (the lesson
    // has four): 2.8284 reads 2.83, and each caption says the numbers are rounded.
    let mut app = open(lesson_index("generation"));
    common::go_to(&mut app, "masking");
    assert_eq!(app.tutor().unwrap().lesson.decimals, 4);
    let buffer = draw(&app, &Theme::monochrome(), 80, 24);
    let screen = text(&buffer);
    assert!(screen.contains(" 2.83 "), "{screen}");
    for caption in ["scaled = scores / √d_k", "masked = scaled + mask"] {
        let line = screen
            .lines()
            .find(|line| line.contains(caption))
            .unwrap_or_else(|| panic!("a caption {caption}: {screen}"));
        assert!(
            line.contains(&format!("{caption} (rounded to 2 decimals)"))
                || line.contains(&format!("{caption} (2 decimals)")),
            "{line}"
        );
    }
    // The mask's numbers are whole: nothing of them is rounded, and its caption says nothing.
    let mask = screen
        .lines()
        .find(|line| line.contains("mask (0"))
        .unwrap();
    assert_eq!(mask.matches("decimals").count(), 1, "{mask}");
    // The working still gives the selected cell at the lesson's decimals.
    let tutor = app.tutor_mut().unwrap();
    let focus = tutor.focus;
    tutor.set_cursor(
        focus,
        attn_tutor::app::Cursor {
            row: 1,
            col: 0,
            on_label: false,
        },
    );
    let screen = text(&draw(&app, &Theme::monochrome(), 80, 24));
    assert!(screen.contains("2.8284"), "{screen}");
}

#[test]
fn the_header_keeps_the_title_after_an_edit_on_gqas_online_softmax_at_80x24() {
    let mut app = open(lesson_index("gqa"));
    common::go_to(&mut app, "online_softmax");
    update(&mut app, Action::LargerTiles);
    assert!(app.tutor().unwrap().has_unsaved_edits());
    let screen = text(&draw(&app, &Theme::monochrome(), 80, 24));
    let header = screen.lines().next().unwrap();
    assert!(header.starts_with(" Grouped-"), "{header}");
    assert!(header.contains("· edited"), "{header}");
    assert!(
        header.contains("12/12 · Online softmax · tile 1/1 · head 1/4 · group 1/2"),
        "{header}"
    );
    // The working's max over the tile's four scores breaks between its terms, not inside a
    // cell's name.
    let working: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.starts_with("── How"))
        .skip(1)
        .take_while(|line| !line.starts_with("──"))
        .collect();
    assert!(working.iter().any(|line| line.contains("max(")), "{screen}");
    for line in &working {
        assert_eq!(
            line.matches('[').count(),
            line.matches(']').count(),
            "{line}"
        );
        assert!(!line.trim_end().ends_with('('), "{line}");
    }
}

/// The presses of `[` (backwards) or `]` the screen's note says reach another view's result,
/// if it says.
fn presses_said(screen: &str) -> Option<(bool, usize)> {
    for (words, forwards) in [
        ("(] goes on to it)", true),
        ("(] goes on to them)", true),
        ("([ goes back to it)", false),
        ("([ goes back to them)", false),
    ] {
        if screen.contains(words) {
            return Some((forwards, 1));
        }
    }
    for (lead, forwards) in [
        ("] reaches it in ", true),
        ("] reaches the first of them in ", true),
        ("[ reaches it in ", false),
        ("[ reaches the last of them in ", false),
    ] {
        if let Some((_, rest)) = screen.split_once(lead) {
            let count = rest.split(' ').next()?.parse().ok()?;
            return Some((forwards, count));
        }
    }
    None
}

#[test]
fn the_note_on_a_screens_other_views_says_how_many_presses_reach_them() {
    let mut checked = 0;
    for (index, builtin) in BUILTIN.iter().enumerate() {
        let mut app = open(index);
        let steps = app.tutor().unwrap().steps.len();
        for number in 1..=steps {
            update(&mut app, Action::GoToStep(number));
            // From where the cursor starts and from each matrix ] visits after it.
            for moves in 0..4 {
                let mut here = app.clone();
                for _ in 0..moves {
                    update(&mut here, Action::NextMatrix);
                }
                let tutor = here.tutor().unwrap();
                let views = tutor.step().views(&tutor.attention.plan);
                let panels = tutor.panels();
                let Some(shown) = views.iter().position(|view| view.panels == panels) else {
                    continue;
                };
                let others: Vec<MatrixName> = views
                    .iter()
                    .enumerate()
                    .filter(|(at, _)| *at != shown)
                    .map(|(_, view)| view.result)
                    .collect();
                let screen = joined(&draw(&here, &Theme::monochrome(), 120, 40));
                let Some((forwards, count)) = presses_said(&screen) else {
                    continue;
                };
                let key = if forwards {
                    Action::NextMatrix
                } else {
                    Action::PreviousMatrix
                };
                for press in 1..=count {
                    update(&mut here, key.clone());
                    let focus = here.tutor().unwrap().focus;
                    assert_eq!(
                        others.contains(&focus),
                        press == count,
                        "{} step {number}, {moves} ] first: press {press} of {count} is on \
                         {focus:?}; {screen}",
                        builtin.name
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked} notes checked");
}

#[test]
fn nothing_touches_the_help_overlays_side_borders_over_the_picker() {
    for (width, height) in [(80, 24), (100, 30)] {
        let mut app = App::new(App::builtin_entries(), None);
        update(&mut app, Action::ToggleHelp);
        let screen = text(&draw(&app, &Theme::monochrome(), width, height));
        let mut rows = 0;
        for line in screen.lines() {
            let cells: Vec<char> = line.chars().collect();
            let borders: Vec<usize> = (0..cells.len())
                .filter(|at| matches!(cells[*at], '│' | '┌' | '┐' | '└' | '┘'))
                .collect();
            let (Some(left), Some(right)) = (borders.first(), borders.last()) else {
                continue;
            };
            rows += 1;
            assert!(
                *left == 0 || cells[left - 1] == ' ',
                "{width}×{height}: {line}"
            );
            assert!(
                cells.get(right + 1).is_none_or(|next| *next == ' '),
                "{width}×{height}: {line}"
            );
        }
        assert!(rows > 10, "{screen}");
    }
}

#[test]
fn a_note_cut_at_three_lines_ends_in_an_ellipsis() {
    // gqa's Online softmax at 80×24 after b: the tile's words and the other view's fill more
    // than the note's three lines.
    let mut app = open(lesson_index("gqa"));
    common::go_to(&mut app, "online_softmax");
    update(&mut app, Action::LargerTiles);
    let screen = text(&draw(&app, &Theme::monochrome(), 80, 24));
    let note: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.starts_with(" Tile 1 of 1"))
        .take(3)
        .collect();
    assert!(note[2].trim_end().ends_with('…'), "{screen}");
}

/// The lines of the working panel as drawn at a size (beside the matrices too), its title
/// left off, each trimmed.
fn working_drawn(app: &App, width: u16, height: u16) -> Vec<String> {
    let buffer = draw(app, &Theme::monochrome(), width, height);
    let area = tutor_layout(app.tutor().unwrap(), Rect::new(0, 0, width, height)).working;
    (area.y + 1..area.bottom())
        .map(|y| {
            (area.x..area.right())
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim()
                .to_string()
        })
        .collect()
}

/// Screens (lesson, with d, step) whose matrices leave the working a line or two at 80×24,
/// still cut: the online softmax of generation (masked) and positions-cat-sat-mat (scaled),
/// and the backward softmax of rope-same-distance and two-heads. They need the matrices paged.
const LEFT_CUT: [(&str, bool, usize); 6] = [
    ("generation", false, 8),
    ("generation", true, 8),
    ("positions-cat-sat-mat", false, 8),
    ("positions-cat-sat-mat", true, 8),
    ("rope-same-distance", true, 10),
    ("two-heads", true, 16),
];

// Issue 29, tried as a new user at 80×24: on generation's Masking, gqa's and generation's
// backward steps, every cell's working showed its formula and its result, the numbers between
// hidden ("= 0   … 2 more lines"), where the arithmetic is what the panel is for.
#[test]
fn every_working_of_every_step_shows_its_numbers_before_its_result_at_80x24() {
    let mut checked = 0;
    let mut cut = Vec::new();
    for (index, builtin) in BUILTIN.iter().enumerate() {
        for backward in [false, true] {
            let mut app = open(index);
            if backward {
                update(&mut app, Action::AddBackward);
            }
            let steps = app.tutor().expect("the lesson opens").steps.len();
            for number in 1..=steps {
                update(&mut app, Action::GoToStep(number));
                let first = app.tutor().unwrap().focus;
                loop {
                    let focus = app.tutor().unwrap().focus;
                    let (rows, cols) = app
                        .tutor()
                        .unwrap()
                        .attention
                        .matrix(focus)
                        .map_or((0, 0), |values| (values.nrows(), values.ncols()));
                    // Drawn for the cells of the matrix whose workings are the longest (the
                    // engine's text, without drawing) and its first: a layout that cuts one
                    // working cuts the longest, and drawing every cell twice took minutes.
                    let length = |app: &mut App, row: usize, col: usize| {
                        let cursor = attn_tutor::app::Cursor {
                            row,
                            col,
                            on_label: false,
                        };
                        app.tutor_mut().unwrap().set_cursor(focus, cursor);
                        let tutor = app.tutor().unwrap();
                        tutor
                            .selected_cell()
                            .and_then(|cell| tutor.attention.derive(cell))
                            .map_or(0, |derivation| {
                                derivation.explain(&tutor.attention, 4).chars().count()
                            })
                    };
                    let mut lengths = Vec::new();
                    for row in 0..rows {
                        for col in 0..cols {
                            lengths.push((length(&mut app, row, col), row, col));
                        }
                    }
                    let longest = lengths.iter().map(|(length, ..)| *length).max();
                    let first_longest =
                        lengths.iter().find(|(length, ..)| Some(*length) == longest);
                    let last_longest = lengths
                        .iter()
                        .rfind(|(length, ..)| Some(*length) == longest);
                    let mut sampled: Vec<(usize, usize)> =
                        [lengths.first(), first_longest, last_longest]
                            .into_iter()
                            .flatten()
                            .map(|(_, row, col)| (*row, *col))
                            .collect();
                    sampled.dedup();
                    for (row, col) in sampled {
                        {
                            let cursor = attn_tutor::app::Cursor {
                                row,
                                col,
                                on_label: false,
                            };
                            app.tutor_mut().unwrap().set_cursor(focus, cursor);
                            // The whole working at the same width: its lines between the
                            // first and the result are the arithmetic.
                            let whole = working_of(&screen_text(&app, 120, 60));
                            // The notes after the result begin with a word ("The row's
                            // average…", "Computed from…"); a note may wrap onto a "= " line.
                            let is_word = |line: &String| {
                                let mut chars = line.chars();
                                chars.next().is_some_and(char::is_uppercase)
                                    && chars.next().is_some_and(char::is_lowercase)
                            };
                            let notes = whole
                                .iter()
                                .skip(1)
                                .position(is_word)
                                .map_or(whole.len(), |at| at + 1);
                            let Some(result) = whole[..notes]
                                .iter()
                                .rposition(|line| line.starts_with("= "))
                            else {
                                continue;
                            };
                            let arithmetic: Vec<&String> = whole[1..result]
                                .iter()
                                .filter(|line| line.chars().any(|c| c.is_ascii_digit()))
                                .collect();
                            let working = working_drawn(&app, 80, 24);
                            // The result, maybe followed by the count of lines left off.
                            let elided = format!("{}   … ", whole[result]);
                            let at = working.iter().rposition(|line| {
                                *line == whole[result] || line.starts_with(&elided)
                            });
                            // A side of numbers ("= 0.7071 + (0)"), or a line of the whole's.
                            let numbers = working[..at.unwrap_or(0)].iter().any(|line| {
                                arithmetic.contains(&line)
                                    || (line.starts_with("= ")
                                        && line.chars().any(|c| c.is_ascii_digit()))
                            });
                            let left = LEFT_CUT.contains(&(builtin.name, backward, number));
                            if !left && !(at.is_some() && (arithmetic.is_empty() || numbers)) {
                                // The whole screen, drawn again only for a cell that fails.
                                let shown = screen_text(&app, 80, 24);
                                cut.push(format!(
                                    "{} {}step {number} [{row}, {col}]:\n{shown}",
                                    builtin.name,
                                    if backward { "with d, " } else { "" },
                                ));
                            }
                            checked += 1;
                        }
                    }
                    update(&mut app, Action::NextMatrix);
                    if app.tutor().unwrap().focus == first {
                        break;
                    }
                }
            }
        }
    }
    assert!(checked > 300, "{checked} workings checked");
    assert!(
        cut.is_empty(),
        "{} workings hide their numbers or their result, the first:\n{}",
        cut.len(),
        cut.first().map_or("", String::as_str)
    );
}
