//! The artifact cache: components precompiled for this engine, on disk.
//!
//! An artifact is keyed by the component's sha256 and the engine's
//! `precompile_compatibility_hash`, so a hit is always safe to deserialize
//! with this engine and never runs Cranelift again. Writes go through a temp
//! file and a rename, so a crash never leaves a torn artifact under its key.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::hooks::build::unique_tmp;

/// Folder under the cache dir holding precompiled artifacts.
pub const ARTIFACTS_DIR: &str = "artifacts";

/// A component ready to instantiate, and whether it came from the cache.
pub struct Loaded {
    /// The compiled component.
    pub component: Component,
    /// True when Cranelift ran (no artifact was cached for this key).
    pub compiled: bool,
}

/// The artifact path for a component with `sha256` under `cache_dir`.
pub fn artifact_path(engine: &Engine, cache_dir: &Path, sha256: &str) -> PathBuf {
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    cache_dir
        .join(ARTIFACTS_DIR)
        .join(format!("{sha256}-{:016x}.cwasm", h.finish()))
}

/// Why a component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The bytes are not a component Wasmtime can compile.
    #[error("{0}")]
    Invalid(String),
    /// The compiled artifact could not be written or read back.
    #[error("{0}")]
    Io(String),
}

/// Loads the component at `path` (with digest `sha256`) from the cache; on a
/// miss reads and compiles it and stores the artifact.
pub fn load(
    engine: &Engine,
    cache_dir: &Path,
    sha256: &str,
    path: &Path,
) -> Result<Loaded, CacheError> {
    let artifact = artifact_path(engine, cache_dir, sha256);
    if artifact.is_file() {
        // SAFETY: the file was written by `precompile_component` of an engine with
        // the same compatibility hash (it is in the file name), and only this
        // module writes under the artifacts dir, atomically.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &artifact) } {
            return Ok(Loaded {
                component,
                compiled: false,
            });
        }
        tracing::warn!(artifact = %artifact.display(), "unreadable cached artifact; recompiling");
    }
    let bytes = std::fs::read(path)
        .map_err(|e| CacheError::Io(format!("cannot read {}: {e}", path.display())))?;
    let compiled = engine
        .precompile_component(&bytes)
        .map_err(|e| CacheError::Invalid(format!("{e:#}")))?;
    if let Some(dir) = artifact.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| CacheError::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    // Unique per writer: two threads may compile the same component at once.
    let tmp = unique_tmp(&artifact);
    std::fs::write(&tmp, &compiled)
        .map_err(|e| CacheError::Io(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, &artifact)
        .map_err(|e| CacheError::Io(format!("cannot write {}: {e}", artifact.display())))?;
    // SAFETY: as above; it was written from this engine's precompile output.
    let component = unsafe { Component::deserialize_file(engine, &artifact) }
        .map_err(|e| CacheError::Io(format!("{e:#}")))?;
    Ok(Loaded {
        component,
        compiled: true,
    })
}
