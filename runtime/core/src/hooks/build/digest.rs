//! Digests of hook sources: what keys a built component in the cache.
//!
//! A source's digest covers everything its component depends on besides
//! cargo's registry: the source (a file, or a crate's tree), the SDK and the
//! toolchain. An unchanged digest means the cached component is still right,
//! so cargo never starts.

use std::fs;
use std::path::Path;

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::problem::Problem;

/// Hash of everything a hook's component depends on besides cargo's registry.
pub(crate) fn source_hash(
    hook: &DiscoveredHook,
    sdk: &str,
    toolchain: Option<&str>,
) -> std::io::Result<String> {
    if hook.kind == SourceKind::Component {
        return Ok(hex::encode(Sha256::digest(fs::read(&hook.path)?)));
    }
    let mut h = Sha256::new();
    own_files(&mut h, hook)?;
    h.update(sdk.as_bytes());
    h.update(toolchain.unwrap_or("").as_bytes());
    Ok(hex::encode(h.finalize()))
}

/// Hash of the hook's own files only (its source file, crate tree or
/// component), not the SDK or toolchain: what `hookrt.lock` pins before
/// anything is built, so a hookrt upgrade alone is no drift.
pub(crate) fn files_digest(hook: &DiscoveredHook) -> std::io::Result<String> {
    if hook.kind == SourceKind::Component {
        // A component's files are the component: its digest is its sha256.
        return Ok(hex::encode(Sha256::digest(fs::read(&hook.path)?)));
    }
    let mut h = Sha256::new();
    own_files(&mut h, hook)?;
    Ok(hex::encode(h.finalize()))
}

/// Feeds the hook's own files to `h`, tagged by kind.
fn own_files(h: &mut Sha256, hook: &DiscoveredHook) -> std::io::Result<()> {
    match hook.kind {
        SourceKind::Component => {
            h.update(fs::read(&hook.path)?);
        }
        SourceKind::SingleFile => {
            h.update(b"hookrt single-file v1\0");
            h.update(fs::read(&hook.path)?);
        }
        SourceKind::Crate => {
            h.update(b"hookrt crate v1\0");
            hash_tree(h, &hook.path)?;
        }
        SourceKind::TypeScript => {
            h.update(b"hookrt typescript v1\0");
            // `.ts` is type-checked, `.js` is not: the same text builds differently.
            h.update(
                hook.path
                    .extension()
                    .map_or(&b""[..], |e| e.as_encoded_bytes()),
            );
            h.update([0]);
            h.update(fs::read(&hook.path)?);
        }
        SourceKind::Python if hook.path.is_dir() => {
            h.update(b"hookrt python package v1\0");
            hash_tree(h, &hook.path)?;
        }
        SourceKind::Python => {
            h.update(b"hookrt python v1\0");
            h.update(fs::read(&hook.path)?);
        }
    }
    Ok(())
}

/// Hashes relative paths and contents of a tree, skipping `target/`,
/// `__pycache__/` and hidden entries.
fn hash_tree(h: &mut Sha256, root: &Path) -> std::io::Result<()> {
    let walk = WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            // Python's byte-code caches are outputs, never inputs.
            e.depth() == 0
                || !(name.starts_with('.')
                    || name == "__pycache__"
                    || (e.depth() == 1 && name == "target"))
        });
    for entry in walk {
        let entry = entry.map_err(std::io::Error::other)?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            h.update(rel.to_string_lossy().as_bytes());
            h.update([0]);
            let bytes = fs::read(entry.path())?;
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
    }
    Ok(())
}

/// Digest of the TS SDK (`guest-sdk/ts`: its sources, the build driver, the
/// toolchain lock with every pinned version) and the WIT it builds against.
pub(crate) fn ts_fingerprint(sdk_dir: &Path) -> Result<String, Problem> {
    script_fingerprint(
        sdk_dir,
        "ts",
        b"hookrt ts sdk v1\0",
        "src",
        &["build.mjs", "package-lock.json"],
        "the TypeScript SDK (src/hookrt.ts, build.mjs, package-lock.json) is not there",
    )
}

/// Digest of the Python SDK (`guest-sdk/python`: the `hookrt` package, the
/// build driver, the toolchain's pinned requirements) and the WIT it builds
/// against.
pub(crate) fn py_fingerprint(sdk_dir: &Path) -> Result<String, Problem> {
    script_fingerprint(
        sdk_dir,
        "python",
        b"hookrt python sdk v2\0",
        "hookrt",
        &["build.py", "requirements.txt"],
        "the Python SDK (hookrt/, build.py, requirements.txt) is not there",
    )
}

/// The newest world's WIT under the SDK dir: what script hooks are built
/// against, and so part of their SDK's fingerprint.
pub(crate) fn newest_wit(sdk_dir: &Path) -> std::path::PathBuf {
    sdk_dir
        .join("wit")
        .join(format!("v{}", crate::sandbox::wit::NEWEST_VERSION))
        .join("hook.wit")
}

/// Digest of a script SDK under `sdk_dir/folder`: `tag`, its `sources`
/// tree, its `files` and the newest WIT.
fn script_fingerprint(
    sdk_dir: &Path,
    folder: &str,
    tag: &[u8],
    sources: &str,
    files: &[&str],
    missing: &str,
) -> Result<String, Problem> {
    let dir = sdk_dir.join(folder);
    let missing = || {
        Problem::build(
            &dir,
            missing,
            "set HOOKRT_SDK_DIR to the guest-sdk folder of your hookrt checkout",
        )
    };
    let mut h = Sha256::new();
    h.update(tag);
    hash_tree(&mut h, &dir.join(sources)).map_err(|_| missing())?;
    for file in files
        .iter()
        .map(|f| dir.join(f))
        .chain([newest_wit(sdk_dir)])
    {
        h.update(fs::read(file).map_err(|_| missing())?);
    }
    Ok(hex::encode(h.finalize()))
}

/// Digest of the SDK crate and the WIT it is generated from.
pub(crate) fn sdk_fingerprint(sdk_dir: &Path) -> Result<String, Problem> {
    let missing = || {
        Problem::build(
            sdk_dir,
            "the hookrt-sdk crate is not there",
            "set HOOKRT_SDK_DIR to the guest-sdk folder of your hookrt checkout",
        )
    };
    if !sdk_dir.join("Cargo.toml").is_file() {
        return Err(missing());
    }
    let mut h = Sha256::new();
    for dir in [sdk_dir.join("src"), sdk_dir.join("wit")] {
        hash_tree(&mut h, &dir).map_err(|_| missing())?;
    }
    h.update(fs::read(sdk_dir.join("Cargo.toml")).map_err(|_| missing())?);
    // The attribute macro crate shapes every typed hook's exports (an SDK
    // before 0.2's `Hook` trait has none).
    let macros = sdk_dir.join("macros");
    if macros.is_dir() {
        hash_tree(&mut h, &macros.join("src")).map_err(|_| missing())?;
        h.update(fs::read(macros.join("Cargo.toml")).map_err(|_| missing())?);
    }
    Ok(hex::encode(h.finalize()))
}
