//! `hookrt claude-hook DIR`: hookrt as a Claude Code command hook. Claude
//! Code runs it per event with the event's JSON on stdin
//! (`.claude/settings.json`: `{"type": "command", "command": "hookrt claude-hook DIR"}`);
//! it runs the sandboxed hooks of DIR on the event and answers as Claude Code
//! documents (`hookrt::front::claude`): exit 0 and the JSON of the hooks'
//! answers (a permission decision and rewritten input, a permission
//! request's decision, a blocked prompt or a continued turn, context for the
//! model), or nothing when there is nothing to say, for every event of
//! Claude Code's and any it may add. Anything that keeps hookrt from
//! deciding a gate (`CLAUDE_GATES`: bad input, an agent folder that does not
//! load) exits 2, which blocks the call (or the prompt, compaction, task or
//! config change), with the reason on stderr: it fails closed. For other
//! events such a failure exits 1 (a non-blocking error, shown in Claude
//! Code's verbose mode).
//!
//! Claude Code lets the tool run when its hook times out or crashes
//! (anything but exit 2 is non-blocking), so the slow and crashing paths
//! fail closed here too: this command never builds (a stale hook exits 2
//! at once, naming `hookrt build DIR`; it never waits on another build's
//! lock), a panic anywhere exits 2 while a `PreToolUse` is pending, and a
//! watchdog exits 2 at `--deadline-ms` (default 10 s), below Claude Code's
//! own hook timeout (60 s unless the hook entry sets `timeout`).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hookrt::event::{ClaudeEvent, claude_event};
use hookrt::front::claude::{claude_answer, gate_named};
use hookrt::{BuildOptions, Dispatch, Runtime, Transport};

/// Largest input read: tool inputs can carry whole files.
const MAX_INPUT_BYTES: u64 = 16 << 20;

#[derive(clap::Args)]
pub struct ClaudeArgs {
    /// The agent folder whose hooks run (build it first: `hookrt build DIR`).
    pub dir: PathBuf,
    /// The agent name hooks see (`coordinates.agent`).
    #[arg(long, default_value = "claude-code")]
    pub agent: String,
    /// Give up (exit 2 for a tool call: blocked) after this long; keep it
    /// below the hook entry's `timeout` in Claude Code's settings.
    #[arg(long, default_value = "10000", value_name = "MS")]
    pub deadline_ms: u64,
}

/// Whether a failure now blocks a call: true until the input shows it is
/// no gate (a failure before that fails closed too).
static GATE: AtomicBool = AtomicBool::new(true);

/// The exit of a failure, by [`GATE`]: 2 blocks the tool call.
fn failure_code() -> i32 {
    if GATE.load(Ordering::SeqCst) { 2 } else { 1 }
}

pub fn claude_hook(args: &ClaudeArgs, opts: BuildOptions) -> ExitCode {
    // A panic on any thread ends the process with the failure's exit, after
    // the usual message: never Rust's 101, which Claude Code does not block on.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        eprintln!("hookrt claude-hook: hookrt failed; the tool call is blocked if one was pending");
        std::process::exit(failure_code());
    }));
    let deadline = Duration::from_millis(args.deadline_ms);
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        eprintln!(
            "hookrt claude-hook: no decision within --deadline-ms ({} ms); failing closed",
            deadline.as_millis()
        );
        std::process::exit(failure_code());
    });
    // Never build here: Claude Code would time the build out and run the tool.
    let opts = BuildOptions {
        cached_only: true,
        ..opts
    };
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_string(&mut input);
    // Cheap and safe: a gate's input names it even if it is broken.
    let gate = gate_named(&input).is_some();
    GATE.store(gate, Ordering::SeqCst);
    // Test support: a panic where nothing else would panic, to show the
    // panic path fails closed (cli/commands.rs).
    if std::env::var_os("HOOKRT_CLAUDE_HOOK_TEST_PANIC").is_some() {
        panic!("HOOKRT_CLAUDE_HOOK_TEST_PANIC is set");
    }
    if let Err(e) = read {
        return fail(gate, &format!("cannot read the hook input on stdin: {e}"));
    }
    let ClaudeEvent { name, envelope } = match claude_event(&args.agent, &input) {
        Ok(e) => e,
        Err(e) => return fail(gate, &e.to_string()),
    };
    let mut rt = match Runtime::load_blocking(&args.dir, &opts, &mut |_| {}) {
        Ok(rt) => rt,
        Err(p) => {
            return fail(
                gate,
                &format!("the hooks of {} did not load:\n{p}", args.dir.display()),
            );
        }
    };
    rt.set_transport(Transport {
        kind: "claude-code".into(),
        detail: None,
    });
    // A process per event: what must outlive it (the loop governor's count
    // of continues in a row, hooks' `state`) is kept per user. Opened only
    // when something reads it.
    let state = hookrt::sandbox::Need::Grant("state".into());
    let keeps_state = rt
        .hooks()
        .iter()
        .any(|h| h.import_audit.iter().any(|i| i.need == state));
    // Without it (no home, an unsafe folder) the event still runs, its
    // state in memory: the governor then counts within this process only,
    // and Claude Code's own cap on stop continues still holds.
    if (keeps_state || envelope.kind == hookrt::event::TURN_STOPPING)
        && let Err(e) = rt.keep_state_per_user()
    {
        eprintln!(
            "hookrt claude-hook: hooks' state and the loop governor's count are kept in memory only: cannot open hookrt's per-user state ({e}); set HOOKRT_STATE_DIR to a folder of your own"
        );
    }
    match rt.dispatch(&envelope) {
        Ok(dispatch) => answer(&name, &dispatch),
        Err(e) => fail(gate, &format!("event refused: {e}")),
    }
}

/// What Claude Code reads back after event `name`.
fn answer(name: &str, dispatch: &Dispatch) -> ExitCode {
    for d in dispatch
        .deliveries
        .iter()
        .filter(|d| d.outcome.is_failure())
    {
        eprintln!(
            "hookrt: hook `{}` {} on {}: {}",
            d.hook,
            d.outcome,
            d.kind,
            d.error.as_deref().unwrap_or("")
        );
    }
    if let Some(out) = claude_answer(name, dispatch.resolution.as_ref()) {
        println!("{out}");
    }
    ExitCode::SUCCESS
}

/// Fails closed for a gate (exit 2 blocks the call), open for the rest.
fn fail(gate: bool, why: &str) -> ExitCode {
    eprintln!("hookrt claude-hook: {why}");
    if gate {
        eprintln!(
            "hookrt claude-hook: the tool call is blocked because hookrt could not decide on it"
        );
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}
