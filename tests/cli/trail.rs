//! The auditor's trail (`hookrt journal verify`, `hookrt keygen`, `hookrt
//! journal export`): a journal written by `hookrt run --journal` with a
//! signing key verifies, and each way of tampering with it is caught and
//! named: an edited row, a deleted row, reordered rows, a truncated tail, a
//! pruned range whose boundary was changed, an edit rehashed to the head
//! (caught by the signed checkpoint), a checkpoint by another key, a changed
//! byte of an export.

use std::path::{Path, PathBuf};
use std::process::Output;

use rusqlite::{Connection, params};

use crate::common::{example, hookrt_command};

pub(crate) fn hookrt(args: &[&str]) -> Output {
    let mut c = hookrt_command();
    c.args(args).env("HOOKRT_LOG", "error");
    c.output().expect("hookrt runs")
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A journal of the example transcript, its trail signed every 50 entries
/// by a new key: the folder holding `journal.db`, `key` and `key.pub`.
fn journal(signed: bool) -> (tempfile::TempDir, PathBuf) {
    journal_every(signed, 50)
}

/// [`journal`], its trail signed every `every` entries.
pub(crate) fn journal_every(signed: bool, every: u32) -> (tempfile::TempDir, PathBuf) {
    let every = every.to_string();
    let dir = tempfile::tempdir().unwrap();
    let agent = example("agent");
    let build = hookrt(&["build", agent.to_str().unwrap()]);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let key = dir.path().join("key");
    let out = hookrt(&["keygen", "--out", key.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let j = dir.path().join("journal.db");
    let transcript = agent.join("transcript.jsonl");
    let mut args = vec![
        "run",
        agent.to_str().unwrap(),
        "--events",
        transcript.to_str().unwrap(),
        "--journal",
        j.to_str().unwrap(),
        "--checkpoint-every",
        &every,
    ];
    if signed {
        args.extend(["--signing-key", key.to_str().unwrap()]);
    }
    let out = hookrt(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (dir, j)
}

/// `hookrt journal verify J [--key K]`: exit code and what it said.
pub(crate) fn verify(j: &Path, key: Option<&Path>) -> (i32, String) {
    let mut args = vec!["journal", "verify", j.to_str().unwrap()];
    if let Some(k) = key {
        args.extend(["--key", k.to_str().unwrap()]);
    }
    let out = hookrt(&args);
    (
        out.status.code().unwrap(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

/// The journal as a tamperer opens it with sqlite3: foreign keys unchecked.
pub(crate) fn db(j: &Path) -> Connection {
    let c = Connection::open(j).unwrap();
    c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    c
}

/// The position of the first entry of `kind` after `after`.
pub(crate) fn entry(j: &Path, kind: &str, after: i64) -> i64 {
    db(j)
        .query_row(
            "SELECT min(seq) FROM trail WHERE kind = ?1 AND seq > ?2",
            params![kind, after],
            |r| r.get(0),
        )
        .unwrap()
}

/// An entry of finished deliveries: what a tamperer would change (a
/// hook's outcome), and the edit.
fn a_delivery(j: &Path) -> i64 {
    entry(j, "deliveries", 0)
}

const EDIT: &str = "UPDATE trail SET body = replace(body, '\"outcome\":\"ok\"', '\"outcome\":\"trap\"') WHERE seq = ?1";

/// What a careful tamperer does after changing entry `from`: every hash
/// from there to the head computed again, so each entry fits the one before.
pub(crate) fn rehash_from(j: &Path, from: i64) {
    let c = db(j);
    let mut prev: Vec<u8> = c
        .query_row("SELECT prev FROM trail WHERE seq = ?1", [from], |r| {
            r.get(0)
        })
        .unwrap();
    let rows: Vec<(i64, String, String)> = c
        .prepare("SELECT seq, kind, body FROM trail WHERE seq >= ?1 ORDER BY seq")
        .unwrap()
        .query_map([from], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (seq, kind, body) in rows {
        let hash = hookrt::journal::entry_hash(&prev, &kind, &body);
        c.execute(
            "UPDATE trail SET prev = ?1, hash = ?2 WHERE seq = ?3",
            params![prev, &hash[..], seq],
        )
        .unwrap();
        prev = hash.to_vec();
    }
}

#[test]
fn a_signed_trail_verifies_and_names_what_it_holds() {
    let (dir, j) = journal(true);
    let (code, said) = verify(&j, Some(&dir.path().join("key.pub")));
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("the trail holds: entries 1 to"), "{said}");
    assert!(said.contains("signed checkpoint(s) by"), "{said}");
    assert!(
        said.contains("every one of its 38 event(s) is in it"),
        "{said}"
    );
    // Every event, every final delivery, every resolution is an entry.
    let c = db(&j);
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT count(*) FROM trail WHERE kind = 'event'"), 38);
    assert_eq!(
        count(
            "SELECT sum(json_array_length(body, '$.deliveries')) FROM trail WHERE kind = 'deliveries'"
        ),
        count("SELECT count(*) FROM deliveries WHERE state != 'pending'")
    );
    assert_eq!(
        count("SELECT count(*) FROM trail WHERE kind = 'resolution'"),
        count("SELECT count(*) FROM resolutions")
    );
    // The hook set comes first: each hook's component and the settings.
    let (kind, body): (String, String) = c
        .query_row("SELECT kind, body FROM trail WHERE seq = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(kind, "hooks");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body["components"]["policy"].as_str().map(str::len),
        Some(64),
        "{body}"
    );
    assert_eq!(body["settings"].as_str().map(str::len), Some(64), "{body}");
    // The last entry is the checkpoint signed when the run ended.
    let last: String = c
        .query_row(
            "SELECT kind FROM trail ORDER BY seq DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(last, "checkpoint");
    // Another key's public key is refused.
    let other = dir.path().join("other");
    assert!(
        hookrt(&["keygen", "--out", other.to_str().unwrap()])
            .status
            .success()
    );
    let (code, said) = verify(&j, Some(&dir.path().join("other.pub")));
    assert_eq!(code, 1);
    assert!(said.contains("not by the key given"), "{said}");
    // keygen never overwrites a key.
    let again = hookrt(&["keygen", "--out", dir.path().join("key").to_str().unwrap()]);
    assert!(!again.status.success());
}

#[test]
fn an_edited_row_is_named() {
    let (_dir, j) = journal(false);
    let seq = a_delivery(&j);
    assert_eq!(db(&j).execute(EDIT, [seq]).unwrap(), 1);
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!(
            "entry {seq} was edited: its hash does not match its contents"
        )),
        "{said}"
    );
}

#[test]
fn a_deleted_row_is_named() {
    let (_dir, j) = journal(false);
    let seq = entry(&j, "deliveries", 10);
    db(&j)
        .execute("DELETE FROM trail WHERE seq = ?1", [seq])
        .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!("entries {seq} to {seq} are missing: deleted")),
        "{said}"
    );
}

#[test]
fn reordered_rows_are_named() {
    let (_dir, j) = journal(false);
    let a = entry(&j, "event", 20);
    let b = a + 1;
    let c = db(&j);
    c.execute("UPDATE trail SET seq = -1 WHERE seq = ?1", [a])
        .unwrap();
    c.execute("UPDATE trail SET seq = ?1 WHERE seq = ?2", [a, b])
        .unwrap();
    c.execute("UPDATE trail SET seq = ?1 WHERE seq = -1", [b])
        .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!(
            "entry {a} does not follow entry {}: entries were reordered or replaced",
            a - 1
        )),
        "{said}"
    );
}

#[test]
fn a_truncated_tail_is_named() {
    let (_dir, j) = journal(false);
    let c = db(&j);
    let (seq, id): (i64, String) = c
        .query_row(
            "SELECT seq, id FROM events ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let from: i64 = c
        .query_row(
            "SELECT seq FROM trail WHERE kind = 'event' AND event_seq = ?1",
            [seq],
            |r| r.get(0),
        )
        .unwrap();
    c.execute("DELETE FROM trail WHERE seq >= ?1", [from])
        .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!(
            "the trail ends at entry {}, but event {seq} (`{id}`) has no entry: the trail was truncated",
            from - 1
        )),
        "{said}"
    );
}

#[test]
fn a_pruned_range_verifies_and_a_changed_boundary_is_named() {
    let (_dir, j) = journal(false);
    let out = hookrt(&[
        "journal",
        "prune",
        j.to_str().unwrap(),
        "--older-than",
        "0s",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (code, said) = verify(&j, None);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("pruned before it: 1.."), "{said}");
    // The boundary changed, and every hash after it made to fit again: the
    // first remaining entry no longer follows the range.
    let marker = entry(&j, "pruned", 0);
    let (from, to): (i64, i64) = {
        let body: String = db(&j)
            .query_row("SELECT body FROM trail WHERE seq = ?1", [marker], |r| {
                r.get(0)
            })
            .unwrap();
        let b: serde_json::Value = serde_json::from_str(&body).unwrap();
        (b["from"].as_i64().unwrap(), b["to"].as_i64().unwrap())
    };
    db(&j)
        .execute(
            "UPDATE trail SET body = json_set(body, '$.boundary', ?1) WHERE seq = ?2",
            params!["00".repeat(32), marker],
        )
        .unwrap();
    rehash_from(&j, marker);
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!(
            "entry {} does not follow the pruned range {from} to {to}: the range's boundary hash was changed",
            to + 1
        )),
        "{said}"
    );
}

#[test]
fn an_edit_rehashed_to_the_head_is_caught_by_the_signed_checkpoint() {
    let (dir, j) = journal(true);
    let seq = a_delivery(&j);
    assert_eq!(db(&j).execute(EDIT, [seq]).unwrap(), 1);
    rehash_from(&j, seq);
    let checkpoint = entry(&j, "checkpoint", seq);
    let (code, said) = verify(&j, Some(&dir.path().join("key.pub")));
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!("entry {checkpoint} is a checkpoint")),
        "{said}"
    );
}

#[test]
fn an_export_verifies_on_its_own_and_a_changed_byte_does_not() {
    let (dir, j) = journal(true);
    let out = hookrt(&["journal", "export", j.to_str().unwrap(), "--since", "1h"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = text(&out.stdout);
    assert!(lines.lines().count() > 50, "{lines}");
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, &lines).unwrap();
    let key = dir.path().join("key.pub");
    let check = |f: &Path| {
        hookrt(&[
            "journal",
            "verify",
            "--export",
            f.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ])
    };
    let ok = check(&file);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    // One changed byte in one body.
    let changed = lines.replacen(
        "\\\"outcome\\\":\\\"ok\\\"",
        "\\\"outcome\\\":\\\"ko\\\"",
        1,
    );
    assert_ne!(changed, lines);
    std::fs::write(&file, changed).unwrap();
    let bad = check(&file);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("was edited"),
        "{}",
        text(&bad.stderr)
    );
    // A time in the future exports nothing; a bad one is refused.
    let none = hookrt(&[
        "journal",
        "export",
        j.to_str().unwrap(),
        "--since",
        "2999-01-01T00:00:00Z",
    ]);
    assert!(none.status.success());
    assert!(none.stdout.is_empty());
    let bad = hookrt(&[
        "journal",
        "export",
        j.to_str().unwrap(),
        "--since",
        "yesterday",
    ]);
    assert!(
        text(&bad.stderr).contains("neither a UTC time"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn an_edited_record_in_the_journal_is_named_by_its_entry() {
    let (_dir, j) = journal(false);
    // The decision flipped in `resolutions`, the trail left alone.
    let c = db(&j);
    let (seq, event): (i64, String) = c
        .query_row(
            "SELECT r.event_seq, e.id FROM resolutions r JOIN events e ON e.seq = r.event_seq WHERE r.resolution LIKE '%\"deny\"%' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    c.execute(
        "UPDATE resolutions SET resolution = replace(resolution, '\"deny\"', '\"allow\"') WHERE event_seq = ?1",
        [seq],
    )
    .unwrap();
    let entry: i64 = c
        .query_row(
            "SELECT seq FROM trail WHERE kind = 'resolution' AND event_seq = ?1",
            [seq],
            |r| r.get(0),
        )
        .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!(
            "entry {entry} records event `{event}`, whose resolution in the journal was changed since"
        )),
        "{said}"
    );
    // An event's envelope edited in `events`.
    let (eseq, eid): (i64, String) = c
        .query_row(
            "SELECT seq, id FROM events WHERE envelope LIKE '%rm -rf%' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    c.execute(
        "UPDATE resolutions SET resolution = replace(resolution, '\"allow\"', '\"deny\"') WHERE event_seq = ?1",
        [seq],
    )
    .unwrap();
    c.execute(
        "UPDATE events SET envelope = replace(envelope, 'rm -rf', 'ls -l') WHERE seq = ?1",
        [eseq],
    )
    .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1);
    assert!(
        said.contains(&format!(
            "records event `{eid}`, whose envelope in the journal was changed since"
        )),
        "{said}"
    );
}
