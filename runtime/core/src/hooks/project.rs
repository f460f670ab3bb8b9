//! The project folder: which folder "the project" is, decided by the host
//! in one place ([`Project::decide`]), and the check that keeps an event
//! from widening it ([`Project::admits`]).
//!
//! The grants that act on the project (`exec` runs programs in it, `read`
//! reads it) take it from here, at load. It is the folder the operator
//! names with `--project-dir`, or else hookrt's working directory (an agent
//! starts its command hooks in the project's root); never a folder an event
//! names. An agent's hook input names its own folder (`cwd`, kept in the
//! event's data by the bridges): where a hook of the runtime uses the
//! project, an event naming a folder outside it is refused at the door.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::event::envelope::EnvelopeError;

/// The field of an event's data where the agent names the folder it runs in
/// (Claude Code, Codex, Gemini CLI and Copilot CLI send it; the bridges keep it).
pub(crate) const CLAIMED_FOLDER: &str = "cwd";

/// The project folder, canonical.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    root: PathBuf,
}

/// Why the project folder cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the project folder {} cannot be used: {why}", path.display())]
pub struct ProjectError {
    /// The folder as given (or hookrt's working directory).
    pub path: PathBuf,
    /// What failed.
    pub why: String,
}

impl Project {
    /// The project folder: `given` (`--project-dir`), else hookrt's working
    /// directory; canonical, and a folder.
    pub(crate) fn decide(given: Option<&Path>) -> Result<Project, ProjectError> {
        let path = match given {
            Some(p) => p.to_path_buf(),
            None => std::env::current_dir().map_err(|e| ProjectError {
                path: PathBuf::from("."),
                why: format!("hookrt's working directory cannot be read: {e}"),
            })?,
        };
        let failed = |why: String| ProjectError {
            path: path.clone(),
            why,
        };
        let root = path.canonicalize().map_err(|e| failed(e.to_string()))?;
        if !root.is_dir() {
            return Err(failed("it is not a folder".to_owned()));
        }
        Ok(Project { root })
    }

    /// Its canonical path.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether an event with `data` may be delivered to hooks bound to this
    /// project: it names no folder, or names this one or a folder inside it.
    /// A folder that does not exist here, or is not absolute, is not inside.
    pub(crate) fn admits(&self, data: &Value) -> Result<(), EnvelopeError> {
        let Some(claimed) = data.get(CLAIMED_FOLDER) else {
            return Ok(());
        };
        let refused = || EnvelopeError::OutsideProject {
            claimed: match claimed {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            project: self.root.display().to_string(),
        };
        let Some(text) = claimed.as_str() else {
            return Err(refused());
        };
        let path = Path::new(text);
        if !path.is_absolute() {
            return Err(refused());
        }
        match path.canonicalize() {
            Ok(real) if real.starts_with(&self.root) => Ok(()),
            _ => Err(refused()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_may_name_the_project_or_a_folder_inside_it_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("src");
        std::fs::create_dir(&inside).unwrap();
        let project = Project::decide(Some(dir.path())).unwrap();
        let root = project.root().display().to_string();
        assert!(project.admits(&json!({"tool": "Bash"})).is_ok());
        for ok in [root.clone(), inside.display().to_string()] {
            assert!(project.admits(&json!({"cwd": ok})).is_ok(), "{ok}");
        }
        let other = tempfile::tempdir().unwrap();
        let escaped = format!("{root}/src/../..");
        for bad in [
            json!(other.path()),
            json!(escaped),
            json!("src"),
            json!("/no/such/folder/anywhere"),
            json!(["/"]),
        ] {
            let err = project.admits(&json!({"cwd": bad})).unwrap_err();
            let said = err.to_string();
            assert!(said.contains(&root), "{said}");
            assert!(
                matches!(err, EnvelopeError::OutsideProject { .. }),
                "{bad}: {said}"
            );
        }
        let said = project
            .admits(&json!({"cwd": other.path()}))
            .unwrap_err()
            .to_string();
        assert!(
            said.contains(&other.path().display().to_string()),
            "both folders are named: {said}"
        );
    }

    #[test]
    fn the_project_is_the_folder_given_or_the_working_directory() {
        let here = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(Project::decide(None).unwrap().root(), here);
        let file = tempfile::NamedTempFile::new().unwrap();
        let err = Project::decide(Some(file.path())).unwrap_err();
        assert!(err.to_string().contains("not a folder"), "{err}");
    }
}
