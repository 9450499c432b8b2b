//! The SSH way in: the listening socket with its host key and configuration, and one
//! connection from its handshake to its close.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use russh::Disconnect;

use super::client_text::{self, client_text};
use super::places::{self, Place};
use super::student::Student;
use super::unsigned_log::unsigned;
use super::{Farewell, KEEPALIVES_MISSED, ServeOptions, Shared, Watch, guard, host_key, listen};

/// Ends a connection from the server's side, saying why.
pub(super) async fn disconnect(handle: &russh::server::Handle, why: &str) {
    let _ = handle
        .disconnect(Disconnect::ByApplication, why.to_string(), "en".to_string())
        .await;
}

/// One connection from accept to close: the SSH handshake within the handshake deadline,
/// sign-in within the login deadline, then the session, watched for idleness.
pub(super) async fn connection(
    stream: places::Heard,
    watch: Arc<Watch>,
    place: Place,
    shared: Arc<Shared>,
    config: Arc<russh::server::Config>,
    limits: (Duration, Duration),
) {
    let peer = watch.peer;
    let handle = Arc::new(Mutex::new(None));
    let guard = tokio::spawn(guard(
        Arc::clone(&watch),
        Farewell::Ssh(Arc::clone(&handle)),
        limits,
    ));
    let student = Student::new(Arc::clone(&shared), Some(peer), Arc::clone(&watch), place);
    // The guard ends a client that never sends its version line: this then fails.
    let session = match russh::server::run_stream(config, stream, student).await {
        Ok(session) => session,
        Err(error) => {
            if !watch.has_ended() {
                // The error may quote what the client sent.
                let error = client_text(&error.to_string(), client_text::ERROR);
                unsigned!(info, "handshake failed", %peer, %error);
            }
            guard.abort();
            return;
        }
    };
    if let Ok(mut handle) = handle.lock() {
        *handle = Some(session.handle());
    }
    if let Err(error) = session.await
        && !watch.has_ended()
    {
        // One student's broken connection ends only that session.
        let error = client_text(&error.to_string(), client_text::ERROR);
        unsigned!(
            unless watch.signed_in.load(Ordering::SeqCst);
            info, "session ended with an error", %peer, %error
        );
    }
    guard.abort();
    let sessions = shared.sessions.load(Ordering::SeqCst);
    unsigned!(
        unless watch.signed_in.load(Ordering::SeqCst);
        info, "connection closed", %peer, sessions
    );
}

/// Its listening socket, its configuration, and the host key's fingerprint and
/// where it is kept, for the banner.
pub(super) fn listener(
    options: &ServeOptions,
    address: SocketAddr,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<(
    tokio::net::TcpListener,
    russh::server::Config,
    String,
    String,
)> {
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
        keepalive_interval: Some(options.keepalive),
        keepalive_max: KEEPALIVES_MISSED,
        nodelay: true,
        ..Default::default()
    };
    let listener = runtime
        .block_on(async { listen(address) })
        .with_context(|| format!("cannot listen on {address}"))?;
    let key_line = format!(
        "{}{}",
        crate::lesson::text::printable_path(&key_path),
        if created { ", new" } else { "" }
    );
    Ok((listener, config, fingerprint, key_line))
}
