//! The artifact cache: components precompiled for this engine, on disk.
//!
//! An artifact is keyed by the component's sha256 and the engine's
//! `precompile_compatibility_hash`, so a hit never runs Cranelift again.
//! Deserializing an artifact maps it as native code, so a file under the
//! expected name is not trusted for being there: each artifact starts with an
//! HMAC-SHA256, under the cache's private key (`hooks/cache_dir.rs`), of the
//! engine's compatibility hash, the component's sha256 and the artifact bytes.
//! The bytes are read into memory, checked, and deserialized from memory (no
//! window between check and use). A planted, foreign or damaged artifact is
//! never deserialized: it is recompiled from the component and replaced, with
//! a warning.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::hooks::cache_dir;

/// Folder under the cache dir holding precompiled artifacts.
pub const ARTIFACTS_DIR: &str = "artifacts";
/// Length of the MAC every artifact file starts with.
const MAC_LEN: usize = 32;

/// A component ready to instantiate, and whether it came from the cache.
pub struct Loaded {
    /// The compiled component.
    pub component: Component,
    /// True when Cranelift ran (no valid artifact was cached for this key).
    pub compiled: bool,
}

/// Feeds `Hash` output into SHA-256, to turn the engine's compatibility hash
/// (only `impl Hash`) into stable bytes.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        let d = self.0.clone().finalize();
        u64::from_le_bytes(d[..8].try_into().unwrap_or_default())
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The engine's compatibility hash as 32 bytes.
fn engine_id(engine: &Engine) -> [u8; 32] {
    let mut h = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut h);
    h.0.finalize().into()
}

/// The artifact path for a component with `sha256` under `cache_dir`.
pub fn artifact_path(engine: &Engine, cache_dir: &Path, sha256: &str) -> PathBuf {
    let id = hex::encode(&engine_id(engine)[..8]);
    cache_dir
        .join(ARTIFACTS_DIR)
        .join(format!("{sha256}-{id}.cwasm"))
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

/// The MAC binding an artifact to this cache, this engine and its component.
fn mac(key: &[u8], engine: &[u8; 32], sha256: &str, artifact: &[u8]) -> [u8; MAC_LEN] {
    cache_dir::hmac_sha256(
        key,
        &[
            b"hookrt artifact v1\0",
            engine,
            sha256.as_bytes(),
            b"\0",
            artifact,
        ],
    )
}

/// Loads the component at `path` (with digest `sha256`) from the cache; on a
/// miss, or an artifact whose MAC does not check, reads and compiles it and
/// stores the artifact.
pub fn load(
    engine: &Engine,
    cache_dir: &Path,
    sha256: &str,
    path: &Path,
) -> Result<Loaded, CacheError> {
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CacheError::Io(format!("cannot {what} {}: {e}", p.display()))
    };
    let key =
        cache_dir::mac_key(cache_dir).map_err(|e| io("set up the cache key in", cache_dir, e))?;
    let id = engine_id(engine);
    let artifact = artifact_path(engine, cache_dir, sha256);
    match std::fs::read(&artifact) {
        Ok(file) if file.len() > MAC_LEN => {
            let (stored, bytes) = file.split_at(MAC_LEN);
            if cache_dir::same_mac(stored, &mac(&key, &id, sha256, bytes)) {
                // SAFETY: these exact bytes (in memory, not re-read) carry a MAC
                // under the cache's private key over this engine's compatibility
                // hash and this component's digest: only `store` below, fed by
                // this engine's `precompile_component`, writes such a MAC.
                match unsafe { Component::deserialize(engine, bytes) } {
                    Ok(component) => {
                        return Ok(Loaded {
                            component,
                            compiled: false,
                        });
                    }
                    Err(e) => {
                        tracing::warn!(artifact = %artifact.display(), "cached artifact does not deserialize ({e}); recompiling")
                    }
                }
            } else {
                tracing::warn!(artifact = %artifact.display(), "cached artifact has no valid MAC (planted, foreign or damaged); it is not loaded but recompiled");
            }
        }
        Ok(_) => {
            tracing::warn!(artifact = %artifact.display(), "cached artifact is truncated; recompiling")
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(artifact = %artifact.display(), "cannot read cached artifact ({e}); recompiling")
        }
    }
    let bytes = std::fs::read(path).map_err(|e| io("read", path, e))?;
    let compiled = engine
        .precompile_component(&bytes)
        .map_err(|e| CacheError::Invalid(format!("{e:#}")))?;
    store(&artifact, &mac(&key, &id, sha256, &compiled), &compiled)
        .map_err(|e| io("write", &artifact, e))?;
    // SAFETY: `compiled` is this engine's own precompile output, in memory.
    let component = unsafe { Component::deserialize(engine, &compiled) }
        .map_err(|e| CacheError::Io(format!("{e:#}")))?;
    Ok(Loaded {
        component,
        compiled: true,
    })
}

/// Writes MAC + artifact as one owner-only file, atomically (two threads may
/// compile the same component at once; either result is valid).
fn store(artifact: &Path, mac: &[u8; MAC_LEN], compiled: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = artifact.parent() {
        cache_dir::create_private_dir(dir)?;
    }
    let mut file = Vec::with_capacity(MAC_LEN + compiled.len());
    file.extend_from_slice(mac);
    file.extend_from_slice(compiled);
    cache_dir::write_private(artifact, &file)
}
