//! The agents' bridges, input side, for every agent hookrt bridges (Claude
//! Code's own, in more detail, is `claude.rs`): each event of the pinned
//! release (one input per event in `tests/fixtures/<agent>/`) as an
//! envelope of its kind, the session and turn where the agent names them,
//! where it came from in the data, subagents in their scope, an event
//! hookrt does not know observed, and a broken input refused with the
//! reason.

use hookrt::front::bridge::{Bridge, BridgeError};
use hookrt::{EventClass, class_of};
use serde_json::{Value, json};

use crate::common::agent_fixture;

/// The fixtures' folder of `bridge`.
fn folder(bridge: Bridge) -> &'static str {
    match bridge {
        Bridge::ClaudeCode => "claude",
        other => other.name(),
    }
}

/// The envelope of `bridge`'s `event` fixture, read as its command hook does.
fn read(bridge: Bridge, event: &str) -> hookrt::Envelope {
    let input = agent_fixture(folder(bridge), event);
    bridge
        .read(bridge.name(), &input, Some(event), "command")
        .unwrap_or_else(|e| panic!("{} {event}: {e}", bridge.name()))
        .envelope
}

#[test]
fn every_event_of_every_agent_maps_to_its_kind_and_says_where_it_came_from() {
    for bridge in Bridge::ALL {
        for (event, kind) in bridge.events() {
            let e = read(bridge, event);
            assert_eq!(&e.kind, kind, "{} {event}", bridge.name());
            assert_eq!(e.coordinates.agent, bridge.name());
            assert!(!e.coordinates.session.is_empty());
            assert_eq!(
                e.data["bridge"],
                json!({"agent": bridge.name(), "event": event, "transport": "command"}),
                "{} {event}",
                bridge.name()
            );
            for path in ["transcript_path", "transcriptPath", "agent_transcript_path"] {
                assert!(
                    e.data.get(path).is_none(),
                    "{} {event} drops {path}",
                    bridge.name()
                );
            }
            // A tool call to decide on is one action, its step its id.
            if kind == &"actions.requested" {
                let actions = e.data["actions"].as_array().unwrap();
                assert_eq!(actions.len(), 1, "{} {event}", bridge.name());
                assert_eq!(
                    e.coordinates.step.as_deref(),
                    actions[0]["call_id"].as_str()
                );
                assert!(actions[0]["tool"].is_string());
            }
        }
    }
}

#[test]
fn each_agents_tool_call_reaches_the_policy_in_the_same_shape() {
    // The shell command of each agent's tool call: the tool name the
    // example policy knows, the command where it reads it.
    for (bridge, event, tool) in [
        (Bridge::Codex, "PreToolUse", "Bash"),
        (Bridge::Copilot, "preToolUse", "bash"),
        (Bridge::Cursor, "beforeShellExecution", "shell"),
        (Bridge::Gemini, "BeforeTool", "run_shell_command"),
    ] {
        let e = read(bridge, event);
        let action = &e.data["actions"][0];
        assert_eq!(action["tool"], tool, "{} {event}", bridge.name());
        assert!(action["input"]["command"].is_string(), "{action}");
    }
    // Copilot's arguments, also as JSON text (older releases), and
    // Cursor's MCP input, which may be JSON text too, become objects.
    let mut call: Value = serde_json::from_str(&agent_fixture("copilot", "preToolUse")).unwrap();
    call["toolArgs"] = json!("{\"command\": \"rm -rf build\"}");
    let e = Bridge::Copilot
        .read("copilot", &call.to_string(), Some("preToolUse"), "command")
        .unwrap()
        .envelope;
    assert_eq!(
        e.data["actions"][0]["input"],
        json!({"command": "rm -rf build"})
    );
    let mcp = read(Bridge::Cursor, "beforeMCPExecution");
    assert_eq!(
        mcp.data["actions"][0]["input"],
        json!({"title": "x", "server_url": "https://mcp.example.com/sse"})
    );
}

#[test]
fn turns_and_subagents_are_where_each_agent_names_them() {
    let codex = read(Bridge::Codex, "PreToolUse");
    assert_eq!(
        codex.coordinates.turn.as_deref(),
        Some("01a2434d-a756-7803-84ee-646d3f648b4c")
    );
    assert_eq!(codex.coordinates.step.as_deref(), Some("call_1"));
    let cursor = read(Bridge::Cursor, "preToolUse");
    assert_eq!(
        cursor.coordinates.turn.as_deref(),
        Some("490b90b7-a2ce-4c2c-bb76-cb77b125df2f")
    );
    assert_eq!(
        cursor.coordinates.session,
        "668320d2-2fd8-4888-b33c-2a466fec86e7"
    );
    for (bridge, event, scope) in [
        (Bridge::Codex, "SubagentStop", "explorer"),
        (Bridge::Codex, "SubagentStart", "explorer"),
        (Bridge::Copilot, "subagentStop", "reviewer"),
        (Bridge::Cursor, "subagentStop", "explore"),
    ] {
        let e = read(bridge, event);
        assert_eq!(
            e.coordinates.subagent.as_deref(),
            Some(scope),
            "{} {event}",
            bridge.name()
        );
    }
    // A Codex tool call from inside a subagent: its hooks decide it.
    let mut call: Value = serde_json::from_str(&agent_fixture("codex", "PreToolUse")).unwrap();
    call["agent_id"] = "agent-7".into();
    call["agent_type"] = "Explorer Bot".into();
    let e = Bridge::Codex
        .read("codex", &call.to_string(), None, "command")
        .unwrap()
        .envelope;
    assert_eq!(e.coordinates.subagent.as_deref(), Some("explorer-bot"));
    assert_eq!(read(Bridge::Codex, "Stop").coordinates.subagent, None);
}

#[test]
fn an_event_an_agent_adds_later_is_observed_not_refused() {
    for (bridge, name, kind) in [
        (
            Bridge::ClaudeCode,
            "PreWidgetRender",
            "custom.claude.pre_widget_render",
        ),
        (Bridge::Codex, "PostSkillRun", "custom.codex.post_skill_run"),
        (
            Bridge::Gemini,
            "AfterCompress",
            "custom.gemini.after_compress",
        ),
        (
            Bridge::Cursor,
            "beforeTabAccept",
            "custom.cursor.before_tab_accept",
        ),
        (Bridge::Copilot, "postResult", "custom.copilot.post_result"),
    ] {
        let input = match bridge {
            Bridge::Copilot => json!({"sessionId": "s", "widget": 7}),
            Bridge::Cursor => {
                json!({"hook_event_name": name, "conversation_id": "s", "widget": 7})
            }
            _ => json!({"hook_event_name": name, "session_id": "s", "widget": 7}),
        };
        let e = bridge
            .read(bridge.name(), &input.to_string(), Some(name), "http")
            .unwrap()
            .envelope;
        assert_eq!(e.kind, kind);
        assert_eq!(class_of(&e.kind), EventClass::Observe);
        assert_eq!(e.data["widget"], 7);
        assert_eq!(e.data["bridge"]["transport"], "http");
    }
}

#[test]
fn an_input_that_is_no_hook_input_is_refused_naming_the_agent_and_the_field() {
    let err = |bridge: Bridge, input: &str, event: Option<&str>| {
        bridge
            .read(bridge.name(), input, event, "command")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(Bridge::Copilot, r#"{"sessionId": "s"}"#, None),
        "not a Copilot CLI hook input: the input does not name its event: give it with --event"
    );
    assert_eq!(
        err(
            Bridge::Copilot,
            r#"{"toolName": "bash"}"#,
            Some("preToolUse")
        ),
        "not a Copilot CLI hook input: `sessionId` or `session_id` is missing"
    );
    assert_eq!(
        err(Bridge::Cursor, r#"{"hook_event_name": "stop"}"#, None),
        "not a Cursor hook input: `conversation_id` or `session_id` is missing"
    );
    assert_eq!(
        err(
            Bridge::Gemini,
            r#"{"hook_event_name": "BeforeTool", "session_id": "s"}"#,
            None
        ),
        "not a Gemini CLI hook input: BeforeTool without `tool_name`"
    );
    assert_eq!(
        err(
            Bridge::Cursor,
            r#"{"hook_event_name": "beforeShellExecution", "conversation_id": "s"}"#,
            None
        ),
        "not a Cursor hook input: beforeShellExecution without `command`"
    );
    assert!(matches!(
        Bridge::Codex.read("codex", "[", None, "command"),
        Err(BridgeError::Json(_))
    ));
    // The event the input names wins over the one the command line gives.
    let e = Bridge::Codex
        .read(
            "codex",
            &agent_fixture("codex", "Stop"),
            Some("PreToolUse"),
            "command",
        )
        .unwrap();
    assert_eq!(e.name, "Stop");
}
