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
//! workers** ([`DecisionWorkers`]), the costliest hooks (by their past
//! deliveries) first; their deliveries are then recorded in plan order, as
//! if they had run one after another. File-edit ownership
//! stays sequential (the first owner stops the rest), and so do edits (each
//! hook sees the edits before it).

use serde::{Deserialize, Serialize};

use crate::event::answer::{Approval, FileEdit};
use crate::hooks::settings::OnFailure;
use crate::sandbox::outcome::Outcome;

/// Threads that run one tool-approval event's hooks side by side: the
/// caller's thread and `workers - 1` kept ones. One worker (the default)
/// runs them one after another on the caller's thread.
pub struct DecisionWorkers {
    /// The threads besides the caller's (none with one worker).
    pool: Option<rayon::ThreadPool>,
    workers: usize,
}

impl Default for DecisionWorkers {
    fn default() -> Self {
        DecisionWorkers {
            pool: None,
            workers: 1,
        }
    }
}

impl DecisionWorkers {
    /// `workers` threads in all (cut to 1..=[`crate::sandbox::engine::MAX_WORKERS`]),
    /// the caller's included; starts `workers - 1` threads.
    pub fn new(workers: usize) -> std::io::Result<DecisionWorkers> {
        let workers = workers.clamp(1, crate::sandbox::engine::MAX_WORKERS);
        let pool = if workers > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(workers - 1)
                .thread_name(|i| format!("hookrt-decide-{i}"))
                .build()
                .map_err(std::io::Error::other)?;
            Some(pool)
        } else {
            None
        };
        Ok(DecisionWorkers { pool, workers })
    }

    /// Threads in all, the caller's included.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// `task(0)` .. `task(tasks - 1)` on the workers, each task once, any
    /// worker taking the next one left, in the order of `cost` from the
    /// highest (ties, in task order): a costly task taken last would keep
    /// the others waiting while one worker runs it alone. The results in
    /// task order.
    pub(crate) fn run<T: Send>(
        &self,
        tasks: usize,
        cost: impl Fn(usize) -> u64,
        task: impl Fn(usize) -> T + Sync,
    ) -> Vec<T> {
        let Some(pool) = self.pool.as_ref().filter(|_| tasks > 1) else {
            return (0..tasks).map(task).collect();
        };
        let order = costliest_first(tasks, cost);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let done: Vec<std::sync::Mutex<Option<T>>> =
            (0..tasks).map(|_| std::sync::Mutex::new(None)).collect();
        let work = || {
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(n) else {
                    return;
                };
                let result = task(i);
                *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            }
        };
        pool.in_place_scope(|scope| {
            for _ in 1..self.workers.min(tasks) {
                scope.spawn(|_| work());
            }
            work();
        });
        done.into_iter()
            .map(|slot| {
                slot.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every task ran: the scope waits for its spawned work")
            })
            .collect()
    }
}

/// Task indexes `0..tasks` by `cost`, highest first; ties keep task order.
/// An unknown cost (0: a hook not yet delivered to) counts as the highest.
fn costliest_first(tasks: usize, cost: impl Fn(usize) -> u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tasks).collect();
    order.sort_by_key(|&t| match cost(t) {
        0 => std::cmp::Reverse(u64::MAX),
        c => std::cmp::Reverse(c),
    });
    order
}

/// The deliveries `plan` (one hook index each, in plan order) as tasks for
/// [`DecisionWorkers::run`]: one per hook, holding that hook's deliveries in
/// plan order (a hook never runs two deliveries at once, and its warm
/// instance sees them in order).
pub(crate) fn tasks_by_hook(plan: &[usize]) -> Vec<Vec<usize>> {
    let mut tasks: Vec<(usize, Vec<usize>)> = Vec::new();
    for (position, &hook) in plan.iter().enumerate() {
        match tasks.iter_mut().find(|(h, _)| *h == hook) {
            Some((_, positions)) => positions.push(position),
            None => tasks.push((hook, vec![position])),
        }
    }
    tasks.into_iter().map(|(_, positions)| positions).collect()
}

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
    fn tasks_start_costliest_first_unknown_first_ties_in_task_order() {
        let costs = [300, 0, 900, 300, 100];
        assert_eq!(costliest_first(5, |t| costs[t]), [1, 2, 0, 3, 4]);
    }

    #[test]
    fn two_workers_run_every_task_once_and_answer_in_task_order() {
        let workers = DecisionWorkers::new(2).unwrap();
        let ran = std::sync::Mutex::new(Vec::new());
        let out = workers.run(
            4,
            |t| [1, 5, 2, 9][t],
            |t| {
                ran.lock().unwrap().push(t);
                t * 10
            },
        );
        assert_eq!(out, [0, 10, 20, 30]);
        let mut ran = ran.into_inner().unwrap();
        ran.sort();
        assert_eq!(ran, [0, 1, 2, 3]);
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
