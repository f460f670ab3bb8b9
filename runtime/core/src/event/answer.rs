//! Answers: what a handler returns, in the runtime's own types.
//!
//! A decision hook answers each requested tool call with an [`Approval`] and a
//! file-edit request with a [`FileEdit`]; an edit hook returns the edited
//! agent input state. How several answers become one is the delivery layer's
//! business (`delivery::decision`, `delivery::edit`).

use serde::{Deserialize, Serialize};

/// One hook's answer for one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", content = "text", rename_all = "snake_case")]
pub enum Approval {
    /// No opinion.
    Abstain,
    /// May run.
    Allow,
    /// A human must confirm: the question.
    Ask(String),
    /// Must not run: the reason.
    Deny(String),
}

impl Approval {
    /// deny > ask > allow > abstain.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Approval::Abstain => 0,
            Approval::Allow => 1,
            Approval::Ask(_) => 2,
            Approval::Deny(_) => 3,
        }
    }
}

/// One hook's answer to a file edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", content = "message", rename_all = "snake_case")]
pub enum FileEdit {
    /// Does not own the edit.
    NotHandled,
    /// Applied and saved it.
    Applied,
    /// Owns it and it failed: the agent must abort its own write.
    Failed(String),
}

/// What one handler answered (stored with its delivery's ack, so a decision
/// interrupted by a crash is finished with the answers given before it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", content = "value", rename_all = "snake_case")]
pub enum Answer {
    /// Nothing (also every answer of a 0.1.0 hook).
    None,
    /// One approval per requested call.
    Approvals(Vec<Approval>),
    /// A file-edit answer.
    FileEdit(FileEdit),
    /// The whole edited agent input state, as JSON text.
    Edit(String),
}
