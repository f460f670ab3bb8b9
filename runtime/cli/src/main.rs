//! The `hookrt` command: check, build, run and audit an agent folder's hooks.
//! Each command is a file under `commands/`; this is the entry: the global
//! flags, the command hooks' fast parse, logging, and the exit code.

mod args;
mod commands;
mod export;
mod loading;
mod retention;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::Command;
use loading::Loading;

#[derive(Parser)]
#[command(
    name = "hookrt",
    version,
    about = "A WebAssembly-sandboxed hook runtime for AI agent servers"
)]
struct Cli {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    command: Command,
}

/// The options every command takes.
#[derive(clap::Args)]
struct Globals {
    /// More detail on stderr (-v: build and cache decisions, -vv: everything).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Cache folder for built components and precompiled artifacts, outside
    /// any agent folder [default: $XDG_CACHE_HOME/hookrt or ~/.cache/hookrt].
    #[arg(long, global = true, env = "HOOKRT_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Load components (.wasm) only: never run cargo; a source hook is a
    /// problem (also `mode = "prebuilt"` in hookrt.toml).
    #[arg(long, global = true)]
    prebuilt: bool,
    /// The lock to check hooks against (and `hookrt lock` writes), kept
    /// outside the agent folder [default: DIR/hookrt.lock].
    #[arg(long, global = true, value_name = "FILE")]
    lock: Option<PathBuf>,
    /// Refuse to load a folder without a lock (at --lock FILE or DIR/hookrt.lock).
    #[arg(long, global = true)]
    require_lock: bool,
    /// The project folder the `exec`, `read` and `write` grants act on; an agent's
    /// event naming a folder outside it (`cwd`) is refused
    /// [default: the working directory].
    #[arg(long, global = true, value_name = "DIR")]
    project_dir: Option<PathBuf>,
}

impl Globals {
    /// How the global flags ask for an agent folder to be loaded.
    fn loading(self) -> Loading {
        Loading {
            cache_dir: self.cache_dir,
            prebuilt: self.prebuilt,
            enforce_lock: true,
            lock: hookrt::hooks::LockPolicy {
                file: self.lock,
                required: self.require_lock,
            },
            project: self.project_dir,
            cached_only: false,
        }
    }
}

/// `hookrt` with only the agents' command hooks, which an agent starts for
/// every event: building all of [`Cli`]'s commands to parse one was a
/// twentieth of such a process. Whatever it does not take (help, a mistake,
/// any other command) is parsed again by [`Cli`], which answers as always.
#[derive(Parser)]
#[command(name = "hookrt")]
struct BridgeCli {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    command: Bridge,
}

#[derive(Subcommand)]
enum Bridge {
    Hook(commands::hook::HookArgs),
    #[command(name = commands::aliases::CLAUDE_HOOK)]
    ClaudeHook(commands::hook::ClaudeArgs),
}

impl Cli {
    /// The command line, parsed by [`BridgeCli`] when it is a command hook's.
    fn read() -> Cli {
        match BridgeCli::try_parse() {
            Ok(BridgeCli { globals, command }) => Cli {
                globals,
                command: match command {
                    Bridge::Hook(args) => Command::Hook(args),
                    Bridge::ClaudeHook(args) => Command::ClaudeHook(args),
                },
            },
            Err(_) => Cli::parse(),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::read();
    // `hookrt test` records what hooks log in its expectation: not on stderr too.
    init_tracing(cli.globals.verbose, matches!(cli.command, Command::Test(_)));
    match cli.command.execute(cli.globals.loading()) {
        Ok(code) => code,
        // A reader that stopped early (`| head`) is not an error of ours.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hookrt: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(verbose: u8, quiet_hooks: bool) {
    let default = match verbose {
        0 if quiet_hooks => "warn,hookrt=info,hook=off",
        0 => "warn,hookrt=info,hook=info",
        1 => "warn,hookrt=debug,hook=debug",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("HOOKRT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal (and never with NO_COLOR).
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_target(false)
        .without_time()
        .init();
}
