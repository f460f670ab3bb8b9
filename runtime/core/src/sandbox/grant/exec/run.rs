//! One run of an allowed program: spawned without a shell, in the project
//! folder, with only the named environment, in its own process group under
//! the kernel sandbox; its output read up to the cap, its processes counted
//! and the whole group killed at the time limit or a cap.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::confine;
use super::table::Table;

/// How often a run's processes are counted and its time checked.
const POLL: Duration = Duration::from_millis(5);

/// What one run gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ran {
    /// The exit code; `None` when killed.
    pub(crate) status: Option<i32>,
    /// Why hookrt killed it: the time limit, the process or output cap.
    pub(crate) killed: Option<&'static str>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    /// Whether either stream was cut at the cap.
    pub(crate) truncated: bool,
    pub(crate) duration: Duration,
}

/// Starts `program` (absolute) with `args` in `project` under `table`'s
/// rules, writing only `writable`, and waits at most `limit`.
pub(crate) fn run(
    table: &Table,
    program: &Path,
    args: &[String],
    project: &Path,
    writable: &[PathBuf],
    limit: Duration,
) -> std::io::Result<Ran> {
    let start = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(project)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for var in &table.env {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    let tmp = table.tmp.then(TmpDir::new).transpose()?;
    if let Some(t) = &tmp {
        cmd.env("TMPDIR", &t.0);
    }
    if confine::available() != confine::Confinement::None {
        let mut read = vec![project.to_path_buf()];
        read.extend(confine::toolchain(program));
        read.extend(table.read.iter().map(PathBuf::from));
        let mut folders = write_folders(table, project)?;
        folders.extend(tmp.iter().map(|t| t.0.clone()));
        confine::confine(&mut cmd, &read, writable, &folders, table.network)?;
    } else if !table.unconfined {
        return Err(std::io::Error::other(
            "this kernel has no Landlock, and the table does not say `unconfined = true`",
        ));
    }
    let mut child = spawn(&mut cmd, start + limit)?;
    let cap = usize::try_from(table.output_bytes).unwrap_or(usize::MAX);
    let mut streams = [
        Stream::new(child.stdout.take().map(std::os::fd::OwnedFd::from)),
        Stream::new(child.stderr.take().map(std::os::fd::OwnedFd::from)),
    ];
    let (status, killed) = watch(&mut child, &mut streams, cap, table.processes, limit)?;
    let [out, err] = streams;
    Ok(Ran {
        status: if killed.is_some() { None } else { status },
        killed,
        truncated: out.cut || err.cut,
        stdout: out.buf,
        stderr: err.buf,
        duration: start.elapsed(),
    })
}

/// Starts `cmd`, trying again while the program is busy being written
/// (`ETXTBSY`) and time is left: a program file any other thread of this
/// process still held open for writing when it forked stays busy until that
/// child has exec'd, a moment later, and a formatter being upgraded beside
/// the agent is busy the same way.
fn spawn(cmd: &mut Command, until: Instant) -> std::io::Result<Child> {
    let mut wait = Duration::from_millis(2);
    loop {
        match cmd.spawn() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && Instant::now() + wait < until =>
            {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// A run's private temporary folder (`tmp = true`): made empty and owner
/// only before the run, removed with what it holds after it.
struct TmpDir(PathBuf);

impl TmpDir {
    fn new() -> std::io::Result<TmpDir> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hookrt-exec-{}-{n}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(TmpDir(dir))
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The table's `write` folders that exist in `project`, canonical; one
/// that leads out of it (a symlink) refuses the run.
fn write_folders(table: &Table, project: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut folders = Vec::new();
    for dir in &table.write {
        let Ok(real) = project.join(dir).canonicalize() else {
            continue; // not made yet: nothing to write into
        };
        if !real.starts_with(project) || !real.is_dir() {
            return Err(std::io::Error::other(format!(
                "write folder `{dir}` is not a folder inside the project (a symlink out, or a file)"
            )));
        }
        folders.push(real);
    }
    Ok(folders)
}

/// One of the program's output pipes and what was read from it.
struct Stream {
    fd: Option<std::os::fd::OwnedFd>,
    buf: Vec<u8>,
    cut: bool,
}

impl Stream {
    fn new(fd: Option<std::os::fd::OwnedFd>) -> Stream {
        Stream {
            fd,
            buf: Vec::new(),
            cut: false,
        }
    }

    /// Reads what is ready, up to `cap` in all; closes at the end of the
    /// stream. Whether it went over the cap.
    fn drain(&mut self, cap: usize) -> bool {
        use std::os::fd::AsRawFd;
        let Some(fd) = &self.fd else {
            return false;
        };
        let mut chunk = [0u8; 64 << 10];
        // SAFETY: reads into a buffer of ours from a pipe we own.
        let n = unsafe { libc::read(fd.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
        match n {
            n if n > 0 => {
                let n = n as usize;
                if self.buf.len() + n > cap {
                    self.buf.extend_from_slice(&chunk[..cap - self.buf.len()]);
                    self.cut = true;
                    self.fd = None;
                    return true;
                }
                self.buf.extend_from_slice(&chunk[..n]);
            }
            0 => self.fd = None,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => self.fd = None,
        }
        false
    }
}

/// Waits for `child` while reading its output, killing its whole process
/// group at `limit`, when it has more than `processes` processes, or when
/// its output goes over `cap`; the exit code and why it was killed. Nothing
/// waits on a pipe a killed group's escaped process might hold.
fn watch(
    child: &mut Child,
    streams: &mut [Stream; 2],
    cap: usize,
    processes: u64,
    limit: Duration,
) -> std::io::Result<(Option<i32>, Option<&'static str>)> {
    use std::os::fd::AsRawFd;
    let start = Instant::now();
    let pgid = child.id() as i32;
    // Readable once the program exits: a poll wakes then, not at its next
    // tick (without it, on a kernel before 5.3, the tick finds the exit).
    let exit = crate::platform::pidfd(pgid);
    let mut exited = None;
    loop {
        let open: Vec<usize> = (0..streams.len())
            .filter(|&i| streams[i].fd.is_some())
            .collect();
        let mut fds: Vec<libc::pollfd> = open
            .iter()
            .filter_map(|&i| streams[i].fd.as_ref())
            .map(|fd| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        if exited.is_none() {
            exited = child.try_wait()?;
        }
        if let (None, Some(exit)) = (exited, &exit) {
            fds.push(libc::pollfd {
                fd: exit.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        if let Some(status) = exited
            && fds.is_empty()
        {
            // The program ended; what it left running in its group goes too.
            kill_group(pgid);
            return Ok((status.code().or(status.signal().map(|s| -s)), None));
        }
        let killed = if start.elapsed() >= limit {
            Some("time limit")
        } else if start.elapsed() >= POLL && group_size(pgid) > processes {
            // Counted from the first poll on: a run that ends at once (most
            // do) never pays for reading /proc.
            Some("process cap")
        } else {
            None
        };
        if let Some(why) = killed {
            kill_group(pgid);
            child.wait()?;
            return Ok((None, Some(why)));
        }
        let wait = if exited.is_some() {
            1
        } else {
            POLL.as_millis() as i32
        };
        // SAFETY: polls descriptors we own, in a vector that outlives the call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait) };
        if ready > 0 {
            let readable = open.iter().zip(&fds).filter(|(_, p)| p.revents != 0);
            for (&i, _) in readable {
                if streams[i].drain(cap) {
                    kill_group(pgid);
                    child.wait()?;
                    return Ok((None, Some("output cap")));
                }
            }
        } else if exited.is_some() {
            // Exited, but a process it started still holds a pipe: done.
            streams.iter_mut().for_each(|s| s.fd = None);
        }
    }
}

/// Kills every process of group `pgid`, again while some are left (one
/// forking as the signal went out).
fn kill_group(pgid: i32) {
    for _ in 0..100 {
        // SAFETY: kill(2) with a negative pid signals a process group; it
        // reads no memory of ours.
        if unsafe { libc::kill(-pgid, libc::SIGKILL) } != 0 {
            return; // ESRCH: the group is empty
        }
        std::thread::yield_now();
    }
}

/// The processes of group `pgid` now (from `/proc`).
fn group_size(pgid: i32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut n = 0;
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command's closing parenthesis: state, ppid, pgrp.
        let pgrp = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .and_then(|g| g.parse::<i32>().ok());
        if pgrp == Some(pgid) {
            n += 1;
        }
    }
    n
}
