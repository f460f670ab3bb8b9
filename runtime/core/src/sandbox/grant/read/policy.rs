//! A hook's `read` grant made ready: the project folder opened once at
//! load, and each read resolved inside it.
//!
//! Every path goes through the same steps: its text (relative, no `..`),
//! the deny patterns on it, its resolution inside the project
//! (`cap_primitives::fs::canonicalize`, which fails on any symlink leading
//! out), the deny patterns again on what it resolved to (a link named
//! `notes.txt` to `.env` is refused), then an open of the resolved path one
//! component at a time without following any symlink. A symlink swapped in
//! between the resolution and the open makes the open fail: the check an
//! attacker could race is not the one that opens.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cap_primitives::fs::{FollowSymlinks, OpenOptions};

use super::deny;
use super::table::Table;
use crate::sandbox::wit::v0_4_0::hookrt::hook::read::ReadError;

/// Longest path a hook may name.
const MAX_PATH_BYTES: usize = 4_096;
/// Most names one `list-dir` returns, against a folder of millions.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// Why a hook's `read` grant cannot be used on this host.
#[derive(Debug, thiserror::Error)]
#[error("the read grant cannot open the project folder {}: {why}", project.display())]
pub(crate) struct ReadSetupError {
    /// The project folder.
    pub project: PathBuf,
    /// What failed.
    pub why: String,
}

/// A hook's `read` grant, ready.
#[derive(Debug)]
pub(crate) struct Policy {
    pub(super) table: Table,
    pub(super) project: PathBuf,
    /// The defaults, then the table's.
    pub(super) deny: Vec<String>,
    root: std::fs::File,
}

impl Policy {
    /// Opens `project` (canonical) for reads under `table`.
    pub(crate) fn open(table: &Table, project: &Path) -> Result<Policy, ReadSetupError> {
        let root =
            cap_primitives::fs::open_ambient_dir(project, cap_primitives::ambient_authority())
                .map_err(|e| ReadSetupError {
                    project: project.to_path_buf(),
                    why: e.to_string(),
                })?;
        let deny = deny::DEFAULT_DENY
            .iter()
            .map(|p| (*p).to_owned())
            .chain(table.deny.iter().cloned())
            .collect();
        Ok(Policy {
            table: table.clone(),
            project: project.to_path_buf(),
            deny,
            root,
        })
    }

    /// The content of the file at `path`, at most the table's `file_bytes`
    /// and what is left of the delivery's `left` bytes.
    pub(crate) fn read_file(&self, path: &str, left: u64) -> Result<Vec<u8>, ReadError> {
        let real = self.resolve(path)?;
        let Some(name) = real.file_name() else {
            return Err(ReadError::Failed(format!(
                "`{path}` is a folder: use list-dir"
            )));
        };
        let parent = self.open_folder(path, real.parent().unwrap_or(Path::new("")))?;
        let mut options = OpenOptions::new();
        options
            .read(true)
            ._cap_fs_ext_follow(FollowSymlinks::No)
            // A FIFO would block the open itself.
            ._cap_fs_ext_nonblock(true);
        let file = cap_primitives::fs::open(&parent, Path::new(name), &options)
            .map_err(|e| opened(path, e))?;
        let meta = file.metadata().map_err(|e| failed(path, &e))?;
        if !meta.is_file() {
            return Err(ReadError::Failed(format!("`{path}` is not a regular file")));
        }
        let cap = self.table.file_bytes;
        if meta.len() > cap {
            return Err(ReadError::TooLarge(meta.len()));
        }
        if meta.len() > left {
            return Err(spent(&self.table, left));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // One byte past the cap: a file that grew since the stat is refused too.
        (&file)
            .take(cap.min(left) + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| failed(path, &e))?;
        let read = bytes.len() as u64;
        if read > cap {
            return Err(ReadError::TooLarge(read));
        }
        if read > left {
            return Err(spent(&self.table, left));
        }
        Ok(bytes)
    }

    /// The names in the folder at `path`, sorted, without those the deny
    /// patterns refuse; with the bytes they count against the delivery.
    pub(crate) fn list_dir(&self, path: &str, left: u64) -> Result<(Vec<String>, u64), ReadError> {
        let real = self.resolve(path)?;
        let folder = self.open_folder(path, &real)?;
        let entries = cap_primitives::fs::read_base_dir(&folder).map_err(|e| opened(path, e))?;
        let mut names = Vec::new();
        let mut bytes = 0u64;
        for entry in entries {
            let entry = entry.map_err(|e| failed(path, &e))?;
            // A name that is not UTF-8 cannot be asked for again: left out.
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if deny::matching(&self.deny, &real.join(&name)).is_some() {
                continue;
            }
            if names.len() == MAX_ENTRIES {
                return Err(ReadError::Failed(format!(
                    "`{path}` holds more than {MAX_ENTRIES} names: list a folder inside it"
                )));
            }
            bytes += name.len() as u64 + 1;
            if bytes > left {
                return Err(spent(&self.table, left));
            }
            names.push(name);
        }
        names.sort();
        Ok((names, bytes))
    }

    /// `path` checked and resolved inside the project: the relative path it
    /// leads to, symlinks followed only where they stay inside.
    fn resolve(&self, path: &str) -> Result<PathBuf, ReadError> {
        let denied = |why: String| Err(ReadError::Denied(why));
        if path.is_empty() || path.len() > MAX_PATH_BYTES || path.contains('\0') {
            return denied(format!(
                "a path is 1 to {MAX_PATH_BYTES} bytes, without NUL"
            ));
        }
        let asked = Path::new(path);
        for c in asked.components() {
            match c {
                Component::Normal(_) | Component::CurDir => {}
                Component::ParentDir => {
                    return denied(format!(
                        "`{path}`: `..` is refused: name paths from the project's root"
                    ));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return denied(format!(
                        "`{path}` is absolute: name it relative to the project folder"
                    ));
                }
            }
        }
        if let Some(p) = deny::matching(&self.deny, asked) {
            return denied(format!("`{path}` matches the deny pattern `{p}`"));
        }
        let real =
            cap_primitives::fs::canonicalize(&self.root, asked).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => ReadError::NotFound,
                _ if escaped(&e) => ReadError::Denied(format!(
                    "`{path}` leads out of the project folder through a symlink"
                )),
                _ => failed(path, &e),
            })?;
        if let Some(p) = deny::matching(&self.deny, &real) {
            return denied(format!(
                "`{path}` leads to `{}`, which matches the deny pattern `{p}`",
                real.display()
            ));
        }
        Ok(real)
    }

    /// The folder at `real` (resolved, relative), opened one component at a
    /// time without following a symlink.
    fn open_folder(&self, path: &str, real: &Path) -> Result<std::fs::File, ReadError> {
        let mut folder = self.root.try_clone().map_err(|e| failed(path, &e))?;
        for c in real.components() {
            if let Component::Normal(name) = c {
                folder = cap_primitives::fs::open_dir_nofollow(&folder, Path::new(name))
                    .map_err(|e| opened(path, e))?;
            }
        }
        Ok(folder)
    }
}

/// A store's use of the grant: the policy, and what the running delivery
/// has read so far (counted anew for each delivery).
#[derive(Debug, Clone)]
pub(crate) struct Access {
    pub(super) policy: Arc<Policy>,
    /// The deadline of the delivery `used` counts for.
    armed: Option<Instant>,
    pub(super) used: u64,
}

impl Access {
    /// A store's access under `policy`.
    pub(crate) fn new(policy: Arc<Policy>) -> Access {
        Access {
            policy,
            armed: None,
            used: 0,
        }
    }

    /// What the delivery ending at `deadline` may still read.
    pub(super) fn left(&mut self, deadline: Instant) -> u64 {
        if self.armed != Some(deadline) {
            self.armed = Some(deadline);
            self.used = 0;
        }
        self.policy.table.delivery_bytes.saturating_sub(self.used)
    }
}

/// An open that failed after the path was resolved: a symlink swapped in
/// since (refused), something removed, or anything else.
fn opened(path: &str, e: std::io::Error) -> ReadError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound,
        _ if escaped(&e) => ReadError::Denied(format!("`{path}` leads out of the project folder")),
        _ if e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::ENOTDIR) => {
            ReadError::Denied(format!(
                "`{path}` changed into a symlink while it was read: refused"
            ))
        }
        _ => failed(path, &e),
    }
}

/// Whether cap-primitives refused `e` as an escape from the project folder.
fn escaped(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::PermissionDenied && e.to_string().contains("led outside")
}

fn failed(path: &str, e: &std::io::Error) -> ReadError {
    ReadError::Failed(format!("`{path}`: {e}"))
}

fn spent(table: &Table, left: u64) -> ReadError {
    ReadError::Failed(format!(
        "this delivery may read {} bytes in all (the read table's delivery_bytes), and {left} are left",
        table.delivery_bytes
    ))
}

// The `read` grant against hostile paths and planted files: each test names
// the claim it proves in docs/sandbox.md.
#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    use super::super::table::Table;
    use super::Policy;
    use crate::sandbox::wit::v0_4_0::hookrt::hook::read::ReadError;

    const PLENTY: u64 = 64 << 20;

    struct Project {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    fn project(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (path, text) in files {
            let at = root.join(path);
            fs::create_dir_all(at.parent().unwrap()).unwrap();
            fs::write(at, text).unwrap();
        }
        Project { _dir: dir, root }
    }

    fn policy(p: &Project) -> Policy {
        Policy::open(&Table::default(), &p.root).unwrap()
    }

    fn denied(result: Result<Vec<u8>, ReadError>) -> String {
        match result {
            Err(ReadError::Denied(why)) => why,
            other => panic!("not denied: {other:?}"),
        }
    }

    #[test]
    fn a_read_of_each_default_pattern_class_is_refused_naming_the_pattern() {
        let files = [
            (".env", ".env*"),
            ("web/.env.local", ".env*"),
            ("certs/site.pem", "*.pem"),
            ("deploy/id_rsa", "id_rsa*"),
            (".git/config", ".git/config"),
            (".npmrc", ".npmrc"),
            (".claude/settings.local.json", ".claude/settings*.json"),
            (".codex/config.toml", ".codex/"),
            (".gemini/settings.json", ".gemini/settings.json"),
            (".cursor/hooks.json", ".cursor/hooks.json"),
            (".github/hooks/hookrt.json", ".github/hooks/"),
        ];
        let all: Vec<(&str, &str)> = files.iter().map(|(f, _)| (*f, "SECRET=1")).collect();
        let p = project(&all);
        let policy = policy(&p);
        for (path, pattern) in files {
            let why = denied(policy.read_file(path, PLENTY));
            assert_eq!(
                why,
                format!("`{path}` matches the deny pattern `{pattern}`"),
                "{path}"
            );
        }
    }

    #[test]
    fn a_table_adds_its_own_patterns_to_the_defaults() {
        let p = project(&[("data/users.sqlite", "x"), ("README.md", "hello")]);
        let table = Table {
            deny: vec!["*.sqlite".into()],
            ..Table::default()
        };
        let policy = Policy::open(&table, &p.root).unwrap();
        let why = denied(policy.read_file("data/users.sqlite", PLENTY));
        assert!(why.contains("`*.sqlite`"), "{why}");
        assert!(denied(policy.read_file(".env", PLENTY)).contains("`.env*`"));
        assert_eq!(policy.read_file("README.md", PLENTY).unwrap(), b"hello");
    }

    #[test]
    fn dot_dot_and_absolute_paths_are_refused() {
        let p = project(&[("src/a.rs", "fn main() {}")]);
        let policy = policy(&p);
        let inside = format!("{}/src/a.rs", p.root.display());
        for path in [
            "../etc/passwd",
            "src/../src/a.rs",
            "/etc/passwd",
            inside.as_str(),
        ] {
            let why = denied(policy.read_file(path, PLENTY));
            assert!(
                why.contains("`..` is refused") || why.contains("is absolute"),
                "{path}: {why}"
            );
        }
        assert_eq!(
            policy.read_file("./src/a.rs", PLENTY).unwrap(),
            b"fn main() {}"
        );
    }

    #[test]
    fn a_symlink_out_of_the_project_or_to_a_denied_file_is_refused() {
        let p = project(&[(".env", "TOKEN=1"), ("docs/guide.md", "guide")]);
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.txt"), "outside").unwrap();
        symlink(outside.path().join("secret.txt"), p.root.join("leak.txt")).unwrap();
        symlink(outside.path(), p.root.join("out")).unwrap();
        symlink(".env", p.root.join("notes.txt")).unwrap();
        // An absolute target is resolved from the host's root: out, even when it
        // names a file inside.
        symlink(p.root.join("docs/guide.md"), p.root.join("absolute.md")).unwrap();
        symlink("docs", p.root.join("manual")).unwrap();
        let policy = policy(&p);
        for path in ["leak.txt", "out/secret.txt", "absolute.md"] {
            let why = denied(policy.read_file(path, PLENTY));
            assert_eq!(
                why,
                format!("`{path}` leads out of the project folder through a symlink")
            );
        }
        let why = denied(policy.read_file("notes.txt", PLENTY));
        assert_eq!(
            why,
            "`notes.txt` leads to `.env`, which matches the deny pattern `.env*`"
        );
        assert!(matches!(
            policy.list_dir("out", PLENTY),
            Err(ReadError::Denied(_))
        ));
        // A symlink that stays inside is followed.
        assert_eq!(
            policy.read_file("manual/guide.md", PLENTY).unwrap(),
            b"guide"
        );
    }

    #[test]
    fn a_file_over_the_cap_is_refused_with_its_size_and_a_delivery_over_its_budget_fails() {
        let p = project(&[("big.log", &"x".repeat(2_000)), ("small.txt", "12345")]);
        let table = Table {
            file_bytes: 1_000,
            ..Table::default()
        };
        let policy = Policy::open(&table, &p.root).unwrap();
        assert!(matches!(
            policy.read_file("big.log", PLENTY),
            Err(ReadError::TooLarge(2_000))
        ));
        assert_eq!(policy.read_file("small.txt", 5).unwrap(), b"12345");
        let err = policy.read_file("small.txt", 4).unwrap_err();
        assert!(
            matches!(&err, ReadError::Failed(m) if m.contains("delivery_bytes") && m.contains("4 are left")),
            "{err:?}"
        );
    }

    #[test]
    fn list_dir_leaves_denied_names_out_and_a_fifo_is_not_waited_on() {
        let p = project(&[
            ("README.md", "r"),
            (".env", "x"),
            (".env.local", "x"),
            ("key.pem", "x"),
            ("src/main.rs", "m"),
            (".github/hooks/h.json", "{}"),
            (".github/workflows/ci.yml", "ci"),
        ]);
        let policy = policy(&p);
        let (names, bytes) = policy.list_dir(".", PLENTY).unwrap();
        assert_eq!(names, [".github", "README.md", "src"]);
        assert_eq!(
            bytes,
            (".github".len() + "README.md".len() + "src".len() + 3) as u64
        );
        assert_eq!(policy.list_dir(".github", PLENTY).unwrap().0, ["workflows"]);
        assert!(matches!(
            policy.read_file("nothing.txt", PLENTY),
            Err(ReadError::NotFound)
        ));
        let fifo = p.root.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let err = policy.read_file("pipe", PLENTY).unwrap_err();
            assert!(
                matches!(&err, ReadError::Failed(m) if m.contains("not a regular file")),
                "{err:?}"
            );
        }
    }
}
