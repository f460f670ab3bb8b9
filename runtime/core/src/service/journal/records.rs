//! The tables check of [`verify`](super::verify::verify): what the
//! journal's tables hold is what the trail recorded. Every event since the
//! trail began has its entry; each entry's event row is at the `event_seq`
//! it names (same id and agent) and says what it recorded (kind, digest,
//! envelope); each decision is the one recorded; and, for entries of the
//! second format, each event's `deliveries` rows are the ones its entry
//! planned, each finished one as the last `deliveries` entry recorded it
//! (outcome, attempts, state, answer). A row that is gone must be named by
//! a `pruned` entry.

use std::collections::{BTreeMap, HashSet};

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::trail::text_sha256;
use super::verdict::{Break, Pruned, Row};

/// From which event on the trail records every event: the one its
/// `hooks` entries signed (the chain covers them), else (a journal from
/// before they said it) the journal's own note, but never later than the
/// first event the chain records.
pub(crate) fn trail_from_event(conn: &Connection, rows: &[Row]) -> Result<i64, Break> {
    let signed = rows
        .iter()
        .filter(|r| r.kind == "hooks")
        .filter_map(|r| serde_json::from_str::<Value>(&r.body).ok())
        .find_map(|b| b["from_event"].as_i64());
    let from = match signed {
        Some(from) => from,
        None => super::trail::from_event(conn)?,
    };
    let first_recorded = rows
        .iter()
        .filter(|r| r.kind == "event")
        .filter_map(|r| r.event_seq)
        .min();
    Ok(first_recorded.map_or(from, |first| from.min(first)))
}

/// Every event the journal holds from `from` on has its entry in `rows`,
/// and each decision of those events is one the trail recorded: how many
/// events there are.
pub(crate) fn every_event_recorded(
    conn: &Connection,
    rows: &[Row],
    last: i64,
    from: i64,
) -> Result<u64, Break> {
    let recorded: HashSet<i64> = rows
        .iter()
        .filter(|r| r.kind == "event")
        .filter_map(|r| r.event_seq)
        .collect();
    let mut events = conn.prepare("SELECT seq, id FROM events WHERE seq >= ?1 ORDER BY seq")?;
    let mut held = events.query([from])?;
    let mut count = 0;
    while let Some(row) = held.next()? {
        let seq: i64 = row.get(0)?;
        if !recorded.contains(&seq) {
            return Err(Break::Truncated {
                last,
                seq,
                id: row.get(1)?,
            });
        }
        count += 1;
    }
    let decided: HashSet<i64> = rows
        .iter()
        .filter(|r| r.kind == "resolution")
        .filter_map(|r| r.event_seq)
        .collect();
    let mut resolutions = conn.prepare(
        "SELECT r.event_seq, e.id FROM resolutions r JOIN events e ON e.seq = r.event_seq WHERE r.event_seq >= ?1 ORDER BY r.event_seq",
    )?;
    let mut held = resolutions.query([from])?;
    while let Some(row) = held.next()? {
        let seq: i64 = row.get(0)?;
        if !decided.contains(&seq) {
            return Err(Break::Unrecorded {
                seq,
                id: row.get(1)?,
            });
        }
    }
    Ok(count)
}

/// An entry of the second format is stored with the `event_seq` its body
/// records (the column is not hashed; the body is).
pub(crate) fn check_event_seq(r: &Row, body: &Value) -> Result<(), Break> {
    match body["seq"].as_i64() {
        Some(recorded)
            if body["v"].as_u64().is_some_and(|v| v >= 2) && r.event_seq != Some(recorded) =>
        {
            Err(Break::EventSeq {
                seq: r.seq,
                column: r.event_seq.map_or("NULL".to_owned(), |s| s.to_string()),
                recorded,
            })
        }
        _ => Ok(()),
    }
}

/// The first event the entries after `first` (a tail) must record: the one
/// after the last event recorded before it, or the trail's start.
pub(crate) fn first_event_after(conn: &Connection, tail: &[Row], first: i64) -> Result<i64, Break> {
    let recorded_before: Option<i64> = conn.query_row(
        "SELECT max(event_seq) FROM trail WHERE kind = 'event' AND seq < ?1",
        [first],
        |r| r.get(0),
    )?;
    match recorded_before {
        Some(seq) => Ok(seq + 1),
        None => trail_from_event(conn, tail),
    }
}

/// An event's row as stored.
struct EventRow {
    id: String,
    agent: String,
    kind: String,
    digest: Option<Vec<u8>>,
    envelope: String,
}

/// What an entry of the second format recorded of one delivery: the entry,
/// its event's id, and the recorded values.
struct Recorded {
    entry: i64,
    event: String,
    values: Value,
}

/// An event's planned deliveries (hook, handler) in position order, with
/// the entry that recorded them and the event's id.
type Planned = (i64, String, Vec<(String, String)>);

/// What the entries of the second format recorded of each event's
/// deliveries: its plan (by event), and each delivery's last final state
/// (by event and position).
#[derive(Default)]
struct Deliveries {
    plans: BTreeMap<i64, Planned>,
    finals: BTreeMap<(i64, i64), Recorded>,
}

/// What the other tables hold is what the trail recorded (see the module's
/// doc), or gone where a `pruned` entry names it. How many of the entries
/// checked are of the first format.
pub(crate) fn records_hold(
    conn: &Connection,
    rows: &[Row],
    pruned: &[Pruned],
) -> Result<u64, Break> {
    let mut event_row =
        conn.prepare("SELECT id, agent, kind, digest, envelope FROM events WHERE seq = ?1")?;
    let mut deliveries = Deliveries::default();
    let mut first_format = 0;
    for r in rows {
        let Some(event_seq) = r
            .event_seq
            .filter(|_| matches!(r.kind.as_str(), "event" | "deliveries" | "resolution"))
        else {
            continue;
        };
        let body: Value = serde_json::from_str(&r.body).unwrap_or_default();
        let second = body["v"].as_u64().is_some_and(|v| v >= 2);
        if !second {
            first_format += 1;
        }
        let event = body["event"].as_str().unwrap_or_default().to_owned();
        let stored = event_row
            .query_row([event_seq], |x| {
                Ok(EventRow {
                    id: x.get(0)?,
                    agent: x.get(1)?,
                    kind: x.get(2)?,
                    digest: x.get(3)?,
                    envelope: x.get(4)?,
                })
            })
            .optional()?;
        let Some(stored) = stored else {
            if Pruned::names_event(pruned, event_seq) {
                continue;
            }
            return Err(Break::Gone {
                seq: r.seq,
                event,
                what: "event",
            });
        };
        if stored.id != event || body["agent"] != stored.agent.as_str() {
            return Err(Break::Moved {
                seq: r.seq,
                event,
                event_seq,
                found: stored.id,
            });
        }
        match r.kind.as_str() {
            "event" => {
                event_holds(r, &body, &stored)?;
                if second {
                    deliveries
                        .plans
                        .insert(event_seq, (r.seq, event, plan_of(r, &body)?));
                }
            }
            "resolution" => resolution_holds(conn, r, &body, event_seq, event)?,
            _ if second => {
                for d in body["deliveries"].as_array().into_iter().flatten() {
                    let position = d["position"].as_i64().unwrap_or(-1);
                    let recorded = Recorded {
                        entry: r.seq,
                        event: event.clone(),
                        values: d.clone(),
                    };
                    deliveries.finals.insert((event_seq, position), recorded);
                }
            }
            _ => {}
        }
    }
    deliveries_hold(conn, &deliveries)?;
    Ok(first_format)
}

/// The planned deliveries an event's entry records, in position order: as
/// many hooks as handlers, each a string (a hook planted in one list alone
/// would otherwise be dropped by the pairing, unseen).
fn plan_of(r: &Row, body: &Value) -> Result<Vec<(String, String)>, Break> {
    let list = |key: &str| -> Result<Vec<String>, Break> {
        body[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Break::Unreadable {
                        seq: r.seq,
                        why: format!("its `{key}` list holds {v}, not a name"),
                    })
            })
            .collect()
    };
    let (hooks, handlers) = (list("hooks")?, list("handlers")?);
    if hooks.len() != handlers.len() {
        return Err(Break::Unreadable {
            seq: r.seq,
            why: format!(
                "its plan lists {} hook(s) and {} handler(s)",
                hooks.len(),
                handlers.len()
            ),
        });
    }
    Ok(hooks.into_iter().zip(handlers).collect())
}

/// An event's row says what its entry recorded: its kind, its digest
/// column, and its envelope (the digest computed again).
fn event_holds(r: &Row, body: &Value, stored: &EventRow) -> Result<(), Break> {
    let changed = |what| Break::Record {
        seq: r.seq,
        event: stored.id.clone(),
        what,
    };
    if body["kind"] != stored.kind.as_str() {
        return Err(changed("kind"));
    }
    if let Some(digest) = &stored.digest
        && body["digest"] != hex::encode(digest).as_str()
    {
        return Err(changed("digest"));
    }
    let digest = serde_json::from_str::<crate::event::envelope::Envelope>(&stored.envelope)
        .map(|e| hex::encode(e.digest()))
        .unwrap_or_default();
    if body["digest"] != digest.as_str() {
        return Err(changed("envelope"));
    }
    Ok(())
}

/// The event's decision is the one its `resolution` entry recorded.
fn resolution_holds(
    conn: &Connection,
    r: &Row,
    body: &Value,
    event_seq: i64,
    event: String,
) -> Result<(), Break> {
    let text: Option<String> = conn
        .prepare_cached("SELECT resolution FROM resolutions WHERE event_seq = ?1")?
        .query_row([event_seq], |x| x.get(0))
        .optional()?;
    match text {
        Some(text) if body["resolution_sha256"] == text_sha256(&text).as_str() => Ok(()),
        Some(_) => Err(Break::Record {
            seq: r.seq,
            event,
            what: "resolution",
        }),
        None => Err(Break::Gone {
            seq: r.seq,
            event,
            what: "resolution",
        }),
    }
}

/// One `deliveries` row as stored: (hook, handler, attempts, state,
/// outcome, answer), by position.
type DeliveryRow = (String, String, i64, String, Option<String>, Option<String>);

/// Each event's `deliveries` rows are the ones its entry planned, and each
/// finished one is as the last entry recorded it.
fn deliveries_hold(conn: &Connection, recorded: &Deliveries) -> Result<(), Break> {
    let mut events: Vec<i64> = recorded.plans.keys().copied().collect();
    events.extend(recorded.finals.keys().map(|(seq, _)| *seq));
    events.sort_unstable();
    events.dedup();
    let mut stmt = conn.prepare(
        "SELECT position, hook, handler, attempts, state, outcome, answer FROM deliveries WHERE event_seq = ?1 ORDER BY position",
    )?;
    for event_seq in events {
        let stored: BTreeMap<i64, DeliveryRow> = stmt
            .query_map([event_seq], |x| {
                Ok((
                    x.get(0)?,
                    (
                        x.get(1)?,
                        x.get(2)?,
                        x.get(3)?,
                        x.get(4)?,
                        x.get(5)?,
                        x.get(6)?,
                    ),
                ))
            })?
            .collect::<Result<_, _>>()?;
        if let Some((entry, event, plan)) = recorded.plans.get(&event_seq) {
            plan_holds(*entry, event, event_seq, plan, &stored)?;
        }
        for (position, row) in &stored {
            let last = recorded.finals.get(&(event_seq, *position));
            let planned_by = recorded
                .plans
                .get(&event_seq)
                .map(|(entry, event, _)| (*entry, event));
            final_holds(event_seq, *position, row, last, planned_by)?;
        }
        for ((_, position), last) in recorded
            .finals
            .range((event_seq, i64::MIN)..=(event_seq, i64::MAX))
        {
            if !stored.contains_key(position) {
                return Err(delivery(
                    last.entry,
                    &last.event,
                    event_seq,
                    *position,
                    "is gone: it was deleted".into(),
                ));
            }
        }
    }
    Ok(())
}

/// A broken delivery, as the entry `entry` recorded it.
fn delivery(entry: i64, event: &str, event_seq: i64, position: i64, why: String) -> Break {
    Break::Delivery {
        seq: entry,
        event: event.to_owned(),
        event_seq,
        position,
        why,
    }
}

/// The rows are exactly the deliveries the event's entry planned.
fn plan_holds(
    entry: i64,
    event: &str,
    event_seq: i64,
    plan: &[(String, String)],
    stored: &BTreeMap<i64, DeliveryRow>,
) -> Result<(), Break> {
    for (position, (hook, handler)) in plan.iter().enumerate() {
        let position = position as i64;
        match stored.get(&position) {
            None => {
                return Err(delivery(
                    entry,
                    event,
                    event_seq,
                    position,
                    "is gone: it was deleted".into(),
                ));
            }
            Some(row) if (&row.0, &row.1) != (hook, handler) => {
                return Err(delivery(
                    entry,
                    event,
                    event_seq,
                    position,
                    format!(
                        "names hook `{}` and handler `{}`, where the entry planned `{hook}` and `{handler}`: it was edited",
                        row.0, row.1
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    if let Some((position, row)) = stored
        .range(plan.len() as i64..)
        .next()
        .or_else(|| stored.range(..0).next())
    {
        return Err(delivery(
            entry,
            event,
            event_seq,
            *position,
            format!(
                "(hook `{}`, handler `{}`) is not one the entry planned: it was added",
                row.0, row.1
            ),
        ));
    }
    Ok(())
}

/// A row's final state is the one the last entry recorded: a pending row
/// only where that entry recorded none, or a dead letter (which `hookrt
/// journal redrive` moves back to pending); a finished row of an event
/// whose entry planned it (`planned_by`) only with an entry.
fn final_holds(
    event_seq: i64,
    position: i64,
    row: &DeliveryRow,
    last: Option<&Recorded>,
    planned_by: Option<(i64, &String)>,
) -> Result<(), Break> {
    let (hook, handler, attempts, state, outcome, answer) = row;
    let Some(last) = last else {
        return match planned_by {
            Some((entry, event)) if state != "pending" => Err(delivery(
                entry,
                event,
                event_seq,
                position,
                format!(
                    "is `{state}`, and no entry of the trail records it finishing: it was edited"
                ),
            )),
            _ => Ok(()),
        };
    };
    let was = &last.values;
    if state == "pending" {
        return if was["state"] == "dead" {
            Ok(())
        } else {
            Err(delivery(
                last.entry,
                &last.event,
                event_seq,
                position,
                format!(
                    "is pending again, where the entry recorded it `{}` (only a dead delivery is redriven): it was edited",
                    was["state"].as_str().unwrap_or_default()
                ),
            ))
        };
    }
    let answer = super::trail::answer_sha256(answer.as_deref());
    let holds = was["hook"] == hook.as_str()
        && was["handler"] == handler.as_str()
        && was["attempts"].as_i64() == Some(*attempts)
        && was["state"] == state.as_str()
        && was["outcome"].as_str() == outcome.as_deref()
        && was["answer_sha256"] == answer;
    if holds {
        return Ok(());
    }
    Err(delivery(
        last.entry,
        &last.event,
        event_seq,
        position,
        format!(
            "says outcome `{}`, attempts {attempts}, state `{state}` and an answer of sha256 {}, not what the entry recorded (outcome `{}`, attempts {}, state `{}`, answer {}): it was edited",
            outcome.as_deref().unwrap_or(""),
            answer.as_str().unwrap_or("(none)"),
            was["outcome"].as_str().unwrap_or_default(),
            was["attempts"],
            was["state"].as_str().unwrap_or_default(),
            was["answer_sha256"].as_str().unwrap_or("(none)"),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, RwLock};

    use crate::event::envelope::{Coordinates, Envelope};
    use crate::sandbox::outcome::Outcome;
    use crate::service::journal::trail::TrailContext;
    use crate::service::journal::{Ack, Expect, Journal, Plan, verify};

    fn ack(position: i64, outcome: Outcome, dead: bool, answer: Option<&str>) -> Ack {
        Ack {
            event_seq: 1,
            position,
            attempts: 1,
            outcome,
            dead: dead.then(|| "failed".to_owned()),
            skipped: false,
            answer: answer.map(str::to_owned),
        }
    }

    /// A redriven dead letter is pending again and holds; a `done` row set
    /// back to pending, or a row edited while pending, does not.
    #[test]
    fn a_redriven_dead_letter_holds_and_a_finished_row_set_pending_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let mut j = Journal::open(&path).unwrap();
        j.keep_trail(Arc::new(RwLock::new(Arc::new(TrailContext::default()))));
        let e = Envelope::new(
            "e1",
            "message.received",
            Coordinates::new("agent", "session", 1),
            serde_json::json!({"message": {"id": "m1", "role": "user", "content": "hi"}}),
        )
        .unwrap();
        let plan: Plan = vec![("a".into(), "*".into()), ("b".into(), "*".into())];
        j.insert(&[(&e, &plan, "agent")]).unwrap();
        j.ack(
            &[
                ack(0, Outcome::Ok, false, Some("{}")),
                ack(1, Outcome::Trap, true, None),
            ],
            &[],
        )
        .unwrap();
        assert!(verify(&path, &Expect::default()).is_ok());
        assert_eq!(j.redrive(Some("b"), None).unwrap(), 1);
        let found = verify(&path, &Expect::default()).unwrap();
        assert_eq!(found.first_format, 0);
        j.conn
            .execute(
                "UPDATE deliveries SET state = 'pending' WHERE position = 0",
                [],
            )
            .unwrap();
        let broken = verify(&path, &Expect::default()).unwrap_err().to_string();
        assert!(
            broken.contains(
                "(event_seq 1, position 0) is pending again, where the entry recorded it `done`"
            ),
            "{broken}"
        );
    }
}
