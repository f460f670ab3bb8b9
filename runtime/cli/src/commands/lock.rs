//! `hookrt lock DIR`: pins every loaded hook in `hookrt.lock` (or `--lock FILE`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::loading::Loading;

/// Arguments of `hookrt lock`.
#[derive(clap::Args)]
pub(crate) struct LockArgs {
    /// The agent folder.
    pub dir: PathBuf,
}

impl LockArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        let file = loading.lock.path(&self.dir);
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
