//! Typed hooks (`impl Hook` + `#[hookrt_sdk::hook]`): subscriptions from the methods
//! written, typed config, and watching a decision event without a vote.

use hookrt::audit::author_warnings;
use hookrt::{Approval, Outcome, Resolution, ToolApproval};

use crate::common::{TempAgent, example, load, opts, transcript, triples};

fn requested() -> hookrt::Envelope {
    transcript()
        .into_iter()
        .find(|e| e.kind == "actions.requested")
        .expect("the transcript requests tools")
}

fn approval(d: &hookrt::Dispatch) -> &ToolApproval {
    match &d.resolution {
        Some(Resolution::ToolApproval(t)) => t,
        other => panic!("expected a tool approval, got {other:?}"),
    }
}

#[test]
fn typed_hooks_subscribe_to_the_methods_they_implement() {
    let agent = TempAgent::new()
        .hook("agent/hooks/alerts.rs", "alerts.rs")
        .hook("agent/hooks/observability/metrics.rs", "metrics.rs")
        .hook("testing/hooks/tool_counter.rs", "tool_counter.rs")
        .config("[hooks.metrics]\ngrants = [\"log\", \"metrics\"]\n");
    let rt = load(agent.path());
    let subs: Vec<(String, Vec<String>)> = rt
        .hooks()
        .iter()
        .map(|h| (h.id(), h.subscriptions.clone()))
        .collect();
    assert_eq!(
        subs,
        vec![
            ("alerts".into(), vec!["action.result".into(), "*".into()]),
            ("metrics".into(), vec!["*".into()]),
            (
                "tool_counter".into(),
                vec!["observe:actions.requested".into()]
            ),
        ]
    );
    // The migrated example agent keeps its exact subscriptions.
    let rt = load(&example("agent"));
    let alerts = rt.hooks().iter().find(|h| h.id() == "alerts").unwrap();
    assert_eq!(alerts.subscriptions, ["action.result", "*"]);
}

#[test]
fn a_counter_watching_tool_requests_casts_no_vote_even_when_it_panics() {
    let agent = TempAgent::new()
        .hook("testing/hooks/allow_all.rs", "allow_all.rs")
        .hook("testing/hooks/tool_counter.rs", "tool_counter.rs")
        .config("[hooks.tool_counter]\nconfig = { panic = true }\n");
    let d = load(agent.path()).dispatch(&requested()).unwrap();
    assert_eq!(
        triples(&d.deliveries),
        vec![
            ("allow_all".into(), "actions.requested".into(), "ok".into()),
            (
                "tool_counter".into(),
                "observe:actions.requested".into(),
                "trap".into()
            ),
        ]
    );
    let t = approval(&d);
    assert_eq!(t.calls.len(), 2);
    for call in &t.calls {
        assert_eq!(call.verdict, Approval::Allow);
        assert_eq!(call.decided_by.as_deref(), Some("allow_all"));
        assert!(!call.failure);
        let voters: Vec<&str> = call.answers.iter().map(|v| v.hook.as_str()).collect();
        assert_eq!(voters, ["allow_all"], "the watcher is not among the votes");
    }
}

#[test]
fn a_watching_counter_that_works_logs_and_still_casts_no_vote() {
    let agent = TempAgent::new().hook("testing/hooks/tool_counter.rs", "tool_counter.rs");
    let d = load(agent.path()).dispatch(&requested()).unwrap();
    assert_eq!(d.deliveries.len(), 1);
    assert_eq!(d.deliveries[0].outcome, Outcome::Ok);
    assert_eq!(
        crate::common::last_field(&d.deliveries[0], "count").as_deref(),
        Some("2")
    );
    let t = approval(&d);
    assert!(
        t.calls.iter().all(|c| c.answers.is_empty()
            && c.verdict == Approval::Abstain
            && c.decided_by.is_none())
    );
}

#[test]
fn typed_config_decides_and_a_config_that_does_not_fit_refuses_the_hook() {
    let agent = TempAgent::new()
        .hook("testing/hooks/typed_policy.rs", "typed_policy.rs")
        .config(
            "[hooks.typed_policy]\non_failure = \"deny\"\nconfig = { blocked = [\"run_shell\"] }\n",
        );
    let d = load(agent.path()).dispatch(&requested()).unwrap();
    let verdicts: Vec<(&str, &Approval)> = approval(&d)
        .calls
        .iter()
        .map(|c| (c.tool.as_str(), &c.verdict))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("read_file", &Approval::Abstain),
            (
                "run_shell",
                &Approval::Deny("`run_shell` is blocked by config".into())
            ),
        ]
    );

    let bad = TempAgent::new()
        .hook("testing/hooks/typed_policy.rs", "typed_policy.rs")
        .config("[hooks.typed_policy]\nconfig = { blocked = \"run_shell\" }\n");
    let problems = match hookrt::Runtime::load_blocking(bad.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("a misfit config must refuse the hook"),
        Err(p) => p.to_string(),
    };
    assert!(
        problems.contains(
            "refused its configuration: config does not fit `Config`: invalid type: string \"run_shell\", expected a sequence"
        ),
        "{problems}"
    );
}

#[test]
fn a_hook_that_votes_with_the_fail_closed_default_gets_a_warning() {
    let agent = TempAgent::new()
        .hook("testing/hooks/allow_all.rs", "allow_all.rs")
        .hook("testing/hooks/deny_all.rs", "deny_all.rs")
        .hook("testing/hooks/tool_counter.rs", "tool_counter.rs")
        .config("[hooks.deny_all]\non_failure = \"deny\"\n");
    let rt = load(agent.path());
    let warnings: Vec<(String, Vec<String>)> = rt
        .hooks()
        .iter()
        .map(|h| (h.id(), author_warnings(h)))
        .collect();
    assert_eq!(
        warnings,
        vec![
            (
                "allow_all".into(),
                vec!["`allow_all` votes on `actions.requested` and fails closed by default (on_failure = \"deny\"): \
                      if it fails, every tool call it is asked about is denied. \
                      fix: if it only watches, subscribe to `observe:actions.requested` (the SDK's `actions_requested_observed`); \
                      if it decides, say so with `on_failure = \"deny\"` (or \"abstain\") in its [hooks.\"allow_all\"] table"
                    .to_owned()]
            ),
            ("deny_all".into(), vec![]),
            ("tool_counter".into(), vec![]),
        ]
    );
    let audit = hookrt::audit::audit(&rt).to_text();
    assert!(
        audit.contains("   warning    `allow_all` votes on `actions.requested`"),
        "{audit}"
    );
    assert!(
        audit.contains("observe:actions.requested (observe)"),
        "{audit}"
    );
}

#[test]
fn watching_an_observe_event_is_refused_with_the_fix() {
    let agent = TempAgent::new().file(
        "hooks/watcher.rs",
        "use hookrt_sdk::prelude::*;\n#[derive(Default)]\npub struct W;\n\
         impl W { fn on(&mut self, _e: &Event, _c: &Context) -> HookResult { Ok(()) } }\n\
         hookrt_sdk::define_hook!(W { \"observe:message.completed\" => on });\n",
    );
    let problems = match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("observe: on an observe kind must be refused"),
        Err(p) => p.to_string(),
    };
    assert!(
        problems.contains("subscribes to `observe:message.completed`, but `message.completed` is an observe event already: subscribe to `message.completed`"),
        "{problems}"
    );
}

#[test]
fn a_replay_pins_clock_and_randomness_and_gives_the_same_bytes_twice() {
    let agent = TempAgent::new()
        .hook("testing/hooks/clock_reader.rs", "clock_reader.rs")
        .hook("testing/hooks/typed_policy.rs", "typed_policy.rs")
        .config(
            "[hooks.typed_policy]\non_failure = \"deny\"\nconfig = { blocked = [\"run_shell\"] }\n",
        );
    let events = transcript();
    let first = hookrt::replay::replay(&load(agent.path()), &events)
        .unwrap()
        .to_jsonl();
    let second = hookrt::replay::replay(&load(agent.path()), &events)
        .unwrap()
        .to_jsonl();
    assert_eq!(
        first, second,
        "two replays of one session are byte-identical"
    );
    let first_line: serde_json::Value =
        serde_json::from_str(first.lines().next().unwrap()).unwrap();
    assert_eq!(first_line["hook"], "clock_reader");
    assert_eq!(
        first_line["logs"][0]["fields"]["now"], "1767225600",
        "the wall clock reads 2026-01-01T00:00:00Z"
    );
    // The policy's own votes are in its delivery record.
    let policy: serde_json::Value = first
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["hook"] == "typed_policy")
        .unwrap();
    assert_eq!(policy["event"], "evt_0005");
    assert_eq!(
        policy["answer"],
        serde_json::json!([
            {"answer": "abstain"},
            {"answer": "deny", "text": "`run_shell` is blocked by config"}
        ])
    );
}

/// Compile-fail: what the trait turns into compile errors, reported at the author's
/// file and line (not the generated crate's).
#[test]
fn a_misspelled_kind_and_an_answer_from_an_observe_method_do_not_compile() {
    let agent = TempAgent::new()
        .file(
            "hooks/typo.rs",
            "use hookrt_sdk::prelude::*;\n\n#[derive(Default)]\npub struct Typo;\n\n\
             #[hookrt_sdk::hook]\nimpl Hook for Typo {\n    \
             fn mesage_completed(&mut self, _d: MessageCompleted, _e: &Event, _c: &Context) -> HookResult {\n        \
             Ok(())\n    }\n}\n",
        )
        .file(
            "hooks/observer_answers.rs",
            "use hookrt_sdk::prelude::*;\n\n#[derive(Default)]\npub struct Answers;\n\n\
             #[hookrt_sdk::hook]\nimpl Hook for Answers {\n    \
             fn message_completed(&mut self, _d: MessageCompleted, _e: &Event, _c: &Context) -> HookResult<Vec<Approval>> {\n        \
             Ok(vec![Approval::Allow])\n    }\n}\n",
        );
    let problems = match hookrt::Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}) {
        Ok(_) => panic!("neither hook may compile"),
        Err(p) => p.to_string(),
    };
    assert!(
        problems.contains("method `mesage_completed` is not a member of trait `Hook`"),
        "{problems}"
    );
    assert!(problems.contains("hooks/typo.rs:8:"), "{problems}");
    assert!(
        problems.contains("method `message_completed` has an incompatible type for trait"),
        "{problems}"
    );
    assert!(
        problems.contains("hooks/observer_answers.rs:8:"),
        "{problems}"
    );
    assert!(!problems.contains("src/lib.rs"), "{problems}");
}

/// The newcomer's reminder (issue 53): `method` adds a reminder on every prompt.
fn reminder(method: &str, answer: &str, ok: &str) -> String {
    format!(
        "use hookrt_sdk::prelude::*;\n#[derive(Default)]\npub struct Reminder;\n\
         #[hookrt_sdk::hook]\nimpl Hook for Reminder {{\n    type Config = NoConfig;\n    \
         fn {method}(&mut self, _d: PromptSubmitted, _e: &Event, _c: &Context) -> HookResult{answer} {{\n        \
         context::add(\"Run the tests before you push.\");\n        Ok({ok})\n    }}\n}}\n"
    )
}

/// The reminder's context on one prompt: (hook, text, dropped).
fn reminded(agent: &TempAgent) -> Vec<(String, String, bool)> {
    let prompt = hookrt::Envelope::new(
        "e1",
        "prompt.submitted",
        hookrt::Coordinates::new("coder", "s1", 0),
        serde_json::json!({"prompt": "push my branch"}),
    )
    .unwrap();
    let d = load(agent.path()).dispatch(&prompt).unwrap();
    assert_eq!(d.deliveries[0].outcome, Outcome::Ok);
    d.resolution
        .expect("a gate resolves")
        .context()
        .iter()
        .map(|p| (p.hook.clone(), p.text.clone(), p.dropped))
        .collect()
}

#[test]
fn a_reminder_moved_to_observe_as_check_advises_still_reaches_the_model() {
    let voting = TempAgent::new().file(
        "hooks/reminder.rs",
        &reminder("prompt_submitted", "<Block>", "Block::Pass"),
    );
    let expected = vec![(
        "reminder".to_owned(),
        "Run the tests before you push.".to_owned(),
        false,
    )];
    assert_eq!(reminded(&voting), expected);
    // `check` advises the observe: subscription for a hook that only watches...
    let rt = load(voting.path());
    let advice = author_warnings(&rt.hooks()[0]).join("\n");
    assert!(
        advice.contains("fix: if it only watches, subscribe to `observe:prompt.submitted` (the SDK's `prompt_submitted_observed`)"),
        "{advice}"
    );
    // ...and following it keeps the reminder: one rule for context.
    let watching = TempAgent::new().file(
        "hooks/reminder.rs",
        &reminder("prompt_submitted_observed", "", "()"),
    );
    assert_eq!(reminded(&watching), expected);
    let rt = load(watching.path());
    assert!(author_warnings(&rt.hooks()[0]).is_empty());
    let audit = hookrt::audit::audit(&rt);
    let subs = &audit.hooks[0].subscriptions;
    assert_eq!(
        (subs[0].kind.as_str(), subs[0].may.as_slice()),
        ("observe:prompt.submitted", ["add context"].as_slice())
    );
}
