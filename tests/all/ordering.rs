//! Ordering: specific handlers before `*`, registration order, same every run.

use crate::common::{TempAgent, example, load, run_transcript, transcript, triples};

fn plan(rt: &hookrt::Runtime, kind: &str) -> Vec<(String, String)> {
    let event = transcript()
        .into_iter()
        .find(|e| e.kind == kind)
        .expect("kind in transcript");
    rt.dispatch(&event)
        .unwrap()
        .deliveries
        .into_iter()
        .map(|d| (d.hook, d.handler))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn specific_handlers_run_before_wildcards_in_registration_order() {
    // hookrt.toml: order = ["audit"]; the rest by slug.
    let rt = load(&example("agent"));
    let order: Vec<&str> = rt.hooks().iter().map(|h| h.slug.as_str()).collect();
    assert_eq!(
        order,
        [
            "audit",
            "alerts",
            "context-pruner",
            "observability/metrics",
            "policy",
            "protected-paths",
            "secret_scan",
            "tool_timer"
        ]
    );
    assert_eq!(
        plan(&rt, "action.result"),
        pairs(&[
            ("alerts", "action.result"),
            ("protected-paths", "action.result"),
            ("secret_scan", "action.result"),
            ("tool_timer", "action.result"),
            ("audit", "*"),
            ("alerts", "*"),
            ("observability/metrics", "*"),
        ])
    );
    assert_eq!(
        plan(&rt, "step.completed"),
        pairs(&[
            ("context-pruner", "step.completed"),
            ("audit", "*"),
            ("alerts", "*"),
            ("observability/metrics", "*")
        ])
    );
    assert_eq!(
        plan(&rt, "actions.requested"),
        pairs(&[
            ("policy", "actions.requested"),
            ("tool_timer", "observe:actions.requested"),
            ("audit", "*"),
            ("alerts", "*"),
            ("observability/metrics", "*")
        ])
    );
    assert_eq!(
        plan(&rt, "session.started"),
        pairs(&[
            ("audit", "*"),
            ("alerts", "*"),
            ("observability/metrics", "*")
        ])
    );
}

#[test]
fn configured_order_comes_first_then_slug_order() {
    let agent = TempAgent::new()
        .hook("agent/hooks/audit.rs", "audit.rs")
        .hook("agent/hooks/alerts.rs", "alerts.rs")
        .hook("agent/hooks/observability/metrics.rs", "observability/metrics.rs")
        .hook("agent/hooks/policy", "policy")
        .config("order = [\"policy\", \"observability/metrics\"]\n[hooks.\"observability/metrics\"]\ngrants = [\"log\", \"metrics\"]\n");
    let rt = load(agent.path());
    let order: Vec<&str> = rt.hooks().iter().map(|h| h.slug.as_str()).collect();
    assert_eq!(
        order,
        ["policy", "observability/metrics", "alerts", "audit"]
    );
    assert_eq!(
        plan(&rt, "action.result"),
        pairs(&[
            ("alerts", "action.result"),
            ("observability/metrics", "*"),
            ("alerts", "*"),
            ("audit", "*")
        ])
    );
}

#[test]
fn the_same_transcript_gives_the_same_deliveries_every_run() {
    let first = triples(&run_transcript(&load(&example("agent"))));
    let second = triples(&run_transcript(&load(&example("agent"))));
    // 38 events x 3 wildcards, plus the specific handlers: alerts and
    // protected-paths on 6 action.result, policy on 5 actions.requested,
    // context-pruner on 7 step.completed, protected-paths on 1 file edit,
    // tool_timer on 6 action.result, 5 actions.requested and 1 session.completed,
    // secret_scan on 6 action.result and 2 message.completed.
    assert_eq!(first.len(), 159);
    assert_eq!(first, second);
    assert!(first.iter().all(|(_, _, outcome)| outcome == "ok"));
}
