//! The journal: the embedded durable store of events, deliveries and dead
//! letters (SQLite in WAL mode).
//!
//! An event is committed together with its planned deliveries before any hook
//! sees it, with `synchronous = FULL`, so `persisted` is only ever said after
//! the write reached the disk. Events arrive in batches (group commit): one
//! transaction, one fsync, many events. Acks are batched too; a lost ack only
//! means the delivery runs again with a higher attempt, which at-least-once
//! allows. Every write transaction starts `IMMEDIATE`: the writer and the
//! dispatcher each hold a connection, and a deferred transaction that reads
//! first could not upgrade to a write after the other committed (SQLite
//! answers "database is locked" at once instead of waiting). The schema is documented in `docs/journal.md` for `sqlite3` users.

use std::path::{Path, PathBuf};
use std::sync::MutexGuard;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension};

use crate::event::envelope::Envelope;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::state::{self, WriteLock};
use crate::service::owner::{self, JournalLock, Refusal};

mod coverage;
mod inspect;
pub(crate) mod keys;
mod migrate;
pub(crate) mod receipt;
mod records;
mod recover;
mod retention;
pub(crate) mod trail;
pub(crate) mod verdict;
pub mod verify;
mod write;

pub use coverage::{CallEvent, CoverageReadError, CoverageRecords, Voter, coverage_records};
pub use retention::{DEFAULT_RETENTION, PRUNE_BATCH};
pub use trail::TrailContext;
pub use verdict::{Anchor, Break, Expect, Verified};
pub use verify::verify;

/// Version of the schema below; bumped with a migration when it changes.
pub(crate) const JOURNAL_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- One row per accepted event, in dispatch order (seq).
CREATE TABLE IF NOT EXISTS events (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL,             -- the event id: unique per agent
    agent       TEXT NOT NULL,             -- coordinates.agent
    digest      BLOB,                      -- SHA-256 of what the event says (Envelope::digest); NULL: unreadable when migrated
    kind        TEXT NOT NULL,
    origin      TEXT NOT NULL,             -- 'agent', or 'cascade' for turn.failed/session.failed hookrt emitted
    envelope    TEXT NOT NULL,             -- the validated envelope (JSON)
    received_ms INTEGER NOT NULL,          -- unix time in ms when it was committed
    UNIQUE (agent, id)                     -- a re-submission with the same digest is a no-op, another is refused
);
-- Retention prunes finished events oldest first.
CREATE INDEX IF NOT EXISTS events_received ON events(received_ms);
-- One row per (event, hook, handler) delivery, planned when the event was committed.
CREATE TABLE IF NOT EXISTS deliveries (
    event_seq  INTEGER NOT NULL REFERENCES events(seq),
    position   INTEGER NOT NULL,           -- order within the event: specific handlers, then '*'
    hook       TEXT NOT NULL,
    handler    TEXT NOT NULL,
    attempts   INTEGER NOT NULL,           -- attempts that may have started (the next delivery's attempt is this + 1 after a restart)
    state      TEXT NOT NULL,              -- 'pending' | 'done' | 'dead' | 'skipped' (a file edit was already owned)
    outcome    TEXT,                       -- outcome of the last finished attempt
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (event_seq, position)
);
CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries(event_seq) WHERE state = 'pending';
-- What a decision or edit event decided (JSON), committed with its last acks,
-- so a re-submitted event is answered with it.
CREATE TABLE IF NOT EXISTS resolutions (
    event_seq  INTEGER PRIMARY KEY REFERENCES events(seq),
    resolution TEXT NOT NULL
);
-- Deliveries that failed their last attempt. `message` never holds event data.
CREATE TABLE IF NOT EXISTS dead_letters (
    event_seq INTEGER NOT NULL,
    position  INTEGER NOT NULL,
    event_id  TEXT NOT NULL,
    hook      TEXT NOT NULL,
    handler   TEXT NOT NULL,
    attempts  INTEGER NOT NULL,
    outcome   TEXT NOT NULL,
    message   TEXT NOT NULL,
    dead_ms   INTEGER NOT NULL,
    PRIMARY KEY (event_seq, position)
);
";

/// Why the journal could not be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// SQLite refused an operation.
    #[error("journal {path}: {sqlite}")]
    Sqlite {
        /// The journal file.
        path: PathBuf,
        /// What SQLite said.
        sqlite: rusqlite::Error,
    },
    /// The journal file's permissions could not be narrowed to its owner.
    #[error("journal {path}: cannot make it private (0600): {io}")]
    Io {
        /// The journal file.
        path: PathBuf,
        /// What the file system said.
        io: std::io::Error,
    },
    /// `hookrt journal` was pointed at a file that does not exist.
    #[error("journal {0}: no such file (a journal is created by `hookrt run --journal`)")]
    Missing(PathBuf),
    /// The file was written by a newer hookrt.
    #[error(
        "journal {path}: schema version {found} is newer than this hookrt supports ({JOURNAL_VERSION}); use a newer hookrt"
    )]
    NewerSchema {
        /// The journal file.
        path: PathBuf,
        /// The version found.
        found: i64,
    },
    /// Another process (or service) owns the journal: one journal, one owner.
    #[error(
        "journal {journal} is in use by another hookrt ({holder}, holding {lock}); stop it, or give this one another journal"
    )]
    Locked {
        /// The journal file.
        journal: PathBuf,
        /// The lock file beside it.
        lock: PathBuf,
        /// Who holds it: `pid N`, or `unknown pid`.
        holder: String,
    },
    /// The file is not a whole SQLite database (cut short, or not SQLite).
    #[error("journal {path} is damaged: {reason}; restore it from a backup or move it aside")]
    Damaged {
        /// The journal file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The trail's entries after its last checkpoint (a tail another
    /// process left) do not verify, so they are not signed as found.
    #[error(
        "journal {path}: the trail's entries after its last signed checkpoint do not hold: {broken}; they were left unsigned (a tail edited while no hookrt ran is never signed as found): check it with `hookrt journal verify`, then restore the journal from a backup or move it aside"
    )]
    TailBroken {
        /// The journal file.
        path: PathBuf,
        /// The first place the tail breaks.
        broken: Break,
    },
    /// A stored envelope could not be read back.
    #[error("journal {path}: stored event {seq} is unreadable: {message}")]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// Its seq.
        seq: i64,
        /// What went wrong.
        message: String,
    },
}

impl JournalError {
    fn refused(journal: &Path, refusal: Refusal) -> JournalError {
        match refusal {
            Refusal::Io(path, io) => JournalError::Io { path, io },
            Refusal::Locked { lock, holder } => JournalError::Locked {
                journal: journal.to_path_buf(),
                lock,
                holder,
            },
            Refusal::Damaged(reason) => JournalError::Damaged {
                path: journal.to_path_buf(),
                reason,
            },
        }
    }
}

impl JournalLock {
    /// Takes the exclusive lock of `journal` (`<journal>.lock`), or says
    /// which process holds it ([`JournalError::Locked`]). One journal, one
    /// owner: `HookService` holds it while it runs.
    pub fn acquire(journal: &Path) -> Result<JournalLock, JournalError> {
        JournalLock::try_acquire(journal).map_err(|r| JournalError::refused(journal, r))
    }
}

/// Where an emitted event ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// Newly committed with this seq.
    New(i64),
    /// The agent's id was already in the journal (with this seq) for the
    /// same event (same digest): nothing was written.
    Duplicate(i64),
    /// The agent's id was already in the journal (with this seq) for an
    /// event that says something else: refused, nothing was written.
    Conflict(i64),
}

/// One delivery to plan: (hook slug, handler key).
pub type Plan = Vec<(String, String)>;

/// A delivery not yet acked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelivery {
    /// Its position in the event's plan.
    pub position: i64,
    /// The hook slug.
    pub hook: String,
    /// The handler key.
    pub handler: String,
    /// Attempts recorded so far.
    pub attempts: u32,
}

impl PendingDelivery {
    /// The deliveries of a newly planned event, each at `attempts`.
    pub(crate) fn planned(plan: Plan, attempts: u32) -> Vec<PendingDelivery> {
        plan.into_iter()
            .enumerate()
            .map(|(i, (hook, handler))| PendingDelivery {
                position: i as i64,
                hook,
                handler,
                attempts,
            })
            .collect()
    }
}

/// An event with unacked deliveries.
#[derive(Debug, Clone)]
pub(crate) struct PendingEvent {
    /// Journal order.
    pub seq: i64,
    /// The stored envelope.
    pub envelope: Envelope,
    /// Its unacked deliveries, in plan order.
    pub deliveries: Vec<PendingDelivery>,
    /// Its acked deliveries' answers (decision and edit events), in plan order.
    pub answered: Vec<Answered>,
}

/// How a finished delivery is recorded.
#[derive(Debug, Clone)]
pub(crate) struct Ack {
    /// The event's seq.
    pub event_seq: i64,
    /// The delivery's position.
    pub position: i64,
    /// The attempt that finished.
    pub attempts: u32,
    /// How it ended.
    pub outcome: Outcome,
    /// For a final failure: the dead letter's message (no event data).
    pub dead: Option<String>,
    /// Not asked: an earlier hook already owned the file edit.
    pub skipped: bool,
    /// For decision and edit events: what the handler answered (JSON of
    /// [`crate::event::Answer`]).
    pub answer: Option<String>,
}

/// A delivery of a decision or edit event acked before a restart, with its
/// answer: part of the event's resolution when the rest is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answered {
    /// Its position in the event's plan.
    pub position: i64,
    /// The hook id.
    pub hook: String,
    /// The handler key.
    pub handler: String,
    /// How it ended.
    pub outcome: Outcome,
    /// What it answered (JSON of [`crate::event::Answer`]).
    pub answer: String,
}

/// One dead letter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeadLetter {
    /// The event's seq.
    pub event_seq: i64,
    /// The event id.
    pub event_id: String,
    /// The hook slug.
    pub hook: String,
    /// The handler key.
    pub handler: String,
    /// Attempts made.
    pub attempts: u32,
    /// The last outcome.
    pub outcome: String,
    /// The redacted failure message.
    pub message: String,
}

/// Counts for `hookrt journal status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct JournalStatus {
    /// Events committed.
    pub events: i64,
    /// Deliveries not yet acked.
    pub pending: i64,
    /// Deliveries acked after finishing.
    pub done: i64,
    /// Deliveries that failed their last attempt.
    pub dead: i64,
    /// Deliveries acked after more than one attempt.
    pub repeated: i64,
}

/// An open journal.
pub struct Journal {
    conn: Connection,
    path: PathBuf,
    /// Taken around every write transaction, and shared by the connections
    /// [`Journal::open_beside`] opened: see [`Journal::write_transaction`].
    writes: WriteLock,
    /// What the trail's entries say of the hooks, shared by the service's
    /// connections; `None` writes no trail (`trail` in `ServiceOptions`).
    trail: Option<trail::SharedContext>,
}

/// Maps a SQLite error to one naming the journal at `path`.
fn sqlite_error(path: &Path) -> impl Fn(rusqlite::Error) -> JournalError + Copy + '_ {
    move |sqlite| JournalError::Sqlite {
        path: path.to_path_buf(),
        sqlite,
    }
}

/// How long an open or a write waits for another connection's lock.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Puts the journal in WAL mode (kept in the file: a no-op once done). Two
/// connections switching a new journal at once can each hold what the other
/// needs; SQLite answers one of them "database is locked" at once, without
/// waiting, so the switch is tried again until [`BUSY_WAIT`] has passed.
fn use_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_WAIT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            answer => return answer.map(drop),
        }
    }
}

/// Before `context`'s key signs a head it did not write (its last entry is
/// no checkpoint): the tail checked ([`verify::check_found_tail`]).
fn check_tail_before_signing(
    tx: &Connection,
    context: &trail::TrailContext,
    path: &Path,
) -> Result<(), JournalError> {
    let unsigned = trail::last_kind(tx)
        .map_err(sqlite_error(path))?
        .is_some_and(|kind| kind != "checkpoint");
    if context.signer.is_none() || !unsigned {
        return Ok(());
    }
    verify::check_found_tail(tx).map_err(|broken| JournalError::TailBroken {
        path: path.to_path_buf(),
        broken,
    })
}

/// A write transaction holding this process's write lock, and the journal's
/// path for error messages (see [`Journal::write_transaction`]).
type Writing<'a> = (MutexGuard<'a, ()>, rusqlite::Transaction<'a>, &'a Path);

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Journal {
    /// Opens (creating if needed) the journal at `path`.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let err = |source| JournalError::Sqlite {
            path: path.to_path_buf(),
            sqlite: source,
        };
        owner::check_whole(path).map_err(|r| JournalError::refused(path, r))?;
        // The journal holds event payloads: owner-only, like the state in it.
        state::make_private(path).map_err(|e| JournalError::Io {
            path: path.to_path_buf(),
            io: e,
        })?;
        let mut conn = Connection::open(path).map_err(err)?;
        // Before anything that may wait on another opener's lock.
        conn.busy_timeout(BUSY_WAIT).map_err(err)?;
        use_wal(&conn).map_err(err)?;
        // FULL: a commit returns only after the WAL is synced, so `persisted`
        // holds across power loss, not just process crashes. Foreign keys
        // are switched on after the schema is set up (a migration rebuilds
        // a table others refer to).
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF;")
            .map_err(err)?;
        state::make_private_sidecars(path).map_err(|e| JournalError::Io {
            path: path.to_path_buf(),
            io: e,
        })?;
        // One write transaction: a journal opened by several processes at
        // once (`hookrt journal status` while `hookrt run` creates it) gets
        // its schema, and each column added since, exactly once.
        let setup = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        setup.execute_batch(SCHEMA).map_err(err)?;
        // The trail covers the events committed from its first write on:
        // the ones before (a journal older than the trail) are not in it.
        setup.execute_batch(trail::SCHEMA).map_err(err)?;
        setup
            .execute(
                "INSERT OR IGNORE INTO meta(key, value) SELECT 'trail_from_event', CAST(coalesce(max(seq), 0) + 1 AS TEXT) FROM events",
                [],
            )
            .map_err(err)?;
        // Added after schema 1 was released: each acked delivery's answer
        // (decision and edit events), so one interrupted by a crash is
        // finished with the answers given before it.
        let has_answer: bool = setup
            .query_row(
                "SELECT count(*) FROM pragma_table_info('deliveries') WHERE name = 'answer'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(err)?
            > 0;
        if !has_answer {
            setup
                .execute_batch("ALTER TABLE deliveries ADD COLUMN answer TEXT")
                .map_err(err)?;
        }
        let found: Option<String> = setup
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?;
        match found.and_then(|v| v.parse::<i64>().ok()) {
            Some(v) if v > JOURNAL_VERSION => {
                return Err(JournalError::NewerSchema {
                    path: path.to_path_buf(),
                    found: v,
                });
            }
            Some(v) if v == JOURNAL_VERSION => {}
            _ => {
                migrate::scoped_ids(&setup).map_err(err)?;
                setup
                    .execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?1)",
                        [JOURNAL_VERSION.to_string()],
                    )
                    .map_err(err)?;
            }
        }
        setup.commit().map_err(err)?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(err)?;
        Ok(Journal {
            conn,
            path: path.to_path_buf(),
            writes: WriteLock::default(),
            trail: None,
        })
    }

    /// Another connection to this journal, for another thread of the same
    /// process (the service's writer beside its dispatcher): the two share
    /// an in-process write lock instead of SQLite's busy wait (see
    /// [`Journal::write_transaction`]).
    pub(crate) fn open_beside(&self) -> Result<Journal, JournalError> {
        Ok(Journal {
            writes: self.writes.clone(),
            trail: self.trail.clone(),
            ..Journal::open(&self.path)?
        })
    }

    /// Writes the trail from now on, its entries saying what `context`
    /// says (shared with the connections opened beside this one after).
    pub(crate) fn keep_trail(&mut self, context: trail::SharedContext) {
        self.trail = Some(context);
    }

    /// The trail's context, to update on a reload.
    pub(crate) fn trail_context(&self) -> Option<&trail::SharedContext> {
        self.trail.as_ref()
    }

    /// Appends a signed checkpoint of the trail's head (when the trail has
    /// a signing key and the head is not one already): at shutdown.
    pub(crate) fn checkpoint(&mut self) -> Result<(), JournalError> {
        let Some(context) = self.trail.clone() else {
            return Ok(());
        };
        let context = trail::read(&context);
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        trail::checkpoint(&tx, &context).map_err(err)?;
        tx.commit().map_err(err)
    }

    /// Signs the tail a stopped or crashed process left (the entries after
    /// the last checkpoint), once it verifies as [`verify`] would check it:
    /// at start, when the trail has a signing key. A tail that does not
    /// verify is not signed: [`JournalError::TailBroken`].
    pub(crate) fn sign_found_tail(&mut self) -> Result<(), JournalError> {
        let Some(context) = self.trail.clone() else {
            return Ok(());
        };
        let context = trail::read(&context);
        let (_writing, tx, path) = self.write_transaction()?;
        check_tail_before_signing(&tx, &context, path)?;
        let err = sqlite_error(path);
        trail::checkpoint(&tx, &context).map_err(err)?;
        tx.commit().map_err(err)
    }

    /// The write lock of this journal's file, for the hooks' state kept
    /// in it ([`StateStore`](crate::sandbox::StateStore)).
    pub(crate) fn write_lock(&self) -> WriteLock {
        self.writes.clone()
    }

    /// Opens an existing journal; never creates one (for inspection).
    pub fn open_existing(path: &Path) -> Result<Journal, JournalError> {
        if !path.is_file() {
            return Err(JournalError::Missing(path.to_path_buf()));
        }
        Journal::open(path)
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a write transaction, `IMMEDIATE` (see the module's doc), and
    /// gives the journal's path with it for error messages. It holds this
    /// process's write lock of the file ([`WriteLock`], shared with the
    /// connections beside this one and the hooks' state) until dropped.
    /// Keep the guard first in the tuple you bind, so it is released after
    /// the transaction (bindings drop last to first).
    fn write_transaction(&mut self) -> Result<Writing<'_>, JournalError> {
        let Journal {
            conn, path, writes, ..
        } = self;
        let writing = state::lock_writes(writes);
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite_error(path))?;
        Ok((writing, tx, path))
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> JournalError + '_ {
        |source| JournalError::Sqlite {
            path: self.path.clone(),
            sqlite: source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::envelope::Coordinates;

    fn event(i: u64) -> Envelope {
        Envelope::new(
            format!("e{i}"),
            "message.received",
            Coordinates::new("agent", "session", i),
            serde_json::json!({"message": {"id": format!("m{i}"), "role": "user", "content": "hi"}}),
        )
        .unwrap()
    }

    /// Without the shared lock, a connection that finds the other's write
    /// transaction open gets "database is locked" at once here (no busy
    /// wait at all): with it, each waits for the other's commit.
    #[test]
    fn connections_beside_each_other_share_a_write_lock_without_sqlite_busy_waits() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Journal::open(&dir.path().join("journal.db")).unwrap();
        let mut acker = writer.open_beside().unwrap();
        for j in [&writer, &acker] {
            j.conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        }
        let plan: Plan = vec![("audit".into(), "*".into())];
        let first = event(0);
        let seq = match writer.insert(&[(&first, &plan, "agent")]).unwrap()[0] {
            Inserted::New(seq) => seq,
            other => panic!("expected a new event, got {other:?}"),
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 1..=200 {
                    let e = event(i);
                    let inserted = writer.insert(&[(&e, &plan, "agent")]).unwrap();
                    assert!(matches!(inserted[..], [Inserted::New(_)]));
                }
            });
            s.spawn(|| {
                for attempt in 1..=200 {
                    acker.start_attempt(seq, 0, attempt).unwrap();
                }
            });
        });
        assert_eq!(writer.status().unwrap().events, 201);
    }

    #[test]
    fn hooks_state_in_the_journal_file_shares_the_journals_write_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let mut writer = Journal::open(&path).unwrap();
        writer.conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        let store =
            crate::sandbox::StateStore::open_with_write_lock(&path, writer.write_lock()).unwrap();
        store.never_wait_for_locks();
        let state = store.access("counter");
        let plan: Plan = vec![("counter".into(), "*".into())];
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..200 {
                    let e = event(i);
                    writer.insert(&[(&e, &plan, "agent")]).unwrap();
                }
            });
            s.spawn(|| {
                for n in 0..200u32 {
                    state.set("n", &n.to_le_bytes()).unwrap();
                    if n % 2 == 1 {
                        // A failed delete is only logged: seen by the read.
                        state.delete("n");
                        assert_eq!(state.get("n"), None);
                    }
                }
            });
        });
        assert_eq!(writer.status().unwrap().events, 200);
    }

    #[test]
    fn an_id_seen_before_in_the_batch_or_the_journal_is_a_duplicate_with_its_seq() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(&dir.path().join("journal.db")).unwrap();
        let plan: Plan = vec![("audit".into(), "*".into())];
        let (a, b) = (event(1), event(2));
        let first = j
            .insert(&[(&a, &plan, "agent"), (&a, &plan, "agent")])
            .unwrap();
        let Inserted::New(seq) = first[0] else {
            panic!("expected a new event, got {first:?}")
        };
        assert_eq!(first[1], Inserted::Duplicate(seq));
        let again = j
            .insert(&[(&b, &plan, "agent"), (&a, &plan, "agent")])
            .unwrap();
        assert!(matches!(again[0], Inserted::New(s) if s != seq));
        assert_eq!(again[1], Inserted::Duplicate(seq));
        // One delivery each for the two stored events, none for the duplicates.
        assert_eq!(j.status().unwrap().pending, 2);
    }

    #[test]
    fn an_id_is_an_agents_own_and_a_repeat_that_says_something_else_is_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(&dir.path().join("journal.db")).unwrap();
        let plan: Plan = vec![("audit".into(), "*".into())];
        // Clones: `event` stamps the time, which the digest covers.
        let a = event(1);
        let mut claim = a.clone();
        claim.data = crate::event::Data::new(serde_json::json!({"text": "something else"}));
        let mut theirs = a.clone();
        theirs.coordinates.agent = "another".into();
        let mut retried = a.clone();
        retried.attempt = 7;
        retried.coordinates.ordinal = Some(3);
        let got = j
            .insert(&[
                (&a, &plan, "agent"),
                (&claim, &plan, "agent"),
                (&theirs, &plan, "agent"),
                (&retried, &plan, "agent"),
            ])
            .unwrap();
        let Inserted::New(seq) = got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(got[1], Inserted::Conflict(seq));
        assert!(matches!(got[2], Inserted::New(s) if s != seq), "{got:?}");
        assert_eq!(
            got[3],
            Inserted::Duplicate(seq),
            "attempt and ordinal are the runtime's"
        );
    }

    #[test]
    fn a_schema_1_journal_is_migrated_to_ids_per_agent_with_digests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let a = event(1);
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 INSERT INTO meta VALUES ('schema_version', '1');
                 CREATE TABLE events (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
                     origin TEXT NOT NULL, envelope TEXT NOT NULL, received_ms INTEGER NOT NULL);
                 CREATE TABLE deliveries (event_seq INTEGER NOT NULL REFERENCES events(seq), position INTEGER NOT NULL,
                     hook TEXT NOT NULL, handler TEXT NOT NULL, attempts INTEGER NOT NULL, state TEXT NOT NULL,
                     outcome TEXT, updated_ms INTEGER NOT NULL, PRIMARY KEY (event_seq, position));",
            )
            .unwrap();
            conn.execute(
                "INSERT INTO events VALUES (5, ?1, ?2, 'agent', ?3, 0)",
                rusqlite::params![a.id, a.kind, serde_json::to_string(&a).unwrap()],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO deliveries VALUES (5, 0, 'audit', '*', 1, 'pending', NULL, 0)",
                [],
            )
            .unwrap();
        }
        let mut j = Journal::open(&path).unwrap();
        let plan: Plan = vec![("audit".into(), "*".into())];
        let mut claim = event(1);
        claim.timestamp = "2026-12-01T00:00:00Z".into();
        let got = j
            .insert(&[(&a, &plan, "agent"), (&claim, &plan, "agent")])
            .unwrap();
        assert_eq!(got, [Inserted::Duplicate(5), Inserted::Conflict(5)]);
        assert_eq!(
            j.status().unwrap().pending,
            1,
            "the stored delivery is kept"
        );
        let version: String = j
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(version, JOURNAL_VERSION.to_string());
        drop(j);
        // Opening it again changes nothing.
        let mut j = Journal::open(&path).unwrap();
        assert_eq!(
            j.insert(&[(&a, &plan, "agent")]).unwrap(),
            [Inserted::Duplicate(5)]
        );
    }
}
