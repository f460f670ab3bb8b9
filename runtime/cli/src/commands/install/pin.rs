//! What keeps the installed hooks the reviewed ones: `--lock FILE` and
//! `--require-lock` written into the command hook's line, and a warning
//! when the agent folder or the lock lies inside the working tree the agent
//! edits (an agent that can edit its own hooks is not checked by them).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use hookrt::hooks::{LOCK_FILE, LockPolicy};

/// The lock the command hook is run with.
#[derive(Clone, Default)]
pub(super) struct Pinned {
    /// `--lock FILE`, absolute: the agent runs the hook from anywhere.
    lock: Option<PathBuf>,
    /// `--require-lock`.
    required: bool,
}

impl Pinned {
    /// The lock `install --lock FILE --require-lock` asks for (`http`: the
    /// hooks are `hookrt serve`'s); the lock must exist, or every event
    /// would be refused by the hook.
    pub(super) fn of(policy: &LockPolicy, dir: &Path, cwd: &Path, http: bool) -> Result<Pinned> {
        if policy.file.is_none() && !policy.required {
            return Ok(Pinned::default());
        }
        if http {
            bail!(
                "--lock and --require-lock go into the command hook's line; with --http the hooks are `hookrt serve`'s: start it with --lock FILE --require-lock instead"
            );
        }
        let file = match &policy.file {
            Some(file) => cwd.join(file),
            None => dir.join(LOCK_FILE),
        };
        let lock = match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_file() => std::fs::canonicalize(&file)?,
            Ok(_) => bail!(
                "the lock {} is not a regular file; give --lock the lock `hookrt lock` wrote",
                file.display()
            ),
            Err(_) => bail!(
                "the lock {} does not exist: review the agent folder, write it with `hookrt --lock {} lock {}`, then install again",
                file.display(),
                file.display(),
                dir.display()
            ),
        };
        Ok(Pinned {
            lock: policy.file.as_ref().map(|_| lock),
            required: policy.required,
        })
    }

    /// The lock in the agent folder, required: what a plugin's hooks run with.
    pub(super) fn required() -> Pinned {
        Pinned {
            lock: None,
            required: true,
        }
    }

    /// The command hook's arguments for the lock.
    pub(super) fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(lock) = &self.lock {
            args.extend(["--lock".to_owned(), lock.to_string_lossy().into_owned()]);
        }
        if self.required {
            args.push("--require-lock".to_owned());
        }
        args
    }
}

/// Warns on stderr when the agent folder `dir` (or the lock) lies inside
/// the working tree `label` (the agent) edits: the git work tree holding
/// the working folder, or, for a project install (`project`), the working
/// folder itself.
pub(super) fn warn_if_editable(
    label: &str,
    dir: &Path,
    pinned: &Pinned,
    cwd: &Path,
    project: bool,
) {
    let tree = cwd
        .ancestors()
        .find(|a| a.join(".git").exists())
        .or(project.then_some(cwd));
    let Some(tree) = tree.and_then(|t| std::fs::canonicalize(t).ok()) else {
        return;
    };
    if dir.starts_with(&tree) {
        eprintln!(
            "warning: the agent folder {} lies inside {}, the working tree {label} edits: the agent could change its own hooks. Keep the agent folder outside the project, and pin it with --lock FILE --require-lock, the lock outside the project too",
            dir.display(),
            tree.display()
        );
    }
    if let Some(lock) = pinned.lock.as_ref().filter(|l| l.starts_with(&tree)) {
        eprintln!(
            "warning: the lock {} lies inside {}, the working tree {label} edits: the agent could rewrite the lock it is checked against. Keep the lock outside the project",
            lock.display(),
            tree.display()
        );
    }
}
