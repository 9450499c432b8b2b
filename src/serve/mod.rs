//! `attn-tutor serve`: a classroom over SSH and in browsers. Every student who connects with
//! their stock ssh client (`ssh.rs`) or a browser (`web/`) gets their own tutor (the same app,
//! update and view as the local one), drawn into their channel. This file starts the server,
//! admits connections and guards them, whichever way they came.

mod access;
mod client_text;
mod files;
mod host_key;
mod join;
mod memory;
mod places;
mod polls;
mod session;
mod sign_ins;
mod ssh;
mod student;
mod unsigned_log;
mod web;
mod wire;

use crate::serve::unsigned_log::unsigned;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;

pub(crate) use access::Access;
pub use memory::{default_limit as default_memory_limit, seat_bytes};
pub(crate) use polls::PollsFile;
pub use web::tls::config as tls_config;

use crate::app::{
    Action, App, Audience, Classroom, PickerEntry, PollEffect, PollReply, Presented, update,
};
use crate::ui::Theme;
use places::{Admitted, Place, Places};
use session::{Ending, Mailbox};
use sign_ins::SignIns;

/// Time allowed from connecting to the end of the SSH handshake (version lines and key
/// exchange; a few round trips, well under a second on any real network). A connection that
/// says nothing, or stalls half-way, holds its place no longer than this, whatever the
/// sign-in deadline.
pub(crate) const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);

/// Keepalives (SSH) or pings (browsers) a client may leave unanswered in a row before it is
/// taken for gone: a laptop shut or a tablet asleep frees its place within a few minutes.
pub(crate) const KEEPALIVES_MISSED: usize = 3;

/// What `serve` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct ServeOptions {
    /// Where SSH students connect; none with `--no-ssh`.
    pub listen: Option<SocketAddr>,
    /// Where browser students open the page (`--web`).
    pub web: Option<WebOptions>,
    pub entries: Vec<PickerEntry>,
    pub host_key: Option<PathBuf>,
    pub access: Access,
    pub max_sessions: usize,
    /// Bytes the students' lessons may reserve together (`--max-memory`).
    pub max_memory: u64,
    /// Connections at once from one address: a classroom often shares one NAT address.
    pub per_address: usize,
    /// Time allowed from connecting to being signed in.
    pub login_deadline: Duration,
    /// Time without a key from the student before their session ends (keepalives do not
    /// count).
    pub idle_timeout: Duration,
    /// Between checks that a client is still there; 3 missed in a row drop it.
    pub keepalive: Duration,
    /// Run the tutor in this terminal as the presenter, whom students follow.
    pub present: Option<Theme>,
    /// Keep students on the presenter's screen.
    pub lock: bool,
    /// Record the presenter's screen (`--record`).
    pub record: Option<crate::term::record::SharedCast>,
    /// Where each poll's answers are appended at its reveal (`--polls`).
    pub polls: Option<polls::PollsFile>,
}

/// The browser seat's address, and its TLS settings for HTTPS.
#[derive(Clone)]
pub(crate) struct WebOptions {
    pub listen: SocketAddr,
    pub tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
}

impl std::fmt::Debug for WebOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebOptions")
            .field("listen", &self.listen)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// What every student's connection shares.
pub(crate) struct Shared {
    entries: Vec<PickerEntry>,
    access: Access,
    sessions: AtomicUsize,
    max_sessions: usize,
    places: Arc<Places>,
    per_address: usize,
    /// Failed sign-ins cost their address time, across its connections.
    sign_ins: SignIns,
    /// The presenter's screen, when the class has a presenter.
    presenter: Option<tokio::sync::watch::Receiver<Arc<Presented>>>,
    lock: bool,
    /// Students whose screen follows the presenter's.
    following: AtomicUsize,
    /// Students gone free with edits of their own not saved.
    unsaved: AtomicUsize,
    /// Becomes true when the server stops: every session says goodbye.
    class_over: tokio::sync::watch::Receiver<bool>,
    /// Where the sessions' tutors do their work, off the runtime's workers.
    workshop: session::Workshop,
    /// What the students' lessons have reserved of the class's memory.
    memory: Arc<memory::ClassMemory>,
    /// The presenter's screen as drawn for followers, shared by them.
    stage: Arc<session::Stage>,
    /// The class's polls: the answers to the one open.
    polls: Arc<polls::ClassPolls>,
}

/// What the connection's guard needs to know of the session (handshake done, signed in yet,
/// when the student last typed), and how it ends the connection from outside.
#[derive(Debug)]
pub(crate) struct Watch {
    /// Tells this connection from the others of its address.
    id: u64,
    peer: SocketAddr,
    started: Instant,
    /// The client has sent something.
    heard: AtomicBool,
    handshake_done: AtomicBool,
    signed_in: AtomicBool,
    last_input_ms: AtomicU64,
    /// The student's tutor once it runs: ending the session from outside goes through it, so
    /// the student first gets their terminal back.
    tutor: Mutex<Option<Arc<Mailbox>>>,
    /// The connection's socket, to shut down from outside: that ends the connection at once,
    /// whatever state the SSH session is in.
    socket: Mutex<Option<std::net::TcpStream>>,
    /// Becomes true when the connection is being ended from outside (evicted, too slow): a
    /// handler waiting for its turn stops waiting.
    ended: tokio::sync::watch::Sender<bool>,
    /// Becomes true when the connection's socket is closed, its files given back.
    gone: tokio::sync::watch::Sender<bool>,
}

impl Watch {
    fn new(id: u64, peer: SocketAddr, socket: Option<std::net::TcpStream>) -> Watch {
        Watch {
            id,
            peer,
            started: Instant::now(),
            heard: AtomicBool::new(false),
            handshake_done: AtomicBool::new(false),
            signed_in: AtomicBool::new(false),
            last_input_ms: AtomicU64::new(0),
            tutor: Mutex::new(None),
            socket: Mutex::new(socket),
            ended: tokio::sync::watch::channel(false).0,
            gone: tokio::sync::watch::channel(false).0,
        }
    }

    pub(crate) fn showing_tutor(&self, mailbox: Option<Arc<Mailbox>>) {
        if let Ok(mut tutor) = self.tutor.lock() {
            *tutor = mailbox;
        }
    }

    /// Key exchange is over and the client asks to sign in.
    pub(crate) fn handshake_done(&self) {
        self.handshake_done.store(true, Ordering::SeqCst);
    }

    /// The client has sent its first bytes.
    pub(crate) fn heard(&self) {
        self.heard.store(true, Ordering::Relaxed);
    }

    /// How far the connection has got towards signing in: 0 nothing heard from the client, 1
    /// heard, 2 its handshake done.
    pub(crate) fn progress(&self) -> u8 {
        if self.handshake_done.load(Ordering::SeqCst) {
            return 2;
        }
        // What the client sent may still wait in the socket, its task not run yet (a busy
        // server): it counts as heard.
        if !self.heard.load(Ordering::Relaxed) && self.has_bytes_waiting() {
            self.heard();
        }
        u8::from(self.heard.load(Ordering::Relaxed))
    }

    /// Whether the client's bytes wait in the socket (the copy is non-blocking, as the
    /// connection's own handle is: a peek never waits).
    fn has_bytes_waiting(&self) -> bool {
        let Ok(socket) = self.socket.try_lock() else {
            return false;
        };
        socket
            .as_ref()
            .is_some_and(|socket| matches!(socket.peek(&mut [0; 1]), Ok(read) if read > 0))
    }

    pub(crate) fn signed_in(&self) {
        self.signed_in.store(true, Ordering::SeqCst);
    }

    pub(crate) fn input(&self) {
        let now = self.started.elapsed().as_millis();
        self.last_input_ms
            .store(u64::try_from(now).unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_input_ms.load(Ordering::SeqCst));
        self.started.elapsed().saturating_sub(last)
    }

    /// Ends the connection now: its socket is shut down and anything waiting stops.
    pub(crate) fn end(&self) {
        self.ended.send_replace(true);
        let socket = self.socket.lock().ok().and_then(|mut socket| socket.take());
        if let Some(socket) = socket {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }

    pub(crate) fn has_ended(&self) -> bool {
        *self.ended.borrow()
    }

    /// The connection's socket is closed.
    fn closed(&self) {
        self.gone.send_replace(true);
    }

    /// Returns once the connection's socket is closed, or after `limit`.
    async fn until_closed(&self, limit: Duration) {
        let mut gone = self.gone.subscribe();
        let _ = tokio::time::timeout(limit, gone.wait_for(|gone| *gone)).await;
    }

    /// Returns once the connection is being ended from outside.
    pub(crate) async fn until_ended(&self) {
        let mut ended = self.ended.subscribe();
        let _ = ended.wait_for(|ended| *ended).await;
    }
}

/// How the guard sends a connection away.
pub(crate) enum Farewell {
    /// With an SSH disconnect message, once the session's handle has come (with the client's
    /// version line).
    Ssh(Arc<Mutex<Option<russh::server::Handle>>>),
    /// A browser seat's page is told by its tutor (idle) or sees its socket close.
    Web,
}

impl Farewell {
    fn log_no_handshake(&self, peer: SocketAddr) {
        match self {
            Farewell::Ssh(_) => unsigned!(
                info,
                "dropped: no SSH handshake within the handshake deadline",
                %peer
            ),
            Farewell::Web => unsigned!(
                info,
                "dropped: no HTTP request (or TLS handshake) within the handshake deadline",
                %peer
            ),
        }
    }

    async fn say(&self, why: &str) {
        let Farewell::Ssh(handle) = self else { return };
        let handle = handle.lock().ok().and_then(|handle| handle.clone());
        if let Some(handle) = handle {
            let _ =
                tokio::time::timeout(Duration::from_secs(1), ssh::disconnect(&handle, why)).await;
        }
    }
}

/// Ends a connection that does not finish its handshake (SSH's key exchange, or a browser's
/// request) in time, does not sign in in time, or, once in, leaves the keyboard for too long.
async fn guard(
    watch: Arc<Watch>,
    farewell: Farewell,
    (login_deadline, idle_timeout): (Duration, Duration),
) {
    let peer = watch.peer;
    let handshake_deadline = HANDSHAKE_DEADLINE.min(login_deadline);
    let until =
        |deadline: Duration| tokio::time::sleep(deadline.saturating_sub(watch.started.elapsed()));
    tokio::select! {
        () = until(handshake_deadline) => {}
        () = watch.until_ended() => return,
    }
    if !watch.handshake_done.load(Ordering::SeqCst) {
        farewell.log_no_handshake(peer);
        watch.end();
        return;
    }
    tokio::select! {
        () = until(login_deadline) => {}
        () = watch.until_ended() => return,
    }
    if !watch.signed_in.load(Ordering::SeqCst) {
        unsigned!(info, "dropped: not signed in within the login deadline", %peer);
        farewell.say("sign-in took too long").await;
        watch.end();
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
            farewell
                .say("no key pressed for too long; connect again")
                .await;
            if matches!(farewell, Farewell::Web) {
                watch.end();
            }
            return;
        }
        tokio::time::sleep(idle_timeout - idle).await;
    }
}

/// Serves until the process is stopped (or, with a presenter, until the presenter quits), then
/// sends every student home with their terminal restored. Prints where students connect
/// before it starts. Returns the signal that stopped it, if one did.
pub(crate) fn run(
    options: ServeOptions,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<Option<i32>> {
    let (most_waiting, open_files) = places::most_waiting(options.max_sessions);
    anyhow::ensure!(
        most_waiting >= 8,
        "the open-file limit ({open_files}) leaves room for only {most_waiting} connections not \
         signed in beside the --max-sessions {} students (each connection takes 2 files); at \
         least 8 are needed\nhelp: raise the limit (ulimit -n) or lower --max-sessions",
        options.max_sessions
    );
    tracing::info!(
        most_waiting,
        per_address = options.per_address,
        open_files,
        "connections not signed in at once, across addresses"
    );
    tracing::info!(
        max_memory_mib = options.max_memory / (1024 * 1024),
        "the most memory the students' lessons may reserve together"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // The students' turns run on blocking threads; the allocator gives a thread's freed
        // memory back to the system once the thread ends, so an idle one ends after 2 s
        // (tokio's default is 10 s) and a class that has gone quiet shrinks soon after.
        .thread_keep_alive(Duration::from_secs(2))
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    let ssh = match options.listen {
        Some(address) => Some(ssh::listener(&options, address, &runtime)?),
        None => None,
    };
    let web = match &options.web {
        Some(web) => {
            let listener = runtime
                .block_on(async { listen(web.listen) })
                .with_context(|| format!("cannot listen on {} for browsers", web.listen))?;
            Some((listener, web.tls.clone()))
        }
        None => None,
    };
    let machine = join::machine_addresses();
    let mut joins = Vec::new();
    match (&ssh, &web) {
        (Some((listener, ..)), _) => writeln!(
            out,
            "attn-tutor classroom listening on {}",
            listener.local_addr()?
        )?,
        (None, Some((listener, _))) => writeln!(
            out,
            "attn-tutor classroom listening on {} for browsers",
            listener.local_addr()?
        )?,
        (None, None) => anyhow::bail!("nothing to listen on: give --listen or --web"),
    }
    writeln!(out, "access: {}", options.access.describe())?;
    let mut only_here = Vec::new();
    if let Some((listener, _, fingerprint, key_line)) = &ssh {
        writeln!(out, "host key {fingerprint} ({key_line})")?;
        let address = listener.local_addr()?;
        let lines = join::join_lines(address, &machine);
        write_joins(out, "students connect with:", &lines)?;
        joins.extend(lines);
        if address.ip().is_loopback() {
            only_here.push(format!("--listen 0.0.0.0:{}", address.port()));
        }
    }
    if let Some((listener, tls)) = &web {
        let address = listener.local_addr()?;
        if ssh.is_some() {
            writeln!(out, "browsers: listening on {address}")?;
        }
        let lines = join::web_lines(address, &machine, tls.is_some());
        write_joins(out, "students open the page:", &lines)?;
        tracing::info!(page = %lines[0], "browsers open");
        if tls.is_none() && !options.access.allows_anyone() && !address.ip().is_loopback() {
            writeln!(
                out,
                "note: plain HTTP: anyone on this network can read the join code as students \
                 send it; --tls-cert and --tls-key serve HTTPS"
            )?;
        }
        joins.extend(lines);
        if address.ip().is_loopback() {
            only_here.push(format!("--web 0.0.0.0:{}", address.port()));
        }
    }
    // A class on loopback is a class of one machine: said in the banner and, since the
    // presenter's tutor covers the banner, on the presenter's status line.
    // Whether no way in is open to other machines, or only some is closed to them.
    let nowhere_else = only_here.len() == usize::from(ssh.is_some()) + usize::from(web.is_some());
    let (addresses, only_here) = match only_here.as_slice() {
        [] => ("", None),
        [one] => (
            "the address above",
            Some(format!("{one} lets the room join")),
        ),
        several => (
            "the addresses above",
            Some(format!("{} let the room join", several.join(" and "))),
        ),
    };
    if let Some(fix) = &only_here {
        writeln!(out, "note: only this machine can reach {addresses}; {fix}")?;
    }
    out.flush()?;
    // What the presenter's help shows: one way in of each kind, a line each.
    let join = joins
        .iter()
        .filter(|line| line.starts_with("ssh "))
        .take(1)
        .chain(
            joins
                .iter()
                .filter(|line| !line.starts_with("ssh "))
                .take(1),
        )
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    tracing::info!(join = %joins.join(", "), "serving");
    // What a flood of connections not signed in did not log line by line, summed up.
    runtime.spawn(async {
        let mut every = tokio::time::interval(unsigned_log::SUMMARY_EVERY);
        loop {
            every.tick().await;
            unsigned_log::summarise();
        }
    });

    let (class_over, class_over_receiver) = tokio::sync::watch::channel(false);
    let presenter_app = options.present.map(|theme| {
        let mut app = App::new(options.entries.clone(), None);
        let host_key = ssh
            .as_ref()
            .map(|(_, _, fingerprint, _)| fingerprint.clone());
        // The projected status line names one way in of each kind, as the help (?) does.
        // The banner's host key is under the tutor: the status line says it again.
        let said = presenting(&join, only_here.as_deref(), nowhere_else);
        app.status = Some(crate::app::Status::info(match host_key.as_deref() {
            Some(key) => format!("{said}; host key {key}"),
            None => said,
        }));
        app.classroom = Some(Classroom::Presenter {
            audience: Audience::default(),
            join: join.clone(),
            host_key,
        });
        (app, theme)
    });
    let presenter_channel = presenter_app
        .as_ref()
        .map(|(app, _)| tokio::sync::watch::channel(Arc::new(Presented::of(app, 0))));
    let needs_code = !options.access.allows_anyone();
    let shared = Arc::new(Shared {
        entries: options.entries,
        access: options.access,
        sessions: AtomicUsize::new(0),
        max_sessions: options.max_sessions,
        places: Arc::new(Places::new(most_waiting)),
        per_address: options.per_address,
        sign_ins: SignIns::default(),
        presenter: presenter_channel
            .as_ref()
            .map(|(_, receiver)| receiver.clone()),
        lock: options.lock,
        following: AtomicUsize::new(0),
        unsaved: AtomicUsize::new(0),
        class_over: class_over_receiver,
        workshop: session::Workshop::default(),
        memory: memory::ClassMemory::new(options.max_memory),
        stage: Arc::default(),
        polls: Arc::new(polls::ClassPolls::new(options.polls)),
    });
    let limits = (options.login_deadline, options.idle_timeout);
    if let Some((listener, config, _, _)) = ssh {
        let config = Arc::new(config);
        runtime.spawn(accept(
            listener,
            Arc::clone(&shared),
            move |stream, watch, place, shared| {
                ssh::connection(stream, watch, place, shared, Arc::clone(&config), limits)
            },
        ));
    }
    if let Some((listener, tls)) = web {
        let site = web::Site::new(tls, needs_code, options.keepalive);
        runtime.spawn(accept(
            listener,
            Arc::clone(&shared),
            move |stream, watch, place, shared| {
                web::connection(stream, watch, place, shared, site.clone(), limits)
            },
        ));
    }

    let stopped_by = match (presenter_app, presenter_channel) {
        (Some((app, theme)), Some((screen, _))) => {
            present(app, theme, options.record, &shared, screen)?
        }
        _ => runtime.block_on(stop_signal())?,
    };
    unsigned_log::summarise();
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

/// The presenter's first status line: the ways in (one a line in `join`), and, when some
/// listen on loopback, the flags that would let the room join.
fn presenting(join: &str, only_here: Option<&str>, nowhere_else: bool) -> String {
    let ways = join.replace('\n', "  or open  ");
    match only_here {
        Some(fix) if nowhere_else => format!("Presenting: this machine only ({ways}); {fix}"),
        Some(fix) => format!("Presenting: students join with  {ways}; {fix}"),
        None => format!("Presenting: students join with  {ways}"),
    }
}

/// The banner's lines for one way in: the first after `lead`, the others under it.
fn write_joins(out: &mut dyn std::io::Write, lead: &str, lines: &[String]) -> std::io::Result<()> {
    for (index, line) in lines.iter().enumerate() {
        if index == 0 {
            writeln!(out, "{lead}  {line}")?;
        } else {
            writeln!(out, "{:>width$}  {line}", "or:", width = lead.len())?;
        }
    }
    Ok(())
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

/// How long the next accept waits for an evicted connection to close its socket: it gives its
/// files back before a flood's next connection takes more, so a flood never outruns the limit
/// on open files; a connection whose task is stuck does not hold the door for longer.
const EVICTED_CLOSING: Duration = Duration::from_millis(50);

/// Accepts connections for as long as the server runs.
/// Every connection, SSH or browser, takes a place among its address's first; `serve` then
/// runs it.
async fn accept<F, C>(listener: tokio::net::TcpListener, shared: Arc<Shared>, serve: F)
where
    F: Fn(places::Heard, Arc<Watch>, Place, Arc<Shared>) -> C,
    C: std::future::Future<Output = ()> + Send + 'static,
{
    let mut connections = 0;
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
        connections += 1;
        let (copy, stream) = match with_a_second_handle(stream) {
            Ok(socket) => socket,
            Err(error) => {
                tracing::warn!(%peer, %error, "accept failed");
                continue;
            }
        };
        let watch = Arc::new(Watch::new(connections, peer, copy));
        let place = match shared.places.admit(peer.ip(), &watch, shared.per_address) {
            Admitted::Free(place) => place,
            Admitted::Evicting(place, oldest) => {
                unsigned!(
                    info,
                    "evicted: the oldest connection of this address among those least far \
                     from signing in, to make room",
                    %peer,
                    oldest = ?oldest.peer
                );
                oldest.until_closed(EVICTED_CLOSING).await;
                place
            }
            Admitted::EvictingElsewhere(place, oldest) => {
                unsigned!(
                    info,
                    "evicted: the oldest connection among those least far from signing in, of \
                     the address with the most: the class's limit of connections not signed in \
                     was reached",
                    %peer,
                    oldest = ?oldest.peer
                );
                oldest.until_closed(EVICTED_CLOSING).await;
                place
            }
            Admitted::Refused => {
                unsigned!(warn, "refused: too many connections from this address", %peer);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        unsigned!(info, "connection opened", %peer);
        let stream = places::Heard::new(stream, Arc::clone(&watch));
        tokio::spawn(serve(stream, watch, place, Arc::clone(&shared)));
    }
}

/// The connection's socket and a second handle on it, to end the connection from outside at
/// any stage (see `Watch::end`).
fn with_a_second_handle(
    stream: tokio::net::TcpStream,
) -> std::io::Result<(Option<std::net::TcpStream>, tokio::net::TcpStream)> {
    let socket = stream.into_std()?;
    // Shared with the copy: a peek through it never waits.
    socket.set_nonblocking(true)?;
    let copy = socket.try_clone().ok();
    Ok((copy, tokio::net::TcpStream::from_std(socket)?))
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
    record: Option<crate::term::record::SharedCast>,
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
            unsaved: shared.unsaved.load(Ordering::SeqCst),
            answered: shared.polls.answered(),
        };
        let changed = audience != shown;
        if changed {
            shown = audience;
            update(app, Action::Audience(audience));
        }
        changed
    };
    // The presenter's polls go to the class's; anything else is the local tutor's to do.
    let polls = Arc::clone(&shared.polls);
    let mut effects = move |effect: &crate::app::Effect| match effect {
        crate::app::Effect::Poll(poll) => Action::Poll(match poll {
            PollEffect::Open(poll) => {
                polls.open(Arc::clone(poll));
                PollReply::Opened
            }
            PollEffect::Lock(number) => polls.lock(*number),
            PollEffect::Send { .. } => poll.without_a_class(),
        }),
        _ => crate::term::save_locally(effect),
    };
    crate::term::local::run_with(app, theme, record, &mut between_keys, &mut effects)
}

#[cfg(test)]
mod tests {
    use super::presenting;

    #[test]
    fn the_presenter_is_told_when_the_room_cannot_join_all_or_some_ways() {
        let both = "ssh -p 2222 NAME@127.0.0.1\nhttp://127.0.0.1:8080/";
        assert_eq!(
            presenting(
                both,
                Some("--listen 0.0.0.0:2222 and --web 0.0.0.0:8080 let the room join"),
                true
            ),
            "Presenting: this machine only (ssh -p 2222 NAME@127.0.0.1  or open  \
             http://127.0.0.1:8080/); --listen 0.0.0.0:2222 and --web 0.0.0.0:8080 let the room join"
        );
        let mixed = "ssh -p 2222 NAME@192.168.1.20\nhttp://127.0.0.1:8080/";
        let said = presenting(mixed, Some("--web 0.0.0.0:8080 lets the room join"), false);
        assert!(
            said.starts_with("Presenting: students join with  ssh -p 2222 NAME@192.168.1.20"),
            "{said}"
        );
        assert!(!said.contains("this machine only"), "{said}");
        assert!(
            said.ends_with("; --web 0.0.0.0:8080 lets the room join"),
            "{said}"
        );
        assert_eq!(
            presenting("ssh -p 2222 NAME@192.168.1.20", None, false),
            "Presenting: students join with  ssh -p 2222 NAME@192.168.1.20"
        );
    }
}
