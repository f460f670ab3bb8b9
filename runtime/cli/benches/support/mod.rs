//! What the `hookrt-cli` benches share: the example's three hooks (audit,
//! policy, metrics) in an agent folder, built and cached before anything is
//! measured.

use std::path::{Path, PathBuf};

pub(crate) fn repo() -> PathBuf {
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
pub(crate) fn three_hooks(dir: &Path) {
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

/// A new agent folder with [`three_hooks`], built by `hookrt build` into the
/// benches' cache (outside the measurement); the folder and the cache.
pub(crate) fn built_three_hooks() -> (tempfile::TempDir, PathBuf) {
    let agent = tempfile::tempdir().unwrap();
    three_hooks(agent.path());
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hookrt-cache");
    build(agent.path(), &cache);
    (agent, cache)
}

/// `hookrt build DIR` into the build cache `cache`, which must succeed.
pub(crate) fn build(dir: &Path, cache: &Path) {
    let built = std::process::Command::new(env!("CARGO_BIN_EXE_hookrt"))
        .args(["build", dir.to_str().unwrap()])
        .env("HOOKRT_CACHE_DIR", cache)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
}
