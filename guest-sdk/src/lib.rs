//! Write hookrt hooks in Rust: one struct, one method per event kind, one macro call.
//!
//! A hook is a WebAssembly component for the `define-hook` world (`wit/v0.4.0/hook.wit`).
//! This crate hides the generated bindings: an author writes a `Default` struct (an
//! instance cache that lives as long as the component instance), handler methods, and
//! one [`define_hook!`] call mapping event kinds (or `*`) to methods, optionally preceded
//! by `configure => method` to read the hook's `config` table from `hookrt.toml`.
//!
//! ```no_run
//! use hookrt_sdk::prelude::*;
//!
//! #[derive(Default)]
//! pub struct Guard { blocked: Vec<String> }
//!
//! impl Guard {
//!     fn setup(&mut self, config: &serde_json::Value) -> HookResult {
//!         self.blocked = serde_json::from_value(config["blocked"].clone())
//!             .map_err(|err| HookError::new(format!("config.blocked must be a list of tool names: {err}")))?;
//!         Ok(())
//!     }
//!     fn requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
//!         let data: ActionsRequested = event.data()?;   // typed data, error if shape/kind wrong
//!         Ok(data.actions.iter().map(|a| {
//!             if self.blocked.contains(&a.tool) { Approval::deny("blocked by config") } else { Approval::Abstain }
//!         }).collect())
//!     }
//!     fn any(&mut self, event: &Event, cx: &Context) -> HookResult {
//!         safe_log(event, cx);                           // ids, kind and timing only
//!         Ok(())
//!     }
//! }
//!
//! hookrt_sdk::define_hook!(Guard {
//!     configure => setup,
//!     "actions.requested" => requested,
//!     "*" => any,
//! });
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasip2` (crate type `cdylib`).
//!
//! The typed way, for new hooks: implement [`Hook`] (one method per event kind, typed
//! data, answers tied to the event's class, typed `Config`) and put
//! `#[hookrt_sdk::hook]` on the `impl` block; the hook subscribes to the methods it
//! writes, so a misspelled kind does not compile ([`hook`](mod@hook) says more).
//!
//! ```no_run
//! # use hookrt_sdk::prelude::*;
//! #[derive(Default)]
//! pub struct Counter;
//!
//! #[hookrt_sdk::hook]
//! impl Hook for Counter {
//!     // Watches `actions.requested` without a vote: a bug here denies nothing.
//!     fn actions_requested_observed(&mut self, data: ActionsRequested, _e: &Event, _cx: &Context) -> HookResult {
//!         metrics::counter("tool_calls", data.actions.len() as u64, &[]);
//!         Ok(())
//!     }
//! }
//! ```
//!
//! `define_hook!` (above) keeps working in SDK 0.2.
//!
//! Answers follow the event's class: approvals for `actions.requested`, a
//! [`FileEditAnswer`] for `file.edit.requested`, the edited state for `step.completed` and
//! `turn.completed`, [`Block`] for the block gates (`prompt.submitted`,
//! `compaction.requested`, `task.created`, `config.changed`), [`Continuation`] for
//! `turn.stopping` and [`PermissionAnswer`] for `permission.requested`. A policy rewrites
//! a call's input only from a `rewrite:` subscription (the `Hook` methods
//! `actions_requested_rewrite` and `permission_requested_rewrite`, or a
//! `"rewrite:actions.requested"` key), returning [`CallAnswer`]s; any handler may add
//! text to the model's context with [`context::add`]:
//!
//! ```no_run
//! # use hookrt_sdk::prelude::*;
//! #[derive(Default)]
//! pub struct Workdir;
//!
//! #[hookrt_sdk::hook]
//! impl Hook for Workdir {
//!     // Shell calls run in the sandbox folder, whatever `cwd` the model asked for.
//!     fn actions_requested_rewrite(&mut self, data: ActionsRequested, _e: &Event, _cx: &Context) -> HookResult<Vec<CallAnswer>> {
//!         Ok(data.actions.into_iter().map(|call| match call.input.clone() {
//!             serde_json::Value::Object(mut input) if call.tool == "run_shell" => {
//!                 input.insert("cwd".into(), "/sandbox".into());
//!                 CallAnswer::rewrite(Approval::Allow, input.into())
//!             }
//!             _ => CallAnswer::keep(Approval::Abstain),
//!         }).collect())
//!     }
//!     // The turn goes on until the tests were run; the model is told why.
//!     fn turn_stopping(&mut self, data: TurnStopping, _e: &Event, _cx: &Context) -> HookResult<Continuation> {
//!         let tested = data.last_message.as_deref().is_some_and(|m| m.contains("tests pass"));
//!         if tested || data.continued {
//!             return Ok(Continuation::Stop);
//!         }
//!         context::add("This repository's tests run with `make test`.");
//!         Ok(Continuation::continue_turn("Run the tests before you finish."))
//!     }
//! }
//! ```
//!
//! Where things live:
//! - [`Event`], [`Context`], [`EventClass`], [`Coordinates`], [`Durability`], [`Scope`],
//!   [`Transport`]: what a handler receives (`event.rs`). The context also names the agent
//!   and session ([`Context::agent`], [`Context::session`]), the hook's scope (primary,
//!   one subagent, or an aggregate observer whose events carry `{}` as data) and how the
//!   event reached hookrt ([`Context::transport`], a description only).
//! - [`events`]: typed data per kind ([`events::KINDS`] lists the vocabulary), and
//!   [`events::AgentInput`], the state edit hooks change (`agent_input.rs`).
//! - [`Response`], [`IntoResponse`], [`Approval`], [`CallAnswer`], [`FileEditAnswer`],
//!   [`Block`], [`Continuation`], [`Gate`], [`PermissionAnswer`]: what a handler answers
//!   (`response.rs`).
//! - [`context`]: text a handler adds to the model's context ([`context::add`]).
//! - [`state`]: per-hook key-value state kept by the host (needs the `state` grant).
//! - [`metrics`]: counters and gauges the host aggregates per hook (needs the `metrics`
//!   grant); natively recorded for tests ([`metrics::recorded`]).
//! - [`read`]: the project folder, read-only (needs the `read` grant); refused natively.
//! - [`log`]: structured logging to the host, and [`safe_log`] for a data-free line
//!   (ids, kind, scope, timing).
//! - [`exec`]: running a program the `exec` grant allows; [`secret`]: a request carrying
//!   a host secret the hook never sees (the `secret` grant; world 0.4.0 both).
//! - [`idempotency_key`]: a key per side effect that survives redelivery.
//! - [`HookError`], [`HookResult`]: what handlers return (`error.rs`).
//!
//! `serde` and `serde_json` are re-exported. To derive with the re-export and no direct
//! `serde` dependency, add `#[serde(crate = "hookrt_sdk::serde")]` to the type.

#[allow(
    unused_extern_crates,
    reason = "the bindings' export macro and #[hookrt_sdk::hook] name the crate by its own name"
)]
extern crate self as hookrt_sdk;

mod agent_input;
pub mod context;
mod define_hook;
mod error;
pub mod eve;
mod event;
pub mod events;
pub mod exec;
pub mod hook;
mod idempotency;
pub mod log;
pub mod metrics;
pub mod notify;
pub mod read;
mod response;
pub mod secret;
pub mod state;
pub mod transcript;
pub mod write;

pub use serde;
pub use serde_json;

pub use error::{HookError, HookResult};
pub use event::{Context, Coordinates, Durability, Event, EventClass, Scope, Transport};
pub use hook::{Hook, NoConfig};
pub use hookrt_sdk_macros::hook;
pub use idempotency::idempotency_key;
pub use log::safe_log;
pub use response::{
    Approval, Block, CallAnswer, Continuation, FileEditAnswer, Gate, IntoResponse,
    PermissionAnswer, Response,
};

#[doc(hidden)]
pub use define_hook::__private;

/// Generated bindings for the `define-hook` world. Use [`define_hook!`] instead.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit/v0.4.0",
        world: "define-hook",
        pub_export_macro: true,
        default_bindings_module: "hookrt_sdk::bindings",
    });
}

/// Everything a single-file hook needs: `use hookrt_sdk::prelude::*;`.
pub mod prelude {
    pub use crate::define_hook;
    pub use crate::events::*;
    pub use crate::{
        Approval, Block, CallAnswer, Context, Continuation, Coordinates, Durability, Event,
        EventClass, FileEditAnswer, Gate, Hook, HookError, HookResult, IntoResponse, NoConfig,
        PermissionAnswer, Response, Scope, Transport, idempotency_key, safe_log,
    };
    pub use crate::{
        context, eve, exec, log, metrics, notify, read, secret, state, transcript, write,
    };
    pub use serde::{Deserialize, Serialize};
    pub use serde_json;
}
