//! The Cline bridge (`cline` 3.0.65, its CLI). Cline runs an executable
//! per event, named after it, from `.cline/hooks/` (or `~/.cline/hooks/`),
//! as `sh FILE` when it starts with `#!/bin/sh` (a binary is run as `bash
//! FILE` and fails open); so `hookrt install --agent cline` writes a
//! `#!/bin/sh` file per event that `exec`s `hookrt hook --agent cline
//! --event NAME`. Its input does not name the event in Cline's file names
//! (`hookName` is `tool_call`, `agent_start`, …): the file does. A tool
//! call is `tool_call: {id, name, input}`; Cline's shell tool is
//! `run_commands` with `{"commands": [...]}`.
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "Cline (`front/bridge/cline.rs`)"; ADR 0009.

use serde_json::{Map, Value, json};

use super::hook_input::{field, first_of};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
};
use super::reply;
use crate::delivery::record::Resolution;

/// Every hook file name of the pinned Cline and its kind.
const CLINE_EVENTS: [(&str, &str); 10] = [
    ("TaskStart", "session.started"),
    ("TaskResume", "session.started"),
    ("UserPromptSubmit", "prompt.submitted"),
    ("PreToolUse", "actions.requested"),
    ("PostToolUse", "action.result"),
    ("PreCompact", "compaction.requested"),
    ("TaskComplete", "turn.stopping"),
    ("TaskError", "custom.cline.task_error"),
    ("TaskCancel", "custom.cline.task_cancel"),
    ("SessionShutdown", "session.completed"),
];

/// The one event Cline waits on that can stop something.
const CLINE_GATES: [&str; 1] = ["PreToolUse"];

/// The events whose answer Cline reads context from.
const CLINE_CONTEXT_EVENTS: [&str; 2] = ["PreToolUse", "PostToolUse"];

/// How Cline's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "cline",
    label: "Cline",
    word: "cline",
    events: &CLINE_EVENTS,
    event_field: None,
    session_fields: &["taskId"],
    id_field: None,
    subagent_fields: None,
    kept: &["agent_id", "parent_agent_id"],
    dropped: &[
        "clineVersion",
        "timestamp",
        "userId",
        "hookName",
        "sessionContext",
        "workspaceInfo",
        "preToolUse",
        "postToolUse",
    ],
    transcripts: None,
    map: cline_data,
    turn_field: None,
    gates: &CLINE_GATES,
    context_events: &CLINE_CONTEXT_EVENTS,
    answer: cline_answer,
    refusal: cline_refusal,
    silence: Silence::Nothing,
    // Cline reads no exit code: a refusal is its cancel, on stdout.
    refuses_in_json: &CLINE_GATES,
    install: Some(Install {
        shape: Shape::Scripts,
        project: ".cline/hooks",
        user: "hooks",
        home_env: Some(("CLINE_DIR", ".cline")),
        tool_events: &[],
        not_installed: &[],
        http_hooks: false,
        command_only: &[],
        command: CommandForm::Line("exec"),
        typed: false,
        name: None,
        timeout: ("timeout", TimeUnit::Seconds),
        fail_closed: None,
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "clineHook",
        input_schema: "ClineHookInput",
    },
};

fn cline_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let under = |block: &str, key: &str| fields.get(block).and_then(|b| b.get(key)).cloned();
    let missing = |field: &'static str| Missing {
        event: event.to_owned(),
        field,
    };
    // The project: the first workspace root (the packs read `cwd`).
    let cwd = first_of(fields, "workspaceRoots");
    let call = |block: &'static str| -> Result<(String, Value, Value), Missing> {
        let call = fields
            .get(block)
            .filter(|c| c.is_object())
            .ok_or_else(|| missing(block))?;
        let tool = call.get("name").filter(|n| n.is_string()).cloned();
        let tool = tool.ok_or_else(|| missing("name"))?;
        let call_id = id.call_id(call.get("id"));
        Ok((
            call_id,
            tool,
            call.get("input").cloned().unwrap_or_else(|| json!({})),
        ))
    };
    let mut step = None;
    let data = match event {
        "PreToolUse" => {
            let (call_id, tool, input) = call("tool_call")?;
            step = Some(call_id.clone());
            json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}], "cwd": cwd})
        }
        "PostToolUse" => {
            let (call_id, tool, input) = call("tool_result")?;
            step = Some(call_id.clone());
            let output = under("tool_result", "output").unwrap_or(Value::Null);
            // `run_commands` reports each command; any that failed fails the call.
            let failed = output.as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|i| i.get("success") == Some(&Value::Bool(false)))
            });
            let status = if failed { "error" } else { "ok" };
            json!({"call_id": call_id, "tool": tool, "input": input, "status": status,
                "output": output, "duration_ms": under("tool_result", "durationMs"), "cwd": cwd})
        }
        "UserPromptSubmit" => json!({"prompt": under("userPromptSubmit", "prompt"), "cwd": cwd}),
        "TaskStart" => json!({"agent_name": id.agent(), "source": "startup", "cwd": cwd}),
        "TaskResume" => json!({"agent_name": id.agent(), "source": "resume", "cwd": cwd}),
        "TaskComplete" => {
            json!({"continued": false, "last_message": under("turn", "outputText"), "cwd": cwd})
        }
        "SessionShutdown" => json!({"reason": field(fields, "reason"), "cwd": cwd}),
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// What Cline reads back after event `name`: `cancel` with
/// `errorMessage`, `overrideInput`, `contextModification`; `None` when
/// there is nothing to say.
fn cline_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    let mut out = Map::new();
    if let Resolution::ToolApproval(t) = resolution {
        let call = t.calls.first()?;
        let cancel = match reply::tool_decision(call) {
            Some(("deny", why)) => Some(why),
            // Cline asks no one from a hook: a deny naming the question.
            Some(("ask", question)) => Some(reply::cannot_ask(&question)),
            _ => None,
        };
        match (cancel, &call.input) {
            (Some(why), _) => {
                out.insert("cancel".into(), json!(true));
                out.insert("errorMessage".into(), json!(why));
            }
            (None, Some(input)) => {
                out.insert("overrideInput".into(), input.clone());
            }
            (None, None) => {}
        }
    }
    let takes_context = CLINE_CONTEXT_EVENTS.contains(&name);
    reply::add_context(&mut out, "contextModification", resolution, takes_context);
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The answer that refuses gate `name`: Cline's cancel.
fn cline_refusal(_name: &str, reason: &str) -> Value {
    json!({"cancel": true, "errorMessage": reply::refused(reason)})
}
