//! Deliveries: one (event, hook, handler) invocation and its record.

use std::borrow::Cow;

use crate::delivery::decision::{
    ContextPiece, FileEditDecision, GateDecision, PermissionDecision, ToolApproval,
};
use crate::delivery::edit::EditResult;
use crate::sandbox::capture::LogLine;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::redaction::Redactor;

/// The record of one delivery, as `hookrt run` prints it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Delivery {
    /// The event's id.
    pub event_id: String,
    /// The event's kind.
    pub kind: String,
    /// The hook's id: its slug, or `subagents/<id>/<slug>` for a subagent's hook.
    pub hook: String,
    /// The handler key that matched: the kind or `*`.
    pub handler: String,
    /// The delivery attempt.
    pub attempt: u32,
    /// How it ended.
    pub outcome: Outcome,
    /// Wall time in microseconds.
    pub duration_us: u64,
    /// Fuel consumed.
    pub fuel_used: u64,
    /// Error or trap message, for failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the hook's output was cut at its output budget.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub output_truncated: bool,
    /// The hook's log lines (within its output budget).
    #[serde(skip)]
    pub logs: Vec<LogLine>,
    /// What the hook wrote to stdout and stderr (within its output budget).
    #[serde(skip)]
    pub console: String,
}

/// The deliveries of one event, in the order they ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dispatch {
    /// The event's id.
    pub event_id: String,
    /// The event's kind.
    pub kind: String,
    /// One record per delivery.
    pub deliveries: Vec<Delivery>,
    /// For decision and edit events: what they decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
}

/// What the deliveries of a decision or edit event decided.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The merged answer to `actions.requested`.
    ToolApproval(ToolApproval),
    /// The merged answer to `file.edit.requested`.
    FileEdit(FileEditDecision),
    /// The final state of `step.completed` / `turn.completed` and each hook's account.
    Edit(EditResult),
    /// The merged answer to a gate event (world 0.3.0).
    Gate(GateDecision),
    /// The merged answer to `permission.requested` (world 0.3.0).
    Permission(PermissionDecision),
    /// The context hooks added to an observe event (world 0.3.0), in registration order.
    Context(Vec<ContextPiece>),
}

impl Resolution {
    /// The context hooks added for the model, in registration order (with
    /// the pieces dropped at the bound, marked).
    pub fn context(&self) -> &[ContextPiece] {
        match self {
            Resolution::ToolApproval(t) => &t.context,
            Resolution::Gate(g) => &g.context,
            Resolution::Permission(p) => &p.context,
            Resolution::Context(c) => c,
            Resolution::FileEdit(_) | Resolution::Edit(_) => &[],
        }
    }
}

impl Delivery {
    /// Masks secrets in what the hook wrote (log messages, field keys and
    /// values, console, error).
    pub(crate) fn mask(&mut self, redactor: &Redactor) {
        let fix = |s: &mut String| {
            if let Cow::Owned(masked) = redactor.mask(s) {
                *s = masked;
            }
        };
        for line in &mut self.logs {
            fix(&mut line.message);
            // Keys are the hook's text too: a secret can be a field's name.
            for (k, v) in &mut line.fields {
                fix(k);
                fix(v);
            }
        }
        fix(&mut self.console);
        if let Some(e) = &mut self.error {
            fix(e);
        }
    }
}
