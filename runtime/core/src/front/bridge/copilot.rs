//! The GitHub Copilot CLI bridge (`@github/copilot` 1.0.102), in Copilot's
//! own format: camelCase events in `.github/hooks/*.json`, whose input
//! (`sessionId`, `timestamp` in ms, `cwd`, and per event `toolName`,
//! `toolArgs`, `toolResult`, `prompt`, `source`, `reason`, …) does not name
//! the event: the hook entry does (`hookrt hook --agent copilot --event
//! preToolUse`, or `?event=preToolUse` over HTTP). Copilot names no tool
//! call: a call's id is a digest of its input.
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "GitHub Copilot CLI (`front/bridge/copilot.rs`)".

use serde_json::{Map, Value, json};

use super::hook_input::{field, object_of, required_text};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
    Transcripts,
};
use super::reply;
use crate::delivery::record::Resolution;
use crate::event::answer::{Gate, Permission};

/// Every hook event of the pinned Copilot CLI a hooks file may name
/// (`HookType` of its `schemas/api.schema.json`, less the SDK-only
/// `postResult` and `prePRDescription`) and its kind.
pub(super) const COPILOT_EVENTS: [(&str, &str); 15] = [
    ("sessionStart", "session.started"),
    ("sessionEnd", "session.completed"),
    ("userPromptSubmitted", "prompt.submitted"),
    (
        "userPromptTransformed",
        "custom.copilot.user_prompt_transformed",
    ),
    ("preToolUse", "actions.requested"),
    ("preMcpToolCall", "custom.copilot.pre_mcp_tool_call"),
    ("postToolUse", "action.result"),
    ("postToolUseFailure", "action.result"),
    ("permissionRequest", "permission.requested"),
    ("agentStop", "turn.stopping"),
    ("subagentStart", "custom.copilot.subagent_start"),
    ("subagentStop", "turn.stopping"),
    ("preCompact", "compaction.requested"),
    ("errorOccurred", "custom.copilot.error_occurred"),
    ("notification", "custom.copilot.notification"),
];

/// The Copilot events that gate something.
pub(super) const COPILOT_GATES: [&str; 3] =
    ["preToolUse", "permissionRequest", "userPromptSubmitted"];

/// How Copilot CLI's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "copilot",
    label: "Copilot CLI",
    word: "copilot",
    events: &COPILOT_EVENTS,
    event_field: None,
    session_fields: &["sessionId", "session_id"],
    id_field: None,
    subagent_fields: Some(("agentId", "agentName")),
    kept: &["cwd"],
    dropped: &["timestamp", "transcriptPath", "transcript_path", "hookName"],
    transcripts: Some(Transcripts {
        fields: &["transcriptPath", "transcript_path"],
        home: (None, ".copilot"),
        under: "session-state",
    }),
    map: copilot_data,
    turn_field: None,
    gates: &COPILOT_GATES,
    context_events: &COPILOT_CONTEXT_EVENTS,
    answer: copilot_answer,
    refusal: copilot_refusal,
    silence: Silence::Nothing,
    // Copilot lets a prompt through on a failing exit: its block goes as
    // JSON, exit 0.
    refuses_in_json: &["userPromptSubmitted"],
    install: Some(Install {
        shape: Shape::Flat,
        project: ".github/hooks/hookrt.json",
        user: "hooks/hookrt.json",
        home_env: Some(("COPILOT_HOME", ".copilot")),
        tool_events: &[],
        not_installed: &[],
        http_hooks: true,
        command_only: &[],
        command: CommandForm::Line("bash"),
        typed: true,
        name: None,
        timeout: ("timeoutSec", TimeUnit::Seconds),
        fail_closed: None,
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "copilotHook",
        input_schema: "CopilotHookInput",
    },
};

/// The events Copilot reads context on.
const COPILOT_CONTEXT_EVENTS: [&str; 6] = [
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "userPromptSubmitted",
    "sessionStart",
    "subagentStart",
];

fn copilot_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    let mut step = None;
    let data = match event {
        "preToolUse" | "postToolUse" | "postToolUseFailure" => {
            let tool = required_text(fields, "toolName", event)?;
            let call_id = id.stand_in("call");
            step = Some(call_id.clone());
            let input = object_of(text("toolArgs"));
            match event {
                "preToolUse" => {
                    json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}]})
                }
                "postToolUse" => {
                    json!({"call_id": call_id, "tool": tool, "status": "ok", "output": text("toolResult"), "input": input})
                }
                _ => {
                    json!({"call_id": call_id, "tool": tool, "status": "error", "error": text("error"), "input": input})
                }
            }
        }
        "permissionRequest" => {
            json!({"tool": text("toolName"), "input": object_of(text("toolInput")), "suggestions": text("permissionSuggestions")})
        }
        "userPromptSubmitted" => json!({"prompt": text("prompt")}),
        "sessionStart" => {
            json!({"agent_name": id.agent(), "source": text("source"), "initial_prompt": text("initialPrompt")})
        }
        "sessionEnd" => json!({"reason": text("reason")}),
        "agentStop" | "subagentStop" => {
            json!({"continued": text("stop_hook_active"), "last_message": text("response"), "stop_reason": text("stopReason")})
        }
        "preCompact" => {
            json!({"trigger": text("trigger"), "custom_instructions": text("customInstructions")})
        }
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// What Copilot CLI reads back after event `name`: `None` when there is
/// nothing to say.
fn copilot_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    // The agent reads nothing back here (a compaction it cannot block).
    if name == "preCompact" {
        return None;
    }
    let mut out = Map::new();
    match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            if let Some((decision, reason)) = reply::tool_decision(call) {
                out.insert("permissionDecision".into(), json!(decision));
                out.insert("permissionDecisionReason".into(), json!(reason));
            }
            if let Some(input) = &call.input {
                out.insert("modifiedArgs".into(), input.clone());
            }
        }
        Resolution::Permission(p) => match &p.verdict {
            Permission::Allow { .. } if p.input.is_none() => {
                out.insert("behavior".into(), json!("allow"));
            }
            // A rewritten allow Copilot cannot take: its own prompt decides.
            Permission::Allow { .. } | Permission::Abstain => {}
            Permission::Deny { message, interrupt } => {
                out.insert("behavior".into(), json!("deny"));
                out.insert("message".into(), json!(message));
                out.insert("interrupt".into(), json!(interrupt));
            }
        },
        Resolution::Gate(g) => match &g.verdict {
            Gate::Block(reason) | Gate::Continue(reason) => {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(reason));
            }
            Gate::Pass => {}
        },
        Resolution::FileEdit(_) | Resolution::Edit(_) | Resolution::Context(_) => {}
    }
    let takes_context = COPILOT_CONTEXT_EVENTS.contains(&name);
    reply::add_context(&mut out, "additionalContext", resolution, takes_context);
    reply::finish(out, Map::new(), name)
}

/// The answer that refuses Copilot gate `name`.
fn copilot_refusal(name: &str, reason: &str) -> Value {
    let reason = reply::refused(reason);
    match name {
        "preToolUse" => json!({"permissionDecision": "deny", "permissionDecisionReason": reason}),
        "permissionRequest" => json!({"behavior": "deny", "message": reason, "interrupt": false}),
        _ => json!({"decision": "block", "reason": reason}),
    }
}
