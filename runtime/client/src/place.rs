//! The resident service's place, and how a command hook reaches it
//! (`hookrt-hook`, `hookrt hook --service`, `hookrt service`;
//! docs/service.md, ADR 0012).
//!
//! One service per user and *loading*: the agent folder, the project folder
//! and the flags that decide how the folder loads (lock, cache, prebuilt),
//! hashed into its key. Its socket, start lock and pid file live in a
//! private run folder (`$XDG_RUNTIME_DIR/hookrt`, else `$TMPDIR/hookrt-<uid>`),
//! its journal and log in `$XDG_STATE_HOME/hookrt/services/<key>` (else
//! `~/.local/state/hookrt/...`; `$HOOKRT_STATE_DIR` overrides both). Every
//! folder is checked before use: a real folder (no symlink), this user's,
//! writable by nobody else (0700 when made); the socket a socket of this
//! user's. The service checks its peers' uid too.
//!
//! A client connects; when nothing listens, it takes the start lock
//! (`flock`), connects again (another client may have started it), removes
//! a stale socket, starts `hookrt service run` detached (its own session,
//! output to its log) and waits for it to listen, all within its deadline:
//! two clients racing start one service.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// What decides how a folder loads, besides the folder: the global flags
/// a service is keyed by (and started with).
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// `--project-dir` (else the working directory).
    pub project: Option<PathBuf>,
    /// `--lock FILE`.
    pub lock: Option<PathBuf>,
    /// `--require-lock`.
    pub require_lock: bool,
    /// `--prebuilt`.
    pub prebuilt: bool,
    /// `--cache-dir` (or `$HOOKRT_CACHE_DIR`).
    pub cache_dir: Option<PathBuf>,
}

/// The size past which a service's log is set aside at its next start.
const MAX_LOG_BYTES: u64 = 4 << 20;

/// Where one service lives.
#[derive(Debug, Clone)]
pub struct Place {
    /// The agent folder, canonical.
    pub dir: PathBuf,
    /// What it is keyed by, as `hookrt service run`'s global flags.
    pub flags: Vec<OsString>,
    /// The private run folder.
    pub run: PathBuf,
    /// Its socket.
    pub socket: PathBuf,
    /// The start lock.
    pub lock: PathBuf,
    /// The running service's pid.
    pub pid: PathBuf,
    /// Its state folder: journal and log.
    pub state: PathBuf,
    /// Its journal (with the trail).
    pub journal: PathBuf,
    /// Its log.
    pub log: PathBuf,
}

impl Place {
    /// The place of the service loading `dir` as `identity` asks.
    pub fn of(dir: &Path, identity: &Identity) -> Result<Place, String> {
        let canonical = |p: &Path, what: &str| {
            p.canonicalize()
                .map_err(|e| format!("the {what} {} cannot be used: {e}", p.display()))
        };
        let dir = canonical(dir, "agent folder")?;
        let project = match &identity.project {
            Some(p) => canonical(p, "project folder")?,
            None => canonical(
                &std::env::current_dir()
                    .map_err(|e| format!("the working directory cannot be read: {e}"))?,
                "project folder",
            )?,
        };
        let mut flags: Vec<OsString> = vec!["--project-dir".into(), project.into()];
        if let Some(lock) = &identity.lock {
            flags.extend(["--lock".into(), canonical(lock, "lock")?.into()]);
        }
        if let Some(cache) = &identity.cache_dir {
            flags.extend(["--cache-dir".into(), cache.clone().into()]);
        }
        if identity.require_lock {
            flags.push("--require-lock".into());
        }
        if identity.prebuilt {
            flags.push("--prebuilt".into());
        }
        let mut hash = Sha256::new();
        hash.update(dir.as_os_str().as_encoded_bytes());
        for f in &flags {
            hash.update([0]);
            hash.update(f.as_encoded_bytes());
        }
        let key = hex::encode(&hash.finalize()[..10]);
        let run = run_root()?;
        let state = state_root()?.join("services").join(&key);
        Ok(Place {
            dir,
            flags,
            socket: run.join(format!("{key}.sock")),
            lock: run.join(format!("{key}.lock")),
            pid: run.join(format!("{key}.pid")),
            run,
            journal: state.join("journal.db"),
            log: state.join("service.log"),
            state,
        })
    }

    /// Makes (or checks) the run and state folders: real folders of this
    /// user's, 0700 when made, writable by nobody else
    /// (`hookrt::hooks::create_private_dir`, as the build cache's).
    pub fn prepare(&self) -> Result<(), String> {
        for dir in [&self.run, &self.state] {
            hookrt::hooks::create_private_dir(dir).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// A connection to the running service, or `None` when none listens
    /// (no socket, or a stale one). A socket that is not this user's is
    /// refused.
    pub fn connect(&self) -> Result<Option<UnixStream>, String> {
        let meta = match std::fs::symlink_metadata(&self.socket) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.socket.display())),
        };
        if !meta.file_type().is_socket() {
            return Err(format!(
                "{} is not a socket (a {}): remove it",
                self.socket.display(),
                kind(&meta)
            ));
        }
        if meta.uid() != euid() {
            return Err(format!(
                "{} belongs to uid {}, not to you (uid {}): refused",
                self.socket.display(),
                meta.uid(),
                euid()
            ));
        }
        match UnixStream::connect(&self.socket) {
            Ok(s) => Ok(Some(s)),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(format!("cannot connect to {}: {e}", self.socket.display())),
        }
    }

    /// A connection to the service, started first when none listens, by
    /// `deadline`.
    pub fn connect_or_start(&self, deadline: Instant) -> Result<UnixStream, String> {
        // The run folder only: the state folder is the service's.
        hookrt::hooks::create_private_dir(&self.run).map_err(|e| e.to_string())?;
        if let Some(s) = self.connect()? {
            return Ok(s);
        }
        let _lock = self.start_lock(deadline)?;
        // Another client may have started it while we waited.
        if let Some(s) = self.connect()? {
            return Ok(s);
        }
        self.remove_stale()?;
        self.prepare()?;
        let mut child = self.spawn()?;
        loop {
            if let Some(s) = self.connect()? {
                return Ok(s);
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "the service for {} exited as it started ({status}); its log, {}, says:\n{}",
                    self.dir.display(),
                    self.log.display(),
                    tail(&self.log, 20)
                ));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the service for {} did not listen in time (its log: {})",
                    self.dir.display(),
                    self.log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Holds the start lock until dropped, waiting for it by `deadline`.
    pub fn start_lock(&self, deadline: Instant) -> Result<File, String> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.lock)
            .map_err(|e| format!("cannot open the start lock {}: {e}", self.lock.display()))?;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            let taken = unsafe {
                libc::flock(
                    std::os::fd::AsRawFd::as_raw_fd(&file),
                    libc::LOCK_EX | libc::LOCK_NB,
                )
            } == 0;
            if taken {
                return Ok(file);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "another client held the start lock {} past the deadline",
                    self.lock.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Removes a socket nobody listens on (the start lock held).
    pub fn remove_stale(&self) -> Result<(), String> {
        match std::fs::remove_file(&self.socket) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!(
                "cannot remove the stale socket {}: {e}",
                self.socket.display()
            )),
        }
    }

    /// Starts `hookrt service run` for this place, detached: a session of
    /// its own, no terminal, its output appended to its log.
    fn spawn(&self) -> Result<std::process::Child, String> {
        let exe = hookrt_exe()?;
        // Each start appends; past its bound the log starts again, the
        // previous one kept beside it.
        if std::fs::symlink_metadata(&self.log).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            let _ = std::fs::rename(&self.log, self.log.with_extension("log.1"));
        }
        let log = File::options()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.log)
            .map_err(|e| format!("cannot open the service's log {}: {e}", self.log.display()))?;
        let err = log
            .try_clone()
            .map_err(|e| format!("cannot open the service's log: {e}"))?;
        let mut command = Command::new(exe);
        command
            .args(&self.flags)
            .args(["service", "run"])
            .arg(&self.dir)
            .arg("--started")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        // SAFETY: setsid is async-signal-safe; the child leaves the agent's
        // session and process group, so the agent's signals to its hooks
        // do not reach the service.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        command
            .spawn()
            .map_err(|e| format!("cannot start the service: {e}"))
    }
}

/// The `hookrt` that runs the service: this process's binary, or the
/// `hookrt` beside it when this is the thin client (`hookrt-hook`).
pub fn hookrt_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot tell which hookrt runs: {e}"))?;
    if exe.file_stem().is_some_and(|n| n == "hookrt") {
        return Ok(exe);
    }
    let beside = exe.with_file_name("hookrt");
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(format!(
            "{} starts the service with the `hookrt` beside it, and {} is not there",
            exe.display(),
            beside.display()
        ))
    }
}

/// This process's effective uid.
pub fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The run folder: `$XDG_RUNTIME_DIR/hookrt`, else `$TMPDIR/hookrt-<uid>`.
fn run_root() -> Result<PathBuf, String> {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(p) if p.is_absolute() => Ok(p.join("hookrt")),
        _ => Ok(std::env::temp_dir().join(format!("hookrt-{}", euid()))),
    }
}

/// The state root: `$HOOKRT_STATE_DIR`, else `$XDG_STATE_HOME/hookrt`,
/// else `~/.local/state/hookrt` (a journal is no cache).
fn state_root() -> Result<PathBuf, String> {
    let var = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(p) = var("HOOKRT_STATE_DIR") {
        return Ok(p);
    }
    if let Some(p) = var("XDG_STATE_HOME") {
        return Ok(p.join("hookrt"));
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .ok_or("neither $XDG_STATE_HOME nor $HOME names a folder for the service's journal")?;
    Ok(home.join(".local/state/hookrt"))
}

/// What a file is, in words.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        "symbolic link"
    } else if t.is_dir() {
        "folder"
    } else if t.is_socket() {
        "socket"
    } else if t.is_file() {
        "file"
    } else {
        "special file"
    }
}

/// The last `lines` lines of the file at `path` (a log).
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
