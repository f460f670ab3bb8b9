//! The Claude Code bridge, answer side: the JSON Claude Code reads back
//! after an event, the same over both transports (`hookrt claude-hook`'s
//! stdout, `hookrt serve`'s `/v1/claude-code` body). Each answer is one
//! Claude Code's `SyncHookJSONOutput` allows for the event (checked with
//! `tsc --strict` against the pinned package's `sdk.d.ts`):
//!
//! - a tool call (`PreToolUse`, `PreSkillShellCommand`): `hookSpecificOutput`
//!   with `permissionDecision` `deny` / `ask` / `allow` and its reason, the
//!   rewritten input as `updatedInput` (never after a deny), and context;
//!   no `permissionDecision` when every hook abstains (Claude Code's own
//!   rules decide);
//! - a permission request (`PermissionRequest`): `decision.behavior`
//!   `allow` (with `updatedInput`) or `deny` (with `message`, `interrupt`);
//! - a blocked prompt, compaction, task or config change (`UserPromptSubmit`,
//!   `PreCompact`, `TaskCreated`, `ConfigChange`): `decision: "block"` and
//!   the reason;
//! - a continued turn (`Stop`, `SubagentStop`): `decision: "block"` and the
//!   reason (Claude Code's spelling of "keep going"); a continue the loop
//!   governor refused is a `systemMessage` telling the user so;
//! - context on every event whose `hookSpecificOutput` takes
//!   `additionalContext` ([`CONTEXT_EVENTS`]): the pieces hooks added, in
//!   registration order, within the bound (a dropped piece is not sent); on
//!   `Stop` and `SubagentStop` only with a continue (Claude Code keeps a turn
//!   going on context there);
//! - nothing when there is nothing to say.
//!
//! A gate hookrt cannot decide is refused ([`claude_refusal`]): Claude Code
//! lets a call run (and a prompt through) when its hook fails any other way.

use serde_json::{Map, Value, json};

use crate::delivery::record::Resolution;
use crate::event::answer::{Approval, Gate, Permission};

/// The Claude Code events that gate something: hookrt failing on one must
/// answer as a refusal (deny the call or the permission, block the prompt,
/// compaction, task or config change).
pub const CLAUDE_GATES: [&str; 7] = [
    "PreToolUse",
    "PreSkillShellCommand",
    "PermissionRequest",
    "UserPromptSubmit",
    "PreCompact",
    "TaskCreated",
    "ConfigChange",
];

/// The events whose `hookSpecificOutput` takes `additionalContext` (the
/// pinned `sdk.d.ts`).
pub const CONTEXT_EVENTS: [&str; 13] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "Setup",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PostModelSwitch",
];

/// Whether Claude Code event `name` gates something: hookrt failing on it
/// must refuse.
pub fn is_claude_gate(name: &str) -> bool {
    CLAUDE_GATES.contains(&name)
}

/// The gate a raw input names, read without parsing it (so also when it is
/// broken): a failure on it must refuse.
pub fn gate_named(input: &str) -> Option<&'static str> {
    CLAUDE_GATES
        .into_iter()
        .find(|g| input.contains(&format!("\"{g}\"")))
}

/// What Claude Code reads back after event `name`, whose hooks decided
/// `resolution`: `None` when there is nothing to say.
pub fn claude_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    let resolution = resolution?;
    let mut out = Map::new();
    let mut specific = Map::new();
    match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            let by = call.decided_by.as_deref().unwrap_or("?");
            let decision = match &call.verdict {
                Approval::Abstain => None,
                Approval::Allow => Some(("allow", format!("allowed by hookrt hook `{by}`"))),
                Approval::Ask(question) => Some(("ask", question.clone())),
                Approval::Deny(why) => Some(("deny", why.clone())),
            };
            if let Some((decision, reason)) = decision {
                specific.insert("permissionDecision".into(), json!(decision));
                specific.insert("permissionDecisionReason".into(), json!(reason));
            }
            if let Some(input) = &call.input {
                specific.insert("updatedInput".into(), input.clone());
            }
        }
        Resolution::Permission(p) => match &p.verdict {
            Permission::Abstain => {}
            Permission::Allow { .. } => {
                let mut d = json!({"behavior": "allow"});
                if let Some(input) = &p.input {
                    d["updatedInput"] = input.clone();
                }
                specific.insert("decision".into(), d);
            }
            Permission::Deny { message, interrupt } => {
                specific.insert(
                    "decision".into(),
                    json!({"behavior": "deny", "message": message, "interrupt": interrupt}),
                );
            }
        },
        Resolution::Gate(g) => {
            match &g.verdict {
                Gate::Block(reason) | Gate::Continue(reason) => {
                    out.insert("decision".into(), json!("block"));
                    out.insert("reason".into(), json!(reason));
                }
                Gate::Pass => {}
            }
            if g.capped {
                out.insert(
                    "systemMessage".into(),
                    json!(
                        "hookrt's loop governor let this turn stop: its hooks kept it going max_continues times in a row ([governor] in hookrt.toml)"
                    ),
                );
            }
        }
        Resolution::FileEdit(_) | Resolution::Edit(_) | Resolution::Context(_) => {}
    }
    let context: Vec<&str> = resolution
        .context()
        .iter()
        .filter(|c| !c.dropped)
        .map(|c| c.text.as_str())
        .collect();
    // Claude Code keeps a turn going on a `Stop` with `additionalContext`
    // ("feedback"): there it goes only with a continue, or a pass (a capped
    // continue among them) would keep the turn going past the governor.
    let stop = matches!(name, "Stop" | "SubagentStop");
    let continued =
        matches!(resolution, Resolution::Gate(g) if matches!(g.verdict, Gate::Continue(_)));
    if !context.is_empty() && CONTEXT_EVENTS.contains(&name) && (!stop || continued) {
        specific.insert("additionalContext".into(), json!(context.join("\n\n")));
    }
    if !specific.is_empty() {
        specific.insert("hookEventName".into(), json!(name));
        out.insert("hookSpecificOutput".into(), Value::Object(specific));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The answer that refuses gate `name` because hookrt could not decide it
/// (`reason` says why): a deny of the call or the permission, a block of the
/// rest.
pub fn claude_refusal(name: &str, reason: &str) -> Value {
    let reason = format!("hookrt could not decide this, so it is refused: {reason}");
    match name {
        "PreToolUse" | "PreSkillShellCommand" => json!({
            "hookSpecificOutput": {
                "hookEventName": name,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        "PermissionRequest" => json!({
            "hookSpecificOutput": {
                "hookEventName": name,
                "decision": {"behavior": "deny", "message": reason, "interrupt": false},
            }
        }),
        _ => json!({"decision": "block", "reason": reason}),
    }
}
