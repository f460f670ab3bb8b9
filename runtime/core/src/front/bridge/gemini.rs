//! The Gemini CLI bridge (`@google/gemini-cli-core` 0.61.0, whose
//! `dist/src/hooks/` runs command hooks and folds their answers).
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "Gemini CLI (`front/bridge/gemini.rs`)".

use serde_json::{Map, Value, json};

use super::hook_input::{field, required_text};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
    Transcripts,
};
use super::reply;
use crate::delivery::record::Resolution;
use crate::event::answer::Gate;

/// Every hook event of the pinned Gemini CLI (`HookEventName` of
/// `@google/gemini-cli-core` 0.61.0, in its order) and its kind.
pub(super) const GEMINI_EVENTS: [(&str, &str); 11] = [
    ("BeforeTool", "actions.requested"),
    ("AfterTool", "action.result"),
    ("BeforeAgent", "prompt.submitted"),
    ("Notification", "custom.gemini.notification"),
    ("AfterAgent", "turn.stopping"),
    ("SessionStart", "session.started"),
    ("SessionEnd", "session.completed"),
    ("PreCompress", "compaction.requested"),
    ("BeforeModel", "custom.gemini.before_model"),
    ("AfterModel", "custom.gemini.after_model"),
    ("BeforeToolSelection", "custom.gemini.before_tool_selection"),
];

/// The Gemini events that gate something.
pub(super) const GEMINI_GATES: [&str; 2] = ["BeforeTool", "BeforeAgent"];

/// How Gemini CLI's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "gemini",
    label: "Gemini CLI",
    word: "gemini",
    events: &GEMINI_EVENTS,
    event_field: Some("hook_event_name"),
    session_fields: &["session_id"],
    id_field: None,
    subagent_fields: None,
    kept: &["cwd"],
    dropped: &["transcript_path", "timestamp"],
    transcripts: Some(Transcripts {
        fields: &["transcript_path"],
        home: (None, ".gemini"),
        under: "tmp",
    }),
    map: gemini_data,
    turn_field: None,
    gates: &GEMINI_GATES,
    context_events: &GEMINI_CONTEXT_EVENTS,
    answer: gemini_answer,
    refusal: gemini_refusal,
    silence: Silence::Json("{}"),
    refuses_in_json: &[],
    install: Some(Install {
        shape: Shape::Grouped,
        project: ".gemini/settings.json",
        user: ".gemini/settings.json",
        home_env: None,
        // Gemini's matcher is a regular expression on the tool's name; no
        // matcher matches every tool.
        tool_events: &[],
        not_installed: &[],
        http_hooks: false,
        command_only: &[],
        command: CommandForm::Line("command"),
        typed: true,
        name: Some("hookrt"),
        timeout: ("timeout", TimeUnit::Milliseconds),
        fail_closed: None,
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "geminiHook",
        input_schema: "GeminiHookInput",
    },
};

/// The events Gemini reads context on.
const GEMINI_CONTEXT_EVENTS: [&str; 3] = ["AfterTool", "BeforeAgent", "SessionStart"];

fn gemini_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    let mut step = None;
    let data = match event {
        "BeforeTool" | "AfterTool" => {
            let tool = required_text(fields, "tool_name", event)?;
            let call_id = id.stand_in("call");
            step = Some(call_id.clone());
            if event == "BeforeTool" {
                let mut action =
                    json!({"call_id": call_id, "tool": tool, "input": text("tool_input")});
                if let Some(mcp) = fields.get("mcp_context") {
                    action["mcp_context"] = mcp.clone();
                }
                json!({"actions": [action]})
            } else {
                let response = text("tool_response");
                let failed = response.get("error").is_some_and(|e| !e.is_null());
                let status = if failed { "error" } else { "ok" };
                json!({"call_id": call_id, "tool": tool, "status": status, "output": response, "input": text("tool_input")})
            }
        }
        "BeforeAgent" => json!({"prompt": text("prompt")}),
        "AfterAgent" => {
            json!({"continued": text("stop_hook_active"), "last_message": text("prompt_response"), "prompt": text("prompt")})
        }
        "SessionStart" => json!({"agent_name": id.agent(), "source": text("source")}),
        "SessionEnd" => json!({"reason": text("reason")}),
        "PreCompress" => json!({"trigger": text("trigger")}),
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// What Gemini CLI reads back after event `name`: `None` when there is
/// nothing to say.
fn gemini_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    // The agent reads nothing back here (a compaction it cannot block).
    if name == "PreCompress" {
        return None;
    }
    let mut out = Map::new();
    let mut specific = Map::new();
    match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            if let Some((decision, reason)) = reply::tool_decision(call) {
                out.insert("decision".into(), json!(decision));
                if decision == "ask" {
                    // Gemini shows the system message with its prompt.
                    out.insert("systemMessage".into(), json!(reason));
                }
                out.insert("reason".into(), json!(reason));
            }
            if let Some(input) = &call.input {
                specific.insert("tool_input".into(), input.clone());
            }
        }
        Resolution::Gate(g) => {
            match &g.verdict {
                // A blocked prompt.
                Gate::Block(reason) => {
                    out.insert("decision".into(), json!("deny"));
                    out.insert("reason".into(), json!(reason));
                }
                // A continued turn: Gemini re-prompts with the reason.
                Gate::Continue(reason) => {
                    out.insert("decision".into(), json!("block"));
                    out.insert("reason".into(), json!(reason));
                }
                Gate::Pass => {}
            }
            if g.capped {
                out.insert("systemMessage".into(), json!(reply::CAPPED));
            }
        }
        Resolution::Permission(_)
        | Resolution::FileEdit(_)
        | Resolution::Edit(_)
        | Resolution::Context(_) => {}
    }
    let takes_context = GEMINI_CONTEXT_EVENTS.contains(&name);
    reply::add_context(
        &mut specific,
        "additionalContext",
        resolution,
        takes_context,
    );
    reply::finish(out, specific, name)
}

/// The answer that refuses Gemini gate `name`: a deny with the reason.
fn gemini_refusal(_name: &str, reason: &str) -> Value {
    json!({"decision": "deny", "reason": reply::refused(reason)})
}
