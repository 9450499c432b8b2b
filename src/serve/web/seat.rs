//! One browser seat once its WebSocket is open: the join (a name, and the join code when the
//! class has one, checked in its address's turn as SSH's are), then the student's tutor,
//! with the page's keys and sizes into the session's mailbox and its frames out to the page.

use crate::serve::unsigned_log::unsigned;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use ratatui::layout::Size;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use crate::ui::Theme;

use super::super::client_text::{self, client_text};
use super::super::places::Place;
use super::super::session::{self, Mailbox};
use super::super::student::clamped;
use super::super::wire::{ToBrowser, Wire};
use super::super::{KEEPALIVES_MISSED, Shared, Watch};

/// Join codes one socket may get wrong before it is closed (as SSH's attempts per connection).
const MOST_TRIES: u32 = 6;

/// What the page says, as JSON text. Keys are binary messages of their own.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum FromPage {
    Join {
        name: String,
        #[serde(default)]
        code: String,
        columns: u32,
        rows: u32,
    },
    Size {
        columns: u32,
        rows: u32,
    },
}

/// What the server says to the page, as JSON text. The screen goes as binary messages.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
enum ToPage {
    /// Signed in, under this name.
    Joined(String),
    /// Not signed in: why, and whether the page may try again on this socket.
    Refused { refused: String, again: bool },
    /// The session is over; why (empty when the student quit).
    Ended(String),
}

impl ToPage {
    fn message(&self) -> Message {
        let text = match self {
            // Flattened by hand: `{"refused": why, "again": bool}` reads best in the page.
            ToPage::Refused { refused, again } => {
                serde_json::json!({ "refused": refused, "again": again }).to_string()
            }
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        Message::Text(Utf8Bytes::from(text))
    }
}

pub(crate) struct Seat {
    pub shared: Arc<Shared>,
    pub watch: Arc<Watch>,
    pub place: Place,
    /// Dropped when the seat is over, which lets its connection end.
    pub done: mpsc::Sender<()>,
    /// Between pings; a page that answers none of `KEEPALIVES_MISSED` in a row is gone.
    pub keepalive: std::time::Duration,
}

/// A signed-in student, counted in the class while the seat lasts.
struct Counted(Arc<Shared>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.sessions.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Seat {
    pub(crate) async fn run(self, socket: WebSocket) {
        let (mut to_page, mut from_page) = socket.split();
        let watch = Arc::clone(&self.watch);
        let joined = tokio::select! {
            joined = self.join(&mut to_page, &mut from_page) => joined,
            () = watch.until_ended() => None,
        };
        let Some((name, size, counted)) = joined else {
            let _ = to_page.close().await;
            drop(self.done);
            return;
        };
        let who = format!("{name} from {}", self.watch.peer);
        let mailbox = Arc::new(Mailbox::default());
        self.watch.showing_tutor(Some(Arc::clone(&mailbox)));
        let (frames, mut frames_out) = mpsc::channel::<ToBrowser>(1);
        let alive = watch::channel(()).0;
        tracing::info!(
            student = %who,
            sessions = self.shared.sessions.load(Ordering::SeqCst),
            "tutor started in a browser"
        );
        tokio::spawn(session::run(session::Start {
            shared: Arc::clone(&self.shared),
            who: who.clone(),
            size,
            // xterm.js draws 24-bit colour.
            theme: Theme::detect(false, Some("truecolor"), Some("xterm-256color")),
            writer: Wire::Web(frames),
            mailbox: Arc::clone(&mailbox),
            connection: alive.subscribe(),
        }));
        // When the page was last heard from: any message, pongs included.
        let heard = std::sync::Mutex::new(std::time::Instant::now());
        let hear = || {
            if let Ok(mut heard) = heard.lock() {
                *heard = std::time::Instant::now();
            }
        };
        // Frames out, one at a time: the session waits while the page is slow to read. Pings
        // between them ask the browser to show it is still there.
        let mut pings = tokio::time::interval(self.keepalive);
        pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let writer = async {
            loop {
                let out = tokio::select! {
                    out = frames_out.recv() => out,
                    _ = pings.tick() => {
                        if to_page.send(Message::Ping(Default::default())).await.is_err() {
                            return;
                        }
                        continue;
                    }
                };
                let Some(out) = out else { return };
                match out {
                    ToBrowser::Screen(bytes) => {
                        if to_page.send(Message::Binary(bytes.into())).await.is_err() {
                            return;
                        }
                    }
                    ToBrowser::Ended(why) => {
                        let _ = to_page.send(ToPage::Ended(why).message()).await;
                        let _ = to_page
                            .send(Message::Close(Some(CloseFrame {
                                code: axum::extract::ws::close_code::NORMAL,
                                reason: Utf8Bytes::from_static("session over"),
                            })))
                            .await;
                        return;
                    }
                }
            }
        };
        // A page gone without a word (a laptop shut, a tablet asleep, the network lost) is
        // dropped after a few unanswered pings, as SSH's keepalives do, however its socket
        // looks (a frame waiting to be sent included).
        let silence = self.keepalive * u32::try_from(KEEPALIVES_MISSED).unwrap_or(3);
        let gone = async {
            loop {
                let since = heard
                    .lock()
                    .map(|heard| heard.elapsed())
                    .unwrap_or_default();
                if since >= silence {
                    tracing::info!(student = %who, "dropped: the browser stopped answering");
                    return;
                }
                tokio::time::sleep(silence - since).await;
            }
        };
        let reader = async {
            while let Some(Ok(message)) = from_page.next().await {
                hear();
                match message {
                    Message::Binary(keys) => {
                        self.watch.input();
                        if !mailbox.input(&keys)
                            && let Some(packets) = mailbox.dropped_to_say()
                        {
                            tracing::debug!(
                                student = %who,
                                packets,
                                "input dropped: the session is behind"
                            );
                        }
                        mailbox.room().await;
                    }
                    Message::Text(text) => match serde_json::from_str::<FromPage>(&text) {
                        Ok(FromPage::Size { columns, rows }) => {
                            mailbox.resize(clamped(columns, rows));
                        }
                        _ => {
                            tracing::info!(student = %who, "closed: the page sent what it never sends");
                            return;
                        }
                    },
                    Message::Close(_) => return,
                    Message::Ping(_) | Message::Pong(_) => {}
                }
            }
        };
        tokio::select! {
            () = writer => {}
            () = reader => {}
            () = gone => {}
            () = watch.until_ended() => {}
        }
        // The session sees its connection go.
        drop(alive);
        drop(counted);
        self.watch.showing_tutor(None);
        tracing::info!(student = %who, "browser seat closed");
        drop(self.done);
    }

    /// Reads join messages until one signs in (its name, size and place in the class count),
    /// or the page leaves, sends something else, runs out of tries or finds the class full.
    async fn join(
        &self,
        to_page: &mut futures_util::stream::SplitSink<WebSocket, Message>,
        from_page: &mut futures_util::stream::SplitStream<WebSocket>,
    ) -> Option<(String, Size, Counted)> {
        let mut failures = 0;
        loop {
            let text = match from_page.next().await {
                Some(Ok(Message::Text(text))) => text,
                // Pongs, and pings the socket answers itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                _ => return None,
            };
            let (name, code, columns, rows) = match serde_json::from_str::<FromPage>(&text) {
                Ok(FromPage::Join {
                    name,
                    code,
                    columns,
                    rows,
                }) => (name, code, columns, rows),
                // A window resized while the student types their name.
                Ok(FromPage::Size { .. }) => continue,
                Err(_) => {
                    unsigned!(info, "closed: not a join message", peer = %self.watch.peer);
                    return None;
                }
            };
            let name = client_text(name.trim(), client_text::NAME);
            if name.is_empty() {
                let refused = ToPage::Refused {
                    refused: "Type a name to join.".to_string(),
                    again: true,
                };
                to_page.send(refused.message()).await.ok()?;
                continue;
            }
            // An open class has no code to guess: nothing to pace (as SSH's `auth_none`).
            let waited = if self.shared.access.allows_anyone() {
                std::time::Duration::ZERO
            } else {
                self.shared
                    .sign_ins
                    .turn(self.watch.peer.ip(), failures)
                    .await
            };
            if !self.shared.access.allows_password(&code) {
                failures += 1;
                unsigned!(
                    info,
                    "sign-in refused: wrong join code",
                    user = %name,
                    peer = %self.watch.peer,
                    waited_ms = waited.as_millis(),
                    failures
                );
                let again = failures < MOST_TRIES;
                let refused = ToPage::Refused {
                    refused: if again {
                        "That is not the class's join code; ask your teacher.".to_string()
                    } else {
                        "Too many wrong join codes; ask your teacher for the code, then press Join again."
                            .to_string()
                    },
                    again,
                };
                to_page.send(refused.message()).await.ok()?;
                if !again {
                    return None;
                }
                continue;
            }
            let sessions = self.shared.sessions.fetch_add(1, Ordering::SeqCst);
            let counted = Counted(Arc::clone(&self.shared));
            if sessions >= self.shared.max_sessions {
                tracing::warn!(student = %name, peer = %self.watch.peer, "class full");
                let refused = ToPage::Refused {
                    refused: "The class is full; ask your teacher.".to_string(),
                    again: false,
                };
                let _ = to_page.send(refused.message()).await;
                return None;
            }
            tracing::info!(student = %name, peer = %self.watch.peer, how = "browser", "signed in");
            self.watch.signed_in();
            self.place.signed_in();
            self.watch.input();
            to_page
                .send(ToPage::Joined(name.clone()).message())
                .await
                .ok()?;
            return Some((name, clamped(columns, rows), counted));
        }
    }
}
