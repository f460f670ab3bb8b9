//! Python hooks: building a `hooks/NAME.py` file, or a package folder with
//! `__init__.py`, into a component for the `define-hook` world with the
//! pinned Python toolchain (componentize-py, `guest-sdk/python/requirements.txt`).
//!
//! The toolchain is a virtual environment, installed as TypeScript's is
//! (`scripts/py-toolchain`, `$HOOKRT_PY_TOOLCHAIN` or `py-toolchain` in the
//! user's cache). Trust boundary, as for TypeScript hooks: hookrt reads the hook's `.py`
//! files itself (a package's without following links, at most
//! [`MAX_FILES`] of at most [`MAX_SOURCE_BYTES`] together) and hands their
//! text to `guest-sdk/python/build.py`, run by the toolchain's interpreter in
//! isolated mode (`-I`: no `PYTHONPATH`, no user site, not the working
//! folder on the path) with a scrubbed environment in a fresh folder of the
//! cache dir; it never opens the agent folder, so no `sitecustomize.py`,
//! `pyproject.toml`, `componentize-py.toml` or other file there is read or
//! run. The driver parses the files (never runs them) to refuse imports
//! outside the SDK, the hook's own modules and the standard library, and
//! builds with componentize-py. The hook's own code runs only inside
//! WebAssembly: at build time in componentize-py's pre-initialisation (its
//! top level, in componentize-py's Wasmtime, which maps only the build's own
//! copies), and at delivery time in the sandbox like any hook.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::hooks::build::digest::newest_wit;
use crate::hooks::build::toolchain::Toolchain;
use crate::hooks::folder::discovery::{DiscoveredHook, SourceKind};
use crate::hooks::problem::Problem;

/// The most `.py` files one package hook may have.
pub(crate) const MAX_FILES: usize = 512;
/// The most bytes of source one Python hook may have, all files together.
pub(crate) const MAX_SOURCE_BYTES: u64 = 8 << 20;

/// The Python toolchain (`scripts/py-toolchain`).
pub(crate) const PY: Toolchain = Toolchain {
    what: "Python toolchain",
    language: "Python",
    hooks: "Python",
    env: "HOOKRT_PY_TOOLCHAIN",
    folder: "py-toolchain",
    lock: "python/requirements.txt",
    installed: "bin/componentize-py",
    script: "scripts/py-toolchain",
    install: "from the hookrt checkout (Python 3.10+ with venv and pip; it installs the \
              pinned componentize-py there)",
    timeout_env: "HOOKRT_PY_BUILD_TIMEOUT_S",
    start_fix: "run scripts/py-toolchain again: the toolchain's interpreter is missing or damaged",
};

/// The Python SDK folder (`guest-sdk/python`) of an SDK dir.
pub(crate) fn py_sdk_dir(sdk_dir: &Path) -> PathBuf {
    sdk_dir.join("python")
}

/// One file of the hook, as the driver gets it.
#[derive(Debug, serde::Serialize)]
struct File {
    /// Its path inside the hook's package (`__init__.py` for a single file).
    name: String,
    /// Where it is, for messages.
    origin: String,
    /// Its text.
    text: String,
}

/// Builds one Python hook; returns the component, written into `work` (a
/// fresh folder the caller removes).
pub(crate) fn build(
    hook: &DiscoveredHook,
    sdk_dir: &Path,
    work: &Path,
) -> Result<PathBuf, Problem> {
    let toolchain = PY.ready(sdk_dir)?;
    let files = read_files(hook)?;
    let out = work.join("component.wasm");
    let sdk = py_sdk_dir(sdk_dir);
    let request = serde_json::json!({
        "toolchain": toolchain,
        "sdk": sdk,
        "wit": newest_wit(sdk_dir),
        "path": hook.path.display().to_string(),
        "files": files,
        "out": out,
    });
    let python = toolchain.join("bin").join("python");
    let driver = sdk.join("build.py");
    let imports = PY.run(
        hook,
        python.as_os_str(),
        &["-I".as_ref(), driver.as_os_str()],
        work,
        &request,
        "fix the errors above (`hookrt new AGENT/hooks/NAME --lang py` writes a working hook to start from)",
    )?;
    tracing::debug!(slug = %hook.slug, imports = ?imports, "componentize-py built a Python hook");
    mark(&out).map_err(|e| {
        Problem::build(
            &out,
            format!("cannot mark the component as a Python hook's: {e}"),
            "check disk space and permissions of the cache dir",
        )
    })?;
    Ok(out)
}

/// The custom section hookrt ends every Python component it builds with:
/// `hookrt-profile` = `python`. It keeps the component a Python hook's when
/// it is loaded as a prebuilt `.wasm` (`hookrt build --out`), so CPython's
/// inert filesystem and socket imports are accepted there too. Anyone can
/// write it into a component; all it gets one is those inert imports.
pub(crate) const PROFILE_MARK: &[u8] = &[
    0x00, 0x15, 0x0e, b'h', b'o', b'o', b'k', b'r', b't', b'-', b'p', b'r', b'o', b'f', b'i', b'l',
    b'e', b'p', b'y', b't', b'h', b'o', b'n',
];

/// Appends [`PROFILE_MARK`] to the component at `path`.
fn mark(path: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(PROFILE_MARK)?;
    file.sync_all()
}

/// Whether the component at `path` ends with [`PROFILE_MARK`] (one read of
/// its last bytes).
pub(crate) fn is_marked(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let tail = || -> std::io::Result<bool> {
        let mut file = std::fs::File::open(path)?;
        let len = PROFILE_MARK.len() as u64;
        if file.metadata()?.len() < 8 + len {
            return Ok(false);
        }
        file.seek(SeekFrom::End(-(len as i64)))?;
        let mut tail = vec![0; PROFILE_MARK.len()];
        file.read_exact(&mut tail)?;
        Ok(tail == PROFILE_MARK)
    };
    tail().unwrap_or(false)
}

/// The hook's `.py` files: a single file as the package's `__init__.py`, a
/// package's every `.py` file by its path inside the folder. Links are not
/// followed (discovery refused those that leave the folder), hidden folders
/// and `__pycache__` are skipped, and the count and size are bounded.
fn read_files(hook: &DiscoveredHook) -> Result<Vec<File>, Problem> {
    let read = |path: &Path, name: String| -> Result<File, Problem> {
        let text = crate::hooks::folder::plain::read_regular_text(path).map_err(|e| {
            Problem::build(
                path,
                format!("cannot read as UTF-8 text: {e}"),
                "save the hook as UTF-8",
            )
        })?;
        Ok(File {
            name,
            origin: path.display().to_string(),
            text,
        })
    };
    debug_assert_eq!(hook.kind, SourceKind::Python);
    if hook.path.is_file() {
        check_size(hook, std::fs::metadata(&hook.path).map_or(0, |m| m.len()))?;
        return Ok(vec![read(&hook.path, "__init__.py".to_owned())?]);
    }
    let mut files = Vec::new();
    let mut bytes = 0;
    let walk = WalkDir::new(&hook.path)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name.starts_with('.') || name == "__pycache__")
        });
    for entry in walk {
        let entry = entry.map_err(|e| {
            Problem::build(
                &hook.path,
                format!("cannot read the package: {e}"),
                "check permissions",
            )
        })?;
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        if files.len() == MAX_FILES {
            return Err(Problem::build(
                &hook.path,
                format!("has more than {MAX_FILES} .py files"),
                "a hook is small: move what it does not need out of its folder",
            ));
        }
        bytes += entry.metadata().map_or(0, |m| m.len());
        check_size(hook, bytes)?;
        let rel = path.strip_prefix(&hook.path).unwrap_or(path);
        let name = rel.to_string_lossy().replace('\\', "/");
        files.push(read(path, name)?);
    }
    Ok(files)
}

fn check_size(hook: &DiscoveredHook, bytes: u64) -> Result<(), Problem> {
    if bytes <= MAX_SOURCE_BYTES {
        return Ok(());
    }
    Err(Problem::build(
        &hook.path,
        format!(
            "has more than {} MiB of Python source",
            MAX_SOURCE_BYTES >> 20
        ),
        "a hook is small: move data into its `config` in hookrt.toml",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_mark_is_one_well_formed_custom_section() {
        // id 0, then the size of what follows, then the name's length and name.
        let name = b"hookrt-profile";
        assert_eq!(PROFILE_MARK[0], 0);
        assert_eq!(usize::from(PROFILE_MARK[1]), PROFILE_MARK.len() - 2);
        assert_eq!(usize::from(PROFILE_MARK[2]), name.len());
        assert_eq!(&PROFILE_MARK[3..3 + name.len()], name);
        assert_eq!(&PROFILE_MARK[3 + name.len()..], b"python");
    }
}
