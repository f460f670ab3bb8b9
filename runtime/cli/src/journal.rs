//! `hookrt journal`: inspect and re-drive a journal.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use hookrt::journal::Journal;

#[derive(clap::Subcommand)]
pub enum JournalCommand {
    /// Counts of events and deliveries by state.
    Status {
        /// The journal file.
        path: PathBuf,
    },
    /// Deliveries not yet acked (they run on the next start), one JSON line each.
    Pending {
        /// The journal file.
        path: PathBuf,
    },
    /// Dead letters: deliveries that failed their last attempt, one JSON line each.
    Dead {
        /// The journal file.
        path: PathBuf,
    },
    /// Re-drive dead letters: back to pending; the next `hookrt run --journal`
    /// delivers them (`retry` is the old name, kept as an alias).
    #[command(alias = "retry")]
    Redrive {
        /// The journal file.
        path: PathBuf,
        /// Only this hook's dead letters.
        #[arg(long)]
        hook: Option<String>,
        /// Only this event's dead letters.
        #[arg(long)]
        event: Option<String>,
    },
    /// Remove events whose every delivery finished and that are older than
    /// AGE (dead letters and pending deliveries are kept); a running
    /// `hookrt run --journal` or `serve` does this itself (`--retention`).
    Prune {
        /// The journal file.
        path: PathBuf,
        /// `90s`, `30m`, `12h`, `7d`; `0s` prunes every finished event but the newest.
        #[arg(long, value_parser = crate::retention::parse_retention, value_name = "AGE")]
        older_than: crate::retention::Retention,
        /// Then give the freed space back to the file system (rewrites the file).
        #[arg(long)]
        vacuum: bool,
    },
}

pub fn journal(cmd: JournalCommand) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match cmd {
        JournalCommand::Status { path } => {
            writeln!(
                out,
                "{}",
                serde_json::to_string(&Journal::open_existing(&path)?.status()?)?
            )?;
        }
        JournalCommand::Pending { path } => {
            for (seq, event_id, d) in Journal::open_existing(&path)?.pending()? {
                let line = serde_json::json!({"event_seq": seq, "event_id": event_id, "position": d.position,
                    "hook": d.hook, "handler": d.handler, "attempts": d.attempts});
                writeln!(out, "{line}")?;
            }
        }
        JournalCommand::Dead { path } => {
            for d in Journal::open_existing(&path)?.dead_letters()? {
                writeln!(out, "{}", serde_json::to_string(&d)?)?;
            }
        }
        JournalCommand::Redrive { path, hook, event } => {
            // Not under a running service's feet: it would not see the change.
            let (_owner, mut journal) = owned(&path)?;
            let n = journal.redrive(hook.as_deref(), event.as_deref())?;
            writeln!(
                out,
                "{n} dead letter(s) moved back to pending; `hookrt run DIR --journal {}` delivers them",
                path.display()
            )?;
        }
        JournalCommand::Prune {
            path,
            older_than,
            vacuum,
        } => {
            let Some(age) = older_than.0 else {
                writeln!(out, "0 event(s) pruned: `forever` keeps every event")?;
                return Ok(ExitCode::SUCCESS);
            };
            let (_owner, mut journal) = owned(&path)?;
            let mut pruned = 0;
            loop {
                let n = journal.prune(age, hookrt::journal::PRUNE_BATCH)?;
                pruned += n;
                if n < hookrt::journal::PRUNE_BATCH {
                    break;
                }
            }
            if vacuum {
                journal.vacuum()?;
            }
            writeln!(
                out,
                "{pruned} event(s) pruned; {} left",
                journal.status()?.events
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Owns the existing journal at `path`, then opens it: a journal in use is
/// refused naming its owner before this process reads or writes it.
fn owned(path: &Path) -> Result<(hookrt::journal::JournalLock, Journal)> {
    if !path.is_file() {
        return Err(hookrt::journal::JournalError::Missing(path.to_path_buf()).into());
    }
    let owner = hookrt::journal::JournalLock::acquire(path)?;
    Ok((owner, Journal::open(path)?))
}
