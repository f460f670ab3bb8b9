//! Validated edits: applied in order, checked after each; an invalid edit or a
//! trap restores the event's one backup, so no partial edit survives.

use hookrt::Resolution;
use hookrt::{EditResult, EditStatus};
use hookrt::{Envelope, Outcome};

use crate::common::{TempAgent, load, transcript};

fn step_completed() -> Envelope {
    transcript()
        .into_iter()
        .find(|e| e.kind == "step.completed")
        .unwrap()
}

fn edit_with(hooks: &[&str]) -> EditResult {
    let mut agent = TempAgent::new();
    for h in hooks {
        agent = agent.hook(&format!("testing/hooks/{h}.rs"), &format!("{h}.rs"));
    }
    let order = hooks
        .iter()
        .map(|h| format!("{h:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let agent = agent.config(&format!("order = [{order}]\n"));
    match load(agent.path())
        .dispatch(&step_completed())
        .unwrap()
        .resolution
    {
        Some(Resolution::Edit(r)) => r,
        other => panic!("expected an edit result, got {other:?}"),
    }
}

fn outcomes(r: &EditResult) -> Vec<(&str, &EditStatus, bool)> {
    r.accounts
        .iter()
        .map(|a| (a.hook.as_str(), &a.status, a.rolled_back))
        .collect()
}

#[test]
fn a_valid_edit_is_applied_and_accounted() {
    let r = edit_with(&["extras_editor"]);
    let original = &step_completed().data["state"];
    assert!(r.changed && r.rolled_back.is_none());
    assert_eq!(
        r.state["extras"]["extras_editor"],
        serde_json::json!({"seen": step_completed().data["index"]})
    );
    assert_eq!(r.state["messages"], original["messages"]);
    assert_eq!(
        outcomes(&r),
        [("extras_editor", &EditStatus::Applied, false)]
    );
}

#[test]
fn an_orphaned_tool_call_rolls_back_every_edit_of_the_event_including_earlier_valid_ones() {
    let r = edit_with(&["extras_editor", "orphaning_editor", "history_rewriter"]);
    let original = &step_completed().data["state"];
    assert_eq!(&r.state, original, "the backup is restored");
    assert!(!r.changed);
    let reason = r.rolled_back.as_deref().unwrap();
    assert!(
        reason.starts_with("hook `orphaning_editor`: tool call `")
            && reason.ends_with("` lost its result"),
        "{reason}"
    );
    let got = outcomes(&r);
    assert_eq!(
        got[0],
        ("extras_editor", &EditStatus::Applied, true),
        "the earlier valid edit was undone"
    );
    assert!(matches!(
        got[1],
        ("orphaning_editor", EditStatus::Invalid(_), false)
    ));
    assert_eq!(got[2], ("history_rewriter", &EditStatus::Ignored, false));
}

#[test]
fn a_trap_mid_edit_rolls_back() {
    let r = edit_with(&["extras_editor", "trapping_editor"]);
    assert_eq!(&r.state, &step_completed().data["state"]);
    assert_eq!(
        r.rolled_back.as_deref(),
        Some("hook `trapping_editor` failed (trap)")
    );
    assert_eq!(
        outcomes(&r),
        [
            ("extras_editor", &EditStatus::Applied, true),
            ("trapping_editor", &EditStatus::Failed(Outcome::Trap), false)
        ]
    );
}

#[test]
fn immutable_history_cannot_be_rewritten() {
    let r = edit_with(&["history_rewriter"]);
    assert_eq!(
        r.rolled_back.as_deref(),
        Some("hook `history_rewriter`: message 0 is in the immutable history and was changed")
    );
}

#[test]
fn the_context_pruner_keeps_pairs_and_records_what_it_pruned() {
    let agent = TempAgent::new()
        .hook("agent/hooks/context-pruner.rs", "context-pruner.rs")
        .config("[hooks.context-pruner]\nconfig = { keep = 1 }\n");
    let rt = load(agent.path());
    let last = transcript()
        .into_iter()
        .filter(|e| e.kind == "step.completed")
        .last()
        .unwrap();
    let Some(Resolution::Edit(r)) = rt.dispatch(&last).unwrap().resolution else {
        panic!("edit event")
    };
    assert!(r.changed && r.rolled_back.is_none(), "{:?}", r.rolled_back);
    let results = r.state["tool_results"].as_array().unwrap();
    let pruned = results
        .iter()
        .filter(|t| t["output"] == "[pruned by context-pruner]")
        .count();
    assert_eq!(
        pruned,
        results.len() - 1,
        "all but the newest result pruned"
    );
    assert_eq!(
        r.state["tool_calls"].as_array().unwrap().len(),
        results.len(),
        "pairs kept"
    );
    assert_eq!(r.state["extras"]["context-pruner"]["pruned"], pruned);
}

#[test]
fn a_failing_wildcard_observer_does_not_roll_back_edits() {
    let agent = TempAgent::new()
        .hook("testing/hooks/extras_editor.rs", "extras_editor.rs")
        .hook("hostile/hooks/panic.rs", "panic.rs");
    let Some(Resolution::Edit(r)) = load(agent.path())
        .dispatch(&step_completed())
        .unwrap()
        .resolution
    else {
        panic!("edit event")
    };
    assert!(r.changed && r.rolled_back.is_none());
    assert_eq!(
        outcomes(&r),
        [
            ("extras_editor", &EditStatus::Applied, false),
            ("panic", &EditStatus::ObserverFailed(Outcome::Trap), false)
        ]
    );
}

#[test]
fn a_subagent_edit_hook_owns_extras_under_its_bare_slug() {
    let agent = TempAgent::new().hook(
        "testing/hooks/extras_editor.rs",
        "../subagents/researcher/hooks/extras_editor.rs",
    );
    let mut e = step_completed();
    e.coordinates.subagent = Some("researcher".into());
    let Some(Resolution::Edit(r)) = load(agent.path()).dispatch(&e).unwrap().resolution else {
        panic!("edit event")
    };
    assert_eq!(r.rolled_back, None);
    assert_eq!(
        outcomes(&r),
        [(
            "subagents/researcher/extras_editor",
            &EditStatus::Applied,
            false
        )]
    );
    assert_eq!(
        r.state["extras"]["extras_editor"],
        serde_json::json!({"seen": e.data["index"]})
    );
}
