//! Throughput of the service: events per second through 3 observe hooks,
//! `accepted` (memory only) against `persisted` (journal, group commit), on
//! 1 and 2 worker threads, for two streams: the example transcript's mix
//! (a third of it decision and edit events, which always run alone) and its
//! observe events only (what workers run side by side).
//!
//! `trail_cost`: the same persisted mix with the auditor's trail off, on,
//! and on with signed checkpoints, interleaved batch by batch (a table of
//! paired ratios, not criterion's figures).
//!
//! Run: `scripts/bench throughput` (see docs/performance.md); the trail's
//! cost alone: `scripts/bench throughput -- trail_cost`.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hookrt::{HookService, Observation, ServiceOptions};

mod support;
use support::{emit_all, load, observe_only, renamed, three_observers, transcript};

/// Events per measured iteration.
const BATCH: usize = 1000;

fn throughput(c: &mut Criterion) {
    let agent = three_observers();
    let mix = transcript();
    let observe = observe_only(&mix);
    let mut group = c.benchmark_group("throughput_3_hooks");
    group.throughput(Throughput::Elements(BATCH as u64));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(12));
    let mut round = 0;
    let runs = [("mix", &mix), ("observe", &observe)]
        .into_iter()
        .flat_map(|(stream, base)| {
            [
                ("accepted", 1),
                ("persisted", 1),
                ("accepted", 2),
                ("persisted", 2),
            ]
            .map(|(mode, workers)| (stream, base, mode, workers))
        });
    for (stream, base, mode, workers) in runs {
        let db = agent.path().join(format!("{stream}-{mode}-{workers}.db"));
        let journal = (mode == "persisted").then_some(db.as_path());
        let service = HookService::start_blocking(
            load(agent.path()),
            journal,
            Box::new(|_: Observation<'_>| {}),
            ServiceOptions {
                threads: workers,
                ..ServiceOptions::default()
            },
        )
        .unwrap();
        group.bench_function(format!("{stream}/{mode}/{workers}_worker"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    round += 1;
                    let batch = renamed(base, BATCH, round);
                    let start = Instant::now();
                    emit_all(&service, batch);
                    total += start.elapsed();
                }
                total
            })
        });
        service.shutdown_blocking(Duration::from_secs(30));
    }
    group.finish();
}

/// What the auditor's trail costs: persisted throughput of the mix on one
/// thread with the hash chain off, on (the default), and on with a signed
/// checkpoint every 1,000 entries, side by side in one run (issue 30's
/// goal: on and signed at least 90 % of off).
/// Rounds of the trail's paired measurement.
const TRAIL_ROUNDS: usize = 30;

/// The trail's cost as ratios taken side by side: three services on three
/// journals (trail off, on, on with signed checkpoints) take a batch each in
/// turn, round after round, so each round's ratios compare batches run a
/// moment apart (run one after the other for 12 s each, the three figures
/// drifted by more than the trail costs). Prints each variant's median
/// events/s and the median of the per-round ratios; criterion measures
/// nothing here (`c` only keeps the bench's filter).
fn trail_cost(c: &mut Criterion) {
    let _ = c;
    let agent = three_observers();
    let mix = transcript();
    let key = hookrt::journal::generate_key().unwrap().to_bytes();
    let variants = [
        (
            "off",
            hookrt::journal::TrailOptions {
                on: false,
                ..Default::default()
            },
        ),
        ("on", hookrt::journal::TrailOptions::default()),
        (
            "signed",
            hookrt::journal::TrailOptions {
                signing_key: Some(key),
                ..Default::default()
            },
        ),
    ];
    let services: Vec<HookService> = variants
        .iter()
        .map(|(name, trail)| {
            let db = agent.path().join(format!("trail-{name}.db"));
            HookService::start_blocking(
                load(agent.path()),
                Some(db.as_path()),
                Box::new(|_: Observation<'_>| {}),
                ServiceOptions {
                    trail: *trail,
                    ..ServiceOptions::default()
                },
            )
            .unwrap()
        })
        .collect();
    let mut round = 0;
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); services.len()];
    // Two warm-up rounds, not counted.
    for counted in (0..TRAIL_ROUNDS + 2).map(|r| r >= 2) {
        for (i, service) in services.iter().enumerate() {
            round += 1;
            let batch = renamed(&mix, BATCH, round);
            let start = Instant::now();
            emit_all(service, batch);
            if counted {
                rates[i].push(BATCH as f64 / start.elapsed().as_secs_f64());
            }
        }
    }
    for service in services {
        service.shutdown_blocking(Duration::from_secs(30));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\ntrail_cost: {TRAIL_ROUNDS} rounds of {BATCH} persisted events each (the mix, 3 observers), interleaved; load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("| trail | events/s (median) | × off (median of the rounds' ratios; min–max) |");
    println!("|---|---|---|");
    for (i, (name, _)) in variants.iter().enumerate() {
        let ratios: Vec<f64> = rates[i].iter().zip(&rates[0]).map(|(r, o)| r / o).collect();
        let (lo, hi) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
        println!(
            "| {name} | {:.0} | {:.3} ({lo:.2}–{hi:.2}) |",
            median(rates[i].clone()),
            median(ratios)
        );
    }
}

criterion_group!(benches, throughput, trail_cost);
criterion_main!(benches);
