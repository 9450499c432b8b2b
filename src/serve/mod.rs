//! `attn-tutor serve`: a classroom over SSH. Every student who connects with their stock ssh
//! client gets their own tutor (the same app, update and view as the local one), drawn into
//! their channel.

mod access;
mod host_key;
mod student;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use anyhow::Context;
use russh::server::Server as _;

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
    pub idle_timeout: Duration,
}

/// What every student's connection shares.
pub struct Shared {
    entries: Vec<PickerEntry>,
    access: Access,
    sessions: AtomicUsize,
    max_sessions: usize,
}

#[derive(Clone)]
struct Classroom {
    shared: Arc<Shared>,
}

impl russh::server::Server for Classroom {
    type Handler = Student;

    fn new_client(&mut self, peer: Option<SocketAddr>) -> Student {
        tracing::info!(?peer, "connection");
        Student::new(Arc::clone(&self.shared), peer)
    }

    fn handle_session_error(&mut self, error: <Student as russh::server::Handler>::Error) {
        // One student's broken connection ends only that session.
        tracing::info!(%error, "a session ended with an error");
    }
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
        inactivity_timeout: Some(options.idle_timeout),
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
        let mut classroom = Classroom {
            shared: Arc::new(Shared {
                entries: options.entries,
                access: options.access,
                sessions: AtomicUsize::new(0),
                max_sessions: options.max_sessions,
            }),
        };
        classroom
            .run_on_socket(Arc::new(config), &listener)
            .await
            .context("the server stopped")
    })
}
