//! `hookrt worker`, and its dead letters (`hookrt worker dead|redrive`):
//! hooks fed by NATS JetStream (hookrt-worker, docs/worker.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use hookrt::Runtime;
use hookrt_worker::{Names, WorkerOptions};

use crate::loading::Loading;

/// `hookrt worker DIR ...`, or one of its subcommands.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct WorkerCommand {
    /// Dead letters: list or re-drive them.
    #[command(subcommand)]
    pub action: Option<DeadCommand>,
    #[command(flatten)]
    pub run: WorkerArgs,
}

/// Where a group of workers lives.
#[derive(clap::Args, Clone)]
pub(crate) struct GroupArgs {
    /// The NATS server URL.
    #[arg(long)]
    pub nats: String,
    /// The durable name the group's workers share.
    #[arg(long, default_value = "hooks")]
    pub durable: String,
    /// The subject prefix the events live under: a dead letter is re-driven
    /// only to a subject under it.
    #[arg(long, default_value = hookrt_worker::DEFAULT_PREFIX)]
    pub prefix: String,
}

#[derive(clap::Subcommand)]
pub(crate) enum DeadCommand {
    /// List the group's dead letters, one JSON line each (oldest first).
    Dead {
        #[command(flatten)]
        group: GroupArgs,
    },
    /// Publish dead letters again to their subjects (only their unfinished
    /// deliveries run), removing each from the dead letters once stored.
    Redrive {
        #[command(flatten)]
        group: GroupArgs,
        /// Only these dead letters (their `seq` in `hookrt worker dead`).
        #[arg(long = "seq", value_name = "SEQ")]
        seqs: Vec<u64>,
        /// Every dead letter of the group.
        #[arg(long, conflicts_with = "seqs")]
        all: bool,
    },
}

#[derive(clap::Args)]
pub(crate) struct WorkerArgs {
    /// The agent folder.
    pub dir: Option<PathBuf>,
    /// The NATS server URL.
    #[arg(long)]
    pub nats: Option<String>,
    /// The durable name the group's workers share.
    #[arg(long, default_value = "hooks")]
    pub durable: String,
    #[command(flatten)]
    pub stream: crate::args::StreamArgs,
    /// Hooks' `state` in this SQLite file (in memory without).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// How long JetStream waits for an ack before redelivering a message.
    #[arg(long, default_value = "30000", value_name = "MS")]
    pub ack_wait_ms: u64,
    /// Deliveries of a message in all, then it is a dead letter (0: unlimited).
    #[arg(long, default_value = "5")]
    pub max_deliver: i64,
    /// Waits before each redelivery after an ack timeout, e.g. `1000,5000,30000`
    /// (the consumer's backoff; the last repeats).
    #[arg(long, value_name = "MS,MS,...", value_delimiter = ',')]
    pub backoff_ms: Vec<u64>,
    /// How long a partition's lease lasts without renewal: how soon a dead
    /// worker's partitions move to another.
    #[arg(long, default_value = "10000", value_name = "MS")]
    pub lease_ttl_ms: u64,
    /// Hooks running at once in this worker (default: the cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print one JSON line per delivery.
    #[arg(long)]
    pub print_deliveries: bool,
    /// How long to let in-flight messages finish at shutdown.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub drain_timeout: u64,
}

impl WorkerCommand {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        match (self.action, &self.run.dir, &self.run.nats) {
            (Some(action), _, _) => dead(action),
            (None, Some(dir), Some(nats)) => loading.loaded(dir, |rt| worker(rt, &self.run, nats)),
            (None, _, _) => bail!(
                "hookrt worker needs an agent folder and --nats URL (or a subcommand: dead, redrive); see hookrt worker --help"
            ),
        }
    }
}

/// The async runtime the NATS client runs on (`worker`, `publish`).
pub(super) fn tokio() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn worker(rt: Runtime, args: &WorkerArgs, nats: &str) -> Result<ExitCode> {
    if let Some(w) = rt.unlocked_warning() {
        tracing::warn!("{w}");
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let options = WorkerOptions {
        nats: nats.to_owned(),
        names: Names {
            stream: args.stream.stream.clone(),
            prefix: args.stream.prefix.clone(),
            durable: args.durable.clone(),
            partitions: args.stream.partitions,
            replicas: usize::from(args.stream.replicas),
        },
        state: args.state.clone(),
        ack_wait: Duration::from_millis(args.ack_wait_ms),
        max_deliver: args.max_deliver,
        backoff: args
            .backoff_ms
            .iter()
            .map(|ms| Duration::from_millis(*ms))
            .collect(),
        lease_ttl: Duration::from_millis(args.lease_ttl_ms),
        done_ttl: hookrt_worker::DEFAULT_DONE_TTL,
        threads,
        print_deliveries: args.print_deliveries,
        drain_timeout: Duration::from_secs(args.drain_timeout),
    };
    let (stream, durable) = (args.stream.stream.clone(), args.durable.clone());
    let summary = tokio()?.block_on(hookrt_worker::run(
        rt,
        options,
        hookrt_serve::shutdown_signal(),
        || {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "consuming {stream} as {durable}");
            let _ = out.flush();
        },
    ))?;
    // Whoever read stdout may be gone at shutdown: not a failure of the worker's.
    let _ = summary.line().write(&mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

fn dead(cmd: DeadCommand) -> Result<ExitCode> {
    let rt = tokio()?;
    match cmd {
        DeadCommand::Dead { group } => {
            let letters = rt.block_on(hookrt_worker::dead_letters(&group.nats, &group.durable))?;
            let mut out = std::io::stdout().lock();
            for l in letters {
                writeln!(out, "{}", serde_json::to_string(&l)?)?;
            }
        }
        DeadCommand::Redrive { group, seqs, all } => {
            if seqs.is_empty() && !all {
                bail!(
                    "say which dead letters to re-drive: --seq SEQ (from `hookrt worker dead`), or --all"
                );
            }
            let only = (!all).then_some(seqs.as_slice());
            let done = rt.block_on(hookrt_worker::redrive(
                &group.nats,
                &group.durable,
                &group.prefix,
                only,
            ))?;
            let mut out = std::io::stdout().lock();
            for r in done {
                writeln!(out, "{}", serde_json::to_string(&r)?)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
