//! The service path (issue 16, goal 1): the same deliveries through
//! `HookService` (accepted and persisted, one worker) and through
//! `Runtime::dispatch` in a loop, same hooks, same instance mode.
//!
//! Criterion times each path; then paired rounds print the ratios, each
//! round timing the three paths one after the other on fresh events, so
//! the ratios compare runs made seconds apart (the machine is shared), with
//! the load average beside them, and the ratios of the CPU time the process
//! spent (all its threads: the service's writer, dispatcher and ack threads
//! besides the submitting one), which other work on the machine moves less.
//!
//! Run: `scripts/bench service_path` (see docs/performance.md).
//! `HOOKRT_BENCH_ROUNDS` changes the paired rounds (default 11);
//! `HOOKRT_BENCH_CASE` keeps the sets of hooks whose name holds it
//! (`all_reuse`). After the table, the persisted path's CPU per event by
//! thread (the submitting one is this bench's main thread).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use hookrt::{Envelope, HookService, Observation, Runtime, ServiceOptions};

mod support;
use support::{
    emit_all, load, load_average, median, observe_only, process_cpu, renamed, thread_cpu,
    three_observers_as, transcript,
};

/// Events per measured iteration.
const BATCH: usize = 1000;

/// Every event through `Runtime::dispatch`, one after another.
fn dispatch_all(rt: &Runtime, events: &[Envelope]) {
    for e in events {
        let d = rt.dispatch(e).unwrap();
        assert_eq!(d.deliveries.len(), 3);
    }
}

/// One way of delivering a batch of events.
type Path<'a> = &'a dyn Fn(Vec<Envelope>);

/// The three paths for one agent.
struct Paths {
    rt: Runtime,
    accepted: HookService,
    persisted: HookService,
}

fn paths(agent: &std::path::Path) -> Paths {
    let start = |journal: Option<&std::path::Path>| {
        HookService::start_blocking(
            load(agent),
            journal,
            Box::new(|_: Observation<'_>| {}),
            ServiceOptions::default(),
        )
        .unwrap()
    };
    Paths {
        rt: load(agent),
        accepted: start(None),
        persisted: start(Some(&agent.join("journal.db"))),
    }
}

fn main() {
    let base = observe_only(&transcript());
    let modes = [
        ("two_fresh_one_reuse", None),
        ("all_fresh", Some("fresh")),
        ("all_reuse", Some("reuse")),
    ];
    let only = std::env::var("HOOKRT_BENCH_CASE").unwrap_or_default();
    let agents: Vec<_> = modes
        .iter()
        .filter(|(name, _)| name.contains(&only))
        .map(|&(name, instance)| (name, three_observers_as(instance)))
        .collect();
    let all: Vec<(&str, Paths)> = agents
        .iter()
        .map(|(name, dir)| (*name, paths(dir.path())))
        .collect();
    let mut round = 0u64;

    let mut c = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(6))
        .configure_from_args();
    {
        let mut group = c.benchmark_group("service_path");
        group.throughput(Throughput::Elements(BATCH as u64));
        for (name, p) in &all {
            let paths: [(&str, Path<'_>); 3] = [
                ("dispatch_loop", &|batch| dispatch_all(&p.rt, &batch)),
                ("service_accepted", &|batch| emit_all(&p.accepted, batch)),
                ("service_persisted", &|batch| emit_all(&p.persisted, batch)),
            ];
            for (label, path) in paths {
                group.bench_function(format!("{name}/{label}"), |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            round += 1;
                            let batch = renamed(&base, BATCH, round);
                            let start = Instant::now();
                            path(batch);
                            total += start.elapsed();
                        }
                        total
                    })
                });
            }
        }
        group.finish();
    }
    c.final_summary();

    // Paired rounds: the ratios.
    let rounds: usize = std::env::var("HOOKRT_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(11);
    println!();
    println!(
        "service path / Runtime::dispatch loop, {BATCH} observe events x 3 hooks per round, {rounds} paired rounds, 1 worker; load average before: {}",
        load_average()
    );
    println!(
        "| hooks | dispatch loop µs/event | accepted µs/event | persisted µs/event | accepted / loop (min–max) | persisted / loop (min–max) | CPU accepted / loop | CPU persisted / loop |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut threads = Vec::new();
    for (name, p) in &all {
        let (mut lo, mut ac, mut pe, mut ra, mut rp) = (vec![], vec![], vec![], vec![], vec![]);
        // The persisted path's CPU nanoseconds by thread name, over every round.
        let mut by_thread: BTreeMap<String, u64> = BTreeMap::new();
        let (mut ca, mut cp) = (vec![], vec![]);
        for _ in 0..rounds {
            // Wall µs per event, the process's CPU seconds, and each
            // thread's CPU time (ns) before and after: all taken once the
            // batch is built, so none of them counts building it.
            let mut time = |f: &mut dyn FnMut(Vec<Envelope>)| {
                round += 1;
                let batch = renamed(&base, BATCH, round);
                let threads = thread_cpu();
                let cpu = process_cpu();
                let start = Instant::now();
                f(batch);
                let wall = start.elapsed().as_secs_f64() * 1e6 / BATCH as f64;
                (wall, process_cpu() - cpu, threads, thread_cpu())
            };
            let (l, lc, ..) = time(&mut |b| dispatch_all(&p.rt, &b));
            let (a, acpu, ..) = time(&mut |b| emit_all(&p.accepted, b));
            let (s, scpu, before, after) = time(&mut |b| emit_all(&p.persisted, b));
            for (tid, (thread, ns)) in after {
                let was = before.get(&tid).map_or(0, |(_, ns)| *ns);
                *by_thread.entry(thread).or_default() += ns.saturating_sub(was);
            }
            lo.push(l);
            ac.push(a);
            pe.push(s);
            ra.push(a / l);
            rp.push(s / l);
            ca.push(acpu / lc);
            cp.push(scpu / lc);
        }
        let range = |xs: &[f64]| {
            let (min, max) = xs
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            format!("{min:.2}–{max:.2}")
        };
        let (rar, rpr) = (range(&ra), range(&rp));
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | **{:.2}** ({rar}) | **{:.2}** ({rpr}) | {:.2} | {:.2} |",
            median(&mut lo),
            median(&mut ac),
            median(&mut pe),
            median(&mut ra),
            median(&mut rp),
            median(&mut ca),
            median(&mut cp),
        );
        let per_event = |ns: u64| ns as f64 / 1e3 / (rounds * BATCH) as f64;
        let total: u64 = by_thread.values().sum();
        let parts: Vec<String> = by_thread
            .iter()
            .filter(|(_, ns)| per_event(**ns) >= 0.05)
            .map(|(thread, ns)| format!("{thread} {:.1}", per_event(*ns)))
            .collect();
        threads.push(format!(
            "{name}: {:.1} in all; {}",
            per_event(total),
            parts.join(", ")
        ));
    }
    println!("load average after: {}", load_average());
    println!("persisted path, CPU µs per event by thread (every round):");
    for line in threads {
        println!("  {line}");
    }
    for (_, p) in all {
        p.accepted.shutdown_blocking(Duration::from_secs(30));
        p.persisted.shutdown_blocking(Duration::from_secs(30));
    }
}
