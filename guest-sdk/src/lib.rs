//! Write hookrt hooks in Rust: one struct, one method per event kind, one macro call.
//!
//! A hook is a WebAssembly component for the `define-hook` world (`wit/hook.wit`). This
//! crate hides the generated bindings: an author writes a `Default` struct (an instance
//! cache that lives as long as the component instance), handler methods, and one
//! [`define_hook!`] call mapping event kinds (or `*`) to methods.
//!
//! ```no_run
//! use hookrt_sdk::prelude::*;
//!
//! #[derive(Default)]
//! pub struct Audit { seen: u64 }
//!
//! impl Audit {
//!     fn completed(&mut self, event: &Event, cx: &Context) -> HookResult {
//!         let data: MessageCompleted = event.data()?;   // typed data, error if shape/kind wrong
//!         safe_log(event, cx);                           // ids, kind and timing only
//!         log::info("assistant message", &[("message_id", &data.message_id)]);
//!         Ok(())
//!     }
//!     fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult { self.seen += 1; Ok(()) }
//! }
//!
//! hookrt_sdk::define_hook!(Audit {
//!     "message.completed" => completed,
//!     "*" => any,
//! });
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasip2` (crate type `cdylib`).
//!
//! Where things live:
//! - [`Event`], [`Context`], [`Coordinates`], [`Durability`]: what a handler receives (`event.rs`).
//! - [`events`]: typed data per kind ([`events::KINDS`] lists the vocabulary).
//! - [`log`]: structured logging to the host, and [`safe_log`] for a data-free line.
//! - [`idempotency_key`]: a key per side effect that survives redelivery.
//! - [`HookError`], [`HookResult`]: what handlers return (`error.rs`).
//!
//! `serde` and `serde_json` are re-exported. To derive with the re-export and no direct
//! `serde` dependency, add `#[serde(crate = "hookrt_sdk::serde")]` to the type.

mod define_hook;
mod error;
mod event;
pub mod events;
mod idempotency;
pub mod log;

pub use serde;
pub use serde_json;

pub use error::{HookError, HookResult};
pub use event::{Context, Coordinates, Durability, Event};
pub use idempotency::idempotency_key;
pub use log::safe_log;

#[doc(hidden)]
pub use define_hook::__private;

/// Generated bindings for the `define-hook` world. Use [`define_hook!`] instead.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit/v0.1.0",
        world: "define-hook",
        pub_export_macro: true,
        default_bindings_module: "hookrt_sdk::bindings",
    });
}

/// Everything a single-file hook needs: `use hookrt_sdk::prelude::*;`.
pub mod prelude {
    pub use crate::define_hook;
    pub use crate::events::*;
    pub use crate::log;
    pub use crate::{
        Context, Coordinates, Durability, Event, HookError, HookResult, idempotency_key, safe_log,
    };
    pub use serde::{Deserialize, Serialize};
    pub use serde_json;
}
