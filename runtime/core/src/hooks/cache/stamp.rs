//! Stamps: a MAC'd record that a file in the cache was verified, so a later
//! load can trust it without reading it again.
//!
//! Verifying a cached file (an artifact's MAC, a component's digest) means
//! reading and hashing all of it, which is most of what a start from cache
//! costs. A stamp is an HMAC, under the cache's private key, of what was
//! verified (the MAC or digest) and the file's identity when it was opened:
//! device, inode, size, owner, mode, and modification and change times to the
//! nanosecond. Writing to the file, replacing it (a rename, a copy) or
//! changing its owner or mode gives it a new change time, which nobody but
//! the kernel sets, so a stamp that still matches the open file means the
//! file holds the bytes that were verified. A file changed less than
//! [`SETTLE`] ago gets no stamp: on file systems with coarse timestamps a
//! write right after the check could keep the same change time.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::hooks::cache::dir;

/// Length of a stamp.
pub(crate) const STAMP_LEN: usize = 32;
/// How long ago a file must have last changed for it to be stamped.
pub(crate) const SETTLE: Duration = Duration::from_secs(2);

/// The stamp binding `verified` (what was checked: a MAC, a digest) to the
/// identity of the file `meta` describes; `None` when the file changed too
/// recently to be stamped (see [`SETTLE`]).
pub(crate) fn stamp(key: &[u8], verified: &[u8], meta: &Metadata) -> Option<[u8; STAMP_LEN]> {
    settled(meta, SETTLE).then(|| of(key, verified, meta))
}

/// Whether the file `meta` describes last changed at least `settle` ago.
fn settled(meta: &Metadata, settle: Duration) -> bool {
    let changed = || {
        UNIX_EPOCH.checked_add(Duration::new(
            u64::try_from(meta.ctime()).ok()?,
            u32::try_from(meta.ctime_nsec()).ok()?,
        ))
    };
    changed()
        .and_then(|c| SystemTime::now().duration_since(c).ok())
        .is_some_and(|age| age >= settle)
}

/// The stamp binding `verified` to the identities of several files and
/// folders (`entries`: each path with its metadata, in a fixed order): a
/// tree's digest. `None` when one of them changed less than `settle` ago.
pub(crate) fn stamp_tree(
    key: &[u8],
    verified: &[u8],
    entries: &[(std::path::PathBuf, Metadata)],
    settle: Duration,
) -> Option<[u8; STAMP_LEN]> {
    entries
        .iter()
        .all(|(_, m)| settled(m, settle))
        .then(|| of_tree(key, verified, entries))
}

/// Whether `stored` is the stamp of `verified` for `entries` as they are now.
pub(crate) fn matches_tree(
    key: &[u8],
    verified: &[u8],
    entries: &[(std::path::PathBuf, Metadata)],
    stored: &[u8],
) -> bool {
    dir::same_mac(stored, &of_tree(key, verified, entries))
}

fn of_tree(
    key: &[u8],
    verified: &[u8],
    entries: &[(std::path::PathBuf, Metadata)],
) -> [u8; STAMP_LEN] {
    let identities: Vec<(&[u8], [[u8; 8]; 9])> = entries
        .iter()
        .map(|(p, m)| (p.as_os_str().as_encoded_bytes(), identity(m)))
        .collect();
    let mut parts: Vec<&[u8]> = vec![b"hookrt tree stamp v1\0", verified, b"\0"];
    for (path, identity) in &identities {
        parts.push(path);
        parts.push(b"\0");
        parts.extend(identity.iter().map(|b| &b[..]));
    }
    dir::hmac_sha256(key, &parts)
}

/// Whether `stored` is the stamp of `verified` for the file `meta` describes.
pub(crate) fn matches(key: &[u8], verified: &[u8], meta: &Metadata, stored: &[u8]) -> bool {
    dir::same_mac(stored, &of(key, verified, meta))
}

fn of(key: &[u8], verified: &[u8], meta: &Metadata) -> [u8; STAMP_LEN] {
    let identity = identity(meta);
    let mut parts: Vec<&[u8]> = vec![b"hookrt stamp v1\0", verified, b"\0"];
    parts.extend(identity.iter().map(|b| &b[..]));
    dir::hmac_sha256(key, &parts)
}

/// A file's identity: device, inode, size, owner, mode, modification and
/// change times to the nanosecond.
fn identity(meta: &Metadata) -> [[u8; 8]; 9] {
    [
        meta.dev(),
        meta.ino(),
        meta.size(),
        u64::from(meta.uid()),
        u64::from(meta.mode()),
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
    ]
    .map(u64::to_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    #[test]
    fn a_stamp_holds_until_the_file_is_written_replaced_or_its_mode_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, b"verified bytes").unwrap();
        let key = [7u8; 32];
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(
            stamp(&key, b"mac", &meta),
            None,
            "just written: not stamped yet"
        );
        let s = of(&key, b"mac", &meta);
        assert!(matches(&key, b"mac", &meta, &s));
        assert!(
            !matches(&key, b"other mac", &meta, &s),
            "bound to what was verified"
        );
        assert!(!matches(&[8u8; 32], b"mac", &meta, &s), "bound to the key");

        // Past the kernel's timestamp granularity (a few ms at most).
        std::thread::sleep(Duration::from_millis(20));
        // Same length, same modification time restored: the change time moves.
        let mtime = meta.modified().unwrap();
        let mut f = fs::File::options().write(true).open(&path).unwrap();
        f.write_all(b"planted bytes!").unwrap();
        f.set_modified(mtime).unwrap();
        let after = fs::metadata(&path).unwrap();
        assert_eq!(
            (after.len(), after.modified().unwrap()),
            (meta.len(), mtime)
        );
        assert!(
            !matches(&key, b"mac", &after, &s),
            "an in-place write is seen"
        );

        let copy = dir.path().join("g");
        fs::copy(&path, &copy).unwrap();
        fs::rename(&copy, &path).unwrap();
        let replaced = fs::metadata(&path).unwrap();
        let s = of(&key, b"mac", &replaced);
        assert!(
            !matches(&key, b"mac", &after, &s),
            "a replaced file is seen"
        );

        std::thread::sleep(Duration::from_millis(20));
        let mut perms = replaced.permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o644);
        fs::set_permissions(&path, perms).unwrap();
        let chmodded = fs::metadata(&path).unwrap();
        assert!(
            !matches(&key, b"mac", &chmodded, &s),
            "a mode change is seen"
        );
    }
}
