//! The Codex CLI bridge. Codex (`@openai/codex` 0.171.0) speaks Claude
//! Code's hook protocol (the same input fields, plus `turn_id`; the same
//! answers; exit 2 to block), so its input reads with Claude Code's mapping
//! and its answers are Claude Code's, less what Codex's own output schemas
//! refuse ([`CODEX_DIALECT`]).
//!
//! Its input, its answers and what it cannot express, in full:
//! docs/agents.md, "Codex CLI (`front/bridge/codex.rs`)".

use serde_json::{Map, Value};

use super::claude::{Dialect, answer_in, claude_data, claude_refusal};
use super::protocol::{
    CommandForm, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence, TimeUnit,
    Transcripts,
};
use crate::delivery::record::Resolution;

/// Every hook event of the pinned Codex (0.171.0: the input schemas its
/// binary embeds) and its kind.
pub(super) const CODEX_EVENTS: [(&str, &str); 12] = [
    ("SessionStart", "session.started"),
    ("SessionEnd", "session.completed"),
    ("UserPromptSubmit", "prompt.submitted"),
    ("PreToolUse", "actions.requested"),
    ("PermissionRequest", "permission.requested"),
    ("PostToolUse", "action.result"),
    ("PreCompact", "compaction.requested"),
    ("PostCompact", "compaction.completed"),
    ("SubagentStart", "custom.codex.subagent_start"),
    ("SubagentStop", "turn.stopping"),
    ("Stop", "turn.stopping"),
    ("Interrupt", "custom.codex.interrupt"),
];

/// The Codex events that gate something: hookrt failing on one refuses
/// (exit 2 denies the call or the permission, blocks the prompt).
pub(super) const CODEX_GATES: [&str; 3] = ["PreToolUse", "PermissionRequest", "UserPromptSubmit"];

/// How Codex's hook input reads: Claude Code's fields and mapping.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "codex",
    label: "Codex",
    word: "codex",
    events: &CODEX_EVENTS,
    event_field: Some("hook_event_name"),
    session_fields: &["session_id"],
    id_field: None,
    subagent_fields: Some(("agent_id", "agent_type")),
    kept: &["cwd", "permission_mode", "model", "agent_id", "agent_type"],
    dropped: &["transcript_path", "agent_transcript_path"],
    transcripts: Some(Transcripts {
        fields: &["agent_transcript_path", "transcript_path"],
        home: (Some("CODEX_HOME"), ".codex"),
        under: "sessions",
    }),
    map: codex_data,
    turn_field: Some("turn_id"),
    gates: &CODEX_GATES,
    context_events: CODEX_DIALECT.context_events,
    answer: codex_answer,
    // Codex reads Claude Code's deny and block.
    refusal: claude_refusal,
    silence: Silence::Nothing,
    refuses_in_json: &[],
    install: Some(Install {
        shape: Shape::Grouped,
        project: ".codex/hooks.json",
        user: "hooks.json",
        home_env: Some(("CODEX_HOME", ".codex")),
        tool_events: &["PreToolUse", "PermissionRequest", "PostToolUse"],
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
        operation_id: "codexHook",
        input_schema: "CodexHookInput",
    },
};

/// What Codex's output schemas take of a Claude-shaped answer.
const CODEX_DIALECT: Dialect = Dialect {
    context_events: &[
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "SessionStart",
        "SubagentStart",
    ],
    stop_takes_context: false,
    permission_rewrite: false,
    silent: &["SessionEnd", "PreCompact"],
    ask: false,
    bare_allow: false,
};

fn codex_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    match event {
        // Codex's own: its input's fields as they are.
        "SubagentStart" | "Interrupt" => Ok(Mapped {
            kind: kind.to_owned(),
            step: None,
            data: Value::Object(fields.clone()),
        }),
        _ => claude_data(event, kind, fields, id),
    }
}

/// What Codex reads back after event `name`: `None` when there is nothing
/// to say.
fn codex_answer(name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    answer_in(&CODEX_DIALECT, name, resolution)
}
