//! The dispatcher: the thread that owns the hooks and delivers events.
//!
//! It takes work in journal order from the writer (see [`crate::service::writer`]),
//! runs each event's deliveries in plan order (specific handlers, then `*`),
//! retries failed deliveries per the hook's policy, dead-letters final
//! failures, turns a critical hook's final failure into the cascade event, and
//! acks each batch in one transaction, committed on its own thread while the
//! next batch runs. The observer sees every finished delivery before it is
//! acked.
//!
//! With more than one thread, runs of events are delivered in
//! [`crate::service::lanes`]: hooks side by side, each hook's deliveries in
//! order. A decision or edit event's hooks are still asked one after another
//! in plan order there, because each answer depends on the ones before it, but
//! the other hooks go on with their own events meanwhile. Short runs, events
//! recovered with answers already given, and observe events someone waits on
//! run here, one event after another; here a tool approval's hooks run side
//! by side on the runtime's delivery threads (as many as the service's
//! threads) and are recorded in plan order, while file-edit ownership and
//! edits run hook after hook.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, mpsc};

use crate::delivery::dispatch::EventRun;
use crate::delivery::record::Delivery;
use crate::delivery::record::Resolution;
use crate::delivery::retry::{self, Conclusion, FinalAttempt};
use crate::delivery::threads;
use crate::event::answer::Reply;
use crate::event::envelope::{Durability, Envelope};
use crate::event::kind::{self, EventClass};
use crate::event::scope::Scope;
use crate::runtime::Runtime;
use crate::sandbox::outcome::Outcome;
use crate::sandbox::wit::CheckedEvent;
use crate::service::journal::{Ack, Answered, Inserted, Journal, PendingDelivery, TrailContext};
use crate::service::lanes::{self, Done, Job};
use crate::service::report::{Observation, Observer, Reloaded, Stats};
use crate::service::work::{MAX_BATCH, Msg, Seen, Sighting, Work, lock};

/// One delivery run to its final attempt ahead, on another delivery thread:
/// every attempt it made (for stats and the observer) and how it ended
/// (`None`: cancelled).
type Ahead = (Vec<(Delivery, u32)>, Option<FinalAttempt>);

/// The thread that owns the hooks and delivers events in journal order.
pub(crate) struct Dispatcher {
    rt: Arc<Runtime>,
    /// Shared with the delivery threads, which record retries.
    journal: Arc<Mutex<Option<Journal>>>,
    durability: Durability,
    /// Shared with the delivery threads, which report their deliveries.
    observer: Arc<Mutex<Observer>>,
    stats: Stats,
    /// Without a journal: cascade ids already emitted.
    cascaded: Seen,
    acks: Vec<Ack>,
    /// With a journal: the thread committing acks.
    acker: Option<Acker>,
    /// Ids of the critical hooks, whose failures cascade.
    critical: HashSet<String>,
    /// What finished decision and edit events decided (journal seq, JSON),
    /// committed with the acks.
    resolutions: Vec<(i64, String)>,
}

/// Fewest deliveries in a run of observe events for it to go to the
/// delivery threads: below this, waking them and waiting for them costs more than they save
/// (measured with `scripts/bench throughput`).
const LANES_FROM: usize = 16;

impl Dispatcher {
    /// A dispatcher delivering on its own thread plus `threads - 1` more
    /// (the runtime's [`threads`]).
    pub(crate) fn new(
        rt: Runtime,
        journal: Option<Journal>,
        observer: Observer,
        threads: usize,
    ) -> std::io::Result<Dispatcher> {
        let durability = if journal.is_some() {
            Durability::Persisted
        } else {
            Durability::Accepted
        };
        let mut rt = rt;
        rt.set_threads(threads)?;
        let cx = lanes::Context::new(
            Arc::new(rt),
            Arc::new(Mutex::new(observer)),
            Arc::new(Mutex::new(journal)),
        );
        let critical = critical_ids(&cx.rt);
        let acker = match durability {
            Durability::Persisted => Some(Acker::start(cx.journal.clone())?),
            Durability::Accepted => None,
        };
        Ok(Dispatcher {
            acker,
            critical,
            resolutions: Vec::new(),
            rt: cx.rt,
            journal: cx.journal,
            durability,
            observer: cx.observer,
            stats: Stats::default(),
            cascaded: Seen::default(),
            acks: Vec::new(),
        })
    }

    pub(crate) fn into_stats(self) -> Stats {
        self.stats
    }

    /// Delivers work as it arrives, merging what is queued into one ack batch.
    pub(crate) fn serve(&mut self, rx: mpsc::Receiver<Msg>) {
        while let Ok(first) = rx.recv() {
            let mut work = Vec::new();
            let mut flushes = Vec::new();
            let mut lookups = Vec::new();
            let mut reload = None;
            let mut next = Some(first);
            while let Some(msg) = next {
                match msg {
                    Msg::Work(w) => work.extend(w),
                    Msg::Flush(reply) => {
                        flushes.push(reply);
                        break; // deliver what came before the flush, then answer it
                    }
                    Msg::Lookup(seq, reply) => {
                        lookups.push((seq, reply));
                        break; // answer it once what came before is decided
                    }
                    Msg::Reload(runtime, reply) => {
                        reload = Some((runtime, reply));
                        break; // what came before is delivered by the old hooks
                    }
                }
                next = if work.len() < MAX_BATCH {
                    rx.try_recv().ok()
                } else {
                    None
                };
            }
            self.run(work);
            if !(flushes.is_empty() && lookups.is_empty())
                && let Some(acker) = &self.acker
            {
                // A flush returns, and a lookup reads, only what is committed.
                acker.sync();
            }
            for f in flushes {
                let _ = f.send(());
            }
            for (seq, reply) in lookups {
                let _ = reply.send(self.stored_resolution(seq));
            }
            if let Some((runtime, reply)) = reload {
                let reloaded = self.swap(*runtime);
                let _ = reply.send(reloaded);
            }
        }
    }

    /// Makes `runtime` the one delivering from now on. Every event before the
    /// reload was delivered (and acked) by the old hooks; their engine and
    /// their delivery threads are dropped here.
    fn swap(&mut self, mut runtime: Runtime) -> Reloaded {
        runtime.adopt(&self.rt);
        // The trail's entries name the new hooks' components from now on.
        if let Some(shared) = lock(&self.journal).as_ref().and_then(|j| j.trail_context())
            && let Ok(mut context) = shared.write()
        {
            let fresh = crate::service::journal::trail::trail_context(
                &runtime,
                &crate::service::journal::trail::TrailOptions::default(),
            );
            // A new hook set: the next entry is its `hooks` entry.
            let mut next = TrailContext::clone(&context);
            next.components = fresh.components;
            next.settings = fresh.settings;
            next.generation += 1;
            *context = Arc::new(next);
        }
        let previous = self.rt.hooks().iter().map(|h| h.id()).collect();
        let hooks = runtime.hooks().iter().map(|h| h.id()).collect();
        self.critical = critical_ids(&runtime);
        self.rt = Arc::new(runtime);
        tracing::info!(previous = ?previous, hooks = ?hooks, "hooks reloaded");
        Reloaded { previous, hooks }
    }

    /// What the journal says the event at `seq` decided (none without a
    /// journal, or for an event that decides nothing).
    fn stored_resolution(&self, seq: i64) -> Option<Resolution> {
        let guard = lock(&self.journal);
        let text = match guard.as_ref()?.resolution(seq) {
            Ok(text) => text?,
            Err(e) => {
                tracing::error!("journal: cannot read a stored resolution: {e}");
                return None;
            }
        };
        serde_json::from_str(&text)
            .map_err(|e| tracing::error!(seq, "journal: unreadable stored resolution: {e}"))
            .ok()
    }

    fn cancelled(&self) -> bool {
        self.rt.sandbox().is_cancelled()
    }

    /// Delivers the work in order, then acks it in one transaction.
    pub(crate) fn run(&mut self, work: Vec<Work>) {
        if work.is_empty() {
            return;
        }
        let mut queue: VecDeque<Work> = work.into();
        while !queue.is_empty() {
            if self.cancelled() {
                self.stats.left_unacked +=
                    queue.iter().map(|w| w.deliveries.len() as u64).sum::<u64>();
                break;
            }
            // A short run is cheaper on this thread alone than handed around.
            let run = match self.rt.threads().threads() {
                1 => 0,
                _ => lanes_run(&queue, &self.critical, &self.rt),
            };
            let follow_ups = if run > 0 {
                let run: Vec<Work> = queue.drain(..run).collect();
                self.run_lanes(run)
            } else {
                let w = queue.pop_front().expect("queue is not empty");
                self.run_event(w)
            };
            for follow_up in follow_ups.into_iter().rev() {
                queue.push_front(follow_up);
            }
        }
        // What the observer wrote must be out before the journal counts it done.
        (lock(&self.observer))(Observation::EndOfBatch);
        let acks = std::mem::take(&mut self.acks);
        let resolutions = std::mem::take(&mut self.resolutions);
        if let Some(acker) = &self.acker {
            acker.commit(acks, resolutions);
        }
    }

    /// Runs one event's deliveries; returns cascade events to run next.
    fn run_event(&mut self, w: Work) -> Vec<Work> {
        let mut run = match EventRun::new(&w.envelope, self.durability, self.rt.registry()) {
            Ok(run) => run,
            Err(e) => {
                // Validation refuses such events at emit.
                self.undeliverable(&w, &e.to_string());
                return Vec::new();
            }
        };
        let mut follow_ups = Vec::new();
        // Answers acked before a restart count as if given now, in plan order.
        let mut answered = w.answered.iter().peekable();
        // Answers are kept for the journal only: without one, serializing
        // each (an edit's is the whole agent input) would be thrown away.
        let keeps_answers = EventRun::needed(&w.envelope.kind) && self.acker.is_some();
        let mut side_by_side = self.run_side_by_side(&w, &run);
        for (i, pd) in w.deliveries.iter().enumerate() {
            while let Some(a) = answered.next_if(|a| a.position < pd.position) {
                self.replay(&mut run, a);
            }
            if run.decided() {
                // A file-edit owner answered: the rest are not asked.
                self.skipped(&w, pd);
                continue;
            }
            let Some(index) = self.rt.hooks().iter().position(|h| h.has_id(&pd.hook)) else {
                self.gone(&w, pd);
                continue;
            };
            let hook = &self.rt.hooks()[index];
            let (stats, observer, journal) = (&mut self.stats, &self.observer, &self.journal);
            let early = side_by_side.as_mut().and_then(|s| s[i].take());
            let last = if let Some((attempts, last)) = early {
                // Run ahead on another thread: told now, in plan order.
                for (d, attempt) in &attempts {
                    stats.count(d, *attempt);
                    (lock(observer))(Observation::Delivery(d));
                }
                last
            } else {
                retry::to_final(
                    &self.rt.services(),
                    hook,
                    &w.envelope,
                    &run.checked,
                    &pd.handler,
                    pd.attempts,
                    &mut |d, attempt| {
                        stats.count(d, attempt);
                        (lock(observer))(Observation::Delivery(d));
                    },
                    &mut |attempt| {
                        if let Some(j) = lock(journal).as_mut()
                            && let Err(e) = j.start_attempt(w.seq, pd.position, attempt)
                        {
                            tracing::error!("journal: cannot record retry: {e}");
                        }
                    },
                )
            };
            let Some(s) = last else {
                self.stats.left_unacked += (w.deliveries.len() - i) as u64;
                return follow_ups;
            };
            let answer = keeps_answers.then(|| serde_json::to_string(&s.reply).unwrap_or_default());
            run.record(hook, &pd.handler, s.outcome, s.reply);
            let critical = hook.settings.critical;
            let next = self.conclude(&w, pd, s.attempt, s.outcome, s.error, critical);
            if let Some(ack) = self.acks.last_mut() {
                ack.answer = answer;
            }
            follow_ups.extend(next);
        }
        for a in answered {
            self.replay(&mut run, a);
        }
        let resolution = run.finish(self.rt.state());
        if let Some(r) = &resolution
            && self.acker.is_some()
        {
            self.resolutions
                .push((w.seq, serde_json::to_string(r).unwrap_or_default()));
        }
        if let Some(r) = &resolution {
            (lock(&self.observer))(Observation::Resolved {
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

    /// A tool approval's deliveries run to their final attempts side by
    /// side on the delivery threads, each with the attempts it made, by
    /// position in `w`'s deliveries (none for a hook no longer loaded); `None` for any other
    /// event, or with one thread. The caller records them in plan order.
    fn run_side_by_side(&self, w: &Work, run: &EventRun) -> Option<Vec<Option<Ahead>>> {
        let threads = self.rt.threads();
        if !run.side_by_side() || threads.threads() < 2 {
            return None;
        }
        let (rt, journal, seq) = (&self.rt, &self.journal, w.seq);
        let (envelope, pending, checked) = (&w.envelope, &w.deliveries, &run.checked);
        let found: Vec<(usize, usize)> = pending
            .iter()
            .enumerate()
            .filter_map(|(i, pd)| Some((i, rt.hooks().iter().position(|h| h.has_id(&pd.hook))?)))
            .collect();
        let hooks: Vec<usize> = found.iter().map(|&(_, hook)| hook).collect();
        let tasks = threads::tasks_by_hook(&hooks);
        let cost = |t: usize| rt.hooks()[found[tasks[t][0]].1].cost_us() * tasks[t].len() as u64;
        let results = threads.run(tasks.len(), cost, |t| {
            tasks[t]
                .iter()
                .map(|&k| {
                    let (i, hook) = found[k];
                    let pd = &pending[i];
                    let mut attempts = Vec::new();
                    let last = retry::to_final(
                        &rt.services(),
                        &rt.hooks()[hook],
                        envelope,
                        checked,
                        &pd.handler,
                        pd.attempts,
                        &mut |d, attempt| attempts.push((d.clone(), attempt)),
                        &mut |attempt| {
                            if let Some(j) = lock(journal).as_mut()
                                && let Err(e) = j.start_attempt(seq, pd.position, attempt)
                            {
                                tracing::error!("journal: cannot record retry: {e}");
                            }
                        },
                    );
                    (attempts, last)
                })
                .collect::<Vec<_>>()
        });
        let mut finals: Vec<Option<Ahead>> = pending.iter().map(|_| None).collect();
        for (task, results) in tasks.iter().zip(results) {
            for (&k, result) in task.iter().zip(results) {
                finals[found[k].0] = Some(result);
            }
        }
        Some(finals)
    }

    /// Counts an answer acked before a restart into `run`, as its hook gave it.
    fn replay(&self, run: &mut EventRun, a: &Answered) {
        let Some(hook) = self.rt.hooks().iter().find(|h| h.has_id(&a.hook)) else {
            return; // the hook is no longer loaded: it has no say
        };
        match serde_json::from_str::<Reply>(&a.answer) {
            Ok(reply) => run.record(hook, &a.handler, a.outcome, reply),
            Err(e) => {
                tracing::error!(hook = %a.hook, "journal: unreadable stored answer, not counted: {e}")
            }
        }
    }

    /// What an optional hook's final failure did to its event, for the log
    /// line: a vote under `on_failure = "deny"` denied or aborted something,
    /// and saying only "recorded" would hide it.
    fn what_failure_did(&self, w: &Work, pd: &PendingDelivery) -> &'static str {
        let votes = pd.handler != kind::WILDCARD && kind::observed_kind(&pd.handler).is_none();
        let deny = self.rt.hooks().iter().any(|h| {
            h.has_id(&pd.hook)
                && h.scope != Scope::Aggregate
                && h.settings.on_failure == crate::hooks::folder::settings::OnFailure::Deny
        });
        match (
            kind::class_of(&w.envelope.kind),
            votes,
            w.envelope.kind.as_str(),
        ) {
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

    /// Acks a delivery's final attempt; a final failure is dead-lettered and, for a
    /// critical hook, returns the cascade event to run next.
    fn conclude(
        &mut self,
        w: &Work,
        pd: &PendingDelivery,
        attempt: u32,
        outcome: Outcome,
        error: Option<String>,
        critical: bool,
    ) -> Option<Work> {
        let conclusion =
            retry::conclude(&pd.hook, critical, &w.envelope, outcome, error.as_deref());
        let dead = match &conclusion {
            Conclusion::Done => None,
            Conclusion::Dead { message } | Conclusion::Cascade { message, .. } => {
                Some(message.clone())
            }
        };
        self.acks.push(Ack {
            event_seq: w.seq,
            position: pd.position,
            attempts: attempt,
            outcome,
            dead,
            skipped: false,
            answer: None,
        });
        match conclusion {
            Conclusion::Done => None,
            Conclusion::Dead { .. } => {
                self.stats.optional_failures += 1;
                tracing::warn!(hook = %pd.hook, event_id = %w.envelope.id, outcome = %outcome, "optional hook failed; {}", self.what_failure_did(w, pd));
                None
            }
            Conclusion::Cascade { cascade, .. } => {
                self.stats.critical_failures += 1;
                cascade.and_then(|e| self.emit_cascade(*e))
            }
        }
    }

    /// Delivers a run of events in lanes (see [`crate::service::lanes`]),
    /// then acks in event order; returns the cascade events to run next.
    fn run_lanes(&mut self, mut work: Vec<Work>) -> Vec<Work> {
        let mut checked = Vec::with_capacity(work.len());
        let mut runs = Vec::with_capacity(work.len());
        for w in &mut work {
            // Observe events here are those nobody waits on: whatever
            // context hooks add, nobody would read it.
            let (event, run) = if kind::class_of(&w.envelope.kind) == EventClass::Observe {
                (
                    CheckedEvent::new(&w.envelope, self.durability).map(Some),
                    None,
                )
            } else {
                match EventRun::new(&w.envelope, self.durability, self.rt.registry()) {
                    Ok(run) => (Ok(None), Some(run)),
                    Err(e) => (Err(e), None),
                }
            };
            match event {
                Ok(event) => checked.push(event),
                Err(e) => {
                    self.undeliverable(w, &e.to_string());
                    // Nobody waits on an undeliverable event forever.
                    w.resolve = None;
                    checked.push(None);
                }
            }
            runs.push(run);
        }
        let mut lanes: Vec<lanes::Lane> = Vec::new();
        for (event, w) in work.iter().enumerate() {
            if checked[event].is_none() && runs[event].is_none() {
                continue;
            }
            for (delivery, pd) in w.deliveries.iter().enumerate() {
                let Some(hook) = self.rt.hooks().iter().position(|h| h.has_id(&pd.hook)) else {
                    self.gone(w, pd);
                    continue;
                };
                match lanes.iter_mut().find(|l| l.hook == hook) {
                    Some(lane) => lane.items.push((event, delivery)),
                    None => lanes.push(lanes::Lane {
                        hook,
                        items: vec![(event, delivery)],
                    }),
                }
            }
        }
        let keeps_answers = self.acker.is_some();
        let job = Arc::new(Job::new(work, checked, runs, lanes, keeps_answers));
        let cx = lanes::Context::new(self.rt.clone(), self.observer.clone(), self.journal.clone());
        lanes::run(&cx, &job);
        let results = job.results(&cx);
        self.stats.merge(results.stats);
        self.resolutions.extend(results.resolutions);
        // Ack in event order, so cascades come out as a sequential run would.
        let mut finals: Vec<(usize, usize, usize, Done)> = job
            .lanes
            .iter()
            .zip(results.done)
            .flat_map(|(lane, done)| {
                lane.items
                    .iter()
                    .zip(done)
                    .map(|(&(event, delivery), d)| (event, delivery, lane.hook, d))
            })
            .collect();
        finals.sort_by_key(|&(event, delivery, ..)| (event, delivery));
        let mut follow_ups = Vec::new();
        for (event, delivery, hook, done) in finals {
            let w = &job.work[event];
            let pd = &w.deliveries[delivery];
            match done {
                Done::Final(s, answer) => {
                    let critical = self.rt.hooks()[hook].settings.critical;
                    let next = self.conclude(w, pd, s.attempt, s.outcome, s.error, critical);
                    if let Some(ack) = self.acks.last_mut() {
                        ack.answer = answer;
                    }
                    follow_ups.extend(next);
                }
                Done::Skipped => self.skipped(w, pd),
                Done::Left => self.stats.left_unacked += 1,
            }
        }
        follow_ups
    }

    /// Acks a delivery not asked because a file-edit owner before it answered.
    fn skipped(&mut self, w: &Work, pd: &PendingDelivery) {
        self.acks.push(Ack {
            event_seq: w.seq,
            position: pd.position,
            attempts: pd.attempts,
            outcome: Outcome::Ok,
            dead: None,
            skipped: true,
            answer: None,
        });
    }

    /// An event stored by an older hookrt that this one refuses: concluded as
    /// dead rather than recovered forever.
    fn undeliverable(&mut self, w: &Work, error: &str) {
        tracing::error!(event_id = %w.envelope.id, "event cannot be delivered: {error}");
        for pd in &w.deliveries {
            self.acks.push(Ack {
                event_seq: w.seq,
                position: pd.position,
                attempts: pd.attempts,
                outcome: Outcome::Error,
                dead: Some(format!("event cannot be delivered: {error}")),
                skipped: false,
                answer: None,
            });
        }
    }

    /// A pending delivery whose hook is no longer loaded: dead-lettered.
    fn gone(&mut self, w: &Work, pd: &PendingDelivery) {
        let message = format!("hook `{}` is no longer loaded", pd.hook);
        tracing::warn!(event_id = %w.envelope.id, "{message}: its pending delivery is dead-lettered");
        self.stats.optional_failures += 1;
        self.acks.push(Ack {
            event_seq: w.seq,
            position: pd.position,
            attempts: pd.attempts,
            outcome: Outcome::Error,
            dead: Some(message),
            skipped: false,
            answer: None,
        });
    }

    /// Stores a cascade event once (by its deterministic id); None when it
    /// was already emitted for that turn or session.
    fn emit_cascade(&mut self, envelope: Envelope) -> Option<Work> {
        let plan = self.rt.registry().planner().plan(
            &envelope.kind,
            &Scope::of_event(envelope.coordinates.subagent.as_deref()),
        );
        let seq = if let Some(j) = lock(&self.journal).as_mut() {
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
        } else if self
            .cascaded
            .insert(&envelope.coordinates.agent, &envelope.id, envelope.digest())
            == Sighting::New
        {
            0
        } else {
            return None;
        };
        self.stats.cascades += 1;
        tracing::warn!(event_id = %envelope.id, kind = %envelope.kind, "failure cascade");
        (lock(&self.observer))(Observation::Cascaded(&envelope));
        let deliveries = PendingDelivery::planned(plan, 1);
        Some(Work {
            seq,
            envelope,
            deliveries,
            resolve: None,
            answered: Vec::new(),
        })
    }
}

/// The thread that commits each batch's acks (and resolutions), so the
/// dispatcher delivers the next batch while the last one's commit waits for
/// the disk. At most one batch waits for it; a flush or a lookup waits until
/// everything before it is committed ([`Acker::sync`]); dropping it commits
/// what is queued and joins the thread. A crash before a commit leaves those
/// deliveries unacked: they run again at the next start (at-least-once).
struct Acker {
    tx: Option<mpsc::SyncSender<AckMsg>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

enum AckMsg {
    Commit(Vec<Ack>, Vec<(i64, String)>),
    Sync(mpsc::Sender<()>),
}

impl Acker {
    fn start(journal: Arc<Mutex<Option<Journal>>>) -> std::io::Result<Acker> {
        let (tx, rx) = mpsc::sync_channel::<AckMsg>(1);
        let thread = std::thread::Builder::new()
            .name("hookrt-ack".into())
            .spawn(move || {
                for msg in rx {
                    match msg {
                        AckMsg::Commit(acks, resolutions) => {
                            if let Some(j) = lock(&journal).as_mut()
                                && let Err(e) = j.ack(&acks, &resolutions)
                            {
                                // Unacked deliveries run again after a restart:
                                // at-least-once holds.
                                tracing::error!(
                                    "journal ack failed (deliveries will repeat after restart): {e}"
                                );
                            }
                        }
                        AckMsg::Sync(reply) => {
                            let _ = reply.send(());
                        }
                    }
                }
                // The service stops: the trail's head is signed once more.
                if let Some(j) = lock(&journal).as_mut()
                    && let Err(e) = j.checkpoint()
                {
                    tracing::error!("journal: cannot sign the trail's head at shutdown: {e}");
                }
            })?;
        Ok(Acker {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues a batch's acks (waits while the batch before it is queued).
    fn commit(&self, acks: Vec<Ack>, resolutions: Vec<(i64, String)>) {
        if acks.is_empty() && resolutions.is_empty() {
            return;
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(AckMsg::Commit(acks, resolutions));
        }
    }

    /// Returns once every batch queued before it is committed.
    fn sync(&self) {
        let (reply, done) = mpsc::channel();
        if let Some(tx) = &self.tx
            && tx.send(AckMsg::Sync(reply)).is_ok()
        {
            let _ = done.recv();
        }
    }
}

impl Drop for Acker {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Ids of `rt`'s critical hooks, whose final failures cascade.
fn critical_ids(rt: &Runtime) -> HashSet<String> {
    rt.hooks()
        .iter()
        .filter(|h| h.settings.critical)
        .map(|h| h.id())
        .collect()
}

/// How many events at the head of `queue` go to the delivery threads together: the
/// events that may run in lanes, up to and with the first one a critical
/// hook receives, if they make [`LANES_FROM`] deliveries or more; else none.
fn lanes_run(queue: &VecDeque<Work>, critical: &HashSet<String>, rt: &Runtime) -> usize {
    let (mut deliveries, mut events) = (0, 0);
    for w in queue.iter().take_while(|w| in_lanes(w, rt)) {
        deliveries += w.deliveries.len();
        events += 1;
        // A critical hook's failure here raises a cascade event that must be
        // delivered right after this event (docs/failure-cascade.md), before
        // any later one: the run ends with it.
        if w.deliveries.iter().any(|pd| critical.contains(&pd.hook)) {
            break;
        }
    }
    if deliveries >= LANES_FROM { events } else { 0 }
}

/// Whether an event may run in lanes: an observe event nobody waits on, or
/// a decision or edit event whose hooks are all loaded and none of which
/// answered before a restart (those replay their stored answers, alone).
fn in_lanes(w: &Work, rt: &Runtime) -> bool {
    match kind::class_of(&w.envelope.kind) {
        EventClass::Observe => w.resolve.is_none(),
        EventClass::Decision | EventClass::Edit | EventClass::Gate => {
            w.answered.is_empty()
                && w.deliveries
                    .iter()
                    .all(|pd| rt.hooks().iter().any(|h| h.has_id(&pd.hook)))
        }
    }
}
