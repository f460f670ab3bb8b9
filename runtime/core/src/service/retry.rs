//! Retries: one planned delivery run until it succeeds or its hook's
//! attempts are spent, with the backoff between attempts. The dispatcher and
//! the lane workers both settle deliveries this way.

use std::time::{Duration, Instant};

use crate::delivery::dispatch::deliver;
use crate::delivery::record::Delivery;
use crate::event::answer::Answer;
use crate::event::envelope::Envelope;
use crate::hooks::load::LoadedHook;
use crate::runtime::Runtime;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::wit::CheckedEvent;
use crate::service::journal::PendingDelivery;
use crate::service::report::Stats;

/// How a delivery ended after its retries.
pub(crate) struct FinalAttempt {
    /// The attempt that finished.
    pub(crate) attempt: u32,
    /// Its outcome.
    pub(crate) outcome: Outcome,
    /// Its error, for failures.
    pub(crate) error: Option<String>,
    /// What the handler answered.
    pub(crate) answer: Answer,
}

/// Runs one planned delivery until it succeeds or its hook's attempts are
/// spent, waiting the backoff between attempts. `finished` sees every attempt
/// (for stats and the observer); `retrying` is told before each new attempt
/// (to record it in the journal). `None` when shutdown interrupted it: the
/// delivery must stay unacked.
pub(crate) fn settle(
    rt: &Runtime,
    hook: &LoadedHook,
    envelope: &Envelope,
    checked: &CheckedEvent,
    pd: &PendingDelivery,
    finished: &mut dyn FnMut(&Delivery, u32),
    retrying: &mut dyn FnMut(u32),
) -> Option<FinalAttempt> {
    let mut attempt = pd.attempts;
    loop {
        let (mut d, r) = deliver(
            &rt.services(),
            hook,
            envelope,
            checked,
            &pd.handler,
            attempt,
        );
        if r.cancelled {
            return None;
        }
        finished(&d, attempt);
        let retry = hook.settings.retry;
        if d.outcome != Outcome::Ok && attempt < retry.max_attempts {
            wait(rt, retry.backoff(attempt + 1));
            if rt.sandbox().is_cancelled() {
                // Retries are left: not a final failure; the next start goes on.
                return None;
            }
            attempt += 1;
            retrying(attempt);
            continue;
        }
        return Some(FinalAttempt {
            attempt,
            outcome: d.outcome,
            error: d.error.take(),
            answer: r.answer,
        });
    }
}

/// Sleeps for a retry's backoff, waking early when shutdown cancels.
fn wait(rt: &Runtime, backoff: Duration) {
    let until = Instant::now() + backoff;
    while Instant::now() < until && !rt.sandbox().is_cancelled() {
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(5)));
    }
}

/// Counts a finished attempt.
pub(crate) fn count(stats: &mut Stats, d: &Delivery, attempt: u32) {
    stats.deliveries += 1;
    *stats.outcomes.entry(d.outcome).or_default() += 1;
    if attempt > 1 {
        stats.repeats += 1;
    }
}
