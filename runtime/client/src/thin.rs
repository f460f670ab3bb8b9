//! `hookrt-hook`: the command hook as a thin client of the folder's
//! resident service, a binary of its own. It takes `hookrt hook --service`'s
//! arguments and answers as it does, but links none of what deciding needs
//! (Wasmtime, the hooks' loader, the HTTP server): an agent starts it per
//! event, and its start is most of what such an event costs
//! (docs/performance.md, "The resident service"). The service itself is
//! started with the `hookrt` beside it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use hookrt::front::bridge::Bridge;

use crate::answering::{answered, fail, fail_at_deadline, take_input};
use crate::forward::{Target, forward};
use crate::place::{Identity, Place};

/// `hookrt-hook`'s arguments: `hookrt hook --service`'s, and the global
/// flags that choose the service.
#[derive(Parser)]
#[command(
    name = "hookrt-hook",
    version,
    about = "An agent's command hook through the folder's resident hookrt service (hookrt hook --service, lighter)"
)]
pub struct Args {
    /// The agent folder whose hooks run (build it first: `hookrt build DIR`).
    pub dir: PathBuf,
    /// The agent whose hook this is (`hookrt hook --agent`'s names).
    #[arg(long, value_name = "AGENT")]
    pub agent: String,
    /// The event, for agents whose input does not name it.
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
    /// The agent name hooks see (`coordinates.agent`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Give up (failing closed on a gate) after this long.
    #[arg(long, default_value = "10000", value_name = "MS")]
    pub deadline_ms: u64,
    /// The project folder (`hookrt --project-dir`).
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
    /// The lock the service checks the hooks against (`hookrt --lock`).
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// Refuse a folder without a lock (`hookrt --require-lock`).
    #[arg(long)]
    pub require_lock: bool,
    /// Components only (`hookrt --prebuilt`).
    #[arg(long)]
    pub prebuilt: bool,
    /// The build cache (`hookrt --cache-dir`).
    #[arg(long, env = "HOOKRT_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Decide in a process of its own (`hookrt hook --no-service`, the
    /// `hookrt` beside this one), as `$HOOKRT_NO_SERVICE` asks too, read as
    /// `hookrt hook` reads it.
    #[arg(long, env = NO_SERVICE_ENV, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_service: bool,
}

/// The environment variable that makes every command hook decide in its
/// own process (`hookrt hook --no-service`): set, and not one of clap's
/// false values (`0`, `false`, `no`, `off`, `f`, `n`).
pub const NO_SERVICE_ENV: &str = "HOOKRT_NO_SERVICE";

/// Runs `hookrt-hook` with the process's arguments.
pub fn main() -> ExitCode {
    let args = Args::parse();
    if args.no_service {
        return without_service(&args);
    }
    run(&args)
}

/// `--no-service` (or `$HOOKRT_NO_SERVICE`): this process becomes `hookrt hook
/// --no-service` with the same arguments (the `hookrt` beside it), which
/// decides the event itself; stdin is still unread. Failing that, the
/// gate fails closed.
fn without_service(args: &Args) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(match crate::place::hookrt_exe() {
        Ok(exe) => exe,
        Err(e) => return fail_unread(args, &e),
    });
    command.args(["hook", "--no-service", "--agent", &args.agent]);
    for (flag, value) in [
        ("--event", args.event.as_ref().map(Into::into)),
        ("--name", args.name.as_ref().map(Into::into)),
        ("--deadline-ms", Some(args.deadline_ms.to_string().into())),
        (
            "--project-dir",
            args.project_dir.clone().map(PathBuf::into_os_string),
        ),
        ("--lock", args.lock.clone().map(PathBuf::into_os_string)),
        (
            "--cache-dir",
            args.cache_dir.clone().map(PathBuf::into_os_string),
        ),
    ] {
        if let Some(value) = value {
            command.arg(flag).arg::<std::ffi::OsString>(value);
        }
    }
    if args.require_lock {
        command.arg("--require-lock");
    }
    if args.prebuilt {
        command.arg("--prebuilt");
    }
    command.arg(&args.dir);
    let e = command.exec();
    fail_unread(
        args,
        &format!("cannot run `hookrt hook --no-service` (--no-service, or ${NO_SERVICE_ENV}): {e}"),
    )
}

/// Fails as the agent's first gate does, the input unread: whatever it
/// was, a gate's refusal.
fn fail_unread(args: &Args, why: &str) -> ExitCode {
    let command = format!("hookrt-hook --agent {}", args.agent);
    match Bridge::named(&args.agent) {
        Some(bridge) => fail(&command, bridge, bridge.gates().first().copied(), why),
        None => {
            eprintln!("{command}: {why}");
            ExitCode::from(2)
        }
    }
}

/// Forwards the input on stdin to the service and answers, by the deadline.
pub fn run(args: &Args) -> ExitCode {
    let Some(bridge) = Bridge::named(&args.agent) else {
        eprintln!(
            "hookrt-hook: no agent `{}`: give --agent one of {}",
            args.agent,
            Bridge::names()
        );
        return ExitCode::from(2);
    };
    if bridge.protocol().signature.is_some() {
        eprintln!(
            "hookrt-hook: {} reach `hookrt serve` signed by their source, on {}",
            bridge.protocol().label,
            bridge.route()
        );
        return ExitCode::from(2);
    }
    let deadline = Instant::now() + Duration::from_millis(args.deadline_ms);
    let command = format!("hookrt-hook --agent {}", bridge.name());
    let (read, gate) = take_input(
        bridge,
        args.event.as_deref(),
        deadline,
        args.deadline_ms,
        &command,
    );
    fail_at_deadline(&command, args.deadline_ms, deadline);
    let input = match read {
        Ok(input) => input,
        Err(e) => {
            let why = format!("cannot read the hook input on stdin: {e}");
            return fail(&command, bridge, gate, &why);
        }
    };
    let identity = Identity {
        project: args.project_dir.clone(),
        lock: args.lock.clone(),
        require_lock: args.require_lock,
        prebuilt: args.prebuilt,
        cache_dir: args.cache_dir.clone(),
    };
    let place = match Place::of(&args.dir, &identity) {
        Ok(place) => place,
        Err(e) => return fail(&command, bridge, gate, &e),
    };
    match forward(
        &Target::Service(&place),
        bridge,
        args.event.as_deref(),
        args.name.as_deref(),
        &input,
        Duration::from_millis(args.deadline_ms),
    ) {
        Ok(answer) => answered(answer.as_ref()),
        Err(e) => fail(&command, bridge, gate, &e),
    }
}
