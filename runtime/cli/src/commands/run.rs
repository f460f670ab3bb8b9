//! `hookrt run`: JSONL envelopes in, one JSON line per delivery out.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use hookrt::front::input::{self, InputFormat, MAX_LINE_BYTES, Reader};
use hookrt::front::line::write_delivery;
use hookrt::front::summary::Summary;
use hookrt::{
    HookService, Observation, Observer, PendingReceipt, Runtime, ServiceOptions, Transport,
};

use crate::loading::Loading;

/// The shape of the input lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// hookrt envelopes, one per line (docs/envelope.md).
    Jsonl,
    /// Eve's NDJSON session stream (docs/adr/0002-eve-bridge.md).
    Eve,
}

impl RunArgs {
    /// What the input lines are, for the front-end kit's reader.
    fn input_format(&self) -> InputFormat {
        match self.format {
            Format::Jsonl => InputFormat::Jsonl,
            Format::Eve => InputFormat::Eve {
                agent: self.agent.clone().unwrap_or_default(),
                session: self.session.clone().unwrap_or_default(),
                subagent: self.subagent.clone(),
            },
        }
    }
}

/// Receipts waited for at once; bounds memory on long streams.
const RECEIPT_WINDOW: usize = 1024;

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// JSONL file of event envelopes, or `-` for stdin. Optional with --journal
    /// (then only unacked deliveries from earlier runs are delivered).
    #[arg(long, required_unless_present = "journal")]
    pub events: Option<PathBuf>,
    /// Commit every event to this journal (SQLite) before any hook sees it:
    /// durability `persisted`, at-least-once delivery across crashes.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// Stop at the first malformed line instead of reporting it and going on.
    #[arg(long)]
    pub strict: bool,
    /// Include each delivery's log lines and console output in its JSON line.
    #[arg(long)]
    pub logs: bool,
    /// Print the whole agent state of edit events (it can hold tool outputs and
    /// secrets; by default only whether it changed and each hook's account).
    #[arg(long)]
    pub state: bool,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArgs,
    /// What the events are: hookrt envelopes (`jsonl`), or Eve's NDJSON
    /// session stream as it is (`eve`; needs --agent and --session).
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// With --format eve: the agent's name (Eve's lines do not carry it).
    #[arg(long, required_if_eq("format", "eve"))]
    pub agent: Option<String>,
    /// With --format eve: the session id, as in Eve's stream URL
    /// `/eve/v1/session/<id>/stream` (a whole URL of that shape is accepted).
    #[arg(long, required_if_eq("format", "eve"))]
    pub session: Option<String>,
    /// With --format eve: the stream is subagent NAME's own child session,
    /// so its events go to `subagents/NAME/hooks/`.
    #[arg(long, value_name = "NAME")]
    pub subagent: Option<String>,
    /// With --journal: how long an event whose every delivery finished is
    /// kept (dead letters and pending deliveries are kept whatever their
    /// age), e.g. `90s`, `30m`, `12h`, `7d`, or `forever`. An id re-sent after
    /// its event was pruned is delivered again.
    #[arg(long, default_value = "7d", value_parser = crate::retention::parse_retention, value_name = "AGE")]
    pub retention: crate::retention::Retention,
    /// How long to let queued deliveries finish at the end before cancelling them.
    #[arg(long, default_value = "30", value_name = "SECONDS")]
    pub drain_timeout: u64,
    #[command(flatten)]
    pub trail: crate::args::TrailArgs,
}

impl RunArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        loading.loaded(&self.dir, |rt| run(rt, &self))
    }
}

fn run(mut rt: Runtime, args: &RunArgs) -> Result<ExitCode> {
    rt.set_transport(Transport {
        kind: "cli".into(),
        detail: None,
    });
    let options = ServiceOptions {
        threads: args.threads.count(),
        retention: args.retention.0,
        trail: args.trail.options()?,
    };
    // Off unless the OTEL_* environment asks (docs/telemetry.md).
    let telemetry = hookrt_otel::init_from_env()
        .context("cannot start the OpenTelemetry export (docs/telemetry.md)")?;
    let observer = match &telemetry {
        Some(t) => t.observer(printer(args)),
        None => printer(args),
    };
    let service = HookService::start_blocking(rt, args.journal.as_deref(), observer, options)?;
    let durability = service.durability();
    // Every event joins the trace of the process that started this one
    // (`TRACEPARENT`, the environment's carrier of the W3C header).
    let traced = telemetry
        .as_ref()
        .map(|t| (t.parents(), std::env::var("TRACEPARENT").ok()));
    let fed = match &args.events {
        Some(events) => feed(&service, events, args, traced.as_ref())?,
        None => Fed::default(),
    };
    // Shutdown drains the queue until the deadline, then cancels what runs.
    let stats = service.shutdown_blocking(Duration::from_secs(args.drain_timeout));
    if let Some(t) = &telemetry
        && let Err(e) = t.shutdown()
    {
        tracing::warn!(target: "hookrt", "{e}");
    }
    let summary = Summary {
        duplicates: fed.duplicates,
        malformed_lines: fed.malformed,
        refused: fed.refused,
        ..Summary::of_stats(&stats, durability)
    };
    summary.write(&mut std::io::stdout().lock())?;
    Ok(if fed.malformed > 0 || fed.refused > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The observer that prints a line per delivery, resolution and cascade.
///
/// With a journal each line is written out (flushed into the pipe) before
/// its delivery is acked, and every delivery that ran shows, even one a
/// crash then repeats. Without one, lines are buffered and written out at
/// the end of each batch (`Observation::EndOfBatch`): no write per
/// delivery, and with several threads the observer's lock is held only to
/// format one line.
fn printer(args: &RunArgs) -> Observer {
    let (logs, full_state) = (args.logs, args.state);
    let flush_each = args.journal.is_some();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    Box::new(move |report: Observation<'_>| {
        let written = match report {
            Observation::Delivery(d) => write_delivery(&mut out, d, None, logs),
            Observation::Resolved {
                event_id,
                kind,
                resolution,
            } => {
                let mut r = serde_json::to_value(resolution).unwrap_or_default();
                if !full_state && let Some(edit) = r.get_mut("edit").and_then(|e| e.as_object_mut())
                {
                    edit.remove("state");
                }
                let v = serde_json::json!({"event_id": event_id, "kind": kind, "resolution": r});
                serde_json::to_writer(&mut out, &v)
            }
            // The agent must end this turn (or session): say so on its own line.
            Observation::Cascaded(e) => {
                serde_json::to_writer(&mut out, &hookrt::delivery::cascade_line(e))
            }
            Observation::EndOfBatch => {
                let _ = out.flush();
                return;
            }
        };
        if written.is_ok() {
            let _ = out.write_all(b"\n");
        }
        if flush_each {
            let _ = out.flush();
        }
    })
}

/// What feeding the input counted, for the summary.
#[derive(Debug, Default)]
struct Fed {
    malformed: u64,
    refused: u64,
    duplicates: u64,
}

impl Fed {
    /// Waits for the receipts of `pending`, counting duplicates and refusals.
    fn settle(&mut self, pending: &mut Vec<PendingReceipt>) {
        for p in pending.drain(..) {
            match p.wait() {
                Ok(r) if r.duplicate => {
                    self.duplicates += 1;
                    eprintln!(
                        "hookrt: event `{}` was already taken; skipped as a duplicate (an id is delivered once; the journal redelivers what a crash left, with a higher attempt)",
                        r.event_id
                    );
                }
                Ok(_) => {}
                Err(e) => {
                    self.refused += 1;
                    eprintln!("hookrt: {e}");
                }
            }
        }
    }
}

/// Submits every envelope of `events` (a file, or `-` for stdin), reporting
/// each line that is none on stderr (stopping there with `--strict`); with
/// `traced`, each is noted for its span first, under `TRACEPARENT`.
fn feed(
    service: &HookService,
    events: &Path,
    args: &RunArgs,
    traced: Option<&(hookrt_otel::TraceParents, Option<String>)>,
) -> Result<Fed> {
    let mut input: Box<dyn BufRead> = if events.as_os_str() == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(events)
            .with_context(|| format!("cannot open events file {}", events.display()))?;
        Box::new(BufReader::new(f))
    };
    let source = events.display().to_string();
    let mut fed = Fed::default();
    let mut pending: Vec<PendingReceipt> = Vec::new();
    // An Eve stream read before into this journal goes on from it.
    let mut reader = match &args.journal {
        Some(journal) if journal.is_file() => Reader::resuming(&args.input_format(), journal)?,
        _ => Reader::new(&args.input_format()),
    };
    let mut n = 0u64;
    loop {
        n += 1;
        let line = input::read_line(&mut input, MAX_LINE_BYTES)
            .with_context(|| format!("{source}: cannot read line {n}"))?;
        let Some(line) = line else { break };
        let parsed = match input::text_of(line) {
            None => continue,
            Some(text) => text.and_then(|line| reader.envelope(&line)),
        };
        match parsed {
            Ok(env) => {
                if let Some((parents, traceparent)) = traced {
                    parents.note(&env, traceparent.as_deref());
                }
                pending.push(service.submit(env));
            }
            Err(e) => {
                fed.malformed += 1;
                eprintln!("hookrt: {source} line {n}: {e}");
                if args.strict {
                    eprintln!("hookrt: stopping at line {n} (--strict)");
                    break;
                }
            }
        }
        if pending.len() >= RECEIPT_WINDOW {
            fed.settle(&mut pending);
        }
    }
    fed.settle(&mut pending);
    Ok(fed)
}
