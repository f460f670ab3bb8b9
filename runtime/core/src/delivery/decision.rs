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
//! (it depends on their plan order, not on when they arrive), the event
//! loop may run one `actions.requested` event's hooks side by side
//! (`dispatch.rs`); file-edit ownership and edits stay sequential.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::answer::{Approval, FileEdit, Gate, Permission};
use crate::event::envelope::MAX_DATA_BYTES;
use crate::event::kind::GateRule;
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
    /// Every rewrite of the call's input, in the order they applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrites: Vec<Rewrite>,
    /// The input the call runs with: the last rewrite's; absent when no hook
    /// rewrote it or the verdict is deny (a deny drops every rewrite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

/// The merged answer to `actions.requested`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolApproval {
    /// One decision per requested call, in the event's order.
    pub calls: Vec<CallDecision>,
    /// Context the hooks added, in registration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextPiece>,
}

/// One hook's rewrite of a call's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewrite {
    /// The hook's slug.
    pub hook: String,
    /// The top-level keys it added, changed or removed, sorted.
    pub changed: Vec<String>,
    /// The whole input after it.
    pub input: Value,
}

/// One hook's context for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextPiece {
    /// The hook's slug.
    pub hook: String,
    /// The text.
    pub text: String,
    /// It did not fit the event's bound ([`MAX_CONTEXT_BYTES`]) whole, so the
    /// agent is not given it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dropped: bool,
}

/// Most bytes of context all hooks together add to one event (Claude Code's
/// own cap on `additionalContext`).
pub const MAX_CONTEXT_BYTES: usize = 10_000;

/// Most bytes of a rewritten input: an event's data bound.
pub(crate) const MAX_REWRITE_BYTES: usize = MAX_DATA_BYTES;

/// The merged answer to a gate event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateDecision {
    /// The merged answer.
    pub verdict: Gate,
    /// The hook whose answer decided (none when every hook passed; for a
    /// continue, the first continuing hook).
    pub decided_by: Option<String>,
    /// Whether the deciding answer came from a failed delivery.
    pub failure: bool,
    /// The loop governor refused a continue (`max_continues` in a row): the
    /// verdict is `pass` and the turn stops.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// Every hook's answer, in registration order.
    pub answers: Vec<Vote<Gate>>,
    /// Context the hooks added, in registration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextPiece>,
}

/// The merged answer to `permission.requested`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDecision {
    /// The merged answer (an allow carries no rewrite here: see `input`).
    pub verdict: Permission,
    /// The hook whose answer decided (none when every hook abstained).
    pub decided_by: Option<String>,
    /// Whether the deciding answer came from a failed delivery.
    pub failure: bool,
    /// Every hook's answer, in registration order.
    pub answers: Vec<Vote<Permission>>,
    /// Every rewrite of the call's input, in the order they applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrites: Vec<Rewrite>,
    /// The input the call runs with when allowed: the last rewrite's; absent
    /// when no hook rewrote it or the verdict is not allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Context the hooks added, in registration order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextPiece>,
}

/// What a failed delivery of a gate hook counts as: on a block gate under
/// `on_failure = "deny"` a block (fails closed); otherwise a pass (a broken
/// hook never keeps a turn going).
pub(crate) fn failure_gate(
    on_failure: OnFailure,
    rule: GateRule,
    hook: &str,
    outcome: Outcome,
) -> Gate {
    match (on_failure, rule) {
        (OnFailure::Deny, GateRule::Block) => Gate::Block(format!(
            "gate hook `{hook}` failed ({outcome}); blocked because it fails closed"
        )),
        _ => Gate::Pass,
    }
}

/// What a failed delivery of a permission hook counts as.
pub(crate) fn failure_permission(
    on_failure: OnFailure,
    hook: &str,
    outcome: Outcome,
) -> Permission {
    match on_failure {
        OnFailure::Deny => Permission::Deny {
            message: format!(
                "permission hook `{hook}` failed ({outcome}); denied because it fails closed"
            ),
            interrupt: false,
        },
        OnFailure::Abstain => Permission::Abstain,
    }
}

/// Merges gate answers: block > continue > pass. The first block decides
/// with its reason; with no block, every continue's reason is kept, joined in
/// registration order by a blank line (each hook's feedback reaches the
/// model), decided by the first continuing hook.
pub(crate) fn merge_gates(answers: Vec<Vote<Gate>>, context: Vec<ContextPiece>) -> GateDecision {
    let block = answers.iter().find(|v| matches!(v.answer, Gate::Block(_)));
    let continues: Vec<&Vote<Gate>> = answers
        .iter()
        .filter(|v| matches!(v.answer, Gate::Continue(_)))
        .collect();
    let (verdict, by) = match (block, continues.first()) {
        (Some(b), _) => (b.answer.clone(), Some(b)),
        (None, Some(first)) => (
            Gate::Continue(
                continues
                    .iter()
                    .filter_map(|v| match &v.answer {
                        Gate::Continue(r) => Some(r.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            Some(*first),
        ),
        (None, None) => (Gate::Pass, None),
    };
    GateDecision {
        verdict,
        decided_by: by.map(|v| v.hook.clone()),
        failure: by.is_some_and(|v| v.failure.is_some()),
        capped: false,
        answers,
        context,
    }
}

/// Merges permission answers: deny > allow > abstain, the first of the
/// highest rank deciding; rewrites (already chained) apply to an allow only.
pub(crate) fn merge_permissions(
    answers: Vec<Vote<Permission>>,
    rewrites: Vec<Rewrite>,
    context: Vec<ContextPiece>,
) -> PermissionDecision {
    let winner = decider(&answers, Permission::rank);
    let verdict = match winner.map(|w| &w.answer) {
        Some(Permission::Allow { .. }) => Permission::Allow { rewrite: None },
        Some(other) => other.clone(),
        None => Permission::Abstain,
    };
    let input = final_input(&rewrites, matches!(verdict, Permission::Allow { .. }));
    PermissionDecision {
        decided_by: winner.map(|w| w.hook.clone()),
        failure: winner.is_some_and(|w| w.failure.is_some()),
        verdict,
        answers,
        rewrites,
        input,
        context,
    }
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
pub(crate) fn failure_approval(on_failure: OnFailure, hook: &str, outcome: Outcome) -> Approval {
    match on_failure {
        OnFailure::Deny => Approval::Deny(format!(
            "policy hook `{hook}` failed ({outcome}); denied because it fails closed"
        )),
        OnFailure::Abstain => Approval::Abstain,
    }
}

/// What a failed delivery of a file-edit hook counts as.
pub(crate) fn failure_file_edit(on_failure: OnFailure, hook: &str, outcome: Outcome) -> FileEdit {
    match on_failure {
        OnFailure::Deny => FileEdit::Failed(format!(
            "file-edit hook `{hook}` failed ({outcome}); the write is aborted because it fails closed"
        )),
        OnFailure::Abstain => FileEdit::NotHandled,
    }
}

/// A requested call, from `actions.requested` data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestedCall {
    /// Its id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
}

/// The calls an `actions.requested` event asks about.
pub(crate) fn requested_calls(data: &serde_json::Value) -> Vec<RequestedCall> {
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

/// The vote that decides: the first of the highest rank above 0 (none when
/// every vote ranks 0: abstain).
fn decider<T>(votes: &[Vote<T>], rank: impl Fn(&T) -> u8) -> Option<&Vote<T>> {
    votes
        .iter()
        .filter(|v| rank(&v.answer) > 0)
        .fold(None::<&Vote<T>>, |best, v| match best {
            Some(b) if rank(&b.answer) >= rank(&v.answer) => Some(b),
            _ => Some(v),
        })
}

/// The input a call runs with: the last rewrite's, when the verdict `keeps`
/// rewrites.
fn final_input(rewrites: &[Rewrite], keeps: bool) -> Option<Value> {
    rewrites.last().filter(|_| keeps).map(|r| r.input.clone())
}

/// Merges per-hook answers (each one list aligned with `calls`) in order,
/// with the rewrites of each call (aligned with `calls`; empty: none).
pub(crate) fn merge_approvals(
    calls: &[RequestedCall],
    per_hook: &[Vote<Vec<Approval>>],
    mut rewrites: Vec<Vec<Rewrite>>,
    context: Vec<ContextPiece>,
) -> ToolApproval {
    rewrites.resize_with(calls.len(), Default::default);
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
            let winner = decider(&answers, Approval::rank);
            let verdict = winner.map_or(Approval::Abstain, |w| w.answer.clone());
            let rewrites = std::mem::take(&mut rewrites[i]);
            CallDecision {
                call_id: call.call_id.clone(),
                tool: call.tool.clone(),
                // A deny drops every rewrite (they stay on record).
                input: final_input(&rewrites, !matches!(verdict, Approval::Deny(_))),
                verdict,
                decided_by: winner.map(|w| w.hook.clone()),
                failure: winner.is_some_and(|w| w.failure.is_some()),
                answers,
                rewrites,
            }
        })
        .collect();
    ToolApproval { calls, context }
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
            Vec::new(),
            Vec::new(),
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

    fn vote<T>(hook: &str, answer: T) -> Vote<T> {
        Vote {
            hook: hook.into(),
            answer,
            failure: None,
        }
    }

    #[test]
    fn a_gate_blocks_on_the_first_block_and_joins_every_continue() {
        let blocked = merge_gates(
            vec![
                vote("a", Gate::Pass),
                vote("b", Gate::Continue("tests fail".into())),
                vote("c", Gate::Block("secret in prompt".into())),
                vote("d", Gate::Block("second".into())),
            ],
            Vec::new(),
        );
        assert_eq!(
            (blocked.verdict, blocked.decided_by.as_deref()),
            (Gate::Block("secret in prompt".into()), Some("c"))
        );
        let continued = merge_gates(
            vec![
                vote("a", Gate::Continue("tests fail".into())),
                vote("b", Gate::Pass),
                vote("c", Gate::Continue("lint fails".into())),
            ],
            Vec::new(),
        );
        assert_eq!(
            (continued.verdict, continued.decided_by.as_deref()),
            (Gate::Continue("tests fail\n\nlint fails".into()), Some("a"))
        );
        let passed = merge_gates(vec![vote("a", Gate::Pass)], Vec::new());
        assert_eq!((passed.verdict, passed.decided_by), (Gate::Pass, None));
    }

    #[test]
    fn a_failed_gate_hook_blocks_a_block_gate_and_never_continues_a_turn() {
        let o = Outcome::Timeout;
        assert!(matches!(
            failure_gate(OnFailure::Deny, GateRule::Block, "g", o),
            Gate::Block(r) if r == "gate hook `g` failed (timeout); blocked because it fails closed"
        ));
        assert_eq!(
            failure_gate(OnFailure::Abstain, GateRule::Block, "g", o),
            Gate::Pass
        );
        assert_eq!(
            failure_gate(OnFailure::Deny, GateRule::Continue, "g", o),
            Gate::Pass
        );
    }

    #[test]
    fn a_permission_request_denies_on_the_first_deny_and_rewrites_only_an_allow() {
        let rewrite = |hook: &str, cmd: &str| Rewrite {
            hook: hook.into(),
            changed: vec!["command".into()],
            input: serde_json::json!({"command": cmd}),
        };
        let allowed = merge_permissions(
            vec![
                vote("a", Permission::Abstain),
                vote("b", Permission::Allow { rewrite: None }),
            ],
            vec![rewrite("b", "ls -la")],
            Vec::new(),
        );
        assert_eq!(allowed.verdict, Permission::Allow { rewrite: None });
        assert_eq!(allowed.decided_by.as_deref(), Some("b"));
        assert_eq!(
            allowed.input,
            Some(serde_json::json!({"command": "ls -la"}))
        );
        let denied = merge_permissions(
            vec![
                vote("a", Permission::Allow { rewrite: None }),
                vote(
                    "b",
                    Permission::Deny {
                        message: "no pushes".into(),
                        interrupt: true,
                    },
                ),
                vote(
                    "c",
                    Permission::Deny {
                        message: "later".into(),
                        interrupt: false,
                    },
                ),
            ],
            vec![rewrite("a", "git push --dry-run")],
            Vec::new(),
        );
        assert_eq!(
            denied.verdict,
            Permission::Deny {
                message: "no pushes".into(),
                interrupt: true
            }
        );
        assert_eq!(denied.input, None, "a deny drops the rewrites");
        assert_eq!(denied.rewrites.len(), 1, "and still records them");
        let nobody =
            merge_permissions(vec![vote("a", Permission::Abstain)], Vec::new(), Vec::new());
        assert_eq!(
            (nobody.verdict, nobody.decided_by),
            (Permission::Abstain, None)
        );
    }
}
