//! Promises the docs make that no other file tested: a failed reused
//! instance is replaced whatever ended it, two critical hooks failing in one
//! turn fail it once, and shutdown does not wait out a retry's backoff.

use std::time::{Duration, Instant};

use hookrt::Outcome;
use hookrt::journal::Journal;

use crate::common::{TempAgent, last_field, load, transcript};
use crate::journal::{fail_on, start};

#[test]
fn a_reused_instance_is_replaced_after_a_timeout_out_of_fuel_or_out_of_memory() {
    for (attack, outcome) in [
        ("sleep", Outcome::Timeout),
        ("spin", Outcome::OutOfFuel),
        ("huge_alloc", Outcome::OutOfMemory),
        ("invalid_utf8_error", Outcome::Trap),
    ] {
        let agent = TempAgent::new()
            .hook("hostile/attacks/attack.rs", "attack.rs")
            .config(&format!(
                "[hooks.attack]\ngrants = [\"log\", \"state\", \"metrics\"]\ninstance = \"reuse\"\ndeadline_ms = 200\nfuel = 20_000_000\nmemory_mib = 16\n\
                 config = {{ attack = \"{attack}\", every = 2 }}\n"
            ));
        let rt = load(agent.path());
        let mut seen = Vec::new();
        for e in &transcript()[..6] {
            let d = rt.dispatch(e).unwrap().deliveries.remove(0);
            seen.push((last_field(&d, "n_in_instance").unwrap(), d.outcome));
        }
        let n = |s: &str| s.to_owned();
        assert_eq!(
            seen,
            [
                (n("1"), Outcome::Ok),
                (n("2"), outcome),
                (n("1"), Outcome::Ok), // a fresh instance: the count restarts
                (n("2"), outcome),
                (n("1"), Outcome::Ok),
                (n("2"), outcome),
            ],
            "{attack}"
        );
    }
}

#[test]
fn two_critical_hooks_failing_in_one_turn_fail_it_once() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .file("hooks/gate_a.rs", &fail_on(&["action.result"]))
        .file(
            "hooks/gate_b.rs",
            &fail_on(&["action.result", "step.completed"]),
        )
        .config("[hooks.gate_a]\ncritical = true\n[hooks.gate_b]\ncritical = true\n");
    let (service, seen) = start(agent.path(), None);
    let stats = crate::journal::run_all(service, &transcript());
    let seen = seen.lock().unwrap();
    let failed: Vec<_> = seen
        .iter()
        .filter(|d| d.hook == "witness" && d.kind == "turn.failed")
        .map(|d| d.event_id.clone())
        .collect();
    assert_eq!(
        failed.len(),
        2,
        "one turn.failed per turn, not per hook: {failed:?}"
    );
    assert_ne!(failed[0], failed[1]);
    assert_eq!(stats.cascades, 2);
    assert!(seen.iter().all(|d| d.kind != "session.failed"));
}

#[test]
fn shutdown_during_a_retry_backoff_returns_at_its_deadline_and_leaves_the_retry_pending() {
    let agent = TempAgent::new()
        .file("hooks/flaky.rs", &fail_on(&["session.started"]))
        .config("[hooks.flaky]\nmax_attempts = 3\nbackoff_ms = 60_000\n");
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    service.submit(transcript()[0].clone()).wait().unwrap();
    let begun = Instant::now();
    while seen.lock().unwrap().is_empty() {
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "the first attempt never ran"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The first attempt failed; the retry now waits a minute.
    let stopping = Instant::now();
    service.shutdown_blocking(Duration::from_millis(100));
    assert!(
        stopping.elapsed() < Duration::from_secs(5),
        "shutdown waited {:?} for a backoff",
        stopping.elapsed()
    );
    assert_eq!(seen.lock().unwrap().len(), 1, "the retry did not run");
    let status = Journal::open(&db).unwrap().status().unwrap();
    assert_eq!((status.pending, status.done, status.dead), (1, 0, 0));
}
