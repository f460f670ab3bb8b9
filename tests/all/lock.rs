//! Pinning: with `hookrt.lock` present, a hook whose component, world or
//! grants changed, a new hook, or a locked hook gone is refused at load.

use std::fs;
use std::path::{Path, PathBuf};

use hookrt::hooks::{LOCK_FILE, Lock, LockStatus};
use hookrt::{ProblemKind, Runtime};

use crate::common::{TempAgent, load, opts};

/// The component the shared cache holds for `example-hooks/<rel>`.
fn component_of(rel: &str) -> PathBuf {
    let file = Path::new(rel)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let agent = TempAgent::new().hook(rel, &file);
    load(agent.path()).hooks()[0].component.clone()
}

fn refused(agent: &Path) -> Vec<(ProblemKind, PathBuf, String)> {
    match Runtime::load_blocking(agent, &opts(), &mut |_| {}) {
        Ok(_) => panic!("a drifted folder must not load"),
        Err(p) => {
            p.0.into_iter()
                .map(|p| (p.kind, p.path, p.message))
                .collect()
        }
    }
}

#[test]
fn a_hook_whose_component_drifted_from_the_lock_is_refused_naming_both_digests() {
    let witness = component_of("hostile/hooks/witness.rs");
    let agent = TempAgent::new();
    let wasm = agent.path().join("hooks/guard.wasm");
    fs::copy(&witness, &wasm).unwrap();
    let rt = load(agent.path());
    let locked_sha = rt.hooks()[0].component_sha256.clone();
    let lock = Lock::of(rt.hooks());
    lock.write(agent.path()).unwrap();
    assert_eq!(Lock::read(agent.path()).unwrap(), Some(lock.clone()));
    assert_eq!(
        lock.status(&load(agent.path()).hooks()[0]).0,
        LockStatus::Locked
    );

    fs::copy(component_of("testing/hooks/deny_all.rs"), &wasm).unwrap();
    let swapped = hookrt::BuildOptions {
        enforce_lock: false,
        ..opts()
    };
    let found_sha = Runtime::load_blocking(agent.path(), &swapped, &mut |_| {})
        .unwrap()
        .hooks()[0]
        .component_sha256
        .clone();
    assert_eq!(
        refused(agent.path()),
        [(
            ProblemKind::Lock,
            wasm.clone(),
            format!(
                "hook `guard` drifted from {LOCK_FILE}: component sha256 expected {locked_sha}, found {found_sha}"
            )
        )]
    );
}

#[test]
fn widened_grants_new_hooks_and_removed_hooks_drift_from_the_lock() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .hook("testing/hooks/deny_all.rs", "deny_all.rs");
    Lock::of(load(agent.path()).hooks())
        .write(agent.path())
        .unwrap();
    fs::write(
        agent.path().join("hookrt.toml"),
        "[hooks.witness]\ngrants = [\"log\", \"state\"]\n",
    )
    .unwrap();
    fs::remove_file(agent.path().join("hooks/deny_all.rs")).unwrap();
    fs::copy(
        crate::common::example("testing/hooks/allow_all.rs"),
        agent.path().join("hooks/allow_all.rs"),
    )
    .unwrap();
    let witness = load_unlocked(agent.path());
    let before: Vec<String> = Lock::read(agent.path()).unwrap().unwrap().hooks["witness"]
        .grants
        .clone();
    assert_eq!(
        refused(agent.path()),
        [
            (
                ProblemKind::Lock,
                agent.path().join(LOCK_FILE),
                "locked hook `deny_all` is gone".to_owned()
            ),
            (
                ProblemKind::Lock,
                agent.path().join("hooks/allow_all.rs"),
                format!("hook `allow_all` is not in {LOCK_FILE}")
            ),
            (
                ProblemKind::Lock,
                agent.path().join("hooks/witness.rs"),
                format!(
                    "hook `witness` drifted from {LOCK_FILE}: grants expected [{}], found [{}]",
                    before.join(", "),
                    witness.join(", ")
                )
            ),
        ]
    );
}

/// The grants `witness` has now, loaded without the lock.
fn load_unlocked(agent: &Path) -> Vec<String> {
    let o = hookrt::BuildOptions {
        enforce_lock: false,
        ..opts()
    };
    let rt = Runtime::load_blocking(agent, &o, &mut |_| {}).unwrap();
    let w = rt
        .hooks()
        .iter()
        .find(|h| h.slug.as_str() == "witness")
        .unwrap();
    w.settings.grants.iter().cloned().collect()
}
