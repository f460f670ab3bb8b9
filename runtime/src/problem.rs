//! Problems: actionable errors found while checking an agent folder.
//!
//! Loading an agent folder reports every problem it finds at once (a hook author
//! should not fix one typo per run), so checks collect [`Problem`]s instead of
//! stopping at the first error.

use std::fmt;
use std::path::{Path, PathBuf};

/// One thing wrong with an agent folder: where, what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The file or folder the problem is about.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub fix: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl AsRef<Path>, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Problem {
            path: path.as_ref().to_path_buf(),
            message: message.into(),
            fix: fix.into(),
        }
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
    /// Ok when there is nothing to report.
    pub fn into_result(self) -> Result<(), Problems> {
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
