//! Dispatch: running one event through the registry's planned deliveries.
//!
//! Deliveries of one event run one after another in the planned order
//! (specific handlers, then `*` handlers), except a tool approval's, which
//! run side by side on the runtime's delivery threads and are recorded in plan order
//! (see `decision`). A failing delivery never stops the
//! ones after it: each is contained by the sandbox and recorded with its
//! outcome. Observe events ignore what handlers return; decision and edit
//! events gather answers ([`EventRun`]) into a [`Resolution`]. One exception
//! to "every planned delivery runs": once a hook owns a file edit (`applied`
//! or `failed`), the hooks after it are not asked, so nobody writes twice.

use crate::delivery::decision::{self, FileEditDecision, RequestedCall, Vote};
use crate::delivery::edit::EditSession;
use crate::delivery::record::{Delivery, Dispatch, Resolution};
use crate::delivery::threads::{self, Threads};
use crate::event::answer::{Answer, Approval, FileEdit};
use crate::event::envelope::{Durability, Envelope, EnvelopeError};
use crate::event::kind::{self, EventClass};
use crate::event::scope::Scope;
use crate::hooks::folder::settings::OnFailure;
use crate::hooks::loaded::call::{Call, Services};
use crate::hooks::loaded::load::LoadedHook;
use crate::hooks::loaded::registry::Registry;
use crate::sandbox::capture::LogLine;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::wit::CheckedEvent;

/// Runs every delivery of `envelope`, telling hooks it is held as `durability`.
pub(crate) fn dispatch(
    services: &Services<'_>,
    threads: &Threads,
    registry: &Registry,
    envelope: &Envelope,
    durability: Durability,
) -> Result<Dispatch, EnvelopeError> {
    dispatch_some(
        services,
        threads,
        registry,
        envelope,
        durability,
        None,
        &mut |_| {},
    )
}

/// Which planned deliveries to leave out, by (hook id, handler): those a
/// crashed fleet worker already finished.
pub(crate) type Skip<'s> = Option<&'s dyn Fn(&str, &str) -> bool>;

/// [`dispatch`] without the deliveries `skip` names, telling `finished`
/// about each delivery as soon as it ends (before the next one starts; for
/// a tool approval run side by side, once all have ended, in plan order), so
/// a caller can record it while the event is still running.
pub(crate) fn dispatch_some(
    services: &Services<'_>,
    threads: &Threads,
    registry: &Registry,
    envelope: &Envelope,
    durability: Durability,
    skip: Skip<'_>,
    finished: &mut dyn FnMut(&Delivery),
) -> Result<Dispatch, EnvelopeError> {
    let mut run = EventRun::new(envelope, durability, registry)?;
    let scope = Scope::of_event(envelope.coordinates.subagent.as_deref());
    if run.side_by_side() && threads.threads() > 1 {
        let plan: Vec<_> = registry
            .plan(&envelope.kind, &scope)
            .filter(|p| !skip.is_some_and(|skip| skip(&registry.hooks()[p.index].id(), p.handler)))
            .collect();
        let hooks: Vec<usize> = plan.iter().map(|p| p.index).collect();
        let tasks = threads::tasks_by_hook(&hooks);
        let checked = &run.checked;
        let mut done: Vec<Option<(Delivery, Call)>> = plan.iter().map(|_| None).collect();
        let cost = |t: usize| {
            let hook = &registry.hooks()[plan[tasks[t][0]].index];
            hook.cost_us() * tasks[t].len() as u64
        };
        for (task, results) in tasks.iter().zip(threads.run(tasks.len(), cost, |t| {
            tasks[t]
                .iter()
                .map(|&i| {
                    let hook = &registry.hooks()[plan[i].index];
                    deliver(
                        services,
                        hook,
                        envelope,
                        checked,
                        plan[i].handler,
                        envelope.attempt,
                    )
                })
                .collect::<Vec<_>>()
        })) {
            for (&i, result) in task.iter().zip(results) {
                done[i] = Some(result);
            }
        }
        let mut deliveries = Vec::with_capacity(plan.len());
        for (planned, result) in plan.iter().zip(done) {
            let Some((d, r)) = result else { continue };
            run.record(
                &registry.hooks()[planned.index],
                planned.handler,
                d.outcome,
                r.answer,
            );
            finished(&d);
            deliveries.push(d);
        }
        return Ok(Dispatch {
            event_id: envelope.id.clone(),
            kind: envelope.kind.clone(),
            deliveries,
            resolution: run.finish(),
        });
    }
    let mut deliveries = Vec::new();
    for planned in registry.plan(&envelope.kind, &scope) {
        if run.decided() {
            break;
        }
        let hook = &registry.hooks()[planned.index];
        if skip.is_some_and(|skip| skip(&hook.id(), planned.handler)) {
            continue;
        }
        let (d, r) = deliver(
            services,
            hook,
            envelope,
            &run.checked,
            planned.handler,
            envelope.attempt,
        );
        run.record(hook, planned.handler, d.outcome, r.answer);
        finished(&d);
        deliveries.push(d);
    }
    Ok(Dispatch {
        event_id: envelope.id.clone(),
        kind: envelope.kind.clone(),
        deliveries,
        resolution: run.finish(),
    })
}

/// One event's deliveries in progress: the checked event its hooks are lent
/// (its data updated after each applied edit) and the answers gathered so far.
///
/// It owns what it needs (no borrow of the envelope), so the service's
/// delivery threads can share one while its hooks run one at a time.
pub(crate) struct EventRun {
    /// What hooks are lent besides the envelope's own fields.
    pub(crate) checked: CheckedEvent,
    answers: Answers,
}

/// Who decided a refusal of an unserved subagent's decision (`decided_by`).
const UNSCOPED: &str = "hookrt:unscoped";

enum Answers {
    Observe,
    Approval(Vec<RequestedCall>, Vec<Vote<Vec<Approval>>>),
    FileEdit(Vec<Vote<FileEdit>>),
    /// The edits so far (each hook gets the event's data with the state as
    /// the hooks before it left it).
    Edit(EditSession),
}

impl EventRun {
    /// The run of `envelope` by `registry`'s hooks. A decision of a
    /// subagent no hooks serve starts with hookrt's own refusal
    /// ([`Registry::unscoped_refusal`]): it fails closed whatever the
    /// aggregate observers (which never decide) do.
    pub(crate) fn new(
        envelope: &Envelope,
        durability: Durability,
        registry: &Registry,
    ) -> Result<EventRun, EnvelopeError> {
        let checked = CheckedEvent::new(envelope, durability)?;
        let mut answers = match (checked.class, envelope.kind.as_str()) {
            (EventClass::Decision, "actions.requested") => {
                Answers::Approval(decision::requested_calls(&envelope.data), Vec::new())
            }
            (EventClass::Decision, _) => Answers::FileEdit(Vec::new()),
            (EventClass::Edit, _) => Answers::Edit(EditSession::new(&envelope.data)),
            (EventClass::Observe, _) => Answers::Observe,
        };
        if checked.class == EventClass::Decision
            && let Some(reason) = registry
                .unscoped_refusal(&Scope::of_event(envelope.coordinates.subagent.as_deref()))
        {
            match &mut answers {
                Answers::Approval(calls, votes) => votes.push(Vote {
                    hook: UNSCOPED.to_owned(),
                    answer: vec![Approval::Deny(reason); calls.len()],
                    failure: None,
                }),
                Answers::FileEdit(votes) => votes.push(Vote {
                    hook: UNSCOPED.to_owned(),
                    answer: FileEdit::Failed(reason),
                    failure: None,
                }),
                _ => {}
            }
        }
        Ok(EventRun { checked, answers })
    }

    /// Whether the event's deliveries may run side by side: a tool approval,
    /// whose merge waits for every answer and depends on plan order only.
    pub(crate) fn side_by_side(&self) -> bool {
        matches!(self.answers, Answers::Approval(..))
    }

    /// True once a file-edit owner answered: the hooks after it are not asked.
    pub(crate) fn decided(&self) -> bool {
        match &self.answers {
            Answers::FileEdit(a) => a.last().is_some_and(|a| a.answer != FileEdit::NotHandled),
            _ => false,
        }
    }

    /// Takes a hook's final answer (after retries) into account. A failure
    /// counts by the hook's `on_failure` only when it subscribed to the
    /// decision kind by name; a `*` handler is an observer, and its failure
    /// counts as abstain / not-handled; an `observe:<kind>` handler is not
    /// counted at all.
    pub(crate) fn record(
        &mut self,
        hook: &LoadedHook,
        handler: &str,
        outcome: Outcome,
        answer: Answer,
    ) {
        if matches!(self.answers, Answers::Observe) {
            return; // nothing to gather
        }
        if hook.scope == Scope::Aggregate {
            return; // an observer of every scope decides nothing in any
        }
        if kind::observed_kind(handler).is_some() {
            // `observe:<kind>` watches the event: no vote, no edit, and a
            // failure stands in for nothing (it is in the delivery record).
            return;
        }
        let slug = hook.id();
        let on_failure = if handler == kind::WILDCARD {
            OnFailure::Abstain
        } else {
            hook.settings.on_failure
        };
        match &mut self.answers {
            Answers::Observe => {}
            Answers::Approval(calls, answers) => {
                answers.push(approval_vote(
                    slug,
                    handler,
                    on_failure,
                    calls.len(),
                    outcome,
                    answer,
                ));
            }
            Answers::FileEdit(answers) => {
                answers.push(file_edit_vote(slug, handler, on_failure, outcome, answer));
            }
            Answers::Edit(session) if handler == kind::WILDCARD && outcome != Outcome::Ok => {
                session.observer_failed(&slug, outcome);
            }
            Answers::Edit(session) => {
                let given = match (outcome, answer) {
                    (Outcome::Ok, Answer::Edit(json)) => Ok(Some(json)),
                    (Outcome::Ok, _) => Ok(None),
                    (failed, _) => Err(failed),
                };
                session.apply(&slug, hook.slug.as_str(), given);
                self.checked.data = session.data_for_next();
            }
        }
    }

    /// What the event decided (none for observe events).
    pub(crate) fn finish(self) -> Option<Resolution> {
        match self.answers {
            Answers::Observe => None,
            Answers::Approval(calls, answers) => Some(Resolution::ToolApproval(
                decision::merge_approvals(&calls, &answers),
            )),
            Answers::FileEdit(answers) => {
                let decider = answers.iter().find(|a| a.answer != FileEdit::NotHandled);
                Some(Resolution::FileEdit(FileEditDecision {
                    result: decider.map_or(FileEdit::NotHandled, |a| a.answer.clone()),
                    decided_by: decider.map(|a| a.hook.clone()),
                    failure: decider.is_some_and(|a| a.failure.is_some()),
                    answers,
                }))
            }
            Answers::Edit(session) => Some(Resolution::Edit(session.finish())),
        }
    }
}

/// A tool-approval hook's vote: one approval per requested call (`n`).
/// A malformed answer is a broken policy: it fails closed whatever
/// `on_failure` says, with the reason (a `*` handler observes and never
/// decides).
fn approval_vote(
    slug: String,
    handler: &str,
    on_failure: OnFailure,
    n: usize,
    outcome: Outcome,
    answer: Answer,
) -> Vote<Vec<Approval>> {
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::Approvals(list)) if list.len() == n => (list, None),
        (Outcome::Ok, Answer::None) => (vec![Approval::Abstain; n], None),
        (Outcome::Ok, other) => {
            let one = if handler == kind::WILDCARD {
                Approval::Abstain
            } else {
                Approval::Deny(format!(
                    "policy hook `{slug}` answered {} for {n} requested call(s); denied because a malformed answer fails closed",
                    describe(&other),
                ))
            };
            (vec![one; n], Some(Outcome::Error))
        }
        (failed, _) => (
            vec![decision::failure_approval(on_failure, &slug, failed); n],
            Some(failed),
        ),
    };
    Vote {
        hook: slug,
        answer,
        failure,
    }
}

/// A file-edit hook's vote; a malformed answer fails closed as in
/// [`approval_vote`].
fn file_edit_vote(
    slug: String,
    handler: &str,
    on_failure: OnFailure,
    outcome: Outcome,
    answer: Answer,
) -> Vote<FileEdit> {
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::FileEdit(answer)) => (answer, None),
        (Outcome::Ok, Answer::None) => (FileEdit::NotHandled, None),
        (Outcome::Ok, other) => {
            let answer = if handler == kind::WILDCARD {
                FileEdit::NotHandled
            } else {
                FileEdit::Failed(format!(
                    "file-edit hook `{slug}` answered {} to a file edit; the write is aborted because a malformed answer fails closed",
                    describe(&other)
                ))
            };
            (answer, Some(Outcome::Error))
        }
        (failed, _) => (
            decision::failure_file_edit(on_failure, &slug, failed),
            Some(failed),
        ),
    };
    Vote {
        hook: slug,
        answer,
        failure,
    }
}

/// What a handler answered, in words, for the reason of a malformed answer.
fn describe(answer: &Answer) -> String {
    match answer {
        Answer::None => "nothing".to_owned(),
        Answer::Approvals(list) => format!("{} approval(s)", list.len()),
        Answer::FileEdit(_) => "a file-edit answer".to_owned(),
        Answer::Edit(_) => "an edited agent input".to_owned(),
    }
}

/// Runs one delivery of `envelope` (already checked as `checked`) to
/// `hook`'s `handler` as attempt `attempt`. The hook is lent the record, no
/// copy. The flag is true when the runtime cancelled it (shutdown): then
/// the record is not an outcome of the hook.
pub(crate) fn deliver(
    services: &Services<'_>,
    hook: &LoadedHook,
    envelope: &Envelope,
    checked: &CheckedEvent,
    handler: &str,
    attempt: u32,
) -> (Delivery, Call) {
    let lent = checked.lend(envelope, attempt, hook.scope == Scope::Aggregate);
    let mut r = hook.call(services, lent, handler, checked.class);
    hook.cap_log_rate(&mut r.output);
    hook.note_cost(r.duration_us);
    let d = Delivery {
        event_id: envelope.id.clone(),
        kind: envelope.kind.clone(),
        hook: hook.id(),
        handler: handler.to_owned(),
        attempt,
        outcome: r.outcome,
        duration_us: r.duration_us,
        fuel_used: r.fuel_used,
        error: r.error.take(),
        output_truncated: r.output.truncated,
        logs: std::mem::take(&mut r.output.logs),
        console: std::mem::take(&mut r.output.stdout) + &r.output.stderr,
    };
    let mut d = d;
    d.mask(services.redactor);
    if !r.cancelled {
        trace_delivery(&d);
    }
    (d, r)
}

/// Forwards a delivery's log lines to `tracing` (target `hook`) and records failures.
fn trace_delivery(d: &Delivery) {
    /// A log line as `tracing` gets it, written out only when a subscriber
    /// takes the event (most deliveries log, and most runs keep no log).
    struct Line<'a>(&'a Delivery, &'a LogLine);
    impl std::fmt::Display for Line<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let Line(d, line) = self;
            write!(
                f,
                "[{} {} {}] {}",
                d.hook, d.event_id, d.handler, line.message
            )?;
            for (k, v) in &line.fields {
                write!(f, " {k}={v}")?;
            }
            Ok(())
        }
    }
    for line in &d.logs {
        let msg = Line(d, line);
        match line.level {
            "error" => tracing::error!(target: "hook", "{msg}"),
            "warn" => tracing::warn!(target: "hook", "{msg}"),
            "info" => tracing::info!(target: "hook", "{msg}"),
            "debug" => tracing::debug!(target: "hook", "{msg}"),
            _ => tracing::trace!(target: "hook", "{msg}"),
        }
    }
    if d.output_truncated {
        tracing::warn!(target: "hook", "[{} {} {}] output cut at the hook's output limit (output_bytes or log_bytes_per_minute)", d.hook, d.event_id, d.handler);
    }
    if let Some(err) = &d.error {
        tracing::warn!(hook = %d.hook, event_id = %d.event_id, handler = %d.handler, outcome = %d.outcome, "delivery failed: {err}");
    }
}
