//! Every platform but Linux: no kernel sandbox hookrt uses (macOS's
//! `sandbox-exec` is deprecated, Windows has no per-process file rules a
//! program can ask for). `confinement()` says so, and callers act on it:
//! the `exec` grant is refused unless `unconfined = true`, a build runs
//! without it.

use std::process::Command;

use super::rules::{Confinement, Rules};

/// No kernel sandbox here.
pub(crate) fn confinement() -> Confinement {
    Confinement::None
}

/// Confines nothing, as a Linux kernel without Landlock; refuses the start
/// when `rules.enforced` asks for a sandbox.
pub(crate) fn confine(_cmd: &mut Command, rules: &Rules) -> std::io::Result<()> {
    if rules.enforced {
        return Err(std::io::Error::other(
            "this platform has no kernel sandbox hookrt can use",
        ));
    }
    Ok(())
}

/// No `pidfd_open`: the caller polls for the child's exit.
#[cfg(unix)]
pub(crate) fn pidfd(_pid: i32) -> Option<std::os::fd::OwnedFd> {
    None
}

/// A path that opens `file` itself: `/dev/fd/N` on macOS and the BSDs.
#[cfg(unix)]
pub(crate) fn path_of_open(file: &std::fs::File) -> Option<std::path::PathBuf> {
    use std::os::fd::AsRawFd;
    Some(format!("/dev/fd/{}", file.as_raw_fd()).into())
}

/// None on Windows: the caller reads the file instead of mapping it.
#[cfg(not(unix))]
pub(crate) fn path_of_open(_file: &std::fs::File) -> Option<std::path::PathBuf> {
    None
}

/// Advises the kernel that the mapping at `start` is needed soon
/// (`MADV_WILLNEED`; the pages may still be read on first touch).
///
/// # Safety
/// `start..start + len` is a mapping alive for the call.
#[cfg(unix)]
pub(crate) unsafe fn read_in(start: *const u8, len: usize) -> std::io::Result<()> {
    // SAFETY: the caller's mapping; the advice changes neither its contents
    // nor its protection.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_WILLNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Nothing on Windows: the pages are read on first touch.
///
/// # Safety
/// None needed; kept the same as on the other platforms.
#[cfg(not(unix))]
pub(crate) unsafe fn read_in(_start: *const u8, _len: usize) -> std::io::Result<()> {
    Ok(())
}
