//! A lesson of GPT-2 small's dimensions (16 tokens, d_model 768, d_k = d_v = 64, and twelve
//! heads with a 768 × 768 W_o) reads at 80×24: a 768- or 64-term working is its largest terms
//! and the others' sum, whole with its result in the working's rows, and a 768-column matrix
//! says which of its columns are on screen.

use crate::common::{fixture, go_to, lesson_app, screen};

use attn_tutor::app::{Action, App, Direction, update};

fn big(name: &str) -> App {
    let text = std::fs::read_to_string(fixture(&format!("{name}.toml"))).unwrap();
    lesson_app(name, &text)
}

/// The rows of the working section, from its rule to the next rule.
fn working_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|line| !line.starts_with("── How "))
        .skip(1)
        .take_while(|line| !line.starts_with("──"))
        .map(|line| line.trim_end().to_string())
        .collect()
}

/// The working on screen holds the formula, one line of products ending in the others' sum,
/// and the result, with nothing cut.
fn assert_whole_working(screen: &str, result: &str) {
    let rows = working_rows(screen);
    assert!(
        !rows.iter().any(|row| row.contains("more lines")),
        "cut:\n{screen}"
    );
    let products: Vec<&String> = rows.iter().filter(|row| row.contains(" × ")).collect();
    assert_eq!(products.len(), 1, "one line of products:\n{screen}");
    assert!(
        products[0].contains(" more terms (sum ") || products[0].contains(" more (sum "),
        "the others' sum on the products' line:\n{screen}"
    );
    assert!(
        rows.iter()
            .any(|row| row.trim_start() == format!("= {result}")),
        "the result {result}:\n{screen}"
    );
    assert!(
        rows.iter().any(|row| row.contains("largest")),
        "says the terms are the largest:\n{screen}"
    );
}

#[test]
fn a_768_term_projection_and_a_64_term_score_are_worked_whole_at_80x24() {
    let mut app = big("big-one-head");
    go_to(&mut app, "projection");
    let at_80 = screen(&app, 80, 24);
    assert!(at_80.contains("Q[When, 1] = x_When · W_q[:, 1]"), "{at_80}");
    assert_whole_working(&at_80, "-74.516");
    update(&mut app, Action::Move(Direction::Right));
    assert_whole_working(&screen(&app, 80, 24), "-0.643");
    assert_whole_working(&screen(&app, 120, 40), "-0.643");
    go_to(&mut app, "scores");
    let scores = screen(&app, 80, 24);
    assert!(
        scores.contains("scores[When, When] = q_When · k_When"),
        "{scores}"
    );
    assert_whole_working(&scores, "6313.547");
    // A head's mark makes the name longer: the products still take one line.
    let mut app = big("big-twelve-heads");
    go_to(&mut app, "scores");
    let scores = screen(&app, 80, 24);
    assert!(
        scores.contains("scores⁽¹⁾[When, When] = q⁽¹⁾_When · k⁽¹⁾_When"),
        "{scores}"
    );
    assert_whole_working(&scores, "-12859.700");
}

#[test]
fn a_768_column_matrix_says_which_columns_are_shown_and_pages_with_the_cursor() {
    let mut app = big("big-one-head");
    let first = screen(&app, 80, 24);
    assert!(first.contains("cols 1–10 of 768"), "{first}");
    for _ in 0..10 {
        update(&mut app, Action::Move(Direction::Right));
    }
    let next = screen(&app, 80, 24);
    assert!(next.contains("cols 11–20 of 768"), "{next}");
    assert!(next.contains("How X[When, 11] is computed"), "{next}");
}

#[test]
fn twelve_heads_output_projection_is_one_heads_part_and_the_others_then_its_largest_terms_at_80x24()
{
    let mut app = big("big-twelve-heads");
    go_to(&mut app, "output_projection");
    for (head, part) in [(1, "-269.622"), (2, "2.551")] {
        if head == 2 {
            update(&mut app, Action::NextHead);
        }
        let drawn = screen(&app, 80, 24);
        let rows = working_rows(&drawn);
        assert!(
            !rows.iter().any(|row| row.contains("more lines")),
            "cut:\n{drawn}"
        );
        let at = |text: &str| rows.iter().position(|row| row.contains(text));
        let sum = at(&format!("= head {head}'s part + the other 11 heads' parts"));
        let terms = at(" more terms (sum ");
        let result = at(&format!("= {part}"));
        assert!(
            sum.is_some() && sum < terms && terms < result,
            "the parts' sum, then the head's terms and its part:\n{drawn}"
        );
        assert!(
            rows.iter()
                .any(|row| row.contains("The largest of the 64 terms")
                    || row.contains("largest of the 64 terms, largest first")),
            "{drawn}"
        );
        assert!(
            rows.iter().any(|row| row.trim_start() == "= -652.578"),
            "{drawn}"
        );
    }
}

#[test]
fn a_page_one_column_wide_says_which_column_it_is() {
    // V's operand column on Output, at 120×40: one of V's 64 columns fits beside the weights.
    let mut app = big("big-one-head");
    go_to(&mut app, "output");
    for _ in 0..30 {
        update(&mut app, Action::Move(Direction::Right));
    }
    let drawn = screen(&app, 120, 40);
    let caption = drawn.lines().nth(2).unwrap_or_default();
    assert!(caption.contains("V col 31 of 64"), "{caption}");
    assert!(!caption.contains("31–31"), "{caption}");
}

#[test]
fn a_panel_narrower_than_its_numbers_shows_fewer_decimals_not_dots() {
    // Online softmax at 80×24: masked, m, rescale and l side by side leave m one column short
    // of -123.378; its numbers were "…", now to fewer decimals with the caption's ≈.
    let mut app = big("big-one-head");
    go_to(&mut app, "online_softmax");
    let drawn = screen(&app, 80, 24);
    let panels: Vec<&str> = drawn.lines().skip(2).take(9).collect();
    assert!(
        !panels
            .iter()
            .any(|line| line.split_whitespace().any(|word| word == "…")),
        "a number shown as …:\n{drawn}"
    );
    assert!(
        panels[0].contains("m ≈"),
        "the caption says m is rounded:\n{drawn}"
    );
    assert!(drawn.contains("Mary    -123.4"), "{drawn}");
}

#[test]
fn the_first_hint_of_a_long_sum_promises_its_largest_terms_not_every_term() {
    let mut app = big("big-one-head");
    go_to(&mut app, "projection");
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::Hint);
    let said = crate::common::status(&app);
    assert!(
        said.contains(
            "Hint 1 of 3 for Q[When, 1]; t again for the largest terms and the others' sum"
        ),
        "{said}"
    );
}

#[test]
fn the_output_projections_sum_of_head_parts_writes_the_output_bias_too() {
    // Two heads of d_v 7 (14 terms, written as the heads' parts) and b_o: output[a, 1] = 7·1
    // + 7·2 + 0.5, each head's part and then the bias, as the line of names above says.
    let text = format!(
        "format = 2\ntitle = \"biased\"\ntokens = [\"a\"]\nheads = 2\nq = [[1, 1]]\n\
         k = [[1, 1]]\nv = [[{}]]\nw_o = [{}]\nb_o = [0.5]\n",
        ["1"; 7]
            .into_iter()
            .chain(["2"; 7])
            .collect::<Vec<_>>()
            .join(", "),
        vec!["[1]"; 14].join(", ")
    );
    let mut app = lesson_app("biased", &text);
    go_to(&mut app, "output_projection");
    let drawn = screen(&app, 80, 24);
    let rows = working_rows(&drawn);
    let names = rows
        .iter()
        .position(|row| row.contains("= head 1's part + head 2's part + b_o[1]"))
        .unwrap_or_else(|| panic!("the parts named:\n{drawn}"));
    let numbers: Vec<&str> = rows[names + 1].split_whitespace().collect();
    assert_eq!(numbers, ["=", "7", "+", "14", "+", "0.5"], "{drawn}");
}
