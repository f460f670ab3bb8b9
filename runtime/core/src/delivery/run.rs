//! The recorder of one event's run: the checked event its hooks are lent
//! and the answers gathered so far, turned into the event's resolution at
//! the end. Observe events ignore what handlers return; decision and edit
//! events gather votes ([`crate::delivery::vote`]) into a [`Resolution`].
//! Once a hook owns a file edit (`applied` or `failed`), the run is
//! [`EventRun::decided`]: the hooks after it are not asked.

use std::sync::Arc;

use crate::delivery::context::ContextBudget;
use crate::delivery::decision::{self, FileEditDecision, RequestedCall, Vote};
use crate::delivery::edit::EditSession;
use crate::delivery::governor;
use crate::delivery::record::Resolution;
use crate::delivery::rewrite::RewriteChain;
use crate::delivery::vote::{approval_vote, file_edit_vote, gate_vote, permission_vote};
use crate::event::answer::{Answer, Approval, FileEdit, Gate, Permission, Reply};
use crate::event::envelope::{Durability, Envelope, EnvelopeError};
use crate::event::kind::{self, EventClass, GateRule};
use crate::event::scope::Scope;
use crate::hooks::folder::settings::OnFailure;
use crate::hooks::loaded::load::LoadedHook;
use crate::hooks::loaded::registry::Registry;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::state::StateStore;
use crate::sandbox::wit::{self, CheckedEvent};

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
    /// `observe:<kind>` handler casts no vote, but the context it adds is
    /// delivered like any handler's (one rule for context, whatever the
    /// subscription). A hook of a world before 0.3.0 observes gates and
    /// permission requests.
    pub(crate) fn record(
        &mut self,
        hook: &LoadedHook,
        handler: &str,
        outcome: Outcome,
        reply: Reply,
    ) {
        let slug = hook.id();
        let Reply { answer, context } = reply;
        self.take_context(hook, &slug, handler, outcome, context);
        if hook.scope == Scope::Aggregate {
            return; // an observer of every scope decides nothing in any
        }
        if self.v3_only && !wit::answers_v3(hook.world_version) {
            return; // it cannot answer this kind: it observes it
        }
        if kind::observed_kind(handler).is_some() {
            // `observe:<kind>` watches the event: no vote, no edit, and a
            // failure stands in for nothing (it is in the delivery record).
            return;
        }
        let rewrites = kind::rewritten_kind(handler).is_some();
        let on_failure = if handler == kind::WILDCARD {
            OnFailure::Abstain
        } else {
            hook.settings.on_failure_for(kind::handled_kind(handler)).0
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

    /// Keeps the context a delivery of `hook` gave (when it ended `ok` and
    /// the kind takes context), whatever the subscription. An aggregate
    /// observer adds none to a scope's model: its context is said, never
    /// silently dropped.
    fn take_context(
        &mut self,
        hook: &LoadedHook,
        slug: &str,
        handler: &str,
        outcome: Outcome,
        context: Option<String>,
    ) {
        let (Some(budget), Some(text)) = (&mut self.context, context) else {
            return;
        };
        if hook.scope != Scope::Aggregate {
            if outcome == Outcome::Ok {
                budget.add(slug, text);
            }
        } else if !text.is_empty() {
            tracing::warn!(target: "hook", "[{slug} {handler}] context dropped ({} bytes): an aggregate observer (`aggregate` in hookrt.toml) adds no context to any scope's model; take it out of `aggregate` to give context", text.len());
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
