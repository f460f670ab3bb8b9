//! Cores (issue 16, goals 4 and 6): events/s through `HookService` with 2
//! workers against 1, ten paired runs, every ratio printed with the load
//! average. Observe events (the example transcript's) through the three
//! observe hooks, every hook `fresh`, then every hook `reuse`; and the
//! transcript's mix (observe, decision and edit events) through the
//! throughput bench's hooks (two fresh, one reuse).
//!
//! Beside each wall-clock ratio it prints a bound that a shared machine can
//! measure: one worker's delivering CPU time over the busiest delivering
//! thread's with two workers (per-thread CPU from `/proc`), the speed-up two
//! workers would reach on otherwise idle cores if the threads never waited
//! for each other; and a second bound for machines with few cores: with two
//! workers every thread (the submitting one and the writer too) shares the
//! cores, while with one worker they run beside it. It also prints the CPU
//! time per event of the delivering threads and of the others.
//!
//! Not a criterion bench: the goal counts runs, so it prints each run's ratio.
//! Run: `scripts/bench cores` (see docs/performance.md). `HOOKRT_BENCH_RUNS`
//! (default 10) and `HOOKRT_BENCH_EVENTS` (default 3000) change the size;
//! `HOOKRT_BENCH_CASE` runs only the cases whose name holds it (`reuse`).

use std::time::{Duration, Instant};

use hookrt::{Envelope, HookService, Observation, ServiceOptions};

mod support;
use support::{
    load, load_average, median, observe_only, renamed, thread_cpu, three_observers_as, transcript,
};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether a thread of that name delivers (`hookrt-dispatch`,
/// `hookrt-thread-*`).
fn delivers(name: &str) -> bool {
    name.starts_with("hookrt-dispatch") || name.starts_with("hookrt-thread")
}

/// One run: wall seconds to submit every event, wait for every receipt and
/// flush; the delivering threads' CPU seconds, all together and the busiest;
/// the CPU seconds of every other thread (this one submitting, the writer,
/// the decision workers).
struct Run {
    wall: f64,
    cpu: f64,
    busiest: f64,
    others: f64,
}

fn run(service: &HookService, events: Vec<Envelope>) -> Run {
    let before = thread_cpu();
    let start = Instant::now();
    let pending: Vec<_> = events.into_iter().map(|e| service.submit(e)).collect();
    for p in pending {
        p.wait().unwrap();
    }
    service.flush_blocking();
    let wall = start.elapsed().as_secs_f64();
    let used: Vec<(bool, f64)> = thread_cpu()
        .into_iter()
        .map(|(tid, (name, ns))| {
            let was = before.get(&tid).map_or(0, |(_, ns)| *ns);
            (delivers(&name), (ns - was) as f64 / 1e9)
        })
        .collect();
    let delivering = used.iter().filter(|(d, _)| *d).map(|(_, s)| *s);
    Run {
        wall,
        cpu: delivering.clone().sum(),
        busiest: delivering.fold(0.0, f64::max),
        others: used.iter().filter(|(d, _)| !*d).map(|(_, s)| s).sum(),
    }
}

fn main() {
    let runs = env_or("HOOKRT_BENCH_RUNS", 10);
    let n = env_or("HOOKRT_BENCH_EVENTS", 3000);
    let mix = transcript();
    let observe = observe_only(&mix);
    let cases = [
        ("observe, all fresh", Some("fresh"), &observe, 1.8),
        ("observe, all reuse", Some("reuse"), &observe, 1.8),
        ("transcript mix", None, &mix, 1.3),
    ];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("2 workers / 1 worker, {n} events a run, {runs} paired runs, accepted; {cores} cores");
    let mut round = 0u64;
    let only = std::env::var("HOOKRT_BENCH_CASE").unwrap_or_default();
    for (name, instance, base, goal) in cases {
        if !name.contains(&only) {
            continue;
        }
        let agent = three_observers_as(instance);
        let start = |workers| {
            HookService::start_blocking(
                load(agent.path()),
                None,
                Box::new(|_: Observation<'_>| {}),
                ServiceOptions {
                    threads: workers,
                    ..ServiceOptions::default()
                },
            )
            .unwrap()
        };
        let (one, two) = (start(1), start(2));
        // Warm up both (instances, caches, the pool's threads).
        for s in [&one, &two] {
            round += 1;
            run(s, renamed(base, n / 4, round));
        }
        let load_before = load_average();
        let (mut ratios, mut bounds, mut rate1) = (Vec::new(), Vec::new(), Vec::new());
        let mut shared = Vec::new();
        // µs of CPU per event: delivering and other threads, 1 and 2 workers.
        let mut per_event = [[0.0f64; 2]; 2];
        for _ in 0..runs {
            round += 1;
            let r1 = run(&one, renamed(base, n, round));
            round += 1;
            let r2 = run(&two, renamed(base, n, round));
            ratios.push(r1.wall / r2.wall);
            // On free cores two workers take at least as long as their
            // busiest thread's CPU time: one worker's delivering CPU over
            // that is the most two can gain (an upper bound: waits between
            // the threads are not counted).
            bounds.push(r1.cpu / r2.busiest);
            // All threads share the machine's cores: with two workers the
            // wall time is at least every thread's CPU time over the cores,
            // while one worker's wall time is about its delivering CPU time
            // (the submitting thread and the writer run beside it).
            shared.push(cores as f64 * r1.cpu / (r2.cpu + r2.others));
            rate1.push(n as f64 / r1.wall);
            for (i, r) in [&r1, &r2].into_iter().enumerate() {
                per_event[i][0] += r.cpu * 1e6 / (n * runs) as f64;
                per_event[i][1] += r.others * 1e6 / (n * runs) as f64;
            }
        }
        let met = ratios.iter().filter(|&&r| r >= goal).count();
        let list = |xs: &[f64]| {
            xs.iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "{name}: wall 2/1 = [{}]; median {:.2}; {met} of {runs} runs ≥ {goal}; 1 worker median {:.0} events/s; load average {load_before} → {}",
            list(&ratios),
            median(&mut ratios.clone()),
            median(&mut rate1),
            load_average()
        );
        println!(
            "{name}: CPU bound 2/1 (1 worker's delivering CPU / 2 workers' busiest thread) = [{}]; median {:.2}",
            list(&bounds),
            median(&mut bounds.clone()),
        );
        println!(
            "{name}: cores bound 2/1 ({cores} cores x 1 worker's delivering CPU / 2 workers' CPU of every thread) = [{}]; median {:.2}",
            list(&shared),
            median(&mut shared.clone()),
        );
        println!(
            "{name}: CPU per event, delivering threads + the others (submitting, writer, decision workers): 1 worker {:.1} + {:.1} µs, 2 workers {:.1} + {:.1} µs",
            per_event[0][0], per_event[0][1], per_event[1][0], per_event[1][1],
        );
        one.shutdown_blocking(Duration::from_secs(30));
        two.shutdown_blocking(Duration::from_secs(30));
    }
}
