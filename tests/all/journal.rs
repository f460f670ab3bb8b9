//! The journal: persisted receipts, deduplication, recovery, retries, dead
//! letters and shutdown, through the embedding API on real components.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookrt::journal::{Journal, Plan};
use hookrt::{Delivery, Durability, Envelope, Outcome};
use hookrt::{HookService, Observation, ServiceOptions, Stats};

use crate::common::{TempAgent, load, transcript};

/// Starts a service on `agent` recording every delivery.
pub(crate) fn start(
    agent: &Path,
    journal: Option<&Path>,
) -> (HookService, Arc<Mutex<Vec<Delivery>>>) {
    start_with(agent, journal, ServiceOptions::default())
}

/// [`start`] with `options` (e.g. more workers).
pub(crate) fn start_with(
    agent: &Path,
    journal: Option<&Path>,
    options: ServiceOptions,
) -> (HookService, Arc<Mutex<Vec<Delivery>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let observer = Box::new(move |r: Observation<'_>| {
        if let Observation::Delivery(d) = r {
            sink.lock().unwrap().push(d.clone());
        }
    });
    let service = HookService::start_blocking(load(agent), journal, observer, options).unwrap();
    (service, seen)
}

/// Emits `events`, waits until all are delivered, stops.
pub(crate) fn run_all(service: HookService, events: &[Envelope]) -> Stats {
    let pending: Vec<_> = events.iter().map(|e| service.submit(e.clone())).collect();
    for p in pending {
        p.wait().unwrap();
    }
    service.flush_blocking();
    service.shutdown_blocking(Duration::from_secs(30))
}

fn witness() -> TempAgent {
    TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs")
}

#[test]
fn a_persisted_receipt_means_the_event_is_already_committed() {
    let agent = witness();
    let db = agent.path().join("journal.db");
    let (service, _) = start(agent.path(), Some(&db));
    let event = transcript()[0].clone();
    let receipt = service.submit(event.clone()).wait().unwrap();
    assert_eq!(receipt.durability, Durability::Persisted);
    // Another connection sees the row as soon as the receipt exists.
    assert_eq!(Journal::open(&db).unwrap().status().unwrap().events, 1);
    service.shutdown_blocking(Duration::from_secs(10));
}

#[test]
fn without_a_journal_receipts_say_accepted() {
    let agent = witness();
    let (service, seen) = start(agent.path(), None);
    let receipt = service.submit(transcript()[0].clone()).wait().unwrap();
    assert_eq!(
        (receipt.durability, receipt.seq),
        (Durability::Accepted, None)
    );
    run_all(service, &[]);
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn a_resubmitted_event_id_is_stored_once_and_gets_the_original_receipt() {
    let agent = witness();
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    let event = transcript()[0].clone();
    let first = service.submit(event.clone()).wait().unwrap();
    let again = service.submit(event.clone()).wait().unwrap();
    assert!(!first.duplicate && again.duplicate);
    assert_eq!(first.seq, again.seq);
    let stats = run_all(service, &[]);
    assert_eq!((stats.events, stats.duplicates), (1, 1));
    assert_eq!(seen.lock().unwrap().len(), 1, "delivered once");

    // Across a restart too.
    let (service, seen) = start(agent.path(), Some(&db));
    let later = service.submit(event).wait().unwrap();
    assert!(later.duplicate);
    assert_eq!(later.seq, first.seq);
    run_all(service, &[]);
    assert!(seen.lock().unwrap().is_empty());
    let status = Journal::open(&db).unwrap().status().unwrap();
    assert_eq!((status.events, status.done, status.pending), (1, 1, 0));
}

#[test]
fn unacked_deliveries_run_again_with_the_next_attempt_in_their_original_order() {
    let agent = witness().hook("agent/hooks/audit.rs", "audit.rs");
    let db = agent.path().join("journal.db");
    // As if hookrt crashed right after the commit: events stored, nothing acked.
    let events: Vec<Envelope> = transcript().into_iter().take(5).collect();
    let plan: Plan = vec![("audit".into(), "*".into()), ("witness".into(), "*".into())];
    let batch: Vec<_> = events.iter().map(|e| (e, &plan, "agent")).collect();
    Journal::open(&db).unwrap().store_unacked(&batch).unwrap();

    let (service, seen) = start(agent.path(), Some(&db));
    let stats = run_all(service, &[]);
    let got: Vec<(String, String, u32)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| (d.event_id.clone(), d.hook.clone(), d.attempt))
        .collect();
    let want: Vec<(String, String, u32)> = events
        .iter()
        .flat_map(|e| {
            [
                (e.id.clone(), "audit".to_string(), 2),
                (e.id.clone(), "witness".to_string(), 2),
            ]
        })
        .collect();
    assert_eq!(
        got, want,
        "same event ids, original per-hook order, attempt 2"
    );
    assert_eq!(stats.repeats, 10);
    let status = Journal::open(&db).unwrap().status().unwrap();
    assert_eq!((status.done, status.pending, status.repeated), (10, 0, 10));
}

const FAIL_ON: &str = r#"
use hookrt_sdk::prelude::*;
#[derive(Default)]
pub struct FailOn;
impl FailOn {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        if KINDS_THAT_FAIL.contains(&event.kind()) {
            return Err(HookError::new(format!("refusing {}", event.kind())));
        }
        Ok(())
    }
}
const KINDS_THAT_FAIL: &[&str] = &[LIST];
hookrt_sdk::define_hook!(FailOn { "*" => any });
"#;

/// A hook that returns an error on the given kinds and is ok on the rest.
pub(crate) fn fail_on(kinds: &[&str]) -> String {
    FAIL_ON.replace(
        "LIST",
        &kinds
            .iter()
            .map(|k| format!("{k:?}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[test]
fn dead_letter_after_the_configured_attempts() {
    let agent = witness()
        .file("hooks/flaky_tool.rs", &fail_on(&["action.result"]))
        .config("[hooks.flaky_tool]\nmax_attempts = 3\nbackoff_ms = 1\n");
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    let result = transcript()
        .into_iter()
        .find(|e| e.kind == "action.result")
        .unwrap();
    run_all(service, std::slice::from_ref(&result));
    let attempts: Vec<(u32, Outcome)> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|d| d.hook == "flaky_tool")
        .map(|d| (d.attempt, d.outcome))
        .collect();
    assert_eq!(
        attempts,
        [
            (1, Outcome::Error),
            (2, Outcome::Error),
            (3, Outcome::Error)
        ]
    );
    let dead = Journal::open(&db).unwrap().dead_letters().unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (
            dead[0].hook.as_str(),
            dead[0].event_id.as_str(),
            dead[0].attempts
        ),
        ("flaky_tool", result.id.as_str(), 3)
    );
    assert_eq!(
        (dead[0].outcome.as_str(), dead[0].message.as_str()),
        ("error", "refusing action.result")
    );

    // Re-driven, it runs again (attempt 4) on the next start.
    assert_eq!(
        Journal::open(&db)
            .unwrap()
            .redrive(Some("flaky_tool"), None)
            .unwrap(),
        1
    );
    let (service, seen) = start(agent.path(), Some(&db));
    run_all(service, &[]);
    let again: Vec<u32> = seen.lock().unwrap().iter().map(|d| d.attempt).collect();
    assert_eq!(again, [4]);
}

#[test]
fn shutdown_cancels_a_running_delivery_and_leaves_it_for_the_next_start() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "slow.rs")
        .config("[hooks.slow]\nfuel = 10_000_000_000\ndeadline_ms = 600_000\n");
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    service.submit(transcript()[0].clone()).wait().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let stats = service.shutdown_blocking(Duration::from_millis(20));
    assert_eq!(stats.left_unacked, 1);
    assert!(
        seen.lock().unwrap().is_empty(),
        "a cancelled delivery is not an outcome of the hook"
    );
    let pending = Journal::open(&db).unwrap().pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].2.hook.as_str(), pending[0].2.attempts),
        ("slow", 1)
    );
}

#[test]
fn receipts_do_not_wait_for_a_slow_hook() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "slow.rs")
        .config("[hooks.slow]\nfuel = 10_000_000_000\ndeadline_ms = 600_000\n");
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    let events = transcript();
    let first = service.submit(events[0].clone()).wait().unwrap();
    // The first delivery now spins for as long as its budget allows; the next
    // receipts are answered by the writer all the same.
    let later: Vec<_> = events[1..5]
        .iter()
        .map(|e| service.submit(e.clone()).wait().unwrap())
        .collect();
    assert!(
        seen.lock().unwrap().is_empty(),
        "the slow delivery is still running"
    );
    assert_eq!(first.durability, Durability::Persisted);
    assert!(
        later
            .iter()
            .all(|r| r.durability == Durability::Persisted && !r.duplicate)
    );
    let stats = service.shutdown_blocking(Duration::from_millis(10));
    assert_eq!((stats.events, stats.left_unacked), (5, 5));
}

#[test]
fn commits_and_acks_interleave_without_lock_errors() {
    // The writer commits while the dispatcher acks, on two connections.
    let agent = witness();
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    let base = transcript();
    let events: Vec<Envelope> = (0..3000)
        .map(|i| {
            let mut e = base[i % base.len()].clone();
            e.id = format!("bulk-{i}");
            e.coordinates.sequence = i as u64;

            e
        })
        .collect();
    let stats = run_all(service, &events);
    assert_eq!((stats.events, stats.deliveries), (3000, 3000));
    assert_eq!(seen.lock().unwrap().len(), 3000);
    let status = Journal::open(&db).unwrap().status().unwrap();
    assert_eq!((status.done, status.pending), (3000, 0));
}

#[test]
fn the_journal_and_its_wal_files_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let agent = witness();
    let db = agent.path().join("journal.db");
    let (service, _) = start(agent.path(), Some(&db));
    service.submit(transcript()[0].clone()).wait().unwrap();
    // While the service runs, the WAL and shared-memory files exist too.
    let mut seen = Vec::new();
    for name in ["journal.db", "journal.db-wal", "journal.db-shm"] {
        let path = agent.path().join(name);
        if let Ok(meta) = std::fs::metadata(&path) {
            seen.push((name, meta.permissions().mode() & 0o777));
        }
    }
    service.shutdown_blocking(Duration::from_secs(10));
    assert_eq!(
        seen,
        [
            ("journal.db", 0o600),
            ("journal.db-wal", 0o600),
            ("journal.db-shm", 0o600)
        ]
    );
}

#[test]
fn six_connections_opening_one_new_journal_at_once_all_succeed() {
    // `hookrt journal status` may open a journal while `hookrt run` creates
    // it: each open sets the schema up (and adds columns newer than schema
    // 1), which must happen once, not once per opener.
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(format!("j{round}.db"));
        let start = std::sync::Barrier::new(6);
        let opened: Vec<Result<(), String>> = std::thread::scope(|s| {
            let opens: Vec<_> = (0..6)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        Journal::open(&db).map(drop).map_err(|e| e.to_string())
                    })
                })
                .collect();
            opens.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(opened, vec![Ok(()); 6], "round {round}");
        let status = Journal::open(&db).unwrap().status().unwrap();
        assert_eq!((status.events, status.pending), (0, 0));
    }
}

/// The example transcript with a hook that dead-letters every
/// `action.result` at its first failure, through a service that keeps
/// every event; returns the agent, the journal and the events.
fn journal_with_dead_letters() -> (TempAgent, std::path::PathBuf, Vec<Envelope>) {
    let agent = witness()
        .file("hooks/flaky_tool.rs", &fail_on(&["action.result"]))
        .config("[hooks.flaky_tool]\nmax_attempts = 1\n");
    let db = agent.path().join("journal.db");
    let keep = ServiceOptions {
        retention: None,
        ..ServiceOptions::default()
    };
    let (service, _) = start_with(agent.path(), Some(&db), keep);
    let events = transcript();
    run_all(service, &events);
    (agent, db, events)
}

#[test]
fn pruning_removes_finished_events_and_keeps_dead_letters_and_the_newest() {
    let (agent, db, events) = journal_with_dead_letters();
    let results: Vec<&Envelope> = events
        .iter()
        .filter(|e| e.kind == "action.result")
        .collect();
    let mut journal = Journal::open(&db).unwrap();
    assert_eq!(journal.status().unwrap().events as usize, events.len());
    // Nothing is older than a day.
    assert_eq!(journal.prune(Duration::from_secs(86_400), 100).unwrap(), 0);
    // Age 0: every finished event but the newest, at most `limit` at a time.
    assert_eq!(journal.prune(Duration::ZERO, 5).unwrap(), 5);
    let rest = events.len() - 5 - results.len() - 1;
    assert_eq!(journal.prune(Duration::ZERO, 10_000).unwrap(), rest);
    assert_eq!(journal.prune(Duration::ZERO, 10_000).unwrap(), 0);
    let status = journal.status().unwrap();
    assert_eq!(status.events as usize, results.len() + 1);
    assert_eq!((status.pending, status.dead), (0, results.len() as i64));
    let dead: Vec<String> = journal
        .dead_letters()
        .unwrap()
        .into_iter()
        .map(|d| d.event_id)
        .collect();
    let want: Vec<String> = results.iter().map(|e| e.id.clone()).collect();
    assert_eq!(dead, want, "every dead letter is kept");
    // A kept dead letter can still be re-driven: it runs again with attempt 2.
    assert_eq!(journal.redrive(None, None).unwrap(), results.len());
    drop(journal);
    let (service, seen) = start(agent.path(), Some(&db));
    run_all(service, &[]);
    let again: Vec<(String, u32)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| (d.event_id.clone(), d.attempt))
        .collect();
    let want: Vec<(String, u32)> = results.iter().map(|e| (e.id.clone(), 2)).collect();
    assert_eq!(again, want);
}

#[test]
fn a_pruned_event_id_sent_again_is_delivered_again() {
    let (agent, db, events) = journal_with_dead_letters();
    Journal::open(&db)
        .unwrap()
        .prune(Duration::ZERO, 10_000)
        .unwrap();
    let (service, seen) = start(agent.path(), Some(&db));
    let first = events[0].clone();
    let receipt = service.submit(first.clone()).wait().unwrap();
    assert!(!receipt.duplicate, "the journal no longer knows the id");
    run_all(service, &[]);
    let ids: Vec<(String, String)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| (d.hook.clone(), d.event_id.clone()))
        .collect();
    let again = |hook: &str| (hook.to_owned(), first.id.clone());
    assert_eq!(ids, [again("flaky_tool"), again("witness")]);
}

#[test]
fn a_running_service_prunes_finished_events_past_its_retention() {
    let agent = witness();
    let db = agent.path().join("journal.db");
    let options = ServiceOptions {
        retention: Some(Duration::ZERO),
        ..ServiceOptions::default()
    };
    let (service, _) = start_with(agent.path(), Some(&db), options);
    let events = transcript();
    let (first, second) = events.split_at(events.len() / 2);
    for e in first {
        service.submit(e.clone()).wait().unwrap();
    }
    service.flush_blocking();
    // Pruning runs at most once a second, after a commit: the next batch
    // past that second prunes every finished event before it.
    std::thread::sleep(Duration::from_millis(1100));
    let pending: Vec<_> = second.iter().map(|e| service.submit(e.clone())).collect();
    for p in pending {
        p.wait().unwrap();
    }
    service.flush_blocking();
    service.shutdown_blocking(Duration::from_secs(30));
    let journal = Journal::open(&db).unwrap();
    let left = journal.status().unwrap().events as usize;
    assert!(
        left <= second.len(),
        "{left} events left of {}: the first {} finished and were due",
        events.len(),
        first.len()
    );
    assert_eq!(journal.status().unwrap().pending, 0);
}

/// A hook whose first attempt at `session.started` fails, whose second
/// spins until shutdown interrupts it, and whose later ones succeed.
const SECOND_SPINS: &str = r#"
use hookrt_sdk::prelude::*;
#[derive(Default)]
pub struct SecondSpins;
impl SecondSpins {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        if event.kind() != "session.started" {
            return Ok(());
        }
        match event.attempt() {
            1 => Err(HookError::new("the first attempt fails".to_string())),
            2 => loop {
                std::hint::spin_loop();
            },
            _ => Ok(()),
        }
    }
}
hookrt_sdk::define_hook!(SecondSpins { "*" => any });
"#;

#[test]
fn an_attempt_begun_before_a_shutdown_is_counted_and_the_next_start_runs_the_one_after() {
    // Epoch-only metering and a long deadline: only shutdown stops the spin.
    let agent = TempAgent::new().file("hooks/second_spins.rs", SECOND_SPINS).config(
        "[hooks.second_spins]\nmax_attempts = 5\nbackoff_ms = 1\nmetering = \"epoch\"\ndeadline_ms = 60_000\n",
    );
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    service.submit(transcript()[0].clone()).wait().unwrap();
    let begun = std::time::Instant::now();
    while seen.lock().unwrap().is_empty() {
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "no first attempt"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The retry (1 ms later) spins now; shutdown interrupts it, unacked.
    std::thread::sleep(Duration::from_millis(300));
    service.shutdown_blocking(Duration::from_millis(500));
    let attempts: Vec<u32> = Journal::open(&db)
        .unwrap()
        .pending()
        .unwrap()
        .iter()
        .map(|(_, _, d)| d.attempts)
        .collect();
    assert_eq!(
        attempts,
        [2],
        "the second attempt, begun, is in the journal"
    );
    // The next start goes on with the third: no hook is told an attempt twice.
    let (service, seen) = start(agent.path(), Some(&db));
    run_all(service, &[]);
    let ran: Vec<(u32, Outcome)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| (d.attempt, d.outcome))
        .collect();
    assert_eq!(ran, [(3, Outcome::Ok)]);
}
