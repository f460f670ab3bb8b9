//! `hookrt test DIR --events FILE --expect FILE [--update [--accept-failures]]`:
//! replays a recorded session through the hooks deterministically and
//! compares what they did with an expectation file (`hookrt::replay`). An
//! update never records a failed delivery without being told to.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hookrt::{Envelope, Runtime};

use crate::loading::Loading;

/// Arguments of `hookrt test`.
#[derive(clap::Args)]
pub(crate) struct TestArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// The recorded session: JSONL envelopes, delivered as written (a repeated
    /// id with `"attempt": 2` is a redelivery and reaches the hooks again).
    #[arg(long)]
    pub events: PathBuf,
    /// The expectation: what each hook logged, decided and edited, and its outcome
    /// (JSONL, written by --update).
    #[arg(long)]
    pub expect: PathBuf,
    /// Write (or rewrite) the expectation from this replay instead of comparing.
    /// A delivery that failed (error, trap, timeout, fuel or memory) stops it.
    #[arg(long)]
    pub update: bool,
    /// With --update: record failed deliveries as expected instead of stopping.
    #[arg(long, requires = "update")]
    pub accept_failures: bool,
}

impl TestArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        loading.loaded_for_author(&self.dir, |rt, _unlocked| test(rt, &self))
    }
}

/// Replays and compares (or writes, with `--update`).
fn test(rt: Runtime, args: &TestArgs) -> Result<ExitCode> {
    let text = fs::read_to_string(&args.events)
        .with_context(|| format!("cannot read the events file {}", args.events.display()))?;
    let mut events = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e = Envelope::from_json(line).with_context(|| {
            format!("{}:{}: not a valid envelope", args.events.display(), n + 1)
        })?;
        events.push(e);
    }
    let replay = hookrt::replay::replay(&rt, &events)?;
    if args.update {
        let failures = replay.failures();
        if !failures.is_empty() && !args.accept_failures {
            for f in &failures {
                eprintln!("failed: {f}");
            }
            eprintln!(
                "{} delivery(ies) failed: {} not written; fix the hook, or run again with --accept-failures to record the failures as expected",
                failures.len(),
                args.expect.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        // Replaced, never written through a link planted at its name.
        hookrt::hooks::replace_file(&args.expect, replay.to_jsonl().as_bytes())
            .with_context(|| format!("cannot write {}", args.expect.display()))?;
        println!(
            "wrote {} record(s) of {} event(s) to {}",
            replay.records.len(),
            events.len(),
            args.expect.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let expected = match hookrt::hooks::read_plain_file(&args.expect) {
        Ok(Some(t)) => t,
        Ok(None) => anyhow::bail!(
            "{} does not exist: run `hookrt test {} --events {} --expect {} --update` to record what the hooks do now",
            args.expect.display(),
            args.dir.display(),
            args.events.display(),
            args.expect.display()
        ),
        Err(e) => anyhow::bail!("{}: {e}", args.expect.display()),
    };
    let diffs = replay
        .compare(&expected)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.expect.display()))?;
    if diffs.is_empty() {
        println!(
            "ok: {} record(s) of {} event(s) match {}",
            replay.records.len(),
            events.len(),
            args.expect.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for d in &diffs {
        eprintln!("{d}");
    }
    eprintln!(
        "{} difference(s) from {}; if the change is intended, run again with --update",
        diffs.len(),
        args.expect.display()
    );
    Ok(ExitCode::FAILURE)
}
