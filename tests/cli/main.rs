//! The `hookrt` command as a user runs it: exit codes, messages, JSON lines,
//! and at-least-once delivery across SIGKILLs. Runs the release binary that
//! `scripts/test` builds first (`cargo build --release -p hookrt-cli`), with
//! the real example hooks and the build cache shared with `tests/all`.

#[allow(
    dead_code,
    reason = "shared with tests/all; not every helper is used here"
)]
#[path = "../all/common.rs"]
mod common;

mod commands;
mod crash;
mod journal;

use std::path::{Path, PathBuf};

/// The `hookrt` binary built beside this test (same target dir and profile).
pub fn hookrt_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows where it runs");
    // target/<profile>/deps/<test> -> target/<profile>/hookrt
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps")
        .join(format!("hookrt{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build it first with `cargo build --release -p hookrt-cli` (scripts/test does)",
        bin.display()
    );
    bin
}
