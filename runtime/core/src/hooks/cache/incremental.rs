//! Cranelift's incremental cache, kept in the cache dir: each function
//! compiled once, looked up by its own contents the next time any component
//! holding it is compiled. An edited Python or TypeScript hook is the same
//! interpreter (CPython, StarlingMonkey) with other data, so nearly every
//! function is taken back instead of compiled.
//!
//! What comes back is native code, so it is trusted only as far as an
//! artifact is (`hooks/cache/artifact.rs`): the store lives in the private
//! cache dir (`incremental.sqlite`, 0600 in a 0700 folder, opened without
//! following a link), and each entry carries an HMAC-SHA256 under the
//! cache's key of its key and its bytes. An entry whose MAC does not check
//! is not used (the function is compiled again and the entry replaced): a
//! planted or damaged database costs time, never code.
//!
//! The database is opened on the first lookup (a load that compiles nothing
//! never opens it). Inserts are kept in memory and written in one
//! transaction by [`Incremental::flush`], which the runtime calls once its
//! hooks are loaded (and every [`BATCH`] inserts); entries unused for
//! [`KEEP_DAYS`] days are dropped then.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};

use crate::hooks::cache::dir;

/// The store's file in the cache dir.
pub(crate) const FILE: &str = "incremental.sqlite";
/// Entries not used for this many days are dropped at a flush.
pub(crate) const KEEP_DAYS: u64 = 30;
/// Inserts kept in memory before they are written.
const BATCH: usize = 4_096;

/// The open database and the cache's MAC key.
type Db = (Connection, [u8; dir::KEY_LEN]);

/// The incremental cache of one cache dir.
pub(crate) struct Incremental {
    cache_dir: PathBuf,
    /// The database and the cache's MAC key, once opened; `None` inside
    /// when it cannot be (the compile goes on without the cache).
    open: Mutex<Option<Option<Db>>>,
    /// Inserts not written yet.
    pending: Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
    /// Keys found this run: their `used` day is renewed at the flush.
    used: Mutex<Vec<Vec<u8>>>,
    hits: AtomicU64,
    misses: AtomicU64,
    refused: AtomicU64,
}

impl std::fmt::Debug for Incremental {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incremental")
            .field("cache_dir", &self.cache_dir)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

/// What a run's lookups found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// Functions taken from the cache.
    pub(crate) hits: u64,
    /// Functions compiled (not in the cache).
    pub(crate) misses: u64,
    /// Entries not used because their MAC did not check.
    pub(crate) refused: u64,
}

/// Today, in days since the epoch.
fn today() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400)
}

/// The MAC binding an entry to this cache: its key and its bytes.
fn mac(secret: &[u8], key: &[u8], value: &[u8]) -> [u8; 32] {
    let len = (key.len() as u64).to_le_bytes();
    dir::hmac_sha256(secret, &[b"hookrt incremental v1\0", &len, key, value])
}

/// Opens (making it when missing) the store in `cache_dir`.
fn open(cache_dir: &Path) -> Result<Db, String> {
    dir::create_private_dir(cache_dir)
        .map_err(|e| format!("cannot make {}: {e}", cache_dir.display()))?;
    let key = dir::mac_key(cache_dir).map_err(|e| format!("cannot read the cache's key: {e}"))?;
    let path = cache_dir.join(FILE);
    let conn = Connection::open_with_flags(
        &path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW,
    )
    .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .and_then(|()| {
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 CREATE TABLE IF NOT EXISTS entries (
                     key BLOB PRIMARY KEY,
                     value BLOB NOT NULL,
                     mac BLOB NOT NULL,
                     used INTEGER NOT NULL
                 ) WITHOUT ROWID;",
            )
        })
        .map_err(|e| format!("cannot set up {}: {e}", path.display()))?;
    Ok((conn, key))
}

impl Incremental {
    /// The store of `cache_dir` for a load, unless `HOOKRT_INCREMENTAL_CACHE`
    /// is `off` (every function compiled, as before the cache).
    pub(crate) fn for_load(cache_dir: &Path) -> Option<Arc<Incremental>> {
        let off = std::env::var("HOOKRT_INCREMENTAL_CACHE").as_deref() == Ok("off");
        (!off).then(|| Arc::new(Incremental::new(cache_dir)))
    }

    /// The store of `cache_dir`, opened on first use.
    pub(crate) fn new(cache_dir: &Path) -> Incremental {
        Incremental {
            cache_dir: cache_dir.to_path_buf(),
            open: Mutex::new(None),
            pending: Mutex::default(),
            used: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// Runs `f` on the open database, opening it first; `None` when it
    /// cannot be opened (said once, as a warning).
    fn with<T>(&self, f: impl FnOnce(&Connection, &[u8]) -> T) -> Option<T> {
        let mut db = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let db = db.get_or_insert_with(|| match open(&self.cache_dir) {
            Ok(db) => Some(db),
            Err(why) => {
                tracing::warn!("the incremental compile cache is off for this run: {why}");
                None
            }
        });
        db.as_ref().map(|(conn, key)| f(conn, key))
    }

    /// What this run's lookups found so far.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }

    /// [`Incremental::flush`] at the end of a load, saying what the lookups
    /// found (`-v`).
    pub(crate) fn finish(&self) {
        self.flush();
        let found = self.counts();
        if found != Counts::default() {
            tracing::debug!(
                hits = found.hits,
                misses = found.misses,
                refused = found.refused,
                "incremental compile cache"
            );
        }
    }

    /// Writes the inserts kept so far, renews the entries found, and drops
    /// those unused for [`KEEP_DAYS`]: one transaction. Nothing to write,
    /// nothing opened.
    pub(crate) fn flush(&self) {
        let pending = std::mem::take(
            &mut *self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let used = std::mem::take(
            &mut *self
                .used
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if pending.is_empty() && used.is_empty() {
            return;
        }
        let written = self.with(|conn, secret| write(conn, secret, &pending, &used));
        if let Some(Err(e)) = written {
            tracing::warn!(
                entries = pending.len(),
                "the incremental compile cache was not written: {e}"
            );
        }
    }
}

/// One transaction: `pending` written, `used` renewed, old entries dropped.
fn write(
    conn: &Connection,
    secret: &[u8],
    pending: &[(Vec<u8>, Vec<u8>)],
    used: &[Vec<u8>],
) -> rusqlite::Result<()> {
    let day = i64::try_from(today()).unwrap_or(i64::MAX);
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = (|| {
        let mut insert = conn.prepare_cached(
            "INSERT OR REPLACE INTO entries (key, value, mac, used) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (key, value) in pending {
            insert.execute(params![key, value, &mac(secret, key, value)[..], day])?;
        }
        let mut renew = conn.prepare_cached("UPDATE entries SET used = ?2 WHERE key = ?1")?;
        for key in used {
            renew.execute(params![key, day])?;
        }
        let old = day.saturating_sub(i64::try_from(KEEP_DAYS).unwrap_or(i64::MAX));
        conn.execute("DELETE FROM entries WHERE used < ?1", [old])?;
        Ok(())
    })();
    match done {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

impl wasmtime::CacheStore for Incremental {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let found = self.with(|conn, secret| {
            let row: Option<(Vec<u8>, Vec<u8>)> = conn
                .prepare_cached("SELECT value, mac FROM entries WHERE key = ?1")
                .and_then(|mut s| {
                    s.query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()
                })
                .ok()
                .flatten();
            row.map(|(value, stored)| (dir::same_mac(&stored, &mac(secret, key, &value)), value))
        });
        match found.flatten() {
            Some((true, value)) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                self.used
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(key.to_vec());
                Some(Cow::Owned(value))
            }
            Some((false, _)) => {
                if self.refused.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::warn!(
                        store = %self.cache_dir.join(FILE).display(),
                        "an incremental compile cache entry failed its MAC check; it is not used but compiled again"
                    );
                }
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let full = {
            let mut pending = self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            pending.push((key.to_vec(), value));
            pending.len() >= BATCH
        };
        if full {
            self.flush();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::CacheStore;

    #[test]
    fn an_entry_comes_back_after_a_flush_and_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = Incremental::new(dir.path());
        assert_eq!(store.get(b"k1"), None);
        assert!(store.insert(b"k1", b"code".to_vec()));
        store.flush();
        let again = Incremental::new(dir.path());
        assert_eq!(again.get(b"k1").as_deref(), Some(&b"code"[..]));
        assert_eq!(
            again.counts(),
            Counts {
                hits: 1,
                misses: 0,
                refused: 0
            }
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_planted_or_altered_entry_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let store = Incremental::new(dir.path());
        store.insert(b"k1", b"code".to_vec());
        store.flush();
        let conn = Connection::open(dir.path().join(FILE)).unwrap();
        // Altered bytes under the old MAC; a planted entry with a MAC under
        // another key.
        conn.execute(
            "UPDATE entries SET value = x'90909090' WHERE key = x'6b31'",
            [],
        )
        .unwrap();
        let other = [7u8; 32];
        conn.execute(
            "INSERT INTO entries (key, value, mac, used) VALUES (x'6b32', x'cc', ?1, ?2)",
            params![
                &mac(&other, b"k2", b"\xcc")[..],
                i64::try_from(today()).unwrap()
            ],
        )
        .unwrap();
        let again = Incremental::new(dir.path());
        assert_eq!(again.get(b"k1"), None);
        assert_eq!(again.get(b"k2"), None);
        assert_eq!(again.counts().refused, 2);
    }

    #[test]
    fn entries_unused_for_keep_days_are_dropped_at_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let store = Incremental::new(dir.path());
        store.insert(b"old", b"a".to_vec());
        store.insert(b"new", b"b".to_vec());
        store.flush();
        let conn = Connection::open(dir.path().join(FILE)).unwrap();
        let long_ago = i64::try_from(today() - KEEP_DAYS - 1).unwrap();
        conn.execute("UPDATE entries SET used = ?1", [long_ago])
            .unwrap();
        let again = Incremental::new(dir.path());
        assert!(
            again.get(b"new").is_some(),
            "found, so renewed at the flush"
        );
        again.insert(b"third", b"c".to_vec());
        again.flush();
        let keys: Vec<Vec<u8>> = conn
            .prepare("SELECT key FROM entries ORDER BY key")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(keys, [b"new".to_vec(), b"third".to_vec()]);
    }

    /// A real component (`tests/fixtures/gatekeeper-v0.3.0.wasm`) compiled
    /// through `store` by an engine of hookrt's settings.
    fn compile(store: &Arc<Incremental>, bytes: &[u8]) -> Vec<u8> {
        let mut config =
            crate::sandbox::engine::engine_config(crate::sandbox::engine::Allocator::OnDemand);
        let cache: crate::sandbox::engine::FunctionCache = store.clone();
        config.enable_incremental_compilation(cache).unwrap();
        let engine = wasmtime::Engine::new(&config).unwrap();
        engine.precompile_component(bytes).unwrap()
    }

    /// `bytes` compiled by an engine of hookrt's settings without the cache.
    fn plain(bytes: &[u8]) -> Vec<u8> {
        let config =
            crate::sandbox::engine::engine_config(crate::sandbox::engine::Allocator::OnDemand);
        let engine = wasmtime::Engine::new(&config).unwrap();
        engine.precompile_component(bytes).unwrap()
    }

    /// The fixture with a custom section added: another digest, the same
    /// functions (as an edited script hook is to the one before).
    fn fixture_and_edit() -> (Vec<u8>, Vec<u8>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/gatekeeper-v0.3.0.wasm");
        let bytes = std::fs::read(path).unwrap();
        let mut edited = bytes.clone();
        // Custom section 0: its size, then the name "edit" (length 4), then a byte.
        edited.extend_from_slice(&[0, 6, 4, b'e', b'd', b'i', b't', 1]);
        (bytes, edited)
    }

    #[test]
    fn an_edited_component_takes_its_functions_from_the_cache_and_compiles_alike() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, edited) = fixture_and_edit();
        let first = Arc::new(Incremental::new(dir.path()));
        let cold = compile(&first, &bytes);
        first.flush();
        let compiled = first.counts().misses;
        assert!(compiled > 100, "{:?}", first.counts());
        let second = Arc::new(Incremental::new(dir.path()));
        let warm = compile(&second, &edited);
        // Most functions are found: a few Cranelift compiles each time.
        let found = second.counts();
        assert!(
            found.hits * 4 >= (found.hits + found.misses) * 3 && found.refused == 0,
            "{found:?}"
        );
        let plain = plain(&edited);
        assert!(warm == plain, "the same artifact as without the cache");
        assert!(cold == warm, "a custom section changes no code");
    }

    #[test]
    fn with_every_entry_altered_the_component_is_compiled_again_and_alike() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, edited) = fixture_and_edit();
        let first = Arc::new(Incremental::new(dir.path()));
        compile(&first, &bytes);
        first.flush();
        let conn = Connection::open(dir.path().join(FILE)).unwrap();
        // Each entry's code with its first byte flipped, its MAC kept.
        let keys: Vec<Vec<u8>> = conn
            .prepare("SELECT key FROM entries")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for key in &keys {
            let value: Vec<u8> = conn
                .query_row("SELECT value FROM entries WHERE key = ?1", [key], |r| {
                    r.get(0)
                })
                .unwrap();
            let mut bad = value.clone();
            bad[0] ^= 0xff;
            conn.execute(
                "UPDATE entries SET value = ?2 WHERE key = ?1",
                params![key, bad],
            )
            .unwrap();
        }
        let second = Arc::new(Incremental::new(dir.path()));
        let rebuilt = compile(&second, &edited);
        let found = second.counts();
        assert!(found.hits == 0 && found.refused > 100, "{found:?}");
        let plain = plain(&edited);
        assert!(rebuilt == plain, "the same artifact as without the cache");
    }
}
