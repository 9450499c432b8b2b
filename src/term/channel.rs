//! A terminal we only reach as a byte stream (an SSH channel): ratatui draws into an outbox of
//! bytes, and the size is what the client told us, since such a terminal cannot be asked.

use std::io::Write;
use std::sync::{Arc, Mutex};

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// The bytes drawn since they were last taken, shared with whoever sends them on.
#[derive(Debug, Clone, Default)]
pub struct Outbox(Arc<Mutex<Vec<u8>>>);

impl Outbox {
    /// Everything written since the last call.
    pub fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .map(|mut bytes| std::mem::take(&mut *bytes))
            .unwrap_or_default()
    }
}

impl Write for Outbox {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut bytes = self
            .0
            .lock()
            .map_err(|_| std::io::Error::other("the outbox lock is poisoned"))?;
        bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// crossterm's escape codes into an `Outbox`, with a size set from outside.
pub(crate) struct ChannelBackend {
    inner: CrosstermBackend<Outbox>,
    size: Size,
}

impl ChannelBackend {
    pub(crate) fn new(outbox: Outbox, size: Size) -> ChannelBackend {
        ChannelBackend {
            inner: CrosstermBackend::new(outbox),
            size,
        }
    }

    pub(crate) fn set_size(&mut self, size: Size) {
        self.size = size;
    }
}

impl Write for ChannelBackend {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Write::flush(&mut self.inner)
    }
}

impl Backend for ChannelBackend {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> std::io::Result<()> {
        self.inner.show_cursor()
    }

    /// Asking would need the client's answer; the tutor never relies on it.
    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        Ok(Position::ORIGIN)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> std::io::Result<Size> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size,
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}
