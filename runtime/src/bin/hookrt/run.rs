//! `hookrt run`: JSONL envelopes in, one JSON line per delivery out.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hookrt::{Envelope, Outcome, Runtime};

#[derive(clap::Args)]
pub struct RunArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// JSONL file of event envelopes, or `-` for stdin.
    #[arg(long)]
    pub events: PathBuf,
    /// Stop at the first malformed line instead of reporting it and going on.
    #[arg(long)]
    pub strict: bool,
    /// Include each delivery's log lines and console output in its JSON line.
    #[arg(long)]
    pub logs: bool,
}

pub fn run(rt: &Runtime, args: &RunArgs) -> Result<ExitCode> {
    let input: Box<dyn BufRead> = if args.events.as_os_str() == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(&args.events).with_context(|| format!("cannot open events file {}", args.events.display()))?;
        Box::new(BufReader::new(f))
    };
    let source = args.events.display().to_string();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut counts: BTreeMap<&'static str, u64> = Outcome::ALL.iter().map(|o| (o.as_str(), 0)).collect();
    let (mut events, mut deliveries, mut malformed) = (0u64, 0u64, 0u64);
    for (i, line) in input.lines().enumerate() {
        let n = i + 1;
        let line = line.with_context(|| format!("{source}: cannot read line {n}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let report = Envelope::from_json(&line).and_then(|env| rt.dispatch(&env));
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                malformed += 1;
                eprintln!("hookrt: {source} line {n}: {e}");
                if args.strict {
                    eprintln!("hookrt: stopping at line {n} (--strict)");
                    break;
                }
                continue;
            }
        };
        events += 1;
        for d in &report.deliveries {
            deliveries += 1;
            *counts.entry(d.outcome.as_str()).or_default() += 1;
            let mut v = serde_json::to_value(d)?;
            if args.logs {
                v["logs"] = serde_json::to_value(&d.logs)?;
                v["console"] = serde_json::Value::String(d.console.clone());
            }
            writeln!(out, "{v}")?;
        }
    }
    let summary = serde_json::json!({"summary": {
        "events": events,
        "deliveries": deliveries,
        "outcomes": counts,
        "malformed_lines": malformed,
        "durability": "accepted",
        "note": "events were held in memory only, so hooks saw durability `accepted`, never `persisted`",
    }});
    writeln!(out, "{summary}")?;
    Ok(if malformed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
