//! The Claude Code bridge, input side: each documented hook input
//! (tests/fixtures/claude/<Event>.json) as an envelope.

use hookrt::event::{CLAUDE_EVENTS, ClaudeError, claude_envelope};
use hookrt::{EventClass, class_of};
use serde_json::json;

use crate::common::repo;

fn input(event: &str) -> String {
    std::fs::read_to_string(repo().join(format!("tests/fixtures/claude/{event}.json"))).unwrap()
}

#[test]
fn every_documented_hook_event_maps_to_its_kind() {
    let kinds: Vec<(String, String)> = CLAUDE_EVENTS
        .iter()
        .map(|e| {
            let env = claude_envelope("claude-code", &input(e)).expect(e);
            assert_eq!(
                env.coordinates.session,
                "00893aaf-19fa-41d2-8238-13269b9b3ca0"
            );
            assert_eq!(env.coordinates.agent, "claude-code");
            assert_eq!(env.data["cwd"], "/Users/alice/src/hookrt", "{e} keeps cwd");
            assert!(
                env.data.get("transcript_path").is_none(),
                "{e} drops the transcript path"
            );
            (e.to_string(), env.kind)
        })
        .collect();
    let expected = [
        ("SessionStart", "session.started"),
        ("UserPromptSubmit", "message.received"),
        ("PreToolUse", "actions.requested"),
        ("PostToolUse", "action.result"),
        ("Notification", "custom.claude.notification"),
        ("Stop", "turn.completed"),
        ("SubagentStop", "turn.completed"),
        ("PreCompact", "compaction.requested"),
        ("SessionEnd", "session.completed"),
    ];
    assert_eq!(
        kinds,
        expected.map(|(a, b)| (a.to_owned(), b.to_owned())).to_vec()
    );
}

#[test]
fn a_tool_use_becomes_one_call_to_decide_on() {
    let e = claude_envelope("claude-code", &input("PreToolUse")).unwrap();
    assert_eq!(class_of(&e.kind), EventClass::Decision);
    assert_eq!(
        e.data["actions"],
        json!([{"call_id": "toolu_01ABC123DEF456GHI789JKL0", "tool": "Bash",
                "input": {"command": "npm test", "description": "Run test suite", "timeout": 120000, "run_in_background": false}}])
    );
    assert_eq!(
        e.coordinates.step.as_deref(),
        Some("toolu_01ABC123DEF456GHI789JKL0")
    );
    let after = claude_envelope("claude-code", &input("PostToolUse")).unwrap();
    assert_eq!(after.data["call_id"], "toolu_01XYZ789ABC123DEF456GHI0");
    assert_eq!(after.data["tool"], "Write");
    assert_eq!(after.data["status"], "ok");
}

#[test]
fn a_subagent_stop_is_in_the_subagents_scope() {
    let e = claude_envelope("claude-code", &input("SubagentStop")).unwrap();
    assert_eq!(e.coordinates.subagent.as_deref(), Some("explore"));
    assert_eq!(e.data["agent_id"], "def456");
    let main = claude_envelope("claude-code", &input("Stop")).unwrap();
    assert_eq!(main.coordinates.subagent, None);
}

#[test]
fn the_same_input_is_the_same_event_and_another_is_another() {
    let a = claude_envelope("claude-code", &input("UserPromptSubmit")).unwrap();
    let b = claude_envelope("claude-code", &input("UserPromptSubmit")).unwrap();
    assert_eq!(
        (a.id.as_str(), a.idempotency_key.as_str()),
        (b.id.as_str(), b.idempotency_key.as_str())
    );
    let c = claude_envelope(
        "claude-code",
        &input("UserPromptSubmit").replace("\"prompt\": \"", "\"prompt\": \"again: "),
    )
    .unwrap();
    assert_ne!(a.id, c.id);
    assert_ne!(a.idempotency_key, c.idempotency_key);
}

#[test]
fn an_input_hookrt_does_not_stand_in_for_is_refused_with_the_reason() {
    let err = claude_envelope(
        "claude-code",
        r#"{"hook_event_name":"TeammateIdle","session_id":"s"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("not a Claude Code hook input: hook event `TeammateIdle` is not one hookrt stands in for"), "{err}");
    assert!(matches!(
        claude_envelope("claude-code", "{"),
        Err(ClaudeError::Json(_))
    ));
}
