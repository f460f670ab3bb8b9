//! Eve's stream is at least once: the same line may come twice, in one
//! stream or in the next run's. `hookrt run --format eve` takes it as one
//! event delivered once (a duplicate), with a journal and without; a line
//! that says something else under the same `meta.id` is still a conflict.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{hookrt_command, repo};
use crate::text;

/// The fixture stream's lines.
fn lines() -> Vec<String> {
    std::fs::read_to_string(repo().join("tests/fixtures/eve/stream.ndjson"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `hookrt run` of the example agent over `stream` as Eve's, into
/// `journal` when given: its output, and its JSON lines.
fn run(dir: &Path, stream: &[String], journal: Option<&Path>) -> (Output, Vec<Value>) {
    let file = dir.join(format!("stream-{}.ndjson", stream.len()));
    std::fs::write(&file, stream.join("\n") + "\n").unwrap();
    let agent = repo().join("example-hooks/agent");
    let mut c = hookrt_command();
    c.arg("run")
        .arg(&agent)
        .args([
            "--format",
            "eve",
            "--agent",
            "weather",
            "--session",
            "ses_1",
        ])
        .arg("--events")
        .arg(&file)
        .env("HOOKRT_LOG", "error");
    if let Some(j) = journal {
        c.arg("--journal").arg(j);
    }
    let out = c.output().unwrap();
    let json = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, json)
}

fn id_of(line: &str) -> String {
    serde_json::from_str::<Value>(line).unwrap()["meta"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Delivery lines of event `id`.
fn deliveries(json: &[Value], id: &str) -> usize {
    json.iter()
        .filter(|l| l["event_id"] == id && l.get("hook").is_some())
        .count()
}

#[test]
fn the_same_eve_line_twice_in_one_stream_is_one_event_delivered_once() {
    let dir = tempfile::tempdir().unwrap();
    let all = lines();
    let once: Vec<String> = all[..6].to_vec();
    let mut twice = once.clone();
    twice.insert(4, all[3].clone());
    twice.push(all[5].clone());
    let (first, expected) = run(dir.path(), &once, None);
    assert!(first.status.success(), "{}", text(&first.stderr));
    for journal in [None, Some(dir.path().join("j.db"))] {
        let (out, json) = run(dir.path(), &twice, journal.as_deref());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let summary = &json.last().unwrap()["summary"];
        assert_eq!(summary["refused"], 0, "{summary}");
        assert_eq!(summary["events"], 6, "{summary}");
        assert_eq!(summary["duplicates"], 2, "{summary}");
        for line in &once {
            let id = id_of(line);
            assert_eq!(
                deliveries(&json, &id),
                deliveries(&expected, &id),
                "{id} is delivered as often as when read once"
            );
        }
        assert!(
            text(&out.stderr).contains("skipped as a duplicate"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn an_eve_line_read_again_by_the_next_run_on_one_journal_is_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.db");
    let all = lines();
    let (out, _) = run(dir.path(), &all[..6], Some(&journal));
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The next run starts two lines back (Eve sent them again).
    let (out, json) = run(dir.path(), &all[4..9], Some(&journal));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = &json.last().unwrap()["summary"];
    assert_eq!(summary["refused"], 0, "{summary}");
    assert_eq!(summary["duplicates"], 2, "{summary}");
    assert_eq!(summary["events"], 3, "{summary}");
    let events: i64 = rusqlite::Connection::open(&journal)
        .unwrap()
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap();
    assert_eq!(events, 9);
    // A new event of the second run comes after the first run's in the stream.
    let sequence = |id: &str| -> i64 {
        rusqlite::Connection::open(&journal)
            .unwrap()
            .query_row(
                "SELECT json_extract(envelope, '$.coordinates.sequence') FROM events WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(sequence(&id_of(&all[6])), 6);
    assert_eq!(sequence(&id_of(&all[5])), 5);
}

#[test]
fn another_eve_line_under_an_id_read_before_is_still_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let all = lines();
    let mut changed: Value = serde_json::from_str(&all[2]).unwrap();
    changed["data"]["message"] = "What's the weather in Oslo?".into();
    let stream = vec![
        all[0].clone(),
        all[1].clone(),
        all[2].clone(),
        changed.to_string(),
    ];
    for journal in [None, Some(dir.path().join("j.db"))] {
        let (out, json) = run(dir.path(), &stream, journal.as_deref());
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let summary = &json.last().unwrap()["summary"];
        assert_eq!(summary["refused"], 1, "{summary}");
        assert!(
            text(&out.stderr).contains("taken before by an event that says something else"),
            "{}",
            text(&out.stderr)
        );
    }
}
