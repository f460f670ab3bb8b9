//! What hookrt asks of the operating system that differs between
//! platforms, in one place. Linux (`linux.rs`) has it all; elsewhere
//! (`other.rs`, macOS and Windows, checked by `scripts/platforms` but not
//! tested) each item has its documented fallback (docs/install.md,
//! "Platforms"):
//!
//! - the kernel sandbox of a build and of an `exec` run (Landlock): none,
//!   as on a Linux kernel before 5.13 — a build runs without it (its
//!   environment, dep-info check and time limit still hold), and the
//!   `exec` grant is refused unless its table says `unconfined = true`.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
pub(crate) use other::*;

mod rules;
pub(crate) use rules::{Confinement, Rules};
