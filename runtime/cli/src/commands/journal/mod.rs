//! `hookrt journal`: inspect, re-drive, prune and export a journal; its
//! `verify` is in `verify.rs`.

pub(crate) mod verify;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use hookrt::journal::Journal;

#[derive(clap::Subcommand)]
pub(crate) enum JournalCommand {
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
    #[command(alias = super::aliases::JOURNAL_RETRY)]
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
    /// Check the auditor's trail: every entry's hash and link, every pruned
    /// range's boundary, every signed checkpoint, that every event has its
    /// entry and every recorded row is there as recorded; with `--key`, that
    /// it is signed (a checkpoint at least, none missing, every `pruned`
    /// entry and the head signed). Names the first entry that does not fit
    /// (exit 1). Also an export (`--export`) on its own. A receipt
    /// (`--receipt`) whose signature holds without `--key` exits 3: signed,
    /// but by a key nobody vouched for.
    Verify(verify::VerifyArgs),
    /// Print the trail's head as an anchor (`SEQ:HASH`) to keep outside the
    /// journal, for a later `hookrt journal verify --expect-head`.
    Head {
        /// The journal file.
        path: PathBuf,
    },
    /// Write the auditor's trail as JSON lines, one entry each (the body as
    /// the exact text its hash covers), from the first entry at or after
    /// `--since`: a run of the chain `hookrt journal verify --export` checks.
    Export {
        /// The journal file.
        path: PathBuf,
        /// RFC 3339 time (`2026-12-04T10:00:00Z`) or an age (`90s`, `30m`,
        /// `12h`, `7d`): entries from then on.
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
    },
    /// Remove events whose every delivery finished and that are older than
    /// AGE (dead letters and pending deliveries are kept); a running
    /// `hookrt run --journal` or `serve` does this itself (`--retention`).
    Prune(PruneArgs),
}

/// Arguments of `hookrt journal prune`.
#[derive(clap::Args)]
pub(crate) struct PruneArgs {
    /// The journal file.
    pub path: PathBuf,
    /// `90s`, `30m`, `12h`, `7d`; `0s` prunes every finished event but the newest.
    #[arg(long, value_parser = crate::retention::parse_retention, value_name = "AGE")]
    pub older_than: crate::retention::Retention,
    /// Then give the freed space back to the file system (rewrites the file).
    #[arg(long)]
    pub vacuum: bool,
    /// The key the journal's trail is signed with (`hookrt run/serve
    /// --signing-key`): needed when the trail is signed, since its
    /// `pruned` entry must be signed too.
    #[arg(long, value_name = "FILE")]
    pub signing_key: Option<PathBuf>,
    /// With `--signing-key`: the `every` its checkpoints promise.
    #[arg(long, default_value_t = hookrt::journal::DEFAULT_CHECKPOINT_EVERY, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: u64,
}

impl JournalCommand {
    pub(crate) fn execute(self) -> Result<ExitCode> {
        let mut out = std::io::stdout().lock();
        match self {
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
            JournalCommand::Verify(args) => return args.execute(),
            JournalCommand::Head { path } => {
                if !path.is_file() {
                    anyhow::bail!("no journal at {}", path.display());
                }
                let anchor = hookrt::journal::head(&path)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                writeln!(out, "{anchor}")?;
            }
            JournalCommand::Export { path, since } => {
                let since = since.as_deref().map(since_ms).transpose()?;
                let rows = hookrt::journal::export(&path, since)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                for row in rows {
                    writeln!(out, "{}", serde_json::to_string(&row)?)?;
                }
            }
            JournalCommand::Prune(args) => args.execute(&mut out)?,
        }
        Ok(ExitCode::SUCCESS)
    }
}

impl PruneArgs {
    /// Prunes in batches, then vacuums when asked; says how many went.
    fn execute(self, out: &mut impl Write) -> Result<()> {
        let Some(age) = self.older_than.0 else {
            writeln!(out, "0 event(s) pruned: `forever` keeps every event")?;
            return Ok(());
        };
        let (_owner, mut journal) = owned(&self.path)?;
        match self.signing_key {
            Some(key) => journal.sign_trail(
                hookrt::journal::read_signing_key(&key).map_err(anyhow::Error::msg)?,
                self.checkpoint_every,
            ),
            None if journal.trail_is_signed()? => anyhow::bail!(
                "{}'s trail is signed, so what pruning writes in it must be signed too: give --signing-key FILE (the key `hookrt run` or `serve` signs it with); nothing was pruned",
                self.path.display()
            ),
            None => {}
        }
        let mut pruned = 0;
        loop {
            let n = journal.prune(age, hookrt::journal::PRUNE_BATCH)?;
            pruned += n;
            if n < hookrt::journal::PRUNE_BATCH {
                break;
            }
        }
        if self.vacuum {
            journal.vacuum()?;
        }
        writeln!(
            out,
            "{pruned} event(s) pruned; {} left",
            journal.status()?.events
        )?;
        Ok(())
    }
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

/// `--since`: an RFC 3339 time or an age, as milliseconds since the epoch.
fn since_ms(text: &str) -> Result<i64> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as i64;
    if let Ok(crate::retention::Retention(Some(age))) = crate::retention::parse_retention(text) {
        return Ok(now - age.as_millis() as i64);
    }
    utc_ms(text).ok_or_else(|| {
        anyhow::anyhow!(
            "--since `{text}` is neither a UTC time like 2026-12-04T10:00:00Z nor an age like 12h"
        )
    })
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` as milliseconds since the epoch (days from
/// the civil date: Howard Hinnant's algorithm).
fn utc_ms(text: &str) -> Option<i64> {
    let t = text.strip_suffix(['Z', 'z'])?;
    let (date, time) = t.split_once(['T', 't'])?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut h = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (h.next()??, h.next()??, h.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let ms: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1000) + ms)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_times_are_read_to_the_millisecond() {
        assert_eq!(super::utc_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            super::utc_ms("2026-12-04T10:00:00.5Z"),
            Some(1_796_378_400_500)
        );
        assert_eq!(super::utc_ms("2026-13-04T10:00:00Z"), None);
        assert_eq!(super::utc_ms("yesterday"), None);
    }
}
