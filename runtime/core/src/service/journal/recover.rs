//! Recovery: what an earlier run left unacked, each delivery one attempt
//! higher, with the answers already given for its event.

use rusqlite::params;

use super::{Answered, Journal, JournalError, PendingDelivery, PendingEvent, now_ms, sqlite_error};
use crate::sandbox::outcome::Outcome;

impl Journal {
    /// Every event with unacked deliveries, in journal order, each delivery's
    /// attempts raised by one first (committed), so a delivery that may have
    /// run before a crash is never repeated with the same attempt.
    pub(crate) fn recover(&mut self) -> Result<Vec<PendingEvent>, JournalError> {
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        tx.execute(
            "UPDATE deliveries SET attempts = attempts + 1 WHERE state = 'pending'",
            [],
        )
        .map_err(err)?;
        let mut events: Vec<PendingEvent> = Vec::new();
        let mut corrupt: Vec<i64> = Vec::new();
        {
            let mut q = tx
                .prepare(
                    "SELECT d.event_seq, e.envelope, d.position, d.hook, d.handler, d.attempts
                     FROM deliveries d JOIN events e ON e.seq = d.event_seq
                     WHERE d.state = 'pending' ORDER BY d.event_seq, d.position",
                )
                .map_err(err)?;
            let mut rows = q.query([]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let seq: i64 = r.get(0).map_err(err)?;
                let delivery = PendingDelivery {
                    position: r.get(2).map_err(err)?,
                    hook: r.get(3).map_err(err)?,
                    handler: r.get(4).map_err(err)?,
                    attempts: r.get(5).map_err(err)?,
                };
                match events.last_mut() {
                    Some(e) if e.seq == seq => e.deliveries.push(delivery),
                    _ if corrupt.contains(&seq) => {}
                    _ => {
                        let text: String = r.get(1).map_err(err)?;
                        match serde_json::from_str(&text) {
                            Ok(envelope) => events.push(PendingEvent {
                                seq,
                                envelope,
                                deliveries: vec![delivery],
                                answered: Vec::new(),
                            }),
                            Err(e) => {
                                tracing::error!(journal = %path.display(), seq, "stored event is unreadable, dead-lettering it: {e}");
                                corrupt.push(seq);
                            }
                        }
                    }
                }
            }
        }
        read_answers(&tx, &mut events).map_err(err)?;
        for seq in &corrupt {
            tx.execute(
                "INSERT OR REPLACE INTO dead_letters(event_seq, position, event_id, hook, handler, attempts, outcome, message, dead_ms)
                 SELECT d.event_seq, d.position, e.id, d.hook, d.handler, d.attempts, 'error', 'stored event is unreadable', ?2
                 FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.event_seq = ?1 AND d.state = 'pending'",
                params![seq, now_ms()],
            )
            .map_err(err)?;
            tx.execute("UPDATE deliveries SET state = 'dead', outcome = 'error' WHERE event_seq = ?1 AND state = 'pending'", [seq])
                .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(events)
    }
}

/// Each event's answers already given (its deliveries no longer pending that
/// answered), in position order.
fn read_answers(conn: &rusqlite::Connection, events: &mut [PendingEvent]) -> rusqlite::Result<()> {
    let mut q = conn.prepare(
        "SELECT position, hook, handler, outcome, answer FROM deliveries
         WHERE event_seq = ?1 AND state != 'pending' AND answer IS NOT NULL ORDER BY position",
    )?;
    for e in events {
        let rows = q.query_map([e.seq], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        for row in rows {
            let (position, hook, handler, outcome, answer) = row?;
            let outcome = outcome
                .and_then(|o| Outcome::ALL.into_iter().find(|x| x.as_str() == o))
                .unwrap_or(Outcome::Error);
            e.answered.push(Answered {
                position,
                hook,
                handler,
                outcome,
                answer,
            });
        }
    }
    Ok(())
}
