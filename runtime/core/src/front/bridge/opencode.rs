//! The OpenCode bridge (`opencode-ai` 1.18.33). OpenCode has no hook
//! configuration: only in-process plugins. hookrt's plugin
//! (`opencode_plugin.ts`, written by `hookrt install --agent opencode`)
//! hands each plugin hook to hookrt as one JSON input naming it under
//! `hook`, with OpenCode's own fields (`sessionID`, `callID`, `tool`,
//! `args`, …), and applies the answer: a deny is thrown (the tool does not
//! run; a prompt is not sent), a rewrite is written into `args`, context is
//! added where OpenCode takes it (a prompt's parts, a tool's output).
//! Kilo CLI is built on OpenCode and runs the same plugin (`kilo.rs`).
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "OpenCode and Kilo CLI (`front/bridge/opencode.rs`)";
//! why a plugin: docs/adr/0008-opencode-plugin.md.

use serde_json::{Map, Value, json};

use super::hook_input::{field, required_text};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
};
use super::reply;
use crate::delivery::record::Resolution;
use crate::event::answer::{Gate, Permission};

/// The plugin `install` writes (its `SETTINGS` line filled in).
const PLUGIN: &str = include_str!("opencode_plugin.ts");

/// Every plugin hook and bus event of the pinned OpenCode the plugin hands
/// to hookrt, and its kind.
const OPENCODE_EVENTS: [(&str, &str); 7] = [
    ("session.created", "session.started"),
    ("chat.message", "prompt.submitted"),
    ("tool.execute.before", "actions.requested"),
    ("permission.ask", "permission.requested"),
    ("tool.execute.after", "action.result"),
    ("experimental.session.compacting", "compaction.requested"),
    ("session.idle", "turn.stopping"),
];

/// The hooks that gate something: the plugin throws when hookrt cannot
/// answer one (a thrown `chat.message` keeps the prompt from the model).
const OPENCODE_GATES: [&str; 3] = ["tool.execute.before", "permission.ask", "chat.message"];

/// The hooks whose output takes context: a prompt's parts (a synthetic
/// text part the model reads with the prompt) and a tool's output.
const OPENCODE_CONTEXT_EVENTS: [&str; 2] = ["chat.message", "tool.execute.after"];

/// How the input of hookrt's OpenCode plugin reads.
pub(super) static PROTOCOL: Protocol = OPENCODE;

/// OpenCode's protocol as a value, for Kilo CLI's to start from.
pub(super) const OPENCODE: Protocol = Protocol {
    agent: "opencode",
    label: "OpenCode",
    word: "opencode",
    events: &OPENCODE_EVENTS,
    event_field: Some("hook"),
    session_fields: &["sessionID"],
    id_field: None,
    subagent_fields: None,
    kept: &["cwd", "agent"],
    dropped: &[],
    transcripts: None,
    map: opencode_data,
    turn_field: None,
    gates: &OPENCODE_GATES,
    context_events: &OPENCODE_CONTEXT_EVENTS,
    answer: opencode_answer,
    refusal: opencode_refusal,
    silence: Silence::Nothing,
    // The plugin reads every answer on stdout; a failing exit is hookrt
    // failing, which it refuses too.
    refuses_in_json: &OPENCODE_GATES,
    install: Some(INSTALL),
    signature: None,
    openapi: OpenApi {
        operation_id: "opencodeHook",
        input_schema: "OpenCodeHookInput",
    },
};

/// Where `install` writes the plugin for OpenCode (Kilo CLI: the same, in
/// its own folders).
pub(super) const INSTALL: Install = Install {
    shape: Shape::Plugin(PLUGIN),
    project: ".opencode/plugins/hookrt.ts",
    user: "opencode/plugins/hookrt.ts",
    home_env: Some(("XDG_CONFIG_HOME", ".config")),
    tool_events: &[],
    not_installed: &[],
    http_hooks: false,
    command_only: &[],
    command: CommandForm::Args,
    typed: false,
    name: None,
    timeout: ("timeoutMs", TimeUnit::Milliseconds),
    fail_closed: None,
};

/// The kind and data of an OpenCode hook from the plugin's input.
fn opencode_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    let call_id = || id.call_id(fields.get("callID"));
    let input = || match fields.get("args") {
        Some(args @ Value::Object(_)) => args.clone(),
        _ => json!({}),
    };
    let mut step = None;
    let data = match event {
        "tool.execute.before" => {
            let tool = required_text(fields, "tool", event)?;
            let call = call_id();
            step = Some(call.clone());
            json!({"actions": [{"call_id": call, "tool": tool, "input": input()}]})
        }
        "tool.execute.after" => {
            let tool = required_text(fields, "tool", event)?;
            let call = call_id();
            step = Some(call.clone());
            // OpenCode's bash reports its exit code; any other tool's
            // result is its output.
            let failed = fields
                .get("exit")
                .and_then(Value::as_i64)
                .is_some_and(|code| code != 0);
            let status = if failed { "error" } else { "ok" };
            json!({"call_id": call, "tool": tool, "input": input(), "status": status,
                "output": text("output"), "exit_code": text("exit"), "title": text("title")})
        }
        "permission.ask" => json!({"tool": text("type"), "input": json!({
            "pattern": text("pattern"), "title": text("title"), "metadata": text("metadata"),
            "call_id": text("callID")})}),
        "chat.message" => json!({"prompt": text("prompt"), "model": text("model")}),
        "session.created" => json!({"agent_name": id.agent()}),
        "session.idle" => json!({"continued": false}),
        _ => json!({}),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// What the plugin reads back after hook `name`: `{decision, reason}`
/// (`allow`, `deny`; `ask` on `permission.ask`), the rewritten `args`,
/// the `context` to add; `None` when there is nothing to say.
fn opencode_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    let mut out = Map::new();
    let mut decide = |decision: &str, reason: &str| {
        out.insert("decision".into(), json!(decision));
        out.insert("reason".into(), json!(reason));
    };
    match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            match reply::tool_decision(call) {
                // OpenCode runs a tool or throws: nobody can be asked.
                Some(("ask", question)) => decide("deny", &reply::cannot_ask(&question)),
                Some((decision, reason)) => decide(decision, &reason),
                None => {}
            }
            let denied = out.get("decision").is_some_and(|d| d == "deny");
            if let Some(input) = call.input.as_ref().filter(|_| !denied) {
                out.insert("args".into(), input.clone());
            }
        }
        Resolution::Permission(p) => match &p.verdict {
            Permission::Allow { .. } if p.input.is_none() => decide("allow", "allowed by hookrt"),
            // A rewritten allow OpenCode cannot take: its own prompt decides.
            Permission::Allow { .. } => decide("ask", reply::REWRITE_NOT_TAKEN),
            Permission::Abstain => {}
            Permission::Deny { message, .. } => decide("deny", message),
        },
        // A stop cannot be turned into another turn from a plugin.
        Resolution::Gate(g) => match &g.verdict {
            Gate::Block(reason) if name != "session.idle" => decide("deny", reason),
            Gate::Block(_) | Gate::Continue(_) | Gate::Pass => {}
        },
        Resolution::FileEdit(_) | Resolution::Edit(_) | Resolution::Context(_) => {}
    }
    let takes_context = OPENCODE_CONTEXT_EVENTS.contains(&name);
    reply::add_context(&mut out, "context", resolution, takes_context);
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The answer that refuses gate `name`: a deny, which the plugin throws.
fn opencode_refusal(_name: &str, reason: &str) -> Value {
    json!({"decision": "deny", "reason": reply::refused(reason)})
}
