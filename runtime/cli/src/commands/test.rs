//! `hookrt test DIR --events FILE --expect FILE [--update [--accept-failures]]
//! [--watch]`: replays a recorded session through the hooks deterministically
//! and compares what they did with an expectation file (`hookrt::replay`). An
//! update never records a failed delivery without being told to. `--watch`
//! tests again each time a file of the folder or the events changes. The
//! session may be what the agent really sent (`hookrt hook --record`, or an
//! agent's bare inputs with `--agent`), read through the agent's bridge
//! (`hookrt::front::record`).

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hookrt::front::bridge::Bridge;
use hookrt::front::record::Recorded;
use hookrt::{Envelope, Runtime};

use crate::loading::Loading;

/// Arguments of `hookrt test`.
#[derive(clap::Args)]
pub(crate) struct TestArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// The recorded session: JSONL envelopes, delivered as written (a repeated
    /// id with `"attempt": 2` is a redelivery and reaches the hooks again),
    /// or the lines `hookrt hook --record` wrote (each read through its
    /// agent's bridge).
    #[arg(long)]
    pub events: PathBuf,
    /// The events are this agent's own hook inputs (claude-code, codex, …),
    /// as it sends them: each line is read through its bridge.
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// With --agent: the event of inputs that do not name it (the hook
    /// entry's `--event`).
    #[arg(long, value_name = "EVENT", requires = "agent")]
    pub event: Option<String>,
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
    /// Test again each time a file of the agent folder or the events file
    /// changes (a hook saved: rebuilt, replayed, compared), until stopped.
    #[arg(long, conflicts_with = "update")]
    pub watch: bool,
}

/// How often `--watch` looks at the files.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

impl TestArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        if !self.watch {
            return loading.loaded_for_author(&self.dir, |rt, _unlocked| test(rt, &self));
        }
        let mut seen = self.files();
        loop {
            // A load or build that fails is said, and the next save tried.
            match loading
                .clone()
                .loaded_for_author(&self.dir, |rt, _unlocked| test(rt, &self))
            {
                Ok(_) => {}
                Err(e) => eprintln!("error: {e:#}"),
            }
            eprintln!(
                "watching {} and {} (Ctrl-C to stop)",
                self.dir.display(),
                self.events.display()
            );
            loop {
                std::thread::sleep(WATCH_EVERY);
                let now = self.files();
                if now != seen {
                    seen = now;
                    break;
                }
            }
            eprintln!("changed: testing again");
        }
    }

    /// Every file of the agent folder and the events file, with its size and
    /// modification time: what `--watch` compares (the expectation left out).
    fn files(&self) -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
        let mut found = Vec::new();
        let mut dirs = vec![self.dir.clone()];
        let mut note = |path: PathBuf, m: &fs::Metadata| {
            if path != self.expect {
                found.push((path, m.len(), m.modified().ok()));
            }
        };
        if let Ok(m) = fs::metadata(&self.events) {
            note(self.events.clone(), &m);
        }
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(m) = entry.metadata() else { continue };
                if m.is_dir() {
                    dirs.push(entry.path());
                } else {
                    note(entry.path(), &m);
                }
            }
        }
        found.sort();
        found
    }
}

/// The envelopes of the events file: envelope lines as written, and each
/// recorded or bare agent input read through its bridge, the same every time.
fn envelopes(args: &TestArgs, text: &str) -> Result<Vec<Envelope>> {
    let agent = match &args.agent {
        None => None,
        Some(name) => Some(Bridge::named(name).with_context(|| {
            format!("no agent `{name}`: give --agent one of {}", Bridge::names())
        })?),
    };
    let file = args.events.display();
    let mut events = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let recorded = serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("hookrt_record").is_some());
        if agent.is_some() || recorded {
            let read = Recorded::parse(line, n + 1, agent, args.event.as_deref())
                .and_then(|r| r.event(n + 1))
                .with_context(|| format!("{file}: cannot replay this input"))?;
            events.push(read.envelope);
            continue;
        }
        let e = Envelope::from_json(line)
            .with_context(|| format!("{file}:{}: not a valid envelope", n + 1))?;
        events.push(e);
    }
    Ok(events)
}

/// Replays and compares (or writes, with `--update`).
fn test(rt: Runtime, args: &TestArgs) -> Result<ExitCode> {
    let text = fs::read_to_string(&args.events)
        .with_context(|| format!("cannot read the events file {}", args.events.display()))?;
    let events = envelopes(args, &text)?;
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
