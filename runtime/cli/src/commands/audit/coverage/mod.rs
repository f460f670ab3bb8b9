//! `hookrt audit coverage J`: proof of coverage from a journal. Lists, per
//! session, every tool call the journal saw (from its decision events,
//! `actions.requested` and `permission.requested`, and from its results,
//! `action.result`), which gates decided it (hook, handler, component
//! digest, answer), and flags each call that was not covered
//! ([`report::Flag`]: bypassed, ungated subagent, all abstained, undecided).
//!
//! The trail is verified first (`hookrt journal verify`, by `--key` when
//! given): the report says whether it holds, and a journal whose trail does
//! not hold is flagged as a whole, since what it says is then no proof.
//! The journal is read through `hookrt::journal::coverage_records`
//! (read-only, beside a running service); component digests come from its
//! trail when it has one, else they are null.
//! Exit code: 0 nothing flagged and the trail holds, 1 something flagged or
//! the trail does not hold, 2 the journal could not be read.

mod gather;
mod report;
mod text;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use report::Report;

/// Arguments of `hookrt audit coverage`.
#[derive(clap::Args)]
pub(super) struct CoverageArgs {
    /// The journal file (`hookrt run --journal`, `hookrt serve --journal`).
    journal: PathBuf,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
    /// The public key the journal's trail must be signed with; the trail
    /// is verified first either way (`hookrt journal verify`).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// With `--key`: accept trail entries after the last checkpoint.
    #[arg(long, requires = "key")]
    allow_unsigned_tail: bool,
}

impl CoverageArgs {
    pub(super) fn execute(self) -> Result<ExitCode> {
        let key = crate::commands::keygen::read_key(self.key.as_deref())?;
        let expect = hookrt::journal::Expect {
            key: key.as_ref(),
            allow_unsigned_tail: self.allow_unsigned_tail,
            head: None,
        };
        Ok(self.coverage(&expect))
    }

    /// The report printed, and the exit code it earns.
    fn coverage(&self, expect: &hookrt::journal::Expect<'_>) -> ExitCode {
        let journal = &self.journal;
        let records = match hookrt::journal::coverage_records(journal) {
            Ok(r) => r,
            Err(e) => {
                let e = anyhow::Error::new(e);
                eprintln!("hookrt: journal {}: {e:#}", journal.display());
                return ExitCode::from(2);
            }
        };
        let sessions = gather::sessions(&records.events);
        let mut report = Report::new(journal.clone(), records.trail, sessions);
        if report.trail {
            let (holds, verdict) = match hookrt::journal::verify(journal, expect) {
                Ok(v) => (true, crate::commands::journal::verify::verdict(&v, true)),
                Err(e) => (false, e.to_string()),
            };
            report.trail_holds = Some(holds);
            report.trail_verdict = Some(verdict);
        }
        match print(&report, self.json) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => {
                eprintln!("hookrt: {e}");
                return ExitCode::from(2);
            }
        }
        if report.flagged.is_empty() && report.trail_holds != Some(false) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

/// The report on stdout, as JSON or text.
fn print(report: &Report, json: bool) -> std::io::Result<()> {
    if json {
        serde_json::to_string_pretty(report)
            .map_err(std::io::Error::other)
            .and_then(|text| writeln!(std::io::stdout().lock(), "{text}"))
    } else {
        write!(std::io::stdout().lock(), "{}", text::text(report))
    }
}
