//! Retries and the final attempt: the one place that decides whether a
//! failed delivery runs again, and what its final failure does (a dead
//! letter; for a critical hook, the failure cascade).
//!
//! Every way in uses it: the service's dispatcher and lanes run a delivery
//! to its final attempt here ([`to_final`]), sleeping the backoff between
//! attempts; the JetStream worker asks [`next`] after each delivery and
//! naks the message with the backoff instead of sleeping, then asks
//! [`conclude`] what a final failure leaves. Neither decides it again.

use std::time::{Duration, Instant};

use crate::delivery::cascade::{Failure, cascade_event};
use crate::delivery::dispatch::deliver;
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

/// How a delivery ended after its retries.
pub(crate) struct FinalAttempt {
    /// The attempt that finished.
    pub(crate) attempt: u32,
    /// Its outcome.
    pub(crate) outcome: Outcome,
    /// Its error, for failures.
    pub(crate) error: Option<String>,
    /// What the handler answered.
    pub(crate) reply: Reply,
}

/// Runs `hook`'s `handler` delivery of `envelope` from attempt `first` until
/// [`next`] says it was the final one, waiting the backoff between attempts.
/// `finished` sees every attempt (for stats and the observer); `retrying` is
/// told before each new attempt (to record it in the journal). `None` when
/// shutdown interrupted it: the delivery must stay unacked.
#[allow(
    clippy::too_many_arguments,
    reason = "one delivery's coordinates and its two sinks"
)]
pub(crate) fn to_final(
    services: &Services<'_>,
    hook: &LoadedHook,
    envelope: &Envelope,
    checked: &CheckedEvent,
    handler: &str,
    first: u32,
    finished: &mut dyn FnMut(&Delivery, u32),
    retrying: &mut dyn FnMut(u32),
) -> Option<FinalAttempt> {
    let mut attempt = first;
    loop {
        let (mut d, r) = deliver(services, hook, envelope, checked, handler, attempt);
        if r.cancelled {
            return None;
        }
        finished(&d, attempt);
        match next(hook, d.outcome, attempt) {
            Next::Retry(backoff) => {
                wait(services, backoff);
                if services.sandbox.is_cancelled() {
                    // Retries are left: not a final failure; the next start goes on.
                    return None;
                }
                attempt += 1;
                retrying(attempt);
            }
            Next::Final => {
                return Some(FinalAttempt {
                    attempt,
                    outcome: d.outcome,
                    error: d.error.take(),
                    reply: r.reply,
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
