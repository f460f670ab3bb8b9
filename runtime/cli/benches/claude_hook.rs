//! `hookrt claude-hook` as Claude Code runs it: one process per event, three
//! hooks (audit, policy, metrics) loaded from the cache, one `PreToolUse`
//! decided. Goal: at most 15 ms a process (docs/performance.md).
//! Run: `scripts/bench claude_hook`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, name) = (e.path(), e.file_name());
        if name == "target" {
            continue;
        }
        if p.is_dir() {
            copy_dir(&p, &to.join(name));
        } else {
            std::fs::copy(&p, to.join(name)).unwrap();
        }
    }
}

/// An agent folder with the example's audit, policy and metrics hooks.
fn three_hooks(dir: &Path) {
    let hooks = repo().join("example-hooks/agent/hooks");
    std::fs::create_dir_all(dir.join("hooks/observability")).unwrap();
    std::fs::copy(hooks.join("audit.rs"), dir.join("hooks/audit.rs")).unwrap();
    std::fs::copy(
        hooks.join("observability/metrics.rs"),
        dir.join("hooks/observability/metrics.rs"),
    )
    .unwrap();
    copy_dir(&hooks.join("policy"), &dir.join("hooks/policy"));
    std::fs::write(
        dir.join("hookrt.toml"),
        "[hooks.\"observability/metrics\"]\ngrants = [\"log\", \"metrics\"]\n",
    )
    .unwrap();
}

fn claude_hook(c: &mut Criterion) {
    let agent = tempfile::tempdir().unwrap();
    three_hooks(agent.path());
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hookrt-cache");
    let bin = env!("CARGO_BIN_EXE_hookrt");
    // Build and cache the hooks once, outside the measurement.
    let built = Command::new(bin)
        .args(["build", agent.path().to_str().unwrap()])
        .env("HOOKRT_CACHE_DIR", &cache)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
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
