//! The Online softmax step in the tutor: every cell of m, rescale, l and acc at every tile is
//! the engine's state after that tile, every working line lands on its cell, `(` `)` walk the
//! tiles and `b` `B` size them (undoably, and never in practice or off the step), and practice
//! asks for m, rescale and l like any other cell.

use crate::common;

use common::status;

/// The first line of the screen: the title and where the learner is.
fn header(app: &App) -> String {
    common::screen_line(app, 0)
}

use attn_tutor::app::{Action, App, update};
use attn_tutor::attention::number::{format_fixed, format_number};
use attn_tutor::attention::{Attention, Cell, MatrixName, Rule, Step};
use attn_tutor::lesson::{BUILTIN, load_text};

const PARTS: [MatrixName; 4] = [
    MatrixName::OnlineMax,
    MatrixName::OnlineRescale,
    MatrixName::OnlineSum,
    MatrixName::OnlineAcc,
];

/// Four tokens, a causal mask, and scores that rise along each row, so that tiles of 1 rescale
/// in every tile after a row's first.
const FOUR_CAUSAL: &str = r#"format = 2
title = "Four causal keys"
tokens = ["a", "b", "c", "d"]
q = [[1, 0], [0, 1], [1, 1], [2, 1]]
k = [[0, 0], [1, 0], [1, 1], [2, 2]]
v = [[1, 2], [3, 4], [5, 6], [7, 8]]
mask = "causal"
tile = 1
"#;

/// What each part of the state should be after tile `tile` for row `row`, worked out from the
/// keys read so far (not by rescaling): m their largest score, l and acc their sums against m,
/// and rescale e^(m_before − m) where m rose, else 1.
fn expected(attention: &Attention, head: usize, tile: usize, cell: Cell) -> f64 {
    let scores = attention
        .matrix_in(attention.softmax_input(), head)
        .unwrap();
    let values = attention.matrix_in(MatrixName::V, head).unwrap();
    let last = *attention.tile_keys(tile).unwrap().end();
    let max_to = |last: Option<usize>| {
        last.map_or(f64::NEG_INFINITY, |last| {
            (0..=last)
                .map(|key| scores[(cell.row, key)])
                .fold(f64::NEG_INFINITY, f64::max)
        })
    };
    let m = max_to(Some(last));
    let before = max_to(attention.tile_keys(tile).unwrap().start().checked_sub(1));
    let exps = (0..=last).map(|key| {
        let s = scores[(cell.row, key)];
        let e = if s == f64::NEG_INFINITY {
            0.0
        } else {
            (s - m).exp()
        };
        (key, e)
    });
    match cell.matrix {
        MatrixName::OnlineMax => m,
        MatrixName::OnlineRescale if m > before => (before - m).exp(),
        MatrixName::OnlineRescale => 1.0,
        MatrixName::OnlineSum => exps.map(|(_, e)| e).sum(),
        MatrixName::OnlineAcc => exps.map(|(key, e)| e * values[(key, cell.col)]).sum(),
        other => panic!("{other:?} is no part of the online softmax"),
    }
}

fn same(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

/// Checks every cell of every part at every tile of every head; returns how many.
fn check_cells(name: &str, attention: &Attention) -> usize {
    let mut checked = 0;
    for head in 0..attention.heads().query {
        for tile in 0..attention.tile_count() {
            for part in PARTS {
                let matrix = attention.matrix_at(part, head, tile).unwrap();
                for row in 0..matrix.nrows() {
                    for col in 0..matrix.ncols() {
                        let cell = Cell::new(part, row, col).in_head(head).at_tile(tile);
                        let got = attention.value(cell).unwrap();
                        let want = expected(attention, head, tile, cell);
                        assert!(
                            same(got, want),
                            "{name} head {head} tile {tile} {part:?}[{row}, {col}]: {got} ≠ {want}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    checked
}

#[test]
fn every_cell_of_every_tile_is_the_state_after_that_tile_on_every_built_in_lesson() {
    let mut checked = 0;
    for builtin in BUILTIN {
        let mut lesson = load_text(builtin.name, None, builtin.text.to_string())
            .unwrap()
            .lesson;
        for tile in [1, 2, 3, lesson.key_len() + 1] {
            lesson.tile = tile;
            let attention = Attention::compute(&lesson);
            assert_eq!(attention.tile_count(), lesson.key_len().div_ceil(tile));
            checked += check_cells(builtin.name, &attention);
        }
    }
    assert!(checked > 1000, "only {checked} cells");
}

#[test]
fn masked_keys_and_a_fully_masked_row_keep_their_cells_at_minus_infinity_zero_and_one() {
    // Row b sees no key at all: every key of it is hidden.
    let text = FOUR_CAUSAL.replace(
        "mask = \"causal\"",
        "mask = [[0, -inf, 0, -inf], [-inf, -inf, -inf, -inf], [0, 0, 0, -inf], [0, 0, 0, 0]]",
    );
    let lesson = common::valid_lesson(&text);
    let attention = Attention::compute(&lesson);
    assert!(check_cells("masked", &attention) > 0);
    for tile in 0..4 {
        let cell = |part| Cell::new(part, 1, 0).at_tile(tile);
        assert_eq!(
            attention.value(cell(MatrixName::OnlineMax)),
            Some(f64::NEG_INFINITY)
        );
        assert_eq!(attention.value(cell(MatrixName::OnlineSum)), Some(0.0));
        assert_eq!(attention.value(cell(MatrixName::OnlineAcc)), Some(0.0));
        assert_eq!(attention.value(cell(MatrixName::OnlineRescale)), Some(1.0));
    }
}

#[test]
fn every_online_working_line_lands_on_its_cell_as_written() {
    let mut worked = 0;
    let mut lessons: Vec<(String, String)> = BUILTIN
        .iter()
        .map(|builtin| (builtin.name.to_string(), builtin.text.to_string()))
        .collect();
    lessons.push(("four-causal".into(), FOUR_CAUSAL.to_string()));
    lessons.push(("four-masked".into(), FOUR_CAUSAL.replace(
        "mask = \"causal\"",
        "mask = [[0, -inf, 0, -inf], [-inf, -inf, -inf, -inf], [-inf, 0, 0, -inf], [0, 0, 0, 0]]",
    )));
    for (name, text) in lessons {
        let loaded = load_text(&name, None, text).unwrap();
        let decimals = loaded.lesson.decimals;
        let attention = Attention::compute(&loaded.lesson);
        for head in 0..attention.heads().query {
            for tile in 0..attention.tile_count() {
                for part in PARTS {
                    let matrix = attention.matrix_at(part, head, tile).unwrap();
                    for row in 0..matrix.nrows() {
                        for col in 0..matrix.ncols() {
                            let cell = Cell::new(part, row, col).in_head(head).at_tile(tile);
                            let derivation = attention.derive(cell).unwrap();
                            assert!(matches!(derivation.rule, Rule::Online(_)), "{cell:?}");
                            let sides = derivation.explanation(&attention, decimals).sides;
                            let result = &sides.last().unwrap()[0];
                            let value = attention.value(cell).unwrap();
                            // The result is the cell, as every number is shown.
                            assert_eq!(
                                result,
                                &common::arithmetic::as_written(value, decimals),
                                "{name} {cell:?}"
                            );
                            // Every side between the formula and the result, worked out as
                            // written, gives the result (a side is the sum of its terms).
                            if sides.len() < 3 {
                                continue;
                            }
                            for side in &sides[1..sides.len() - 1] {
                                let joined = side.join(" + ");
                                if joined.starts_with("largest of the") {
                                    continue;
                                }
                                let arithmetic = common::arithmetic::evaluate(&joined)
                                    .unwrap_or_else(|| {
                                        panic!("{name} {cell:?}: cannot read {joined:?}")
                                    });
                                assert_eq!(
                                    format_fixed(arithmetic, decimals),
                                    format_fixed(result.parse().unwrap(), decimals),
                                    "{name} {cell:?}: {joined}: {}",
                                    derivation.explain(&attention, decimals)
                                );
                            }
                            worked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(worked > 400, "only {worked} lines worked out");
}

// --- keys ---------------------------------------------------------------------------------------

fn on_online(text: &str) -> App {
    let mut app = common::lesson_app("four-causal", text);
    common::go_to(&mut app, "online_softmax");
    app
}

fn tile(app: &App) -> usize {
    app.tutor().unwrap().tile
}

fn size(app: &App) -> usize {
    app.tutor().unwrap().attention.tile
}

#[test]
fn brackets_walk_the_tiles_and_the_header_says_which() {
    let mut app = on_online(FOUR_CAUSAL);
    assert_eq!(tile(&app), 0);
    assert!(
        header(&app).ends_with("Online softmax · tile 1 of 4"),
        "{}",
        header(&app)
    );
    update(&mut app, Action::NextToken);
    update(&mut app, Action::NextToken);
    assert_eq!(tile(&app), 2);
    assert!(header(&app).ends_with("tile 3 of 4"), "{}", header(&app));
    update(&mut app, Action::NextToken);
    update(&mut app, Action::NextToken);
    assert_eq!(tile(&app), 3, "the last tile is as far as ) goes");
    update(&mut app, Action::PreviousToken);
    assert_eq!(tile(&app), 2);
    // The screen names the tile's key and, at the last tile, the check against the output.
    update(&mut app, Action::NextToken);
    let screen = common::screen(&app, 120, 40);
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("Tile 4 of 4: key 4 (d)"), "{screen}");
    assert!(
        words.contains("acc / l = the output in every row"),
        "{screen}"
    );
}

#[test]
fn b_doubles_and_capital_b_halves_the_tile_and_u_undoes_it() {
    let mut app = on_online(FOUR_CAUSAL);
    update(&mut app, Action::LargerTiles);
    assert_eq!(size(&app), 2);
    assert_eq!(app.tutor().unwrap().lesson.tile, 2);
    assert!(header(&app).ends_with("tile 1 of 2"), "{}", header(&app));
    assert!(status(&app).contains("B = 2"), "{}", status(&app));
    update(&mut app, Action::LargerTiles);
    assert_eq!(size(&app), 4);
    update(&mut app, Action::LargerTiles);
    assert_eq!(size(&app), 4);
    assert_eq!(
        status(&app),
        "B = 4: one tile already holds all 4 keys, as the ordinary softmax reads them; B makes \
         the tiles smaller"
    );
    update(&mut app, Action::SmallerTiles);
    assert_eq!(size(&app), 2);
    update(&mut app, Action::Undo);
    assert_eq!(size(&app), 4);
    update(&mut app, Action::Undo);
    update(&mut app, Action::Undo);
    assert_eq!(size(&app), 1);
    update(&mut app, Action::SmallerTiles);
    assert_eq!(size(&app), 1);
    assert_eq!(
        status(&app),
        "B = 1: one key per tile, the smallest; b makes the tiles larger"
    );
}

#[test]
fn a_larger_tile_keeps_the_keys_on_screen_in_view() {
    let mut app = on_online(FOUR_CAUSAL);
    for _ in 0..3 {
        update(&mut app, Action::NextToken);
    }
    // Tile 4 of tiles of 1 is key 4; in tiles of 2 key 4 is in tile 2.
    update(&mut app, Action::LargerTiles);
    assert_eq!(tile(&app), 1);
}

#[test]
fn the_tile_keys_are_refused_off_the_step_and_in_practice_with_a_reason() {
    let mut app = common::lesson_app("four-causal", FOUR_CAUSAL);
    common::go_to(&mut app, "softmax");
    update(&mut app, Action::LargerTiles);
    assert_eq!(size(&app), 1);
    assert_eq!(
        status(&app),
        "b and B change the size of the tiles on the Online softmax step"
    );
    update(&mut app, Action::NextToken);
    assert_eq!(
        status(&app),
        "( and ) change the tile on the Online softmax step, and the token on the generation \
         steps of a lesson with decode = true"
    );
    common::go_to(&mut app, "online_softmax");
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::LargerTiles);
    assert_eq!(size(&app), 1);
    assert_eq!(
        status(&app),
        "The tiles keep their size in practice: x leaves practice, then b or B"
    );
}

#[test]
fn a_saved_lesson_keeps_the_tile_chosen_with_b() {
    let mut app = on_online(FOUR_CAUSAL);
    update(&mut app, Action::LargerTiles);
    update(&mut app, Action::LargerTiles);
    let saved = attn_tutor::lesson::lesson_to_toml(&app.tutor().unwrap().lesson);
    assert!(saved.contains("tile = 4\n"), "{saved}");
    assert_eq!(common::valid_lesson(&saved).tile, 4);
    // Back to the default, the file says nothing of the tile, and reads as 2 again.
    update(&mut app, Action::SmallerTiles);
    let saved = attn_tutor::lesson::lesson_to_toml(&app.tutor().unwrap().lesson);
    assert!(!saved.contains("tile"), "{saved}");
    assert_eq!(common::valid_lesson(&saved).tile, 2);
}

// --- practice -------------------------------------------------------------------------------

/// Types `text` as the answer for the selected cell and presses Enter.
fn answer(app: &mut App, text: &str) {
    let mut chars = text.chars();
    update(app, Action::StartAnswer(chars.next().unwrap()));
    for ch in chars {
        update(app, Action::Type(ch));
    }
    update(app, Action::Submit);
}

#[test]
fn practice_hides_m_rescale_and_l_and_takes_each_right_answer() {
    let mut app = on_online(FOUR_CAUSAL);
    update(&mut app, Action::NextToken);
    update(&mut app, Action::TogglePractice);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.step(), Step::OnlineSoftmax);
    let hidden = tutor.hidden_cells();
    for part in [
        MatrixName::OnlineMax,
        MatrixName::OnlineRescale,
        MatrixName::OnlineSum,
    ] {
        assert!(
            hidden
                .iter()
                .any(|cell| cell.matrix == part && cell.token == 1),
            "{part:?} at tile 2 is hidden: {hidden:?}"
        );
    }
    assert!(!tutor.is_hidden(Cell::new(MatrixName::Masked, 0, 0)));
    // Answer every hidden cell of the view with its value, as the screen would show it.
    let mut answered = Vec::new();
    while let Some(cell) = app.tutor().unwrap().selected_cell() {
        let tutor = app.tutor().unwrap();
        if !tutor.is_hidden(cell) || answered.contains(&cell) {
            break;
        }
        let value = tutor.attention.value(cell).unwrap();
        let typed = if value == f64::NEG_INFINITY {
            "-inf".to_string()
        } else {
            format_number(value, tutor.lesson.decimals)
        };
        answer(&mut app, &typed);
        assert!(
            !app.tutor().unwrap().is_hidden(cell),
            "{cell:?} = {typed} is revealed: {}",
            status(&app)
        );
        answered.push(cell);
    }
    for part in [
        MatrixName::OnlineMax,
        MatrixName::OnlineRescale,
        MatrixName::OnlineSum,
    ] {
        assert!(
            answered.iter().any(|cell| cell.matrix == part),
            "a {part:?} cell was asked: {answered:?}"
        );
    }
}

#[test]
fn a_slip_on_a_later_tile_is_looked_for_at_that_tile() {
    use attn_tutor::practice::{SlipKind, Verdict, check};
    // Keys a, b, c, d, one per tile; row b sees a and b, and its scores for c and d are hidden.
    let lesson = common::valid_lesson(FOUR_CAUSAL);
    let attention = Attention::compute(&lesson);
    let l = |tile| Cell::new(MatrixName::OnlineSum, 1, 0).at_tile(tile);
    // The l of the tile before (key a alone) is no slip of the mask's.
    let before = attention.value(l(0)).unwrap();
    let after = attention.value(l(1)).unwrap();
    assert_ne!(format_number(before, 3), format_number(after, 3));
    match check(&attention, l(1), before, 3) {
        Some(Verdict::Wrong { slip, .. }) => assert!(
            slip.as_ref()
                .is_none_or(|slip| slip.kind != SlipKind::ForgotMask),
            "{slip:?}"
        ),
        other => panic!("{other:?}"),
    }
    // Counting the hidden key c at the third tile is the mask forgotten.
    let scores = attention.matrix(MatrixName::Scaled).unwrap();
    let m = (0..3)
        .map(|key| scores[(1, key)])
        .fold(f64::NEG_INFINITY, f64::max);
    let unmasked: f64 = (0..3).map(|key| (scores[(1, key)] - m).exp()).sum();
    match check(&attention, l(2), unmasked, 3) {
        Some(Verdict::Wrong {
            slip: Some(slip), ..
        }) => {
            assert_eq!(slip.kind, SlipKind::ForgotMask);
            assert!(
                slip.describe().contains("hidden key"),
                "{}",
                slip.describe()
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn undo_and_redo_of_a_tile_size_stay_at_the_keys_on_screen_and_mark_nothing() {
    let mut app = on_online(FOUR_CAUSAL);
    for _ in 0..3 {
        update(&mut app, Action::NextToken);
    }
    // Tile 4 of 4 (key d); in tiles of 2, key d is in tile 2.
    update(&mut app, Action::LargerTiles);
    assert_eq!((size(&app), tile(&app)), (2, 1));
    update(&mut app, Action::Undo);
    assert_eq!(
        (size(&app), tile(&app)),
        (1, 2),
        "key c, the first of keys c–d"
    );
    update(&mut app, Action::Redo);
    assert_eq!((size(&app), tile(&app)), (2, 1));
    let tutor = app.tutor().unwrap();
    for part in PARTS {
        for row in 0..4 {
            let cell = Cell::new(part, row, 0).at_tile(1);
            assert!(!tutor.changed.contains(&cell), "{cell:?} is marked");
        }
    }
}

#[test]
fn another_tile_in_practice_does_not_show_the_last_tiles_answer() {
    let mut app = on_online(FOUR_CAUSAL);
    update(&mut app, Action::TogglePractice);
    let cell = app.tutor().unwrap().selected_cell().unwrap();
    let value = app.tutor().unwrap().attention.value(cell).unwrap();
    answer(&mut app, &format_number(value, 3));
    assert!(status(&app).contains("Right") || common::screen(&app, 80, 24).contains("Right"));
    update(&mut app, Action::NextToken);
    let screen = common::screen(&app, 80, 24);
    assert!(!screen.contains("Right:"), "{screen}");
    assert!(
        app.tutor()
            .unwrap()
            .practice
            .as_ref()
            .unwrap()
            .feedback
            .is_none()
    );
}

#[test]
fn a_row_masked_so_far_and_a_row_masked_throughout_are_said_so() {
    let text = FOUR_CAUSAL.replace(
        "mask = \"causal\"",
        "mask = [[0, 0, 0, 0], [-inf, -inf, -inf, -inf], [-inf, 0, 0, -inf], [0, 0, 0, 0]]",
    );
    let lesson = common::valid_lesson(&text);
    let attention = Attention::compute(&lesson);
    let explain = |cell: Cell| attention.derive(cell).unwrap().explain(&attention, 3);
    // Row c's first visible key is in tile 2: m rises from -inf, with nothing to rescale.
    let m = explain(Cell::new(MatrixName::OnlineMax, 2, 0).at_tile(1));
    assert!(m.contains("the row's first visible key"), "{m}");
    assert!(!m.contains("so l and acc so far are rescaled"), "{m}");
    // Row b sees no key: at the last tile l = 0, and its output is 0 rather than acc / l.
    let l = explain(Cell::new(MatrixName::OnlineSum, 1, 0).at_tile(3));
    assert!(l.contains("l = 0, there is no acc / l to take"), "{l}");
    let words = attn_tutor::ui::online::check_words(&attention, Some(0));
    assert!(
        words.contains("the row whose every key is masked has l = 0 and output 0"),
        "{words}"
    );
}

#[test]
fn the_last_tiles_l_is_called_the_softmax_denominator_over_e_to_the_row_maximum() {
    // The Softmax step's working divides by Σ e^s itself (backward: 4.1133 / 5.1133), while l
    // sums e^(s − m): calling l that denominator was false whenever m ≠ 0.
    let builtin = BUILTIN.iter().find(|b| b.name == "backward").unwrap();
    let lesson = common::valid_lesson(builtin.text);
    let attention = Attention::compute(&lesson);
    let last = attention.tile_count() - 1;
    for row in 0..lesson.seq_len() {
        let l_cell = Cell::new(MatrixName::OnlineSum, row, 0).at_tile(last);
        let l = attention.value(l_cell).unwrap();
        let m = attention
            .value(Cell::new(MatrixName::OnlineMax, row, 0).at_tile(last))
            .unwrap();
        let scaled = attention
            .value(Cell::new(MatrixName::Scaled, row, 0))
            .unwrap();
        let weight = attention
            .value(Cell::new(MatrixName::Weights, row, 0))
            .unwrap();
        let denominator = scaled.exp() / weight;
        assert!((l * m.exp() - denominator).abs() < 1e-9 * denominator);
        assert!(
            m != 0.0,
            "the row's maximum is not 0, so l is not Σ e^s itself"
        );
        let words = attention.derive(l_cell).unwrap().explain(&attention, 4);
        assert!(
            words.contains("the Softmax step's denominator Σ e^s divided by e^m"),
            "{words}"
        );
    }
}
