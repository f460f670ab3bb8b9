//! Limits: what one delivery of one hook may consume.
//!
//! Every limit has a safe default and can be set per hook in `hookrt.toml`.
//! None can be switched off: an auditor can read a finite bound for each.

use std::time::Duration;

/// Fuel (roughly, wasm instructions) per delivery. A handler that parses an
/// envelope uses a small share of it (docs/performance.md, "Sizes the code
/// assumes"); the default stops a busy loop within a few milliseconds,
/// blocking CPU exhaustion.
pub const DEFAULT_FUEL: u64 = 50_000_000;
/// Wall-clock budget per delivery, enforced by epoch interruption; blocks a hook
/// that hangs the agent's turn (including time spent outside fuel accounting).
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(200);
/// Size of each linear memory (a Rust hook has one); blocks guest-controlled
/// memory exhaustion.
pub const DEFAULT_MEMORY_BYTES: u64 = 32 << 20;
/// Elements per table; blocks table-growth exhaustion.
pub(crate) const DEFAULT_TABLE_ELEMENTS: u64 = 20_000;
/// Core instances per component instantiation (a Rust wasip2 hook needs a few).
pub const DEFAULT_INSTANCES: u64 = 16;
/// Core instances per instantiation of a Python hook, by default. CPython
/// built by componentize-py 0.25.1 is 14 core instances (the interpreter, its
/// libc and its native modules, each a module instance, and the adapters
/// between them), whatever the hook's code does, 38 when its WASI imports
/// are stubbed (`--stub-wasi`): the default leaves room for either and for
/// the next release's, without widening any other hook's.
pub const PYTHON_INSTANCES: u64 = 64;
/// The most core instances per instantiation a pooled hook may have: a
/// hook configured (or defaulted, as Python hooks are) above it runs with
/// on-demand allocation.
pub(crate) const POOL_INSTANCES: u64 = PYTHON_INSTANCES;
/// Tables and memories per store, for the same reason as instances.
pub(crate) const DEFAULT_TABLES: u64 = 16;
/// Linear memories per store.
pub(crate) const DEFAULT_MEMORIES: u64 = 4;
/// Bytes of log messages and stdout/stderr kept per delivery; blocks a log flood
/// from exhausting host memory or drowning other hooks' diagnostics.
pub(crate) const DEFAULT_OUTPUT_BYTES: u64 = 64 << 10;

/// Log and console bytes one hook may emit per minute, across deliveries;
/// blocks a hook that stays under its per-delivery cap but floods over time.
pub(crate) const DEFAULT_LOG_BYTES_PER_MINUTE: u64 = 1 << 20;

/// Log lines one hook may keep per minute, across deliveries: empty lines cost
/// no bytes, so this (not `log_bytes_per_minute`) bounds a hook that floods
/// the log sink with empty lines delivery after delivery.
pub(crate) const MAX_LOG_LINES_PER_MINUTE: u64 = 60_000;

/// Largest component file hookrt will compile (hooks' usual sizes are in
/// docs/performance.md); blocks a component that exhausts the host's compile
/// time and memory before any limit of a delivery applies.
pub const MAX_COMPONENT_BYTES: u64 = 32 << 20;

/// Highest values accepted from configuration, so no limit is effectively off.
pub(crate) const MAX_FUEL: u64 = 10_000_000_000;
/// Highest wall-clock budget accepted.
pub(crate) const MAX_DEADLINE: Duration = Duration::from_secs(600);
/// Highest memory limit accepted (4 GiB, the wasm32 address space).
pub(crate) const MAX_MEMORY_BYTES: u64 = 4 << 30;
/// Highest output cap accepted.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 64 << 20;

/// What bounds a hook's CPU within a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metering {
    /// Fuel (deterministic: the same input stops at the same instruction)
    /// and the wall-clock deadline.
    #[default]
    Fuel,
    /// The wall-clock deadline only (epoch interruption): no fuel counting
    /// is compiled into the hook, so its calls are faster, but where a busy
    /// loop stops depends on the machine's speed. The deadline still binds,
    /// in guest code and in host calls alike.
    Epoch,
}

impl Metering {
    /// Its word in `hookrt.toml` and `hookrt audit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Metering::Fuel => "fuel",
            Metering::Epoch => "epoch",
        }
    }
}

/// The limits in force for one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Limits {
    /// What bounds CPU: fuel and the deadline, or the deadline alone.
    pub metering: Metering,
    /// Fuel units per delivery (not counted under [`Metering::Epoch`]).
    pub fuel: u64,
    /// Wall-clock budget per delivery, in milliseconds.
    pub deadline_ms: u64,
    /// Linear memory per instance, in bytes.
    pub memory_bytes: u64,
    /// Elements per table.
    pub table_elements: u64,
    /// Core instances per instantiation.
    pub instances: u64,
    /// Tables per store.
    pub tables: u64,
    /// Memories per store.
    pub memories: u64,
    /// Log and stdout/stderr bytes kept per delivery.
    pub output_bytes: u64,
    /// Log and stdout/stderr bytes kept per minute across the hook's deliveries.
    pub log_bytes_per_minute: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            metering: Metering::Fuel,
            fuel: DEFAULT_FUEL,
            deadline_ms: DEFAULT_DEADLINE.as_millis() as u64,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            table_elements: DEFAULT_TABLE_ELEMENTS,
            instances: DEFAULT_INSTANCES,
            tables: DEFAULT_TABLES,
            memories: DEFAULT_MEMORIES,
            output_bytes: DEFAULT_OUTPUT_BYTES,
            log_bytes_per_minute: DEFAULT_LOG_BYTES_PER_MINUTE,
        }
    }
}

impl Limits {
    /// The wall-clock budget as a duration.
    pub(crate) fn deadline(&self) -> Duration {
        Duration::from_millis(self.deadline_ms)
    }
}
