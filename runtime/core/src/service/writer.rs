//! The writer: the thread that takes every queued event (up to
//! [`MAX_BATCH`]), commits them in one transaction (group commit), answers
//! their receipts and hands them to the dispatcher. It plans each event's
//! deliveries, so a reload takes effect here first: at its place among the
//! queued events.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::event::envelope::{Durability, Envelope};
use crate::event::scope::Scope;
use crate::hooks::loaded::registry::Planner;
use crate::service::journal::{
    Inserted, Journal, JournalError, PRUNE_BATCH, PendingDelivery, Plan,
};
use crate::service::report::{Receipt, Stats};
use crate::service::work::{
    Command, EmitError, MAX_BATCH, Msg, ReceiptTx, ResolutionTx, Seen, Sighting, Work,
};

/// Commits batches of emitted events and answers their receipts.
pub(crate) struct Writer {
    pub(crate) journal: Option<Journal>,
    pub(crate) planner: Planner,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) seen: Seen,
    pub(crate) stats: Stats,
    /// How long finished events are kept (`ServiceOptions::retention`).
    pub(crate) retention: Option<Duration>,
    /// When the journal was last pruned.
    pub(crate) pruned_at: Option<Instant>,
}

/// Pruning runs at most this often, between commits.
const PRUNE_EVERY: Duration = Duration::from_secs(1);

impl Writer {
    pub(crate) fn serve(
        &mut self,
        mut rx: tokio::sync::mpsc::Receiver<Command>,
        work: mpsc::SyncSender<Msg>,
    ) {
        while let Some(first) = rx.blocking_recv() {
            // Every queued command (up to MAX_BATCH), taken one at a time
            // into place: no batch of commands is built and moved again.
            let mut emits = Vec::with_capacity((rx.len() + 1).min(MAX_BATCH));
            let (mut next, mut taken) = (Some(first), 0);
            while let Some(c) = next {
                taken += 1;
                match c {
                    Command::Emit(e, reply, resolve) => emits.push((e, reply, resolve)),
                    Command::Flush(reply) => {
                        // Everything before the flush must reach the dispatcher first.
                        let (new, lookups) = self.take(std::mem::take(&mut emits));
                        send(&work, new, lookups);
                        let _ = work.send(Msg::Flush(reply));
                    }
                    Command::Reload(runtime, reply) => {
                        // The swap point: events before it were planned for
                        // the hooks they will be delivered by, events after
                        // it for the new ones.
                        let (new, lookups) = self.take(std::mem::take(&mut emits));
                        send(&work, new, lookups);
                        self.planner = runtime.registry().planner();
                        let _ = work.send(Msg::Reload(runtime, reply));
                    }
                }
                next = if taken < MAX_BATCH {
                    rx.try_recv().ok()
                } else {
                    None
                };
            }
            let (new, lookups) = self.take(emits);
            send(&work, new, lookups);
            self.prune_when_due();
        }
    }

    /// Prunes finished events past the retention, at most once every
    /// [`PRUNE_EVERY`] (sooner while a backlog is left), so an endless stream
    /// keeps the journal's size bounded. A failure is logged, never fatal:
    /// the events stay and the next try prunes them.
    fn prune_when_due(&mut self) {
        let (Some(journal), Some(age)) = (self.journal.as_mut(), self.retention) else {
            return;
        };
        if self.pruned_at.is_some_and(|t| t.elapsed() < PRUNE_EVERY) {
            return;
        }
        match journal.prune(age, PRUNE_BATCH) {
            // A full batch: more may be due, so try again after the next commit.
            Ok(n) if n == PRUNE_BATCH => self.pruned_at = None,
            Ok(_) => self.pruned_at = Some(Instant::now()),
            Err(e) => {
                tracing::warn!(error = %e, "pruning the journal failed; finished events are kept for now");
                self.pruned_at = Some(Instant::now());
            }
        }
    }

    /// `emits` but those the hooks' project does not admit
    /// (`Planner::admit`), each refused unstored.
    fn admitted(&self, emits: Vec<Emit>) -> Vec<Emit> {
        emits
            .into_iter()
            .filter_map(|(e, reply, resolve)| match self.planner.admit(&e) {
                Ok(()) => Some((e, reply, resolve)),
                Err(refused) => {
                    let _ = reply.send(Err(EmitError::Invalid(refused)));
                    None
                }
            })
            .collect()
    }

    /// Stores (or remembers) new events, answers every receipt, and returns
    /// the new events as work, and the re-submitted events someone waits on
    /// (to be answered with what they decided).
    fn take(&mut self, emits: Vec<Emit>) -> Taken {
        let emits = self.admitted(emits);
        if emits.is_empty() {
            return (Vec::new(), Vec::new());
        }
        if self.cancel.load(Ordering::Relaxed) {
            for (e, reply, _) in emits {
                let _ = reply.send(Err(EmitError::ShuttingDown(e.id)));
            }
            return (Vec::new(), Vec::new());
        }
        let plans: Vec<Plan> = emits
            .iter()
            .map(|(e, _, _)| {
                self.planner
                    .plan(&e.kind, &Scope::of_event(e.coordinates.subagent.as_deref()))
            })
            .collect();
        let stored = self.store(&emits, &plans);
        let stored = match stored {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("journal commit failed: {e}");
                let message = e.to_string();
                for (env, reply, _) in emits {
                    let _ = reply.send(Err(EmitError::Journal {
                        id: env.id,
                        message: message.clone(),
                    }));
                }
                return (Vec::new(), Vec::new());
            }
        };
        let durable = self.journal.is_some();
        let durability = if durable {
            Durability::Persisted
        } else {
            Durability::Accepted
        };
        let (mut work, mut lookups) = (Vec::with_capacity(emits.len()), Vec::new());
        for (((envelope, reply, resolve), plan), inserted) in
            emits.into_iter().zip(plans).zip(stored)
        {
            let (seq, duplicate) = match inserted {
                Inserted::New(seq) => (seq, false),
                Inserted::Duplicate(seq) => (seq, true),
                Inserted::Conflict(_) => {
                    let _ = reply.send(Err(EmitError::Conflict {
                        id: envelope.id,
                        agent: envelope.coordinates.agent,
                    }));
                    continue;
                }
            };
            let _ = reply.send(Ok(Receipt {
                event_id: envelope.id.clone(),
                durability,
                seq: durable.then_some(seq),
                duplicate,
            }));
            if duplicate {
                self.stats.duplicates += 1;
                if let Some(tx) = resolve {
                    lookups.push((seq, tx));
                }
                continue;
            }
            self.stats.events += 1;
            // Without a journal the caller's attempt is kept (replaying a
            // recorded redelivery); the journal numbers attempts itself.
            let first = if durable { 1 } else { envelope.attempt };
            let deliveries = PendingDelivery::planned(plan, first);
            work.push(Work {
                seq,
                envelope,
                deliveries,
                resolve,
                answered: Vec::new(),
            });
        }
        (work, lookups)
    }

    /// Stores the events in the journal (planned as `plans`), or, without
    /// one, remembers their ids: how each compares with what came before.
    fn store(
        &mut self,
        emits: &[(Envelope, ReceiptTx, Option<ResolutionTx>)],
        plans: &[Plan],
    ) -> Result<Vec<Inserted>, JournalError> {
        if let Some(j) = self.journal.as_mut() {
            let batch: Vec<(&Envelope, &Plan, &str)> = emits
                .iter()
                .zip(plans)
                .map(|((e, _, _), p)| (e, p, "agent"))
                .collect();
            return j.insert(&batch);
        }
        Ok(emits
            .iter()
            .map(
                |(e, _, _)| match self.seen.insert(&e.coordinates.agent, &e.id, e.digest()) {
                    Sighting::New => Inserted::New(0),
                    Sighting::Same => Inserted::Duplicate(0),
                    Sighting::Other => Inserted::Conflict(0),
                },
            )
            .collect())
    }
}

/// New events, and re-submitted events to answer with what they decided.
type Taken = (Vec<Work>, Vec<(i64, ResolutionTx)>);

/// One event taken, with whoever waits for its receipt and its resolution.
type Emit = (Envelope, ReceiptTx, Option<ResolutionTx>);

/// Hands the dispatcher new work, then the lookups (which must come after
/// anything that could still decide them).
fn send(to: &mpsc::SyncSender<Msg>, work: Vec<Work>, lookups: Vec<(i64, ResolutionTx)>) {
    if !work.is_empty() {
        let _ = to.send(Msg::Work(work));
    }
    for (seq, tx) in lookups {
        let _ = to.send(Msg::Lookup(seq, tx));
    }
}
