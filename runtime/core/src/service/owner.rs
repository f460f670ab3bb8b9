//! One journal, one owner: an exclusive advisory lock on `<journal>.lock`,
//! and a check that the journal file is whole before SQLite opens it.
//!
//! Two services delivering one journal's pending work would both run it (and
//! both cascade). The lock is taken with [`std::fs::File::try_lock`] (`flock`
//! on Linux): it belongs to the open file, so a second service in the same
//! process is refused too, and the kernel drops it when the owner exits,
//! SIGKILL included, so a crash never leaves a stale lock. The owner writes
//! its pid into the lock file; a refused starter names it. The journal
//! (next layer up) turns a [`Refusal`] into its `JournalError`.
//!
//! A child process inherits the lock's descriptor between `fork` and `exec`
//! (where it is closed): a service that starts again on the same journal in
//! the same process, while another thread is starting a program, can find
//! the lock held a moment after its last owner let go. A lock held under this
//! process's own pid with no live owner here is that, and is waited for
//! (briefly); a second live owner in the process is refused at once.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The lock files (canonical paths) this process holds through a live
/// [`JournalLock`].
static OWNED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// How long a lock held by a descriptor a child inherited is waited for.
const INHERITED_WAIT: Duration = Duration::from_secs(2);

/// The lock file beside `journal`: `<journal>.lock`.
pub(crate) fn lock_path(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Why a journal cannot be owned or opened.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The lock file or the journal could not be read or written.
    Io(PathBuf, std::io::Error),
    /// Another open file holds the lock: `pid N`, or `unknown pid`.
    Locked { lock: PathBuf, holder: String },
    /// The journal file is not a whole SQLite database (why).
    Damaged(String),
}

/// Held while a service owns a journal; dropping it releases the lock.
#[derive(Debug)]
pub struct JournalLock {
    file: File,
    /// The lock file's canonical path, in [`OWNED`] while this lives.
    owned: PathBuf,
}

impl Drop for JournalLock {
    fn drop(&mut self) {
        owned().remove(&self.owned);
    }
}

/// [`OWNED`], whatever a panicking holder left.
fn owned() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    OWNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl JournalLock {
    /// Takes the lock of `journal`, or says which process holds it.
    pub(crate) fn try_acquire(journal: &Path) -> Result<JournalLock, Refusal> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = lock_path(journal);
        let io = |io| Refusal::Io(path.clone(), io);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            // A link planted at the lock's name is refused, not followed.
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io)?;
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let inherited_until = Instant::now() + INHERITED_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    // Best effort: the holder may not have written its pid yet.
                    let _ = file
                        .rewind()
                        .and_then(|()| file.read_to_string(&mut holder));
                    let holder = holder.trim();
                    let inherited =
                        holder == std::process::id().to_string() && !owned().contains(&canonical);
                    if inherited && Instant::now() < inherited_until {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                    return Err(Refusal::Locked {
                        lock: path,
                        holder: if holder.is_empty() {
                            "unknown pid".to_owned()
                        } else {
                            format!("pid {holder}")
                        },
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        owned().insert(canonical.clone());
        let lock = JournalLock {
            file,
            owned: canonical,
        };
        let mut file = &lock.file;
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(lock)
    }
}

/// Refuses a journal file that is not a whole SQLite database: a file cut
/// mid-page, or one shorter than the page count its header records. Such a
/// file is not a crash's doing (SQLite writes the main file in whole pages,
/// and only at checkpoints); opening it would fail later, mid-delivery, or
/// silently lose the rows of the missing pages. A missing or empty file is
/// fine: it becomes a new journal.
pub(crate) fn check_whole(path: &Path) -> Result<(), Refusal> {
    let damaged = Refusal::Damaged;
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(io) => return Err(Refusal::Io(path.to_path_buf(), io)),
    };
    let len = file
        .metadata()
        .map_err(|io| Refusal::Io(path.to_path_buf(), io))?
        .len();
    if len == 0 {
        return Ok(());
    }
    let mut header = [0u8; 100];
    if len < 100 || file.read_exact(&mut header).is_err() {
        return Err(damaged(format!(
            "{len} bytes is shorter than a SQLite header (100 bytes)"
        )));
    }
    if &header[..16] != b"SQLite format 3\0" {
        return Err(damaged("it is not a SQLite database".to_owned()));
    }
    let page = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    if page < 512 || !page.is_power_of_two() {
        return Err(damaged(format!("its header names a page size of {page}")));
    }
    if len % page != 0 {
        return Err(damaged(format!(
            "it is truncated mid-page: {len} bytes is not a whole number of {page}-byte pages"
        )));
    }
    // The in-header page count is valid only when its change counter matches,
    // and says nothing while a write-ahead log is pending: a checkpoint cut
    // short by a crash can leave page 1 (with the new count) written before
    // the pages after it, and SQLite completes it from the log on open.
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_pending = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    let valid = header[24..28] == header[92..96] && !wal_pending;
    if valid && pages * page > len {
        return Err(damaged(format!(
            "it is truncated: its header records {pages} pages, the file holds {}",
            len / page
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_owner_in_this_process_is_refused_naming_this_pid() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.db");
        let _first = JournalLock::try_acquire(&journal).unwrap();
        match JournalLock::try_acquire(&journal) {
            Err(Refusal::Locked { holder, .. }) => {
                assert_eq!(holder, format!("pid {}", std::process::id()));
            }
            other => panic!("a second live owner is refused: {other:?}"),
        }
    }

    #[test]
    fn a_lock_left_on_a_descriptor_a_child_inherited_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.db");
        let first = JournalLock::try_acquire(&journal).unwrap();
        // A duplicate of the descriptor, as a child holds it between `fork`
        // and `exec`: the lock outlives its owner until the copy closes.
        let inherited = first.file.try_clone().unwrap();
        drop(first);
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(inherited);
        });
        let again = JournalLock::try_acquire(&journal);
        closer.join().unwrap();
        assert!(again.is_ok(), "{again:?}");
    }
}
