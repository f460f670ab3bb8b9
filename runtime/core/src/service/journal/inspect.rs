//! Reading and re-driving the journal for `hookrt journal`: counts,
//! pending deliveries, dead letters, and putting dead letters back.

use rusqlite::params;

use super::{
    DeadLetter, Journal, JournalError, JournalStatus, PendingDelivery, now_ms, sqlite_error,
};

impl Journal {
    /// Counts of events and deliveries by state.
    pub fn status(&self) -> Result<JournalStatus, JournalError> {
        let count = |sql: &str| {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map_err(self.err())
        };
        Ok(JournalStatus {
            events: count("SELECT count(*) FROM events")?,
            pending: count("SELECT count(*) FROM deliveries WHERE state = 'pending'")?,
            done: count("SELECT count(*) FROM deliveries WHERE state = 'done'")?,
            dead: count("SELECT count(*) FROM deliveries WHERE state = 'dead'")?,
            repeated: count(
                "SELECT count(*) FROM deliveries WHERE state != 'pending' AND attempts > 1",
            )?,
        })
    }

    /// The place (`coordinates.sequence`, ordinal) each agent event of
    /// `agent`'s `session` took (in `subagent`'s scope, or the primary one):
    /// what a stream reader read before, so it puts an event sent again in
    /// the same place ([`EveStream::remember`](crate::event::EveStream::remember)).
    pub(crate) fn places_in_stream(
        &self,
        agent: &str,
        session: &str,
        subagent: Option<&str>,
    ) -> Result<Vec<(String, crate::event::StreamPlace)>, JournalError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT id, json_extract(envelope, '$.coordinates.sequence'), json_extract(envelope, '$.coordinates.ordinal')
                 FROM events WHERE agent = ?1 AND origin = 'agent'
                 AND json_extract(envelope, '$.coordinates.session') = ?2
                 AND json_extract(envelope, '$.coordinates.subagent') IS ?3
                 ORDER BY seq",
            )
            .map_err(self.err())?;
        let rows = q
            .query_map(params![agent, session, subagent], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    crate::event::StreamPlace {
                        sequence: r.get::<_, Option<i64>>(1)?.unwrap_or(0).max(0) as u64,
                        ordinal: r
                            .get::<_, Option<i64>>(2)?
                            .map(|o| o.clamp(0, u32::MAX as i64) as u32),
                    },
                ))
            })
            .map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }

    /// Unacked deliveries, for inspection (does not change attempts).
    pub fn pending(&self) -> Result<Vec<(i64, String, PendingDelivery)>, JournalError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT d.event_seq, e.id, d.position, d.hook, d.handler, d.attempts FROM deliveries d
                 JOIN events e ON e.seq = d.event_seq WHERE d.state = 'pending' ORDER BY d.event_seq, d.position",
            )
            .map_err(self.err())?;
        let rows = q
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    PendingDelivery {
                        position: r.get(2)?,
                        hook: r.get(3)?,
                        handler: r.get(4)?,
                        attempts: r.get(5)?,
                    },
                ))
            })
            .map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }

    /// Every dead letter, oldest first.
    pub fn dead_letters(&self) -> Result<Vec<DeadLetter>, JournalError> {
        let mut q = self
            .conn
            .prepare("SELECT event_seq, event_id, hook, handler, attempts, outcome, message FROM dead_letters ORDER BY event_seq, position")
            .map_err(self.err())?;
        let rows = q
            .query_map([], |r| {
                Ok(DeadLetter {
                    event_seq: r.get(0)?,
                    event_id: r.get(1)?,
                    hook: r.get(2)?,
                    handler: r.get(3)?,
                    attempts: r.get(4)?,
                    outcome: r.get(5)?,
                    message: r.get(6)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }

    /// Moves dead letters (all, or one hook's, or one event's) back to
    /// pending, so the next start delivers them again. Returns how many.
    pub fn redrive(
        &mut self,
        hook: Option<&str>,
        event_id: Option<&str>,
    ) -> Result<usize, JournalError> {
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        let filter = "(?1 IS NULL OR hook = ?1) AND (?2 IS NULL OR event_id = ?2)";
        tx.execute(
            &format!(
                "UPDATE deliveries SET state = 'pending', updated_ms = ?3 WHERE (event_seq, position) IN
                 (SELECT event_seq, position FROM dead_letters WHERE {filter})"
            ),
            params![hook, event_id, now_ms()],
        )
        .map_err(err)?;
        let n = tx
            .execute(
                &format!("DELETE FROM dead_letters WHERE {filter}"),
                params![hook, event_id],
            )
            .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(n)
    }
}
