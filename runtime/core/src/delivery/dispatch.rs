//! The event loop: one event through its planned deliveries, for every
//! caller (the service's dispatcher, `Runtime::dispatch`, a fleet worker),
//! each plugging in as a [`Sink`].
//!
//! Deliveries run one after another in plan order (specific handlers, then
//! `*`), except a tool approval's, which run side by side on the runtime's
//! delivery threads and are reported in plan order. A failing delivery
//! never stops the ones after it. Per delivery the loop decides, and the
//! sink records: replayed (an answer given before a restart counts as if
//! given now), skipped (a file-edit owner before it answered), gone (its
//! hook is no longer loaded), retried ([`Retries`]), concluded (a dead
//! letter, the cascade) or left (shutdown). The answers gathered
//! ([`EventRun`]) make the event's resolution.

use crate::delivery::record::{Delivery, Dispatch, Resolution};
use crate::delivery::retry::{Attempts, LastAttempt, Retries, Step, run_attempts};
use crate::delivery::run::EventRun;
use crate::delivery::sink::{End, Sink};
use crate::delivery::threads::{self, Threads};
use crate::event::answer::Reply;
use crate::event::envelope::{Durability, Envelope, EnvelopeError};
use crate::event::scope::Scope;
use crate::hooks::loaded::call::Services;
use crate::hooks::loaded::registry::Registry;
use crate::sandbox::outcome::Outcome;

/// What the loop runs an event with.
pub(crate) struct Loop<'a> {
    pub(crate) services: Services<'a>,
    pub(crate) threads: &'a Threads,
    pub(crate) registry: &'a Registry,
    /// Who runs a failed delivery again.
    pub(crate) retries: Retries,
}

/// One delivery to run: a (hook, handler) of the event's plan.
pub(crate) struct Planned<'a> {
    /// The hook's index in the registry; `None` when it is no longer loaded.
    pub(crate) hook: Option<usize>,
    pub(crate) handler: &'a str,
    /// Its first attempt.
    pub(crate) first: u32,
}

/// An answer acked before a restart, counted as if given now.
pub(crate) struct Replay {
    /// Counted before the planned delivery of this index (after all when past them).
    pub(crate) before: usize,
    /// The hook's index in the registry.
    pub(crate) hook: usize,
    pub(crate) handler: String,
    pub(crate) outcome: Outcome,
    pub(crate) reply: Reply,
}

/// One event for the loop.
pub(crate) struct Event<'a> {
    pub(crate) envelope: &'a Envelope,
    /// How the event is held, as its hooks are told.
    pub(crate) durability: Durability,
    pub(crate) planned: &'a [Planned<'a>],
    /// In plan order.
    pub(crate) replays: Vec<Replay>,
}

/// How the loop left an event.
pub(crate) enum Ran {
    /// Every delivery ended: what the event decided (none for an observe
    /// event no hook gave context on).
    Resolved(Option<Resolution>),
    /// Shutdown interrupted a delivery: it and those after it are left.
    Left,
}

/// A delivery run ahead on a delivery thread: every attempt's record and its last attempt.
type Ahead = (Vec<Delivery>, Option<LastAttempt>);

/// Runs `event` through its planned deliveries, telling `sink` each step.
/// An envelope its hooks cannot be lent ends every delivery as
/// [`End::Undeliverable`] and is the error.
pub(crate) fn run<S: Sink + Sync + ?Sized>(
    cx: &Loop<'_>,
    event: Event<'_>,
    sink: &mut S,
) -> Result<Ran, EnvelopeError> {
    let envelope = event.envelope;
    let mut run = match EventRun::new(envelope, event.durability, cx.registry) {
        Ok(run) => run,
        Err(e) => {
            undeliverable(sink, event.planned.len(), &e.to_string());
            return Err(e);
        }
    };
    let mut ahead = side_by_side(cx, &event, &run, sink);
    let hooks = cx.registry.hooks();
    let mut replays = event.replays.into_iter().peekable();
    for (at, p) in event.planned.iter().enumerate() {
        while let Some(r) = replays.next_if(|r| r.before <= at) {
            run.record(&hooks[r.hook], &r.handler, r.outcome, r.reply);
        }
        if run.decided() {
            sink.concluded(at, End::Skipped);
            continue;
        }
        let Some(index) = p.hook else {
            sink.concluded(at, End::Gone);
            continue;
        };
        let hook = &hooks[index];
        let last = match ahead.as_mut().and_then(|a| a[at].take()) {
            Some((attempts, last)) => {
                for d in attempts {
                    sink.attempted(at, d);
                }
                last
            }
            None => {
                let a = Attempts {
                    hook,
                    envelope,
                    checked: &run.checked,
                    handler: p.handler,
                    first: p.first,
                };
                run_attempts(&cx.services, &a, cx.retries, &mut |step| match step {
                    Step::Ended(d) => sink.attempted(at, d),
                    Step::Again(attempt) => sink.retrying(at, attempt),
                })
            }
        };
        let Some(last) = last else {
            for left in at..event.planned.len() {
                sink.concluded(left, End::Left);
            }
            return Ok(Ran::Left);
        };
        sink.concluded(at, End::of(&last, hook, envelope));
        run.record(hook, p.handler, last.outcome, last.reply);
    }
    for r in replays {
        run.record(&hooks[r.hook], &r.handler, r.outcome, r.reply);
    }
    Ok(Ran::Resolved(run.finish(cx.services.state)))
}

/// Ends each of an event's `n` deliveries as undeliverable, with `why`.
pub(crate) fn undeliverable<S: Sink + ?Sized>(sink: &mut S, n: usize, why: &str) {
    for at in 0..n {
        sink.concluded(at, End::Undeliverable(why));
    }
}

/// A tool approval's deliveries run to their last attempts side by side on
/// the delivery threads, by index in the plan (none for a hook no longer
/// loaded); `None` for any other event, or with one thread. The loop
/// reports them in plan order.
fn side_by_side<S: Sink + Sync + ?Sized>(
    cx: &Loop<'_>,
    event: &Event<'_>,
    run: &EventRun,
    sink: &S,
) -> Option<Vec<Option<Ahead>>> {
    if !run.side_by_side() || cx.threads.threads() < 2 {
        return None;
    }
    let hooks = cx.registry.hooks();
    let found: Vec<(usize, usize)> = event
        .planned
        .iter()
        .enumerate()
        .filter_map(|(at, p)| Some((at, p.hook?)))
        .collect();
    let by_hook: Vec<usize> = found.iter().map(|&(_, hook)| hook).collect();
    let tasks = threads::tasks_by_hook(&by_hook);
    let cost = |t: usize| hooks[found[tasks[t][0]].1].cost_us() * tasks[t].len() as u64;
    let results = cx.threads.run(tasks.len(), cost, |t| {
        tasks[t]
            .iter()
            .map(|&k| {
                let (at, hook) = found[k];
                let a = Attempts {
                    hook: &hooks[hook],
                    envelope: event.envelope,
                    checked: &run.checked,
                    handler: event.planned[at].handler,
                    first: event.planned[at].first,
                };
                let mut attempts = Vec::new();
                let last = run_attempts(&cx.services, &a, cx.retries, &mut |step| match step {
                    Step::Ended(d) => attempts.push(d),
                    Step::Again(attempt) => sink.retrying(at, attempt),
                });
                (attempts, last)
            })
            .collect::<Vec<_>>()
    });
    let mut ahead: Vec<Option<Ahead>> = event.planned.iter().map(|_| None).collect();
    for (task, results) in tasks.iter().zip(results) {
        for (&k, result) in task.iter().zip(results) {
            ahead[found[k].0] = Some(result);
        }
    }
    Some(ahead)
}

/// Which planned deliveries to leave out, by (hook id, handler): those a
/// fleet worker already finished.
pub(crate) type Skip<'s> = Option<&'s dyn Fn(&str, &str) -> bool>;

/// Runs `envelope` through every delivery its registry plans for it, each
/// from the envelope's attempt, but those `skip` names by (hook id, handler);
/// an event its registry does not admit (`Registry::admit`) is refused.
pub(crate) fn run_planned<S: Sink + Sync + ?Sized>(
    cx: &Loop<'_>,
    envelope: &Envelope,
    durability: Durability,
    skip: Skip<'_>,
    sink: &mut S,
) -> Result<Ran, EnvelopeError> {
    cx.registry.admit(envelope)?;
    let scope = Scope::of_event(envelope.coordinates.subagent.as_deref());
    let hooks = cx.registry.hooks();
    let planned: Vec<Planned<'_>> = cx
        .registry
        .plan(&envelope.kind, &scope)
        .filter(|p| !skip.is_some_and(|skip| skip(&hooks[p.index].id(), p.handler)))
        .map(|p| Planned {
            hook: Some(p.index),
            handler: p.handler,
            first: envelope.attempt,
        })
        .collect();
    let event = Event {
        envelope,
        durability,
        planned: &planned,
        replays: Vec::new(),
    };
    run(cx, event, sink)
}

/// A sink that keeps every delivery record: one [`Dispatch`].
#[derive(Default)]
pub(crate) struct Kept(Vec<Delivery>);

impl Sink for Kept {
    fn attempted(&mut self, _: usize, delivery: Delivery) {
        self.0.push(delivery);
    }

    fn concluded(&mut self, _: usize, _: End<'_>) {}
}

impl Kept {
    /// The dispatch record of `envelope`, which decided `resolution`.
    pub(crate) fn into_dispatch(
        self,
        envelope: &Envelope,
        resolution: Option<Resolution>,
    ) -> Dispatch {
        Dispatch {
            event_id: envelope.id.clone(),
            kind: envelope.kind.clone(),
            deliveries: self.0,
            resolution,
        }
    }
}
