//! Lanes: observe deliveries run side by side across hooks.
//!
//! A run of observe events is split into one lane per hook, holding that
//! hook's deliveries in event order. Workers (the dispatcher's thread and
//! `workers - 1` scoped threads) each take a few deliveries from the head of
//! the longest lane that no other worker holds, run them, and give the lane
//! back. So a hook never runs two deliveries at once and sees its events in
//! order, while different hooks run at the same time, and a slow hook holds
//! up only its own lane. Decision and edit events never come here: their
//! answers depend on the hooks before them (see [`crate::dispatcher`]).

use std::sync::{Condvar, Mutex};

use crate::bindings::WitEnvelope;
use crate::delivery::Delivery;
use crate::dispatcher::{Settled, settle};
use crate::envelope::Envelope;
use crate::journal::PendingDelivery;
use crate::runtime::Runtime;

/// Deliveries a worker takes from a lane at a time: enough to keep the
/// lock out of the way, few enough to share a short run between workers.
const TAKE: usize = 8;

/// One delivery in a lane.
#[derive(Clone, Copy)]
pub(crate) struct Item<'a> {
    /// The event's index in the run.
    pub(crate) event: usize,
    /// The event's journal seq.
    pub(crate) seq: i64,
    pub(crate) envelope: &'a Envelope,
    /// The record every hook of the event is lent.
    pub(crate) wit: &'a WitEnvelope,
    pub(crate) pd: &'a PendingDelivery,
}

/// One hook's deliveries, in event order.
pub(crate) struct Lane<'a> {
    /// The hook's index in the runtime.
    pub(crate) hook: usize,
    pub(crate) items: Vec<Item<'a>>,
}

/// Which lanes are held and how far each got.
struct Board {
    /// Per lane: index of the next item to take.
    next: Vec<usize>,
    /// Per lane: a worker is running its items.
    held: Vec<bool>,
    /// Per lane and item: how it settled (`None`: not run, or interrupted).
    done: Vec<Vec<Option<Settled>>>,
    /// Shutdown interrupted a delivery: take nothing more.
    stopped: bool,
}

/// Runs every lane with up to `workers` threads; returns, per lane and item,
/// how each delivery settled (`None` for those shutdown left unacked).
pub(crate) fn run(
    rt: &Runtime,
    lanes: &[Lane<'_>],
    workers: usize,
    finished: &(dyn Fn(&Delivery, u32) + Sync),
    retrying: &(dyn Fn(i64, i64, u32) + Sync),
) -> Vec<Vec<Option<Settled>>> {
    let board = Mutex::new(Board {
        next: vec![0; lanes.len()],
        held: vec![false; lanes.len()],
        done: lanes
            .iter()
            .map(|l| l.items.iter().map(|_| None).collect())
            .collect(),
        stopped: false,
    });
    let freed = Condvar::new();
    let work = || worker(rt, lanes, &board, &freed, finished, retrying);
    // More threads than lanes would only wait.
    let threads = workers.min(lanes.len()).max(1);
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
    board.into_inner().unwrap_or_else(|e| e.into_inner()).done
}

fn worker(
    rt: &Runtime,
    lanes: &[Lane<'_>],
    board: &Mutex<Board>,
    freed: &Condvar,
    finished: &(dyn Fn(&Delivery, u32) + Sync),
    retrying: &(dyn Fn(i64, i64, u32) + Sync),
) {
    let lock = || board.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        // Take the longest free lane's next items, or wait for one to free up.
        let (lane, from, to) = {
            let mut b = lock();
            loop {
                if b.stopped || rt.sandbox().is_cancelled() {
                    return;
                }
                let free = (0..lanes.len())
                    .filter(|&l| !b.held[l] && b.next[l] < lanes[l].items.len())
                    .max_by_key(|&l| lanes[l].items.len() - b.next[l]);
                if let Some(l) = free {
                    let from = b.next[l];
                    let to = (from + TAKE).min(lanes[l].items.len());
                    b.next[l] = to;
                    b.held[l] = true;
                    break (l, from, to);
                }
                if !b.held.iter().any(|&h| h) {
                    return; // nothing held, nothing free: all done
                }
                b = freed.wait(b).unwrap_or_else(|e| e.into_inner());
            }
        };
        let hook = &rt.hooks()[lanes[lane].hook];
        let mut results = Vec::with_capacity(to - from);
        for item in &lanes[lane].items[from..to] {
            let s = settle(
                rt,
                hook,
                item.envelope,
                item.wit,
                item.pd,
                &mut |d, attempt| finished(d, attempt),
                &mut |attempt| retrying(item.seq, item.pd.position, attempt),
            );
            let interrupted = s.is_none();
            results.push(s);
            if interrupted {
                break;
            }
        }
        let mut b = lock();
        let interrupted = results.last().is_some_and(Option::is_none);
        for (i, s) in results.into_iter().enumerate() {
            b.done[lane][from + i] = s;
        }
        b.held[lane] = false;
        b.stopped |= interrupted;
        drop(b);
        freed.notify_all();
    }
}
