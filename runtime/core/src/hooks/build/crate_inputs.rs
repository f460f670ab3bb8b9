//! What a crate hook builds from, all of it in its digest (so `hookrt.lock`
//! pins it): every file of its folder, hidden ones included (a
//! `build = ".b.rs"` is code cargo runs), each link by where it points, and
//! nothing outside the folder. Refused, before anything builds:
//!
//! - a `target/` folder in the crate (cargo's output, not an input: hookrt
//!   builds elsewhere, and a manifest could point a build script into it);
//! - a manifest path (`path`, `build`, `workspace`, `members`) that leads out
//!   of the folder: a `path` dependency on `../../x` would build code the lock
//!   never saw;
//! - a crate without a `Cargo.lock`: its registry dependencies would resolve
//!   to whatever versions are newest when it builds. cargo builds crate
//!   hooks `--locked`, so a lock that no longer matches the manifest (or the
//!   SDK's dependencies) is refused too, never rewritten: `hookrt lock`
//!   writes it (`hooks/build/cargo_lock.rs`), and the lock is one of the
//!   files pinned here.

use std::path::{Component, Path};

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::hooks::folder::discovery::{DiscoveredHook, agent_dir_of};
use crate::hooks::folder::plain::read_regular;
use crate::hooks::problem::Problem;

/// The lock of a crate's registry dependencies, beside its `Cargo.toml`.
pub(crate) const CARGO_LOCK: &str = "Cargo.lock";

/// What cargo says when `--locked` keeps it from changing the lock (1.95:
/// "cannot update the lock file … because --locked was passed"; earlier:
/// "the lock file … needs to be updated but --locked was passed").
const LOCKED_REFUSAL: &str = "--locked was passed";

/// The problem of a crate hook without a `Cargo.lock` (checked before its
/// build plan, so not even a cached component of it is used).
pub(crate) fn missing_cargo_lock(hook: &DiscoveredHook) -> Option<Problem> {
    let lock = hook.path.join(CARGO_LOCK);
    if std::fs::symlink_metadata(&lock).is_ok_and(|m| m.is_file()) {
        return None;
    }
    Some(Problem::build(
        &lock,
        format!(
            "crate hook `{}` has no Cargo.lock (a file of its own): hookrt builds crate hooks `--locked`, so every dependency's version is the one the lock pins",
            hook.slug
        ),
        format!(
            "write it with `hookrt lock {}` (cargo resolves it with the SDK this hookrt supplies), review it and commit it beside Cargo.toml",
            agent_dir_of(&hook.path).display()
        ),
    ))
}

/// The problem of a crate hook whose build `--locked` refused its lock
/// (cargo's `stderr`), or `None` when cargo failed for another reason.
pub(crate) fn stale_cargo_lock(hook: &DiscoveredHook, stderr: &str) -> Option<Problem> {
    if !stderr.contains(LOCKED_REFUSAL) {
        return None;
    }
    Some(Problem::build(
        hook.path.join(CARGO_LOCK),
        format!(
            "the Cargo.lock of crate hook `{}` does not match its Cargo.toml as hookrt builds it: the manifest changed since the lock was written, or this hookrt's SDK depends on versions the lock does not name (its dependencies moved with an upgrade); cargo builds crate hooks `--locked` and never changes the lock itself",
            hook.slug
        ),
        format!(
            "run `hookrt lock {}`: it updates the Cargo.lock as cargo resolves it with this hookrt's SDK, then pins the folder again in hookrt.lock (a changed Cargo.lock is drift); review the Cargo.lock's diff and commit it",
            agent_dir_of(&hook.path).display()
        ),
    ))
}

/// Hashes every entry of the crate at `root` by relative path: a file's
/// bytes, a link's target; refuses what the module doc says.
pub(crate) fn hash_crate(h: &mut Sha256, root: &Path) -> std::io::Result<()> {
    let manifest = read_regular(&root.join("Cargo.toml"))?;
    stays_inside(root, &String::from_utf8_lossy(&manifest))?;
    let entries = WalkDir::new(root).sort_by_file_name().follow_links(false);
    for entry in entries {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let kind = entry.file_type();
        if entry.depth() == 1 && kind.is_dir() && entry.file_name() == "target" {
            return Err(refused(format!(
                "{} is cargo's output folder inside the hook's crate: hookrt builds elsewhere and pins every file of the crate, so remove it (`cargo clean`, or build with another --target-dir)",
                entry.path().display()
            )));
        }
        if kind.is_dir() {
            continue;
        }
        h.update(rel.as_os_str().as_encoded_bytes());
        h.update([0]);
        if kind.is_symlink() {
            let to = std::fs::read_link(entry.path())?;
            h.update(b"link\0");
            h.update(to.as_os_str().as_encoded_bytes());
            h.update([0]);
        } else if kind.is_file() {
            let bytes = read_regular(entry.path()).map_err(|e| {
                std::io::Error::new(e.kind(), format!("{}: {e}", entry.path().display()))
            })?;
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        } else {
            return Err(refused(format!(
                "{} is a FIFO, socket or device, not a regular file; remove it from the hook's folder",
                entry.path().display()
            )));
        }
    }
    Ok(())
}

/// The manifest keys naming a path cargo reads from.
const PATH_KEYS: [&str; 4] = ["path", "build", "workspace", "members"];

/// Every path the manifest `text` names (under [`PATH_KEYS`], anywhere:
/// dependencies of every kind and target, patches, targets, the build
/// script, the workspace) lies inside `root`.
fn stays_inside(root: &Path, text: &str) -> std::io::Result<()> {
    let manifest: toml::Table = toml::from_str(text).map_err(|e| {
        refused(format!(
            "{}: not a readable Cargo.toml ({})",
            root.join("Cargo.toml").display(),
            e.message()
        ))
    })?;
    let mut named = Vec::new();
    collect(&toml::Value::Table(manifest), "", &mut named);
    for (at, path) in named {
        if !inside(Path::new(&path)) {
            return Err(refused(format!(
                "{}: `{at} = \"{path}\"` leads out of the hook's crate, whose build would then read code `hookrt.lock` never pinned; keep every path inside the crate's folder (copy the code in, or depend on a published crate)",
                root.join("Cargo.toml").display()
            )));
        }
    }
    Ok(())
}

/// The (key path, text) of every string under a [`PATH_KEYS`] key.
fn collect(value: &toml::Value, at: &str, out: &mut Vec<(String, String)>) {
    let Some(table) = value.as_table() else {
        return;
    };
    for (key, v) in table {
        let here = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        if PATH_KEYS.contains(&key.as_str()) {
            match v {
                toml::Value::String(p) => out.push((here.clone(), p.clone())),
                toml::Value::Array(items) => out.extend(
                    items
                        .iter()
                        .filter_map(|i| i.as_str())
                        .map(|p| (here.clone(), p.to_owned())),
                ),
                _ => {}
            }
        }
        if let toml::Value::Array(items) = v {
            for item in items {
                collect(item, &here, out);
            }
        } else {
            collect(v, &here, out);
        }
    }
}

/// Whether the relative path `p` stays inside the folder it is relative to
/// (read lexically: no component climbs above the start).
fn inside(p: &Path) -> bool {
    let mut depth: usize = 0;
    for c in p.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

fn refused(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_paths_out_of_the_crate_are_refused_and_inside_ones_kept() {
        let root = Path::new("/x/hooks/policy");
        for ok in [
            "[package]\nname='p'\nbuild='build/main.rs'\n[dependencies]\nhookrt-sdk='0.3'\nhelper={path='helper'}\n[workspace]\nmembers=['helper']",
            "[package]\nname='p'\nversion.workspace=true\nbuild=true\n[lib]\npath='src/../src/lib.rs'",
        ] {
            assert!(stays_inside(root, ok).is_ok(), "{ok}");
        }
        for (bad, named) in [
            ("[dependencies]\nx={path='../../x'}", "dependencies.x.path"),
            ("[package]\nbuild='/tmp/b.rs'", "package.build"),
            ("[package]\nworkspace='..'", "package.workspace"),
            ("[workspace]\nmembers=['../other']", "workspace.members"),
            (
                "[target.'cfg(unix)'.build-dependencies]\ny={path='a/../../y'}",
                "build-dependencies.y.path",
            ),
            (
                "[patch.crates-io]\nserde={path='../serde'}",
                "patch.crates-io.serde.path",
            ),
            ("[[bin]]\nname='b'\npath='../b.rs'", "bin.path"),
        ] {
            let e = stays_inside(root, bad).unwrap_err().to_string();
            assert!(
                e.contains(named) && e.contains("leads out of the hook's crate"),
                "{bad}: {e}"
            );
        }
        assert!(inside(Path::new("a/./b/../c")));
        assert!(!inside(Path::new("a/../../c")));
    }

    #[test]
    fn hidden_files_and_links_are_pinned_and_a_target_folder_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("Cargo.toml"),
            "[package]\nname='p'\nbuild='.b.rs'\n",
        )
        .unwrap();
        std::fs::write(root.join(".b.rs"), "fn main() {}").unwrap();
        let digest = || {
            let mut h = Sha256::new();
            hash_crate(&mut h, root).map(|()| h.finalize())
        };
        let before = digest().unwrap();
        std::fs::write(root.join(".b.rs"), "fn main() { /* changed */ }").unwrap();
        assert_ne!(digest().unwrap(), before, "a hidden build script is pinned");
        let with_script = digest().unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("data")).unwrap();
        let linked = digest().unwrap();
        assert_ne!(linked, with_script, "a link is pinned by where it points");
        std::fs::remove_file(root.join("data")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("data")).unwrap();
        assert_ne!(digest().unwrap(), linked);
        std::fs::create_dir(root.join("target")).unwrap();
        let e = digest().unwrap_err().to_string();
        assert!(
            e.contains("cargo's output folder inside the hook's crate"),
            "{e}"
        );
    }
}
