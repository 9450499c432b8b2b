//! `attn-tutor serve` on 127.0.0.1 for the classroom tests, and students connecting to it with
//! the real OpenSSH client (`ssh -tt` in a pseudo-terminal, read back through a vt100 screen).

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Instant;

use super::pty::{PATIENCE, POLL, PtyChild, top_line};
use portable_pty::CommandBuilder;
use tempfile::TempDir;

/// The picker's heading.
pub const PICKER: &str = "choose a lesson";

/// The first built-in lesson, the one Enter opens from the picker.
pub const FIRST_LESSON: &str = "cat-sleeps";

/// Whether `tools` are installed; says so and why the test is skipped when one is not.
pub fn installed(tools: &[&str], test: &str) -> bool {
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
            eprintln!("{test}:");
            super::missing_tool(tool, "openssh-client");
            return false;
        }
    }
    true
}

/// A child process killed (if still running) when the guard is dropped.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// What a finished command printed.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` with stdin from /dev/null to its end, within `PATIENCE`.
#[track_caller]
pub fn finish(mut command: Command) -> Finished {
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

/// `attn-tutor serve ARGS` run to its end (within `PATIENCE`) with at most 2 GiB of memory,
/// so that a server reading a device without end fails rather than taking the machine's
/// memory.
#[track_caller]
pub fn serve_bounded<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Finished {
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -v 2097152 && exec \"$0\" serve \"$@\""])
        .arg(assert_cmd::cargo::cargo_bin!("attn-tutor"))
        .args(args);
    finish(command)
}

/// How a student signs in.
pub enum Login {
    /// No password, no key (the server is `--open`).
    Open,
    /// The join code, typed by this askpass program.
    Password(PathBuf),
    /// This private key, and no other.
    Key(PathBuf),
}

/// `attn-tutor serve` on 127.0.0.1 with a free port and a new host key in a temporary folder;
/// killed when dropped.
pub struct Server {
    pub process: Process,
    pub port: u16,
    /// Its log (standard error) so far.
    pub log: Arc<Mutex<String>>,
    pub dir: TempDir,
}

/// How the server runs: in the background, or with the presenter's tutor in a terminal.
pub enum Process {
    Piped(KillOnDrop),
    Presenting(PtyChild),
}

impl Server {
    /// Starts `attn-tutor serve --open --present` (and `options`) in a pseudo-terminal, and
    /// waits for it to say what students type to join and for the presenter's tutor to take
    /// the terminal.
    pub fn present(options: &[&str]) -> Server {
        let dir = TempDir::new().unwrap();
        let log_file = dir.path().join("serve.log");
        let mut serve = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
        serve.args(["serve", "--open", "--present", "--listen", "127.0.0.1:0"]);
        serve.arg("--host-key");
        serve.arg(dir.path().join("host_key"));
        serve.arg("--log");
        serve.arg(&log_file);
        serve.args(options);
        serve.env("TERM", "xterm-256color");
        let mut presenter = PtyChild::spawn(serve);
        let shown_log = log_file.clone();
        presenter.explain_failures_with(move || {
            format!(
                "the server's log:\n{}",
                std::fs::read_to_string(&shown_log).unwrap_or_default()
            )
        });
        // The join line may wrap before the ssh command; the port follows it.
        let join = "ssh -p ";
        let text = presenter.wait_for(
            "the presenter's tutor",
            |text| text.contains(join),
            PATIENCE,
        );
        let port = text
            .split(join)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the join line names no port:\n{text}"));
        // The banner printed before the tutor names the port too: keys pressed before the
        // tutor has the terminal would be read in its cooked mode (Enter as a line feed).
        // The tutor sets raw mode before it takes the alternate screen.
        presenter.wait_until(
            "the presenter's tutor on the alternate screen",
            PATIENCE,
            |screen| screen.alternate_screen().then_some(()),
        );
        Server {
            process: Process::Presenting(presenter),
            port,
            log: Arc::new(Mutex::new(String::new())),
            dir,
        }
    }

    /// The presenter's terminal.
    pub fn presenter(&mut self) -> &mut PtyChild {
        match &mut self.process {
            Process::Presenting(presenter) => presenter,
            Process::Piped(_) => panic!("this server has no presenter"),
        }
    }

    /// Starts the server with `access` (`--open`, `--password-file FILE` or
    /// `--authorized-keys FILE`) and waits for it to say where it listens.
    pub fn start(access: &[&str]) -> Server {
        Server::launch(access, None)
    }

    /// As [`Server::start`], with at most `open_files` file descriptors (`ulimit -n`).
    pub fn start_with_open_files(open_files: u32, access: &[&str]) -> Server {
        Server::launch(access, Some(open_files))
    }

    fn launch(access: &[&str], open_files: Option<u32>) -> Server {
        let dir = TempDir::new().unwrap();
        let host_key = dir.path().join("host_key");
        let mut serve = match open_files {
            Some(limit) => {
                let mut shell = Command::new("sh");
                shell
                    .arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
                    .arg(assert_cmd::cargo::cargo_bin!("attn-tutor"));
                shell
            }
            None => Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor")),
        };
        serve.arg("serve");
        // A class of browsers only has no SSH address or host key.
        if !access.contains(&"--no-ssh") {
            serve
                .args(["--listen", "127.0.0.1:0", "--host-key"])
                .arg(&host_key);
        }
        let mut process = KillOnDrop(
            serve
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
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the banner's first line names no port: {first:?}"));
        Server {
            process: Process::Piped(process),
            port,
            log,
            dir,
        }
    }

    pub fn log(&self) -> String {
        if let Process::Presenting(_) = self.process {
            return std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default();
        }
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until the server's log satisfies `ready` and returns it; the server may close a
    /// connection a moment before it logs why.
    #[track_caller]
    pub fn wait_for_log(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let log = self.log();
            if ready(&log) {
                return log;
            }
            assert!(
                Instant::now() < deadline,
                "waited {PATIENCE:?} for {what} in the server's log:\n{log}"
            );
            thread::sleep(POLL);
        }
    }

    /// The browser seat's page (the server was started with `--web 127.0.0.1:0`), as its log
    /// names it.
    pub fn page(&self) -> String {
        let log = self.wait_for_log("the browser seat's page", |log| {
            log.contains("browsers open page=")
        });
        log.split("browsers open page=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("the log names no page:\n{log}"))
            .to_string()
    }

    /// The port of the browser seat's page.
    pub fn page_port(&self) -> u16 {
        let page = self.page();
        page.trim_end_matches('/')
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the page's address names no port: {page}"))
    }

    /// Fails the test if the server has stopped (one student's refusal must not end the class).
    pub fn assert_still_serving(&mut self) {
        let status = match &mut self.process {
            Process::Piped(process) => process.0.try_wait().unwrap(),
            Process::Presenting(_) => None,
        };
        assert!(
            status.is_none(),
            "the server stopped ({status:?}); its log:\n{}",
            self.log()
        );
    }

    /// The arguments of `ssh OPTIONS USER@127.0.0.1 COMMAND` for this server.
    pub fn ssh_args(
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
    pub fn ssh_env(login: &Login) -> Vec<(&'static str, Option<String>)> {
        let mut env = vec![("SSH_AUTH_SOCK", None)];
        if let Login::Password(askpass) = login {
            env.push(("SSH_ASKPASS", Some(askpass.display().to_string())));
            env.push(("SSH_ASKPASS_REQUIRE", Some("force".to_string())));
        }
        env
    }

    /// `ssh` without a terminal, to run with [`finish`] or spawn.
    pub fn ssh(&self, user: &str, login: &Login, options: &[&str], command: &[&str]) -> Command {
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
    pub fn student(&self, user: &str, login: &Login) -> PtyChild {
        self.student_from("127.0.0.1", user, login)
    }

    /// A student whose connection comes from `address` (another loopback address, say).
    pub fn student_from(&self, address: &str, user: &str, login: &Login) -> PtyChild {
        self.student_with_term(address, user, login, "xterm-256color")
    }

    /// A student from `address` whose terminal says it is `term` (ssh sends it to the server).
    pub fn student_with_term(
        &self,
        address: &str,
        user: &str,
        login: &Login,
        term: &str,
    ) -> PtyChild {
        let mut ssh = CommandBuilder::new("ssh");
        ssh.args(self.ssh_args(
            user,
            login,
            &["-tt", "-o", "LogLevel=ERROR", "-b", address],
            &[],
        ));
        ssh.env("TERM", term);
        for (name, value) in Server::ssh_env(login) {
            match value {
                Some(value) => ssh.env(name, value),
                None => ssh.env_remove(name),
            }
        }
        let mut student = PtyChild::spawn(ssh);
        let log = Arc::clone(&self.log);
        let log_file = matches!(self.process, Process::Presenting(_))
            .then(|| self.dir.path().join("serve.log"));
        student.explain_failures_with(move || {
            let log = match &log_file {
                Some(file) => std::fs::read_to_string(file).unwrap_or_default(),
                None => log.lock().unwrap_or_else(PoisonError::into_inner).clone(),
            };
            format!("the server's log:\n{log}")
        });
        student
    }
}

/// Waits for the lesson picker, drawn on the alternate screen.
#[track_caller]
pub fn wait_for_the_picker(student: &mut PtyChild) -> String {
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
pub fn quit_from_the_picker(student: &mut PtyChild) {
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
pub fn new_key(path: &Path) {
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
pub fn askpass(dir: &Path, name: &str, code: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho '{code}'\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
    path
}

/// Waits for the top line of `who`'s screen to contain `heading`.
#[track_caller]
pub fn wait_for_top(who: &mut PtyChild, what: &str, heading: &str) -> String {
    who.wait_for(what, |text| top_line(text).contains(heading), PATIENCE)
}

/// Waits for the status line of `who`'s screen (a long message takes two lines) to contain
/// `words`.
#[track_caller]
pub fn wait_for_status(who: &mut PtyChild, what: &str, words: &str) -> String {
    who.wait_for(what, |text| last_lines(text).contains(words), PATIENCE)
}

/// The last two lines with anything on them, words joined by single spaces.
pub fn last_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let keep = lines.len().saturating_sub(2);
    lines.drain(..keep);
    lines
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A class with a presenter and two students connected, everyone on the lesson picker.
pub fn class_of_two(options: &[&str]) -> (Server, PtyChild, PtyChild) {
    let mut server = Server::present(options);
    let mut first = server.student("first", &Login::Open);
    let mut second = server.student("second", &Login::Open);
    wait_for_the_picker(&mut first);
    wait_for_the_picker(&mut second);
    wait_for_status(
        server.presenter(),
        "the presenter's count of students",
        "2 students · 2 following",
    );
    (server, first, second)
}

/// A TCP connection to the server from `address` that never says anything.
pub fn silent_connection(address: &str, port: u16) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(format!("{address}:0").parse().unwrap())
            .unwrap();
        socket
            .connect(([127, 0, 0, 1], port).into())
            .await
            .expect("the server accepts the connection")
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// Whether the server closes `connection` within `PATIENCE` (after its version line, which
/// it sends first).
pub fn closed_by_the_server(mut connection: TcpStream) -> bool {
    connection.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut buffer = [0; 1024];
    loop {
        match connection.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) if error.kind() == ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// How many events of `log` contain `what`: a line each, and those of connections not signed
/// in that a flood kept from their own lines, counted in the server's summaries ("812 more not
/// logged one by one: evicted: …").
pub fn count_events(log: &str, what: &str) -> usize {
    const HELD: &str = " more not logged one by one: ";
    log.lines()
        .filter(|line| line.contains(what))
        .map(|line| match line.split_once(HELD) {
            Some((before, _)) => before
                .rsplit(' ')
                .next()
                .and_then(|count| count.parse().ok())
                .unwrap_or_else(|| panic!("a summary without its count: {line}")),
            None => 1,
        })
        .sum()
}
