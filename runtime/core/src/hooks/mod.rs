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
