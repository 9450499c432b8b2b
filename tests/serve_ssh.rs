//! End to end: `attn-tutor serve` on 127.0.0.1, and students connecting with the real OpenSSH
//! client (`ssh -tt` in a pseudo-terminal, read back through a vt100 screen).

mod common;

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Instant;

use common::pty::{PATIENCE, POLL, PtyChild, top_line};
use portable_pty::CommandBuilder;
use tempfile::TempDir;

/// The picker's heading.
const PICKER: &str = "choose a lesson";

/// The first built-in lesson, the one Enter opens from the picker.
const FIRST_LESSON: &str = "cat-sleeps";

/// Whether `tools` are installed; says so and why the test is skipped when one is not.
fn installed(tools: &[&str], test: &str) -> bool {
    for tool in tools {
        let found = Command::new(tool)
            .arg("-?")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Err(error) = found
            && error.kind() == ErrorKind::NotFound
        {
            eprintln!("skipping {test}: `{tool}` is not installed (install openssh-client)");
            return false;
        }
    }
    true
}

/// A child process killed (if still running) when the guard is dropped.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// What a finished command printed.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `command` with stdin from /dev/null to its end, within `PATIENCE`.
#[track_caller]
fn finish(mut command: Command) -> Finished {
    let shown = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = KillOnDrop(
        command
            .spawn()
            .unwrap_or_else(|error| panic!("{shown} starts: {error}")),
    );
    let read_all = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read_all(Box::new(child.0.stdout.take().unwrap()));
    let stderr = read_all(Box::new(child.0.stderr.take().unwrap()));
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "{shown} did not finish within {PATIENCE:?}"
        );
        thread::sleep(POLL);
    };
    Finished {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// How a student signs in.
enum Login {
    /// No password, no key (the server is `--open`).
    Open,
    /// The join code, typed by this askpass program.
    Password(PathBuf),
    /// This private key, and no other.
    Key(PathBuf),
}

/// `attn-tutor serve` on 127.0.0.1 with a free port and a new host key in a temporary folder;
/// killed when dropped.
struct Server {
    process: KillOnDrop,
    port: u16,
    /// Its log (standard error) so far.
    log: Arc<Mutex<String>>,
    dir: TempDir,
}

impl Server {
    /// Starts the server with `access` (`--open`, `--password-file FILE` or
    /// `--authorized-keys FILE`) and waits for it to say where it listens.
    fn start(access: &[&str]) -> Server {
        let dir = TempDir::new().unwrap();
        let host_key = dir.path().join("host_key");
        let mut process = KillOnDrop(
            Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"))
                .args(["serve", "--listen", "127.0.0.1:0", "--host-key"])
                .arg(&host_key)
                .args(access)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("attn-tutor serve starts"),
        );

        let log = Arc::new(Mutex::new(String::new()));
        let stderr = process.0.stderr.take().unwrap();
        let written = Arc::clone(&log);
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = written.lock().unwrap_or_else(PoisonError::into_inner);
                log.push_str(&line);
                log.push('\n');
            }
        });
        let (lines, banner) = mpsc::channel();
        let stdout = process.0.stdout.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });

        let first = banner.recv_timeout(PATIENCE).unwrap_or_else(|error| {
            let log = log.lock().unwrap_or_else(PoisonError::into_inner);
            panic!("attn-tutor serve printed no banner ({error}); its log:\n{log}")
        });
        let port = first
            .strip_prefix("attn-tutor classroom listening on 127.0.0.1:")
            .and_then(|port| port.trim().parse().ok())
            .unwrap_or_else(|| panic!("the banner's first line names no port: {first:?}"));
        Server {
            process,
            port,
            log,
            dir,
        }
    }

    fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Fails the test if the server has stopped (one student's refusal must not end the class).
    fn assert_still_serving(&mut self) {
        let status = self.process.0.try_wait().unwrap();
        assert!(
            status.is_none(),
            "the server stopped ({status:?}); its log:\n{}",
            self.log()
        );
    }

    /// The arguments of `ssh OPTIONS USER@127.0.0.1 COMMAND` for this server.
    fn ssh_args(
        &self,
        user: &str,
        login: &Login,
        options: &[&str],
        command: &[&str],
    ) -> Vec<String> {
        let known_hosts = self.dir.path().join("known_hosts");
        let mut args: Vec<String> = vec![
            "-F".into(),
            "/dev/null".into(),
            "-p".into(),
            self.port.to_string(),
            "-o".into(),
            "StrictHostKeyChecking=no".into(),
            "-o".into(),
            format!("UserKnownHostsFile={}", known_hosts.display()),
            "-o".into(),
            "ConnectTimeout=20".into(),
        ];
        let sign_in: Vec<String> = match login {
            Login::Open => vec![
                "-o".into(),
                "BatchMode=yes".into(),
                "-o".into(),
                "PubkeyAuthentication=no".into(),
            ],
            Login::Password(_) => vec![
                "-o".into(),
                "PubkeyAuthentication=no".into(),
                "-o".into(),
                "KbdInteractiveAuthentication=no".into(),
                "-o".into(),
                "NumberOfPasswordPrompts=1".into(),
            ],
            Login::Key(key) => vec![
                "-i".into(),
                key.display().to_string(),
                "-o".into(),
                "IdentitiesOnly=yes".into(),
                "-o".into(),
                "PubkeyAuthentication=yes".into(),
                "-o".into(),
                "PasswordAuthentication=no".into(),
                "-o".into(),
                "BatchMode=yes".into(),
            ],
        };
        args.extend(sign_in);
        args.extend(options.iter().map(|option| option.to_string()));
        args.push(format!("{user}@127.0.0.1"));
        args.extend(command.iter().map(|word| word.to_string()));
        args
    }

    /// The environment `ssh` runs with: no agent, and the askpass program for a join code.
    fn ssh_env(login: &Login) -> Vec<(&'static str, Option<String>)> {
        let mut env = vec![("SSH_AUTH_SOCK", None)];
        if let Login::Password(askpass) = login {
            env.push(("SSH_ASKPASS", Some(askpass.display().to_string())));
            env.push(("SSH_ASKPASS_REQUIRE", Some("force".to_string())));
        }
        env
    }

    /// `ssh` without a terminal, to run with [`finish`] or spawn.
    fn ssh(&self, user: &str, login: &Login, options: &[&str], command: &[&str]) -> Command {
        let mut ssh = Command::new("ssh");
        ssh.args(self.ssh_args(user, login, options, command));
        for (name, value) in Server::ssh_env(login) {
            match value {
                Some(value) => ssh.env(name, value),
                None => ssh.env_remove(name),
            };
        }
        ssh
    }

    /// `ssh -tt` in an 80×24 pseudo-terminal: a student at their own terminal.
    fn student(&self, user: &str, login: &Login) -> PtyChild {
        let mut ssh = CommandBuilder::new("ssh");
        ssh.args(self.ssh_args(user, login, &["-tt", "-o", "LogLevel=ERROR"], &[]));
        ssh.env("TERM", "xterm-256color");
        for (name, value) in Server::ssh_env(login) {
            match value {
                Some(value) => ssh.env(name, value),
                None => ssh.env_remove(name),
            }
        }
        let mut student = PtyChild::spawn(ssh);
        let log = Arc::clone(&self.log);
        student.explain_failures_with(move || {
            let log = log.lock().unwrap_or_else(PoisonError::into_inner);
            format!("the server's log:\n{log}")
        });
        student
    }
}

/// Waits for the lesson picker, drawn on the alternate screen.
#[track_caller]
fn wait_for_the_picker(student: &mut PtyChild) -> String {
    student.wait_until(
        "the lesson picker on the alternate screen",
        PATIENCE,
        |screen| {
            let text = screen.contents();
            (screen.alternate_screen()
                && top_line(&text).contains(PICKER)
                && text.contains(FIRST_LESSON))
            .then_some(text)
        },
    )
}

/// Quits from the picker and checks that the student's terminal and ssh end cleanly.
#[track_caller]
fn quit_from_the_picker(student: &mut PtyChild) {
    student.press("q");
    student.wait_for_the_terminal_restored();
    let status = student.wait_for_exit();
    assert!(
        status.success(),
        "ssh exits 0 when the student quits, not {status:?}:\n{}",
        student.screen_text()
    );
}

/// A new passphrase-less Ed25519 key pair at `path` (and `path.pub`).
#[track_caller]
fn new_key(path: &Path) {
    let mut keygen = Command::new("ssh-keygen");
    keygen
        .args([
            "-t",
            "ed25519",
            "-N",
            "",
            "-q",
            "-C",
            "attn-tutor test",
            "-f",
        ])
        .arg(path);
    let made = finish(keygen);
    assert!(made.status.success(), "ssh-keygen: {}", made.stderr);
}

/// An askpass program that types `code`.
fn askpass(dir: &Path, name: &str, code: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho '{code}'\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
    path
}

#[test]
fn a_student_picks_a_lesson_steps_through_it_and_quits_cleanly() {
    if !installed(
        &["ssh"],
        "a_student_picks_a_lesson_steps_through_it_and_quits_cleanly",
    ) {
        return;
    }
    let server = Server::start(&["--open"]);
    let mut student = server.student("student", &Login::Open);

    wait_for_the_picker(&mut student);
    student.press("\r");
    student.wait_for(
        "cat-sleeps at its first step",
        |text| {
            top_line(text).contains(FIRST_LESSON) && top_line(text).contains("Step 1/6 · Embedding")
        },
        PATIENCE,
    );
    student.press("n");
    student.wait_for(
        "the next step",
        |text| top_line(text).contains("Step 2/6 · Projection"),
        PATIENCE,
    );

    student.press("q");
    wait_for_the_picker(&mut student);
    quit_from_the_picker(&mut student);
    assert!(
        server.log().contains("left"),
        "the server logs that the student left:\n{}",
        server.log()
    );
}

#[test]
fn two_students_at_once_each_have_their_own_tutor() {
    if !installed(&["ssh"], "two_students_at_once_each_have_their_own_tutor") {
        return;
    }
    let server = Server::start(&["--open"]);
    let mut alice = server.student("alice", &Login::Open);
    let mut bob = server.student("bob", &Login::Open);
    wait_for_the_picker(&mut alice);
    wait_for_the_picker(&mut bob);

    alice.press("\r");
    alice.wait_for_step("Embedding");
    alice.press("n");
    alice.wait_for_step("Projection");

    // Bob's tutor did not move with Alice's: he is still on the picker, and Enter opens the
    // lesson for him at its first step.
    let bobs = bob.screen_text();
    assert!(
        top_line(&bobs).contains(PICKER),
        "Bob's screen changed with Alice's keys:\n{bobs}"
    );
    bob.press("\r");
    bob.wait_for(
        "Bob's lesson at its first step",
        |text| top_line(text).contains("Step 1/6 · Embedding"),
        PATIENCE,
    );
    let alices = alice.screen_text();
    assert!(
        top_line(&alices).contains("Step 2/6 · Projection"),
        "Alice's screen changed with Bob's keys:\n{alices}"
    );

    // Alice leaving ends only her session: Bob goes on.
    alice.press("q");
    wait_for_the_picker(&mut alice);
    quit_from_the_picker(&mut alice);
    bob.press("n");
    bob.wait_for(
        "Bob's next step after Alice left",
        |text| top_line(text).contains("Step 2/6 · Projection"),
        PATIENCE,
    );
    bob.press("q");
    wait_for_the_picker(&mut bob);
    quit_from_the_picker(&mut bob);
}

#[test]
fn a_session_without_a_terminal_is_told_to_connect_with_ssh_t() {
    if !installed(
        &["ssh"],
        "a_session_without_a_terminal_is_told_to_connect_with_ssh_t",
    ) {
        return;
    }
    let mut server = Server::start(&["--open"]);
    let ssh = finish(server.ssh("student", &Login::Open, &[], &[]));
    assert!(
        ssh.stdout.contains("attn-tutor needs a terminal"),
        "stdout: {:?}\nstderr: {:?}",
        ssh.stdout,
        ssh.stderr
    );
    assert_eq!(ssh.status.code(), Some(1), "stderr: {}", ssh.stderr);
    server.assert_still_serving();
}

#[test]
fn commands_are_refused() {
    if !installed(&["ssh"], "commands_are_refused") {
        return;
    }
    assert_refused(&[], &["ls", "/"], "exec request failed");
}

#[test]
fn the_sftp_subsystem_is_refused() {
    if !installed(&["ssh"], "the_sftp_subsystem_is_refused") {
        return;
    }
    assert_refused(&["-s"], &["sftp"], "subsystem request failed");
}

/// Signing in with `login` is refused ("Permission denied", exit 255, no session) and the
/// server goes on serving.
fn assert_signin_refused(server: &mut Server, login: &Login) {
    let ssh = finish(server.ssh("student", login, &[], &[]));
    assert!(
        ssh.stderr.contains("Permission denied"),
        "stderr: {:?}",
        ssh.stderr
    );
    assert_eq!(ssh.status.code(), Some(255), "stderr: {}", ssh.stderr);
    assert!(
        !ssh.stdout.contains("attn-tutor"),
        "a refused sign-in got a session: {:?}",
        ssh.stdout
    );
    server.assert_still_serving();
}

/// Runs ssh with `options` and `command` against an open server and checks that it is refused
/// with `message`, prints nothing, exits 255, and leaves the server serving.
fn assert_refused(options: &[&str], command: &[&str], message: &str) {
    let mut server = Server::start(&["--open"]);
    let ssh = finish(server.ssh("student", &Login::Open, options, command));
    assert!(ssh.stderr.contains(message), "stderr: {:?}", ssh.stderr);
    assert_eq!(ssh.status.code(), Some(255), "stderr: {}", ssh.stderr);
    assert_eq!(ssh.stdout, "", "the refused request printed something");
    server.assert_still_serving();
}

#[test]
fn port_forwarding_is_refused() {
    if !installed(&["ssh"], "port_forwarding_is_refused") {
        return;
    }
    let mut server = Server::start(&["--open"]);
    let local = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free local port")
        .port();
    let forward = format!("{local}:127.0.0.1:22");
    let mut ssh = server.ssh(
        "student",
        &Login::Open,
        &["-N", "-L", &forward, "-o", "ExitOnForwardFailure=yes"],
        &[],
    );
    ssh.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut ssh = KillOnDrop(ssh.spawn().expect("ssh starts"));

    // ssh listens on the local port once signed in.
    let deadline = Instant::now() + PATIENCE;
    let mut connection = loop {
        match TcpStream::connect(("127.0.0.1", local)) {
            Ok(connection) => break connection,
            Err(error) => {
                if let Some(status) = ssh.0.try_wait().unwrap() {
                    let mut stderr = String::new();
                    let _ = ssh.0.stderr.take().unwrap().read_to_string(&mut stderr);
                    panic!("ssh -L ended ({status}) before forwarding: {stderr}");
                }
                assert!(
                    Instant::now() < deadline,
                    "ssh did not listen on {local} within {PATIENCE:?}: {error}"
                );
                thread::sleep(POLL);
            }
        }
    };
    connection.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut buffer = [0; 64];
    match connection.read(&mut buffer) {
        Ok(0) => {}
        Err(error)
            if matches!(
                error.kind(),
                ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
            ) => {}
        Ok(read) => panic!(
            "the forwarded connection got {:?} instead of being closed",
            String::from_utf8_lossy(&buffer[..read])
        ),
        Err(error) => {
            panic!("the forwarded connection was not closed within {PATIENCE:?}: {error}")
        }
    }

    // ssh reports the refusal before it closes the local connection.
    let _ = ssh.0.kill();
    let _ = ssh.0.wait();
    let mut stderr = String::new();
    ssh.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("administratively prohibited"),
        "ssh's stderr: {stderr:?}\nthe server's log:\n{}",
        server.log()
    );
    server.assert_still_serving();
}

#[test]
fn a_wrong_join_code_is_refused_and_the_right_one_lets_the_student_in() {
    if !installed(
        &["ssh"],
        "a_wrong_join_code_is_refused_and_the_right_one_lets_the_student_in",
    ) {
        return;
    }
    let secrets = TempDir::new().unwrap();
    let code = secrets.path().join("join-code");
    std::fs::write(&code, "sunflower\n").unwrap();
    let mut server = Server::start(&["--password-file", code.to_str().unwrap()]);

    let wrong = Login::Password(askpass(secrets.path(), "wrong", "sunshine"));
    assert_signin_refused(&mut server, &wrong);

    let right = Login::Password(askpass(secrets.path(), "right", "sunflower"));
    let mut student = server.student("student", &right);
    wait_for_the_picker(&mut student);
    quit_from_the_picker(&mut student);
}

#[test]
fn an_unknown_key_is_refused_and_a_listed_one_lets_the_student_in() {
    if !installed(
        &["ssh", "ssh-keygen"],
        "an_unknown_key_is_refused_and_a_listed_one_lets_the_student_in",
    ) {
        return;
    }
    let keys = TempDir::new().unwrap();
    let listed = keys.path().join("listed");
    let stranger = keys.path().join("stranger");
    new_key(&listed);
    new_key(&stranger);
    let authorized = keys.path().join("authorized_keys");
    std::fs::copy(listed.with_extension("pub"), &authorized).unwrap();
    let mut server = Server::start(&["--authorized-keys", authorized.to_str().unwrap()]);

    assert_signin_refused(&mut server, &Login::Key(stranger));

    let mut student = server.student("student", &Login::Key(listed));
    wait_for_the_picker(&mut student);
    quit_from_the_picker(&mut student);
}
