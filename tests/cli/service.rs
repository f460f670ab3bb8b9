//! The resident service (`hookrt hook --service`, `hookrt service`;
//! docs/service.md): started on demand by the first event, one for racing
//! clients, the answer the process per event gives, the journal and its
//! trail kept; a planted or foreign socket or folder refused with the gate
//! failing closed, a peer of another uid closed unread, a service that stops
//! answering failing the gate at the deadline, an idle service exiting.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{claude_fixture, copy_tree, repo, with_stdin};
use crate::{hookrt, text};

/// A user's private folders for services, and the services started in
/// them, stopped at the end.
pub(crate) struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub(crate) fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["run", "state"] {
            fs::create_dir(dir.path().join(sub)).unwrap();
            fs::set_permissions(dir.path().join(sub), fs::Permissions::from_mode(0o700)).unwrap();
        }
        Home { dir }
    }

    /// The user's folder.
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// `hookrt ARGS` as this user.
    pub(crate) fn hookrt(&self, args: &[&str]) -> Command {
        let mut c = hookrt(args);
        c.env_remove("HOOKRT_NO_SERVICE")
            .env("XDG_RUNTIME_DIR", self.run_dir())
            .env("HOOKRT_STATE_DIR", self.dir.path().join("state"))
            .current_dir(self.dir.path());
        c
    }

    /// The example agent's `PreToolUse` hook through the service, running
    /// `command`.
    fn gate(&self, command: &str, extra: &[&str]) -> Output {
        self.gate_input(&pre_tool_use(command, self.dir.path()), extra)
    }

    /// The gate with `input` on stdin, run to its end.
    pub(crate) fn gate_input(&self, input: &str, extra: &[&str]) -> Output {
        let mut args = vec!["hook", "--agent", "claude-code", "--service", agent()];
        args.extend(extra);
        with_stdin(self.hookrt(&args), input)
    }

    /// `hookrt service status`'s lines.
    pub(crate) fn status(&self) -> (bool, String) {
        let out = self
            .hookrt(&["service", "status", agent()])
            .output()
            .unwrap();
        (out.status.success(), text(&out.stdout))
    }

    /// What `service status` says of `field` (socket, journal, log).
    pub(crate) fn path(&self, field: &str) -> PathBuf {
        let (_, said) = self.status();
        let line = said.lines().find(|l| l.starts_with(field)).unwrap();
        PathBuf::from(line[field.len()..].trim())
    }

    /// Waits for a service started by hand to listen.
    fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.status().0 {
            assert!(Instant::now() < deadline, "the service never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The running service's pid.
    fn pid(&self) -> i32 {
        let (running, said) = self.status();
        assert!(running, "{said}");
        let at = said.find("(pid ").unwrap() + 5;
        said[at..].split(')').next().unwrap().parse().unwrap()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let copy = self.dir.path().join("agent");
        for dir in [agent(), copy.to_str().unwrap()] {
            let _ = self.hookrt(&["service", "stop", dir]).output();
        }
    }
}

pub(crate) fn agent() -> &'static str {
    static AGENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    AGENT.get_or_init(|| {
        repo()
            .join("example-hooks/agent")
            .to_str()
            .unwrap()
            .to_owned()
    })
}

/// Claude Code's `PreToolUse` of a Bash `command`, in `cwd`.
pub(crate) fn pre_tool_use(command: &str, cwd: &Path) -> String {
    let mut input: Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
    input["tool_input"]["command"] = command.into();
    input["cwd"] = cwd.to_str().unwrap().into();
    input.to_string()
}

pub(crate) fn decision(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    answer["hookSpecificOutput"]["permissionDecision"].clone()
}

#[test]
fn the_first_event_starts_the_service_which_answers_as_a_process_per_event_and_keeps_the_trail() {
    let home = Home::new();
    assert!(!home.status().0, "nothing runs before the first event");
    // A log past its bound from earlier starts is set aside at this one.
    let log = home.path("log");
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    fs::set_permissions(log.parent().unwrap(), fs::Permissions::from_mode(0o700)).unwrap();
    fs::write(&log, "x".repeat(5 << 20)).unwrap();
    let denied = home.gate("rm -rf build/", &[]);
    assert_eq!(
        fs::metadata(log.with_extension("log.1")).unwrap().len(),
        5 << 20
    );
    assert!(fs::metadata(&log).unwrap().len() < 1 << 20);
    assert_eq!(decision(&denied), "deny");
    // The process per event gives the same answer.
    let one_shot = with_stdin(
        home.hookrt(&["hook", "--agent", "claude-code", "--no-service", agent()]),
        &pre_tool_use("rm -rf build/", home.dir.path()),
    );
    assert_eq!(text(&denied.stdout), text(&one_shot.stdout));
    let allowed = home.gate("npm test", &[]);
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stderr));
    let pid = home.pid();
    // The journal the service keeps holds both events in its trail.
    let journal = home.path("journal");
    let verify = home
        .hookrt(&["journal", "verify", journal.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stderr));
    assert!(
        text(&verify.stdout).contains("every one of its 2 event(s) is in it"),
        "{}",
        text(&verify.stdout)
    );
    let mode = fs::metadata(journal.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o700,
        "the journal's folder is the user's alone"
    );
    let socket = home.path("socket");
    let mode = fs::symlink_metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Stopped, it is gone with its socket; the next event starts another.
    let stop = home.hookrt(&["service", "stop", agent()]).output().unwrap();
    assert!(
        text(&stop.stdout).contains(&format!("stopped (pid {pid})")),
        "{}",
        text(&stop.stdout)
    );
    assert!(!home.status().0);
    assert!(!socket.exists());
    assert_eq!(decision(&home.gate("rm -rf /", &[])), "deny");
    assert_ne!(home.pid(), pid);
}

#[test]
fn clients_racing_on_a_fresh_place_start_one_service_and_a_hundred_at_once_are_all_answered() {
    let home = Home::new();
    let answers = |n: usize| -> Vec<Output> {
        std::thread::scope(|s| {
            let running: Vec<_> = (0..n)
                .map(|_| s.spawn(|| home.gate("rm -rf build/", &["--deadline-ms", "30000"])))
                .collect();
            running.into_iter().map(|t| t.join().unwrap()).collect()
        })
    };
    for out in answers(8) {
        assert_eq!(decision(&out), "deny");
    }
    let log = fs::read_to_string(home.path("log")).unwrap();
    assert_eq!(log.matches("listening on unix:").count(), 1, "{log}");
    for out in answers(100) {
        assert_eq!(decision(&out), "deny");
    }
}

#[test]
fn a_planted_socket_or_folder_is_refused_and_the_gate_fails_closed() {
    let refused = |home: &Home, says: &str| {
        let out = home.gate("npm test", &[]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains(says), "{says:?} in {err}");
        assert!(
            err.contains("blocked because hookrt could not decide on it"),
            "{err}"
        );
    };
    // The run folder a link to another folder.
    let home = Home::new();
    let elsewhere = home.dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, home.run_dir().join("hookrt")).unwrap();
    refused(&home, "cannot be opened as a folder of its own");
    // One others may write to.
    let home = Home::new();
    fs::create_dir(home.run_dir().join("hookrt")).unwrap();
    fs::set_permissions(
        home.run_dir().join("hookrt"),
        fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    refused(&home, "is writable by its group or others (mode 777)");
    // A file where the socket goes.
    let home = Home::new();
    let socket = home.path("socket");
    fs::create_dir_all(socket.parent().unwrap()).unwrap();
    fs::set_permissions(socket.parent().unwrap(), fs::Permissions::from_mode(0o700)).unwrap();
    fs::write(&socket, "").unwrap();
    refused(&home, "is not a socket (a file): remove it");
    // Another user's socket (only root can make one here).
    if unsafe { libc::geteuid() } == 0 {
        fs::remove_file(&socket).unwrap();
        let theirs = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        std::os::unix::fs::lchown(&socket, Some(65534), Some(65534)).unwrap();
        refused(&home, "belongs to uid 65534, not to you");
        drop(theirs);
    }
}

#[test]
fn a_peer_of_another_uid_is_closed_unread_and_a_body_past_the_limit_refused() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("needs root to connect as another uid: skipped");
        return;
    }
    let home = Home::new();
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
    let socket = home.path("socket");
    // Let uid 65534 reach the socket, as a careless chmod would.
    for dir in [home.dir.path(), &home.run_dir(), socket.parent().unwrap()] {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o711)).unwrap();
    }
    fs::set_permissions(&socket, fs::Permissions::from_mode(0o666)).unwrap();
    let body = pre_tool_use("npm test", home.dir.path());
    let script = format!(
        "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect({socket:?})\nb={body:?}.encode()\n\
         try:\n  s.sendall(b'POST /v1/claude-code HTTP/1.1\\r\\nHost: localhost\\r\\nContent-Length: %d\\r\\n\\r\\n' % len(b) + b)\n  sys.stdout.write(repr(s.recv(100)))\n\
         except OSError as e: sys.stdout.write('closed: %s' % e)\n",
        socket = socket.to_str().unwrap()
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .uid(65534)
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(
        said == "b''" || said.starts_with("closed: "),
        "{said} {}",
        text(&out.stderr)
    );
    let log = fs::read_to_string(home.path("log")).unwrap();
    assert!(log.contains("refused a connection from uid 65534"), "{log}");
    // This user's client announcing more than the service takes: refused
    // before a byte of it is read, and the service goes on.
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    use std::io::{Read, Write};
    let head = format!(
        "POST /v1/claude-code HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        17 << 20
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
}

#[test]
fn a_service_that_stops_answering_fails_the_gate_closed_at_the_deadline() {
    let home = Home::new();
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
    let pid = home.pid();
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let started = Instant::now();
    let out = home.gate("npm test", &["--deadline-ms", "1500"]);
    let took = started.elapsed();
    unsafe { libc::kill(pid, libc::SIGCONT) };
    // Blocked (Claude Code's exit 2), by the deadline's watchdog or the
    // read's timeout, whichever is first.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(
        text(&out.stderr).contains("hookrt hook --agent claude-code: "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn an_idle_service_exits_and_the_next_event_starts_it_again() {
    let home = Home::new();
    let mut by_hand = home
        .hookrt(&["service", "run", agent(), "--idle-exit", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    home.wait_listening();
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
    // A second by hand while it runs is refused.
    let second = home.hookrt(&["service", "run", agent()]).output().unwrap();
    assert!(!second.status.success());
    assert!(
        text(&second.stderr).contains("runs already"),
        "{}",
        text(&second.stderr)
    );
    let status = by_hand.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(!home.status().0);
    assert!(!home.path("socket").exists());
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
}

#[test]
fn a_changed_folder_is_loaded_before_the_next_event_and_one_that_does_not_load_fails_the_gate() {
    let home = Home::new();
    let agent = home.dir.path().join("agent");
    copy_tree(&repo().join("example-hooks/agent"), &agent);
    let built = home
        .hookrt(&["build", agent.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    let gate = |command: &str| {
        with_stdin(
            home.hookrt(&[
                "hook",
                "--agent",
                "claude-code",
                "--service",
                agent.to_str().unwrap(),
            ]),
            &pre_tool_use(command, home.dir.path()),
        )
    };
    assert_eq!(decision(&gate("rm -rf build/")), "deny");
    // The policy hook removed: the next event is decided without it.
    let config = fs::read_to_string(agent.join("hookrt.toml")).unwrap();
    let (before, rest) = config.split_once("[hooks.policy]").unwrap();
    let after = &rest[rest.find("\n[hooks.").unwrap()..];
    fs::remove_dir_all(agent.join("hooks/policy")).unwrap();
    fs::write(agent.join("hookrt.toml"), format!("{before}{after}")).unwrap();
    let allowed = gate("rm -rf build/");
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stderr));
    assert!(
        !text(&allowed.stdout).contains("deny"),
        "{}",
        text(&allowed.stdout)
    );
    // A folder that no longer loads: the gate fails closed (a deny in
    // Claude Code's words), naming why.
    fs::write(agent.join("hookrt.toml"), "[hooks.x\n").unwrap();
    let broken = gate("npm test");
    assert_eq!(decision(&broken), "deny");
    assert!(
        text(&broken.stdout).contains("changed and does not load")
            && text(&broken.stdout).contains("hookrt.toml: invalid configuration"),
        "{}",
        text(&broken.stdout)
    );
    // Fixed, it answers again; an unchanged folder is not loaded again.
    fs::write(agent.join("hookrt.toml"), format!("{before}{after}")).unwrap();
    for _ in 0..3 {
        let out = gate("rm -rf build/");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let (_, said) = {
        let out = home
            .hookrt(&["service", "logs", agent.to_str().unwrap(), "-n", "1000"])
            .output()
            .unwrap();
        (out.status, text(&out.stdout))
    };
    assert_eq!(
        said.matches("the agent folder changed").count(),
        3,
        "{said}"
    );
    let out = home
        .hookrt(&["service", "stop", agent.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_service_whose_binary_is_replaced_retires_and_the_next_event_starts_the_new_ones() {
    let home = Home::new();
    // The service runs a copy of the binary, which an upgrade replaces.
    let bin = home.root().join("hookrt");
    fs::copy(crate::common::hookrt_bin(), &bin).unwrap();
    let like = home.hookrt(&[]);
    let envs = like.get_envs().filter_map(|(k, v)| Some((k, v?)));
    let mut service = spawn_copied(
        Command::new(&bin)
            .args(["service", "run", agent()])
            .envs(envs)
            .current_dir(home.root())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    home.wait_listening();
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
    let next = home.root().join("hookrt.next");
    fs::copy(crate::common::hookrt_bin(), &next).unwrap();
    fs::rename(&next, &bin).unwrap();
    // It retires within its check's half second (and its drain).
    let deadline = Instant::now() + Duration::from_secs(30);
    while service.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the replaced service still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!home.path("socket").exists());
    assert_eq!(decision(&home.gate("rm -rf build/", &[])), "deny");
}

/// Spawns a binary the test has just copied: another test thread's fork
/// may hold the copy's write descriptor for an instant (ETXTBSY), so the
/// spawn is tried again.
fn spawn_copied(command: &mut Command) -> std::process::Child {
    for _ in 0..200 {
        match command.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            spawned => return spawned.unwrap(),
        }
    }
    panic!("the copied binary stayed busy for 2 s");
}

/// `hookrt-hook`, the thin client, built beside `hookrt`.
fn thin_client() -> PathBuf {
    crate::common::hookrt_bin().with_file_name("hookrt-hook")
}

#[test]
fn the_thin_client_reaches_the_same_service_and_answers_the_same() {
    let home = Home::new();
    let through_hookrt = home.gate("rm -rf build/", &[]);
    let pid = home.pid();
    let like = home.hookrt(&[]);
    let mut thin = Command::new(thin_client());
    thin.args(["--agent", "claude-code", agent()])
        .envs(like.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(home.root());
    let through_thin = with_stdin(thin, &pre_tool_use("rm -rf build/", home.root()));
    assert_eq!(decision(&through_thin), "deny");
    assert_eq!(text(&through_thin.stdout), text(&through_hookrt.stdout));
    assert_eq!(home.pid(), pid, "the same service (same key) answered both");
    // Without a `hookrt` beside it, it cannot start a service: the gate
    // fails closed, saying so.
    home.hookrt(&["service", "stop", agent()]).output().unwrap();
    let alone = home.root().join("alone");
    fs::create_dir(&alone).unwrap();
    fs::copy(thin_client(), alone.join("hookrt-hook")).unwrap();
    let mut thin = Command::new(alone.join("hookrt-hook"));
    thin.args(["--agent", "claude-code", agent()])
        .envs(like.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(home.root());
    thin.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_copied(&mut thin);
    let input = pre_tool_use("npm test", home.root());
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("starts the service with the `hookrt` beside it"),
        "{}",
        text(&out.stderr)
    );
}
