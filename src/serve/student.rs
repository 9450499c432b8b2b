//! One student's connection: their own app, drawn into their SSH channel. Everything that is
//! not the tutor in a terminal (exec, sftp, forwarding, agent, X11) is refused with a reply.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crossterm::cursor::{Hide, Show};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::layout::{Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use russh::keys::PublicKey;
use russh::server::{Auth, ChannelOpenHandle, Msg, Session};
use russh::{Channel, ChannelId, ChannelOpenFailure, Pty};

use crate::app::{Action, App, SaveFailure};
use crate::input::action_for;
use crate::input::bytes::Decoder;
use crate::term::channel::{ChannelBackend, Outbox};
use crate::term::{Painter, dispatch};
use crate::ui::Theme;

use super::{Shared, Watch};

/// The largest terminal a client may claim: bigger sizes are clamped, so a client cannot make
/// the server allocate huge screen buffers.
pub const MAX_COLUMNS: u16 = 500;
pub const MAX_ROWS: u16 = 200;

pub struct Student {
    shared: Arc<Shared>,
    peer: Option<SocketAddr>,
    name: String,
    channel: Option<ChannelId>,
    size: Size,
    term: Option<String>,
    colorterm: Option<String>,
    app: App,
    screen: Option<Screen>,
    decoder: Decoder,
    /// Counted in the class's session total (released when the connection ends).
    counted: bool,
    watch: Arc<Watch>,
}

/// The student's terminal, once they asked for a shell on a pty.
struct Screen {
    terminal: Terminal<ChannelBackend>,
    outbox: Outbox,
    painter: Painter,
    theme: Theme,
}

impl Student {
    pub fn new(shared: Arc<Shared>, peer: Option<SocketAddr>, watch: Arc<Watch>) -> Student {
        let app = App::new(shared.entries.clone(), None);
        Student {
            shared,
            peer,
            name: String::new(),
            channel: None,
            size: Size::new(80, 24),
            term: None,
            colorterm: None,
            app,
            screen: None,
            decoder: Decoder::new(),
            counted: false,
            watch,
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
        self.name = crate::lesson::text::printable(user)
            .chars()
            .take(32)
            .collect();
        tracing::info!(student = %self.who(), how, "signed in");
        self.watch.signed_in();
        self.watch.input();
        Auth::Accept
    }

    fn refused(&self, user: &str, how: &str) -> Auth {
        tracing::info!(
            user = %crate::lesson::text::printable(user),
            peer = ?self.peer,
            how,
            "sign-in refused"
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

    /// Draws the app and sends what changed.
    fn draw(&mut self, session: &mut Session) -> anyhow::Result<()> {
        let (Some(channel), Some(screen)) = (self.channel, self.screen.as_mut()) else {
            return Ok(());
        };
        screen
            .painter
            .draw(&mut screen.terminal, &self.app, &screen.theme)?;
        let bytes = screen.outbox.take();
        if !bytes.is_empty() {
            session.data(channel, bytes)?;
        }
        Ok(())
    }

    /// Leaves the student's terminal as it was and ends the session.
    fn finish(&mut self, session: &mut Session) -> anyhow::Result<()> {
        let Some(channel) = self.channel else {
            return Ok(());
        };
        if self.screen.take().is_some() {
            self.watch.showing_tutor(None);
            session.data(channel, restore_terminal())?;
        }
        session.exit_status_request(channel, 0)?;
        session.eof(channel)?;
        session.close(channel)?;
        tracing::info!(student = %self.who(), "left");
        Ok(())
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
pub fn restore_terminal() -> Vec<u8> {
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
fn refuse_save(_: &crate::app::Effect) -> Action {
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

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        Ok(if self.shared.access.allows_password(password) {
            self.accepted(user, "password")
        } else {
            self.refused(user, "password")
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
            reply.reject(ChannelOpenFailure::ResourceShortage).await;
            return Ok(());
        }
        self.counted = true;
        self.channel = Some(channel.id());
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
        let Some(term) = self.term.clone() else {
            // Without a pty there is nothing to draw on.
            session.channel_success(channel)?;
            session.data(
                channel,
                "attn-tutor needs a terminal: connect with `ssh -t`\r\n"
                    .as_bytes()
                    .to_vec(),
            )?;
            session.exit_status_request(channel, 1)?;
            session.eof(channel)?;
            session.close(channel)?;
            return Ok(());
        };
        let outbox = Outbox::default();
        let backend = ChannelBackend::new(outbox.clone(), self.size);
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, self.size.width, self.size.height)),
            },
        )?;
        let theme = Theme::detect(false, self.colorterm.as_deref(), Some(&term));
        let mut screen = Screen {
            terminal,
            outbox,
            painter: Painter::default(),
            theme,
        };
        crossterm::queue!(
            screen.outbox,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            Hide
        )?;
        self.screen = Some(screen);
        self.watch.showing_tutor(Some(channel));
        session.channel_success(channel)?;
        tracing::info!(student = %self.who(), %term, "tutor started");
        self.draw(session)
    }

    async fn window_change_request(
        &mut self,
        _channel: ChannelId,
        columns: u32,
        rows: u32,
        _pixel_width: u32,
        _pixel_height: u32,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.size = clamped(columns, rows);
        if let Some(screen) = self.screen.as_mut() {
            screen.terminal.backend_mut().set_size(self.size);
            screen
                .terminal
                .resize(Rect::new(0, 0, self.size.width, self.size.height))?;
        }
        self.draw(session)
    }

    async fn data(
        &mut self,
        _channel: ChannelId,
        data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        if self.screen.is_none() {
            return Ok(());
        }
        self.watch.input();
        let mut events = self.decoder.feed(data);
        // A lone ESC in its own packet is the Escape key: a sequence starting with ESC
        // arrives in one packet from a real terminal.
        if data == b"\x1b" {
            events.extend(self.decoder.flush());
        }
        let area = Rect::new(0, 0, self.size.width, self.size.height);
        for event in events {
            if let Some(action) = action_for(&event, &self.app, area) {
                dispatch(&mut self.app, action, &mut refuse_save);
            }
            if self.app.quit {
                return self.finish(session);
            }
        }
        self.draw(session)
    }
}

/// A client's terminal size, kept within what the server is willing to draw.
fn clamped(columns: u32, rows: u32) -> Size {
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
