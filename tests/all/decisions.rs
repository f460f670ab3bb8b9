//! Decisions: tool approval merges deny > ask > allow > abstain whatever the
//! hook order; failures fail closed and say so; file-edit ownership stops at
//! the first owner and `failed` is never turned into `not-handled`.

use hookrt::Resolution;
use hookrt::{Approval, FileEdit, ToolApproval};
use hookrt::{Envelope, Outcome};

use crate::common::{TempAgent, load, transcript};

fn testing(hooks: &[&str], config: &str) -> TempAgent {
    let mut agent = TempAgent::new();
    for h in hooks {
        agent = agent.hook(&format!("testing/hooks/{h}.rs"), &format!("{h}.rs"));
    }
    agent.config(config)
}

fn event(kind: &str) -> Envelope {
    transcript().into_iter().find(|e| e.kind == kind).unwrap()
}

fn approval(agent: &TempAgent, e: &Envelope) -> ToolApproval {
    match load(agent.path()).dispatch(e).unwrap().resolution {
        Some(Resolution::ToolApproval(t)) => t,
        other => panic!("expected a tool approval, got {other:?}"),
    }
}

fn file_edit(agent: &TempAgent, e: &Envelope) -> (hookrt::FileEditDecision, usize) {
    let report = load(agent.path()).dispatch(e).unwrap();
    match report.resolution {
        Some(Resolution::FileEdit(f)) => (f, report.deliveries.len()),
        other => panic!("expected a file-edit decision, got {other:?}"),
    }
}

#[test]
fn deny_beats_allow_whatever_the_hook_order() {
    let requested = event("actions.requested");
    for order in [
        "[\"allow_all\", \"deny_all\"]",
        "[\"deny_all\", \"allow_all\"]",
    ] {
        let agent = testing(&["allow_all", "deny_all"], &format!("order = {order}\n"));
        let t = approval(&agent, &requested);
        assert!(!t.calls.is_empty());
        for call in &t.calls {
            assert_eq!(
                call.verdict,
                Approval::Deny("deny_all says no".into()),
                "order {order}"
            );
            assert_eq!(call.decided_by.as_deref(), Some("deny_all"));
            assert!(!call.failure);
            let hooks: Vec<&str> = call.answers.iter().map(|a| a.hook.as_str()).collect();
            assert_eq!(hooks.len(), 2, "every answer is recorded with its hook");
        }
    }
}

#[test]
fn ask_beats_allow_and_abstain_leaves_the_others() {
    let mut requested = transcript()
        .into_iter()
        .find(|e| e.kind == "actions.requested" && e.data.to_string().contains("http_fetch"))
        .unwrap();
    // The transcript's request holds http_fetch alone: add a call ask_network
    // abstains on, so "the others" is not an empty list.
    requested.data["actions"].as_array_mut().unwrap().push(
        serde_json::json!({"call_id": "call_x", "tool": "read_file", "input": {"path": "a.txt"}}),
    );
    let agent = testing(&["allow_all", "ask_network"], "");
    let t = approval(&agent, &requested);
    let http = t.calls.iter().find(|c| c.tool == "http_fetch").unwrap();
    assert_eq!(
        http.verdict,
        Approval::Ask("ask_network: allow `http_fetch`?".into())
    );
    let others: Vec<_> = t.calls.iter().filter(|c| c.tool != "http_fetch").collect();
    assert_eq!(others.len(), 1, "the request has a call besides http_fetch");
    assert!(others.iter().all(|c| c.verdict == Approval::Allow));
}

#[test]
fn a_trapping_decision_hook_is_a_deny_marked_as_a_failure_when_failing_closed() {
    let requested = event("actions.requested");
    let agent = testing(&["allow_all", "trapping_decider"], "");
    let t = approval(&agent, &requested);
    for call in &t.calls {
        assert!(
            matches!(&call.verdict, Approval::Deny(reason) if reason.contains("`trapping_decider` failed (trap)")),
            "{:?}",
            call.verdict
        );
        assert!(call.failure, "distinguishable from a normal deny");
        assert_eq!(call.decided_by.as_deref(), Some("trapping_decider"));
        let trapped = call
            .answers
            .iter()
            .find(|a| a.hook == "trapping_decider")
            .unwrap();
        assert_eq!(trapped.failure, Some(Outcome::Trap));
    }
    // Failing open is a choice, and still never reads as allow from the failed hook.
    let open = testing(
        &["allow_all", "trapping_decider"],
        "[hooks.trapping_decider]\non_failure = \"abstain\"\n",
    );
    let t = approval(&open, &requested);
    for call in &t.calls {
        assert_eq!(
            (&call.verdict, call.decided_by.as_deref()),
            (&Approval::Allow, Some("allow_all"))
        );
        let trapped = call
            .answers
            .iter()
            .find(|a| a.hook == "trapping_decider")
            .unwrap();
        assert_eq!(
            (&trapped.answer, trapped.failure),
            (&Approval::Abstain, Some(Outcome::Trap))
        );
    }
}

#[test]
fn a_wildcard_observer_that_fails_does_not_decide() {
    let requested = event("actions.requested");
    let agent = testing(&["allow_all"], "").hook("hostile/hooks/panic.rs", "panic.rs");
    let t = approval(&agent, &requested);
    assert_eq!(t.calls.len(), 2);
    assert!(
        t.calls
            .iter()
            .all(|c| c.verdict == Approval::Allow && c.decided_by.as_deref() == Some("allow_all"))
    );
}

#[test]
fn a_failed_file_edit_aborts_the_fallback_and_stops_later_owners() {
    let edit = event("file.edit.requested");
    let agent = testing(
        &["file_rejecter", "file_owner"],
        "order = [\"file_rejecter\", \"file_owner\"]\n",
    );
    let (d, delivered) = file_edit(&agent, &edit);
    assert_eq!(
        d.result,
        FileEdit::Failed("rejected by file_rejecter".into())
    );
    assert_eq!(
        (d.decided_by.as_deref(), d.failure),
        (Some("file_rejecter"), false)
    );
    assert_eq!(
        (d.answers.len(), delivered),
        (1, 1),
        "file_owner is not asked: nobody writes after a failure"
    );

    let agent = testing(
        &["file_rejecter", "file_owner"],
        "order = [\"file_owner\", \"file_rejecter\"]\n",
    );
    let (d, _) = file_edit(&agent, &edit);
    assert_eq!(
        (d.result, d.decided_by.as_deref()),
        (FileEdit::Applied, Some("file_owner"))
    );
}

#[test]
fn a_trapping_file_edit_owner_fails_closed_not_to_not_handled() {
    let edit = event("file.edit.requested");
    let agent = testing(
        &["trapping_decider", "file_owner"],
        "order = [\"trapping_decider\", \"file_owner\"]\n",
    );
    let (d, _) = file_edit(&agent, &edit);
    assert!(
        matches!(&d.result, FileEdit::Failed(m) if m.contains("`trapping_decider` failed (trap)")),
        "{:?}",
        d.result
    );
    assert!(d.failure);
    let open = testing(
        &["trapping_decider", "file_owner"],
        "order = [\"trapping_decider\", \"file_owner\"]\n[hooks.trapping_decider]\non_failure = \"abstain\"\n",
    );
    let (d, _) = file_edit(&open, &edit);
    assert_eq!(
        (d.result, d.decided_by.as_deref()),
        (FileEdit::Applied, Some("file_owner"))
    );
}

#[test]
fn protected_paths_refuses_protected_files_and_stale_edits() {
    let agent = TempAgent::new()
        .hook("agent/hooks/protected-paths.rs", "protected-paths.rs")
        .config("[hooks.protected-paths]\nconfig = { protected = [\"secrets/\"] }\ngrants = [\"log\", \"state\"]\n");
    let rt = load(agent.path());
    let mut edit = event("file.edit.requested");
    let decide = |e: &Envelope| match rt.dispatch(e).unwrap().resolution {
        Some(Resolution::FileEdit(f)) => f.result,
        other => panic!("{other:?}"),
    };
    // Never read: not handled, the agent writes as usual.
    assert_eq!(decide(&edit), FileEdit::NotHandled);
    edit.data["path"] = "secrets/api-key.txt".into();
    assert!(
        matches!(decide(&edit), FileEdit::Failed(m) if m.contains("`secrets/api-key.txt` is protected"))
    );
    // The agent read src/config.rs (hash remembered in state), then its editor changed it.
    for e in transcript().iter().filter(|e| e.kind == "action.result") {
        rt.dispatch(e).unwrap();
    }
    let mut stale = event("file.edit.requested");
    stale.data["before_content"] = "someone else's version".into();
    assert_eq!(
        decide(&stale),
        FileEdit::Failed("content changed since it was read; read it again before editing".into())
    );
    assert_eq!(
        decide(&event("file.edit.requested")),
        FileEdit::NotHandled,
        "unchanged since read"
    );
}

#[test]
fn a_malformed_answer_denies_every_call_with_the_reason_even_when_failing_open() {
    let agent = testing(
        &["short_answer"],
        "[hooks.short_answer]\non_failure = \"abstain\"\n",
    );
    let requested = event("actions.requested");
    assert_eq!(requested.data["actions"].as_array().unwrap().len(), 2);
    let t = approval(&agent, &requested);
    let reason = "policy hook `short_answer` answered 1 approval(s) for 2 requested call(s); denied because a malformed answer fails closed";
    for call in &t.calls {
        assert_eq!(call.verdict, Approval::Deny(reason.to_owned()));
        assert_eq!(call.decided_by.as_deref(), Some("short_answer"));
        assert!(call.failure);
    }
}

#[test]
fn an_approval_request_without_calls_is_refused_with_the_reason() {
    let rt = load(testing(&["allow_all"], "").path());
    for (data, reason) in [
        (serde_json::json!({}), "`actions` is missing"),
        (
            serde_json::json!({"actions": "read_file"}),
            "`actions` is not an array",
        ),
        (serde_json::json!({"actions": []}), "`actions` is empty"),
        (
            serde_json::json!({"actions": [{"tool": "x"}]}),
            "actions[0] has no `call_id`",
        ),
    ] {
        let mut e = event("actions.requested");
        e.data = data.into();
        let err = rt.dispatch(&e).expect_err("refused").to_string();
        assert!(
            err.starts_with(&format!("actions.requested data is not valid: {reason}")),
            "{err}"
        );
        assert!(Envelope::from_json(&serde_json::to_string(&e).unwrap()).is_err());
    }
}

#[test]
fn protected_paths_treats_a_read_of_dot_slash_path_as_a_read_of_path() {
    let agent = TempAgent::new()
        .hook("agent/hooks/protected-paths.rs", "protected-paths.rs")
        .config("[hooks.protected-paths]\nconfig = { protected = [\"secrets/\"] }\ngrants = [\"log\", \"state\"]\n");
    let rt = load(agent.path());
    // The agent read `./src/config.rs`; its edit names `src/config.rs`.
    let mut read = transcript()
        .into_iter()
        .find(|e| e.kind == "action.result" && e.data["output"]["path"].is_string())
        .expect("the transcript reads a file");
    let path = read.data["output"]["path"].as_str().unwrap().to_owned();
    read.data["output"]["path"] = format!("./{path}").into();
    rt.dispatch(&read).unwrap();
    let mut stale = event("file.edit.requested");
    stale.data["path"] = path.clone().into();
    stale.data["before_content"] = "someone else's version".into();
    let Some(Resolution::FileEdit(f)) = rt.dispatch(&stale).unwrap().resolution else {
        panic!("a file-edit decision")
    };
    assert_eq!(
        f.result,
        FileEdit::Failed("content changed since it was read; read it again before editing".into())
    );
}
