//! A hook's `write` grant made ready: its table and the project folder
//! resolved at load, and each write checked against the place and the caps
//! before its file is opened beneath the project (`open.rs`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::open::{Mode, OpenError, open_beneath};
use super::table::{self, Place, Table};
use crate::sandbox::wit::v0_4_0::hookrt::hook::write::WriteError;

/// Why a hook's `write` table cannot be used in this project.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteSetupError {
    /// The project folder cannot be read.
    #[error("the project folder {0} cannot be read: {1}")]
    Project(PathBuf, String),
}

/// A hook's `write` grant, ready: its table and the project folder.
#[derive(Debug)]
pub(crate) struct Policy {
    table: Table,
    project: PathBuf,
}

impl Policy {
    /// The grant of `table` for writes in `project` (made canonical).
    pub(crate) fn resolve(table: &Table, project: &Path) -> Result<Policy, WriteSetupError> {
        let project = project
            .canonicalize()
            .map_err(|e| WriteSetupError::Project(project.to_path_buf(), e.to_string()))?;
        Ok(Policy {
            table: table.clone(),
            project,
        })
    }

    /// What `audit` says of it.
    pub(crate) fn audit_lines(&self) -> Vec<String> {
        let t = &self.table;
        let place = match &t.place {
            Place::File(p) => format!("appends to {}", self.project.join(p).display()),
            Place::Folder(p) => format!("writes files in {}/", self.project.join(p).display()),
        };
        vec![format!(
            "{place}; at most {} bytes a write, {} a delivery, {} a file; no symlink or hard link out",
            t.max_write_bytes, t.max_delivery_bytes, t.max_file_bytes
        )]
    }

    /// Appends `bytes` to the declared file, `used` bytes written before in
    /// this delivery.
    pub(crate) fn append(&self, bytes: &[u8], used: u64) -> Result<(), WriteError> {
        let Place::File(file) = &self.table.place else {
            return Err(WriteError::Denied(
                "the write table declares a folder: use write-file".to_owned(),
            ));
        };
        self.within_caps(bytes, used)?;
        let mut f = open_beneath(&self.project, Path::new(file), Mode::Append).map_err(refused)?;
        let size = f
            .metadata()
            .map_err(|e| WriteError::Failed(e.to_string()))?
            .len();
        if size + bytes.len() as u64 > self.table.max_file_bytes {
            return Err(WriteError::TooLarge(self.table.max_file_bytes));
        }
        f.write_all(bytes)
            .map_err(|e| WriteError::Failed(e.to_string()))
    }

    /// Writes `bytes` as the whole file `path` inside the declared folder.
    pub(crate) fn write_file(&self, path: &str, bytes: &[u8], used: u64) -> Result<(), WriteError> {
        let Place::Folder(folder) = &self.table.place else {
            return Err(WriteError::Denied(
                "the write table declares a file: use append".to_owned(),
            ));
        };
        if let Some(why) = table::relative_problem(path) {
            return Err(WriteError::Denied(format!("`{path}` {why}")));
        }
        self.within_caps(bytes, used)?;
        if bytes.len() as u64 > self.table.max_file_bytes {
            return Err(WriteError::TooLarge(self.table.max_file_bytes));
        }
        let rel = Path::new(folder).join(path);
        let mut f = open_beneath(&self.project, &rel, Mode::Replace).map_err(refused)?;
        f.set_len(0)
            .map_err(|e| WriteError::Failed(e.to_string()))?;
        f.write_all(bytes)
            .map_err(|e| WriteError::Failed(e.to_string()))
    }

    fn within_caps(&self, bytes: &[u8], used: u64) -> Result<(), WriteError> {
        let n = bytes.len() as u64;
        if n > self.table.max_write_bytes {
            return Err(WriteError::TooLarge(self.table.max_write_bytes));
        }
        if used + n > self.table.max_delivery_bytes {
            return Err(WriteError::TooLarge(self.table.max_delivery_bytes));
        }
        Ok(())
    }
}

fn refused(e: OpenError) -> WriteError {
    match e {
        OpenError::Denied(why) => WriteError::Denied(why),
        OpenError::Failed(why) => WriteError::Failed(why),
    }
}

/// A hook's `write` grant for one delivery: the policy and what the
/// delivery wrote so far.
#[derive(Debug)]
pub(crate) struct Writer {
    pub(crate) policy: Arc<Policy>,
    pub(crate) used: u64,
}

// The `write` grant against hostile hooks: each test names the claim it
// proves in docs/sandbox.md.
#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::table::{Place, Table};
    use super::{Policy, WriteError};

    struct Project {
        _dir: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
    }

    fn project() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("app");
        std::fs::create_dir(&root).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        Project {
            _dir: dir,
            root,
            outside,
        }
    }

    fn policy(p: &Project, place: Place) -> Policy {
        let t = Table {
            place,
            max_write_bytes: 100,
            max_delivery_bytes: 150,
            max_file_bytes: 250,
        };
        Policy::resolve(&t, &p.root).unwrap()
    }

    fn denied(r: Result<(), WriteError>) -> String {
        match r {
            Err(WriteError::Denied(why)) => why,
            other => panic!("expected a denial, got {other:?}"),
        }
    }

    #[test]
    fn append_adds_to_the_declared_file_making_its_folders() {
        let p = project();
        let w = policy(&p, Place::File(".claude/bash-command-log.txt".into()));
        w.append(b"ls - list\n", 0).unwrap();
        w.append(b"pwd - No description\n", 10).unwrap();
        assert_eq!(
            std::fs::read_to_string(p.root.join(".claude/bash-command-log.txt")).unwrap(),
            "ls - list\npwd - No description\n"
        );
        let why = denied(w.write_file("x", b"y", 0));
        assert_eq!(why, "the write table declares a file: use append");
    }

    #[test]
    fn write_file_writes_inside_the_declared_folder_only() {
        let p = project();
        let w = policy(&p, Place::Folder("logs/backups".into()));
        w.write_file("s1.jsonl", b"{}\n", 0).unwrap();
        w.write_file("s1.jsonl", b"[]\n", 0).unwrap();
        assert_eq!(
            std::fs::read_to_string(p.root.join("logs/backups/s1.jsonl")).unwrap(),
            "[]\n",
            "a write replaces the file"
        );
        for (path, want) in [
            (
                "../escape",
                "`../escape` holds `..`: name a place inside the project folder",
            ),
            (
                "a/../../escape",
                "`a/../../escape` holds `..`: name a place inside the project folder",
            ),
            (
                "/etc/passwd",
                "`/etc/passwd` is absolute: name it relative to the project folder",
            ),
            ("a\nb", "`a\nb` holds a control character"),
        ] {
            assert_eq!(denied(w.write_file(path, b"x", 0)), want);
        }
        assert_eq!(
            denied(w.append(b"x", 0)),
            "the write table declares a folder: use write-file"
        );
        assert!(!p.root.parent().unwrap().join("escape").exists());
    }

    #[test]
    fn a_symlink_out_of_the_project_is_refused_wherever_it_lies() {
        let p = project();
        let w = policy(&p, Place::Folder("logs".into()));
        std::fs::create_dir(p.root.join("logs")).unwrap();
        // The file itself a symlink out.
        std::os::unix::fs::symlink(p.outside.join("victim"), p.root.join("logs/f")).unwrap();
        assert_eq!(denied(w.write_file("f", b"x", 0)), "logs/f is a symlink");
        // A folder on the way a symlink out.
        std::os::unix::fs::symlink(&p.outside, p.root.join("logs/sub")).unwrap();
        let why = denied(w.write_file("sub/f", b"x", 0));
        assert!(why.contains("`sub` on the way is a symlink"), "{why}");
        // The declared folder itself swapped for a symlink out.
        std::fs::remove_dir_all(p.root.join("logs")).unwrap();
        std::os::unix::fs::symlink(&p.outside, p.root.join("logs")).unwrap();
        let why = denied(w.write_file("g", b"x", 0));
        assert!(why.contains("`logs` on the way is a symlink"), "{why}");
        assert_eq!(
            std::fs::read_dir(&p.outside).unwrap().count(),
            0,
            "nothing written outside"
        );
    }

    #[test]
    fn a_hard_link_to_a_file_outside_is_refused() {
        let p = project();
        let victim = p.outside.join("victim");
        std::fs::write(&victim, "keep\n").unwrap();
        std::fs::hard_link(&victim, p.root.join("log.txt")).unwrap();
        let w = policy(&p, Place::File("log.txt".into()));
        let why = denied(w.append(b"x\n", 0));
        assert!(why.contains("has another hard link"), "{why}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    }

    #[test]
    fn writes_past_the_caps_are_refused_as_too_large() {
        let p = project();
        let w = policy(&p, Place::File("log.txt".into()));
        let too_large = |r| matches!(r, Err(WriteError::TooLarge(_)));
        assert!(
            matches!(w.append(&[b'x'; 101], 0), Err(WriteError::TooLarge(100))),
            "per write"
        );
        assert!(
            matches!(w.append(&[b'x'; 60], 100), Err(WriteError::TooLarge(150))),
            "per delivery"
        );
        w.append(&[b'x'; 100], 0).unwrap();
        w.append(&[b'x'; 100], 0).unwrap();
        assert!(
            matches!(w.append(&[b'x'; 60], 0), Err(WriteError::TooLarge(250))),
            "per file"
        );
        assert!(!too_large(w.append(&[b'x'; 50], 0)));
        assert_eq!(
            std::fs::metadata(p.root.join("log.txt")).unwrap().len(),
            250
        );
    }
}
