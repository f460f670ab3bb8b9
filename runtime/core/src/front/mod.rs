//! Layer 7, the front-end kit: what every way in (`hookrt run`, `hookrt
//! serve`, `hookrt worker`, the agents' bridges) shares, so they read and
//! report alike.
//!
//! - [`bridge`]: the agents' hook protocols (Claude Code, Codex, …) to
//!   envelopes and back, over either transport;
//! - [`decide`]: one decision whatever the door, and its refusals;
//! - [`input`]: envelopes from text (JSONL or Eve's NDJSON), numbered with
//!   their ordinals and validated, lines read with one bound and refused
//!   with one message;
//! - [`line`]: the one JSON line a front end prints per delivery;
//! - [`record`]: what agents send, recorded and read again;
//! - [`summary`]: the one summary line it prints when it ends.

pub mod bridge;
pub mod decide;
pub mod input;
pub mod line;
pub mod record;
pub mod summary;
