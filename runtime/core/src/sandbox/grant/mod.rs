//! The grants: every host capability a hook may be given, one module each
//! (`log`, `state`, `metrics`, `http`, `exec`, `notify`, `read`, `secret`,
//! `transcript`, `write`), what one grant is (`spec`)
//! and the registry that lists them (`registry`).

pub(crate) mod exec;
pub(crate) mod held;
pub(crate) mod http;
pub(crate) mod log;
pub(crate) mod metrics;
pub(crate) mod notify;
pub(crate) mod read;
pub(crate) mod registry;
pub(crate) mod secret;
pub(crate) mod setting;
pub(crate) mod spec;
pub(crate) mod state;
pub(crate) mod table;
pub(crate) mod transcript;
pub(crate) mod write;

pub use registry::ALL;
pub(crate) use registry::{DESIGNED, Declared, gating, link, needing_lock};
pub use spec::Grant;
pub use table::GrantTable;
pub(crate) use table::no_table;
