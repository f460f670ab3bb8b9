//! Layer 3, hooks: from an agent folder to loaded, ordered hooks, in four
//! folders, each using only those before it:
//!
//! - `folder/`: the agent folder as written: slugs, discovery, `hookrt.toml`
//!   and the settings it gives each hook;
//! - `cache/`: the per-user cache dir: private writes, stamps, precompiled
//!   artifacts and start records;
//! - `build/`: hook sources into components (cargo for Rust, componentize-js
//!   for TypeScript), keyed by source digests;
//! - `loaded/`: components loaded into the sandbox, called under their limits,
//!   pinned by `hookrt.lock`, and ordered in the registry.
//!
//! `problem` (the actionable errors every step reports) is below them all,
//! and `project` (which folder is the project, and the check that keeps an
//! event from naming another) beside it.

pub(crate) mod build;
pub(crate) mod cache;
pub(crate) mod folder;
pub(crate) mod loaded;
pub(crate) mod problem;
pub(crate) mod project;

// Building, discovering, configuring, locking and naming hooks, beyond what
// the crate root re-exports (`BuildOptions`, `Problems`, ...).
pub use build::cargo_lock::{CargoLockChange, CargoLockWrite, write_cargo_lock, write_cargo_locks};
pub use build::component::{BuildEvent, BuiltHook, SDK_REQ, build};
pub use cache::dir::{create_private_dir, default_cache_dir};
pub use folder::config::{CONFIG_FILE, Config, Mode, OnUnscoped};
pub use folder::discovery::{
    DiscoveredHook, Discovery, MAX_ENTRIES, MAX_HOOKS, SourceKind, discover,
};
pub use folder::packs::{ALL as PACKS, Pack};
pub use folder::plain::{PlainFileError, read as read_plain_file, replace as replace_file};
pub use folder::settings::{HookSettings, InstancePolicy, OnFailure, RetryPolicy};
pub use folder::slug::{Slug, SlugError};
pub use loaded::call::{Call, Services};
pub use loaded::load::LoadedHook;
pub use loaded::lock::{LOCK_FILE, Lock, LockPolicy, LockStatus, Pin};
pub use project::{Project, ProjectError};
