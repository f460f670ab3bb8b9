//! The agents' bridges: each agent's hook protocol (its events, JSON,
//! exit codes, hook configuration) to hookrt's vocabulary and back, over a
//! command or HTTP.
//!
//! - [`protocol`]: [`Protocol`], everything about one agent, the extension
//!   point: a new agent is one module here holding its `Protocol` and one
//!   line in [`Bridge::ALL`] (docs/agents.md, "Adding an agent");
//! - [`hook_input`]: a hook input read alike for every agent (unknown
//!   events observed, subagents scoped, ids and sequences from a digest);
//! - [`reply`]: what every agent's answer is made of;
//! - `claude`, `codex`, `gemini`, `cursor`, `copilot`: each agent's
//!   `Protocol` (crate-private: reached through [`Bridge`]);
//! - [`agent`]: [`Bridge`], the registry and one way to speak to each.

pub mod agent;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;
pub mod hook_input;
pub mod protocol;
pub mod reply;

pub use agent::{Bridge, Failure};
pub use hook_input::{BridgeError, BridgeEvent};
pub use protocol::Protocol;
