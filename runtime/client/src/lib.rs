//! The command hook's thin client: what `hookrt hook --http URL`,
//! `hookrt hook --service` and the binary `hookrt-hook` share. An agent's
//! hook input goes to a running `hookrt serve`, or to the folder's resident
//! service (started on demand), and its answer comes back in the agent's
//! words; whatever keeps an answer from coming fails a gate closed. No
//! Wasmtime is loaded and no pattern compiled on this path
//! (docs/service.md, ADR 0012).
//!
//! Modules, in layer order (`tests/architecture.rs`): `input` (stdin read
//! within a bound and a deadline), `answering` (one answer, failing closed),
//! `place` (where a service lives; connecting, or starting it), `forward`
//! (the request and its answer), `thin` (`hookrt-hook`'s command).

#![warn(missing_docs)]

pub mod answering;
pub mod forward;
pub mod input;
pub mod place;
pub mod thin;
