//! The key map moved into one table without changing what any key does: the dispatch as it was
//! written by hand before the table (frozen here) and the table's agree on every key, with every
//! modifier, in every state. This file proves the move; a key changed on purpose later changes
//! it here too, or drops this file.

use attn_tutor::app::{Action, App, Direction, Overlay, Prompt, PromptFor, Question, update};
use attn_tutor::input::action_for;
use attn_tutor::input::keymap::{Place, places};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use ratatui::layout::Rect;

fn open(name: &str) -> App {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|entry| entry.name == name).unwrap();
    App::new(entries, Some(index))
}

/// The app in each state that takes keys differently.
fn states() -> Vec<(&'static str, App)> {
    let picker = App::new(App::builtin_entries(), None);
    let lesson = open("cat-sleeps");
    let mut predicting = open("cat-sleeps");
    predicting.start_practice();
    for _ in 0..20 {
        if places(&predicting).contains(&Place::Predicting) {
            break;
        }
        update(&mut predicting, Action::Move(Direction::Right));
    }
    assert!(places(&predicting).contains(&Place::Predicting));
    let with = |app: &App, overlay: Overlay| {
        let mut app = app.clone();
        app.overlay = overlay;
        app
    };
    let prompt = Overlay::Prompt(Prompt {
        purpose: PromptFor::SavePath,
        input: String::new(),
    });
    let question = Overlay::Question(Question::Replace {
        path: "x.toml".into(),
    });
    let resume = Overlay::Question(Question::Resume { step_index: 1 });
    vec![
        ("picker", with(&picker, Overlay::None)),
        ("picker help", with(&picker, Overlay::Help)),
        ("lesson", lesson.clone()),
        ("lesson help", with(&lesson, Overlay::Help)),
        ("prompt", with(&lesson, prompt)),
        ("question", with(&lesson, question)),
        ("resume", with(&lesson, resume.clone())),
        ("predicting", predicting.clone()),
        ("predicting resume", with(&predicting, resume)),
    ]
}

fn presses() -> Vec<KeyEvent> {
    let mut codes: Vec<KeyCode> = (' '..='~')
        .chain(['é', '€', '…'])
        .map(KeyCode::Char)
        .collect();
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
        KeyCode::Insert,
        KeyCode::F(1),
        KeyCode::F(12),
        KeyCode::Null,
    ]);
    let mut presses = Vec::new();
    for code in codes {
        for bits in 0..16u8 {
            let mut modifiers = KeyModifiers::NONE;
            for (bit, modifier) in [
                KeyModifiers::SHIFT,
                KeyModifiers::CONTROL,
                KeyModifiers::ALT,
                KeyModifiers::SUPER,
            ]
            .into_iter()
            .enumerate()
            {
                if bits & (1 << bit) != 0 {
                    modifiers |= modifier;
                }
            }
            for kind in [
                KeyEventKind::Press,
                KeyEventKind::Repeat,
                KeyEventKind::Release,
            ] {
                presses.push(KeyEvent {
                    code,
                    modifiers,
                    kind,
                    state: KeyEventState::NONE,
                });
            }
        }
    }
    presses
}

#[test]
fn every_key_with_every_modifier_does_in_every_state_what_it_did_before_the_table() {
    let area = Rect::new(0, 0, 80, 24);
    let mut checked = 0;
    for (state, app) in states() {
        for press in presses() {
            let before = if press.kind == KeyEventKind::Release {
                None
            } else {
                before::key_action(press, &app)
            };
            let now = action_for(&Event::Key(press), &app, area);
            assert_eq!(now, before, "{state}: {press:?}");
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn every_click_and_wheel_does_in_every_state_what_it_did_before_the_table() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let kinds = [
        MouseEventKind::Down(MouseButton::Left),
        MouseEventKind::Down(MouseButton::Right),
        MouseEventKind::Up(MouseButton::Left),
        MouseEventKind::Drag(MouseButton::Left),
        MouseEventKind::Moved,
        MouseEventKind::ScrollUp,
        MouseEventKind::ScrollDown,
        MouseEventKind::ScrollLeft,
    ];
    let mut clicks_that_selected = 0;
    for area in [Rect::new(0, 0, 80, 24), Rect::new(0, 0, 60, 20)] {
        for (state, app) in states() {
            for kind in kinds {
                for row in 0..area.height {
                    for column in (0..area.width).step_by(3) {
                        let mouse = MouseEvent {
                            kind,
                            column,
                            row,
                            modifiers: KeyModifiers::NONE,
                        };
                        let before = before::mouse_action(mouse, &app, area);
                        let now = action_for(&Event::Mouse(mouse), &app, area);
                        clicks_that_selected += usize::from(matches!(
                            now,
                            Some(Action::Select { .. } | Action::Pick(_))
                        ));
                        assert_eq!(now, before, "{state} {area:?}: {mouse:?}");
                    }
                }
            }
        }
    }
    assert!(clicks_that_selected > 100, "{clicks_that_selected}");
}

/// `src/input/mod.rs` before the key map table, as it was.
mod before {
    use attn_tutor::app::{Action, App, Direction, Overlay, Question};
    use attn_tutor::ui;
    use crossterm::event::{
        KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
    };
    use ratatui::layout::Rect;

    pub fn key_action(key: KeyEvent, app: &App) -> Option<Action> {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        if control && matches!(key.code, KeyCode::Char('c')) {
            return Some(Action::Quit);
        }
        match &app.overlay {
            Overlay::Help => match key.code {
                KeyCode::Char('?' | 'q') | KeyCode::Esc | KeyCode::Enter => {
                    Some(Action::ToggleHelp)
                }
                _ => None,
            },
            Overlay::Prompt(_) => match key.code {
                KeyCode::Enter => Some(Action::Submit),
                KeyCode::Esc => Some(Action::Cancel),
                KeyCode::Backspace => Some(Action::Backspace),
                KeyCode::Char('u') if control => Some(Action::ClearInput),
                KeyCode::Char(ch) if !control && !key.modifiers.contains(KeyModifiers::ALT) => {
                    Some(Action::Type(ch))
                }
                _ => None,
            },
            Overlay::Question(Question::Resume { .. }) => match key.code {
                KeyCode::Enter => Some(Action::Submit),
                KeyCode::Esc => Some(Action::Cancel),
                _ => lesson_key(key, app, control),
            },
            Overlay::Question(_) => match key.code {
                KeyCode::Enter => Some(Action::Submit),
                KeyCode::Esc => Some(Action::Cancel),
                KeyCode::Char(ch) if !control => Some(Action::Answer(ch)),
                _ => None,
            },
            Overlay::None if app.tutor.is_none() => picker_key(key),
            Overlay::None => lesson_key(key, app, control),
        }
    }

    pub fn mouse_action(mouse: MouseEvent, app: &App, area: Rect) -> Option<Action> {
        if app.overlay != Overlay::None || !ui::fits(area) {
            return None;
        }
        match (mouse.kind, &app.tutor) {
            (MouseEventKind::Down(MouseButton::Left), Some(tutor)) => {
                let layout = ui::layout::tutor_layout(tutor, area);
                ui::layout::hit(&layout, mouse.column, mouse.row)
                    .map(|(matrix, row, col)| Action::Select { matrix, row, col })
            }
            (MouseEventKind::Down(MouseButton::Left), None) => {
                let (list, first) = ui::picker::list_area(app, area);
                let inside = mouse.row >= list.y && mouse.row < list.bottom();
                let index = first + usize::from(mouse.row.saturating_sub(list.y));
                (inside && index < app.picker.len()).then_some(Action::Pick(index))
            }
            (MouseEventKind::ScrollUp, Some(_)) => Some(Action::ScrollNarration(-1)),
            (MouseEventKind::ScrollDown, Some(_)) => Some(Action::ScrollNarration(1)),
            (MouseEventKind::ScrollUp, None) => Some(Action::Move(Direction::Up)),
            (MouseEventKind::ScrollDown, None) => Some(Action::Move(Direction::Down)),
            _ => None,
        }
    }

    fn lesson_key(key: KeyEvent, app: &App, control: bool) -> Option<Action> {
        let predicting = app.tutor.as_ref().is_some_and(|tutor| {
            tutor
                .selected_cell()
                .is_some_and(|cell| tutor.is_hidden(cell))
        });
        match key.code {
            KeyCode::Char(ch @ ('0'..='9' | '-' | '.')) if predicting && !control => {
                Some(Action::StartAnswer(ch))
            }
            _ => tutor_key(key, control),
        }
    }

    fn picker_key(key: KeyEvent) -> Option<Action> {
        Some(match key.code {
            KeyCode::Up | KeyCode::Char('k') => Action::Move(Direction::Up),
            KeyCode::Down | KeyCode::Char('j') => Action::Move(Direction::Down),
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => Action::Open,
            KeyCode::Home => Action::FirstStep,
            KeyCode::End => Action::LastStep,
            KeyCode::Char('q') | KeyCode::Esc => Action::Back,
            KeyCode::Char('?') => Action::ToggleHelp,
            KeyCode::Char('f') => Action::ToggleFollow,
            _ => return None,
        })
    }

    fn tutor_key(key: KeyEvent, control: bool) -> Option<Action> {
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        Some(match key.code {
            KeyCode::Char('r') if control => Action::Redo,
            _ if control => return None,
            KeyCode::Char('n') | KeyCode::Tab | KeyCode::PageDown => Action::NextStep,
            KeyCode::Char('p') | KeyCode::BackTab | KeyCode::PageUp => Action::PreviousStep,
            KeyCode::Char(digit @ '1'..='9') => {
                Action::GoToStep(digit.to_digit(10).unwrap_or(1) as usize)
            }
            KeyCode::Home => Action::FirstStep,
            KeyCode::End => Action::LastStep,
            KeyCode::Up if shift => Action::ScrollNarration(-1),
            KeyCode::Down if shift => Action::ScrollNarration(1),
            KeyCode::Up | KeyCode::Char('k') => Action::Move(Direction::Up),
            KeyCode::Down | KeyCode::Char('j') => Action::Move(Direction::Down),
            KeyCode::Left | KeyCode::Char('h') => Action::Move(Direction::Left),
            KeyCode::Right | KeyCode::Char('l') => Action::Move(Direction::Right),
            KeyCode::Char(']') => Action::NextMatrix,
            KeyCode::Char('[') => Action::PreviousMatrix,
            KeyCode::Char('e') | KeyCode::Enter => Action::Edit,
            KeyCode::Char('u') => Action::Undo,
            KeyCode::Char('R') => Action::Reset,
            KeyCode::Char('r') => Action::Reroll,
            KeyCode::Char('w') => Action::Save,
            KeyCode::Char('?') => Action::ToggleHelp,
            KeyCode::Char('f') => Action::ToggleFollow,
            KeyCode::Char('x') => Action::TogglePractice,
            KeyCode::Char('X') => Action::TogglePracticeRow,
            KeyCode::Char('t') => Action::Hint,
            KeyCode::Char('q') | KeyCode::Esc => Action::Back,
            _ => return None,
        })
    }
}
