//! Every kind of trail entry, edited, is named by `hookrt journal verify`
//! and by `verify --export`: the `hooks` set, an `event` (a hook added to
//! its plan), its `deliveries`, a `resolution`, a `checkpoint` and a
//! `pruned` range. A check skipped for one kind survived every tamper test
//! while they all edited `deliveries` entries. And a hook planted in an
//! event's plan with every hash made to fit is named by the records check.

use std::path::Path;

use rusqlite::params;
use serde_json::Value;

use crate::trail::{db, hookrt, journal_every, text, verify};

/// Each kind, the entry's edit as SQL on its body, and the same edit as a
/// tamperer makes it on the body of an exported line.
const EDITS: [(&str, &str); 6] = [
    ("hooks", "json_set(body, '$.components.planted', 'ab')"),
    ("event", "json_insert(body, '$.hooks[#]', 'planted')"),
    (
        "deliveries",
        "json_set(body, '$.deliveries[0].attempts', 9)",
    ),
    ("resolution", "json_set(body, '$.planted', 1)"),
    ("checkpoint", "json_set(body, '$.every', 1000)"),
    ("pruned", "json_set(body, '$.to', 1)"),
];

/// The body `sql` makes of `body` (sqlite's JSON functions, as a tamperer
/// with sqlite3 would write it).
fn edited(sql: &str, body: &str) -> String {
    rusqlite::Connection::open_in_memory()
        .unwrap()
        .query_row(
            &format!("SELECT {sql} FROM (SELECT ?1 AS body)"),
            [body],
            |r| r.get(0),
        )
        .unwrap()
}

/// Two signed journals of the example transcript, checkpoints every 10
/// entries: as written, and pruned (`journal prune --older-than 0s`), which
/// is where a `pruned` entry is.
fn journals() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    [std::path::PathBuf; 2],
) {
    let (whole_dir, whole) = journal_every(true, 10);
    let (pruned_dir, pruned) = journal_every(true, 10);
    let out = hookrt(&[
        "journal",
        "prune",
        pruned.to_str().unwrap(),
        "--older-than",
        "0s",
        "--signing-key",
        pruned_dir.path().join("key").to_str().unwrap(),
        "--checkpoint-every",
        "10",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (whole_dir, pruned_dir, [whole, pruned])
}

/// Of `journals`, the first holding an entry of `kind`, and the entry.
fn holding<'a>(journals: &'a [std::path::PathBuf; 2], kind: &str) -> (&'a Path, i64) {
    journals
        .iter()
        .find_map(|j| {
            let seq: Option<i64> = db(j)
                .query_row("SELECT min(seq) FROM trail WHERE kind = ?1", [kind], |r| {
                    r.get(0)
                })
                .unwrap();
            seq.map(|seq| (j.as_path(), seq))
        })
        .unwrap_or_else(|| panic!("no journal holds a `{kind}` entry"))
}

/// The public key beside journal `j`.
fn key_of(j: &Path) -> std::path::PathBuf {
    j.with_file_name("key.pub")
}

#[test]
fn every_kind_of_entry_edited_is_named_by_verify() {
    let (_whole, _pruned, journals) = journals();
    for j in &journals {
        let (code, said) = verify(j, Some(&key_of(j)));
        assert_eq!(code, 0, "{said}");
    }
    for (kind, sql) in EDITS {
        let (j, seq) = holding(&journals, kind);
        let c = db(j);
        let body: String = c
            .query_row("SELECT body FROM trail WHERE seq = ?1", [seq], |r| r.get(0))
            .unwrap();
        let changed = edited(sql, &body);
        assert_ne!(changed, body, "{kind}: the edit changes the body");
        c.execute(
            "UPDATE trail SET body = ?1 WHERE seq = ?2",
            params![changed, seq],
        )
        .unwrap();
        let (code, said) = verify(j, Some(&key_of(j)));
        assert_eq!(code, 1, "{kind}: {said}");
        assert!(
            said.contains(&format!(
                "entry {seq} was edited: its hash does not match its contents"
            )),
            "{kind}: {said}"
        );
        c.execute(
            "UPDATE trail SET body = ?1 WHERE seq = ?2",
            params![body, seq],
        )
        .unwrap();
        let (code, said) = verify(j, Some(&key_of(j)));
        assert_eq!(code, 0, "{kind}: the edit undone: {said}");
    }
}

#[test]
fn every_kind_of_entry_edited_in_an_export_is_named() {
    let (_whole, _pruned, journals) = journals();
    for (kind, sql) in EDITS {
        let (j, _) = holding(&journals, kind);
        let out = hookrt(&["journal", "export", j.to_str().unwrap(), "--since", "1h"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
        let file = j.with_file_name(format!("{kind}.jsonl"));
        let check = |lines: &[String]| {
            std::fs::write(&file, lines.join("\n") + "\n").unwrap();
            let out = hookrt(&[
                "journal",
                "verify",
                "--export",
                file.to_str().unwrap(),
                "--key",
                key_of(j).to_str().unwrap(),
            ]);
            (out.status.code(), text(&out.stderr))
        };
        let (code, said) = check(&lines);
        assert_eq!(code, Some(0), "{kind}: {said}");
        let at = lines
            .iter()
            .position(|l| serde_json::from_str::<Value>(l).unwrap()["kind"] == kind)
            .unwrap_or_else(|| panic!("the export holds no `{kind}` entry"));
        let mut line: Value = serde_json::from_str(&lines[at]).unwrap();
        let body = line["body"].as_str().unwrap().to_owned();
        line["body"] = edited(sql, &body).into();
        let seq = line["seq"].as_i64().unwrap();
        let mut changed = lines.clone();
        changed[at] = line.to_string();
        let (code, said) = check(&changed);
        assert_eq!(code, Some(1), "{kind}: {said}");
        assert!(
            said.contains(&format!("entry {seq} was edited")),
            "{kind}: {said}"
        );
    }
}

#[test]
fn a_hook_planted_in_an_events_plan_and_rehashed_is_named_without_a_key() {
    // Unsigned: no checkpoint catches the rewritten chain, the records do.
    let (_dir, j) = journal_every(false, 50);
    let seq = crate::trail::entry(&j, "event", 0);
    db(&j)
        .execute(
            "UPDATE trail SET body = json_insert(body, '$.hooks[#]', 'planted') WHERE seq = ?1",
            [seq],
        )
        .unwrap();
    crate::trail::rehash_from(&j, seq);
    let (code, said) = verify(&j, None);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!("entry {seq} is not readable: its plan lists")),
        "{said}"
    );
}
