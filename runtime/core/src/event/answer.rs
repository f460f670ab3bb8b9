//! Answers: what a handler returns, in the runtime's own types.
//!
//! A decision hook answers each requested tool call with an [`Approval`]
//! (and, from world 0.3.0, a rewrite of its input: [`CallAnswer`]), a
//! file-edit request with a [`FileEdit`] and a permission request with a
//! [`Permission`]; an edit hook returns the edited agent input state; a gate
//! hook passes, blocks or continues ([`Gate`]). Any handler may add context
//! for the model ([`Reply`]). How several answers become one is the delivery layer's
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
    /// One answer per requested call, each with an optional rewrite (0.3.0).
    Calls(Vec<CallAnswer>),
    /// A gate answer (0.3.0).
    Gate(Gate),
    /// A permission request's answer (0.3.0).
    Permission(Permission),
}

/// One hook's answer for one requested call (world 0.3.0): an approval and,
/// from a `rewrite:` subscription, the call's whole input as the hook would
/// have it run (JSON text of an object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallAnswer {
    /// Whether the call may run.
    pub approval: Approval,
    /// The rewritten input, as JSON text; `None` keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<String>,
}

/// One hook's answer to a gate event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", content = "reason", rename_all = "snake_case")]
pub enum Gate {
    /// No opinion: the agent goes on as it would.
    Pass,
    /// Stop what the event announces: the reason.
    Block(String),
    /// Keep the turn going: what the model is told to do next.
    Continue(String),
}

/// One hook's answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Permission {
    /// No opinion: a human is asked.
    Abstain,
    /// Allowed without asking; with the call's whole input rewritten (JSON
    /// text of an object, from a `rewrite:` subscription) or not.
    Allow {
        /// The rewritten input.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rewrite: Option<String>,
    },
    /// Refused without asking.
    Deny {
        /// What the agent and the model are told.
        message: String,
        /// Whether the agent also stops the turn.
        interrupt: bool,
    },
}

impl Permission {
    /// deny > allow > abstain.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Permission::Abstain => 0,
            Permission::Allow { .. } => 1,
            Permission::Deny { .. } => 2,
        }
    }
}

/// What one handler returned: its answer and the context it adds for the
/// model (world 0.3.0). Stored as one JSON object with the delivery's ack;
/// an answer stored before 0.3.0 reads as a reply without context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// The answer.
    #[serde(flatten)]
    pub answer: Answer,
    /// Text for the model's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl Reply {
    /// Nothing said.
    pub(crate) const NONE: Reply = Reply {
        answer: Answer::None,
        context: None,
    };
}

impl From<Answer> for Reply {
    fn from(answer: Answer) -> Reply {
        Reply {
            answer,
            context: None,
        }
    }
}
