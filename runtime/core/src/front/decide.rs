//! One decision, whatever the door: `hookrt serve`'s `/v1/decide` and
//! its agents' routes hand an event to [`decide`], which runs it through
//! the service within a deadline and says what came of it ([`Decided`]):
//! resolved, a duplicate (an id taken before is never decided again),
//! refused by the service, or past the deadline. Every outcome but a
//! resolution is a refusal, and a refusal is rendered in one of two
//! dialects, never an allow: an agent's own ([`Bridge::refusal`], which a
//! command hook's failure exits with, [`Bridge::failure`]), or hookrt's
//! JSON, the resolution that refuses what the event asked ([`refusing`]).
//! Which gate an input serves is [`Bridge::gate_served`].
//!
//! [`Bridge::refusal`]: super::bridge::Bridge::refusal
//! [`Bridge::failure`]: super::bridge::Bridge::failure
//! [`Bridge::gate_served`]: super::bridge::Bridge::gate_served
//!
//! Admission (tokens, rate limits, body budgets) and HTTP statuses stay
//! with the server: they are the door's, not the decision's.

use std::time::Duration;

use crate::delivery::decision::{
    CallDecision, FileEditDecision, GateDecision, PermissionDecision, ToolApproval,
};
use crate::delivery::edit::EditResult;
use crate::delivery::record::Resolution;
use crate::event::answer::{Approval, FileEdit, Gate, Permission};
use crate::event::envelope::Envelope;
use crate::event::kind::{EventClass, GateRule, class_of, gate_rule};
use crate::service::api::HookService;
use crate::service::report::Receipt;
use crate::service::work::EmitError;

/// What came of one event handed to [`decide`].
#[derive(Debug)]
pub enum Decided {
    /// Its hooks decided; `None` for an observe event no hook added
    /// context to.
    Resolved {
        /// What they decided.
        resolution: Option<Resolution>,
        /// The service's receipt.
        receipt: Receipt,
    },
    /// Its id was taken before: its decision is not made again.
    Duplicate {
        /// The receipt of the event taken again.
        receipt: Receipt,
    },
    /// The service did not take it.
    Refused(EmitError),
    /// Its hooks did not decide within the deadline (the event is taken
    /// and its hooks go on).
    TimedOut(Duration),
}

/// Runs `envelope` through `service`, waiting at most `deadline` for its
/// hooks.
pub async fn decide(service: &HookService, envelope: Envelope, deadline: Duration) -> Decided {
    let observed = class_of(&envelope.kind) == EventClass::Observe;
    match tokio::time::timeout(deadline, service.resolve(envelope)).await {
        // Only a duplicate resolves a decision, gate or edit to nothing.
        Ok(Ok(reply)) if reply.resolution.is_none() && !observed => Decided::Duplicate {
            receipt: reply.receipt,
        },
        Ok(Ok(reply)) => Decided::Resolved {
            resolution: reply.resolution,
            receipt: reply.receipt,
        },
        Ok(Err(e)) => Decided::Refused(e),
        Err(_) => Decided::TimedOut(deadline),
    }
}

/// The resolution that refuses whatever `envelope` asked for, saying
/// `reason`: never an allow.
///
/// - `actions.requested`: every requested call is denied, with the reason;
/// - `file.edit.requested`: the edit failed, with the reason;
/// - `permission.requested`: denied, with the reason;
/// - a gate: blocked, with the reason (`turn.stopping`: the turn stops, it
///   is never kept going by a failure);
/// - `step.completed` / `turn.completed`: the event's own state, unchanged,
///   with the edits rolled back for the reason.
pub fn refusing(envelope: &Envelope, reason: &str) -> Resolution {
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
