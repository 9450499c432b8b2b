//! `attn-tutor serve`: a classroom over SSH. Every student who connects with their stock ssh
//! client gets their own tutor (the same app, update and view as the local one), drawn into
//! their channel.

mod access;
mod host_key;
mod student;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use russh::Disconnect;

pub use access::Access;

use crate::app::PickerEntry;
use student::Student;

/// What `serve` was asked to do.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub entries: Vec<PickerEntry>,
    pub host_key: Option<PathBuf>,
    pub access: Access,
    pub max_sessions: usize,
    /// Connections at once from one address: a classroom often shares one NAT address.
    pub per_address: usize,
    /// Time allowed from connecting to being signed in.
    pub login_deadline: Duration,
    /// Time without a key from the student before their session ends (keepalives do not
    /// count).
    pub idle_timeout: Duration,
}

/// What every student's connection shares.
pub struct Shared {
    entries: Vec<PickerEntry>,
    access: Access,
    sessions: AtomicUsize,
    max_sessions: usize,
    connections: Mutex<HashMap<IpAddr, usize>>,
    per_address: usize,
}

impl Shared {
    /// Counts a new connection from `ip`, unless that address has too many already.
    fn admit(self: &Arc<Shared>, ip: IpAddr) -> Option<Ticket> {
        let mut connections = self.connections.lock().ok()?;
        let count = connections.entry(ip).or_insert(0);
        if *count >= self.per_address {
            return None;
        }
        *count += 1;
        Some(Ticket {
            shared: Arc::clone(self),
            ip,
        })
    }
}

/// One admitted connection; dropping it gives its place back.
struct Ticket {
    shared: Arc<Shared>,
    ip: IpAddr,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Ok(mut connections) = self.shared.connections.lock()
            && let Some(count) = connections.get_mut(&self.ip)
        {
            *count -= 1;
            if *count == 0 {
                connections.remove(&self.ip);
            }
        }
    }
}

/// What the connection's watchdog needs to know of the session: signed in yet, and when the
/// student last typed.
#[derive(Debug)]
pub struct Watch {
    started: Instant,
    signed_in: AtomicBool,
    last_input_ms: AtomicU64,
    /// The student's tutor channel once it shows the tutor: a disconnect from outside must
    /// first give the student their terminal back.
    tutor_channel: Mutex<Option<russh::ChannelId>>,
}

impl Watch {
    fn new() -> Watch {
        Watch {
            started: Instant::now(),
            signed_in: AtomicBool::new(false),
            last_input_ms: AtomicU64::new(0),
            tutor_channel: Mutex::new(None),
        }
    }

    pub fn showing_tutor(&self, channel: Option<russh::ChannelId>) {
        if let Ok(mut tutor_channel) = self.tutor_channel.lock() {
            *tutor_channel = channel;
        }
    }

    pub fn signed_in(&self) {
        self.signed_in.store(true, Ordering::SeqCst);
    }

    pub fn input(&self) {
        let now = self.started.elapsed().as_millis();
        self.last_input_ms
            .store(u64::try_from(now).unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_input_ms.load(Ordering::SeqCst));
        self.started.elapsed().saturating_sub(last)
    }
}

/// Ends a connection from the server's side, saying why.
async fn disconnect(handle: &russh::server::Handle, why: &str) {
    let _ = handle
        .disconnect(Disconnect::ByApplication, why.to_string(), "en".to_string())
        .await;
}

/// One connection from accept to close: the SSH handshake within the login deadline, then the
/// session, watched for the deadline and for idleness.
async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    ticket: Ticket,
    config: Arc<russh::server::Config>,
    limits: (Duration, Duration),
) {
    let (login_deadline, idle_timeout) = limits;
    let _ticket = ticket;
    let watch = Arc::new(Watch::new());
    let student = Student::new(Arc::clone(&_ticket.shared), Some(peer), Arc::clone(&watch));
    let started = russh::server::run_stream(config, stream, student);
    let session = match tokio::time::timeout(login_deadline, started).await {
        Ok(Ok(session)) => session,
        Ok(Err(error)) => {
            tracing::info!(%peer, %error, "handshake failed");
            return;
        }
        Err(_) => {
            tracing::info!(%peer, "dropped: no SSH within the login deadline");
            return;
        }
    };
    let handle = session.handle();
    let watchdog = tokio::spawn(async move {
        tokio::time::sleep(login_deadline.saturating_sub(watch.started.elapsed())).await;
        if !watch.signed_in.load(Ordering::SeqCst) {
            tracing::info!(%peer, "dropped: not signed in within the login deadline");
            disconnect(&handle, "sign-in took too long").await;
            return;
        }
        loop {
            let idle = watch.idle_for();
            if idle >= idle_timeout {
                tracing::info!(%peer, "dropped: idle");
                let channel = watch.tutor_channel.lock().ok().and_then(|channel| *channel);
                match channel {
                    // Through the channel, in order: the terminal back, a word of why, and the
                    // end of the session; ssh then closes the connection itself.
                    Some(channel) => {
                        let mut goodbye = student::restore_terminal();
                        goodbye.extend_from_slice(
                            b"attn-tutor: no key pressed for a while; connect again to go on\r\n",
                        );
                        let _ = handle.data(channel, goodbye).await;
                        let _ = handle.exit_status_request(channel, 0).await;
                        let _ = handle.eof(channel).await;
                        let _ = handle.close(channel).await;
                    }
                    None => {
                        disconnect(&handle, "no key pressed for too long; connect again").await;
                    }
                }
                return;
            }
            tokio::time::sleep(idle_timeout - idle).await;
        }
    });
    if let Err(error) = session.await {
        // One student's broken connection ends only that session.
        tracing::info!(%peer, %error, "session ended with an error");
    }
    watchdog.abort();
}

/// Serves until the process is stopped. Prints where students connect before it starts.
pub fn run(options: ServeOptions, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let key_path = options
        .host_key
        .clone()
        .unwrap_or_else(host_key::default_path);
    let (key, created) = host_key::load_or_create(&key_path)?;
    let fingerprint = host_key::fingerprint(&key);
    let config = russh::server::Config {
        methods: options.access.methods(),
        keys: vec![key],
        // A wrong password or key waits before the answer, so guessing is slow.
        auth_rejection_time: Duration::from_secs(1),
        auth_rejection_time_initial: Some(Duration::ZERO),
        max_auth_attempts: 6,
        // Idleness is judged by the student's own keys (see `connection`), not by traffic.
        inactivity_timeout: None,
        keepalive_interval: Some(Duration::from_secs(60)),
        nodelay: true,
        ..Default::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .with_context(|| format!("cannot listen on {}", options.listen))?;
        let address = listener.local_addr()?;
        let host = if address.ip().is_unspecified() {
            "THIS-MACHINE".to_string()
        } else {
            address.ip().to_string()
        };
        writeln!(out, "attn-tutor classroom listening on {address}")?;
        writeln!(out, "access: {}", options.access.describe())?;
        writeln!(
            out,
            "host key {fingerprint} ({}{})",
            key_path.display(),
            if created { ", new" } else { "" }
        )?;
        writeln!(
            out,
            "students connect with:  ssh -p {} NAME@{host}",
            address.port()
        )?;
        out.flush()?;
        tracing::info!(%address, "serving");
        let shared = Arc::new(Shared {
            entries: options.entries,
            access: options.access,
            sessions: AtomicUsize::new(0),
            max_sessions: options.max_sessions,
            connections: Mutex::new(HashMap::new()),
            per_address: options.per_address,
        });
        let config = Arc::new(config);
        let limits = (options.login_deadline, options.idle_timeout);
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: wait a little rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Some(ticket) = shared.admit(peer.ip()) else {
                tracing::warn!(%peer, "refused: too many connections from this address");
                continue;
            };
            let _ = stream.set_nodelay(true);
            tracing::info!(%peer, "connection");
            tokio::spawn(connection(
                stream,
                peer,
                ticket,
                Arc::clone(&config),
                limits,
            ));
        }
    })
}
