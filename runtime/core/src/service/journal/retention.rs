//! Retention: pruning what the journal no longer needs, so its size stays
//! bounded on an endless stream.
//!
//! An event whose every delivery finished (`done` or `skipped`) and that was
//! committed before the cutoff is removed with its deliveries and its
//! resolution. An event with a pending delivery or a dead letter is kept,
//! whatever its age: the first must still run, the second can be re-driven.
//! SQLite reuses the freed pages for new rows, so the file stops growing
//! once the pruned rows make room for the new ones (`hookrt journal prune
//! --vacuum` gives the space back to the file system).
//!
//! What it costs: an id re-submitted after its event was pruned is no longer
//! known, so it is delivered again as new. Keep the retention longer than
//! any producer may re-send an event.

use std::time::Duration;

use rusqlite::params;

use super::{Journal, JournalError, now_ms, sqlite_error, trail};

/// Events removed by one pruning transaction at most, so that a backlog is
/// pruned in steps that never hold the write lock for long.
pub const PRUNE_BATCH: usize = 10_000;

/// How long finished events are kept by default: a week.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

impl Journal {
    /// Removes up to `limit` finished events committed more than `age` ago
    /// (oldest first), with their deliveries and resolutions; events with a
    /// pending delivery or a dead letter are kept. Returns how many were
    /// removed. The newest event is always kept, so that sequence numbers
    /// are never handed out twice.
    pub fn prune(&mut self, age: Duration, limit: usize) -> Result<usize, JournalError> {
        let cutoff = now_ms().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX));
        // `hookrt journal prune` has no hooks: its `pruned` entry needs none
        // (its signer, if any, is given by [`Journal::sign_trail`]).
        let context = self.trail.as_ref().map(trail::read).unwrap_or_default();
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        let seqs: Vec<i64> = {
            let mut q = tx
                .prepare_cached(
                    "SELECT e.seq FROM events e WHERE e.received_ms <= ?1
                     AND e.seq < (SELECT max(seq) FROM events)
                     AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq AND d.state IN ('pending', 'dead'))
                     ORDER BY e.received_ms LIMIT ?2",
                )
                .map_err(err)?;
            let rows = q
                .query_map(params![cutoff, limit as i64], |r| r.get(0))
                .map_err(err)?;
            rows.collect::<Result<_, _>>().map_err(err)?
        };
        if !seqs.is_empty() {
            // Pruning signs the head first: a tail another process left is
            // checked before that.
            super::check_tail_before_signing(&tx, &context, path)?;
        }
        {
            let mut deliveries = tx
                .prepare_cached("DELETE FROM deliveries WHERE event_seq = ?1")
                .map_err(err)?;
            let mut resolutions = tx
                .prepare_cached("DELETE FROM resolutions WHERE event_seq = ?1")
                .map_err(err)?;
            let mut events = tx
                .prepare_cached("DELETE FROM events WHERE seq = ?1")
                .map_err(err)?;
            for seq in &seqs {
                deliveries.execute([seq]).map_err(err)?;
                resolutions.execute([seq]).map_err(err)?;
                events.execute([seq]).map_err(err)?;
            }
        }
        // The trail's oldest entries go with their events; a `pruned`
        // entry names the events and keeps the boundary, so the chain stays
        // checkable (and is signed at once when the trail has a signer).
        trail::prune(&tx, &context, &seqs).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(seqs.len())
    }

    /// Signs what this connection appends to the trail (a `pruned` entry,
    /// for `hookrt journal prune`) with `key`, as a service would, without a
    /// hook set of its own.
    pub fn sign_trail(&mut self, key: ed25519_dalek::SigningKey, every: u64) {
        let context = trail::TrailContext::signing(key, every);
        self.keep_trail(std::sync::Arc::new(std::sync::RwLock::new(
            std::sync::Arc::new(context),
        )));
    }

    /// Whether the trail has a signed checkpoint: then what is appended to
    /// it (a `pruned` entry) must be signed too.
    pub fn trail_is_signed(&self) -> Result<bool, JournalError> {
        let has_trail: bool = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'trail'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(self.err())?
            > 0;
        Ok(has_trail
            && self
                .conn
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM trail WHERE kind = 'checkpoint')",
                    [],
                    |r| r.get::<_, bool>(0),
                )
                .map_err(self.err())?)
    }

    /// Gives the pages freed by pruning back to the file system (SQLite's
    /// `VACUUM`: rewrites the whole file, so it is for a stopped service).
    pub fn vacuum(&mut self) -> Result<(), JournalError> {
        self.conn.execute_batch("VACUUM").map_err(self.err())
    }
}
