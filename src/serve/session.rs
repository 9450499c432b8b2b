//! A student's tutor once their terminal is up: their app and screen, moved by their keys,
//! their window size and the presenter, and drawn into their channel (SSH) or socket (browser)
//! one frame at a time.
//!
//! The SSH handler only drops what arrives into the session's `Mailbox`; this task does the
//! work. That keeps the connection's loop free to read window adjustments while a frame waits
//! for a slow client, and bounds what one student can make the server hold: 128 KiB of decoded
//! keys and pastes, and one frame in flight. While a frame waits, changes pile up in the app's state, not
//! in a queue, and the next frame carries them all (the latest frame wins).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::cursor::Hide;
use crossterm::event::{EnableBracketedPaste, EnableMouseCapture, Event};
use crossterm::terminal::EnterAlternateScreen;
use ratatui::layout::{Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::{Notify, watch};

use crate::app::{Action, App, Classroom, Follow, Presented};
use crate::input::action_for;
use crate::input::bytes::Decoder;
use crate::term::channel::{ChannelBackend, Outbox};
use crate::term::{Painter, dispatch};
use crate::ui::Theme;

use super::Shared;
use super::student::{refuse_save, restore_terminal};
use super::wire::Wire;

/// Input kept while the session is busy, in keys and pastes (a key counts as `KEY_COST`, a paste
/// as its length): a client that sends more before its frames are read loses whole keys rather
/// than growing the server's memory. Room for one paste at its longest and keys after it.
const MAX_PENDING_INPUT: usize = 128 * 1024;

/// What a key (or a click, a resize of the terminal) counts for in `MAX_PENDING_INPUT`.
const KEY_COST: usize = 16;

/// How long a lone ESC waits for the rest of a sequence before it counts as the Escape key.
const ESCAPE_WAIT: Duration = Duration::from_millis(50);

/// How long a goodbye may take to reach a client before the session ends without it.
const GOODBYE_WAIT: Duration = Duration::from_secs(2);

/// Why a session ends from the server's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
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
pub struct Mailbox {
    inbox: Mutex<Inbox>,
    wake: Notify,
}

#[derive(Debug, Default)]
struct Inbox {
    /// Kept across takes: a sequence or a paste may be split across packets.
    decoder: Decoder,
    taken: Taken,
}

/// What the session takes from the mailbox each time it wakes.
#[derive(Debug, Default)]
struct Taken {
    events: VecDeque<Event>,
    cost: usize,
    size: Option<Size>,
    ending: Option<Ending>,
}

fn cost(event: &Event) -> usize {
    match event {
        Event::Paste(text) => text.len().max(KEY_COST),
        _ => KEY_COST,
    }
}

impl Mailbox {
    /// Adds a packet of input; returns false if some keys were dropped because too much is
    /// waiting.
    pub fn input(&self, data: &[u8]) -> bool {
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

    pub fn resize(&self, size: Size) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.taken.size = Some(size);
        }
        self.wake.notify_one();
    }

    pub fn end(&self, ending: Ending) {
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
        self.inbox
            .lock()
            .map(|mut inbox| std::mem::take(&mut inbox.taken))
            .unwrap_or_default()
    }
}

/// Everything a session starts from.
pub struct Start {
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
    app: App,
    terminal: Terminal<ChannelBackend>,
    outbox: Outbox,
    painter: Painter,
    theme: Theme,
    size: Size,
    writer: Wire,
    mailbox: Arc<Mailbox>,
    connection: watch::Receiver<()>,
    presenter: Option<watch::Receiver<Arc<Presented>>>,
    class_over: watch::Receiver<bool>,
    following: Tally,
    /// Counted while this student is free with unsaved edits of their own.
    unsaved: Tally,
}

/// Runs a student's session until they quit, leave, or the server ends it.
pub async fn run(start: Start) {
    let who = start.who.clone();
    match Session::new(start) {
        Ok(session) => session.run().await,
        Err(error) => tracing::warn!(student = %who, %error, "the tutor could not start"),
    }
}

impl Session {
    fn new(start: Start) -> anyhow::Result<Session> {
        let outbox = Outbox::default();
        let backend = ChannelBackend::new(outbox.clone(), start.size);
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, start.size.width, start.size.height)),
            },
        )?;
        let mut app = App::new(start.shared.entries.clone(), None);
        // Files saved here would land on the teacher's machine.
        app.can_save = false;
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
        let mut outbox_for_setup = outbox.clone();
        crossterm::queue!(
            outbox_for_setup,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            Hide
        )?;
        Ok(Session {
            following: Tally::new(&start.shared, |shared| &shared.following),
            unsaved: Tally::new(&start.shared, |shared| &shared.unsaved),
            class_over: start.shared.class_over.clone(),
            who: start.who,
            app,
            terminal,
            outbox,
            painter: Painter::default(),
            theme: start.theme,
            size: start.size,
            writer: start.writer,
            mailbox: start.mailbox,
            connection: start.connection,
            presenter,
        })
    }

    async fn run(mut self) {
        if let Some(presenter) = self.presenter.as_mut() {
            let presented = Arc::clone(&presenter.borrow_and_update());
            dispatch(
                &mut self.app,
                Action::Presenter(presented),
                &mut refuse_save,
            );
        }
        loop {
            self.following.set(self.app.is_following());
            // A follower's screen is the presenter's, edits and all: only a free student's
            // edits are their own.
            self.unsaved.set(
                !self.app.is_following()
                    && self
                        .app
                        .tutor
                        .as_ref()
                        .is_some_and(crate::app::Tutor::has_unsaved_edits),
            );
            if !self.send_frame().await {
                return;
            }
            let escape_pending = self.mailbox.waiting_on_escape();
            tokio::select! {
                () = self.mailbox.wake.notified() => {}
                changed = presenter_changed(&mut self.presenter) => {
                    if let Some(presented) = changed {
                        dispatch(&mut self.app, Action::Presenter(presented), &mut refuse_save);
                    }
                }
                _ = self.class_over.changed() => {
                    self.goodbye(Some(Ending::ClassOver)).await;
                    return;
                }
                _ = self.connection.changed() => return,
                () = tokio::time::sleep(ESCAPE_WAIT), if escape_pending => {
                    for event in self.mailbox.flush_escape() {
                        self.apply(&event);
                    }
                }
            }
            let inbox = self.mailbox.take();
            if let Some(size) = inbox.size
                && self.resize(size).is_err()
            {
                return;
            }
            for event in &inbox.events {
                self.apply(event);
                if self.app.quit {
                    break;
                }
            }
            if self.app.quit {
                tracing::info!(student = %self.who, "left");
                self.goodbye(None).await;
                return;
            }
            if inbox.ending.is_some() {
                self.goodbye(inbox.ending).await;
                return;
            }
        }
    }

    fn apply(&mut self, event: &crossterm::event::Event) {
        let area = Rect::new(0, 0, self.size.width, self.size.height);
        if let Some(action) = action_for(event, &self.app, area) {
            dispatch(&mut self.app, action, &mut refuse_save);
        }
    }

    fn resize(&mut self, size: Size) -> std::io::Result<()> {
        self.size = size;
        self.terminal.backend_mut().set_size(size);
        self.terminal
            .resize(Rect::new(0, 0, size.width, size.height))
    }

    /// Draws the app and sends what changed, waiting while the client is not reading. Returns
    /// false when the session is over (the connection went, or the class ended meanwhile).
    async fn send_frame(&mut self) -> bool {
        if let Err(error) = self
            .painter
            .draw(&mut self.terminal, &self.app, &self.theme)
        {
            tracing::warn!(student = %self.who, %error, "drawing failed");
            return false;
        }
        let bytes = self.outbox.take();
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
