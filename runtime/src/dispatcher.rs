//! The dispatcher: the thread that owns the hooks and delivers events.
//!
//! It takes work in journal order from the writer (see [`crate::service`]),
//! runs each event's deliveries in plan order (specific handlers, then `*`),
//! retries failed deliveries per the hook's policy, dead-letters final
//! failures, turns a critical hook's final failure into the cascade event, and
//! acks each batch in one transaction. The observer sees every finished
//! delivery before it is acked.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::cascade::{self, Failure};
use crate::delivery::Resolution;
use crate::dispatch::{EventRun, deliver};
use crate::envelope::{Durability, Envelope};
use crate::journal::{Ack, Inserted, Journal, PendingDelivery};
use crate::outcome::Outcome;
use crate::runtime::Runtime;
use crate::scope::Scope;
use crate::service::{Observer, Report, Seen, Stats};

/// What the writer hands the dispatcher.
pub(crate) enum Msg {
    /// Newly stored events, in journal order.
    Work(Vec<Work>),
    /// Answer once everything before it is delivered.
    Flush(oneshot::Sender<()>),
}

/// One event ready to deliver.
pub(crate) struct Work {
    pub(crate) seq: i64,
    pub(crate) envelope: Envelope,
    pub(crate) deliveries: Vec<PendingDelivery>,
    /// Who waits for what a decision or edit event decides.
    pub(crate) resolve: Option<oneshot::Sender<Option<Resolution>>>,
}

pub(crate) struct Dispatcher {
    rt: Runtime,
    journal: Option<Journal>,
    observer: Observer,
    stats: Stats,
    /// Without a journal: cascade ids already emitted.
    cascaded: Seen,
    acks: Vec<Ack>,
}

impl Dispatcher {
    pub(crate) fn new(rt: Runtime, journal: Option<Journal>, observer: Observer) -> Dispatcher {
        Dispatcher {
            rt,
            journal,
            observer,
            stats: Stats::default(),
            cascaded: Seen::default(),
            acks: Vec::new(),
        }
    }

    pub(crate) fn into_stats(self) -> Stats {
        self.stats
    }

    /// Delivers work as it arrives, merging what is queued into one ack batch.
    pub(crate) fn serve(&mut self, rx: mpsc::Receiver<Msg>) {
        while let Ok(first) = rx.recv() {
            let mut work = Vec::new();
            let mut flushes = Vec::new();
            let mut next = Some(first);
            while let Some(msg) = next {
                match msg {
                    Msg::Work(w) => work.extend(w),
                    Msg::Flush(reply) => {
                        flushes.push(reply);
                        break; // deliver what came before the flush, then answer it
                    }
                }
                next = if work.len() < crate::service::MAX_BATCH {
                    rx.try_recv().ok()
                } else {
                    None
                };
            }
            self.run(work);
            for f in flushes {
                let _ = f.send(());
            }
        }
    }

    fn durability(&self) -> Durability {
        if self.journal.is_some() {
            Durability::Persisted
        } else {
            Durability::Accepted
        }
    }

    fn cancelled(&self) -> bool {
        self.rt.sandbox().is_cancelled()
    }

    /// Delivers the work in order, then acks it in one transaction.
    pub(crate) fn run(&mut self, work: Vec<Work>) {
        let mut queue: VecDeque<Work> = work.into();
        while let Some(w) = queue.pop_front() {
            if self.cancelled() {
                self.stats.left_unacked += w.deliveries.len() as u64
                    + queue.iter().map(|w| w.deliveries.len() as u64).sum::<u64>();
                break;
            }
            for follow_up in self.run_event(w).into_iter().rev() {
                queue.push_front(follow_up);
            }
        }
        let acks = std::mem::take(&mut self.acks);
        if let Some(j) = self.journal.as_mut()
            && let Err(e) = j.ack(&acks)
        {
            // Unacked deliveries run again after a restart: at-least-once holds.
            tracing::error!("journal ack failed (deliveries will repeat after restart): {e}");
        }
    }

    /// Runs one event's deliveries; returns cascade events to run next.
    fn run_event(&mut self, w: Work) -> Vec<Work> {
        let mut run = match EventRun::new(&w.envelope, self.durability()) {
            Ok(run) => run,
            Err(e) => {
                // Validation refuses such events at emit; one stored by an older
                // hookrt is settled as dead rather than recovered forever.
                tracing::error!(event_id = %w.envelope.id, "event cannot be delivered: {e}");
                for pd in &w.deliveries {
                    let dead = Some(format!("event cannot be delivered: {e}"));
                    self.acks.push(Ack {
                        event_seq: w.seq,
                        position: pd.position,
                        attempts: pd.attempts,
                        outcome: Outcome::Error,
                        dead,
                        skipped: false,
                    });
                }
                return Vec::new();
            }
        };
        let mut follow_ups = Vec::new();
        for (i, pd) in w.deliveries.iter().enumerate() {
            if run.decided() {
                // A file-edit owner answered: the rest are not asked.
                self.acks.push(Ack {
                    event_seq: w.seq,
                    position: pd.position,
                    attempts: pd.attempts,
                    outcome: Outcome::Ok,
                    dead: None,
                    skipped: true,
                });
                continue;
            }
            let Some(index) = self.rt.hooks().iter().position(|h| h.has_id(&pd.hook)) else {
                let message = format!("hook `{}` is no longer loaded", pd.hook);
                tracing::warn!(event_id = %w.envelope.id, "{message}: its pending delivery is dead-lettered");
                self.stats.optional_failures += 1;
                let dead = Some(message);
                self.acks.push(Ack {
                    event_seq: w.seq,
                    position: pd.position,
                    attempts: pd.attempts,
                    outcome: Outcome::Error,
                    dead,
                    skipped: false,
                });
                continue;
            };
            let mut attempt = pd.attempts;
            loop {
                let hook = &self.rt.hooks()[index];
                let (settings_retry, critical) = (hook.settings.retry, hook.settings.critical);
                let (d, r) = deliver(
                    &self.rt.services(),
                    hook,
                    &w.envelope,
                    &mut run.wit,
                    &pd.handler,
                    attempt,
                );
                if r.cancelled {
                    self.stats.left_unacked += (w.deliveries.len() - i) as u64;
                    return follow_ups;
                }
                self.stats.deliveries += 1;
                *self.stats.outcomes.entry(d.outcome).or_default() += 1;
                if attempt > 1 {
                    self.stats.repeats += 1;
                }
                (self.observer)(Report::Delivery(&d));
                if d.outcome == Outcome::Ok {
                    run.record(hook, &pd.handler, d.outcome, r.response);
                    self.acks.push(Ack {
                        event_seq: w.seq,
                        position: pd.position,
                        attempts: attempt,
                        outcome: d.outcome,
                        dead: None,
                        skipped: false,
                    });
                    break;
                }
                if attempt < settings_retry.max_attempts {
                    self.wait(settings_retry.backoff(attempt + 1));
                    if self.cancelled() {
                        // Retries are left: not a final failure; the next start goes on.
                        self.stats.left_unacked += (w.deliveries.len() - i) as u64;
                        return follow_ups;
                    }
                    attempt += 1;
                    if let Some(j) = self.journal.as_mut()
                        && let Err(e) = j.start_attempt(w.seq, pd.position, attempt)
                    {
                        tracing::error!("journal: cannot record retry: {e}");
                    }
                    continue;
                }
                run.record(hook, &pd.handler, d.outcome, r.response);
                let message = d.error.clone().unwrap_or_default();
                let dead = Some(message.clone());
                self.acks.push(Ack {
                    event_seq: w.seq,
                    position: pd.position,
                    attempts: attempt,
                    outcome: d.outcome,
                    dead,
                    skipped: false,
                });
                if critical {
                    self.stats.critical_failures += 1;
                    let failure = Failure {
                        hook: &pd.hook,
                        event: &w.envelope,
                        outcome: d.outcome,
                        message: &message,
                    };
                    if let Some(next) =
                        cascade::follow_up(&failure).and_then(|e| self.emit_cascade(e))
                    {
                        follow_ups.push(next);
                    }
                } else {
                    self.stats.optional_failures += 1;
                    tracing::warn!(hook = %pd.hook, event_id = %w.envelope.id, outcome = %d.outcome, "optional hook failed; recorded, no cascade");
                }
                break;
            }
        }
        let resolution = run.finish();
        if let Some(r) = &resolution {
            (self.observer)(Report::Resolved {
                event_id: &w.envelope.id,
                kind: &w.envelope.kind,
                resolution: r,
            });
        }
        if let Some(tx) = w.resolve {
            let _ = tx.send(resolution);
        }
        follow_ups
    }

    /// Sleeps for a retry's backoff, waking early when shutdown cancels.
    fn wait(&self, backoff: Duration) {
        let until = Instant::now() + backoff;
        while Instant::now() < until && !self.cancelled() {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(5)));
        }
    }

    /// Stores a cascade event once (by its deterministic id); None when it
    /// was already emitted for that turn or session.
    fn emit_cascade(&mut self, envelope: Envelope) -> Option<Work> {
        let plan = self.rt.registry().planner().plan(
            &envelope.kind,
            &Scope::of_event(envelope.coordinates.subagent.as_deref()),
        );
        let seq = if let Some(j) = self.journal.as_mut() {
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
        } else if self.cascaded.insert(&envelope.id) {
            0
        } else {
            return None;
        };
        self.stats.cascades += 1;
        tracing::warn!(event_id = %envelope.id, kind = %envelope.kind, "failure cascade");
        let deliveries = plan
            .into_iter()
            .enumerate()
            .map(|(i, (hook, handler))| PendingDelivery {
                position: i as i64,
                hook,
                handler,
                attempts: 1,
            })
            .collect();
        Some(Work {
            seq,
            envelope,
            deliveries,
            resolve: None,
        })
    }
}
