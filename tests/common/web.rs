//! A browser seat's protocol without a browser, for the tests of what the server accepts: raw
//! HTTP requests on a plain socket, and a WebSocket client (tokio-tungstenite) that speaks the
//! page's messages and reads its frames through a vt100 screen.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::Message;

use super::pty::PATIENCE;

/// The status and the whole answer of one plain HTTP request; status 0 when the answer is not
/// HTTP.
pub fn http(port: u16, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the page's port answers");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .filter(|_| answer.starts_with("HTTP/1.1 "))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

/// `GET path` on the page's port.
pub fn get(port: u16, path: &str) -> (u16, String) {
    http(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    )
}

/// A socket, plain or TLS.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Socket = WebSocketStream<Box<dyn Io>>;

/// A browser seat's socket, as the page would use it.
pub struct Seat {
    runtime: tokio::runtime::Runtime,
    socket: Socket,
    pub screen: vt100::Parser,
    /// JSON messages from the server, in order.
    pub said: Vec<serde_json::Value>,
    pub closed: bool,
}

impl Seat {
    /// Opens `/ws` with this Origin header (none when `None`); Err is the refusal.
    pub fn connect(port: u16, origin: Option<&str>) -> Result<Seat, String> {
        Seat::connect_with(port, origin, None)
    }

    /// Opens `/ws` (`wss` when `tls` is given, trusting what it trusts).
    pub fn connect_with(
        port: u16,
        origin: Option<&str>,
        tls: Option<std::sync::Arc<tokio_rustls::rustls::ClientConfig>>,
    ) -> Result<Seat, String> {
        Seat::connect_from("127.0.0.1", port, origin, tls)
    }

    /// Opens the page's own socket from `address` (another loopback address, say).
    pub fn open_from(address: &str, port: u16) -> Result<Seat, String> {
        let origin = format!("http://127.0.0.1:{port}");
        Seat::connect_from(address, port, Some(&origin), None)
    }

    /// As [`Seat::connect_with`], from `address`.
    pub fn connect_from(
        address: &str,
        port: u16,
        origin: Option<&str>,
        tls: Option<std::sync::Arc<tokio_rustls::rustls::ClientConfig>>,
    ) -> Result<Seat, String> {
        let from: std::net::SocketAddr = format!("{address}:0")
            .parse()
            .map_err(|error| format!("{address}: {error}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let scheme = if tls.is_some() { "wss" } else { "ws" };
        let mut request = format!("{scheme}://127.0.0.1:{port}/ws")
            .into_client_request()
            .unwrap();
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("Origin", HeaderValue::from_str(origin).unwrap());
        }
        let socket = runtime
            .block_on(async {
                let socket = tokio::net::TcpSocket::new_v4()?;
                socket.bind(from)?;
                let tcp = socket.connect(([127, 0, 0, 1], port).into()).await?;
                let stream: Box<dyn Io> = match tls {
                    Some(config) => {
                        let name = rustls_pki_types::ServerName::try_from("127.0.0.1")
                            .map_err(std::io::Error::other)?;
                        Box::new(
                            tokio_rustls::TlsConnector::from(config)
                                .connect(name, tcp)
                                .await?,
                        )
                    }
                    None => Box::new(tcp),
                };
                tokio_tungstenite::client_async(request, stream)
                    .await
                    .map_err(std::io::Error::other)
            })
            .map_err(|error| error.to_string())?
            .0;
        Ok(Seat {
            runtime,
            socket,
            screen: vt100::Parser::new(24.try_into().unwrap(), 80.try_into().unwrap(), 0),
            said: Vec::new(),
            closed: false,
        })
    }

    /// Opens `/ws` from the page's own origin.
    pub fn open(port: u16) -> Seat {
        Seat::connect(port, Some(&format!("http://127.0.0.1:{port}")))
            .expect("the page's own origin is let in")
    }

    pub fn send_text(&mut self, text: &str) {
        let _ = self
            .runtime
            .block_on(self.socket.send(Message::Text(text.into())));
    }

    pub fn join(&mut self, name: &str, code: &str, columns: u16, rows: u16) {
        self.screen.screen_mut().set_size(
            rows.max(1).try_into().unwrap(),
            columns.max(1).try_into().unwrap(),
        );
        let join = serde_json::json!({
            "join": { "name": name, "code": code, "columns": columns, "rows": rows }
        });
        self.send_text(&join.to_string());
    }

    pub fn press(&mut self, keys: &str) {
        let _ = self.runtime.block_on(
            self.socket
                .send(Message::Binary(keys.as_bytes().to_vec().into())),
        );
    }

    pub fn resize(&mut self, columns: u16, rows: u16) {
        self.screen.screen_mut().set_size(
            rows.max(1).try_into().unwrap(),
            columns.max(1).try_into().unwrap(),
        );
        let size = serde_json::json!({ "size": { "columns": columns, "rows": rows } });
        self.send_text(&size.to_string());
    }

    /// Reads what has come, for up to `wait`.
    fn read_for(&mut self, wait: Duration) {
        let deadline = Instant::now() + wait;
        while !self.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let socket = &mut self.socket;
            let next = self
                .runtime
                .block_on(async { tokio::time::timeout(left, socket.next()).await });
            match next {
                Err(_) => return,
                Ok(None) | Ok(Some(Err(_))) | Ok(Some(Ok(Message::Close(_)))) => self.closed = true,
                Ok(Some(Ok(Message::Binary(bytes)))) => self.screen.process(&bytes),
                Ok(Some(Ok(Message::Text(text)))) => self
                    .said
                    .push(serde_json::from_str(&text).expect("the server says JSON")),
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// Waits until `ready` holds of the seat (its screen, what it was told, whether it closed).
    #[track_caller]
    pub fn wait_until(&mut self, what: &str, ready: impl Fn(&Seat) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if ready(self) {
                return;
            }
            assert!(
                Instant::now() < deadline && !self.closed,
                "waited for {what}; the seat {}; it was told {:?}; its screen:\n{}",
                if self.closed { "closed" } else { "is open" },
                self.said,
                self.screen.screen().contents()
            );
            self.read_for(Duration::from_millis(100));
        }
    }

    pub fn screen_text(&self) -> String {
        self.screen.screen().contents()
    }

    /// Waits for the socket to close; false if it is still open after `wait`.
    pub fn closes_within(&mut self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while !self.closed && Instant::now() < deadline {
            self.read_for(Duration::from_millis(100));
        }
        self.closed
    }
}
