//! hookrt: a WebAssembly-sandboxed hook runtime for AI agent servers.
//!
//! A hook is a WebAssembly component built against the `define-hook` world
//! (`wit/v<version>/hook.wit`). This crate finds the hooks of an agent folder,
//! builds and caches them, and delivers lifecycle events to them inside
//! Wasmtime with limits that hold.
//!
//! The source is layered; each folder imports only the layers above it in
//! this list (`tests/architecture.rs` checks it):
//!
//! | layer | folder | what lives there |
//! |---|---|---|
//! | 1 | `event/` | kinds (the vocabulary), the envelope, scopes, answers |
//! | 2 | `sandbox/` | the Wasmtime engine, limits, the store and host imports (log, state, metrics, http), capture, redaction, grants, one module per world version |
//! | 3 | `hooks/` | slugs, discovery, `hookrt.toml`, build, the artifact cache, load, call, the registry |
//! | 4 | `delivery/` | the delivery record, decision merge, edits, the failure cascade, dispatch |
//! | 5 | `runtime.rs`, `audit.rs`, `replay.rs` | the [`Runtime`] facade, [`audit`], and [`replay`] (`hookrt test`) |
//! | 6 | `service/` | the journal, report and work types, retries, lanes, the dispatcher and writer threads, [`HookService`] |
//!
//! Every module is private; what embedders, the `hookrt` command and the
//! tests use is re-exported here, so there is one import path: `hookrt::Name`.
//! An embedder needs [`Runtime::load_async`], [`HookService::start_async`],
//! [`Envelope::new`], [`class_of`] (to choose [`HookService::emit`] or
//! [`HookService::resolve`]) and the types they return.

#![warn(missing_docs)]

mod audit;
mod delivery;
mod event;
mod hooks;
mod replay;
mod runtime;
mod sandbox;
mod service;

/// The WIT world every hook implements.
pub const WORLD: &str = "hookrt:hook/define-hook";

// Layer 1: events.
pub use event::answer::{Answer, Approval, FileEdit};
pub use event::claude::{CLAUDE_EVENTS, ClaudeError, claude_envelope};
pub use event::data::Data;
pub use event::envelope::{
    Coordinates, Durability, Envelope, EnvelopeError, MAX_DATA_BYTES, MAX_ID_LEN, SCHEMA_VERSION,
    idempotency_key, now_rfc3339,
};
pub use event::eve::{EveError, EveStream};
pub use event::kind::{
    CUSTOM_PREFIX, EventClass, EventKind, KINDS, OBSERVE_PREFIX, Origin, WILDCARD, class_of,
    is_known, is_subscribable, observed_kind, subscription_problem, unknown_kind_message,
};
pub use event::ordinal::{MAX_OPEN_STEPS, Ordinals};
pub use event::scope::{Scope, Transport};

// Layer 2: the sandbox.
pub use sandbox::capture::LogLine;
pub use sandbox::engine::{
    Allocator, MAX_WORKERS, SandboxError, engine_config, engine_config_metered,
};
pub use sandbox::grants::{CAPABILITIES, DEFAULT_GRANTS, ImportAudit, Need};
pub use sandbox::http::MAX_RESPONSE_BYTES;
pub use sandbox::limits::{
    DEFAULT_DEADLINE, DEFAULT_FUEL, DEFAULT_MEMORY_BYTES, Limits, MAX_COMPONENT_BYTES, Metering,
};
pub use sandbox::metrics::{Metrics, Series};
pub use sandbox::outcome::Outcome;
pub use sandbox::redaction::Redactor;
pub use sandbox::state::StateStore;
pub use sandbox::wit::{NEWEST_VERSION, SUPPORTED_VERSIONS};

// Layer 3: hooks.
pub use hooks::build::{BuildEvent, BuildOptions, BuiltHook, DEFAULT_SDK_DIR, SDK_REQ, build};
pub use hooks::cache_dir::default_cache_dir;
pub use hooks::cargo::{HOOK_TARGET, HOOK_TOOLCHAIN};
pub use hooks::config::{CONFIG_FILE, Config, Mode};
pub use hooks::discovery::{
    DiscoveredHook, Discovery, MAX_ENTRIES, MAX_HOOKS, SourceKind, discover,
};
pub use hooks::load::LoadedHook;
pub use hooks::lock::{LOCK_FILE, Lock, LockStatus, Pin};
pub use hooks::problem::{Problem, ProblemKind, Problems};
pub use hooks::settings::{HookSettings, InstancePolicy, OnFailure, RetryPolicy};
pub use hooks::slug::{Slug, SlugError};
pub use hooks::typescript::{BUILD_TIMEOUT as JS_BUILD_TIMEOUT, toolchain_dir as js_toolchain_dir};

// Layer 4: delivery.
pub use delivery::cascade::{Failure, SESSION_FAILED, TURN_FAILED, cascade_event, cascade_line};
pub use delivery::decision::{CallDecision, FileEditDecision, ToolApproval, Vote};
pub use delivery::decision_workers::DecisionWorkers;
pub use delivery::edit::{EditAccount, EditResult, EditStatus};
pub use delivery::record::{Delivery, Dispatch, Resolution};

// Layer 5: the facade.
pub use audit::{Audit, HookAudit, Subscription, audit, author_warnings};
pub use replay::{Difference, Replay, replay};
pub use runtime::{Runtime, check};

// Layer 6: the service.
pub use service::api::{HookService, PendingReceipt, ServiceOptions, StartError};
pub use service::journal::{
    Ack, Answered, DEFAULT_RETENTION, DeadLetter, Inserted, Journal, JournalError, JournalStatus,
    PRUNE_BATCH, PendingDelivery, PendingEvent, Plan,
};
pub use service::owner::{JournalLock, lock_path};
pub use service::report::{Observation, Observer, Receipt, Reloaded, ResolveReply, Stats};
pub use service::work::{
    DISPATCH_QUEUE, EmitError, MAX_BATCH, MEMORY_DEDUP_WINDOW, ReloadError, SUBMIT_QUEUE,
};
