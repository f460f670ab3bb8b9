//! Memory: resident set size (RSS) per loaded hook, and RSS while 1 M events
//! run through the service (it must stay flat).
//!
//! Not a criterion bench (criterion times things): it prints a table.
//! Run: `scripts/bench memory` (see docs/performance.md). Set
//! `HOOKRT_MEMORY_EVENTS` to run fewer (or more) events than 1,000,000.

use std::time::{Duration, Instant};

use hookrt::{HookService, Observation, ServiceOptions};

mod support;
use support::{bench_parse, load, three_observers, transcript};

/// Resident set size of this process, in bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm (Linux only)");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// An agent of `n` copies of bench_parse (single-file hooks: one build, one
/// component, and one artifact shared by all; each copy is still its own
/// loaded hook with its own instance).
fn copies(n: usize, instance: &str) -> tempfile::TempDir {
    let src = bench_parse();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    for i in 0..n {
        std::fs::write(dir.path().join(format!("hooks/h{i:03}.rs")), &src).unwrap();
    }
    std::fs::write(
        dir.path().join("hookrt.toml"),
        format!("[defaults]\ninstance = \"{instance}\"\n"),
    )
    .unwrap();
    dir
}

/// RSS each loaded hook adds, measured over 100 hooks (after one delivery
/// each, so `reuse` hooks hold their warm instance).
fn per_hook() {
    let event = transcript()
        .into_iter()
        .find(|e| e.kind == "action.result")
        .unwrap();
    println!("| hooks | instance | RSS before | RSS loaded + 1 event each | per hook |");
    println!("|---|---|---|---|---|");
    for instance in ["fresh", "reuse"] {
        let agent = copies(100, instance);
        // Warm up the cache and the allocator, then measure a second load.
        drop(load(agent.path()));
        let before = rss();
        let rt = load(agent.path());
        let report = rt.dispatch(&event).unwrap();
        assert_eq!(report.deliveries.len(), 100);
        let after = rss();
        println!(
            "| 100 | {instance} | {:.1} MiB | {:.1} MiB | {:.2} MiB |",
            mib(before),
            mib(after),
            mib(after.saturating_sub(before)) / 100.0
        );
        drop(rt);
    }
}

/// RSS every 10 % of `total` events through the service (3 observe hooks,
/// accepted mode, 2 workers).
fn flat(total: usize) {
    let dir = three_observers();
    let base = transcript();
    let service = HookService::start_blocking(
        load(dir.path()),
        None,
        Box::new(|_: Observation<'_>| {}),
        ServiceOptions {
            threads: 2,
            ..ServiceOptions::default()
        },
    )
    .unwrap();
    println!();
    println!("| events | RSS | elapsed |");
    println!("|---|---|---|");
    let start = Instant::now();
    println!("| 0 | {:.1} MiB | 0 s |", mib(rss()));
    let step = (total / 10).max(1);
    let mut pending = Vec::with_capacity(1024);
    for i in 0..total {
        let mut e = base[i % base.len()].clone();
        e.id = format!("m-{i}");
        e.coordinates.sequence = i as u64;
        e.idempotency_key.clear();
        pending.push(service.submit(e));
        if pending.len() == 1024 {
            for p in pending.drain(..) {
                p.wait().unwrap();
            }
        }
        if (i + 1) % step == 0 {
            for p in pending.drain(..) {
                p.wait().unwrap();
            }
            service.flush_blocking();
            println!(
                "| {} | {:.1} MiB | {:.0} s |",
                i + 1,
                mib(rss()),
                start.elapsed().as_secs_f64()
            );
        }
    }
    let stats = service.shutdown_blocking(Duration::from_secs(60));
    println!();
    println!(
        "{} events, {} deliveries, outcomes {:?}",
        stats.events, stats.deliveries, stats.outcomes
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let total = std::env::var("HOOKRT_MEMORY_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    per_hook();
    flat(total);
}
