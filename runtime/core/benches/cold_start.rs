//! Cold start: how long an agent folder takes from nothing to ready
//! (`Runtime::load`: engine, discovery, configuration, cache lookups,
//! deserializing artifacts, linking, asking each hook for its subscriptions).
//!
//! - `from_cache/N`: N single-file hooks whose components and compiled
//!   artifacts are cached (the first run builds them: a few minutes for 100);
//! - `drop/N`: dropping the runtime `from_cache/N` made ready (what a reload
//!   pays for the hooks it replaces, and a process at its end);
//! - `compile/N`: N component (`.wasm`) hooks with no compiled artifact
//!   (Cranelift runs; hooks compile in parallel);
//! - `from_source/1`: one single-file hook whose source changed (cargo builds
//!   it, with the shared target dir warm, then Cranelift compiles it).
//!
//! Every hook is `example-hooks/testing/hooks/bench_parse.rs` made distinct
//! (a string its code uses, or a custom section in its component), so each
//! has its own component digest and its own artifact.
//!
//! Run: `scripts/bench cold_start` (see docs/performance.md).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hookrt::hooks::build;
use hookrt::hooks::discover;

mod support;
use support::{bench_parse, load, load_in, opts};

/// The bench_parse component, built (or found) in the shared cache.
fn component() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    std::fs::write(dir.path().join("hooks/bench_parse.rs"), bench_parse()).unwrap();
    let discovered = discover(dir.path()).unwrap();
    let (built, problems) = build(&discovered.hooks, &opts(dir.path()), &mut |_| {});
    assert!(problems.is_empty(), "{problems:?}");
    std::fs::read(&built[0].component).unwrap()
}

/// `wasm` with a custom section appended: the same code, another digest.
fn distinct(wasm: &[u8], tag: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"hookrt-bench";
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name);
    body.extend_from_slice(tag.as_bytes());
    let mut out = wasm.to_vec();
    out.push(0); // custom section id
    leb(body.len(), &mut out);
    out.extend_from_slice(&body);
    out
}

/// bench_parse's source with `tag` in a string its code uses: another component.
fn tagged(src: &str, tag: &str) -> String {
    let changed = src.replace(
        "data.get(\"call_id\").is_some()",
        &format!("data.get(\"call_id\").is_some() || data.get(\"{tag}\").is_some()"),
    );
    assert_ne!(changed, src);
    changed
}

/// An agent folder of `n` distinct single-file hooks.
fn sources(n: usize) -> tempfile::TempDir {
    let src = bench_parse();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    for i in 0..n {
        std::fs::write(
            dir.path().join(format!("hooks/h{i:03}.rs")),
            tagged(&src, &format!("cold-start-{i}")),
        )
        .unwrap();
    }
    dir
}

/// An agent folder of `n` distinct component hooks.
fn agent(wasm: &[u8], n: usize, salt: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    for i in 0..n {
        std::fs::write(
            dir.path().join(format!("hooks/h{i:03}.wasm")),
            distinct(wasm, &format!("{salt}-{i}")),
        )
        .unwrap();
    }
    dir
}

fn cold_start(c: &mut Criterion) {
    let wasm = component();
    let mut g = c.benchmark_group("cold_start");
    g.sample_size(20).measurement_time(Duration::from_secs(8));

    for n in [1, 10, 100] {
        let a = sources(n);
        let rt = load(a.path()); // builds once, fills the caches
        assert_eq!(rt.hooks().len(), n);
        drop(rt);
        // A load once the files have settled checks and stamps them
        // (hooks/cache/stamp.rs): what every later start from this cache sees.
        std::thread::sleep(Duration::from_millis(2_100));
        drop(load(a.path()));
        g.bench_with_input(BenchmarkId::new("from_cache", n), &n, |b, _| {
            // Ready is the figure: the runtime is dropped outside the timing.
            b.iter_with_large_drop(|| load(a.path()))
        });
        // What a reload (the old hooks) and the end of a process pay.
        g.bench_with_input(BenchmarkId::new("drop", n), &n, |b, _| {
            b.iter_batched(|| load(a.path()), drop, criterion::BatchSize::PerIteration)
        });
    }

    // No artifacts: every hook goes through Cranelift. A fresh cache dir per
    // iteration (components are hooks' own files, so no cargo runs).
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for n in [1, 10] {
        let a = agent(&wasm, n, "compile");
        g.bench_with_input(BenchmarkId::new("compile", n), &n, |b, _| {
            b.iter_batched(
                || tempfile::tempdir().unwrap(),
                |empty| {
                    let rt = load_in(a.path(), empty.path());
                    assert!(rt.hooks().iter().all(|h| h.compiled));
                    (rt, empty)
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }

    // From source: a changed single-file hook, so cargo builds it (its
    // dependencies are already built in the cache's shared target dir).
    let src = bench_parse();
    let a = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(a.path().join("hooks")).unwrap();
    let mut round = 0u64;
    g.sample_size(10).measurement_time(Duration::from_secs(60));
    g.bench_function(BenchmarkId::new("from_source", 1), |b| {
        b.iter_batched(
            || {
                round += 1;
                let nonce = format!(
                    "{}-{round}",
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_nanos()
                );
                // The nonce is in a string the code uses, so the component's
                // bytes change too and Cranelift has to compile it again.
                let changed = tagged(&src, &nonce);
                std::fs::write(a.path().join("hooks/bench_parse.rs"), changed).unwrap();
            },
            |()| {
                let rt = load(a.path());
                assert!(rt.hooks()[0].cargo_built && rt.hooks()[0].compiled);
                rt
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, cold_start);
criterion_main!(benches);
