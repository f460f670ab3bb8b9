//! Linux: the kernel sandbox is Landlock (the `landlock` crate), asked for
//! its ABI 5 and taking what the kernel has.

use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

use super::rules::{Confinement, Rules};

/// The newest Landlock ABI asked for; an older kernel grants what it has.
const ABI_WANTED: ABI = ABI::V5;

/// What this kernel's Landlock gives, found out once.
pub(crate) fn confinement() -> Confinement {
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

/// Restricts `cmd`, once started, to `rules`. An error only when the rules
/// cannot be made; a kernel without Landlock confines nothing and is no
/// error unless `rules.enforced` (then the start fails).
pub(crate) fn confine(cmd: &mut Command, rules: &Rules) -> std::io::Result<()> {
    let ruleset = ruleset(rules).map_err(std::io::Error::other)?;
    let mut ruleset: Option<RulesetCreated> = Some(ruleset);
    let enforced = rules.enforced;
    // SAFETY: the closure runs in the forked child before exec; it only
    // makes the system calls of `restrict_self` (no_new_privs, then
    // landlock_restrict_self) on a ruleset made before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            if let Some(r) = ruleset.take() {
                let status = r.restrict_self().map_err(std::io::Error::other)?;
                if enforced && status.ruleset == RulesetStatus::NotEnforced {
                    return Err(std::io::Error::other("Landlock is not enforced"));
                }
            }
            Ok(())
        });
    }
    Ok(())
}

fn ruleset(rules: &Rules) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_WANTED))?;
    if rules.no_network {
        // Handled with no rule allowing any port: every bind and connect fails.
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED))?;
    }
    ruleset
        .create()?
        .add_rules(path_beneath_rules(
            &rules.read,
            AccessFs::from_read(ABI_WANTED),
        ))?
        .add_rules(path_beneath_rules(
            &rules.files,
            AccessFs::from_file(ABI_WANTED),
        ))?
        .add_rules(path_beneath_rules(
            &rules.trees,
            AccessFs::from_all(ABI_WANTED),
        ))
}

/// A descriptor that becomes readable when process `pid` (our child, not
/// reaped yet) exits; `None` where the kernel has no `pidfd_open` (before
/// 5.3).
pub(crate) fn pidfd(pid: i32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new
    // descriptor or -1; it reads no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a descriptor the call just opened, owned by nothing else.
    i32::try_from(fd)
        .ok()
        .filter(|fd| *fd >= 0)
        .map(|fd| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// A path that opens `file` itself, whatever its name points to by now.
pub(crate) fn path_of_open(file: &std::fs::File) -> Option<std::path::PathBuf> {
    use std::os::fd::AsRawFd;
    Some(format!("/proc/self/fd/{}", file.as_raw_fd()).into())
}

/// Reads the pages of the mapping at `start`, `len` bytes long, in now
/// (`MADV_POPULATE_READ`, Linux 5.14: an older kernel says no, and the
/// pages are read on first touch).
///
/// # Safety
/// `start..start + len` is a mapping alive for the call.
pub(crate) unsafe fn read_in(start: *const u8, len: usize) -> std::io::Result<()> {
    // SAFETY: the caller's mapping; MADV_POPULATE_READ only reads it, as a
    // load would, and changes neither its contents nor its protection.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_POPULATE_READ) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
