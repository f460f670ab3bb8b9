//! Parallel decisions: a tool approval's hooks run side by side on the
//! decision workers and give exactly what they give one after another (the
//! same deliveries in the same order, the same resolution), failures and
//! timeouts included; through the service, the same cascade.

use hookrt::{Delivery, Envelope, Outcome, ServiceOptions};

use crate::common::{TempAgent, load, transcript};
use crate::journal::{run_all, start_with};

/// Four voting policy hooks (one traps), a tool counter, and a `*` observer
/// that times out on every event.
fn policies(trapper_critical: bool) -> TempAgent {
    let mut agent = TempAgent::new();
    for h in [
        "allow_all",
        "deny_all",
        "ask_network",
        "trapping_decider",
        "tool_counter",
    ] {
        agent = agent.hook(&format!("testing/hooks/{h}.rs"), &format!("{h}.rs"));
    }
    agent
        .hook("hostile/hooks/infinite_loop.rs", "spin.rs")
        .config(&format!(
            "[hooks.spin]\ndeadline_ms = 30\nfuel = 10_000_000_000\n\
             [hooks.trapping_decider]\ncritical = {trapper_critical}\n\
             [hooks.allow_all]\ninstance = \"reuse\"\n"
        ))
}

/// What must not change with the workers: each delivery's hook, handler,
/// attempt, outcome and error, in order.
fn shape(ds: &[Delivery]) -> Vec<(String, String, String, u32, Outcome, Option<String>)> {
    ds.iter()
        .map(|d| {
            (
                d.event_id.clone(),
                d.hook.clone(),
                d.handler.clone(),
                d.attempt,
                d.outcome,
                d.error.clone(),
            )
        })
        .collect()
}

fn requested() -> Vec<Envelope> {
    transcript()
        .into_iter()
        .filter(|e| e.kind == "actions.requested")
        .collect()
}

#[test]
fn a_tool_approval_side_by_side_gives_the_same_deliveries_in_the_same_order_and_resolution() {
    let agent = policies(false);
    let mut rt = load(agent.path());
    let events = requested();
    assert!(events.len() >= 2);
    let mut runs = Vec::new();
    for workers in [1, 2, 4] {
        rt.set_threads(workers).unwrap();
        assert_eq!(rt.threads().threads(), workers);
        let dispatched: Vec<_> = events.iter().map(|e| rt.dispatch(e).unwrap()).collect();
        runs.push((
            dispatched
                .iter()
                .flat_map(|d| shape(&d.deliveries))
                .collect::<Vec<_>>(),
            dispatched
                .iter()
                .map(|d| d.resolution.clone())
                .collect::<Vec<_>>(),
        ));
    }
    let (deliveries, resolutions) = &runs[0];
    // Plan order: the specific handlers by slug, then the `*` observer.
    let hooks: Vec<&str> = deliveries[..6].iter().map(|d| d.1.as_str()).collect();
    assert_eq!(
        hooks,
        [
            "allow_all",
            "ask_network",
            "deny_all",
            "tool_counter",
            "trapping_decider",
            "spin"
        ]
    );
    let outcome = |hook: &str| deliveries.iter().find(|d| d.1 == hook).unwrap().4;
    assert_eq!(outcome("trapping_decider"), Outcome::Trap);
    assert_eq!(outcome("spin"), Outcome::Timeout);
    assert_eq!(outcome("allow_all"), Outcome::Ok);
    let Some(hookrt::Resolution::ToolApproval(first)) = &resolutions[0] else {
        panic!("{:?}", resolutions[0]);
    };
    // deny_all's deny outranks the trap's fail-closed deny: it comes first in plan order.
    assert_eq!(first.calls[0].decided_by.as_deref(), Some("deny_all"));
    for (workers, run) in [2, 4].iter().zip(&runs[1..]) {
        assert_eq!(&run.0, deliveries, "deliveries with {workers} workers");
        assert_eq!(&run.1, resolutions, "resolutions with {workers} workers");
    }
}

#[test]
fn a_failing_critical_policy_hook_side_by_side_cascades_exactly_as_one_after_another() {
    let agent = policies(true).hook("hostile/hooks/witness.rs", "witness.rs");
    let mut results = Vec::new();
    for workers in [1, 2] {
        let (service, seen) = start_with(
            agent.path(),
            None,
            ServiceOptions {
                threads: workers,
                ..Default::default()
            },
        );
        let stats = run_all(service, &transcript());
        let seen = seen.lock().unwrap().clone();
        // Observe events may run in lanes with two workers, whose order
        // across hooks is free: compare the decisions' deliveries in order,
        // and the cascade events the witness saw.
        let decisions: Vec<_> = seen
            .iter()
            .filter(|d| d.kind == "actions.requested")
            .cloned()
            .collect();
        let mut failed: Vec<String> = seen
            .iter()
            .filter(|d| d.hook == "witness" && d.kind == "turn.failed")
            .map(|d| d.event_id.clone())
            .collect();
        failed.sort();
        results.push((shape(&decisions), failed, stats));
    }
    let (decisions, failed, stats) = &results[0];
    assert!(
        decisions
            .iter()
            .any(|d| d.1 == "trapping_decider" && d.4 == Outcome::Trap)
    );
    assert!(!failed.is_empty(), "the critical trap fails its turn");
    assert_eq!(stats.cascades, failed.len() as u64);
    assert_eq!(&results[1].0, decisions);
    assert_eq!(&results[1].1, failed);
    assert_eq!(results[1].2.cascades, stats.cascades);
    assert_eq!(results[1].2.critical_failures, stats.critical_failures);
    assert_eq!(results[1].2.outcomes, stats.outcomes);
}
