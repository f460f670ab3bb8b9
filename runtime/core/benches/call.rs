//! One delivery, side by side: the same JSON-parsing handler as a native Rust
//! function (the limit), as the raw component called directly through
//! Wasmtime (no runtime around it: with Wasmtime's defaults, then with
//! hookrt's engine settings — fuel and epoch interruption compiled in, and
//! the pooling allocator for fresh instances), through hookrt (warm and fresh
//! instance, and one event through 10 hooks), the same handler written in
//! TypeScript (`bench_parse.ts`, built by componentize-js) and in Python
//! (`bench_parse.py`, built by componentize-py), warm and fresh, and as a
//! subprocess hook (the
//! way Claude Code, Codex and Gemini CLI run hooks: a program spawned per
//! event reading the envelope on stdin). Extism is in `runtime/peer-bench`.
//!
//! Run: `scripts/bench call` (see docs/performance.md).

use std::io::Write;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use hookrt::Envelope;
use hookrt::hooks::build;
use hookrt::hooks::discover;
use hookrt::sandbox::{Allocator, Metering, engine_config, engine_config_metered};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

mod support;
use support::{bench_parse, load, opts, transcript};

mod raw {
    wasmtime::component::bindgen!({ path: "../../wit/v0.3.0", world: "define-hook" });
}
use raw::hookrt::hook::{log, metrics, state, types};

/// An agent of `bench_parse` copies: `specific` subscribed to action.result, `wildcard` to `*`.
fn agent(specific: usize, wildcard: usize, instance: &str) -> tempfile::TempDir {
    agent_with(specific, wildcard, &format!("instance = \"{instance}\"\n"))
}

/// [`agent`] with `defaults` as its `[defaults]` table.
fn agent_with(specific: usize, wildcard: usize, defaults: &str) -> tempfile::TempDir {
    let src = bench_parse();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    for i in 0..specific {
        std::fs::write(
            dir.path().join(format!("hooks/s{i}.rs")),
            src.replace("\"*\" => any", "\"action.result\" => any"),
        )
        .unwrap();
    }
    for i in 0..wildcard {
        std::fs::write(dir.path().join(format!("hooks/w{i}.rs")), &src).unwrap();
    }
    std::fs::write(
        dir.path().join("hookrt.toml"),
        format!("[defaults]\n{defaults}"),
    )
    .unwrap();
    dir
}

fn event() -> Envelope {
    transcript()
        .into_iter()
        .find(|e| e.kind == "action.result")
        .unwrap()
}

/// What the native handler does: parse the data, look at one field.
fn native(data: &str) -> bool {
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    std::hint::black_box(v.get("call_id").is_some())
}

struct RawState {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for RawState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
impl types::Host for RawState {}
impl log::Host for RawState {
    fn log(&mut self, _: log::Level, _: String, _: Vec<log::Field>) {}
}
impl state::Host for RawState {
    fn get(&mut self, _: String) -> Option<Vec<u8>> {
        None
    }
    fn set(&mut self, _: String, _: Vec<u8>) -> Result<(), String> {
        Ok(())
    }
    fn delete(&mut self, _: String) {}
}
impl metrics::Host for RawState {
    fn counter(&mut self, _: String, _: u64, _: Vec<(String, String)>) {}
    fn gauge(&mut self, _: String, _: f64, _: Vec<(String, String)>) {}
}

/// The component at `path` compiled for `engine` and linked, nothing else around it.
fn raw_pre(engine: &Engine, path: &std::path::Path) -> raw::DefineHookPre<RawState> {
    let component = Component::from_file(engine, path).unwrap();
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    raw::DefineHook::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).unwrap();
    raw::DefineHookPre::new(linker.instantiate_pre(&component).unwrap()).unwrap()
}

fn raw_store(engine: &Engine) -> Store<RawState> {
    Store::new(
        engine,
        RawState {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
        },
    )
}

fn raw_envelope(e: &Envelope) -> types::Envelope {
    let c = &e.coordinates;
    types::Envelope {
        schema_version: 1,
        id: e.id.clone(),
        kind: e.kind.clone(),
        timestamp: e.timestamp.clone(),
        coordinates: types::Coordinates {
            agent: c.agent.clone(),
            session: c.session.clone(),
            turn: c.turn.clone(),
            step: c.step.clone(),
            sequence: c.sequence,
            subagent: c.subagent.clone(),
        },
        attempt: 1,
        idempotency_key: e.idempotency_key.clone(),
        durability: types::Durability::Accepted,
        data: e.data.to_string(),
    }
}

fn raw_context() -> types::Context {
    types::Context {
        handler: "*".into(),
        slug: "w0".into(),
        budget_ms: 1000,
        class: types::EventClass::Observe,
        agent: "coder".into(),
        session: "ses".into(),
        scope: types::Scope::Primary,
        transport: types::Transport {
            kind: "in-process".into(),
            detail: None,
        },
    }
}

/// One way to run a hook call, named as the report prints it.
type Variant<'a> = (&'static str, Box<dyn FnMut() + 'a>);

fn calls(c: &mut Criterion) {
    let e = event();
    let data = e.data.to_string();
    let mut g = c.benchmark_group("one_delivery");

    g.bench_function("native_rust", |b| b.iter(|| native(&data)));

    // The raw component: built by hookrt, then used with plain Wasmtime defaults.
    let one = agent(0, 1, "reuse");
    let discovered = discover(one.path()).unwrap();
    let (built, problems) = build(&discovered.hooks, &opts(one.path()), &mut |_| {});
    assert!(problems.is_empty(), "{problems:?}");
    let mut config = Config::new();
    config.wasm_component_model(true);
    let engine = Engine::new(&config).unwrap();
    let pre = raw_pre(&engine, &built[0].component);
    let (env, cx) = (raw_envelope(&e), raw_context());
    let mut store = raw_store(&engine);
    let hook = pre.instantiate(&mut store).unwrap();
    hook.call_configure(&mut store, "{}").unwrap().unwrap();
    let mut raw_warm = || hook.call_handle(&mut store, &env, &cx).unwrap().unwrap();
    g.bench_function("raw_wasmtime_warm", |b| b.iter(&mut raw_warm));
    // The same, with the instrumentation hookrt's engine compiles in (fuel
    // and epoch interruption), budgets set too large to ever fire: what the
    // limits themselves cost, apart from the runtime around the call.
    let limited = Engine::new(&engine_config(Allocator::OnDemand)).unwrap();
    let limited_pre = raw_pre(&limited, &built[0].component);
    let mut limited_store = raw_store(&limited);
    limited_store.set_fuel(u64::MAX).unwrap();
    limited_store.set_epoch_deadline(u64::MAX / 2);
    let limited_hook = limited_pre.instantiate(&mut limited_store).unwrap();
    limited_hook
        .call_configure(&mut limited_store, "{}")
        .unwrap()
        .unwrap();
    let mut raw_warm_limited = || {
        limited_store.set_fuel(u64::MAX).unwrap();
        limited_store.set_epoch_deadline(u64::MAX / 2);
        limited_hook
            .call_handle(&mut limited_store, &env, &cx)
            .unwrap()
            .unwrap()
    };
    g.bench_function("raw_wasmtime_warm_fuel_epoch", |b| {
        b.iter(&mut raw_warm_limited)
    });
    // Epoch interruption only (no fuel): what `metering = "epoch"` hooks run under.
    let epoch = Engine::new(&engine_config_metered(Allocator::OnDemand, Metering::Epoch)).unwrap();
    let epoch_pre = raw_pre(&epoch, &built[0].component);
    let mut epoch_store = raw_store(&epoch);
    epoch_store.set_epoch_deadline(u64::MAX / 2);
    let epoch_hook = epoch_pre.instantiate(&mut epoch_store).unwrap();
    epoch_hook
        .call_configure(&mut epoch_store, "{}")
        .unwrap()
        .unwrap();
    let mut raw_warm_epoch = || {
        epoch_store.set_epoch_deadline(u64::MAX / 2);
        epoch_hook
            .call_handle(&mut epoch_store, &env, &cx)
            .unwrap()
            .unwrap()
    };
    g.bench_function("raw_wasmtime_warm_epoch", |b| b.iter(&mut raw_warm_epoch));
    g.bench_function("raw_wasmtime_fresh", |b| {
        b.iter(|| {
            let mut store = raw_store(&engine);
            let hook = pre.instantiate(&mut store).unwrap();
            hook.call_configure(&mut store, "{}").unwrap().unwrap();
            hook.call_handle(&mut store, &env, &cx).unwrap().unwrap()
        })
    });
    let fresh_raw = |engine: &Engine, pre: &raw::DefineHookPre<RawState>| {
        let mut store = raw_store(engine);
        store.set_fuel(u64::MAX).unwrap();
        store.set_epoch_deadline(u64::MAX / 2);
        let hook = pre.instantiate(&mut store).unwrap();
        hook.call_configure(&mut store, "{}").unwrap().unwrap();
        hook.call_handle(&mut store, &env, &cx).unwrap().unwrap()
    };
    g.bench_function("raw_wasmtime_fresh_fuel_epoch", |b| {
        b.iter(|| fresh_raw(&limited, &limited_pre))
    });
    // And with hookrt's pooling allocator too: the same engine settings as
    // hookrt's fresh deliveries.
    let pooled = Engine::new(&engine_config(Allocator::Pooling)).unwrap();
    let pooled_pre = raw_pre(&pooled, &built[0].component);
    g.bench_function("raw_wasmtime_fresh_pooling_fuel_epoch", |b| {
        b.iter(|| fresh_raw(&pooled, &pooled_pre))
    });

    let warm = load(one.path());
    g.bench_function("hookrt_warm", |b| b.iter(|| warm.dispatch(&e).unwrap()));
    let epoch_agent = agent_with(0, 1, "instance = \"reuse\"\nmetering = \"epoch\"\n");
    let epoch_only = load(epoch_agent.path());
    assert_eq!(
        epoch_only.dispatch(&e).unwrap().deliveries[0].outcome,
        hookrt::Outcome::Ok
    );
    g.bench_function("hookrt_warm_epoch_only", |b| {
        b.iter(|| epoch_only.dispatch(&e).unwrap())
    });
    let fresh_agent = agent(0, 1, "fresh");
    let fresh = load(fresh_agent.path());
    g.bench_function("hookrt_fresh", |b| b.iter(|| fresh.dispatch(&e).unwrap()));
    // The warm goals' ratios, measured side by side: 100 rounds in which
    // every variant runs 4 batches of 100 calls in turn, so a load that comes
    // and goes on the machine falls on all of them alike. Per variant, the
    // median and the 10th percentile of its 400 batches (the latter is the
    // least disturbed by other work on a busy machine).
    let mut variants: Vec<Variant<'_>> = vec![
        ("raw Wasmtime, defaults", Box::new(|| drop(raw_warm()))),
        (
            "raw Wasmtime, epoch only",
            Box::new(|| drop(raw_warm_epoch())),
        ),
        (
            "raw Wasmtime, fuel + epoch",
            Box::new(|| drop(raw_warm_limited())),
        ),
        (
            "hookrt warm (fuel + epoch)",
            Box::new(|| drop(warm.dispatch(&e).unwrap())),
        ),
        (
            "hookrt warm, metering = epoch",
            Box::new(|| drop(epoch_only.dispatch(&e).unwrap())),
        ),
    ];
    let mut batches: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..100 {
        for (i, (_, f)) in variants.iter_mut().enumerate() {
            for _ in 0..4 {
                let t = std::time::Instant::now();
                for _ in 0..100 {
                    f();
                }
                batches[i].push(t.elapsed().as_secs_f64() * 1e6 / 100.0);
            }
        }
    }
    let at = |q: f64| -> Vec<f64> {
        batches
            .iter()
            .map(|b| {
                let mut b = b.clone();
                b.sort_by(f64::total_cmp);
                b[((b.len() - 1) as f64 * q) as usize]
            })
            .collect()
    };
    let (mid, p10) = (at(0.5), at(0.1));
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\nwarm call, side by side (100 interleaved rounds); load average {}",
        loadavg
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| what | median | p10 | × raw defaults (median; p10) | × raw, same engine settings (median; p10) |"
    );
    println!("|---|---|---|---|---|");
    let same = [0, 1, 2, 2, 1];
    for (i, (name, _)) in variants.iter().enumerate() {
        println!(
            "| {name} | {:.2} µs | {:.2} µs | {:.2} ×; {:.2} × | {:.2} ×; {:.2} × |",
            mid[i],
            p10[i],
            mid[i] / mid[0],
            p10[i] / p10[0],
            mid[i] / mid[same[i]],
            p10[i] / p10[same[i]],
        );
    }
    drop(variants);

    // The same handler in TypeScript (SpiderMonkey inside the component) and
    // in Python (CPython inside the component).
    let script_agent = |ext: &str, instance: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
        std::fs::copy(
            support::repo().join(format!("example-hooks/testing/hooks/bench_parse.{ext}")),
            dir.path().join(format!("hooks/bench_parse.{ext}")),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("hookrt.toml"),
            format!("[defaults]\ninstance = \"{instance}\"\n"),
        )
        .unwrap();
        dir
    };
    for ext in ["ts", "py"] {
        for (mode, instance) in [("warm", "reuse"), ("fresh", "fresh")] {
            let agent = script_agent(ext, instance);
            let rt = load(agent.path());
            g.bench_function(format!("hookrt_{ext}_{mode}"), |b| {
                b.iter(|| rt.dispatch(&e).unwrap())
            });
        }
    }
    let ten_agent = agent(5, 5, "reuse");
    let ten = load(ten_agent.path());
    assert_eq!(ten.dispatch(&e).unwrap().deliveries.len(), 10);
    g.bench_function("hookrt_warm_10_hooks", |b| {
        b.iter(|| ten.dispatch(&e).unwrap())
    });

    let line = serde_json::to_string(&e).unwrap();
    g.bench_function("subprocess_cat", |b| {
        b.iter(|| {
            let mut child = Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(line.as_bytes())
                .unwrap();
            child.wait().unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, calls);
criterion_main!(benches);
