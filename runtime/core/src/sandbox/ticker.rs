//! The epoch ticker: the thread that advances the engines' epochs every
//! [`EPOCH_TICK`], which turns wall-clock deadlines into interrupts, but
//! only while a delivery may run. Each delivery widens the window to its
//! deadline and two ticks more ([`TickWindow::cover`]); past the window the
//! thread sleeps until the next delivery begins. An idle runtime (a resident
//! service between events) then wakes no thread 1,000 times a second.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use wasmtime::Engine;

/// How often the epoch advances. A deadline is noticed within one tick of
/// passing, so this bounds how far past its budget a hook can run. 1 ms costs
/// one wake-up per millisecond on one thread while a delivery may run.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Ticks kept past a delivery's deadline: the tick that interrupts it.
const MARGIN: Duration = Duration::from_millis(2);

/// Until when the ticker must tick: the latest deadline a delivery armed
/// (plus [`MARGIN`]), shared by the ticker and every store.
pub(crate) struct TickWindow {
    /// What `until_ms` counts from.
    base: Instant,
    /// The window's end, in milliseconds since `base`.
    until_ms: AtomicU64,
    /// Set by the ticker before it looks at the window a last time and
    /// sleeps: a delivery that widens the window then wakes it.
    sleeping: AtomicBool,
    /// The ticker's thread, once it runs.
    thread: OnceLock<Thread>,
    /// Ticks made so far.
    ticks: AtomicU64,
}

impl TickWindow {
    fn new() -> TickWindow {
        TickWindow {
            base: Instant::now(),
            until_ms: AtomicU64::new(0),
            sleeping: AtomicBool::new(false),
            thread: OnceLock::new(),
            ticks: AtomicU64::new(0),
        }
    }

    /// Milliseconds from `base` to `at`, rounded up.
    fn ms(&self, at: Instant) -> u64 {
        let d = at.saturating_duration_since(self.base);
        u64::try_from(d.as_micros().div_ceil(1000)).unwrap_or(u64::MAX)
    }

    /// Keeps the ticker ticking until `deadline` (and the margin): called
    /// as a delivery is armed, before any of its code runs.
    pub(crate) fn cover(&self, deadline: Instant) {
        let until = self.ms(deadline).saturating_add(self.ms_of(MARGIN));
        self.until_ms.fetch_max(until, Ordering::SeqCst);
        // Paired with the ticker's store of `sleeping` and its load of
        // `until_ms` (all SeqCst): either it sees the new window, or this
        // sees it going to sleep and wakes it (an extra wake only ticks).
        if self.sleeping.load(Ordering::SeqCst)
            && let Some(t) = self.thread.get()
        {
            t.unpark();
        }
    }

    fn ms_of(&self, d: Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the window is open at `now`.
    fn open(&self, now: Instant) -> bool {
        self.ms(now) < self.until_ms.load(Ordering::SeqCst)
    }
}

/// Advances the engines' epochs while the window is open, until dropped.
pub(crate) struct Ticker {
    window: Arc<TickWindow>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts the thread ticking `engines`.
    pub(crate) fn start(engines: Vec<Engine>) -> std::io::Result<Ticker> {
        let stop = Arc::new(AtomicBool::new(false));
        let window = Arc::new(TickWindow::new());
        let (flag, w) = (stop.clone(), window.clone());
        let thread = std::thread::Builder::new()
            .name("hookrt-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    if w.open(Instant::now()) {
                        // Parked, not asleep: dropping the ticker wakes it at
                        // once instead of waiting out the tick. An early wake
                        // only ticks early: deadlines read the clock.
                        std::thread::park_timeout(EPOCH_TICK);
                        for engine in &engines {
                            engine.increment_epoch();
                        }
                        w.ticks.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    w.sleeping.store(true, Ordering::SeqCst);
                    if !w.open(Instant::now()) && !flag.load(Ordering::SeqCst) {
                        std::thread::park();
                    }
                    w.sleeping.store(false, Ordering::SeqCst);
                }
            })?;
        let _ = window.thread.set(thread.thread().clone());
        Ok(Ticker {
            window,
            stop,
            thread: Some(thread),
        })
    }

    /// The window every store of this sandbox widens.
    pub(crate) fn window(&self) -> Arc<TickWindow> {
        self.window.clone()
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_opens_to_a_deadline_and_closes_after_it() {
        let w = TickWindow::new();
        let now = Instant::now();
        assert!(!w.open(now), "closed before any delivery");
        w.cover(now + Duration::from_millis(50));
        assert!(
            w.open(now + Duration::from_millis(51)),
            "the margin past the deadline"
        );
        assert!(!w.open(now + Duration::from_millis(60)));
        // An earlier deadline never narrows it.
        w.cover(now + Duration::from_millis(5));
        assert!(w.open(now + Duration::from_millis(40)));
    }

    /// Waits (up to 5 s) until the ticker sleeps; its ticks then.
    fn asleep(window: &TickWindow) -> u64 {
        let until = Instant::now() + Duration::from_secs(5);
        while !window.sleeping.load(Ordering::SeqCst) {
            assert!(Instant::now() < until, "the ticker never went to sleep");
            std::thread::sleep(Duration::from_millis(1));
        }
        window.ticks.load(Ordering::SeqCst)
    }

    #[test]
    fn a_sleeping_ticker_wakes_for_a_delivery_and_ticks_until_its_deadline() {
        let engine = Engine::new(wasmtime::Config::new().epoch_interruption(true)).unwrap();
        let ticker = Ticker::start(vec![engine]).unwrap();
        let window = ticker.window();
        let ticks = || window.ticks.load(Ordering::SeqCst);
        // Nothing armed: it sleeps, and no tick is made.
        let idle = asleep(&window);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(ticks(), idle, "no tick while idle");
        // A delivery arms 30 ms: the epoch moves while it may run...
        window.cover(Instant::now() + Duration::from_millis(30));
        let until = Instant::now() + Duration::from_secs(5);
        while ticks() == idle {
            assert!(Instant::now() < until, "no tick for an armed delivery");
            std::thread::sleep(Duration::from_millis(1));
        }
        // ...and stops past its deadline.
        let after = asleep(&window);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(ticks(), after, "asleep again");
    }
}
