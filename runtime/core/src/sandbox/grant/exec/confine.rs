//! The operating system's sandbox of a run (Linux Landlock, through
//! `crate::platform`): what the program, and everything it starts, may
//! open and connect to.
//!
//! - read and run: the project, the program's own folder and the one above
//!   it (a toolchain: `bin/` and its `lib/`), the table's `read` folders and
//!   the system's (`/usr`, `/lib`, `/lib64`, `/bin`, `/sbin`, `/etc`,
//!   `/proc`, `/sys`, `/dev`);
//! - write as well: only the `writable-path` files the hook named, and
//!   `/dev/null`; and make, change and remove files and folders beneath the
//!   table's `write` folders (inside the project) and the run's private
//!   temporary folder (`tmp = true`);
//! - TCP bind and connect: refused unless the table sets `network = true`
//!   (Landlock ABI 4, Linux 6.7; an older kernel cannot refuse them, and
//!   `hookrt audit` says the run is then only file-confined).
//!
//! A kernel without Landlock (before 5.13) confines nothing: the grant is
//! refused there unless the table sets `unconfined = true`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) use crate::platform::Confinement;
use crate::platform::Rules;

/// System folders a program reads and runs from: the loader, libraries,
/// `/etc` (the loader's cache, locale, name service), its own `/proc`
/// entries, `/sys` (CPU counts) and `/dev` (`/dev/urandom`, `/dev/null`).
const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev",
];

/// What this host's kernel sandbox gives (`crate::platform`).
pub(crate) fn available() -> Confinement {
    crate::platform::confinement()
}

/// Restricts `cmd`, once started, to reading `read` (and the system's
/// folders), writing the files `write`, everything beneath `folders`, and
/// TCP only when `network`; the start fails where the kernel enforces none
/// of it. Paths that do not exist are left out.
pub(crate) fn confine(
    cmd: &mut Command,
    read: &[PathBuf],
    write: &[PathBuf],
    folders: &[PathBuf],
    network: bool,
) -> std::io::Result<()> {
    let existing = |paths: &mut dyn Iterator<Item = PathBuf>| -> Vec<PathBuf> {
        paths.filter(|p| p.exists()).collect()
    };
    let rules = Rules {
        read: existing(
            &mut SYSTEM_READ
                .iter()
                .map(PathBuf::from)
                .chain(read.iter().cloned()),
        ),
        files: existing(
            &mut [PathBuf::from("/dev/null")]
                .into_iter()
                .chain(write.iter().cloned()),
        ),
        trees: existing(&mut folders.iter().cloned()),
        no_network: !network,
        enforced: true,
    };
    crate::platform::confine(cmd, &rules)
}

/// The folders a program at `program` reads besides the project: its own
/// and the one above it.
pub(crate) fn toolchain(program: &Path) -> Vec<PathBuf> {
    program
        .parent()
        .map(|bin| {
            let mut dirs = vec![bin.to_path_buf()];
            dirs.extend(
                bin.parent()
                    .filter(|p| *p != Path::new("/"))
                    .map(Path::to_path_buf),
            );
            dirs
        })
        .unwrap_or_default()
}
