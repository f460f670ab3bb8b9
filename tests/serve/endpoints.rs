//! Events, decisions and edits over HTTP, exact outcomes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hookrt::journal::Journal;
use hookrt::{EventClass, class_of};
use serde_json::{Value, json};

use crate::common::{self, TempAgent};
use crate::{Server, agent, transcript_text};

const NDJSON: &str = "application/x-ndjson";
const JSON: &str = "application/json";

#[test]
fn the_transcript_gets_one_persisted_receipt_per_event_and_a_repeat_is_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    let server = Server::start(&agent(), &["--journal", journal.to_str().unwrap()]);
    let text = transcript_text();
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();

    let reply = server.post("/v1/events", NDJSON, text.as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["durability"], "persisted");
    assert_eq!(body["taken"], ids.len());
    assert_eq!(body["refused"], 0);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), ids.len());
    for (i, (r, id)) in results.iter().zip(&ids).enumerate() {
        assert_eq!(r["index"], i);
        assert_eq!(r["line"], i + 1);
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["receipt"]["event_id"], id.as_str());
        assert_eq!(r["receipt"]["durability"], "persisted");
        assert_eq!(r["receipt"]["duplicate"], false);
        assert_eq!(r["receipt"]["seq"], i as u64 + 1);
    }

    // The same events as a JSON array: each one is a duplicate, not stored again.
    let array: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let again = server.post(
        "/v1/events",
        JSON,
        Value::Array(array).to_string().as_bytes(),
    );
    assert_eq!(again.status, 200, "{}", again.body);
    let again = again.json();
    assert!(
        again["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["receipt"]["duplicate"] == true)
    );

    let (clean, rest) = server.terminate();
    assert!(clean, "SIGTERM ends hookrt serve cleanly: {rest}");
    let summary: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(summary["summary"]["events"], ids.len());
    assert_eq!(summary["summary"]["left_unacked"], 0);
    let status = Journal::open_existing(&journal).unwrap().status().unwrap();
    assert_eq!(status.events, ids.len() as i64);
    assert_eq!(
        status.pending, 0,
        "every delivery ran and was acked before exit"
    );
}

#[test]
fn a_malformed_line_gets_its_own_error_and_the_others_are_taken() {
    let server = Server::start(&agent(), &[]);
    let text = transcript_text();
    let lines: Vec<&str> = text.lines().take(3).collect();
    let body = format!(
        "{}\n{{\"id\": \"broken\"\n\n{}\n{}\n",
        lines[0], lines[1], lines[2]
    );
    let reply = server.post("/v1/events", NDJSON, body.as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(
        (body["taken"].as_u64(), body["refused"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(body["durability"], "accepted");
    let results = body["results"].as_array().unwrap();
    let oks: Vec<bool> = results.iter().map(|r| r["ok"] == true).collect();
    assert_eq!(oks, [true, false, true, true]);
    assert_eq!(results[1]["line"], 2);
    assert!(results[1]["error"].as_str().unwrap().len() > 3);
    assert!(results[1]["fix"].is_string());
    assert_eq!(
        results[2]["line"], 4,
        "the blank line is skipped, not an event"
    );
    assert_eq!(results[0]["receipt"]["durability"], "accepted");

    // An envelope that parses but is invalid: refused alone, 400 when nothing was taken.
    let invalid = json!({"schema_version": 1, "id": "x1", "kind": "no.such.kind", "timestamp": "2026-11-30T09:00:00.000Z",
        "coordinates": {"agent": "a", "session": "s", "sequence": 0}, "data": {}});
    let reply = server.post("/v1/events", JSON, invalid.to_string().as_bytes());
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.json()["results"][0]["ok"], false);
    // A body that is not JSON at all.
    let reply = server.post("/v1/events", JSON, b"{nope");
    assert_eq!(reply.status, 400);
    assert!(reply.json()["error"].as_str().unwrap().contains("not JSON"));
}

#[test]
fn decide_and_edit_answer_what_dispatch_decides() {
    let rt = common::load(&agent());
    let server = Server::start(&agent(), &["--decide-timeout-ms", "30000"]);
    let mut compared = BTreeMap::<&str, usize>::new();
    for (line, envelope) in transcript_text().lines().zip(common::transcript()) {
        let path = match class_of(&envelope.kind) {
            EventClass::Observe => continue,
            EventClass::Decision | EventClass::Gate => "/v1/decide",
            EventClass::Edit => "/v1/edit",
        };
        let expected = serde_json::to_value(rt.dispatch(&envelope).unwrap().resolution).unwrap();
        let reply = server.post(path, JSON, line.as_bytes());
        assert_eq!(reply.status, 200, "{}", reply.body);
        let body = reply.json();
        assert_eq!(body["failed_closed"], false, "{body}");
        assert_eq!(
            body["resolution"], expected,
            "{} ({})",
            envelope.id, envelope.kind
        );
        assert_eq!(body["receipt"]["event_id"], envelope.id.as_str());
        *compared.entry(path).or_default() += 1;
    }
    assert_eq!(
        compared.get("/v1/decide"),
        Some(&6),
        "5 actions.requested and 1 file.edit.requested"
    );
    assert_eq!(
        compared.get("/v1/edit"),
        Some(&9),
        "7 step.completed and 2 turn.completed"
    );

    // An observe event is not a decision.
    let first = transcript_text().lines().next().unwrap().to_owned();
    let reply = server.post("/v1/decide", JSON, first.as_bytes());
    assert_eq!(reply.status, 400);
    assert!(reply.json()["fix"].as_str().unwrap().contains("/v1/events"));
}

#[test]
fn a_decision_past_the_decide_timeout_fails_closed() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "infinite_loop.rs")
        .config("[hooks.infinite_loop]\nfuel = 10_000_000_000\ndeadline_ms = 60_000\n");
    let server = Server::start(
        agent.path(),
        &["--decide-timeout-ms", "300", "--drain-timeout", "0"],
    );
    let request = transcript_text()
        .lines()
        .find(|l| l.contains("\"kind\":\"actions.requested\""))
        .unwrap()
        .to_owned();
    let started = Instant::now();
    let reply = server.post("/v1/decide", JSON, request.as_bytes());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "answered at the decide timeout, not the hook's deadline"
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["failed_closed"], true);
    assert!(
        body["reason"].as_str().unwrap().contains("300 ms"),
        "{body}"
    );
    let calls = body["resolution"]["tool_approval"]["calls"]
        .as_array()
        .unwrap();
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_01", "call_02"]);
    for call in calls {
        assert_eq!(call["verdict"]["answer"], "deny", "{call}");
        assert!(
            call["verdict"]["text"]
                .as_str()
                .unwrap()
                .contains("failing closed")
        );
        assert_eq!(call["failure"], true);
    }
}

#[test]
fn eve_lines_are_one_stream_across_requests() {
    let server = Server::start(&agent(), &[]);
    let stream =
        std::fs::read_to_string(common::repo().join("tests/fixtures/eve/stream.ndjson")).unwrap();
    let lines: Vec<&str> = stream.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    let mut taken = 0;
    for part in [a, b] {
        let body = part.join("\n");
        let path =
            "/v1/events?format=eve&agent=weather&session=%2Feve%2Fv1%2Fsession%2Fses_1%2Fstream";
        let reply = server.post(path, NDJSON, body.as_bytes());
        assert_eq!(reply.status, 200, "{}", reply.body);
        let reply = reply.json();
        assert_eq!(reply["refused"], 0, "{reply}");
        taken += reply["taken"].as_u64().unwrap();
    }
    assert_eq!(taken, lines.len() as u64);
    // Without its session, an Eve body is refused as a whole, saying what is missing.
    let reply = server.post(
        "/v1/events?format=eve&agent=weather",
        NDJSON,
        a[0].as_bytes(),
    );
    assert_eq!(reply.status, 400);
    assert!(reply.json()["error"].as_str().unwrap().contains("session"));
}

#[test]
fn an_eve_line_sent_again_to_the_next_server_on_one_journal_is_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.db");
    let j = journal.to_str().unwrap();
    let stream =
        std::fs::read_to_string(common::repo().join("tests/fixtures/eve/stream.ndjson")).unwrap();
    let lines: Vec<&str> = stream.lines().collect();
    let path = "/v1/events?format=eve&agent=weather&session=ses_1";
    {
        let server = Server::start(&agent(), &["--journal", j]);
        let reply = server.post(path, NDJSON, lines[..6].join("\n").as_bytes());
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json()["refused"], 0, "{}", reply.body);
    }
    // The next server reads the stream from two lines back.
    let server = Server::start(&agent(), &["--journal", j]);
    let reply = server.post(path, NDJSON, lines[4..9].join("\n").as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = reply.json();
    assert_eq!(reply["refused"], 0, "{reply}");
    let duplicate: Vec<bool> = reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["receipt"]["duplicate"] == true)
        .collect();
    assert_eq!(duplicate, [true, true, false, false, false], "{reply}");
}

/// `name{labels} value` lines of a Prometheus text page.
pub(crate) fn samples(page: &str) -> BTreeMap<String, f64> {
    page.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.rsplit_once(' '))
        .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
        .collect()
}

#[test]
fn metrics_count_deliveries_by_hook_and_outcome() {
    let rt = common::load(&agent());
    let audited = common::run_transcript(&rt)
        .iter()
        .filter(|d| d.hook == "audit")
        .count() as f64;
    assert!(audited > 0.0);
    let server = Server::start(&agent(), &[]);
    let reply = server.post("/v1/events", NDJSON, transcript_text().as_bytes());
    assert_eq!(reply.status, 200);
    let key = r#"hookrt_deliveries_total{hook="audit",outcome="ok"}"#;
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        let page = server.get("/metrics");
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.header("content-type").unwrap().contains("text"));
        if samples(&page.body).get(key) == Some(&audited) || Instant::now() > deadline {
            break page.body;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let s = samples(&page);
    assert_eq!(s.get(key), Some(&audited), "{page}");
    assert_eq!(
        s.get(r#"hookrt_events_total{durability="accepted",duplicate="false"}"#),
        Some(&38.0),
        "{page}"
    );
    assert_eq!(
        s.get(r#"hookrt_delivery_duration_seconds_count{hook="audit"}"#),
        Some(&audited)
    );
    assert_eq!(
        s.get(r#"hookrt_delivery_fuel_count{hook="audit"}"#),
        Some(&audited)
    );
    assert_eq!(s.get("hookrt_queue_depth"), Some(&0.0));
    assert!(page.contains("# TYPE hookrt_journal_pending_deliveries gauge"));
}
