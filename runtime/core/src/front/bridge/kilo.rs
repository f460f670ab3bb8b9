//! The Kilo CLI bridge (`@kilocode/cli` 7.7.7). Kilo is built on OpenCode:
//! it runs the same plugins, with the same hooks and shapes, from its own
//! folders (`.kilo/`, `~/.config/kilo/`), so hookrt's OpenCode plugin and
//! mapping serve it as they are; only its name, its word and where
//! `install` writes the plugin differ.
//!
//! Its input, its answers and what it cannot express: docs/agents.md,
//! "OpenCode and Kilo CLI (`front/bridge/opencode.rs`)".

use super::opencode::{
    OPENCODE_CONTEXT_EVENTS, OPENCODE_EVENTS, OPENCODE_GATES, PLUGIN, opencode_answer,
    opencode_data, opencode_refusal,
};
use super::protocol::{CommandForm, Install, OpenApi, Protocol, Shape, Silence, TimeUnit};

/// How the input of hookrt's plugin reads inside Kilo CLI: OpenCode's.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "kilo",
    label: "Kilo CLI",
    word: "kilo",
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
    refuses_in_json: &OPENCODE_GATES,
    install: Some(Install {
        shape: Shape::Plugin(PLUGIN),
        project: ".kilo/plugins/hookrt.ts",
        user: "kilo/plugins/hookrt.ts",
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
    }),
    signature: None,
    openapi: OpenApi {
        operation_id: "kiloHook",
        input_schema: "OpenCodeHookInput",
    },
};
