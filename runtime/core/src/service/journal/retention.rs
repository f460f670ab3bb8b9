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
        // `hookrt journal prune` has no hooks: its `pruned` entry needs none.
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
        // entry keeps the boundary, so the chain stays checkable.
        if !seqs.is_empty() {
            trail::prune(&tx, &context).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(seqs.len())
    }

    /// Gives the pages freed by pruning back to the file system (SQLite's
    /// `VACUUM`: rewrites the whole file, so it is for a stopped service).
    pub fn vacuum(&mut self) -> Result<(), JournalError> {
        self.conn.execute_batch("VACUUM").map_err(self.err())
    }
}
