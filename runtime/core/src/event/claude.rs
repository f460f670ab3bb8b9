//! The Claude Code bridge, input side: the JSON a Claude Code command hook
//! reads on stdin, as a hookrt envelope. (What `hookrt claude-hook` prints
//! back is the CLI's job: it needs the resolution.) The mapping, per
//! `hook_event_name`:
//!
//! | Claude Code | kind | data |
//! |---|---|---|
//! | `SessionStart` | `session.started` | `agent_name`, `model`, `source` |
//! | `UserPromptSubmit` | `message.received` | `message_id`, `role: "user"`, `content` (the prompt) |
//! | `PreToolUse` | `actions.requested` (a decision) | one action: `call_id` (`tool_use_id`), `tool`, `input` |
//! | `PostToolUse` | `action.result` | `call_id`, `tool`, `status` (`error` when the response says `success: false`), `output` |
//! | `Notification` | `custom.claude.notification` | `message`, `title`, `notification_type` |
//! | `Stop` | `turn.completed` | `stop_hook_active`, `last_assistant_message` |
//! | `SubagentStop` | `turn.completed` in subagent `agent_type` (lowercased)'s scope | the same, `agent_id` |
//! | `PreCompact` | `compaction.requested` | `trigger`, `custom_instructions` |
//! | `SessionEnd` | `session.completed` | `reason` |
//!
//! Every input also keeps `cwd` and `permission_mode` in `data` when given
//! (never `transcript_path`: a path into the user's home a hook has no use
//! for). The session is `session_id`; there is no turn id in Claude Code's
//! input, and each invocation is a process of its own, so the event id and
//! `coordinates.sequence` come from a digest of the input: the same input
//! twice is the same event (deduplicated), a different one is another.

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

/// The Claude Code hook events hookrt stands in for.
pub const CLAUDE_EVENTS: [&str; 9] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
];

/// The envelope of one Claude Code hook input (`agent` names the agent:
/// Claude Code's input does not).
pub fn claude_envelope(agent: &str, input: &str) -> Result<Envelope, ClaudeError> {
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
    let mut subagent = None;
    let mut step = None;
    let text = |f: &Map<String, Value>, k: &str| f.get(k).cloned().unwrap_or(Value::Null);
    let (kind, mut data) = match event.as_str() {
        "SessionStart" => (
            "session.started",
            json!({"agent_name": agent, "model": text(&fields, "model"), "source": text(&fields, "source")}),
        ),
        "UserPromptSubmit" => (
            "message.received",
            json!({"message_id": format!("prompt-{}", hex::encode(&digest[..8])), "role": "user", "content": text(&fields, "prompt")}),
        ),
        "PreToolUse" | "PostToolUse" => {
            let call_id = fields
                .get("tool_use_id")
                .and_then(Value::as_str)
                .map_or_else(
                    || format!("call-{}", hex::encode(&digest[..8])),
                    str::to_owned,
                );
            let tool = text(&fields, "tool_name");
            if !tool.is_string() {
                return Err(ClaudeError::Shape(format!("{event} without `tool_name`")));
            }
            step = Some(call_id.clone());
            if event == "PreToolUse" {
                let input = text(&fields, "tool_input");
                (
                    "actions.requested",
                    json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}]}),
                )
            } else {
                let response = text(&fields, "tool_response");
                let failed = response.get("success") == Some(&Value::Bool(false));
                let status = if failed { "error" } else { "ok" };
                (
                    "action.result",
                    json!({"call_id": call_id, "tool": tool, "status": status, "output": response}),
                )
            }
        }
        "Notification" => (
            "custom.claude.notification",
            json!({"message": text(&fields, "message"), "title": text(&fields, "title"), "notification_type": text(&fields, "notification_type")}),
        ),
        "Stop" | "SubagentStop" => {
            if event == "SubagentStop" {
                subagent = fields
                    .get("agent_type")
                    .and_then(Value::as_str)
                    .map(str::to_lowercase)
                    .or(Some("subagent".to_owned()));
            }
            (
                "turn.completed",
                json!({"stop_hook_active": text(&fields, "stop_hook_active"), "last_assistant_message": text(&fields, "last_assistant_message"), "agent_id": text(&fields, "agent_id")}),
            )
        }
        "PreCompact" => (
            "compaction.requested",
            json!({"trigger": text(&fields, "trigger"), "custom_instructions": text(&fields, "custom_instructions")}),
        ),
        "SessionEnd" => (
            "session.completed",
            json!({"reason": text(&fields, "reason")}),
        ),
        other => {
            return Err(ClaudeError::Shape(format!(
                "hook event `{other}` is not one hookrt stands in for (it handles {})",
                CLAUDE_EVENTS.join(", ")
            )));
        }
    };
    if let Some(obj) = data.as_object_mut() {
        obj.retain(|_, v| !v.is_null());
        for k in ["cwd", "permission_mode"] {
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
    let id = format!("claude-{}", hex::encode(&digest[..12]));
    let mut envelope = Envelope::draft(id, kind.to_owned(), now_rfc3339(), coordinates, data);
    envelope.validate()?;
    Ok(envelope)
}

fn take_text(fields: &mut Map<String, Value>, key: &str) -> Option<String> {
    match fields.remove(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}
