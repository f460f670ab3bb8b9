//! Limits: fuel, deadline and memory come from hookrt.toml and stop the hook
//! with the outcome that names them.

use hookrt::Outcome;

use crate::common::{TempAgent, last_field, load, transcript};

fn first_delivery(agent: &TempAgent) -> hookrt::Delivery {
    let rt = load(agent.path());
    let event = &transcript()[0];
    let mut ds = rt.dispatch(event).unwrap().deliveries;
    assert_eq!(ds.len(), 1);
    ds.remove(0)
}

#[test]
fn fuel_limit_is_taken_from_hookrt_toml() {
    for fuel in [1_000_000u64, 3_000_000] {
        let agent = TempAgent::new()
            .hook("hostile/hooks/infinite_loop.rs", "spin.rs")
            .config(&format!(
                "[hooks.spin]\nfuel = {fuel}\ndeadline_ms = 60000\n"
            ));
        let d = first_delivery(&agent);
        assert_eq!(d.outcome, Outcome::OutOfFuel);
        assert_eq!(
            d.fuel_used, fuel,
            "the hook burned exactly its configured fuel"
        );
    }
}

#[test]
fn deadline_is_taken_from_hookrt_toml() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "spin.rs")
        .config("[hooks.spin]\nfuel = 10_000_000_000\ndeadline_ms = 40\n");
    let d = first_delivery(&agent);
    assert_eq!(d.outcome, Outcome::Timeout, "{:?}", d.error);
    // Only the lower bound is asserted: the upper bound depends on machine load.
    assert!(
        d.duration_us >= 40_000,
        "interrupted after {} us, before its 40 ms deadline",
        d.duration_us
    );
    assert!(d.fuel_used < 10_000_000_000);
}

#[test]
fn memory_limit_is_taken_from_hookrt_toml() {
    let mut reached = Vec::new();
    for mib in [6u64, 12] {
        let agent = TempAgent::new()
            .hook("hostile/hooks/memory_bomb.rs", "bomb.rs")
            .config(&format!(
                "[hooks.bomb]\nmemory_mib = {mib}\nfuel = 10_000_000_000\ndeadline_ms = 60000\n"
            ));
        let d = first_delivery(&agent);
        assert_eq!(d.outcome, Outcome::OutOfMemory, "{:?}", d.error);
        let held: u64 = last_field(&d, "mib")
            .expect("bomb logs each MiB")
            .parse()
            .unwrap();
        assert!(
            held < mib && held + 4 >= mib,
            "held {held} MiB under a {mib} MiB limit"
        );
        reached.push(held);
    }
    assert!(reached[1] > reached[0]);
}

#[test]
fn a_limit_below_the_hooks_initial_memory_fails_every_delivery_not_the_host() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .config("[hooks.witness]\nmemory_mib = 1\n");
    // The hook cannot even start: the load names it.
    let err = hookrt::Runtime::load_blocking(agent.path(), &crate::common::opts(), &mut |_| {})
        .err()
        .expect("load fails");
    assert_eq!(err.0.len(), 1);
    assert!(
        err.0[0]
            .message
            .starts_with("failed while starting (instantiation or `configure`, out_of_memory)"),
        "{}",
        err.0[0].message
    );
}

#[test]
fn hooks_beyond_the_pools_slot_sizes_run_with_on_demand_allocation() {
    use hookrt::sandbox::Allocator;
    let big_tables = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .config("[hooks.witness]\ntable_elements = 50000\n");
    assert_eq!(load(big_tables.path()).allocator(), Allocator::OnDemand);
    let defaults = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let rt = load(defaults.path());
    // The pool is chosen when the hooks fit it, unless turned off (CI runs
    // the suite once with each) or the machine cannot reserve it.
    if std::env::var("HOOKRT_ALLOCATOR").as_deref() == Ok("on-demand") {
        assert_eq!(rt.allocator(), Allocator::OnDemand);
    }
    let report = rt.dispatch(&transcript()[0]).unwrap();
    assert_eq!(report.deliveries[0].outcome, hookrt::Outcome::Ok);
}

#[test]
fn a_reused_instance_is_replaced_after_its_reuse_limit() {
    // The metrics hook counts events per kind in instance memory: the count
    // starts over exactly when a fresh instance replaces the warm one.
    let counts = |config: &str| -> Vec<String> {
        let agent = TempAgent::new()
            .hook(
                "agent/hooks/observability/metrics.rs",
                "observability/metrics.rs",
            )
            .config(config);
        let rt = load(agent.path());
        let started = transcript()
            .into_iter()
            .find(|e| e.kind == "turn.started")
            .unwrap();
        (0..5)
            .map(|i| {
                let mut e = started.clone();
                e.id = format!("evt-reuse-{i}");
                let report = rt.dispatch(&e).unwrap();
                last_field(&report.deliveries[0], "count").unwrap()
            })
            .collect()
    };
    let table = "[hooks.\"observability/metrics\"]\ngrants = [\"log\", \"metrics\"]\ninstance = \"reuse\"\n";
    assert_eq!(counts(table), ["1", "2", "3", "4", "5"]);
    assert_eq!(
        counts(&format!("{table}reuse_limit = 2\n")),
        ["1", "2", "1", "2", "1"]
    );
    let fresh = "[hooks.\"observability/metrics\"]\ngrants = [\"log\", \"metrics\"]\n";
    assert_eq!(counts(fresh), ["1", "1", "1", "1", "1"]);
}

#[test]
fn an_infinite_loop_in_an_epoch_only_hook_ends_timeout_at_its_deadline() {
    // No fuel is counted (the hook runs on the engine without fuel), so only
    // the epoch deadline can stop the loop; a fuel limit set too is not used.
    let agent = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "spin.rs")
        .config("[hooks.spin]\nmetering = \"epoch\"\nfuel = 1_000_000\ndeadline_ms = 40\n");
    let rt = load(agent.path());
    assert_eq!(
        rt.hooks()[0].settings.limits.metering,
        hookrt::sandbox::Metering::Epoch
    );
    let audit = hookrt::audit::audit(&rt).to_text();
    assert!(
        audit.contains("limits     epoch-only (no fuel; the deadline binds) | deadline 40 ms"),
        "{audit}"
    );
    let mut ds = rt.dispatch(&transcript()[0]).unwrap().deliveries;
    let d = ds.remove(0);
    assert_eq!(d.outcome, Outcome::Timeout, "{:?}", d.error);
    assert!(
        d.duration_us >= 40_000,
        "interrupted after {} us, before its 40 ms deadline",
        d.duration_us
    );
    assert_eq!(d.fuel_used, 0, "an epoch-only hook counts no fuel");
    // The instance that timed out is gone: the next delivery is stopped the same way.
    let again = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    assert_eq!(again.outcome, Outcome::Timeout);
    // Idle past every window a delivery (and the load's start, 5 s) opened,
    // the epoch ticker sleeps (sandbox/ticker.rs); the next delivery wakes
    // it, and is stopped at its deadline all the same.
    std::thread::sleep(std::time::Duration::from_millis(5_200));
    let idle = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    assert_eq!(idle.outcome, Outcome::Timeout);
    assert!(
        idle.duration_us < 2_000_000,
        "stopped late: {} us",
        idle.duration_us
    );
}

#[test]
fn epoch_only_and_fuel_metered_hooks_run_side_by_side() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/infinite_loop.rs", "spin.rs")
        .hook("testing/hooks/bench_parse.rs", "parse.rs")
        .config(
            "[hooks.spin]\nfuel = 1_000_000\ndeadline_ms = 60000\n\
             [hooks.parse]\nmetering = \"epoch\"\ninstance = \"reuse\"\n",
        );
    let rt = load(agent.path());
    let ds = rt.dispatch(&transcript()[0]).unwrap().deliveries;
    let by = |hook: &str| ds.iter().find(|d| d.hook == hook).unwrap();
    assert_eq!(by("spin").outcome, Outcome::OutOfFuel);
    assert_eq!(by("spin").fuel_used, 1_000_000);
    assert_eq!(by("parse").outcome, Outcome::Ok, "{:?}", by("parse").error);
    assert_eq!(by("parse").fuel_used, 0);
}

#[test]
fn an_unknown_metering_is_refused_with_the_choices() {
    let agent = TempAgent::new()
        .hook("testing/hooks/bench_parse.rs", "parse.rs")
        .config("[hooks.parse]\nmetering = \"none\"\n");
    let problems =
        match hookrt::Runtime::load_blocking(agent.path(), &crate::common::opts(), &mut |_| {}) {
            Ok(_) => panic!("loaded"),
            Err(p) => p.to_string(),
        };
    assert!(
        problems.contains("unknown variant `none`, expected `fuel` or `epoch`"),
        "{problems}"
    );
}
