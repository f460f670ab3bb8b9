//! Layer 3, hooks: from an agent folder to loaded, ordered hooks. Slugs,
//! discovery, `hookrt.toml`, building sources (Rust, TypeScript) into components, the artifact
//! cache, loading into the sandbox, calling a hook, and the registry.

pub(crate) mod build;
pub(crate) mod cache;
pub(crate) mod cache_dir;
pub(crate) mod call;
pub(crate) mod cargo;
pub(crate) mod config;
pub(crate) mod digest;
pub(crate) mod discovery;
pub(crate) mod load;
pub(crate) mod lock;
pub(crate) mod problem;
pub(crate) mod registry;
pub(crate) mod settings;
pub(crate) mod slug;
pub(crate) mod stamp;
pub(crate) mod start;
pub(crate) mod typescript;

// Building, discovering, configuring, locking and naming hooks, beyond what
// the crate root re-exports (`BuildOptions`, `Problems`, ...).
pub use build::{BuildEvent, BuiltHook, DEFAULT_SDK_DIR, SDK_REQ, build};
pub use cache_dir::default_cache_dir;
pub use cargo::{HOOK_TARGET, HOOK_TOOLCHAIN};
pub use config::{CONFIG_FILE, Config, Mode};
pub use discovery::{DiscoveredHook, Discovery, MAX_ENTRIES, MAX_HOOKS, SourceKind, discover};
pub use load::LoadedHook;
pub use lock::{LOCK_FILE, Lock, LockStatus, Pin};
pub use settings::{HookSettings, InstancePolicy, OnFailure, RetryPolicy};
pub use slug::{Slug, SlugError};
pub use typescript::{BUILD_TIMEOUT as JS_BUILD_TIMEOUT, toolchain_dir as js_toolchain_dir};
