//! The agents' bridges: each agent's hook protocol (its events, JSON,
//! exit codes, hook configuration) to hookrt's vocabulary and back, over a
//! command or HTTP.
//!
//! - [`protocol`]: [`Protocol`], everything about one agent, the extension
//!   point: a new agent is one module here holding its `Protocol` (named
//!   `PROTOCOL`) and its name on the one line of `agents!` below
//!   (docs/agents.md, "Adding an agent");
//! - [`hook_input`]: a hook input read alike for every agent (unknown
//!   events observed, subagents scoped, ids and sequences from a digest);
//! - [`reply`]: what every agent's answer is made of;
//! - `claude`, `codex`, `gemini`, `cursor`, `copilot`: each agent's
//!   `Protocol` (crate-private: reached through [`Bridge`]);
//! - [`agent`]: [`Bridge`], the registry and one way to speak to each.

pub mod agent;
pub mod hook_input;
pub mod protocol;
pub mod reply;

pub use agent::{Bridge, Failure};
pub use hook_input::{BridgeError, BridgeEvent, Stamp};
pub use protocol::Protocol;

/// Declares each agent's module and lists its `PROTOCOL`, in order, for
/// [`Bridge::ALL`]: the registry is the one line that calls it.
macro_rules! agents {
    ($($agent:ident),+ $(,)?) => {
        $(mod $agent;)+
        /// Every agent's protocol, in the order the docs list them.
        const REGISTERED: [&Protocol; [$(stringify!($agent)),+].len()] =
            [$(&$agent::PROTOCOL),+];
    };
}

// The registry: one name per agent, in the order the docs list them.
agents![claude, codex, gemini, cursor, copilot];
