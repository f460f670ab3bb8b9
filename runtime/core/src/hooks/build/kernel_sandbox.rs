//! The kernel sandbox of a cargo build (Linux Landlock): what cargo, rustc,
//! build scripts and proc macros may open at all.
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

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, path_beneath_rules,
};

/// The newest Landlock ABI asked for; an older kernel grants what it has
/// (best effort), one without Landlock nothing.
const LANDLOCK_ABI: ABI = ABI::V5;

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
    let ruleset = rules(&read, &write).map_err(std::io::Error::other)?;
    let mut ruleset: Option<RulesetCreated> = Some(ruleset);
    // SAFETY: the closure runs in the forked child before exec; it only
    // makes the two system calls of `restrict_self` (no_new_privs, then
    // landlock_restrict_self) on a ruleset made before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            if let Some(r) = ruleset.take() {
                r.restrict_self().map_err(std::io::Error::other)?;
            }
            Ok(())
        });
    }
    Ok(())
}

fn rules(read: &[PathBuf], write: &[PathBuf]) -> Result<RulesetCreated, landlock::RulesetError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(LANDLOCK_ABI))?
        .create()?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(LANDLOCK_ABI)))?
        .add_rules(path_beneath_rules(write, AccessFs::from_all(LANDLOCK_ABI)))
}
