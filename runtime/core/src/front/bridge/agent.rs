//! The agents hookrt bridges, and one way to speak to each: read its hook
//! input ([`Bridge::read`]), answer it ([`Bridge::answer`]), refuse a gate
//! it could not decide ([`Bridge::refusal`]), and exit as its command hooks
//! must ([`Bridge::failure`]). `hookrt hook --agent NAME`, `hookrt
//! claude-hook` and `hookrt serve`'s agent routes all go through here, so
//! every transport answers an agent alike.

use serde_json::Value;

use super::hook_input::{BridgeError, BridgeEvent, Protocol, read};
use super::{claude, codex, copilot, cursor, gemini, reply};
use crate::delivery::record::Resolution;

/// An agent whose hooks hookrt stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bridge {
    /// Claude Code (`@anthropic-ai/claude-agent-sdk` 0.3.333).
    ClaudeCode,
    /// OpenAI's Codex CLI (`@openai/codex` 0.171.0).
    Codex,
    /// Google's Gemini CLI (`@google/gemini-cli` 0.61.0).
    Gemini,
    /// Cursor (its documented `hooks.json`, version 1).
    Cursor,
    /// GitHub Copilot CLI (`@github/copilot` 1.0.102).
    Copilot,
}

/// What a command hook does when hookrt failed: what it prints on stdout
/// (the agent's refusal, where the exit code alone would not refuse) and
/// its exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Printed on stdout, when the agent needs JSON to refuse.
    pub stdout: Option<Value>,
    /// The exit code.
    pub code: u8,
}

impl Bridge {
    /// Every agent, in the order the docs list them.
    pub const ALL: [Bridge; 5] = [
        Bridge::ClaudeCode,
        Bridge::Codex,
        Bridge::Gemini,
        Bridge::Cursor,
        Bridge::Copilot,
    ];

    /// The agent's name on the command line and in URLs (`claude-code`,
    /// `codex`, …): also the agent name hooks see unless told another.
    pub fn name(self) -> &'static str {
        self.protocol().agent
    }

    /// The agent named `name` ([`Bridge::name`]).
    pub fn named(name: &str) -> Option<Bridge> {
        Bridge::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The names of every agent, for messages.
    pub fn names() -> String {
        Bridge::ALL.map(Bridge::name).join(", ")
    }

    /// How the agent's hook input reads.
    pub fn protocol(self) -> &'static Protocol {
        match self {
            Bridge::ClaudeCode => &claude::CLAUDE,
            Bridge::Codex => &codex::CODEX,
            Bridge::Gemini => &gemini::GEMINI,
            Bridge::Cursor => &cursor::CURSOR,
            Bridge::Copilot => &copilot::COPILOT,
        }
    }

    /// Every event of the pinned release of the agent and its kind.
    pub fn events(self) -> &'static [(&'static str, &'static str)] {
        self.protocol().events
    }

    /// The envelope of one hook input: `agent` is the name hooks see,
    /// `event` names the event when the input does not, `transport` is how
    /// it came (`command`, `http`).
    pub fn read(
        self,
        agent: &str,
        input: &str,
        event: Option<&str>,
        transport: &str,
    ) -> Result<BridgeEvent, BridgeError> {
        read(self.protocol(), agent, input, event, transport)
    }

    /// The events that gate something: hookrt failing on one must refuse.
    pub fn gates(self) -> &'static [&'static str] {
        match self {
            Bridge::ClaudeCode => &claude::CLAUDE_GATES,
            Bridge::Codex => &codex::CODEX_GATES,
            Bridge::Gemini => &gemini::GEMINI_GATES,
            Bridge::Cursor => &cursor::CURSOR_GATES,
            Bridge::Copilot => &copilot::COPILOT_GATES,
        }
    }

    /// Whether event `name` gates something.
    pub fn is_gate(self, name: &str) -> bool {
        self.gates().contains(&name)
    }

    /// The gate a raw input names, read without parsing it (so also when it
    /// is broken).
    pub fn gate_named(self, input: &str) -> Option<&'static str> {
        reply::gate_named(self.gates(), input)
    }

    /// What the agent reads back after event `name`, whose hooks decided
    /// `resolution`: `None` when there is nothing to say.
    pub fn answer(self, name: &str, resolution: Option<&Resolution>) -> Option<Value> {
        match self {
            Bridge::ClaudeCode => claude::claude_answer(name, resolution),
            Bridge::Codex => codex::codex_answer(name, resolution),
            Bridge::Gemini => gemini::gemini_answer(name, resolution),
            Bridge::Cursor => cursor::cursor_answer(name, resolution),
            Bridge::Copilot => copilot::copilot_answer(name, resolution),
        }
    }

    /// What a command hook prints when there is nothing to say: nothing,
    /// or `{}` where the agent would read anything else on stderr or stdout
    /// as a message (Gemini CLI).
    pub fn no_opinion(self) -> Option<Value> {
        match self {
            Bridge::Gemini => Some(Value::Object(Default::default())),
            Bridge::ClaudeCode | Bridge::Codex | Bridge::Cursor | Bridge::Copilot => None,
        }
    }

    /// The answer that refuses gate `name` because hookrt could not decide
    /// it (`reason` says why).
    pub fn refusal(self, name: &str, reason: &str) -> Value {
        match self {
            Bridge::ClaudeCode | Bridge::Codex => claude::claude_refusal(name, reason),
            Bridge::Gemini => gemini::gemini_refusal(name, reason),
            Bridge::Cursor => cursor::cursor_refusal(name, reason),
            Bridge::Copilot => copilot::copilot_refusal(name, reason),
        }
    }

    /// What a command hook hookrt failed in does: refuse `gate` (the gate
    /// the input names, if it names one) so the agent blocks what it
    /// guards, or, for any other event, exit so the agent shows the error
    /// and goes on (1). Every agent blocks a tool call on exit 2 (Gemini
    /// CLI on any exit but 0 and 1 with text on stderr, which is the
    /// reason); Copilot CLI lets a prompt through on one, so its prompt
    /// gate refuses in JSON.
    pub fn failure(self, gate: Option<&str>, reason: &str) -> Failure {
        match (self, gate) {
            (_, None) => Failure {
                stdout: None,
                code: 1,
            },
            (Bridge::Copilot, Some(g @ "userPromptSubmitted")) => Failure {
                stdout: Some(self.refusal(g, reason)),
                code: 0,
            },
            (_, Some(_)) => Failure {
                stdout: None,
                code: 2,
            },
        }
    }
}
