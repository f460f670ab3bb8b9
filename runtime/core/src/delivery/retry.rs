//! Retries and the final attempt: the one place that decides whether a
//! failed delivery runs again, and what its final failure does (a dead
//! letter; for a critical hook, the failure cascade).
//!
//! Every way in uses it through the event loop ([`run_attempts`]): the
//! service's runs retry in place, sleeping the backoff between attempts;
//! the JetStream worker's run one attempt and hear `End::Retry` with the
//! backoff, which it naks the message with instead of sleeping. Neither
//! decides it again.

use std::time::{Duration, Instant};

use crate::delivery::cascade::{Failure, cascade_event};
use crate::delivery::deliver::deliver;
use crate::delivery::record::Delivery;
use crate::event::answer::Reply;
use crate::event::envelope::Envelope;
use crate::hooks::loaded::call::Services;
use crate::hooks::loaded::load::LoadedHook;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::wit::CheckedEvent;

/// What follows a delivery that ended with `outcome` as attempt `attempt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// It failed with attempts left: run it again as attempt + 1 after this wait.
    Retry(Duration),
    /// That was its final attempt (it succeeded, or its attempts are spent).
    Final,
}

/// The retry decision: a failed delivery runs again while its hook's
/// `retry.max_attempts` are not spent.
pub fn next(hook: &LoadedHook, outcome: Outcome, attempt: u32) -> Next {
    let retry = hook.settings.retry;
    if outcome != Outcome::Ok && attempt < retry.max_attempts {
        Next::Retry(retry.backoff(attempt + 1))
    } else {
        Next::Final
    }
}

/// What a delivery's final attempt leaves behind.
#[derive(Debug, Clone, PartialEq)]
pub enum Conclusion {
    /// It succeeded.
    Done,
    /// It failed for good: dead-lettered with `message`; an optional hook's
    /// failure goes no further.
    Dead {
        /// The (redacted) error, for the dead letter.
        message: String,
    },
    /// A critical hook failed for good: dead-lettered, and `cascade` (a
    /// `turn.failed` or `session.failed` with a deterministic id, so it is
    /// emitted once however many hooks fail) is to be delivered next.
    /// `None` on `session.failed` itself: failures there never cascade.
    Cascade {
        /// The (redacted) error, for the dead letter.
        message: String,
        /// The cascade event to store and deliver.
        cascade: Option<Box<Envelope>>,
    },
}

/// What the final attempt of `hook_id`'s delivery of `event` leaves:
/// nothing, a dead letter, or a dead letter and the cascade (for a
/// `critical` hook). `error` is already redacted (every [`Delivery`] is
/// masked once, when it ends).
pub fn conclude(
    hook_id: &str,
    critical: bool,
    event: &Envelope,
    outcome: Outcome,
    error: Option<&str>,
) -> Conclusion {
    if outcome == Outcome::Ok {
        return Conclusion::Done;
    }
    let message = error.unwrap_or_default().to_owned();
    if !critical {
        return Conclusion::Dead { message };
    }
    let cascade = cascade_event(&Failure {
        hook: hook_id,
        event,
        outcome,
        message: &message,
    })
    .map(Box::new);
    Conclusion::Cascade { message, cascade }
}

/// Who runs a failed delivery again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retries {
    /// The loop does, after the backoff, until the final attempt (the
    /// service); shutdown during the wait leaves the delivery unacked.
    InPlace,
    /// The source does (a JetStream redelivery): the loop runs one attempt
    /// and says [`End::Retry`](crate::delivery::End::Retry) while attempts are left and `may_retry`.
    BySource {
        /// False once the source will not deliver again (its own cap).
        may_retry: bool,
    },
}

/// How a delivery's last attempt ended: its final one, or one its source
/// runs again ([`Next::Retry`], with [`Retries::BySource`]).
pub(crate) struct LastAttempt {
    /// The attempt that finished.
    pub(crate) attempt: u32,
    /// Its outcome.
    pub(crate) outcome: Outcome,
    /// Its error, for failures.
    pub(crate) error: Option<String>,
    /// What the handler answered.
    pub(crate) reply: Reply,
    /// What follows it.
    pub(crate) next: Next,
}

/// What [`run_attempts`] reports as it goes.
pub(crate) enum Step {
    /// An attempt ended, with its record.
    Ended(Delivery),
    /// The delivery runs again, as this attempt.
    Again(u32),
}

/// One delivery's coordinates: `hook`'s `handler` delivery of `envelope`
/// (already checked as `checked`), from attempt `first`.
pub(crate) struct Attempts<'a> {
    pub(crate) hook: &'a LoadedHook,
    pub(crate) envelope: &'a Envelope,
    pub(crate) checked: &'a CheckedEvent,
    pub(crate) handler: &'a str,
    pub(crate) first: u32,
}

/// Runs a delivery until its last attempt: with [`Retries::InPlace`] until
/// [`next`] says it was the final one, waiting the backoff between
/// attempts; with [`Retries::BySource`] once. `step` gets every attempt's
/// record, and is told before each new attempt (to record it in the
/// journal). `None` when shutdown interrupted a retry in place: the
/// delivery must stay unacked.
pub(crate) fn run_attempts(
    services: &Services<'_>,
    a: &Attempts<'_>,
    retries: Retries,
    step: &mut dyn FnMut(Step),
) -> Option<LastAttempt> {
    let mut attempt = a.first;
    loop {
        let (d, r) = deliver(services, a.hook, a.envelope, a.checked, a.handler, attempt);
        let (outcome, error) = (d.outcome, d.error.clone());
        let next = match retries {
            // The source delivers again; a cancelled call is reported as it ended.
            Retries::BySource { may_retry: false } => Next::Final,
            Retries::BySource { may_retry: true } => next(a.hook, outcome, attempt),
            Retries::InPlace if r.cancelled => return None,
            Retries::InPlace => next(a.hook, outcome, attempt),
        };
        step(Step::Ended(d));
        match (next, retries) {
            (Next::Retry(backoff), Retries::InPlace) => {
                wait(services, backoff);
                if services.sandbox.is_cancelled() {
                    // Retries are left: not a final failure; the next start goes on.
                    return None;
                }
                attempt += 1;
                step(Step::Again(attempt));
            }
            _ => {
                return Some(LastAttempt {
                    attempt,
                    outcome,
                    error,
                    reply: r.reply,
                    next,
                });
            }
        }
    }
}
/// Sleeps for a retry's backoff, waking early when shutdown cancels.
fn wait(services: &Services<'_>, backoff: Duration) {
    let until = Instant::now() + backoff;
    while Instant::now() < until && !services.sandbox.is_cancelled() {
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(5)));
    }
}
