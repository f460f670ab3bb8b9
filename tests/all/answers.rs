//! The answers of world 0.3.0 (ADR 0004), one test per merge rule with the
//! exact resolution: rewrites chain in registration order and a deny drops
//! them; context keeps registration order and its hooks; gates merge block >
//! continue > pass; the loop governor caps continues; permission requests
//! merge deny > allow > abstain, their rewrites chaining and a deny dropping
//! them as a tool call's do. And a hook built against world 0.2.0 keeps
//! meaning what it meant.

use hookrt::event::{Gate, Permission};
use hookrt::{Approval, Coordinates, Envelope, Outcome, Resolution};
use serde_json::json;

use crate::common::{TempAgent, load, repo};

fn event(kind: &str, data: serde_json::Value) -> Envelope {
    Envelope::new("e1", kind, Coordinates::new("coder", "s1", 0), data).unwrap()
}

fn shell(command: &str) -> Envelope {
    event(
        "actions.requested",
        json!({"actions": [{"call_id": "c1", "tool": "Bash", "input": {"command": command, "timeout": 5}}]}),
    )
}

/// Two rewriters (`rewrite_a`, `rewrite_b`, in that order; `b` is
/// `rewrite_b`'s config) and the hooks `extra` names.
fn rewriters(extra: &[&str], b: &str) -> TempAgent {
    let mut agent = TempAgent::new()
        .hook("testing/hooks/rewriter.rs", "rewrite_a.rs")
        .hook("testing/hooks/rewriter.rs", "rewrite_b.rs");
    for h in extra {
        agent = agent.hook(&format!("testing/hooks/{h}.rs"), &format!("{h}.rs"));
    }
    agent.config(&format!(
        "order = [\"rewrite_a\", \"rewrite_b\"]\n\
         [hooks.\"rewrite_a\"]\nconfig = {{ suffix = \" --a\" }}\n\
         [hooks.\"rewrite_b\"]\nconfig = {{ {b} }}\n"
    ))
}

/// `rewrite_b`'s config: it also allows.
const B: &str = "suffix = \" --b\", allow = true";

fn resolved(agent: &TempAgent, e: &Envelope) -> Resolution {
    load(agent.path())
        .dispatch(e)
        .unwrap()
        .resolution
        .expect("a resolution")
}

#[test]
fn rewrites_chain_in_registration_order_and_each_is_recorded_with_the_context() {
    let agent = rewriters(&[], B);
    for threads in [1, 2] {
        let mut rt = load(agent.path());
        rt.set_threads(threads).unwrap();
        let Some(Resolution::ToolApproval(t)) = rt.dispatch(&shell("make")).unwrap().resolution
        else {
            panic!("a tool approval");
        };
        let call = &t.calls[0];
        assert_eq!(call.verdict, Approval::Allow);
        assert_eq!(call.decided_by.as_deref(), Some("rewrite_b"));
        let rewrites: Vec<(&str, Vec<String>, &serde_json::Value)> = call
            .rewrites
            .iter()
            .map(|r| (r.hook.as_str(), r.changed.clone(), &r.input))
            .collect();
        assert_eq!(
            rewrites,
            [
                (
                    "rewrite_a",
                    vec!["command".to_owned()],
                    &json!({"command": "make --a", "timeout": 5})
                ),
                (
                    "rewrite_b",
                    vec!["command".to_owned()],
                    &json!({"command": "make --a --b", "timeout": 5})
                ),
            ],
            "threads {threads}: the second rewriter starts from the first one's input"
        );
        assert_eq!(
            call.input,
            Some(json!({"command": "make --a --b", "timeout": 5}))
        );
        let context: Vec<(&str, &str, bool)> = t
            .context
            .iter()
            .map(|c| (c.hook.as_str(), c.text.as_str(), c.dropped))
            .collect();
        assert_eq!(
            context,
            [
                ("rewrite_a", "saw `make`", false),
                ("rewrite_b", "saw `make --a`", false)
            ]
        );
    }
}

#[test]
fn a_deny_anywhere_drops_every_rewrite_and_keeps_them_recorded() {
    let agent = rewriters(&["deny_all"], B);
    let Resolution::ToolApproval(t) = resolved(&agent, &shell("make")) else {
        panic!("a tool approval");
    };
    let call = &t.calls[0];
    assert_eq!(call.verdict, Approval::Deny("deny_all says no".into()));
    assert_eq!(call.input, None, "a deny drops the rewrites");
    assert_eq!(call.rewrites.len(), 2, "both rewrites stay on record");
}

#[test]
fn a_rewrite_that_is_not_a_json_object_fails_closed() {
    let agent = rewriters(&[], "suffix = \" --b\", not_object = true");
    let Resolution::ToolApproval(t) = resolved(&agent, &shell("make")) else {
        panic!("a tool approval");
    };
    let call = &t.calls[0];
    assert!(call.failure);
    assert_eq!(call.decided_by.as_deref(), Some("rewrite_b"));
    let Approval::Deny(reason) = &call.verdict else {
        panic!("{:?}", call.verdict)
    };
    assert!(
        reason.contains("rewrite_b") && reason.contains("fails closed"),
        "{reason}"
    );
    assert_eq!(call.input, None);
    assert_eq!(call.rewrites.len(), 1, "only rewrite_a's applied");
}

fn gatekeepers(config: &str) -> TempAgent {
    TempAgent::new()
        .hook("testing/hooks/gatekeeper.rs", "gate_a.rs")
        .hook("testing/hooks/gatekeeper.rs", "gate_b.rs")
        .config(&format!("order = [\"gate_a\", \"gate_b\"]\n{config}"))
}

#[test]
fn a_prompt_gate_blocks_on_the_first_block_with_every_answer_and_context_kept() {
    let agent = gatekeepers(
        "[hooks.\"gate_a\"]\nconfig = { context = \"from a\" }\n\
         [hooks.\"gate_b\"]\nconfig = { block_word = \"secret\", context = \"from b\" }\n",
    );
    let Resolution::Gate(g) = resolved(
        &agent,
        &event("prompt.submitted", json!({"prompt": "the secret is 42"})),
    ) else {
        panic!("a gate");
    };
    assert_eq!(g.verdict, Gate::Block("the prompt holds `secret`".into()));
    assert_eq!(g.decided_by.as_deref(), Some("gate_b"));
    assert!(!g.failure && !g.capped);
    let answers: Vec<(&str, &Gate)> = g
        .answers
        .iter()
        .map(|v| (v.hook.as_str(), &v.answer))
        .collect();
    assert_eq!(
        answers,
        [
            ("gate_a", &Gate::Pass),
            ("gate_b", &Gate::Block("the prompt holds `secret`".into()))
        ]
    );
    let context: Vec<(&str, &str)> = g
        .context
        .iter()
        .map(|c| (c.hook.as_str(), c.text.as_str()))
        .collect();
    assert_eq!(context, [("gate_a", "from a"), ("gate_b", "from b")]);
    let Resolution::Gate(g) = resolved(
        &agent,
        &event("prompt.submitted", json!({"prompt": "hello"})),
    ) else {
        panic!("a gate");
    };
    assert_eq!((g.verdict, g.decided_by), (Gate::Pass, None));
}

#[test]
fn continues_join_and_the_loop_governor_caps_them() {
    let agent = gatekeepers(
        "[governor]\nmax_continues = 2\n\
         [hooks.\"gate_a\"]\nconfig = { keep_going = \"run the tests\" }\n\
         [hooks.\"gate_b\"]\nconfig = { keep_going = \"fix the lint\" }\n",
    );
    let rt = load(agent.path());
    let stop = event("turn.stopping", json!({"continued": true}));
    let verdicts: Vec<(Gate, bool)> = (0..4)
        .map(|_| match rt.dispatch(&stop).unwrap().resolution {
            Some(Resolution::Gate(g)) => (g.verdict, g.capped),
            other => panic!("{other:?}"),
        })
        .collect();
    let go = (
        Gate::Continue("run the tests\n\nfix the lint".into()),
        false,
    );
    assert_eq!(verdicts, [go.clone(), go.clone(), (Gate::Pass, true), go]);
}

#[test]
fn block_gates_block_compaction_tasks_and_config_changes() {
    let agent = TempAgent::new().hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs");
    let rt = load(agent.path());
    for (kind, data, reason) in [
        (
            "compaction.requested",
            json!({}),
            "compaction is off for this agent",
        ),
        (
            "task.created",
            json!({"task_id": "t1", "subject": "refactor"}),
            "no new tasks: `refactor`",
        ),
        (
            "config.changed",
            json!({"source": "project_settings"}),
            "settings are pinned: project_settings",
        ),
    ] {
        match rt.dispatch(&event(kind, data)).unwrap().resolution {
            Some(Resolution::Gate(g)) => {
                assert_eq!(g.verdict, Gate::Block(reason.into()), "{kind}")
            }
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn a_permission_request_is_denied_with_interrupt_or_allowed() {
    let agent = gatekeepers("[hooks.\"gate_b\"]\nconfig = { deny_tool = \"Bash\" }\n");
    let ask = |tool: &str| {
        event(
            "permission.requested",
            json!({"tool": tool, "input": {"command": "git push"}}),
        )
    };
    let Resolution::Permission(p) = resolved(&agent, &ask("Bash")) else {
        panic!("a permission decision");
    };
    assert_eq!(
        p.verdict,
        Permission::Deny {
            message: "`Bash` needs a human here".into(),
            interrupt: true
        }
    );
    assert_eq!(p.decided_by.as_deref(), Some("gate_b"));
    let Resolution::Permission(p) = resolved(&agent, &ask("Read")) else {
        panic!("a permission decision");
    };
    assert_eq!(p.verdict, Permission::Allow { rewrite: None });
    assert_eq!(p.decided_by.as_deref(), Some("gate_a"));
    assert_eq!(p.input, None, "nobody rewrote it");
}

/// Two permission rewriters (`rewrite_a`, `rewrite_b`, in that order) and a
/// gatekeeper after them that denies `Bash`'s requests and allows the rest.
#[test]
fn permission_rewrites_chain_in_registration_order_and_a_deny_drops_them() {
    let agent = TempAgent::new()
        .hook("testing/hooks/rewriter.rs", "rewrite_a.rs")
        .hook("testing/hooks/rewriter.rs", "rewrite_b.rs")
        .hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs")
        .config(
            "order = [\"rewrite_a\", \"rewrite_b\", \"gatekeeper\"]\n\
             [hooks.\"rewrite_a\"]\nconfig = { suffix = \" --a\", permission = true }\n\
             [hooks.\"rewrite_b\"]\nconfig = { suffix = \" --b\", permission = true }\n\
             [hooks.\"gatekeeper\"]\nconfig = { deny_tool = \"Bash\" }\n",
        );
    let ask = |tool: &str| {
        event(
            "permission.requested",
            json!({"tool": tool, "input": {"command": "git push", "timeout": 5}}),
        )
    };
    for threads in [1, 2] {
        let mut rt = load(agent.path());
        rt.set_threads(threads).unwrap();
        let Some(Resolution::Permission(p)) = rt.dispatch(&ask("Read")).unwrap().resolution else {
            panic!("a permission decision");
        };
        assert_eq!(p.verdict, Permission::Allow { rewrite: None });
        let rewrites: Vec<(&str, Vec<String>, &serde_json::Value)> = p
            .rewrites
            .iter()
            .map(|r| (r.hook.as_str(), r.changed.clone(), &r.input))
            .collect();
        assert_eq!(
            rewrites,
            [
                (
                    "rewrite_a",
                    vec!["command".to_owned()],
                    &json!({"command": "git push --a", "timeout": 5})
                ),
                (
                    "rewrite_b",
                    vec!["command".to_owned()],
                    &json!({"command": "git push --a --b", "timeout": 5})
                ),
            ],
            "threads {threads}: the second rewriter starts from the first one's input"
        );
        assert_eq!(
            p.input,
            Some(json!({"command": "git push --a --b", "timeout": 5}))
        );
        let context: Vec<(&str, &str)> = p
            .context
            .iter()
            .map(|c| (c.hook.as_str(), c.text.as_str()))
            .collect();
        assert_eq!(
            context,
            [
                ("rewrite_a", "saw `git push`"),
                ("rewrite_b", "saw `git push --a`")
            ]
        );
    }
    // The gatekeeper, last, denies `Bash`: the deny wins and drops both
    // rewrites, which stay on record.
    let Resolution::Permission(p) = resolved(&agent, &ask("Bash")) else {
        panic!("a permission decision");
    };
    assert_eq!(
        p.verdict,
        Permission::Deny {
            message: "`Bash` needs a human here".into(),
            interrupt: true
        }
    );
    assert_eq!(p.decided_by.as_deref(), Some("gatekeeper"));
    assert_eq!(p.input, None, "a deny drops the rewrites");
    let hooks: Vec<&str> = p.rewrites.iter().map(|r| r.hook.as_str()).collect();
    assert_eq!(hooks, ["rewrite_a", "rewrite_b"], "both stay on record");
}

#[test]
fn a_hook_built_against_world_0_2_0_votes_as_before_and_observes_gates() {
    let agent = TempAgent::new().hook("testing/hooks/gatekeeper.rs", "gatekeeper.rs");
    std::fs::copy(
        repo().join("tests/fixtures/witness-v0.2.0.wasm"),
        agent.path().join("hooks/witness.wasm"),
    )
    .unwrap();
    let rt = load(agent.path());
    let versions: Vec<(&str, &str)> = rt
        .hooks()
        .iter()
        .map(|h| (h.slug.as_str(), h.world_version))
        .collect();
    assert_eq!(versions, [("gatekeeper", "0.4.0"), ("witness", "0.2.0")]);
    // Tool calls: its votes count as they did.
    let requested = event(
        "actions.requested",
        json!({"actions": [{"call_id": "c1", "tool": "rm"}, {"call_id": "c2", "tool": "ls"}]}),
    );
    let Some(Resolution::ToolApproval(t)) = rt.dispatch(&requested).unwrap().resolution else {
        panic!("a tool approval");
    };
    let verdicts: Vec<&Approval> = t.calls.iter().map(|c| &c.verdict).collect();
    assert_eq!(
        verdicts,
        [
            &Approval::Deny("witness-v0.2.0 denies rm".into()),
            &Approval::Allow
        ]
    );
    // A gate: it fails, and its failure blocks nothing (it cannot answer a gate).
    let report = rt
        .dispatch(&event("compaction.requested", json!({})))
        .unwrap();
    let outcomes: Vec<(&str, Outcome)> = report
        .deliveries
        .iter()
        .map(|d| (d.hook.as_str(), d.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [("gatekeeper", Outcome::Ok), ("witness", Outcome::Error)]
    );
    let Some(Resolution::Gate(g)) = report.resolution else {
        panic!("a gate");
    };
    let voters: Vec<&str> = g.answers.iter().map(|v| v.hook.as_str()).collect();
    assert_eq!(voters, ["gatekeeper"], "the 0.2.0 hook observes");
    assert_eq!(
        g.verdict,
        Gate::Block("compaction is off for this agent".into())
    );
    assert!(!g.failure);
}

/// `hookrt test` records the new answers (each hook's vote, the rewrites and
/// context in the resolution) and names the field of a change.
#[test]
fn a_replay_records_rewrites_gates_and_context_and_diffs_a_changed_one() {
    let agent = gatekeepers(
        "[hooks.\"gate_a\"]\nconfig = { context = \"from a\" }\n\
         [hooks.\"gate_b\"]\nconfig = { block_word = \"secret\" }\n",
    );
    let events = [event("prompt.submitted", json!({"prompt": "the secret"}))];
    let recorded = hookrt::replay::replay(&load(agent.path()), &events).unwrap();
    let records: Vec<serde_json::Value> = recorded.records.clone();
    assert_eq!(
        records[1]["answer"],
        json!({"answer": "block", "reason": "the prompt holds `secret`"})
    );
    assert_eq!(
        records[2]["resolution"]["gate"]["context"],
        json!([{"hook": "gate_a", "text": "from a"}])
    );
    // The block word changes: the replay names the gate's verdict that moved.
    let expected = recorded.to_jsonl();
    let changed = gatekeepers(
        "[hooks.\"gate_a\"]\nconfig = { context = \"from a\" }\n\
         [hooks.\"gate_b\"]\nconfig = { block_word = \"password\" }\n",
    );
    let now = hookrt::replay::replay(&load(changed.path()), &events).unwrap();
    let fields: Vec<String> = now
        .compare(&expected)
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d.subject, d.field))
        .collect();
    assert!(
        fields.contains(&"resolution resolution.gate.verdict.answer".to_owned()),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"hook gate_b, handler prompt.submitted answer.answer".to_owned()),
        "{fields:?}"
    );
}

#[test]
fn a_hook_built_against_world_0_3_0_still_blocks_continues_and_adds_context() {
    let agent = TempAgent::new().config(
        "[hooks.\"gatekeeper\"]\nconfig = { block_word = \"secret\", keep_going = \"run the tests\", context = \"from 0.3\" }\n",
    );
    std::fs::copy(
        repo().join("tests/fixtures/gatekeeper-v0.3.0.wasm"),
        agent.path().join("hooks/gatekeeper.wasm"),
    )
    .unwrap();
    let rt = load(agent.path());
    assert_eq!(rt.hooks()[0].world_version, "0.3.0");
    let prompt = event("prompt.submitted", json!({"prompt": "the secret is 42"}));
    let Some(Resolution::Gate(g)) = rt.dispatch(&prompt).unwrap().resolution else {
        panic!("a gate");
    };
    assert_eq!(g.verdict, Gate::Block("the prompt holds `secret`".into()));
    let context: Vec<&str> = g.context.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(context, ["from 0.3"]);
    let stop = event("turn.stopping", json!({"continued": false}));
    let Some(Resolution::Gate(g)) = rt.dispatch(&stop).unwrap().resolution else {
        panic!("a gate");
    };
    assert_eq!(g.verdict, Gate::Continue("run the tests".into()));
}
