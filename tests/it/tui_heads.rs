//! Several heads in the tutor: the head key, the header naming the head, every per-head screen
//! showing the head's matrices, edits of a head's weights landing in the lesson's matrix, the
//! All heads screen and its pages, and a classroom's followers following the head.

use crate::common;

use common::status;

/// The first line of the screen: the title and where the learner is.
fn header(app: &App) -> String {
    common::screen_line(app, 0)
}

use std::sync::Arc;

use attn_tutor::app::{Action, App, Classroom, Follow, Overlay, Presented, update};
use attn_tutor::attention::{Cell, MatrixName, Step};
use attn_tutor::input::action_for;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

const AREA: Rect = Rect::new(0, 0, 80, 24);

fn head(app: &App) -> usize {
    app.tutor().unwrap().head
}

fn key(ch: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(ch), KeyModifiers::NONE))
}

fn line(app: &App, row: usize) -> String {
    common::screen_line(app, row)
}

fn last_line(app: &App) -> String {
    common::screen(app, 80, 24)
        .lines()
        .last()
        .unwrap()
        .trim_end()
        .to_string()
}

fn act(app: &mut App, actions: &[Action]) {
    for action in actions {
        update(app, action.clone());
    }
}

#[test]
fn greater_than_and_less_than_change_the_head_and_wrap_around() {
    let mut app = common::gqa_lesson();
    common::go_to(&mut app, "scores");
    assert_eq!(action_for(&key('>'), &app, AREA), Some(Action::NextHead));
    assert_eq!(
        action_for(&key('<'), &app, AREA),
        Some(Action::PreviousHead)
    );
    assert_eq!(head(&app), 0);
    update(&mut app, Action::NextHead);
    assert_eq!(head(&app), 1);
    update(&mut app, Action::PreviousHead);
    update(&mut app, Action::PreviousHead);
    assert_eq!(head(&app), 3, "< from head 1 wraps to the last head");
    update(&mut app, Action::NextHead);
    assert_eq!(head(&app), 0, "> from the last head wraps to head 1");
}

#[test]
fn a_lesson_of_one_head_says_so_when_the_head_keys_are_pressed() {
    let mut app = App::new(App::builtin_entries(), Some(0));
    update(&mut app, Action::NextHead);
    assert_eq!(head(&app), 0);
    assert!(status(&app).contains("one head"), "{}", status(&app));
}

#[test]
fn the_bottom_line_and_the_help_name_the_head_keys_only_with_several_heads() {
    let mut one = App::new(App::builtin_entries(), Some(0));
    let mut two = common::two_head_lesson();
    assert!(!last_line(&one).contains("< > head"), "{}", last_line(&one));
    assert!(last_line(&two).contains("< > head"), "{}", last_line(&two));
    update(&mut one, Action::ToggleHelp);
    update(&mut two, Action::ToggleHelp);
    assert!(!common::screen(&one, 80, 24).contains("next head"));
    assert!(common::screen(&two, 80, 24).contains("previous, next head"));
}

#[test]
fn the_header_names_the_head_on_a_step_of_one_head() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "scores");
    update(&mut app, Action::NextHead);
    assert!(
        header(&app).ends_with("Step 3/11 · Scores · head 2/2"),
        "{}",
        header(&app)
    );
    common::go_to(&mut app, "embedding");
    assert!(
        header(&app).ends_with("Step 1/11 · Embedding"),
        "{}",
        header(&app)
    );
    common::go_to(&mut app, "concat");
    assert!(header(&app).ends_with("Concat"), "{}", header(&app));
}

#[test]
fn with_grouped_query_attention_the_header_names_the_heads_kv_group() {
    let mut app = common::gqa_lesson();
    common::go_to(&mut app, "softmax");
    act(&mut app, &[Action::NextHead, Action::NextHead]);
    assert!(
        header(&app).ends_with("Softmax · head 3/4 · K/V group 2/2"),
        "{}",
        header(&app)
    );
}

#[test]
fn the_header_formula_is_written_in_the_heads_symbols() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "scores");
    update(&mut app, Action::NextHead);
    assert!(
        line(&app, 1)
            .starts_with(" scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ    where Q⁽²⁾ = X·W_q⁽²⁾, K⁽²⁾ = X·W_k⁽²⁾"),
        "{}",
        line(&app, 1)
    );
}

#[test]
fn a_per_head_screen_shows_the_heads_matrices_and_working() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "scores");
    update(&mut app, Action::NextHead);
    let tutor = app.tutor().unwrap();
    let selected = tutor.selected_cell().unwrap();
    assert_eq!(selected.head, 1);
    let screen = common::screen(&app, 80, 24);
    assert!(screen.contains("scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ"), "{screen}");
    assert!(
        screen.contains("How scores⁽²⁾[The, The] is computed"),
        "{screen}"
    );
    // The first number shown is head 2's, not head 1's.
    let head_2 = tutor.attention.value(selected).unwrap();
    let head_1 = tutor
        .attention
        .value(Cell {
            head: 0,
            ..selected
        })
        .unwrap();
    assert_ne!(head_1, head_2);
    let shown = attn_tutor::attention::number::format_number(head_2, 4);
    assert!(
        screen.contains(&format!("= {shown}")),
        "{shown} in {screen}"
    );
}

/// Opens the Projection step on W_q of `head` (0-based) and types `typed` into row `row`,
/// column `col` of that head's block.
fn edit_w(app: &mut App, matrix: MatrixName, head: usize, row: usize, col: usize, typed: &str) {
    common::go_to(app, "projection");
    app.tutor_mut().unwrap().set_head(head);
    update(
        app,
        Action::Select {
            matrix,
            row,
            col: Some(col),
        },
    );
    update(app, Action::Edit);
    assert!(
        matches!(app.overlay, Overlay::Prompt(_)),
        "{:?}",
        app.overlay
    );
    for ch in typed.chars() {
        update(app, Action::Type(ch));
    }
    update(app, Action::Submit);
}

fn lesson_value(app: &App, matrix: MatrixName, row: usize, col: usize) -> f64 {
    app.tutor().unwrap().lesson.input(matrix).unwrap().values[(row, col)]
}

#[test]
fn editing_head_2s_w_q_changes_the_lessons_w_q_in_head_2s_columns_and_undo_restores_it() {
    let mut app = common::two_head_lesson();
    let d_k = 2;
    let before = app.tutor().unwrap().lesson.clone();
    edit_w(&mut app, MatrixName::WQ, 1, 0, 1, "7");
    assert_eq!(lesson_value(&app, MatrixName::WQ, 0, d_k + 1), 7.0);
    assert_eq!(
        lesson_value(&app, MatrixName::WQ, 0, 1),
        0.0,
        "head 1's block is untouched"
    );
    assert!(
        status(&app).contains("W_q⁽²⁾[1, 2] is now 7")
            && status(&app).contains("it is w_q row 1 column 4 in the file"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::Undo);
    assert_eq!(app.tutor().unwrap().lesson, before);
    assert!(
        status(&app).contains("W_q⁽²⁾[1, 2] = 7 → 0"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::Redo);
    assert_eq!(lesson_value(&app, MatrixName::WQ, 0, d_k + 1), 7.0);
}

#[test]
fn editing_a_kv_groups_w_k_from_its_second_head_writes_the_groups_columns() {
    let mut app = common::gqa_lesson();
    // Head 4 uses K/V group 2: columns 3–4 of w_k (d_k = 2).
    edit_w(&mut app, MatrixName::WK, 3, 1, 0, "5");
    assert_eq!(lesson_value(&app, MatrixName::WK, 1, 2), 5.0);
    assert!(
        status(&app).contains("w_k row 2 column 3"),
        "{}",
        status(&app)
    );
    let tutor = app.tutor().unwrap();
    // Both heads of the group see the new key weights.
    for head in [2, 3] {
        assert_eq!(
            tutor.attention.value(Cell {
                head,
                ..Cell::new(MatrixName::WK, 1, 0)
            }),
            Some(5.0)
        );
    }
}

#[test]
fn an_edit_marks_the_changed_numbers_of_the_head_it_changed() {
    let mut app = common::two_head_lesson();
    edit_w(&mut app, MatrixName::WQ, 1, 0, 1, "7");
    let tutor = app.tutor().unwrap();
    let q = |head| Cell {
        head,
        ..Cell::new(MatrixName::Q, 0, 1)
    };
    assert!(tutor.changed.contains(&q(1)), "head 2's queries changed");
    assert!(!tutor.changed.contains(&q(0)), "head 1's did not");
}

#[test]
fn e_on_a_heads_computed_cell_goes_to_its_operand_in_the_same_head() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "scores");
    update(&mut app, Action::NextHead);
    update(&mut app, Action::Edit);
    let Overlay::Question(attn_tutor::app::Question::JumpTo { to, .. }) = app.overlay.clone()
    else {
        panic!("e offers to jump: {:?}", app.overlay);
    };
    assert_eq!(to.head, 1);
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.selected_cell(), Some(to));
    assert_eq!(tutor.head, 1);
}

#[test]
fn all_heads_shows_every_heads_weights_side_by_side_at_80x24() {
    let mut app = common::gqa_lesson();
    common::go_to(&mut app, "all_heads");
    let screen = common::screen(&app, 80, 24);
    for head in 1..=4 {
        assert!(screen.contains(&format!("head {head}")), "{screen}");
    }
    assert!(screen.contains("all 4 heads"), "{screen}");
}

#[test]
fn all_heads_pages_when_more_heads_than_fit_and_says_so() {
    let mut app = common::lesson_app("eight", &common::many_heads(8, 6));
    common::go_to(&mut app, "all_heads");
    let screen = common::screen(&app, 80, 24);
    assert!(screen.contains("heads 1–4 of 8 · > for more"), "{screen}");
    assert!(!screen.contains("head 5"), "{screen}");
    act(&mut app, &[const { Action::NextHead }; 4]);
    let screen = common::screen(&app, 80, 24);
    assert!(screen.contains("heads 5–8 of 8 · < goes back"), "{screen}");
    assert!(screen.contains("▸ head 5"), "{screen}");
}

#[test]
fn on_all_heads_the_arrows_pick_a_head_and_enter_opens_its_softmax_step() {
    let mut app = common::gqa_lesson();
    common::go_to(&mut app, "all_heads");
    update(&mut app, Action::Move(attn_tutor::app::Direction::Right));
    update(&mut app, Action::Move(attn_tutor::app::Direction::Right));
    assert_eq!(head(&app), 2);
    assert!(common::screen(&app, 80, 24).contains("▸ head 3"));
    update(&mut app, Action::Edit);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.step(), Step::Softmax);
    assert_eq!(tutor.head, 2);
}

/// A presenter's app on a lesson of several heads, and a student following it.
fn classroom(follow: Follow) -> (App, App) {
    let mut teacher = common::gqa_lesson();
    teacher.classroom = Some(Classroom::Presenter {
        audience: Default::default(),
        join: "ssh -p 2222 NAME@127.0.0.1".to_string(),
        host_key: None,
    });
    let mut student = common::gqa_lesson();
    student.classroom = Some(Classroom::Student {
        follow,
        latest: None,
    });
    (teacher, student)
}

fn shown(presenter: &App, version: u64) -> Action {
    Action::Presenter(Arc::new(Presented::of(presenter, version)))
}

#[test]
fn a_following_student_follows_the_presenters_head() {
    let (mut teacher, mut student) = classroom(Follow::Following);
    common::go_to(&mut teacher, "scores");
    act(&mut teacher, &[Action::NextHead, Action::NextHead]);
    update(&mut student, shown(&teacher, 1));
    assert_eq!(head(&student), 2);
    assert!(
        header(&student).ends_with("head 3/4 · K/V group 2/2"),
        "{}",
        header(&student)
    );
    // The head is the presenter's to change, as the step is.
    update(&mut student, Action::NextHead);
    assert_eq!(head(&student), 2);
    assert!(
        status(&student).contains("following the presenter"),
        "{}",
        status(&student)
    );
}

#[test]
fn a_free_student_changes_the_head_alone() {
    let (mut teacher, mut student) = classroom(Follow::Free);
    common::go_to(&mut teacher, "scores");
    update(&mut teacher, Action::NextHead);
    update(&mut student, shown(&teacher, 1));
    assert_eq!(head(&student), 0, "a free student keeps their own screen");
    update(&mut student, Action::NextHead);
    assert_eq!(head(&student), 1);
}

#[test]
fn practice_on_a_step_of_one_head_hides_that_heads_cells() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "scores");
    update(&mut app, Action::NextHead);
    update(&mut app, Action::TogglePractice);
    let tutor = app.tutor().unwrap();
    let hidden = tutor.hidden_cells();
    assert!(!hidden.is_empty());
    assert!(hidden.iter().all(|cell| cell.head == 1), "{hidden:?}");
    // The right answer of head 2's first cell reveals it.
    let first = hidden[0];
    let value = tutor.attention.value(first).unwrap();
    update(&mut app, Action::StartAnswer('0'));
    update(&mut app, Action::ClearInput);
    for ch in format!("{value}").chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    assert!(!app.tutor().unwrap().is_hidden(first));
}

#[test]
fn the_steps_of_w_o_have_cells_to_predict() {
    let mut app = common::gqa_lesson();
    for (key, target) in [
        ("concat", MatrixName::Concat),
        ("output_projection", MatrixName::Projected),
        ("circuits", MatrixName::WQK),
    ] {
        common::go_to(&mut app, key);
        let tutor = app.tutor().unwrap();
        assert!(tutor.practice_targets().contains(&target), "{key}");
    }
    common::go_to(&mut app, "all_heads");
    assert!(
        app.tutor().unwrap().practice_targets().is_empty(),
        "All heads shows the weights of the Softmax step again: nothing new to predict"
    );
}

#[test]
fn the_circuit_line_shows_the_scaling_steps_score_read_through_w_qk() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "circuits");
    update(&mut app, Action::NextHead);
    let tutor = app.tutor().unwrap();
    let through = tutor.attention.circuit_score(1, 0, 0).unwrap();
    let scaled = tutor
        .attention
        .value(Cell::new(MatrixName::Scaled, 0, 0).in_head(1))
        .unwrap();
    assert!(
        (through - scaled).abs() < 1e-9,
        "the engine's two numbers agree"
    );
    let screen = common::screen(&app, 120, 40);
    let number = attn_tutor::attention::number::format_number(through, 3);
    assert!(
        screen.contains(&format!(
            "x_The · W_QK⁽²⁾ · x_Theᵀ / √d_k = {number}, and scaled⁽²⁾[The, The]"
        )),
        "{screen}"
    );
}

#[test]
fn with_rope_the_circuit_line_says_the_rotation_is_left_out() {
    let text = common::TWO_HEADS.replace("heads = 2", "heads = 2\npositions = \"rope\"");
    let mut app = common::lesson_app("two-heads-rope", &text);
    common::go_to(&mut app, "circuits");
    // A query and a key at the same position: rope's turns cancel, and the numbers agree.
    let screen = common::screen(&app, 120, 40);
    assert!(
        screen.contains("the same here because the query and the key"),
        "{screen}"
    );
    // At different positions they differ.
    common::go_to(&mut app, "scaling");
    update(&mut app, Action::Move(attn_tutor::app::Direction::Down));
    common::go_to(&mut app, "circuits");
    let screen = common::screen(&app, 120, 40);
    assert!(
        screen.contains("the circuit leaves out the rotation (rope)"),
        "{screen}"
    );
}

#[test]
fn on_concat_the_head_shown_follows_the_block_under_the_cursor() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "concat");
    // d_v = 2: columns 3 and 4 of concat are head 2's output.
    for _ in 0..2 {
        update(&mut app, Action::Move(attn_tutor::app::Direction::Right));
    }
    assert_eq!(head(&app), 1);
    let screen = common::screen(&app, 80, 24);
    assert!(screen.contains("head⁽²⁾"), "{screen}");
    assert!(
        screen.contains("concat[The, 3] = head⁽²⁾[The, 1]"),
        "{screen}"
    );
}

#[test]
fn all_heads_with_64_tokens_shows_a_page_of_keys_in_four_maps_across() {
    let mut app = common::lesson_app("big", &common::many_heads(8, 64));
    common::go_to(&mut app, "all_heads");
    let screen = common::screen(&app, 120, 40);
    for head in 1..=4 {
        assert!(screen.contains(&format!("head {head}")), "{screen}");
    }
    assert!(screen.contains("heads 1–4 of 8 · > for more"), "{screen}");
    assert!(screen.contains("of 64 (↑↓ move the query)"), "{screen}");
}

#[test]
fn a_following_student_on_all_heads_cannot_pick_a_head_with_the_arrows() {
    let (mut teacher, mut student) = classroom(Follow::Following);
    common::go_to(&mut teacher, "all_heads");
    update(&mut student, shown(&teacher, 1));
    update(
        &mut student,
        Action::Move(attn_tutor::app::Direction::Right),
    );
    assert_eq!(head(&student), 0);
    assert!(
        status(&student).contains("The presenter picks the head"),
        "{}",
        status(&student)
    );
}

#[test]
fn a_lesson_of_one_head_with_w_o_projects_its_output_and_names_no_head() {
    let text = common::TWO_HEADS.replace("heads = 2\n", "");
    let mut app = common::lesson_app("one-head-w-o", &text);
    let keys: Vec<&str> = app
        .tutor()
        .unwrap()
        .steps
        .iter()
        .map(|step| step.key())
        .collect();
    assert_eq!(
        keys,
        [
            "embedding",
            "projection",
            "scores",
            "scaling",
            "softmax",
            "output",
            "output_projection",
            "circuits",
            "online_softmax"
        ]
    );
    common::go_to(&mut app, "output_projection");
    assert!(
        header(&app).ends_with("Step 7/9 · Output projection"),
        "{}",
        header(&app)
    );
    assert!(line(&app, 1).contains("V·W_o"), "{}", line(&app, 1));
    common::go_to(&mut app, "scores");
    assert!(
        header(&app).ends_with("Step 3/9 · Scores"),
        "{}",
        header(&app)
    );
}

#[test]
fn arriving_on_concat_from_head_2_shows_the_head_the_cursors_cell_comes_from() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "softmax");
    update(&mut app, Action::NextHead);
    assert_eq!(head(&app), 1);
    common::go_to(&mut app, "concat");
    // The cursor starts on concat's column 1, head 1's: head 1's output is the one beside it.
    assert_eq!(head(&app), 0);
    let screen = common::screen(&app, 80, 24);
    assert!(
        screen.contains("concat[The, 1] = head⁽¹⁾[The, 1]"),
        "{screen}"
    );
}

#[test]
fn changing_the_head_on_concat_moves_the_cursor_to_that_heads_block() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "concat");
    update(&mut app, Action::Move(attn_tutor::app::Direction::Right));
    update(&mut app, Action::NextHead);
    assert_eq!(head(&app), 1);
    let screen = common::screen(&app, 80, 24);
    // Column 2 of head 1's block becomes column 2 of head 2's: concat column 4.
    assert!(
        screen.contains("concat[The, 4] = head⁽²⁾[The, 2]"),
        "{screen}"
    );
}

#[test]
fn all_heads_at_80x24_shows_the_picked_rows_every_weight() {
    let text = common::many_heads(4, 6).replace(
        r#""w00", "w01", "w02", "w03", "w04", "w05""#,
        r#""alpha", "beta", "gamma", "delta", "eps", "zeta""#,
    );
    assert!(text.contains("zeta"));
    let mut app = common::lesson_app("six", &text);
    common::go_to(&mut app, "all_heads");
    let screen = common::screen(&app, 80, 24);
    for key in ["alpha", "beta", "gamma", "delta", "eps", "zeta"] {
        assert!(
            screen.contains(&format!("{key} 0.")) || screen.contains(&format!("{key} 1.")),
            "no weight of {key}:\n{screen}"
        );
    }
}

#[test]
fn practice_names_the_heads_matrix_it_hides() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "output");
    update(&mut app, Action::NextHead);
    update(&mut app, Action::TogglePractice);
    assert!(
        status(&app).contains("predict each hidden cell of head⁽²⁾"),
        "{}",
        status(&app)
    );
}

#[test]
fn practice_on_all_heads_does_not_call_its_computed_weights_given() {
    let mut app = common::two_head_lesson();
    common::go_to(&mut app, "all_heads");
    update(&mut app, Action::TogglePractice);
    let screen = common::screen(&app, 80, 24);
    // The practice panel's column: where its sentence starts.
    let column = screen
        .lines()
        .find_map(|line| line.find("Nothing to predict"))
        .unwrap_or_else(|| panic!("no practice panel:\n{screen}"));
    let words = screen
        .lines()
        .filter_map(|line| line.get(column..))
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!words.contains("its numbers are given"), "{screen}");
    assert!(
        words.contains("every head's weights again, computed on the Softmax step"),
        "{screen}"
    );
}

#[test]
fn the_w_ov_screen_names_the_value_weights_of_the_heads_k_v_group() {
    let mut app = common::gqa_lesson();
    common::go_to(&mut app, "circuits");
    // Four query heads in two K/V groups: heads 1–2 read W_v⁽¹⁾, heads 3–4 read W_v⁽²⁾.
    for (head, group) in [(1, 1), (2, 1), (3, 2), (4, 2)] {
        app.tutor_mut().unwrap().focus_on(MatrixName::WOV);
        let screen = common::screen(&app, 120, 40);
        let mark = |n: usize| ["⁽¹⁾", "⁽²⁾", "⁽³⁾", "⁽⁴⁾"][n - 1];
        assert!(
            screen.contains(&format!(
                "W_OV{} = W_v{} · W_o{}, and W_o{} is rows",
                mark(head),
                mark(group),
                mark(head),
                mark(head)
            )),
            "head {head}: {screen}"
        );
        for other in (1..=4).filter(|&other| other != group) {
            assert!(
                !screen.contains(&format!("W_v{}", mark(other))),
                "head {head} reads W_v{}, nothing else: {screen}",
                mark(group)
            );
        }
        update(&mut app, Action::NextHead);
    }
}
