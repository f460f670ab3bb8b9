//! The operating system's sandbox of a run (Linux Landlock): what the
//! program, and everything it starts, may open and connect to.
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

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

/// The newest Landlock ABI asked for; an older kernel grants what it has.
const ABI_WANTED: ABI = ABI::V5;

/// System folders a program reads and runs from: the loader, libraries,
/// `/etc` (the loader's cache, locale, name service), its own `/proc`
/// entries, `/sys` (CPU counts) and `/dev` (`/dev/urandom`, `/dev/null`).
const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev",
];

/// How much of the sandbox this kernel gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Confinement {
    /// Files and TCP (Landlock ABI 4 or later).
    Full,
    /// Files only (Landlock ABI 1 to 3): TCP is not refused.
    FilesOnly,
    /// None (no Landlock).
    None,
}

/// What this kernel's Landlock gives, found out once.
pub(crate) fn available() -> Confinement {
    static FOUND: std::sync::OnceLock<Confinement> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        let probe = |abi: ABI| {
            Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(abi))
                .and_then(|r| r.create())
                .is_ok()
        };
        if probe(ABI::V4) {
            Confinement::Full
        } else if probe(ABI::V1) {
            Confinement::FilesOnly
        } else {
            Confinement::None
        }
    })
}

/// Restricts `cmd`, once started, to reading `read` (and the system's
/// folders), writing the files `write`, everything beneath `folders`, and
/// TCP only when `network`. Paths that do not exist are left out.
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
    let read = existing(
        &mut SYSTEM_READ
            .iter()
            .map(PathBuf::from)
            .chain(read.iter().cloned()),
    );
    let write = existing(
        &mut [PathBuf::from("/dev/null")]
            .into_iter()
            .chain(write.iter().cloned()),
    );
    let folders = existing(&mut folders.iter().cloned());
    let ruleset = rules(&read, &write, &folders, network).map_err(std::io::Error::other)?;
    let mut ruleset: Option<RulesetCreated> = Some(ruleset);
    // SAFETY: the closure runs in the forked child before exec; it only
    // makes the system calls of `restrict_self` (no_new_privs, then
    // landlock_restrict_self) on a ruleset made before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            if let Some(r) = ruleset.take() {
                let status = r.restrict_self().map_err(std::io::Error::other)?;
                if status.ruleset == RulesetStatus::NotEnforced {
                    return Err(std::io::Error::other("Landlock is not enforced"));
                }
            }
            Ok(())
        });
    }
    Ok(())
}

fn rules(
    read: &[PathBuf],
    write: &[PathBuf],
    folders: &[PathBuf],
    network: bool,
) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_WANTED))?;
    if !network {
        // Handled with no rule allowing any port: every bind and connect fails.
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED))?;
    }
    let file_rights = AccessFs::from_file(ABI_WANTED);
    ruleset
        .create()?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(ABI_WANTED)))?
        .add_rules(path_beneath_rules(write, file_rights))?
        .add_rules(path_beneath_rules(folders, AccessFs::from_all(ABI_WANTED)))
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
