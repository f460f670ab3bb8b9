//! The dep-info check: after cargo built a Rust hook, every file the
//! compiler read for it must lie inside the build's roots, or its component
//! is refused.
//!
//! It holds whatever the source scan (`confine.rs`) missed, and for crate
//! hooks, which are not scanned. cargo's dep-info (`<artifact>.d`) names every
//! source file the compiler read for the hook's crate and its `path` crates
//! (the SDK included) and each `rerun-if-changed` file; rustc's per crate
//! (`deps/<crate>-<hash>.d`) covers the registry crates. Each file named lies
//! in the build's roots, resolved through every link, or the component is not
//! installed. The roots: the hook's own crate (generated for a single file),
//! the SDK (and what its top-level links name, such as `wit/`), the build's
//! cargo home, the toolchain's sysroot and the build's target dir (build
//! scripts' `OUT_DIR`).
//!
//! What it cannot see: a build script or proc macro that copies a host file
//! into `OUT_DIR` names only the copy; that read is denied only where the
//! build's kernel sandbox holds (`kernel_sandbox.rs`).

use std::path::{Path, PathBuf};

/// The folders a build may read from, each resolved through its links.
#[derive(Debug, Clone, Default)]
pub(crate) struct Roots(Vec<PathBuf>);

impl Roots {
    /// The roots `dirs`, each resolved (a folder that does not exist is
    /// left out: nothing can be read from it).
    pub(crate) fn new<'p>(dirs: impl IntoIterator<Item = &'p Path>) -> Roots {
        let mut roots = Roots::default();
        for dir in dirs {
            roots.add(dir);
        }
        roots
    }

    /// Adds `dir`, resolved through its links.
    pub(crate) fn add(&mut self, dir: &Path) {
        if let Ok(dir) = dir.canonicalize() {
            self.0.push(dir);
        }
    }

    /// Adds `dir` and the targets of the links directly in it (the SDK's
    /// `wit` is a link to the checkout's `wit/`).
    pub(crate) fn add_with_links(&mut self, dir: &Path) {
        self.add(dir);
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                    self.add(&entry.path());
                }
            }
        }
    }

    /// A copy with `dir` added.
    pub(crate) fn with(&self, dir: &Path) -> Roots {
        let mut roots = self.clone();
        roots.add(dir);
        roots
    }

    /// Whether the file at `path` (already resolved) lies in a root.
    fn holds(&self, path: &Path) -> bool {
        self.0.iter().any(|root| path.starts_with(root))
    }
}

/// Why a dep-info file does not clear a build.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DepInfoError {
    /// A file it names lies outside the roots (or no longer exists, so where
    /// it lay cannot be told). The file is never opened, nor its path shown.
    #[error(
        "the compiler read a file outside the build's roots for it (named in the dep-info {})",
        depinfo.display()
    )]
    Outside {
        /// The dep-info file that names it.
        depinfo: PathBuf,
    },
    /// The dep-info file cannot be read.
    #[error("cannot read the dep-info {} cargo should have written for it: {source}", depinfo.display())]
    Unreadable {
        /// The dep-info file.
        depinfo: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Checks every file the dep-info at `depinfo` names against `roots`; a
/// relative name is taken from `base`.
pub(crate) fn check(depinfo: &Path, base: &Path, roots: &Roots) -> Result<(), DepInfoError> {
    let text = std::fs::read(depinfo).map_err(|source| DepInfoError::Unreadable {
        depinfo: depinfo.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&text);
    for name in named_files(&text) {
        let path = base.join(name);
        let inside = path.canonicalize().is_ok_and(|p| roots.holds(&p));
        if !inside {
            return Err(DepInfoError::Outside {
                depinfo: depinfo.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// The files a make-syntax dep-info names: both sides of every rule
/// (`out: src1 src2`, `src1:`), spaces escaped as `\ `; `#` lines (rustc's
/// `# env-dep:`) are comments.
fn named_files(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let mut word = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars
                    .peek()
                    .is_some_and(|n| *n == ' ' || *n == '\\' || *n == '#') =>
                {
                    word.extend(chars.next());
                }
                // The rule's colon: `name:` followed by a space or the end.
                ':' if chars.peek().is_none_or(|n| n.is_whitespace()) => {
                    names.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                }
                c if c.is_whitespace() => {
                    names.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                }
                c => word.push(c),
            }
        }
        names.extend((!word.is_empty()).then_some(word));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_of_each_rule_are_named_and_escapes_kept() {
        let text =
            "/t/out.wasm: /a/src/lib.rs /b/my\\ file.rs\n\n/a/src/lib.rs:\n# env-dep:HOME=/root\n";
        assert_eq!(
            named_files(text),
            [
                "/t/out.wasm",
                "/a/src/lib.rs",
                "/b/my file.rs",
                "/a/src/lib.rs"
            ]
        );
    }

    #[test]
    fn a_file_outside_the_roots_or_gone_is_refused_naming_only_the_dep_info() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("crate");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        let secret = tmp.path().join("secret-MARKER");
        std::fs::write(&secret, "MARKER").unwrap();
        // A link inside the root to the file outside it is outside too.
        std::os::unix::fs::symlink(&secret, root.join("src/link.rs")).unwrap();
        let roots = Roots::new([root.as_path()]);
        let d = tmp.path().join("out.d");
        let write = |deps: &str| {
            std::fs::write(
                &d,
                format!("{}: {deps}\n", root.join("src/lib.rs").display()),
            )
            .unwrap()
        };
        let lib = root.join("src/lib.rs");
        write(&format!("{}", lib.display()));
        check(&d, &root, &roots).unwrap();
        write("src/lib.rs");
        check(&d, &root, &roots).unwrap();
        for deps in [
            format!("{} {}", lib.display(), secret.display()),
            format!("{}", root.join("src/link.rs").display()),
            format!("{}/../secret-MARKER", root.display()),
            format!("{}", root.join("src/gone.rs").display()),
        ] {
            write(&deps);
            let e = check(&d, &root, &roots).unwrap_err().to_string();
            assert!(e.contains("outside the build's roots"), "{e}");
            assert!(e.contains(&d.display().to_string()), "{e}");
            assert!(!e.contains("MARKER"), "{e}");
        }
    }
}
