//! What hookrt's rule packs judge: each pack's settings (the table under
//! `[packs.NAME]` in `hookrt.toml`) and its rules, as plain Rust.
//!
//! The packs' components (`runtime/packs/guest/`) wrap these rules in hooks;
//! the host (`hookrt-packs`) checks a folder's settings with the same types
//! before anything loads, so a setting is refused by the type the component
//! reads, naming its key. Nothing here does I/O: the rules see a tool call's
//! text and answer.

pub mod audit_log;
pub mod budget;
pub mod format_on_edit;
mod glob;
pub mod notify;
pub mod paths;
pub mod protect_paths;
pub mod safe_shell;
pub mod secrets;
pub mod shell;
pub mod tests_at_stop;
pub mod tools;

use std::fmt;

use serde::{Deserialize, Serialize};

/// A setting a pack cannot take: the key at fault and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The key, as settings write it (`allow[0]`, `patterns.NAME`).
    pub key: String,
    /// What is wrong, naming the key.
    pub message: String,
}

impl Invalid {
    /// `key` is wrong: `message` says how.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Invalid {}

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
