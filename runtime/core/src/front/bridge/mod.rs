//! The agents' bridges: each agent's hook protocol (its events, JSON,
//! exit codes) to hookrt's vocabulary and back, over a command or HTTP.
//!
//! - [`hook_input`]: a hook input read alike for every agent (unknown
//!   events observed, subagents scoped, ids and sequences from a digest);
//! - [`reply`]: what every agent's answer is made of;
//! - [`claude`], [`codex`], [`gemini`], [`cursor`], [`copilot`]: each
//!   agent's mapping and answers;
//! - [`agent`]: [`Bridge`], one way to speak to each.

pub mod agent;
pub mod claude;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod hook_input;
pub mod reply;

pub use agent::{Bridge, Failure};
pub use hook_input::{BridgeError, BridgeEvent};
