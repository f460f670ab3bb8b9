//! What hookrt's rule packs judge: each pack's settings (the table under
//! `[packs.NAME]` in `hookrt.toml`) and its rules, as plain Rust.
//!
//! The packs' components (`runtime/packs/guest/`) wrap these rules in hooks;
//! the host (`hookrt-packs`) checks a folder's settings with the same types
//! before anything loads, so a setting is refused by the type the component
//! reads, naming its key. Nothing here does I/O: the rules see a tool call's
//! text and answer.

pub mod paths;
pub mod safe_shell;
pub mod shell;
pub mod tools;

use serde::{Deserialize, Serialize};

/// What a pack answers on a call one of its rules catches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The call is refused, the reason sent to the model.
    #[default]
    Deny,
    /// A human is asked, with the reason.
    Ask,
}
