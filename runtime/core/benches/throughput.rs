//! Throughput of the service: events per second through 3 observe hooks,
//! `accepted` (memory only) against `persisted` (journal, group commit), on
//! 1 and 2 worker threads, for two streams: the example transcript's mix
//! (a third of it decision and edit events, which always run alone) and its
//! observe events only (what workers run side by side).
//!
//! Run: `scripts/bench throughput` (see docs/performance.md).

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

criterion_group!(benches, throughput);
criterion_main!(benches);
