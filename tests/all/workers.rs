//! Workers: with more than one, observe events run side by side across hooks,
//! yet every hook sees each of its events exactly once and in emission order;
//! the cascade and decisions come out as with one worker.

use std::collections::BTreeMap;

use hookrt::Approval;
use hookrt::EventClass;
use hookrt::Resolution;
use hookrt::ServiceOptions;
use hookrt::journal::Journal;
use hookrt::{Delivery, Envelope, Outcome};

use crate::common::{TempAgent, transcript};
use crate::journal::{fail_on, run_all, start_with};

fn two() -> ServiceOptions {
    ServiceOptions {
        threads: 2,
        ..ServiceOptions::default()
    }
}

/// The transcript `rounds` times over, with ids unique to each round.
fn many(rounds: usize) -> Vec<Envelope> {
    let base = transcript();
    (0..rounds)
        .flat_map(|r| {
            base.iter().map(move |e| {
                let mut e = e.clone();
                e.id = format!("r{r}-{}", e.id);
                e.coordinates.session = format!("{}-{r}", e.coordinates.session);

                e
            })
        })
        .collect()
}

/// Each hook's event ids, in the order it saw them.
fn per_hook(seen: &[Delivery]) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in seen {
        m.entry(d.hook.clone())
            .or_default()
            .push(d.event_id.clone());
    }
    m
}

fn observers() -> TempAgent {
    TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .hook("agent/hooks/audit.rs", "audit.rs")
        .hook(
            "agent/hooks/observability/metrics.rs",
            "observability/metrics.rs",
        )
        .config("[hooks.\"observability/metrics\"]\ninstance = \"reuse\"\ngrants = [\"log\", \"metrics\"]\n")
}

/// Observe events only: long runs, which go to the workers.
fn observing(rounds: usize) -> Vec<Envelope> {
    many(rounds)
        .into_iter()
        .filter(|e| hookrt::class_of(&e.kind) == EventClass::Observe)
        .collect()
}

#[test]
fn two_workers_deliver_each_event_once_to_each_hook_in_emission_order() {
    let agent = observers();
    let events = observing(12);
    let db = agent.path().join("journal.db");
    let (service, seen) = start_with(agent.path(), Some(&db), two());
    let stats = run_all(service, &events);
    let seen = seen.lock().unwrap().clone();
    let (one, one_seen) = start_with(agent.path(), None, ServiceOptions::default());
    run_all(one, &events);
    let one_seen = one_seen.lock().unwrap().clone();

    let witness: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
    let two_workers = per_hook(&seen);
    assert_eq!(two_workers["witness"], witness, "witness subscribes to `*`");
    assert_eq!(
        two_workers,
        per_hook(&one_seen),
        "same deliveries per hook, same order"
    );
    assert_eq!(stats.deliveries as usize, one_seen.len());
    assert!(seen.iter().all(|d| d.outcome == Outcome::Ok));
    let status = Journal::open(&db).unwrap().status().unwrap();
    assert_eq!((status.pending, status.done), (0, one_seen.len() as i64));
}

#[test]
fn with_two_workers_a_second_thread_delivers_part_of_a_long_run() {
    let agent = observers();
    let threads = std::sync::Arc::new(std::sync::Mutex::new(BTreeMap::<String, usize>::new()));
    let sink = threads.clone();
    let observer = Box::new(move |r: hookrt::Observation<'_>| {
        if let hookrt::Observation::Delivery(_) = r {
            let name = std::thread::current().name().unwrap_or("?").to_owned();
            *sink.lock().unwrap().entry(name).or_default() += 1;
        }
    });
    let service = hookrt::HookService::start_blocking(
        crate::common::load(agent.path()),
        None,
        observer,
        two(),
    )
    .unwrap();
    let events = observing(12);
    run_all(service, &events);
    let threads = threads.lock().unwrap().clone();
    assert_eq!(threads.values().sum::<usize>(), events.len() * 3);
    assert!(
        threads.get("hookrt-thread-1").is_some_and(|&n| n > 0),
        "the second delivery thread delivered nothing: {threads:?}"
    );
}

#[test]
fn with_two_workers_a_failing_critical_hook_still_fails_each_turn_exactly_once() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .file("hooks/gate.rs", &fail_on(&["action.result"]))
        .config("[hooks.gate]\ncritical = true\n");
    let (service, seen) = start_with(agent.path(), None, two());
    let stats = run_all(service, &transcript());
    let seen = seen.lock().unwrap().clone();
    let failed: Vec<&Delivery> = seen
        .iter()
        .filter(|d| d.hook == "witness" && d.kind == "turn.failed")
        .collect();
    assert_eq!(failed.len(), 2, "one turn.failed per turn with a failure");
    assert_ne!(failed[0].event_id, failed[1].event_id);
    assert_eq!(stats.cascades, 2);
    // The gate fails each action.result once (no retries configured).
    let gate_failures = seen
        .iter()
        .filter(|d| d.hook == "gate" && d.outcome != Outcome::Ok)
        .count();
    let results = transcript()
        .iter()
        .filter(|e| e.kind == "action.result")
        .count();
    assert_eq!(gate_failures, results);
}

#[test]
fn with_two_workers_a_decision_between_observe_events_keeps_each_hooks_order() {
    let agent = observers().hook("testing/hooks/deny_all.rs", "deny_all.rs");
    let (service, seen) = start_with(agent.path(), None, two());
    let events = many(3);
    let requested = events
        .iter()
        .position(|e| e.kind == "actions.requested")
        .unwrap();
    let before: Vec<_> = events[..requested]
        .iter()
        .map(|e| service.submit(e.clone()))
        .collect();
    let resolved = service.resolve_blocking(events[requested].clone()).unwrap();
    for p in before {
        p.wait().unwrap();
    }
    match resolved.resolution {
        Some(Resolution::ToolApproval(t)) => {
            assert!(!t.calls.is_empty());
            assert!(
                t.calls
                    .iter()
                    .all(|c| c.verdict == Approval::Deny("deny_all says no".into()))
            );
        }
        other => panic!("expected a tool approval, got {other:?}"),
    }
    run_all(service, &events[requested + 1..]);
    let seen = seen.lock().unwrap().clone();
    let witness: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
    assert_eq!(per_hook(&seen)["witness"], witness);
    // Each hook got the decision after its deliveries of the events before
    // it and before its deliveries of the events after it; the decision's
    // own deliveries came in plan order (its subscriber, then `*` hooks in
    // registration order), each after the one before it had answered.
    let decision = &events[requested].id;
    for (hook, ids) in per_hook(&seen) {
        if let Some(at) = ids.iter().position(|id| id == decision) {
            let emitted = |id: &String| events.iter().position(|e| &e.id == id).unwrap();
            assert!(ids[..at].iter().all(|id| emitted(id) < requested), "{hook}");
            assert!(
                ids[at + 1..].iter().all(|id| emitted(id) > requested),
                "{hook}"
            );
        }
    }
    let order: Vec<&str> = seen
        .iter()
        .filter(|d| &d.event_id == decision)
        .map(|d| d.hook.as_str())
        .collect();
    assert_eq!(
        order,
        ["deny_all", "audit", "observability/metrics", "witness"]
    );
}

#[test]
fn with_two_workers_the_transcript_decides_and_edits_as_with_one() {
    // The example agent: tool approval, file-edit ownership, context edits
    // and observers. With two workers its decision and edit events run in
    // lanes beside observe events; every hook must see the same events in
    // the same order, and every event must decide the same, as with one.
    let run = |options: ServiceOptions| {
        let agent = crate::common::example("agent");
        let dir = tempfile::tempdir().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Delivery>::new()));
        let decided = std::sync::Arc::new(std::sync::Mutex::new(BTreeMap::new()));
        let (sink, decisions) = (seen.clone(), decided.clone());
        let observer = Box::new(move |o: hookrt::Observation<'_>| match o {
            hookrt::Observation::Delivery(d) => sink.lock().unwrap().push(d.clone()),
            hookrt::Observation::Resolved {
                event_id,
                resolution,
                ..
            } => {
                decisions.lock().unwrap().insert(
                    event_id.to_owned(),
                    serde_json::to_value(resolution).unwrap(),
                );
            }
            _ => {}
        });
        let db = dir.path().join("journal.db");
        let service = hookrt::HookService::start_blocking(
            crate::common::load(&agent),
            Some(&db),
            observer,
            options,
        )
        .unwrap();
        let stats = run_all(service, &many(6));
        let status = Journal::open(&db).unwrap().status().unwrap();
        let seen = seen.lock().unwrap().clone();
        let decided = decided.lock().unwrap().clone();
        (per_hook(&seen), decided, stats.deliveries, status.pending)
    };
    let (one_order, one_decided, one_deliveries, _) = run(ServiceOptions::default());
    let (two_order, two_decided, two_deliveries, pending) = run(two());
    assert!(
        one_decided.len() >= 6 * 5,
        "decisions and edits: {}",
        one_decided.len()
    );
    assert_eq!(two_order, one_order, "each hook's events, in order");
    assert_eq!(two_decided, one_decided, "what each event decided");
    assert_eq!(two_deliveries, one_deliveries);
    assert_eq!(pending, 0, "every delivery acked");
}

#[test]
fn with_two_workers_a_cascade_comes_right_after_the_failing_event() {
    // Long runs of observe events go to the workers; a critical gate fails
    // every message.completed. Each hook must see turn.failed right after the
    // turn's first failing event, before any later event of the run.
    let agent = observers()
        .file("hooks/gate.rs", &fail_on(&["message.completed"]))
        .config("[hooks.gate]\ncritical = true\n[hooks.\"observability/metrics\"]\ninstance = \"reuse\"\ngrants = [\"log\", \"metrics\"]\n");
    let events = observing(4);
    let (service, seen) = start_with(agent.path(), None, two());
    let stats = run_all(service, &events);
    let seen = seen.lock().unwrap().clone();
    let by_id: BTreeMap<&str, &Envelope> = events.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut first_failing: BTreeMap<(String, Option<String>), &str> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "message.completed") {
        first_failing
            .entry((e.coordinates.session.clone(), e.coordinates.turn.clone()))
            .or_insert(e.id.as_str());
    }
    assert!(
        stats.cascades >= 4,
        "a cascade per round at least: {}",
        stats.cascades
    );
    for hook in ["witness", "audit"] {
        let mine: Vec<&Delivery> = seen.iter().filter(|d| d.hook == hook).collect();
        let cascades: Vec<usize> = (0..mine.len())
            .filter(|&i| mine[i].kind == "turn.failed")
            .collect();
        assert_eq!(
            cascades.len() as u64,
            stats.cascades,
            "{hook} sees every cascade"
        );
        for i in cascades {
            let before = by_id[mine[i - 1].event_id.as_str()];
            let place = (
                before.coordinates.session.clone(),
                before.coordinates.turn.clone(),
            );
            assert_eq!(
                Some(&before.id.as_str()),
                first_failing.get(&place),
                "{hook}: turn.failed comes right after its turn's first failing event"
            );
        }
    }
}
