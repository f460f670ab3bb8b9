//! Layer 2, the sandbox: the one owner of Wasmtime. The engine and its
//! settings, the limits, what a hook's store holds, every host import a hook
//! can be granted (log, state, metrics, http), capture and redaction of what
//! it writes, and the bindings of each world version.

pub(crate) mod bounded;
pub(crate) mod capture;
pub(crate) mod egress;
pub(crate) mod engine;
pub(crate) mod grants;
pub(crate) mod host;
pub(crate) mod http;
pub(crate) mod limits;
pub(crate) mod metrics;
pub(crate) mod outcome;
pub(crate) mod redaction;
pub(crate) mod state;
pub(crate) mod wit;
