//! `hookrt package --agent AGENT DIR --out OUT [--marketplace NAME]`: an
//! agent folder as a plugin of the agent's own plugin system (Claude Code,
//! Codex, Cursor; `install/plugin/` writes it, with the entries `install`
//! writes).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::loading::Loading;

/// Arguments of `hookrt package`.
#[derive(clap::Args)]
pub(crate) struct PackageArgs {
    /// The agent whose plugin to write: claude-code, codex, cursor or goose (Open Plugins).
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
    /// Write a marketplace of this name into OUT, listing the plugin in
    /// `OUT/plugins/<name>/` (Codex installs plugins from one only).
    #[arg(long, value_name = "NAME")]
    pub marketplace: Option<String>,
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
            self.marketplace.as_deref(),
            &self.hookrt,
            loading,
        )
    }
}
