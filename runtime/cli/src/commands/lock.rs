//! `hookrt lock DIR`: writes each crate hook's `Cargo.lock` that is missing
//! or stale (as the build resolves it), then pins every loaded hook in
//! `hookrt.lock` (or `--lock FILE`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hookrt::hooks::{CargoLockChange, write_cargo_locks};

use crate::loading::{Loading, report};

/// Arguments of `hookrt lock`.
#[derive(clap::Args)]
pub(crate) struct LockArgs {
    /// The agent folder.
    pub dir: PathBuf,
}

impl LockArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        let file = loading.lock.path(&self.dir);
        // Crate hooks build `--locked`: their Cargo.lock first, so the folder
        // loads and is pinned with the lock it builds from.
        match write_cargo_locks(&self.dir, &loading.clone().options(&self.dir)) {
            Ok(written) => {
                for w in written {
                    let what = match w.change {
                        CargoLockChange::Written => "wrote",
                        CargoLockChange::Updated => "updated (review its diff)",
                        CargoLockChange::Unchanged => continue,
                    };
                    println!("{what} {}", w.path.display());
                }
            }
            Err(problems) => return Ok(report(&problems)),
        }
        // Locking pins the folder as it is now, drifted or not.
        loading.without_lock().loaded(&self.dir, |rt| {
            hookrt::hooks::Lock::of(rt.hooks())
                .write(&file)
                .with_context(|| format!("cannot write {}", file.display()))?;
            println!("locked {} hook(s) in {}", rt.hooks().len(), file.display());
            Ok(ExitCode::SUCCESS)
        })
    }
}
