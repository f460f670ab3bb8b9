//! Lanes: deliveries run side by side across hooks.
//!
//! A run of events (a [`Job`]) is split into one lane per hook, holding that
//! hook's deliveries in event order. The dispatcher's thread and the
//! runtime's other delivery threads ([`crate::delivery::threads`]) each take
//! a few deliveries from the head of a lane no other thread holds (the one with the most work left, by the
//! hook's measured cost), run them, and give the lane back. So a hook never
//! runs two deliveries at once and sees its events in order, while different
//! hooks run at the same time, and a slow hook holds up only its own lane.
//! Each delivery runs to its final attempt as the event loop runs it
//! ([`crate::delivery::retry::run_attempts`]); the dispatcher's sink
//! records how each ended, in event order.
//!
//! A decision or edit event's hooks are asked one at a time, in plan
//! order, each after the one before it answered (an edit sees the state as
//! the hooks before it left it, a file-edit owner stops the rest). Such an
//! event is no barrier for the other hooks, which go on with their own
//! events. Its resolution is told as soon as its last hook answered.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::delivery::record::Resolution;
use crate::delivery::retry::{Attempts, LastAttempt, Retries, Step, run_attempts};
use crate::delivery::run::EventRun;
use crate::event::answer::Reply;
use crate::hooks::loaded::load::LoadedHook;
use crate::runtime::Runtime;
use crate::sandbox::wit::CheckedEvent;
use crate::service::journal::Journal;
use crate::service::report::{Observation, Observer, Stats};
use crate::service::work::{Decided, ResolutionTx, Work, lock};

/// Deliveries a thread takes from a lane at a time: enough to keep the
/// lock out of the way, few enough to share a short run between threads.
const TAKE: usize = 4;

/// What the delivery threads share with the dispatcher for its whole life.
#[derive(Clone)]
pub(crate) struct Context {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) observer: Arc<Mutex<Observer>>,
    pub(crate) journal: Arc<Mutex<Option<Journal>>>,
}

impl Context {
    pub(crate) fn new(
        rt: Arc<Runtime>,
        observer: Arc<Mutex<Observer>>,
        journal: Arc<Mutex<Option<Journal>>>,
    ) -> Context {
        Context {
            rt,
            observer,
            journal,
        }
    }

    /// Records in the journal that delivery `position` of event `seq` runs
    /// again as `attempt`.
    pub(crate) fn record_retry(&self, seq: i64, position: i64, attempt: u32) {
        if let Some(j) = lock(&self.journal).as_mut()
            && let Err(e) = j.start_attempt(seq, position, attempt)
        {
            tracing::error!("journal: cannot record retry: {e}");
        }
    }

    /// Tells the observer what `w` decided. With a journal (`persisted`),
    /// returns it as the journal keeps it and whoever waits (`resolve`), to
    /// be told once the batch's acks and resolutions are committed; without
    /// one, tells the waiter now.
    pub(crate) fn resolved(
        &self,
        w: &Work,
        resolution: Option<Resolution>,
        resolve: Option<ResolutionTx>,
        persisted: bool,
    ) -> Option<Decided> {
        let mut kept = None;
        if let Some(r) = &resolution {
            if persisted {
                kept = Some((w.seq, serde_json::to_string(r).unwrap_or_default()));
            }
            (lock(&self.observer))(Observation::Resolved {
                event_id: &w.envelope.id,
                kind: &w.envelope.kind,
                resolution: r,
            });
        }
        let decided = Decided {
            kept,
            tell: resolve.map(|tx| (tx, resolution)),
        };
        if !persisted {
            decided.tell();
            return None;
        }
        (decided.kept.is_some() || decided.tell.is_some()).then_some(decided)
    }

    /// The hook's measured cost per delivery ([`LoadedHook::cost_us`]).
    fn cost(&self, hook: usize) -> u64 {
        self.rt.hooks()[hook].cost_us().max(1)
    }
}

/// One hook's deliveries, in event order.
pub(crate) struct Lane {
    /// The hook's index in the runtime.
    pub(crate) hook: usize,
    /// `(event index, delivery index)` in the job's work.
    pub(crate) items: Vec<(usize, usize)>,
}

/// How a delivery of a job ended.
pub(crate) enum Done {
    /// Not run, or interrupted by shutdown: it stays unacked.
    Left,
    /// Its final attempt (after its retries), with its answer as JSON when the journal
    /// keeps answers.
    Final(LastAttempt, Option<String>),
    /// Not asked: a file-edit owner before it answered.
    Skipped,
}

/// A decision or edit event in a job: asked one hook at a time.
pub(crate) struct InTurn {
    /// Its answers so far; taken when its last hook answered.
    run: Mutex<Option<EventRun>>,
    /// Who waits for what it decides.
    resolve: Mutex<Option<ResolutionTx>>,
}

/// A run of events for the delivery threads.
pub(crate) struct Job {
    pub(crate) work: Vec<Work>,
    /// Per observe event, the event checked for its hooks (`None`:
    /// undeliverable, or a decision or edit event).
    pub(crate) checked: Vec<Option<CheckedEvent>>,
    /// Per decision or edit event, its answers (`None` for observe events).
    pub(crate) turns: Vec<Option<InTurn>>,
    /// Answers are kept (as JSON) for the journal.
    keeps_answers: bool,
    pub(crate) lanes: Vec<Lane>,
    board: Mutex<Board>,
    freed: Condvar,
}

/// Which lanes are held and how far each got.
struct Board {
    /// Per lane: index of the next item to take.
    next: Vec<usize>,
    /// Per lane: a thread is running its items.
    held: Vec<bool>,
    /// Per event: how many of its deliveries finished (a decision or edit
    /// event's delivery `d` may start once `d` of them did).
    turn: Vec<usize>,
    /// Per lane and item: how it ended.
    done: Vec<Vec<Done>>,
    /// Shutdown interrupted a delivery: take nothing more.
    stopped: bool,
    /// Threads waiting on `freed`: a lane given back wakes them only when
    /// there are some (a wake-up is a system call even when nobody waits).
    waiting: usize,
    /// Counts of every finished attempt.
    stats: Stats,
    /// What finished decision and edit events decided, and who waits.
    resolutions: Vec<Decided>,
}

/// What a job leaves for the dispatcher to ack.
pub(crate) struct Results {
    /// Per lane and item, how each delivery ended.
    pub(crate) done: Vec<Vec<Done>>,
    /// Counts of every attempt.
    pub(crate) stats: Stats,
    /// Resolutions to commit with the acks, and whom to tell after.
    pub(crate) resolutions: Vec<Decided>,
}

impl Job {
    /// A job over `work`: `checked` for its observe events, `runs` for its
    /// decision and edit events (taking their `resolve` senders), `lanes`
    /// holding every delivery to run.
    pub(crate) fn new(
        mut work: Vec<Work>,
        checked: Vec<Option<CheckedEvent>>,
        runs: Vec<Option<EventRun>>,
        lanes: Vec<Lane>,
        keeps_answers: bool,
    ) -> Job {
        let turns = work
            .iter_mut()
            .zip(runs)
            .map(|(w, run)| {
                run.map(|run| InTurn {
                    run: Mutex::new(Some(run)),
                    resolve: Mutex::new(w.resolve.take()),
                })
            })
            .collect();
        let board = Board {
            next: vec![0; lanes.len()],
            held: vec![false; lanes.len()],
            turn: vec![0; work.len()],
            done: lanes
                .iter()
                .map(|l| l.items.iter().map(|_| Done::Left).collect())
                .collect(),
            stopped: false,
            waiting: 0,
            stats: Stats::default(),
            resolutions: Vec::new(),
        };
        Job {
            work,
            checked,
            turns,
            keeps_answers,
            lanes,
            board: Mutex::new(board),
            freed: Condvar::new(),
        }
    }

    /// How each delivery ended, the counts of every attempt and the
    /// resolutions; decision and edit events no hook was asked about (none
    /// subscribed) are concluded here. Called once, after [`run`].
    pub(crate) fn results(&self, cx: &Context) -> Results {
        for (event, turn) in self.turns.iter().enumerate() {
            if let Some(turn) = turn
                && self.work[event].deliveries.is_empty()
            {
                self.conclude(cx, event, turn);
            }
        }
        let mut b = lock(&self.board);
        Results {
            done: std::mem::take(&mut b.done),
            stats: std::mem::take(&mut b.stats),
            resolutions: std::mem::take(&mut b.resolutions),
        }
    }

    /// Waits until a lane is given back (counted in `waiting`, so the one
    /// giving it back knows to wake this thread).
    fn wait_for_a_lane<'a>(&self, mut b: MutexGuard<'a, Board>) -> MutexGuard<'a, Board> {
        b.waiting += 1;
        let mut b = self.freed.wait(b).unwrap_or_else(|e| e.into_inner());
        b.waiting -= 1;
        b
    }

    /// Whether item `(event, delivery)` may start: any observe delivery; a
    /// decision or edit event's once every delivery before it finished.
    fn ready(&self, b: &Board, (event, delivery): (usize, usize)) -> bool {
        self.turns[event].is_none() || b.turn[event] == delivery
    }

    /// Tells what decision or edit event `event` decided: the observer, the
    /// journal's resolutions and whoever waits for it.
    fn conclude(&self, cx: &Context, event: usize, turn: &InTurn) {
        let Some(run) = lock(&turn.run).take() else {
            return;
        };
        let resolution = run.finish(cx.rt.state());
        let resolve = lock(&turn.resolve).take();
        let w = &self.work[event];
        if let Some(kept) = cx.resolved(w, resolution, resolve, self.keeps_answers) {
            lock(&self.board).resolutions.push(kept);
        }
    }
}

/// Runs `job` on every delivery thread of the runtime (the calling
/// thread's included; see [`crate::delivery::threads`]); returns once no
/// delivery of it is running (all finished, or shutdown interrupted them).
pub(crate) fn run(cx: &Context, job: &Job) {
    cx.rt.threads().run_everywhere(&|| work(cx, job));
}

/// Takes items from free lanes until none is left (or shutdown).
fn work(cx: &Context, job: &Job) {
    while let Some((lane, from, to)) = take(cx, job) {
        let hook = &cx.rt.hooks()[job.lanes[lane].hook];
        let mut stats = Stats::default();
        let mut results = Vec::with_capacity(to - from);
        let mut turned = None;
        for &(event, delivery) in &job.lanes[lane].items[from..to] {
            if job.turns[event].is_some() {
                turned = Some(event);
            }
            let done = deliver(cx, job, hook, event, delivery, &mut stats);
            let interrupted = matches!(done, Done::Left);
            results.push(done);
            if interrupted {
                break;
            }
        }
        let interrupted = results.last().is_some_and(|d| matches!(d, Done::Left));
        // The event's last hook answered: tell what it decided now, not at
        // the end of the job (someone may be waiting for it).
        if let Some(event) = turned
            && !interrupted
            && job.lanes[lane].items[from].1 + 1 == job.work[event].deliveries.len()
            && let Some(turn) = &job.turns[event]
        {
            job.conclude(cx, event, turn);
        }
        let mut b = lock(&job.board);
        b.stopped |= interrupted;
        if let Some(event) = turned
            && !interrupted
        {
            b.turn[event] += 1;
        }
        for (i, s) in results.into_iter().enumerate() {
            b.done[lane][from + i] = s;
        }
        b.held[lane] = false;
        b.stats.merge(stats);
        let wake = b.waiting > 0;
        drop(b);
        if wake {
            job.freed.notify_all();
        }
    }
}

/// Holds the free lane with the most work left and takes its next items
/// (`lane`, `from`, `to`), waiting for a lane to free up; `None` once
/// nothing is held or free (all done), or on shutdown.
fn take(cx: &Context, job: &Job) -> Option<(usize, usize, usize)> {
    let mut b = lock(&job.board);
    loop {
        if b.stopped || cx.rt.sandbox().is_cancelled() {
            return None;
        }
        let free = (0..job.lanes.len())
            .filter(|&l| {
                !b.held[l]
                    && b.next[l] < job.lanes[l].items.len()
                    && job.ready(&b, job.lanes[l].items[b.next[l]])
            })
            .max_by_key(|&l| {
                (job.lanes[l].items.len() - b.next[l]) as u64 * cx.cost(job.lanes[l].hook)
            });
        if let Some(l) = free {
            let items = &job.lanes[l].items;
            let from = b.next[l];
            // A decision or edit event's delivery is taken alone (the next
            // one of its event waits for it); observe deliveries a few at a time.
            let to = if job.turns[items[from].0].is_some() {
                from + 1
            } else {
                (from + 1..items.len().min(from + TAKE))
                    .find(|&i| job.turns[items[i].0].is_some())
                    .unwrap_or(items.len().min(from + TAKE))
            };
            b.next[l] = to;
            b.held[l] = true;
            return Some((l, from, to));
        }
        if !b.held.iter().any(|&h| h) {
            return None;
        }
        b = job.wait_for_a_lane(b);
    }
}

/// One delivery of a lane, to its final attempt: an observe event's on its
/// own, a decision or edit event's unless the event is decided already,
/// recording its answer in the event's run.
fn deliver(
    cx: &Context,
    job: &Job,
    hook: &LoadedHook,
    event: usize,
    delivery: usize,
    stats: &mut Stats,
) -> Done {
    let w = &job.work[event];
    let pd = &w.deliveries[delivery];
    let mut step = |step| match step {
        Step::Ended(d) => {
            stats.count(&d, d.attempt);
            (lock(&cx.observer))(Observation::Delivery(&d));
        }
        Step::Again(attempt) => cx.record_retry(w.seq, pd.position, attempt),
    };
    let attempts = |checked| Attempts {
        hook,
        envelope: &w.envelope,
        checked,
        handler: &pd.handler,
        first: pd.attempts,
    };
    let services = cx.rt.services();
    let Some(turn) = &job.turns[event] else {
        let checked = job.checked[event]
            .as_ref()
            .expect("lanes hold deliverable events only");
        let last = run_attempts(&services, &attempts(checked), Retries::InPlace, &mut step);
        return last.map_or(Done::Left, |last| Done::Final(last, None));
    };
    let mut run = lock(&turn.run);
    let run = run.as_mut().expect("an event in turn is concluded last");
    if run.decided() {
        return Done::Skipped;
    }
    let last = run_attempts(
        &services,
        &attempts(&run.checked),
        Retries::InPlace,
        &mut step,
    );
    match last {
        Some(mut last) => {
            let reply = std::mem::replace(&mut last.reply, Reply::NONE);
            let json = job
                .keeps_answers
                .then(|| serde_json::to_string(&reply).unwrap_or_default());
            run.record(hook, &pd.handler, last.outcome, reply);
            Done::Final(last, json)
        }
        None => Done::Left,
    }
}
