//! Layer 2, the sandbox: the one owner of Wasmtime. The engine and its
//! settings, the limits, what a hook's store holds, every host import a hook
//! can be granted (log, state, metrics, http, exec, transcript, write), capture and redaction of what
//! it writes, and the bindings of each world version.

pub(crate) mod bounded;
pub(crate) mod capture;
pub(crate) mod egress;
pub(crate) mod engine;
pub(crate) mod failure;
pub(crate) mod grant;
pub(crate) mod grants;
pub(crate) mod host;
pub(crate) mod http;
pub(crate) mod limits;
pub(crate) mod metrics;
pub(crate) mod outcome;
pub(crate) mod redaction;
pub(crate) mod state;
pub(crate) mod ticker;
pub(crate) mod wit;

// What an embedder or an auditor may read or tune of the sandbox.
pub use capture::{LogLine, Output};
pub use engine::{Allocator, Sandbox, engine_config, engine_config_metered};
pub use grant::exec::Table as ExecTable;
pub use grant::notify::Table as NotifyTable;
pub use grant::read::Table as ReadTable;
pub use grant::registry::CAPABILITIES;
pub use grant::secret::Table as SecretTable;
pub use grant::transcript::Table as TranscriptTable;
pub use grant::write::{Place as WritePlace, Table as WriteTable};
pub use grant::{ALL as GRANTS, Grant, GrantTable};
pub use grants::{DEFAULT_GRANTS, ImportAudit, Need};
pub use http::MAX_RESPONSE_BYTES;
pub use limits::{
    DEFAULT_DEADLINE, DEFAULT_FUEL, DEFAULT_INSTANCES, DEFAULT_MEMORY_BYTES, Limits,
    MAX_COMPONENT_BYTES, Metering, PYTHON_INSTANCES,
};
pub use metrics::{Metrics, MetricsAccess, Series};
pub use redaction::Redactor;
pub use state::{StateAccess, StateStore};
pub use wit::{NEWEST_VERSION, SUPPORTED_VERSIONS};
