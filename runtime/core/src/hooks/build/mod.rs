//! Building hook sources into components: what keys a built component
//! (`digest`), what a single-file hook's source may not say (`confine`),
//! running cargo (`cargo`), what a Rust build may have read (`depinfo`) and may open
//! at all (`kernel_sandbox`), the pinned toolchains of script hooks
//! (`toolchain`) for TypeScript (`typescript`) and Python (`python`), and
//! the build of an agent folder's hooks that uses them (`component`), and
//! the writing of a crate hook's `Cargo.lock` as that build resolves it
//! (`cargo_lock`).

pub(crate) mod cargo;
pub(crate) mod cargo_lock;
pub(crate) mod component;
pub(crate) mod confine;
pub(crate) mod crate_inputs;
pub(crate) mod depinfo;
pub(crate) mod digest;
pub(crate) mod kernel_sandbox;
pub(crate) mod python;
pub(crate) mod toolchain;
pub(crate) mod typescript;
