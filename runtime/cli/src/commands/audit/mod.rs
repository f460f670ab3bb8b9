//! `hookrt audit DIR [--json]`: what each hook is and what binds it; and
//! `hookrt audit coverage J` (`coverage/`): which gates decided each tool
//! call a journal saw.

mod coverage;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;

use crate::loading::Loading;

/// `hookrt audit DIR [--json]`, or `hookrt audit coverage J [--json]`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    action: Option<AuditCommand>,
    /// The agent folder.
    #[arg(required = true)]
    dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Proof of coverage: every tool call in a journal, the gates that
    /// decided it, and the calls no gate covered (exit 1 when any is flagged,
    /// 2 when the journal cannot be read).
    Coverage(coverage::CoverageArgs),
}

impl AuditArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        if let Some(AuditCommand::Coverage(args)) = self.action {
            return args.execute();
        }
        let dir = self
            .dir
            .context("hookrt audit needs an agent folder (or `coverage J`)")?;
        // The audit shows drift instead of refusing to load over it.
        loading.without_lock().loaded(&dir, |rt| {
            let report = hookrt::audit::audit(&rt);
            if self.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.to_text());
            }
            Ok(ExitCode::SUCCESS)
        })
    }
}
