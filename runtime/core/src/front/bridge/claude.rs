//! The Claude Code bridge: the JSON a Claude Code hook reads on stdin (or
//! `hookrt serve`'s `/v1/claude-code` receives) as a hookrt envelope, and
//! the JSON Claude Code reads back after the event, the same over both
//! transports (`hookrt claude-hook`'s stdout, the route's body).
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "Claude Code (`front/bridge/claude.rs`)".

use serde_json::{Map, Value, json};

use super::hook_input::{field, required_text};
use super::protocol::{
    CommandForm, FailClosed, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence,
    TimeUnit, Transcripts,
};
use super::reply;
use crate::delivery::record::Resolution;
use crate::event::answer::{Gate, Permission};

/// Every hook event of the pinned Claude Code (`HOOK_EVENTS` of
/// `@anthropic-ai/claude-agent-sdk` 0.3.337, in its order) and its kind.
pub(super) const CLAUDE_EVENTS: [(&str, &str); 35] = [
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

/// How Claude Code's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "claude-code",
    label: "Claude Code",
    word: "claude",
    events: &CLAUDE_EVENTS,
    event_field: Some("hook_event_name"),
    session_fields: &["session_id"],
    id_field: None,
    subagent_fields: Some(("agent_id", "agent_type")),
    kept: &[
        "cwd",
        "permission_mode",
        "prompt_id",
        "agent_id",
        "agent_type",
        "effort",
    ],
    dropped: &["transcript_path", "agent_transcript_path"],
    transcripts: Some(Transcripts {
        fields: &["agent_transcript_path", "transcript_path"],
        home: (Some("CLAUDE_CONFIG_DIR"), ".claude"),
        under: "projects",
    }),
    map: claude_data,
    turn_field: None,
    gates: &CLAUDE_GATES,
    context_events: &CONTEXT_EVENTS,
    answer: claude_answer,
    refusal: claude_refusal,
    silence: Silence::Nothing,
    refuses_in_json: &[],
    install: Some(Install {
        shape: Shape::Grouped,
        project: ".claude/settings.json",
        user: ".claude/settings.json",
        home_env: None,
        tool_events: &[
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "PermissionRequest",
            "PermissionDenied",
            "PreSkillShellCommand",
        ],
        // A `WorktreeCreate` hook replaces Claude Code's own `git worktree
        // add`: it must create the worktree and print its path, which a
        // sandboxed hook (no filesystem) cannot.
        not_installed: &["WorktreeCreate"],
        http_hooks: true,
        command_only: &["SessionStart", "Setup"],
        command: CommandForm::Args,
        typed: true,
        name: None,
        timeout: ("timeout", TimeUnit::Seconds),
        fail_closed: Some(FailClosed::Word("onFailure", "block")),
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "claudeCode",
        input_schema: "ClaudeHookInput",
    },
};

/// The kind and data of a known Claude Code event: the vocabulary's shape
/// for the events mapped onto one of its kinds (and Codex's, which speaks
/// Claude Code's input), the input's own fields for the rest.
pub(crate) fn claude_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    let data = match event {
        "SessionStart" => {
            json!({"agent_name": id.agent(), "model": text("model"), "source": text("source")})
        }
        "UserPromptSubmit" => json!({"prompt": text("prompt"), "source": text("source")}),
        "PermissionRequest" => {
            json!({"tool": text("tool_name"), "input": text("tool_input"), "suggestions": text("permission_suggestions")})
        }
        "TaskCreated" => {
            json!({"task_id": text("task_id"), "subject": text("task_subject"), "description": text("task_description"), "teammate": text("teammate_name"), "team": text("team_name")})
        }
        "ConfigChange" => json!({"source": text("source"), "path": text("file_path")}),
        "PreToolUse" | "PreSkillShellCommand" | "PostToolUse" | "PostToolUseFailure" => {
            return tool_call(event, kind, fields, id);
        }
        "Notification" => {
            json!({"message": text("message"), "title": text("title"), "notification_type": text("notification_type")})
        }
        "Stop" | "SubagentStop" => {
            json!({"continued": text("stop_hook_active"), "last_message": text("last_assistant_message")})
        }
        "PreCompact" => {
            json!({"trigger": text("trigger"), "custom_instructions": text("custom_instructions")})
        }
        "PostCompact" => json!({"trigger": text("trigger"), "summary": text("compact_summary")}),
        "SessionEnd" => json!({"reason": text("reason")}),
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step: None,
        data,
    })
}

/// A tool call's step and data: `actions.requested` with one action before
/// it runs, `action.result` after.
fn tool_call(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    let call_id = id.call_id(fields.get("tool_use_id"));
    let tool = required_text(fields, "tool_name", event)?;
    let data = match event {
        "PreToolUse" | "PreSkillShellCommand" => {
            let mut action = json!({"call_id": call_id, "tool": tool, "input": text("tool_input")});
            if let Some(name) = fields
                .get("command_name")
                .filter(|_| event == "PreSkillShellCommand")
            {
                action["command_name"] = name.clone();
            }
            json!({"actions": [action]})
        }
        "PostToolUse" => {
            let response = text("tool_response");
            let failed = response.get("success") == Some(&Value::Bool(false));
            let status = if failed { "error" } else { "ok" };
            json!({"call_id": call_id, "tool": tool, "status": status, "output": response, "input": text("tool_input")})
        }
        _ => {
            json!({"call_id": call_id, "tool": tool, "status": "error", "error": text("error"), "is_interrupt": text("is_interrupt"), "input": text("tool_input")})
        }
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step: Some(call_id),
        data,
    })
}

/// The Claude Code events that gate something: hookrt failing on one must
/// answer as a refusal (deny the call or the permission, block the prompt,
/// compaction, task or config change).
pub(super) const CLAUDE_GATES: [&str; 7] = [
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
pub(super) const CONTEXT_EVENTS: [&str; 13] = [
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

/// What a Claude-shaped answer may hold, per agent: Claude Code's own, and
/// Codex's, which reads the same JSON but takes less of it.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// The events whose `hookSpecificOutput` takes `additionalContext`.
    pub context_events: &'static [&'static str],
    /// Whether a stop takes `additionalContext` (Claude Code: as feedback
    /// that keeps the turn going).
    pub stop_takes_context: bool,
    /// Whether a permission request's allow takes `updatedInput`, and its
    /// deny `interrupt`.
    pub permission_rewrite: bool,
    /// The events that take no answer at all.
    pub silent: &'static [&'static str],
    /// Whether a tool call may be answered `ask` (else it is denied: no
    /// human is asked, so nothing runs unasked).
    pub ask: bool,
    /// Whether a tool call may be answered `allow` without a rewrite (else
    /// a plain allow says nothing, and a rewrite goes as `allow` with
    /// `updatedInput`, the only way the agent takes one).
    pub bare_allow: bool,
}

/// Claude Code's answers, all of them.
pub(crate) const CLAUDE_DIALECT: Dialect = Dialect {
    context_events: &CONTEXT_EVENTS,
    stop_takes_context: true,
    permission_rewrite: true,
    silent: &[],
    ask: true,
    bare_allow: true,
};

/// What Claude Code reads back after event `name`, whose hooks decided
/// `resolution`: `None` when there is nothing to say.
fn claude_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    answer_in(&CLAUDE_DIALECT, name, resolution)
}

/// A Claude-shaped answer to event `name` in `dialect`.
pub(crate) fn answer_in(
    dialect: &Dialect,
    name: &str,
    resolution: Option<&Resolution>,
) -> Option<Value> {
    let resolution = resolution?;
    if dialect.silent.contains(&name) {
        return None;
    }
    let mut out = Map::new();
    let mut specific = Map::new();
    match resolution {
        Resolution::ToolApproval(t) => {
            let call = t.calls.first()?;
            let decision = match reply::tool_decision(call) {
                Some(("ask", question)) if !dialect.ask => {
                    Some(("deny", reply::cannot_ask(&question)))
                }
                Some(("allow", _)) if !dialect.bare_allow && call.input.is_none() => None,
                None if !dialect.bare_allow && call.input.is_some() => {
                    Some(("allow", reply::REWRITTEN.to_owned()))
                }
                decision => decision,
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
            Permission::Allow { .. } if p.input.is_some() && !dialect.permission_rewrite => {
                // The agent takes no rewritten input here: allowing the
                // call as it was is not what the hooks allowed. Its own
                // permission prompt decides, and the user is told why.
                out.insert("systemMessage".into(), json!(reply::REWRITE_NOT_TAKEN));
            }
            Permission::Allow { .. } => {
                let mut d = json!({"behavior": "allow"});
                if let Some(input) = &p.input {
                    d["updatedInput"] = input.clone();
                }
                specific.insert("decision".into(), d);
            }
            Permission::Deny { message, interrupt } => {
                let mut d = json!({"behavior": "deny", "message": message});
                if dialect.permission_rewrite {
                    d["interrupt"] = json!(interrupt);
                }
                specific.insert("decision".into(), d);
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
                out.insert("systemMessage".into(), json!(reply::CAPPED));
            }
        }
        Resolution::FileEdit(_) | Resolution::Edit(_) | Resolution::Context(_) => {}
    }
    // Claude Code keeps a turn going on a `Stop` with `additionalContext`
    // ("feedback"): there it goes only with a continue, or a pass (a capped
    // continue among them) would keep the turn going past the governor.
    let stop = matches!(name, "Stop" | "SubagentStop");
    let takes_context = dialect.context_events.contains(&name)
        && (!stop || (dialect.stop_takes_context && reply::continued(resolution)));
    reply::add_context(
        &mut specific,
        "additionalContext",
        resolution,
        takes_context,
    );
    reply::finish(out, specific, name)
}

/// The answer that refuses gate `name` because hookrt could not decide it
/// (`reason` says why): a deny of the call or the permission, a block of the
/// rest.
pub(super) fn claude_refusal(name: &str, reason: &str) -> Value {
    let reason = reply::refused(reason);
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
                "decision": {"behavior": "deny", "message": reason},
            }
        }),
        _ => json!({"decision": "block", "reason": reason}),
    }
}
