//! The cache dir: where built components and precompiled artifacts live, and
//! how they are written so that only the operator's user can touch them.
//!
//! Precompiled artifacts are native code. If the cache lived in the agent
//! folder (as it once did, `<agent>/.hookrt`), the hook author could plant an
//! artifact under the expected name and have it mapped as code. So the cache
//! is per user, outside any agent folder (`$HOOKRT_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/hookrt`, else `~/.cache/hookrt`), its folders are 0700 and
//! its files 0600, and every artifact carries an HMAC-SHA256 under a random
//! key kept in the cache (`key`, 0600): an artifact without a valid MAC is
//! never deserialized (see `hooks/cache/artifact.rs`).

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::hooks::problem::Problem;

/// The name of the MAC key file inside the cache dir.
pub(crate) const KEY_FILE: &str = "key";
pub(crate) const KEY_LEN: usize = 32;

/// The per-user cache dir: `$HOOKRT_CACHE_DIR`, `$XDG_CACHE_HOME/hookrt`,
/// `$HOME/.cache/hookrt`, or (no home at all) a folder in the temp dir,
/// which a load refuses ([`unsafe_dir`]: the temp dir is everyone's).
pub fn default_cache_dir() -> PathBuf {
    per_user_dir("HOOKRT_CACHE_DIR", None)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("hookrt-cache-{}", user_tag())))
}

/// A per-user folder of hookrt's: `$<var>` when set, else `leaf` (or the
/// folder itself) under `$XDG_CACHE_HOME/hookrt`, else under
/// `$HOME/.cache/hookrt`; `None` without a home.
pub(crate) fn per_user_dir(var: &str, leaf: Option<&str>) -> Option<PathBuf> {
    let get = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = get(var) {
        return Some(dir);
    }
    let base = get("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .map(|xdg| xdg.join("hookrt"))
        .or_else(|| get("HOME").map(|home| home.join(".cache").join("hookrt")))?;
    Some(match leaf {
        Some(leaf) => base.join(leaf),
        None => base,
    })
}

/// Something that tells users apart in the shared temp dir: our uid.
fn user_tag() -> String {
    current_uid().to_string()
}

/// This process's effective uid: who owns what it creates.
pub(crate) fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why `dir` may not hold hookrt's cache or toolchain, when it exists:
/// it is a link, not a folder, owned by another user, or writable by group
/// or others (someone else could plant an artifact, a key or a package
/// there; `/tmp/hookrt-cache-<uid>` could have been made by anyone).
pub(crate) fn unsafe_dir(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = fs::symlink_metadata(dir) {
        if m.file_type().is_symlink() {
            return Some("is a symbolic link".to_owned());
        }
        if !m.is_dir() {
            return Some("is not a folder".to_owned());
        }
        if m.uid() != current_uid() {
            return Some(format!("is owned by uid {}, not this user", m.uid()));
        }
        if m.mode() & 0o022 != 0 {
            return Some(format!(
                "is writable by its group or others (mode {:o})",
                m.mode() & 0o777
            ));
        }
    }
    None
}

/// Creates `dir` (and missing parents) readable by its owner only (0700),
/// then checks the folder it opened, not the name: no link, ours, and
/// writable by nobody else. The leaf is made by one `mkdir` (no check
/// before it), so a folder someone else made first in a shared place (the
/// temp dir's `hookrt-cache-<uid>`) is found out on the descriptor and
/// refused, never used. An existing folder of ours is left as it is: it may
/// be one the operator chose.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let opened = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir)
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "{} cannot be opened as a folder of its own (a link, or not a folder): {e}",
                    dir.display()
                ),
            )
        })?;
    let m = opened.metadata()?;
    let refuse = |why: String| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}: someone else could plant files in it; refusing it (use a private folder of your own, 0700)",
                dir.display()
            ),
        ))
    };
    if m.uid() != current_uid() {
        return refuse(format!("is owned by uid {}, not this user", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return refuse(format!(
            "is writable by its group or others (mode {:o})",
            m.mode() & 0o777
        ));
    }
    Ok(())
}

/// A temp-file name no other writer (process or thread) uses at the same time.
pub(crate) fn unique_tmp(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    path.with_extension(format!("tmp{}-{n}", std::process::id()))
}

/// Writes `bytes` to `path` as an owner-only file (0600), atomically: a temp
/// file and a rename, so a reader never sees a torn file under its name.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = unique_tmp(path);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes));
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// The cache's MAC key, created on first use (32 random bytes, 0600). A key
/// others can read, or one of the wrong size, is replaced: every artifact
/// signed with it is then recompiled once. A key already read in this process
/// is taken again while its file is unchanged (one `stat`, not a read).
pub(crate) fn mac_key(cache_dir: &Path) -> std::io::Result<[u8; KEY_LEN]> {
    use std::os::unix::fs::MetadataExt;
    type Known = Vec<(PathBuf, (u64, u64, i64, i64, u32), [u8; KEY_LEN])>;
    static KNOWN: std::sync::Mutex<Known> = std::sync::Mutex::new(Vec::new());
    let path = cache_dir.join(KEY_FILE);
    let identity = |m: &fs::Metadata| (m.dev(), m.ino(), m.ctime(), m.ctime_nsec(), m.mode());
    let now = fs::symlink_metadata(&path).ok().map(|m| identity(&m));
    let mut known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&(_, _, key)) = known
        .iter()
        .find(|(p, id, _)| *p == path && Some(*id) == now)
    {
        return Ok(key);
    }
    let key = read_or_create_key(cache_dir, &path)?;
    if let Ok(m) = fs::symlink_metadata(&path) {
        known.retain(|(p, _, _)| *p != path);
        known.push((path, identity(&m), key));
    }
    Ok(key)
}

fn read_or_create_key(cache_dir: &Path, path: &Path) -> std::io::Result<[u8; KEY_LEN]> {
    let path = path.to_path_buf();
    create_private_dir(cache_dir)?;
    for _ in 0..3 {
        if let Some(key) = read_key(&path)? {
            return Ok(key);
        }
        let mut key = [0u8; KEY_LEN];
        fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        let tmp = unique_tmp(&path);
        write_private(&tmp, &key)?;
        // A hard link creates `key` only if it is absent, so two processes
        // starting at once agree on one key; a bad key is replaced by rename.
        let placed = match fs::hard_link(&tmp, &path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if read_key(&path)?.is_none() {
                    tracing::warn!(key = %path.display(), "cache key is not private or damaged; replacing it");
                    fs::rename(&tmp, &path)?;
                }
                Ok(())
            }
            other => other,
        };
        let _ = fs::remove_file(&tmp);
        placed?;
    }
    read_key(&path)?.ok_or_else(|| std::io::Error::other("the cache key keeps changing"))
}

/// The key at `path`, or `None` when it is missing, the wrong size, or
/// readable by others than its owner.
fn read_key(path: &Path) -> std::io::Result<Option<[u8; KEY_LEN]>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
        return Ok(None);
    }
    // Read through the file opened without following a link, checked on
    // the open descriptor: what was checked is what is read.
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Ok(None),
    };
    let opened = file.metadata()?;
    if !opened.is_file() || opened.permissions().mode() & 0o077 != 0 {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(KEY_LEN);
    file.take(KEY_LEN as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes.try_into().ok())
}

/// HMAC-SHA256 (RFC 2104) of the concatenated `parts` under `key`
/// (at most one SHA-256 block, 64 bytes, as the cache key is).
pub(crate) fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Compares two MACs without stopping at the first difference.
pub(crate) fn same_mac(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An exclusive lock on the cache's build folder, so concurrent hookrt
/// processes (or test threads) never write the same generated crate at once.
pub(crate) struct BuildLock(#[allow(dead_code, reason = "held for its lock")] fs::File);

impl BuildLock {
    /// Waits for the lock of `cache_dir` (creating the folder, private).
    pub(crate) fn acquire(cache_dir: &Path) -> Result<BuildLock, Problem> {
        let path = cache_dir.join("build.lock");
        let fail = |e: std::io::Error| {
            Problem::build(
                &path,
                format!("cannot lock the build cache: {e}"),
                "check permissions of the cache dir",
            )
        };
        create_private_dir(cache_dir).map_err(fail)?;
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(fail)?;
        file.lock().map_err(fail)?;
        Ok(BuildLock(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_case_2() {
        let mac = hmac_sha256(b"Jefe", &[b"what do ya want ", b"for nothing?"]);
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn the_key_is_private_and_stable_and_a_readable_one_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        let key = mac_key(&cache).unwrap();
        assert_eq!(mac_key(&cache).unwrap(), key);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&cache), 0o700);
        assert_eq!(mode(&cache.join(KEY_FILE)), 0o600);
        fs::set_permissions(cache.join(KEY_FILE), fs::Permissions::from_mode(0o644)).unwrap();
        assert_ne!(mac_key(&cache).unwrap(), key);
        assert_eq!(mode(&cache.join(KEY_FILE)), 0o600);
    }

    #[test]
    fn a_private_folder_someone_else_made_first_or_a_link_is_refused_on_what_was_opened() {
        let dir = tempfile::tempdir().unwrap();
        // Made by us: made 0700, and taken again as it is.
        let ours = dir.path().join("a/b/cache");
        create_private_dir(&ours).unwrap();
        create_private_dir(&ours).unwrap();
        assert_eq!(
            fs::metadata(&ours).unwrap().permissions().mode() & 0o777,
            0o700
        );
        // Planted before us: another user's (chowned; the tests run as
        // root), or writable by others, or a link to a folder of ours.
        let planted = dir.path().join("hookrt-cache-1");
        fs::create_dir(&planted).unwrap();
        fs::set_permissions(&planted, fs::Permissions::from_mode(0o777)).unwrap();
        let e = create_private_dir(&planted).unwrap_err();
        assert!(
            e.to_string()
                .contains("writable by its group or others (mode 777)"),
            "{e}"
        );
        fs::set_permissions(&planted, fs::Permissions::from_mode(0o700)).unwrap();
        if current_uid() == 0 {
            std::os::unix::fs::chown(&planted, Some(4242), None).unwrap();
            let e = create_private_dir(&planted).unwrap_err();
            assert!(
                e.to_string()
                    .contains("is owned by uid 4242, not this user"),
                "{e}"
            );
        }
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&ours, &link).unwrap();
        let e = create_private_dir(&link).unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot be opened as a folder of its own"),
            "{e}"
        );
    }
}
