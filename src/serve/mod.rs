//! `attn-tutor serve`: a classroom over SSH. Every student who connects with their stock ssh
//! client gets their own tutor (the same app, update and view as the local one), drawn into
//! their channel.

mod access;
mod host_key;
mod session;
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

use crate::app::{Action, App, Audience, Classroom, PickerEntry, Presented, update};
use crate::ui::Theme;
use session::{Ending, Mailbox};
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
    /// Run the tutor in this terminal as the presenter, whom students follow.
    pub present: Option<Theme>,
    /// Keep students on the presenter's screen.
    pub lock: bool,
}

/// What every student's connection shares.
pub struct Shared {
    entries: Vec<PickerEntry>,
    access: Access,
    sessions: AtomicUsize,
    max_sessions: usize,
    connections: Mutex<HashMap<IpAddr, usize>>,
    per_address: usize,
    /// The presenter's screen, when the class has a presenter.
    presenter: Option<tokio::sync::watch::Receiver<Arc<Presented>>>,
    lock: bool,
    /// Students whose screen follows the presenter's.
    following: AtomicUsize,
    /// Becomes true when the server stops: every session says goodbye.
    class_over: tokio::sync::watch::Receiver<bool>,
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
    /// The student's tutor once it runs: ending the session from outside goes through it, so
    /// the student first gets their terminal back.
    tutor: Mutex<Option<Arc<Mailbox>>>,
}

impl Watch {
    fn new() -> Watch {
        Watch {
            started: Instant::now(),
            signed_in: AtomicBool::new(false),
            last_input_ms: AtomicU64::new(0),
            tutor: Mutex::new(None),
        }
    }

    pub fn showing_tutor(&self, mailbox: Option<Arc<Mailbox>>) {
        if let Ok(mut tutor) = self.tutor.lock() {
            *tutor = mailbox;
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
    let watch = Arc::new(Watch::new());
    let student = Student::new(Arc::clone(&ticket.shared), Some(peer), Arc::clone(&watch));
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
                let tutor = watch.tutor.lock().ok().and_then(|tutor| tutor.clone());
                if let Some(tutor) = tutor {
                    // The tutor restores the student's terminal and says why; a client that
                    // does not read even that is cut off a little later.
                    tutor.end(Ending::Idle);
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                disconnect(&handle, "no key pressed for too long; connect again").await;
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
    let sessions = ticket.shared.sessions.load(Ordering::SeqCst);
    tracing::info!(%peer, sessions, "connection closed");
}

/// Serves until the process is stopped (or, with a presenter, until the presenter quits), then
/// sends every student home with their terminal restored. Prints where students connect
/// before it starts. Returns the signal that stopped it, if one did.
pub fn run(options: ServeOptions, out: &mut dyn std::io::Write) -> anyhow::Result<Option<i32>> {
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
    let listener = runtime
        .block_on(async { listen(options.listen) })
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let address = listener.local_addr()?;
    let host = if address.ip().is_unspecified() {
        "THIS-MACHINE".to_string()
    } else {
        address.ip().to_string()
    };
    let join = format!("ssh -p {} NAME@{host}", address.port());
    writeln!(out, "attn-tutor classroom listening on {address}")?;
    writeln!(out, "access: {}", options.access.describe())?;
    writeln!(
        out,
        "host key {fingerprint} ({}{})",
        key_path.display(),
        if created { ", new" } else { "" }
    )?;
    writeln!(out, "students connect with:  {join}")?;
    out.flush()?;
    tracing::info!(%address, "serving");

    let (class_over, class_over_receiver) = tokio::sync::watch::channel(false);
    let presenter_app = options.present.map(|theme| {
        let mut app = App::new(options.entries.clone(), None);
        app.classroom = Some(Classroom::Presenter {
            audience: Audience::default(),
            join: join.clone(),
        });
        app.status = Some(crate::app::Status::info(format!(
            "Presenting: students join with  {join}"
        )));
        (app, theme)
    });
    let presenter_channel = presenter_app
        .as_ref()
        .map(|(app, _)| tokio::sync::watch::channel(Arc::new(Presented::of(app, 0))));
    let shared = Arc::new(Shared {
        entries: options.entries,
        access: options.access,
        sessions: AtomicUsize::new(0),
        max_sessions: options.max_sessions,
        connections: Mutex::new(HashMap::new()),
        per_address: options.per_address,
        presenter: presenter_channel
            .as_ref()
            .map(|(_, receiver)| receiver.clone()),
        lock: options.lock,
        following: AtomicUsize::new(0),
        class_over: class_over_receiver,
    });
    let limits = (options.login_deadline, options.idle_timeout);
    runtime.spawn(accept(
        listener,
        Arc::clone(&shared),
        Arc::new(config),
        limits,
    ));

    let stopped_by = match (presenter_app, presenter_channel) {
        (Some((app, theme)), Some((screen, _))) => present(app, theme, &shared, screen)?,
        _ => runtime.block_on(stop_signal())?,
    };
    tracing::info!(signal = ?stopped_by, "the class is over");
    let _ = class_over.send(true);
    // Each session restores its student's terminal and closes; give them a moment.
    runtime.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(3);
        while shared.sessions.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(500));
    Ok(stopped_by)
}

/// The listening socket, with room for a whole class connecting at once: tokio's default queue
/// of 128 made a burst of 200 students wait a second for TCP to retry.
fn listen(address: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(1024)
}

/// Accepts connections for as long as the server runs.
async fn accept(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    config: Arc<russh::server::Config>,
    limits: (Duration, Duration),
) {
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
}

/// Waits for SIGTERM, SIGINT or SIGHUP; returns which came.
async fn stop_signal() -> anyhow::Result<Option<i32>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut hangup = signal(SignalKind::hangup())?;
    Ok(Some(tokio::select! {
        _ = terminate.recv() => signal_hook::consts::SIGTERM,
        _ = interrupt.recv() => signal_hook::consts::SIGINT,
        _ = hangup.recv() => signal_hook::consts::SIGHUP,
    }))
}

/// The presenter's tutor in this terminal. Every change of its screen goes to the students;
/// the count of students comes back to its status line.
fn present(
    app: App,
    theme: Theme,
    shared: &Shared,
    screen: tokio::sync::watch::Sender<Arc<Presented>>,
) -> anyhow::Result<Option<i32>> {
    let mut version = 0;
    let mut shown = Audience::default();
    let mut between_keys = |app: &mut App, acted: bool| {
        if acted {
            version += 1;
            screen.send_replace(Arc::new(Presented::of(app, version)));
        }
        let audience = Audience {
            connected: shared.sessions.load(Ordering::SeqCst),
            following: shared.following.load(Ordering::SeqCst),
        };
        let changed = audience != shown;
        if changed {
            shown = audience;
            update(app, Action::Audience(audience));
        }
        changed
    };
    crate::term::local::run_with(app, theme, &mut between_keys)
}
