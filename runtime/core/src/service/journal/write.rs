//! Writing the journal: events with their planned deliveries (group
//! commit), acks with answers and resolutions, the start of a retry.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::trail::{self, Entry};
use super::{Ack, Inserted, Journal, JournalError, Plan, now_ms, sqlite_error};
use crate::event::envelope::Envelope;

impl Journal {
    /// Commits a batch of events with their planned deliveries in one
    /// transaction (group commit). An agent's id already present is left
    /// untouched: a duplicate when the event says the same (its
    /// [`Envelope::digest`]), a conflict when it says something else. Every
    /// delivery is recorded with `attempts = 1`: its first attempt may
    /// start as soon as this returns.
    pub(crate) fn insert(
        &mut self,
        batch: &[(&Envelope, &Plan, &str)],
    ) -> Result<Vec<Inserted>, JournalError> {
        let context = self.trail.as_ref().map(trail::read);
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        let mut out = Vec::with_capacity(batch.len());
        let mut entries = Vec::new();
        {
            // A new id is inserted; a known one changes nothing and is then
            // looked up (re-submissions are rare: no lookup before each insert).
            let mut add = tx
                .prepare_cached("INSERT INTO events(id, agent, digest, kind, origin, envelope, received_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(agent, id) DO NOTHING")
                .map_err(err)?;
            let mut find = tx
                .prepare_cached("SELECT seq, digest FROM events WHERE agent = ?1 AND id = ?2")
                .map_err(err)?;
            let mut plan = tx
                .prepare_cached(
                    "INSERT INTO deliveries(event_seq, position, hook, handler, attempts, state, updated_ms) VALUES (?1, ?2, ?3, ?4, 1, 'pending', ?5)",
                )
                .map_err(err)?;
            let now = now_ms();
            for (env, deliveries, origin) in batch {
                let json = serde_json::to_string(env).map_err(|e| JournalError::Corrupt {
                    path: path.to_path_buf(),
                    seq: 0,
                    message: format!("event `{}` cannot be encoded: {e}", env.id),
                })?;
                let digest = env.digest();
                let agent = &env.coordinates.agent;
                if add
                    .execute(params![
                        env.id,
                        agent,
                        &digest[..],
                        env.kind,
                        origin,
                        json,
                        now
                    ])
                    .map_err(err)?
                    == 0
                {
                    let (seq, stored) = find
                        .query_row(params![agent, env.id], |r| {
                            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<Vec<u8>>>(1)?))
                        })
                        .map_err(err)?;
                    out.push(if stored.as_deref() == Some(&digest[..]) {
                        Inserted::Duplicate(seq)
                    } else {
                        Inserted::Conflict(seq)
                    });
                    continue;
                }
                let seq = tx.last_insert_rowid();
                for (i, (hook, handler)) in deliveries.iter().enumerate() {
                    plan.execute(params![seq, i as i64, hook, handler, now])
                        .map_err(err)?;
                }
                if context.is_some() {
                    let hooks: Vec<&str> = deliveries.iter().map(|(h, _)| h.as_str()).collect();
                    entries.push(Entry {
                        kind: "event",
                        event_seq: Some(seq),
                        body: trail::event_body(&env.id, agent, &env.kind, &digest, &hooks),
                    });
                }
                out.push(Inserted::New(seq));
            }
        }
        if let Some(context) = &context {
            trail::append(&tx, context, entries).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(out)
    }

    /// Test support, not API: stores `batch` as a crash right after the
    /// commit leaves it (every delivery pending, nothing acked); how many
    /// events were new.
    #[doc(hidden)]
    pub fn store_unacked(
        &mut self,
        batch: &[(&Envelope, &Plan, &str)],
    ) -> Result<usize, JournalError> {
        let inserted = self.insert(batch)?;
        Ok(inserted
            .iter()
            .filter(|i| matches!(i, Inserted::New(_)))
            .count())
    }

    /// Records finished deliveries, and what finished events decided
    /// (`(seq, resolution JSON)`), in one transaction. Final failures move to
    /// the dead-letter table.
    pub(crate) fn ack(
        &mut self,
        acks: &[Ack],
        resolutions: &[(i64, String)],
    ) -> Result<(), JournalError> {
        if acks.is_empty() && resolutions.is_empty() {
            return Ok(());
        }
        let context = self.trail.as_ref().map(trail::read);
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        let mut entries = Vec::new();
        // Each event's deliveries that finished in this commit, in ack order
        // (`at`: where each event is in `finals`).
        let mut finals: Vec<(i64, Vec<serde_json::Value>)> = Vec::new();
        let mut at: HashMap<i64, usize> = HashMap::new();
        {
            let mut done = tx
                .prepare_cached("UPDATE deliveries SET state = ?1, outcome = ?2, attempts = ?3, updated_ms = ?4, answer = ?7 WHERE event_seq = ?5 AND position = ?6 RETURNING hook, handler")
                .map_err(err)?;
            // The event's id and agent, for the trail's entries.
            let mut named = tx
                .prepare_cached("SELECT id, agent FROM events WHERE seq = ?1")
                .map_err(err)?;
            let mut events: HashMap<i64, (String, String)> = HashMap::new();
            let mut event = |seq: i64| -> Result<(String, String), rusqlite::Error> {
                if let Some(e) = events.get(&seq) {
                    return Ok(e.clone());
                }
                let e: (String, String) = named.query_row([seq], |r| Ok((r.get(0)?, r.get(1)?)))?;
                events.insert(seq, e.clone());
                Ok(e)
            };
            let mut dead = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO dead_letters(event_seq, position, event_id, hook, handler, attempts, outcome, message, dead_ms)
                     SELECT d.event_seq, d.position, e.id, d.hook, d.handler, ?3, ?4, ?5, ?6
                     FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.event_seq = ?1 AND d.position = ?2",
                )
                .map_err(err)?;
            let now = now_ms();
            for a in acks {
                let state = match (&a.dead, a.skipped) {
                    (Some(_), _) => "dead",
                    (None, true) => "skipped",
                    (None, false) => "done",
                };
                let planned: Option<(String, String)> = done
                    .query_row(
                        params![
                            state,
                            a.outcome.as_str(),
                            a.attempts,
                            now,
                            a.event_seq,
                            a.position,
                            a.answer
                        ],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()
                    .map_err(err)?;
                if let (Some(_), Some((hook, handler))) = (&context, planned) {
                    // One entry per event per commit, holding each of its
                    // deliveries that finished in it (their components are
                    // the `hooks` entry's before it).
                    let finished = json!({
                        "hook": hook,
                        "handler": handler,
                        "outcome": a.outcome.as_str(),
                        "attempts": a.attempts,
                        "state": state,
                    });
                    match at.get(&a.event_seq) {
                        Some(&i) => finals[i].1.push(finished),
                        None => {
                            at.insert(a.event_seq, finals.len());
                            finals.push((a.event_seq, vec![finished]));
                        }
                    }
                }
                if let Some(message) = &a.dead {
                    dead.execute(params![
                        a.event_seq,
                        a.position,
                        a.attempts,
                        a.outcome.as_str(),
                        message,
                        now
                    ])
                    .map_err(err)?;
                }
            }
            for (seq, deliveries) in finals {
                let (id, agent) = event(seq).map_err(err)?;
                entries.push(Entry {
                    kind: "deliveries",
                    event_seq: Some(seq),
                    body: json!({
                        "event": id,
                        "agent": agent,
                        "deliveries": deliveries,
                        "at_ms": now,
                    }),
                });
            }
            let mut decided = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO resolutions(event_seq, resolution) VALUES (?1, ?2)",
                )
                .map_err(err)?;
            for (seq, resolution) in resolutions {
                decided.execute(params![seq, resolution]).map_err(err)?;
                if context.is_some() {
                    // The decision is in `resolutions`: the entry holds its
                    // digest, so editing that table breaks the trail too.
                    let (id, agent) = event(*seq).map_err(err)?;
                    entries.push(Entry {
                        kind: "resolution",
                        event_seq: Some(*seq),
                        body: json!({
                            "event": id,
                            "agent": agent,
                            "resolution_sha256": trail::text_sha256(resolution),
                            "at_ms": now,
                        }),
                    });
                }
            }
        }
        if let Some(context) = &context {
            trail::append(&tx, context, entries).map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// What the event at `seq` decided, when it has been stored.
    pub(crate) fn resolution(&self, seq: i64) -> Result<Option<String>, JournalError> {
        self.conn
            .query_row(
                "SELECT resolution FROM resolutions WHERE event_seq = ?1",
                [seq],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err())
    }

    /// Records that another attempt of a delivery is about to start.
    pub(crate) fn start_attempt(
        &mut self,
        event_seq: i64,
        position: i64,
        attempts: u32,
    ) -> Result<(), JournalError> {
        let (_writing, tx, path) = self.write_transaction()?;
        let err = sqlite_error(path);
        tx.execute(
            "UPDATE deliveries SET attempts = ?1, updated_ms = ?2 WHERE event_seq = ?3 AND position = ?4",
            params![attempts, now_ms(), event_seq, position],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }
}
