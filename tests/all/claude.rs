//! The Claude Code bridge, input side: each documented hook input
//! (tests/fixtures/claude/<Event>.json) as an envelope.

use hookrt::front::bridge::{Bridge, BridgeError};
use hookrt::{EventClass, class_of};
use serde_json::json;

use crate::common::claude_fixture;

#[test]
fn every_hook_event_of_the_pinned_claude_code_maps_to_its_kind() {
    let kinds: Vec<(String, String)> = claude_events()
        .iter()
        .map(|(e, _)| {
            let env = claude_envelope("claude-code", &claude_fixture(e)).expect(e);
            assert_eq!(
                env.coordinates.session,
                "00893aaf-19fa-41d2-8238-13269b9b3ca0"
            );
            assert_eq!(env.coordinates.agent, "claude-code");
            assert_eq!(env.data["cwd"], "/Users/alice/src/hookrt", "{e} keeps cwd");
            for path in ["transcript_path", "agent_transcript_path"] {
                assert!(env.data.get(path).is_none(), "{e} drops {path}");
            }
            (e.to_string(), env.kind)
        })
        .collect();
    // HOOK_EVENTS of @anthropic-ai/claude-agent-sdk 0.3.337, in its order
    // (docs/adr/0003-claude-code-bridge.md).
    let expected = [
        ("PreToolUse", "actions.requested"),
        ("PostToolUse", "action.result"),
        ("PostToolUseFailure", "action.result"),
        ("PostToolBatch", "custom.claude.post_tool_batch"),
        ("Notification", "custom.claude.notification"),
        ("UserPromptSubmit", "prompt.submitted"),
        ("UserPromptExpansion", "custom.claude.user_prompt_expansion"),
        ("SessionStart", "session.started"),
        ("SessionEnd", "session.completed"),
        ("Stop", "turn.stopping"),
        ("StopFailure", "custom.claude.stop_failure"),
        ("Interrupt", "custom.claude.interrupt"),
        ("SubagentStart", "custom.claude.subagent_start"),
        ("SubagentStop", "turn.stopping"),
        ("PreCompact", "compaction.requested"),
        ("PostCompact", "compaction.completed"),
        ("PreModelSwitch", "custom.claude.pre_model_switch"),
        ("PostModelSwitch", "custom.claude.post_model_switch"),
        ("PermissionRequest", "permission.requested"),
        ("PermissionDenied", "custom.claude.permission_denied"),
        ("Setup", "custom.claude.setup"),
        ("TeammateIdle", "custom.claude.teammate_idle"),
        ("TaskCreated", "task.created"),
        ("TaskCompleted", "custom.claude.task_completed"),
        ("Elicitation", "custom.claude.elicitation"),
        ("ElicitationResult", "custom.claude.elicitation_result"),
        ("ConfigChange", "config.changed"),
        ("WorktreeCreate", "custom.claude.worktree_create"),
        ("WorktreeRemove", "custom.claude.worktree_remove"),
        ("InstructionsLoaded", "custom.claude.instructions_loaded"),
        ("CwdChanged", "custom.claude.cwd_changed"),
        ("FileChanged", "custom.claude.file_changed"),
        ("DirectoryAdded", "custom.claude.directory_added"),
        ("MessageDisplay", "custom.claude.message_display"),
        ("PreSkillShellCommand", "actions.requested"),
    ];
    assert_eq!(
        kinds,
        expected.map(|(a, b)| (a.to_owned(), b.to_owned())).to_vec()
    );
}

#[test]
fn an_event_of_its_own_keeps_the_inputs_fields_and_a_failed_tool_is_an_error_result() {
    let batch = claude_envelope("claude-code", &claude_fixture("PostToolBatch")).unwrap();
    assert_eq!(class_of(&batch.kind), EventClass::Observe);
    assert_eq!(batch.data["tool_calls"][1]["tool_use_id"], "toolu_01BATCH2");
    assert_eq!(
        batch.data["prompt_id"],
        "6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f"
    );
    assert!(batch.data.get("hook_event_name").is_none());
    assert!(batch.data.get("session_id").is_none());
    let failed = claude_envelope("claude-code", &claude_fixture("PostToolUseFailure")).unwrap();
    assert_eq!(
        failed.data.value(),
        &json!({"call_id": "toolu_01FAIL23DEF456GHI789JKL0", "tool": "Bash", "status": "error",
                "error": "Command exited with non-zero status code 1", "is_interrupt": false,
                "input": {"command": "npm test"},
                "cwd": "/Users/alice/src/hookrt", "permission_mode": "default",
                "prompt_id": "6f1c2d4e-8a9b-4c3d-9e2f-1a2b3c4d5e6f",
                "bridge": {"agent": "claude-code", "event": "PostToolUseFailure", "transport": "command"}})
    );
    let skill = claude_envelope("claude-code", &claude_fixture("PreSkillShellCommand")).unwrap();
    assert_eq!(class_of(&skill.kind), EventClass::Decision);
    assert_eq!(
        skill.data["actions"],
        json!([{"call_id": "skill-cmd-1", "tool": "Bash", "input": {"command": "git status --short"}, "command_name": "commit"}])
    );
}

#[test]
fn a_tool_use_becomes_one_call_to_decide_on() {
    let e = claude_envelope("claude-code", &claude_fixture("PreToolUse")).unwrap();
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
    let after = claude_envelope("claude-code", &claude_fixture("PostToolUse")).unwrap();
    assert_eq!(after.data["call_id"], "toolu_01XYZ789ABC123DEF456GHI0");
    assert_eq!(after.data["tool"], "Write");
    assert_eq!(after.data["status"], "ok");
}

#[test]
fn every_event_from_inside_a_subagent_is_in_the_subagents_scope() {
    let e = claude_envelope("claude-code", &claude_fixture("SubagentStop")).unwrap();
    assert_eq!(e.coordinates.subagent.as_deref(), Some("explore"));
    assert_eq!(e.data["agent_id"], "def456");
    let main = claude_envelope("claude-code", &claude_fixture("Stop")).unwrap();
    assert_eq!(main.coordinates.subagent, None);
    // A tool call inside a subagent: its hooks decide it.
    let mut call: serde_json::Value = serde_json::from_str(&claude_fixture("PreToolUse")).unwrap();
    call["agent_id"] = "a1".into();
    call["agent_type"] = "myplugin:Code Reviewer".into();
    let e = claude_envelope("claude-code", &call.to_string()).unwrap();
    assert_eq!(
        e.coordinates.subagent.as_deref(),
        Some("myplugin-code-reviewer")
    );
    // `agent_type` alone is the main thread of an `--agent` session.
    call.as_object_mut().unwrap().remove("agent_id");
    let e = claude_envelope("claude-code", &call.to_string()).unwrap();
    assert_eq!(e.coordinates.subagent, None);
    assert_eq!(e.data["agent_type"], "myplugin:Code Reviewer");
}

/// Claude Code sends the very same input again for a new event (a second
/// `Stop` of a turn a hook kept going), and never retries a hook: each
/// reading is an event of its own; the idempotency key, from the input,
/// stays the same.
#[test]
fn the_same_input_twice_is_two_events_with_one_idempotency_key() {
    let a = claude_envelope("claude-code", &claude_fixture("UserPromptSubmit")).unwrap();
    let b = claude_envelope("claude-code", &claude_fixture("UserPromptSubmit")).unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(a.idempotency_key, b.idempotency_key);
    assert_eq!(a.coordinates.sequence, b.coordinates.sequence);
    let c = claude_envelope(
        "claude-code",
        &claude_fixture("UserPromptSubmit").replace("\"prompt\": \"", "\"prompt\": \"again: "),
    )
    .unwrap();
    assert_ne!(a.id, c.id);
    assert_ne!(a.idempotency_key, c.idempotency_key);
}

#[test]
fn an_event_hookrt_does_not_know_is_delivered_as_its_own_observed_kind() {
    for (name, kind) in [
        ("PreWidgetRender", "custom.claude.pre_widget_render"),
        ("MCPServerReady", "custom.claude.mcp_server_ready"),
        ("Weird Name!", "custom.claude.weird_name"),
        ("über", "custom.claude.ber"),
        ("!!!", "custom.claude.unnamed"),
    ] {
        let text = json!({"hook_event_name": name, "session_id": "s", "widget": {"id": 7}});
        let e = claude_envelope("claude-code", &text.to_string()).expect(name);
        assert_eq!(e.kind, kind, "{name}");
        assert_eq!(class_of(&e.kind), EventClass::Observe);
        assert_eq!(e.data["widget"]["id"], 7);
    }
    let long = "A".repeat(10_000);
    let text = json!({"hook_event_name": long, "session_id": "s"});
    let e = claude_envelope("claude-code", &text.to_string()).unwrap();
    assert_eq!(e.kind, format!("custom.claude.{}", "a".repeat(64)));
}

#[test]
fn an_input_that_is_no_hook_input_is_refused_with_the_reason() {
    let err = claude_envelope("claude-code", r#"{"session_id":"s"}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "not a Claude Code hook input: `hook_event_name` is missing"
    );
    let err = claude_envelope(
        "claude-code",
        r#"{"hook_event_name":"PreToolUse","session_id":"s"}"#,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "not a Claude Code hook input: PreToolUse without `tool_name`"
    );
    assert!(matches!(
        claude_envelope("claude-code", "{"),
        Err(BridgeError::Json(_))
    ));
}

/// The answer side sends context on the events in `CONTEXT_EVENTS`; the
/// input side must gather it there: each such event's kind takes context.
#[test]
fn every_event_claude_code_takes_context_on_gathers_it() {
    for event in claude_events_taking_context() {
        let e = claude_envelope("claude-code", &claude_fixture(event)).expect(event);
        assert!(
            hookrt::event::takes_context(&e.kind),
            "{event} ({}) answers additionalContext, but its kind gathers none",
            e.kind
        );
    }
}

/// Claude Code's input as an envelope, read as `hookrt claude-hook` reads it.
fn claude_envelope(agent: &str, input: &str) -> Result<hookrt::Envelope, BridgeError> {
    Bridge::named("claude-code")
        .unwrap()
        .read(agent, input, None, "command")
        .map(|e| e.envelope)
}

/// Every event of the pinned Claude Code and its kind.
fn claude_events() -> &'static [(&'static str, &'static str)] {
    Bridge::named("claude-code").unwrap().events()
}

/// The Claude Code events whose answer takes context.
fn claude_events_taking_context() -> &'static [&'static str] {
    Bridge::named("claude-code")
        .unwrap()
        .protocol()
        .context_events
}
