//! The columns the trail covers beyond the events and decisions (entry
//! format 2): a `deliveries` row's answer or outcome edited, a row deleted
//! or added, `event_seq` swapped between two events or two entries, each
//! refused by `hookrt journal verify --key` naming the entry and the row;
//! and a tail edited while no hookrt ran, which a resumed run refuses to
//! sign as found. Journals from `hookrt run --signing-key
//! --checkpoint-every 5`, edited with SQL.

use std::path::Path;

use rusqlite::params;

use crate::common::example;
use crate::trail::{db, hookrt, journal_every, text, verify};

/// A decision event with an answered delivery: its seq, id, and the
/// delivery's position.
fn answered_delivery(j: &Path) -> (i64, String, i64) {
    db(j)
        .query_row(
            "SELECT e.seq, e.id, d.position FROM deliveries d JOIN events e ON e.seq = d.event_seq
             WHERE d.answer IS NOT NULL AND e.kind = 'actions.requested' ORDER BY e.seq, d.position LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

/// The last `deliveries` entry recording the delivery at `position` of
/// event `seq`.
fn recording_entry(j: &Path, seq: i64, position: i64) -> i64 {
    db(j)
        .query_row(
            "SELECT max(t.seq) FROM trail t, json_each(t.body, '$.deliveries') d
             WHERE t.kind = 'deliveries' AND t.event_seq = ?1 AND json_extract(d.value, '$.position') = ?2",
            params![seq, position],
            |r| r.get(0),
        )
        .unwrap()
}

/// `hookrt journal verify J --key K`, which must fail: what it said.
fn refused(j: &Path) -> String {
    let key = j.parent().unwrap().join("key.pub");
    let (code, said) = verify(j, Some(&key));
    assert_eq!(code, 1, "{said}");
    said
}

#[test]
fn a_deliveries_rows_answer_or_outcome_edited_is_named_with_its_entry_and_row() {
    let (_dir, j) = journal_every(true, 5);
    let (seq, id, position) = answered_delivery(&j);
    let entry = recording_entry(&j, seq, position);
    db(&j)
        .execute(
            "UPDATE deliveries SET answer = '{\"approvals\":[]}' WHERE event_seq = ?1 AND position = ?2",
            params![seq, position],
        )
        .unwrap();
    let said = refused(&j);
    assert!(
        said.contains(&format!(
            "entry {entry} records delivery {position} of event `{id}`, and the journal's deliveries row (event_seq {seq}, position {position}) says outcome"
        )),
        "{said}"
    );
    assert!(said.contains("not what the entry recorded"), "{said}");

    let (_dir, j) = journal_every(true, 5);
    let (seq, id, position) = answered_delivery(&j);
    let entry = recording_entry(&j, seq, position);
    db(&j)
        .execute(
            "UPDATE deliveries SET outcome = 'trap' WHERE event_seq = ?1 AND position = ?2",
            params![seq, position],
        )
        .unwrap();
    let said = refused(&j);
    assert!(
        said.contains(&format!(
            "entry {entry} records delivery {position} of event `{id}`, and the journal's deliveries row (event_seq {seq}, position {position}) says outcome `trap`"
        )),
        "{said}"
    );
}

#[test]
fn a_deliveries_row_deleted_or_added_is_refused() {
    let (_dir, j) = journal_every(true, 5);
    let (seq, id, position) = answered_delivery(&j);
    db(&j)
        .execute(
            "DELETE FROM deliveries WHERE event_seq = ?1 AND position = ?2",
            params![seq, position],
        )
        .unwrap();
    let said = refused(&j);
    assert!(
        said.contains(&format!(
            "records delivery {position} of event `{id}`, and the journal's deliveries row (event_seq {seq}, position {position}) is gone: it was deleted"
        )),
        "{said}"
    );

    // A voter added to a decision (what `audit coverage` counts).
    let (_dir, j) = journal_every(true, 5);
    let (seq, id, _) = answered_delivery(&j);
    let next: i64 = db(&j)
        .query_row(
            "SELECT max(position) + 1 FROM deliveries WHERE event_seq = ?1",
            [seq],
            |r| r.get(0),
        )
        .unwrap();
    db(&j)
        .execute(
            "INSERT INTO deliveries(event_seq, position, hook, handler, attempts, state, updated_ms) VALUES (?1, ?2, 'ghost', '*', 1, 'pending', 0)",
            params![seq, next],
        )
        .unwrap();
    let said = refused(&j);
    assert!(
        said.contains(&format!(
            "records delivery {next} of event `{id}`, and the journal's deliveries row (event_seq {seq}, position {next}) (hook `ghost`, handler `*`) is not one the entry planned: it was added"
        )),
        "{said}"
    );
}

#[test]
fn event_seq_swapped_between_two_events_or_two_entries_is_refused() {
    // Two events' rows swapped whole (their deliveries and decisions with them).
    let (_dir, j) = journal_every(true, 5);
    let c = db(&j);
    let (a, b): (i64, i64) = c
        .query_row(
            "SELECT min(seq), max(seq) FROM events WHERE kind = 'actions.requested'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let entry: i64 = c
        .query_row(
            "SELECT seq FROM trail WHERE kind = 'event' AND event_seq = ?1",
            [a],
            |r| r.get(0),
        )
        .unwrap();
    let (id_a, id_b): (String, String) = c
        .query_row(
            "SELECT (SELECT id FROM events WHERE seq = ?1), (SELECT id FROM events WHERE seq = ?2)",
            params![a, b],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    for (table, column) in [
        ("events", "seq"),
        ("deliveries", "event_seq"),
        ("resolutions", "event_seq"),
    ] {
        c.execute(
            &format!(
                "UPDATE {table} SET {column} = CASE {column} WHEN ?1 THEN -?2 ELSE -?1 END WHERE {column} IN (?1, ?2)"
            ),
            params![a, b],
        )
        .unwrap();
        c.execute(
            &format!("UPDATE {table} SET {column} = -{column} WHERE {column} < 0"),
            [],
        )
        .unwrap();
    }
    let said = refused(&j);
    assert!(
        said.contains(&format!(
            "entry {entry} records event `{id_a}` as event {a}, and the journal's event {a} is `{id_b}`: event_seq values were swapped or edited"
        )),
        "{said}"
    );

    // Two `deliveries` entries' event_seq swapped (the column is not hashed).
    let (_dir, j) = journal_every(true, 5);
    let c = db(&j);
    let (x, y, x_seq): (i64, i64, i64) = c
        .query_row(
            "SELECT a.seq, b.seq, a.event_seq FROM trail a, trail b WHERE a.kind = 'deliveries' AND b.kind = 'deliveries' AND b.event_seq != a.event_seq ORDER BY a.seq, b.seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    c.execute(
        "UPDATE trail SET event_seq = CASE seq WHEN ?1 THEN (SELECT event_seq FROM trail WHERE seq = ?2) ELSE (SELECT event_seq FROM trail WHERE seq = ?1) END WHERE seq IN (?1, ?2)",
        params![x, y],
    )
    .unwrap();
    let column: i64 = c
        .query_row("SELECT event_seq FROM trail WHERE seq = ?1", [x], |r| {
            r.get(0)
        })
        .unwrap();
    assert_ne!(column, x_seq);
    let said = refused(&j);
    assert!(
        said.contains(&format!(
            "entry {x} records event {x_seq}, and is stored with event_seq {column}: its event_seq was edited"
        )),
        "{said}"
    );
}

/// `hookrt run` of the example transcript on `j` again, signing with the
/// key beside it: a process resuming the journal.
fn resume(j: &Path) -> std::process::Output {
    let agent = example("agent");
    let key = j.parent().unwrap().join("key");
    let transcript = agent.join("transcript.jsonl");
    hookrt(&[
        "run",
        agent.to_str().unwrap(),
        "--events",
        transcript.to_str().unwrap(),
        "--journal",
        j.to_str().unwrap(),
        "--checkpoint-every",
        "5",
        "--signing-key",
        key.to_str().unwrap(),
    ])
}

/// The trail as a crashed process leaves it: its stop checkpoint never
/// written. The position of the head, and of the last checkpoint.
fn crash_before_the_stop_checkpoint(j: &Path) -> (i64, i64) {
    let c = db(j);
    c.execute(
        "DELETE FROM trail WHERE seq = (SELECT max(seq) FROM trail) AND kind = 'checkpoint'",
        [],
    )
    .unwrap();
    let ends = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    let head = ends("SELECT max(seq) FROM trail");
    let checkpoint = ends("SELECT max(seq) FROM trail WHERE kind = 'checkpoint'");
    assert!(checkpoint < head, "the crash leaves an unsigned tail");
    (head, checkpoint)
}

#[test]
fn a_tail_edited_while_no_hookrt_ran_is_not_signed_on_resume() {
    // An intact crashed tail is signed as found when the next run starts.
    let (_dir, j) = journal_every(true, 5);
    let (head, _) = crash_before_the_stop_checkpoint(&j);
    let out = resume(&j);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let kind: String = db(&j)
        .query_row("SELECT kind FROM trail WHERE seq = ?1", [head + 1], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(kind, "checkpoint", "the found tail is signed at once");
    let key = j.parent().unwrap().join("key.pub");
    let (code, said) = verify(&j, Some(&key));
    assert_eq!(code, 0, "{said}");

    // The same tail with an event it records deleted: not signed, no start.
    let (_dir, j) = journal_every(true, 5);
    let (head, checkpoint) = crash_before_the_stop_checkpoint(&j);
    let c = db(&j);
    let (seq, id): (i64, String) = c
        .query_row(
            "SELECT t.event_seq, json_extract(t.body, '$.event') FROM trail t WHERE t.event_seq IS NOT NULL AND t.seq > ?1 ORDER BY t.seq LIMIT 1",
            [checkpoint],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the tail records an event");
    c.execute("DELETE FROM events WHERE seq = ?1", [seq])
        .unwrap();
    let out = resume(&j);
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("the trail's entries after its last signed checkpoint do not hold")
            && said.contains(&format!(
                "records event `{id}`, whose event row is gone from the journal"
            )),
        "{said}"
    );
    let last: i64 = db(&j)
        .query_row("SELECT max(seq) FROM trail", [], |r| r.get(0))
        .unwrap();
    assert_eq!(last, head, "nothing was appended, no checkpoint signed it");
    assert!(
        refused(&j).contains("come after the last signed checkpoint: nobody signed them"),
        "verify still names the unsigned tail"
    );
}
