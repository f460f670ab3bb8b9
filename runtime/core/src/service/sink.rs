//! The service's sink: what the event loop ([`crate::delivery::dispatch`])
//! decided about each delivery, recorded in the journal's terms. Every
//! attempt is counted and told to the observer; a retry is recorded before
//! it runs; each delivery's end becomes one [`Ack`] (done, skipped, or dead
//! with its message), a critical hook's final failure emits the cascade
//! event once (by its deterministic id) as work to deliver next, and what
//! an event decided goes to the journal, the observer and whoever waits.

use crate::delivery::record::{Delivery, Resolution};
use crate::delivery::retry::Conclusion;
use crate::delivery::sink::{End, Sink};
use crate::event::envelope::Envelope;
use crate::event::kind::{self, EventClass};
use crate::event::scope::Scope;
use crate::hooks::folder::settings::OnFailure;
use crate::sandbox::outcome::Outcome;
use crate::service::journal::{Ack, Inserted, PendingDelivery};
use crate::service::lanes::Context;
use crate::service::report::{Observation, Stats};
use crate::service::work::{Decided, ResolutionTx, Seen, Sighting, Work, lock};

/// What the dispatcher keeps across a batch of work.
#[derive(Default)]
pub(crate) struct Books {
    /// Counts of every attempt and failure.
    pub(crate) stats: Stats,
    /// Acks to commit with the batch.
    pub(crate) acks: Vec<Ack>,
    /// What finished decision and edit events decided, committed with the
    /// acks; whoever waits is told after that commit.
    pub(crate) resolutions: Vec<Decided>,
    /// Without a journal: cascade ids already emitted.
    pub(crate) cascaded: Seen,
}

/// The sink of one event's deliveries.
pub(crate) struct Journaled<'d> {
    /// The event and its pending deliveries (the loop's plan, in order).
    pub(crate) w: &'d Work,
    /// The runtime, the journal and the observer.
    pub(crate) cx: &'d Context,
    pub(crate) books: &'d mut Books,
    /// Cascade events to deliver next.
    pub(crate) follow_ups: &'d mut Vec<Work>,
    /// Answers are kept (as JSON) for the journal.
    pub(crate) keeps_answers: bool,
    /// The journal keeps resolutions.
    pub(crate) persisted: bool,
}

impl Sink for Journaled<'_> {
    fn attempted(&mut self, _: usize, d: Delivery) {
        self.books.stats.count(&d, d.attempt);
        (lock(&self.cx.observer))(Observation::Delivery(&d));
    }

    fn retrying(&self, at: usize, attempt: u32) {
        let position = self.w.deliveries[at].position;
        self.cx.record_retry(self.w.seq, position, attempt);
    }

    fn concluded(&mut self, at: usize, end: End<'_>) {
        let answer = match &end {
            End::Final { reply, .. } if self.keeps_answers => {
                Some(serde_json::to_string(reply).unwrap_or_default())
            }
            _ => None,
        };
        self.concluded_with(at, end, answer);
    }
}

impl<'d> Journaled<'d> {
    /// The sink of `w`'s deliveries; `persisted`: a journal keeps its acks
    /// and resolutions. Answers are not kept unless asked.
    pub(crate) fn new(
        w: &'d Work,
        cx: &'d Context,
        books: &'d mut Books,
        follow_ups: &'d mut Vec<Work>,
        persisted: bool,
    ) -> Journaled<'d> {
        Journaled {
            w,
            cx,
            books,
            follow_ups,
            keeps_answers: false,
            persisted,
        }
    }

    /// Records how delivery `at` ended, with its answer as JSON (for the
    /// journal, when it keeps answers).
    pub(crate) fn concluded_with(&mut self, at: usize, end: End<'_>, answer: Option<String>) {
        let pd = &self.w.deliveries[at];
        match end {
            End::Final {
                attempt,
                outcome,
                conclusion,
                ..
            } => self.final_attempt(pd, attempt, outcome, conclusion, answer),
            End::Skipped => self.ack(pd, pd.attempts, Outcome::Ok, None, true, None),
            End::Gone => {
                let message = format!("hook `{}` is no longer loaded", pd.hook);
                tracing::warn!(event_id = %self.w.envelope.id, "{message}: its pending delivery is dead-lettered");
                self.books.stats.optional_failures += 1;
                self.ack(pd, pd.attempts, Outcome::Error, Some(message), false, None);
            }
            End::Undeliverable(why) => {
                // An event stored by an older hookrt that this one refuses:
                // concluded as dead rather than recovered forever.
                let dead = Some(format!("event cannot be delivered: {why}"));
                self.ack(pd, pd.attempts, Outcome::Error, dead, false, None);
            }
            // Unacked: the journal runs it again at the next start.
            End::Left | End::Retry { .. } => self.books.stats.left_unacked += 1,
        }
    }

    /// Acks a delivery's final attempt; a final failure is dead-lettered
    /// and, for a critical hook, its cascade event is emitted.
    fn final_attempt(
        &mut self,
        pd: &PendingDelivery,
        attempt: u32,
        outcome: Outcome,
        conclusion: Conclusion,
        answer: Option<String>,
    ) {
        let dead = match &conclusion {
            Conclusion::Done => None,
            Conclusion::Dead { message } | Conclusion::Cascade { message, .. } => {
                Some(message.clone())
            }
        };
        self.ack(pd, attempt, outcome, dead, false, answer);
        match conclusion {
            Conclusion::Done => {}
            Conclusion::Dead { .. } => {
                self.books.stats.optional_failures += 1;
                tracing::warn!(hook = %pd.hook, event_id = %self.w.envelope.id, outcome = %outcome, "optional hook failed; {}", self.what_failure_did(pd));
            }
            Conclusion::Cascade { cascade, .. } => {
                self.books.stats.critical_failures += 1;
                if let Some(w) = cascade.and_then(|e| self.emit_cascade(*e)) {
                    self.follow_ups.push(w);
                }
            }
        }
    }

    /// The one way a delivery's end is acked.
    fn ack(
        &mut self,
        pd: &PendingDelivery,
        attempts: u32,
        outcome: Outcome,
        dead: Option<String>,
        skipped: bool,
        answer: Option<String>,
    ) {
        self.books.acks.push(Ack {
            event_seq: self.w.seq,
            position: pd.position,
            attempts,
            outcome,
            dead,
            skipped,
            answer,
        });
    }

    /// What an optional hook's final failure did to its event, for the log
    /// line: a vote under `on_failure = "deny"` denied or aborted something,
    /// and saying only "recorded" would hide it.
    fn what_failure_did(&self, pd: &PendingDelivery) -> &'static str {
        let votes = pd.handler != kind::WILDCARD && kind::observed_kind(&pd.handler).is_none();
        let kind = self.w.envelope.kind.as_str();
        let deny = self.cx.rt.hooks().iter().any(|h| {
            h.has_id(&pd.hook)
                && h.scope != Scope::Aggregate
                && h.settings.on_failure_for(kind).0 == OnFailure::Deny
        });
        match (kind::class_of(kind), votes, kind) {
            (EventClass::Decision, true, "actions.requested") if deny => {
                "it counts as a deny of every requested call (on_failure = \"deny\"); no cascade"
            }
            (EventClass::Decision, true, _) if deny => {
                "it aborts the file write (on_failure = \"deny\"); no cascade"
            }
            (EventClass::Edit, true, _) => "the event's edits are rolled back; no cascade",
            _ => "recorded, no cascade",
        }
    }

    /// Stores a cascade event once (by its deterministic id); None when it
    /// was already emitted for that turn or session.
    fn emit_cascade(&mut self, envelope: Envelope) -> Option<Work> {
        let plan = self.cx.rt.registry().planner().plan(
            &envelope.kind,
            &Scope::of_event(envelope.coordinates.subagent.as_deref()),
        );
        let seq = if let Some(j) = lock(&self.cx.journal).as_mut() {
            match j.insert(&[(&envelope, &plan, "cascade")]) {
                Ok(v) => match v.first() {
                    Some(Inserted::New(seq)) => *seq,
                    _ => return None,
                },
                Err(e) => {
                    tracing::error!("journal: cannot store {}: {e}", envelope.kind);
                    return None;
                }
            }
        } else if self.books.cascaded.insert(
            &envelope.coordinates.agent,
            &envelope.id,
            envelope.digest(),
        ) == Sighting::New
        {
            0
        } else {
            return None;
        };
        self.books.stats.cascades += 1;
        tracing::warn!(event_id = %envelope.id, kind = %envelope.kind, "failure cascade");
        (lock(&self.cx.observer))(Observation::Cascaded(&envelope));
        let deliveries = PendingDelivery::planned(plan, 1);
        Some(Work {
            seq,
            envelope,
            deliveries,
            resolve: None,
            answered: Vec::new(),
        })
    }

    /// Tells what the event decided: the journal's resolutions, the
    /// observer and whoever waits (`resolve`).
    pub(crate) fn resolved(
        &mut self,
        resolution: Option<Resolution>,
        resolve: Option<ResolutionTx>,
    ) {
        if let Some(kept) = self
            .cx
            .resolved(self.w, resolution, resolve, self.persisted)
        {
            self.books.resolutions.push(kept);
        }
    }
}
