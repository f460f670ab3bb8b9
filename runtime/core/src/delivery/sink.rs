//! Sinks: what the one event loop ([`crate::delivery::dispatch`]) tells
//! whoever runs it, as Spin's executor tells its `ExecutorHooks`. The loop
//! decides (run in order or side by side, retry, skip, dead letter,
//! cascade); a sink only records what was decided: the service's
//! journal-backed sink acks, dead-letters, emits the cascade and tells the
//! observer; a fleet worker's counts, prints, marks completions, naks or
//! acks its JetStream message and publishes the cascade; `Runtime::dispatch`
//! keeps the delivery records.

use std::time::Duration;

use crate::delivery::record::Delivery;
use crate::delivery::retry::{Conclusion, LastAttempt, Next, conclude};
use crate::event::answer::Reply;
use crate::event::envelope::Envelope;
use crate::hooks::loaded::load::LoadedHook;
use crate::sandbox::outcome::Outcome;

/// Where the event loop reports, delivery by delivery. `at` is the
/// delivery's index in the plan the loop was given.
pub trait Sink {
    /// One attempt of delivery `at` ended (every attempt, retries included),
    /// before the next delivery of the event is reported.
    fn attempted(&mut self, at: usize, delivery: Delivery);

    /// Delivery `at` is about to run again as `attempt` (retries in place
    /// only; see [`Retries`](crate::delivery::Retries)). It may be called from a delivery thread.
    fn retrying(&self, at: usize, attempt: u32) {
        let _ = (at, attempt);
    }

    /// How delivery `at` ended; called once per delivery, in plan order.
    fn concluded(&mut self, at: usize, end: End<'_>);
}

/// How one delivery of an event ended.
#[derive(Debug)]
pub enum End<'r> {
    /// Its final attempt ran: it succeeded, or failed for good.
    Final {
        /// The attempt that finished.
        attempt: u32,
        /// Its outcome.
        outcome: Outcome,
        /// What its handler answered.
        reply: &'r Reply,
        /// What it leaves: nothing, a dead letter, or the cascade too.
        conclusion: Conclusion,
    },
    /// It failed with attempts left, and its source delivers it again as
    /// attempt + 1 after `wait` ([`Retries::BySource`](crate::delivery::Retries::BySource)).
    Retry {
        /// The attempt that failed.
        attempt: u32,
        /// The backoff before the next attempt.
        wait: Duration,
    },
    /// Not asked: a file-edit owner before it answered.
    Skipped,
    /// Its hook is no longer loaded: it is dead-lettered.
    Gone,
    /// The event cannot be delivered (its envelope is refused): dead, with why.
    Undeliverable(&'r str),
    /// Shutdown interrupted it: it stays unacked (and so do those after it).
    Left,
}

impl<'r> End<'r> {
    /// How `hook`'s delivery of `event` ended, for a [`Sink`]:
    /// a retry by its source, or the final attempt and what it leaves.
    pub(crate) fn of(last: &'r LastAttempt, hook: &LoadedHook, event: &Envelope) -> End<'r> {
        let (attempt, outcome) = (last.attempt, last.outcome);
        if let Next::Retry(wait) = last.next {
            return End::Retry { attempt, wait };
        }
        let conclusion = match outcome {
            Outcome::Ok => Conclusion::Done,
            _ => conclude(
                &hook.id(),
                hook.settings.critical,
                event,
                outcome,
                last.error.as_deref(),
            ),
        };
        End::Final {
            attempt,
            outcome,
            reply: &last.reply,
            conclusion,
        }
    }
}
