//! One key map: every key of the table does in its place what the table says, no two keys of a
//! place answer the same press, every key a screen answers to is named in its help, the bottom
//! line's hints name keys that do what they say there, and the README's key table is the help's.

use attn_tutor::app::{
    Action, App, Audience, Classroom, Direction, Follow, Overlay, Prompt, PromptFor, Question,
    update,
};
use attn_tutor::attention::Step;
use attn_tutor::input::action_for;
use attn_tutor::keymap::{
    self, Code, Does, Entry, Footer, KEY_MAP, KEYS, Key, Mods, Place, places,
};
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

const AREA: Rect = Rect::new(0, 0, 80, 24);

fn open(name: &str) -> App {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|entry| entry.name == name).unwrap();
    App::new(entries, Some(index))
}

fn picker() -> App {
    App::new(App::builtin_entries(), None)
}

fn lesson() -> App {
    open("cat-sleeps")
}

/// Practice on, the cursor on a hidden cell.
fn predicting() -> App {
    let mut app = lesson();
    app.start_practice();
    for _ in 0..20 {
        if places(&app).contains(&Place::Predicting) {
            return app;
        }
        update(&mut app, Action::Move(Direction::Right));
    }
    panic!("no hidden cell found");
}

fn with(mut app: App, overlay: Overlay) -> App {
    app.overlay = overlay;
    app
}

fn student(mut app: App, follow: Follow) -> App {
    app.classroom = Some(Classroom::Student {
        follow,
        latest: None,
    });
    app
}

fn presenter(mut app: App) -> App {
    app.classroom = Some(Classroom::Presenter {
        audience: Audience::default(),
        join: "ssh -p 2222 class@127.0.0.1".to_string(),
        host_key: None,
    });
    app
}

/// The training screen of a run just started.
fn training() -> App {
    App::training_app(attn_tutor::app::TrainScreen::new(
        attn_tutor::train::TrainConfig::default(),
        None,
    ))
}

/// A state in which `place` is the first to take the keys (after what applies anywhere).
fn state_for(place: Place) -> App {
    let question = |question| with(lesson(), Overlay::Question(question));
    let app = match place {
        Place::Anywhere | Place::Lesson => lesson(),
        Place::Help => with(lesson(), Overlay::Help),
        Place::Prompt => with(
            lesson(),
            Overlay::Prompt(Prompt {
                purpose: PromptFor::SavePath,
                input: String::new(),
            }),
        ),
        Place::Question => question(Question::Replace {
            path: "lesson.toml".into(),
        }),
        Place::Resume => question(Question::Resume { step_index: 1 }),
        Place::Picker => picker(),
        Place::Predicting => predicting(),
        Place::Polled => {
            let mut teacher = presenter(lesson());
            update(&mut teacher, Action::AskClass);
            let mut class = student(picker(), Follow::Following);
            let shown = attn_tutor::app::Presented::of(&teacher, 1);
            update(&mut class, Action::Presenter(std::sync::Arc::new(shown)));
            class
        }
        Place::Lab => {
            let mut app = picker();
            attn_tutor::app::update(&mut app, attn_tutor::app::Action::OpenLab);
            app
        }
        Place::Training => training(),
    };
    assert_eq!(
        places(&app).iter().find(|found| **found != Place::Anywhere),
        Some(&place)
            .filter(|place| **place != Place::Anywhere)
            .or(Some(&Place::Lesson)),
    );
    app
}

fn press(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent {
        code,
        modifiers,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    })
}

/// Presses of `key` (with the modifiers it asks for), and the character each carries.
fn examples(key: &Key) -> Vec<(Event, char)> {
    let modifiers = match key.mods {
        Mods::Control => KeyModifiers::CONTROL,
        Mods::Shift => KeyModifiers::SHIFT,
        Mods::Any | Mods::NoControl | Mods::NoControlNoShift | Mods::Typed => KeyModifiers::NONE,
    };
    let chars = |chars: Vec<char>| {
        chars
            .into_iter()
            .map(|ch| (press(KeyCode::Char(ch), modifiers), ch))
            .collect()
    };
    let wheel = |kind| {
        let mouse = MouseEvent {
            kind,
            column: 0,
            row: 0,
            modifiers,
        };
        vec![(Event::Mouse(mouse), '\0')]
    };
    match key.code {
        Code::Key(KeyCode::Char(ch)) => chars(vec![ch]),
        Code::Key(code) => vec![(press(code, modifiers), '\0')],
        Code::Chars(first, last) => chars((first..=last).collect()),
        Code::StepNumber => chars(('1'..='9').collect()),
        Code::AnyChar => chars(vec!['a', 'Z', '7', ' ', 'é', '?']),
        Code::WheelUp => wheel(MouseEventKind::ScrollUp),
        Code::WheelDown => wheel(MouseEventKind::ScrollDown),
        // Where a click lands decides: tests/tui_update.rs clicks cells and lessons.
        Code::Click => Vec::new(),
    }
}

#[test]
fn every_key_of_the_table_does_in_its_place_what_the_table_says() {
    let mut checked = 0;
    for entry in KEY_MAP {
        for place in entry.places {
            let app = state_for(*place);
            for key in entry.keys.iter().copied().flatten() {
                let Does::Act(action) = key.does else {
                    continue;
                };
                for (event, ch) in examples(key) {
                    assert_eq!(
                        action_for(&event, &app, AREA),
                        Some(action(ch)),
                        "{place:?}: {event:?} ({})",
                        entry.label(7)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 90, "{checked}");
}

/// Every key code the tests press, with every combination of modifiers.
fn all_presses() -> Vec<KeyEvent> {
    let mut codes: Vec<KeyCode> = (' '..='~').chain(['é', '€']).map(KeyCode::Char).collect();
    codes.extend([
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::F(1),
    ]);
    let modifiers = [
        KeyModifiers::SHIFT,
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
        KeyModifiers::SUPER,
    ];
    let mut presses = Vec::new();
    for code in codes {
        for bits in 0..16usize {
            let held = (0..4)
                .filter(|bit| bits & (1 << bit) != 0)
                .fold(KeyModifiers::NONE, |held, bit| held | modifiers[bit]);
            presses.push(KeyEvent::new(code, held));
        }
    }
    presses
}

#[test]
fn no_two_keys_of_one_place_answer_the_same_press() {
    let places = [
        Place::Anywhere,
        Place::Help,
        Place::Prompt,
        Place::Question,
        Place::Resume,
        Place::Picker,
        Place::Predicting,
        Place::Lesson,
        Place::Lab,
        Place::Training,
    ];
    for place in places {
        for pressed in all_presses() {
            let answering: Vec<String> = KEY_MAP
                .iter()
                .filter(|entry| entry.applies_in(place))
                .flat_map(|entry| entry.keys.iter().copied().flatten())
                .filter(|key| key.matches(pressed))
                .map(|key| key.name(7))
                .collect();
            assert!(
                answering.len() <= 1,
                "{place:?}: {pressed:?} is {answering:?}"
            );
        }
    }
}

/// How the help would name a press: without the modifiers that change nothing here.
fn name(pressed: KeyEvent, app: &App) -> String {
    let action = action_for(&Event::Key(pressed), app, AREA);
    let mut modifiers = pressed.modifiers;
    for modifier in [
        KeyModifiers::SUPER,
        KeyModifiers::ALT,
        KeyModifiers::CONTROL,
        KeyModifiers::SHIFT,
    ] {
        let without = KeyEvent::new(pressed.code, modifiers - modifier);
        if action_for(&Event::Key(without), app, AREA) == action {
            modifiers -= modifier;
        }
    }
    let key = match pressed.code {
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::Char(ch) => ch.to_string(),
        KeyCode::Up => "↑".to_string(),
        KeyCode::Down => "↓".to_string(),
        KeyCode::Left => "←".to_string(),
        KeyCode::Right => "→".to_string(),
        KeyCode::PageUp => "PgUp".to_string(),
        KeyCode::PageDown => "PgDn".to_string(),
        KeyCode::BackTab => "Shift-Tab".to_string(),
        other => other.to_string(),
    };
    if modifiers.contains(KeyModifiers::CONTROL) {
        format!("Ctrl-{key}")
    } else if modifiers.contains(KeyModifiers::SHIFT) && !matches!(pressed.code, KeyCode::Char(_)) {
        format!("Shift-{key}")
    } else {
        key
    }
}

/// The keys named in the help's key column (and the lesson list's line, on the picker).
fn named_in_help(app: &App) -> Vec<String> {
    let mut named: Vec<String> = KEYS
        .iter()
        .flat_map(|(keys, _)| keys.split_whitespace().map(str::to_string))
        .collect();
    if app.tutor().is_none() {
        // ` In the lesson list: ↑↓ choose, Enter opens, q quits.`: the first word of each item.
        let line = keymap::picker_help();
        let items = line.trim_end_matches('.').split(": ").nth(1).unwrap();
        for item in items.split(", ") {
            let keys = item.split(' ').next().unwrap();
            named.push(keys.to_string());
            named.extend(keys.chars().map(String::from));
        }
    }
    named
}

/// Keys the help leaves out, each doing what a key it names does.
const UNNAMED: [&str; 1] = [
    // The reverse of Tab, as p; naming it would widen the help's key column.
    "Shift-Tab",
];

fn every_key_answered_is_named(app: &App, screen: &str) {
    let named = named_in_help(app);
    // A step number is one digit: the help names at most `1 … 9`.
    let steps = format!("1 … {}", Step::ALL.len().min(9));
    assert!(
        KEYS.iter().any(|(keys, _)| *keys == steps),
        "the help names the step keys as {steps}"
    );
    let mut unnamed = Vec::new();
    for pressed in all_presses() {
        if action_for(&Event::Key(pressed), app, AREA).is_none() {
            continue;
        }
        let name = name(pressed, app);
        // A step number, from 1 up, is in `1 … N` (past the last step it says how many there are).
        if matches!(pressed.code, KeyCode::Char('1'..='9')) && app.tutor().is_some() {
            continue;
        }
        if !named.contains(&name) && !unnamed.contains(&name) {
            unnamed.push(name);
        }
    }
    assert_eq!(
        unnamed,
        UNNAMED[..],
        "{screen}: keys the help does not name"
    );
}

#[test]
fn every_key_a_lesson_screen_answers_to_is_named_in_its_help() {
    every_key_answered_is_named(&lesson(), "a lesson");
}

#[test]
fn every_key_the_training_screen_answers_to_is_named_in_its_help() {
    let app = training();
    let rows = keymap::help_rows_for(&app);
    let named: Vec<&str> = rows
        .iter()
        .flat_map(|(keys, _)| keys.split_whitespace())
        .collect();
    for pressed in all_presses() {
        if action_for(&Event::Key(pressed), &app, AREA).is_some() {
            let name = name(pressed, &app);
            assert!(named.contains(&name.as_str()), "the training help: {name}");
        }
    }
    assert!(named.contains(&"Space"), "{named:?}");
}

#[test]
fn every_key_the_lesson_list_answers_to_is_named_in_its_help() {
    let picker = picker();
    // The picker answers to no Shift-Tab; nothing is left out there.
    let named = named_in_help(&picker);
    for pressed in all_presses() {
        if action_for(&Event::Key(pressed), &picker, AREA).is_some() {
            let name = name(pressed, &picker);
            assert!(named.contains(&name), "the lesson list's help: {name}");
        }
    }
}

/// Whether `short` names keys of `entry`: each of its words (between spaces or slashes, `or`
/// aside) is a key's name, or each of its characters is.
fn names_keys_of(short: &str, entry: &Entry) -> bool {
    let names: Vec<String> = entry
        .keys
        .iter()
        .copied()
        .flatten()
        .map(|key| key.name(7))
        .collect();
    short
        .split([' ', '/'])
        .filter(|word| !word.is_empty() && *word != "or")
        .all(|word| {
            names.iter().any(|name| name == word)
                || word.chars().all(|ch| names.contains(&ch.to_string()))
        })
}

#[test]
fn every_short_name_on_the_bottom_line_names_keys_of_its_entry() {
    for entry in KEY_MAP {
        assert!(
            names_keys_of(entry.short, entry),
            "`{}` names other keys than {}",
            entry.short,
            entry.label(7)
        );
    }
}

#[test]
fn every_key_hint_on_the_bottom_line_names_keys_that_do_that_there() {
    let states = [
        (Footer::Picker, picker()),
        (Footer::StudentPicker, student(picker(), Follow::Free)),
        (Footer::Lesson, lesson()),
        (Footer::StudentLesson, student(lesson(), Follow::Free)),
        (Footer::PresenterLesson, presenter(lesson())),
        (Footer::Practice, predicting()),
        (Footer::Following, student(lesson(), Follow::Following)),
        (Footer::Locked, student(lesson(), Follow::Locked)),
        (Footer::Training, training()),
        (Footer::TrainingPaused, {
            let mut app = training();
            update(&mut app, Action::TogglePause);
            app
        }),
        (Footer::TrainingDone, {
            let mut app = training();
            update(
                &mut app,
                Action::Training(attn_tutor::app::TrainingNews::Finished),
            );
            app
        }),
    ];
    let prompt = state_for(Place::Prompt);
    for (footer, app) in states.iter().chain([&(Footer::Prompt, prompt)]) {
        if *footer != Footer::Prompt {
            assert_eq!(keymap::footer(app), *footer);
        }
        for hint in keymap::hints(*footer) {
            assert!(!hint.words.is_empty());
            for key in hint.entry.keys.iter().copied().flatten() {
                let Does::Act(action) = key.does else {
                    continue;
                };
                for (event, ch) in examples(key) {
                    assert_eq!(
                        action_for(&event, app, AREA),
                        Some(action(ch)),
                        "{footer:?}: `{} {}` is {event:?}",
                        hint.entry.short,
                        hint.words
                    );
                }
            }
        }
    }
}

#[test]
fn the_readme_key_table_has_a_row_for_every_row_of_the_help_with_the_same_keys() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md is readable");
    // `| `n` `p`, `Tab` `PgDn` `PgUp` | next step, previous step |` → "n p Tab PgDn PgUp".
    let readme_keys: Vec<String> = readme
        .lines()
        .filter(|line| line.starts_with("| `"))
        .filter_map(|line| line.split(" | ").next())
        .map(|keys| {
            keys.trim_start_matches("| ")
                .replace(['`', ','], " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for (keys, what) in KEYS {
        if keys.is_empty() {
            continue;
        }
        let keys = keys.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            readme_keys.contains(&keys),
            "README.md's key table has no row for `{keys}` ({what})"
        );
    }
}
