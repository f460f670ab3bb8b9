//! Per-hook state (namespaced, capped, kept in the journal database) and the
//! `config` table handed to hooks at load.

use std::time::Duration;

use hookrt::Envelope;

use crate::common::{TempAgent, last_field, transcript};
use crate::journal::{run_all, start};

fn renamed(base: &[Envelope], prefix: &str) -> Vec<Envelope> {
    base.iter()
        .map(|e| {
            let mut e = e.clone();
            e.id = format!("{prefix}-{}", e.id);
            e
        })
        .collect()
}

#[test]
fn state_survives_a_restart_and_is_private_to_each_hook() {
    let agent = TempAgent::new()
        .hook("testing/hooks/state_counter.rs", "counter.rs")
        .hook("testing/hooks/state_counter.rs", "other/counter.rs")
        .config("[defaults]\ngrants = [\"log\", \"state\"]\n");
    let db = agent.path().join("journal.db");
    let events = transcript();

    let (service, seen) = start(agent.path(), Some(&db));
    run_all(service, &events[..3]);
    let counts = |seen: &[hookrt::Delivery], hook: &str| -> Vec<u64> {
        seen.iter()
            .filter(|d| d.hook == hook)
            .map(|d| last_field(d, "count").unwrap().parse().unwrap())
            .collect()
    };
    let first = seen.lock().unwrap().clone();
    assert_eq!(counts(&first, "counter"), [1, 2, 3]);
    assert_eq!(
        counts(&first, "other/counter"),
        [1, 2, 3],
        "same key, separate namespace"
    );

    // A new service on the same journal: fresh instances, state from the database.
    let (service, seen) = start(agent.path(), Some(&db));
    run_all(service, &renamed(&events[..2], "again"));
    let second = seen.lock().unwrap().clone();
    assert_eq!(counts(&second, "counter"), [4, 5]);
    assert_eq!(counts(&second, "other/counter"), [4, 5]);
}

#[test]
fn without_a_journal_state_lives_for_the_service_only() {
    let agent = TempAgent::new()
        .hook("testing/hooks/state_counter.rs", "counter.rs")
        .config("[hooks.counter]\ngrants = [\"log\", \"state\"]\n");
    let (service, seen) = start(agent.path(), None);
    let stats = {
        let s = service;
        let p: Vec<_> = transcript()[..2]
            .iter()
            .map(|e| s.submit(e.clone()))
            .collect();
        for p in p {
            p.wait().unwrap();
        }
        s.flush_blocking();
        s.shutdown_blocking(Duration::from_secs(10))
    };
    assert_eq!(stats.deliveries, 2);
    let counts: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|d| last_field(d, "count").unwrap())
        .collect();
    assert_eq!(counts, ["1", "2"]);
}

#[test]
fn a_hook_that_rejects_its_config_fails_the_load_with_its_own_message() {
    let agent = TempAgent::new()
        .hook("testing/hooks/config_checker.rs", "checker.rs")
        .config("[hooks.checker]\nconfig = { threshold = 0 }\n");
    let err = hookrt::Runtime::load_blocking(agent.path(), &crate::common::opts(), &mut |_| {})
        .err()
        .expect("refused");
    assert_eq!(err.0.len(), 1);
    assert_eq!(
        err.0[0].message,
        "refused its configuration: config.threshold must be a number >= 1"
    );
    assert_eq!(err.0[0].path, agent.path().join("hooks/checker.rs"));

    let ok = TempAgent::new()
        .hook("testing/hooks/config_checker.rs", "checker.rs")
        .config("[hooks.checker]\nconfig = { threshold = 2 }\n");
    let rt = crate::common::load(ok.path());
    assert_eq!(rt.hooks()[0].settings.config["threshold"], 2);
    assert_eq!(
        rt.dispatch(&transcript()[0]).unwrap().deliveries[0].outcome,
        hookrt::Outcome::Ok
    );
}

#[test]
fn a_remembered_start_is_done_again_when_the_config_changes() {
    let cache = tempfile::tempdir().unwrap();
    let opts = hookrt::BuildOptions {
        cache_dir: cache.path().to_path_buf(),
        ..crate::common::opts()
    };
    let agent = TempAgent::new().hook("testing/hooks/config_checker.rs", "checker.rs");
    let config = |threshold: i64| {
        std::fs::write(
            agent.path().join("hookrt.toml"),
            format!("[hooks.checker]\nconfig = {{ threshold = {threshold} }}\n"),
        )
        .unwrap()
    };
    let records = || std::fs::read_dir(cache.path().join("starts")).map_or(0, |d| d.count());
    config(2);
    let first = hookrt::Runtime::load_blocking(agent.path(), &opts, &mut |_| {}).unwrap();
    assert_eq!(records(), 1, "the start that succeeded is recorded");
    let again = hookrt::Runtime::load_blocking(agent.path(), &opts, &mut |_| {}).unwrap();
    assert_eq!(
        again.hooks()[0].subscriptions,
        first.hooks()[0].subscriptions
    );
    assert_eq!(records(), 1, "the same start is not recorded twice");
    assert_eq!(
        again.dispatch(&transcript()[0]).unwrap().deliveries[0].outcome,
        hookrt::Outcome::Ok,
        "a hook whose start was remembered delivers"
    );

    // A config the hook refuses: started again, refused, nothing recorded.
    config(0);
    for _ in 0..2 {
        let err = hookrt::Runtime::load_blocking(agent.path(), &opts, &mut |_| {})
            .err()
            .expect("refused");
        assert_eq!(
            err.0[0].message,
            "refused its configuration: config.threshold must be a number >= 1"
        );
    }
    assert_eq!(records(), 1);
    config(3);
    hookrt::Runtime::load_blocking(agent.path(), &opts, &mut |_| {}).unwrap();
    assert_eq!(records(), 2, "another config, another start");
}

#[test]
fn config_name_and_description_belong_to_one_hook() {
    let agent = TempAgent::new()
        .hook("testing/hooks/config_checker.rs", "checker.rs")
        .config("[defaults]\nconfig = { threshold = 2 }\n");
    let problems = hookrt::check(agent.path()).expect_err("refused").0;
    assert_eq!(
        problems[0].message,
        "[defaults] sets `config`, which belongs to one hook"
    );
}

#[test]
fn a_hook_built_against_world_0_1_0_still_loads_and_runs() {
    let agent = TempAgent::new();
    std::fs::copy(
        crate::common::repo().join("tests/fixtures/witness-v0.1.0.wasm"),
        agent.path().join("hooks/old.wasm"),
    )
    .unwrap();
    let agent = agent.hook("testing/hooks/allow_all.rs", "allow_all.rs");
    let rt = crate::common::load(agent.path());
    let versions: Vec<(&str, &str)> = rt
        .hooks()
        .iter()
        .map(|h| (h.slug.as_str(), h.world_version))
        .collect();
    assert_eq!(versions, [("allow_all", "0.4.0"), ("old", "0.1.0")]);
    assert!(
        rt.hooks()[1]
            .imports
            .iter()
            .any(|i| i == "hookrt:hook/log@0.1.0")
    );
    for e in transcript() {
        let report = rt.dispatch(&e).unwrap();
        assert!(!report.deliveries.is_empty());
        assert!(
            report
                .deliveries
                .iter()
                .all(|d| d.outcome == hookrt::Outcome::Ok),
            "{:?}",
            report.deliveries
        );
        if let Some(hookrt::Resolution::ToolApproval(t)) = report.resolution {
            // An old hook cannot answer: it abstains, and the new one decides.
            for c in t.calls {
                let old = c.answers.iter().find(|a| a.hook == "old").unwrap();
                assert_eq!(old.answer, hookrt::Approval::Abstain);
                assert_eq!(c.verdict, hookrt::Approval::Allow);
            }
        }
    }
}

#[test]
fn a_hook_using_state_without_the_grant_is_refused_at_load_naming_the_grant() {
    let agent = TempAgent::new().hook("testing/hooks/state_counter.rs", "counter.rs");
    let err = hookrt::Runtime::load_blocking(agent.path(), &crate::common::opts(), &mut |_| {})
        .err()
        .expect("refused");
    assert_eq!(err.0.len(), 1);
    assert_eq!(
        err.0[0].message,
        "imports `hookrt:hook/state@0.4.0`, which is not granted: add `grants = [\"log\", \"state\"]` to [hooks.\"counter\"] in hookrt.toml"
    );
}
