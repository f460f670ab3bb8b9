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

mod authoring;
mod commands;
mod coverage;
mod crash;
mod eve;
mod exec;
mod forgery;
mod ingest;
mod install;
mod journal;
mod lock;
mod supervisor;
mod trail;
mod trail_rows;
mod tutorial;
