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

use std::process::{Command, Output};

/// `hookrt ARGS`, the release binary, without colours.
pub(crate) fn hookrt(args: &[&str]) -> Command {
    let mut c = common::hookrt_command();
    c.args(args).env("NO_COLOR", "1");
    c
}

/// `hookrt ARGS` run to its end.
pub(crate) fn run(args: &[&str]) -> Output {
    hookrt(args).output().expect("hookrt runs")
}

/// `hookrt ARGS` run to its end in `cwd`.
pub(crate) fn hookrt_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    hookrt(args).current_dir(cwd).output().expect("hookrt runs")
}

/// The toolchain's own rustfmt (not rustup's proxy, which needs `HOME`).
pub(crate) fn rustfmt() -> Option<std::path::PathBuf> {
    let out = Command::new("rustup")
        .args(["which", "rustfmt"])
        .output()
        .ok()?;
    let path = std::path::PathBuf::from(text(&out.stdout).trim());
    path.is_file().then_some(path)
}

/// An output's bytes as text.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

mod authoring;
mod commands;
mod coverage;
mod crash;
mod eve;
mod exec;
mod forgery;
mod ingest;
mod install;
mod install_files;
mod journal;
mod lock;
mod notify;
mod notify_bus;
mod notify_template;
mod package;
mod packs;
mod packs_exec;
mod ported;
mod ported_exec;
mod read;
mod receiver;
mod record;
mod refusals;
mod sdk_grants;
mod secret;
mod service;
mod service_entries;
mod service_kills;
mod supervisor;
mod templates;
mod trail;
mod trail_kinds;
mod trail_rows;
mod transcript;
mod tutorial;
mod watch;

/// An agent folder holding the example hook `slug` of
/// `example-hooks/grants/hooks/` and `toml` as its `hookrt.toml`.
pub(crate) fn grants_folder(slug: &str, toml: &str) -> common::TempAgent {
    common::TempAgent::new()
        .config(toml)
        .hook(&format!("grants/hooks/{slug}.rs"), &format!("{slug}.rs"))
}
