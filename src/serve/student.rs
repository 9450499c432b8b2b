//! One student's connection as SSH sees it: sign-in, the channel and its requests. Their tutor
//! runs in its own task (`session`), fed through a mailbox. Everything that is not the tutor
//! in a terminal (exec, sftp, forwarding, agent, X11) is refused with a reply.

use crate::serve::unsigned_log::unsigned;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crossterm::cursor::Show;
use crossterm::event::{DisableBracketedPaste, DisableMouseCapture};
use crossterm::terminal::LeaveAlternateScreen;
use ratatui::layout::Size;
use russh::keys::PublicKey;
use russh::server::{Auth, ChannelOpenHandle, Msg, Session};
use russh::{Channel, ChannelId, ChannelOpenFailure, ChannelWriteHalf, Pty};
use tokio::sync::watch;

use crate::app::{Action, SaveFailure};
use crate::ui::Theme;

use super::client_text::{self, client_text};
use super::places::Place;
use super::session::{self, Mailbox};
use super::wire::Wire;
use super::{Shared, Watch};

/// The largest terminal a client may claim: bigger sizes are clamped, so a client cannot make
/// the server allocate huge screen buffers.
pub(crate) const MAX_COLUMNS: u16 = 500;
pub(crate) const MAX_ROWS: u16 = 200;

pub(crate) struct Student {
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    name: String,
    channel: Option<ChannelId>,
    /// Where the tutor's frames go, until its session task takes it.
    writer: Option<ChannelWriteHalf<Msg>>,
    size: Size,
    term: Option<String>,
    colorterm: Option<String>,
    /// The running tutor's inbox, once the student's terminal is up.
    mailbox: Option<Arc<Mailbox>>,
    /// Dropped with the connection, which tells the tutor's task to stop.
    alive: watch::Sender<()>,
    /// Counted in the class's session total (released when the connection ends).
    counted: bool,
    watch: Arc<Watch>,
    /// This connection's place among its address's; given back when the connection ends.
    place: Place,
    /// Join codes this connection has had refused: its later tries wait behind others' first.
    failures: u32,
    /// The class was full when this connection asked for a terminal: it is told so in words
    /// (a refused channel shows only "open failed: resource shortage"), then closed.
    full: bool,
}

impl Student {
    pub(crate) fn new(
        shared: Arc<Shared>,
        peer: Option<SocketAddr>,
        watch: Arc<Watch>,
        place: Place,
    ) -> Student {
        Student {
            shared,
            peer,
            name: String::new(),
            channel: None,
            writer: None,
            size: Size::new(80, 24),
            term: None,
            colorterm: None,
            mailbox: None,
            alive: watch::channel(()).0,
            counted: false,
            watch,
            place,
            failures: 0,
            full: false,
        }
    }

    fn who(&self) -> String {
        match self.peer {
            Some(peer) => format!("{} from {peer}", self.name),
            None => self.name.clone(),
        }
    }

    fn accepted(&mut self, user: &str, how: &str) -> Auth {
        // The name is shown to the teacher; it is the student's own text, so it is cleaned.
        self.name = client_text(user, client_text::NAME);
        tracing::info!(student = %self.who(), how, "signed in");
        self.watch.signed_in();
        self.place.signed_in();
        self.watch.input();
        Auth::Accept
    }

    fn refused(&self, user: &str, how: &str) -> Auth {
        unsigned!(
            info,
            "sign-in refused",
            user = %client_text(user, client_text::NAME),
            peer = ?self.peer,
            how
        );
        self.try_again()
    }

    /// A refusal that lets the client try again (a mistyped join code), up to the server's
    /// limit of attempts; each refusal is delayed.
    fn try_again(&self) -> Auth {
        Auth::Reject {
            proceed_with_methods: Some(self.shared.access.methods()),
            partial_success: false,
        }
    }

    fn refuse(&self, channel: ChannelId, session: &mut Session, what: &str) -> anyhow::Result<()> {
        tracing::info!(student = %self.who(), what, "refused");
        session.channel_failure(channel)?;
        Ok(())
    }
}

impl Drop for Student {
    fn drop(&mut self) {
        if self.counted {
            self.shared.sessions.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// What gives a student their terminal back as it was: normal screen, cursor, no mouse
/// reporting, no bracketed paste.
pub(crate) fn restore_terminal() -> Vec<u8> {
    let mut bytes = Vec::new();
    let _ = crossterm::queue!(
        bytes,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        Show
    );
    bytes
}

/// A classroom session cannot write files on the server.
pub(crate) fn refuse_save(effect: &crate::app::Effect) -> Action {
    if let crate::app::Effect::SaveProgress(_) = effect {
        // A student's progress lives in their session's memory only.
        return Action::ProgressSaved(Ok(()));
    }
    if let crate::app::Effect::Poll(poll) = effect {
        return Action::Poll(poll.without_a_class());
    }
    Action::Saved(Err(SaveFailure::NotAllowed(
        "a classroom session cannot write files on the server; `attn-tutor show` or your own \
         copy of attn-tutor can keep your lesson"
            .to_string(),
    )))
}

impl russh::server::Handler for Student {
    type Error = anyhow::Error;

    async fn auth_none(&mut self, user: &str) -> Result<Auth, Self::Error> {
        Ok(if self.shared.access.allows_anyone() {
            self.accepted(user, "open")
        } else {
            self.try_again()
        })
    }

    async fn authentication_banner(&mut self) -> Result<Option<String>, Self::Error> {
        // Called when the client, its keys exchanged, asks to sign in.
        self.watch.handshake_done();
        Ok(None)
    }

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        // A code is checked only in its address's turn, so one address cannot guess quickly
        // by opening many connections. A connection ended meanwhile stops waiting.
        let waited = match self.peer {
            Some(peer) => tokio::select! {
                waited = self.shared.sign_ins.turn(peer.ip(), self.failures) => waited,
                () = self.watch.until_ended() => return Ok(self.try_again()),
            },
            None => Duration::ZERO,
        };
        Ok(if self.shared.access.allows_password(password) {
            self.accepted(user, "password")
        } else {
            self.failures = self.failures.saturating_add(1);
            unsigned!(
                info,
                "sign-in refused: wrong join code",
                user = %client_text(user, client_text::NAME),
                peer = ?self.peer,
                waited_ms = waited.as_millis(),
                failures = self.failures
            );
            self.try_again()
        })
    }

    async fn auth_publickey_offered(
        &mut self,
        user: &str,
        offer: russh::server::PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        Ok(if self.shared.access.allows_key(offer.public_key) {
            Auth::Accept
        } else {
            self.refused(user, "key not listed")
        })
    }

    async fn auth_publickey(
        &mut self,
        user: &str,
        key: russh::server::VerifiedPublicKey<'_>,
    ) -> Result<Auth, Self::Error> {
        let key: &PublicKey = key.public_key;
        Ok(if self.shared.access.allows_key(key) {
            self.accepted(user, "key")
        } else {
            self.refused(user, "key")
        })
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        if self.channel.is_some() {
            reply.reject(ChannelOpenFailure::ResourceShortage).await;
            return Ok(());
        }
        let sessions = self.shared.sessions.fetch_add(1, Ordering::SeqCst);
        if sessions >= self.shared.max_sessions {
            self.shared.sessions.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(student = %self.who(), "class full");
            self.full = true;
        } else {
            self.counted = true;
        }
        self.channel = Some(channel.id());
        // Only the writing half is kept: input comes to the handler's `data`, and an unread
        // reading half would fill up and stall the connection.
        let (_, writer) = channel.split();
        self.writer = Some(writer);
        reply.accept().await;
        Ok(())
    }

    async fn channel_open_direct_tcpip(
        &mut self,
        _channel: Channel<Msg>,
        _host: &str,
        _port: u32,
        _from: &str,
        _from_port: u32,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        tracing::info!(student = %self.who(), "port forwarding refused");
        reply
            .reject(ChannelOpenFailure::AdministrativelyProhibited)
            .await;
        Ok(())
    }

    async fn channel_open_x11(
        &mut self,
        _channel: Channel<Msg>,
        _address: &str,
        _port: u32,
        reply: ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        reply
            .reject(ChannelOpenFailure::AdministrativelyProhibited)
            .await;
        Ok(())
    }

    async fn tcpip_forward(
        &mut self,
        _address: &str,
        _port: &mut u32,
        _session: &mut Session,
    ) -> Result<bool, Self::Error> {
        Ok(false)
    }

    async fn agent_request(
        &mut self,
        _channel: ChannelId,
        _session: &mut Session,
    ) -> Result<bool, Self::Error> {
        Ok(false)
    }

    async fn x11_request(
        &mut self,
        channel: ChannelId,
        _single_connection: bool,
        _protocol: &str,
        _cookie: &str,
        _screen: u32,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.refuse(channel, session, "X11 forwarding")
    }

    async fn exec_request(
        &mut self,
        channel: ChannelId,
        _command: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.refuse(channel, session, "a command (exec)")
    }

    async fn subsystem_request(
        &mut self,
        channel: ChannelId,
        _name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.refuse(channel, session, "a subsystem (sftp, scp)")
    }

    async fn pty_request(
        &mut self,
        channel: ChannelId,
        term: &str,
        columns: u32,
        rows: u32,
        _pixel_width: u32,
        _pixel_height: u32,
        _modes: &[(Pty, u32)],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.size = clamped(columns, rows);
        self.term = Some(term.to_string());
        session.channel_success(channel)?;
        Ok(())
    }

    async fn env_request(
        &mut self,
        channel: ChannelId,
        name: &str,
        value: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        if name == "COLORTERM" {
            self.colorterm = Some(value.to_string());
        }
        session.channel_success(channel)?;
        Ok(())
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        let why = if self.full {
            let most = self.shared.max_sessions;
            let students = if most == 1 { "student" } else { "students" };
            Some(format!(
                "attn-tutor: the class is full ({most} {students} at once); ask your teacher\r\n"
            ))
        } else if self.term.is_none() {
            // Without a pty there is nothing to draw on.
            Some("attn-tutor needs a terminal: connect with `ssh -t`\r\n".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            session.channel_success(channel)?;
            session.data(channel, why.into_bytes())?;
            session.exit_status_request(channel, 1)?;
            session.eof(channel)?;
            session.close(channel)?;
            return Ok(());
        }
        let Some(term) = self.term.clone() else {
            return Ok(());
        };
        let Some(writer) = self.writer.take() else {
            session.channel_failure(channel)?;
            return Ok(());
        };
        let mailbox = Arc::new(Mailbox::default());
        self.mailbox = Some(Arc::clone(&mailbox));
        self.watch.showing_tutor(Some(Arc::clone(&mailbox)));
        session.channel_success(channel)?;
        let sessions = self.shared.sessions.load(Ordering::SeqCst);
        // The terminal type and the version string are the client's own text.
        let client = String::from_utf8_lossy(session.remote_sshid());
        tracing::info!(
            student = %self.who(),
            term = %client_text(&term, client_text::LABEL),
            client = %client_text(&client, client_text::LABEL),
            sessions,
            "tutor started"
        );
        tokio::spawn(session::run(session::Start {
            shared: Arc::clone(&self.shared),
            who: self.who(),
            size: self.size,
            theme: Theme::detect(false, self.colorterm.as_deref(), Some(&term)),
            writer: Wire::Ssh(writer),
            mailbox,
            connection: self.alive.subscribe(),
        }));
        Ok(())
    }

    async fn window_change_request(
        &mut self,
        _channel: ChannelId,
        columns: u32,
        rows: u32,
        _pixel_width: u32,
        _pixel_height: u32,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.size = clamped(columns, rows);
        if let Some(mailbox) = &self.mailbox {
            mailbox.resize(self.size);
        }
        Ok(())
    }

    async fn data(
        &mut self,
        _channel: ChannelId,
        data: &[u8],
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        let Some(mailbox) = &self.mailbox else {
            return Ok(());
        };
        self.watch.input();
        if !mailbox.input(data)
            && let Some(packets) = mailbox.dropped_to_say()
        {
            tracing::debug!(student = %self.who(), packets, "input dropped: the session is behind");
        }
        Ok(())
    }
}

/// A client's terminal size, kept within what the server is willing to draw.
pub(crate) fn clamped(columns: u32, rows: u32) -> Size {
    let columns = u16::try_from(columns).unwrap_or(u16::MAX).min(MAX_COLUMNS);
    let rows = u16::try_from(rows).unwrap_or(u16::MAX).min(MAX_ROWS);
    Size::new(columns, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_cannot_claim_a_terminal_bigger_than_the_server_draws() {
        assert_eq!(clamped(65535, 65535), Size::new(MAX_COLUMNS, MAX_ROWS));
        assert_eq!(clamped(u32::MAX, 7), Size::new(MAX_COLUMNS, 7));
        assert_eq!(clamped(0, 0), Size::new(0, 0));
        assert_eq!(clamped(80, 24), Size::new(80, 24));
    }
}
