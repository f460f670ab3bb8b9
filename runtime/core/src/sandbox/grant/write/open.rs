//! Opening a file for writing beneath the project folder, one path component
//! at a time from the project's own descriptor: every folder is opened with
//! `O_NOFOLLOW` (a symlink anywhere on the way is refused, not followed),
//! missing folders are made on the way, and the file itself is opened with
//! `O_NOFOLLOW` and checked to be a regular file with one link. Nothing is
//! resolved by path and used later, so a folder swapped for a symlink
//! between two writes leads nowhere.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path};

/// Why a file could not be opened beneath the project.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The way leaves the project (a symlink, a hard link, not a file).
    Denied(String),
    /// Anything else.
    Failed(String),
}

/// How the file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// At its end, made when missing.
    Append,
    /// Made when missing; emptied by the caller once its size checked.
    Replace,
}

/// Opens `rel` (a relative path of plain components) beneath `project`.
pub(crate) fn open_beneath(project: &Path, rel: &Path, mode: Mode) -> Result<File, OpenError> {
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(Ok(n)),
            Component::CurDir => None,
            _ => Some(Err(())),
        })
        .collect::<Result<_, _>>()
        .map_err(|()| {
            OpenError::Denied(format!("{} is not a plain relative path", rel.display()))
        })?;
    let Some((file, folders)) = names.split_last() else {
        return Err(OpenError::Denied("names no file".to_owned()));
    };
    let mut dir = open_dir(None, project.as_os_str())
        .map_err(|e| OpenError::Failed(format!("the project folder {}: {e}", project.display())))?;
    for name in folders {
        dir = folder(&dir, name, rel)?;
    }
    let flags = libc::O_WRONLY
        | libc::O_CREAT
        | libc::O_NOFOLLOW
        | libc::O_NONBLOCK
        | libc::O_CLOEXEC
        | if mode == Mode::Append {
            libc::O_APPEND
        } else {
            0
        };
    let c = cstr(file)?;
    // SAFETY: openat(2) on a descriptor we own with a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, 0o600) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) => OpenError::Denied(format!("{} is a symlink", rel.display())),
            _ => OpenError::Failed(format!("{}: {e}", rel.display())),
        });
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let meta = f.metadata().map_err(|e| OpenError::Failed(e.to_string()))?;
    if !meta.file_type().is_file() {
        return Err(OpenError::Denied(format!(
            "{} is not a regular file",
            rel.display()
        )));
    }
    if meta.nlink() > 1 {
        return Err(OpenError::Denied(format!(
            "{} has another hard link, which may lie outside the project",
            rel.display()
        )));
    }
    Ok(f)
}

/// The folder `name` inside `dir`, made when missing; a symlink is refused.
fn folder(dir: &OwnedFd, name: &std::ffi::OsStr, rel: &Path) -> Result<OwnedFd, OpenError> {
    match open_dir(Some(dir), name) {
        Ok(d) => return Ok(d),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
            return Err(OpenError::Denied(format!(
                "{}: `{}` on the way is a symlink or not a folder",
                rel.display(),
                name.to_string_lossy()
            )));
        }
        Err(e) => return Err(OpenError::Failed(format!("{}: {e}", rel.display()))),
    }
    let c = cstr(name)?;
    // SAFETY: mkdirat(2) on a descriptor we own with a NUL-terminated name.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(OpenError::Failed(format!("{}: {e}", rel.display())));
        }
    }
    open_dir(Some(dir), name).map_err(|e| {
        OpenError::Denied(format!(
            "{}: `{}`: {e}",
            rel.display(),
            name.to_string_lossy()
        ))
    })
}

/// Opens folder `name` (inside `dir`, or as a path), never through a symlink
/// at its last component.
fn open_dir(dir: Option<&OwnedFd>, name: &std::ffi::OsStr) -> std::io::Result<OwnedFd> {
    let c = CString::new(name.as_bytes()).map_err(std::io::Error::other)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    let (at, flags) = match dir {
        Some(d) => (d.as_raw_fd(), flags | libc::O_NOFOLLOW),
        None => (libc::AT_FDCWD, flags),
    };
    // SAFETY: openat(2) with a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::openat(at, c.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn cstr(name: &std::ffi::OsStr) -> Result<CString, OpenError> {
    CString::new(name.as_bytes()).map_err(|_| OpenError::Denied("holds a NUL byte".to_owned()))
}
