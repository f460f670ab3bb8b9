//! `hookrt worker` and `hookrt publish`: hooks fed by NATS JetStream
//! (hookrt-worker, docs/worker.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use hookrt::Runtime;
use hookrt_worker::WorkerOptions;

#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// The NATS server URL.
    #[arg(long)]
    pub nats: String,
    /// The JetStream stream (created for --subject if missing).
    #[arg(long)]
    pub stream: String,
    /// The subject to consume.
    #[arg(long)]
    pub subject: String,
    /// The durable consumer: workers with the same name share the messages.
    #[arg(long)]
    pub durable: String,
    /// This worker's journal: a message is acked only after its commit.
    #[arg(long)]
    pub journal: PathBuf,
    /// How long JetStream waits for an ack before redelivering a message.
    #[arg(long, default_value = "30000", value_name = "MS")]
    pub ack_wait_ms: u64,
    /// Messages pulled at once.
    #[arg(long, default_value = "256")]
    pub batch: usize,
    /// How long to let queued deliveries finish at shutdown before cancelling them.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub drain_timeout: u64,
}

#[derive(clap::Args)]
pub struct PublishArgs {
    /// The NATS server URL.
    #[arg(long)]
    pub nats: String,
    /// The subject (a stream must capture it).
    #[arg(long)]
    pub subject: String,
    /// Ask for decision and edit events' resolutions on this subject
    /// (the `Hookrt-Reply-To` header).
    #[arg(long, value_name = "SUBJECT")]
    pub reply_to: Option<String>,
    /// JSONL file: each non-blank line is published as one message.
    pub file: PathBuf,
}

fn tokio() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub fn worker(rt: Runtime, args: &WorkerArgs) -> Result<ExitCode> {
    let options = WorkerOptions {
        nats: args.nats.clone(),
        stream: args.stream.clone(),
        subject: args.subject.clone(),
        durable: args.durable.clone(),
        journal: args.journal.clone(),
        ack_wait: Duration::from_millis(args.ack_wait_ms),
        batch: args.batch.max(1),
        drain_timeout: Duration::from_secs(args.drain_timeout),
        workers: 1,
    };
    let (subject, durable) = (args.subject.clone(), args.durable.clone());
    let stats = tokio()?.block_on(hookrt_worker::run(
        rt,
        options,
        hookrt_serve::shutdown_signal(),
        || {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "consuming {subject} as {durable}");
            let _ = out.flush();
        },
    ))?;
    println!("{}", serde_json::json!({ "summary": stats }));
    Ok(ExitCode::SUCCESS)
}

pub fn publish(args: &PublishArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let n = tokio()?.block_on(hookrt_worker::publish(
        &args.nats,
        &args.subject,
        &lines,
        args.reply_to.as_deref(),
    ))?;
    println!("{}", serde_json::json!({ "published": n }));
    Ok(ExitCode::SUCCESS)
}
