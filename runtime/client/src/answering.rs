//! How a command hook answers: once, and in the agent's words when it
//! cannot decide. A gate fails closed (the agent's refusal: exit 2, or its JSON
//! deny), any other event fails open with a non-blocking error; a panic on
//! any thread and the watchdog at the deadline answer the same way, and
//! whichever answers first is the one answer the agent reads. Used by
//! `hookrt hook` and by the thin client `hookrt-hook`.

use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hookrt::front::bridge::{Bridge, Failure};

/// Whom a failure now (a panic, the watchdog) answers: the agent, and the
/// gate refused until the input shows it is no gate (a failure before that
/// fails closed too).
static FAILURE: Mutex<Option<(Bridge, Option<&'static str>)>> = Mutex::new(None);

/// Set by whichever answers first, the decision or a failure (a panic,
/// the watchdog): the agent reads one answer, never two.
static ANSWERING: AtomicBool = AtomicBool::new(false);

/// Whether this thread may answer: false once another began to.
pub fn may_answer() -> bool {
    !ANSWERING.swap(true, Ordering::SeqCst)
}

/// Ends the process as `FAILURE` says, `why` the reason: the agent's
/// refusal, if it needs one in JSON, on stdout, and the exit code.
pub fn exit_failing(why: &str) -> ! {
    let failing = FAILURE
        .lock()
        .map(|f| *f)
        .unwrap_or_else(|e| *e.into_inner());
    let Failure { stdout, code } = match failing {
        Some((bridge, gate)) => bridge.failure(gate, why),
        None => Failure {
            stdout: None,
            code: 2,
        },
    };
    if !may_answer() {
        // The answer is being written: the process ends with it, or, if
        // writing it failed (a panic while printing), as the failure.
        std::thread::sleep(Duration::from_secs(1));
        std::process::exit(code.into());
    }
    if let Some(out) = stdout {
        println!("{out}");
    }
    std::process::exit(code.into());
}

/// Whom a failure from now on answers: `bridge`, for `gate` (none: the
/// event gates nothing).
pub fn set_failure(bridge: Bridge, gate: Option<&'static str>) {
    match FAILURE.lock() {
        Ok(mut slot) => *slot = Some((bridge, gate)),
        Err(e) => *e.into_inner() = Some((bridge, gate)),
    }
}

/// Makes a panic on any thread end the process with the failure's exit,
/// after the usual message: never Rust's 101, which agents do not block on.
pub fn fail_on_panic(command: &str) {
    let report = std::panic::take_hook();
    let said = command.to_owned();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        eprintln!("{said}: hookrt failed; the tool call is blocked if one was pending");
        exit_failing(&panicked(info));
    }));
}

/// What a panic says to the agent: its message (bounded) and where.
fn panicked(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    let message: String = message.chars().take(200).collect();
    match info.location() {
        Some(at) => format!("hookrt panicked at {}:{}: {message}", at.file(), at.line()),
        None => format!("hookrt panicked: {message}"),
    }
}

/// A watchdog that ends the process with the failure's exit at `deadline`
/// (`--deadline-ms` after it started), whatever it is doing then.
pub fn fail_at_deadline(command: &str, deadline_ms: u64, deadline: Instant) {
    let said = past_deadline(command, deadline_ms);
    std::thread::spawn(move || {
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        eprintln!("{said}");
        exit_failing(&said);
    });
}

/// What a command past its deadline says.
pub fn past_deadline(command: &str, deadline_ms: u64) -> String {
    format!("{command}: no decision within --deadline-ms ({deadline_ms} ms); failing closed")
}

/// Fails closed for a gate (the agent's refusal), open for the rest.
pub fn fail(command: &str, bridge: Bridge, gate: Option<&str>, why: &str) -> ExitCode {
    if !may_answer() {
        // A failure is being answered, and ends the process.
        loop {
            std::thread::park();
        }
    }
    eprintln!("{command}: {why}");
    if gate.is_some() {
        eprintln!("{command}: blocked because hookrt could not decide on it");
    }
    let Failure { stdout, code } = bridge.failure(gate, why);
    if let Some(out) = stdout {
        println!("{out}");
    }
    ExitCode::from(code)
}

/// The command hook's start, whatever decides its input: failures answer
/// as `bridge`'s first gate until the input is read, a panic fails closed,
/// stdin is read within `MAX_INPUT_BYTES` by `deadline` (past it, the gate
/// fails closed here), and from then on failures answer as the gate the
/// input serves (named by `event`, else by the input, even a broken one).
/// Returns the input as read and that gate. `deadline_ms` is
/// `--deadline-ms`, for messages.
pub fn take_input(
    bridge: Bridge,
    event: Option<&str>,
    deadline: Instant,
    deadline_ms: u64,
    command: &str,
) -> (std::io::Result<String>, Option<&'static str>) {
    set_failure(bridge, bridge.gates().first().copied());
    fail_on_panic(command);
    let read = crate::input::read_input(crate::input::MAX_INPUT_BYTES, deadline);
    if read
        .as_ref()
        .is_err_and(|e| e.kind() == std::io::ErrorKind::TimedOut)
    {
        let said = past_deadline(command, deadline_ms);
        eprintln!("{said}");
        exit_failing(&said);
    }
    // Cheap and safe: a gate's input names it even if it is broken.
    let gate = bridge.gate_served(event, Some(read.as_deref().unwrap_or_default()));
    set_failure(bridge, gate);
    (read, gate)
}

/// Prints a decided `answer` (or nothing: the agent's silence) and exits 0,
/// unless a failure is being answered, which ends the process.
pub fn answered(answer: Option<&serde_json::Value>) -> ExitCode {
    if !may_answer() {
        loop {
            std::thread::park();
        }
    }
    if let Some(out) = answer {
        println!("{out}");
    }
    ExitCode::SUCCESS
}
