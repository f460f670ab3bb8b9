//! `hookrt publish --nats URL FILE`: a JSONL file's envelopes to JetStream,
//! each to its session's subject (docs/worker.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hookrt::Envelope;

use crate::commands::worker::tokio;

#[derive(clap::Args)]
pub(crate) struct PublishArgs {
    /// The NATS server URL.
    #[arg(long)]
    pub nats: String,
    #[command(flatten)]
    pub stream: crate::args::StreamArgs,
    /// Publish every line as it is to this one subject, unchecked and
    /// without a `Nats-Msg-Id` (for payloads that are not envelopes).
    #[arg(long, value_name = "SUBJECT")]
    pub raw_subject: Option<String>,
    /// Ask for decision and edit events' resolutions on this subject
    /// (the `Hookrt-Reply-To` header).
    #[arg(long, value_name = "SUBJECT")]
    pub reply_to: Option<String>,
    /// JSONL file: each non-blank line is one envelope.
    pub file: PathBuf,
}
impl PublishArgs {
    pub(crate) fn execute(self) -> Result<ExitCode> {
        publish(&self)
    }
}

fn publish(args: &PublishArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l))
        .collect();
    let rt = tokio()?;
    if let Some(subject) = &args.raw_subject {
        let raw: Vec<String> = lines.iter().map(|(_, l)| (*l).to_owned()).collect();
        let n = rt.block_on(hookrt_worker::publish_raw(&args.nats, subject, &raw))?;
        println!("{}", serde_json::json!({ "published": n }));
        return Ok(ExitCode::SUCCESS);
    }
    // Every line is checked before anything is sent: a bad file publishes nothing.
    let mut envelopes = Vec::new();
    for (n, line) in &lines {
        let e = Envelope::from_json(line).map_err(|e| {
            anyhow::anyhow!("{}:{n}: not a valid envelope: {e}", args.file.display())
        })?;
        envelopes.push(e);
    }
    rt.block_on(async {
        let publisher = hookrt_worker::publisher(
            &args.nats,
            &args.stream.stream,
            &args.stream.prefix,
            args.stream.partitions,
            usize::from(args.stream.replicas),
        )
        .await?;
        let mut pending = Vec::new();
        for e in &envelopes {
            let mut headers = async_nats_headers();
            if let Some(to) = &args.reply_to {
                headers.insert(hookrt_worker::REPLY_HEADER, to.as_str());
            }
            pending.push(publisher.send(e, headers).await?);
        }
        let mut out = std::io::stdout().lock();
        for p in pending {
            // `persisted` only here: the stream's ack came back.
            let receipt = p.persisted().await?;
            writeln!(out, "{}", serde_json::to_string(&receipt)?)?;
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn async_nats_headers() -> hookrt_worker::HeaderMap {
    hookrt_worker::HeaderMap::new()
}
