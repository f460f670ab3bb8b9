//! hookrt next to Extism, in one criterion run: the same handler (parse the
//! event's JSON data, look at one field) as a native Rust function, as a hookrt
//! hook (`example-hooks/testing/hooks/bench_parse.rs`, warm and fresh instance)
//! and as an Extism plugin (`runtime/peer-bench/plugin`, warm and fresh).
//!
//! Run: `scripts/bench peers` (see docs/performance.md). The bench builds the
//! plugin itself (cargo, wasm32-unknown-unknown, release) into
//! `target/peer-bench-plugin`, and loads hooks from the shared test cache
//! `target/tmp/hookrt-cache` (built by hookrt on a miss).

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use extism::{CompiledPlugin, Manifest, Plugin, PluginBuilder, Wasm};
use hookrt::BuildOptions;
use hookrt::{Envelope, Outcome, Runtime};

/// The repository root (this crate is `runtime/peer-bench`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

// --- hookrt: the helpers of runtime/benches/call.rs ---

fn opts(agent: &Path) -> BuildOptions {
    let mut o = BuildOptions::for_agent(agent);
    // Where the main test suite (and runtime/benches) cache built hooks.
    o.cache_dir = repo().join("target/tmp/hookrt-cache");
    o
}

/// An agent with one `bench_parse` copy subscribed to `*`.
fn agent(instance: &str) -> tempfile::TempDir {
    let src =
        std::fs::read_to_string(repo().join("example-hooks/testing/hooks/bench_parse.rs")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    std::fs::write(dir.path().join("hooks/w0.rs"), &src).unwrap();
    std::fs::write(
        dir.path().join("hookrt.toml"),
        format!("[defaults]\ninstance = \"{instance}\"\n"),
    )
    .unwrap();
    dir
}

fn load(dir: &Path) -> Runtime {
    Runtime::load_blocking(dir, &opts(dir), &mut |_| {}).unwrap_or_else(|p| panic!("{p}"))
}

fn event() -> Envelope {
    let text =
        std::fs::read_to_string(repo().join("example-hooks/agent/transcript.jsonl")).unwrap();
    text.lines()
        .filter_map(|l| Envelope::from_json(l).ok())
        .find(|e| e.kind == "action.result")
        .unwrap()
}

/// One dispatch that must end in exactly one delivery with outcome `ok`.
fn check_hookrt(rt: &Runtime, e: &Envelope) {
    let report = rt.dispatch(e).unwrap();
    assert_eq!(report.deliveries.len(), 1, "{report:?}");
    assert_eq!(report.deliveries[0].outcome, Outcome::Ok, "{report:?}");
}

// --- native ---

/// What the native handler does: parse the data, look at one field.
fn native(data: &str) -> bool {
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    std::hint::black_box(v.get("call_id").is_some())
}

// --- Extism ---

/// Builds `runtime/peer-bench/plugin` (release, wasm32-unknown-unknown) and
/// returns its bytes. Cargo makes this a no-op when nothing changed.
fn plugin_wasm() -> Vec<u8> {
    let manifest = repo().join("runtime/peer-bench/plugin/Cargo.toml");
    let target_dir = repo().join("target/peer-bench-plugin");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .status()
        .expect("cannot run cargo to build the Extism plugin");
    assert!(status.success(), "building {} failed", manifest.display());
    let wasm = target_dir.join("wasm32-unknown-unknown/release/hookrt_peer_bench_plugin.wasm");
    std::fs::read(&wasm).unwrap_or_else(|e| panic!("{}: {e}", wasm.display()))
}

/// The plugin needs no WASI (it imports only `extism:host/env`).
fn compiled(manifest: Manifest, fuel: Option<u64>) -> CompiledPlugin {
    let mut b = PluginBuilder::new(manifest).with_wasi(false);
    if let Some(fuel) = fuel {
        b = b.with_fuel_limit(fuel);
    }
    CompiledPlugin::new(b).unwrap()
}

/// One call that must answer "1" (`call_id` is there).
fn call(plugin: &mut Plugin, data: &str) {
    let out = plugin.call::<&str, &str>("handle", data).unwrap();
    assert_eq!(out, "1");
}

/// A new plugin (store, linker, instance) from the compiled module, and one call.
fn call_fresh(compiled: &CompiledPlugin, data: &str) {
    call(&mut Plugin::new_from_compiled(compiled).unwrap(), data);
}

fn peers(c: &mut Criterion) {
    let e = event();
    let data = e.data.to_string();
    let wasm = plugin_wasm();

    // hookrt's default limits (runtime/src/limits.rs), for the Extism runs with limits.
    let fuel = hookrt::sandbox::DEFAULT_FUEL;
    let timeout = hookrt::sandbox::DEFAULT_DEADLINE;
    let memory_pages = u32::try_from(hookrt::sandbox::DEFAULT_MEMORY_BYTES >> 16).unwrap();
    let plain = Manifest::new([Wasm::data(wasm.clone())]);
    let with_timeout = plain.clone().with_timeout(timeout);
    let limited = with_timeout.clone().with_memory_max(memory_pages);

    // Every path is checked once before anything is timed.
    assert!(native(&data));
    let warm_agent = agent("reuse");
    let warm = load(warm_agent.path());
    check_hookrt(&warm, &e);
    let fresh_agent = agent("fresh");
    let fresh = load(fresh_agent.path());
    check_hookrt(&fresh, &e);
    // Fresh instances cost much less from the pool than mapped on demand.
    eprintln!("hookrt allocator: {:?}", fresh.allocator());

    let plain_compiled = compiled(plain, None);
    let fuel_compiled = compiled(Manifest::new([Wasm::data(wasm)]), Some(fuel));
    let timeout_compiled = compiled(with_timeout, None);
    let limited_compiled = compiled(limited, Some(fuel));
    let mut extism_warm = Plugin::new_from_compiled(&plain_compiled).unwrap();
    assert!(!extism_warm.has_wasi());
    let mut extism_fuel = Plugin::new_from_compiled(&fuel_compiled).unwrap();
    let mut extism_timeout = Plugin::new_from_compiled(&timeout_compiled).unwrap();
    let mut extism_limited = Plugin::new_from_compiled(&limited_compiled).unwrap();
    for p in [
        &mut extism_warm,
        &mut extism_fuel,
        &mut extism_timeout,
        &mut extism_limited,
    ] {
        call(p, &data);
        call(p, &data);
    }
    assert!(extism_fuel.fuel_consumed().is_some_and(|f| f > 0));
    call_fresh(&plain_compiled, &data);
    call_fresh(&limited_compiled, &data);

    let mut g = c.benchmark_group("peers");
    g.bench_function("native_rust", |b| b.iter(|| native(&data)));
    g.bench_function("hookrt_warm", |b| b.iter(|| warm.dispatch(&e).unwrap()));
    g.bench_function("hookrt_fresh", |b| b.iter(|| fresh.dispatch(&e).unwrap()));
    g.bench_function("extism_warm", |b| b.iter(|| call(&mut extism_warm, &data)));
    g.bench_function("extism_fresh", |b| {
        b.iter(|| call_fresh(&plain_compiled, &data))
    });
    g.bench_function("extism_warm_fuel", |b| {
        b.iter(|| call(&mut extism_fuel, &data))
    });
    g.bench_function("extism_warm_timeout", |b| {
        b.iter(|| call(&mut extism_timeout, &data))
    });
    // Fuel, timeout and memory cap at hookrt's defaults: what hookrt always enforces.
    g.bench_function("extism_warm_limits", |b| {
        b.iter(|| call(&mut extism_limited, &data))
    });
    g.bench_function("extism_fresh_limits", |b| {
        b.iter(|| call_fresh(&limited_compiled, &data))
    });
    g.finish();

    // Nothing failed while timed (hookrt records failures instead of returning them).
    check_hookrt(&warm, &e);
    check_hookrt(&fresh, &e);
}

criterion_group!(benches, peers);
criterion_main!(benches);
