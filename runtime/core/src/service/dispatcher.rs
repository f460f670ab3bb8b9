//! The dispatcher: the thread that owns the hooks and delivers events.
//!
//! It takes work in journal order from the writer (see [`crate::service::writer`])
//! and runs each event through the one event loop
//! ([`crate::delivery::dispatch`]) with retries in place; its sink
//! ([`crate::service::sink`]) turns what the loop decided into acks, dead
//! letters and cascade events to deliver next. Each batch's acks are
//! committed in one transaction by the [`crate::service::acker`] while the
//! next batch runs. The observer sees every finished delivery before it is
//! acked.
//!
//! With more than one thread, runs of events are delivered in
//! [`crate::service::lanes`]: hooks side by side, each hook's deliveries in
//! order, a decision or edit event's hooks still one after another in plan
//! order. Short runs, events recovered with answers already given, and
//! observe events someone waits on go through the event loop, one event
//! after another.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, mpsc};

use crate::delivery::dispatch::{self, Event, Planned, Ran, Replay};
use crate::delivery::record::Resolution;
use crate::delivery::retry::Retries;
use crate::delivery::run::EventRun;
use crate::delivery::sink::{End, Sink};
use crate::event::answer::Reply;
use crate::event::envelope::{Durability, EnvelopeError};
use crate::event::kind::{self, EventClass};
use crate::runtime::Runtime;
use crate::sandbox::wit::CheckedEvent;
use crate::service::acker::Acker;
use crate::service::journal::{Journal, TrailContext};
use crate::service::lanes::{self, Context, Done, Job};
use crate::service::report::{Observation, Observer, Reloaded, Stats};
use crate::service::sink::{Books, Journaled};
use crate::service::work::{MAX_BATCH, Msg, Work, lock};

/// The thread that owns the hooks and delivers events in journal order.
pub(crate) struct Dispatcher {
    /// The runtime, journal and observer, shared with the delivery threads.
    cx: Context,
    durability: Durability,
    /// Counts, acks and resolutions of the batch, and cascade ids emitted.
    books: Books,
    /// With a journal: the thread committing acks.
    acker: Option<Acker>,
    /// Ids of the critical hooks, whose failures cascade.
    critical: HashSet<String>,
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
            cx,
            durability,
            books: Books::default(),
            acker,
            critical,
        })
    }

    pub(crate) fn into_stats(self) -> Stats {
        self.books.stats
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
        runtime.adopt(&self.cx.rt);
        // The trail's entries name the new hooks' components from now on.
        if let Some(shared) = lock(&self.cx.journal)
            .as_ref()
            .and_then(|j| j.trail_context())
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
        let previous = self.cx.rt.hooks().iter().map(|h| h.id()).collect();
        let hooks = runtime.hooks().iter().map(|h| h.id()).collect();
        self.critical = critical_ids(&runtime);
        self.cx.rt = Arc::new(runtime);
        tracing::info!(previous = ?previous, hooks = ?hooks, "hooks reloaded");
        Reloaded { previous, hooks }
    }

    /// What the journal says the event at `seq` decided (none without a
    /// journal, or for an event that decides nothing).
    fn stored_resolution(&self, seq: i64) -> Option<Resolution> {
        let guard = lock(&self.cx.journal);
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
        self.cx.rt.sandbox().is_cancelled()
    }

    /// Delivers the work in order, then acks it in one transaction.
    pub(crate) fn run(&mut self, work: Vec<Work>) {
        if work.is_empty() {
            return;
        }
        let mut queue: VecDeque<Work> = work.into();
        while !queue.is_empty() {
            if self.cancelled() {
                self.books.stats.left_unacked +=
                    queue.iter().map(|w| w.deliveries.len() as u64).sum::<u64>();
                break;
            }
            // A short run is cheaper on this thread alone than handed around.
            let run = match self.cx.rt.threads().threads() {
                1 => 0,
                _ => lanes_run(&queue, &self.critical, &self.cx.rt),
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
        (lock(&self.cx.observer))(Observation::EndOfBatch);
        let acks = std::mem::take(&mut self.books.acks);
        let resolutions = std::mem::take(&mut self.books.resolutions);
        if let Some(acker) = &self.acker {
            acker.commit(acks, resolutions);
        }
    }

    /// Runs one event's deliveries through the event loop; returns cascade
    /// events to run next.
    fn run_event(&mut self, mut w: Work) -> Vec<Work> {
        let rt = self.cx.rt.clone();
        let planned: Vec<Planned<'_>> = w
            .deliveries
            .iter()
            .map(|pd| Planned {
                hook: rt.hooks().iter().position(|h| h.has_id(&pd.hook)),
                handler: &pd.handler,
                first: pd.attempts,
            })
            .collect();
        let event = Event {
            envelope: &w.envelope,
            durability: self.durability,
            planned: &planned,
            replays: replays(&rt, &w),
        };
        let resolve = w.resolve.take();
        let mut follow_ups = Vec::new();
        let persisted = self.acker.is_some();
        let mut sink = Journaled::new(&w, &self.cx, &mut self.books, &mut follow_ups, persisted);
        // Answers are kept for the journal only: without one, serializing
        // each (an edit's is the whole agent input) would be thrown away.
        sink.keeps_answers = EventRun::needed(&w.envelope.kind) && persisted;
        match dispatch::run(&rt.event_loop(Retries::InPlace), event, &mut sink) {
            // Validation refuses such events at emit.
            Err(e) => tracing::error!(event_id = %w.envelope.id, "event cannot be delivered: {e}"),
            Ok(Ran::Left) => {}
            Ok(Ran::Resolved(resolution)) => sink.resolved(resolution, resolve),
        }
        follow_ups
    }

    /// Delivers a run of events in lanes (see [`crate::service::lanes`]),
    /// then acks in event order; returns the cascade events to run next.
    fn run_lanes(&mut self, mut work: Vec<Work>) -> Vec<Work> {
        let mut follow_ups = Vec::new();
        let persisted = self.acker.is_some();
        let mut checked = Vec::with_capacity(work.len());
        let mut runs = Vec::with_capacity(work.len());
        for w in &mut work {
            match self.lent(w) {
                Ok((event, run)) => {
                    checked.push(event);
                    runs.push(run);
                }
                Err(e) => {
                    tracing::error!(event_id = %w.envelope.id, "event cannot be delivered: {e}");
                    let mut sink =
                        Journaled::new(w, &self.cx, &mut self.books, &mut follow_ups, persisted);
                    dispatch::undeliverable(&mut sink, w.deliveries.len(), &e.to_string());
                    // Nobody waits on an undeliverable event forever.
                    w.resolve = None;
                    checked.push(None);
                    runs.push(None);
                }
            }
        }
        let mut lanes: Vec<lanes::Lane> = Vec::new();
        for (event, w) in work.iter().enumerate() {
            if checked[event].is_none() && runs[event].is_none() {
                continue;
            }
            for (delivery, pd) in w.deliveries.iter().enumerate() {
                let Some(hook) = self.cx.rt.hooks().iter().position(|h| h.has_id(&pd.hook)) else {
                    let mut sink =
                        Journaled::new(w, &self.cx, &mut self.books, &mut follow_ups, persisted);
                    sink.concluded(delivery, End::Gone);
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
        let job = Arc::new(Job::new(work, checked, runs, lanes, persisted));
        lanes::run(&self.cx, &job);
        let results = job.results(&self.cx);
        self.books.stats.merge(results.stats);
        self.books.resolutions.extend(results.resolutions);
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
        for (event, delivery, hook, done) in finals {
            let w = &job.work[event];
            let mut sink = Journaled::new(w, &self.cx, &mut self.books, &mut follow_ups, persisted);
            match done {
                Done::Final(last, answer) => {
                    let end = End::of(&last, &self.cx.rt.hooks()[hook], &w.envelope);
                    sink.concluded_with(delivery, end, answer);
                }
                Done::Skipped => sink.concluded(delivery, End::Skipped),
                Done::Left => sink.concluded(delivery, End::Left),
            }
        }
        follow_ups
    }

    /// What `w`'s hooks are lent in lanes: an observe event checked (those
    /// here are the ones nobody waits on: whatever context hooks add, nobody
    /// would read it), or a decision or edit event's run.
    fn lent(&self, w: &Work) -> Result<(Option<CheckedEvent>, Option<EventRun>), EnvelopeError> {
        if kind::class_of(&w.envelope.kind) == EventClass::Observe {
            let checked = CheckedEvent::new(&w.envelope, self.durability)?;
            return Ok((Some(checked), None));
        }
        let run = EventRun::new(&w.envelope, self.durability, self.cx.rt.registry())?;
        Ok((None, Some(run)))
    }
}

/// The answers `w`'s hooks gave before a restart, to count as if given now
/// before the pending delivery after each: none from a hook no longer
/// loaded (it has no say), none unreadable (logged).
fn replays(rt: &Runtime, w: &Work) -> Vec<Replay> {
    w.answered
        .iter()
        .filter_map(|a| {
            let hook = rt.hooks().iter().position(|h| h.has_id(&a.hook))?;
            let reply = serde_json::from_str::<Reply>(&a.answer)
                .map_err(|e| tracing::error!(hook = %a.hook, "journal: unreadable stored answer, not counted: {e}"))
                .ok()?;
            let before = w
                .deliveries
                .iter()
                .position(|pd| a.position < pd.position)
                .unwrap_or(w.deliveries.len());
            Some(Replay {
                before,
                hook,
                handler: a.handler.clone(),
                outcome: a.outcome,
                reply,
            })
        })
        .collect()
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
