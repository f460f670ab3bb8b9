//! Durable resolutions: with a journal, what a decision event decided is
//! stored with its last acks; a re-submitted event is answered with it, and a
//! decision interrupted by a crash or shutdown is finished with the answers
//! its hooks gave before.

use std::time::{Duration, Instant};

use hookrt::{Approval, Envelope, HookService, Resolution, ToolApproval};

use crate::common::{TempAgent, load, transcript};
use crate::journal::start;

fn requested() -> Envelope {
    transcript()
        .into_iter()
        .find(|e| e.kind == "actions.requested")
        .unwrap()
}

fn approval(r: Option<Resolution>) -> ToolApproval {
    match r {
        Some(Resolution::ToolApproval(t)) => t,
        other => panic!("expected a tool approval, got {other:?}"),
    }
}

#[test]
fn a_resubmitted_decision_is_answered_with_what_it_decided_across_restarts() {
    let agent = TempAgent::new().hook("testing/hooks/deny_all.rs", "deny_all.rs");
    let db = agent.path().join("journal.db");
    let (service, _) = start(agent.path(), Some(&db));
    let first = service.resolve_blocking(requested()).unwrap();
    assert!(!first.receipt.duplicate);
    let decided = approval(first.resolution.clone());
    assert!(matches!(decided.calls[0].verdict, Approval::Deny(_)));
    let again = service.resolve_blocking(requested()).unwrap();
    assert!(again.receipt.duplicate);
    assert_eq!(
        again.resolution, first.resolution,
        "the same answer, not none"
    );
    service.shutdown_blocking(Duration::from_secs(10));
    let (service, _) = start(agent.path(), Some(&db));
    let after = service.resolve_blocking(requested()).unwrap();
    assert!(after.receipt.duplicate);
    assert_eq!(after.resolution, first.resolution, "stored in the journal");
    service.shutdown_blocking(Duration::from_secs(10));
}

/// A decision hook that takes its time, then denies (or denies at once).
fn slow_denier(sleep_ms: u64) -> String {
    format!(
        r#"use hookrt_sdk::prelude::*;
#[derive(Default)]
pub struct Slow;
impl Slow {{
    fn requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {{
        let data: ActionsRequested = event.data()?;
        std::thread::sleep(std::time::Duration::from_millis({sleep_ms}));
        Ok(vec![Approval::deny("slow says no"); data.actions.len()])
    }}
}}
hookrt_sdk::define_hook!(Slow {{ "actions.requested" => requested }});
"#
    )
}

#[test]
fn answers_given_before_a_shutdown_count_in_the_resolution_after_restart() {
    let agent = TempAgent::new()
        .hook("testing/hooks/allow_all.rs", "a_allow.rs")
        .file("hooks/slow.rs", &slow_denier(60_000))
        .config("[defaults]\ndeadline_ms = 600000\n");
    let db = agent.path().join("journal.db");
    let (service, seen) = start(agent.path(), Some(&db));
    let pending = service.submit(requested());
    pending.wait().unwrap();
    // The allow hook answers first (registration order), then `slow` sleeps.
    let until = Instant::now() + Duration::from_secs(30);
    while !seen.lock().unwrap().iter().any(|d| d.hook == "a_allow") {
        assert!(Instant::now() < until, "the first hook answered");
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = service.shutdown_blocking(Duration::from_millis(50));
    assert_eq!(
        stats.left_unacked, 1,
        "slow's delivery is left for the next start"
    );
    // The next start: `slow` now answers at once.
    std::fs::write(agent.path().join("hooks/slow.rs"), slow_denier(0)).unwrap();
    let (service, seen) = start(agent.path(), Some(&db));
    let reply = service.resolve_blocking(requested()).unwrap();
    assert!(reply.receipt.duplicate);
    let decided = approval(reply.resolution);
    let call = &decided.calls[0];
    let votes: Vec<(&str, &Approval)> = call
        .answers
        .iter()
        .map(|v| (v.hook.as_str(), &v.answer))
        .collect();
    assert_eq!(
        votes,
        [
            ("a_allow", &Approval::Allow),
            ("slow", &Approval::Deny("slow says no".into()))
        ],
        "the answer given before the restart is part of the resolution"
    );
    assert_eq!(call.verdict, Approval::Deny("slow says no".into()));
    let redelivered: Vec<(String, u32)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| (d.hook.clone(), d.attempt))
        .collect();
    assert_eq!(
        redelivered,
        [("slow".to_owned(), 2)],
        "only the unacked delivery runs again"
    );
    service.shutdown_blocking(Duration::from_secs(10));
}

#[test]
fn without_a_journal_a_resubmitted_decision_has_no_stored_answer() {
    let agent = TempAgent::new().hook("testing/hooks/deny_all.rs", "deny_all.rs");
    let service = HookService::start_blocking(
        load(agent.path()),
        None,
        Box::new(|_| {}),
        hookrt::ServiceOptions::default(),
    )
    .unwrap();
    assert!(
        service
            .resolve_blocking(requested())
            .unwrap()
            .resolution
            .is_some()
    );
    let again = service.resolve_blocking(requested()).unwrap();
    assert!(again.receipt.duplicate);
    assert_eq!(again.resolution, None);
    service.shutdown_blocking(Duration::from_secs(10));
}
