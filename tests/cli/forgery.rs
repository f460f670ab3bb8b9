//! Forged journals (issue 44's T1–T5): what a tamperer with write access to
//! a journal signed every 5 entries does with sqlite3, each refused by
//! `hookrt journal verify --key` naming why; pruning that stays signed; the
//! anchor (`hookrt journal head` → `verify --expect-head`) that catches a
//! trail cut back to an older checkpoint; a receipt checked without a key
//! never exits 0.

use std::path::Path;

use rusqlite::params;

use crate::trail::{db, hookrt, journal_every, rehash_from, text, verify};

/// `hookrt journal verify J --key K` and `extra`: exit code and what it said.
fn verify_key(j: &Path, key: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec![
        "journal",
        "verify",
        j.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = hookrt(&args);
    (
        out.status.code().unwrap(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

/// The trail's rows (but `drop`'s kinds), renumbered from 1 and rehashed
/// from genesis, as a tamperer who removes entries does.
fn renumber_without(j: &Path, drop: &str) {
    let c = db(j);
    let rows: Vec<(String, Option<i64>, String)> = c
        .prepare("SELECT kind, event_seq, body FROM trail WHERE kind != ?1 ORDER BY seq")
        .unwrap()
        .query_map([drop], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    c.execute("DELETE FROM trail", []).unwrap();
    for (i, (kind, event_seq, body)) in rows.iter().enumerate() {
        c.execute(
            "INSERT INTO trail(seq, kind, event_seq, body, prev, hash) VALUES (?1, ?2, ?3, ?4, zeroblob(32), zeroblob(32))",
            params![i as i64 + 1, kind, event_seq, body],
        )
        .unwrap();
    }
    rehash_from(j, 1);
}

/// Appends an entry after the head, linked and hashed as hookrt would.
fn append(j: &Path, kind: &str, body: &serde_json::Value) -> i64 {
    let c = db(j);
    let (seq, prev): (i64, Vec<u8>) = c
        .query_row(
            "SELECT seq, hash FROM trail ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let body = body.to_string();
    let hash = hookrt::journal::entry_hash(&prev, kind, &body);
    c.execute(
        "INSERT INTO trail(seq, kind, event_seq, body, prev, hash) VALUES (?1, ?2, NULL, ?3, ?4, ?5)",
        params![seq + 1, kind, body, prev, &hash[..]],
    )
    .unwrap();
    seq + 1
}

/// Deletes the journal's rows of the events `seqs` selects (a WHERE over
/// `seq`), with their deliveries and decisions.
fn delete_events(j: &Path, seqs: &str) {
    let c = db(j);
    for table in ["deliveries", "resolutions", "dead_letters"] {
        c.execute(
            &format!(
                "DELETE FROM {table} WHERE event_seq IN (SELECT seq FROM events WHERE {seqs})"
            ),
            [],
        )
        .unwrap();
    }
    c.execute(&format!("DELETE FROM events WHERE {seqs}"), [])
        .unwrap();
}

/// The position of the last checkpoint at or before `at`.
fn checkpoint_before(j: &Path, at: i64) -> i64 {
    db(j)
        .query_row(
            "SELECT max(seq) FROM trail WHERE kind = 'checkpoint' AND seq <= ?1",
            [at],
            |r| r.get(0),
        )
        .unwrap()
}

/// Cuts the trail back to entry `to` (the entries after it deleted), and
/// the journal's rows no remaining entry records with it: events and
/// decisions deleted, deliveries back to pending (as they were then).
fn cut_back_to(j: &Path, to: i64) {
    let c = db(j);
    c.execute("DELETE FROM trail WHERE seq > ?1", [to]).unwrap();
    c.execute(
        "UPDATE deliveries SET state = 'pending', outcome = NULL, answer = NULL WHERE NOT EXISTS
         (SELECT 1 FROM trail t, json_each(t.body, '$.deliveries') d WHERE t.kind = 'deliveries'
          AND t.event_seq = deliveries.event_seq AND json_extract(d.value, '$.position') = deliveries.position)",
        [],
    )
    .unwrap();
    delete_events(
        j,
        "seq NOT IN (SELECT event_seq FROM trail WHERE kind = 'event')",
    );
    c.execute(
        "DELETE FROM resolutions WHERE event_seq NOT IN (SELECT event_seq FROM trail WHERE kind = 'resolution')",
        [],
    )
    .unwrap();
}

#[test]
fn t1_a_decision_changed_with_every_checkpoint_dropped_and_the_chain_rehashed_is_refused() {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key.pub");
    let c = db(&j);
    let (seq, resolution): (i64, String) = c
        .query_row(
            "SELECT event_seq, resolution FROM resolutions WHERE resolution LIKE '%\"deny\"%' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let allowed = resolution.replace("\"deny\"", "\"allow\"");
    c.execute(
        "UPDATE resolutions SET resolution = ?1 WHERE event_seq = ?2",
        params![allowed, seq],
    )
    .unwrap();
    c.execute(
        "UPDATE trail SET body = json_set(body, '$.resolution_sha256', ?1) WHERE kind = 'resolution' AND event_seq = ?2",
        params![hookrt::journal::text_sha256(&allowed), seq],
    )
    .unwrap();
    renumber_without(&j, "checkpoint");
    let (code, said) = verify_key(&j, &key, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("no entry is a signed checkpoint: the whole trail"),
        "{said}"
    );
    // Without a key the chain is only consistent with itself, and says so.
    let (code, said) = verify(&j, None);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("no key given"), "{said}");
}

#[test]
fn t1_checkpoints_dropped_after_an_edit_leave_a_tail_nobody_signed() {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key.pub");
    // The first checkpoints stay; an entry after them is edited, and every
    // checkpoint from there on dropped, the rest renumbered and rehashed.
    let first: i64 = db(&j)
        .query_row(
            "SELECT min(seq) FROM trail WHERE kind = 'checkpoint'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let c = db(&j);
    c.execute(
        "DELETE FROM trail WHERE kind = 'checkpoint' AND seq > ?1",
        [first],
    )
    .unwrap();
    let rows: Vec<i64> = c
        .prepare("SELECT seq FROM trail WHERE seq > ?1 ORDER BY seq")
        .unwrap()
        .query_map([first], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (i, seq) in rows.iter().enumerate() {
        c.execute(
            "UPDATE trail SET seq = ?1 WHERE seq = ?2",
            params![first + 1 + i as i64, seq],
        )
        .unwrap();
    }
    rehash_from(&j, first + 1);
    let last: i64 = c
        .query_row("SELECT max(seq) FROM trail", [], |r| r.get(0))
        .unwrap();
    // Accepting an unsigned tail does not accept one longer than promised.
    for extra in [&[][..], &["--allow-unsigned-tail"][..]] {
        let (code, said) = verify_key(&j, &key, extra);
        assert_eq!(code, 1, "{said}");
        assert!(
            said.contains(&format!(
                "entries {} to {last} come after the last signed checkpoint: nobody signed them, and there are more of them than the 5 the last checkpoint signed",
                first + 1
            )),
            "{said}"
        );
    }
}

#[test]
fn t2_events_deleted_behind_an_appended_pruned_entry_are_refused() {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key.pub");
    delete_events(&j, "seq <= 30");
    let c = db(&j);
    let keep_from: i64 = c
        .query_row(
            "SELECT min(t.seq) FROM trail t WHERE t.event_seq IS NOT NULL AND EXISTS (SELECT 1 FROM events e WHERE e.seq = t.event_seq)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let boundary: Vec<u8> = c
        .query_row(
            "SELECT hash FROM trail WHERE seq = ?1",
            [keep_from - 1],
            |r| r.get(0),
        )
        .unwrap();
    c.execute("DELETE FROM trail WHERE seq < ?1", [keep_from])
        .unwrap();
    let pruned = append(
        &j,
        "pruned",
        &serde_json::json!({
            "events": [[1, 30]],
            "from": 1,
            "to": keep_from - 1,
            "boundary": hex::encode(boundary),
        }),
    );
    for extra in [&[][..], &["--allow-unsigned-tail"][..]] {
        let (code, said) = verify_key(&j, &key, extra);
        assert_eq!(code, 1, "{said}");
        assert!(
            said.contains(&format!(
                "entry {pruned} says entries and events were pruned, and no checkpoint right after it signs that"
            )),
            "{said}"
        );
    }
}

#[test]
fn t3_the_last_events_cut_with_their_entries_are_refused_and_a_cut_to_a_checkpoint_fails_the_anchor()
 {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key.pub");
    let anchor = hookrt(&["journal", "head", j.to_str().unwrap()]);
    assert!(anchor.status.success(), "{}", text(&anchor.stderr));
    let anchor = text(&anchor.stdout).trim().to_owned();
    let (seq, hash) = anchor.split_once(':').unwrap();
    assert_eq!(hash.len(), 64, "{anchor}");
    let (code, said) = verify_key(&j, &key, &["--expect-head", &anchor]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains(&format!("the anchor at entry {seq} holds")),
        "{said}"
    );
    // The last 8 events, their entries and the shutdown checkpoint.
    let c = db(&j);
    let eighth: i64 = c
        .query_row(
            "SELECT seq FROM events ORDER BY seq DESC LIMIT 1 OFFSET 7",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut cut: i64 = c
        .query_row(
            "SELECT min(seq) FROM trail WHERE event_seq >= ?1",
            [eighth],
            |r| r.get(0),
        )
        .unwrap();
    if checkpoint_before(&j, cut - 1) == cut - 1 {
        cut += 1; // so the head left is not a checkpoint
    }
    cut_back_to(&j, cut - 1);
    let (code, said) = verify_key(&j, &key, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(
            "come after the last signed checkpoint: nobody signed them (give --allow-unsigned-tail"
        ),
        "{said}"
    );
    // A service still running (or one that crashed) leaves such a tail.
    let (code, said) = verify_key(&j, &key, &["--allow-unsigned-tail"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("come after the last checkpoint, unsigned"),
        "{said}"
    );
    // A careful tamperer cuts back to a checkpoint: every signature holds,
    // and only the anchor kept outside tells.
    let back = checkpoint_before(&j, cut - 1);
    cut_back_to(&j, back);
    let (code, said) = verify_key(&j, &key, &[]);
    assert_eq!(code, 0, "{said}");
    let (code, said) = verify_key(&j, &key, &["--expect-head", &anchor]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!(
            "the anchor {anchor} does not hold: the trail ends at entry {back}, before it: entries after {back} were cut"
        )),
        "{said}"
    );
    // An anchor of another chain at a position it holds.
    let other = format!("{}:{}", back - 1, "ab".repeat(32));
    let (code, said) = verify_key(&j, &key, &["--expect-head", &other]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("the chain was rewritten from there"),
        "{said}"
    );
    // Not an anchor at all.
    let (code, said) = verify_key(&j, &key, &["--expect-head", "12"]);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("is not a trail anchor: SEQ:HASH"), "{said}");
}

#[test]
fn t4_entries_deleted_and_the_trails_start_moved_past_them_are_refused() {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key.pub");
    let c = db(&j);
    // The entries of the last events go (back to a checkpoint, so every
    // signature still holds); their events stay; the journal's note of
    // where the trail starts is moved past them.
    let (last, id): (i64, String) = c
        .query_row(
            "SELECT seq, id FROM events ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let first_entry: i64 = c
        .query_row(
            "SELECT min(seq) FROM trail WHERE event_seq >= ?1",
            [last - 2],
            |r| r.get(0),
        )
        .unwrap();
    let back = checkpoint_before(&j, first_entry - 1);
    c.execute("DELETE FROM trail WHERE seq > ?1", [back])
        .unwrap();
    c.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'trail_from_event'",
        [(last + 1).to_string()],
    )
    .unwrap();
    let gone: (i64, String) = c
        .query_row(
            "SELECT seq, id FROM events WHERE seq NOT IN (SELECT event_seq FROM trail WHERE kind = 'event') ORDER BY seq LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(gone.0 <= last, "{gone:?} {id}");
    let (code, said) = verify_key(&j, &key, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!(
            "the trail ends at entry {back}, but event {} (`{}`) has no entry",
            gone.0, gone.1
        )),
        "{said}"
    );
}

#[test]
fn t5_an_event_row_deleted_with_the_trail_untouched_is_refused() {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key.pub");
    // A decision event and its resolution.
    let (seq, id): (i64, String) = db(&j)
        .query_row(
            "SELECT e.seq, e.id FROM events e JOIN resolutions r ON r.event_seq = e.seq LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let entry: i64 = db(&j)
        .query_row(
            "SELECT min(seq) FROM trail WHERE event_seq = ?1",
            [seq],
            |r| r.get(0),
        )
        .unwrap();
    delete_events(&j, &format!("seq = {seq}"));
    let (code, said) = verify_key(&j, &key, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!(
            "entry {entry} records event `{id}`, whose event row is gone from the journal and no `pruned` entry names it"
        )),
        "{said}"
    );
    // The same without a key: the rows are checked either way.
    assert_eq!(verify(&j, None).0, 1);
}

#[test]
fn t5_a_deleted_result_or_decision_and_an_added_decision_are_refused() {
    let (_dir, j) = journal_every(false, 5);
    let c = db(&j);
    let (seq, id): (i64, String) = c
        .query_row(
            "SELECT seq, id FROM events WHERE kind = 'action.result' LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    c.execute("DELETE FROM events WHERE seq = ?1", [seq])
        .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!("records event `{id}`, whose event row is gone")),
        "{said}"
    );

    let (_dir, j) = journal_every(false, 5);
    let c = db(&j);
    let (seq, id): (i64, String) = c
        .query_row(
            "SELECT e.seq, e.id FROM events e JOIN resolutions r ON r.event_seq = e.seq LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    c.execute("DELETE FROM resolutions WHERE event_seq = ?1", [seq])
        .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!(
            "records event `{id}`, whose resolution row is gone"
        )),
        "{said}"
    );

    let (_dir, j) = journal_every(false, 5);
    let c = db(&j);
    let (seq, id): (i64, String) = c
        .query_row(
            "SELECT seq, id FROM events WHERE seq NOT IN (SELECT event_seq FROM resolutions) LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    c.execute(
        "INSERT INTO resolutions(event_seq, resolution) VALUES (?1, '{\"tool_approval\":{}}')",
        [seq],
    )
    .unwrap();
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!(
            "event {seq} (`{id}`) has a decision in the journal that no entry of the trail records"
        )),
        "{said}"
    );
}

#[test]
fn pruning_a_signed_trail_needs_its_key_and_stays_signed() {
    let (dir, j) = journal_every(true, 5);
    let key = dir.path().join("key");
    let prune = |extra: &[&str]| {
        let mut args = vec![
            "journal",
            "prune",
            j.to_str().unwrap(),
            "--older-than",
            "0s",
        ];
        args.extend(extra);
        hookrt(&args)
    };
    let refused = prune(&[]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("trail is signed, so what pruning writes in it must be signed too: give --signing-key FILE"),
        "{}",
        text(&refused.stderr)
    );
    let events = |j: &Path| -> i64 {
        db(j)
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(events(&j), 38, "nothing was pruned");
    let out = prune(&[
        "--signing-key",
        key.to_str().unwrap(),
        "--checkpoint-every",
        "5",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(events(&j) < 38);
    let (code, said) = verify_key(&j, &dir.path().join("key.pub"), &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("pruned before it: 1.."), "{said}");
    // The `pruned` entry, signed right after.
    let kinds: Vec<String> = db(&j)
        .prepare("SELECT kind FROM trail ORDER BY seq DESC LIMIT 2")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kinds, ["checkpoint", "pruned"]);
}

#[test]
fn a_receipt_checked_without_a_key_never_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let signer = |name: &str| {
        let path = dir.path().join(name);
        let out = hookrt(&["keygen", "--out", path.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        path
    };
    let (ours, theirs) = (signer("ours"), signer("theirs"));
    let receipt = |key: &Path| {
        let context = hookrt::journal::TrailContext::signing(
            hookrt::journal::read_signing_key(key).unwrap(),
            5,
        );
        let r = hookrt::journal::sign_receipt(&context, "evt_1", "coder", &[7; 32], "{}").unwrap();
        let file = dir.path().join(format!(
            "{}.receipt",
            key.file_name().unwrap().to_str().unwrap()
        ));
        std::fs::write(&file, r.to_string()).unwrap();
        file
    };
    let check = |receipt: &Path, key: Option<&Path>| {
        let mut args = vec!["journal", "verify", "--receipt", receipt.to_str().unwrap()];
        if let Some(k) = key {
            args.extend(["--key", k.to_str().unwrap()]);
        }
        let out = hookrt(&args);
        (
            out.status.code().unwrap(),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        )
    };
    let theirs_receipt = receipt(&theirs);
    let (code, said) = check(&theirs_receipt, None);
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("signature valid, signer unknown"), "{said}");
    let ours_pub = dir.path().join("ours.pub");
    let (code, said) = check(&theirs_receipt, Some(&ours_pub));
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("not by the key given"), "{said}");
    let (code, said) = check(&receipt(&ours), Some(&ours_pub));
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("the receipt holds"), "{said}");
}
