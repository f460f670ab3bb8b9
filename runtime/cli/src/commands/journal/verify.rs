//! `hookrt journal verify`: the auditor's trail of a journal or an export,
//! or a signed receipt, checked; and the line that says what a trail that
//! holds holds (shared with `audit coverage`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use crate::commands::keygen::read_key;

/// Arguments of `hookrt journal verify`.
#[derive(clap::Args)]
pub(crate) struct VerifyArgs {
    /// The journal file (or, with `--export`, an export's JSON lines);
    /// with `--receipt`, optional: the receipt is checked against it.
    #[arg(required_unless_present = "receipt")]
    pub path: Option<PathBuf>,
    /// A signed receipt (`hookrt serve`'s `?receipt=true`): its
    /// signature, by `--key`, offline; with a journal, that its trail
    /// records the same decision.
    #[arg(long, value_name = "FILE", conflicts_with = "export")]
    pub receipt: Option<PathBuf>,
    /// The public key checkpoints must be signed with (`hookrt keygen`
    /// writes it beside the signing key, `.pub`).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// PATH is an export (`hookrt journal export`), not a journal.
    #[arg(long)]
    pub export: bool,
    /// With `--key`: accept entries after the last signed checkpoint (a
    /// service still running, or one that crashed), naming them.
    #[arg(long, requires = "key")]
    pub allow_unsigned_tail: bool,
    /// An anchor taken earlier with `hookrt journal head` (`SEQ:HASH`):
    /// the trail must still hold that entry with that hash, which
    /// catches a trail cut back to an older checkpoint.
    #[arg(long, value_name = "SEQ:HASH", conflicts_with = "receipt")]
    pub expect_head: Option<hookrt::journal::Anchor>,
}

impl VerifyArgs {
    pub(crate) fn execute(self) -> Result<ExitCode> {
        let key = read_key(self.key.as_deref())?;
        let expect = hookrt::journal::Expect {
            key: key.as_ref(),
            allow_unsigned_tail: self.allow_unsigned_tail,
            head: self.expect_head.as_ref(),
        };
        match (self.receipt, self.path) {
            (Some(receipt), path) => verify_receipt(&receipt, &expect, path.as_deref()),
            (None, Some(path)) => verify(&path, &expect, self.export),
            (None, None) => anyhow::bail!("give a journal, or --receipt FILE"),
        }
    }
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
    let checked = hookrt::journal::read_receipt(&text)
        .and_then(|value| Ok((hookrt::journal::check_receipt(&value, expect.key)?, value)));
    let (signer, value) = match checked {
        Ok(checked) => checked,
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
pub(crate) fn verdict(v: &hookrt::journal::Verified, journal: bool) -> String {
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
    let first_format = match v.first_format {
        0 => String::new(),
        n => format!(
            "; {n} of its entries are of the first format, which recorded no delivery's position or answer: their deliveries rows are not compared, and their event_seq is bound by the event's id alone"
        ),
    };
    let anchored = v
        .anchored
        .map(|seq| format!("; the anchor at entry {seq} holds"))
        .unwrap_or_default();
    format!(
        "entries {} to {} ({}), head {}; {signed}{tail}{pruned}{anchored}{first_format}{}",
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
