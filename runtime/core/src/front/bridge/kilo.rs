//! The Kilo CLI bridge (`@kilocode/cli` 7.7.7). Kilo is built on OpenCode:
//! it runs the same plugins, with the same hooks and shapes, from its own
//! folders (`.kilo/`, `~/.config/kilo/`), so hookrt's OpenCode plugin and
//! mapping serve it as they are; only its name, its word, its route and
//! where `install` writes the plugin differ.
//!
//! Its input, its answers and what it cannot express: docs/agents.md,
//! "OpenCode and Kilo CLI (`front/bridge/opencode.rs`)".

use super::opencode::{INSTALL, OPENCODE};
use super::protocol::{Install, OpenApi, Protocol};

/// How the input of hookrt's plugin reads inside Kilo CLI: OpenCode's.
pub(super) static PROTOCOL: Protocol = Protocol {
    agent: "kilo",
    label: "Kilo CLI",
    word: "kilo",
    install: Some(Install {
        project: ".kilo/plugins/hookrt.ts",
        user: "kilo/plugins/hookrt.ts",
        ..INSTALL
    }),
    openapi: OpenApi {
        operation_id: "kiloHook",
        input_schema: "OpenCodeHookInput",
    },
    ..OPENCODE
};
