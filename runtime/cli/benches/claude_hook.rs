//! `hookrt claude-hook` as Claude Code runs it: one process per event, three
//! hooks (audit, policy, metrics) loaded from the cache, one `PreToolUse`
//! decided. Goal: at most 15 ms a process (docs/performance.md).
//! Run: `scripts/bench claude_hook`.

use std::io::Write;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};

mod support;
use support::{built_three_hooks, repo};

fn claude_hook(c: &mut Criterion) {
    let (agent, cache) = built_three_hooks();
    let bin = env!("CARGO_BIN_EXE_hookrt");
    let input = std::fs::read(repo().join("tests/fixtures/claude/PreToolUse.json")).unwrap();
    let once = || {
        let mut child = Command::new(bin)
            .args(["claude-hook", agent.path().to_str().unwrap()])
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
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = claude_hook
}
criterion_main!(benches);
