//! Parallel decisions: the latency of one tool approval (`actions.requested`)
//! through 4 policy hooks, one after another (1 decision worker) and side by
//! side (2 workers), against the slowest of them alone: the goal (issue 16)
//! is 4 hooks with 2 workers ≤ 1.3 × the slowest alone.
//!
//! The hooks are `example-hooks/testing/hooks/busy_policy.rs` (one source,
//! its cost set by `config.rounds`), fresh instance per delivery (the
//! default). Three sets: `equal` (4 × the same cost: with 2 workers the best
//! possible is 2 × one hook) and `mixed` (one slow hook and three at a
//! third of its cost: 2 workers can hide the fast ones behind the slow one),
//! and `mixed_slow_last`, the same with the slow hook last in plan order
//! (workers start the costliest hook first, by its past deliveries, so it
//! is not left to run alone at the end).
//! After criterion, prints the medians' ratios from its own timing loop.
//!
//! Run: `scripts/bench decide` (see docs/performance.md).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use hookrt::{Envelope, Runtime};

mod support;
use support::{load, repo, transcript};

/// Rounds of the slowest hook: about 0.3 ms of guest work.
const SLOW: u64 = 300_000;

/// An agent of `busy_policy` copies, one per entry of `rounds`.
fn agent(rounds: &[u64]) -> tempfile::TempDir {
    let src =
        std::fs::read_to_string(repo().join("example-hooks/testing/hooks/busy_policy.rs")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    let mut toml = String::new();
    for (i, r) in rounds.iter().enumerate() {
        std::fs::write(dir.path().join(format!("hooks/p{i}.rs")), &src).unwrap();
        toml.push_str(&format!(
            "[hooks.p{i}]\non_failure = \"deny\"\nconfig = {{ rounds = {r} }}\n"
        ));
    }
    std::fs::write(dir.path().join("hookrt.toml"), toml).unwrap();
    dir
}

fn event() -> Envelope {
    transcript()
        .into_iter()
        .find(|e| e.kind == "actions.requested")
        .unwrap()
}

fn runtime(rounds: &[u64], workers: usize) -> (tempfile::TempDir, Runtime) {
    let dir = agent(rounds);
    let mut rt = load(dir.path());
    rt.set_threads(workers).unwrap();
    (dir, rt)
}

/// Median wall time of one decision over `n` runs (after a warm-up).
fn median(rt: &Runtime, e: &Envelope, n: usize) -> Duration {
    for _ in 0..20 {
        rt.dispatch(e).unwrap();
    }
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            let d = rt.dispatch(e).unwrap();
            let took = t.elapsed();
            assert!(
                d.deliveries
                    .iter()
                    .all(|d| d.outcome == hookrt::Outcome::Ok)
            );
            took
        })
        .collect();
    times.sort();
    times[n / 2]
}

fn decide(c: &mut Criterion) {
    let e = event();
    let sets: [(&str, Vec<u64>); 3] = [
        ("equal", vec![SLOW; 4]),
        ("mixed", vec![SLOW, SLOW / 3, SLOW / 3, SLOW / 3]),
        ("mixed_slow_last", vec![SLOW / 3, SLOW / 3, SLOW / 3, SLOW]),
    ];
    let mut g = c.benchmark_group("decide");
    let mut rows = Vec::new();
    for (name, rounds) in &sets {
        let (_a, alone) = runtime(&[SLOW], 1);
        let (_b, one) = runtime(rounds, 1);
        let (_c, two) = runtime(rounds, 2);
        g.bench_function(format!("{name}/slowest_alone"), |b| {
            b.iter(|| alone.dispatch(&e).unwrap())
        });
        g.bench_function(format!("{name}/4_hooks_1_worker"), |b| {
            b.iter(|| one.dispatch(&e).unwrap())
        });
        g.bench_function(format!("{name}/4_hooks_2_workers"), |b| {
            b.iter(|| two.dispatch(&e).unwrap())
        });
        // Side by side in one loop, so the ratios share the machine's load.
        let (mut t_alone, mut t_one, mut t_two) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..5 {
            t_alone.push(median(&alone, &e, 200));
            t_one.push(median(&one, &e, 200));
            t_two.push(median(&two, &e, 200));
        }
        let mid = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        rows.push((*name, mid(&mut t_alone), mid(&mut t_one), mid(&mut t_two)));
    }
    g.finish();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\n4 policy hooks, one actions.requested, fresh instances; {} cores, load average {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| set | slowest alone | 1 worker | 2 workers | 2 workers / slowest (goal ≤ 1.3) | 1 worker / 2 workers |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, alone, one, two) in rows {
        println!(
            "| {name} | {:.0} µs | {:.0} µs | {:.0} µs | {:.2} × | {:.2} × |",
            alone.as_secs_f64() * 1e6,
            one.as_secs_f64() * 1e6,
            two.as_secs_f64() * 1e6,
            two.as_secs_f64() / alone.as_secs_f64(),
            one.as_secs_f64() / two.as_secs_f64(),
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = decide
}
criterion_main!(benches);
