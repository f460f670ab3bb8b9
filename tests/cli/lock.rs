//! `hookrt lock` on a crate hook: the `Cargo.lock` its `--locked` build
//! needs is written first (as the build resolves it), then the folder is
//! pinned; `check` refuses the crate until then, naming the command.

use std::fs;

use crate::common::{copy, example};
use crate::{run, text};

#[test]
fn lock_writes_a_crate_hooks_missing_cargo_lock_then_pins_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("hooks/policy");
    copy(&example("agent/hooks/policy"), &krate).unwrap();
    let cargo_lock = krate.join("Cargo.lock");
    fs::remove_file(&cargo_lock).unwrap();
    let d = dir.path().to_str().unwrap();

    let check = run(&["check", d]);
    assert_eq!(check.status.code(), Some(1));
    let err = text(&check.stderr);
    assert!(
        err.contains("crate hook `policy` has no Cargo.lock")
            && err.contains(&format!("fix: write it with `hookrt lock {d}`")),
        "{err}"
    );

    let locked = run(&["lock", d]);
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    let out = text(&locked.stdout);
    assert!(
        out.contains(&format!("wrote {}\n", cargo_lock.display()))
            && out.contains(&format!("locked 1 hook(s) in {d}/hookrt.lock")),
        "{out}"
    );
    assert!(cargo_lock.is_file());
    let check = run(&["check", d]);
    assert!(check.status.success(), "{}", text(&check.stderr));

    // Locking again leaves a matching Cargo.lock alone, and says nothing of it.
    let again = run(&["lock", d]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(
        !text(&again.stdout).contains("Cargo.lock"),
        "{}",
        text(&again.stdout)
    );
}
