//! The kernel sandbox of a cargo build (Linux Landlock, `crate::platform`):
//! what cargo, rustc, build scripts and proc macros may open at all.
//!
//! The dep-info check (`depinfo.rs`) sees what the compiler read, not what
//! build code read (a `build.rs` copying a host file into `OUT_DIR` shows
//! only the copy). Under Landlock the whole build opens files only beneath:
//!
//! - for reading and running: the build's roots (the SDK and what its
//!   top-level links name, the sysroot, the operator's cargo configuration,
//!   the `Cargo.toml` files above the SDK that cargo inherits from) and the
//!   system's folders tools need (`/usr`, `/lib`, `/lib64`, `/bin`, `/etc`,
//!   `/run`, `/proc`, `/sys`);
//! - for writing as well: the hook's own crate (`hookrt lock`'s cargo
//!   writes its `Cargo.lock`; a build script may write there), the cache's
//!   cargo home, the target dir, the build's own `HOME`/`TMPDIR` and `/dev`.
//!
//! Everything else (the user's home, the cache's key, other agent folders)
//! cannot be opened. Without Landlock (before Linux 5.13, or switched off)
//! the build runs without it; the environment, the dep-info check and the
//! time limit still hold (docs/sandbox.md says which holds where).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::platform::Rules;

/// System folders the build's tools read and run from: the loader and
/// libraries, the C toolchain build scripts link host code with, TLS roots
/// and name resolution for cargo's downloads, and the process's own
/// `/proc` and `/sys` entries (CPU counts).
const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/run", "/proc", "/sys",
];

/// System folders the build writes (`/dev/null`, terminals).
const SYSTEM_WRITE: &[&str] = &["/dev"];

/// Restricts what `cmd`, once started, and every process it starts can
/// open to `read` and `write` (and the system's folders above). Paths that
/// do not exist are left out. An error only when the rules cannot be made;
/// a kernel without Landlock is no error.
pub(crate) fn confine(cmd: &mut Command, read: &[&Path], write: &[&Path]) -> std::io::Result<()> {
    let existing = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths.into_iter().filter(|p| p.exists()).collect()
    };
    let read = existing(
        SYSTEM_READ
            .iter()
            .map(PathBuf::from)
            .chain(read.iter().map(|p| p.to_path_buf()))
            .collect(),
    );
    let write = existing(
        SYSTEM_WRITE
            .iter()
            .map(PathBuf::from)
            .chain(write.iter().map(|p| p.to_path_buf()))
            .collect(),
    );
    let rules = Rules {
        read,
        trees: write,
        ..Rules::default()
    };
    crate::platform::confine(cmd, &rules)
}
