//! The artifact cache: components precompiled for this engine, on disk.
//!
//! An artifact is keyed by the component's sha256 and the engine's
//! `precompile_compatibility_hash`, so a hit never runs Cranelift again.
//! Deserializing an artifact maps it as native code, so a file under the
//! expected name is not trusted for being there: beside each artifact
//! (`<artifact>.mac`) is an HMAC-SHA256, under the cache's private key
//! (`hooks/cache/dir.rs`), of the engine's compatibility hash, the
//! component's sha256 and the artifact bytes. The first load after a change
//! reads the bytes into memory, checks them, and deserializes them from
//! memory (no window between check and use), then stamps the file
//! (`hooks/cache/stamp.rs`); later loads map the stamped file without reading it.
//! A planted, foreign or damaged artifact is never deserialized: it is
//! recompiled from the component and replaced, with a warning.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::hooks::cache::{dir, stamp};

/// Folder under the cache dir holding precompiled artifacts.
pub(crate) const ARTIFACTS_DIR: &str = "artifacts";
/// Length of an artifact's MAC.
const MAC_LEN: usize = 32;

/// A component ready to instantiate, and whether it came from the cache.
pub(crate) struct Loaded {
    /// The compiled component.
    pub component: Component,
    /// True when Cranelift ran (no valid artifact was cached for this key).
    pub compiled: bool,
}

/// The artifact path for a component with `sha256` under `cache_dir`, for
/// the engine whose id ([`Sandbox::engine_id`](crate::sandbox::engine::Sandbox::engine_id)) is `id`.
pub(crate) fn artifact_path(id: &[u8; 32], cache_dir: &Path, sha256: &str) -> PathBuf {
    let id = hex::encode(&id[..8]);
    cache_dir
        .join(ARTIFACTS_DIR)
        .join(format!("{sha256}-{id}.cwasm"))
}

/// Why a component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheError {
    /// The bytes are not a component Wasmtime can compile.
    #[error("{0}")]
    Invalid(String),
    /// The compiled artifact could not be written or read back.
    #[error("{0}")]
    Io(String),
    /// The component needs more core instances, memories or tables than a
    /// pooled hook may have (Wasmtime refuses it for the pool).
    #[error("{0}")]
    Limits(String),
}

impl CacheError {
    /// A failed deserialize: the pool's refusal of a component over its
    /// per-component limits is [`CacheError::Limits`], the rest I/O.
    fn of_deserialize(e: &wasmtime::Error) -> CacheError {
        let text = format!("{e:#}");
        if text.contains("exceeds the configured maximum") {
            CacheError::Limits(text)
        } else {
            CacheError::Io(text)
        }
    }
}

/// The MAC binding an artifact to this cache, this engine and its component.
fn mac(key: &[u8], engine: &[u8; 32], sha256: &str, artifact: &[u8]) -> [u8; MAC_LEN] {
    dir::hmac_sha256(
        key,
        &[
            b"hookrt artifact v2\0",
            engine,
            sha256.as_bytes(),
            b"\0",
            artifact,
        ],
    )
}

/// The MAC file beside an artifact.
fn mac_path(artifact: &Path) -> PathBuf {
    let mut name = artifact.as_os_str().to_owned();
    name.push(".mac");
    PathBuf::from(name)
}

/// Loads the component at `path` (with digest `sha256`) from the cache of
/// `cache_dir` (MAC key `key`) for `engine` (whose [`engine_id`] is `id`); on
/// a miss, or an artifact whose MAC does not check, reads and compiles it and
/// stores the artifact.
pub(crate) fn load(
    engine: &Engine,
    id: &[u8; 32],
    cache_dir: &Path,
    key: &[u8],
    sha256: &str,
    path: &Path,
) -> Result<Loaded, CacheError> {
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CacheError::Io(format!("cannot {what} {}: {e}", p.display()))
    };
    let artifact = artifact_path(id, cache_dir, sha256);
    match cached(engine, key, id, sha256, &artifact) {
        Ok(Some(component)) => {
            return Ok(Loaded {
                component,
                compiled: false,
            });
        }
        Ok(None) => {}
        Err(why) => {
            tracing::warn!(artifact = %artifact.display(), "cached artifact {why}; it is not loaded but recompiled")
        }
    }
    let bytes = std::fs::read(path).map_err(|e| io("read", path, e))?;
    // The artifact is filed under `sha256`: compile exactly those bytes.
    let found = hex::encode(Sha256::digest(&bytes));
    if found != sha256 {
        return Err(CacheError::Io(format!(
            "{} changed while it was loaded (digest {found}, expected {sha256})",
            path.display()
        )));
    }
    let compiled = engine
        .precompile_component(&bytes)
        .map_err(|e| CacheError::Invalid(format!("{e:#}")))?;
    store(&artifact, &mac(key, id, sha256, &compiled), &compiled)
        .map_err(|e| io("write", &artifact, e))?;
    // SAFETY: `compiled` is this engine's own precompile output, in memory.
    let component = unsafe { Component::deserialize(engine, &compiled) }
        .map_err(|e| CacheError::of_deserialize(&e))?;
    Ok(Loaded {
        component,
        compiled: true,
    })
}

/// The cached artifact for `sha256`: `None` when there is none, an error
/// (why it is not used) when it is there but not trusted or not loadable.
///
/// An artifact whose MAC file holds a stamp matching the open file is mapped
/// from the file as it is, unread (the stamp says it holds the bytes once
/// checked, see `hooks/cache/stamp.rs`). Otherwise its bytes are read from the open
/// file, their MAC checked, and deserialized from memory (no window between
/// check and use); the file is then stamped for the next load.
fn cached(
    engine: &Engine,
    key: &[u8],
    id: &[u8; 32],
    sha256: &str,
    artifact: &Path,
) -> Result<Option<Component>, String> {
    let mut file = match std::fs::File::open(artifact) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot be read ({e})")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read ({e})"))?;
    let macs = match std::fs::read(mac_path(artifact)) {
        Ok(m) if m.len() == MAC_LEN || m.len() == MAC_LEN + stamp::STAMP_LEN => m,
        Ok(_) => return Err("has a damaged MAC file".to_owned()),
        Err(_) => {
            return Err(
                "has no MAC file beside it (an older hookrt's cache, or planted)".to_owned(),
            );
        }
    };
    let (content_mac, stored_stamp) = macs.split_at(MAC_LEN);
    if !stored_stamp.is_empty()
        && stamp::matches(key, content_mac, &meta, stored_stamp)
        && let Some(component) = mapped(engine, &file, meta.len())
    {
        return Ok(Some(component));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    if !dir::same_mac(content_mac, &mac(key, id, sha256, &bytes)) {
        return Err("has no valid MAC (planted, foreign or damaged)".to_owned());
    }
    // SAFETY: these exact bytes (in memory, not re-read) carry a MAC under
    // the cache's private key over this engine's compatibility hash and this
    // component's digest: only `store` below, fed by this engine's
    // `precompile_component`, writes such a MAC.
    let component = unsafe { Component::deserialize(engine, &bytes) }
        .map_err(|e| format!("does not deserialize ({e})"))?;
    // Best effort: without a stamp the next load checks the MAC again. (The
    // stamp may be there already, where the file could not be mapped.)
    if let Some(s) = stamp::stamp(key, content_mac, &meta)
        && stored_stamp != s
    {
        let _ = dir::write_private(&mac_path(artifact), &[content_mac, &s].concat());
    }
    Ok(Some(component))
}

/// Maps the open artifact `file` as code, through a path of the open file
/// (`/proc/self/fd` on Linux, `crate::platform`) so that
/// Wasmtime opens the very file whose stamp was checked, not whatever its
/// name points to by then; `None` where that is not possible.
fn mapped(engine: &Engine, file: &std::fs::File, len: u64) -> Option<Component> {
    let fd = crate::platform::path_of_open(file)?;
    // SAFETY: `file` is open, and its stamp (a MAC under the cache's private
    // key) says it holds bytes whose MAC was checked, which only `store`
    // writes for this engine's own `precompile_component` output.
    let component = unsafe { Component::deserialize_file(engine, &fd) }
        .inspect_err(|e| tracing::debug!("cannot map cached artifact ({e:#}); reading it"))
        .ok()?;
    if len >= READ_IN_AT_LOAD {
        read_in(&component);
    }
    Some(component)
}

/// A mapped artifact this large or larger is read in at load ([`read_in`]):
/// a TypeScript hook's is. A Rust hook's is not: its first delivery touches
/// little of it, and 100 such hooks must be ready in 15 ms
/// (docs/performance.md: Start, and the sizes under "Sizes the code assumes").
const READ_IN_AT_LOAD: u64 = 4 << 20;

/// Faults every page of `component`'s mapped artifact in now, at load.
/// Mapped pages are otherwise read when first touched, inside the first
/// delivery's deadline: a TypeScript hook whose artifact had left the page
/// cache spent most of its first delivery waiting on the disk (before and
/// after this: docs/performance.md, TypeScript hooks). Advice only: a kernel
/// without `MADV_POPULATE_READ` (before Linux 5.14) leaves the pages to be
/// read on first touch, as before.
fn read_in(component: &Component) {
    let range = component.image_range();
    let len = range.end as usize - range.start as usize;
    // SAFETY: the range is the artifact's mapping, alive while `component`
    // is.
    let rc = unsafe { crate::platform::read_in(range.start, len) };
    if let Err(e) = rc {
        tracing::debug!(
            "cannot read the mapped artifact in at load ({e}); its pages are read on first use"
        );
    }
}

/// Writes the artifact's MAC and then the artifact, as owner-only files,
/// each atomically. In that order, a process that finds the artifact also
/// finds its MAC (the other order would let it see a new artifact without
/// one, take it for planted and compile again). Two processes may compile
/// the same component at once: Cranelift's output, and so the MAC, is the
/// same.
fn store(artifact: &Path, mac: &[u8; MAC_LEN], compiled: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = artifact.parent() {
        dir::create_private_dir(dir)?;
    }
    dir::write_private(&mac_path(artifact), mac)?;
    dir::write_private(artifact, compiled)
}
