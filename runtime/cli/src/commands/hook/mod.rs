//! `hookrt hook --agent NAME DIR` (and `hookrt claude-hook DIR`, Claude
//! Code's name for it): hookrt as an agent's command hook. The agent runs
//! it per event with the event's JSON on stdin (`hookrt install --agent
//! NAME DIR` writes the agent's hook configuration); it decides the event
//! through the one decide path (`hookrt::front::decide`, with the hooks of
//! DIR loaded here, `one_shot.rs`) and answers as the agent documents
//! (`hookrt::front::bridge`), or its "no opinion". Anything that keeps
//! hookrt from deciding a gate (bad input, a folder that does not load)
//! exits with the agent's blocking code (2 for every bridged agent), the
//! reason on stderr: it fails closed. Other events exit 1 (a non-blocking
//! error the agent shows).
//!
//! Agents let the tool run when their hook times out or dies, so those
//! paths fail closed too: this command never builds (a stale hook fails at
//! once, naming `hookrt build DIR`), a panic and the watchdog at
//! `--deadline-ms` (default 10 s) exit as failures, and the decision runs
//! in a child whose death by a signal (an abort, a stack overflow, the OOM
//! killer) the parent answers as the gate's failure (`supervisor.rs`).

mod one_shot;
mod supervisor;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use hookrt::BuildOptions;

use hookrt_client::answering::{
    answered, fail, fail_at_deadline, may_answer, set_failure, take_input,
};
use hookrt_client::forward;
use hookrt_client::place::Place;

use crate::loading::Loading;
use hookrt::front::bridge::{Bridge, BridgeEvent};
use hookrt::front::decide::{Told, Undecided, decide};
use hookrt::front::record::{self, Recorded};

use one_shot::OneShot;
use supervisor::{Ended, Side};

/// What an input may cost once parsed (the estimate `hookrt serve` charges
/// its bodies by): a dense input parses to many times its text's size
/// (docs/performance.md) before any hook runs, and a process killed for
/// memory is no answer.
const MAX_PARSED_BYTES: usize = 64 << 20;

/// The environment variable that makes `--no-service` the default.
pub(crate) const NO_SERVICE_ENV: &str = hookrt_client::thin::NO_SERVICE_ENV;

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
    /// Append each input, as Claude Code sent it and masked, to this
    /// recording (`hookrt test --agent claude-code --events FILE` replays it).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Decide through the folder's resident service (the default; it
    /// overrides `$HOOKRT_NO_SERVICE`; docs/service.md).
    #[arg(long)]
    pub service: bool,
    /// Decide in this process, not through the resident service: no
    /// journal, so no trail (docs/service.md, "What each form costs");
    /// `HOOKRT_NO_SERVICE=1` sets it; `--service` overrides both.
    #[arg(long, env = NO_SERVICE_ENV, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_service: bool,
}

/// `hookrt hook`'s arguments.
#[derive(clap::Args)]
pub(crate) struct HookArgs {
    /// The agent folder whose hooks run (build it first: `hookrt build DIR`).
    pub dir: PathBuf,
    /// The agent whose hook this is: claude-code, codex, gemini, cursor or copilot
    /// (or anthropic-inference: an inference hook's frame, to test one by hand).
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
    #[arg(long, value_name = "URL", conflicts_with = "service")]
    pub http: Option<String>,
    /// Decide through the folder's resident service for this user, started
    /// on demand: its hooks stay warm, and its journal keeps the trail,
    /// receipts and coverage (`hookrt service status DIR`; docs/service.md).
    /// The default; it overrides `$HOOKRT_NO_SERVICE`.
    #[arg(long)]
    pub service: bool,
    /// Decide in this process, loading the hooks for this event alone:
    /// no journal, so no trail, receipts or coverage (docs/service.md,
    /// "What each form costs"). `HOOKRT_NO_SERVICE=1` makes it the default
    /// of every command hook (CI, a container whose processes must not
    /// outlive the agent's); `--service` and `--http` override both.
    #[arg(long, env = NO_SERVICE_ENV, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_service: bool,
    /// Append each input, as the agent sent it and masked by the folder's
    /// redaction patterns, to this recording before deciding it (`hookrt
    /// test --agent AGENT --events FILE` replays it). A recording that
    /// cannot be written is said on stderr and changes no answer.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

impl HookArgs {
    /// Whether the input goes to the folder's resident service: unless
    /// `--http` names a server, `--no-service` (or `$HOOKRT_NO_SERVICE`)
    /// asks for the process per event, or the agent's frames come signed
    /// by their source (the service's route takes them signed only).
    fn via_service(&self, bridge: Bridge) -> bool {
        self.http.is_none()
            && (self.service || !self.no_service)
            && bridge.protocol().signature.is_none()
    }
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
            service: a.service,
            no_service: a.no_service,
            record: a.record.clone(),
        }
    }
}

pub(crate) fn hook(args: &HookArgs, loading: Loading) -> ExitCode {
    let Some(bridge) = Bridge::named(&args.agent) else {
        eprintln!(
            "hookrt hook: no agent `{}`: give --agent one of {}",
            args.agent,
            Bridge::names()
        );
        return ExitCode::from(2);
    };
    if bridge.protocol().signature.is_some() && args.http.is_some() {
        eprintln!(
            "hookrt hook: {} reach `hookrt serve` signed by their source, on {}: `hookrt hook --agent {}` decides a frame here, without --http",
            bridge.protocol().label,
            bridge.route(),
            bridge.name()
        );
        return ExitCode::from(2);
    }
    let started = Instant::now();
    let deadline = started + Duration::from_millis(args.deadline_ms);
    let command = format!("hookrt hook --agent {}", bridge.name());
    let (read, gate) = take_input(
        bridge,
        args.event.as_deref(),
        deadline,
        args.deadline_ms,
        &command,
    );
    if let (Some(path), Ok(input)) = (&args.record, &read) {
        record(args, path, bridge, input);
    }
    // The decision runs in a child: however it ends, this process answers.
    // A forward runs no hook here: no child.
    let forwards = args.http.is_some() || args.via_service(bridge);
    match (!forwards).then(|| supervisor::fork(deadline)) {
        None | Some(Ok(Side::Child)) => {}
        Some(Ok(Side::Parent(Ended::Answered(answer, code)))) => {
            supervisor::print(&answer);
            return ExitCode::from(code);
        }
        Some(Ok(Side::Parent(Ended::Failed(why)))) => return fail(&command, bridge, gate, &why),
        Some(Err(e)) => {
            let why = format!("cannot start the process that decides: {e}");
            return fail(&command, bridge, gate, &why);
        }
    }
    fail_at_deadline(&command, args.deadline_ms, deadline);
    // Test support: a panic, and the ends no panic hook sees, where nothing
    // else would end the process, to show each fails closed
    // (cli/commands.rs, cli/supervisor.rs).
    if std::env::var_os("HOOKRT_CLAUDE_HOOK_TEST_PANIC").is_some() {
        panic!("HOOKRT_CLAUDE_HOOK_TEST_PANIC is set");
    }
    supervisor::crash_for_test();
    match read {
        Ok(input) => decide_input(args, loading, bridge, &command, gate, &input, deadline),
        Err(e) => fail(
            &command,
            bridge,
            gate,
            &format!("cannot read the hook input on stdin: {e}"),
        ),
    }
}

/// Appends `input` to the recording at `path`, masked by the folder's
/// redaction patterns (the built-in ones when its `hookrt.toml` does not
/// load: the decision then says why); a failure is said, never answered.
fn record(args: &HookArgs, path: &Path, bridge: Bridge, input: &str) {
    let redactor = hookrt::hooks::Config::load(&args.dir)
        .map(|c| c.redactor().clone())
        .unwrap_or_default();
    let recorded = Recorded::new(
        bridge,
        args.name.as_deref(),
        args.event.as_deref(),
        if args.http.is_some() {
            "http"
        } else {
            "command"
        },
        input,
        &redactor,
    );
    if let Err(e) = record::append(path, &recorded) {
        eprintln!("hookrt hook: {e} (the input is decided all the same)");
    }
}

/// Decides `input` (forwarded with `--http` or `--service`, else here) and
/// answers, by `deadline`; `gate` is the one the raw input serves.
fn decide_input(
    args: &HookArgs,
    loading: Loading,
    bridge: Bridge,
    command: &str,
    gate: Option<&str>,
    input: &str,
    deadline: Instant,
) -> ExitCode {
    let fail = |why: &str| fail(command, bridge, gate, why);
    let cost = hookrt_serve::cost::parsed(input.as_bytes());
    if cost > MAX_PARSED_BYTES {
        return fail(&format!(
            "the hook input ({} bytes) would take about {} MiB once parsed, more than the {} MiB a command hook allows (its JSON is too dense: many small values); refused",
            input.len(),
            cost >> 20,
            MAX_PARSED_BYTES >> 20
        ));
    }
    let place;
    let target = match &args.http {
        Some(url) => Some(forward::Target::Http(url)),
        None if args.via_service(bridge) => {
            place = match Place::of(&args.dir, &loading.identity()) {
                Ok(p) => p,
                Err(e) => return fail(&e),
            };
            Some(forward::Target::Service(&place))
        }
        None => None,
    };
    if let Some(target) = target {
        return match forward::forward(
            &target,
            bridge,
            args.event.as_deref(),
            args.name.as_deref(),
            input,
            Duration::from_millis(args.deadline_ms),
        ) {
            Ok(answer) => answered(answer.as_ref()),
            Err(e) => fail(&e),
        };
    }
    let agent = args.name.as_deref().unwrap_or(bridge.name());
    let event = match bridge.read(agent, input, args.event.as_deref(), "command") {
        Ok(e) => e,
        Err(e) => return fail(&e.to_string()),
    };
    // The input decides from here: a gate by its own name.
    let gate = bridge.gates().iter().copied().find(|g| *g == event.name);
    set_failure(bridge, gate);
    let door = CommandDoor {
        command,
        bridge,
        gate,
        deadline_ms: args.deadline_ms,
    };
    let left = deadline.saturating_duration_since(Instant::now());
    door.run(&args.dir, loading.options(&args.dir), &event, left)
        .unwrap_or_else(|why| door.fail(&why))
}

/// The command door answering one event.
struct CommandDoor<'a> {
    /// This command, as messages name it.
    command: &'a str,
    bridge: Bridge,
    /// The gate the event serves, if it is one.
    gate: Option<&'a str>,
    /// `--deadline-ms`, for messages.
    deadline_ms: u64,
}

impl CommandDoor<'_> {
    /// Decides `event` with the hooks of `dir` in this process, through
    /// the one decide path, within `deadline` (what is left of
    /// `--deadline-ms`), and answers; else why it could not.
    fn run(
        &self,
        dir: &Path,
        opts: BuildOptions,
        event: &BridgeEvent,
        deadline: Duration,
    ) -> Result<ExitCode, String> {
        let resolver = OneShot::load(
            dir,
            opts,
            self.bridge.name(),
            &event.envelope.kind,
            self.command,
        )
        .map_err(|p| format!("the hooks of {} did not load:\n{p}", dir.display()))?;
        // No thread of its own: the hooks run on the resolver's.
        let executor = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| format!("cannot start the decision: {e}"))?;
        let decided = executor.block_on(decide(&resolver, event.envelope.clone(), deadline));
        match decided.told(self.bridge, &event.name) {
            Ok(Told { answer, .. }) => Ok(self.answer(answer)),
            Err(Undecided::TimedOut(_)) => Err(format!(
                "no decision within --deadline-ms ({} ms); failing closed",
                self.deadline_ms
            )),
            Err(Undecided::Refused(e)) => Err(e.to_string()),
            Err(Undecided::Duplicate) => {
                Err("this event's id was taken before; its decision is not made again".into())
            }
        }
    }

    /// Prints the hooks' `answer`, or the agent's no-opinion form.
    fn answer(&self, answer: Option<serde_json::Value>) -> ExitCode {
        if !may_answer() {
            // A failure is being answered, and ends the process.
            loop {
                std::thread::park();
            }
        }
        if let Some(out) = answer.or_else(|| self.bridge.no_opinion()) {
            println!("{out}");
        }
        ExitCode::SUCCESS
    }

    /// Fails closed for a gate (the agent's refusal), open for the rest.
    fn fail(&self, why: &str) -> ExitCode {
        fail(self.command, self.bridge, self.gate, why)
    }
}
