//! The agents' bridges: each agent's hook protocol (its events, JSON,
//! exit codes, hook configuration) to hookrt's vocabulary and back, over a
//! command or HTTP.
//!
//! - [`protocol`]: [`Protocol`], everything about one agent, the extension
//!   point: a new agent is one module here holding its `Protocol` (named
//!   `PROTOCOL`), declared below and named on the one line of `agents!`
//!   (docs/agents.md, "Adding an agent");
//! - [`hook_input`]: a hook input read alike for every agent (unknown
//!   events observed, subagents scoped, ids and sequences from a digest);
//! - [`reply`]: what every agent's answer is made of;
//! - `claude`, `codex`, `gemini`, `cursor`, `copilot`, `opencode`, `kilo`,
//!   `cline`, `openhands`, `goose`, `antigravity`: each agent's `Protocol`
//!   (crate-private: reached through [`Bridge`]); `inference`,
//!   Anthropic's inference hooks, a plane rather than an agent, spoken to
//!   the same way; [`mcp`], MCP interceptors, another plane (public: its
//!   event names and payload reading serve the interceptor server,
//!   `hookrt-mcp`);
//! - `agent`: [`Bridge`], the registry and one way to speak to each.

mod agent;
pub mod hook_input;
pub mod protocol;
pub mod reply;

pub use agent::{Bridge, Failure};
pub(crate) use hook_input::Stamp;
pub use hook_input::{BridgeError, BridgeEvent};
pub use protocol::{MapFn, Protocol, Signature, Transcripts};

// Each agent's module, declared as a plain `mod` so that tools following
// the module tree see it (cargo-mutants does not look inside a macro's
// call); one left out of the registry is dead code, which the build refuses.
mod antigravity;
mod claude;
mod cline;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod goose;
mod inference;
mod kilo;
pub mod mcp;
mod opencode;
mod openhands;

/// Lists each agent's `PROTOCOL`, in order, for [`Bridge::ALL`]: the
/// registry is the one line that calls it.
macro_rules! agents {
    ($($agent:ident),+ $(,)?) => {
        /// Every agent's protocol, in the order the docs list them.
        const REGISTERED: [&Protocol; [$(stringify!($agent)),+].len()] =
            [$(&$agent::PROTOCOL),+];
    };
}

// The registry: one name per agent, in the order the docs list them.
agents![
    claude,
    codex,
    gemini,
    cursor,
    copilot,
    opencode,
    kilo,
    cline,
    openhands,
    goose,
    antigravity,
    inference,
    mcp
];
