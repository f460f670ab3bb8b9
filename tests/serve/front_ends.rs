//! Every way in prints the same delivery line for the same delivery: the
//! example transcript through `hookrt run`, `hookrt serve
//! --print-deliveries` (posted to `/v1/events`) and `hookrt worker
//! --print-deliveries` (published to JetStream) gives the same lines, field
//! for field, but for what differs by nature: how long each delivery took,
//! the fuel it burnt (the TypeScript hook reads the clock), and where a
//! fleet worker ran it. And each ends with the same summary line: the same
//! fields, the same counts.

use serde_json::Value;

use crate::common::succeeded;
use crate::jetstream::{Nats, Worker, patient_agent, publish, wait_for};
use crate::{Server, hookrt, transcript_text};

/// The fields a front end adds or that differ from run to run.
const VARYING: &[&str] = &["duration_us", "fuel_used"];
/// Where a fleet worker ran the delivery (the worker's lines only).
const PLACEMENT: &[&str] = &["partition", "worker", "at_us"];

/// The delivery lines among `text`'s lines (a delivery line names its handler).
fn delivery_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("handler").is_some())
        .collect()
}

/// `line` without the fields that differ by nature, after checking they are there.
fn comparable(line: &Value, extra: &[&str]) -> Value {
    let mut fields = line
        .as_object()
        .expect("a delivery line is an object")
        .clone();
    for key in VARYING.iter().chain(extra) {
        let value = fields
            .remove(*key)
            .unwrap_or_else(|| panic!("no `{key}` in a delivery line: {line}"));
        assert!(value.is_u64() || value.is_string(), "`{key}`: {value}");
    }
    Value::Object(fields)
}

#[test]
fn the_same_transcript_prints_the_same_delivery_lines_through_run_serve_and_worker() {
    let dir = tempfile::tempdir().unwrap();
    let agent = patient_agent(dir.path());
    let agent_arg = agent.to_str().unwrap();
    let events = dir.path().join("transcript.jsonl");
    std::fs::write(&events, transcript_text()).unwrap();

    let out = succeeded(&mut hookrt(&[
        "run",
        agent_arg,
        "--events",
        events.to_str().unwrap(),
    ]));
    let run_out = String::from_utf8_lossy(&out.stdout).into_owned();
    let run_summary = summary_of(&run_out);
    let run: Vec<Value> = delivery_lines(&run_out)
        .iter()
        .map(|l| comparable(l, &[]))
        .collect();
    assert!(
        run.len() > 100,
        "the transcript makes many deliveries: {}",
        run.len()
    );

    let server = Server::start(&agent, &["--print-deliveries"]);
    let reply = server.post(
        "/v1/events",
        "application/x-ndjson",
        transcript_text().as_bytes(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let (stopped, printed) = server.terminate();
    assert!(stopped, "hookrt serve exits cleanly: {printed}");
    let served: Vec<Value> = delivery_lines(&printed)
        .iter()
        .map(|l| comparable(l, &[]))
        .collect();
    assert_eq!(served, run, "hookrt serve's delivery lines, in order");
    assert_eq!(
        summary_of(&printed),
        run_summary,
        "hookrt serve's summary line"
    );

    let nats = Nats::start();
    let worker = Worker::start(&agent, &nats, &[]);
    publish(&nats, &transcript_text(), &[]);
    wait_for("the worker to deliver the transcript", || {
        worker.deliveries().len() >= run.len()
    });
    // Nothing more comes after the last planned delivery.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut fleet: Vec<String> = worker
        .deliveries()
        .iter()
        .map(|l| comparable(l, PLACEMENT).to_string())
        .collect();
    let mut expected: Vec<String> = run.iter().map(Value::to_string).collect();
    // One session is one partition, in order; cascade events come back
    // through the stream, so the fleet's lines are compared as a set.
    fleet.sort();
    expected.sort();
    assert_eq!(fleet, expected, "hookrt worker's delivery lines");

    // The worker's summary: the shared fields, counted alike (every receipt
    // is `persisted` there: the stream stored each event first), and its own.
    let mut fleet_summary = worker.terminate();
    let own = fleet_summary.as_object_mut().unwrap();
    for key in ["worker", "acked", "skipped", "retried", "dead"] {
        assert!(
            own.remove(key).is_some(),
            "the worker's summary has `{key}`"
        );
    }
    for key in ["durability", "note"] {
        own.remove(key);
    }
    let mut expected = run_summary;
    for key in ["durability", "note"] {
        expected.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(fleet_summary, expected, "hookrt worker's summary line");
}

/// The `{"summary": ...}` line among `text`'s lines: its fields.
fn summary_of(text: &str) -> Value {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("summary").cloned())
        .unwrap_or_else(|| panic!("no summary line in:\n{text}"))
}
