//! Failure cascades through `hookrt serve`: each `turn.failed` /
//! `session.failed` hookrt raises is written on stdout in `hookrt run`'s
//! form and counted in `/metrics`, exactly as the embedded service tells its
//! observer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookrt::{HookService, Observation};
use serde_json::{Value, json};

use crate::common::{self, TempAgent};
use crate::endpoints::samples;
use crate::{Server, transcript_text};

#[test]
fn each_failure_cascade_is_written_on_stdout_and_counted_as_the_library_raises_it() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .hook("hostile/hooks/fails.rs", "gate.rs")
        .config("[hooks.gate]\ncritical = true\n");

    // What the embedded service raises for the transcript.
    let raised = Arc::new(Mutex::new(Vec::<Value>::new()));
    let sink = raised.clone();
    let observer = Box::new(move |o: Observation<'_>| {
        if let Observation::Cascaded(e) = o {
            sink.lock().unwrap().push(json!({"cascade": {
                "event_id": e.id, "kind": e.kind, "session": e.coordinates.session,
                "turn": e.coordinates.turn, "subagent": e.coordinates.subagent,
                "reason": e.data.get("reason"),
            }}));
        }
    });
    let service = HookService::start_blocking(
        common::load(agent.path()),
        None,
        observer,
        hookrt::ServiceOptions::default(),
    )
    .unwrap();
    for e in common::transcript() {
        service.submit(e).wait().unwrap();
    }
    service.flush_blocking();
    service.shutdown_blocking(Duration::from_secs(30));
    let expected = raised.lock().unwrap().clone();
    let kinds = |lines: &[Value]| -> Vec<String> {
        lines
            .iter()
            .map(|l| l["cascade"]["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        kinds(&expected).first().map(String::as_str),
        Some("session.failed"),
        "the first failure (session.started) has no turn"
    );
    assert!(kinds(&expected).iter().any(|k| k == "turn.failed"));

    let server = Server::start(agent.path(), &[]);
    let reply = server.post(
        "/v1/events",
        "application/x-ndjson",
        transcript_text().as_bytes(),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    // The decision at the end is answered once everything before it was delivered.
    let ask = transcript_text()
        .lines()
        .find(|l| l.contains("\"kind\":\"actions.requested\""))
        .unwrap()
        .replace("\"id\":\"", "\"id\":\"again-");
    let decided = server.post("/v1/decide", "application/json", ask.as_bytes());
    assert_eq!(decided.status, 200, "{}", decided.body);
    let page = server.get("/metrics").body;
    let s = samples(&page);
    let count = |kind: &str| kinds(&expected).iter().filter(|k| *k == kind).count() as f64;
    assert_eq!(
        s.get("hookrt_cascades_total{kind=\"turn.failed\"}"),
        Some(&count("turn.failed")),
        "{page}"
    );
    assert_eq!(
        s.get("hookrt_cascades_total{kind=\"session.failed\"}"),
        Some(&count("session.failed")),
        "{page}"
    );
    let (clean, rest) = server.terminate();
    assert!(clean, "{rest}");
    let written: Vec<Value> = rest
        .lines()
        .filter(|l| l.starts_with("{\"cascade\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(written, expected, "the same lines, in the same order");
}
