//! Reading the tail of a transcript, only where its agent keeps them: the
//! path resolved (absolute, no `..`, no symlink out of the agent's folder),
//! opened without following a last symlink, what was opened checked again,
//! a regular file owned by the user hookrt runs as, at most the cap read,
//! from the first whole line.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::table::Table;
use crate::event::transcript::Transcript;
use crate::sandbox::wit::v0_4_0::hookrt::hook::transcript::TranscriptError;

/// A hook's `transcript` grant for one delivery: its cap, and the
/// transcript the event's bridge named (none for most events).
#[derive(Debug, Clone, Default)]
pub(crate) struct Reader {
    pub(crate) table: Table,
    pub(crate) file: Option<Arc<Transcript>>,
}

impl Reader {
    /// The last whole lines of this delivery's transcript, at most
    /// `max_bytes` and the table's cap, and the file's size;
    /// [`TranscriptError::None`] when the event names none.
    pub(crate) fn tail(&self, max_bytes: u64) -> Result<(Vec<u8>, u64), TranscriptError> {
        let file = self.file.as_ref().ok_or(TranscriptError::None)?;
        tail(file, max_bytes.min(self.table.max_bytes))
    }
}

/// The last whole lines of `t`, at most `cap` bytes, and the file's size.
pub(crate) fn tail(t: &Transcript, cap: u64) -> Result<(Vec<u8>, u64), TranscriptError> {
    let real = resolve(t)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&real)
        .map_err(|e| TranscriptError::Failed(format!("{}: {e}", real.display())))?;
    opened_inside(&file, &t.root)?;
    let meta = file
        .metadata()
        .map_err(|e| TranscriptError::Failed(e.to_string()))?;
    if !meta.file_type().is_file() {
        return Err(denied(&t.path, "is not a regular file"));
    }
    // SAFETY: geteuid(2) reads no memory of ours and cannot fail.
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(denied(&t.path, "is not owned by the user hookrt runs as"));
    }
    let size = meta.len();
    let from = size.saturating_sub(cap);
    let mut file = file;
    file.seek(SeekFrom::Start(from))
        .map_err(|e| TranscriptError::Failed(e.to_string()))?;
    let mut bytes = Vec::with_capacity(usize::try_from(cap.min(size)).unwrap_or(0));
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| TranscriptError::Failed(e.to_string()))?;
    if from > 0 {
        // Started inside a line: it is not whole, so it goes.
        let cut = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| n + 1);
        bytes.drain(..cut);
    }
    Ok((bytes, size))
}

fn denied(path: &Path, why: &str) -> TranscriptError {
    TranscriptError::Denied(format!("{} {why}", path.display()))
}

/// `t.path` resolved, when it lies in `t.root`: absolute, no `..`, and
/// still inside once every symlink is followed.
fn resolve(t: &Transcript) -> Result<PathBuf, TranscriptError> {
    let path = &t.path;
    if !path.is_absolute() {
        return Err(denied(path, "is not an absolute path"));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(denied(path, "holds `..`"));
    }
    let root = t.root.canonicalize().map_err(|e| {
        TranscriptError::Denied(format!(
            "the agent's transcripts folder {} cannot be read: {e}",
            t.root.display()
        ))
    })?;
    if !path.starts_with(&t.root) && !path.starts_with(&root) {
        return Err(denied(
            path,
            &format!(
                "is not in {}, where the agent keeps transcripts",
                t.root.display()
            ),
        ));
    }
    let real = path
        .canonicalize()
        .map_err(|e| TranscriptError::Failed(format!("{}: {e}", path.display())))?;
    if !real.starts_with(&root) {
        return Err(denied(
            path,
            "leads out of the agent's transcripts folder (a symlink)",
        ));
    }
    Ok(real)
}

/// Whether what was opened (not what the path named a moment before) lies
/// in `root`: a folder swapped for a symlink between the checks and the
/// open is caught here. Where `/proc` cannot say, the checks stand.
fn opened_inside(file: &std::fs::File, root: &Path) -> Result<(), TranscriptError> {
    use std::os::fd::AsRawFd;
    let Ok(opened) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) else {
        return Ok(());
    };
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if opened.starts_with(&root) {
        Ok(())
    } else {
        Err(denied(&opened, "is not in the agent's transcripts folder"))
    }
}

// The `transcript` grant against hostile events: each test names the claim
// it proves in docs/sandbox.md.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use super::{Reader, Table, Transcript, TranscriptError, tail};
    use crate::sandbox::grants::{Profile, check};

    /// A home with an agent's transcripts folder holding one session, and a
    /// secret file outside it.
    struct Home {
        _dir: tempfile::TempDir,
        root: PathBuf,
        session: PathBuf,
        secret: PathBuf,
    }

    fn home() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(".claude/projects");
        std::fs::create_dir_all(root.join("-work-app")).unwrap();
        let session = root.join("-work-app/s1.jsonl");
        std::fs::write(&session, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n").unwrap();
        let secret = dir.path().join(".ssh-id");
        std::fs::write(&secret, "PRIVATE KEY\n").unwrap();
        Home {
            _dir: dir,
            root,
            session,
            secret,
        }
    }

    fn read(root: &Path, path: &Path, cap: u64) -> Result<Vec<u8>, TranscriptError> {
        let t = Transcript {
            path: path.to_path_buf(),
            root: root.to_path_buf(),
        };
        tail(&t, cap).map(|(bytes, _)| bytes)
    }

    fn denied(r: Result<Vec<u8>, TranscriptError>) -> String {
        match r {
            Err(TranscriptError::Denied(why)) => why,
            other => panic!("expected a denial, got {other:?}"),
        }
    }

    #[test]
    fn the_tail_is_the_last_whole_lines_within_the_cap() {
        let h = home();
        assert_eq!(
            read(&h.root, &h.session, 1_000).unwrap(),
            b"{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
        );
        // 10 bytes end inside the second line: only the last one is whole.
        assert_eq!(read(&h.root, &h.session, 10).unwrap(), b"{\"n\":3}\n");
        assert_eq!(read(&h.root, &h.session, 0).unwrap(), b"");
    }

    #[test]
    fn a_huge_transcript_is_read_only_up_to_the_cap() {
        let h = home();
        let line = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(1_000));
        let big = line.repeat(100_000);
        std::fs::write(&h.session, &big).unwrap();
        let bytes = read(&h.root, &h.session, 256 << 10).unwrap();
        assert!(bytes.len() <= 256 << 10, "{}", bytes.len());
        assert_eq!(bytes.len() % line.len(), 0, "whole lines only");
        assert!(big.ends_with(std::str::from_utf8(&bytes).unwrap()));
    }

    #[test]
    fn a_path_outside_the_agents_transcripts_folder_is_denied() {
        let h = home();
        let why = denied(read(&h.root, &h.secret, 1_000));
        assert!(why.ends_with("where the agent keeps transcripts"), "{why}");
        let why = denied(read(&h.root, Path::new("relative.jsonl"), 1_000));
        assert!(why.ends_with("is not an absolute path"), "{why}");
    }

    #[test]
    fn a_dot_dot_path_is_denied_even_when_it_starts_in_the_folder() {
        let h = home();
        let sneaky = h.root.join("-work-app/../../../.ssh-id");
        assert!(sneaky.starts_with(&h.root), "lexically inside");
        assert!(denied(read(&h.root, &sneaky, 1_000)).ends_with("holds `..`"));
    }

    #[test]
    fn a_symlink_out_of_the_folder_is_denied() {
        let h = home();
        let link = h.root.join("-work-app/s2.jsonl");
        std::os::unix::fs::symlink(&h.secret, &link).unwrap();
        let why = denied(read(&h.root, &link, 1_000));
        assert!(
            why.contains("leads out of the agent's transcripts folder"),
            "{why}"
        );
        // A folder on the way that is a symlink out is the same.
        let dir_link = h.root.join("elsewhere");
        std::os::unix::fs::symlink(h.secret.parent().unwrap(), &dir_link).unwrap();
        let why = denied(read(&h.root, &dir_link.join(".ssh-id"), 1_000));
        assert!(why.contains("leads out"), "{why}");
    }

    #[test]
    fn a_file_that_is_not_a_regular_file_is_denied() {
        let h = home();
        let fifo = h.root.join("-work-app/pipe.jsonl");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(denied(read(&h.root, &fifo, 1_000)).ends_with("is not a regular file"));
    }

    #[test]
    fn an_event_that_names_no_transcript_reads_none_and_the_table_caps_a_read() {
        let h = home();
        let mut reader = Reader {
            table: Table { max_bytes: 10 },
            file: None,
        };
        assert!(matches!(reader.tail(1_000), Err(TranscriptError::None)));
        reader.file = Some(std::sync::Arc::new(Transcript {
            path: h.session.clone(),
            root: h.root.clone(),
        }));
        let (bytes, size) = reader.tail(1_000).unwrap();
        assert_eq!((bytes.as_slice(), size), (&b"{\"n\":3}\n"[..], 24));
    }

    #[test]
    fn a_hook_without_the_grant_cannot_import_the_transcript() {
        let grants: BTreeSet<String> = ["log".to_owned()].into();
        let err = check(
            &["hookrt:hook/transcript@0.4.0".into()],
            &grants,
            "hooks.\"ralph\"",
            Profile::Standard,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "imports `hookrt:hook/transcript@0.4.0`, which is not granted: add `grants = [\"log\", \"transcript\"]` to [hooks.\"ralph\"] in hookrt.toml"
        );
    }
}
