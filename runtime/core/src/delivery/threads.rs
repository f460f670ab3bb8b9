//! Threads: the one pool of delivery threads a runtime keeps, the caller's
//! thread working beside `threads - 1` kept **helper** threads.
//!
//! Two ways use it:
//! - a tool approval's hooks side by side ([`Threads::run`]): every task
//!   taken once, costliest first (by the hook's past deliveries), by
//!   whichever thread is free; the merge in `decision.rs` reads their
//!   answers in plan order once all are in, so the order they ran in does
//!   not matter;
//! - the service's lanes ([`Threads::run_everywhere`]): every thread runs
//!   the same work loop, taking lanes until none is left.
//!
//! A helper that finished spins for [`SPIN`] before it sleeps, and the
//! caller spins as long for the helpers' last tasks: a sleeping thread
//! wakes tens of microseconds after it is signalled, and a decision would
//! pay that twice (offer, then the last answer). Back-to-back runs find
//! their helpers awake; a helper spins at most [`SPIN`] after a run. With
//! more threads than the machine has cores, nobody spins: a spinning thread
//! would take the core a working one needs (docs/performance.md has the
//! figures).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a thread waiting for the other side spins before it sleeps.
pub(crate) const SPIN: Duration = Duration::from_micros(200);

/// How long each of `threads` working threads spins when it waits:
/// [`SPIN`], or nothing when they outnumber the cores.
fn spin_for(threads: usize) -> Duration {
    if threads <= crate::sandbox::engine::cores() {
        SPIN
    } else {
        Duration::ZERO
    }
}

/// Spins for at most `spin` until `done()`; whether it came true.
fn spin_until(spin: Duration, done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + spin;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::hint::spin_loop();
    }
}

/// The delivery threads: the caller's thread and `threads - 1` kept ones.
/// One thread (the default) runs everything on the caller's thread.
pub struct Threads {
    /// The threads besides the caller's (none with one thread).
    helpers: Option<Helpers>,
    threads: usize,
}

impl Default for Threads {
    fn default() -> Self {
        Threads {
            helpers: None,
            threads: 1,
        }
    }
}

impl std::fmt::Debug for Threads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Threads")
            .field("threads", &self.threads)
            .finish()
    }
}

impl Threads {
    /// `threads` threads in all (cut to 1..=[`crate::sandbox::engine::MAX_THREADS`]),
    /// the caller's included; starts `threads - 1` threads.
    pub(crate) fn new(threads: usize) -> std::io::Result<Threads> {
        let threads = threads.clamp(1, crate::sandbox::engine::MAX_THREADS);
        let helpers = if threads > 1 {
            Some(Helpers::start(threads - 1)?)
        } else {
            None
        };
        Ok(Threads { helpers, threads })
    }

    /// Threads in all, the caller's included.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `work` on this thread and on every helper at once; returns once
    /// none runs it. `work` is a loop that takes what is left until nothing
    /// is (the lanes' loop), so it is correct on any number of threads:
    /// while another caller has the helpers, it runs here alone.
    pub(crate) fn run_everywhere(&self, work: &(dyn Fn() + Sync)) {
        let Some((helpers, _turn)) = self.helpers.as_ref().and_then(Helpers::take_turn) else {
            return work();
        };
        let offer = helpers.offer(work);
        work();
        offer.finish();
    }

    /// `task(0)` .. `task(tasks - 1)` on the workers, each task once, any
    /// worker taking the next one left, in the order of `cost` from the
    /// highest (ties, in task order): a costly task taken last would keep
    /// the others waiting while one worker runs it alone. The results in
    /// task order.
    ///
    /// One decision at a time has the helpers: another that arrives
    /// meanwhile (from another thread) runs its tasks on its own thread,
    /// while the cores are busy with the first anyway.
    pub(crate) fn run<T: Send>(
        &self,
        tasks: usize,
        cost: impl Fn(usize) -> u64,
        task: impl Fn(usize) -> T + Sync,
    ) -> Vec<T> {
        let turn = self
            .helpers
            .as_ref()
            .filter(|_| tasks > 1)
            .and_then(Helpers::take_turn);
        let Some((helpers, _turn)) = turn else {
            return (0..tasks).map(task).collect();
        };
        let order = costliest_first(tasks, cost);
        let next = AtomicUsize::new(0);
        let done: Vec<Mutex<Option<T>>> = (0..tasks).map(|_| Mutex::new(None)).collect();
        let work = || {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(n) else {
                    return;
                };
                let result = task(i);
                *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            }
        };
        {
            let offer = helpers.offer(&work);
            work();
            // Dropping the offer withdraws it and waits for the helpers that
            // took it: on unwinding too, so none runs `work` after it is gone.
            offer.finish();
        }
        done.into_iter()
            .map(|slot| {
                slot.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every task ran: the offer waits for the helpers that took it")
            })
            .collect()
    }
}

/// The kept threads, and what they share with the caller.
struct Helpers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// Held by the run that has the helpers.
    turn: Mutex<()>,
}

/// Work offered to the helpers: the caller's `work`, its lifetime erased.
/// It is only called between [`Helpers::offer`] and the end of the
/// [`Offer`], which waits for every helper that took it.
#[derive(Clone, Copy)]
struct Offered(*const (dyn Fn() + Sync));

// SAFETY: the pointee is `Sync` (callable from any thread), and the offer
// protocol keeps it alive while any helper may call it.
unsafe impl Send for Offered {}

struct Shared {
    state: Mutex<State>,
    /// Bumped when a job is offered or the helpers are stopped; helpers
    /// spin on it before they sleep on `offered`.
    generation: AtomicU64,
    /// Helpers inside the current job; the caller spins on it before it
    /// sleeps on `idle`.
    running: AtomicUsize,
    offered: Condvar,
    idle: Condvar,
    /// [`SPIN`], or nothing when the threads outnumber the cores.
    spin: Duration,
}

struct State {
    job: Option<Offered>,
    stop: bool,
    /// A helper's task panicked: raised again on the caller's thread.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Helpers {
    /// The helpers for one run, unless another run has them.
    fn take_turn(&self) -> Option<(&Helpers, MutexGuard<'_, ()>)> {
        match self.turn.try_lock() {
            Ok(turn) => Some((self, turn)),
            // A task that panicked left it poisoned; the helpers are sound.
            Err(std::sync::TryLockError::Poisoned(e)) => Some((self, e.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    fn start(n: usize) -> std::io::Result<Helpers> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                job: None,
                stop: false,
                panic: None,
            }),
            generation: AtomicU64::new(0),
            running: AtomicUsize::new(0),
            offered: Condvar::new(),
            idle: Condvar::new(),
            spin: spin_for(n + 1),
        });
        let mut helpers = Helpers {
            shared: shared.clone(),
            threads: Vec::with_capacity(n),
            turn: Mutex::new(()),
        };
        for i in 0..n {
            let shared = shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("hookrt-thread-{}", i + 1))
                .spawn(move || helper(&shared))?;
            helpers.threads.push(thread);
        }
        Ok(helpers)
    }

    /// Offers `work` to every helper until the returned [`Offer`] ends.
    fn offer<'a>(&'a self, work: &'a (dyn Fn() + Sync + 'a)) -> Offer<'a> {
        let work: *const (dyn Fn() + Sync + 'a) = work;
        // SAFETY: only the lifetime is erased; `Offer` (which borrows
        // `work` for 'a) withdraws the job and waits for every helper that
        // took it before 'a can end, unwinding included.
        let job = Offered(unsafe {
            std::mem::transmute::<*const (dyn Fn() + Sync + 'a), *const (dyn Fn() + Sync)>(work)
        });
        {
            // Both under the lock: a helper that looked and found nothing
            // new is asleep on `offered` before this can notify it.
            let mut state = self.shared.lock();
            state.job = Some(job);
            self.shared.generation.fetch_add(1, Ordering::Release);
        }
        self.shared.offered.notify_all();
        Offer {
            shared: &self.shared,
        }
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.stop = true;
            self.shared.generation.fetch_add(1, Ordering::Release);
        }
        self.shared.offered.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// A job on offer; ending it (or dropping it) withdraws the job and waits
/// until no helper runs it.
struct Offer<'a> {
    /// Borrowed for as long as the job's `work`: the offer cannot outlive it.
    shared: &'a Shared,
}

impl Offer<'_> {
    /// Ends the offer, then raises a helper's panic on this thread.
    fn finish(self) {
        let panic = self.withdraw();
        std::mem::forget(self);
        if let Some(p) = panic {
            resume_unwind(p);
        }
    }

    /// Withdraws the job and waits until no helper runs it; a helper's
    /// panic, if any.
    fn withdraw(&self) -> Option<Box<dyn std::any::Any + Send>> {
        self.shared.lock().job = None;
        spin_until(self.shared.spin, || {
            self.shared.running.load(Ordering::Acquire) == 0
        });
        let mut state = self.shared.lock();
        while self.shared.running.load(Ordering::Acquire) != 0 {
            state = self
                .shared
                .idle
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        state.panic.take()
    }
}

impl Drop for Offer<'_> {
    fn drop(&mut self) {
        // Unwinding from the caller's own task: the panic in flight wins.
        let _ = self.withdraw();
    }
}

/// A helper thread: waits for a job (spinning up to [`SPIN`], then sleeping),
/// runs it, and waits again, until the helpers are stopped.
fn helper(shared: &Shared) {
    let mut seen = 0;
    loop {
        spin_until(shared.spin, || {
            shared.generation.load(Ordering::Acquire) != seen
        });
        let job = {
            let mut state = shared.lock();
            while shared.generation.load(Ordering::Acquire) == seen && !state.stop {
                state = shared
                    .offered
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
            if state.stop {
                return;
            }
            seen = shared.generation.load(Ordering::Acquire);
            // Taken under the lock: the offer cannot be withdrawn (and its
            // caller cannot return) between the look and the count.
            let job = state.job;
            if job.is_some() {
                shared.running.fetch_add(1, Ordering::AcqRel);
            }
            job
        };
        let Some(job) = job else { continue };
        // SAFETY: counted in `running` while the job was on offer: its
        // `Offer` waits for this helper before the job's borrow ends.
        let result = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.0)() }));
        let mut state = shared.lock();
        if let Err(p) = result {
            state.panic.get_or_insert(p);
        }
        if shared.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            shared.idle.notify_all();
        }
    }
}

/// Task indexes `0..tasks` by `cost`, highest first; ties keep task order.
/// An unknown cost (0: a hook not yet delivered to) counts as the highest.
fn costliest_first(tasks: usize, cost: impl Fn(usize) -> u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tasks).collect();
    order.sort_by_key(|&t| match cost(t) {
        0 => std::cmp::Reverse(u64::MAX),
        c => std::cmp::Reverse(c),
    });
    order
}

/// The deliveries `plan` (one hook index each, in plan order) as tasks for
/// [`Threads::run`]: one per hook, holding that hook's deliveries in
/// plan order (a hook never runs two deliveries at once, and its warm
/// instance sees them in order).
pub(crate) fn tasks_by_hook(plan: &[usize]) -> Vec<Vec<usize>> {
    let mut tasks: Vec<(usize, Vec<usize>)> = Vec::new();
    for (position, &hook) in plan.iter().enumerate() {
        match tasks.iter_mut().find(|(h, _)| *h == hook) {
            Some((_, positions)) => positions.push(position),
            None => tasks.push((hook, vec![position])),
        }
    }
    tasks.into_iter().map(|(_, positions)| positions).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_start_costliest_first_unknown_first_ties_in_task_order() {
        let costs = [300, 0, 900, 300, 100];
        assert_eq!(costliest_first(5, |t| costs[t]), [1, 2, 0, 3, 4]);
    }

    #[test]
    fn two_workers_run_every_task_once_and_answer_in_task_order() {
        let workers = Threads::new(2).unwrap();
        let ran = std::sync::Mutex::new(Vec::new());
        let out = workers.run(
            4,
            |t| [1, 5, 2, 9][t],
            |t| {
                ran.lock().unwrap().push(t);
                t * 10
            },
        );
        assert_eq!(out, [0, 10, 20, 30]);
        let mut ran = ran.into_inner().unwrap();
        ran.sort();
        assert_eq!(ran, [0, 1, 2, 3]);
    }

    #[test]
    fn a_panicking_task_is_raised_on_the_caller_and_the_workers_go_on() {
        let workers = Threads::new(3).unwrap();
        for round in 0..50 {
            let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| {
                workers.run(
                    6,
                    |_| 1,
                    |t| {
                        if t == round % 6 {
                            panic!("task {t}");
                        }
                        t
                    },
                )
            }));
            assert!(panicked.is_err(), "round {round}");
            assert_eq!(workers.run(6, |_| 1, |t| t * 2), [0, 2, 4, 6, 8, 10]);
        }
    }

    #[test]
    fn decisions_from_several_threads_at_once_each_run_every_task_once() {
        let workers = Threads::new(2).unwrap();
        std::thread::scope(|s| {
            for caller in 0..4 {
                let workers = &workers;
                s.spawn(move || {
                    for round in 0..500 {
                        let ran: Vec<AtomicUsize> = (0..5).map(|_| AtomicUsize::new(0)).collect();
                        let out = workers.run(
                            5,
                            |t| t as u64,
                            |t| {
                                ran[t].fetch_add(1, Ordering::Relaxed);
                                (caller, round, t)
                            },
                        );
                        let expected: Vec<_> = (0..5).map(|t| (caller, round, t)).collect();
                        assert_eq!(out, expected);
                        assert!(ran.iter().all(|r| r.load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
    }
}
