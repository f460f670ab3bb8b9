//! The Cursor bridge (`.cursor/hooks.json`, `version: 1`; Cursor 2.x's
//! agent and Tab hooks, after cursor.com/docs/agent/hooks: Cursor publishes
//! no package, types or schema of its hooks, so this follows its docs).
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "Cursor (`front/bridge/cursor.rs`)".

use serde_json::{Map, Value, json};

use super::hook_input::{field, object_of, required_text};
use super::protocol::{
    CommandForm, FailClosed, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence,
    TimeUnit, Transcripts,
};
use super::reply;
use crate::delivery::record::Resolution;
use crate::event::answer::Gate;

/// Every hook event of Cursor's docs and its kind.
pub(super) const CURSOR_EVENTS: [(&str, &str); 20] = [
    ("sessionStart", "session.started"),
    ("sessionEnd", "session.completed"),
    ("preToolUse", "actions.requested"),
    ("postToolUse", "action.result"),
    ("postToolUseFailure", "action.result"),
    ("subagentStart", "custom.cursor.subagent_start"),
    ("subagentStop", "turn.stopping"),
    ("beforeShellExecution", "actions.requested"),
    ("afterShellExecution", "action.result"),
    ("beforeMCPExecution", "actions.requested"),
    ("afterMCPExecution", "action.result"),
    ("beforeReadFile", "actions.requested"),
    ("afterFileEdit", "custom.cursor.after_file_edit"),
    ("beforeSubmitPrompt", "prompt.submitted"),
    ("preCompact", "compaction.requested"),
    ("stop", "turn.stopping"),
    ("afterAgentResponse", "custom.cursor.after_agent_response"),
    ("afterAgentThought", "custom.cursor.after_agent_thought"),
    ("beforeTabFileRead", "actions.requested"),
    ("afterTabFileEdit", "custom.cursor.after_tab_file_edit"),
];

/// The Cursor events that gate something.
pub(super) const CURSOR_GATES: [&str; 6] = [
    "preToolUse",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "beforeTabFileRead",
    "beforeSubmitPrompt",
];

/// How Cursor's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "cursor",
    label: "Cursor",
    word: "cursor",
    events: &CURSOR_EVENTS,
    event_field: Some("hook_event_name"),
    session_fields: &["conversation_id", "session_id"],
    id_field: None,
    subagent_fields: Some(("subagent_type", "subagent_type")),
    kept: &["workspace_roots", "model", "cursor_version"],
    dropped: &["transcript_path", "user_email"],
    transcripts: Some(Transcripts {
        fields: &["transcript_path"],
        home: (None, ".cursor"),
        under: "projects",
    }),
    map: cursor_data,
    turn_field: Some("generation_id"),
    gates: &CURSOR_GATES,
    context_events: &CURSOR_CONTEXT_EVENTS,
    answer: cursor_answer,
    refusal: cursor_refusal,
    silence: Silence::Nothing,
    refuses_in_json: &[],
    install: Some(Install {
        shape: Shape::Flat,
        project: ".cursor/hooks.json",
        user: ".cursor/hooks.json",
        home_env: None,
        tool_events: &[],
        not_installed: &[],
        http_hooks: false,
        command_only: &[],
        command: CommandForm::Line("command"),
        typed: false,
        name: None,
        timeout: ("timeout", TimeUnit::Seconds),
        fail_closed: Some(FailClosed::Flag("failClosed")),
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "cursorHook",
        input_schema: "CursorHookInput",
    },
};

/// The events Cursor reads context on.
const CURSOR_CONTEXT_EVENTS: [&str; 3] = ["preToolUse", "postToolUse", "sessionStart"];

fn cursor_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    let call_id = id.call_id(fields.get("tool_use_id"));
    let call = |tool: Value, input: Value| {
        (
            Some(call_id.clone()),
            json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}]}),
        )
    };
    // A result carries the call's input beside its output, as every agent's does.
    let result = |tool: Value, input: Value, status: &str, output: Value| {
        (
            Some(call_id.clone()),
            json!({"call_id": call_id, "tool": tool, "input": input, "status": status, "output": output}),
        )
    };
    let named_tool = || required_text(fields, "tool_name", event);
    let input = || object_of(text("tool_input"));
    let shell = || json!({"command": text("command"), "cwd": text("cwd")});
    let result_json = || object_of(text("result_json"));
    let (step, data) = match event {
        "preToolUse" => call(named_tool()?, input()),
        "beforeMCPExecution" => {
            let mut input = input();
            if let Some(obj) = input.as_object_mut() {
                for server in ["url", "command"] {
                    if let Some(v) = fields.get(server) {
                        obj.insert(format!("server_{server}"), v.clone());
                    }
                }
            }
            call(named_tool()?, input)
        }
        "beforeShellExecution" => {
            let command = required_text(fields, "command", event)?;
            call(
                json!("shell"),
                json!({"command": command, "cwd": text("cwd")}),
            )
        }
        "beforeReadFile" | "beforeTabFileRead" => {
            let tool = if event == "beforeReadFile" {
                "read_file"
            } else {
                "tab_read_file"
            };
            call(
                json!(tool),
                json!({"file_path": text("file_path"), "content": text("content"), "attachments": text("attachments")}),
            )
        }
        "postToolUse" => result(named_tool()?, input(), "ok", text("tool_output")),
        "postToolUseFailure" => result(named_tool()?, input(), "error", text("error")),
        "afterShellExecution" => result(json!("shell"), shell(), "ok", text("output")),
        "afterMCPExecution" => result(named_tool()?, input(), "ok", result_json()),
        "beforeSubmitPrompt" => (
            None,
            json!({"prompt": text("prompt"), "attachments": text("attachments")}),
        ),
        "stop" | "subagentStop" => {
            let loops = fields
                .get("loop_count")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            (
                None,
                json!({"continued": loops > 0, "status": text("status"), "loop_count": text("loop_count")}),
            )
        }
        "sessionStart" => (None, json!({"agent_name": id.agent()})),
        "sessionEnd" => (None, json!({"reason": text("reason")})),
        "preCompact" => (None, json!({"trigger": text("trigger")})),
        _ => (None, Value::Object(fields.clone())),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// What Cursor reads back after event `name`: `None` when there is nothing
/// to say.
fn cursor_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    // The agent reads nothing back here (a compaction it cannot block).
    if name == "preCompact" {
        return None;
    }
    let mut out = Map::new();
    match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            let read = matches!(name, "beforeReadFile" | "beforeTabFileRead");
            let rewrites = name == "preToolUse";
            let decision = match reply::tool_decision(call) {
                Some(("deny", why)) => Some(("deny", why)),
                _ if call.input.is_some() && !rewrites => Some((
                    "deny",
                    reply::rewrite_refused(&format!("Cursor takes no rewrite on {name}")),
                )),
                Some(("ask", question)) if read => Some(("deny", reply::cannot_ask(&question))),
                decision => decision,
            };
            if let Some((decision, reason)) = decision {
                out.insert("permission".into(), json!(decision));
                out.insert("user_message".into(), json!(reason));
                out.insert("agent_message".into(), json!(reason));
            }
            if let Some(input) = call.input.as_ref().filter(|_| rewrites) {
                out.insert("updated_input".into(), input.clone());
            }
        }
        Resolution::Gate(g) => match &g.verdict {
            Gate::Block(reason) => {
                out.insert("continue".into(), json!(false));
                out.insert("user_message".into(), json!(reason));
            }
            Gate::Continue(reason) => {
                out.insert("followup_message".into(), json!(reason));
            }
            Gate::Pass => {}
        },
        Resolution::Permission(_)
        | Resolution::FileEdit(_)
        | Resolution::Edit(_)
        | Resolution::Context(_) => {}
    }
    let takes_context = CURSOR_CONTEXT_EVENTS.contains(&name);
    reply::add_context(&mut out, "additional_context", resolution, takes_context);
    reply::finish(out, Map::new(), name)
}

/// The answer that refuses Cursor gate `name`.
fn cursor_refusal(name: &str, reason: &str) -> Value {
    let reason = reply::refused(reason);
    match name {
        "beforeSubmitPrompt" => json!({"continue": false, "user_message": reason}),
        _ => json!({"permission": "deny", "user_message": reason, "agent_message": reason}),
    }
}
