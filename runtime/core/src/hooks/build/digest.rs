//! Digests of hook sources: what keys a built component in the cache.
//!
//! A source's digest covers everything its component depends on besides
//! cargo's registry: the source (a file, or a crate's tree), the SDK and the
//! toolchain. An unchanged digest means the cached component is still right,
//! so cargo never starts.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::hooks::build::crate_inputs;
use crate::hooks::cache::dir::{create_private_dir, write_private};
use crate::hooks::cache::stamp;
use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::folder::packs;
use crate::hooks::folder::plain::read_regular;
use crate::hooks::problem::Problem;

/// Hash of everything a hook's component depends on besides cargo's registry.
pub(crate) fn source_hash(
    hook: &DiscoveredHook,
    sdk: &str,
    toolchain: Option<&str>,
) -> std::io::Result<String> {
    if matches!(hook.kind, SourceKind::Component | SourceKind::Pack) {
        return files_digest(hook);
    }
    let mut h = Sha256::new();
    own_files(&mut h, hook)?;
    h.update(sdk.as_bytes());
    h.update(toolchain.unwrap_or("").as_bytes());
    Ok(hex::encode(h.finalize()))
}

/// [`source_hash`] of a single-file hook whose source is `source`: the
/// bytes read once, then hashed, scanned and built.
pub(crate) fn single_file_hash(source: &[u8], sdk: &str, toolchain: Option<&str>) -> String {
    let mut h = Sha256::new();
    h.update(SINGLE_FILE_TAG);
    h.update(source);
    h.update(sdk.as_bytes());
    h.update(toolchain.unwrap_or("").as_bytes());
    hex::encode(h.finalize())
}

/// What a single-file hook's digest starts with.
const SINGLE_FILE_TAG: &[u8] = b"hookrt single-file v1\0";

/// Hash of the hook's own files only (its source file, crate tree or
/// component), not the SDK or toolchain: what `hookrt.lock` pins before
/// anything is built, so a hookrt upgrade alone is no drift.
pub(crate) fn files_digest(hook: &DiscoveredHook) -> std::io::Result<String> {
    if let Some(pack) = packs::pack_of(hook) {
        // A pack's files are its component as this hookrt ships it.
        return Ok(pack.sha256().to_owned());
    }
    if hook.kind == SourceKind::Component {
        // A component's files are the component: its digest is its sha256.
        return Ok(hex::encode(Sha256::digest(read_regular(&hook.path)?)));
    }
    let mut h = Sha256::new();
    own_files(&mut h, hook)?;
    Ok(hex::encode(h.finalize()))
}

/// Feeds the hook's own files to `h`, tagged by kind.
fn own_files(h: &mut Sha256, hook: &DiscoveredHook) -> std::io::Result<()> {
    match hook.kind {
        SourceKind::Component => {
            h.update(read_regular(&hook.path)?);
        }
        SourceKind::Pack => h.update(files_digest(hook)?),
        SourceKind::SingleFile => {
            h.update(SINGLE_FILE_TAG);
            h.update(read_regular(&hook.path)?);
        }
        SourceKind::Crate => {
            h.update(b"hookrt crate v2\0");
            crate_inputs::hash_crate(h, &hook.path)?;
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
            h.update(read_regular(&hook.path)?);
        }
        SourceKind::Python if hook.path.is_dir() => {
            h.update(b"hookrt python package v1\0");
            hash_tree(h, &hook.path)?;
        }
        SourceKind::Python => {
            h.update(b"hookrt python v1\0");
            h.update(read_regular(&hook.path)?);
        }
    }
    Ok(())
}

/// A tree's entries in a fixed order, skipping `target/`, `__pycache__/` and
/// hidden entries: what [`hash_tree`] hashes.
fn walk(root: &Path) -> impl Iterator<Item = std::io::Result<walkdir::DirEntry>> {
    WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            // Python's byte-code caches are outputs, never inputs.
            e.depth() == 0
                || !(name.starts_with('.')
                    || name == "__pycache__"
                    || (e.depth() == 1 && name == "target"))
        })
        .map(|e| e.map_err(std::io::Error::other))
}

/// Hashes relative paths and contents of a tree's files ([`walk`]).
fn hash_tree(h: &mut Sha256, root: &Path) -> std::io::Result<()> {
    for entry in walk(root) {
        let entry = entry?;
        let kind = entry.file_type();
        if !(kind.is_file() || kind.is_dir() || kind.is_symlink()) {
            // A FIFO would block the build's read of it until something writes.
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} is a FIFO, socket or device, not a regular file; remove it from the hook's folder",
                    entry.path().display()
                ),
            ));
        }
        if kind.is_file() {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            h.update(rel.to_string_lossy().as_bytes());
            h.update([0]);
            let bytes = read_regular(entry.path()).map_err(|e| {
                std::io::Error::new(e.kind(), format!("{}: {e}", entry.path().display()))
            })?;
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
    }
    Ok(())
}

/// The newest world's WIT under the SDK dir: what script hooks are built
/// against, and so part of their SDK's fingerprint.
pub(crate) fn newest_wit(sdk_dir: &Path) -> std::path::PathBuf {
    sdk_dir
        .join("wit")
        .join(format!("v{}", crate::sandbox::wit::NEWEST_VERSION))
        .join("hook.wit")
}

/// What an SDK's fingerprint hashes, in order.
enum Input {
    /// Bytes that name the SDK and its format.
    Tag(&'static [u8]),
    /// A tree's files, by relative path ([`hash_tree`]).
    Tree(PathBuf),
    /// One file's contents.
    File(PathBuf),
}

/// An SDK the hooks are built against: what its fingerprint covers. The
/// fingerprint keys every component built with it, so it is taken on every
/// load; a stamp in the cache ([`Sdk::fingerprint`]) spares reading it all.
pub(crate) struct Sdk {
    /// `rust`, `ts` or `python`: its stamp's name.
    name: &'static str,
    /// The SDK's folder.
    root: PathBuf,
    inputs: Vec<Input>,
    /// What a missing input says.
    missing: &'static str,
}

impl Sdk {
    /// The Rust SDK: the `hookrt-sdk` crate (its sources, the WIT it is
    /// generated from, its manifest) and the attribute macro crate, which
    /// shapes every typed hook's exports (an SDK before 0.2's `Hook` trait
    /// has none).
    pub(crate) fn rust(sdk_dir: &Path) -> Result<Sdk, Problem> {
        let sdk = Sdk {
            name: "rust",
            root: sdk_dir.to_path_buf(),
            inputs: Vec::new(),
            missing: "the hookrt-sdk crate is not there",
        };
        if !sdk_dir.join("Cargo.toml").is_file() {
            return Err(sdk.missing());
        }
        let mut inputs = vec![
            Input::Tree(sdk_dir.join("src")),
            Input::Tree(sdk_dir.join("wit")),
            Input::File(sdk_dir.join("Cargo.toml")),
        ];
        let macros = sdk_dir.join("macros");
        if macros.is_dir() {
            inputs.push(Input::Tree(macros.join("src")));
            inputs.push(Input::File(macros.join("Cargo.toml")));
        }
        Ok(Sdk { inputs, ..sdk })
    }

    /// The TS SDK (`guest-sdk/ts`: its sources, the build driver, the
    /// toolchain lock with every pinned version) and the WIT it builds against.
    pub(crate) fn ts(sdk_dir: &Path) -> Result<Sdk, Problem> {
        Ok(Sdk::script(
            sdk_dir,
            ("ts", b"hookrt ts sdk v1\0", "src"),
            &["build.mjs", "package-lock.json"],
            "the TypeScript SDK (src/hookrt.ts, build.mjs, package-lock.json) is not there",
        ))
    }

    /// The Python SDK (`guest-sdk/python`: the `hookrt` package, the build
    /// driver, the toolchain's pinned requirements) and the WIT it builds
    /// against.
    pub(crate) fn python(sdk_dir: &Path) -> Result<Sdk, Problem> {
        Ok(Sdk::script(
            sdk_dir,
            ("python", b"hookrt python sdk v2\0", "hookrt"),
            &["build.py", "requirements.txt"],
            "the Python SDK (hookrt/, build.py, requirements.txt) is not there",
        ))
    }

    /// A script SDK under `sdk_dir/folder` (also its stamp's name): `tag`,
    /// its `sources` tree, its `files` and the newest WIT.
    fn script(
        sdk_dir: &Path,
        (folder, tag, sources): (&'static str, &'static [u8], &str),
        files: &[&str],
        missing: &'static str,
    ) -> Sdk {
        let dir = sdk_dir.join(folder);
        let mut inputs = vec![Input::Tag(tag), Input::Tree(dir.join(sources))];
        inputs.extend(files.iter().map(|f| Input::File(dir.join(f))));
        inputs.push(Input::File(newest_wit(sdk_dir)));
        Sdk {
            name: folder,
            root: dir,
            inputs,
            missing,
        }
    }

    fn missing(&self) -> Problem {
        Problem::build(
            &self.root,
            self.missing,
            "set HOOKRT_SDK_DIR to the guest-sdk folder of your hookrt checkout",
        )
    }

    /// The digest of every input, read in full.
    pub(crate) fn digest(&self) -> Result<String, Problem> {
        let mut h = Sha256::new();
        for input in &self.inputs {
            let read = match input {
                Input::Tag(tag) => {
                    h.update(tag);
                    Ok(())
                }
                Input::Tree(root) => hash_tree(&mut h, root),
                Input::File(file) => fs::read(file).map(|bytes| h.update(bytes)),
            };
            read.map_err(|_| self.missing())?;
        }
        Ok(hex::encode(h.finalize()))
    }

    /// The identity (`stat`) of every file and folder the digest reads, and
    /// of the SDK's folder; `None` if one cannot be read.
    fn identities(&self) -> Option<Vec<(PathBuf, fs::Metadata)>> {
        let mut all = vec![(self.root.clone(), fs::metadata(&self.root).ok()?)];
        for input in &self.inputs {
            match input {
                Input::Tag(_) => {}
                Input::Tree(root) => {
                    for entry in walk(root) {
                        let entry = entry.ok()?;
                        let meta = entry.metadata().ok()?;
                        all.push((entry.into_path(), meta));
                    }
                }
                Input::File(file) => all.push((file.clone(), fs::metadata(file).ok()?)),
            }
        }
        Some(all)
    }

    /// The digest, taken from the stamp `cache_dir` keeps for this SDK
    /// when no file or folder it covers changed since (`hooks/cache/stamp.rs`:
    /// a write, a rename, a new or removed file moves a change time), else
    /// read in full and stamped for next time (best effort).
    pub(crate) fn fingerprint(&self, cache_dir: &Path, key: &[u8]) -> Result<String, Problem> {
        self.fingerprint_settled(cache_dir, key, stamp::SETTLE)
    }

    fn fingerprint_settled(
        &self,
        cache_dir: &Path,
        key: &[u8],
        settle: std::time::Duration,
    ) -> Result<String, Problem> {
        // Taken before the digest reads anything: a change while it reads
        // leaves a stamp that no longer matches.
        let Some(identities) = self.identities() else {
            return self.digest();
        };
        let folder = cache_dir.join("sdks");
        let root = self.root.as_os_str().as_encoded_bytes();
        let record = folder.join(format!(
            "{}-{}",
            self.name,
            &hex::encode(Sha256::digest(root))[..16]
        ));
        if let Ok(text) = fs::read_to_string(&record)
            && let Some((digest, stored)) = text.trim_end().split_once('\n')
            && let Ok(stored) = hex::decode(stored)
            && stamp::matches_tree(key, digest.as_bytes(), &identities, &stored)
        {
            return Ok(digest.to_owned());
        }
        let digest = self.digest()?;
        if let Some(s) = stamp::stamp_tree(key, digest.as_bytes(), &identities, settle) {
            let _ = create_private_dir(&folder).and_then(|()| {
                write_private(
                    &record,
                    format!("{digest}\n{}\n", hex::encode(s)).as_bytes(),
                )
            });
        }
        Ok(digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A Rust SDK's layout with one source file and one WIT file.
    fn sdk() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::create_dir_all(dir.path().join("wit")).unwrap();
        fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"sdk\"\n").unwrap();
        fs::write(dir.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        fs::write(dir.path().join("wit/hook.wit"), "package a:b;\n").unwrap();
        dir
    }

    /// Writes a record whose stamp is valid for `digest` and the SDK as it is
    /// now, under `key`: what the stamp vouches for is then `digest`.
    fn plant(sdk: &Sdk, cache: &Path, key: &[u8], digest: &str) {
        let ids = sdk.identities().unwrap();
        let s = stamp::stamp_tree(key, digest.as_bytes(), &ids, Duration::ZERO).unwrap();
        let folder = cache.join("sdks");
        let record = fs::read_dir(&folder)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        fs::write(record, format!("{digest}\n{}\n", hex::encode(s))).unwrap();
    }

    #[test]
    fn a_stamped_sdk_fingerprint_holds_until_a_file_or_folder_of_it_changes() {
        let dir = sdk();
        let cache = tempfile::tempdir().unwrap();
        let key = [7u8; 32];
        let sdk = Sdk::rust(dir.path()).unwrap();
        let read = |sdk: &Sdk| {
            sdk.fingerprint_settled(cache.path(), &key, Duration::ZERO)
                .unwrap()
        };
        let digest = sdk.digest().unwrap();
        assert_eq!(read(&sdk), digest, "the first load reads it all");

        // The stamp is what is used: one planted for another digest is taken...
        plant(&sdk, cache.path(), &key, "planted");
        assert_eq!(read(&sdk), "planted");
        // ...but not under another key, nor with the digest changed after.
        plant(&sdk, cache.path(), &[8u8; 32], "planted");
        assert_eq!(read(&sdk), digest, "another key's stamp is not taken");
        let record = fs::read_dir(cache.path().join("sdks"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let text = fs::read_to_string(&record).unwrap();
        fs::write(&record, text.replacen(&digest, "forged", 1)).unwrap();
        assert_eq!(
            read(&sdk),
            digest,
            "a digest edited in the record is not taken"
        );

        // Past the kernel's timestamp granularity, each change is seen.
        // A change to the crate, named.
        type Change<'a> = (&'static str, &'a dyn Fn(&Path));
        let changes: [Change<'_>; 4] = [
            ("a file written in place", &|d| {
                fs::write(d.join("src/lib.rs"), "pub fn b() {}\n").unwrap()
            }),
            ("a file added", &|d| {
                fs::write(d.join("src/more.rs"), "pub fn c() {}\n").unwrap()
            }),
            ("a file removed", &|d| {
                fs::remove_file(d.join("src/more.rs")).unwrap()
            }),
            ("the manifest replaced", &|d| {
                fs::write(d.join("Cargo.toml.new"), "[package]\nname = \"other\"\n").unwrap();
                fs::rename(d.join("Cargo.toml.new"), d.join("Cargo.toml")).unwrap();
            }),
        ];
        for (what, change) in changes {
            plant(&sdk, cache.path(), &key, "planted");
            std::thread::sleep(Duration::from_millis(20));
            change(dir.path());
            let now = sdk.digest().unwrap();
            assert_eq!(read(&sdk), now, "{what}: read again");
        }
        let macros = dir.path().join("macros/src");
        plant(&sdk, cache.path(), &key, "planted");
        std::thread::sleep(Duration::from_millis(20));
        fs::create_dir_all(&macros).unwrap();
        fs::write(dir.path().join("macros/Cargo.toml"), "[package]\n").unwrap();
        let with_macros = Sdk::rust(dir.path()).unwrap();
        assert_eq!(
            read(&with_macros),
            with_macros.digest().unwrap(),
            "a macros crate added"
        );
    }

    #[test]
    fn an_sdk_changed_just_now_is_not_stamped() {
        let dir = sdk();
        let cache = tempfile::tempdir().unwrap();
        let sdk = Sdk::rust(dir.path()).unwrap();
        assert_eq!(
            sdk.fingerprint(cache.path(), &[7u8; 32]).unwrap(),
            sdk.digest().unwrap()
        );
        assert!(
            !cache.path().join("sdks").exists(),
            "files written less than stamp::SETTLE ago get no stamp"
        );
    }
}
