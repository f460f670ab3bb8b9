//! What the service reports: receipts, the observer's observations, the
//! counts returned at shutdown, and what `resolve` replies.

use std::collections::HashMap;

use crate::delivery::record::{Delivery, Resolution};
use crate::event::envelope::{Durability, Envelope};
use crate::sandbox::outcome::Outcome;

/// What `emit` answers once the event is held.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Receipt {
    /// The event id.
    pub event_id: String,
    /// How durably it is held: `persisted` only after the journal commit returned.
    pub durability: Durability,
    /// Its position in the journal (durable mode).
    pub seq: Option<i64>,
    /// True when the id was already held: nothing new was stored or delivered,
    /// and this is the original receipt.
    pub duplicate: bool,
}

/// Counts kept by the service, returned at shutdown.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Events taken (not counting duplicates).
    pub events: u64,
    /// Re-submissions answered with the original receipt.
    pub duplicates: u64,
    /// Deliveries finished (every attempt counts).
    pub deliveries: u64,
    /// Deliveries by outcome.
    pub outcomes: HashMap<Outcome, u64>,
    /// Deliveries run again after a restart or as a retry.
    pub repeats: u64,
    /// Final failures of optional hooks (recorded only).
    pub optional_failures: u64,
    /// Final failures of critical hooks.
    pub critical_failures: u64,
    /// `turn.failed` / `session.failed` events the cascade emitted.
    pub cascades: u64,
    /// Deliveries left unacked by shutdown.
    pub left_unacked: u64,
}

impl Stats {
    /// Adds the attempt counts of `more` (a worker's share of a run).
    pub(crate) fn merge(&mut self, more: Stats) {
        self.deliveries += more.deliveries;
        self.repeats += more.repeats;
        for (outcome, n) in more.outcomes {
            *self.outcomes.entry(outcome).or_default() += n;
        }
    }

    /// Counts one finished attempt of a delivery.
    pub(crate) fn count(&mut self, d: &Delivery, attempt: u32) {
        self.deliveries += 1;
        *self.outcomes.entry(d.outcome).or_default() += 1;
        if attempt > 1 {
            self.repeats += 1;
        }
    }
}

/// What the observer is told.
#[derive(Debug, Clone, Copy)]
pub enum Observation<'a> {
    /// A delivery finished (before it is acked).
    Delivery(&'a Delivery),
    /// A decision or edit event's deliveries finished, with what they decided.
    Resolved {
        /// The event id.
        event_id: &'a str,
        /// The event kind.
        kind: &'a str,
        /// What was decided.
        resolution: &'a Resolution,
    },
    /// hookrt raised a failure cascade event (`turn.failed`, or
    /// `session.failed`) because a critical hook failed for good, told
    /// before the event is delivered. hookrt cannot stop the agent: the agent
    /// server should end that turn (or session); later events of it are still
    /// delivered (docs/failure-cascade.md).
    Cascaded(&'a Envelope),
    /// The end of a batch: every delivery and resolution told since the last
    /// one is about to be acked (committed to the journal, when there is
    /// one). An observer that buffers what it writes flushes it here, so its
    /// output never misses a delivery the journal counts as done, without a
    /// write per delivery. Told once per batch of work (up to
    /// [`MAX_BATCH`](crate::service::MAX_BATCH) events), with or without a journal.
    EndOfBatch,
}

/// Called on the dispatcher thread with every finished delivery (before it is
/// acked) and every resolution.
pub type Observer = Box<dyn FnMut(Observation<'_>) + Send>;

/// A receipt and, for decision and edit events, what they decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveReply {
    /// The receipt.
    pub receipt: Receipt,
    /// What the event decided: `None` for observe events, and for a duplicate
    /// (a re-submitted event is not decided again).
    pub resolution: Option<Resolution>,
}

/// What a reload swapped: the hook ids before and after, in registration order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reloaded {
    /// The hooks that delivered every event taken before the reload.
    pub previous: Vec<String>,
    /// The hooks that deliver every event taken after it.
    pub hooks: Vec<String>,
}
