//! The browser seat (`serve --web ADDR`): a page with a terminal (xterm.js) that joins the
//! class over a WebSocket and drives the same per-student tutor as an SSH seat, under the same
//! rules: places per address, join codes paced per address, the handshake, login and idle
//! deadlines, keepalives, and at most one frame being sent and one waiting. Nothing else is
//! served: the page (one answer, everything inlined) and the socket's path; every other path is
//! 404, and the socket takes only the page's own origin.

mod page;
mod seat;
pub(crate) mod tls;

use crate::serve::unsigned_log::unsigned;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::extract::ws::WebSocketUpgrade;
use axum::response::IntoResponse;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_rustls::rustls::ServerConfig;

use super::client_text::{self, client_text};
use super::places::Place;
use super::{Farewell, HANDSHAKE_DEADLINE, Shared, Watch};

/// The largest message a page may send: a paste, or a size. A bigger one closes the socket.
const MAX_MESSAGE: usize = 64 * 1024;

/// How much of a seat's socket is read at a time. The WebSocket reader zeroes this much of its
/// buffer at every read, and a seat's socket is read again after every frame sent to it: at the
/// default of 128 KiB that zeroing was a sixth of the server's work at a class's step change.
/// Keys are a few bytes; a long paste is read in several pieces.
const READ_AT_A_TIME: usize = 4 * 1024;

/// The request head a browser sends is a few hundred bytes; a larger one is refused (431).
const MAX_HEAD: usize = 16 * 1024;

/// What every browser connection needs besides the class.
#[derive(Clone)]
pub(crate) struct Site {
    /// HTTPS when set.
    pub tls: Option<Arc<ServerConfig>>,
    /// The page, made once (it says whether a join code is asked for): shared by every answer,
    /// not copied.
    page: axum::body::Bytes,
    /// The page's Content-Security-Policy: its inline scripts, by their hashes.
    policy: HeaderValue,
    /// Between pings to a seat.
    keepalive: Duration,
}

impl Site {
    pub(crate) fn new(
        tls: Option<Arc<ServerConfig>>,
        needs_code: bool,
        keepalive: Duration,
    ) -> Site {
        let page = page::page(needs_code);
        Site {
            tls,
            // The policy is base64 and ASCII words; were it ever not a header value, the page
            // would run nothing rather than anything.
            policy: HeaderValue::from_str(&page.policy)
                .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'")),
            page: page.html.into(),
            keepalive,
        }
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Whether a request for `host` (its Host header) is for this server. Over plain HTTP only
    /// an address is: a name could be an attacker's, made to point here (DNS rebinding), so that
    /// their page's origin matches ours. Over TLS the certificate vouches for the name.
    fn serves_host(&self, host: &str) -> bool {
        if self.tls.is_some() {
            return !host.is_empty();
        }
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|byte| byte.is_ascii_digit()) => name,
            _ => host,
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
    }
}

/// One browser connection, from accept to close: TLS if asked for, one HTTP request (the page
/// or the WebSocket), and, for a WebSocket, the seat until it ends.
pub(crate) async fn connection(
    stream: super::places::Heard,
    watch: Arc<Watch>,
    place: Place,
    shared: Arc<Shared>,
    site: Site,
    limits: (Duration, Duration),
) {
    let guard = tokio::spawn(super::guard(Arc::clone(&watch), Farewell::Web, limits));
    // The seat holds a copy of `done`; the connection ends when the seat has.
    let (done, mut seat_over) = mpsc::channel::<()>(1);
    let request = Request {
        shared,
        watch: Arc::clone(&watch),
        place: Arc::new(Mutex::new(Some(place))),
        site: site.clone(),
        done,
    };
    match &site.tls {
        Some(config) => {
            match tokio_rustls::TlsAcceptor::from(Arc::clone(config))
                .accept(stream)
                .await
            {
                Ok(stream) => serve(stream, request).await,
                Err(error) => {
                    // Nothing was served: the request's copy of `done` (and its place) must go
                    // now, or the wait below never ends and the connection is never freed.
                    drop(request);
                    if !watch.has_ended() {
                        let error = client_text(&error.to_string(), client_text::ERROR);
                        unsigned!(info, "TLS handshake failed", peer = %watch.peer, %error);
                    }
                }
            }
        }
        None => serve(stream, request).await,
    }
    let _ = seat_over.recv().await;
    guard.abort();
}

/// What answering one request needs.
#[derive(Clone)]
struct Request {
    shared: Arc<Shared>,
    watch: Arc<Watch>,
    /// Taken by the seat when the request is a WebSocket.
    place: Arc<Mutex<Option<Place>>>,
    site: Site,
    done: mpsc::Sender<()>,
}

/// One request on the connection, then it closes (every answer but the WebSocket's says
/// `Connection: close`): a connection is one page or one seat, each with its own place.
async fn serve<S>(stream: S, request: Request)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let watch = Arc::clone(&request.watch);
    let service = hyper::service::service_fn(move |incoming| {
        let request = request.clone();
        async move { Ok::<_, Infallible>(request.answer(incoming).await) }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .max_buf_size(MAX_HEAD)
        .timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE_DEADLINE)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
    if let Err(error) = served
        && !watch.has_ended()
    {
        let error = client_text(&error.to_string(), client_text::ERROR);
        tracing::debug!(peer = %watch.peer, %error, "browser connection ended with an error");
    }
}

impl Request {
    async fn answer(self, incoming: hyper::Request<hyper::body::Incoming>) -> Response<Body> {
        self.watch.handshake_done();
        let host = named_host(&incoming);
        let host = host.as_str();
        if !self.site.serves_host(host) {
            unsigned!(
                info,
                "refused: a name for this server that only TLS can vouch for",
                peer = %self.watch.peer,
                host = %client_text(host, client_text::LABEL)
            );
            return plain(
                StatusCode::MISDIRECTED_REQUEST,
                "open the classroom's page by this machine's address, as the teacher's screen \
                 shows it (http://ADDRESS:PORT/); a name needs --tls-cert",
            );
        }
        let path = incoming.uri().path().to_string();
        let method = incoming.method().clone();
        let known = path == page::PAGE || path == page::SOCKET;
        if !known {
            tracing::debug!(
                peer = %self.watch.peer,
                path = %client_text(&path, client_text::LABEL),
                "not found"
            );
            return plain(StatusCode::NOT_FOUND, "not found");
        }
        if method != Method::GET && method != Method::HEAD {
            let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET");
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        if path == page::SOCKET {
            return self.socket(incoming).await;
        }
        let mut response = Response::new(Body::from(self.site.page.clone()));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        secure(headers);
        headers.insert(header::CONTENT_SECURITY_POLICY, self.site.policy.clone());
        response
    }

    /// The WebSocket: only from the page's own origin (a page elsewhere cannot drive a
    /// student's seat with their browser), then the seat.
    async fn socket(self, incoming: hyper::Request<hyper::body::Incoming>) -> Response<Body> {
        let expected = format!("{}://{}", self.site.scheme(), named_host(&incoming));
        let origin = incoming
            .headers()
            .get(header::ORIGIN)
            .and_then(|origin| origin.to_str().ok());
        if !origin.is_some_and(|origin| origin.eq_ignore_ascii_case(&expected)) {
            unsigned!(
                info,
                "WebSocket refused: not from this server's page",
                peer = %self.watch.peer,
                origin = %client_text(origin.unwrap_or("(none)"), client_text::LABEL)
            );
            return plain(
                StatusCode::FORBIDDEN,
                "the classroom's socket is for its own page",
            );
        }
        let (mut parts, _) = incoming.into_parts();
        let upgrade = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
            Ok(upgrade) => upgrade,
            Err(rejection) => {
                let mut response = rejection.into_response();
                secure(response.headers_mut());
                return response;
            }
        };
        let Some(place) = self.place.lock().ok().and_then(|mut place| place.take()) else {
            return plain(StatusCode::CONFLICT, "one seat per connection");
        };
        let seat = seat::Seat {
            shared: self.shared,
            watch: self.watch,
            place,
            done: self.done,
            keepalive: self.site.keepalive,
        };
        upgrade
            .max_message_size(MAX_MESSAGE)
            .max_frame_size(MAX_MESSAGE)
            .read_buffer_size(READ_AT_A_TIME)
            .on_failed_upgrade(|error: axum::Error| {
                // The error may quote what the client sent.
                let error = client_text(&error.to_string(), client_text::ERROR);
                tracing::debug!(%error, "WebSocket upgrade failed");
            })
            .on_upgrade(move |socket| seat.run(socket))
    }
}

/// The host a request is for: the one in its request line when it is in absolute form
/// (`GET http://HOST/`), which then counts whatever the Host header says (RFC 9112, 3.2.2);
/// otherwise its Host header.
fn named_host<B>(incoming: &hyper::Request<B>) -> String {
    match incoming.uri().authority() {
        Some(authority) => authority.as_str().to_string(),
        None => incoming
            .headers()
            .get(header::HOST)
            .and_then(|host| host.to_str().ok())
            .unwrap_or("")
            .to_string(),
    }
}

/// A short plain-text answer.
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    secure(headers);
    response
}

/// Headers on every answer but the WebSocket's 101: nothing on the page may come from
/// elsewhere or be framed by another site, nothing is sniffed or cached, and the connection
/// closes after the answer.
fn secure(headers: &mut hyper::HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        // Answers but the page (which has its own) need nothing at all.
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // hyper closes the connection after an answer that says so. (Its `keep_alive(false)`
    // would also say it on the WebSocket's 101, which must say `Connection: upgrade`.)
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_plain_http_only_an_address_names_the_server() {
        let plain = Site::new(None, true, Duration::from_secs(60));
        for host in [
            "192.168.1.20:8080",
            "127.0.0.1",
            "[::1]:8080",
            "localhost:8080",
        ] {
            assert!(plain.serves_host(host), "{host}");
        }
        for host in [
            "evil.example:8080",
            "evil.example",
            "",
            "192.168.1.20.evil.example",
        ] {
            assert!(!plain.serves_host(host), "{host}");
        }
    }
}
