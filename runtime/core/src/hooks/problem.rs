//! Problems: actionable errors found while checking an agent folder.
//!
//! Loading an agent folder reports every problem it finds at once (a hook author
//! should not fix one typo per run), so checks collect [`Problem`]s instead of
//! stopping at the first error.

use std::fmt;
use std::path::{Path, PathBuf};

/// Which stage of loading found a problem: what an embedder matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The agent folder itself is missing or not a folder.
    AgentFolder,
    /// The layout of `hooks/` and `subagents/`: slugs, duplicates, symlinks,
    /// a `channels/` folder, a missing `hooks/` folder.
    Layout,
    /// `hookrt.toml`: syntax, unknown keys, values out of range, unknown slugs.
    Config,
    /// A hook's source did not build (cargo, the SDK, the toolchain).
    Build,
    /// A component did not load: not a component, another world, imports
    /// not granted, refused configuration, bad subscriptions.
    Load,
    /// The Wasmtime sandbox could not be set up.
    Sandbox,
    /// A hook differs from what `hookrt.lock` pins, or the lock is unreadable.
    Lock,
}

/// One thing wrong with an agent folder: where, what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// Which stage found it.
    pub kind: ProblemKind,
    /// The file or folder the problem is about.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub fix: String,
}

impl Problem {
    /// A problem of `kind` at `path`.
    pub(crate) fn new(
        kind: ProblemKind,
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem {
            kind,
            path: path.as_ref().to_path_buf(),
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// A [`ProblemKind::AgentFolder`] problem (the agent folder itself) at `path`.
    pub(crate) fn agent_folder(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::AgentFolder, path, message, fix)
    }

    /// A [`ProblemKind::Layout`] problem (the layout of `hooks/` and `subagents/`) at `path`.
    pub(crate) fn layout(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::Layout, path, message, fix)
    }

    /// A [`ProblemKind::Config`] problem (`hookrt.toml`) at `path`.
    pub fn config(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::Config, path, message, fix)
    }

    /// A [`ProblemKind::Build`] problem (a hook's build) at `path`.
    pub fn build(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::Build, path, message, fix)
    }

    /// A [`ProblemKind::Load`] problem (loading a component) at `path`.
    pub fn load(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::Load, path, message, fix)
    }

    /// A [`ProblemKind::Sandbox`] problem (setting up the sandbox) at `path`.
    pub(crate) fn sandbox(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::Sandbox, path, message, fix)
    }

    /// A [`ProblemKind::Lock`] problem (`hookrt.lock`) at `path`.
    pub fn lock(
        path: impl AsRef<Path>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem::new(ProblemKind::Lock, path, message, fix)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}\n  fix: {}",
            self.path.display(),
            self.message,
            self.fix
        )
    }
}

/// Every problem found in one check; never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[serde(transparent)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    /// Whether any problem is of `kind`.
    pub fn has(&self, kind: ProblemKind) -> bool {
        self.0.iter().any(|p| p.kind == kind)
    }

    /// Ok when there is nothing to report.
    pub(crate) fn into_result(self) -> Result<(), Problems> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(f, "{n} problem{} found:", if n == 1 { "" } else { "s" })?;
        for p in &self.0 {
            writeln!(f, "- {p}")?;
        }
        Ok(())
    }
}
