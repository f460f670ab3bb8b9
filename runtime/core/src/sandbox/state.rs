//! State: per-hook key-value storage behind the `state` import.
//!
//! Values live in SQLite: in the journal database when the service runs with
//! one (so they survive restarts), otherwise in memory. Keys are namespaced by
//! the hook's slug, so a hook can never read or change another hook's state.
//! Sizes are capped so a hook cannot exhaust the host's disk or memory.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};

/// Longest key accepted: room for a prefix of a hook's own and any id an
/// envelope may carry (`session/<id>`, ids are up to 256 bytes), and still a
/// bound on what one key can hold.
pub(crate) const MAX_KEY_BYTES: usize = 512;
/// Largest single value accepted.
pub(crate) const MAX_VALUE_BYTES: usize = 64 << 10;
/// Most bytes (keys plus values) one hook may keep; blocks a hook from filling
/// the journal's disk.
pub(crate) const MAX_HOOK_BYTES: usize = 1 << 20;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS hook_state (
    hook  TEXT NOT NULL,
    key   TEXT NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (hook, key)
);";

/// The lock that orders the writes to one database file of the connections
/// one process holds to it (the journal's writer and ack connections, and
/// the state): a connection that finds SQLite's write lock taken sleeps in
/// SQLite's busy handler (1 ms, then longer), while one waiting on this lock
/// starts the moment the other commits.
pub(crate) type WriteLock = Arc<Mutex<()>>;

/// Waits until this thread may write. A panic while writing leaves nothing
/// behind the lock to repair (SQLite rolls its transaction back): taken all
/// the same.
pub(crate) fn lock_writes(writes: &WriteLock) -> MutexGuard<'_, ()> {
    writes.lock().unwrap_or_else(|e| e.into_inner())
}

/// The state of every hook of a runtime.
pub struct StateStore {
    inner: Mutex<Inner>,
    /// Taken around each write; shared with the journal's connections to the
    /// same file ([`StateStore::open_with_write_lock`]).
    writes: WriteLock,
}

/// The connection, and each hook's stored bytes (keys and values), counted
/// once from the database on the hook's first write and kept up to date
/// after: checking the cap costs one lookup, not a sum over every key.
struct Inner {
    /// `None` for an in-memory store nobody has used yet: made on first
    /// use (most runs of a process per event never touch state).
    conn: Option<Connection>,
    used: HashMap<String, usize>,
}

/// A hook's view of the store: only its own keys.
#[derive(Clone)]
pub struct StateAccess {
    store: Arc<StateStore>,
    slug: String,
}

impl StateStore {
    /// State kept in memory for the life of the process.
    pub(crate) fn in_memory() -> Arc<StateStore> {
        Arc::new(StateStore::with(None, WriteLock::default()))
    }

    /// State kept in the database at `path` (the journal's).
    pub fn open(path: &Path) -> rusqlite::Result<Arc<StateStore>> {
        StateStore::open_with_write_lock(path, WriteLock::default())
    }

    /// [`StateStore::open`], its writes ordered by `writes` with the
    /// journal's connections to the same file.
    pub(crate) fn open_with_write_lock(
        path: &Path,
        writes: WriteLock,
    ) -> rusqlite::Result<Arc<StateStore>> {
        make_private(path).map_err(io_error)?;
        let conn = Connection::open(path)?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        make_private_sidecars(path).map_err(io_error)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Arc::new(StateStore::with(Some(conn), writes)))
    }

    fn with(conn: Option<Connection>, writes: WriteLock) -> StateStore {
        StateStore {
            inner: Mutex::new(Inner {
                conn,
                used: HashMap::new(),
            }),
            writes,
        }
    }

    /// Makes a write that finds the file's write lock taken fail at once
    /// ("database is locked"), for tests that show nothing ever waits on it.
    #[cfg(test)]
    pub(crate) fn never_wait_for_locks(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .conn()
            .unwrap()
            .busy_timeout(std::time::Duration::ZERO)
            .unwrap();
    }

    /// The view of hook `slug`.
    pub fn access(self: &Arc<Self>, slug: &str) -> StateAccess {
        StateAccess {
            store: self.clone(),
            slug: slug.to_owned(),
        }
    }
}

impl StateAccess {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.store.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let mut inner = self.lock();
        let conn = match inner.conn() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(hook = %self.slug, "state read failed: {e}");
                return None;
            }
        };
        // Each statement is compiled once per connection (its cache), not
        // on every call: a state read sits in a hook's delivery.
        let found = conn
            .prepare_cached("SELECT value FROM hook_state WHERE hook = ?1 AND key = ?2")
            .and_then(|mut s| s.query_row(params![self.slug, key], |r| r.get(0)))
            .optional();
        found.unwrap_or_else(|e| {
            tracing::error!(hook = %self.slug, "state read failed: {e}");
            None
        })
    }

    /// Stores `value` under `key`, within the caps.
    pub(crate) fn set(&self, key: &str, value: &[u8]) -> Result<(), String> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(format!("state key must be 1 to {MAX_KEY_BYTES} bytes"));
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(format!(
                "state value is {} bytes, above the {MAX_VALUE_BYTES}-byte limit",
                value.len()
            ));
        }
        let mut inner = self.lock();
        let used = inner.stored(&self.slug)?;
        let old = inner.size_of(&self.slug, key)?;
        let total = used.saturating_sub(old) + key.len() + value.len();
        if total > MAX_HOOK_BYTES {
            return Err(format!(
                "state of hook `{}` would exceed {MAX_HOOK_BYTES} bytes",
                self.slug
            ));
        }
        let _writing = lock_writes(&self.store.writes);
        inner
            .conn()?
            .prepare_cached(
                "INSERT INTO hook_state(hook, key, value) VALUES (?1, ?2, ?3) ON CONFLICT(hook, key) DO UPDATE SET value = excluded.value",
            )
            .and_then(|mut s| s.execute(params![self.slug, key, value]))
            .map_err(|e| format!("state unavailable: {e}"))?;
        inner.used.insert(self.slug.clone(), total);
        Ok(())
    }

    /// Removes `key`.
    pub(crate) fn delete(&self, key: &str) {
        let mut inner = self.lock();
        let _writing = lock_writes(&self.store.writes);
        let gone = (|| {
            let used = inner.stored(&self.slug)?;
            let old = inner.size_of(&self.slug, key)?;
            inner
                .conn()?
                .prepare_cached("DELETE FROM hook_state WHERE hook = ?1 AND key = ?2")
                .and_then(|mut s| s.execute(params![self.slug, key]))
                .map_err(|e| e.to_string())?;
            inner
                .used
                .insert(self.slug.clone(), used.saturating_sub(old));
            Ok::<_, String>(())
        })();
        if let Err(e) = gone {
            tracing::error!(hook = %self.slug, "state delete failed: {e}");
        }
    }
}

impl Inner {
    /// The connection, an in-memory one made now if there was none.
    fn conn(&mut self) -> Result<&Connection, String> {
        if self.conn.is_none() {
            let conn = Connection::open_in_memory()
                .and_then(|c| c.execute_batch(SCHEMA).map(|_| c))
                .map_err(|e| {
                    format!("state unavailable: cannot open an in-memory database: {e}")
                })?;
            self.conn = Some(conn);
        }
        Ok(self.conn.as_ref().expect("made above"))
    }

    /// The bytes hook `slug` stores, summed from the database once.
    fn stored(&mut self, slug: &str) -> Result<usize, String> {
        if let Some(&n) = self.used.get(slug) {
            return Ok(n);
        }
        let n: i64 = self
            .conn()?
            .query_row(
                "SELECT COALESCE(SUM(length(CAST(key AS BLOB)) + length(value)), 0) FROM hook_state WHERE hook = ?1",
                params![slug],
                |r| r.get(0),
            )
            .map_err(|e| format!("state unavailable: {e}"))?;
        let n = usize::try_from(n).unwrap_or(0);
        self.used.insert(slug.to_owned(), n);
        Ok(n)
    }

    /// The bytes `key` takes now (key and value), 0 when it is not stored.
    fn size_of(&mut self, slug: &str, key: &str) -> Result<usize, String> {
        let n: Option<i64> = self
            .conn()?
            .prepare_cached(
                "SELECT length(CAST(key AS BLOB)) + length(value) FROM hook_state WHERE hook = ?1 AND key = ?2",
            )
            .and_then(|mut s| s.query_row(params![slug, key], |r| r.get(0)))
            .optional()
            .map_err(|e| format!("state unavailable: {e}"))?;
        Ok(n.and_then(|n| usize::try_from(n).ok()).unwrap_or(0))
    }
}

/// Creates the database file at `path` readable and writable by its owner
/// only (0600), or narrows an existing one to that: it holds event payloads
/// and hook state. SQLite creates the `-wal` and `-shm` files with the
/// permissions of the database file, so they follow.
pub(crate) fn make_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

/// Narrows `-wal`/`-shm` files left by an earlier process that created them
/// with the default umask (before the database file itself was narrowed).
pub(crate) fn make_private_sidecars(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for suffix in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::set_permissions(&name, std::fs::Permissions::from_mode(0o600)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

fn io_error(e: std::io::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}
