//! Lanes: observe deliveries run side by side across hooks.
//!
//! A run of observe events (a [`Job`]) is split into one lane per hook,
//! holding that hook's deliveries in event order. The dispatcher's thread and
//! the [`Pool`]'s worker threads each take a few deliveries from the head of
//! the longest lane no other worker holds, run them, and give the lane back.
//! So a hook never runs two deliveries at once and sees its events in order,
//! while different hooks run at the same time, and a slow hook holds up only
//! its own lane. Decision and edit events never come here: their answers
//! depend on the hooks before them (see [`crate::service::dispatcher`]).
//!
//! The workers live as long as the dispatcher: a run of a few events costs a
//! wake-up, not a thread start.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::runtime::Runtime;
use crate::sandbox::wit::WitEnvelope;
use crate::service::journal::Journal;
use crate::service::report::{Observation, Observer, Stats};
use crate::service::retry::{FinalAttempt, count, settle};
use crate::service::work::{Work, lock};

/// Deliveries a worker takes from a lane at a time: enough to keep the
/// lock out of the way, few enough to share a short run between workers.
const TAKE: usize = 4;

/// What workers share with the dispatcher for its whole life.
#[derive(Clone)]
pub(crate) struct Context {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) observer: Arc<Mutex<Observer>>,
    pub(crate) journal: Arc<Mutex<Option<Journal>>>,
}

/// One hook's deliveries, in event order.
pub(crate) struct Lane {
    /// The hook's index in the runtime.
    pub(crate) hook: usize,
    /// `(event index, delivery index)` in the job's work.
    pub(crate) items: Vec<(usize, usize)>,
}

/// A run of observe events for the workers.
pub(crate) struct Job {
    pub(crate) work: Vec<Work>,
    /// Per event, the record its hooks are lent (`None`: undeliverable).
    pub(crate) wits: Vec<Option<WitEnvelope>>,
    pub(crate) lanes: Vec<Lane>,
    board: Mutex<Board>,
    freed: Condvar,
}

/// Which lanes are held and how far each got.
struct Board {
    /// Per lane: index of the next item to take.
    next: Vec<usize>,
    /// Per lane: a worker is running its items.
    held: Vec<bool>,
    /// Per lane and item: how it settled (`None`: not run, or interrupted).
    done: Vec<Vec<Option<FinalAttempt>>>,
    /// Shutdown interrupted a delivery: take nothing more.
    stopped: bool,
    /// Counts of every finished attempt.
    stats: Stats,
}

impl Job {
    pub(crate) fn new(work: Vec<Work>, wits: Vec<Option<WitEnvelope>>, lanes: Vec<Lane>) -> Job {
        let board = Board {
            next: vec![0; lanes.len()],
            held: vec![false; lanes.len()],
            done: lanes
                .iter()
                .map(|l| l.items.iter().map(|_| None).collect())
                .collect(),
            stopped: false,
            stats: Stats::default(),
        };
        Job {
            work,
            wits,
            lanes,
            board: Mutex::new(board),
            freed: Condvar::new(),
        }
    }

    /// Per lane and item, how each delivery settled (`None` for those shutdown
    /// left unacked), and the counts of every attempt. Called once, after
    /// [`Pool::run`].
    pub(crate) fn results(&self) -> (Vec<Vec<Option<FinalAttempt>>>, Stats) {
        let mut b = lock(&self.board);
        (std::mem::take(&mut b.done), std::mem::take(&mut b.stats))
    }
}

/// Worker threads waiting for jobs.
pub(crate) struct Pool {
    cx: Context,
    slot: Arc<(Mutex<Slot>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
}

#[derive(Default)]
struct Slot {
    /// Bumped for every job, so each worker takes each job once.
    generation: u64,
    job: Option<Arc<Job>>,
    stop: bool,
}

impl Pool {
    /// Starts `helpers` worker threads (the dispatcher's own thread works too).
    pub(crate) fn start(cx: Context, helpers: usize) -> std::io::Result<Pool> {
        let slot: Arc<(Mutex<Slot>, Condvar)> = Arc::default();
        let mut threads = Vec::with_capacity(helpers);
        for i in 0..helpers {
            let (cx, slot) = (cx.clone(), slot.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("hookrt-worker-{}", i + 1))
                    .spawn(move || {
                        let mut seen = 0;
                        loop {
                            let job = {
                                let mut s = lock(&slot.0);
                                while s.generation == seen && !s.stop {
                                    s = slot.1.wait(s).unwrap_or_else(|e| e.into_inner());
                                }
                                if s.stop {
                                    return;
                                }
                                seen = s.generation;
                                s.job.clone()
                            };
                            if let Some(job) = job {
                                work(&cx, &job);
                            }
                        }
                    })?,
            );
        }
        Ok(Pool { cx, slot, threads })
    }

    /// Runs `job` on every worker and this thread; returns once no delivery
    /// of it is running (all settled, or shutdown interrupted them).
    pub(crate) fn run(&self, job: &Arc<Job>) {
        {
            let mut s = lock(&self.slot.0);
            s.generation += 1;
            s.job = Some(job.clone());
        }
        self.slot.1.notify_all();
        work(&self.cx, job);
        lock(&self.slot.0).job = None;
        let mut b = lock(&job.board);
        while b.held.iter().any(|&h| h) {
            b = job.freed.wait(b).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        lock(&self.slot.0).stop = true;
        self.slot.1.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Takes items from free lanes until none is left (or shutdown).
fn work(cx: &Context, job: &Job) {
    let rt = &cx.rt;
    loop {
        // Take the longest free lane's next items, or wait for one to free up.
        let (lane, from, to) = {
            let mut b = lock(&job.board);
            loop {
                if b.stopped || rt.sandbox().is_cancelled() {
                    return;
                }
                let free = (0..job.lanes.len())
                    .filter(|&l| !b.held[l] && b.next[l] < job.lanes[l].items.len())
                    .max_by_key(|&l| job.lanes[l].items.len() - b.next[l]);
                if let Some(l) = free {
                    let from = b.next[l];
                    let to = (from + TAKE).min(job.lanes[l].items.len());
                    b.next[l] = to;
                    b.held[l] = true;
                    break (l, from, to);
                }
                if !b.held.iter().any(|&h| h) {
                    return; // nothing held, nothing free: all done
                }
                b = job.freed.wait(b).unwrap_or_else(|e| e.into_inner());
            }
        };
        let hook = &rt.hooks()[job.lanes[lane].hook];
        let mut stats = Stats::default();
        let mut results = Vec::with_capacity(to - from);
        for &(event, delivery) in &job.lanes[lane].items[from..to] {
            let w = &job.work[event];
            let pd = &w.deliveries[delivery];
            let wit = job.wits[event]
                .as_ref()
                .expect("lanes hold deliverable events only");
            let s = settle(
                rt,
                hook,
                &w.envelope,
                wit,
                pd,
                &mut |d, attempt| {
                    count(&mut stats, d, attempt);
                    (lock(&cx.observer))(Observation::Delivery(d));
                },
                &mut |attempt| {
                    if let Some(j) = lock(&cx.journal).as_mut()
                        && let Err(e) = j.start_attempt(w.seq, pd.position, attempt)
                    {
                        tracing::error!("journal: cannot record retry: {e}");
                    }
                },
            );
            let interrupted = s.is_none();
            results.push(s);
            if interrupted {
                break;
            }
        }
        let mut b = lock(&job.board);
        b.stopped |= results.last().is_some_and(Option::is_none);
        for (i, s) in results.into_iter().enumerate() {
            b.done[lane][from + i] = s;
        }
        b.held[lane] = false;
        b.stats.merge(stats);
        drop(b);
        job.freed.notify_all();
    }
}
