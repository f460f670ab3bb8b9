//! `hookrt hook --agent NAME DIR` (and `hookrt claude-hook DIR`, Claude
//! Code's name for it): hookrt as an agent's command hook. The agent runs
//! it per event with the event's JSON on stdin (`hookrt install --agent
//! NAME DIR` writes the agent's hook configuration); it runs the sandboxed
//! hooks of DIR on the event and answers as the agent documents
//! (`hookrt::front::bridge`): exit 0 and the JSON of the hooks' answers (a
//! permission decision and rewritten input, a blocked prompt, a continued
//! turn, context for the model), or the agent's "no opinion" when there is
//! nothing to say, for every event of the agent's and any it may add.
//! Anything that keeps hookrt from deciding a gate (bad input, an agent
//! folder that does not load) exits with the agent's blocking code (2 for
//! every bridged agent), the reason on stderr: it fails closed. For other
//! events such a failure exits 1 (a non-blocking error the agent shows).
//!
//! Agents let the tool run when their hook times out or crashes, so the
//! slow and crashing paths fail closed here too: this command never builds
//! (a stale hook fails at once, naming `hookrt build DIR`; it never waits
//! on another build's lock), a panic anywhere exits as a failure while a
//! gate is pending, and a watchdog does at `--deadline-ms` (default 10 s),
//! below the agents' own hook timeouts.

mod forward;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use hookrt::front::bridge::{Bridge, BridgeEvent, Failure};
use hookrt::{BuildOptions, Dispatch, Runtime, Transport};

/// Largest input read: tool inputs can carry whole files.
const MAX_INPUT_BYTES: u64 = 16 << 20;
/// What an input may cost once parsed (the estimate `hookrt serve` charges
/// its bodies by): a dense input parses to many times its text's size
/// (docs/performance.md) before any hook runs, and a process killed for
/// memory is no answer.
const MAX_PARSED_BYTES: usize = 64 << 20;

/// `hookrt claude-hook`'s arguments (its `--agent` is the agent name hooks see).
#[derive(clap::Args)]
pub(crate) struct ClaudeArgs {
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

/// `hookrt hook`'s arguments.
#[derive(clap::Args)]
pub(crate) struct HookArgs {
    /// The agent folder whose hooks run (build it first: `hookrt build DIR`).
    pub dir: PathBuf,
    /// The agent whose hook this is: claude-code, codex, gemini, cursor or copilot.
    #[arg(long, value_name = "AGENT")]
    pub agent: String,
    /// The event, for agents whose input does not name it (the hook entry
    /// `hookrt install` writes gives it).
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
    /// The agent name hooks see (`coordinates.agent`); the agent's own name
    /// when not given.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Give up (failing closed on a gate) after this long; keep it below the
    /// agent's own timeout for the hook entry.
    #[arg(long, default_value = "10000", value_name = "MS")]
    pub deadline_ms: u64,
    /// Forward the input to a running `hookrt serve` at this URL
    /// (`http://127.0.0.1:7700`) instead of running the hooks here: one
    /// service and one journal for every agent (token from `$HOOKRT_TOKEN`).
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
}

impl From<&ClaudeArgs> for HookArgs {
    fn from(a: &ClaudeArgs) -> HookArgs {
        HookArgs {
            dir: a.dir.clone(),
            // `claude-hook` is `hook --agent claude-code`.
            agent: "claude-code".into(),
            event: None,
            name: Some(a.agent.clone()),
            deadline_ms: a.deadline_ms,
            http: None,
        }
    }
}

/// What a failure does now (a panic, the watchdog): refuse until the input
/// shows it is no gate (a failure before that fails closed too).
static FAILURE: Mutex<Option<Failure>> = Mutex::new(None);

/// Ends the process as `FAILURE` says: the agent's refusal, if it needs
/// one in JSON, on stdout, and the exit code.
fn exit_failing() -> ! {
    let failure = FAILURE
        .lock()
        .map(|f| f.clone())
        .unwrap_or_else(|e| e.into_inner().clone());
    let Failure { stdout, code } = failure.unwrap_or(Failure {
        stdout: None,
        code: 2,
    });
    if let Some(out) = stdout {
        println!("{out}");
    }
    std::process::exit(code.into());
}

fn set_failure(f: Failure) {
    match FAILURE.lock() {
        Ok(mut slot) => *slot = Some(f),
        Err(e) => *e.into_inner() = Some(f),
    }
}

pub(crate) fn hook(args: &HookArgs, opts: BuildOptions) -> ExitCode {
    let Some(bridge) = Bridge::named(&args.agent) else {
        eprintln!(
            "hookrt hook: no agent `{}`: give --agent one of {}",
            args.agent,
            Bridge::names()
        );
        return ExitCode::from(2);
    };
    let command = format!("hookrt hook --agent {}", bridge.name());
    // Until the input is read, fail as the agent's first gate would.
    set_failure(bridge.failure(bridge.gates().first().copied(), "hookrt failed"));
    fail_on_panic_and_deadline(&command, Duration::from_millis(args.deadline_ms));
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_string(&mut input);
    // Cheap and safe: a gate's input names it even if it is broken.
    let gate = bridge.gate_served(args.event.as_deref(), Some(&input));
    set_failure(bridge.failure(gate, "hookrt failed or did not decide in time"));
    let fail = |why: &str| fail(&command, bridge, gate, why);
    // Test support: a panic where nothing else would panic, to show the
    // panic path fails closed (cli/commands.rs).
    if std::env::var_os("HOOKRT_CLAUDE_HOOK_TEST_PANIC").is_some() {
        panic!("HOOKRT_CLAUDE_HOOK_TEST_PANIC is set");
    }
    if let Err(e) = read {
        return fail(&format!("cannot read the hook input on stdin: {e}"));
    }
    let cost = hookrt_serve::cost::parsed(input.as_bytes());
    if cost > MAX_PARSED_BYTES {
        return fail(&format!(
            "the hook input ({} bytes) would take about {} MiB once parsed, more than the {} MiB a command hook allows (its JSON is too dense: many small values); refused",
            input.len(),
            cost >> 20,
            MAX_PARSED_BYTES >> 20
        ));
    }
    if let Some(url) = &args.http {
        return match forward::forward(
            url,
            bridge,
            args.event.as_deref(),
            args.name.as_deref(),
            &input,
            Duration::from_millis(args.deadline_ms),
        ) {
            Ok(answer) => {
                println!("{answer}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        };
    }
    let agent = args.name.as_deref().unwrap_or(bridge.name());
    let event = match bridge.read(agent, &input, args.event.as_deref(), "command") {
        Ok(e) => e,
        Err(e) => return fail(&e.to_string()),
    };
    // The input decides from here: a gate by its own name.
    let gate = bridge.is_gate(&event.name).then_some(event.name.as_str());
    set_failure(bridge.failure(gate, "hookrt failed or did not decide in time"));
    run(&command, bridge, gate, &args.dir, opts, &event)
}

/// Makes a panic on any thread, and the watchdog at `deadline`, end the
/// process with the failure's exit, after the usual message: never Rust's
/// 101, which agents do not block on.
fn fail_on_panic_and_deadline(command: &str, deadline: Duration) {
    let report = std::panic::take_hook();
    let said = command.to_owned();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        eprintln!("{said}: hookrt failed; the tool call is blocked if one was pending");
        exit_failing();
    }));
    let said = command.to_owned();
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        eprintln!(
            "{said}: no decision within --deadline-ms ({} ms); failing closed",
            deadline.as_millis()
        );
        exit_failing();
    });
}

/// Runs the hooks of `dir` on `event` in this process and answers.
fn run(
    command: &str,
    bridge: Bridge,
    gate: Option<&str>,
    dir: &Path,
    opts: BuildOptions,
    event: &BridgeEvent,
) -> ExitCode {
    let fail = |why: &str| fail(command, bridge, gate, why);
    // Never build here: the agent would time the build out and run the tool.
    let opts = BuildOptions {
        cached_only: true,
        one_shot: true,
        ..opts
    };
    let mut rt = match Runtime::load_blocking(dir, &opts, &mut |_| {}) {
        Ok(rt) => rt,
        Err(p) => {
            return fail(&format!(
                "the hooks of {} did not load:\n{p}",
                dir.display()
            ));
        }
    };
    rt.set_transport(Transport {
        kind: bridge.name().into(),
        detail: Some("command".into()),
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
    // and the agent's own cap on stop continues still holds.
    if (keeps_state || event.envelope.kind == hookrt::event::TURN_STOPPING)
        && let Err(e) = rt.keep_state_per_user()
    {
        eprintln!(
            "{command}: hooks' state and the loop governor's count are kept in memory only: cannot open hookrt's per-user state ({e}); set HOOKRT_STATE_DIR to a folder of your own"
        );
    }
    let answered = match rt.dispatch(&event.envelope) {
        Ok(dispatch) => answer(bridge, &event.name, &dispatch),
        Err(e) => fail(&format!("event refused: {e}")),
    };
    // The process ends with the answer: its hooks, engine, pool and threads
    // go with it (what it wrote is written: state commits per call).
    std::mem::forget(rt);
    answered
}

/// What the agent reads back after event `name`.
fn answer(bridge: Bridge, name: &str, dispatch: &Dispatch) -> ExitCode {
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
    if let Some(out) = bridge
        .answer(name, dispatch.resolution.as_ref())
        .or_else(|| bridge.no_opinion())
    {
        println!("{out}");
    }
    ExitCode::SUCCESS
}

/// Fails closed for a gate (the agent's refusal), open for the rest.
fn fail(command: &str, bridge: Bridge, gate: Option<&str>, why: &str) -> ExitCode {
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
