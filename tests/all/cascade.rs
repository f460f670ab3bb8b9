//! The failure cascade: a critical hook's final failure fails its turn exactly
//! once; a failure on turn.failed fails the session exactly once; nothing
//! cascades from session.failed; optional hooks never cascade.

use std::path::Path;

use hookrt::Delivery;

use crate::common::{TempAgent, transcript};
use crate::journal::{fail_on, run_all, start};

/// Kinds and ids of the events the witness saw, in order.
fn witnessed(seen: &[Delivery]) -> Vec<(String, String)> {
    seen.iter()
        .filter(|d| d.hook == "witness")
        .map(|d| (d.kind.clone(), d.event_id.clone()))
        .collect()
}

fn count(seen: &[Delivery], kind: &str) -> usize {
    witnessed(seen).iter().filter(|(k, _)| k == kind).count()
}

fn agent(critical_fails_on: &[&str], critical: bool) -> TempAgent {
    TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .file("hooks/gate.rs", &fail_on(critical_fails_on))
        .config(&format!("[hooks.gate]\ncritical = {critical}\n"))
}

fn run(agent: &TempAgent, journal: Option<&Path>) -> (Vec<Delivery>, hookrt::Stats) {
    let (service, seen) = start(agent.path(), journal);
    let stats = run_all(service, &transcript());
    let seen = seen.lock().unwrap().clone();
    (seen, stats)
}

#[test]
fn a_failing_critical_hook_fails_each_of_its_turns_exactly_once() {
    // action.result happens several times in each of the transcript's two turns.
    let agent = agent(&["action.result"], true);
    for journal in [None, Some(agent.path().join("journal.db"))] {
        let (seen, stats) = run(&agent, journal.as_deref());
        let failed: Vec<&Delivery> = seen
            .iter()
            .filter(|d| d.hook == "witness" && d.kind == "turn.failed")
            .collect();
        let turns: Vec<String> = failed.iter().map(|d| d.event_id.clone()).collect();
        assert_eq!(
            turns.len(),
            2,
            "one turn.failed per turn with a failure: {turns:?}"
        );
        assert_ne!(turns[0], turns[1]);
        assert_eq!(
            count(&seen, "session.failed"),
            0,
            "turn.failed was handled fine: no escalation"
        );
        assert_eq!(stats.cascades, 2);
        assert_eq!(
            stats.critical_failures as usize,
            seen.iter()
                .filter(|d| d.hook == "gate" && d.kind == "action.result")
                .count()
        );
    }
}

#[test]
fn the_cascade_event_is_dispatched_right_after_the_failing_event() {
    let agent = agent(&["action.result"], true);
    let (seen, _) = run(&agent, None);
    let first_failure = seen
        .iter()
        .find(|d| d.hook == "gate" && d.outcome != hookrt::Outcome::Ok)
        .unwrap();
    let idx = seen.iter().position(|d| d.kind == "turn.failed").unwrap();
    // Right after the failing event's deliveries, before the next agent event.
    assert_eq!(seen[idx - 1].event_id, first_failure.event_id);
    assert_eq!(seen[idx].hook, "gate", "gate is registered before witness");
    assert_eq!(seen[idx + 1].hook, "witness");
}

#[test]
fn a_critical_failure_on_turn_failed_fails_the_session_once_and_stops() {
    let agent = agent(&["action.result", "turn.failed", "session.failed"], true);
    for journal in [None, Some(agent.path().join("journal.db"))] {
        let (seen, stats) = run(&agent, journal.as_deref());
        assert_eq!(count(&seen, "turn.failed"), 2);
        assert_eq!(
            count(&seen, "session.failed"),
            1,
            "exactly one session.failed"
        );
        assert_eq!(stats.cascades, 3);
        // gate also fails on session.failed: recorded, never cascaded again.
        let on_session_failed = seen
            .iter()
            .filter(|d| d.hook == "gate" && d.kind == "session.failed")
            .count();
        assert_eq!(on_session_failed, 1);
    }
}

#[test]
fn a_critical_failure_outside_a_turn_fails_the_session() {
    let agent = agent(&["session.started"], true);
    let (seen, stats) = run(&agent, None);
    assert_eq!(
        (count(&seen, "turn.failed"), count(&seen, "session.failed")),
        (0, 1)
    );
    assert_eq!(stats.cascades, 1);
}

#[test]
fn an_optional_hooks_failure_never_cascades() {
    let agent = agent(&["action.result", "turn.failed"], false);
    let (seen, stats) = run(&agent, Some(&agent.path().join("journal.db")));
    assert_eq!(
        (count(&seen, "turn.failed"), count(&seen, "session.failed")),
        (0, 0)
    );
    assert_eq!(stats.cascades, 0);
    assert!(stats.optional_failures > 0);
}

#[test]
fn the_cascade_happens_once_even_when_the_run_is_repeated_on_the_same_journal() {
    let agent = agent(&["action.result"], true);
    let db = agent.path().join("journal.db");
    let (_, first) = run(&agent, Some(&db));
    assert_eq!(first.cascades, 2);
    // The agent server retries its whole stream: every event is a duplicate,
    // and no second turn.failed is emitted.
    let (seen, again) = run(&agent, Some(&db));
    assert_eq!((again.events, again.cascades), (0, 0));
    assert!(seen.is_empty());
}

#[test]
fn the_cascade_event_names_hook_event_and_outcome_and_has_a_stable_id() {
    use hookrt::delivery::{Failure, cascade_event};
    let events = transcript();
    let result = events.iter().find(|e| e.kind == "action.result").unwrap();
    let f = Failure {
        hook: "gate",
        event: result,
        outcome: hookrt::Outcome::Trap,
        message: "wasm trap: unreachable",
    };
    let turn_failed = cascade_event(&f).unwrap();
    assert_eq!(turn_failed.kind, "turn.failed");
    assert_eq!(turn_failed.coordinates.turn, result.coordinates.turn);
    assert_eq!(turn_failed.data["hook"], "gate");
    assert_eq!(turn_failed.data["event_id"], result.id.as_str());
    assert_eq!(turn_failed.data["outcome"], "trap");
    assert_eq!(turn_failed.data["message"], "wasm trap: unreachable");
    // The same turn gives the same id whichever event failed; the envelope is valid.
    let other = events
        .iter()
        .rev()
        .find(|e| e.coordinates.turn == result.coordinates.turn && e.id != result.id)
        .unwrap();
    assert_eq!(
        cascade_event(&Failure {
            event: other,
            ..f.clone()
        })
        .unwrap()
        .id,
        turn_failed.id
    );
    let mut check = turn_failed.clone();
    check.validate().unwrap();
    // turn.failed escalates to session.failed; session.failed stops.
    let session_failed = cascade_event(&Failure {
        event: &turn_failed,
        ..f.clone()
    })
    .unwrap();
    assert_eq!(
        (
            session_failed.kind.as_str(),
            session_failed.coordinates.turn.as_deref()
        ),
        ("session.failed", None)
    );
    assert!(
        cascade_event(&Failure {
            event: &session_failed,
            ..f
        })
        .is_none()
    );
}

#[test]
fn the_agent_is_told_of_each_cascade_before_it_is_delivered() {
    use std::sync::{Arc, Mutex};
    // What the observer hears, in order: cascades by kind, deliveries by kind.
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = heard.clone();
    let observer = Box::new(move |o: hookrt::Observation<'_>| {
        let line = match o {
            hookrt::Observation::Cascaded(e) => {
                format!(
                    "cascade {} {}",
                    e.kind,
                    e.coordinates.turn.as_deref().unwrap_or("-")
                )
            }
            hookrt::Observation::Delivery(d) if d.hook == "witness" => {
                format!("delivery {}", d.kind)
            }
            _ => return,
        };
        sink.lock().unwrap().push(line);
    });
    let agent = crate::common::TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .file(
            "hooks/gate.rs",
            &crate::journal::fail_on(&["action.result"]),
        )
        .config("[hooks.gate]\ncritical = true\n");
    let service = hookrt::HookService::start_blocking(
        crate::common::load(agent.path()),
        None,
        observer,
        hookrt::ServiceOptions::default(),
    )
    .unwrap();
    let events = crate::common::transcript();
    for e in &events {
        service.submit(e.clone()).wait().unwrap();
    }
    service.flush_blocking();
    let stats = service.shutdown_blocking(std::time::Duration::from_secs(30));
    let heard = heard.lock().unwrap().clone();
    let cascades: Vec<&String> = heard.iter().filter(|l| l.starts_with("cascade")).collect();
    assert_eq!(
        cascades,
        ["cascade turn.failed turn_1", "cascade turn.failed turn_2"]
    );
    assert_eq!(stats.cascades, 2);
    // Told as the gate's delivery settles: the witness still gets the failing
    // action.result (its `*` handler runs after the gate's), then turn.failed.
    for (i, _) in heard
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("cascade"))
    {
        assert_eq!(
            heard[i + 1..i + 3],
            ["delivery action.result", "delivery turn.failed"],
            "told before turn.failed is delivered"
        );
    }
}
