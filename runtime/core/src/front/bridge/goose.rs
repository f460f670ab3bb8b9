//! The goose bridge (`aaif-goose/goose` 1.50, formerly `block/goose`; its
//! hooks read from its source, `crates/goose/src/hooks/`). **From its
//! source**: no goose binary is on a registry the tests can pin from.
//!
//! goose runs the hooks of Open Plugins: every folder under
//! `.agents/plugins/` (the project's, then `~/.agents/plugins/`) with a
//! `hooks/hooks.json` in Claude Code's grouped shape, each entry one
//! `sh -c` line (no `args`), its matcher an unanchored regex (absent:
//! every tool), `on_failure: "block"` read on `PreToolUse` only. hookrt's
//! entries go into a plugin of its own, `.agents/plugins/hookrt/`. Its
//! input names the event (`event`) and gives `session_id`, `tool_name`
//! (`extension__tool`, `developer__shell`), `tool_input`, `tool_call_id`,
//! `message`, `last_assistant_message`, `working_dir`.
//!
//! Only `PreToolUse` and `Stop` read an answer: `{"decision": "block",
//! "reason"}` (on any exit code; exit 2 blocks too, its reason on stderr),
//! `{"decision": "allow"}` or nothing; anything else is a hook failure.
//!
//! In full: docs/agents.md, "goose (`front/bridge/goose.rs`)".

use serde_json::{Map, Value, json};

use super::hook_input::{field, object_of, required_text};
use super::protocol::{
    CommandForm, FailClosed, Install, Mapped, Missing, OpenApi, Protocol, Reading, Shape, Silence,
    TimeUnit,
};
use super::reply;
use crate::delivery::record::Resolution;

/// Every hook event of goose 1.50 (`HookEvent::from_name`) and its kind.
const GOOSE_EVENTS: [(&str, &str); 12] = [
    ("SessionStart", "session.started"),
    ("UserPromptSubmit", "prompt.submitted"),
    ("PreToolUse", "actions.requested"),
    ("PreToolUseResult", "custom.goose.pre_tool_use_result"),
    (
        "BeforeShellExecution",
        "custom.goose.before_shell_execution",
    ),
    ("BeforeReadFile", "custom.goose.before_read_file"),
    ("PostToolUse", "action.result"),
    ("PostToolUseFailure", "action.result"),
    ("AfterShellExecution", "custom.goose.after_shell_execution"),
    ("AfterFileEdit", "custom.goose.after_file_edit"),
    ("Stop", "turn.stopping"),
    ("SessionEnd", "session.completed"),
];

/// The one goose event that waits to be told whether something may run.
const GOOSE_GATES: [&str; 1] = ["PreToolUse"];

/// How goose's hook input reads.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "goose",
    label: "goose",
    word: "goose",
    events: &GOOSE_EVENTS,
    event_field: Some("event"),
    session_fields: &["session_id"],
    id_field: None,
    subagent_fields: None,
    kept: &[],
    dropped: &["matcher_context", "working_dir"],
    transcripts: None,
    map: goose_data,
    turn_field: None,
    gates: &GOOSE_GATES,
    // goose reads no context from a hook.
    context_events: &[],
    answer: goose_answer,
    refusal: goose_refusal,
    silence: Silence::Nothing,
    // A block on stdout blocks on any exit code, and carries the reason.
    refuses_in_json: &GOOSE_GATES,
    install: Some(Install {
        shape: Shape::Grouped,
        project: ".agents/plugins/hookrt/hooks/hooks.json",
        user: ".agents/plugins/hookrt/hooks/hooks.json",
        home_env: None,
        // A matcher is a regex (`*` is none: the rule is skipped); none
        // matches every tool.
        tool_events: &[],
        not_installed: &[],
        http_hooks: false,
        command_only: &[],
        command: CommandForm::Line("command"),
        typed: true,
        name: None,
        timeout: ("timeout", TimeUnit::Seconds),
        fail_closed: Some(FailClosed::Word("on_failure", "block")),
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "gooseHook",
        input_schema: "GooseHookInput",
    },
};

fn goose_data(
    event: &str,
    kind: &str,
    fields: &Map<String, Value>,
    id: &Reading,
) -> Result<Mapped, Missing> {
    let text = |k: &str| field(fields, k);
    // The project (the packs read `cwd`).
    let cwd = text("working_dir");
    let call_id = || id.call_id(fields.get("tool_call_id"));
    let mut step = None;
    let data = match event {
        "PreToolUse" | "PostToolUse" | "PostToolUseFailure" => {
            let tool = required_text(fields, "tool_name", event)?;
            let call_id = call_id();
            step = Some(call_id.clone());
            let input = object_of(text("tool_input"));
            match event {
                "PreToolUse" => {
                    json!({"actions": [{"call_id": call_id, "tool": tool, "input": input}], "cwd": cwd})
                }
                // goose hands over no output.
                _ => {
                    let status = if event == "PostToolUse" {
                        "ok"
                    } else {
                        "error"
                    };
                    json!({"call_id": call_id, "tool": tool, "input": input, "status": status, "cwd": cwd})
                }
            }
        }
        "UserPromptSubmit" => json!({"prompt": text("message"), "cwd": cwd}),
        "SessionStart" => json!({"agent_name": id.agent(), "cwd": cwd}),
        "Stop" => json!({"continued": false, "last_message": text("last_assistant_message"),
            "cwd": cwd}),
        "SessionEnd" => json!({}),
        _ => Value::Object(fields.clone()),
    };
    Ok(Mapped {
        kind: kind.to_owned(),
        step,
        data,
    })
}

/// goose's words: `block` for a deny, an ask (it asks no one from a hook),
/// a rewrite (it takes no input back) and a stop kept going (the reason
/// goes to the model).
const GOOSE_WORDS: reply::Decisions = reply::Decisions {
    deny: "block",
    ask: None,
    allow: "allow",
    keep_going: "block",
    no_rewrite: "goose takes no rewritten input",
};

/// What goose reads back after event `name`: `{"decision": "block" |
/// "allow", "reason"}` on `PreToolUse` and `Stop`; `None` when there is
/// nothing to say.
fn goose_answer(_name: &str, resolution: Option<&Resolution>) -> Option<Value> {
    reply::decided(&GOOSE_WORDS, resolution?).map(Value::Object)
}

/// The answer that refuses gate `name`: its block, with the reason.
fn goose_refusal(_name: &str, reason: &str) -> Value {
    reply::decision_refusal(&GOOSE_WORDS, reason)
}
