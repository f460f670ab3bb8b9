//! `hookrt package --agent claude-code DIR --out OUT`: an agent folder as a
//! plugin of the agent's own plugin system (`install/plugin.rs` writes it,
//! with the entries `install` writes).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::loading::Loading;

/// Arguments of `hookrt package`.
#[derive(clap::Args)]
pub(crate) struct PackageArgs {
    /// The agent whose plugin to write (claude-code).
    #[arg(long)]
    pub agent: String,
    /// The agent folder, locked (`hookrt lock DIR`).
    pub dir: PathBuf,
    /// The plugin's folder; it must not exist, or be empty.
    #[arg(long)]
    pub out: PathBuf,
    /// The plugin's name.
    #[arg(long, default_value = "hookrt")]
    pub name: String,
    /// The hookrt the plugin's hooks run: `hookrt` found on the agent's
    /// `PATH` (the default), or an absolute path.
    #[arg(long, default_value = "hookrt")]
    pub hookrt: String,
}

impl PackageArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        super::install::plugin::package(
            &self.agent,
            &self.dir,
            &self.out,
            &self.name,
            &self.hookrt,
            loading,
        )
    }
}
