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
//! | 0 | `platform/` | what differs between operating systems (the kernel sandbox), one module per platform |
//! | 1 | `event/` | kinds (the vocabulary), the envelope, scopes, answers |
//! | 2 | `sandbox/` | the Wasmtime engine, limits, the store and host imports (log, state, metrics, http), capture, redaction, grants, one module per world version |
//! | 3 | `hooks/` | the agent folder (slugs, discovery, `hookrt.toml`), the cache dir (stamps, artifacts, start records), building sources into components, loaded hooks (load, call, the lock, the registry) |
//! | 4 | `delivery/` | the delivery record, decision merge, edits, the failure cascade, retries and the final attempt ([`delivery`]), the one event loop and its sink |
//! | 5 | `runtime.rs`, `audit.rs`, `replay.rs` | the [`Runtime`] facade, [`audit`], and [`replay`] (`hookrt test`) |
//! | 6 | `service/` | the journal, report and work types, lanes, the event loop's journal-backed sink, the acker, the dispatcher and writer threads, [`HookService`] |
//! | 7 | `front/` | the front-end kit ([`front`]): input with ordinals and line bounds, the delivery line |
//!
//! The surface is tiered, as axum's is: the crate root holds what an
//! embedder needs (load a [`Runtime`], start a [`HookService`], build an
//! [`Envelope`], read what came back: [`Receipt`], [`Delivery`],
//! [`Resolution`] and the answers, the errors); a few public modules hold
//! the rest, each with one concern:
//!
//! - [`event`]: the vocabulary of kinds, the envelope's limits and keys,
//!   ordinals, Eve's and Claude Code's streams;
//! - [`sandbox`]: limits, grants, the engine's settings, hooks' metrics and state;
//! - [`hooks`]: discovery, building, `hookrt.toml`, the lock, slugs, a loaded hook;
//! - [`delivery`]: the delivery policy (retries, dead letters, the cascade);
//! - [`journal`]: reading and maintaining a journal (its writes are the service's);
//! - [`service`]: the service's queue bounds;
//! - [`audit`] and [`replay`]: what each hook may do, and `hookrt test`;
//! - [`front`]: the front-end kit every way in shares.
//!
//! An embedder needs [`Runtime::load`], [`HookService::start`],
//! [`Envelope::new`], [`class_of`] (to choose [`HookService::emit`] or
//! [`HookService::resolve`]) and the types they return.

#![warn(missing_docs)]

/// docs/embedding.md, included so that its complete example compiles as a
/// doctest (`no_run`: it loads `example-hooks/agent`); its snippets are parts
/// of it, marked `ignore`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/embedding.md")]
pub(crate) struct EmbeddingGuide;

pub mod audit;
pub mod delivery;
pub mod event;
pub mod front;
pub mod hooks;
mod platform;
pub mod replay;
mod runtime;
pub mod sandbox;
pub mod service;

/// Reading and maintaining a journal (docs/journal.md): its status, pending
/// deliveries, dead letters and their re-drive, pruning, the lock one
/// process holds on it, and the auditor's trail (verifying its hash chain
/// and signed checkpoints, the keys that sign them, signed receipts of
/// decisions). Writing it is the service's alone.
pub mod journal {
    pub use crate::service::journal::keys::{
        KeyError, generate_key, public_hex, read_signing_key, read_verifying_key,
    };
    pub use crate::service::journal::receipt::{
        ReceiptError, SignedReceipt, check_receipt, read_receipt, receipt_in_journal, sign_receipt,
    };
    #[doc(hidden)]
    pub use crate::service::journal::trail::checkpoint_body;
    pub use crate::service::journal::trail::{
        DEFAULT_CHECKPOINT_EVERY, TrailOptions, entry_hash, text_sha256, trail_context,
    };
    pub use crate::service::journal::verdict::AnchorError;
    pub use crate::service::journal::verify::{Row, export, head, verify_segment};
    pub use crate::service::journal::{
        Anchor, Break, DEFAULT_RETENTION, DeadLetter, Expect, Journal, JournalError, JournalStatus,
        PRUNE_BATCH, PendingDelivery, Plan, TrailContext, Verified, verify,
    };
    pub use crate::service::journal::{
        CallEvent, CoverageReadError, CoverageRecords, Voter, coverage_records,
    };
    pub use crate::service::owner::JournalLock;
    pub use ed25519_dalek::SigningKey;
    pub use ed25519_dalek::VerifyingKey;
}

/// The WIT world every hook implements.
pub const WORLD: &str = "hookrt:hook/define-hook";

// Events and the envelope.
pub use event::envelope::{Coordinates, Durability, Envelope, EnvelopeError};
pub use event::kind::{EventClass, class_of};
pub use event::scope::{Scope, Transport};

// Loading hooks.
pub use hooks::build::component::BuildOptions;
pub use hooks::problem::{Problem, ProblemKind, Problems};

// Deliveries and what they decided.
pub use delivery::decision::{
    CallDecision, ContextPiece, FileEditDecision, GateDecision, MAX_CONTEXT_BYTES,
    PermissionDecision, Rewrite, ToolApproval,
};
pub use delivery::edit::{EditResult, EditStatus};
pub use delivery::record::{Delivery, Dispatch, Resolution};
pub use event::answer::{Approval, FileEdit};
pub use sandbox::outcome::Outcome;

// The facade.
pub use runtime::{Runtime, check, read_lock};

// The service.
pub use service::api::{HookService, PendingReceipt, ServiceOptions, StartError};
pub use service::report::{Observation, Observer, Receipt, Reloaded, ResolveReply, Stats};
pub use service::work::{EmitError, ReloadError};
