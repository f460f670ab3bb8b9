//! The OpenHands bridge (PyPI `openhands` 1.16.0, its CLI). OpenHands reads
//! `.openhands/hooks.json` in Claude Code's grouped shape, but it is not
//! Claude Code's dialect: each entry is one shell line (`args` is dropped),
//! a key it does not know stops the whole run, its input is its own
//! (`event_type`, `tool_name`, `tool_input`, `tool_response`, `message`,
//! `session_id`, `working_dir`, `metadata`: the same keys for every event)
//! and it reads `decision`, `reason` and `additionalContext`, not
//! `hookSpecificOutput`. It names no tool call: a call's id is a digest of
//! its input.
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "OpenHands (`front/bridge/openhands.rs`)"; ADR 0010.

use serde_json::{Map, Value, json};

use super::hook_input::{field, object_of, required_text};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
};
use super::reply;
use crate::delivery::record::Resolution;

/// Every hook event of the pinned OpenHands (any other key in its file
/// stops it) and its kind.
const OPENHANDS_EVENTS: [(&str, &str); 6] = [
    ("SessionStart", "session.started"),
    ("UserPromptSubmit", "prompt.submitted"),
    ("PreToolUse", "actions.requested"),
    ("PostToolUse", "action.result"),
    ("Stop", "turn.stopping"),
    ("SessionEnd", "session.completed"),
];

/// The OpenHands events that gate something (exit 2 blocks them).
const OPENHANDS_GATES: [&str; 2] = ["PreToolUse", "UserPromptSubmit"];

/// The event OpenHands reads context on: a second text part of the prompt.
const OPENHANDS_CONTEXT_EVENTS: [&str; 1] = ["UserPromptSubmit"];

/// How OpenHands' hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "openhands",
    label: "OpenHands",
    word: "openhands",
    events: &OPENHANDS_EVENTS,
    event_field: Some("event_type"),
    session_fields: &["session_id"],
    id_field: None,
    subagent_fields: None,
    kept: &[],
    dropped: &["tool_response", "metadata"],
    transcripts: None,
    map: openhands_data,
    turn_field: None,
    gates: &OPENHANDS_GATES,
    context_events: &OPENHANDS_CONTEXT_EVENTS,
    answer: openhands_answer,
    refusal: openhands_refusal,
    silence: Silence::Nothing,
    refuses_in_json: &[],
    install: Some(Install {
        shape: Shape::Grouped,
        project: ".openhands/hooks.json",
        user: ".openhands/hooks.json",
        home_env: None,
        tool_events: &["PreToolUse", "PostToolUse"],
        not_installed: &[],
        http_hooks: false,
        command_only: &[],
        command: CommandForm::Line("command"),
        typed: true,
        name: None,
        timeout: ("timeout", TimeUnit::Seconds),
        fail_closed: None,
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "openhandsHook",
        input_schema: "OpenHandsHookInput",
    },
};

fn openhands_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    // The project (the packs read `cwd`).
    let cwd = text("working_dir");
    let mut step = None;
    let data = match event {
        "PreToolUse" | "PostToolUse" => {
            let tool = required_text(fields, "tool_name", event)?;
            let call_id = id.stand_in("call");
            step = Some(call_id.clone());
            let input = object_of(text("tool_input"));
            match event {
                "PreToolUse" => {
                    json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}], "cwd": cwd})
                }
                _ => {
                    let response = text("tool_response");
                    let failed = response.get("is_error") == Some(&Value::Bool(true));
                    let status = if failed { "error" } else { "ok" };
                    json!({"call_id": call_id, "tool": tool, "input": input, "status": status,
                        "output": response, "cwd": cwd})
                }
            }
        }
        "UserPromptSubmit" => json!({"prompt": text("message"), "cwd": cwd}),
        "SessionStart" => json!({"agent_name": id.agent(), "cwd": cwd}),
        "Stop" => {
            let reason = fields
                .get("metadata")
                .and_then(|m| m.get("reason"))
                .cloned();
            json!({"continued": false, "stop_reason": reason, "cwd": cwd})
        }
        "SessionEnd" => json!({"cwd": cwd}),
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// OpenHands' words: `deny` for a deny, an ask (`--headless` asks no one),
/// a rewrite (it takes no input back), a blocked prompt and a stop kept
/// going (the reason is the next user message).
const OPENHANDS_WORDS: reply::Decisions = reply::Decisions {
    deny: "deny",
    ask: None,
    allow: "allow",
    keep_going: "deny",
    no_rewrite: "OpenHands takes no rewritten input",
};

/// What OpenHands reads back after event `name`: `decision` (`allow`,
/// `deny`) with `reason`, `additionalContext`; `None` when there is
/// nothing to say.
fn openhands_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    let mut out = reply::decided(&OPENHANDS_WORDS, resolution).unwrap_or_default();
    let takes_context = OPENHANDS_CONTEXT_EVENTS.contains(&name);
    reply::add_context(&mut out, "additionalContext", resolution, takes_context);
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The answer that refuses gate `name`: its deny (exit 2 blocks too).
fn openhands_refusal(_name: &str, reason: &str) -> Value {
    reply::decision_refusal(&OPENHANDS_WORDS, reason)
}
