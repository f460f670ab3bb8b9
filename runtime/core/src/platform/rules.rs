//! What the kernel sandbox is asked for (`Rules`) and what a host gives
//! (`Confinement`), whatever the platform.

use std::path::PathBuf;

/// How much of the kernel sandbox this host gives.
// Elsewhere than Linux: only `None` is made.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Confinement {
    /// Files and TCP (Landlock ABI 4 or later).
    Full,
    /// Files only (Landlock ABI 1 to 3): TCP is not refused.
    FilesOnly,
    /// None (no Landlock, or not Linux).
    None,
}

/// What a confined process, and every process it starts, may open.
// Elsewhere than Linux: only `enforced` is read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Default)]
pub(crate) struct Rules {
    /// Read and run beneath these.
    pub(crate) read: Vec<PathBuf>,
    /// Read and write these files.
    pub(crate) files: Vec<PathBuf>,
    /// Everything beneath these: make, change and remove files and folders.
    pub(crate) trees: Vec<PathBuf>,
    /// Refuse every TCP bind and connect (where the kernel can).
    pub(crate) no_network: bool,
    /// Fail the start when the kernel enforces none of it.
    pub(crate) enforced: bool,
}
