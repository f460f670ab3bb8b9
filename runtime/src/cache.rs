//! The artifact cache: components precompiled for this engine, on disk.
//!
//! An artifact is keyed by the component's sha256 and the engine's
//! `precompile_compatibility_hash`, so a hit is always safe to deserialize
//! with this engine and never runs Cranelift again. Writes go through a temp
//! file and a rename, so a crash never leaves a torn artifact under its key.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::build::BuiltHook;
use crate::discovery::SourceKind;

/// Folder under the cache dir holding precompiled artifacts.
pub const ARTIFACTS_DIR: &str = "artifacts";

/// A component ready to instantiate, and whether it came from the cache.
pub struct Loaded {
    /// The compiled component.
    pub component: Component,
    /// True when Cranelift ran (no artifact was cached for this key).
    pub compiled: bool,
    /// Where the artifact lives.
    pub artifact: PathBuf,
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

/// A temp-file name no other writer (process or thread) uses at the same time.
pub fn unique_tmp(path: &Path) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    path.with_extension(format!("tmp{}-{n}", std::process::id()))
}

/// The sha256 of a built hook's component. A component hook's source digest
/// is already that. A component cargo built lives in the cache under its
/// source digest and never changes, so its digest is computed once and kept
/// beside it (`<component>.sha256`): loading 100 cached hooks then reads no
/// component bytes at all.
pub fn component_digest(built: &BuiltHook) -> std::io::Result<String> {
    if built.hook.kind == SourceKind::Component {
        return Ok(built.source_sha256.clone());
    }
    let sidecar = built.component.with_extension("wasm.sha256");
    if let Ok(text) = std::fs::read_to_string(&sidecar) {
        let text = text.trim();
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(text.to_owned());
        }
    }
    let digest = hex::encode(Sha256::digest(std::fs::read(&built.component)?));
    // Best effort: without the sidecar the next load hashes the bytes again.
    let tmp = unique_tmp(&sidecar);
    if std::fs::write(&tmp, &digest).is_ok() && std::fs::rename(&tmp, &sidecar).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(digest)
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
                artifact,
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
        artifact,
    })
}
