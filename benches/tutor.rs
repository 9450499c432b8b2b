//! Benchmarks of the interactive tutor: the time to handle one key (update, recompute, render a
//! whole frame) and the bytes each keystroke sends to the terminal.
//!
//! Run with `cargo bench --bench tutor`. Before the timings, the binary prints a table of bytes
//! written per keystroke against a full repaint, for 80×24 and 120×40 terminals and for the
//! built-in lesson `cat-sleeps`, a generated 64-token × 64-dimension lesson and one of 8 heads;
//! `cargo bench --bench tutor -- repaint` prints only that table. The README quotes the figures.

use std::cell::Cell;
use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use attn_tutor::app::{Action, App, Direction, PickerEntry, update};
use attn_tutor::attention::{Attention, Step};
use attn_tutor::lesson::load_text;
use attn_tutor::ui::{Theme, view};
use criterion::{Criterion, criterion_group};
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// A 64-token lesson with 64-dimensional embeddings and 64 × 64 projections, all generated.
fn big_lesson_text() -> String {
    let mut text = String::from("format = 1\ntitle = \"64 by 64\"\n");
    let labels: Vec<String> = (1..=64).map(|i| format!("\"t{i}\"")).collect();
    let _ = writeln!(text, "tokens = [{}]", labels.join(", "));
    for (key, seed) in [("embeddings", 1), ("w_q", 2), ("w_k", 3), ("w_v", 4)] {
        let _ = writeln!(
            text,
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [64, 64] }}"
        );
    }
    text
}

/// The app opened on a lesson given as text.
fn app_for(name: &str, text: String) -> App {
    let lesson = load_text(name, None, text);
    assert!(lesson.is_ok(), "{name} must load");
    let app = App::new(
        vec![PickerEntry {
            name: name.into(),
            lesson,
        }],
        Some(0),
    );
    assert!(app.tutor().is_some(), "{name} must open");
    app
}

fn big_app() -> App {
    app_for("big", big_lesson_text())
}

/// A 64-token lesson of 8 heads: 64-dimensional embeddings, W_q, W_k, W_v of 8 heads × d_k 8
/// and W_o (64 × 64), all generated.
fn heads_lesson_text() -> String {
    let mut text = String::from("format = 2\ntitle = \"64 tokens, 8 heads\"\nheads = 8\n");
    let labels: Vec<String> = (1..=64).map(|i| format!("\"t{i}\"")).collect();
    let _ = writeln!(text, "tokens = [{}]", labels.join(", "));
    for (key, seed) in [
        ("embeddings", 1),
        ("w_q", 2),
        ("w_k", 3),
        ("w_v", 4),
        ("w_o", 5),
    ] {
        let _ = writeln!(
            text,
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [64, 64] }}"
        );
    }
    text
}

fn heads_app() -> App {
    app_for("heads", heads_lesson_text())
}

fn cat_sleeps_app() -> App {
    let builtin = attn_tutor::lesson::builtin("cat-sleeps").expect("built-in lesson");
    app_for("cat-sleeps", builtin.text.to_string())
}

fn steps(app: &App) -> Vec<Step> {
    app.tutor().expect("a lesson is open").steps.clone()
}

/// The 1-based number on screen of a step, as `GoToStep` takes it.
fn step_number(app: &App, step: Step) -> usize {
    steps(app)
        .iter()
        .position(|s| *s == step)
        .expect("the lesson has this step")
        + 1
}

fn theme() -> Theme {
    Theme::detect(false, Some("truecolor"), None)
}

// --- Bytes written per keystroke -------------------------------------------------------------

/// Counts the bytes written to it and throws them away. The count is shared, so it can be read
/// while the terminal owns the writer.
#[derive(Debug, Default, Clone)]
struct CountingWriter {
    bytes: Rc<Cell<usize>>,
}

impl Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes.set(self.bytes.get() + buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `e` and three characters, each followed by its frame, as the learner types them; the value
/// alternates so that every Enter really changes the cell.
fn open_edit_and_type(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    theme: &Theme,
    turn: &mut u64,
) {
    *turn += 1;
    let typed = if turn.is_multiple_of(2) { "1.5" } else { "2.5" };
    update(app, Action::Edit);
    render(terminal, app, theme);
    for ch in typed.chars() {
        update(app, Action::Type(ch));
        render(terminal, app, theme);
    }
}

/// Right, then left, then right…: every key really moves the cursor, which would otherwise
/// stop at the matrix's edge.
fn back_and_forth(right: &mut bool) -> Direction {
    *right = !*right;
    if *right {
        Direction::Left
    } else {
        Direction::Right
    }
}

/// A terminal and the count of the bytes sent to it.
struct CountingTerminal {
    terminal: Terminal<CrosstermBackend<CountingWriter>>,
    bytes: Rc<Cell<usize>>,
    painter: attn_tutor::term::Painter,
}

/// A terminal of a fixed size (a CountingWriter is not a tty, so it cannot be asked its size)
/// that has drawn nothing yet.
fn counting_terminal(width: u16, height: u16) -> CountingTerminal {
    let writer = CountingWriter::default();
    let bytes = Rc::clone(&writer.bytes);
    let terminal = Terminal::with_options(
        CrosstermBackend::new(writer),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
        },
    )
    .expect("a fixed terminal");
    CountingTerminal {
        terminal,
        bytes,
        painter: attn_tutor::term::Painter::default(),
    }
}

/// Draws a frame the way the tutor does and returns the bytes it sent.
fn draw_counting(terminal: &mut CountingTerminal, app: &App, theme: &Theme) -> usize {
    terminal.bytes.set(0);
    terminal
        .painter
        .draw(&mut terminal.terminal, app, theme)
        .expect("draw");
    terminal.bytes.get()
}

/// The bytes of a full repaint of what `app` shows now: its first frame on a fresh terminal.
fn full_repaint(app: &App, width: u16, height: u16, theme: &Theme) -> usize {
    let mut terminal = counting_terminal(width, height);
    draw_counting(&mut terminal, app, theme)
}

/// Applies the actions (drawing after each, as the tutor does after every key) and returns the
/// bytes of the frame after the last one.
fn key_bytes(
    terminal: &mut CountingTerminal,
    app: &mut App,
    actions: &[Action],
    theme: &Theme,
) -> usize {
    let mut bytes = 0;
    for action in actions {
        update(app, action.clone());
        bytes = draw_counting(terminal, app, theme);
    }
    bytes
}

fn percent(part: usize, whole: usize) -> String {
    format!("{:.1} %", 100.0 * part as f64 / whole.max(1) as f64)
}

/// Thousands separated by thin spaces, as the README writes them: 31 234.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

/// One lesson on one terminal size, keys pressed as a learner would: the first frame, then for
/// each step the step change into it (n), the screen's full repaint (its first frame on a fresh
/// terminal) and a cursor move (→). Then an edit on the first step (e, a digit, Enter).
fn bytes_table(lesson: &str, make: fn() -> App, width: u16, height: u16, theme: &Theme) {
    let mut app = make();
    let mut terminal = counting_terminal(width, height);
    let first = draw_counting(&mut terminal, &app, theme);
    println!(
        "\n{lesson} at {width}×{height}: first frame (full repaint) {} bytes",
        grouped(first)
    );
    println!(
        "| screen | full repaint | cursor move (→) | % of repaint | ←↓→↑, mean | % of repaint | step change into it (n) | % of repaint |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (index, step) in steps(&app).iter().enumerate() {
        let into = if index == 0 {
            "– | –".to_string()
        } else {
            let bytes = key_bytes(&mut terminal, &mut app, &[Action::NextStep], theme);
            let full = full_repaint(&app, width, height, theme);
            format!("{} | {}", grouped(bytes), percent(bytes, full))
        };
        let full = full_repaint(&app, width, height, theme);
        let right = key_bytes(
            &mut terminal,
            &mut app,
            &[Action::Move(Direction::Right)],
            theme,
        );
        // Every arrow once, back to where the cursor was: ← undoes the → above first.
        let arrows = [
            Direction::Left,
            Direction::Down,
            Direction::Right,
            Direction::Up,
        ];
        let mean = arrows
            .iter()
            .map(|arrow| key_bytes(&mut terminal, &mut app, &[Action::Move(*arrow)], theme))
            .sum::<usize>()
            / arrows.len();
        println!(
            "| {} | {} | {} | {} | {} | {} | {into} |",
            step.title(),
            grouped(full),
            grouped(right),
            percent(right, full),
            grouped(mean),
            percent(mean, full),
        );
    }
    // An edit on the Embedding screen: `e` opens the prompt, a digit goes into it, Enter applies
    // it and recomputes everything (marking the changed cells).
    key_bytes(&mut terminal, &mut app, &[Action::GoToStep(1)], theme);
    let full = full_repaint(&app, width, height, theme);
    let open = key_bytes(&mut terminal, &mut app, &[Action::Edit], theme);
    let digit = key_bytes(&mut terminal, &mut app, &[Action::Type('7')], theme);
    let enter = key_bytes(&mut terminal, &mut app, &[Action::Submit], theme);
    println!(
        "| {} edit: e / digit / Enter | {} | {} / {} / {} | {} / {} / {} | | |",
        Step::Embedding.title(),
        grouped(full),
        grouped(open),
        grouped(digit),
        grouped(enter),
        percent(open, full),
        percent(digit, full),
        percent(enter, full),
    );
}

fn print_bytes_tables() {
    let theme = theme();
    println!(
        "Bytes written to the terminal per keystroke (truecolor theme), versus a full repaint"
    );
    println!("(the screen's first frame on a fresh terminal; blank cells are not sent):");
    for (width, height) in [(80, 24), (120, 40)] {
        bytes_table("cat-sleeps", cat_sleeps_app, width, height, &theme);
        bytes_table("64×64", big_app, width, height, &theme);
        bytes_table("64 tokens × 8 heads", heads_app, width, height, &theme);
    }
    println!();
}

// --- Time per key ----------------------------------------------------------------------------

fn test_terminal(width: u16, height: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(width, height)).expect("a test terminal")
}

fn render(terminal: &mut Terminal<TestBackend>, app: &App, theme: &Theme) {
    terminal
        .draw(|frame| view(frame, app, theme))
        .expect("draw");
}

/// An app on `step`, a few cells into its focused matrix, with the frame already drawn.
fn ready_on(make: fn() -> App, step: Step, terminal: &mut Terminal<TestBackend>) -> App {
    let theme = theme();
    let mut app = make();
    let number = step_number(&app, step);
    update(&mut app, Action::GoToStep(number));
    for _ in 0..3 {
        update(&mut app, Action::Move(Direction::Right));
    }
    render(terminal, &app, &theme);
    app
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group.sample_size(30);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
}

/// A cursor move and the frame after it. The cursor goes → and ← by turns, so every key really
/// moves it (it would stop at the matrix's edge otherwise).
fn bench_cursor_move(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    make: fn() -> App,
    step: Step,
) {
    let theme = theme();
    let mut terminal = test_terminal(120, 40);
    let mut app = ready_on(make, step, &mut terminal);
    let mut right = true;
    group.bench_function(name, |b| {
        b.iter(|| {
            update(&mut app, Action::Move(back_and_forth(&mut right)));
            render(&mut terminal, &app, &theme);
        })
    });
}

fn key_benchmarks(c: &mut Criterion) {
    let theme = theme();
    let mut group = c.benchmark_group("key+render 64x64 lesson 120x40");
    configure(&mut group);
    for step in [
        Step::Embedding,
        Step::Projection,
        Step::Scores,
        Step::Softmax,
        Step::Output,
    ] {
        let name = format!("cursor move on {}", step.title());
        bench_cursor_move(&mut group, &name, big_app, step);
    }

    // n and p by turns between Projection and Scores.
    {
        let mut terminal = test_terminal(120, 40);
        let mut app = ready_on(big_app, Step::Projection, &mut terminal);
        let mut forward = true;
        group.bench_function("step change (n/p) Projection <-> Scores", |b| {
            b.iter(|| {
                let action = if forward {
                    Action::NextStep
                } else {
                    Action::PreviousStep
                };
                forward = !forward;
                update(&mut app, action);
                render(&mut terminal, &app, &theme);
            })
        });
    }

    // An edit on the Embedding screen. Only Enter is timed (it applies the value, recomputes
    // every matrix and marks the changed cells); `e` and the typing before it are drawn untimed.
    // The typed value alternates so that every Enter changes the cell.
    {
        let mut terminal = test_terminal(120, 40);
        let mut app = ready_on(big_app, Step::Embedding, &mut terminal);
        let mut turn = 0_u64;
        group.bench_function("edit on Embedding: Enter (apply + recompute)", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    open_edit_and_type(&mut app, &mut terminal, &theme, &mut turn);
                    let start = Instant::now();
                    update(&mut app, Action::Submit);
                    render(&mut terminal, &app, &theme);
                    total += start.elapsed();
                }
                total
            })
        });
        // The whole edit as the learner types it: five keys, five frames.
        group.bench_function("edit on Embedding: e, 3 chars, Enter (5 frames)", |b| {
            b.iter(|| {
                open_edit_and_type(&mut app, &mut terminal, &theme, &mut turn);
                update(&mut app, Action::Submit);
                render(&mut terminal, &app, &theme);
            })
        });
    }
    group.finish();

    // Where the time goes: the parts of a key on their own.
    let mut group = c.benchmark_group("parts 64x64 lesson 120x40");
    configure(&mut group);
    {
        let app = big_app();
        let lesson = &app.tutor().expect("open").lesson;
        group.bench_function("Attention::compute", |b| {
            b.iter(|| black_box(Attention::compute(black_box(lesson))))
        });
    }
    for step in [Step::Projection, Step::Softmax] {
        let mut terminal = test_terminal(120, 40);
        let app = ready_on(big_app, step, &mut terminal);
        group.bench_function(format!("render only, {}", step.title()), |b| {
            b.iter(|| render(&mut terminal, &app, &theme))
        });
    }
    // The real path of a frame: synchronized output and crossterm's escape codes, into a writer
    // that discards them.
    {
        let mut terminal = counting_terminal(120, 40);
        let mut app = big_app();
        let number = step_number(&app, Step::Projection);
        update(&mut app, Action::GoToStep(number));
        draw_counting(&mut terminal, &app, &theme);
        let mut right = true;
        group.bench_function("cursor move on Projection via term::Painter", |b| {
            b.iter(|| {
                update(&mut app, Action::Move(back_and_forth(&mut right)));
                draw_counting(&mut terminal, &app, &theme);
            })
        });
    }
    group.finish();

    // For scale: the same keys on the small built-in lesson.
    let mut group = c.benchmark_group("key+render cat-sleeps 120x40");
    configure(&mut group);
    for step in [Step::Projection, Step::Softmax] {
        let name = format!("cursor move on {}", step.title());
        bench_cursor_move(&mut group, &name, cat_sleeps_app, step);
    }
    group.finish();
}

/// `<` and `>` by turns on `step`, each key and the frame after it.
fn bench_head_change(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    step: Step,
) {
    let theme = theme();
    let mut terminal = test_terminal(120, 40);
    let mut app = ready_on(heads_app, step, &mut terminal);
    let mut forward = true;
    group.bench_function(name, |b| {
        b.iter(|| {
            let action = if forward {
                Action::NextHead
            } else {
                Action::PreviousHead
            };
            forward = !forward;
            update(&mut app, action);
            render(&mut terminal, &app, &theme);
        })
    });
}

/// Key → frame on a lesson of several heads: changing the head, moving the cursor on a step of
/// one head, and the All heads screen (every head's map redrawn for each key).
fn heads_benchmarks(c: &mut Criterion) {
    let mut group = c.benchmark_group("key+render 64 tokens x 8 heads 120x40");
    configure(&mut group);
    bench_head_change(&mut group, "head change (< / >) on Scores", Step::Scores);
    bench_cursor_move(
        &mut group,
        "cursor move on Scores (head 1)",
        heads_app,
        Step::Scores,
    );
    bench_cursor_move(
        &mut group,
        "cursor move on Output projection",
        heads_app,
        Step::OutputProjection,
    );
    bench_head_change(
        &mut group,
        "head change (< / >) on All heads",
        Step::AllHeads,
    );
    group.finish();
}

/// The 8-head lesson with a backward pass: grad_output drawn too (64 × 64, W_o's columns).
fn backward_app() -> App {
    let text =
        heads_lesson_text() + "grad_output = { random = \"normal\", seed = 6, shape = [64, 64] }\n";
    app_for("backward", text)
}

/// Key → frame on the backward steps of a 64-token lesson of 8 heads: the cursor moving over
/// each step's gradient, its working written out anew for each key.
fn backward_benchmarks(c: &mut Criterion) {
    let mut group = c.benchmark_group("key+render 64 tokens x 8 heads backward 120x40");
    configure(&mut group);
    for step in [
        Step::BackwardOutput,
        Step::BackwardValues,
        Step::BackwardSoftmax,
        Step::BackwardScores,
        Step::BackwardWeights,
        Step::BackwardInput,
    ] {
        let name = format!("cursor move on {}", step.title());
        bench_cursor_move(&mut group, &name, backward_app, step);
    }
    group.finish();
}

/// A 256-token lesson that generates its tokens with a K/V cache: 64-dimensional embeddings, 4
/// heads of d_k 16 sharing 2 K/V groups, W_o and rope, all generated.
fn decoding_lesson_text() -> String {
    let mut text = String::from(
        "format = 2\ntitle = \"256 tokens generated\"\nheads = 4\nkv_heads = 2\n\
         positions = \"rope\"\nmask = \"causal\"\ndecode = true\n",
    );
    let labels: Vec<String> = (1..=256).map(|i| format!("\"t{i}\"")).collect();
    let _ = writeln!(text, "tokens = [{}]", labels.join(", "));
    for (key, seed, shape) in [
        ("embeddings", 1, [256, 64]),
        ("w_q", 2, [64, 64]),
        ("w_k", 3, [64, 32]),
        ("w_v", 4, [64, 32]),
        ("w_o", 5, [64, 64]),
    ] {
        let _ = writeln!(
            text,
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [{}, {}] }}",
            shape[0], shape[1]
        );
    }
    text
}

/// Walking the 256 tokens of generation one key at a time on each generation step: every key
/// makes the new token's matrices (the first time a token is shown) and draws the frame. One
/// iteration is the whole walk from a freshly computed lesson; the time per step is the
/// iteration's over 256 (Criterion's throughput line gives the steps per second).
fn decoding_benchmarks(c: &mut Criterion) {
    let theme = theme();
    let mut group = c.benchmark_group("decode walk 256 tokens 120x40");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    group.throughput(criterion::Throughput::Elements(256));
    let lesson = app_for("decoding", decoding_lesson_text());
    for step in [
        Step::NewToken,
        Step::KvCache,
        Step::DecodeWeights,
        Step::DecodeOutput,
    ] {
        let mut terminal = test_terminal(120, 40);
        let number = step_number(&lesson, step);
        group.bench_function(format!("256 steps of ) on {}", step.title()), |b| {
            b.iter_batched(
                || {
                    let mut app = lesson.clone();
                    let tutor = app.tutor_mut().expect("a lesson is open");
                    // A fresh engine: no token's matrices made yet.
                    tutor.attention = Attention::compute(&tutor.lesson).into();
                    update(&mut app, Action::GoToStep(number));
                    app
                },
                |mut app| {
                    for _ in 0..256 {
                        update(&mut app, Action::NextToken);
                        render(&mut terminal, &app, &theme);
                    }
                    app
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// The largest generation lesson within the limits (tests/fixtures/decode-largest.toml: 256
/// tokens, d_model 1024, 16 heads over 16 K/V groups, W_o, causal, decode).
fn largest_decoding_app() -> App {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/decode-largest.toml"
    );
    let text = std::fs::read_to_string(path).expect("the fixture");
    app_for("decode-largest", text)
}

/// The time to open each step of the largest generation lesson, from an engine that has made
/// nothing yet (as the step is first opened): `GoToStep` and one frame at 120×40, at the first
/// token (tile) and at the last. Printed as a table, without Criterion: one opening is the
/// measure. `cargo bench --bench tutor -- open-steps` prints only this table.
fn print_open_times() {
    let theme = theme();
    let lesson = largest_decoding_app();
    let tokens = lesson.tutor().expect("open").attention.seq_len();
    let tiles = lesson.tutor().expect("open").attention.tile_count();
    println!(
        "Opening each step of decode-largest (256 tokens, d_model 1024, 16 heads, 16 K/V \
         groups) at 120×40, from a fresh engine:"
    );
    println!("| step | at the first token or tile | at the last |");
    println!("|---|---:|---:|");
    print_engine_time(&lesson);
    let mut slowest = Duration::ZERO;
    for (index, step) in steps(&lesson).iter().enumerate() {
        let mut times = Vec::new();
        for last in [false, true] {
            let mut app = lesson.clone();
            let tutor = app.tutor_mut().expect("a lesson is open");
            tutor.attention = Attention::compute(&tutor.lesson).into();
            if last {
                tutor.set_token(tokens - 1);
                tutor.set_tile(tiles - 1);
            }
            let mut terminal = test_terminal(120, 40);
            let start = Instant::now();
            update(&mut app, Action::GoToStep(index + 1));
            render(&mut terminal, &app, &theme);
            let took = start.elapsed();
            slowest = slowest.max(took);
            times.push(format!("{:.1} ms", took.as_secs_f64() * 1e3));
        }
        println!("| {} | {} | {} |", step.title(), times[0], times[1]);
    }
    println!(
        "slowest: {:.1} ms (goal: 50 ms)\n",
        slowest.as_secs_f64() * 1e3
    );
    print_output_row_cpu(&lesson, tokens);
    // Then walking: `)` over every token (tile) of a step once it is open, each key and its frame.
    println!("| step, once open | slowest `)` of the walk over every token or tile |");
    println!("|---|---:|");
    for (index, step) in steps(&lesson).iter().enumerate() {
        let mut app = lesson.clone();
        let tutor = app.tutor_mut().expect("a lesson is open");
        tutor.attention = Attention::compute(&tutor.lesson).into();
        update(&mut app, Action::GoToStep(index + 1));
        let tutor = app.tutor().expect("a lesson is open");
        if !tutor.step_is_per_token() && !tutor.step_is_per_tile() {
            continue;
        }
        let mut terminal = test_terminal(120, 40);
        render(&mut terminal, &app, &theme);
        let mut slowest = Duration::ZERO;
        for _ in 1..tokens.max(tiles) {
            let start = Instant::now();
            update(&mut app, Action::NextToken);
            render(&mut terminal, &app, &theme);
            slowest = slowest.max(start.elapsed());
        }
        println!(
            "| {} | {:.1} ms |",
            step.title(),
            slowest.as_secs_f64() * 1e3
        );
    }
    println!();
}

/// The processor time this process has used so far, every thread's, in ticks of 10 ms: utime +
/// stime, fields 14 and 15 of /proc/self/stat, counted after the command's name (Linux).
fn processor_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The time to make the engine of the lesson (the whole pass, before any step is opened), the
/// mean of five, on the wall clock and in processor time: what opening the lesson costs before
/// its first frame.
fn print_engine_time(lesson: &App) {
    const MAKINGS: u32 = 5;
    let tutor = lesson.tutor().expect("open");
    let (Some(before), start) = (processor_ticks(), Instant::now()) else {
        return;
    };
    for _ in 0..MAKINGS {
        black_box(Attention::compute(&tutor.lesson));
    }
    let wall = start.elapsed() / MAKINGS;
    let Some(after) = processor_ticks() else {
        return;
    };
    println!(
        "the engine (the whole pass), {MAKINGS} makings: {:.0} ms of processor time each (every \
         thread), {:.1} ms on the wall clock\n",
        (after - before) as f64 * 10.0 / f64::from(MAKINGS),
        wall.as_secs_f64() * 1e3
    );
}

/// The processor time (every thread's, so less hostage to the machine's load than the wall
/// clock) of opening the output row at the last token from a fresh engine, the slowest opening:
/// ten openings from clones of one fresh engine, read from /proc/self/stat (Linux, in ticks of
/// 10 ms, so ten openings give it to about 1 ms).
fn print_output_row_cpu(lesson: &App, tokens: usize) {
    let Some(number) = steps(lesson)
        .iter()
        .position(|step| *step == Step::DecodeOutput)
    else {
        return;
    };
    let ticks = processor_ticks;
    let theme = theme();
    let fresh = Attention::compute(&lesson.tutor().expect("open").lesson);
    const OPENINGS: u32 = 10;
    let (Some(before), start) = (ticks(), Instant::now()) else {
        return;
    };
    for _ in 0..OPENINGS {
        let mut app = lesson.clone();
        let tutor = app.tutor_mut().expect("a lesson is open");
        tutor.attention = fresh.clone().into();
        tutor.set_token(tokens - 1);
        let mut terminal = test_terminal(120, 40);
        update(&mut app, Action::GoToStep(number + 1));
        render(&mut terminal, &app, &theme);
    }
    let wall = start.elapsed() / OPENINGS;
    let Some(after) = ticks() else { return };
    println!(
        "the output row at the last token, {OPENINGS} openings: {:.0} ms of processor time each \
         (every thread), {:.1} ms on the wall clock\n",
        (after - before) as f64 * 10.0 / f64::from(OPENINGS),
        wall.as_secs_f64() * 1e3
    );
}

criterion_group!(
    tutor,
    key_benchmarks,
    heads_benchmarks,
    decoding_benchmarks,
    backward_benchmarks
);

fn main() {
    // `--list` (used by test runners to discover benchmarks) wants nothing but the list.
    if std::env::args().any(|arg| arg == "open-steps") {
        print_open_times();
        return;
    }
    if std::env::args().any(|arg| arg == "repaint") {
        print_bytes_tables();
        return;
    }
    if !std::env::args().any(|arg| arg == "--list") {
        print_bytes_tables();
    }
    tutor();
    Criterion::default().configure_from_args().final_summary();
}
