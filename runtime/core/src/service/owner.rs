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

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

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
    _file: File,
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
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                // Best effort: the holder may not have written its pid yet.
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
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
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(JournalLock { _file: file })
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
