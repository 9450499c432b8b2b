//! A student's tutor once their terminal is up: their app and screen, moved by their keys,
//! their window size and the presenter, and drawn into their channel (SSH) or socket (browser)
//! one frame at a time.
//!
//! The SSH handler only drops what arrives into the session's `Mailbox` (a browser seat's
//! socket is not read while the mailbox is full); this task takes it and has the work done in
//! the class's `Workshop`, a turn at a time, off the runtime's workers, the lightest seats first.
//! That keeps the connection's loop free to read window adjustments while a frame waits for a
//! slow client, keeps one student's heavy keys (a lab sweep, a big lesson's step) from
//! stalling anyone else's connection, and bounds what one student can make the server hold and
//! do: 128 KiB of decoded keys and pastes, one frame in flight, and keys no more than
//! `STALE_INPUT` of their own seat's work behind. While a frame waits, changes pile up in the
//! app's state, not in a queue, and the next frame carries them all (the latest frame wins).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossterm::cursor::Hide;
use crossterm::event::{EnableBracketedPaste, EnableMouseCapture, Event};
use crossterm::terminal::EnterAlternateScreen;
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::{Notify, watch};

use crate::app::{
    Action, App, Classroom, Effect, Follow, Overlay, PollEffect, PollReply, Presented, Prompt,
    PromptFor, Status,
};
use crate::input::action_for;
use crate::input::bytes::Decoder;
use crate::term::channel::{ChannelBackend, Outbox};
use crate::term::{Painter, dispatch};
use crate::ui::{Theme, view};

use super::Shared;
use super::student::{refuse_save, restore_terminal};
use super::wire::Wire;

/// Input kept while the session is busy, in keys and pastes (a key counts as `KEY_COST`, a paste
/// as its length): a client that sends more before its frames are read loses whole keys rather
/// than growing the server's memory. Room for one paste at its longest and keys after it.
const MAX_PENDING_INPUT: usize = 128 * 1024;

/// What a key (or a click, a resize of the terminal) counts for in `MAX_PENDING_INPUT`.
const KEY_COST: usize = 16;

/// How long one turn of a session's work may go on taking keys before it draws the frame and
/// lets the next seat work: a backlog of keys is worked off a turn at a time, between other
/// seats' turns.
const TURN_TIME: Duration = Duration::from_millis(40);

/// How much of its own seat's work a key may wait behind before it is dropped: a seat's backlog
/// is bounded in work, so a client that sends more than the server can do loses its keys
/// rather than taking its share of the machine for minutes. Time spent waiting for other
/// seats' turns does not count: in a busy class a student's keys are slow, not lost.
const STALE_INPUT: Duration = Duration::from_secs(2);

/// How long a lone ESC waits for the rest of a sequence before it counts as the Escape key.
const ESCAPE_WAIT: Duration = Duration::from_millis(50);

/// How long a goodbye may take to reach a client before the session ends without it.
const GOODBYE_WAIT: Duration = Duration::from_secs(2);

/// Why a session ends from the server's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// No key from the student for the idle timeout.
    Idle,
    /// The server is stopping.
    ClassOver,
}

/// What the connection hands to the session: input, a new size, an ending. Input is decoded here,
/// as it arrives, so that what is dropped when too much waits is whole keys and pastes: never
/// the middle of a sequence, nor a paste's closing bracket, which would leave the decoder inside
/// a paste that never ends and every later key swallowed.
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    inbox: Mutex<Inbox>,
    wake: Notify,
    /// Told when the session takes what waits, or ends: there is room again.
    taken: Notify,
}

#[derive(Debug, Default)]
struct Inbox {
    /// Kept across takes: a sequence or a paste may be split across packets.
    decoder: Decoder,
    taken: Taken,
    /// The session has ended: nothing will be taken again.
    closed: bool,
    /// Packets with keys dropped since the log last said so, and when it did.
    dropped: u64,
    dropped_said: Option<Instant>,
}

/// How often the log says a seat's keys are being dropped: a flood sends thousands of packets a
/// second, and the log is the teacher's disk.
const DROPS_SAID_EVERY: Duration = Duration::from_secs(5);

/// What the session takes from the mailbox each time it wakes.
#[derive(Debug, Default)]
struct Taken {
    events: VecDeque<Event>,
    cost: usize,
    size: Option<Size>,
    ending: Option<Ending>,
}

/// A key (or paste, click) and how much work its seat had done when it was taken from the
/// mailbox (`Desk::worked`).
type Stamped = (Duration, Event);

fn cost(event: &Event) -> usize {
    match event {
        Event::Paste(text) => text.len().max(KEY_COST),
        _ => KEY_COST,
    }
}

impl Mailbox {
    /// Counts a packet whose keys were dropped; how many were since the log last said so, when
    /// it is time to say it again (the first, then at most once every few seconds).
    pub(crate) fn dropped_to_say(&self) -> Option<u64> {
        let mut inbox = self.inbox.lock().ok()?;
        inbox.dropped += 1;
        let due = inbox
            .dropped_said
            .is_none_or(|said| said.elapsed() >= DROPS_SAID_EVERY);
        if !due {
            return None;
        }
        inbox.dropped_said = Some(Instant::now());
        Some(std::mem::take(&mut inbox.dropped))
    }

    /// Adds a packet of input; returns false if some keys were dropped because too much is
    /// waiting.
    pub(crate) fn input(&self, data: &[u8]) -> bool {
        let Ok(mut inbox) = self.inbox.lock() else {
            return false;
        };
        let mut events = inbox.decoder.feed(data);
        // A lone ESC in a packet of its own is the Escape key: a sequence starting with ESC
        // arrives in one packet from a real terminal.
        if data == b"\x1b" {
            events.extend(inbox.decoder.flush());
        }
        let mut kept_all = true;
        for event in events {
            let cost = cost(&event);
            if inbox.taken.cost + cost <= MAX_PENDING_INPUT {
                inbox.taken.cost += cost;
                inbox.taken.events.push_back(event);
            } else {
                kept_all = false;
            }
        }
        drop(inbox);
        self.wake.notify_one();
        kept_all
    }

    /// Waits while the input kept is at its limit, until the session takes it (or ends). The
    /// connection waits here before reading more, so a client that sends faster than its
    /// session works is held back by the connection itself (TCP's, SSH's flow control) rather
    /// than having the runtime's workers decode input that would only be dropped: four seats
    /// streaming 60 KB messages of keys took the workers from every classmate's sign-in.
    pub(crate) async fn room(&self) {
        loop {
            let taken = self.taken.notified();
            tokio::pin!(taken);
            taken.as_mut().enable();
            let full = self.inbox.lock().is_ok_and(|inbox| {
                !inbox.closed && inbox.taken.cost + KEY_COST > MAX_PENDING_INPUT
            });
            if !full {
                return;
            }
            taken.await;
        }
    }

    /// The session has ended: a connection waiting for room waits no more.
    fn close(&self) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.closed = true;
        }
        self.taken.notify_waiters();
    }

    pub(crate) fn resize(&self, size: Size) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.taken.size = Some(size);
        }
        self.wake.notify_one();
    }

    pub(crate) fn end(&self, ending: Ending) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.taken.ending.get_or_insert(ending);
        }
        self.wake.notify_one();
    }

    /// Whether a lone ESC waits to see if the rest of a sequence follows.
    fn waiting_on_escape(&self) -> bool {
        self.inbox
            .lock()
            .is_ok_and(|inbox| inbox.decoder.waiting_on_escape())
    }

    /// Nothing came for a moment: a lone ESC waiting is the Escape key after all.
    fn flush_escape(&self) -> Vec<Event> {
        self.inbox
            .lock()
            .map(|mut inbox| inbox.decoder.flush())
            .unwrap_or_default()
    }

    fn take(&self) -> Taken {
        let taken = self
            .inbox
            .lock()
            .map(|mut inbox| std::mem::take(&mut inbox.taken))
            .unwrap_or_default();
        self.taken.notify_waiters();
        taken
    }
}

/// Where the class's tutors do their work: updating an app with a student's keys and drawing
/// its screen. A lab sweep or a big lesson's step takes a tenth of a second or more of CPU, so
/// that work never runs on the runtime's workers (which must stay free to answer every other
/// connection) but on blocking threads, a turn at a time, at most one per core but one at once.
/// Which seat works next is not first come, first served: the seat that has done the least work
/// lately goes first (a fair share), so a classmate who has just come, or who only moves a
/// cursor, passes every seat busy with heavy turns, and the busy seats take turns among
/// themselves. One more lane is kept for light seats only, so that their turns do not wait for a
/// heavy turn to end either: a newcomer's first frame waits for no one's sweep.
#[derive(Clone)]
pub(crate) struct Workshop {
    floor: Arc<Mutex<Floor>>,
    /// Wakes a lane that waits for more work (see `LANE_LINGER`).
    more: Arc<Condvar>,
}

/// How long a lane with nothing to do waits for more before its blocking task ends. At a
/// presenter's step the followers' turns are queued one by one as their sessions wake, each
/// faster than the last was worked: a lane that ended at once was started again for nearly
/// every follower, a blocking task (and often a thread) each. Waiting a moment, one lane works
/// them all in a row.
const LANE_LINGER: Duration = Duration::from_millis(50);

/// The workshop's lanes and the seats waiting for one.
struct Floor {
    /// Turns at once for any seat.
    lanes: usize,
    /// Of `lanes`, how many are working.
    working: usize,
    /// Whether the lane kept for light seats is working.
    light_working: bool,
    /// Of the lanes working, those waiting for more (any seat, light seats).
    lingering: (usize, usize),
    waiting: Vec<Job>,
    /// Jobs queued so far: among seats with the same load, the first to ask goes first.
    queued: u64,
    /// Lanes started so far: each is a blocking task that works one turn after another.
    opened: usize,
}

/// A seat's turn waiting for a lane.
struct Job {
    desk: Desk,
    work: Work,
    order: u64,
    /// The desk's `Load::rank`, which does not change while it waits: a lane picking among
    /// hundreds of followers at a step change compares these, not a logarithm per seat.
    rank: f64,
    /// Its last turn took less than `LIGHT_TURN`.
    quick: bool,
    done: tokio::sync::oneshot::Sender<(Desk, Turned)>,
}

impl Job {
    fn new(
        desk: Desk,
        work: Work,
        order: u64,
        done: tokio::sync::oneshot::Sender<(Desk, Turned)>,
    ) -> Job {
        Job {
            rank: desk.load.rank(),
            quick: desk.load.last_turn < LIGHT_TURN,
            desk,
            work,
            order,
            done,
        }
    }

    /// `Load::is_light` of the waiting desk, from what was kept when it was queued.
    fn is_light(&self, now: Instant) -> bool {
        self.quick && Load::light_at(self.rank, now)
    }
}

/// Which seats a lane takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    Any,
    /// Only seats whose `Load` is light.
    Light,
}

/// How fast a seat's past work stops counting against it: halved every second.
const LOAD_HALF_LIFE: f64 = 1.0;

/// A seat is light, and may take the lane kept for light seats, when its last turn took less than
/// this and its recent work (decayed by `LOAD_HALF_LIFE`) is less than `LIGHT_LOAD`: a cursor
/// move, a step, a first frame; never a lab sweep.
const LIGHT_TURN: Duration = Duration::from_millis(20);
/// In seconds; see `LIGHT_TURN`.
const LIGHT_LOAD: f64 = 0.05;

/// Where `Load::rank` counts time from.
static LOAD_EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

/// A seat's recent work: what decides its place in the workshop's queue.
#[derive(Debug, Clone, Copy, Default)]
struct Load {
    /// Seconds of work, as they stood at `at`.
    work: f64,
    at: Option<Instant>,
    last_turn: Duration,
}

impl Load {
    /// The seat's recent work as it stands at `now`, in seconds.
    fn at(&self, now: Instant) -> f64 {
        self.at.map_or(0.0, |at| {
            let since = now.saturating_duration_since(at).as_secs_f64();
            self.work * 0.5_f64.powf(since / LOAD_HALF_LIFE)
        })
    }

    /// The seat's recent work in a measure whose order between seats does not change as time
    /// passes (every seat's work halves at the same rate): log2 of the work as if it were all
    /// done at `LOAD_EPOCH`. The queue compares seats by it without a power for each.
    fn rank(&self) -> f64 {
        match self.at {
            Some(at) if self.work > 0.0 => {
                let epoch = *LOAD_EPOCH;
                let since = match at.checked_duration_since(epoch) {
                    Some(after) => after.as_secs_f64(),
                    None => -epoch.duration_since(at).as_secs_f64(),
                };
                self.work.log2() + since / LOAD_HALF_LIFE
            }
            _ => f64::NEG_INFINITY,
        }
    }

    fn add(&mut self, turn: Duration, now: Instant) {
        self.work = self.at(now) + turn.as_secs_f64();
        self.at = Some(now);
        self.last_turn = turn;
    }

    fn is_light(&self, now: Instant) -> bool {
        self.last_turn < LIGHT_TURN && Load::light_at(self.rank(), now)
    }

    /// Whether recent work of `rank` is under `LIGHT_LOAD` at `now`: log2 of the work as it
    /// stands at `now` is the rank less the halvings since `LOAD_EPOCH`.
    fn light_at(rank: f64, now: Instant) -> bool {
        let since = now.saturating_duration_since(*LOAD_EPOCH).as_secs_f64();
        rank - since / LOAD_HALF_LIFE < LIGHT_LOAD.log2()
    }
}

impl Default for Workshop {
    /// One turn at a time per core but one: a core stays for the connections themselves.
    fn default() -> Workshop {
        let cores = crate::parallel::cores();
        Workshop::with_turns(cores.saturating_sub(1).max(1))
    }
}

impl Workshop {
    pub(crate) fn with_turns(turns: usize) -> Workshop {
        Workshop {
            floor: Arc::new(Mutex::new(Floor {
                lanes: turns.max(1),
                working: 0,
                light_working: false,
                lingering: (0, 0),
                waiting: Vec::new(),
                queued: 0,
                opened: 0,
            })),
            more: Arc::new(Condvar::new()),
        }
    }

    /// Queues a seat's turn; `done` gets the desk back with what the turn did (or is dropped if
    /// the turn failed). Must be called on the runtime.
    fn queue(&self, desk: Desk, work: Work, done: tokio::sync::oneshot::Sender<(Desk, Turned)>) {
        let now = Instant::now();
        let lane = {
            let mut floor = self.floor.lock().unwrap_or_else(PoisonError::into_inner);
            floor.queued += 1;
            let order = floor.queued;
            let light = desk.load.is_light(now);
            floor.waiting.push(Job::new(desk, work, order, done));
            if floor.lingering.0 > 0 || (light && floor.lingering.1 > 0) {
                self.more.notify_all();
                None
            } else {
                floor.open_lane(now)
            }
        };
        if let Some(lane) = lane {
            let (floor, more) = (Arc::clone(&self.floor), Arc::clone(&self.more));
            tokio::task::spawn_blocking(move || work_lane(&floor, &more, lane));
        }
    }
}

impl Floor {
    /// A lane to start working, if one is free and a waiting seat may take it.
    fn open_lane(&mut self, now: Instant) -> Option<Lane> {
        let lane = if self.working < self.lanes {
            self.working += 1;
            Lane::Any
        } else if !self.light_working && self.waiting.iter().any(|job| job.is_light(now)) {
            self.light_working = true;
            Lane::Light
        } else {
            return None;
        };
        self.opened += 1;
        Some(lane)
    }

    /// The next seat to work in `lane`: the least recent work first, then the first to ask.
    fn next(&mut self, lane: Lane, now: Instant) -> Option<Job> {
        let best = self
            .waiting
            .iter()
            .enumerate()
            .filter(|(_, job)| lane == Lane::Any || job.is_light(now))
            .map(|(at, job)| (at, job.rank, job.order))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)))?
            .0;
        Some(self.waiting.swap_remove(best))
    }

    fn linger(&mut self, lane: Lane, lingering: bool) {
        let count = match lane {
            Lane::Any => &mut self.lingering.0,
            Lane::Light => &mut self.lingering.1,
        };
        if lingering {
            *count += 1;
        } else {
            *count -= 1;
        }
    }

    fn close(&mut self, lane: Lane) {
        match lane {
            Lane::Any => self.working -= 1,
            Lane::Light => self.light_working = false,
        }
    }
}

/// A lane at work on a blocking thread: one seat's turn after another until no seat it may take
/// has waited for `LANE_LINGER`.
fn work_lane(floor: &Mutex<Floor>, more: &Condvar, lane: Lane) {
    loop {
        let job = {
            let mut floor = floor.lock().unwrap_or_else(PoisonError::into_inner);
            let idle = Instant::now();
            loop {
                if let Some(job) = floor.next(lane, Instant::now()) {
                    break job;
                }
                let left = LANE_LINGER.saturating_sub(idle.elapsed());
                if left.is_zero() {
                    floor.close(lane);
                    return;
                }
                floor.linger(lane, true);
                floor = more
                    .wait_timeout(floor, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                floor.linger(lane, false);
            }
        };
        // The seat left while it waited.
        if job.done.is_closed() {
            continue;
        }
        let Job {
            mut desk,
            work,
            done,
            ..
        } = job;
        let turned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let turned = desk.turn(work, TURN_TIME);
            (desk, turned)
        }));
        // A turn that panicked drops `done`: its session ends, the lane goes on.
        if let Ok(turned) = turned {
            let _ = done.send(turned);
        }
    }
}

/// The presenter's screen as drawn for the students who follow it: drawn once per distinct
/// screen (the presenter's version of it, the terminal's size and colours, the student's badge
/// and status line), not once per student. When the presenter changes step, every follower's
/// turn comes at once; drawing the screen is most of a turn's work, and all but the first
/// follower of each size copy it. The bytes that bring a terminal to it are made once too: a
/// whole repaint (another step) does not depend on what was shown, and the change from another
/// shared screen is the same for every follower whose terminal shows that screen. Only a seat
/// that shows something of its own (a follower who moved their cursor, resized or fell behind)
/// diffs the copy with its terminal.
#[derive(Debug, Default)]
pub(crate) struct Stage {
    /// The screens drawn for the presenter's latest versions, the newest last.
    drawn: Mutex<Vec<Arc<Drawn>>>,
    /// Screens drawn for followers (not copied): what the sharing saves, counted.
    renders: AtomicUsize,
    /// Frames encoded for followers (a diff or a repaint, not copied), counted likewise.
    encoded: AtomicUsize,
}

/// Followers of different sizes and colours at once: screens kept per presenter version.
const STAGE_SCREENS: usize = 16;

/// What makes two followers' screens the same.
#[derive(Debug, Clone, PartialEq)]
struct ScreenKey {
    version: u64,
    size: Size,
    theme: Theme,
    follow: Follow,
    status: Option<Status>,
    /// The student's answer to the open poll, which their poll panel shows (none once it is
    /// revealed: the reveal is the same on every follower's screen).
    answer: Option<String>,
    /// The answer's prompt on the bottom line while the student types it: students typing the
    /// same keys see the same screens.
    typing: Option<Prompt>,
}

impl ScreenKey {
    /// The key of `app`'s screen when it is exactly the presenter's `version` of it: following,
    /// on a lesson, nothing of the student's own on top but the status line and their answer
    /// to the poll. `None` when anything else shows.
    fn of(app: &App, version: u64, size: Size, theme: Theme) -> Option<ScreenKey> {
        let follow = app.follow().filter(|_| app.is_following())?;
        let typing = match &app.overlay {
            Overlay::Prompt(
                prompt @ Prompt {
                    purpose: PromptFor::PollAnswer(_),
                    ..
                },
            ) => Some(prompt.clone()),
            _ => None,
        };
        let plain = app.tutor().is_some()
            && app.lab().is_none()
            && (app.overlay == Overlay::None || typing.is_some())
            && app.after_save.is_none()
            && !app.quit;
        plain.then(|| ScreenKey {
            version,
            size,
            theme,
            follow,
            status: app.status.clone(),
            answer: app
                .polling
                .poll
                .as_ref()
                .filter(|poll| poll.is_open())
                .and(app.polling.mine.as_ref())
                .map(|(_, typed)| typed.clone()),
            typing,
        })
    }
}

/// One screen drawn for followers, and the bytes that bring a terminal to it, once a follower
/// has needed them: a whole repaint, and the changes from other shared screens.
#[derive(Debug)]
struct Drawn {
    key: ScreenKey,
    screen: Arc<Buffer>,
    repaint: Mutex<Option<Arc<Vec<u8>>>>,
    /// The bytes from the screen of each key to this one.
    changes: Mutex<Vec<(ScreenKey, Arc<Vec<u8>>)>>,
}

impl Drawn {
    /// The bytes to this screen from the shared screen `from`, or a whole repaint when
    /// `repaints` (whatever the terminal showed).
    fn bytes_from(&self, from: Option<&ScreenKey>, repaints: bool) -> Option<Arc<Vec<u8>>> {
        if repaints {
            return self.repaint.lock().ok()?.clone();
        }
        let from = from?;
        let changes = self.changes.lock().ok()?;
        changes
            .iter()
            .find(|(key, _)| key == from)
            .map(|(_, bytes)| Arc::clone(bytes))
    }

    /// Keeps `bytes`, just encoded, for the next follower coming from the same screen.
    fn keep_bytes(&self, from: Option<ScreenKey>, repaints: bool, bytes: &[u8]) {
        if repaints {
            if let Ok(mut kept) = self.repaint.lock() {
                kept.get_or_insert_with(|| Arc::new(bytes.to_vec()));
            }
        } else if let Some(from) = from
            && let Ok(mut changes) = self.changes.lock()
            && !changes.iter().any(|(key, _)| *key == from)
        {
            // Followers come from few screens at once (the presenter's last versions, at each
            // size): more than that are left to diff on their own.
            if changes.len() < STAGE_SCREENS {
                changes.push((from, Arc::new(bytes.to_vec())));
            }
        }
    }
}

impl Stage {
    /// How many follower screens were drawn rather than copied.
    #[cfg(test)]
    pub(crate) fn renders(&self) -> usize {
        self.renders.load(Ordering::SeqCst)
    }

    /// How many follower frames were encoded rather than copied.
    #[cfg(test)]
    pub(crate) fn encoded(&self) -> usize {
        self.encoded.load(Ordering::SeqCst)
    }

    fn find(&self, key: &ScreenKey) -> Option<Arc<Drawn>> {
        let drawn = self.drawn.lock().ok()?;
        drawn.iter().find(|drawn| drawn.key == *key).cloned()
    }

    fn keep(&self, drawn: Arc<Drawn>) {
        self.renders.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut kept) = self.drawn.lock() {
            // Older versions are not drawn again: the presenter has moved on.
            let newest = drawn.key.version;
            kept.retain(|old| old.key.version >= newest && old.key != drawn.key);
            if kept.len() >= STAGE_SCREENS {
                kept.remove(0);
            }
            kept.push(drawn);
        }
    }
}

/// Everything a session starts from.
pub(crate) struct Start {
    pub shared: Arc<Shared>,
    pub who: String,
    pub size: Size,
    pub theme: Theme,
    pub writer: Wire,
    pub mailbox: Arc<Mailbox>,
    /// Ends with an error once the connection's handler is gone.
    pub connection: watch::Receiver<()>,
}

struct Session {
    who: String,
    /// The student's app and screen; `None` only while a turn has it on a blocking thread.
    desk: Option<Desk>,
    workshop: Workshop,
    writer: Wire,
    mailbox: Arc<Mailbox>,
    connection: watch::Receiver<()>,
    presenter: Option<watch::Receiver<Arc<Presented>>>,
    class_over: watch::Receiver<bool>,
    following: Tally,
    /// Counted while this student is free with unsaved edits of their own.
    unsaved: Tally,
    /// The class's polls, which forget this seat's answer when the session ends.
    polls: Arc<super::polls::ClassPolls>,
    seat: u64,
}

/// What a turn works on: the student's app and the screen it is drawn into.
struct Desk {
    who: String,
    app: App,
    terminal: Terminal<ChannelBackend>,
    outbox: Outbox,
    painter: Painter,
    theme: Theme,
    size: Size,
    /// The time this seat's turns have taken, all told: the clock its keys go stale by.
    worked: Duration,
    /// Its recent work: its place in the workshop's queue.
    load: Load,
    /// The class's screens drawn for followers, when the class has a presenter.
    stage: Option<Arc<Stage>>,
    /// The presenter's version of the screen shown, while it is shown untouched.
    presented: Option<u64>,
    /// The shared screen the terminal shows, exactly, when its last frame was one.
    shows: Option<ScreenKey>,
    /// Where the student's answers to the class's polls go, under their seat's number.
    polls: Option<(Arc<super::polls::ClassPolls>, u64)>,
}

/// What waits for the session's next turn.
#[derive(Default)]
struct Work {
    events: VecDeque<Stamped>,
    size: Option<Size>,
    presented: Option<Arc<Presented>>,
}

impl Work {
    fn is_empty(&self) -> bool {
        self.events.is_empty() && self.size.is_none() && self.presented.is_none()
    }
}

/// What a turn did.
struct Turned {
    /// The frame to send; empty when nothing on the screen changed.
    frame: Vec<u8>,
    /// Keys the turn had no time for, for the next.
    left: VecDeque<Stamped>,
    following: bool,
    unsaved: bool,
    quit: bool,
    /// The screen could not be drawn or resized: the session ends.
    failed: bool,
}

/// Runs a student's session until they quit, leave, or the server ends it.
pub(crate) async fn run(start: Start) {
    let who = start.who.clone();
    match Session::new(start) {
        Ok(session) => session.run().await,
        Err(error) => tracing::warn!(student = %who, %error, "the tutor could not start"),
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.mailbox.close();
        self.polls.leave(self.seat);
    }
}

impl Session {
    fn new(start: Start) -> anyhow::Result<Session> {
        let mut app = App::new(start.shared.entries.clone(), None);
        // Files saved here would land on the teacher's machine.
        app.can_save = false;
        // Given back when the session ends and the app with it.
        app.allowance = Some(start.shared.memory.seat());
        let presenter = start.shared.presenter.clone();
        if presenter.is_some() {
            let follow = if start.shared.lock {
                Follow::Locked
            } else {
                Follow::Following
            };
            app.classroom = Some(Classroom::Student {
                follow,
                latest: None,
            });
        }
        let polls = Arc::clone(&start.shared.polls);
        let seat = polls.seat();
        Ok(Session {
            following: Tally::new(&start.shared, |shared| &shared.following),
            unsaved: Tally::new(&start.shared, |shared| &shared.unsaved),
            class_over: start.shared.class_over.clone(),
            workshop: start.shared.workshop.clone(),
            desk: Some(
                Desk::new(&start.who, app, start.size, start.theme)?
                    .on_stage(presenter.as_ref().map(|_| Arc::clone(&start.shared.stage)))
                    .at_seat(Arc::clone(&polls), seat),
            ),
            polls,
            seat,
            who: start.who,
            writer: start.writer,
            mailbox: start.mailbox,
            connection: start.connection,
            presenter,
        })
    }

    async fn run(mut self) {
        let mut work = Work {
            presented: self
                .presenter
                .as_mut()
                .map(|presenter| Arc::clone(&presenter.borrow_and_update())),
            ..Work::default()
        };
        // The first turn draws the first frame, whatever it has to do.
        let mut draw = true;
        loop {
            if draw || !work.is_empty() {
                let Some(turned) = self.turn(std::mem::take(&mut work)).await else {
                    return;
                };
                self.following.set(turned.following);
                self.unsaved.set(turned.unsaved);
                if turned.failed || !self.send_frame(turned.frame).await {
                    return;
                }
                if turned.quit {
                    tracing::info!(student = %self.who, "left");
                    self.goodbye(None).await;
                    return;
                }
                work.events = turned.left;
                draw = false;
            }
            // Keys left over from the last turn: take what has come since and queue for the
            // next turn at once, behind the seats already waiting.
            if work.events.is_empty() {
                let escape_pending = self.mailbox.waiting_on_escape();
                tokio::select! {
                    () = self.mailbox.wake.notified() => {}
                    changed = presenter_changed(&mut self.presenter) => {
                        work.presented = changed;
                    }
                    _ = self.class_over.changed() => {
                        self.goodbye(Some(Ending::ClassOver)).await;
                        return;
                    }
                    _ = self.connection.changed() => return,
                    () = tokio::time::sleep(ESCAPE_WAIT), if escape_pending => {
                        let worked = self.worked();
                        work.events.extend(
                            self.mailbox.flush_escape().into_iter().map(|event| (worked, event)),
                        );
                    }
                }
            }
            let inbox = self.mailbox.take();
            if inbox.ending.is_some() {
                self.goodbye(inbox.ending).await;
                return;
            }
            work.size = inbox.size.or(work.size);
            let worked = self.worked();
            work.events
                .extend(inbox.events.into_iter().map(|event| (worked, event)));
        }
    }

    /// The seat's work so far, to stamp keys with as they are taken.
    fn worked(&self) -> Duration {
        self.desk
            .as_ref()
            .map_or(Duration::ZERO, |desk| desk.worked)
    }

    /// Waits for a turn in the workshop, where `work` is done on a blocking thread. `None` when
    /// the session is over (the connection went, the class ended, the work could not be done).
    async fn turn(&mut self, work: Work) -> Option<Turned> {
        let desk = self.desk.take()?;
        let (done, turned) = tokio::sync::oneshot::channel();
        self.workshop.queue(desk, work, done);
        let done = tokio::select! {
            done = turned => done,
            _ = self.connection.changed() => return None,
            _ = self.class_over.changed() => {
                self.goodbye(Some(Ending::ClassOver)).await;
                return None;
            }
        };
        match done {
            Ok((desk, turned)) => {
                self.desk = Some(desk);
                Some(turned)
            }
            Err(_) => {
                tracing::warn!(student = %self.who, "the tutor's work failed");
                None
            }
        }
    }

    /// Sends a frame, waiting while the client is not reading. Returns false when the session
    /// is over (the connection went, or the class ended meanwhile).
    async fn send_frame(&mut self, bytes: Vec<u8>) -> bool {
        if bytes.is_empty() {
            return true;
        }
        tokio::select! {
            sent = self.writer.send(bytes) => sent,
            _ = self.connection.changed() => false,
            _ = self.class_over.changed() => {
                self.goodbye(Some(Ending::ClassOver)).await;
                false
            }
        }
    }

    /// Gives the student their terminal back, says why the session ended (unless they quit),
    /// and ends it.
    async fn goodbye(&mut self, ending: Option<Ending>) {
        let mut bytes = restore_terminal();
        let why = match ending {
            None => "",
            Some(Ending::Idle) => "no key pressed for a while; connect again to go on",
            Some(Ending::ClassOver) => "the class has ended",
        };
        if !why.is_empty() {
            bytes.extend_from_slice(format!("attn-tutor: {why}\r\n").as_bytes());
        }
        if let Some(ending) = ending {
            tracing::info!(student = %self.who, ?ending, "session ended by the server");
        }
        let _ = tokio::time::timeout(GOODBYE_WAIT, self.writer.close(bytes, why)).await;
    }
}

impl Desk {
    fn new(who: &str, app: App, size: Size, theme: Theme) -> anyhow::Result<Desk> {
        let outbox = Outbox::default();
        let backend = ChannelBackend::new(outbox.clone(), size);
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, size.width, size.height)),
            },
        )?;
        let mut setup = outbox.clone();
        crossterm::queue!(
            setup,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            Hide
        )?;
        Ok(Desk {
            who: who.to_string(),
            app,
            terminal,
            outbox,
            painter: Painter::default(),
            theme,
            size,
            worked: Duration::ZERO,
            load: Load::default(),
            stage: None,
            presented: None,
            shows: None,
            polls: None,
        })
    }

    /// Takes the student's answers to the class's polls, under `seat`.
    fn at_seat(mut self, polls: Arc<super::polls::ClassPolls>, seat: u64) -> Desk {
        self.polls = Some((polls, seat));
        self
    }

    /// Shares the screens drawn for followers with the rest of the class.
    fn on_stage(mut self, stage: Option<Arc<Stage>>) -> Desk {
        self.stage = stage;
        self
    }

    /// One turn: the presenter's latest screen, the new size, and the student's keys in the
    /// order typed until `TURN_TIME` is spent, then the frame. Keys that waited longer than
    /// `STALE_INPUT` of this seat's work are dropped, and the student is told.
    fn turn(&mut self, work: Work, time: Duration) -> Turned {
        let started = Instant::now();
        let mut failed = false;
        if let Some(presented) = work.presented {
            self.presented = Some(presented.version);
            dispatch(
                &mut self.app,
                Action::Presenter(presented),
                &mut refuse_save,
            );
        }
        if let Some(size) = work.size
            && self.resize(size).is_err()
        {
            failed = true;
        }
        let mut events = work.events;
        let mut dropped = 0;
        while !self.app.quit
            && !failed
            && let Some((stamp, event)) = events.pop_front()
        {
            if (self.worked + started.elapsed()).saturating_sub(stamp) > STALE_INPUT {
                dropped += 1;
                continue;
            }
            if !self.apply(&event) {
                self.presented = None;
            }
            if started.elapsed() >= time {
                break;
            }
        }
        if dropped > 0 {
            tracing::info!(student = %self.who, dropped, "stale keys dropped");
            self.app.status = Some(Status::error(dropped_keys(dropped)));
        }
        let mut frame = Vec::new();
        if !self.app.quit && !failed {
            match self.draw() {
                Ok(bytes) => frame = bytes,
                Err(error) => {
                    tracing::warn!(student = %self.who, %error, "drawing failed");
                    failed = true;
                }
            }
        }
        let took = started.elapsed();
        self.worked += took;
        self.load.add(took, Instant::now());
        Turned {
            frame,
            left: events,
            // A follower's screen is the presenter's, edits and all: only a free student's
            // edits are their own.
            following: self.app.is_following(),
            unsaved: !self.app.is_following()
                && self
                    .app
                    .tutor()
                    .is_some_and(crate::app::Tutor::has_unsaved_edits),
            quit: self.app.quit,
            failed,
        }
    }

    /// Applies one key or paste. Returns whether it only answered the class's poll (opened the
    /// answer's prompt, typed in it, sent or dropped it): that leaves the presenter's screen
    /// as it was under the student's answer, which `ScreenKey` holds, so students who typed
    /// the same answer share its drawing, and at the reveal the bytes from it.
    fn apply(&mut self, event: &Event) -> bool {
        let area = Rect::new(0, 0, self.size.width, self.size.height);
        // With the prompt open, only the prompt's keys (and Ctrl-c) act: none moves the cursor.
        let answering = matches!(
            &self.app.overlay,
            Overlay::Prompt(Prompt {
                purpose: PromptFor::PollAnswer(_),
                ..
            })
        );
        let Some(action) = action_for(event, &self.app, area) else {
            return false;
        };
        let answers = answering || matches!(action, Action::StartPollAnswer(_));
        let polls = &self.polls;
        // An answer to the class's poll goes to the server; nothing is saved here.
        dispatch(&mut self.app, action, &mut |effect| match (effect, polls) {
            (Effect::Poll(PollEffect::Send { number, answer }), Some((polls, seat))) => {
                Action::Poll(PollReply::Sent(polls.answer(*seat, *number, *answer)))
            }
            _ => refuse_save(effect),
        });
        answers
    }

    fn resize(&mut self, size: Size) -> std::io::Result<()> {
        self.size = size;
        // Resizing may clear the terminal: its screen is no longer the shared one.
        self.shows = None;
        self.terminal.backend_mut().set_size(size);
        self.terminal
            .resize(Rect::new(0, 0, size.width, size.height))
    }

    /// Draws the app; what changed on the screen, to send. A follower's screen that is the
    /// presenter's, untouched, comes from the stage when another follower drew it already, and
    /// so do its bytes when another follower's terminal showed what this one shows.
    fn draw(&mut self) -> std::io::Result<Vec<u8>> {
        let key = self
            .stage
            .as_ref()
            .and(self.presented)
            .and_then(|version| ScreenKey::of(&self.app, version, self.size, self.theme));
        let from = self.shows.take();
        let (Some(stage), Some(key)) = (self.stage.clone(), key) else {
            self.painter
                .draw(&mut self.terminal, &self.app, &self.theme)?;
            return Ok(self.outbox.take());
        };
        // What was queued before this frame (the terminal's setup, on the first) goes first.
        let mut bytes = self.outbox.take();
        let repaints = self.painter.repaints(&self.app);
        let Some(drawn) = stage.find(&key) else {
            let mut screen = None;
            let (app, theme) = (&self.app, &self.theme);
            self.painter.draw_with(&mut self.terminal, app, |frame| {
                view(frame, app, theme);
                screen = Some(frame.buffer_mut().clone());
            })?;
            stage.encoded.fetch_add(1, Ordering::SeqCst);
            let frame = self.outbox.take();
            if let Some(screen) = screen {
                let drawn = Drawn {
                    key: key.clone(),
                    screen: Arc::new(screen),
                    repaint: Mutex::default(),
                    changes: Mutex::default(),
                };
                drawn.keep_bytes(from, repaints, &frame);
                stage.keep(Arc::new(drawn));
                self.shows = Some(key);
            }
            bytes.extend_from_slice(&frame);
            return Ok(bytes);
        };
        if let Some(shared) = drawn.bytes_from(from.as_ref(), repaints) {
            self.painter.adopt(&self.app, &drawn.screen);
            bytes.extend_from_slice(&shared);
            self.shows = Some(key);
            return Ok(bytes);
        }
        self.painter
            .draw_with(&mut self.terminal, &self.app, |frame| {
                let buffer = frame.buffer_mut();
                if buffer.area == drawn.screen.area {
                    buffer.content.clone_from_slice(&drawn.screen.content);
                } else {
                    buffer.clone_from(&drawn.screen);
                }
            })?;
        stage.encoded.fetch_add(1, Ordering::SeqCst);
        let frame = self.outbox.take();
        drawn.keep_bytes(from, repaints, &frame);
        self.shows = Some(key);
        bytes.extend_from_slice(&frame);
        Ok(bytes)
    }
}

/// What the student reads when keys they typed were dropped.
fn dropped_keys(dropped: usize) -> String {
    let (keys, were) = if dropped == 1 {
        ("key", "was")
    } else {
        ("keys", "were")
    };
    format!(
        "{dropped} {keys} {were} dropped: typed while the tutor was still busy with over {} s of \
         your earlier keys; type again",
        STALE_INPUT.as_secs()
    )
}

/// The presenter's next screen; never comes when there is no presenter (or it has stopped).
async fn presenter_changed(
    presenter: &mut Option<watch::Receiver<Arc<Presented>>>,
) -> Option<Arc<Presented>> {
    let Some(receiver) = presenter.as_mut() else {
        return std::future::pending().await;
    };
    match receiver.changed().await {
        Ok(()) => Some(Arc::clone(&receiver.borrow_and_update())),
        Err(_) => {
            *presenter = None;
            None
        }
    }
}

/// This session's place in one of the class's counts (students following the presenter, free
/// students with unsaved edits), given back when the session ends.
struct Tally {
    shared: Arc<Shared>,
    count: fn(&Shared) -> &std::sync::atomic::AtomicUsize,
    counted: bool,
}

impl Tally {
    fn new(shared: &Arc<Shared>, count: fn(&Shared) -> &std::sync::atomic::AtomicUsize) -> Tally {
        Tally {
            shared: Arc::clone(shared),
            count,
            counted: false,
        }
    }

    fn set(&mut self, counted: bool) {
        if counted != self.counted {
            let count = (self.count)(&self.shared);
            if counted {
                count.fetch_add(1, Ordering::SeqCst);
            } else {
                count.fetch_sub(1, Ordering::SeqCst);
            }
            self.counted = counted;
        }
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        self.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_cannot_make_the_server_hold_more_input_than_the_limit() {
        let mailbox = Mailbox::default();
        assert!(mailbox.input(&[b'j'; 1000]));
        assert!(!mailbox.input(&vec![b'k'; MAX_PENDING_INPUT]));
        let taken = mailbox.take();
        assert_eq!(taken.events.len(), MAX_PENDING_INPUT / KEY_COST);
        assert!(taken.cost <= MAX_PENDING_INPUT);
        // Once the session has taken it, there is room again.
        assert!(mailbox.input(b"n"));
    }

    #[test]
    fn a_flood_of_dropped_keys_is_said_once_with_its_count_not_once_a_packet() {
        let mailbox = Mailbox::default();
        assert!(
            mailbox.input(&vec![b'r'; MAX_PENDING_INPUT / KEY_COST]),
            "the first fills it"
        );
        let said: Vec<u64> = (0..200)
            .filter(|_| !mailbox.input(&vec![b'r'; 1000]))
            .filter_map(|_| mailbox.dropped_to_say())
            .collect();
        // The first drop is said at once; the next are counted for the next saying.
        assert_eq!(said, [1]);
        let mut inbox = mailbox.inbox.lock().unwrap();
        assert_eq!(inbox.dropped, 199);
        inbox.dropped_said = Some(Instant::now() - DROPS_SAID_EVERY);
        drop(inbox);
        assert_eq!(mailbox.dropped_to_say(), Some(200));
    }

    /// The longest a test waits for the workshop to go quiet.
    const PATIENCE: Duration = Duration::from_secs(10);

    fn desk() -> Desk {
        let app = App::new(App::builtin_entries(), None);
        Desk::new("student", app, Size::new(80, 24), Theme::from_env(true)).unwrap()
    }

    fn keys(text: &str, stamp: Duration) -> VecDeque<Stamped> {
        let mailbox = Mailbox::default();
        mailbox.input(text.as_bytes());
        mailbox
            .take()
            .events
            .into_iter()
            .map(|event| (stamp, event))
            .collect()
    }

    fn lab_seed(desk: &Desk) -> u64 {
        desk.app.lab().expect("the lab is open").settings().seed
    }

    #[test]
    fn a_turn_out_of_time_draws_and_leaves_the_rest_of_the_keys_for_the_next() {
        let mut desk = desk();
        // Stamped ahead, so that no key goes stale however slowly the sweep is drawn here.
        let work = Work {
            events: keys("Lrrrr", Duration::from_secs(3600)),
            ..Work::default()
        };
        // No time at all: one key a turn, and a frame after each.
        let turned = desk.turn(work, Duration::ZERO);
        assert_eq!(turned.left.len(), 4);
        assert!(!turned.frame.is_empty());
        assert!(desk.app.lab().is_some());
        let turned = desk.turn(
            Work {
                events: turned.left,
                ..Work::default()
            },
            Duration::from_secs(60),
        );
        assert!(turned.left.is_empty());
        assert_eq!(lab_seed(&desk), 5, "every r of the backlog counted");
    }

    #[test]
    fn keys_that_waited_too_long_for_their_turn_are_dropped_and_the_student_told() {
        let mut desk = desk();
        let lab = Work {
            events: keys("L", Duration::from_secs(3600)),
            ..Work::default()
        };
        desk.turn(lab, Duration::from_secs(60));
        assert!(desk.app.lab().is_some());
        assert!(desk.app.status.is_none());
        // This seat has worked 10 s; three r came when it had worked 7 s, one when 9.
        desk.worked = Duration::from_secs(10);
        let mut events = keys("rrr", Duration::from_secs(7));
        events.extend(keys("r", Duration::from_secs(9)));
        let turned = desk.turn(
            Work {
                events,
                ..Work::default()
            },
            Duration::from_secs(60),
        );
        assert!(turned.left.is_empty());
        assert_eq!(lab_seed(&desk), 2, "only the fresh r counted");
        let status = desk
            .app
            .status
            .as_ref()
            .expect("the student is told")
            .text
            .clone();
        assert_eq!(
            status,
            "3 keys were dropped: typed while the tutor was still busy with over 2 s of your \
             earlier keys; type again"
        );
    }

    /// A follower's desk sharing `stage`, on a terminal of `size`.
    fn follower(stage: &Arc<Stage>, size: Size) -> Desk {
        let mut app = App::new(App::builtin_entries(), None);
        app.classroom = Some(Classroom::Student {
            follow: Follow::Following,
            latest: None,
        });
        Desk::new("student", app, size, Theme::from_env(true))
            .unwrap()
            .on_stage(Some(Arc::clone(stage)))
    }

    /// The presenter on the first lesson, `steps` steps in, as students get it.
    fn presented(steps: usize, version: u64) -> Arc<Presented> {
        let mut teacher = App::new(App::builtin_entries(), None);
        dispatch(&mut teacher, Action::Submit, &mut refuse_save);
        for _ in 0..steps {
            dispatch(&mut teacher, Action::NextStep, &mut refuse_save);
        }
        Arc::new(Presented::of(&teacher, version))
    }

    /// What a terminal shows after `frames`.
    fn shown(size: Size, frames: &[&[u8]]) -> String {
        let mut terminal = vt100::Parser::new(
            size.height.try_into().unwrap(),
            size.width.try_into().unwrap(),
            0,
        );
        for frame in frames {
            terminal.process(frame);
        }
        terminal.screen().contents_formatted()
    }

    fn presenter_moves(desk: &mut Desk, presented: &Arc<Presented>) -> Vec<u8> {
        let work = Work {
            presented: Some(Arc::clone(presented)),
            ..Work::default()
        };
        let turned = desk.turn(work, Duration::from_secs(60));
        assert!(!turned.failed);
        turned.frame
    }

    #[test]
    fn followers_on_the_same_screen_share_one_drawing_and_each_terminal_stays_right() {
        let stage = Arc::new(Stage::default());
        let size = Size::new(80, 24);
        let first = presented(0, 1);
        let mut class: Vec<Desk> = (0..5).map(|_| follower(&stage, size)).collect();
        let opened: Vec<Vec<u8>> = class
            .iter_mut()
            .map(|desk| presenter_moves(desk, &first))
            .collect();
        assert_eq!(
            stage.renders(),
            1,
            "five followers, one screen, one drawing"
        );
        let computed = |desk: &Desk| Arc::clone(&desk.app.tutor().unwrap().attention);
        let presenters = Arc::clone(&first.tutor.as_ref().unwrap().attention);
        assert!(
            class
                .iter()
                .all(|desk| Arc::ptr_eq(&computed(desk), &presenters)),
            "the followers' tutors share the presenter's computed lesson, not copies of it"
        );
        // A seat of its own draws the same screen.
        let alone = Arc::new(Stage::default());
        let mut own = follower(&alone, size);
        let own_opened = presenter_moves(&mut own, &first);
        for frame in &opened {
            assert_eq!(shown(size, &[frame]), shown(size, &[&own_opened]));
        }

        // One follower looks around on their own, another's terminal is larger: the presenter's
        // next step reaches both right, from what each of them shows.
        let looking = keys("jjl", Duration::from_secs(3600));
        let looked = class[0].turn(
            Work {
                events: looking.clone(),
                ..Work::default()
            },
            Duration::from_secs(60),
        );
        own.turn(
            Work {
                events: looking,
                ..Work::default()
            },
            Duration::from_secs(60),
        );
        let larger = Size::new(100, 30);
        class[1].resize(larger).unwrap();
        let next = presented(1, 2);
        let renders = stage.renders();
        let frames: Vec<Vec<u8>> = class
            .iter_mut()
            .map(|desk| presenter_moves(desk, &next))
            .collect();
        assert_eq!(
            stage.renders(),
            renders + 2,
            "one drawing per size, whatever each follower showed before"
        );
        let own_next = presenter_moves(&mut own, &next);
        let expected = shown(size, &[&own_opened, &own_next]);
        assert_eq!(
            shown(size, &[&opened[0], &looked.frame, &frames[0]]),
            expected
        );
        for at in 2..5 {
            assert_eq!(shown(size, &[&opened[at], &frames[at]]), expected);
        }
        let mut large = follower(&alone, larger);
        let large_next = presenter_moves(&mut large, &next);
        assert_eq!(
            shown(larger, &[&frames[1]]),
            shown(larger, &[&large_next]),
            "the resized follower is repainted whole at its new size"
        );

        // A follower who moved their cursor on the same step is not given the shared screen
        // until the presenter moves again: their own cursor shows.
        let moved = class[2].turn(
            Work {
                events: keys("k", Duration::from_secs(3600)),
                ..Work::default()
            },
            Duration::from_secs(60),
        );
        assert_ne!(
            shown(size, &[&opened[2], &frames[2], &moved.frame]),
            expected,
            "the follower's own cursor move shows"
        );
    }

    #[test]
    fn followers_showing_the_same_screen_get_the_same_bytes_encoded_once_and_each_terminal_stays_right()
     {
        let stage = Arc::new(Stage::default());
        let size = Size::new(80, 24);
        let mut teacher = App::new(App::builtin_entries(), None);
        dispatch(&mut teacher, Action::Submit, &mut refuse_save);
        dispatch(&mut teacher, Action::NextStep, &mut refuse_save);
        let first = Arc::new(Presented::of(&teacher, 1));
        // The presenter moves their cursor on the same step: not a whole repaint, a change
        // that depends on what each terminal shows.
        dispatch(
            &mut teacher,
            Action::Move(crate::app::Direction::Up),
            &mut refuse_save,
        );
        let moved = Arc::new(Presented::of(&teacher, 2));
        let mut class: Vec<Desk> = (0..6).map(|_| follower(&stage, size)).collect();
        let opened: Vec<Vec<u8>> = class
            .iter_mut()
            .map(|desk| presenter_moves(desk, &first))
            .collect();
        // One follower moved their own cursor meanwhile: their terminal shows their screen.
        let own_move = class[5]
            .turn(
                Work {
                    events: keys("l", Duration::from_secs(3600)),
                    ..Work::default()
                },
                Duration::from_secs(60),
            )
            .frame;
        let encoded = stage.encoded();
        let frames: Vec<Vec<u8>> = class
            .iter_mut()
            .map(|desk| presenter_moves(desk, &moved))
            .collect();
        assert_eq!(
            stage.encoded(),
            encoded + 2,
            "five terminals showing the shared screen, one showing its own: two encodings"
        );
        assert!(frames[1..5].iter().all(|frame| *frame == frames[0]));
        // Each terminal shows what a seat of its own, drawn all along, shows.
        let alone = Arc::new(Stage::default());
        let mut own = follower(&alone, size);
        let own_first = presenter_moves(&mut own, &first);
        let own_moved = presenter_moves(&mut own, &moved);
        let expected = shown(size, &[&own_first, &own_moved]);
        assert_ne!(
            expected,
            shown(size, &[&own_first]),
            "the presenter's move shows"
        );
        for at in 0..5 {
            assert_eq!(shown(size, &[&opened[at], &frames[at]]), expected);
        }
        // That terminal got its own diff, which may write a blank cell where the others cleared
        // it: the same to the eye, so compared cell by cell.
        assert_eq!(
            looks(size, &[&opened[5], &own_move, &frames[5]]),
            looks(size, &[&own_first, &own_moved])
        );
    }

    #[test]
    fn at_a_step_change_followers_share_the_screen_and_its_working_is_measured_once_for_the_class()
    {
        let stage = Arc::new(Stage::default());
        let size = Size::new(80, 24);
        let (before, step) = (presented(1, 1), presented(2, 2));
        let mut class: Vec<Desk> = (0..6).map(|_| follower(&stage, size)).collect();
        for desk in &mut class {
            presenter_moves(desk, &before);
        }
        let sweeps = crate::ui::layout::sweeps();
        for desk in &mut class {
            presenter_moves(desk, &step);
        }
        let drawn = stage
            .drawn
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("the step was drawn");
        // The first follower drew it; the stage and every other follower's painter hold that
        // one screen, not a copy each.
        assert_eq!(Arc::strong_count(&drawn.screen), class.len());
        let measured = crate::ui::layout::sweeps() - sweeps;
        assert!(measured > 0, "the step's working is measured cell by cell");
        // Every follower moves their own cursor: each draws their own screen, and not one
        // measures every cell of the matrix again.
        for desk in &mut class {
            let turned = desk.turn(
                Work {
                    events: keys("j", Duration::from_secs(3600)),
                    ..Work::default()
                },
                Duration::from_secs(60),
            );
            assert!(!turned.frame.is_empty());
        }
        assert_eq!(crate::ui::layout::sweeps() - sweeps, measured);
    }

    #[test]
    fn a_follower_taking_the_presenters_step_keeps_its_own_screen_to_draw_its_next_key_into() {
        let stage = Arc::new(Stage::default());
        let size = Size::new(80, 24);
        let (before, step) = (presented(1, 1), presented(2, 2));
        let press = |desk: &mut Desk, key: &str| {
            let work = Work {
                events: keys(key, Duration::from_secs(3600)),
                ..Work::default()
            };
            let turned = desk.turn(work, Duration::from_secs(60));
            assert!(!turned.failed);
            turned.frame
        };
        // Each follower moved their own cursor (their own screen), then the presenter changed
        // step: all but the first take the shared screen.
        let mut class: Vec<Desk> = (0..6).map(|_| follower(&stage, size)).collect();
        let mut sent: Vec<Vec<Vec<u8>>> = vec![Vec::new(); class.len()];
        for (desk, frames) in class.iter_mut().zip(&mut sent) {
            frames.push(presenter_moves(desk, &before));
        }
        for (desk, frames) in class.iter_mut().zip(&mut sent) {
            frames.push(press(desk, "j"));
        }
        for (desk, frames) in class.iter_mut().zip(&mut sent) {
            frames.push(presenter_moves(desk, &step));
        }
        assert_eq!(stage.renders(), 2, "one drawing per step");
        let blanks: Vec<usize> = class.iter().map(|desk| desk.painter.blanks()).collect();
        for (desk, frames) in class.iter_mut().zip(&mut sent) {
            frames.push(press(desk, "l"));
        }
        // Their next key is drawn into the screen each had before the step, not a new one.
        let now: Vec<usize> = class.iter().map(|desk| desk.painter.blanks()).collect();
        assert_eq!(now, blanks);
        // And every terminal shows what a student drawn on their own would see.
        let mut alone = follower(&stage, size).on_stage(None);
        let alone = [
            presenter_moves(&mut alone, &before),
            press(&mut alone, "j"),
            presenter_moves(&mut alone, &step),
            press(&mut alone, "l"),
        ];
        let alone: Vec<&[u8]> = alone.iter().map(Vec::as_slice).collect();
        for frames in &sent {
            let frames: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
            assert_eq!(looks(size, &frames), looks(size, &alone));
        }
    }

    /// The presenter's tutor on the first lesson's Softmax step, the cursor on the cell it opens
    /// at.
    fn presenter_on_softmax() -> App {
        let mut teacher = App::new(App::builtin_entries(), None);
        teacher.classroom = Some(Classroom::Presenter {
            audience: crate::app::Audience::default(),
            join: String::new(),
            host_key: None,
        });
        dispatch(&mut teacher, Action::Submit, &mut refuse_save);
        for _ in 0..4 {
            dispatch(&mut teacher, Action::NextStep, &mut refuse_save);
        }
        assert_eq!(
            teacher.tutor().map(|tutor| tutor.step()),
            Some(crate::pipeline::Step::Softmax)
        );
        teacher
    }

    /// What carries out the presenter's polls on `polls`, as `serve::present` does.
    fn carried_out(polls: &super::super::polls::ClassPolls) -> impl FnMut(&Effect) -> Action + '_ {
        move |effect| match effect {
            Effect::Poll(PollEffect::Open(poll)) => {
                polls.open(Arc::clone(poll));
                Action::Poll(PollReply::Opened)
            }
            Effect::Poll(PollEffect::Lock(number)) => Action::Poll(polls.lock(*number)),
            _ => refuse_save(effect),
        }
    }

    #[test]
    fn followers_who_typed_the_same_answer_share_its_drawing_and_at_the_reveal_its_bytes() {
        use super::super::polls::ClassPolls;
        let stage = Arc::new(Stage::default());
        let polls = Arc::new(ClassPolls::new(None));
        let size = Size::new(80, 24);
        let mut teacher = presenter_on_softmax();
        dispatch(&mut teacher, Action::AskClass, &mut carried_out(&polls));
        let asked = Arc::new(Presented::of(&teacher, 1));
        let poll = Arc::clone(asked.poll.as_ref().expect("the class is asked"));
        let answers = ["0.346", "0.35", "0.346", "0.5", "0.35", "0.346"];
        // A follower whose answers go to `polls`, on the class's stage or drawn on its own.
        let seated = |on_stage: bool, polls: &Arc<ClassPolls>| {
            let desk = follower(&stage, size);
            let desk = if on_stage { desk } else { desk.on_stage(None) };
            desk.at_seat(Arc::clone(polls), polls.seat())
        };
        // A key of the answer (or Enter, past its end) typed by each student in turn.
        let press = |desk: &mut Desk, key: char| {
            let work = Work {
                events: keys(&key.to_string(), Duration::from_secs(3600)),
                ..Work::default()
            };
            let turned = desk.turn(work, Duration::from_secs(60));
            assert!(!turned.failed);
            turned.frame
        };
        let typed_at = |answer: &str, at: usize| answer.chars().chain(['\r']).nth(at);
        let mut class: Vec<Desk> = answers.iter().map(|_| seated(true, &polls)).collect();
        let mut sent: Vec<Vec<Vec<u8>>> = vec![Vec::new(); class.len()];
        for (desk, frames) in class.iter_mut().zip(&mut sent) {
            frames.push(presenter_moves(desk, &asked));
        }
        let (renders, encoded) = (stage.renders(), stage.encoded());
        for at in 0..6 {
            for ((desk, frames), typed) in class.iter_mut().zip(&mut sent).zip(answers) {
                if let Some(key) = typed_at(typed, at) {
                    frames.push(press(desk, key));
                }
            }
        }
        assert_eq!(polls.answered(), answers.len());
        // 0, 0., 0.3, 0.5, 0.34, 0.35, 0.346 on the prompt, and the three answers in: each drawn
        // and encoded once for the students who typed it (32 keys).
        assert_eq!(
            stage.renders(),
            renders + 10,
            "the screens typed drawn once"
        );
        assert_eq!(
            stage.encoded(),
            encoded + 10,
            "the keys' bytes encoded once"
        );
        dispatch(&mut teacher, Action::AskClass, &mut carried_out(&polls));
        let revealed = Arc::new(Presented::of(&teacher, 2));
        let (renders, encoded) = (stage.renders(), stage.encoded());
        for (desk, frames) in class.iter_mut().zip(&mut sent) {
            frames.push(presenter_moves(desk, &revealed));
        }
        assert_eq!(
            stage.renders(),
            renders + 1,
            "one reveal drawn for the class"
        );
        assert_eq!(
            stage.encoded(),
            encoded + 3,
            "the bytes to the reveal encoded once for each answer the terminals showed"
        );
        // Every terminal shows what a seat drawn on its own shows: its answer, then the reveal.
        let elsewhere = Arc::new(ClassPolls::new(None));
        elsewhere.open(poll);
        for (frames, typed) in sent.iter().zip(answers) {
            let mut alone = seated(false, &elsewhere);
            let mut own = vec![presenter_moves(&mut alone, &asked)];
            own.extend((0..6).filter_map(|at| Some(press(&mut alone, typed_at(typed, at)?))));
            let answered = shown(size, &own.iter().map(Vec::as_slice).collect::<Vec<_>>());
            assert!(answered.contains(&format!("Your answer: {typed} (in)")));
            own.push(presenter_moves(&mut alone, &revealed));
            let own: Vec<&[u8]> = own.iter().map(Vec::as_slice).collect();
            let frames: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
            assert!(shown(size, &own).contains("Right: "));
            assert_eq!(frames.len(), own.len());
            for upto in 1..=own.len() {
                assert_eq!(looks(size, &frames[..upto]), looks(size, &own[..upto]));
            }
        }
    }

    /// What a terminal shows after `frames`, cell by cell: each cell's text, colours and
    /// attributes.
    fn looks(size: Size, frames: &[&[u8]]) -> Vec<String> {
        let mut terminal = vt100::Parser::new(
            size.height.try_into().unwrap(),
            size.width.try_into().unwrap(),
            0,
        );
        for frame in frames {
            terminal.process(frame);
        }
        let screen = terminal.screen();
        (0..size.height)
            .flat_map(|row| (0..size.width).map(move |col| (row, col)))
            .map(|(row, col)| {
                screen.cell(row, col).map_or_else(String::new, |cell| {
                    // A cell never written shows as a blank.
                    let text = if cell.has_contents() {
                        cell.contents()
                    } else {
                        " "
                    };
                    format!(
                        "{text:?} {:?} {:?} {} {} {} {}",
                        cell.fgcolor(),
                        cell.bgcolor(),
                        cell.bold(),
                        cell.italic(),
                        cell.underline(),
                        cell.inverse()
                    )
                })
            })
            .collect()
    }

    /// A desk waiting in `floor` with `turns` of work done just now (none: a newcomer).
    fn waiting(floor: &mut Floor, turns: &[Duration], now: Instant) -> usize {
        let mut desk = desk();
        for turn in turns {
            desk.load.add(*turn, now);
        }
        let (done, _) = tokio::sync::oneshot::channel();
        floor.queued += 1;
        let order = floor.queued;
        floor
            .waiting
            .push(Job::new(desk, Work::default(), order, done));
        usize::try_from(order).unwrap()
    }

    #[test]
    fn a_newcomer_works_before_seats_busy_with_heavy_turns_and_those_share_the_rest() {
        let now = Instant::now();
        let mut floor = Floor {
            lanes: 1,
            working: 0,
            light_working: false,
            lingering: (0, 0),
            waiting: Vec::new(),
            queued: 0,
            opened: 0,
        };
        let sweep = Duration::from_millis(800);
        // Three seats sweeping the lab asked first; the third has swept twice.
        let busy = waiting(&mut floor, &[sweep], now);
        let busier = waiting(&mut floor, &[sweep, sweep], now);
        let also_busy = waiting(&mut floor, &[sweep], now);
        let newcomer = waiting(&mut floor, &[], now);
        let order = |job: Option<Job>| usize::try_from(job.expect("a seat waits").order).unwrap();
        assert_eq!(floor.open_lane(now), Some(Lane::Any));
        // The lane kept for light seats opens for the newcomer, and takes only light seats.
        assert_eq!(floor.open_lane(now), Some(Lane::Light));
        assert_eq!(floor.open_lane(now), None, "both lanes work");
        assert_eq!(order(floor.next(Lane::Light, now)), newcomer);
        assert!(
            floor.next(Lane::Light, now).is_none(),
            "no sweep in the light lane"
        );
        // The busy seats in turn: the least recent work first, then the first to ask.
        assert_eq!(order(floor.next(Lane::Any, now)), busy);
        assert_eq!(order(floor.next(Lane::Any, now)), also_busy);
        assert_eq!(order(floor.next(Lane::Any, now)), busier);
        // A seat's work counts less as time goes: a second later a seat that swept once then
        // waits behind one that has swept twice but two seconds before.
        let later = now + Duration::from_secs(2);
        let early = waiting(&mut floor, &[sweep, sweep], now);
        let just_now = waiting(&mut floor, &[sweep], later);
        assert_eq!(order(floor.next(Lane::Any, later)), early);
        assert_eq!(order(floor.next(Lane::Any, later)), just_now);
    }

    #[test]
    fn at_a_step_change_the_followers_turns_are_worked_in_a_row_by_the_lanes_open() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        let stage = Arc::new(Stage::default());
        let size = Size::new(80, 24);
        let workshop = Workshop::with_turns(1);
        let step = presented(1, 1);
        let class = 40;
        let desks: Vec<Desk> = (0..class).map(|_| follower(&stage, size)).collect();
        let frames = runtime.block_on(async {
            let mut turns = Vec::new();
            // The followers' sessions wake one after another, each a moment after the last.
            for desk in desks {
                let (done, turned) = tokio::sync::oneshot::channel();
                let work = Work {
                    presented: Some(Arc::clone(&step)),
                    ..Work::default()
                };
                workshop.queue(desk, work, done);
                turns.push(turned);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let mut frames = Vec::new();
            for turned in turns {
                let (_, turned) = turned.await.expect("every follower's turn is worked");
                frames.push(turned.frame);
            }
            frames
        });
        assert!(frames.iter().all(|frame| !frame.is_empty()));
        // The lane for any seat, and the one kept for light seats: each worked one follower's
        // turn after another, not one blocking task per turn. Bounds, not exact counts: on a
        // busy machine a lane idle past its linger ends and another opens, and two lanes may
        // draw the same screen at once (seen at load 5 to 10), but one task or one drawing per
        // follower (40) is far past them.
        let opened = workshop.floor.lock().unwrap().opened;
        assert!(
            opened <= class / 8,
            "{opened} lanes opened for {class} turns"
        );
        assert!(
            stage.renders() <= opened,
            "{} drawings for the class by {opened} lanes",
            stage.renders()
        );
        // And once nothing more comes, they end: both kinds of lane, which close on their own
        // (waiting for the other lanes alone failed at load 9 to 13, the light one still open).
        let idle = Instant::now();
        let open = |floor: &Floor| floor.working > 0 || floor.light_working;
        while open(&workshop.floor.lock().unwrap()) && idle.elapsed() < PATIENCE {
            std::thread::sleep(LANE_LINGER);
        }
        let floor = workshop.floor.lock().unwrap();
        assert_eq!((floor.working, floor.light_working), (0, false));
    }

    #[test]
    fn a_connection_waits_for_room_while_the_inbox_is_full_until_the_session_takes_it_or_ends() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mailbox = Arc::new(Mailbox::default());
        let waits = |mailbox: &Arc<Mailbox>| {
            let mailbox = Arc::clone(mailbox);
            runtime.block_on(async move {
                tokio::time::timeout(Duration::from_millis(50), mailbox.room())
                    .await
                    .is_err()
            })
        };
        assert!(!waits(&mailbox), "room while nothing waits");
        mailbox.input(&vec![b'j'; MAX_PENDING_INPUT]);
        assert!(waits(&mailbox), "no room while the inbox is full");
        mailbox.take();
        assert!(!waits(&mailbox), "room once the session took the keys");
        mailbox.input(&vec![b'j'; MAX_PENDING_INPUT]);
        mailbox.close();
        assert!(!waits(&mailbox), "no waiting on a session that has ended");
    }

    #[test]
    fn a_lone_escape_in_its_own_packet_is_the_escape_key() {
        let mailbox = Mailbox::default();
        mailbox.input(b"\x1b");
        mailbox.input(b"n");
        let events: Vec<Event> = mailbox.take().events.into();
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(
            matches!(&events[0], Event::Key(key) if key.code == crossterm::event::KeyCode::Esc)
        );
    }

    #[test]
    fn a_paste_longer_than_the_limit_still_ends_and_the_keys_after_it_arrive() {
        let mailbox = Mailbox::default();
        mailbox.input(b"\x1b[200~");
        for _ in 0..40 {
            mailbox.input(&[b'x'; 8 * 1024]);
        }
        mailbox.input(b"\x1b[201~");
        mailbox.input(b"\r");
        let events: Vec<Event> = mailbox.take().events.into();
        assert_eq!(events.len(), 2, "one paste and Enter");
        // The decoder keeps the first 64 KiB of a paste.
        assert!(matches!(&events[0], Event::Paste(text) if text.len() == 64 * 1024));
        assert!(
            matches!(&events[1], Event::Key(key) if key.code == crossterm::event::KeyCode::Enter)
        );
    }
}
