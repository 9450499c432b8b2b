//! `attn-tutor train induction` on its live screen: the loss and each head's score as the run
//! goes, its progress, Space pausing the run, the scrubber over the snapshots opening a head as
//! the lesson `import` makes of the same snapshot, q there coming back to the run as it was, q
//! on the run asking first while it goes on, and bad options said before any screen. The app
//! is fed short runs stepped here (debug builds step slowly), or run on its thread where the
//! thread is what is tested.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common;

use attn_tutor::app::{
    Action, App, Direction, HeadOf, Overlay, PromptFor, Question, Screen, TrainScreen,
    TrainingNews, default_text, update,
};
use attn_tutor::lesson::load_file;
use attn_tutor::term::training::{TrainingRun, snapshot_folder_name};
use attn_tutor::term::{dispatch, save_locally};
use attn_tutor::train::{
    Model, ModelShape, Snapshot, StepRecord, TrainConfig, Trainer, is_snapshot_step, save,
};
use tempfile::TempDir;

/// A run of `steps` steps of the default model, on batches of 4 sequences (a quick step).
fn config(steps: usize) -> TrainConfig {
    TrainConfig {
        steps,
        batch: 4,
        ..TrainConfig::default()
    }
}

/// The app on the training screen of a run of `config`, and the run, not yet stepped.
fn training(config: TrainConfig) -> (App, Trainer) {
    let mut app = App::training_app(TrainScreen::new(config.clone(), None));
    let trainer = Trainer::new(config).unwrap();
    // The run's first news: the weights before any step.
    let first = Arc::new(trainer.snapshot().unwrap());
    update(&mut app, Action::Training(TrainingNews::Snapshot(first)));
    (app, trainer)
}

/// `steps` more steps of `trainer`, sent to the app as its thread sends them (the steps' records
/// together here, then the snapshots taken meanwhile). The records, for the test to read.
fn step(app: &mut App, trainer: &mut Trainer, steps: usize) -> Vec<StepRecord> {
    let mut records = Vec::new();
    let mut snapshots = Vec::new();
    for _ in 0..steps {
        let Some(record) = trainer.step() else { break };
        records.push(record);
        snapshots.extend(trainer.snapshot());
    }
    let seconds = records.len() as f64 * 0.01;
    update(
        app,
        Action::Training(TrainingNews::Steps {
            records: records.clone(),
            seconds,
        }),
    );
    for snapshot in snapshots {
        update(
            app,
            Action::Training(TrainingNews::Snapshot(Arc::new(snapshot))),
        );
    }
    if trainer.is_done() {
        dispatch(
            app,
            Action::Training(TrainingNews::Finished),
            &mut save_locally,
        );
    }
    records
}

fn run(app: &App) -> &TrainScreen {
    app.training().expect("the app watches a run")
}

fn screen(app: &App) -> String {
    common::screen(app, 80, 24)
}

#[test]
fn the_screen_shows_the_loss_each_heads_score_and_the_progress() {
    let (mut app, mut trainer) = training(config(100));
    let records = step(&mut app, &mut trainer, 30);
    let shown = screen(&app);
    for part in [
        "Watch an induction head form",
        "step 30 of 100",
        "30 % · about 1 s left",
        " loss",
        "layer 0 · previous-token score",
        "layer 1 · induction score",
        "◆ step 25",
        "Enter: layer 1 head 0 at step 25 (the newest) on A B C D E F A B C D E F",
        "Space pause",
    ] {
        assert!(shown.contains(part), "{part:?} not in\n{shown}");
    }
    // Beside the charts: the loss (the mean of the last 25 steps) and each head's score at
    // the last step.
    let mean = records[5..]
        .iter()
        .map(|record| f64::from(record.loss as f32))
        .sum::<f64>()
        / 25.0;
    assert!(shown.contains(&format!(" {mean:.2}")), "{shown}");
    for head in run(&app).heads() {
        let score = run(&app).score_at(head, 30).unwrap();
        let line = shown
            .lines()
            .filter(|line| line.contains(&format!("head {} ", head.head)))
            .nth(head.layer)
            .unwrap();
        assert!(line.contains(&format!("{score:.2}")), "{line}");
    }
}

/// A run's record at `step` with a made-up loss and scores: a screen whose numbers do not
/// depend on the platform's floating point.
fn made_up(step: usize, steps: usize) -> StepRecord {
    let progress = step as f64 / steps as f64;
    let rise = 1.0 / (1.0 + (-(progress - 0.4) * 20.0).exp());
    StepRecord {
        step,
        loss: 2.8 - 2.4 * rise,
        induction: vec![0.05 + 0.75 * rise, 0.05],
        previous_token: vec![0.1, 0.1 + 0.8 * rise],
    }
}

fn made_up_run() -> App {
    let mut app = App::training_app(TrainScreen::new(config(3000), None));
    let records = (1..=1800).map(|step| made_up(step, 3000)).collect();
    update(
        &mut app,
        Action::Training(TrainingNews::Steps {
            records,
            seconds: 6.0,
        }),
    );
    let model = Model::init(ModelShape::default(), 0);
    for step in (0..=1800).step_by(25) {
        let snapshot = Snapshot {
            step,
            model: model.clone(),
        };
        update(
            &mut app,
            Action::Training(TrainingNews::Snapshot(Arc::new(snapshot))),
        );
    }
    for _ in 0..24 {
        update(&mut app, Action::Move(Direction::Left));
    }
    app
}

#[test]
fn the_training_screen_at_80x24_and_120x40() {
    let app = made_up_run();
    for (width, height) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(
            format!("training_{width}x{height}"),
            common::screen(&app, width, height)
        );
    }
}

/// The README's capture is of a real run (its numbers are the machine's): its layout and its
/// words are what the screen draws.
#[test]
fn the_readme_capture_of_the_training_screen_is_laid_out_as_the_screen_draws() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = 1 + readme
        .find("\n Watch an induction head form")
        .expect("the README shows the training screen");
    let shown: Vec<&str> = readme[start..start + readme[start..].find("```").unwrap()]
        .trim_end()
        .lines()
        .collect();
    assert_eq!(shown.len(), 24);
    assert!(shown.iter().all(|line| line.chars().count() <= 80));
    let mut app = made_up_run();
    update(&mut app, Action::Training(TrainingNews::Finished));
    let drawn = screen(&app);
    let drawn: Vec<&str> = drawn.lines().map(str::trim_end).collect();
    // The rows without numbers are the same; those with them start with the same words.
    for row in [0, 15, 18, 23] {
        assert_eq!(shown[row], drawn[row], "row {row}");
    }
    for row in [1, 2, 16, 17, 19, 20, 21, 22] {
        let words = |line: &str| line.split_whitespace().next().unwrap_or("").to_string();
        assert_eq!(words(shown[row]), words(drawn[row]), "row {row}");
    }
}

#[test]
fn the_scrubber_moves_over_the_snapshots_and_the_arrows_over_the_heads() {
    let (mut app, mut trainer) = training(config(100));
    step(&mut app, &mut trainer, 60);
    let scrubbed = |app: &App| run(app).scrubbed().unwrap().step;
    assert_eq!(scrubbed(&app), 50, "the newest, followed");
    update(&mut app, Action::Move(Direction::Left));
    assert_eq!(scrubbed(&app), 25);
    step(&mut app, &mut trainer, 20);
    assert_eq!(
        scrubbed(&app),
        25,
        "a new snapshot leaves the scrubber where it is"
    );
    assert!(screen(&app).contains("◆ step 25"));
    update(&mut app, Action::FirstStep);
    assert_eq!(scrubbed(&app), 0);
    update(&mut app, Action::Move(Direction::Left));
    assert!(common::status(&app).contains("first snapshot"));
    update(&mut app, Action::LastStep);
    assert_eq!(scrubbed(&app), 75);
    assert!(run(&app).follows_newest());
    update(&mut app, Action::Move(Direction::Up));
    assert_eq!(run(&app).chosen, HeadOf { layer: 0, head: 1 });
    assert!(screen(&app).contains("Enter: layer 0 head 1 at step 75"));
}

/// Made-up steps `from` to `to` of the app's run (only its snapshot, for step 0), sent as the
/// run's thread sends them: each step's record, then its snapshot if it has one (each of
/// `model`'s weights: the screen does not read them).
fn made_up_steps(app: &mut App, from: usize, to: usize, model: &Model<f32>) {
    let steps = run(app).steps();
    for step in from..=to {
        if step > 0 {
            let records = vec![made_up(step, steps)];
            update(
                app,
                Action::Training(TrainingNews::Steps {
                    records,
                    seconds: 0.0,
                }),
            );
        }
        if is_snapshot_step(step, steps) {
            let snapshot = Snapshot {
                step,
                model: model.clone(),
            };
            update(
                app,
                Action::Training(TrainingNews::Snapshot(Arc::new(snapshot))),
            );
        }
    }
}

#[test]
fn a_long_runs_snapshots_thin_out_and_the_scrubber_keeps_its_step_or_says_where_it_went() {
    let model = Model::init(ModelShape::default(), 0);
    let mut app = App::training_app(TrainScreen::new(config(60_000), None));
    // 512 snapshots, steps 0 to 12,775: all kept. The scrubber on step 100.
    made_up_steps(&mut app, 0, 12_775, &model);
    assert_eq!(run(&app).snapshots().len(), 512);
    update(&mut app, Action::FirstStep);
    for _ in 0..4 {
        update(&mut app, Action::Move(Direction::Right));
    }
    assert!(screen(&app).contains("◆ step 100"));
    // The 513th thins them to every 50 steps: 100 is kept, and the scrubber stays on it.
    made_up_steps(&mut app, 12_776, 12_800, &model);
    assert_eq!(run(&app).snapshots().len(), 257);
    let shown = screen(&app);
    assert!(shown.contains("◆ step 100"), "{shown}");
    assert!(
        shown.contains("Enter: layer 1 head 0 at step 100 on"),
        "{shown}"
    );
    update(&mut app, Action::Move(Direction::Right));
    assert!(screen(&app).contains("◆ step 150"));
    update(&mut app, Action::PreviousStep);
    assert_eq!(
        run(&app).scrubbed().unwrap().step,
        0,
        "ten back stops at the first"
    );
    update(&mut app, Action::Move(Direction::Right));
    assert!(screen(&app).contains("◆ step 50"));
    // Thinned to every 100 steps, 50 goes: the scrubber goes to the nearest kept, the earlier
    // of 0 and 100, and the status line says so.
    made_up_steps(&mut app, 12_801, 25_600, &model);
    assert_eq!(run(&app).snapshots().every(), 100);
    assert_eq!(run(&app).scrubbed().unwrap().step, 0);
    assert_eq!(
        common::status(&app),
        "A long run keeps 512 snapshots at most, evenly spread: step 50's was let go, so the \
         scrubber is on step 0"
    );
    // Enter opens the head at the step the scrubber shows.
    update(&mut app, Action::Move(Direction::Right));
    assert!(screen(&app).contains("◆ step 100"));
    dispatch(&mut app, Action::Open, &mut save_locally);
    let tutor = app.tutor().expect("the head opened as a lesson");
    assert!(
        tutor
            .lesson
            .title
            .starts_with("induction-step-100 layer 1 head 0"),
        "{}",
        tutor.lesson.title
    );
    // Thinned to every 200 steps behind the lesson, 100 goes: nothing is said over the
    // lesson, and back on the run the scrubber is on the nearest kept.
    made_up_steps(&mut app, 25_601, 51_200, &model);
    assert_eq!(run(&app).snapshots().every(), 200);
    assert!(common::status(&app).contains("as it was at step 100"));
    update(&mut app, Action::Back);
    assert!(matches!(app.screen, Screen::Training));
    assert!(screen(&app).contains("◆ step 0"));
}

#[test]
fn home_says_why_step_0_has_no_loss_or_score() {
    let (mut app, mut trainer) = training(config(100));
    step(&mut app, &mut trainer, 60);
    update(&mut app, Action::FirstStep);
    let shown = screen(&app);
    assert!(shown.contains("◆ step 0"), "{shown}");
    assert_eq!(
        common::status(&app),
        "Step 0: the weights before any step, so no loss or score yet (—)"
    );
    // ← back to step 0 says it too.
    update(&mut app, Action::Move(Direction::Right));
    update(&mut app, Action::Move(Direction::Left));
    assert!(common::status(&app).starts_with("Step 0:"));
    update(&mut app, Action::Move(Direction::Right));
    assert_eq!(common::status(&app), "");
}

#[test]
fn once_the_run_is_done_nothing_speaks_of_pausing_or_following_it() {
    let (mut app, mut trainer) = training(config(40));
    step(&mut app, &mut trainer, 30);
    update(&mut app, Action::ToggleHelp);
    assert!(screen(&app).contains("pause the training"), "while it runs");
    update(&mut app, Action::ToggleHelp);
    step(&mut app, &mut trainer, 10);
    assert!(run(&app).finished);
    update(&mut app, Action::ToggleHelp);
    let help = screen(&app);
    for gone in ["pause", "followed", "stops"] {
        assert!(!help.contains(gone), "{gone:?} in\n{help}");
    }
    assert!(help.contains("the last (the weights the run"), "{help}");
    update(&mut app, Action::ToggleHelp);
    for key in [Action::LastStep, Action::Move(Direction::Right)] {
        update(&mut app, key);
        assert_eq!(
            common::status(&app),
            "This is the last snapshot: the weights the run ended with"
        );
    }
}

/// The columns of `line` from the chart's first (after the gutter of 16).
fn chart_of(line: &str) -> String {
    line.chars().skip(16).collect()
}

#[test]
fn a_short_runs_charts_and_scrubber_span_the_same_columns() {
    for steps in [10, 30] {
        let (mut app, mut trainer) = training(config(steps));
        step(&mut app, &mut trainer, steps / 2);
        let half = screen(&app);
        let rows: Vec<&str> = half.lines().collect();
        // The scrubber's heavy line ends where the bars do, half way.
        let scrubber = chart_of(rows[21]);
        let done = scrubber.chars().filter(|ch| *ch == '━').count() + 1;
        let bars = chart_of(rows[16]).trim_end().chars().count();
        assert_eq!(bars, done, "{steps} steps:\n{half}");
        assert!(
            (28..=36).contains(&bars),
            "about half of 63: {bars}\n{half}"
        );
        // The loss curve reaches as far, give or take its last column's half.
        let curve = rows[2..15]
            .iter()
            .map(|row| chart_of(row).trim_end().chars().count())
            .max()
            .unwrap();
        assert!(
            curve + 4 >= bars && curve <= bars,
            "{curve} / {bars}\n{half}"
        );

        step(&mut app, &mut trainer, steps);
        let done = screen(&app);
        let rows: Vec<&str> = done.lines().collect();
        let scrubber = chart_of(rows[21]).trim_end().to_string();
        assert!(!scrubber.contains('─'), "the whole run is done:\n{done}");
        assert!(scrubber.ends_with('◆'), "{done}");
        assert_eq!(chart_of(rows[16]).trim_end().chars().count(), 63, "{done}");
    }
}

#[test]
fn enter_opens_the_head_at_the_snapshot_as_the_lesson_import_makes_of_it() {
    let (mut app, mut trainer) = training(config(100));
    step(&mut app, &mut trainer, 60);
    update(&mut app, Action::Move(Direction::Left));
    update(&mut app, Action::Move(Direction::Up));
    dispatch(&mut app, Action::Open, &mut save_locally);
    let tutor = app.tutor().expect("the head opened as a lesson");
    assert!(common::status(&app).contains("Layer 0 head 1 as it was at step 25"));

    // `import` of the same snapshot written as a model, read back from its lesson file.
    let dir = TempDir::new().unwrap();
    let model = dir.path().join(snapshot_folder_name(25));
    let mut again = Trainer::new(config(100)).unwrap();
    (0..25).for_each(|_| drop(again.step()));
    let snapshot = again.snapshot().unwrap();
    assert_eq!(snapshot.step, 25);
    save(&snapshot.model, &model).unwrap();
    let output = common::attn_tutor(&dir)
        .args(["import", model.to_str().unwrap(), "--text", &default_text()])
        .args(["--layer", "0", "--head", "1", "-o", "head.toml"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let imported = load_file(&dir.path().join("head.toml")).unwrap();
    assert_eq!(*tutor.lesson, imported.lesson);
    assert!(
        tutor
            .lesson
            .title
            .starts_with("induction-step-25 layer 0 head 1: A B C"),
        "{}",
        tutor.lesson.title
    );
}

#[test]
fn the_status_on_opening_a_head_fits_one_line_at_80_columns_for_the_longest_run() {
    let mut app = App::training_app(TrainScreen::new(config(1_000_000), None));
    let model = Model::init(ModelShape::default(), 0);
    let records = (1..=3).map(|step| made_up(step, 1_000_000)).collect();
    update(
        &mut app,
        Action::Training(TrainingNews::Steps {
            records,
            seconds: 1.0,
        }),
    );
    // A snapshot of the longest step number a run reaches, while it goes on.
    update(
        &mut app,
        Action::Training(TrainingNews::Snapshot(Arc::new(Snapshot {
            step: 1_000_000,
            model,
        }))),
    );
    dispatch(&mut app, Action::Open, &mut save_locally);
    assert!(app.tutor().is_some(), "{}", common::status(&app));
    let status = common::status(&app);
    assert_eq!(
        status,
        "Layer 1 head 0 as it was at step 1000000 · q: back to the run (still training)"
    );
    assert!(status.chars().count() < 80, "{status}");
    assert_eq!(common::screen_line(&app, 23).trim(), status);
}

#[test]
fn in_a_lesson_opened_from_the_run_q_is_said_to_go_back_to_the_run_and_practice_not_kept() {
    let (mut app, mut trainer) = training(config(40));
    step(&mut app, &mut trainer, 30);
    dispatch(&mut app, Action::Open, &mut save_locally);
    assert!(app.tutor().is_some());
    update(&mut app, Action::ToggleHelp);
    let help = screen(&app);
    assert!(help.contains("back to the training run"), "{help}");
    assert!(!help.contains("back to the lessons"), "{help}");
    update(&mut app, Action::ToggleHelp);
    update(&mut app, Action::LastStep);
    update(&mut app, Action::NextStep);
    assert_eq!(
        common::status(&app),
        "This is the last step: p goes back, q returns to the training run"
    );
    update(&mut app, Action::FirstStep);
    update(&mut app, Action::TogglePractice);
    assert!(
        common::status(&app)
            .ends_with("Not kept in your progress: this lesson is made from the run"),
        "{}",
        common::status(&app)
    );
    update(&mut app, Action::Back);
    assert!(
        matches!(app.screen, Screen::Training),
        "q went back to the run"
    );
}

#[test]
fn q_in_the_lesson_comes_back_to_the_run_as_it_was_and_steps_taken_meanwhile_are_kept() {
    let (mut app, mut trainer) = training(config(100));
    step(&mut app, &mut trainer, 30);
    update(&mut app, Action::Move(Direction::Left));
    update(&mut app, Action::Move(Direction::Down));
    dispatch(&mut app, Action::Open, &mut save_locally);
    assert!(app.tutor().is_some());
    step(&mut app, &mut trainer, 20);
    update(&mut app, Action::Back);
    assert!(matches!(app.screen, Screen::Training));
    let run = run(&app);
    assert_eq!(run.steps_done(), 50);
    assert_eq!(run.scrubbed().unwrap().step, 0);
    assert_eq!(run.chosen, HeadOf { layer: 1, head: 1 });
    assert!(screen(&app).contains("step 50 of 100"));
}

#[test]
fn q_while_the_run_goes_on_asks_first_saying_quitting_stops_it() {
    let (mut app, mut trainer) = training(config(40));
    step(&mut app, &mut trainer, 30);
    update(&mut app, Action::Back);
    assert_eq!(app.overlay, Overlay::Question(Question::StopTraining));
    let bottom = common::screen_line(&app, 23);
    assert!(
        bottom.contains(" Quit? Training stops at step 30 of 40. y quit · n go on"),
        "{bottom}"
    );
    update(&mut app, Action::Answer('n'));
    assert!(!app.quit);
    assert_eq!(app.overlay, Overlay::None);
    // Once the run is done there is nothing to stop: q quits.
    step(&mut app, &mut trainer, 10);
    assert!(run(&app).finished);
    update(&mut app, Action::Back);
    assert!(app.quit);
}

#[test]
fn y_to_the_question_quits() {
    let (mut app, mut trainer) = training(config(40));
    step(&mut app, &mut trainer, 5);
    update(&mut app, Action::Quit);
    assert_eq!(app.overlay, Overlay::Question(Question::StopTraining));
    update(&mut app, Action::Answer('y'));
    assert!(app.quit);
}

#[test]
fn a_text_the_model_cannot_read_goes_back_to_its_prompt_naming_the_symbols() {
    let (mut app, mut trainer) = training(config(40));
    step(&mut app, &mut trainer, 1);
    update(&mut app, Action::TypeText);
    update(&mut app, Action::ClearInput);
    for ch in "A B Z".chars() {
        update(&mut app, Action::Type(ch));
    }
    dispatch(&mut app, Action::Submit, &mut save_locally);
    assert!(app.tutor().is_none());
    match &app.overlay {
        Overlay::Prompt(prompt) => {
            assert_eq!(prompt.purpose, PromptFor::HeadText);
            assert_eq!(prompt.input, "A B Z");
        }
        other => panic!("the prompt is gone: {other:?}"),
    }
    // Said for the box, not for `import`'s option.
    assert_eq!(
        common::status(&app),
        "\"Z\" is not a word of this model; it reads A B C D E F G H I J K L M N O P, \
         separated by spaces (fix it, or Esc)"
    );
    assert_eq!(
        run(&app).text,
        default_text(),
        "the text is kept until one opens"
    );
    update(&mut app, Action::Backspace);
    update(&mut app, Action::Type('C'));
    dispatch(&mut app, Action::Submit, &mut save_locally);
    assert!(app.tutor().is_some());
    assert_eq!(run(&app).text, "A B C");
}

#[test]
fn a_text_longer_than_the_model_reads_says_how_many_symbols_and_no_path() {
    let (mut app, mut trainer) = training(config(40));
    step(&mut app, &mut trainer, 1);
    update(&mut app, Action::TypeText);
    update(&mut app, Action::ClearInput);
    let forty = vec!["A"; 40].join(" ");
    for ch in forty.chars() {
        update(&mut app, Action::Type(ch));
    }
    dispatch(&mut app, Action::Submit, &mut save_locally);
    assert!(matches!(app.overlay, Overlay::Prompt(_)), "back to the box");
    assert_eq!(
        common::status(&app),
        "40 symbols; the model reads at most 32 at once (fix it, or Esc)"
    );
    // 32 is as many as it reads.
    update(&mut app, Action::ClearInput);
    for ch in vec!["A"; 32].join(" ").chars() {
        update(&mut app, Action::Type(ch));
    }
    dispatch(&mut app, Action::Submit, &mut save_locally);
    assert!(app.tutor().is_some(), "{}", common::status(&app));
}

/// Drains the run into the app until `done` says so.
fn wait_for(app: &mut App, training: &mut TrainingRun, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !done(app) {
        assert!(Instant::now() < deadline, "the run never got there");
        training.between_keys(app);
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn space_pauses_the_run_on_its_thread_and_again_lets_it_go_on() {
    let config = config(400);
    let mut app = App::training_app(TrainScreen::new(config.clone(), None));
    let mut training = TrainingRun::start(Trainer::new(config).unwrap());
    wait_for(&mut app, &mut training, |app| run(app).steps_done() >= 2);
    update(&mut app, Action::TogglePause);
    wait_for(&mut app, &mut training, |app| run(app).paused_at.is_some());
    let paused_at = run(&app).paused_at.unwrap();
    assert!(screen(&app).contains("paused · Space goes on"));
    assert!(screen(&app).contains("Space go on"));
    std::thread::sleep(Duration::from_millis(300));
    training.between_keys(&mut app);
    assert_eq!(run(&app).steps_done(), paused_at, "no step while paused");
    update(&mut app, Action::TogglePause);
    wait_for(&mut app, &mut training, |app| {
        run(app).steps_done() > paused_at
    });
    training.stop();
}

#[test]
fn a_run_on_its_thread_writes_its_model_where_o_says_and_the_screen_says_where() {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("model");
    let config = TrainConfig {
        steps: 30,
        ..TrainConfig::default()
    };
    let mut app = App::training_app(TrainScreen::new(config.clone(), Some(folder.clone())));
    let mut training = TrainingRun::start(Trainer::new(config).unwrap());
    wait_for(&mut app, &mut training, |app| run(app).written.is_some());
    assert_eq!(run(&app).written, Some(Ok(folder.clone())));
    assert!(screen(&app).contains("done in"), "{}", screen(&app));
    assert!(
        common::status(&app).contains("the model is written to"),
        "{}",
        common::status(&app)
    );
    // The same model the JSON lines' run of the same seed and steps writes.
    let output = common::attn_tutor(&dir)
        .args(["train", "induction", "--steps", "30", "-o", "lines"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert_eq!(
            std::fs::read(folder.join(file)).unwrap(),
            std::fs::read(dir.path().join("lines").join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn without_a_terminal_train_writes_json_lines() {
    let dir = TempDir::new().unwrap();
    let output = common::attn_tutor(&dir)
        .args(["train", "induction", "--steps", "2"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let lines = String::from_utf8(output.stdout).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(lines.starts_with("{\"step\":1,\"loss\":"), "{lines}");
}

/// Standard output as `head -1` leaves it: `lines` lines taken, then the pipe closed. Counts
/// the writes tried after that.
struct ClosesAfter {
    lines: usize,
    tried_after: usize,
}

impl std::io::Write for ClosesAfter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.lines == 0 {
            self.tried_after += 1;
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.lines -= bytes.iter().filter(|byte| **byte == b'\n').count();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `attn-tutor ARGS` in-process, its lines to a reader that goes after one; the exit code,
/// the writes tried after it went, and what was said on stderr.
fn train_into_a_closed_pipe(args: &[&str]) -> (u8, usize, String) {
    use clap::Parser as _;
    let cli = attn_tutor::cli::Cli::try_parse_from(args).unwrap();
    let mut out = ClosesAfter {
        lines: 1,
        tried_after: 0,
    };
    let mut err = Vec::new();
    let code = attn_tutor::cli::run_command(cli.command, false, &mut out, &mut err);
    (code, out.tried_after, String::from_utf8(err).unwrap())
}

#[test]
fn a_closed_pipe_ends_a_run_without_o_at_once_and_quietly() {
    let (code, tried, said) =
        train_into_a_closed_pipe(&["attn-tutor", "train", "induction", "--steps", "6"]);
    assert_eq!((code, said.as_str()), (0, ""));
    assert_eq!(tried, 1, "the run ended at the first line nobody read");
}

#[test]
fn a_closed_pipe_with_o_stops_the_lines_and_the_model_is_still_written() {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("model");
    let (code, tried, said) = train_into_a_closed_pipe(&[
        "attn-tutor",
        "train",
        "induction",
        "--steps",
        "6",
        "-o",
        folder.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(tried, 1, "no line tried after the first refused");
    assert!(said.starts_with("wrote the model to"), "{said}");
    assert_eq!(
        common::files_in(&folder),
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
}

/// `train induction ARGS` on a terminal, refused: its message, after checking that no screen
/// was drawn (the alternate screen never entered).
fn refused_on_a_terminal(args: &[&str]) -> Option<String> {
    let mut all = vec!["train", "induction"];
    all.extend(args);
    let (code, output) = common::run_on_terminal(&all, None)?;
    let output = String::from_utf8_lossy(&output).into_owned();
    assert_eq!(code, 2, "{output}");
    assert!(
        !output.contains("\u{1b}[?1049h"),
        "a screen was drawn: {output:?}"
    );
    Some(output)
}

#[test]
fn steps_0_is_refused_before_any_screen() {
    if let Some(said) = refused_on_a_terminal(&["--steps", "0"]) {
        assert!(
            said.contains("give a whole number of steps from 1 to 1000000"),
            "{said}"
        );
    }
}

/// `attn-tutor ARGS` without a terminal, refused with exit 2: what it said.
fn refused(args: &[&str]) -> String {
    let dir = TempDir::new().unwrap();
    let output = common::attn_tutor(&dir).args(args).output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {said}");
    assert!(output.stdout.is_empty(), "{args:?}: no step taken");
    said
}

#[test]
fn every_seed_and_steps_out_of_range_says_what_they_are() {
    for args in [
        ["--steps", "2000000"].as_slice(),
        &["--steps", "0"],
        &["--steps", "-5"],
        &["--steps=-5"],
        &["--steps", "many"],
    ] {
        let said = refused(&[&["train", "induction"], args].concat());
        assert!(
            said.contains("give a whole number of steps from 1 to 1000000"),
            "{args:?}: {said}"
        );
        assert!(
            !said.contains("0 steps would") && !said.contains("tip:"),
            "{said}"
        );
    }
    for args in [
        ["--seed", "-1"].as_slice(),
        &["--seed=-1"],
        &["--seed", "1.5"],
        &["--seed", "18446744073709551616"],
    ] {
        let said = refused(&[&["train", "induction"], args].concat());
        assert!(
            said.contains("the seed is a whole number from 0 to 18446744073709551615"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("tip:") && !said.contains("digit"), "{said}");
    }
}

/// A folder where none can be made, whoever runs the test (root included): said as such, with
/// the folder that refused, before any step.
#[cfg(target_os = "linux")]
#[test]
fn a_folder_that_cannot_be_made_says_so_and_why() {
    let said = refused(&["train", "induction", "-o", "/proc/attn-tutor-model"]);
    assert_eq!(
        said,
        "error: -o: /proc/attn-tutor-model: the folder could not be made: /proc does not take \
         new folders (the system said: No such file or directory (os error 2))\n"
    );
}

#[test]
fn train_without_a_task_names_the_tasks() {
    let said = refused(&["train"]);
    assert!(said.contains("<TASK>"), "{said}");
    assert!(
        said.contains("tip: name the task to train: attn-tutor train induction"),
        "{said}"
    );
}

#[test]
fn a_folder_in_use_or_that_cannot_be_made_is_refused_before_any_screen() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let in_use = dir.path().to_str().unwrap().to_string();
    if let Some(said) = refused_on_a_terminal(&["-o", &in_use]) {
        assert!(
            said.contains("the folder is not empty (it holds notes.txt)"),
            "{said}"
        );
    }
    // Under a file, no folder can be made, whoever runs the test (root included).
    let under_a_file = dir.path().join("notes.txt").join("model");
    if let Some(said) = refused_on_a_terminal(&["-o", under_a_file.to_str().unwrap()]) {
        assert!(
            said.contains("the folder could not be made: ") && said.contains("is a file"),
            "{said}"
        );
    }
    assert_eq!(common::files_in(dir.path()), ["notes.txt"]);
}

/// The whole command in a terminal: the run on its thread drawn as it goes, a head opened and
/// left, q once the run is done, the terminal handed back and the model where `-o` said; and
/// with `--record`, the screen kept as an asciicast.
#[test]
fn in_a_terminal_the_run_is_drawn_a_head_opens_and_q_leaves_the_model_written() {
    use common::pty::{PATIENCE, PtyChild, top_line};
    use portable_pty::CommandBuilder;

    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("model");
    let cast = dir.path().join("run.cast");
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.arg("--record");
    command.arg(cast.as_os_str());
    command.args(["train", "induction", "--steps", "30", "-o"]);
    command.arg(folder.as_os_str());
    command.env("NO_COLOR", "1");
    let mut training = PtyChild::spawn(command);
    // A debug build steps slowly, and slower still beside other tests.
    training.wait_for(
        "the run done and its model written",
        |text| text.contains("done in") && text.contains("the model is in"),
        PATIENCE * 10,
    );
    training.press("\r");
    training.wait_for(
        "the head opened as a lesson",
        |text| top_line(text).starts_with(" induction-step-30 layer 1 head 0"),
        PATIENCE,
    );
    training.press("q");
    training.wait_for(
        "the training screen again",
        |text| top_line(text).contains("Watch an induction head form"),
        PATIENCE,
    );
    training.press("q");
    assert!(training.wait_for_exit().success());
    training.wait_for_the_terminal_restored();
    assert!(
        training.screen_text().contains("wrote the model to"),
        "{}",
        training.screen_text()
    );
    assert_eq!(
        common::files_in(&folder),
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    // The cast: a header, then the frames the terminal was sent, the run's screen among them.
    let recorded = std::fs::read_to_string(&cast).unwrap();
    let mut lines = recorded.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    assert_eq!(header["title"], "attn-tutor train induction");
    let frames: String = lines
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event[1] == "o")
        .filter_map(|event| event[2].as_str().map(str::to_string))
        .collect();
    assert!(
        frames.contains("Watch an induction head form"),
        "{recorded}"
    );
    assert!(
        frames.contains("induction-step-30 layer 1 head 0"),
        "{recorded}"
    );
}
