//! What a decision or edit request answers when its hooks could not decide
//! in time (or the service could not take the event): never an allow.
//!
//! - `actions.requested`: every requested call is denied, with the reason;
//! - `file.edit.requested`: the edit failed, with the reason;
//! - `permission.requested`: denied, with the reason;
//! - a gate: blocked, with the reason (`turn.stopping`: the turn stops, it
//!   is never kept going by a failure);
//! - `step.completed` / `turn.completed`: the event's own state, unchanged,
//!   with the edits rolled back for the reason.

use hookrt::event::{Gate, GateRule, Permission, gate_rule};
use hookrt::{
    Approval, CallDecision, EditResult, Envelope, FileEdit, FileEditDecision, GateDecision,
    PermissionDecision, Resolution, ToolApproval,
};

/// The resolution that refuses whatever `envelope` asked for, saying `reason`.
pub fn resolution(envelope: &Envelope, reason: &str) -> Resolution {
    match envelope.kind.as_str() {
        "actions.requested" => {
            let calls = envelope
                .data
                .get("actions")
                .and_then(|a| a.as_array())
                .map(|actions| {
                    actions
                        .iter()
                        .map(|a| CallDecision {
                            call_id: text(a, "call_id"),
                            tool: text(a, "tool"),
                            verdict: Approval::Deny(reason.to_owned()),
                            decided_by: None,
                            failure: true,
                            answers: Vec::new(),
                            rewrites: Vec::new(),
                            input: None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            Resolution::ToolApproval(ToolApproval {
                calls,
                context: Vec::new(),
            })
        }
        "permission.requested" => Resolution::Permission(PermissionDecision {
            verdict: Permission::Deny {
                message: reason.to_owned(),
                interrupt: false,
            },
            decided_by: None,
            failure: true,
            answers: Vec::new(),
            rewrites: Vec::new(),
            input: None,
            context: Vec::new(),
        }),
        kind if gate_rule(kind).is_some() => Resolution::Gate(GateDecision {
            verdict: match gate_rule(kind) {
                Some(GateRule::Block) => Gate::Block(reason.to_owned()),
                _ => Gate::Pass,
            },
            decided_by: None,
            failure: true,
            capped: false,
            answers: Vec::new(),
            context: Vec::new(),
        }),
        "file.edit.requested" => Resolution::FileEdit(FileEditDecision {
            result: FileEdit::Failed(reason.to_owned()),
            decided_by: None,
            failure: true,
            answers: Vec::new(),
        }),
        _ => Resolution::Edit(EditResult {
            state: envelope
                .data
                .get("state")
                .cloned()
                .unwrap_or(serde_json::Value::Null),
            changed: false,
            rolled_back: Some(reason.to_owned()),
            accounts: Vec::new(),
        }),
    }
}

fn text(v: &serde_json::Value, key: &str) -> String {
    v.get(key)
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_owned()
}
