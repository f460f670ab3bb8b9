//! The Claude Code bridge, input side: the JSON a Claude Code command hook
//! reads on stdin (or `hookrt serve`'s `/v1/claude-code` receives), as a
//! hookrt envelope. What Claude Code reads back is `front::claude`'s: it
//! needs the resolution.
//!
//! Every event of `HOOK_EVENTS` in `@anthropic-ai/claude-agent-sdk` 0.3.333
//! (Claude Code 2.1.333) has a kind ([`CLAUDE_EVENTS`]; the mapping and why
//! is `docs/adr/0003-claude-code-bridge.md`): a kind of the vocabulary where
//! one fits, with the data its hooks know (`PreToolUse` and
//! `PreSkillShellCommand` are `actions.requested`, one action to decide on),
//! else `custom.claude.<event in snake case>`, observed, with the input's
//! fields as they are. An event name hookrt does not know (a newer Claude
//! Code) is delivered the same way, never refused.
//!
//! Every input also keeps `cwd`, `permission_mode`, `prompt_id`, `agent_id`,
//! `agent_type` and `effort` in `data` when given (never `transcript_path` or
//! `agent_transcript_path`: paths into the user's home a hook has no use
//! for). An input with `agent_id` comes from inside a subagent: it is in the
//! scope of subagent `agent_type` (lowercased, anything but `a-z`, `0-9`,
//! `_` and `-` made `-`), so `subagents/<type>/hooks/` decide its tool calls.
//! The session is `session_id`; Claude Code's input carries no event id or
//! position, so `coordinates.sequence` (and with it the idempotency key)
//! comes from a digest of the input, and the event id from that digest and
//! when and where it was read: Claude Code sends each input once and never
//! retries a hook, and it sends the very same input again for a new event
//! (a second `Stop` of a turn a hook kept going: `stop_hook_active` and the
//! last message alike), so the same input twice is two events, never a
//! duplicate.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::event::envelope::{Coordinates, Envelope, EnvelopeError, now_rfc3339};

/// Why a Claude Code hook input did not become an envelope.
#[derive(Debug, thiserror::Error)]
pub enum ClaudeError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not a Claude Code hook input.
    #[error("not a Claude Code hook input: {0}")]
    Shape(String),
    /// The event maps to an envelope hookrt refuses.
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
}

/// Every hook event of the pinned Claude Code (`HOOK_EVENTS` of
/// `@anthropic-ai/claude-agent-sdk` 0.3.333, in its order) and its kind.
pub const CLAUDE_EVENTS: [(&str, &str); 34] = [
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

/// Input fields every event keeps in its data when given.
const KEPT: [&str; 6] = [
    "cwd",
    "permission_mode",
    "prompt_id",
    "agent_id",
    "agent_type",
    "effort",
];

/// Longest event name turned into a kind: a longer one is cut.
const MAX_EVENT_NAME: usize = 64;

/// The kind of Claude Code event `event`: its row of [`CLAUDE_EVENTS`], or
/// `custom.claude.<event in snake case>` for one hookrt does not know.
fn claude_kind(event: &str) -> String {
    match CLAUDE_EVENTS.iter().find(|(name, _)| *name == event) {
        Some((_, kind)) => (*kind).to_owned(),
        None => format!("custom.claude.{}", snake_case(event)),
    }
}

/// `PostToolBatch` → `post_tool_batch`, `MCPCall` → `mcp_call`; anything
/// but ASCII letters and digits becomes `_`; at most [`MAX_EVENT_NAME`]
/// characters; `unnamed` when nothing is left.
fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().take(MAX_EVENT_NAME).collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase())
                    && next.is_some_and(|n| n.is_ascii_lowercase()));
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    if out.is_empty() {
        "unnamed".to_owned()
    } else {
        out.to_owned()
    }
}

/// The subagent scope of an `agent_type`: lowercased, anything but `a-z`,
/// `0-9`, `_` and `-` made `-` (a folder name under `subagents/`).
fn subagent_of(agent_type: Option<&str>) -> String {
    let id: String = agent_type
        .unwrap_or("subagent")
        .chars()
        .take(MAX_EVENT_NAME)
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    if id.is_empty() {
        "subagent".to_owned()
    } else {
        id
    }
}

/// One Claude Code hook input: the event it names and its envelope.
#[derive(Debug, Clone)]
pub struct ClaudeEvent {
    /// `hook_event_name` as Claude Code wrote it: the answer names it again.
    pub name: String,
    /// The event as hookrt delivers it.
    pub envelope: Envelope,
}

/// The envelope of one Claude Code hook input (`agent` names the agent:
/// Claude Code's input does not).
pub fn claude_envelope(agent: &str, input: &str) -> Result<Envelope, ClaudeError> {
    claude_event(agent, input).map(|e| e.envelope)
}

/// One Claude Code hook input read: its event name and envelope.
pub fn claude_event(agent: &str, input: &str) -> Result<ClaudeEvent, ClaudeError> {
    let Value::Object(mut fields) = serde_json::from_str::<Value>(input)? else {
        return Err(ClaudeError::Shape("the input must be a JSON object".into()));
    };
    let event = take_text(&mut fields, "hook_event_name")
        .ok_or_else(|| ClaudeError::Shape("`hook_event_name` is missing".into()))?;
    let session = take_text(&mut fields, "session_id")
        .ok_or_else(|| ClaudeError::Shape("`session_id` is missing".into()))?;
    fields.remove("transcript_path");
    fields.remove("agent_transcript_path");
    let digest = Sha256::digest(input.as_bytes());
    let subagent = match fields.get("agent_id") {
        Some(Value::String(id)) if !id.is_empty() => Some(subagent_of(
            fields.get("agent_type").and_then(Value::as_str),
        )),
        _ => None,
    };
    let kind = claude_kind(&event);
    let (step, mut data) = data_of(agent, &event, &fields, &digest)?;
    if let Some(obj) = data.as_object_mut() {
        obj.retain(|_, v| !v.is_null());
        for k in KEPT {
            if let Some(v) = fields.get(k) {
                obj.insert(k.to_owned(), v.clone());
            }
        }
    }
    let mut sequence = [0u8; 8];
    sequence.copy_from_slice(&digest[..8]);
    let coordinates = Coordinates {
        agent: agent.to_owned(),
        session,
        turn: None,
        step,
        // JSON numbers above 2^53 lose precision in some readers: keep it small.
        sequence: u64::from_le_bytes(sequence) >> 12,
        ordinal: None,
        subagent,
    };
    let id = format!("claude-{}-{}", hex::encode(&digest[..8]), invocation());
    let mut envelope = Envelope::draft(id, kind, now_rfc3339(), coordinates, data);
    envelope.validate()?;
    Ok(ClaudeEvent {
        name: event,
        envelope,
    })
}

/// The step (a tool call's id) and data of `event`: the vocabulary's shape
/// for the events mapped onto one of its kinds, the input's own fields for
/// the rest.
fn data_of(
    agent: &str,
    event: &str,
    fields: &Map<String, Value>,
    digest: &[u8],
) -> Result<(Option<String>, Value), ClaudeError> {
    let text = |k: &str| fields.get(k).cloned().unwrap_or(Value::Null);
    let data = match event {
        "SessionStart" => {
            json!({"agent_name": agent, "model": text("model"), "source": text("source")})
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
            return tool_call(event, fields, digest);
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
    Ok((None, data))
}

/// A tool call's step and data: `actions.requested` with one action before
/// it runs, `action.result` after.
fn tool_call(
    event: &str,
    fields: &Map<String, Value>,
    digest: &[u8],
) -> Result<(Option<String>, Value), ClaudeError> {
    let text = |k: &str| fields.get(k).cloned().unwrap_or(Value::Null);
    let call_id = fields
        .get("tool_use_id")
        .and_then(Value::as_str)
        .map_or_else(
            || format!("call-{}", hex::encode(&digest[..8])),
            str::to_owned,
        );
    let tool = text("tool_name");
    if !tool.is_string() {
        return Err(ClaudeError::Shape(format!("{event} without `tool_name`")));
    }
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
            json!({"call_id": call_id, "tool": tool, "status": status, "output": response})
        }
        _ => {
            json!({"call_id": call_id, "tool": tool, "status": "error", "error": text("error"), "is_interrupt": text("is_interrupt")})
        }
    };
    Ok((Some(call_id), data))
}

/// What tells one reading of an input from another: when (nanoseconds),
/// which process and how many it read before, hashed to 16 hex digits.
fn invocation() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static READ: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = Sha256::new();
    h.update(now.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(READ.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hex::encode(&h.finalize()[..8])
}

fn take_text(fields: &mut Map<String, Value>, key: &str) -> Option<String> {
    match fields.remove(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}
