//! The supervisor of `hookrt hook`: the process reads the bounded input and
//! knows which gate it serves, then forks, before any thread exists, and
//! the child decides. The parent relays the child's answer when the child
//! exits with one; a child that ends by a signal (an abort, a stack
//! overflow, a SIGSEGV, the OOM killer's SIGKILL) or without a well-formed
//! answer is the gate's failure, as a panic and the deadline already are:
//! agents let a tool call run when its hook dies by a signal.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// What the child may print: an answer holds at most the tool input it
/// rewrites, which the input bounds. A child printing more is failing.
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// How long past the deadline the parent waits for the child's own
/// refusal (its watchdog fires at the deadline) before killing it.
const GRACE: Duration = Duration::from_millis(200);

/// Which side of the fork this process is.
pub(super) enum Side {
    /// The child: decide, print the answer and exit with its code.
    Child,
    /// The parent, with what it ends with.
    Parent(Ended),
}

/// How the child ended, as the parent relays it.
pub(super) enum Ended {
    /// With a well-formed answer: its stdout and exit code.
    Answered(Vec<u8>, u8),
    /// Anything else (a signal, a stray exit code, a broken answer): why.
    Failed(String),
}

/// Forks: the child returns [`Side::Child`] with its stdout on a pipe to
/// the parent; the parent waits for it, killing it at `deadline` plus a
/// grace, and returns how it ended. Call it before any thread exists.
pub(super) fn fork(deadline: Instant) -> io::Result<Side> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe returned two open descriptors, owned from here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the process has one thread (the caller's promise), so the
    // child may run anything the parent could.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            drop(read);
            become_child(&write)?;
            Ok(Side::Child)
        }
        child => {
            drop(write);
            Ok(Side::Parent(supervise(child, read, deadline)))
        }
    }
}

/// The child's stdout is the pipe, and it dies with its parent (a parent
/// gone has answered the agent already).
fn become_child(write: &OwnedFd) -> io::Result<()> {
    // SAFETY: both descriptors are open; dup2 leaves the copy without
    // O_CLOEXEC.
    if unsafe { libc::dup2(write.as_raw_fd(), 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    Ok(())
}

/// Reads the child's answer and reaps it, killing it past the deadline.
fn supervise(child: libc::pid_t, read: OwnedFd, deadline: Instant) -> Ended {
    let answer =
        hookrt_client::input::read_within(read.as_raw_fd(), MAX_ANSWER_BYTES + 1, deadline + GRACE);
    // Past the deadline, or printing more than an answer: the child may
    // never end by itself.
    if !answer
        .as_ref()
        .is_ok_and(|a| a.len() as u64 <= MAX_ANSWER_BYTES)
    {
        // Not reaped yet: the pid is still the child's.
        // SAFETY: a signal to a process, no memory passed.
        unsafe { libc::kill(child, libc::SIGKILL) };
    }
    let status = reap(child);
    match (answer, status) {
        (_, Err(e)) => Ended::Failed(format!("cannot learn how the decision ended: {e}")),
        (Err(e), _) if e.kind() == io::ErrorKind::TimedOut => {
            Ended::Failed("no decision within --deadline-ms; its process was killed".into())
        }
        (Err(e), _) => Ended::Failed(format!("cannot read the decision's answer: {e}")),
        (Ok(answer), Ok(status)) => judge(answer, status),
    }
}

/// Waits for the child to end: its wait status.
fn reap(child: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid place for waitpid to write.
        if unsafe { libc::waitpid(child, &raw mut status, 0) } == child {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The child's answer when it exited as the command does (0, 1 or 2, and
/// nothing or one JSON value on stdout), else why it failed.
fn judge(answer: Vec<u8>, status: libc::c_int) -> Ended {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        return Ended::Failed(format!(
            "the decision's process ended by signal {signal} ({})",
            signal_name(signal)
        ));
    }
    let code = libc::WEXITSTATUS(status);
    if !matches!(code, 0..=2) {
        return Ended::Failed(format!("the decision's process exited with {code}"));
    }
    if answer.len() as u64 > MAX_ANSWER_BYTES {
        return Ended::Failed("the decision's answer is larger than an answer may be".into());
    }
    let text = String::from_utf8_lossy(&answer);
    let text = text.trim();
    if !text.is_empty() && serde_json::from_str::<serde_json::Value>(text).is_err() {
        return Ended::Failed("the decision's answer is not one JSON value".into());
    }
    Ended::Answered(answer, u8::try_from(code).unwrap_or(2))
}

fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGABRT => "an abort: a stack overflow or a fatal runtime error",
        libc::SIGKILL => "killed: the OOM killer, or the deadline",
        libc::SIGSEGV => "a segmentation fault",
        libc::SIGBUS => "a bus error",
        _ => "a signal",
    }
}

/// Writes what the parent relays on its stdout.
pub(super) fn print(answer: &[u8]) {
    let mut out = io::stdout().lock();
    // Nothing better to do when the agent stopped reading.
    let _ = out.write_all(answer).and_then(|()| out.flush());
}

/// Test support (`tests/cli/supervisor.rs`): the ways a process ends that
/// no panic hook sees, where nothing else would end it, to show each fails
/// closed. Read from the environment of the process, which no hook sets.
pub(super) fn crash_for_test() {
    let Ok(crash) = std::env::var("HOOKRT_HOOK_TEST_CRASH") else {
        return;
    };
    // No core file where the tests run.
    let none = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit, read by the call only.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &raw const none) };
    match crash.as_str() {
        "abort" => std::process::abort(),
        // SAFETY: a signal to this very process.
        "sigkill" => unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        },
        "stack-overflow" => {
            std::hint::black_box(deeper(0));
        }
        _ => {}
    }
}

/// Recurses until the stack overflows.
fn deeper(n: u64) -> u64 {
    let frame = std::hint::black_box([n; 512]);
    if std::hint::black_box(true) {
        deeper(n + 1).wrapping_add(frame[0])
    } else {
        frame[511]
    }
}
