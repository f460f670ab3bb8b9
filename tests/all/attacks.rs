//! Attacks from one hostile component (`example-hooks/hostile/attacks/attack.rs`,
//! the attack picked by its `config`), each beside the witness: the exact
//! outcome, the host serving the next event (a fresh instance gets the same
//! outcome again), and the witness `ok` on every event. Then what is refused
//! at load: a trap in `configure` or `subscriptions`, a socket import, the
//! wrong world, an oversized component. `docs/reliability.md` lists every
//! attack of the suite with its test.

use std::fs;

use hookrt::{Approval, Delivery, Dispatch, EditStatus, Outcome, Resolution};

use crate::common::{TempAgent, example, last_field, load, opts, repo, transcript};

/// The witness and the attack hook configured with `attack` and `extra`
/// keys (`extra` may give the whole `config`, e.g. to add `on`).
fn agent(attack: &str, extra: &str) -> TempAgent {
    let config = if extra.contains("config =") {
        String::new()
    } else {
        format!("config = {{ attack = \"{attack}\" }}\n")
    };
    TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .hook("hostile/attacks/attack.rs", "attack.rs")
        .config(&format!(
            "[hooks.attack]\ngrants = [\"log\", \"state\", \"metrics\"]\nmemory_mib = 16\noutput_bytes = 4096\n{config}{extra}\n"
        ))
}

/// Dispatches the first `kind` event twice and `session.started` once;
/// asserts the witness was `ok` each time and the attack ended `outcome`
/// both times; returns the attack's first delivery and the first dispatch.
fn attack_on(attack: &str, extra: &str, kind: &str, outcome: Outcome) -> (Delivery, Dispatch) {
    contained(&agent(attack, extra), attack, "attack", kind, outcome)
}

/// [`attack_on`] for any agent with the witness and hook `hook`.
fn contained(
    agent: &TempAgent,
    attack: &str,
    hook: &str,
    kind: &str,
    outcome: Outcome,
) -> (Delivery, Dispatch) {
    let rt = load(agent.path());
    let events = transcript();
    let event = events.iter().find(|e| e.kind == kind).unwrap();
    let mut first = None;
    for e in [event, event, &events[0]] {
        let report = rt.dispatch(e).expect("the host keeps serving");
        let witness: Vec<_> = report
            .deliveries
            .iter()
            .filter(|d| d.hook == "witness")
            .collect();
        assert_eq!(witness.len(), 1, "{attack}: the witness saw {}", e.kind);
        assert_eq!(
            witness[0].outcome,
            Outcome::Ok,
            "{attack}: {:?}",
            witness[0].error
        );
        if e.kind == kind {
            let d = report
                .deliveries
                .iter()
                .find(|d| d.hook == hook)
                .unwrap()
                .clone();
            assert_eq!(d.outcome, outcome, "{attack} on {kind}: {:?}", d.error);
            first.get_or_insert((d, report));
        }
    }
    first.unwrap()
}

fn attack(name: &str, extra: &str, outcome: Outcome) -> Delivery {
    attack_on(name, extra, "session.started", outcome).0
}

fn error(d: &Delivery) -> &str {
    d.error.as_deref().unwrap_or("")
}

#[test]
fn one_huge_allocation_is_out_of_memory() {
    let d = attack("huge_alloc", "", Outcome::OutOfMemory);
    assert!(
        error(&d).contains("memory allocation of 1073741824 bytes failed"),
        "{}",
        error(&d)
    );
}

#[test]
fn a_raw_memory_grow_loop_is_refused_at_the_limit_and_ends_out_of_memory() {
    let d = attack("memory_grow_loop", "", Outcome::OutOfMemory);
    let pages: u64 = last_field(&d, "pages").unwrap().parse().unwrap();
    assert!(
        pages > 0 && pages < 256,
        "grew {pages} pages of a 256-page (16 MiB) limit"
    );
    assert!(error(&d).contains(&format!("memory.grow refused after {pages} pages")));
}

#[test]
fn stdout_and_stderr_floods_are_cut_at_output_bytes_with_a_marker() {
    for flood in ["stdout_flood", "stderr_flood"] {
        let d = attack(
            flood,
            "fuel = 2_000_000_000\ndeadline_ms = 10_000\n",
            Outcome::Ok,
        );
        assert!(d.output_truncated, "{flood}");
        assert_eq!(d.console.len(), 4096, "{flood}: exactly the cap is kept");
        assert_eq!(
            d.logs.last().map(|l| l.message.as_str()),
            Some("[hookrt] output cut at the 4096-byte output_bytes limit")
        );
    }
}

#[test]
fn a_flood_of_small_state_keys_meets_the_per_hook_cap() {
    // The cap is checked against a running total, so 150,000 small keys
    // reach it well within a generous deadline.
    let d = attack(
        "state_flood",
        "deadline_ms = 60_000\nfuel = 10_000_000_000\n",
        Outcome::Error,
    );
    assert_eq!(
        error(&d),
        "state of hook `attack` would exceed 1048576 bytes"
    );
}

#[test]
fn a_flood_of_small_state_keys_ends_at_the_deadline() {
    let d = attack(
        "state_flood",
        "deadline_ms = 300\nfuel = 10_000_000_000\n",
        Outcome::Timeout,
    );
    assert_eq!(error(&d), "wasm trap: interrupt");
}

#[test]
fn state_beyond_the_per_hook_cap_is_refused_with_the_cap() {
    let d = attack("state_big_values", "", Outcome::Error);
    assert_eq!(
        error(&d),
        "state of hook `attack` would exceed 1048576 bytes"
    );
}

#[test]
fn a_flood_of_metric_series_keeps_the_per_hook_cap_and_counts_the_rest() {
    let rt = load(agent("series_flood", "").path());
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries;
    assert!(d.iter().all(|d| d.outcome == Outcome::Ok), "{d:?}");
    let snapshot = rt.metrics().snapshot();
    let kept = snapshot
        .iter()
        .filter(|((hook, name, _), _)| hook == "attack" && name.starts_with('s'))
        .count();
    assert_eq!(kept, 1_000, "exactly the 1,000-series cap is kept");
    let dropped = snapshot
        .iter()
        .find(|((hook, name, labels), _)| {
            hook == "attack"
                && name == "hookrt_metrics_dropped"
                && labels == &[("reason".to_owned(), "series_limit".to_owned())]
        })
        .map(|(_, v)| *v);
    assert_eq!(dropped, Some(4_000.0));
}

#[test]
fn a_hundred_thousand_approvals_for_two_calls_deny_both_as_a_malformed_answer() {
    let (d, report) = attack_on(
        "huge_approvals",
        "on_failure = \"abstain\"\nconfig = { attack = \"huge_approvals\", on = \"actions.requested\" }\n",
        "actions.requested",
        Outcome::Ok,
    );
    assert_eq!(d.handler, "actions.requested");
    let Some(Resolution::ToolApproval(t)) = report.resolution else {
        panic!("no tool approval: {:?}", report.resolution);
    };
    assert_eq!(t.calls.len(), 2);
    let reason = "policy hook `attack` answered 100000 approval(s) for 2 requested call(s); denied because a malformed answer fails closed";
    for call in &t.calls {
        assert_eq!(call.verdict, Approval::Deny(reason.to_owned()));
        assert!(call.failure);
    }
}

#[test]
fn a_decision_hook_that_times_out_is_a_deny_marked_as_a_failure() {
    let (d, report) = attack_on(
        "sleep",
        "deadline_ms = 100\nconfig = { attack = \"sleep\", on = \"actions.requested\" }\n",
        "actions.requested",
        Outcome::Timeout,
    );
    assert!(
        d.duration_us < 1_000_000,
        "ended at the deadline: {} us",
        d.duration_us
    );
    let Some(Resolution::ToolApproval(t)) = report.resolution else {
        panic!("no tool approval");
    };
    for call in &t.calls {
        assert!(
            matches!(&call.verdict, Approval::Deny(r) if r.contains("`attack` failed (timeout)")),
            "{:?}",
            call.verdict
        );
        assert!(call.failure);
        assert_eq!(call.decided_by.as_deref(), Some("attack"));
    }
}

#[test]
fn an_eight_mib_edit_is_not_applied_and_the_state_is_unchanged() {
    let (_, report) = attack_on(
        "huge_edit",
        "config = { attack = \"huge_edit\", on = \"step.completed\" }\n",
        "step.completed",
        Outcome::Ok,
    );
    let Some(Resolution::Edit(e)) = report.resolution else {
        panic!("no edit result");
    };
    assert!(!e.changed, "{:?}", e.accounts);
    let account = e.accounts.iter().find(|a| a.hook == "attack").unwrap();
    assert_eq!(
        account.status,
        EditStatus::Invalid("the edit is not JSON: expected value at line 1 column 1".into())
    );
}

#[test]
fn bytes_that_are_not_utf8_where_the_wit_says_string_trap_when_lifted() {
    let d = attack("invalid_utf8_error", "", Outcome::Trap);
    assert_eq!(error(&d), "invalid utf-8 sequence of 1 bytes from index 2");
    let d = attack("invalid_utf8_log", "", Outcome::Trap);
    assert!(
        d.logs.is_empty(),
        "nothing of the line was kept: {:?}",
        d.logs
    );
}

#[test]
fn process_exit_ends_the_delivery_as_a_trap() {
    attack("exit", "", Outcome::Trap);
}

#[test]
fn the_baseline_environment_is_empty_and_clock_and_random_are_inert() {
    let rt = load(agent("env_probe", "").path());
    let mut randoms = Vec::new();
    for e in &transcript()[..2] {
        let d = rt.dispatch(e).unwrap().deliveries;
        let d = d.iter().find(|d| d.hook == "attack").unwrap();
        assert_eq!(d.outcome, Outcome::Ok);
        assert_eq!(
            last_field(d, "vars").as_deref(),
            Some("0"),
            "no environment variable"
        );
        assert_eq!(last_field(d, "args").as_deref(), Some("0"), "no argument");
        assert_eq!(last_field(d, "clock_after_2020").as_deref(), Some("true"));
        randoms.push(last_field(d, "random").unwrap());
    }
    assert_ne!(
        randoms[0], randoms[1],
        "random bytes are random, not a constant"
    );
}

fn load_problems(agent: &TempAgent) -> Vec<String> {
    match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("load should fail"),
        Err(p) => p.0.into_iter().map(|p| p.message).collect(),
    }
}

#[test]
fn a_trap_in_configure_or_subscriptions_refuses_the_hook_at_load() {
    let p = load_problems(&agent("trap_in_configure", ""));
    assert_eq!(p.len(), 1);
    assert!(
        p[0].starts_with("failed while starting (instantiation or `configure`, trap): wasm trap"),
        "{p:?}"
    );
    let p = load_problems(&agent("trap_in_subscriptions", ""));
    assert_eq!(p.len(), 1);
    assert!(
        p[0].starts_with("failed while reporting its subscriptions (trap): wasm trap"),
        "{p:?}"
    );
}

#[test]
fn a_hook_dialing_a_socket_is_refused_at_load_naming_the_import() {
    let agent = TempAgent::new().hook("hostile/attacks/socket_dialer.rs", "dialer.rs");
    let p = load_problems(&agent);
    assert_eq!(p.len(), 1);
    assert!(
        p[0].contains("imports `wasi:sockets/tcp@0.2.6`: hookrt grants no sockets; remove the code that uses it"),
        "{p:?}"
    );
}

#[test]
fn the_wrong_world_and_an_oversized_component_are_refused_at_load() {
    let agent = TempAgent::new();
    fs::copy(
        repo().join("tests/fixtures/wrong-world.wasm"),
        agent.path().join("hooks/cli.wasm"),
    )
    .unwrap();
    let big = hookrt::sandbox::MAX_COMPONENT_BYTES as usize + 1;
    fs::write(agent.path().join("hooks/big.wasm"), vec![0u8; big]).unwrap();
    let p = load_problems(&agent);
    assert_eq!(
        p,
        [
            format!("is {big} bytes, above the 32 MiB a component may have: it is not compiled"),
            "does not implement the `hookrt:hook/define-hook` world (any of versions 0.4.0, 0.3.0, 0.2.0, 0.1.0): no export `configure` found".to_owned(),
        ]
    );
    assert!(example("hostile/attacks/attack.rs").is_file());
}

/// `example-hooks/hostile/attacks/table_grow.wat`, made a component for the
/// 0.1.0 world by wit-component, as `wasm-tools component embed` and
/// `component new` would.
fn table_grow_component() -> Vec<u8> {
    let mut module = wat::parse_file(example("hostile/attacks/table_grow.wat")).unwrap();
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_dir(repo().join("wit/v0.1.0")).unwrap();
    let world = resolve
        .select_world(&[package], Some("define-hook"))
        .unwrap();
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
        false,
    )
    .unwrap();
    wit_component::ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap()
}

#[test]
fn table_growth_stops_at_table_elements_and_the_host_keeps_serving() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .config("[hooks.table_grow]\ntable_elements = 5_000\n");
    fs::write(
        agent.path().join("hooks/table_grow.wasm"),
        table_grow_component(),
    )
    .unwrap();
    // One element at a time, to exactly the limit: the hook's own account.
    let (d, _) = contained(
        &agent,
        "table_grow",
        "table_grow",
        "session.started",
        Outcome::Error,
    );
    assert_eq!(error(&d), "5000 elements, then refused");
    // 100,000,000 at once: Wasmtime charges fuel per element asked for,
    // before the grow, so it ends out of fuel (50,000,000 by default).
    let (d, _) = contained(
        &agent,
        "table_grow",
        "table_grow",
        "turn.started",
        Outcome::OutOfFuel,
    );
    assert_eq!(error(&d), "wasm trap: all fuel consumed by WebAssembly");
}

/// A component with more core instances than a pooled hook may have (as a
/// Python hook built by componentize-py has): the load names the real cause
/// and the setting to change, never the cache dir.
#[test]
fn a_component_that_does_not_fit_the_pool_names_the_limit_and_the_setting() {
    let instances = "(core instance (instantiate $m))\n".repeat(65);
    let component = wat::parse_str(format!("(component (core module $m) {instances})")).unwrap();
    let agent = TempAgent::new();
    fs::write(agent.path().join("hooks/wide.wasm"), &component).unwrap();
    let problem = |agent: &TempAgent| match hookrt::Runtime::load_blocking(
        agent.path(),
        &crate::common::opts(),
        &mut |_| {},
    ) {
        Ok(_) => panic!("this component must not load"),
        Err(p) => p.0.into_iter().next().unwrap(),
    };
    if std::env::var("HOOKRT_ALLOCATOR").as_deref() == Ok("on-demand") {
        // No pool: the instance limit is met at instantiation, which this
        // bare component (no exports) never reaches.
        let p = problem(&agent);
        assert!(p.message.starts_with("does not implement"), "{p:?}");
        return;
    }
    let p = problem(&agent);
    assert_eq!(
        p.message,
        "does not fit hookrt's instance pool: The component transitively contains 65 core module instances, which exceeds the configured maximum of 64 in the pooling allocator"
    );
    assert!(
        p.fix.starts_with(
            "a hook runs in the pool with at most 64 core instances, 4 memories and 16 tables"
        ) && p.fix.contains("`instances = 128`"),
        "{}",
        p.fix
    );
    // The setting it names works: past the pool, the load goes on (to the
    // world check this bare component fails).
    let agent = agent.config("[hooks.wide]\ninstances = 128\n");
    let p = problem(&agent);
    assert!(
        p.message
            .starts_with("does not implement the `hookrt:hook/define-hook` world"),
        "{p:?}"
    );
}
