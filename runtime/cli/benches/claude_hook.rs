//! `hookrt claude-hook` as Claude Code runs it: one process per event, three
//! hooks (audit, policy, metrics) loaded from the cache, one `PreToolUse`
//! decided; beside it, in the same run, the same event through the resident
//! service (`hookrt hook --service` and the thin client `hookrt-hook`, the
//! service warm, its journal keeping the trail) and `true`, the floor of any
//! process (docs/performance.md, "The resident service").
//! Run: `scripts/bench claude_hook`.

use std::io::Write;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};

mod support;
use support::{build, built_three_hooks, repo};

fn claude_hook(c: &mut Criterion) {
    let (agent, cache) = built_three_hooks();
    let bin = env!("CARGO_BIN_EXE_hookrt");
    let input = std::fs::read(repo().join("tests/fixtures/claude/PreToolUse.json")).unwrap();
    let once = || {
        let mut child = Command::new(bin)
            .args([
                "claude-hook",
                "--no-service",
                agent.path().to_str().unwrap(),
            ])
            .env("HOOKRT_CACHE_DIR", &cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        assert!(child.wait().unwrap().success());
    };
    // A start once the cache has settled checks and stamps its files
    // (hooks/cache/stamp.rs) and records the hooks' starts: what every later
    // process finds.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    once();
    c.bench_function("claude_hook/3_cached_hooks_one_pretooluse", |b| {
        b.iter(once)
    });
    // The service's places, private to this run.
    let home = tempfile::tempdir().unwrap();
    let run = home.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let dir = agent.path().to_str().unwrap();
    let through = |program: &str, args: &[&str]| {
        let mut child = Command::new(program)
            .args(args)
            .env("HOOKRT_CACHE_DIR", &cache)
            .env("XDG_RUNTIME_DIR", &run)
            .env("HOOKRT_STATE_DIR", home.path().join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // `true` leaves without reading it.
        let _ = child.stdin.take().unwrap().write_all(&input);
        assert!(child.wait().unwrap().success());
    };
    let service = ["hook", "--agent", "claude-code", "--service", dir];
    let thin = env!("CARGO_BIN_EXE_hookrt-hook");
    // The first event starts the service.
    through(bin, &service);
    c.bench_function("claude_hook/service/hookrt_hook_service", |b| {
        b.iter(|| through(bin, &service))
    });
    c.bench_function("claude_hook/service/hookrt-hook", |b| {
        b.iter(|| through(thin, &["--agent", "claude-code", dir]))
    });
    c.bench_function("claude_hook/service/true", |b| {
        b.iter(|| through("true", &[]))
    });
    through(bin, &["service", "stop", dir]);
    // The example agent's eight hooks (one TypeScript, one Python), built
    // into the same cache: its process per event beside the thin client.
    let example = repo().join("example-hooks/agent");
    build(&example, &cache);
    let example = example.to_str().unwrap();
    through(thin, &["--agent", "claude-code", example]);
    c.bench_function("claude_hook/example_agent/process_per_event", |b| {
        b.iter(|| {
            through(
                bin,
                &["hook", "--agent", "claude-code", "--no-service", example],
            )
        })
    });
    c.bench_function("claude_hook/example_agent/hookrt-hook", |b| {
        b.iter(|| through(thin, &["--agent", "claude-code", example]))
    });
    through(bin, &["service", "stop", example]);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = claude_hook
}
criterion_main!(benches);
