//! Pinning: with `hookrt.lock` present, a hook whose files or settings
//! changed (refused before anything builds), whose component or world
//! changed, a new hook, or a locked hook gone is refused at load. A crate
//! hook builds from its `Cargo.lock` (`--locked`): one missing or stale is
//! refused naming `hookrt lock`, which writes it.

use std::fs;
use std::path::{Path, PathBuf};

use hookrt::hooks::{
    CargoLockChange, CargoLockWrite, LOCK_FILE, Lock, LockStatus, write_cargo_locks,
};
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
    lock.write(&agent.path().join(LOCK_FILE)).unwrap();
    assert_eq!(
        Lock::read(&agent.path().join(LOCK_FILE)).unwrap(),
        Some(lock.clone())
    );
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
                "hook `guard` drifted from {LOCK_FILE}: its files' sha256 expected {locked_sha}, found {found_sha}"
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
        .write(&agent.path().join(LOCK_FILE))
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
    let before: Vec<String> = Lock::read(&agent.path().join(LOCK_FILE))
        .unwrap()
        .unwrap()
        .hooks["witness"]
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
                    "hook `witness` drifted from {LOCK_FILE}: its settings in hookrt.toml changed: settings.grants {} -> {}",
                    serde_json::to_string(&before).unwrap(),
                    serde_json::to_string(&witness).unwrap()
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

/// Locks `agent` as it loads now.
fn lock(agent: &Path) {
    Lock::of(load(agent).hooks())
        .write(&agent.join(LOCK_FILE))
        .unwrap();
}

#[test]
fn a_locked_folder_whose_on_failure_fuel_config_or_redaction_changed_is_refused_naming_each() {
    let agent = TempAgent::new()
        .hook("hostile/hooks/witness.rs", "witness.rs")
        .config("[hooks.witness]\nfuel = 100_000_000\non_failure = \"deny\"\nconfig = { key = \"a\" }\n");
    lock(agent.path());
    for (toml, what) in [
        (
            "[hooks.witness]\nfuel = 200_000_000\non_failure = \"deny\"\nconfig = { key = \"a\" }\n",
            "settings.limits.fuel 100000000 -> 200000000",
        ),
        (
            "[hooks.witness]\nfuel = 100_000_000\non_failure = \"abstain\"\nconfig = { key = \"a\" }\n",
            "settings.on_failure \"deny\" -> \"abstain\"",
        ),
        (
            "[hooks.witness]\nfuel = 100_000_000\non_failure = \"deny\"\nconfig = { key = \"secret-b\" }\n",
            "settings.config.key changed",
        ),
        (
            "aggregate = [\"witness\"]\n[hooks.witness]\nfuel = 100_000_000\non_failure = \"deny\"\nconfig = { key = \"a\" }\n",
            "aggregate false -> true",
        ),
        (
            "[redaction.patterns]\nticket = \"TCK-[0-9]+\"\n[hooks.witness]\nfuel = 100_000_000\non_failure = \"deny\"\nconfig = { key = \"a\" }\n",
            "redaction_patterns",
        ),
    ] {
        fs::write(agent.path().join("hookrt.toml"), toml).unwrap();
        let problems = refused(agent.path());
        assert_eq!(problems.len(), 1, "{what}: {problems:?}");
        let (kind, path, message) = &problems[0];
        assert_eq!(*kind, ProblemKind::Lock, "{what}: {message}");
        assert_eq!(
            (kind, path),
            (&ProblemKind::Lock, &agent.path().join("hooks/witness.rs"))
        );
        assert!(message.contains(what), "{what}: {message}");
        assert!(
            !message.contains("secret-b"),
            "a config value is never shown: {message}"
        );
    }
}

#[test]
fn a_drifted_source_is_refused_before_anything_builds() {
    let agent = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    lock(agent.path());
    // Source that would not even compile: the refusal is the lock's, so
    // cargo never ran (a crate's build.rs would not have either).
    let source = agent.path().join("hooks/witness.rs");
    let mut text = fs::read_to_string(&source).unwrap();
    text.push_str("\nthis is not rust ((\n");
    fs::write(&source, text).unwrap();
    let mut built = false;
    let problems = match Runtime::load_blocking(agent.path(), &opts(), &mut |e| {
        built |= matches!(e, hookrt::hooks::BuildEvent::Planned { stale, .. } if stale > 0)
    }) {
        Ok(_) => panic!("a drifted folder must not load"),
        Err(p) => p.0,
    };
    assert!(!built, "nothing was planned or built");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::Lock);
    assert!(
        problems[0].message.contains("its files' sha256 expected"),
        "{}",
        problems[0].message
    );
}

#[test]
fn require_lock_refuses_an_unlocked_folder_and_a_lock_outside_the_folder_is_used() {
    let agent = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("agent.lock");
    let strict = hookrt::BuildOptions {
        lock: hookrt::hooks::LockPolicy {
            file: Some(file.clone()),
            required: true,
        },
        ..opts()
    };
    let err = match Runtime::load_blocking(agent.path(), &strict, &mut |_| {}) {
        Ok(_) => panic!("no lock, and one is required"),
        Err(p) => p.0,
    };
    assert_eq!((err[0].kind, &err[0].path), (ProblemKind::Lock, &file));
    assert!(
        err[0].message.contains("--require-lock"),
        "{}",
        err[0].message
    );
    Lock::of(load(agent.path()).hooks()).write(&file).unwrap();
    assert!(Runtime::load_blocking(agent.path(), &strict, &mut |_| {}).is_ok());
    // A lock planted in the folder does not replace the one given.
    fs::write(
        agent.path().join("hookrt.toml"),
        "[hooks.witness]\ngrants = [\"log\", \"state\"]\n",
    )
    .unwrap();
    lock(agent.path());
    let err = match Runtime::load_blocking(agent.path(), &strict, &mut |_| {}) {
        Ok(_) => panic!("drifted from the given lock"),
        Err(p) => p.0,
    };
    assert!(
        err[0]
            .message
            .contains(&format!("drifted from {}", file.display())),
        "{}",
        err[0].message
    );
}

#[test]
fn a_symlinked_lock_or_config_is_refused_without_quoting_its_target() {
    let agent = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("shadow");
    fs::write(&secret, "root:SECRET-HASH-TEXT:19000:0:99999:7:::\n").unwrap();
    for name in [LOCK_FILE, "hookrt.toml"] {
        let link = agent.path().join(name);
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let problems = refused(agent.path());
        let text = format!("{problems:?}");
        assert!(text.contains("symbolic link"), "{name}: {text}");
        assert!(!text.contains("SECRET-HASH-TEXT"), "{name}: {text}");
        fs::remove_file(&link).unwrap();
    }
    // A TOML error names its line and column, never the line's text.
    fs::write(
        agent.path().join("hookrt.toml"),
        "[hooks.witness]\nfuel = SECRET-VALUE-TEXT\n",
    )
    .unwrap();
    let text = format!("{:?}", refused(agent.path()));
    assert!(text.contains("line 2, column"), "{text}");
    assert!(!text.contains("SECRET-VALUE-TEXT"), "{text}");
}

#[test]
fn a_crate_hooks_hidden_file_is_pinned_and_a_path_out_of_its_crate_refused_before_any_build() {
    let agent = TempAgent::new().hook("agent/hooks/policy", "policy");
    lock(agent.path());
    // A hidden file (a `build = ".b.rs"` is code cargo runs) is an input.
    fs::write(
        agent.path().join("hooks/policy/.b.rs"),
        "fn main() { /* reads the host */ }",
    )
    .unwrap();
    let problems = refused(agent.path());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, ProblemKind::Lock);
    assert!(
        problems[0].2.contains("its files' sha256 expected"),
        "{}",
        problems[0].2
    );
    // A path dependency out of the crate: refused, naming the key, before
    // cargo could build code the lock never saw.
    fs::remove_file(agent.path().join("hooks/policy/.b.rs")).unwrap();
    let manifest = agent.path().join("hooks/policy/Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap().replace(
        "[dependencies]\n",
        "[dependencies]\nhelper = { path = \"../../../elsewhere\" }\n",
    );
    fs::write(&manifest, text).unwrap();
    let problems = refused(agent.path());
    assert!(
        problems.iter().any(|(_, _, m)| m.contains(
            "`dependencies.helper.path = \"../../../elsewhere\"` leads out of the hook's crate"
        )),
        "{problems:?}"
    );
}

/// Every problem of loading `agent`, whole (the fix too).
fn problems_of(agent: &Path) -> Vec<hookrt::Problem> {
    match Runtime::load_blocking(agent, &opts(), &mut |_| {}) {
        Ok(_) => panic!("{} must not load", agent.display()),
        Err(p) => p.0,
    }
}

#[test]
fn a_crate_hook_without_a_cargo_lock_is_refused_naming_the_command_that_writes_it() {
    let agent = TempAgent::new().hook("agent/hooks/policy", "policy");
    let cargo_lock = agent.path().join("hooks/policy/Cargo.lock");
    fs::remove_file(&cargo_lock).unwrap();
    let problems = problems_of(agent.path());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::Build);
    assert_eq!(problems[0].path, cargo_lock);
    assert!(
        problems[0]
            .message
            .contains("crate hook `policy` has no Cargo.lock"),
        "{}",
        problems[0].message
    );
    assert!(
        problems[0].fix.contains(&format!(
            "write it with `hookrt lock {}`",
            agent.path().display()
        )),
        "{}",
        problems[0].fix
    );
    // What the fix names writes it, as the build resolves it; the folder
    // then loads, and writing again changes nothing.
    let written = write_cargo_locks(agent.path(), &opts()).unwrap();
    assert_eq!(
        written,
        [CargoLockWrite {
            path: cargo_lock.clone(),
            change: CargoLockChange::Written
        }]
    );
    assert!(
        fs::read_to_string(&cargo_lock)
            .unwrap()
            .contains("name = \"hookrt-sdk\"")
    );
    assert_eq!(load(agent.path()).hooks()[0].slug.as_str(), "policy");
    assert_eq!(
        write_cargo_locks(agent.path(), &opts()).unwrap()[0].change,
        CargoLockChange::Unchanged
    );
}

#[test]
fn a_cargo_lock_that_does_not_match_the_manifest_is_refused_by_locked_and_the_rewritten_one_builds()
{
    let agent = TempAgent::new().hook("agent/hooks/policy", "policy");
    let krate = agent.path().join("hooks/policy");
    let before = fs::read_to_string(krate.join("Cargo.lock")).unwrap();
    // A dependency the lock does not list for the crate (the SDK's own
    // serde_json, already locked: no new version is resolved).
    let manifest = fs::read_to_string(krate.join("Cargo.toml"))
        .unwrap()
        .replace("[dependencies]\n", "[dependencies]\nserde_json = \"1\"\n");
    fs::write(krate.join("Cargo.toml"), manifest).unwrap();
    let problems = problems_of(agent.path());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::Build);
    assert_eq!(problems[0].path, krate.join("Cargo.lock"));
    assert!(
        problems[0].message.contains(
            "the Cargo.lock of crate hook `policy` does not match its Cargo.toml as hookrt builds it"
        ),
        "{}",
        problems[0].message
    );
    assert!(
        problems[0]
            .fix
            .contains(&format!("run `hookrt lock {}`", agent.path().display())),
        "{}",
        problems[0].fix
    );
    assert_eq!(
        fs::read_to_string(krate.join("Cargo.lock")).unwrap(),
        before,
        "cargo --locked never changes the lock"
    );
    let written = write_cargo_locks(agent.path(), &opts()).unwrap();
    assert_eq!(written[0].change, CargoLockChange::Updated);
    let after = fs::read_to_string(krate.join("Cargo.lock")).unwrap();
    assert_ne!(after, before);
    // Only the crate's own entry moved: every pinned version stays.
    let versions = |lock: &str| {
        lock.lines()
            .filter(|l| l.starts_with("version = \""))
            .count()
    };
    assert_eq!(versions(&after), versions(&before));
    assert_eq!(load(agent.path()).hooks()[0].slug.as_str(), "policy");
}

#[test]
fn a_changed_cargo_lock_is_drift_from_hookrt_lock() {
    let agent = TempAgent::new().hook("agent/hooks/policy", "policy");
    lock(agent.path());
    let cargo_lock = agent.path().join("hooks/policy/Cargo.lock");
    let text = fs::read_to_string(&cargo_lock).unwrap();
    // Another version of one dependency, as a hand edit or `cargo update` makes.
    let edited = text.replacen(
        "name = \"itoa\"\nversion = \"",
        "name = \"itoa\"\nversion = \"0.",
        1,
    );
    assert_ne!(edited, text, "the policy crate's lock names itoa");
    fs::write(&cargo_lock, edited).unwrap();
    let problems = refused(agent.path());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, ProblemKind::Lock);
    assert!(
        problems[0]
            .2
            .contains("hook `policy` drifted from hookrt.lock: its files' sha256 expected"),
        "{}",
        problems[0].2
    );
}
