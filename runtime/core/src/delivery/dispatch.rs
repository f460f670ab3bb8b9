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

use std::sync::Arc;

use crate::delivery::decision::{
    self, ContextBudget, FileEditDecision, RequestedCall, RewriteChain, Vote,
};
use crate::delivery::edit::EditSession;
use crate::delivery::governor;
use crate::delivery::record::{Delivery, Dispatch, Resolution};
use crate::delivery::threads::{self, Threads};
use crate::event::answer::{Answer, Approval, FileEdit, Gate, Permission, Reply};
use crate::event::envelope::{Durability, Envelope, EnvelopeError};
use crate::event::kind::{self, EventClass, GateRule};
use crate::event::scope::Scope;
use crate::hooks::folder::settings::OnFailure;
use crate::hooks::loaded::call::{Call, Services};
use crate::hooks::loaded::load::LoadedHook;
use crate::hooks::loaded::registry::Registry;
use crate::sandbox::capture::LogLine;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::state::StateStore;
use crate::sandbox::wit::{CheckedEvent, NEWEST_VERSION};

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
                r.reply,
            );
            finished(&d);
            deliveries.push(d);
        }
        return Ok(Dispatch {
            event_id: envelope.id.clone(),
            kind: envelope.kind.clone(),
            deliveries,
            resolution: run.finish(services.state),
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
        run.record(hook, planned.handler, d.outcome, r.reply);
        finished(&d);
        deliveries.push(d);
    }
    Ok(Dispatch {
        event_id: envelope.id.clone(),
        kind: envelope.kind.clone(),
        deliveries,
        resolution: run.finish(services.state),
    })
}

/// One event's deliveries in progress: the checked event its hooks are lent
/// (its data updated after each applied edit or rewrite) and the answers
/// gathered so far.
///
/// It owns what it needs (no borrow of the envelope), so the service's
/// delivery threads can share one while its hooks run one at a time.
pub(crate) struct EventRun {
    /// What hooks are lent besides the envelope's own fields.
    pub(crate) checked: CheckedEvent,
    answers: Answers,
    /// Context given so far (kinds that take it: [`kind::takes_context`]).
    context: Option<ContextBudget>,
    /// Only hooks of world 0.3.0 answer this kind (gates, permission requests).
    v3_only: bool,
    /// The event's data as rewritten so far, when a `rewrite:` handler is planned.
    rewritten: Option<serde_json::Value>,
    /// A `rewrite:` handler runs before another handler: the deliveries must
    /// run one after another (each sees the rewrites before it).
    chained: bool,
    /// For `turn.stopping`: what the loop governor needs.
    stop: Option<governor::Stop>,
}

/// Who decided a refusal of an unserved subagent's decision (`decided_by`).
const UNSCOPED: &str = "hookrt:unscoped";

enum Answers {
    Observe,
    Approval(Vec<RequestedCall>, Vec<Vote<Vec<Approval>>>, RewriteChain),
    FileEdit(Vec<Vote<FileEdit>>),
    /// The edits so far (each hook gets the event's data with the state as
    /// the hooks before it left it).
    Edit(EditSession),
    Gate(GateRule, Vec<Vote<Gate>>),
    Permission(Vec<Vote<Permission>>, RewriteChain),
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
        let kind = envelope.kind.as_str();
        let mut answers = match (checked.class, kind) {
            (EventClass::Decision, "actions.requested") => {
                let calls = decision::requested_calls(&envelope.data);
                let chain = RewriteChain::new(calls.len());
                Answers::Approval(calls, Vec::new(), chain)
            }
            (EventClass::Decision, kind::PERMISSION_REQUESTED) => {
                Answers::Permission(Vec::new(), RewriteChain::new(1))
            }
            (EventClass::Decision, _) => Answers::FileEdit(Vec::new()),
            (EventClass::Edit, _) => Answers::Edit(EditSession::new(&envelope.data)),
            (EventClass::Gate, _) => {
                Answers::Gate(kind::gate_rule(kind).unwrap_or(GateRule::Block), Vec::new())
            }
            (EventClass::Observe, _) => Answers::Observe,
        };
        let scope = Scope::of_event(envelope.coordinates.subagent.as_deref());
        if checked.class == EventClass::Decision
            && let Some(reason) = registry.unscoped_refusal(&scope)
        {
            match &mut answers {
                Answers::Approval(calls, votes, _) => votes.push(Vote {
                    hook: UNSCOPED.to_owned(),
                    answer: vec![Approval::Deny(reason); calls.len()],
                    failure: None,
                }),
                Answers::FileEdit(votes) => votes.push(Vote {
                    hook: UNSCOPED.to_owned(),
                    answer: FileEdit::Failed(reason),
                    failure: None,
                }),
                Answers::Permission(votes, _) => votes.push(Vote {
                    hook: UNSCOPED.to_owned(),
                    answer: Permission::Deny {
                        message: reason,
                        interrupt: false,
                    },
                    failure: None,
                }),
                _ => {}
            }
        }
        // Rewrites: is a `rewrite:` handler planned, and does another come after it?
        let (mut rewriter, mut chained) = (false, false);
        if kind::REWRITABLE.contains(&kind) {
            for p in registry.plan(kind, &scope) {
                chained |= rewriter;
                rewriter |= kind::rewritten_kind(p.handler).is_some();
            }
        }
        let v3_only = kind::answered_from_v3_as(kind, checked.class);
        Ok(EventRun {
            checked,
            answers,
            context: kind::takes_context(kind).then(ContextBudget::default),
            v3_only,
            rewritten: rewriter.then(|| envelope.data.value().clone()),
            chained,
            stop: (kind == kind::TURN_STOPPING)
                .then(|| governor::Stop::of(envelope, registry.max_continues)),
        })
    }

    /// Whether a service must run `kind`'s deliveries as a run (in plan
    /// order, answers gathered): every kind but the observe kinds that take
    /// no context.
    pub(crate) fn needed(kind: &str) -> bool {
        kind::class_of(kind) != EventClass::Observe || kind::takes_context(kind)
    }

    /// Whether the event's deliveries may run side by side: a tool approval,
    /// whose merge waits for every answer and depends on plan order only,
    /// unless a rewrite must reach the hooks after it.
    pub(crate) fn side_by_side(&self) -> bool {
        matches!(self.answers, Answers::Approval(..)) && !self.chained
    }

    /// True once a file-edit owner answered: the hooks after it are not asked.
    pub(crate) fn decided(&self) -> bool {
        match &self.answers {
            Answers::FileEdit(a) => a.last().is_some_and(|a| a.answer != FileEdit::NotHandled),
            _ => false,
        }
    }

    /// Takes a hook's final reply (after retries) into account. A failure
    /// counts by the hook's `on_failure` only when it subscribed to the
    /// decision kind by name (or as `rewrite:<kind>`); a `*` handler is an
    /// observer, and its failure counts as abstain / not-handled / pass; an
    /// `observe:<kind>` handler is not counted at all. A hook of a world
    /// before 0.3.0 observes gates and permission requests.
    pub(crate) fn record(
        &mut self,
        hook: &LoadedHook,
        handler: &str,
        outcome: Outcome,
        reply: Reply,
    ) {
        if hook.scope == Scope::Aggregate {
            return; // an observer of every scope decides nothing in any
        }
        if kind::observed_kind(handler).is_some() {
            // `observe:<kind>` watches the event: no vote, no edit, and a
            // failure stands in for nothing (it is in the delivery record).
            return;
        }
        if self.v3_only && hook.world_version != NEWEST_VERSION {
            return; // it cannot answer this kind: it observes it
        }
        let slug = hook.id();
        let Reply { answer, context } = reply;
        if let (Some(budget), Some(text)) = (&mut self.context, context)
            && outcome == Outcome::Ok
        {
            budget.add(&slug, text);
        }
        let rewrites = kind::rewritten_kind(handler).is_some();
        let on_failure = if handler == kind::WILDCARD {
            OnFailure::Abstain
        } else {
            hook.settings.on_failure
        };
        match &mut self.answers {
            Answers::Observe => {}
            Answers::Approval(calls, answers, chain) => {
                let (vote, rewritten) = approval_vote(
                    &slug,
                    handler,
                    on_failure,
                    calls.len(),
                    outcome,
                    answer,
                    rewrites,
                    self.rewritten.as_ref(),
                );
                answers.push(vote);
                let changed_any = !rewritten.is_empty();
                for (i, (input, changed)) in rewritten {
                    if let Some(data) = &mut self.rewritten {
                        data["actions"][i]["input"] = input.clone();
                    }
                    chain.push(i, &slug, input, changed);
                }
                // The hooks after it receive the input as rewritten so far.
                if let Some(data) = self.rewritten.as_ref().filter(|_| changed_any) {
                    self.checked.data = Some(data.to_string());
                }
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
            Answers::Gate(rule, answers) => {
                answers.push(gate_vote(slug, handler, on_failure, *rule, outcome, answer));
            }
            Answers::Permission(answers, chain) => {
                let before = self.rewritten.as_ref().map(|d| &d["input"]);
                let (vote, rewritten) = permission_vote(
                    &slug, handler, on_failure, outcome, answer, rewrites, before,
                );
                answers.push(vote);
                if let Some((input, changed)) = rewritten {
                    if let Some(data) = &mut self.rewritten {
                        data["input"] = input.clone();
                        self.checked.data = Some(data.to_string());
                    }
                    chain.push(0, &slug, input, changed);
                }
            }
        }
    }

    /// What the event decided, after the loop governor (which counts in
    /// `state`): none for an observe event no hook gave context on.
    pub(crate) fn finish(self, state: &Arc<StateStore>) -> Option<Resolution> {
        let context = self.context.map(ContextBudget::finish).unwrap_or_default();
        match self.answers {
            Answers::Observe if context.is_empty() => None,
            Answers::Observe => Some(Resolution::Context(context)),
            Answers::Approval(calls, answers, chain) => Some(Resolution::ToolApproval(
                decision::merge_approvals(&calls, &answers, chain.finish(), context),
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
            Answers::Gate(_, answers) => {
                let mut d = decision::merge_gates(answers, context);
                if let Some(stop) = &self.stop {
                    stop.govern(state, &mut d);
                }
                Some(Resolution::Gate(d))
            }
            Answers::Permission(answers, chain) => {
                let rewrites = chain.finish().pop().unwrap_or_default();
                Some(Resolution::Permission(decision::merge_permissions(
                    answers, rewrites, context,
                )))
            }
        }
    }
}

/// A checked rewrite: the new input and the top-level keys it changed.
type Rewritten = (serde_json::Value, Vec<String>);

/// A tool-approval hook's vote: one approval per requested call (`n`), and
/// its checked rewrites by call index (`data`: the event's data as rewritten
/// so far, kept when a rewriter is planned). A malformed answer (the wrong
/// number of answers, the wrong kind, a rewrite from a plain subscription or
/// one that is not a JSON object within the bound) is a broken policy: it
/// fails closed whatever `on_failure` says, with the reason, and none of its
/// rewrites apply (a `*` handler observes and never decides).
#[allow(clippy::too_many_arguments)]
fn approval_vote(
    slug: &str,
    handler: &str,
    on_failure: OnFailure,
    n: usize,
    outcome: Outcome,
    answer: Answer,
    rewrites: bool,
    data: Option<&serde_json::Value>,
) -> (Vote<Vec<Approval>>, Vec<(usize, Rewritten)>) {
    let malformed = |what: String| {
        let one = if handler == kind::WILDCARD {
            Approval::Abstain
        } else {
            Approval::Deny(format!(
                "policy hook `{slug}` answered {what}; denied because a malformed answer fails closed",
            ))
        };
        (vec![one; n], Some(Outcome::Error))
    };
    let mut rewritten = Vec::new();
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::Approvals(list)) if list.len() == n => (list, None),
        (Outcome::Ok, Answer::Calls(list)) if list.len() == n => {
            let mut problem = None;
            for (i, call) in list.iter().enumerate() {
                let Some(json) = &call.rewrite else { continue };
                if !rewrites {
                    problem = Some(format!(
                        "a rewrite of call #{i} from a plain subscription (subscribe as `{}{}` to rewrite)",
                        kind::REWRITE_PREFIX,
                        kind::handled_kind(handler)
                    ));
                    break;
                }
                let before = data.map_or(&serde_json::Value::Null, |d| &d["actions"][i]["input"]);
                match RewriteChain::check(before, json) {
                    Ok(r) => rewritten.push((i, r)),
                    Err(why) => {
                        problem = Some(format!("{why} for call #{i}"));
                        break;
                    }
                }
            }
            match problem {
                Some(what) => {
                    rewritten.clear();
                    malformed(what)
                }
                None => (list.into_iter().map(|c| c.approval).collect(), None),
            }
        }
        (Outcome::Ok, Answer::None) => (vec![Approval::Abstain; n], None),
        (Outcome::Ok, other) => {
            malformed(format!("{} for {n} requested call(s)", describe(&other)))
        }
        (failed, _) => (
            vec![decision::failure_approval(on_failure, slug, failed); n],
            Some(failed),
        ),
    };
    let vote = Vote {
        hook: slug.to_owned(),
        answer,
        failure,
    };
    (vote, rewritten)
}

/// A gate hook's vote. A malformed answer (not a gate, or a gate the kind
/// does not take) fails closed as a failure would under `on_failure = "deny"`.
fn gate_vote(
    slug: String,
    handler: &str,
    on_failure: OnFailure,
    rule: GateRule,
    outcome: Outcome,
    answer: Answer,
) -> Vote<Gate> {
    let (answer, failure) = match (outcome, answer) {
        (Outcome::Ok, Answer::Gate(g))
            if matches!(
                (&g, rule),
                (Gate::Pass, _)
                    | (Gate::Block(_), GateRule::Block)
                    | (Gate::Continue(_), GateRule::Continue)
            ) =>
        {
            (g, None)
        }
        (Outcome::Ok, Answer::None) => (Gate::Pass, None),
        (Outcome::Ok, other) => {
            let on_failure = if handler == kind::WILDCARD {
                OnFailure::Abstain
            } else {
                OnFailure::Deny
            };
            let mut g = decision::failure_gate(on_failure, rule, &slug, Outcome::Error);
            if let Gate::Block(reason) = &mut g {
                *reason = format!(
                    "gate hook `{slug}` answered {} to a gate that takes {}; blocked because a malformed answer fails closed",
                    describe(&other),
                    match rule {
                        GateRule::Block => "pass or block",
                        GateRule::Continue => "pass or continue",
                    }
                );
            }
            (g, Some(Outcome::Error))
        }
        (failed, _) => (
            decision::failure_gate(on_failure, rule, &slug, failed),
            Some(failed),
        ),
    };
    Vote {
        hook: slug,
        answer,
        failure,
    }
}

/// A permission hook's vote and its checked rewrite (`before`: the input as
/// rewritten so far, when a rewriter is planned); malformed answers fail
/// closed as in [`approval_vote`].
fn permission_vote(
    slug: &str,
    handler: &str,
    on_failure: OnFailure,
    outcome: Outcome,
    answer: Answer,
    rewrites: bool,
    before: Option<&serde_json::Value>,
) -> (Vote<Permission>, Option<Rewritten>) {
    let malformed = |what: String| {
        let p = if handler == kind::WILDCARD {
            Permission::Abstain
        } else {
            Permission::Deny {
                message: format!(
                    "permission hook `{slug}` answered {what}; denied because a malformed answer fails closed"
                ),
                interrupt: false,
            }
        };
        (p, Some(Outcome::Error), None)
    };
    let (answer, failure, rewritten) = match (outcome, answer) {
        (
            Outcome::Ok,
            Answer::Permission(Permission::Allow {
                rewrite: Some(json),
            }),
        ) => {
            if !rewrites {
                malformed(format!(
                    "a rewrite from a plain subscription (subscribe as `{}{}` to rewrite)",
                    kind::REWRITE_PREFIX,
                    kind::handled_kind(handler)
                ))
            } else {
                match RewriteChain::check(before.unwrap_or(&serde_json::Value::Null), &json) {
                    Ok(r) => (Permission::Allow { rewrite: None }, None, Some(r)),
                    Err(why) => malformed(why),
                }
            }
        }
        (Outcome::Ok, Answer::Permission(p)) => (p, None, None),
        (Outcome::Ok, Answer::None) => (Permission::Abstain, None, None),
        (Outcome::Ok, other) => malformed(format!("{} to a permission request", describe(&other))),
        (failed, _) => (
            decision::failure_permission(on_failure, slug, failed),
            Some(failed),
            None,
        ),
    };
    let vote = Vote {
        hook: slug.to_owned(),
        answer,
        failure,
    };
    (vote, rewritten)
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
        Answer::Calls(list) => format!("{} call answer(s)", list.len()),
        Answer::FileEdit(_) => "a file-edit answer".to_owned(),
        Answer::Edit(_) => "an edited agent input".to_owned(),
        Answer::Gate(Gate::Pass) => "pass".to_owned(),
        Answer::Gate(Gate::Block(_)) => "block".to_owned(),
        Answer::Gate(Gate::Continue(_)) => "continue".to_owned(),
        Answer::Permission(_) => "a permission answer".to_owned(),
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
