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
    /// Check the auditor's trail: every entry's hash and link, every pruned
    /// range's boundary, every signed checkpoint, that every event has its
    /// entry and every recorded row is there as recorded; with `--key`, that
    /// it is signed (a checkpoint at least, none missing, every `pruned`
    /// entry and the head signed). Names the first entry that does not fit
    /// (exit 1). Also an export (`--export`) on its own. A receipt
    /// (`--receipt`) whose signature holds without `--key` exits 3: signed,
    /// but by a key nobody vouched for.
    Verify {
        /// The journal file (or, with `--export`, an export's JSON lines);
        /// with `--receipt`, optional: the receipt is checked against it.
        #[arg(required_unless_present = "receipt")]
        path: Option<PathBuf>,
        /// A signed receipt (`hookrt serve`'s `?receipt=true`): its
        /// signature, by `--key`, offline; with a journal, that its trail
        /// records the same decision.
        #[arg(long, value_name = "FILE", conflicts_with = "export")]
        receipt: Option<PathBuf>,
        /// The public key checkpoints must be signed with (`hookrt keygen`
        /// writes it beside the signing key, `.pub`).
        #[arg(long, value_name = "FILE")]
        key: Option<PathBuf>,
        /// PATH is an export (`hookrt journal export`), not a journal.
        #[arg(long)]
        export: bool,
        /// With `--key`: accept entries after the last signed checkpoint (a
        /// service still running, or one that crashed), naming them.
        #[arg(long, requires = "key")]
        allow_unsigned_tail: bool,
        /// An anchor taken earlier with `hookrt journal head` (`SEQ:HASH`):
        /// the trail must still hold that entry with that hash, which
        /// catches a trail cut back to an older checkpoint.
        #[arg(long, value_name = "SEQ:HASH", conflicts_with = "receipt")]
        expect_head: Option<hookrt::journal::Anchor>,
    },
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
    Prune {
        /// The journal file.
        path: PathBuf,
        /// `90s`, `30m`, `12h`, `7d`; `0s` prunes every finished event but the newest.
        #[arg(long, value_parser = crate::retention::parse_retention, value_name = "AGE")]
        older_than: crate::retention::Retention,
        /// Then give the freed space back to the file system (rewrites the file).
        #[arg(long)]
        vacuum: bool,
        /// The key the journal's trail is signed with (`hookrt run/serve
        /// --signing-key`): needed when the trail is signed, since its
        /// `pruned` entry must be signed too.
        #[arg(long, value_name = "FILE")]
        signing_key: Option<PathBuf>,
        /// With `--signing-key`: the `every` its checkpoints promise.
        #[arg(long, default_value_t = hookrt::journal::DEFAULT_CHECKPOINT_EVERY, value_name = "N",
              value_parser = clap::value_parser!(u64).range(1..))]
        checkpoint_every: u64,
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
        JournalCommand::Verify {
            path,
            key,
            export,
            receipt,
            allow_unsigned_tail,
            expect_head,
        } => {
            let key = read_key(key.as_deref())?;
            let expect = hookrt::journal::Expect {
                key: key.as_ref(),
                allow_unsigned_tail,
                head: expect_head.as_ref(),
            };
            return match (receipt, path) {
                (Some(receipt), path) => verify_receipt(&receipt, &expect, path.as_deref()),
                (None, Some(path)) => verify(&path, &expect, export),
                (None, None) => anyhow::bail!("give a journal, or --receipt FILE"),
            };
        }
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
        JournalCommand::Prune {
            path,
            older_than,
            vacuum,
            signing_key,
            checkpoint_every,
        } => {
            let Some(age) = older_than.0 else {
                writeln!(out, "0 event(s) pruned: `forever` keeps every event")?;
                return Ok(ExitCode::SUCCESS);
            };
            let (_owner, mut journal) = owned(&path)?;
            match signing_key {
                Some(key) => journal.sign_trail(
                    hookrt::journal::read_signing_key(&key).map_err(anyhow::Error::msg)?,
                    checkpoint_every,
                ),
                None if journal.trail_is_signed()? => anyhow::bail!(
                    "{}'s trail is signed, so what pruning writes in it must be signed too: give --signing-key FILE (the key `hookrt run` or `serve` signs it with); nothing was pruned",
                    path.display()
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

/// The public key `--key FILE` names, read (`hookrt keygen` wrote it).
pub fn read_key(path: Option<&Path>) -> Result<Option<hookrt::journal::VerifyingKey>> {
    path.map(hookrt::journal::read_verifying_key)
        .transpose()
        .map_err(anyhow::Error::msg)
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

/// `hookrt keygen --out FILE`: a new signing key in FILE (owner-only, never
/// overwritten) and its public key in FILE.pub.
pub fn keygen(out: &Path) -> Result<ExitCode> {
    use std::os::unix::fs::OpenOptionsExt;
    let key = hookrt::journal::generate_key()?;
    let public = hookrt::journal::public_hex(&key);
    let mut secret = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot create {} (an existing key is never overwritten): {e}",
                out.display()
            )
        })?;
    writeln!(secret, "{}", hex::encode(key.to_bytes()))?;
    secret.sync_all()?;
    let pub_path = PathBuf::from(format!("{}.pub", out.display()));
    std::fs::write(&pub_path, format!("{public}\n"))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", pub_path.display()))?;
    println!(
        "{}: signing key (keep it outside the agent folder and the journal's folder); {}: public key {public}",
        out.display(),
        pub_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The exit code of a receipt whose signature holds by the key it names,
/// when no `--key` said which key to trust: not 0, since anyone can sign.
const SIGNER_UNKNOWN: u8 = 3;

/// `hookrt journal verify --receipt R [--key K] [J]`: exit 0 when the
/// receipt's signature holds by `--key` (and the journal's trail holds and
/// records its decision), 1 when not, 3 when it holds by the key it names
/// and no `--key` was given.
fn verify_receipt(
    receipt: &Path,
    expect: &hookrt::journal::Expect<'_>,
    journal: Option<&Path>,
) -> Result<ExitCode> {
    let text = std::fs::read_to_string(receipt)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", receipt.display()))?;
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text.trim()) else {
        eprintln!(
            "{}: the receipt does not hold: it is not JSON",
            receipt.display()
        );
        return Ok(ExitCode::FAILURE);
    };
    let signer = match hookrt::journal::check_receipt(&value, expect.key) {
        Ok(signer) => signer,
        Err(e) => {
            eprintln!("{}: the receipt does not hold: {e}", receipt.display());
            return Ok(ExitCode::FAILURE);
        }
    };
    let event = value["event"].as_str().unwrap_or_default();
    let mut said = format!(
        "{}: event `{event}`'s decision, signed by {signer}",
        receipt.display()
    );
    if let Some(journal) = journal {
        if let Err(e) = hookrt::journal::verify(journal, expect) {
            eprintln!(
                "{}: the receipt does not hold: {}'s trail does not hold: {e}",
                receipt.display(),
                journal.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        match hookrt::journal::receipt_in_journal(journal, &value) {
            Ok(seq) => said.push_str(&format!(
                ", recorded at entry {seq} of {}'s trail",
                journal.display()
            )),
            Err(e) => {
                eprintln!("{}: the receipt does not hold: {e}", receipt.display());
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    if expect.key.is_none() {
        println!(
            "{said}: signature valid, signer unknown (give --key with the public key you trust; exit {SIGNER_UNKNOWN})"
        );
        return Ok(ExitCode::from(SIGNER_UNKNOWN));
    }
    println!("{said}: the receipt holds");
    Ok(ExitCode::SUCCESS)
}

/// `hookrt journal verify`: exit 0 when the trail holds, 1 naming the first
/// entry that does not fit.
fn verify(path: &Path, expect: &hookrt::journal::Expect<'_>, export: bool) -> Result<ExitCode> {
    let checked = if export {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let rows = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str::<hookrt::journal::Row>(l).map_err(|e| {
                    anyhow::anyhow!("{} line {}: not a trail entry: {e}", path.display(), i + 1)
                })
            })
            .collect::<Result<Vec<_>>>()?;
        hookrt::journal::verify_segment(&rows, expect)
    } else {
        if !path.is_file() {
            anyhow::bail!("no journal at {}", path.display());
        }
        hookrt::journal::verify(path, expect)
    };
    match checked {
        Ok(v) => {
            println!(
                "{}: the trail holds: {}",
                path.display(),
                verdict(&v, !export)
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}: the trail does not hold: {e}", path.display());
            Ok(ExitCode::FAILURE)
        }
    }
}

/// What a trail that holds holds, in a line (shared with `audit coverage`).
pub fn verdict(v: &hookrt::journal::Verified, journal: bool) -> String {
    let pruned = if v.pruned.is_empty() {
        String::new()
    } else {
        format!(
            "; pruned before it: {}",
            v.pruned
                .iter()
                .map(|(f, t)| format!("{f}..{t}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let signed = match (v.keys.is_empty(), v.key_checked) {
        (true, _) => {
            "no signed checkpoint (no key given: the chain is only consistent with itself, which anyone who can write the file can make it)".to_owned()
        }
        (false, true) => format!(
            "{} signed checkpoint(s) by {}",
            v.checkpoints,
            v.keys.join(", ")
        ),
        (false, false) => format!(
            "{} checkpoint(s) signed by {}, a key nobody vouched for (give --key)",
            v.checkpoints,
            v.keys.join(", ")
        ),
    };
    let tail = match v.unsigned_tail {
        Some((from, to)) if !v.keys.is_empty() => {
            format!("; entries {from} to {to} come after the last checkpoint, unsigned")
        }
        _ => String::new(),
    };
    let anchored = v
        .anchored
        .map(|seq| format!("; the anchor at entry {seq} holds"))
        .unwrap_or_default();
    format!(
        "entries {} to {} ({}), head {}; {signed}{tail}{pruned}{anchored}{}",
        v.first,
        v.last,
        v.entries,
        v.head,
        if journal {
            format!("; every one of its {} event(s) is in it", v.events)
        } else {
            String::new()
        }
    )
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
