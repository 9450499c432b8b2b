//! Where a student's frames go: their SSH channel, or the WebSocket of their browser seat. The
//! session draws the same bytes for both; only the sending and the goodbye differ.

use russh::ChannelWriteHalf;
use russh::server::Msg;
use tokio::sync::mpsc;

/// What a session sends a browser seat.
#[derive(Debug)]
pub(crate) enum ToBrowser {
    /// Terminal output, as the tutor drew it.
    Screen(Vec<u8>),
    /// The session is over, and why (empty when the student quit).
    Ended(String),
}

pub(crate) enum Wire {
    Ssh(ChannelWriteHalf<Msg>),
    /// The seat's socket writer takes one message at a time: while it writes, the session's
    /// next frame waits here, and changes meanwhile pile up in the app, not in a queue.
    Web(mpsc::Sender<ToBrowser>),
}

impl Wire {
    /// Sends a frame; false once the student's connection is gone.
    pub(crate) async fn send(&self, bytes: Vec<u8>) -> bool {
        match self {
            Wire::Ssh(writer) => writer.data_bytes(bytes).await.is_ok(),
            Wire::Web(seat) => seat.send(ToBrowser::Screen(bytes)).await.is_ok(),
        }
    }

    /// Ends the connection after `last` (the terminal restored, and why), as each client
    /// expects: SSH with an exit status and the channel closed; a browser seat with a message
    /// its page shows.
    pub(crate) async fn close(&self, last: Vec<u8>, why: &str) {
        match self {
            Wire::Ssh(writer) => {
                let farewell = async {
                    writer.data_bytes(last).await?;
                    writer.exit_status(0).await?;
                    writer.eof().await?;
                    writer.close().await
                };
                let _ = farewell.await;
            }
            Wire::Web(seat) => {
                if seat.send(ToBrowser::Screen(last)).await.is_ok() {
                    let _ = seat.send(ToBrowser::Ended(why.to_string())).await;
                }
            }
        }
    }
}
