//! The commands, one file each with its arguments and an `execute` (as
//! wasmtime's `src/commands/`): [`Command`] is the one list, and
//! [`aliases`] the one table of other names.

pub(crate) mod aliases;
mod audit;
mod build;
mod check;
pub(crate) mod hook;
mod init;
mod install;
pub(crate) mod journal;
pub(crate) mod keygen;
#[cfg(test)]
mod list;

pub(crate) mod lock;
mod mcp;
mod new;
mod package;
mod publish;
mod run;
mod serve;
mod service;
mod test;
mod worker;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::loading::Loading;
use hook::{ClaudeArgs, HookArgs};
use install::{ClaudeCommand, InstallArgs};

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Check an agent folder: discovery, hookrt.toml, and (unless --no-build) that every hook builds and loads.
    Check(check::CheckArgs),
    /// Build every stale hook into a component and precompile it. Building
    /// runs the hooks' build code (build.rs, proc macros) on this machine.
    Build(build::BuildArgs),
    /// Pin every hook: write each crate hook's Cargo.lock where missing or
    /// stale, then DIR/hookrt.lock with each hook's component sha256, world
    /// version and grants. A hook that differs later is refused.
    Lock(lock::LockArgs),
    /// Run JSONL event envelopes through the hooks; print one JSON line per delivery.
    Run(run::RunArgs),
    /// Write a new hook from a template: `hookrt new AGENT/hooks/SLUG --events KIND,...`.
    New(new::NewArgs),
    /// Make a new agent folder with packs switched on: `hookrt init DIR --pack safe-shell,secrets` (docs/packs/).
    Init(init::InitArgs),
    /// Replay a recorded session deterministically and compare with an expectation file.
    Test(test::TestArgs),
    /// Inspect a journal, or re-drive its dead letters.
    #[command(subcommand)]
    Journal(journal::JournalCommand),
    /// Run as an agent's command hook: the event's JSON on stdin, the agent's answer on stdout (docs/agents.md).
    Hook(HookArgs),
    /// Run as a Claude Code command hook: `hookrt hook --agent claude-code` (docs/claude-code.md).
    #[command(name = aliases::CLAUDE_HOOK)]
    ClaudeHook(ClaudeArgs),
    /// Make hookrt the hook of an agent's events its hooks take, in its own hook configuration (docs/agents.md).
    Install(InstallArgs),
    /// Write a locked agent folder as a plugin of the agent's plugin system: `hookrt package --agent claude-code DIR --out OUT` (docs/packs/).
    Package(package::PackageArgs),
    /// Set Claude Code up to run hookrt: `hookrt claude install DIR` (docs/claude-code.md).
    #[command(subcommand, name = aliases::CLAUDE)]
    Claude(ClaudeCommand),
    /// Serve the hooks over HTTP: POST events, decisions and edits (docs/serve.md).
    Serve(serve::ServeArgs),
    /// The resident service of an agent folder for this user, which `hookrt
    /// hook --service` starts on demand: run, status, stop, logs (docs/service.md).
    #[command(subcommand)]
    Service(service::ServiceCommand),
    /// Serve the hooks as MCP interceptors of tools/call over stdio (SEP-2624, a draft; docs/agents.md).
    Mcp(mcp::McpArgs),
    /// Run the hooks as one worker of a JetStream fleet, or list and re-drive
    /// the fleet's dead letters (docs/worker.md).
    Worker(worker::WorkerCommand),
    /// Publish a JSONL file's envelopes to JetStream, each to its session's subject.
    Publish(publish::PublishArgs),
    /// Make an Ed25519 key that signs the journal's trail (`--signing-key`):
    /// FILE (the secret, owner-only) and FILE.pub (what auditors verify with).
    Keygen(keygen::KeygenArgs),
    /// Show what each hook is and what binds it; `audit coverage J`: which
    /// gates decided each tool call a journal saw (docs/journal.md).
    Audit(audit::AuditArgs),
}

impl Command {
    /// Runs the command (an alias as what it stands for, [`aliases::ALIASES`]).
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        match self {
            Command::Check(args) => args.execute(loading),
            Command::Build(args) => args.execute(loading),
            Command::Lock(args) => args.execute(loading),
            Command::Run(args) => args.execute(loading),
            Command::New(args) => args.execute(loading),
            Command::Init(args) => args.execute(loading),
            Command::Test(args) => args.execute(loading),
            Command::Journal(cmd) => cmd.execute(),
            Command::Hook(args) => Ok(hook::hook(&args, loading)),
            Command::ClaudeHook(args) => Command::Hook(HookArgs::from(&args)).execute(loading),
            Command::Install(args) => install::install(&args, &loading),
            Command::Package(args) => args.execute(loading),
            // `install --agent claude-code`, in install.rs.
            Command::Claude(cmd) => install::claude(cmd, &loading),
            Command::Serve(args) => args.execute(loading),
            Command::Service(cmd) => cmd.execute(loading),
            Command::Mcp(args) => args.execute(loading),
            Command::Worker(cmd) => cmd.execute(loading),
            Command::Publish(args) => args.execute(),
            Command::Keygen(args) => args.execute(),
            Command::Audit(args) => args.execute(loading),
        }
    }
}
