//! Decisions: how the answers of several hooks become one.
//!
//! Tool approval (`actions.requested`): for each requested call, every hook
//! answers `abstain`, `allow`, `ask(question)` or `deny(reason)`, in
//! registration order. The merge is **deny > ask > allow > abstain**; the
//! first deny's reason (or the first ask's question) wins; every answer is
//! kept with its hook. A failed delivery is never read as `allow`: under
//! `on_failure = "deny"` (the default) it is a deny marked `failure`, under
//! `"abstain"` an abstain marked `failure`.
//!
//! File-edit ownership (`file.edit.requested`): hooks are asked in order; the
//! first that answers `applied` or `failed` decides and the rest are not
//! asked. `failed` tells the agent to abort its own write; it is never turned
//! into `not-handled`. A failed delivery under `on_failure = "deny"` is a
//! `failed` marked `failure`.
//!
//! Because the tool-approval merge reads every answer only once all are in
//! (it depends on their plan order, not on when they arrive), the hooks of
//! one `actions.requested` event can run side by side on the **decision
//! workers** (`threads.rs`), the costliest hooks (by their past
//! deliveries) first; their deliveries are then recorded in plan order, as
//! if they had run one after another. File-edit ownership
//! stays sequential (the first owner stops the rest), and so do edits (each
//! hook sees the edits before it).

use serde::{Deserialize, Serialize};

use crate::event::answer::{Approval, FileEdit};
use crate::hooks::folder::settings::OnFailure;
use crate::sandbox::outcome::Outcome;

/// A hook's vote: what it answered to a decision event as the merge counts it,
/// and whether it stands in for a failed delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote<T> {
    /// The hook's slug.
    pub hook: String,
    /// What counts as its answer.
    #[serde(flatten)]
    pub answer: T,
    /// The delivery failed (with this outcome); the answer is the `on_failure` policy's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Outcome>,
}

/// The merged decision for one requested tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallDecision {
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The merged answer.
    pub verdict: Approval,
    /// The hook whose answer decided (none when every hook abstained).
    pub decided_by: Option<String>,
    /// Whether the deciding answer came from a failed delivery.
    pub failure: bool,
    /// Every hook's answer, in registration order.
    pub answers: Vec<Vote<Approval>>,
}

/// The merged answer to `actions.requested`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolApproval {
    /// One decision per requested call, in the event's order.
    pub calls: Vec<CallDecision>,
}

/// The merged answer to `file.edit.requested`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEditDecision {
    /// The result the agent must act on.
    pub result: FileEdit,
    /// The hook that decided (none: nobody handled it).
    pub decided_by: Option<String>,
    /// Whether the deciding answer came from a failed delivery.
    pub failure: bool,
    /// The answers of the hooks that were asked, in order.
    pub answers: Vec<Vote<FileEdit>>,
}

/// What a failed delivery of a decision hook counts as.
pub fn failure_approval(on_failure: OnFailure, hook: &str, outcome: Outcome) -> Approval {
    match on_failure {
        OnFailure::Deny => Approval::Deny(format!(
            "policy hook `{hook}` failed ({outcome}); denied because it fails closed"
        )),
        OnFailure::Abstain => Approval::Abstain,
    }
}

/// What a failed delivery of a file-edit hook counts as.
pub fn failure_file_edit(on_failure: OnFailure, hook: &str, outcome: Outcome) -> FileEdit {
    match on_failure {
        OnFailure::Deny => FileEdit::Failed(format!(
            "file-edit hook `{hook}` failed ({outcome}); the write is aborted because it fails closed"
        )),
        OnFailure::Abstain => FileEdit::NotHandled,
    }
}

/// A requested call, from `actions.requested` data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestedCall {
    /// Its id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
}

/// The calls an `actions.requested` event asks about.
pub fn requested_calls(data: &serde_json::Value) -> Vec<RequestedCall> {
    data["actions"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| RequestedCall {
                    call_id: c["call_id"].as_str().unwrap_or_default().to_owned(),
                    tool: c["tool"].as_str().unwrap_or_default().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Merges per-hook answers (each one list aligned with `calls`) in order.
pub fn merge_approvals(calls: &[RequestedCall], per_hook: &[Vote<Vec<Approval>>]) -> ToolApproval {
    let calls = calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let answers: Vec<Vote<Approval>> = per_hook
                .iter()
                .map(|h| Vote {
                    hook: h.hook.clone(),
                    answer: h.answer.get(i).cloned().unwrap_or(Approval::Abstain),
                    failure: h.failure,
                })
                .collect();
            // The first answer of the highest rank wins.
            let winner = answers.iter().filter(|a| a.answer.rank() > 0).fold(
                None::<&Vote<Approval>>,
                |best, a| match best {
                    Some(b) if b.answer.rank() >= a.answer.rank() => Some(b),
                    _ => Some(a),
                },
            );
            CallDecision {
                call_id: call.call_id.clone(),
                tool: call.tool.clone(),
                verdict: winner.map_or(Approval::Abstain, |w| w.answer.clone()),
                decided_by: winner.map(|w| w.hook.clone()),
                failure: winner.is_some_and(|w| w.failure.is_some()),
                answers,
            }
        })
        .collect();
    ToolApproval { calls }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(hook: &str, a: Vec<Approval>) -> Vote<Vec<Approval>> {
        Vote {
            hook: hook.into(),
            answer: a,
            failure: None,
        }
    }

    #[test]
    fn deny_beats_ask_beats_allow_and_the_first_deny_reason_wins() {
        let calls = vec![
            RequestedCall {
                call_id: "a".into(),
                tool: "t".into(),
            },
            RequestedCall {
                call_id: "b".into(),
                tool: "t".into(),
            },
            RequestedCall {
                call_id: "c".into(),
                tool: "t".into(),
            },
        ];
        let merged = merge_approvals(
            &calls,
            &[
                answer(
                    "h1",
                    vec![
                        Approval::Allow,
                        Approval::Ask("sure?".into()),
                        Approval::Abstain,
                    ],
                ),
                answer(
                    "h2",
                    vec![
                        Approval::Deny("first".into()),
                        Approval::Allow,
                        Approval::Abstain,
                    ],
                ),
                answer(
                    "h3",
                    vec![
                        Approval::Deny("second".into()),
                        Approval::Ask("later".into()),
                        Approval::Abstain,
                    ],
                ),
            ],
        );
        let verdicts: Vec<(&Approval, Option<&str>)> = merged
            .calls
            .iter()
            .map(|c| (&c.verdict, c.decided_by.as_deref()))
            .collect();
        assert_eq!(
            verdicts,
            [
                (&Approval::Deny("first".into()), Some("h2")),
                (&Approval::Ask("sure?".into()), Some("h1")),
                (&Approval::Abstain, None)
            ]
        );
        assert_eq!(merged.calls[0].answers.len(), 3, "every answer is kept");
    }
}
