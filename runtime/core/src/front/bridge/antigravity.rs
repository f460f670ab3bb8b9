//! The Antigravity CLI bridge (`agy`, Google's; its hooks as documented at
//! antigravity.google/docs/hooks, read December 2026, for agy 1.1.10 and
//! later). **From its documentation**: agy is a closed binary on no registry
//! this project can pin, so no test runs it (ADR 0005, as Cursor).
//!
//! agy's `hooks.json` (`.agents/`, `~/.gemini/config/`) maps hook *names*
//! to events: `PreToolUse` and `PostToolUse` take matcher groups, the others
//! a flat list. Its input does not name the event (the entry's `--event`
//! does), its fields are camelCase (`toolCall: {name, args}`, `args`
//! PascalCase: `run_command`'s `CommandLine`), and a call has no id:
//! `stepIdx` names the step, before and after the call.
//!
//! `PreToolUse` fails closed on anything but exit 0 with one known answer
//! or nothing: `{}`, an unknown field, a failing exit or a timeout deny the
//! call. So hookrt prints nothing when it has no opinion (never `{}`), and
//! refuses in JSON with a reason the model reads.
//!
//! In full: docs/agents.md, "Antigravity CLI (`front/bridge/antigravity.rs`)".

use serde_json::{Map, Value, json};

use super::hook_input::{field, first_of, object_of};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
    Transcripts,
};
use super::reply;
use crate::delivery::record::Resolution;

/// Every documented hook event of agy and its kind (`SessionStart` and
/// prompt hooks exist but are not documented: not taken).
const ANTIGRAVITY_EVENTS: [(&str, &str); 5] = [
    ("PreToolUse", "actions.requested"),
    ("PostToolUse", "action.result"),
    ("PreInvocation", "custom.antigravity.pre_invocation"),
    ("PostInvocation", "custom.antigravity.post_invocation"),
    ("Stop", "turn.stopping"),
];

/// The one agy event that gates something.
const ANTIGRAVITY_GATES: [&str; 1] = ["PreToolUse"];

/// How Antigravity CLI's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "antigravity",
    label: "Antigravity CLI",
    word: "antigravity",
    events: &ANTIGRAVITY_EVENTS,
    event_field: None,
    session_fields: &["conversationId"],
    id_field: None,
    subagent_fields: None,
    kept: &["modelName"],
    dropped: &["transcriptPath", "artifactDirectoryPath", "workspacePaths"],
    transcripts: Some(Transcripts {
        fields: &["transcriptPath"],
        home: (None, ".gemini/antigravity-cli"),
        under: "brain",
    }),
    map: antigravity_data,
    turn_field: None,
    gates: &ANTIGRAVITY_GATES,
    // Context goes only as `injectSteps` on the invocation events, whose
    // step shapes the documentation does not give: none is sent.
    context_events: &[],
    answer: antigravity_answer,
    refusal: antigravity_refusal,
    // `{}` denies a call: nothing is printed instead.
    silence: Silence::Nothing,
    // agy shows no stderr: a refusal is the deny on stdout, with its reason.
    refuses_in_json: &ANTIGRAVITY_GATES,
    install: Some(Install {
        shape: Shape::Named("hookrt"),
        project: ".agents/hooks.json",
        user: ".gemini/config/hooks.json",
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
        operation_id: "antigravityHook",
        input_schema: "AntigravityHookInput",
    },
};

fn antigravity_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    // The project: the first workspace folder (the hook itself runs in
    // the folder of hooks.json; the packs read `cwd`).
    let cwd = first_of(fields, "workspacePaths");
    let call = fields.get("toolCall").filter(|c| c.is_object());
    // No call id: the step's index names the call before and after it.
    // (Numbers may come as text; a step is a `u64`, anything else
    // stands in.)
    let step_idx = match fields.get("stepIdx") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(n)) => n.parse::<u64>().ok(),
        _ => None,
    };
    let call_id = step_idx.map_or_else(|| id.stand_in("call"), |n| format!("step-{n}"));
    let tool = call.and_then(|c| c.get("name")).filter(|n| n.is_string());
    let input = call
        .and_then(|c| c.get("args"))
        .cloned()
        .map_or_else(|| json!({}), object_of);
    let mut step = None;
    let data = match event {
        "PreToolUse" => {
            let tool = tool.cloned().ok_or_else(|| Missing {
                event: event.to_owned(),
                field: "toolCall.name",
            })?;
            step = Some(call_id.clone());
            json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}], "cwd": cwd})
        }
        "PostToolUse" => {
            step = Some(call_id.clone());
            // `error` is empty when the call succeeded; agy gives no output.
            let error = text("error");
            let failed = error.as_str().is_some_and(|e| !e.is_empty());
            let status = if failed { "error" } else { "ok" };
            // `toolCall` is not documented here: a call without it is
            // named by its step alone.
            let tool = tool.cloned().unwrap_or_else(|| json!("unnamed"));
            let error = failed.then_some(error);
            json!({"call_id": call_id, "tool": tool, "input": input, "status": status,
                "error": error, "cwd": cwd})
        }
        "Stop" => json!({
            "continued": false,
            "stop_reason": text("terminationReason"),
            "error": text("error"),
            "cwd": cwd,
        }),
        _ => {
            let mut data = fields.clone();
            data.insert("cwd".into(), cwd);
            Value::Object(data)
        }
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// agy's words: an ask is `force_ask` (`ask` would take an earlier "Always
/// Allow": a hook's question goes to the human every time); its docs give
/// no way to change a call; `continue` keeps a stop going (the reason is the
/// system message the agent reads next).
const ANTIGRAVITY_WORDS: reply::Decisions = reply::Decisions {
    deny: "deny",
    ask: Some("force_ask"),
    allow: "allow",
    keep_going: "continue",
    no_rewrite: "Antigravity CLI takes no rewritten input",
};

/// What agy reads back after event `name`: on `PreToolUse` a `decision`
/// (`allow`, `deny`, `force_ask`) with its `reason`; on `Stop`
/// `{"decision": "continue", "reason"}`; `None` when there is nothing to
/// say (agy takes no context hookrt can give).
fn antigravity_answer(_name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    reply::decided(&ANTIGRAVITY_WORDS, resolution?).map(Value::Object)
}

/// The answer that refuses gate `name`: its deny (a failing exit denies
/// too, but agy shows no stderr, so the reason goes in the deny).
fn antigravity_refusal(_name: &str, reason: &str) -> Value {
    reply::decision_refusal(&ANTIGRAVITY_WORDS, reason)
}
