//! hookrt: a WebAssembly-sandboxed hook runtime for AI agent servers.
//!
//! A hook is a WebAssembly component built against the `define-hook` world
//! (`wit/v<version>/hook.wit`). This crate finds the hooks of an agent folder, builds and
//! caches them, and delivers lifecycle events to them inside Wasmtime with
//! limits that hold. Where each concept lives:
//!
//! - [`slug`]: hook names and their validation.
//! - [`discovery`]: walking `hooks/**` and `subagents/<id>/hooks/**`, rejecting unsafe layouts.
//! - [`config`]: `hookrt.toml` (order, limits, policies, grants, scopes, redaction).
//! - [`limits`]: what a delivery may consume, with the defaults.
//! - [`vocabulary`]: the event kinds a hook can subscribe to.
//! - [`envelope`]: the versioned event record and idempotency keys.
//! - [`build`]: hook sources to components (cargo, one shared target dir).
//! - [`cache`]: precompiled artifacts keyed by content and engine.
//! - [`sandbox`]: the one Wasmtime engine, its configuration and the epoch ticker.
//! - [`host`] and [`capture`]: what a hook's store holds; log and console capture.
//! - [`redaction`]: secrets masked in everything a hook writes.
//! - [`grants`]: which imports a hook may have; everything else refused at load.
//! - [`http`]: outbound `wasi:http` to an allow list, for hooks granted `http`.
//! - [`hook`]: a loaded hook and one call into it.
//! - [`registry`] and [`dispatch`]: registration order and running an event.
//! - [`delivery`] and [`outcome`]: the record of each delivery.
//! - [`audit`]: what each hook is and what binds it.
//! - [`runtime`]: the facade tying the stages together.
//! - [`service`]: the runtime in the background: `emit`, receipts, batches, shutdown;
//!   its writer thread commits and answers receipts, `dispatcher` (private) delivers.
//! - [`journal`]: the durable store of events, acks and dead letters (SQLite, WAL).
//! - [`cascade`]: what a critical hook's final failure turns into.
//! - [`decision`] and [`edit`]: merging answers; validated edits with rollback.
//! - [`state`] and [`metrics`]: per-hook state and metrics behind their imports.
//! - [`scope`]: primary, subagent and aggregate scopes; the transport descriptor.

pub mod audit;
mod bindings;
pub mod build;
pub mod cache;
pub mod capture;
pub mod cascade;
pub mod config;
pub mod decision;
pub mod delivery;
pub mod discovery;
pub mod dispatch;
mod dispatcher;
pub mod edit;
pub mod envelope;
pub mod grants;
pub mod hook;
pub mod host;
pub mod http;
pub mod journal;
mod lanes;
pub mod limits;
pub mod metrics;
pub mod outcome;
pub mod problem;
pub mod redaction;
pub mod registry;
pub mod runtime;
pub mod sandbox;
pub mod scope;
pub mod service;
pub mod slug;
pub mod state;
pub mod vocabulary;

/// The WIT world every hook implements.
pub const WORLD: &str = "hookrt:hook/define-hook";

pub use delivery::{Delivery, EventReport};
pub use envelope::{Durability, Envelope};
pub use outcome::Outcome;
pub use problem::{Problem, Problems};
pub use runtime::Runtime;
pub use service::{HookService, Receipt};
pub use slug::Slug;
