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
                    entries.push(Entry {
                        kind: "event",
                        event_seq: Some(seq),
                        body: trail::event_body(
                            seq, &env.id, agent, &env.kind, &digest, deliveries,
                        ),
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
        let now = now_ms();
        let entries = {
            let mut names = match context {
                Some(_) => Some(EventNames::new(&tx).map_err(err)?),
                None => None,
            };
            let mut entries = finish_deliveries(&tx, acks, now, names.as_mut()).map_err(err)?;
            entries.extend(store_resolutions(&tx, resolutions, now, names.as_mut()).map_err(err)?);
            entries
        };
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

/// Each event's id and agent, for the trail's entries, read once per commit.
struct EventNames<'t> {
    query: rusqlite::CachedStatement<'t>,
    seen: HashMap<i64, (String, String)>,
}

impl<'t> EventNames<'t> {
    fn new(conn: &'t rusqlite::Connection) -> rusqlite::Result<Self> {
        Ok(EventNames {
            query: conn.prepare_cached("SELECT id, agent FROM events WHERE seq = ?1")?,
            seen: HashMap::new(),
        })
    }

    fn of(&mut self, seq: i64) -> rusqlite::Result<(String, String)> {
        if let Some(e) = self.seen.get(&seq) {
            return Ok(e.clone());
        }
        let e: (String, String) = self
            .query
            .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?)))?;
        self.seen.insert(seq, e.clone());
        Ok(e)
    }
}

/// Marks each finished delivery (a final failure also into `dead_letters`).
/// With the trail on (`names`), one `deliveries` entry per event holding its
/// deliveries that finished in this commit, in ack order, each with its
/// position, final state and its answer's digest (their components are the
/// `hooks` entry's before it).
fn finish_deliveries(
    conn: &rusqlite::Connection,
    acks: &[Ack],
    now: i64,
    names: Option<&mut EventNames<'_>>,
) -> rusqlite::Result<Vec<Entry>> {
    let mut done = conn.prepare_cached("UPDATE deliveries SET state = ?1, outcome = ?2, attempts = ?3, updated_ms = ?4, answer = ?7 WHERE event_seq = ?5 AND position = ?6 RETURNING hook, handler")?;
    let mut dead = conn.prepare_cached(
        "INSERT OR REPLACE INTO dead_letters(event_seq, position, event_id, hook, handler, attempts, outcome, message, dead_ms)
         SELECT d.event_seq, d.position, e.id, d.hook, d.handler, ?3, ?4, ?5, ?6
         FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.event_seq = ?1 AND d.position = ?2",
    )?;
    // Each event's finished deliveries (`at`: where each event is in `finals`).
    let mut finals: Vec<(i64, Vec<serde_json::Value>)> = Vec::new();
    let mut at: HashMap<i64, usize> = HashMap::new();
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
            .optional()?;
        if let (true, Some((hook, handler))) = (names.is_some(), planned) {
            let finished = json!({
                "position": a.position,
                "hook": hook,
                "handler": handler,
                "outcome": a.outcome.as_str(),
                "attempts": a.attempts,
                "state": state,
                "answer_sha256": trail::answer_sha256(a.answer.as_deref()),
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
            ])?;
        }
    }
    let Some(names) = names else {
        return Ok(Vec::new());
    };
    finals
        .into_iter()
        .map(|(seq, deliveries)| {
            let (id, agent) = names.of(seq)?;
            Ok(Entry {
                kind: "deliveries",
                event_seq: Some(seq),
                body: json!({
                    "v": trail::ENTRY_FORMAT,
                    "seq": seq,
                    "event": id,
                    "agent": agent,
                    "deliveries": deliveries,
                    "at_ms": now,
                }),
            })
        })
        .collect()
}

/// Stores what finished events decided. With the trail on (`names`), one
/// `resolution` entry each, holding the decision's digest: editing the
/// `resolutions` table breaks the trail too.
fn store_resolutions(
    conn: &rusqlite::Connection,
    resolutions: &[(i64, String)],
    now: i64,
    mut names: Option<&mut EventNames<'_>>,
) -> rusqlite::Result<Vec<Entry>> {
    let mut decided = conn.prepare_cached(
        "INSERT OR REPLACE INTO resolutions(event_seq, resolution) VALUES (?1, ?2)",
    )?;
    let mut entries = Vec::new();
    for (seq, resolution) in resolutions {
        decided.execute(params![seq, resolution])?;
        if let Some(names) = names.as_mut() {
            let (id, agent) = names.of(*seq)?;
            entries.push(Entry {
                kind: "resolution",
                event_seq: Some(*seq),
                body: json!({
                    "v": trail::ENTRY_FORMAT,
                    "seq": seq,
                    "event": id,
                    "agent": agent,
                    "resolution_sha256": trail::text_sha256(resolution),
                    "at_ms": now,
                }),
            });
        }
    }
    Ok(entries)
}
