//! One decision, whatever the door: `hookrt serve`'s `/v1/decide` and
//! its agents' routes, and `hookrt hook` (an agent's command hook), hand an
//! event to [`decide`], which runs it through a [`Resolver`] (the service,
//! or a command's one-shot runtime) within a deadline and says what came of
//! it ([`Decided`]): resolved, a duplicate (an id taken before is never
//! decided again), refused, or past the deadline. Every outcome but a
//! resolution is a refusal, and a refusal is rendered in one of two
//! dialects, never an allow: an agent's own ([`Decided::told`] gives the
//! answer or the [`Undecided`] reason every door renders alike, a gate's in
//! [`Bridge::refusal`] or, from a command, [`Bridge::failure`]), or
//! hookrt's JSON, the resolution that refuses what the event asked
//! ([`refusing`]). Which gate an input serves is [`Bridge::gate_served`].
//!
//! [`Bridge::refusal`]: super::bridge::Bridge::refusal
//! [`Bridge::failure`]: super::bridge::Bridge::failure
//! [`Bridge::gate_served`]: super::bridge::Bridge::gate_served
//!
//! Admission (tokens, rate limits, body budgets) and HTTP statuses stay
//! with the server: they are the door's, not the decision's.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use super::bridge::Bridge;
use crate::delivery::decision::{
    CallDecision, FileEditDecision, GateDecision, PermissionDecision, ToolApproval,
};
use crate::delivery::edit::EditResult;
use crate::delivery::record::Resolution;
use crate::event::answer::{Approval, FileEdit, Gate, Permission};
use crate::event::envelope::Envelope;
use crate::event::kind::{EventClass, GateRule, class_of, gate_rule};
use crate::service::api::HookService;
use crate::service::report::{Receipt, ResolveReply};
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

/// What runs an event for [`decide`]: the service ([`HookService`]), or
/// an in-process runtime a command hook loads for its one event.
pub trait Resolver {
    /// Runs `envelope` to what its hooks decided, with its receipt.
    fn resolve(
        &self,
        envelope: Envelope,
    ) -> impl Future<Output = Result<ResolveReply, EmitError>> + Send;
}

impl Resolver for HookService {
    fn resolve(
        &self,
        envelope: Envelope,
    ) -> impl Future<Output = Result<ResolveReply, EmitError>> + Send {
        HookService::resolve(self, envelope)
    }
}

/// Runs `envelope` through `resolver`, waiting at most `deadline` for its
/// hooks.
pub async fn decide<R: Resolver>(resolver: &R, envelope: Envelope, deadline: Duration) -> Decided {
    let observed = class_of(&envelope.kind) == EventClass::Observe;
    match tokio::time::timeout(deadline, resolver.resolve(envelope)).await {
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

/// What an agent reads back after an event its hooks decided.
#[derive(Debug)]
pub struct Told {
    /// The answer in the agent's dialect; `None` when there is nothing to
    /// say (the door writes the agent's no-opinion form).
    pub answer: Option<Value>,
    /// What the hooks decided (a signed receipt is made of it).
    pub resolution: Option<Resolution>,
    /// The receipt of the event.
    pub receipt: Receipt,
}

/// Why an event handed to [`decide`] was not decided: the one refusal
/// model. A gate is refused in its agent's words ([`Bridge::refusal`],
/// [`Bridge::failure`]); any other event is the door's error.
#[derive(Debug)]
pub enum Undecided {
    /// Its id was taken before (the same event, or another under its id):
    /// each reading of an agent's input is an event of its own, so this is
    /// not the agent's doing, and a gate is refused.
    Duplicate,
    /// The resolver did not take it.
    Refused(EmitError),
    /// Its hooks did not decide within the deadline.
    TimedOut(Duration),
}

impl Decided {
    /// What the agent behind `bridge` is told after its event `name`: the
    /// hooks' answer in its dialect, or why hookrt could not decide.
    pub fn told(self, bridge: Bridge, name: &str) -> Result<Told, Undecided> {
        match self {
            Decided::Resolved {
                resolution,
                receipt,
            } => Ok(Told {
                answer: bridge.answer(name, resolution.as_ref()),
                resolution,
                receipt,
            }),
            Decided::Duplicate { .. } | Decided::Refused(EmitError::Conflict { .. }) => {
                Err(Undecided::Duplicate)
            }
            Decided::Refused(e) => Err(Undecided::Refused(e)),
            Decided::TimedOut(deadline) => Err(Undecided::TimedOut(deadline)),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::envelope::{Coordinates, Durability};

    fn receipt() -> Receipt {
        Receipt {
            event_id: "evt".into(),
            durability: Durability::Accepted,
            seq: None,
            duplicate: false,
        }
    }

    #[test]
    fn an_agent_is_told_its_hooks_answer_or_why_nothing_was_decided() {
        let claude = Bridge::named("claude-code").expect("a registered agent");
        let envelope = Envelope::new(
            "evt",
            "actions.requested",
            Coordinates::new("agent", "session", 1),
            serde_json::json!({"actions": [{"call_id": "c1", "tool": "Bash", "input": {}}]}),
        )
        .expect("a valid envelope");
        let denied = refusing(&envelope, "not here");
        let told = Decided::Resolved {
            resolution: Some(denied.clone()),
            receipt: receipt(),
        }
        .told(claude, "PreToolUse")
        .expect("resolved");
        assert_eq!(told.answer, claude.answer("PreToolUse", Some(&denied)));
        assert_eq!(
            told.answer.expect("a deny is said")["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        let undecided = |d: Decided| d.told(claude, "PreToolUse").expect_err("undecided");
        let conflict = EmitError::Conflict {
            id: "evt".into(),
            agent: "agent".into(),
        };
        for duplicate in [
            Decided::Duplicate { receipt: receipt() },
            Decided::Refused(conflict),
        ] {
            assert!(matches!(undecided(duplicate), Undecided::Duplicate));
        }
        let stopping = Decided::Refused(EmitError::ShuttingDown("evt".into()));
        assert!(matches!(
            undecided(stopping),
            Undecided::Refused(EmitError::ShuttingDown(_))
        ));
        let late = Decided::TimedOut(Duration::from_millis(7));
        assert!(matches!(undecided(late), Undecided::TimedOut(d) if d.as_millis() == 7));
    }
}
