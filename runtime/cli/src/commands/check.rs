//! `hookrt check DIR [--no-build]`: the folder's problems, or that its hooks
//! load cleanly (the working copy: a drift from the lock is said, not refused).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::loading::{Loading, report};

/// Arguments of `hookrt check`.
#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// The agent folder (holds hooks/ and hookrt.toml).
    pub dir: PathBuf,
    /// Only check the layout and configuration; do not build or load.
    #[arg(long)]
    pub no_build: bool,
}

impl CheckArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        let dir = self.dir;
        if self.no_build {
            return Ok(match hookrt::check(&dir) {
                Ok((d, _)) => {
                    println!("ok: {} hook(s) in {}", d.hooks.len(), dir.display());
                    ExitCode::SUCCESS
                }
                Err(p) => report(&p),
            });
        }
        loading.loaded_for_author(&dir, |rt, unlocked| {
            for w in rt.hooks().iter().flat_map(hookrt::audit::author_warnings) {
                eprintln!("warning: {w}");
            }
            if let Some(w) = unlocked {
                eprintln!("warning: {w}");
            }
            println!(
                "ok: {} hook(s) in {} build, load and subscribe cleanly",
                rt.hooks().len(),
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        })
    }
}
