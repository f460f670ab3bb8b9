//! The `hookrt` command: check, build, run and audit an agent folder's hooks.

mod args;
mod coverage;
mod export;
mod forward;
mod hook;
mod install;
mod journal;
mod new;
mod new_py;
mod new_ts;
mod replay;
mod retention;
mod run;
mod serve;
mod worker;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use hookrt::BuildOptions;
use hookrt::hooks::BuildEvent;
use hookrt::{Problems, Runtime};
use indicatif::{ProgressBar, ProgressStyle};

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
    Hook(hook::HookArgs),
    ClaudeHook(hook::ClaudeArgs),
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

#[derive(Subcommand)]
enum Command {
    /// Check an agent folder: discovery, hookrt.toml, and (unless --no-build) that every hook builds and loads.
    Check {
        /// The agent folder (holds hooks/ and hookrt.toml).
        dir: PathBuf,
        /// Only check the layout and configuration; do not build or load.
        #[arg(long)]
        no_build: bool,
    },
    /// Build every stale hook into a component and precompile it. Building
    /// runs the hooks' build code (build.rs, proc macros) on this machine.
    Build {
        /// The agent folder.
        dir: PathBuf,
        /// Also write a prebuilt agent folder here: every component as
        /// OUT/hooks/<slug>.wasm (OUT/subagents/<id>/hooks/<slug>.wasm) and
        /// a copy of hookrt.toml, to run with --prebuilt.
        #[arg(long, value_name = "OUT")]
        out: Option<PathBuf>,
    },
    /// Pin every hook: write DIR/hookrt.lock with each hook's component
    /// sha256, world version and grants. A hook that differs later is refused.
    Lock {
        /// The agent folder.
        dir: PathBuf,
    },
    /// Run JSONL event envelopes through the hooks; print one JSON line per delivery.
    Run(run::RunArgs),
    /// Write a new hook from a template: `hookrt new AGENT/hooks/SLUG --events KIND,...`.
    New(new::NewArgs),
    /// Replay a recorded session deterministically and compare with an expectation file.
    Test(replay::TestArgs),
    /// Inspect a journal, or re-drive its dead letters.
    #[command(subcommand)]
    Journal(journal::JournalCommand),
    /// Run as an agent's command hook: the event's JSON on stdin, the agent's answer on stdout (docs/agents.md).
    Hook(hook::HookArgs),
    /// Run as a Claude Code command hook: `hookrt hook --agent claude-code` (docs/claude-code.md).
    ClaudeHook(hook::ClaudeArgs),
    /// Make hookrt the hook of every event of an agent, in its own hook configuration (docs/agents.md).
    Install(install::InstallArgs),
    /// Set Claude Code up to run hookrt: `hookrt claude install DIR` (docs/claude-code.md).
    #[command(subcommand)]
    Claude(install::ClaudeCommand),
    /// Serve the hooks over HTTP: POST events, decisions and edits (docs/serve.md).
    Serve(serve::ServeArgs),
    /// Run the hooks as one worker of a JetStream fleet, or list and re-drive
    /// the fleet's dead letters (docs/worker.md).
    Worker(worker::WorkerCommand),
    /// Publish a JSONL file's envelopes to JetStream, each to its session's subject.
    Publish(worker::PublishArgs),
    /// Make an Ed25519 key that signs the journal's trail (`--signing-key`):
    /// FILE (the secret, owner-only) and FILE.pub (what auditors verify with).
    Keygen {
        /// Where to write the secret key; FILE.pub gets the public key.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Show what each hook is and what binds it; `audit coverage J`: which
    /// gates decided each tool call a journal saw (docs/journal.md).
    Audit(AuditArgs),
}

/// `hookrt audit DIR [--json]`, or `hookrt audit coverage J [--json]`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct AuditArgs {
    #[command(subcommand)]
    action: Option<AuditCommand>,
    /// The agent folder.
    #[arg(required = true)]
    dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Proof of coverage: every tool call in a journal, the gates that
    /// decided it, and the calls no gate covered (exit 1 when any is flagged,
    /// 2 when the journal cannot be read).
    Coverage {
        /// The journal file (`hookrt run --journal`, `hookrt serve --journal`).
        journal: PathBuf,
        /// Print one JSON document instead of tables.
        #[arg(long)]
        json: bool,
        /// The public key the journal's trail must be signed with; the trail
        /// is verified first either way (`hookrt journal verify`).
        #[arg(long, value_name = "FILE")]
        key: Option<PathBuf>,
        /// With `--key`: accept trail entries after the last checkpoint.
        #[arg(long, requires = "key")]
        allow_unsigned_tail: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::read();
    // `hookrt test` records what hooks log in its expectation: not on stderr too.
    init_tracing(cli.globals.verbose, matches!(cli.command, Command::Test(_)));
    match execute(cli) {
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

fn execute(cli: Cli) -> Result<ExitCode> {
    let cache = Loading {
        cache_dir: cli.globals.cache_dir,
        prebuilt: cli.globals.prebuilt,
        enforce_lock: true,
        lock: hookrt::hooks::LockPolicy {
            file: cli.globals.lock,
            required: cli.globals.require_lock,
        },
    };
    match cli.command {
        Command::Check { dir, no_build } => check(&dir, no_build, cache),
        Command::Build { dir, out } => loaded(&dir, cache, |rt| build(&rt, out.as_deref())),
        // Locking pins the folder as it is now, drifted or not.
        Command::Lock { dir } => {
            let file = cache.lock.path(&dir);
            loaded(&dir, cache.without_lock(), |rt| lock(&rt, &file))
        }
        Command::Run(args) => loaded(&args.dir, cache, |rt| run::run(rt, &args)),
        Command::New(args) if new_ts::wants(&args) => {
            new_ts::new(&args).map(|()| ExitCode::SUCCESS)
        }
        Command::New(args) if new_py::wants(&args) => {
            new_py::new(&args).map(|()| ExitCode::SUCCESS)
        }
        Command::New(args) => new::new(&args).map(|()| ExitCode::SUCCESS),
        Command::Test(args) => loaded(&args.dir, cache, |rt| replay::test(rt, &args)),
        Command::Serve(args) => {
            // Hot reloads load the folder the same way.
            let build = options(&args.dir, cache.clone());
            loaded(&args.dir, cache, |rt| serve::serve(rt, &args, build))
        }
        Command::Worker(cmd) => match (cmd.action, &cmd.run.dir, &cmd.run.nats) {
            (Some(action), _, _) => worker::dead(action),
            (None, Some(dir), Some(nats)) => {
                loaded(dir, cache, |rt| worker::worker(rt, &cmd.run, nats))
            }
            (None, _, _) => anyhow::bail!(
                "hookrt worker needs an agent folder and --nats URL (or a subcommand: dead, redrive); see hookrt worker --help"
            ),
        },
        Command::Publish(args) => worker::publish(&args),
        Command::Journal(cmd) => journal::journal(cmd),
        Command::Keygen { out } => journal::keygen(&out),
        Command::Hook(args) => Ok(hook::hook(&args, options(&args.dir, cache))),
        Command::ClaudeHook(args) => Ok(hook::hook(
            &hook::HookArgs::from(&args),
            options(&args.dir, cache),
        )),
        Command::Install(args) => install::install(&args, &cache.lock),
        Command::Claude(cmd) => install::claude(cmd, &cache.lock),
        // The audit shows drift instead of refusing to load over it.
        Command::Audit(AuditArgs {
            action:
                Some(AuditCommand::Coverage {
                    journal,
                    json,
                    key,
                    allow_unsigned_tail,
                }),
            ..
        }) => {
            let key = journal::read_key(key.as_deref())?;
            let expect = hookrt::journal::Expect {
                key: key.as_ref(),
                allow_unsigned_tail,
                head: None,
            };
            Ok(coverage::coverage(&journal, json, &expect))
        }
        Command::Audit(AuditArgs { dir, json, .. }) => {
            let dir = dir.context("hookrt audit needs an agent folder (or `coverage J`)")?;
            loaded(&dir, cache.without_lock(), |rt| audit(&rt, json))
        }
    }
}

/// Loads `dir` and runs `then` on its hooks, or reports why they did not load.
fn loaded(
    dir: &Path,
    loading: Loading,
    then: impl FnOnce(Runtime) -> Result<ExitCode>,
) -> Result<ExitCode> {
    match load(dir, loading) {
        Ok(rt) => then(rt),
        Err(p) => Ok(report(&p)),
    }
}

/// `hookrt check`: the folder's problems, or that its hooks load cleanly.
fn check(dir: &Path, no_build: bool, loading: Loading) -> Result<ExitCode> {
    if no_build {
        return Ok(match hookrt::check(dir) {
            Ok((d, _)) => {
                println!("ok: {} hook(s) in {}", d.hooks.len(), dir.display());
                ExitCode::SUCCESS
            }
            Err(p) => report(&p),
        });
    }
    loaded(dir, loading, |rt| {
        for w in rt.hooks().iter().flat_map(hookrt::audit::author_warnings) {
            eprintln!("warning: {w}");
        }
        if let Some(w) = rt.unlocked_warning() {
            eprintln!("warning: {w}");
        }
        println!(
            "ok: {} hook(s) in {} build, load and subscribe cleanly",
            rt.hooks().len(),
            dir.display()
        );
        Ok(ExitCode::SUCCESS)
    })
}

/// `hookrt build`: each hook's component digest, and a prebuilt folder with `--out`.
fn build(rt: &Runtime, out: Option<&Path>) -> Result<ExitCode> {
    for h in rt.hooks() {
        println!("{:<32} {}", h.id(), h.component_sha256);
    }
    if let Some(out) = out {
        export::write_prebuilt(rt, out)?;
        eprintln!(
            "wrote a prebuilt agent folder to {} (run it with --prebuilt)",
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `hookrt lock`: pins every loaded hook in `file` (`hookrt.lock`, or `--lock FILE`).
fn lock(rt: &Runtime, file: &Path) -> Result<ExitCode> {
    hookrt::hooks::Lock::of(rt.hooks())
        .write(file)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!("locked {} hook(s) in {}", rt.hooks().len(), file.display());
    Ok(ExitCode::SUCCESS)
}

/// `hookrt audit`: what each hook may do, as text or JSON.
fn audit(rt: &Runtime, json: bool) -> Result<ExitCode> {
    let report = hookrt::audit::audit(rt);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(ExitCode::SUCCESS)
}

fn report(problems: &Problems) -> ExitCode {
    eprint!("{problems}");
    ExitCode::FAILURE
}

/// How the command line asks for an agent folder to be loaded.
#[derive(Clone)]
struct Loading {
    cache_dir: Option<PathBuf>,
    prebuilt: bool,
    enforce_lock: bool,
    lock: hookrt::hooks::LockPolicy,
}

impl Loading {
    /// The same, with `hookrt.lock` not enforced (lock and audit read drift).
    fn without_lock(self) -> Loading {
        Loading {
            enforce_lock: false,
            ..self
        }
    }
}

/// The build options the global flags ask for.
fn options(dir: &Path, loading: Loading) -> BuildOptions {
    let mut opts = BuildOptions::for_agent(dir);
    if let Some(c) = loading.cache_dir {
        opts.cache_dir = c;
    }
    opts.prebuilt = loading.prebuilt;
    opts.enforce_lock = loading.enforce_lock;
    opts.lock = loading.lock;
    opts
}

/// Loads the agent folder with a progress bar while cargo compiles.
fn load(dir: &Path, loading: Loading) -> Result<Runtime, Problems> {
    let opts = options(dir, loading);
    let started = Instant::now();
    let bar = ProgressBar::hidden();
    let mut stale = 0;
    let rt = Runtime::load_blocking(dir, &opts, &mut |event| match event {
        BuildEvent::Planned { stale: s, cached } => {
            stale = s;
            tracing::debug!(stale = s, cached, "build plan");
            if s > 0 {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} building {msg} ({pos} crates compiled, {elapsed})",
                    )
                    .expect("static template"),
                );
                bar.set_message(format!("{s} hook(s)"));
                bar.enable_steady_tick(std::time::Duration::from_millis(120));
            }
        }
        BuildEvent::CrateCompiled(name) | BuildEvent::Componentized(name) => {
            bar.inc(1);
            bar.set_message(name);
        }
    });
    bar.finish_and_clear();
    let rt = rt?;
    let cranelift = rt.hooks().iter().filter(|h| h.compiled).count();
    tracing::info!(
        "{} hook(s) ready in {} ms: {stale} built by cargo, {cranelift} compiled by Cranelift, {} loaded from cache; {} allocator",
        rt.hooks().len(),
        started.elapsed().as_millis(),
        rt.hooks().len() - cranelift,
        rt.allocator().name()
    );
    Ok(rt)
}
