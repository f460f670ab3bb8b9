//! What the benches share: the repository, the shared hook cache, loading an
//! agent, the example transcript, and the agents they measure.
// Each bench uses part of this module.
#![allow(dead_code, reason = "each bench uses part of this module")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use hookrt::BuildOptions;
use hookrt::{Envelope, HookService, Runtime};

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    // This crate is runtime/core.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// Where the test suite caches built hooks (shared, so hooks build once).
pub(crate) fn cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hookrt-cache")
}

/// Build options for `agent` with the hook cache at `cache_dir`.
pub(crate) fn opts_in(agent: &Path, cache_dir: &Path) -> BuildOptions {
    let mut o = BuildOptions::for_agent(agent);
    o.cache_dir = cache_dir.to_path_buf();
    o
}

/// Build options for `agent` with the shared hook cache.
pub(crate) fn opts(agent: &Path) -> BuildOptions {
    opts_in(agent, &cache())
}

/// Loads `agent` with its hook cache at `cache_dir`; panics with the problems.
pub(crate) fn load_in(agent: &Path, cache_dir: &Path) -> Runtime {
    Runtime::load_blocking(agent, &opts_in(agent, cache_dir), &mut |_| {})
        .unwrap_or_else(|p| panic!("{p}"))
}

/// Loads `agent` from the shared hook cache.
pub(crate) fn load(agent: &Path) -> Runtime {
    load_in(agent, &cache())
}

/// The example agent's transcript.
pub(crate) fn transcript() -> Vec<Envelope> {
    let text =
        std::fs::read_to_string(repo().join("example-hooks/agent/transcript.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Envelope::from_json(l).unwrap())
        .collect()
}

/// The observe events of `events` (what workers run side by side).
pub(crate) fn observe_only(events: &[Envelope]) -> Vec<Envelope> {
    events
        .iter()
        .filter(|e| hookrt::class_of(&e.kind) == hookrt::EventClass::Observe)
        .cloned()
        .collect()
}

/// `n` events cycling through `base`, with ids unique to `round` (so the
/// service never takes one for a duplicate).
pub(crate) fn renamed(base: &[Envelope], n: usize, round: u64) -> Vec<Envelope> {
    (0..n)
        .map(|i| {
            let mut e = base[i % base.len()].clone();
            e.id = format!("r{round}-{i}");
            e.coordinates.sequence = i as u64;
            e.idempotency_key.clear();
            e
        })
        .collect()
}

/// Every event through `service`: submit all, wait for every receipt, flush.
pub(crate) fn emit_all(service: &HookService, events: Vec<Envelope>) {
    let pending: Vec<_> = events.into_iter().map(|e| service.submit(e)).collect();
    for p in pending {
        p.wait().unwrap();
    }
    service.flush_blocking();
}

/// The source of the benchmark hook (parses the data, looks at one field).
pub(crate) fn bench_parse() -> String {
    std::fs::read_to_string(repo().join("example-hooks/testing/hooks/bench_parse.rs")).unwrap()
}

/// An agent with three observe hooks: `audit` and `witness` (`*`, a fresh
/// instance per delivery) and `observability/metrics` (`*`, reusing its instance).
pub(crate) fn three_observers() -> tempfile::TempDir {
    three_observers_as(None)
}

/// [`three_observers`] with every hook's instance policy `instance`
/// (`"fresh"` or `"reuse"`), or as there (`None`).
pub(crate) fn three_observers_as(instance: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("hooks");
    std::fs::create_dir_all(hooks.join("observability")).unwrap();
    let ex = repo().join("example-hooks");
    for (from, to) in [
        ("agent/hooks/audit.rs", "audit.rs"),
        (
            "agent/hooks/observability/metrics.rs",
            "observability/metrics.rs",
        ),
        ("hostile/hooks/witness.rs", "witness.rs"),
    ] {
        std::fs::copy(ex.join(from), hooks.join(to)).unwrap();
    }
    let config = match instance {
        None => "[hooks.\"observability/metrics\"]\ninstance = \"reuse\"\ngrants = [\"log\", \"metrics\"]\n".to_owned(),
        Some(mode) => format!(
            "[defaults]\ninstance = \"{mode}\"\n[hooks.\"observability/metrics\"]\ngrants = [\"log\", \"metrics\"]\n"
        ),
    };
    std::fs::write(dir.path().join("hookrt.toml"), config).unwrap();
    dir
}

/// The example agent's two policy hooks as an agent of their own, with its
/// settings: `policy` (tool approval) and `protected-paths` (file-edit
/// ownership, config and grants as the example agent gives them).
pub(crate) fn policy_hooks() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("hooks");
    let ex = repo().join("example-hooks/agent/hooks");
    std::fs::create_dir_all(hooks.join("policy/src")).unwrap();
    for file in ["Cargo.toml", "Cargo.lock", "src/lib.rs"] {
        std::fs::copy(
            ex.join("policy").join(file),
            hooks.join("policy").join(file),
        )
        .unwrap();
    }
    std::fs::copy(
        ex.join("protected-paths.rs"),
        hooks.join("protected-paths.rs"),
    )
    .unwrap();
    let config = "[hooks.policy]\non_failure = \"deny\"\n[hooks.protected-paths]\non_failure = \"deny\"\nconfig = { protected = [\"secrets/\", \"deploy/\", \".env\"] }\ngrants = [\"log\", \"state\"]\n";
    std::fs::write(dir.path().join("hookrt.toml"), config).unwrap();
    dir
}

/// The load average (1, 5, 15 minutes) from `/proc/loadavg`, as printed
/// beside every ratio: on a shared machine it says how much else ran.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// CPU time this process's threads have used so far, in seconds (the sum of
/// `/proc/self/task/*/schedstat`, in ns): what a run costs whatever else
/// shares the machine.
pub(crate) fn process_cpu() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 / 1e9
}

/// CPU time (ns, from `/proc/self/task/*/schedstat`) of each of this
/// process's threads, by thread id: its name and the time.
pub(crate) fn thread_cpu() -> HashMap<String, (String, u64)> {
    let mut cpu = HashMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return cpu;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let ns = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        cpu.insert(
            task.file_name().to_string_lossy().into_owned(),
            (name.trim().to_string(), ns),
        );
    }
    cpu
}

/// The median of `xs` (sorted in place).
pub(crate) fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}
